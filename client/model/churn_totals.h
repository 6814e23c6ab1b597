/*
 * churn_totals.h - what a churn run counts: joins, leaves, spawns, moves, checks, errors by
 * kind, and a latency histogram per kind of wait. Every field merges across shards by
 * addition, so the totals of N processes are the totals of one run.
 */
#ifndef REAP_CLIENT_CHURN_TOTALS_H
#define REAP_CLIENT_CHURN_TOTALS_H

#include <stdint.h>

#include "hist.h"

/* Latencies, recorded in microseconds. */
typedef enum churn_lat {
    CHURN_LAT_CONNECT = 0,   /* enet connect -> connected */
    CHURN_LAT_WELCOME,       /* hello sent -> welcome */
    CHURN_LAT_JOIN,          /* connect -> SnapshotComplete (the join snapshot has arrived) */
    CHURN_LAT_SPAWN_ACK,     /* first spawn request -> every prop acknowledged */
    CHURN_LAT_SPAWN_REPL,    /* first spawn request -> every prop replicated back */
    CHURN_LAT_RTT,           /* ping -> pong, once a second per bot */
    CHURN_LAT_CHECK,         /* replication check request -> reply */
    CHURN_LAT_LOOP_LAG,      /* how late each turn of the generator's own loop ran */
    CHURN_LAT_TRAVEL,        /* a server travel: Travel (DEPART) -> the new map's
                              * SnapshotComplete (a hard travel's reconnect included) */
    CHURN_LAT_COUNT,
} churn_lat;

typedef enum churn_error {
    CHURN_ERR_CONNECT = 0, /* no answer to a connection request */
    CHURN_ERR_REFUSED,     /* the server rejected a request with an Error (not "full") */
    CHURN_ERR_LOST,        /* the server closed a connection we had not closed */
    CHURN_ERR_TIMEOUT,     /* no welcome, spawn ack, replication, snapshot or check in time */
    CHURN_ERR_LEAVE,       /* the server did not close the connection after our goodbye */
    CHURN_ERR_MISMATCH,    /* a bot's mirror differed from the server's replication check */
    CHURN_ERR_SERVER_LOST, /* the server stopped answering every bot (load/churn_watch.c) */
    CHURN_ERR_COUNT,
} churn_error;

extern const char *const churn_lat_names[CHURN_LAT_COUNT];
extern const char *const churn_error_keys[CHURN_ERR_COUNT];
extern const char *const churn_error_names[CHURN_ERR_COUNT];

/* What a run counts. Every field merges across shards by addition. */
typedef struct churn_totals {
    uint64_t joins, leaves, leaves_abrupt, spawned, projectiles, moves, checks, snapshots;
    uint64_t unknown_destroys;   /* destroys for a net id the bot did not hold */
    uint64_t refused;            /* "server full" or "busy" answers: the server working as
                                  * designed */
    uint64_t refused_busy;       /* ... of which "busy, retry after" (admission control) */
    uint64_t travels;            /* server travels a bot followed to the new map's snapshot */
    uint64_t travel_refused;     /* ERROR_CODE_TRAVEL answers: the server between maps (a
                                  * travel, never an error) */
    uint64_t gen_cpu_us;         /* the generator's own CPU time */
    uint64_t gen_seconds;        /* seconds (timeline rows) it was measured over */
    uint64_t gen_saturated;      /* ... of which it was saturated (see churn_row_saturated) */
    /* Datagrams through an impairment (load/churn_impair.c) and what befell them. */
    uint64_t impair_datagrams, impair_dropped, impair_duplicated, impair_reordered;
    uint64_t errors[CHURN_ERR_COUNT];
    hist lat[CHURN_LAT_COUNT];
} churn_totals;

uint64_t churn_totals_errors(const churn_totals *t);
void churn_totals_init(churn_totals *t);
void churn_totals_merge(churn_totals *dst, const churn_totals *src);

#endif /* REAP_CLIENT_CHURN_TOTALS_H */
