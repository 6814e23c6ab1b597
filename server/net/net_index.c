/*
 * net_index.c - a world's replication index (net_index.h).
 *
 * Assumes: net_index_begin_frame runs once per frame for each world, after the world ticked and
 * before its connections are replicated, and before the world's outbox is reset.
 * Guarantees: every live entry's records describe its actor as of this frame (movers) or as of
 * its spawn or last teleport (static actors); `gone` lists exactly the entries whose actor went
 * this frame and that some connection still holds; no index, and no mover slot, is handed out
 * again while a connection holds it.
 */
#include "net_index.h"

#include <string.h>

#include "reap_assert.h"
#include "vec.h"

void net_index_init(net_index *ix, float step)
{
    memset(ix, 0, sizeof *ix);
    ix->count = 1; /* index 0 means "none" */
    ix->mhot_count = 1;
    ix->step = step;
}

void net_index_free(net_index *ix)
{
    free(ix->v);
    free(ix->hot);
    free(ix->mhot);
    free(ix->mfree);
    free(ix->gone);
    memset(ix, 0, sizeof *ix);
}

static uint8_t net_index_priority(actor_kind kind)
{
    switch (kind) {
    case ACTOR_KIND_PLAYER_CONTROLLER:
    case ACTOR_KIND_PAWN: return 3;
    case ACTOR_KIND_PROJECTILE: return 2;
    default: return 1;
    }
}

void net_index_encode(net_index *ix, uint32_t idx, const actor *a, uint32_t frame)
{
    net_index_entry *e = &ix->v[idx];
    net_index_hot *h = &ix->hot[idx];
    int32_t q[3];

    for (int i = 0; i < 3; i++)
        q[i] = wire_quantize(a->pos[i], ix->step);
    h->spawn_len = (uint8_t)wire_spawn_tail(e->spawn, (uint32_t)a->kind, a->archetype,
                                            a->owner_player_id,
                                            e->mover_slot, q);
    if (e->mover_slot != 0) {
        net_mover_hot *m = &ix->mhot[e->mover_slot];
        uint8_t update[WIRE_UPDATE_TAIL_MAX];
        bool has_z;
        size_t len = wire_update_tail(update, q, &has_z);

        /* A move within the same quantization step leaves the record as it was: nothing new to
         * send (reap.proto, ActorUpdate), so the frame it changed stays. */
        if (len != m->update_len || memcmp(update, m->update, len) != 0) {
            memcpy(m->update, update, len);
            m->update_len = (uint8_t)len;
            m->update_has_z = has_z;
            m->changed_frame = frame;
        }
        m->x = a->pos[0];
        m->y = a->pos[1];
    }
    e->move_serial = a->move_serial;
    ix->records_encoded++;
}

uint32_t net_index_acquire_new(net_index *ix, gc_heap *heap, actor *a, uint32_t frame)
{
    uint32_t idx;
    net_index_entry *e;
    net_index_hot *h;

    if (a->moves && (!VEC_RESERVE(ix->mhot, ix->mhot_cap, ix->mhot_count + 1) ||
                     !VEC_RESERVE(ix->mfree, ix->mfree_cap, ix->mhot_count + 1)))
        return 0;
    if (ix->free_head != 0) {
        idx = ix->free_head;
        ix->free_head = ix->v[idx].next_free;
        if (ix->free_head == 0)
            ix->free_tail = 0;
    } else {
        if (!VEC_RESERVE(ix->v, ix->cap, ix->count + 1) ||
            !VEC_RESERVE(ix->hot, ix->hot_cap, ix->count + 1))
            return 0;
        idx = ix->count++;
    }
    e = &ix->v[idx];
    h = &ix->hot[idx];
    memset(e, 0, sizeof *e);
    memset(h, 0, sizeof *h);
    e->net_id = a->net_id;
    e->actor = gc_weak_make(heap, a);
    h->owner_player_id = a->owner_player_id;
    h->priority = net_index_priority(a->kind);
    h->flags = NET_ENTRY_ALIVE | (a->moves ? NET_ENTRY_MOVES : 0);
    if (a->moves) {
        net_mover_hot *m;

        e->mover_slot = ix->mfree_count > 0 ? ix->mfree[--ix->mfree_count] : ix->mhot_count++;
        m = &ix->mhot[e->mover_slot];
        memset(m, 0, sizeof *m);
        m->index = idx;
        m->owner_player_id = a->owner_player_id;
        m->priority = h->priority;
    }
    net_index_encode(ix, idx, a, frame);
    a->net_index = idx;
    return idx;
}

static void net_index_release(net_index *ix, uint32_t idx)
{
    net_index_entry *e = &ix->v[idx];

    /* A slot is reused only once no view holds it: a view's index must stay its actor's. */
    REAP_ASSERT(e->refs == 0);
    e->net_id = 0;
    ix->hot[idx].flags = 0;
    e->next_free = 0;
    if (e->mover_slot != 0) { /* the slot lives as long as the index (reap.proto) */
        ix->mhot[e->mover_slot].index = 0;
        ix->mfree[ix->mfree_count++] = e->mover_slot;
        e->mover_slot = 0;
    }
    if (ix->free_tail != 0)
        ix->v[ix->free_tail].next_free = idx;
    else
        ix->free_head = idx;
    ix->free_tail = idx;
}

void net_index_ref(net_index *ix, uint32_t idx)
{
    ix->v[idx].refs++;
}

void net_index_unref(net_index *ix, uint32_t idx)
{
    net_index_entry *e = &ix->v[idx];

    REAP_ASSERT(e->refs > 0);
    if (--e->refs == 0 && !(ix->hot[idx].flags & NET_ENTRY_ALIVE))
        net_index_release(ix, idx);
}

/* The actor of idx is gone: connections that hold it close it; with none, it is free now. */
static void net_index_gone(net_index *ix, uint32_t idx)
{
    net_index_entry *e = &ix->v[idx];

    ix->hot[idx].flags &= (uint8_t)~NET_ENTRY_ALIVE;
    if (e->refs == 0)
        net_index_release(ix, idx);
    else if (VEC_RESERVE(ix->gone, ix->gone_cap, ix->gone_count + 1))
        ix->gone[ix->gone_count++] = idx;
    /* Out of memory: the connections holding it keep a ghost until they leave. */
}

void net_index_begin_frame(net_index *ix, gc_heap *heap, world *w, uint32_t frame)
{
    ix->gone_count = 0;
    for (uint32_t i = 0; i < w->destroyed_count; i++) {
        uint32_t idx = w->destroyed[i].net_index;

        if (idx != 0 && idx < ix->count && ix->v[idx].net_id == w->destroyed[i].net_id &&
            (ix->hot[idx].flags & NET_ENTRY_ALIVE))
            net_index_gone(ix, idx);
    }
    /* Each moving actor read once: vanished ones are gone (their slot stays theirs until the
     * index is released), moved ones are re-encoded. */
    for (uint32_t slot = 1; slot < ix->mhot_count; slot++) {
        uint32_t idx = ix->mhot[slot].index;
        net_index_entry *e;
        const actor *a;

        if (idx == 0 || !(ix->hot[idx].flags & NET_ENTRY_ALIVE))
            continue;
        e = &ix->v[idx];
        a = gc_weak_get(heap, e->actor);
        if (a == NULL)
            net_index_gone(ix, idx);
        else if (a->move_serial != e->move_serial)
            net_index_encode(ix, idx, a, frame);
    }
    /* Spawned or teleported: a teleported static actor's spawn record follows it. Newly
     * spawned actors get their index when a connection first finds them relevant. */
    for (uint32_t i = 0; i < w->spawned_count; i++) {
        actor *a = gc_weak_get(heap, w->spawned[i].actor);
        uint32_t idx = a != NULL ? net_index_of(ix, a) : 0;

        if (idx != 0 && !a->moves && a->move_serial != ix->v[idx].move_serial)
            net_index_encode(ix, idx, a, frame);
    }
}
