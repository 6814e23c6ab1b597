/*
 * test_engine_schedule.c - when the engine collects (UE ConditionalCollectGarbage).
 *
 * The schedule is driven with a fake clock (the frame deltas a test passes) and a fake
 * collector that records what it was asked to do.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <math.h>

#include <cmocka.h>

#include "cvar.h"
#include "engine_gc.h"
#include "engine_internal.h"

typedef struct fake_gc {
    int collects;             /* try_collect calls that succeeded */
    int full_purges;          /* of those, with full_purge */
    int refusals;             /* try_collect calls refused (lock held) */
    bool refuse;              /* the next try_collect calls are refused */
    int reach_steps;
    int purge_steps;
    double last_purge_budget;
    int cleanups;
    bool reach_pending;
    bool purge_pending;
    bool collect_leaves_purge_pending; /* a non-full collect leaves a purge pending */
    int collect_mark_steps;   /* a non-full collect leaves this many mark steps pending */
    int mark_steps_left;
    int time_limit_calls;     /* set_time_limit calls (pacing) */
    double last_time_limit;
} fake_gc;

static bool fake_try_collect(void *ctx, bool full_purge)
{
    fake_gc *f = ctx;

    if (f->refuse) {
        f->refusals++;
        return false;
    }
    f->collects++;
    if (full_purge) {
        f->full_purges++;
        return true;
    }
    if (f->collect_leaves_purge_pending)
        f->purge_pending = true;
    if (f->collect_mark_steps > 0) {
        f->mark_steps_left = f->collect_mark_steps;
        f->reach_pending = true;
    }
    return true;
}

static void fake_reachability_step(void *ctx)
{
    fake_gc *f = ctx;

    f->reach_steps++;
    if (f->mark_steps_left > 0 && --f->mark_steps_left == 0)
        f->reach_pending = false;
}

static void fake_set_time_limit(void *ctx, double seconds)
{
    fake_gc *f = ctx;

    f->time_limit_calls++;
    f->last_time_limit = seconds;
}

static void fake_incremental_purge(void *ctx, double time_limit)
{
    fake_gc *f = ctx;

    f->purge_steps++;
    f->last_purge_budget = time_limit;
}

static bool fake_is_reachability_pending(void *ctx)
{
    return ((fake_gc *)ctx)->reach_pending;
}

static bool fake_is_purge_pending(void *ctx)
{
    return ((fake_gc *)ctx)->purge_pending;
}

static void fake_cleanup_actors(void *ctx)
{
    ((fake_gc *)ctx)->cleanups++;
}

typedef struct fixture {
    fake_gc gc;
    engine_gc_ops ops;
    engine_gc_schedule sched;
    engine_gc_config cfg;
    engine_gc_frame fr;
} fixture;

static int setup(void **state)
{
    static fixture fx;

    memset(&fx, 0, sizeof fx);
    fx.ops = (engine_gc_ops){ &fx.gc, fake_try_collect, fake_reachability_step,
                              fake_incremental_purge, fake_is_reachability_pending,
                              fake_is_purge_pending, fake_cleanup_actors, fake_set_time_limit };
    engine_gc_schedule_init(&fx.sched);
    /* UE's defaults. */
    fx.cfg.time_between_purging = 60;
    fx.cfg.idle_server_multiplier = 10;
    fx.cfg.low_memory_threshold_mb = 0;
    fx.cfg.low_memory_time_between_purging = 30;
    fx.cfg.incremental_time_per_frame = 0.002;
    fx.cfg.frame_slack_pacing = false;
    fx.cfg.frame_slack_margin = 0.004;
    fx.cfg.frame_period = 0.032;
    fx.cfg.reachability_time_limit = 0.005;
    fx.fr.dedicated_server = true;
    fx.fr.any_world_begun_play = true;
    fx.fr.has_game_world = true;
    fx.fr.players_connected = true;
    fx.fr.free_memory_mb = -1;
    *state = &fx;
    return 0;
}

/* Runs n frames of dt seconds each; returns the last action. */
static engine_gc_action run_frames(fixture *fx, int n, double dt)
{
    engine_gc_action a = ENGINE_GC_NONE;

    for (int i = 0; i < n; i++) {
        fx->fr.frame++;
        fx->fr.delta_seconds = dt;
        a = engine_conditional_collect_garbage(&fx->sched, &fx->cfg, &fx->fr, &fx->ops);
    }
    return a;
}

/* ---- the interval ---------------------------------------------------------------------- */

static void test_interval_is_the_base_interval_while_players_are_connected(void **state)
{
    fixture *fx = *state;

    fx->fr.players_connected = true;

    assert_true(engine_gc_interval(&fx->cfg, &fx->fr) == 60.0);
}

static void test_idle_dedicated_server_multiplies_the_interval(void **state)
{
    fixture *fx = *state;

    fx->fr.players_connected = false;

    assert_true(engine_gc_interval(&fx->cfg, &fx->fr) == 600.0);
}

static void test_a_server_that_is_not_dedicated_never_multiplies_the_interval(void **state)
{
    fixture *fx = *state;

    fx->fr.dedicated_server = false;
    fx->fr.players_connected = false;

    assert_true(engine_gc_interval(&fx->cfg, &fx->fr) == 60.0);
}

static void test_low_memory_uses_the_low_memory_interval_when_shorter(void **state)
{
    fixture *fx = *state;

    fx->cfg.low_memory_threshold_mb = 512;
    fx->fr.free_memory_mb = 100;
    fx->fr.players_connected = false;

    assert_true(engine_gc_interval(&fx->cfg, &fx->fr) == 30.0);
}

static void test_low_memory_keeps_the_interval_when_it_is_already_shorter(void **state)
{
    fixture *fx = *state;

    fx->cfg.time_between_purging = 5;
    fx->cfg.low_memory_threshold_mb = 512;
    fx->fr.free_memory_mb = 100;

    assert_true(engine_gc_interval(&fx->cfg, &fx->fr) == 5.0);
}

/* UE applies the idle multiplier first and then takes the low-memory interval if shorter:
 * an idle server whose multiplied interval is already shorter keeps it. */
static void test_low_memory_compares_against_the_idle_multiplied_interval(void **state)
{
    fixture *fx = *state;

    fx->cfg.time_between_purging = 2;
    fx->cfg.low_memory_threshold_mb = 512;
    fx->fr.free_memory_mb = 100;
    fx->fr.players_connected = false; /* 2 s x 10 = 20 s, shorter than 30 s */

    assert_true(engine_gc_interval(&fx->cfg, &fx->fr) == 20.0);
}

static void test_a_zero_low_memory_interval_counts_as_off(void **state)
{
    fixture *fx = *state;

    fx->cfg.low_memory_threshold_mb = 512;
    fx->cfg.low_memory_time_between_purging = 0;
    fx->fr.free_memory_mb = 100;

    assert_true(engine_gc_interval(&fx->cfg, &fx->fr) == 60.0);
}

static void test_enough_free_memory_keeps_the_normal_interval(void **state)
{
    fixture *fx = *state;

    fx->cfg.low_memory_threshold_mb = 512;
    fx->fr.free_memory_mb = 4096;

    assert_true(engine_gc_interval(&fx->cfg, &fx->fr) == 60.0);
}

static void test_low_memory_rule_is_off_when_the_threshold_is_zero(void **state)
{
    fixture *fx = *state;

    fx->cfg.low_memory_threshold_mb = 0;
    fx->fr.free_memory_mb = 1;

    assert_true(engine_gc_interval(&fx->cfg, &fx->fr) == 60.0);
}

static void test_unknown_free_memory_never_triggers_the_low_memory_interval(void **state)
{
    fixture *fx = *state;

    fx->cfg.low_memory_threshold_mb = 512;
    fx->fr.free_memory_mb = -1;

    assert_true(engine_gc_interval(&fx->cfg, &fx->fr) == 60.0);
}

static void test_the_schedule_reports_the_interval_in_force_each_frame(void **state)
{
    fixture *fx = *state;

    fx->fr.players_connected = false;
    run_frames(fx, 1, 0.1);
    assert_true(fx->sched.interval == 600.0);

    fx->fr.players_connected = true;
    run_frames(fx, 1, 0.1);

    assert_true(fx->sched.interval == 60.0);
}

/* ---- when a collection happens ------------------------------------------------------- */

static void test_nothing_happens_before_any_world_has_begun_play(void **state)
{
    fixture *fx = *state;

    fx->fr.any_world_begun_play = false;

    engine_gc_action a = run_frames(fx, 100, 1.0);

    assert_int_equal(a, ENGINE_GC_NONE);
    assert_int_equal(fx->gc.collects, 0);
    assert_true(fx->sched.time_since_last_purge == 0.0);
}

static void test_no_collection_before_the_interval_has_passed(void **state)
{
    fixture *fx = *state;

    run_frames(fx, 60, 1.0); /* exactly 60 s: the interval must be exceeded */

    assert_int_equal(fx->gc.collects, 0);
    assert_true(fx->sched.time_since_last_purge == 60.0);
}

static void test_a_collection_runs_once_the_interval_has_passed(void **state)
{
    fixture *fx = *state;

    engine_gc_action a = run_frames(fx, 61, 1.0);

    assert_int_equal(a, ENGINE_GC_COLLECT);
    assert_int_equal(fx->gc.collects, 1);
}

static void test_an_idle_server_collects_ten_times_less_often(void **state)
{
    fixture *fx = *state;

    fx->fr.players_connected = false;

    run_frames(fx, 600, 1.0);
    assert_int_equal(fx->gc.collects, 0);
    run_frames(fx, 1, 1.0);

    assert_int_equal(fx->gc.collects, 1);
}

static void test_the_timer_restarts_after_a_collection(void **state)
{
    fixture *fx = *state;

    run_frames(fx, 61, 1.0);

    assert_true(fx->sched.time_since_last_purge == 0.0);
    run_frames(fx, 60, 1.0);
    assert_int_equal(fx->gc.collects, 1);
    run_frames(fx, 1, 1.0);
    assert_int_equal(fx->gc.collects, 2);
}

static void test_cleanup_actors_runs_after_every_collection(void **state)
{
    fixture *fx = *state;

    run_frames(fx, 61 * 3, 1.0);

    assert_int_equal(fx->gc.collects, 3);
    assert_int_equal(fx->gc.cleanups, 3);
}

static void test_a_collection_with_a_game_world_leaves_the_purge_incremental(void **state)
{
    fixture *fx = *state;

    fx->fr.has_game_world = true;
    run_frames(fx, 61, 1.0);

    assert_int_equal(fx->gc.collects, 1);
    assert_int_equal(fx->gc.full_purges, 0);
}

static void test_a_collection_without_a_game_world_is_a_full_purge(void **state)
{
    fixture *fx = *state;

    fx->fr.has_game_world = false;
    run_frames(fx, 61, 1.0);

    assert_int_equal(fx->gc.full_purges, 1);
}

static void test_a_zero_interval_never_collects(void **state)
{
    fixture *fx = *state;

    fx->cfg.time_between_purging = 0;

    run_frames(fx, 1000, 1.0);

    assert_int_equal(fx->gc.collects, 0);
}

static void test_a_refused_collection_is_retried_next_frame_without_resetting_the_timer(
    void **state)
{
    fixture *fx = *state;

    fx->gc.refuse = true;
    run_frames(fx, 61, 1.0);
    assert_int_equal(fx->gc.refusals, 1);
    assert_true(fx->sched.time_since_last_purge == 61.0);

    fx->gc.refuse = false;
    run_frames(fx, 1, 1.0);

    assert_int_equal(fx->gc.collects, 1);
    assert_int_equal(fx->gc.cleanups, 1);
}

/* ---- work left from earlier frames ----------------------------------------------------- */

static void test_a_pending_purge_advances_within_the_frame_budget(void **state)
{
    fixture *fx = *state;

    fx->gc.purge_pending = true;

    engine_gc_action a = run_frames(fx, 1, 1.0);

    assert_int_equal(a, ENGINE_GC_PURGE_STEP);
    assert_int_equal(fx->gc.purge_steps, 1);
    assert_true(fx->gc.last_purge_budget == 0.002);
}

static void test_a_pending_purge_postpones_the_next_collection(void **state)
{
    fixture *fx = *state;

    fx->gc.purge_pending = true;

    run_frames(fx, 100, 1.0);

    assert_int_equal(fx->gc.collects, 0);
    assert_int_equal(fx->gc.purge_steps, 100);
}

static void test_a_pending_incremental_mark_continues_instead_of_collecting(void **state)
{
    fixture *fx = *state;

    fx->gc.reach_pending = true;

    engine_gc_action a = run_frames(fx, 100, 1.0);

    assert_int_equal(a, ENGINE_GC_REACHABILITY_STEP);
    assert_int_equal(fx->gc.reach_steps, 100);
    assert_int_equal(fx->gc.collects, 0);
    assert_int_equal(fx->gc.purge_steps, 0);
}

static void test_the_schedule_acts_at_most_once_per_frame(void **state)
{
    fixture *fx = *state;

    fx->fr.frame = 7;
    fx->fr.delta_seconds = 100.0;
    engine_conditional_collect_garbage(&fx->sched, &fx->cfg, &fx->fr, &fx->ops);
    fx->sched.time_since_last_purge = 1000.0;

    engine_gc_action a = engine_conditional_collect_garbage(&fx->sched, &fx->cfg, &fx->fr,
                                                            &fx->ops);

    assert_int_equal(a, ENGINE_GC_SAME_FRAME);
    assert_int_equal(fx->gc.collects, 1);
    assert_true(fx->sched.time_since_last_purge == 1000.0);
}

static void test_a_second_call_in_a_frame_still_continues_a_pending_mark(void **state)
{
    fixture *fx = *state;

    fx->fr.frame = 7;
    engine_conditional_collect_garbage(&fx->sched, &fx->cfg, &fx->fr, &fx->ops);
    fx->gc.reach_pending = true;

    engine_gc_action a = engine_conditional_collect_garbage(&fx->sched, &fx->cfg, &fx->fr,
                                                            &fx->ops);

    assert_int_equal(a, ENGINE_GC_REACHABILITY_STEP);
    assert_int_equal(fx->gc.reach_steps, 1);
}

static void test_a_delayed_frame_skips_once_then_collects(void **state)
{
    fixture *fx = *state;

    run_frames(fx, 60, 1.0);
    engine_gc_delay(&fx->sched);

    assert_int_equal(run_frames(fx, 1, 1.0), ENGINE_GC_DELAYED);
    assert_int_equal(fx->gc.collects, 0);
    assert_int_equal(run_frames(fx, 1, 1.0), ENGINE_GC_COLLECT);
    assert_int_equal(fx->gc.collects, 1);
}

/* ---- forcing ------------------------------------------------------------------------ */

static void test_a_forced_full_purge_runs_on_the_next_frame_with_cleanup(void **state)
{
    fixture *fx = *state;

    engine_gc_force(&fx->sched, &fx->cfg, &fx->fr, true);

    engine_gc_action a = run_frames(fx, 1, 0.01);

    assert_int_equal(a, ENGINE_GC_FORCED_FULL_PURGE);
    assert_int_equal(fx->gc.full_purges, 1);
    assert_int_equal(fx->gc.cleanups, 1);
    assert_false(fx->sched.full_purge_triggered);
    assert_true(fx->sched.time_since_last_purge == 0.0);
}

static void test_a_forced_full_purge_runs_even_before_play_begins(void **state)
{
    fixture *fx = *state;

    fx->fr.any_world_begun_play = false;
    engine_gc_force(&fx->sched, &fx->cfg, &fx->fr, true);

    run_frames(fx, 1, 0.01);

    assert_int_equal(fx->gc.full_purges, 1);
}

static void test_a_forced_full_purge_refused_by_the_gc_lock_stays_requested(void **state)
{
    fixture *fx = *state;

    engine_gc_force(&fx->sched, &fx->cfg, &fx->fr, true);
    fx->gc.refuse = true;
    run_frames(fx, 3, 0.01);
    assert_int_equal(fx->gc.refusals, 3);
    assert_true(fx->sched.full_purge_triggered);

    fx->gc.refuse = false;
    run_frames(fx, 1, 0.01);

    assert_int_equal(fx->gc.full_purges, 1);
    assert_false(fx->sched.full_purge_triggered);
}

static void test_a_forced_incremental_collection_waits_only_for_the_next_frame(void **state)
{
    fixture *fx = *state;

    engine_gc_force(&fx->sched, &fx->cfg, &fx->fr, false);

    engine_gc_action a = run_frames(fx, 1, 0.01);

    assert_int_equal(a, ENGINE_GC_COLLECT);
    assert_int_equal(fx->gc.collects, 1);
    assert_int_equal(fx->gc.full_purges, 0);
}

static void test_collect_garbage_every_frame_forces_a_full_purge_every_nth_frame(void **state)
{
    fixture *fx = *state;

    fx->cfg.collect_every_frame = 5;

    run_frames(fx, 20, 0.01);

    /* Frames 5, 10, 15 and 20 request one; each runs on the frame after. */
    assert_int_equal(fx->gc.full_purges, 3);
    assert_true(fx->sched.full_purge_triggered);
}

static void test_continuous_incremental_gc_collects_whenever_nothing_is_pending(void **state)
{
    fixture *fx = *state;

    fx->cfg.continuous_incremental = true;

    run_frames(fx, 10, 0.01);

    /* Frame 1 requests, frame 2 collects and requests again, ... */
    assert_int_equal(fx->gc.collects, 9);
    assert_int_equal(fx->gc.full_purges, 0);
}

static void test_continuous_incremental_gc_waits_while_a_purge_is_pending(void **state)
{
    fixture *fx = *state;

    fx->cfg.continuous_incremental = true;
    fx->gc.collect_leaves_purge_pending = true;

    run_frames(fx, 10, 0.01);

    /* Frame 1 requests; frame 2 collects; every other frame advances the purge. */
    assert_int_equal(fx->gc.collects, 1);
    assert_int_equal(fx->gc.purge_steps, 9);
}

/* ---- frame-slack pacing ------------------------------------------------------------------ */

/* A 32 ms frame whose net, world and replication took `work` seconds, with pacing on. */
static void pace(fixture *fx, double work, double predicted)
{
    fx->cfg.frame_slack_pacing = true;
    fx->fr.work_seconds = work;
    fx->fr.predicted_work_seconds = predicted;
}

static void test_without_pacing_slices_keep_ues_fixed_limits_whatever_the_slack(void **state)
{
    fixture *fx = *state;

    fx->fr.work_seconds = 0.001;
    fx->gc.purge_pending = true;
    run_frames(fx, 1, 1.0);
    fx->gc.purge_pending = false;
    fx->gc.reach_pending = true;
    run_frames(fx, 1, 1.0);

    assert_true(fx->gc.last_purge_budget == 0.002);
    assert_int_equal(fx->gc.time_limit_calls, 0);
    assert_true(fx->sched.budget == 0);
}

static void test_without_pacing_nothing_starts_before_the_interval(void **state)
{
    fixture *fx = *state;

    fx->fr.work_seconds = 0.001;

    run_frames(fx, 60, 1.0);

    assert_int_equal(fx->gc.collects, 0);
    assert_int_equal(fx->sched.early_starts, 0);
}

static void test_pacing_gives_a_purge_the_frames_slack_minus_the_margin(void **state)
{
    fixture *fx = *state;

    pace(fx, 0.010, 0.008);
    fx->gc.purge_pending = true;

    run_frames(fx, 1, 1.0);

    assert_float_equal(fx->gc.last_purge_budget, 0.032 - 0.010 - 0.004, 1e-12);
    assert_float_equal(fx->sched.budget, 0.018, 1e-12);
}

static void test_pacing_plans_for_the_larger_of_this_frames_work_and_the_prediction(
    void **state)
{
    fixture *fx = *state;

    pace(fx, 0.003, 0.012);
    fx->gc.purge_pending = true;

    run_frames(fx, 1, 1.0);

    assert_float_equal(fx->gc.last_purge_budget, 0.032 - 0.012 - 0.004, 1e-12);
}

static void test_pacing_never_gives_a_purge_less_than_ues_fixed_limit(void **state)
{
    fixture *fx = *state;

    pace(fx, 0.031, 0.031);
    fx->gc.purge_pending = true;

    run_frames(fx, 1, 1.0);

    assert_true(fx->gc.last_purge_budget == 0.002);
}

static void test_pacing_gives_a_mark_slice_the_slack_and_never_less_than_ues_mark_limit(
    void **state)
{
    fixture *fx = *state;

    pace(fx, 0.006, 0);
    fx->gc.reach_pending = true;
    run_frames(fx, 1, 1.0);
    assert_float_equal(fx->gc.last_time_limit, 0.032 - 0.006 - 0.004, 1e-12);

    fx->fr.work_seconds = 0.030;
    run_frames(fx, 1, 1.0);

    assert_true(fx->gc.last_time_limit == 0.005);
    assert_int_equal(fx->gc.reach_steps, 2);
}

static void test_pacing_sets_the_mark_limit_before_a_collection_starts(void **state)
{
    fixture *fx = *state;

    pace(fx, 0.030, 0.030);

    run_frames(fx, 61, 1.0);

    assert_int_equal(fx->gc.collects, 1);
    assert_int_equal(fx->gc.time_limit_calls, 1);
    assert_true(fx->gc.last_time_limit == 0.005);
}

static void test_pacing_starts_the_collection_early_when_the_slack_is_large(void **state)
{
    fixture *fx = *state;

    pace(fx, 0.004, 0.004);
    engine_gc_action before = run_frames(fx, 58, 1.0);
    assert_int_equal(fx->gc.collects, 0);

    engine_gc_action a = run_frames(fx, 1, 1.0);

    assert_int_equal(before, ENGINE_GC_PURGE_STEP);
    assert_int_equal(a, ENGINE_GC_EARLY_COLLECT);
    assert_int_equal(fx->gc.collects, 1);
    assert_int_equal(fx->gc.cleanups, 1);
    assert_int_equal(fx->sched.early_starts, 1);
    assert_true(fx->sched.time_since_last_purge == 0);
}

static void test_pacing_never_starts_early_in_a_busy_frame_and_the_interval_still_rules(
    void **state)
{
    fixture *fx = *state;

    pace(fx, 0.020, 0.020); /* slack 8 ms: less than twice the 5 ms mark limit */
    run_frames(fx, 60, 1.0);
    assert_int_equal(fx->gc.collects, 0);

    engine_gc_action a = run_frames(fx, 1, 1.0);

    assert_int_equal(a, ENGINE_GC_COLLECT);
    assert_int_equal(fx->gc.collects, 1);
    assert_int_equal(fx->sched.early_starts, 0);
}

static void test_pacing_never_starts_early_while_a_purge_is_pending(void **state)
{
    fixture *fx = *state;

    pace(fx, 0.001, 0.001);
    fx->gc.purge_pending = true;

    run_frames(fx, 200, 1.0);

    assert_int_equal(fx->gc.collects, 0);
}

static void test_pacing_keeps_the_idle_multiplier_as_the_latest_moment(void **state)
{
    fixture *fx = *state;

    pace(fx, 0.030, 0.030);
    fx->fr.players_connected = false;

    run_frames(fx, 600, 1.0);
    assert_int_equal(fx->gc.collects, 0);
    run_frames(fx, 1, 1.0);

    assert_int_equal(fx->gc.collects, 1);
}

static void test_a_collection_spanning_frames_reports_its_frames_and_lateness(void **state)
{
    fixture *fx = *state;

    fx->gc.collect_mark_steps = 3;
    run_frames(fx, 61, 1.0); /* starts 1 s after UE's moment (the interval is 60 s) */
    assert_true(fx->sched.tracking);

    run_frames(fx, 3, 1.0);

    assert_false(fx->sched.tracking);
    assert_int_equal(fx->sched.finished, 1);
    assert_int_equal(fx->sched.last_frames, 4);
    assert_float_equal(fx->sched.last_seconds, 3.0, 1e-12);
    assert_float_equal(fx->sched.last_late_seconds, 4.0, 1e-12);
}

static void test_an_early_paced_collection_ends_before_ues_moment(void **state)
{
    fixture *fx = *state;

    pace(fx, 0.002, 0.002);
    fx->gc.collect_mark_steps = 1;

    run_frames(fx, 60, 1.0); /* starts at 59 s, ends at 60 s */

    assert_int_equal(fx->sched.finished, 1);
    assert_int_equal(fx->sched.last_frames, 2);
    assert_float_equal(fx->sched.last_late_seconds, 0.0, 1e-12);
    assert_true(fx->sched.last_late_seconds <= 0);
}

static void test_the_early_lead_grows_with_the_last_collections_length(void **state)
{
    fixture *fx = *state;

    pace(fx, 0.002, 0.002);
    fx->gc.collect_mark_steps = 5;
    run_frames(fx, 59 + 5, 1.0); /* the first: early at 59 s, 5 s long */
    assert_float_equal(fx->sched.last_seconds, 5.0, 1e-12);
    int first = fx->gc.collects;

    /* 51 s after it started: past 60 - 2 * 5 s, still short of 60 - ENGINE_GC_EARLY_LEAD_MIN. */
    run_frames(fx, 46, 1.0);

    assert_int_equal(first, 1);
    assert_int_equal(fx->gc.collects, 2);
    assert_int_equal(fx->sched.early_starts, 2);
}

/* ---- the slack prediction ---------------------------------------------------------------- */

static void test_the_slack_prediction_is_zero_before_any_frame(void **state)
{
    engine_gc_slack w;
    (void)state;

    engine_gc_slack_init(&w);

    assert_true(engine_gc_slack_predict(&w) == 0);
}

static void test_the_slack_prediction_is_the_worst_of_the_recent_frames(void **state)
{
    engine_gc_slack w;
    (void)state;
    engine_gc_slack_init(&w);

    engine_gc_slack_observe(&w, 0.003);
    engine_gc_slack_observe(&w, 0.009);
    engine_gc_slack_observe(&w, 0.004);

    assert_true(engine_gc_slack_predict(&w) == 0.009);
}

static void test_a_heavy_frame_leaves_the_prediction_after_the_window(void **state)
{
    engine_gc_slack w;
    (void)state;
    engine_gc_slack_init(&w);
    engine_gc_slack_observe(&w, 0.020);

    for (int i = 0; i < ENGINE_GC_SLACK_FRAMES; i++)
        engine_gc_slack_observe(&w, 0.002);

    assert_true(engine_gc_slack_predict(&w) == 0.002);
}

/* ---- streaming levels (UE UWorld::UpdateLevelStreaming's requests) ---------------------- */

/* One frame as the engine runs it: the streaming rules, then the schedule. */
static engine_gc_action streaming_frame(fixture *fx, uint32_t pending, uint32_t *seen)
{
    fx->fr.frame++;
    fx->fr.delta_seconds = 0.01;
    fx->fr.levels_pending_purge = pending;
    engine_gc_streaming_rules(&fx->sched, &fx->cfg, &fx->fr, seen);
    return engine_conditional_collect_garbage(&fx->sched, &fx->cfg, &fx->fr, &fx->ops);
}

static void test_a_level_streamed_out_forces_a_full_purge_at_the_next_call(void **state)
{
    fixture *fx = *state;
    uint32_t seen = 0;

    fx->cfg.force_after_level_streamed_out = true;
    assert_int_equal(streaming_frame(fx, 0, &seen), ENGINE_GC_PURGE_STEP);

    assert_int_equal(streaming_frame(fx, 1, &seen), ENGINE_GC_FORCED_FULL_PURGE);

    assert_int_equal(fx->gc.full_purges, 1);
    assert_int_equal(fx->sched.by_reason[ENGINE_GC_REASON_STREAMING], 1);
}

static void test_a_pending_count_that_stays_or_falls_forces_nothing(void **state)
{
    fixture *fx = *state;
    uint32_t seen = 0;

    fx->cfg.force_after_level_streamed_out = true;
    streaming_frame(fx, 2, &seen);
    assert_int_equal(fx->gc.full_purges, 1);

    streaming_frame(fx, 2, &seen);
    streaming_frame(fx, 1, &seen);

    assert_int_equal(fx->gc.full_purges, 1);
    assert_int_equal(fx->gc.collects, 1);
}

static void test_without_forced_gc_a_stream_out_waits_for_the_interval(void **state)
{
    fixture *fx = *state;
    uint32_t seen = 0;

    fx->cfg.force_after_level_streamed_out = false;

    streaming_frame(fx, 1, &seen);

    assert_int_equal(fx->gc.collects, 0);
}

static void test_ues_stream_out_purge_blocks_even_with_incremental_reachability(void **state)
{
    fixture *fx = *state;
    uint32_t seen = 0;

    fx->cfg.force_after_level_streamed_out = true;
    fx->cfg.incremental_reachability = true;
    fx->cfg.sliced_after_level_streamed_out = false;

    assert_int_equal(streaming_frame(fx, 1, &seen), ENGINE_GC_FORCED_FULL_PURGE);
    assert_int_equal(fx->gc.full_purges, 1);
}

static void test_a_sliced_stream_out_collection_marks_in_slices(void **state)
{
    fixture *fx = *state;
    uint32_t seen = 0;

    fx->cfg.force_after_level_streamed_out = true;
    fx->cfg.incremental_reachability = true;
    fx->cfg.sliced_after_level_streamed_out = true;
    fx->gc.collect_mark_steps = 2;

    assert_int_equal(streaming_frame(fx, 1, &seen), ENGINE_GC_COLLECT);
    assert_int_equal(fx->gc.full_purges, 0);
    assert_true(fx->gc.reach_pending);
    assert_int_equal(streaming_frame(fx, 1, &seen), ENGINE_GC_REACHABILITY_STEP);

    assert_int_equal(fx->sched.by_reason[ENGINE_GC_REASON_STREAMING], 1);
}

static void test_pacing_slices_a_stream_out_collection_too(void **state)
{
    fixture *fx = *state;
    uint32_t seen = 0;

    fx->cfg.force_after_level_streamed_out = true;
    fx->cfg.frame_slack_pacing = true;
    fx->cfg.sliced_after_level_streamed_out = true;

    assert_int_equal(streaming_frame(fx, 1, &seen), ENGINE_GC_COLLECT);
    assert_int_equal(fx->gc.full_purges, 0);
    assert_int_equal(fx->gc.time_limit_calls, 1); /* the mark got pacing's budget */
}

static void test_enough_levels_pending_force_a_soft_collection(void **state)
{
    fixture *fx = *state;
    uint32_t seen = 0;

    fx->cfg.force_after_level_streamed_out = false;
    fx->cfg.soft_collect_levels_pending = 2;
    streaming_frame(fx, 1, &seen);
    assert_int_equal(fx->gc.collects, 0);

    assert_int_equal(streaming_frame(fx, 2, &seen), ENGINE_GC_COLLECT);

    assert_int_equal(fx->gc.full_purges, 0);
    assert_int_equal(fx->sched.by_reason[ENGINE_GC_REASON_PENDING_PURGE], 1);
}

static void test_low_memory_with_levels_pending_uses_the_pending_levels_interval(void **state)
{
    fixture *fx = *state;

    fx->cfg.low_memory_threshold_mb = 512;
    fx->cfg.low_memory_time_between_purging = 30;
    fx->cfg.low_memory_time_between_purging_levels = 15;
    fx->fr.free_memory_mb = 100;
    assert_true(engine_gc_interval(&fx->cfg, &fx->fr) == 30);

    fx->fr.levels_pending_purge = 1;
    assert_true(engine_gc_interval(&fx->cfg, &fx->fr) == 15);

    fx->fr.free_memory_mb = 1000; /* memory is fine again: levels change nothing */
    assert_true(engine_gc_interval(&fx->cfg, &fx->fr) == 60);
}

static void test_collections_are_counted_by_what_started_them(void **state)
{
    fixture *fx = *state;

    run_frames(fx, 1, 61);                 /* the interval */
    engine_gc_force(&fx->sched, &fx->cfg, &fx->fr, true);
    run_frames(fx, 1, 0.01);               /* forced */
    fx->cfg.low_memory_threshold_mb = 512;
    fx->fr.free_memory_mb = 100;
    run_frames(fx, 1, 31);                 /* the low-memory interval */
    engine_gc_count(&fx->sched, ENGINE_GC_REASON_CONSOLE);

    assert_int_equal(fx->sched.by_reason[ENGINE_GC_REASON_INTERVAL], 1);
    assert_int_equal(fx->sched.by_reason[ENGINE_GC_REASON_FORCED], 1);
    assert_int_equal(fx->sched.by_reason[ENGINE_GC_REASON_LOW_MEMORY], 1);
    assert_int_equal(fx->sched.by_reason[ENGINE_GC_REASON_CONSOLE], 1);
    assert_string_equal(engine_gc_reason_name(ENGINE_GC_REASON_PENDING_PURGE), "pending_purge");
}

static void test_a_streaming_collection_is_not_measured_against_ues_schedule(void **state)
{
    fixture *fx = *state;
    uint32_t seen = 0;

    fx->cfg.force_after_level_streamed_out = true;
    fx->cfg.incremental_reachability = true;
    fx->cfg.sliced_after_level_streamed_out = true;

    streaming_frame(fx, 1, &seen);

    assert_false(fx->sched.tracking);
}

static void test_pacing_gives_streaming_adds_half_the_slack_left_by_other_work(void **state)
{
    fixture *fx = *state;

    fx->cfg.frame_slack_pacing = true;
    fx->cfg.frame_period = 0.0333;
    fx->cfg.frame_slack_margin = 0.004;

    /* 33.3 ms, 3.3 ms of other work, a 4 ms margin: half of 26 ms */
    assert_true(fabs(engine_gc_streaming_budget(&fx->cfg, 0.0033, 0.005) - 0.013) < 1e-9);
    /* a busy frame: never below s.LevelStreamingActorsUpdateTimeLimit */
    assert_true(engine_gc_streaming_budget(&fx->cfg, 0.030, 0.005) == 0.005);
    /* a limit of 0 is no limit, pacing or not */
    assert_true(engine_gc_streaming_budget(&fx->cfg, 0.0033, 0) < 0);
    fx->cfg.frame_slack_pacing = false;
    assert_true(engine_gc_streaming_budget(&fx->cfg, 0.0033, 0.005) < 0);
}

/* Pacing slices a collection's mark and its gather in the frame's slack: with
 * gc.FrameSlackPacing=1 both are allowed to stop, whatever their own cvars say; without it
 * UE's settings stand (neither by default). */
static void test_pacing_lets_the_mark_and_the_gather_stop(void **state)
{
    cvar_registry cv;
    gc_settings s;
    char err[256];

    (void)state;
    cvar_registry_init(&cv);
    engine_settings_from_cvars(&cv, &s);
    assert_false(s.allow_incremental_reachability);
    assert_false(s.allow_incremental_gather);
    assert_int_equal(cvar_set(&cv, "gc.FrameSlackPacing", "1", CVAR_SOURCE_CONSOLE, err,
                              sizeof err), CVAR_OK);
    engine_settings_from_cvars(&cv, &s);
    assert_true(s.allow_incremental_reachability);
    assert_true(s.allow_incremental_gather);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pacing_lets_the_mark_and_the_gather_stop),
        cmocka_unit_test_setup(test_interval_is_the_base_interval_while_players_are_connected, setup),
        cmocka_unit_test_setup(test_idle_dedicated_server_multiplies_the_interval, setup),
        cmocka_unit_test_setup(test_a_server_that_is_not_dedicated_never_multiplies_the_interval, setup),
        cmocka_unit_test_setup(test_low_memory_uses_the_low_memory_interval_when_shorter, setup),
        cmocka_unit_test_setup(test_low_memory_keeps_the_interval_when_it_is_already_shorter, setup),
        cmocka_unit_test_setup(test_low_memory_compares_against_the_idle_multiplied_interval, setup),
        cmocka_unit_test_setup(test_a_zero_low_memory_interval_counts_as_off, setup),
        cmocka_unit_test_setup(test_enough_free_memory_keeps_the_normal_interval, setup),
        cmocka_unit_test_setup(test_low_memory_rule_is_off_when_the_threshold_is_zero, setup),
        cmocka_unit_test_setup(test_unknown_free_memory_never_triggers_the_low_memory_interval, setup),
        cmocka_unit_test_setup(test_the_schedule_reports_the_interval_in_force_each_frame, setup),
        cmocka_unit_test_setup(test_nothing_happens_before_any_world_has_begun_play, setup),
        cmocka_unit_test_setup(test_no_collection_before_the_interval_has_passed, setup),
        cmocka_unit_test_setup(test_a_collection_runs_once_the_interval_has_passed, setup),
        cmocka_unit_test_setup(test_an_idle_server_collects_ten_times_less_often, setup),
        cmocka_unit_test_setup(test_the_timer_restarts_after_a_collection, setup),
        cmocka_unit_test_setup(test_cleanup_actors_runs_after_every_collection, setup),
        cmocka_unit_test_setup(test_a_collection_with_a_game_world_leaves_the_purge_incremental, setup),
        cmocka_unit_test_setup(test_a_collection_without_a_game_world_is_a_full_purge, setup),
        cmocka_unit_test_setup(test_a_zero_interval_never_collects, setup),
        cmocka_unit_test_setup(test_a_refused_collection_is_retried_next_frame_without_resetting_the_timer, setup),
        cmocka_unit_test_setup(test_a_pending_purge_advances_within_the_frame_budget, setup),
        cmocka_unit_test_setup(test_a_pending_purge_postpones_the_next_collection, setup),
        cmocka_unit_test_setup(test_a_pending_incremental_mark_continues_instead_of_collecting, setup),
        cmocka_unit_test_setup(test_the_schedule_acts_at_most_once_per_frame, setup),
        cmocka_unit_test_setup(test_a_second_call_in_a_frame_still_continues_a_pending_mark, setup),
        cmocka_unit_test_setup(test_a_delayed_frame_skips_once_then_collects, setup),
        cmocka_unit_test_setup(test_a_forced_full_purge_runs_on_the_next_frame_with_cleanup, setup),
        cmocka_unit_test_setup(test_a_forced_full_purge_runs_even_before_play_begins, setup),
        cmocka_unit_test_setup(test_a_forced_full_purge_refused_by_the_gc_lock_stays_requested, setup),
        cmocka_unit_test_setup(test_a_forced_incremental_collection_waits_only_for_the_next_frame, setup),
        cmocka_unit_test_setup(test_collect_garbage_every_frame_forces_a_full_purge_every_nth_frame, setup),
        cmocka_unit_test_setup(test_continuous_incremental_gc_collects_whenever_nothing_is_pending, setup),
        cmocka_unit_test_setup(test_continuous_incremental_gc_waits_while_a_purge_is_pending, setup),
        cmocka_unit_test_setup(test_without_pacing_slices_keep_ues_fixed_limits_whatever_the_slack, setup),
        cmocka_unit_test_setup(test_without_pacing_nothing_starts_before_the_interval, setup),
        cmocka_unit_test_setup(test_pacing_gives_a_purge_the_frames_slack_minus_the_margin, setup),
        cmocka_unit_test_setup(test_pacing_plans_for_the_larger_of_this_frames_work_and_the_prediction, setup),
        cmocka_unit_test_setup(test_pacing_never_gives_a_purge_less_than_ues_fixed_limit, setup),
        cmocka_unit_test_setup(test_pacing_gives_a_mark_slice_the_slack_and_never_less_than_ues_mark_limit, setup),
        cmocka_unit_test_setup(test_pacing_sets_the_mark_limit_before_a_collection_starts, setup),
        cmocka_unit_test_setup(test_pacing_starts_the_collection_early_when_the_slack_is_large, setup),
        cmocka_unit_test_setup(test_pacing_never_starts_early_in_a_busy_frame_and_the_interval_still_rules, setup),
        cmocka_unit_test_setup(test_pacing_never_starts_early_while_a_purge_is_pending, setup),
        cmocka_unit_test_setup(test_pacing_keeps_the_idle_multiplier_as_the_latest_moment, setup),
        cmocka_unit_test_setup(test_a_collection_spanning_frames_reports_its_frames_and_lateness, setup),
        cmocka_unit_test_setup(test_an_early_paced_collection_ends_before_ues_moment, setup),
        cmocka_unit_test_setup(test_the_early_lead_grows_with_the_last_collections_length, setup),
        cmocka_unit_test_setup(test_the_slack_prediction_is_zero_before_any_frame, setup),
        cmocka_unit_test_setup(test_the_slack_prediction_is_the_worst_of_the_recent_frames, setup),
        cmocka_unit_test_setup(test_a_heavy_frame_leaves_the_prediction_after_the_window, setup),
        cmocka_unit_test_setup(test_a_level_streamed_out_forces_a_full_purge_at_the_next_call, setup),
        cmocka_unit_test_setup(test_a_pending_count_that_stays_or_falls_forces_nothing, setup),
        cmocka_unit_test_setup(test_without_forced_gc_a_stream_out_waits_for_the_interval, setup),
        cmocka_unit_test_setup(test_ues_stream_out_purge_blocks_even_with_incremental_reachability, setup),
        cmocka_unit_test_setup(test_a_sliced_stream_out_collection_marks_in_slices, setup),
        cmocka_unit_test_setup(test_pacing_slices_a_stream_out_collection_too, setup),
        cmocka_unit_test_setup(test_enough_levels_pending_force_a_soft_collection, setup),
        cmocka_unit_test_setup(test_low_memory_with_levels_pending_uses_the_pending_levels_interval, setup),
        cmocka_unit_test_setup(test_collections_are_counted_by_what_started_them, setup),
        cmocka_unit_test_setup(test_a_streaming_collection_is_not_measured_against_ues_schedule, setup),
        cmocka_unit_test_setup(test_pacing_gives_streaming_adds_half_the_slack_left_by_other_work, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
