/*
 * cli_table.h - how each of reap-client's commands (the run, merge, compare) reads its
 * command line: a table of its options, one function each that applies an option's value,
 * and one driver over getopt_long(3) that gives every command the same messages.
 */
#ifndef REAP_CLIENT_CLI_TABLE_H
#define REAP_CLIENT_CLI_TABLE_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#include "cli.h"

typedef enum cli_set_result {
    CLI_SET_OK = 0,
    CLI_SET_STOP = 1,         /* the command is done (--help printed): stop reading */
    CLI_SET_ERROR = -1,       /* err says which value is bad */
} cli_set_result;

/* Applies one option's value (NULL for an option without one) or one positional argument to
 * the command's ctx. flag is "--name", for messages. */
typedef cli_set_result (*cli_set_fn)(void *ctx, const char *flag, const char *value, char *err,
                                     size_t err_size);

typedef struct cli_option {
    const char *name;         /* without "--"; NULL ends a table */
    int has_arg;              /* no_argument or required_argument */
    int id;                   /* a short option's letter ('h', 'V'), else an id above 255 */
    cli_set_fn set;
    const char *tag;          /* recorded in *out_tag once applied (the run: a churn flag) */
} cli_option;

typedef struct cli_command {
    const cli_option *options;
    cli_set_fn positional;    /* NULL: a positional argument is refused */
    int first;                /* where argv starts: 0 (after the program) or 2 ("merge ...") */
} cli_command;

/* Reads argv by cmd into ctx, in order. CLIENT_GETOPT_END when every argument was applied,
 * CLIENT_GETOPT_OK when an option stopped the reading (CLI_SET_STOP), CLIENT_GETOPT_ERROR with
 * err. out_tag (or NULL) gets the tag of the last option applied that has one. */
client_getopt_result cli_parse(const cli_command *cmd, int argc, char **argv, void *ctx,
                               const char **out_tag, char *err, size_t err_size);

#endif /* REAP_CLIENT_CLI_TABLE_H */
