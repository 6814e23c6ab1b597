/*
 * hist.h - latency histograms that merge exactly: HdrHistogram-style logarithmic buckets.
 *
 * Values are integers (the load tester records microseconds). Values below HIST_EXACT have a
 * bucket each; above, every power of two is cut into HIST_SUB equal buckets, so a bucket's
 * width is at most 1/HIST_SUB (1.6%) of its values. Buckets are fixed, so merging two
 * histograms is adding their counts: the merge of shards equals one histogram over all their
 * samples, bucket for bucket. Percentiles are reported as the upper bound of the bucket that
 * holds the rank (never above the largest value recorded).
 */
#ifndef REAP_CLIENT_HIST_H
#define REAP_CLIENT_HIST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum {
    HIST_SUB_BITS = 6,
    HIST_SUB = 1 << HIST_SUB_BITS,          /* buckets per power of two */
    HIST_EXACT = 2 * HIST_SUB,              /* values below this are exact */
    HIST_TOP_BIT = 44,                      /* values up to 2^44 (about 203 days in us) */
    HIST_BUCKETS = HIST_EXACT + (HIST_TOP_BIT - HIST_SUB_BITS - 1) * HIST_SUB,
};

typedef struct hist {
    uint64_t n;
    uint64_t min, max;                      /* exact; min is UINT64_MAX while n == 0 */
    uint64_t sum;
    uint64_t counts[HIST_BUCKETS];
} hist;

void hist_init(hist *h);
/* Values at or above 2^HIST_TOP_BIT are clamped into the last bucket. */
void hist_record(hist *h, uint64_t value);
/* dst += src, exactly. */
void hist_merge(hist *dst, const hist *src);
/* The value at percentile p (0 < p <= 100): the upper bound of the bucket holding rank
 * ceil(p/100 x n), at most max. 0 when empty. */
uint64_t hist_percentile(const hist *h, double p);
double hist_mean(const hist *h);

uint32_t hist_bucket_of(uint64_t value);
uint64_t hist_bucket_low(uint32_t bucket);
uint64_t hist_bucket_high(uint32_t bucket);   /* inclusive */

/* One line: "n min max sum b:c b:c ..." (non-empty buckets only); read back by hist_parse. */
void hist_write_line(const hist *h, FILE *f);
/* Parses what hist_write_line wrote into h (initialised here); false on malformed text. */
bool hist_parse(hist *h, const char *text);

#endif
