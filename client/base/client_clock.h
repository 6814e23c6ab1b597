/*
 * client_clock.h - the clocks the load generator reads: monotonic seconds for every wait and
 * every latency, the process's CPU time for its own health, and a seed from the clock when
 * none is given.
 */
#ifndef REAP_CLIENT_CLOCK_H
#define REAP_CLIENT_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC, seconds. */
double churn_clock(void);
/* Seconds since t0 (a churn_clock() reading: a run's start). */
static inline double churn_since(double t0)
{
    return churn_clock() - t0;
}
/* The process's user + system CPU time, seconds; -1 when unknown. */
double churn_cpu_seconds(void);
/* A seed that differs between runs and between processes: the time, the pid, the clock. */
uint64_t churn_seed_from_clock(void);

#endif /* REAP_CLIENT_CLOCK_H */
