/*
 * world_internal.h - what the world layer's own files share (actor.c and world_archetype.c):
 * the steps every spawn goes through. Not for other layers.
 */
#ifndef REAP_WORLD_INTERNAL_H
#define REAP_WORLD_INTERNAL_H

#include "world.h"

enum {
    ACTOR_CREATE_PLACE = 1u << 0,   /* it takes a slot of its level */
    ACTOR_CREATE_STARTUP = 1u << 1, /* a net startup actor (a cell's): no net id */
};

/* Creates an actor of cls under outer (name NULL: Kind_NETID) with the next net id, unless
 * ACTOR_CREATE_STARTUP; ACTOR_CREATE_PLACE puts it in a slot of lvl. *out_actor is owned by
 * the heap. */
gc_result actor_create(world *w, level *lvl, gc_class *cls, actor_kind kind, void *outer,
                       const char *name, uint32_t flags, actor **out_actor);
/* Marks a partly built actor garbage and frees its slot; used when a spawn fails halfway. */
void actor_abandon(world *w, actor *a);
/* Puts a replicated actor with a place in the world into the grid. */
void actor_enter_grid(world *w, actor *a);
/* Queues a replicated actor's spawn for this frame's replication. */
void actor_queue_spawn(world *w, actor *a);
/* Puts a beside its owner's pawn (nothing without one). */
void actor_place_near_owner(actor *a, const player_controller *owner);

/* A cell's placed actor: archetype `index` built in lvl as a net startup actor named
 * ARCHETYPE_seq, standing at pos, its archetype's clusters made only when cluster is set (a
 * level cluster takes them otherwise). *out_objects: the objects it created. A failure leaves
 * nothing placed. */
gc_result world_archetype_place(world *w, level *lvl, uint32_t index, uint32_t seq,
                                const float pos[3], bool cluster, uint32_t *out_objects);

#endif
