/*
 * report_merge.c - one run model from its shards' (see report_merge.h).
 */
#include "report_merge.h"

#include <stdio.h>
#include <string.h>

static void merge_rows(churn_timeline *dst, const churn_timeline *src, bool take_server)
{
    for (uint32_t i = 0; i < src->n_rows; i++) {
        const churn_row *s = &src->rows[i];
        churn_row *d;

        if (i >= dst->n_rows) {
            churn_row fresh = *s;
            if (!take_server) {
                fresh.have_server = fresh.have_admin = false;
            }
            churn_timeline_add_row(dst, &fresh);
            continue;
        }
        d = &dst->rows[i];
        d->connected += s->connected;
        d->target += s->target;
        d->joins += s->joins;
        d->leaves += s->leaves;
        d->leaves_abrupt += s->leaves_abrupt;
        d->spawned += s->spawned;
        d->errors += s->errors;
        d->refused += s->refused;
        d->server_lost |= s->server_lost;
        /* Each process is its own loop: the busiest one says whether the run was saturated. */
        if (s->gen_cpu > d->gen_cpu)
            d->gen_cpu = s->gen_cpu;
        if (s->loop_lag > d->loop_lag)
            d->loop_lag = s->loop_lag;
        if (take_server) {
            churn_row keep = *d;
            *d = *s;
            d->connected = keep.connected, d->target = keep.target, d->joins = keep.joins;
            d->leaves = keep.leaves, d->leaves_abrupt = keep.leaves_abrupt;
            d->spawned = keep.spawned, d->errors = keep.errors, d->refused = keep.refused;
            d->gen_cpu = keep.gen_cpu, d->loop_lag = keep.loop_lag;
            d->server_lost = keep.server_lost;
        }
    }
}

static void merge_host(char *hosts, size_t size, const char *host)
{
    const char *p = strstr(hosts, host);
    size_t len = strlen(host), used = strlen(hosts);

    if (p != NULL && (p == hosts || p[-1] == ',') && (p[len] == '\0' || p[len] == ','))
        return;
    if (used > 0 && used + 1 < size) {
        hosts[used++] = ',';
        hosts[used] = '\0';
    }
    snprintf(hosts + used, size - used, "%s", host); /* a list too long is cut short */
}

void churn_merge_begin(churn_merge *m, churn_report *r)
{
    m->merged = r;
    m->reports = 0;
    m->have_server = false;
}

void churn_merge_add(churn_merge *m, const churn_report *one)
{
    churn_report *merged = m->merged;
    churn_timeline *tl = merged->tl;
    bool take = !m->have_server && one->server_figs.have;

    if (m->reports == 0) {
        /* The run's identity (id, scenario, seed, server) comes from the first report. */
        *merged = *one;
        merged->tl = tl;
        merged->shards = 0;
        merged->bots = 0;
        merged->host[0] = '\0';
        churn_totals_init(&merged->totals);
        memset(&merged->outages, 0, sizeof merged->outages);
        merged->partial = false;
        take = true;
    } else if (strcmp(one->source_addresses, merged->source_addresses) != 0) {
        snprintf(merged->source_addresses, sizeof merged->source_addresses, "mixed");
    }
    m->reports++;
    churn_totals_merge(&merged->totals, &one->totals);
    merged->shards += one->shards;
    merged->bots += one->bots;
    merge_host(merged->host, sizeof merged->host, one->host);
    if (strcmp(one->start_time, merged->start_time) < 0)
        memcpy(merged->start_time, one->start_time, sizeof merged->start_time);
    if (one->duration > merged->duration)
        merged->duration = one->duration;
    if (one->elapsed > merged->elapsed)
        merged->elapsed = one->elapsed;
    if (take) {
        merged->server_figs = one->server_figs;
        m->have_server = one->server_figs.have;
        tl->n_gc = tl->n_samples = 0;
        for (uint32_t k = 0; k < one->tl->n_gc; k++)
            churn_timeline_add_gc(tl, one->tl->gc_times[k]);
        for (uint32_t k = 0; k < one->tl->n_samples; k++)
            churn_timeline_add_sample(tl, one->tl->samples[k].t, one->tl->samples[k].objects);
    }
    if (!merged->leaks.checked && one->leaks.checked)
        merged->leaks = one->leaks;
    merged->interrupted |= one->interrupted;
    merged->partial |= one->partial;
    churn_outages_merge(&merged->outages, &one->outages);
    merge_rows(tl, one->tl, take);
    churn_timeline_merge_matches(tl, one->tl); /* out of memory: the matches are short */
}

bool churn_merge_add_threshold(client_threshold *list, uint32_t *n, const char *text, char *err,
                               size_t err_size)
{
    for (uint32_t i = 0; i < *n; i++)
        if (strcmp(list[i].text, text) == 0)
            return true;
    if (*n >= CLIENT_THRESHOLDS_MAX) {
        snprintf(err, err_size, "too many --threshold options (at most %d)",
                 CLIENT_THRESHOLDS_MAX);
        return false;
    }
    if (!client_threshold_parse(text, &list[*n], err, err_size))
        return false;
    (*n)++;
    return true;
}
