/*
 * client_mirror.c - the client's copy of the world: an open-addressing table keyed by net id.
 *
 * Linear probing with backward-shift deletion, so there are no tombstones and lookups stay
 * short however many actors come and go. The count and the digest follow every change, so a
 * ReplicationCheck is compared without walking the table.
 */
#include "client_mirror.h"
#include "reap_wire.h"

#include <stdlib.h>
#include <string.h>

static uint32_t client_mirror_hash(uint64_t key)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (uint32_t)key;
}

uint64_t client_net_id_digest(uint64_t net_id)
{
    return wire_net_id_digest(net_id);
}

void client_mirror_init(client_mirror *m)
{
    m->slots = NULL;
    m->capacity = 0;
    m->count = 0;
    m->digest = 0;
}

void client_mirror_clear(client_mirror *m)
{
    if (m->slots != NULL)
        memset(m->slots, 0, (size_t)m->capacity * sizeof *m->slots);
    m->count = 0;
    m->digest = 0;
}

void client_mirror_free(client_mirror *m)
{
    free(m->slots);
    client_mirror_init(m);
}

static client_mirror_entry *client_mirror_find_slot(const client_mirror *m, uint64_t net_id)
{
    uint32_t mask = m->capacity - 1;

    for (uint32_t i = client_mirror_hash(net_id) & mask;; i = (i + 1) & mask) {
        client_mirror_entry *e = &m->slots[i];
        if (e->net_id == net_id || e->net_id == 0)
            return e;
    }
}

static bool client_mirror_grow(client_mirror *m)
{
    client_mirror old = *m;
    uint32_t cap = m->capacity ? m->capacity * 2 : 64;

    m->slots = calloc(cap, sizeof *m->slots);
    if (m->slots == NULL) {
        *m = old;
        return false;
    }
    m->capacity = cap;
    m->count = 0;
    for (uint32_t i = 0; i < old.capacity; i++)
        if (old.slots[i].net_id != 0)
            *client_mirror_find_slot(m, old.slots[i].net_id) = old.slots[i];
    m->count = old.count;
    free(old.slots);
    return true;
}

bool client_mirror_put(client_mirror *m, uint64_t net_id, uint32_t actor_class,
                       uint32_t owner_player_id)
{
    client_mirror_entry *e;

    if (net_id == 0)
        return false;
    if ((m->count + 1) * 4 > m->capacity * 3 && !client_mirror_grow(m))
        return false;
    e = client_mirror_find_slot(m, net_id);
    if (e->net_id == 0) {
        m->count++;
        m->digest ^= client_net_id_digest(net_id);
    }
    e->net_id = net_id;
    e->actor_class = actor_class;
    e->owner_player_id = owner_player_id;
    e->archetype = 0;
    return true;
}

bool client_mirror_set_archetype(client_mirror *m, uint64_t net_id, uint32_t archetype)
{
    client_mirror_entry *e;

    if (net_id == 0 || m->capacity == 0)
        return false;
    e = client_mirror_find_slot(m, net_id);
    if (e->net_id != net_id)
        return false;
    e->archetype = archetype;
    return true;
}

bool client_mirror_remove(client_mirror *m, uint64_t net_id)
{
    uint32_t mask = m->capacity - 1;
    uint32_t i, j;

    if (m->capacity == 0 || net_id == 0)
        return false;
    i = (uint32_t)(client_mirror_find_slot(m, net_id) - m->slots);
    if (m->slots[i].net_id == 0)
        return false;
    m->digest ^= client_net_id_digest(net_id);
    /* Backward shift: pull later entries of the probe run into the hole. */
    for (j = (i + 1) & mask; m->slots[j].net_id != 0; j = (j + 1) & mask) {
        uint32_t home = client_mirror_hash(m->slots[j].net_id) & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {
            m->slots[i] = m->slots[j];
            i = j;
        }
    }
    m->slots[i].net_id = 0;
    m->count--;
    return true;
}

const client_mirror_entry *client_mirror_get(const client_mirror *m, uint64_t net_id)
{
    const client_mirror_entry *e;

    if (m->capacity == 0 || net_id == 0)
        return NULL;
    e = client_mirror_find_slot(m, net_id);
    return e->net_id == net_id ? e : NULL;
}

uint32_t client_mirror_count_owned(const client_mirror *m, uint32_t actor_class,
                                   uint32_t owner_player_id)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < m->capacity; i++) {
        const client_mirror_entry *e = &m->slots[i];
        if (e->net_id != 0 && e->actor_class == actor_class &&
            e->owner_player_id == owner_player_id)
            n++;
    }
    return n;
}

/* The mirror must equal what the server sent (open and closing actors). The server's relevant
 * set (pending and open) equals it too once nothing is owed either way: no spawn pending and no
 * destroy still owed (held = open + closing and relevant = pending + open, so closing = held +
 * pending - relevant, which must also be the `closing` the check reports). */
bool churn_check_matches(const client_mirror *m, const Reap__ReplicationCheck *r)
{
    int64_t closing = (int64_t)r->open_actors + r->pending - r->relevant_actors;

    if (m->count != r->open_actors || m->digest != r->open_digest || closing < 0)
        return false;
    if (closing != r->closing)
        return false; /* the check's own counts disagree with the destroys it says are owed */
    return r->pending != 0 || closing != 0 || m->digest == r->relevant_digest;
}
