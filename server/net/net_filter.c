/*
 * net_filter.c - every datagram, before ENet parses it (ENet's intercept hook).
 *
 * Assumes: called by ENet for each received datagram, with the host's receive buffer.
 * Guarantees: garbage is swallowed and counted; each message of a connected peer is counted
 * against its frame budget and its channel's bucket (net_policy.h) and, past them, taken out
 * of the datagram before ENet or protobuf see it, counted by reason; a peer that floods for
 * net.FloodKickSeconds is kicked, and its address may not connect for a while; fragments of packets larger than
 * net.MaxMessageBytes never reach ENet's reassembly (which would allocate the whole packet up
 * front), and their sender is told once per packet; a CONNECT is let through only while the
 * handshakes in flight leave room for everyone else (per address and in total; the oldest
 * gives way once it is older than a real client takes); a peer's own ENet disconnect is
 * noted, so leaving is not counted as a timeout.
 */
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "net_internal.h"
#include "net_send.h"

enum { NET_HANDSHAKE_TIMEOUT_S = 3, NET_SLOT_REST_S = 15 };
/* An unfinished handshake younger than this is not reset for a newcomer (net_admit_handshake). */
#define NET_HANDSHAKE_EVICT_S 1.0

/* ---- garbage datagrams ------------------------------------------------------------------ */

/* The protocol header: peer id and flags, and the sent time if the flag says so. */
static size_t net_header_size(const uint8_t *data)
{
    return (((data[0] << 8) | data[1]) & ENET_PROTOCOL_HEADER_FLAG_SENT_TIME) ? 4 : 2;
}

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

/* ---- walking a datagram's commands -------------------------------------------------------- */

/* The fixed size of each ENet command (protocol.h), 0 for unknown ones. */
static size_t net_command_size(uint8_t command)
{
    switch (command) {
    case ENET_PROTOCOL_COMMAND_ACKNOWLEDGE: return sizeof(ENetProtocolAcknowledge);
    case ENET_PROTOCOL_COMMAND_CONNECT: return sizeof(ENetProtocolConnect);
    case ENET_PROTOCOL_COMMAND_VERIFY_CONNECT: return sizeof(ENetProtocolVerifyConnect);
    case ENET_PROTOCOL_COMMAND_DISCONNECT: return sizeof(ENetProtocolDisconnect);
    case ENET_PROTOCOL_COMMAND_PING: return sizeof(ENetProtocolPing);
    case ENET_PROTOCOL_COMMAND_SEND_RELIABLE: return sizeof(ENetProtocolSendReliable);
    case ENET_PROTOCOL_COMMAND_SEND_UNRELIABLE: return sizeof(ENetProtocolSendUnreliable);
    case ENET_PROTOCOL_COMMAND_SEND_UNSEQUENCED: return sizeof(ENetProtocolSendUnsequenced);
    case ENET_PROTOCOL_COMMAND_SEND_FRAGMENT:
    case ENET_PROTOCOL_COMMAND_SEND_UNRELIABLE_FRAGMENT: return sizeof(ENetProtocolSendFragment);
    case ENET_PROTOCOL_COMMAND_BANDWIDTH_LIMIT: return sizeof(ENetProtocolBandwidthLimit);
    case ENET_PROTOCOL_COMMAND_THROTTLE_CONFIGURE: return sizeof(ENetProtocolThrottleConfigure);
    }
    return 0;
}

typedef struct net_datagram_facts {
    bool disconnect;         /* carries the sender's DISCONNECT */
    bool oversize;           /* carries a fragment of a packet over the limit */
    uint32_t oversize_total;
    uint16_t oversize_seq;
} net_datagram_facts;

/* What the policing of one datagram needs, read once for all its commands. */
typedef struct net_filter_ctx {
    net_driver *nd;
    net_connection *conn;    /* NULL: not policed (the handshake is finishing) */
    net_policy_limits lim;
    double now;
    uint64_t frame;
    /* Once a message of the datagram is over the frame's budget, or the connection is
     * closing, so are the ones after it: those are only counted, and the counts are added
     * once, at the end (a flood's datagrams are full of them). */
    bool over;
    net_drop_reason over_reason;
    uint32_t over_commands, over_messages;
} net_filter_ctx;

static bool net_filter_drop(net_filter_ctx *cx, net_drop_reason reason)
{
    cx->nd->counters.dropped[reason]++;
    cx->conn->policy.dropped++;
    return false;
}

/* Drops this and every later message of the datagram (see net_filter_ctx). */
static bool net_filter_drop_rest(net_filter_ctx *cx, net_drop_reason reason)
{
    cx->over = true;
    cx->over_reason = reason;
    return net_filter_drop(cx, reason);
}

/* Sequence numbers wrap: distances are taken from what ENet delivered last on the channel. */
static uint16_t net_seq_ahead(const ENetPeer *peer, unsigned channel, uint16_t seq)
{
    return (uint16_t)(seq - peer->channels[channel].incomingReliableSequenceNumber);
}

/* A reliable message was dropped: its sender resends it, and the ones after it on the channel
 * wait for it (ENet would hold them out of order, allocating, until it came). */
static void net_filter_wait(net_connection *conn, unsigned channel, uint16_t seq)
{
    uint16_t ahead = net_seq_ahead(conn->peer, channel, seq);

    if (ahead == 0 || ahead >= 0x8000)
        return; /* ENet has it already: a resend, acknowledged once one gets through */
    if (!conn->filter_waiting[channel] ||
        ahead < net_seq_ahead(conn->peer, channel, conn->filter_wait_seq[channel])) {
        conn->filter_waiting[channel] = true;
        conn->filter_wait_seq[channel] = seq;
    }
}

static bool net_cooling_down(const net_driver *nd, const ENetAddress *a, double now)
{
    for (size_t i = 0; i < NET_COOLDOWN_SLOTS; i++)
        if (nd->cooldown[i].until > now && nd->cooldown[i].address.host == a->host &&
            nd->cooldown[i].address.port == a->port)
            return true;
    return false;
}

static void net_filter_kick_flooder(net_filter_ctx *cx)
{
    char why[200];

    snprintf(why, sizeof why,
             "flooding: over net.MaxMessagesPerFrame=%u in every second for %g s "
             "(net.FloodKickSeconds)",
             cx->lim.max_messages_per_frame, cx->lim.flood_kick_seconds);
    net_kick(cx->nd, cx->conn, NET_KICK_FLOOD, why, 0);
}

/* Decides one command of a connected peer: true keeps it for ENet. Only messages (and ENet's
 * pings) are policed; acknowledgements, disconnects and ENet's settings always pass. */
static bool net_filter_keep(net_filter_ctx *cx, uint8_t command, const uint8_t *at)
{
    net_connection *conn = cx->conn;
    ENetProtocolCommandHeader h;
    unsigned channel;
    uint16_t seq;
    bool reliable, starts = true;
    net_policy_verdict v;

    memcpy(&h, at, sizeof h);
    channel = h.channelID;
    seq = ENET_NET_TO_HOST_16(h.reliableSequenceNumber);
    switch (command) {
    case ENET_PROTOCOL_COMMAND_PING:
    case ENET_PROTOCOL_COMMAND_SEND_RELIABLE:
    case ENET_PROTOCOL_COMMAND_SEND_UNRELIABLE:
    case ENET_PROTOCOL_COMMAND_SEND_UNSEQUENCED:
        break;
    case ENET_PROTOCOL_COMMAND_SEND_FRAGMENT:
    case ENET_PROTOCOL_COMMAND_SEND_UNRELIABLE_FRAGMENT: {
        ENetProtocolSendFragment f;
        memcpy(&f, at, sizeof f);
        starts = f.fragmentNumber == 0; /* a message is counted once, at its first fragment */
        break;
    }
    default:
        return true;
    }
    if (cx->over) {
        cx->over_commands++;
        cx->over_messages += starts;
        return false;
    }
    if (conn->state == NET_CONN_CLOSING)
        return net_filter_drop_rest(cx, NET_DROP_CLOSING);
    if (command != ENET_PROTOCOL_COMMAND_PING && channel >= conn->peer->channelCount)
        return true; /* ENet refuses it, and the rest of the datagram with it */
    reliable = command == ENET_PROTOCOL_COMMAND_SEND_RELIABLE ||
               command == ENET_PROTOCOL_COMMAND_SEND_FRAGMENT;
    reliable = reliable && channel < NET_POLICY_CHANNELS;
    if (reliable && conn->filter_waiting[channel]) {
        uint16_t wait_ahead = net_seq_ahead(conn->peer, channel, conn->filter_wait_seq[channel]);
        if (wait_ahead == 0 || wait_ahead >= 0x8000)
            conn->filter_waiting[channel] = false;
        else if (net_seq_ahead(conn->peer, channel, seq) > wait_ahead) {
            /* Still counted: a peer that keeps resending a window is still sending. */
            if (starts && net_policy_count(&conn->policy, &cx->lim, cx->now, cx->frame) ==
                              NET_POLICY_FLOOD)
                net_filter_kick_flooder(cx);
            return net_filter_drop(cx, NET_DROP_WAITING);
        }
    }
    if (starts) {
        v = net_policy_count(&conn->policy, &cx->lim, cx->now, cx->frame);
        if (v == NET_POLICY_FLOOD) {
            net_filter_kick_flooder(cx);
            return net_filter_drop_rest(cx, NET_DROP_BUDGET);
        }
        if (v == NET_POLICY_OVER_BUDGET) {
            if (reliable)
                net_filter_wait(conn, channel, seq);
            return net_filter_drop_rest(cx, NET_DROP_BUDGET);
        }
        if (command != ENET_PROTOCOL_COMMAND_PING &&
            net_policy_take(&conn->policy, &cx->lim, cx->now, channel) != NET_POLICY_ALLOW) {
            if (reliable)
                net_filter_wait(conn, channel, seq);
            return net_filter_drop(cx, NET_DROP_RATE);
        }
    }
    if (reliable && conn->filter_waiting[channel] && seq == conn->filter_wait_seq[channel])
        conn->filter_waiting[channel] = false;
    return true;
}

/* Walks a well-formed, uncompressed datagram of a known peer: reads what the filter needs and,
 * when cx->conn is set, removes the commands the policy drops, moving the rest down in place.
 * Returns the datagram's new length. A malformed tail is left as it is, for ENet to refuse. */
static size_t net_datagram_police(net_filter_ctx *cx, uint8_t *data, size_t len, size_t limit,
                                  net_datagram_facts *out)
{
    uint16_t raw = (uint16_t)((data[0] << 8) | data[1]);
    size_t at = net_header_size(data);
    size_t to = at;

    memset(out, 0, sizeof *out);
    if (raw & ENET_PROTOCOL_HEADER_FLAG_COMPRESSED)
        return len;
    while (at + sizeof(ENetProtocolCommandHeader) <= len) {
        uint8_t command = data[at] & ENET_PROTOCOL_COMMAND_MASK;
        size_t size = net_command_size(command);
        size_t payload = 0;

        if (size == 0 || at + size > len)
            break;
        switch (command) {
        case ENET_PROTOCOL_COMMAND_DISCONNECT:
            out->disconnect = true;
            break;
        case ENET_PROTOCOL_COMMAND_SEND_RELIABLE: {
            ENetProtocolSendReliable c;
            memcpy(&c, data + at, sizeof c);
            payload = ENET_NET_TO_HOST_16(c.dataLength);
            break;
        }
        case ENET_PROTOCOL_COMMAND_SEND_UNRELIABLE: {
            ENetProtocolSendUnreliable c;
            memcpy(&c, data + at, sizeof c);
            payload = ENET_NET_TO_HOST_16(c.dataLength);
            break;
        }
        case ENET_PROTOCOL_COMMAND_SEND_UNSEQUENCED: {
            ENetProtocolSendUnsequenced c;
            memcpy(&c, data + at, sizeof c);
            payload = ENET_NET_TO_HOST_16(c.dataLength);
            break;
        }
        case ENET_PROTOCOL_COMMAND_SEND_FRAGMENT:
        case ENET_PROTOCOL_COMMAND_SEND_UNRELIABLE_FRAGMENT: {
            ENetProtocolSendFragment c;
            memcpy(&c, data + at, sizeof c);
            payload = ENET_NET_TO_HOST_16(c.dataLength);
            if (ENET_NET_TO_HOST_32(c.totalLength) > limit && !out->oversize) {
                out->oversize = true;
                out->oversize_total = ENET_NET_TO_HOST_32(c.totalLength);
                out->oversize_seq = ENET_NET_TO_HOST_16(c.startSequenceNumber);
            }
            break;
        }
        default:
            break;
        }
        if (payload > len - at - size)
            break;
        if (cx->conn == NULL || net_filter_keep(cx, command, data + at)) {
            if (to != at)
                memmove(data + to, data + at, size + payload);
            to += size + payload;
        }
        at += size + payload;
    }
    if (at < len && to != at)
        memmove(data + to, data + at, len - at);
    if (cx->over_commands > 0) {
        cx->nd->counters.dropped[cx->over_reason] += cx->over_commands;
        cx->conn->policy.dropped += cx->over_commands;
        net_policy_count_more(&cx->conn->policy, cx->over_messages);
    }
    return to + (len - at);
}

/* ---- handshakes ------------------------------------------------------------------------------ */

static bool net_peer_half_open(const ENetPeer *peer)
{
    return peer->state == ENET_PEER_STATE_ACKNOWLEDGING_CONNECT;
}

/* Resets an unfinished handshake. Its slot then rests before ENet may give it to another
 * connection: a client that did get the handshake's reply still sends to this slot, and ENet
 * tells connections on one slot from one address apart only by a 2-bit session id, so the
 * next connection there could take that client's acknowledgements for its own (many load-test
 * bots share one address and port). A resting slot is marked ZOMBIE, which ENet skips when it
 * sends, receives or picks a slot for a new connection (a zombie is dispatched only from the
 * dispatch queue, which a reset peer has left). */
static void net_reset_handshake(net_driver *nd, ENetPeer *p, double now)
{
    size_t i = (size_t)(p - nd->host->peers);

    enet_peer_reset(p);
    nd->handshake_seen[i] = 0;
    if (nd->resting < NET_HANDSHAKE_SLOTS) {
        p->state = ENET_PEER_STATE_ZOMBIE;
        nd->rest_until[i] = now + NET_SLOT_REST_S;
        nd->resting++;
    }
}

/* Decides a CONNECT from `from`: true lets ENet have it. */
static bool net_admit_handshake(net_driver *nd, const ENetAddress *from, double now)
{
    ENetHost *host = nd->host;
    uint32_t total = 0, same_address = 0;
    ENetPeer *oldest = NULL;
    double oldest_age = -1;

    if (net_cooling_down(nd, from, now)) {
        nd->counters.refused_handshakes++;
        return false;
    }

    for (size_t i = 0; i < host->peerCount; i++) {
        ENetPeer *p = &host->peers[i];
        double age;

        if (!net_peer_half_open(p))
            continue;
        total++;
        if (p->address.host == from->host)
            same_address++;
        /* Not yet seen by the sweep: it came in since, the youngest of all. */
        age = nd->handshake_seen[i] > 0 ? now - nd->handshake_seen[i] : 0;
        if (age > oldest_age) {
            oldest = p;
            oldest_age = age;
        }
    }
    if (same_address >= NET_HANDSHAKES_PER_ADDRESS) {
        nd->counters.refused_handshakes++;
        return false;
    }
    if (total >= NET_HANDSHAKE_SLOTS && oldest != NULL) {
        /* Like a SYN cache: an unfinished handshake gives way to a newcomer, the oldest, but
         * only once it is older than a real client takes to finish (a round trip and its own
         * lag): one that was answered a moment ago may be a player who has taken the answer
         * and is sending its hello, and a reset would leave it talking to a slot that is gone
         * until its welcome times out. Until then the newcomer is refused; its ENet sends the
         * CONNECT again (after half a second, then one, then two). So a flood faster than the
         * cache turns over slows real players' connects, and never drops one half done. */
        nd->counters.refused_handshakes++;
        if (oldest_age < NET_HANDSHAKE_EVICT_S)
            return false;
        net_reset_handshake(nd, oldest, now);
    }
    return true;
}

void net_filter_sweep_handshakes(net_driver *nd, double now)
{
    ENetHost *host = nd->host;

    for (size_t i = 0; i < host->peerCount; i++) {
        ENetPeer *p = &host->peers[i];

        if (nd->rest_until[i] != 0) {
            if (now >= nd->rest_until[i]) {
                if (p->state == ENET_PEER_STATE_ZOMBIE)
                    p->state = ENET_PEER_STATE_DISCONNECTED;
                nd->rest_until[i] = 0;
                nd->resting--;
            }
            continue;
        }
        if (!net_peer_half_open(p)) {
            nd->handshake_seen[i] = 0;
            continue;
        }
        if (nd->handshake_seen[i] == 0) {
            nd->handshake_seen[i] = now;
        } else if (now - nd->handshake_seen[i] > NET_HANDSHAKE_TIMEOUT_S) {
            net_reset_handshake(nd, p, now);
            nd->counters.handshake_timeouts++;
        }
    }
}

/* ---- the hook ---------------------------------------------------------------------------------- */

int ENET_CALLBACK net_intercept_cb(ENetHost *host, ENetEvent *event)
{
    net_driver *nd = net_intercept_driver;
    uint8_t *data = host->receivedData;
    size_t len = host->receivedDataLength;
    net_datagram_facts facts;
    net_filter_ctx cx;
    net_connection *conn;
    uint16_t peer_id;
    size_t limit, kept;

    (void)event;
    if (nd == NULL)
        return 0;
    if (net_datagram_is_garbage(host, &host->receivedAddress, data, len)) {
        nd->counters.bad_datagrams++;
        return 1; /* swallow it: ENet would ignore it anyway */
    }
    peer_id = (uint16_t)(((data[0] << 8) | data[1]) &
                         ~(ENET_PROTOCOL_HEADER_FLAG_MASK | ENET_PROTOCOL_HEADER_SESSION_MASK));
    if (peer_id == ENET_PROTOCOL_MAXIMUM_PEER_ID) /* a CONNECT (anything else is garbage) */
        return net_admit_handshake(nd, &host->receivedAddress, net_now(nd)) ? 0 : 1;
    limit = (size_t)cvar_get_int(nd->env.cvars, CVAR_NET_MAX_MESSAGE_BYTES);
    conn = &nd->conns[peer_id];
    /* A datagram that finishes the handshake may carry the hello: the connection is policed
     * from the next one on (ENet reports the connect as this datagram is handled). */
    memset(&cx, 0, sizeof cx);
    cx.nd = nd;
    cx.conn = conn->state == NET_CONN_FREE ? NULL : conn;
    if (cx.conn != NULL) {
        cx.lim = net_limits(nd);
        cx.now = net_now(nd);
        cx.frame = *nd->env.frame;
    }
    /* ENet reads the datagram from this buffer after the hook (no checksum is set, so a
     * datagram with commands taken out is still whole). */
    kept = net_datagram_police(&cx, data, len, limit, &facts);
    host->receivedDataLength = kept;
    if (facts.disconnect)
        conn->sent_disconnect = true;
    if (!facts.oversize) /* nothing left but the header: ENet has nothing to do */
        return kept > net_header_size(data) ? 0 : 1;
    nd->counters.refused_fragments++;
    if ((conn->state == NET_CONN_CONNECTED || conn->state == NET_CONN_JOINED) &&
        !(conn->oversize_reported && conn->oversize_seq == facts.oversize_seq)) {
        conn->oversize_reported = true;
        conn->oversize_seq = facts.oversize_seq;
        nd->counters.oversize_packets++;
        net_reject(nd, conn, REAP__ERROR_CODE__ERROR_CODE_OVERSIZE, 0,
                   "message larger than the size limit (%u bytes, see net.MaxMessageBytes)",
                   facts.oversize_total);
    }
    /* Swallowed whole: ENet would otherwise allocate the announced size for reassembly. */
    return 1;
}

void net_sanitize(const char *text, char *out, size_t out_size)
{
    size_t o = 0;

    for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) {
        if (*p >= 0x20 && *p < 0x7f && *p != '\\') {
            if (o + 1 >= out_size)
                break;
            out[o++] = (char)*p;
        } else {
            if (o + 4 >= out_size)
                break;
            snprintf(out + o, out_size - o, "\\x%02x", *p);
            o += 4;
        }
    }
    out[o] = '\0';
}
