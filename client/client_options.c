/*
 * client_options.c - reap-client's command line.
 */
#include "client.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char client_usage[] =
    "usage: reap-client --server HOST:PORT [options]\n"
    "\n"
    "A thin reap client: connects, says hello, spawns props, waits for their acks and their\n"
    "replication, holds, then leaves.\n"
    "\n"
    "options:\n"
    "  --server HOST:PORT           the server's UDP endpoint (required)\n"
    "  --world NAME                 world to join (default: the server's first world)\n"
    "  --name NAME                  player name (default: reap-client)\n"
    "  --spawn N                    props to spawn (default 0)\n"
    "  --hold SECONDS               stay connected this long after spawning (default 0)\n"
    "  --disconnect graceful|abrupt how to leave: goodbye, or drop silently so the server\n"
    "                               sees a timeout (default graceful)\n"
    "  --timeout SECONDS            wait at most this long for each answer (default 5)\n"
    "  --quiet                      print only the summary line and errors\n"
    "  --help                       print this help and exit\n"
    "  --version                    print the version and exit\n"
    "\n"
    "exit status: 0 on success, 1 when the server is unreachable, refuses or times out,\n"
    "2 on a bad command line.\n";

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
            char *end;
            unsigned long n;

            errno = 0;
            n = strtoul(value, &end, 10);
            if (value[0] < '0' || value[0] > '9' || errno != 0 || *end != '\0' || n > 100000) {
                snprintf(err, err_size, "bad value '%s' for --spawn: expected an integer in "
                         "[0, 100000]", value);
                return CLIENT_OPTIONS_ERROR;
            }
            opts->spawn = (uint32_t)n;
        } else if (strcmp(flag, "--hold") == 0 || strcmp(flag, "--timeout") == 0) {
            double *dst = flag[2] == 'h' ? &opts->hold : &opts->timeout;
            if (!client_parse_seconds(value, 86400, dst) ||
                (dst == &opts->timeout && *dst <= 0)) {
                snprintf(err, err_size, "bad value '%s' for %s: expected seconds in %s", value,
                         flag, dst == &opts->timeout ? "(0, 86400]" : "[0, 86400]");
                return CLIENT_OPTIONS_ERROR;
            }
        } else if (strcmp(flag, "--disconnect") == 0) {
            if (strcmp(value, "graceful") == 0)
                opts->disconnect = CLIENT_DISCONNECT_GRACEFUL;
            else if (strcmp(value, "abrupt") == 0)
                opts->disconnect = CLIENT_DISCONNECT_ABRUPT;
            else {
                snprintf(err, err_size, "bad value '%s' for --disconnect: expected graceful or "
                         "abrupt", value);
                return CLIENT_OPTIONS_ERROR;
            }
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
    return CLIENT_OPTIONS_OK;
}
