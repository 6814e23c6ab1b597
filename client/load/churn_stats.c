/*
 * churn_stats.c - the server's StatsReply figures over the run (see churn_stats.h).
 */
#include "churn_stats.h"

#include <string.h>

void churn_stats_init(churn_stats *st, churn_timeline *tl)
{
    memset(st, 0, sizeof *st);
    st->tl = tl;
}

void churn_stats_on_reply(churn_stats *st, const Reap__StatsReply *r, double now)
{
    if (st->have && r->frame < st->last.frame && !st->take_next)
        return; /* an older answer overtaken by a newer one */
    st->take_next = false;
    if (!st->have) {
        st->first = *r;
    } else if (r->collections > st->last.collections) {
        uint64_t d = r->collections - st->last.collections;
        double latest = now - r->time_since_last_purge_seconds;

        if (latest < st->last_at)
            latest = st->last_at;
        if (latest > now)
            latest = now;
        for (uint64_t k = 1; k <= d && k <= 1000; k++)
            churn_timeline_add_gc(st->tl, st->last_at + (latest - st->last_at) * (double)k /
                                          (double)d);
    }
    churn_timeline_add_sample(st->tl, now, r->objects);
    st->last = *r; /* scalars only: nothing in it points into the arena */
    st->have = true;
    st->last_at = now;
    st->replies++;
}

void churn_stats_server_back(churn_stats *st)
{
    st->take_next = true;
}
