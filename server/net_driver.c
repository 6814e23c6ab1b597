/*
 * net_driver.c - ENet host, connections, the message handlers and replication.
 */
#include "net_driver.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "log.h"
#include "net_policy.h"
#include "reap_msg.h"
#include "world.h"

enum {
    NET_ARENA_BYTES = 512 * 1024, /* decoded size of the largest allowed message, with room */
    NET_OUT_BYTES = 64 * 1024,    /* one encoded message */
    NET_SPAWN_CHUNK = 128,        /* actor states per ActorSpawn message */
    NET_MOVE_CHUNK = 64,          /* moves per (unreliable) ActorUpdate message */
    NET_DESTROY_CHUNK = 1024,     /* net ids per ActorDestroy message */
    NET_MAX_PACKET = 256 * 1024,  /* ENet drops anything larger before we see it */
    NET_EVENTS_PER_SERVICE = 4096,
};

typedef enum net_conn_state {
    NET_CONN_FREE = 0,
    NET_CONN_CONNECTED,  /* ENet connected; waiting for Hello */
    NET_CONN_JOINED,     /* in a world with a player controller */
    NET_CONN_CLOSING,    /* goodbye or kick: ignoring input until ENet disconnects */
} net_conn_state;

typedef struct net_connection {
    ENetPeer *peer;
    net_conn_state state;
    uint32_t player_id;
    world *world;                   /* borrowed: worlds are rooted */
    player_controller *controller;  /* reported to the collector by the driver's referencer */
    net_policy_state policy;
    bool needs_snapshot;            /* joined since the last replication */
    bool said_goodbye;
    bool kicked;
    char name[PLAYER_NAME_MAX];
    char address[64];
    double connected_at;            /* engine time of the ENet connect (hello deadline) */
    bool oversize_reported;         /* a packet ENet will drop was refused: which one */
    uint16_t oversize_seq;
} net_connection;

struct net_driver {
    engine *engine;
    ENetHost *host;
    uv_poll_t poll;
    bool poll_started;
    net_connection *conns;          /* host->peerCount entries, indexed like host->peers */
    uint32_t conn_count;
    uint32_t player_count;
    uint32_t next_player_id;
    gc_referencer *referencer;
    net_driver_counters counters;
    msg_arena arena;
    void *arena_buf;
    uint8_t *out_buf;
    /* Replication scratch, reused every frame. */
    Reap__ActorState states[NET_SPAWN_CHUNK];
    Reap__ActorState *state_ptrs[NET_SPAWN_CHUNK];
    Reap__ActorMove moves[NET_MOVE_CHUNK];
    Reap__ActorMove *move_ptrs[NET_MOVE_CHUNK];
    uint64_t *ids;                  /* spawn ack net ids */
    uint32_t ids_cap;
    actor_snapshot *snap;           /* a new player's snapshot */
    uint32_t snap_count, snap_cap;
    uint32_t move_count;
    world *move_world;
    uint32_t max_players;           /* the host has one peer more, to refuse the next politely */
    double next_hello_sweep;
};

/* ENet's intercept hook has no user pointer; there is one host per process. */
static net_driver *net_intercept_driver;

/* ---- garbage datagrams ------------------------------------------------------------------ */

bool net_datagram_is_garbage(const ENetHost *host, const ENetAddress *from, const uint8_t *data,
                             size_t len)
{
    uint16_t raw, peer_id, flags, session;
    size_t header_size;
    uint8_t command;

    if (len < 2)
        return true;
    raw = (uint16_t)((data[0] << 8) | data[1]);
    flags = raw & ENET_PROTOCOL_HEADER_FLAG_MASK;
    session = (uint16_t)((raw & ENET_PROTOCOL_HEADER_SESSION_MASK) >>
                         ENET_PROTOCOL_HEADER_SESSION_SHIFT);
    peer_id = raw & (uint16_t)~(ENET_PROTOCOL_HEADER_FLAG_MASK | ENET_PROTOCOL_HEADER_SESSION_MASK);
    header_size = (flags & ENET_PROTOCOL_HEADER_FLAG_SENT_TIME) ? 4 : 2;
    if ((flags & ENET_PROTOCOL_HEADER_FLAG_COMPRESSED) && host->compressor.context == NULL &&
        host->compressor.decompress == NULL)
        return true;
    if (len < header_size + sizeof(ENetProtocolCommandHeader))
        return true;
    command = data[header_size] & ENET_PROTOCOL_COMMAND_MASK;
    if (command == ENET_PROTOCOL_COMMAND_NONE || command >= ENET_PROTOCOL_COMMAND_COUNT)
        return true;
    if (peer_id == ENET_PROTOCOL_MAXIMUM_PEER_ID)
        return command != ENET_PROTOCOL_COMMAND_CONNECT;
    if (peer_id >= host->peerCount)
        return true;
    {
        const ENetPeer *peer = &host->peers[peer_id];

        if (peer->state == ENET_PEER_STATE_DISCONNECTED || peer->state == ENET_PEER_STATE_ZOMBIE)
            return true;
        if (peer->address.port != from->port || peer->address.host != from->host)
            return true;
        if (peer->outgoingPeerID < ENET_PROTOCOL_MAXIMUM_PEER_ID &&
            session != peer->incomingSessionID)
            return true;
    }
    return false;
}

/* If a (well-formed) datagram carries a fragment of a packet larger than limit, says which
 * peer sends it, the packet's size and its sequence number. ENet drops packets over its own
 * maximum without a word (and without acknowledging them, so the sender keeps resending);
 * spotting them here lets the sender hear why, once per packet. */
static bool net_datagram_oversize(const uint8_t *data, size_t len, size_t limit,
                                  uint16_t *out_peer, uint32_t *out_total, uint16_t *out_seq)
{
    ENetProtocolSendFragment frag;
    uint16_t raw;
    size_t header_size;
    uint8_t command;

    if (len < 2)
        return false;
    raw = (uint16_t)((data[0] << 8) | data[1]);
    if (raw & ENET_PROTOCOL_HEADER_FLAG_COMPRESSED)
        return false;
    header_size = (raw & ENET_PROTOCOL_HEADER_FLAG_SENT_TIME) ? 4 : 2;
    if (len < header_size + sizeof frag)
        return false;
    command = data[header_size] & ENET_PROTOCOL_COMMAND_MASK;
    if (command != ENET_PROTOCOL_COMMAND_SEND_FRAGMENT &&
        command != ENET_PROTOCOL_COMMAND_SEND_UNRELIABLE_FRAGMENT)
        return false;
    memcpy(&frag, data + header_size, sizeof frag);
    *out_total = ENET_NET_TO_HOST_32(frag.totalLength);
    *out_seq = ENET_NET_TO_HOST_16(frag.startSequenceNumber);
    *out_peer = raw & (uint16_t)~(ENET_PROTOCOL_HEADER_FLAG_MASK |
                                  ENET_PROTOCOL_HEADER_SESSION_MASK);
    return *out_total > limit;
}

static void net_reject(net_driver *nd, net_connection *conn, Reap__ErrorCode code,
                       uint32_t seq, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int ENET_CALLBACK net_intercept_cb(ENetHost *host, ENetEvent *event)
{
    net_driver *nd = net_intercept_driver;
    uint32_t total;
    uint16_t peer_id, seq;

    (void)event;
    if (nd == NULL)
        return 0;
    if (net_datagram_is_garbage(host, &host->receivedAddress, host->receivedData,
                                host->receivedDataLength)) {
        nd->counters.bad_datagrams++;
        return 1; /* swallow it: ENet would ignore it anyway */
    }
    /* Packets up to ENet's maximum reach net_on_receive, which refuses those over
     * net.MaxMessageBytes; only what ENet itself would drop silently is caught here. */
    if (net_datagram_oversize(host->receivedData, host->receivedDataLength,
                              host->maximumPacketSize, &peer_id, &total, &seq) &&
        peer_id < host->peerCount) {
        net_connection *conn = &nd->conns[peer_id];
        if ((conn->state == NET_CONN_CONNECTED || conn->state == NET_CONN_JOINED) &&
            !(conn->oversize_reported && conn->oversize_seq == seq)) {
            conn->oversize_reported = true;
            conn->oversize_seq = seq;
            nd->counters.oversize_packets++;
            net_reject(nd, conn, REAP__ERROR_CODE__ERROR_CODE_OVERSIZE, 0,
                       "message larger than the size limit (%u bytes, see net.MaxMessageBytes)",
                       total);
        }
    }
    return 0;
}

/* ---- sending ------------------------------------------------------------------------ */

static ENetPacket *net_packet_from(net_driver *nd, const Reap__Envelope *env, uint8_t channel)
{
    size_t len;
    msg_result r = msg_encode(env, nd->out_buf, NET_OUT_BYTES, &len);

    if (r != MSG_OK) {
        log_error("net: cannot encode %s: %s", msg_body_name(env->body_case), msg_result_str(r));
        return NULL;
    }
    return enet_packet_create(nd->out_buf, len,
                              channel == MSG_CHANNEL_UPDATES ? 0 : ENET_PACKET_FLAG_RELIABLE);
}

/* Sends a packet to one peer. ENet owns the packet once a send succeeds; if none did, it is
 * ours to destroy. */
static void net_packet_finish(net_driver *nd, ENetPacket *packet, uint32_t sent)
{
    nd->counters.packets_out += sent;
    if (packet->referenceCount == 0)
        enet_packet_destroy(packet);
}

static void net_send(net_driver *nd, net_connection *conn, uint8_t channel,
                     const Reap__Envelope *env)
{
    ENetPacket *packet = net_packet_from(nd, env, channel);

    if (packet == NULL)
        return;
    net_packet_finish(nd, packet, enet_peer_send(conn->peer, channel, packet) == 0 ? 1 : 0);
}

static void net_send_error(net_driver *nd, net_connection *conn, Reap__ErrorCode code,
                           const char *text, uint32_t seq)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__Error err = REAP__ERROR__INIT;

    err.code = code;
    err.text = (char *)text;
    err.request_seq = seq;
    env.seq = seq;
    env.body_case = REAP__ENVELOPE__BODY_ERROR;
    env.error = &err;
    net_send(nd, conn, MSG_CHANNEL_CONTROL, &env);
}

static net_policy_limits net_limits(const net_driver *nd)
{
    const cvar_registry *cv = &nd->engine->cvars;
    net_policy_limits lim;

    lim.max_actors_per_player = (uint32_t)cvar_get_int(cv, CVAR_NET_MAX_ACTORS_PER_PLAYER);
    lim.max_spawn_per_request = (uint32_t)cvar_get_int(cv, CVAR_NET_MAX_SPAWN_PER_REQUEST);
    lim.spawn_rate = cvar_get(cv, CVAR_NET_SPAWN_RATE);
    lim.spawn_burst = cvar_get(cv, CVAR_NET_SPAWN_BURST);
    lim.max_bad_messages = (uint32_t)cvar_get_int(cv, CVAR_NET_MAX_BAD_MESSAGES);
    return lim;
}

/* Answers bad input: an error to this peer, one count, and a disconnect on repeated abuse. */
static void net_reject(net_driver *nd, net_connection *conn, Reap__ErrorCode code,
                       uint32_t seq, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void net_reject(net_driver *nd, net_connection *conn, Reap__ErrorCode code,
                       uint32_t seq, const char *fmt, ...)
{
    net_policy_limits lim = net_limits(nd);
    char text[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    nd->counters.bad_messages++;
    log_debug("net: %s: rejected: %s", conn->address, text);
    net_send_error(nd, conn, code, text, seq);
    if (conn->state != NET_CONN_CLOSING && net_policy_note_bad_message(&conn->policy, &lim)) {
        snprintf(text, sizeof text, "disconnected after %u bad messages (net.MaxBadMessages)",
                 conn->policy.bad_messages);
        net_send_error(nd, conn, REAP__ERROR_CODE__ERROR_CODE_KICKED, text, seq);
        log_warn("net: kicking %s (player %u): %s", conn->address, conn->player_id, text);
        conn->kicked = true;
        conn->state = NET_CONN_CLOSING;
        nd->counters.kicked++;
        enet_peer_disconnect_later(conn->peer, 0);
    }
}

/* ---- connections ------------------------------------------------------------------------ */

static void net_referencer_cb(void *data, gc_collector *collector)
{
    net_driver *nd = data;

    for (size_t i = 0; i < nd->host->peerCount; i++)
        if (nd->conns[i].controller != NULL)
            gc_collector_add_ref(collector, (void **)&nd->conns[i].controller);
}

static void net_leave_world(net_driver *nd, net_connection *conn, const char *reason)
{
    world *w = conn->world;

    if (w == NULL)
        return;
    if (conn->controller != NULL) {
        uint32_t owned = actor_owned_count(conn->controller);
        actor_destroy(w, &conn->controller->base);
        log_info("player %u '%s' left %s (%s); destroyed its controller, pawn and %u actors",
                 conn->player_id, conn->name, w->name, reason, owned);
    }
    conn->controller = NULL;
    conn->world = NULL;
    w->connections--;
    nd->player_count--;
    engine_player_left(nd->engine, conn->player_id, conn->name);
}

static void net_on_connect(net_driver *nd, ENetPeer *peer)
{
    net_connection *conn = &nd->conns[peer - nd->host->peers];
    net_policy_limits lim = net_limits(nd);
    enet_uint32 timeout_ms =
        (enet_uint32)(cvar_get(&nd->engine->cvars, CVAR_NET_CONNECTION_TIMEOUT) * 1000.0);
    char ip[48];

    memset(conn, 0, sizeof *conn);
    conn->peer = peer;
    conn->state = NET_CONN_CONNECTED;
    net_policy_init(&conn->policy, &lim, engine_now(nd->engine));
    if (enet_address_get_host_ip(&peer->address, ip, sizeof ip) != 0)
        snprintf(ip, sizeof ip, "?");
    snprintf(conn->address, sizeof conn->address, "%s:%u", ip, peer->address.port);
    conn->connected_at = engine_now(nd->engine);
    peer->data = conn;
    enet_peer_timeout(peer, 0, timeout_ms, timeout_ms);
    nd->conn_count++;
    nd->counters.connects++;
    log_debug("net: connection from %s", conn->address);
    if (nd->conn_count > nd->max_players) {
        /* The spare peer: a full server says so instead of staying silent. */
        net_send_error(nd, conn, REAP__ERROR_CODE__ERROR_CODE_SERVER_FULL,
                       "server full", 0);
        conn->state = NET_CONN_CLOSING;
        conn->kicked = true;
        nd->counters.refused_full++;
        enet_peer_disconnect_later(peer, 0);
    }
}

/* Connections that never say hello give their slot back. */
static void net_sweep_silent(net_driver *nd)
{
    double now = engine_now(nd->engine);
    double limit = cvar_get(&nd->engine->cvars, CVAR_NET_HELLO_TIMEOUT);

    if (now < nd->next_hello_sweep)
        return;
    nd->next_hello_sweep = now + 0.25;
    for (size_t i = 0; i < nd->host->peerCount; i++) {
        net_connection *c = &nd->conns[i];
        char text[96];

        if (c->state != NET_CONN_CONNECTED || now - c->connected_at < limit)
            continue;
        snprintf(text, sizeof text, "no hello within %g s (net.HelloTimeout)", limit);
        net_send_error(nd, c, REAP__ERROR_CODE__ERROR_CODE_KICKED, text, 0);
        log_info("net: dropping %s: %s", c->address, text);
        c->kicked = true;
        c->state = NET_CONN_CLOSING;
        nd->counters.kicked++;
        nd->counters.bad_messages++;
        enet_peer_disconnect_later(c->peer, 0);
    }
}

static void net_on_disconnect(net_driver *nd, ENetPeer *peer)
{
    net_connection *conn = peer->data;
    const char *reason;

    if (conn == NULL)
        return;
    if (conn->kicked)
        reason = "kicked";
    else if (conn->said_goodbye)
        reason = "goodbye";
    else {
        reason = "connection lost";
        nd->counters.timeouts++;
    }
    net_leave_world(nd, conn, reason);
    log_debug("net: %s disconnected (%s)", conn->address, reason);
    conn->state = NET_CONN_FREE;
    conn->peer = NULL;
    peer->data = NULL;
    nd->conn_count--;
    nd->counters.disconnects++;
}

/* ---- message handlers --------------------------------------------------------------------- */

static bool net_name_is_valid(const char *name)
{
    size_t n = strlen(name);

    if (n >= PLAYER_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)name[i] < 0x20 || (unsigned char)name[i] == 0x7f)
            return false;
    return true;
}

static void net_handle_hello(net_driver *nd, net_connection *conn, const Reap__Envelope *env)
{
    const Reap__Hello *h = env->hello;
    Reap__Envelope out = REAP__ENVELOPE__INIT;
    Reap__Welcome welcome = REAP__WELCOME__INIT;
    player_controller *pc;
    world *w;
    gc_result r;

    if (conn->state != NET_CONN_CONNECTED) {
        net_reject(nd, conn, REAP__ERROR_CODE__ERROR_CODE_UNEXPECTED, env->seq,
                   "hello received twice");
        return;
    }
    if (h->protocol_version != MSG_PROTOCOL_VERSION) {
        net_reject(nd, conn, REAP__ERROR_CODE__ERROR_CODE_VERSION, env->seq,
                   "protocol version %u is not supported (this server speaks %u)",
                   h->protocol_version, MSG_PROTOCOL_VERSION);
        return;
    }
    if (!net_name_is_valid(h->player_name)) {
        net_reject(nd, conn, REAP__ERROR_CODE__ERROR_CODE_BAD_REQUEST, env->seq,
                   "player name must be printable and shorter than %d bytes", PLAYER_NAME_MAX);
        return;
    }
    w = engine_find_world(nd->engine, h->world);
    if (w == NULL) {
        net_reject(nd, conn, REAP__ERROR_CODE__ERROR_CODE_NO_SUCH_WORLD, env->seq,
                   "no world named '%.40s' (this server has World0..World%u)", h->world,
                   nd->engine->world_count - 1);
        return;
    }
    conn->player_id = ++nd->next_player_id;
    if (h->player_name[0] != '\0')
        snprintf(conn->name, sizeof conn->name, "%s", h->player_name);
    else
        snprintf(conn->name, sizeof conn->name, "player%u", conn->player_id);
    r = actor_spawn_player(w, conn->player_id, conn->name, &pc);
    if (r != GC_OK) {
        log_error("net: cannot spawn player for %s: %s", conn->address, gc_result_str(r));
        net_send_error(nd, conn, REAP__ERROR_CODE__ERROR_CODE_SERVER_FULL, "cannot spawn player",
                       env->seq);
        return;
    }
    conn->controller = pc;
    conn->world = w;
    conn->state = NET_CONN_JOINED;
    conn->needs_snapshot = true;
    w->connections++;
    nd->player_count++;

    welcome.player_id = conn->player_id;
    welcome.world = w->name;
    welcome.tick_hz = nd->engine->opts.tick_hz;
    welcome.controller_net_id = pc->base.net_id;
    welcome.pawn_net_id = pc->pawn != NULL ? pc->pawn->base.net_id : 0;
    welcome.server_version = (char *)REAP_VERSION;
    out.seq = env->seq;
    out.body_case = REAP__ENVELOPE__BODY_WELCOME;
    out.welcome = &welcome;
    net_send(nd, conn, MSG_CHANNEL_CONTROL, &out);
    log_info("player %u '%s' joined %s from %s", conn->player_id, conn->name, w->name,
             conn->address);
    engine_player_joined(nd->engine, conn->player_id, conn->name);
}

static bool net_ids_reserve(net_driver *nd, uint32_t n)
{
    uint64_t *ids;

    if (n <= nd->ids_cap)
        return true;
    ids = realloc(nd->ids, (size_t)n * sizeof *ids);
    if (ids == NULL)
        return false;
    nd->ids = ids;
    nd->ids_cap = n;
    return true;
}

static void net_handle_spawn(net_driver *nd, net_connection *conn, const Reap__Envelope *env)
{
    const Reap__SpawnRequest *req = env->spawn_request;
    net_policy_limits lim = net_limits(nd);
    Reap__Envelope out = REAP__ENVELOPE__INIT;
    Reap__SpawnAck ack = REAP__SPAWN_ACK__INIT;
    uint32_t owned = actor_owned_count(conn->controller);
    uint32_t spawned = 0;
    actor_kind kind;

    if (req->actor_class == REAP__ACTOR_CLASS__ACTOR_CLASS_PROP)
        kind = ACTOR_KIND_PROP;
    else if (req->actor_class == REAP__ACTOR_CLASS__ACTOR_CLASS_PROJECTILE)
        kind = ACTOR_KIND_PROJECTILE;
    else {
        net_reject(nd, conn, REAP__ERROR_CODE__ERROR_CODE_BAD_REQUEST, env->seq,
                   "cannot spawn actor class %d: clients may spawn PROP (%d) or PROJECTILE (%d)",
                   (int)req->actor_class, REAP__ACTOR_CLASS__ACTOR_CLASS_PROP,
                   REAP__ACTOR_CLASS__ACTOR_CLASS_PROJECTILE);
        return;
    }
    switch (net_policy_check_spawn(&conn->policy, &lim, engine_now(nd->engine), owned,
                                   req->count)) {
    case NET_POLICY_ALLOW:
        break;
    case NET_POLICY_BAD_COUNT:
        net_reject(nd, conn, REAP__ERROR_CODE__ERROR_CODE_BAD_REQUEST, env->seq,
                   "spawn count %u is out of range [1, %u] (net.MaxSpawnPerRequest)", req->count,
                   lim.max_spawn_per_request);
        return;
    case NET_POLICY_OVER_LIMIT:
        net_reject(nd, conn, REAP__ERROR_CODE__ERROR_CODE_LIMIT, env->seq,
                   "you own %u actors; %u more would exceed net.MaxActorsPerPlayer=%u", owned,
                   req->count, lim.max_actors_per_player);
        return;
    case NET_POLICY_OVER_RATE:
        net_reject(nd, conn, REAP__ERROR_CODE__ERROR_CODE_RATE, env->seq,
                   "spawn rate exceeded (net.SpawnRatePerSecond=%g, net.SpawnBurst=%g)",
                   lim.spawn_rate, lim.spawn_burst);
        return;
    }
    if (!net_ids_reserve(nd, req->count)) {
        net_send_error(nd, conn, REAP__ERROR_CODE__ERROR_CODE_UNSPECIFIED, "out of memory",
                       env->seq);
        return;
    }
    while (spawned < req->count) {
        actor *a;
        gc_result r = actor_spawn(conn->world, kind, conn->controller, &a);
        if (r != GC_OK) {
            log_error("net: spawn for player %u failed after %u of %u: %s", conn->player_id,
                      spawned, req->count, gc_result_str(r));
            break;
        }
        nd->ids[spawned++] = a->net_id;
    }
    ack.count = spawned;
    ack.n_net_ids = spawned;
    ack.net_ids = nd->ids;
    out.seq = env->seq;
    out.body_case = REAP__ENVELOPE__BODY_SPAWN_ACK;
    out.spawn_ack = &ack;
    net_send(nd, conn, MSG_CHANNEL_CONTROL, &out);
    log_debug("player %u spawned %u %s", conn->player_id, spawned, actor_kind_name(kind));
}

static void net_handle_destroy(net_driver *nd, net_connection *conn, const Reap__Envelope *env)
{
    const Reap__DestroyRequest *req = env->destroy_request;
    Reap__Envelope out = REAP__ENVELOPE__INIT;
    Reap__DestroyAck ack = REAP__DESTROY_ACK__INIT;
    uint32_t destroyed = 0, refused = 0;

    for (size_t i = 0; i < req->n_net_ids; i++) {
        actor *a = actor_find_owned(conn->controller, req->net_ids[i]);
        if (a == NULL) {
            refused++;
            continue;
        }
        actor_destroy(conn->world, a);
        destroyed++;
    }
    ack.count = destroyed;
    out.seq = env->seq;
    out.body_case = REAP__ENVELOPE__BODY_DESTROY_ACK;
    out.destroy_ack = &ack;
    net_send(nd, conn, MSG_CHANNEL_CONTROL, &out);
    if (refused > 0 || req->n_net_ids == 0)
        net_reject(nd, conn, REAP__ERROR_CODE__ERROR_CODE_NOT_OWNER, env->seq,
                   "%u of %zu net ids are not actors you own", refused, req->n_net_ids);
}

static void net_handle_stats(net_driver *nd, net_connection *conn, const Reap__Envelope *env)
{
    engine *e = nd->engine;
    Reap__Envelope out = REAP__ENVELOPE__INIT;
    Reap__StatsReply reply = REAP__STATS_REPLY__INIT;
    gc_stats st;

    gc_stats_get(e->heap, &st);
    reply.frame = e->frame;
    reply.objects = gc_object_count(e->heap);
    reply.players = nd->player_count;
    reply.collections = st.collections;
    reply.objects_destroyed = st.objects_destroyed;
    reply.interval_seconds = e->gc.interval;
    reply.time_since_last_purge_seconds = e->gc.time_since_last_purge;
    reply.world_actors = world_actor_count(conn->world);
    out.seq = env->seq;
    out.body_case = REAP__ENVELOPE__BODY_STATS_REPLY;
    out.stats_reply = &reply;
    net_send(nd, conn, MSG_CHANNEL_CONTROL, &out);
}

static void net_handle_ping(net_driver *nd, net_connection *conn, const Reap__Envelope *env)
{
    Reap__Envelope out = REAP__ENVELOPE__INIT;
    Reap__Pong pong = REAP__PONG__INIT;

    pong.nonce = env->ping->nonce;
    pong.frame = nd->engine->frame;
    out.seq = env->seq;
    out.body_case = REAP__ENVELOPE__BODY_PONG;
    out.pong = &pong;
    net_send(nd, conn, MSG_CHANNEL_CONTROL, &out);
}

static void net_handle_goodbye(net_driver *nd, net_connection *conn)
{
    conn->said_goodbye = true;
    net_leave_world(nd, conn, "goodbye");
    conn->state = NET_CONN_CLOSING;
    enet_peer_disconnect_later(conn->peer, 0);
}

static void net_on_receive(net_driver *nd, net_connection *conn, const ENetPacket *packet)
{
    size_t max_bytes = (size_t)cvar_get_int(&nd->engine->cvars, CVAR_NET_MAX_MESSAGE_BYTES);
    Reap__Envelope *env = NULL;
    msg_result r;

    nd->counters.messages_in++;
    if (conn == NULL || conn->state == NET_CONN_CLOSING || conn->state == NET_CONN_FREE)
        return;
    msg_arena_reset(&nd->arena);
    r = msg_decode(&nd->arena, packet->data, packet->dataLength, max_bytes, &env);
    if (r != MSG_OK) {
        net_reject(nd, conn, msg_result_error_code(r), 0, "%s (%zu bytes%s)", msg_result_str(r),
                   packet->dataLength, r == MSG_E_OVERSIZE ? ", see net.MaxMessageBytes" : "");
        return;
    }
    if (env->body_case == REAP__ENVELOPE__BODY_HELLO) {
        net_handle_hello(nd, conn, env);
        return;
    }
    if (env->body_case == REAP__ENVELOPE__BODY_GOODBYE) {
        net_handle_goodbye(nd, conn);
        return;
    }
    if (conn->state != NET_CONN_JOINED) {
        net_reject(nd, conn, REAP__ERROR_CODE__ERROR_CODE_UNEXPECTED, env->seq,
                   "'%s' before hello: say hello first", msg_body_name(env->body_case));
        return;
    }
    switch (env->body_case) {
    case REAP__ENVELOPE__BODY_SPAWN_REQUEST: net_handle_spawn(nd, conn, env); break;
    case REAP__ENVELOPE__BODY_DESTROY_REQUEST: net_handle_destroy(nd, conn, env); break;
    case REAP__ENVELOPE__BODY_STATS_REQUEST: net_handle_stats(nd, conn, env); break;
    case REAP__ENVELOPE__BODY_PING: net_handle_ping(nd, conn, env); break;
    default:
        net_reject(nd, conn, REAP__ERROR_CODE__ERROR_CODE_UNEXPECTED, env->seq,
                   "'%s' is a server-to-client message", msg_body_name(env->body_case));
        break;
    }
}

void net_driver_service(net_driver *nd)
{
    ENetEvent ev;
    int budget = NET_EVENTS_PER_SERVICE;
    int r = 0;

    /* A flood must not stall the frame: the rest waits for the next call (the poll handle is
     * level-triggered, so it fires again). */
    while (budget-- > 0 && (r = enet_host_service(nd->host, &ev, 0)) > 0) {
        switch (ev.type) {
        case ENET_EVENT_TYPE_CONNECT:
            net_on_connect(nd, ev.peer);
            break;
        case ENET_EVENT_TYPE_RECEIVE:
            net_on_receive(nd, ev.peer->data, ev.packet);
            enet_packet_destroy(ev.packet);
            break;
        case ENET_EVENT_TYPE_DISCONNECT:
            net_on_disconnect(nd, ev.peer);
            break;
        case ENET_EVENT_TYPE_NONE:
            break;
        }
    }
    if (r < 0)
        log_warn("net: enet_host_service failed");
    net_sweep_silent(nd);
}

/* ---- replication ------------------------------------------------------------------------ */

/* Which joined connections of a world a broadcast goes to. */
typedef enum net_audience {
    NET_TO_ALL,       /* every joined connection */
    NET_TO_SETTLED,   /* those that already have their snapshot (deltas) */
    NET_TO_NEW,       /* those still waiting for their snapshot */
} net_audience;

/* Sends one envelope to an audience of w's connections: encoded once, one packet shared by
 * every peer. */
static void net_broadcast(net_driver *nd, const world *w, uint8_t channel,
                          const Reap__Envelope *env, net_audience to)
{
    ENetPacket *packet = NULL;
    uint32_t sent = 0;

    for (size_t i = 0; i < nd->host->peerCount; i++) {
        net_connection *c = &nd->conns[i];

        if (c->state != NET_CONN_JOINED || c->world != w ||
            (to == NET_TO_SETTLED && c->needs_snapshot) ||
            (to == NET_TO_NEW && !c->needs_snapshot))
            continue;
        if (packet == NULL && (packet = net_packet_from(nd, env, channel)) == NULL)
            return;
        if (enet_peer_send(c->peer, channel, packet) == 0)
            sent++;
    }
    if (packet != NULL)
        net_packet_finish(nd, packet, sent);
}

static void net_fill_state(Reap__ActorState *st, const actor_snapshot *s)
{
    reap__actor_state__init(st);
    st->net_id = s->net_id;
    st->actor_class = (Reap__ActorClass)s->kind;
    st->owner_player_id = s->owner_player_id;
    st->x = s->pos[0];
    st->y = s->pos[1];
    st->z = s->pos[2];
    st->name = (char *)s->name;
}

/* Sends actor states in chunks to an audience of w's connections. */
static void net_send_spawns(net_driver *nd, const world *w, net_audience to,
                            const actor_snapshot *snaps, uint32_t count)
{
    for (uint32_t at = 0; at < count; at += NET_SPAWN_CHUNK) {
        uint32_t n = count - at < NET_SPAWN_CHUNK ? count - at : NET_SPAWN_CHUNK;
        Reap__Envelope env = REAP__ENVELOPE__INIT;
        Reap__ActorSpawn spawn = REAP__ACTOR_SPAWN__INIT;

        for (uint32_t i = 0; i < n; i++) {
            net_fill_state(&nd->states[i], &snaps[at + i]);
            nd->state_ptrs[i] = &nd->states[i];
        }
        spawn.n_actors = n;
        spawn.actors = nd->state_ptrs;
        env.body_case = REAP__ENVELOPE__BODY_ACTOR_SPAWN;
        env.actor_spawn = &spawn;
        net_broadcast(nd, w, MSG_CHANNEL_REPLICATION, &env, to);
    }
}

static void net_send_destroys(net_driver *nd, const world *w)
{
    for (uint32_t at = 0; at < w->destroyed_count; at += NET_DESTROY_CHUNK) {
        uint32_t n = w->destroyed_count - at;
        Reap__Envelope env = REAP__ENVELOPE__INIT;
        Reap__ActorDestroy d = REAP__ACTOR_DESTROY__INIT;

        if (n > NET_DESTROY_CHUNK)
            n = NET_DESTROY_CHUNK;
        d.n_net_ids = n;
        d.net_ids = &w->destroyed[at];
        env.body_case = REAP__ENVELOPE__BODY_ACTOR_DESTROY;
        env.actor_destroy = &d;
        net_broadcast(nd, w, MSG_CHANNEL_REPLICATION, &env, NET_TO_SETTLED);
    }
}

static void net_snapshot_actor_cb(actor *a, void *userdata)
{
    net_driver *nd = userdata;

    if (!a->replicates)
        return;
    if (nd->snap_count == nd->snap_cap) {
        uint32_t cap = nd->snap_cap ? nd->snap_cap * 2 : 256;
        actor_snapshot *s = realloc(nd->snap, (size_t)cap * sizeof *s);
        if (s == NULL)
            return;
        nd->snap = s;
        nd->snap_cap = cap;
    }
    actor_snapshot_fill(a, &nd->snap[nd->snap_count++]);
}

static void net_flush_moves(net_driver *nd)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__ActorUpdate upd = REAP__ACTOR_UPDATE__INIT;

    if (nd->move_count == 0)
        return;
    upd.frame = nd->engine->frame;
    upd.n_moves = nd->move_count;
    upd.moves = nd->move_ptrs;
    env.body_case = REAP__ENVELOPE__BODY_ACTOR_UPDATE;
    env.actor_update = &upd;
    net_broadcast(nd, nd->move_world, MSG_CHANNEL_UPDATES, &env, NET_TO_ALL);
    nd->move_count = 0;
}

static void net_move_actor_cb(actor *a, void *userdata)
{
    net_driver *nd = userdata;
    Reap__ActorMove *m;

    if (!a->moves || !a->replicates)
        return;
    m = &nd->moves[nd->move_count];
    reap__actor_move__init(m);
    m->net_id = a->net_id;
    m->x = a->pos[0];
    m->y = a->pos[1];
    m->z = a->pos[2];
    nd->move_ptrs[nd->move_count++] = m;
    if (nd->move_count == NET_MOVE_CHUNK)
        net_flush_moves(nd);
}

void net_driver_replicate(net_driver *nd)
{
    engine *e = nd->engine;

    for (uint32_t wi = 0; wi < e->world_count; wi++) {
        world *w = e->worlds[wi];

        if (w->connections > 0) {
            bool any_new = false;

            net_send_spawns(nd, w, NET_TO_SETTLED, w->spawned, w->spawned_count);
            net_send_destroys(nd, w);
            /* Players who joined this frame get the whole world, built and encoded once
             * however many joined at the same time. */
            for (size_t i = 0; i < nd->host->peerCount && !any_new; i++)
                any_new = nd->conns[i].state == NET_CONN_JOINED && nd->conns[i].world == w &&
                          nd->conns[i].needs_snapshot;
            if (any_new) {
                nd->snap_count = 0;
                world_foreach_actor(w, net_snapshot_actor_cb, nd);
                net_send_spawns(nd, w, NET_TO_NEW, nd->snap, nd->snap_count);
                for (size_t i = 0; i < nd->host->peerCount; i++)
                    if (nd->conns[i].world == w)
                        nd->conns[i].needs_snapshot = false;
            }
            nd->move_world = w;
            nd->move_count = 0;
            world_foreach_actor(w, net_move_actor_cb, nd);
            net_flush_moves(nd);
        }
        world_outbox_reset(w);
    }
    enet_host_flush(nd->host);
}

/* ---- lifetime ----------------------------------------------------------------------------- */

static void net_poll_cb(uv_poll_t *handle, int status, int events)
{
    net_driver *nd = handle->data;

    (void)events;
    if (status < 0) {
        log_warn("net: poll error: %s", uv_strerror(status));
        return;
    }
    net_driver_service(nd);
}

int net_driver_create(engine *e, const char *bind, uint32_t port, uint32_t max_players,
                      net_driver **out_nd, char *err, size_t err_size)
{
    net_driver *nd = calloc(1, sizeof *nd);
    ENetAddress addr;
    int r;

    if (nd == NULL) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    nd->engine = e;
    memset(&addr, 0, sizeof addr);
    if (enet_address_set_host_ip(&addr, bind) != 0) {
        snprintf(err, err_size, "bad bind address '%s': expected an IPv4 address", bind);
        free(nd);
        return -1;
    }
    addr.port = (enet_uint16)port;
    nd->max_players = max_players;
    nd->host = enet_host_create(&addr, max_players + 1, MSG_CHANNEL_COUNT, 0, 0);
    if (nd->host == NULL) {
        snprintf(err, err_size, "cannot listen on udp %s:%u (port in use or address not local?)",
                 bind, port);
        free(nd);
        return -1;
    }
    nd->host->maximumPacketSize = NET_MAX_PACKET;
    nd->host->intercept = net_intercept_cb;
    if (enet_socket_get_address(nd->host->socket, &nd->host->address) != 0)
        nd->host->address.port = (enet_uint16)port;
    nd->conns = calloc(nd->host->peerCount, sizeof *nd->conns);
    nd->arena_buf = malloc(NET_ARENA_BYTES);
    nd->out_buf = malloc(NET_OUT_BYTES);
    if (nd->conns == NULL || nd->arena_buf == NULL || nd->out_buf == NULL ||
        gc_referencer_add(e->heap, "NetDriver", net_referencer_cb, nd, &nd->referencer) != GC_OK) {
        snprintf(err, err_size, "out of memory");
        goto fail;
    }
    msg_arena_init(&nd->arena, nd->arena_buf, NET_ARENA_BYTES);
    r = uv_poll_init(e->loop, &nd->poll, nd->host->socket);
    if (r == 0)
        r = uv_poll_start(&nd->poll, UV_READABLE, net_poll_cb);
    if (r != 0) {
        snprintf(err, err_size, "cannot watch the udp socket: %s", uv_strerror(r));
        goto fail;
    }
    nd->poll.data = nd;
    nd->poll_started = true;
    net_intercept_driver = nd;
    *out_nd = nd;
    return 0;
fail:
    if (nd->referencer != NULL)
        gc_referencer_remove(e->heap, nd->referencer);
    free(nd->conns);
    free(nd->arena_buf);
    free(nd->out_buf);
    enet_host_destroy(nd->host);
    free(nd);
    return -1;
}

uint32_t net_driver_port(const net_driver *nd)
{
    return nd->host->address.port;
}

void net_driver_shutdown(net_driver *nd, const char *reason, double timeout)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__Goodbye bye = REAP__GOODBYE__INIT;
    uint64_t deadline = uv_hrtime() + (uint64_t)(timeout * 1e9);
    uint32_t told = 0;
    ENetEvent ev;

    bye.reason = (char *)reason;
    env.body_case = REAP__ENVELOPE__BODY_GOODBYE;
    env.goodbye = &bye;
    for (size_t i = 0; i < nd->host->peerCount; i++) {
        net_connection *c = &nd->conns[i];

        if (c->state == NET_CONN_FREE)
            continue;
        net_send(nd, c, MSG_CHANNEL_CONTROL, &env);
        net_leave_world(nd, c, "server shutdown");
        c->state = NET_CONN_CLOSING;
        c->said_goodbye = true;
        enet_peer_disconnect_later(c->peer, 0);
        told++;
    }
    /* Give the goodbyes a moment to be acknowledged; a stop must not hang on a dead peer.
     * Nobody new gets in meanwhile: a connection completed now is told goodbye at once. */
    while (nd->conn_count > 0 && uv_hrtime() < deadline) {
        uint64_t left_ms = (deadline - uv_hrtime()) / 1000000u;
        if (enet_host_service(nd->host, &ev, left_ms > 50 ? 50 : (enet_uint32)left_ms) <= 0)
            continue;
        if (ev.type == ENET_EVENT_TYPE_DISCONNECT) {
            net_on_disconnect(nd, ev.peer);
        } else if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
            enet_packet_destroy(ev.packet);
        } else if (ev.type == ENET_EVENT_TYPE_CONNECT) {
            net_on_connect(nd, ev.peer);
            net_connection *c = ev.peer->data;
            if (c->state != NET_CONN_CLOSING) {
                net_send(nd, c, MSG_CHANNEL_CONTROL, &env);
                c->state = NET_CONN_CLOSING;
                c->said_goodbye = true;
                enet_peer_disconnect_later(c->peer, 0);
            }
        }
    }
    for (size_t i = 0; i < nd->host->peerCount; i++) {
        if (nd->conns[i].state != NET_CONN_FREE) {
            enet_peer_reset(nd->conns[i].peer);
            nd->conns[i].state = NET_CONN_FREE;
        }
    }
    nd->conn_count = 0;
    if (told > 0)
        log_info("net: said goodbye to %u client(s)", told);
}

static void net_close_cb(uv_handle_t *handle)
{
    net_driver *nd = handle->data;

    free(nd);
}

void net_driver_close(net_driver *nd)
{
    if (nd == NULL)
        return;
    if (net_intercept_driver == nd)
        net_intercept_driver = NULL;
    gc_referencer_remove(nd->engine->heap, nd->referencer);
    /* Stop watching the socket before ENet closes it. */
    if (nd->poll_started)
        uv_poll_stop(&nd->poll);
    enet_host_destroy(nd->host);
    nd->host = NULL;
    free(nd->conns);
    free(nd->arena_buf);
    free(nd->out_buf);
    free(nd->ids);
    free(nd->snap);
    nd->conns = NULL;
    if (nd->poll_started)
        uv_close((uv_handle_t *)&nd->poll, net_close_cb);
    else
        free(nd);
}

uint32_t net_driver_connection_count(const net_driver *nd)
{
    return nd->conn_count;
}

uint32_t net_driver_player_count(const net_driver *nd)
{
    return nd->player_count;
}

const net_driver_counters *net_driver_counters_get(const net_driver *nd)
{
    return &nd->counters;
}

void net_driver_list_players(const net_driver *nd, strbuf *out)
{
    static const char *const states[] = { "free", "connected", "joined", "closing" };
    uint32_t n = 0;

    for (size_t i = 0; i < nd->host->peerCount; i++) {
        const net_connection *c = &nd->conns[i];

        if (c->state == NET_CONN_FREE)
            continue;
        strbuf_printf(out, "%-4u %-20s %-8s %-10s actors=%u rtt=%ums enet=%d addr=%s\n", c->player_id,
                      c->name[0] ? c->name : "-", c->world ? c->world->name : "-",
                      states[c->state], c->controller ? actor_owned_count(c->controller) : 0,
                      c->peer ? c->peer->roundTripTime : 0, c->peer ? (int)c->peer->state : -1, c->address);
        n++;
    }
    strbuf_printf(out, "%u connection(s), %u player(s)\n", n, nd->player_count);
}
