/*
 * test_tick_rate.c - the warning for a --tick-hz the machine cannot sustain: only a rate under
 * 90% of the target for several windows in a row warns, once, and recovery is reported.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tick_rate.h"

/* Feeds frames at hz for seconds, starting at *now; returns the first event other than
 * TICK_RATE_NOTHING (or NOTHING). */
static tick_rate_event run_at(tick_rate_monitor *m, double *now, double hz, double seconds)
{
    tick_rate_event first = TICK_RATE_NOTHING;
    double end = *now + seconds;

    while (*now < end) {
        tick_rate_event ev = tick_rate_frame(m, *now);
        if (first == TICK_RATE_NOTHING)
            first = ev;
        *now += 1.0 / hz;
    }
    return first;
}

static void test_a_sustained_rate_never_warns(void **state)
{
    tick_rate_monitor m;
    double now = 100;

    (void)state;
    tick_rate_init(&m, 30);

    assert_int_equal(run_at(&m, &now, 30, 20), TICK_RATE_NOTHING);
    assert_false(m.warned);
}

static void test_a_rate_under_ninety_percent_for_three_windows_warns_once(void **state)
{
    tick_rate_monitor m;
    double now = 0;

    (void)state;
    tick_rate_init(&m, 1000);

    assert_int_equal(run_at(&m, &now, 600, 5), TICK_RATE_SLOW);
    assert_true(m.achieved_hz < 0.9 * 1000);
    assert_int_equal(run_at(&m, &now, 600, 10), TICK_RATE_NOTHING); /* no second warning */
}

static void test_one_slow_window_is_not_enough(void **state)
{
    tick_rate_monitor m;
    double now = 0;

    (void)state;
    tick_rate_init(&m, 30);

    run_at(&m, &now, 30, 3);
    assert_int_equal(run_at(&m, &now, 10, 1.5), TICK_RATE_NOTHING);
    assert_int_equal(run_at(&m, &now, 30, 3), TICK_RATE_NOTHING);
    assert_false(m.warned);
}

static void test_recovery_after_a_warning_is_reported_and_rearms(void **state)
{
    tick_rate_monitor m;
    double now = 0;

    (void)state;
    tick_rate_init(&m, 60);
    assert_int_equal(run_at(&m, &now, 20, 5), TICK_RATE_SLOW);

    assert_int_equal(run_at(&m, &now, 60, 3), TICK_RATE_RECOVERED);
    assert_int_equal(run_at(&m, &now, 20, 5), TICK_RATE_SLOW);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_sustained_rate_never_warns),
        cmocka_unit_test(test_a_rate_under_ninety_percent_for_three_windows_warns_once),
        cmocka_unit_test(test_one_slow_window_is_not_enough),
        cmocka_unit_test(test_recovery_after_a_warning_is_reported_and_rearms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
