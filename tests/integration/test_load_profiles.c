/*
 * test_load_profiles.c - world profiles end to end: a server started with a shipped profile
 * takes bots that spawn a mix of its archetypes, with every mirror exact and nothing left
 * behind; `obj list class=NAME` counts an archetype's objects while they live; persistent
 * archetypes are not leaks; and a bad profile stops the server with exit 2 and a message
 * naming the file, the line and the field.
 */
#include <sys/stat.h>

#include "harness.h"
#include "test_load_files.h"

/* "N object(s)" at the end of an `obj list` reply, or -1. */
static long listed_objects(const char *reply)
{
    const char *p = strstr(reply, " object(s)"), *q;

    if (p == NULL)
        return -1;
    for (q = p; q > reply && q[-1] >= '0' && q[-1] <= '9'; q--)
        ;
    return strtol(q, NULL, 10);
}

static void start(harness_server *s, const char *profile)
{
    const char *const server_args[] = { "--cvar", "net.ConnectionTimeout=1", "--world-profile",
                                        profile, "--cvar",
                                        "gc.TimeBetweenPurgingPendingKillObjects=1", NULL };

    harness_server_start(s, server_args);
    harness_wait_metric(s, "reap_frame", HARNESS_GE, 2, 10.0);
}

static void test_a_shooter_churn_keeps_every_mirror_exact_and_leaves_nothing_behind(
    void **state)
{
    char out_dir[] = "/tmp/reap-load-shooter-XXXXXX", admin[64], path[300];
    harness_server s;
    harness_proc run;
    char *json;

    (void)state;
    assert_non_null(mkdtemp(out_dir));
    start(&s, "deploy/profiles/shooter.ini");
    snprintf(admin, sizeof admin, "http://127.0.0.1:%u", s.admin_port);
    const char *args[] = { "--server", s.endpoint, "--admin", admin, "--bots", "8",
                           "--duration", "4", "--hold", "0.5", "--disconnect", "mixed",
                           "--spawn-mix", "Weapon:2,Inventory:1", "--threshold", "leaked==0",
                           "--threshold", "mismatches==0", "--threshold", "errors==0",
                           "--out", out_dir, "--quiet", NULL };

    int rc = harness_run("reap-client", args, 60.0, &run);

    if (rc != 0)
        fail_msg("the run exited %d:\n%s", rc, run.out);
    assert_non_null(strstr(run.out, "leak verdict: no object outlived the run"));
    snprintf(path, sizeof path, "%s/report.json", out_dir);
    json = read_text_file(path);
    assert_non_null(json);
    assert_int_equal(json_int(json, "leaked"), 0);
    assert_int_equal(json_int(json, "mismatch"), 0);
    assert_int_equal(json_int(json, "unknown_destroys"), 0);
    assert_true(json_int(json, "checks") > 8);
    /* Three actors a visit: two weapons and an inventory, each acknowledged and replicated. */
    assert_int_equal(json_int(json, "spawned"), 3 * json_int(json, "joins"));
    free(json);
    harness_proc_free(&run);
    remove_dir(out_dir);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_obj_list_counts_an_archetypes_objects_while_they_live(void **state)
{
    char out_dir[] = "/tmp/reap-load-objlist-XXXXXX", reply[1 << 16];
    harness_server s;
    harness_proc run;
    double deadline;
    long weapons = -1;

    (void)state;
    assert_non_null(mkdtemp(out_dir));
    start(&s, "deploy/profiles/shooter.ini");
    const char *args[] = { "--server", s.endpoint, "--bots", "2", "--duration", "2", "--hold",
                           "30", "--disconnect", "graceful", "--spawn-mix", "Weapon:3",
                           "--out", out_dir, "--quiet", NULL };

    /* Given two bots holding three weapons each... */
    harness_proc_start(&run, "reap-client", args);
    deadline = harness_now() + 20.0;
    while (weapons < 6 && harness_now() < deadline) {
        assert_int_equal(harness_console(&s, "obj list class=Weapon", reply, sizeof reply), 200);
        weapons = listed_objects(reply);
        harness_proc_pump(&s.proc, 20);
    }

    /* ...the console lists exactly their weapons, and each weapon's part and ammo. */
    assert_int_equal(weapons, 6);
    assert_non_null(strstr(reply, "Weapon_"));
    assert_int_equal(harness_console(&s, "obj list class=Ammo", reply, sizeof reply), 200);
    assert_int_equal(listed_objects(reply), 12);
    assert_int_equal(harness_console(&s, "obj list class=WeaponPart", reply, sizeof reply), 200);
    assert_int_equal(listed_objects(reply), 6);
    harness_proc_kill(&run);
    harness_proc_free(&run);
    remove_dir(out_dir);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_persistent_houses_outlive_their_players_and_are_not_leaks(void **state)
{
    char out_dir[] = "/tmp/reap-load-mmo-XXXXXX", admin[64], path[300], reply[1 << 16];
    harness_server s;
    harness_proc run;
    char *json;

    (void)state;
    assert_non_null(mkdtemp(out_dir));
    start(&s, "deploy/profiles/mmo.ini");
    snprintf(admin, sizeof admin, "http://127.0.0.1:%u", s.admin_port);
    const char *args[] = { "--server", s.endpoint, "--admin", admin, "--bots", "4",
                           "--duration", "3", "--hold", "0.5", "--spawn-mix", "House:1",
                           "--threshold", "leaked==0", "--threshold", "errors==0",
                           "--out", out_dir, "--quiet", NULL };

    int rc = harness_run("reap-client", args, 60.0, &run);

    if (rc != 0)
        fail_msg("the run exited %d:\n%s", rc, run.out);
    snprintf(path, sizeof path, "%s/report.json", out_dir);
    json = read_text_file(path);
    assert_non_null(json);
    assert_int_equal(json_int(json, "leaked"), 0);
    assert_non_null(strstr(json, "lifetime = persistent archetypes"));
    /* Every house built is still there after the players left and a full collection. */
    assert_int_equal(harness_console(&s, "obj gc", reply, sizeof reply), 200);
    assert_int_equal(harness_console(&s, "obj list class=House", reply, sizeof reply), 200);
    assert_int_equal(listed_objects(reply), json_int(json, "joins"));
    free(json);
    harness_proc_free(&run);
    remove_dir(out_dir);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_a_bad_profile_stops_the_server_naming_the_file_line_and_field(void **state)
{
    char dir[] = "/tmp/reap-profile-XXXXXX", path[300];
    harness_proc run;
    FILE *f;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/bad.ini", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("[archetype Gun]\ncomponents = 2\n\n[archetype Crate]\nchildren = Gun:3, Nope:1\n", f);
    assert_int_equal(fclose(f), 0);
    const char *args[] = { "--port", "0", "--admin-port", "0", "--world-profile", path, NULL };

    assert_int_equal(harness_run("reap-server", args, 10.0, &run), 2);
    assert_non_null(strstr(run.out, ":5: [archetype Crate] children: 'Nope' is not an archetype"));
    assert_non_null(strstr(run.out, path));
    harness_proc_free(&run);

    /* A name the server's own classes use is refused too, at its section's line. */
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("[archetype Gun]\npayload = 1\n[archetype Pawn]\npayload = 1\n", f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(harness_run("reap-server", args, 10.0, &run), 2);
    assert_non_null(strstr(run.out, "bad.ini:3: [archetype Pawn]: the name is taken"));
    harness_proc_free(&run);
    remove_dir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_shooter_churn_keeps_every_mirror_exact_and_leaves_nothing_behind),
        cmocka_unit_test(test_obj_list_counts_an_archetypes_objects_while_they_live),
        cmocka_unit_test(test_persistent_houses_outlive_their_players_and_are_not_leaks),
        cmocka_unit_test(test_a_bad_profile_stops_the_server_naming_the_file_line_and_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
