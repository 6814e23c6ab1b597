/*
 * report_compare.h - two runs' reports compared figure by figure, each figure with the
 * interval its measurement cannot tell apart and a verdict: better, same, worse (what
 * `reap-client compare` prints and gates on). Pure functions of two run models, and the
 * writers of compare.tsv and compare.html.
 */
#ifndef REAP_CLIENT_REPORT_COMPARE_H
#define REAP_CLIENT_REPORT_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "churn_report.h"

typedef enum churn_verdict {
    CHURN_VERDICT_SAME = 0, CHURN_VERDICT_BETTER, CHURN_VERDICT_WORSE, CHURN_VERDICT_UNMEASURED,
    CHURN_VERDICT_COUNT,
} churn_verdict;

extern const char *const churn_verdict_names[CHURN_VERDICT_COUNT];

/* One run's figure and the interval its measurement cannot tell apart (lo <= v <= hi; hi is
 * INFINITY when too few samples bound it). Times in seconds. */
typedef struct churn_compare_value {
    bool have;
    double v, lo, hi;
    uint64_t n;                  /* samples behind it */
} churn_compare_value;

/* stat: "pN" (a percentile), "mean" or "max" of a latency histogram (microseconds). */
void churn_compare_value_hist(const hist *h, const char *stat, churn_compare_value *out);
/* A server time quantile p (100: max) over `frames` frames, from the server's buckets;
 * seconds < 0 or NAN: not measured. */
void churn_compare_value_server_time(double seconds, double frames, double p,
                                     churn_compare_value *out);
void churn_compare_value_count(double count, churn_compare_value *out);
void churn_compare_value_exact(double v, churn_compare_value *out);
/* Better or worse only when the change ((new - base) / base, into *out_change) is beyond the
 * tolerance and the intervals do not overlap; *out_why says why a change is "same". */
churn_verdict churn_compare_judge(const churn_compare_value *base, const churn_compare_value *nv,
                                  bool higher_is_better, double tolerance, double *out_change,
                                  const char **out_why);
/* "5%" or "0.05"; false on anything else or outside [0, 100]. */
bool churn_compare_tolerance_parse(const char *text, double *out);

typedef enum compare_kind {
    COMPARE_LATENCY,      /* a client histogram's percentile, mean or max */
    COMPARE_SERVER_TIME,  /* p: the percentile (100: max) */
    COMPARE_COUNT,
    COMPARE_EXACT,
} compare_kind;

/* One figure of the comparison. */
typedef struct compare_figure {
    char name[48];
    compare_kind kind;
    bool higher_is_better;
    bool seconds;               /* shown in ms */
    churn_compare_value base, nv;
    double change;
    churn_verdict verdict;
    const char *why;
    bool gated;                 /* the caller's: a worse verdict fails the comparison */
} compare_figure;

enum { COMPARE_STATS = 5, COMPARE_FIGURES_MAX = CHURN_LAT_COUNT * COMPARE_STATS + 32 };

/* One run as compare reads it. */
typedef struct compare_run {
    churn_report r;
    churn_timeline tl;
    char dir[1024];
} compare_run;

/* Fills figs (COMPARE_FIGURES_MAX of room) with every figure compare judges; returns how
 * many. */
uint32_t churn_compare_list(compare_figure *figs);
/* Whether name is one of figs. */
bool churn_compare_known(const compare_figure *figs, uint32_t n, const char *name);
/* Each figure's value in both runs, its change and its verdict. */
void churn_compare_figures(compare_figure *figs, uint32_t n, const churn_report *base,
                           const churn_report *nv, double tolerance);
/* The table of figures with their verdicts, and a line counting the verdicts. */
void churn_compare_print(const compare_figure *figs, uint32_t n, FILE *out);
/* A change as "+12.3%" ("-" unknown, "from 0", "to 0"). */
void churn_compare_change(char *buf, size_t size, double change);
/* Creates out_dir and writes compare.tsv and compare.html there; false with err naming the
 * file. */
bool churn_compare_save(const char *out_dir, const compare_run *base, const compare_run *nv,
                        const compare_figure *figs, uint32_t n, double tolerance, char *err,
                        size_t err_size);

#endif /* REAP_CLIENT_REPORT_COMPARE_H */
