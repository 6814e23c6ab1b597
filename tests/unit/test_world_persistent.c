/*
 * test_world_persistent.c - a big persistent world (world.PersistentProps): objects nobody
 * destroys, held by placed holder props, that survive every collection and cost the collector
 * a mark each.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "gc_testing.h"
#include "reap_gc.h"
#include "world.h"

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
    assert_int_equal(gc_heap_create(NULL, &fx.heap), GC_OK);
    world_env_init(&fx.env, fx.heap);
    assert_int_equal(gc_disregard_open(fx.heap), GC_OK);
    assert_int_equal(world_classes_register(fx.heap, &fx.env.classes), GC_OK);
    assert_int_equal(gc_disregard_close(fx.heap), GC_OK);
    assert_int_equal(world_create(&fx.env, 0, &fx.w), GC_OK);
    fx.baseline = gc_object_count(fx.heap);
    *state = &fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;
    const char *broken = gc_testing_check(fx->heap);

    if (broken != NULL)
        fail_msg("collector invariant broken: %s", broken);
    gc_heap_destroy(fx->heap);
    return 0;
}

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
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_persistent_props_are_parts_grouped_under_placed_holders, setup, teardown),
        cmocka_unit_test_setup_teardown(test_persistent_props_survive_collections, setup, teardown),
        cmocka_unit_test_setup_teardown(test_persistent_props_are_marked_one_by_one_not_as_clusters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_persistent_props_spawns_nothing, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
