/*
 * churn_run.c - the churn load generator's run: N bots in one thread, on one libuv loop, through
 * the stages of a scenario (or the one stage the command line describes).
 *
 * Each visit of a bot has its own ENet host (its own UDP socket and port, as a real player
 * has; a port rests CLIENT_PORT_REST_S before another visit may take it), watched by a poll
 * handle that services it when a datagram arrives. Every CHURN_TURN_MS a turn runs: the stage
 * sets how many bots take part (ramps are linear), every bot's timers are advanced
 * (churn_bot.c), the server's /metrics is sampled once a second when --admin is given
 * (churn_sampler.c), a timeline row is closed each second, and what the turn queued is
 * flushed. Four times a second one joined bot asks the server for its GC figures
 * (StatsReply, churn_stats.c). Every turn the watch (churn_watch.c) is told what the bots
 * heard: a server that stops answering is said at once, marked on the timeline and in the
 * model, and so is one that answers again. Each closed row, and every checkpoint period the
 * run so far, go to the caller's hooks. When the stages are over, the server's figures are
 * asked for one last time, every bot leaves, the optional leak verdict is taken
 * (churn_leaks.c), and the run model is handed back. The only addresses ever used are
 * --server and --admin.
 *
 * The run owns everything its parts share and lends it down: the loop, the meter the bots
 * record into, the stats and the timeline, the impaired network, the ports; nothing it lends
 * to calls back into it.
 */
#include "churn_run.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>

#include "churn_bot.h"
#include "churn_impair.h"
#include "churn_leaks.h"
#include "churn_sampler.h"
#include "churn_stats.h"
#include "churn_watch.h"
#include "client_clock.h"
#include "client_exit.h"

#define CHURN_TURN_MS 5                  /* the loop's turn: timers of every bot, rows, flushes */
#define CHURN_STATS_PERIOD 0.25          /* seconds between stats requests */
#define CHURN_FINAL_STATS_WAIT 1.0       /* at most, for the last stats reply */
#define CHURN_TRAVEL_ASK_TIMEOUT 5.0     /* a stage's servertravel, on the console */
#define CHURN_FIRST_MAP_TIMEOUT 2.0      /* `stat travel` at the start: the first match's map */

/* One run: its parts and the bookkeeping of its turns and rows. */
typedef struct churn {
    const client_options *opts;
    const client_console *con;
    uv_loop_t loop;           /* every bot's socket, the turn timer, the impairment's timer */
    uv_timer_t turn;
    bool loop_open, turn_open, impair_open;
    double t0;
    churn_meter meter;        /* what the bots measure */
    churn_stats stats;        /* the server's StatsReply figures */
    churn_timeline tl;
    client_ports ports;
    churn_impair impair;
    churn_bots bots;
    churn_admin *admin;       /* --admin, else NULL */
    churn_sampler sampler;
    double next_stats_at;
    double final_stats_deadline;
    uint64_t final_stats_after;
    bool fatal;               /* the run ends: no bot could ever join */
    churn_watch watch;        /* whether the server still answers */
    bool lost_in_row;         /* the server was held lost at some turn of this row's second */
    uint32_t travel_stages;   /* stages whose travel was asked for (or passed) so far */
    const churn_run_hooks *hooks; /* the caller's, or NULL */
    churn_report *partial;    /* owned: the model handed to the checkpoint hook */
    double next_checkpoint_at;
    time_t started;
    uint32_t rows_total;      /* ceil(duration) */
    double turn_at;           /* when the last turn ran (its lag is measured from it) */
    double row_cpu, row_wall; /* the generator's CPU time and the clock at the last row */
} churn;

static volatile sig_atomic_t churn_interrupted;

static void churn_sigint_cb(int sig)
{
    (void)sig;
    churn_interrupted = 1;
}

static double churn_now(const churn *c)
{
    return churn_since(c->t0);
}

/* ---- the timeline and what is printed -------------------------------------------------- */

static void churn_progress(churn *c, const churn_row *row, double now)
{
    const client_options *o = c->opts;
    const churn_totals *t = &c->meter.totals;
    const churn_bots *bs = &c->bots;
    char server[160] = "server: no stats yet";

    if (c->watch.lost)
        snprintf(server, sizeof server, "server: NOT ANSWERING since %.1f s", c->watch.lost_at);
    else if (row->have_admin && row->tick_p99 >= 0)
        snprintf(server, sizeof server, "server: %.0f objects, tick p99 %.1f ms",
                 row->admin_objects, row->tick_p99 * 1e3);
    else if (c->stats.have)
        snprintf(server, sizeof server, "server: %u objects, %llu collections",
                 c->stats.last.objects, (unsigned long long)c->stats.last.collections);
    if (c->con->progress_tty) {
        fprintf(c->con->out, "\r\033[K[%s %u/%u] %5.1f/%.0f s | bots %u/%u | joins %llu leaves "
                "%llu | errors %llu refused %llu | cpu %.0f%% | %s", o->stages[bs->stage].name,
                bs->stage + 1, o->n_stages, now, o->duration, row->connected, bs->target,
                (unsigned long long)t->joins, (unsigned long long)t->leaves,
                (unsigned long long)churn_totals_errors(t), (unsigned long long)t->refused,
                row->gen_cpu * 100, server);
        fflush(c->con->out);
        return;
    }
    uint32_t travelling = churn_bots_travelling(bs);
    char travel[48] = "";

    if (travelling > 0)
        snprintf(travel, sizeof travel, " | %u bots following a travel", travelling);
    client_say(c->con, "[%5.1fs] %s: %u/%u bots joined, %llu joins, %llu leaves, %llu props, "
               "%llu errors, %llu refused | generator cpu %.0f%%, loop lag %.0f ms | %s%s", now,
               o->stages[bs->stage].name, row->connected, bs->target,
               (unsigned long long)t->joins, (unsigned long long)t->leaves,
               (unsigned long long)t->spawned, (unsigned long long)churn_totals_errors(t),
               (unsigned long long)t->refused, row->gen_cpu * 100, row->loop_lag * 1e3, server,
               travel);
}

/* The generator's CPU share and loop lag over the second that ends now. */
static void churn_row_generator(churn *c, churn_row *row)
{
    churn_totals *t = &c->meter.totals;
    double cpu = churn_cpu_seconds(), wall = churn_clock();

    row->gen_cpu = -1;
    row->loop_lag = c->meter.second.lag_max;
    if (cpu >= 0 && c->row_cpu >= 0 && wall > c->row_wall) {
        row->gen_cpu = (cpu - c->row_cpu) / (wall - c->row_wall);
        t->gen_cpu_us += (uint64_t)((cpu - c->row_cpu) * 1e6 + 0.5);
        t->gen_seconds++;
        t->gen_saturated += churn_row_saturated(row);
    }
    c->row_cpu = cpu;
    c->row_wall = wall;
}

static void churn_report_fill(churn_report *r, churn *c, const client_options *o,
                              time_t started, double elapsed);

/* The run so far, to the checkpoint hook: at the start, then every checkpoint period. */
static void churn_checkpoint(churn *c, double now)
{
    const churn_run_hooks *h = c->hooks;

    if (h == NULL || h->checkpoint_cb == NULL || h->checkpoint_period <= 0 ||
        now < c->next_checkpoint_at)
        return;
    while (c->next_checkpoint_at <= now)
        c->next_checkpoint_at += h->checkpoint_period;
    if (c->partial == NULL && (c->partial = malloc(sizeof *c->partial)) == NULL)
        return;
    churn_sampler_finish(&c->sampler); /* the server's figures so far; finished again later */
    churn_report_fill(c->partial, c, c->opts, c->started, now);
    c->partial->partial = true;
    c->partial->tl = &c->tl;
    h->checkpoint_cb(h->ctx, c->partial);
}

static void churn_close_row(churn *c, double now)
{
    const churn_counts *second = &c->meter.second;
    const Reap__StatsReply *st = &c->stats.last;
    churn_row row;

    memset(&row, 0, sizeof row);
    row.t = now;
    row.connected = churn_bots_joined(&c->bots);
    row.target = c->bots.target;
    row.stage = c->bots.stage;
    row.joins = second->joins;
    row.leaves = second->leaves;
    row.leaves_abrupt = second->leaves_abrupt;
    row.spawned = second->spawned;
    row.errors = second->errors;
    row.refused = second->refused;
    row.server_lost = c->lost_in_row || c->watch.lost;
    churn_row_generator(c, &row);
    row.tick_p50 = row.tick_p99 = row.tick_max = row.gc_work_max = -1;
    row.gc_collections = row.admin_objects = row.rss_bytes = row.frames = -1;
    if (c->stats.have && !c->watch.lost) { /* a lost server's last figures are not this row's */
        row.have_server = true;
        row.server_objects = st->objects;
        row.server_players = st->players;
        row.collections = st->collections;
        row.objects_destroyed = st->objects_destroyed;
        row.gc_interval = st->interval_seconds;
        row.time_since_last_purge = st->time_since_last_purge_seconds;
        row.server_frame = st->frame;
    }
    churn_sampler_row(&c->sampler, &row);
    churn_timeline_add_row(&c->tl, &row);
    memset(&c->meter.second, 0, sizeof c->meter.second);
    c->lost_in_row = false;
    if (!c->opts->session.quiet)
        churn_progress(c, &row, now);
    if (c->hooks != NULL && c->hooks->row_cb != NULL)
        c->hooks->row_cb(c->hooks->ctx, &row);
}

/* ---- the run ------------------------------------------------------------------------------ */

/* Bots of this shard among `total`: the ones whose index is shard (mod shards). */
static uint32_t churn_shard_share(const client_options *o, uint32_t total)
{
    return total > o->shard ? (total - o->shard + o->shards - 1) / o->shards : 0;
}

/* The duration is over (or Ctrl-C): ask for the server's figures one last time, then send
 * everyone home. */
static void churn_begin_stop(churn *c, double now)
{
    c->bots.stopping = true;
    c->final_stats_after = c->stats.replies;
    c->final_stats_deadline = now + (c->opts->session.timeout < CHURN_FINAL_STATS_WAIT ?
                                     c->opts->session.timeout : CHURN_FINAL_STATS_WAIT);
    if (!churn_bots_request_stats(&c->bots))
        c->bots.leave_all = true;
}

/* What the bots heard, to the watch: a server that stops answering, or answers again, is
 * said at once and goes into the model. */
static void churn_watch_turn(churn *c, double now, double lag)
{
    churn_watch_event ev = churn_watch_step(&c->watch, now, c->bots.heard_at,
                                            churn_bots_listening_since(&c->bots),
                                            lag > c->watch.silence / 4,
                                            churn_bots_travelling(&c->bots) > 0);

    if (ev == CHURN_WATCH_LOST) {
        churn_meter_server_lost(&c->meter, c->watch.lost_at);
        client_say(c->con, "the server stopped answering at %.1f s: nothing from it for %.1f s "
                   "(%u bots were joined)", c->watch.lost_at, now - c->watch.lost_at,
                   churn_bots_joined(&c->bots));
    } else if (ev == CHURN_WATCH_BACK) {
        churn_meter_server_back(&c->meter, c->watch.back_at);
        churn_stats_server_back(&c->stats);
        client_say(c->con, "the server answers again at %.1f s, after %.1f s without it (a "
                   "restarted server starts a new world)", c->watch.back_at,
                   c->watch.back_at - c->watch.lost_at);
    }
    c->lost_in_row |= c->watch.lost;
}

/* A stage that begins with `travel = MAP [mode]` asks the server's console for it (shard 0
 * only: one run, one travel); the bots follow what the server then tells them. A refusal
 * (a travel already under way, an unknown map) is an error of the run, with its reason. */
static void churn_stage_travel(churn *c, double now)
{
    const client_options *o = c->opts;

    while (c->travel_stages <= c->bots.stage && c->travel_stages < o->n_stages) {
        const client_stage *st = &o->stages[c->travel_stages++];
        char cmd[96], err[400], *reply;

        if (st->travel_map[0] == '\0' || c->admin == NULL || o->shard != 0)
            continue;
        snprintf(cmd, sizeof cmd, "servertravel %s%s%s", st->travel_map,
                 st->travel_mode != CLIENT_TRAVEL_DEFAULT ? " " : "",
                 st->travel_mode != CLIENT_TRAVEL_DEFAULT ? client_travel_mode_name(st->travel_mode)
                                                          : "");
        reply = churn_admin_request(c->admin, "POST", "/console", cmd, CHURN_TRAVEL_ASK_TIMEOUT,
                                    err, sizeof err);
        if (reply == NULL) {
            churn_meter_error(&c->meter, CHURN_ERR_REFUSED, "stage %s: '%s' failed: %s", st->name,
                              cmd, err);
            client_say(c->con, "stage %s: the server did not travel: %s", st->name, err);
            continue;
        }
        if (!o->session.quiet)
            client_say(c->con, "[%5.1fs] stage %s: %s: %.*s", now, st->name, cmd,
                       (int)strcspn(reply, "\n"), reply);
        free(reply);
    }
}

/* The map the server is on, from its console's `stat travel` ("map NAME, ..."): the run's
 * first match. "" when unknown. */
static void churn_first_map(churn *c, char *map, size_t size)
{
    char err[300], *reply;

    map[0] = '\0';
    if (c->admin == NULL ||
        (reply = churn_admin_request(c->admin, "POST", "/console", "stat travel",
                                     CHURN_FIRST_MAP_TIMEOUT, err, sizeof err)) == NULL)
        return;
    if (strncmp(reply, "map ", 4) == 0)
        snprintf(map, size, "%.*s", (int)strcspn(reply + 4, ", \n"), reply + 4);
    free(reply);
}

/* One turn of the loop, every CHURN_TURN_MS: the stage, the bots' timers, /metrics, the
 * timeline's rows, then ENet's timers of the quiet hosts and what the turn queued. Datagrams
 * are not waited for here: each host's poll callback services it when its socket is readable. */
static void churn_turn(churn *c)
{
    churn_bots *bs = &c->bots;
    const churn_totals *t = &c->meter.totals;
    double now = churn_now(c);
    double lag = c->turn_at > 0 ? now - c->turn_at - CHURN_TURN_MS * 1e-3 : 0;

    /* A turn is due CHURN_TURN_MS after the last one: what it ran later than that is time the
     * loop spent elsewhere (servicing sockets, or waiting for a core). */
    if (lag < 0)
        lag = 0;
    churn_meter_latency(&c->meter, CHURN_LAT_LOOP_LAG, lag);
    if (lag > c->meter.second.lag_max)
        c->meter.second.lag_max = lag;
    c->turn_at = now;

    if (!bs->stopping && (now >= c->opts->duration || churn_interrupted))
        churn_begin_stop(c, now);
    if (bs->stopping && !bs->leave_all &&
        (c->stats.replies > c->final_stats_after || now >= c->final_stats_deadline))
        bs->leave_all = true;
    if (!bs->stopping) {
        bs->target = churn_shard_share(c->opts, client_stages_target(c->opts->stages,
                                                                     c->opts->n_stages, now,
                                                                     &bs->stage));
        if (now >= c->next_stats_at) {
            churn_bots_request_stats(bs);
            while (c->next_stats_at <= now)
                c->next_stats_at += CHURN_STATS_PERIOD;
        }
    }
    if (!bs->stopping)
        churn_stage_travel(c, now);
    churn_sampler_poll(&c->sampler, &c->tl, now);
    churn_bots_step(bs, now);
    churn_watch_turn(c, now, lag);
    if (t->joins == 0 && t->errors[CHURN_ERR_CONNECT] > 0 &&
        t->errors[CHURN_ERR_CONNECT] >= bs->n_bots)
        c->fatal = true; /* every bot tried once and nobody answered: the server is not there */
    /* Leaving takes a server: without one, the visits still open just end. */
    if (c->fatal || bs->fatal || (bs->leave_all && (churn_bots_done(bs) || c->watch.lost))) {
        uv_stop(&c->loop);
        return;
    }
    while (c->tl.n_rows + 1 < c->rows_total && now >= (double)(c->tl.n_rows + 1))
        churn_close_row(c, now);
    churn_checkpoint(c, now);
    churn_bots_flush(bs, now);
}

static void churn_turn_cb(uv_timer_t *timer)
{
    churn_turn(timer->data);
}

static int churn_loop(churn *c)
{
    uv_timer_start(&c->turn, churn_turn_cb, 0, CHURN_TURN_MS);
    uv_run(&c->loop, UV_RUN_DEFAULT);
    uv_timer_stop(&c->turn);
    return c->fatal || c->bots.fatal ? CLIENT_EXIT_FAILED : CLIENT_EXIT_OK;
}

/* Every visit has a socket of its own (two when impaired), and a closing one lingers a turn:
 * the soft limit on open files is raised towards the hard one when it is short. */
static void churn_raise_file_limit(churn *c, uint32_t n_bots)
{
    struct rlimit rl;
    rlim_t want = (rlim_t)n_bots * 3 + 2 * CLIENT_PORT_TRIES + 64;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want)
        return;
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < want)
        client_say(c->con, "note: at most %llu open files here (ulimit -n); %u bots may want "
                   "%llu", (unsigned long long)rl.rlim_cur, n_bots, (unsigned long long)want);
}

/* How long the server may be silent before it is held lost: an impaired network delays every
 * answer by up to its latency and jitter each way. */
static double churn_silence(const client_options *o)
{
    double worst = 0;

    for (uint32_t i = 0; i < o->n_stages; i++) {
        double d = o->stages[i].impair.latency + o->stages[i].impair.jitter;
        if (d > worst)
            worst = d;
    }
    return CHURN_WATCH_SILENCE + 2 * worst;
}

static bool churn_open(churn *c, const client_options *opts, const client_console *con)
{
    uint32_t n_bots = churn_shard_share(opts, opts->bots);
    ENetAddress server;
    char err[300];

    c->opts = opts;
    c->con = con;
    churn_watch_init(&c->watch, churn_silence(opts));
    c->rows_total = (uint32_t)opts->duration;
    if ((double)c->rows_total < opts->duration)
        c->rows_total++;
    c->next_stats_at = CHURN_STATS_PERIOD;
    churn_meter_init(&c->meter);
    churn_timeline_init(&c->tl);
    churn_stats_init(&c->stats, &c->tl);
    churn_sampler_init(&c->sampler, NULL);
    snprintf(c->tl.server, sizeof c->tl.server, "%s:%u", opts->session.host, opts->session.port);
    snprintf(c->tl.world, sizeof c->tl.world, "%s", opts->session.world);
    c->tl.bots = opts->bots;
    c->tl.duration = opts->duration;
    c->tl.spawn = opts->stages[0].spawn;
    c->tl.hold = opts->stages[0].hold;
    c->tl.disconnect = client_disconnect_name(opts->stages[0].leave);
    c->tl.seed = opts->seed;

    if (enet_address_set_host(&server, opts->session.host) != 0) {
        fprintf(stderr, "reap-client: cannot resolve host '%s'\n", opts->session.host);
        return false;
    }
    server.port = opts->session.port;
    if (opts->admin_url[0] != '\0' &&
        (c->admin = churn_admin_create(opts->admin_url, err, sizeof err)) == NULL) {
        fprintf(stderr, "reap-client: %s\n", err);
        return false;
    }
    if (c->admin != NULL)
        churn_admin_set_token(c->admin, opts->admin_token);
    c->sampler.admin = c->admin;
    if (!client_ports_init(&c->ports)) {
        fprintf(stderr, "reap-client: out of memory for %u bots\n", n_bots);
        return false;
    }
    if (uv_loop_init(&c->loop) != 0) {
        fprintf(stderr, "reap-client: cannot create an event loop\n");
        return false;
    }
    c->loop_open = true;
    c->loop.data = &c->bots;
    uv_timer_init(&c->loop, &c->turn);
    c->turn.data = c;
    c->turn_open = true;
    churn_raise_file_limit(c, n_bots);
    c->t0 = churn_clock();
    c->row_wall = c->t0;
    c->row_cpu = churn_cpu_seconds();
    churn_impair_open(&c->impair, &c->loop, server, c->t0, opts->seed_effective, &c->ports,
                      &c->meter.totals);
    c->impair_open = true;
    if (!churn_bots_open(&c->bots, opts, n_bots, con, &c->loop, server, c->t0, &c->meter,
                         &c->stats, &c->impair, &c->ports)) {
        fprintf(stderr, "reap-client: out of memory for %u bots\n", n_bots);
        return false;
    }
    /* The matches: the first is the map the server is on now; each travel begins another. */
    c->bots.tl = &c->tl;
    c->tl.match_seconds = opts->match_seconds;
    {
        char map[CHURN_MATCH_MAP_MAX];

        churn_first_map(c, map, sizeof map);
        churn_timeline_match(&c->tl, 0, map, 0, 0);
    }
    return true;
}

static void churn_close(churn *c)
{
    churn_bots_end_visits(&c->bots, churn_now(c));
    if (c->impair_open)
        churn_impair_close(&c->impair);
    if (c->turn_open)
        uv_close((uv_handle_t *)&c->turn, NULL);
    if (c->loop_open) {
        uv_run(&c->loop, UV_RUN_DEFAULT); /* the close callbacks */
        uv_loop_close(&c->loop);
    }
    client_ports_free(&c->ports);
    churn_bots_free(&c->bots);
    churn_admin_destroy(c->admin);
    churn_sampler_free(&c->sampler);
    churn_timeline_free(&c->tl);
    free(c->partial);
}

static void churn_summary(churn *c, double elapsed)
{
    const client_options *o = c->opts;
    const churn_totals *t = &c->meter.totals;
    const client_console *con = c->con;
    char errs[512] = "";
    size_t len = 0;
    uint64_t errors = churn_totals_errors(t);
    bool mix = false;

    for (uint32_t i = 0; i < o->n_stages; i++)
        mix |= o->stages[i].mix.n > 0;
    client_say(con, "churn %s in %.1f s: %u bots, %llu joins, %llu leaves (%llu abrupt), %llu "
               "%s spawned, %llu moves, %llu replication checks, %llu errors, %llu refused "
               "(seed %llu)", churn_interrupted ? "stopped by Ctrl-C" : "done", elapsed,
               c->bots.n_bots, (unsigned long long)t->joins, (unsigned long long)t->leaves,
               (unsigned long long)t->leaves_abrupt, (unsigned long long)t->spawned,
               mix ? "actors" : "props",
               (unsigned long long)t->moves, (unsigned long long)t->checks,
               (unsigned long long)errors, (unsigned long long)t->refused,
               (unsigned long long)o->seed);
    if (t->refused > t->refused_busy)
        client_say(con, "refused: %llu times the server answered \"server full\" (working as "
                   "designed; the bot tried again later)",
                   (unsigned long long)(t->refused - t->refused_busy));
    if (t->refused_busy > 0)
        client_say(con, "refused: %llu times the server answered \"busy, retry after\" "
                   "(admission control, working as designed; the bot came back when it said)",
                   (unsigned long long)t->refused_busy);
    for (int k = 0; k < CHURN_ERR_COUNT; k++)
        if (t->errors[k] > 0 && len < sizeof errs)
            len += (size_t)snprintf(errs + len, sizeof errs - len, "%s%llu %s",
                                    len ? ", " : "", (unsigned long long)t->errors[k],
                                    churn_error_names[k]);
    if (errors > 0)
        client_say(con, "errors: %s; first: %s", errs, c->meter.first_error);
    if (t->unknown_destroys > 0)
        client_say(con, "%llu ActorDestroy messages named a net id the bot did not hold",
                   (unsigned long long)t->unknown_destroys);
    if (c->meter.first_mismatch[0] != '\0')
        client_say(con, "first replication mismatch: %s", c->meter.first_mismatch);
    if (c->meter.undecodable > 0)
        client_say(con, "%llu messages from the server could not be decoded (dropped)",
                   (unsigned long long)c->meter.undecodable);
    uint32_t first, last, peak, collections;
    if (c->stats.have && churn_timeline_objects(&c->tl, &first, &last, &peak, &collections))
        client_say(con, "server: %u -> %u objects (peak %u), %u collections during the run, "
                   "%llu objects destroyed, gc interval %g s", first, last, peak, collections,
                   (unsigned long long)(c->stats.last.objects_destroyed -
                                        c->stats.first.objects_destroyed),
                   c->stats.last.interval_seconds);
    else
        client_say(con, "server: no stats reply arrived");
}

/* The run model: what was measured, and what the run was asked for. */
static void churn_report_fill(churn_report *r, churn *c, const client_options *o,
                              time_t started, double elapsed)
{
    struct utsname un;
    struct tm tm;

    memset(r, 0, sizeof *r);
    r->schema = CHURN_REPORT_SCHEMA;
    gmtime_r(&started, &tm);
    strftime(r->start_time, sizeof r->start_time, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(r->run_id, sizeof r->run_id, "%s-%016llx", r->start_time,
             (unsigned long long)o->seed);
    if (uname(&un) == 0)
        snprintf(r->host, sizeof r->host, "%s", un.nodename);
    snprintf(r->scenario, sizeof r->scenario, "%s",
             o->scenario_name[0] ? o->scenario_name : "command line");
    snprintf(r->server, sizeof r->server, "%s:%u", o->session.host, o->session.port);
    churn_describe_impairment(o->stages, o->n_stages, r->impairment, sizeof r->impairment);
    snprintf(r->source_addresses, sizeof r->source_addresses, "%s",
             churn_bots_sources(&c->bots));
    snprintf(r->source_option, sizeof r->source_option, "%s",
             client_source_mode_name(o->source_addresses));
    r->seed = o->seed;
    r->shard = o->shard;
    r->shards = 1;
    r->bots = c->bots.n_bots;
    r->duration = o->duration;
    r->elapsed = elapsed;
    r->totals = c->meter.totals;
    r->outages = c->meter.outages;
    r->server_figs = c->sampler.server;
    {
        uint32_t first, last, peak, collections;

        /* one source for these figures in every output: the stats replies' timeline */
        if (churn_timeline_objects(&c->tl, &first, &last, &peak, &collections)) {
            r->server_figs.objects_first = first;
            r->server_figs.objects_last = last;
            r->server_figs.objects_peak = peak;
            r->server_figs.collections = collections;
        }
    }
    r->stages = o->stages;
    r->n_stages = o->n_stages;
    r->admin = o->admin_url[0] != '\0';
    memcpy(r->thresholds, o->thresholds, sizeof r->thresholds);
    r->n_thresholds = o->n_thresholds;
}

/* Whether the run's leak verdict is asked for (--leak-check, or a 'leaked' threshold). */
static bool churn_wants_leaks(const client_options *o)
{
    for (uint32_t i = 0; i < o->n_thresholds; i++)
        if (strcmp(o->thresholds[i].metric, "leaked") == 0)
            return true;
    return o->leak_check;
}

/* Why a run that went to its end had no join at all. */
static void churn_say_no_join(const churn *c)
{
    const churn_totals *t = &c->meter.totals;
    const client_options *o = c->opts;

    if (t->refused > 0)
        fprintf(stderr, "reap-client: no bot could join %s:%u in %.1f s: the server refused "
                "every visit (%llu times busy, %llu times full)\n", o->session.host,
                o->session.port, churn_now(c), (unsigned long long)t->refused_busy,
                (unsigned long long)(t->refused - t->refused_busy));
    else
        fprintf(stderr, "reap-client: no bot could join %s:%u in %.1f s: %s\n", o->session.host,
                o->session.port, churn_now(c), c->meter.first_error[0] ? c->meter.first_error :
                "is reap-server running there?");
}

void churn_result_free(churn_result *r)
{
    if (r == NULL)
        return;
    free(r->report.leaks.detail);
    churn_timeline_free(&r->tl);
    free(r);
}

/* The run is over, completed: the last row, the server's figures, the model, the verdict. */
static churn_result *churn_finish(churn *c, churn_result *res, time_t started,
                                  const char *mark, long leak_baseline)
{
    const client_options *o = &res->opts;
    double elapsed = churn_now(c);

    churn_close_row(c, elapsed); /* the last row includes the leaving */
    if (c->con->progress_tty)
        fputs("\n", c->con->out);
    churn_sampler_finish(&c->sampler);
    churn_report_fill(&res->report, c, o, started, elapsed);
    res->report.interrupted = churn_interrupted != 0;
    if (mark[0] != '\0')
        churn_leaks_verdict(c->admin, o->session.quiet ? NULL : c->con, mark, leak_baseline,
                            &res->report.leaks);
    churn_summary(c, elapsed);
    /* The timeline is the result's from now on. */
    res->tl = c->tl;
    churn_timeline_init(&c->tl);
    res->report.tl = &res->tl;
    return res;
}

churn_result *churn_run(const client_options *opts, const client_console *con,
                        const churn_run_hooks *hooks, int *out_rc)
{
    churn_result *res = calloc(1, sizeof *res);
    client_options *o;
    struct sigaction sa, old_sa, old_term;
    churn *c;
    int rc;
    char err[600];
    char mark[64] = "";
    long leak_baseline = -1;
    time_t started = time(NULL);

    c = calloc(1, sizeof *c);
    if (res == NULL || c == NULL || enet_initialize() != 0) {
        fprintf(stderr, "reap-client: cannot initialise ENet\n");
        free(c);
        free(res);
        *out_rc = CLIENT_EXIT_FAILED;
        return NULL;
    }
    res->opts = *opts;
    o = &res->opts;
    if (!o->seed_set)
        o->seed = churn_seed_from_clock();
    /* Shards of one run share the seed; each draws its own stream from it. */
    o->seed_effective = o->seed + (uint64_t)o->shard * 0x9E3779B97F4A7C15ull;
    c->hooks = hooks;
    c->started = started;
    if (!churn_open(c, o, con)) {
        rc = CLIENT_EXIT_FAILED;
        goto failed;
    }
    if (!o->session.quiet)
        client_say(con, "churning %u bots%s against %s:%u%s%s for %g s in %u stage%s (%s): "
                   "the first spawns %u props per visit, moves %g times a second, holds "
                   "%.2g-%.2g s, leaves %s (seed %llu)", c->bots.n_bots,
                   o->shards > 1 ? " (this shard)" : "", o->session.host, o->session.port,
                   o->session.world[0] ? " in " : "", o->session.world, o->duration, o->n_stages,
                   o->n_stages == 1 ? "" : "s",
                   o->scenario_name[0] ? o->scenario_name : "command line", o->stages[0].spawn,
                   o->stages[0].move_hz, o->stages[0].hold * 0.5, o->stages[0].hold * 1.5,
                   client_disconnect_name(o->stages[0].leave), (unsigned long long)o->seed);
    if (!o->session.quiet && c->bots.own_sources && c->bots.n_bots > 0) {
        ENetAddress first = { .host = client_ports_own_address(o->shard) };
        ENetAddress last = { .host = client_ports_own_address((c->bots.n_bots - 1) * o->shards +
                                                              o->shard) };
        char a[32] = "?", b[32] = "?";

        enet_address_get_host_ip(&first, a, sizeof a);
        enet_address_get_host_ip(&last, b, sizeof b);
        client_say(con, "each bot sends from its own loopback address, %s to %s, as each "
                   "player has its own (--source-addresses one: all from one)", a, b);
    }
    if (!o->session.quiet) {
        char impair[300];
        churn_describe_impairment(o->stages, o->n_stages, impair, sizeof impair);
        if (strcmp(impair, "none") != 0)
            client_say(con, "network impairment, applied in this process to each bot's "
                       "datagrams both ways: %s", impair);
    }
    if (churn_wants_leaks(o) && (o->shards == 1 || o->shard == 0) &&
        !churn_leaks_mark(c->admin, mark, sizeof mark, &leak_baseline, err, sizeof err)) {
        fprintf(stderr, "reap-client: the leak check cannot run: %s\n", err);
        rc = CLIENT_EXIT_FAILED;
        goto failed;
    }

    /* Ctrl-C ends the run early but cleanly: bots leave and the report is written. */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = churn_sigint_cb;
    sa.sa_flags = SA_RESETHAND; /* a second Ctrl-C kills */
    sigemptyset(&sa.sa_mask);
    churn_interrupted = 0;
    sigaction(SIGINT, &sa, &old_sa);
    sigaction(SIGTERM, &sa, &old_term);
    rc = churn_loop(c);
    sigaction(SIGINT, &old_sa, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (rc != CLIENT_EXIT_OK) {
        if (con->progress_tty)
            fputs("\n", con->out);
        fprintf(stderr, "reap-client: churn failed after %.1f s: %s\n", churn_now(c),
                c->meter.first_error[0] ? c->meter.first_error : "unknown error");
        goto failed;
    }
    churn_finish(c, res, started, mark, leak_baseline);
    /* The run went to its end and its model is kept; whether it failed is said here. */
    rc = CLIENT_EXIT_OK;
    if (c->meter.totals.joins == 0 && c->bots.n_bots > 0) {
        churn_say_no_join(c);
        rc = CLIENT_EXIT_FAILED;
    }
    if (c->meter.outages.n > 0)
        rc = CLIENT_EXIT_FAILED;
    churn_close(c);
    enet_deinitialize();
    free(c);
    *out_rc = rc;
    return res;
failed:
    churn_close(c);
    enet_deinitialize();
    free(c);
    free(res);
    *out_rc = rc;
    return NULL;
}
