/*
 * client_scenario.c - the churn generator's scenario files (ini, read with inih), its stages,
 * and the --threshold rules.
 *
 *   [scenario]
 *   name = churn               ; shown in the report (default: the file's name)
 *   seed = 42                  ; optional; --seed wins
 *   leak_check = 1             ; optional: the leak verdict after the run (needs --admin)
 *   threshold = errors==0      ; repeatable; --threshold adds more
 *
 *   [stage ramp-up]            ; stages run in file order
 *   duration = 10              ; seconds, required
 *   bots = 500                 ; bots taking part at the end of the stage (0: all leave)
 *   ramp = linear              ; linear from the previous stage's bots, or step (default)
 *   spawn = 10                 ; props per visit
 *   moves = 10                 ; MoveInputs per second per bot
 *   projectiles = 0            ; projectiles per second per bot while holding
 *   hold = 10                  ; a visit holds U(0.5, 1.5) x hold seconds
 *   leave = mixed              ; graceful, abrupt or mixed
 *   impair = loss=2%,latency=60ms,jitter=15ms,dup=0.5%,reorder=1%   ; or none (default: --impair)
 *
 * A stage inherits what it does not set from the stage before it, and its name differs from
 * the one before it (inih sees two same-named sections in a row as one). Errors name the file
 * and the line.
 */
#include "client.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct scenario_ctx {
    client_options *opts;
    const char *path;
    char *err;
    size_t err_size;
    bool failed;
    bool in_stage;
    bool ramp;                  /* the current stage ramps */
    bool have_duration;
    char section[80];           /* the section of the previous key */
} scenario_ctx;

static bool scenario_number(const char *text, double min, double max, double *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(text, &end);
    if (text[0] == '\0' || errno != 0 || *end != '\0' || !(v >= min) || !(v <= max))
        return false;
    *out = v;
    return true;
}

/* Closes the stage being read: checks it and fixes where its ramp starts. */
static bool scenario_end_stage(scenario_ctx *ctx)
{
    client_options *o = ctx->opts;
    client_stage *st;

    if (!ctx->in_stage)
        return true;
    st = &o->stages[o->n_stages - 1];
    if (!ctx->have_duration) {
        snprintf(ctx->err, ctx->err_size, "stage '%s' has no duration (seconds)",
                 st->name);
        return false;
    }
    st->bots_from = ctx->ramp && o->n_stages > 1 ? o->stages[o->n_stages - 2].bots_to :
                    ctx->ramp ? 0 : st->bots_to;
    ctx->in_stage = false;
    return true;
}

static int scenario_fail(scenario_ctx *ctx, const char *key, const char *value,
                         const char *expected)
{
    if (!ctx->failed)
        snprintf(ctx->err, ctx->err_size, "bad value '%s' for %s: expected %s",
                 value, key, expected);
    ctx->failed = true;
    return 0;
}

static int scenario_section(scenario_ctx *ctx, const char *section)
{
    client_options *o = ctx->opts;
    client_stage *st;

    if (strcmp(section, "scenario") == 0)
        return scenario_end_stage(ctx);
    if (strncmp(section, "stage", 5) != 0 || (section[5] != '\0' && section[5] != ' ')) {
        if (!ctx->failed)
            snprintf(ctx->err, ctx->err_size, "unknown section [%s]: expected "
                     "[scenario] or [stage NAME]", section);
        ctx->failed = true;
        return 0;
    }
    if (!scenario_end_stage(ctx))
        return 0;
    if (o->n_stages >= CLIENT_STAGES_MAX) {
        snprintf(ctx->err, ctx->err_size, "too many stages (at most %d)",
                 CLIENT_STAGES_MAX);
        return 0;
    }
    st = &o->stages[o->n_stages];
    if (o->n_stages > 0) {
        *st = o->stages[o->n_stages - 1]; /* inherit the behaviour */
    } else {
        memset(st, 0, sizeof *st);
        st->spawn = CLIENT_CHURN_SPAWN_DEFAULT;
        st->move_hz = CLIENT_CHURN_MOVE_HZ_DEFAULT;
        st->hold = CLIENT_CHURN_HOLD_DEFAULT;
        st->leave = CLIENT_DISCONNECT_MIXED;
        st->impair = o->impair; /* --impair, unless a stage says otherwise */
        st->mix = o->spawn_mix; /* --spawn-mix, unless a stage says otherwise */
    }
    st->duration = 0;
    snprintf(st->name, sizeof st->name, "%s",
             section[5] == ' ' && section[6] != '\0' ? section + 6 : "stage");
    o->n_stages++;
    ctx->in_stage = true;
    ctx->ramp = false;
    ctx->have_duration = false;
    return 1;
}

static int scenario_stage_key(scenario_ctx *ctx, client_stage *st, const char *key,
                              const char *value)
{
    double v;

    if (strcmp(key, "duration") == 0) {
        if (!scenario_number(value, 0, CLIENT_DURATION_MAX, &v) || v <= 0)
            return scenario_fail(ctx, key, value, "seconds in (0, 86400]");
        st->duration = v;
        ctx->have_duration = true;
    } else if (strcmp(key, "bots") == 0) {
        if (!scenario_number(value, 0, CLIENT_BOTS_MAX, &v) || v != floor(v))
            return scenario_fail(ctx, key, value, "an integer in [0, 1000]");
        st->bots_to = (uint32_t)v;
    } else if (strcmp(key, "ramp") == 0) {
        if (strcmp(value, "linear") != 0 && strcmp(value, "step") != 0)
            return scenario_fail(ctx, key, value, "linear or step");
        ctx->ramp = value[0] == 'l';
    } else if (strcmp(key, "spawn") == 0) {
        if (!scenario_number(value, 0, 100000, &v) || v != floor(v))
            return scenario_fail(ctx, key, value, "an integer in [0, 100000]");
        st->spawn = (uint32_t)v;
    } else if (strcmp(key, "spawn_mix") == 0) {
        char why[200];
        if (!client_spawn_mix_parse(value, &st->mix, why, sizeof why)) {
            if (!ctx->failed)
                snprintf(ctx->err, ctx->err_size, "bad value '%s' for spawn_mix: %s", value,
                         why);
            ctx->failed = true;
            return 0;
        }
    } else if (strcmp(key, "moves") == 0) {
        if (!scenario_number(value, 0, CLIENT_MOVE_HZ_MAX, &st->move_hz))
            return scenario_fail(ctx, key, value, "a rate per second in [0, 60]");
    } else if (strcmp(key, "projectiles") == 0) {
        if (!scenario_number(value, 0, CLIENT_PROJECTILE_HZ_MAX, &st->projectile_hz))
            return scenario_fail(ctx, key, value, "a rate per second in [0, 20]");
    } else if (strcmp(key, "hold") == 0) {
        if (!scenario_number(value, 0, 86400, &st->hold))
            return scenario_fail(ctx, key, value, "seconds in [0, 86400]");
    } else if (strcmp(key, "leave") == 0) {
        if (!client_disconnect_parse(value, &st->leave))
            return scenario_fail(ctx, key, value, "graceful, abrupt or mixed");
    } else if (strcmp(key, "impair") == 0) {
        char why[200];
        if (!client_impair_parse(value, &st->impair, why, sizeof why))
            return scenario_fail(ctx, key, value, "none or a list such as loss=2%,latency=60ms,"
                                 "jitter=15ms,dup=0.5%,reorder=1%");
    } else {
        if (!ctx->failed)
            snprintf(ctx->err, ctx->err_size, "unknown key '%s' in a stage (known: "
                     "duration, bots, ramp, spawn, spawn_mix, moves, projectiles, hold, leave, "
                     "impair)",
                     key);
        ctx->failed = true;
        return 0;
    }
    return 1;
}

static int scenario_run_key(scenario_ctx *ctx, const char *key, const char *value)
{
    client_options *o = ctx->opts;
    char terr[200];
    double v;

    if (strcmp(key, "name") == 0) {
        snprintf(o->scenario_name, sizeof o->scenario_name, "%s", value);
    } else if (strcmp(key, "seed") == 0) {
        if (!scenario_number(value, 0, 1.8e19, &v) || v != floor(v))
            return scenario_fail(ctx, key, value, "a non-negative integer");
        if (!o->seed_set) {
            o->seed = strtoull(value, NULL, 10);
            o->seed_set = true;
        }
    } else if (strcmp(key, "leak_check") == 0) {
        if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0)
            return scenario_fail(ctx, key, value, "0 or 1");
        o->leak_check = o->leak_check || value[0] == '1';
    } else if (strcmp(key, "threshold") == 0) {
        if (o->n_thresholds >= CLIENT_THRESHOLDS_MAX ||
            !client_threshold_parse(value, &o->thresholds[o->n_thresholds], terr, sizeof terr)) {
            if (!ctx->failed)
                snprintf(ctx->err, ctx->err_size, "%s",
                         o->n_thresholds >= CLIENT_THRESHOLDS_MAX ? "too many thresholds" : terr);
            ctx->failed = true;
            return 0;
        }
        o->n_thresholds++;
    } else {
        if (!ctx->failed)
            snprintf(ctx->err, ctx->err_size, "unknown key '%s' in [scenario] (known: "
                     "name, seed, leak_check, threshold)", key);
        ctx->failed = true;
        return 0;
    }
    return 1;
}

static int scenario_ini_cb(void *user, const char *section, const char *key, const char *value)
{
    scenario_ctx *ctx = user;

    if (ctx->failed)
        return 0; /* keep the first error's message */
    /* inih reports keys with their section; a section begins where the name changes. */
    if (strcmp(section, ctx->section) != 0) {
        snprintf(ctx->section, sizeof ctx->section, "%s", section);
        if (!scenario_section(ctx, section))
            return 0;
    }
    if (ctx->in_stage)
        return scenario_stage_key(ctx, &ctx->opts->stages[ctx->opts->n_stages - 1], key, value);
    if (strcmp(section, "scenario") == 0)
        return scenario_run_key(ctx, key, value);
    ctx->failed = true;
    snprintf(ctx->err, ctx->err_size, "'%s' outside a section: expected [scenario] or "
             "[stage NAME] first", key);
    return 0;
}

bool client_scenario_load(client_options *opts, const char *path, char *err, size_t err_size)
{
    char msg[400] = "";
    scenario_ctx ctx = { opts, path, msg, sizeof msg, false, false, false, false, "" };
    const char *base = strrchr(path, '/');
    int line;

    opts->n_stages = 0;
    line = ini_parse(path, scenario_ini_cb, &ctx);
    if (line < 0) {
        snprintf(err, err_size, "cannot read the scenario file '%s': %s", path,
                 line == -1 ? strerror(errno) : "out of memory");
        return false;
    }
    if (line > 0 || ctx.failed) {
        snprintf(err, err_size, "%s:%d: %s", path, line, msg[0] != '\0' ? msg :
                 "not an ini line (expected [section] or key = value)");
        return false;
    }
    if (!scenario_end_stage(&ctx)) {
        snprintf(err, err_size, "%s: at the end: %s", path, msg);
        return false;
    }
    if (opts->n_stages == 0) {
        snprintf(err, err_size, "%s: no [stage NAME] section: a scenario needs at least one",
                 path);
        return false;
    }
    if (opts->scenario_name[0] == '\0') {
        const char *dot;
        base = base != NULL ? base + 1 : path;
        dot = strrchr(base, '.');
        snprintf(opts->scenario_name, sizeof opts->scenario_name, "%.*s",
                 (int)(dot != NULL ? dot - base : (long)strlen(base)), base);
    }
    opts->bots = 0;
    opts->duration = 0;
    for (uint32_t i = 0; i < opts->n_stages; i++) {
        const client_stage *st = &opts->stages[i];
        if (st->bots_to > opts->bots)
            opts->bots = st->bots_to;
        if (st->bots_from > opts->bots)
            opts->bots = st->bots_from;
        opts->duration += st->duration;
    }
    if (opts->bots == 0) {
        snprintf(err, err_size, "%s: no stage has any bots (set bots = N in a stage)", path);
        return false;
    }
    return true;
}

uint32_t client_stages_target(const client_options *opts, double t, uint32_t *out_stage)
{
    double start = 0;

    for (uint32_t i = 0; i < opts->n_stages; i++) {
        const client_stage *st = &opts->stages[i];
        if (t < start + st->duration || i + 1 == opts->n_stages) {
            double u = (t - start) / st->duration;
            if (u > 1)
                u = 1;
            if (u < 0)
                u = 0;
            *out_stage = i;
            return (uint32_t)lround(st->bots_from + ((double)st->bots_to - st->bots_from) * u);
        }
        start += st->duration;
    }
    *out_stage = 0;
    return 0;
}

/* ---- thresholds ------------------------------------------------------------------------ */

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
    };
    static const char *const lats[] = {
        "connect", "welcome", "join", "spawn_ack", "spawn_replicated", "rtt", "check",
        "loop_lag",
    };
    static const char *const stats[] = { "p50", "p95", "p99", "max", "mean", "count" };
    const char *us = strrchr(name, '_');

    for (size_t i = 0; i < sizeof plain / sizeof *plain; i++)
        if (strcmp(name, plain[i]) == 0)
            return true;
    if (us == NULL)
        return false;
    for (size_t i = 0; i < sizeof lats / sizeof *lats; i++)
        if (strlen(lats[i]) == (size_t)(us - name) && strncmp(name, lats[i], (size_t)(us - name)) == 0)
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
    static const char *const stats[] = { "_p50", "_p95", "_p99", "_max", "_mean" };
    const char *us = strrchr(name, '_');

    for (size_t i = 0; i < sizeof ratios / sizeof *ratios; i++)
        if (strcmp(name, ratios[i]) == 0)
            return THRESHOLD_RATIO;
    if (strcmp(name, "server_fps") == 0 || strcmp(name, "server_collections") == 0)
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

static bool mix_name_ok(const char *s, size_t len)
{
    if (len == 0 || len >= CLIENT_MIX_NAME_MAX)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            return false;
    return true;
}

bool client_spawn_mix_parse(const char *text, client_spawn_mix *out, char *err,
                            size_t err_size)
{
    client_spawn_mix m;
    const char *p = text;

    memset(&m, 0, sizeof m);
    while (*p == ' ')
        p++;
    if (strcmp(p, "none") == 0 || *p == '\0') {
        *out = m;
        return true;
    }
    while (*p != '\0') {
        const char *end = strchr(p, ','), *colon;
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        char term[80], *num_end;
        unsigned long n;

        while (len > 0 && *p == ' ')
            p++, len--;
        while (len > 0 && p[len - 1] == ' ')
            len--;
        snprintf(term, sizeof term, "%.*s", (int)(len < 60 ? len : 60), p);
        colon = memchr(p, ':', len);
        if (colon == NULL || !mix_name_ok(p, (size_t)(colon - p))) {
            snprintf(err, err_size, "bad spawn mix entry '%s': expected NAME:N (an archetype's "
                     "name, 1-%d letters, digits or _, and a count)", term,
                     CLIENT_MIX_NAME_MAX - 1);
            return false;
        }
        errno = 0;
        n = colon + 1 < p + len && colon[1] >= '0' && colon[1] <= '9'
                ? strtoul(colon + 1, &num_end, 10) : 0;
        if (n < 1 || n > CLIENT_MIX_COUNT_MAX || errno != 0 || num_end != p + len) {
            snprintf(err, err_size, "bad spawn mix entry '%s': the count must be an integer in "
                     "[1, %d]", term, CLIENT_MIX_COUNT_MAX);
            return false;
        }
        for (uint32_t i = 0; i < m.n; i++)
            if (strlen(m.name[i]) == (size_t)(colon - p) &&
                memcmp(m.name[i], p, (size_t)(colon - p)) == 0) {
                snprintf(err, err_size, "bad spawn mix: '%.*s' is named twice", (int)(colon - p),
                         p);
                return false;
            }
        if (m.n >= CLIENT_MIX_MAX) {
            snprintf(err, err_size, "bad spawn mix: more than %d archetypes", CLIENT_MIX_MAX);
            return false;
        }
        snprintf(m.name[m.n], sizeof m.name[m.n], "%.*s", (int)(colon - p), p);
        m.count[m.n++] = (uint32_t)n;
        if (end == NULL)
            break;
        p = end + 1;
        if (*p == '\0') {
            snprintf(err, err_size, "bad spawn mix: it ends with a comma");
            return false;
        }
    }
    *out = m;
    return true;
}

uint32_t client_spawn_mix_total(const client_spawn_mix *m)
{
    uint32_t t = 0;

    for (uint32_t i = 0; i < m->n; i++)
        t += m->count[i];
    return t;
}

void client_spawn_mix_format(const client_spawn_mix *m, char *buf, size_t size)
{
    size_t n = 0;

    if (size == 0)
        return;
    buf[0] = '\0';
    if (m->n == 0) {
        snprintf(buf, size, "none");
        return;
    }
    for (uint32_t i = 0; i < m->n && n < size; i++) {
        int k = snprintf(buf + n, size - n, "%s%s:%u", i > 0 ? "," : "", m->name[i],
                         m->count[i]);
        if (k < 0)
            break;
        n += (size_t)k;
    }
}
