/*
 * peers_bench.c - runs the collectors reap is compared with on the standard graph and writes
 * OUTDIR/peers.json; gc_bench, run next by `make bench`, reads it to print reap/peer ratios
 * measured in the same run.
 *
 * usage: peers_bench OUTDIR
 *
 * The floor runs in this process; Boehm and Lua each run in a child process per figure, so
 * that every one starts from a fresh heap and Boehm's marker count can differ per run. Peers
 * whose development package was missing at build time are skipped with a note.
 */
#include "bench_graph.h"
#include "bench_peers.h"
#include "bench_util.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHAPES 3

typedef struct peers_results {
    floor_result floor[SHAPES];
    bool floor_ok[SHAPES];
    boehm_result boehm[2][2];   /* [shape: root array, single root][markers - 1] */
    bool boehm_ok[2][2];
    lua_result lua[2];          /* root array, single root */
    bool lua_ok[2];
    lua_result lua_big;         /* one big table: full collections and steps */
    bool lua_big_ok;
} peers_results;

static const bench_shape standard_shapes[2] = {BENCH_SHAPE_ROOT_ARRAY, BENCH_SHAPE_SINGLE_ROOT};

#ifdef BENCH_HAVE_BOEHM
typedef struct boehm_job {
    const bench_graph *g;
    unsigned markers;
} boehm_job;

static int boehm_child(void *arg, void *shared)
{
    const boehm_job *job = arg;
    return boehm_bench_collect(job->g, job->markers, shared);
}
#endif

#ifdef BENCH_HAVE_LUA
static int lua_collect_child(void *arg, void *shared)
{
    return lua_bench_collect(arg, shared);
}

static int lua_steps_child(void *arg, void *shared)
{
    return lua_bench_steps(arg, shared);
}
#endif

static void run_floor(const bench_graph graphs[SHAPES], peers_results *res)
{
    char a[32], b[32];
    for (int s = 0; s < SHAPES; s++) {
        res->floor_ok[s] = floor_bench_mark(&graphs[s], &res->floor[s]) == 0;
        bench_progress("floor, %s: built in %.2f s, marked %" PRIu64 " objects in %s ms "
                       "(side bitmap), %" PRIu64 " in %s ms (header mark word), median of %u",
                       bench_shape_name(graphs[s].shape), res->floor[s].build,
                       res->floor[s].marked,
                       bench_fmt_ms(a, sizeof a, bench_runs_median(&res->floor[s].runs)),
                       res->floor[s].header_marked,
                       bench_fmt_ms(b, sizeof b, bench_runs_median(&res->floor[s].header_runs)),
                       res->floor[s].runs.count);
    }
}

/* Boehm's 1- and 2-marker runs alternate (1, 2, 1, 2 per shape) and each marker count's
 * runs are pooled, so that a slow spell on the shared machine does not land on one of them
 * only. */
#define BOEHM_ROUNDS 2

static void run_boehm(const bench_graph graphs[SHAPES], peers_results *res)
{
#ifdef BENCH_HAVE_BOEHM
    char a[32];
    for (int s = 0; s < 2; s++) {
        for (unsigned m = 1; m <= 2; m++)
            res->boehm_ok[s][m - 1] = true;
        for (int round = 0; round < BOEHM_ROUNDS; round++)
            for (unsigned m = 1; m <= 2; m++) {
                boehm_job job = {&graphs[standard_shapes[s]], m};
                boehm_result one, *pooled = &res->boehm[s][m - 1];
                char what[64];
                snprintf(what, sizeof what, "boehm %s %u marker(s)",
                         bench_shape_name(standard_shapes[s]), m);
                if (!bench_run_child(what, boehm_child, &job, &one, sizeof one))
                    res->boehm_ok[s][m - 1] = false;
                bench_progress("boehm %s, %s, %u marker(s) requested, %u in use: built in "
                               "%.2f s, GC_gcollect %s ms (median of %u), %zu-byte objects",
                               one.version, bench_shape_name(standard_shapes[s]), m,
                               one.markers, one.build,
                               bench_fmt_ms(a, sizeof a, bench_runs_median(&one.runs)),
                               one.runs.count, one.object_size);
                if (round == 0)
                    *pooled = one;
                else
                    for (unsigned i = 0; i < one.runs.count; i++)
                        bench_runs_add(&pooled->runs, one.runs.v[i]);
            }
    }
#else
    (void)graphs;
    (void)res;
    printf("  note: Boehm GC skipped: bdw-gc was not found by pkg-config at build time "
           "(install libgc-dev, e.g. deploy/install-deps.sh --bench, and rebuild)\n");
#endif
}

static void run_lua(const bench_graph graphs[SHAPES], peers_results *res)
{
#ifdef BENCH_HAVE_LUA
    char a[32], b[32], c[32];
    for (int s = 0; s < 2; s++) {
        lua_result *r = &res->lua[s];
        res->lua_ok[s] = bench_run_child("lua collect", lua_collect_child,
                                         (void *)&graphs[standard_shapes[s]], r, sizeof *r);
        bench_progress("lua %s, %s: built in %.2f s, collect %s ms (median of %u)", r->version,
                       bench_shape_name(standard_shapes[s]), r->build,
                       bench_fmt_ms(a, sizeof a, bench_runs_median(&r->runs)), r->runs.count);
    }
    lua_result *r = &res->lua_big;
    res->lua_big_ok = bench_run_child("lua steps", lua_steps_child,
                                      (void *)&graphs[BENCH_SHAPE_BIG_ARRAY], r, sizeof *r);
    bench_progress("lua %s, one big table: collect %s ms; one cycle in %u steps, longest %s ms, "
                   "p99 %s ms", r->version,
                   bench_fmt_ms(a, sizeof a, bench_runs_median(&r->runs)), r->steps.count,
                   bench_fmt_ms(b, sizeof b, r->steps.longest),
                   bench_fmt_ms(c, sizeof c, r->steps.p99));
#else
    (void)graphs;
    (void)res;
    printf("  note: Lua 5.4 skipped: lua5.4 was not found by pkg-config at build time "
           "(install liblua5.4-dev, e.g. deploy/install-deps.sh --bench, and rebuild)\n");
#endif
}

static double median_if(bool ok, const bench_runs *r)
{
    return ok ? bench_runs_median(r) : NAN;
}

static void print_table(const peers_results *res, uint32_t n)
{
    char a[32], b[32], c[32];
    printf("\npeers, N = %u objects, median of %d timed runs after warm-up (Boehm: of %d, from "
           "%d alternating processes per marker count) (ms)\n", n, BENCH_REPS,
           BENCH_REPS * BOEHM_ROUNDS, BOEHM_ROUNDS);
    printf("%-40s %12s %12s %14s\n", "collector / figure", "root array", "single root",
           "one big array");
    printf("%-40s %12s %12s %14s\n", "floor: mark, 1 thread",
           bench_fmt_ms(a, sizeof a, median_if(res->floor_ok[0], &res->floor[0].runs)),
           bench_fmt_ms(b, sizeof b, median_if(res->floor_ok[1], &res->floor[1].runs)),
           bench_fmt_ms(c, sizeof c, median_if(res->floor_ok[2], &res->floor[2].runs)));
    printf("%-40s %12s %12s %14s\n", "  (info: mark word in object headers)",
           bench_fmt_ms(a, sizeof a, median_if(res->floor_ok[0], &res->floor[0].header_runs)),
           bench_fmt_ms(b, sizeof b, median_if(res->floor_ok[1], &res->floor[1].header_runs)),
           bench_fmt_ms(c, sizeof c, median_if(res->floor_ok[2], &res->floor[2].header_runs)));
    for (unsigned m = 1; m <= 2; m++) {
        char label[64];
        snprintf(label, sizeof label, "boehm: GC_gcollect, %u marker%s (in use: %u)", m,
                 m > 1 ? "s" : "", res->boehm[0][m - 1].markers);
        printf("%-40s %12s %12s %14s\n", label,
               bench_fmt_ms(a, sizeof a, median_if(res->boehm_ok[0][m - 1],
                                                   &res->boehm[0][m - 1].runs)),
               bench_fmt_ms(b, sizeof b, median_if(res->boehm_ok[1][m - 1],
                                                   &res->boehm[1][m - 1].runs)),
               "-");
    }
    printf("%-40s %12s %12s %14s\n", "lua: collectgarbage(\"collect\")",
           bench_fmt_ms(a, sizeof a, median_if(res->lua_ok[0], &res->lua[0].runs)),
           bench_fmt_ms(b, sizeof b, median_if(res->lua_ok[1], &res->lua[1].runs)),
           bench_fmt_ms(c, sizeof c, median_if(res->lua_big_ok, &res->lua_big.runs)));
    printf("%-40s %12s %12s %14s\n", "lua: longest incremental step", "-", "-",
           bench_fmt_ms(c, sizeof c, res->lua_big_ok ? res->lua_big.steps.longest : NAN));
    printf("%-40s %12s %12s %14s\n", "lua: p99 incremental step", "-", "-",
           bench_fmt_ms(c, sizeof c, res->lua_big_ok ? res->lua_big.steps.p99 : NAN));
    printf("%-40s %12s %12s %14s\n", "lua: incremental steps in one cycle", "-", "-",
           res->lua_big_ok ? bench_fmt_num(c, sizeof c, res->lua_big.steps.count, 0) : "n/a");
    fflush(stdout);
}

static void json_runs(bench_json *j, const char *key, bool ok, const bench_runs *r)
{
    bench_json_ms(j, key, median_if(ok, r));
    char runs_key[64];
    snprintf(runs_key, sizeof runs_key, "%s_runs", key);
    bench_json_runs_ms(j, runs_key, r);
}

static bool write_json(const char *dir, const peers_results *res, uint32_t n,
                       const bench_graph graphs[SHAPES])
{
    bench_json j;
    if (!bench_json_open(&j, dir, "peers.json"))
        return false;
    bench_json_str(&j, "bench", "peers");
    bench_json_int(&j, "n", n);
    bench_json_bool(&j, "standard_graph", n == BENCH_GRAPH_N);
    bench_json_int(&j, "payload_bytes", BENCH_GRAPH_PAYLOAD);
    bench_json_int(&j, "refs_per_object", BENCH_GRAPH_SLOTS);
    bench_json_int(&j, "timed_runs", BENCH_REPS);
    bench_json_str(&j, "statistic", "median");
    bench_json_begin(&j, "graph_digest");
    for (int s = 0; s < SHAPES; s++) {
        char hex[32];
        snprintf(hex, sizeof hex, "%016" PRIx64, bench_graph_digest(&graphs[s]));
        bench_json_str(&j, bench_shape_key((bench_shape)s), hex);
    }
    bench_json_end(&j);

    bench_json_begin(&j, "floor");
    bench_json_str(&j, "what", "hand-written precise marker, 1 thread: plain 64-byte structs, "
                               "mark bits beside them in a bitmap, a mark stack and a 16-entry "
                               "prefetch FIFO (mark_ms); header_mark_ms: the same with a mark "
                               "word in a 16-byte header before each object, reap's layout");
    for (int s = 0; s < SHAPES; s++) {
        bench_json_begin(&j, bench_shape_key((bench_shape)s));
        json_runs(&j, "mark_ms", res->floor_ok[s], &res->floor[s].runs);
        bench_json_int(&j, "marked", (long long)res->floor[s].marked);
        json_runs(&j, "header_mark_ms", res->floor_ok[s], &res->floor[s].header_runs);
        bench_json_int(&j, "header_marked", (long long)res->floor[s].header_marked);
        bench_json_end(&j);
    }
    bench_json_end(&j);

    /* Peers that were not built still get their sections, all null. */
#ifdef BENCH_HAVE_BOEHM
    const bool have_boehm = true;
#else
    const bool have_boehm = false;
#endif
#ifdef BENCH_HAVE_LUA
    const bool have_lua = true;
#else
    const bool have_lua = false;
#endif
    bench_json_begin(&j, "boehm");
    bench_json_bool(&j, "available", have_boehm);
    bench_json_str(&j, "version", res->boehm[0][0].version);
    bench_json_int(&j, "object_size", (long long)res->boehm[0][0].object_size);
    bench_json_str(&j, "runs", "markers 1 and 2 alternate in separate processes, 2 each; "
                               "the timed runs of both processes are pooled");
    for (int s = 0; s < 2; s++) {
        bench_json_begin(&j, bench_shape_key(standard_shapes[s]));
        json_runs(&j, "markers_1_ms", res->boehm_ok[s][0], &res->boehm[s][0].runs);
        bench_json_int(&j, "markers_1_in_use", res->boehm[s][0].markers);
        json_runs(&j, "markers_2_ms", res->boehm_ok[s][1], &res->boehm[s][1].runs);
        bench_json_int(&j, "markers_2_in_use", res->boehm[s][1].markers);
        bench_json_int(&j, "heap_bytes", (long long)res->boehm[s][0].heap_size);
        bench_json_end(&j);
    }
    bench_json_end(&j);

    bench_json_begin(&j, "lua");
    bench_json_bool(&j, "available", have_lua);
    bench_json_str(&j, "version", res->lua[0].version);
    for (int s = 0; s < 2; s++) {
        bench_json_begin(&j, bench_shape_key(standard_shapes[s]));
        json_runs(&j, "collect_ms", res->lua_ok[s], &res->lua[s].runs);
        bench_json_end(&j);
    }
    bench_json_begin(&j, "big_array");
    json_runs(&j, "collect_ms", res->lua_big_ok, &res->lua_big.runs);
    bench_json_int(&j, "steps", res->lua_big_ok ? res->lua_big.steps.count : 0);
    bench_json_ms(&j, "longest_step_ms", res->lua_big_ok ? res->lua_big.steps.longest : NAN);
    bench_json_ms(&j, "p99_step_ms", res->lua_big_ok ? res->lua_big.steps.p99 : NAN);
    bench_json_ms(&j, "cycle_total_ms", res->lua_big_ok ? res->lua_big.steps.total : NAN);
    bench_json_end(&j);
    bench_json_end(&j);
    return bench_json_close(&j);
}

int main(int argc, char **argv)
{
    const char *outdir = argc > 1 ? argv[1] : "build/bench";
    uint32_t n = bench_graph_size();
    bench_graph graphs[SHAPES];
    static peers_results res;

    printf("peers_bench: the floor, Boehm GC and Lua 5.4 on the standard benchmark graph\n");
    bench_print_environment();
    if (n != BENCH_GRAPH_N)
        printf("NOTE: REAP_BENCH_N=%u: this is NOT the standard graph (N = %u)\n", n,
               BENCH_GRAPH_N);
    for (int s = 0; s < SHAPES; s++) {
        double t0 = bench_now();
        if (bench_graph_generate(&graphs[s], (bench_shape)s, n) != 0) {
            fprintf(stderr, "peers_bench: out of memory generating the graph\n");
            return 1;
        }
        bench_progress("generated %s graph, %u objects, in %.2f s (digest %016" PRIx64 ")",
                       bench_shape_name((bench_shape)s), n, bench_now() - t0,
                       bench_graph_digest(&graphs[s]));
    }

    run_floor(graphs, &res);
    run_boehm(graphs, &res);
    run_lua(graphs, &res);
    print_table(&res, n);
    bool written = write_json(outdir, &res, n, graphs);
    if (written)
        printf("peers_bench: wrote %s/peers.json\n", outdir);

    bench_print_load("at the end");
    for (int s = 0; s < SHAPES; s++)
        bench_graph_free(&graphs[s]);
    return written ? 0 : 1;
}
