/*
 * test_metrics.c - /metrics is valid Prometheus text that Prometheus' own linter accepts, and
 * carries every metric of the outward contract.
 */
#include "harness.h"

static const char *const contract[] = {
    "reap_gc_objects", "reap_gc_objects_disregarded", "reap_gc_clusters",
    "reap_gc_collections_total", "reap_gc_objects_destroyed_total", "reap_gc_interval_seconds",
    "reap_gc_time_since_last_purge_seconds", "reap_gc_mark_seconds", "reap_gc_frame_work_seconds",
    "reap_players_connected", "reap_world_actors", "reap_world_actor_slots", "reap_tick_seconds",
    "reap_frame", "reap_net_bad_messages_total",
};

static char page[HARNESS_HTTP_MAX];

/* A server that has run a client and a collection, so every histogram has samples. */
static void busy_server(harness_server *s)
{
    const char *const server_args[] = {
        "--cvar", "gc.TimeBetweenPurgingPendingKillObjects=0.2", "--worlds", "2", NULL };
    harness_proc c;
    char reply[1024];

    harness_server_start(s, server_args);
    const char *args[] = { "--server", s->endpoint, "--spawn", "5", "--hold", "0.5", NULL };
    assert_int_equal(harness_run("reap-client", args, 30.0, &c), 0);
    harness_proc_free(&c);
    harness_wait_metric(s, "reap_gc_mark_seconds_count", HARNESS_GE, 1, 10.0);
    assert_int_equal(harness_console(s, "obj gc", reply, sizeof reply), 200);
}

static void test_metrics_pass_promtool_check_metrics(void **state)
{
    harness_server s;
    harness_proc lint;
    char path[] = "/tmp/reap-metrics-XXXXXX";
    const char *args[] = { "check", "metrics", NULL };
    int fd;

    (void)state;
    busy_server(&s);
    assert_int_equal(harness_http(s.admin_port, "GET", "/metrics", NULL, page, sizeof page), 200);
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, page, strlen(page)), (ssize_t)strlen(page));
    close(fd);

    harness_proc_start_cmd(&lint, "promtool", args, path);
    assert_true(harness_proc_wait(&lint, 30.0));
    unlink(path);

    if (lint.status == 127)
        fail_msg("promtool not found: deploy/install-deps.sh installs Debian's prometheus");
    if (lint.status != 0 || lint.len != 0)
        fail_msg("promtool check metrics failed (%d):\n%s", lint.status, lint.out);
    harness_proc_free(&lint);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_every_contract_metric_is_present_with_help_and_type(void **state)
{
    harness_server s;

    (void)state;
    busy_server(&s);
    assert_int_equal(harness_http(s.admin_port, "GET", "/metrics", NULL, page, sizeof page), 200);

    for (size_t i = 0; i < sizeof contract / sizeof contract[0]; i++) {
        char help[128], type[128];
        snprintf(help, sizeof help, "# HELP %s ", contract[i]);
        snprintf(type, sizeof type, "# TYPE %s ", contract[i]);
        if (strstr(page, help) == NULL || strstr(page, type) == NULL)
            fail_msg("metric %s lacks HELP or TYPE", contract[i]);
    }
    assert_non_null(strstr(page, "reap_gc_collections_total{kind=\"full\"} "));
    assert_non_null(strstr(page, "reap_gc_collections_total{kind=\"incremental\"} "));
    assert_non_null(strstr(page, "reap_world_actors{world=\"World1\"} "));
    assert_true(harness_metric(page, "reap_gc_objects_destroyed_total") > 0);
    assert_true(harness_metric(page, "reap_gc_objects_disregarded") > 0);
    assert_true(harness_metric(page, "reap_tick_seconds_count") > 0);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}


static void test_operator_series_describe_the_process_and_count_frames(void **state)
{
    const char *const series[] = { "reap_frames_total", "reap_players_max",
                                   "process_resident_memory_bytes", "process_cpu_seconds_total",
                                   "process_start_time_seconds" };
    harness_server s;
    double frames;

    (void)state;
    harness_server_start(&s, NULL);
    assert_int_equal(harness_http(s.admin_port, "GET", "/metrics", NULL, page, sizeof page), 200);

    for (size_t i = 0; i < sizeof series / sizeof series[0]; i++) {
        char help[128];
        snprintf(help, sizeof help, "# HELP %s ", series[i]);
        if (strstr(page, help) == NULL)
            fail_msg("metric %s missing", series[i]);
    }
    assert_non_null(strstr(page, "# TYPE reap_frames_total counter"));
    assert_non_null(strstr(page, "# HELP reap_frame Deprecated"));
    assert_true(harness_metric(page, "reap_players_max") == 64);
    assert_true(harness_metric(page, "process_resident_memory_bytes") > 0);
    assert_true(harness_metric(page, "process_start_time_seconds") > 1e9);
    frames = harness_metric(page, "reap_frames_total");
    harness_wait_metric(&s, "reap_frames_total", HARNESS_GE, frames + 1, 5.0);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_metrics_pass_promtool_check_metrics),
        cmocka_unit_test(test_every_contract_metric_is_present_with_help_and_type),
        cmocka_unit_test(test_operator_series_describe_the_process_and_count_frames),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
