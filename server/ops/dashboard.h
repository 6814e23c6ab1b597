/*
 * dashboard.h - the live GC dashboard of the admin endpoint (GET / and GET /stats.json).
 *
 * Two layers. The ring (dashboard_ring.c) is plain data and pure functions: the frames of the
 * current second go in (dashboard_ring_frame), once a second what the server looks like goes
 * in (dashboard_ring_second) and one sample comes out, kept for DASHBOARD_SECONDS (ten
 * minutes); collections are kept as events with their mark, gather and purge costs. All of
 * its memory is taken at init: nothing is allocated per frame or per second. The glue
 * (dashboard.c) owns a ring and a one-second timer on the engine's loop that reads the engine.
 *
 * The page itself (server/dashboard/index.html, embedded at build time as
 * dashboard_page_html) is read-only: it polls /stats.json and draws SVG. It has no console.
 */
#ifndef REAP_DASHBOARD_H
#define REAP_DASHBOARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

enum {
    DASHBOARD_SECONDS = 600,      /* samples kept, one a second */
    DASHBOARD_COLLECTIONS = 128,  /* collection events kept */
    DASHBOARD_PHASES = 4,         /* net, world, repl, gc (engine_phase order) */
};

/* What the server looks like at the end of a second. */
typedef struct dashboard_inputs {
    double t;                     /* seconds since the server started */
    uint32_t players;
    uint32_t connections;
    uint32_t objects;
    const uint32_t *actors;       /* borrowed: one count per world */
    double rss_mb;                /* < 0: unknown */
    uint64_t bytes_sent_total;    /* a counter; the sample holds its rate */
    /* The collector: completed collections and the last one's costs (gc_stats). */
    uint64_t collections;
    double mark_seconds;
    double gather_seconds;
    double purge_seconds;
    uint32_t objects_before;
    uint32_t unreachable;
    bool purge_pending;
    /* Streaming levels, every world together (all 0 without streaming cells). */
    bool streaming;               /* some world has cells */
    uint32_t levels_loaded;       /* cells visible */
    uint32_t levels_changing;     /* cells loading or unloading */
    uint32_t levels_pending_purge;
    uint64_t streamed_in_total;   /* counters; the sample holds their rates */
    uint64_t streamed_out_total;
} dashboard_inputs;

typedef struct dashboard_sample {
    double t;
    uint32_t players;
    uint32_t connections;
    uint32_t objects;
    uint32_t frames;              /* frames in this second */
    float tick_p50_ms;
    float tick_p99_ms;
    float tick_max_ms;
    float phase_ms[DASHBOARD_PHASES]; /* mean per frame */
    float rss_mb;
    float sent_bytes_per_second;
    uint32_t levels_loaded, levels_changing, levels_pending_purge;
    float streamed_in_per_second, streamed_out_per_second;
} dashboard_sample;

typedef struct dashboard_collection {
    double t;                     /* the second it was first seen in */
    uint64_t seq;                 /* the collector's collection count after it */
    uint32_t merged;              /* collections that ended in that second (the costs are the
                                     last one's) */
    uint32_t objects_before;
    uint32_t unreachable;
    float mark_ms;
    float gather_ms;
    float purge_ms;               /* grows while its purge continues incrementally */
    bool purging;
} dashboard_collection;

typedef struct dashboard_ring {
    uint32_t worlds;
    dashboard_sample *samples;    /* DASHBOARD_SECONDS */
    uint32_t *actors;             /* DASHBOARD_SECONDS * worlds */
    uint32_t head;                /* the next sample slot */
    uint32_t count;
    dashboard_collection collections[DASHBOARD_COLLECTIONS];
    uint32_t col_head;
    uint32_t col_count;
    uint64_t seen_collections;
    /* The second in progress. */
    float *frame_ms;              /* frame_cap entries; frames beyond it count in max only */
    uint32_t frame_cap;
    uint32_t frame_count;
    uint32_t frames_total;
    float frame_max_ms;
    double phase_sum_ms[DASHBOARD_PHASES];
    uint64_t last_bytes;
    uint64_t last_streamed_in, last_streamed_out;
    double last_t;
    bool have_last;
    bool streaming;               /* a second said some world has cells */
} dashboard_ring;

/* Takes every buffer the ring will use: worlds (>= 1) actor counts per sample, frame_cap
 * frame times per second. Returns false if memory is short (nothing is then held). */
bool dashboard_ring_init(dashboard_ring *r, uint32_t worlds, uint32_t frame_cap);
void dashboard_ring_free(dashboard_ring *r);

/* One frame: its total and per-phase work time in seconds. */
void dashboard_ring_frame(dashboard_ring *r, double frame_seconds,
                          const double phase_seconds[DASHBOARD_PHASES]);

/* Ends the second: one sample (tick percentiles of its frames, phase means, rates), and a
 * collection event when the collector finished one since the last second. */
void dashboard_ring_second(dashboard_ring *r, const dashboard_inputs *in);

/* The oldest-first sample i (0 <= i < r->count). */
const dashboard_sample *dashboard_ring_sample(const dashboard_ring *r, uint32_t i);
uint32_t dashboard_ring_sample_actors(const dashboard_ring *r, uint32_t i, uint32_t world);
/* The oldest-first collection event i (0 <= i < r->col_count). */
const dashboard_collection *dashboard_ring_collection(const dashboard_ring *r, uint32_t i);

/* /stats.json: columns of the kept samples and the collection events. world_names: borrowed,
 * r->worlds names; budget_ms: the frame period. */
void dashboard_ring_json(const dashboard_ring *r, const char *const *world_names,
                         double budget_ms, double now, strbuf *out);

/* ---- the ring the engine feeds ---------------------------------------------------------- */

/* The engine pushes into the dashboard (a frame's phases, a second's sample) and the admin
 * endpoint reads it; the dashboard knows neither. */
typedef struct dashboard dashboard;

/* A ring for world_count worlds (world_names: copied pointers to names that outlive it) at
 * tick_hz; seen_collections: the collector's count now, where the first second starts.
 * *out_d: close with dashboard_close. */
int dashboard_create(const char *const *world_names, uint32_t world_count, uint32_t tick_hz,
                     uint64_t seen_collections, dashboard **out_d, char *err, size_t err_size);
/* Frees d. NULL is allowed. */
void dashboard_close(dashboard *d);
/* engine_frame's phase boundaries (uv_hrtime ns): DASHBOARD_PHASES + 1 of them. NULL d is
 * allowed. */
void dashboard_frame(dashboard *d, const uint64_t *phase_ns);
/* Ends a second (the engine's once-a-second job). */
void dashboard_second(dashboard *d, const dashboard_inputs *in);
/* /stats.json at now (seconds since the server started). */
void dashboard_render_json(const dashboard *d, double now, strbuf *out);

/* The page, generated from server/dashboard/index.html. */
extern const char dashboard_page_html[];
extern const size_t dashboard_page_html_len;

#endif /* REAP_DASHBOARD_H */
