/* Bad use is an error, not a crash. */
#include "gc_fixture.h"

static void test_null_arguments_are_errors(void **state)
{
    fixture *f = *state;
    void *obj = NULL;
    gc_class *cls = NULL;

    assert_int_equal(gc_heap_create(NULL, NULL), GC_E_NULL);
    assert_int_equal(gc_object_create(NULL, f->node_class, NULL, NULL, 0, &obj), GC_E_NULL);
    assert_int_equal(gc_object_create(f->heap, NULL, NULL, NULL, 0, &obj), GC_E_NULL);
    assert_int_equal(gc_object_create(f->heap, f->node_class, NULL, NULL, 0, NULL), GC_E_NULL);
    assert_int_equal(gc_class_register(f->heap, NULL, &cls), GC_E_NULL);
    assert_int_equal(gc_root_add(f->heap, NULL), GC_E_NULL);
    assert_int_equal(gc_root_remove(f->heap, NULL), GC_E_NULL);
    assert_int_equal(gc_object_add_ref(f->heap, NULL), GC_E_NULL);
    assert_int_equal(gc_object_release_ref(f->heap, NULL), GC_E_NULL);
    assert_int_equal(gc_object_mark_garbage(f->heap, NULL), GC_E_NULL);
    assert_int_equal(gc_object_set_flags(f->heap, NULL, GC_OBJ_STANDALONE), GC_E_NULL);
    assert_int_equal(gc_collect(NULL, 0, true), GC_E_NULL);
    assert_int_equal(gc_heap_configure(f->heap, NULL), GC_E_NULL);
    assert_int_equal(gc_reference_chain(f->heap, NULL, NULL, NULL), GC_E_NULL);
    assert_null(gc_object_find(f->heap, NULL));
    assert_null(gc_object_class(f->heap, NULL));
    assert_false(gc_object_is_valid(NULL));
    gc_write_barrier(f->heap, NULL);
    gc_heap_destroy(NULL);
    assert_null(obj);
}

static void test_operations_on_an_object_awaiting_purge_report_it_dead(void **state)
{
    fixture *f = *state;
    node *n = fix_node(f, NULL, NULL, 1, 0);
    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK); /* gathered, not yet freed */
    void *child = NULL;

    assert_int_equal(gc_root_add(f->heap, n), GC_E_DEAD);
    assert_int_equal(gc_object_add_ref(f->heap, n), GC_E_DEAD);
    assert_int_equal(gc_object_mark_garbage(f->heap, n), GC_E_DEAD);
    assert_int_equal(gc_object_create(f->heap, f->node_class, n, NULL, 0, &child), GC_E_DEAD);
    assert_null(child);
    assert_true(gc_incremental_purge(f->heap, 0));
}

static void test_creating_under_a_garbage_outer_is_refused(void **state)
{
    fixture *f = *state;
    node *outer = fix_node(f, NULL, NULL, 1, 0);
    gc_object_mark_garbage(f->heap, outer);
    void *child = NULL;

    assert_int_equal(gc_object_create(f->heap, f->node_class, outer, NULL, 0, &child),
                     GC_E_GARBAGE);
    assert_null(child);
    fix_collect(f);
}

static void test_out_of_range_settings_are_refused(void **state)
{
    fixture *f = *state;
    gc_settings s;
    gc_settings_default(&s);
    s.incremental_reachability_time_limit = -1;

    assert_int_equal(gc_heap_configure(f->heap, &s), GC_E_INVALID);
    assert_true(gc_heap_settings(f->heap)->incremental_reachability_time_limit > 0);
}

static void test_unknown_keep_flags_and_object_flags_are_refused(void **state)
{
    fixture *f = *state;
    node *n = fix_node(f, NULL, NULL, 1, GC_CREATE_ROOT);

    assert_int_equal(gc_collect(f->heap, 1u << 20, true), GC_E_INVALID);
    assert_int_equal(gc_object_set_flags(f->heap, n, 1u << 20), GC_E_INVALID);
    assert_int_equal(gc_object_flags(n), 0);
}

static void test_every_result_has_a_description(void **state)
{
    (void)state;
    for (int r = GC_OK; r >= GC_E_NOT_FOUND; r--)
        assert_string_not_equal(gc_result_str((gc_result)r), "unknown result");
    assert_string_equal(gc_result_str((gc_result)42), "unknown result");
}


static gc_result g_nested;
static void nested_collect(gc_heap *heap, gc_event ev, void *userdata)
{
    (void)ev;
    (void)userdata;
    g_nested = gc_collect(heap, 0, true);
}

static void test_collecting_from_inside_a_collection_callback_is_refused(void **state)
{
    fixture *f = *state;
    gc_callback_add(f->heap, GC_EVENT_STARTED, nested_collect, NULL);

    fix_collect(f);

    assert_int_equal(g_nested, GC_E_STATE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_null_arguments_are_errors, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_operations_on_an_object_awaiting_purge_report_it_dead, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_creating_under_a_garbage_outer_is_refused, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_out_of_range_settings_are_refused, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_unknown_keep_flags_and_object_flags_are_refused, fix_setup, fix_teardown),
        cmocka_unit_test(test_every_result_has_a_description),
        cmocka_unit_test_setup_teardown(test_collecting_from_inside_a_collection_callback_is_refused, fix_setup, fix_teardown),
    };
    return cmocka_run_group_tests_name("gc_errors", tests, NULL, NULL);
}
