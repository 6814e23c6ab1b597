/*
 * bench_peers.h - the collectors reap is compared with, each building its own objects from
 * the same edge table (bench_graph.h):
 *
 *   floor   a hand-written minimal precise marker (floor_bench.c): the speed of marking this
 *           graph with nothing but plain structs, mark bits beside them in a bitmap, a mark
 *           stack and a prefetch queue.
 *   Boehm   bdw-gc, conservative mark-sweep (boehm_bench.c), 1 and 2 marker threads.
 *   Lua 5.4 incremental mark-sweep over tables (lua_bench.c).
 *
 * Boehm and Lua run in child processes (bench_run_child): their result structs are plain
 * data so they can come back through shared memory.
 */
#ifndef REAP_BENCH_PEERS_H
#define REAP_BENCH_PEERS_H

#include "bench_graph.h"
#include "bench_util.h"

#include <stddef.h>
#include <stdint.h>

/* ---- floor ----------------------------------------------------------------------------- */

typedef struct floor_result {
    bench_runs runs;         /* plain structs, mark bits in a side bitmap: THE floor */
    bench_runs header_runs;  /* mark word in a header before each object (reap's layout) */
    double build;            /* seconds to allocate and wire the plain structs */
    uint64_t marked;         /* objects marked in the last run (sanity check) */
    uint64_t header_marked;
} floor_result;

/* Builds the graph as plain structs in both layouts and marks each BENCH_WARMUP +
 * BENCH_REPS times. Returns 0, or -1 if out of memory. */
int floor_bench_mark(const bench_graph *g, floor_result *out);

/* ---- Boehm GC ---------------------------------------------------------------------------- */

typedef struct boehm_result {
    bench_runs runs;          /* GC_gcollect with everything live */
    double build;
    unsigned markers;         /* marker threads in use, as Boehm reports (GC_get_parallel+1) */
    size_t object_size;       /* bytes Boehm gives a 64-byte request (GC_size) */
    size_t heap_size;         /* GC_get_heap_size after the build */
    char version[32];
} boehm_result;

/* Must run in a fresh process (the marker count is fixed at initialisation): initialises
 * Boehm with `markers` marker threads, builds the graph with GC_MALLOC and times
 * collections. Returns 0, or non-zero on failure. */
int boehm_bench_collect(const bench_graph *g, unsigned markers, boehm_result *out);

/* ---- Lua 5.4 ----------------------------------------------------------------------------- */

typedef struct lua_result {
    bench_runs runs;          /* collectgarbage("collect") with everything live */
    double build;
    bench_slices steps;       /* STEPS only: one whole cycle of lua_gc(LUA_GCSTEP, 0) */
    char version[32];
} lua_result;

/* Builds the graph from tables with a 4-entry array part and times full collections.
 * Returns 0, or non-zero on failure. */
int lua_bench_collect(const bench_graph *g, lua_result *out);
/* Builds the graph, then drives one incremental cycle in basic steps, timing each. */
int lua_bench_steps(const bench_graph *g, lua_result *out);

#endif /* REAP_BENCH_PEERS_H */
