/*
 * client_table.c - open addressing by a uint64_t key (see client_table.h).
 */
#include "client_table.h"

#include <stdlib.h>
#include <string.h>

#define CLIENT_TABLE_FIRST 64

static uint32_t table_hash(uint64_t key)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (uint32_t)key;
}

void client_table_init(client_table *t, size_t entry_size)
{
    t->slots = NULL;
    t->capacity = 0;
    t->count = 0;
    t->entry_size = (uint32_t)entry_size;
}

void client_table_free(client_table *t)
{
    free(t->slots);
    client_table_init(t, t->entry_size);
}

void client_table_clear(client_table *t)
{
    if (t->slots != NULL)
        memset(t->slots, 0, (size_t)t->capacity * t->entry_size);
    t->count = 0;
}

/* The slot holding key, or the empty slot where it would go. The table is never full. */
static unsigned char *table_find(const client_table *t, uint64_t key)
{
    uint32_t mask = t->capacity - 1;

    for (uint32_t i = table_hash(key) & mask;; i = (i + 1) & mask) {
        unsigned char *e = client_table_slot(t, i);
        uint64_t k = client_table_key(e);
        if (k == key || k == 0)
            return e;
    }
}

static bool table_grow(client_table *t)
{
    client_table old = *t;
    uint32_t cap = t->capacity ? t->capacity * 2 : CLIENT_TABLE_FIRST;

    if (cap == 0 || (size_t)cap > SIZE_MAX / t->entry_size)
        return false;
    t->slots = calloc(cap, t->entry_size);
    if (t->slots == NULL) {
        *t = old;
        return false;
    }
    t->capacity = cap;
    for (uint32_t i = 0; i < old.capacity; i++) {
        const unsigned char *e = client_table_slot(&old, i);
        if (client_table_key(e) != 0)
            memcpy(table_find(t, client_table_key(e)), e, t->entry_size);
    }
    free(old.slots);
    return true;
}

void *client_table_get(const client_table *t, uint64_t key)
{
    unsigned char *e;

    if (t->capacity == 0 || key == 0)
        return NULL;
    e = table_find(t, key);
    return client_table_key(e) == key ? e : NULL;
}

void *client_table_put(client_table *t, uint64_t key, bool *out_added)
{
    unsigned char *e;

    if (key == 0)
        return NULL;
    if (((uint64_t)t->count + 1) * 4 > (uint64_t)t->capacity * 3 && !table_grow(t))
        return NULL;
    e = table_find(t, key);
    *out_added = client_table_key(e) == 0;
    if (*out_added) {
        memset(e, 0, t->entry_size);
        memcpy(e, &key, sizeof key);
        t->count++;
    }
    return e;
}

bool client_table_remove(client_table *t, uint64_t key)
{
    uint32_t mask = t->capacity - 1;
    uint32_t i, j;

    if (t->capacity == 0 || key == 0)
        return false;
    i = (uint32_t)((size_t)(table_find(t, key) - t->slots) / t->entry_size);
    if (client_table_key(client_table_slot(t, i)) == 0)
        return false;
    /* Backward shift: pull later entries of the probe run into the hole. */
    for (j = (i + 1) & mask; client_table_key(client_table_slot(t, j)) != 0; j = (j + 1) & mask) {
        uint32_t home = table_hash(client_table_key(client_table_slot(t, j))) & mask;
        if (((j - home) & mask) >= ((j - i) & mask)) {
            memcpy(client_table_slot(t, i), client_table_slot(t, j), t->entry_size);
            i = j;
        }
    }
    memset(client_table_slot(t, i), 0, t->entry_size);
    t->count--;
    return true;
}
