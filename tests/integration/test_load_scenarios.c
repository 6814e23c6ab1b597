/*
 * test_load_scenarios.c - the load tester as CI uses it, against a real server on loopback:
 * the shipped smoke scenario passes its thresholds and exits 0 with a report; a threshold made
 * to fail exits with the documented code (99); two shards merge into one report whose counts
 * are their sums; the leak verdict of a clean run finds nothing left behind; and a full
 * server's refusals are a figure of their own, not errors.
 */
#include <sys/stat.h>

#include "harness.h"
#include "test_load_files.h"

enum { EXIT_THRESHOLD = 99 };

/* The text of DIR/NAME; fails the test if it is missing. */
static char *report_file(const char *dir, const char *name, const harness_proc *client)
{
    char path[256];
    char *text;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    text = read_text_file(path);
    if (text == NULL)
        fail_msg("no %s; reap-client printed:\n%s", path, client->out);
    return text;
}

static void start(harness_server *s)
{
    const char *const server_args[] = { "--cvar", "net.ConnectionTimeout=1", NULL };

    harness_server_start(s, server_args);
    harness_wait_metric(s, "reap_frame", HARNESS_GE, 2, 10.0);
}

static void test_the_smoke_scenario_passes_its_thresholds_and_writes_a_report(void **state)
{
    char out_dir[] = "/tmp/reap-load-smoke-XXXXXX";
    char admin[64];
    harness_server s;
    harness_proc run;
    char *json, *html;

    (void)state;
    assert_non_null(mkdtemp(out_dir));
    start(&s);
    snprintf(admin, sizeof admin, "http://127.0.0.1:%u", s.admin_port);
    const char *args[] = { "--server", s.endpoint, "--admin", admin, "--scenario",
                           "deploy/scenarios/smoke.ini", "--seed", "3", "--out", out_dir, NULL };

    int rc = run_client_beside(&s, args, 60.0, &run);

    if (rc != 0) {
        print_message("%s\n", strstr(run.out, "churn done") ? strstr(run.out, "churn done") :
                      run.out);
        fail_msg("the smoke scenario exited %d", rc);
    }
    assert_non_null(strstr(run.out, "thresholds:"));
    assert_null(strstr(run.out, "FAIL"));
    json = report_file(out_dir, "report.json", &run);
    assert_int_equal(json_int(json, "schema_version"), 1);
    assert_non_null(strstr(json, "\"scenario\": \"smoke\""));
    assert_non_null(strstr(json, "\"run_id\": \""));
    assert_non_null(strstr(json, "\"start_time\": \""));
    assert_int_equal(json_int(json, "seed"), 3);
    assert_true(json_int(json, "joins") >= 20);
    assert_int_equal(json_int(json, "errors"), 0);
    assert_non_null(strstr(json, "\"sampled\": true"));        /* --admin was read */
    html = report_file(out_dir, "report.html", &run);
    assert_non_null(strstr(html, "<svg class=\"chart\""));
    assert_non_null(strstr(html, "<polyline class=\"series\""));
    free(json);
    free(html);
    harness_proc_free(&run);
    remove_dir(out_dir);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_a_failing_threshold_exits_with_the_documented_code(void **state)
{
    char out_dir[] = "/tmp/reap-load-fail-XXXXXX";
    harness_server s;
    harness_proc run;

    (void)state;
    assert_non_null(mkdtemp(out_dir));
    start(&s);
    const char *args[] = { "--server", s.endpoint, "--bots", "4", "--duration", "2",
                           "--hold", "0.5", "--threshold", "errors==0", "--threshold",
                           "joins<1", "--out", out_dir, "--quiet", NULL };

    int rc = harness_run("reap-client", args, 30.0, &run);

    if (rc != EXIT_THRESHOLD)
        fail_msg("expected exit %d, got %d:\n%s", EXIT_THRESHOLD, rc, run.out);
    assert_non_null(strstr(run.out, "joins<1"));
    assert_non_null(strstr(run.out, "FAIL"));
    assert_non_null(strstr(run.out, "errors==0                    pass"));
    harness_proc_free(&run);
    remove_dir(out_dir);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_two_shards_merge_into_one_report_of_their_sums(void **state)
{
    char dir_a[] = "/tmp/reap-load-shard-XXXXXX", dir_b[] = "/tmp/reap-load-shard-XXXXXX";
    char dir_m[] = "/tmp/reap-load-merged-XXXXXX";
    harness_server s;
    harness_proc a, b, m;
    char *ja, *jb, *jm;

    (void)state;
    assert_non_null(mkdtemp(dir_a));
    assert_non_null(mkdtemp(dir_b));
    assert_non_null(mkdtemp(dir_m));
    start(&s);
    const char *args_a[] = { "--server", s.endpoint, "--bots", "6", "--duration", "3",
                             "--hold", "0.5", "--seed", "9", "--shard", "0/2", "--out", dir_a,
                             "--quiet", NULL };
    const char *args_b[] = { "--server", s.endpoint, "--bots", "6", "--duration", "3",
                             "--hold", "0.5", "--seed", "9", "--shard", "1/2", "--out", dir_b,
                             "--quiet", NULL };
    harness_proc_start(&a, "reap-client", args_a);
    harness_proc_start(&b, "reap-client", args_b);
    assert_true(harness_proc_wait(&a, 30.0));
    assert_true(harness_proc_wait(&b, 30.0));
    if (a.status != 0 || b.status != 0)
        fail_msg("a shard failed:\n%s\n%s", a.out, b.out);

    const char *merge[] = { "merge", dir_a, dir_b, "--out", dir_m, "--threshold", "errors==0",
                            NULL };
    int rc = harness_run("reap-client", merge, 30.0, &m);

    if (rc != 0)
        fail_msg("merge exited %d:\n%s", rc, m.out);
    ja = report_file(dir_a, "report.json", &a);
    jb = report_file(dir_b, "report.json", &b);
    jm = report_file(dir_m, "report.json", &m);
    assert_int_equal(json_int(ja, "bots"), 3);              /* every other bot each */
    assert_int_equal(json_int(jm, "shards"), 2);
    assert_int_equal(json_int(jm, "bots"), 6);
    assert_int_equal(json_int(jm, "joins"), json_int(ja, "joins") + json_int(jb, "joins"));
    assert_int_equal(json_int(jm, "leaves"), json_int(ja, "leaves") + json_int(jb, "leaves"));
    assert_int_equal(json_int(jm, "seed"), 9);
    free(ja);
    free(jb);
    free(jm);
    harness_proc_free(&a);
    harness_proc_free(&b);
    harness_proc_free(&m);
    remove_dir(dir_a);
    remove_dir(dir_b);
    remove_dir(dir_m);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_a_clean_run_gets_a_leak_verdict_of_nothing_left_behind(void **state)
{
    char out_dir[] = "/tmp/reap-load-leaks-XXXXXX";
    char admin[64];
    harness_server s;
    harness_proc run;
    char *json;

    (void)state;
    assert_non_null(mkdtemp(out_dir));
    start(&s);
    snprintf(admin, sizeof admin, "http://127.0.0.1:%u", s.admin_port);
    const char *args[] = { "--server", s.endpoint, "--admin", admin, "--bots", "8",
                           "--duration", "3", "--hold", "0.5", "--disconnect", "mixed",
                           "--threshold", "leaked==0", "--out", out_dir, NULL };

    int rc = harness_run("reap-client", args, 60.0, &run);

    if (rc != 0)
        fail_msg("the run exited %d:\n%s", rc, run.out);
    assert_non_null(strstr(run.out, "leak verdict: no object outlived the run"));
    json = report_file(out_dir, "report.json", &run);
    assert_int_equal(json_int(json, "leaked"), 0);
    free(json);
    harness_proc_free(&run);
    remove_dir(out_dir);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

/* --procs 2: one command forks the two shards of the run and merges their reports into one
 * whose counts are exactly their sums. */
static void test_procs_runs_the_shards_and_merges_them_exactly(void **state)
{
    char out_dir[] = "/tmp/reap-load-procs-XXXXXX";
    char shard_dir[128];
    harness_server s;
    harness_proc run;
    char *jm, *j0, *j1;

    (void)state;
    assert_non_null(mkdtemp(out_dir));
    start(&s);
    const char *args[] = { "--server", s.endpoint, "--bots", "8", "--duration", "3",
                           "--hold", "0.5", "--seed", "12", "--procs", "2", "--threshold",
                           "errors==0", "--out", out_dir, NULL };

    int rc = run_client_beside(&s, args, 60.0, &run);

    if (rc != 0)
        fail_msg("--procs 2 exited %d:\n%s", rc, run.out);
    assert_non_null(strstr(run.out, "2 reports, 2 shards, 8 bots"));
    jm = report_file(out_dir, "report.json", &run);
    snprintf(shard_dir, sizeof shard_dir, "%s/shard-0", out_dir);
    j0 = report_file(shard_dir, "report.json", &run);
    snprintf(shard_dir, sizeof shard_dir, "%s/shard-1", out_dir);
    j1 = report_file(shard_dir, "report.json", &run);
    assert_int_equal(json_int(jm, "shards"), 2);
    assert_int_equal(json_int(j0, "bots"), 4);
    assert_int_equal(json_int(jm, "joins"), json_int(j0, "joins") + json_int(j1, "joins"));
    assert_int_equal(json_int(jm, "checks"), json_int(j0, "checks") + json_int(j1, "checks"));
    assert_true(json_int(jm, "joins") >= 8);
    assert_int_equal(json_int(j0, "seed"), 12);
    assert_int_equal(json_int(j1, "seed"), 12);
    free(jm);
    free(j0);
    free(j1);
    harness_proc_free(&run);
    snprintf(shard_dir, sizeof shard_dir, "%s/shard-0", out_dir);
    remove_dir(shard_dir);
    snprintf(shard_dir, sizeof shard_dir, "%s/shard-1", out_dir);
    remove_dir(shard_dir);
    remove_dir(out_dir);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

/* A full server answering "server full" works as designed: the run counts refusals apart
 * from errors, in the summary, the report and the timeline, and a threshold can bound them. */
static void test_a_full_servers_refusals_are_counted_apart_from_errors(void **state)
{
    const char *const server_args[] = { "--max-players", "3", "--cvar",
                                        "net.ConnectionTimeout=1", NULL };
    char out_dir[] = "/tmp/reap-load-full-XXXXXX";
    harness_server s;
    harness_proc run;
    char *json, *timeline;

    (void)state;
    assert_non_null(mkdtemp(out_dir));
    harness_server_start(&s, server_args);
    harness_wait_metric(&s, "reap_frame", HARNESS_GE, 2, 10.0);
    const char *args[] = { "--server", s.endpoint, "--bots", "9", "--duration", "3",
                           "--spawn", "2", "--hold", "0.3", "--seed", "4", "--threshold",
                           "errors==0", "--threshold", "refused>0", "--out", out_dir,
                           "--quiet", NULL };

    int rc = run_client_beside(&s, args, 30.0, &run);

    if (rc != 0)
        fail_msg("the run exited %d:\n%s", rc, run.out);
    assert_non_null(strstr(run.out, "errors==0                    pass"));
    assert_non_null(strstr(run.out, "times the server answered \"server full\""));
    json = report_file(out_dir, "report.json", &run);
    assert_true(json_int(json, "refused") > 0);
    assert_int_equal(json_int(json, "errors"), 0);
    timeline = report_file(out_dir, "churn.json", &run);
    assert_non_null(strstr(timeline, "\"refused\": "));
    assert_true(harness_server_metric(&s, "reap_net_refused_full_total") >=
                (double)json_int(json, "refused"));
    free(json);
    free(timeline);
    harness_proc_free(&run);
    remove_dir(out_dir);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_smoke_scenario_passes_its_thresholds_and_writes_a_report),
        cmocka_unit_test(test_a_failing_threshold_exits_with_the_documented_code),
        cmocka_unit_test(test_two_shards_merge_into_one_report_of_their_sums),
        cmocka_unit_test(test_a_clean_run_gets_a_leak_verdict_of_nothing_left_behind),
        cmocka_unit_test(test_a_full_servers_refusals_are_counted_apart_from_errors),
        cmocka_unit_test(test_procs_runs_the_shards_and_merges_them_exactly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
