/*
 * gc_object.c - objects: creation, names and paths, flags, the root set, reference counts,
 * weak and strong handles.
 *
 * An object is born marked (see the marking invariant in gc_internal.h), so one created while
 * a collection is in flight survives it. Names live in a side table keyed both by object index
 * and by (outer, name), so anonymous objects pay nothing for them. Every object that is an
 * initial root for a reason other than keep flags (root set, positive reference count,
 * internal root flags) has an entry in the pin table, which marking walks instead of the
 * whole array.
 */
#include "gc_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- name table -------------------------------------------------------------------- */

#define NAME_NONE UINT32_MAX

static uint64_t path_key_n(uint32_t outer_index, const char *name, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ULL ^ outer_index;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)name[i]) * 0x100000001b3ULL;
    h ^= h >> 29;
    return h < 2 ? h + 2 : (h == UINT64_MAX ? h - 1 : h); /* 0 and ~0 are reserved */
}

static uint64_t path_key(uint32_t outer_index, const char *name)
{
    return path_key_n(outer_index, name, strlen(name));
}

/* Finds the entry for (outer, the len bytes at name); table_lock held. */
static uint32_t name_lookup_n(const gc_heap *heap, uint32_t outer_index, const char *name,
                              size_t len)
{
    uint32_t e;
    if (!gc_map_get(&heap->names_by_path, path_key_n(outer_index, name, len), &e))
        return NAME_NONE;
    for (; e != NAME_NONE; e = heap->name_entries[e].next_same_key) {
        const gc_name_entry *ne = &heap->name_entries[e];
        if (ne->outer_index == outer_index && strncmp(ne->name, name, len) == 0 &&
            ne->name[len] == '\0')
            return e;
    }
    return NAME_NONE;
}

static uint32_t name_lookup(const gc_heap *heap, uint32_t outer_index, const char *name)
{
    return name_lookup_n(heap, outer_index, name, strlen(name));
}

static void name_remove(gc_heap *heap, uint32_t e)
{
    gc_name_entry *ne = &heap->name_entries[e];
    uint32_t head;
    gc_map_get(&heap->names_by_path, ne->path_key, &head);
    if (head == e) {
        if (ne->next_same_key == NAME_NONE)
            gc_map_remove(&heap->names_by_path, ne->path_key);
        else
            GC_CHECKED(gc_map_update(&heap->names_by_path, ne->path_key, ne->next_same_key));
    } else {
        uint32_t p = head;
        while (heap->name_entries[p].next_same_key != e)
            p = heap->name_entries[p].next_same_key;
        heap->name_entries[p].next_same_key = ne->next_same_key;
    }
    gc_map_remove(&heap->names_by_index, (uint64_t)ne->index + 1);
    free(ne->name);
    ne->name = NULL;
    ne->index = heap->name_entry_free;
    heap->name_entry_free = e;
}

static gc_result name_add(gc_heap *heap, uint32_t index, uint32_t outer_index, const char *name)
{
    uint32_t e;
    bool reuse = heap->name_entry_free != NAME_NONE;
    if (reuse) {
        e = heap->name_entry_free;
    } else {
        if (heap->name_entry_count == heap->name_entry_capacity) {
            uint32_t cap = heap->name_entry_capacity ? heap->name_entry_capacity * 2 : 64;
            gc_name_entry *v = gc_realloc(heap->name_entries, cap * sizeof *v);
            if (!v)
                return GC_E_NOMEM;
            heap->name_entries = v;
            heap->name_entry_capacity = cap;
        }
        e = heap->name_entry_count;
    }
    char *copy = gc_strdup(name);
    if (!copy)
        return GC_E_NOMEM;
    uint64_t key = path_key(outer_index, name);
    uint32_t head = NAME_NONE;
    gc_map_get(&heap->names_by_path, key, &head);
    if (gc_map_put(&heap->names_by_path, key, e) != GC_OK ||
        gc_map_put(&heap->names_by_index, (uint64_t)index + 1, e) != GC_OK) {
        if (head == NAME_NONE)
            gc_map_remove(&heap->names_by_path, key);
        else
            gc_map_put(&heap->names_by_path, key, head);
        free(copy);
        return GC_E_NOMEM;
    }
    if (reuse)
        heap->name_entry_free = heap->name_entries[e].index;
    else
        heap->name_entry_count++;
    heap->name_entries[e] = (gc_name_entry){ copy, index, outer_index, key, head };
    return GC_OK;
}

bool gc_header_is_unreachable(const gc_heap *heap, const gc_header *h)
{
    uint32_t f = gc_flags(h);
    if (f & GC_F_UNREACHABLE)
        return true;
    return heap->mark_done_pending_gather && !(f & GC_F_PERMANENT) &&
           !gc_is_marked(heap, heap->mark_value, h);
}

static bool header_is_dying(const gc_heap *heap, const gc_header *h)
{
    return (gc_flags(h) & GC_F_GARBAGE) || gc_header_is_unreachable(heap, h);
}

void gc_object_unhash(gc_heap *heap, gc_header *h)
{
    if (!(gc_flags(h) & GC_F_NAMED))
        return;
    uv_mutex_lock(&heap->table_lock);
    uint32_t e;
    if (gc_map_get(&heap->names_by_index, (uint64_t)h->index + 1, &e))
        name_remove(heap, e);
    uv_mutex_unlock(&heap->table_lock);
    gc_flags_clear(h, GC_F_NAMED);
}

/* ---- creation and freeing ----------------------------------------------------------- */

static gc_result pin_update(gc_heap *heap, gc_header *h, int32_t ref_delta);

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
        uv_mutex_lock(&heap->table_lock);
        uint32_t e = name_lookup(heap, outer_index, name);
        if (e != NAME_NONE) {
            gc_header *other = gc_object_at(heap, heap->name_entries[e].index);
            if (other && header_is_dying(heap, other)) {
                name_remove(heap, e); /* a dying object gives its name up early */
                gc_flags_clear(other, GC_F_NAMED);
            } else {
                r = GC_E_EXISTS;
            }
        }
        if (r == GC_OK)
            r = name_add(heap, h->index, outer_index, name);
        uv_mutex_unlock(&heap->table_lock);
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
        if (pin_update(heap, h, 0) != GC_OK) {
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
    if (f & GC_F_PINNED) {
        uv_mutex_lock(&heap->table_lock);
        gc_map_remove(&heap->pins, (uint64_t)h->index + 1);
        uv_mutex_unlock(&heap->table_lock);
    }
    if (f & GC_F_IS_CLASS)
        gc_class_release(heap, gc_payload(h));
    if (f & GC_F_PERMANENT) {
        uv_mutex_lock(&heap->alloc_lock);
        heap->permanent_count--;
        uv_mutex_unlock(&heap->alloc_lock);
    }
    gc_array_free(heap, h, size);
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

const char *gc_object_name(gc_heap *heap, const void *obj)
{
    if (!heap || !obj)
        return NULL;
    if (gc_flags(gc_hdr(obj)) & GC_F_IS_CLASS)
        return ((const gc_class *)obj)->name;
    if (!(gc_flags(gc_hdr(obj)) & GC_F_NAMED))
        return NULL;
    const char *name = NULL;
    uint32_t e;
    uv_mutex_lock(&heap->table_lock);
    if (gc_map_get(&heap->names_by_index, (uint64_t)gc_hdr(obj)->index + 1, &e))
        name = heap->name_entries[e].name;
    uv_mutex_unlock(&heap->table_lock);
    return name;
}

size_t gc_object_path(gc_heap *heap, const void *obj, char *buf, size_t buf_size)
{
    if (!heap || !obj) {
        if (buf && buf_size)
            buf[0] = '\0';
        return 0;
    }
    size_t len = 0;
    void *outer = gc_object_outer(heap, obj);
    if (outer) {
        len = gc_object_path(heap, outer, buf, buf_size);
        if (len + 1 < buf_size)
            buf[len] = '.';
        len++;
    }
    const char *name = gc_object_name(heap, obj);
    char anon[64];
    if (!name) {
        const gc_class *cls = gc_object_class(heap, obj);
        snprintf(anon, sizeof anon, "%s#%u", cls ? cls->name : "?", gc_hdr(obj)->index);
        name = anon;
    }
    size_t n = strlen(name);
    if (buf && len < buf_size) {
        size_t room = buf_size - len - 1;
        memcpy(buf + len, name, n < room ? n : room);
        buf[len + (n < room ? n : room)] = '\0';
    } else if (buf && buf_size) {
        buf[buf_size - 1] = '\0';
    }
    return len + n;
}

void *gc_object_find(gc_heap *heap, const char *path)
{
    if (!heap || !path || !*path)
        return NULL;
    uint32_t outer = GC_INDEX_NONE;
    gc_header *found = NULL;
    const char *p = path;
    uv_mutex_lock(&heap->table_lock);
    while (*p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n == 0) {
            found = NULL;
            break;
        }
        uint32_t e = name_lookup_n(heap, outer, p, n);
        found = e == NAME_NONE ? NULL : gc_object_at(heap, heap->name_entries[e].index);
        if (!found)
            break;
        outer = found->index;
        p += n + (dot ? 1 : 0);
        if (dot && !*p) {
            found = NULL; /* trailing dot */
            break;
        }
    }
    uv_mutex_unlock(&heap->table_lock);
    if (!found || gc_header_is_unreachable(heap, found))
        return NULL;
    gc_write_barrier(heap, gc_payload(found)); /* handing out a pointer, as gc_weak_get */
    return gc_payload(found);
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

/* Checks the common preconditions of operations on a live object. */
static gc_result check_live(gc_heap *heap, const void *obj)
{
    if (!heap || !obj)
        return GC_E_NULL;
    if (gc_header_is_unreachable(heap, gc_hdr(obj)))
        return GC_E_DEAD;
    return GC_OK;
}

/* Keeps the pin table entry of h in step with its root flag, ref count and internal root
 * flags: present exactly when one of them holds. Fails (changing nothing) only when the table
 * cannot grow. */
static gc_result pin_update(gc_heap *heap, gc_header *h, int32_t ref_delta)
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
    for (uint32_t i = 0; i < heap->pins.capacity; i++) {
        if (!gc_map_slot_used(&heap->pins, i))
            continue;
        gc_header *h = gc_object_at(heap, (uint32_t)(heap->pins.keys[i] - 1));
        uint32_t f = gc_flags(h);
        if (f & GC_F_ROOT)
            fn(h, "root set", userdata);
        else if (heap->pins.values[i] > 0)
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

gc_result gc_object_set_flags(gc_heap *heap, void *obj, uint32_t flags)
{
    gc_result r = check_live(heap, obj);
    if (r != GC_OK)
        return r;
    if (flags & ~GC_OBJ_FLAGS_MASK)
        return GC_E_INVALID;
    uint32_t before = gc_flags(gc_hdr(obj));
    gc_flags_set(gc_hdr(obj), GC_F_FROM_OBJ(flags));
    if ((flags & GC_OBJ_INTERNAL_ROOT_MASK) && pin_update(heap, gc_hdr(obj), 0) != GC_OK) {
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
    gc_result r = check_live(heap, obj);
    if (r != GC_OK)
        return r;
    if (flags & ~GC_OBJ_FLAGS_MASK)
        return GC_E_INVALID;
    gc_flags_clear(gc_hdr(obj), GC_F_FROM_OBJ(flags));
    if (flags & GC_OBJ_INTERNAL_ROOT_MASK)
        return pin_update(heap, gc_hdr(obj), 0); /* a removal or an update: cannot fail */
    return GC_OK;
}

gc_result gc_object_mark_garbage(gc_heap *heap, void *obj)
{
    gc_result r = check_live(heap, obj);
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

gc_result gc_root_add(gc_heap *heap, void *obj)
{
    gc_result r = check_live(heap, obj);
    if (r != GC_OK)
        return r;
    gc_header *h = gc_hdr(obj);
    if (gc_flags(h) & GC_F_GARBAGE)
        return GC_E_GARBAGE;
    if (gc_flags(h) & GC_F_ROOT)
        return GC_OK;
    gc_flags_set(h, GC_F_ROOT);
    if (!(gc_flags(h) & GC_F_PERMANENT) && pin_update(heap, h, 0) != GC_OK) {
        gc_flags_clear(h, GC_F_ROOT);
        return GC_E_NOMEM;
    }
    gc_write_barrier(heap, obj);
    return GC_OK;
}

gc_result gc_root_remove(gc_heap *heap, void *obj)
{
    gc_result r = check_live(heap, obj);
    if (r != GC_OK)
        return r;
    gc_header *h = gc_hdr(obj);
    if (!(gc_flags(h) & GC_F_ROOT))
        return GC_OK;
    gc_flags_clear(h, GC_F_ROOT);
    if (!(gc_flags(h) & GC_F_PERMANENT))
        return pin_update(heap, h, 0); /* a removal or an update: cannot fail */
    return GC_OK;
}

gc_result gc_object_add_ref(gc_heap *heap, void *obj)
{
    gc_result r = check_live(heap, obj);
    if (r != GC_OK)
        return r;
    gc_header *h = gc_hdr(obj);
    if (gc_flags(h) & GC_F_GARBAGE)
        return GC_E_GARBAGE;
    if (gc_flags(h) & GC_F_PERMANENT)
        return GC_OK; /* permanent objects need no count */
    gc_result pr = pin_update(heap, h, +1);
    if (pr != GC_OK)
        return pr;
    gc_write_barrier(heap, obj);
    return GC_OK;
}

gc_result gc_object_release_ref(gc_heap *heap, void *obj)
{
    gc_result r = check_live(heap, obj);
    if (r != GC_OK)
        return r;
    gc_header *h = gc_hdr(obj);
    if (gc_flags(h) & GC_F_PERMANENT)
        return GC_OK;
    if (gc_object_ref_count(heap, obj) == 0)
        return GC_E_INVALID;
    return pin_update(heap, h, -1); /* a removal or an update: cannot fail */
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
