/*
 * floor_bench.c - the floor: the least a precise, single-threaded marker must do on the
 * benchmark graph. Nothing a real collector also needs (classes, schemas, several kinds of
 * roots, sweeping) is here, so reap's mark time divided by this one is its overhead.
 *
 * Two layouts, both one array of plain structs with the 4 reference slots at the start of
 * the 64-byte payload:
 *
 *   bitmap  (THE floor) mark bits beside the objects, in a side bitmap (128 KiB for 1M
 *           objects, cache-resident): a child is tested without touching it; an object is
 *           touched only to scan it, after its prefetch has sat in a short FIFO.
 *   header  (for information) each object carries its mark word in a 16-byte header before
 *           the payload - reap's own layout. Testing a child means touching it, so every
 *           reference found is prefetched and parked in the FIFO; when it leaves the FIFO its
 *           line has arrived and its mark is tested and set. Marks are "equal to the current
 *           epoch", so starting a mark clears nothing. This shows what the layout costs.
 */
#include "bench_peers.h"

#include <stdlib.h>
#include <string.h>

#ifndef FLOOR_QUEUE
#define FLOOR_QUEUE 16 /* prefetch distance in references / objects; a power of two */
#endif

/* ---- header layout ------------------------------------------------------------------- */

typedef struct floor_hobj {
    uint32_t mark;           /* == epoch when marked */
    uint32_t unused[3];
    struct floor_hobj *ref[BENCH_GRAPH_SLOTS];
    unsigned char pad[BENCH_GRAPH_PAYLOAD - BENCH_GRAPH_SLOTS * sizeof(void *)];
} floor_hobj;

_Static_assert(sizeof(floor_hobj) == 16 + BENCH_GRAPH_PAYLOAD, "16-byte header + payload");

typedef struct floor_hheap {
    floor_hobj *objs;
    uint32_t n;
    uint32_t epoch;
    floor_hobj **roots;
    uint32_t root_count;
    floor_hobj **stack;      /* each object is pushed at most once: n entries suffice */
} floor_hheap;

/* Marks everything reachable from the roots; returns how many objects were marked. */
static uint64_t floor_hmark(floor_hheap *h)
{
    floor_hobj **const stack = h->stack;
    floor_hobj *fifo[FLOOR_QUEUE];
    const uint32_t epoch = ++h->epoch;
    size_t sp = 0;
    unsigned head = 0, queued = 0;
    uint64_t marked = 0;
    uint32_t next_root = 0;

    for (;;) {
        /* Feed the FIFO: from the object on top of the stack, else from the roots. */
        if (sp > 0) {
            floor_hobj *o = stack[--sp];
            for (unsigned j = 0; j < BENCH_GRAPH_SLOTS; j++) {
                floor_hobj *c = o->ref[j];
                if (!c)
                    continue;
                __builtin_prefetch(c, 1);
                fifo[(head + queued++) & (FLOOR_QUEUE - 1)] = c;
                if (queued == FLOOR_QUEUE) {
                    floor_hobj *x = fifo[head];
                    head = (head + 1) & (FLOOR_QUEUE - 1);
                    queued--;
                    if (x->mark != epoch) {
                        x->mark = epoch;
                        stack[sp++] = x;
                        marked++;
                    }
                }
            }
            continue;
        }
        if (next_root < h->root_count && queued < FLOOR_QUEUE) {
            floor_hobj *c = h->roots[next_root++];
            __builtin_prefetch(c, 1);
            fifo[(head + queued++) & (FLOOR_QUEUE - 1)] = c;
            if (queued < FLOOR_QUEUE)
                continue;
        }
        if (queued == 0)
            break;
        floor_hobj *x = fifo[head];
        head = (head + 1) & (FLOOR_QUEUE - 1);
        queued--;
        if (x->mark != epoch) {
            x->mark = epoch;
            stack[sp++] = x;
            marked++;
        }
    }
    return marked;
}

static void floor_hheap_free(floor_hheap *h)
{
    free(h->objs);
    free(h->roots);
    free(h->stack);
}

static int floor_hheap_build(floor_hheap *h, const bench_graph *g)
{
    memset(h, 0, sizeof *h);
    h->n = g->n;
    h->objs = aligned_alloc(16, (size_t)g->n * sizeof(floor_hobj));
    h->stack = malloc((size_t)g->n * sizeof *h->stack);
    h->root_count = g->shape == BENCH_SHAPE_SINGLE_ROOT ? 1 : g->n;
    h->roots = malloc((size_t)h->root_count * sizeof *h->roots);
    if (!h->objs || !h->stack || !h->roots) {
        floor_hheap_free(h);
        return -1;
    }
    memset(h->objs, 0, (size_t)g->n * sizeof(floor_hobj));
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

/* ---- bitmap layout ------------------------------------------------------------------- */

typedef struct floor_bobj {
    struct floor_bobj *ref[BENCH_GRAPH_SLOTS];
    unsigned char pad[BENCH_GRAPH_PAYLOAD - BENCH_GRAPH_SLOTS * sizeof(void *)];
} floor_bobj;

_Static_assert(sizeof(floor_bobj) == BENCH_GRAPH_PAYLOAD, "payload only");

typedef struct floor_bheap {
    floor_bobj *objs;
    uint32_t n;
    uint64_t *bits;
    floor_bobj **roots;
    uint32_t root_count;
    floor_bobj **stack;
} floor_bheap;

static inline int floor_bmark_bit(uint64_t *bits, const floor_bobj *base, const floor_bobj *o)
{
    size_t i = (size_t)(o - base);
    uint64_t m = 1ull << (i & 63);
    uint64_t *w = &bits[i >> 6];
    if (*w & m)
        return 0;
    *w |= m;
    return 1;
}

static uint64_t floor_bmark(floor_bheap *h)
{
    floor_bobj *const base = h->objs;
    uint64_t *const bits = h->bits;
    floor_bobj **const stack = h->stack;
    floor_bobj *fifo[FLOOR_QUEUE];
    size_t sp = 0;
    unsigned head = 0, queued = 0;
    uint64_t marked = 0;

    memset(bits, 0, ((size_t)h->n + 63) / 64 * sizeof *bits);
    for (uint32_t i = 0; i < h->root_count; i++)
        if (floor_bmark_bit(bits, base, h->roots[i]))
            stack[sp++] = h->roots[i];
    for (;;) {
        while (queued < FLOOR_QUEUE && sp > 0) {
            floor_bobj *o = stack[--sp];
            __builtin_prefetch(o);
            fifo[(head + queued++) & (FLOOR_QUEUE - 1)] = o;
        }
        if (queued == 0)
            break;
        floor_bobj *o = fifo[head];
        head = (head + 1) & (FLOOR_QUEUE - 1);
        queued--;
        marked++;
        for (unsigned j = 0; j < BENCH_GRAPH_SLOTS; j++) {
            floor_bobj *c = o->ref[j];
            if (c && floor_bmark_bit(bits, base, c))
                stack[sp++] = c;
        }
    }
    return marked;
}

static void floor_bheap_free(floor_bheap *h)
{
    free(h->objs);
    free(h->bits);
    free(h->roots);
    free(h->stack);
}

static int floor_bheap_build(floor_bheap *h, const bench_graph *g)
{
    memset(h, 0, sizeof *h);
    h->n = g->n;
    h->objs = aligned_alloc(64, (size_t)g->n * sizeof(floor_bobj));
    h->bits = calloc(((size_t)g->n + 63) / 64, sizeof *h->bits);
    h->stack = malloc((size_t)g->n * sizeof *h->stack);
    h->root_count = g->shape == BENCH_SHAPE_SINGLE_ROOT ? 1 : g->n;
    h->roots = malloc((size_t)h->root_count * sizeof *h->roots);
    if (!h->objs || !h->bits || !h->stack || !h->roots) {
        floor_bheap_free(h);
        return -1;
    }
    memset(h->objs, 0, (size_t)g->n * sizeof(floor_bobj));
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

/* ---- both ------------------------------------------------------------------------------ */

int floor_bench_mark(const bench_graph *g, floor_result *out)
{
    memset(out, 0, sizeof *out);

    floor_bheap bh;
    double t0 = bench_now();
    if (floor_bheap_build(&bh, g) != 0)
        return -1;
    out->build = bench_now() - t0;
    for (int i = 0; i < BENCH_WARMUP + BENCH_REPS; i++) {
        t0 = bench_now();
        out->marked = floor_bmark(&bh);
        double t = bench_now() - t0;
        if (i >= BENCH_WARMUP)
            bench_runs_add(&out->runs, t);
    }
    floor_bheap_free(&bh);

    floor_hheap hh;
    if (floor_hheap_build(&hh, g) != 0)
        return -1;
    for (int i = 0; i < BENCH_WARMUP + BENCH_REPS; i++) {
        t0 = bench_now();
        out->header_marked = floor_hmark(&hh);
        double t = bench_now() - t0;
        if (i >= BENCH_WARMUP)
            bench_runs_add(&out->header_runs, t);
    }
    floor_hheap_free(&hh);
    return 0;
}
