/*
 * cli.h - reap-client's command line: the run's flags (cli_options.c) and scenario files
 * (cli_scenario.c) read into client_options; the commands `merge` (cli_merge.c) and `compare`
 * (cli_compare.c); the run and its report (cli_run.c); --procs (cli_procs.c); main.c picks one.
 */
#ifndef REAP_CLIENT_CLI_H
#define REAP_CLIENT_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "client_options.h"

typedef enum client_options_result {
    CLIENT_OPTIONS_OK = 0,
    CLIENT_OPTIONS_EXIT = 1,   /* --help or --version */
    CLIENT_OPTIONS_ERROR = -1, /* err names the bad flag or value */
} client_options_result;

client_options_result client_options_parse(client_options *opts, int argc, char **argv,
                                           char *err, size_t err_size);
/* Splits "HOST:PORT"; false (with a message) on a missing or bad port. */
bool client_parse_endpoint(const char *text, char *host, size_t host_size, uint16_t *out_port,
                           char *err, size_t err_size);
const char *client_options_usage(void);

/* getopt_long(3) over argv with "-:hV" (positionals come back in order as val 1), with
 * reap's messages: an unknown flag is called unknown wherever it stands, a flag whose value
 * is missing (or is the next flag) needs a value. Reset optind to 0 before the first call. */
struct option;
typedef enum client_getopt_result {
    CLIENT_GETOPT_OK = 0, CLIENT_GETOPT_END = 1, CLIENT_GETOPT_ERROR = -1,
} client_getopt_result;
client_getopt_result client_getopt(int argc, char **argv, const struct option *longopts,
                                   int *out_val, const char **out_value, char *err,
                                   size_t err_size);
/* Reads an admin token file (trailing newline dropped; 16-256 printable characters). */
bool client_admin_token_read(const char *path, char *out, size_t out_size, char *err,
                             size_t err_size);

/* Reads an ini scenario into opts->stages (see deploy/scenarios/); errors name the file and the
 * line. */
bool client_scenario_load(client_options *opts, const char *path, char *err, size_t err_size);

/* The churn load generator's run (opts->bots > 0) and its report in opts->out_dir. Returns a
 * CLIENT_EXIT_* (CLIENT_EXIT_THRESHOLD when the run completed but a threshold failed). */
int churn_run_command(const client_options *opts, FILE *out);

/* `reap-client merge DIR... --out DIR`: merges the reports of shards into one. */
int churn_merge_main(int argc, char **argv, FILE *out);

/* What a merge is asked to do (the command line's, or --procs'). */
enum { CHURN_MERGE_DIRS_MAX = 256 };
typedef struct churn_merge_args {
    const char *dirs[CHURN_MERGE_DIRS_MAX]; /* borrowed: the shards' report directories */
    int n_dirs;
    const char *out_dir;       /* borrowed */
    const char *junit_path;    /* borrowed; "" = none */
    client_threshold thresholds[CLIENT_THRESHOLDS_MAX]; /* judged after the shards' own */
    uint32_t n_thresholds;
    bool quiet;
} churn_merge_args;

/* Merges a->dirs into a->out_dir, prints the merged summary (unless quiet) and the thresholds'
 * verdict. Returns a CLIENT_EXIT_*. */
int churn_merge_run(const churn_merge_args *a, FILE *out);

/* `reap-client compare BASE NEW`: two runs' figures with verdicts. */
int churn_compare_main(int argc, char **argv, FILE *out);

/* --procs N: forks N shards of the run, waits for them, merges their reports into
 * opts->out_dir and evaluates the thresholds there. Returns a CLIENT_EXIT_*. */
int churn_run_procs(const client_options *opts, FILE *out);

#endif /* REAP_CLIENT_CLI_H */
