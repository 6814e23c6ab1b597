/*
 * bench_graph.h - the graphs every collector in the benchmark builds its objects from.
 *
 * The standard benchmark graph: N objects, each with 4 reference slots,
 * edges drawn from splitmix64 seeded with 0x5EEDF00D and below(n) = (splitmix64() * n) >> 64.
 * Generators produce an edge table (child[i][j] = index of the object slot j of object i
 * refers to) and the roots; each collector then creates its own objects in index order and
 * wires them from the same table, so every comparison runs on the same edges.
 *
 * Each shape starts its own generator from the seed: the tables do not depend on which
 * other shapes were generated first.
 */
#ifndef REAP_BENCH_GRAPH_H
#define REAP_BENCH_GRAPH_H

#include <stdint.h>

#define BENCH_GRAPH_N 1000000u       /* the standard graph */
#define BENCH_GRAPH_SLOTS 4u
#define BENCH_GRAPH_PAYLOAD 64u       /* bytes per object, the 4 slots included */
#define BENCH_GRAPH_SEED 0x5EEDF00Dull
#define BENCH_GRAPH_NO_CHILD UINT32_MAX /* an empty slot (only in the non-standard graphs) */

#define BENCH_ACTORS 10000u           /* actor-like graph: rooted actors ... */
#define BENCH_COMPONENTS_PER_ACTOR 20u /* ... each owning this many components */

typedef enum bench_shape {
    BENCH_SHAPE_ROOT_ARRAY,   /* every object is held by one root array */
    BENCH_SHAPE_SINGLE_ROOT,  /* one root object; the rest reachable through the edges */
    BENCH_SHAPE_BIG_ARRAY,    /* one object holds an array of N references to N leaves */
} bench_shape;

typedef struct bench_graph {
    bench_shape shape;
    uint32_t n;
    uint32_t (*child)[BENCH_GRAPH_SLOTS]; /* n rows; BENCH_GRAPH_NO_CHILD = empty slot */
    uint32_t root;   /* SINGLE_ROOT: the root object; otherwise unused */
} bench_graph;

/* splitmix64 generator state. */
typedef struct bench_rng {
    uint64_t state;
} bench_rng;

void bench_rng_seed(bench_rng *r, uint64_t seed);
uint64_t bench_rng_next(bench_rng *r);
/* A uniform integer in [0, n) by the multiply-shift rule above. */
uint32_t bench_rng_below(bench_rng *r, uint32_t n);

/* Generates the given shape over n objects (n = BENCH_GRAPH_N for the standard graph).
 * ROOT_ARRAY and SINGLE_ROOT are the standard graph exactly. BIG_ARRAY has no edges
 * between the n objects (every slot empty): all marking work is the one array, which is
 * what it is meant to test. Returns 0, or -1 if out of memory. Free with bench_graph_free. */
int bench_graph_generate(bench_graph *g, bench_shape shape, uint32_t n);
void bench_graph_free(bench_graph *g);
const char *bench_shape_name(bench_shape shape);  /* "root array", ... */
const char *bench_shape_key(bench_shape shape);   /* "root_array", ... (JSON keys) */

/* The object count to use: BENCH_GRAPH_N, unless the environment variable REAP_BENCH_N
 * asks for another (for quick trials; such runs are not the standard graph and say so). */
uint32_t bench_graph_size(void);

/* An order-dependent digest of the edge table and root, printed so that runs of different
 * programs can be seen to use identical edges. */
uint64_t bench_graph_digest(const bench_graph *g);

/* The actor-like graph has no random part: actor a (0 <= a < BENCH_ACTORS) is a root that
 * references its components a*20 .. a*20+19 from an array, and each component's outer is
 * its actor; a component's first slot refers back to its actor, the other three are empty.
 * Collectors build it directly from these constants. */

#endif /* REAP_BENCH_GRAPH_H */
