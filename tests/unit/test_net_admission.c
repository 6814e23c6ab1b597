/*
 * test_net_admission.c - admission control's rules (net_admission.h) over injected frames: the
 * load is the loop's work per frame over the period, before a whole window (or with nobody in)
 * only a slow start paces newcomers,
 * refusing starts at HighLoad and stops only below LowLoad, new players are paced below it (the
 * window's newcomers less its leavers, spread over the window), and the far bands stretch
 * first, one per window, and unwind below LowLoad.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>
#include <math.h>

#include "net_admission.h"

enum { HZ = 30 };

/* Every test's admission control: just initialised, at 30 Hz with the marks below, the clock
 * at 0 (the state is large: it lives on the heap). */
typedef struct fixture {
    net_admission_config cfg;
    net_admission a;
    double now;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);

    if (f == NULL)
        return -1;
    f->cfg = (net_admission_config){
        .enabled = true,
        .high_load = 0.9,
        .low_load = 0.7,
        .stretch_load = 0.8,
        .window_seconds = 1.0,
        .period = 1.0 / HZ,
    };
    net_admission_init(&f->a);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    free(*state);
    return 0;
}

/* Frames on time, each with `load` of its period as work, for `seconds` from now; returns the
 * first event other than NOTHING (or NOTHING). */
static net_admission_event run(fixture *f, double load, double seconds)
{
    net_admission_event first = NET_ADMISSION_NOTHING;
    double end = f->now + seconds - 1e-9;

    while (f->now < end) {
        net_admission_event ev;

        f->now += f->cfg.period;
        ev = net_admission_observe(&f->a, &f->cfg, load * f->cfg.period, f->cfg.period, 0,
                                   f->now);
        if (first == NET_ADMISSION_NOTHING)
            first = ev;
    }
    return first;
}

/* One Hello now, with `players` in. */
static net_admission_verdict admit(fixture *f, uint32_t players)
{
    return net_admission_admit(&f->a, &f->cfg, players, f->now);
}

/* `asking` newcomers, each `gap` seconds after the one before (the first `gap` from now), to
 * a server of `players`, each admitted one counted among the players from then on; returns
 * how many were admitted. */
static uint32_t admit_newcomers(fixture *f, uint32_t players, int asking, double gap)
{
    uint32_t admitted = 0;

    for (int i = 0; i < asking; i++) {
        f->now += gap;
        admitted += admit(f, players + admitted) == NET_ADMIT;
    }
    return admitted;
}

static void test_the_load_is_the_work_per_frame_over_the_period(void **state)
{
    fixture *f = *state;

    run(f, 0.5, 2.0);

    assert_true(f->a.full);
    assert_int_equal(f->a.frames, HZ);
    assert_true(f->a.load > 0.499 && f->a.load < 0.501);
    assert_true(f->a.achieved_hz > HZ - 0.01 && f->a.achieved_hz < HZ + 0.01);
}

static void test_late_frames_of_a_busy_loop_count_above_one(void **state)
{
    fixture *f = *state;

    /* Each frame 40 ms apart and busy all of it: 25 frames/s at 30 Hz. */
    for (int i = 0; i < 60; i++) {
        f->now += 0.040;
        net_admission_observe(&f->a, &f->cfg, 0.040, 0.040, 0, f->now);
    }

    assert_true(f->a.load > 1.19 && f->a.load < 1.21);
    assert_true(f->a.achieved_hz > 24.9 && f->a.achieved_hz < 25.1);
}

/* Newcomers admitted now, one after another, until the first is told to wait; `players` are
 * in, and each admitted one joins them. */
static uint32_t admit_until_paced(fixture *f, uint32_t *players)
{
    uint32_t admitted = 0;

    while (admitted < 10000 && admit(f, *players) == NET_ADMIT) {
        admitted++;
        (*players)++;
    }
    return admitted;
}

static void test_before_a_whole_window_only_a_slow_start_paces_newcomers(void **state)
{
    fixture *f = *state;
    uint32_t players = 0;

    /* Light frames, not yet a whole window: within an eighth of the window,
     * NET_ADMISSION_SLOW_START and as many again as are in, then wait. */
    run(f, 0.3, 0.5);
    assert_false(f->a.full);
    assert_int_equal(admit_until_paced(f, &players), NET_ADMISSION_SLOW_START);
    assert_int_equal(admit(f, players), NET_ADMIT_PACED);
    f->now += f->cfg.window_seconds / 8 + 1e-6;
    assert_int_equal(admit_until_paced(f, &players), 2 * NET_ADMISSION_SLOW_START);

    /* Late frames, still not a whole window: no refusing, no stretch, but nobody more is let
     * in. */
    assert_int_equal(run(f, 1.2, 0.4), NET_ADMISSION_NOTHING);
    assert_false(f->a.full);
    assert_false(f->a.refusing);
    assert_int_equal(f->a.stretch, 0);
    assert_int_equal(admit(f, players), NET_ADMIT_PACED);
}

static void test_an_empty_server_takes_a_crowd_at_a_slow_start(void **state)
{
    fixture *f = *state;
    uint32_t players = 0, eighths = 0;

    run(f, 0.01, 2.0);
    assert_true(f->a.full);

    /* Two thousand at once (a restart, a load test's start): while the window holds nobody
     * but newcomers and the frames stay light, each eighth of it takes NET_ADMISSION_SLOW_START
     * and as many again as are in before it: 256, 512, 1024, and the last 208. */
    assert_int_equal(admit_until_paced(f, &players), NET_ADMISSION_SLOW_START);
    for (eighths = 1; players < 2000 && eighths < 100; eighths++) {
        uint32_t before = players, in = 0;

        f->now += f->cfg.window_seconds / 8 + 1e-6;
        while (players < 2000 && admit(f, players) == NET_ADMIT) {
            in++;
            players++;
        }
        assert_int_equal(in, players < 2000 ? NET_ADMISSION_SLOW_START + before : 2000 - before);
    }
    assert_int_equal(eighths, 4);
}

static void test_a_lightly_loaded_server_of_one_player_takes_a_crowd_at_a_slow_start(void **state)
{
    fixture *f = *state;
    uint32_t players = 1;

    /* One player at 3% of the budget: its load says nothing of a crowd's (its square-law
     * room would be 4 more a window), so newcomers come at the slow start's pace: 256 and as
     * many again as are in (1, then 258) each eighth of the window. */
    run(f, 0.03, 2.0);
    assert_int_equal(admit_until_paced(f, &players), NET_ADMISSION_SLOW_START + 1);
    f->now += f->cfg.window_seconds / 8 + 1e-6;
    assert_int_equal(admit_until_paced(f, &players), NET_ADMISSION_SLOW_START + 258);
}

static void test_refusing_starts_at_the_high_load(void **state)
{
    fixture *f = *state;

    run(f, 0.85, 2.0);
    assert_false(f->a.refusing);

    assert_int_equal(run(f, 0.95, 2.0), NET_ADMISSION_STARTED_REFUSING);

    assert_true(f->a.refusing);
    assert_int_equal(admit(f, 10), NET_ADMIT_BUSY);
    assert_int_equal(f->a.refused_episode, 1);
}

/* Frames `late` of a period apart (1.1: every frame 10% late), each busy `load` of the period,
 * for `seconds`; returns the first event other than NOTHING. */
static net_admission_event run_late(fixture *f, double load, double late, double seconds)
{
    net_admission_event first = NET_ADMISSION_NOTHING;
    double end = f->now + seconds - 1e-9, gap = late * f->cfg.period;

    while (f->now < end) {
        net_admission_event ev;

        f->now += gap;
        ev = net_admission_observe(&f->a, &f->cfg, load * f->cfg.period, gap, 0, f->now);
        if (first == NET_ADMISSION_NOTHING)
            first = ev;
    }
    return first;
}

static void test_frames_lost_between_the_marks_start_refusing_too(void **state)
{
    fixture *f = *state;

    /* Between the marks on time: admitted (at a pace). */
    run(f, 0.8, 2.0);
    assert_false(f->a.refusing);
    /* Between the marks with frames lost (27 frames/s of 30: spikes the average hides). */
    assert_int_equal(run_late(f, 0.8, 1.0 / 0.9, 2.0), NET_ADMISSION_STARTED_REFUSING);
    assert_true(f->a.frames_lost);
    assert_int_equal(admit(f, 10), NET_ADMIT_BUSY);
}

/* On time, each busy `load` of the period, every `every`-th frame's replication budget
 * (net.ReplicationFrameBudget) making `share` of its connections wait, for `seconds`; returns
 * the first event. */
static net_admission_event run_cut(fixture *f, double load, int every, double share,
                                   double seconds)
{
    net_admission_event first = NET_ADMISSION_NOTHING;
    double end = f->now + seconds - 1e-9;

    for (int n = 0; f->now < end; n++) {
        net_admission_event ev;

        f->now += f->cfg.period;
        ev = net_admission_observe(&f->a, &f->cfg, load * f->cfg.period, f->cfg.period,
                                   n % every == 0 ? share : 0, f->now);
        if (first == NET_ADMISSION_NOTHING)
            first = ev;
    }
    return first;
}

static void test_frames_cut_by_the_replication_budget_are_frames_lost(void **state)
{
    fixture *f = *state;

    /* Between the marks, on time, every frame making 1% of its connections wait: a hundredth
     * of each frame lost, within NET_ADMISSION_ON_TIME: admitted. */
    assert_int_equal(run_cut(f, 0.8, 1, 0.01, 2.0), NET_ADMISSION_NOTHING);
    assert_false(f->a.frames_lost);
    assert_true(f->a.complete_hz > 29.6 && f->a.complete_hz < 29.8);
    /* One frame in ten making every connection but the first wait: the frame rate holds
     * because the budget cut the frames short, but a tenth of the frames did not fit. */
    assert_int_equal(run_cut(f, 0.8, 10, 0.99, 2.0), NET_ADMISSION_STARTED_REFUSING);
    assert_true(f->a.frames_lost);
    assert_true(f->a.achieved_hz > 29.9);
    assert_true(f->a.complete_hz < 27.5);
    assert_int_equal(admit(f, 10), NET_ADMIT_BUSY);
}

static void test_frames_lost_below_the_low_mark_are_not_the_players_load(void **state)
{
    fixture *f = *state;

    /* Late frames of a light loop (another process on the machine took the time). */
    assert_int_equal(run_late(f, 0.3, 1.0 / 0.9, 2.0), NET_ADMISSION_NOTHING);
    assert_false(f->a.refusing);
    assert_false(f->a.frames_lost);
}

static void test_frames_lost_do_not_restart_refusing_in_the_window_after_it_stopped(void **state)
{
    fixture *f = *state;

    double window = f->cfg.window_seconds;
    int frames = 0;

    assert_int_equal(run(f, 0.95, 2.0), NET_ADMISSION_STARTED_REFUSING);
    /* Down under the low mark with the frames still late: refusing stops... */
    while (f->a.refusing && frames++ < 1000)
        run_late(f, 0.6, 1.0 / 0.9, f->cfg.period);
    assert_false(f->a.refusing);
    /* ...and late frames between the marks within the window after do not start it again, */
    assert_int_equal(run_late(f, 0.85, 1.0 / 0.9, window / 2), NET_ADMISSION_NOTHING);
    assert_true(f->a.load >= f->cfg.low_load && f->a.load < f->cfg.high_load);
    assert_false(f->a.refusing);
    /* a window on they do. */
    assert_int_equal(run_late(f, 0.85, 1.0 / 0.9, window), NET_ADMISSION_STARTED_REFUSING);
}

static void test_refusing_stops_only_below_the_low_load(void **state)
{
    fixture *f = *state;

    run(f, 1.2, 2.0);
    assert_true(f->a.refusing);

    /* Between the marks: still refusing. */
    assert_int_equal(run(f, 0.75, 3.0), NET_ADMISSION_NOTHING);
    assert_true(f->a.refusing);

    assert_int_equal(run(f, 0.5, 2.0), NET_ADMISSION_STOPPED_REFUSING);
    assert_false(f->a.refusing);
    assert_true(f->a.peak_load > 1.19);
    assert_int_equal(admit(f, 10), NET_ADMIT);
}

static void test_below_the_high_load_newcomers_come_in_at_a_pace(void **state)
{
    fixture *f = *state;

    run(f, 0.8, 2.0);

    /* 100 players at 0.8: 100 x (sqrt(0.9 / 0.8) - 1) = 6.07 more bring a load that grows with
     * the square of the players to 0.9: 7 come in within one window (asking an eighth of a
     * window apart, so none is a burst). */
    assert_int_equal(admit_newcomers(f, 100, 7, 0.13), 7);
    assert_int_equal(admit(f, 107), NET_ADMIT_PACED);

    /* A window later those admissions no longer count. */
    run(f, 0.8, 1.1);
    assert_int_equal(admit(f, 107), NET_ADMIT);
}

static void test_players_that_left_make_room_for_newcomers(void **state)
{
    fixture *f = *state;
    uint32_t players = 100;

    run(f, 0.8, 2.0);
    players += admit_newcomers(f, players, 7, 0.13);
    assert_int_equal(admit(f, players), NET_ADMIT_PACED);

    /* Three leave: the window's newcomers less its leavers is 4, under the room again. */
    for (int i = 0; i < 3; i++)
        net_admission_note_leave(&f->a, f->now);
    players -= 3;

    assert_int_equal(admit(f, players), NET_ADMIT);
}

static void test_newcomers_are_spread_over_the_window(void **state)
{
    fixture *f = *state;
    uint32_t admitted = 0;

    run(f, 0.8, 2.0);

    /* 1000 players at 0.8 have room for 61 more; at most a quarter of that at once (16, with
     * each newcomer counted among the players)... */
    admitted += admit_newcomers(f, 1000, 40, 0);
    assert_int_equal(admitted, 16);

    /* ...and as many again an eighth of a window later. */
    f->now += 0.13;
    admitted += admit_newcomers(f, 1000 + admitted, 40, 0);
    assert_int_equal(admitted, 32);
}

static void test_newcomers_in_leavers_places_are_not_held_back(void **state)
{
    fixture *f = *state;

    run(f, 0.85, 2.0);

    /* 1000 players at 0.85 (room for 29 more, 7 at once) churning: 50 leave and 50 come in
     * within an eighth of a window. */
    for (int i = 0; i < 50; i++) {
        net_admission_note_leave(&f->a, f->now);
        assert_int_equal(admit(f, 999), NET_ADMIT);
    }
}

static void test_the_retry_after_is_spread_between_once_and_twice_the_setting(void **state)
{
    fixture *f = *state;
    uint32_t lo = UINT32_MAX, hi = 0;

    for (int i = 0; i < 1000; i++) {
        uint32_t ms = net_admission_retry_ms(&f->a, 2000);
        lo = ms < lo ? ms : lo;
        hi = ms > hi ? ms : hi;
    }

    assert_in_range(lo, 2000, 2100);
    assert_in_range(hi, 3900, 3999);
    assert_int_equal(net_admission_retry_ms(&f->a, 0), 0);
}

static void test_a_lightly_loaded_server_admits_what_its_load_has_room_for(void **state)
{
    fixture *f = *state;
    uint32_t players = 300, total = 0;
    /* 300 players at 5% of the budget: 300 x (sqrt(0.9 / 0.05) - 1) more reach the high mark
     * if the load grows with the square of the players, a quarter of them an eighth. */
    double room = 300 * (sqrt(0.9 / 0.05) - 1);
    uint32_t want_total = (uint32_t)ceil(room), want_burst = (uint32_t)ceil(room / 4);

    run(f, 0.05, 2.0);

    /* A crowd of 1000 asking, each eighth of the window: a quarter of the room each. */
    for (int eighth = 0; eighth < 8; eighth++) {
        uint32_t in = admit_until_paced(f, &players);

        if (eighth == 0)
            assert_int_equal(in, want_burst);
        total += in;
        f->now += f->cfg.window_seconds / 8 + 1e-6;
    }
    assert_int_equal(total, want_total);
}

static void test_the_far_bands_stretch_first_one_per_window(void **state)
{
    fixture *f = *state;

    run(f, 0.85, 1.0);

    assert_int_equal(f->a.stretch, 1);
    assert_int_equal(net_admission_band_period(&f->a, 3, 6), 12);
    assert_int_equal(net_admission_band_period(&f->a, 2, 3), 3);

    run(f, 0.85, 1.0);
    assert_int_equal(f->a.stretch, 2);
    assert_int_equal(net_admission_band_period(&f->a, 2, 3), 6);
    assert_int_equal(net_admission_band_period(&f->a, 1, 2), 2);

    run(f, 0.85, 5.0);
    assert_int_equal(f->a.stretch, NET_STRETCH_LEVELS);
    assert_int_equal(net_admission_band_period(&f->a, 1, 2), 4);
    assert_int_equal(net_admission_band_period(&f->a, 0, 1), 1); /* the nearest never */
    assert_false(f->a.refusing); /* below HighLoad: stretched, still admitting */
}

static void test_stretched_bands_unwind_below_the_low_load_nearest_first(void **state)
{
    fixture *f = *state;

    run(f, 0.85, 2.0);
    assert_int_equal(f->a.stretch, 2);

    run(f, 0.75, 3.0); /* between the marks: it stays */
    assert_int_equal(f->a.stretch, 2);

    run(f, 0.3, 1.1);
    assert_int_equal(f->a.stretch, 1);
    assert_int_equal(net_admission_band_period(&f->a, 2, 3), 3);
    assert_int_equal(net_admission_band_period(&f->a, 3, 6), 12);
    run(f, 0.3, 1.0);
    assert_int_equal(f->a.stretch, 0);
}

static void test_with_admission_control_off_everyone_is_admitted(void **state)
{
    fixture *f = *state;

    run(f, 1.5, 2.0);
    assert_true(f->a.refusing);
    f->cfg.enabled = false;

    assert_int_equal(run(f, 1.5, 0.1), NET_ADMISSION_STOPPED_REFUSING);

    assert_false(f->a.refusing);
    assert_int_equal(f->a.stretch, 0);
    assert_int_equal(admit(f, 1000), NET_ADMIT);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_the_load_is_the_work_per_frame_over_the_period),
        T(test_late_frames_of_a_busy_loop_count_above_one),
        T(test_before_a_whole_window_only_a_slow_start_paces_newcomers),
        T(test_an_empty_server_takes_a_crowd_at_a_slow_start),
        T(test_refusing_starts_at_the_high_load),
        T(test_frames_lost_between_the_marks_start_refusing_too),
        T(test_frames_lost_below_the_low_mark_are_not_the_players_load),
        T(test_frames_cut_by_the_replication_budget_are_frames_lost),
        T(test_frames_lost_do_not_restart_refusing_in_the_window_after_it_stopped),
        T(test_a_lightly_loaded_server_of_one_player_takes_a_crowd_at_a_slow_start),
        T(test_refusing_stops_only_below_the_low_load),
        T(test_below_the_high_load_newcomers_come_in_at_a_pace),
        T(test_players_that_left_make_room_for_newcomers),
        T(test_newcomers_are_spread_over_the_window),
        T(test_newcomers_in_leavers_places_are_not_held_back),
        T(test_the_retry_after_is_spread_between_once_and_twice_the_setting),
        T(test_a_lightly_loaded_server_admits_what_its_load_has_room_for),
        T(test_the_far_bands_stretch_first_one_per_window),
        T(test_stretched_bands_unwind_below_the_low_load_nearest_first),
        T(test_with_admission_control_off_everyone_is_admitted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
