/*
 * vec.h - the one growth helper for the server's dynamic arrays (Lua's luaM_growvector).
 *
 * Capacity doubles (from a first capacity, 16 unless said), so pushing n elements costs O(n)
 * amortised and never one allocation per element. On failure the array is unchanged.
 */
#ifndef REAP_VEC_H
#define REAP_VEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* Makes room for at least need elements of elem_size bytes in *data (capacity *cap, first
 * capacity first > 0, at most max elements). Returns false, with *data and *cap untouched,
 * when out of memory or past max. */
static inline bool vec_grow_at_most(void **data, size_t *cap, size_t need, size_t elem_size,
                                    size_t first, size_t max)
{
    size_t n = *cap ? *cap : first;
    void *p;

    if (need <= *cap)
        return true;
    while (n < need) {
        if (n > max / 2)
            return false;
        n *= 2;
    }
    if (n > max || n > SIZE_MAX / elem_size)
        return false;
    p = realloc(*data, n * elem_size);
    if (p == NULL)
        return false;
    *data = p;
    *cap = n;
    return true;
}

static inline bool vec_grow(void **data, size_t *cap, size_t need, size_t elem_size,
                            size_t first)
{
    return vec_grow_at_most(data, cap, need, elem_size, first, SIZE_MAX);
}

/* The same for a 32-bit capacity. */
static inline bool vec_reserve_from(void **data, uint32_t *cap, uint32_t need, size_t elem_size,
                                    uint32_t first)
{
    size_t c = *cap;

    if (!vec_grow_at_most(data, &c, need, elem_size, first, UINT32_MAX))
        return false;
    *cap = (uint32_t)c;
    return true;
}

static inline bool vec_reserve(void **data, uint32_t *cap, uint32_t need, size_t elem_size)
{
    return vec_reserve_from(data, cap, need, elem_size, 16);
}

/* For a typed pointer and a uint32_t capacity: VEC_RESERVE(arr, cap, need). */
#define VEC_RESERVE(ptr, cap, need) vec_reserve((void **)&(ptr), &(cap), (need), sizeof *(ptr))
#define VEC_RESERVE_FROM(ptr, cap, need, first)                                            \
    vec_reserve_from((void **)&(ptr), &(cap), (need), sizeof *(ptr), (first))
/* For a typed pointer and a size_t capacity. */
#define VEC_GROW(ptr, cap, need, first)                                                    \
    vec_grow((void **)&(ptr), &(cap), (need), sizeof *(ptr), (first))

#endif /* REAP_VEC_H */
