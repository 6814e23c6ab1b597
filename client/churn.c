/*
 * churn.c - the churn load generator: N bots on one ENet host, in one thread.
 *
 * Each bot is a small state machine driven by its timers and by ENet events:
 *
 *   idle -> connecting -> hello -> spawning -> holding -> [leaving] -> idle -> ...
 *
 * A visit spawns --spawn props (acknowledged *and* replicated back), holds for a random time
 * in [0.5, 1.5] x --hold, then leaves gracefully (goodbye, wait for the server to close) or
 * abruptly (the connection is dropped without a word, so the server must time it out). After
 * a pause of 0.1-0.5 s the bot comes back as a new player. Four times a second one joined bot
 * asks the server for its GC figures; once a second a timeline row is closed and a progress line
 * printed. When --duration is over, the server's figures are asked for one last time, every
 * bot leaves, and the timeline is written. Every wait has a deadline (--timeout); the only
 * address ever used is --server.
 */
#include "churn.h"

#include <enet/enet.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client_net.h"
#include "reap_msg.h"

enum {
    CHURN_ARENA_BYTES = 1024 * 1024,
    CHURN_OUT_BYTES = 4096,
    CHURN_SPAWN_BATCH = 50,              /* the server's default net.MaxSpawnPerRequest */
    CHURN_SOCKET_BUFFER = 4 * 1024 * 1024,
    CHURN_EXTRA_PEERS = 16,
    CHURN_SERVICE_MS = 5,                /* longest wait for a network event per loop */
};
#define CHURN_STATS_PERIOD 0.25          /* seconds between stats requests */
#define CHURN_STAGGER 1.0                /* first visits start spread over this long */
#define CHURN_FINAL_STATS_WAIT 1.0       /* at most, for the last stats reply */

typedef enum churn_bot_state {
    CHURN_BOT_IDLE = 0,   /* between visits: connects at next_at */
    CHURN_BOT_CONNECTING, /* ENet connect sent */
    CHURN_BOT_HELLO,      /* hello sent, waiting for the welcome */
    CHURN_BOT_SPAWNING,   /* spawn requests sent, waiting for acks and replication */
    CHURN_BOT_HOLDING,    /* leaves at next_at */
    CHURN_BOT_LEAVING,    /* goodbye sent, waiting for the server to close */
    CHURN_BOT_DONE,       /* the run is over for this bot */
} churn_bot_state;

typedef enum churn_error {
    CHURN_ERR_CONNECT = 0, /* no answer to a connection request */
    CHURN_ERR_REFUSED,     /* the server answered with an Error */
    CHURN_ERR_LOST,        /* the server closed a connection we had not closed */
    CHURN_ERR_TIMEOUT,     /* no welcome, spawn ack or replication in time */
    CHURN_ERR_LEAVE,       /* the server did not close the connection after our goodbye */
    CHURN_ERR_COUNT,
} churn_error;

static const char *const churn_error_names[CHURN_ERR_COUNT] = {
    "connect timeouts", "refusals", "connections lost", "answer timeouts",
    "unanswered goodbyes",
};

typedef struct churn_bot {
    uint32_t index;
    churn_bot_state state;
    ENetPeer *peer;       /* NULL between visits; peer->data points back here */
    bool joined;          /* welcomed, not gone yet */
    double deadline;      /* of the current wait */
    double next_at;       /* IDLE: when to connect; HOLDING: when to leave */
    uint32_t player_id;
    uint32_t acked;       /* props acknowledged this visit */
    uint32_t replicated;  /* own props replicated back this visit */
    char name[32];
} churn_bot;

typedef struct churn_counts {
    uint32_t joins, leaves, leaves_abrupt, spawned, errors;
} churn_counts;

typedef struct churn {
    const client_options *opts;
    FILE *out;
    ENetHost *host;
    ENetAddress addr;
    churn_bot *bots;
    uint32_t n_bots;
    uint64_t rng;
    double t0;
    bool stopping;            /* the duration is over: no new visits */
    bool leave_all;           /* ... and every bot is to leave now */
    double final_stats_deadline;
    uint64_t final_stats_after;
    bool fatal;               /* a failure no retry can fix: the run ends */
    churn_counts second, total;
    uint64_t errors[CHURN_ERR_COUNT];
    char first_error[400];
    /* The server's figures: the newest stats reply (scalars copied) and when it came. */
    bool have_stats;
    Reap__StatsReply stats;
    double stats_at;
    uint64_t stats_replies;
    Reap__StatsReply first_stats;
    uint32_t peak_objects;
    uint64_t gc_collections;  /* collections seen during the run */
    uint32_t next_stats_bot;
    double next_stats_at;
    churn_timeline tl;
    uint32_t rows_total;      /* ceil(duration) */
    uint32_t seq;
    msg_arena arena;
    void *arena_buf;
    uint8_t out_buf[CHURN_OUT_BYTES];
} churn;

static volatile sig_atomic_t churn_interrupted;

static void churn_sigint_cb(int sig)
{
    (void)sig;
    churn_interrupted = 1;
}

static double churn_clock(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double churn_now(const churn *c)
{
    return churn_clock() - c->t0;
}

/* splitmix64: a uniform double in [0, 1). */
static double churn_random(churn *c)
{
    uint64_t z = (c->rng += 0x9E3779B97F4A7C15ull);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

static void churn_say(churn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void churn_say(churn *c, const char *fmt, ...)
{
    va_list ap;

    fputs("reap-client: ", c->out);
    va_start(ap, fmt);
    vfprintf(c->out, fmt, ap);
    va_end(ap);
    fputc('\n', c->out);
    fflush(c->out);
}

static void churn_count_error(churn *c, churn_error kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void churn_count_error(churn *c, churn_error kind, const char *fmt, ...)
{
    va_list ap;

    c->errors[kind]++;
    c->second.errors++;
    c->total.errors++;
    if (c->first_error[0] != '\0')
        return;
    va_start(ap, fmt);
    vsnprintf(c->first_error, sizeof c->first_error, fmt, ap);
    va_end(ap);
}

static bool churn_send(churn *c, churn_bot *b, Reap__Envelope *env)
{
    if (b->peer == NULL)
        return false;
    env->seq = ++c->seq;
    return client_net_send(b->peer, c->out_buf, sizeof c->out_buf, MSG_CHANNEL_CONTROL, env);
}

/* ---- a bot's visit ------------------------------------------------------------------------ */

/* The bot is no longer connected (however that happened); it comes back after a pause unless
 * the run is over. */
static void churn_bot_gone(churn *c, churn_bot *b, double now, bool abrupt, double pause)
{
    if (b->joined) {
        c->second.leaves++;
        c->total.leaves++;
        if (abrupt) {
            c->second.leaves_abrupt++;
            c->total.leaves_abrupt++;
        }
    }
    if (b->peer != NULL)
        b->peer->data = NULL;
    b->peer = NULL;
    b->joined = false;
    b->state = c->stopping ? CHURN_BOT_DONE : CHURN_BOT_IDLE;
    b->next_at = now + pause;
}

static double churn_pause(churn *c)
{
    return 0.1 + 0.4 * churn_random(c);
}

/* Ends a visit that went wrong: tells the server (if connected) and retries later. */
static void churn_bot_abort(churn *c, churn_bot *b, double now)
{
    ENetPeer *peer = b->peer;

    if (peer != NULL) {
        peer->data = NULL;
        enet_peer_disconnect_now(peer, 0); /* a reset when not connected yet */
    }
    churn_bot_gone(c, b, now, false, 0.5 + 0.5 * churn_random(c));
}

static void churn_bot_connect(churn *c, churn_bot *b, double now)
{
    ENetPeer *peer = enet_host_connect(c->host, &c->addr, MSG_CHANNEL_COUNT, 0);

    if (peer == NULL) {
        churn_count_error(c, CHURN_ERR_CONNECT, "no free ENet peer for %s", b->name);
        b->next_at = now + churn_pause(c);
        return;
    }
    peer->data = b;
    b->peer = peer;
    b->state = CHURN_BOT_CONNECTING;
    b->deadline = now + c->opts->timeout;
    b->player_id = 0;
    b->acked = b->replicated = 0;
}

static void churn_bot_hello(churn *c, churn_bot *b, double now)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__Hello hello = REAP__HELLO__INIT;

    hello.protocol_version = MSG_PROTOCOL_VERSION;
    hello.player_name = b->name;
    hello.world = (char *)c->opts->world;
    env.body_case = REAP__ENVELOPE__BODY_HELLO;
    env.hello = &hello;
    b->state = CHURN_BOT_HELLO;
    b->deadline = now + c->opts->timeout;
    if (!churn_send(c, b, &env)) {
        churn_count_error(c, CHURN_ERR_TIMEOUT, "%s: cannot send hello", b->name);
        churn_bot_abort(c, b, now);
    }
}

static void churn_bot_hold(churn *c, churn_bot *b, double now)
{
    b->state = CHURN_BOT_HOLDING;
    b->next_at = now + c->opts->hold * (0.5 + churn_random(c));
}

static void churn_bot_spawn(churn *c, churn_bot *b, double now)
{
    uint32_t requested = 0;

    b->state = CHURN_BOT_SPAWNING;
    b->deadline = now + c->opts->timeout;
    while (requested < c->opts->spawn) {
        Reap__Envelope env = REAP__ENVELOPE__INIT;
        Reap__SpawnRequest req = REAP__SPAWN_REQUEST__INIT;
        uint32_t n = c->opts->spawn - requested;

        if (n > CHURN_SPAWN_BATCH)
            n = CHURN_SPAWN_BATCH;
        req.actor_class = REAP__ACTOR_CLASS__ACTOR_CLASS_PROP;
        req.count = n;
        env.body_case = REAP__ENVELOPE__BODY_SPAWN_REQUEST;
        env.spawn_request = &req;
        if (!churn_send(c, b, &env)) {
            churn_count_error(c, CHURN_ERR_TIMEOUT, "%s: cannot send a spawn request", b->name);
            churn_bot_abort(c, b, now);
            return;
        }
        requested += n;
    }
    if (c->opts->spawn == 0)
        churn_bot_hold(c, b, now);
}

static void churn_bot_leave(churn *c, churn_bot *b, double now)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__Goodbye bye = REAP__GOODBYE__INIT;
    bool abrupt = c->opts->disconnect == CLIENT_DISCONNECT_ABRUPT ||
                  (c->opts->disconnect == CLIENT_DISCONNECT_MIXED && churn_random(c) < 0.5);

    if (abrupt) {
        /* No goodbye and no ENet disconnect: the server only learns of it by timing out. */
        enet_peer_reset(b->peer);
        churn_bot_gone(c, b, now, true, churn_pause(c));
        return;
    }
    bye.reason = (char *)"churn bot done";
    env.body_case = REAP__ENVELOPE__BODY_GOODBYE;
    env.goodbye = &bye;
    if (!churn_send(c, b, &env)) {
        churn_count_error(c, CHURN_ERR_LEAVE, "%s: cannot send goodbye", b->name);
        churn_bot_abort(c, b, now);
        return;
    }
    /* The server answers a goodbye by disconnecting us; we only wait (see client_leave). */
    b->state = CHURN_BOT_LEAVING;
    b->deadline = now + c->opts->timeout;
}

static void churn_bot_check_spawned(churn *c, churn_bot *b, double now)
{
    if (b->state == CHURN_BOT_SPAWNING && b->acked >= c->opts->spawn &&
        b->replicated >= c->opts->spawn)
        churn_bot_hold(c, b, now);
}

/* Advances a bot whose timer or deadline may have passed. */
static void churn_bot_step(churn *c, churn_bot *b, double now)
{
    switch (b->state) {
    case CHURN_BOT_IDLE:
        if (c->stopping)
            b->state = CHURN_BOT_DONE;
        else if (now >= b->next_at)
            churn_bot_connect(c, b, now);
        break;
    case CHURN_BOT_CONNECTING:
        if (c->leave_all) {
            churn_bot_abort(c, b, now);
        } else if (now >= b->deadline) {
            churn_count_error(c, CHURN_ERR_CONNECT, "no answer from %s:%u within %g s (is "
                              "reap-server running there, with room for more players?)", c->opts->host, c->opts->port,
                              c->opts->timeout);
            churn_bot_abort(c, b, now);
        }
        break;
    case CHURN_BOT_HELLO:
    case CHURN_BOT_SPAWNING:
        if (now >= b->deadline) {
            churn_count_error(c, CHURN_ERR_TIMEOUT, "%s: no %s within %g s", b->name,
                              b->state == CHURN_BOT_HELLO ? "welcome" :
                              "spawn acknowledgement and replication", c->opts->timeout);
            churn_bot_abort(c, b, now);
        } else if (c->leave_all) {
            if (b->joined)
                churn_bot_leave(c, b, now);
            else
                churn_bot_abort(c, b, now);
        }
        break;
    case CHURN_BOT_HOLDING:
        if (c->leave_all || now >= b->next_at)
            churn_bot_leave(c, b, now);
        break;
    case CHURN_BOT_LEAVING:
        if (now >= b->deadline) {
            churn_count_error(c, CHURN_ERR_LEAVE, "%s: the server did not close the connection "
                              "within %g s of our goodbye", b->name, c->opts->timeout);
            enet_peer_reset(b->peer);
            churn_bot_gone(c, b, now, false, churn_pause(c));
        }
        break;
    case CHURN_BOT_DONE:
        break;
    }
}

/* ---- the server's figures ----------------------------------------------------------------- */

/* Keeps the newest reply, and places the collections that happened since the previous one on
 * the timeline: the newest at (now - time since the last purge), earlier ones spread evenly
 * back to the previous reply. */
static void churn_on_stats(churn *c, const Reap__StatsReply *r, double now)
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

/* Asks one joined bot (round robin) for the server's stats; false when none is joined. */
static bool churn_request_stats(churn *c)
{
    for (uint32_t n = 0; n < c->n_bots; n++) {
        churn_bot *b = &c->bots[(c->next_stats_bot + n) % c->n_bots];
        Reap__Envelope env = REAP__ENVELOPE__INIT;
        Reap__StatsRequest req = REAP__STATS_REQUEST__INIT;

        if (!b->joined || (b->state != CHURN_BOT_SPAWNING && b->state != CHURN_BOT_HOLDING))
            continue;
        env.body_case = REAP__ENVELOPE__BODY_STATS_REQUEST;
        env.stats_request = &req;
        if (churn_send(c, b, &env)) {
            c->next_stats_bot = (b->index + 1) % c->n_bots;
            return true;
        }
    }
    return false;
}

/* ---- ENet events -------------------------------------------------------------------------- */

static void churn_on_message(churn *c, churn_bot *b, const Reap__Envelope *env, double now)
{
    switch (env->body_case) {
    case REAP__ENVELOPE__BODY_WELCOME:
        if (b->state != CHURN_BOT_HELLO)
            break;
        b->joined = true;
        b->player_id = env->welcome->player_id;
        c->second.joins++;
        c->total.joins++;
        churn_bot_spawn(c, b, now);
        break;
    case REAP__ENVELOPE__BODY_SPAWN_ACK:
        b->acked += env->spawn_ack->count;
        c->second.spawned += env->spawn_ack->count;
        c->total.spawned += env->spawn_ack->count;
        churn_bot_check_spawned(c, b, now);
        break;
    case REAP__ENVELOPE__BODY_ACTOR_SPAWN:
        for (size_t i = 0; i < env->actor_spawn->n_actors; i++) {
            const Reap__ActorState *a = env->actor_spawn->actors[i];
            if (a->actor_class == REAP__ACTOR_CLASS__ACTOR_CLASS_PROP &&
                a->owner_player_id == b->player_id && b->player_id != 0)
                b->replicated++;
        }
        churn_bot_check_spawned(c, b, now);
        break;
    case REAP__ENVELOPE__BODY_STATS_REPLY:
        churn_on_stats(c, env->stats_reply, now);
        break;
    case REAP__ENVELOPE__BODY_ERROR:
        churn_count_error(c, CHURN_ERR_REFUSED, "server refused %s: %s", b->name,
                          env->error->text);
        if (env->error->code == REAP__ERROR_CODE__ERROR_CODE_VERSION ||
            env->error->code == REAP__ERROR_CODE__ERROR_CODE_NO_SUCH_WORLD) {
            snprintf(c->first_error, sizeof c->first_error, "server refused: %s",
                     env->error->text);
            c->fatal = true;
        }
        if (b->state == CHURN_BOT_LEAVING)
            break;
        if (b->joined)
            churn_bot_leave(c, b, now);
        else
            churn_bot_abort(c, b, now);
        break;
    default:
        break; /* goodbye: the disconnect follows; destroys and updates: not ours to check */
    }
}

static void churn_on_event(churn *c, ENetEvent *ev, double now)
{
    churn_bot *b = ev->peer != NULL ? ev->peer->data : NULL;
    Reap__Envelope *env;

    switch (ev->type) {
    case ENET_EVENT_TYPE_CONNECT:
        if (b == NULL || b->state != CHURN_BOT_CONNECTING)
            break;
        if (c->leave_all)
            churn_bot_abort(c, b, now);
        else
            churn_bot_hello(c, b, now);
        break;
    case ENET_EVENT_TYPE_DISCONNECT:
        if (b == NULL)
            break;
        if (b->state == CHURN_BOT_LEAVING) {
            churn_bot_gone(c, b, now, false, churn_pause(c));
            break;
        }
        if (b->state == CHURN_BOT_CONNECTING)
            churn_count_error(c, CHURN_ERR_CONNECT, "%s: the connection to %s:%u was reset "
                              "during the handshake", b->name, c->opts->host, c->opts->port);
        else
            churn_count_error(c, CHURN_ERR_LOST, "the server closed %s's connection", b->name);
        churn_bot_gone(c, b, now, false, 0.5 + 0.5 * churn_random(c));
        break;
    case ENET_EVENT_TYPE_RECEIVE:
        /* Movement updates are not checked: skipping their decoding keeps one process able to
         * play many bots. */
        if (b != NULL && ev->channelID != MSG_CHANNEL_UPDATES) {
            msg_arena_reset(&c->arena);
            if (msg_decode(&c->arena, ev->packet->data, ev->packet->dataLength, 0, &env) ==
                MSG_OK)
                churn_on_message(c, b, env, now);
        }
        enet_packet_destroy(ev->packet);
        break;
    case ENET_EVENT_TYPE_NONE:
        break;
    }
}

/* ---- the timeline and what is printed ----------------------------------------------------- */

static uint32_t churn_joined(const churn *c)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < c->n_bots; i++)
        n += c->bots[i].joined;
    return n;
}

static void churn_close_row(churn *c, double now)
{
    churn_row row;

    memset(&row, 0, sizeof row);
    row.t = now;
    row.connected = churn_joined(c);
    row.joins = c->second.joins;
    row.leaves = c->second.leaves;
    row.leaves_abrupt = c->second.leaves_abrupt;
    row.spawned = c->second.spawned;
    row.errors = c->second.errors;
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
    churn_timeline_add_row(&c->tl, &row);
    memset(&c->second, 0, sizeof c->second);
    if (c->opts->quiet)
        return;
    if (!c->have_stats) {
        churn_say(c, "[%5.1fs] %u/%u bots joined, %u joins, %u leaves, %u props, %u errors | "
                  "server: no stats yet", now, row.connected, c->n_bots, c->total.joins,
                  c->total.leaves, c->total.spawned, c->total.errors);
        return;
    }
    churn_say(c, "[%5.1fs] %u/%u bots joined, %u joins, %u leaves, %u props, %u errors | "
              "server: %u objects, %llu collections, last gc %.1f s ago, interval %g s", now,
              row.connected, c->n_bots, c->total.joins, c->total.leaves, c->total.spawned,
              c->total.errors, c->stats.objects, (unsigned long long)c->stats.collections,
              c->stats.time_since_last_purge_seconds, c->stats.interval_seconds);
}

static void churn_summary(churn *c, double elapsed)
{
    const client_options *o = c->opts;
    char errs[512] = "";
    size_t len = 0;

    churn_say(c, "churn %s in %.1f s: %u bots, %u joins, %u leaves (%u abrupt), %u props "
              "spawned, %u errors (seed %llu)", churn_interrupted ? "stopped by Ctrl-C" : "done",
              elapsed, c->n_bots, c->total.joins,
              c->total.leaves, c->total.leaves_abrupt, c->total.spawned, c->total.errors,
              (unsigned long long)o->seed);
    for (int k = 0; k < CHURN_ERR_COUNT; k++)
        if (c->errors[k] > 0 && len < sizeof errs)
            len += (size_t)snprintf(errs + len, sizeof errs - len, "%s%llu %s",
                                    len ? ", " : "", (unsigned long long)c->errors[k],
                                    churn_error_names[k]);
    if (c->total.errors > 0)
        churn_say(c, "errors: %s; first: %s", errs, c->first_error);
    if (c->have_stats)
        churn_say(c, "server: %u -> %u objects (peak %u), %llu collections during the run, "
                  "%llu objects destroyed, gc interval %g s", c->first_stats.objects,
                  c->stats.objects, c->peak_objects, (unsigned long long)c->gc_collections,
                  (unsigned long long)(c->stats.objects_destroyed -
                                       c->first_stats.objects_destroyed),
                  c->stats.interval_seconds);
    else
        churn_say(c, "server: no stats reply arrived");
}

/* ---- the run ------------------------------------------------------------------------------ */

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

static int churn_loop(churn *c)
{
    double now;
    ENetEvent ev;

    for (;;) {
        int r;

        now = churn_now(c);
        if (!c->stopping && (now >= c->opts->duration || churn_interrupted))
            churn_begin_stop(c, now);
        if (c->stopping && !c->leave_all &&
            (c->stats_replies > c->final_stats_after || now >= c->final_stats_deadline))
            c->leave_all = true;
        if (!c->stopping && now >= c->next_stats_at) {
            churn_request_stats(c);
            while (c->next_stats_at <= now)
                c->next_stats_at += CHURN_STATS_PERIOD;
        }
        for (uint32_t i = 0; i < c->n_bots; i++)
            churn_bot_step(c, &c->bots[i], now);
        if (c->fatal)
            break;
        if (c->total.joins == 0 && c->errors[CHURN_ERR_CONNECT] > 0 &&
            c->errors[CHURN_ERR_CONNECT] >= c->n_bots) {
            /* Every bot tried once and nobody answered: the server is not there. */
            c->fatal = true;
            break;
        }
        if (c->leave_all && churn_all_done(c))
            break;
        while (c->tl.n_rows + 1 < c->rows_total && now >= (double)(c->tl.n_rows + 1))
            churn_close_row(c, now);

        r = enet_host_service(c->host, &ev, CHURN_SERVICE_MS);
        while (r > 0) {
            churn_on_event(c, &ev, churn_now(c));
            r = enet_host_check_events(c->host, &ev);
        }
        if (r < 0) {
            snprintf(c->first_error, sizeof c->first_error, "the network failed (ENet "
                     "service error)");
            c->fatal = true;
            break;
        }
    }
    /* Flush the goodbyes and disconnects still queued. */
    enet_host_flush(c->host);
    return c->fatal ? CLIENT_EXIT_FAILED : CLIENT_EXIT_OK;
}

static bool churn_open(churn *c, const client_options *opts, FILE *out)
{
    c->opts = opts;
    c->out = out;
    c->n_bots = opts->bots;
    c->rng = opts->seed;
    c->rows_total = (uint32_t)opts->duration;
    if ((double)c->rows_total < opts->duration)
        c->rows_total++;
    c->next_stats_at = CHURN_STATS_PERIOD;
    churn_timeline_init(&c->tl);
    snprintf(c->tl.server, sizeof c->tl.server, "%s:%u", opts->host, opts->port);
    snprintf(c->tl.world, sizeof c->tl.world, "%s", opts->world);
    c->tl.bots = opts->bots;
    c->tl.duration = opts->duration;
    c->tl.spawn = opts->spawn;
    c->tl.hold = opts->hold;
    c->tl.disconnect = client_disconnect_name(opts->disconnect);
    c->tl.seed = opts->seed;

    if (enet_address_set_host(&c->addr, opts->host) != 0) {
        fprintf(stderr, "reap-client: cannot resolve host '%s'\n", opts->host);
        return false;
    }
    c->addr.port = opts->port;
    c->bots = calloc(c->n_bots, sizeof *c->bots);
    c->arena_buf = malloc(CHURN_ARENA_BYTES);
    c->host = enet_host_create(NULL, c->n_bots + CHURN_EXTRA_PEERS, MSG_CHANNEL_COUNT, 0, 0);
    if (c->bots == NULL || c->arena_buf == NULL || c->host == NULL) {
        fprintf(stderr, "reap-client: cannot open a UDP socket for %u bots\n", c->n_bots);
        return false;
    }
    /* Every bot receives the whole world's replication: give the socket room for bursts. */
    enet_socket_set_option(c->host->socket, ENET_SOCKOPT_RCVBUF, CHURN_SOCKET_BUFFER);
    enet_socket_set_option(c->host->socket, ENET_SOCKOPT_SNDBUF, CHURN_SOCKET_BUFFER);
    msg_arena_init(&c->arena, c->arena_buf, CHURN_ARENA_BYTES);
    c->t0 = churn_clock();
    for (uint32_t i = 0; i < c->n_bots; i++) {
        churn_bot *b = &c->bots[i];
        b->index = i;
        b->state = CHURN_BOT_IDLE;
        b->next_at = CHURN_STAGGER * churn_random(c);
        snprintf(b->name, sizeof b->name, "bot-%u", i + 1);
    }
    return true;
}

static void churn_close(churn *c)
{
    if (c->host != NULL) {
        for (uint32_t i = 0; i < c->n_bots; i++)
            if (c->bots[i].peer != NULL)
                enet_peer_disconnect_now(c->bots[i].peer, 0);
        enet_host_destroy(c->host);
    }
    free(c->bots);
    free(c->arena_buf);
    churn_timeline_free(&c->tl);
}

int churn_run(const client_options *opts, FILE *out)
{
    client_options o = *opts;
    struct sigaction sa, old_sa;
    churn *c;
    int rc;
    char err[600];

    if (!o.seed_set)
        o.seed = (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid() ^
                 (uint64_t)(churn_clock() * 1e9);
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
    if (!o.quiet)
        churn_say(c, "churning %u bots against %s:%u%s%s for %g s: each visit spawns %u props, "
                  "holds %.2g-%.2g s, leaves %s (seed %llu)", o.bots, o.host, o.port,
                  o.world[0] ? " in " : "", o.world, o.duration, o.spawn, o.hold * 0.5,
                  o.hold * 1.5, client_disconnect_name(o.disconnect),
                  (unsigned long long)o.seed);

    /* Ctrl-C ends the run early but cleanly: bots leave and the timeline is written. */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = churn_sigint_cb;
    sa.sa_flags = SA_RESETHAND; /* a second Ctrl-C kills */
    sigemptyset(&sa.sa_mask);
    churn_interrupted = 0;
    sigaction(SIGINT, &sa, &old_sa);
    rc = churn_loop(c);
    sigaction(SIGINT, &old_sa, NULL);
    if (rc == CLIENT_EXIT_OK && c->total.joins == 0) {
        if (c->first_error[0] == '\0')
            snprintf(c->first_error, sizeof c->first_error, "no bot could join %.200s:%u in %.1f s "
                     "(is reap-server running there?)", o.host, o.port, churn_now(c));
        rc = CLIENT_EXIT_FAILED;
    }

    if (rc != CLIENT_EXIT_OK) {
        fprintf(stderr, "reap-client: churn failed after %.1f s: %s\n", churn_now(c),
                c->first_error[0] ? c->first_error : "unknown error");
    } else {
        double elapsed = churn_now(c);

        churn_close_row(c, elapsed); /* the last row includes the leaving */
        churn_summary(c, elapsed);
        if (!churn_timeline_save(&c->tl, o.out_dir, err, sizeof err)) {
            fprintf(stderr, "reap-client: %s\n", err);
            rc = CLIENT_EXIT_FAILED;
        } else {
            churn_say(c, "timeline: %s/churn.json (%u rows), picture: %s/churn.svg", o.out_dir,
                      c->tl.n_rows, o.out_dir);
        }
    }
    churn_close(c);
    enet_deinitialize();
    free(c);
    return rc;
}
