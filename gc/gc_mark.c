/*
 * gc_mark.c - reachability analysis (UE MarkObjectsAsUnreachable + the reference collector).
 *
 * On entry to gc_mark_flip the heap is idle and locked against other threads; it flips the
 * meaning of the mark bit, so every object is unmarked without touching it, and takes the
 * room the collection's lists need; gc_mark_begin then marks the initial roots. gc_mark_run
 * drains the work lists, scanning each marked object's class, outer and schema, until no
 * work is left (marking complete: every object reachable from the roots is marked) or the
 * deadline passes (marking suspended with its work lists intact).
 *
 * This file is the single-threaded reference marker, and holds the work lists every marker
 * uses; every other marker must agree with it. A lone worker never calls into
 * gc_parallel.c, where stealing, waking thieves and the marker threads live.
 */
#include "gc_internal.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* ---- work lists ------------------------------------------------------------------------ */

static void free_chain(gc_work_block *b)
{
    while (b) {
        gc_work_block *next = b->next;
        free(b);
        b = next;
    }
}

/* A test-and-set lock: a few dozen spins, then the CPU is given away between tries. */
static void flag_lock(atomic_flag *f)
{
    for (uint32_t spins = 0; atomic_flag_test_and_set_explicit(f, memory_order_acquire);
         spins++)
        if (spins >= 64)
            sched_yield();
}

/* Empty blocks. Each worker keeps a few spares of its own and trades the rest, in batches,
 * with a pool the heap's workers share: blocks flow from whoever pushes to whoever steals and
 * drains, and without the pool the caller of every mark would allocate (and fault in) fresh
 * blocks while the thieves' spares grew from mark to mark (measured: a one-worker mark right
 * after a two-worker one took 15-20% longer). The pool's lock is taken only by workers that
 * do not mark alone (a lone worker has the heap to itself). */
#define SPARE_BATCH 16

/* Moves up to SPARE_BATCH blocks from the chain *from to the chain *to; returns how many. */
static uint32_t spares_move(gc_work_block **from, gc_work_block **to)
{
    uint32_t n = 0;
    for (gc_work_block *b; n < SPARE_BATCH && (b = *from) != NULL; n++) {
        *from = b->next;
        b->next = *to;
        *to = b;
    }
    return n;
}

/* Trades a batch of spares with the pool: from it when `get`, to it otherwise. */
static void spares_trade(gc_collector *w, bool get)
{
    gc_heap *heap = w->heap;
    if (!w->alone)
        flag_lock(&heap->block_pool_lock);
    if (get) {
        uint32_t n = spares_move(&heap->block_pool, &w->spare);
        w->spare_count += n;
        atomic_fetch_sub_explicit(&heap->block_pool_count, n, memory_order_relaxed);
    } else {
        uint32_t n = spares_move(&w->spare, &heap->block_pool);
        w->spare_count -= n;
        atomic_fetch_add_explicit(&heap->block_pool_count, n, memory_order_relaxed);
    }
    if (!w->alone)
        atomic_flag_clear_explicit(&heap->block_pool_lock, memory_order_release);
}

gc_work_block *gc_block_get(gc_collector *w)
{
    if (!w->spare && atomic_load_explicit(&w->heap->block_pool_count, memory_order_relaxed) > 0)
        spares_trade(w, true);
    gc_work_block *b = w->spare;
    if (b) {
        w->spare = b->next;
        w->spare_count--;
    } else if (!(b = gc_malloc(sizeof *b))) {
        abort(); /* marking cannot drop work; a 4 KiB allocation failing is fatal */
    } else {
        atomic_fetch_add_explicit(&w->heap->blocks_allocated, 1, memory_order_relaxed);
    }
    b->next = NULL;
    b->count = 0;
    return b;
}

void gc_block_put(gc_collector *w, gc_work_block *b)
{
    b->next = w->spare;
    w->spare = b;
    if (++w->spare_count >= 2 * SPARE_BATCH)
        spares_trade(w, false);
}

void gc_block_pool_close(gc_heap *heap)
{
    free_chain(heap->block_pool);
    heap->block_pool = NULL;
    atomic_store_explicit(&heap->block_pool_count, 0, memory_order_relaxed);
}

void gc_worker_init(gc_collector *w, gc_heap *heap, uint32_t worker_index)
{
    memset(w, 0, sizeof *w);
    w->heap = heap;
    w->alone = true;
    w->worker_index = worker_index;
    atomic_flag_clear(&w->work_lock);
    atomic_init(&w->stealable, 0);
    atomic_init(&w->range_count, 0);
}

void gc_work_lock(gc_collector *w)
{
    if (!w->alone)
        flag_lock(&w->work_lock);
}

void gc_visitor_init(gc_collector *w, gc_heap *heap,
                     void (*visit)(gc_collector *w, gc_header *target), void *userdata)
{
    gc_worker_init(w, heap, UINT32_MAX);
    w->visit = visit;
    w->visit_userdata = userdata;
    w->direct = true;
}

void gc_worker_close(gc_collector *w)
{
    free_chain(w->full);
    free_chain(w->spare);
    free(w->block);
    free(w->ranges);
    w->full = w->spare = w->block = NULL;
    w->spare_count = 0;
    w->ranges = NULL;
    atomic_store(&w->range_count, 0);
    w->range_capacity = 0;
    w->pushed_count = 0;
    atomic_store(&w->stealable, 0);
}

/* Moves the n oldest privately pushed objects onto the current block (full blocks go on the
 * full list); w's lock is held. */
static void pushed_move_locked(gc_collector *w, uint32_t n)
{
    for (uint32_t moved = 0; moved < n;) {
        gc_work_block *b = w->block;
        if (!b) {
            b = w->block = gc_block_get(w);
        } else if (b->count == GC_WORK_BLOCK_CAPACITY) {
            b->next = w->full;
            w->full = b;
            b = w->block = gc_block_get(w);
        }
        uint32_t k = GC_WORK_BLOCK_CAPACITY - b->count;
        k = k < n - moved ? k : n - moved;
        memcpy(b->objs + b->count, w->pushed + moved, k * sizeof w->pushed[0]);
        b->count += k;
        moved += k;
    }
    memmove(w->pushed, w->pushed + n, (w->pushed_count - n) * sizeof w->pushed[0]);
    w->pushed_count -= n;
    gc_stealable_add(w, n);
}

void gc_worker_keep_private(gc_collector *w, uint32_t keep)
{
    if (w->pushed_count > keep)
        pushed_move_locked(w, w->pushed_count - keep);
}

/* After w made work stealable: thieves asleep in gc_parallel.c may take it. */
static void shared(gc_collector *w)
{
    if (!w->alone)
        gc_worker_published(w);
}

bool gc_worker_is_empty(const gc_collector *w)
{
    return w->pushed_count == 0 &&
           atomic_load_explicit(&((gc_collector *)w)->stealable, memory_order_acquire) == 0;
}

void gc_worker_push(gc_collector *w, gc_header *h)
{
    uint32_t limit = w->alone ? GC_PUSH_BUFFER_ALONE : GC_PUSH_BUFFER;
    if (w->pushed_count >= limit) {
        gc_work_lock(w);
        pushed_move_locked(w, w->pushed_count - limit / 2); /* the newer half stays, for
                                                              locality */
        gc_work_unlock(w);
        shared(w);
    }
    w->pushed[w->pushed_count++] = h;
}

void gc_worker_publish(gc_collector *w)
{
    gc_work_lock(w);
    pushed_move_locked(w, w->pushed_count);
    gc_work_unlock(w);
    shared(w);
}

/* A slice that ran out of time leaves work in every worker's lists. Each slice starts with
 * the caller marking alone and pool threads joining later, if at all, so what the others
 * kept must come back to the caller: left where it was, a remnant too small to steal (under
 * GC_STEAL_MIN) would wait for a thread that may never join, and the slice would end having
 * done nothing (as many slices in a row as the scheduler pleased). */
void gc_worker_adopt(gc_collector *to, gc_collector *from)
{
    for (uint32_t i = 0; i < from->pushed_count; i++)
        gc_worker_push(to, from->pushed[i]); /* the oldest first: the newest end on top */
    from->pushed_count = 0;
    uint32_t moved = 0;
    gc_work_block *chain[2] = { from->block, from->full };
    from->block = from->full = NULL;
    for (int c = 0; c < 2; c++) {
        for (gc_work_block *b = chain[c], *next; b; b = next) {
            next = c == 0 ? NULL : b->next;
            if (b->count == 0) {
                gc_block_put(from, b);
                continue;
            }
            b->next = to->full; /* a list of closed blocks, not all of them full */
            to->full = b;
            moved += b->count;
        }
    }
    gc_stealable_add(to, moved);
    uint32_t ranges = atomic_load_explicit(&from->range_count, memory_order_relaxed);
    for (uint32_t i = 0; i < ranges; i++)
        gc_worker_push_range_locked(to, from->ranges[i]);
    atomic_store_explicit(&from->range_count, 0, memory_order_relaxed);
    atomic_store_explicit(&from->stealable, 0, memory_order_relaxed);
}

/* The most recently found object when the private stack is empty: (under the lock) a batch
 * off the current block or a full block; NULL when w holds nothing. */
static gc_header *worker_pop_block(gc_collector *w)
{
    gc_work_lock(w);
    gc_work_block *b = w->block;
    while (!b || b->count == 0) {
        gc_work_block *next = w->full;
        if (!next) {
            gc_work_unlock(w);
            return NULL;
        }
        w->full = next->next;
        next->next = NULL;
        if (b)
            gc_block_put(w, b);
        b = w->block = next;
    }
    uint32_t half = (w->alone ? GC_PUSH_BUFFER_ALONE : GC_PUSH_BUFFER) / 2;
    uint32_t n = b->count < half ? b->count : half;
    b->count -= n;
    memcpy(w->pushed, b->objs + b->count, n * sizeof b->objs[0]); /* the top stays on top */
    w->pushed_count = n;
    gc_stealable_add(w, -(int64_t)n);
    gc_work_unlock(w);
    return w->pushed[--w->pushed_count];
}

void gc_worker_push_range_locked(gc_collector *w, gc_array_range r)
{
    uint32_t n = atomic_load_explicit(&w->range_count, memory_order_relaxed);
    if (n == w->range_capacity) {
        gc_array_range *v = gc_grow(w->ranges, sizeof *v, &w->range_capacity, 16);
        if (!v)
            abort(); /* marking cannot drop work (see reap_gc.h on aborts) */
        w->ranges = v;
    }
    w->ranges[n] = r;
    atomic_store_explicit(&w->range_count, n + 1, memory_order_relaxed);
    gc_stealable_add(w, GC_STEAL_MIN); /* a piece is always worth stealing */
}

void gc_worker_push_range(gc_collector *w, gc_header *obj, uint32_t offset, uint32_t start)
{
    gc_work_lock(w);
    gc_worker_push_range_locked(w, (gc_array_range){ obj, offset, start });
    gc_work_unlock(w);
    shared(w);
}

/* Takes w's most recent piece of a long array, if it has one left. */
static bool take_range(gc_collector *w, gc_array_range *out)
{
    if (atomic_load_explicit(&w->range_count, memory_order_relaxed) == 0)
        return false;
    gc_work_lock(w);
    uint32_t n = atomic_load_explicit(&w->range_count, memory_order_relaxed);
    if (n > 0) {
        *out = w->ranges[n - 1];
        atomic_store_explicit(&w->range_count, n - 1, memory_order_relaxed);
        gc_stealable_add(w, -(int64_t)GC_STEAL_MIN);
    }
    gc_work_unlock(w);
    return n > 0;
}

/* ---- marking one reference ------------------------------------------------------------- */

static void mark_cluster(gc_collector *w, gc_header *root);

/* Marks h and queues it for scanning if this call marked it. A cluster member stands for its
 * whole cluster: marking it marks the root, and the root marks the cluster. */
static inline void mark_header(gc_collector *w, gc_header *h)
{
    if (w->visit) {
        w->visit(w, h);
        return;
    }
    uint32_t f = gc_flags(h);
    if (f & GC_F_IN_CLUSTER) {
        h = gc_cluster_root_of(w->heap, h);
        f = gc_flags(h);
    }
    if ((f & GC_F_PERMANENT) || gc_is_marked(w->heap, w->mark_value, h))
        return;
    if (gc_try_mark(w->heap, w->mark_value, h)) { /* exactly one winner: see gc_try_mark */
        if (w->edges)
            gc_edge_log_push(w->edges, h->index,
                             w->scanning ? w->scanning->index : GC_INDEX_NONE,
                             w->scanning_member);
        if (f & GC_F_CLUSTER_ROOT)
            mark_cluster(w, h); /* the root is not scanned either: its cluster stands in */
        else
            gc_worker_push(w, h);
    }
}

/* The cluster of a root this worker just marked: members are marked without being scanned;
 * the objects they reference elsewhere and the clusters they reach are marked instead. */
static void mark_cluster(gc_collector *w, gc_header *root)
{
    gc_heap *heap = w->heap;
    gc_cluster *c = &heap->clusters[gc_cluster_id_of(heap, root)];
    gc_work_add(&w->work_done, c->members.count * GC_WORK_OBJECT); /* one unbroken piece */
    for (size_t i = 0; i < c->members.count; i++) {
        gc_header *m = c->members.data[i];
        if (gc_try_mark(heap, w->mark_value, m)) { /* only this worker marks the members */
            if (w->edges)
                gc_edge_log_push(w->edges, m->index, root->index, "cluster");
        }
    }
    gc_header *scanning = w->scanning;
    const char *member = w->scanning_member;
    w->scanning = root; /* what the cluster keeps, it keeps through its root */
    w->scanning_member = "cluster";
    /* Only the worker that marked the root touches this cluster now: it may drop records of
     * objects destroyed since they were made. */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < c->mutable_count; i++) {
        gc_weak rec = c->mutable_objs[i];
        gc_header *h = gc_object_at(heap, rec.index);
        if (!h || atomic_load_explicit(gc_serial_slot(heap, rec.index), memory_order_relaxed) !=
                      rec.serial)
            continue;
        c->mutable_objs[kept++] = rec;
        if (gc_flags(h) & GC_F_GARBAGE)
            atomic_store(&c->needs_dissolving, true); /* kept this once; dissolve after */
        mark_header(w, h);
    }
    c->mutable_count = kept;
    for (uint32_t i = 0; i < c->referenced.count; i++) {
        gc_cluster *other = &heap->clusters[c->referenced.data[i]];
        mark_header(w, gc_object_at(heap, other->root_index));
    }
    w->scanning = scanning;
    w->scanning_member = member;
}

/* A killable reference whose target's header is in cache: nulled if the target is garbage,
 * marked otherwise. */
static __attribute__((noinline)) void check_slot(gc_collector *w, void **slot, gc_header *h)
{
    if ((gc_flags(h) & (GC_F_GARBAGE | GC_F_PERMANENT)) == GC_F_GARBAGE) {
        if (w->garbage_edges)
            gc_edge_log_push(w->garbage_edges, h->index,
                             w->scanning ? w->scanning->index : GC_INDEX_NONE,
                             w->scanning_member);
        __atomic_store_n(slot, NULL, __ATOMIC_RELAXED); /* see mark_slot */
        return;
    }
    mark_header(w, h);
}

/* What the hot loop reads for every reference, copied into locals once per drain (the
 * stores of marks could otherwise alias what the compiler would have to reload from the
 * heap after each one). `payloads` is the region's start plus a header, so that a
 * reference's offset is one subtraction away from the reference itself. */
typedef struct mark_tables {
    uintptr_t payloads;
    size_t region_big, region_bytes, small_marks_at;
    _Atomic uint64_t *marks, *special;
    uint32_t mark_value;
    bool alone;
} mark_tables;

static void mark_tables_init(mark_tables *t, const gc_collector *w)
{
    const gc_heap *heap = w->heap;
    t->payloads = (uintptr_t)heap->region + sizeof(gc_header);
    t->region_big = heap->region_big;
    t->region_bytes = heap->region_bytes;
    t->small_marks_at = heap->small_marks_at;
    t->marks = heap->slab_marks;
    t->special = heap->slab_special;
    t->mark_value = w->mark_value;
    t->alone = w->alone;
}

/* Killable references, `n` consecutive slots (a run of members, a piece of an array): the
 * marker's hot loop, compiled once for each mark value and for marking alone or not. Most
 * targets are plain objects in the region: their mark bit is read (and set) in the table
 * without touching the object; only a newly marked one is prefetched, for its scan. Special
 * objects and objects outside the region take the header path. The private stack's top is
 * the caller's local `*sp` (a register once inlined into the drain), written back to
 * w->pushed_count only around the calls that may push. */
static inline __attribute__((always_inline)) void
mark_refs_sp(gc_collector *w, const mark_tables *t, void **slots, uint32_t n, uint32_t *sp_io,
             const bool alone, const uint32_t mark_value)
{
    /* Locals, not t's fields: a store of a mark (a 64-bit word) may alias a size_t. */
    const uintptr_t payloads = t->payloads;
    const size_t region_big = t->region_big, region_bytes = t->region_bytes;
    const size_t small_marks_at = t->small_marks_at;
    _Atomic uint64_t *const marks = t->marks, *const special = t->special;
    gc_header **const stack = w->pushed;
    uint32_t sp = *sp_io;
    for (uint32_t i = 0; i < n; i++) {
        /* One worker may null a reference to garbage that another reads: the slot is read
         * and nulled atomically (plain moves). */
        void *p = __atomic_load_n(&slots[i], __ATOMIC_RELAXED);
        uintptr_t off = (uintptr_t)p - payloads;
        size_t at;
        unsigned shift;
        if (__builtin_expect(off < region_big, 1)) {
            at = off >> (GC_GRANULE_SHIFT + GC_BITS_SHIFT);
            shift = (unsigned)(off >> GC_GRANULE_SHIFT) & 63;
        } else if (off < region_bytes) {
            off -= region_big;
            at = small_marks_at + (off >> (GC_SMALL_GRANULE_SHIFT + GC_BITS_SHIFT));
            shift = (unsigned)(off >> GC_SMALL_GRANULE_SHIFT) & 63;
        } else if (!p) {
            continue; /* tested here, not first: a null is outside the region too */
        } else {
            goto header_path; /* outside the region: the header holds the mark */
        }
        uint64_t v = atomic_load_explicit(&marks[at], memory_order_relaxed);
        if (((v >> shift) & 1) == mark_value)
            continue; /* marked: nothing to do, special or not */
        if ((atomic_load_explicit(&special[at], memory_order_relaxed) >> shift) & 1)
            goto header_path; /* the header decides */
        if (alone)
            atomic_store_explicit(&marks[at], v ^ ((uint64_t)1 << shift), memory_order_relaxed);
        else if (!gc_mark_bit_set((gc_mark_loc){ &marks[at], (uint64_t)1 << shift },
                                  mark_value))
            continue; /* another worker just won it */
        gc_header *h = gc_hdr(p);
        if (sp < (alone ? GC_PUSH_BUFFER_ALONE : GC_PUSH_BUFFER)) {
            stack[sp++] = h;
            continue;
        }
        w->pushed_count = sp;
        gc_worker_push(w, h);
        sp = w->pushed_count;
        continue;
    header_path:
        w->pushed_count = sp;
        check_slot(w, &slots[i], gc_hdr(p));
        sp = w->pushed_count;
    }
    *sp_io = sp;
}

static inline __attribute__((always_inline)) void
mark_refs_as(gc_collector *w, const mark_tables *t, void **slots, uint32_t n, const bool alone,
             const uint32_t mark_value)
{
    uint32_t sp = w->pushed_count;
    mark_refs_sp(w, t, slots, n, &sp, alone, mark_value);
    w->pushed_count = sp;
}

static inline __attribute__((always_inline)) void
mark_refs(gc_collector *w, const mark_tables *t, void **slots, uint32_t n)
{
    if (t->alone) {
        if (t->mark_value)
            mark_refs_as(w, t, slots, n, true, 1);
        else
            mark_refs_as(w, t, slots, n, true, 0);
    } else {
        if (t->mark_value)
            mark_refs_as(w, t, slots, n, false, 1);
        else
            mark_refs_as(w, t, slots, n, false, 0);
    }
}

/* The same for callers outside the drain loop (schema ops, referencers, visit mode). */
static void mark_slots(gc_collector *w, void **slots, uint32_t n)
{
    if (w->direct) {
        for (uint32_t i = 0; i < n; i++) {
            void *p = __atomic_load_n(&slots[i], __ATOMIC_RELAXED);
            if (!p)
                continue;
            if (w->visit)
                w->visit(w, gc_hdr(p));
            else
                check_slot(w, &slots[i], gc_hdr(p));
        }
        return;
    }
    mark_tables t;
    mark_tables_init(&t, w);
    mark_refs(w, &t, slots, n);
}

void gc_collector_add_ref(gc_collector *c, void **slot)
{
    if (c && slot)
        mark_slots(c, slot, 1);
}

void gc_collector_add_immutable(gc_collector *c, void *obj)
{
    if (c && obj)
        mark_header(c, gc_hdr(obj));
}

/* ---- scanning one object --------------------------------------------------------------- */

static void scan_ops(gc_collector *w, gc_header *obj, const gc_schema_op *op, char *base,
                     bool top_level)
{
    for (;; op++) {
        w->scanning_member = op->name;
        switch (op->kind) {
        case GC_OP_END:
            return;
        case GC_OP_REF:
            mark_slots(w, (void **)(base + op->offset), 1);
            break;
        case GC_OP_REF_RUN:
            mark_slots(w, (void **)(base + op->offset), op->stride);
            break;
        case GC_OP_REF_ARRAY: {
            gc_ref_array *a = (gc_ref_array *)(base + op->offset);
            if (top_level && a->count > GC_ARRAY_PIECE && !w->visit) {
                gc_worker_push_range(w, obj, op->offset, 0); /* scanned piece by piece */
                break;
            }
            mark_slots(w, (void **)a->data, a->count);
            break;
        }
        case GC_OP_STRUCT_ARRAY: {
            gc_struct_array *a = (gc_struct_array *)(base + op->offset);
            char *elem = a->data;
            for (uint32_t i = 0; i < a->count; i++, elem += op->stride)
                scan_ops(w, obj, op->inner, elem, false);
            break;
        }
        case GC_OP_STRUCT_ARO:
            op->fn(base + op->offset, w);
            break;
        case GC_OP_OBJECT_ARO:
            op->fn(base, w);
            break;
        }
    }
}

/* Scans one marked object: its class and outer (immutable references), then its schema. */
void gc_scan_object(gc_collector *w, gc_header *h)
{
    gc_heap *heap = w->heap;
    const gc_class *cls = gc_class_of(heap, h);
    if (cls != w->last_class || w->direct) { /* a class stays marked once marked */
        w->scanning_member = "class";
        mark_header(w, gc_hdr(cls));
        w->last_class = cls;
    }
    w->scanning_member = "outer";
    if (h->outer_index != GC_INDEX_NONE)
        mark_header(w, gc_object_at(heap, h->outer_index));
    w->scanning = h;
    if (cls->run_count > 0 && !w->direct)
        mark_slots(w, (void **)((char *)gc_payload(h) + cls->run_offset), cls->run_count);
    else
        scan_ops(w, h, w->direct ? cls->schema : cls->mark_schema, gc_payload(h), true);
    w->scanning = NULL;
}

/* ---- the drain loop ------------------------------------------------------------------- */

/* How one specialised drain ended. */
typedef enum drain_end {
    DRAIN_EMPTY,  /* w's lists are empty */
    DRAIN_LATE,   /* the deadline passed; w's lists keep what is left */
    DRAIN_SHARED, /* a pool thread joined: w now marks shared, and goes on doing so */
} drain_end;

/* Marks the class (an immutable reference) of an object whose class differs from the last
 * one this drain scanned; returns it. Out of line: the drain meets a new class rarely. */
static __attribute__((noinline)) const gc_class *drain_class(gc_collector *w, gc_header *h)
{
    const gc_class *cls = gc_class_of(w->heap, h);
    mark_header(w, gc_hdr(cls));
    return cls;
}

/* Marks an outer (an immutable reference) other than the last one this drain marked. */
static __attribute__((noinline)) void drain_outer(gc_collector *w, uint32_t outer_index)
{
    mark_header(w, gc_object_at(w->heap, outer_index));
}

/* Scans one piece of a long array, after queuing the rest where thieves can take it. Out of
 * line, with its own copy of the reference loop: a piece is GC_ARRAY_PIECE references, and
 * a second copy inlined into the drain would cost the drain's registers. */
static __attribute__((noinline)) void drain_piece(gc_collector *w, gc_array_range r)
{
    gc_ref_array *a = (gc_ref_array *)((char *)gc_payload(r.obj) + r.offset);
    uint32_t stop = r.start + GC_ARRAY_PIECE;
    if (stop < a->count)
        gc_worker_push_range(w, r.obj, r.offset, stop);
    else
        stop = a->count;
    if (r.start < stop)
        mark_slots(w, (void **)a->data + r.start, stop - r.start);
}

/* Puts the scan FIFO back on w's stack, the oldest on top (it is scanned first next time). */
static void drain_fifo_return(gc_collector *w, gc_header *const *ahead, uint32_t head,
                              uint32_t queued)
{
    while (queued > 0) {
        queued--;
        gc_worker_push(w, ahead[(head + queued) & (GC_SCAN_AHEAD - 1)]);
    }
}

/* Drains w's lists: gc_worker_drain's loop. It is compiled once for each mark value and
 * mode (alone or shared) of a marker that prefetches, with those as constants, and once with
 * everything read at run time, which also serves the direct path (visit mode, edge logs:
 * every object through gc_scan_object) and markers that do not prefetch. What does not
 * change from one object to the next stays in locals: the private stack's top, the tables
 * of the reference loop, the class whose run of references was last scanned (and where the
 * run is), the last outer marked, and whether w may hold pieces of long arrays (only this
 * worker adds them while it drains; thieves only take them). The stack's top is written back
 * to w->pushed_count around every call that may push. The FIFO is a ring: `tick` counts the
 * objects scanned, its low bits say where the oldest waits, its sixth bit when to look at
 * the clock; once the ring is full, the object popped takes the place of the one scanned.
 * A marker alone returns DRAIN_SHARED when it lets a pool thread join, to go on in the
 * shared version. */
static inline __attribute__((always_inline)) drain_end
drain_as(gc_collector *w, double deadline, const bool direct, const bool alone,
         const uint32_t mark_value, const bool prefetch)
{
    gc_heap *heap = w->heap;
    mark_tables t;
    mark_tables_init(&t, w);
    uint32_t sp = w->pushed_count;
    gc_header *ahead[GC_SCAN_AHEAD];
    const uint32_t fifo = prefetch ? GC_SCAN_AHEAD : 1; /* 1: scanned in the stack's order */
    uint32_t tick = 0, queued = 0, tick_counted = 0;
    bool ranges = true;
    uint32_t run_class_id = UINT32_MAX, last_outer = GC_INDEX_NONE;
    uint32_t run_offset = 0, run_count = 0;
    uint64_t work = 0; /* since the last look at the clock, but for objects */
    for (;;) {
        gc_array_range r;
        if (ranges && take_range(w, &r)) { /* a piece is a lot of work: then the clock */
            w->pushed_count = sp;
            drain_piece(w, r);
            sp = w->pushed_count;
            work += GC_WORK_UNIT;
            goto look_at_clock;
        }
        ranges = false;

        gc_header *next, *h;
        if (__builtin_expect(sp > 0, 1)) {
            next = w->pushed[--sp];
        } else {
            w->pushed_count = 0;
            next = worker_pop_block(w);
            sp = w->pushed_count;
            if (!next) {
                if (queued > 0) { /* the ring's last objects */
                    h = ahead[tick & (GC_SCAN_AHEAD - 1)];
                    queued--;
                    goto scan;
                }
                if (atomic_load_explicit(&w->range_count, memory_order_relaxed) > 0) {
                    ranges = true; /* not expected (see above), but a piece is work left */
                    continue;
                }
                w->pushed_count = sp;
                gc_work_add(&w->work_done, work + (uint64_t)(tick - tick_counted) *
                                                      GC_WORK_OBJECT);
                return DRAIN_EMPTY;
            }
        }
        if (prefetch) {
            __builtin_prefetch(next, 0, 3);
            __builtin_prefetch((char *)next + 64, 0, 3);
        }
        if (__builtin_expect(queued < fifo, 0)) {
            ahead[(tick + queued++) & (GC_SCAN_AHEAD - 1)] = next;
            continue;
        }
        h = ahead[tick & (GC_SCAN_AHEAD - 1)];
        ahead[(tick + fifo) & (GC_SCAN_AHEAD - 1)] = next;

    scan:
        tick++;
        if (direct) {
            w->pushed_count = sp;
            gc_scan_object(w, h);
            sp = w->pushed_count;
            ranges = true; /* its schema may have had a long array */
        } else {
            uint32_t outer = h->outer_index;
            if (__builtin_expect(outer != last_outer, 0)) { /* a marked outer stays marked */
                if (outer != GC_INDEX_NONE) {
                    w->pushed_count = sp;
                    drain_outer(w, outer);
                    sp = w->pushed_count;
                }
                last_outer = outer;
            }
            if (__builtin_expect(h->class_id != run_class_id, 0)) {
                w->pushed_count = sp;
                const gc_class *cls = drain_class(w, h); /* a class stays marked too */
                sp = w->pushed_count;
                if (cls->run_count == 0) { /* w->pushed_count is the stack's top */
                    scan_ops(w, h, cls->mark_schema, gc_payload(h), true);
                    sp = w->pushed_count;
                    ranges = true; /* it may have queued a long array */
                    goto scanned;
                }
                run_class_id = h->class_id;
                run_offset = cls->run_offset;
                run_count = cls->run_count;
            }
            mark_refs_sp(w, &t, (void **)((char *)gc_payload(h) + run_offset), run_count, &sp,
                         alone, mark_value);
        }
    scanned:
        if (__builtin_expect(tick % GC_TIME_CHECK_INTERVAL != 0, 1))
            continue;

    look_at_clock:
        gc_work_add(&w->work_done, work + (uint64_t)(tick - tick_counted) * GC_WORK_OBJECT);
        work = 0;
        tick_counted = tick;
        if (alone && w->join && gc_worker_join_poll(w)) {
            w->pushed_count = sp;
            drain_fifo_return(w, ahead, tick & (GC_SCAN_AHEAD - 1), queued);
            gc_worker_go_shared(w); /* a pool thread got a CPU: let it in */
            return DRAIN_SHARED;
        }
        if (deadline > 0 && gc_past(heap, deadline)) {
            w->pushed_count = sp;
            drain_fifo_return(w, ahead, tick & (GC_SCAN_AHEAD - 1), queued);
            return gc_worker_is_empty(w) ? DRAIN_EMPTY : DRAIN_LATE;
        }
    }
}

/* Drains the worker's lists. Returns true when they are empty, false when the deadline
 * passed first (the lists keep what is left). Objects popped for scanning wait in a short
 * FIFO after their first cache lines are prefetched, so each is scanned GC_SCAN_AHEAD pops
 * after its memory was asked for (popping straight off the stack would scan an object right
 * after it was pushed, before its line can arrive); the FIFO goes back on the stack when the
 * deadline passes. The work done is counted at each look at the clock (what a test's work
 * clock reads) and at the end. */
bool gc_worker_drain(gc_collector *w, double deadline)
{
    for (;;) {
        drain_end end;
        if (w->direct || w->no_prefetch)
            end = drain_as(w, deadline, w->direct, w->alone, w->mark_value, !w->no_prefetch);
        else if (w->alone)
            end = w->mark_value ? drain_as(w, deadline, false, true, 1, true)
                                : drain_as(w, deadline, false, true, 0, true);
        else
            end = w->mark_value ? drain_as(w, deadline, false, false, 1, true)
                                : drain_as(w, deadline, false, false, 0, true);
        if (end != DRAIN_SHARED)
            return end == DRAIN_EMPTY;
    }
}

/* ---- the phase -------------------------------------------------------------------------- */

typedef struct root_marking {
    gc_collector *w;
    uint32_t count;
} root_marking;

static void mark_pinned(gc_header *h, const char *why, void *userdata)
{
    root_marking *rm = userdata;
    rm->w->scanning_member = why;
    mark_header(rm->w, h);
    rm->count++;
}

/* Marks every object that is an initial root for this collection. */
static uint32_t mark_initial_roots(gc_heap *heap, gc_collector *w)
{
    /* Root set, reference counts and internal root flags: the pin table. */
    root_marking rm = { w, 0 };
    w->scanning = NULL;
    gc_pins_foreach(heap, mark_pinned, &rm);
    uint32_t roots = rm.count;

    /* Keep flags: the one case that needs a pass over the array (as in UE). */
    if (heap->keep_flags) {
        w->scanning_member = "keep flags";
        uint32_t keep = GC_F_FROM_OBJ(heap->keep_flags);
        uint32_t n = gc_high_water(heap);
        for (uint32_t i = 0; i < n; i++) {
            gc_header *h = gc_object_at(heap, i);
            if (h && (gc_flags(h) & keep) && !(gc_flags(h) & GC_F_GARBAGE)) {
                mark_header(w, h);
                roots++;
            }
        }
    }

    /* External referencers report what they hold. */
    for (gc_referencer *r = heap->referencers; r; r = r->next) {
        w->scanning_member = r->name;
        r->fn(r->userdata, w);
        roots++;
    }
    w->scanning_member = NULL;
    return roots;
}

/* Room for everything the collection may queue or gather, so that the barrier, gathering
 * and purging never allocate: each list holds at most one entry per object that was alive
 * when the mark bit flipped (objects born after it are marked and never queued or
 * gathered), and the class list one per class. */
static gc_result reserve_for_collection(gc_heap *heap, size_t objects)
{
    uv_mutex_lock(&heap->barrier_lock);
    gc_result r = gc_ptr_vec_reserve(&heap->barrier_queue, objects);
    if (r == GC_OK)
        r = gc_ptr_vec_reserve(&heap->barrier_clusters, objects);
    uv_mutex_unlock(&heap->barrier_lock);
    if (r == GC_OK)
        r = gc_ptr_vec_reserve(&heap->unreachable, objects);
    if (r == GC_OK)
        r = gc_ptr_vec_reserve(&heap->unreachable_plain, objects);
    if (r == GC_OK)
        r = gc_ptr_vec_reserve(&heap->pending_finish, objects);
    if (r == GC_OK)
        r = gc_ptr_vec_reserve(&heap->purge_classes, heap->class_count);
    return r;
}

bool gc_collection_lists_release(gc_heap *heap, double deadline)
{
    gc_ptr_vec *lists[] = { &heap->barrier_queue, &heap->barrier_clusters, &heap->unreachable,
                            &heap->unreachable_plain, &heap->pending_finish };
    size_t count = sizeof lists / sizeof lists[0];
    while (heap->purge_cursor < count) {
        gc_ptr_vec *v = lists[heap->purge_cursor];
        uv_mutex_lock(&heap->barrier_lock);
        bool piece = v->count == 0 && v->capacity > GC_LIST_KEPT;
        size_t bytes = (size_t)v->capacity * sizeof v->data[0];
        if (piece) {
            size_t n = bytes - heap->release_offset < GC_RELEASE_PIECE
                           ? bytes - heap->release_offset : GC_RELEASE_PIECE;
            gc_pages_discard((char *)v->data + heap->release_offset, n);
            heap->release_offset += n;
        }
        if (!piece || heap->release_offset == bytes) {
            heap->purge_cursor++;
            heap->release_offset = 0;
        }
        uv_mutex_unlock(&heap->barrier_lock);
        if (piece) {
            gc_work_add(&heap->work_done, GC_WORK_UNIT);
            if (heap->purge_cursor < count && gc_past(heap, deadline))
                return false;
        }
    }
    return true;
}

gc_result gc_mark_flip(gc_heap *heap)
{
    heap->mark_value ^= 1; /* the flag swap: everything alive is now unmarked */
    uint32_t alive = gc_object_count(heap); /* read after the flip: a bound for the lists */
    if (reserve_for_collection(heap, alive) != GC_OK) {
        heap->mark_value ^= 1; /* nothing else has changed */
        return GC_E_NOMEM;
    }
    heap->mark_candidates = alive - heap->permanent_count;
    return GC_OK;
}

void gc_mark_begin(gc_heap *heap)
{
    /* One worker asked for: nothing of gc_parallel.c is needed. */
    heap->mark_workers = heap->settings.num_workers == 1 ? 1 : gc_parallel_worker_count(heap);
    for (uint32_t i = 0; i < heap->mark_workers; i++) {
        gc_collector *w = heap->workers[i];
        w->mark_value = heap->mark_value;
        w->last_class = NULL;
        w->no_prefetch = heap->settings.no_prefetch;
        w->alone = heap->mark_workers == 1;
        w->stolen = 0;
    }
    heap->stats.mark_workers = heap->mark_workers;
    heap->helpers_invited =
        heap->mark_workers > 1 && gc_helpers_invite(&heap->helpers, heap->mark_candidates);
    heap->helpers_joined = 0;
    heap->mark_work = 0;
    heap->mark_run_seconds = 0;
    gc_history_mark_begin(heap);
    heap->stats.roots = mark_initial_roots(heap, &heap->main_worker);
}

/* The work the mark's workers have done so far (their counters only grow). */
static uint64_t mark_work_total(const gc_heap *heap)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < heap->mark_workers; i++)
        n += atomic_load_explicit(&heap->workers[i]->work_done, memory_order_relaxed);
    return n;
}

static bool mark_run(gc_heap *heap, double deadline)
{
    gc_collector *w = &heap->main_worker;
    for (;;) {
        gc_barrier_drain(heap, w);
        gc_barrier_drain_clusters(heap, w);
        bool drained = heap->mark_workers > 1 ? gc_parallel_drain(heap, deadline)
                                              : gc_worker_drain(w, deadline);
        if (!drained && deadline > 0)
            return false;
        if (!drained)
            continue; /* no deadline: workers stopped early, but work is left; go on */
        if (gc_barrier_is_empty(heap))
            return true;
        if (gc_past(heap, deadline))
            return false;
    }
}

/* The mark's rate, for gc_helpers_invite, is taken on the real clock: a test's clock may
 * stand still or run with each look at it. */
bool gc_mark_run(gc_heap *heap, double deadline)
{
    uint64_t t0 = uv_hrtime(), work0 = mark_work_total(heap);
    bool done = mark_run(heap, deadline);
    heap->mark_work += mark_work_total(heap) - work0;
    heap->mark_run_seconds += (double)(uv_hrtime() - t0) * 1e-9;
    return done;
}

void gc_mark_end(gc_heap *heap)
{
    uint64_t stolen = 0;
    for (uint32_t i = 0; i < heap->mark_workers; i++)
        stolen += heap->workers[i]->stolen;
    heap->stats.blocks_stolen = (uint32_t)stolen;
    heap->stats.mark_slices_helped = heap->helpers_joined;
    heap->stats.mark_helpers_invited = heap->helpers_invited;
    /* The heap's first mark touches the mark tables and work lists for the first time, a
     * mark without prefetching is a measurement of something else, and a short one is
     * mostly noise (GC_HELPERS_SAMPLE_MIN_NS): none is a sample. */
    bool sample = heap->stats.collections > 0 && !heap->settings.no_prefetch &&
                  heap->mark_work > 0 && heap->mark_run_seconds >= GC_HELPERS_SAMPLE_MIN_NS * 1e-9;
    gc_helpers_record(&heap->helpers,
                      sample ? (double)heap->mark_work / heap->mark_run_seconds : 0,
                      heap->helpers_invited, heap->helpers_joined > 0);
    gc_history_mark_end(heap);
}

/* Cluster roots the barrier marked get their clusters marked here, by a worker. A root whose
 * cluster dissolved meanwhile is an ordinary object now: marked, so it is scanned. */
void gc_barrier_drain_clusters(gc_heap *heap, gc_collector *w)
{
    uv_mutex_lock(&heap->barrier_lock);
    for (size_t i = 0; i < heap->barrier_clusters.count; i++) {
        gc_header *root = heap->barrier_clusters.data[i];
        if (gc_flags(root) & GC_F_CLUSTER_ROOT)
            mark_cluster(w, root);
        else
            gc_worker_push(w, root);
    }
    heap->stats.barrier_objects += (uint32_t)heap->barrier_clusters.count;
    heap->barrier_clusters.count = 0;
    uv_mutex_unlock(&heap->barrier_lock);
}
