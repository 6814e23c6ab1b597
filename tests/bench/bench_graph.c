/*
 * bench_graph.c - generators for the standard benchmark graph (bench_graph.h) and the
 * big-array graph. The order in which random numbers are drawn is part of the definition:
 * change nothing here without saying so in bench_graph.h, or comparisons across versions lie.
 */
#include "bench_graph.h"

#include <stdlib.h>

__extension__ typedef unsigned __int128 bench_u128;

void bench_rng_seed(bench_rng *r, uint64_t seed)
{
    r->state = seed;
}

/* splitmix64: a Weyl sequence step followed by a 64-bit finaliser. */
uint64_t bench_rng_next(bench_rng *r)
{
    uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint32_t bench_rng_below(bench_rng *r, uint32_t n)
{
    return (uint32_t)(((bench_u128)bench_rng_next(r) * n) >> 64);
}

const char *bench_shape_name(bench_shape shape)
{
    switch (shape) {
    case BENCH_SHAPE_ROOT_ARRAY: return "root array";
    case BENCH_SHAPE_SINGLE_ROOT: return "single root";
    case BENCH_SHAPE_BIG_ARRAY: return "one big array";
    }
    return "?";
}

const char *bench_shape_key(bench_shape shape)
{
    switch (shape) {
    case BENCH_SHAPE_ROOT_ARRAY: return "root_array";
    case BENCH_SHAPE_SINGLE_ROOT: return "single_root";
    case BENCH_SHAPE_BIG_ARRAY: return "big_array";
    }
    return "unknown";
}

/* For i in 0..n-1, for j in 0..3: child[i][j] = below(n). */
static void generate_root_array(bench_graph *g, bench_rng *rng)
{
    for (uint32_t i = 0; i < g->n; i++)
        for (uint32_t j = 0; j < BENCH_GRAPH_SLOTS; j++)
            g->child[i][j] = bench_rng_below(rng, g->n);
}

/* A random spanning tree hung from perm[0], then random edges in the slots it left open.
 * Open slots are kept in a list as object * 4 + slot; a slot is taken by swap-remove, and the
 * ones still open at the end are filled in list order. */
static int generate_single_root(bench_graph *g, bench_rng *rng)
{
    uint32_t n = g->n;
    uint32_t *perm = malloc((size_t)n * sizeof *perm);
    uint32_t *open = malloc(((size_t)n * BENCH_GRAPH_SLOTS + 1) * sizeof *open);
    if (!perm || !open) {
        free(perm);
        free(open);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++)
        perm[i] = i;
    for (uint32_t i = n - 1; i >= 1; i--) {
        uint32_t j = bench_rng_below(rng, i + 1);
        uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }

    size_t open_count = 0;
    for (uint32_t s = 0; s < BENCH_GRAPH_SLOTS; s++)
        open[open_count++] = perm[0] * BENCH_GRAPH_SLOTS + s;
    for (uint32_t k = 1; k < n; k++) {
        uint32_t pick = bench_rng_below(rng, (uint32_t)open_count);
        uint32_t slot = open[pick];
        open[pick] = open[--open_count];
        g->child[slot / BENCH_GRAPH_SLOTS][slot % BENCH_GRAPH_SLOTS] = perm[k];
        for (uint32_t s = 0; s < BENCH_GRAPH_SLOTS; s++)
            open[open_count++] = perm[k] * BENCH_GRAPH_SLOTS + s;
    }
    for (size_t i = 0; i < open_count; i++) {
        uint32_t slot = open[i];
        g->child[slot / BENCH_GRAPH_SLOTS][slot % BENCH_GRAPH_SLOTS] = bench_rng_below(rng, n);
    }
    g->root = perm[0];
    free(perm);
    free(open);
    return 0;
}

int bench_graph_generate(bench_graph *g, bench_shape shape, uint32_t n)
{
    bench_rng rng;
    g->shape = shape;
    g->n = n;
    g->root = 0;
    g->child = malloc((size_t)n * sizeof *g->child);
    if (!g->child || n == 0 || n > (UINT32_MAX - 1) / BENCH_GRAPH_SLOTS) {
        free(g->child);
        g->child = NULL;
        return -1;
    }
    bench_rng_seed(&rng, BENCH_GRAPH_SEED);
    switch (shape) {
    case BENCH_SHAPE_ROOT_ARRAY:
        generate_root_array(g, &rng);
        return 0;
    case BENCH_SHAPE_SINGLE_ROOT:
        if (generate_single_root(g, &rng) == 0)
            return 0;
        break;
    case BENCH_SHAPE_BIG_ARRAY:
        for (uint32_t i = 0; i < n; i++)
            for (uint32_t j = 0; j < BENCH_GRAPH_SLOTS; j++)
                g->child[i][j] = BENCH_GRAPH_NO_CHILD;
        return 0;
    }
    free(g->child);
    g->child = NULL;
    return -1;
}

void bench_graph_free(bench_graph *g)
{
    free(g->child);
    g->child = NULL;
}

uint32_t bench_graph_size(void)
{
    const char *s = getenv("REAP_BENCH_N");
    if (!s || !*s)
        return BENCH_GRAPH_N;
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    if (*end || v < 16 || v > (UINT32_MAX - 1) / BENCH_GRAPH_SLOTS)
        return BENCH_GRAPH_N;
    return (uint32_t)v;
}

uint64_t bench_graph_digest(const bench_graph *g)
{
    /* FNV-1a over the 32-bit words, then the root. */
    uint64_t h = 0xCBF29CE484222325ull;
    for (uint32_t i = 0; i < g->n; i++)
        for (uint32_t j = 0; j < BENCH_GRAPH_SLOTS; j++) {
            h ^= g->child[i][j];
            h *= 0x100000001B3ull;
        }
    h ^= g->root;
    h *= 0x100000001B3ull;
    return h;
}
