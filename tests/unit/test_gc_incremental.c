/* Incremental reachability: time slices, resuming, the write barrier. */
#include "gc_fixture.h"

static int inc_setup(void **state)
{
    return fix_setup_sliced(state, 1);
}

/* root -> chain[0] -> chain[1] -> ... -> chain[n-1] */
static node *make_chain(fixture *f, node **chain, int n)
{
    node *root = fix_node(f, NULL, NULL, 0, GC_CREATE_ROOT);
    for (int i = 0; i < n; i++) {
        chain[i] = fix_node(f, NULL, NULL, i + 1, 0);
        if (i > 0)
            chain[i - 1]->a = chain[i];
    }
    root->a = chain[0];
    return root;
}

static void finish(fixture *f)
{
    int guard = 0;
    while (!gc_incremental_reachability_step(f->heap))
        assert_true(++guard < 100000);
    assert_true(gc_incremental_purge(f->heap, 0));
}

static int g_referencer_calls;
static void count_calls(void *userdata, gc_collector *c)
{
    (void)userdata;
    (void)c;
    g_referencer_calls++;
}

static void test_marking_stops_at_the_limit_and_resumes_without_redoing_the_roots(void **state)
{
    fixture *f = *state;
    static node *chain[1000];
    make_chain(f, chain, 1000);
    gc_referencer *ref;
    gc_referencer_add(f->heap, "counter", count_calls, NULL, &ref);
    g_referencer_calls = 0;

    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    assert_true(gc_is_incremental_reachability_pending(f->heap));
    assert_false(gc_is_incremental_purge_pending(f->heap));
    finish(f);

    gc_stats st;
    gc_stats_get(f->heap, &st);
    assert_true(st.mark_slices > 5);
    assert_int_equal(g_referencer_calls, 1);
    assert_int_equal(st.marked, 1000 + 2);  /* chain, root, Node class */
    assert_int_equal(st.unreachable, 0);
    gc_referencer_remove(f->heap, ref);
}

static void test_delayed_iterations_skip_slices(void **state)
{
    fixture *f = *state;
    gc_settings s = *gc_heap_settings(f->heap);
    s.delay_reachability_iterations = 2;
    gc_heap_configure(f->heap, &s);
    static node *chain[1000];
    make_chain(f, chain, 1000);
    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    gc_stats before, after;
    gc_stats_get(f->heap, &before);

    assert_false(gc_incremental_reachability_step(f->heap));
    assert_false(gc_incremental_reachability_step(f->heap));
    gc_stats_get(f->heap, &after);
    assert_int_equal(after.mark_slices, before.mark_slices);
    gc_incremental_reachability_step(f->heap);
    gc_stats_get(f->heap, &after);
    assert_int_equal(after.mark_slices, before.mark_slices + 1);
    finish(f);
}

static void test_the_barrier_keeps_an_object_moved_behind_the_marker(void **state)
{
    fixture *f = *state;
    static node *chain[1000];
    node *root = make_chain(f, chain, 1000);
    node *moved = fix_node(f, NULL, NULL, 5000, 0);
    chain[999]->b = moved; /* reachable only through the end of the chain */
    gc_weak w = gc_weak_make(f->heap, moved);
    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    assert_true(gc_testing_is_marked(f->heap, root));   /* scanned already */
    assert_false(gc_testing_is_marked(f->heap, moved));

    gc_store(f->heap, &root->b, moved); /* behind the marker ... */
    chain[999]->b = NULL;               /* ... and gone from where it would be found */
    finish(f);

    assert_true(fix_alive(f, w));
    gc_stats st;
    gc_stats_get(f->heap, &st);
    assert_int_equal(st.barrier_objects, 1);
}

static void test_objects_created_during_marking_survive_it(void **state)
{
    fixture *f = *state;
    static node *chain[1000];
    make_chain(f, chain, 1000);
    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);

    node *born = fix_node(f, NULL, NULL, 7777, 0);
    gc_weak w = gc_weak_make(f->heap, born);
    finish(f);

    assert_true(fix_alive(f, w));
    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    finish(f);
    assert_false(fix_alive(f, w));
}

static void test_a_root_added_during_marking_is_kept(void **state)
{
    fixture *f = *state;
    static node *chain[1000];
    make_chain(f, chain, 1000);
    node *late = fix_node(f, NULL, NULL, 5000, 0);
    chain[999]->b = late;
    gc_weak w = gc_weak_make(f->heap, late);
    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);

    assert_int_equal(gc_root_add(f->heap, late), GC_OK);
    chain[999]->b = NULL;
    finish(f);

    assert_true(fix_alive(f, w));
}

static void test_a_new_collection_finishes_a_pending_mark_as_a_full_purge_first(void **state)
{
    fixture *f = *state;
    static node *chain[1000];
    make_chain(f, chain, 1000);
    fix_node(f, NULL, NULL, 9001, 0);
    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    assert_true(gc_is_incremental_reachability_pending(f->heap));

    assert_int_equal(gc_collect(f->heap, 0, true), GC_OK);

    gc_stats st;
    gc_stats_get(f->heap, &st);
    assert_int_equal(st.collections, 2);
    assert_true(fix_log_find(f, "free:9001") >= 0);
    assert_false(gc_is_incremental_reachability_pending(f->heap));
    assert_false(gc_is_incremental_purge_pending(f->heap));
}

static void test_one_huge_array_is_marked_across_slices(void **state)
{
    fixture *f = *state;
    node *root = fix_node(f, NULL, NULL, 0, GC_CREATE_ROOT);
    enum { N = 100000 };
    for (int i = 0; i < N; i++)
        gc_ref_array_push(&root->arr, fix_node(f, NULL, NULL, i + 1, 0));
    /* Time is real work here: 1 s per clock read, limit 1.5 s, a piece per read. */

    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    finish(f);

    gc_stats st;
    gc_stats_get(f->heap, &st);
    assert_true(st.mark_slices >= N / 2048);
    assert_int_equal(st.marked, N + 2);
}

static void test_the_gather_that_ends_marking_keeps_to_the_slice_limit(void **state)
{
    fixture *f = *state;
    static node *chain[100];
    make_chain(f, chain, 100);
    node *garbage = NULL;
    for (int i = 0; i < 20000; i++)
        garbage = fix_node(f, NULL, NULL, 1000 + i, 0);
    gc_weak w = gc_weak_make(f->heap, garbage);

    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    int gather_slices = 0;
    while (!gc_incremental_reachability_step(f->heap)) {
        if (strcmp(gc_testing_phase(f->heap), "gather") == 0) {
            gather_slices++;
            assert_true(gc_is_incremental_reachability_pending(f->heap));
            assert_false(gc_is_incremental_purge_pending(f->heap));
            assert_null(gc_weak_get(f->heap, w)); /* found unreachable, not yet gathered */
        }
    }

    assert_true(gather_slices > 1);
    assert_true(gc_is_incremental_purge_pending(f->heap));
    assert_true(gc_incremental_purge(f->heap, 0));
    assert_false(fix_alive(f, w));
}

static void test_an_object_made_garbage_after_it_was_marked_survives_that_mark_and_not_the_next(
    void **state)
{
    fixture *f = *state;
    static node *chain[1000];
    make_chain(f, chain, 1000);
    node *late = fix_node(f, NULL, NULL, 5000, 0);
    chain[0]->b = late;                   /* reached early */
    chain[999]->b = late;                 /* and again from the end of the chain */
    gc_weak w = gc_weak_make(f->heap, late);
    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    for (int guard = 0; !gc_testing_is_marked(f->heap, late); guard++) {
        assert_true(guard < 100000);
        assert_false(gc_incremental_reachability_step(f->heap));
    }

    assert_int_equal(gc_object_mark_garbage(f->heap, late), GC_OK);
    finish(f);
    bool survived = fix_alive(f, w);
    fix_collect(f);

    assert_true(survived);                /* marked before it became garbage */
    assert_false(fix_alive(f, w));
    assert_null(chain[0]->b);
    assert_null(chain[999]->b);
}

/* Objects with a destructor and nothing else: gathered as "plain" (freed without the
 * begin/finish_destroy passes). */
static int g_plain_destroyed;

static int destroyed_teardown(void **state)
{
    fixture *f = *state;
    g_fix = NULL;
    free(f);
    return 0;
}

static void count_plain_destructor(void *obj)
{
    (void)obj;
    g_plain_destroyed++;
}

static void test_a_heap_destroyed_while_the_gather_is_in_flight_destroys_each_object_once(
    void **state)
{
    fixture *f = *state;
    gc_class_desc d = { .name = "Plain", .size = 16,
                        .hooks = { .destructor = count_plain_destructor } };
    gc_class *plain;
    assert_int_equal(gc_class_register(f->heap, &d, &plain), GC_OK);
    for (int i = 0; i < 20000; i++) {
        void *obj;
        assert_int_equal(gc_object_create(f->heap, plain, NULL, NULL, 0, &obj), GC_OK);
    }
    g_plain_destroyed = 0;
    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    for (int guard = 0; strcmp(gc_testing_phase(f->heap), "gather") != 0; guard++) {
        assert_true(guard < 100000);
        assert_false(gc_incremental_reachability_step(f->heap));
    }
    assert_false(gc_incremental_reachability_step(f->heap)); /* some gathered, not all */

    gc_heap_destroy(f->heap);
    f->heap = NULL;

    assert_int_equal(g_plain_destroyed, 20000);
}

/* A pointer handed out during a suspended mark (by a weak handle or by path) and kept where
 * the marker already looked (a referencer that reported at the start) must survive the heap
 * dropping its last reference before that reference is scanned. */
static void *g_held;
static void report_held(void *userdata, gc_collector *c)
{
    (void)userdata;
    if (g_held)
        gc_collector_add_ref(c, &g_held);
}

static void hold_what_was_handed_out(void **state, bool by_weak)
{
    fixture *f = *state;
    static node *chain[1000];
    node *root = make_chain(f, chain, 1000);
    (void)root;
    node *x = fix_node(f, NULL, "X", 77, 0);
    chain[999]->b = x;                    /* X hangs off the far end of the chain */
    gc_weak wx = gc_weak_make(f->heap, x);
    gc_referencer *ref;
    g_held = NULL;
    gc_referencer_add(f->heap, "holder", report_held, NULL, &ref);

    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    assert_true(gc_is_incremental_reachability_pending(f->heap));
    g_held = by_weak ? gc_weak_get(f->heap, wx) : gc_object_find(f->heap, "X");
    assert_ptr_equal(g_held, x);
    chain[999]->b = NULL;                 /* the heap lets go of X before the chain's end is scanned */
    finish(f);

    assert_true(fix_alive(f, wx));        /* the referencer still holds it */
    gc_referencer_remove(f->heap, ref);
    g_held = NULL;
}

static void test_an_object_got_from_a_weak_handle_during_marking_survives_it(void **state)
{
    hold_what_was_handed_out(state, true);
}

static void test_an_object_found_by_path_during_marking_survives_it(void **state)
{
    hold_what_was_handed_out(state, false);
}

/* Budgets, on a clock that runs only while the collector works (gc_work_clock): a step that
 * keeps to its budget ends within it plus one unit of work (what a loop does between two
 * looks at the clock); one that ignores it, or starts a phase after the budget is spent,
 * takes longer. */
#define WORK_UNIT 0.001          /* seconds the work clock counts per unit of work */
#define BUDGET (3 * WORK_UNIT)
static gc_work_clock g_work;

static int budget_setup(void **state)
{
    gc_settings s;
    gc_settings_default(&s);
    s.num_workers = 1;
    s.allow_incremental_reachability = true;
    s.incremental_reachability_time_limit = BUDGET;
    s.allow_incremental_gather = true;
    s.incremental_gather_time_limit = BUDGET;
    s.incremental_begin_destroy = true;
    g_work = (gc_work_clock){ .base = 1000.0, .unit_seconds = WORK_UNIT };
    int r = fix_setup_clock(state, &s, gc_work_clock_read, &g_work);
    g_work.heap = ((fixture *)*state)->heap;
    return r;
}

typedef struct budget_log {
    int steps;
    int phases_seen;             /* bit per phase a step started in */
} budget_log;

static const char *const phase_names[] = { "mark", "gather", "begin_destroy", "finish_destroy",
                                           "free", "release" };

/* Runs one step (a call of the collector) and fails if it overran its budget. */
static bool budget_step(budget_log *log, gc_heap *heap, bool (*step)(gc_heap *heap))
{
    const char *phase = gc_testing_phase(heap);
    for (int i = 0; i < 6; i++)
        if (strcmp(phase, phase_names[i]) == 0)
            log->phases_seen |= 1 << i;
    double before = gc_work_clock_read(&g_work);
    bool done = step(heap);
    double took = gc_work_clock_read(&g_work) - before;
    log->steps++;
    if (took > BUDGET + WORK_UNIT + 1e-9)
        fail_msg("step %d (started in %s) took %.1f units of work; budget %.1f, allowed one more",
                 log->steps, phase, took / WORK_UNIT, BUDGET / WORK_UNIT);
    return done;
}

static bool first_step(gc_heap *heap)
{
    assert_int_equal(gc_collect(heap, 0, false), GC_OK);
    return !gc_is_incremental_reachability_pending(heap);
}

static bool reachability_step(gc_heap *heap)
{
    return gc_incremental_reachability_step(heap);
}

static bool purge_step(gc_heap *heap)
{
    return gc_incremental_purge(heap, BUDGET);
}

static void test_no_step_of_any_phase_overruns_its_budget_by_more_than_one_unit_of_work(
    void **state)
{
    fixture *f = *state;
    static node *chain[5000];
    make_chain(f, chain, 5000);                      /* marking in many slices */
    node *holder = fix_node(f, NULL, NULL, 1, GC_CREATE_ROOT);
    for (int i = 0; i < 20000; i++)                  /* an array scanned in pieces */
        assert_int_equal(gc_ref_array_push(&holder->arr, chain[i % 5000]), GC_OK);
    uint32_t alive = gc_object_count(f->heap);
    for (int i = 0; i < 160000; i++)                 /* gathered, destroyed, freed, given back */
        fix_node(f, NULL, NULL, 10000 + i, 0);
    f->log_count = 0;

    budget_log log = { 0 };
    bool done = budget_step(&log, f->heap, first_step);
    while (!done)
        done = budget_step(&log, f->heap, reachability_step);
    for (int guard = 0; !budget_step(&log, f->heap, purge_step); guard++)
        assert_true(guard < 100000);

    assert_int_equal(log.phases_seen, (1 << 6) - 1); /* every phase was sliced */
    assert_true(log.steps > 40);
    assert_int_equal(gc_object_count(f->heap), alive);
}

static int g_visited;
static void count_visit(void *obj, void *userdata)
{
    (void)obj;
    (void)userdata;
    g_visited++;
}

/* A read-only visit of every object while a mark is in flight (a metrics scrape counting
 * objects, a console listing) leaves the mark as it was: garbage stays garbage. */
static void test_a_read_only_visit_during_marking_keeps_nothing_alive(void **state)
{
    fixture *f = *state;
    static node *chain[1000];
    make_chain(f, chain, 1000);
    node *lost = fix_node(f, NULL, NULL, 5000, 0); /* referenced by nothing */
    gc_weak w = gc_weak_make(f->heap, lost);
    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    assert_true(gc_is_incremental_reachability_pending(f->heap));

    g_visited = 0;
    gc_object_foreach_read(f->heap, count_visit, NULL);
    finish(f);

    assert_true(g_visited > 1000);
    assert_false(fix_alive(f, w));
}

/* gc_object_foreach may hand its pointers on, so its visit keeps what it visits. */
static void test_a_visit_that_may_keep_pointers_keeps_what_it_visits_during_marking(
    void **state)
{
    fixture *f = *state;
    static node *chain[1000];
    make_chain(f, chain, 1000);
    node *lost = fix_node(f, NULL, NULL, 5000, 0);
    gc_weak w = gc_weak_make(f->heap, lost);
    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    assert_true(gc_is_incremental_reachability_pending(f->heap));

    gc_object_foreach(f->heap, count_visit, NULL);
    finish(f);

    assert_true(fix_alive(f, w)); /* this collection's floating garbage */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_marking_stops_at_the_limit_and_resumes_without_redoing_the_roots, inc_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_delayed_iterations_skip_slices, inc_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_read_only_visit_during_marking_keeps_nothing_alive, inc_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_visit_that_may_keep_pointers_keeps_what_it_visits_during_marking, inc_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_the_barrier_keeps_an_object_moved_behind_the_marker, inc_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_objects_created_during_marking_survive_it, inc_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_root_added_during_marking_is_kept, inc_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_new_collection_finishes_a_pending_mark_as_a_full_purge_first, inc_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_one_huge_array_is_marked_across_slices, inc_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_the_gather_that_ends_marking_keeps_to_the_slice_limit, inc_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_an_object_made_garbage_after_it_was_marked_survives_that_mark_and_not_the_next, inc_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_heap_destroyed_while_the_gather_is_in_flight_destroys_each_object_once, inc_setup, destroyed_teardown),
        cmocka_unit_test_setup_teardown(test_an_object_got_from_a_weak_handle_during_marking_survives_it, inc_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_an_object_found_by_path_during_marking_survives_it, inc_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_no_step_of_any_phase_overruns_its_budget_by_more_than_one_unit_of_work, budget_setup, fix_teardown),
    };
    return cmocka_run_group_tests_name("gc_incremental", tests, NULL, NULL);
}
