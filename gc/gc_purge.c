/*
 * gc_purge.c - the destroy pipeline (UE IncrementalPurgeGarbage / IncrementalDestroyGarbage).
 *
 * On entry every gathered object is flagged UNREACHABLE and listed: in heap->unreachable if
 * it has destroy hooks, a name or is a class, else in heap->unreachable_plain (most objects:
 * the first two steps have nothing to do for them, so they never visit them). Three steps
 * follow, each resumable at heap->purge_cursor and each returning true when it finished:
 *   begin_destroy   take the object out of the name hash and call its begin_destroy hook;
 *   finish_destroy  call finish_destroy on objects whose is_ready_for_finish_destroy says
 *                   yes; the others wait on heap->pending_finish and are asked again;
 *   free            only when every object has finished: destructors, memory, indices
 *                   (plain objects in batches, one lock each);
 *   release         memory the purge emptied goes back to the system, beyond reserves:
 *                   empty slabs, empty chunks' slots, the collection's big lists, shrunk
 *                   tables; each a piece at a time (heap->release_part says which).
 * Destructors run after all finish_destroy calls because one object's finish_destroy may
 * still use another unreachable object.
 */
#include "gc_internal.h"

#include <sched.h>
#include <stdlib.h>

static void purge_step_done(gc_heap *heap)
{
    heap->purge_cursor = 0;
}

bool gc_purge_begin_destroy(gc_heap *heap, double deadline)
{
    /* On entry nothing is pending: marking and gathering are done, the last purge finished. */
    GC_ASSERT(heap->purge_cursor > 0 ||
              (!heap->mark_done_pending_gather && heap->pending_finish.count == 0));
    uint32_t until_check = GC_TIME_CHECK_INTERVAL;
    bool timed = deadline > 0 && heap->settings.incremental_begin_destroy;
    while (heap->purge_cursor < heap->unreachable.count) {
        gc_header *h = heap->unreachable.data[heap->purge_cursor++];
        gc_object_unhash(heap, h);
        const gc_class *cls = gc_class_of(heap, h);
        if (cls->hooks.begin_destroy && !(gc_flags(h) & GC_F_BEGIN_DESTROYED))
            cls->hooks.begin_destroy(gc_payload(h));
        gc_flags_set(h, GC_F_BEGIN_DESTROYED);
        gc_work_add(&heap->work_done, GC_WORK_OBJECT);
        if (timed && --until_check == 0) {
            if (gc_past(heap, deadline) && heap->purge_cursor < heap->unreachable.count)
                return false;
            until_check = GC_TIME_CHECK_INTERVAL;
        }
    }
    purge_step_done(heap);
    return true;
}

static bool try_finish(gc_heap *heap, gc_header *h)
{
    if (gc_flags(h) & GC_F_FINISH_DESTROYED)
        return true; /* heap destruction may pass an object twice; hooks run once */
    const gc_class *cls = gc_class_of(heap, h);
    if (cls->hooks.is_ready_for_finish_destroy &&
        !cls->hooks.is_ready_for_finish_destroy(gc_payload(h)))
        return false;
    if (cls->hooks.finish_destroy)
        cls->hooks.finish_destroy(gc_payload(h));
    gc_flags_set(h, GC_F_FINISH_DESTROYED);
    return true;
}

/* Asks every waiting object again; returns true when none is left waiting. */
static bool retry_pending(gc_heap *heap)
{
    gc_ptr_vec *p = &heap->pending_finish;
    size_t kept = 0;
    gc_work_add(&heap->work_done, p->count * GC_WORK_OBJECT); /* one unbroken pass */
    for (size_t i = 0; i < p->count; i++)
        if (!try_finish(heap, p->data[i]))
            p->data[kept++] = p->data[i];
    p->count = kept;
    heap->stats.pending_finish = (uint32_t)kept;
    return kept == 0;
}

bool gc_purge_finish_destroy(gc_heap *heap, double deadline)
{
    uint32_t until_check = GC_TIME_CHECK_INTERVAL;
    while (heap->purge_cursor < heap->unreachable.count) {
        gc_header *h = heap->unreachable.data[heap->purge_cursor++];
        if (!try_finish(heap, h))
            gc_ptr_vec_push_reserved(&heap->pending_finish, h); /* see gc_mark_flip */
        gc_work_add(&heap->work_done, GC_WORK_OBJECT);
        if (deadline > 0 && --until_check == 0) {
            if (gc_past(heap, deadline) && heap->purge_cursor < heap->unreachable.count)
                return false;
            until_check = GC_TIME_CHECK_INTERVAL;
        }
    }
    if (retry_pending(heap)) {
        heap->purge_stuck = false;
        purge_step_done(heap);
        return true;
    }
    if (deadline > 0)
        return false; /* ask again next slice */
    /* No time limit: wait for the stragglers, but not forever; if they never get ready the
     * purge stays pending rather than destroy something still in use. */
    double give_up = gc_now(heap) + heap->settings.finish_destroy_wait_limit;
    while (!retry_pending(heap)) {
        if (heap->purge_stuck || gc_now(heap) >= give_up) {
            heap->purge_stuck = true; /* gave up once: later calls only ask again */
            return false;
        }
        sched_yield();
    }
    heap->purge_stuck = false;
    purge_step_done(heap);
    return true;
}

static void free_one(gc_heap *heap, gc_header *h)
{
    const gc_class *cls = gc_class_of(heap, h);
    if (cls->hooks.destructor)
        cls->hooks.destructor(gc_payload(h));
    gc_object_free(heap, h);
    heap->stats.destroyed++;
    heap->stats.objects_destroyed++;
}

/* Frees objects that need nothing but their destructor and their memory: destructors run
 * first (without the lock: one may create objects), then one lock hands back every index
 * and slot of the batch. */
static void free_plain(gc_heap *heap, gc_header **objs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const gc_class *cls = gc_class_of(heap, objs[i]);
        if (cls->hooks.destructor)
            cls->hooks.destructor(gc_payload(objs[i]));
        if (gc_flags(objs[i]) & GC_F_PINNED)
            gc_pin_forget(heap, objs[i]);
    }
    uv_mutex_lock(&heap->alloc_lock);
    for (size_t i = 0; i < n; i++) {
        if (gc_flags(objs[i]) & GC_F_PERMANENT)
            heap->permanent_count--;
        gc_array_free_locked(heap, objs[i], gc_class_of(heap, objs[i])->size);
    }
    uv_mutex_unlock(&heap->alloc_lock);
    heap->stats.destroyed += (uint32_t)n;
    heap->stats.objects_destroyed += n;
}

bool gc_purge_free(gc_heap *heap, double deadline)
{
    GC_ASSERT(heap->pending_finish.count == 0); /* every object has finished */
    gc_ptr_vec *hooked = &heap->unreachable, *plain = &heap->unreachable_plain;
    uint32_t until_check = GC_TIME_CHECK_INTERVAL;
    while (heap->purge_cursor < hooked->count) {
        gc_header *h = hooked->data[heap->purge_cursor++];
        /* A class outlives its instances: their destructors are found through it. */
        if (gc_flags(h) & GC_F_IS_CLASS)
            gc_ptr_vec_push_reserved(&heap->purge_classes, h); /* room: see gc_mark_flip */
        else
            free_one(heap, h);
        gc_work_add(&heap->work_done, GC_WORK_OBJECT);
        if (deadline > 0 && --until_check == 0) {
            if (gc_past(heap, deadline))
                return false;
            until_check = GC_TIME_CHECK_INTERVAL;
        }
    }
    for (size_t i = heap->purge_cursor - hooked->count; i < plain->count;) {
        size_t n = plain->count - i < GC_TIME_CHECK_INTERVAL ? plain->count - i
                                                              : GC_TIME_CHECK_INTERVAL;
        free_plain(heap, (gc_header **)&plain->data[i], n);
        gc_work_add(&heap->work_done, n * GC_WORK_OBJECT);
        i += n;
        heap->purge_cursor += n;
        if (i < plain->count && gc_past(heap, deadline))
            return false;
    }
    gc_header *meta = NULL; /* the metaclass goes last: every class's hooks are in it */
    for (size_t i = 0; i < heap->purge_classes.count; i++) {
        gc_header *h = heap->purge_classes.data[i];
        if (gc_payload(h) == heap->class_class)
            meta = h;
        else
            free_one(heap, h);
    }
    if (meta)
        free_one(heap, meta);
    heap->purge_classes.count = 0;
    hooked->count = 0;
    plain->count = 0;
    purge_step_done(heap);
    return true;
}

/* Slots of a side table moved per step of the release, between looks at the clock. */
#define RELEASE_TABLE_STEP 4096u

/* Shrinks the side tables a purge left mostly empty, and finishes moving the keys of any
 * table still growing (gc_map.h), one table after the other, a step at a time. A table is
 * changed under the lock its other users take: the name and pin tables under table_lock,
 * cluster_of under cluster_lock (the barrier reads it; puts never run during a mark, as
 * gc_cluster_create refuses then, so no marker reads it now). Only cluster_of is not shrunk,
 * as before. */
static bool release_tables(gc_heap *heap, double deadline)
{
    struct {
        gc_map *map;
        uv_mutex_t *lock;
        bool shrink;
    } tables[] = {
        { &heap->names_by_index, &heap->table_lock, true },
        { &heap->names_by_path, &heap->table_lock, true },
        { &heap->pins, &heap->table_lock, true },
        { &heap->cluster_of, &heap->cluster_lock, false },
    };
    size_t count = sizeof tables / sizeof tables[0];
    while (heap->purge_cursor < count) {
        gc_map *m = tables[heap->purge_cursor].map;
        uv_mutex_t *lock = tables[heap->purge_cursor].lock;
        bool done;
        uv_mutex_lock(lock);
        if (tables[heap->purge_cursor].shrink && !gc_map_is_rehashing(m))
            gc_map_shrink(m);
        uv_mutex_unlock(lock);
        do {
            uint64_t before = gc_map_slots(m);
            uv_mutex_lock(lock);
            done = gc_map_rehash_step(m, RELEASE_TABLE_STEP);
            uv_mutex_unlock(lock);
            if (gc_map_slots(m) != before || !done)
                gc_work_add(&heap->work_done, RELEASE_TABLE_STEP); /* slots read */
        } while (!done && !gc_past(heap, deadline));
        if (!done)
            return false;
        heap->purge_cursor++;
    }
    return true;
}

enum { RELEASE_SLABS, RELEASE_CHUNKS, RELEASE_LISTS, RELEASE_TABLES, RELEASE_PARTS };

bool gc_release_run(gc_heap *heap, double deadline)
{
    while (heap->release_part < RELEASE_PARTS) {
        bool done = false;
        switch (heap->release_part) {
        case RELEASE_SLABS:
            done = gc_slabs_release(heap, deadline);
            break;
        case RELEASE_CHUNKS:
            done = gc_array_release(heap, &heap->purge_cursor, deadline);
            break;
        case RELEASE_LISTS:
            done = gc_collection_lists_release(heap, deadline);
            break;
        case RELEASE_TABLES:
            done = release_tables(heap, deadline);
            break;
        }
        if (!done)
            return false;
        heap->release_part++;
        purge_step_done(heap);
    }
    heap->release_part = RELEASE_SLABS;
    return true;
}
