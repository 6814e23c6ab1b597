/*
 * test_compare.c - `reap-client compare` on real runs: a run compared with itself is the same
 * everywhere and exits 0; a run against a server with a planted slowdown (a big persistent
 * world that every forced collection marks) names the worse figure and exits 99; the page
 * draws every chart in headless Chromium; bad arguments are usage errors.
 */
#include <limits.h>

#include "harness.h"
#include "test_load_files.h"

enum { EXIT_USAGE = 2, EXIT_GATE = 99 };

/* A short churn with --admin against a fresh server started with extra (NULL-terminated)
 * arguments; its report goes to dir. */
static void run_into(const char *dir, const char *const *extra)
{
    harness_server s;
    harness_proc run;
    char admin[64];
    int rc;

    harness_server_start(&s, extra);
    harness_wait_metric(&s, "reap_frame", HARNESS_GE, 2, 20.0);
    snprintf(admin, sizeof admin, "http://127.0.0.1:%u", s.admin_port);
    const char *args[] = { "--server", s.endpoint, "--admin", admin, "--bots", "3",
                           "--duration", "3", "--hold", "0.5", "--seed", "7", "--out", dir,
                           "--quiet", NULL };
    rc = harness_run("reap-client", args, 60.0, &run);
    if (rc != 0)
        fail_msg("the churn run exited %d:\n%s", rc, run.out);
    harness_proc_free(&run);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static const char *const collecting[] = { "--cvar", "gc.CollectGarbageEveryFrame=5", NULL };
static const char *const collecting_big[] = { "--cvar", "gc.CollectGarbageEveryFrame=5",
                                              "--cvar", "world.PersistentProps=200000", NULL };

static void test_a_run_compared_with_itself_is_the_same_everywhere_and_exits_0(void **state)
{
    char run_dir[] = "/tmp/reap-compare-XXXXXX", out_dir[] = "/tmp/reap-compare-XXXXXX";
    char path[600];
    harness_proc cmp;
    char *tsv, *html;

    (void)state;
    assert_non_null(mkdtemp(run_dir));
    assert_non_null(mkdtemp(out_dir));
    run_into(run_dir, collecting);
    snprintf(path, sizeof path, "%s/report.json", run_dir);

    const char *args[] = { "compare", run_dir, path, "--gate", "all", "--out", out_dir, NULL };
    int rc = harness_run("reap-client", args, 30.0, &cmp);

    if (rc != 0)
        fail_msg("a self-compare exited %d:\n%s", rc, cmp.out);
    assert_non_null(strstr(cmp.out, "verdicts: 0 better, "));
    assert_non_null(strstr(cmp.out, " same, 0 worse, "));
    assert_non_null(strstr(cmp.out, "server_gc_work_max"));
    snprintf(path, sizeof path, "%s/compare.tsv", out_dir);
    tsv = read_text_file(path);
    assert_non_null(tsv);
    assert_true(strncmp(tsv, "figure\tunit\tbase\t", 17) == 0);
    assert_null(strstr(tsv, "\tworse\t"));
    assert_null(strstr(tsv, "\tbetter\t"));
    assert_non_null(strstr(tsv, "join_p99\ts\t"));
    snprintf(path, sizeof path, "%s/compare.html", out_dir);
    html = read_text_file(path);
    assert_non_null(html);
    assert_non_null(strstr(html, "<svg class=\"chart\""));
    free(tsv);
    free(html);
    harness_proc_free(&cmp);
    remove_dir(run_dir);
    remove_dir(out_dir);
}

static void test_a_planted_slowdown_is_named_worse_and_fails_its_gate_with_99(void **state)
{
    char base[] = "/tmp/reap-compare-XXXXXX", slow[] = "/tmp/reap-compare-XXXXXX";
    char out_dir[] = "/tmp/reap-compare-XXXXXX";
    harness_proc cmp, ungated;

    (void)state;
    assert_non_null(mkdtemp(base));
    assert_non_null(mkdtemp(slow));
    assert_non_null(mkdtemp(out_dir));
    run_into(base, collecting);
    run_into(slow, collecting_big);

    const char *args[] = { "compare", base, slow, "--gate", "server_gc_work_max",
                           "--tolerance", "10%", "--out", out_dir, NULL };
    int rc = harness_run("reap-client", args, 30.0, &cmp);

    if (rc != EXIT_GATE)
        fail_msg("expected exit %d, got %d:\n%s", EXIT_GATE, rc, cmp.out);
    assert_non_null(strstr(cmp.out, "gate failed: server_gc_work_max is worse"));
    assert_non_null(strstr(cmp.out, "tolerance 10%"));

    const char *no_gate[] = { "compare", base, slow, "--quiet", "--out", out_dir, NULL };
    assert_int_equal(harness_run("reap-client", no_gate, 30.0, &ungated), 0);
    harness_proc_free(&ungated);
    harness_proc_free(&cmp);
    remove_dir(base);
    remove_dir(slow);
    remove_dir(out_dir);
}

static void test_headless_chromium_draws_every_chart_of_the_compare_page(void **state)
{
    char run_dir[] = "/tmp/reap-compare-XXXXXX", out_dir[PATH_MAX], url[PATH_MAX + 32];
    harness_proc cmp, dom;

    (void)state;
    assert_non_null(mkdtemp(run_dir));
    run_into(run_dir, collecting);
    assert_non_null(realpath(harness_build_dir(), out_dir));
    strncat(out_dir, "/compare-page", sizeof out_dir - strlen(out_dir) - 1);
    const char *args[] = { "compare", run_dir, run_dir, "--quiet", "--out", out_dir, NULL };
    assert_int_equal(harness_run("reap-client", args, 30.0, &cmp), 0);
    snprintf(url, sizeof url, "file://%s/compare.html", out_dir);

    if (!harness_chromium(url, "--dump-dom", &dom)) {
        harness_proc_free(&dom);
        harness_proc_free(&cmp);
        remove_dir(run_dir);
        skip(); /* deploy/install-deps.sh installs Debian's chromium */
    }

    const char *body = strstr(dom.out, "<body ");
    if (body == NULL || strstr(body, "data-charts=\"") == NULL)
        fail_msg("the page's script did not run; chromium printed:\n%.4000s", dom.out);
    unsigned charts = (unsigned)strtoul(strstr(body, "data-charts=\"") + 13, NULL, 10);
    const char *drawn_at = strstr(body, "data-charts-drawn=\"");
    assert_non_null(drawn_at);
    unsigned drawn = (unsigned)strtoul(drawn_at + 19, NULL, 10);
    assert_true(charts >= 10); /* the latencies with samples and five timelines */
    assert_int_equal(drawn, charts);
    harness_proc_free(&dom);
    harness_proc_free(&cmp);
    remove_dir(run_dir);
}

static void test_compare_refuses_a_missing_report_an_unknown_gate_and_a_bad_tolerance(
    void **state)
{
    char dir[] = "/tmp/reap-compare-XXXXXX";
    harness_proc p;

    (void)state;
    assert_non_null(mkdtemp(dir));
    const char *missing[] = { "compare", dir, dir, "--out", dir, NULL };
    assert_int_equal(harness_run("reap-client", missing, 10.0, &p), 1);
    assert_non_null(strstr(p.out, "report.json"));
    harness_proc_free(&p);

    const char *gate[] = { "compare", dir, dir, "--gate", "join_p98", NULL };
    assert_int_equal(harness_run("reap-client", gate, 10.0, &p), EXIT_USAGE);
    assert_non_null(strstr(p.out, "--gate 'join_p98': no such figure"));
    harness_proc_free(&p);

    const char *tol[] = { "compare", dir, dir, "--tolerance", "much", NULL };
    assert_int_equal(harness_run("reap-client", tol, 10.0, &p), EXIT_USAGE);
    assert_non_null(strstr(p.out, "--tolerance 'much'"));
    harness_proc_free(&p);

    const char *one[] = { "compare", dir, NULL };
    assert_int_equal(harness_run("reap-client", one, 10.0, &p), EXIT_USAGE);
    assert_non_null(strstr(p.out, "expected BASE NEW"));
    harness_proc_free(&p);
    remove_dir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_run_compared_with_itself_is_the_same_everywhere_and_exits_0),
        cmocka_unit_test(test_a_planted_slowdown_is_named_worse_and_fails_its_gate_with_99),
        cmocka_unit_test(test_headless_chromium_draws_every_chart_of_the_compare_page),
        cmocka_unit_test(test_compare_refuses_a_missing_report_an_unknown_gate_and_a_bad_tolerance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
