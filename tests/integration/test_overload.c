/*
 * test_overload.c - a real server under load it cannot take (README "Admission control" and
 * "Admin endpoint"): past its frame budget (faked with engine.TestFrameCostMs) a new player's
 * Hello is answered ERROR_CODE_BUSY with Error.retry_after_ms and the connection closes, the
 * players already in stay, the far update bands stretch, and once the load is gone new players
 * are welcome again; /metrics and /stats.json are rendered at most once per
 * admin.MetricsCacheSeconds however many requests come, and anew after it or after a console
 * command.
 */
#include "wire_test.h"

static void console(const harness_server *s, const char *command)
{
    char out[512];

    if (harness_console(s, command, out, sizeof out) != 200)
        fail_msg("console '%s' failed: %s", command, out);
}

/* Polls a metric as harness_wait_metric does, servicing the peers meanwhile so that their
 * connections stay alive. */
static void wait_metric(harness_server *s, wire_peer *const *peers, int n, const char *series,
                        double want, double timeout)
{
    double deadline = harness_now() + timeout;
    double v;

    while ((v = harness_server_metric(s, series)) != want) {
        if (harness_now() >= deadline)
            fail_msg("%s stayed at %g (wanted %g) for %g s; server printed:\n%s", series, v,
                     want, timeout, s->proc.out);
        wire_peers_run(peers, n, 0.05);
    }
}

static void test_a_hello_is_refused_busy_past_the_frame_budget_and_welcome_after(void **state)
{
    const char *server_args[] = { "--cvar", "net.Admission.WindowSeconds=0.5", "--cvar",
                                  "net.Admission.RetryAfterMs=1500", "--cvar",
                                  "admin.MetricsCacheSeconds=0", NULL };
    harness_server s;
    wire_peer in, busy, later;
    wire_peer *peers[] = { &in };

    (void)state;
    harness_server_start(&s, server_args);
    wire_test_hello(&in, &s, "in");
    assert_true(in.welcomed);

    /* Given frames that take longer than the 33 ms budget... */
    console(&s, "set engine.TestFrameCostMs 45");
    wait_metric(&s, peers, 1, "reap_net_admission_refusing", 1, 10.0);
    assert_true(harness_proc_wait_for_text(&s.proc, "admission: refusing new players", 5.0));
    assert_true(harness_server_metric(&s, "reap_net_admission_load") >= 0.9);
    assert_true(harness_server_metric(&s, "reap_net_admission_stretched_bands") >= 1);

    /* ...a new player is told busy, when to come back, and disconnected... */
    wire_test_hello(&busy, &s, "busy");
    assert_false(busy.welcomed);
    assert_int_equal(busy.first_error.code, REAP__ERROR_CODE__ERROR_CODE_BUSY);
    assert_true(busy.first_error.disconnect);
    /* net.Admission.RetryAfterMs to twice that, spread at random. */
    assert_in_range(busy.first_error.retry_after_ms, 1500, 3000);
    assert_int_equal(busy.first_error.request_seq, 1);
    assert_true(WIRE_PEER_UNTIL(&busy, busy.disconnected, 5.0));
    assert_true(harness_server_metric(&s, "reap_net_refused_joins_total{reason=\"busy\"}") == 1);
    assert_true(harness_server_metric(&s, "reap_net_refused_joins_total{reason=\"full\"}") == 0);
    assert_true(harness_server_metric(&s, "reap_net_bad_messages_total") == 0);

    /* ...while the player already in stays and is answered. */
    assert_true(wire_peer_ping(&in, 7, 42));
    assert_true(WIRE_PEER_UNTIL(&in, in.pongs == 1, 5.0));
    assert_false(in.disconnected);
    assert_true(harness_server_metric(&s, "reap_players_connected") == 1);

    /* When the load is gone, new players are welcome again. */
    console(&s, "set engine.TestFrameCostMs 0");
    wait_metric(&s, peers, 1, "reap_net_admission_refusing", 0, 10.0);
    assert_true(harness_proc_wait_for_text(&s.proc, "admission: admitting new players again",
                                           5.0));
    wire_test_hello(&later, &s, "later");
    assert_true(later.welcomed);
    assert_int_equal(later.errors, 0);
    assert_true(harness_server_metric(&s, "reap_players_connected") == 2);
    assert_true(harness_server_metric(&s, "reap_net_refused_joins_total{reason=\"busy\"}") == 1);

    wire_peer_close(&busy);
    wire_peer_close(&later);
    wire_peer_close(&in);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_with_admission_control_off_a_loaded_server_admits(void **state)
{
    const char *server_args[] = { "--cvar", "net.AdmissionControl=0", "--cvar",
                                  "net.Admission.WindowSeconds=0.5", "--cvar",
                                  "engine.TestFrameCostMs=45", "--cvar",
                                  "admin.MetricsCacheSeconds=0", NULL };
    harness_server s;
    wire_peer p;

    (void)state;
    harness_server_start(&s, server_args);
    /* More than a window of frames over the budget. */
    harness_wait_metric(&s, "reap_frames_total", HARNESS_GE, 30, 10.0);

    wire_test_hello(&p, &s, "p");

    assert_true(p.welcomed);
    assert_true(harness_server_metric(&s, "reap_net_admission_refusing") == 0);
    assert_true(harness_server_metric(&s, "reap_net_refused_joins_total{reason=\"busy\"}") == 0);
    wire_peer_close(&p);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

/* The value of series in a page, or -1. */
static double page_metric(const char *page, const char *series)
{
    const char *at = strstr(page, series);

    return at != NULL ? strtod(at + strlen(series), NULL) : -1;
}

static void test_requests_within_the_cache_interval_are_served_one_render(void **state)
{
    const char *server_args[] = { "--cvar", "admin.MetricsCacheSeconds=3600", NULL };
    static char first[HARNESS_HTTP_MAX], page[HARNESS_HTTP_MAX];
    harness_server s;

    (void)state;
    harness_server_start(&s, server_args);

    /* Given a copy rendered once... */
    assert_int_equal(harness_http(s.admin_port, "GET", "/metrics", NULL, first, sizeof first),
                     200);
    assert_true(page_metric(first, "reap_admin_page_renders_total{page=\"metrics\"} ") == 1);
    /* ...fifty more requests get that very copy, and twenty of /stats.json one render. */
    for (int i = 0; i < 50; i++) {
        assert_int_equal(harness_http(s.admin_port, "GET", "/metrics", NULL, page, sizeof page),
                         200);
        assert_string_equal(page, first);
    }
    for (int i = 0; i < 20; i++)
        assert_int_equal(harness_http(s.admin_port, "GET", "/stats.json", NULL, page,
                                      sizeof page), 200);

    /* With the cache off the next request renders: the second render of /metrics, and
     * /stats.json was rendered once for its twenty. */
    console(&s, "set admin.MetricsCacheSeconds 0");
    assert_true(harness_server_metric(&s, "reap_admin_page_renders_total{page=\"metrics\"}") ==
                2);
    assert_true(harness_server_metric(&s, "reap_admin_page_renders_total{page=\"stats.json\"}") ==
                1);
    assert_true(harness_server_metric(&s, "reap_admin_page_renders_total{page=\"metrics\"}") ==
                4);

    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_a_console_command_makes_the_next_request_render(void **state)
{
    const char *server_args[] = { "--cvar", "admin.MetricsCacheSeconds=3600", NULL };
    static char page[HARNESS_HTTP_MAX];
    harness_server s;

    (void)state;
    harness_server_start(&s, server_args);
    assert_int_equal(harness_http(s.admin_port, "GET", "/metrics", NULL, page, sizeof page), 200);
    assert_true(page_metric(page, "reap_admin_page_renders_total{page=\"metrics\"} ") == 1);

    console(&s, "obj gc");

    assert_int_equal(harness_http(s.admin_port, "GET", "/metrics", NULL, page, sizeof page), 200);
    assert_true(page_metric(page, "reap_admin_page_renders_total{page=\"metrics\"} ") == 2);
    assert_true(page_metric(page, "reap_gc_collections_total{kind=\"full\"} ") >= 1);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_the_copy_is_rendered_anew_after_the_interval(void **state)
{
    const char *server_args[] = { "--cvar", "admin.MetricsCacheSeconds=0.3", NULL };
    static char page[HARNESS_HTTP_MAX];
    harness_server s;
    double first_at, renders = 0, deadline;

    (void)state;
    harness_server_start(&s, server_args);
    first_at = harness_now();
    assert_int_equal(harness_http(s.admin_port, "GET", "/metrics", NULL, page, sizeof page), 200);
    assert_true(page_metric(page, "reap_admin_page_renders_total{page=\"metrics\"} ") == 1);

    deadline = first_at + 10.0;
    while (renders < 2 && harness_now() < deadline) {
        assert_int_equal(harness_http(s.admin_port, "GET", "/metrics", NULL, page, sizeof page),
                         200);
        renders = page_metric(page, "reap_admin_page_renders_total{page=\"metrics\"} ");
        harness_proc_pump(&s.proc, 20); /* the wait between polls, bounded by the deadline */
    }

    /* A second render came, and not before the interval. */
    assert_true(renders == 2);
    assert_true(harness_now() - first_at >= 0.3);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_hello_is_refused_busy_past_the_frame_budget_and_welcome_after),
        cmocka_unit_test(test_with_admission_control_off_a_loaded_server_admits),
        cmocka_unit_test(test_requests_within_the_cache_interval_are_served_one_render),
        cmocka_unit_test(test_a_console_command_makes_the_next_request_render),
        cmocka_unit_test(test_the_copy_is_rendered_anew_after_the_interval),
    };
    return cmocka_run_group_tests(tests, wire_test_group_setup, wire_test_group_teardown);
}
