/*
 * net_filter.c - every datagram, before ENet parses it (ENet's intercept hook).
 *
 * Assumes: called by ENet for each received datagram, with the host's receive buffer.
 * Guarantees: garbage is swallowed and counted; fragments of packets larger than
 * net.MaxMessageBytes never reach ENet's reassembly (which would allocate the whole packet up
 * front), and their sender is told once per packet; a CONNECT is let through only while the
 * handshakes in flight leave room for everyone else (per address and in total; the oldest
 * gives way); a peer's own ENet disconnect is noted, so leaving is not counted as a timeout.
 */
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "log.h"
#include "net_internal.h"

enum { NET_HANDSHAKE_TIMEOUT_S = 3, NET_SLOT_REST_S = 15 };

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

/* Reads what the filter needs from a well-formed, uncompressed datagram of a known peer. */
static void net_datagram_inspect(const uint8_t *data, size_t len, size_t limit,
                                 net_datagram_facts *out)
{
    uint16_t raw = (uint16_t)((data[0] << 8) | data[1]);
    size_t at = (raw & ENET_PROTOCOL_HEADER_FLAG_SENT_TIME) ? 4 : 2;

    memset(out, 0, sizeof *out);
    if (raw & ENET_PROTOCOL_HEADER_FLAG_COMPRESSED)
        return;
    while (at + sizeof(ENetProtocolCommandHeader) <= len) {
        uint8_t command = data[at] & ENET_PROTOCOL_COMMAND_MASK;
        size_t size = net_command_size(command);
        size_t payload = 0;

        if (size == 0 || at + size > len)
            return;
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
        at += size + payload;
    }
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
    double oldest_seen = 0;

    for (size_t i = 0; i < host->peerCount; i++) {
        ENetPeer *p = &host->peers[i];

        if (!net_peer_half_open(p))
            continue;
        total++;
        if (p->address.host == from->host)
            same_address++;
        if (oldest == NULL || nd->handshake_seen[i] < oldest_seen) {
            oldest = p;
            oldest_seen = nd->handshake_seen[i];
        }
    }
    if (same_address >= NET_HANDSHAKES_PER_ADDRESS) {
        nd->counters.refused_handshakes++;
        return false;
    }
    if (total >= NET_HANDSHAKE_SLOTS && oldest != NULL) {
        /* Like a SYN cache: the oldest unfinished handshake gives way. A real client finishes
         * within a round trip, so only a flood faster than the cache turns over can stop it. */
        net_reset_handshake(nd, oldest, now);
        nd->counters.refused_handshakes++;
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
    const uint8_t *data = host->receivedData;
    size_t len = host->receivedDataLength;
    net_datagram_facts facts;
    net_connection *conn;
    uint16_t peer_id;
    size_t limit;

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
        return net_admit_handshake(nd, &host->receivedAddress, engine_now(nd->engine)) ? 0 : 1;
    limit = (size_t)cvar_get_int(&nd->engine->cvars, CVAR_NET_MAX_MESSAGE_BYTES);
    net_datagram_inspect(data, len, limit, &facts);
    conn = &nd->conns[peer_id];
    if (facts.disconnect)
        conn->sent_disconnect = true;
    if (!facts.oversize)
        return 0;
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
