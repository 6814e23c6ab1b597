/*
 * test_engine_travel.c - the travel state machine (engine_travel.c) on a fake clock with fake
 * worlds: UE's order of a hard travel and of a seamless one (a full collection on each hop,
 * then the leak check), the sliced mode's one phase of work per frame within the budget, the
 * leak check only once the collections are complete, the four severities (3 stops the
 * server), a travel during a travel refused with its reason, phase times and the total.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "engine_travel.h"

typedef struct fake {
    char calls[1024];         /* "depart(hard) end_play collect ..." */
    char log[4096];
    double clock;
    double op_seconds;        /* each step moves the clock on by this */
    uint32_t load_steps, end_play_steps, collect_steps; /* calls each needs to finish */
    uint32_t loads, end_plays, collects;
    double last_limit;
    uint32_t leaks;           /* what verify finds */
    int trace_mode;
    uint32_t fatal;
} fake;

static void call(fake *f, const char *what)
{
    size_t n = strlen(f->calls);

    snprintf(f->calls + n, sizeof f->calls - n, "%s%s", n > 0 ? " " : "", what);
    f->clock += f->op_seconds;
}

static void depart_cb(void *ctx, engine_travel_mode mode, const char *map)
{
    char s[64];

    snprintf(s, sizeof s, "depart(%s,%s)", engine_travel_mode_name(mode), map);
    call(ctx, s);
}

static bool load_step_cb(void *ctx, const char *map, bool transition, double time_limit)
{
    fake *f = ctx;
    char s[64];

    f->last_limit = time_limit;
    snprintf(s, sizeof s, "load(%s%s)", map, transition ? ",transition" : "");
    call(f, s);
    if (++f->loads < f->load_steps)
        return false;
    f->loads = 0;
    return true;
}

static void enter_cb(void *ctx, engine_travel_mode mode)
{
    (void)mode;
    call(ctx, "enter");
}

static bool end_play_step_cb(void *ctx, double time_limit)
{
    fake *f = ctx;

    f->last_limit = time_limit;
    call(f, "end_play");
    if (++f->end_plays < f->end_play_steps)
        return false;
    f->end_plays = 0;
    return true;
}

static bool collect_step_cb(void *ctx, double time_limit)
{
    fake *f = ctx;

    f->last_limit = time_limit;
    call(f, "collect");
    if (++f->collects < f->collect_steps)
        return false;
    f->collects = 0;
    return true;
}

static uint32_t verify_cb(void *ctx, int trace_mode)
{
    fake *f = ctx;

    f->trace_mode = trace_mode;
    call(f, "verify");
    return f->leaks;
}

static void arrive_cb(void *ctx, engine_travel_mode mode, const char *map)
{
    (void)mode;
    (void)map;
    call(ctx, "arrive");
}

static void fatal_cb(void *ctx, uint32_t leaked)
{
    fake *f = ctx;

    f->fatal = leaked;
    call(f, "fatal");
}

static void log_cb(void *ctx, const char *line)
{
    fake *f = ctx;
    size_t n = strlen(f->log);

    snprintf(f->log + n, sizeof f->log - n, "%s\n", line);
}

static double clock_cb(void *ctx)
{
    return ((fake *)ctx)->clock;
}

static engine_travel_ops ops_for(fake *f)
{
    engine_travel_ops ops = { f, depart_cb, load_step_cb, enter_cb, end_play_step_cb,
                              collect_step_cb, verify_cb, arrive_cb, fatal_cb, log_cb,
                              clock_cb };
    return ops;
}

static void fake_init(fake *f)
{
    memset(f, 0, sizeof *f);
    f->load_steps = f->end_play_steps = f->collect_steps = 1;
}

static const engine_travel_config blocking = { 2, 1, false };
static const engine_travel_config sliced = { 2, 1, true };

static void start(engine_travel *t, const engine_travel_config *cfg, engine_travel_mode mode,
                  fake *f)
{
    char reason[256];

    engine_travel_init(t, "Transition");
    assert_true(engine_travel_start(t, cfg, mode, "Default", "Arena", f->clock, reason,
                                    sizeof reason));
}

static void test_a_hard_travel_runs_ue_loadmap_order_in_one_call(void **state)
{
    engine_travel t;
    fake f;
    engine_travel_ops ops;

    (void)state;
    fake_init(&f);
    ops = ops_for(&f);
    start(&t, &blocking, ENGINE_TRAVEL_HARD, &f);

    assert_int_equal(engine_travel_tick(&t, 0.02, &ops), ENGINE_TRAVEL_IDLE);

    assert_string_equal(f.calls, "depart(hard,Arena) end_play collect verify load(Arena) enter "
                                 "arrive");
    assert_float_equal(f.last_limit, 0, 0);
    assert_non_null(strstr(f.log, "LoadMap: Arena (hard travel from Default)\n"));
    assert_non_null(strstr(f.log, "seconds to LoadMap(Arena)\n"));
    assert_int_equal(t.travels[ENGINE_TRAVEL_HARD], 1);
    assert_int_equal(t.last.frames, 1);
}

static void test_a_seamless_travel_collects_on_each_hop_then_checks_for_leaks(void **state)
{
    engine_travel t;
    fake f;
    engine_travel_ops ops;

    (void)state;
    fake_init(&f);
    ops = ops_for(&f);
    start(&t, &blocking, ENGINE_TRAVEL_SEAMLESS, &f);

    assert_int_equal(engine_travel_tick(&t, 0.02, &ops), ENGINE_TRAVEL_IDLE);

    assert_string_equal(f.calls, "depart(seamless,Arena) load(Transition,transition) enter "
                                 "end_play collect load(Arena) enter end_play collect verify "
                                 "arrive");
    assert_non_null(strstr(f.log, "SeamlessTravel to: Arena (from Default, through "
                                  "Transition)\n"));
    assert_non_null(strstr(f.log, "----SeamlessTravel finished in "));
    assert_int_equal(t.travels[ENGINE_TRAVEL_SEAMLESS], 1);
}

static void test_a_sliced_travel_does_one_phase_of_work_per_frame_within_the_budget(void **state)
{
    engine_travel t;
    fake f;
    engine_travel_ops ops;
    uint32_t frames = 0;

    (void)state;
    fake_init(&f);
    f.end_play_steps = 3;
    f.collect_steps = 4;
    f.load_steps = 2;
    ops = ops_for(&f);
    start(&t, &sliced, ENGINE_TRAVEL_HARD, &f);

    while (engine_travel_tick(&t, 0.025, &ops) != ENGINE_TRAVEL_IDLE) {
        frames++;
        assert_true(frames < 100);
        assert_float_equal(f.last_limit, 0.025, 1e-12);
    }

    /* 3 frames of end of play, 4 of collection, then the check and 2 of load; the arrival
     * on the frame after. */
    assert_int_equal(t.last.frames, 3 + 4 + 2 + 1);
    assert_string_equal(f.calls, "depart(hard,Arena) end_play end_play end_play collect collect "
                                 "collect collect verify load(Arena) load(Arena) enter arrive");
}

static void test_the_leak_check_waits_for_the_collections_to_complete(void **state)
{
    engine_travel t;
    fake f;
    engine_travel_ops ops;

    (void)state;
    fake_init(&f);
    f.collect_steps = 5;
    ops = ops_for(&f);
    start(&t, &sliced, ENGINE_TRAVEL_SEAMLESS, &f);

    /* depart and the transition's load, its end of play, three of five collect steps */
    for (int i = 0; i < 5; i++)
        engine_travel_tick(&t, 0.02, &ops);
    assert_null(strstr(f.calls, "verify"));
    assert_int_equal(t.phase, ENGINE_TRAVEL_COLLECT);
    assert_int_equal(t.hop, 1);

    while (engine_travel_tick(&t, 0.02, &ops) != ENGINE_TRAVEL_IDLE)
        ;
    /* verify comes right after the fifth collect step of the second hop. */
    assert_non_null(strstr(f.calls, "collect collect collect collect collect verify arrive"));
}

static void test_a_travel_during_a_travel_is_refused_with_its_reason(void **state)
{
    engine_travel t;
    fake f;
    engine_travel_ops ops;
    char reason[256];

    (void)state;
    fake_init(&f);
    f.collect_steps = 3;
    ops = ops_for(&f);
    start(&t, &sliced, ENGINE_TRAVEL_SEAMLESS, &f);
    engine_travel_tick(&t, 0.02, &ops);

    assert_false(engine_travel_start(&t, &sliced, ENGINE_TRAVEL_HARD, "Arena", "Lobby", 0,
                                     reason, sizeof reason));

    assert_string_equal(reason, "a seamless travel to Arena is under way (end_play, hop 1 of 2); "
                                "try again once it has finished");
    assert_int_equal(t.refused, 1);
    assert_string_equal(t.map, "Arena");
}

static void run_with_severity(fake *f, engine_travel *t, int severity, uint32_t leaks)
{
    engine_travel_config cfg = { severity, 0, false };
    engine_travel_ops ops;

    fake_init(f);
    f->leaks = leaks;
    ops = ops_for(f);
    start(t, &cfg, ENGINE_TRAVEL_HARD, f);
    engine_travel_tick(t, 0.02, &ops);
}

static void test_severity_0_does_not_check_1_reports_2_counts_3_stops(void **state)
{
    engine_travel t;
    fake f;
    char reason[256];

    (void)state;
    run_with_severity(&f, &t, 0, 1);
    assert_null(strstr(f.calls, "verify"));
    assert_int_equal(t.leaked_worlds, 0);

    run_with_severity(&f, &t, 1, 1);
    assert_non_null(strstr(f.calls, "collect verify load(Arena)"));
    assert_int_equal(t.last.leaked, 1);
    assert_int_equal(t.leaked_worlds, 0);
    assert_int_equal(f.trace_mode, 0);

    run_with_severity(&f, &t, 2, 2);
    assert_int_equal(t.leaked_worlds, 2);
    assert_string_equal(f.calls + strlen(f.calls) - strlen("arrive"), "arrive");

    run_with_severity(&f, &t, 3, 1);
    assert_string_equal(f.calls, "depart(hard,Arena) end_play collect verify fatal");
    assert_int_equal(f.fatal, 1);
    assert_true(t.stopped);
    assert_int_equal(t.phase, ENGINE_TRAVEL_IDLE);
    assert_false(engine_travel_start(&t, &blocking, ENGINE_TRAVEL_HARD, "Arena", "Lobby", 0,
                                     reason, sizeof reason));
    assert_non_null(strstr(reason, "Severity=3"));
}

static void test_a_clean_severity_3_travel_arrives(void **state)
{
    engine_travel t;
    fake f;

    (void)state;
    run_with_severity(&f, &t, 3, 0);
    assert_string_equal(f.calls, "depart(hard,Arena) end_play collect verify load(Arena) enter "
                                 "arrive");
    assert_false(t.stopped);
    assert_int_equal(f.fatal, 0);
}

/* A sliced seamless travel whose steps take half a second each on f's clock, two collect
 * steps a hop, with `between` seconds of the rest of the frame after each call. */
static void run_half_second_steps(engine_travel *t, fake *f, double between)
{
    engine_travel_ops ops;

    fake_init(f);
    f->op_seconds = 0.5;
    f->collect_steps = 2;
    ops = ops_for(f);
    start(t, &sliced, ENGINE_TRAVEL_SEAMLESS, f);
    while (engine_travel_tick(t, 0.02, &ops) != ENGINE_TRAVEL_IDLE)
        f->clock += between;
}

static void test_phase_times_and_the_total_come_from_the_clock(void **state)
{
    engine_travel t;
    fake f;

    (void)state;
    run_half_second_steps(&t, &f, 0);

    /* Two hops of two collect steps each, 0.5 s a step. */
    assert_float_equal(t.last.phase_seconds[ENGINE_TRAVEL_COLLECT], 4 * 0.5, 1e-9);
    /* 13 operations in all: depart, 2 x (load, enter, end_play, 2 collects), verify, arrive. */
    assert_float_equal(t.last.seconds, 13 * 0.5, 1e-9);
    assert_non_null(strstr(f.log, "travel to Arena: collect (hop 2) took 1.000 s (1.000 s of "
                                  "work in 2 frame(s))\n"));
    assert_non_null(strstr(f.log, "----SeamlessTravel finished in 6.50 seconds ------\n"));
}

/* A sliced phase logs its work beside its wall time: the frames between its steps (the rest
 * of the server's frame, the wait for the next) are not its work. */
static void test_a_sliced_phase_logs_its_work_beside_its_wall_time(void **state)
{
    engine_travel t;
    fake f;

    (void)state;
    run_half_second_steps(&t, &f, 0.25);

    /* Hop 2's collection: a quarter second before each of its two half-second steps. */
    assert_non_null(strstr(f.log, "travel to Arena: collect (hop 2) took 1.500 s (1.000 s of "
                                  "work in 2 frame(s))\n"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_hard_travel_runs_ue_loadmap_order_in_one_call),
        cmocka_unit_test(test_a_seamless_travel_collects_on_each_hop_then_checks_for_leaks),
        cmocka_unit_test(test_a_sliced_travel_does_one_phase_of_work_per_frame_within_the_budget),
        cmocka_unit_test(test_the_leak_check_waits_for_the_collections_to_complete),
        cmocka_unit_test(test_a_travel_during_a_travel_is_refused_with_its_reason),
        cmocka_unit_test(test_severity_0_does_not_check_1_reports_2_counts_3_stops),
        cmocka_unit_test(test_a_clean_severity_3_travel_arrives),
        cmocka_unit_test(test_phase_times_and_the_total_come_from_the_clock),
        cmocka_unit_test(test_a_sliced_phase_logs_its_work_beside_its_wall_time),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
