/*
 * net_channels.c - a connection's actor channels: partitioned dense sets and a hash.
 *
 * The hash uses linear probing with backward-shift deletion (no tombstones), keyed by net id;
 * it stays at most half full. Whenever an element moves inside or between sets, its slot is
 * rewritten (found by id, which the slot keeps), so a lookup always lands on the element's
 * current position.
 */
#include "net_channels.h"

#include <stdlib.h>
#include <string.h>

#include "vec.h"

enum { SET_SHIFT = 30 };

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

    return &t->sets[v >> SET_SHIFT].v[v & ((1u << SET_SHIFT) - 1)];
}

static uint32_t slot_home(const net_channels *t, uint64_t net_id)
{
    return (uint32_t)net_channels_id_hash(net_id) & (t->slot_count - 1);
}

/* The slot holding net_id, or the empty slot where it would go. */
static uint32_t slot_find(const net_channels *t, uint64_t net_id)
{
    uint32_t mask = t->slot_count - 1;
    uint32_t i = slot_home(t, net_id);

    while (t->slots[i].value != 0 && t->slots[i].net_id != net_id)
        i = (i + 1) & mask;
    return i;
}

static bool slots_grow(net_channels *t)
{
    uint32_t n = t->slot_count ? t->slot_count * 2 : 64;
    net_channel_slot *old = t->slots;
    uint32_t old_count = t->slot_count;
    net_channel_slot *fresh = calloc(n, sizeof *fresh);

    if (fresh == NULL)
        return false;
    t->slots = fresh;
    t->slot_count = n;
    for (uint32_t i = 0; i < old_count; i++)
        if (old[i].value != 0)
            t->slots[slot_find(t, old[i].net_id)] = old[i];
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
        if (t->slots[j].value == 0)
            break;
        home = slot_home(t, t->slots[j].net_id);
        /* j's entry may move to i only if its home is not in (i, j] (cyclically). */
        if ((i <= j) ? (home <= i || home > j) : (home <= i && home > j)) {
            t->slots[i] = t->slots[j];
            i = j;
        }
    }
    t->slots[i].value = 0;
    t->used--;
}

static void slot_point(net_channels *t, uint64_t net_id, uint32_t set, uint32_t index)
{
    t->slots[slot_find(t, net_id)].value = slot_value(set, index);
}

/* Drops entry pos of a set's pending list (the last entry takes its place). */
static void pending_remove(net_channel_set *s, uint32_t pos)
{
    uint32_t last = s->pending[--s->pending_count];

    s->pending[pos] = last;
    s->v[last].pending_pos = pos;
}

/* Takes element i out of its set (the last element takes its place); its slot is left to
 * the caller. */
static void set_take(net_channels *t, uint32_t set, uint32_t i)
{
    net_channel_set *s = &t->sets[set];
    uint32_t last = s->count - 1;

    if (s->v[i].state == NET_CHANNEL_PENDING)
        pending_remove(s, s->v[i].pending_pos);
    if (i != last) {
        s->v[i] = s->v[last];
        slot_point(t, s->v[i].net_id, set, i);
        if (s->v[i].state == NET_CHANNEL_PENDING)
            s->pending[s->v[i].pending_pos] = i;
    }
    s->count--;
}

/* Appends ch to set and points its slot there (a pending one joins the pending list). */
static net_channel *set_append(net_channels *t, uint32_t set, const net_channel *ch)
{
    net_channel_set *s = &t->sets[set];
    uint32_t at;

    if (!VEC_RESERVE(s->v, s->cap, s->count + 1) ||
        !VEC_RESERVE(s->pending, s->pending_cap, s->pending_count + 1))
        return NULL;
    at = s->count++;
    s->v[at] = *ch;
    s->v[at].set = (uint8_t)set;
    if (ch->state == NET_CHANNEL_PENDING) {
        s->v[at].pending_pos = s->pending_count;
        s->pending[s->pending_count++] = at;
    }
    slot_point(t, ch->net_id, set, at);
    return &s->v[at];
}

void net_channels_init(net_channels *t)
{
    memset(t, 0, sizeof *t);
}

void net_channels_free(net_channels *t)
{
    for (int i = 0; i < NET_SET_COUNT; i++) {
        free(t->sets[i].v);
        free(t->sets[i].pending);
    }
    free(t->slots);
    memset(t, 0, sizeof *t);
}

void net_channels_clear(net_channels *t)
{
    for (int i = 0; i < NET_SET_COUNT; i++)
        t->sets[i].count = t->sets[i].pending_count = 0;
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
    return t->sets[NET_SET_STATIC].pending_count + t->sets[NET_SET_MOVER].pending_count;
}

uint32_t net_channels_relevant(const net_channels *t)
{
    return t->sets[NET_SET_STATIC].count + t->sets[NET_SET_MOVER].count;
}

uint32_t net_channels_held(const net_channels *t)
{
    return net_channels_relevant(t) - net_channels_pending(t) + t->sets[NET_SET_CLOSING].count;
}

net_channel *net_channels_find(net_channels *t, uint64_t net_id)
{
    uint32_t i;

    if (t->used == 0 || !filter_may_have(t, net_id))
        return NULL;
    i = slot_find(t, net_id);
    return t->slots[i].value != 0 ? slot_channel(t, t->slots[i].value) : NULL;
}

net_channel *net_channels_add(net_channels *t, uint64_t net_id, gc_weak actor, uint8_t priority,
                              bool moves, uint32_t frame, uint32_t epoch)
{
    uint32_t set = moves ? NET_SET_MOVER : NET_SET_STATIC;
    net_channel ch = {
        .net_id = net_id,
        .actor = actor,
        .since_frame = frame,
        .epoch = epoch,
        .priority = priority,
        .moves = moves,
        .state = NET_CHANNEL_PENDING,
    };
    net_channel *added;
    uint32_t slot;

    if ((t->used + 1) * 2 > t->slot_count && !slots_grow(t))
        return NULL;
    slot = slot_find(t, net_id);
    t->slots[slot].net_id = net_id;
    t->slots[slot].value = slot_value(set, 0); /* placeholder, pointed right by set_append */
    t->used++;
    added = set_append(t, set, &ch);
    if (added == NULL) {
        slot_delete(t, slot);
        return NULL;
    }
    filter_add(t, net_id);
    return added;
}

void net_channels_open(net_channels *t, net_channel *ch)
{
    if (ch->state != NET_CHANNEL_PENDING)
        return;
    pending_remove(&t->sets[ch->set], ch->pending_pos);
    ch->state = NET_CHANNEL_OPEN;
}

/* Moves an open (or closing) channel to another set, in the given state. */
static net_channel *channels_transfer(net_channels *t, net_channel *ch, uint32_t to,
                                      net_channel_state state)
{
    uint32_t from = ch->set;
    net_channel copy = *ch;
    net_channel *moved;

    if (!VEC_RESERVE(t->sets[to].v, t->sets[to].cap, t->sets[to].count + 1))
        return NULL;
    if (ch->state == NET_CHANNEL_PENDING)
        return NULL; /* only open and closing channels move between sets */
    set_take(t, from, (uint32_t)(ch - t->sets[from].v));
    copy.state = (uint8_t)state;
    moved = set_append(t, to, &copy); /* cannot fail: reserved above */
    return moved;
}

net_channel *net_channels_close(net_channels *t, net_channel *ch)
{
    net_channel *closed = channels_transfer(t, ch, NET_SET_CLOSING, NET_CHANNEL_CLOSING);

    if (closed == NULL) {
        /* No memory to remember the owed destroy: forget the channel instead; the client
         * keeps a ghost until it rejoins, which is better than stopping. */
        net_channels_remove(t, ch);
    }
    return closed;
}

net_channel *net_channels_reopen(net_channels *t, net_channel *ch, uint32_t epoch)
{
    net_channel *open = channels_transfer(t, ch, ch->moves ? NET_SET_MOVER : NET_SET_STATIC,
                                          NET_CHANNEL_OPEN);

    if (open != NULL)
        open->epoch = epoch;
    return open;
}

void net_channels_remove(net_channels *t, net_channel *ch)
{
    uint32_t set = ch->set;

    slot_delete(t, slot_find(t, ch->net_id));
    set_take(t, set, (uint32_t)(ch - t->sets[set].v));
}

uint64_t net_channels_digest(const net_channels *t, bool held)
{
    uint64_t d = 0;

    for (int k = 0; k < NET_SET_COUNT; k++) {
        const net_channel_set *s = &t->sets[k];

        if (!held && k == NET_SET_CLOSING)
            continue;
        for (uint32_t i = 0; i < s->count; i++)
            if (!held || s->v[i].state != NET_CHANNEL_PENDING)
                d ^= net_channels_id_hash(s->v[i].net_id);
    }
    return d;
}
