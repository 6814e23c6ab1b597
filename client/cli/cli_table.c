/*
 * cli_table.c - a command's options read by its table (see cli_table.h), over getopt_long(3)
 * with reap's messages.
 */
#include "cli_table.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

enum { CLI_OPTIONS_MAX = 48 };

client_getopt_result client_getopt(int argc, char **argv, const struct option *longopts,
                                   int *out_val, const char **out_value, char *err,
                                   size_t err_size)
{
    int idx = -1;
    int val = getopt_long(argc, argv, "-:hV", longopts, &idx);
    char name[48];

    if (val == -1)
        return CLIENT_GETOPT_END;
    if (val == 1) {
        *out_val = 1;
        *out_value = optarg;
        return CLIENT_GETOPT_OK;
    }
    if (val == '?' || val == ':') {
        const char *arg = optind - 1 >= 1 && optind - 1 < argc ? argv[optind - 1] : "?";
        int len = (int)strcspn(arg, "=");

        if (strncmp(arg, "--", 2) != 0)
            snprintf(err, err_size, val == ':' ? "option '-%c' needs a value (try --help)" :
                     "unknown option '-%c' (try --help)", optopt);
        else if (val == ':')
            snprintf(err, err_size, "option '%.*s' needs a value (try --help)", len, arg);
        else if (optopt != 0 && arg[len] == '=')
            snprintf(err, err_size, "option '%.*s' takes no value", len, arg);
        else
            snprintf(err, err_size, "unknown option '%.*s' (try --help)", len, arg);
        return CLIENT_GETOPT_ERROR;
    }
    /* A value taken from the next argument (not after '=') that is itself a flag: the value
     * is missing. */
    if (optarg != NULL && optarg == argv[optind - 1] && strncmp(optarg, "--", 2) == 0 &&
        optarg[2] != '\0') {
        if (idx >= 0)
            snprintf(name, sizeof name, "--%s", longopts[idx].name);
        else
            snprintf(name, sizeof name, "-%c", val);
        snprintf(err, err_size, "option '%s' needs a value (try --help): '%s' is an option",
                 name, optarg);
        return CLIENT_GETOPT_ERROR;
    }
    *out_val = val;
    *out_value = optarg;
    return CLIENT_GETOPT_OK;
}

client_getopt_result cli_parse(const cli_command *cmd, int argc, char **argv, void *ctx,
                               const char **out_tag, char *err, size_t err_size)
{
    struct option longopts[CLI_OPTIONS_MAX + 1];
    client_getopt_result gr;
    const char *value;
    size_t n = 0;
    int val;

    for (const cli_option *o = cmd->options; o->name != NULL && n < CLI_OPTIONS_MAX; o++)
        longopts[n++] = (struct option){ o->name, o->has_arg, NULL, o->id };
    memset(&longopts[n], 0, sizeof longopts[n]);
    optind = cmd->first; /* glibc: 0 starts over (tests parse several command lines) */
    opterr = 0;
    while ((gr = client_getopt(argc, argv, longopts, &val, &value, err, err_size)) ==
           CLIENT_GETOPT_OK) {
        const cli_option *opt = NULL;
        cli_set_result r;
        char flag[48];

        if (val == 1) {
            if (cmd->positional == NULL) {
                snprintf(err, err_size, "unexpected argument '%s' (try --help)", value);
                return CLIENT_GETOPT_ERROR;
            }
            r = cmd->positional(ctx, NULL, value, err, err_size);
        } else {
            for (const cli_option *o = cmd->options; o->name != NULL && opt == NULL; o++)
                if (o->id == val)
                    opt = o;
            if (opt == NULL) {
                snprintf(err, err_size, "unknown option (try --help)");
                return CLIENT_GETOPT_ERROR;
            }
            snprintf(flag, sizeof flag, "--%s", opt->name);
            r = opt->set(ctx, flag, value, err, err_size);
            if (r != CLI_SET_ERROR && opt->tag != NULL && out_tag != NULL)
                *out_tag = opt->tag;
        }
        if (r == CLI_SET_ERROR)
            return CLIENT_GETOPT_ERROR;
        if (r == CLI_SET_STOP)
            return CLIENT_GETOPT_OK;
    }
    return gr;
}
