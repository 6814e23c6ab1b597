/*
 * cli_run.c - `reap-client --bots N ...` or `--scenario FILE`: runs the churn (load/) and
 * publishes what it measured (report/): while it goes, the timeline a row a second and the
 * report checkpointed (report_stream.h, fed by the run's hooks); at the end the summary's
 * figures, the thresholds' verdict and every file in --out DIR, in order of value. The exit
 * status says how it went: the worst of what applies, in the order 1 (the server was not
 * there, stopped answering, or refused every visit), 3 (files not written), 105
 * (interrupted), 99 (a threshold failed), 0.
 */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "churn_run.h"
#include "client_console.h"
#include "client_exit.h"
#include "report.h"
#include "report_stream.h"

static void cli_run_row_cb(void *ctx, const churn_row *row)
{
    churn_stream_row(ctx, row);
}

static void cli_run_checkpoint_cb(void *ctx, const churn_report *report)
{
    churn_stream_checkpoint(ctx, report);
}

/* Every file in order of value; each failure is named. Returns a CLIENT_EXIT_*. */
static int cli_run_save(const churn_result *res, bool csv_complete, const client_console *con)
{
    const char *dir = res->opts.out_dir;
    churn_output outs[CHURN_OUTPUTS_MAX];
    uint32_t n = churn_outputs_list(&res->report, &res->tl, csv_complete, res->opts.junit_path,
                                    outs);
    char names[400];
    uint32_t not_written = churn_outputs_write(dir, outs, n, stderr, "reap-client", names,
                                               sizeof names);

    if (not_written > 0) {
        fprintf(stderr, "reap-client: %u of %u files not written (%s): exit %d\n", not_written,
                n + csv_complete, names, CLIENT_EXIT_FILES);
        return CLIENT_EXIT_FILES;
    }
    client_say(con, "report: %s/report.html, %s/report.json; timeline: %s/churn.json (%u rows), "
               "%s/churn.svg", dir, dir, dir, res->tl.n_rows, dir);
    return CLIENT_EXIT_OK;
}

int churn_run_command(const client_options *opts, FILE *out)
{
    client_console con = { out, !opts->session.quiet && (opts->progress > 0 ||
                                                 (opts->progress < 0 && isatty(fileno(out)))) };
    churn_stream stream;
    churn_run_hooks hooks = { &stream, cli_run_row_cb, cli_run_checkpoint_cb,
                              opts->checkpoint_period };
    churn_result *res;
    const churn_report *report;
    uint32_t failed;
    bool csv_complete;
    int rc;

    churn_stream_open(&stream, opts->out_dir, stderr);
    res = churn_run(opts, &con, &hooks, &rc);
    csv_complete = churn_stream_close(&stream, res != NULL ? res->tl.n_rows : 0);
    if (res == NULL)
        return rc;
    report = &res->report;
    churn_report_print(report, out);
    failed = churn_report_thresholds(report, out);
    rc = client_exit_worse(rc, cli_run_save(res, csv_complete, &con));
    if (failed > 0) {
        client_say(&con, "%u threshold%s failed", failed, failed == 1 ? "" : "s");
        rc = client_exit_worse(rc, CLIENT_EXIT_THRESHOLD);
    }
    if (report->leaks.checked && (!report->leaks.supported || report->leaks.leaked < 0)) {
        fprintf(stderr, "reap-client: the leak check could not run: %s\n",
                report->leaks.detail != NULL ? report->leaks.detail : "no verdict");
        rc = CLIENT_EXIT_FAILED;
    }
    if (report->outages.n > 0)
        fprintf(stderr, "reap-client: the server stopped answering during the run\n");
    if (report->interrupted) {
        client_say(&con, "interrupted");
        rc = client_exit_worse(rc, CLIENT_EXIT_INTERRUPTED);
    }
    if (rc != CLIENT_EXIT_OK)
        client_say(&con, "exit %d", rc);
    churn_result_free(res);
    return rc;
}
