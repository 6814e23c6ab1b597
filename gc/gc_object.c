/*
 * gc_object.c - objects: creation and freeing, queries, flags and liveness.
 *
 * An object is born marked (see the marking invariant in gc_internal.h), so one created while
 * a collection is in flight survives it. Its name (gc_name.c) and its pins (root set,
 * reference counts, internal root flags: gc_pin.c) live in side tables, so anonymous,
 * unpinned objects pay nothing for them.
 */
#include "gc_internal.h"

#include <string.h>

bool gc_header_is_unreachable(const gc_heap *heap, const gc_header *h)
{
    uint32_t f = gc_flags(h);
    if (f & GC_F_UNREACHABLE)
        return true;
    return heap->mark_done_pending_gather && !(f & GC_F_PERMANENT) &&
           !gc_is_marked(heap, heap->mark_value, h);
}

/* Checks the common preconditions of operations on a live object. */
gc_result gc_check_live(const gc_heap *heap, const void *obj)
{
    if (!heap || !obj)
        return GC_E_NULL;
    if (gc_header_is_unreachable(heap, gc_hdr(obj)))
        return GC_E_DEAD;
    return GC_OK;
}

/* ---- creation and freeing ----------------------------------------------------------- */

gc_result gc_object_alloc(gc_heap *heap, gc_class *cls, uint32_t outer_index, const char *name,
                          uint32_t create_flags, gc_header **out_h)
{
    gc_header *h;
    gc_result r = gc_array_alloc(heap, cls->size, &h);
    if (r != GC_OK)
        return r;
    h->class_id = cls->id;
    h->outer_index = outer_index;
    uint32_t flags = heap->disregard_open ? GC_F_PERMANENT : 0;
    atomic_init(&h->flags, flags);
    gc_mark_born(heap, h);
    gc_special_sync(heap, h);
    if (name) {
        r = gc_name_claim(heap, h->index, outer_index, name);
        if (r != GC_OK) {
            gc_array_free(heap, h, cls->size);
            return r;
        }
        gc_flags_set(h, GC_F_NAMED);
    }
    if (flags & GC_F_PERMANENT) {
        uv_mutex_lock(&heap->alloc_lock);
        heap->permanent_count++;
        uv_mutex_unlock(&heap->alloc_lock);
    } else if (create_flags & GC_CREATE_ROOT) {
        gc_flags_set(h, GC_F_ROOT);
        if (gc_pin_update(heap, h, 0) != GC_OK) {
            gc_object_unhash(heap, h);
            gc_array_free(heap, h, cls->size);
            return GC_E_NOMEM;
        }
    }
    /* Marking in progress: the new object is born marked, but what it will reference must
     * still be found; stores into it go through the barrier like any other. */
    *out_h = h;
    return GC_OK;
}

gc_result gc_object_create(gc_heap *heap, gc_class *cls, void *outer, const char *name,
                           uint32_t create_flags, void **out_obj)
{
    if (!heap || !cls || !out_obj)
        return GC_E_NULL;
    if (!gc_object_is_valid(cls) || gc_header_is_unreachable(heap, gc_hdr(cls)))
        return GC_E_DEAD;
    if (name && (name[0] == '\0' || strchr(name, '.')))
        return GC_E_INVALID;
    uint32_t outer_index = GC_INDEX_NONE;
    if (outer) {
        if (gc_header_is_unreachable(heap, gc_hdr(outer)))
            return GC_E_DEAD;
        if (!gc_object_is_valid(outer))
            return gc_object_is_garbage(outer) ? GC_E_GARBAGE : GC_E_DEAD;
        outer_index = gc_hdr(outer)->index;
    }
    gc_header *h;
    gc_result r = gc_object_alloc(heap, cls, outer_index, name, create_flags, &h);
    if (r != GC_OK)
        return r;
    /* During an incremental mark the new object's class and outer are stores too. */
    gc_write_barrier(heap, cls);
    if (outer)
        gc_write_barrier(heap, outer);
    *out_obj = gc_payload(h);
    return GC_OK;
}

/* Frees an object's memory and index; its hooks have run. */
void gc_object_free(gc_heap *heap, gc_header *h)
{
    uint32_t f = gc_flags(h);
    size_t size = gc_class_of(heap, h)->size; /* before a class releases its own id */
    if (f & GC_F_NAMED)
        gc_object_unhash(heap, h);
    if (f & GC_F_PINNED)
        gc_pin_forget(heap, h);
    if (f & GC_F_IS_CLASS)
        gc_class_release(heap, gc_payload(h));
    if (f & GC_F_PERMANENT) {
        uv_mutex_lock(&heap->alloc_lock);
        heap->permanent_count--;
        uv_mutex_unlock(&heap->alloc_lock);
    }
    gc_array_free(heap, h, size);
}

bool gc_object_needs_destroy_passes(const gc_heap *heap, const gc_header *h)
{
    const gc_class_hooks *k = &gc_class_of(heap, h)->hooks;
    return (gc_flags(h) & (GC_F_NAMED | GC_F_IS_CLASS)) || k->begin_destroy ||
           k->finish_destroy || k->is_ready_for_finish_destroy;
}

/* ---- queries ------------------------------------------------------------------------ */

gc_class *gc_object_class(const gc_heap *heap, const void *obj)
{
    return heap && obj ? gc_class_of(heap, gc_hdr(obj)) : NULL;
}

bool gc_object_is_a(const gc_heap *heap, const void *obj, const gc_class *cls)
{
    return gc_class_is_child_of(gc_object_class(heap, obj), cls);
}

uint32_t gc_object_index(const void *obj)
{
    return obj ? gc_hdr(obj)->index : GC_INDEX_NONE;
}

void *gc_object_outer(gc_heap *heap, const void *obj)
{
    if (!heap || !obj || gc_hdr(obj)->outer_index == GC_INDEX_NONE)
        return NULL;
    gc_header *o = gc_object_at(heap, gc_hdr(obj)->outer_index);
    return o ? gc_payload(o) : NULL;
}

/* ---- flags and liveness -------------------------------------------------------------- */

bool gc_object_is_garbage(const void *obj)
{
    return obj && (gc_flags(gc_hdr(obj)) & GC_F_GARBAGE);
}

bool gc_object_is_unreachable(const void *obj)
{
    return obj && (gc_flags(gc_hdr(obj)) & GC_F_UNREACHABLE);
}

bool gc_object_is_permanent(const void *obj)
{
    return obj && (gc_flags(gc_hdr(obj)) & GC_F_PERMANENT);
}

bool gc_object_is_valid(const void *obj)
{
    return obj && !(gc_flags(gc_hdr(obj)) & (GC_F_GARBAGE | GC_F_UNREACHABLE));
}

bool gc_root_contains(const void *obj)
{
    return obj && (gc_flags(gc_hdr(obj)) & GC_F_ROOT);
}

uint32_t gc_object_flags(const void *obj)
{
    return obj ? GC_F_TO_OBJ(gc_flags(gc_hdr(obj))) : 0;
}

gc_result gc_object_set_flags(gc_heap *heap, void *obj, uint32_t flags)
{
    gc_result r = gc_check_live(heap, obj);
    if (r != GC_OK)
        return r;
    if (flags & ~GC_OBJ_FLAGS_MASK)
        return GC_E_INVALID;
    uint32_t before = gc_flags(gc_hdr(obj));
    gc_flags_set(gc_hdr(obj), GC_F_FROM_OBJ(flags));
    if ((flags & GC_OBJ_INTERNAL_ROOT_MASK) && gc_pin_update(heap, gc_hdr(obj), 0) != GC_OK) {
        gc_flags_clear(gc_hdr(obj), GC_F_FROM_OBJ(flags) & ~before);
        return GC_E_NOMEM;
    }
    /* A flag that keeps the object (internal root, or a keep flag of the mark in flight) is
     * a reason to be marked that the marker may already have passed. */
    gc_write_barrier(heap, obj);
    return GC_OK;
}

gc_result gc_object_clear_flags(gc_heap *heap, void *obj, uint32_t flags)
{
    gc_result r = gc_check_live(heap, obj);
    if (r != GC_OK)
        return r;
    if (flags & ~GC_OBJ_FLAGS_MASK)
        return GC_E_INVALID;
    gc_flags_clear(gc_hdr(obj), GC_F_FROM_OBJ(flags));
    if (flags & GC_OBJ_INTERNAL_ROOT_MASK)
        return gc_pin_update(heap, gc_hdr(obj), 0); /* a removal or an update: cannot fail */
    return GC_OK;
}

gc_result gc_object_mark_garbage(gc_heap *heap, void *obj)
{
    gc_result r = gc_check_live(heap, obj);
    if (r != GC_OK)
        return r;
    gc_header *h = gc_hdr(obj);
    uint32_t f = gc_flags(h);
    if (f & GC_F_PERMANENT)
        return GC_E_PERMANENT;
    if (f & GC_F_PINNED)
        return GC_E_ROOTED;
    if (f & GC_F_GARBAGE)
        return GC_OK;
    gc_cluster_on_member_garbage(heap, h);
    gc_flags_set(h, GC_F_GARBAGE);
    gc_special_sync(heap, h);
    return GC_OK;
}

void gc_object_foreach(gc_heap *heap, gc_object_visit_fn fn, void *userdata)
{
    if (!heap || !fn)
        return;
    uint32_t n = gc_high_water(heap);
    for (uint32_t i = 0; i < n; i++) {
        gc_header *h = gc_object_at(heap, i);
        if (!h || gc_header_is_unreachable(heap, h))
            continue;
        gc_write_barrier(heap, gc_payload(h)); /* fn may keep the pointer */
        fn(gc_payload(h), userdata);
    }
}

void gc_object_foreach_read(gc_heap *heap, gc_object_visit_fn fn, void *userdata)
{
    if (!heap || !fn)
        return;
    uint32_t n = gc_high_water(heap);
    for (uint32_t i = 0; i < n; i++) {
        gc_header *h = gc_object_at(heap, i);
        if (!h || gc_header_is_unreachable(heap, h))
            continue;
        fn(gc_payload(h), userdata);
    }
}
