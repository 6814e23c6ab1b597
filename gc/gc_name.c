/*
 * gc_name.c - object names and paths (UE's name hash).
 *
 * Names live in a side table keyed both by object index and by (outer, name), so anonymous
 * objects pay nothing for them. Entries with the same (outer, name) hash are chained from the
 * table's entry; the table lock guards both maps and the entries.
 */
#include "gc_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
            gc_name_entry *v = gc_grow(heap->name_entries, sizeof *v,
                                       &heap->name_entry_capacity, 64);
            if (!v)
                return GC_E_NOMEM;
            heap->name_entries = v;
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

static bool header_is_dying(const gc_heap *heap, const gc_header *h)
{
    return (gc_flags(h) & GC_F_GARBAGE) || gc_header_is_unreachable(heap, h);
}

gc_result gc_name_claim(gc_heap *heap, uint32_t index, uint32_t outer_index, const char *name)
{
    gc_result r = GC_OK;
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
        r = name_add(heap, index, outer_index, name);
    uv_mutex_unlock(&heap->table_lock);
    return r;
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

/* UE's UObject::Rename: a new name, a new outer, or both. The object's old entry goes and the
 * new one is added under one hold of the table lock; an object that holds the new name and is
 * dying gives it up, as at creation. */
gc_result gc_object_rename(gc_heap *heap, void *obj, void *new_outer, const char *new_name)
{
    if (!heap || !obj)
        return GC_E_NULL;
    gc_header *h = gc_hdr(obj);
    if (gc_header_is_unreachable(heap, h))
        return GC_E_DEAD;
    if (gc_flags(h) & (GC_F_PERMANENT | GC_F_IS_CLASS))
        return GC_E_PERMANENT;
    if (new_name && (new_name[0] == '\0' || strchr(new_name, '.')))
        return GC_E_INVALID;
    uint32_t outer_index = h->outer_index;
    if (new_outer) {
        if (gc_header_is_unreachable(heap, gc_hdr(new_outer)))
            return GC_E_DEAD;
        if (!gc_object_is_valid(new_outer))
            return GC_E_GARBAGE;
        /* A cluster's members share its root's lifetime: moving one out would break it. */
        if (gc_flags(h) & (GC_F_IN_CLUSTER | GC_F_CLUSTER_ROOT))
            return GC_E_STATE;
        for (void *o = new_outer; o != NULL; o = gc_object_outer(heap, o))
            if (o == obj)
                return GC_E_INVALID; /* it would be its own outer */
        outer_index = gc_hdr(new_outer)->index;
    }
    const char *keep = gc_object_name(heap, obj);
    char *name = new_name ? gc_strdup(new_name) : keep ? gc_strdup(keep) : NULL;
    if ((new_name || keep) && !name)
        return GC_E_NOMEM;
    gc_result r = GC_OK;
    uv_mutex_lock(&heap->table_lock);
    uint32_t old = NAME_NONE, e = NAME_NONE;
    if (gc_flags(h) & GC_F_NAMED)
        gc_map_get(&heap->names_by_index, (uint64_t)h->index + 1, &old);
    if (name)
        e = name_lookup(heap, outer_index, name);
    if (e != NAME_NONE && e != old) {
        gc_header *other = gc_object_at(heap, heap->name_entries[e].index);
        if (other && header_is_dying(heap, other)) {
            name_remove(heap, e);
            gc_flags_clear(other, GC_F_NAMED);
        } else {
            r = GC_E_EXISTS;
        }
    }
    if (r == GC_OK && e != old) {
        char *was = old != NAME_NONE ? gc_strdup(heap->name_entries[old].name) : NULL;
        uint32_t was_outer = h->outer_index;
        if (old != NAME_NONE && !was) {
            r = GC_E_NOMEM;
        } else {
            if (old != NAME_NONE)
                name_remove(heap, old);
            r = name ? name_add(heap, h->index, outer_index, name) : GC_OK;
            /* Out of memory: the old entry goes back (its removal freed what it needs). */
            if (r != GC_OK && was)
                (void)name_add(heap, h->index, was_outer, was);
        }
        free(was);
    }
    uv_mutex_unlock(&heap->table_lock);
    free(name);
    if (r != GC_OK)
        return r;
    if (name || keep)
        gc_flags_set(h, GC_F_NAMED);
    h->outer_index = outer_index;
    /* During an incremental mark the new outer is a store like any other. */
    if (new_outer)
        gc_write_barrier(heap, new_outer);
    return GC_OK;
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
