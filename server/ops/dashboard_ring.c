/*
 * dashboard_ring.c - ten minutes of once-a-second samples and the collections among them.
 *
 * Plain data and pure functions (no loop, no engine), so tests feed frames and seconds by
 * hand. Every buffer is taken at init; a second's frame times are sorted in place when the
 * second ends.
 */
#include "dashboard.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool dashboard_ring_init(dashboard_ring *r, uint32_t worlds, uint32_t frame_cap)
{
    memset(r, 0, sizeof *r);
    r->worlds = worlds > 0 ? worlds : 1;
    r->frame_cap = frame_cap > 0 ? frame_cap : 1;
    r->samples = calloc(DASHBOARD_SECONDS, sizeof *r->samples);
    r->actors = calloc((size_t)DASHBOARD_SECONDS * r->worlds, sizeof *r->actors);
    r->frame_ms = calloc(r->frame_cap, sizeof *r->frame_ms);
    if (r->samples == NULL || r->actors == NULL || r->frame_ms == NULL) {
        dashboard_ring_free(r);
        return false;
    }
    return true;
}

void dashboard_ring_free(dashboard_ring *r)
{
    free(r->samples);
    free(r->actors);
    free(r->frame_ms);
    r->samples = NULL;
    r->actors = NULL;
    r->frame_ms = NULL;
    r->count = 0;
}

void dashboard_ring_frame(dashboard_ring *r, double frame_seconds,
                          const double phase_seconds[DASHBOARD_PHASES])
{
    float ms = (float)(frame_seconds * 1e3);

    if (r->frame_count < r->frame_cap)
        r->frame_ms[r->frame_count++] = ms;
    r->frames_total++;
    if (ms > r->frame_max_ms)
        r->frame_max_ms = ms;
    for (int p = 0; p < DASHBOARD_PHASES; p++)
        r->phase_sum_ms[p] += phase_seconds[p] * 1e3;
}

static int dashboard_float_cmp(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;

    return (x > y) - (x < y);
}

/* Nearest rank of sorted v[0..n): the smallest value with at least q of them at or below. */
static float dashboard_quantile(const float *v, uint32_t n, double q)
{
    uint32_t rank;

    if (n == 0)
        return 0;
    rank = (uint32_t)ceil(q * n);
    if (rank < 1)
        rank = 1;
    return v[rank - 1];
}

/* A new collection event, or the purge of the latest one growing. */
static void dashboard_ring_note_collector(dashboard_ring *r, const dashboard_inputs *in)
{
    dashboard_collection *c;

    if (in->collections > r->seen_collections) {
        c = &r->collections[r->col_head];
        r->col_head = (r->col_head + 1) % DASHBOARD_COLLECTIONS;
        if (r->col_count < DASHBOARD_COLLECTIONS)
            r->col_count++;
        c->t = in->t;
        c->seq = in->collections;
        c->merged = (uint32_t)(in->collections - r->seen_collections);
        c->objects_before = in->objects_before;
        c->unreachable = in->unreachable;
        c->mark_ms = (float)(in->mark_seconds * 1e3);
        c->gather_ms = (float)(in->gather_seconds * 1e3);
        c->purge_ms = (float)(in->purge_seconds * 1e3);
        c->purging = in->purge_pending;
        r->seen_collections = in->collections;
        return;
    }
    if (r->col_count == 0)
        return;
    c = &r->collections[(r->col_head + DASHBOARD_COLLECTIONS - 1) % DASHBOARD_COLLECTIONS];
    if (c->purging) {
        c->purge_ms = (float)(in->purge_seconds * 1e3);
        c->gather_ms = (float)(in->gather_seconds * 1e3);
        c->purging = in->purge_pending;
    }
}

void dashboard_ring_second(dashboard_ring *r, const dashboard_inputs *in)
{
    dashboard_sample *s = &r->samples[r->head];
    uint32_t n = r->frame_count;

    qsort(r->frame_ms, n, sizeof *r->frame_ms, dashboard_float_cmp);
    s->t = in->t;
    s->players = in->players;
    s->connections = in->connections;
    s->objects = in->objects;
    s->frames = r->frames_total;
    s->tick_p50_ms = dashboard_quantile(r->frame_ms, n, 0.50);
    s->tick_p99_ms = dashboard_quantile(r->frame_ms, n, 0.99);
    s->tick_max_ms = r->frame_max_ms;
    for (int p = 0; p < DASHBOARD_PHASES; p++)
        s->phase_ms[p] = r->frames_total > 0 ? (float)(r->phase_sum_ms[p] / r->frames_total)
                                             : 0;
    s->rss_mb = (float)in->rss_mb;
    s->sent_bytes_per_second = 0;
    s->streamed_in_per_second = s->streamed_out_per_second = 0;
    if (r->have_last && in->t > r->last_t && in->bytes_sent_total >= r->last_bytes)
        s->sent_bytes_per_second =
            (float)((double)(in->bytes_sent_total - r->last_bytes) / (in->t - r->last_t));
    if (r->have_last && in->t > r->last_t && in->streamed_in_total >= r->last_streamed_in &&
        in->streamed_out_total >= r->last_streamed_out) {
        s->streamed_in_per_second =
            (float)((double)(in->streamed_in_total - r->last_streamed_in) / (in->t - r->last_t));
        s->streamed_out_per_second = (float)((double)(in->streamed_out_total -
                                                      r->last_streamed_out) /
                                             (in->t - r->last_t));
    }
    s->levels_loaded = in->levels_loaded;
    s->levels_changing = in->levels_changing;
    s->levels_pending_purge = in->levels_pending_purge;
    r->streaming = r->streaming || in->streaming;
    for (uint32_t w = 0; w < r->worlds; w++)
        r->actors[(size_t)r->head * r->worlds + w] = in->actors != NULL ? in->actors[w] : 0;
    r->head = (r->head + 1) % DASHBOARD_SECONDS;
    if (r->count < DASHBOARD_SECONDS)
        r->count++;

    r->last_bytes = in->bytes_sent_total;
    r->last_streamed_in = in->streamed_in_total;
    r->last_streamed_out = in->streamed_out_total;
    r->last_t = in->t;
    r->have_last = true;
    r->frame_count = 0;
    r->frames_total = 0;
    r->frame_max_ms = 0;
    for (int p = 0; p < DASHBOARD_PHASES; p++)
        r->phase_sum_ms[p] = 0;
    dashboard_ring_note_collector(r, in);
}

static uint32_t dashboard_ring_slot(const dashboard_ring *r, uint32_t i)
{
    return (r->head + DASHBOARD_SECONDS - r->count + i) % DASHBOARD_SECONDS;
}

const dashboard_sample *dashboard_ring_sample(const dashboard_ring *r, uint32_t i)
{
    return &r->samples[dashboard_ring_slot(r, i)];
}

uint32_t dashboard_ring_sample_actors(const dashboard_ring *r, uint32_t i, uint32_t world)
{
    return r->actors[(size_t)dashboard_ring_slot(r, i) * r->worlds + world];
}

const dashboard_collection *dashboard_ring_collection(const dashboard_ring *r, uint32_t i)
{
    return &r->collections[(r->col_head + DASHBOARD_COLLECTIONS - r->col_count + i) %
                           DASHBOARD_COLLECTIONS];
}

/* ---- /stats.json ------------------------------------------------------------------------ */

typedef enum dashboard_column {
    COL_T, COL_PLAYERS, COL_CONNECTIONS, COL_OBJECTS, COL_FRAMES, COL_TICK_P50, COL_TICK_P99,
    COL_TICK_MAX, COL_NET, COL_WORLD, COL_REPL, COL_GC, COL_RSS, COL_SENT, COL_LEVELS_LOADED,
    COL_LEVELS_CHANGING, COL_LEVELS_PENDING_PURGE, COL_STREAMED_IN, COL_STREAMED_OUT, COL_COUNT
} dashboard_column;

static const char *const dashboard_column_names[COL_COUNT] = {
    "t", "players", "connections", "objects", "frames", "tick_p50", "tick_p99", "tick_max",
    "phase_net", "phase_world", "phase_repl", "phase_gc", "rss_mb", "sent_bps",
    "levels_loaded", "levels_changing", "levels_pending_purge", "streamed_in_ps",
    "streamed_out_ps",
};

static double dashboard_column_value(const dashboard_sample *s, dashboard_column c)
{
    switch (c) {
    case COL_T: return s->t;
    case COL_PLAYERS: return s->players;
    case COL_CONNECTIONS: return s->connections;
    case COL_OBJECTS: return s->objects;
    case COL_FRAMES: return s->frames;
    case COL_TICK_P50: return s->tick_p50_ms;
    case COL_TICK_P99: return s->tick_p99_ms;
    case COL_TICK_MAX: return s->tick_max_ms;
    case COL_NET: return s->phase_ms[0];
    case COL_WORLD: return s->phase_ms[1];
    case COL_REPL: return s->phase_ms[2];
    case COL_GC: return s->phase_ms[3];
    case COL_RSS: return s->rss_mb;
    case COL_SENT: return s->sent_bytes_per_second;
    case COL_LEVELS_LOADED: return s->levels_loaded;
    case COL_LEVELS_CHANGING: return s->levels_changing;
    case COL_LEVELS_PENDING_PURGE: return s->levels_pending_purge;
    case COL_STREAMED_IN: return s->streamed_in_per_second;
    case COL_STREAMED_OUT: return s->streamed_out_per_second;
    case COL_COUNT: break;
    }
    return 0;
}

/* A JSON number; JSON has no NaN or infinity, and an unknown value (< 0) is null. */
static void dashboard_json_number(strbuf *out, double v)
{
    if (!isfinite(v) || v < 0)
        strbuf_puts(out, "null");
    else
        strbuf_printf(out, "%.6g", v);
}

/* A name as a JSON string; world names are [A-Za-z0-9] but any byte is made safe. */
static void dashboard_json_string(strbuf *out, const char *s)
{
    strbuf_puts(out, "\"");
    for (; *s != '\0'; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch < 0x20 || ch == '"' || ch == '\\')
            strbuf_printf(out, "\\u%04x", ch);
        else
            strbuf_append(out, s, 1);
    }
    strbuf_puts(out, "\"");
}

void dashboard_ring_json(const dashboard_ring *r, const char *const *world_names,
                         double budget_ms, double now, strbuf *out)
{
    strbuf_puts(out, "{\"now\":");
    dashboard_json_number(out, now);
    strbuf_puts(out, ",\"budget_ms\":");
    dashboard_json_number(out, budget_ms);
    strbuf_printf(out, ",\"window_s\":%d,\"streaming\":%s,\"worlds\":[", DASHBOARD_SECONDS,
                  r->streaming ? "true" : "false");
    for (uint32_t w = 0; w < r->worlds; w++) {
        if (w > 0)
            strbuf_puts(out, ",");
        dashboard_json_string(out, world_names != NULL ? world_names[w] : "");
    }
    strbuf_puts(out, "]");
    for (int c = 0; c < COL_COUNT; c++) {
        strbuf_printf(out, ",\"%s\":[", dashboard_column_names[c]);
        for (uint32_t i = 0; i < r->count; i++) {
            if (i > 0)
                strbuf_puts(out, ",");
            dashboard_json_number(out, dashboard_column_value(dashboard_ring_sample(r, i),
                                                              (dashboard_column)c));
        }
        strbuf_puts(out, "]");
    }
    strbuf_puts(out, ",\"actors\":[");
    for (uint32_t w = 0; w < r->worlds; w++) {
        strbuf_puts(out, w > 0 ? ",[" : "[");
        for (uint32_t i = 0; i < r->count; i++)
            strbuf_printf(out, i > 0 ? ",%u" : "%u", dashboard_ring_sample_actors(r, i, w));
        strbuf_puts(out, "]");
    }
    strbuf_puts(out, "],\"collections\":[");
    for (uint32_t i = 0; i < r->col_count; i++) {
        const dashboard_collection *c = dashboard_ring_collection(r, i);

        strbuf_printf(out,
                      "%s{\"t\":%.6g,\"seq\":%llu,\"merged\":%u,\"objects_before\":%u,"
                      "\"unreachable\":%u,\"mark_ms\":%.4g,\"gather_ms\":%.4g,"
                      "\"purge_ms\":%.4g,\"purging\":%s}",
                      i > 0 ? "," : "", c->t, (unsigned long long)c->seq, c->merged,
                      c->objects_before, c->unreachable, c->mark_ms, c->gather_ms, c->purge_ms,
                      c->purging ? "true" : "false");
    }
    strbuf_puts(out, "]}");
}
