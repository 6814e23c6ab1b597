/*
 * churn_plan.c - the values a churn plan is made of, read from and written as text: how a
 * visit leaves, a spawn mix, a network impairment; and where in its stages a run is.
 */
#include "churn_plan.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- leaving ----------------------------------------------------------------------------- */

bool client_disconnect_parse(const char *text, client_disconnect *out)
{
    if (strcmp(text, "graceful") == 0)
        *out = CLIENT_DISCONNECT_GRACEFUL;
    else if (strcmp(text, "abrupt") == 0)
        *out = CLIENT_DISCONNECT_ABRUPT;
    else if (strcmp(text, "mixed") == 0)
        *out = CLIENT_DISCONNECT_MIXED;
    else
        return false;
    return true;
}

const char *client_move_pattern_name(client_move_pattern p)
{
    return p == CLIENT_MOVE_ROAM ? "roam" : "random";
}

bool client_move_pattern_parse(const char *text, client_move_pattern *out)
{
    if (strcmp(text, "random") == 0)
        *out = CLIENT_MOVE_RANDOM;
    else if (strcmp(text, "roam") == 0)
        *out = CLIENT_MOVE_ROAM;
    else
        return false;
    return true;
}

const char *client_disconnect_name(client_disconnect d)
{
    switch (d) {
    case CLIENT_DISCONNECT_GRACEFUL: return "graceful";
    case CLIENT_DISCONNECT_ABRUPT: return "abrupt";
    case CLIENT_DISCONNECT_MIXED: return "mixed";
    }
    return "?";
}

/* ---- impaired networks: the option's text --------------------------------------------- */

static bool impair_number(const char *text, double *out, const char **out_end)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(text, &end);
    if (end == text || errno != 0 || !isfinite(v) || v < 0)
        return false;
    *out = v;
    *out_end = end;
    return true;
}

static bool impair_percent(const char *text, double *out)
{
    const char *end;
    double v;

    if (!impair_number(text, &v, &end) || v > 100 || (strcmp(end, "%") != 0 && *end != '\0'))
        return false;
    *out = v / 100.0;
    return true;
}

static bool impair_time(const char *text, double *out)
{
    const char *end;
    double v, scale;

    if (!impair_number(text, &v, &end))
        return false;
    if (*end == '\0' || strcmp(end, "ms") == 0)
        scale = 1e-3;
    else if (strcmp(end, "s") == 0)
        scale = 1;
    else if (strcmp(end, "us") == 0)
        scale = 1e-6;
    else
        return false;
    if (v * scale > CLIENT_IMPAIR_LATENCY_MAX)
        return false;
    *out = v * scale;
    return true;
}

bool client_impair_active(const client_impair *im)
{
    return im->loss > 0 || im->latency > 0 || im->jitter > 0 || im->dup > 0 || im->reorder > 0;
}

bool client_impair_parse(const char *text, client_impair *out, char *err, size_t err_size)
{
    client_impair im;
    char buf[256], *save = NULL;

    memset(&im, 0, sizeof im);
    if (strlen(text) >= sizeof buf) {
        snprintf(err, err_size, "bad --impair value: longer than %zu characters", sizeof buf - 1);
        return false;
    }
    if (strcmp(text, "none") == 0 || text[0] == '\0') {
        *out = im;
        return true;
    }
    snprintf(buf, sizeof buf, "%s", text);
    for (char *part = strtok_r(buf, ",", &save); part != NULL;
         part = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(part, '=');
        const char *key = part, *value;
        bool ok;

        if (eq == NULL) {
            snprintf(err, err_size, "bad --impair part '%s': expected KEY=VALUE with KEY one of "
                     "loss, latency, jitter, dup, reorder", part);
            return false;
        }
        *eq = '\0';
        value = eq + 1;
        if (strcmp(key, "loss") == 0)
            ok = impair_percent(value, &im.loss);
        else if (strcmp(key, "dup") == 0)
            ok = impair_percent(value, &im.dup);
        else if (strcmp(key, "reorder") == 0)
            ok = impair_percent(value, &im.reorder);
        else if (strcmp(key, "latency") == 0)
            ok = impair_time(value, &im.latency);
        else if (strcmp(key, "jitter") == 0)
            ok = impair_time(value, &im.jitter);
        else {
            snprintf(err, err_size, "bad --impair part '%s=%s': unknown key (known: loss, "
                     "latency, jitter, dup, reorder)", key, value);
            return false;
        }
        if (!ok) {
            snprintf(err, err_size, "bad value '%s' for %s in --impair: expected %s", value, key,
                     key[0] == 'l' && key[1] == 'a' ? "a time in [0, 10 s] (60ms, 0.06s)" :
                     key[0] == 'j' ? "a time in [0, 10 s] (15ms)" :
                     "a percentage in [0, 100] (2%)");
            return false;
        }
    }
    *out = im;
    return true;
}

void client_impair_format(const client_impair *im, char *buf, size_t size)
{
    size_t len = 0;

    buf[0] = '\0';
    if (!client_impair_active(im)) {
        snprintf(buf, size, "none");
        return;
    }
#define IMPAIR_PART(cond, fmt, v) \
    if ((cond) && len < size) \
        len += (size_t)snprintf(buf + len, size - len, "%s" fmt, len ? "," : "", v)
    IMPAIR_PART(im->loss > 0, "loss=%g%%", im->loss * 100);
    IMPAIR_PART(im->latency > 0, "latency=%gms", im->latency * 1e3);
    IMPAIR_PART(im->jitter > 0, "jitter=%gms", im->jitter * 1e3);
    IMPAIR_PART(im->dup > 0, "dup=%g%%", im->dup * 100);
    IMPAIR_PART(im->reorder > 0, "reorder=%g%%", im->reorder * 100);
#undef IMPAIR_PART
}

/* ---- spawn mixes ------------------------------------------------------------------------- */

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

/* ---- travel ------------------------------------------------------------------------------ */

const char *client_travel_mode_name(client_travel_mode m)
{
    return m == CLIENT_TRAVEL_HARD ? "hard" : m == CLIENT_TRAVEL_SEAMLESS ? "seamless" :
           "default";
}

bool client_travel_parse(const char *text, char *map, size_t map_size, client_travel_mode *mode,
                         char *err, size_t err_size)
{
    const char *p = text, *name;
    size_t len;

    while (*p == ' ')
        p++;
    name = p;
    while (*p != '\0' && *p != ' ')
        p++;
    len = (size_t)(p - name);
    if (len == 0 || !mix_name_ok(name, len) || len >= map_size) {
        snprintf(err, err_size, "expected MAP [seamless|hard] (a map's name, 1-%d letters, "
                 "digits or _, as a [map NAME] section of the server's world profile)",
                 CLIENT_MAP_NAME_MAX - 1);
        return false;
    }
    while (*p == ' ')
        p++;
    if (*p == '\0')
        *mode = CLIENT_TRAVEL_DEFAULT;
    else if (strcmp(p, "seamless") == 0)
        *mode = CLIENT_TRAVEL_SEAMLESS;
    else if (strcmp(p, "hard") == 0)
        *mode = CLIENT_TRAVEL_HARD;
    else {
        snprintf(err, err_size, "'%s' is not a travel mode (seamless or hard; none: the "
                 "server's own)", p);
        return false;
    }
    snprintf(map, map_size, "%.*s", (int)len, name);
    return true;
}

/* ---- stages ------------------------------------------------------------------------------ */

uint32_t client_stages_target(const client_stage *stages, uint32_t n_stages, double t,
                              uint32_t *out_stage)
{
    double start = 0;

    for (uint32_t i = 0; i < n_stages; i++) {
        const client_stage *st = &stages[i];
        if (t < start + st->duration || i + 1 == n_stages) {
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

void churn_describe_impairment(const client_stage *stages, uint32_t n_stages, char *buf,
                               size_t size)
{
    bool same = true, any = false;
    size_t len = 0;

    for (uint32_t i = 0; i < n_stages; i++) {
        any |= client_impair_active(&stages[i].impair);
        same &= memcmp(&stages[i].impair, &stages[0].impair, sizeof(client_impair)) == 0;
    }
    if (!any || same) {
        client_impair_format(&stages[0].impair, buf, size);
        return;
    }
    buf[0] = '\0';
    for (uint32_t i = 0; i < n_stages && len < size; i++) {
        char one[160];
        client_impair_format(&stages[i].impair, one, sizeof one);
        len += (size_t)snprintf(buf + len, size - len, "%s%s: %s", i ? "; " : "",
                                stages[i].name, one);
    }
}
