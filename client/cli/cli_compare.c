/*
 * cli_compare.c - `reap-client compare BASE NEW`: reads two runs' reports and judges them
 * figure by figure (report/report_compare.h); exits 99 when a gated figure is worse.
 */
#include "cli.h"

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

int churn_compare_main(int argc, char **argv, FILE *out)
{
    static const struct option longopts[] = {
        { "tolerance", required_argument, NULL, 't' },
        { "gate", required_argument, NULL, 'g' },
        { "out", required_argument, NULL, 'o' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    compare_run *runs = calloc(2, sizeof *runs);
    compare_figure *figs = calloc(COMPARE_FIGURES_MAX, sizeof *figs);
    const char *args[2] = { NULL, NULL }, *gates[64], *value;
    char out_dir[1024] = "build/compare", err[1400];
    uint32_t n_figs = 0, n_gates = 0, gated_worse = 0;
    int n_args = 0, rc = CLIENT_EXIT_OK, val;
    double tolerance = 0.05;
    bool quiet = false, gate_all = false;
    client_getopt_result gr;

    if (runs == NULL || figs == NULL) {
        fprintf(stderr, "reap-client compare: out of memory\n");
        free(runs);
        free(figs);
        return CLIENT_EXIT_FAILED;
    }
    churn_timeline_init(&runs[0].tl);
    churn_timeline_init(&runs[1].tl);
    n_figs = churn_compare_list(figs);
    optind = 2; /* after "reap-client compare" */
    opterr = 0;
    while ((gr = client_getopt(argc, argv, longopts, &val, &value, err, sizeof err)) ==
           CLIENT_GETOPT_OK) {
        if (val == 'h') {
            fputs(compare_usage, out);
            goto done;
        } else if (val == 'q') {
            quiet = true;
        } else if (val == 'o') {
            snprintf(out_dir, sizeof out_dir, "%s", value);
        } else if (val == 't') {
            if (!churn_compare_tolerance_parse(value, &tolerance)) {
                snprintf(err, sizeof err, "--tolerance '%s': expected a share such as 5%% or "
                         "0.05 (0-10000%%)", value);
                gr = CLIENT_GETOPT_ERROR;
                break;
            }
        } else if (val == 'g') {
            if (strcmp(value, "all") == 0) {
                gate_all = true;
            } else if (!churn_compare_known(figs, n_figs, value)) {
                snprintf(err, sizeof err, "--gate '%s': no such figure (try --help)", value);
                gr = CLIENT_GETOPT_ERROR;
                break;
            } else if (n_gates >= sizeof gates / sizeof gates[0]) {
                snprintf(err, sizeof err, "too many --gate options (at most %zu)",
                         sizeof gates / sizeof gates[0]);
                gr = CLIENT_GETOPT_ERROR;
                break;
            } else {
                gates[n_gates++] = value;
            }
        } else if (val == 1 && n_args < 2) {
            args[n_args++] = value;
        } else if (val == 1) {
            snprintf(err, sizeof err, "'%s': compare takes two reports, BASE and NEW", value);
            gr = CLIENT_GETOPT_ERROR;
            break;
        } else {
            snprintf(err, sizeof err, "unknown option (try --help)");
            gr = CLIENT_GETOPT_ERROR;
            break;
        }
    }
    if (gr == CLIENT_GETOPT_ERROR || (gr == CLIENT_GETOPT_END && n_args != 2)) {
        fprintf(stderr, "reap-client compare: %s\n", gr == CLIENT_GETOPT_ERROR ? err :
                "expected BASE NEW (try --help)");
        rc = CLIENT_EXIT_USAGE;
        goto done;
    }
    for (int k = 0; k < 2; k++) {
        compare_dir_of(args[k], runs[k].dir, sizeof runs[k].dir);
        if (!churn_report_load(&runs[k].r, &runs[k].tl, 0, runs[k].dir, err, sizeof err)) {
            fprintf(stderr, "reap-client compare: %s\n", err);
            rc = CLIENT_EXIT_FAILED;
            goto done;
        }
    }
    churn_compare_figures(figs, n_figs, &runs[0].r, &runs[1].r, tolerance);
    for (uint32_t i = 0; i < n_figs; i++) {
        compare_figure *f = &figs[i];

        f->gated = gate_all && f->verdict != CHURN_VERDICT_UNMEASURED;
        for (uint32_t g = 0; g < n_gates; g++)
            f->gated |= strcmp(gates[g], f->name) == 0;
    }
    if (!quiet) {
        fprintf(out, "reap-client compare: base %s (run %s, %u bots, %.1f s) vs new %s (run %s, "
                "%u bots, %.1f s), tolerance %.3g%%\n", runs[0].dir, runs[0].r.run_id,
                runs[0].r.bots, runs[0].r.elapsed, runs[1].dir, runs[1].r.run_id,
                runs[1].r.bots, runs[1].r.elapsed, tolerance * 100);
        churn_compare_print(figs, n_figs, out);
    }
    for (uint32_t i = 0; i < n_figs; i++) {
        const compare_figure *f = &figs[i];
        char c[32];

        if (!f->gated || (f->verdict != CHURN_VERDICT_WORSE &&
                          f->verdict != CHURN_VERDICT_UNMEASURED))
            continue;
        gated_worse++;
        churn_compare_change(c, sizeof c, f->change);
        fprintf(out, "gate failed: %s is %s%s%s%s\n", f->name, churn_verdict_names[f->verdict],
                f->verdict == CHURN_VERDICT_WORSE ? " (" : "",
                f->verdict == CHURN_VERDICT_WORSE ? c : "",
                f->verdict == CHURN_VERDICT_WORSE ? ")" : "");
    }
    if (!churn_compare_save(out_dir, &runs[0], &runs[1], figs, n_figs, tolerance, err,
                            sizeof err)) {
        fprintf(stderr, "reap-client compare: %s\n", err);
        rc = CLIENT_EXIT_FAILED;
        goto done;
    }
    if (!quiet)
        fprintf(out, "reap-client compare: %s/compare.html, %s/compare.tsv\n", out_dir, out_dir);
    if (gated_worse > 0)
        rc = CLIENT_EXIT_THRESHOLD;
done:
    churn_timeline_free(&runs[0].tl);
    churn_timeline_free(&runs[1].tl);
    free(runs);
    free(figs);
    return rc;
}
