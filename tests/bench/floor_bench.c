/*
 * floor_bench.c - the floor: the least a precise, single-threaded marker must do on the
 * benchmark graph. Objects are 64-byte structs in one array with their 4 reference slots
 * first; mark bits live in a bitmap beside the array, so testing a child touches the bitmap
 * (128 KiB for 1M objects, cache-resident) and never the child itself. Only objects that
 * are newly marked get pushed; a popped object is prefetched and parked in a short FIFO
 * until its cache line has had time to arrive, then scanned.
 *
 * Nothing else a real collector needs (classes, schemas, flags, roots of several kinds,
 * sweeping) is here: reap's mark time divided by this one is its overhead over the floor.
 */
#include "bench_peers.h"

#include <stdlib.h>
#include <string.h>

#define FLOOR_QUEUE 8 /* prefetch distance in objects; a power of two */

typedef struct floor_obj {
    struct floor_obj *ref[BENCH_GRAPH_SLOTS];
    unsigned char pad[BENCH_GRAPH_PAYLOAD - BENCH_GRAPH_SLOTS * sizeof(void *)];
} floor_obj;

_Static_assert(sizeof(floor_obj) == BENCH_GRAPH_PAYLOAD, "the floor's objects are 64 bytes");

typedef struct floor_heap {
    floor_obj *objs;       /* n objects */
    uint32_t n;
    uint64_t *bits;        /* one mark bit per object */
    floor_obj **roots;
    uint32_t root_count;
    floor_obj **stack;     /* each object is pushed at most once: n entries suffice */
} floor_heap;

static inline int floor_mark_bit(uint64_t *bits, const floor_obj *base, const floor_obj *o)
{
    size_t i = (size_t)(o - base);
    uint64_t m = 1ull << (i & 63);
    uint64_t *w = &bits[i >> 6];
    if (*w & m)
        return 0;
    *w |= m;
    return 1;
}

/* Marks everything reachable from the roots; returns how many objects were marked. */
static uint64_t floor_mark(floor_heap *h)
{
    floor_obj *const base = h->objs;
    uint64_t *const bits = h->bits;
    floor_obj **const stack = h->stack;
    floor_obj *queue[FLOOR_QUEUE];
    size_t sp = 0;
    unsigned head = 0, tail = 0, queued = 0;
    uint64_t marked = 0;

    memset(bits, 0, ((size_t)h->n + 63) / 64 * sizeof *bits);
    for (uint32_t i = 0; i < h->root_count; i++)
        if (floor_mark_bit(bits, base, h->roots[i]))
            stack[sp++] = h->roots[i];
    for (;;) {
        while (queued < FLOOR_QUEUE && sp > 0) {
            floor_obj *o = stack[--sp];
            __builtin_prefetch(o);
            queue[tail] = o;
            tail = (tail + 1) & (FLOOR_QUEUE - 1);
            queued++;
        }
        if (queued == 0)
            break;
        floor_obj *o = queue[head];
        head = (head + 1) & (FLOOR_QUEUE - 1);
        queued--;
        marked++;
        for (unsigned j = 0; j < BENCH_GRAPH_SLOTS; j++) {
            floor_obj *c = o->ref[j];
            if (c && floor_mark_bit(bits, base, c))
                stack[sp++] = c;
        }
    }
    return marked;
}

static void floor_heap_free(floor_heap *h)
{
    free(h->objs);
    free(h->bits);
    free(h->roots);
    free(h->stack);
}

static int floor_heap_build(floor_heap *h, const bench_graph *g)
{
    memset(h, 0, sizeof *h);
    h->n = g->n;
    h->objs = aligned_alloc(64, (size_t)g->n * sizeof(floor_obj));
    h->bits = calloc(((size_t)g->n + 63) / 64, sizeof *h->bits);
    h->stack = malloc((size_t)g->n * sizeof *h->stack);
    h->root_count = g->shape == BENCH_SHAPE_SINGLE_ROOT ? 1 : g->n;
    h->roots = malloc((size_t)h->root_count * sizeof *h->roots);
    if (!h->objs || !h->bits || !h->stack || !h->roots) {
        floor_heap_free(h);
        return -1;
    }
    memset(h->objs, 0, (size_t)g->n * sizeof(floor_obj));
    for (uint32_t i = 0; i < g->n; i++)
        for (unsigned j = 0; j < BENCH_GRAPH_SLOTS; j++) {
            uint32_t c = g->child[i][j];
            h->objs[i].ref[j] = c == BENCH_GRAPH_NO_CHILD ? NULL : &h->objs[c];
        }
    if (g->shape == BENCH_SHAPE_SINGLE_ROOT)
        h->roots[0] = &h->objs[g->root];
    else
        for (uint32_t i = 0; i < g->n; i++)
            h->roots[i] = &h->objs[i];
    return 0;
}

int floor_bench_mark(const bench_graph *g, floor_result *out)
{
    floor_heap h;
    memset(out, 0, sizeof *out);
    double t0 = bench_now();
    if (floor_heap_build(&h, g) != 0)
        return -1;
    out->build = bench_now() - t0;
    for (int i = 0; i < BENCH_WARMUP + BENCH_REPS; i++) {
        t0 = bench_now();
        out->marked = floor_mark(&h);
        double t = bench_now() - t0;
        if (i >= BENCH_WARMUP)
            bench_runs_add(&out->runs, t);
    }
    floor_heap_free(&h);
    return 0;
}
