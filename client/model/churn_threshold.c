/*
 * churn_threshold.c - --threshold rules: the figures they may name, their units, the verdict.
 */
#include "churn_threshold.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const threshold_cmp_strs[] = { "<", "<=", ">", ">=", "==", "!=" };

const char *client_cmp_str(client_cmp cmp)
{
    return threshold_cmp_strs[cmp];
}

/* Whether name is a figure the report knows (see churn_report_metric). */
static bool threshold_name_known(const char *name)
{
    static const char *const plain[] = {
        "errors", "error_rate", "joins", "leaves", "checks", "mismatches", "spawned", "moves",
        "leaked", "server_fps", "server_tick_p50", "server_tick_p99", "server_tick_max",
        "server_gc_work_max", "server_collections", "server_cpu_seconds", "server_net_p99",
        "server_world_p99", "server_repl_p99", "server_gc_p99", "refused", "refusal_rate",
        "unknown_destroys", "generator_cpu", "generator_saturated_seconds",
        "level_load_wait_p50", "level_load_wait_p99", "levels_loaded_peak",
        "levels_pending_purge_max", "level_streams_in", "level_streams_out", "levels_survived",
        "streaming_collections", "refused_busy", "server_outages", "server_outage_seconds",
        "server_rss_peak", "server_bytes_per_connection", "server_travel_frame_max",
        "leaked_worlds", "rss_growth_per_match", "travels", "travel_refused",
    };
    static const char *const lats[] = {
        "connect", "welcome", "join", "spawn_ack", "spawn_replicated", "rtt", "check",
        "loop_lag", "travel",
    };
    static const char *const stats[] = { "p50", "p95", "p99", "max", "mean", "count" };
    const char *us = strrchr(name, '_');

    for (size_t i = 0; i < sizeof plain / sizeof *plain; i++)
        if (strcmp(name, plain[i]) == 0)
            return true;
    if (us == NULL)
        return false;
    for (size_t i = 0; i < sizeof lats / sizeof *lats; i++)
        if (strlen(lats[i]) == (size_t)(us - name) &&
            strncmp(name, lats[i], (size_t)(us - name)) == 0)
            for (size_t k = 0; k < sizeof stats / sizeof *stats; k++)
                if (strcmp(us + 1, stats[k]) == 0)
                    return true;
    return false;
}

/* What a figure measures, for the units it may be written in. */
typedef enum threshold_kind {
    THRESHOLD_COUNT,   /* a count or a rate per second: no unit */
    THRESHOLD_TIME,    /* seconds: us, ms, s or none */
    THRESHOLD_RATIO,   /* a fraction: % or none */
} threshold_kind;

static threshold_kind threshold_kind_of(const char *name)
{
    static const char *const ratios[] = { "error_rate", "refusal_rate", "generator_cpu" };
    static const char *const server_counts[] = {
        "server_fps", "server_collections", "server_outages", "server_rss_peak",
        "server_bytes_per_connection",
    };
    static const char *const stats[] = { "_p50", "_p95", "_p99", "_max", "_mean" };
    const char *us = strrchr(name, '_');

    for (size_t i = 0; i < sizeof ratios / sizeof *ratios; i++)
        if (strcmp(name, ratios[i]) == 0)
            return THRESHOLD_RATIO;
    for (size_t i = 0; i < sizeof server_counts / sizeof *server_counts; i++)
        if (strcmp(name, server_counts[i]) == 0)
            return THRESHOLD_COUNT;
    /* server_tick_*, server_*_p99, server_gc_work_max, server_cpu_seconds */
    if (strncmp(name, "server_", 7) == 0 || strcmp(name, "generator_saturated_seconds") == 0)
        return THRESHOLD_TIME;
    for (size_t i = 0; us != NULL && i < sizeof stats / sizeof *stats; i++)
        if (strcmp(us, stats[i]) == 0)
            return THRESHOLD_TIME;   /* a latency's statistic */
    return THRESHOLD_COUNT;
}

bool client_threshold_parse(const char *text, client_threshold *t, char *err, size_t err_size)
{
    const char *p = text;
    size_t n = 0;
    char *end;
    double v;

    memset(t, 0, sizeof *t);
    if (strlen(text) >= sizeof t->text) {
        snprintf(err, err_size, "bad --threshold '%.60s...': too long", text);
        return false;
    }
    snprintf(t->text, sizeof t->text, "%s", text);
    while ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= '0' && p[n] <= '9') || p[n] == '_')
        n++;
    if (n == 0 || n >= sizeof t->metric) {
        snprintf(err, err_size, "bad --threshold '%s': expected NAME OP VALUE, e.g. "
                 "'join_p99<500ms'", text);
        return false;
    }
    memcpy(t->metric, p, n);
    p += n;
    while (*p == ' ')
        p++;
    if (!threshold_name_known(t->metric)) {
        snprintf(err, err_size, "bad --threshold '%s': unknown figure '%s' (see --help)", text,
                 t->metric);
        return false;
    }
    if (strncmp(p, "<=", 2) == 0) t->cmp = CLIENT_CMP_LE, p += 2;
    else if (strncmp(p, ">=", 2) == 0) t->cmp = CLIENT_CMP_GE, p += 2;
    else if (strncmp(p, "==", 2) == 0) t->cmp = CLIENT_CMP_EQ, p += 2;
    else if (strncmp(p, "!=", 2) == 0) t->cmp = CLIENT_CMP_NE, p += 2;
    else if (*p == '<') t->cmp = CLIENT_CMP_LT, p++;
    else if (*p == '>') t->cmp = CLIENT_CMP_GT, p++;
    else {
        snprintf(err, err_size, "bad --threshold '%s': expected an operator (< <= > >= == !=) "
                 "after '%s'", text, t->metric);
        return false;
    }
    while (*p == ' ')
        p++;
    errno = 0;
    v = strtod(p, &end);
    if (end == p || errno != 0 || !isfinite(v)) {
        snprintf(err, err_size, "bad --threshold '%s': expected a number after the operator",
                 text);
        return false;
    }
    t->scale = 1;
    if (strcmp(end, "ms") == 0)
        t->scale = 1e-3;
    else if (strcmp(end, "us") == 0)
        t->scale = 1e-6;
    else if (strcmp(end, "%") == 0)
        t->scale = 1e-2;
    else if (strcmp(end, "s") != 0 && *end != '\0') {
        snprintf(err, err_size, "bad --threshold '%s': unknown unit '%s' (us, ms, s, %% or "
                 "none)", text, end);
        return false;
    }
    switch (threshold_kind_of(t->metric)) {
    case THRESHOLD_TIME:
        if (strcmp(end, "%") == 0) {
            snprintf(err, err_size, "bad --threshold '%s': '%s' is a time: write it in us, ms "
                     "or s, not %%", text, t->metric);
            return false;
        }
        break;
    case THRESHOLD_RATIO:
        if (*end != '\0' && strcmp(end, "%") != 0) {
            snprintf(err, err_size, "bad --threshold '%s': '%s' is a fraction: write it with "
                     "%% or as a plain number, not in %s", text, t->metric, end);
            return false;
        }
        break;
    case THRESHOLD_COUNT:
        if (*end != '\0') {
            snprintf(err, err_size, "bad --threshold '%s': '%s' is a count: it takes a plain "
                     "number, not %s", text, t->metric, end);
            return false;
        }
        break;
    }
    snprintf(t->unit, sizeof t->unit, "%s", end);
    t->value = v * t->scale;
    return true;
}

void client_threshold_format(const client_threshold *t, double value, char *buf, size_t size)
{
    double shown = value / (t->scale > 0 ? t->scale : 1);

    /* in the unit the threshold was written in, never in exponent form: 33090us, 0.25% */
    if (fabs(shown) >= 1e4 || shown == floor(shown))
        snprintf(buf, size, "%.0f%s", shown, t->unit);
    else
        snprintf(buf, size, "%.4g%s", shown, t->unit);
}

bool client_threshold_check(const client_threshold *t, double value)
{
    switch (t->cmp) {
    case CLIENT_CMP_LT: return value < t->value;
    case CLIENT_CMP_LE: return value <= t->value;
    case CLIENT_CMP_GT: return value > t->value;
    case CLIENT_CMP_GE: return value >= t->value;
    case CLIENT_CMP_EQ: return value == t->value;
    case CLIENT_CMP_NE: return value != t->value;
    }
    return false;
}
