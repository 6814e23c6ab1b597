/*
 * client_vec.h - the client's one growth helper for its dynamic arrays (the server has its
 * own, server/base/vec.h: the programs share no code but the protocol).
 *
 * The capacity doubles from first until need fits, so n pushes cost O(n) amortised. On
 * failure (out of memory, or past what a uint32_t capacity can count) the array is unchanged.
 */
#ifndef REAP_CLIENT_VEC_H
#define REAP_CLIENT_VEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static inline bool client_vec_reserve(void **data, uint32_t *cap, uint64_t need,
                                      size_t elem_size, uint32_t first)
{
    uint64_t n = *cap > 0 ? *cap : first;
    void *grown;

    if (need <= *cap)
        return true;
    while (n < need && n <= UINT32_MAX)
        n *= 2;
    if (n > UINT32_MAX || n > SIZE_MAX / elem_size ||
        (grown = realloc(*data, (size_t)n * elem_size)) == NULL)
        return false;
    *data = grown;
    *cap = (uint32_t)n;
    return true;
}

/* CLIENT_VEC_RESERVE(arr, cap, need, first) for a typed pointer. */
#define CLIENT_VEC_RESERVE(ptr, cap, need, first)                                          \
    client_vec_reserve((void **)&(ptr), &(cap), (need), sizeof *(ptr), (first))

#endif /* REAP_CLIENT_VEC_H */
