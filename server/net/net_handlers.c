/*
 * net_handlers.c - what the server does with each client message.
 *
 * Assumes: a decoded envelope from a connection that is not closing, which the datagram
 * filter let through (net_filter.c: within the frame's budget and twice the rates below).
 * Guarantees: every request gets exactly one answer (its reply, or an Error naming what was
 * wrong), every refusal is counted, a hello that cannot be accepted closes the connection,
 * and what one connection can make the server do per message is bounded by its rate buckets
 * (net_policy.c): spawns, requests and move inputs each have their own.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "net_internal.h"
#include "net_send.h"

/* Collected objects one spawn request may create, parts and children included. */
enum { NET_SPAWN_OBJECTS_MAX = 10000 };

/* Over the rate: answered with ERROR_CODE_RATE, which counts as a bad message. */
static bool net_request_allowed(net_driver *nd, net_connection *conn, const Reap__Envelope *env)
{
    net_policy_limits lim = net_limits(nd);

    if (net_policy_check_request(&conn->policy, &lim, net_now(nd)) ==
        NET_POLICY_ALLOW)
        return true;
    net_reject(nd, conn, REAP__ERROR_CODE__ERROR_CODE_RATE, env->seq,
               "%s refused: over the request rate (net.RequestRatePerSecond=%g, "
               "net.RequestBurst=%g)",
               msg_body_name(env->body_case), lim.request_rate, lim.request_burst);
    return false;
}

/* Length of the UTF-8 sequence at p (1-4) if it is well formed and encodes no control
 * character (C0, DEL, C1); 0 otherwise. */
static size_t net_utf8_printable(const unsigned char *p)
{
    uint32_t cp;
    size_t n;

    if (p[0] < 0x80)
        return p[0] >= 0x20 && p[0] != 0x7f ? 1 : 0;
    if (p[0] >= 0xc2 && p[0] <= 0xdf) {
        n = 2;
        cp = p[0] & 0x1f;
    } else if (p[0] >= 0xe0 && p[0] <= 0xef) {
        n = 3;
        cp = p[0] & 0x0f;
    } else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        n = 4;
        cp = p[0] & 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    /* Overlong forms, surrogates, beyond Unicode, and the C1 controls. */
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f))
        return 0;
    return n;
}

bool net_name_is_valid(const char *name)
{
    const unsigned char *p = (const unsigned char *)name;
    size_t len = strlen(name);

    if (len >= PLAYER_NAME_MAX)
        return false;
    while (*p != '\0') {
        size_t n = net_utf8_printable(p);
        if (n == 0)
            return false;
        p += n;
    }
    return true;
}

/* A hello the server cannot accept: one Error that says the connection ends (Error.disconnect),
 * counted as a bad message, and the connection closes once it is delivered. It is not counted
 * towards net.MaxBadMessages: the connection ends anyway, and a kick would be a second Error. */
static void net_refuse_hello(net_driver *nd, net_connection *conn, net_refuse_reason reason,
                             Reap__ErrorCode code, uint32_t seq, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static void net_refuse_hello(net_driver *nd, net_connection *conn, net_refuse_reason reason,
                             Reap__ErrorCode code, uint32_t seq, const char *fmt, ...)
{
    char text[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    nd->counters.bad_messages++;
    nd->counters.refused_joins[reason]++;
    log_debug("net: %s: hello refused: %s", conn->address, text);
    net_close_with_error(nd, conn, code, text, seq);
}

/* Admission control (net_admission.h): a server too loaded to take another player now says
 * so with ERROR_CODE_BUSY and when to try again (Error.retry_after_ms), and closes the
 * connection. Not a bad message: the client did nothing wrong. */
static bool net_admit(net_driver *nd, net_connection *conn, uint32_t seq)
{
    net_admission_config cfg = net_admission_settings(nd);
    net_admission_verdict v = net_admission_admit(&nd->admission, &cfg, nd->player_count,
                                                  net_now(nd));
    uint32_t retry_ms;
    char text[160];

    if (v == NET_ADMIT)
        return true;
    retry_ms = net_admission_retry_ms(
        &nd->admission, (uint32_t)cvar_get_int(nd->env.cvars, CVAR_NET_ADMISSION_RETRY_AFTER_MS));
    snprintf(text, sizeof text,
             v == NET_ADMIT_BUSY
                 ? "the server is busy (load %.2f of its frame budget); connect again in %u ms"
                 : "the server lets new players in at a pace (load %.2f of its frame budget); "
                   "connect again in %u ms",
             nd->admission.load, retry_ms);
    nd->counters.refused_joins[NET_REFUSE_BUSY]++;
    log_debug("net: %s: hello refused: %s", conn->address, text);
    net_close_with_retry(nd, conn, REAP__ERROR_CODE__ERROR_CODE_BUSY, text, seq, retry_ms);
    return false;
}

/* The Welcome of a connection that just joined (or arrived by a seamless travel): who it is,
 * and what it needs to know to decode and to expect what it will be sent (reap.proto says
 * what each field promises). */
void net_send_welcome(net_driver *nd, net_connection *conn, uint32_t seq, Reap__Travel *travel)
{
    const cvar_registry *cv = nd->env.cvars;
    const world *w = conn->world;
    const world_env *wenv = w->env;
    const player_controller *pc = conn->controller;
    net_policy_limits lim = net_limits(nd);
    Reap__Envelope out = REAP__ENVELOPE__INIT;
    Reap__Welcome welcome = REAP__WELCOME__INIT;
    Reap__ClientLimits limits = REAP__CLIENT_LIMITS__INIT;
    Reap__UpdateBand bands[NET_BANDS], *band_list[NET_BANDS];
    char *archetypes[WORLD_PROFILE_ARCHETYPES_MAX], *spawnable[WORLD_PROFILE_ARCHETYPES_MAX + 2];
    float cull = (float)cvar_get(cv, CVAR_NET_CULL_DISTANCE);

    welcome.player_id = conn->player_id;
    welcome.world = (char *)w->name;
    welcome.tick_hz = nd->env.tick_hz;
    welcome.position_step = net_repl_index(nd, w)->step;
    welcome.controller_net_id = pc->base.net_id;
    welcome.pawn_net_id = pc->pawn != NULL ? pc->pawn->base.net_id : 0;
    welcome.server_version = (char *)REAP_VERSION;
    for (uint32_t i = 0; i < wenv->n_archetypes && i < WORLD_PROFILE_ARCHETYPES_MAX; i++) {
        archetypes[welcome.n_archetypes++] = (char *)wenv->archetypes[i].def.name;
        /* What net_handle_spawn accepts by name: actor archetypes, then the two built-ins. */
        if (wenv->archetypes[i].def.base == WORLD_PROFILE_BASE_ACTOR)
            spawnable[welcome.n_spawnable++] = (char *)wenv->archetypes[i].def.name;
    }
    spawnable[welcome.n_spawnable++] = (char *)"Prop";
    spawnable[welcome.n_spawnable++] = (char *)"Projectile";
    welcome.archetypes = archetypes;
    welcome.spawnable = spawnable;
    welcome.cull_distance = cull;
    welcome.world_extent = wenv->extent;
    for (int k = 0; k < NET_BANDS; k++) {
        reap__update_band__init(&bands[k]);
        bands[k].max_distance = cull / (float)net_band_divisor[k];
        bands[k].period = net_band_period[k];
        band_list[k] = &bands[k];
    }
    welcome.n_update_bands = NET_BANDS;
    welcome.update_bands = band_list;
    welcome.own_update_period = NET_OWN_UPDATE_PERIOD;
    welcome.max_client_rate = (uint32_t)cvar_get_int(cv, CVAR_NET_MAX_CLIENT_RATE);
    limits.max_pawn_speed = lim.max_pawn_speed;
    limits.max_move_inputs_per_second = lim.move_rate;
    limits.spawn_rate_per_second = lim.spawn_rate;
    limits.spawn_burst = lim.spawn_burst;
    limits.max_spawn_per_request = lim.max_spawn_per_request;
    limits.max_actors_per_player = lim.max_actors_per_player;
    limits.request_rate_per_second = lim.request_rate;
    limits.request_burst = lim.request_burst;
    limits.max_message_bytes = (uint32_t)cvar_get_int(cv, CVAR_NET_MAX_MESSAGE_BYTES);
    limits.max_bad_messages = lim.max_bad_messages;
    welcome.limits = &limits;
    out.seq = seq;
    if (travel != NULL) {
        travel->welcome = &welcome;
        out.body_case = REAP__ENVELOPE__BODY_TRAVEL;
        out.travel = travel;
        net_send(nd, conn, MSG_CHANNEL_REPLICATION, &out);
        return;
    }
    out.body_case = REAP__ENVELOPE__BODY_WELCOME;
    out.welcome = &welcome;
    net_send(nd, conn, MSG_CHANNEL_CONTROL, &out);
}

/* A hello the server cannot accept (another protocol version, a bad name, no such world)
 * closes the connection (net_refuse_hello): a client that cannot speak to this server has
 * nothing more to say. */
static void net_handle_hello(net_driver *nd, net_connection *conn, const Reap__Envelope *env)
{
    const Reap__Hello *h = env->hello;
    player_controller *pc;
    world *w;
    gc_result r;

    if (conn->state != NET_CONN_CONNECTED) {
        net_reject(nd, conn, REAP__ERROR_CODE__ERROR_CODE_UNEXPECTED, env->seq,
                   "hello received twice");
        return;
    }
    if (h->protocol_version != MSG_PROTOCOL_VERSION) {
        net_refuse_hello(nd, conn, NET_REFUSE_VERSION, REAP__ERROR_CODE__ERROR_CODE_VERSION, env->seq,
                         "protocol version %u is not supported (this server speaks %u)",
                         h->protocol_version, MSG_PROTOCOL_VERSION);
        return;
    }
    if (!net_name_is_valid(h->player_name)) {
        net_refuse_hello(nd, conn, NET_REFUSE_BAD_HELLO, REAP__ERROR_CODE__ERROR_CODE_BAD_REQUEST, env->seq,
                         "player name must be valid UTF-8 without control characters and "
                         "shorter than %d bytes", PLAYER_NAME_MAX);
        return;
    }
    if (nd->travelling) {
        net_refuse_hello(nd, conn, NET_REFUSE_TRAVEL, REAP__ERROR_CODE__ERROR_CODE_TRAVEL, env->seq,
                         "the server is travelling to %s; connect again in a moment",
                         nd->travel_map);
        return;
    }
    w = net_find_world(nd, h->world);
    if (w == NULL) {
        char shown[48];
        net_sanitize(h->world, shown, sizeof shown);
        net_refuse_hello(nd, conn, NET_REFUSE_NO_WORLD, REAP__ERROR_CODE__ERROR_CODE_NO_SUCH_WORLD, env->seq,
                         "no world named '%s' (this server has World0..World%u)", shown,
                         nd->env.world_count - 1);
        return;
    }
    if (!net_admit(nd, conn, env->seq))
        return;
    conn->player_id = ++nd->next_player_id;
    if (h->player_name[0] != '\0')
        snprintf(conn->name, sizeof conn->name, "%s", h->player_name);
    else
        snprintf(conn->name, sizeof conn->name, "player%u", conn->player_id);
    r = actor_spawn_player(w, conn->player_id, conn->name, &pc);
    if (r != GC_OK) {
        log_error("net: cannot spawn player for %s: %s", conn->address, gc_result_str(r));
        nd->counters.refused_joins[NET_REFUSE_FULL]++;
        net_close_with_error(nd, conn, REAP__ERROR_CODE__ERROR_CODE_SERVER_FULL,
                             "cannot spawn player", env->seq);
        return;
    }
    conn->controller = pc;
    conn->world = w;
    conn->state = NET_CONN_JOINED;
    w->connections++;
    nd->player_count++;
    net_repl_join(nd, conn);
    net_send_welcome(nd, conn, env->seq, NULL);
    log_info("player %u '%s' joined %s from %s", conn->player_id, conn->name, w->name,
             conn->address);
    if (nd->env.player_joined_cb != NULL)
        nd->env.player_joined_cb(nd->env.hooks_ctx, conn->player_id, conn->name,
                                 h->matchmaker_player_id);
}

static void net_handle_spawn(net_driver *nd, net_connection *conn, const Reap__Envelope *env)
{
    const Reap__SpawnRequest *req = env->spawn_request;
    net_policy_limits lim = net_limits(nd);
    Reap__Envelope out = REAP__ENVELOPE__INIT;
    Reap__SpawnAck ack = REAP__SPAWN_ACK__INIT;
    uint32_t owned = actor_owned_count(conn->controller);
    uint32_t spawned = 0, replicated = 0, objects = WORLD_PROP_PARTS + 1;
    const world_env *wenv = conn->world->env;
    const char *name = req->archetype != NULL ? req->archetype : "";
    actor_kind kind;
    int arch = -1;

    if (name[0] != '\0') {
        if (strcmp(name, "Prop") == 0) {
            kind = ACTOR_KIND_PROP;
        } else if (strcmp(name, "Projectile") == 0) {
            kind = ACTOR_KIND_PROJECTILE;
        } else if ((arch = world_archetype_find(wenv, name)) >= 0 &&
                   wenv->archetypes[arch].def.base == WORLD_PROFILE_BASE_ACTOR) {
            kind = ACTOR_KIND_ARCHETYPE;
            objects = wenv->archetypes[arch].def.objects;
        } else {
            char shown[48];

            net_sanitize(name, shown, sizeof shown);
            net_reject(nd, conn, REAP__ERROR_CODE__ERROR_CODE_BAD_REQUEST, env->seq,
                       arch >= 0 ? "cannot spawn archetype '%s': it is a component (spawn an "
                                   "actor archetype that has it as a child)"
                                 : "no archetype named '%s' (Welcome.archetypes lists this "
                                   "server's; Prop and Projectile are always there)", shown);
            return;
        }
    } else if (req->actor_class == REAP__ACTOR_CLASS__ACTOR_CLASS_PROP)
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
    if (kind == ACTOR_KIND_ARCHETYPE && req->count > 0 &&
        (uint64_t)req->count * objects > NET_SPAWN_OBJECTS_MAX) {
        net_reject(nd, conn, REAP__ERROR_CODE__ERROR_CODE_BAD_REQUEST, env->seq,
                   "%u %s would create %llu objects; one request may create at most %d",
                   req->count, name, (unsigned long long)req->count * objects,
                   NET_SPAWN_OBJECTS_MAX);
        return;
    }
    switch (net_policy_check_spawn(&conn->policy, &lim, net_now(nd), owned,
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
    default:
        net_reject(nd, conn, REAP__ERROR_CODE__ERROR_CODE_RATE, env->seq,
                   "spawn rate exceeded (net.SpawnRatePerSecond=%g, net.SpawnBurst=%g)",
                   lim.spawn_rate, lim.spawn_burst);
        return;
    }
    if (!VEC_RESERVE(nd->ids, nd->ids_cap, req->count)) {
        net_send_error(nd, conn, REAP__ERROR_CODE__ERROR_CODE_UNSPECIFIED, "out of memory",
                       env->seq);
        return;
    }
    while (spawned < req->count) {
        actor *a;
        gc_result r = kind == ACTOR_KIND_ARCHETYPE
                          ? actor_spawn_archetype(conn->world, (uint32_t)arch, conn->controller,
                                                  &a)
                          : actor_spawn(conn->world, kind, conn->controller, &a);
        if (r != GC_OK) {
            log_error("net: spawn for player %u failed after %u of %u: %s", conn->player_id,
                      spawned, req->count, gc_result_str(r));
            break;
        }
        spawned++;
        if (a->replicates)
            nd->ids[replicated++] = a->net_id;
    }
    ack.count = spawned;
    ack.n_net_ids = replicated;
    ack.net_ids = nd->ids;
    out.seq = env->seq;
    out.body_case = REAP__ENVELOPE__BODY_SPAWN_ACK;
    out.spawn_ack = &ack;
    /* net.MaxSpawnPerRequest keeps an acknowledgement well inside one message; should it ever
     * not fit, the request is still answered. */
    if (net_send(nd, conn, MSG_CHANNEL_CONTROL, &out) == 0)
        net_send_error(nd, conn, REAP__ERROR_CODE__ERROR_CODE_UNSPECIFIED,
                       "spawned, but the acknowledgement could not be sent", env->seq);
    log_debug("player %u spawned %u %s", conn->player_id, spawned,
              kind == ACTOR_KIND_ARCHETYPE ? name : actor_kind_name(kind));
}

static void net_handle_destroy(net_driver *nd, net_connection *conn, const Reap__Envelope *env)
{
    const Reap__DestroyRequest *req = env->destroy_request;
    Reap__Envelope out = REAP__ENVELOPE__INIT;
    Reap__DestroyAck ack = REAP__DESTROY_ACK__INIT;
    uint32_t destroyed = 0, refused = 0;

    if (req->n_net_ids == 0) {
        net_reject(nd, conn, REAP__ERROR_CODE__ERROR_CODE_BAD_REQUEST, env->seq,
                   "destroy request names no actors");
        return;
    }
    for (size_t i = 0; i < req->n_net_ids; i++) {
        actor *a = actor_find_owned(conn->controller, req->net_ids[i]);
        if (a == NULL) {
            refused++;
            continue;
        }
        actor_destroy(conn->world, a);
        destroyed++;
    }
    if (refused > 0) {
        /* One answer: the error says what was and was not done. */
        net_reject(nd, conn, REAP__ERROR_CODE__ERROR_CODE_NOT_OWNER, env->seq,
                   "%u of %zu net ids are not actors you own (%u destroyed)", refused,
                   req->n_net_ids, destroyed);
        return;
    }
    ack.count = destroyed;
    out.seq = env->seq;
    out.body_case = REAP__ENVELOPE__BODY_DESTROY_ACK;
    out.destroy_ack = &ack;
    net_send(nd, conn, MSG_CHANNEL_CONTROL, &out);
}

static void net_handle_stats(net_driver *nd, net_connection *conn, const Reap__Envelope *env)
{
    const net_driver_env *e = &nd->env;
    Reap__Envelope out = REAP__ENVELOPE__INIT;
    Reap__StatsReply reply = REAP__STATS_REPLY__INIT;
    gc_stats st;

    gc_stats_get(e->heap, &st);
    reply.frame = *e->frame;
    reply.objects = gc_object_count(e->heap);
    reply.players = nd->player_count;
    reply.collections = st.collections;
    reply.objects_destroyed = st.objects_destroyed;
    reply.interval_seconds = *e->gc_interval;
    reply.time_since_last_purge_seconds = *e->gc_since_purge;
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
    pong.frame = *nd->env.frame;
    out.seq = env->seq;
    out.body_case = REAP__ENVELOPE__BODY_PONG;
    out.pong = &pong;
    net_send(nd, conn, MSG_CHANNEL_CONTROL, &out);
}

/* Every refused input, whatever the reason, is counted and never a bad message: inputs are
 * unreliable and frequent, and one client's wrong setting (or a NaN from its physics) must
 * not end its connection within a fraction of a second. Its sender hears why at most once a
 * second, so it is told without a storm of errors. */
static void net_handle_move(net_driver *nd, net_connection *conn, const Reap__Envelope *env)
{
    const Reap__MoveInput *in = env->move_input;
    net_policy_limits lim = net_limits(nd);
    double now = net_now(nd);
    net_policy_verdict v = net_policy_check_move(&conn->policy, &lim, now, in->vx, in->vy);
    char text[160];

    if (v == NET_POLICY_ALLOW) {
        if (conn->controller->pawn != NULL)
            actor_steer_pawn(conn->controller->pawn, in->vx, in->vy);
        return;
    }
    nd->counters.refused_inputs++;
    if (conn->input_noticed && now - conn->last_input_notice < 1.0)
        return;
    conn->input_noticed = true;
    conn->last_input_notice = now;
    if (v == NET_POLICY_BAD_VALUE)
        snprintf(text, sizeof text, "move input with a velocity that is not a finite number; "
                 "ignored");
    else if (v == NET_POLICY_TOO_FAST)
        snprintf(text, sizeof text, "move input faster than net.MaxPawnSpeed=%g; ignored",
                 lim.max_pawn_speed);
    else
        snprintf(text, sizeof text, "move inputs over net.MaxMoveInputsPerSecond=%g; extra "
                 "ones ignored", lim.move_rate);
    net_send_error(nd, conn, v == NET_POLICY_OVER_RATE ? REAP__ERROR_CODE__ERROR_CODE_RATE
                                                       : REAP__ERROR_CODE__ERROR_CODE_BAD_REQUEST,
                   text, env->seq);
}

static void net_handle_check(net_driver *nd, net_connection *conn, const Reap__Envelope *env)
{
    (void)nd;
    /* Answered after this frame's replication, on the replication channel. */
    conn->check_requested = true;
    conn->check_seq = env->seq;
}

static void net_handle_goodbye(net_driver *nd, net_connection *conn)
{
    conn->said_goodbye = true;
    net_leave_world(nd, conn, "goodbye");
    conn->state = NET_CONN_CLOSING;
    /* At once, dropping what is still queued: a client that said goodbye is owed nothing more,
     * and waiting for its queue to be acknowledged first (disconnect_later) can take seconds
     * on a lossy link. */
    enet_peer_disconnect(conn->peer, 0);
}

void net_on_receive(net_driver *nd, net_connection *conn, const ENetPacket *packet)
{
    size_t max_bytes = (size_t)cvar_get_int(nd->env.cvars, CVAR_NET_MAX_MESSAGE_BYTES);
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
    if (conn->state == NET_CONN_TRAVELLING && net_travel_refuses(nd, conn, env))
        return;
    if (conn->state != NET_CONN_JOINED && conn->state != NET_CONN_TRAVELLING) {
        net_reject(nd, conn, REAP__ERROR_CODE__ERROR_CODE_UNEXPECTED, env->seq,
                   "'%s' before hello: say hello first", msg_body_name(env->body_case));
        return;
    }
    switch (env->body_case) {
    case REAP__ENVELOPE__BODY_SPAWN_REQUEST:
        net_handle_spawn(nd, conn, env);
        break;
    case REAP__ENVELOPE__BODY_MOVE_INPUT:
        net_handle_move(nd, conn, env);
        break;
    case REAP__ENVELOPE__BODY_DESTROY_REQUEST:
        if (net_request_allowed(nd, conn, env))
            net_handle_destroy(nd, conn, env);
        break;
    case REAP__ENVELOPE__BODY_STATS_REQUEST:
        if (net_request_allowed(nd, conn, env))
            net_handle_stats(nd, conn, env);
        break;
    case REAP__ENVELOPE__BODY_PING:
        if (net_request_allowed(nd, conn, env))
            net_handle_ping(nd, conn, env);
        break;
    case REAP__ENVELOPE__BODY_REPLICATION_CHECK_REQUEST:
        if (net_request_allowed(nd, conn, env))
            net_handle_check(nd, conn, env);
        break;
    default:
        net_reject(nd, conn, REAP__ERROR_CODE__ERROR_CODE_UNEXPECTED, env->seq,
                   "'%s' is a server-to-client message", msg_body_name(env->body_case));
        break;
    }
}
