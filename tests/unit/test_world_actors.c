/*
 * test_world_actors.c - worlds, levels and actors as collected objects: spawning, destroying,
 * players leaving, cleanup actors after a real collection.
 *
 * Each test builds a fresh heap with the server's classes; teardown checks the collector's
 * invariants and destroys the heap (leaks show under `make asan`).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "world_fixture.h"

typedef struct fixture {
    gc_heap *heap;
    world_env env;
    world *w;
    uint32_t baseline;  /* objects right after the world was created */
} fixture;

static int setup(void **state)
{
    static fixture fx;

    memset(&fx, 0, sizeof fx);
    world_fixture_open(&fx.heap, &fx.env, &fx.w);
    fx.baseline = gc_object_count(fx.heap);
    *state = &fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;

    world_fixture_close(fx->heap);
    return 0;
}

static void collect(fixture *fx)
{
    assert_int_equal(gc_collect(fx->heap, 0, true), GC_OK);
    world_cleanup_actors(fx->w);
}

static level *persistent(fixture *fx)
{
    return fx->w->persistent_level;
}

static player_controller *join(fixture *fx, uint32_t player_id)
{
    player_controller *pc = NULL;

    assert_int_equal(actor_spawn_player(fx->w, player_id, "p", &pc), GC_OK);
    return pc;
}

static actor *spawn(fixture *fx, actor_kind kind, player_controller *pc)
{
    actor *a = NULL;

    assert_int_equal(actor_spawn(fx->w, kind, pc, &a), GC_OK);
    return a;
}

/* ---- creation --------------------------------------------------------------------------- */

static void test_a_new_world_holds_world_settings_and_default_volume_in_slots_0_and_1(
    void **state)
{
    fixture *fx = *state;
    level *lvl = persistent(fx);

    assert_int_equal(lvl->actors.count, WORLD_FIRST_DYNAMIC_SLOT);
    assert_int_equal(((actor *)lvl->actors.data[0])->kind, ACTOR_KIND_WORLD_SETTINGS);
    assert_int_equal(((actor *)lvl->actors.data[1])->kind, ACTOR_KIND_DEFAULT_VOLUME);
    assert_int_equal(world_actor_count(fx->w), 2);
}

static void test_objects_are_findable_by_their_ownership_path(void **state)
{
    fixture *fx = *state;
    player_controller *pc = join(fx, 1);
    char path[128];

    snprintf(path, sizeof path, "World0.Level0.Pawn_%llu.Movement",
             (unsigned long long)pc->pawn->base.net_id);

    assert_ptr_equal(gc_object_find(fx->heap, path), pc->pawn->movement);
    assert_ptr_equal(gc_object_find(fx->heap, "World0.Level0"), persistent(fx));
    assert_ptr_equal(gc_object_find(fx->heap, "World0"), fx->w);
}

static void test_a_world_survives_collections_because_it_is_rooted(void **state)
{
    fixture *fx = *state;

    collect(fx);

    assert_int_equal(gc_object_count(fx->heap), fx->baseline);
    assert_true(gc_object_is_valid(fx->w));
}

static void test_a_world_begins_play_on_its_first_tick(void **state)
{
    fixture *fx = *state;

    assert_false(fx->w->begun_play);
    world_tick(fx->w, 0.033);

    assert_true(fx->w->begun_play);
}

/* ---- spawning ---------------------------------------------------------------------------- */

static void test_a_joining_player_gets_a_controller_and_a_pawn_with_components(void **state)
{
    fixture *fx = *state;

    player_controller *pc = join(fx, 7);

    assert_non_null(pc->pawn);
    assert_non_null(pc->pawn->movement);
    assert_non_null(pc->pawn->collision);
    assert_ptr_equal(pc->pawn->base.owner, &pc->base);
    assert_int_equal(pc->pawn->base.owner_player_id, 7);
    assert_int_equal(world_actor_count(fx->w), 4);
    assert_int_equal(fx->w->spawned_count, 2); /* controller and pawn replicate */
}

static void test_a_spawned_prop_takes_the_next_dynamic_slot_and_is_queued_for_clients(
    void **state)
{
    fixture *fx = *state;
    player_controller *pc = join(fx, 1);
    world_outbox_reset(fx->w);

    actor *pr = spawn(fx, ACTOR_KIND_PROP, pc);

    assert_int_equal(pr->slot, 4);
    assert_ptr_equal(persistent(fx)->actors.data[4], pr);
    assert_int_equal(actor_owned_count(pc), 1);
    assert_int_equal(fx->w->spawned_count, 1);
    assert_int_equal(fx->w->spawned[0].net_id, pr->net_id);
    assert_int_equal(fx->w->spawned[0].owner_player_id, 1);
}

static void test_a_prop_owns_child_actors_and_structs_that_reference_them(void **state)
{
    fixture *fx = *state;
    player_controller *pc = join(fx, 1);

    prop *p = (prop *)spawn(fx, ACTOR_KIND_PROP, pc);
    collect(fx);

    assert_int_equal(p->parts.count, WORLD_PROP_PARTS);
    assert_int_equal(p->attachments.count, WORLD_PROP_PARTS);
    for (uint32_t i = 0; i < WORLD_PROP_PARTS; i++) {
        prop_attachment *att = &((prop_attachment *)p->attachments.data)[i];
        assert_ptr_equal(att->part, p->parts.data[i]);
        assert_ptr_equal(att->anchor, &pc->pawn->base);
        assert_true(gc_object_is_valid(p->parts.data[i]));
    }
}

static void test_clients_may_spawn_only_props_and_projectiles(void **state)
{
    fixture *fx = *state;
    player_controller *pc = join(fx, 1);
    actor *a = NULL;

    assert_int_equal(actor_spawn(fx->w, ACTOR_KIND_PAWN, pc, &a), GC_E_INVALID);
    assert_null(a);
}

static void test_net_ids_are_never_reused_even_when_object_indices_are(void **state)
{
    fixture *fx = *state;
    player_controller *pc = join(fx, 1);
    actor *first = spawn(fx, ACTOR_KIND_PROP, pc);
    uint64_t first_id = first->net_id;

    actor_destroy(fx->w, first);
    collect(fx);
    actor *second = spawn(fx, ACTOR_KIND_PROP, pc);

    assert_true(second->net_id > first_id);
}

/* ---- destroying -------------------------------------------------------------------------- */

static void test_destroying_an_actor_nulls_its_slot_marks_it_garbage_and_queues_the_destroy(
    void **state)
{
    fixture *fx = *state;
    player_controller *pc = join(fx, 1);
    actor *pr = spawn(fx, ACTOR_KIND_PROP, pc);
    uint32_t slot = pr->slot;
    world_outbox_reset(fx->w);

    actor_destroy(fx->w, pr);

    assert_null(persistent(fx)->actors.data[slot]);
    assert_true(gc_object_is_garbage(pr));
    assert_int_equal(actor_owned_count(pc), 0);
    assert_int_equal(fx->w->destroyed_count, 1);
    assert_int_equal(fx->w->destroyed[0].net_id, pr->net_id);
    assert_int_equal(world_actor_slots(fx->w), world_actor_count(fx->w) + 1);
}

static void test_destroying_an_actor_twice_does_nothing_more(void **state)
{
    fixture *fx = *state;
    player_controller *pc = join(fx, 1);
    actor *pr = spawn(fx, ACTOR_KIND_PROP, pc);
    world_outbox_reset(fx->w);
    actor_destroy(fx->w, pr);
    uint32_t live = world_actor_count(fx->w);

    actor_destroy(fx->w, pr);

    assert_int_equal(fx->w->destroyed_count, 1);
    assert_int_equal(world_actor_count(fx->w), live);
}

static void test_a_collection_then_cleanup_leaves_no_null_slots_and_slots_match_indices(
    void **state)
{
    fixture *fx = *state;
    player_controller *pc = join(fx, 1);
    actor *props[10];

    for (int i = 0; i < 10; i++)
        props[i] = spawn(fx, ACTOR_KIND_PROP, pc);
    for (int i = 0; i < 10; i += 3)
        actor_destroy(fx->w, props[i]);
    collect(fx);

    level *lvl = persistent(fx);
    assert_int_equal(world_actor_slots(fx->w), world_actor_count(fx->w));
    for (uint32_t i = 0; i < lvl->actors.count; i++) {
        assert_non_null(lvl->actors.data[i]);
        assert_int_equal(((actor *)lvl->actors.data[i])->slot, i);
    }
}

static void test_destroying_after_cleanup_uses_the_renumbered_slot(void **state)
{
    fixture *fx = *state;
    player_controller *pc = join(fx, 1);
    actor *a = spawn(fx, ACTOR_KIND_PROP, pc);
    actor *b = spawn(fx, ACTOR_KIND_PROP, pc);
    actor_destroy(fx->w, a);
    collect(fx);
    uint32_t live = world_actor_count(fx->w);

    actor_destroy(fx->w, b);

    assert_int_equal(world_actor_count(fx->w), live - 1);
    for (uint32_t i = 0; i < persistent(fx)->actors.count; i++)
        assert_ptr_not_equal(persistent(fx)->actors.data[i], b);
}

static void test_a_leaving_player_takes_everything_it_owns_with_it(void **state)
{
    fixture *fx = *state;
    player_controller *pc = join(fx, 1);

    for (int i = 0; i < 20; i++)
        spawn(fx, ACTOR_KIND_PROP, pc);
    spawn(fx, ACTOR_KIND_PROJECTILE, pc);
    assert_true(gc_object_count(fx->heap) > fx->baseline + 100);

    actor_destroy(fx->w, &pc->base);
    collect(fx);

    assert_int_equal(gc_object_count(fx->heap), fx->baseline);
    assert_int_equal(world_actor_count(fx->w), 2);
    assert_int_equal(world_actor_slots(fx->w), 2);
}

static void test_one_player_leaving_leaves_another_players_actors_alone(void **state)
{
    fixture *fx = *state;
    player_controller *stay = join(fx, 1);
    player_controller *leave = join(fx, 2);
    actor *kept = spawn(fx, ACTOR_KIND_PROP, stay);
    spawn(fx, ACTOR_KIND_PROP, leave);

    actor_destroy(fx->w, &leave->base);
    collect(fx);

    assert_true(gc_object_is_valid(kept));
    assert_true(gc_object_is_valid(stay->pawn));
    assert_int_equal(actor_owned_count(stay), 1);
    assert_int_equal(world_actor_count(fx->w), 2 + 2 + 1);
}

static void test_a_destroyed_pawn_is_nulled_out_of_a_surviving_prop(void **state)
{
    fixture *fx = *state;
    player_controller *pc = join(fx, 1);
    prop *p = (prop *)spawn(fx, ACTOR_KIND_PROP, pc);

    actor_destroy(fx->w, &pc->pawn->base);
    /* The pawn is a mutable object of the prop's cluster: the first collection dissolves the
     * cluster (UE keeps a garbage mutable object until then), the second nulls the reference. */
    collect(fx);
    collect(fx);

    assert_true(gc_object_is_valid(p));
    assert_null(pc->pawn);
    for (uint32_t i = 0; i < p->attachments.count; i++)
        assert_null(((prop_attachment *)p->attachments.data)[i].anchor);
}

static void test_a_prop_roots_a_cluster_of_its_child_actors_when_clusters_are_on(void **state)
{
    fixture *fx = *state;
    player_controller *pc = join(fx, 1);
    uint32_t before = gc_cluster_count(fx->heap);

    actor *pr = spawn(fx, ACTOR_KIND_PROP, pc);
    collect(fx);

    assert_int_equal(gc_cluster_count(fx->heap), before + 1);
    assert_true(gc_object_is_valid(pr));
    assert_true(gc_object_is_valid(((prop *)pr)->parts.data[0]));
}

static void test_props_work_without_clusters_when_clusters_are_off(void **state)
{
    fixture *fx = *state;
    gc_settings s = *gc_heap_settings(fx->heap);
    player_controller *pc = join(fx, 1);
    s.create_clusters = false;
    assert_int_equal(gc_heap_configure(fx->heap, &s), GC_OK);

    actor *pr = spawn(fx, ACTOR_KIND_PROP, pc);
    collect(fx);
    assert_int_equal(gc_cluster_count(fx->heap), 0);
    assert_true(gc_object_is_valid(((prop *)pr)->parts.data[WORLD_PROP_PARTS - 1]));
    actor_destroy(fx->w, &pc->base);
    collect(fx);

    assert_int_equal(gc_object_count(fx->heap), fx->baseline);
}

static void test_a_clustered_prop_and_its_parts_go_when_the_prop_is_destroyed(void **state)
{
    fixture *fx = *state;
    player_controller *pc = join(fx, 1);
    actor *pr = spawn(fx, ACTOR_KIND_PROP, pc);
    collect(fx);
    uint32_t with_prop = gc_object_count(fx->heap);

    actor_destroy(fx->w, pr);
    collect(fx);

    assert_int_equal(gc_object_count(fx->heap), with_prop - 1 - WORLD_PROP_PARTS);
    assert_int_equal(gc_cluster_count(fx->heap), 0);
}

/* ---- projectiles ------------------------------------------------------------------------- */

static void test_a_projectile_holds_its_instigator_only_weakly(void **state)
{
    fixture *fx = *state;
    player_controller *pc = join(fx, 1);
    projectile *pr = (projectile *)spawn(fx, ACTOR_KIND_PROJECTILE, pc);
    assert_ptr_equal(gc_weak_get(fx->heap, pr->instigator), pc->pawn);

    actor_destroy(fx->w, &pc->pawn->base);
    collect(fx);

    assert_true(gc_object_is_valid(pr));
    assert_null(gc_weak_get(fx->heap, pr->instigator));
}

static void test_a_projectile_is_destroyed_when_its_lifetime_runs_out(void **state)
{
    fixture *fx = *state;
    player_controller *pc = join(fx, 1);
    projectile *pr = (projectile *)spawn(fx, ACTOR_KIND_PROJECTILE, pc);
    float x0 = pr->base.pos[0], y0 = pr->base.pos[1];

    world_tick(fx->w, fx->env.projectile_lifetime / 2);
    assert_true(gc_object_is_valid(pr));
    assert_true(pr->base.pos[0] != x0 || pr->base.pos[1] != y0);
    world_tick(fx->w, fx->env.projectile_lifetime);

    assert_true(gc_object_is_garbage(pr));
    assert_int_equal(actor_owned_count(pc), 0);
}

/* ---- a big persistent world (world.PersistentProps) ------------------------------------ */

static void test_persistent_props_are_parts_grouped_under_placed_holders(void **state)
{
    fixture *fx = *state;
    uint32_t n = 2 * WORLD_PERSISTENT_GROUP + 1;
    uint32_t actors_before = world_actor_count(fx->w);

    assert_int_equal(world_spawn_persistent_props(fx->w, n), GC_OK);

    assert_int_equal(gc_object_count(fx->heap), fx->baseline + n + 3);
    assert_int_equal(world_actor_count(fx->w), actors_before + 3);
}

static void test_persistent_props_survive_collections(void **state)
{
    fixture *fx = *state;
    uint32_t n = WORLD_PERSISTENT_GROUP + 10;
    assert_int_equal(world_spawn_persistent_props(fx->w, n), GC_OK);
    uint32_t before = gc_object_count(fx->heap);

    assert_int_equal(gc_collect(fx->heap, 0, true), GC_OK);
    world_cleanup_actors(fx->w);
    assert_int_equal(gc_collect(fx->heap, 0, true), GC_OK);

    assert_int_equal(gc_object_count(fx->heap), before);
}

static void test_persistent_props_are_marked_one_by_one_not_as_clusters(void **state)
{
    fixture *fx = *state;
    assert_int_equal(world_spawn_persistent_props(fx->w, 100), GC_OK);

    assert_int_equal(gc_collect(fx->heap, 0, true), GC_OK);

    assert_int_equal(gc_cluster_count(fx->heap), 0);
}

static void test_no_persistent_props_spawns_nothing(void **state)
{
    fixture *fx = *state;

    assert_int_equal(world_spawn_persistent_props(fx->w, 0), GC_OK);

    assert_int_equal(gc_object_count(fx->heap), fx->baseline);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_a_new_world_holds_world_settings_and_default_volume_in_slots_0_and_1),
        T(test_objects_are_findable_by_their_ownership_path),
        T(test_a_world_survives_collections_because_it_is_rooted),
        T(test_a_world_begins_play_on_its_first_tick),
        T(test_a_joining_player_gets_a_controller_and_a_pawn_with_components),
        T(test_a_spawned_prop_takes_the_next_dynamic_slot_and_is_queued_for_clients),
        T(test_a_prop_owns_child_actors_and_structs_that_reference_them),
        T(test_clients_may_spawn_only_props_and_projectiles),
        T(test_net_ids_are_never_reused_even_when_object_indices_are),
        T(test_destroying_an_actor_nulls_its_slot_marks_it_garbage_and_queues_the_destroy),
        T(test_destroying_an_actor_twice_does_nothing_more),
        T(test_a_collection_then_cleanup_leaves_no_null_slots_and_slots_match_indices),
        T(test_destroying_after_cleanup_uses_the_renumbered_slot),
        T(test_a_leaving_player_takes_everything_it_owns_with_it),
        T(test_one_player_leaving_leaves_another_players_actors_alone),
        T(test_a_destroyed_pawn_is_nulled_out_of_a_surviving_prop),
        T(test_a_prop_roots_a_cluster_of_its_child_actors_when_clusters_are_on),
        T(test_props_work_without_clusters_when_clusters_are_off),
        T(test_a_clustered_prop_and_its_parts_go_when_the_prop_is_destroyed),
        T(test_a_projectile_holds_its_instigator_only_weakly),
        T(test_a_projectile_is_destroyed_when_its_lifetime_runs_out),
        T(test_persistent_props_are_parts_grouped_under_placed_holders),
        T(test_persistent_props_survive_collections),
        T(test_persistent_props_are_marked_one_by_one_not_as_clusters),
        T(test_no_persistent_props_spawns_nothing),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
