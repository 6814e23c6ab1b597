/*
 * cli_options.c - reap-client's command line.
 */
#include "cli.h"
#include "cli_table.h"

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
    "  --move-pattern P             random (default: a random walk) or roam (straight lines\n"
    "                               at net.MaxPawnSpeed, turning at the world's edge)\n"
    "  --projectile-rate HZ         projectiles per second per bot while holding, [0, 20]\n"
    "                               (default 0)\n"
    "  --scenario FILE              stages from an ini file instead of --bots/--duration/\n"
    "                               --spawn/--hold/--move-rate (see deploy/scenarios/); a\n"
    "                               stage's 'travel = MAP [seamless|hard]' asks the server\n"
    "                               to travel (needs --admin); the bots follow every travel\n"
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
    "  --source-addresses MODE      auto (default): against a server on loopback (127/8) each\n"
    "                               bot sends from a loopback address of its own, 127.1.0.0 +\n"
    "                               its number (bot-1 from 127.1.0.1), as each real player\n"
    "                               has an address of their own; elsewhere the kernel's\n"
    "                               choice. one: every bot from the kernel's choice (one\n"
    "                               address, which the server's limit of handshakes in flight\n"
    "                               per address may refuse)\n"
    "  --out DIR                    where the report goes (default build/churn)\n"
    "  --checkpoint SECONDS         write report.json every this many seconds while the run\n"
    "                               goes, marked partial, so that a killed run leaves it\n"
    "                               (default 10; 0: only at the end); timeline.csv gets a\n"
    "                               row every second either way\n"
    "  --junit FILE                 also write the thresholds' verdict as a JUnit XML file\n"
    "                               (one test case per threshold) for CI\n"
    "  --seed N                     random seed for hold times, pauses, moves and leave modes\n"
    "                               (default: from the clock; the summary prints it)\n"
    "  --progress, --no-progress    force the in-place progress line on or off (default: on\n"
    "                               when stdout is a terminal)\n"
    "\n"
    "threshold figures: errors, error_rate, refused, refused_busy, refusal_rate, joins,\n"
    "leaves, checks, mismatches, unknown_destroys, spawned, moves, leaked, server_outages,\n"
    "server_outage_seconds, generator_cpu (share of a core),\n"
    "generator_saturated_seconds, travels, travel_refused; LATENCY_{p50,p95,p99,max,mean,\n"
    "count} for LATENCY in connect, welcome, join, spawn_ack, spawn_replicated, rtt, check,\n"
    "loop_lag, travel; with --admin server_fps, server_tick_{p50,p99,max},\n"
    "server_{net,world,repl,gc}_p99, server_gc_work_max, server_collections,\n"
    "server_cpu_seconds, server_rss_peak (bytes), server_bytes_per_connection (bytes/s),\n"
    "server_travel_frame_max (the longest frame of any travel), leaked_worlds (after the\n"
    "last travel), rss_growth_per_match (bytes: the slope of the resident memory after\n"
    "each travel). Operators < <= > >= == !=;\n"
    "times take us, ms or s (none: seconds), rates % or none (a fraction), counts none.\n"
    "\n"
    "exit status: 0 on success, 1 when the server is unreachable, refuses or times out (with\n"
    "--bots: when no bot could join, or the server stopped answering during the run; the\n"
    "report is still written), 2 on a bad command line or scenario file, 3 when some of the\n"
    "run's files could not be written (each is named; the others are), 99 when the run\n"
    "completed but a --threshold failed, 105 when interrupted (Ctrl-C, SIGTERM; the report\n"
    "is still written); when several apply, the first of 1, 3, 105, 99. A --leak-check that\n"
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

/* ---- the options, one function each ---------------------------------------------------- */

typedef struct run_ctx {
    client_options *opts;
    bool have_server;
} run_ctx;

static cli_set_result run_help(void *ctx, const char *flag, const char *value, char *err,
                               size_t err_size)
{
    (void)flag, (void)value, (void)err, (void)err_size;
    ((run_ctx *)ctx)->opts->help = true;
    return CLI_SET_OK;
}

static cli_set_result run_version(void *ctx, const char *flag, const char *value, char *err,
                                  size_t err_size)
{
    (void)flag, (void)value, (void)err, (void)err_size;
    ((run_ctx *)ctx)->opts->version = true;
    return CLI_SET_OK;
}

static cli_set_result run_quiet(void *ctx, const char *flag, const char *value, char *err,
                                size_t err_size)
{
    (void)flag, (void)value, (void)err, (void)err_size;
    ((run_ctx *)ctx)->opts->session.quiet = true;
    return CLI_SET_OK;
}

static cli_set_result run_leak_check(void *ctx, const char *flag, const char *value, char *err,
                                     size_t err_size)
{
    (void)flag, (void)value, (void)err, (void)err_size;
    ((run_ctx *)ctx)->opts->leak_check = true;
    return CLI_SET_OK;
}

static cli_set_result run_progress(void *ctx, const char *flag, const char *value, char *err,
                                   size_t err_size)
{
    (void)value, (void)err, (void)err_size;
    ((run_ctx *)ctx)->opts->progress = strcmp(flag, "--progress") == 0;
    return CLI_SET_OK;
}

static cli_set_result run_server(void *ctx, const char *flag, const char *value, char *err,
                                 size_t err_size)
{
    run_ctx *c = ctx;
    client_session_options *session = &c->opts->session;

    (void)flag;
    if (!client_parse_endpoint(value, session->host, sizeof session->host, &session->port, err,
                               err_size))
        return CLI_SET_ERROR;
    c->have_server = true;
    return CLI_SET_OK;
}

/* --world and --name: a name of at most 31 characters. */
static cli_set_result run_name(void *ctx, const char *flag, const char *value, char *err,
                               size_t err_size)
{
    client_options *o = ((run_ctx *)ctx)->opts;
    char *dst = strcmp(flag, "--world") == 0 ? o->session.world : o->session.name;

    if (strlen(value) >= sizeof o->session.world) {
        snprintf(err, err_size, "bad value for %s: at most %zu characters", flag,
                 sizeof o->session.world - 1);
        return CLI_SET_ERROR;
    }
    snprintf(dst, sizeof o->session.world, "%s", value);
    return CLI_SET_OK;
}

static cli_set_result run_spawn(void *ctx, const char *flag, const char *value, char *err,
                                size_t err_size)
{
    client_options *o = ((run_ctx *)ctx)->opts;
    uint64_t n;

    (void)flag;
    if (!client_parse_uint(value, 0, 100000, &n)) {
        snprintf(err, err_size, "bad value '%s' for --spawn: expected an integer in "
                 "[0, 100000]", value);
        return CLI_SET_ERROR;
    }
    o->session.spawn = (uint32_t)n;
    o->spawn_set = true;
    return CLI_SET_OK;
}

static cli_set_result run_spawn_mix(void *ctx, const char *flag, const char *value, char *err,
                                    size_t err_size)
{
    char why[200];

    (void)flag;
    if (!client_spawn_mix_parse(value, &((run_ctx *)ctx)->opts->spawn_mix, why, sizeof why)) {
        snprintf(err, err_size, "bad value '%s' for --spawn-mix: %s", value, why);
        return CLI_SET_ERROR;
    }
    return CLI_SET_OK;
}

/* --hold and --timeout: seconds (a timeout is more than none). */
static cli_set_result run_seconds(void *ctx, const char *flag, const char *value, char *err,
                                  size_t err_size)
{
    client_options *o = ((run_ctx *)ctx)->opts;
    bool hold = strcmp(flag, "--hold") == 0;
    double *dst = hold ? &o->session.hold : &o->session.timeout;

    if (!client_parse_seconds(value, 86400, dst) || (!hold && *dst <= 0)) {
        snprintf(err, err_size, "bad value '%s' for %s: expected seconds in %s", value, flag,
                 hold ? "[0, 86400]" : "(0, 86400]");
        return CLI_SET_ERROR;
    }
    if (hold)
        o->hold_set = true;
    return CLI_SET_OK;
}

static cli_set_result run_disconnect(void *ctx, const char *flag, const char *value, char *err,
                                     size_t err_size)
{
    (void)flag;
    if (!client_disconnect_parse(value, &((run_ctx *)ctx)->opts->session.disconnect)) {
        snprintf(err, err_size, "bad value '%s' for --disconnect: expected graceful or abrupt "
                 "(or mixed, with --bots)", value);
        return CLI_SET_ERROR;
    }
    return CLI_SET_OK;
}

static cli_set_result run_bots(void *ctx, const char *flag, const char *value, char *err,
                               size_t err_size)
{
    uint64_t n;

    (void)flag;
    if (!client_parse_uint(value, 1, CLIENT_BOTS_MAX, &n)) {
        snprintf(err, err_size, "bad value '%s' for --bots: expected an integer in [1, %d]",
                 value, CLIENT_BOTS_MAX);
        return CLI_SET_ERROR;
    }
    ((run_ctx *)ctx)->opts->bots = (uint32_t)n;
    return CLI_SET_OK;
}

static cli_set_result run_duration(void *ctx, const char *flag, const char *value, char *err,
                                   size_t err_size)
{
    client_options *o = ((run_ctx *)ctx)->opts;

    (void)flag;
    if (!client_parse_seconds(value, CLIENT_DURATION_MAX, &o->duration) || o->duration <= 0) {
        snprintf(err, err_size, "bad value '%s' for --duration: expected seconds in (0, %g]",
                 value, CLIENT_DURATION_MAX);
        return CLI_SET_ERROR;
    }
    return CLI_SET_OK;
}

static cli_set_result run_checkpoint(void *ctx, const char *flag, const char *value,
                                     char *err, size_t err_size)
{
    client_options *o = ((run_ctx *)ctx)->opts;

    (void)flag;
    if (!client_parse_seconds(value, CLIENT_CHECKPOINT_MAX, &o->checkpoint_period)) {
        snprintf(err, err_size, "bad value '%s' for --checkpoint: expected seconds in [0, %g] "
                 "(0: only at the end)", value, CLIENT_CHECKPOINT_MAX);
        return CLI_SET_ERROR;
    }
    o->checkpoint_set = true;
    return CLI_SET_OK;
}

static cli_set_result run_out(void *ctx, const char *flag, const char *value, char *err,
                              size_t err_size)
{
    client_options *o = ((run_ctx *)ctx)->opts;

    (void)flag;
    if (value[0] == '\0' || strlen(value) >= sizeof o->out_dir) {
        snprintf(err, err_size, "bad value for --out: expected a directory path of 1 to %zu "
                 "characters", sizeof o->out_dir - 1);
        return CLI_SET_ERROR;
    }
    snprintf(o->out_dir, sizeof o->out_dir, "%s", value);
    return CLI_SET_OK;
}

/* --move-rate and --projectile-rate: a rate per second up to the server's limit. */
static cli_set_result run_rate(void *ctx, const char *flag, const char *value, char *err,
                               size_t err_size)
{
    client_options *o = ((run_ctx *)ctx)->opts;
    bool move = strcmp(flag, "--move-rate") == 0;
    double max = move ? CLIENT_MOVE_HZ_MAX : CLIENT_PROJECTILE_HZ_MAX;

    if (!client_parse_seconds(value, max, move ? &o->move_hz : &o->projectile_hz)) {
        snprintf(err, err_size, "bad value '%s' for %s: expected a rate per second in [0, %g]",
                 value, flag, max);
        return CLI_SET_ERROR;
    }
    if (move)
        o->move_hz_set = true;
    return CLI_SET_OK;
}

static cli_set_result run_move_pattern(void *ctx, const char *flag, const char *value,
                                       char *err, size_t err_size)
{
    client_options *o = ((run_ctx *)ctx)->opts;

    if (!client_move_pattern_parse(value, &o->move_pattern)) {
        snprintf(err, err_size, "bad value '%s' for %s: expected random or roam", value, flag);
        return CLI_SET_ERROR;
    }
    o->move_pattern_set = true;
    return CLI_SET_OK;
}

static cli_set_result run_scenario(void *ctx, const char *flag, const char *value, char *err,
                                   size_t err_size)
{
    client_options *o = ((run_ctx *)ctx)->opts;

    (void)flag;
    if (value[0] == '\0' || strlen(value) >= sizeof o->scenario_path) {
        snprintf(err, err_size, "bad value for --scenario: expected a file path");
        return CLI_SET_ERROR;
    }
    snprintf(o->scenario_path, sizeof o->scenario_path, "%s", value);
    return CLI_SET_OK;
}

static cli_set_result run_threshold(void *ctx, const char *flag, const char *value, char *err,
                                    size_t err_size)
{
    client_options *o = ((run_ctx *)ctx)->opts;

    (void)flag;
    if (o->n_thresholds >= CLIENT_THRESHOLDS_MAX) {
        snprintf(err, err_size, "too many --threshold options (at most %d)",
                 CLIENT_THRESHOLDS_MAX);
        return CLI_SET_ERROR;
    }
    if (!client_threshold_parse(value, &o->thresholds[o->n_thresholds], err, err_size))
        return CLI_SET_ERROR;
    o->n_thresholds++;
    return CLI_SET_OK;
}

static cli_set_result run_admin(void *ctx, const char *flag, const char *value, char *err,
                                size_t err_size)
{
    client_options *o = ((run_ctx *)ctx)->opts;

    (void)flag;
    if (strncmp(value, "http://", 7) != 0 || strlen(value) >= sizeof o->admin_url) {
        snprintf(err, err_size, "bad value '%s' for --admin: expected http://HOST:PORT[/metrics]",
                 value);
        return CLI_SET_ERROR;
    }
    snprintf(o->admin_url, sizeof o->admin_url, "%s", value);
    return CLI_SET_OK;
}

static cli_set_result run_shard(void *ctx, const char *flag, const char *value, char *err,
                                size_t err_size)
{
    client_options *o = ((run_ctx *)ctx)->opts;
    unsigned si, n;
    char tail;

    (void)flag;
    if (sscanf(value, "%u/%u%c", &si, &n, &tail) != 2 || n < 1 || n > CLIENT_BOTS_MAX ||
        si >= n || value[0] < '0' || value[0] > '9') {
        snprintf(err, err_size, "bad value '%s' for --shard: expected I/N with 0 <= I < N <= %d",
                 value, CLIENT_BOTS_MAX);
        return CLI_SET_ERROR;
    }
    o->shard = si;
    o->shards = n;
    return CLI_SET_OK;
}

static cli_set_result run_procs(void *ctx, const char *flag, const char *value, char *err,
                                size_t err_size)
{
    uint64_t n;

    (void)flag;
    if (!client_parse_uint(value, 1, CLIENT_PROCS_MAX, &n)) {
        snprintf(err, err_size, "bad value '%s' for --procs: expected an integer in [1, %d]",
                 value, CLIENT_PROCS_MAX);
        return CLI_SET_ERROR;
    }
    ((run_ctx *)ctx)->opts->procs = (uint32_t)n;
    return CLI_SET_OK;
}

static cli_set_result run_source_addresses(void *ctx, const char *flag, const char *value,
                                           char *err, size_t err_size)
{
    client_options *o = ((run_ctx *)ctx)->opts;

    if (!client_source_mode_parse(value, &o->source_addresses)) {
        snprintf(err, err_size, "bad value '%s' for %s: expected auto or one", value, flag);
        return CLI_SET_ERROR;
    }
    o->source_addresses_set = true;
    return CLI_SET_OK;
}

static cli_set_result run_impair(void *ctx, const char *flag, const char *value, char *err,
                                 size_t err_size)
{
    (void)flag;
    return client_impair_parse(value, &((run_ctx *)ctx)->opts->impair, err, err_size) ?
           CLI_SET_OK : CLI_SET_ERROR;
}

static cli_set_result run_seed(void *ctx, const char *flag, const char *value, char *err,
                               size_t err_size)
{
    client_options *o = ((run_ctx *)ctx)->opts;

    (void)flag;
    if (!client_parse_uint(value, 0, UINT64_MAX, &o->seed)) {
        snprintf(err, err_size, "bad value '%s' for --seed: expected a non-negative integer",
                 value);
        return CLI_SET_ERROR;
    }
    o->seed_set = true;
    return CLI_SET_OK;
}

static cli_set_result run_admin_token(void *ctx, const char *flag, const char *value, char *err,
                                      size_t err_size)
{
    client_options *o = ((run_ctx *)ctx)->opts;

    (void)flag;
    return client_admin_token_read(value, o->admin_token, sizeof o->admin_token, err,
                                   err_size) ? CLI_SET_OK : CLI_SET_ERROR;
}

static cli_set_result run_junit(void *ctx, const char *flag, const char *value, char *err,
                                size_t err_size)
{
    client_options *o = ((run_ctx *)ctx)->opts;

    (void)flag;
    if (value[0] == '\0' || strlen(value) >= sizeof o->junit_path) {
        snprintf(err, err_size, "bad value for --junit: expected a file path of 1 to %zu "
                 "characters", sizeof o->junit_path - 1);
        return CLI_SET_ERROR;
    }
    snprintf(o->junit_path, sizeof o->junit_path, "%s", value);
    return CLI_SET_OK;
}

/* The run's options, in --help's order; a tag names a flag only the churn takes. getopt_long(3)
 * does the splitting: --flag VALUE, --flag=VALUE, -h, -V. */
enum {
    OPT_SERVER = 256, OPT_WORLD, OPT_NAME, OPT_SPAWN, OPT_HOLD, OPT_DISCONNECT, OPT_TIMEOUT,
    OPT_QUIET, OPT_BOTS, OPT_DURATION, OPT_MOVE_RATE, OPT_MOVE_PATTERN, OPT_PROJECTILE_RATE,
    OPT_SCENARIO,
    OPT_THRESHOLD, OPT_ADMIN, OPT_ADMIN_TOKEN, OPT_LEAK_CHECK, OPT_SHARD, OPT_IMPAIR, OPT_PROCS,
    OPT_OUT, OPT_JUNIT, OPT_SEED, OPT_PROGRESS, OPT_NO_PROGRESS, OPT_SPAWN_MIX, OPT_CHECKPOINT,
    OPT_SOURCE_ADDRESSES,
};

static const cli_option run_options[] = {
    { "server", required_argument, OPT_SERVER, run_server, NULL },
    { "world", required_argument, OPT_WORLD, run_name, NULL },
    { "name", required_argument, OPT_NAME, run_name, NULL },
    { "spawn", required_argument, OPT_SPAWN, run_spawn, NULL },
    { "hold", required_argument, OPT_HOLD, run_seconds, NULL },
    { "spawn-mix", required_argument, OPT_SPAWN_MIX, run_spawn_mix, "--spawn-mix" },
    { "disconnect", required_argument, OPT_DISCONNECT, run_disconnect, NULL },
    { "timeout", required_argument, OPT_TIMEOUT, run_seconds, NULL },
    { "quiet", no_argument, OPT_QUIET, run_quiet, NULL },
    { "help", no_argument, 'h', run_help, NULL },
    { "version", no_argument, 'V', run_version, NULL },
    { "bots", required_argument, OPT_BOTS, run_bots, NULL },
    { "duration", required_argument, OPT_DURATION, run_duration, "--duration" },
    { "move-rate", required_argument, OPT_MOVE_RATE, run_rate, "--move-rate" },
    { "move-pattern", required_argument, OPT_MOVE_PATTERN, run_move_pattern, "--move-pattern" },
    { "projectile-rate", required_argument, OPT_PROJECTILE_RATE, run_rate,
      "--projectile-rate" },
    { "scenario", required_argument, OPT_SCENARIO, run_scenario, NULL },
    { "threshold", required_argument, OPT_THRESHOLD, run_threshold, "--threshold" },
    { "admin", required_argument, OPT_ADMIN, run_admin, "--admin" },
    { "admin-token", required_argument, OPT_ADMIN_TOKEN, run_admin_token, "--admin-token" },
    { "leak-check", no_argument, OPT_LEAK_CHECK, run_leak_check, "--leak-check" },
    { "shard", required_argument, OPT_SHARD, run_shard, "--shard" },
    { "impair", required_argument, OPT_IMPAIR, run_impair, "--impair" },
    { "procs", required_argument, OPT_PROCS, run_procs, "--procs" },
    { "source-addresses", required_argument, OPT_SOURCE_ADDRESSES, run_source_addresses,
      "--source-addresses" },
    { "out", required_argument, OPT_OUT, run_out, "--out" },
    { "junit", required_argument, OPT_JUNIT, run_junit, "--junit" },
    { "checkpoint", required_argument, OPT_CHECKPOINT, run_checkpoint, "--checkpoint" },
    { "seed", required_argument, OPT_SEED, run_seed, "--seed" },
    { "progress", no_argument, OPT_PROGRESS, run_progress, "--progress" },
    { "no-progress", no_argument, OPT_NO_PROGRESS, run_progress, "--progress" },
    { NULL, 0, 0, NULL, NULL },
};

static const cli_command run_command = { run_options, NULL, 0 };

client_options_result client_options_parse(client_options *opts, int argc, char **argv,
                                           char *err, size_t err_size)
{
    run_ctx ctx = { opts, false };
    const char *churn_flag = NULL; /* a churn-only flag seen, for the error without --bots */
    bool have_server;

    if (cli_parse(&run_command, argc, argv, &ctx, &churn_flag, err, err_size) ==
        CLIENT_GETOPT_ERROR)
        return CLIENT_OPTIONS_ERROR;
    have_server = ctx.have_server;
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
    if (opts->bots == 0 && churn_flag == NULL &&
        opts->session.disconnect == CLIENT_DISCONNECT_MIXED)
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
            opts->session.spawn = CLIENT_CHURN_SPAWN_DEFAULT;
        if (!opts->hold_set)
            opts->session.hold = CLIENT_CHURN_HOLD_DEFAULT;
        memset(st, 0, sizeof *st);
        snprintf(st->name, sizeof st->name, "churn");
        st->duration = opts->duration;
        st->bots_from = st->bots_to = opts->bots;
        st->spawn = opts->session.spawn;
        st->move_hz = opts->move_hz;
        st->move_pattern = opts->move_pattern;
        st->projectile_hz = opts->projectile_hz;
        st->hold = opts->session.hold;
        st->leave = opts->session.disconnect;
        st->impair = opts->impair;
        st->mix = opts->spawn_mix;
        opts->n_stages = 1;
    }
    return client_options_check_leaks(opts, err, err_size);
}
