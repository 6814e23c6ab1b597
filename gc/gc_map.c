/*
 * gc_map.c - the collector's hash tables (gc_map.h), grown and shrunk without a pause.
 *
 * Assumes on entry to every function a map that gc_map_init made and only these functions
 * changed; guarantees on exit: every key is in exactly one of the two tables, reachable by
 * linear probing from its home slot there (in old: a slot not moved yet), `count` is the
 * keys of both, and the old table's slots from `start` on, `moved` of them, hold nothing
 * that is still old's (stale copies of moved keys, never read).
 *
 * Growing: when an insert would fill the table past half, a table that starts at most a
 * quarter full is allocated and takes the inserts from then on; the full one becomes `old`.
 * (gc_calloc: glibc maps a large block afresh, so its pages are zeroed by the kernel as
 * they are first touched, spread over the moves, rather than in the insert that grows.)
 * Keys then move from old in slot order, starting at a slot that was empty, a whole run of
 * occupied slots at a time. Because runs move whole, a key whose home slot in old lies in
 * the moved part is not in old, and the rest of old probes exactly as before (a probe ends
 * with its run): lookups ask old only for keys whose home is in the part not moved yet, and
 * the moved part is never read again. Every put moves at least GC_MAP_STEP_SLOTS slots, more
 * when the new table would otherwise fill before old is empty (put_budget), so a growth
 * never has to finish the one before it.
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

/* The slot of old holding key (hash h), or MAP_NONE; a lookup's path while keys move. */
static uint32_t old_find(const gc_map *m, uint64_t key, uint32_t h)
{
    if (!m->old.keys || !old_may_hold(m, h))
        return MAP_NONE;
    return table_find(&m->old, key, h);
}

/* Where key is: its table and slot, or NULL. Inlined whole into each caller, so that the
 * lookup of a key in the table that takes inserts is the probe loop and nothing more (the
 * mark path finds every clustered object's cluster this way). */
static inline __attribute__((always_inline)) const gc_map_table *
map_locate(const gc_map *m, uint64_t key, uint32_t *out_slot)
{
    uint32_t h = map_hash(key);
    uint32_t i = table_find(&m->t, key, h);
    if (i != MAP_NONE) {
        *out_slot = i;
        return &m->t;
    }
    if ((i = old_find(m, key, h)) == MAP_NONE)
        return NULL;
    *out_slot = i;
    return &m->old;
}

/* Moves old's slots from start + moved on into t, whole runs, until `slots` were visited or
 * old holds no key (then it is freed). t has room for every key of old: its count includes
 * them. The loop keeps everything in locals and does no more than the rehash it replaces:
 * moved slots are left as they are (nothing reads them: a key whose home is there is not
 * looked for in old, a probe from a home not moved ends with its run), and keys go into
 * the first empty slot of t (tombstones there are rare: t is new). */
static void migrate(gc_map *m, uint32_t slots)
{
    gc_map_table *o = &m->old, *t = &m->t;
    const uint64_t *okeys = o->keys;
    const uint32_t *ovalues = o->values;
    uint64_t *tkeys = t->keys;
    uint32_t *tvalues = t->values;
    uint32_t omask = o->capacity - 1, tmask = t->capacity - 1;
    uint32_t moved = m->moved, left = o->used;
    uint32_t end = slots < o->capacity - moved ? moved + slots : o->capacity;
    uint32_t i = (m->start + moved) & omask;
    while (left > 0 && moved < end) {
        uint64_t k = okeys[i];
        if (k == MAP_EMPTY) {
            moved++;
            i = (i + 1) & omask;
            continue;
        }
        /* The run ends at an empty slot, at the latest at `start`. */
        do {
            if (k != MAP_TOMBSTONE) {
                uint32_t j = map_hash(k) & tmask;
                while (tkeys[j] != MAP_EMPTY)
                    j = (j + 1) & tmask;
                tkeys[j] = k;
                tvalues[j] = ovalues[i];
                left--;
            }
            moved++;
            i = (i + 1) & omask;
        } while ((k = okeys[i]) != MAP_EMPTY);
    }
    t->used += o->used - left;
    o->used = left;
    m->moved = moved;
    if (left == 0) {
        table_free(o);
        m->start = m->moved = 0;
    }
}

/* Slots the next put moves: enough that old is empty before t must grow (each insert takes
 * one of t's free places below half; removes and moves take none), GC_MAP_STEP_SLOTS at
 * least. */
static uint32_t put_budget(const gc_map *m)
{
    uint32_t left = m->old.capacity - m->moved;
    int64_t room = (int64_t)(m->t.capacity / 2) - m->count - m->t.tombstones;
    if (room <= 1)
        return left;
    if ((uint64_t)left <= (uint64_t)GC_MAP_STEP_SLOTS * (uint64_t)(room - 1))
        return GC_MAP_STEP_SLOTS; /* the usual case after a growth: no division */
    return (uint32_t)((left + (uint64_t)room - 2) / (uint64_t)(room - 1)); /* one to spare */
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

/* The slot of t holding key (hash h), or MAP_NONE and in *out_free where it would go: the
 * first tombstone or the empty slot that ends the probe. t has slots. */
static inline __attribute__((always_inline)) uint32_t
table_probe(const gc_map_table *t, uint64_t key, uint32_t h, uint32_t *out_free)
{
    uint32_t mask = t->capacity - 1, free_slot = MAP_NONE;
    for (uint32_t i = h & mask;; i = (i + 1) & mask) {
        uint64_t k = t->keys[i];
        if (k == key)
            return i;
        if (k == MAP_EMPTY) {
            *out_free = free_slot == MAP_NONE ? i : free_slot;
            return MAP_NONE;
        }
        if (k == MAP_TOMBSTONE && free_slot == MAP_NONE)
            free_slot = i;
    }
}

static inline void table_place(gc_map_table *t, uint32_t slot, uint64_t key, uint32_t value)
{
    if (t->keys[slot] == MAP_TOMBSTONE)
        t->tombstones--;
    t->keys[slot] = key;
    t->values[slot] = value;
    t->used++;
}

static inline bool put_fits(const gc_map *m)
{
    return ((uint64_t)m->count + m->t.tombstones + 1) * 2 <= m->t.capacity;
}

/* A put while keys move, into an empty map, or one that must grow the table. */
static gc_result put_slow(gc_map *m, uint64_t key, uint32_t value, uint32_t h)
{
    gc_map_table *t = &m->t;
    uint32_t i, slot = MAP_NONE;
    if (m->old.keys)
        migrate(m, put_budget(m));
    if (t->capacity && (i = table_probe(t, key, h, &slot)) != MAP_NONE) {
        t->values[i] = value;
        return GC_OK;
    }
    if ((i = old_find(m, key, h)) != MAP_NONE) { /* an update cannot fail */
        m->old.values[i] = value;
        return GC_OK;
    }
    if (put_fits(m)) {
        table_place(t, slot, key, value);
    } else {
        uint64_t cap = grown_capacity(m);
        if (cap > MAP_MAX_CAPACITY)
            return GC_E_NOMEM;
        gc_result r = map_resize(m, (uint32_t)cap);
        if (r != GC_OK)
            return r;
        table_insert(t, key, value, h);
    }
    m->count++;
    return GC_OK;
}

/* The usual put (no keys moving, room left) calls nothing: one probe finds the key or where
 * it goes. */
gc_result gc_map_put(gc_map *m, uint64_t key, uint32_t value)
{
    GC_ASSERT(key_used(key));
    gc_map_table *t = &m->t;
    uint32_t h = map_hash(key), slot = MAP_NONE;
    if (m->old.keys || t->capacity == 0)
        return put_slow(m, key, value, h);
    uint32_t i = table_probe(t, key, h, &slot);
    if (i != MAP_NONE) {
        t->values[i] = value;
        return GC_OK;
    }
    if (!put_fits(m))
        return put_slow(m, key, value, h);
    table_place(t, slot, key, value);
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
    if (m->old.keys && slots > 0)
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
    const gc_map *m = it->m;
    if (it->table == &m->t) {
        while (it->slot < m->t.capacity) {
            uint32_t i = it->slot++;
            if (key_used(m->t.keys[i])) {
                *out_key = m->t.keys[i];
                *out_value = m->t.values[i];
                return true;
            }
        }
        it->table = m->old.keys ? &m->old : NULL;
        it->slot = m->moved; /* old's slots not moved yet, counted from start */
    }
    if (it->table == &m->old) {
        uint32_t mask = m->old.capacity - 1;
        while (it->slot < m->old.capacity) {
            uint32_t i = (m->start + it->slot++) & mask;
            if (key_used(m->old.keys[i])) {
                *out_key = m->old.keys[i];
                *out_value = m->old.values[i];
                return true;
            }
        }
        it->table = NULL;
    }
    return false;
}

/* Counts the keys of t's slots [from, from + n) (cyclically from `first`) and checks that
 * each is reachable from its home slot (no empty slot between them) and, with `other`, that
 * it is not in other too. */
static const char *table_verify(const gc_map_table *t, uint32_t first, uint32_t n,
                                const gc_map *other, uint32_t *out_used,
                                uint32_t *out_tombstones)
{
    uint32_t used = 0, tombstones = 0, mask = t->capacity - 1;
    for (uint32_t j = 0; j < n; j++) {
        uint32_t i = (first + j) & mask;
        uint64_t k = t->keys[i];
        if (k == MAP_TOMBSTONE)
            tombstones++;
        if (!key_used(k))
            continue;
        used++;
        if (table_find(t, k, map_hash(k)) != i)
            return "a key cannot be found from its home slot";
        if (other && old_find(other, k, map_hash(k)) != MAP_NONE)
            return "a key is in both tables";
    }
    *out_used = used;
    *out_tombstones = tombstones;
    return NULL;
}

const char *gc_map_verify(const gc_map *m)
{
    uint32_t used, tombstones, old_used = 0, old_tombstones = 0;
    const char *why = table_verify(&m->t, 0, m->t.capacity, m, &used, &tombstones);
    if (why)
        return why;
    if (used != m->t.used || tombstones != m->t.tombstones)
        return "the table's counts differ from its slots";
    if (m->t.capacity & (m->t.capacity - 1))
        return "the table's capacity is not a power of two";
    if (m->old.keys) {
        uint32_t mask = m->old.capacity - 1;
        if (m->moved >= m->old.capacity)
            return "an old table wholly moved is kept";
        if (m->old.keys[m->start] != MAP_EMPTY)
            return "the old table's moving did not start at an empty slot";
        if (m->moved > 0 && m->old.keys[(m->start + m->moved) & mask] != MAP_EMPTY &&
            m->old.keys[(m->start + m->moved - 1) & mask] != MAP_EMPTY)
            return "the old table's moved part ends inside a run";
        why = table_verify(&m->old, m->start + m->moved, m->old.capacity - m->moved, NULL,
                           &old_used, &old_tombstones);
        if (why)
            return why;
        if (old_used != m->old.used)
            return "the old table's count differs from its slots";
        if (old_used == 0)
            return "an empty old table is kept";
        for (uint32_t j = m->moved; j < m->old.capacity; j++) {
            uint64_t k = m->old.keys[(m->start + j) & mask];
            if (key_used(k) && !old_may_hold(m, map_hash(k)))
                return "a key of the old table has its home in the moved part";
        }
    } else if (m->old.capacity || m->old.used || m->start || m->moved) {
        return "a map without an old table keeps its bookkeeping";
    }
    if ((uint64_t)used + old_used != m->count)
        return "the map's count differs from its tables' keys";
    if (((uint64_t)m->count + m->t.tombstones) * 2 > m->t.capacity)
        return "the table is more than half full";
    return NULL;
}
