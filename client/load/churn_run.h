/*
 * churn_run.h - reap-client's churn load generator: N bots, each visit on its own UDP port, in
 * one thread, that join, spawn props, hold and leave over and over through the stages of a
 * plan, while the server's figures are sampled. The run fills in the run model
 * (model/churn_report.h) and prints its progress and summary; writing the report is its
 * caller's (cli/cli_run.c), as k6's outputs are fed from its engine.
 */
#ifndef REAP_CLIENT_CHURN_RUN_H
#define REAP_CLIENT_CHURN_RUN_H

#include <stdbool.h>

#include "churn_report.h"
#include "client_console.h"
#include "client_options.h"

/* What a completed run leaves behind. */
typedef struct churn_result {
    client_options opts;      /* the run's settings, its seed chosen (report.stages is here) */
    churn_report report;      /* report.tl is tl; report.leaks.detail is owned */
    churn_timeline tl;
} churn_result;

/* What the caller sees of a run while it goes (cli/cli_run.c streams the timeline and
 * checkpoints the report with them). Called on the run's loop between turns, so what they
 * cost the bots wait for: they should hand slow work elsewhere. Either may be NULL; what
 * they are passed is borrowed for the call. */
typedef struct churn_run_hooks {
    void *ctx;
    /* A timeline row closed (once a second, and the last one at the end). */
    void (*row_cb)(void *ctx, const churn_row *row);
    /* The run so far as a partial report (report->partial, elapsed: where it stops): at the
     * start, then every checkpoint_period seconds of the run (0: never). */
    void (*checkpoint_cb)(void *ctx, const churn_report *report);
    double checkpoint_period;
} churn_run_hooks;

/* Runs the churn described by opts (opts->bots > 0); progress lines and the summary go to
 * con, errors to stderr; hooks (may be NULL) see it go. Returns the result (the caller frees
 * it with churn_result_free) with *out_rc CLIENT_EXIT_OK, or CLIENT_EXIT_FAILED when no bot
 * ever joined or the server stopped answering during the run (the summary says when); or
 * NULL with *out_rc a CLIENT_EXIT_* when the run could not go on (nobody answered at all,
 * the server refused the protocol or the world, out of memory; the reason is printed). */
churn_result *churn_run(const client_options *opts, const client_console *con,
                        const churn_run_hooks *hooks, int *out_rc);
void churn_result_free(churn_result *r);

#endif /* REAP_CLIENT_CHURN_RUN_H */
