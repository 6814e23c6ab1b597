/*
 * churn_run.h - reap-client's churn load generator: N bots, each visit on its own UDP port, in
 * one thread, that join, spawn props, hold and leave over and over through the stages of a
 * plan, while the server's figures are sampled. It fills in the run model
 * (model/churn_report.h); it writes nothing itself.
 */
#ifndef REAP_CLIENT_CHURN_RUN_H
#define REAP_CLIENT_CHURN_RUN_H

#include <stdio.h>

#include "client_options.h"

/* Runs the churn described by opts (opts->bots > 0); progress and the summary go to out, the
 * timeline and the report to opts->out_dir. Returns a CLIENT_EXIT_* (CLIENT_EXIT_THRESHOLD
 * when the run completed but a threshold failed). */
int churn_run(const client_options *opts, FILE *out);

#endif /* REAP_CLIENT_CHURN_RUN_H */
