/*
 * gc_testing.h - hooks that let tests drive the collector into chosen states and check its
 * invariants. Compiled into tests only (libreap_gc_testing.a), never into the server.
 */
#ifndef REAP_GC_TESTING_H
#define REAP_GC_TESTING_H

#include "reap_gc.h"

/* A clock tests advance by hand. */
typedef struct gc_fake_clock {
    double now;
    double step_per_read; /* added after every read, to make time pass inside loops */
} gc_fake_clock;
double gc_fake_clock_read(void *userdata);

/* A clock that runs only while the collector works: it reads `base` plus the work the heap
 * has done since it was created (every sliced loop counts what it does), at `unit_seconds`
 * per GC_TESTING_WORK_UNIT, the work a loop does between two looks at the clock. A step that
 * keeps to its budget then takes at most its budget plus one unit; one that ignores it shows
 * as a long step. Set `heap` once the heap exists (it reads `base` until then). */
#define GC_TESTING_WORK_UNIT 1024u
typedef struct gc_work_clock {
    gc_heap *heap;
    double base;          /* advanced by hand for time between steps */
    double unit_seconds;
} gc_work_clock;
double gc_work_clock_read(void *userdata);

/* The heap's work so far, in GC_TESTING_WORK_UNIT per unit (collector thread and workers). */
uint64_t gc_testing_work_done(const gc_heap *heap);

/* Checks the heap's invariants; returns NULL if they hold, else a static description of the
 * first violation: live count matches the array, free list is sound, pin table entries match
 * flags, no object is half-destroyed while the heap is idle, names resolve to their objects. */
const char *gc_testing_check(gc_heap *heap);

/* True while a collection is waiting for scope guards to leave. */
bool gc_testing_gc_is_waiting(gc_heap *heap);

/* The phase in flight: "idle", "mark", "gather", "begin_destroy", "finish_destroy", "free",
 * "release". */
const char *gc_testing_phase(const gc_heap *heap);

/* Free-list length and highest index handed out. */
uint32_t gc_testing_free_count(const gc_heap *heap);
uint32_t gc_testing_high_water(const gc_heap *heap);

/* Whether obj is marked in the current (or last) reachability analysis. */
bool gc_testing_is_marked(const gc_heap *heap, const void *obj);

/* Address of the item of obj in the object array (to check stability while it grows). */
const void *gc_testing_item_address(const gc_heap *heap, const void *obj);

/* Sets and clears internal flag bits directly, to plant states the API refuses to make.
 * Bits: "root", "garbage", "cluster_root", "in_cluster". */
void gc_testing_force_flag(gc_heap *heap, void *obj, const char *flag, bool on);

/* Pool threads that never ask to join a mark (as if the scheduler never gave them a CPU in
 * time): the caller marks alone and withdraws them. */
void gc_testing_hold_marker_threads(gc_heap *heap, bool held);

/* Moves up to n of the objects marker `from` has queued (its most recently found) to marker
 * `to`, as a slice that ran out of time can leave them: a worker other than the caller
 * holding a remnant. Only between slices of a mark with that many workers. Returns how many
 * moved. */
uint32_t gc_testing_move_marking_work(gc_heap *heap, uint32_t from, uint32_t to, uint32_t n);

/* Work blocks (4 KiB lists of objects to scan) the heap's markers have allocated so far. */
uint64_t gc_testing_blocks_allocated(const gc_heap *heap);

/* Plants what gc_helpers_invite knows of this heap: its rates of marking alone and with
 * the marker threads, in work units a second (0: not measured), each as two fresh samples;
 * no bench, no invited mark they missed, and no object count (the next mark's is the
 * graph's). */
void gc_testing_helper_rates(gc_heap *heap, double alone_rate, double helped_rate);

/* Fault injection: the allocation `nth` from now (0 = the next) fails, and every later one
 * succeeds again; a negative nth turns it off. Process-wide. */
void gc_testing_fail_allocation(long nth);

#endif
