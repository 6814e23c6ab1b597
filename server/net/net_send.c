/*
 * net_send.c - sending, errors, rejects and kicks: the bottom of the send path.
 */
#include "net_send.h"

#include <stdarg.h>
#include <stdio.h>

#include "log.h"

size_t net_send_packet(net_driver *nd, net_connection *conn, uint8_t channel, ENetPacket *packet)
{
    size_t len;

    if (packet == NULL)
        return 0;
    len = packet->dataLength;
    /* ENet owns the packet once the send succeeds; if it failed, it is ours to destroy. */
    if (enet_peer_send(conn->peer, channel, packet) != 0) {
        enet_packet_destroy(packet);
        return 0;
    }
    nd->counters.packets_out++;
    nd->counters.bytes_out += len;
    conn->bytes_sent += len;
    return len;
}

size_t net_send(net_driver *nd, net_connection *conn, uint8_t channel, const Reap__Envelope *env)
{
    size_t len;
    msg_result r = msg_encode(env, nd->out_buf, NET_OUT_BYTES, &len);

    if (r != MSG_OK) {
        log_error("net: cannot encode %s: %s", msg_body_name(env->body_case), msg_result_str(r));
        return 0;
    }
    return net_send_packet(nd, conn, channel,
                           enet_packet_create(nd->out_buf, len,
                                              channel == MSG_CHANNEL_UPDATES
                                                  ? 0
                                                  : ENET_PACKET_FLAG_RELIABLE));
}

static void net_error_send(net_driver *nd, net_connection *conn, Reap__ErrorCode code,
                           const char *text, uint32_t seq, bool disconnect,
                           uint32_t retry_after_ms)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__Error err = REAP__ERROR__INIT;

    err.code = code;
    err.text = (char *)text;
    err.request_seq = seq;
    err.disconnect = disconnect;
    err.retry_after_ms = retry_after_ms;
    env.seq = seq;
    env.body_case = REAP__ENVELOPE__BODY_ERROR;
    env.error = &err;
    net_send(nd, conn, MSG_CHANNEL_CONTROL, &env);
}

void net_send_error(net_driver *nd, net_connection *conn, Reap__ErrorCode code, const char *text,
                    uint32_t seq)
{
    net_error_send(nd, conn, code, text, seq, false, 0);
}

net_policy_limits net_limits(const net_driver *nd)
{
    const cvar_registry *cv = nd->env.cvars;
    net_policy_limits lim;

    lim.max_actors_per_player = (uint32_t)cvar_get_int(cv, CVAR_NET_MAX_ACTORS_PER_PLAYER);
    lim.max_spawn_per_request = (uint32_t)cvar_get_int(cv, CVAR_NET_MAX_SPAWN_PER_REQUEST);
    lim.spawn_rate = cvar_get(cv, CVAR_NET_SPAWN_RATE);
    lim.spawn_burst = cvar_get(cv, CVAR_NET_SPAWN_BURST);
    lim.max_bad_messages = (uint32_t)cvar_get_int(cv, CVAR_NET_MAX_BAD_MESSAGES);
    lim.request_rate = cvar_get(cv, CVAR_NET_REQUEST_RATE);
    lim.request_burst = cvar_get(cv, CVAR_NET_REQUEST_BURST);
    lim.move_rate = cvar_get(cv, CVAR_NET_MAX_MOVE_INPUT_RATE);
    lim.max_pawn_speed = cvar_get(cv, CVAR_NET_MAX_PAWN_SPEED);
    lim.max_messages_per_frame = (uint32_t)cvar_get_int(cv, CVAR_NET_MAX_MESSAGES_PER_FRAME);
    lim.flood_kick_seconds = cvar_get(cv, CVAR_NET_FLOOD_KICK_SECONDS);
    return lim;
}

/* The cooldown keeps the NET_COOLDOWN_SLOTS latest kicks: a new one takes the slot that ends
 * first. The datagram filter refuses their CONNECTs. */
static void net_cool_down(net_driver *nd, const ENetAddress *a, double now)
{
    size_t pick = 0;

    for (size_t i = 0; i < NET_COOLDOWN_SLOTS; i++)
        if (nd->cooldown[i].until < nd->cooldown[pick].until)
            pick = i;
    nd->cooldown[pick].address = *a;
    nd->cooldown[pick].until = now + NET_COOLDOWN_S;
}

void net_kick(net_driver *nd, net_connection *conn, net_kick_reason reason, const char *why,
              uint32_t seq)
{
    net_error_send(nd, conn, REAP__ERROR_CODE__ERROR_CODE_KICKED, why, seq, true, 0);
    log_warn("net: kicking %s (player %u): %s", conn->address, conn->player_id, why);
    conn->kicked = true;
    conn->state = NET_CONN_CLOSING;
    nd->counters.kicked++;
    nd->counters.kicked_by[reason]++;
    if (reason != NET_KICK_HELLO_TIMEOUT)
        net_cool_down(nd, &conn->peer->address, net_now(nd));
    enet_peer_disconnect_later(conn->peer, 0);
}

void net_close_with_error(net_driver *nd, net_connection *conn, Reap__ErrorCode code,
                          const char *text, uint32_t seq)
{
    net_close_with_retry(nd, conn, code, text, seq, 0);
}

void net_close_with_retry(net_driver *nd, net_connection *conn, Reap__ErrorCode code,
                          const char *text, uint32_t seq, uint32_t retry_after_ms)
{
    if (conn->state == NET_CONN_CLOSING)
        return;
    net_error_send(nd, conn, code, text, seq, true, retry_after_ms);
    conn->kicked = true;
    conn->state = NET_CONN_CLOSING;
    enet_peer_disconnect_later(conn->peer, 0);
}

void net_reject(net_driver *nd, net_connection *conn, Reap__ErrorCode code, uint32_t seq,
                const char *fmt, ...)
{
    net_policy_limits lim = net_limits(nd);
    char text[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    nd->counters.bad_messages++;
    if (code == REAP__ERROR_CODE__ERROR_CODE_RATE)
        nd->counters.rate_limited++;
    log_debug("net: %s: rejected: %s", conn->address, text);
    net_send_error(nd, conn, code, text, seq);
    if (conn->state != NET_CONN_CLOSING && net_policy_note_bad_message(&conn->policy, &lim)) {
        snprintf(text, sizeof text, "disconnected after %u bad messages (net.MaxBadMessages)",
                 conn->policy.bad_messages);
        net_kick(nd, conn, NET_KICK_BAD_MESSAGES, text, seq);
    }
}
