/*
 * gc_util.c - small containers the collector's side tables are built from.
 *
 * gc_map is an open-addressing table from 64-bit keys to 32-bit values with linear probing
 * and tombstones; it grows at 50% load so probes stay short. gc_ptr_vec, gc_u32_vec and the
 * public reference arrays are growable arrays, all grown by gc_grow. Nothing allocates on
 * lookup; allocation failure is reported, never fatal.
 */
#include "gc_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef GC_CHECKS
void gc_assert_failed(const char *cond, const char *file, int line)
{
    fprintf(stderr, "%s:%d: collector invariant broken: %s\n", file, line, cond);
    abort();
}
#endif

#define MAP_TOMBSTONE UINT64_MAX

static inline uint32_t map_hash(uint64_t key)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return (uint32_t)key;
}

void gc_map_init(gc_map *m)
{
    memset(m, 0, sizeof *m);
}

void gc_map_free(gc_map *m)
{
    free(m->keys);
    free(m->values);
    gc_map_init(m);
}

static gc_result map_resize(gc_map *m, uint32_t capacity)
{
    uint64_t *keys = gc_calloc(capacity, sizeof *keys);
    uint32_t *values = gc_malloc((size_t)capacity * sizeof *values);
    if (!keys || !values) {
        free(keys);
        free(values);
        return GC_E_NOMEM;
    }
    uint32_t mask = capacity - 1;
    for (uint32_t j = 0; j < m->capacity; j++) {
        if (!gc_map_slot_used(m, j))
            continue;
        uint32_t i = map_hash(m->keys[j]) & mask;
        while (keys[i] != 0)
            i = (i + 1) & mask;
        keys[i] = m->keys[j];
        values[i] = m->values[j];
    }
    free(m->keys);
    free(m->values);
    m->keys = keys;
    m->values = values;
    m->capacity = capacity;
    m->tombstones = 0;
    return GC_OK;
}

/* The slot holding key, or UINT32_MAX. */
static uint32_t map_find(const gc_map *m, uint64_t key)
{
    if (m->capacity == 0)
        return UINT32_MAX;
    uint32_t mask = m->capacity - 1;
    for (uint32_t i = map_hash(key) & mask;; i = (i + 1) & mask) {
        if (m->keys[i] == key)
            return i;
        if (m->keys[i] == 0)
            return UINT32_MAX;
    }
}

bool gc_map_update(gc_map *m, uint64_t key, uint32_t value)
{
    uint32_t i = map_find(m, key);
    if (i == UINT32_MAX)
        return false;
    m->values[i] = value;
    return true;
}

bool gc_map_get(const gc_map *m, uint64_t key, uint32_t *out_value)
{
    uint32_t i = map_find(m, key);
    if (i == UINT32_MAX)
        return false;
    if (out_value)
        *out_value = m->values[i];
    return true;
}

void gc_map_shrink(gc_map *m)
{
    uint32_t cap = 16;

    if (m->capacity <= 1024 || (uint64_t)m->count * 8 >= m->capacity)
        return;
    while ((m->count + 1) * 4 > cap)
        cap *= 2;
    (void)map_resize(m, cap); /* out of memory: the table simply stays as large */
}

gc_result gc_map_put(gc_map *m, uint64_t key, uint32_t value)
{
    /* An update never grows the table, so it cannot fail. */
    if (gc_map_update(m, key, value))
        return GC_OK;
    if ((m->count + m->tombstones + 1) * 2 > m->capacity) {
        uint32_t cap = m->capacity ? m->capacity : 16;
        while ((m->count + 1) * 2 > cap)
            cap *= 2;
        gc_result r = map_resize(m, cap); /* same size just sweeps tombstones */
        if (r != GC_OK)
            return r;
    }
    uint32_t mask = m->capacity - 1;
    uint32_t i = map_hash(key) & mask;
    while (m->keys[i] != 0 && m->keys[i] != MAP_TOMBSTONE)
        i = (i + 1) & mask;
    if (m->keys[i] == MAP_TOMBSTONE)
        m->tombstones--;
    m->keys[i] = key;
    m->values[i] = value;
    m->count++;
    return GC_OK;
}

bool gc_map_remove(gc_map *m, uint64_t key)
{
    uint32_t i = map_find(m, key);
    if (i == UINT32_MAX)
        return false;
    m->keys[i] = MAP_TOMBSTONE;
    m->count--;
    m->tombstones++;
    return true;
}

void *gc_grow(void *data, size_t elem_size, uint32_t *capacity, uint32_t first)
{
    uint32_t cap = *capacity ? *capacity * 2 : first;
    if (cap <= *capacity)
        return NULL; /* past UINT32_MAX elements */
    void *grown = gc_realloc(data, (size_t)cap * elem_size);
    if (grown)
        *capacity = cap;
    return grown;
}

gc_result gc_ptr_vec_push(gc_ptr_vec *v, void *p)
{
    if (v->count == v->capacity) {
        void **data = gc_grow(v->data, sizeof *data, &v->capacity, 64);
        if (!data)
            return GC_E_NOMEM;
        v->data = data;
    }
    v->data[v->count++] = p;
    return GC_OK;
}

gc_result gc_ptr_vec_reserve(gc_ptr_vec *v, size_t n)
{
    if (n <= v->capacity)
        return GC_OK;
    if (n > UINT32_MAX)
        return GC_E_NOMEM;
    void **data;
    if (v->count == 0) { /* nothing to copy: untouched pages of a fresh block cost nothing */
        data = gc_malloc(n * sizeof *data);
        if (data)
            free(v->data);
    } else {
        data = gc_realloc(v->data, n * sizeof *data);
    }
    if (!data)
        return GC_E_NOMEM;
    v->data = data;
    v->capacity = (uint32_t)n;
    return GC_OK;
}

void gc_ptr_vec_push_reserved(gc_ptr_vec *v, void *p)
{
    GC_ASSERT(v->count < v->capacity);
    v->data[v->count++] = p;
}

void gc_pages_discard(void *p, size_t n)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = ((uintptr_t)p + page - 1) & ~(page - 1);
    uintptr_t end = ((uintptr_t)p + n) & ~(page - 1);
    if (end > start)
        madvise((void *)start, end - start, MADV_DONTNEED);
}

void gc_ptr_vec_free(gc_ptr_vec *v)
{
    free(v->data);
    memset(v, 0, sizeof *v);
}

gc_result gc_ref_array_push(gc_ref_array *a, void *obj)
{
    if (!a)
        return GC_E_NULL;
    if (a->count == a->capacity) {
        if (a->capacity > UINT32_MAX / 2)
            return GC_E_LIMIT;
        void **data = gc_grow(a->data, sizeof *data, &a->capacity, 8);
        if (!data)
            return GC_E_NOMEM;
        a->data = data;
    }
    a->data[a->count++] = obj;
    return GC_OK;
}

void gc_ref_array_free(gc_ref_array *a)
{
    if (!a)
        return;
    free(a->data);
    memset(a, 0, sizeof *a);
}

gc_result gc_struct_array_push(gc_struct_array *a, size_t elem_size, void **out_elem)
{
    if (!a || !out_elem)
        return GC_E_NULL;
    if (elem_size == 0)
        return GC_E_INVALID;
    if (a->count == a->capacity) {
        if (a->capacity > UINT32_MAX / 2)
            return GC_E_LIMIT;
        void *data = gc_grow(a->data, elem_size, &a->capacity, 4);
        if (!data)
            return GC_E_NOMEM;
        a->data = data;
    }
    void *elem = (char *)a->data + (size_t)a->count * elem_size;
    memset(elem, 0, elem_size);
    a->count++;
    *out_elem = elem;
    return GC_OK;
}

void gc_struct_array_free(gc_struct_array *a)
{
    if (!a)
        return;
    free(a->data);
    memset(a, 0, sizeof *a);
}

gc_result gc_u32_vec_push(gc_u32_vec *v, uint32_t x)
{
    if (v->count == v->capacity) {
        uint32_t *data = gc_grow(v->data, sizeof *data, &v->capacity, 8);
        if (!data)
            return GC_E_NOMEM;
        v->data = data;
    }
    v->data[v->count++] = x;
    return GC_OK;
}

bool gc_u32_vec_remove(gc_u32_vec *v, uint32_t x)
{
    for (uint32_t i = 0; i < v->count; i++) {
        if (v->data[i] == x) {
            v->data[i] = v->data[--v->count];
            return true;
        }
    }
    return false;
}

void gc_u32_vec_free(gc_u32_vec *v)
{
    free(v->data);
    memset(v, 0, sizeof *v);
}
