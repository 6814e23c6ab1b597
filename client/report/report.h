/*
 * report.h - the writers of the run model (model/churn_report.h), and its reader: what a run
 * or a merge leaves behind and prints. Every function here only reads the model (or, for
 * churn_report_load, fills one from a file): none knows how the figures were measured.
 *
 *   report_summary.c   the summary and the thresholds' verdict, printed
 *   report_outputs.c   every file of a run or a merge in --out DIR, in order of value
 *   report_save.c      report.json, report.dat, summary.tsv
 *   report_html.c      report.html: one self-contained page, inline SVG charts
 *   report_junit.c     the verdict as JUnit XML
 *   report_timeline.c  churn.json, churn.svg, timeline.csv; the text escapes
 *   report_load.c      report.json read back (what merge and compare read)
 *   report_stream.c    timeline.csv and report.json while the run goes (report_stream.h)
 */
#ifndef REAP_CLIENT_REPORT_H
#define REAP_CLIENT_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "churn_report.h"
#include "client_files.h"

/* Writes one summary line per figure to out (what `make loadbench` and people read). */
void churn_report_print(const churn_report *r, FILE *out);
/* Evaluates r's thresholds: prints a table to out; returns how many failed. */
uint32_t churn_report_thresholds(const churn_report *r, FILE *out);
/* The files a run or a merge leaves in its directory, in order of value: what the tools read
 * (report.json, report.dat, summary.tsv, the JUnit verdict), the timeline (timeline.csv,
 * churn.json) and then the pages and pictures (report.html, churn.svg). */
enum { CHURN_OUTPUTS_MAX = 8 };
typedef struct churn_output {
    const char *name;          /* in the directory; the path itself when path is set */
    const char *path;          /* NULL: DIR/name */
    churn_write_fn write;
    const void *data;          /* borrowed */
    bool make_room;            /* an old copy may be removed when the new one does not fit
                                * beside it (report.json over its checkpoint) */
} churn_output;
/* A run's (tl: its timeline; csv_written: timeline.csv already holds every row, streamed) or
 * a merge's (tl NULL) files into out (CHURN_OUTPUTS_MAX of room); junit_path "" or NULL:
 * none. Returns how many. */
uint32_t churn_outputs_list(const churn_report *r, const churn_timeline *tl, bool csv_written,
                            const char *junit_path, churn_output *out);
/* Makes dir and writes outs in order; each file that cannot be written is named on errors,
 * after who (one line each), and the rest are still tried. Returns how many were not written,
 * their names in failed (", " between them). */
uint32_t churn_outputs_write(const char *dir, const churn_output *outs, uint32_t n,
                             FILE *errors, const char *who, char *failed, size_t failed_size);
/* A merge's files (report.json, report.dat, summary.tsv, report.html) into dir, all tried;
 * false with err naming the first that failed. */
bool churn_report_save(const churn_report *r, const char *dir, char *err, size_t err_size);
/* The model's files for tools (report_save.c) and the JUnit verdict; false on a write
 * error. */
bool churn_report_write_json(const churn_report *r, FILE *f);
bool churn_report_write_dat(const churn_report *r, FILE *f);
bool churn_report_write_tsv(const churn_report *r, FILE *f);
bool churn_report_junit_writer(const void *report, FILE *f);
/* The self-contained page. */
bool churn_report_write_html(const churn_report *r, FILE *f);
/* Writes the thresholds' verdict (and the leak check's) as JUnit XML to path; false with a
 * message naming the file. */
bool churn_report_write_junit(const churn_report *r, const char *path, char *err,
                              size_t err_size);
/* Reads DIR/report.json into r (rows, collections and samples into tl; the run's thresholds,
 * at most max_thresholds of them, into r->thresholds); false with a message naming the file
 * and what is wrong. */
bool churn_report_load(churn_report *r, churn_timeline *tl, uint32_t max_thresholds,
                       const char *dir, char *err, size_t err_size);

/* The timeline's writers: the timeline is borrowed, f is borrowed and left open. False on a
 * write error. */
bool churn_timeline_write_json(const churn_timeline *tl, FILE *f);
bool churn_timeline_write_svg(const churn_timeline *tl, FILE *f);
/* One CSV row a second (header first; a figure not measured is an empty field; times in ms). */
bool churn_timeline_write_csv(const churn_timeline *tl, FILE *f);
/* ... its header line and one row, for a CSV written as the run goes. */
void churn_timeline_csv_header(FILE *f);
void churn_timeline_csv_row(FILE *f, const churn_row *row);
/* Creates dir (and its parents) and writes dir/timeline.csv, churn.json and churn.svg. On
 * failure err says which file and why. */
bool churn_timeline_save(const churn_timeline *tl, const char *dir, char *err, size_t err_size);

/* Writes s as a JSON string / as SVG or HTML text (escaped). */
void churn_json_string(FILE *f, const char *s);
void churn_svg_text(FILE *f, const char *s);
/* A "nice" axis step (1, 2 or 5 times a power of ten) that cuts [0, max] into about ticks. */
double churn_nice_step(double max, int ticks);

#endif /* REAP_CLIENT_REPORT_H */
