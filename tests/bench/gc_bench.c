/*
 * gc_bench.c - reap's collector on the standard benchmark graph, through the public API only
 * (gc/include/reap_gc.h). Writes OUTDIR/gc_core.json (issue 2: full collections, live and
 * garbage) and OUTDIR/gc_full.json (issue 3: workers, incremental slices, purge slices,
 * clusters, bytes per object, and the ratios against the peers in OUTDIR/peers.json, which
 * peers_bench wrote earlier in the same `make bench`).
 *
 * usage: gc_bench OUTDIR            (REAP_BENCH_N=... for a quick, non-standard run)
 *
 * Objects: a class with a 64-byte instance whose first 32 bytes are the 4 references (GC_REF
 * members) and the rest plain data; the object header the collector adds is beyond it. The
 * "root array" shape is one rooted holder object whose gc_ref_array references every object;
 * "single root" roots only the graph's root object.
 *
 * A feature the collector does not provide yet (an error from the API, or no time slices
 * where slices were asked for) is reported as n/a and written as null; nothing here aborts
 * on it. These are figures, never assertions: the machine is shared and noisy, so compare
 * the ratios measured in one run.
 */
#include "reap_gc.h"

#include "bench_graph.h"
#include "bench_util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GARBAGE_REPS 5         /* builds per shape for the all-garbage collection */
#define SLICE_LIMIT 0.002      /* the incremental time limit of issue 3, seconds */
#define SLICE_TARGET 0.0022    /* what issue 3 accepts for the longest slice */
#define MAX_SLICES (1u << 20)

/* ---- the objects ------------------------------------------------------------------------ */

typedef struct bench_node {
    void *ref[BENCH_GRAPH_SLOTS];
    unsigned char data[BENCH_GRAPH_PAYLOAD - BENCH_GRAPH_SLOTS * sizeof(void *)];
} bench_node;

/* A root object holding an array of references (root array, big array), or an actor holding
 * its components. 64 bytes too. */
typedef struct bench_holder {
    gc_ref_array items;
    unsigned char data[BENCH_GRAPH_PAYLOAD - sizeof(gc_ref_array)];
} bench_holder;

_Static_assert(sizeof(bench_node) == BENCH_GRAPH_PAYLOAD, "64-byte payload");
_Static_assert(sizeof(bench_holder) == BENCH_GRAPH_PAYLOAD, "64-byte payload");

static const gc_member node_members[] = {
    GC_REF(bench_node, ref[0]),
    GC_REF(bench_node, ref[1]),
    GC_REF(bench_node, ref[2]),
    GC_REF(bench_node, ref[3]),
    GC_MEMBERS_END,
};

static const gc_member holder_members[] = {
    GC_REF_ARRAY(bench_holder, items),
    GC_MEMBERS_END,
};

static void holder_destructor(void *obj)
{
    gc_ref_array_free(&((bench_holder *)obj)->items);
}

typedef struct reap_bench {
    gc_heap *heap;
    gc_class *node_cls;
    gc_class *holder_cls;
    gc_class *actor_cls;
    gc_class *component_cls;
    void **objs;             /* index -> object while a graph is built */
    uint32_t n;
    uint32_t baseline_objects; /* live objects in an empty heap (classes) */
} reap_bench;

/* ---- figures ---------------------------------------------------------------------------- */

typedef struct live_figures {
    bench_runs wall;         /* gc_collect(full) with everything live */
    bench_runs mark;         /* gc_stats.mark_seconds of the same collections */
    uint32_t helped;         /* of them, marks a marker thread beyond the caller joined */
    uint32_t uninvited;      /* marks with 2+ workers whose caller marked alone by choice */
    bool ok;
} live_figures;

typedef struct incr_figures {
    bool supported;          /* slices happened (or the mark fit in one) */
    bench_slices slices;     /* measured around each call */
    uint32_t reported_slices;/* gc_stats.mark_slices */
    double reported_longest; /* gc_stats.longest_slice_seconds */
    double single_call;      /* when not supported: the one call's duration */
    double first, last;      /* the first call (gc_collect) and the last slice */
    uint32_t longest_at;     /* 1-based position of the longest slice */
    double cpu_of_longest;   /* thread CPU time of the longest slice (wall - CPU: preempted) */
    double longest_cpu;      /* the most thread CPU time any slice took (work done) */
    uint32_t longest_cpu_at;
} incr_figures;

typedef struct shape_figures {
    double build;            /* seconds to create and wire N objects (first build) */
    live_figures dflt;       /* default settings (num_workers = 0: the machine's cores) */
    live_figures w1, w2;     /* num_workers 1 and 2, interleaved with the default runs */
    live_figures w1_nopf;    /* num_workers 1 without prefetching (settings.no_prefetch) */
    uint32_t marked;         /* gc_stats.marked of the last live collection */
    bench_runs garbage_wall; /* build, unroot, gc_collect(full) */
    bench_runs garbage_mark, garbage_gather, garbage_purge; /* its phases, from gc_stats */
    bench_runs garbage_release; /* giving the emptied memory back (gc_stats.release_seconds) */
    uint32_t destroyed;      /* gc_stats.destroyed of the last one */
    incr_figures incr;       /* gather in the slice that ends marking (UE's default) */
    incr_figures incr_gather;/* allow_incremental_gather: gather sliced in the purge */
} shape_figures;

typedef struct purge_figures {
    double floor;            /* median seconds of purge_floor over the same N */
    bool supported;
    bench_slices slices;
    double mark_gather;      /* the gc_collect(heap, 0, false) that left the purge pending */
    double cpu_of_longest;   /* thread CPU time of the longest slice */
    double longest_cpu;      /* the most thread CPU time of any slice */
    uint32_t destroyed;
} purge_figures;

typedef struct actor_figures {
    live_figures plain;      /* create_clusters = false */
    live_figures clustered;  /* create_clusters = true, a cluster per actor */
    uint32_t clusters;       /* gc_cluster_count after creating them */
    gc_result cluster_error; /* the first gc_cluster_create failure, GC_OK if none */
    uint32_t objects;
} actor_figures;

typedef struct memory_figures {
    double heap_fixed;       /* malloc'ed by gc_heap_create + class registration, bytes */
    double malloc_per_obj;   /* held by the collector per object beyond the payload, bytes
                                (gc_memory_get: slabs, object array, bitmaps) */
    double rss_per_obj;      /* RSS growth per object beyond the payload, bytes */
} memory_figures;

typedef struct bench_all {
    uint32_t n;
    shape_figures shape[2];  /* root array, single root */
    shape_figures big;       /* one big array: dflt and incr only */
    purge_figures purge;
    actor_figures actors;
    memory_figures mem;
    double total_seconds;
} bench_all;

static const bench_shape standard_shapes[2] = {BENCH_SHAPE_ROOT_ARRAY, BENCH_SHAPE_SINGLE_ROOT};

/* ---- heap and settings ------------------------------------------------------------------ */

/* incremental: 0 off, 1 incremental reachability, 2 that and incremental gather. */
static gc_result configure(reap_bench *b, uint32_t workers, int incremental, bool clusters)
{
    gc_settings s = *gc_heap_settings(b->heap);
    s.no_prefetch = false;
    s.num_workers = workers;
    s.allow_incremental_reachability = incremental > 0;
    s.incremental_reachability_time_limit = SLICE_LIMIT;
    s.allow_incremental_gather = incremental > 1;
    s.incremental_gather_time_limit = incremental > 1 ? SLICE_LIMIT : 0;
    s.create_clusters = clusters;
    return gc_heap_configure(b->heap, &s);
}

static int register_classes(reap_bench *b)
{
    gc_class_desc node = {
        .name = "BenchNode", .size = sizeof(bench_node), .members = node_members,
    };
    gc_class_desc holder = {
        .name = "BenchHolder", .size = sizeof(bench_holder), .members = holder_members,
        .hooks = {.destructor = holder_destructor},
    };
    gc_class_desc actor = {
        .name = "BenchActor", .size = sizeof(bench_holder), .members = holder_members,
        .flags = GC_CLASS_CLUSTER_ROOT, .hooks = {.destructor = holder_destructor},
    };
    gc_class_desc component = {
        .name = "BenchComponent", .size = sizeof(bench_node), .members = node_members,
        .flags = GC_CLASS_CAN_BE_IN_CLUSTER,
    };
    gc_result r;
    if ((r = gc_class_register(b->heap, &node, &b->node_cls)) != GC_OK ||
        (r = gc_class_register(b->heap, &holder, &b->holder_cls)) != GC_OK ||
        (r = gc_class_register(b->heap, &actor, &b->actor_cls)) != GC_OK ||
        (r = gc_class_register(b->heap, &component, &b->component_cls)) != GC_OK) {
        fprintf(stderr, "gc_bench: gc_class_register: %s\n", gc_result_str(r));
        return -1;
    }
    return 0;
}

/* ---- building and dropping graphs -------------------------------------------------------- */

/* Creates the graph's objects and roots it; *out_root is what to unroot to drop it all. */
static int build_graph(reap_bench *b, const bench_graph *g, void **out_root)
{
    gc_result r;
    for (uint32_t i = 0; i < g->n; i++)
        if ((r = gc_object_create(b->heap, b->node_cls, NULL, NULL, 0, &b->objs[i])) != GC_OK) {
            fprintf(stderr, "gc_bench: gc_object_create #%u: %s\n", i, gc_result_str(r));
            return -1;
        }
    for (uint32_t i = 0; i < g->n; i++) {
        bench_node *o = b->objs[i];
        for (unsigned j = 0; j < BENCH_GRAPH_SLOTS; j++) {
            uint32_t c = g->child[i][j];
            o->ref[j] = c == BENCH_GRAPH_NO_CHILD ? NULL : b->objs[c];
        }
    }
    if (g->shape == BENCH_SHAPE_SINGLE_ROOT) {
        if ((r = gc_root_add(b->heap, b->objs[g->root])) != GC_OK) {
            fprintf(stderr, "gc_bench: gc_root_add: %s\n", gc_result_str(r));
            return -1;
        }
        *out_root = b->objs[g->root];
        return 0;
    }
    bench_holder *h;
    if ((r = gc_object_create(b->heap, b->holder_cls, NULL, NULL, GC_CREATE_ROOT,
                              (void **)&h)) != GC_OK) {
        fprintf(stderr, "gc_bench: gc_object_create (root array): %s\n", gc_result_str(r));
        return -1;
    }
    /* gc_ref_array storage is malloc'ed (reap_gc.h), so it can be filled in one go. */
    h->items.data = malloc((size_t)g->n * sizeof(void *));
    if (!h->items.data)
        return -1;
    memcpy(h->items.data, b->objs, (size_t)g->n * sizeof(void *));
    h->items.count = h->items.capacity = g->n;
    *out_root = h;
    return 0;
}

/* Unroots the graph and collects it all; records the collection's figures. */
static void drop_graph(reap_bench *b, void *root, shape_figures *f)
{
    gc_stats st;
    gc_root_remove(b->heap, root);
    double t0 = bench_now();
    gc_result r = gc_collect(b->heap, 0, true);
    double t = bench_now() - t0;
    gc_stats_get(b->heap, &st);
    if (r != GC_OK)
        printf("  !! gc_collect (garbage): %s\n", gc_result_str(r));
    if (f) {
        bench_runs_add(&f->garbage_wall, r == GC_OK ? t : NAN);
        bench_runs_add(&f->garbage_mark, st.mark_seconds);
        bench_runs_add(&f->garbage_gather, st.gather_seconds);
        bench_runs_add(&f->garbage_purge, st.purge_seconds);
        bench_runs_add(&f->garbage_release, st.release_seconds);
        f->destroyed = st.destroyed;
    }
    uint32_t left = gc_object_count(b->heap);
    if (left != b->baseline_objects)
        printf("  !! after dropping the graph %u objects are live, expected %u\n", left,
               b->baseline_objects);
}

/* ---- measurements ----------------------------------------------------------------------- */

/* One gc_collect(full) with everything live; NaN figures if the settings were refused. */
static void collect_live(reap_bench *b, live_figures *f, uint32_t *out_marked)
{
    gc_stats st;
    double t0 = bench_now();
    gc_result r = gc_collect(b->heap, 0, true);
    double t = bench_now() - t0;
    gc_stats_get(b->heap, &st);
    if (r != GC_OK) {
        f->ok = false;
        bench_runs_add(&f->wall, NAN);
        bench_runs_add(&f->mark, NAN);
        return;
    }
    bench_runs_add(&f->wall, t);
    bench_runs_add(&f->mark, st.mark_seconds);
    f->helped += st.mark_slices_helped > 0;
    f->uninvited += st.mark_workers > 1 && !st.mark_helpers_invited;
    if (out_marked)
        *out_marked = st.marked;
}

/* Default, 1-worker and 2-worker collections, interleaved so that drift in the machine's
 * speed hits all three alike. */
static void measure_live(reap_bench *b, shape_figures *f, bool with_workers)
{
    f->dflt.ok = f->w1.ok = f->w2.ok = f->w1_nopf.ok = true;
    configure(b, 0, 0, true);
    for (int i = 0; i < BENCH_WARMUP; i++)
        gc_collect(b->heap, 0, true);
    for (int i = 0; i < BENCH_REPS; i++) {
        configure(b, 0, 0, true);
        collect_live(b, &f->dflt, &f->marked);
        if (!with_workers)
            continue;
        if (configure(b, 1, 0, true) == GC_OK)
            collect_live(b, &f->w1, NULL);
        else
            f->w1.ok = false;
        if (configure(b, 2, 0, true) == GC_OK)
            collect_live(b, &f->w2, NULL);
        else
            f->w2.ok = false;
        gc_settings st = *gc_heap_settings(b->heap);
        st.num_workers = 1;
        st.no_prefetch = true;
        if (gc_heap_configure(b->heap, &st) == GC_OK)
            collect_live(b, &f->w1_nopf, NULL);
        else
            f->w1_nopf.ok = false;
    }
    configure(b, 0, 0, true);
}

/* One incremental collection at the 2 ms limit, timing every call that does marking. With
 * sliced_gather, gathering is left to the purge (allow_incremental_gather, 2 ms) and the
 * gc_incremental_purge(heap, 0.002) calls that do it count as slices too; otherwise the
 * purge (empty: everything is live) is finished untimed. */
static void measure_incremental(reap_bench *b, incr_figures *f, bool sliced_gather)
{
    static double slices[MAX_SLICES], cpu[MAX_SLICES];
    size_t n = 0;
    double c0;
    memset(f, 0, sizeof *f);
    f->single_call = NAN;
    if (configure(b, 0, sliced_gather ? 2 : 1, true) != GC_OK) {
        configure(b, 0, 0, true);
        return;
    }
    double t0 = bench_now();
    c0 = bench_thread_cpu();
    gc_result r = gc_collect(b->heap, 0, false);
    cpu[n] = bench_thread_cpu() - c0;
    slices[n++] = bench_now() - t0;
    if (r == GC_OK) {
        while (gc_is_incremental_reachability_pending(b->heap) && n < MAX_SLICES) {
            t0 = bench_now();
            c0 = bench_thread_cpu();
            gc_incremental_reachability_step(b->heap);
            cpu[n] = bench_thread_cpu() - c0;
            slices[n++] = bench_now() - t0;
        }
    }
    gc_stats st;
    gc_stats_get(b->heap, &st);
    f->reported_slices = st.mark_slices;
    f->reported_longest = st.longest_slice_seconds;
    if (sliced_gather && r == GC_OK) {
        bool done = false;
        while (!done && n < MAX_SLICES) {
            t0 = bench_now();
            c0 = bench_thread_cpu();
            done = gc_incremental_purge(b->heap, SLICE_LIMIT);
            cpu[n] = bench_thread_cpu() - c0;
            slices[n++] = bench_now() - t0;
        }
    }
    while (!gc_incremental_purge(b->heap, 0))
        ;
    configure(b, 0, 0, true);
    f->supported = r == GC_OK && (n > 1 || slices[0] <= SLICE_TARGET);
    f->first = slices[0];
    f->last = slices[n - 1];
    size_t longest = 0;
    for (size_t i = 1; i < n; i++)
        if (slices[i] > slices[longest])
            longest = i;
    f->longest_at = (uint32_t)longest + 1; /* before the summary sorts the slices */
    f->cpu_of_longest = cpu[longest];
    size_t most = 0;
    for (size_t i = 1; i < n; i++)
        if (cpu[i] > cpu[most])
            most = i;
    f->longest_cpu = cpu[most];
    f->longest_cpu_at = (uint32_t)most + 1;
    if (!f->supported) {
        f->single_call = slices[0];
        f->slices.count = 0;
        f->slices.longest = f->slices.p99 = f->slices.total = NAN;
        return;
    }
    bench_slices_summarise(slices, n, &f->slices);
}

/* The floor of a purge: the least a sweep that hands every object's slot back must do. N
 * objects of reap's size (16-byte header + payload) in 64 KiB slabs; each slot is pushed on
 * its slab's free list through its first 4 bytes, in address order as a purge of a
 * gathered list would. No hooks, no index, no lock. Median of BENCH_REPS. */
static double purge_floor(uint32_t n)
{
    enum { OBJ = 16 + BENCH_GRAPH_PAYLOAD, PER_SLAB = 65536 / OBJ };
    uint32_t slabs = (n + PER_SLAB - 1) / PER_SLAB;
    char *mem = aligned_alloc(65536, (size_t)slabs * 65536);
    uint32_t *heads = malloc(slabs * sizeof *heads);
    if (!mem || !heads) {
        free(mem);
        free(heads);
        return NAN;
    }
    memset(mem, 0, (size_t)slabs * 65536);
    bench_runs runs = {.count = 0};
    for (int r = 0; r < BENCH_REPS; r++) {
        memset(heads, 0xff, slabs * sizeof *heads);
        double t0 = bench_now();
        for (uint32_t i = 0; i < n; i++) {
            uint32_t s = i / PER_SLAB, slot = i % PER_SLAB;
            memcpy(mem + (size_t)s * 65536 + (size_t)slot * OBJ, &heads[s], sizeof heads[s]);
            heads[s] = slot;
        }
        bench_runs_add(&runs, bench_now() - t0);
        uint32_t sum = 0; /* keep the stores observable */
        for (uint32_t k = 0; k < slabs; k++)
            sum += heads[k];
        if (sum == 1)
            printf(" ");
    }
    free(mem);
    free(heads);
    return bench_runs_median(&runs);
}

/* Build, unroot, mark and gather, then purge in 2 ms slices timed one by one. */
static void measure_purge(reap_bench *b, const bench_graph *g, purge_figures *f)
{
    static double slices[MAX_SLICES];
    size_t n = 0;
    void *root;
    memset(f, 0, sizeof *f);
    if (build_graph(b, g, &root) != 0)
        return;
    gc_root_remove(b->heap, root);
    configure(b, 0, 0, true);
    double t0 = bench_now();
    gc_result r = gc_collect(b->heap, 0, false);
    f->mark_gather = bench_now() - t0;
    f->supported = r == GC_OK && gc_is_incremental_purge_pending(b->heap);
    bool done = false;
    double longest = 0;
    while (!done && n < MAX_SLICES) {
        t0 = bench_now();
        double c0 = bench_thread_cpu();
        done = gc_incremental_purge(b->heap, SLICE_LIMIT);
        double cpu = bench_thread_cpu() - c0;
        slices[n++] = bench_now() - t0;
        if (slices[n - 1] > longest) {
            longest = slices[n - 1];
            f->cpu_of_longest = cpu;
        }
        if (cpu > f->longest_cpu)
            f->longest_cpu = cpu;
    }
    gc_stats st;
    gc_stats_get(b->heap, &st);
    f->destroyed = st.destroyed;
    if (f->supported)
        bench_slices_summarise(slices, n, &f->slices);
    else
        f->slices.longest = f->slices.p99 = f->slices.total = NAN;
    if (gc_object_count(b->heap) != b->baseline_objects)
        printf("  !! after the sliced purge %u objects are live, expected %u\n",
               gc_object_count(b->heap), b->baseline_objects);
}

/* The actor-like graph: 10,000 rooted actors, each the outer of 20 components that it
 * references from an array; each component's first slot refers back to its actor. */
static int build_actors(reap_bench *b, void **actors)
{
    gc_result r;
    for (uint32_t a = 0; a < BENCH_ACTORS; a++) {
        bench_holder *actor;
        if ((r = gc_object_create(b->heap, b->actor_cls, NULL, NULL, GC_CREATE_ROOT,
                                  (void **)&actor)) != GC_OK) {
            fprintf(stderr, "gc_bench: creating an actor: %s\n", gc_result_str(r));
            return -1;
        }
        actors[a] = actor;
        for (uint32_t c = 0; c < BENCH_COMPONENTS_PER_ACTOR; c++) {
            bench_node *comp;
            if ((r = gc_object_create(b->heap, b->component_cls, actor, NULL, 0,
                                      (void **)&comp)) != GC_OK ||
                (r = gc_ref_array_push(&actor->items, comp)) != GC_OK) {
                fprintf(stderr, "gc_bench: creating a component: %s\n", gc_result_str(r));
                return -1;
            }
            comp->ref[0] = actor;
        }
    }
    return 0;
}

static void measure_actors(reap_bench *b, actor_figures *f)
{
    void **actors = malloc(BENCH_ACTORS * sizeof *actors);
    memset(f, 0, sizeof *f);
    f->plain.ok = f->clustered.ok = true;
    if (!actors || build_actors(b, actors) != 0) {
        f->plain.ok = f->clustered.ok = false;
        free(actors);
        return;
    }
    f->objects = gc_object_count(b->heap) - b->baseline_objects;

    configure(b, 0, 0, false);
    for (int i = 0; i < BENCH_WARMUP; i++)
        gc_collect(b->heap, 0, true);
    for (int i = 0; i < BENCH_REPS; i++)
        collect_live(b, &f->plain, NULL);

    configure(b, 0, 0, true);
    f->cluster_error = GC_OK;
    for (uint32_t a = 0; a < BENCH_ACTORS; a++) {
        gc_result r = gc_cluster_create(b->heap, actors[a]);
        if (r != GC_OK && f->cluster_error == GC_OK)
            f->cluster_error = r;
    }
    f->clusters = gc_cluster_count(b->heap);
    if (f->clusters == 0) {
        f->clustered.ok = false;
    } else {
        for (int i = 0; i < BENCH_WARMUP; i++)
            gc_collect(b->heap, 0, true);
        for (int i = 0; i < BENCH_REPS; i++)
            collect_live(b, &f->clustered, NULL);
    }

    for (uint32_t a = 0; a < BENCH_ACTORS; a++)
        gc_root_remove(b->heap, actors[a]);
    gc_collect(b->heap, 0, true);
    if (gc_object_count(b->heap) != b->baseline_objects)
        printf("  !! after dropping the actors %u objects are live, expected %u\n",
               gc_object_count(b->heap), b->baseline_objects);
    free(actors);
}

/* ---- printing ---------------------------------------------------------------------------- */

static double live_median(const live_figures *f, bool mark)
{
    return f->ok ? bench_runs_median(mark ? &f->mark : &f->wall) : NAN;
}

static double ns_per_object(double seconds, uint32_t n)
{
    return seconds * 1e9 / n;
}

static void progress_live(const char *what, const shape_figures *f)
{
    char a[32], b2[32], c[32], d[32], e[32], g[32];
    bench_progress("%s, all live: collection %s ms (mark %s) default workers; "
                   "%s ms (mark %s) 1 worker; %s ms (mark %s) 2 workers; marked %u", what,
                   bench_fmt_ms(a, sizeof a, live_median(&f->dflt, false)),
                   bench_fmt_ms(b2, sizeof b2, live_median(&f->dflt, true)),
                   bench_fmt_ms(c, sizeof c, live_median(&f->w1, false)),
                   bench_fmt_ms(d, sizeof d, live_median(&f->w1, true)),
                   bench_fmt_ms(e, sizeof e, live_median(&f->w2, false)),
                   bench_fmt_ms(g, sizeof g, live_median(&f->w2, true)), f->marked);
}

static void progress_incr(const char *what, const char *variant, const incr_figures *f)
{
    char a[32], b2[32], c[32], d[32], e[32], g[32];
    if (!f->supported)
        bench_progress("%s, incremental at 2 ms%s: n/a (one call took %s ms: no slicing)", what,
                       variant, bench_fmt_ms(a, sizeof a, f->single_call));
    else
        bench_progress("%s, incremental at 2 ms%s: %u slices, longest %s ms (thread CPU %.2f "
                       "ms; slice %u; first %s, last %s), most CPU in one slice %.2f ms (slice "
                       "%u), p99 %s ms, total %s ms (collector's own count: %u slices, longest "
                       "%s ms)", what, variant, f->slices.count,
                       bench_fmt_ms(a, sizeof a, f->slices.longest), f->cpu_of_longest * 1e3,
                       f->longest_at, bench_fmt_ms(e, sizeof e, f->first),
                       bench_fmt_ms(g, sizeof g, f->last), f->longest_cpu * 1e3,
                       f->longest_cpu_at, bench_fmt_ms(b2, sizeof b2, f->slices.p99),
                       bench_fmt_ms(c, sizeof c, f->slices.total), f->reported_slices,
                       bench_fmt_ms(d, sizeof d, f->reported_longest));
}

/* ---- peers and ratios -------------------------------------------------------------------- */

typedef struct ratio_line {
    const char *key;        /* JSON key */
    const char *label;
    double reap, peer;      /* seconds (or bytes for the memory line) */
    double ratio;           /* as defined per line */
    const char *ratio_desc;
    const char *target;
    bool met;
    bool has_target;
} ratio_line;

static double peer(const char *text, const char *a, const char *b2, const char *c)
{
    const char *keys[3] = {a, b2, c};
    return bench_json_lookup(text, keys, c ? 3 : 2) / 1e3; /* ms -> s */
}

#define MAX_RATIOS 32

typedef struct ratio_table {
    ratio_line l[MAX_RATIOS];
    int count;
} ratio_table;

/* direction: +1 the ratio must be at least bound, -1 at most bound, 0 no target. */
static void ratio_add(ratio_table *t, const char *key, const char *label, double reap,
                      double peer_v, double ratio, const char *desc, const char *target,
                      int direction, double bound)
{
    if (t->count == MAX_RATIOS)
        return;
    ratio_line *l = &t->l[t->count++];
    l->key = key;
    l->label = label;
    l->reap = reap;
    l->peer = peer_v;
    l->ratio = ratio;
    l->ratio_desc = desc;
    l->target = target;
    l->has_target = direction != 0 && !isnan(ratio);
    l->met = direction > 0 ? ratio >= bound : ratio <= bound;
}

static void build_ratios(const bench_all *all, const char *peers, ratio_table *t)
{
    static const char *const keys[2][5] = {
        {"root_array_mark_vs_floor", "root_array_boehm_1_vs_reap_1", "root_array_boehm_2_vs_reap_2",
         "root_array_lua_vs_reap_1", "root_array_workers_1_vs_2"},
        {"single_root_mark_vs_floor", "single_root_boehm_1_vs_reap_1",
         "single_root_boehm_2_vs_reap_2", "single_root_lua_vs_reap_1",
         "single_root_workers_1_vs_2"},
    };
    static const char *const labels[2][5] = {
        {"root array: reap mark (1 worker) vs floor", "root array: Boehm 1 marker vs reap 1 worker",
         "root array: Boehm 2 markers vs reap 2 workers", "root array: Lua vs reap 1 worker",
         "root array: reap mark 1 worker vs 2 workers"},
        {"single root: reap mark (1 worker) vs floor",
         "single root: Boehm 1 marker vs reap 1 worker",
         "single root: Boehm 2 markers vs reap 2 workers", "single root: Lua vs reap 1 worker",
         "single root: reap mark 1 worker vs 2 workers"},
    };
    memset(t, 0, sizeof *t);
    for (int s = 0; s < 2; s++) {
        const shape_figures *f = &all->shape[s];
        const char *key = bench_shape_key(standard_shapes[s]);
        double m1 = live_median(&f->w1, true), m2 = live_median(&f->w2, true);
        double c1 = live_median(&f->w1, false), c2 = live_median(&f->w2, false);
        double fl = peer(peers, "floor", key, "mark_ms");
        double b1 = peer(peers, "boehm", key, "markers_1_ms");
        double b2 = peer(peers, "boehm", key, "markers_2_ms");
        double lu = peer(peers, "lua", key, "collect_ms");
        ratio_add(t, keys[s][0], labels[s][0], m1, fl, m1 / fl, "reap/floor", "<= 2.0", -1, 2.0);
        ratio_add(t, keys[s][1], labels[s][1], c1, b1, b1 / c1, "boehm/reap", ">= 6", 1, 6.0);
        ratio_add(t, keys[s][2], labels[s][2], c2, b2, b2 / c2, "boehm/reap", ">= 6", 1, 6.0);
        ratio_add(t, keys[s][3], labels[s][3], c1, lu, lu / c1, "lua/reap", ">= 3", 1, 3.0);
        /* Two workers must reach 1.6x where the machine lets Boehm's two markers reach 1.4x,
         * and never lose to one. */
        bool scales = b1 / b2 >= 1.4;
        ratio_add(t, keys[s][4], labels[s][4], m1, m2, m1 / m2, "1w/2w",
                  scales ? ">= 1.6" : ">= 1.0 *", 1, scales ? 1.6 : 1.0);
    }
    double fl_big = peer(peers, "floor", "big_array", "mark_ms");
    double big_mark = live_median(&all->big.dflt, true);
    ratio_add(t, "big_array_mark_vs_floor", "one big array: reap mark (default) vs floor",
              big_mark, fl_big, big_mark / fl_big, "reap/floor", "", 0, 0);
    for (int s = 0; s < 2; s++) {
        const incr_figures *f = &all->shape[s].incr;
        ratio_add(t, s == 0 ? "root_array_longest_slice" : "single_root_longest_slice",
                  s == 0 ? "root array: longest incremental slice"
                         : "single root: longest incremental slice",
                  f->slices.longest, NAN, f->slices.longest * 1e3, "ms", "<= 2.2", -1,
                  SLICE_TARGET * 1e3);
    }
    double lua_step = peer(peers, "lua", "big_array", "longest_step_ms");
    const incr_figures *bf = &all->big.incr;
    ratio_add(t, "big_array_longest_slice", "one big array: longest slice (peer: Lua step)",
              bf->slices.longest, lua_step, bf->slices.longest * 1e3, "ms", "<= 2.2", -1,
              SLICE_TARGET * 1e3);
    static const char *const g_keys[3] = {"root_array_longest_slice_sliced_gather",
                                          "single_root_longest_slice_sliced_gather",
                                          "big_array_longest_slice_sliced_gather"};
    static const char *const g_labels[3] = {"root array: longest slice, sliced gather",
                                            "single root: longest slice, sliced gather",
                                            "one big array: longest slice, sliced gather"};
    const incr_figures *gf[3] = {&all->shape[0].incr_gather, &all->shape[1].incr_gather,
                                 &all->big.incr_gather};
    for (int i = 0; i < 3; i++)
        ratio_add(t, g_keys[i], g_labels[i], gf[i]->slices.longest, NAN,
                  gf[i]->slices.longest * 1e3, "ms", "<= 2.2", -1, SLICE_TARGET * 1e3);
    ratio_add(t, "purge_longest_slice", "purge 1M garbage: longest slice at 2 ms",
              all->purge.slices.longest, NAN, all->purge.slices.longest * 1e3, "ms", "<= 2.2",
              -1, SLICE_TARGET * 1e3);
    double purge = bench_runs_median(&all->shape[0].garbage_purge);
    ratio_add(t, "purge_ns_per_object", "purge 1M garbage: ns/object (peer: floor loop)",
              purge, all->purge.floor, purge * 1e9 / all->n, "ns/object", "<= 20", -1, 20);
    double plain = live_median(&all->actors.plain, true);
    double clustered = live_median(&all->actors.clustered, true);
    ratio_add(t, "actors_plain_vs_clusters", "actors: mark with clusters (peer: without)",
              clustered, plain, plain / clustered, "plain/clustered", "", 0, 0);
    ratio_add(t, "bytes_per_object", "bytes per object beyond payload (collector)", NAN, NAN,
              all->mem.malloc_per_obj, "bytes", "<= 32", -1, 32);
}

static void print_ratios(const ratio_table *t, bool have_peers)
{
    char a[32], b2[32], c[32];
    char caches[256];
    printf("\nreap vs peers and targets (issue 17), all from this run; times are medians in ms\n"
           "caches of cpu0: %s\n", bench_caches_str(caches, sizeof caches));
    if (!have_peers)
        printf("  note: no peers.json in the output directory: peer figures are n/a "
               "(run peers_bench first; `make bench` does)\n");
    printf("(* Boehm's 2 markers reached less than 1.4x of one in this run: 2 workers must "
           "not lose to one)\n");
    printf("%-52s %10s %10s %10s %-16s %-10s %s\n", "comparison", "reap", "peer", "ratio",
           "(ratio is)", "target", "");
    for (int i = 0; i < t->count; i++) {
        const ratio_line *l = &t->l[i];
        bool is_bytes = strcmp(l->ratio_desc, "bytes") == 0;
        printf("%-52s %10s %10s %10s %-16s %-10s %s\n", l->label,
               is_bytes ? "-" : bench_fmt_ms(a, sizeof a, l->reap),
               is_bytes ? "-" : bench_fmt_ms(b2, sizeof b2, l->peer),
               bench_fmt_num(c, sizeof c, l->ratio, is_bytes ? 1 : 2),
               l->ratio_desc, l->target,
               !l->has_target ? "" : l->met ? "met" : "NOT MET");
    }
}

/* ---- JSON -------------------------------------------------------------------------------- */

static void json_live(bench_json *j, const char *prefix, const live_figures *f, uint32_t n)
{
    char key[96];
    snprintf(key, sizeof key, "%s_collect_ms", prefix);
    bench_json_ms(j, key, live_median(f, false));
    snprintf(key, sizeof key, "%s_collect_ns_per_object", prefix);
    bench_json_num(j, key, ns_per_object(live_median(f, false), n));
    snprintf(key, sizeof key, "%s_collect_runs_ms", prefix);
    bench_json_runs_ms(j, key, &f->wall);
    snprintf(key, sizeof key, "%s_mark_ms", prefix);
    bench_json_ms(j, key, live_median(f, true));
    snprintf(key, sizeof key, "%s_mark_runs_ms", prefix);
    bench_json_runs_ms(j, key, &f->mark);
    snprintf(key, sizeof key, "%s_marks_helped", prefix);
    bench_json_num(j, key, f->helped);
    snprintf(key, sizeof key, "%s_marks_alone_by_choice", prefix);
    bench_json_num(j, key, f->uninvited);
}

static void json_incr(bench_json *j, const char *key, const incr_figures *f)
{
    bench_json_begin(j, key);
    bench_json_bool(j, "supported", f->supported);
    if (f->supported)
        bench_json_int(j, "slices", f->slices.count);
    else
        bench_json_num(j, "slices", NAN);
    bench_json_ms(j, "longest_slice_ms", f->slices.longest);
    bench_json_ms(j, "p99_slice_ms", f->slices.p99);
    bench_json_ms(j, "total_ms", f->slices.total);
    bench_json_int(j, "longest_slice_position", f->longest_at);
    bench_json_ms(j, "longest_slice_thread_cpu_ms", f->cpu_of_longest);
    bench_json_ms(j, "most_thread_cpu_in_a_slice_ms", f->longest_cpu);
    bench_json_ms(j, "first_call_ms", f->first);
    bench_json_ms(j, "last_slice_ms", f->last);
    bench_json_int(j, "collector_reported_slices", f->reported_slices);
    bench_json_ms(j, "collector_reported_longest_ms", f->reported_longest);
    bench_json_ms(j, "unsliced_call_ms", f->single_call);
    bench_json_end(j);
}

static void json_header(bench_json *j, const char *name, uint32_t n)
{
    bench_json_str(j, "bench", name);
    bench_json_int(j, "n", n);
    bench_json_bool(j, "standard_graph", n == BENCH_GRAPH_N);
    bench_json_int(j, "payload_bytes", BENCH_GRAPH_PAYLOAD);
    bench_json_int(j, "refs_per_object", BENCH_GRAPH_SLOTS);
    bench_json_bool(j, "refs_inside_payload", true);
    bench_json_int(j, "warmup_runs", BENCH_WARMUP);
    bench_json_int(j, "timed_runs", BENCH_REPS);
    bench_json_int(j, "garbage_runs", GARBAGE_REPS);
    bench_json_str(j, "statistic", "median");
    bench_json_caches(j);
}

static bool write_core_json(const char *dir, const bench_all *all)
{
    bench_json j;
    if (!bench_json_open(&j, dir, "gc_core.json"))
        return false;
    json_header(&j, "gc_core", all->n);
    bench_json_str(&j, "settings", "gc_settings_default(); num_workers = 0 (the machine's "
                                   "cores); gc_collect(heap, 0, true)");
    for (int s = 0; s < 2; s++) {
        const shape_figures *f = &all->shape[s];
        bench_json_begin(&j, bench_shape_key(standard_shapes[s]));
        bench_json_ms(&j, "build_ms", f->build);
        bench_json_ms(&j, "live_collect_ms", live_median(&f->dflt, false));
        bench_json_num(&j, "live_collect_ns_per_object",
                       ns_per_object(live_median(&f->dflt, false), all->n));
        bench_json_runs_ms(&j, "live_collect_runs_ms", &f->dflt.wall);
        bench_json_ms(&j, "live_mark_ms", live_median(&f->dflt, true));
        bench_json_int(&j, "live_marked", f->marked);
        bench_json_ms(&j, "garbage_collect_ms", bench_runs_median(&f->garbage_wall));
        bench_json_num(&j, "garbage_collect_ns_per_object",
                       ns_per_object(bench_runs_median(&f->garbage_wall), all->n));
        bench_json_runs_ms(&j, "garbage_collect_runs_ms", &f->garbage_wall);
        bench_json_ms(&j, "garbage_mark_ms", bench_runs_median(&f->garbage_mark));
        bench_json_ms(&j, "garbage_gather_ms", bench_runs_median(&f->garbage_gather));
        bench_json_ms(&j, "garbage_purge_ms", bench_runs_median(&f->garbage_purge));
        bench_json_int(&j, "garbage_destroyed", f->destroyed);
        bench_json_end(&j);
    }
    return bench_json_close(&j);
}

static bool write_full_json(const char *dir, const bench_all *all, const ratio_table *t,
                            bool have_peers)
{
    bench_json j;
    if (!bench_json_open(&j, dir, "gc_full.json"))
        return false;
    json_header(&j, "gc_full", all->n);
    for (int s = 0; s < 2; s++) {
        const shape_figures *f = &all->shape[s];
        bench_json_begin(&j, bench_shape_key(standard_shapes[s]));
        json_live(&j, "workers_default", &f->dflt, all->n);
        json_live(&j, "workers_1", &f->w1, all->n);
        json_live(&j, "workers_2", &f->w2, all->n);
        json_live(&j, "workers_1_no_prefetch", &f->w1_nopf, all->n);
        bench_json_num(&j, "mark_speedup_2_workers",
                       live_median(&f->w1, true) / live_median(&f->w2, true));
        bench_json_num(&j, "collect_speedup_2_workers",
                       live_median(&f->w1, false) / live_median(&f->w2, false));
        json_incr(&j, "incremental_2ms", &f->incr);
        json_incr(&j, "incremental_2ms_sliced_gather", &f->incr_gather);
        bench_json_end(&j);
    }
    bench_json_begin(&j, "big_array");
    bench_json_str(&j, "what", "one rooted object whose gc_ref_array holds N references to N "
                               "objects with empty slots");
    json_live(&j, "workers_default", &all->big.dflt, all->n);
    json_incr(&j, "incremental_2ms", &all->big.incr);
    json_incr(&j, "incremental_2ms_sliced_gather", &all->big.incr_gather);
    bench_json_end(&j);

    bench_json_begin(&j, "purge");
    bench_json_str(&j, "what", "N garbage objects (root array shape, unrooted); "
                               "gc_incremental_purge(heap, 0.002) until done");
    bench_json_bool(&j, "supported", all->purge.supported);
    bench_json_ms(&j, "unsliced_purge_ms",
                  bench_runs_median(&all->shape[0].garbage_purge));
    bench_json_num(&j, "unsliced_purge_ns_per_object",
                   bench_runs_median(&all->shape[0].garbage_purge) * 1e9 / all->n);
    bench_json_num(&j, "floor_ns_per_object", all->purge.floor * 1e9 / all->n);
    bench_json_ms(&j, "longest_slice_thread_cpu_ms", all->purge.cpu_of_longest);
    bench_json_ms(&j, "most_thread_cpu_in_a_slice_ms", all->purge.longest_cpu);
    bench_json_ms(&j, "unsliced_release_ms", bench_runs_median(&all->shape[0].garbage_release));
    bench_json_ms(&j, "mark_and_gather_ms", all->purge.mark_gather);
    bench_json_num(&j, "slices", all->purge.supported ? all->purge.slices.count : NAN);
    bench_json_ms(&j, "sliced_total_ms", all->purge.slices.total);
    bench_json_ms(&j, "longest_slice_ms", all->purge.slices.longest);
    bench_json_ms(&j, "p99_slice_ms", all->purge.slices.p99);
    bench_json_int(&j, "destroyed", all->purge.destroyed);
    bench_json_end(&j);

    bench_json_begin(&j, "actors");
    bench_json_str(&j, "what", "10000 rooted actors, each the outer of 20 components held in "
                               "its gc_ref_array; component slot 0 refers back to the actor");
    bench_json_int(&j, "objects", all->actors.objects);
    json_live(&j, "no_clusters", &all->actors.plain, all->actors.objects);
    json_live(&j, "clusters", &all->actors.clustered, all->actors.objects);
    bench_json_int(&j, "clusters_created", all->actors.clusters);
    bench_json_str(&j, "cluster_create_result", gc_result_str(all->actors.cluster_error));
    bench_json_end(&j);

    bench_json_begin(&j, "memory");
    bench_json_str(&j, "what", "growth while N objects are created and wired (single root "
                               "shape) divided by N, minus the 64-byte payload");
    bench_json_num(&j, "bytes_per_object_malloc", all->mem.malloc_per_obj);
    bench_json_num(&j, "bytes_per_object_rss", all->mem.rss_per_obj);
    bench_json_num(&j, "heap_fixed_bytes", all->mem.heap_fixed);
    bench_json_end(&j);

    bench_json_begin(&j, "ratios");
    bench_json_bool(&j, "peers_found", have_peers);
    for (int i = 0; i < t->count; i++) {
        const ratio_line *l = &t->l[i];
        bench_json_begin(&j, l->key);
        bench_json_str(&j, "label", l->label);
        bench_json_ms(&j, "reap_ms", l->reap);
        bench_json_ms(&j, "peer_ms", l->peer);
        bench_json_num(&j, "value", l->ratio);
        bench_json_str(&j, "value_is", l->ratio_desc);
        bench_json_str(&j, "target", l->target);
        if (l->has_target)
            bench_json_bool(&j, "met", l->met);
        else
            bench_json_num(&j, "met", NAN);
        bench_json_end(&j);
    }
    bench_json_end(&j);
    bench_json_num(&j, "total_seconds", all->total_seconds);
    return bench_json_close(&j);
}

/* ---- main --------------------------------------------------------------------------------- */

static void print_core_table(const bench_all *all)
{
    char a[32], b2[32], c[32], d[32];
    printf("\nreap full collections (issue 2), N = %u, medians: live of %d runs after %d "
           "warm-up, garbage of %d builds\n", all->n, BENCH_REPS, BENCH_WARMUP, GARBAGE_REPS);
    printf("%-14s %14s %12s %16s %12s\n", "shape", "live ms", "live ns/obj", "garbage ms",
           "garb ns/obj");
    for (int s = 0; s < 2; s++) {
        const shape_figures *f = &all->shape[s];
        double live = live_median(&f->dflt, false), garb = bench_runs_median(&f->garbage_wall);
        printf("%-14s %14s %12s %16s %12s\n", bench_shape_name(standard_shapes[s]),
               bench_fmt_ms(a, sizeof a, live),
               bench_fmt_num(b2, sizeof b2, ns_per_object(live, all->n), 1),
               bench_fmt_ms(c, sizeof c, garb),
               bench_fmt_num(d, sizeof d, ns_per_object(garb, all->n), 1));
    }
}

static void print_incr_rows(const char *title, const incr_figures *const in[3])
{
    char a[32], b2[32], c[32], label[96];
    snprintf(label, sizeof label, "%s: slices", title);
    printf("%-44s %12s %12s %14s\n", label,
           in[0]->supported ? bench_fmt_num(a, sizeof a, in[0]->slices.count, 0) : "n/a",
           in[1]->supported ? bench_fmt_num(b2, sizeof b2, in[1]->slices.count, 0) : "n/a",
           in[2]->supported ? bench_fmt_num(c, sizeof c, in[2]->slices.count, 0) : "n/a");
    snprintf(label, sizeof label, "%s: longest slice", title);
    printf("%-44s %12s %12s %14s\n", label, bench_fmt_ms(a, sizeof a, in[0]->slices.longest),
           bench_fmt_ms(b2, sizeof b2, in[1]->slices.longest),
           bench_fmt_ms(c, sizeof c, in[2]->slices.longest));
    snprintf(label, sizeof label, "%s: its CPU", title);
    printf("%-44s %12s %12s %14s\n", label, bench_fmt_ms(a, sizeof a, in[0]->cpu_of_longest),
           bench_fmt_ms(b2, sizeof b2, in[1]->cpu_of_longest),
           bench_fmt_ms(c, sizeof c, in[2]->cpu_of_longest));
    snprintf(label, sizeof label, "%s: max CPU", title);
    printf("%-44s %12s %12s %14s\n", label, bench_fmt_ms(a, sizeof a, in[0]->longest_cpu),
           bench_fmt_ms(b2, sizeof b2, in[1]->longest_cpu),
           bench_fmt_ms(c, sizeof c, in[2]->longest_cpu));
    snprintf(label, sizeof label, "%s: p99 slice", title);
    printf("%-44s %12s %12s %14s\n", label, bench_fmt_ms(a, sizeof a, in[0]->slices.p99),
           bench_fmt_ms(b2, sizeof b2, in[1]->slices.p99),
           bench_fmt_ms(c, sizeof c, in[2]->slices.p99));
    snprintf(label, sizeof label, "%s: last slice", title);
    printf("%-44s %12s %12s %14s\n", label, bench_fmt_ms(a, sizeof a, in[0]->last),
           bench_fmt_ms(b2, sizeof b2, in[1]->last), bench_fmt_ms(c, sizeof c, in[2]->last));
    if (!in[0]->supported || !in[1]->supported || !in[2]->supported)
        printf("%-44s %12s %12s %14s\n", "  (not sliced: the one call took)",
               bench_fmt_ms(a, sizeof a, in[0]->single_call),
               bench_fmt_ms(b2, sizeof b2, in[1]->single_call),
               bench_fmt_ms(c, sizeof c, in[2]->single_call));
}

static void print_full_table(const bench_all *all)
{
    char a[32], b2[32], c[32], d[32], e[32];
    printf("\nreap, issue 3 and 17 figures (ms unless stated; medians of %d)\n", BENCH_REPS);
    printf("%-44s %12s %12s %14s\n", "figure", "root array", "single root", "one big array");
    printf("%-44s %12s %12s %14s\n", "mark, default workers",
           bench_fmt_ms(a, sizeof a, live_median(&all->shape[0].dflt, true)),
           bench_fmt_ms(b2, sizeof b2, live_median(&all->shape[1].dflt, true)),
           bench_fmt_ms(c, sizeof c, live_median(&all->big.dflt, true)));
    printf("%-44s %12s %12s %14s\n", "mark, 1 worker",
           bench_fmt_ms(a, sizeof a, live_median(&all->shape[0].w1, true)),
           bench_fmt_ms(b2, sizeof b2, live_median(&all->shape[1].w1, true)), "-");
    printf("%-44s %12s %12s %14s\n", "mark, 1 worker, no prefetching",
           bench_fmt_ms(a, sizeof a, live_median(&all->shape[0].w1_nopf, true)),
           bench_fmt_ms(b2, sizeof b2, live_median(&all->shape[1].w1_nopf, true)), "-");
    printf("%-44s %12s %12s %14s\n", "mark, 2 workers",
           bench_fmt_ms(a, sizeof a, live_median(&all->shape[0].w2, true)),
           bench_fmt_ms(b2, sizeof b2, live_median(&all->shape[1].w2, true)), "-");
    char h0[32], h1[32];
    snprintf(h0, sizeof h0, "%u / %u of %d", all->shape[0].w2.helped, all->shape[0].w2.uninvited,
             BENCH_REPS);
    snprintf(h1, sizeof h1, "%u / %u of %d", all->shape[1].w2.helped, all->shape[1].w2.uninvited,
             BENCH_REPS);
    printf("%-44s %12s %12s %14s\n", "2 workers: thread joined / alone by choice", h0, h1,
           "-");
    printf("%-44s %12s %12s %14s\n", "mark speed-up, 2 workers (x)",
           bench_fmt_num(a, sizeof a, live_median(&all->shape[0].w1, true) /
                                          live_median(&all->shape[0].w2, true), 2),
           bench_fmt_num(b2, sizeof b2, live_median(&all->shape[1].w1, true) /
                                            live_median(&all->shape[1].w2, true), 2), "-");
    printf("%-44s %12s %12s %14s\n", "whole collection, 1 worker",
           bench_fmt_ms(a, sizeof a, live_median(&all->shape[0].w1, false)),
           bench_fmt_ms(b2, sizeof b2, live_median(&all->shape[1].w1, false)), "-");
    printf("%-44s %12s %12s %14s\n", "whole collection, 2 workers",
           bench_fmt_ms(a, sizeof a, live_median(&all->shape[0].w2, false)),
           bench_fmt_ms(b2, sizeof b2, live_median(&all->shape[1].w2, false)), "-");
    const incr_figures *in[3] = {&all->shape[0].incr, &all->shape[1].incr, &all->big.incr};
    print_incr_rows("incremental 2 ms", in);
    const incr_figures *ig[3] = {&all->shape[0].incr_gather, &all->shape[1].incr_gather,
                                 &all->big.incr_gather};
    print_incr_rows("incremental 2 ms + sliced gather", ig);
    const purge_figures *p = &all->purge;
    double unsliced = bench_runs_median(&all->shape[0].garbage_purge);
    printf("purge of %u garbage objects: unsliced %s ms = %.1f ns/object (floor loop that only "
           "returns slots to free lists: %.1f ns/object), then %.1f ms giving memory back; at "
           "2 ms: %s slices, total %s ms, longest %s ms (thread CPU %.2f ms), p99 %s ms\n",
           all->n,
           bench_fmt_ms(a, sizeof a, unsliced), unsliced * 1e9 / all->n, p->floor * 1e9 / all->n,
           bench_runs_median(&all->shape[0].garbage_release) * 1e3,
           p->supported ? bench_fmt_num(b2, sizeof b2, p->slices.count, 0) : "n/a",
           bench_fmt_ms(c, sizeof c, p->slices.total), bench_fmt_ms(d, sizeof d, p->slices.longest),
           p->cpu_of_longest * 1e3, bench_fmt_ms(e, sizeof e, p->slices.p99));
    const actor_figures *ac = &all->actors;
    printf("actors (%u objects): mark %s ms / collection %s ms without clusters; with %u "
           "clusters: mark %s ms / collection %s ms%s%s\n", ac->objects,
           bench_fmt_ms(a, sizeof a, live_median(&ac->plain, true)),
           bench_fmt_ms(b2, sizeof b2, live_median(&ac->plain, false)), ac->clusters,
           bench_fmt_ms(c, sizeof c, live_median(&ac->clustered, true)),
           bench_fmt_ms(d, sizeof d, live_median(&ac->clustered, false)),
           ac->cluster_error != GC_OK ? "; gc_cluster_create: " : "",
           ac->cluster_error != GC_OK ? gc_result_str(ac->cluster_error) : "");
    printf("bytes per object beyond the 64-byte payload: %s (collector), %s (RSS); "
           "heap fixed cost %s KiB\n",
           bench_fmt_num(a, sizeof a, all->mem.malloc_per_obj, 1),
           bench_fmt_num(b2, sizeof b2, all->mem.rss_per_obj, 1),
           bench_fmt_num(c, sizeof c, all->mem.heap_fixed / 1024, 1));
}

int main(int argc, char **argv)
{
    const char *outdir = argc > 1 ? argv[1] : "build/bench";
    static bench_all all;
    static reap_bench b;
    bench_graph graphs[3];
    double start = bench_now();

    all.n = b.n = bench_graph_size();
    printf("gc_bench: reap's collector on the standard benchmark graph\n");
    bench_print_environment();
    printf("objects: %u-byte payload = %u reference slots (GC_REF, %zu bytes) + %zu bytes of "
           "data; the collector's header is extra\n", BENCH_GRAPH_PAYLOAD, BENCH_GRAPH_SLOTS,
           BENCH_GRAPH_SLOTS * sizeof(void *),
           BENCH_GRAPH_PAYLOAD - BENCH_GRAPH_SLOTS * sizeof(void *));
    if (b.n != BENCH_GRAPH_N)
        printf("NOTE: REAP_BENCH_N=%u: this is NOT the standard graph (N = %u)\n", b.n,
               BENCH_GRAPH_N);
    for (int s = 0; s < 3; s++) {
        double t0 = bench_now();
        if (bench_graph_generate(&graphs[s], (bench_shape)s, b.n) != 0) {
            fprintf(stderr, "gc_bench: out of memory generating the graph\n");
            return 1;
        }
        bench_progress("generated %s graph, %u objects, in %.2f s (digest %016" PRIx64 ")",
                       bench_shape_name((bench_shape)s), b.n, bench_now() - t0,
                       bench_graph_digest(&graphs[s]));
    }
    b.objs = malloc((size_t)b.n * sizeof *b.objs);
    if (!b.objs)
        return 1;
    memset(b.objs, 0, (size_t)b.n * sizeof *b.objs);

    /* The heap: sized for the graph plus the actor graph's and the classes' objects. */
    double m_pre = bench_malloc_in_use();
    gc_heap_config cfg = {.max_objects = 0};
    gc_settings_default(&cfg.settings);
    if (b.n + 1024 > (1u << 22))
        cfg.max_objects = b.n + 1024;
    gc_result r = gc_heap_create(&cfg, &b.heap);
    if (r != GC_OK) {
        fprintf(stderr, "gc_bench: gc_heap_create: %s\n", gc_result_str(r));
        return 1;
    }
    if (register_classes(&b) != 0)
        return 1;
    b.baseline_objects = gc_object_count(b.heap);

    /* Single root first: its first build also measures the bytes per object. */
    for (int s = 1; s >= 0; s--) {
        const bench_graph *g = &graphs[standard_shapes[s]];
        shape_figures *f = &all.shape[s];
        const char *name = bench_shape_name(g->shape);
        void *root;
        double m0 = bench_malloc_in_use(), rss0 = bench_rss();
        gc_memory mem0;
        gc_memory_get(b.heap, &mem0);
        if (s == 1)
            all.mem.heap_fixed = m0 - m_pre;
        double t0 = bench_now();
        if (build_graph(&b, g, &root) != 0)
            return 1;
        f->build = bench_now() - t0;
        if (s == 1) {
            gc_memory mem1;
            gc_memory_get(b.heap, &mem1);
            all.mem.malloc_per_obj =
                ((double)mem1.total_bytes - (double)mem0.total_bytes) / b.n - BENCH_GRAPH_PAYLOAD;
            all.mem.rss_per_obj = (bench_rss() - rss0) / b.n - BENCH_GRAPH_PAYLOAD;
            bench_progress("%s: built %u objects in %.2f s; %.1f bytes/object beyond the "
                           "payload (collector), %.1f (RSS)", name, b.n, f->build,
                           all.mem.malloc_per_obj, all.mem.rss_per_obj);
        } else {
            bench_progress("%s: built %u objects in %.2f s", name, b.n, f->build);
        }
        measure_live(&b, f, true);
        progress_live(name, f);
        if (f->marked < b.n)
            printf("  !! only %u objects were marked; the graph has %u, all reachable\n",
                   f->marked, b.n);
        measure_incremental(&b, &f->incr, false);
        progress_incr(name, "", &f->incr);
        measure_incremental(&b, &f->incr_gather, true);
        progress_incr(name, " + sliced gather", &f->incr_gather);
        drop_graph(&b, root, f);
        for (int i = 1; i < GARBAGE_REPS; i++) {
            if (build_graph(&b, g, &root) != 0)
                return 1;
            drop_graph(&b, root, f);
        }
        char a[32], c[32];
        bench_progress("%s, all garbage: collection %s ms (purge %s ms), median of %d builds",
                       name, bench_fmt_ms(a, sizeof a, bench_runs_median(&f->garbage_wall)),
                       bench_fmt_ms(c, sizeof c, bench_runs_median(&f->garbage_purge)),
                       GARBAGE_REPS);
    }

    {
        char a[32], c[32], d[32];
        measure_purge(&b, &graphs[BENCH_SHAPE_ROOT_ARRAY], &all.purge);
        all.purge.floor = purge_floor(b.n);
        if (all.purge.supported)
            bench_progress("purge of %u garbage objects at 2 ms: %u slices, total %s ms, "
                           "longest %s ms (thread CPU %.2f ms), most CPU in one slice %.2f ms, "
                           "p99 %s ms", b.n, all.purge.slices.count,
                           bench_fmt_ms(a, sizeof a, all.purge.slices.total),
                           bench_fmt_ms(c, sizeof c, all.purge.slices.longest),
                           all.purge.cpu_of_longest * 1e3, all.purge.longest_cpu * 1e3,
                           bench_fmt_ms(d, sizeof d, all.purge.slices.p99));
        else
            bench_progress("purge at 2 ms: n/a (no purge was left pending)");
    }

    {
        const bench_graph *g = &graphs[BENCH_SHAPE_BIG_ARRAY];
        void *root;
        double t0 = bench_now();
        if (build_graph(&b, g, &root) != 0)
            return 1;
        all.big.build = bench_now() - t0;
        bench_progress("one big array: built %u objects in %.2f s", b.n, all.big.build);
        measure_live(&b, &all.big, false);
        progress_live("one big array", &all.big);
        measure_incremental(&b, &all.big.incr, false);
        progress_incr("one big array", "", &all.big.incr);
        measure_incremental(&b, &all.big.incr_gather, true);
        progress_incr("one big array", " + sliced gather", &all.big.incr_gather);
        drop_graph(&b, root, NULL);
    }

    {
        char a[32], c[32];
        measure_actors(&b, &all.actors);
        bench_progress("actors: %u objects; mark %s ms without clusters, %s ms with %u clusters",
                       all.actors.objects,
                       bench_fmt_ms(a, sizeof a, live_median(&all.actors.plain, true)),
                       bench_fmt_ms(c, sizeof c, live_median(&all.actors.clustered, true)),
                       all.actors.clusters);
    }

    gc_heap_destroy(b.heap);
    all.total_seconds = bench_now() - start;

    char *peers = bench_file_read(outdir, "peers.json");
    if (peers) {
        static const char *const n_key[1] = {"n"};
        double peers_n = bench_json_lookup(peers, n_key, 1);
        if (peers_n != (double)all.n) {
            printf("  note: %s/peers.json is for N = %.0f, not %u: peers ignored\n", outdir,
                   peers_n, all.n);
            free(peers);
            peers = NULL;
        }
    }
    ratio_table t;
    build_ratios(&all, peers, &t);
    print_core_table(&all);
    print_full_table(&all);
    print_ratios(&t, peers != NULL);
    bool written = write_core_json(outdir, &all);
    written = write_full_json(outdir, &all, &t, peers != NULL) && written;
    if (written)
        printf("\ngc_bench: wrote %s/gc_core.json and %s/gc_full.json in %.1f s\n", outdir,
               outdir, all.total_seconds);
    bench_print_load("at the end");
    free(peers);
    free(b.objs);
    for (int s = 0; s < 3; s++)
        bench_graph_free(&graphs[s]);
    return written ? 0 : 1;
}
