/*
 * churn_merge.c - `reap-client merge DIR... --out DIR`: one report from the shards of a run.
 *
 * Counts and latency histograms add up exactly (the buckets are the same in every process).
 * The server's figures were sampled by every shard that had --admin: they are taken once,
 * from the first shard that has them, with its collections and object samples; timeline rows
 * add the bots' counts second by second.
 */
#include "churn_internal.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char merge_usage[] =
    "usage: reap-client merge DIR... --out DIR [--threshold EXPR]... [--junit FILE] [--quiet]\n"
    "\n"
    "Merges the reports (DIR/report.json) that shards of one run wrote with --shard I/N into\n"
    "one report in --out: report.html, report.json, report.dat, summary.tsv. Latency\n"
    "histograms and counts merge exactly; the server's figures are counted once. The\n"
    "shards' own thresholds (their scenario's or --threshold) and any given here are\n"
    "evaluated on the merged figures; --junit FILE writes the verdict as JUnit XML.\n"
    "\n"
    "exit status: 0 on success, 1 when a report cannot be read or written, 2 on a bad command\n"
    "line, 99 when a threshold failed.\n";

static void merge_rows(churn_timeline *dst, const churn_timeline *src, bool take_server)
{
    for (uint32_t i = 0; i < src->n_rows; i++) {
        const churn_row *s = &src->rows[i];
        churn_row *d;

        if (i >= dst->n_rows) {
            churn_row fresh = *s;
            if (!take_server) {
                fresh.have_server = fresh.have_admin = false;
            }
            churn_timeline_add_row(dst, &fresh);
            continue;
        }
        d = &dst->rows[i];
        d->connected += s->connected;
        d->target += s->target;
        d->joins += s->joins;
        d->leaves += s->leaves;
        d->leaves_abrupt += s->leaves_abrupt;
        d->spawned += s->spawned;
        d->errors += s->errors;
        d->refused += s->refused;
        /* Each process is its own loop: the busiest one says whether the run was saturated. */
        if (s->gen_cpu > d->gen_cpu)
            d->gen_cpu = s->gen_cpu;
        if (s->loop_lag > d->loop_lag)
            d->loop_lag = s->loop_lag;
        if (take_server) {
            churn_row keep = *d;
            *d = *s;
            d->connected = keep.connected, d->target = keep.target, d->joins = keep.joins;
            d->leaves = keep.leaves, d->leaves_abrupt = keep.leaves_abrupt;
            d->spawned = keep.spawned, d->errors = keep.errors, d->refused = keep.refused;
            d->gen_cpu = keep.gen_cpu, d->loop_lag = keep.loop_lag;
        }
    }
}

static void merge_host(char *hosts, size_t size, const char *host)
{
    const char *p = strstr(hosts, host);
    size_t len = strlen(host), used = strlen(hosts);

    if (p != NULL && (p == hosts || p[-1] == ',') && (p[len] == '\0' || p[len] == ','))
        return;
    if (used > 0 && used + 1 < size) {
        hosts[used++] = ',';
        hosts[used] = '\0';
    }
    snprintf(hosts + used, size - used, "%s", host); /* a list too long is cut short */
}

/* Adds a threshold unless the same text is there already (the shards' own come first). */
static bool merge_add_threshold(client_options *opts, const char *text, char *err,
                                size_t err_size)
{
    for (uint32_t i = 0; i < opts->n_thresholds; i++)
        if (strcmp(opts->thresholds[i].text, text) == 0)
            return true;
    if (opts->n_thresholds >= CLIENT_THRESHOLDS_MAX) {
        snprintf(err, err_size, "too many --threshold options (at most %d)",
                 CLIENT_THRESHOLDS_MAX);
        return false;
    }
    if (!client_threshold_parse(text, &opts->thresholds[opts->n_thresholds], err, err_size))
        return false;
    opts->n_thresholds++;
    return true;
}

int churn_merge_main(int argc, char **argv, FILE *out)
{
    client_options opts, shard_th;
    churn_report *merged = calloc(1, sizeof *merged), *one = calloc(1, sizeof *one);
    churn_timeline tl, one_tl;
    const char *dirs[256];
    int n_dirs = 0, rc = CLIENT_EXIT_OK;
    bool have_server = false;
    char err[600];

    client_options_default(&opts);
    client_options_default(&shard_th);
    churn_timeline_init(&tl);
    if (merged == NULL || one == NULL) {
        fprintf(stderr, "reap-client merge: out of memory\n");
        rc = CLIENT_EXIT_FAILED;
        goto done;
    }
    opts.out_dir[0] = '\0';
    {
        static const struct option longopts[] = {
            { "out", required_argument, NULL, 'o' },
            { "threshold", required_argument, NULL, 't' },
            { "junit", required_argument, NULL, 'j' },
            { "quiet", no_argument, NULL, 'q' },
            { "help", no_argument, NULL, 'h' },
            { NULL, 0, NULL, 0 },
        };
        client_getopt_result gr;
        const char *value;
        int val;

        optind = 2; /* after "reap-client merge" */
        opterr = 0;
        while ((gr = client_getopt(argc, argv, longopts, &val, &value, err, sizeof err)) ==
               CLIENT_GETOPT_OK) {
            if (val == 'h') {
                fputs(merge_usage, out);
                goto done;
            } else if (val == 'q') {
                opts.quiet = true;
            } else if (val == 'o') {
                snprintf(opts.out_dir, sizeof opts.out_dir, "%s", value);
            } else if (val == 'j') {
                snprintf(opts.junit_path, sizeof opts.junit_path, "%s", value);
            } else if (val == 't') {
                if (!merge_add_threshold(&opts, value, err, sizeof err)) {
                    gr = CLIENT_GETOPT_ERROR;
                    break;
                }
            } else if (val == 1 && n_dirs < 256) {
                dirs[n_dirs++] = value;
            } else if (val == 1) {
                snprintf(err, sizeof err, "too many report directories (at most 256)");
                gr = CLIENT_GETOPT_ERROR;
                break;
            } else {
                snprintf(err, sizeof err, "unknown option (try --help)");
                gr = CLIENT_GETOPT_ERROR;
                break;
            }
        }
        if (gr == CLIENT_GETOPT_ERROR) {
            fprintf(stderr, "reap-client merge: %s\n", err);
            rc = CLIENT_EXIT_USAGE;
            goto done;
        }
    }
    if (n_dirs == 0 || opts.out_dir[0] == '\0') {
        fprintf(stderr, "reap-client merge: expected DIR... --out DIR (try --help)\n");
        rc = CLIENT_EXIT_USAGE;
        goto done;
    }
    for (int i = 0; i < n_dirs; i++) {
        bool take;

        client_threshold th[CLIENT_THRESHOLDS_MAX];
        uint32_t n_th = 0;

        churn_timeline_init(&one_tl);
        if (!churn_report_load(one, &one_tl, th, CLIENT_THRESHOLDS_MAX, &n_th, dirs[i], err,
                               sizeof err)) {
            fprintf(stderr, "reap-client merge: %s\n", err);
            churn_timeline_free(&one_tl);
            rc = CLIENT_EXIT_FAILED;
            goto done;
        }
        for (uint32_t k = 0; k < n_th; k++)
            if (!merge_add_threshold(&shard_th, th[k].text, err, sizeof err)) {
                fprintf(stderr, "reap-client merge: %s: %s\n", dirs[i], err);
                churn_timeline_free(&one_tl);
                rc = CLIENT_EXIT_USAGE;
                goto done;
            }
        take = !have_server && one->server_figs.have;
        if (i == 0) {
            /* The run's identity (id, scenario, seed, server) comes from the first report. */
            *merged = *one;
            merged->shards = 0;
            merged->bots = 0;
            merged->host[0] = '\0';
            churn_totals_init(&merged->totals);
            take = true;
        }
        churn_totals_merge(&merged->totals, &one->totals);
        merged->shards += one->shards;
        merged->bots += one->bots;
        merge_host(merged->host, sizeof merged->host, one->host);
        if (strcmp(one->start_time, merged->start_time) < 0)
            memcpy(merged->start_time, one->start_time, sizeof merged->start_time);
        if (one->duration > merged->duration)
            merged->duration = one->duration;
        if (one->elapsed > merged->elapsed)
            merged->elapsed = one->elapsed;
        if (take) {
            merged->server_figs = one->server_figs;
            have_server = one->server_figs.have;
            tl.n_gc = tl.n_samples = 0;
            for (uint32_t k = 0; k < one_tl.n_gc; k++)
                churn_timeline_add_gc(&tl, one_tl.gc_times[k]);
            for (uint32_t k = 0; k < one_tl.n_samples; k++)
                churn_timeline_add_sample(&tl, one_tl.samples[k].t, one_tl.samples[k].objects);
        }
        if (!merged->leaks.checked && one->leaks.checked)
            merged->leaks = one->leaks;
        merged->interrupted |= one->interrupted;
        merge_rows(&tl, &one_tl, take);
        churn_timeline_free(&one_tl);
    }
    /* The shards' thresholds first, then the command line's: none is dropped. */
    for (uint32_t k = 0; k < opts.n_thresholds; k++)
        if (!merge_add_threshold(&shard_th, opts.thresholds[k].text, err, sizeof err)) {
            fprintf(stderr, "reap-client merge: %s\n", err);
            rc = CLIENT_EXIT_USAGE;
            goto done;
        }
    memcpy(opts.thresholds, shard_th.thresholds, sizeof opts.thresholds);
    opts.n_thresholds = shard_th.n_thresholds;
    merged->tl = &tl;
    merged->opts = &opts;
    merged->leaks.detail = NULL;
    if (!opts.quiet) {
        fprintf(out, "reap-client merge: %d reports, %u shards, %u bots, %llu joins, %llu "
                "replication checks, %llu errors (%llu mismatches), %llu refused, %llu unknown "
                "destroys (run %s)\n", n_dirs, merged->shards, merged->bots,
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
    if (!churn_report_save(merged, opts.out_dir, err, sizeof err) ||
        (opts.junit_path[0] != '\0' &&
         !churn_report_write_junit(merged, opts.junit_path, err, sizeof err))) {
        fprintf(stderr, "reap-client merge: %s\n", err);
        rc = CLIENT_EXIT_FAILED;
    } else if (!opts.quiet) {
        fprintf(out, "reap-client merge: report: %s/report.html, %s/report.json\n", opts.out_dir,
                opts.out_dir);
    }
done:
    churn_timeline_free(&tl);
    free(merged);
    free(one);
    return rc;
}
