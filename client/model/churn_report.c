/*
 * churn_report.c - the run model's figures by name: what thresholds, the summary and `compare`
 * read.
 */
#include "churn_report.h"

#include <math.h>
#include <string.h>

const char *const churn_phase_names[CHURN_PHASE_COUNT] = { "net", "world", "repl", "gc" };

void churn_server_init(churn_server *s)
{
    memset(s, 0, sizeof *s);
    s->tick_p50 = s->tick_p99 = s->tick_max = -1;
    for (int i = 0; i < CHURN_PHASE_COUNT; i++)
        s->phase_p99[i] = -1;
    s->collections = s->gc_work_p99 = s->gc_work_max = s->gc_work_sum = -1;
    s->bytes_sent = s->cpu_seconds = -1;
    s->objects_first = s->objects_last = s->objects_peak = s->rss_peak = -1;
    s->levels_loaded_peak = s->level_load_wait_p50 = s->level_load_wait_p99 = -1;
    s->levels_pending_purge_max = s->level_streams_in = s->level_streams_out = -1;
    s->levels_survived = s->streaming_collections = -1;
}

static bool churn_lat_by_name(const char *name, size_t len, churn_lat *out)
{
    for (int i = 0; i < CHURN_LAT_COUNT; i++)
        if (strlen(churn_lat_names[i]) == len && strncmp(churn_lat_names[i], name, len) == 0) {
            *out = (churn_lat)i;
            return true;
        }
    return false;
}

static double churn_or_nan(double v)
{
    return v < 0 ? NAN : v;
}

static double churn_lat_stat(const hist *h, const char *stat)
{
    if (h->n == 0)
        return NAN;
    if (strcmp(stat, "p50") == 0)
        return (double)hist_percentile(h, 50) / 1e6;
    if (strcmp(stat, "p95") == 0)
        return (double)hist_percentile(h, 95) / 1e6;
    if (strcmp(stat, "p99") == 0)
        return (double)hist_percentile(h, 99) / 1e6;
    if (strcmp(stat, "max") == 0)
        return (double)h->max / 1e6;
    if (strcmp(stat, "mean") == 0)
        return hist_mean(h) / 1e6;
    if (strcmp(stat, "count") == 0)
        return (double)h->n;
    return NAN;
}

/* Bytes per second per connection: bytes sent over the run / seconds / mean players. */
double churn_bytes_per_conn(const churn_server *s)
{
    if (!s->have || s->bytes_sent < 0 || s->seconds <= 0 || s->players_mean <= 0)
        return -1;
    return s->bytes_sent / s->seconds / s->players_mean;
}

bool churn_report_metric(const churn_report *r, const char *name, double *out)
{
    const churn_totals *t = &r->totals;
    const churn_server *s = &r->server_figs;
    const char *us = strrchr(name, '_');
    churn_lat lat;

    if (strcmp(name, "errors") == 0) {
        *out = (double)churn_totals_errors(t);
    } else if (strcmp(name, "error_rate") == 0) {
        *out = t->joins ? (double)churn_totals_errors(t) / (double)t->joins : NAN;
    } else if (strcmp(name, "refused") == 0) {
        *out = (double)t->refused;
    } else if (strcmp(name, "refused_busy") == 0) {
        *out = (double)t->refused_busy;
    } else if (strcmp(name, "server_outages") == 0) {
        *out = (double)r->outages.n;
    } else if (strcmp(name, "server_outage_seconds") == 0) {
        *out = churn_outages_seconds(&r->outages, r->elapsed);
    } else if (strcmp(name, "travels") == 0) {
        *out = (double)t->travels;
    } else if (strcmp(name, "travel_refused") == 0) {
        *out = (double)t->travel_refused;
    } else if (strcmp(name, "server_travel_frame_max") == 0) {
        *out = r->tl != NULL ? churn_timeline_travel_frame_max(r->tl) : NAN;
    } else if (strcmp(name, "leaked_worlds") == 0) {
        *out = r->tl != NULL ? churn_timeline_leaked_worlds(r->tl) : NAN;
    } else if (strcmp(name, "rss_growth_per_match") == 0) {
        *out = r->tl != NULL ? churn_timeline_rss_growth_per_match(r->tl) : NAN;
    } else if (strcmp(name, "refusal_rate") == 0) {
        *out = t->joins + t->refused ? (double)t->refused / (double)(t->joins + t->refused) : NAN;
    } else if (strcmp(name, "unknown_destroys") == 0) {
        *out = (double)t->unknown_destroys;
    } else if (strcmp(name, "generator_cpu") == 0) {
        *out = t->gen_seconds ? (double)t->gen_cpu_us / 1e6 / (double)t->gen_seconds : NAN;
    } else if (strcmp(name, "generator_saturated_seconds") == 0) {
        *out = t->gen_seconds ? (double)t->gen_saturated : NAN;
    } else if (strcmp(name, "joins") == 0) {
        *out = (double)t->joins;
    } else if (strcmp(name, "leaves") == 0) {
        *out = (double)t->leaves;
    } else if (strcmp(name, "checks") == 0) {
        *out = (double)t->checks;
    } else if (strcmp(name, "mismatches") == 0) {
        *out = (double)t->errors[CHURN_ERR_MISMATCH];
    } else if (strcmp(name, "spawned") == 0) {
        *out = (double)t->spawned;
    } else if (strcmp(name, "moves") == 0) {
        *out = (double)t->moves;
    } else if (strcmp(name, "leaked") == 0) {
        *out = r->leaks.supported && r->leaks.leaked >= 0 ? (double)r->leaks.leaked : NAN;
    } else if (strcmp(name, "server_fps") == 0) {
        *out = s->have && s->seconds > 0 && s->frames >= 0 ? s->frames / s->seconds : NAN;
    } else if (strcmp(name, "server_tick_p50") == 0) {
        *out = churn_or_nan(s->tick_p50);
    } else if (strcmp(name, "server_tick_p99") == 0) {
        *out = churn_or_nan(s->tick_p99);
    } else if (strcmp(name, "server_tick_max") == 0) {
        *out = churn_or_nan(s->tick_max);
    } else if (strcmp(name, "server_gc_work_max") == 0) {
        *out = churn_or_nan(s->gc_work_max);
    } else if (strcmp(name, "server_collections") == 0) {
        *out = churn_or_nan(s->collections);
    } else if (strcmp(name, "server_cpu_seconds") == 0) {
        *out = churn_or_nan(s->cpu_seconds);
    } else if (strcmp(name, "server_rss_peak") == 0) {
        *out = s->have ? churn_or_nan(s->rss_peak) : NAN;
    } else if (strcmp(name, "server_bytes_per_connection") == 0) {
        *out = churn_or_nan(churn_bytes_per_conn(s));
    } else if (strcmp(name, "level_load_wait_p50") == 0) {
        *out = s->have ? churn_or_nan(s->level_load_wait_p50) : NAN;
    } else if (strcmp(name, "level_load_wait_p99") == 0) {
        *out = s->have ? churn_or_nan(s->level_load_wait_p99) : NAN;
    } else if (strcmp(name, "levels_loaded_peak") == 0) {
        *out = s->have ? churn_or_nan(s->levels_loaded_peak) : NAN;
    } else if (strcmp(name, "levels_pending_purge_max") == 0) {
        *out = s->have ? churn_or_nan(s->levels_pending_purge_max) : NAN;
    } else if (strcmp(name, "level_streams_in") == 0) {
        *out = s->have ? churn_or_nan(s->level_streams_in) : NAN;
    } else if (strcmp(name, "level_streams_out") == 0) {
        *out = s->have ? churn_or_nan(s->level_streams_out) : NAN;
    } else if (strcmp(name, "levels_survived") == 0) {
        *out = s->have ? churn_or_nan(s->levels_survived) : NAN;
    } else if (strcmp(name, "streaming_collections") == 0) {
        *out = s->have ? churn_or_nan(s->streaming_collections) : NAN;
    } else if (strncmp(name, "server_", 7) == 0 && us != NULL && strcmp(us, "_p99") == 0) {
        *out = NAN;
        for (int i = 0; i < CHURN_PHASE_COUNT; i++)
            if (strlen(churn_phase_names[i]) == (size_t)(us - name - 7) &&
                strncmp(name + 7, churn_phase_names[i], (size_t)(us - name - 7)) == 0)
                *out = churn_or_nan(s->phase_p99[i]);
        return true;
    } else if (us != NULL && churn_lat_by_name(name, (size_t)(us - name), &lat)) {
        *out = churn_lat_stat(&t->lat[lat], us + 1);
        return !isnan(*out) || t->lat[lat].n == 0;
    } else {
        return false;
    }
    return true;
}
