/*
 * world.c - classes, worlds and levels; world ticking and actor-slot cleanup.
 */
#include "world.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vec.h"

/* ---- class schemas ---------------------------------------------------------------------
 * Every reference member of every payload struct is listed, so the collector sees all edges
 * and can null the ones that point at garbage. Subclass schemas start with the super's. */

static const gc_member world_members[] = {
    GC_REF_ARRAY(world, levels),
    GC_REF(world, persistent_level),
    GC_MEMBERS_END,
};

static const gc_member level_members[] = {
    GC_REF(level, world),
    GC_REF_ARRAY(level, actors),
    GC_MEMBERS_END,
};

static const gc_member actor_members[] = {
    GC_REF(actor, level),
    GC_REF(actor, owner),
    GC_MEMBERS_END,
};

static const gc_member component_members[] = {
    GC_REF(actor_component, owner_actor),
    GC_MEMBERS_END,
};

static const gc_member pawn_members[] = {
    GC_REF(pawn, movement),
    GC_REF(pawn, collision),
    GC_MEMBERS_END,
};

static const gc_member controller_members[] = {
    GC_REF(player_controller, pawn),
    GC_REF_ARRAY(player_controller, owned),
    GC_MEMBERS_END,
};

static const gc_member attachment_members[] = {
    GC_REF(prop_attachment, part),
    GC_REF(prop_attachment, anchor),
    GC_MEMBERS_END,
};

static const gc_member prop_members[] = {
    GC_REF_ARRAY(prop, parts),
    GC_STRUCT_ARRAY(prop, attachments, prop_attachment, attachment_members),
    GC_MEMBERS_END,
};

static const gc_member game_instance_members[] = {
    GC_REF_ARRAY(game_instance, objects),
    GC_MEMBERS_END,
};

static void game_instance_destructor(void *obj)
{
    gc_ref_array_free(&((game_instance *)obj)->objects);
}

static void world_destructor(void *obj)
{
    world *w = obj;

    gc_ref_array_free(&w->levels);
    free(w->spawned);
    free(w->destroyed);
    world_grid_free(&w->grid);
    world_streaming_free(w);
}

static void level_destructor(void *obj)
{
    gc_ref_array_free(&((level *)obj)->actors);
}

static void controller_destructor(void *obj)
{
    gc_ref_array_free(&((player_controller *)obj)->owned);
}

static void prop_destructor(void *obj)
{
    prop *p = obj;

    gc_ref_array_free(&p->parts);
    gc_struct_array_free(&p->attachments);
}

static gc_result world_class_add(gc_heap *heap, const char *name, size_t size,
                                 const gc_class *super, uint32_t flags, const gc_member *members,
                                 void (*destructor)(void *), gc_class **out)
{
    gc_class_desc desc;

    memset(&desc, 0, sizeof desc);
    desc.name = name;
    desc.size = size;
    desc.super = super;
    desc.flags = flags;
    desc.members = members;
    desc.hooks.destructor = destructor;
    return gc_class_register(heap, &desc, out);
}

gc_result world_classes_register(gc_heap *heap, world_classes *out_classes)
{
    world_classes c;
    gc_result r;

    memset(&c, 0, sizeof c);
#define ADD(field, name, type, super, flags, members, dtor)                                     \
    do {                                                                                        \
        r = world_class_add(heap, name, sizeof(type), super, flags, members, dtor, &c.field);   \
        if (r != GC_OK)                                                                         \
            return r;                                                                           \
    } while (0)
    ADD(world, "World", world, NULL, 0, world_members, world_destructor);
    /* A streaming cell's level roots the cluster of its placed actors (the persistent level
     * never does: its actors come and go). */
    ADD(level, "Level", level, NULL, GC_CLASS_CLUSTER_ROOT, level_members, level_destructor);
    ADD(actor, "Actor", actor, NULL, 0, actor_members, NULL);
    ADD(world_settings, "WorldSettings", actor, c.actor, 0, NULL, NULL);
    ADD(default_volume, "DefaultVolume", actor, c.actor, 0, NULL, NULL);
    ADD(player_controller, "PlayerController", player_controller, c.actor, 0,
        controller_members, controller_destructor);
    ADD(pawn, "Pawn", pawn, c.actor, GC_CLASS_CLUSTER_ROOT, pawn_members, NULL);
    ADD(movement_component, "MovementComponent", actor_component, NULL,
        GC_CLASS_CAN_BE_IN_CLUSTER, component_members, NULL);
    ADD(collision_component, "CollisionComponent", actor_component, NULL,
        GC_CLASS_CAN_BE_IN_CLUSTER, component_members, NULL);
    ADD(projectile, "Projectile", projectile, c.actor, 0, NULL, NULL);
    ADD(prop, "Prop", prop, c.actor, GC_CLASS_CLUSTER_ROOT, prop_members, prop_destructor);
    ADD(prop_part, "PropPart", actor, c.actor, GC_CLASS_CAN_BE_IN_CLUSTER, NULL, NULL);
    ADD(game_instance, "GameInstance", game_instance, NULL, 0, game_instance_members,
        game_instance_destructor);
#undef ADD
    *out_classes = c;
    return GC_OK;
}

void world_env_init(world_env *env, gc_heap *heap)
{
    memset(env, 0, sizeof *env);
    env->heap = heap;
    env->next_net_id = 1;
    env->projectile_lifetime = 2.0;
    env->extent = 200000.0f;
    env->cull_distance = 15000.0f;
    env->rng = 0x5EEDF00D;
    world_streaming_config_default(&env->streaming.cfg);
    stats_histogram_init(&env->streaming.stats.load_wait);
}

void world_env_close(world_env *env)
{
    world_archetypes_free(env);
    world_streaming_env_free(env);
}

static uint64_t world_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void world_random_point(world_env *env, float out_pos[3])
{
    for (int i = 0; i < 2; i++) {
        double u = (double)(world_splitmix64(&env->rng) >> 11) * 0x1.0p-53; /* [0, 1) */
        out_pos[i] = (float)((u - 0.5) * env->extent);
    }
    out_pos[2] = 0.0f;
}

void world_spawn_point(world *w, float out_pos[3])
{
    const world_streaming *st = &w->streaming;
    float jitter[3];
    uint32_t k;

    if (st->start_count == 0) {
        world_random_point(w->env, out_pos);
        return;
    }
    /* A player start, and a few hundred units around it so that pawns do not stack. */
    k = (uint32_t)(world_splitmix64(&w->env->rng) % st->start_count);
    world_random_point(w->env, jitter);
    out_pos[0] = st->starts[k][0] + jitter[0] / w->env->extent * 1000.0f;
    out_pos[1] = st->starts[k][1] + jitter[1] / w->env->extent * 1000.0f;
    out_pos[2] = 0.0f;
}

void world_actor_moved(world *w, actor *a)
{
    a->move_serial++;
    world_grid_move(&w->grid, a);
    if (!a->moves && a->replicates && VEC_RESERVE(w->spawned, w->spawned_cap, w->spawned_count + 1))
        w->spawned[w->spawned_count++] = (world_spawned){
            .net_id = a->net_id,
            .owner_player_id = a->owner_player_id,
            .actor = gc_weak_make(w->env->heap, a),
        };
}

void world_apply_settings(world *w)
{
    const world_env *env = w->env;

    if (w->grid.extent == env->extent && w->grid.cull_distance == env->cull_distance)
        return;
    if (!world_grid_rebuild(&w->grid, env->extent, env->cull_distance))
        fprintf(stderr, "world %s: out of memory re-gridding for net.CullDistance=%g\n", w->name,
                (double)env->cull_distance);
}

gc_result world_create(world_env *env, uint32_t index, world **out_world)
{
    gc_heap *heap = env->heap;
    char name[WORLD_NAME_MAX];
    void *obj;
    world *w;
    level *lvl = NULL;
    gc_result r;

    snprintf(name, sizeof name, "World%u", index);
    r = gc_object_create(heap, env->classes.world, NULL, name, GC_CREATE_ROOT, &obj);
    if (r != GC_OK)
        return r;
    w = obj;
    w->env = env;
    w->index = index;
    snprintf(w->name, sizeof w->name, "%s", name);
    if (!world_grid_init(&w->grid, env->extent, env->cull_distance)) {
        gc_root_remove(heap, w);
        return GC_E_NOMEM;
    }

    r = gc_object_create(heap, env->classes.level, w, "Level0", 0, &obj);
    if (r == GC_OK) {
        lvl = obj;
        WORLD_STORE_REF(heap, lvl->world, w);
        r = gc_ref_array_push(&w->levels, lvl);
    }
    if (r == GC_OK) {
        gc_write_barrier(heap, lvl);
        WORLD_STORE_REF(heap, w->persistent_level, lvl);
        r = actor_spawn_level_fixtures(w, lvl);
    }
    if (r == GC_OK)
        r = world_streaming_init(w);
    if (r != GC_OK) {
        /* Unrooted, the half-built world is garbage at the next collection. */
        gc_root_remove(heap, w);
        return r;
    }
    *out_world = w;
    return GC_OK;
}

/* A pawn at the edge of the world's square turns back in (its velocity is reflected). */
static void world_keep_inside(const world_env *env, pawn *p)
{
    float half = 0.5f * env->extent;

    for (int i = 0; i < 2; i++) {
        if (p->base.pos[i] > half || p->base.pos[i] < -half) {
            p->base.pos[i] = p->base.pos[i] > half ? half : -half;
            p->base.vel[i] = -p->base.vel[i];
            p->input_vel[i] = -p->input_vel[i];
        }
    }
}

static void world_tick_actor_cb(actor *a, void *userdata)
{
    double dt = *(const double *)userdata;
    world *w = a->level->world;

    if (a->kind == ACTOR_KIND_PAWN) {
        pawn *p = (pawn *)a;
        float speed = p->movement != NULL ? p->movement->params[0] : 0.0f;
        world_streaming *st = &w->streaming;

        /* Every pawn is a streaming source: its player's cells load around it. */
        if (st->dim > 0 &&
            VEC_RESERVE(st->sources, st->source_cap, 2 * (st->source_count + 1))) {
            st->sources[2 * st->source_count] = a->pos[0];
            st->sources[2 * st->source_count + 1] = a->pos[1];
            st->source_count++;
        }
        if (p->has_input) {
            a->vel[0] = p->input_vel[0];
            a->vel[1] = p->input_vel[1];
        } else {
            p->heading += (float)(dt * 0.5);
            a->vel[0] = speed * cosf(p->heading);
            a->vel[1] = speed * sinf(p->heading);
        }
    }
    if (a->kind == ACTOR_KIND_ARCHETYPE) {
        archetype_actor *aa = (archetype_actor *)a;

        if (aa->life_left > 0) {
            aa->life_left -= dt;
            if (aa->life_left <= 0) {
                actor_destroy(w, a);
                return;
            }
        }
        if (a->moves) {
            /* A slow circle around where it was spawned. */
            aa->heading += (float)(dt * 0.5);
            a->vel[0] = 20.0f * cosf(aa->heading);
            a->vel[1] = 20.0f * sinf(aa->heading);
        }
    }
    if (!a->moves || (a->vel[0] == 0.0f && a->vel[1] == 0.0f && a->vel[2] == 0.0f))
        return;
    for (int i = 0; i < 3; i++)
        a->pos[i] += (float)(a->vel[i] * dt);
    if (a->kind == ACTOR_KIND_PAWN)
        world_keep_inside(w->env, (pawn *)a);
    a->move_serial++;
    world_grid_move(&w->grid, a);
    if (a->kind == ACTOR_KIND_PROJECTILE) {
        projectile *pr = (projectile *)a;

        pr->life_left -= dt;
        if (pr->life_left <= 0)
            actor_destroy(w, a);
    }
}

/* Only the persistent level ticks: a streaming cell's placed actors stand still. */
void world_tick(world *w, double dt)
{
    level *lvl = w->persistent_level;

    w->begun_play = true;
    w->frames++;
    w->streaming.source_count = 0;
    /* Index loop, not pointer: a callback may destroy actors (which only nulls slots). */
    for (uint32_t i = 0; lvl != NULL && i < lvl->actors.count; i++) {
        actor *a = lvl->actors.data[i];
        if (a != NULL)
            world_tick_actor_cb(a, &dt);
    }
}

void world_foreach_actor(world *w, world_actor_visit_fn fn, void *userdata)
{
    for (uint32_t l = 0; l < w->levels.count; l++) {
        level *lvl = w->levels.data[l];

        if (lvl == NULL)
            continue;
        /* Index loop, not pointer: fn may destroy actors (which only nulls slots). */
        for (uint32_t i = 0; i < lvl->actors.count; i++) {
            actor *a = lvl->actors.data[i];
            if (a != NULL)
                fn(a, userdata);
        }
    }
}

void world_cleanup_actors(world *w)
{
    for (uint32_t l = 0; l < w->levels.count; l++) {
        level *lvl = w->levels.data[l];
        uint32_t count;

        /* A level being added or removed is walked by slot index across frames. */
        if (lvl == NULL || lvl->pending_visibility)
            continue;
        count = world_compact_actor_slots(lvl->actors.data, lvl->actors.count,
                                          WORLD_FIRST_DYNAMIC_SLOT);
        lvl->actors.count = count;
        /* Actors remember their slot so that destroying one is O(1); renumber the moved. */
        for (uint32_t i = WORLD_FIRST_DYNAMIC_SLOT; i < count; i++)
            ((actor *)lvl->actors.data[i])->slot = i;
    }
}

uint32_t world_actor_count(const world *w)
{
    uint32_t n = 0;

    for (uint32_t l = 0; l < w->levels.count; l++) {
        const level *lvl = w->levels.data[l];
        if (lvl != NULL)
            n += lvl->live_actors;
    }
    return n;
}

uint32_t world_actor_slots(const world *w)
{
    uint32_t n = 0;

    for (uint32_t l = 0; l < w->levels.count; l++) {
        const level *lvl = w->levels.data[l];
        if (lvl != NULL)
            n += lvl->actors.count;
    }
    return n;
}

void world_outbox_reset(world *w)
{
    w->spawned_count = 0;
    w->destroyed_count = 0;
}
