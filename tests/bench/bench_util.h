/*
 * bench_util.h - what every benchmark program shares: a monotonic clock, medians and
 * percentiles, memory readings, a small JSON writer (and a reader for our own files), child
 * processes for peers that must start from a clean process, and the output conventions.
 *
 * A figure that could not be measured (the feature is missing, a child crashed) is NaN: it
 * prints as "n/a" and is written to JSON as null.
 */
#ifndef REAP_BENCH_UTIL_H
#define REAP_BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Repetitions, the same for every collector so that medians compare. */
#define BENCH_WARMUP 1     /* untimed collections before the timed ones (Boehm, Lua: 2) */
#define BENCH_REPS 7       /* timed collections; the median is reported */
#define BENCH_MAX_RUNS 16  /* capacity of a bench_runs */

/* ---- time ---------------------------------------------------------------------------- */

/* Monotonic seconds. */
double bench_now(void);
/* CPU seconds the calling thread has run (CLOCK_THREAD_CPUTIME_ID): beside wall time, it
 * tells a slice the scheduler interrupted (wall > CPU) from one that did too much work. */
double bench_thread_cpu(void);

/* ---- statistics ---------------------------------------------------------------------- */

/* The timed repetitions of one figure, in seconds. NaN entries mean "not measured". */
typedef struct bench_runs {
    double v[BENCH_MAX_RUNS];
    unsigned count;
} bench_runs;

void bench_runs_add(bench_runs *r, double seconds);
/* Median of the measured entries; NaN if there are none. */
double bench_runs_median(const bench_runs *r);

/* Median / percentile of an array of doubles (sorted in place). p in [0,1], nearest rank. */
double bench_median(double *v, size_t n);
double bench_percentile(double *v, size_t n, double p);

/* Slices of an incremental collection, summarised. */
typedef struct bench_slices {
    uint32_t count;
    double longest;   /* seconds */
    double p99;       /* seconds, nearest rank */
    double total;     /* seconds, sum of the slices */
} bench_slices;

/* Summarises n slice durations (reorders v). */
void bench_slices_summarise(double *v, size_t n, bench_slices *out);

/* ---- memory -------------------------------------------------------------------------- */

/* Bytes handed out by malloc right now (mallinfo2: uordblks + hblkhd), or NaN if the C
 * library cannot tell. */
double bench_malloc_in_use(void);
/* Resident set size of this process in bytes (from /proc/self/statm), or NaN. */
double bench_rss(void);

/* ---- output -------------------------------------------------------------------------- */

/* Prints a progress line ("  ... building root array: 1000000 objects") and flushes, so
 * that long phases show up at once under make. */
void bench_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Formats seconds as milliseconds ("12.34"), or "n/a" for NaN, into buf. */
const char *bench_fmt_ms(char *buf, size_t size, double seconds);
/* Formats a plain number with `decimals` decimals, or "n/a". */
const char *bench_fmt_num(char *buf, size_t size, double v, int decimals);

/* The data and unified caches of CPU 0 as sysfs describes them (size as written there,
 * "512K"; the CPUs sharing it, "0-1"), smallest level first. Figures from machines with
 * other caches are not comparable: the standard graph fits in few of them. Returns how many
 * were found (0 without sysfs). */
typedef struct bench_cache {
    char name[16];      /* "L1d", "L2", "L3" */
    char size[16];
    char shared[32];
} bench_cache;
int bench_caches(bench_cache *out, int max);
/* "L1d 32K (cpus 0), L2 512K (cpus 0), L3 32768K (cpus 0-1)" into buf. */
const char *bench_caches_str(char *buf, size_t size);

/* True when the build was optimised; benchmarks warn loudly otherwise. */
bool bench_is_optimised(void);
/* Lines naming the compiler, the optimisation, the machine's core count, its caches and its
 * load. */
void bench_print_environment(void);
/* One line with /proc/loadavg, e.g. when = "at the end". */
void bench_print_load(const char *when);

/* ---- JSON writer --------------------------------------------------------------------- */

/* Writes one JSON document with nested objects; keeps track of commas and indentation. */
typedef struct bench_json {
    FILE *f;
    int depth;
    bool need_comma[16];
} bench_json;

/* Opens dir/name for writing, creating dir if needed; false (with a message on stderr) if
 * it cannot. */
bool bench_json_open(bench_json *j, const char *dir, const char *name);
/* Closes the top-level object and the file; false if anything failed to be written. */
bool bench_json_close(bench_json *j);
void bench_json_begin(bench_json *j, const char *key); /* key NULL inside arrays / top */
void bench_json_end(bench_json *j);
void bench_json_num(bench_json *j, const char *key, double v);   /* NaN -> null */
void bench_json_ms(bench_json *j, const char *key, double seconds); /* seconds -> ms */
void bench_json_int(bench_json *j, const char *key, long long v);
void bench_json_str(bench_json *j, const char *key, const char *s);
void bench_json_bool(bench_json *j, const char *key, bool v);
/* "caches": {"L1d": "32K", ...} (bench_caches). */
void bench_json_caches(bench_json *j);
/* An array of the runs in milliseconds. */
void bench_json_runs_ms(bench_json *j, const char *key, const bench_runs *r);

/* ---- JSON reader (our own files only) ------------------------------------------------ */

/* Reads a whole file into a malloc'ed, NUL-terminated buffer (caller frees); NULL if absent. */
char *bench_file_read(const char *dir, const char *name);
/* Looks up a number by a path of keys, each searched for after the previous one
 * ("boehm", "root_array", "markers_1_ms"). Works for files bench_json wrote, where a key's
 * first occurrence after its parent's is the one meant. NaN if absent or null. */
double bench_json_lookup(const char *text, const char *const *keys, size_t nkeys);

/* ---- child processes ----------------------------------------------------------------- */

/* Runs fn(arg, shared) in a forked child; `shared` is a zeroed block of shared_size bytes
 * that the parent reads back after the child exits. Returns true if the child exited with
 * status 0. Peers whose runtime can only be configured once per process (Boehm's marker
 * count) or that should not inherit another collector's heap run this way. */
typedef int (*bench_child_fn)(void *arg, void *shared);
bool bench_run_child(const char *what, bench_child_fn fn, void *arg, void *shared,
                     size_t shared_size);

#endif /* REAP_BENCH_UTIL_H */
