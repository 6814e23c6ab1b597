/*
 * gc_cluster.c - clusters (UE FUObjectCluster): a root and the objects it owns, marked as one
 * unit.
 *
 * gc_cluster_create walks the references of a root (the marker's scanner in visit mode): an
 * object the root owns through its outer chain that may be clustered becomes a member and is
 * walked in turn; what members reference elsewhere is recorded as a mutable object, or, when
 * it belongs to another cluster, as a referenced cluster (linked both ways). Marking then
 * treats the cluster as one object (see gc_mark.c). A cluster dissolves - its members become
 * ordinary objects again - when its root or a member is marked garbage, when it is found
 * unreachable, when a mutable object it holds turns garbage (after the mark), or when
 * clusters are switched off; dissolving cascades to every cluster that references it.
 */
#include "gc_internal.h"

#include <stdlib.h>
#include <string.h>

#define NO_CLUSTER UINT32_MAX

static gc_cluster *cluster_at(gc_heap *heap, uint32_t id)
{
    return &heap->clusters[id];
}

static gc_result cluster_alloc(gc_heap *heap, uint32_t *out_id)
{
    if (heap->cluster_free == NO_CLUSTER) {
        uint32_t old = heap->cluster_capacity;
        gc_cluster *v = gc_grow(heap->clusters, sizeof *v, &heap->cluster_capacity, 64);
        if (!v)
            return GC_E_NOMEM;
        uint32_t cap = heap->cluster_capacity;
        for (uint32_t i = old; i < cap; i++) {
            memset(&v[i], 0, sizeof v[i]);
            v[i].root_index = GC_INDEX_NONE;
            v[i].next_free = i + 1 < cap ? i + 1 : heap->cluster_free;
        }
        heap->cluster_free = old;
        heap->clusters = v;
    }
    uint32_t id = heap->cluster_free;
    gc_cluster *c = cluster_at(heap, id);
    heap->cluster_free = c->next_free;
    memset(c, 0, sizeof *c);
    atomic_init(&c->needs_dissolving, false);
    *out_id = id;
    return GC_OK;
}

static void cluster_release(gc_heap *heap, uint32_t id)
{
    gc_cluster *c = cluster_at(heap, id);
    gc_ptr_vec_free(&c->members);
    free(c->mutable_objs);
    c->mutable_objs = NULL;
    c->mutable_count = c->mutable_capacity = 0;
    gc_u32_vec_free(&c->referenced);
    gc_u32_vec_free(&c->referenced_by);
    c->root_index = GC_INDEX_NONE;
    c->next_free = heap->cluster_free;
    heap->cluster_free = id;
}

/* Makes a member an ordinary object again. Dissolving while a mark is in flight must not
 * leave a member marked but never scanned: such members are queued like barrier objects. */
static void release_object(gc_heap *heap, gc_header *h, uint32_t flag)
{
    gc_flags_clear(h, flag);
    gc_special_sync(heap, h);
    gc_map_remove(&heap->cluster_of, (uint64_t)h->index + 1);
    if (heap->phase == GC_PHASE_MARK && flag == GC_F_IN_CLUSTER &&
        gc_is_marked(heap, heap->mark_value, h)) {
        uv_mutex_lock(&heap->barrier_lock);
        gc_ptr_vec_push_reserved(&heap->barrier_queue, h); /* see gc_mark_flip */
        uv_mutex_unlock(&heap->barrier_lock);
    }
}

static void dissolve_locked(gc_heap *heap, uint32_t id);

void gc_cluster_dissolve(gc_heap *heap, uint32_t id)
{
    uv_mutex_lock(&heap->cluster_lock);
    dissolve_locked(heap, id);
    uv_mutex_unlock(&heap->cluster_lock);
}

static void dissolve_locked(gc_heap *heap, uint32_t id)
{
    gc_cluster *c = cluster_at(heap, id);
    if (c->root_index == GC_INDEX_NONE)
        return;
    for (size_t i = 0; i < c->members.count; i++)
        release_object(heap, c->members.data[i], GC_F_IN_CLUSTER);
    gc_header *root = gc_object_at(heap, c->root_index);
    if (root)
        release_object(heap, root, GC_F_CLUSTER_ROOT);
    for (uint32_t i = 0; i < c->referenced.count; i++)
        gc_u32_vec_remove(&cluster_at(heap, c->referenced.data[i])->referenced_by, id);
    gc_u32_vec referencers = c->referenced_by;
    memset(&c->referenced_by, 0, sizeof c->referenced_by);
    cluster_release(heap, id);
    heap->cluster_live--;
    /* Whoever referenced this cluster held references into it through its members: they
     * cannot stay clusters whose bookkeeping points at a cluster that no longer exists. */
    for (uint32_t i = 0; i < referencers.count; i++) {
        gc_u32_vec_remove(&cluster_at(heap, referencers.data[i])->referenced, id);
        dissolve_locked(heap, referencers.data[i]);
    }
    gc_u32_vec_free(&referencers);
}

void gc_cluster_on_member_garbage(gc_heap *heap, gc_header *h)
{
    if (gc_flags(h) & (GC_F_IN_CLUSTER | GC_F_CLUSTER_ROOT))
        gc_cluster_dissolve(heap, gc_cluster_id_of(heap, h));
}

void gc_clusters_close(gc_heap *heap)
{
    for (uint32_t i = 0; i < heap->cluster_capacity; i++)
        if (heap->clusters[i].root_index != GC_INDEX_NONE)
            cluster_release(heap, i);
    free(heap->clusters);
    heap->clusters = NULL;
    heap->cluster_capacity = 0;
    heap->cluster_live = 0;
}

void gc_clusters_before_mark(gc_heap *heap)
{
    if (heap->settings.create_clusters || heap->cluster_live == 0)
        return;
    for (uint32_t i = 0; i < heap->cluster_capacity; i++)
        gc_cluster_dissolve(heap, i);
}

void gc_clusters_after_mark(gc_heap *heap)
{
    for (uint32_t i = 0; i < heap->cluster_capacity; i++) {
        gc_cluster *c = cluster_at(heap, i);
        if (c->root_index != GC_INDEX_NONE && atomic_load(&c->needs_dissolving))
            gc_cluster_dissolve(heap, i);
    }
}

uint32_t gc_cluster_count(const gc_heap *heap)
{
    return heap ? heap->cluster_live : 0;
}

/* ---- building a cluster ---------------------------------------------------------------- */

typedef struct cluster_build {
    gc_heap *heap;
    gc_header *root;
    uint32_t id;
    gc_map member_set;       /* index+1 -> 1 */
    gc_map mutable_set;      /* index+1 -> 1: mutable objects recorded so far */
    gc_ptr_vec queue;        /* members to walk */
    gc_header *from;
    bool failed;
} cluster_build;

static bool owned_by(gc_heap *heap, const gc_header *h, const gc_header *root)
{
    uint32_t outer = h->outer_index;
    for (int depth = 0; outer != GC_INDEX_NONE && depth < 256; depth++) {
        if (outer == root->index)
            return true;
        gc_header *o = gc_object_at(heap, outer);
        if (!o)
            return false;
        outer = o->outer_index;
    }
    return false;
}

static bool may_join(cluster_build *b, const gc_header *h)
{
    uint32_t f = gc_flags(h);
    if (f & (GC_F_PINNED | GC_F_ROOT | GC_F_GARBAGE | GC_F_PERMANENT | GC_F_UNREACHABLE |
             GC_F_IN_CLUSTER | GC_F_CLUSTER_ROOT | GC_F_IS_CLASS))
        return false;
    if (!(gc_class_of(b->heap, h)->flags & GC_CLASS_CAN_BE_IN_CLUSTER))
        return false;
    return owned_by(b->heap, h, b->root);
}

static bool mutable_known(const gc_cluster *c, const gc_header *t)
{
    for (uint32_t i = 0; i < c->mutable_count; i++)
        if (c->mutable_objs[i].index == t->index)
            return true;
    return false;
}

static void add_mutable(cluster_build *b, gc_cluster *c, gc_header *t)
{
    bool building = b->root != NULL; /* else: one store after the cluster was built */
    uint64_t key = (uint64_t)t->index + 1;
    if (building ? gc_map_get(&b->mutable_set, key, NULL) : mutable_known(c, t))
        return;
    if (c->mutable_count == c->mutable_capacity) {
        gc_weak *v = gc_grow(c->mutable_objs, sizeof *v, &c->mutable_capacity, 4);
        if (!v) {
            b->failed = true;
            return;
        }
        c->mutable_objs = v;
    }
    c->mutable_objs[c->mutable_count++] = gc_weak_make(b->heap, gc_payload(t));
    if (building && gc_map_put(&b->mutable_set, key, 1) != GC_OK)
        b->failed = true;
}

static void add_referenced_cluster(cluster_build *b, gc_cluster *c, uint32_t other)
{
    for (uint32_t i = 0; i < c->referenced.count; i++)
        if (c->referenced.data[i] == other)
            return;
    if (gc_u32_vec_push(&c->referenced, other) != GC_OK)
        b->failed = true;
}

static void build_visit(gc_collector *w, gc_header *t)
{
    cluster_build *b = w->visit_userdata;
    gc_heap *heap = b->heap;
    gc_cluster *c = cluster_at(heap, b->id);
    uint32_t f = gc_flags(t);
    if (t == b->root || (f & GC_F_PERMANENT) || gc_map_get(&b->member_set, (uint64_t)t->index + 1, NULL))
        return;
    if (may_join(b, t)) {
        if (gc_map_put(&b->member_set, (uint64_t)t->index + 1, 1) != GC_OK ||
            gc_ptr_vec_push(&b->queue, t) != GC_OK || gc_ptr_vec_push(&c->members, t) != GC_OK)
            b->failed = true;
        return;
    }
    if (f & (GC_F_IN_CLUSTER | GC_F_CLUSTER_ROOT))
        add_referenced_cluster(b, c, gc_cluster_id_of(heap, t));
    else
        add_mutable(b, c, t);
}

gc_result gc_cluster_create(gc_heap *heap, void *root_obj)
{
    if (!heap || !root_obj)
        return GC_E_NULL;
    gc_header *root = gc_hdr(root_obj);
    uint32_t f = gc_flags(root);
    if (!heap->settings.create_clusters || heap->phase == GC_PHASE_MARK ||
        heap->mark_done_pending_gather)
        return GC_E_STATE;
    if (f & (GC_F_UNREACHABLE))
        return GC_E_DEAD;
    if (f & GC_F_GARBAGE)
        return GC_E_GARBAGE;
    if (f & GC_F_PERMANENT)
        return GC_E_PERMANENT;
    if (!(gc_class_of(heap, root)->flags & GC_CLASS_CLUSTER_ROOT) ||
        (f & (GC_F_IN_CLUSTER | GC_F_CLUSTER_ROOT)))
        return GC_E_INVALID;

    cluster_build b = { .heap = heap, .root = root };
    gc_result r = cluster_alloc(heap, &b.id);
    if (r != GC_OK)
        return r;
    gc_map_init(&b.member_set);
    gc_map_init(&b.mutable_set);
    gc_collector w;
    gc_visitor_init(&w, heap, build_visit, &b);
    if (gc_ptr_vec_push(&b.queue, root) != GC_OK)
        b.failed = true;
    for (size_t i = 0; i < b.queue.count && !b.failed; i++) {
        b.from = b.queue.data[i];
        gc_scan_object(&w, b.from);
    }
    gc_cluster *c = cluster_at(heap, b.id);
    bool big_enough = c->members.count >= heap->settings.min_cluster_size;
    if (!b.failed && big_enough && c->members.count > 0) {
        /* Record membership first: a failure here must leave no object flagged. */
        b.failed = gc_map_put(&heap->cluster_of, (uint64_t)root->index + 1, b.id) != GC_OK;
        for (size_t i = 0; i < c->members.count && !b.failed; i++)
            b.failed = gc_map_put(&heap->cluster_of,
                                  (uint64_t)((gc_header *)c->members.data[i])->index + 1,
                                  b.id) != GC_OK;
        if (b.failed) {
            gc_map_remove(&heap->cluster_of, (uint64_t)root->index + 1);
            for (size_t i = 0; i < c->members.count; i++)
                gc_map_remove(&heap->cluster_of,
                              (uint64_t)((gc_header *)c->members.data[i])->index + 1);
        }
    }
    if (b.failed || !big_enough || c->members.count == 0) {
        cluster_release(heap, b.id);
        r = b.failed ? GC_E_NOMEM : GC_E_INVALID;
    } else {
        c->root_index = root->index;
        gc_flags_set(root, GC_F_CLUSTER_ROOT);
        gc_special_sync(heap, root);
        for (size_t i = 0; i < c->members.count; i++) {
            gc_header *m = c->members.data[i];
            gc_flags_set(m, GC_F_IN_CLUSTER);
            gc_special_sync(heap, m);
        }
        for (uint32_t i = 0; i < c->referenced.count; i++)
            if (gc_u32_vec_push(&cluster_at(heap, c->referenced.data[i])->referenced_by, b.id))
                abort(); /* half-linked clusters would dissolve wrongly */
        heap->cluster_live++;
    }
    gc_map_free(&b.member_set);
    gc_map_free(&b.mutable_set);
    gc_ptr_vec_free(&b.queue);
    gc_worker_close(&w);
    return r;
}

/* ---- references stored after the cluster was built ------------------------------------- */

void gc_object_reference_stored(gc_heap *heap, void *owner, void *target)
{
    if (!heap || !target)
        return;
    gc_write_barrier(heap, target);
    if (!owner || !(gc_flags(gc_hdr(owner)) & (GC_F_IN_CLUSTER | GC_F_CLUSTER_ROOT)))
        return; /* ordinary objects are scanned at every mark */
    gc_header *o = gc_hdr(owner), *t = gc_hdr(target);
    uint32_t id = gc_cluster_id_of(heap, o);
    uint32_t tf = gc_flags(t);
    if (tf & GC_F_PERMANENT)
        return;
    if (tf & (GC_F_IN_CLUSTER | GC_F_CLUSTER_ROOT)) {
        uint32_t other = gc_cluster_id_of(heap, t);
        if (other == id)
            return;
        cluster_build b = { .heap = heap, .id = id };
        gc_cluster *c = cluster_at(heap, id);
        uint32_t before = c->referenced.count;
        add_referenced_cluster(&b, c, other);
        if (c->referenced.count != before &&
            gc_u32_vec_push(&cluster_at(heap, other)->referenced_by, id) != GC_OK)
            b.failed = true;
        if (b.failed)
            gc_cluster_dissolve(heap, id); /* cannot record it: stop relying on records */
        return;
    }
    cluster_build b = { .heap = heap, .id = id };
    add_mutable(&b, cluster_at(heap, id), t);
    if (b.failed)
        gc_cluster_dissolve(heap, id);
}

bool gc_object_in_cluster(const void *obj)
{
    return obj && (gc_flags(gc_hdr(obj)) & (GC_F_IN_CLUSTER | GC_F_CLUSTER_ROOT));
}
