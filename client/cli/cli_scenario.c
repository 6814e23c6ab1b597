/*
 * cli_scenario.c - the churn generator's scenario files (ini, read with inih): a run's stages
 * and its own --threshold rules.
 *
 *   [scenario]
 *   name = churn               ; shown in the report (default: the file's name)
 *   seed = 42                  ; optional; --seed wins
 *   leak_check = 1             ; optional: the leak verdict after the run (needs --admin)
 *   checkpoint = 10            ; optional: seconds between report.json checkpoints (0: none);
 *                              ; --checkpoint wins
 *   threshold = errors==0      ; repeatable; --threshold adds more
 *   match_seconds = 60         ; optional: the server's rotation (--match-seconds), for the
 *                              ; report's matches
 *   source_addresses = auto    ; optional: auto or one (--source-addresses; it wins)
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
 *   travel = Arena seamless    ; the stage's start asks the server to travel (servertravel,
 *                              ; needs --admin); MAP alone: the server's mode; not inherited
 *
 * A stage inherits what it does not set from the stage before it, and its name differs from
 * the one before it (inih sees two same-named sections in a row as one). Errors name the file
 * and the line.
 */
#include "cli.h"

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
        st->move_pattern = o->move_pattern; /* --move-pattern, unless a stage says otherwise */
        st->hold = CLIENT_CHURN_HOLD_DEFAULT;
        st->leave = CLIENT_DISCONNECT_MIXED;
        st->impair = o->impair; /* --impair, unless a stage says otherwise */
        st->mix = o->spawn_mix; /* --spawn-mix, unless a stage says otherwise */
    }
    st->duration = 0;
    st->travel_map[0] = '\0'; /* a travel is the stage's own */
    st->travel_mode = CLIENT_TRAVEL_DEFAULT;
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
    } else if (strcmp(key, "move_pattern") == 0) {
        if (!client_move_pattern_parse(value, &st->move_pattern))
            return scenario_fail(ctx, key, value, "random or roam");
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
    } else if (strcmp(key, "travel") == 0) {
        char why[200];
        if (!client_travel_parse(value, st->travel_map, sizeof st->travel_map, &st->travel_mode,
                                 why, sizeof why)) {
            if (!ctx->failed)
                snprintf(ctx->err, ctx->err_size, "bad value '%s' for travel: %s", value, why);
            ctx->failed = true;
            return 0;
        }
        if (ctx->opts->admin_url[0] == '\0') {
            if (!ctx->failed)
                snprintf(ctx->err, ctx->err_size, "travel = %s needs --admin URL: the stage "
                         "asks the server's console to travel (servertravel)", value);
            ctx->failed = true;
            return 0;
        }
    } else {
        if (!ctx->failed)
            snprintf(ctx->err, ctx->err_size, "unknown key '%s' in a stage (known: "
                     "duration, bots, ramp, spawn, spawn_mix, moves, move_pattern, projectiles, "
                     "hold, leave, impair, travel)",
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
    } else if (strcmp(key, "checkpoint") == 0) {
        if (!scenario_number(value, 0, CLIENT_CHECKPOINT_MAX, &v))
            return scenario_fail(ctx, key, value, "seconds in [0, 3600]");
        if (!o->checkpoint_set)
            o->checkpoint_period = v;
    } else if (strcmp(key, "match_seconds") == 0) {
        if (!scenario_number(value, 0, CLIENT_DURATION_MAX, &v))
            return scenario_fail(ctx, key, value, "seconds in [0, 86400] (the server's "
                                 "--match-seconds; 0: no rotation)");
        o->match_seconds = v;
    } else if (strcmp(key, "source_addresses") == 0) {
        client_source_mode mode;

        if (!client_source_mode_parse(value, &mode))
            return scenario_fail(ctx, key, value, "auto or one");
        if (!o->source_addresses_set)
            o->source_addresses = mode;
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
                     "name, seed, leak_check, checkpoint, match_seconds, source_addresses, "
                     "threshold)", key);
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
