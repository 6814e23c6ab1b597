/*
 * churn_scrape.h - one page of the server's /metrics (the Prometheus text format) read into
 * samples by exact key, and the figures read from one or two pages.
 */
#ifndef REAP_CLIENT_CHURN_SCRAPE_H
#define REAP_CLIENT_CHURN_SCRAPE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct churn_metric {
    char *key;                   /* name{labels} exactly as exported */
    double value;
} churn_metric;

typedef struct churn_scrape {
    double t;                    /* seconds since the run's start */
    churn_metric *metrics;       /* owned, sorted by key */
    uint32_t n;
} churn_scrape;

/* Parses a Prometheus text page into s (replacing its metrics); false on no sample at all. */
bool churn_scrape_parse(churn_scrape *s, const char *text);
void churn_scrape_free(churn_scrape *s);
/* Deep copy; false (dst empty) on allocation failure. */
bool churn_scrape_copy(churn_scrape *dst, const churn_scrape *src);
/* The value of key, or NAN. */
double churn_scrape_get(const churn_scrape *s, const char *key);
/* Sum over every sample whose key is name or starts with "name{". NAN when there is none. */
double churn_scrape_sum(const churn_scrape *s, const char *name);
/* Percentile p of histogram `name` (samples matching `label`, e.g. phase="net", or NULL)
 * between two scrapes (a == NULL: since the server's start), interpolated in the bucket as
 * Prometheus' histogram_quantile does; NAN when the histogram is absent or empty. With p =
 * 100, the upper bound of the highest bucket that gained a sample. */
double churn_scrape_quantile(const churn_scrape *a, const churn_scrape *b, const char *name,
                             const char *label, double p);

#endif /* REAP_CLIENT_CHURN_SCRAPE_H */
