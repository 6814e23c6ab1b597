/*
 * main.c - reap-client: one client session, the churn load generator (--bots, --scenario), or
 * `merge` of the reports of several shards, or `compare` of two runs' reports.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "client_exit.h"
#include "client_session.h"

int main(int argc, char **argv)
{
    client_options opts;
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
    return client_run(&opts.session, stdout);
}
