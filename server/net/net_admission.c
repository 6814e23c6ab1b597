/*
 * net_admission.c - the load window, the refusing hysteresis, the join pace and the band
 * stretch (net_admission.h says the rules and their order).
 *
 * Assumes: one net_admission_observe per frame, times that never go back.
 * Guarantees: nothing is decided before a whole window of frames was seen; the refusing state
 * changes only at HighLoad (on) and below LowLoad (off); the stretch moves by one band at a
 * time, at most once per window.
 */
#include "net_admission.h"

#include <math.h>
#include <string.h>

void net_admission_init(net_admission *a)
{
    memset(a, 0, sizeof *a);
}

/* Frames in the window at this frame period: at least 2, at most NET_ADMISSION_FRAMES. */
static uint32_t net_admission_window_frames(const net_admission_config *cfg)
{
    double n = cfg->period > 0 ? ceil(cfg->window_seconds / cfg->period) : 2;

    if (n < 2)
        return 2;
    return n > NET_ADMISSION_FRAMES ? NET_ADMISSION_FRAMES : (uint32_t)n;
}

static void net_admission_measure(net_admission *a, const net_admission_config *cfg)
{
    uint32_t n = net_admission_window_frames(cfg);
    double busy = 0, elapsed = 0;

    a->full = a->count >= n;
    if (n > a->count)
        n = a->count;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = (a->head + NET_ADMISSION_FRAMES - 1 - k) % NET_ADMISSION_FRAMES;
        busy += a->busy[i];
        elapsed += a->elapsed[i];
    }
    a->frames = n;
    a->load = n > 0 && cfg->period > 0 ? busy / ((double)n * cfg->period) : 0;
    a->achieved_hz = elapsed > 0 ? (double)n / elapsed : 0;
}

net_admission_event net_admission_observe(net_admission *a, const net_admission_config *cfg,
                                          double busy, double elapsed, double now)
{
    a->busy[a->head] = busy > 0 ? busy : 0;
    a->elapsed[a->head] = elapsed > 0 ? elapsed : 0;
    a->head = (a->head + 1) % NET_ADMISSION_FRAMES;
    if (a->count < NET_ADMISSION_FRAMES)
        a->count++;
    net_admission_measure(a, cfg);

    if (!cfg->enabled) {
        bool was = a->refusing;

        a->refusing = false;
        a->stretch = 0;
        return was ? NET_ADMISSION_STOPPED_REFUSING : NET_ADMISSION_NOTHING;
    }
    if (!a->full)
        return NET_ADMISSION_NOTHING;

    /* The stretch: one band per window, up from StretchLoad, down below LowLoad. */
    if (now - a->stretch_changed_at >= cfg->window_seconds) {
        if (a->load >= cfg->stretch_load && a->stretch < NET_STRETCH_LEVELS) {
            a->stretch++;
            a->stretch_changed_at = now;
        } else if (a->load < cfg->low_load && a->stretch > 0) {
            a->stretch--;
            a->stretch_changed_at = now;
        }
    }

    if (a->refusing && a->load > a->peak_load)
        a->peak_load = a->load;
    if (!a->refusing && a->load >= cfg->high_load) {
        a->refusing = true;
        a->refusing_since = now;
        a->refused_episode = 0;
        a->peak_load = a->load;
        return NET_ADMISSION_STARTED_REFUSING;
    }
    if (a->refusing && a->load < cfg->low_load) {
        a->refusing = false;
        return NET_ADMISSION_STOPPED_REFUSING;
    }
    return NET_ADMISSION_NOTHING;
}

static void net_admission_remember(net_admission *a, double now)
{
    uint32_t at = (a->joins_head + a->joins_count) % NET_ADMISSION_JOINS;

    a->joins[at] = now;
    if (a->joins_count < NET_ADMISSION_JOINS)
        a->joins_count++;
    else
        a->joins_head = (a->joins_head + 1) % NET_ADMISSION_JOINS;
}

net_admission_verdict net_admission_admit(net_admission *a, const net_admission_config *cfg,
                                          uint32_t players, double now)
{
    if (!cfg->enabled)
        return NET_ADMIT;
    if (a->refusing) {
        a->refused_episode++;
        return NET_ADMIT_BUSY;
    }
    while (a->joins_count > 0 && a->joins[a->joins_head] <= now - cfg->window_seconds) {
        a->joins_head = (a->joins_head + 1) % NET_ADMISSION_JOINS;
        a->joins_count--;
    }
    /* The pace: players x (HighLoad / load - 1) is the headroom in players at their average
     * cost; half of it, at twice that cost, per window (the window is how long a join takes
     * to show in the load). */
    if (a->full && players > 0 && a->load > 0) {
        double room = (double)players * (cfg->high_load / a->load - 1.0) / 2.0;

        if ((double)a->joins_count >= room)
            return NET_ADMIT_PACED;
    }
    net_admission_remember(a, now);
    return NET_ADMIT;
}

uint32_t net_admission_band_period(const net_admission *a, uint32_t band, uint32_t period)
{
    /* Band NET_STRETCH_LEVELS is the farthest; stretch s doubles the s farthest bands. */
    return band > 0 && band + a->stretch > NET_STRETCH_LEVELS ? 2 * period : period;
}
