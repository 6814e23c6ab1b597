/*
 * dashboard.c - samples the engine once a second into the dashboard's ring.
 *
 * A uv timer on the engine's loop, so it runs between frames on the loop thread like every
 * other reader of the engine. The frame hook only copies a few numbers into the ring.
 */
#include "dashboard.h"

#include <stdio.h>
#include <stdlib.h>
#include <uv.h>

#include "engine.h"
#include "net_driver.h"
#include "sysmem.h"

enum { DASHBOARD_PERIOD_MS = 1000 };

_Static_assert((int)DASHBOARD_PHASES == (int)ENGINE_PHASE_COUNT, "the dashboard keeps every frame phase");

struct dashboard {
    engine *engine;
    uv_timer_t timer;
    dashboard_ring ring;
    uint32_t *actors;             /* world_count scratch counts for each second */
    const char **world_names;     /* borrowed from the worlds */
};

static void dashboard_free(dashboard *d)
{
    dashboard_ring_free(&d->ring);
    free(d->actors);
    free(d->world_names);
    free(d);
}

static void dashboard_timer_cb(uv_timer_t *timer)
{
    dashboard *d = timer->data;
    engine *e = d->engine;
    dashboard_inputs in = { 0 };
    sysmem_process proc;
    gc_stats st;

    for (uint32_t w = 0; w < d->ring.worlds && w < e->world_count; w++)
        d->actors[w] = world_actor_count(e->worlds[w]);
    gc_stats_get(e->heap, &st);
    in.t = engine_now(e);
    in.players = e->net != NULL ? net_driver_player_count(e->net) : 0;
    in.connections = e->net != NULL ? net_driver_connection_count(e->net) : 0;
    in.objects = gc_object_count(e->heap);
    in.actors = d->actors;
    in.rss_mb = sysmem_process_read(&proc) ? (double)proc.resident_bytes / (1024.0 * 1024.0)
                                           : -1;
    in.bytes_sent_total = e->net != NULL ? net_driver_counters_get(e->net)->wire_bytes_out : 0;
    in.collections = st.collections;
    in.mark_seconds = st.mark_seconds;
    in.gather_seconds = st.gather_seconds;
    in.purge_seconds = st.purge_seconds;
    in.objects_before = st.objects_before;
    in.unreachable = st.unreachable;
    in.purge_pending = gc_is_incremental_purge_pending(e->heap);
    dashboard_ring_second(&d->ring, &in);
}

int dashboard_create(engine *e, dashboard **out_d, char *err, size_t err_size)
{
    dashboard *d = calloc(1, sizeof *d);
    uint32_t worlds = e->world_count > 0 ? e->world_count : 1;
    gc_stats st;
    int r;

    if (d == NULL || (d->actors = calloc(worlds, sizeof *d->actors)) == NULL ||
        (d->world_names = calloc(worlds, sizeof *d->world_names)) == NULL ||
        !dashboard_ring_init(&d->ring, worlds, 2 * e->opts.tick_hz + 16)) {
        if (d != NULL) {
            free(d->actors);
            free(d->world_names);
            free(d);
        }
        snprintf(err, err_size, "dashboard: out of memory");
        return -1;
    }
    d->engine = e;
    for (uint32_t w = 0; w < worlds; w++)
        d->world_names[w] = w < e->world_count ? e->worlds[w]->name : "";
    /* The ring's first second starts now. */
    gc_stats_get(e->heap, &st);
    d->ring.seen_collections = st.collections;
    uv_timer_init(e->loop, &d->timer);
    d->timer.data = d;
    r = uv_timer_start(&d->timer, dashboard_timer_cb, DASHBOARD_PERIOD_MS, DASHBOARD_PERIOD_MS);
    if (r != 0) {
        snprintf(err, err_size, "dashboard: cannot start its timer: %s", uv_strerror(r));
        dashboard_close(d);
        return -1;
    }
    *out_d = d;
    return 0;
}

static void dashboard_close_cb(uv_handle_t *handle)
{
    dashboard_free(handle->data);
}

void dashboard_close(dashboard *d)
{
    if (d == NULL)
        return;
    uv_timer_stop(&d->timer);
    uv_close((uv_handle_t *)&d->timer, dashboard_close_cb);
}

void dashboard_frame(dashboard *d, const uint64_t *phase_ns)
{
    double phases[DASHBOARD_PHASES];

    if (d == NULL)
        return;
    for (int p = 0; p < DASHBOARD_PHASES; p++)
        phases[p] = (double)(phase_ns[p + 1] - phase_ns[p]) / 1e9;
    dashboard_ring_frame(&d->ring, (double)(phase_ns[DASHBOARD_PHASES] - phase_ns[0]) / 1e9,
                         phases);
}

void dashboard_render_json(const dashboard *d, strbuf *out)
{
    const engine *e = d->engine;

    dashboard_ring_json(&d->ring, d->world_names, 1000.0 / e->opts.tick_hz, engine_now(e), out);
}
