/*
 * client_options.c - a run's settings before the command line says anything, and the names
 * of its modes.
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

bool client_source_mode_parse(const char *text, client_source_mode *out)
{
    if (strcmp(text, "auto") == 0)
        *out = CLIENT_SOURCE_AUTO;
    else if (strcmp(text, "one") == 0)
        *out = CLIENT_SOURCE_ONE;
    else
        return false;
    return true;
}

const char *client_source_mode_name(client_source_mode m)
{
    return m == CLIENT_SOURCE_ONE ? "one" : "auto";
}
