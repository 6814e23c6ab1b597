/*
 * client_mirror.h - a player's copy of the world, keyed by net id (the only actor identity
 * that goes on the wire), fed by replication; and the check of it against what the server
 * says it replicated (ReplicationCheck).
 */
#ifndef REAP_CLIENT_MIRROR_H
#define REAP_CLIENT_MIRROR_H

#include <stdbool.h>
#include <stdint.h>

#include "client_table.h"
#include "reap_msg.h"

typedef struct client_mirror_entry {
    uint64_t net_id;          /* 0 = empty */
    uint32_t actor_class;
    uint32_t owner_player_id;
    uint32_t archetype;       /* class ARCHETYPE: 1 + its index in Welcome.archetypes; else 0 */
} client_mirror_entry;

typedef struct client_mirror {
    client_table table;       /* of client_mirror_entry, by net id; table.count entries */
    uint64_t digest;          /* XOR of client_net_id_digest over the entries */
} client_mirror;

void client_mirror_init(client_mirror *m);
void client_mirror_free(client_mirror *m);
/* Adds, or replaces the class and owner of an entry already there (a duplicate spawn does not
 * count twice); false on allocation failure. */
bool client_mirror_put(client_mirror *m, uint64_t net_id, uint32_t actor_class,
                       uint32_t owner_player_id);
/* False (and nothing changes) when net_id is not there: a destroy for an unknown actor. */
bool client_mirror_remove(client_mirror *m, uint64_t net_id);
/* Records which archetype an entry already there is of; false when net_id is not there. */
bool client_mirror_set_archetype(client_mirror *m, uint64_t net_id, uint32_t archetype);
const client_mirror_entry *client_mirror_get(const client_mirror *m, uint64_t net_id);
/* Empties the mirror, keeping its memory. */
void client_mirror_clear(client_mirror *m);
/* The digest the server's ReplicationCheck carries: XOR over the set of splitmix64(net_id),
 * where splitmix64(x) is the finaliser of x + 0x9E3779B97F4A7C15. */
uint64_t client_net_id_digest(uint64_t net_id);
/* Entries of a class owned by a player. */
uint32_t client_mirror_count_owned(const client_mirror *m, uint32_t actor_class,
                                   uint32_t owner_player_id);

/* The checks of a reply against a mirror: true when they agree (see ReplicationCheck). */
bool churn_check_matches(const client_mirror *m, const Reap__ReplicationCheck *r);

#endif /* REAP_CLIENT_MIRROR_H */
