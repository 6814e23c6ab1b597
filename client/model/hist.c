/*
 * hist.c - log-bucket histograms (see hist.h).
 */
#include "hist.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void hist_init(hist *h)
{
    memset(h, 0, sizeof *h);
    h->min = UINT64_MAX;
}

/* Index of the highest set bit of v (v > 0). */
static uint32_t hist_log2(uint64_t v)
{
    return 63u - (uint32_t)__builtin_clzll(v);
}

uint32_t hist_bucket_of(uint64_t value)
{
    uint32_t k, b;

    if (value < HIST_EXACT)
        return (uint32_t)value;
    k = hist_log2(value);
    if (k >= HIST_TOP_BIT)
        return HIST_BUCKETS - 1;
    /* k >= HIST_SUB_BITS + 1: the top HIST_SUB_BITS + 1 bits pick the bucket. */
    b = (uint32_t)(value >> (k - HIST_SUB_BITS)) - HIST_SUB;
    return HIST_EXACT + (k - HIST_SUB_BITS - 1) * HIST_SUB + b;
}

uint64_t hist_bucket_low(uint32_t bucket)
{
    uint32_t k, b;

    if (bucket < HIST_EXACT)
        return bucket;
    k = (bucket - HIST_EXACT) / HIST_SUB + HIST_SUB_BITS + 1;
    b = (bucket - HIST_EXACT) % HIST_SUB;
    return (uint64_t)(HIST_SUB + b) << (k - HIST_SUB_BITS);
}

uint64_t hist_bucket_high(uint32_t bucket)
{
    if (bucket + 1 >= HIST_BUCKETS)
        return UINT64_MAX;
    return hist_bucket_low(bucket + 1) - 1;
}

void hist_record(hist *h, uint64_t value)
{
    h->counts[hist_bucket_of(value)]++;
    h->n++;
    h->sum += value;
    if (value < h->min)
        h->min = value;
    if (value > h->max)
        h->max = value;
}

void hist_merge(hist *dst, const hist *src)
{
    for (uint32_t i = 0; i < HIST_BUCKETS; i++)
        dst->counts[i] += src->counts[i];
    dst->n += src->n;
    dst->sum += src->sum;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
}

uint64_t hist_percentile(const hist *h, double p)
{
    uint64_t rank, seen = 0;

    if (h->n == 0)
        return 0;
    rank = (uint64_t)((p / 100.0) * (double)h->n);
    if ((double)rank < (p / 100.0) * (double)h->n)
        rank++;
    if (rank < 1)
        rank = 1;
    if (rank > h->n)
        rank = h->n;
    for (uint32_t i = 0; i < HIST_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            uint64_t high = hist_bucket_high(i);
            return high < h->max ? high : h->max;
        }
    }
    return h->max;
}

double hist_mean(const hist *h)
{
    return h->n ? (double)h->sum / (double)h->n : 0;
}

void hist_write_line(const hist *h, FILE *f)
{
    fprintf(f, "%llu %llu %llu %llu", (unsigned long long)h->n,
            (unsigned long long)(h->n ? h->min : 0), (unsigned long long)h->max,
            (unsigned long long)h->sum);
    for (uint32_t i = 0; i < HIST_BUCKETS; i++)
        if (h->counts[i] != 0)
            fprintf(f, " %u:%llu", i, (unsigned long long)h->counts[i]);
}

static bool hist_parse_u64(const char **p, uint64_t *out)
{
    char *end;

    while (**p == ' ')
        (*p)++;
    if (**p < '0' || **p > '9')
        return false;
    errno = 0;
    *out = strtoull(*p, &end, 10);
    if (errno != 0)
        return false;
    *p = end;
    return true;
}

bool hist_parse(hist *h, const char *text)
{
    const char *p = text;
    uint64_t n, min, max, sum, total = 0;

    hist_init(h);
    if (!hist_parse_u64(&p, &n) || !hist_parse_u64(&p, &min) || !hist_parse_u64(&p, &max) ||
        !hist_parse_u64(&p, &sum))
        return false;
    for (;;) {
        uint64_t bucket, count;

        while (*p == ' ')
            p++;
        if (*p == '\0' || *p == '\n')
            break;
        if (!hist_parse_u64(&p, &bucket) || *p++ != ':' || !hist_parse_u64(&p, &count) ||
            bucket >= HIST_BUCKETS)
            return false;
        h->counts[bucket] += count;
        total += count;
    }
    if (total != n)
        return false;
    h->n = n;
    h->min = n ? min : UINT64_MAX;
    h->max = max;
    h->sum = sum;
    return true;
}
