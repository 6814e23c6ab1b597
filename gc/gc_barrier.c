/*
 * gc_barrier.c - the write barrier of incremental marking (UE's GC barrier).
 *
 * Active exactly while a reachability analysis is in flight (between gc_mark_begin and the
 * end of marking). On entry to the barrier a reference to target has just been stored; on
 * exit target is marked and, if this call marked it, queued for the next slice: to be scanned,
 * or, for a cluster (a member stands for its root), to have its cluster marked. The queues
 * were given room for every object before the mark began (gc_mark_flip), so the barrier
 * never allocates and cannot fail. An inactive barrier costs one relaxed load.
 */
#include "gc_internal.h"

#include <stdlib.h>

void gc_barrier_init(gc_heap *heap)
{
    atomic_init(&heap->barrier_active, false);
    uv_mutex_init(&heap->barrier_lock);
    uv_mutex_init(&heap->cluster_lock);
}

void gc_barrier_close(gc_heap *heap)
{
    uv_mutex_destroy(&heap->barrier_lock);
    uv_mutex_destroy(&heap->cluster_lock);
    gc_ptr_vec_free(&heap->barrier_queue);
    gc_ptr_vec_free(&heap->barrier_clusters);
}

void gc_barrier_set_active(gc_heap *heap, bool active)
{
    atomic_store_explicit(&heap->barrier_active, active, memory_order_release);
}

void gc_write_barrier(gc_heap *heap, void *target)
{
    if (!heap || !target || !atomic_load_explicit(&heap->barrier_active, memory_order_acquire))
        return;
    gc_header *h = gc_hdr(target);
    if (gc_flags(h) & (GC_F_IN_CLUSTER | GC_F_CLUSTER_ROOT)) {
        /* The game thread may be dissolving this cluster while a guarded thread stores. */
        uv_mutex_lock(&heap->cluster_lock);
        uint32_t f = gc_flags(h);
        if (f & GC_F_IN_CLUSTER)
            h = gc_cluster_root_of(heap, h);
        bool clustered = (gc_flags(h) & GC_F_CLUSTER_ROOT) != 0;
        bool won = gc_try_mark(heap, heap->mark_value, h);
        if (won) {
            /* A marked root's cluster must be marked by a worker before marking ends. */
            uv_mutex_lock(&heap->barrier_lock);
            gc_ptr_vec_push_reserved(clustered ? &heap->barrier_clusters : &heap->barrier_queue,
                                     h); /* see gc_mark_flip */
            uv_mutex_unlock(&heap->barrier_lock);
        }
        uv_mutex_unlock(&heap->cluster_lock);
        return;
    }
    uint32_t f = gc_flags(h);
    if ((f & GC_F_PERMANENT) || gc_is_marked(heap, heap->mark_value, h))
        return;
    if (!gc_try_mark(heap, heap->mark_value, h))
        return;
    uv_mutex_lock(&heap->barrier_lock);
    gc_ptr_vec_push_reserved(&heap->barrier_queue, h); /* see gc_mark_flip */
    uv_mutex_unlock(&heap->barrier_lock);
}

void gc_barrier_drain(gc_heap *heap, gc_collector *w)
{
    uv_mutex_lock(&heap->barrier_lock);
    for (size_t i = 0; i < heap->barrier_queue.count; i++)
        gc_worker_push(w, heap->barrier_queue.data[i]);
    heap->stats.barrier_objects += (uint32_t)heap->barrier_queue.count;
    heap->barrier_queue.count = 0;
    uv_mutex_unlock(&heap->barrier_lock);
}

bool gc_barrier_is_empty(gc_heap *heap)
{
    uv_mutex_lock(&heap->barrier_lock);
    bool empty = heap->barrier_queue.count == 0 && heap->barrier_clusters.count == 0;
    uv_mutex_unlock(&heap->barrier_lock);
    return empty;
}
