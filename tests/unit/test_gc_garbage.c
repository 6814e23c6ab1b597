/* MarkAsGarbage: killable references are nulled, immutable ones keep the object. */
#include "gc_fixture.h"

static void test_references_to_a_garbage_object_are_nulled(void **state)
{
    fixture *f = *state;
    node *root = fix_node(f, NULL, NULL, 1, GC_CREATE_ROOT);
    node *doomed = fix_node(f, NULL, NULL, 2, 0);
    root->a = doomed;
    gc_ref_array_push(&root->arr, doomed);
    gc_weak w = gc_weak_make(f->heap, doomed);

    assert_int_equal(gc_object_mark_garbage(f->heap, doomed), GC_OK);
    fix_collect(f);

    assert_null(root->a);
    assert_null(root->arr.data[0]);
    assert_false(fix_alive(f, w));
}

static void test_a_rooted_object_refuses_to_become_garbage(void **state)
{
    fixture *f = *state;
    node *root = fix_node(f, NULL, NULL, 1, GC_CREATE_ROOT);

    gc_result r = gc_object_mark_garbage(f->heap, root);

    assert_int_equal(r, GC_E_ROOTED);
    assert_false(gc_object_is_garbage(root));
    assert_string_equal(gc_result_str(r), "the object is rooted or reference-counted");
}

static void test_a_ref_counted_object_refuses_to_become_garbage(void **state)
{
    fixture *f = *state;
    node *n = fix_node(f, NULL, NULL, 1, 0);
    gc_object_add_ref(f->heap, n);

    assert_int_equal(gc_object_mark_garbage(f->heap, n), GC_E_ROOTED);
    gc_object_release_ref(f->heap, n);
    fix_collect(f);
}

static void test_a_garbage_object_cannot_be_rooted(void **state)
{
    fixture *f = *state;
    node *n = fix_node(f, NULL, NULL, 1, 0);
    gc_object_mark_garbage(f->heap, n);

    assert_int_equal(gc_root_add(f->heap, n), GC_E_GARBAGE);
    assert_int_equal(gc_object_add_ref(f->heap, n), GC_E_GARBAGE);
    assert_false(gc_root_contains(n));
}

static void test_an_outer_reference_keeps_a_garbage_object_until_it_goes(void **state)
{
    fixture *f = *state;
    node *level = fix_node(f, NULL, "Level", 1, 0);
    node *actor = fix_node(f, level, "Actor", 2, GC_CREATE_ROOT);
    gc_weak lw = gc_weak_make(f->heap, level);
    assert_int_equal(gc_object_mark_garbage(f->heap, level), GC_OK);

    fix_collect(f);
    assert_true(fix_alive(f, lw));           /* the outer reference cannot be nulled */
    assert_null(gc_weak_get(f->heap, lw));   /* ... but it is garbage for everyone else */
    assert_ptr_equal(gc_object_outer(f->heap, actor), level);

    gc_root_remove(f->heap, actor);
    fix_collect(f);
    assert_false(fix_alive(f, lw));
}

/* A killable reference to a garbage object is nulled even when an immutable one (an inner's
 * outer) has already marked the object in this collection: UE tests the garbage flag before
 * the mark. Both orders: the holder scanned before the inner, and after it. */
static void null_after_outer_kept(fixture *f, bool holder_first)
{
    node *level = fix_node(f, NULL, "Level", 1, 0);
    node *holder = holder_first ? fix_node(f, NULL, "Holder", 3, GC_CREATE_ROOT) : NULL;
    node *actor = fix_node(f, level, "Actor", 2, GC_CREATE_ROOT);

    if (!holder_first)
        holder = fix_node(f, NULL, "Holder", 3, GC_CREATE_ROOT);
    holder->a = level;
    gc_ref_array_push(&holder->arr, level);
    assert_int_equal(gc_object_mark_garbage(f->heap, level), GC_OK);

    fix_collect(f);
    assert_ptr_equal(gc_object_outer(f->heap, actor), level); /* kept by the outer ... */
    assert_null(holder->a);                                   /* ... nulled for the rest */
    assert_null(holder->arr.data[0]);
}

static void test_a_killable_reference_is_nulled_when_the_outer_marked_it_first(void **state)
{
    null_after_outer_kept(*state, false);
}

static void test_a_killable_reference_is_nulled_when_it_is_scanned_first(void **state)
{
    null_after_outer_kept(*state, true);
}

static void test_a_class_reference_keeps_a_garbage_class_until_it_goes(void **state)
{
    fixture *f = *state;
    gc_class_desc d = { .name = "Doomed", .size = 8 };
    gc_class *cls;
    assert_int_equal(gc_class_register(f->heap, &d, &cls), GC_OK);
    gc_root_remove(f->heap, gc_class_object(cls));
    void *obj;
    assert_int_equal(gc_object_create(f->heap, cls, NULL, NULL, GC_CREATE_ROOT, &obj), GC_OK);
    assert_int_equal(gc_object_mark_garbage(f->heap, gc_class_object(cls)), GC_OK);

    fix_collect(f);
    assert_ptr_equal(gc_object_class(f->heap, obj), cls);
    assert_true(gc_object_is_garbage(gc_class_object(cls)));

    gc_root_remove(f->heap, obj);
    fix_collect(f);
    assert_null(gc_class_find(f->heap, "Doomed"));
}

static void test_marking_garbage_twice_is_harmless(void **state)
{
    fixture *f = *state;
    node *n = fix_node(f, NULL, NULL, 1, 0);
    assert_int_equal(gc_object_mark_garbage(f->heap, n), GC_OK);
    assert_int_equal(gc_object_mark_garbage(f->heap, n), GC_OK);
    fix_collect(f);
    assert_int_equal(fix_log_find(f, "free:1") >= 0, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_references_to_a_garbage_object_are_nulled, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_rooted_object_refuses_to_become_garbage, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_ref_counted_object_refuses_to_become_garbage, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_garbage_object_cannot_be_rooted, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_an_outer_reference_keeps_a_garbage_object_until_it_goes, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_killable_reference_is_nulled_when_the_outer_marked_it_first, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_killable_reference_is_nulled_when_it_is_scanned_first, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_class_reference_keeps_a_garbage_class_until_it_goes, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_marking_garbage_twice_is_harmless, fix_setup, fix_teardown),
    };
    return cmocka_run_group_tests_name("gc_garbage", tests, NULL, NULL);
}
