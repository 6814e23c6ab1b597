/*
 * client_options.c - a run's settings before the command line says anything.
 */
#include "client_options.h"

#include <stdio.h>
#include <string.h>

void client_options_default(client_options *opts)
{
    memset(opts, 0, sizeof *opts);
    snprintf(opts->session.name, sizeof opts->session.name, "reap-client");
    opts->session.disconnect = CLIENT_DISCONNECT_GRACEFUL;
    opts->session.timeout = 5.0;
    opts->move_hz = CLIENT_CHURN_MOVE_HZ_DEFAULT;
    opts->shards = 1;
    opts->procs = 1;
    opts->progress = -1;
    snprintf(opts->out_dir, sizeof opts->out_dir, "build/churn");
    opts->checkpoint_period = CLIENT_CHECKPOINT_DEFAULT;
}
