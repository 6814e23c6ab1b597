/*
 * net_view.h - what one connection knows of its world, in arrays indexed by the world's
 * replication index (net_index.h): UE's actor channels reduced to a state byte per actor.
 *
 * An actor is NONE to a connection until it becomes relevant; then PENDING until its spawn has
 * been sent, then OPEN until it stops being relevant or goes away. An open actor then CLOSES: the
 * client still holds it until the destroy is sent (which waits for room in ENet's window), and
 * it is NONE again once it is; relevant again before that, it simply reopens. A pending actor
 * that stops being relevant is NONE at once. So the client holds the open and closing actors,
 * and the relevant set is the pending and open ones; counts and digests of both follow every
 * change, so a ReplicationCheck costs nothing.
 *
 * Beside the state array two lists say where spawn and destroy work is: the pending spawns
 * (with the frame they became pending) and the closing actors, compacted lazily (an entry
 * whose state moved on is dropped the next time its list is walked). Moving actors have their
 * own arrays, indexed by mover slot (net_index.h), so a frame's walk over a crowd's movers
 * reads a few bytes per mover, in slot order (the order update records are written in): a bit
 * for "relevant" (pending or open), a bit for "open", the frame its last update went out and
 * its update period. Every operation is O(1) but the walks.
 */
#ifndef REAP_NET_VIEW_H
#define REAP_NET_VIEW_H

#include <stdbool.h>
#include <stdint.h>

#include "net_index.h"

enum {
    NET_VIEW_NONE = 0,
    NET_VIEW_PENDING = 1,
    NET_VIEW_OPEN = 2,
    NET_VIEW_CLOSING = 3,
    NET_VIEW_STATE = 0x03,       /* the state bits of a state byte */
    NET_VIEW_IN_PENDING = 0x04,  /* listed in pending */
    NET_VIEW_IN_CLOSING = 0x08,  /* listed in closing */
    NET_VIEW_SEEN = 0x20,        /* touched by the relevancy pass under way */
};

enum { NET_VIEW_PASS_NONE = 0, NET_VIEW_PASS_MOVERS = 1, NET_VIEW_PASS_FULL = 2 };

typedef struct net_view_item {
    uint32_t index;
    uint32_t frame;              /* since when pending */
} net_view_item;

typedef struct net_view {
    uint8_t *st;                 /* state byte per index; beyond cap: NONE */
    uint32_t cap;
    net_view_item *pending;
    uint32_t pending_count, pending_cap;
    uint32_t *closing;
    uint32_t closing_count, closing_cap;
    /* By mover slot, mcap slots (a multiple of 64; beyond: not relevant). */
    uint64_t *mrel;              /* bit: the mover is pending or open */
    uint64_t *mopen;             /* bit: the mover is open (its updates go to the client) */
    uint32_t *msent;             /* frame its spawn or last update was sent */
    uint8_t *mperiod;            /* frames between its updates; 0: not decided yet */
    uint32_t mcap;
    uint32_t n_pending, n_open, n_closing;
    uint64_t digest_relevant;    /* XOR of net_view_id_hash over pending and open */
    uint64_t digest_held;        /* over open and closing */
    uint8_t in_pass;             /* NET_VIEW_PASS_*: a relevancy pass under way */
} net_view;

void net_view_init(net_view *v);
/* Forgets everything, releasing the view's hold on every index (a connection left). */
void net_view_clear(net_view *v, net_index *ix);
/* Frees the memory too (after net_view_clear). */
void net_view_free(net_view *v);

static inline uint8_t net_view_state(const net_view *v, uint32_t idx)
{
    return idx < v->cap ? (uint8_t)(v->st[idx] & NET_VIEW_STATE) : (uint8_t)NET_VIEW_NONE;
}

uint32_t net_view_relevant(const net_view *v);   /* pending and open */
uint32_t net_view_held(const net_view *v);       /* open and closing: what the client has */

/* idx is relevant now: NONE -> PENDING, CLOSING -> OPEN; marked seen as the pass asks.
 * False only when out of memory (the view is unchanged). */
bool net_view_touch(net_view *v, net_index *ix, uint32_t idx, uint32_t frame);
/* idx is not relevant (or gone): PENDING -> NONE, OPEN -> CLOSING. */
void net_view_close(net_view *v, net_index *ix, uint32_t idx);
/* Its spawn was sent (this frame): PENDING -> OPEN. */
void net_view_spawn_sent(net_view *v, const net_index *ix, uint32_t idx, uint32_t frame);
/* Its destroy was sent: CLOSING -> NONE. */
void net_view_destroy_sent(net_view *v, net_index *ix, uint32_t idx);

/* Drops closing entries whose state moved on (the replication's walk over the pending list
 * drops its own). */
void net_view_compact_closing(net_view *v);
/* A relevancy pass begins: touches from now on mark what they touch seen (every actor in a
 * full pass, moving ones in another). */
void net_view_begin_pass(net_view *v, bool full);
/* The pass ends: closes what it decides afresh (everything in a full pass, the movers in
 * another) and did not touch, and clears the seen marks. */
void net_view_end_pass(net_view *v, net_index *ix);

/* splitmix64 of a net id: ReplicationCheck's digests (reap.proto). */
static inline uint64_t net_view_id_hash(uint64_t net_id)
{
    return wire_net_id_digest(net_id);
}

#endif /* REAP_NET_VIEW_H */
