/*
 * client_mirror.c - the client's copy of the world: a table keyed by net id (base/client_table).
 *
 * The count and the digest follow every change, so a ReplicationCheck is compared without
 * walking the table.
 */
#include "client_mirror.h"
#include "reap_wire.h"

uint64_t client_net_id_digest(uint64_t net_id)
{
    return wire_net_id_digest(net_id);
}

void client_mirror_init(client_mirror *m)
{
    client_table_init(&m->table, sizeof(client_mirror_entry));
    m->digest = 0;
}

void client_mirror_clear(client_mirror *m)
{
    client_table_clear(&m->table);
    m->digest = 0;
}

void client_mirror_free(client_mirror *m)
{
    client_table_free(&m->table);
    m->digest = 0;
}

bool client_mirror_put(client_mirror *m, uint64_t net_id, uint32_t actor_class,
                       uint32_t owner_player_id)
{
    bool added;
    client_mirror_entry *e = client_table_put(&m->table, net_id, &added);

    if (e == NULL)
        return false;
    if (added)
        m->digest ^= client_net_id_digest(net_id);
    e->actor_class = actor_class;
    e->owner_player_id = owner_player_id;
    e->archetype = 0;
    return true;
}

bool client_mirror_set_archetype(client_mirror *m, uint64_t net_id, uint32_t archetype)
{
    client_mirror_entry *e = client_table_get(&m->table, net_id);

    if (e == NULL)
        return false;
    e->archetype = archetype;
    return true;
}

bool client_mirror_remove(client_mirror *m, uint64_t net_id)
{
    if (!client_table_remove(&m->table, net_id))
        return false;
    m->digest ^= client_net_id_digest(net_id);
    return true;
}

const client_mirror_entry *client_mirror_get(const client_mirror *m, uint64_t net_id)
{
    return client_table_get(&m->table, net_id);
}

uint32_t client_mirror_count_owned(const client_mirror *m, uint32_t actor_class,
                                   uint32_t owner_player_id)
{
    uint32_t n = 0;

    for (uint32_t i = 0; i < m->table.capacity; i++) {
        const client_mirror_entry *e = client_table_slot(&m->table, i);
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

    if (m->table.count != r->open_actors || m->digest != r->open_digest || closing < 0)
        return false;
    if (closing != r->closing)
        return false; /* the check's own counts disagree with the destroys it says are owed */
    return r->pending != 0 || closing != 0 || m->digest == r->relevant_digest;
}
