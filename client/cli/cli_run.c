/*
 * cli_run.c - `reap-client --bots N ...` or `--scenario FILE`: runs the churn (load/) and
 * publishes what it measured (report/): the summary's figures, the thresholds' verdict, the
 * files in --out DIR, the JUnit verdict; the exit status says how it went.
 */
#include "cli.h"

#include <string.h>
#include <unistd.h>

#include "churn_run.h"
#include "client_console.h"
#include "client_exit.h"
#include "report.h"

int churn_run_command(const client_options *opts, FILE *out)
{
    client_console con = { out, !opts->session.quiet && (opts->progress > 0 ||
                                                 (opts->progress < 0 && isatty(fileno(out)))) };
    churn_result *res;
    const churn_report *report;
    const char *dir;
    uint32_t failed;
    char err[600];
    int rc;

    res = churn_run(opts, &con, &rc);
    if (res == NULL)
        return rc;
    report = &res->report;
    dir = res->opts.out_dir;
    churn_report_print(report, out);
    failed = churn_report_thresholds(report, out);
    if (!churn_timeline_save(&res->tl, dir, err, sizeof err) ||
        !churn_report_save(report, dir, err, sizeof err)) {
        fprintf(stderr, "reap-client: %s\n", err);
        rc = CLIENT_EXIT_FAILED;
    } else {
        client_say(&con, "report: %s/report.html, %s/report.json; timeline: %s/churn.json "
                   "(%u rows), %s/churn.svg", dir, dir, dir, res->tl.n_rows, dir);
        if (failed > 0) {
            client_say(&con, "%u threshold%s failed: exit %d", failed, failed == 1 ? "" : "s",
                       CLIENT_EXIT_THRESHOLD);
            rc = CLIENT_EXIT_THRESHOLD;
        }
    }
    if (res->opts.junit_path[0] != '\0' &&
        !churn_report_write_junit(report, res->opts.junit_path, err, sizeof err)) {
        fprintf(stderr, "reap-client: %s\n", err);
        rc = CLIENT_EXIT_FAILED;
    }
    if (report->leaks.checked && (!report->leaks.supported || report->leaks.leaked < 0) &&
        rc != CLIENT_EXIT_FAILED) {
        fprintf(stderr, "reap-client: the leak check could not run: %s\n",
                report->leaks.detail != NULL ? report->leaks.detail : "no verdict");
        rc = CLIENT_EXIT_FAILED;
    }
    if (report->interrupted && rc != CLIENT_EXIT_FAILED) {
        client_say(&con, "interrupted: exit %d", CLIENT_EXIT_INTERRUPTED);
        rc = CLIENT_EXIT_INTERRUPTED;
    }
    churn_result_free(res);
    return rc;
}
