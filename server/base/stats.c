/*
 * stats.c - fixed-bucket histograms in the Prometheus text format.
 */
#include "stats.h"

#include <string.h>

const double stats_bucket_bounds[STATS_BUCKETS - 1] = {
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.0075, 0.01,
    0.0125, 0.016, 0.02, 0.025, 0.0333, 0.05, 0.1, 0.25, 1.0,
};

void stats_histogram_init(stats_histogram *h)
{
    memset(h, 0, sizeof *h);
}

void stats_histogram_observe(stats_histogram *h, double seconds)
{
    int i = 0;

    while (i < STATS_BUCKETS - 1 && seconds > stats_bucket_bounds[i])
        i++;
    h->counts[i]++;
    h->count++;
    h->sum += seconds;
    if (seconds > h->max)
        h->max = seconds;
}

void stats_histogram_write_series(const stats_histogram *h, const char *name,
                                  const char *labels, strbuf *out)
{
    const char *sep = labels != NULL && labels[0] != '\0' ? "," : "";
    uint64_t cumulative = 0;

    if (labels == NULL)
        labels = "";
    for (int i = 0; i < STATS_BUCKETS - 1; i++) {
        cumulative += h->counts[i];
        strbuf_printf(out, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, sep,
                      stats_bucket_bounds[i], (unsigned long long)cumulative);
    }
    strbuf_printf(out, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep,
                  (unsigned long long)h->count);
    if (labels[0] != '\0')
        strbuf_printf(out, "%s_sum{%s} %.9g\n%s_count{%s} %llu\n", name, labels, h->sum, name,
                      labels, (unsigned long long)h->count);
    else
        strbuf_printf(out, "%s_sum %.9g\n%s_count %llu\n", name, h->sum, name,
                      (unsigned long long)h->count);
}

void stats_histogram_write(const stats_histogram *h, const char *name, const char *help,
                           strbuf *out)
{
    strbuf_printf(out, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    stats_histogram_write_series(h, name, NULL, out);
}
