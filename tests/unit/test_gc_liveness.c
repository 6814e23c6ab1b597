/* What keeps an object alive: roots, ref counts, keep flags, internal flags, referencers. */
#include "gc_fixture.h"

static void test_an_unreferenced_object_is_collected(void **state)
{
    fixture *f = *state;
    node *n = fix_node(f, NULL, NULL, 1, 0);
    gc_weak w = gc_weak_make(f->heap, n);
    uint32_t before = gc_object_count(f->heap);

    fix_collect(f);

    assert_false(fix_alive(f, w));
    assert_int_equal(gc_object_count(f->heap), before - 1);
}

static void test_objects_reachable_from_a_root_survive(void **state)
{
    fixture *f = *state;
    node *root = fix_node(f, NULL, NULL, 1, GC_CREATE_ROOT);
    node *child = fix_node(f, NULL, NULL, 2, 0);
    node *grandchild = fix_node(f, NULL, NULL, 3, 0);
    root->a = child;
    gc_ref_array_push(&child->arr, grandchild);
    gc_weak w = gc_weak_make(f->heap, grandchild);

    fix_collect(f);

    assert_true(fix_alive(f, w));
    assert_true(gc_root_contains(root));
}

static void test_removing_the_root_lets_the_graph_go(void **state)
{
    fixture *f = *state;
    node *root = fix_node(f, NULL, NULL, 1, 0);
    assert_int_equal(gc_root_add(f->heap, root), GC_OK);
    node *child = fix_node(f, NULL, NULL, 2, 0);
    root->b = child;
    gc_weak rw = gc_weak_make(f->heap, root), cw = gc_weak_make(f->heap, child);
    fix_collect(f);
    assert_true(fix_alive(f, rw));

    assert_int_equal(gc_root_remove(f->heap, root), GC_OK);
    fix_collect(f);

    assert_false(fix_alive(f, rw));
    assert_false(fix_alive(f, cw));
}

static void test_unreachable_cycles_are_collected(void **state)
{
    fixture *f = *state;
    node *x = fix_node(f, NULL, NULL, 1, 0);
    node *y = fix_node(f, NULL, NULL, 2, 0);
    x->a = y;
    y->a = x;
    x->b = x;
    gc_weak xw = gc_weak_make(f->heap, x), yw = gc_weak_make(f->heap, y);

    fix_collect(f);

    assert_false(fix_alive(f, xw));
    assert_false(fix_alive(f, yw));
}

static void test_a_positive_ref_count_keeps_an_object_alive(void **state)
{
    fixture *f = *state;
    node *n = fix_node(f, NULL, NULL, 1, 0);
    gc_weak w = gc_weak_make(f->heap, n);
    assert_int_equal(gc_object_add_ref(f->heap, n), GC_OK);
    assert_int_equal(gc_object_add_ref(f->heap, n), GC_OK);

    fix_collect(f);
    assert_true(fix_alive(f, w));
    assert_int_equal(gc_object_ref_count(f->heap, n), 2);

    assert_int_equal(gc_object_release_ref(f->heap, n), GC_OK);
    fix_collect(f);
    assert_true(fix_alive(f, w));

    assert_int_equal(gc_object_release_ref(f->heap, n), GC_OK);
    fix_collect(f);
    assert_false(fix_alive(f, w));
}

static void test_a_strong_handle_holds_one_reference(void **state)
{
    fixture *f = *state;
    node *n = fix_node(f, NULL, NULL, 1, 0);
    gc_weak w = gc_weak_make(f->heap, n);
    gc_strong s = { 0 };
    assert_int_equal(gc_strong_set(f->heap, &s, n), GC_OK);

    fix_collect(f);
    assert_true(fix_alive(f, w));
    assert_int_equal(gc_object_ref_count(f->heap, n), 1);

    gc_strong_reset(f->heap, &s);
    assert_null(s.obj);
    fix_collect(f);
    assert_false(fix_alive(f, w));
}

static void test_releasing_more_refs_than_added_is_an_error(void **state)
{
    fixture *f = *state;
    node *n = fix_node(f, NULL, NULL, 1, GC_CREATE_ROOT);
    assert_int_equal(gc_object_release_ref(f->heap, n), GC_E_INVALID);
    assert_int_equal(gc_object_ref_count(f->heap, n), 0);
}

static void test_keep_flags_keep_matching_objects_for_one_collection(void **state)
{
    fixture *f = *state;
    node *standalone = fix_node(f, NULL, NULL, 1, 0);
    node *child = fix_node(f, NULL, NULL, 2, 0);
    standalone->a = child;
    assert_int_equal(gc_object_set_flags(f->heap, standalone, GC_OBJ_STANDALONE), GC_OK);
    gc_weak sw = gc_weak_make(f->heap, standalone), cw = gc_weak_make(f->heap, child);

    assert_int_equal(gc_collect(f->heap, GC_OBJ_STANDALONE, true), GC_OK);
    assert_true(fix_alive(f, sw));
    assert_true(fix_alive(f, cw));

    assert_int_equal(gc_collect(f->heap, 0, true), GC_OK);
    assert_false(fix_alive(f, sw));
    assert_false(fix_alive(f, cw));
}

static void test_keep_flags_do_not_keep_garbage(void **state)
{
    fixture *f = *state;
    node *n = fix_node(f, NULL, NULL, 1, 0);
    gc_object_set_flags(f->heap, n, GC_OBJ_STANDALONE);
    assert_int_equal(gc_object_mark_garbage(f->heap, n), GC_OK);
    gc_weak w = gc_weak_make(f->heap, n);

    assert_int_equal(gc_collect(f->heap, GC_OBJ_STANDALONE, true), GC_OK);

    assert_false(fix_alive(f, w));
}

static void test_an_internal_root_flag_keeps_an_object_while_set(void **state)
{
    fixture *f = *state;
    node *loading = fix_node(f, NULL, NULL, 1, 0);
    assert_int_equal(gc_object_set_flags(f->heap, loading, GC_OBJ_ASYNC), GC_OK);
    gc_weak w = gc_weak_make(f->heap, loading);

    fix_collect(f);
    assert_true(fix_alive(f, w));
    assert_true(gc_object_flags(loading) & GC_OBJ_ASYNC);

    assert_int_equal(gc_object_clear_flags(f->heap, loading, GC_OBJ_ASYNC), GC_OK);
    fix_collect(f);
    assert_false(fix_alive(f, w));
}

typedef struct holder_of_refs {
    void *held[2];
} holder_of_refs;

static void report_held(void *userdata, gc_collector *c)
{
    holder_of_refs *h = userdata;
    gc_collector_add_ref(c, &h->held[0]);
    gc_collector_add_ref(c, &h->held[1]);
}

static void test_an_external_referencer_keeps_what_it_reports(void **state)
{
    fixture *f = *state;
    holder_of_refs holder = { { fix_node(f, NULL, NULL, 1, 0), NULL } };
    gc_weak w = gc_weak_make(f->heap, holder.held[0]);
    gc_referencer *ref;
    assert_int_equal(gc_referencer_add(f->heap, "holder", report_held, &holder, &ref), GC_OK);

    fix_collect(f);
    assert_true(fix_alive(f, w));

    gc_referencer_remove(f->heap, ref);
    fix_collect(f);
    assert_false(fix_alive(f, w));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_an_unreferenced_object_is_collected, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_objects_reachable_from_a_root_survive, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_removing_the_root_lets_the_graph_go, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_unreachable_cycles_are_collected, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_positive_ref_count_keeps_an_object_alive, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_strong_handle_holds_one_reference, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_releasing_more_refs_than_added_is_an_error, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_keep_flags_keep_matching_objects_for_one_collection, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_keep_flags_do_not_keep_garbage, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_an_internal_root_flag_keeps_an_object_while_set, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_an_external_referencer_keeps_what_it_reports, fix_setup, fix_teardown),
    };
    return cmocka_run_group_tests_name("gc_liveness", tests, NULL, NULL);
}
