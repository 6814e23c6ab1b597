/*
 * vec.h - the one growth helper for the server's dynamic arrays (Lua's luaM_growvector).
 *
 * Capacity doubles (from 16), so pushing n elements costs O(n) amortised and never one
 * allocation per element. On failure the array is unchanged.
 */
#ifndef REAP_VEC_H
#define REAP_VEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* Makes room for at least need elements of elem_size bytes in *data (capacity *cap).
 * Returns false, with *data and *cap untouched, when out of memory or on overflow. */
static inline bool vec_reserve(void **data, uint32_t *cap, uint32_t need, size_t elem_size)
{
    uint64_t n = *cap ? *cap : 16;
    void *p;

    if (need <= *cap)
        return true;
    while (n < need)
        n *= 2;
    if (n > UINT32_MAX || n > SIZE_MAX / elem_size)
        return false;
    p = realloc(*data, (size_t)n * elem_size);
    if (p == NULL)
        return false;
    *data = p;
    *cap = (uint32_t)n;
    return true;
}

/* vec_reserve for a typed pointer: VEC_RESERVE(arr, cap, need). */
#define VEC_RESERVE(ptr, cap, need) vec_reserve((void **)&(ptr), &(cap), (need), sizeof *(ptr))

#endif /* REAP_VEC_H */
