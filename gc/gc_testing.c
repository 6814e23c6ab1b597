/*
 * gc_testing.c - test hooks (see gc_testing.h).
 */
#include "gc_internal.h"
#include "gc_testing.h"

#include <string.h>

/* Parallel markers read the clock from several threads. */
static uv_mutex_t fake_clock_mutex;
static uv_once_t fake_clock_once = UV_ONCE_INIT;
static void fake_clock_init(void)
{
    uv_mutex_init(&fake_clock_mutex);
}

_Static_assert(GC_TESTING_WORK_UNIT == GC_WORK_UNIT, "one unit of work, as the loops count it");

uint64_t gc_testing_work_done(const gc_heap *heap)
{
    uint64_t n = atomic_load_explicit(&((gc_heap *)heap)->work_done, memory_order_relaxed);
    for (uint32_t i = 0; i < GC_MAX_WORKERS; i++)
        if (heap->workers[i])
            n += atomic_load_explicit(&heap->workers[i]->work_done, memory_order_relaxed);
    return n;
}

double gc_work_clock_read(void *userdata)
{
    const gc_work_clock *c = userdata;
    if (!c->heap)
        return c->base;
    return c->base + (double)gc_testing_work_done(c->heap) * c->unit_seconds / GC_WORK_UNIT;
}

double gc_fake_clock_read(void *userdata)
{
    gc_fake_clock *c = userdata;
    uv_once(&fake_clock_once, fake_clock_init);
    uv_mutex_lock(&fake_clock_mutex);
    double t = c->now;
    c->now += c->step_per_read;
    uv_mutex_unlock(&fake_clock_mutex);
    return t;
}

const char *gc_testing_check(gc_heap *heap)
{
    uint32_t n = gc_high_water(heap), live = 0, free_items = 0, pinned = 0;
    for (uint32_t i = 0; i < n; i++) {
        gc_header *h = gc_object_at(heap, i);
        if (!h) {
            free_items++;
            continue;
        }
        live++;
        uint32_t f = gc_flags(h);
        if (h->index != i)
            return "an object's header index differs from its slot";
        if (!heap->classes[h->class_id])
            return "an object's class id names no class";
        if ((f & GC_F_PINNED) != 0) {
            pinned++;
            if (!gc_map_get(&heap->pins, (uint64_t)i + 1, NULL))
                return "an object flagged pinned has no pin entry";
        }
        if (heap->phase == GC_PHASE_IDLE &&
            (f & (GC_F_UNREACHABLE | GC_F_BEGIN_DESTROYED | GC_F_FINISH_DESTROYED)))
            return "an object is half-destroyed while the collector is idle";
        if ((f & GC_F_ROOT) && (f & GC_F_GARBAGE))
            return "an object is both rooted and garbage";
        if (gc_in_region(heap, h)) {
            uint32_t si = gc_slab_index(heap, h);
            uint32_t slot = gc_slab_slot(heap, si, h);
            const gc_slab_meta *m = &heap->slab_meta[si];
            if (gc_special_bit_of(heap, h) != ((f & GC_F_SPECIAL) != 0))
                return "an object's special bit disagrees with its flags";
            if (heap->region + ((size_t)si << GC_SLAB_SHIFT) + (size_t)slot * m->object_size !=
                    (char *)h || slot >= m->capacity)
                return "an object does not sit on a slot of its slab";
        }
        if (f & GC_F_NAMED) {
            uint32_t e;
            if (!gc_map_get(&heap->names_by_index, (uint64_t)i + 1, &e) ||
                heap->name_entries[e].index != i)
                return "a named object has no name entry";
        }
    }
    if (live != gc_object_count(heap))
        return "the live count differs from the objects in the array";
    if (free_items != heap->free_count)
        return "the free list length differs from the free slots";
    if (pinned != heap->pins.count)
        return "the pin table has entries for objects not flagged pinned";
    uint32_t walked = 0;
    for (uint32_t i = heap->free_head; i != GC_INDEX_NONE;
         i = atomic_load(gc_serial_slot(heap, i))) {
        if (i >= n || gc_object_at(heap, i) || ++walked > heap->free_count)
            return "the free list is corrupt";
    }
    if (walked != heap->free_count)
        return "the free list is shorter than its count";
    return NULL;
}

bool gc_testing_gc_is_waiting(gc_heap *heap)
{
    uv_mutex_lock(&heap->lock_mutex);
    bool waiting = heap->gc_waiting;
    uv_mutex_unlock(&heap->lock_mutex);
    return waiting;
}

const char *gc_testing_phase(const gc_heap *heap)
{
    static const char *names[] = { "idle", "begin_mark", "mark", "gather", "begin_destroy",
                                   "finish_destroy", "free", "release" };
    return names[heap->phase];
}

uint32_t gc_testing_free_count(const gc_heap *heap)
{
    return heap->free_count;
}

uint32_t gc_testing_high_water(const gc_heap *heap)
{
    return gc_high_water(heap);
}

bool gc_testing_is_marked(const gc_heap *heap, const void *obj)
{
    return gc_is_marked(heap, heap->mark_value, gc_hdr(obj));
}

const void *gc_testing_item_address(const gc_heap *heap, const void *obj)
{
    return gc_object_slot(heap, gc_hdr(obj)->index);
}

void gc_testing_force_flag(gc_heap *heap, void *obj, const char *flag, bool on)
{
    uint32_t bit = strcmp(flag, "root") == 0 ? GC_F_ROOT
                 : strcmp(flag, "garbage") == 0 ? GC_F_GARBAGE
                 : strcmp(flag, "cluster_root") == 0 ? GC_F_CLUSTER_ROOT
                 : strcmp(flag, "in_cluster") == 0 ? GC_F_IN_CLUSTER : 0;
    if (on)
        gc_flags_set(gc_hdr(obj), bit);
    else
        gc_flags_clear(gc_hdr(obj), bit);
    gc_special_sync(heap, gc_hdr(obj));
}

void gc_testing_fail_allocation(long nth)
{
    atomic_store(&gc_alloc_failure_countdown, nth);
}

void gc_testing_hold_marker_threads(gc_heap *heap, bool held)
{
    heap->marker_threads_held = held;
}

uint32_t gc_testing_move_marking_work(gc_heap *heap, uint32_t from, uint32_t to, uint32_t n)
{
    if (from >= heap->mark_workers || to >= heap->mark_workers || from == to)
        return 0;
    gc_collector *src = heap->workers[from], *dst = heap->workers[to];
    uint32_t moved = 0;
    while (moved < n && src->pushed_count > 0) {
        gc_worker_push(dst, src->pushed[--src->pushed_count]);
        moved++;
    }
    return moved;
}

void gc_testing_helper_rates(gc_heap *heap, double alone_rate, double helped_rate)
{
    heap->helpers = (gc_helper_record){ 0 };
    if (alone_rate > 0)
        heap->helpers.alone =
            (gc_helper_rates){ .last = { alone_rate, alone_rate }, .count = 2, .next = 2 };
    if (helped_rate > 0)
        heap->helpers.helped =
            (gc_helper_rates){ .last = { helped_rate, helped_rate }, .count = 2, .next = 2 };
}

uint64_t gc_testing_blocks_allocated(const gc_heap *heap)
{
    return atomic_load_explicit(&((gc_heap *)heap)->blocks_allocated, memory_order_relaxed);
}
