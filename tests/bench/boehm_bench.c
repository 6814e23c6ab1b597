/*
 * boehm_bench.c - Boehm GC (bdw-gc) on the benchmark graph: 64-byte GC_MALLOC objects with
 * their 4 pointers first, held by a static root (single root) or by one GC_MALLOC'ed array
 * of n pointers (root array, big array). Collection is disabled while the graph is built so
 * that building does not pay for collections nor lose objects a malloc'ed table holds.
 *
 * Boehm fixes its number of marker threads when it initialises, so each marker count runs
 * in its own process (bench_run_child). With 2 markers the threads are started explicitly
 * (GC_start_mark_threads) and Boehm's own count (GC_get_parallel) is reported, so a build
 * without parallel marking shows up as "1 marker" instead of silently passing for 2.
 */
#define GC_THREADS
#include <gc.h>

#include "bench_peers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BOEHM_WARMUP 2 /* the issue asks for warm-up collections before timing */

typedef struct boehm_obj {
    struct boehm_obj *ref[BENCH_GRAPH_SLOTS];
    unsigned char pad[BENCH_GRAPH_PAYLOAD - BENCH_GRAPH_SLOTS * sizeof(void *)];
} boehm_obj;

_Static_assert(sizeof(boehm_obj) == BENCH_GRAPH_PAYLOAD, "Boehm's objects are 64 bytes");

/* Static data is a Boehm root: these two keep the graph alive. */
static boehm_obj *volatile boehm_single_root;
static boehm_obj **volatile boehm_root_array;

/* Builds the graph with collection disabled. Returns 0 or -1. */
static int boehm_build(const bench_graph *g)
{
    boehm_obj **objs;
    bool table_is_root = g->shape != BENCH_SHAPE_SINGLE_ROOT;

    GC_disable();
    if (table_is_root)
        objs = GC_MALLOC((size_t)g->n * sizeof *objs);
    else
        objs = malloc((size_t)g->n * sizeof *objs);
    if (!objs) {
        GC_enable();
        return -1;
    }
    for (uint32_t i = 0; i < g->n; i++) {
        objs[i] = GC_MALLOC(sizeof(boehm_obj));
        if (!objs[i]) {
            GC_enable();
            return -1;
        }
    }
    for (uint32_t i = 0; i < g->n; i++)
        for (unsigned j = 0; j < BENCH_GRAPH_SLOTS; j++) {
            uint32_t c = g->child[i][j];
            objs[i]->ref[j] = c == BENCH_GRAPH_NO_CHILD ? NULL : objs[c];
        }
    if (table_is_root) {
        boehm_root_array = objs;
    } else {
        boehm_single_root = objs[g->root];
        free(objs);
    }
    GC_enable();
    return 0;
}

int boehm_bench_collect(const bench_graph *g, unsigned markers, boehm_result *out)
{
    unsigned v = GC_get_version();
    snprintf(out->version, sizeof out->version, "%u.%u.%u", v >> 16, (v >> 8) & 0xFF, v & 0xFF);

    GC_set_markers_count(markers);
    GC_INIT();
    if (markers > 1)
        GC_start_mark_threads();
    out->markers = (unsigned)GC_get_parallel() + 1;

    double t0 = bench_now();
    if (boehm_build(g) != 0) {
        fprintf(stderr, "boehm: out of memory building the graph\n");
        return 1;
    }
    out->build = bench_now() - t0;
    out->object_size = GC_size(boehm_single_root ? boehm_single_root : boehm_root_array[0]);

    for (int i = 0; i < BOEHM_WARMUP + BENCH_REPS; i++) {
        t0 = bench_now();
        GC_gcollect();
        double t = bench_now() - t0;
        if (i >= BOEHM_WARMUP)
            bench_runs_add(&out->runs, t);
    }
    out->heap_size = GC_get_heap_size();
    return 0;
}
