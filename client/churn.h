/*
 * churn.h - reap-client's churn load generator: N bots, each visit on its own UDP port, in one
 * thread, that join, spawn props, hold and leave over and over for a fixed time, and the
 * timeline it keeps.
 *
 * The timeline (one row per second, the estimated times of the server's collections, and the
 * server's object count at every stats reply) is
 * plain data, written as JSON and as an SVG picture by churn_timeline.c; the writers are pure
 * functions of it so that tests can check them without a server.
 */
#ifndef REAP_CLIENT_CHURN_H
#define REAP_CLIENT_CHURN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "client.h"

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
    uint32_t refused;           /* "server full" answers (not errors) */
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

/* Writers: the timeline is borrowed, f is borrowed and left open. False on a write error. */
bool churn_timeline_write_json(const churn_timeline *tl, FILE *f);
bool churn_timeline_write_svg(const churn_timeline *tl, FILE *f);
/* One CSV row a second (header first; a figure not measured is an empty field; times in ms). */
bool churn_timeline_write_csv(const churn_timeline *tl, FILE *f);

/* Writes s as a JSON string / as SVG or HTML text (escaped). */
void churn_json_string(FILE *f, const char *s);
void churn_svg_text(FILE *f, const char *s);
/* A "nice" axis step (1, 2 or 5 times a power of ten) that cuts [0, max] into about ticks. */
double churn_nice_step(double max, int ticks);
/* mkdir -p; on failure err names the directory. */
bool churn_mkdirs(const char *path, char *err, size_t err_size);

/* Writes dir/name through writer(data, f): to name.tmp first, then renamed, so a reader never
 * sees half a file. On failure err names the file. */
typedef bool (*churn_write_fn)(const void *data, FILE *f);
bool churn_write_file(const char *dir, const char *name, churn_write_fn writer,
                      const void *data, char *err, size_t err_size);

/* Creates dir (and its parents) and writes dir/churn.json and dir/churn.svg. On failure err
 * says which file and why. */
bool churn_timeline_save(const churn_timeline *tl, const char *dir, char *err, size_t err_size);

/* Runs the churn described by opts (opts->bots > 0); progress and the summary go to out, the
 * timeline and the report to opts->out_dir. Returns a CLIENT_EXIT_* (CLIENT_EXIT_THRESHOLD
 * when the run completed but a threshold failed). */
int churn_run(const client_options *opts, FILE *out);

/* `reap-client merge DIR... --out DIR`: merges the reports of shards into one. */
int churn_merge_main(int argc, char **argv, FILE *out);

/* `reap-client compare BASE NEW`: two runs' figures with verdicts (churn_compare.c). */
int churn_compare_main(int argc, char **argv, FILE *out);

#endif /* REAP_CLIENT_CHURN_H */
