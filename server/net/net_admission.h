/*
 * net_admission.h - admission control: the server's own headroom decides whether a new player
 * may join now, and how far the update bands of the players already in are stretched.
 *
 * The load is the loop's work per frame over the frame period, averaged over the last
 * net.Admission.WindowSeconds of frames: everything the loop did between two frames (the
 * frame's phases, the socket reads between frames, admin requests, periodic jobs) counts,
 * waiting in epoll does not. 1.0 is a loop busy for the whole period; past it frames are late
 * (load 1.05 is 28.6 frames/s at 30 Hz). Plain state over injected figures, so every rule has
 * a unit test (tests/unit/test_net_admission.c); the driver feeds it once per frame.
 *
 * The order of degradation as the load rises (each step also waits for a full window):
 *   1. load >= StretchLoad: the farthest update band not yet stretched doubles its period,
 *      one more band each window the load stays there (band 3, then 2, then 1; band 0, the
 *      nearest, and a player's own movers never): far movers are sent less often first.
 *   2. load >= HighLoad, or frames lost (the window's frames that were on time, each less the
 *      share of its connections net.ReplicationFrameBudget made wait, ran under
 *      NET_ADMISSION_ON_TIME of the tick rate; not in the window after refusing last stopped)
 *      at LowLoad or more: every new Hello is refused (ERROR_CODE_BUSY) until the load falls
 *      below LowLoad. Below it new players are let in at a pace: within one window the
 *      newcomers less the leavers stay under n x (sqrt(HighLoad / load) - 1) (n the players
 *      the load shows, those in less the window's newcomers: what brings the load
 *      to HighLoad if it grows with the square of the players, as in a crowd where everyone
 *      sees everyone), and so do they within an eighth of the window under a quarter of that
 *      (or NET_ADMISSION_BURST), so that they arrive spread; the rest are told busy too.
 *      A busy client is told to come back after RetryAfterMs to twice that, at random.
 *   3. Nothing else: players already in are never disconnected for load.
 * (Within each frame, whatever the load, net.ReplicationFrameBudget makes the connections left
 * wait for the next frame once the frame's time is spent: net_replication.c.)
 * Below LowLoad the stretched bands unwind, the nearest stretched first, one per window.
 * Until a whole window of frames was seen, and while the window's load shows fewer than
 * NET_ADMISSION_SLOW_START players at under LowLoad (the rest came during it), there is no
 * load of players to go by: new players then come in at a slow
 * start, while the frames of the last eighth of the window are on time (work under the
 * period) and, within an eighth, at most NET_ADMISSION_SLOW_START and as many again as are
 * in; the rest are told busy. Nothing else is decided before a whole window.
 */
#ifndef REAP_NET_ADMISSION_H
#define REAP_NET_ADMISSION_H

#include <stdbool.h>
#include <stdint.h>

enum {
    NET_ADMISSION_FRAMES = 1024,   /* the window's longest, in frames */
    NET_ADMISSION_JOINS = 4096,    /* joins and leaves remembered (those of the last window) */
    NET_STRETCH_LEVELS = 3,        /* bands that can stretch: all but the nearest */
#define NET_ADMISSION_ON_TIME 0.97 /* of the tick rate: fewer frames a window are frames lost */
    NET_ADMISSION_BURST = 16,      /* newcomers an eighth of a window may bring at least */
    NET_ADMISSION_SLOW_START = 256, /* newcomers per eighth of a window with no load to go by,
                                       besides as many as are in */
};

typedef struct net_admission_config {
    bool enabled;           /* net.AdmissionControl */
    double high_load;       /* net.Admission.HighLoad */
    double low_load;        /* net.Admission.LowLoad */
    double stretch_load;    /* net.Admission.StretchLoad */
    double window_seconds;  /* net.Admission.WindowSeconds */
    double period;          /* seconds of a frame (1 / --tick-hz) */
} net_admission_config;

typedef enum net_admission_event {
    NET_ADMISSION_NOTHING = 0,
    NET_ADMISSION_STARTED_REFUSING,
    NET_ADMISSION_STOPPED_REFUSING,
} net_admission_event;

typedef enum net_admission_verdict {
    NET_ADMIT = 0,
    NET_ADMIT_BUSY,         /* refusing: the load reached HighLoad, or frames were lost */
    NET_ADMIT_PACED,        /* this window's pace (or the slow start's) is used up */
} net_admission_verdict;

/* Times of events of the last window, oldest first (a ring). */
typedef struct net_admission_times {
    double t[NET_ADMISSION_JOINS];
    uint32_t head, count;
} net_admission_times;

typedef struct net_admission {
    double busy[NET_ADMISSION_FRAMES];     /* loop work per frame, seconds (a ring) */
    double elapsed[NET_ADMISSION_FRAMES];  /* time since the frame before, seconds */
    double cut[NET_ADMISSION_FRAMES];      /* the share of the frame's connections its
                                              replication budget made wait (0..1) */
    uint32_t head, count;
    net_admission_times joins;             /* admissions of the last window */
    net_admission_times leaves;            /* players that left in the last window */

    /* After each frame: the window's figures (valid once a whole window was seen). */
    bool full;
    double load;            /* busy per frame / period over the window */
    double load_lately;     /* ... over its last eighth (2 frames at least; 0 before any) */
    double achieved_hz;     /* frames per second over the window */
    double complete_hz;     /* ... less the shares of them whose connections waited */
    uint32_t frames;        /* frames in the window */

    bool refusing;
    double stopped_at;      /* when refusing last stopped (0: never) */
    bool frames_lost;       /* complete_hz ran under NET_ADMISSION_ON_TIME of the tick rate at
                               LowLoad or more (refusing starts then too) */
    double refusing_since;
    uint64_t refused_episode;  /* Hellos refused since refusing started */
    double peak_load;          /* the highest load while refusing */
    uint32_t stretch;          /* bands stretched: 0..NET_STRETCH_LEVELS, farthest first */
    uint64_t rng;              /* splitmix64 state: the retry-after's spread */
    uint32_t stretch_wait;     /* frames since the stretch last changed (or since the start) */
} net_admission;

void net_admission_init(net_admission *a);

/* One frame: busy = the loop's work since the frame before, elapsed = the time since it (both
 * seconds), cut = the share of its connections its replication budget made wait (0..1,
 * net.ReplicationFrameBudget), now = the time. Updates the window's figures, the refusing
 * state (hysteresis) and the stretch; returns whether refusing started or stopped this frame. */
net_admission_event net_admission_observe(net_admission *a, const net_admission_config *cfg,
                                          double busy, double elapsed, double cut, double now);

/* Whether a new player (with `players` in already) may join now; an admission is remembered
 * for the pace. Always NET_ADMIT when admission control is off. */
net_admission_verdict net_admission_admit(net_admission *a, const net_admission_config *cfg,
                                          uint32_t players, double now);

/* Error.retry_after_ms of a busy refusal: base_ms to twice that, at random, so that the
 * refused do not all come back in one wave. */
uint32_t net_admission_retry_ms(net_admission *a, uint32_t base_ms);

/* A player left (the pace counts the window's newcomers less its leavers). */
void net_admission_note_leave(net_admission *a, double now);

/* The period of an update band (0 nearest .. NET_STRETCH_LEVELS farthest) whose base period is
 * `period`, under the current stretch. */
uint32_t net_admission_band_period(const net_admission *a, uint32_t band, uint32_t period);

#endif /* REAP_NET_ADMISSION_H */
