/*
 * world_internal.h - what the world layer's own files share (actor.c and world_archetype.c):
 * the steps every spawn goes through. Not for other layers.
 */
#ifndef REAP_WORLD_INTERNAL_H
#define REAP_WORLD_INTERNAL_H

#include "world.h"

/* Creates an actor of cls with the next net id under outer (name NULL: Kind_NETID); place puts
 * it in a slot of lvl. *out_actor is owned by the heap. */
gc_result actor_create(world *w, level *lvl, gc_class *cls, actor_kind kind, void *outer,
                       const char *name, bool place, actor **out_actor);
/* Marks a partly built actor garbage and frees its slot; used when a spawn fails halfway. */
void actor_abandon(world *w, actor *a);
/* Puts a replicated actor with a place in the world into the grid. */
void actor_enter_grid(world *w, actor *a);
/* Queues a replicated actor's spawn for this frame's replication. */
void actor_queue_spawn(world *w, actor *a);
/* Puts a beside its owner's pawn (nothing without one). */
void actor_place_near_owner(actor *a, const player_controller *owner);

#endif
