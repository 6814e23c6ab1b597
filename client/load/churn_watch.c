/*
 * churn_watch.c - the server lost and found again, a pure rule over the run's clock (see
 * churn_watch.h).
 */
#include "churn_watch.h"

#include <string.h>

void churn_watch_init(churn_watch *w, double silence)
{
    memset(w, 0, sizeof *w);
    w->silence = silence;
    w->heard_at = -1;
    w->travel_end = -1;
}

churn_watch_event churn_watch_step(churn_watch *w, double now, double heard_at,
                                   double listening_since, bool late, bool travelling)
{
    double quiet_since;

    if (travelling)
        w->travel_end = now;

    if (heard_at >= 0 && (!w->heard || heard_at > w->heard_at)) {
        w->heard = true;
        w->heard_at = heard_at;
        if (w->lost) {
            w->lost = false;
            w->back_at = heard_at;
            return CHURN_WATCH_BACK;
        }
        return CHURN_WATCH_NONE;
    }
    if (w->lost || !w->heard || late || travelling || listening_since < 0)
        return CHURN_WATCH_NONE;
    /* Silence counts only while someone listens: from the last answer, or from when the
     * longest-open connection was opened if that is later (no bot was connected between),
     * and not before the last travel ended. */
    quiet_since = listening_since > w->heard_at ? listening_since : w->heard_at;
    if (w->travel_end > quiet_since)
        quiet_since = w->travel_end;
    if (now - quiet_since < w->silence)
        return CHURN_WATCH_NONE;
    w->lost = true;
    w->lost_at = w->heard_at;
    w->found_at = now;
    return CHURN_WATCH_LOST;
}
