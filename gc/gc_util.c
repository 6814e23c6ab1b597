/*
 * gc_util.c - small containers the collector's side tables are built from.
 *
 * gc_ptr_vec, gc_u32_vec and the public reference arrays are growable arrays, all grown by
 * gc_grow (the hash tables are in gc_map.c). Allocation failure is reported, never fatal.
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
