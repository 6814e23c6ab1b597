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
} churn_timeline;

/* Records the reap_world_objects_by_class{class="..."} samples of one scrape at time t (the
 * first CHURN_CLASSES_MAX classes seen). keys and values are n parallel entries. False on
 * allocation failure (the sample is dropped). */
bool churn_timeline_add_classes(churn_timeline *tl, double t, const char *const *keys,
                                const double *values, uint32_t n);

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
