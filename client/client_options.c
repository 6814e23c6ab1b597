/*
 * client_options.c - reap-client's command line.
 */
#include "client.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char client_usage[] =
    "usage: reap-client --server HOST:PORT [options]\n"
    "       reap-client --server HOST:PORT --bots N --duration SECONDS [options]\n"
    "\n"
    "A thin reap client: connects, says hello, spawns props, waits for their acks and their\n"
    "replication, holds, then leaves.\n"
    "\n"
    "With --bots it is a churn load generator instead: N bots on one connection host, in one\n"
    "thread, join, spawn props, hold for a random time around --hold and leave, over and over\n"
    "for --duration seconds. It prints progress once a second and a summary, and writes a\n"
    "timeline (DIR/churn.json) and a picture of it (DIR/churn.svg). It talks to the --server\n"
    "address only.\n"
    "\n"
    "options:\n"
    "  --server HOST:PORT           the server's UDP endpoint (required)\n"
    "  --world NAME                 world to join (default: the server's first world)\n"
    "  --name NAME                  player name (default: reap-client; bots are bot-1..bot-N)\n"
    "  --spawn N                    props to spawn (default 0; with --bots 10 per visit)\n"
    "  --hold SECONDS               stay connected this long after spawning (default 0; with\n"
    "                               --bots 2, each visit drawing from [0.5, 1.5] times it)\n"
    "  --disconnect graceful|abrupt how to leave: goodbye, or drop silently so the server\n"
    "                               sees a timeout (default graceful); with --bots also\n"
    "                               'mixed': each leave picks one at random\n"
    "  --timeout SECONDS            wait at most this long for each answer (default 5)\n"
    "  --quiet                      print only the summary and errors\n"
    "  --help                       print this help and exit\n"
    "  --version                    print the version and exit\n"
    "\n"
    "churn options:\n"
    "  --bots N                     simulated players, 1..1000 (needs --duration)\n"
    "  --duration SECONDS           how long to churn, (0, 86400]\n"
    "  --out DIR                    where churn.json and churn.svg go (default build/churn)\n"
    "  --seed N                     random seed for hold times, pauses and leave modes\n"
    "                               (default: from the clock; the summary prints it)\n"
    "\n"
    "exit status: 0 on success, 1 when the server is unreachable, refuses or times out (with\n"
    "--bots: when no bot could join, or the timeline could not be written), 2 on a bad\n"
    "command line.\n";

const char *client_options_usage(void)
{
    return client_usage;
}

void client_options_default(client_options *opts)
{
    memset(opts, 0, sizeof *opts);
    snprintf(opts->name, sizeof opts->name, "reap-client");
    opts->disconnect = CLIENT_DISCONNECT_GRACEFUL;
    opts->timeout = 5.0;
    snprintf(opts->out_dir, sizeof opts->out_dir, "build/churn");
}

const char *client_disconnect_name(client_disconnect d)
{
    switch (d) {
    case CLIENT_DISCONNECT_GRACEFUL: return "graceful";
    case CLIENT_DISCONNECT_ABRUPT: return "abrupt";
    case CLIENT_DISCONNECT_MIXED: return "mixed";
    }
    return "?";
}

bool client_parse_endpoint(const char *text, char *host, size_t host_size, uint16_t *out_port,
                           char *err, size_t err_size)
{
    const char *colon = strrchr(text, ':');
    char *end;
    unsigned long port;

    if (colon == NULL || colon == text || (size_t)(colon - text) >= host_size) {
        snprintf(err, err_size, "bad value '%s' for --server: expected HOST:PORT", text);
        return false;
    }
    errno = 0;
    port = strtoul(colon + 1, &end, 10);
    if (colon[1] < '0' || colon[1] > '9' || errno != 0 || *end != '\0' || port == 0 ||
        port > 65535) {
        snprintf(err, err_size, "bad port in '%s' for --server: expected 1..65535", text);
        return false;
    }
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    *out_port = (uint16_t)port;
    return true;
}

/* A decimal integer in [min, max]; no sign, no trailing characters. */
static bool client_parse_uint(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || errno != 0 || *end != '\0' || v < min || v > max)
        return false;
    *out = v;
    return true;
}

static bool client_parse_seconds(const char *text, double max, double *out)
{
    char *end;
    double v;

    errno = 0;
    v = strtod(text, &end);
    if (text[0] == '\0' || errno != 0 || *end != '\0' || !(v >= 0) || v > max)
        return false;
    *out = v;
    return true;
}

client_options_result client_options_parse(client_options *opts, int argc, char **argv,
                                           char *err, size_t err_size)
{
    bool have_server = false;
    const char *churn_flag = NULL; /* a churn-only flag seen, for the error without --bots */

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *eq = strchr(arg, '=');
        char flag[32];
        const char *value;
        size_t len;

        if (strncmp(arg, "--", 2) != 0) {
            snprintf(err, err_size, "unexpected argument '%s' (try --help)", arg);
            return CLIENT_OPTIONS_ERROR;
        }
        len = eq != NULL ? (size_t)(eq - arg) : strlen(arg);
        if (len >= sizeof flag) {
            snprintf(err, err_size, "unknown option '%s' (try --help)", arg);
            return CLIENT_OPTIONS_ERROR;
        }
        memcpy(flag, arg, len);
        flag[len] = '\0';
        if (strcmp(flag, "--help") == 0 || strcmp(flag, "--version") == 0 ||
            strcmp(flag, "--quiet") == 0) {
            if (eq != NULL) {
                snprintf(err, err_size, "option '%s' takes no value", flag);
                return CLIENT_OPTIONS_ERROR;
            }
            if (flag[2] == 'h')
                opts->help = true;
            else if (flag[2] == 'v')
                opts->version = true;
            else
                opts->quiet = true;
            continue;
        }
        if (eq != NULL)
            value = eq + 1;
        else if (i + 1 < argc)
            value = argv[++i];
        else {
            snprintf(err, err_size, "option '%s' needs a value (try --help)", flag);
            return CLIENT_OPTIONS_ERROR;
        }

        if (strcmp(flag, "--server") == 0) {
            if (!client_parse_endpoint(value, opts->host, sizeof opts->host, &opts->port, err,
                                       err_size))
                return CLIENT_OPTIONS_ERROR;
            have_server = true;
        } else if (strcmp(flag, "--world") == 0 || strcmp(flag, "--name") == 0) {
            char *dst = flag[2] == 'w' ? opts->world : opts->name;
            if (strlen(value) >= sizeof opts->world) {
                snprintf(err, err_size, "bad value for %s: at most %zu characters", flag,
                         sizeof opts->world - 1);
                return CLIENT_OPTIONS_ERROR;
            }
            snprintf(dst, sizeof opts->world, "%s", value);
        } else if (strcmp(flag, "--spawn") == 0) {
            uint64_t n;

            if (!client_parse_uint(value, 0, 100000, &n)) {
                snprintf(err, err_size, "bad value '%s' for --spawn: expected an integer in "
                         "[0, 100000]", value);
                return CLIENT_OPTIONS_ERROR;
            }
            opts->spawn = (uint32_t)n;
            opts->spawn_set = true;
        } else if (strcmp(flag, "--hold") == 0 || strcmp(flag, "--timeout") == 0) {
            double *dst = flag[2] == 'h' ? &opts->hold : &opts->timeout;
            if (!client_parse_seconds(value, 86400, dst) ||
                (dst == &opts->timeout && *dst <= 0)) {
                snprintf(err, err_size, "bad value '%s' for %s: expected seconds in %s", value,
                         flag, dst == &opts->timeout ? "(0, 86400]" : "[0, 86400]");
                return CLIENT_OPTIONS_ERROR;
            }
            if (dst == &opts->hold)
                opts->hold_set = true;
        } else if (strcmp(flag, "--disconnect") == 0) {
            if (strcmp(value, "graceful") == 0)
                opts->disconnect = CLIENT_DISCONNECT_GRACEFUL;
            else if (strcmp(value, "abrupt") == 0)
                opts->disconnect = CLIENT_DISCONNECT_ABRUPT;
            else if (strcmp(value, "mixed") == 0)
                opts->disconnect = CLIENT_DISCONNECT_MIXED;
            else {
                snprintf(err, err_size, "bad value '%s' for --disconnect: expected graceful or "
                         "abrupt (or mixed, with --bots)", value);
                return CLIENT_OPTIONS_ERROR;
            }
        } else if (strcmp(flag, "--bots") == 0) {
            uint64_t n;

            if (!client_parse_uint(value, 1, CLIENT_BOTS_MAX, &n)) {
                snprintf(err, err_size, "bad value '%s' for --bots: expected an integer in "
                         "[1, %d]", value, CLIENT_BOTS_MAX);
                return CLIENT_OPTIONS_ERROR;
            }
            opts->bots = (uint32_t)n;
        } else if (strcmp(flag, "--duration") == 0) {
            if (!client_parse_seconds(value, CLIENT_DURATION_MAX, &opts->duration) ||
                opts->duration <= 0) {
                snprintf(err, err_size, "bad value '%s' for --duration: expected seconds in "
                         "(0, %g]", value, CLIENT_DURATION_MAX);
                return CLIENT_OPTIONS_ERROR;
            }
            churn_flag = "--duration";
        } else if (strcmp(flag, "--out") == 0) {
            if (value[0] == '\0' || strlen(value) >= sizeof opts->out_dir) {
                snprintf(err, err_size, "bad value for --out: expected a directory path of 1 to "
                         "%zu characters", sizeof opts->out_dir - 1);
                return CLIENT_OPTIONS_ERROR;
            }
            snprintf(opts->out_dir, sizeof opts->out_dir, "%s", value);
            churn_flag = "--out";
        } else if (strcmp(flag, "--seed") == 0) {
            if (!client_parse_uint(value, 0, UINT64_MAX, &opts->seed)) {
                snprintf(err, err_size, "bad value '%s' for --seed: expected a non-negative "
                         "integer", value);
                return CLIENT_OPTIONS_ERROR;
            }
            opts->seed_set = true;
            churn_flag = "--seed";
        } else {
            snprintf(err, err_size, "unknown option '%s' (try --help)", flag);
            return CLIENT_OPTIONS_ERROR;
        }
    }
    if (opts->help || opts->version)
        return CLIENT_OPTIONS_EXIT;
    if (!have_server) {
        snprintf(err, err_size, "missing --server HOST:PORT (try --help)");
        return CLIENT_OPTIONS_ERROR;
    }
    if (opts->bots == 0 && churn_flag == NULL && opts->disconnect == CLIENT_DISCONNECT_MIXED)
        churn_flag = "--disconnect mixed";
    if (opts->bots == 0 && churn_flag != NULL) {
        snprintf(err, err_size, "%s is for the churn load generator: it needs --bots N "
                 "(try --help)", churn_flag);
        return CLIENT_OPTIONS_ERROR;
    }
    if (opts->bots > 0 && opts->duration <= 0) {
        snprintf(err, err_size, "--bots needs --duration SECONDS: how long to churn");
        return CLIENT_OPTIONS_ERROR;
    }
    if (opts->bots > 0) {
        if (!opts->spawn_set)
            opts->spawn = CLIENT_CHURN_SPAWN_DEFAULT;
        if (!opts->hold_set)
            opts->hold = CLIENT_CHURN_HOLD_DEFAULT;
    }
    return CLIENT_OPTIONS_OK;
}
