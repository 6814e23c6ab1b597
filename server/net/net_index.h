/*
 * net_index.h - a world's replication index (UE Iris's internal object index, reduced to data).
 *
 * Every replicated actor some connection has to know about gets a small dense index (>= 1) and
 * an entry holding what the replication needs without touching the actor again: its net id,
 * owner, priority, position, and its records already encoded for the wire (a spawn tail, and for a
 * moving actor the update tail of its latest position). Connections keep their state in arrays
 * indexed by it (net_view.h), so nothing is hashed or resolved per connection per actor.
 *
 * Once per frame net_index_begin_frame reads each moving actor once (one weak-handle
 * resolution), and re-encodes its update only if it moved: records are encoded per change,
 * never per connection (records_encoded counts them). An entry is released when its actor is
 * gone and no connection holds it any more (refs: connections whose view has it pending, open
 * or closing), so an index is reused only after every connection that held the actor has been
 * sent its destroy. Released indices are reused oldest first. A moving actor also has a mover
 * slot, dense among movers, with the same lifetime: update records name it (reap.proto), and a
 * connection keeps its movers' state in arrays indexed by it.
 */
#ifndef REAP_NET_INDEX_H
#define REAP_NET_INDEX_H

#include <stdbool.h>
#include <stdint.h>

#include "reap_gc.h"
#include "reap_wire.h"
#include "world.h"

enum {
    NET_ENTRY_ALIVE = 1 << 0,    /* the actor exists (no destroy seen) */
    NET_ENTRY_MOVES = 1 << 1,
};

/* What a connection reads of any actor it lists: 8 bytes. */
typedef struct net_index_hot {
    uint32_t owner_player_id;
    uint8_t flags;               /* NET_ENTRY_* */
    uint8_t priority;            /* UE NetPriority, as a small integer */
    uint8_t spawn_len;
} net_index_hot;

/* What each connection reads of a moving actor every frame, 32 bytes, in a table of the
 * movers alone: a crowd's walk over its movers stays in cache. */
typedef struct net_mover_hot {
    float x, y;                  /* position of the encoded update */
    uint32_t changed_frame;      /* frame the update tail was last encoded */
    uint32_t owner_player_id;
    uint32_t index;              /* the entry it belongs to; 0: a free slot */
    uint8_t priority;
    uint8_t update_len, update_has_z;
    uint8_t update[WIRE_UPDATE_TAIL_MAX];
} net_mover_hot;

/* The rest: what the index itself and a spawn record need. */
typedef struct net_index_entry {
    uint64_t net_id;
    gc_weak actor;               /* resolves to NULL once the actor is gone */
    uint32_t move_serial;        /* the actor's move_serial at the last encode */
    uint32_t refs;
    uint32_t next_free;          /* free list link while released */
    uint32_t mover_slot;         /* its slot in the movers' table, 0: none */
    uint8_t spawn[WIRE_SPAWN_TAIL_MAX];
} net_index_entry;

typedef struct net_index {
    net_index_entry *v;          /* v[0] is never used */
    net_index_hot *hot;          /* beside v, same indices */
    uint32_t count, cap, hot_cap; /* count: one past the highest index handed out */
    uint32_t free_head, free_tail; /* released indices, oldest first (0: none) */
    net_mover_hot *mhot;         /* slot 0 is never used */
    uint32_t mhot_count, mhot_cap; /* mhot_count: one past the highest slot handed out */
    uint32_t *mfree;             /* free slots */
    uint32_t mfree_count, mfree_cap;
    uint32_t *gone;              /* this frame's destroyed or vanished indices */
    uint32_t gone_count, gone_cap;
    float step;                  /* quantization step of positions (Welcome.position_step) */
    uint64_t records_encoded;    /* spawn and update tails encoded */
} net_index;

void net_index_init(net_index *ix, float step);
void net_index_free(net_index *ix);

/* The index a already has, or 0. (Inline, as net_index_acquire's common case: a relevancy
 * pass asks for every actor it touches.) */
static inline uint32_t net_index_of(const net_index *ix, const actor *a)
{
    uint32_t idx = a->net_index;

    if (idx == 0 || idx >= ix->count || ix->v[idx].net_id != a->net_id ||
        !(ix->hot[idx].flags & NET_ENTRY_ALIVE))
        return 0;
    return idx;
}

/* Gives a, which has none, an index and encodes its spawn record (net_index_acquire). */
uint32_t net_index_acquire_new(net_index *ix, gc_heap *heap, actor *a, uint32_t frame);

/* The index of a (acquiring one, and encoding its spawn record, if it has none yet); 0 when
 * out of memory or a is not replicated. */
static inline uint32_t net_index_acquire(net_index *ix, gc_heap *heap, actor *a, uint32_t frame)
{
    uint32_t idx = net_index_of(ix, a);

    return idx != 0 || !a->replicates ? idx : net_index_acquire_new(ix, heap, a, frame);
}

/* Begins a frame: this frame's destroyed actors (the world's outbox) and moving actors that
 * vanished become `gone`; every moving actor that moved gets its update re-encoded; actors
 * spawned or teleported this frame get their spawn record re-encoded. */
void net_index_begin_frame(net_index *ix, gc_heap *heap, world *w, uint32_t frame);

/* A connection's view now holds idx / no longer does. The last release of a gone actor's
 * entry frees the index. */
void net_index_ref(net_index *ix, uint32_t idx);
void net_index_unref(net_index *ix, uint32_t idx);

/* Re-encodes a's records from its current state (a teleport). */
void net_index_encode(net_index *ix, uint32_t idx, const actor *a, uint32_t frame);

#endif /* REAP_NET_INDEX_H */
