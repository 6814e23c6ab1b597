/*
 * mark_probe.c - one mark of the standard graph, small enough to run under cachegrind.
 *
 * usage: mark_probe reap|reap2|reap2n|reap1v2|floor root_array|single_root [REPS]
 *
 * Builds one shape the way gc_bench (reap) or floor_bench (the floor, bitmap layout) does,
 * marks it once to warm up, then marks it again inside the function that `make
 * bench-cachegrind` tells cachegrind to count (the floor's probe_counted_mark, reap's
 * gc_mark_run), and prints how many objects and references a mark visited and how many marks
 * were counted, so that cache misses can be divided by them. reap runs with one worker (the
 * reference marker), reap2 with two (the second at idle priority, the default), reap2n with
 * two at the same priority. REPS (default 1) repeats the
 * counted mark, for a profiler (`perf record -e cpu-clock`). reap's line ends with how many of
 * the timed marks a second worker took part in (`helped`: it stole work). reap1v2 alternates
 * 1, 2 and 1 workers on one heap, REPS rounds (see probe_alternate).
 */
#include "reap_gc.h"

#include "bench_graph.h"
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reps = 1;

typedef struct probe_node {
    void *ref[BENCH_GRAPH_SLOTS];
    unsigned char data[BENCH_GRAPH_PAYLOAD - BENCH_GRAPH_SLOTS * sizeof(void *)];
} probe_node;

typedef struct probe_holder {
    gc_ref_array items;
    unsigned char data[BENCH_GRAPH_PAYLOAD - sizeof(gc_ref_array)];
} probe_holder;

static const gc_member node_members[] = {
    GC_REF(probe_node, ref[0]), GC_REF(probe_node, ref[1]), GC_REF(probe_node, ref[2]),
    GC_REF(probe_node, ref[3]), GC_MEMBERS_END,
};
static const gc_member holder_members[] = { GC_REF_ARRAY(probe_holder, items), GC_MEMBERS_END };

static void holder_destructor(void *obj)
{
    gc_ref_array_free(&((probe_holder *)obj)->items);
}

/* What cachegrind counts: one call, nothing else inside it. */
__attribute__((noinline)) void probe_counted_mark(void (*fn)(void *), void *arg);
__attribute__((noinline)) void probe_counted_mark(void (*fn)(void *), void *arg)
{
    fn(arg);
}

static void reap_collect(void *heap)
{
    gc_result r = gc_collect(heap, 0, true);
    if (r != GC_OK) {
        fprintf(stderr, "mark_probe: gc_collect: %s\n", gc_result_str(r));
        exit(1);
    }
}

/* reap1v2: in one process and on one heap, REPS rounds of three marks, with 1 worker, with
 * 2, and with 1 again, so that what differs between processes (where the graph landed, the
 * CPU the process runs on) is the same for all three; prints the three medians and in how
 * many 2-worker marks the helper took part. */
static int probe_alternate(gc_heap *heap)
{
    gc_settings s = *gc_heap_settings(heap);
    double times[3][64];
    bool verbose = getenv("MARK_PROBE_VERBOSE") != NULL; /* every mark on its own line */
    int helped = 0, n = reps < 64 ? reps : 64;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            s.num_workers = k == 1 ? 2 : 1;
            if (gc_heap_configure(heap, &s) != GC_OK)
                return -1;
            reap_collect(heap);
            gc_stats st;
            gc_stats_get(heap, &st);
            times[k][i] = st.mark_seconds;
            helped += k == 1 && st.mark_slices_helped > 0;
            if (verbose)
                printf("round %d workers %u mark-ms %.2f helped %s%s\n", i, s.num_workers,
                       st.mark_seconds * 1e3, st.mark_slices_helped > 0 ? "yes" : "no",
                       s.num_workers > 1 && !st.mark_helpers_invited ? " (not invited)" : "");
        }
    printf("median-mark-ms 1w %.2f 2w %.2f 1w-again %.2f helped %d of %d\n",
           bench_median(times[0], (size_t)n) * 1e3, bench_median(times[1], (size_t)n) * 1e3,
           bench_median(times[2], (size_t)n) * 1e3, helped, n);
    return 0;
}

static int probe_reap(const bench_graph *g, uint32_t workers, bool normal_priority,
                      bool alternate)
{
    gc_heap *heap;
    gc_heap_config cfg = { 0 };
    gc_settings_default(&cfg.settings);
    cfg.settings.num_workers = workers;
    cfg.settings.marker_threads_normal_priority = normal_priority;
    if (gc_heap_create(&cfg, &heap) != GC_OK)
        return -1;
    gc_class *node_cls, *holder_cls;
    gc_class_desc nd = { .name = "ProbeNode", .size = sizeof(probe_node),
                         .members = node_members };
    gc_class_desc hd = { .name = "ProbeHolder", .size = sizeof(probe_holder),
                         .members = holder_members, .hooks = { .destructor = holder_destructor } };
    if (gc_class_register(heap, &nd, &node_cls) != GC_OK ||
        gc_class_register(heap, &hd, &holder_cls) != GC_OK)
        return -1;
    void **objs = malloc((size_t)g->n * sizeof *objs);
    if (!objs)
        return -1;
    for (uint32_t i = 0; i < g->n; i++)
        if (gc_object_create(heap, node_cls, NULL, NULL, 0, &objs[i]) != GC_OK)
            return -1;
    uint64_t refs = 0;
    for (uint32_t i = 0; i < g->n; i++)
        for (unsigned j = 0; j < BENCH_GRAPH_SLOTS; j++) {
            uint32_t c = g->child[i][j];
            ((probe_node *)objs[i])->ref[j] = c == BENCH_GRAPH_NO_CHILD ? NULL : objs[c];
            refs += c != BENCH_GRAPH_NO_CHILD;
        }
    if (g->shape == BENCH_SHAPE_SINGLE_ROOT) {
        if (gc_root_add(heap, objs[g->root]) != GC_OK)
            return -1;
    } else {
        probe_holder *h;
        if (gc_object_create(heap, holder_cls, NULL, NULL, GC_CREATE_ROOT, (void **)&h) != GC_OK)
            return -1;
        h->items.data = malloc((size_t)g->n * sizeof(void *));
        if (!h->items.data)
            return -1;
        memcpy(h->items.data, objs, (size_t)g->n * sizeof(void *));
        h->items.count = h->items.capacity = g->n;
        refs += g->n;
    }
    free(objs);
    reap_collect(heap); /* warm-up (with 2 workers, the pool's thread starts) */
    if (alternate) {
        int rc = probe_alternate(heap);
        gc_heap_destroy(heap);
        return rc;
    }
    gc_stats st;
    double best = 1e9, times[64];
    int joined = 0; /* timed marks a second worker took part in (it stole work) */
    for (int i = 0; i < reps; i++) {
        probe_counted_mark(reap_collect, heap);
        gc_stats_get(heap, &st);
        best = st.mark_seconds < best ? st.mark_seconds : best;
        times[i % 64] = st.mark_seconds;
        joined += st.mark_slices_helped > 0;
    }
    /* gc_mark_run, which the cachegrind run counts, ran in the warm-up too */
    printf("marked %u references %llu best-mark-ms %.2f marks %d median-mark-ms %.2f "
           "helped %d\n",
           st.marked, (unsigned long long)refs, best * 1e3, reps + 1,
           bench_median(times, reps < 64 ? (size_t)reps : 64) * 1e3, joined);
    gc_heap_destroy(heap);
    return 0;
}

/* ---- the floor (the bitmap marker of floor_bench.c, one run) ---------------------------- */

typedef struct probe_bobj {
    struct probe_bobj *ref[BENCH_GRAPH_SLOTS];
    unsigned char pad[BENCH_GRAPH_PAYLOAD - BENCH_GRAPH_SLOTS * sizeof(void *)];
} probe_bobj;

typedef struct probe_floor {
    probe_bobj *objs;
    uint32_t n;
    uint64_t *bits;
    probe_bobj **roots;
    uint32_t root_count;
    probe_bobj **stack;
    uint64_t marked;
} probe_floor;

static int test_and_mark(uint64_t *bits, const probe_bobj *base, const probe_bobj *o)
{
    size_t i = (size_t)(o - base);
    uint64_t m = 1ull << (i & 63);
    if (bits[i >> 6] & m)
        return 0;
    bits[i >> 6] |= m;
    return 1;
}

static void floor_mark(void *arg)
{
    probe_floor *h = arg;
    enum { Q = 16 };
    probe_bobj *fifo[Q];
    size_t sp = 0;
    unsigned head = 0, queued = 0;
    uint64_t marked = 0;
    memset(h->bits, 0, ((size_t)h->n + 63) / 64 * sizeof *h->bits);
    for (uint32_t i = 0; i < h->root_count; i++)
        if (test_and_mark(h->bits, h->objs, h->roots[i]))
            h->stack[sp++] = h->roots[i];
    for (;;) {
        while (queued < Q && sp > 0) {
            probe_bobj *o = h->stack[--sp];
            __builtin_prefetch(o);
            fifo[(head + queued++) & (Q - 1)] = o;
        }
        if (queued == 0)
            break;
        probe_bobj *o = fifo[head];
        head = (head + 1) & (Q - 1);
        queued--;
        marked++;
        for (unsigned j = 0; j < BENCH_GRAPH_SLOTS; j++) {
            probe_bobj *c = o->ref[j];
            if (c && test_and_mark(h->bits, h->objs, c))
                h->stack[sp++] = c;
        }
    }
    h->marked = marked;
}

static int probe_floor_run(const bench_graph *g)
{
    probe_floor h = { .n = g->n };
    h.objs = aligned_alloc(64, (size_t)g->n * sizeof(probe_bobj));
    h.bits = calloc(((size_t)g->n + 63) / 64, sizeof *h.bits);
    h.stack = malloc((size_t)g->n * sizeof *h.stack);
    h.root_count = g->shape == BENCH_SHAPE_SINGLE_ROOT ? 1 : g->n;
    h.roots = malloc((size_t)h.root_count * sizeof *h.roots);
    if (!h.objs || !h.bits || !h.stack || !h.roots)
        return -1;
    uint64_t refs = 0;
    for (uint32_t i = 0; i < g->n; i++)
        for (unsigned j = 0; j < BENCH_GRAPH_SLOTS; j++) {
            uint32_t c = g->child[i][j];
            h.objs[i].ref[j] = c == BENCH_GRAPH_NO_CHILD ? NULL : &h.objs[c];
            refs += c != BENCH_GRAPH_NO_CHILD;
        }
    if (g->shape == BENCH_SHAPE_SINGLE_ROOT) {
        h.roots[0] = &h.objs[g->root];
    } else {
        for (uint32_t i = 0; i < g->n; i++)
            h.roots[i] = &h.objs[i];
        refs += g->n;
    }
    floor_mark(&h);
    double best = 1e9;
    for (int i = 0; i < reps; i++) {
        double t0 = bench_now();
        probe_counted_mark(floor_mark, &h);
        double t = bench_now() - t0;
        best = t < best ? t : best;
    }
    printf("marked %llu references %llu best-mark-ms %.2f marks %d\n",
           (unsigned long long)h.marked, (unsigned long long)refs, best * 1e3, reps);
    free(h.objs);
    free(h.bits);
    free(h.stack);
    free(h.roots);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4)
        reps = atoi(argv[3]);
    if (argc < 3 || argc > 4 || reps < 1 ||
        (strcmp(argv[1], "reap") && strcmp(argv[1], "reap2") && strcmp(argv[1], "reap2n") &&
         strcmp(argv[1], "reap1v2") && strcmp(argv[1], "floor")) ||
        (strcmp(argv[2], "root_array") && strcmp(argv[2], "single_root"))) {
        fprintf(stderr, "usage: mark_probe reap|reap2|reap2n|reap1v2|floor "
                        "root_array|single_root [REPS]\n");
        return 2;
    }
    bench_graph g;
    bench_shape shape = strcmp(argv[2], "root_array") ? BENCH_SHAPE_SINGLE_ROOT
                                                      : BENCH_SHAPE_ROOT_ARRAY;
    if (bench_graph_generate(&g, shape, bench_graph_size()) != 0) {
        fprintf(stderr, "mark_probe: out of memory\n");
        return 1;
    }
    int rc = !strcmp(argv[1], "floor") ? probe_floor_run(&g)
             : probe_reap(&g, strcmp(argv[1], "reap") ? 2 : 1, !strcmp(argv[1], "reap2n"),
                          !strcmp(argv[1], "reap1v2"));
    bench_graph_free(&g);
    if (rc != 0)
        fprintf(stderr, "mark_probe: could not build the %s graph\n", argv[2]);
    return rc != 0;
}
