/* Callbacks around a collection and per-collection statistics. */
#include "gc_fixture.h"

typedef struct event_log {
    gc_event events[16];
    int count;
} event_log;

static void log_event(gc_heap *heap, gc_event ev, void *userdata)
{
    (void)heap;
    event_log *l = userdata;
    if (l->count < 16)
        l->events[l->count++] = ev;
}

static void test_callbacks_fire_in_pipeline_order(void **state)
{
    fixture *f = *state;
    event_log l = { .count = 0 };
    for (int ev = 0; ev < GC_EVENT_COUNT_; ev++)
        assert_int_equal(gc_callback_add(f->heap, (gc_event)ev, log_event, &l), GC_OK);

    fix_collect(f);

    assert_int_equal(l.count, 4);
    assert_int_equal(l.events[0], GC_EVENT_PRE);
    assert_int_equal(l.events[1], GC_EVENT_STARTED);
    assert_int_equal(l.events[2], GC_EVENT_POST_MARK);
    assert_int_equal(l.events[3], GC_EVENT_POST);
}

static void test_a_removed_callback_no_longer_fires(void **state)
{
    fixture *f = *state;
    event_log l = { .count = 0 };
    gc_callback_add(f->heap, GC_EVENT_POST, log_event, &l);
    gc_callback_remove(f->heap, GC_EVENT_POST, log_event, &l);

    fix_collect(f);

    assert_int_equal(l.count, 0);
}

typedef struct self_removing {
    int a_calls, b_calls, c_calls;
} self_removing;

static void count_b(gc_heap *heap, gc_event ev, void *userdata)
{
    (void)heap;
    (void)ev;
    ((self_removing *)userdata)->b_calls++;
}

static void count_c(gc_heap *heap, gc_event ev, void *userdata)
{
    (void)heap;
    (void)ev;
    ((self_removing *)userdata)->c_calls++;
}

static void count_a_and_remove_itself(gc_heap *heap, gc_event ev, void *userdata)
{
    ((self_removing *)userdata)->a_calls++;
    gc_callback_remove(heap, ev, count_a_and_remove_itself, userdata);
}

static void test_a_callback_removing_itself_while_firing_skips_none_of_the_others(void **state)
{
    fixture *f = *state;
    self_removing s = { 0, 0, 0 };
    assert_int_equal(gc_callback_add(f->heap, GC_EVENT_POST, count_a_and_remove_itself, &s),
                     GC_OK);
    assert_int_equal(gc_callback_add(f->heap, GC_EVENT_POST, count_b, &s), GC_OK);
    assert_int_equal(gc_callback_add(f->heap, GC_EVENT_POST, count_c, &s), GC_OK);

    fix_collect(f);
    fix_collect(f);

    assert_int_equal(s.a_calls, 1);
    assert_int_equal(s.b_calls, 2);
    assert_int_equal(s.c_calls, 2);
}

static void remove_b_and_c(gc_heap *heap, gc_event ev, void *userdata)
{
    gc_callback_remove(heap, ev, count_b, userdata);
    gc_callback_remove(heap, ev, count_c, userdata);
}

static void test_a_callback_removed_by_an_earlier_one_is_not_called_in_the_same_firing(
    void **state)
{
    fixture *f = *state;
    self_removing s = { 0, 0, 0 };
    assert_int_equal(gc_callback_add(f->heap, GC_EVENT_POST, remove_b_and_c, &s), GC_OK);
    assert_int_equal(gc_callback_add(f->heap, GC_EVENT_POST, count_b, &s), GC_OK);
    assert_int_equal(gc_callback_add(f->heap, GC_EVENT_POST, count_c, &s), GC_OK);

    fix_collect(f);

    assert_int_equal(s.b_calls, 0);
    assert_int_equal(s.c_calls, 0);
}

static void test_statistics_count_the_last_collection(void **state)
{
    fixture *f = *state;
    node *root = fix_node(f, NULL, NULL, 0, GC_CREATE_ROOT);
    for (int i = 0; i < 30; i++)
        gc_ref_array_push(&root->arr, fix_node(f, NULL, NULL, i + 1, 0));
    for (int i = 0; i < 20; i++)
        fix_node(f, NULL, NULL, 100 + i, 0);
    uint32_t before = gc_object_count(f->heap);
    f->clock.step_per_read = 0.001;

    fix_collect(f);

    gc_stats st;
    gc_stats_get(f->heap, &st);
    assert_int_equal(st.objects_before, before);
    assert_int_equal(st.objects_after, before - 20);
    assert_int_equal(st.unreachable, 20);
    assert_int_equal(st.destroyed, 20);
    assert_int_equal(st.roots, 2);    /* the Node class and root */
    assert_int_equal(st.marked, 2 + 30);
    assert_int_equal(st.collections, 1);
    assert_int_equal(st.collections_full, 1);
    assert_true(st.mark_seconds > 0);
    assert_true(st.purge_seconds > 0);
}

static void test_lifetime_statistics_accumulate_across_collections(void **state)
{
    fixture *f = *state;
    fix_node(f, NULL, NULL, 1, 0);
    fix_collect(f);
    fix_node(f, NULL, NULL, 2, 0);
    fix_node(f, NULL, NULL, 3, 0);
    fix_collect(f);

    gc_stats st;
    gc_stats_get(f->heap, &st);
    assert_int_equal(st.collections, 2);
    assert_int_equal(st.objects_destroyed, 3);
    assert_int_equal(st.destroyed, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_callbacks_fire_in_pipeline_order, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_removed_callback_no_longer_fires, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_callback_removing_itself_while_firing_skips_none_of_the_others, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_callback_removed_by_an_earlier_one_is_not_called_in_the_same_firing, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_statistics_count_the_last_collection, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_lifetime_statistics_accumulate_across_collections, fix_setup, fix_teardown),
    };
    return cmocka_run_group_tests_name("gc_callbacks", tests, NULL, NULL);
}
