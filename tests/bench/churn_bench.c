/*
 * churn_bench.c - does memory go back after a churn? (issue 9, "memory goes back")
 *
 * The server's case in small: a warm-up population of rooted "bots", then a churn in which
 * many bots each create props (all of them dropped abruptly), then everything the churn made
 * is unrooted and one full collection runs. The program prints and writes to
 * OUTDIR/churn.json the resident set size (/proc/self/statm) and gc_heap_bytes after the
 * warm-up, at the peak, after the collection, and after malloc_trim(0) (what the server does
 * after a collection that freed much), with the ratio to the warm-up RSS (target <= 1.25).
 *
 * usage: churn_bench [OUTDIR] [--help]     REAP_CHURN_BOTS=800 REAP_CHURN_PROPS=20 ROUNDS=...
 */
#include "bench_util.h"

#include "reap_gc.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct prop {
    void *owner;
    void *next;
    unsigned char data[240]; /* a prop carries state: 256-byte payloads */
} prop;

typedef struct bot {
    gc_ref_array props;
    unsigned char data[112];
} bot;

static const gc_member prop_members[] = { GC_REF(prop, owner), GC_REF(prop, next),
                                          GC_MEMBERS_END };
static const gc_member bot_members[] = { GC_REF_ARRAY(bot, props), GC_MEMBERS_END };

static void bot_destructor(void *obj)
{
    gc_ref_array_free(&((bot *)obj)->props);
}

static unsigned env_count(const char *name, unsigned fallback)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return fallback;
    char *end;
    unsigned long n = strtoul(v, &end, 10);
    if (*end || n == 0 || n > 1000000) {
        fprintf(stderr, "churn_bench: %s=%s is not a count in 1..1000000; using %u\n", name, v,
                fallback);
        return fallback;
    }
    return (unsigned)n;
}

typedef struct reading {
    double rss;
    double heap;
    gc_memory mem;
} reading;

static reading read_now(gc_heap *heap)
{
    reading r = { bench_rss(), (double)gc_heap_bytes(heap), { 0 } };
    gc_memory_get(heap, &r.mem);
    return r;
}

int main(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: churn_bench [OUTDIR]\n"
               "Churns bots and props through reap's collector and reports RSS and\n"
               "gc_heap_bytes after warm-up, at the peak, after a collection and after\n"
               "malloc_trim(0); writes OUTDIR/churn.json (default build/bench).\n"
               "Environment: REAP_CHURN_BOTS (800), REAP_CHURN_PROPS (20 per bot),\n"
               "REAP_CHURN_ROUNDS (50 props per bot are made and dropped each round).\n");
        return 0;
    }
    const char *outdir = argc > 1 ? argv[1] : "build/bench";
    unsigned bots = env_count("REAP_CHURN_BOTS", 800);
    unsigned props = env_count("REAP_CHURN_PROPS", 20);
    unsigned rounds = env_count("REAP_CHURN_ROUNDS", 50);

    gc_heap_config cfg = { .max_objects = 0 };
    gc_settings_default(&cfg.settings);
    gc_heap *heap;
    gc_result r = gc_heap_create(&cfg, &heap);
    if (r != GC_OK) {
        fprintf(stderr, "churn_bench: gc_heap_create: %s\n", gc_result_str(r));
        return 1;
    }
    gc_class_desc pd = { .name = "Prop", .size = sizeof(prop), .members = prop_members };
    gc_class_desc bd = { .name = "Bot", .size = sizeof(bot), .members = bot_members,
                         .hooks = { .destructor = bot_destructor } };
    gc_class *pc, *bc;
    if (gc_class_register(heap, &pd, &pc) != GC_OK || gc_class_register(heap, &bd, &bc) != GC_OK) {
        fprintf(stderr, "churn_bench: gc_class_register failed\n");
        return 1;
    }

    /* Warm-up: a few rooted objects, as a server has at start-up, and one collection. */
    for (int i = 0; i < 16; i++) {
        void *o;
        gc_object_create(heap, bc, NULL, NULL, GC_CREATE_ROOT, &o);
    }
    gc_collect(heap, 0, true);
    reading warm = read_now(heap);

    /* The churn: bots join, make props each round (most dropped at once), and leave. */
    bot **all = calloc(bots, sizeof *all);
    if (!all)
        return 1;
    for (unsigned b = 0; b < bots; b++)
        if (gc_object_create(heap, bc, NULL, NULL, GC_CREATE_ROOT, (void **)&all[b]) != GC_OK)
            return 1;
    reading peak = warm;
    for (unsigned k = 0; k < rounds; k++) {
        for (unsigned b = 0; b < bots; b++) {
            for (unsigned p = 0; p < props; p++) {
                prop *o;
                if (gc_object_create(heap, pc, NULL, NULL, 0, (void **)&o) != GC_OK)
                    return 1;
                o->owner = all[b];
                if (gc_ref_array_push(&all[b]->props, o) != GC_OK)
                    return 1;
            }
        }
        reading now = read_now(heap);
        if (now.rss > peak.rss)
            peak = now;
        for (unsigned b = 0; b < bots; b++)
            all[b]->props.count = 0; /* abrupt: the props are simply dropped */
        if (k % 10 == 9)
            gc_collect(heap, 0, true);
    }
    for (unsigned b = 0; b < bots; b++) {
        all[b]->props.count = 0;
        gc_root_remove(heap, all[b]);
    }
    free(all);
    double t0 = bench_now();
    gc_collect(heap, 0, true);
    double collect_s = bench_now() - t0;
    reading after = read_now(heap);
    malloc_trim(0);
    reading trimmed = read_now(heap);

    printf("churn_bench: %u bots x %u props x %u rounds; objects now %u\n", bots, props, rounds,
           gc_object_count(heap));
    char caches[256];
    printf("churn_bench: caches of cpu0: %s\n", bench_caches_str(caches, sizeof caches));
    printf("%-28s %12s %14s\n", "", "RSS (MiB)", "gc_heap_bytes");
    const char *names[4] = { "after warm-up", "peak of the churn", "after the collection",
                             "after malloc_trim(0)" };
    const reading *rs[4] = { &warm, &peak, &after, &trimmed };
    for (int i = 0; i < 4; i++)
        printf("%-28s %12.1f %14.1f\n", names[i], rs[i]->rss / 1048576, rs[i]->heap / 1048576);
    printf("RSS after the collection / after warm-up: %.2f (with malloc_trim: %.2f; target "
           "<= 1.25); collection %.1f ms\n", after.rss / warm.rss, trimmed.rss / warm.rss,
           collect_s * 1e3);
    /* What the collector still holds after the collection beyond the warm-up (the rest of
     * the RSS growth is the C library's heap and the pages of side tables it touched). */
    printf("the collector's part (KiB, after the collection - after warm-up): slabs in use %+.0f, "
           "empty slabs kept for reuse %+.0f, object array %+.0f, mark bits and slab "
           "bookkeeping %+.0f\n",
           ((double)after.mem.slab_bytes - (double)warm.mem.slab_bytes) / 1024,
           ((double)after.mem.free_slab_bytes - (double)warm.mem.free_slab_bytes) / 1024,
           ((double)after.mem.array_bytes - (double)warm.mem.array_bytes) / 1024,
           ((double)after.mem.slab_side_bytes - (double)warm.mem.slab_side_bytes) / 1024);

    bench_json j;
    if (!bench_json_open(&j, outdir, "churn.json"))
        return 1;
    bench_json_caches(&j);
    bench_json_int(&j, "bots", bots);
    bench_json_int(&j, "props_per_bot", props);
    bench_json_int(&j, "rounds", rounds);
    const char *keys[4] = { "warm_up", "peak", "after_collection", "after_malloc_trim" };
    for (int i = 0; i < 4; i++) {
        bench_json_begin(&j, keys[i]);
        bench_json_num(&j, "rss_bytes", rs[i]->rss);
        bench_json_num(&j, "gc_heap_bytes", rs[i]->heap);
        bench_json_end(&j);
    }
    bench_json_num(&j, "rss_after_collection_vs_warm_up", after.rss / warm.rss);
    bench_json_num(&j, "rss_after_trim_vs_warm_up", trimmed.rss / warm.rss);
    bench_json_ms(&j, "final_collection_ms", collect_s);
    gc_heap_destroy(heap);
    return bench_json_close(&j) ? 0 : 1;
}
