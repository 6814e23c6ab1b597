/*
 * churn_stats.h - the server's figures as its StatsReply messages tell them (four times a
 * second one joined bot asks): the newest reply, the first, and the collections they reveal,
 * placed on the timeline.
 */
#ifndef REAP_CLIENT_CHURN_STATS_H
#define REAP_CLIENT_CHURN_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "churn_timeline.h"
#include "reap_msg.h"

typedef struct churn_stats {
    churn_timeline *tl;       /* borrowed: collections and object samples go there */
    bool have;                /* a reply arrived */
    Reap__StatsReply last;    /* the newest reply (scalars copied) */
    Reap__StatsReply first;
    double last_at;           /* when the newest came, seconds since the run's start */
    uint64_t replies;
    bool take_next;           /* the next reply is taken whatever its frame */
} churn_stats;

void churn_stats_init(churn_stats *st, churn_timeline *tl);
/* Keeps the newest reply (an older one overtaken by a newer is dropped) and places the
 * collections it reveals on the timeline: the newest at (now - time since the last purge),
 * earlier ones spread evenly back to the previous reply. */
void churn_stats_on_reply(churn_stats *st, const Reap__StatsReply *r, double now);
/* The server answers again after it stopped: if it was restarted it numbers its frames from 0,
 * so the next reply is taken as the newest whatever its frame. */
void churn_stats_server_back(churn_stats *st);

#endif /* REAP_CLIENT_CHURN_STATS_H */
