/*
 * gc_debug.c - diagnostics: the reference chain that keeps an object alive.
 *
 * A breadth-first search from the same initial roots marking uses, over the same edges (the
 * marker's scanner in visit mode, which reports references instead of marking them and nulls
 * nothing). The first time the search reaches the target, the parent links give a shortest
 * chain. It touches no mark bit, so it may run at any time on the game thread.
 */
#include "gc_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_PARENT UINT32_MAX

typedef struct chain_search {
    gc_map parent;          /* index+1 -> parent index (NO_PARENT for a root) */
    gc_map via;             /* index+1 -> id of the member name (into names) */
    gc_ptr_vec names;       /* member names / root reasons, borrowed or owned (reasons) */
    gc_ptr_vec queue;       /* gc_header* */
    gc_header *from;        /* object being scanned, NULL while adding roots */
    const char *root_reason;
    bool failed;
} chain_search;

static uint32_t name_id(chain_search *s, const char *name)
{
    for (size_t i = 0; i < s->names.count; i++)
        if (s->names.data[i] == name)
            return (uint32_t)i;
    if (gc_ptr_vec_push(&s->names, (void *)name) != GC_OK)
        s->failed = true;
    return (uint32_t)(s->names.count - 1);
}

static void visit(gc_collector *w, gc_header *target)
{
    chain_search *s = w->visit_userdata;
    if (gc_flags(target) & GC_F_PERMANENT)
        return; /* permanent objects keep nothing alive: marking never scans them */
    uint64_t key = (uint64_t)target->index + 1;
    if (gc_map_get(&s->parent, key, NULL))
        return;
    const char *via = s->from ? w->scanning_member : s->root_reason;
    if (gc_map_put(&s->parent, key, s->from ? s->from->index : NO_PARENT) != GC_OK ||
        gc_map_put(&s->via, key, name_id(s, via ? via : "?")) != GC_OK ||
        gc_ptr_vec_push(&s->queue, target) != GC_OK)
        s->failed = true;
}

typedef struct root_visit {
    gc_collector *w;
    chain_search *s;
} root_visit;

static void visit_pinned(gc_header *h, const char *why, void *userdata)
{
    root_visit *rv = userdata;
    rv->s->root_reason = why;
    visit(rv->w, h);
}

static void add_roots(gc_heap *heap, gc_collector *w, chain_search *s)
{
    root_visit rv = { w, s };
    gc_pins_foreach(heap, visit_pinned, &rv);
    for (gc_referencer *r = heap->referencers; r; r = r->next) {
        s->root_reason = r->name;
        r->fn(r->userdata, w);
    }
}

static void emit_chain(gc_heap *heap, chain_search *s, const gc_header *target,
                       gc_line_fn line_fn, void *userdata)
{
    /* Collect the chain target -> root, then print it root first. */
    gc_ptr_vec hops = { 0 };
    uint32_t index = target->index;
    for (;;) {
        if (gc_ptr_vec_push(&hops, gc_object_at(heap, index)) != GC_OK)
            break;
        uint32_t parent = NO_PARENT;
        gc_map_get(&s->parent, (uint64_t)index + 1, &parent);
        if (parent == NO_PARENT)
            break;
        index = parent;
    }
    char path[512], line[768];
    for (size_t i = hops.count; i-- > 0;) {
        gc_header *h = hops.data[i];
        uint32_t via = 0;
        gc_map_get(&s->via, (uint64_t)h->index + 1, &via);
        gc_object_path(heap, gc_payload(h), path, sizeof path);
        if (i == hops.count - 1)
            snprintf(line, sizeof line, "%s (%s)", path, (const char *)s->names.data[via]);
        else
            snprintf(line, sizeof line, "  -> %s [%s]", path, (const char *)s->names.data[via]);
        line_fn(line, userdata);
    }
    gc_ptr_vec_free(&hops);
}

gc_result gc_reference_chain(gc_heap *heap, const void *target, gc_line_fn line_fn,
                             void *userdata)
{
    if (!heap || !target || !line_fn)
        return GC_E_NULL;
    if (heap->gc_locked)
        return GC_E_STATE; /* from inside a collection: its lock is not reentrant */
    const gc_header *t = gc_hdr(target);
    if (gc_header_is_unreachable(heap, t))
        return GC_E_DEAD;
    if (gc_flags(t) & GC_F_PERMANENT) {
        char path[512], line[600];
        gc_object_path(heap, target, path, sizeof path);
        snprintf(line, sizeof line, "%s (permanent)", path);
        line_fn(line, userdata);
        return GC_OK;
    }
    chain_search s;
    memset(&s, 0, sizeof s);
    gc_map_init(&s.parent);
    gc_map_init(&s.via);
    gc_collector w;
    gc_visitor_init(&w, heap, visit, &s);

    gc_lock_acquire(heap, true);
    add_roots(heap, &w, &s);
    bool found = false;
    for (size_t head = 0; head < s.queue.count && !s.failed; head++) {
        gc_header *h = s.queue.data[head];
        if (h == t) {
            found = true;
            break;
        }
        s.from = h;
        gc_scan_object(&w, h);
    }
    gc_lock_release(heap);

    gc_result r = s.failed ? GC_E_NOMEM : found ? GC_OK : GC_E_NOT_FOUND;
    if (r == GC_OK)
        emit_chain(heap, &s, t, line_fn, userdata);
    gc_map_free(&s.parent);
    gc_map_free(&s.via);
    gc_ptr_vec_free(&s.names);
    gc_ptr_vec_free(&s.queue);
    gc_worker_close(&w);
    return r;
}
