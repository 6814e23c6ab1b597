/*
 * gc_verify.c - checking the collector's assumptions (UE gc.VerifyAssumptions).
 *
 * Marking trusts three things it never checks on its hot path: permanent objects are not
 * scanned, so they must reference only permanent objects; cluster members are not scanned,
 * so their references must all be known to their cluster; and an object's flags never
 * contradict each other. This pass checks all three over the whole heap. It changes nothing.
 */
#include "gc_internal.h"

#include <stdio.h>

typedef struct verifier {
    gc_heap *heap;
    gc_line_fn line_fn;
    void *userdata;
    uint32_t violations;
    gc_header *from;
    uint32_t cluster;       /* cluster of `from` when checking a member */
} verifier;

static void report(verifier *v, const char *what, const gc_header *a, const gc_header *b,
                   const char *member)
{
    v->violations++;
    if (!v->line_fn)
        return;
    char pa[256] = "", pb[256] = "", line[800];
    if (a)
        gc_object_path(v->heap, gc_payload((gc_header *)a), pa, sizeof pa);
    if (b)
        gc_object_path(v->heap, gc_payload((gc_header *)b), pb, sizeof pb);
    snprintf(line, sizeof line, "gc assumption violated: %s: %s%s%s%s%s%s", what, pa,
             member ? " [" : "", member ? member : "", member ? "]" : "", b ? " -> " : "", pb);
    v->line_fn(line, v->userdata);
}

static void check_flags(verifier *v, gc_header *h)
{
    gc_heap *heap = v->heap;
    uint32_t f = gc_flags(h);
    if ((f & GC_F_ROOT) && (f & GC_F_GARBAGE))
        report(v, "object is both rooted and garbage", h, NULL, NULL);
    if ((f & GC_F_CLUSTER_ROOT) && (f & GC_F_IN_CLUSTER))
        report(v, "object is both a cluster root and a cluster member", h, NULL, NULL);
    if ((f & GC_F_PERMANENT) && (f & (GC_F_GARBAGE | GC_F_IN_CLUSTER | GC_F_CLUSTER_ROOT)))
        report(v, "permanent object is garbage or clustered", h, NULL, NULL);
    if ((f & GC_F_UNREACHABLE) && heap->phase < GC_PHASE_GATHER)
        report(v, "object flagged unreachable outside a purge", h, NULL, NULL);
    if ((f & GC_F_PINNED) && !gc_map_get(&heap->pins, (uint64_t)h->index + 1, NULL))
        report(v, "object flagged pinned has no pin entry", h, NULL, NULL);
    if (f & (GC_F_IN_CLUSTER | GC_F_CLUSTER_ROOT)) {
        uint32_t id = gc_cluster_id_of(heap, h);
        const gc_cluster *c = id < heap->cluster_capacity ? &heap->clusters[id] : NULL;
        if (!c || c->root_index == GC_INDEX_NONE)
            report(v, "clustered object names no live cluster", h, NULL, NULL);
        else if ((f & GC_F_CLUSTER_ROOT) && c->root_index != h->index)
            report(v, "cluster root is not its cluster's root", h, NULL, NULL);
    }
}

static void check_permanent_edge(gc_collector *w, gc_header *target)
{
    verifier *v = w->visit_userdata;
    if (!(gc_flags(target) & GC_F_PERMANENT))
        report(v, "permanent object references a collectable object", v->from, target,
               w->scanning_member);
}

static bool cluster_knows(const gc_heap *heap, const gc_cluster *c, uint32_t id,
                          const gc_header *t)
{
    uint32_t f = gc_flags(t);
    if ((f & GC_F_PERMANENT) || t->index == c->root_index)
        return true;
    if (f & (GC_F_IN_CLUSTER | GC_F_CLUSTER_ROOT)) {
        uint32_t other = gc_cluster_id_of(heap, t);
        if (other == id)
            return true;
        for (uint32_t i = 0; i < c->referenced.count; i++)
            if (c->referenced.data[i] == other)
                return true;
        return false;
    }
    for (uint32_t i = 0; i < c->mutable_count; i++)
        if (c->mutable_objs[i].index == t->index)
            return true;
    return false;
}

static void check_member_edge(gc_collector *w, gc_header *target)
{
    verifier *v = w->visit_userdata;
    const gc_cluster *c = &v->heap->clusters[v->cluster];
    if (!cluster_knows(v->heap, c, v->cluster, target))
        report(v, "cluster member references an object its cluster does not know", v->from,
               target, w->scanning_member);
}

static void check_cluster(verifier *v, gc_collector *w, uint32_t id)
{
    gc_heap *heap = v->heap;
    const gc_cluster *c = &heap->clusters[id];
    gc_header *root = gc_object_at(heap, c->root_index);
    if (!root || !(gc_flags(root) & GC_F_CLUSTER_ROOT)) {
        report(v, "cluster root is missing or not flagged", root, NULL, NULL);
        return;
    }
    for (uint32_t i = 0; i < c->referenced.count; i++) {
        const gc_cluster *o = &heap->clusters[c->referenced.data[i]];
        bool back = false;
        for (uint32_t k = 0; k < o->referenced_by.count; k++)
            back |= o->referenced_by.data[k] == id;
        if (o->root_index == GC_INDEX_NONE || !back)
            report(v, "cluster reference is not recorded both ways", root, NULL, NULL);
    }
    w->visit = check_member_edge;
    v->cluster = id;
    v->from = root;
    gc_scan_object(w, root); /* the root is not scanned at marks either */
    for (size_t i = 0; i < c->members.count; i++) {
        gc_header *m = c->members.data[i];
        if (gc_object_at(heap, m->index) != m || !(gc_flags(m) & GC_F_IN_CLUSTER) ||
            gc_cluster_id_of(heap, m) != id) {
            report(v, "cluster member is not flagged as one", root, m, "members");
            continue;
        }
        v->from = m;
        gc_scan_object(w, m);
    }
}

uint32_t gc_verify_assumptions(gc_heap *heap, gc_line_fn line_fn, void *userdata)
{
    if (!heap)
        return 0;
    verifier v = { .heap = heap, .line_fn = line_fn, .userdata = userdata };
    gc_collector w;
    gc_visitor_init(&w, heap, check_permanent_edge, &v);
    uint32_t n = gc_high_water(heap);
    for (uint32_t i = 0; i < n; i++) {
        gc_header *h = gc_object_at(heap, i);
        if (!h)
            continue;
        check_flags(&v, h);
        if (gc_flags(h) & GC_F_PERMANENT) {
            w.visit = check_permanent_edge;
            v.from = h;
            gc_scan_object(&w, h);
        }
    }
    for (uint32_t id = 0; id < heap->cluster_capacity; id++)
        if (heap->clusters[id].root_index != GC_INDEX_NONE)
            check_cluster(&v, &w, id);
    gc_worker_close(&w);
    return v.violations;
}
