/*
 * cli_options.c - reap-client's command line.
 */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static const char client_usage[] =
    "usage: reap-client --server HOST:PORT [options]\n"
    "       reap-client --server HOST:PORT --bots N --duration SECONDS [churn options]\n"
    "       reap-client --server HOST:PORT --scenario FILE [churn options]\n"
    "       reap-client merge DIR... --out DIR [--threshold EXPR]...\n"
    "       reap-client compare BASE NEW [--tolerance 5%] [--gate FIGURE]... [--out DIR]\n"
    "\n"
    "A thin reap client: connects, says hello, spawns props, waits for their acks and their\n"
    "replication, holds, then leaves.\n"
    "\n"
    "With --bots (or --scenario) it is a churn load generator instead: bots on one connection\n"
    "host, in one thread, join, spawn props, steer their pawns (MoveInput), hold for a random\n"
    "time around --hold, ask the server to check what it replicated to them, and leave, over\n"
    "and over. It prints progress (one line in place on a terminal), a summary with latency\n"
    "percentiles, the thresholds' verdict, and writes DIR/report.html, report.json,\n"
    "report.dat, summary.tsv, timeline.csv (one row a second), churn.json and churn.svg.\n"
    "It talks to --server (and --admin) only.\n"
    "\n"
    "options:\n"
    "  --server HOST:PORT           the server's UDP endpoint (required)\n"
    "  --world NAME                 world to join (default: the server's first world)\n"
    "  --name NAME                  player name (default: reap-client; bots are bot-1..bot-N)\n"
    "  --spawn N                    props to spawn (default 0; with --bots 10 per visit)\n"
    "  --spawn-mix NAME:N,...       with --bots or --scenario: each visit spawns these\n"
    "                               archetypes of the server's world profile instead of\n"
    "                               props (e.g. Weapon:2,Inventory:1; Prop and Projectile\n"
    "                               are always there)\n"
    "  --hold SECONDS               stay connected this long after spawning (default 0; with\n"
    "                               --bots 10, each visit drawing from [0.5, 1.5] times it)\n"
    "  --disconnect MODE            how to leave: graceful (a goodbye) or abrupt (drop\n"
    "                               silently so the server sees a timeout; default\n"
    "                               graceful); with --bots also mixed: each leave picks one\n"
    "  --timeout SECONDS            wait at most this long for each answer (default 5)\n"
    "  --quiet                      print only the summary and errors\n"
    "  -h, --help                   print this help and exit\n"
    "  -V, --version                print the version and exit\n"
    "\n"
    "churn options:\n"
    "  --bots N                     simulated players, 1..1000 (needs --duration)\n"
    "  --duration SECONDS           how long to churn, (0, 86400]\n"
    "  --move-rate HZ               MoveInputs per second per bot, [0, 60] (default 10)\n"
    "  --projectile-rate HZ         projectiles per second per bot while holding, [0, 20]\n"
    "                               (default 0)\n"
    "  --scenario FILE              stages from an ini file instead of --bots/--duration/\n"
    "                               --spawn/--hold/--move-rate (see deploy/scenarios/)\n"
    "  --threshold EXPR             pass/fail rule on a figure, e.g. 'join_p99<500ms',\n"
    "                               'errors==0', 'server_tick_p99<10ms', 'leaked==0';\n"
    "                               repeatable (at most 16)\n"
    "  --admin URL                  the server's admin endpoint, e.g. http://127.0.0.1:7780:\n"
    "                               its /metrics is sampled every second into the report\n"
    "  --admin-token FILE           file holding the token the server's POST /console needs\n"
    "                               (its --admin-token): sent as 'Authorization: Bearer'\n"
    "  --leak-check                 after the run, wait for every player to be gone, collect,\n"
    "                               and list what outlived the run (needs --admin; implied by a\n"
    "                               'leaked' threshold)\n"
    "  --shard I/N                  this process is shard I (0..N-1) of N: it plays every Nth\n"
    "                               bot of each stage and draws its own random stream from\n"
    "                               --seed; merge the shards' --out directories afterwards\n"
    "  --impair SPEC                a bad network, applied in this process to each bot's\n"
    "                               datagrams both ways: loss=2%,latency=60ms,jitter=15ms,\n"
    "                               dup=0.5%,reorder=1% (any subset; latency is added each\n"
    "                               way; seeded by --seed); a scenario stage's 'impair' wins\n"
    "  --procs N                    run N processes on this machine, each a shard of the run\n"
    "                               (--shard I/N), and merge their reports exactly into --out\n"
    "  --out DIR                    where the report goes (default build/churn)\n"
    "  --junit FILE                 also write the thresholds' verdict as a JUnit XML file\n"
    "                               (one test case per threshold) for CI\n"
    "  --seed N                     random seed for hold times, pauses, moves and leave modes\n"
    "                               (default: from the clock; the summary prints it)\n"
    "  --progress, --no-progress    force the in-place progress line on or off (default: on\n"
    "                               when stdout is a terminal)\n"
    "\n"
    "threshold figures: errors, error_rate, refused, refusal_rate, joins, leaves, checks,\n"
    "mismatches, unknown_destroys, spawned, moves, leaked, generator_cpu (share of a core),\n"
    "generator_saturated_seconds; LATENCY_{p50,p95,p99,max,mean,count} for LATENCY in\n"
    "connect, welcome, join, spawn_ack, spawn_replicated, rtt, check, loop_lag; with --admin\n"
    "server_fps, server_tick_{p50,p99,max}, server_{net,world,repl,gc}_p99,\n"
    "server_gc_work_max, server_collections, server_cpu_seconds, server_rss_peak (bytes),\n"
    "server_bytes_per_connection (bytes/s). Operators < <= > >= == !=;\n"
    "times take us, ms or s (none: seconds), rates % or none (a fraction), counts none.\n"
    "\n"
    "exit status: 0 on success, 1 when the server is unreachable, refuses or times out (with\n"
    "--bots: when no bot could join, or the report could not be written), 2 on a bad\n"
    "command line or scenario file, 99 when the run completed but a --threshold failed, 105\n"
    "when interrupted (Ctrl-C, SIGTERM; the report is still written). A --leak-check that\n"
    "cannot run (no --admin: 2; the server refuses the console or has no leak marks: 1)\n"
    "fails the run.\n";

const char *client_options_usage(void)
{
    return client_usage;
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

/* A leak check (--leak-check or a 'leaked' threshold) asks the server's console: without
 * --admin it cannot run, and a check that cannot run must not pass. */
static client_options_result client_options_check_leaks(const client_options *opts, char *err,
                                                        size_t err_size)
{
    bool wants = opts->leak_check;

    for (uint32_t i = 0; i < opts->n_thresholds; i++)
        wants |= strcmp(opts->thresholds[i].metric, "leaked") == 0;
    if (wants && opts->admin_url[0] == '\0') {
        snprintf(err, err_size, "%s needs --admin URL: the leak check asks the server's console",
                 opts->leak_check ? "--leak-check" : "a 'leaked' threshold");
        return CLIENT_OPTIONS_ERROR;
    }
    return CLIENT_OPTIONS_OK;
}

/* --scenario: the file sets the stages; the flags that describe one stage conflict with it. */
static client_options_result client_options_scenario(client_options *opts, bool have_server,
                                                     char *err, size_t err_size)
{
    const char *conflict = opts->bots > 0 ? "--bots" : opts->duration > 0 ? "--duration" :
                           opts->spawn_set ? "--spawn" : opts->hold_set ? "--hold" :
                           opts->move_hz_set ? "--move-rate" : NULL;

    if (conflict != NULL) {
        snprintf(err, err_size, "%s conflicts with --scenario: the scenario file sets it",
                 conflict);
        return CLIENT_OPTIONS_ERROR;
    }
    if (!have_server) {
        snprintf(err, err_size, "missing --server HOST:PORT (try --help)");
        return CLIENT_OPTIONS_ERROR;
    }
    if (!client_scenario_load(opts, opts->scenario_path, err, err_size))
        return CLIENT_OPTIONS_ERROR;
    return client_options_check_leaks(opts, err, err_size);
}

bool client_admin_token_read(const char *path, char *out, size_t out_size, char *err,
                             size_t err_size)
{
    char buf[CLIENT_ADMIN_TOKEN_MAX + 3];
    size_t n;
    FILE *f = fopen(path, "r");

    if (f == NULL) {
        snprintf(err, err_size, "bad value '%s' for --admin-token: cannot read it: %s", path,
                 strerror(errno));
        return false;
    }
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        buf[--n] = '\0';
    for (size_t i = 0; i < n; i++)
        if (buf[i] <= ' ' || buf[i] > '~') {
            snprintf(err, err_size, "bad token in '%s' for --admin-token: printable characters "
                     "only, no spaces", path);
            return false;
        }
    if (n < CLIENT_ADMIN_TOKEN_MIN || n > CLIENT_ADMIN_TOKEN_MAX || n >= out_size) {
        snprintf(err, err_size, "bad token in '%s' for --admin-token: expected %d to %d "
                 "characters", path, CLIENT_ADMIN_TOKEN_MIN, CLIENT_ADMIN_TOKEN_MAX);
        return false;
    }
    memcpy(out, buf, n + 1);
    return true;
}

/* The long options, in --help's order; val is the option's id (short options keep their
 * letter). getopt_long(3) does the splitting: --flag VALUE, --flag=VALUE, -h, -V. */
enum {
    OPT_SERVER = 256, OPT_WORLD, OPT_NAME, OPT_SPAWN, OPT_HOLD, OPT_DISCONNECT, OPT_TIMEOUT,
    OPT_QUIET, OPT_BOTS, OPT_DURATION, OPT_MOVE_RATE, OPT_PROJECTILE_RATE, OPT_SCENARIO,
    OPT_THRESHOLD, OPT_ADMIN, OPT_ADMIN_TOKEN, OPT_LEAK_CHECK, OPT_SHARD, OPT_IMPAIR, OPT_PROCS,
    OPT_OUT, OPT_JUNIT, OPT_SEED, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_SPAWN_MIX,
};

static const struct option client_long_options[] = {
    { "server", required_argument, NULL, OPT_SERVER },
    { "world", required_argument, NULL, OPT_WORLD },
    { "name", required_argument, NULL, OPT_NAME },
    { "spawn", required_argument, NULL, OPT_SPAWN },
    { "hold", required_argument, NULL, OPT_HOLD },
    { "spawn-mix", required_argument, NULL, OPT_SPAWN_MIX },
    { "disconnect", required_argument, NULL, OPT_DISCONNECT },
    { "timeout", required_argument, NULL, OPT_TIMEOUT },
    { "quiet", no_argument, NULL, OPT_QUIET },
    { "help", no_argument, NULL, 'h' },
    { "version", no_argument, NULL, 'V' },
    { "bots", required_argument, NULL, OPT_BOTS },
    { "duration", required_argument, NULL, OPT_DURATION },
    { "move-rate", required_argument, NULL, OPT_MOVE_RATE },
    { "projectile-rate", required_argument, NULL, OPT_PROJECTILE_RATE },
    { "scenario", required_argument, NULL, OPT_SCENARIO },
    { "threshold", required_argument, NULL, OPT_THRESHOLD },
    { "admin", required_argument, NULL, OPT_ADMIN },
    { "admin-token", required_argument, NULL, OPT_ADMIN_TOKEN },
    { "leak-check", no_argument, NULL, OPT_LEAK_CHECK },
    { "shard", required_argument, NULL, OPT_SHARD },
    { "impair", required_argument, NULL, OPT_IMPAIR },
    { "procs", required_argument, NULL, OPT_PROCS },
    { "out", required_argument, NULL, OPT_OUT },
    { "junit", required_argument, NULL, OPT_JUNIT },
    { "seed", required_argument, NULL, OPT_SEED },
    { "progress", no_argument, NULL, OPT_PROGRESS },
    { "no-progress", no_argument, NULL, OPT_NO_PROGRESS },
    { NULL, 0, NULL, 0 },
};

const struct option *client_options_long(void)
{
    return client_long_options;
}

/* The long option whose id is val ("--server"), for messages. */
static const char *client_option_name(int val, char *buf, size_t size)
{
    for (const struct option *o = client_long_options; o->name != NULL; o++)
        if (o->val == val) {
            snprintf(buf, size, "--%s", o->name);
            return buf;
        }
    snprintf(buf, size, "-%c", val);
    return buf;
}

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

client_options_result client_options_parse(client_options *opts, int argc, char **argv,
                                           char *err, size_t err_size)
{
    bool have_server = false;
    const char *churn_flag = NULL; /* a churn-only flag seen, for the error without --bots */
    client_getopt_result gr;
    int val;
    const char *value;
    char flag[48];

    optind = 0; /* glibc: start over (tests parse several command lines) */
    opterr = 0;
    while ((gr = client_getopt(argc, argv, client_long_options, &val, &value, err, err_size)) ==
           CLIENT_GETOPT_OK) {
        if (val == 1) {
            snprintf(err, err_size, "unexpected argument '%s' (try --help)", value);
            return CLIENT_OPTIONS_ERROR;
        }
        client_option_name(val, flag, sizeof flag);
        switch (val) {
        case 'h': opts->help = true; continue;
        case 'V': opts->version = true; continue;
        case OPT_QUIET: opts->quiet = true; continue;
        case OPT_LEAK_CHECK: opts->leak_check = true; churn_flag = "--leak-check"; continue;
        case OPT_PROGRESS: opts->progress = 1; churn_flag = "--progress"; continue;
        case OPT_NO_PROGRESS: opts->progress = 0; churn_flag = "--progress"; continue;
        default: break;
        }
        if (val == OPT_SERVER) {
            if (!client_parse_endpoint(value, opts->host, sizeof opts->host, &opts->port, err,
                                       err_size))
                return CLIENT_OPTIONS_ERROR;
            have_server = true;
        } else if (val == OPT_WORLD || val == OPT_NAME) {
            char *dst = flag[2] == 'w' ? opts->world : opts->name;
            if (strlen(value) >= sizeof opts->world) {
                snprintf(err, err_size, "bad value for %s: at most %zu characters", flag,
                         sizeof opts->world - 1);
                return CLIENT_OPTIONS_ERROR;
            }
            snprintf(dst, sizeof opts->world, "%s", value);
        } else if (val == OPT_SPAWN) {
            uint64_t n;

            if (!client_parse_uint(value, 0, 100000, &n)) {
                snprintf(err, err_size, "bad value '%s' for --spawn: expected an integer in "
                         "[0, 100000]", value);
                return CLIENT_OPTIONS_ERROR;
            }
            opts->spawn = (uint32_t)n;
            opts->spawn_set = true;
        } else if (val == OPT_SPAWN_MIX) {
            char why[200];

            if (!client_spawn_mix_parse(value, &opts->spawn_mix, why, sizeof why)) {
                snprintf(err, err_size, "bad value '%s' for --spawn-mix: %s", value, why);
                return CLIENT_OPTIONS_ERROR;
            }
            churn_flag = "--spawn-mix";
        } else if (val == OPT_HOLD || val == OPT_TIMEOUT) {
            double *dst = flag[2] == 'h' ? &opts->hold : &opts->timeout;
            if (!client_parse_seconds(value, 86400, dst) ||
                (dst == &opts->timeout && *dst <= 0)) {
                snprintf(err, err_size, "bad value '%s' for %s: expected seconds in %s", value,
                         flag, dst == &opts->timeout ? "(0, 86400]" : "[0, 86400]");
                return CLIENT_OPTIONS_ERROR;
            }
            if (dst == &opts->hold)
                opts->hold_set = true;
        } else if (val == OPT_DISCONNECT) {
            if (!client_disconnect_parse(value, &opts->disconnect)) {
                snprintf(err, err_size, "bad value '%s' for --disconnect: expected graceful or "
                         "abrupt (or mixed, with --bots)", value);
                return CLIENT_OPTIONS_ERROR;
            }
        } else if (val == OPT_BOTS) {
            uint64_t n;

            if (!client_parse_uint(value, 1, CLIENT_BOTS_MAX, &n)) {
                snprintf(err, err_size, "bad value '%s' for --bots: expected an integer in "
                         "[1, %d]", value, CLIENT_BOTS_MAX);
                return CLIENT_OPTIONS_ERROR;
            }
            opts->bots = (uint32_t)n;
        } else if (val == OPT_DURATION) {
            if (!client_parse_seconds(value, CLIENT_DURATION_MAX, &opts->duration) ||
                opts->duration <= 0) {
                snprintf(err, err_size, "bad value '%s' for --duration: expected seconds in "
                         "(0, %g]", value, CLIENT_DURATION_MAX);
                return CLIENT_OPTIONS_ERROR;
            }
            churn_flag = "--duration";
        } else if (val == OPT_OUT) {
            if (value[0] == '\0' || strlen(value) >= sizeof opts->out_dir) {
                snprintf(err, err_size, "bad value for --out: expected a directory path of 1 to "
                         "%zu characters", sizeof opts->out_dir - 1);
                return CLIENT_OPTIONS_ERROR;
            }
            snprintf(opts->out_dir, sizeof opts->out_dir, "%s", value);
            churn_flag = "--out";
        } else if (val == OPT_MOVE_RATE || val == OPT_PROJECTILE_RATE) {
            bool move = flag[2] == 'm';
            double max = move ? CLIENT_MOVE_HZ_MAX : CLIENT_PROJECTILE_HZ_MAX;
            double *dst = move ? &opts->move_hz : &opts->projectile_hz;
            if (!client_parse_seconds(value, max, dst)) {
                snprintf(err, err_size, "bad value '%s' for %s: expected a rate per second in "
                         "[0, %g]", value, flag, max);
                return CLIENT_OPTIONS_ERROR;
            }
            if (move)
                opts->move_hz_set = true;
            churn_flag = move ? "--move-rate" : "--projectile-rate";
        } else if (val == OPT_SCENARIO) {
            if (value[0] == '\0' || strlen(value) >= sizeof opts->scenario_path) {
                snprintf(err, err_size, "bad value for --scenario: expected a file path");
                return CLIENT_OPTIONS_ERROR;
            }
            snprintf(opts->scenario_path, sizeof opts->scenario_path, "%s", value);
        } else if (val == OPT_THRESHOLD) {
            if (opts->n_thresholds >= CLIENT_THRESHOLDS_MAX) {
                snprintf(err, err_size, "too many --threshold options (at most %d)",
                         CLIENT_THRESHOLDS_MAX);
                return CLIENT_OPTIONS_ERROR;
            }
            if (!client_threshold_parse(value, &opts->thresholds[opts->n_thresholds], err,
                                        err_size))
                return CLIENT_OPTIONS_ERROR;
            opts->n_thresholds++;
            churn_flag = "--threshold";
        } else if (val == OPT_ADMIN) {
            if (strncmp(value, "http://", 7) != 0 || strlen(value) >= sizeof opts->admin_url) {
                snprintf(err, err_size, "bad value '%s' for --admin: expected "
                         "http://HOST:PORT[/metrics]", value);
                return CLIENT_OPTIONS_ERROR;
            }
            snprintf(opts->admin_url, sizeof opts->admin_url, "%s", value);
            churn_flag = "--admin";
        } else if (val == OPT_SHARD) {
            unsigned si, n;
            char tail;
            if (sscanf(value, "%u/%u%c", &si, &n, &tail) != 2 || n < 1 || n > CLIENT_BOTS_MAX ||
                si >= n || value[0] < '0' || value[0] > '9') {
                snprintf(err, err_size, "bad value '%s' for --shard: expected I/N with 0 <= I "
                         "< N <= %d", value, CLIENT_BOTS_MAX);
                return CLIENT_OPTIONS_ERROR;
            }
            opts->shard = si;
            opts->shards = n;
            churn_flag = "--shard";
        } else if (val == OPT_PROCS) {
            uint64_t n;

            if (!client_parse_uint(value, 1, CLIENT_PROCS_MAX, &n)) {
                snprintf(err, err_size, "bad value '%s' for --procs: expected an integer in "
                         "[1, %d]", value, CLIENT_PROCS_MAX);
                return CLIENT_OPTIONS_ERROR;
            }
            opts->procs = (uint32_t)n;
            churn_flag = "--procs";
        } else if (val == OPT_IMPAIR) {
            if (!client_impair_parse(value, &opts->impair, err, err_size))
                return CLIENT_OPTIONS_ERROR;
            churn_flag = "--impair";
        } else if (val == OPT_SEED) {
            if (!client_parse_uint(value, 0, UINT64_MAX, &opts->seed)) {
                snprintf(err, err_size, "bad value '%s' for --seed: expected a non-negative "
                         "integer", value);
                return CLIENT_OPTIONS_ERROR;
            }
            opts->seed_set = true;
            churn_flag = "--seed";
        } else if (val == OPT_ADMIN_TOKEN) {
            if (!client_admin_token_read(value, opts->admin_token, sizeof opts->admin_token, err,
                                         err_size))
                return CLIENT_OPTIONS_ERROR;
            churn_flag = "--admin-token";
        } else if (val == OPT_JUNIT) {
            if (value[0] == '\0' || strlen(value) >= sizeof opts->junit_path) {
                snprintf(err, err_size, "bad value for --junit: expected a file path of 1 to "
                         "%zu characters", sizeof opts->junit_path - 1);
                return CLIENT_OPTIONS_ERROR;
            }
            snprintf(opts->junit_path, sizeof opts->junit_path, "%s", value);
            churn_flag = "--junit";
        } else {
            snprintf(err, err_size, "unknown option '%s' (try --help)", flag);
            return CLIENT_OPTIONS_ERROR;
        }
    }
    if (gr == CLIENT_GETOPT_ERROR)
        return CLIENT_OPTIONS_ERROR;
    if (opts->help || opts->version)
        return CLIENT_OPTIONS_EXIT;
    if (opts->procs > 1 && opts->shards > 1) {
        snprintf(err, err_size, "--procs conflicts with --shard: --procs runs the shards itself");
        return CLIENT_OPTIONS_ERROR;
    }
    if (opts->spawn_mix.n > 0 && opts->spawn_set) {
        snprintf(err, err_size, "--spawn conflicts with --spawn-mix: a visit spawns the mix "
                 "(name Prop in it for props)");
        return CLIENT_OPTIONS_ERROR;
    }
    if (opts->scenario_path[0] != '\0')
        return client_options_scenario(opts, have_server, err, err_size);
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
        client_stage *st = &opts->stages[0];

        if (!opts->spawn_set)
            opts->spawn = CLIENT_CHURN_SPAWN_DEFAULT;
        if (!opts->hold_set)
            opts->hold = CLIENT_CHURN_HOLD_DEFAULT;
        memset(st, 0, sizeof *st);
        snprintf(st->name, sizeof st->name, "churn");
        st->duration = opts->duration;
        st->bots_from = st->bots_to = opts->bots;
        st->spawn = opts->spawn;
        st->move_hz = opts->move_hz;
        st->projectile_hz = opts->projectile_hz;
        st->hold = opts->hold;
        st->leave = opts->disconnect;
        st->impair = opts->impair;
        st->mix = opts->spawn_mix;
        opts->n_stages = 1;
    }
    return client_options_check_leaks(opts, err, err_size);
}
