/*
 * test_world_streaming.c - streaming cells on a fake clock: a cell loads when a pawn comes
 * within range and not before, unloads only after the delay, waits as pending purge for the
 * collection that frees it (and loads wait with it), reloads identical; the time slices of
 * adding and removing honour their limits; a cleanup leaves a level mid visibility change
 * alone; a streamed-out level that survives a collection is named with its chain.
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

/* 4 x 4 cells of 1000 units over a 4000-unit world; each cell places 3 Huts (an actor, 2 parts
 * and 4 Logs of 1 object each) and 4 Stones: 3 * 7 + 4 = 25 objects. */
static const char profile_text[] =
    "[archetype Log]\nreplicated = no\n"
    "[archetype Hut]\ncomponents = 2\nchildren = Log:4\nrefs = owner, level\n"
    "[archetype Stone]\nrefs = level\npayload = 16\n"
    "[archetype Shrine]\nrefs = strong placed\nlifetime = persistent\n"
    "[cells]\nplaced = Hut:3, Stone:4\n";

enum { CELL_OBJECTS = 25, CELL_ACTORS = 7 };

typedef struct fixture {
    gc_heap *heap;
    world_env env;
    world *w;
    player_controller *pc;
    world_profile profile;
    gc_fake_clock gc_clock; /* the collector's, for sliced marks */
    double now;          /* the engine's clock */
    double clock;        /* the time slices' clock: each look moves it on by step */
    double step;
    uint32_t looks;
    char err[512];
} fixture;

static double fake_clock(void *ctx)
{
    fixture *fx = ctx;

    fx->looks++;
    fx->clock += fx->step;
    return fx->clock;
}

/* Streaming on and out, no time slices, a 400-unit range (a pawn at a cell's centre wants that
 * cell alone), a 2 s delay. */
static void configure(fixture *fx)
{
    world_streaming_config *cfg = &fx->env.streaming.cfg;

    cfg->enabled = true;
    cfg->streaming_out = true;
    cfg->cell_size = 1000.0f;
    cfg->loading_range = 400.0f;
    cfg->unload_delay = 2.0;
    cfg->add_time_limit = 0;
    cfg->remove_time_limit = 0;
    cfg->level_clusters = false;
    cfg->clock = fake_clock;
    cfg->clock_ctx = fx;
    fx->env.extent = 4000.0f;
}

static int setup_with(void **state, const gc_heap_config *cfg)
{
    fixture *fx = calloc(1, sizeof *fx);
    gc_heap_config c;

    assert_non_null(fx);
    if (cfg != NULL) {
        c = *cfg;
        c.clock_userdata = &fx->gc_clock;
        fx->gc_clock.now = 1000.0;
        fx->gc_clock.step_per_read = 1.0;
    }
    assert_int_equal(gc_heap_create(cfg != NULL ? &c : NULL, &fx->heap), GC_OK);
    world_env_init(&fx->env, fx->heap);
    configure(fx);
    assert_int_equal(gc_disregard_open(fx->heap), GC_OK);
    assert_int_equal(world_classes_register(fx->heap, &fx->env.classes), GC_OK);
    if (!world_profile_parse(&fx->profile, "t.ini", profile_text, fx->err, sizeof fx->err))
        fail_msg("%s", fx->err);
    if (!world_archetypes_compile(&fx->env, &fx->profile, "t.ini", fx->err, sizeof fx->err))
        fail_msg("%s", fx->err);
    assert_int_equal(gc_disregard_close(fx->heap), GC_OK);
    assert_int_equal(world_create(&fx->env, 0, &fx->w), GC_OK);
    assert_int_equal(actor_spawn_player(fx->w, 1, "p1", &fx->pc), GC_OK);
    actor_steer_pawn(fx->pc->pawn, 0, 0); /* it stands where a test puts it */
    *state = fx;
    return 0;
}

static int setup(void **state)
{
    return setup_with(state, NULL);
}

/* Marks stop at their time limit (every clock read is 1 s, the limit 1.5 s) and suspend a
 * few times before they finish. */
static int setup_sliced(void **state)
{
    gc_heap_config cfg;

    memset(&cfg, 0, sizeof cfg);
    gc_settings_default(&cfg.settings);
    cfg.settings.allow_incremental_reachability = true;
    cfg.settings.incremental_reachability_time_limit = 1.5;
    cfg.settings.delay_reachability_iterations = 3; /* every mark spans a few slices */
    cfg.clock = gc_fake_clock_read;
    if (setup_with(state, &cfg) != 0)
        return -1;
    /* enough objects that a mark looks at its clock: 20000 persistent props */
    assert_int_equal(world_spawn_persistent_props(((fixture *)*state)->w, 20000), GC_OK);
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

static void put_pawn(fixture *fx, float x, float y)
{
    fx->pc->pawn->base.pos[0] = x;
    fx->pc->pawn->base.pos[1] = y;
}

/* One frame's world phase at fx->now (+ dt). */
static void frame(fixture *fx, double dt)
{
    fx->now += dt;
    world_tick(fx->w, 0.0);
    world_streaming_update(fx->w, fx->now);
}

static world_cell *cell(fixture *fx, int32_t x, int32_t y)
{
    return &fx->w->streaming.cells[(uint32_t)y * fx->w->streaming.dim + (uint32_t)x];
}

/* The centre of cell (x, y). */
static float centre(int32_t i)
{
    return -2000.0f + 1000.0f * (float)i + 500.0f;
}

static uint32_t loaded(fixture *fx)
{
    return fx->w->streaming.counts[WORLD_LEVEL_LOADED];
}

static void collect(fixture *fx)
{
    assert_int_equal(gc_collect(fx->heap, 0, true), GC_OK);
}

static void test_the_profile_makes_a_grid_of_unloaded_cells_over_the_extent(void **state)
{
    fixture *fx = *state;

    assert_int_equal(fx->w->streaming.dim, 4);
    assert_int_equal(fx->w->streaming.counts[WORLD_LEVEL_UNLOADED], 16);
    assert_int_equal(fx->env.cells.objects, CELL_OBJECTS);
    assert_ptr_equal(world_streaming_cell_at(fx->w, centre(2), centre(1)), cell(fx, 2, 1));
    assert_null(world_streaming_cell_at(fx->w, 2100.0f, 0.0f));
}

static void test_a_cell_loads_when_a_pawn_comes_within_range_and_not_before(void **state)
{
    fixture *fx = *state;
    world_cell *target = cell(fx, 3, 1);
    float edge = -2000.0f + 3000.0f; /* cell 3's low x edge */

    /* Given a pawn 401 units short of cell (3, 1), */
    put_pawn(fx, edge - 401.0f, centre(1));
    frame(fx, 0.1);
    assert_int_equal(target->state, WORLD_LEVEL_UNLOADED);

    /* when it walks to 399 units of it, */
    put_pawn(fx, edge - 399.0f, centre(1));
    frame(fx, 0.1);

    /* the cell loads: its level is in the world, its actors in their slots, its objects
     * created. */
    assert_int_equal(target->state, WORLD_LEVEL_LOADED);
    assert_non_null(target->lvl);
    assert_int_equal(target->lvl->actors.count, WORLD_FIRST_DYNAMIC_SLOT + CELL_ACTORS);
    assert_non_null(gc_object_find(fx->heap, "World0.Cell_X3_Y1.Hut_2"));
    assert_int_equal(fx->env.streaming.stats.streamed_in, loaded(fx));
}

static void test_placed_actors_are_net_startup_actors_that_stand_still(void **state)
{
    fixture *fx = *state;
    world_cell *c = cell(fx, 1, 1);
    uint32_t queued = fx->w->spawned_count; /* the player's own controller and pawn */
    actor *hut;
    float x, y;

    put_pawn(fx, centre(1), centre(1));
    frame(fx, 0.1);
    hut = gc_object_find(fx->heap, "World0.Cell_X1_Y1.Hut_0");
    assert_non_null(hut);
    x = hut->pos[0];
    y = hut->pos[1];

    frame(fx, 1.0);

    assert_int_equal(hut->net_id, 0);
    assert_false(hut->replicates);
    assert_ptr_equal(hut->level, c->lvl);
    assert_true(hut->pos[0] == x && hut->pos[1] == y);
    /* inside its own cell */
    assert_ptr_equal(world_streaming_cell_at(fx->w, x, y), c);
    /* and nothing of it waits for replication */
    assert_int_equal(fx->w->spawned_count, queued);
}

static void test_a_cell_unloads_only_after_the_unload_delay(void **state)
{
    fixture *fx = *state;
    world_cell *c = cell(fx, 0, 0);

    put_pawn(fx, centre(0), centre(0));
    frame(fx, 0.1);
    assert_int_equal(c->state, WORLD_LEVEL_LOADED);

    /* The pawn leaves for the far corner at t = 0.1 s. */
    put_pawn(fx, centre(3), centre(3));
    frame(fx, 1.0);
    frame(fx, 0.99);
    assert_int_equal(c->state, WORLD_LEVEL_LOADED);

    frame(fx, 0.02); /* 2.01 s since it was last wanted */
    assert_int_equal(c->state, WORLD_LEVEL_PENDING_PURGE);
    assert_int_equal(world_streaming_pending_purge(&fx->env), 1);
    assert_int_equal(fx->env.streaming.stats.streamed_out, 1);
}

static void test_without_streaming_out_a_loaded_cell_stays(void **state)
{
    fixture *fx = *state;
    world_cell *c = cell(fx, 0, 0);

    fx->env.streaming.cfg.streaming_out = false;
    put_pawn(fx, centre(0), centre(0));
    frame(fx, 0.1);
    put_pawn(fx, centre(3), centre(3));
    frame(fx, 60.0);
    frame(fx, 60.0);

    assert_int_equal(c->state, WORLD_LEVEL_LOADED);
}

/* Takes cell (0, 0) through load and unload; the pawn ends in cell (3, 3). */
static void stream_out_corner(fixture *fx)
{
    put_pawn(fx, centre(0), centre(0));
    frame(fx, 0.1);
    put_pawn(fx, centre(3), centre(3));
    frame(fx, 0.1);
    frame(fx, 3.0);
    assert_int_equal(cell(fx, 0, 0)->state, WORLD_LEVEL_PENDING_PURGE);
}

static void test_a_streamed_out_level_is_gone_after_the_next_collection(void **state)
{
    fixture *fx = *state;
    uint32_t before;

    stream_out_corner(fx);
    before = gc_object_count(fx->heap);

    collect(fx);

    assert_int_equal(cell(fx, 0, 0)->state, WORLD_LEVEL_UNLOADED);
    assert_null(gc_object_find(fx->heap, "World0.Cell_X0_Y0"));
    /* the level, its two fixtures and everything it placed */
    assert_int_equal(before - gc_object_count(fx->heap), 1 + 2 + CELL_OBJECTS);
    assert_int_equal(world_streaming_pending_purge(&fx->env), 0);
    assert_int_equal(fx->env.streaming.stats.levels_collected, 1);
    assert_int_equal(fx->env.streaming.stats.levels_survived, 0);
}

static void test_a_reload_waits_for_the_purge_of_its_old_level(void **state)
{
    fixture *fx = *state;
    world_cell *c = cell(fx, 0, 0);

    stream_out_corner(fx);

    /* The pawn comes back before any collection: the cell waits. */
    put_pawn(fx, centre(0), centre(0));
    frame(fx, 0.1);
    frame(fx, 0.1);
    assert_int_equal(c->state, WORLD_LEVEL_PENDING_PURGE);

    collect(fx);
    frame(fx, 0.1);

    assert_int_equal(c->state, WORLD_LEVEL_LOADED);
    /* the wait counted from the request, two frames of 0.1 s before it was visible */
    assert_int_equal(fx->env.streaming.stats.load_wait.count, fx->env.streaming.stats.streamed_in);
    assert_true(fx->env.streaming.stats.load_wait.max >= 0.2 - 1e-9);
}

static void test_loads_are_held_while_a_level_is_pending_purge_when_gc_is_forced(void **state)
{
    fixture *fx = *state;
    world_cell *other = cell(fx, 0, 3);

    fx->env.streaming.cfg.hold_loads_while_pending_purge = true;
    stream_out_corner(fx);

    put_pawn(fx, centre(0), centre(3));
    frame(fx, 0.1);
    assert_int_equal(other->state, WORLD_LEVEL_UNLOADED);
    assert_int_equal(fx->env.streaming.stats.loads_held, 1);

    collect(fx);
    frame(fx, 0.1);
    assert_int_equal(other->state, WORLD_LEVEL_LOADED);
}

static void test_loads_go_ahead_while_a_level_is_pending_purge_without_forced_gc(void **state)
{
    fixture *fx = *state;
    world_cell *other = cell(fx, 0, 3);

    fx->env.streaming.cfg.hold_loads_while_pending_purge = false;
    stream_out_corner(fx);

    put_pawn(fx, centre(0), centre(3));
    frame(fx, 0.1);

    assert_int_equal(other->state, WORLD_LEVEL_LOADED);
    assert_int_equal(fx->env.streaming.stats.loads_held, 0);
}

/* The placed actors of cell (x, y), as name and position, in slot order. */
static void snapshot(fixture *fx, int32_t x, int32_t y, char *out, size_t size)
{
    level *lvl = cell(fx, x, y)->lvl;
    size_t n = 0;

    out[0] = '\0';
    for (uint32_t i = WORLD_FIRST_DYNAMIC_SLOT; i < lvl->actors.count && n < size; i++) {
        actor *a = lvl->actors.data[i];
        char path[128];

        gc_object_path(fx->heap, a, path, sizeof path);
        n += (size_t)snprintf(out + n, size - n, "%s@%.3f,%.3f;", path, (double)a->pos[0],
                              (double)a->pos[1]);
    }
}

static void test_a_cell_reloads_identical(void **state)
{
    fixture *fx = *state;
    char first[4096], again[4096];

    put_pawn(fx, centre(0), centre(0));
    frame(fx, 0.1);
    snapshot(fx, 0, 0, first, sizeof first);
    stream_out_corner(fx);
    collect(fx);

    put_pawn(fx, centre(0), centre(0));
    frame(fx, 0.1);
    snapshot(fx, 0, 0, again, sizeof again);

    assert_string_equal(first, again);
    assert_true(strlen(first) > 0);
}

static void test_adding_actors_is_sliced_by_its_time_limit_and_granularity(void **state)
{
    fixture *fx = *state;
    world_streaming_config *cfg = &fx->env.streaming.cfg;
    world_cell *c = cell(fx, 1, 1);

    /* Given 1 ms a frame, the clock looked at every 2 actors, 0.4 ms an actor, */
    cfg->add_time_limit = 0.001;
    cfg->add_granularity = 2;
    fx->step = 0.0008; /* each look sees two actors' worth of time */
    put_pawn(fx, centre(1), centre(1));

    /* each frame adds 4 actors: 2 (0.8 ms, under 1 ms), 2 more (1.6 ms, over): stop. */
    frame(fx, 0.1);
    assert_int_equal(c->state, WORLD_LEVEL_LOADING);
    assert_true(c->lvl->pending_visibility);
    assert_int_equal(c->lvl->actors.count, WORLD_FIRST_DYNAMIC_SLOT + 4);
    /* the next adds the last 3 (a look after 2, under the limit) and makes it visible */
    frame(fx, 0.1);
    assert_int_equal(c->lvl->actors.count, WORLD_FIRST_DYNAMIC_SLOT + CELL_ACTORS);
    assert_int_equal(c->state, WORLD_LEVEL_LOADED);
    assert_false(c->lvl->pending_visibility);
}

/* The update says where its time went (the engine's slow-frame log): each clock read moves
 * the fake clock on by one step, so every figure is a count of steps. */
static void test_the_update_counts_its_work_by_kind(void **state)
{
    fixture *fx = *state;
    world_streaming_config *cfg = &fx->env.streaming.cfg;
    world_streaming_env *se = &fx->env.streaming;

    cfg->add_time_limit = 0.001;
    cfg->add_granularity = 2;
    cfg->level_clusters = true;
    fx->step = 0.0008;
    put_pawn(fx, centre(1), centre(1));

    /* deciding: one step; adding: the slice's start, its two looks, the end (four); nothing
     * finished, so no cluster; nothing removed */
    frame(fx, 0.1);
    assert_float_equal(se->work.decide, 0.0008, 1e-9);
    assert_float_equal(se->work.add, 4 * 0.0008, 1e-9);
    assert_float_equal(se->work.cluster, 0, 1e-12);
    assert_float_equal(se->work.remove, 0, 1e-12);

    /* the next frame finishes the level: its cluster's two reads are a step, not the add's */
    memset(&se->work, 0, sizeof se->work);
    frame(fx, 0.1);
    assert_int_equal(cell(fx, 1, 1)->state, WORLD_LEVEL_LOADED);
    assert_float_equal(se->work.cluster, 0.0008, 1e-9);
    assert_true(se->work.add > 0);

    /* leaving for beyond the grid, where no cell loads: the removal is counted as removal */
    memset(&se->work, 0, sizeof se->work);
    put_pawn(fx, centre(20), centre(20));
    frame(fx, 3.0);
    assert_int_equal(cell(fx, 1, 1)->state, WORLD_LEVEL_PENDING_PURGE);
    assert_true(se->work.remove > 0);
    assert_float_equal(se->work.add + se->work.cluster, 0, 1e-12);
}

static void test_removing_is_sliced_by_its_time_limit_and_granularity(void **state)
{
    fixture *fx = *state;
    world_streaming_config *cfg = &fx->env.streaming.cfg;
    world_cell *c = cell(fx, 0, 0);
    level *lvl;
    uint32_t frames = 0;

    put_pawn(fx, centre(0), centre(0));
    frame(fx, 0.1);
    lvl = c->lvl;
    /* Given 1 ms a frame, the clock looked at every 5 objects, 0.6 ms a look, */
    cfg->remove_time_limit = 0.001;
    cfg->remove_granularity = 5;
    fx->step = 0.0006;
    put_pawn(fx, centre(3), centre(3));
    frame(fx, 3.0);

    /* the first frame removes until a look finds 1 ms gone: the fixtures and 2 Huts (16
     * objects), not all 27; */
    assert_int_equal(c->state, WORLD_LEVEL_UNLOADING);
    assert_true(lvl->pending_visibility);
    assert_int_equal(c->next_slot, WORLD_FIRST_DYNAMIC_SLOT + 2);
    /* the rest in later frames */
    while (c->state == WORLD_LEVEL_UNLOADING && frames++ < 20)
        frame(fx, 0.1);
    assert_int_equal(c->state, WORLD_LEVEL_PENDING_PURGE);
    assert_true(frames >= 1);
}

static void test_cleanup_leaves_a_level_mid_visibility_change_alone(void **state)
{
    fixture *fx = *state;
    world_streaming_config *cfg = &fx->env.streaming.cfg;
    world_cell *c = cell(fx, 0, 0);
    level *lvl;
    uint32_t slots;

    put_pawn(fx, centre(0), centre(0));
    frame(fx, 0.1);
    lvl = c->lvl;
    cfg->remove_time_limit = 0.001;
    cfg->remove_granularity = 1;
    fx->step = 0.002; /* every look is over the limit: one object a frame */
    put_pawn(fx, centre(3), centre(3));
    frame(fx, 3.0); /* fixture 0 */
    frame(fx, 0.1); /* fixture 1 */
    frame(fx, 0.1); /* the first Hut */
    assert_int_equal(c->state, WORLD_LEVEL_UNLOADING);
    slots = lvl->actors.count;
    assert_null(lvl->actors.data[WORLD_FIRST_DYNAMIC_SLOT]); /* removed, slot nulled */

    world_cleanup_actors(fx->w);

    /* the removal walks slots by index: they are not compacted under it */
    assert_int_equal(lvl->actors.count, slots);
    assert_null(lvl->actors.data[WORLD_FIRST_DYNAMIC_SLOT]);
}

static void test_the_grid_loads_every_cell_at_start_without_server_streaming(void **state)
{
    fixture *fx = *state;
    world *w2;

    fx->env.streaming.cfg.enabled = false;

    assert_int_equal(world_create(&fx->env, 1, &w2), GC_OK);

    assert_int_equal(w2->streaming.counts[WORLD_LEVEL_LOADED], 16);
    assert_non_null(gc_object_find(fx->heap, "World1.Cell_X3_Y3.Stone_3"));
    /* and they stay, however far the pawns are */
    world_streaming_update(w2, 1000.0);
    assert_int_equal(w2->streaming.counts[WORLD_LEVEL_LOADED], 16);
}

/* A persistent Shrine spawned in cell (0, 0) holds a strong handle to its first Hut. */
static void plant_survivor(fixture *fx)
{
    actor *shrine;

    put_pawn(fx, centre(0), centre(0));
    frame(fx, 0.1);
    assert_int_equal(actor_spawn_archetype(fx->w, (uint32_t)world_archetype_find(&fx->env,
                                                                                 "Shrine"),
                                           fx->pc, &shrine),
                     GC_OK);
    stream_out_corner(fx);
}

static void test_a_surviving_level_is_named_with_its_chain_by_the_verify(void **state)
{
    fixture *fx = *state;
    const char *report = fx->env.streaming.report;

    fx->env.streaming.cfg.verify_removed = true;
    plant_survivor(fx);

    collect(fx);

    assert_int_equal(fx->env.streaming.stats.levels_survived, 1);
    assert_true(fx->env.streaming.stats.verify_survivors >= 2); /* the level and the Hut */
    assert_non_null(strstr(report, "World0.Cell_X0_Y0.Hut_0 didn't get garbage collected!"));
    /* the chain starts at the strong handle's reference count and ends at the survivor */
    assert_non_null(strstr(report, "Hut_0 (reference count)"));
    assert_non_null(strstr(report, "-> World0.Cell_X0_Y0 [outer]"));
    assert_non_null(strstr(report, "Cell_X0_Y0"));
    /* it is reported, not freed: the cell may load again, beside it */
    assert_int_equal(cell(fx, 0, 0)->state, WORLD_LEVEL_UNLOADED);
    assert_non_null(gc_object_find(fx->heap, "World0.Cell_X0_Y0.Hut_0"));
}

static void test_without_the_verify_a_survivor_is_counted_but_not_named(void **state)
{
    fixture *fx = *state;

    fx->env.streaming.cfg.verify_removed = false;
    plant_survivor(fx);

    collect(fx);

    assert_int_equal(fx->env.streaming.stats.levels_survived, 1);
    assert_int_equal(fx->env.streaming.stats.verify_survivors, 0);
    assert_null(strstr(fx->env.streaming.report, "didn't get garbage collected"));
}

/* A Shrine holds cell (0, 0)'s first Hut by a strong handle through a collection. */
static void strong_hold_through_a_collection(fixture *fx, bool clusters)
{
    actor *shrine;

    fx->env.streaming.cfg.level_clusters = clusters;
    put_pawn(fx, centre(0), centre(0));
    frame(fx, 0.1);
    assert_true(gc_object_in_cluster(cell(fx, 0, 0)->lvl) == clusters);
    assert_int_equal(actor_spawn_archetype(fx->w, (uint32_t)world_archetype_find(&fx->env,
                                                                                 "Shrine"),
                                           fx->pc, &shrine),
                     GC_OK);
    collect(fx);
    /* when the cell streams out, the strongly held Hut keeps its level. */
    stream_out_corner(fx);
    collect(fx);
    assert_int_equal(fx->env.streaming.stats.levels_survived, 1);
    assert_non_null(gc_object_find(fx->heap, "World0.Cell_X0_Y0.Hut_0"));
}

static void test_a_strong_handle_keeps_a_clustered_level_through_collections(void **state)
{
    strong_hold_through_a_collection(*state, true);
}

static void test_a_strong_handle_keeps_an_unclustered_level_through_collections(void **state)
{
    strong_hold_through_a_collection(*state, false);
}

/* Runs a pending incremental mark to its end, a slice at a time. */
static void finish_mark(fixture *fx)
{
    for (int i = 0; i < 100000 && gc_is_incremental_reachability_pending(fx->heap); i++)
        gc_incremental_reachability_step(fx->heap);
    assert_false(gc_is_incremental_reachability_pending(fx->heap));
}

static void test_a_level_that_streams_out_during_a_sliced_mark_is_collected_by_the_next(
    void **state)
{
    fixture *fx = *state;

    /* Given a clustered cell and a sliced mark under way, */
    fx->env.streaming.cfg.level_clusters = true;
    put_pawn(fx, centre(0), centre(0));
    frame(fx, 0.1);
    assert_int_equal(gc_collect(fx->heap, 0, false), GC_OK);
    assert_true(gc_is_incremental_reachability_pending(fx->heap));

    /* when the cell streams out before the mark ends, */
    stream_out_corner(fx);
    finish_mark(fx);
    assert_int_equal(cell(fx, 0, 0)->state, WORLD_LEVEL_PENDING_PURGE);

    /* the next collection frees it. */
    assert_int_equal(gc_collect(fx->heap, 0, false), GC_OK);
    finish_mark(fx);
    assert_int_equal(cell(fx, 0, 0)->state, WORLD_LEVEL_UNLOADED);
    assert_int_equal(fx->env.streaming.stats.levels_survived, 0);
    assert_int_equal(fx->env.streaming.stats.levels_collected, 1);
}

static void test_a_level_prepared_for_a_sliced_mark_is_collected_by_it(void **state)
{
    fixture *fx = *state;

    fx->env.streaming.cfg.level_clusters = true;
    stream_out_corner(fx);

    assert_int_equal(gc_collect(fx->heap, 0, false), GC_OK);
    /* other cells load and unload while it marks */
    put_pawn(fx, centre(2), centre(2));
    frame(fx, 0.1);
    finish_mark(fx);

    assert_int_equal(cell(fx, 0, 0)->state, WORLD_LEVEL_UNLOADED);
    assert_int_equal(fx->env.streaming.stats.levels_survived, 0);
}

static void test_a_full_purge_forced_mid_mark_collects_a_level_that_streamed_out_meanwhile(
    void **state)
{
    fixture *fx = *state;

    fx->env.streaming.cfg.level_clusters = true;
    put_pawn(fx, centre(0), centre(0));
    frame(fx, 0.1);
    assert_int_equal(gc_collect(fx->heap, 0, false), GC_OK);
    stream_out_corner(fx);

    /* UE's forced full purge: the pending mark is finished, then a full collection */
    assert_int_equal(gc_collect(fx->heap, 0, true), GC_OK);

    assert_int_equal(cell(fx, 0, 0)->state, WORLD_LEVEL_UNLOADED);
    assert_int_equal(fx->env.streaming.stats.levels_survived, 0);
    assert_null(gc_object_find(fx->heap, "World0.Cell_X0_Y0"));
}

static void test_a_census_during_a_sliced_mark_keeps_no_streamed_out_level_alive(void **state)
{
    fixture *fx = *state;
    uint32_t counts[2 * WORLD_PROFILE_ARCHETYPES_MAX];

    /* Given a streamed-out level prepared for a sliced mark, */
    fx->env.streaming.cfg.level_clusters = true;
    stream_out_corner(fx);
    assert_int_equal(gc_collect(fx->heap, 0, false), GC_OK);
    assert_true(gc_is_incremental_reachability_pending(fx->heap));

    /* when /metrics counts the objects by class while it marks (every scrape does), */
    world_archetype_census(&fx->env, fx->heap, counts);
    finish_mark(fx);

    /* the mark still frees the level. */
    assert_int_equal(fx->env.streaming.stats.levels_survived, 0);
    assert_int_equal(fx->env.streaming.stats.levels_collected, 1);
}

static void test_player_start_sources_load_their_cells_at_start_and_keep_them(void **state)
{
    fixture *fx = *state;
    world *w2;

    /* Given one player start that is a streaming source, */
    fx->env.cells.player_starts = 1;
    fx->env.cells.start_sources = true;

    /* a new world has its cells loaded before any pawn comes, */
    assert_int_equal(world_create(&fx->env, 1, &w2), GC_OK);
    assert_true(w2->streaming.counts[WORLD_LEVEL_LOADED] >= 1);
    assert_int_equal(world_streaming_cell_at(w2, w2->streaming.starts[0][0],
                                             w2->streaming.starts[0][1])->state,
                     WORLD_LEVEL_LOADED);

    /* and keeps them with nobody near. */
    world_streaming_update(w2, 100.0);
    world_streaming_update(w2, 200.0);
    assert_int_equal(world_streaming_cell_at(w2, w2->streaming.starts[0][0],
                                             w2->streaming.starts[0][1])->state,
                     WORLD_LEVEL_LOADED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
        T(test_the_profile_makes_a_grid_of_unloaded_cells_over_the_extent),
        T(test_a_cell_loads_when_a_pawn_comes_within_range_and_not_before),
        T(test_placed_actors_are_net_startup_actors_that_stand_still),
        T(test_a_cell_unloads_only_after_the_unload_delay),
        T(test_without_streaming_out_a_loaded_cell_stays),
        T(test_a_streamed_out_level_is_gone_after_the_next_collection),
        T(test_a_reload_waits_for_the_purge_of_its_old_level),
        T(test_loads_are_held_while_a_level_is_pending_purge_when_gc_is_forced),
        T(test_loads_go_ahead_while_a_level_is_pending_purge_without_forced_gc),
        T(test_a_cell_reloads_identical),
        T(test_adding_actors_is_sliced_by_its_time_limit_and_granularity),
        T(test_the_update_counts_its_work_by_kind),
        T(test_removing_is_sliced_by_its_time_limit_and_granularity),
        T(test_cleanup_leaves_a_level_mid_visibility_change_alone),
        T(test_the_grid_loads_every_cell_at_start_without_server_streaming),
        T(test_player_start_sources_load_their_cells_at_start_and_keep_them),
        T(test_a_surviving_level_is_named_with_its_chain_by_the_verify),
        T(test_without_the_verify_a_survivor_is_counted_but_not_named),
        T(test_a_strong_handle_keeps_a_clustered_level_through_collections),
        T(test_a_strong_handle_keeps_an_unclustered_level_through_collections),
        cmocka_unit_test_setup_teardown(
            test_a_level_that_streams_out_during_a_sliced_mark_is_collected_by_the_next,
            setup_sliced, teardown),
        cmocka_unit_test_setup_teardown(test_a_level_prepared_for_a_sliced_mark_is_collected_by_it,
                                        setup_sliced, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_full_purge_forced_mid_mark_collects_a_level_that_streamed_out_meanwhile,
            setup_sliced, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_census_during_a_sliced_mark_keeps_no_streamed_out_level_alive, setup_sliced,
            teardown),
#undef T
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
