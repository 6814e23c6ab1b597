/*
 * net_admission.c - the load window, the refusing hysteresis, the join pace and the band
 * stretch (net_admission.h says the rules and their order).
 *
 * Assumes: one net_admission_observe per frame, times that never go back.
 * Guarantees: before a whole window of frames was seen only the slow start paces newcomers,
 * nothing else is decided; refusing starts only at HighLoad, or with frames lost at LowLoad
 * or more, and stops only below LowLoad; the stretch moves by one band at a time, at most
 * once per window of frames.
 */
#include "net_admission.h"

#include <math.h>
#include <string.h>

void net_admission_init(net_admission *a)
{
    memset(a, 0, sizeof *a);
    a->rng = 0x5EEDF00Du;
}

uint32_t net_admission_retry_ms(net_admission *a, uint32_t base_ms)
{
    /* splitmix64 */
    uint64_t z = (a->rng += 0x9E3779B97F4A7C15u);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    z ^= z >> 31;
    return base_ms + (uint32_t)(((z >> 32) * (uint64_t)base_ms) >> 32);
}

/* Frames in the window at this frame period: at least 2, at most NET_ADMISSION_FRAMES. */
static uint32_t net_admission_window_frames(const net_admission_config *cfg)
{
    double n = cfg->period > 0 ? floor(cfg->window_seconds / cfg->period + 0.5) : 2;

    if (n < 2)
        return 2;
    return n > NET_ADMISSION_FRAMES ? NET_ADMISSION_FRAMES : (uint32_t)n;
}

static void net_admission_measure(net_admission *a, const net_admission_config *cfg)
{
    uint32_t n = net_admission_window_frames(cfg);
    double busy = 0, elapsed = 0, cut = 0;

    a->full = a->count >= n;
    if (n > a->count)
        n = a->count;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = (a->head + NET_ADMISSION_FRAMES - 1 - k) % NET_ADMISSION_FRAMES;
        busy += a->busy[i];
        elapsed += a->elapsed[i];
        cut += a->cut[i];
    }
    a->frames = n;
    a->load = n > 0 && cfg->period > 0 ? busy / ((double)n * cfg->period) : 0;
    {
        uint32_t m = n / 8 < 2 ? 2 : n / 8;
        double lately = 0;

        if (m > a->count)
            m = a->count;
        for (uint32_t k = 0; k < m; k++)
            lately += a->busy[(a->head + NET_ADMISSION_FRAMES - 1 - k) % NET_ADMISSION_FRAMES];
        a->load_lately = m > 0 && cfg->period > 0 ? lately / ((double)m * cfg->period) : 0;
    }
    a->achieved_hz = elapsed > 0 ? (double)n / elapsed : 0;
    a->complete_hz = elapsed > 0 ? ((double)n - cut) / elapsed : 0;
}

net_admission_event net_admission_observe(net_admission *a, const net_admission_config *cfg,
                                          double busy, double elapsed, double cut, double now)
{
    a->busy[a->head] = busy > 0 ? busy : 0;
    a->elapsed[a->head] = elapsed > 0 ? elapsed : 0;
    a->cut[a->head] = cut < 0 ? 0 : cut > 1 ? 1 : cut;
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
    if (a->stretch_wait < UINT32_MAX)
        a->stretch_wait++;
    if (!a->full)
        return NET_ADMISSION_NOTHING;

    /* The stretch: one band per window of frames, up from StretchLoad, down below LowLoad. */
    if (a->stretch_wait >= net_admission_window_frames(cfg)) {
        if (a->load >= cfg->stretch_load && a->stretch < NET_STRETCH_LEVELS) {
            a->stretch++;
            a->stretch_wait = 0;
        } else if (a->load < cfg->low_load && a->stretch > 0) {
            a->stretch--;
            a->stretch_wait = 0;
        }
    }

    if (a->refusing && a->load > a->peak_load)
        a->peak_load = a->load;
    /* Frames lost (fewer than NET_ADMISSION_ON_TIME of the tick rate over the window were on
     * time and served everyone: a frame whose replication budget made a share of its
     * connections wait is that share of a frame that did not fit) while the load is between
     * the marks: the average hides spikes that the frames do not survive (a burst of
     * joiners), so refusing starts then too. Below the low mark late frames are not the
     * players' doing (another process on the machine, a collection). */
    /* Nor in the window after refusing stopped: its frames are those that stopped it (no
     * flapping at the low mark). */
    a->frames_lost = cfg->period > 0 && a->complete_hz < NET_ADMISSION_ON_TIME / cfg->period &&
                     a->load >= cfg->low_load &&
                     (a->stopped_at == 0 || now - a->stopped_at >= cfg->window_seconds);
    if (!a->refusing && (a->load >= cfg->high_load || a->frames_lost)) {
        a->refusing = true;
        a->refusing_since = now;
        a->refused_episode = 0;
        a->peak_load = a->load;
        return NET_ADMISSION_STARTED_REFUSING;
    }
    if (a->refusing && a->load < cfg->low_load) {
        a->refusing = false;
        a->stopped_at = now;
        return NET_ADMISSION_STOPPED_REFUSING;
    }
    return NET_ADMISSION_NOTHING;
}

static void net_times_push(net_admission_times *r, double now)
{
    r->t[(r->head + r->count) % NET_ADMISSION_JOINS] = now;
    if (r->count < NET_ADMISSION_JOINS)
        r->count++;
    else
        r->head = (r->head + 1) % NET_ADMISSION_JOINS;
}

/* Forgets the times at or before since; returns how many are left. */
static uint32_t net_times_expire(net_admission_times *r, double since)
{
    while (r->count > 0 && r->t[r->head] <= since) {
        r->head = (r->head + 1) % NET_ADMISSION_JOINS;
        r->count--;
    }
    return r->count;
}

/* How many of the times are after since (the newest are at the end). */
static uint32_t net_times_after(const net_admission_times *r, double since)
{
    uint32_t n = 0;

    while (n < r->count && r->t[(r->head + r->count - 1 - n) % NET_ADMISSION_JOINS] > since)
        n++;
    return n;
}

void net_admission_note_leave(net_admission *a, double now)
{
    net_times_push(&a->leaves, now);
}

net_admission_verdict net_admission_admit(net_admission *a, const net_admission_config *cfg,
                                          uint32_t players, double now)
{
    double since = now - cfg->window_seconds;
    uint32_t joins, leaves;

    if (!cfg->enabled)
        return NET_ADMIT;
    if (a->refusing) {
        a->refused_episode++;
        return NET_ADMIT_BUSY;
    }
    joins = net_times_expire(&a->joins, since);
    leaves = net_times_expire(&a->leaves, since);
    /* The pace: with a player's cost growing with the players it sees (a crowd: the load grows
     * with their square), n x (sqrt(HighLoad / load) - 1) more bring the load to the high mark,
     * n the players the load shows (those in, less the window's newcomers, who do not show in
     * it yet). The window's newcomers less its leavers stay under that many, and within an
     * eighth of the window under a quarter of it (or NET_ADMISSION_BURST), so that they come
     * spread rather than in one frame (a newcomer taking a leaver's place counts in neither). */
    double lately = now - cfg->window_seconds / 8;
    double recent = (double)net_times_after(&a->joins, lately) -
                    (double)net_times_after(&a->leaves, lately);
    /* The players whose cost the window's load shows: those in less the window's newcomers. */
    double shown = (double)players - ((double)joins - (double)leaves);

    if (shown < 0)
        shown = 0;
    /* The load of a few players says little of what a crowd would cost: under the low mark and
     * with fewer than NET_ADMISSION_SLOW_START shown, the slow start's rule. */
    if (a->full && a->load > 0 &&
        (shown >= NET_ADMISSION_SLOW_START || (shown > 0 && a->load >= cfg->low_load))) {
        double room = shown * (sqrt(cfg->high_load / a->load) - 1.0);
        double burst = room / 4 > NET_ADMISSION_BURST ? room / 4 : NET_ADMISSION_BURST;

        if ((double)joins - (double)leaves >= room || recent >= burst)
            return NET_ADMIT_PACED;
    } else if (a->load_lately >= 1.0 ||
               recent >= NET_ADMISSION_SLOW_START + ((double)players - recent)) {
        /* No load of players to go by (a window not yet seen whole, or few in whose cost it
         * shows): a slow start. Newcomers while the last few frames are on time (their work
         * under the period: the newcomers' cost shows there first, and one long frame of a
         * join burst does not stop it), and within an eighth of the window at most
         * NET_ADMISSION_SLOW_START and as many again as are in, so that an empty server hit by
         * a thousand at once (a restart, a load test's start) does not take them all in one
         * frame before their cost shows. */
        return NET_ADMIT_PACED;
    }
    net_times_push(&a->joins, now);
    return NET_ADMIT;
}

uint32_t net_admission_band_period(const net_admission *a, uint32_t band, uint32_t period)
{
    /* Band NET_STRETCH_LEVELS is the farthest; stretch s doubles the s farthest bands. */
    return band > 0 && band + a->stretch > NET_STRETCH_LEVELS ? 2 * period : period;
}
