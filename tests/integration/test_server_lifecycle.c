/*
 * test_server_lifecycle.c - the binaries as a user meets them: start, say where they listen,
 * refuse bad flags clearly, serve a client, stop cleanly on SIGTERM.
 */
#include "harness.h"

#include <enet/enet.h>

#include "reap_msg.h"

#include <sys/stat.h>

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

/* reap paces every connection itself; ENet's round-trip throttle would shrink a busy peer's
 * window and drop its updates at random. The server configures each peer's throttle never to
 * fall, and ENet tells the client the same (THROTTLE_CONFIGURE): the client's peer shows it. */
static void test_the_server_turns_enets_packet_throttle_off_for_each_peer(void **state)
{
    harness_server s;
    ENetAddress addr;
    ENetEvent ev;

    (void)state;
    harness_server_start(&s, NULL);
    assert_int_equal(enet_initialize(), 0);
    ENetHost *host = enet_host_create(NULL, 1, MSG_CHANNEL_COUNT, 0, 0);
    assert_non_null(host);
    enet_address_set_host_ip(&addr, "127.0.0.1");
    addr.port = (enet_uint16)s.port;
    ENetPeer *peer = enet_host_connect(host, &addr, MSG_CHANNEL_COUNT, 0);
    assert_non_null(peer);
    assert_int_equal(peer->packetThrottleDeceleration, ENET_PEER_PACKET_THROTTLE_DECELERATION);

    double deadline = harness_now() + 10.0;
    while (harness_now() < deadline && peer->packetThrottleDeceleration != 0)
        enet_host_service(host, &ev, 20);

    assert_int_equal(peer->state, ENET_PEER_STATE_CONNECTED);
    assert_int_equal(peer->packetThrottleDeceleration, 0);
    assert_int_equal(peer->packetThrottleAcceleration, ENET_PEER_PACKET_THROTTLE_SCALE);
    enet_peer_reset(peer);
    enet_host_destroy(host);
    enet_deinitialize();
    assert_int_equal(harness_server_stop(&s), 0);
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


static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    fclose(f);
}

/* Starts a server on a config file (at path, a mkstemp template) holding text. */
static void start_with_config(harness_server *s, char *path, const char *text)
{
    int fd = mkstemp(path);

    assert_true(fd >= 0);
    close(fd);
    write_file(path, text);
    const char *args[] = { "--config", path, NULL };
    harness_server_start(s, args);
}

static void test_sighup_rereads_the_config_files_cvars_and_keeps_serving(void **state)
{
    char path[] = "/tmp/reap-test-hup-XXXXXX";
    char reply[1024];
    harness_server s;

    (void)state;
    start_with_config(&s, path,
                      "[ConsoleVariables]\ngc.TimeBetweenPurgingPendingKillObjects = 60\n");
    write_file(path, "[ConsoleVariables]\ngc.TimeBetweenPurgingPendingKillObjects = 7\n");

    kill(s.proc.pid, SIGHUP);

    assert_true(harness_proc_wait_for_text(&s.proc, "SIGHUP: re-read", 10.0));
    assert_int_equal(harness_console(&s, "get gc.TimeBetweenPurgingPendingKillObjects", reply,
                                     sizeof reply), 200);
    assert_non_null(strstr(reply, "= 7 "));
    harness_wait_metric(&s, "reap_gc_interval_seconds", HARNESS_EQ, 70, 5.0); /* idle: x10 */
    unlink(path);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_sighup_with_a_broken_config_keeps_the_current_values(void **state)
{
    char path[] = "/tmp/reap-test-hup-XXXXXX";
    char reply[1024];
    harness_server s;

    (void)state;
    start_with_config(&s, path, "[ConsoleVariables]\ngc.MinGCClusterSize = 6\n");
    write_file(path, "[ConsoleVariables]\ngc.MinGCClusterSize = many\n");

    kill(s.proc.pid, SIGHUP);

    assert_true(harness_proc_wait_for_text(&s.proc, "config not reloaded", 10.0));
    assert_int_equal(harness_console(&s, "get gc.MinGCClusterSize", reply, sizeof reply), 200);
    assert_non_null(strstr(reply, "= 6 "));
    unlink(path);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_sigusr1_and_sigusr2_neither_stop_the_server_nor_drop_players(void **state)
{
    harness_server s;
    harness_proc c;
    const char *args[] = { "--server", NULL, "--hold", "60", NULL };

    (void)state;
    harness_server_start(&s, NULL);
    args[1] = s.endpoint;
    harness_proc_start(&c, "reap-client", args);
    harness_wait_metric(&s, "reap_players_connected", HARNESS_EQ, 1, 10.0);

    kill(s.proc.pid, SIGUSR1);
    kill(s.proc.pid, SIGUSR2);

    assert_true(harness_proc_wait_for_text(&s.proc, "status: frame", 10.0));
    assert_true(harness_proc_wait_for_text(&s.proc, "SIGUSR2: ignored", 10.0));
    assert_false(s.proc.exited);
    assert_true(harness_server_metric(&s, "reap_players_connected") == 1);
    harness_proc_free(&c);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_a_fifo_as_config_exits_2_without_waiting_for_a_writer(void **state)
{
    char path[64];
    harness_proc p;

    (void)state;
    snprintf(path, sizeof path, "/tmp/reap-test-fifo-%d", (int)getpid());
    unlink(path);
    assert_int_equal(mkfifo(path, 0600), 0);
    const char *args[] = { "--config", path, NULL };

    int rc = harness_run("reap-server", args, 5.0, &p);
    unlink(path);

    assert_int_equal(rc, 2);
    assert_non_null(strstr(p.out, path));
    assert_non_null(strstr(p.out, "not a regular file"));
    harness_proc_free(&p);
}

static void test_too_many_collector_workers_exits_2_naming_the_cvar(void **state)
{
    harness_proc p;
    const char *args[] = { "--cvar", "gc.NumWorkerThreads=65", NULL };

    (void)state;
    int rc = harness_run("reap-server", args, 10.0, &p);

    assert_int_equal(rc, 2);
    assert_non_null(strstr(p.out, "gc.NumWorkerThreads"));
    assert_non_null(strstr(p.out, "[0, 64]"));
    harness_proc_free(&p);
}


static void test_json_logs_are_one_object_per_line(void **state)
{
    const char *args[] = { "--log-format", "json", NULL };
    harness_server s;
    int lines = 0;

    (void)state;
    harness_server_start(&s, args);
    assert_int_equal(harness_server_stop(&s), 0);

    for (char *line = s.proc.out; *line != '\0'; lines++) {
        char *end = strchr(line, '\n');
        assert_non_null(end);
        if (line[0] != '{' || end[-1] != '}' || strstr(line, "\"level\":") == NULL)
            fail_msg("not a JSON log line: %.*s", (int)(end - line), line);
        line = end + 1;
    }
    assert_true(lines >= 4);
    assert_non_null(strstr(s.proc.out, "\"message\":\"final full purge"));
    harness_server_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_server_says_where_it_listens_and_reports_healthy),
        cmocka_unit_test(test_a_client_joins_spawns_and_leaves_and_exits_zero),
        cmocka_unit_test(test_sigterm_says_goodbye_to_clients_purges_and_exits_zero),
        cmocka_unit_test(test_the_server_turns_enets_packet_throttle_off_for_each_peer),
        cmocka_unit_test(test_a_bad_server_flag_exits_2_naming_the_flag),
        cmocka_unit_test(test_a_bad_cvar_on_the_command_line_exits_2_naming_it_and_its_range),
        cmocka_unit_test(test_help_and_version_exit_zero_on_both_binaries),
        cmocka_unit_test(test_a_client_with_no_server_fails_with_a_clear_message),
        cmocka_unit_test(test_a_client_asking_for_a_missing_world_is_refused_by_name),
        cmocka_unit_test(test_sighup_rereads_the_config_files_cvars_and_keeps_serving),
        cmocka_unit_test(test_sighup_with_a_broken_config_keeps_the_current_values),
        cmocka_unit_test(test_sigusr1_and_sigusr2_neither_stop_the_server_nor_drop_players),
        cmocka_unit_test(test_a_fifo_as_config_exits_2_without_waiting_for_a_writer),
        cmocka_unit_test(test_too_many_collector_workers_exits_2_naming_the_cvar),
        cmocka_unit_test(test_json_logs_are_one_object_per_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
