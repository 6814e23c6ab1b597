/*
 * test_dashboard.c - the admin endpoint's live dashboard: the page, its data, and the page
 * drawn by a real browser (headless Chromium, when Debian's chromium is installed).
 *
 * The page checks itself: once it has drawn a sample with no script error it sets
 * data-selfcheck="ok" on its body, with how many points the objects chart has and how many
 * collections it marked; the browser test reads that from --dump-dom.
 */
#include "harness.h"

#include <limits.h>

static char page[HARNESS_HTTP_MAX];

/* A server with a few bots coming and going, then a full collection from the console, and
 * the dashboard's sample that shows it. */
static void churned_server(harness_server *s)
{
    char out_dir[600], reply[1024];
    harness_proc bots;
    double deadline;

    harness_server_start(s, NULL);
    snprintf(out_dir, sizeof out_dir, "%s/dashboard-churn", harness_build_dir());
    const char *args[] = { "--server", s->endpoint, "--bots", "3", "--duration", "2",
                           "--quiet", "--out", out_dir, NULL };
    assert_int_equal(harness_run("reap-client", args, 30.0, &bots), 0);
    harness_proc_free(&bots);
    assert_int_equal(harness_console(s, "obj gc", reply, sizeof reply), 200);

    deadline = harness_now() + 10.0;
    for (;;) {
        assert_int_equal(harness_http(s->admin_port, "GET", "/stats.json", NULL, page,
                                      sizeof page), 200);
        if (strstr(page, "\"seq\":") != NULL)
            break;
        if (harness_now() > deadline)
            fail_msg("no collection in /stats.json 10 s after obj gc:\n%.2000s", page);
        harness_proc_pump(&s->proc, 100); /* also the wait between polls */
    }
}

static void stop(harness_server *s)
{
    assert_int_equal(harness_server_stop(s), 0);
    harness_server_free(s);
}

static void test_the_admin_root_serves_a_self_contained_read_only_page(void **state)
{
    harness_server s;
    (void)state;
    harness_server_start(&s, NULL);

    int status = harness_http(s.admin_port, "GET", "/", NULL, page, sizeof page);

    assert_int_equal(status, 200);
    assert_non_null(strstr(page, "<title>reap - live GC dashboard</title>"));
    assert_non_null(strstr(page, "stats.json"));
    /* Nothing loaded from elsewhere (no CDN); the SVG namespace is a name, not a fetch. */
    assert_null(strstr(page, "src=\"http"));
    assert_null(strstr(page, "href=\"http"));
    assert_null(strstr(page, "url(http"));
    assert_null(strstr(page, "import "));
    assert_null(strstr(page, "console"));   /* read-only */
    stop(&s);
}

static void test_the_dashboard_uses_the_reports_colour_blind_safe_palette(void **state)
{
    harness_server s;
    (void)state;
    harness_server_start(&s, NULL);

    int status = harness_http(s.admin_port, "GET", "/", NULL, page, sizeof page);

    assert_int_equal(status, 200);
    /* Okabe-Ito, in the roles report.html gives them: p50 blue, p99 orange, max vermillion,
     * collections reddish purple; no red/green pair */
    assert_non_null(strstr(page, "const COLORS = [\"#0072B2\", \"#E69F00\", \"#D55E00\""));
    assert_non_null(strstr(page, "const GC_COLOR = \"#CC79A7\""));
    assert_null(strstr(page, "#d62728"));
    assert_null(strstr(page, "#2ca02c"));
    assert_non_null(strstr(page, "function niceStep("));
    stop(&s);
}

static void test_posting_to_the_dashboard_is_refused(void **state)
{
    harness_server s;
    (void)state;
    harness_server_start(&s, NULL);

    int root = harness_http(s.admin_port, "POST", "/", "x", page, sizeof page);
    int stats = harness_http(s.admin_port, "POST", "/stats.json", "x", page, sizeof page);

    assert_int_equal(root, 405);
    assert_int_equal(stats, 405);
    stop(&s);
}

static void test_stats_json_has_samples_and_the_collection_obj_gc_ran(void **state)
{
    harness_server s;
    (void)state;

    churned_server(&s);

    assert_non_null(strstr(page, "\"worlds\":[\"World0\"]"));
    assert_non_null(strstr(page, "\"objects\":["));
    assert_null(strstr(page, "\"objects\":[]"));
    assert_non_null(strstr(page, "\"mark_ms\":"));
    assert_non_null(strstr(page, "\"budget_ms\":33.3333"));
    stop(&s);
}

static void test_headless_chromium_draws_the_dashboard_without_errors(void **state)
{
    harness_server s;
    harness_proc dom, shot;
    char url[64], shot_flag[PATH_MAX + 32], dir[PATH_MAX];
    (void)state;

    churned_server(&s);
    snprintf(url, sizeof url, "http://127.0.0.1:%u/", s.admin_port);

    if (!harness_chromium(url, "--dump-dom", &dom)) {
        harness_proc_free(&dom);
        stop(&s);
        skip(); /* deploy/install-deps.sh installs Debian's chromium */
    }

    const char *body = strstr(dom.out, "<body ");
    if (body == NULL || strstr(body, "data-selfcheck=\"ok\"") == NULL)
        fail_msg("the page did not report ok; chromium printed:\n%.4000s", dom.out);
    assert_null(strstr(body, "data-object-points=\"0\""));
    assert_null(strstr(body, "data-collections=\"0\""));
    assert_non_null(realpath(harness_build_dir(), dir));
    snprintf(shot_flag, sizeof shot_flag, "--screenshot=%s/dashboard.png", dir);
    assert_true(harness_chromium(url, shot_flag, &shot));
    assert_int_equal(shot.status, 0);
    harness_proc_free(&shot);
    harness_proc_free(&dom);
    stop(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_admin_root_serves_a_self_contained_read_only_page),
        cmocka_unit_test(test_posting_to_the_dashboard_is_refused),
        cmocka_unit_test(test_the_dashboard_uses_the_reports_colour_blind_safe_palette),
        cmocka_unit_test(test_stats_json_has_samples_and_the_collection_obj_gc_ran),
        cmocka_unit_test(test_headless_chromium_draws_the_dashboard_without_errors),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
