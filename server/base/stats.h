/*
 * stats.h - Prometheus-style histograms with fixed buckets (seconds).
 *
 * Observing is O(buckets) with no allocation, so it can run every frame.
 */
#ifndef REAP_STATS_H
#define REAP_STATS_H

#include <stdint.h>

#include "strbuf.h"

/* Finer between 5 and 33 ms, where a 30 Hz frame budget is decided. */
enum { STATS_BUCKETS = 19 };

typedef struct stats_histogram {
    uint64_t counts[STATS_BUCKETS]; /* non-cumulative; the last bucket is +Inf */
    uint64_t count;
    double sum;
    double max;                     /* the largest observation */
} stats_histogram;

/* Upper bounds of the finite buckets, in seconds. */
extern const double stats_bucket_bounds[STATS_BUCKETS - 1];

void stats_histogram_init(stats_histogram *h);
void stats_histogram_observe(stats_histogram *h, double seconds);
/* Appends HELP, TYPE, the cumulative buckets, _sum and _count in the text format. */
void stats_histogram_write(const stats_histogram *h, const char *name, const char *help,
                           strbuf *out);

/* The series alone (no HELP/TYPE), with labels such as `phase="net"` (NULL: none). */
void stats_histogram_write_series(const stats_histogram *h, const char *name,
                                  const char *labels, strbuf *out);

#endif /* REAP_STATS_H */
