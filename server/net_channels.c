/*
 * net_channels.c - a connection's actor channels: two partitioned dense sets and a hash.
 *
 * The hash uses linear probing with backward-shift deletion (no tombstones), keyed by net id;
 * it stays at most half full. Whenever an element moves inside a set, its hash slot is
 * rewritten, so a lookup always lands on the element's current position.
 */
#include "net_channels.h"

#include <stdlib.h>
#include <string.h>

#include "vec.h"

enum { SET_SHIFT = 31 };

uint64_t net_channels_id_hash(uint64_t net_id)
{
    uint64_t z = net_id + 0x9E3779B97F4A7C15ull;

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void filter_add(net_channels *t, uint64_t net_id)
{
    uint32_t bit = (uint32_t)(net_channels_id_hash(net_id) >> 54); /* 10 bits */

    t->filter[bit >> 6] |= 1ull << (bit & 63);
}

static bool filter_may_have(const net_channels *t, uint64_t net_id)
{
    uint32_t bit = (uint32_t)(net_channels_id_hash(net_id) >> 54);

    return (t->filter[bit >> 6] >> (bit & 63)) & 1;
}

static uint32_t slot_value(uint32_t set, uint32_t index)
{
    return ((set << SET_SHIFT) | index) + 1;
}

static net_channel *slot_channel(net_channels *t, uint32_t value)
{
    uint32_t v = value - 1;

    return &t->sets[v >> SET_SHIFT].v[v & ~(1u << SET_SHIFT)];
}

/* The slot holding net_id, or the empty slot where it would go. */
static uint32_t slot_find(net_channels *t, uint64_t net_id)
{
    uint32_t mask = t->slot_count - 1;
    uint32_t i = (uint32_t)net_channels_id_hash(net_id) & mask;

    while (t->slots[i] != 0 && slot_channel(t, t->slots[i])->net_id != net_id)
        i = (i + 1) & mask;
    return i;
}

static bool slots_grow(net_channels *t)
{
    uint32_t n = t->slot_count ? t->slot_count * 2 : 64;
    uint32_t *old = t->slots, old_count = t->slot_count;
    uint32_t *fresh = calloc(n, sizeof *fresh);

    if (fresh == NULL)
        return false;
    t->slots = fresh;
    t->slot_count = n;
    for (uint32_t i = 0; i < old_count; i++)
        if (old[i] != 0)
            t->slots[slot_find(t, slot_channel(t, old[i])->net_id)] = old[i];
    free(old);
    return true;
}

static void slot_delete(net_channels *t, uint32_t i)
{
    uint32_t mask = t->slot_count - 1;
    uint32_t j = i;

    /* Backward shift: pull later members of the probe run into the hole. */
    for (;;) {
        uint32_t home;

        j = (j + 1) & mask;
        if (t->slots[j] == 0)
            break;
        home = (uint32_t)net_channels_id_hash(slot_channel(t, t->slots[j])->net_id) & mask;
        /* j's entry may move to i only if its home is not in (i, j] (cyclically). */
        if ((i <= j) ? (home <= i || home > j) : (home <= i && home > j)) {
            t->slots[i] = t->slots[j];
            i = j;
        }
    }
    t->slots[i] = 0;
    t->used--;
}

/* Moves element from -> to inside one set (to's old content is gone) and repoints its slot.
 * A slot is found while it still points at the element, so always before the data moves. */
static void set_move(net_channels *t, uint32_t set, uint32_t from, uint32_t to)
{
    net_channel_set *s = &t->sets[set];
    uint32_t slot;

    if (from == to)
        return;
    slot = slot_find(t, s->v[from].net_id);
    s->v[to] = s->v[from];
    t->slots[slot] = slot_value(set, to);
}

static void set_swap(net_channels *t, uint32_t set, uint32_t a, uint32_t b)
{
    net_channel_set *s = &t->sets[set];
    uint32_t slot_a, slot_b;
    net_channel tmp;

    if (a == b)
        return;
    slot_a = slot_find(t, s->v[a].net_id);
    slot_b = slot_find(t, s->v[b].net_id);
    tmp = s->v[a];
    s->v[a] = s->v[b];
    s->v[b] = tmp;
    t->slots[slot_a] = slot_value(set, b);
    t->slots[slot_b] = slot_value(set, a);
}

void net_channels_init(net_channels *t)
{
    memset(t, 0, sizeof *t);
}

void net_channels_free(net_channels *t)
{
    for (int i = 0; i < NET_SET_COUNT; i++)
        free(t->sets[i].v);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

void net_channels_clear(net_channels *t)
{
    for (int i = 0; i < NET_SET_COUNT; i++)
        t->sets[i].count = t->sets[i].pending = 0;
    if (t->slots != NULL)
        memset(t->slots, 0, (size_t)t->slot_count * sizeof *t->slots);
    t->used = 0;
    memset(t->filter, 0, sizeof t->filter);
}

void net_channels_refilter(net_channels *t)
{
    memset(t->filter, 0, sizeof t->filter);
    for (int k = 0; k < NET_SET_COUNT; k++)
        for (uint32_t i = 0; i < t->sets[k].count; i++)
            filter_add(t, t->sets[k].v[i].net_id);
}

uint32_t net_channels_count(const net_channels *t)
{
    return t->used;
}

uint32_t net_channels_pending(const net_channels *t)
{
    return t->sets[NET_SET_STATIC].pending + t->sets[NET_SET_MOVER].pending;
}

net_channel *net_channels_find(net_channels *t, uint64_t net_id)
{
    uint32_t i;

    if (t->used == 0 || !filter_may_have(t, net_id))
        return NULL;
    i = slot_find(t, net_id);
    return t->slots[i] != 0 ? slot_channel(t, t->slots[i]) : NULL;
}

net_channel *net_channels_add(net_channels *t, uint64_t net_id, gc_weak actor, uint8_t priority,
                              bool moves, uint32_t frame, uint32_t epoch)
{
    uint32_t set = moves ? NET_SET_MOVER : NET_SET_STATIC;
    net_channel_set *s = &t->sets[set];
    uint32_t at;

    if ((t->used + 1) * 2 > t->slot_count && !slots_grow(t))
        return NULL;
    if (!VEC_RESERVE(s->v, s->cap, s->count + 1))
        return NULL;
    at = s->count++;
    s->v[at] = (net_channel){
        .net_id = net_id,
        .actor = actor,
        .since_frame = frame,
        .epoch = epoch,
        .priority = priority,
        .set = (uint8_t)set,
        .state = NET_CHANNEL_PENDING,
    };
    t->slots[slot_find(t, net_id)] = slot_value(set, at);
    t->used++;
    filter_add(t, net_id);
    /* Into the pending part: swap with the first open channel. */
    set_swap(t, set, at, s->pending);
    return &s->v[s->pending++];
}

net_channel *net_channels_open(net_channels *t, net_channel *ch)
{
    net_channel_set *s = &t->sets[ch->set];
    uint32_t i = (uint32_t)(ch - s->v);
    uint32_t set = ch->set;

    if (ch->state == NET_CHANNEL_OPEN)
        return ch;
    ch->state = NET_CHANNEL_OPEN;
    /* The last pending slot becomes the first open one. */
    s->pending--;
    set_swap(t, set, i, s->pending);
    return &s->v[s->pending];
}

void net_channels_remove(net_channels *t, net_channel *ch)
{
    uint32_t set = ch->set;
    net_channel_set *s = &t->sets[set];
    uint32_t i = (uint32_t)(ch - s->v);

    slot_delete(t, slot_find(t, ch->net_id));
    if (i < s->pending) {
        /* Fill the hole with the last pending, and that one's place with the last channel. */
        set_move(t, set, s->pending - 1, i);
        set_move(t, set, s->count - 1, s->pending - 1);
        s->pending--;
    } else {
        set_move(t, set, s->count - 1, i);
    }
    s->count--;
}

uint64_t net_channels_digest(const net_channels *t, bool open_only)
{
    uint64_t d = 0;

    for (int k = 0; k < NET_SET_COUNT; k++) {
        const net_channel_set *s = &t->sets[k];
        for (uint32_t i = open_only ? s->pending : 0; i < s->count; i++)
            d ^= net_channels_id_hash(s->v[i].net_id);
    }
    return d;
}
