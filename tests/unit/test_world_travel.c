/*
 * test_world_travel.c - a world's end at a travel and what crosses into the next one: a torn
 * down world is collected whole; its end of play runs in time slices on a fake clock; a
 * carried controller lives on in the new world while the old one goes; the game instance's
 * actors survive every world, and one that holds a world's level keeps that world, with a
 * chain of references through the game instance.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "world_fixture.h"

static const char profile_text[] =
    "[archetype Crate]\ncomponents = 2\nrefs = level\n"
    "[archetype Tracker]\nrefs = level\nlifetime = instance\n"
    "[archetype Watcher]\nrefs = weak level\nlifetime = instance\n"
    "[archetype Stone]\nrefs = level\nreplicated = no\n";

typedef struct fixture {
    gc_heap *heap;
    world_env env;
    world *w;
    player_controller *pc;
    world_profile profile;
    double clock;        /* each look moves it on by step */
    double step;
    uint32_t looks;
    char chain[4096];
    char err[512];
} fixture;

static double fake_clock(void *ctx)
{
    fixture *fx = ctx;

    fx->looks++;
    fx->clock += fx->step;
    return fx->clock;
}

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);

    assert_non_null(fx);
    assert_int_equal(gc_heap_create(NULL, &fx->heap), GC_OK);
    world_env_init(&fx->env, fx->heap);
    fx->env.streaming.cfg.clock = fake_clock;
    fx->env.streaming.cfg.clock_ctx = fx;
    assert_int_equal(gc_disregard_open(fx->heap), GC_OK);
    assert_int_equal(world_classes_register(fx->heap, &fx->env.classes), GC_OK);
    if (!world_profile_parse(&fx->profile, "t.ini", profile_text, fx->err, sizeof fx->err))
        fail_msg("%s", fx->err);
    if (!world_archetypes_compile(&fx->env, &fx->profile, "t.ini", fx->err, sizeof fx->err))
        fail_msg("%s", fx->err);
    assert_int_equal(gc_disregard_close(fx->heap), GC_OK);
    assert_int_equal(world_game_instance_create(&fx->env), GC_OK);
    assert_int_equal(world_create(&fx->env, 0, &fx->w), GC_OK);
    assert_int_equal(actor_spawn_player(fx->w, 1, "p1", &fx->pc), GC_OK);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;

    world_fixture_close(fx->heap);
    world_env_close(&fx->env);
    free(fx);
    return 0;
}

static void spawn(fixture *fx, world *w, player_controller *pc, const char *name, uint32_t n)
{
    int idx = world_archetype_find(&fx->env, name);
    actor *a;

    assert_true(idx >= 0);
    for (uint32_t i = 0; i < n; i++)
        assert_int_equal(actor_spawn_archetype(w, (uint32_t)idx, pc, &a), GC_OK);
}

/* The whole end of play at once, then the full purge a hard travel runs. */
static void end_and_collect(fixture *fx, world *w)
{
    uint64_t actors = 0;

    world_teardown_begin(w);
    assert_true(world_teardown_step(w, 0, &actors));
    assert_int_equal(gc_collect(fx->heap, 0, true), GC_OK);
}

static void chain_line_cb(const char *line, void *userdata)
{
    fixture *fx = userdata;
    size_t n = strlen(fx->chain);

    snprintf(fx->chain + n, sizeof fx->chain - n, "%s\n", line);
}

static void test_a_torn_down_world_is_collected_whole(void **state)
{
    fixture *fx = *state;
    gc_weak old = gc_weak_make(fx->heap, fx->w);
    uint32_t before;

    spawn(fx, fx->w, fx->pc, "Crate", 5);
    before = gc_object_count(fx->heap);

    end_and_collect(fx, fx->w);

    assert_null(gc_weak_get_even_if_garbage(fx->heap, old));
    assert_null(gc_object_find(fx->heap, "World0"));
    /* Every object of the world went: 5 crates of 3, the player's 4, the level, its two
     * fixtures and the world itself. */
    assert_int_equal(gc_object_count(fx->heap), before - (5 * 3 + 4 + 1 + 2 + 1));
}

static void test_the_end_of_play_runs_in_time_slices(void **state)
{
    fixture *fx = *state;
    uint64_t actors = 0;
    uint32_t steps = 0;

    spawn(fx, fx->w, fx->pc, "Crate", 300);
    fx->step = 0.001; /* every look at the clock is a millisecond later */
    world_teardown_begin(fx->w);

    while (!world_teardown_step(fx->w, 0.002, &actors))
        steps++;

    /* 304 actors (2 fixtures, the controller, the pawn, 300 crates of 3 objects): the clock is
     * read every 64 objects, and a slice stops at its second look. */
    assert_int_equal(actors, 304);
    assert_true(steps >= 3);
    assert_true(gc_object_is_garbage(fx->w));
    assert_false(gc_root_contains(fx->w));
}

static void test_a_carried_controller_lives_on_in_the_new_world(void **state)
{
    fixture *fx = *state;
    world *next;
    gc_weak old = gc_weak_make(fx->heap, fx->w);
    char path[96], want[96];

    spawn(fx, fx->w, fx->pc, "Crate", 3);
    assert_int_equal(world_create(&fx->env, 1, &next), GC_OK);

    assert_int_equal(world_carry_player(fx->w, next, fx->pc), GC_OK);
    end_and_collect(fx, fx->w);
    assert_int_equal(world_restart_player(next, fx->pc), GC_OK);

    assert_null(gc_weak_get_even_if_garbage(fx->heap, old));
    assert_true(gc_object_is_valid(fx->pc));
    gc_object_path(fx->heap, fx->pc, path, sizeof path);
    snprintf(want, sizeof want, "World1.Level0.PlayerController_%llu",
             (unsigned long long)fx->pc->base.net_id);
    assert_string_equal(path, want);
    assert_ptr_equal(fx->pc->base.level, next->persistent_level);
    assert_int_equal(actor_owned_count(fx->pc), 0);
    assert_non_null(fx->pc->pawn);
    assert_ptr_equal(gc_object_outer(fx->heap, fx->pc->pawn), next->persistent_level);
}

static void test_a_game_instance_actor_survives_the_world_it_was_spawned_in(void **state)
{
    fixture *fx = *state;
    gc_weak old = gc_weak_make(fx->heap, fx->w);

    spawn(fx, fx->w, fx->pc, "Watcher", 2);
    assert_int_equal(world_game_instance_count(&fx->env), 2);
    assert_int_equal(actor_owned_count(fx->pc), 0);

    end_and_collect(fx, fx->w);

    /* A weak reference to the level lets the world go; the actors stay with the instance. */
    assert_null(gc_weak_get_even_if_garbage(fx->heap, old));
    assert_int_equal(world_game_instance_count(&fx->env), 2);
    assert_true(gc_object_is_valid(fx->env.instance->objects.data[0]));
    assert_true(world_object_is_persistent(&fx->env, fx->heap, fx->env.instance->objects.data[1]));
}

static void test_a_game_instance_actor_holding_a_level_leaks_its_world_through_the_instance(
    void **state)
{
    fixture *fx = *state;
    world *w = fx->w;
    gc_weak old = gc_weak_make(fx->heap, w);

    spawn(fx, w, fx->pc, "Tracker", 1);

    end_and_collect(fx, w);

    /* The held reference is never nulled: the level, and through its outer the world, stay;
     * the actor's own (killable) reference to its level is nulled as any other. */
    assert_non_null(gc_weak_get_even_if_garbage(fx->heap, old));
    assert_null(((actor *)fx->env.instance->objects.data[0])->level);
    assert_int_equal(gc_reference_chain(fx->heap, w, chain_line_cb, fx), GC_OK);
    assert_non_null(strstr(fx->chain, "GameInstance (root set)\n  -> GameInstance.Tracker_"));
    assert_non_null(strstr(fx->chain, "-> GameInstance.Tracker_"));
    assert_non_null(strstr(fx->chain, "-> World0.Level0 [held]\n"));
    assert_non_null(strstr(fx->chain, "-> World0 [outer]\n"));
}

/* A world of 2 x 2 streaming cells (3 Stones each), its cells streamed out and pending purge
 * when the world ends, and a Tracker of the game instance holding its persistent level: the
 * world leaks, and must leave streaming all the same. */
static void test_a_world_that_ends_leaves_streaming_even_when_it_leaks(void **state)
{
    fixture *fx = *state;
    world_streaming_config *cfg = &fx->env.streaming.cfg;
    world *w;
    world_cell *c;
    player_controller *pc;
    gc_weak old, cell_level;
    uint64_t actors = 0;

    fx->env.cells.present = true;
    fx->env.cells.n_placed = 1;
    fx->env.cells.placed[0].archetype = (uint32_t)world_archetype_find(&fx->env, "Stone");
    fx->env.cells.placed[0].count = 3;
    fx->env.extent = 2000.0f;
    cfg->enabled = cfg->streaming_out = true;
    cfg->cell_size = 1000.0f;
    cfg->loading_range = 400.0f;
    cfg->unload_delay = 0;
    cfg->add_time_limit = cfg->remove_time_limit = 0;
    cfg->level_clusters = false;
    assert_int_equal(world_create(&fx->env, 1, &w), GC_OK);
    assert_int_equal(fx->env.streaming.world_count, 1);
    c = &w->streaming.cells[0];
    /* A pawn-less world wants nothing: cell (0,0) loads by hand, then streams out. */
    cfg->enabled = false;
    world_streaming_update(w, 1.0);
    cfg->enabled = true;
    assert_int_equal(c->state, WORLD_LEVEL_LOADED);
    cell_level = gc_weak_make(fx->heap, c->lvl);
    world_streaming_update(w, 2.0);
    world_streaming_update(w, 3.0);
    assert_int_equal(c->state, WORLD_LEVEL_PENDING_PURGE);
    assert_true(world_streaming_pending_purge(&fx->env) >= 1);
    assert_int_equal(actor_spawn_player(w, 2, "p2", &pc), GC_OK);
    spawn(fx, w, pc, "Tracker", 1);
    old = gc_weak_make(fx->heap, w);

    world_teardown_begin(w);
    assert_true(world_teardown_step(w, 0, &actors));
    assert_int_equal(gc_collect(fx->heap, 0, true), GC_OK);

    /* The world leaked (the Tracker holds it) but left the process-wide list at once and its
     * levels pending purge are counted no more: a later collection's callbacks never look
     * at its cells, and loads elsewhere are not held back by them. Its streamed-out levels,
     * which nothing holds, are gone. */
    assert_non_null(gc_weak_get_even_if_garbage(fx->heap, old));
    assert_int_equal(fx->env.streaming.world_count, 0);
    assert_int_equal(world_streaming_pending_purge(&fx->env), 0);
    assert_null(gc_weak_get_even_if_garbage(fx->heap, cell_level));
    assert_int_equal(gc_collect(fx->heap, 0, true), GC_OK);
    assert_int_equal(fx->env.streaming.world_count, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_torn_down_world_is_collected_whole, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_the_end_of_play_runs_in_time_slices, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_carried_controller_lives_on_in_the_new_world,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_game_instance_actor_survives_the_world_it_was_spawned_in, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_game_instance_actor_holding_a_level_leaks_its_world_through_the_instance,
            setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_world_that_ends_leaves_streaming_even_when_it_leaks,
            setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
