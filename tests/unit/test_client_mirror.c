/*
 * test_client_mirror.c - the client's world mirror, keyed by net id, and the count and digest
 * it keeps for the server's ReplicationCheck.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "client_mirror.h"

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
    assert_int_equal(m.table.count, 1);
    client_mirror_free(&m);
}

static void test_adding_a_net_id_twice_replaces_it(void **state)
{
    client_mirror m;

    (void)state;
    client_mirror_init(&m);
    client_mirror_put(&m, 42, 6, 3);

    client_mirror_put(&m, 42, 5, 4);

    assert_int_equal(m.table.count, 1);
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

    assert_int_equal(m.table.count, 500);
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
    assert_int_equal(m.table.count, 1);
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

    assert_int_equal(m.table.count, 100);
    for (uint64_t id = next - 100; id < next; id++)
        assert_non_null(client_mirror_get(&m, id));
    client_mirror_free(&m);
}

static uint64_t digest_of(const uint64_t *ids, int n)
{
    uint64_t d = 0;

    for (int i = 0; i < n; i++)
        d ^= client_net_id_digest(ids[i]);
    return d;
}

static void test_the_net_id_digest_is_splitmix64_of_the_id(void **state)
{
    (void)state;
    /* splitmix64's first output from state 0 and from state 1 (a Weyl step, then the
     * finaliser): the server computes the same values. */
    assert_true(client_net_id_digest(0) == 0xE220A8397B1DCDAFull);
    assert_true(client_net_id_digest(1) == 0x910A2DEC89025CC1ull);
}

static void test_the_digest_is_the_xor_over_the_held_net_ids(void **state)
{
    static const uint64_t held[] = { 3, 17, 1000000007ull };
    client_mirror m;

    (void)state;
    client_mirror_init(&m);
    for (int i = 0; i < 3; i++)
        client_mirror_put(&m, held[i], 6, 1);
    client_mirror_put(&m, 99, 6, 1);

    client_mirror_remove(&m, 99);

    assert_int_equal(m.table.count, 3);
    assert_true(m.digest == digest_of(held, 3));
    client_mirror_free(&m);
}

static void test_an_actor_that_reenters_relevancy_is_held_once(void **state)
{
    static const uint64_t held[] = { 7 };
    client_mirror m;

    (void)state;
    client_mirror_init(&m);
    client_mirror_put(&m, 7, 4, 2);     /* relevant: spawned */
    client_mirror_remove(&m, 7);        /* out of the cull distance: destroyed */

    client_mirror_put(&m, 7, 4, 2);     /* back in: spawned again, same net id */

    assert_int_equal(m.table.count, 1);
    assert_true(m.digest == digest_of(held, 1));
    client_mirror_free(&m);
}

static void test_a_duplicate_spawn_or_an_unknown_destroy_leaves_the_digest_alone(void **state)
{
    static const uint64_t held[] = { 5, 6 };
    client_mirror m;

    (void)state;
    client_mirror_init(&m);
    client_mirror_put(&m, 5, 6, 1);
    client_mirror_put(&m, 6, 6, 1);

    client_mirror_put(&m, 6, 6, 1);
    assert_false(client_mirror_remove(&m, 8));

    assert_int_equal(m.table.count, 2);
    assert_true(m.digest == digest_of(held, 2));
    client_mirror_free(&m);
}

static void test_a_cleared_mirror_is_empty_and_reusable(void **state)
{
    static const uint64_t held[] = { 2 };
    client_mirror m;

    (void)state;
    client_mirror_init(&m);
    for (uint64_t id = 1; id <= 500; id++)
        client_mirror_put(&m, id, 6, 1);

    client_mirror_clear(&m);
    client_mirror_put(&m, 2, 6, 1);

    assert_int_equal(m.table.count, 1);
    assert_true(m.digest == digest_of(held, 1));
    assert_null(client_mirror_get(&m, 1));
    client_mirror_free(&m);
}

static void test_a_replication_check_matches_the_open_set_and_when_settled_the_relevant_set(
    void **state)
{
    static const uint64_t held[] = { 10, 11, 12 };
    Reap__ReplicationCheck r = REAP__REPLICATION_CHECK__INIT;
    client_mirror m;

    (void)state;
    client_mirror_init(&m);
    for (int i = 0; i < 3; i++)
        client_mirror_put(&m, held[i], 6, 1);
    r.open_actors = 3;
    r.open_digest = digest_of(held, 3);
    r.relevant_actors = 4;              /* one more is relevant but not sent yet */
    r.relevant_digest = r.open_digest ^ client_net_id_digest(13);

    r.pending = 1;
    assert_true(churn_check_matches(&m, &r));
    r.pending = 0;                      /* nothing pending: the relevant set must match too */
    assert_false(churn_check_matches(&m, &r));
    r.open_digest ^= 1;                 /* the open set itself differs */
    r.pending = 1;
    assert_false(churn_check_matches(&m, &r));
    client_mirror_free(&m);
}

static void test_a_replication_check_taken_while_destroys_are_owed_accounts_for_them(
    void **state)
{
    static const uint64_t held[] = { 20, 21, 22 };
    Reap__ReplicationCheck r = REAP__REPLICATION_CHECK__INIT;
    client_mirror m;

    (void)state;
    client_mirror_init(&m);
    for (int i = 0; i < 3; i++)
        client_mirror_put(&m, held[i], 6, 1);
    r.open_actors = 3;                  /* 22 left relevancy: its destroy is still owed */
    r.open_digest = digest_of(held, 3);
    r.relevant_actors = 2;
    r.relevant_digest = digest_of(held, 2);
    r.pending = 0;
    r.closing = 1;

    assert_true(churn_check_matches(&m, &r));
    r.closing = 0;                      /* the server's counts contradict each other */
    assert_false(churn_check_matches(&m, &r));
    r.closing = 1;
    r.relevant_digest ^= 1;             /* unverifiable while owed: the held set decides */
    assert_true(churn_check_matches(&m, &r));
    client_mirror_remove(&m, 22);       /* the mirror lost an actor the server still counts */
    assert_false(churn_check_matches(&m, &r));
    client_mirror_put(&m, 22, 6, 1);
    r.relevant_actors = 4;              /* more relevant than pending + held: contradictory */
    assert_false(churn_check_matches(&m, &r));
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
        cmocka_unit_test(test_the_net_id_digest_is_splitmix64_of_the_id),
        cmocka_unit_test(test_the_digest_is_the_xor_over_the_held_net_ids),
        cmocka_unit_test(test_an_actor_that_reenters_relevancy_is_held_once),
        cmocka_unit_test(test_a_duplicate_spawn_or_an_unknown_destroy_leaves_the_digest_alone),
        cmocka_unit_test(test_a_cleared_mirror_is_empty_and_reusable),
        cmocka_unit_test(test_a_replication_check_matches_the_open_set_and_when_settled_the_relevant_set),
        cmocka_unit_test(test_a_replication_check_taken_while_destroys_are_owed_accounts_for_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
