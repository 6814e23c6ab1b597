/*
 * churn_merge.c - `reap-client merge DIR... --out DIR`: one report from the shards of a run.
 *
 * Counts and latency histograms add up exactly (the buckets are the same in every process).
 * The server's figures were sampled by every shard that had --admin: they are taken once,
 * from the first shard that has them, with its collections and object samples; timeline rows
 * add the bots' counts second by second.
 */
#include "churn_internal.h"

#include <stdlib.h>
#include <string.h>

static const char merge_usage[] =
    "usage: reap-client merge DIR... --out DIR [--threshold EXPR]... [--quiet]\n"
    "\n"
    "Merges the reports (DIR/report.dat) that shards of one run wrote with --shard I/N into\n"
    "one report in --out: report.html, report.json, report.dat, summary.tsv. Latency\n"
    "histograms and counts merge exactly; the server's figures are counted once. Thresholds\n"
    "are evaluated on the merged figures.\n"
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

int churn_merge_main(int argc, char **argv, FILE *out)
{
    client_options opts;
    churn_report *merged = calloc(1, sizeof *merged), *one = calloc(1, sizeof *one);
    churn_timeline tl, one_tl;
    const char *dirs[256];
    int n_dirs = 0, rc = CLIENT_EXIT_OK;
    bool have_server = false;
    char err[600];

    client_options_default(&opts);
    churn_timeline_init(&tl);
    if (merged == NULL || one == NULL) {
        fprintf(stderr, "reap-client merge: out of memory\n");
        rc = CLIENT_EXIT_FAILED;
        goto done;
    }
    opts.out_dir[0] = '\0';
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            fputs(merge_usage, out);
            goto done;
        } else if (strcmp(argv[i], "--quiet") == 0) {
            opts.quiet = true;
        } else if ((strcmp(argv[i], "--out") == 0 || strcmp(argv[i], "--threshold") == 0) &&
                   i + 1 < argc) {
            if (argv[i][2] == 'o') {
                snprintf(opts.out_dir, sizeof opts.out_dir, "%s", argv[++i]);
            } else if (opts.n_thresholds >= CLIENT_THRESHOLDS_MAX ||
                       !client_threshold_parse(argv[++i], &opts.thresholds[opts.n_thresholds],
                                               err, sizeof err)) {
                fprintf(stderr, "reap-client merge: %s\n", opts.n_thresholds >=
                        CLIENT_THRESHOLDS_MAX ? "too many --threshold options" : err);
                rc = CLIENT_EXIT_USAGE;
                goto done;
            } else {
                opts.n_thresholds++;
            }
        } else if (strncmp(argv[i], "--", 2) == 0) {
            fprintf(stderr, "reap-client merge: unknown option or missing value '%s' (try "
                    "--help)\n", argv[i]);
            rc = CLIENT_EXIT_USAGE;
            goto done;
        } else if (n_dirs < 256) {
            dirs[n_dirs++] = argv[i];
        }
    }
    if (n_dirs == 0 || opts.out_dir[0] == '\0') {
        fprintf(stderr, "reap-client merge: expected DIR... --out DIR (try --help)\n");
        rc = CLIENT_EXIT_USAGE;
        goto done;
    }
    for (int i = 0; i < n_dirs; i++) {
        bool take;

        churn_timeline_init(&one_tl);
        if (!churn_report_load(one, &one_tl, dirs[i], err, sizeof err)) {
            fprintf(stderr, "reap-client merge: %s\n", err);
            churn_timeline_free(&one_tl);
            rc = CLIENT_EXIT_FAILED;
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
        merge_rows(&tl, &one_tl, take);
        churn_timeline_free(&one_tl);
    }
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
    if (!churn_report_save(merged, opts.out_dir, err, sizeof err)) {
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
