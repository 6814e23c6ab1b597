/*
 * net_driver.c - the ENet host: the service loop, connections, shutdown and the console view.
 *
 * Message handlers live in net_handlers.c, replication in net_replication.c, and what happens
 * to a datagram before ENet parses it in net_filter.c; net_internal.h holds what they share.
 */
#include "net_driver.h"

#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "net_internal.h"
#include "net_send.h"
#include "reap_assert.h"

/* ENet's intercept hook has no user pointer; there is one host per process. */
net_driver *net_intercept_driver;

const char *net_kick_reason_name(net_kick_reason r)
{
    static const char *const names[NET_KICK_REASONS] = {
        [NET_KICK_BAD_MESSAGES] = "bad_messages",
        [NET_KICK_HELLO_TIMEOUT] = "hello_timeout",
        [NET_KICK_FLOOD] = "flood",
    };
    return (unsigned)r < NET_KICK_REASONS ? names[r] : "?";
}

const char *net_drop_reason_name(net_drop_reason r)
{
    static const char *const names[NET_DROP_REASONS] = {
        [NET_DROP_RATE] = "rate",
        [NET_DROP_BUDGET] = "budget",
        [NET_DROP_WAITING] = "waiting",
        [NET_DROP_CLOSING] = "closing",
    };
    return (unsigned)r < NET_DROP_REASONS ? names[r] : "?";
}

const char *net_refuse_reason_name(net_refuse_reason r)
{
    static const char *const names[NET_REFUSE_REASONS] = {
        [NET_REFUSE_BUSY] = "busy",
        [NET_REFUSE_FULL] = "full",
        [NET_REFUSE_TRAVEL] = "travel",
        [NET_REFUSE_VERSION] = "version",
        [NET_REFUSE_BAD_HELLO] = "bad_hello",
        [NET_REFUSE_NO_WORLD] = "no_world",
    };
    return (unsigned)r < NET_REFUSE_REASONS ? names[r] : "?";
}

/* ---- admission control (net_admission.h) ------------------------------------------------ */

net_admission_config net_admission_settings(const net_driver *nd)
{
    const cvar_registry *cv = nd->env.cvars;
    net_admission_config cfg;

    cfg.enabled = nd->load_measured && cvar_get_bool(cv, CVAR_NET_ADMISSION_CONTROL);
    cfg.high_load = cvar_get(cv, CVAR_NET_ADMISSION_HIGH_LOAD);
    cfg.low_load = cvar_get(cv, CVAR_NET_ADMISSION_LOW_LOAD);
    cfg.stretch_load = cvar_get(cv, CVAR_NET_ADMISSION_STRETCH_LOAD);
    cfg.window_seconds = cvar_get(cv, CVAR_NET_ADMISSION_WINDOW_SECONDS);
    cfg.period = 1.0 / (double)nd->env.tick_hz;
    return cfg;
}

/* Once per frame: the loop's work since the last frame (the time not spent waiting in epoll)
 * into the window; says when refusing starts and stops, and when the stretch changes. */
static void net_observe_load(net_driver *nd)
{
    net_admission *a = &nd->admission;
    net_admission_config cfg = net_admission_settings(nd);
    uint64_t now_ns = uv_hrtime(), idle_ns = uv_metrics_idle_time(nd->env.loop);
    uint64_t elapsed_ns = now_ns - nd->load_last_ns, idle_delta = idle_ns - nd->load_last_idle_ns;
    uint32_t stretch = a->stretch;
    bool first = nd->load_last_ns == 0;

    nd->load_last_ns = now_ns;
    nd->load_last_idle_ns = idle_ns;
    /* A travel's frames are a one-off, not the load of the players: a blocking travel's 2 s
     * frame would have refused the bots reconnecting after it. */
    if (first || !nd->load_measured || net_driver_travelling(nd))
        return;
    if (idle_delta > elapsed_ns)
        idle_delta = elapsed_ns;
    switch (net_admission_observe(a, &cfg, (double)(elapsed_ns - idle_delta) / 1e9,
                                  (double)elapsed_ns / 1e9, nd->repl_cut, net_now(nd))) {
    case NET_ADMISSION_STARTED_REFUSING: {
        char lost[64] = "";

        /* Frames lost: late, or cut by net.ReplicationFrameBudget (fewer served whole). */
        if (a->load < cfg.high_load)
            snprintf(lost, sizeof lost, ", %.1f served whole: frames lost", a->complete_hz);
        log_warn("admission: refusing new players (ERROR_CODE_BUSY): load %.2f of the frame "
                 "budget over the last %.1f s (%.1f frames/s%s, %u players; "
                 "net.Admission.HighLoad=%g)", a->load, (double)a->frames * cfg.period,
                 a->achieved_hz, lost, nd->player_count, cfg.high_load);
        break;
    }
    case NET_ADMISSION_STOPPED_REFUSING:
        log_info("admission: admitting new players again: load %.2f over the last %.1f s "
                 "(%.1f frames/s, %u players; net.Admission.LowLoad=%g); refused %llu in %.1f s, "
                 "peak load %.2f", a->load, (double)a->frames * cfg.period, a->achieved_hz,
                 nd->player_count, cfg.low_load, (unsigned long long)a->refused_episode,
                 net_now(nd) - a->refusing_since, a->peak_load);
        break;
    case NET_ADMISSION_NOTHING:
        break;
    }
    if (a->stretch != stretch)
        log_info("admission: update bands: the %u farthest at twice their period (load %.2f, "
                 "net.Admission.StretchLoad=%g, LowLoad=%g)", a->stretch, a->load,
                 cfg.stretch_load, cfg.low_load);
}

void net_driver_admission_get(const net_driver *nd, net_driver_admission *out)
{
    out->refusing = nd->admission.refusing;
    out->measured = nd->load_measured;
    out->load = nd->admission.load;
    out->achieved_hz = nd->admission.achieved_hz;
    out->stretched_bands = nd->admission.stretch;
}

/* ---- connections ------------------------------------------------------------------------ */

static void net_referencer_cb(void *data, gc_collector *collector)
{
    net_driver *nd = data;

    for (size_t i = 0; i < nd->host->peerCount; i++)
        if (nd->conns[i].controller != NULL)
            gc_collector_add_ref(collector, (void **)&nd->conns[i].controller);
}

void net_leave_world(net_driver *nd, net_connection *conn, const char *reason)
{
    world *w = conn->world;

    net_repl_leave(nd, conn);
    /* Leaving released every hold the connection's view had on the index. */
    REAP_ASSERT(conn->view.n_pending + conn->view.n_open + conn->view.n_closing == 0);
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
    net_admission_note_leave(&nd->admission, net_now(nd));
    if (nd->env.player_left_cb != NULL)
        nd->env.player_left_cb(nd->env.hooks_ctx, conn->player_id, conn->name);
}

static void net_on_connect(net_driver *nd, ENetPeer *peer)
{
    net_connection *conn = &nd->conns[peer - nd->host->peers];
    net_policy_limits lim = net_limits(nd);
    enet_uint32 timeout_ms =
        (enet_uint32)(cvar_get(nd->env.cvars, CVAR_NET_CONNECTION_TIMEOUT) * 1000.0);
    char ip[48];

    net_view_free(&conn->view);
    memset(conn, 0, sizeof *conn);
    conn->peer = peer;
    conn->state = NET_CONN_CONNECTED;
    net_policy_init(&conn->policy, &lim, net_now(nd));
    if (enet_address_get_host_ip(&peer->address, ip, sizeof ip) != 0)
        snprintf(ip, sizeof ip, "?");
    snprintf(conn->address, sizeof conn->address, "%s:%u", ip, peer->address.port);
    conn->connected_at = net_now(nd);
    peer->data = conn;
    nd->handshake_seen[peer - nd->host->peers] = 0;
    enet_peer_timeout(peer, 0, timeout_ms, timeout_ms);
    /* ENet's own throttle off (net_internal.h says why): it never falls below full. */
    enet_peer_throttle_configure(peer, ENET_PEER_PACKET_THROTTLE_INTERVAL,
                                 ENET_PEER_PACKET_THROTTLE_SCALE, 0);
    nd->conn_count++;
    nd->counters.connects++;
    log_debug("net: connection from %s", conn->address);
    if (nd->conn_count > nd->max_players) {
        /* The spare peers: a full server says so instead of staying silent. */
        net_close_with_error(nd, conn, REAP__ERROR_CODE__ERROR_CODE_SERVER_FULL, "server full", 0);
        nd->counters.refused_full++;
        nd->counters.refused_joins[NET_REFUSE_FULL]++;
    }
}

/* Connections that never say hello give their slot back. */
static void net_sweep_silent(net_driver *nd, double now)
{
    double limit = cvar_get(nd->env.cvars, CVAR_NET_HELLO_TIMEOUT);

    for (size_t i = 0; i < nd->host->peerCount; i++) {
        net_connection *c = &nd->conns[i];
        char text[96];

        if (c->state != NET_CONN_CONNECTED || now - c->connected_at < limit)
            continue;
        snprintf(text, sizeof text, "no hello within %g s (net.HelloTimeout)", limit);
        nd->counters.bad_messages++;
        net_kick(nd, c, NET_KICK_HELLO_TIMEOUT, text, 0);
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
    else if (conn->sent_disconnect)
        reason = "disconnected";
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
    /* What ENet and the channels held for that peer went back to malloc; hand large freed
     * runs back to the OS soon, once, rather than after every disconnect. */
    if (nd->trim_after == 0)
        nd->trim_after = net_now(nd) + 1.0;
}

/* Moves ENet's 32-bit traffic totals into the driver's 64-bit counters. */
static void net_account_host(net_driver *nd)
{
    ENetHost *h = nd->host;

    nd->counters.datagrams_out += h->totalSentPackets;
    nd->counters.datagrams_in += h->totalReceivedPackets;
    nd->counters.wire_bytes_out += h->totalSentData;
    h->totalSentPackets = h->totalReceivedPackets = h->totalSentData = 0;
    h->totalReceivedData = 0;
}

static void net_on_event(net_driver *nd, ENetEvent *ev)
{
    switch (ev->type) {
    case ENET_EVENT_TYPE_CONNECT:
        net_on_connect(nd, ev->peer);
        break;
    case ENET_EVENT_TYPE_RECEIVE:
        net_on_receive(nd, ev->peer->data, ev->packet);
        enet_packet_destroy(ev->packet);
        break;
    case ENET_EVENT_TYPE_DISCONNECT:
        net_on_disconnect(nd, ev->peer);
        break;
    case ENET_EVENT_TYPE_NONE:
        break;
    }
}

/* Hands the queued events out; ENet does not touch the socket or other peers for this. */
static void net_dispatch_events(net_driver *nd)
{
    ENetEvent ev;
    int r;

    while ((r = enet_host_check_events(nd->host, &ev)) > 0)
        net_on_event(nd, &ev);
    if (r < 0)
        log_warn("net: enet_host_check_events failed");
}

void net_driver_service(net_driver *nd)
{
    ENetEvent ev;

    /* A call reads up to 256 datagrams, queueing received messages, and returns early only
     * for a connect or disconnect (with an event argument ENet completes a handshake at
     * once, so a message in the same datagram as the handshake's last step is accepted; with
     * NULL it would be refused and resent after a round-trip timeout). So the calls, each a
     * send pass over every peer, number the connects and disconnects plus one, and the
     * queued messages are handed out without touching the socket. The bound keeps a flood
     * from stalling the loop (the poll handle fires again). */
    for (int round = 0; round < NET_SERVICE_ROUNDS; round++) {
        int r = enet_host_service(nd->host, &ev, 0);
        enet_uint32 received = nd->host->totalReceivedPackets;

        net_account_host(nd);
        if (r < 0) {
            log_warn("net: enet_host_service failed");
            break;
        }
        if (r > 0)
            net_on_event(nd, &ev);
        net_dispatch_events(nd);
        if (r == 0 && received < 256)
            break;
    }
}

void net_driver_sweep(net_driver *nd)
{
    double now = net_now(nd);

    net_sweep_silent(nd, now);
    net_filter_sweep_handshakes(nd, now);
    if (nd->trim_after != 0 && now >= nd->trim_after) {
        nd->trim_after = 0;
        malloc_trim(0);
    }
}

world *net_find_world(const net_driver *nd, const char *name)
{
    if (nd->env.world_count == 0)
        return NULL;
    if (name == NULL || name[0] == '\0')
        return nd->env.worlds[0];
    for (uint32_t i = 0; i < nd->env.world_count; i++)
        if (strcmp(nd->env.worlds[i]->name, name) == 0)
            return nd->env.worlds[i];
    return NULL;
}

/* Every hold on a world's index is one entry (pending, open or closing) of the view of a
 * connection in that world (checked builds only: it walks the index). */
static bool net_refs_match_views(const net_driver *nd, const world *w, const net_index *ix)
{
    uint64_t refs = 0, held = 0;

    for (uint32_t i = 1; i < ix->count; i++)
        refs += ix->v[i].refs;
    for (size_t i = 0; i < nd->host->peerCount; i++)
        if (nd->conns[i].world == w)
            held += (uint64_t)nd->conns[i].view.n_pending + nd->conns[i].view.n_open +
                    nd->conns[i].view.n_closing;
    return refs == held;
}

/* The frame's replication deadline: net.ReplicationFrameBudget of the frame period from the
 * frame's start (0: none). */
static uint64_t net_repl_deadline(const net_driver *nd)
{
    double share = cvar_get(nd->env.cvars, CVAR_NET_REPLICATION_FRAME_BUDGET);
    uint64_t start = nd->env.frame_start_ns != NULL ? *nd->env.frame_start_ns : uv_hrtime();

    if (share <= 0 || nd->env.tick_hz == 0)
        return 0;
    return start + (uint64_t)(share * 1e9 / nd->env.tick_hz);
}

/* The order a world's connections are replicated in under the frame's budget: those that have
 * waited as long as they may (served regardless: first, so that they do not all run past the
 * deadline at the end), then joiners (their join lasts until their snapshot is sent), then the
 * rest; within each, in turn from where the budget stopped the last frame. */
enum { NET_TURN_OVERDUE, NET_TURN_JOINERS, NET_TURN_REST, NET_TURNS };

static bool net_turn_takes(const net_driver *nd, const net_connection *c, int turn)
{
    switch (turn) {
    case NET_TURN_OVERDUE:
        return net_repl_budget_must_serve(nd, c);
    case NET_TURN_JOINERS:
        return c->snapshot_pending;
    default:
        return true;
    }
}

/* Replicates world w's connections this frame; *resume: the first peer that waited (kept). */
static void net_replicate_world(net_driver *nd, world *w, double dt, uint32_t *resume)
{
    uint32_t peers = (uint32_t)nd->host->peerCount, frame = (uint32_t)*nd->env.frame;

    for (int turn = 0; turn < NET_TURNS && w->connections > 0; turn++) {
        for (uint32_t k = 0; k < peers; k++) {
            uint32_t i = (nd->repl_cursor + k) % peers;
            net_connection *c = &nd->conns[i];
            bool wait;

            /* replicated_frame: once a frame (a joiner whose snapshot completes is no longer
             * one by the next turn). Frame numbers wrap after 2^32 frames (4.5 years at 30 Hz),
             * which at worst skips a connection for that one frame. */
            if (c->state != NET_CONN_JOINED || c->world != w || c->replicated_frame == frame ||
                !net_turn_takes(nd, c, turn))
                continue;
            c->replicated_frame = frame;
            wait = net_repl_budget_defers(nd, c, uv_hrtime());
            if (wait && *resume == UINT32_MAX)
                *resume = i;
            net_repl_connection(nd, c, dt, wait);
        }
    }
}

void net_driver_replicate(net_driver *nd, double dt)
{
    uint64_t encoded = 0, pairs = 0, flush_start;
    uint32_t resume = UINT32_MAX, resume_world = 0, worlds = nd->env.world_count;

    net_observe_load(nd);
    net_repl_band_periods(nd);
    net_repl_budget_begin(nd, net_repl_deadline(nd));
    /* Worlds in turn too, from the one where the budget stopped the last frame. */
    for (uint32_t k = 0; k < worlds; k++) {
        uint32_t wi = (nd->repl_world_cursor + k) % worlds;
        world *w = nd->env.worlds[wi];
        bool waited_before = resume != UINT32_MAX;

        /* Every world's index follows its destroys, watched or not. */
        net_repl_begin_world(nd, w);
        net_replicate_world(nd, w, dt, &resume);
        if (!waited_before && resume != UINT32_MAX)
            resume_world = wi;
        world_outbox_reset(w);
        REAP_ASSERT(net_refs_match_views(nd, w, net_repl_index(nd, w)));
        encoded += net_repl_index(nd, w)->records_encoded;
    }
    for (size_t i = 0; i < nd->host->peerCount; i++)
        pairs += nd->conns[i].view.n_pending + nd->conns[i].view.n_open +
                 nd->conns[i].view.n_closing;
    nd->counters.records_encoded = encoded;
    nd->counters.pairs = pairs;
    nd->counters.pair_frames += pairs;
    nd->repl_cut = nd->budget.deferred > 0 ? (double)nd->budget.deferred /
                                                 (double)(nd->budget.deferred + nd->budget.served)
                                           : 0;
    if (nd->budget.deferred > 0)
        nd->counters.frames_cut++;
    if (resume != UINT32_MAX) {
        nd->repl_cursor = resume;
        nd->repl_world_cursor = resume_world;
    }
    flush_start = uv_hrtime();
    enet_host_flush(nd->host);
    net_repl_budget_flushed(nd, uv_hrtime() - flush_start);
    net_account_host(nd);
}

/* ---- lifetime ----------------------------------------------------------------------------- */

static void net_poll_cb(uv_poll_t *handle, int status, int events);

static void net_poll_resume_cb(uv_timer_t *timer)
{
    net_driver *nd = timer->data;

    uv_poll_start(&nd->poll, UV_READABLE, net_poll_cb);
}

/* Under a stream of datagrams the socket is drained faster than they come, so the loop would
 * wake once per datagram, and waking (two context switches, epoll, ENet's send pass) costs
 * more than a datagram the filter drops. After a read the poll rests NET_POLL_PAUSE_MS while
 * the kernel queues what arrives; the next read takes it all at once. */
static void net_poll_cb(uv_poll_t *handle, int status, int events)
{
    net_driver *nd = handle->data;
    uint64_t before = nd->counters.datagrams_in;

    (void)events;
    if (status < 0) {
        log_warn("net: poll error: %s", uv_strerror(status));
        return;
    }
    net_driver_service(nd);
    if (nd->counters.datagrams_in != before && uv_poll_stop(&nd->poll) == 0)
        uv_timer_start(&nd->poll_pause, net_poll_resume_cb, NET_POLL_PAUSE_MS, 0);
}

static void net_driver_free(net_driver *nd)
{
    if (nd->conns != NULL)
        for (size_t i = 0; i < nd->host->peerCount; i++)
            net_view_free(&nd->conns[i].view);
    for (uint32_t w = 0; w < NET_MAX_WORLDS; w++)
        net_index_free(&nd->indexes[w]);
    free(nd->picks);
    free(nd->picks_tmp);
    free(nd->conns);
    free(nd->handshake_seen);
    free(nd->rest_until);
    free(nd->arena_buf);
    free(nd->out_buf);
    free(nd->ids);
    free(nd->cands);
    free(nd->fresh);
    nd->conns = NULL;
}

int net_driver_create(const net_driver_env *env, const char *bind, uint32_t port,
                      uint32_t max_players, net_driver **out_nd, char *err, size_t err_size)
{
    net_driver *nd = calloc(1, sizeof *nd);
    ENetAddress addr;
    int r;

    if (nd == NULL) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    nd->env = *env;
    memset(&addr, 0, sizeof addr);
    if (enet_address_set_host_ip(&addr, bind) != 0) {
        snprintf(err, err_size, "bad bind address '%s': expected an IPv4 address", bind);
        free(nd);
        return -1;
    }
    addr.port = (enet_uint16)port;
    nd->max_players = max_players;
    /* Admission control's load: libuv then counts the time it waits in epoll. */
    nd->load_measured = uv_loop_configure(env->loop, UV_METRICS_IDLE_TIME) == 0;
    if (!nd->load_measured)
        log_warn("net: the loop cannot count its idle time: admission control is off");
    net_admission_init(&nd->admission);
    /* One spare peer to refuse the next player politely, and room for handshakes in flight
     * that a flood of CONNECTs cannot take from real players (net_filter.c). */
    nd->host = enet_host_create(&addr, max_players + 1 + NET_HANDSHAKE_SLOTS, MSG_CHANNEL_COUNT,
                                0, 0);
    if (nd->host == NULL) {
        snprintf(err, err_size, "cannot listen on udp %s:%u (port in use or address not local?)",
                 bind, port);
        free(nd);
        return -1;
    }
    /* ENet asks for 256 KB of socket buffer; a frame of acknowledgements and inputs from a
     * crowd (or a flood, while the poll rests) overflows that while the frame runs, and every
     * datagram the kernel drops is a resend later or another player's loss. The kernel caps
     * this at net.core.rmem_max / wmem_max. */
    enet_socket_set_option(nd->host->socket, ENET_SOCKOPT_RCVBUF, NET_SOCKET_BUFFER);
    enet_socket_set_option(nd->host->socket, ENET_SOCKOPT_SNDBUF, NET_SOCKET_BUFFER);
    nd->host->maximumPacketSize = NET_MAX_PACKET;
    /* What one peer may hold in unfinished or undelivered packets: a few maximal messages. */
    nd->host->maximumWaitingData = 4 * NET_MAX_PACKET;
    nd->host->intercept = net_intercept_cb;
    if (enet_socket_get_address(nd->host->socket, &nd->host->address) != 0)
        nd->host->address.port = (enet_uint16)port;
    nd->conns = calloc(nd->host->peerCount, sizeof *nd->conns);
    nd->handshake_seen = calloc(nd->host->peerCount, sizeof *nd->handshake_seen);
    nd->rest_until = calloc(nd->host->peerCount, sizeof *nd->rest_until);
    /* Positions are quantized at the step the starting world.Extent needs (reap.proto). */
    for (uint32_t w = 0; w < NET_MAX_WORLDS; w++)
        net_index_init(&nd->indexes[w],
                       wire_step_for_extent((float)cvar_get(env->cvars, CVAR_WORLD_EXTENT)));
    nd->arena_buf = malloc(NET_ARENA_BYTES);
    nd->out_buf = malloc(NET_OUT_BYTES);
    if (nd->conns == NULL || nd->handshake_seen == NULL || nd->rest_until == NULL ||
        nd->arena_buf == NULL ||
        nd->out_buf == NULL ||
        gc_referencer_add(env->heap, "NetDriver", net_referencer_cb, nd, &nd->referencer) != GC_OK) {
        snprintf(err, err_size, "out of memory");
        goto fail;
    }
    msg_arena_init(&nd->arena, nd->arena_buf, NET_ARENA_BYTES);
    r = uv_poll_init(env->loop, &nd->poll, nd->host->socket);
    if (r == 0) {
        uv_timer_init(env->loop, &nd->poll_pause);
        nd->poll_pause.data = nd;
        nd->open_handles = 2;
        r = uv_poll_start(&nd->poll, UV_READABLE, net_poll_cb);
    }
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
        gc_referencer_remove(env->heap, nd->referencer);
    net_driver_free(nd);
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

    if (--nd->open_handles == 0)
        free(nd);
}

void net_driver_close(net_driver *nd)
{
    if (nd == NULL)
        return;
    if (net_intercept_driver == nd)
        net_intercept_driver = NULL;
    gc_referencer_remove(nd->env.heap, nd->referencer);
    /* Stop watching the socket before ENet closes it. */
    if (nd->poll_started) {
        uv_poll_stop(&nd->poll);
        uv_timer_stop(&nd->poll_pause);
    }
    net_driver_free(nd);
    enet_host_destroy(nd->host);
    nd->host = NULL;
    if (nd->poll_started) {
        uv_close((uv_handle_t *)&nd->poll, net_close_cb);
        uv_close((uv_handle_t *)&nd->poll_pause, net_close_cb);
    } else {
        free(nd);
    }
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

/* Bytes ENet holds for the peer: queued and not sent, plus sent and not acknowledged. */
static size_t net_queued_bytes(const ENetPeer *peer)
{
    size_t n = peer->reliableDataInTransit;

    for (ENetListIterator it = enet_list_begin(&((ENetPeer *)peer)->outgoingCommands);
         it != enet_list_end(&((ENetPeer *)peer)->outgoingCommands); it = enet_list_next(it))
        n += ((const ENetOutgoingCommand *)it)->fragmentLength;
    return n;
}

void net_driver_list_players(const net_driver *nd, strbuf *out)
{
    static const char *const states[] = { "free", "connected", "joined", "closing",
                                          "travelling" };
    double now = net_now(nd);
    uint32_t n = 0;

    for (size_t i = 0; i < nd->host->peerCount; i++) {
        const net_connection *c = &nd->conns[i];

        if (c->state == NET_CONN_FREE)
            continue;
        /* in: messages per second it sends; dropped: by the datagram filter, never decoded;
         * refused: decoded and refused (bad messages, move inputs not applied). */
        strbuf_printf(out,
                      "%-4u %-20s %-8s %-10s actors=%u relevant=%u rtt=%ums queued=%zuB "
                      "sent=%lluB in=%.0f/s dropped=%llu refused=%llu addr=%s\n",
                      c->player_id, c->name[0] ? c->name : "-", c->world ? c->world->name : "-",
                      states[c->state], c->controller ? actor_owned_count(c->controller) : 0,
                      net_view_relevant(&c->view) + c->view.n_closing,
                      c->peer ? c->peer->roundTripTime : 0,
                      c->peer ? net_queued_bytes(c->peer) : 0,
                      (unsigned long long)c->bytes_sent,
                      net_policy_message_rate(&c->policy, now),
                      (unsigned long long)c->policy.dropped,
                      (unsigned long long)c->policy.bad_messages + c->policy.refused_inputs,
                      c->address);
        n++;
    }
    strbuf_printf(out, "%u connection(s), %u player(s)\n", n, nd->player_count);
}

void net_driver_notify_streaming_level_unload(net_driver *nd, world *w, level *lvl)
{
    (void)w;
    (void)lvl;
    nd->counters.streaming_levels_unloaded++;
}
