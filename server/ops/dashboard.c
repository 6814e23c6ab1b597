/*
 * dashboard.c - the dashboard's ring as the engine feeds it and the admin endpoint reads it.
 *
 * The engine pushes a frame's phase times every frame and a sample once a second (a periodic
 * job, on the loop thread between frames); /stats.json renders the ring.
 */
#include "dashboard.h"

#include <stdio.h>
#include <stdlib.h>

struct dashboard {
    dashboard_ring ring;
    const char **world_names;     /* borrowed from the worlds */
    double budget_ms;             /* the frame period */
};

int dashboard_create(const char *const *world_names, uint32_t world_count, uint32_t tick_hz,
                     uint64_t seen_collections, dashboard **out_d, char *err, size_t err_size)
{
    dashboard *d = calloc(1, sizeof *d);
    uint32_t worlds = world_count > 0 ? world_count : 1;

    if (d == NULL || (d->world_names = calloc(worlds, sizeof *d->world_names)) == NULL ||
        !dashboard_ring_init(&d->ring, worlds, 2 * tick_hz + 16)) {
        if (d != NULL)
            free(d->world_names);
        free(d);
        snprintf(err, err_size, "dashboard: out of memory");
        return -1;
    }
    for (uint32_t w = 0; w < worlds; w++)
        d->world_names[w] = w < world_count ? world_names[w] : "";
    d->budget_ms = 1000.0 / tick_hz;
    /* The ring's first second starts now. */
    d->ring.seen_collections = seen_collections;
    *out_d = d;
    return 0;
}

void dashboard_close(dashboard *d)
{
    if (d == NULL)
        return;
    dashboard_ring_free(&d->ring);
    free(d->world_names);
    free(d);
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

void dashboard_second(dashboard *d, const dashboard_inputs *in)
{
    dashboard_ring_second(&d->ring, in);
}

void dashboard_render_json(const dashboard *d, double now, strbuf *out)
{
    dashboard_ring_json(&d->ring, d->world_names, d->budget_ms, now, out);
}
