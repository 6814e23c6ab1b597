/*
 * client_session.c - one client session: connect, hello, spawn, hold, leave.
 */
#include "client_session.h"

#include <enet/enet.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "client_clock.h"
#include "client_console.h"
#include "client_exit.h"
#include "client_mirror.h"
#include "client_net.h"
#include "reap_wire.h"
#include "reap_msg.h"

enum {
    CLIENT_ARENA_BYTES = 1024 * 1024,
    CLIENT_OUT_BYTES = 4096,
    CLIENT_SPAWN_BATCH = 50,  /* the server's default net.MaxSpawnPerRequest */
};

typedef struct client {
    const client_session_options *opts;
    FILE *out;
    ENetHost *host;
    ENetPeer *peer;
    bool connected;
    bool disconnected;        /* the server dropped us (or said goodbye) */
    bool welcomed;
    uint32_t player_id;
    uint64_t pawn_net_id;
    char world[64];
    uint32_t seq;
    uint32_t acked;           /* props acknowledged by SpawnAck */
    bool have_stats;
    Reap__StatsReply stats;   /* copied scalars only */
    bool failed;              /* an Error arrived */
    char error[300];
    uint64_t spawns_seen, destroys_seen, updates_seen;
    client_mirror mirror;
    msg_arena arena;
    void *arena_buf;
    uint8_t out_buf[CLIENT_OUT_BYTES];
} client;

static void session_say(client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void session_say(client *c, const char *fmt, ...)
{
    client_console con = { c->out, false };
    va_list ap;

    if (c->opts->quiet)
        return;
    va_start(ap, fmt);
    client_vsay(&con, fmt, ap);
    va_end(ap);
}

static bool client_send(client *c, uint8_t channel, Reap__Envelope *env)
{
    if (c->peer == NULL)
        return false;
    env->seq = ++c->seq;
    if (!client_net_send(c->peer, c->out_buf, sizeof c->out_buf, channel, env))
        return false;
    enet_host_flush(c->host);
    return true;
}

static void client_on_message(client *c, const Reap__Envelope *env)
{
    switch (env->body_case) {
    case REAP__ENVELOPE__BODY_WELCOME:
        c->welcomed = true;
        c->player_id = env->welcome->player_id;
        c->pawn_net_id = env->welcome->pawn_net_id;
        snprintf(c->world, sizeof c->world, "%s", env->welcome->world);
        break;
    case REAP__ENVELOPE__BODY_SPAWN_ACK:
        c->acked += env->spawn_ack->count;
        break;
    case REAP__ENVELOPE__BODY_ACTOR_SPAWN: {
        const Reap__ActorSpawn *s = env->actor_spawn;
        wire_reader r;
        wire_actor a;

        wire_reader_init(&r, s->records.data, s->records.len, s->count);
        while (wire_next_spawn(&r, &a)) {
            client_mirror_put(&c->mirror, a.net_id, a.actor_class, a.owner_player_id);
            c->spawns_seen++;
        }
        if (!wire_reader_ok(&r))
            session_say(c, "a spawn message from the server is malformed (dropped its rest)");
        break;
    }
    case REAP__ENVELOPE__BODY_ACTOR_DESTROY:
        for (size_t i = 0; i < env->actor_destroy->n_net_ids; i++) {
            client_mirror_remove(&c->mirror, env->actor_destroy->net_ids[i]);
            c->destroys_seen++;
        }
        break;
    case REAP__ENVELOPE__BODY_ACTOR_UPDATE:
        c->updates_seen += env->actor_update->count;
        break;
    case REAP__ENVELOPE__BODY_STATS_REPLY:
        c->stats = *env->stats_reply;
        c->have_stats = true;
        break;
    case REAP__ENVELOPE__BODY_ERROR:
        c->failed = true;
        snprintf(c->error, sizeof c->error, "%s", env->error->text);
        break;
    case REAP__ENVELOPE__BODY_GOODBYE:
        /* The disconnect itself follows; waits end when it arrives. */
        session_say(c, "server said goodbye: %s", env->goodbye->reason);
        break;
    default:
        break;
    }
}

static void client_on_event(client *c, const ENetEvent *ev)
{
    Reap__Envelope *env;

    switch (ev->type) {
    case ENET_EVENT_TYPE_CONNECT:
        c->connected = true;
        break;
    case ENET_EVENT_TYPE_DISCONNECT:
        c->disconnected = true;
        c->peer = NULL; /* ENet has reset it */
        break;
    case ENET_EVENT_TYPE_RECEIVE:
        msg_arena_reset(&c->arena);
        if (msg_decode(&c->arena, ev->packet->data, ev->packet->dataLength, 0, &env) == MSG_OK)
            client_on_message(c, env);
        enet_packet_destroy(ev->packet);
        break;
    case ENET_EVENT_TYPE_NONE:
        break;
    }
}

typedef bool (*client_cond_fn)(const client *c, const void *arg);

/* Services ENet until cond holds, the server goes away, an Error arrives, or the deadline. */
static bool client_wait(client *c, client_cond_fn cond, const void *arg, double seconds)
{
    double deadline = churn_clock() + seconds;
    ENetEvent ev;

    while (!cond(c, arg)) {
        double left = deadline - churn_clock();
        enet_uint32 ms;

        if (c->disconnected || c->failed || left <= 0)
            return false;
        ms = (enet_uint32)(left * 1000.0);
        if (enet_host_service(c->host, &ev, ms < 50 ? ms : 50) > 0)
            client_on_event(c, &ev);
    }
    return true;
}

static bool client_cond_connected(const client *c, const void *arg)
{
    (void)arg;
    return c->connected;
}

static bool client_cond_welcomed(const client *c, const void *arg)
{
    (void)arg;
    return c->welcomed;
}

static bool client_cond_spawned(const client *c, const void *arg)
{
    uint32_t want = *(const uint32_t *)arg;

    return c->acked >= want &&
           client_mirror_count_owned(&c->mirror, REAP__ACTOR_CLASS__ACTOR_CLASS_PROP,
                                     c->player_id) >= want;
}

static bool client_cond_acked(const client *c, const void *arg)
{
    return c->acked >= *(const uint32_t *)arg;
}

static bool client_cond_never(const client *c, const void *arg)
{
    (void)c;
    (void)arg;
    return false;
}

static bool client_cond_stats(const client *c, const void *arg)
{
    (void)arg;
    return c->have_stats;
}

static bool client_cond_disconnected(const client *c, const void *arg)
{
    (void)arg;
    return c->disconnected;
}

/* Explains why a wait ended without its condition. */
static int client_fail(client *c, const char *what)
{
    const client_session_options *o = c->opts;

    if (c->failed)
        fprintf(stderr, "reap-client: %s: server refused: %s\n", what, c->error);
    else if (c->disconnected)
        fprintf(stderr, "reap-client: %s: the server at %s:%u closed the connection\n", what,
                o->host, o->port);
    else
        fprintf(stderr, "reap-client: %s: no answer from %s:%u within %g s%s\n", what, o->host,
                o->port, o->timeout,
                c->connected ? "" : " (is reap-server running there?)");
    return CLIENT_EXIT_FAILED;
}

static int client_join(client *c)
{
    const client_session_options *o = c->opts;
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__Hello hello = REAP__HELLO__INIT;
    ENetAddress addr;

    if (enet_address_set_host(&addr, o->host) != 0) {
        fprintf(stderr, "reap-client: cannot resolve host '%s'\n", o->host);
        return CLIENT_EXIT_FAILED;
    }
    addr.port = o->port;
    c->peer = enet_host_connect(c->host, &addr, MSG_CHANNEL_COUNT, 0);
    if (c->peer == NULL) {
        fprintf(stderr, "reap-client: cannot start a connection to %s:%u\n", o->host, o->port);
        return CLIENT_EXIT_FAILED;
    }
    if (!client_wait(c, client_cond_connected, NULL, o->timeout))
        return client_fail(c, "connect");
    hello.protocol_version = MSG_PROTOCOL_VERSION;
    hello.player_name = (char *)o->name;
    hello.world = (char *)o->world;
    env.body_case = REAP__ENVELOPE__BODY_HELLO;
    env.hello = &hello;
    if (!client_send(c, MSG_CHANNEL_CONTROL, &env) ||
        !client_wait(c, client_cond_welcomed, NULL, o->timeout))
        return client_fail(c, "hello");
    session_say(c, "joined %s as player %u (server %s:%u)", c->world, c->player_id, o->host,
               o->port);
    return CLIENT_EXIT_OK;
}

static int client_spawn_props(client *c)
{
    const client_session_options *o = c->opts;
    uint32_t requested = 0;
    double t0 = churn_clock();

    while (requested < o->spawn) {
        Reap__Envelope env = REAP__ENVELOPE__INIT;
        Reap__SpawnRequest req = REAP__SPAWN_REQUEST__INIT;
        uint32_t n = o->spawn - requested;

        if (n > CLIENT_SPAWN_BATCH)
            n = CLIENT_SPAWN_BATCH;
        req.actor_class = REAP__ACTOR_CLASS__ACTOR_CLASS_PROP;
        req.count = n;
        env.body_case = REAP__ENVELOPE__BODY_SPAWN_REQUEST;
        env.spawn_request = &req;
        requested += n;
        if (!client_send(c, MSG_CHANNEL_CONTROL, &env) ||
            !client_wait(c, client_cond_acked, &requested, o->timeout))
            return client_fail(c, "spawn");
    }
    if (!client_wait(c, client_cond_spawned, &requested, o->timeout))
        return client_fail(c, "replication of spawned props");
    session_say(c, "spawned %u props: %u acknowledged, %u replicated in %.3f s", o->spawn,
               c->acked,
               client_mirror_count_owned(&c->mirror, REAP__ACTOR_CLASS__ACTOR_CLASS_PROP,
                                         c->player_id),
               churn_clock() - t0);
    return CLIENT_EXIT_OK;
}

static int client_leave(client *c)
{
    const client_session_options *o = c->opts;
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__Goodbye bye = REAP__GOODBYE__INIT;

    if (o->disconnect == CLIENT_DISCONNECT_ABRUPT) {
        /* No goodbye and no ENet disconnect: the server only learns of it by timing out. */
        enet_peer_reset(c->peer);
        c->peer = NULL;
        session_say(c, "left abruptly (the server will time the connection out)");
        return CLIENT_EXIT_OK;
    }
    bye.reason = (char *)"client done";
    env.body_case = REAP__ENVELOPE__BODY_GOODBYE;
    env.goodbye = &bye;
    client_send(c, MSG_CHANNEL_CONTROL, &env);
    /* The server answers a goodbye by disconnecting us. Disconnecting from both ends at once
     * would leave one side waiting for an acknowledgement ENet never sends (a peer that is
     * already disconnecting does not acknowledge the other's disconnect), so we only wait. */
    if (!client_wait(c, client_cond_disconnected, NULL, o->timeout)) {
        fprintf(stderr, "reap-client: goodbye: the server did not close the connection "
                "within %g s\n", o->timeout);
        return CLIENT_EXIT_FAILED;
    }
    session_say(c, "left gracefully");
    return CLIENT_EXIT_OK;
}

static int client_session(client *c)
{
    const client_session_options *o = c->opts;
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__StatsRequest sreq = REAP__STATS_REQUEST__INIT;
    int rc;

    rc = client_join(c);
    if (rc == CLIENT_EXIT_OK && o->spawn > 0)
        rc = client_spawn_props(c);
    if (rc != CLIENT_EXIT_OK)
        return rc;
    if (o->hold > 0) {
        client_wait(c, client_cond_never, NULL, o->hold);
        if (c->disconnected || c->failed)
            return client_fail(c, "hold");
        session_say(c, "held %.1f s: %llu spawns, %llu destroys, %llu updates replicated",
                   o->hold, (unsigned long long)c->spawns_seen,
                   (unsigned long long)c->destroys_seen, (unsigned long long)c->updates_seen);
    }
    env.body_case = REAP__ENVELOPE__BODY_STATS_REQUEST;
    env.stats_request = &sreq;
    if (client_send(c, MSG_CHANNEL_CONTROL, &env) &&
        client_wait(c, client_cond_stats, NULL, o->timeout))
        session_say(c, "server: frame %llu, %u objects, %u players, %llu collections, gc "
                   "interval %g s", (unsigned long long)c->stats.frame, c->stats.objects,
                   c->stats.players, (unsigned long long)c->stats.collections,
                   c->stats.interval_seconds);
    else if (c->disconnected || c->failed)
        return client_fail(c, "stats");
    return client_leave(c);
}

int client_run(const client_session_options *opts, FILE *out)
{
    client *c = calloc(1, sizeof *c);
    int rc;

    if (c == NULL || enet_initialize() != 0) {
        fprintf(stderr, "reap-client: cannot initialise ENet\n");
        free(c);
        return CLIENT_EXIT_FAILED;
    }
    c->opts = opts;
    c->out = out;
    client_mirror_init(&c->mirror);
    c->arena_buf = malloc(CLIENT_ARENA_BYTES);
    c->host = enet_host_create(NULL, 1, MSG_CHANNEL_COUNT, 0, 0);
    if (c->arena_buf == NULL || c->host == NULL) {
        fprintf(stderr, "reap-client: cannot open a UDP socket\n");
        rc = CLIENT_EXIT_FAILED;
    } else {
        msg_arena_init(&c->arena, c->arena_buf, CLIENT_ARENA_BYTES);
        rc = client_session(c);
    }
    /* A session that failed half-way still tells the server, so it need not time us out. */
    if (c->peer != NULL)
        enet_peer_disconnect_now(c->peer, 0);
    if (c->host != NULL)
        enet_host_destroy(c->host);
    enet_deinitialize();
    client_mirror_free(&c->mirror);
    free(c->arena_buf);
    free(c);
    return rc;
}
