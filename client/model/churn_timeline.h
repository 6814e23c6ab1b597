/*
 * churn_timeline.h - the churn run's timeline: one row per second, the estimated times of the
 * server's collections, the server's object count at every stats reply, and its objects by
 * class at every /metrics scrape. Plain data, appended to as the run goes; the report's
 * writers (report/report.h) are pure functions of it, so tests check them without a server.
 */
#ifndef REAP_CLIENT_CHURN_TIMELINE_H
#define REAP_CLIENT_CHURN_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>

#include "hist.h"

/* One second of the run. Counts are for that second; the server's figures are the latest
 * stats reply received by the row's end (have_server is false until the first one). */
typedef struct churn_row {
    double t;                   /* seconds since the start, at the row's end */
    uint32_t connected;         /* bots joined (welcomed, not yet gone) at the row's end */
    uint32_t joins;
    uint32_t leaves;            /* of which leaves_abrupt vanished without a goodbye */
    uint32_t leaves_abrupt;
    uint32_t spawned;           /* props acknowledged by the server */
    uint32_t errors;            /* what the server got wrong or never answered */
    uint32_t refused;           /* "server full" or "busy" answers (not errors) */
    bool server_lost;           /* the run held the server lost at some moment of this second
                                 * (found 2 s or more after it fell silent: the report's
                                 * outages say exactly when) */
    /* The generator's own health this second; negative: not measured. */
    double gen_cpu;             /* its CPU time / wall time (1 = one core) */
    double loop_lag;            /* the latest its loop's turn ran, seconds */
    bool have_server;
    uint32_t server_objects;
    uint32_t server_players;
    uint64_t collections;       /* the collector's completed collections, since server start */
    uint64_t objects_destroyed;
    double gc_interval;         /* seconds, the interval in force */
    double time_since_last_purge;
    uint64_t server_frame;
    uint32_t target;            /* bots the stage wanted taking part at the row's end */
    uint32_t stage;
    /* From the server's /metrics (--admin), over this second; negative: not measured. */
    bool have_admin;
    double tick_p50, tick_p99, tick_max;    /* seconds */
    double gc_collections;                  /* collections completed this second */
    double gc_work_max;                     /* longest collector slice this second, seconds */
    double admin_objects;
    double rss_bytes;
    double frames;                          /* frames run this second */
    double levels_loaded;                   /* streaming levels visible at the row's end */
    double levels_pending_purge;            /* ... streamed out, waiting for a collection */
} churn_row;

/* One stats reply: the server's object count at a moment (several a second). */
typedef struct churn_sample {
    double t;
    uint32_t objects;
} churn_sample;

/* Live objects of the world profile's classes at one /metrics scrape
 * (reap_world_objects_by_class), for the report's objects-by-class chart. */
enum { CHURN_CLASSES_MAX = 8, CHURN_CLASS_NAME_MAX = 40 };
typedef struct churn_class_sample {
    double t;
    double count[CHURN_CLASSES_MAX];   /* by churn_timeline.classes; -1: not in that scrape */
} churn_class_sample;

/* One match: the stretch of a run on one map, from the travel that began it (the run's start
 * for the first) to the next travel's start (or the run's end). The bots' side comes from the
 * Travel messages they were sent; the server's from its /metrics (--admin) after the travel
 * finished (figures not sampled are negative). Matches of shards of one run are one match
 * when their travel is: the same Travel.frame. A run keeps every match, each about 20 KB (its
 * travel histogram): a day of one-minute matches is under 30 MB. */
enum { CHURN_MATCH_MAP_MAX = 32 };
typedef struct churn_match {
    uint64_t frame;             /* Travel.frame of the travel that began it; 0: the first */
    char map[CHURN_MATCH_MAP_MAX];      /* "" while not known */
    uint32_t mode;              /* 0 the run's first match, 1 hard, 2 seamless (TravelMode) */
    double start;               /* seconds since the run's start (the first DEPART a bot saw) */
    double end;                 /* the next match's start; < 0: the run's end */
    uint32_t departed;          /* bots sent the DEPART */
    uint32_t arrived;           /* ... that then had the new map's join snapshot */
    hist travel;                /* the bots' travel times: DEPART -> new SnapshotComplete, us */
    bool server_seen;           /* the server's figures below were sampled after the travel */
    double server_seconds;      /* reap_travel_last_seconds */
    double longest_frame;       /* reap_travel_last_longest_frame_seconds */
    double frames_over_budget;  /* reap_travel_last_frames_over_budget */
    double objects, rss;        /* reap_gc_objects, process_resident_memory_bytes after it */
    double leaked_worlds;       /* reap_world_leaked_worlds after it */
} churn_match;

typedef struct churn_timeline {
    char server[300];           /* HOST:PORT */
    char world[64];             /* "" = the server's first world */
    uint32_t bots;
    double duration;
    uint32_t spawn;
    double hold;
    const char *disconnect;     /* static: "graceful", "abrupt" or "mixed" */
    uint64_t seed;
    churn_row *rows;            /* owned */
    uint32_t n_rows, cap_rows;
    double *gc_times;           /* owned: estimated start of each collection, seconds */
    uint32_t n_gc, cap_gc;
    churn_sample *samples;      /* owned: every stats reply, for a finer objects line */
    uint32_t n_samples, cap_samples;
    char classes[CHURN_CLASSES_MAX][CHURN_CLASS_NAME_MAX]; /* in the order first seen */
    uint32_t n_classes;
    churn_class_sample *class_samples; /* owned: one per scrape that had any */
    uint32_t n_class_samples, cap_class_samples;
    churn_match *matches;       /* owned: in order of start, every one the run saw */
    uint32_t n_matches, cap_matches;
    double match_seconds;       /* the rotation the scenario expects of the server; 0: none */
} churn_timeline;

/* Records the reap_world_objects_by_class{class="..."} samples of one scrape at time t (the
 * first CHURN_CLASSES_MAX classes seen). keys and values are n parallel entries. False on
 * allocation failure (the sample is dropped). */
bool churn_timeline_add_classes(churn_timeline *tl, double t, const char *const *keys,
                                const double *values, uint32_t n);

/* A match with every server figure unsampled (frame, map, mode and start as given). */
void churn_match_init(churn_match *m, uint64_t frame, const char *map, uint32_t mode,
                      double start);
/* The match the travel of Travel.frame `frame` began: found, or appended (start: t; the
 * match before it ends then); NULL on allocation failure. frame 0 is the run's first match. */
churn_match *churn_timeline_match(churn_timeline *tl, uint64_t frame, const char *map,
                                  uint32_t mode, double t);
/* The match under way (the last), or NULL when there is none. */
churn_match *churn_timeline_current_match(churn_timeline *tl);
/* Match i's figures from the timeline's rows (the seconds whose middle falls in it): the
 * bots joined at once, at most; the server's collections (its travel's included; negative
 * when /metrics was not sampled then). */
uint32_t churn_match_players(const churn_timeline *tl, uint32_t i);
double churn_match_collections(const churn_timeline *tl, uint32_t i);
/* Adds src's matches into dst's (one shard's into a merge): the same frame is the same
 * match (bots' counts and travel times add up, the server's figures are taken from the
 * first that has them); false on allocation failure. */
bool churn_timeline_merge_matches(churn_timeline *dst, const churn_timeline *src);
/* The least-squares slope of the resident memory after each travel, per match (bytes); NAN
 * with fewer than two matches that began with a sampled travel. */
double churn_timeline_rss_growth_per_match(const churn_timeline *tl);
/* Over the matches a travel began: the longest server frame of any travel, and the leaked
 * worlds after the last (NAN when none was sampled). */
double churn_timeline_travel_frame_max(const churn_timeline *tl);
double churn_timeline_leaked_worlds(const churn_timeline *tl);

/* Metadata is left zeroed for the caller to fill. */
void churn_timeline_init(churn_timeline *tl);
void churn_timeline_free(churn_timeline *tl);
/* Makes dst (initialised) a copy of src that shares nothing with it, reusing dst's arrays;
 * false on allocation failure (dst is then left as it was). Every owned array of the
 * timeline is copied here: one added to the struct must be added to it too. */
bool churn_timeline_copy(churn_timeline *dst, const churn_timeline *src);
/* Appends a copy of row / a collection time / a sample; false on allocation failure. */
bool churn_timeline_add_row(churn_timeline *tl, const churn_row *row);
bool churn_timeline_add_gc(churn_timeline *tl, double t);
bool churn_timeline_add_sample(churn_timeline *tl, double t, uint32_t objects);

/* The run's object and collection figures, the one source every output prints them from
 * (summary, report.json, report.html, churn.json): the first, last and largest object count of
 * the server's stats replies, and the collections seen between them. False when no stats reply
 * came. */
bool churn_timeline_objects(const churn_timeline *tl, uint32_t *out_first, uint32_t *out_last,
                            uint32_t *out_peak, uint32_t *out_collections);

/* The generator is saturated in a second when its loop used this share of a core or more (as
 * Locust warns at 90%), or a turn ran this late: its latencies then measure itself too. */
#define CHURN_SATURATED_CPU 0.9
#define CHURN_SATURATED_LAG 0.1

/* Whether a row's generator figures say it was saturated that second. */
bool churn_row_saturated(const churn_row *row);

#endif /* REAP_CLIENT_CHURN_TIMELINE_H */
