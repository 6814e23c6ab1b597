/* The object array and the disregard-for-GC pool. */
#include "gc_fixture.h"

static void test_items_keep_their_address_while_the_array_grows(void **state)
{
    fixture *f = *state;
    node *first = fix_node(f, NULL, NULL, 1, GC_CREATE_ROOT);
    const void *item = gc_testing_item_address(f->heap, first);

    for (int i = 0; i < 200000; i++) /* several chunks */
        fix_node(f, NULL, NULL, i, 0);

    assert_ptr_equal(gc_testing_item_address(f->heap, first), item);
    assert_true(gc_testing_high_water(f->heap) > 200000);
    fix_collect(f);
}

static void test_freed_indices_are_reused_before_the_array_grows(void **state)
{
    fixture *f = *state;
    for (int i = 0; i < 10; i++)
        fix_node(f, NULL, NULL, i, 0);
    fix_collect(f);
    uint32_t high = gc_testing_high_water(f->heap);
    uint32_t free_before = gc_testing_free_count(f->heap);
    assert_true(free_before >= 10);

    node *n = fix_node(f, NULL, NULL, 99, 0);

    assert_int_equal(gc_testing_high_water(f->heap), high);
    assert_int_equal(gc_testing_free_count(f->heap), free_before - 1);
    assert_true(gc_object_index(n) < high);
}

static void test_creating_beyond_the_object_limit_is_an_error(void **state)
{
    (void)state;
    gc_heap *heap;
    gc_heap_config cfg = { 0 };
    cfg.max_objects = 8;
    assert_int_equal(gc_heap_create(&cfg, &heap), GC_OK);
    gc_class *cls;
    gc_class_desc d = { .name = "Small", .size = 8 };
    assert_int_equal(gc_class_register(heap, &d, &cls), GC_OK);
    uint32_t live = gc_object_count(heap); /* the metaclass and Small */
    void *obj;
    for (uint32_t i = live; i < 8; i++)
        assert_int_equal(gc_object_create(heap, cls, NULL, NULL, 0, &obj), GC_OK);

    gc_result r = gc_object_create(heap, cls, NULL, NULL, 0, &obj);

    assert_int_equal(r, GC_E_LIMIT);
    assert_string_equal(gc_result_str(r), "the object or class limit is reached");
    assert_int_equal(gc_object_count(heap), 8);
    assert_null(gc_testing_check(heap));
    gc_heap_destroy(heap);
}

static void test_objects_created_in_the_disregard_pool_are_never_collected(void **state)
{
    (void)state;
    gc_heap *heap;
    assert_int_equal(gc_heap_create(NULL, &heap), GC_OK);
    assert_int_equal(gc_disregard_open(heap), GC_OK);
    gc_class *cls;
    gc_class_desc d = { .name = "Engine", .size = 16 };
    assert_int_equal(gc_class_register(heap, &d, &cls), GC_OK);
    void *engine;
    assert_int_equal(gc_object_create(heap, cls, NULL, "Engine", 0, &engine), GC_OK);
    assert_int_equal(gc_disregard_close(heap), GC_OK);
    void *ordinary;
    assert_int_equal(gc_object_create(heap, cls, NULL, NULL, 0, &ordinary), GC_OK);
    gc_weak ordinary_w = gc_weak_make(heap, ordinary);

    assert_int_equal(gc_collect(heap, 0, true), GC_OK);

    assert_true(gc_object_is_permanent(engine));
    assert_ptr_equal(gc_object_find(heap, "Engine"), engine);
    assert_null(gc_weak_get(heap, ordinary_w));
    assert_int_equal(gc_permanent_count(heap), 3); /* metaclass, Engine class, Engine */
    gc_heap_destroy(heap);
}

static void test_the_disregard_pool_cannot_reopen_once_closed(void **state)
{
    (void)state;
    gc_heap *heap;
    assert_int_equal(gc_heap_create(NULL, &heap), GC_OK);
    assert_int_equal(gc_disregard_open(heap), GC_OK);
    assert_int_equal(gc_disregard_close(heap), GC_OK);

    assert_int_equal(gc_disregard_open(heap), GC_E_STATE);
    assert_int_equal(gc_disregard_close(heap), GC_E_STATE);
    gc_heap_destroy(heap);
}

static void test_the_disregard_pool_opens_only_before_ordinary_objects_exist(void **state)
{
    fixture *f = *state; /* the fixture registered Node as an ordinary (rooted) class */
    assert_int_equal(gc_disregard_open(f->heap), GC_E_STATE);
}

static void test_permanent_objects_refuse_to_become_garbage(void **state)
{
    (void)state;
    gc_heap *heap;
    assert_int_equal(gc_heap_create(NULL, &heap), GC_OK);
    gc_disregard_open(heap);
    gc_class *cls;
    gc_class_desc d = { .name = "Thing", .size = 8 };
    assert_int_equal(gc_class_register(heap, &d, &cls), GC_OK);
    void *obj;
    assert_int_equal(gc_object_create(heap, cls, NULL, NULL, 0, &obj), GC_OK);
    gc_disregard_close(heap);

    assert_int_equal(gc_object_mark_garbage(heap, obj), GC_E_PERMANENT);
    assert_false(gc_object_is_garbage(obj));
    gc_heap_destroy(heap);
}

typedef struct sixty_four {
    char bytes[64];
} sixty_four;

static void test_an_object_costs_at_most_32_bytes_beyond_its_payload(void **state)
{
    (void)state;
    gc_heap *heap;
    assert_int_equal(gc_heap_create(NULL, &heap), GC_OK);
    gc_class_desc d = { .name = "Payload64", .size = sizeof(sixty_four) };
    gc_class *cls;
    assert_int_equal(gc_class_register(heap, &d, &cls), GC_OK);
    gc_memory before, after;
    gc_memory_get(heap, &before);
    enum { N = 200000 };

    void *obj;
    for (int i = 0; i < N; i++)
        assert_int_equal(gc_object_create(heap, cls, NULL, NULL, 0, &obj), GC_OK);

    gc_memory_get(heap, &after);
    double per_object = (double)(after.total_bytes - before.total_bytes) / N - 64.0;
    assert_true(per_object > 28.0); /* a 16-byte header and a 12-byte slot at least */
    assert_true(per_object <= 32.0);
    gc_heap_destroy(heap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_items_keep_their_address_while_the_array_grows, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_freed_indices_are_reused_before_the_array_grows, fix_setup, fix_teardown),
        cmocka_unit_test(test_creating_beyond_the_object_limit_is_an_error),
        cmocka_unit_test(test_objects_created_in_the_disregard_pool_are_never_collected),
        cmocka_unit_test(test_the_disregard_pool_cannot_reopen_once_closed),
        cmocka_unit_test_setup_teardown(test_the_disregard_pool_opens_only_before_ordinary_objects_exist, fix_setup, fix_teardown),
        cmocka_unit_test(test_permanent_objects_refuse_to_become_garbage),
        cmocka_unit_test(test_an_object_costs_at_most_32_bytes_beyond_its_payload),
    };
    return cmocka_run_group_tests_name("gc_array", tests, NULL, NULL);
}
