/*
 * world_travel.c - the end of a world and what crosses into the next one (UE's
 * UWorld::CleanupWorld and MarkObjectsPendingKill at a travel, and the actors a seamless
 * travel keeps), and the game instance that outlives every world.
 *
 * A world ends in three steps: world_teardown_begin takes it out of streaming's process-wide
 * list; world_teardown_step gives every actor its end of play (the actor, its components, its
 * parts and child actors are marked garbage, its slot emptied), a time slice at a time; the
 * last step marks its levels garbage and takes the world out of the root set, marked garbage
 * too. From then on only references that the collector does not null (an outer, a strong
 * handle, a reference held immutably) can keep any of it alive: the travel's leak verdict
 * looks for exactly those survivors.
 */
#include <stdio.h>
#include <string.h>

#include "world.h"
#include "world_internal.h"

gc_result world_game_instance_create(world_env *env)
{
    void *obj;
    gc_result r;

    if (env->instance != NULL)
        return GC_OK;
    r = gc_object_create(env->heap, env->classes.game_instance, NULL, "GameInstance",
                         GC_CREATE_ROOT, &obj);
    if (r == GC_OK)
        env->instance = obj;
    return r;
}

uint32_t world_game_instance_count(const world_env *env)
{
    return env->instance != NULL ? env->instance->objects.count : 0;
}

void world_teardown_begin(world *w)
{
    w->tearing_down = true;
    w->teardown_level = 0;
    w->teardown_slot = 0;
    world_streaming_detach(w);
}

/* Marks obj garbage unless something pins it (a strong handle, the root set): a pinned object
 * stays valid, so the references to it stay too, which is the leak a verdict then names. */
static uint32_t teardown_mark(gc_heap *heap, void *obj)
{
    return obj != NULL && gc_object_mark_garbage(heap, obj) == GC_OK ? 1 : 0;
}

/* An actor's end of play: it and everything it owns as subobjects. Returns the objects. */
static uint32_t teardown_actor(world *w, actor *a)
{
    world_env *env = w->env;
    gc_heap *heap = env->heap;
    uint32_t n = 0;

    switch (a->kind) {
    case ACTOR_KIND_PAWN: {
        pawn *p = (pawn *)a;

        n += teardown_mark(heap, p->movement) + teardown_mark(heap, p->collision);
        break;
    }
    case ACTOR_KIND_PROP: {
        prop *pr = (prop *)a;

        for (uint32_t i = 0; i < pr->parts.count; i++)
            n += teardown_mark(heap, pr->parts.data[i]);
        break;
    }
    case ACTOR_KIND_ARCHETYPE: {
        archetype_actor *aa = (archetype_actor *)a;

        for (uint32_t i = 0; i < aa->owns.count; i++) {
            void *o = aa->owns.data[i];

            if (o == NULL)
                continue;
            if (gc_object_is_a(heap, o, env->classes.actor) && !((actor *)o)->placed)
                n += teardown_actor(w, o);
            else if (!gc_object_is_a(heap, o, env->classes.actor))
                n += teardown_mark(heap, o);
        }
        break;
    }
    case ACTOR_KIND_WORLD_SETTINGS:
    case ACTOR_KIND_DEFAULT_VOLUME:
    case ACTOR_KIND_PLAYER_CONTROLLER:
    case ACTOR_KIND_PROJECTILE:
    case ACTOR_KIND_PROP_PART:
        break;
    }
    n += teardown_mark(heap, a);
    if (a->placed) {
        a->level->actors.data[a->slot] = NULL;
        a->level->live_actors--;
        a->placed = false;
    }
    return n;
}

bool world_teardown_step(world *w, double time_limit, uint64_t *io_actors)
{
    gc_heap *heap = w->env->heap;
    const world_streaming_config *cfg = &w->env->streaming.cfg;
    double t0 = time_limit > 0 ? cfg->clock(cfg->clock_ctx) : 0;
    uint32_t since_check = 0;

    if (!w->tearing_down)
        return true;
    while (w->teardown_level < w->levels.count) {
        level *lvl = w->levels.data[w->teardown_level];

        while (lvl != NULL && w->teardown_slot < lvl->actors.count) {
            actor *a = lvl->actors.data[w->teardown_slot++];

            if (a == NULL)
                continue;
            since_check += teardown_actor(w, a);
            (*io_actors)++;
            if (since_check >= 64) {
                since_check = 0;
                if (time_limit > 0 && cfg->clock(cfg->clock_ctx) - t0 >= time_limit)
                    return false;
            }
        }
        w->teardown_level++;
        w->teardown_slot = 0;
    }
    for (uint32_t i = 0; i < w->levels.count; i++)
        teardown_mark(heap, w->levels.data[i]);
    gc_root_remove(heap, w);
    teardown_mark(heap, w);
    w->tearing_down = false;
    w->torn_down = true;
    return true;
}

gc_result world_carry_player(world *from, world *to, player_controller *pc)
{
    gc_heap *heap = to->env->heap;
    level *lvl = to->persistent_level;
    gc_result r;

    /* Everything it owned ends with the old world; only the controller crosses (UE's
     * seamless travel keeps the PlayerController and restarts the player in the new map). */
    while (pc->owned.count > 0) {
        actor *owned = pc->owned.data[pc->owned.count - 1];

        if (owned == NULL)
            pc->owned.count--;
        else
            actor_destroy(from, owned);
    }
    if (pc->pawn != NULL)
        actor_destroy(from, &pc->pawn->base);
    pc->pawn = NULL;
    r = gc_ref_array_push(&lvl->actors, pc);
    if (r != GC_OK)
        return r;
    r = gc_object_rename(heap, pc, lvl, NULL);
    if (r != GC_OK) {
        lvl->actors.count--;
        return r;
    }
    gc_write_barrier(heap, pc);
    if (pc->base.placed) {
        pc->base.level->actors.data[pc->base.slot] = NULL;
        pc->base.level->live_actors--;
    }
    WORLD_STORE_REF(heap, pc->base.level, lvl);
    pc->base.slot = lvl->actors.count - 1;
    pc->base.placed = true;
    lvl->live_actors++;
    return GC_OK;
}

gc_result world_restart_player(world *w, player_controller *pc)
{
    gc_result r = actor_spawn_pawn(w, pc);

    if (r == GC_OK)
        actor_queue_spawn(w, &pc->base);
    return r;
}
