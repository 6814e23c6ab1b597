/*
 * cli_compare.c - `reap-client compare BASE NEW`: reads two runs' reports and judges them
 * figure by figure (report/report_compare.h); exits 99 when a gated figure is worse.
 */
#include "cli.h"
#include "cli_table.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "client_exit.h"
#include "report.h"
#include "report_compare.h"

static const char compare_usage[] =
    "usage: reap-client compare BASE NEW [--tolerance 5%] [--gate FIGURE]... [--out DIR]\n"
    "\n"
    "Compares two runs' reports (BASE and NEW are report directories, or their report.json):\n"
    "every latency percentile, mean and max, the server's frame time p50/p99/max and phase\n"
    "p99s, collector work max, collections, RSS peak, bytes per connection, frames/s, errors.\n"
    "Each figure gets a verdict: better, same or worse. A figure is better or worse only when\n"
    "it changed by more than the tolerance and beyond what its measurement can tell apart\n"
    "(histogram buckets, the samples' confidence interval, Poisson noise for counts).\n"
    "\n"
    "options:\n"
    "  --tolerance SHARE   a change within it is 'same' (default 5%; also 0.05)\n"
    "  --gate FIGURE       exit 99 when FIGURE is worse, or not measured in both runs; a\n"
    "                      --threshold figure name (join_p99, server_tick_p99,\n"
    "                      server_gc_work_max, ...) or 'all' (every figure both runs measured)\n"
    "  --out DIR           where compare.html (both runs' distributions and timelines\n"
    "                      overlaid) and compare.tsv go (default build/compare)\n"
    "  --quiet             print only failed gates\n"
    "\n"
    "exit status: 0 when no gated figure is worse, 1 when a report cannot be read or written,\n"
    "2 on a bad command line, 99 when a gated figure is worse.\n";

/* DIR or DIR/report.json: the directory. */
static void compare_dir_of(const char *arg, char *dir, size_t size)
{
    size_t len = strlen(arg);
    const char *slash = strrchr(arg, '/');

    if (len > 5 && strcmp(arg + len - 5, ".json") == 0) {
        if (slash == NULL)
            snprintf(dir, size, ".");
        else
            snprintf(dir, size, "%.*s", (int)(slash - arg), arg);
    } else {
        snprintf(dir, size, "%s", arg);
    }
}

/* ---- the command line ------------------------------------------------------------------ */

typedef struct compare_ctx {
    const compare_figure *figs;   /* the figures a gate may name */
    uint32_t n_figs;
    const char *args[2];          /* BASE and NEW */
    int n_args;
    const char *gates[64];
    uint32_t n_gates;
    bool gate_all, quiet;
    double tolerance;
    char out_dir[1024];
    FILE *out;
} compare_ctx;

static cli_set_result compare_help(void *ctx, const char *flag, const char *value, char *err,
                                   size_t err_size)
{
    (void)flag, (void)value, (void)err, (void)err_size;
    fputs(compare_usage, ((compare_ctx *)ctx)->out);
    return CLI_SET_STOP;
}

static cli_set_result compare_quiet(void *ctx, const char *flag, const char *value, char *err,
                                    size_t err_size)
{
    (void)flag, (void)value, (void)err, (void)err_size;
    ((compare_ctx *)ctx)->quiet = true;
    return CLI_SET_OK;
}

static cli_set_result compare_out(void *ctx, const char *flag, const char *value, char *err,
                                  size_t err_size)
{
    compare_ctx *c = ctx;

    (void)flag, (void)err, (void)err_size;
    snprintf(c->out_dir, sizeof c->out_dir, "%s", value);
    return CLI_SET_OK;
}

static cli_set_result compare_tolerance(void *ctx, const char *flag, const char *value,
                                        char *err, size_t err_size)
{
    (void)flag;
    if (!churn_compare_tolerance_parse(value, &((compare_ctx *)ctx)->tolerance)) {
        snprintf(err, err_size, "--tolerance '%s': expected a share such as 5%% or 0.05 "
                 "(0-10000%%)", value);
        return CLI_SET_ERROR;
    }
    return CLI_SET_OK;
}

static cli_set_result compare_gate(void *ctx, const char *flag, const char *value, char *err,
                                   size_t err_size)
{
    compare_ctx *c = ctx;

    (void)flag;
    if (strcmp(value, "all") == 0) {
        c->gate_all = true;
    } else if (!churn_compare_known(c->figs, c->n_figs, value)) {
        snprintf(err, err_size, "--gate '%s': no such figure (try --help)", value);
        return CLI_SET_ERROR;
    } else if (c->n_gates >= sizeof c->gates / sizeof c->gates[0]) {
        snprintf(err, err_size, "too many --gate options (at most %zu)",
                 sizeof c->gates / sizeof c->gates[0]);
        return CLI_SET_ERROR;
    } else {
        c->gates[c->n_gates++] = value;
    }
    return CLI_SET_OK;
}

/* BASE, then NEW. */
static cli_set_result compare_arg(void *ctx, const char *flag, const char *value, char *err,
                                  size_t err_size)
{
    compare_ctx *c = ctx;

    (void)flag;
    if (c->n_args >= 2) {
        snprintf(err, err_size, "'%s': compare takes two reports, BASE and NEW", value);
        return CLI_SET_ERROR;
    }
    c->args[c->n_args++] = value;
    return CLI_SET_OK;
}

static const cli_option compare_options[] = {
    { "tolerance", required_argument, 't', compare_tolerance, NULL },
    { "gate", required_argument, 'g', compare_gate, NULL },
    { "out", required_argument, 'o', compare_out, NULL },
    { "quiet", no_argument, 'q', compare_quiet, NULL },
    { "help", no_argument, 'h', compare_help, NULL },
    { NULL, 0, 0, NULL, NULL },
};

static const cli_command compare_command = { compare_options, compare_arg, 2 };

int churn_compare_main(int argc, char **argv, FILE *out)
{
    compare_run *runs = calloc(2, sizeof *runs);
    compare_figure *figs = calloc(COMPARE_FIGURES_MAX, sizeof *figs);
    compare_ctx *c = calloc(1, sizeof *c);
    uint32_t n_figs = 0, gated_worse = 0;
    int rc = CLIENT_EXIT_OK;
    client_getopt_result gr;
    const char *out_dir;
    double tolerance;
    char err[1400];

    if (runs == NULL || figs == NULL || c == NULL) {
        fprintf(stderr, "reap-client compare: out of memory\n");
        free(runs);
        free(figs);
        free(c);
        return CLIENT_EXIT_FAILED;
    }
    churn_timeline_init(&runs[0].tl);
    churn_timeline_init(&runs[1].tl);
    n_figs = churn_compare_list(figs);
    c->figs = figs;
    c->n_figs = n_figs;
    c->tolerance = 0.05;
    c->out = out;
    snprintf(c->out_dir, sizeof c->out_dir, "build/compare");
    gr = cli_parse(&compare_command, argc, argv, c, NULL, err, sizeof err);
    if (gr == CLIENT_GETOPT_OK) /* --help */
        goto done;
    if (gr == CLIENT_GETOPT_ERROR || c->n_args != 2) {
        fprintf(stderr, "reap-client compare: %s\n", gr == CLIENT_GETOPT_ERROR ? err :
                "expected BASE NEW (try --help)");
        rc = CLIENT_EXIT_USAGE;
        goto done;
    }
    tolerance = c->tolerance;
    out_dir = c->out_dir;
    for (int k = 0; k < 2; k++) {
        compare_dir_of(c->args[k], runs[k].dir, sizeof runs[k].dir);
        if (!churn_report_load(&runs[k].r, &runs[k].tl, 0, runs[k].dir, err, sizeof err)) {
            fprintf(stderr, "reap-client compare: %s\n", err);
            rc = CLIENT_EXIT_FAILED;
            goto done;
        }
    }
    churn_compare_figures(figs, n_figs, &runs[0].r, &runs[1].r, tolerance);
    for (uint32_t i = 0; i < n_figs; i++) {
        compare_figure *f = &figs[i];

        f->gated = c->gate_all && f->verdict != CHURN_VERDICT_UNMEASURED;
        for (uint32_t g = 0; g < c->n_gates; g++)
            f->gated |= strcmp(c->gates[g], f->name) == 0;
    }
    if (!c->quiet) {
        fprintf(out, "reap-client compare: base %s (run %s, %u bots, %.1f s%s) vs new %s (run "
                "%s, %u bots, %.1f s%s), tolerance %.3g%%\n", runs[0].dir, runs[0].r.run_id,
                runs[0].r.bots, runs[0].r.elapsed, runs[0].r.partial ? ", partial" : "",
                runs[1].dir, runs[1].r.run_id, runs[1].r.bots, runs[1].r.elapsed,
                runs[1].r.partial ? ", partial" : "", tolerance * 100);
        for (int k = 0; k < 2; k++)
            if (runs[k].r.partial)
                fprintf(out, "reap-client compare: the %s run's report is a checkpoint of a run "
                        "that did not finish: its figures stop at %.1f s of %.1f s\n",
                        k == 0 ? "base" : "new", runs[k].r.elapsed, runs[k].r.duration);
        churn_compare_print(figs, n_figs, out);
    }
    for (uint32_t i = 0; i < n_figs; i++) {
        const compare_figure *f = &figs[i];
        char change[32];

        if (!f->gated || (f->verdict != CHURN_VERDICT_WORSE &&
                          f->verdict != CHURN_VERDICT_UNMEASURED))
            continue;
        gated_worse++;
        churn_compare_change(change, sizeof change, f->change);
        fprintf(out, "gate failed: %s is %s%s%s%s\n", f->name, churn_verdict_names[f->verdict],
                f->verdict == CHURN_VERDICT_WORSE ? " (" : "",
                f->verdict == CHURN_VERDICT_WORSE ? change : "",
                f->verdict == CHURN_VERDICT_WORSE ? ")" : "");
    }
    if (!churn_compare_save(out_dir, &runs[0], &runs[1], figs, n_figs, tolerance, err,
                            sizeof err)) {
        fprintf(stderr, "reap-client compare: %s\n", err);
        rc = CLIENT_EXIT_FAILED;
        goto done;
    }
    if (!c->quiet)
        fprintf(out, "reap-client compare: %s/compare.html, %s/compare.tsv\n", out_dir, out_dir);
    if (gated_worse > 0)
        rc = CLIENT_EXIT_THRESHOLD;
done:
    churn_timeline_free(&runs[0].tl);
    churn_timeline_free(&runs[1].tl);
    free(runs);
    free(figs);
    free(c);
    return rc;
}
