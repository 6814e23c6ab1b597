/*
 * tick_rate.c - the achieved-frame-rate monitor (see tick_rate.h).
 */
#include "tick_rate.h"

void tick_rate_init(tick_rate_monitor *m, double target_hz)
{
    m->target_hz = target_hz;
    m->window_start = -1;
    m->frames = 0;
    m->slow_windows = 0;
    m->warned = false;
    m->achieved_hz = 0;
}

tick_rate_event tick_rate_frame(tick_rate_monitor *m, double now)
{
    double elapsed;

    if (m->window_start < 0) {
        m->window_start = now;
        return TICK_RATE_NOTHING;
    }
    m->frames++;
    elapsed = now - m->window_start;
    if (elapsed < TICK_RATE_WINDOW_SECONDS)
        return TICK_RATE_NOTHING;
    m->achieved_hz = (double)m->frames / elapsed;
    m->window_start = now;
    m->frames = 0;
    if (m->achieved_hz < TICK_RATE_FRACTION * m->target_hz) {
        if (++m->slow_windows >= TICK_RATE_SLOW_WINDOWS && !m->warned) {
            m->warned = true;
            return TICK_RATE_SLOW;
        }
        return TICK_RATE_NOTHING;
    }
    m->slow_windows = 0;
    if (m->warned) {
        m->warned = false;
        return TICK_RATE_RECOVERED;
    }
    return TICK_RATE_NOTHING;
}
