/*
 * main.c - reap-client: one client session, the churn load generator (--bots, --scenario), or
 * `merge` of the reports of several shards, or `compare` of two runs' reports.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "client_exit.h"
#include "client_session.h"

/* The one-client mode's part of the command line. */
static void session_options_of(const client_options *o, client_session_options *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->host, sizeof out->host, "%s", o->host);
    out->port = o->port;
    snprintf(out->world, sizeof out->world, "%s", o->world);
    snprintf(out->name, sizeof out->name, "%s", o->name);
    out->spawn = o->spawn;
    out->hold = o->hold;
    out->disconnect = o->disconnect;
    out->timeout = o->timeout;
    out->quiet = o->quiet;
}

int main(int argc, char **argv)
{
    client_options opts;
    client_session_options session;
    char err[512];

    if (argc > 1 && strcmp(argv[1], "merge") == 0)
        return churn_merge_main(argc, argv, stdout);
    if (argc > 1 && strcmp(argv[1], "compare") == 0)
        return churn_compare_main(argc, argv, stdout);
    client_options_default(&opts);
    switch (client_options_parse(&opts, argc, argv, err, sizeof err)) {
    case CLIENT_OPTIONS_ERROR:
        fprintf(stderr, "reap-client: %s\n", err);
        return CLIENT_EXIT_USAGE;
    case CLIENT_OPTIONS_EXIT:
        if (opts.help)
            fputs(client_options_usage(), stdout);
        else
            printf("reap-client %s\n", REAP_VERSION);
        return CLIENT_EXIT_OK;
    case CLIENT_OPTIONS_OK:
        break;
    }
    if (opts.bots > 0 && opts.procs > 1 && opts.shards == 1)
        return churn_run_procs(&opts, stdout);
    if (opts.bots > 0)
        return churn_run_command(&opts, stdout);
    session_options_of(&opts, &session);
    return client_run(&session, stdout);
}
