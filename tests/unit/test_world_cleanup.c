/*
 * test_world_cleanup.c - UE CleanupActors over a level's actor slots: null slots go, slots 0-1
 * stay, live actors keep their order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "world.h"

/* Distinct fake actor pointers: the compaction never dereferences them. */
static char actors[32];
#define A(i) ((void *)&actors[i])

static void test_an_array_without_nulls_is_unchanged(void **state)
{
    void *slots[] = { A(0), A(1), A(2), A(3), A(4) };
    void *expect[] = { A(0), A(1), A(2), A(3), A(4) };

    (void)state;
    uint32_t n = world_compact_actor_slots(slots, 5, WORLD_FIRST_DYNAMIC_SLOT);

    assert_int_equal(n, 5);
    assert_memory_equal(slots, expect, sizeof expect);
}

static void test_a_single_null_slot_is_removed(void **state)
{
    void *slots[] = { A(0), A(1), A(2), NULL, A(4) };
    void *expect[] = { A(0), A(1), A(2), A(4) };

    (void)state;
    uint32_t n = world_compact_actor_slots(slots, 5, WORLD_FIRST_DYNAMIC_SLOT);

    assert_int_equal(n, 4);
    assert_memory_equal(slots, expect, sizeof expect);
}

static void test_runs_of_nulls_are_removed_and_live_actors_keep_their_order(void **state)
{
    void *slots[] = { A(0), A(1), NULL, NULL, A(4), A(5), NULL, NULL, NULL, A(9), NULL, A(11) };
    void *expect[] = { A(0), A(1), A(4), A(5), A(9), A(11) };

    (void)state;
    uint32_t n = world_compact_actor_slots(slots, 12, WORLD_FIRST_DYNAMIC_SLOT);

    assert_int_equal(n, 6);
    assert_memory_equal(slots, expect, sizeof expect);
}

static void test_trailing_nulls_are_removed(void **state)
{
    void *slots[] = { A(0), A(1), A(2), NULL, NULL, NULL };
    void *expect[] = { A(0), A(1), A(2) };

    (void)state;
    uint32_t n = world_compact_actor_slots(slots, 6, WORLD_FIRST_DYNAMIC_SLOT);

    assert_int_equal(n, 3);
    assert_memory_equal(slots, expect, sizeof expect);
}

static void test_a_level_whose_dynamic_actors_are_all_destroyed_keeps_only_slots_0_and_1(
    void **state)
{
    void *slots[] = { A(0), A(1), NULL, NULL, NULL, NULL, NULL };

    (void)state;
    uint32_t n = world_compact_actor_slots(slots, 7, WORLD_FIRST_DYNAMIC_SLOT);

    assert_int_equal(n, 2);
    assert_ptr_equal(slots[0], A(0));
    assert_ptr_equal(slots[1], A(1));
}

static void test_null_slots_below_the_first_dynamic_slot_are_never_touched(void **state)
{
    void *slots[] = { NULL, NULL, A(2), NULL, A(4) };
    void *expect[] = { NULL, NULL, A(2), A(4) };

    (void)state;
    uint32_t n = world_compact_actor_slots(slots, 5, WORLD_FIRST_DYNAMIC_SLOT);

    assert_int_equal(n, 4);
    assert_memory_equal(slots, expect, sizeof expect);
}

static void test_an_array_no_longer_than_the_permanent_slots_is_unchanged(void **state)
{
    void *slots[] = { A(0), NULL };

    (void)state;
    uint32_t n = world_compact_actor_slots(slots, 2, WORLD_FIRST_DYNAMIC_SLOT);

    assert_int_equal(n, 2);
    assert_ptr_equal(slots[0], A(0));
    assert_null(slots[1]);
}

static void test_compaction_matches_a_stable_filter_for_every_null_pattern(void **state)
{
    enum { LEN = 12 };

    (void)state;
    /* Every pattern of nulls over the 10 dynamic slots. */
    for (uint32_t mask = 0; mask < (1u << (LEN - 2)); mask++) {
        void *slots[LEN], *expect[LEN];
        uint32_t kept = 0;

        for (uint32_t i = 0; i < LEN; i++) {
            bool null = i >= 2 && (mask >> (i - 2)) & 1;
            slots[i] = null ? NULL : A(i);
            if (!null)
                expect[kept++] = A(i);
        }

        uint32_t n = world_compact_actor_slots(slots, LEN, WORLD_FIRST_DYNAMIC_SLOT);

        assert_int_equal(n, kept);
        assert_memory_equal(slots, expect, kept * sizeof(void *));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_an_array_without_nulls_is_unchanged),
        cmocka_unit_test(test_a_single_null_slot_is_removed),
        cmocka_unit_test(test_runs_of_nulls_are_removed_and_live_actors_keep_their_order),
        cmocka_unit_test(test_trailing_nulls_are_removed),
        cmocka_unit_test(test_a_level_whose_dynamic_actors_are_all_destroyed_keeps_only_slots_0_and_1),
        cmocka_unit_test(test_null_slots_below_the_first_dynamic_slot_are_never_touched),
        cmocka_unit_test(test_an_array_no_longer_than_the_permanent_slots_is_unchanged),
        cmocka_unit_test(test_compaction_matches_a_stable_filter_for_every_null_pattern),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
