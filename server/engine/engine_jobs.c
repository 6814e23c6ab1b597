/*
 * engine_jobs.c - run_with_period over a table of jobs.
 */
#include "engine_jobs.h"

void engine_jobs_start(const engine_job *jobs, size_t count, uint64_t *next_ns, uint64_t now_ns)
{
    for (size_t i = 0; i < count; i++)
        next_ns[i] = now_ns + (uint64_t)jobs[i].first_ms * 1000000u;
}

uint32_t engine_jobs_run(const engine_job *jobs, size_t count, uint64_t *next_ns, uint64_t now_ns,
                         void *ctx)
{
    uint32_t ran = 0;

    for (size_t i = 0; i < count; i++) {
        if (now_ns < next_ns[i] || !jobs[i].run_cb(ctx, now_ns))
            continue;
        ran++;
        next_ns[i] = now_ns + (uint64_t)jobs[i].period_ms * 1000000u;
    }
    return ran;
}

uint64_t engine_frame_due(uint64_t due_ns, uint64_t period_ns, uint64_t now_ns)
{
    uint64_t next = due_ns + period_ns;

    return next > now_ns ? next : now_ns;
}
