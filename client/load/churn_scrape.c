/*
 * churn_scrape.c - the Prometheus text format read back: a page of samples by exact key,
 * their sums by family, and histogram quantiles between two pages (as Prometheus'
 * histogram_quantile).
 */
#include "churn_scrape.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_vec.h"

static int churn_metric_cmp(const void *a, const void *b)
{
    return strcmp(((const churn_metric *)a)->key, ((const churn_metric *)b)->key);
}

void churn_scrape_free(churn_scrape *s)
{
    for (uint32_t i = 0; i < s->n; i++)
        free(s->metrics[i].key);
    free(s->metrics);
    s->metrics = NULL;
    s->n = 0;
}

bool churn_scrape_copy(churn_scrape *dst, const churn_scrape *src)
{
    memset(dst, 0, sizeof *dst);
    dst->t = src->t;
    if (src->n == 0)
        return true;
    dst->metrics = calloc(src->n, sizeof *dst->metrics);
    if (dst->metrics == NULL)
        return false;
    for (uint32_t i = 0; i < src->n; i++) {
        dst->metrics[i].value = src->metrics[i].value;
        dst->metrics[i].key = strdup(src->metrics[i].key);
        dst->n++;
        if (dst->metrics[i].key == NULL) {
            churn_scrape_free(dst);
            return false;
        }
    }
    return true;
}

bool churn_scrape_parse(churn_scrape *s, const char *text)
{
    uint32_t cap = 0;
    double t = s->t;

    churn_scrape_free(s);
    s->t = t;
    for (const char *line = text; *line != '\0';) {
        const char *eol = strchr(line, '\n');
        const char *end = eol != NULL ? eol : line + strlen(line);
        const char *brace = memchr(line, '{', (size_t)(end - line));
        const char *sep;
        char *num_end;
        double v;

        if (*line == '#' || end == line)
            goto next;
        sep = brace != NULL ? memchr(brace, '}', (size_t)(end - brace)) : line;
        if (sep == NULL)
            goto next;
        sep = memchr(sep, ' ', (size_t)(end - sep));
        if (sep == NULL)
            goto next;
        v = strtod(sep + 1, &num_end);
        if (num_end == sep + 1)
            goto next;
        if (!CLIENT_VEC_RESERVE(s->metrics, cap, (uint64_t)s->n + 1, 256))
            break;
        s->metrics[s->n].key = strndup(line, (size_t)(sep - line));
        if (s->metrics[s->n].key == NULL)
            break;
        s->metrics[s->n].value = v;
        s->n++;
    next:
        line = eol != NULL ? eol + 1 : end;
    }
    if (s->n > 0)
        qsort(s->metrics, s->n, sizeof *s->metrics, churn_metric_cmp);
    return s->n > 0;
}

double churn_scrape_get(const churn_scrape *s, const char *key)
{
    churn_metric k = { (char *)key, 0 };
    const churn_metric *m;

    if (s == NULL || s->n == 0)
        return NAN;
    m = bsearch(&k, s->metrics, s->n, sizeof *s->metrics, churn_metric_cmp);
    return m != NULL ? m->value : NAN;
}

double churn_scrape_sum(const churn_scrape *s, const char *name)
{
    size_t len = strlen(name);
    double sum = 0;
    bool any = false;

    for (uint32_t i = 0; s != NULL && i < s->n; i++) {
        const char *k = s->metrics[i].key;
        if (strncmp(k, name, len) == 0 && (k[len] == '\0' || k[len] == '{')) {
            sum += s->metrics[i].value;
            any = true;
        }
    }
    return any ? sum : NAN;
}

typedef struct churn_bucket {
    double le, count;
} churn_bucket;

static int churn_bucket_cmp(const void *a, const void *b)
{
    double x = ((const churn_bucket *)a)->le, y = ((const churn_bucket *)b)->le;

    return x < y ? -1 : x > y;
}

double churn_scrape_quantile(const churn_scrape *a, const churn_scrape *b, const char *name,
                             const char *label, double p)
{
    churn_bucket buckets[64];
    uint32_t n = 0;
    char prefix[128];
    size_t plen;
    double total, rank, prev_le = 0, prev_cum = 0;

    if (b == NULL)
        return NAN;
    plen = (size_t)snprintf(prefix, sizeof prefix, "%s_bucket{", name);
    for (uint32_t i = 0; i < b->n && n < 64; i++) {
        const char *k = b->metrics[i].key;
        const char *le;
        double before = 0;

        if (strncmp(k, prefix, plen) != 0 || (label != NULL && strstr(k, label) == NULL))
            continue;
        le = strstr(k, "le=\"");
        if (le == NULL)
            continue;
        buckets[n].le = strncmp(le + 4, "+Inf", 4) == 0 ? INFINITY : strtod(le + 4, NULL);
        if (a != NULL) {
            before = churn_scrape_get(a, k);
            if (isnan(before))
                before = 0;
        }
        buckets[n].count = b->metrics[i].value - before;
        n++;
    }
    if (n == 0)
        return NAN;
    qsort(buckets, n, sizeof *buckets, churn_bucket_cmp);
    total = buckets[n - 1].count;
    if (!(total > 0))
        return NAN;
    if (p >= 100) {
        /* The first bucket that holds them all; past the last finite bound, that bound. */
        for (uint32_t i = 0; i < n; i++)
            if (buckets[i].count >= total)
                return isinf(buckets[i].le) ? (i > 0 ? buckets[i - 1].le : 0) : buckets[i].le;
        return NAN;
    }
    rank = p / 100.0 * total;
    for (uint32_t i = 0; i < n; i++) {
        if (buckets[i].count >= rank) {
            if (isinf(buckets[i].le))
                return prev_le;
            if (buckets[i].count <= prev_cum)
                return buckets[i].le;
            return prev_le + (buckets[i].le - prev_le) * (rank - prev_cum) /
                             (buckets[i].count - prev_cum);
        }
        prev_le = buckets[i].le;
        prev_cum = buckets[i].count;
    }
    return prev_le;
}

