/*
 * test_churn.c - ten players come, each spawns twenty props, and leave (half of them
 * abruptly, so the server only learns of it by timing them out). After `obj gc` the server is
 * back where it started: the same object count, and no null actor slots.
 */
#include "harness.h"

enum { CLIENTS = 10, PROPS = 20 };

static void test_players_leaving_gracefully_or_abruptly_leave_nothing_behind(void **state)
{
    const char *const server_args[] = { "--cvar", "net.ConnectionTimeout=1", NULL };
    harness_server s;
    harness_proc clients[CLIENTS];
    char reply[4096];

    (void)state;
    harness_server_start(&s, server_args);
    harness_wait_metric(&s, "reap_frame", HARNESS_GE, 2, 10.0);
    assert_int_equal(harness_console(&s, "obj gc", reply, sizeof reply), 200);
    double baseline = harness_server_metric(&s, "reap_gc_objects");

    for (int i = 0; i < CLIENTS; i++) {
        const char *args[] = { "--server", s.endpoint, "--spawn", "20", "--hold", "0.5",
                               "--disconnect", i % 2 ? "abrupt" : "graceful", NULL };
        harness_proc_start(&clients[i], "reap-client", args);
    }
    harness_wait_metric(&s, "reap_gc_objects", HARNESS_GE, baseline + CLIENTS * PROPS * 5, 20.0);
    for (int i = 0; i < CLIENTS; i++) {
        assert_true(harness_proc_wait(&clients[i], 30.0));
        if (clients[i].status != 0)
            fail_msg("client %d failed:\n%s", i, clients[i].out);
        assert_non_null(strstr(clients[i].out, "spawned 20 props: 20 acknowledged, 20 replicated"));
    }
    harness_wait_metric(&s, "reap_net_connections", HARNESS_EQ, 0, 20.0);
    assert_true(harness_server_metric(&s, "reap_players_connected") == 0);
    assert_true(harness_server_metric(&s, "reap_net_timeouts_total") >= CLIENTS / 2);

    assert_int_equal(harness_console(&s, "obj gc", reply, sizeof reply), 200);

    assert_true(harness_server_metric(&s, "reap_gc_objects") == baseline);
    assert_true(harness_server_metric(&s, "reap_world_actor_slots{world=\"World0\"}") ==
                harness_server_metric(&s, "reap_world_actors{world=\"World0\"}"));
    assert_true(harness_server_metric(&s, "reap_world_actors{world=\"World0\"}") == 2);
    for (int i = 0; i < CLIENTS; i++)
        harness_proc_free(&clients[i]);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_players_in_two_worlds_are_cleaned_up_per_world(void **state)
{
    const char *const server_args[] = { "--worlds", "2", NULL };
    harness_server s;
    harness_proc a, b;
    char reply[4096];

    (void)state;
    harness_server_start(&s, server_args);
    harness_wait_metric(&s, "reap_frame", HARNESS_GE, 2, 10.0);
    const char *args_a[] = { "--server", s.endpoint, "--world", "World0", "--spawn", "7", NULL };
    const char *args_b[] = { "--server", s.endpoint, "--world", "World1", "--spawn", "9",
                             "--hold", "30", NULL };
    harness_proc_start(&b, "reap-client", args_b);
    harness_wait_metric(&s, "reap_world_actors{world=\"World1\"}", HARNESS_EQ, 2 + 2 + 9, 10.0);

    assert_int_equal(harness_run("reap-client", args_a, 30.0, &a), 0);
    assert_int_equal(harness_console(&s, "obj gc", reply, sizeof reply), 200);

    assert_true(harness_server_metric(&s, "reap_world_actors{world=\"World0\"}") == 2);
    assert_true(harness_server_metric(&s, "reap_world_actor_slots{world=\"World0\"}") == 2);
    assert_true(harness_server_metric(&s, "reap_world_actors{world=\"World1\"}") == 13);
    harness_proc_free(&a);
    harness_proc_free(&b);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_players_leaving_gracefully_or_abruptly_leave_nothing_behind),
        cmocka_unit_test(test_players_in_two_worlds_are_cleaned_up_per_world),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
