/*
 * net_view.c - one connection's view of its world (net_view.h).
 */
#include "net_view.h"

#include <stdlib.h>
#include <string.h>

#include "vec.h"

uint64_t net_view_id_hash(uint64_t net_id)
{
    return wire_net_id_digest(net_id);
}

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
    v->pending_count = v->closing_count = v->movers_count = v->adds_count = 0;
    v->n_pending = v->n_open = v->n_closing = 0;
    v->digest_relevant = v->digest_held = 0;
}

void net_view_free(net_view *v)
{
    free(v->st);
    free(v->pending);
    free(v->closing);
    free(v->movers);
    free(v->mover_adds);
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

/* Room for state bytes up to idx, and one more entry in each list it may join. */
static bool net_view_reserve(net_view *v, uint32_t idx)
{
    if (idx >= v->cap) {
        uint32_t old = v->cap;

        if (!VEC_RESERVE(v->st, v->cap, idx + 1))
            return false;
        memset(v->st + old, 0, v->cap - old);
    }
    return VEC_RESERVE(v->pending, v->pending_cap, v->pending_count + 1) &&
           VEC_RESERVE(v->mover_adds, v->adds_cap, v->adds_count + 1);
}

bool net_view_touch(net_view *v, net_index *ix, uint32_t idx, uint32_t frame)
{
    const net_index_entry *e = &ix->v[idx];
    bool mover = (ix->hot[idx].flags & NET_ENTRY_MOVES) != 0;
    uint8_t *s;

    /* The common case in a pass: relevant already and listed. */
    if (idx < v->cap) {
        s = &v->st[idx];
        uint8_t state = *s & NET_VIEW_STATE;
        if ((state == NET_VIEW_PENDING || state == NET_VIEW_OPEN) &&
            (!mover || (*s & NET_VIEW_IN_MOVERS))) {
            if (v->in_pass == NET_VIEW_PASS_FULL || (v->in_pass == NET_VIEW_PASS_MOVERS && mover))
                *s |= NET_VIEW_SEEN;
            return true;
        }
    }

    if (!net_view_reserve(v, idx))
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
            v->pending[v->pending_count++] = (net_view_item){ idx, 0, frame, 0 };
        }
        break;
    case NET_VIEW_CLOSING:
        *s = (uint8_t)((*s & ~NET_VIEW_STATE) | NET_VIEW_OPEN);
        v->n_closing--;
        v->n_open++;
        v->digest_relevant ^= net_view_id_hash(e->net_id);
        break;
    default:
        break;
    }
    if (v->in_pass == NET_VIEW_PASS_FULL || (v->in_pass == NET_VIEW_PASS_MOVERS && mover))
        *s |= NET_VIEW_SEEN;
    if (mover) {
        if (!(*s & NET_VIEW_IN_MOVERS)) {
            *s |= NET_VIEW_IN_MOVERS;
            v->mover_adds[v->adds_count++] = (net_view_item){ idx, e->mover_slot, 0, 0 };
        }
    }
    return true;
}

void net_view_close(net_view *v, net_index *ix, uint32_t idx)
{
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
        net_index_unref(ix, idx);
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
        break;
    default:
        break;
    }
}

void net_view_spawn_sent(net_view *v, const net_index *ix, uint32_t idx)
{
    uint8_t *s = idx < v->cap ? &v->st[idx] : NULL;

    if (s == NULL || (*s & NET_VIEW_STATE) != NET_VIEW_PENDING)
        return;
    *s = (uint8_t)((*s & ~NET_VIEW_STATE) | NET_VIEW_OPEN);
    v->n_pending--;
    v->n_open++;
    v->digest_held ^= net_view_id_hash(ix->v[idx].net_id);
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

static int net_view_item_cmp(const void *a, const void *b)
{
    uint32_t x = ((const net_view_item *)a)->index, y = ((const net_view_item *)b)->index;

    return (x > y) - (x < y);
}

/* A listed mover stays while it is relevant and still a mover (an index can be reused). */
static bool net_view_keeps_mover(net_view *v, const net_index *ix, uint32_t idx)
{
    uint8_t state = v->st[idx] & NET_VIEW_STATE;

    if ((state == NET_VIEW_PENDING || state == NET_VIEW_OPEN) &&
        (ix->hot[idx].flags & NET_ENTRY_MOVES))
        return true;
    v->st[idx] &= (uint8_t)~(NET_VIEW_IN_MOVERS | NET_VIEW_SEEN);
    return false;
}

/* A few additions go in by binary search (what a crowd's churn brings each frame); stale
 * entries are left for the next walk to drop. */
static void net_view_insert_movers(net_view *v)
{
    for (uint32_t k = 0; k < v->adds_count; k++) {
        net_view_item it = v->mover_adds[k];
        uint32_t lo = 0, hi = v->movers_count;

        while (lo < hi) {
            uint32_t mid = (lo + hi) / 2;
            if (v->movers[mid].index < it.index)
                lo = mid + 1;
            else
                hi = mid;
        }
        memmove(v->movers + lo + 1, v->movers + lo, (v->movers_count - lo) * sizeof *v->movers);
        v->movers[lo] = it;
        v->movers_count++;
    }
    v->adds_count = 0;
}

void net_view_merge_movers(net_view *v, const net_index *ix)
{
    uint32_t n = 0, a = 0, i = 0, total;

    if (v->adds_count > 0 && v->adds_count <= NET_VIEW_FEW_ADDS &&
        VEC_RESERVE(v->movers, v->movers_cap, v->movers_count + v->adds_count)) {
        net_view_insert_movers(v);
        return;
    }
    if (v->adds_count > 1)
        qsort(v->mover_adds, v->adds_count, sizeof *v->mover_adds, net_view_item_cmp);
    total = v->movers_count + v->adds_count;
    if (v->adds_count > 0 && !VEC_RESERVE(v->movers, v->movers_cap, total)) {
        /* Out of memory: forget the additions (their flags too); a later pass re-adds them. */
        for (uint32_t k = 0; k < v->adds_count; k++)
            v->st[v->mover_adds[k].index] &= (uint8_t)~NET_VIEW_IN_MOVERS;
        v->adds_count = 0;
    }
    if (v->adds_count == 0) {
        for (i = 0; i < v->movers_count; i++)
            if (net_view_keeps_mover(v, ix, v->movers[i].index))
                v->movers[n++] = v->movers[i];
        v->movers_count = n;
        return;
    }
    /* Merge backwards into the tail so nothing is overwritten before it is read. */
    memmove(v->movers + v->adds_count, v->movers, v->movers_count * sizeof *v->movers);
    i = v->adds_count;
    while (i < total || a < v->adds_count) {
        net_view_item it;

        if (a < v->adds_count && (i >= total || v->mover_adds[a].index < v->movers[i].index))
            it = v->mover_adds[a++];
        else
            it = v->movers[i++];
        if (net_view_keeps_mover(v, ix, it.index))
            v->movers[n++] = it;
    }
    v->movers_count = n;
    v->adds_count = 0;
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
        net_view_merge_movers(v, ix);
        return;
    }
    net_view_merge_movers(v, ix);
    for (uint32_t i = 0; i < v->movers_count; i++) {
        uint32_t idx = v->movers[i].index;

        if (!(v->st[idx] & NET_VIEW_SEEN))
            net_view_close(v, ix, idx);
        v->st[idx] &= (uint8_t)~NET_VIEW_SEEN;
    }
}
