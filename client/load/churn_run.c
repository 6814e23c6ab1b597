/*
 * churn_run.c - the churn load generator's run: N bots in one thread, on one libuv loop, through
 * the stages of a scenario (or the one stage the command line describes).
 *
 * Each visit of a bot has its own ENet host (its own UDP socket and port, as a real player
 * has; a port rests CHURN_PORT_REST_S before another visit may take it), watched by a poll
 * handle that services it when a datagram arrives. Every CHURN_TURN_MS a turn runs: the stage
 * sets how many bots take part (ramps are linear), every bot's timers are advanced
 * (churn_bot.c), the server's /metrics is sampled once a second when --admin is given, a
 * timeline row is closed each second, and what the turn queued is flushed. Four times a second
 * one joined bot asks the server for its GC figures (StatsReply). When the stages are over,
 * the server's figures are asked for one last time, every bot leaves, the optional leak
 * verdict is taken, and the report is written; the thresholds decide the exit status. The only
 * addresses ever used are --server and --admin.
 */
#include "churn_internal.h"

#include "client_clock.h"
#include "client_exit.h"
#include "report.h"

#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#define CHURN_STATS_PERIOD 0.25          /* seconds between stats requests */
#define CHURN_STAGGER 1.0                /* first visits start spread over this long */
#define CHURN_FINAL_STATS_WAIT 1.0       /* at most, for the last stats reply */

static volatile sig_atomic_t churn_interrupted;

static void churn_sigint_cb(int sig)
{
    (void)sig;
    churn_interrupted = 1;
}

double churn_now(const churn *c)
{
    return churn_clock() - c->t0;
}

/* splitmix64: a uniform double in [0, 1). */
double churn_random(churn *c)
{
    uint64_t z = (c->rng += 0x9E3779B97F4A7C15ull);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

void churn_say(churn *c, const char *fmt, ...)
{
    va_list ap;

    if (c->progress_tty)
        fputs("\r\033[K", c->out); /* over the progress line; the next one redraws it */
    fputs("reap-client: ", c->out);
    va_start(ap, fmt);
    vfprintf(c->out, fmt, ap);
    va_end(ap);
    fputc('\n', c->out);
    fflush(c->out);
}

void churn_count_error(churn *c, churn_error kind, const char *fmt, ...)
{
    va_list ap;

    c->totals->errors[kind]++;
    c->second.errors++;
    if (c->first_error[0] != '\0')
        return;
    va_start(ap, fmt);
    vsnprintf(c->first_error, sizeof c->first_error, fmt, ap);
    va_end(ap);
}

/* ---- the server's figures (StatsReply) ----------------------------------------------- */

/* The collections that happened since the previous reply go on the timeline: the newest at
 * (now - time since the last purge), earlier ones spread evenly back to the previous reply. */
void churn_on_stats(churn *c, const Reap__StatsReply *r, double now)
{
    if (c->have_stats && r->frame < c->stats.frame)
        return; /* an older answer overtaken by a newer one */
    if (!c->have_stats) {
        c->first_stats = *r;
    } else if (r->collections > c->stats.collections) {
        uint64_t d = r->collections - c->stats.collections;
        double latest = now - r->time_since_last_purge_seconds;

        if (latest < c->stats_at)
            latest = c->stats_at;
        if (latest > now)
            latest = now;
        for (uint64_t k = 1; k <= d && k <= 1000; k++)
            churn_timeline_add_gc(&c->tl, c->stats_at + (latest - c->stats_at) * (double)k /
                                          (double)d);
        c->gc_collections += d;
    }
    churn_timeline_add_sample(&c->tl, now, r->objects);
    c->stats = *r; /* scalars only: nothing in it points into the arena */
    c->have_stats = true;
    c->stats_at = now;
    c->stats_replies++;
    if (r->objects > c->peak_objects)
        c->peak_objects = r->objects;
}

bool churn_request_stats(churn *c)
{
    for (uint32_t n = 0; n < c->n_bots; n++) {
        churn_bot *b = &c->bots[(c->next_stats_bot + n) % c->n_bots];
        Reap__Envelope env = REAP__ENVELOPE__INIT;
        Reap__StatsRequest req = REAP__STATS_REQUEST__INIT;

        if (!b->joined || b->peer == NULL ||
            (b->state != CHURN_BOT_SPAWNING && b->state != CHURN_BOT_HOLDING))
            continue;
        env.body_case = REAP__ENVELOPE__BODY_STATS_REQUEST;
        env.stats_request = &req;
        env.seq = ++c->seq;
        c->seq_kind[env.seq & (CHURN_SEQ_KINDS - 1)] = CHURN_SEQ_OTHER;
        if (client_net_send(b->peer, c->out_buf, sizeof c->out_buf, MSG_CHANNEL_CONTROL, &env)) {
            c->next_stats_bot = (b->index + 1) % c->n_bots;
            return true;
        }
    }
    return false;
}

/* ---- the server's figures (/metrics) --------------------------------------------------- */

static double churn_nan_to(double v, double dflt)
{
    return isnan(v) ? dflt : v;
}

static double churn_delta(const churn_scrape *a, const churn_scrape *b, const char *name)
{
    double d = churn_scrape_sum(b, name) - churn_scrape_sum(a, name);

    return isnan(d) ? -1 : d;
}

/* The longest frame between two scrapes: exact when the server's running maximum
 * (reap_tick_max_seconds) rose in between, else the upper bound of the highest tick bucket
 * that gained a frame (no more than the running maximum). -1 when unknown. */
static double churn_tick_max(const churn_scrape *a, const churn_scrape *b)
{
    double bound = churn_scrape_quantile(a, b, "reap_tick_seconds", NULL, 100);
    double before = churn_scrape_sum(a, "reap_tick_max_seconds");
    double after = churn_scrape_sum(b, "reap_tick_max_seconds");

    if (!isnan(after) && !isnan(before) && after > before)
        return after;
    if (!isnan(after) && !isnan(bound) && after < bound)
        return after;
    return churn_nan_to(bound, -1);
}

/* Interpolated percentiles can overshoot the exact maximum inside its bucket. */
static void churn_clamp_to_max(double *p50, double *p99, double max)
{
    if (max < 0)
        return;
    if (*p50 > max)
        *p50 = max;
    if (*p99 > max)
        *p99 = max;
}

/* A scrape arrived: fold it into the run's figures and remember it for the row. */
static void churn_on_scrape(churn *c, churn_scrape *fresh)
{
    churn_server *s = &c->server;
    double objects = churn_scrape_sum(fresh, "reap_gc_objects");
    double rss = churn_scrape_sum(fresh, "process_resident_memory_bytes");
    const char *class_keys[128];
    double class_values[128];
    uint32_t n_classes = 0;

    /* A world profile's classes (reap_world_objects_by_class): the report's chart by class. */
    for (uint32_t i = 0; i < fresh->n && n_classes < 128; i++) {
        if (strncmp(fresh->metrics[i].key, "reap_world_objects_by_class{", 28) != 0)
            continue;
        class_keys[n_classes] = fresh->metrics[i].key;
        class_values[n_classes++] = fresh->metrics[i].value;
    }
    if (n_classes > 0)
        churn_timeline_add_classes(&c->tl, fresh->t, class_keys, class_values, n_classes);
    s->scrapes++;
    c->players_sum += churn_nan_to(churn_scrape_sum(fresh, "reap_players_connected"), 0);
    if (!isnan(objects)) {
        if (s->scrapes == 1)
            s->objects_first = objects;
        s->objects_last = objects;
        if (objects > s->objects_peak)
            s->objects_peak = objects;
    }
    if (!isnan(rss) && rss > s->rss_peak)
        s->rss_peak = rss;
    if (!c->have_first_scrape) {
        c->first_scrape = *fresh;
        c->have_first_scrape = true;
        memset(fresh, 0, sizeof *fresh);
        return;
    }
    churn_scrape_free(&c->last_scrape);
    c->last_scrape = *fresh;
    memset(fresh, 0, sizeof *fresh);
}

/* The run's server figures: the deltas between the first and the last scrape. */
static void churn_server_finish(churn *c)
{
    churn_server *s = &c->server;
    const churn_scrape *a = &c->first_scrape, *b = &c->last_scrape;
    double frames;

    if (!c->have_first_scrape || b->n == 0)
        return;
    s->have = true;
    s->seconds = b->t - a->t;
    frames = churn_delta(a, b, "reap_frames_total");
    s->frames = frames >= 0 ? frames : churn_delta(a, b, "reap_frame");
    s->tick_p50 = churn_nan_to(churn_scrape_quantile(a, b, "reap_tick_seconds", NULL, 50), -1);
    s->tick_p99 = churn_nan_to(churn_scrape_quantile(a, b, "reap_tick_seconds", NULL, 99), -1);
    s->tick_max = churn_tick_max(a, b);
    churn_clamp_to_max(&s->tick_p50, &s->tick_p99, s->tick_max);
    for (int i = 0; i < CHURN_PHASE_COUNT; i++) {
        char label[32];
        snprintf(label, sizeof label, "phase=\"%s\"", churn_phase_names[i]);
        s->phase_p99[i] = churn_nan_to(
            churn_scrape_quantile(a, b, "reap_frame_phase_seconds", label, 99), -1);
    }
    s->collections = churn_delta(a, b, "reap_gc_collections_total");
    s->gc_work_p99 = churn_nan_to(
        churn_scrape_quantile(a, b, "reap_gc_frame_work_seconds", NULL, 99), -1);
    s->gc_work_max = churn_nan_to(
        churn_scrape_quantile(a, b, "reap_gc_frame_work_seconds", NULL, 100), -1);
    s->gc_work_sum = churn_delta(a, b, "reap_gc_frame_work_seconds_sum");
    s->bytes_sent = churn_delta(a, b, "reap_net_bytes_sent_total");
    s->cpu_seconds = churn_delta(a, b, "process_cpu_seconds_total");
    s->players_mean = s->scrapes ? c->players_sum / s->scrapes : 0;
}

/* ---- the timeline and what is printed -------------------------------------------------- */

static uint32_t churn_joined(const churn *c)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < c->n_bots; i++)
        n += c->bots[i].joined;
    return n;
}

/* The /metrics figures of the second that ends now: between the row's first scrape and the
 * newest. */
static void churn_row_admin(churn *c, churn_row *row)
{
    const churn_scrape *a = c->have_row_scrape ? &c->row_scrape : &c->first_scrape;
    const churn_scrape *b = &c->last_scrape;

    if (!c->have_first_scrape || b->n == 0 || b->t <= a->t)
        return;
    row->have_admin = true;
    row->tick_p50 = churn_nan_to(churn_scrape_quantile(a, b, "reap_tick_seconds", NULL, 50), -1);
    row->tick_p99 = churn_nan_to(churn_scrape_quantile(a, b, "reap_tick_seconds", NULL, 99), -1);
    row->tick_max = churn_tick_max(a, b);
    churn_clamp_to_max(&row->tick_p50, &row->tick_p99, row->tick_max);
    row->gc_collections = churn_delta(a, b, "reap_gc_collections_total");
    row->gc_work_max = churn_nan_to(
        churn_scrape_quantile(a, b, "reap_gc_frame_work_seconds", NULL, 100), -1);
    row->admin_objects = churn_nan_to(churn_scrape_sum(b, "reap_gc_objects"), -1);
    row->rss_bytes = churn_nan_to(churn_scrape_sum(b, "process_resident_memory_bytes"), -1);
    row->frames = churn_delta(a, b, "reap_frame");
    /* The next row starts from this scrape: keep a copy of its histogram lines. */
    churn_scrape_free(&c->row_scrape);
    c->have_row_scrape = churn_scrape_copy(&c->row_scrape, b);
}

static void churn_progress(churn *c, const churn_row *row, double now)
{
    const client_options *o = c->opts;
    char server[160] = "server: no stats yet";

    if (row->have_admin && row->tick_p99 >= 0)
        snprintf(server, sizeof server, "server: %.0f objects, tick p99 %.1f ms",
                 row->admin_objects, row->tick_p99 * 1e3);
    else if (c->have_stats)
        snprintf(server, sizeof server, "server: %u objects, %llu collections",
                 c->stats.objects, (unsigned long long)c->stats.collections);
    if (c->progress_tty) {
        fprintf(c->out, "\r\033[K[%s %u/%u] %5.1f/%.0f s | bots %u/%u | joins %llu leaves %llu "
                "| errors %llu refused %llu | cpu %.0f%% | %s", o->stages[c->stage].name,
                c->stage + 1, o->n_stages, now, o->duration, row->connected, c->target,
                (unsigned long long)c->totals->joins, (unsigned long long)c->totals->leaves,
                (unsigned long long)churn_totals_errors(c->totals),
                (unsigned long long)c->totals->refused, row->gen_cpu * 100, server);
        fflush(c->out);
        return;
    }
    churn_say(c, "[%5.1fs] %s: %u/%u bots joined, %llu joins, %llu leaves, %llu props, %llu "
              "errors, %llu refused | generator cpu %.0f%%, loop lag %.0f ms | %s", now,
              o->stages[c->stage].name, row->connected, c->target,
              (unsigned long long)c->totals->joins, (unsigned long long)c->totals->leaves,
              (unsigned long long)c->totals->spawned,
              (unsigned long long)churn_totals_errors(c->totals),
              (unsigned long long)c->totals->refused, row->gen_cpu * 100, row->loop_lag * 1e3,
              server);
}

/* The generator's CPU share and loop lag over the second that ends now. */
static void churn_row_generator(churn *c, churn_row *row, double now)
{
    double cpu = churn_cpu_seconds(), wall = churn_clock();

    row->gen_cpu = -1;
    row->loop_lag = c->second.lag_max;
    if (cpu >= 0 && c->row_cpu >= 0 && wall > c->row_wall) {
        row->gen_cpu = (cpu - c->row_cpu) / (wall - c->row_wall);
        c->totals->gen_cpu_us += (uint64_t)((cpu - c->row_cpu) * 1e6 + 0.5);
        c->totals->gen_seconds++;
        c->totals->gen_saturated += churn_row_saturated(row);
    }
    c->row_cpu = cpu;
    c->row_wall = wall;
    (void)now;
}

static void churn_close_row(churn *c, double now)
{
    churn_row row;

    memset(&row, 0, sizeof row);
    row.t = now;
    row.connected = churn_joined(c);
    row.target = c->target;
    row.stage = c->stage;
    row.joins = c->second.joins;
    row.leaves = c->second.leaves;
    row.leaves_abrupt = c->second.leaves_abrupt;
    row.spawned = c->second.spawned;
    row.errors = c->second.errors;
    row.refused = c->second.refused;
    churn_row_generator(c, &row, now);
    row.tick_p50 = row.tick_p99 = row.tick_max = row.gc_work_max = -1;
    row.gc_collections = row.admin_objects = row.rss_bytes = row.frames = -1;
    if (c->have_stats) {
        row.have_server = true;
        row.server_objects = c->stats.objects;
        row.server_players = c->stats.players;
        row.collections = c->stats.collections;
        row.objects_destroyed = c->stats.objects_destroyed;
        row.gc_interval = c->stats.interval_seconds;
        row.time_since_last_purge = c->stats.time_since_last_purge_seconds;
        row.server_frame = c->stats.frame;
    }
    churn_row_admin(c, &row);
    churn_timeline_add_row(&c->tl, &row);
    memset(&c->second, 0, sizeof c->second);
    if (!c->opts->quiet)
        churn_progress(c, &row, now);
}

/* ---- the run ------------------------------------------------------------------------------ */

/* Bots of this shard among `total`: the ones whose index is shard (mod shards). */
static uint32_t churn_shard_share(const client_options *o, uint32_t total)
{
    return total > o->shard ? (total - o->shard + o->shards - 1) / o->shards : 0;
}

static bool churn_all_done(const churn *c)
{
    for (uint32_t i = 0; i < c->n_bots; i++)
        if (c->bots[i].state != CHURN_BOT_DONE)
            return false;
    return true;
}

/* The duration is over (or Ctrl-C): ask for the server's figures one last time, then send
 * everyone home. */
static void churn_begin_stop(churn *c, double now)
{
    c->stopping = true;
    c->final_stats_after = c->stats_replies;
    c->final_stats_deadline = now + (c->opts->timeout < CHURN_FINAL_STATS_WAIT ?
                                     c->opts->timeout : CHURN_FINAL_STATS_WAIT);
    if (!churn_request_stats(c))
        c->leave_all = true;
}

/* One turn of the loop, every CHURN_TURN_MS: the stage, the bots' timers, /metrics, the
 * timeline's rows, then ENet's timers of the quiet hosts and what the turn queued. Datagrams
 * are not waited for here: each host's poll callback services it when its socket is readable. */
static void churn_turn(churn *c)
{
    double now = churn_now(c);
    double lag = c->turn_at > 0 ? now - c->turn_at - CHURN_TURN_MS * 1e-3 : 0;

    /* A turn is due CHURN_TURN_MS after the last one: what it ran later than that is time the
     * loop spent elsewhere (servicing sockets, or waiting for a core). */
    if (lag < 0)
        lag = 0;
    hist_record(&c->totals->lat[CHURN_LAT_LOOP_LAG], (uint64_t)(lag * 1e6 + 0.5));
    if (lag > c->second.lag_max)
        c->second.lag_max = lag;
    c->turn_at = now;

    if (!c->stopping && (now >= c->opts->duration || churn_interrupted))
        churn_begin_stop(c, now);
    if (c->stopping && !c->leave_all &&
        (c->stats_replies > c->final_stats_after || now >= c->final_stats_deadline))
        c->leave_all = true;
    if (!c->stopping) {
        c->target = churn_shard_share(c->opts, client_stages_target(c->opts->stages,
                                                                    c->opts->n_stages, now,
                                                                    &c->stage));
        if (now >= c->next_stats_at) {
            churn_request_stats(c);
            while (c->next_stats_at <= now)
                c->next_stats_at += CHURN_STATS_PERIOD;
        }
    }
    if (c->admin != NULL && churn_admin_poll(c->admin, now, &c->fresh))
        churn_on_scrape(c, &c->fresh);
    for (uint32_t i = 0; i < c->n_bots && !c->fatal; i++)
        churn_bot_step(c, &c->bots[i], now);
    if (c->totals->joins == 0 && c->totals->errors[CHURN_ERR_CONNECT] > 0 &&
        c->totals->errors[CHURN_ERR_CONNECT] >= c->n_bots)
        c->fatal = true; /* every bot tried once and nobody answered: the server is not there */
    if (c->fatal || (c->leave_all && churn_all_done(c))) {
        c->done = true;
        uv_stop(&c->loop);
        return;
    }
    while (c->tl.n_rows + 1 < c->rows_total && now >= (double)(c->tl.n_rows + 1))
        churn_close_row(c, now);
    for (uint32_t i = 0; i < c->n_bots && !c->fatal; i++) {
        churn_bot *b = &c->bots[i];

        if (b->host == NULL)
            continue;
        if (now - b->serviced_at >= CHURN_HOST_IDLE_MS * 1e-3) {
            churn_bot_service(c, b);
        } else if (b->dirty) {
            /* Moves and pings queued this turn go out now, not at the next service. */
            enet_host_flush(b->host);
            b->dirty = false;
        }
    }
}

static void churn_turn_cb(uv_timer_t *timer)
{
    churn_turn(timer->data);
}

static int churn_loop(churn *c)
{
    memset(&c->fresh, 0, sizeof c->fresh);
    uv_timer_start(&c->turn, churn_turn_cb, 0, CHURN_TURN_MS);
    uv_run(&c->loop, UV_RUN_DEFAULT);
    uv_timer_stop(&c->turn);
    churn_scrape_free(&c->fresh);
    return c->fatal ? CLIENT_EXIT_FAILED : CLIENT_EXIT_OK;
}

/* Every visit has a socket of its own (two when impaired), and a closing one lingers a turn:
 * the soft limit on open files is raised towards the hard one when it is short. */
static void churn_raise_file_limit(churn *c)
{
    struct rlimit rl;
    rlim_t want = (rlim_t)c->n_bots * 3 + 2 * CHURN_PORT_TRIES + 64;

    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want)
        return;
    rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    if (rl.rlim_cur < want)
        churn_say(c, "note: at most %llu open files here (ulimit -n); %u bots may want %llu",
                  (unsigned long long)rl.rlim_cur, c->n_bots, (unsigned long long)want);
}

static bool churn_open(churn *c, const client_options *opts, FILE *out)
{
    char err[300];

    c->opts = opts;
    c->out = out;
    c->n_bots = churn_shard_share(opts, opts->bots);
    c->rng = opts->seed;
    c->rows_total = (uint32_t)opts->duration;
    if ((double)c->rows_total < opts->duration)
        c->rows_total++;
    c->next_stats_at = CHURN_STATS_PERIOD;
    c->progress_tty = !opts->quiet && (opts->progress > 0 ||
                                       (opts->progress < 0 && isatty(fileno(out))));
    churn_server_init(&c->server);
    churn_timeline_init(&c->tl);
    snprintf(c->tl.server, sizeof c->tl.server, "%s:%u", opts->host, opts->port);
    snprintf(c->tl.world, sizeof c->tl.world, "%s", opts->world);
    c->tl.bots = opts->bots;
    c->tl.duration = opts->duration;
    c->tl.spawn = opts->stages[0].spawn;
    c->tl.hold = opts->stages[0].hold;
    c->tl.disconnect = client_disconnect_name(opts->stages[0].leave);
    c->tl.seed = opts->seed;

    if (enet_address_set_host(&c->addr, opts->host) != 0) {
        fprintf(stderr, "reap-client: cannot resolve host '%s'\n", opts->host);
        return false;
    }
    c->addr.port = opts->port;
    if (opts->admin_url[0] != '\0' &&
        (c->admin = churn_admin_create(opts->admin_url, err, sizeof err)) == NULL) {
        fprintf(stderr, "reap-client: %s\n", err);
        return false;
    }
    if (c->admin != NULL)
        churn_admin_set_token(c->admin, opts->admin_token);
    c->totals = malloc(sizeof *c->totals);
    c->bots = calloc(c->n_bots ? c->n_bots : 1, sizeof *c->bots);
    c->arena_buf = malloc(CHURN_ARENA_BYTES);
    c->port_rest_until = calloc(65536, sizeof *c->port_rest_until);
    if (c->totals == NULL || c->bots == NULL || c->arena_buf == NULL ||
        c->port_rest_until == NULL) {
        fprintf(stderr, "reap-client: out of memory for %u bots\n", c->n_bots);
        return false;
    }
    if (uv_loop_init(&c->loop) != 0) {
        fprintf(stderr, "reap-client: cannot create an event loop\n");
        return false;
    }
    c->loop_open = true;
    c->loop.data = c;
    uv_timer_init(&c->loop, &c->turn);
    c->turn.data = c;
    c->turn_open = true;
    uv_timer_init(&c->loop, &c->impair_timer);
    c->impair_timer.data = c;
    c->impair_timer_open = true;
    churn_totals_init(c->totals);
    churn_raise_file_limit(c);
    msg_arena_init(&c->arena, c->arena_buf, CHURN_ARENA_BYTES);
    c->t0 = churn_clock();
    c->row_wall = c->t0;
    c->row_cpu = churn_cpu_seconds();
    for (uint32_t i = 0; i < c->n_bots; i++) {
        churn_bot *b = &c->bots[i];
        b->index = i;
        b->state = CHURN_BOT_IDLE;
        b->next_at = CHURN_STAGGER * churn_random(c);
        client_mirror_init(&b->mirror);
        if (opts->shards > 1)
            snprintf(b->name, sizeof b->name, "bot-%u-%u", opts->shard + 1, i + 1);
        else
            snprintf(b->name, sizeof b->name, "bot-%u", i + 1);
    }
    return true;
}

static void churn_close(churn *c)
{
    double now = churn_now(c);

    for (uint32_t i = 0; c->bots != NULL && i < c->n_bots; i++) {
        churn_bot *b = &c->bots[i];
        if (b->peer != NULL)
            enet_peer_disconnect_now(b->peer, 0);
        churn_bot_release(c, b, now);
    }
    if (c->loop_open)
        churn_impair_close(c);
    if (c->turn_open)
        uv_close((uv_handle_t *)&c->turn, NULL);
    if (c->impair_timer_open)
        uv_close((uv_handle_t *)&c->impair_timer, NULL);
    if (c->loop_open) {
        uv_run(&c->loop, UV_RUN_DEFAULT); /* the close callbacks */
        uv_loop_close(&c->loop);
    }
    free(c->port_rest_until);
    for (uint32_t i = 0; c->bots != NULL && i < c->n_bots; i++) {
        client_mirror_free(&c->bots[i].mirror);
        free(c->bots[i].awaited);
    }
    churn_admin_destroy(c->admin);
    churn_scrape_free(&c->first_scrape);
    churn_scrape_free(&c->last_scrape);
    churn_scrape_free(&c->row_scrape);
    free(c->totals);
    free(c->bots);
    free(c->arena_buf);
    churn_timeline_free(&c->tl);
}

static void churn_summary(churn *c, double elapsed)
{
    const client_options *o = c->opts;
    const churn_totals *t = c->totals;
    char errs[512] = "";
    size_t len = 0;
    uint64_t errors = churn_totals_errors(t);
    bool mix = false;

    for (uint32_t i = 0; i < o->n_stages; i++)
        mix |= o->stages[i].mix.n > 0;
    churn_say(c, "churn %s in %.1f s: %u bots, %llu joins, %llu leaves (%llu abrupt), %llu "
              "%s spawned, %llu moves, %llu replication checks, %llu errors, %llu refused "
              "(seed %llu)", churn_interrupted ? "stopped by Ctrl-C" : "done", elapsed,
              c->n_bots, (unsigned long long)t->joins, (unsigned long long)t->leaves,
              (unsigned long long)t->leaves_abrupt, (unsigned long long)t->spawned,
              mix ? "actors" : "props",
              (unsigned long long)t->moves, (unsigned long long)t->checks,
              (unsigned long long)errors, (unsigned long long)t->refused,
              (unsigned long long)o->seed);
    if (t->refused > 0)
        churn_say(c, "refused: %llu times the server answered \"server full\" (working as "
                  "designed; the bot tried again later)", (unsigned long long)t->refused);
    for (int k = 0; k < CHURN_ERR_COUNT; k++)
        if (t->errors[k] > 0 && len < sizeof errs)
            len += (size_t)snprintf(errs + len, sizeof errs - len, "%s%llu %s",
                                    len ? ", " : "", (unsigned long long)t->errors[k],
                                    churn_error_names[k]);
    if (errors > 0)
        churn_say(c, "errors: %s; first: %s", errs, c->first_error);
    if (t->unknown_destroys > 0)
        churn_say(c, "%llu ActorDestroy messages named a net id the bot did not hold",
                  (unsigned long long)t->unknown_destroys);
    if (c->first_mismatch[0] != '\0')
        churn_say(c, "first replication mismatch: %s", c->first_mismatch);
    if (c->undecodable > 0)
        churn_say(c, "%llu messages from the server could not be decoded (dropped)",
                  (unsigned long long)c->undecodable);
    uint32_t first, last, peak, collections;
    if (c->have_stats && churn_timeline_objects(&c->tl, &first, &last, &peak, &collections))
        churn_say(c, "server: %u -> %u objects (peak %u), %u collections during the run, "
                  "%llu objects destroyed, gc interval %g s", first, last, peak, collections,
                  (unsigned long long)(c->stats.objects_destroyed -
                                       c->first_stats.objects_destroyed),
                  c->stats.interval_seconds);
    else
        churn_say(c, "server: no stats reply arrived");
}

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
    snprintf(r->server, sizeof r->server, "%s:%u", o->host, o->port);
    churn_describe_impairment(o->stages, o->n_stages, r->impairment, sizeof r->impairment);
    r->seed = o->seed;
    r->shard = o->shard;
    r->shards = 1;
    r->bots = c->n_bots;
    r->duration = o->duration;
    r->elapsed = elapsed;
    r->totals = *c->totals;
    r->server_figs = c->server;
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
    r->tl = &c->tl;
    r->stages = o->stages;
    r->n_stages = o->n_stages;
    r->admin = o->admin_url[0] != '\0';
    memcpy(r->thresholds, o->thresholds, sizeof r->thresholds);
    r->n_thresholds = o->n_thresholds;
}

/* The figure a threshold names, when the report has to ask the server for it. */
static bool churn_wants_leaks(const client_options *o)
{
    for (uint32_t i = 0; i < o->n_thresholds; i++)
        if (strcmp(o->thresholds[i].metric, "leaked") == 0)
            return true;
    return o->leak_check;
}

int churn_run(const client_options *opts, FILE *out)
{
    client_options o = *opts;
    struct sigaction sa, old_sa, old_term;
    churn_report *report = NULL;
    churn *c;
    int rc;
    char err[600];
    char mark[64] = "";
    time_t started = time(NULL);

    if (!o.seed_set)
        o.seed = churn_seed_from_clock();
    /* Shards of one run share the seed; each draws its own stream from it. */
    o.seed_effective = o.seed + (uint64_t)o.shard * 0x9E3779B97F4A7C15ull;
    c = calloc(1, sizeof *c);
    if (c == NULL || enet_initialize() != 0) {
        fprintf(stderr, "reap-client: cannot initialise ENet\n");
        free(c);
        return CLIENT_EXIT_FAILED;
    }
    if (!churn_open(c, &o, out)) {
        churn_close(c);
        enet_deinitialize();
        free(c);
        return CLIENT_EXIT_FAILED;
    }
    c->rng = o.seed_effective;
    if (!o.quiet)
        churn_say(c, "churning %u bots%s against %s:%u%s%s for %g s in %u stage%s (%s): the "
                  "first spawns %u props per visit, moves %g times a second, holds %.2g-%.2g s, "
                  "leaves %s (seed %llu)", c->n_bots, o.shards > 1 ? " (this shard)" : "",
                  o.host, o.port, o.world[0] ? " in " : "", o.world, o.duration, o.n_stages,
                  o.n_stages == 1 ? "" : "s",
                  o.scenario_name[0] ? o.scenario_name : "command line", o.stages[0].spawn,
                  o.stages[0].move_hz, o.stages[0].hold * 0.5, o.stages[0].hold * 1.5,
                  client_disconnect_name(o.stages[0].leave), (unsigned long long)o.seed);
    if (!o.quiet) {
        char impair[300];
        churn_describe_impairment(o.stages, o.n_stages, impair, sizeof impair);
        if (strcmp(impair, "none") != 0)
            churn_say(c, "network impairment, applied in this process to each bot's datagrams "
                      "both ways: %s", impair);
    }
    if (churn_wants_leaks(&o) && (o.shards == 1 || o.shard == 0) &&
        !churn_leaks_mark(c, mark, sizeof mark, err, sizeof err)) {
        fprintf(stderr, "reap-client: the leak check cannot run: %s\n", err);
        churn_close(c);
        enet_deinitialize();
        free(c);
        return CLIENT_EXIT_FAILED;
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
    if (rc == CLIENT_EXIT_OK && c->totals->joins == 0 && c->n_bots > 0) {
        if (c->first_error[0] == '\0')
            snprintf(c->first_error, sizeof c->first_error, "no bot could join %.200s:%u in "
                     "%.1f s (is reap-server running there?)", o.host, o.port, churn_now(c));
        rc = CLIENT_EXIT_FAILED;
    }

    if (rc != CLIENT_EXIT_OK) {
        if (c->progress_tty)
            fputs("\n", out);
        fprintf(stderr, "reap-client: churn failed after %.1f s: %s\n", churn_now(c),
                c->first_error[0] ? c->first_error : "unknown error");
    } else {
        double elapsed = churn_now(c);
        uint32_t failed;

        churn_close_row(c, elapsed); /* the last row includes the leaving */
        if (c->progress_tty)
            fputs("\n", out);
        churn_server_finish(c);
        report = calloc(1, sizeof *report);
        if (report == NULL) {
            fprintf(stderr, "reap-client: out of memory for the report\n");
            rc = CLIENT_EXIT_FAILED;
            goto done;
        }
        churn_report_fill(report, c, &o, started, elapsed);
        report->interrupted = churn_interrupted != 0;
        if (mark[0] != '\0')
            churn_leaks_verdict(c, mark, &report->leaks);
        churn_summary(c, elapsed);
        churn_report_print(report, out);
        failed = churn_report_thresholds(report, out);
        if (!churn_timeline_save(&c->tl, o.out_dir, err, sizeof err) ||
            !churn_report_save(report, o.out_dir, err, sizeof err)) {
            fprintf(stderr, "reap-client: %s\n", err);
            rc = CLIENT_EXIT_FAILED;
        } else {
            churn_say(c, "report: %s/report.html, %s/report.json; timeline: %s/churn.json "
                      "(%u rows), %s/churn.svg", o.out_dir, o.out_dir, o.out_dir, c->tl.n_rows,
                      o.out_dir);
            if (failed > 0) {
                churn_say(c, "%u threshold%s failed: exit %d", failed, failed == 1 ? "" : "s",
                          CLIENT_EXIT_THRESHOLD);
                rc = CLIENT_EXIT_THRESHOLD;
            }
        }
        if (o.junit_path[0] != '\0' &&
            !churn_report_write_junit(report, o.junit_path, err, sizeof err)) {
            fprintf(stderr, "reap-client: %s\n", err);
            rc = CLIENT_EXIT_FAILED;
        }
        if (mark[0] != '\0' && (!report->leaks.supported || report->leaks.leaked < 0) &&
            rc != CLIENT_EXIT_FAILED) {
            fprintf(stderr, "reap-client: the leak check could not run: %s\n",
                    report->leaks.detail != NULL ? report->leaks.detail : "no verdict");
            rc = CLIENT_EXIT_FAILED;
        }
        if (report->interrupted && rc != CLIENT_EXIT_FAILED) {
            churn_say(c, "interrupted: exit %d", CLIENT_EXIT_INTERRUPTED);
            rc = CLIENT_EXIT_INTERRUPTED;
        }
    }
done:
    if (report != NULL)
        free(report->leaks.detail);
    free(report);
    churn_close(c);
    enet_deinitialize();
    free(c);
    return rc;
}
