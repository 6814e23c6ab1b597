/*
 * test_load_ci.c - the load tester's CI habits, against a real server on loopback: an
 * interrupted run exits 105 with its report written; --junit lists each threshold as a test
 * case; every run writes a per-second CSV; merge keeps the thresholds the shards were given; a
 * leak check that cannot run fails the run, and --admin-token lets it run against a server
 * that has a token.
 */
#include <signal.h>
#include <sys/stat.h>

#include "harness.h"
#include "test_load_files.h"

enum { EXIT_THRESHOLD = 99, EXIT_INTERRUPTED = 105 };

static char *out_file(const char *dir, const char *name, const harness_proc *client)
{
    char path[256];
    char *text;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    text = read_text_file(path);
    if (text == NULL)
        fail_msg("no %s; reap-client printed:\n%s", path, client->out);
    return text;
}

static void start(harness_server *s, const char *const *extra)
{
    harness_server_start(s, extra);
    harness_wait_metric(s, "reap_frame", HARNESS_GE, 2, 10.0);
}

static void stop(harness_server *s)
{
    assert_int_equal(harness_server_stop(s), 0);
    harness_server_free(s);
}

static void test_a_run_stopped_by_sigterm_exits_105_with_its_report_and_csv(void **state)
{
    char out_dir[] = "/tmp/reap-load-ci-XXXXXX";
    harness_server s;
    harness_proc run;
    char *json, *csv;

    (void)state;
    assert_non_null(mkdtemp(out_dir));
    start(&s, NULL);
    const char *args[] = { "--server", s.endpoint, "--bots", "3", "--duration", "60", "--hold",
                           "0.5", "--out", out_dir, "--no-progress", NULL };
    harness_proc_start(&run, "reap-client", args);
    if (!harness_proc_wait_for_text(&run, "bots joined", 20.0)) /* a progress line */
        fail_msg("no progress line:\n%s", run.out);

    kill(run.pid, SIGTERM);

    assert_true(harness_proc_wait(&run, 30.0));
    if (run.status != EXIT_INTERRUPTED)
        fail_msg("expected exit %d, got %d:\n%s", EXIT_INTERRUPTED, run.status, run.out);
    json = out_file(out_dir, "report.json", &run);
    assert_non_null(strstr(json, "\"interrupted\": true"));
    csv = out_file(out_dir, "timeline.csv", &run);
    assert_true(strncmp(csv, "t,stage,target,connected,joins,", 31) == 0);
    assert_non_null(strchr(strchr(csv, '\n') + 1, '\n'));  /* at least one row */
    free(json);
    free(csv);
    harness_proc_free(&run);
    remove_dir(out_dir);
    stop(&s);
}

static void test_junit_has_one_test_case_per_threshold(void **state)
{
    char out_dir[] = "/tmp/reap-load-ci-XXXXXX", junit[300];
    harness_server s;
    harness_proc run;
    char *xml;

    (void)state;
    assert_non_null(mkdtemp(out_dir));
    snprintf(junit, sizeof junit, "%s/junit.xml", out_dir);
    start(&s, NULL);
    const char *args[] = { "--server", s.endpoint, "--bots", "3", "--duration", "2", "--hold",
                           "0.5", "--threshold", "errors==0", "--threshold", "joins<1",
                           "--junit", junit, "--out", out_dir, "--quiet", NULL };

    int rc = harness_run("reap-client", args, 30.0, &run);

    if (rc != EXIT_THRESHOLD)
        fail_msg("expected exit %d, got %d:\n%s", EXIT_THRESHOLD, rc, run.out);
    xml = out_file(out_dir, "junit.xml", &run);
    assert_non_null(strstr(xml, "<testsuites name=\"reap-client\" tests=\"2\" failures=\"1\""));
    assert_non_null(strstr(xml, "name=\"errors==0\" time=\"0\"><system-out>0</system-out>"));
    assert_non_null(strstr(xml, "name=\"joins&lt;1\""));
    assert_non_null(strstr(xml, "<failure message=\"joins was "));
    free(xml);
    harness_proc_free(&run);
    remove_dir(out_dir);
    stop(&s);
}

static void test_merge_judges_the_thresholds_the_shards_were_given(void **state)
{
    char dir_a[] = "/tmp/reap-load-ci-XXXXXX", dir_b[] = "/tmp/reap-load-ci-XXXXXX";
    char dir_m[] = "/tmp/reap-load-ci-XXXXXX";
    harness_server s;
    harness_proc a, b, m;

    (void)state;
    assert_non_null(mkdtemp(dir_a));
    assert_non_null(mkdtemp(dir_b));
    assert_non_null(mkdtemp(dir_m));
    start(&s, NULL);
    const char *args_a[] = { "--server", s.endpoint, "--bots", "4", "--duration", "2",
                             "--hold", "0.5", "--seed", "5", "--shard", "0/2", "--threshold",
                             "joins<1", "--out", dir_a, "--quiet", NULL };
    const char *args_b[] = { "--server", s.endpoint, "--bots", "4", "--duration", "2",
                             "--hold", "0.5", "--seed", "5", "--shard", "1/2", "--threshold",
                             "joins<1", "--out", dir_b, "--quiet", NULL };
    harness_proc_start(&a, "reap-client", args_a);
    harness_proc_start(&b, "reap-client", args_b);
    assert_true(harness_proc_wait(&a, 30.0));
    assert_true(harness_proc_wait(&b, 30.0));
    assert_int_equal(a.status, EXIT_THRESHOLD);
    assert_int_equal(b.status, EXIT_THRESHOLD);

    const char *merge[] = { "merge", dir_a, dir_b, "--out", dir_m, "--threshold", "errors==0",
                            NULL };
    int rc = harness_run("reap-client", merge, 30.0, &m);

    if (rc != EXIT_THRESHOLD)
        fail_msg("merge kept no shard threshold (exit %d):\n%s", rc, m.out);
    assert_non_null(strstr(m.out, "joins<1"));
    assert_non_null(strstr(m.out, "errors==0                    pass"));
    harness_proc_free(&a);
    harness_proc_free(&b);
    harness_proc_free(&m);
    remove_dir(dir_a);
    remove_dir(dir_b);
    remove_dir(dir_m);
    stop(&s);
}

static void test_a_leak_check_without_admin_is_a_usage_error(void **state)
{
    harness_proc run;
    const char *args[] = { "--server", "127.0.0.1:9", "--bots", "1", "--duration", "1",
                           "--leak-check", NULL };

    (void)state;
    assert_int_equal(harness_run("reap-client", args, 10.0, &run), 2);
    assert_non_null(strstr(run.out, "--leak-check needs --admin URL"));
    harness_proc_free(&run);
}

static void test_a_leak_check_the_console_refuses_fails_and_a_token_lets_it_run(void **state)
{
    char out_dir[] = "/tmp/reap-load-ci-XXXXXX", token[300], admin[64];
    harness_server s;
    harness_proc run;
    FILE *f;

    (void)state;
    assert_non_null(mkdtemp(out_dir));
    snprintf(token, sizeof token, "%s/token", out_dir);
    f = fopen(token, "w");
    assert_non_null(f);
    fputs("0123456789abcdef-test-token\n", f);
    fclose(f);
    const char *server_args[] = { "--admin-token", token, NULL };
    start(&s, server_args);
    snprintf(admin, sizeof admin, "http://127.0.0.1:%u", s.admin_port);
    const char *without[] = { "--server", s.endpoint, "--admin", admin, "--bots", "2",
                              "--duration", "1", "--hold", "0.3", "--leak-check", "--out",
                              out_dir, "--quiet", NULL };
    const char *with[] = { "--server", s.endpoint, "--admin", admin, "--admin-token", token,
                           "--bots", "2", "--duration", "1", "--hold", "0.3", "--leak-check",
                           "--out", out_dir, "--quiet", NULL };

    int rc = harness_run("reap-client", without, 30.0, &run);

    assert_int_equal(rc, 1);
    assert_non_null(strstr(run.out, "the leak check cannot run"));
    assert_non_null(strstr(run.out, "--admin-token FILE"));
    harness_proc_free(&run);

    rc = run_client_beside(&s, with, 60.0, &run);
    if (rc != 0)
        fail_msg("with the token the run exited %d:\n%s", rc, run.out);
    assert_non_null(strstr(run.out, "leak verdict: no object outlived the run"));
    harness_proc_free(&run);
    remove_dir(out_dir);
    stop(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_run_stopped_by_sigterm_exits_105_with_its_report_and_csv),
        cmocka_unit_test(test_junit_has_one_test_case_per_threshold),
        cmocka_unit_test(test_merge_judges_the_thresholds_the_shards_were_given),
        cmocka_unit_test(test_a_leak_check_without_admin_is_a_usage_error),
        cmocka_unit_test(test_a_leak_check_the_console_refuses_fails_and_a_token_lets_it_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
