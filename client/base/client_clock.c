/*
 * client_clock.c - the clocks (see client_clock.h).
 */
#include "client_clock.h"

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

double churn_clock(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

double churn_cpu_seconds(void)
{
    struct rusage ru;

    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return -1;
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

uint64_t churn_seed_from_clock(void)
{
    return (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid() ^ (uint64_t)(churn_clock() * 1e9);
}
