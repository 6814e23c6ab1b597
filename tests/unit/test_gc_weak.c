/* Weak handles: index + serial. */
#include "gc_fixture.h"

static void test_a_weak_handle_resolves_while_the_object_lives(void **state)
{
    fixture *f = *state;
    node *n = fix_node(f, NULL, NULL, 1, GC_CREATE_ROOT);
    gc_weak w = gc_weak_make(f->heap, n);

    fix_collect(f);

    assert_ptr_equal(gc_weak_get(f->heap, w), n);
    assert_false(gc_weak_is_stale(f->heap, w));
}

static void test_a_weak_handle_is_null_after_its_target_is_purged(void **state)
{
    fixture *f = *state;
    node *n = fix_node(f, NULL, NULL, 1, 0);
    gc_weak w = gc_weak_make(f->heap, n);

    fix_collect(f);

    assert_null(gc_weak_get(f->heap, w));
    assert_true(gc_weak_is_stale(f->heap, w));
}

static void test_a_weak_handle_never_resolves_to_an_object_reusing_its_slot(void **state)
{
    fixture *f = *state;
    node *old = fix_node(f, NULL, NULL, 1, 0);
    gc_weak w = gc_weak_make(f->heap, old);
    uint32_t index = gc_object_index(old);
    fix_collect(f);

    node *fresh = fix_node(f, NULL, NULL, 2, GC_CREATE_ROOT);
    gc_weak fresh_w = gc_weak_make(f->heap, fresh);

    assert_int_equal(gc_object_index(fresh), index); /* the slot was reused */
    assert_null(gc_weak_get(f->heap, w));
    assert_ptr_equal(gc_weak_get(f->heap, fresh_w), fresh);
    assert_int_not_equal(w.serial, fresh_w.serial);
}

static void test_a_weak_handle_does_not_keep_its_target_alive(void **state)
{
    fixture *f = *state;
    node *n = fix_node(f, NULL, NULL, 1, 0);
    gc_weak w = gc_weak_make(f->heap, n);
    gc_weak w2 = gc_weak_make(f->heap, n);
    assert_int_equal(w.serial, w2.serial);

    fix_collect(f);

    assert_int_equal(fix_log_find(f, "free:1") >= 0, 1);
    assert_null(gc_weak_get(f->heap, w2));
}

static void test_a_weak_handle_to_garbage_resolves_only_when_asked_to(void **state)
{
    fixture *f = *state;
    node *n = fix_node(f, NULL, NULL, 1, 0);
    gc_weak w = gc_weak_make(f->heap, n);
    gc_object_mark_garbage(f->heap, n);

    assert_null(gc_weak_get(f->heap, w));
    assert_ptr_equal(gc_weak_get_even_if_garbage(f->heap, w), n);
    fix_collect(f);
}

static void test_a_null_or_forged_weak_handle_resolves_to_null(void **state)
{
    fixture *f = *state;
    gc_weak none = gc_weak_make(f->heap, NULL);
    gc_weak forged = { 123456789u, 42u };

    assert_null(gc_weak_get(f->heap, none));
    assert_false(gc_weak_is_stale(f->heap, none));
    assert_null(gc_weak_get(f->heap, forged));
}

static void test_a_weak_handle_is_null_while_its_target_awaits_purge(void **state)
{
    fixture *f = *state;
    node *n = fix_node(f, NULL, NULL, 1, 0);
    gc_weak w = gc_weak_make(f->heap, n);

    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK); /* purge left pending */

    assert_true(gc_is_incremental_purge_pending(f->heap));
    assert_null(gc_weak_get(f->heap, w));
    assert_true(gc_incremental_purge(f->heap, 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_weak_handle_resolves_while_the_object_lives, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_weak_handle_is_null_after_its_target_is_purged, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_weak_handle_never_resolves_to_an_object_reusing_its_slot, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_weak_handle_does_not_keep_its_target_alive, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_weak_handle_to_garbage_resolves_only_when_asked_to, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_null_or_forged_weak_handle_resolves_to_null, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_weak_handle_is_null_while_its_target_awaits_purge, fix_setup, fix_teardown),
    };
    return cmocka_run_group_tests_name("gc_weak", tests, NULL, NULL);
}
