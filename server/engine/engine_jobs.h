/*
 * engine_jobs.h - the periodic jobs: one table, each job with its period, run from one place
 * (Redis's serverCron with run_with_period).
 *
 * The engine's loop calls engine_jobs_run before every frame; a job runs when its time has
 * come, and is next due one period after it ran (a job that fell behind runs once, not once
 * per missed period). A job that has nothing to do now (its feature is off) says so and stays
 * due, so it runs at the next chance once it has work. Time is passed in: tests
 * drive the table with a fake clock.
 */
#ifndef REAP_ENGINE_JOBS_H
#define REAP_ENGINE_JOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct engine_job {
    const char *name;
    uint32_t first_ms;       /* after engine_jobs_start: 0 = at the first chance */
    uint32_t period_ms;      /* > 0 */
    /* Does the job; false when there was nothing to do now (it stays due). */
    bool (*run_cb)(void *ctx, uint64_t now_ns);
} engine_job;

/* next_ns has one entry per job; each job is first due first_ms after now_ns. */
void engine_jobs_start(const engine_job *jobs, size_t count, uint64_t *next_ns, uint64_t now_ns);

/* Runs, in table order, every job due at now_ns; returns how many ran. */
uint32_t engine_jobs_run(const engine_job *jobs, size_t count, uint64_t *next_ns, uint64_t now_ns,
                         void *ctx);

/* When the frame after one that started on the grid point `due_ns` is due, the frame having
 * ended at now_ns: the next point of the --tick-hz grid (due_ns + period_ns), so frames keep
 * their rate however long each takes up to a period, and no drift builds up; a frame that
 * overran its period is followed at once (now_ns), and the grid starts again from there (no
 * burst of frames to catch up, as UE's fixed tick rate does). A repeating libuv timer would
 * instead wait a whole period after the frame's end: a 25 ms frame at 30 Hz ran at 17/s. */
uint64_t engine_frame_due(uint64_t due_ns, uint64_t period_ns, uint64_t now_ns);

#endif /* REAP_ENGINE_JOBS_H */
