/*
 * client_net.h - what the one-client mode and the churn generator both do on the wire.
 */
#ifndef REAP_CLIENT_NET_H
#define REAP_CLIENT_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <enet/enet.h>

#include "reap_msg.h"

/* Encodes env into buf (cap bytes) and queues it on channel of peer: reliable, except on
 * MSG_CHANNEL_UPDATES (unreliable sequenced, for MoveInput). ENet owns
 * the packet once the send succeeds; on failure it is freed here. False if peer is NULL or
 * encoding or sending failed. */
bool client_net_send(ENetPeer *peer, uint8_t *buf, size_t cap, uint8_t channel,
                     const Reap__Envelope *env);

#endif
