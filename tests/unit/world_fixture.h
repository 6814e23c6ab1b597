/*
 * world_fixture.h - the start and end of every test that needs a world: a heap with the
 * server's classes (permanent, as at start-up) and World0; at the end the collector's
 * invariants are checked and the heap destroyed (leaks show under `make asan`).
 */
#ifndef REAP_WORLD_FIXTURE_H
#define REAP_WORLD_FIXTURE_H

#include "gc_testing.h"
#include "reap_gc.h"
#include "world.h"

static inline void world_fixture_open(gc_heap **out_heap, world_env *env, world **out_world)
{
    assert_int_equal(gc_heap_create(NULL, out_heap), GC_OK);
    world_env_init(env, *out_heap);
    assert_int_equal(gc_disregard_open(*out_heap), GC_OK);
    assert_int_equal(world_classes_register(*out_heap, &env->classes), GC_OK);
    assert_int_equal(gc_disregard_close(*out_heap), GC_OK);
    assert_int_equal(world_create(env, 0, out_world), GC_OK);
}

static inline void world_fixture_close(gc_heap *heap)
{
    const char *broken = gc_testing_check(heap);

    if (broken != NULL)
        fail_msg("collector invariant broken: %s", broken);
    gc_heap_destroy(heap);
}

#endif /* REAP_WORLD_FIXTURE_H */
