/*
 * test_net_admission.c - admission control's rules (net_admission.h) over injected frames: the
 * load is the loop's work per frame over the period, nothing is decided before a whole window,
 * refusing starts at HighLoad and stops only below LowLoad, new players are paced below it (the
 * window's newcomers less its leavers, spread over the window), and the far bands stretch
 * first, one per window, and unwind below LowLoad.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "net_admission.h"

enum { HZ = 30 };

static net_admission_config config(void)
{
    net_admission_config cfg = {
        .enabled = true,
        .high_load = 0.9,
        .low_load = 0.7,
        .stretch_load = 0.8,
        .window_seconds = 1.0,
        .period = 1.0 / HZ,
    };
    return cfg;
}

/* Frames on time, each with `load` of its period as work, for seconds from *now; returns the
 * first event other than NOTHING (or NOTHING). */
static net_admission_event run(net_admission *a, const net_admission_config *cfg, double *now,
                               double load, double seconds)
{
    net_admission_event first = NET_ADMISSION_NOTHING;
    double end = *now + seconds - 1e-9;

    while (*now < end) {
        net_admission_event ev;

        *now += cfg->period;
        ev = net_admission_observe(a, cfg, load * cfg->period, cfg->period, *now);
        if (first == NET_ADMISSION_NOTHING)
            first = ev;
    }
    return first;
}

static void test_the_load_is_the_work_per_frame_over_the_period(void **state)
{
    net_admission_config cfg = config();
    net_admission a;
    double now = 0;

    (void)state;
    net_admission_init(&a);

    run(&a, &cfg, &now, 0.5, 2.0);

    assert_true(a.full);
    assert_int_equal(a.frames, HZ);
    assert_true(a.load > 0.499 && a.load < 0.501);
    assert_true(a.achieved_hz > HZ - 0.01 && a.achieved_hz < HZ + 0.01);
}

static void test_late_frames_of_a_busy_loop_count_above_one(void **state)
{
    net_admission_config cfg = config();
    net_admission a;
    double now = 0;

    (void)state;
    net_admission_init(&a);

    /* Each frame 40 ms apart and busy all of it: 25 frames/s at 30 Hz. */
    for (int i = 0; i < 60; i++) {
        now += 0.040;
        net_admission_observe(&a, &cfg, 0.040, 0.040, now);
    }

    assert_true(a.load > 1.19 && a.load < 1.21);
    assert_true(a.achieved_hz > 24.9 && a.achieved_hz < 25.1);
}

static void test_nothing_is_decided_before_a_whole_window(void **state)
{
    net_admission_config cfg = config();
    net_admission a;
    double now = 0;

    (void)state;
    net_admission_init(&a);

    assert_int_equal(run(&a, &cfg, &now, 2.0, 0.9), NET_ADMISSION_NOTHING);

    assert_false(a.full);
    assert_false(a.refusing);
    assert_int_equal(a.stretch, 0);
    for (int i = 0; i < 100; i++)
        assert_int_equal(net_admission_admit(&a, &cfg, 10 + i, now), NET_ADMIT);
}

static void test_refusing_starts_at_the_high_load(void **state)
{
    net_admission_config cfg = config();
    net_admission a;
    double now = 0;

    (void)state;
    net_admission_init(&a);
    run(&a, &cfg, &now, 0.85, 2.0);
    assert_false(a.refusing);

    assert_int_equal(run(&a, &cfg, &now, 0.95, 2.0), NET_ADMISSION_STARTED_REFUSING);

    assert_true(a.refusing);
    assert_int_equal(net_admission_admit(&a, &cfg, 10, now), NET_ADMIT_BUSY);
    assert_int_equal(a.refused_episode, 1);
}

static void test_refusing_stops_only_below_the_low_load(void **state)
{
    net_admission_config cfg = config();
    net_admission a;
    double now = 0;

    (void)state;
    net_admission_init(&a);
    run(&a, &cfg, &now, 1.2, 2.0);
    assert_true(a.refusing);

    /* Between the marks: still refusing. */
    assert_int_equal(run(&a, &cfg, &now, 0.75, 3.0), NET_ADMISSION_NOTHING);
    assert_true(a.refusing);

    assert_int_equal(run(&a, &cfg, &now, 0.5, 2.0), NET_ADMISSION_STOPPED_REFUSING);
    assert_false(a.refusing);
    assert_true(a.peak_load > 1.19);
    assert_int_equal(net_admission_admit(&a, &cfg, 10, now), NET_ADMIT);
}

static void test_below_the_high_load_newcomers_come_in_at_a_pace(void **state)
{
    net_admission_config cfg = config();
    net_admission a;
    double now = 0;
    uint32_t admitted = 0;

    (void)state;
    net_admission_init(&a);
    run(&a, &cfg, &now, 0.8, 2.0);

    /* 100 players at 0.8: 100 x (sqrt(0.9 / 0.8) - 1) = 6.07 more bring a load that grows with
     * the square of the players to 0.9; with each newcomer counted among the players, 7 come
     * in within one window (asking an eighth of a window apart, so none is a burst). */
    for (int i = 0; i < 7; i++) {
        now += 0.13;
        admitted += net_admission_admit(&a, &cfg, 100 + admitted, now) == NET_ADMIT;
    }
    assert_int_equal(admitted, 7);
    assert_int_equal(net_admission_admit(&a, &cfg, 107, now), NET_ADMIT_PACED);

    /* A window later those admissions no longer count. */
    run(&a, &cfg, &now, 0.8, 1.1);
    assert_int_equal(net_admission_admit(&a, &cfg, 107, now), NET_ADMIT);
}

static void test_players_that_left_make_room_for_newcomers(void **state)
{
    net_admission_config cfg = config();
    net_admission a;
    double now = 0;
    uint32_t players = 100;

    (void)state;
    net_admission_init(&a);
    run(&a, &cfg, &now, 0.8, 2.0);
    for (int i = 0; i < 7; i++) {
        now += 0.13;
        players += net_admission_admit(&a, &cfg, players, now) == NET_ADMIT;
    }
    assert_int_equal(net_admission_admit(&a, &cfg, players, now), NET_ADMIT_PACED);

    /* Three leave: the window's newcomers less its leavers is 4, under the room again. */
    for (int i = 0; i < 3; i++)
        net_admission_note_leave(&a, now);
    players -= 3;

    assert_int_equal(net_admission_admit(&a, &cfg, players, now), NET_ADMIT);
}

static void test_newcomers_are_spread_over_the_window(void **state)
{
    net_admission_config cfg = config();
    net_admission a;
    double now = 0;
    uint32_t admitted = 0;

    (void)state;
    net_admission_init(&a);
    run(&a, &cfg, &now, 0.8, 2.0);

    /* 1000 players at 0.8 have room for 61 more; at most a quarter of that at once (16, with
     * each newcomer counted among the players)... */
    for (int i = 0; i < 40; i++)
        admitted += net_admission_admit(&a, &cfg, 1000 + admitted, now) == NET_ADMIT;
    assert_int_equal(admitted, 16);

    /* ...and as many again an eighth of a window later. */
    now += 0.13;
    for (int i = 0; i < 40; i++)
        admitted += net_admission_admit(&a, &cfg, 1000 + admitted, now) == NET_ADMIT;
    assert_int_equal(admitted, 32);
}

static void test_newcomers_in_leavers_places_are_not_held_back(void **state)
{
    net_admission_config cfg = config();
    net_admission a;
    double now = 0;

    (void)state;
    net_admission_init(&a);
    run(&a, &cfg, &now, 0.85, 2.0);

    /* 1000 players at 0.85 (room for 29 more, 7 at once) churning: 50 leave and 50 come in
     * within an eighth of a window. */
    for (int i = 0; i < 50; i++) {
        net_admission_note_leave(&a, now);
        assert_int_equal(net_admission_admit(&a, &cfg, 999, now), NET_ADMIT);
    }
}

static void test_the_retry_after_is_spread_between_once_and_twice_the_setting(void **state)
{
    net_admission a;
    uint32_t lo = UINT32_MAX, hi = 0;

    (void)state;
    net_admission_init(&a);

    for (int i = 0; i < 1000; i++) {
        uint32_t ms = net_admission_retry_ms(&a, 2000);
        lo = ms < lo ? ms : lo;
        hi = ms > hi ? ms : hi;
    }

    assert_in_range(lo, 2000, 2100);
    assert_in_range(hi, 3900, 3999);
    assert_int_equal(net_admission_retry_ms(&a, 0), 0);
}

static void test_a_lightly_loaded_server_admits_a_crowd_within_a_window(void **state)
{
    net_admission_config cfg = config();
    net_admission a;
    double now = 0;
    uint32_t players = 100;

    (void)state;
    net_admission_init(&a);
    run(&a, &cfg, &now, 0.05, 2.0);

    /* 450 asking within 0.99 s, 50 at a time. */
    for (int step = 0; step < 9; step++) {
        now += 0.11;
        for (int i = 0; i < 50; i++)
            assert_int_equal(net_admission_admit(&a, &cfg, players++, now), NET_ADMIT);
    }
}

static void test_the_far_bands_stretch_first_one_per_window(void **state)
{
    net_admission_config cfg = config();
    net_admission a;
    double now = 0;

    (void)state;
    net_admission_init(&a);
    run(&a, &cfg, &now, 0.85, 1.0);

    assert_int_equal(a.stretch, 1);
    assert_int_equal(net_admission_band_period(&a, 3, 6), 12);
    assert_int_equal(net_admission_band_period(&a, 2, 3), 3);

    run(&a, &cfg, &now, 0.85, 1.0);
    assert_int_equal(a.stretch, 2);
    assert_int_equal(net_admission_band_period(&a, 2, 3), 6);
    assert_int_equal(net_admission_band_period(&a, 1, 2), 2);

    run(&a, &cfg, &now, 0.85, 5.0);
    assert_int_equal(a.stretch, NET_STRETCH_LEVELS);
    assert_int_equal(net_admission_band_period(&a, 1, 2), 4);
    assert_int_equal(net_admission_band_period(&a, 0, 1), 1); /* the nearest never */
    assert_false(a.refusing); /* below HighLoad: stretched, still admitting */
}

static void test_stretched_bands_unwind_below_the_low_load_nearest_first(void **state)
{
    net_admission_config cfg = config();
    net_admission a;
    double now = 0;

    (void)state;
    net_admission_init(&a);
    run(&a, &cfg, &now, 0.85, 2.0);
    assert_int_equal(a.stretch, 2);

    run(&a, &cfg, &now, 0.75, 3.0); /* between the marks: it stays */
    assert_int_equal(a.stretch, 2);

    run(&a, &cfg, &now, 0.3, 1.1);
    assert_int_equal(a.stretch, 1);
    assert_int_equal(net_admission_band_period(&a, 2, 3), 3);
    assert_int_equal(net_admission_band_period(&a, 3, 6), 12);
    run(&a, &cfg, &now, 0.3, 1.0);
    assert_int_equal(a.stretch, 0);
}

static void test_with_admission_control_off_everyone_is_admitted(void **state)
{
    net_admission_config cfg = config();
    net_admission a;
    double now = 0;

    (void)state;
    net_admission_init(&a);
    run(&a, &cfg, &now, 1.5, 2.0);
    assert_true(a.refusing);
    cfg.enabled = false;

    assert_int_equal(run(&a, &cfg, &now, 1.5, 0.1), NET_ADMISSION_STOPPED_REFUSING);

    assert_false(a.refusing);
    assert_int_equal(a.stretch, 0);
    assert_int_equal(net_admission_admit(&a, &cfg, 1000, now), NET_ADMIT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_load_is_the_work_per_frame_over_the_period),
        cmocka_unit_test(test_late_frames_of_a_busy_loop_count_above_one),
        cmocka_unit_test(test_nothing_is_decided_before_a_whole_window),
        cmocka_unit_test(test_refusing_starts_at_the_high_load),
        cmocka_unit_test(test_refusing_stops_only_below_the_low_load),
        cmocka_unit_test(test_below_the_high_load_newcomers_come_in_at_a_pace),
        cmocka_unit_test(test_players_that_left_make_room_for_newcomers),
        cmocka_unit_test(test_newcomers_are_spread_over_the_window),
        cmocka_unit_test(test_newcomers_in_leavers_places_are_not_held_back),
        cmocka_unit_test(test_the_retry_after_is_spread_between_once_and_twice_the_setting),
        cmocka_unit_test(test_a_lightly_loaded_server_admits_a_crowd_within_a_window),
        cmocka_unit_test(test_the_far_bands_stretch_first_one_per_window),
        cmocka_unit_test(test_stretched_bands_unwind_below_the_low_load_nearest_first),
        cmocka_unit_test(test_with_admission_control_off_everyone_is_admitted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
