/*
 * map_bench.c - the collector's hash tables (gc/gc_map.c): the longest single insert while a
 * table grows to millions of keys, and the mark path's lookups of cluster_of.
 *
 * usage: map_bench [OUTDIR]                      inserts; writes OUTDIR/map.json
 *        map_bench mark [ACTORS] [MEMBERS]       one counted full mark of a clustered heap
 *
 * Inserts: REAP_MAP_BENCH_KEYS (2,000,000) keys into a fresh gc_map, twice per repetition:
 * once untimed per insert (the total), once with the monotonic clock read around every
 * insert (the longest insert, the 99.99th percentile, how many took over 1 ms and 0.1 ms).
 * A third run replays the same inserts (a map does the same work for the same keys) and
 * reads the thread's CPU clock around each insert that took over 0.1 ms in wall time (a
 * system call: too dear around every insert): an insert much longer in wall time than in
 * CPU time was preempted, one long in CPU time did too much work. No other insert can have
 * taken more CPU time than 0.1 ms, as CPU time never exceeds wall time.
 * Keys are object indices + 1 (the key of cluster_of, pins and names_by_index) or
 * splitmix64 numbers (names_by_path's path hashes). Beside the times: the minor page faults
 * and the system CPU time of the run (the kernel zeroing the tables' pages as they are first
 * touched), and the time to find every key afterwards. Medians over BENCH_REPS runs after
 * a warm-up; the longest insert is the largest of all runs.
 *
 * mark: ACTORS (50,000) cluster roots with MEMBERS (5) members each, every member and then
 * its actor referenced from one rooted array, so a mark looks cluster_of up for the first
 * member of each cluster it meets (which marks the root, and the root its cluster) and in
 * marking the cluster. One full collection warms up (and, destroying one object, runs the
 * purge's release, which finishes any move of cluster_of's keys); the second runs inside
 * map_probe_counted_mark. For an exact A/B of two builds count instructions:
 *     valgrind --tool=callgrind --toggle-collect=map_probe_counted_mark \
 *         build/tests/bench/map_bench mark
 * (and --toggle-collect=gc_map_get for the lookups alone).
 *
 * The map's interface used here (init, put, get, free) is the one gc_map had before it grew
 * incrementally, so this file builds against both for a before/after comparison.
 */
#include "bench_util.h"

#include "gc_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* ---- inserts -------------------------------------------------------------------------- */

enum { KEYS_INDEX, KEYS_HASHED, KEY_KINDS };
static const char *const key_kind_names[KEY_KINDS] = { "index", "hashed" };

typedef struct insert_figures {
    bench_runs total;        /* seconds for all inserts, no clock per insert */
    bench_runs lookup;       /* seconds to find every key afterwards */
    bench_runs p9999;        /* 99.99th percentile of one insert */
    bench_runs minflt;       /* minor faults of the untimed run (as "seconds": counts) */
    bench_runs stime;        /* system CPU seconds of the untimed run */
    double longest;          /* the longest insert of all timed runs, seconds */
    double longest_cpu;      /* its thread CPU time in the replay */
    uint32_t longest_at;     /* keys in the map before it */
    double longest_by_cpu;   /* the longest CPU time of the replayed slow inserts, seconds */
    uint32_t longest_by_cpu_at;
    uint64_t over_1ms;       /* inserts over 1 ms, all timed runs */
    uint64_t over_100us;     /* inserts over 0.1 ms, all timed runs */
    unsigned runs;
    bool ok;
} insert_figures;

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Keys 0 and UINT64_MAX are the map's own markers. */
static uint64_t *make_keys(int kind, uint32_t n)
{
    uint64_t *keys = malloc((size_t)n * sizeof *keys);
    uint64_t seed = 0x5EEDF00D;
    for (uint32_t i = 0; keys && i < n; i++) {
        uint64_t k = kind == KEYS_INDEX ? (uint64_t)i + 1 : splitmix64(&seed);
        keys[i] = k == 0 || k == UINT64_MAX ? 1 + i : k;
    }
    return keys;
}

static double rusage_stime(const struct rusage *u)
{
    return (double)u->ru_stime.tv_sec + (double)u->ru_stime.tv_usec * 1e-6;
}

/* One repetition: the untimed run, then the timed one; false if the map failed. */
#define SLOW_INSERT 1e-4 /* seconds of wall time: replayed with the CPU clock */

static bool insert_once(const uint64_t *keys, uint32_t n, double *pause, insert_figures *f,
                        bool counted)
{
    gc_map m;
    struct rusage u0, u1;

    gc_map_init(&m);
    getrusage(RUSAGE_SELF, &u0);
    double t0 = bench_now();
    for (uint32_t i = 0; i < n; i++)
        if (gc_map_put(&m, keys[i], i) != GC_OK)
            return false;
    double t1 = bench_now();
    getrusage(RUSAGE_SELF, &u1);
    uint32_t found = 0, v;
    for (uint32_t i = 0; i < n; i++)
        found += gc_map_get(&m, keys[i], &v) && v == i;
    double t2 = bench_now();
    gc_map_free(&m);
    if (found != n)
        return false;

    gc_map_init(&m);
    for (uint32_t i = 0; i < n; i++) {
        double a = bench_now();
        gc_result r = gc_map_put(&m, keys[i], i);
        pause[i] = bench_now() - a;
        if (r != GC_OK)
            return false;
    }
    gc_map_free(&m);
    if (!counted)
        return true;

    gc_map_init(&m); /* the replay */
    uint32_t longest_at = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (pause[i] > pause[longest_at])
            longest_at = i;
        if (!(pause[i] > SLOW_INSERT)) {
            if (i == longest_at && pause[i] > f->longest)
                f->longest_cpu = NAN; /* not replayed */
            if (gc_map_put(&m, keys[i], i) != GC_OK)
                return false;
            continue;
        }
        double c = bench_thread_cpu();
        gc_result r = gc_map_put(&m, keys[i], i);
        double cpu = bench_thread_cpu() - c;
        if (r != GC_OK)
            return false;
        if (cpu > f->longest_by_cpu) {
            f->longest_by_cpu = cpu;
            f->longest_by_cpu_at = i;
        }
        if (i == longest_at && pause[i] > f->longest)
            f->longest_cpu = cpu;
    }
    gc_map_free(&m);

    for (uint32_t i = 0; i < n; i++) {
        if (pause[i] > f->longest) {
            f->longest = pause[i];
            f->longest_at = i;
        }
        f->over_1ms += pause[i] > 1e-3;
        f->over_100us += pause[i] > 1e-4;
    }
    bench_runs_add(&f->total, t1 - t0);
    bench_runs_add(&f->lookup, t2 - t1);
    bench_runs_add(&f->minflt, (double)(u1.ru_minflt - u0.ru_minflt));
    bench_runs_add(&f->stime, rusage_stime(&u1) - rusage_stime(&u0));
    bench_runs_add(&f->p9999, bench_percentile(pause, n, 0.9999));
    f->runs++;
    return true;
}

static void measure_inserts(int kind, uint32_t n, insert_figures *f)
{
    memset(f, 0, sizeof *f);
    uint64_t *keys = make_keys(kind, n);
    double *pause = malloc((size_t)n * sizeof *pause);
    f->ok = keys && pause;
    for (int rep = 0; f->ok && rep < BENCH_WARMUP + BENCH_REPS; rep++)
        f->ok = insert_once(keys, n, pause, f, rep >= BENCH_WARMUP);
    free(keys);
    free(pause);
}

static void print_inserts(const char *kind, uint32_t n, const insert_figures *f)
{
    char a[32], b[32], c[32], d[32], e[32], g[32], h[32];
    if (!f->ok) {
        printf("  %-6s keys: the map failed\n", kind);
        return;
    }
    printf("  %-6s keys: %u inserts %s ms total (median), longest insert %s ms (CPU %s ms, at "
           "%u keys), longest in CPU time %s ms (at %u keys, of those over 0.1 ms), "
           "p99.99 %s ms, %llu over 1 ms, %llu over 0.1 ms (%u runs); lookups %s ms; "
           "minor faults %.0f, system CPU %s ms\n",
           kind, n, bench_fmt_ms(a, sizeof a, bench_runs_median(&f->total)),
           bench_fmt_ms(b, sizeof b, f->longest), bench_fmt_ms(g, sizeof g, f->longest_cpu),
           f->longest_at, bench_fmt_ms(h, sizeof h, f->longest_by_cpu), f->longest_by_cpu_at,
           bench_fmt_ms(c, sizeof c, bench_runs_median(&f->p9999)),
           (unsigned long long)f->over_1ms, (unsigned long long)f->over_100us, f->runs,
           bench_fmt_ms(d, sizeof d, bench_runs_median(&f->lookup)),
           bench_runs_median(&f->minflt), bench_fmt_ms(e, sizeof e, bench_runs_median(&f->stime)));
}

static void json_inserts(bench_json *j, const char *kind, const insert_figures *f)
{
    bench_json_begin(j, kind);
    bench_json_bool(j, "ok", f->ok);
    bench_json_ms(j, "total_ms", f->ok ? bench_runs_median(&f->total) : NAN);
    bench_json_runs_ms(j, "total_runs_ms", &f->total);
    bench_json_ms(j, "longest_insert_ms", f->ok ? f->longest : NAN);
    bench_json_ms(j, "longest_insert_cpu_ms", f->ok ? f->longest_cpu : NAN);
    bench_json_int(j, "longest_insert_at_keys", f->longest_at);
    bench_json_ms(j, "longest_insert_by_cpu_ms", f->ok ? f->longest_by_cpu : NAN);
    bench_json_int(j, "longest_insert_by_cpu_at_keys", f->longest_by_cpu_at);
    bench_json_ms(j, "p9999_insert_ms", f->ok ? bench_runs_median(&f->p9999) : NAN);
    bench_json_int(j, "inserts_over_1ms", (long long)f->over_1ms);
    bench_json_int(j, "inserts_over_100us", (long long)f->over_100us);
    bench_json_int(j, "timed_runs", f->runs);
    bench_json_ms(j, "lookup_all_ms", f->ok ? bench_runs_median(&f->lookup) : NAN);
    bench_json_num(j, "minor_faults", f->ok ? bench_runs_median(&f->minflt) : NAN);
    bench_json_ms(j, "system_cpu_ms", f->ok ? bench_runs_median(&f->stime) : NAN);
    bench_json_end(j);
}

/* ---- the mark probe ---------------------------------------------------------------------- */

typedef struct probe_part {
    void *owner;
    unsigned char data[56];
} probe_part;

typedef struct probe_holder {
    gc_ref_array items;
    unsigned char data[48];
} probe_holder;

static const gc_member part_members[] = { GC_REF(probe_part, owner), GC_MEMBERS_END };
static const gc_member holder_members[] = { GC_REF_ARRAY(probe_holder, items),
                                            GC_MEMBERS_END };

static void holder_destructor(void *obj)
{
    gc_ref_array_free(&((probe_holder *)obj)->items);
}

/* What callgrind counts: one call, nothing else inside it. */
__attribute__((noinline)) void map_probe_counted_mark(gc_heap *heap);
__attribute__((noinline)) void map_probe_counted_mark(gc_heap *heap)
{
    gc_result r = gc_collect(heap, 0, true);
    if (r != GC_OK)
        fprintf(stderr, "map_bench: gc_collect: %s\n", gc_result_str(r));
}

static int fail(const char *what, gc_result r)
{
    fprintf(stderr, "map_bench: %s: %s\n", what, gc_result_str(r));
    return 1;
}

static int mark_probe(uint32_t actors, uint32_t members)
{
    gc_heap_config cfg = { .max_objects = 0 };
    gc_settings_default(&cfg.settings);
    cfg.settings.num_workers = 1; /* the reference marker: counts do not depend on a thread */
    cfg.settings.create_clusters = true;
    gc_heap *heap;
    gc_result r = gc_heap_create(&cfg, &heap);
    if (r != GC_OK)
        return fail("gc_heap_create", r);
    gc_class_desc hd = { .name = "ProbeHolder", .size = sizeof(probe_holder),
                         .members = holder_members, .hooks = { .destructor = holder_destructor } };
    gc_class_desc ad = { .name = "ProbeActor", .size = sizeof(probe_holder),
                         .members = holder_members, .flags = GC_CLASS_CLUSTER_ROOT,
                         .hooks = { .destructor = holder_destructor } };
    gc_class_desc pd = { .name = "ProbePart", .size = sizeof(probe_part), .members = part_members,
                         .flags = GC_CLASS_CAN_BE_IN_CLUSTER };
    gc_class *hc, *ac, *pc;
    if ((r = gc_class_register(heap, &hd, &hc)) != GC_OK ||
        (r = gc_class_register(heap, &ad, &ac)) != GC_OK ||
        (r = gc_class_register(heap, &pd, &pc)) != GC_OK)
        return fail("gc_class_register", r);
    probe_holder *world;
    if ((r = gc_object_create(heap, hc, NULL, NULL, GC_CREATE_ROOT, (void **)&world)) != GC_OK)
        return fail("gc_object_create", r);
    for (uint32_t a = 0; a < actors; a++) {
        probe_holder *actor;
        if ((r = gc_object_create(heap, ac, NULL, NULL, 0, (void **)&actor)) != GC_OK)
            return fail("creating an actor", r);
        for (uint32_t m = 0; m < members; m++) {
            probe_part *part;
            if ((r = gc_object_create(heap, pc, actor, NULL, 0, (void **)&part)) != GC_OK ||
                (r = gc_ref_array_push(&actor->items, part)) != GC_OK ||
                (r = gc_ref_array_push(&world->items, part)) != GC_OK)
                return fail("creating a part", r);
            part->owner = actor;
        }
        if ((r = gc_ref_array_push(&world->items, actor)) != GC_OK) /* after its members */
            return fail("referencing an actor", r);
        if ((r = gc_cluster_create(heap, actor)) != GC_OK)
            return fail("gc_cluster_create", r);
    }
    void *garbage;
    if ((r = gc_object_create(heap, pc, NULL, NULL, 0, &garbage)) != GC_OK)
        return fail("gc_object_create", r);
    gc_collect(heap, 0, true); /* warm-up; destroys `garbage`, so the purge runs to release */
    uint32_t objects = gc_object_count(heap);
    map_probe_counted_mark(heap);
    printf("map_bench mark: %u actors x %u members, %u clusters, %u objects; %u live after "
           "the counted collection\n", actors, members, gc_cluster_count(heap), objects,
           gc_object_count(heap));
    gc_heap_destroy(heap);
    return 0;
}

/* ---- main ------------------------------------------------------------------------------ */

static uint32_t arg_count(const char *s, uint32_t fallback)
{
    if (!s || !*s)
        return fallback;
    char *end;
    unsigned long v = strtoul(s, &end, 10);
    return *end || v == 0 || v > (1ul << 28) ? fallback : (uint32_t)v;
}

int main(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: map_bench [OUTDIR]                 inserts into the collector's hash\n"
               "                                          table; writes OUTDIR/map.json\n"
               "       map_bench mark [ACTORS] [MEMBERS]  one counted mark of a clustered\n"
               "                                          heap (for callgrind)\n"
               "Environment: REAP_MAP_BENCH_KEYS (2000000).\n");
        return 0;
    }
    if (argc > 1 && strcmp(argv[1], "mark") == 0)
        return mark_probe(arg_count(argc > 2 ? argv[2] : NULL, 50000),
                          arg_count(argc > 3 ? argv[3] : NULL, 5));

    const char *outdir = argc > 1 ? argv[1] : "build/bench";
    uint32_t n = arg_count(getenv("REAP_MAP_BENCH_KEYS"), 2000000);
    printf("map_bench: %u inserts into a fresh gc_map, %d runs after %d warm-up\n", n,
           BENCH_REPS, BENCH_WARMUP);
    bench_print_environment();
    insert_figures f[KEY_KINDS];
    for (int kind = 0; kind < KEY_KINDS; kind++) {
        measure_inserts(kind, n, &f[kind]);
        print_inserts(key_kind_names[kind], n, &f[kind]);
    }
    bench_print_load("at the end");

    bench_json j;
    if (!bench_json_open(&j, outdir, "map.json"))
        return 1;
    bench_json_int(&j, "keys", n);
    bench_json_bool(&j, "optimised", bench_is_optimised());
    bench_json_caches(&j);
    for (int kind = 0; kind < KEY_KINDS; kind++)
        json_inserts(&j, key_kind_names[kind], &f[kind]);
    if (!bench_json_close(&j))
        return 1;
    printf("  wrote %s/map.json\n", outdir);
    return f[KEYS_INDEX].ok && f[KEYS_HASHED].ok ? 0 : 1;
}
