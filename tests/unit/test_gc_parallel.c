/* Parallel marking must agree with the single-threaded reference marker. */
#include "gc_fixture.h"
#include "gc_internal.h" /* gc_join_proof_update */

#include <uv.h>

typedef struct rng {
    uint64_t s;
} rng;

static uint64_t rng_next(rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint32_t rng_below(rng *r, uint32_t n)
{
    return (uint32_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

enum { GRAPH_N = 30000 };

/* Builds the same random graph for a seed in a heap with `workers` markers, collects, and
 * writes which nodes survived. Edges use both plain references and arrays; some nodes are
 * rooted, some garbage. */
static void survivors_at(uint32_t workers, bool held, bool normal_priority, uint64_t seed,
                         uint8_t *alive, gc_stats *out)
{
    gc_heap *heap;
    gc_heap_config cfg = { 0 };
    gc_settings_default(&cfg.settings);
    cfg.settings.num_workers = workers;
    cfg.settings.marker_threads_normal_priority = normal_priority;
    assert_int_equal(gc_heap_create(&cfg, &heap), GC_OK);
    gc_testing_hold_marker_threads(heap, held);
    gc_class_desc d = { .name = "Node", .size = sizeof(node), .members = node_members };
    d.hooks.destructor = node_destructor;
    gc_class *cls;
    assert_int_equal(gc_class_register(heap, &d, &cls), GC_OK);
    static node *nodes[GRAPH_N];
    static gc_weak weak[GRAPH_N];
    rng r = { seed };
    for (uint32_t i = 0; i < GRAPH_N; i++) {
        assert_int_equal(gc_object_create(heap, cls, NULL, NULL, 0, (void **)&nodes[i]), GC_OK);
        nodes[i]->id = (int)i;
        weak[i] = gc_weak_make(heap, nodes[i]);
    }
    for (uint32_t i = 0; i < GRAPH_N; i++) {
        node *n = nodes[i];
        uint32_t roll = rng_below(&r, 100);
        if (roll < 60)
            n->a = nodes[rng_below(&r, GRAPH_N)];
        if (roll < 30)
            n->b = nodes[rng_below(&r, GRAPH_N)];
        if (roll < 5)
            for (uint32_t k = 0, m = rng_below(&r, 3000); k < m; k++)
                gc_ref_array_push(&n->arr, nodes[rng_below(&r, GRAPH_N)]);
    }
    for (uint32_t k = 0; k < 20; k++)
        gc_root_add(heap, nodes[rng_below(&r, GRAPH_N)]);
    for (uint32_t k = 0; k < 200; k++) {
        node *n = nodes[rng_below(&r, GRAPH_N)];
        if (!gc_root_contains(n))
            gc_object_mark_garbage(heap, n);
    }

    assert_int_equal(gc_collect(heap, 0, true), GC_OK);

    for (uint32_t i = 0; i < GRAPH_N; i++)
        alive[i] = gc_weak_get_even_if_garbage(heap, weak[i]) != NULL;
    gc_stats_get(heap, out);
    assert_null(gc_testing_check(heap));
    gc_heap_destroy(heap);
}

/* With marker threads at normal priority: they mark together, busy machine or not. */
static void survivors_held(uint32_t workers, bool held, uint64_t seed, uint8_t *alive,
                           gc_stats *out)
{
    survivors_at(workers, held, true, seed, alive, out);
}

static void survivors_with(uint32_t workers, uint64_t seed, uint8_t *alive, gc_stats *out)
{
    survivors_held(workers, false, seed, alive, out);
}

static void test_one_two_and_many_workers_find_the_same_survivors(void **state)
{
    (void)state;
    static uint8_t reference[GRAPH_N], other[GRAPH_N];
    const uint32_t counts[] = { 2, 3, 8 };
    for (uint64_t seed = 1; seed <= 4; seed++) {
        gc_stats ref_stats, st;
        survivors_with(1, seed, reference, &ref_stats);
        assert_int_equal(ref_stats.mark_workers, 1);
        assert_true(ref_stats.unreachable > 0);
        assert_true(ref_stats.marked > 100);
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
            survivors_with(counts[c], seed, other, &st);
            assert_int_equal(st.mark_workers, counts[c]);
            assert_int_equal(st.marked, ref_stats.marked);
            assert_memory_equal(other, reference, GRAPH_N);
        }
    }
}

static void test_a_mark_whose_second_worker_never_joins_is_finished_by_the_first(void **state)
{
    (void)state;
    static uint8_t reference[GRAPH_N], other[GRAPH_N];
    gc_stats ref_stats, st;
    survivors_with(1, 7, reference, &ref_stats);

    survivors_held(2, true, 7, other, &st);

    assert_int_equal(st.mark_workers, 2);
    assert_int_equal(st.blocks_stolen, 0); /* nobody took part but the caller */
    assert_int_equal(st.marked, ref_stats.marked);
    assert_memory_equal(other, reference, GRAPH_N);
}

/* At idle priority (the default) a thread joins only once it has shown a CPU of its own,
 * which it may or may not get here: the survivors are the same either way. */
static void test_marker_threads_at_idle_priority_find_the_same_survivors(void **state)
{
    (void)state;
    static uint8_t reference[GRAPH_N], other[GRAPH_N];
    gc_stats ref_stats, st;
    survivors_with(1, 5, reference, &ref_stats);

    survivors_at(2, false, false, 5, other, &st);

    assert_int_equal(st.mark_workers, 2);
    assert_int_equal(st.marked, ref_stats.marked);
    assert_memory_equal(other, reference, GRAPH_N);
}

enum { US = 1000 }; /* nanoseconds */

static void test_a_waiting_thread_that_keeps_its_cpu_for_the_window_asks_to_join(void **state)
{
    (void)state;
    gc_join_proof p = { 0 };
    bool early[3];

    early[0] = gc_join_proof_update(&p, 5000 * US, 700 * US, false);   /* the window opens */
    early[1] = gc_join_proof_update(&p, 5100 * US, 799 * US, false);
    early[2] = gc_join_proof_update(&p, 5199 * US, 897 * US, false);
    bool proven = gc_join_proof_update(&p, 5000 * US + GC_JOIN_PROOF_NS, 895 * US + 5 * US, false);

    assert_false(early[0] || early[1] || early[2]);
    assert_true(proven);
}

static void test_a_waiting_thread_that_loses_a_scheduler_slice_starts_its_window_again(
    void **state)
{
    (void)state;
    gc_join_proof p = { 0 };
    gc_join_proof_update(&p, 0, 0, false);

    bool after_slice = gc_join_proof_update(&p, 900 * US, 100 * US, false); /* 800 us lost */
    bool too_soon = gc_join_proof_update(&p, 900 * US + GC_JOIN_PROOF_NS - 1,
                                         100 * US + GC_JOIN_PROOF_NS - 1, false);
    bool proven = gc_join_proof_update(&p, 900 * US + GC_JOIN_PROOF_NS,
                                       100 * US + GC_JOIN_PROOF_NS, false);

    assert_false(after_slice);
    assert_false(too_soon);
    assert_true(proven);
}

static void test_a_waiting_thread_on_the_callers_cpu_never_asks_to_join(void **state)
{
    (void)state;
    gc_join_proof p = { 0 };
    bool asked = false;

    for (uint64_t t = 0; t <= 10 * GC_JOIN_PROOF_NS; t += 10 * US)
        asked |= gc_join_proof_update(&p, t, t, true); /* never loses a nanosecond */

    assert_false(asked);
}

/* A slice that runs out of time can leave a pool thread's worker holding a few objects, too
 * few for a thief to take. The next slice's caller must mark them itself: pool threads may
 * never join (held here), and a slice that leaves them where they are does nothing, slice
 * after slice. */
static void test_a_remnant_left_with_a_pool_worker_is_marked_by_the_next_slices(void **state)
{
    fixture *f = *state;
    enum { CHAIN = 2000, TAILS = 5 };
    static node *chain[CHAIN];
    node *root = fix_node(f, NULL, NULL, 0, GC_CREATE_ROOT);
    node *tails[TAILS]; /* each roots a chain only it reaches */
    for (int t = 0; t < TAILS; t++) {
        tails[t] = fix_node(f, NULL, NULL, 1 + t, 0);
        node *prev = tails[t];
        for (int i = 0; i < CHAIN / TAILS; i++) {
            node *n = chain[t * (CHAIN / TAILS) + i] = fix_node(f, NULL, NULL, 100 + t * CHAIN + i, 0);
            prev->a = n;
            prev = n;
        }
    }
    root->a = tails[0];
    root->b = tails[1];
    gc_ref_array_push(&root->arr, tails[2]);
    gc_ref_array_push(&root->arr, tails[3]);
    gc_ref_array_push(&root->arr, tails[4]);
    gc_testing_hold_marker_threads(f->heap, true);

    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    assert_true(gc_is_incremental_reachability_pending(f->heap));
    /* The root was scanned: its five tails wait in the caller's stack. Four go to worker 1. */
    assert_int_equal(gc_testing_move_marking_work(f->heap, 0, 1, 4), 4);

    int slices = 0;
    while (!gc_incremental_reachability_step(f->heap)) /* ~2 x 64 objects a slice */
        assert_true(++slices < CHAIN); /* one object a slice would still be done by now */
    assert_true(gc_incremental_purge(f->heap, 0));
    for (int i = 0; i < CHAIN; i++)
        assert_true(gc_testing_is_marked(f->heap, chain[i]));
}

/* The same remnant, in a mark whose threads are benched: the caller takes it back at each
 * slice and marks alone, without waking them. */
static void test_a_remnant_is_marked_by_the_caller_when_the_threads_are_benched(void **state)
{
    fixture *f = *state;
    enum { CHAIN = 2000 };
    static node *chain[CHAIN];
    node *root = fix_node(f, NULL, NULL, 0, GC_CREATE_ROOT);
    node *heads[4];
    for (int t = 0; t < 4; t++) {
        node *prev = heads[t] = fix_node(f, NULL, NULL, 1 + t, 0);
        for (int i = 0; i < CHAIN / 4; i++) {
            node *n = chain[t * (CHAIN / 4) + i] = fix_node(f, NULL, NULL, 10 + t * CHAIN + i, 0);
            prev->a = n;
            prev = n;
        }
        gc_ref_array_push(&root->arr, heads[t]);
    }
    gc_testing_helper_rates(f->heap, 1e15, 1.0); /* alone far faster: benched */
    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    assert_true(gc_is_incremental_reachability_pending(f->heap));
    assert_int_equal(gc_testing_move_marking_work(f->heap, 0, 1, 3), 3);
    int slices = 0;
    while (!gc_incremental_reachability_step(f->heap))
        assert_true(++slices < CHAIN);
    assert_true(gc_incremental_purge(f->heap, 0));
    gc_stats st;
    gc_stats_get(f->heap, &st);
    assert_false(st.mark_helpers_invited);
    assert_int_equal(st.mark_slices_helped, 0);
    for (int i = 0; i < CHAIN; i++)
        assert_true(gc_testing_is_marked(f->heap, chain[i]));
}

static int remnant_setup(void **state)
{
    return fix_setup_sliced(state, 2);
}

enum { OBJECTS = 1000 }; /* the graph's size, for gc_helpers_invite: the same throughout */

static bool invite(gc_helper_record *r)
{
    return gc_helpers_invite(r, OBJECTS);
}

/* gc_helpers_invite over a sequence of marks: marker threads measured slower than one
 * worker sit out GC_HELPERS_BENCHED_MARKS marks, then are tried again; a kind counts once it
 * has two samples. */
static void test_marker_threads_measured_slower_than_one_sit_out_marks_then_are_tried(
    void **state)
{
    (void)state;
    gc_helper_record r = { 0 };
    for (int m = 0; m < 2; m++) { /* nothing measured yet, then one sample: invited */
        assert_true(invite(&r));
        gc_helpers_record(&r, 100, true, true);
    }
    for (int m = 0; m < 2; m++) { /* two marks alone, to compare with */
        assert_false(invite(&r));
        gc_helpers_record(&r, 200, false, false);
    }
    for (int m = 0; m < GC_HELPERS_BENCHED_MARKS; m++) { /* 100 a second with them, 200 alone */
        assert_false(invite(&r));
        gc_helpers_record(&r, 200, false, false);
    }
    assert_int_equal(r.helped.count, 0); /* their slow samples were dropped */
    assert_true(invite(&r)); /* the trial */
    gc_helpers_record(&r, 300, true, true);
    assert_true(invite(&r)); /* one sample decides nothing */
    gc_helpers_record(&r, 300, true, true);
    assert_true(invite(&r)); /* 300 with them against 200 alone */
}

/* A record that has measured two marks alone and two with the threads. */
static gc_helper_record record_of(double alone, double helped)
{
    gc_helper_record r = { 0 };
    for (int m = 0; m < 2; m++) {
        gc_helpers_record(&r, alone, false, false);
        gc_helpers_record(&r, helped, true, true);
    }
    return r;
}

/* One slow mark with the threads among fast ones (this machine's noise) does not bench them;
 * a second in a row does. */
static void test_one_slow_mark_with_marker_threads_does_not_bench_them(void **state)
{
    (void)state;
    gc_helper_record r = record_of(100, 150);
    gc_helpers_record(&r, 20, true, true); /* median of 150, 150, 20: 150 */
    assert_true(invite(&r));
    gc_helpers_record(&r, 60, true, true); /* median of 150, 20, 60: 60 */
    assert_false(invite(&r));
}

/* A kind's rate is the median of its last three marks. */
static void test_a_rate_is_the_median_of_the_last_three_marks(void **state)
{
    (void)state;
    gc_helper_rates k = { 0 };
    assert_true(gc_helper_rate(&k) == 0);
    const double v[] = { 30, 10, 20, 50, 40 };
    const double median[] = { 30, 20, 20, 20, 40 }; /* 30; mean of 30, 10; then of 3 */
    for (int i = 0; i < 5; i++) {
        k.last[k.next] = v[i];
        k.next = (k.next + 1) % 3;
        k.count += k.count < 3;
        assert_true(gc_helper_rate(&k) == median[i]);
    }
    for (int p = 0; p < 6; p++) { /* every order of three */
        static const double o[6][3] = { { 1, 2, 3 }, { 1, 3, 2 }, { 2, 1, 3 },
                                        { 2, 3, 1 }, { 3, 1, 2 }, { 3, 2, 1 } };
        gc_helper_rates t = { .last = { o[p][0], o[p][1], o[p][2] }, .count = 3 };
        assert_true(gc_helper_rate(&t) == 2);
    }
}

/* Threads invited to GC_HELPERS_UNJOINED_MARKS marks in a row that none of them joined are
 * benched too; a mark one joined starts the count again, and so does the bench. Marks that
 * are no sample (rate 0: too short to join) count no miss. */
static void test_marker_threads_that_miss_marks_in_a_row_sit_out_marks(void **state)
{
    (void)state;
    gc_helper_record r = record_of(100, 150);
    for (int m = 0; m < GC_HELPERS_UNJOINED_MARKS - 1; m++) {
        assert_true(invite(&r));
        gc_helpers_record(&r, 100, true, false); /* invited, nobody joined */
    }
    for (int m = 0; m < 3; m++) {
        assert_true(invite(&r));
        gc_helpers_record(&r, 0, true, false); /* too short to be a sample */
    }
    assert_true(invite(&r));
    gc_helpers_record(&r, 150, true, true); /* one joined: the count starts again */
    for (int m = 0; m < GC_HELPERS_UNJOINED_MARKS; m++) {
        assert_true(invite(&r));
        gc_helpers_record(&r, 100, true, false);
    }
    for (int m = 0; m < GC_HELPERS_BENCHED_MARKS; m++) {
        assert_false(invite(&r));
        gc_helpers_record(&r, 100, false, false); /* not invited: no miss */
    }
    assert_true(invite(&r)); /* the trial */
    gc_helpers_record(&r, 100, true, false);
    assert_true(invite(&r)); /* one miss since the bench */
}

/* A heap whose object count moved by more than a quarter has a new graph: what the record
 * knew of the old one (a bench included) is forgotten, but not the missed joins. */
static void test_a_new_graph_starts_the_record_again(void **state)
{
    (void)state;
    gc_helper_record r = record_of(200, 100);
    assert_false(gc_helpers_invite(&r, 1000)); /* slower with them: benched */
    assert_false(gc_helpers_invite(&r, 1200)); /* a fifth more: the same graph, still benched */
    assert_true(gc_helpers_invite(&r, 1600));  /* a third more than the last: a new graph */
    assert_int_equal(r.alone.count + r.helped.count + r.benched, 0);
    gc_helpers_record(&r, 100, true, true);
    gc_helpers_record(&r, 100, true, true);
    assert_false(gc_helpers_invite(&r, 1200)); /* a quarter less: the same graph; marks alone */
    assert_true(gc_helpers_invite(&r, 800));   /* a third less: a new one */
    gc_helpers_record(&r, 100, true, false);   /* a missed join... */
    assert_true(gc_helpers_invite(&r, 2000));  /* ...survives the next new graph */
    gc_helpers_record(&r, 100, true, false);
    assert_false(gc_helpers_invite(&r, 2000)); /* the second miss in a row benches them */
}

/* Rates are compared only while fresh: a heap the threads help runs marks alone again once
 * its alone rate is GC_HELPERS_STALE_MARKS marks old (its graph may have changed since);
 * every mark ages it, a sample or not. */
static void test_a_stale_alone_rate_is_measured_again_before_it_is_compared(void **state)
{
    (void)state;
    gc_helper_record r = { 0 };
    gc_helpers_record(&r, 200, false, false); /* two marks alone */
    gc_helpers_record(&r, 200, false, false);
    for (int m = 0; m < GC_HELPERS_STALE_MARKS; m++) {
        assert_true(invite(&r));
        gc_helpers_record(&r, m % 2 ? 300 : 0, true, m % 2); /* every other mark no sample */
    }
    assert_false(invite(&r)); /* 32 marks old: marks alone again */
    gc_helpers_record(&r, 500, false, false); /* the old samples are dropped: 500 */
    assert_false(invite(&r)); /* one sample decides nothing: alone again */
    gc_helpers_record(&r, 500, false, false);
    assert_false(invite(&r)); /* 300 a second with them now loses */
    assert_int_equal(r.benched, GC_HELPERS_BENCHED_MARKS);
}

/* A heap on which the threads were measured slower marks with the caller alone, finds the
 * same survivors, and tries the threads again after its bench. */
static void test_a_heap_whose_marker_threads_were_slower_marks_alone_then_tries_them(
    void **state)
{
    fixture *f = *state;
    enum { NODES = 3 * 2048 }; /* a long array: marked in pieces */
    node *root = fix_node(f, NULL, NULL, 0, GC_CREATE_ROOT);
    static gc_weak weak[NODES];
    for (int i = 0; i < NODES; i++) {
        node *n = fix_node(f, NULL, NULL, 1 + i, 0);
        weak[i] = gc_weak_make(f->heap, n);
        if (i % 3 != 0)
            gc_ref_array_push(&root->arr, n); /* every third node is garbage */
    }
    fix_collect(f); /* the garbage goes: the graph's size stays from now on */
    gc_testing_helper_rates(f->heap, 1e15, 1.0); /* alone far faster than with them */
    gc_stats st;
    for (int m = 0; m < GC_HELPERS_BENCHED_MARKS; m++) {
        fix_collect(f);
        gc_stats_get(f->heap, &st);
        assert_int_equal(st.mark_workers, 2);
        assert_false(st.mark_helpers_invited);
        assert_int_equal(st.mark_slices_helped, 0);
        assert_int_equal(st.blocks_stolen, 0);
        for (int i = 0; i < NODES; i++)
            assert_true((gc_weak_get(f->heap, weak[i]) != NULL) == (i % 3 != 0));
    }
    fix_collect(f);
    gc_stats_get(f->heap, &st);
    assert_true(st.mark_helpers_invited); /* the trial */
    for (int i = 0; i < NODES; i++)
        assert_true((gc_weak_get(f->heap, weak[i]) != NULL) == (i % 3 != 0));
}

/* Blocks flow from the worker that pushes to the one that steals and drains them; shared
 * through the heap's pool, the marks after the first few allocate none, whichever worker
 * needs them and however many workers the heap is set to. */
static void test_marks_with_one_and_two_workers_reuse_their_work_blocks(void **state)
{
    fixture *f = *state;
    enum { NODES = 40000 }; /* marked through one long array: ~80 blocks queued at once */
    node *root = fix_node(f, NULL, NULL, 0, GC_CREATE_ROOT);
    for (int i = 0; i < NODES; i++) {
        node *n = fix_node(f, NULL, NULL, 1 + i, 0);
        gc_ref_array_push(&root->arr, n);
        if (i > 0)
            n->a = root->arr.data[i / 2]; /* something to scan */
    }
    gc_settings s = *gc_heap_settings(f->heap);
    for (int m = 0; m < 4; m++) { /* warm: both workers reach their peak */
        s.num_workers = 1 + (uint32_t)(m & 1);
        assert_int_equal(gc_heap_configure(f->heap, &s), GC_OK);
        fix_collect(f);
    }
    uint64_t warm = gc_testing_blocks_allocated(f->heap);
    assert_true(warm >= NODES / 512);
    int stolen = 0;
    for (int m = 0; m < 20; m++) {
        s.num_workers = 1 + (uint32_t)(m & 1);
        assert_int_equal(gc_heap_configure(f->heap, &s), GC_OK);
        gc_testing_helper_rates(f->heap, 0, 0); /* always invite the thread */
        fix_collect(f);
        gc_stats st;
        gc_stats_get(f->heap, &st);
        assert_int_equal(st.unreachable, 0);
        stolen += st.blocks_stolen > 0;
    }
    /* Without sharing, each mark the thread stole from made the caller allocate again. Room
     * for a peak the warm-up did not reach: each worker may keep 31 spares of its own. */
    print_message("blocks: %llu after warm-up, %llu after 20 marks (%d with stealing)\n",
                  (unsigned long long)warm,
                  (unsigned long long)gc_testing_blocks_allocated(f->heap), stolen);
    if (stolen == 0)
        skip(); /* the thread never got a CPU in time: no block changed hands to check */
    assert_true(gc_testing_blocks_allocated(f->heap) <= warm + 2 * 32);
}

static int two_workers_setup(void **state)
{
    gc_settings s;
    gc_settings_default(&s);
    s.num_workers = 2;
    s.marker_threads_normal_priority = true;
    return fix_setup_with(state, &s);
}

static void test_default_worker_count_is_the_number_of_cores(void **state)
{
    fixture *f = *state;
    fix_collect(f);
    gc_stats st;
    gc_stats_get(f->heap, &st);
    unsigned cores = uv_available_parallelism(); /* the CPUs this process may run on */
    assert_int_equal(st.mark_workers, cores < 64 ? cores : 64);
    assert_int_equal(gc_heap_settings(f->heap)->num_workers, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_two_and_many_workers_find_the_same_survivors),
        cmocka_unit_test(test_a_mark_whose_second_worker_never_joins_is_finished_by_the_first),
        cmocka_unit_test(test_marker_threads_at_idle_priority_find_the_same_survivors),
        cmocka_unit_test(test_a_waiting_thread_that_keeps_its_cpu_for_the_window_asks_to_join),
        cmocka_unit_test(test_a_waiting_thread_that_loses_a_scheduler_slice_starts_its_window_again),
        cmocka_unit_test(test_a_waiting_thread_on_the_callers_cpu_never_asks_to_join),
        cmocka_unit_test_setup_teardown(test_a_remnant_left_with_a_pool_worker_is_marked_by_the_next_slices, remnant_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(
            test_a_remnant_is_marked_by_the_caller_when_the_threads_are_benched, remnant_setup,
            fix_teardown),
        cmocka_unit_test(test_marker_threads_measured_slower_than_one_sit_out_marks_then_are_tried),
        cmocka_unit_test(test_one_slow_mark_with_marker_threads_does_not_bench_them),
        cmocka_unit_test(test_a_rate_is_the_median_of_the_last_three_marks),
        cmocka_unit_test(test_marker_threads_that_miss_marks_in_a_row_sit_out_marks),
        cmocka_unit_test(test_a_stale_alone_rate_is_measured_again_before_it_is_compared),
        cmocka_unit_test(test_a_new_graph_starts_the_record_again),
        cmocka_unit_test_setup_teardown(
            test_a_heap_whose_marker_threads_were_slower_marks_alone_then_tries_them,
            two_workers_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(
            test_marks_with_one_and_two_workers_reuse_their_work_blocks, two_workers_setup,
            fix_teardown),
        cmocka_unit_test_setup_teardown(test_default_worker_count_is_the_number_of_cores, fix_setup, fix_teardown),
    };
    return cmocka_run_group_tests_name("gc_parallel", tests, NULL, NULL);
}
