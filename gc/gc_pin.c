/*
 * gc_pin.c - what keeps an object alive from outside the object graph: the root set, reference
 * counts (and the strong handles built on them), internal root flags; and weak handles.
 *
 * Every object that is an initial root for one of those reasons has an entry in the pin
 * table (index -> reference count), which marking walks instead of the whole array. Weak
 * handles are (index, serial) pairs checked against the object array's serials.
 */
#include "gc_internal.h"

/* Keeps the pin table entry of h in step with its root flag, ref count and internal root
 * flags: present exactly when one of them holds. Fails (changing nothing) only when the table
 * cannot grow. */
gc_result gc_pin_update(gc_heap *heap, gc_header *h, int32_t ref_delta)
{
    uint64_t key = (uint64_t)h->index + 1;
    gc_result r = GC_OK;
    uv_mutex_lock(&heap->table_lock);
    uint32_t count = 0;
    bool present = gc_map_get(&heap->pins, key, &count);
    GC_ASSERT(ref_delta >= 0 || count >= (uint32_t)-ref_delta);
    count = (uint32_t)((int64_t)count + ref_delta);
    uint32_t f = gc_flags(h);
    bool needed = count > 0 || (f & GC_F_ROOT) ||
                  (f & GC_F_FROM_OBJ(GC_OBJ_INTERNAL_ROOT_MASK));
    if (!needed) {
        gc_map_remove(&heap->pins, key);
        gc_flags_clear(h, GC_F_PINNED);
    } else if (present) {
        gc_map_update(&heap->pins, key, count); /* in place: cannot fail */
    } else if ((r = gc_map_put(&heap->pins, key, count)) == GC_OK) {
        gc_flags_set(h, GC_F_PINNED);
    }
    uv_mutex_unlock(&heap->table_lock);
    return r;
}

void gc_pins_foreach(gc_heap *heap, void (*fn)(gc_header *h, const char *why, void *userdata),
                     void *userdata)
{
    uint32_t internal = GC_F_FROM_OBJ(GC_OBJ_INTERNAL_ROOT_MASK);
    uv_mutex_lock(&heap->table_lock);
    gc_map_iter it;
    uint64_t key;
    uint32_t count;
    for (gc_map_iter_init(&it, &heap->pins); gc_map_iter_next(&it, &key, &count);) {
        gc_header *h = gc_object_at(heap, (uint32_t)(key - 1));
        uint32_t f = gc_flags(h);
        if (f & GC_F_ROOT)
            fn(h, "root set", userdata);
        else if (count > 0)
            fn(h, "reference count", userdata);
        else if (f & internal)
            fn(h, "internal root flag", userdata);
    }
    uv_mutex_unlock(&heap->table_lock);
}

uint32_t gc_object_ref_count(gc_heap *heap, const void *obj)
{
    if (!heap || !obj || !(gc_flags(gc_hdr(obj)) & GC_F_PINNED))
        return 0;
    uint32_t count = 0;
    uv_mutex_lock(&heap->table_lock);
    gc_map_get(&heap->pins, (uint64_t)gc_hdr(obj)->index + 1, &count);
    uv_mutex_unlock(&heap->table_lock);
    return count;
}
/* Drops h's pin table entry; its memory is about to be freed. */
void gc_pin_forget(gc_heap *heap, gc_header *h)
{
    uv_mutex_lock(&heap->table_lock);
    gc_map_remove(&heap->pins, (uint64_t)h->index + 1);
    uv_mutex_unlock(&heap->table_lock);
}

gc_result gc_root_add(gc_heap *heap, void *obj)
{
    gc_result r = gc_check_live(heap, obj);
    if (r != GC_OK)
        return r;
    gc_header *h = gc_hdr(obj);
    if (gc_flags(h) & GC_F_GARBAGE)
        return GC_E_GARBAGE;
    if (gc_flags(h) & GC_F_ROOT)
        return GC_OK;
    gc_flags_set(h, GC_F_ROOT);
    if (!(gc_flags(h) & GC_F_PERMANENT) && gc_pin_update(heap, h, 0) != GC_OK) {
        gc_flags_clear(h, GC_F_ROOT);
        return GC_E_NOMEM;
    }
    gc_write_barrier(heap, obj);
    return GC_OK;
}

gc_result gc_root_remove(gc_heap *heap, void *obj)
{
    gc_result r = gc_check_live(heap, obj);
    if (r != GC_OK)
        return r;
    gc_header *h = gc_hdr(obj);
    if (!(gc_flags(h) & GC_F_ROOT))
        return GC_OK;
    gc_flags_clear(h, GC_F_ROOT);
    if (!(gc_flags(h) & GC_F_PERMANENT))
        return gc_pin_update(heap, h, 0); /* a removal or an update: cannot fail */
    return GC_OK;
}

gc_result gc_object_add_ref(gc_heap *heap, void *obj)
{
    gc_result r = gc_check_live(heap, obj);
    if (r != GC_OK)
        return r;
    gc_header *h = gc_hdr(obj);
    if (gc_flags(h) & GC_F_GARBAGE)
        return GC_E_GARBAGE;
    if (gc_flags(h) & GC_F_PERMANENT)
        return GC_OK; /* permanent objects need no count */
    gc_result pr = gc_pin_update(heap, h, +1);
    if (pr != GC_OK)
        return pr;
    gc_write_barrier(heap, obj);
    return GC_OK;
}

gc_result gc_object_release_ref(gc_heap *heap, void *obj)
{
    gc_result r = gc_check_live(heap, obj);
    if (r != GC_OK)
        return r;
    gc_header *h = gc_hdr(obj);
    if (gc_flags(h) & GC_F_PERMANENT)
        return GC_OK;
    if (gc_object_ref_count(heap, obj) == 0)
        return GC_E_INVALID;
    return gc_pin_update(heap, h, -1); /* a removal or an update: cannot fail */
}

gc_result gc_strong_set(gc_heap *heap, gc_strong *s, void *obj)
{
    if (!heap || !s)
        return GC_E_NULL;
    if (obj) {
        gc_result r = gc_object_add_ref(heap, obj);
        if (r != GC_OK)
            return r;
    }
    gc_strong_reset(heap, s);
    s->obj = obj;
    return GC_OK;
}

void gc_strong_reset(gc_heap *heap, gc_strong *s)
{
    if (!heap || !s || !s->obj)
        return;
    gc_object_release_ref(heap, s->obj);
    s->obj = NULL;
}

/* ---- weak handles ---------------------------------------------------------------------- */

gc_weak gc_weak_make(gc_heap *heap, const void *obj)
{
    gc_weak w = { 0, 0 };
    if (!heap || !obj)
        return w;
    const gc_header *h = gc_hdr(obj);
    _Atomic uint32_t *slot = gc_serial_slot(heap, h->index);
    uint32_t serial = atomic_load_explicit(slot, memory_order_acquire);
    while (serial == 0) {
        uint32_t fresh = atomic_fetch_add(&heap->next_serial, 1);
        if (fresh == 0)
            continue; /* 0 means "none issued"; skip it when the counter wraps */
        if (atomic_compare_exchange_strong(slot, &serial, fresh))
            serial = fresh;
    }
    w.index = h->index;
    w.serial = serial;
    return w;
}

static gc_header *weak_resolve(gc_heap *heap, gc_weak w)
{
    if (!heap || w.serial == 0 || w.index >= gc_high_water(heap))
        return NULL;
    gc_header *h = gc_object_at(heap, w.index);
    if (!h || atomic_load_explicit(gc_serial_slot(heap, w.index), memory_order_acquire) !=
                  w.serial)
        return NULL;
    return gc_header_is_unreachable(heap, h) ? NULL : h;
}

void *gc_weak_get_even_if_garbage(gc_heap *heap, gc_weak w)
{
    gc_header *h = weak_resolve(heap, w);
    if (!h)
        return NULL;
    /* Handing out a pointer during an incremental mark is a store the collector must see. */
    gc_write_barrier(heap, gc_payload(h));
    return gc_payload(h);
}

void *gc_weak_get(gc_heap *heap, gc_weak w)
{
    gc_header *h = weak_resolve(heap, w);
    if (!h || (gc_flags(h) & GC_F_GARBAGE))
        return NULL;
    gc_write_barrier(heap, gc_payload(h));
    return gc_payload(h);
}

bool gc_weak_is_stale(gc_heap *heap, gc_weak w)
{
    return w.serial != 0 && weak_resolve(heap, w) == NULL;
}
