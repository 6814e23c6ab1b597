/*
 * test_server_lifecycle.c - the binaries as a user meets them: start, say where they listen,
 * refuse bad flags clearly, serve a client, stop cleanly on SIGTERM.
 */
#include "harness.h"

static void test_the_server_says_where_it_listens_and_reports_healthy(void **state)
{
    harness_server s;
    char body[256];

    (void)state;
    harness_server_start(&s, NULL);

    assert_true(s.port > 0);
    assert_int_equal(harness_http(s.admin_port, "GET", "/healthz", NULL, body, sizeof body), 200);
    assert_string_equal(body, "ok\n");
    assert_int_equal(harness_http(s.admin_port, "GET", "/nope", NULL, body, sizeof body), 404);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_a_client_joins_spawns_and_leaves_and_exits_zero(void **state)
{
    harness_server s;
    harness_proc c;
    const char *args[] = { "--server", NULL, "--spawn", "10", NULL };

    (void)state;
    harness_server_start(&s, NULL);
    args[1] = s.endpoint;

    int rc = harness_run("reap-client", args, 30.0, &c);

    assert_int_equal(rc, 0);
    assert_non_null(strstr(c.out, "spawned 10 props: 10 acknowledged, 10 replicated"));
    assert_non_null(strstr(c.out, "left gracefully"));
    assert_true(harness_proc_wait_for_text(&s.proc, "left World0 (goodbye)", 10.0));
    harness_proc_free(&c);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_sigterm_says_goodbye_to_clients_purges_and_exits_zero(void **state)
{
    harness_server s;
    harness_proc c;
    const char *args[] = { "--server", NULL, "--spawn", "5", "--hold", "60", NULL };

    (void)state;
    harness_server_start(&s, NULL);
    args[1] = s.endpoint;
    harness_proc_start(&c, "reap-client", args);
    harness_wait_metric(&s, "reap_players_connected", HARNESS_EQ, 1, 10.0);

    int rc = harness_server_stop(&s);

    assert_int_equal(rc, 0);
    assert_non_null(strstr(s.proc.out, "said goodbye to 1 client"));
    assert_non_null(strstr(s.proc.out, "final full purge"));
    assert_true(harness_proc_wait(&c, 10.0));
    assert_non_null(strstr(c.out, "server said goodbye"));
    harness_proc_free(&c);
    harness_server_free(&s);
}

static void test_a_bad_server_flag_exits_2_naming_the_flag(void **state)
{
    harness_proc p;
    const char *args[] = { "--tick-hz", "fast", NULL };

    (void)state;
    int rc = harness_run("reap-server", args, 10.0, &p);

    assert_int_equal(rc, 2);
    assert_non_null(strstr(p.out, "--tick-hz"));
    assert_non_null(strstr(p.out, "'fast'"));
    harness_proc_free(&p);
}

static void test_a_bad_cvar_on_the_command_line_exits_2_naming_it_and_its_range(void **state)
{
    harness_proc p;
    const char *args[] = { "--cvar", "gc.TimeBetweenPurgingPendingKillObjects=-1", NULL };

    (void)state;
    int rc = harness_run("reap-server", args, 10.0, &p);

    assert_int_equal(rc, 2);
    assert_non_null(strstr(p.out, "gc.TimeBetweenPurgingPendingKillObjects"));
    assert_non_null(strstr(p.out, "[0, 86400]"));
    harness_proc_free(&p);
}

static void test_help_and_version_exit_zero_on_both_binaries(void **state)
{
    const char *help[] = { "--help", NULL };
    const char *version[] = { "--version", NULL };
    harness_proc p;

    (void)state;
    assert_int_equal(harness_run("reap-server", help, 10.0, &p), 0);
    assert_non_null(strstr(p.out, "--admin-port"));
    harness_proc_free(&p);
    assert_int_equal(harness_run("reap-server", version, 10.0, &p), 0);
    assert_non_null(strstr(p.out, "reap-server "));
    harness_proc_free(&p);
    assert_int_equal(harness_run("reap-client", help, 10.0, &p), 0);
    assert_non_null(strstr(p.out, "--disconnect"));
    harness_proc_free(&p);
    assert_int_equal(harness_run("reap-client", version, 10.0, &p), 0);
    assert_non_null(strstr(p.out, "reap-client "));
    harness_proc_free(&p);
}

static void test_a_client_with_no_server_fails_with_a_clear_message(void **state)
{
    harness_proc p;
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in sin;
    socklen_t len = sizeof sin;
    char endpoint[64];

    (void)state;
    /* A UDP port that is bound (so nobody else gets it) but never answers. */
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
    getsockname(fd, (struct sockaddr *)&sin, &len);
    snprintf(endpoint, sizeof endpoint, "127.0.0.1:%u", ntohs(sin.sin_port));
    const char *args[] = { "--server", endpoint, "--timeout", "1", NULL };

    int rc = harness_run("reap-client", args, 20.0, &p);

    assert_int_equal(rc, 1);
    assert_non_null(strstr(p.out, "no answer from"));
    assert_non_null(strstr(p.out, "is reap-server running"));
    harness_proc_free(&p);
    close(fd);
}

static void test_a_client_asking_for_a_missing_world_is_refused_by_name(void **state)
{
    harness_server s;
    harness_proc c;
    const char *args[] = { "--server", NULL, "--world", "World9", NULL };

    (void)state;
    harness_server_start(&s, NULL);
    args[1] = s.endpoint;

    int rc = harness_run("reap-client", args, 30.0, &c);

    assert_int_equal(rc, 1);
    assert_non_null(strstr(c.out, "server refused: no world named 'World9'"));
    harness_proc_free(&c);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_server_says_where_it_listens_and_reports_healthy),
        cmocka_unit_test(test_a_client_joins_spawns_and_leaves_and_exits_zero),
        cmocka_unit_test(test_sigterm_says_goodbye_to_clients_purges_and_exits_zero),
        cmocka_unit_test(test_a_bad_server_flag_exits_2_naming_the_flag),
        cmocka_unit_test(test_a_bad_cvar_on_the_command_line_exits_2_naming_it_and_its_range),
        cmocka_unit_test(test_help_and_version_exit_zero_on_both_binaries),
        cmocka_unit_test(test_a_client_with_no_server_fails_with_a_clear_message),
        cmocka_unit_test(test_a_client_asking_for_a_missing_world_is_refused_by_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
