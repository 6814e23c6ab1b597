/*
 * client_net.c - sending one envelope from a client (see client_net.h).
 */
#include "client_net.h"

bool client_net_send(ENetPeer *peer, uint8_t *buf, size_t cap, uint8_t channel,
                     const Reap__Envelope *env)
{
    ENetPacket *packet;
    size_t len;

    if (peer == NULL || msg_encode(env, buf, cap, &len) != MSG_OK)
        return false;
    /* Flags 0 is ENet's unreliable sequenced delivery: a late move is dropped, never replayed. */
    packet = enet_packet_create(buf, len,
                                channel == MSG_CHANNEL_UPDATES ? 0 : ENET_PACKET_FLAG_RELIABLE);
    if (packet == NULL)
        return false;
    if (enet_peer_send(peer, channel, packet) != 0) {
        enet_packet_destroy(packet);
        return false;
    }
    return true;
}
