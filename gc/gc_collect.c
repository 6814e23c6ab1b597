/*
 * gc_collect.c - the collection state machine (UE CollectGarbage / IncrementalPurgeGarbage).
 *
 * A collection walks the phases of gc_phase in order:
 *
 *   IDLE -> MARK -> GATHER -> BEGIN_DESTROY -> FINISH_DESTROY -> FREE -> IDLE
 *
 * gc_step is the one driver: it advances whatever is in flight until a deadline or a chosen
 * phase, one phase function per case. The public entry points only decide when to step, how
 * far, with which budget and under which lock:
 *   pre:   finish a pending incremental mark as a full purge; pre callbacks (no lock); lock;
 *          finish a pending purge; started callbacks
 *   mark:  flag swap and initial roots; traverse (all at once, or a slice at a time)
 *   post:  gather (all at once, or left to the purge); unlock; post-mark callbacks
 *   purge: begin_destroy, finish_destroy, free (all at once on a full purge, else by budget)
 */
#include "gc_internal.h"

static void mark_finished(gc_heap *heap)
{
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

static void purge_finished(gc_heap *heap)
{
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
            if (done)
                heap->phase = GC_PHASE_FINISH_DESTROY;
            break;
        case GC_PHASE_FINISH_DESTROY:
            done = gc_purge_finish_destroy(heap, deadline);
            heap->stats.purge_seconds += gc_now(heap) - t0;
            if (done)
                heap->phase = GC_PHASE_FREE;
            break;
        case GC_PHASE_FREE:
            done = gc_purge_free(heap, deadline);
            heap->stats.purge_seconds += gc_now(heap) - t0;
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

static gc_result collect(gc_heap *heap, uint32_t keep_flags, bool full_purge, bool try_only)
{
    if (!heap)
        return GC_E_NULL;
    if (keep_flags & ~GC_OBJ_USER_MASK)
        return GC_E_INVALID;
    if (heap->in_collect)
        return GC_E_STATE; /* called from one of this collection's callbacks */

    /* A try gives up before doing anything while another thread holds a scope guard (UE
     * TryCollectGarbage); after enough failed tries it waits like gc_collect. */
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
    heap->in_collect = true;

    /* pre */
    finish_pending_as_full(heap);
    gc_fire(heap, GC_EVENT_PRE);
    gc_lock_acquire(heap, true);
    if (heap->phase != GC_PHASE_IDLE && !gc_step(heap, 0, GC_PHASE_IDLE)) {
        gc_lock_release(heap); /* the last purge is stuck (see purge_stuck) */
        heap->in_collect = false;
        gc_fire(heap, GC_EVENT_POST);
        return GC_E_STATE;
    }
    gc_fire(heap, GC_EVENT_STARTED);

    /* mark */
    gc_stats last = heap->stats;
    uint64_t collections = heap->stats.collections, full = heap->stats.collections_full;
    uint64_t destroyed = heap->stats.objects_destroyed, failures = heap->stats.try_collect_failures;
    heap->stats = (gc_stats){ 0 };
    heap->stats.collections = collections;
    heap->stats.collections_full = full;
    heap->stats.objects_destroyed = destroyed;
    heap->stats.try_collect_failures = failures;
    heap->stats.objects_before = gc_object_count(heap);
    heap->keep_flags = keep_flags;
    heap->full_purge = full_purge;
    heap->delayed_slices = 0;
    bool incremental = !full_purge && heap->settings.allow_incremental_reachability;
    double t0 = gc_now(heap);
    gc_clusters_before_mark(heap);
    if (heap->settings.verify_assumptions)
        heap->stats.assumption_violations =
            gc_verify_assumptions(heap, heap->diag_fn, heap->diag_userdata);
    heap->phase = GC_PHASE_MARK;
    heap->reachability_pending = true;
    if (gc_mark_begin(heap) != GC_OK) {
        heap->phase = GC_PHASE_IDLE; /* no room for the collection's lists: nothing started */
        heap->reachability_pending = false;
        heap->stats = last;
        gc_lock_release(heap);
        heap->in_collect = false;
        gc_fire(heap, GC_EVENT_POST);
        return GC_E_NOMEM;
    }
    heap->stats.mark_seconds += gc_now(heap) - t0;
    if (incremental)
        gc_barrier_set_active(heap, true);
    double limit = incremental ? heap->settings.incremental_reachability_time_limit : 0;
    bool done = reachability_slice(heap, incremental ? t0 + limit : 0, gather_is_immediate(heap));
    gc_lock_release(heap);
    if (!done) {
        heap->in_collect = false;
        gc_fire(heap, GC_EVENT_POST);
        return GC_OK; /* marking continues in gc_incremental_reachability_step */
    }

    /* post and purge */
    reachability_finished(heap);
    if (full_purge)
        gc_step(heap, 0, GC_PHASE_IDLE);
    heap->in_collect = false;
    gc_fire(heap, GC_EVENT_POST);
    return GC_OK;
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
