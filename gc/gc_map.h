/*
 * gc_map.h - the collector's hash tables: 64-bit keys to 32-bit values (gc_map.c).
 *
 * Open addressing with linear probing; key 0 marks an empty slot and UINT64_MAX a tombstone,
 * so neither may be used as a key. A table grows (or shrinks) incrementally, as Redis's dict
 * does: the larger table is allocated at once, and the keys move into it a few slots at a
 * time, with every put and with every gc_map_rehash_step, so no single insert pays for a
 * table of millions of keys. While keys move the map has two tables, and every operation
 * looks in both.
 *
 * Threads: gc_map_get and iteration only read. Only gc_map_put, gc_map_rehash_step and
 * gc_map_shrink move keys, allocate or free tables; gc_map_update and gc_map_remove write the
 * slot of their own key and nothing else (as before the tables grew incrementally). So the
 * rule for a map shared by threads is the one a table that rehashes at once needs: no put,
 * step or shrink while anyone else reads it.
 */
#ifndef REAP_GC_MAP_H
#define REAP_GC_MAP_H

#include <stdbool.h>
#include <stdint.h>

/* Slots of the old table a put moves on (whole runs of occupied slots, so a little more).
 * Keys move at least this fast: the old table is empty long before the new one is half full
 * (a grown table starts a quarter full and must take capacity/4 more keys before it would
 * grow again; the old table, half as large, is done after capacity/2/32 puts). */
#define GC_MAP_STEP_SLOTS 32u

/* One open-addressing table. */
typedef struct gc_map_table {
    uint64_t *keys;       /* 0: empty, UINT64_MAX: tombstone */
    uint32_t *values;
    uint32_t capacity;    /* power of two, or 0 */
    uint32_t used;        /* keys held */
    uint32_t tombstones;
} gc_map_table;

typedef struct gc_map {
    gc_map_table t;       /* the table that takes inserts */
    gc_map_table old;     /* while keys move (old.keys != NULL): the keys not moved yet */
    uint32_t count;       /* keys in both tables */
    uint32_t start;       /* old's slot where moving began (it was empty then) */
    uint32_t moved;       /* old's slots from start on (cyclically) already emptied: whole
                             runs, so a key whose home slot lies there is not in old */
} gc_map;

void gc_map_init(gc_map *m);
void gc_map_free(gc_map *m);
bool gc_map_get(const gc_map *m, uint64_t key, uint32_t *out_value);
/* Inserts or updates; only an insert can fail (GC_E_NOMEM, the keys unchanged). */
gc_result gc_map_put(gc_map *m, uint64_t key, uint32_t value);
/* Updates a present key; false (and nothing changed) when it is absent. Never allocates. */
bool gc_map_update(gc_map *m, uint64_t key, uint32_t value);
bool gc_map_remove(gc_map *m, uint64_t key);
/* Moves keys out of the old table, about `slots` of its slots (whole runs), and frees it
 * once it is empty. True when no key is left to move (at once if none was moving). Never
 * allocates. */
bool gc_map_rehash_step(gc_map *m, uint32_t slots);
static inline bool gc_map_is_rehashing(const gc_map *m)
{
    return m->old.keys != 0;
}
/* A table of more than 1024 slots at most one-eighth full starts moving into one a quarter
 * full, so a peak's tables are given back after it: gc_map_rehash_step finishes the move
 * and frees the large table. Does nothing while keys move, or when the smaller table cannot
 * be allocated. */
void gc_map_shrink(gc_map *m);
/* Slots allocated: the table's, and the old table's while keys move. */
static inline uint64_t gc_map_slots(const gc_map *m)
{
    return (uint64_t)m->t.capacity + m->old.capacity;
}

/* Visits every key once, in no order, also while keys move. No put, step or shrink while
 * iterating (they move keys); removing the key just visited is allowed.
 *     gc_map_iter it; uint64_t k; uint32_t v;
 *     for (gc_map_iter_init(&it, m); gc_map_iter_next(&it, &k, &v);) ...               */
typedef struct gc_map_iter {
    const gc_map *m;
    const gc_map_table *table;
    uint32_t slot;
} gc_map_iter;

void gc_map_iter_init(gc_map_iter *it, const gc_map *m);
bool gc_map_iter_next(gc_map_iter *it, uint64_t *out_key, uint32_t *out_value);

/* NULL when every invariant of gc_map.c holds, else which one is broken. Walks both tables:
 * for tests and checked builds. */
const char *gc_map_verify(const gc_map *m);

#endif /* REAP_GC_MAP_H */
