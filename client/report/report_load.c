/*
 * report_load.c - reads a run's report.json back (what `reap-client merge` merges), with
 * jansson: the same file tools and people read, not a second format.
 *
 * Everything that merges is there exactly: counts as integers, each latency histogram as its
 * non-empty buckets [low_us, high_us, count] with min_us, max_us and sum_us, the server's
 * figures, the timeline's rows, the collections' times and the object samples, and the
 * thresholds the run was given (as text: they are parsed again).
 */
#include "report.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

typedef struct load_ctx {
    const char *path;
    char *err;
    size_t err_size;
    bool ok;
} load_ctx;

static void load_fail(load_ctx *c, const char *what)
{
    if (c->ok)
        snprintf(c->err, c->err_size, "%s: not a reap-client report (schema %d): %s", c->path,
                 CHURN_REPORT_SCHEMA, what);
    c->ok = false;
}

static json_t *load_obj(load_ctx *c, json_t *parent, const char *key)
{
    json_t *v = json_object_get(parent, key);

    if (!json_is_object(v)) {
        char what[96];
        snprintf(what, sizeof what, "'%s' is missing or not an object", key);
        load_fail(c, what);
        return NULL;
    }
    return v;
}

static uint64_t load_u64(load_ctx *c, json_t *parent, const char *key)
{
    json_t *v = json_object_get(parent, key);
    char what[96];

    if (json_is_integer(v) && json_integer_value(v) >= 0)
        return (uint64_t)json_integer_value(v);
    snprintf(what, sizeof what, "'%s' is missing or not a count", key);
    load_fail(c, what);
    return 0;
}

/* A count a report of an earlier version may lack (0 then). */
static uint64_t load_u64_or_0(load_ctx *c, json_t *parent, const char *key)
{
    return json_object_get(parent, key) == NULL ? 0 : load_u64(c, parent, key);
}

/* A number divided by div (1e3 for ms; a division rounds once, so "4" ms reads back as the
 * same double as 0.004 s); null (not measured) and a missing key are -1. */
static double load_num(json_t *parent, const char *key, double div)
{
    json_t *v = json_object_get(parent, key);

    return json_is_number(v) ? json_number_value(v) / div : -1;
}

static void load_str(json_t *parent, const char *key, char *dst, size_t size)
{
    json_t *v = json_object_get(parent, key);

    snprintf(dst, size, "%s", json_is_string(v) ? json_string_value(v) : "");
}

static void load_hist(load_ctx *c, json_t *h, hist *out)
{
    json_t *buckets = json_object_get(h, "buckets"), *b;
    size_t i;

    hist_init(out);
    out->n = load_u64(c, h, "count");
    if (out->n == 0)
        return;
    out->min = load_u64(c, h, "min_us");
    out->max = load_u64(c, h, "max_us");
    out->sum = load_u64(c, h, "sum_us");
    if (!json_is_array(buckets)) {
        load_fail(c, "a latency without buckets");
        return;
    }
    json_array_foreach(buckets, i, b) {
        json_int_t low = json_integer_value(json_array_get(b, 0));
        json_int_t count = json_integer_value(json_array_get(b, 2));
        uint32_t k;

        if (json_array_size(b) != 3 || low < 0 || count < 0) {
            load_fail(c, "a latency bucket is not [low_us, high_us, count]");
            return;
        }
        k = hist_bucket_of((uint64_t)low);
        if (hist_bucket_low(k) != (uint64_t)low) {
            load_fail(c, "a latency bucket's bounds are not this build's");
            return;
        }
        out->counts[k] += (uint64_t)count;
    }
}

static void load_server(json_t *s, churn_server *out)
{
    json_t *sampled = json_object_get(s, "sampled");

    churn_server_init(out);
    out->have = json_is_true(sampled);
    out->scrapes = (uint32_t)json_integer_value(json_object_get(s, "scrapes"));
    out->scrape_errors = (uint32_t)json_integer_value(json_object_get(s, "scrape_errors"));
    out->seconds = load_num(s, "seconds", 1);
    out->frames = load_num(s, "frames", 1);
    out->tick_p50 = load_num(s, "tick_p50_ms", 1e3);
    out->tick_p99 = load_num(s, "tick_p99_ms", 1e3);
    out->tick_max = load_num(s, "tick_max_ms", 1e3);
    for (int i = 0; i < CHURN_PHASE_COUNT; i++) {
        char key[40];
        snprintf(key, sizeof key, "phase_%s_p99_ms", churn_phase_names[i]);
        out->phase_p99[i] = load_num(s, key, 1e3);
    }
    out->collections = load_num(s, "collections", 1);
    out->gc_work_p99 = load_num(s, "gc_frame_work_p99_ms", 1e3);
    out->gc_work_max = load_num(s, "gc_frame_work_max_ms", 1e3);
    out->gc_work_sum = load_num(s, "gc_frame_work_seconds", 1);
    out->bytes_sent = load_num(s, "bytes_sent", 1);
    out->players_mean = load_num(s, "players_mean", 1);
    out->cpu_seconds = load_num(s, "cpu_seconds", 1);
    out->objects_first = load_num(s, "objects_first", 1);
    out->objects_last = load_num(s, "objects_last", 1);
    out->objects_peak = load_num(s, "objects_peak", 1);
    out->rss_peak = load_num(s, "rss_peak_bytes", 1);
    out->levels_loaded_peak = load_num(s, "levels_loaded_peak", 1);
    out->level_load_wait_p50 = load_num(s, "level_load_wait_p50_ms", 1e3);
    out->level_load_wait_p99 = load_num(s, "level_load_wait_p99_ms", 1e3);
    out->levels_pending_purge_max = load_num(s, "levels_pending_purge_max", 1);
    out->level_streams_in = load_num(s, "level_streams_in", 1);
    out->level_streams_out = load_num(s, "level_streams_out", 1);
    out->levels_survived = load_num(s, "levels_survived", 1);
    out->streaming_collections = load_num(s, "streaming_collections", 1);
}

static bool load_row(load_ctx *c, json_t *j, churn_timeline *tl)
{
    json_t *server = json_object_get(j, "server");
    churn_row w;

    memset(&w, 0, sizeof w);
    w.t = load_num(j, "t", 1);
    w.stage = (uint32_t)load_u64(c, j, "stage");
    w.target = (uint32_t)load_u64(c, j, "target");
    w.connected = (uint32_t)load_u64(c, j, "connected");
    w.joins = (uint32_t)load_u64(c, j, "joins");
    w.leaves = (uint32_t)load_u64(c, j, "leaves");
    w.leaves_abrupt = (uint32_t)load_u64(c, j, "leaves_abrupt");
    w.spawned = (uint32_t)load_u64(c, j, "spawned");
    w.errors = (uint32_t)load_u64(c, j, "errors");
    w.refused = (uint32_t)load_u64(c, j, "refused");
    w.server_lost = json_is_true(json_object_get(j, "server_lost"));
    w.gen_cpu = load_num(j, "generator_cpu", 1);
    w.loop_lag = load_num(j, "loop_lag_ms", 1e3);
    if (json_is_object(server)) {
        w.have_server = true;
        w.server_objects = (uint32_t)load_u64(c, server, "objects");
        w.server_players = (uint32_t)load_u64(c, server, "players");
        w.collections = load_u64(c, server, "collections_total");
        w.objects_destroyed = load_u64(c, server, "objects_destroyed_total");
        w.gc_interval = load_num(server, "gc_interval", 1);
        w.time_since_last_purge = load_num(server, "time_since_last_purge", 1);
        w.server_frame = load_u64(c, server, "frame");
    }
    w.have_admin = json_is_true(json_object_get(j, "admin"));
    w.tick_p50 = load_num(j, "tick_p50_ms", 1e3);
    w.tick_p99 = load_num(j, "tick_p99_ms", 1e3);
    w.tick_max = load_num(j, "tick_max_ms", 1e3);
    w.gc_collections = load_num(j, "collections", 1);
    w.gc_work_max = load_num(j, "gc_work_max_ms", 1e3);
    w.admin_objects = load_num(j, "admin_objects", 1);
    w.rss_bytes = load_num(j, "rss_bytes", 1);
    w.frames = load_num(j, "frames", 1);
    w.levels_loaded = load_num(j, "levels_loaded", 1);
    w.levels_pending_purge = load_num(j, "levels_pending_purge", 1);
    if (!c->ok)
        return false;
    if (!churn_timeline_add_row(tl, &w)) {
        load_fail(c, "out of memory");
        return false;
    }
    return true;
}

static bool load_match(load_ctx *c, json_t *j, churn_timeline *tl)
{
    json_t *travel = json_object_get(j, "travel");
    const char *map = json_string_value(json_object_get(j, "map"));
    const char *mode = json_string_value(json_object_get(j, "mode"));
    uint64_t frame = load_u64(c, j, "frame");
    double start = load_num(j, "start_seconds", 1);
    churn_match *m;

    if (!c->ok)
        return false;
    if (start < 0) {
        load_fail(c, "a match without its start_seconds");
        return false;
    }
    m = churn_timeline_match(tl, frame, map, mode == NULL ? 0 : strcmp(mode, "hard") == 0 ? 1 :
                             strcmp(mode, "seamless") == 0 ? 2 : 0, start);
    if (m == NULL) {
        load_fail(c, "out of memory");
        return false;
    }
    m->departed = (uint32_t)load_u64(c, j, "departed");
    m->arrived = (uint32_t)load_u64(c, j, "arrived");
    if (json_is_object(travel))
        load_hist(c, travel, &m->travel);
    m->server_seen = json_is_true(json_object_get(j, "server_sampled"));
    m->server_seconds = load_num(j, "server_travel_seconds", 1);
    m->longest_frame = load_num(j, "server_longest_frame_ms", 1e3);
    m->frames_over_budget = load_num(j, "server_frames_over_budget", 1);
    m->objects = load_num(j, "objects", 1);
    m->rss = load_num(j, "rss_bytes", 1);
    m->leaked_worlds = load_num(j, "leaked_worlds", 1);
    return c->ok;
}

static void load_totals(load_ctx *c, json_t *root, churn_totals *t)
{
    json_t *counts = load_obj(c, root, "counts"), *gen = load_obj(c, root, "generator");
    json_t *imp = load_obj(c, root, "impaired"), *errs = load_obj(c, root, "errors");
    json_t *lat = load_obj(c, root, "latency");

    if (!c->ok)
        return;
    t->joins = load_u64(c, counts, "joins");
    t->leaves = load_u64(c, counts, "leaves");
    t->leaves_abrupt = load_u64(c, counts, "leaves_abrupt");
    t->spawned = load_u64(c, counts, "spawned");
    t->projectiles = load_u64(c, counts, "projectiles");
    t->moves = load_u64(c, counts, "moves");
    t->checks = load_u64(c, counts, "checks");
    t->snapshots = load_u64(c, counts, "snapshots");
    t->unknown_destroys = load_u64(c, counts, "unknown_destroys");
    t->refused = load_u64(c, counts, "refused");
    t->refused_busy = load_u64_or_0(c, counts, "refused_busy");
    t->gen_cpu_us = (uint64_t)llround(load_num(gen, "cpu_seconds", 1e-6));
    t->gen_seconds = load_u64(c, gen, "seconds");
    t->gen_saturated = load_u64(c, gen, "saturated_seconds");
    t->impair_datagrams = load_u64(c, imp, "datagrams");
    t->impair_dropped = load_u64(c, imp, "dropped");
    t->impair_duplicated = load_u64(c, imp, "duplicated");
    t->impair_reordered = load_u64(c, imp, "reordered");
    for (int i = 0; i < CHURN_ERR_COUNT; i++)
        t->errors[i] = i == CHURN_ERR_SERVER_LOST ? load_u64_or_0(c, errs, churn_error_keys[i])
                                                  : load_u64(c, errs, churn_error_keys[i]);
    t->travels = load_u64_or_0(c, counts, "travels");
    t->travel_refused = load_u64_or_0(c, counts, "travel_refused");
    for (int i = 0; i < CHURN_LAT_COUNT && c->ok; i++) {
        json_t *h;

        /* a report from before the client followed travels has no travel latency */
        if (i == CHURN_LAT_TRAVEL && json_object_get(lat, churn_lat_names[i]) == NULL)
            continue;
        if ((h = load_obj(c, lat, churn_lat_names[i])) != NULL)
            load_hist(c, h, &t->lat[i]);
    }
}

bool churn_report_load(churn_report *r, churn_timeline *tl, uint32_t max_thresholds,
                       const char *dir, char *err, size_t err_size)
{
    char path[1100];
    json_error_t jerr;
    json_t *root, *v, *item;
    load_ctx c = { path, err, err_size, true };
    uint32_t n_th = 0;
    size_t i;

    memset(r, 0, sizeof *r);
    churn_totals_init(&r->totals);
    churn_server_init(&r->server_figs);
    r->leaks.baseline = r->leaks.after = r->leaks.leaked = -1;
    r->tl = tl;
    snprintf(path, sizeof path, "%s/report.json", dir);
    root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL) {
        if (jerr.line < 0)
            snprintf(err, err_size, "cannot read '%s': %s", path, jerr.text);
        else
            snprintf(err, err_size, "%s:%d:%d: not JSON: %s", path, jerr.line, jerr.column,
                     jerr.text);
        return false;
    }
    if (!json_is_object(root) ||
        !json_is_integer(v = json_object_get(root, "schema_version")) ||
        json_integer_value(v) != CHURN_REPORT_SCHEMA ||
        !json_is_string(json_object_get(root, "run_id"))) {
        load_fail(&c, "no schema_version or run_id");
        json_decref(root);
        return false;
    }
    r->schema = CHURN_REPORT_SCHEMA;
    load_str(root, "run_id", r->run_id, sizeof r->run_id);
    load_str(root, "start_time", r->start_time, sizeof r->start_time);
    load_str(root, "host", r->host, sizeof r->host);
    load_str(root, "scenario", r->scenario, sizeof r->scenario);
    load_str(root, "server", r->server, sizeof r->server);
    load_str(root, "impairment", r->impairment, sizeof r->impairment);
    load_str(root, "source_addresses", r->source_addresses, sizeof r->source_addresses);
    load_str(root, "source_addresses_option", r->source_option, sizeof r->source_option);
    r->seed = load_u64(&c, root, "seed");
    r->shard = (uint32_t)load_u64(&c, root, "shard");
    r->shards = (uint32_t)load_u64(&c, root, "shards");
    r->bots = (uint32_t)load_u64(&c, root, "bots");
    r->duration = load_num(root, "duration_seconds", 1);
    r->elapsed = load_num(root, "elapsed_seconds", 1);
    r->interrupted = json_is_true(json_object_get(root, "interrupted"));
    r->partial = json_is_true(json_object_get(root, "partial"));
    v = json_object_get(root, "server_outages");
    json_array_foreach(v, i, item) {
        double from = load_num(item, "from_seconds", 1), to = load_num(item, "to_seconds", 1);

        if (from < 0) {
            load_fail(&c, "a server outage without its from_seconds");
            break;
        }
        churn_outages_begin(&r->outages, from);
        if (to >= 0)
            churn_outages_end(&r->outages, to);
    }
    load_totals(&c, root, &r->totals);
    if (c.ok && (v = load_obj(&c, root, "server_metrics")) != NULL)
        load_server(v, &r->server_figs);
    if (c.ok && (v = load_obj(&c, root, "leaks")) != NULL) {
        r->leaks.checked = json_is_true(json_object_get(v, "checked"));
        r->leaks.supported = json_is_true(json_object_get(v, "supported"));
        r->leaks.leaked = (long)load_num(v, "leaked", 1);
        r->leaks.baseline = (long)load_num(v, "objects_at_mark", 1);
        r->leaks.after = (long)load_num(v, "objects_after", 1);
    }
    v = json_object_get(root, "timeline");
    json_array_foreach(v, i, item)
        if (!c.ok || !load_row(&c, item, tl))
            break;
    v = json_object_get(root, "collection_times");
    json_array_foreach(v, i, item)
        if (c.ok && !churn_timeline_add_gc(tl, json_number_value(item)))
            load_fail(&c, "out of memory");
    v = json_object_get(root, "object_samples");
    json_array_foreach(v, i, item)
        if (c.ok && !churn_timeline_add_sample(tl, json_number_value(json_array_get(item, 0)),
                                               (uint32_t)json_integer_value(
                                                   json_array_get(item, 1))))
            load_fail(&c, "out of memory");
    v = json_object_get(json_object_get(root, "objects_by_class"), "classes");
    {
        const char *keys[CHURN_CLASSES_MAX];
        char names[CHURN_CLASSES_MAX][CHURN_CLASS_NAME_MAX + 40];
        double values[CHURN_CLASSES_MAX];
        uint32_t nk = 0;
        json_t *samples = json_object_get(json_object_get(root, "objects_by_class"),
                                          "samples");

        json_array_foreach(v, i, item) {
            const char *name = json_string_value(item);
            if (name == NULL || nk >= CHURN_CLASSES_MAX)
                break;
            snprintf(names[nk], sizeof names[nk], "reap_world_objects_by_class{class=\"%s\"}",
                     name);
            keys[nk] = names[nk];
            nk++;
        }
        json_array_foreach(samples, i, item) {
            uint32_t m = 0;

            for (uint32_t k = 0; k < nk; k++) {
                json_t *x = json_array_get(item, k + 1);
                if (x != NULL && json_number_value(x) >= 0) {
                    keys[m] = names[k];
                    values[m++] = json_number_value(x);
                }
            }
            if (c.ok && !churn_timeline_add_classes(tl, json_number_value(json_array_get(item, 0)),
                                                    keys, values, m))
                load_fail(&c, "out of memory");
            for (uint32_t k = 0; k < nk; k++)
                keys[k] = names[k];
        }
    }
    /* The matches (a report from before the client followed travels has none). */
    tl->match_seconds = load_num(root, "match_seconds", 1);
    if (tl->match_seconds < 0)
        tl->match_seconds = 0;
    v = json_object_get(root, "matches");
    json_array_foreach(v, i, item)
        if (!c.ok || !load_match(&c, item, tl))
            break;
    /* The run's own thresholds: merge judges the merged figures by them too. */
    v = json_object_get(root, "thresholds");
    json_array_foreach(v, i, item) {
        const char *text = json_string_value(json_object_get(item, "threshold"));
        char terr[256];

        if (!c.ok)
            break;
        if (text == NULL) {
            load_fail(&c, "a threshold without its text");
            break;
        }
        if (n_th >= max_thresholds || n_th >= CLIENT_THRESHOLDS_MAX)
            break;
        if (!client_threshold_parse(text, &r->thresholds[n_th], terr, sizeof terr)) {
            load_fail(&c, terr);
            break;
        }
        n_th++;
    }
    json_decref(root);
    if (!c.ok)
        return false;
    r->n_thresholds = n_th;
    return true;
}
