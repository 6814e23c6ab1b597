/*
 * net_channels.h - one connection's actor channels (UE's UActorChannel, reduced to data).
 *
 * A channel exists while an actor is relevant to the connection. It is PENDING until its
 * spawn has been sent, then OPEN until it stops being relevant or the actor is destroyed. An
 * open channel then CLOSES: the client still holds the actor until the destroy is sent (which
 * waits for room in ENet's window, or for a silent peer to answer again), and the channel goes
 * away when it is; an actor relevant again before that simply reopens. A pending channel that
 * stops being relevant goes away at once. So the client holds the open and closing channels,
 * and the relevant set is the pending and open ones.
 *
 * Channels live in dense sets: actors that move, actors that do not, and the closing ones;
 * a hash maps net id to position, and each set lists the positions of its pending channels.
 * Each frame the replication walks only what can need sending: the pending lists, the movers
 * and the closing set; open static actors (props) cost nothing until relevancy changes.
 * Opening a channel touches neither the set nor the hash. Every operation is O(1); a channel
 * pointer is valid until the next add, close, reopen or remove.
 */
#ifndef REAP_NET_CHANNELS_H
#define REAP_NET_CHANNELS_H

#include <stdbool.h>
#include <stdint.h>

#include "reap_gc.h"

typedef enum net_channel_state {
    NET_CHANNEL_PENDING = 0,
    NET_CHANNEL_OPEN = 1,
    NET_CHANNEL_CLOSING = 2,
} net_channel_state;

enum {
    NET_SET_STATIC = 0,
    NET_SET_MOVER = 1,
    NET_SET_LIVE = 2,          /* the sets above hold the relevant channels */
    NET_SET_CLOSING = 2,
    NET_SET_COUNT = 3,
    NET_FILTER_WORDS = 16,     /* a 1024-bit filter in front of the hash */
};

typedef struct net_channel {
    uint64_t net_id;
    gc_weak actor;
    uint32_t sent_serial;      /* the actor's move_serial when it was last sent */
    uint32_t since_frame;      /* frame it was last sent, or became pending (priority age) */
    uint32_t epoch;            /* the relevancy pass that last found it relevant */
    uint32_t pending_pos;      /* while PENDING: its place in the set's pending list */
    uint8_t priority;          /* UE NetPriority, as a small integer */
    uint8_t set;               /* NET_SET_STATIC, NET_SET_MOVER or NET_SET_CLOSING */
    uint8_t moves;             /* the actor moves (its set when it is relevant) */
    uint8_t state;             /* net_channel_state */
} net_channel;

typedef struct net_channel_set {
    net_channel *v;
    uint32_t count, cap;
    uint32_t *pending;         /* positions in v of the PENDING channels, in no order */
    uint32_t pending_count, pending_cap;
} net_channel_set;

/* A hash slot keeps the id it maps, so a probe reads one array, not the channels. */
typedef struct net_channel_slot {
    uint64_t net_id;
    uint32_t value;            /* 0 empty, else (set << 30 | index) + 1 */
} net_channel_slot;

typedef struct net_channels {
    net_channel_set sets[NET_SET_COUNT];
    net_channel_slot *slots;   /* open addressing with linear probing */
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

uint32_t net_channels_count(const net_channels *t);      /* every channel, closing too */
uint32_t net_channels_pending(const net_channels *t);    /* spawns not sent yet */
uint32_t net_channels_relevant(const net_channels *t);   /* pending and open */
uint32_t net_channels_held(const net_channels *t);       /* open and closing: the client has */

net_channel *net_channels_find(net_channels *t, uint64_t net_id);
/* Adds a PENDING channel (net_id must not have one). NULL when out of memory. */
net_channel *net_channels_add(net_channels *t, uint64_t net_id, gc_weak actor, uint8_t priority,
                              bool moves, uint32_t frame, uint32_t epoch);
/* Rebuilds the filter from the channels there are now (removals leave their bits). */
void net_channels_refilter(net_channels *t);
/* PENDING -> OPEN, in place (the set's pending list loses its last entry's order). */
void net_channels_open(net_channels *t, net_channel *ch);
/* OPEN -> CLOSING (a destroy is owed); returns the channel's new address. */
net_channel *net_channels_close(net_channels *t, net_channel *ch);
/* CLOSING -> OPEN (relevant again before the destroy was sent). */
net_channel *net_channels_reopen(net_channels *t, net_channel *ch, uint32_t epoch);
/* Forgets a channel (pending, or closing once its destroy was sent). */
void net_channels_remove(net_channels *t, net_channel *ch);

/* XOR of splitmix64(net_id) over the channels the client holds (held: open and closing) or
 * the relevant ones (pending and open): the digests of ReplicationCheck in reap.proto. */
uint64_t net_channels_digest(const net_channels *t, bool held);
uint64_t net_channels_id_hash(uint64_t net_id);

#endif /* REAP_NET_CHANNELS_H */
