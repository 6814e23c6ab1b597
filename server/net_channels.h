/*
 * net_channels.h - one connection's actor channels (UE's UActorChannel, reduced to data).
 *
 * A channel exists while an actor is relevant to the connection. It is PENDING until its
 * spawn has been sent, then OPEN until it stops being relevant or the actor is destroyed,
 * when the channel goes away (and, if it was open, a destroy is sent). The client's mirror
 * therefore equals the set of open channels, and the relevant set is every channel.
 *
 * Channels live in two dense sets, actors that move and actors that do not, each partitioned
 * [pending | open], with a hash from net id to position. Each frame the replication walks only
 * what can need sending: the pending parts and the open movers; open static actors (props)
 * cost nothing until relevancy changes. Every add, open and remove is O(1); a channel pointer
 * is valid only until the next add, open or remove.
 */
#ifndef REAP_NET_CHANNELS_H
#define REAP_NET_CHANNELS_H

#include <stdbool.h>
#include <stdint.h>

#include "reap_gc.h"

typedef enum net_channel_state {
    NET_CHANNEL_PENDING = 0,
    NET_CHANNEL_OPEN = 1,
} net_channel_state;

enum {
    NET_SET_STATIC = 0,
    NET_SET_MOVER = 1,
    NET_SET_COUNT = 2,
    NET_FILTER_WORDS = 16,     /* a 1024-bit filter in front of the hash */
};

typedef struct net_channel {
    uint64_t net_id;
    gc_weak actor;
    uint32_t sent_serial;      /* the actor's move_serial when it was last sent */
    uint32_t since_frame;      /* frame it was last sent, or became pending (priority age) */
    uint32_t epoch;            /* the relevancy pass that last found it relevant */
    uint8_t priority;          /* UE NetPriority, as a small integer */
    uint8_t set;               /* NET_SET_STATIC or NET_SET_MOVER */
    uint8_t state;             /* net_channel_state */
} net_channel;

typedef struct net_channel_set {
    net_channel *v;            /* [0, pending) pending, [pending, count) open */
    uint32_t count, pending, cap;
} net_channel_set;

typedef struct net_channels {
    net_channel_set sets[NET_SET_COUNT];
    uint32_t *slots;           /* open addressing: 0 empty, else (set << 31 | index) + 1 */
    uint32_t slot_count;       /* a power of two, or 0 */
    uint32_t used;
    /* A Bloom filter (one bit per id) over every channel added since the last refilter: a
     * miss answers "no channel" from one cache line. The replication asks about every
     * actor spawned or destroyed anywhere in the world, and most belong to others. */
    uint64_t filter[NET_FILTER_WORDS];
} net_channels;

void net_channels_init(net_channels *t);
void net_channels_free(net_channels *t);
/* Forgets every channel, keeping the memory. */
void net_channels_clear(net_channels *t);

uint32_t net_channels_count(const net_channels *t);
uint32_t net_channels_pending(const net_channels *t);

net_channel *net_channels_find(net_channels *t, uint64_t net_id);
/* Adds a PENDING channel (net_id must not have one). NULL when out of memory. */
net_channel *net_channels_add(net_channels *t, uint64_t net_id, gc_weak actor, uint8_t priority,
                              bool moves, uint32_t frame, uint32_t epoch);
/* Rebuilds the filter from the channels there are now (removals leave their bits). */
void net_channels_refilter(net_channels *t);
/* PENDING -> OPEN; returns the channel's new address. */
net_channel *net_channels_open(net_channels *t, net_channel *ch);
void net_channels_remove(net_channels *t, net_channel *ch);

/* XOR of splitmix64(net_id) over the open channels (open_only) or all of them: the digest of
 * ReplicationCheck in reap.proto. */
uint64_t net_channels_digest(const net_channels *t, bool open_only);
uint64_t net_channels_id_hash(uint64_t net_id);

#endif /* REAP_NET_CHANNELS_H */
