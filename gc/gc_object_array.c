/*
 * gc_object_array.c - the global object array (UE GUObjectArray).
 *
 * Items live in fixed-size chunks allocated on demand and never moved, so a pointer to an item
 * stays valid while the array grows and readers need no lock. An object's index and its memory
 * (gc_alloc.c) are taken and given back together, under one lock. Freed indices go on a free list
 * and are handed out again before the array grows (UE reuses them too); a serial number per
 * object tells a weak handle whether its slot still holds the same object. After a collection,
 * the object slots of a chunk left without objects are given back to the system: all NULL,
 * they read as NULL again from the fresh zero pages the kernel supplies.
 */
#include "gc_internal.h"

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static void chunk_tables_free(gc_heap *heap)
{
    free(heap->chunks);
    free(heap->chunk_live);
    free(heap->chunk_released);
    heap->chunks = NULL;
    heap->chunk_live = NULL;
    heap->chunk_released = NULL;
}

gc_result gc_array_init(gc_heap *heap, uint32_t max_objects)
{
    heap->max_objects = max_objects;
    heap->max_chunks = (max_objects + GC_CHUNK_ITEMS - 1) / GC_CHUNK_ITEMS;
    heap->chunks = gc_calloc(heap->max_chunks, sizeof *heap->chunks);
    heap->chunk_live = gc_calloc(heap->max_chunks, sizeof *heap->chunk_live);
    heap->chunk_released = gc_calloc(heap->max_chunks, sizeof *heap->chunk_released);
    if (!heap->chunks || !heap->chunk_live || !heap->chunk_released) {
        chunk_tables_free(heap);
        return GC_E_NOMEM;
    }
    atomic_init(&heap->high_water, 0);
    heap->free_head = GC_INDEX_NONE;
    heap->free_count = 0;
    atomic_init(&heap->live_count, 0);
    atomic_init(&heap->next_serial, 1);
    uv_mutex_init(&heap->alloc_lock);
    return GC_OK;
}

void gc_array_close(gc_heap *heap)
{
    for (uint32_t c = 0; c < heap->max_chunks; c++)
        free(heap->chunks[c]);
    chunk_tables_free(heap);
    uv_mutex_destroy(&heap->alloc_lock);
}

gc_result gc_array_alloc(gc_heap *heap, size_t payload_size, gc_header **out_h)
{
    uint32_t index;
    uv_mutex_lock(&heap->alloc_lock);
    if (atomic_load_explicit(&heap->live_count, memory_order_relaxed) >= heap->max_objects) {
        uv_mutex_unlock(&heap->alloc_lock);
        return GC_E_LIMIT;
    }
    gc_header *h = gc_slab_alloc(heap, payload_size);
    if (!h) {
        uv_mutex_unlock(&heap->alloc_lock);
        return GC_E_NOMEM;
    }
    if (heap->free_head != GC_INDEX_NONE) {
        index = heap->free_head;
        heap->free_head = atomic_load_explicit(gc_serial_slot(heap, index), memory_order_relaxed);
        heap->free_count--;
    } else {
        index = atomic_load_explicit(&heap->high_water, memory_order_relaxed);
        uint32_t chunk = index >> GC_CHUNK_SHIFT;
        if (!heap->chunks[chunk] &&
            !(heap->chunks[chunk] = gc_calloc(1, sizeof(gc_chunk)))) {
            gc_slab_free(heap, h, payload_size);
            uv_mutex_unlock(&heap->alloc_lock);
            return GC_E_NOMEM;
        }
        atomic_store_explicit(&heap->high_water, index + 1, memory_order_release);
    }
    h->index = index;
    heap->chunk_live[index >> GC_CHUNK_SHIFT]++;
    heap->chunk_released[index >> GC_CHUNK_SHIFT] = false;
    atomic_store_explicit(gc_serial_slot(heap, index), 0, memory_order_relaxed);
    atomic_store_explicit(gc_object_slot(heap, index), h, memory_order_release);
    atomic_fetch_add_explicit(&heap->live_count, 1, memory_order_relaxed);
    uv_mutex_unlock(&heap->alloc_lock);
    *out_h = h;
    return GC_OK;
}

void gc_array_free(gc_heap *heap, gc_header *h, size_t payload_size)
{
    uv_mutex_lock(&heap->alloc_lock);
    gc_array_free_locked(heap, h, payload_size);
    uv_mutex_unlock(&heap->alloc_lock);
}

void gc_array_free_locked(gc_heap *heap, gc_header *h, size_t payload_size)
{
    uint32_t index = h->index;
    heap->chunk_live[index >> GC_CHUNK_SHIFT]--;
    atomic_store_explicit(gc_object_slot(heap, index), NULL, memory_order_release);
    atomic_store_explicit(gc_serial_slot(heap, index), heap->free_head, memory_order_relaxed);
    heap->free_head = index;
    heap->free_count++;
    atomic_fetch_sub_explicit(&heap->live_count, 1, memory_order_relaxed);
    gc_slab_free(heap, h, payload_size);
}

/* The whole pages inside a chunk's objects[] array. */
static void chunk_object_pages(gc_chunk *c, char **out_start, size_t *out_len)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = ((uintptr_t)c->objects + page - 1) & ~(page - 1);
    uintptr_t end = (uintptr_t)(c->objects + GC_CHUNK_ITEMS) & ~(page - 1);
    *out_start = (char *)start;
    *out_len = end > start ? end - start : 0;
}

bool gc_array_release(gc_heap *heap, size_t *cursor, double deadline)
{
    while (*cursor < heap->max_chunks) {
        uint32_t c = (uint32_t)(*cursor)++;
        bool given = false;
        uv_mutex_lock(&heap->alloc_lock);
        if (heap->chunks[c] && heap->chunk_live[c] == 0 && !heap->chunk_released[c]) {
            char *start;
            size_t len;
            chunk_object_pages(heap->chunks[c], &start, &len);
            given = len > 0 && madvise(start, len, MADV_DONTNEED) == 0;
            heap->chunk_released[c] = given;
        }
        uv_mutex_unlock(&heap->alloc_lock);
        if (given) {
            gc_work_add(&heap->work_done, GC_WORK_UNIT);
            if (*cursor < heap->max_chunks && gc_past(heap, deadline))
                return false;
        }
    }
    return true;
}

size_t gc_array_committed_bytes(const gc_heap *heap)
{
    size_t bytes = 0;
    for (uint32_t c = 0; c < heap->max_chunks; c++) {
        if (!heap->chunks[c])
            continue;
        bytes += sizeof(gc_chunk);
        if (heap->chunk_released[c]) {
            char *start;
            size_t len;
            chunk_object_pages(heap->chunks[c], &start, &len);
            bytes -= len;
        }
    }
    return bytes;
}
