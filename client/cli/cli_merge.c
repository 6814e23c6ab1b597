/*
 * cli_merge.c - `reap-client merge DIR... --out DIR`: one report from the shards of a run
 * (report/report_merge.h), judged by the shards' thresholds and the command line's.
 */
#include "cli.h"
#include "cli_table.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "client_exit.h"
#include "report.h"
#include "report_merge.h"

static const char merge_usage[] =
    "usage: reap-client merge DIR... --out DIR [--threshold EXPR]... [--junit FILE] [--quiet]\n"
    "\n"
    "Merges the reports (DIR/report.json) that shards of one run wrote with --shard I/N into\n"
    "one report in --out: report.html, report.json, report.dat, summary.tsv. Latency\n"
    "histograms and counts merge exactly; the server's figures are counted once. The\n"
    "shards' own thresholds (their scenario's or --threshold) and any given here are\n"
    "evaluated on the merged figures; --junit FILE writes the verdict as JUnit XML.\n"
    "\n"
    "A shard's report that is a checkpoint of a run that did not finish (\"partial\": a\n"
    "killed run's report.json) is merged as far as it goes, and the merged report says so.\n"
    "\n"
    "exit status: 0 on success, 1 when a report cannot be read, 2 on a bad command line, 3\n"
    "when some of the files could not be written (each is named; the others are), 99 when a\n"
    "threshold failed.\n";

int churn_merge_run(const churn_merge_args *a, FILE *out)
{
    churn_report *merged = calloc(1, sizeof *merged), *one = calloc(1, sizeof *one);
    churn_timeline tl, one_tl;
    client_threshold thresholds[CLIENT_THRESHOLDS_MAX];
    uint32_t n_thresholds = 0;
    churn_merge m;
    churn_output outs[CHURN_OUTPUTS_MAX];
    uint32_t n_outs;
    int rc = CLIENT_EXIT_OK;
    char err[600];

    churn_timeline_init(&tl);
    if (merged == NULL || one == NULL) {
        fprintf(stderr, "reap-client merge: out of memory\n");
        rc = CLIENT_EXIT_FAILED;
        goto done;
    }
    merged->tl = &tl;
    churn_merge_begin(&m, merged);
    for (int i = 0; i < a->n_dirs; i++) {
        churn_timeline_init(&one_tl);
        if (!churn_report_load(one, &one_tl, CLIENT_THRESHOLDS_MAX, a->dirs[i], err,
                               sizeof err)) {
            fprintf(stderr, "reap-client merge: %s\n", err);
            churn_timeline_free(&one_tl);
            rc = CLIENT_EXIT_FAILED;
            goto done;
        }
        for (uint32_t k = 0; k < one->n_thresholds; k++)
            if (!churn_merge_add_threshold(thresholds, &n_thresholds, one->thresholds[k].text,
                                           err, sizeof err)) {
                fprintf(stderr, "reap-client merge: %s: %s\n", a->dirs[i], err);
                churn_timeline_free(&one_tl);
                rc = CLIENT_EXIT_USAGE;
                goto done;
            }
        churn_merge_add(&m, one);
        churn_timeline_free(&one_tl);
    }
    /* The shards' thresholds first, then the command line's: none is dropped. */
    for (uint32_t k = 0; k < a->n_thresholds; k++)
        if (!churn_merge_add_threshold(thresholds, &n_thresholds, a->thresholds[k].text, err,
                                       sizeof err)) {
            fprintf(stderr, "reap-client merge: %s\n", err);
            rc = CLIENT_EXIT_USAGE;
            goto done;
        }
    memcpy(merged->thresholds, thresholds, sizeof merged->thresholds);
    merged->n_thresholds = n_thresholds;
    merged->stages = NULL;
    merged->n_stages = 0;
    merged->admin = false;
    merged->leaks.detail = NULL;
    if (!a->quiet) {
        fprintf(out, "reap-client merge: %d reports, %u shards, %u bots, %llu joins, %llu "
                "replication checks, %llu errors (%llu mismatches), %llu refused, %llu unknown "
                "destroys (run %s)\n", a->n_dirs, merged->shards, merged->bots,
                (unsigned long long)merged->totals.joins,
                (unsigned long long)merged->totals.checks,
                (unsigned long long)churn_totals_errors(&merged->totals),
                (unsigned long long)merged->totals.errors[CHURN_ERR_MISMATCH],
                (unsigned long long)merged->totals.refused,
                (unsigned long long)merged->totals.unknown_destroys, merged->run_id);
        churn_report_print(merged, out);
    }
    if (churn_report_thresholds(merged, out) > 0)
        rc = CLIENT_EXIT_THRESHOLD;
    n_outs = churn_outputs_list(merged, NULL, false, a->junit_path, outs);
    if (churn_outputs_write(a->out_dir, outs, n_outs, stderr, "reap-client merge", err,
                            sizeof err) > 0) {
        fprintf(stderr, "reap-client merge: not written: %s\n", err);
        rc = CLIENT_EXIT_FILES;
    } else if (!a->quiet) {
        fprintf(out, "reap-client merge: report: %s/report.html, %s/report.json\n", a->out_dir,
                a->out_dir);
    }
done:
    churn_timeline_free(&tl);
    free(merged);
    free(one);
    return rc;
}

/* ---- the command line ------------------------------------------------------------------ */

typedef struct merge_ctx {
    churn_merge_args *a;
    char out_dir[512], junit[512];
    FILE *out;
} merge_ctx;

static cli_set_result merge_help(void *ctx, const char *flag, const char *value, char *err,
                                 size_t err_size)
{
    (void)flag, (void)value, (void)err, (void)err_size;
    fputs(merge_usage, ((merge_ctx *)ctx)->out);
    return CLI_SET_STOP;
}

static cli_set_result merge_quiet(void *ctx, const char *flag, const char *value, char *err,
                                  size_t err_size)
{
    (void)flag, (void)value, (void)err, (void)err_size;
    ((merge_ctx *)ctx)->a->quiet = true;
    return CLI_SET_OK;
}

static cli_set_result merge_out(void *ctx, const char *flag, const char *value, char *err,
                                size_t err_size)
{
    merge_ctx *m = ctx;

    (void)flag, (void)err, (void)err_size;
    snprintf(m->out_dir, sizeof m->out_dir, "%s", value);
    return CLI_SET_OK;
}

static cli_set_result merge_junit(void *ctx, const char *flag, const char *value, char *err,
                                  size_t err_size)
{
    merge_ctx *m = ctx;

    (void)flag, (void)err, (void)err_size;
    snprintf(m->junit, sizeof m->junit, "%s", value);
    return CLI_SET_OK;
}

static cli_set_result merge_threshold(void *ctx, const char *flag, const char *value,
                                      char *err, size_t err_size)
{
    churn_merge_args *a = ((merge_ctx *)ctx)->a;

    (void)flag;
    return churn_merge_add_threshold(a->thresholds, &a->n_thresholds, value, err, err_size) ?
           CLI_SET_OK : CLI_SET_ERROR;
}

/* A shard's report directory. */
static cli_set_result merge_dir(void *ctx, const char *flag, const char *value, char *err,
                                size_t err_size)
{
    churn_merge_args *a = ((merge_ctx *)ctx)->a;

    (void)flag;
    if (a->n_dirs >= CHURN_MERGE_DIRS_MAX) {
        snprintf(err, err_size, "too many report directories (at most %d)",
                 CHURN_MERGE_DIRS_MAX);
        return CLI_SET_ERROR;
    }
    a->dirs[a->n_dirs++] = value;
    return CLI_SET_OK;
}

static const cli_option merge_options[] = {
    { "out", required_argument, 'o', merge_out, NULL },
    { "threshold", required_argument, 't', merge_threshold, NULL },
    { "junit", required_argument, 'j', merge_junit, NULL },
    { "quiet", no_argument, 'q', merge_quiet, NULL },
    { "help", no_argument, 'h', merge_help, NULL },
    { NULL, 0, 0, NULL, NULL },
};

static const cli_command merge_command = { merge_options, merge_dir, 2 };

int churn_merge_main(int argc, char **argv, FILE *out)
{
    merge_ctx *m = calloc(1, sizeof *m);
    churn_merge_args *a = calloc(1, sizeof *a);
    char err[600];
    int rc = CLIENT_EXIT_USAGE;

    if (m == NULL || a == NULL) {
        fprintf(stderr, "reap-client merge: out of memory\n");
        free(m);
        free(a);
        return CLIENT_EXIT_FAILED;
    }
    m->a = a;
    m->out = out;
    switch (cli_parse(&merge_command, argc, argv, m, NULL, err, sizeof err)) {
    case CLIENT_GETOPT_ERROR:
        fprintf(stderr, "reap-client merge: %s\n", err);
        break;
    case CLIENT_GETOPT_OK: /* --help */
        rc = CLIENT_EXIT_OK;
        break;
    case CLIENT_GETOPT_END:
        if (a->n_dirs == 0 || m->out_dir[0] == '\0') {
            fprintf(stderr, "reap-client merge: expected DIR... --out DIR (try --help)\n");
            break;
        }
        a->out_dir = m->out_dir;
        a->junit_path = m->junit;
        rc = churn_merge_run(a, out);
        break;
    }
    free(m);
    free(a);
    return rc;
}
