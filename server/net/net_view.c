/*
 * net_view.c - one connection's view of its world (net_view.h).
 */
#include "net_view.h"

#include <stdlib.h>
#include <string.h>

#include "vec.h"

void net_view_init(net_view *v)
{
    memset(v, 0, sizeof *v);
}

void net_view_clear(net_view *v, net_index *ix)
{
    for (uint32_t i = 0; i < v->cap; i++)
        if ((v->st[i] & NET_VIEW_STATE) != NET_VIEW_NONE)
            net_index_unref(ix, i);
    if (v->st != NULL)
        memset(v->st, 0, v->cap);
    if (v->mcap > 0) {
        memset(v->mrel, 0, v->mcap / 8);
        memset(v->mopen, 0, v->mcap / 8);
    }
    v->pending_count = v->closing_count = 0;
    v->n_pending = v->n_open = v->n_closing = 0;
    v->digest_relevant = v->digest_held = 0;
}

void net_view_free(net_view *v)
{
    free(v->st);
    free(v->pending);
    free(v->closing);
    free(v->mrel);
    free(v->mopen);
    free(v->msent);
    free(v->mperiod);
    net_view_init(v);
}

uint32_t net_view_relevant(const net_view *v)
{
    return v->n_pending + v->n_open;
}

uint32_t net_view_held(const net_view *v)
{
    return v->n_open + v->n_closing;
}

static bool net_view_grow(void **p, size_t old_bytes, size_t new_bytes)
{
    void *q = realloc(*p, new_bytes);

    if (q == NULL)
        return false;
    memset((uint8_t *)q + old_bytes, 0, new_bytes - old_bytes);
    *p = q;
    return true;
}

/* Room in the mover arrays for slot. */
static bool net_view_reserve_slot(net_view *v, uint32_t slot)
{
    uint32_t n = v->mcap ? v->mcap : 64, old = v->mcap;

    if (slot < v->mcap)
        return true;
    while (n <= slot) {
        if (n > UINT32_MAX / 2)
            return false;
        n *= 2;
    }
    /* Grown one by one; a failure leaves the larger ones behind, harmless as mcap is not. */
    if (!net_view_grow((void **)&v->mrel, old / 8, n / 8) ||
        !net_view_grow((void **)&v->mopen, old / 8, n / 8) ||
        !net_view_grow((void **)&v->msent, (size_t)old * 4, (size_t)n * 4) ||
        !net_view_grow((void **)&v->mperiod, old, n))
        return false;
    v->mcap = n;
    return true;
}

/* Room for state bytes up to idx, one more pending entry, and idx's mover slot. */
static bool net_view_reserve(net_view *v, const net_index *ix, uint32_t idx)
{
    if (idx >= v->cap) {
        uint32_t old = v->cap;

        if (!VEC_RESERVE(v->st, v->cap, idx + 1))
            return false;
        memset(v->st + old, 0, v->cap - old);
    }
    return VEC_RESERVE(v->pending, v->pending_cap, v->pending_count + 1) &&
           net_view_reserve_slot(v, ix->v[idx].mover_slot);
}

static void net_view_bit_set(uint64_t *bits, uint32_t slot)
{
    bits[slot / 64] |= (uint64_t)1 << (slot % 64);
}

static void net_view_bit_clear(uint64_t *bits, uint32_t slot)
{
    bits[slot / 64] &= ~((uint64_t)1 << (slot % 64));
}

bool net_view_touch(net_view *v, net_index *ix, uint32_t idx, uint32_t frame)
{
    const net_index_entry *e = &ix->v[idx];
    bool mover = e->mover_slot != 0;
    uint8_t *s;

    /* The common case in a pass: relevant already. */
    if (idx < v->cap) {
        s = &v->st[idx];
        uint8_t state = *s & NET_VIEW_STATE;
        if (state == NET_VIEW_PENDING || state == NET_VIEW_OPEN) {
            if (v->in_pass == NET_VIEW_PASS_FULL || (v->in_pass == NET_VIEW_PASS_MOVERS && mover))
                *s |= NET_VIEW_SEEN;
            return true;
        }
    }

    if (!net_view_reserve(v, ix, idx))
        return false;
    s = &v->st[idx];
    switch (*s & NET_VIEW_STATE) {
    case NET_VIEW_NONE:
        *s = (uint8_t)((*s & ~NET_VIEW_STATE) | NET_VIEW_PENDING);
        net_index_ref(ix, idx);
        v->n_pending++;
        v->digest_relevant ^= net_view_id_hash(e->net_id);
        if (!(*s & NET_VIEW_IN_PENDING)) {
            *s |= NET_VIEW_IN_PENDING;
            v->pending[v->pending_count++] = (net_view_item){ idx, frame };
        }
        if (mover) {
            net_view_bit_set(v->mrel, e->mover_slot);
            v->mperiod[e->mover_slot] = 0;
        }
        break;
    case NET_VIEW_CLOSING:
        *s = (uint8_t)((*s & ~NET_VIEW_STATE) | NET_VIEW_OPEN);
        v->n_closing--;
        v->n_open++;
        v->digest_relevant ^= net_view_id_hash(e->net_id);
        if (mover) { /* the client still has it, as of msent */
            net_view_bit_set(v->mrel, e->mover_slot);
            net_view_bit_set(v->mopen, e->mover_slot);
        }
        break;
    default:
        break;
    }
    if (v->in_pass == NET_VIEW_PASS_FULL || (v->in_pass == NET_VIEW_PASS_MOVERS && mover))
        *s |= NET_VIEW_SEEN;
    return true;
}

void net_view_close(net_view *v, net_index *ix, uint32_t idx)
{
    uint32_t slot = idx < ix->count ? ix->v[idx].mover_slot : 0;
    uint8_t *s;
    uint64_t h;

    if (idx >= v->cap)
        return;
    s = &v->st[idx];
    switch (*s & NET_VIEW_STATE) {
    case NET_VIEW_PENDING:
        *s = (uint8_t)(*s & ~NET_VIEW_STATE);
        v->n_pending--;
        v->digest_relevant ^= net_view_id_hash(ix->v[idx].net_id);
        if (slot != 0)
            net_view_bit_clear(v->mrel, slot);
        net_index_unref(ix, idx); /* may release the index and its slot */
        break;
    case NET_VIEW_OPEN:
        if (!(*s & NET_VIEW_IN_CLOSING)) {
            if (!VEC_RESERVE(v->closing, v->closing_cap, v->closing_count + 1))
                return; /* out of memory: it stays open, and is closed by a later pass */
            v->closing[v->closing_count++] = idx;
            *s |= NET_VIEW_IN_CLOSING;
        }
        h = net_view_id_hash(ix->v[idx].net_id);
        *s = (uint8_t)((*s & ~NET_VIEW_STATE) | NET_VIEW_CLOSING);
        v->n_open--;
        v->n_closing++;
        v->digest_relevant ^= h;
        if (slot != 0) {
            net_view_bit_clear(v->mrel, slot);
            net_view_bit_clear(v->mopen, slot);
        }
        break;
    default:
        break;
    }
}

void net_view_spawn_sent(net_view *v, const net_index *ix, uint32_t idx, uint32_t frame)
{
    uint8_t *s = idx < v->cap ? &v->st[idx] : NULL;
    uint32_t slot;

    if (s == NULL || (*s & NET_VIEW_STATE) != NET_VIEW_PENDING)
        return;
    *s = (uint8_t)((*s & ~NET_VIEW_STATE) | NET_VIEW_OPEN);
    v->n_pending--;
    v->n_open++;
    v->digest_held ^= net_view_id_hash(ix->v[idx].net_id);
    slot = ix->v[idx].mover_slot;
    if (slot != 0) { /* the spawn carried its position as of this frame */
        net_view_bit_set(v->mopen, slot);
        v->msent[slot] = frame;
    }
}

void net_view_destroy_sent(net_view *v, net_index *ix, uint32_t idx)
{
    uint8_t *s = idx < v->cap ? &v->st[idx] : NULL;

    if (s == NULL || (*s & NET_VIEW_STATE) != NET_VIEW_CLOSING)
        return;
    *s = (uint8_t)(*s & ~NET_VIEW_STATE);
    v->n_closing--;
    v->digest_held ^= net_view_id_hash(ix->v[idx].net_id);
    net_index_unref(ix, idx);
}

void net_view_compact_closing(net_view *v)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < v->closing_count; i++) {
        uint8_t *s = &v->st[v->closing[i]];
        if ((*s & NET_VIEW_STATE) == NET_VIEW_CLOSING)
            v->closing[n++] = v->closing[i];
        else
            *s &= (uint8_t)~NET_VIEW_IN_CLOSING;
    }
    v->closing_count = n;
}

void net_view_begin_pass(net_view *v, bool full)
{
    if (full)
        for (uint32_t i = 0; i < v->cap; i++)
            v->st[i] &= (uint8_t)~NET_VIEW_SEEN;
    v->in_pass = full ? NET_VIEW_PASS_FULL : NET_VIEW_PASS_MOVERS;
}

void net_view_end_pass(net_view *v, net_index *ix)
{
    bool full = v->in_pass == NET_VIEW_PASS_FULL;

    v->in_pass = NET_VIEW_PASS_NONE;
    if (full) {
        for (uint32_t i = 0; i < v->cap; i++) {
            uint8_t state = v->st[i] & NET_VIEW_STATE;
            if ((state == NET_VIEW_PENDING || state == NET_VIEW_OPEN) &&
                !(v->st[i] & NET_VIEW_SEEN))
                net_view_close(v, ix, i);
            v->st[i] &= (uint8_t)~NET_VIEW_SEEN;
        }
        return;
    }
    /* The movers: closing one clears its bit in mrel, which this walk has already read. */
    for (uint32_t w = 0; w < v->mcap / 64; w++) {
        for (uint64_t bits = v->mrel[w]; bits != 0; bits &= bits - 1) {
            uint32_t slot = w * 64 + (uint32_t)__builtin_ctzll(bits);
            uint32_t idx = ix->mhot[slot].index;

            if (!(v->st[idx] & NET_VIEW_SEEN))
                net_view_close(v, ix, idx);
            else
                v->st[idx] &= (uint8_t)~NET_VIEW_SEEN;
        }
    }
}
