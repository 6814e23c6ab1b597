/*
 * client_table.h - the client's one hash table: fixed-size entries keyed by a non-zero
 * uint64_t (key 0 marks an empty slot), open addressing with linear probing and
 * backward-shift deletion, so there are no tombstones and lookups stay short however many
 * entries come and go. Each entry begins with its key; the rest is the user's.
 *
 * The capacity is a power of two, doubled (and every entry rehashed) before the table is
 * three quarters full. Entry pointers are valid until the next put or remove.
 */
#ifndef REAP_CLIENT_TABLE_H
#define REAP_CLIENT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct client_table {
    unsigned char *slots;     /* owned: capacity entries of entry_size bytes */
    uint32_t capacity;        /* 0 or a power of two */
    uint32_t count;
    uint32_t entry_size;      /* at least sizeof(uint64_t): the key comes first */
} client_table;

void client_table_init(client_table *t, size_t entry_size);
void client_table_free(client_table *t);
/* Empties the table, keeping its memory. */
void client_table_clear(client_table *t);
/* The entry of key, or NULL. */
void *client_table_get(const client_table *t, uint64_t key);
/* The entry of key, added (zeroed but for its key; *out_added true) when it is not there yet.
 * NULL when key is 0 or the table cannot grow (nothing changes). */
void *client_table_put(client_table *t, uint64_t key, bool *out_added);
/* False (and nothing changes) when key is not there. */
bool client_table_remove(client_table *t, uint64_t key);
/* Slot i (0 <= i < capacity), empty when its key is 0: for walking every entry. */
static inline void *client_table_slot(const client_table *t, uint32_t i)
{
    return t->slots + (size_t)i * t->entry_size;
}
static inline uint64_t client_table_key(const void *entry)
{
    return *(const uint64_t *)entry;
}

#endif /* REAP_CLIENT_TABLE_H */
