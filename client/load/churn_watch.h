/*
 * churn_watch.h - whether the server still answers, as the bots hear it: a pure rule over the
 * run's clock, fed once a turn with what the bots found out (when a datagram from the server
 * last arrived, since when a bot has had a connection open or being opened). A live server is
 * heard by every connected bot several times a second (replies, updates, ENet's
 * acknowledgements and keep-alive pings every 500 ms), so the server is held lost when nothing
 * from it arrived for `silence` seconds while some bot was there to hear it; it is lost from
 * the last moment it was heard, and back at the first moment it is heard again (a restarted
 * server answers a new connection). A server never heard is not "lost": the run's no-join
 * rule says that one is not there. Nor is a server between maps: while a travel is under way
 * (the bots were sent its DEPART and have not had the new map's snapshot yet; bounded by
 * CHURN_TRAVEL_MAX, load/churn_bot.h) its silence is the travel's (UE's LoadMap blocks the
 * server for the whole load), never an outage.
 */
#ifndef REAP_CLIENT_CHURN_WATCH_H
#define REAP_CLIENT_CHURN_WATCH_H

#include <stdbool.h>

/* Seconds of silence that make a server lost on a clean network (an impaired one adds twice
 * its latency and jitter: load/churn_run.c). */
#define CHURN_WATCH_SILENCE 2.0

typedef enum churn_watch_event {
    CHURN_WATCH_NONE = 0,
    CHURN_WATCH_LOST,     /* the server stopped answering at lost_at */
    CHURN_WATCH_BACK,     /* ... and answered again at back_at */
} churn_watch_event;

typedef struct churn_watch {
    double silence;       /* seconds */
    bool heard;           /* something from the server ever arrived */
    double heard_at;      /* the latest moment it did */
    bool lost;
    double lost_at;       /* the last moment it was heard before it was found lost */
    double found_at;      /* when it was found lost */
    double back_at;       /* when it was heard again (valid after a BACK) */
    double travel_end;    /* the last turn a travel was under way (-1: none yet) */
} churn_watch;

void churn_watch_init(churn_watch *w, double silence);
/* One turn at now: heard_at is when a datagram from the server last arrived (negative: never),
 * listening_since when the longest-open of the bots' connections was opened (negative: none
 * is open or being opened); a turn that ran late (the loop was elsewhere, not reading sockets)
 * decides nothing about silence, nor does one during a travel (travelling), and silence counts
 * from the travel's end at the earliest. Returns what changed. */
churn_watch_event churn_watch_step(churn_watch *w, double now, double heard_at,
                                   double listening_since, bool late, bool travelling);

#endif /* REAP_CLIENT_CHURN_WATCH_H */
