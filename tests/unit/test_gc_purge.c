/* The destroy pipeline: unhash, begin_destroy, finish_destroy when ready, free. */
#include "gc_fixture.h"

static void test_every_object_begins_destroy_before_any_finishes_and_frees_last(void **state)
{
    fixture *f = *state;
    for (int i = 1; i <= 5; i++)
        fix_node(f, NULL, NULL, i, 0);

    fix_collect(f);

    int last_begin = -1, first_finish = f->log_count, last_finish = -1, first_free = f->log_count;
    for (int i = 0; i < f->log_count; i++) {
        if (strncmp(f->log[i], "begin:", 6) == 0)
            last_begin = i;
        if (strncmp(f->log[i], "finish:", 7) == 0) {
            if (i < first_finish)
                first_finish = i;
            last_finish = i;
        }
        if (strncmp(f->log[i], "free:", 5) == 0 && i < first_free)
            first_free = i;
    }
    assert_int_equal(f->log_count, 15);
    assert_true(last_begin < first_finish);
    assert_true(last_finish < first_free);
}

static gc_heap *g_heap;
static int g_found_during_begin = -1;

static void record_findable(void *obj)
{
    (void)obj;
    g_found_during_begin = gc_object_find(g_heap, "Hashed") != NULL;
}

static void test_an_object_is_unhashed_before_its_begin_destroy(void **state)
{
    fixture *f = *state;
    gc_class_desc d = { .name = "Hashed", .size = 8, .hooks.begin_destroy = record_findable };
    gc_class *cls;
    assert_int_equal(gc_class_register(f->heap, &d, &cls), GC_OK);
    void *obj;
    assert_int_equal(gc_object_create(f->heap, cls, NULL, "Hashed", 0, &obj), GC_OK);
    g_heap = f->heap;

    fix_collect(f);

    assert_int_equal(g_found_during_begin, 0);
}

typedef struct slow {
    int polls_until_ready;
    int finished;
} slow;

static int g_finished;

static bool slow_is_ready(void *obj)
{
    slow *s = obj;
    return s->polls_until_ready-- <= 0;
}

static void slow_finish(void *obj)
{
    (void)obj;
    g_finished++;
}

static gc_class *register_slow(fixture *f)
{
    gc_class_desc d = { .name = "Slow", .size = sizeof(slow) };
    d.hooks.is_ready_for_finish_destroy = slow_is_ready;
    d.hooks.finish_destroy = slow_finish;
    gc_class *cls;
    assert_int_equal(gc_class_register(f->heap, &d, &cls), GC_OK);
    g_finished = 0;
    return cls;
}

/* Sets up a purge that will get stuck: one object that is never ready for finish_destroy
 * (until the test says so), a 1 s wait limit and a clock that runs. Returns the object. */
static slow *make_stuck_purge(fixture *f)
{
    gc_settings st;
    gc_settings_default(&st);
    st.finish_destroy_wait_limit = 1.0;
    gc_heap_configure(f->heap, &st);
    gc_class *cls = register_slow(f);
    slow *s;
    assert_int_equal(gc_object_create(f->heap, cls, NULL, NULL, 0, (void **)&s), GC_OK);
    s->polls_until_ready = 1000000;
    f->clock.step_per_read = 0.01;
    return s;
}

static void test_objects_not_ready_wait_on_the_pending_list_and_are_retried(void **state)
{
    fixture *f = *state;
    gc_class *cls = register_slow(f);
    slow *s;
    assert_int_equal(gc_object_create(f->heap, cls, NULL, NULL, 0, (void **)&s), GC_OK);
    s->polls_until_ready = 3;
    fix_node(f, NULL, NULL, 7, 0);
    f->clock.step_per_read = 0.001;

    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    int slices = 0;
    while (!gc_incremental_purge(f->heap, 0.0005)) {
        gc_stats st;
        gc_stats_get(f->heap, &st);
        if (strcmp(gc_testing_phase(f->heap), "finish_destroy") == 0)
            assert_int_equal(st.pending_finish, 1);
        assert_int_equal(g_finished, 0);
        assert_true(++slices < 100);
    }

    assert_int_equal(g_finished, 1);
    assert_true(fix_log_find(f, "free:7") >= 0);
    assert_false(gc_is_incremental_purge_pending(f->heap));
}

static void test_a_full_purge_waits_for_objects_not_yet_ready(void **state)
{
    fixture *f = *state;
    gc_class *cls = register_slow(f);
    slow *s;
    assert_int_equal(gc_object_create(f->heap, cls, NULL, NULL, 0, (void **)&s), GC_OK);
    s->polls_until_ready = 50;

    fix_collect(f);

    assert_int_equal(g_finished, 1);
    assert_false(gc_is_incremental_purge_pending(f->heap));
}

static void test_a_full_purge_gives_up_waiting_and_leaves_the_purge_pending(void **state)
{
    fixture *f = *state;
    slow *s = make_stuck_purge(f);

    fix_collect(f);

    assert_int_equal(g_finished, 0);
    assert_true(gc_is_incremental_purge_pending(f->heap));
    s->polls_until_ready = 0;
    assert_true(gc_incremental_purge(f->heap, 0));
    assert_int_equal(g_finished, 1);
}

static void test_an_incremental_purge_stops_at_its_budget_and_resumes(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < 5000; i++)
        fix_node(f, NULL, NULL, i, 0);
    uint32_t before = gc_object_count(f->heap);
    f->clock.step_per_read = 0.0001;

    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    int slices = 0;
    while (!gc_incremental_purge(f->heap, 0.002))
        slices++;

    assert_true(slices > 1);
    assert_int_equal(gc_object_count(f->heap), before - 5000);
    gc_stats st;
    gc_stats_get(f->heap, &st);
    assert_int_equal(st.destroyed, 5000);
}

static void test_a_new_collection_first_finishes_the_pending_purge(void **state)
{
    fixture *f = *state;
    fix_node(f, NULL, NULL, 1, 0);
    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    assert_true(gc_is_incremental_purge_pending(f->heap));
    assert_int_equal(fix_log_find(f, "free:1"), -1);

    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);

    assert_true(fix_log_find(f, "free:1") >= 0);
    assert_true(gc_incremental_purge(f->heap, 0));
}

static int count_log(const fixture *f, const char *prefix)
{
    int n = 0;
    for (int i = 0; i < f->log_count; i++)
        n += strncmp(f->log[i], prefix, strlen(prefix)) == 0;
    return n;
}

static void run_first_purge_slice(fixture *f, bool incremental_begin_destroy)
{
    gc_settings s = *gc_heap_settings(f->heap);
    s.incremental_begin_destroy = incremental_begin_destroy;
    gc_heap_configure(f->heap, &s);
    for (int i = 0; i < 1000; i++)
        fix_node(f, NULL, NULL, i, 0);
    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    f->clock.step_per_read = 0.001;
    gc_incremental_purge(f->heap, 0.002);
}

static void test_begin_destroy_is_sliced_when_incremental_begin_destroy_is_on(void **state)
{
    fixture *f = *state;
    run_first_purge_slice(f, true);
    assert_true(count_log(f, "begin:") < 1000);
    assert_true(gc_incremental_purge(f->heap, 0));
}

static void test_begin_destroy_runs_for_all_at_once_when_incremental_begin_destroy_is_off(void **state)
{
    fixture *f = *state;
    run_first_purge_slice(f, false);
    assert_int_equal(count_log(f, "begin:"), 1000);
    assert_int_equal(count_log(f, "free:"), 0);
    assert_true(gc_incremental_purge(f->heap, 0));
}

static void test_an_incremental_gather_is_spread_over_purge_steps(void **state)
{
    fixture *f = *state;
    gc_settings s = *gc_heap_settings(f->heap);
    s.allow_incremental_gather = true;
    s.incremental_gather_time_limit = 0.0005;
    s.num_workers = 1;
    gc_heap_configure(f->heap, &s);
    node *last = NULL;
    for (int i = 0; i < 20000; i++)
        last = fix_node(f, NULL, NULL, i, 0);
    gc_weak w = gc_weak_make(f->heap, last);

    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    assert_string_equal(gc_testing_phase(f->heap), "gather");
    assert_null(gc_weak_get(f->heap, w)); /* unreachable already, though not gathered */
    f->clock.step_per_read = 0.0001;
    int gather_steps = 0;
    while (!gc_incremental_purge(f->heap, 0.002))
        gather_steps += strcmp(gc_testing_phase(f->heap), "gather") == 0;

    assert_true(gather_steps > 1);
    assert_false(fix_alive(f, w));
}

static void test_a_collection_that_finds_nothing_leaves_no_purge_pending(void **state)
{
    fixture *f = *state;
    fix_node(f, NULL, NULL, 1, GC_CREATE_ROOT);

    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);

    assert_false(gc_is_incremental_purge_pending(f->heap));
    assert_string_equal(gc_testing_phase(f->heap), "idle");
}

/* A purge that gave up waiting for finish_destroy must not be lost to the next collection:
 * collections are refused until it completes, and then everything in it is freed. */
static void test_a_stuck_purge_blocks_new_collections_until_it_completes(void **state)
{
    fixture *f = *state;
    slow *s = make_stuck_purge(f);
    fix_node(f, NULL, NULL, 7, 0);         /* an ordinary garbage object in the same purge */
    uint32_t baseline = gc_object_count(f->heap) - 2;

    fix_collect(f);                        /* gives up waiting: purge pending */
    assert_true(gc_is_incremental_purge_pending(f->heap));
    assert_int_equal(gc_collect(f->heap, 0, true), GC_E_STATE); /* still not ready */
    s->polls_until_ready = 0;              /* now ready */
    fix_collect(f);
    assert_true(gc_incremental_purge(f->heap, 0));

    assert_int_equal(g_finished, 1);
    assert_true(fix_log_find(f, "free:7") >= 0);     /* node 7 was freed */
    assert_int_equal(gc_object_count(f->heap), baseline);
}

/* Between the end of marking and the end of an incremental gather, an unmarked class is dead:
 * it is not found, and cannot be instantiated. */
static void test_a_class_found_unreachable_cannot_be_found_or_instantiated_before_its_gather(void **state)
{
    fixture *f = *state;
    gc_settings s = *gc_heap_settings(f->heap);
    s.allow_incremental_gather = true;
    s.num_workers = 1;
    gc_heap_configure(f->heap, &s);
    gc_class_desc d = { .name = "Temp", .size = sizeof(node), .members = node_members };
    gc_class *temp;
    assert_int_equal(gc_class_register(f->heap, &d, &temp), GC_OK);
    assert_int_equal(gc_root_remove(f->heap, gc_class_object(temp)), GC_OK);

    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    assert_string_equal(gc_testing_phase(f->heap), "gather");

    void *obj = NULL;
    assert_null(gc_class_find(f->heap, "Temp"));
    assert_int_equal(gc_object_create(f->heap, temp, NULL, NULL, GC_CREATE_ROOT, &obj), GC_E_DEAD);
    assert_null(obj);
    assert_true(gc_incremental_purge(f->heap, 0));
}

/* While a purge is stuck, the class of its straggler cannot be collected from under it. */
static void test_a_stuck_purge_keeps_its_stragglers_class(void **state)
{
    fixture *f = *state;
    slow *s = make_stuck_purge(f);
    gc_class *cls = gc_class_find(f->heap, "Slow");
    fix_collect(f);                        /* gives up waiting: purge pending */
    assert_int_equal(gc_root_remove(f->heap, gc_class_object(cls)), GC_OK);
    assert_int_equal(gc_collect(f->heap, 0, false), GC_E_STATE);
    assert_ptr_equal(gc_class_find(f->heap, "Slow"), cls);
    s->polls_until_ready = 0;              /* the straggler gets ready */
    assert_true(gc_incremental_purge(f->heap, 0));
    assert_int_equal(g_finished, 1);
    assert_null(gc_testing_check(f->heap));
    fix_collect(f);                        /* now the unrooted class can go */
    assert_null(gc_class_find(f->heap, "Slow"));
}


static int g_seen_dead;
static void count_dead(void *obj, void *userdata)
{
    if (obj == userdata)
        g_seen_dead++;
}

/* Objects known unreachable, though not yet gathered, are not visited. */
static void test_foreach_skips_objects_found_unreachable_before_their_gather(void **state)
{
    fixture *f = *state;
    gc_settings s = *gc_heap_settings(f->heap);
    s.allow_incremental_gather = true;
    gc_heap_configure(f->heap, &s);
    node *dead = fix_node(f, NULL, NULL, 5, 0);
    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    assert_string_equal(gc_testing_phase(f->heap), "gather");
    g_seen_dead = 0;
    gc_object_foreach(f->heap, count_dead, dead);
    assert_true(gc_incremental_purge(f->heap, 0));
    assert_int_equal(g_seen_dead, 0);
}

/* Destroying the heap with a purge stuck in finish_destroy runs no hook twice. */
static void test_destroying_the_heap_during_a_stuck_purge_runs_each_hook_once(void **state)
{
    fixture *f = *state;
    make_stuck_purge(f);
    fix_node(f, NULL, NULL, 7, 0);
    fix_collect(f);
    assert_true(gc_is_incremental_purge_pending(f->heap));
    gc_heap_destroy(f->heap);
    assert_int_equal(gc_heap_create(NULL, &f->heap), GC_OK); /* for the teardown */
    int begins = 0, finishes = 0, frees = 0;
    for (int i = 0; i < f->log_count; i++) {
        begins += strcmp(f->log[i], "begin:7") == 0;
        finishes += strcmp(f->log[i], "finish:7") == 0;
        frees += strcmp(f->log[i], "free:7") == 0;
    }
    assert_int_equal(begins, 1);
    assert_int_equal(finishes, 1);
    assert_int_equal(frees, 1);
}

typedef struct plain {
    void *ref;
    char data[56];
} plain;

/* A class with no hooks at all: its garbage only needs freeing. */
static gc_class *plain_class(fixture *f)
{
    static const gc_member members[] = { GC_REF(plain, ref), GC_MEMBERS_END };
    gc_class_desc d = { .name = "Plain", .size = sizeof(plain), .members = members };
    gc_class *cls;
    assert_int_equal(gc_class_register(f->heap, &d, &cls), GC_OK);
    return cls;
}

static size_t slab_bytes(fixture *f)
{
    gc_memory m;
    gc_memory_get(f->heap, &m);
    return m.slab_bytes;
}

static void test_slabs_whose_objects_are_all_garbage_go_back_whole(void **state)
{
    fixture *f = *state;
    gc_class *cls = plain_class(f);
    size_t before = slab_bytes(f);
    for (int i = 0; i < 5000; i++) {
        void *o;
        assert_int_equal(gc_object_create(f->heap, cls, NULL, NULL, 0, &o), GC_OK);
    }
    assert_true(slab_bytes(f) >= before + 4 * 65536);

    fix_collect(f);

    assert_int_equal(slab_bytes(f), before);
    gc_stats st;
    gc_stats_get(f->heap, &st);
    assert_int_equal(st.destroyed, 5000);
}

static void test_objects_created_during_a_sliced_purge_live_on_and_slots_are_reused(void **state)
{
    fixture *f = *state;
    gc_class *cls = plain_class(f);
    size_t before = slab_bytes(f);
    static void *kept[600];
    int nkept = 0;
    for (int i = 0; i < 6000; i++) { /* the first slab keeps survivors; the rest are garbage */
        bool keep = i < 800 && i % 20 == 0;
        void *o;
        assert_int_equal(gc_object_create(f->heap, cls, NULL, NULL, keep ? GC_CREATE_ROOT : 0, &o),
                         GC_OK);
        if (keep)
            kept[nkept++] = o;
    }
    f->clock.step_per_read = 0.0005;

    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    int slices = 0;
    while (!gc_incremental_purge(f->heap, 0.002)) {
        void *o; /* made between slices: must not land on a slot being handed back */
        assert_int_equal(gc_object_create(f->heap, cls, NULL, NULL, GC_CREATE_ROOT, &o), GC_OK);
        assert_true(nkept < 600);
        kept[nkept++] = o;
        slices++;
    }

    assert_true(slices > 1);
    assert_null(gc_testing_check(f->heap));
    for (int i = 0; i < nkept; i++)
        assert_true(gc_object_is_valid(kept[i]));
    for (int i = 0; i < nkept; i++)
        assert_int_equal(gc_root_remove(f->heap, kept[i]), GC_OK);
    f->clock.step_per_read = 0;
    fix_collect(f);
    assert_int_equal(slab_bytes(f), before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_slabs_whose_objects_are_all_garbage_go_back_whole, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_objects_created_during_a_sliced_purge_live_on_and_slots_are_reused, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_every_object_begins_destroy_before_any_finishes_and_frees_last, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_an_object_is_unhashed_before_its_begin_destroy, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_objects_not_ready_wait_on_the_pending_list_and_are_retried, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_full_purge_waits_for_objects_not_yet_ready, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_full_purge_gives_up_waiting_and_leaves_the_purge_pending, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_an_incremental_purge_stops_at_its_budget_and_resumes, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_new_collection_first_finishes_the_pending_purge, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_begin_destroy_is_sliced_when_incremental_begin_destroy_is_on, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_begin_destroy_runs_for_all_at_once_when_incremental_begin_destroy_is_off, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_an_incremental_gather_is_spread_over_purge_steps, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_collection_that_finds_nothing_leaves_no_purge_pending, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_stuck_purge_blocks_new_collections_until_it_completes, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_class_found_unreachable_cannot_be_found_or_instantiated_before_its_gather, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_stuck_purge_keeps_its_stragglers_class, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_foreach_skips_objects_found_unreachable_before_their_gather, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_destroying_the_heap_during_a_stuck_purge_runs_each_hook_once, fix_setup, fix_teardown),
    };
    return cmocka_run_group_tests_name("gc_purge", tests, NULL, NULL);
}
