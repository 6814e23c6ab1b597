/*
 * test_gc_map.c - the collector's small hash tables give back a peak's memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gc_internal.h"

static void test_a_table_emptied_after_a_peak_shrinks_and_keeps_its_keys(void **state)
{
    gc_map m;
    uint32_t v;

    (void)state;
    gc_map_init(&m);
    for (uint64_t k = 1; k <= 5000; k++)
        assert_int_equal(gc_map_put(&m, k, (uint32_t)k), GC_OK);
    for (uint64_t k = 4; k <= 5000; k++)
        assert_true(gc_map_remove(&m, k));
    uint32_t peak = m.capacity;

    gc_map_shrink(&m);

    assert_true(m.capacity < peak);
    assert_true(m.capacity <= 16);
    for (uint64_t k = 1; k <= 3; k++) {
        assert_true(gc_map_get(&m, k, &v));
        assert_int_equal(v, k);
    }
    assert_false(gc_map_get(&m, 4, NULL));
    gc_map_free(&m);
}

static void test_a_small_or_busy_table_is_left_as_it_is(void **state)
{
    gc_map small, busy;

    (void)state;
    gc_map_init(&small);
    gc_map_init(&busy);
    for (uint64_t k = 1; k <= 300; k++)
        gc_map_put(&small, k, 1);
    for (uint64_t k = 1; k <= 3000; k++)
        gc_map_put(&busy, k, 1);
    for (uint64_t k = 1; k <= 299; k++)
        gc_map_remove(&small, k);
    uint32_t small_cap = small.capacity, busy_cap = busy.capacity;

    gc_map_shrink(&small);
    gc_map_shrink(&busy);

    assert_int_equal(small.capacity, small_cap); /* 1024 slots or fewer: not worth it */
    assert_int_equal(busy.capacity, busy_cap);   /* more than an eighth full */
    gc_map_free(&small);
    gc_map_free(&busy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_table_emptied_after_a_peak_shrinks_and_keeps_its_keys),
        cmocka_unit_test(test_a_small_or_busy_table_is_left_as_it_is),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
