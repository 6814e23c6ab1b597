/*
 * gc_map.c - the collector's hash tables (gc_map.h), grown and shrunk without a pause.
 *
 * Assumes on entry to every function a map that gc_map_init made and only these functions
 * changed; guarantees on exit: every key is in exactly one of the two tables, reachable by
 * linear probing from its home slot there, `count` is the keys of both, and the old table's
 * slots from `start` on, `moved` of them, are empty.
 *
 * Growing: when an insert would fill the table past half, a table at most a quarter full
 * with the keys is allocated (gc_calloc: a fresh mapping for a large one, whose pages the
 * kernel zeroes as they are first touched, spread over the moves) and becomes the table that
 * takes inserts; the full one becomes `old`. Keys then move from old in slot order, starting
 * at a slot that was empty, a whole run of occupied slots at a time, and each moved slot is
 * emptied. Because runs move whole, a key whose home slot in old lies in the moved part is
 * not in old, and the rest of old probes exactly as before: lookups ask old only for keys
 * whose home is in the part not moved yet. Every put moves at least GC_MAP_STEP_SLOTS slots,
 * more when the new table would otherwise fill before old is empty (put_budget), so a
 * growth never waits for the last one to finish.
 */
#include "gc_internal.h"

#include <stdlib.h>
#include <string.h>

#define MAP_EMPTY 0u
#define MAP_TOMBSTONE UINT64_MAX
#define MAP_NONE UINT32_MAX
#define MAP_MIN_CAPACITY 16u
#define MAP_MAX_CAPACITY (1u << 31)

static inline uint32_t map_hash(uint64_t key)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return (uint32_t)key;
}

static inline bool key_used(uint64_t k)
{
    return k != MAP_EMPTY && k != MAP_TOMBSTONE;
}

/* ---- one table ---------------------------------------------------------------------- */

/* The slot of t holding key (whose hash is h), or MAP_NONE. */
static inline uint32_t table_find(const gc_map_table *t, uint64_t key, uint32_t h)
{
    if (t->capacity == 0)
        return MAP_NONE;
    uint32_t mask = t->capacity - 1;
    for (uint32_t i = h & mask;; i = (i + 1) & mask) {
        if (t->keys[i] == key)
            return i;
        if (t->keys[i] == MAP_EMPTY)
            return MAP_NONE;
    }
}

/* Puts a key t does not hold into its first free slot; t has one. */
static inline void table_insert(gc_map_table *t, uint64_t key, uint32_t value, uint32_t h)
{
    uint32_t mask = t->capacity - 1;
    uint32_t i = h & mask;
    while (key_used(t->keys[i]))
        i = (i + 1) & mask;
    if (t->keys[i] == MAP_TOMBSTONE)
        t->tombstones--;
    t->keys[i] = key;
    t->values[i] = value;
    t->used++;
}

static void table_free(gc_map_table *t)
{
    free(t->keys);
    free(t->values);
    memset(t, 0, sizeof *t);
}

/* ---- two tables while keys move ------------------------------------------------------ */

/* Whether key (hash h) may still be in old: its home slot there was not moved yet. */
static inline bool old_may_hold(const gc_map *m, uint32_t h)
{
    uint32_t mask = m->old.capacity - 1;
    return (((h & mask) - m->start) & mask) >= m->moved;
}

/* Where key is: its table and slot, or NULL. */
static const gc_map_table *map_locate(const gc_map *m, uint64_t key, uint32_t *out_slot)
{
    uint32_t h = map_hash(key);
    uint32_t i = table_find(&m->t, key, h);
    if (i != MAP_NONE) {
        *out_slot = i;
        return &m->t;
    }
    if (!m->old.keys || !old_may_hold(m, h) || (i = table_find(&m->old, key, h)) == MAP_NONE)
        return NULL;
    *out_slot = i;
    return &m->old;
}

/* Moves old's slots from start + moved on into t, whole runs, until `slots` were visited or
 * old holds no key (then it is freed). Returns the slots visited. t has room for every key
 * of old: its count includes them. */
static uint32_t migrate(gc_map *m, uint32_t slots)
{
    gc_map_table *o = &m->old;
    uint32_t mask = o->capacity - 1, visited = 0;
    while (o->used > 0 && m->moved < o->capacity && visited < slots) {
        uint32_t i = (m->start + m->moved) & mask;
        if (o->keys[i] == MAP_EMPTY) {
            m->moved++;
            visited++;
            continue;
        }
        /* The run ends at an empty slot at the latest at `start`, which stays empty. */
        for (; o->keys[i] != MAP_EMPTY; i = (i + 1) & mask) {
            uint64_t k = o->keys[i];
            if (k == MAP_TOMBSTONE) {
                o->tombstones--;
            } else {
                table_insert(&m->t, k, o->values[i], map_hash(k));
                o->used--;
            }
            o->keys[i] = MAP_EMPTY;
            m->moved++;
            visited++;
        }
    }
    if (o->used == 0) {
        table_free(o);
        m->start = m->moved = 0;
    }
    return visited;
}

/* Slots the next put moves: enough that old is empty before t must grow (each insert takes
 * one of t's free places before half; removes and moves take none), GC_MAP_STEP_SLOTS at
 * least. */
static uint32_t put_budget(const gc_map *m)
{
    uint32_t left = m->old.capacity - m->moved;
    int64_t room = (int64_t)(m->t.capacity / 2) - m->count - m->t.tombstones;
    if (room <= 1)
        return left;
    uint64_t need = (left + (uint64_t)room - 2) / (uint64_t)(room - 1); /* one put to spare */
    return need > GC_MAP_STEP_SLOTS ? (uint32_t)need : GC_MAP_STEP_SLOTS;
}

/* Makes a table of `capacity` slots the one that takes inserts; the keys of the current one
 * move into it from now on. Fails (GC_E_NOMEM, nothing changed) when it cannot be allocated. */
static gc_result map_resize(gc_map *m, uint32_t capacity)
{
    gc_map_table fresh = { .capacity = capacity };
    fresh.keys = gc_calloc(capacity, sizeof *fresh.keys);
    fresh.values = gc_malloc((size_t)capacity * sizeof *fresh.values);
    if (!fresh.keys || !fresh.values) {
        free(fresh.keys);
        free(fresh.values);
        return GC_E_NOMEM;
    }
    if (m->old.keys)
        migrate(m, UINT32_MAX); /* only if removes outran the puts' budget: see put_budget */
    if (m->t.used == 0) {
        table_free(&m->t); /* tombstones only: nothing to move */
    } else {
        m->old = m->t;
        m->start = 0;
        while (m->old.keys[m->start] != MAP_EMPTY) /* at most half the slots are taken */
            m->start++;
        m->moved = 0;
    }
    m->t = fresh;
    return GC_OK;
}

/* The size to grow to: at least the current one (same size sweeps tombstones), and large
 * enough to start at most a quarter full, so that old empties long before it fills. */
static uint64_t grown_capacity(const gc_map *m)
{
    uint64_t cap = m->t.capacity ? m->t.capacity : MAP_MIN_CAPACITY;
    while ((uint64_t)m->count * 4 > cap)
        cap *= 2;
    return cap;
}

/* ---- the interface ------------------------------------------------------------------- */

void gc_map_init(gc_map *m)
{
    memset(m, 0, sizeof *m);
}

void gc_map_free(gc_map *m)
{
    table_free(&m->t);
    table_free(&m->old);
    gc_map_init(m);
}

bool gc_map_get(const gc_map *m, uint64_t key, uint32_t *out_value)
{
    uint32_t i;
    const gc_map_table *t = map_locate(m, key, &i);
    if (!t)
        return false;
    if (out_value)
        *out_value = t->values[i];
    return true;
}

bool gc_map_update(gc_map *m, uint64_t key, uint32_t value)
{
    uint32_t i;
    gc_map_table *t = (gc_map_table *)map_locate(m, key, &i);
    if (!t)
        return false;
    t->values[i] = value;
    return true;
}

gc_result gc_map_put(gc_map *m, uint64_t key, uint32_t value)
{
    GC_ASSERT(key_used(key));
    if (m->old.keys)
        migrate(m, put_budget(m));
    /* An update never grows the table, so it cannot fail. */
    if (gc_map_update(m, key, value))
        return GC_OK;
    if (((uint64_t)m->count + m->t.tombstones + 1) * 2 > m->t.capacity) {
        uint64_t cap = grown_capacity(m);
        if (cap > MAP_MAX_CAPACITY)
            return GC_E_NOMEM;
        gc_result r = map_resize(m, (uint32_t)cap);
        if (r != GC_OK)
            return r;
    }
    table_insert(&m->t, key, value, map_hash(key));
    m->count++;
    return GC_OK;
}

bool gc_map_remove(gc_map *m, uint64_t key)
{
    uint32_t i;
    gc_map_table *t = (gc_map_table *)map_locate(m, key, &i);
    if (!t)
        return false;
    t->keys[i] = MAP_TOMBSTONE;
    t->used--;
    t->tombstones++;
    m->count--;
    return true;
}

bool gc_map_rehash_step(gc_map *m, uint32_t slots)
{
    if (m->old.keys)
        migrate(m, slots);
    return !m->old.keys;
}

void gc_map_shrink(gc_map *m)
{
    uint32_t cap = MAP_MIN_CAPACITY;

    if (m->old.keys || m->t.capacity <= 1024 || (uint64_t)m->count * 8 >= m->t.capacity)
        return;
    while ((m->count + 1) * 4 > cap)
        cap *= 2;
    (void)map_resize(m, cap); /* out of memory: the table simply stays as large */
}

void gc_map_iter_init(gc_map_iter *it, const gc_map *m)
{
    it->m = m;
    it->table = &m->t;
    it->slot = 0;
}

bool gc_map_iter_next(gc_map_iter *it, uint64_t *out_key, uint32_t *out_value)
{
    while (it->table) {
        const gc_map_table *t = it->table;
        while (it->slot < t->capacity) {
            uint32_t i = it->slot++;
            if (key_used(t->keys[i])) {
                *out_key = t->keys[i];
                *out_value = t->values[i];
                return true;
            }
        }
        it->table = t == &it->m->t && it->m->old.keys ? &it->m->old : NULL;
        it->slot = 0;
    }
    return false;
}

/* Counts the keys of t and checks that each is reachable from its home slot (no empty slot
 * between them) and that no key of t is in `other` too. */
static const char *table_verify(const gc_map_table *t, const gc_map_table *other,
                                uint32_t *out_used, uint32_t *out_tombstones)
{
    uint32_t used = 0, tombstones = 0;
    for (uint32_t i = 0; i < t->capacity; i++) {
        uint64_t k = t->keys[i];
        if (k == MAP_TOMBSTONE)
            tombstones++;
        if (!key_used(k))
            continue;
        used++;
        if (table_find(t, k, map_hash(k)) != i)
            return "a key cannot be found from its home slot";
        if (other && table_find(other, k, map_hash(k)) != MAP_NONE)
            return "a key is in both tables";
    }
    *out_used = used;
    *out_tombstones = tombstones;
    return NULL;
}

const char *gc_map_verify(const gc_map *m)
{
    uint32_t used, tombstones, old_used = 0, old_tombstones = 0;
    const char *why = table_verify(&m->t, m->old.keys ? &m->old : NULL, &used, &tombstones);
    if (why)
        return why;
    if (used != m->t.used || tombstones != m->t.tombstones)
        return "the table's counts differ from its slots";
    if (m->t.capacity & (m->t.capacity - 1))
        return "the table's capacity is not a power of two";
    if (m->old.keys) {
        if ((why = table_verify(&m->old, NULL, &old_used, &old_tombstones)))
            return why;
        if (old_used != m->old.used || old_tombstones != m->old.tombstones)
            return "the old table's counts differ from its slots";
        if (old_used == 0)
            return "an empty old table is kept";
        uint32_t mask = m->old.capacity - 1;
        for (uint32_t j = 0; j < m->moved; j++)
            if (m->old.keys[(m->start + j) & mask] != MAP_EMPTY)
                return "a moved slot of the old table is not empty";
        for (uint32_t i = 0; i < m->old.capacity; i++)
            if (key_used(m->old.keys[i]) && !old_may_hold(m, map_hash(m->old.keys[i])))
                return "a key of the old table has its home in the moved part";
    } else if (m->old.capacity || m->old.used || m->start || m->moved) {
        return "a map without an old table keeps its bookkeeping";
    }
    if ((uint64_t)used + old_used != m->count)
        return "the map's count differs from its tables' keys";
    if (((uint64_t)m->count + m->t.tombstones) * 2 > m->t.capacity)
        return "the table is more than half full";
    return NULL;
}
