/*
 * test_docs.c - what a new user reads says what the binaries do: the man pages are what
 * `--help` makes of them (deploy/man/regen.sh), the README's samples are what a real run prints
 * (tests/docs/readme_samples.py), the server's and the client's folders are the layers the
 * README says (tests/docs/layers.py), and every document a README or a scenario names by its
 * file name is in the repository.
 */
#include "harness.h"

#include <ctype.h>
#include <sys/stat.h>

/* Runs program with args to completion (at most timeout s); its exit status, output in *p. */
static int run_cmd(harness_proc *p, const char *program, const char *const *args, double timeout)
{
    harness_proc_start_cmd(p, program, args, NULL);
    if (!harness_proc_wait(p, timeout)) {
        harness_proc_kill(p);
        fail_msg("%s did not finish within %g s; it printed:\n%s", program, timeout, p->out);
    }
    if (p->status == 127)
        fail_msg("%s is not installed: deploy/install-deps.sh installs it", program);
    return p->status;
}

static void test_the_man_pages_are_what_the_binaries_help_says(void **state)
{
    harness_proc p;
    const char *args[] = { "deploy/man/regen.sh", harness_build_dir(), "--check", NULL };

    (void)state;
    if (run_cmd(&p, "sh", args, 60.0) != 0)
        fail_msg("%s", p.out);
    harness_proc_free(&p);
}

static void test_every_flag_of_the_help_is_in_the_man_page(void **state)
{
    static const char *const client_flags[] = {
        "scenario", "threshold", "admin", "admin\\-token", "leak\\-check", "shard", "junit",
        "move\\-rate", "projectile\\-rate", "progress", "no\\-progress", "procs", "impair",
        "checkpoint",
    };
    harness_proc p;
    char page[1 << 16];
    FILE *f = fopen("deploy/man/reap-client.1", "r");
    size_t n;

    (void)state;
    assert_non_null(f);
    n = fread(page, 1, sizeof page - 1, f);
    fclose(f);
    page[n] = '\0';
    for (size_t i = 0; i < sizeof client_flags / sizeof *client_flags; i++) {
        char want[64];
        snprintf(want, sizeof want, "\\-\\-%s", client_flags[i]);
        if (strstr(page, want) == NULL)
            fail_msg("deploy/man/reap-client.1 lacks %s", want);
    }
    assert_non_null(strstr(page, ".SH MERGE"));
    assert_non_null(strstr(page, "99 when"));
    assert_non_null(strstr(page, "105 when interrupted"));
    assert_non_null(strstr(page, "3 when some of the"));
    (void)p;
}

static void test_the_readme_samples_are_what_a_real_run_prints(void **state)
{
    harness_proc p;
    const char *args[] = { "tests/docs/readme_samples.py", harness_build_dir(), "--check",
                           NULL };

    (void)state;
    if (run_cmd(&p, "/usr/bin/python3", args, 60.0) != 0)
        fail_msg("%s", p.out);
    assert_non_null(strstr(p.out, "samples match a real run"));
    harness_proc_free(&p);
}

static void test_the_server_folders_include_only_downwards(void **state)
{
    harness_proc p;
    const char *args[] = { "tests/docs/layers.py", "server/module.mk", NULL };

    (void)state;
    if (run_cmd(&p, "/usr/bin/python3", args, 30.0) != 0)
        fail_msg("%s", p.out);
    assert_non_null(strstr(p.out, "layers hold"));
    harness_proc_free(&p);
}

static void test_the_client_folders_include_only_downwards(void **state)
{
    harness_proc p;
    const char *args[] = { "tests/docs/layers.py", "client/module.mk", NULL };

    (void)state;
    if (run_cmd(&p, "/usr/bin/python3", args, 30.0) != 0)
        fail_msg("%s", p.out);
    assert_non_null(strstr(p.out, "layers hold"));
    assert_non_null(strstr(p.out, "in 6 folders"));  /* base, model, report, session, load, cli */
    harness_proc_free(&p);
}

/* Every "NAME.md" token in path names a file that exists (from the top, or beside path). */
static void check_md_references(const char *path)
{
    char text[1 << 17], dir[256];
    const char *slash = strrchr(path, '/');
    FILE *f = fopen(path, "r");
    size_t n;

    assert_non_null(f);
    n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    snprintf(dir, sizeof dir, "%.*s", slash != NULL ? (int)(slash - path) : 1,
             slash != NULL ? path : ".");
    for (const char *p = strstr(text, ".md"); p != NULL; p = strstr(p + 3, ".md")) {
        const char *start = p;
        char name[256], beside[600];
        struct stat st;

        while (start > text && (isalnum((unsigned char)start[-1]) || start[-1] == '_' ||
                                start[-1] == '-' || start[-1] == '/' || start[-1] == '.'))
            start--;
        if (start == p || isalnum((unsigned char)p[3]) || (size_t)(p + 3 - start) >= sizeof name)
            continue;
        snprintf(name, sizeof name, "%.*s", (int)(p + 3 - start), start);
        snprintf(beside, sizeof beside, "%s/%s", dir, name);
        if (stat(name, &st) != 0 && stat(beside, &st) != 0)
            fail_msg("%s names %s, which is not in the repository", path, name);
    }
}

static void test_every_document_the_readme_and_scenarios_name_is_there(void **state)
{
    static const char *const files[] = {
        "README.md", "tests/bench/README.md", "deploy/scenarios/smoke.ini",
        "deploy/scenarios/churn.ini", "deploy/scenarios/mass-leave.ini",
        "deploy/scenarios/spike.ini", "deploy/scenarios/bad-network.ini",
        "deploy/scenarios/shooter.ini", "deploy/scenarios/mmo.ini", "deploy/scenarios/deep.ini",
        "deploy/k8s/loadtest-job.yaml",
    };

    (void)state;
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        check_md_references(files[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_man_pages_are_what_the_binaries_help_says),
        cmocka_unit_test(test_every_flag_of_the_help_is_in_the_man_page),
        cmocka_unit_test(test_the_readme_samples_are_what_a_real_run_prints),
        cmocka_unit_test(test_the_server_folders_include_only_downwards),
        cmocka_unit_test(test_the_client_folders_include_only_downwards),
        cmocka_unit_test(test_every_document_the_readme_and_scenarios_name_is_there),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
