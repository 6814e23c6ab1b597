/*
 * test_client_mirror.c - the client's world mirror, keyed by net id.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "client.h"

static void test_an_added_actor_is_found_by_its_net_id(void **state)
{
    client_mirror m;

    (void)state;
    client_mirror_init(&m);

    assert_true(client_mirror_put(&m, 42, 6, 3));

    const client_mirror_entry *e = client_mirror_get(&m, 42);
    assert_non_null(e);
    assert_int_equal(e->actor_class, 6);
    assert_int_equal(e->owner_player_id, 3);
    assert_int_equal(m.count, 1);
    client_mirror_free(&m);
}

static void test_adding_a_net_id_twice_replaces_it(void **state)
{
    client_mirror m;

    (void)state;
    client_mirror_init(&m);
    client_mirror_put(&m, 42, 6, 3);

    client_mirror_put(&m, 42, 5, 4);

    assert_int_equal(m.count, 1);
    assert_int_equal(client_mirror_get(&m, 42)->actor_class, 5);
    client_mirror_free(&m);
}

static void test_a_removed_actor_is_gone_and_others_stay(void **state)
{
    client_mirror m;

    (void)state;
    client_mirror_init(&m);
    for (uint64_t id = 1; id <= 1000; id++)
        client_mirror_put(&m, id, 6, (uint32_t)(id % 7));

    for (uint64_t id = 1; id <= 1000; id += 2)
        assert_true(client_mirror_remove(&m, id));

    assert_int_equal(m.count, 500);
    for (uint64_t id = 1; id <= 1000; id++) {
        if (id % 2)
            assert_null(client_mirror_get(&m, id));
        else
            assert_non_null(client_mirror_get(&m, id));
    }
    client_mirror_free(&m);
}

static void test_removing_an_unknown_net_id_changes_nothing(void **state)
{
    client_mirror m;

    (void)state;
    client_mirror_init(&m);
    assert_false(client_mirror_remove(&m, 5));
    client_mirror_put(&m, 4, 6, 1);

    assert_false(client_mirror_remove(&m, 5));
    assert_int_equal(m.count, 1);
    client_mirror_free(&m);
}

static void test_owned_actors_are_counted_by_class_and_owner(void **state)
{
    client_mirror m;

    (void)state;
    client_mirror_init(&m);
    client_mirror_put(&m, 1, 6, 1);
    client_mirror_put(&m, 2, 6, 1);
    client_mirror_put(&m, 3, 6, 2);
    client_mirror_put(&m, 4, 4, 1);

    assert_int_equal(client_mirror_count_owned(&m, 6, 1), 2);
    assert_int_equal(client_mirror_count_owned(&m, 6, 2), 1);
    assert_int_equal(client_mirror_count_owned(&m, 4, 1), 1);
    client_mirror_free(&m);
}

static void test_churn_keeps_every_live_entry_findable(void **state)
{
    client_mirror m;
    uint64_t next = 1;

    (void)state;
    client_mirror_init(&m);
    /* A sliding window of 100 live ids over 20000 spawns, as a busy world looks. */
    for (int i = 0; i < 20000; i++) {
        client_mirror_put(&m, next, 6, 1);
        if (next > 100)
            assert_true(client_mirror_remove(&m, next - 100));
        next++;
    }

    assert_int_equal(m.count, 100);
    for (uint64_t id = next - 100; id < next; id++)
        assert_non_null(client_mirror_get(&m, id));
    client_mirror_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_an_added_actor_is_found_by_its_net_id),
        cmocka_unit_test(test_adding_a_net_id_twice_replaces_it),
        cmocka_unit_test(test_a_removed_actor_is_gone_and_others_stay),
        cmocka_unit_test(test_removing_an_unknown_net_id_changes_nothing),
        cmocka_unit_test(test_owned_actors_are_counted_by_class_and_owner),
        cmocka_unit_test(test_churn_keeps_every_live_entry_findable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
