/*
 * actor.c - spawning and destroying actors.
 *
 * Spawning creates the collected objects, places the actor in a level slot and queues its
 * snapshot for replication. Destroying is UE's AActor::Destroy: mark the actor garbage, null
 * its slot, queue the destroy for clients; the memory goes at a later collection.
 */
#include "world.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vec.h"
#include "world_internal.h"

const char *actor_kind_name(actor_kind kind)
{
    switch (kind) {
    case ACTOR_KIND_WORLD_SETTINGS: return "WorldSettings";
    case ACTOR_KIND_DEFAULT_VOLUME: return "DefaultVolume";
    case ACTOR_KIND_PLAYER_CONTROLLER: return "PlayerController";
    case ACTOR_KIND_PAWN: return "Pawn";
    case ACTOR_KIND_PROJECTILE: return "Projectile";
    case ACTOR_KIND_PROP: return "Prop";
    case ACTOR_KIND_PROP_PART: return "PropPart";
    case ACTOR_KIND_ARCHETYPE: return "Archetype";
    }
    return "Actor";
}

/* The outboxes grow by doubling (vec.h). A failed growth drops the replication of this
 * actor's spawn or destroy (clients resync when they rejoin), never the actor itself. */
void actor_queue_spawn(world *w, actor *a)
{
    if (!a->replicates || !VEC_RESERVE(w->spawned, w->spawned_cap, w->spawned_count + 1))
        return;
    w->spawned[w->spawned_count++] = (world_spawned){
        .net_id = a->net_id,
        .owner_player_id = a->owner_player_id,
        .actor = gc_weak_make(w->env->heap, a),
    };
}

static void actor_queue_destroy(world *w, const actor *a)
{
    if (!a->replicates || !VEC_RESERVE(w->destroyed, w->destroyed_cap, w->destroyed_count + 1))
        return;
    w->destroyed[w->destroyed_count++] = (world_destroyed){ a->net_id, a->net_index };
}

/* Replicated actors with a place in the world are found through the grid; controllers and
 * the level fixtures are relevant by ownership or always. */
void actor_enter_grid(world *w, actor *a)
{
    if (a->replicates && !a->always_relevant && a->kind != ACTOR_KIND_PLAYER_CONTROLLER)
        world_grid_insert(&w->grid, a);
}

gc_result actor_create(world *w, level *lvl, gc_class *cls, actor_kind kind, void *outer,
                       const char *name, uint32_t flags, actor **out_actor)
{
    gc_heap *heap = w->env->heap;
    uint64_t net_id = (flags & ACTOR_CREATE_STARTUP) ? 0 : w->env->next_net_id++;
    char generated[ACTOR_NAME_MAX];
    void *obj;
    actor *a;
    gc_result r;

    if (name == NULL) {
        snprintf(generated, sizeof generated, "%s_%llu", actor_kind_name(kind),
                 (unsigned long long)net_id);
        name = generated;
    }
    r = gc_object_create(heap, cls, outer, name, 0, &obj);
    if (r != GC_OK)
        return r;
    a = obj;
    a->net_id = net_id;
    a->kind = kind;
    a->grid_cell = WORLD_GRID_NONE;
    WORLD_STORE_REF(heap, a->level, lvl);
    if (flags & ACTOR_CREATE_PLACE) {
        r = gc_ref_array_push(&lvl->actors, a);
        if (r != GC_OK) {
            gc_object_mark_garbage(heap, a);
            return r;
        }
        gc_write_barrier(heap, a);
        a->slot = lvl->actors.count - 1;
        a->placed = true;
        lvl->live_actors++;
    }
    *out_actor = a;
    return GC_OK;
}

/* The persistent level's two fixtures replicate to everyone; a streaming cell's are net
 * startup actors like the rest of it. */
gc_result actor_spawn_level_fixtures(world *w, level *lvl)
{
    bool startup = lvl->cell != NULL;
    uint32_t flags = ACTOR_CREATE_PLACE | (startup ? ACTOR_CREATE_STARTUP : 0);
    actor *a;
    gc_result r;

    r = actor_create(w, lvl, w->env->classes.world_settings, ACTOR_KIND_WORLD_SETTINGS, lvl,
                     "WorldSettings", flags, &a);
    if (r != GC_OK)
        return r;
    a->replicates = !startup;
    a->always_relevant = !startup;
    r = actor_create(w, lvl, w->env->classes.default_volume, ACTOR_KIND_DEFAULT_VOLUME, lvl,
                     "DefaultVolume", flags, &a);
    if (r != GC_OK)
        return r;
    a->replicates = !startup;
    a->always_relevant = !startup;
    return GC_OK;
}

static gc_result actor_create_component(world *w, pawn *p, gc_class *cls, const char *name,
                                        actor_component **out_comp)
{
    gc_heap *heap = w->env->heap;
    void *obj;
    actor_component *c;
    gc_result r;

    r = gc_object_create(heap, cls, p, name, 0, &obj);
    if (r != GC_OK)
        return r;
    c = obj;
    WORLD_STORE_REF(heap, c->owner_actor, &p->base);
    *out_comp = c;
    return GC_OK;
}

void actor_abandon(world *w, actor *a)
{
    gc_object_mark_garbage(w->env->heap, a);
    world_grid_remove(&w->grid, a);
    if (a->placed) {
        a->level->actors.data[a->slot] = NULL;
        a->level->live_actors--;
        a->placed = false;
    }
}

/* The pawn of a controller that has none (a new player's, or one carried by a seamless
 * travel), with its movement and collision components, at a spawn point of w. */
gc_result actor_spawn_pawn(world *w, player_controller *pc)
{
    gc_heap *heap = w->env->heap;
    level *lvl = w->persistent_level;
    uint32_t player_id = pc->player_id;
    actor *a;
    pawn *p;
    actor_component *comp;
    gc_result r;

    r = actor_create(w, lvl, w->env->classes.pawn, ACTOR_KIND_PAWN, lvl, NULL,
                     ACTOR_CREATE_PLACE, &a);
    if (r != GC_OK)
        return r;
    p = (pawn *)a;
    WORLD_STORE_REF(heap, p->base.owner, &pc->base);
    p->base.owner_player_id = player_id;
    p->base.replicates = true;
    p->base.moves = true;
    world_spawn_point(w, p->base.pos);
    p->heading = (float)player_id;
    WORLD_STORE_REF(heap, pc->pawn, p);

    r = actor_create_component(w, p, w->env->classes.movement_component, "Movement", &comp);
    if (r == GC_OK) {
        comp->params[0] = 3.0f; /* speed, units per second */
        WORLD_STORE_REF(heap, p->movement, comp);
        r = actor_create_component(w, p, w->env->classes.collision_component, "Collision",
                                   &comp);
    }
    if (r != GC_OK) {
        pc->pawn = NULL;
        actor_abandon(w, &p->base);
        return r;
    }
    comp->params[0] = 0.5f; /* radius */
    WORLD_STORE_REF(heap, p->collision, comp);
    /* Too small for the default gc.MinGCClusterSize; a cluster exists only if allowed. */
    if (gc_cluster_create(heap, p) == GC_OK)
        w->env->clusters_created++;

    actor_enter_grid(w, &p->base);
    actor_queue_spawn(w, &p->base);
    return GC_OK;
}

gc_result actor_spawn_player(world *w, uint32_t player_id, const char *player_name,
                             player_controller **out_controller)
{
    level *lvl = w->persistent_level;
    actor *a;
    player_controller *pc;
    gc_result r;

    r = actor_create(w, lvl, w->env->classes.player_controller, ACTOR_KIND_PLAYER_CONTROLLER,
                     lvl, NULL, ACTOR_CREATE_PLACE, &a);
    if (r != GC_OK)
        return r;
    pc = (player_controller *)a;
    pc->player_id = player_id;
    pc->base.owner_player_id = player_id;
    pc->base.replicates = true;
    snprintf(pc->player_name, sizeof pc->player_name, "%s", player_name ? player_name : "");
    /* Queued first, as replication has always seen them (a failed pawn leaves it garbage,
     * which the outbox's weak handle then skips). */
    actor_queue_spawn(w, &pc->base);
    r = actor_spawn_pawn(w, pc);
    if (r != GC_OK) {
        actor_abandon(w, &pc->base);
        return r;
    }
    *out_controller = pc;
    return GC_OK;
}

static gc_result actor_build_prop(world *w, prop *pr, player_controller *owner)
{
    gc_heap *heap = w->env->heap;
    actor *anchor = owner != NULL && owner->pawn != NULL ? &owner->pawn->base : NULL;

    for (int i = 0; i < WORLD_PROP_PARTS; i++) {
        char name[16];
        actor *part;
        prop_attachment *att;
        void *elem;
        gc_result r;

        snprintf(name, sizeof name, "Part%d", i);
        r = actor_create(w, pr->base.level, w->env->classes.prop_part, ACTOR_KIND_PROP_PART, pr,
                         name, 0, &part);
        if (r != GC_OK)
            return r;
        WORLD_STORE_REF(heap, part->owner, pr->base.owner);
        r = gc_ref_array_push(&pr->parts, part);
        if (r != GC_OK)
            return r;
        gc_write_barrier(heap, part);
        r = gc_struct_array_push(&pr->attachments, sizeof(prop_attachment), &elem);
        if (r != GC_OK)
            return r;
        att = elem;
        WORLD_STORE_REF(heap, att->part, part);
        WORLD_STORE_REF(heap, att->anchor, anchor);
        att->offset[0] = (float)i;
    }
    return GC_OK;
}

void actor_place_near_owner(actor *a, const player_controller *owner)
{
    const pawn *p = owner != NULL ? owner->pawn : NULL;
    uint32_t n = owner != NULL ? owner->owned.count : 0;

    if (p == NULL)
        return;
    memcpy(a->pos, p->base.pos, sizeof a->pos);
    a->pos[0] += (float)(n % 8);
    a->pos[1] += (float)(n / 8 % 8);
}

gc_result actor_spawn(world *w, actor_kind kind, player_controller *owner, actor **out_actor)
{
    gc_heap *heap = w->env->heap;
    level *lvl = w->persistent_level;
    gc_class *cls;
    actor *a;
    gc_result r;

    if (kind == ACTOR_KIND_PROP)
        cls = w->env->classes.prop;
    else if (kind == ACTOR_KIND_PROJECTILE)
        cls = w->env->classes.projectile;
    else
        return GC_E_INVALID;
    r = actor_create(w, lvl, cls, kind, lvl, NULL, ACTOR_CREATE_PLACE, &a);
    if (r != GC_OK)
        return r;
    a->replicates = true;
    if (owner != NULL) {
        WORLD_STORE_REF(heap, a->owner, &owner->base);
        a->owner_player_id = owner->player_id;
    }
    actor_place_near_owner(a, owner);

    if (kind == ACTOR_KIND_PROP) {
        r = actor_build_prop(w, (prop *)a, owner);
        if (r == GC_OK && gc_cluster_create(heap, a) == GC_OK)
            w->env->clusters_created++;
    } else {
        projectile *pr = (projectile *)a;
        const pawn *p = owner != NULL ? owner->pawn : NULL;

        pr->instigator = gc_weak_make(heap, p);
        pr->life_left = w->env->projectile_lifetime;
        a->moves = true;
        a->vel[0] = p != NULL ? 20.0f * cosf(p->heading) : 20.0f;
        a->vel[1] = p != NULL ? 20.0f * sinf(p->heading) : 0.0f;
    }
    if (r == GC_OK && owner != NULL) {
        r = gc_ref_array_push(&owner->owned, a);
        if (r == GC_OK)
            gc_write_barrier(heap, a);
    }
    if (r != GC_OK) {
        actor_abandon(w, a);
        return r;
    }
    actor_enter_grid(w, a);
    actor_queue_spawn(w, a);
    *out_actor = a;
    return GC_OK;
}

void actor_steer_pawn(pawn *p, float vx, float vy)
{
    p->input_vel[0] = vx;
    p->input_vel[1] = vy;
    p->has_input = true;
}

static void actor_forget_owned(player_controller *pc, const actor *a)
{
    for (uint32_t i = 0; i < pc->owned.count; i++) {
        if (pc->owned.data[i] == a) {
            pc->owned.data[i] = pc->owned.data[pc->owned.count - 1];
            pc->owned.count--;
            return;
        }
    }
}

void actor_destroy(world *w, actor *a)
{
    gc_heap *heap = w->env->heap;

    if (a == NULL || gc_object_is_garbage(a) || gc_object_is_unreachable(a))
        return;
    if (a->kind == ACTOR_KIND_PLAYER_CONTROLLER) {
        player_controller *pc = (player_controller *)a;

        while (pc->owned.count > 0) {
            actor *owned = pc->owned.data[pc->owned.count - 1];
            if (owned == NULL) {
                pc->owned.count--;
                continue;
            }
            actor_destroy(w, owned);
        }
        if (pc->pawn != NULL)
            actor_destroy(w, &pc->pawn->base);
    } else if (a->owner != NULL && a->owner->kind == ACTOR_KIND_PLAYER_CONTROLLER &&
               (a->kind == ACTOR_KIND_PROP || a->kind == ACTOR_KIND_PROJECTILE ||
                (a->kind == ACTOR_KIND_ARCHETYPE && ((archetype_actor *)a)->top_level))) {
        actor_forget_owned((player_controller *)a->owner, a);
    }
    if (a->kind == ACTOR_KIND_ARCHETYPE) {
        /* Its child actors may hold level slots: they go with it. Its parts need nothing. */
        archetype_actor *aa = (archetype_actor *)a;

        for (uint32_t i = 0; i < aa->owns.count; i++) {
            void *o = aa->owns.data[i];
            if (o != NULL && gc_object_is_a(heap, o, w->env->classes.actor))
                actor_destroy(w, o);
        }
    }
    gc_object_mark_garbage(heap, a);
    world_grid_remove(&w->grid, a);
    if (a->placed) {
        a->level->actors.data[a->slot] = NULL;
        a->level->live_actors--;
        a->placed = false;
    }
    actor_queue_destroy(w, a);
}

actor *actor_find_owned(player_controller *pc, uint64_t net_id)
{
    for (uint32_t i = 0; i < pc->owned.count; i++) {
        actor *a = pc->owned.data[i];
        if (a != NULL && a->net_id == net_id)
            return a;
    }
    return NULL;
}

uint32_t actor_owned_count(const player_controller *pc)
{
    return pc->owned.count;
}

/* A big persistent world (world.PersistentProps): holder props placed in the persistent level,
 * each holding up to WORLD_PERSISTENT_GROUP parts that nobody destroys. No clusters, so every
 * object is marked on its own and a full mark costs what a world of that size costs. Not
 * replicated and not in the grid: they weigh on the collector only. */
gc_result world_spawn_persistent_props(world *w, uint32_t count)
{
    gc_heap *heap = w->env->heap;
    level *lvl = w->persistent_level;
    prop *holder = NULL;

    for (uint32_t i = 0; i < count; i++) {
        actor *a;
        gc_result r;

        if (i % WORLD_PERSISTENT_GROUP == 0) {
            r = actor_create(w, lvl, w->env->classes.prop, ACTOR_KIND_PROP, lvl, NULL,
                             ACTOR_CREATE_PLACE, &a);
            if (r != GC_OK)
                return r;
            holder = (prop *)a;
        }
        r = actor_create(w, lvl, w->env->classes.prop_part, ACTOR_KIND_PROP_PART, holder, NULL,
                         0, &a);
        if (r != GC_OK)
            return r;
        r = gc_ref_array_push(&holder->parts, a);
        if (r != GC_OK)
            return r;
        gc_write_barrier(heap, a);
    }
    return GC_OK;
}
