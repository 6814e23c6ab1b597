/*
 * churn_report.h - the run model: everything a churn run measured, in one value that the live
 * generator fills in (load/churn_run.c), `merge` adds up from shards and `compare` reads back,
 * and every writer (report/) renders. Times are kept in seconds; a figure not measured is
 * negative (or NAN from churn_report_metric).
 */
#ifndef REAP_CLIENT_CHURN_REPORT_H
#define REAP_CLIENT_CHURN_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "churn_outage.h"
#include "churn_plan.h"
#include "churn_threshold.h"
#include "churn_timeline.h"
#include "churn_totals.h"

enum { CHURN_REPORT_SCHEMA = 1 };

/* The server's figures over the run, from its /metrics (negative: not exported). */
typedef enum churn_phase {
    CHURN_PHASE_NET = 0, CHURN_PHASE_WORLD, CHURN_PHASE_REPL, CHURN_PHASE_GC, CHURN_PHASE_COUNT,
} churn_phase;

extern const char *const churn_phase_names[CHURN_PHASE_COUNT];

typedef struct churn_server {
    bool have;                   /* two scrapes or more: the figures below are deltas */
    uint32_t scrapes, scrape_errors;
    double seconds;              /* between the first and the last scrape */
    double frames;
    double tick_p50, tick_p99, tick_max;   /* seconds; tick_max is a bucket's upper bound */
    double phase_p99[CHURN_PHASE_COUNT];
    double collections;
    double gc_work_p99, gc_work_max, gc_work_sum;
    double bytes_sent;
    double players_mean;
    double cpu_seconds;
    double objects_first, objects_last, objects_peak;
    double rss_peak;
    /* Streaming levels (a world profile with [cells]; negative: not exported). */
    double levels_loaded_peak;   /* streaming levels visible at once, at most */
    double level_load_wait_p50, level_load_wait_p99; /* seconds, the server's last 4096 loads */
    double levels_pending_purge_max; /* the most pending purge at once, since the server's start */
    double level_streams_in, level_streams_out; /* during the run */
    double levels_survived;      /* streamed-out levels a collection did not free, during it */
    double streaming_collections; /* collections a stream-out or levels pending purge started */
} churn_server;

/* Every figure not measured (-1). */
void churn_server_init(churn_server *s);
/* Bytes per second per connection: bytes sent over the run / seconds / mean players; -1 when
 * not measured. */
double churn_bytes_per_conn(const churn_server *s);

/* The leak verdict (load/churn_leaks.c). */
typedef struct churn_leaks {
    bool checked;                /* a verdict was asked for (needs --admin) */
    bool supported;              /* the server knows `gc leaks` */
    long baseline, after;        /* objects before the first join and after the final gc */
    long leaked;                 /* objects created during the run still alive, -1 unknown */
    char *detail;                /* owned: the server's listing, by class with chains */
} churn_leaks;

typedef struct churn_report {
    int schema;
    char run_id[64];
    char start_time[32];         /* ISO 8601, UTC */
    char host[128];
    char scenario[64];
    char server[300];
    char impairment[300];        /* "none", one impairment, or "STAGE: ...; STAGE: ..." */
    /* Where the bots' datagrams came from: "own" (each bot its own loopback address), "one"
     * (the kernel's choice), "own, then one" (a bind failed during the run), "mixed" (merged
     * shards that differ); "" unknown (a report older than the option). */
    char source_addresses[16];
    char source_option[8];       /* --source-addresses: "auto" or "one"; "" unknown */
    uint64_t seed;
    uint32_t shard, shards;      /* shards: how many processes were merged into this */
    uint32_t bots;
    double duration, elapsed;
    churn_totals totals;
    churn_server server_figs;
    churn_leaks leaks;
    bool interrupted;            /* stopped early by SIGINT or SIGTERM */
    bool partial;                /* a checkpoint of a run still going: it stops at elapsed */
    churn_outages outages;       /* when the server did not answer */
    churn_timeline *tl;          /* borrowed */
    /* What the run was asked for, as the report echoes it. */
    const client_stage *stages;  /* borrowed: n_stages of them */
    uint32_t n_stages;
    bool admin;                  /* --admin was given: the server's /metrics was to be read */
    client_threshold thresholds[CLIENT_THRESHOLDS_MAX];
    uint32_t n_thresholds;
} churn_report;

/* The figure a threshold names, in base units; false if the name is unknown, NAN if not
 * measured. */
bool churn_report_metric(const churn_report *r, const char *name, double *out);

#endif /* REAP_CLIENT_CHURN_REPORT_H */
