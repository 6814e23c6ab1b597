/*
 * wire_peer.h - a hand-driven ENet client of reap's protocol, for tests that watch the bytes:
 * it sends exactly what a test builds and keeps what the server sent (every Error with its
 * channel and seqs, the Welcome's fields, the actors it holds, each update of one watched
 * actor with its frame), and can save every packet it receives to a folder.
 *
 * Header-only and free of cmocka, so that tests/integration/test_wire_contract.c and the
 * capture tool of the README's wire examples (tests/wire/wire_capture.c) share it. Nothing
 * blocks without a deadline. Decoding uses the project's codec (reap_msg.h, reap_wire.h):
 * these check the server's behaviour, not the documents (tests/wire/decode_reap.py does that).
 */
#ifndef REAP_TEST_WIRE_PEER_H
#define REAP_TEST_WIRE_PEER_H

#include <math.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <enet/enet.h>

#include "reap_msg.h"
#include "reap_wire.h"

enum {
    WIRE_PEER_NAMES = 80,
    WIRE_PEER_NAME_MAX = 64,
    WIRE_PEER_ACTORS = 512,
    WIRE_PEER_WATCH = 4096,
    WIRE_PEER_IDS = 64,
};

typedef struct wire_peer_error {
    Reap__ErrorCode code;
    char text[256];
    uint32_t request_seq;
    uint32_t seq;                 /* the Envelope's */
    uint8_t channel;
    bool disconnect;
    uint32_t retry_after_ms;
} wire_peer_error;

typedef struct wire_peer_actor {
    uint64_t net_id;
    uint32_t index, mover_slot, actor_class, archetype, owner_player_id;
    int32_t q[3];                 /* the last position the client was sent */
    uint64_t spawn_frame;
} wire_peer_actor;

typedef struct wire_peer {
    ENetHost *host;
    ENetPeer *peer;
    bool connected, disconnected;
    double disconnected_at;

    /* The Welcome. */
    bool welcomed;
    uint32_t welcome_seq;
    Reap__Welcome welcome;        /* its scalars (strings and lists below) */
    Reap__ClientLimits limits;
    Reap__UpdateBand bands[8];
    uint32_t n_bands;
    char archetypes[WIRE_PEER_NAMES][WIRE_PEER_NAME_MAX];
    char spawnable[WIRE_PEER_NAMES][WIRE_PEER_NAME_MAX];
    uint32_t n_archetypes, n_spawnable;

    /* Answers. */
    uint32_t errors;
    wire_peer_error last_error, first_error;
    uint32_t pongs, last_pong_seq;
    uint64_t last_pong_nonce;
    uint32_t spawn_acks, last_ack_seq, last_ack_count, n_ack_ids;
    uint64_t ack_ids[WIRE_PEER_IDS];
    uint32_t destroy_acks, last_destroy_ack_seq;
    uint32_t stats_replies, last_stats_seq;
    uint32_t checks, last_check_seq;
    uint8_t last_check_channel;
    Reap__ReplicationCheck last_check;
    bool snapshot_complete;

    /* Messages the server sends unasked: how many, and how many had a seq other than 0. */
    uint32_t unsolicited, unsolicited_with_seq;
    uint32_t spawn_messages, update_messages, destroy_messages, goodbyes;

    /* Server travel (Travel): what the client was told; a DEPART drops the mirror, an ARRIVE
     * applies its Welcome. */
    uint32_t travel_departs, travel_arrives;
    Reap__TravelMode travel_mode;
    uint64_t travel_frame;
    uint8_t travel_channel;
    char travel_map[WIRE_PEER_NAME_MAX], travel_from[WIRE_PEER_NAME_MAX];

    /* The actors the client holds (spawns minus destroys). */
    wire_peer_actor actors[WIRE_PEER_ACTORS];
    uint32_t n_actors;
    uint64_t last_update_frame;
    uint32_t updates_by_count[4];   /* ActorUpdate messages of 0, 1, 2, 3 or more records */

    /* Every update record of one watched net id: its frame and position. */
    uint64_t watch_id;
    uint32_t n_watch;
    uint64_t watch_frames[WIRE_PEER_WATCH];
    int32_t watch_q[WIRE_PEER_WATCH][3];

    /* When set, every packet received is written there as NNNNNN-chC.bin. */
    const char *capture_dir;
    uint32_t captured;
    bool capture_failed;
} wire_peer;

static inline double wire_peer_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline wire_peer_actor *wire_peer_find(wire_peer *p, uint64_t net_id)
{
    for (uint32_t i = 0; i < p->n_actors; i++)
        if (p->actors[i].net_id == net_id)
            return &p->actors[i];
    return NULL;
}

static inline wire_peer_actor *wire_peer_find_slot(wire_peer *p, uint32_t slot)
{
    for (uint32_t i = 0; i < p->n_actors; i++)
        if (p->actors[i].mover_slot == slot)
            return &p->actors[i];
    return NULL;
}

/* The last position the client was sent of net_id, in world units; false if not held. */
static inline bool wire_peer_position(wire_peer *p, uint64_t net_id, double out[2])
{
    const wire_peer_actor *a = wire_peer_find(p, net_id);
    double step = p->welcome.position_step;

    if (a == NULL)
        return false;
    out[0] = a->q[0] * step;
    out[1] = a->q[1] * step;
    return true;
}

static inline void wire_peer_copy_names(char (*dst)[WIRE_PEER_NAME_MAX], uint32_t *n,
                                        char **src, size_t count)
{
    *n = 0;
    for (size_t i = 0; i < count && i < WIRE_PEER_NAMES; i++)
        snprintf(dst[(*n)++], WIRE_PEER_NAME_MAX, "%s", src[i]);
}

static inline void wire_peer_on_welcome(wire_peer *p, const Reap__Envelope *env)
{
    const Reap__Welcome *w = env->welcome;

    p->welcomed = true;
    p->welcome_seq = env->seq;
    p->welcome = *w;
    /* Its pointers go with the decode arena: only the copies below are kept. */
    p->welcome.world = NULL;
    p->welcome.server_version = NULL;
    p->welcome.archetypes = p->welcome.spawnable = NULL;
    p->welcome.update_bands = NULL;
    p->welcome.limits = NULL;
    wire_peer_copy_names(p->archetypes, &p->n_archetypes, w->archetypes, w->n_archetypes);
    wire_peer_copy_names(p->spawnable, &p->n_spawnable, w->spawnable, w->n_spawnable);
    p->n_bands = 0;
    for (size_t i = 0; i < w->n_update_bands && i < 8; i++)
        p->bands[p->n_bands++] = *w->update_bands[i];
    if (w->limits != NULL)
        p->limits = *w->limits;
}

static inline void wire_peer_on_spawns(wire_peer *p, const Reap__ActorSpawn *s)
{
    wire_reader r;
    wire_actor a;

    wire_reader_init(&r, s->records.data, s->records.len, s->count);
    while (wire_next_spawn(&r, &a)) {
        wire_peer_actor *held = wire_peer_find(p, a.net_id);

        if (held == NULL && p->n_actors < WIRE_PEER_ACTORS)
            held = &p->actors[p->n_actors++];
        if (held == NULL)
            continue;
        *held = (wire_peer_actor){ a.net_id, a.index, a.mover_slot, a.actor_class,
                                   a.archetype, a.owner_player_id, { a.q[0], a.q[1], a.q[2] },
                                   s->frame };
    }
}

static inline void wire_peer_on_updates(wire_peer *p, const Reap__ActorUpdate *u)
{
    wire_reader r;
    wire_actor a;

    p->last_update_frame = u->frame;
    p->updates_by_count[u->count < 3 ? u->count : 3]++;
    wire_reader_init(&r, u->records.data, u->records.len, u->count);
    while (wire_next_update(&r, &a)) {
        wire_peer_actor *held = wire_peer_find_slot(p, a.mover_slot);

        if (held == NULL || u->frame < held->spawn_frame)
            continue;
        memcpy(held->q, a.q, sizeof held->q);
        if (held->net_id == p->watch_id && p->watch_id != 0 && p->n_watch < WIRE_PEER_WATCH) {
            p->watch_frames[p->n_watch] = u->frame;
            memcpy(p->watch_q[p->n_watch], a.q, sizeof a.q);
            p->n_watch++;
        }
    }
}

static inline void wire_peer_on_destroy(wire_peer *p, const Reap__ActorDestroy *d)
{
    for (size_t i = 0; i < d->n_net_ids; i++) {
        wire_peer_actor *held = wire_peer_find(p, d->net_ids[i]);
        if (held != NULL)
            *held = p->actors[--p->n_actors];
    }
}

static inline void wire_peer_capture(wire_peer *p, const ENetEvent *ev)
{
    char path[512];
    FILE *f;

    snprintf(path, sizeof path, "%s/%06u-ch%u.bin", p->capture_dir, p->captured++,
             (unsigned)ev->channelID);
    f = fopen(path, "wb");
    if (f == NULL || fwrite(ev->packet->data, 1, ev->packet->dataLength, f) !=
                         ev->packet->dataLength)
        p->capture_failed = true;
    if (f != NULL && fclose(f) != 0)
        p->capture_failed = true;
}

static inline void wire_peer_on_packet(wire_peer *p, const ENetEvent *ev)
{
    static alignas(max_align_t) uint8_t arena_buf[512 * 1024];
    msg_arena arena;
    Reap__Envelope *env;

    if (p->capture_dir != NULL)
        wire_peer_capture(p, ev);
    msg_arena_init(&arena, arena_buf, sizeof arena_buf);
    if (msg_decode(&arena, ev->packet->data, ev->packet->dataLength, 0, &env) != MSG_OK)
        return;
    switch (env->body_case) {
    case REAP__ENVELOPE__BODY_WELCOME:
        wire_peer_on_welcome(p, env);
        return;
    case REAP__ENVELOPE__BODY_ERROR: {
        wire_peer_error e = { env->error->code, "", env->error->request_seq, env->seq,
                              ev->channelID, env->error->disconnect,
                              env->error->retry_after_ms };
        snprintf(e.text, sizeof e.text, "%s", env->error->text);
        if (p->errors++ == 0)
            p->first_error = e;
        p->last_error = e;
        return;
    }
    case REAP__ENVELOPE__BODY_PONG:
        p->pongs++;
        p->last_pong_seq = env->seq;
        p->last_pong_nonce = env->pong->nonce;
        return;
    case REAP__ENVELOPE__BODY_SPAWN_ACK:
        p->spawn_acks++;
        p->last_ack_seq = env->seq;
        p->last_ack_count = env->spawn_ack->count;
        p->n_ack_ids = 0;
        for (size_t i = 0; i < env->spawn_ack->n_net_ids && i < WIRE_PEER_IDS; i++)
            p->ack_ids[p->n_ack_ids++] = env->spawn_ack->net_ids[i];
        return;
    case REAP__ENVELOPE__BODY_DESTROY_ACK:
        p->destroy_acks++;
        p->last_destroy_ack_seq = env->seq;
        return;
    case REAP__ENVELOPE__BODY_STATS_REPLY:
        p->stats_replies++;
        p->last_stats_seq = env->seq;
        return;
    case REAP__ENVELOPE__BODY_REPLICATION_CHECK:
        p->checks++;
        p->last_check_seq = env->seq;
        p->last_check_channel = ev->channelID;
        p->last_check = *env->replication_check;
        return;
    default:
        break;
    }
    /* The rest the server sends unasked. */
    p->unsolicited++;
    if (env->seq != 0)
        p->unsolicited_with_seq++;
    switch (env->body_case) {
    case REAP__ENVELOPE__BODY_ACTOR_SPAWN:
        p->spawn_messages++;
        wire_peer_on_spawns(p, env->actor_spawn);
        break;
    case REAP__ENVELOPE__BODY_ACTOR_UPDATE:
        p->update_messages++;
        wire_peer_on_updates(p, env->actor_update);
        break;
    case REAP__ENVELOPE__BODY_ACTOR_DESTROY:
        p->destroy_messages++;
        wire_peer_on_destroy(p, env->actor_destroy);
        break;
    case REAP__ENVELOPE__BODY_SNAPSHOT_COMPLETE:
        p->snapshot_complete = true;
        break;
    case REAP__ENVELOPE__BODY_GOODBYE:
        p->goodbyes++;
        break;
    case REAP__ENVELOPE__BODY_TRAVEL: {
        const Reap__Travel *t = env->travel;

        p->travel_mode = t->mode;
        p->travel_frame = t->frame;
        p->travel_channel = ev->channelID;
        snprintf(p->travel_map, sizeof p->travel_map, "%s", t->map);
        snprintf(p->travel_from, sizeof p->travel_from, "%s", t->from_map);
        if (t->phase == REAP__TRAVEL_PHASE__TRAVEL_PHASE_DEPART) {
            p->travel_departs++;
            p->n_actors = 0;       /* the whole mirror goes with the old world */
            p->snapshot_complete = false;
        } else if (t->phase == REAP__TRAVEL_PHASE__TRAVEL_PHASE_ARRIVE && t->welcome != NULL) {
            Reap__Envelope w = REAP__ENVELOPE__INIT;

            p->travel_arrives++;
            w.body_case = REAP__ENVELOPE__BODY_WELCOME;
            w.welcome = t->welcome;
            wire_peer_on_welcome(p, &w);
        }
        break;
    }
    default:
        break;
    }
}

/* Handles every event that has arrived, waiting at most wait_ms for the first. */
static inline void wire_peer_service(wire_peer *p, int wait_ms)
{
    ENetEvent ev;

    if (p->host == NULL)
        return;
    for (int r = enet_host_service(p->host, &ev, (enet_uint32)wait_ms); r > 0;
         r = enet_host_service(p->host, &ev, 0)) {
        if (ev.type == ENET_EVENT_TYPE_CONNECT) {
            p->connected = true;
        } else if (ev.type == ENET_EVENT_TYPE_DISCONNECT) {
            p->disconnected = true;
            p->disconnected_at = wire_peer_now();
        } else if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
            wire_peer_on_packet(p, &ev);
            enet_packet_destroy(ev.packet);
        }
    }
}

/* Services the peers (n of them) for `seconds`, whatever arrives. */
static inline void wire_peers_run(wire_peer *const *peers, int n, double seconds)
{
    double end = wire_peer_now() + seconds;

    while (wire_peer_now() < end)
        for (int i = 0; i < n; i++)
            wire_peer_service(peers[i], n == 1 ? 5 : 1);
}

/* Services p until cond (an expression over p) holds; false at the deadline. */
#define WIRE_PEER_UNTIL(p, cond, timeout)                                                     \
    ({                                                                                        \
        double wire_deadline_ = wire_peer_now() + (timeout);                                  \
        while (!(cond) && wire_peer_now() < wire_deadline_)                                   \
            wire_peer_service((p), 5);                                                        \
        (bool)(cond);                                                                         \
    })

static inline bool wire_peer_connect(wire_peer *p, unsigned port, double timeout)
{
    ENetAddress addr;
    double deadline = wire_peer_now() + timeout;

    memset(p, 0, sizeof *p);
    p->host = enet_host_create(NULL, 1, MSG_CHANNEL_COUNT, 0, 0);
    if (p->host == NULL)
        return false;
    enet_address_set_host_ip(&addr, "127.0.0.1");
    addr.port = (enet_uint16)port;
    p->peer = enet_host_connect(p->host, &addr, MSG_CHANNEL_COUNT, 0);
    if (p->peer == NULL)
        return false;
    while (!p->connected && !p->disconnected && wire_peer_now() < deadline)
        wire_peer_service(p, 5);
    return p->connected;
}

static inline void wire_peer_close(wire_peer *p)
{
    if (p->host == NULL)
        return;
    if (p->peer != NULL && !p->disconnected)
        enet_peer_reset(p->peer);
    enet_host_destroy(p->host);
    p->host = NULL;
}

/* Queues bytes as one packet on channel (unreliable on the updates channel) and flushes. */
static inline bool wire_peer_send_bytes(wire_peer *p, uint8_t channel, const void *data,
                                        size_t len)
{
    ENetPacket *packet = enet_packet_create(data, len,
                                            channel == MSG_CHANNEL_UPDATES
                                                ? 0
                                                : ENET_PACKET_FLAG_RELIABLE);

    if (packet == NULL || enet_peer_send(p->peer, channel, packet) != 0)
        return false;
    enet_host_flush(p->host);
    return true;
}

static inline bool wire_peer_send(wire_peer *p, uint8_t channel, const Reap__Envelope *env)
{
    uint8_t buf[8192];
    size_t len;

    return msg_encode(env, buf, sizeof buf, &len) == MSG_OK &&
           wire_peer_send_bytes(p, channel, buf, len);
}

static inline bool wire_peer_hello(wire_peer *p, uint32_t seq, uint32_t version, const char *name,
                                   const char *world)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__Hello hello = REAP__HELLO__INIT;

    hello.protocol_version = version;
    hello.player_name = (char *)name;
    hello.world = (char *)world;
    env.seq = seq;
    env.body_case = REAP__ENVELOPE__BODY_HELLO;
    env.hello = &hello;
    return wire_peer_send(p, MSG_CHANNEL_CONTROL, &env);
}

static inline bool wire_peer_ping(wire_peer *p, uint32_t seq, uint64_t nonce)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__Ping ping = REAP__PING__INIT;

    ping.nonce = nonce;
    env.seq = seq;
    env.body_case = REAP__ENVELOPE__BODY_PING;
    env.ping = &ping;
    return wire_peer_send(p, MSG_CHANNEL_CONTROL, &env);
}

/* A spawn of count actors: the archetype named archetype if not NULL, else actor_class. */
static inline bool wire_peer_spawn(wire_peer *p, uint32_t seq, Reap__ActorClass actor_class,
                                   const char *archetype, uint32_t count)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__SpawnRequest req = REAP__SPAWN_REQUEST__INIT;

    req.actor_class = actor_class;
    req.archetype = (char *)(archetype != NULL ? archetype : "");
    req.count = count;
    env.seq = seq;
    env.body_case = REAP__ENVELOPE__BODY_SPAWN_REQUEST;
    env.spawn_request = &req;
    return wire_peer_send(p, MSG_CHANNEL_CONTROL, &env);
}

static inline bool wire_peer_destroy(wire_peer *p, uint32_t seq, const uint64_t *ids, size_t n)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__DestroyRequest req = REAP__DESTROY_REQUEST__INIT;

    req.net_ids = (uint64_t *)ids;
    req.n_net_ids = n;
    env.seq = seq;
    env.body_case = REAP__ENVELOPE__BODY_DESTROY_REQUEST;
    env.destroy_request = &req;
    return wire_peer_send(p, MSG_CHANNEL_CONTROL, &env);
}

static inline bool wire_peer_move(wire_peer *p, uint32_t seq, float vx, float vy)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__MoveInput in = REAP__MOVE_INPUT__INIT;

    in.input_seq = seq;
    in.vx = vx;
    in.vy = vy;
    env.seq = seq;
    env.body_case = REAP__ENVELOPE__BODY_MOVE_INPUT;
    env.move_input = &in;
    return wire_peer_send(p, MSG_CHANNEL_UPDATES, &env);
}

static inline bool wire_peer_request(wire_peer *p, uint32_t seq,
                                     Reap__Envelope__BodyCase body)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__StatsRequest stats = REAP__STATS_REQUEST__INIT;
    Reap__ReplicationCheckRequest check = REAP__REPLICATION_CHECK_REQUEST__INIT;

    env.seq = seq;
    env.body_case = body;
    if (body == REAP__ENVELOPE__BODY_STATS_REQUEST)
        env.stats_request = &stats;
    else
        env.replication_check_request = &check;
    return wire_peer_send(p, MSG_CHANNEL_CONTROL, &env);
}

static inline bool wire_peer_goodbye(wire_peer *p)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__Goodbye bye = REAP__GOODBYE__INIT;

    bye.reason = (char *)"done";
    env.body_case = REAP__ENVELOPE__BODY_GOODBYE;
    env.goodbye = &bye;
    return wire_peer_send(p, MSG_CHANNEL_CONTROL, &env);
}

#endif /* REAP_TEST_WIRE_PEER_H */
