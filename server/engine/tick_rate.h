/*
 * tick_rate.h - notices when the frame rate the loop achieves stays under the one asked for.
 *
 * A --tick-hz the machine cannot sustain shows up as fewer frames per second than asked, not
 * as an error, so the engine asks this monitor once per frame. The rate is counted over
 * windows of TICK_RATE_WINDOW_SECONDS; TICK_RATE_SLOW_WINDOWS windows in a row under
 * TICK_RATE_FRACTION of the target raise one warning, and one window at or over it ends the
 * episode (so a single slow collection never warns). Time is passed in: tests drive it.
 */
#ifndef REAP_TICK_RATE_H
#define REAP_TICK_RATE_H

#include <stdbool.h>
#include <stdint.h>

#define TICK_RATE_FRACTION 0.9
#define TICK_RATE_WINDOW_SECONDS 1.0
#define TICK_RATE_SLOW_WINDOWS 3

typedef enum tick_rate_event {
    TICK_RATE_NOTHING = 0,   /* no window ended, or nothing changed */
    TICK_RATE_SLOW,          /* the rate stayed low long enough: warn now (once per episode) */
    TICK_RATE_RECOVERED,     /* back at speed after a warning */
} tick_rate_event;

typedef struct tick_rate_monitor {
    double target_hz;
    double window_start;     /* seconds; < 0 until the first frame */
    uint32_t frames;         /* frames counted in the current window */
    uint32_t slow_windows;   /* consecutive slow windows */
    bool warned;
    double achieved_hz;      /* the rate of the last finished window */
} tick_rate_monitor;

void tick_rate_init(tick_rate_monitor *m, double target_hz);

/* One frame began at now (seconds, any monotonic origin). */
tick_rate_event tick_rate_frame(tick_rate_monitor *m, double now);

#endif /* REAP_TICK_RATE_H */
