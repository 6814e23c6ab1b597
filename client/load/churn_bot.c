/*
 * churn_bot.c - one churn bot's visit, driven by its timers and by ENet events:
 *
 *   idle -> connecting -> hello -> spawning -> holding -> checking -> [leaving] -> idle -> ...
 *
 * A visit spawns the stage's props (acknowledged *and* replicated back), holds for U(0.5, 1.5)
 * x the stage's hold while it steers its pawn (MoveInput, a random walk under the speed limit),
 * pings once a second and fires projectiles if the stage says so; then it asks the server for a
 * replication check (its mirror must equal what the server sent it), and leaves gracefully
 * (goodbye, wait for the server to close) or abruptly (dropped without a word, so the server
 * must time it out). After a short pause it comes back as a new player while the stage still
 * wants it. Every wait has a deadline (--timeout).
 *
 * Server travel (README "Server travel"): on Travel (DEPART) the bot drops its mirror, its pawn
 * and what it waited for, and sends nothing of the world until the new map; an
 * ERROR_CODE_TRAVEL answer to what was already on its way is the travel's, not an error. A
 * hard travel closes the connection: the bot connects again at once and, while the new map
 * is not open (a Hello refused with ERROR_CODE_TRAVEL), after 0.25 s doubling to 4 s; it is a
 * new player. A seamless travel keeps it: Travel (ARRIVE) is the new map's Welcome (the same
 * player and controller, a new pawn). Either way the travel ends at the new map's
 * SnapshotComplete (its time is the travel latency), the bot's mirror is checked at once, and
 * the visit goes on in the new map: it spawns again and holds.
 *
 * Against a server that predates MoveInput and ReplicationCheckRequest (it answers them with
 * ERROR_CODE_UNEXPECTED), the first such answer turns the feature off for the run, says so
 * once, and is not counted as a bot's error.
 */
#include "churn_bot.h"

#include <stdlib.h>
#include <string.h>

#include "client_clock.h"
#include "client_net.h"
#include "client_rng.h"
#include "client_vec.h"
#include "reap_wire.h"

#define CHURN_PING_PERIOD 1.0
#define CHURN_STAGGER 1.0                 /* first visits start spread over this long */
#define CHURN_RETRY_JITTER 0.25           /* a busy server's retry-after, stretched up to this */

static const client_stage *churn_bot_stage(const churn_bots *bs, const churn_bot *b)
{
    return &bs->opts->stages[b->stage];
}

static void churn_bot_service(churn_bots *bs, churn_bot *b);
static void churn_bot_release(churn_bots *bs, churn_bot *b, double now);
static void churn_on_event(churn_bots *bs, ENetEvent *ev, double now);

static bool churn_send(churn_bots *bs, churn_bot *b, uint8_t channel, churn_seq_kind kind,
                       Reap__Envelope *env)
{
    if (b->peer == NULL)
        return false;
    env->seq = ++bs->seq;
    bs->seq_kind[env->seq & (CHURN_SEQ_KINDS - 1)] = (uint8_t)kind;
    b->dirty = true;
    return client_net_send(b->peer, bs->out_buf, sizeof bs->out_buf, channel, env);
}

/* The bot is no longer connected (however that happened); it comes back after a pause unless
 * the run is over. */
static void churn_bot_gone(churn_bots *bs, churn_bot *b, double now, bool abrupt, double pause)
{
    if (b->joined)
        churn_meter_leave(bs->meter, abrupt);
    if (b->peer != NULL)
        b->peer->data = NULL;
    churn_bot_release(bs, b, now);
    b->peer = NULL;
    b->joined = false;
    b->ping_nonce = 0;
    b->state = bs->stopping ? CHURN_BOT_DONE : CHURN_BOT_IDLE;
    b->next_at = now + pause;
}

static double churn_pause(churn_bots *bs)
{
    return 0.1 + 0.4 * client_rng_uniform(&bs->rng);
}

/* Whether a travel is under way: a connection the server closes or refuses now is the
 * travel's doing. */
static bool churn_in_travel(const churn_bots *bs, double now)
{
    return now < bs->travel_until;
}

static void churn_travel_window(churn_bots *bs, double until)
{
    bs->travel_seen_at = churn_since(bs->t0);
    if (until > bs->travel_until)
        bs->travel_until = until;
}

/* The wait before the bot's next try while the server is between maps: 0.25 s doubling to
 * 4 s, stretched by up to a quarter so that the bots do not all come back in one frame. */
static double churn_travel_backoff(churn_bots *bs, churn_bot *b)
{
    double wait = b->travel_retry > 0 ? b->travel_retry : CHURN_TRAVEL_RETRY_FIRST;

    b->travel_retry = wait * 2 > CHURN_TRAVEL_RETRY_MAX ? CHURN_TRAVEL_RETRY_MAX : wait * 2;
    return wait * (1.0 + CHURN_RETRY_JITTER * client_rng_uniform(&bs->rng));
}

/* Ends a visit at once: tells the server (if connected) and comes back after pause. */
static void churn_bot_drop(churn_bots *bs, churn_bot *b, double now, double pause)
{
    ENetPeer *peer = b->peer;

    if (peer != NULL) {
        peer->data = NULL;
        enet_peer_disconnect_now(peer, 0); /* a reset when not connected yet */
    }
    churn_bot_gone(bs, b, now, false, pause);
}

/* Ends a visit that went wrong; the bot retries later. */
static void churn_bot_abort(churn_bots *bs, churn_bot *b, double now)
{
    churn_bot_drop(bs, b, now, 0.5 + 0.5 * client_rng_uniform(&bs->rng));
}

/* A busy server refused the visit and said when to come back: the bot waits that long, and
 * up to a quarter more so that the refused do not all come back in the same frame. */
static void churn_bot_refused_busy(churn_bots *bs, churn_bot *b, double now,
                                   uint32_t retry_after_ms)
{
    churn_bot_drop(bs, b, now, retry_after_ms * 1e-3 *
                               (1.0 + CHURN_RETRY_JITTER * client_rng_uniform(&bs->rng)));
}

static void churn_poll_closed_cb(uv_handle_t *handle)
{
    ((churn_bot *)handle->data)->poll_open = false;
}

static void churn_poll_cb(uv_poll_t *handle, int status, int events)
{
    churn_bot *b = handle->data;

    (void)status;
    (void)events;
    /* An error (ICMP port unreachable) is read and dropped by ENet's receive like a datagram. */
    if (b->host != NULL)
        churn_bot_service(handle->loop->data, b);
}

static void churn_bot_release(churn_bots *bs, churn_bot *b, double now)
{
    if (b->host == NULL)
        return;
    /* The server may still resend to this port until it times the old connection out (an
     * abrupt leave), so no later visit takes the port before then. */
    client_ports_rest(bs->ports, b->host->address.port, now);
    churn_relay_close(b->relay);
    b->relay = NULL;
    if (b->poll_open)
        uv_close((uv_handle_t *)&b->poll, churn_poll_closed_cb); /* stops polling at once */
    enet_host_flush(b->host);
    enet_host_destroy(b->host);
    b->host = NULL;
    b->peer = NULL;
    b->dirty = false;
}

static void churn_bot_service(churn_bots *bs, churn_bot *b)
{
    ENetHost *h = b->host;
    ENetEvent ev;
    enet_uint32 received = h->totalReceivedPackets;
    int r = enet_host_service(h, &ev, 0);

    b->serviced_at = churn_since(bs->t0);
    /* Any datagram at all (ENet's acknowledgements and pings too): the server is there. */
    if (h->totalReceivedPackets != received)
        bs->heard_at = b->serviced_at;
    while (r > 0) {
        churn_on_event(bs, &ev, churn_since(bs->t0));
        if (b->host != h)
            return; /* the visit ended in the event: the host is gone */
        r = enet_host_check_events(h, &ev);
    }
    if (r < 0) {
        churn_meter_fail(bs->meter, "the network failed (ENet service error on %s's socket)",
                         b->name);
        bs->fatal = true;
    }
    /* What the events queued goes out now, not at the next turn. */
    enet_host_flush(h);
    b->dirty = false;
}

_Static_assert((long)CLIENT_BOTS_MAX < (long)CLIENT_OWN_ADDRESSES,
               "every bot of a run can have an address of its own");

/* The address b's visits send from (ENET_HOST_ANY: the kernel's choice). */
static enet_uint32 churn_bot_source(const churn_bots *bs, const churn_bot *b)
{
    const client_options *o = bs->opts;

    return bs->own_sources ? client_ports_own_address(b->index * o->shards + o->shard) :
                             ENET_HOST_ANY;
}

/* b's own address could not be bound where the kernel's choice could: this system does not
 * have all of 127/8 local (Linux does), so no bot's would bind; the rest of the run lets the
 * kernel choose. */
static void churn_sources_fall_back(churn_bots *bs, const churn_bot *b, enet_uint32 own)
{
    ENetAddress a = { .host = own, .port = 0 };
    char ip[64] = "?";

    enet_address_get_host_ip(&a, ip, sizeof ip);
    bs->own_sources = false;
    bs->own_sources_failed = true;
    client_say(bs->con, "warning: cannot bind %s (%s's own loopback address): the rest of the "
               "run sends every bot from the kernel's choice of address, as with "
               "--source-addresses one, and the server's per-address handshake limit may "
               "refuse some", ip, b->name);
}

/* A visit's host from b's source address, or the kernel's when that cannot be bound. */
static ENetHost *churn_host_open(churn_bots *bs, churn_bot *b, double now)
{
    enet_uint32 own = churn_bot_source(bs, b);
    ENetHost *h = client_ports_open_host(bs->ports, own, now);

    if (h == NULL && own != ENET_HOST_ANY &&
        (h = client_ports_open_host(bs->ports, ENET_HOST_ANY, now)) != NULL)
        churn_sources_fall_back(bs, b, own);
    return h;
}

/* An impaired visit's host: on 127.0.0.1, talking to its relay (whose address and port the
 * server sees: b's source address, as an unimpaired visit's host has). */
static ENetHost *churn_host_open_relayed(churn_bots *bs, churn_bot *b, const client_impair *im,
                                         double now, ENetAddress *out_to)
{
    ENetAddress local = { .port = 0 };
    enet_uint32 own = churn_bot_source(bs, b);
    ENetHost *h;

    enet_address_set_host_ip(&local, "127.0.0.1");
    b->relay = churn_relay_open(bs->impair, im, own, b->index, b->visit, now);
    if (b->relay == NULL && own != ENET_HOST_ANY &&
        (b->relay = churn_relay_open(bs->impair, im, ENET_HOST_ANY, b->index, b->visit,
                                     now)) != NULL)
        churn_sources_fall_back(bs, b, own);
    if (b->relay == NULL)
        return NULL;
    if ((h = enet_host_create(&local, 1, MSG_CHANNEL_COUNT, 0, 0)) == NULL) {
        churn_relay_close(b->relay);
        b->relay = NULL;
        return NULL;
    }
    b->relay->bot_addr = h->address;
    b->relay->bot_addr.host = local.host;
    *out_to = b->relay->address;
    if (out_to->host == ENET_HOST_ANY)
        out_to->host = local.host;
    return h;
}

/* A visit's own host, watched by the loop, connecting to the server (or to its relay). */
static ENetPeer *churn_connect_peer(churn_bots *bs, churn_bot *b, double now)
{
    const client_impair *im = &bs->opts->stages[bs->stage].impair;
    ENetAddress to = bs->server;
    ENetHost *h;

    if (b->poll_open)
        return NULL; /* the last visit's poll handle is still closing */
    b->visit++;
    h = client_impair_active(im) ? churn_host_open_relayed(bs, b, im, now, &to) :
                                   churn_host_open(bs, b, now);
    if (h == NULL)
        return NULL;
    if (uv_poll_init(bs->loop, &b->poll, h->socket) != 0) {
        enet_host_destroy(h);
        churn_relay_close(b->relay);
        b->relay = NULL;
        return NULL;
    }
    b->poll.data = b;
    b->poll_open = true;
    b->host = h;
    if (uv_poll_start(&b->poll, UV_READABLE, churn_poll_cb) != 0 ||
        (b->peer = enet_host_connect(h, &to, MSG_CHANNEL_COUNT, 0)) == NULL) {
        churn_bot_release(bs, b, now);
        return NULL;
    }
    b->dirty = true;
    b->serviced_at = now;
    return b->peer;
}

static void churn_bot_connect(churn_bots *bs, churn_bot *b, double now)
{
    ENetPeer *peer;

    if (b->poll_open) {
        b->next_at = now + 0.01; /* the last visit's poll handle closes on this loop turn */
        return;
    }
    if ((peer = churn_connect_peer(bs, b, now)) == NULL) {
        churn_meter_error(bs->meter, CHURN_ERR_CONNECT, "%s: cannot open a UDP socket on a free "
                          "port", b->name);
        b->next_at = now + churn_pause(bs);
        return;
    }
    peer->data = b;
    b->state = CHURN_BOT_CONNECTING;
    b->stage = bs->stage;
    b->deadline = now + bs->opts->session.timeout;
    b->connect_at = now;
    b->player_id = 0;
    b->acked = b->replicated = b->expected = b->n_awaited = 0;
    b->snapshot_done = b->snapshot_late = false;
    b->ping_nonce = 0;
    client_mirror_clear(&b->mirror);
}

static void churn_bot_hello(churn_bots *bs, churn_bot *b, double now)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__Hello hello = REAP__HELLO__INIT;

    churn_meter_latency(bs->meter, CHURN_LAT_CONNECT, now - b->connect_at);
    hello.protocol_version = MSG_PROTOCOL_VERSION;
    hello.player_name = b->name;
    hello.world = (char *)bs->opts->session.world;
    env.body_case = REAP__ENVELOPE__BODY_HELLO;
    env.hello = &hello;
    b->state = CHURN_BOT_HELLO;
    b->deadline = now + bs->opts->session.timeout;
    b->hello_at = now;
    if (!churn_send(bs, b, MSG_CHANNEL_CONTROL, CHURN_SEQ_OTHER, &env)) {
        churn_meter_error(bs->meter, CHURN_ERR_TIMEOUT, "%s: cannot send hello", b->name);
        churn_bot_abort(bs, b, now);
    }
}

static void churn_bot_hold(churn_bots *bs, churn_bot *b, double now)
{
    const client_stage *st = churn_bot_stage(bs, b);

    b->state = CHURN_BOT_HOLDING;
    b->next_at = now + st->hold * (0.5 + client_rng_uniform(&bs->rng));
    b->next_projectile_at = st->projectile_hz > 0 ? now + 1.0 / st->projectile_hz : 0;
}

static bool churn_bot_request_spawn(churn_bots *bs, churn_bot *b, Reap__ActorClass cls,
                                    const char *archetype, uint32_t n)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__SpawnRequest req = REAP__SPAWN_REQUEST__INIT;

    req.actor_class = cls;
    req.count = n;
    if (archetype != NULL)
        req.archetype = (char *)archetype;
    env.body_case = REAP__ENVELOPE__BODY_SPAWN_REQUEST;
    env.spawn_request = &req;
    return churn_send(bs, b, MSG_CHANNEL_CONTROL, CHURN_SEQ_OTHER, &env);
}

/* Actors a visit of b's stage spawns: the mix's, or its props. */
static uint32_t churn_bot_want(churn_bots *bs, const churn_bot *b)
{
    const client_stage *st = churn_bot_stage(bs, b);

    return st->mix.n > 0 ? client_spawn_mix_total(&st->mix) : st->spawn;
}

/* Sends want (of one archetype, or props when name is NULL) in requests of at most
 * CHURN_SPAWN_BATCH. */
static bool churn_bot_request_batches(churn_bots *bs, churn_bot *b, const char *name, uint32_t want)
{
    for (uint32_t requested = 0; requested < want;) {
        uint32_t n = want - requested < CHURN_SPAWN_BATCH ? want - requested : CHURN_SPAWN_BATCH;

        if (!churn_bot_request_spawn(bs, b, name != NULL ? 0 : REAP__ACTOR_CLASS__ACTOR_CLASS_PROP,
                                     name, n))
            return false;
        requested += n;
    }
    return true;
}

static void churn_bot_spawn(churn_bots *bs, churn_bot *b, double now)
{
    const client_stage *st = churn_bot_stage(bs, b);
    bool sent = true;

    b->state = CHURN_BOT_SPAWNING;
    b->deadline = now + bs->opts->session.timeout;
    b->spawn_at = now;
    if (st->mix.n == 0)
        sent = churn_bot_request_batches(bs, b, NULL, st->spawn);
    for (uint32_t i = 0; sent && i < st->mix.n; i++)
        sent = churn_bot_request_batches(bs, b, st->mix.name[i], st->mix.count[i]);
    if (!sent) {
        churn_meter_error(bs->meter, CHURN_ERR_TIMEOUT, "%s: cannot send a spawn request", b->name);
        churn_bot_abort(bs, b, now);
        return;
    }
    if (churn_bot_want(bs, b) == 0)
        churn_bot_hold(bs, b, now);
}

static void churn_bot_leave(churn_bots *bs, churn_bot *b, double now)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__Goodbye bye = REAP__GOODBYE__INIT;
    client_disconnect how = churn_bot_stage(bs, b)->leave;
    bool abrupt = how == CLIENT_DISCONNECT_ABRUPT ||
                  (how == CLIENT_DISCONNECT_MIXED && client_rng_uniform(&bs->rng) < 0.5);

    if (abrupt) {
        /* No goodbye and no ENet disconnect: the server only learns of it by timing out. */
        enet_peer_reset(b->peer);
        churn_bot_gone(bs, b, now, true, churn_pause(bs));
        return;
    }
    bye.reason = (char *)"churn bot done";
    env.body_case = REAP__ENVELOPE__BODY_GOODBYE;
    env.goodbye = &bye;
    if (!churn_send(bs, b, MSG_CHANNEL_CONTROL, CHURN_SEQ_OTHER, &env)) {
        churn_meter_error(bs->meter, CHURN_ERR_LEAVE, "%s: cannot send goodbye", b->name);
        churn_bot_abort(bs, b, now);
        return;
    }
    /* The server answers a goodbye by disconnecting us; we only wait (see client_leave). */
    b->state = CHURN_BOT_LEAVING;
    b->deadline = now + bs->opts->session.timeout;
}

/* Before leaving, ask the server what it believes this bot holds. */
static void churn_bot_check(churn_bots *bs, churn_bot *b, double now)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__ReplicationCheckRequest req = REAP__REPLICATION_CHECK_REQUEST__INIT;

    if (bs->checks_unsupported) {
        churn_bot_leave(bs, b, now);
        return;
    }
    env.body_case = REAP__ENVELOPE__BODY_REPLICATION_CHECK_REQUEST;
    env.replication_check_request = &req;
    if (!churn_send(bs, b, MSG_CHANNEL_CONTROL, CHURN_SEQ_CHECK, &env)) {
        churn_bot_leave(bs, b, now);
        return;
    }
    b->check_seq = env.seq;
    b->state = CHURN_BOT_CHECKING;
    b->check_at = now;
    b->deadline = now + bs->opts->session.timeout;
}

static void churn_bot_on_check(churn_bots *bs, churn_bot *b, const Reap__ReplicationCheck *r,
                               uint32_t seq, double now)
{
    if (b->state != CHURN_BOT_CHECKING || seq != b->check_seq)
        return;
    churn_meter_latency(bs->meter, CHURN_LAT_CHECK, now - b->check_at);
    bs->meter->totals.checks++;
    if (!churn_check_matches(&b->mirror, r)) {
        churn_meter_error(bs->meter, CHURN_ERR_MISMATCH, "%s: replication mismatch", b->name);
        churn_meter_mismatch(bs->meter, "%s (player %u): its mirror holds %u actors (digest "
                             "%016llx) but the server sent %u (digest %016llx; relevant %u, "
                             "digest %016llx, pending %u, closing %u)", b->name, b->player_id,
                             b->mirror.table.count, (unsigned long long)b->mirror.digest,
                             r->open_actors, (unsigned long long)r->open_digest,
                             r->relevant_actors, (unsigned long long)r->relevant_digest,
                             r->pending, r->closing);
    }
    if (b->travel_check && !bs->leave_all) {
        /* checked right after a travel: the visit goes on in the new map */
        b->travel_check = false;
        churn_bot_spawn(bs, b, now);
        return;
    }
    b->travel_check = false;
    churn_bot_leave(bs, b, now);
}

static void churn_bot_check_spawned(churn_bots *bs, churn_bot *b, double now)
{
    uint32_t want = churn_bot_want(bs, b);

    if (b->state == CHURN_BOT_SPAWNING && b->acked >= want && b->replicated >= b->expected) {
        churn_meter_latency(bs->meter, CHURN_LAT_SPAWN_REPL, now - b->spawn_at);
        churn_bot_hold(bs, b, now);
    }
}

/* The next MoveInput, steered by the visit's move pattern (churn_move.c). */
static void churn_bot_move(churn_bots *bs, churn_bot *b, double now)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__MoveInput mv = REAP__MOVE_INPUT__INIT;
    double hz = churn_bot_stage(bs, b)->move_hz;

    if (hz <= 0 || bs->moves_unsupported || now < b->next_move_at)
        return;
    churn_move_next(&b->move, b->input_seq == 0, &bs->rng, now, &mv.vx, &mv.vy);
    mv.input_seq = ++b->input_seq;
    env.body_case = REAP__ENVELOPE__BODY_MOVE_INPUT;
    env.move_input = &mv;
    if (churn_send(bs, b, MSG_CHANNEL_UPDATES, CHURN_SEQ_MOVE, &env))
        bs->meter->totals.moves++;
    b->next_move_at += 1.0 / hz;
    if (b->next_move_at < now)
        b->next_move_at = now + 1.0 / hz; /* fell behind: do not burst to catch up */
}

static void churn_bot_ping(churn_bots *bs, churn_bot *b, double now)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__Ping ping = REAP__PING__INIT;

    if (now < b->next_ping_at)
        return;
    b->next_ping_at = now + CHURN_PING_PERIOD;
    if (b->ping_nonce != 0)
        return; /* the last one is still out: RTT above a second shows in its own sample */
    ping.nonce = ((uint64_t)b->index << 32) | (uint32_t)(++bs->seq);
    env.body_case = REAP__ENVELOPE__BODY_PING;
    env.ping = &ping;
    if (churn_send(bs, b, MSG_CHANNEL_CONTROL, CHURN_SEQ_PING, &env)) {
        b->ping_nonce = ping.nonce;
        b->ping_at = now;
    }
}

static void churn_bot_projectile(churn_bots *bs, churn_bot *b, double now)
{
    double hz = churn_bot_stage(bs, b)->projectile_hz;

    if (hz <= 0 || b->state != CHURN_BOT_HOLDING || now < b->next_projectile_at)
        return;
    churn_bot_request_spawn(bs, b, REAP__ACTOR_CLASS__ACTOR_CLASS_PROJECTILE, NULL, 1);
    b->next_projectile_at += 1.0 / hz;
    if (b->next_projectile_at < now)
        b->next_projectile_at = now + 1.0 / hz;
}

/* A joined bot's steady work, whatever it waits for. */
static void churn_bot_play(churn_bots *bs, churn_bot *b, double now)
{
    churn_bot_move(bs, b, now);
    churn_bot_ping(bs, b, now);
    churn_bot_projectile(bs, b, now);
    if (bs->snapshot_supported && !b->snapshot_done && !b->snapshot_late &&
        now >= b->welcome_at + bs->opts->session.timeout) {
        b->snapshot_late = true;
        churn_meter_error(bs->meter, CHURN_ERR_TIMEOUT, "%s: no SnapshotComplete within %g s of "
                          "the welcome", b->name, bs->opts->session.timeout);
    }
}

/* A travel the bot follows: while connected it only pings; it leaves when it is no longer
 * wanted (a seamless travel's connection says goodbye; a hard one's is dropped). */
static void churn_bot_travel_step(churn_bots *bs, churn_bot *b, double now, bool unwanted)
{
    if (now >= b->deadline) {
        churn_meter_error(bs->meter, CHURN_ERR_TIMEOUT, "%s: %s within %g s of the travel to "
                          "the new map", b->name, b->pawn_net_id != 0 ? "no join snapshot" :
                          "no new map", now - b->travel_at);
        b->travelling = false;
        churn_bot_abort(bs, b, now);
    } else if (unwanted) {
        b->travelling = false; /* abandoned: not a travel followed */
        if (b->travel_mode == REAP__TRAVEL_MODE__TRAVEL_MODE_SEAMLESS)
            churn_bot_leave(bs, b, now);
        else
            churn_bot_drop(bs, b, now, churn_pause(bs));
    } else {
        churn_bot_ping(bs, b, now);
    }
}

/* A connection being opened that the server closed: a travel's if one was seen about then
 * (CHURN_TRAVEL_CLOSE_GRACE either way), else an error. */
static void churn_bot_judge_close(churn_bots *bs, churn_bot *b, double now)
{
    if (b->closed_at < 0 || now < b->closed_at + CHURN_TRAVEL_CLOSE_GRACE)
        return;
    if (bs->travel_seen_at < b->closed_at - CHURN_TRAVEL_CLOSE_GRACE) {
        if (b->closed_connecting)
            churn_meter_error(bs->meter, CHURN_ERR_CONNECT, "%s: the connection to %s:%u was "
                              "reset during the handshake", b->name, bs->opts->session.host,
                              bs->opts->session.port);
        else
            churn_meter_error(bs->meter, CHURN_ERR_LOST, "the server closed %s's connection",
                              b->name);
    }
    b->closed_at = -1;
}

static void churn_bot_step(churn_bots *bs, churn_bot *b, double now)
{
    bool unwanted = bs->leave_all || b->index >= bs->target;

    churn_bot_judge_close(bs, b, now);
    /* A hard travel's reconnects are bounded: past it the travel was not followed. */
    if (b->travelling && b->state != CHURN_BOT_TRAVELLING &&
        now >= b->travel_at + CHURN_TRAVEL_MAX) {
        b->travelling = false;
        churn_meter_error(bs->meter, CHURN_ERR_TIMEOUT, "%s: could not join the new map within "
                          "%g s of a hard travel", b->name, CHURN_TRAVEL_MAX);
    }
    switch (b->state) {
    case CHURN_BOT_IDLE:
        if (unwanted || bs->stopping)
            b->travelling = false; /* a travel not followed: the bot is not coming back */
        if (bs->stopping)
            b->state = CHURN_BOT_DONE;
        else if (!unwanted && now >= b->next_at)
            churn_bot_connect(bs, b, now);
        break;
    case CHURN_BOT_TRAVELLING:
        churn_bot_travel_step(bs, b, now, unwanted);
        break;
    case CHURN_BOT_CONNECTING:
        if (bs->leave_all) {
            churn_bot_abort(bs, b, now);
        } else if (now >= b->deadline && churn_in_travel(bs, now)) {
            /* a server loading its next map may not answer in time: try again */
            churn_bot_drop(bs, b, now, churn_travel_backoff(bs, b));
        } else if (now >= b->deadline) {
            churn_meter_error(bs->meter, CHURN_ERR_CONNECT, "no answer from %s:%u within %g s (is "
                              "reap-server running there, with room for more players?)",
                              bs->opts->session.host, bs->opts->session.port,
                              bs->opts->session.timeout);
            churn_bot_abort(bs, b, now);
        }
        break;
    case CHURN_BOT_HELLO:
    case CHURN_BOT_SPAWNING:
        if (now >= b->deadline && b->state == CHURN_BOT_HELLO && churn_in_travel(bs, now)) {
            churn_bot_drop(bs, b, now, churn_travel_backoff(bs, b));
        } else if (now >= b->deadline) {
            churn_meter_error(bs->meter, CHURN_ERR_TIMEOUT, "%s: no %s within %g s", b->name,
                              b->state == CHURN_BOT_HELLO ? "welcome" :
                              "spawn acknowledgement and replication", bs->opts->session.timeout);
            churn_bot_abort(bs, b, now);
        } else if (bs->leave_all) {
            if (b->joined)
                churn_bot_check(bs, b, now); /* every visit that joined is checked */
            else
                churn_bot_abort(bs, b, now);
        } else if (b->joined) {
            churn_bot_play(bs, b, now);
        }
        break;
    case CHURN_BOT_HOLDING:
        if (unwanted || now >= b->next_at)
            churn_bot_check(bs, b, now);
        else
            churn_bot_play(bs, b, now);
        break;
    case CHURN_BOT_CHECKING:
        if (now >= b->deadline) {
            churn_meter_error(bs->meter, CHURN_ERR_TIMEOUT, "%s: no replication check answer "
                              "within %g s", b->name, bs->opts->session.timeout);
            churn_bot_leave(bs, b, now);
        } else {
            churn_bot_play(bs, b, now);
        }
        break;
    case CHURN_BOT_LEAVING:
        if (now >= b->deadline) {
            churn_meter_error(bs->meter, CHURN_ERR_LEAVE, "%s: the server did not close the "
                              "connection within %g s of our goodbye", b->name,
                              bs->opts->session.timeout);
            enet_peer_reset(b->peer);
            churn_bot_gone(bs, b, now, false, churn_pause(bs));
        }
        break;
    case CHURN_BOT_DONE:
        break;
    }
}

/* ---- messages ---------------------------------------------------------------------------- */

/* An Error: a feature the server lacks, or a refusal that ends the visit. */
static void churn_bot_on_error(churn_bots *bs, churn_bot *b, const Reap__Error *e, double now)
{
    churn_seq_kind kind = (churn_seq_kind)bs->seq_kind[e->request_seq & (CHURN_SEQ_KINDS - 1)];

    if (e->code == REAP__ERROR_CODE__ERROR_CODE_UNEXPECTED && e->request_seq != 0 &&
        (kind == CHURN_SEQ_MOVE || kind == CHURN_SEQ_CHECK)) {
        bool *off = kind == CHURN_SEQ_MOVE ? &bs->moves_unsupported : &bs->checks_unsupported;
        if (!*off && !bs->opts->session.quiet)
            client_say(bs->con, "note: the server does not accept %s (%s); %s for the rest of "
                       "the run", kind == CHURN_SEQ_MOVE ? "MoveInput" : "ReplicationCheckRequest",
                       e->text, kind == CHURN_SEQ_MOVE ? "bots stop moving" :
                       "replication checks are skipped");
        *off = true;
        if (kind == CHURN_SEQ_CHECK && b->state == CHURN_BOT_CHECKING)
            churn_bot_leave(bs, b, now);
        return;
    }
    if (e->code == REAP__ERROR_CODE__ERROR_CODE_TRAVEL) {
        /* The server is between maps: what was on its way is refused, as designed. A joined
         * bot is told of the travel (DEPART) on its own; a Hello is tried again later. */
        bs->meter->totals.travel_refused++;
        churn_travel_window(bs, now + 2.0);
        if (!b->joined && b->state != CHURN_BOT_LEAVING)
            churn_bot_drop(bs, b, now, churn_travel_backoff(bs, b));
        return;
    }
    if (e->code == REAP__ERROR_CODE__ERROR_CODE_SERVER_FULL ||
        e->code == REAP__ERROR_CODE__ERROR_CODE_BUSY) {
        /* A full or busy server saying so is working as designed: a figure of its own, not an
         * error; the bot tries again after a pause, or when a busy server said to. */
        churn_meter_refused(bs->meter, e->code == REAP__ERROR_CODE__ERROR_CODE_BUSY);
        if (e->code == REAP__ERROR_CODE__ERROR_CODE_BUSY && e->retry_after_ms > 0 &&
            !b->joined && b->state != CHURN_BOT_LEAVING) {
            churn_bot_refused_busy(bs, b, now, e->retry_after_ms);
            return;
        }
    } else {
        churn_meter_error(bs->meter, CHURN_ERR_REFUSED, "server rejected a request of %s: %s",
                          b->name, e->text);
    }
    if (e->code == REAP__ERROR_CODE__ERROR_CODE_VERSION ||
        e->code == REAP__ERROR_CODE__ERROR_CODE_NO_SUCH_WORLD) {
        churn_meter_fail(bs->meter, "server refused: %s", e->text);
        bs->fatal = true;
    }
    if (b->state == CHURN_BOT_LEAVING)
        return;
    if (b->joined)
        churn_bot_leave(bs, b, now);
    else
        churn_bot_abort(bs, b, now);
}

/* An actor of b's spawns replicated as something other than what b asked for. */
static void churn_bot_wrong_kind(churn_bots *bs, churn_bot *b, uint64_t net_id, uint32_t cls,
                                 uint32_t archetype, const churn_awaited *want)
{
    churn_meter_error(bs->meter, CHURN_ERR_MISMATCH, "%s: actor %llu replicated as the wrong kind",
                      b->name, (unsigned long long)net_id);
    churn_meter_mismatch(bs->meter, "%s (player %u): actor %llu was spawned as class %u "
                         "archetype %u but replicated as class %u archetype %u", b->name,
                         b->player_id, (unsigned long long)net_id, want->actor_class,
                         want->archetype, cls, archetype);
}

churn_awaited churn_mix_expected(const client_spawn_mix *m, const uint32_t *mix_class,
                                 const uint32_t *mix_number, uint32_t k)
{
    churn_awaited w = { 0, REAP__ACTOR_CLASS__ACTOR_CLASS_PROP, 0 };

    for (uint32_t i = 0; i < m->n; i++) {
        if (k < m->count[i]) {
            w.actor_class = mix_class[i];
            w.archetype = mix_number[i];
            break;
        }
        k -= m->count[i];
    }
    return w;
}

static void churn_bot_on_spawns(churn_bots *bs, churn_bot *b, const Reap__ActorSpawn *s, double now)
{
    wire_reader r;
    wire_actor a;

    wire_reader_init(&r, s->records.data, s->records.len, s->count);
    while (wire_next_spawn(&r, &a)) {
        client_mirror_put(&b->mirror, a.net_id, a.actor_class, a.owner_player_id);
        if (a.net_id == b->pawn_net_id && b->pawn_net_id != 0)
            churn_move_place(&b->move, a.q[0] * (double)b->position_step,
                             a.q[1] * (double)b->position_step, now);
        if (a.archetype != 0)
            client_mirror_set_archetype(&b->mirror, a.net_id, a.archetype);
        if (a.owner_player_id != b->player_id || b->player_id == 0)
            continue;
        for (uint32_t i = 0; i < b->n_awaited; i++) {
            if (b->awaited[i].net_id == a.net_id) {
                churn_awaited want = b->awaited[i];

                b->awaited[i] = b->awaited[--b->n_awaited];
                b->replicated++;
                if (a.actor_class != want.actor_class || a.archetype != want.archetype)
                    churn_bot_wrong_kind(bs, b, a.net_id, a.actor_class, a.archetype, &want);
                break;
            }
        }
    }
    if (!wire_reader_ok(&r))
        bs->meter->undecodable++; /* the records read before the fault are kept */
    churn_bot_check_spawned(bs, b, now);
}

static void churn_bot_on_destroys(churn_bots *bs, churn_bot *b, const Reap__ActorDestroy *d)
{
    for (size_t i = 0; i < d->n_net_ids; i++)
        if (!client_mirror_remove(&b->mirror, d->net_ids[i]))
            bs->meter->totals.unknown_destroys++;
}

/* Whether name is in the Welcome's spawnable list (a server before protocol 5 sends none:
 * then every name it lists, and Prop and Projectile, may be asked for). */
static bool churn_spawnable(const Reap__Welcome *w, const char *name)
{
    if (w->n_spawnable == 0)
        return true;
    for (size_t k = 0; k < w->n_spawnable; k++)
        if (strcmp(w->spawnable[k], name) == 0)
            return true;
    return false;
}

/* Whether the server lets a client spawn everything the visit's spawn mix names; if not the
 * run ends, naming the first one it does not and what it does let a client spawn. */
static bool churn_mix_known(churn_bots *bs, churn_bot *b, const Reap__Welcome *w)
{
    const client_spawn_mix *m = &churn_bot_stage(bs, b)->mix;

    for (uint32_t i = 0; i < m->n; i++) {
        bool found = true;
        char have[240];
        size_t n = 0;

        if (!churn_spawnable(w, m->name[i])) {
            have[0] = '\0';
            for (size_t k = 0; k < w->n_spawnable && n + 40 < sizeof have; k++)
                n += (size_t)snprintf(have + n, sizeof have - n, "%s%s", k ? ", " : "",
                                      w->spawnable[k]);
            churn_meter_fail(bs->meter, "the spawn mix names '%.31s', which the server does not "
                             "let a client spawn (it may spawn: %.239s)", m->name[i], have);
            bs->fatal = true;
            return false;
        }
        b->mix_number[i] = 0;
        if (strcmp(m->name[i], "Prop") == 0)
            b->mix_class[i] = REAP__ACTOR_CLASS__ACTOR_CLASS_PROP;
        else if (strcmp(m->name[i], "Projectile") == 0)
            b->mix_class[i] = REAP__ACTOR_CLASS__ACTOR_CLASS_PROJECTILE;
        else
            found = false;
        for (size_t k = 0; !found && k < w->n_archetypes; k++) {
            found = strcmp(w->archetypes[k], m->name[i]) == 0;
            b->mix_class[i] = WIRE_CLASS_ARCHETYPE;
            b->mix_number[i] = (uint32_t)k + 1;
        }
        if (found)
            continue;
        have[0] = '\0';
        for (size_t k = 0; k < w->n_archetypes && n + 40 < sizeof have; k++)
            n += (size_t)snprintf(have + n, sizeof have - n, "%s, ", w->archetypes[k]);
        churn_meter_fail(bs->meter, "the spawn mix names '%.31s', which the server's world "
                         "profile does not have (it has: %.239sProp, Projectile)", m->name[i],
                         have);
        bs->fatal = true;
        return false;
    }
    return true;
}

/* ---- server travel ---------------------------------------------------------------------- */

/* Travel (DEPART): the old world ends for this bot. Whatever it held and waited for goes; it
 * sends nothing of the world until the new map. */
static void churn_bot_depart(churn_bots *bs, churn_bot *b, const Reap__Travel *t, double now)
{
    churn_match *m;

    if (!b->joined || b->state == CHURN_BOT_LEAVING)
        return; /* leaving anyway: the close that follows is the leave's */
    client_mirror_clear(&b->mirror);
    b->pawn_net_id = 0;
    b->acked = b->replicated = b->expected = b->n_awaited = 0;
    b->snapshot_done = b->snapshot_late = false;
    b->travel_check = false;
    b->travelling = true;
    b->travel_mode = t->mode;
    b->travel_frame = t->frame;
    b->travel_at = now;
    b->travel_retry = 0;
    b->state = CHURN_BOT_TRAVELLING;
    b->deadline = now + CHURN_TRAVEL_MAX;
    churn_travel_window(bs, now + CHURN_TRAVEL_MAX);
    /* A server that travels UE's way (blocking) answers nothing until the new map is open:
     * ENet must not time the connection out meanwhile (UE's clients wait out a travel too). */
    if (b->peer != NULL)
        enet_peer_timeout(b->peer, 0, (enet_uint32)(CHURN_TRAVEL_MAX * 1e3 / 2),
                          (enet_uint32)(CHURN_TRAVEL_MAX * 1e3));
    if (bs->tl != NULL &&
        (m = churn_timeline_match(bs->tl, t->frame, t->map, t->mode, now)) != NULL)
        m->departed++;
}

/* Travel (ARRIVE), seamless: the new map's Welcome. The same player and controller, a new
 * pawn; the new map's extent, step and limits from now on; its snapshot follows. */
static void churn_bot_arrive(churn_bots *bs, churn_bot *b, const Reap__Travel *t, double now)
{
    const Reap__Welcome *w = t->welcome;

    if (b->state != CHURN_BOT_TRAVELLING || !b->travelling || w == NULL)
        return;
    if (!churn_mix_known(bs, b, w)) /* the new map's archetypes, numbered afresh */
        return;
    if (w->player_id != b->player_id)
        churn_meter_error(bs->meter, CHURN_ERR_MISMATCH, "%s: a seamless travel made player %u "
                          "player %u (it must keep the player)", b->name, b->player_id,
                          w->player_id);
    b->player_id = w->player_id;
    b->pawn_net_id = w->pawn_net_id;
    b->position_step = w->position_step;
    churn_move_begin(&b->move, churn_bot_stage(bs, b)->move_pattern,
                     w->limits != NULL ? w->limits->max_pawn_speed : 0, w->world_extent);
    b->welcome_at = now;
    b->deadline = now + bs->opts->session.timeout; /* for the new snapshot */
}

/* The new map's SnapshotComplete: the travel is over for this bot. Its mirror is checked at
 * once; then the visit goes on (churn_bot_on_check). */
static void churn_bot_arrived(churn_bots *bs, churn_bot *b, double now)
{
    churn_match *m = NULL;

    b->travelling = false;
    bs->meter->totals.travels++;
    churn_meter_latency(bs->meter, CHURN_LAT_TRAVEL, now - b->travel_at);
    if (bs->tl != NULL) {
        for (uint32_t i = 0; i < bs->tl->n_matches && m == NULL; i++)
            if (bs->tl->matches[i].frame == b->travel_frame)
                m = &bs->tl->matches[i];
        if (m != NULL) {
            m->arrived++;
            hist_record(&m->travel, (uint64_t)((now - b->travel_at) * 1e6 + 0.5));
        }
    }
    if (churn_bots_travelling(bs) == 0 && bs->travel_until > now + 1.0)
        bs->travel_until = now + 1.0; /* the stragglers' closes are still the travel's */
    if (bs->checks_unsupported) {
        churn_bot_spawn(bs, b, now);
        return;
    }
    b->travel_check = true;
    churn_bot_check(bs, b, now);
}

static void churn_on_message(churn_bots *bs, churn_bot *b, const Reap__Envelope *env, double now)
{
    switch (env->body_case) {
    case REAP__ENVELOPE__BODY_WELCOME:
        if (b->state != CHURN_BOT_HELLO)
            break;
        if (!churn_mix_known(bs, b, env->welcome))
            break;
        churn_meter_latency(bs->meter, CHURN_LAT_WELCOME, now - b->hello_at);
        b->joined = true;
        b->welcome_at = now;
        b->player_id = env->welcome->player_id;
        b->pawn_net_id = env->welcome->pawn_net_id;
        b->position_step = env->welcome->position_step;
        churn_move_begin(&b->move, churn_bot_stage(bs, b)->move_pattern,
                         env->welcome->limits != NULL ? env->welcome->limits->max_pawn_speed : 0,
                         env->welcome->world_extent);
        b->input_seq = 0;
        b->next_move_at = now;
        b->next_ping_at = now + CHURN_PING_PERIOD * client_rng_uniform(&bs->rng);
        b->travel_retry = 0;
        churn_meter_join(bs->meter);
        if (b->travelling) {
            /* a hard travel's new player: its travel ends with this map's snapshot */
            b->state = CHURN_BOT_TRAVELLING;
            b->deadline = now + bs->opts->session.timeout;
            break;
        }
        churn_bot_spawn(bs, b, now);
        break;
    case REAP__ENVELOPE__BODY_SPAWN_ACK: {
        /* Acks come in request order: the visit's props first, then projectiles. */
        const Reap__SpawnAck *ack = env->spawn_ack;
        uint32_t want = churn_bot_want(bs, b), n = ack->count;
        uint32_t props = b->acked >= want ? 0 : want - b->acked < n ? want - b->acked : n;

        if (b->state == CHURN_BOT_TRAVELLING)
            break; /* the old world's: what it spawned went with it */
        bs->meter->second.spawned += n;
        bs->meter->totals.projectiles += n - props;
        if (props == 0)
            break;
        /* The ones that replicate: already in the mirror (channel 1 may overtake channel 0),
         * or awaited. One request is of one kind: that of the visit's actor number acked. */
        churn_awaited want_kind = churn_mix_expected(&churn_bot_stage(bs, b)->mix, b->mix_class,
                                                     b->mix_number, b->acked);
        for (size_t i = 0; i < ack->n_net_ids; i++) {
            const client_mirror_entry *e = client_mirror_get(&b->mirror, ack->net_ids[i]);

            b->expected++;
            want_kind.net_id = ack->net_ids[i];
            if (e != NULL) {
                b->replicated++;
                if (e->actor_class != want_kind.actor_class ||
                    e->archetype != want_kind.archetype)
                    churn_bot_wrong_kind(bs, b, e->net_id, e->actor_class, e->archetype,
                                         &want_kind);
            } else if (CLIENT_VEC_RESERVE(b->awaited, b->awaited_cap, b->n_awaited + 1, 16)) {
                b->awaited[b->n_awaited++] = want_kind;
            } else {
                b->replicated++; /* out of memory: stop waiting for it rather than hang */
            }
        }
        bs->meter->totals.spawned += props;
        b->acked += props;
        if (b->acked >= want)
            churn_meter_latency(bs->meter, CHURN_LAT_SPAWN_ACK, now - b->spawn_at);
        churn_bot_check_spawned(bs, b, now);
        break;
    }
    case REAP__ENVELOPE__BODY_ACTOR_SPAWN:
        churn_bot_on_spawns(bs, b, env->actor_spawn, now);
        break;
    case REAP__ENVELOPE__BODY_ACTOR_DESTROY:
        churn_bot_on_destroys(bs, b, env->actor_destroy);
        break;
    case REAP__ENVELOPE__BODY_SNAPSHOT_COMPLETE:
        if (!b->joined || b->snapshot_done)
            break;
        b->snapshot_done = true;
        bs->snapshot_supported = true;
        bs->meter->totals.snapshots++;
        /* a seamless travel's snapshot is not a join: the player stayed */
        if (!b->travelling || b->travel_mode != REAP__TRAVEL_MODE__TRAVEL_MODE_SEAMLESS)
            churn_meter_latency(bs->meter, CHURN_LAT_JOIN, now - b->connect_at);
        if (b->travelling && b->state == CHURN_BOT_TRAVELLING && b->pawn_net_id != 0)
            churn_bot_arrived(bs, b, now);
        break;
    case REAP__ENVELOPE__BODY_TRAVEL:
        if (env->travel->phase == REAP__TRAVEL_PHASE__TRAVEL_PHASE_DEPART)
            churn_bot_depart(bs, b, env->travel, now);
        else if (env->travel->phase == REAP__TRAVEL_PHASE__TRAVEL_PHASE_ARRIVE)
            churn_bot_arrive(bs, b, env->travel, now);
        break;
    case REAP__ENVELOPE__BODY_REPLICATION_CHECK:
        churn_bot_on_check(bs, b, env->replication_check, env->seq, now);
        break;
    case REAP__ENVELOPE__BODY_PONG:
        if (b->ping_nonce != 0 && env->pong->nonce == b->ping_nonce) {
            churn_meter_latency(bs->meter, CHURN_LAT_RTT, now - b->ping_at);
            b->ping_nonce = 0;
        }
        break;
    case REAP__ENVELOPE__BODY_STATS_REPLY:
        churn_stats_on_reply(bs->stats, env->stats_reply, now);
        break;
    case REAP__ENVELOPE__BODY_ERROR:
        churn_bot_on_error(bs, b, env->error, now);
        break;
    default:
        break; /* goodbye: the disconnect follows */
    }
}

static void churn_on_event(churn_bots *bs, ENetEvent *ev, double now)
{
    churn_bot *b = ev->peer != NULL ? ev->peer->data : NULL;
    Reap__Envelope *env;

    switch (ev->type) {
    case ENET_EVENT_TYPE_CONNECT:
        if (b == NULL || b->state != CHURN_BOT_CONNECTING)
            break;
        if (bs->leave_all)
            churn_bot_abort(bs, b, now);
        else
            churn_bot_hello(bs, b, now);
        break;
    case ENET_EVENT_TYPE_DISCONNECT:
        if (b == NULL)
            break;
        if (b->state == CHURN_BOT_LEAVING) {
            churn_bot_gone(bs, b, now, false, churn_pause(bs));
            break;
        }
        if (b->state == CHURN_BOT_TRAVELLING && b->travelling && b->joined &&
            b->travel_mode == REAP__TRAVEL_MODE__TRAVEL_MODE_HARD) {
            /* a hard travel: the server closes every connection; the bot connects again at
             * once (a new player), not having left */
            b->joined = false;
            churn_bot_gone(bs, b, now, false, 0.05 * client_rng_uniform(&bs->rng));
            break;
        }
        if (!b->joined && churn_in_travel(bs, now)) {
            /* a connection being opened, closed by a server between maps: try again */
            churn_bot_gone(bs, b, now, false, churn_travel_backoff(bs, b));
            break;
        }
        if (!b->joined) {
            /* A hard travel closes the connections being opened too, without a word, and
             * the other bots' DEPART may be read a moment after: judged a moment later
             * (churn_bot_judge_close). */
            b->closed_at = now;
            b->closed_connecting = b->state == CHURN_BOT_CONNECTING;
            churn_bot_gone(bs, b, now, false, 0.5 + 0.5 * client_rng_uniform(&bs->rng));
            break;
        }
        if (b->state == CHURN_BOT_CONNECTING)
            churn_meter_error(bs->meter, CHURN_ERR_CONNECT, "%s: the connection to %s:%u was reset "
                              "during the handshake", b->name, bs->opts->session.host,
                              bs->opts->session.port);
        else
            churn_meter_error(bs->meter, CHURN_ERR_LOST, "the server closed %s's connection",
                              b->name);
        churn_bot_gone(bs, b, now, false, 0.5 + 0.5 * client_rng_uniform(&bs->rng));
        break;
    case ENET_EVENT_TYPE_RECEIVE:
        /* Movement updates are not checked: skipping their decoding keeps one process able to
         * play many bots. */
        if (b != NULL && ev->channelID != MSG_CHANNEL_UPDATES) {
            msg_arena_reset(&bs->arena);
            if (msg_decode(&bs->arena, ev->packet->data, ev->packet->dataLength, 0, &env) ==
                MSG_OK)
                churn_on_message(bs, b, env, now);
            else
                bs->meter->undecodable++;
        }
        enet_packet_destroy(ev->packet);
        break;
    case ENET_EVENT_TYPE_NONE:
        break;
    }
}

/* ---- the bots of a run --------------------------------------------------------------------- */

bool churn_bots_open(churn_bots *bs, const client_options *opts, uint32_t n,
                     const client_console *con, uv_loop_t *loop, ENetAddress server, double t0,
                     churn_meter *meter, churn_stats *stats, churn_impair *impair,
                     client_ports *ports)
{
    memset(bs, 0, sizeof *bs);
    bs->opts = opts;
    bs->con = con;
    bs->loop = loop;
    bs->server = server;
    bs->t0 = t0;
    bs->meter = meter;
    bs->stats = stats;
    bs->impair = impair;
    bs->ports = ports;
    bs->n_bots = n;
    bs->own_sources = opts->source_addresses == CLIENT_SOURCE_AUTO &&
                      client_ports_is_loopback(server.host);
    bs->heard_at = -1;
    bs->travel_seen_at = -1;
    bs->bots = calloc(n ? n : 1, sizeof *bs->bots);
    bs->arena_buf = malloc(CHURN_ARENA_BYTES);
    if (bs->bots == NULL || bs->arena_buf == NULL)
        return false;
    msg_arena_init(&bs->arena, bs->arena_buf, CHURN_ARENA_BYTES);
    /* Every shard spreads its first visits alike, from the run's seed; then each draws its
     * own stream. */
    bs->rng = opts->seed;
    for (uint32_t i = 0; i < n; i++) {
        churn_bot *b = &bs->bots[i];
        b->index = i;
        b->state = CHURN_BOT_IDLE;
        b->closed_at = -1;
        b->next_at = CHURN_STAGGER * client_rng_uniform(&bs->rng);
        client_mirror_init(&b->mirror);
        if (opts->shards > 1)
            snprintf(b->name, sizeof b->name, "bot-%u-%u", opts->shard + 1, i + 1);
        else
            snprintf(b->name, sizeof b->name, "bot-%u", i + 1);
    }
    bs->rng = opts->seed_effective;
    return true;
}

void churn_bots_end_visits(churn_bots *bs, double now)
{
    for (uint32_t i = 0; bs->bots != NULL && i < bs->n_bots; i++) {
        churn_bot *b = &bs->bots[i];
        if (b->peer != NULL)
            enet_peer_disconnect_now(b->peer, 0);
        churn_bot_release(bs, b, now);
    }
}

void churn_bots_free(churn_bots *bs)
{
    for (uint32_t i = 0; bs->bots != NULL && i < bs->n_bots; i++) {
        client_mirror_free(&bs->bots[i].mirror);
        free(bs->bots[i].awaited);
    }
    free(bs->bots);
    free(bs->arena_buf);
    bs->bots = NULL;
    bs->arena_buf = NULL;
}

void churn_bots_step(churn_bots *bs, double now)
{
    for (uint32_t i = 0; i < bs->n_bots && !bs->fatal; i++)
        churn_bot_step(bs, &bs->bots[i], now);
}

void churn_bots_flush(churn_bots *bs, double now)
{
    for (uint32_t i = 0; i < bs->n_bots && !bs->fatal; i++) {
        churn_bot *b = &bs->bots[i];

        if (b->host == NULL)
            continue;
        if (now - b->serviced_at >= CHURN_HOST_IDLE_MS * 1e-3) {
            churn_bot_service(bs, b);
        } else if (b->dirty) {
            /* Moves and pings queued this turn go out now, not at the next service. */
            enet_host_flush(b->host);
            b->dirty = false;
        }
    }
}

bool churn_bots_request_stats(churn_bots *bs)
{
    for (uint32_t n = 0; n < bs->n_bots; n++) {
        churn_bot *b = &bs->bots[(bs->next_stats_bot + n) % bs->n_bots];
        Reap__Envelope env = REAP__ENVELOPE__INIT;
        Reap__StatsRequest req = REAP__STATS_REQUEST__INIT;

        if (!b->joined || b->peer == NULL ||
            (b->state != CHURN_BOT_SPAWNING && b->state != CHURN_BOT_HOLDING))
            continue;
        env.body_case = REAP__ENVELOPE__BODY_STATS_REQUEST;
        env.stats_request = &req;
        env.seq = ++bs->seq;
        bs->seq_kind[env.seq & (CHURN_SEQ_KINDS - 1)] = CHURN_SEQ_OTHER;
        if (client_net_send(b->peer, bs->out_buf, sizeof bs->out_buf, MSG_CHANNEL_CONTROL,
                            &env)) {
            bs->next_stats_bot = (b->index + 1) % bs->n_bots;
            return true;
        }
    }
    return false;
}

double churn_bots_listening_since(const churn_bots *bs)
{
    double since = -1;

    for (uint32_t i = 0; i < bs->n_bots; i++) {
        const churn_bot *b = &bs->bots[i];

        if (b->host != NULL && (since < 0 || b->connect_at < since))
            since = b->connect_at;
    }
    return since;
}

uint32_t churn_bots_travelling(const churn_bots *bs)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < bs->n_bots; i++)
        n += bs->bots[i].travelling;
    return n;
}

uint32_t churn_bots_joined(const churn_bots *bs)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < bs->n_bots; i++)
        n += bs->bots[i].joined;
    return n;
}

bool churn_bots_done(const churn_bots *bs)
{
    for (uint32_t i = 0; i < bs->n_bots; i++)
        if (bs->bots[i].state != CHURN_BOT_DONE)
            return false;
    return true;
}

const char *churn_bots_sources(const churn_bots *bs)
{
    return bs->own_sources_failed ? "own, then one" : bs->own_sources ? "own" : "one";
}
