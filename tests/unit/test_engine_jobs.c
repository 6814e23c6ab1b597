/*
 * test_engine_jobs.c - the table of periodic jobs: each job runs once per period from its first
 * time, a late job runs once and not once per missed period, and a job with nothing to do
 * stays due. Time is a fake clock in nanoseconds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "engine_jobs.h"

enum { MS = 1000000 };

typedef struct recorder {
    uint32_t runs[2];
    bool has_work;
} recorder;

static bool first_cb(void *ctx, uint64_t now_ns)
{
    (void)now_ns;
    ((recorder *)ctx)->runs[0]++;
    return true;
}

static bool second_cb(void *ctx, uint64_t now_ns)
{
    recorder *r = ctx;

    (void)now_ns;
    if (!r->has_work)
        return false;
    r->runs[1]++;
    return true;
}

static const engine_job jobs[] = {
    { "every 100 ms, at once", 0, 100, first_cb },
    { "every second, after one", 1000, 1000, second_cb },
};

/* Calls the table every step_ms from *now until end_ms after it. */
static void run_for(recorder *r, uint64_t *next, uint64_t *now, uint32_t step_ms, uint32_t ms)
{
    uint64_t end = *now + (uint64_t)ms * MS;

    for (; *now < end; *now += (uint64_t)step_ms * MS)
        engine_jobs_run(jobs, 2, next, *now, r);
}

static void test_a_job_runs_once_per_period_from_its_first_time(void **state)
{
    recorder r = { .has_work = true };
    uint64_t next[2], now = 5000 * (uint64_t)MS;

    (void)state;
    engine_jobs_start(jobs, 2, next, now);

    run_for(&r, next, &now, 10, 3000);

    assert_int_equal(r.runs[0], 30);
    assert_int_equal(r.runs[1], 2); /* at 1 s and 2 s; 3 s is the end */
}

static void test_a_late_job_runs_once_not_once_per_missed_period(void **state)
{
    recorder r = { .has_work = true };
    uint64_t next[2], now = 0;

    (void)state;
    engine_jobs_start(jobs, 2, next, now);

    now += 2500 * (uint64_t)MS; /* a frame that took 2.5 s */
    engine_jobs_run(jobs, 2, next, now, &r);
    run_for(&r, next, &now, 10, 90);

    assert_int_equal(r.runs[0], 1);
    assert_int_equal(r.runs[1], 1);
}

static void test_a_job_with_nothing_to_do_stays_due_and_runs_when_it_has_work(void **state)
{
    recorder r = { .has_work = false };
    uint64_t next[2], now = 0;

    (void)state;
    engine_jobs_start(jobs, 2, next, now);
    run_for(&r, next, &now, 10, 1500);

    r.has_work = true;
    engine_jobs_run(jobs, 2, next, now, &r);

    assert_int_equal(r.runs[1], 1);
    assert_int_equal(next[1], now + 1000 * (uint64_t)MS);
}

/* Frames keep to their grid: a frame shorter than its period is followed on the next grid
 * point, wherever in the period it ended, and the points never drift. */
static void test_frames_keep_to_the_grid_however_long_each_takes(void **state)
{
    const uint64_t period = 33333333; /* 30 Hz */
    uint64_t due = 1000000000;

    (void)state;
    for (int i = 0; i < 300; i++) {
        uint64_t took = (uint64_t)(i % 3) * 12000000; /* 0, 12 and 24 ms frames */

        due = engine_frame_due(due, period, due + took);
    }
    assert_int_equal(due, 1000000000 + 300 * period);
}

/* A frame that overran its period is followed at once, and the grid starts again from its
 * end: no burst of short-waited frames to catch up. */
static void test_an_overrun_frame_is_followed_at_once_and_the_grid_restarts(void **state)
{
    const uint64_t period = 33333333;
    uint64_t end = 1000000000 + 50000000; /* a 50 ms frame that started at 1 s */
    uint64_t due = engine_frame_due(1000000000, period, end);

    (void)state;
    assert_int_equal(due, end);
    assert_int_equal(engine_frame_due(due, period, due + 1000000), end + period);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_job_runs_once_per_period_from_its_first_time),
        cmocka_unit_test(test_a_late_job_runs_once_not_once_per_missed_period),
        cmocka_unit_test(test_a_job_with_nothing_to_do_stays_due_and_runs_when_it_has_work),
        cmocka_unit_test(test_frames_keep_to_the_grid_however_long_each_takes),
        cmocka_unit_test(test_an_overrun_frame_is_followed_at_once_and_the_grid_restarts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
