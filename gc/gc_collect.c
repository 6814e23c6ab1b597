/*
 * gc_collect.c - the collection state machine (UE CollectGarbage / IncrementalPurgeGarbage).
 *
 * A collection walks the phases of gc_phase in order:
 *
 *   IDLE -> BEGIN_MARK -> MARK -> GATHER -> BEGIN_DESTROY -> FINISH_DESTROY -> FREE -> RELEASE -> IDLE
 *
 * gc_step is the one driver: it advances whatever is in flight until a deadline or a chosen
 * phase, one phase function per case. The public entry points only decide when to step, how
 * far, with which budget and under which lock:
 *   pre:   finish a pending incremental mark as a full purge; pre callbacks (no lock); lock;
 *          finish a pending purge; started callbacks
 *   mark:  flag swap and initial roots; traverse (all at once, or a slice at a time)
 *   post:  gather (all at once, or left to the purge); unlock; post-mark callbacks
 *   purge: begin_destroy, finish_destroy, free, release of memory no longer needed (all at
 *          once on a full purge, else by budget)
 */
#include "gc_internal.h"

/* What must hold where one phase ends and the next begins, checked by GC_ASSERT in the
 * checked builds only (these walks cost a pass over a list or the array). */
#ifdef GC_CHECKS
/* Nothing of a collection is left over: its lists and the barrier's queues are empty. */
static bool nothing_left(const gc_heap *heap)
{
    return heap->unreachable.count == 0 && heap->unreachable_plain.count == 0 &&
           heap->pending_finish.count == 0 && heap->purge_classes.count == 0 &&
           heap->barrier_queue.count == 0 && heap->barrier_clusters.count == 0;
}

/* Marking is complete: no worker holds work and the barrier queued nothing more. */
static bool marking_complete(const gc_heap *heap)
{
    for (uint32_t i = 0; i < heap->mark_workers; i++)
        if (!gc_worker_is_empty(heap->workers[i]))
            return false;
    return heap->barrier_queue.count == 0 && heap->barrier_clusters.count == 0;
}

/* Every gathered object that needs the destroy passes carries `flag`. */
static bool all_hooked_have(const gc_heap *heap, uint32_t flag)
{
    for (size_t i = 0; i < heap->unreachable.count; i++)
        if (!(gc_flags(heap->unreachable.data[i]) & flag))
            return false;
    return true;
}

/* No object in the array is left flagged unreachable: every gathered one was freed. */
static bool none_unreachable(const gc_heap *heap)
{
    for (uint32_t i = 0, n = gc_high_water(heap); i < n; i++) {
        const gc_header *h = gc_object_at(heap, i);
        if (h && (gc_flags(h) & GC_F_UNREACHABLE))
            return false;
    }
    return true;
}
#endif

/* The start of a mark (Lua's GCSpause), after the flag swap: this collection's statistics,
 * the clusters and assumption checks its settings ask for, the initial roots. What can fail
 * was done before (collection_begin). */
static void mark_started(gc_heap *heap)
{
    GC_ASSERT(nothing_left(heap));
    GC_ASSERT(!atomic_load(&heap->barrier_active));
    gc_stats *st = &heap->stats;
    *st = (gc_stats){ .collections = st->collections,
                      .collections_full = st->collections_full,
                      .objects_destroyed = st->objects_destroyed,
                      .try_collect_failures = st->try_collect_failures,
                      .objects_before = gc_object_count(heap) };
    heap->delayed_slices = 0;
    gc_clusters_before_mark(heap);
    if (heap->settings.verify_assumptions)
        st->assumption_violations = gc_verify_assumptions(heap, heap->diag_fn, heap->diag_userdata);
    gc_mark_begin(heap);
    gc_barrier_set_active(heap, !heap->full_purge && heap->settings.allow_incremental_reachability);
    heap->phase = GC_PHASE_MARK;
}

static void mark_finished(gc_heap *heap)
{
    GC_ASSERT(marking_complete(heap));
    gc_mark_end(heap);
    gc_barrier_set_active(heap, false);
    heap->phase = GC_PHASE_GATHER;
    heap->mark_done_pending_gather = true;
    heap->gather_cursor = 0;
    heap->unreachable.count = 0;
    heap->unreachable_plain.count = 0;
    gc_clusters_after_mark(heap); /* members stay marked: they survive this collection */
}

static void purge_finished(gc_heap *heap);

static void gather_finished(gc_heap *heap)
{
    GC_ASSERT(heap->unreachable.count + heap->unreachable_plain.count <= heap->mark_candidates);
    heap->mark_done_pending_gather = false;
    heap->stats.unreachable = (uint32_t)(heap->unreachable.count +
                                         heap->unreachable_plain.count);
    heap->stats.marked = heap->mark_candidates - heap->stats.unreachable;
    heap->purge_cursor = 0;
    heap->phase = GC_PHASE_BEGIN_DESTROY;
    if (heap->stats.unreachable == 0 && heap->pending_finish.count == 0)
        purge_finished(heap); /* nothing to destroy: no purge is pending */
}

/* The gather's own limit (gc.IncrementalGatherTimeLimit) when set, else the step's. */
static double gather_deadline(const gc_heap *heap, double deadline)
{
    double limit = heap->settings.allow_incremental_gather
                       ? heap->settings.incremental_gather_time_limit : 0;
    if (limit <= 0 || deadline <= 0)
        return deadline;
    double own = gc_now(heap) + limit;
    return own < deadline ? own : deadline;
}

/* The destroy pipeline's postconditions: every gathered object was destroyed and freed, and
 * nothing waits. */
static void purge_finished(gc_heap *heap)
{
    GC_ASSERT(nothing_left(heap) && !heap->purge_stuck);
    GC_ASSERT(none_unreachable(heap));
    heap->stats.objects_after = gc_object_count(heap);
    heap->phase = GC_PHASE_IDLE;
}

/* The whole collection, one phase per case: advances what is in flight until it reaches
 * phase `stop` (true), or the deadline passes first (false). With stop = GC_PHASE_IDLE it runs
 * to the end; reachability stops at GATHER (gather left to the purge) or BEGIN_DESTROY. A
 * collection with nothing to destroy ends at IDLE, which every stop counts as reached. */
static bool gc_step(gc_heap *heap, double deadline, gc_phase stop)
{
    for (;;) {
        if (heap->phase == GC_PHASE_IDLE || (stop != GC_PHASE_IDLE && heap->phase >= stop))
            return true;
        double t0 = gc_now(heap);
        bool done = false;
        switch (heap->phase) {
        case GC_PHASE_IDLE:
            return true;
        case GC_PHASE_BEGIN_MARK:
            mark_started(heap);
            heap->stats.mark_seconds += gc_now(heap) - t0;
            done = true;
            break;
        case GC_PHASE_MARK:
            heap->stats.mark_slices++;
            done = gc_mark_run(heap, deadline);
            heap->stats.mark_seconds += gc_now(heap) - t0;
            if (done)
                mark_finished(heap);
            break;
        case GC_PHASE_GATHER:
            done = gc_gather_run(heap, gather_deadline(heap, deadline));
            heap->stats.gather_seconds += gc_now(heap) - t0;
            if (done)
                gather_finished(heap);
            break;
        case GC_PHASE_BEGIN_DESTROY:
            done = gc_purge_begin_destroy(heap, deadline);
            heap->stats.purge_seconds += gc_now(heap) - t0;
            if (done) {
                GC_ASSERT(all_hooked_have(heap, GC_F_BEGIN_DESTROYED));
                heap->phase = GC_PHASE_FINISH_DESTROY;
            }
            break;
        case GC_PHASE_FINISH_DESTROY:
            done = gc_purge_finish_destroy(heap, deadline);
            heap->stats.purge_seconds += gc_now(heap) - t0;
            if (done) {
                GC_ASSERT(heap->pending_finish.count == 0);
                GC_ASSERT(all_hooked_have(heap, GC_F_FINISH_DESTROYED));
                heap->phase = GC_PHASE_FREE;
            }
            break;
        case GC_PHASE_FREE:
            done = gc_purge_free(heap, deadline);
            heap->stats.purge_seconds += gc_now(heap) - t0;
            if (done) {
                GC_ASSERT(nothing_left(heap));
                heap->phase = GC_PHASE_RELEASE;
            }
            break;
        case GC_PHASE_RELEASE:
            done = gc_release_run(heap, deadline);
            heap->stats.release_seconds += gc_now(heap) - t0;
            if (done)
                purge_finished(heap);
            break;
        }
        if (!done)
            return false;
    }
}

static double deadline_after(const gc_heap *heap, double limit)
{
    return limit > 0 ? gc_now(heap) + limit : 0;
}

static void note_slice(gc_heap *heap, double started)
{
    double took = gc_now(heap) - started;
    if (took > heap->stats.longest_slice_seconds)
        heap->stats.longest_slice_seconds = took;
}

/* Marking and gathering happen under the GC lock; the lock is released when reachability
 * is done (or suspended). When gathering is not left to the purge, it is the last part of
 * reachability and shares the slice's deadline, so an incremental slice never overruns by a
 * whole pass over the array. Returns true when reachability (and that gather) is complete. */
static bool reachability_slice(gc_heap *heap, double deadline, bool gather_now)
{
    double t0 = gc_now(heap);
    bool done = gc_step(heap, deadline, gather_now ? GC_PHASE_BEGIN_DESTROY : GC_PHASE_GATHER);
    note_slice(heap, t0);
    heap->reachability_pending = !done;
    return done;
}

/* After reachability completes: statistics and the post-mark callbacks (lock released). */
static void reachability_finished(gc_heap *heap)
{
    heap->stats.collections++;
    if (heap->full_purge)
        heap->stats.collections_full++;
    gc_fire(heap, GC_EVENT_POST_MARK);
}

static bool gather_is_immediate(const gc_heap *heap)
{
    return heap->full_purge || !heap->settings.allow_incremental_gather;
}

/* Runs a pending incremental mark to its end and purges everything, as UE does when a new
 * collection is requested while one is still marking. */
static void finish_pending_as_full(gc_heap *heap)
{
    if (!heap->reachability_pending)
        return;
    heap->full_purge = true;
    gc_lock_acquire(heap, true);
    reachability_slice(heap, 0, true);
    gc_lock_release(heap);
    reachability_finished(heap);
    gc_step(heap, 0, GC_PHASE_IDLE);
    gc_fire(heap, GC_EVENT_POST);
}

/* Whether a collection may start now; a try gives up before doing anything while another
 * thread holds a scope guard (UE TryCollectGarbage), and after enough failed tries it waits
 * like gc_collect. */
static gc_result collect_admitted(gc_heap *heap, uint32_t keep_flags, bool try_only)
{
    if (!heap)
        return GC_E_NULL;
    if (keep_flags & ~GC_OBJ_USER_MASK)
        return GC_E_INVALID;
    if (heap->in_collect)
        return GC_E_STATE; /* called from one of this collection's callbacks */
    bool force = !try_only || (heap->settings.num_retries_before_forcing > 0 &&
                               heap->try_collect_failures_in_row >=
                                   heap->settings.num_retries_before_forcing);
    if (!force && !gc_lock_is_free(heap)) {
        heap->try_collect_failures_in_row++;
        heap->stats.try_collect_failures++;
        return GC_E_LOCKED;
    }
    if (heap->purge_stuck && !gc_incremental_purge(heap, 0))
        return GC_E_STATE; /* objects still not ready to finish: a new mark would lose them */
    heap->try_collect_failures_in_row = 0;
    return GC_OK;
}

/* Under the GC lock: finishes the last purge, fires STARTED, flips the mark bit and takes
 * the room the collection's lists need; on success the collection is at BEGIN_MARK, on
 * failure nothing has started. */
static gc_result collection_begin(gc_heap *heap, uint32_t keep_flags, bool full_purge)
{
    if (!gc_step(heap, 0, GC_PHASE_IDLE))
        return GC_E_STATE; /* the last purge is stuck (see purge_stuck) */
    gc_fire(heap, GC_EVENT_STARTED);
    if (gc_mark_flip(heap) != GC_OK)
        return GC_E_NOMEM; /* no room for the collection's lists */
    heap->keep_flags = keep_flags;
    heap->full_purge = full_purge;
    heap->phase = GC_PHASE_BEGIN_MARK;
    heap->reachability_pending = true;
    return GC_OK;
}

/* pre, mark, post and (full) purge, as the file's banner lists them; one exit. */
static gc_result collect(gc_heap *heap, uint32_t keep_flags, bool full_purge, bool try_only)
{
    gc_result r = collect_admitted(heap, keep_flags, try_only);
    if (r != GC_OK)
        return r;
    heap->in_collect = true;
    finish_pending_as_full(heap);
    gc_fire(heap, GC_EVENT_PRE);
    gc_lock_acquire(heap, true);
    r = collection_begin(heap, keep_flags, full_purge);
    bool incremental = !full_purge && heap->settings.allow_incremental_reachability;
    double limit = incremental ? heap->settings.incremental_reachability_time_limit : 0;
    bool reached = r == GC_OK &&
                   reachability_slice(heap, deadline_after(heap, limit), gather_is_immediate(heap));
    gc_lock_release(heap);
    if (reached) {
        reachability_finished(heap);
        if (full_purge)
            gc_step(heap, 0, GC_PHASE_IDLE);
    }
    heap->in_collect = false;
    gc_fire(heap, GC_EVENT_POST);
    return r; /* a mark not reached yet continues in gc_incremental_reachability_step */
}

gc_result gc_collect(gc_heap *heap, uint32_t keep_flags, bool full_purge)
{
    return collect(heap, keep_flags, full_purge, false);
}

gc_result gc_try_collect(gc_heap *heap, uint32_t keep_flags, bool full_purge)
{
    return collect(heap, keep_flags, full_purge, true);
}

bool gc_incremental_reachability_step(gc_heap *heap)
{
    if (!heap || !heap->reachability_pending)
        return true;
    if (heap->delayed_slices < heap->settings.delay_reachability_iterations) {
        heap->delayed_slices++;
        return false;
    }
    heap->delayed_slices = 0;
    gc_lock_acquire(heap, true);
    double limit = heap->settings.allow_incremental_reachability
                       ? heap->settings.incremental_reachability_time_limit
                       : 0;
    bool done = reachability_slice(heap, deadline_after(heap, limit), gather_is_immediate(heap));
    gc_lock_release(heap);
    if (done)
        reachability_finished(heap);
    return done;
}

bool gc_incremental_purge(gc_heap *heap, double time_limit)
{
    if (!heap || heap->reachability_pending)
        return true; /* nothing to purge while marking */
    if (heap->phase == GC_PHASE_IDLE)
        return true;
    double t0 = gc_now(heap);
    bool done = gc_step(heap, deadline_after(heap, time_limit), GC_PHASE_IDLE);
    note_slice(heap, t0);
    return done;
}

bool gc_is_incremental_reachability_pending(const gc_heap *heap)
{
    return heap && heap->reachability_pending;
}

bool gc_is_incremental_purge_pending(const gc_heap *heap)
{
    return heap && !heap->reachability_pending && heap->phase > GC_PHASE_MARK;
}

bool gc_is_collecting(const gc_heap *heap)
{
    return heap && heap->gc_locked;
}
