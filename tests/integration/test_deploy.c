/*
 * test_deploy.c - what an operator installs, checked offline: the Agones manifests lint and
 * match the CRD fields they use, and the systemd unit `make install` writes verifies, names the
 * installed paths, and keeps systemd-analyze's exposure score at or under 2.0.
 */
#include "harness.h"

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

static void test_the_agones_manifests_pass_yamllint(void **state)
{
    harness_proc p;
    const char *args[] = { "-s", "-c", "deploy/agones/yamllint.yaml", "deploy/agones", NULL };

    (void)state;
    if (run_cmd(&p, "yamllint", args, 60.0) != 0)
        fail_msg("yamllint found problems:\n%s", p.out);
    harness_proc_free(&p);
}

static void test_the_agones_manifests_use_only_documented_crd_fields(void **state)
{
    harness_proc p;
    const char *args[] = { "tests/deploy/check_agones_manifests.py", "deploy/agones", NULL };

    (void)state;
    if (run_cmd(&p, "python3", args, 60.0) != 0)
        fail_msg("the manifests do not hold:\n%s", p.out);
    assert_non_null(strstr(p.out, "GameServer, Fleet, FleetAutoscaler and GameServerAllocation "
                                  "hold"));
    harness_proc_free(&p);
}

/* Reads a whole (small) file into buf; false if it cannot be read. */
static bool read_file(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    size_t n;

    if (f == NULL)
        return false;
    n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    return true;
}

static void test_the_installed_unit_verifies_and_scores_at_most_two(void **state)
{
    char dir[] = "/tmp/reap-test-install-XXXXXX";
    char destdir[160], unit_path[256], checked[256], bin[256], cmd[1024], text[8192];
    harness_proc p;
    double exposure = -1;
    const char *at;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(destdir, sizeof destdir, "DESTDIR=%s", dir);
    const char *install[] = { "-s", "install-data", destdir, "PREFIX=/usr", NULL };
    if (run_cmd(&p, "make", install, 120.0) != 0)
        fail_msg("make install-data failed:\n%s", p.out);
    harness_proc_free(&p);

    /* Installed where a /usr install belongs, naming the paths it installed. */
    snprintf(unit_path, sizeof unit_path, "%s/usr/lib/systemd/system/reap-server.service", dir);
    assert_true(read_file(unit_path, text, sizeof text));
    assert_non_null(strstr(text, "ExecStart=/usr/bin/reap-server --config /etc/reap/reap.ini"));
    assert_non_null(strstr(text, "Type=notify"));
    assert_non_null(strstr(text, "RestartPreventExitStatus=2"));
    snprintf(checked, sizeof checked, "%s/etc/reap/reap.ini", dir);
    assert_true(access(checked, R_OK) == 0);
    snprintf(checked, sizeof checked, "%s/usr/share/man/man1/reap-server.1", dir);
    assert_true(access(checked, R_OK) == 0);

    /* verify checks that ExecStart is executable: point it at the built binary in DESTDIR. */
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/usr/bin && cp %s/reap-server %s/usr/bin/ && "
             "sed 's|^ExecStart=/usr/bin/|ExecStart=%s/usr/bin/|' %s > %s/reap-server.service",
             dir, harness_build_dir(), dir, dir, unit_path, dir);
    const char *sh[] = { "-c", cmd, NULL };
    assert_int_equal(run_cmd(&p, "/bin/sh", sh, 30.0), 0);
    harness_proc_free(&p);
    snprintf(checked, sizeof checked, "%s/reap-server.service", dir);
    snprintf(bin, sizeof bin, "%s", checked);

    const char *verify[] = { "verify", "--man=no", bin, NULL };
    if (run_cmd(&p, "systemd-analyze", verify, 60.0) != 0 || p.len != 0)
        fail_msg("systemd-analyze verify complained:\n%s", p.out);
    harness_proc_free(&p);

    const char *security[] = { "security", "--offline=yes", bin, NULL };
    run_cmd(&p, "systemd-analyze", security, 60.0);
    at = strstr(p.out, "Overall exposure level for reap-server.service:");
    if (at != NULL)
        exposure = strtod(strchr(at, ':') + 1, NULL);
    printf("systemd-analyze security --offline=yes: exposure %.1f\n", exposure);
    if (at == NULL || exposure < 0 || exposure > 2.0)
        fail_msg("exposure %.1f (at most 2.0 wanted):\n%s", exposure, p.out);
    harness_proc_free(&p);

    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    const char *rm[] = { "-c", cmd, NULL };
    run_cmd(&p, "/bin/sh", rm, 30.0);
    harness_proc_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_agones_manifests_pass_yamllint),
        cmocka_unit_test(test_the_agones_manifests_use_only_documented_crd_fields),
        cmocka_unit_test(test_the_installed_unit_verifies_and_scores_at_most_two),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
