/*
 * gc_gather.c - gathering unreachable objects (UE GatherUnreachableObjects).
 *
 * On entry marking is complete: every object that is neither marked nor permanent is garbage.
 * Each call walks the array from where the last one stopped, flags such objects UNREACHABLE
 * and appends them to heap->unreachable (those the begin/finish_destroy passes must visit) or
 * heap->unreachable_plain (those that only need freeing), counting them per slab so that a
 * slab holding nothing else goes back whole; it returns true once the whole array is walked.
 * Objects created since marking finished are born marked, so they are never gathered.
 */
#include "gc_internal.h"

bool gc_gather_run(gc_heap *heap, double deadline)
{
    GC_ASSERT(heap->mark_done_pending_gather); /* marking is complete */
    GC_ASSERT(!atomic_load(&heap->barrier_active));
    uint32_t n = gc_high_water(heap);
    uint32_t mark_value = heap->mark_value;
    uint32_t until_check = GC_TIME_CHECK_INTERVAL * 16;
    while (heap->gather_cursor < n) {
        gc_header *h = gc_object_at(heap, (uint32_t)heap->gather_cursor++);
        gc_work_add(&heap->work_done, 1);
        if (h) {
            uint32_t f = gc_flags(h);
            if (f & GC_F_GARBAGE_MARK) {
                /* A garbage object an immutable reference kept: a survivor like any other
                 * from here on, its mark in the table (see gc_try_mark). */
                gc_mark_loc loc;
                if (gc_mark_loc_of(heap, h, &loc))
                    (void)gc_mark_bit_set(loc, mark_value);
                atomic_fetch_and_explicit(&h->flags, ~(uint32_t)GC_F_GARBAGE_MARK,
                                          memory_order_relaxed);
            } else if (!(f & (GC_F_PERMANENT | GC_F_UNREACHABLE)) &&
                       !gc_is_marked(heap, mark_value, h)) {
                if (f & GC_F_CLUSTER_ROOT) /* an unreachable cluster: members are too */
                    gc_cluster_dissolve(heap, gc_cluster_id_of(heap, h));
                gc_flags_set(h, GC_F_UNREACHABLE);
                gc_ptr_vec_push_reserved(gc_object_needs_destroy_passes(heap, h)
                                             ? &heap->unreachable
                                             : &heap->unreachable_plain,
                                         h); /* room: see gc_mark_flip */
                if (gc_in_region(heap, h))
                    heap->slab_dying[gc_slab_index(heap, h)]++;
            }
        }
        if (deadline > 0 && --until_check == 0) {
            if (gc_past(heap, deadline))
                return heap->gather_cursor >= n;
            until_check = GC_TIME_CHECK_INTERVAL * 16;
        }
    }
    return true;
}
