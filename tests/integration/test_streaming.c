/*
 * test_streaming.c - streaming levels end to end: bots churning over a world of streaming
 * cells keep every mirror exact and leave nothing behind, the cells they loaded unload once
 * they have gone and the object count returns to the start's; a level a strong handle keeps
 * is named with its chain by s.ForceVerifyLevelsGotRemovedByGC; a bad [cells] section stops
 * the server naming the file, the line and the field.
 */
#include <sys/stat.h>

#include "harness.h"
#include "test_load_files.h"

static const char profile[] = "tests/data/profiles/streaming.ini";

static void start(harness_server *s, const char *extra_cvar)
{
    const char *const server_args[] = {
        "--world-profile", profile, "--cvar", "world.Extent=40000", "--cvar",
        "world.StreamingCellSize=4000", "--cvar", "world.StreamingLoadingRange=4000", "--cvar",
        "world.StreamingUnloadDelay=0.5", "--cvar", "wp.Runtime.EnableServerStreaming=1",
        "--cvar", "wp.Runtime.EnableServerStreamingOut=1", "--cvar",
        "net.ConnectionTimeout=1", "--cvar", "gc.TimeBetweenPurgingPendingKillObjects=1",
        "--cvar", extra_cvar != NULL ? extra_cvar : "engine.SlowFrameMs=100", NULL
    };

    harness_server_start(s, server_args);
    harness_wait_metric(s, "reap_frames_total", HARNESS_GE, 2, 10.0);
}

static void test_bots_over_streamed_cells_keep_mirrors_exact_and_the_world_returns_to_its_start(
    void **state)
{
    char out_dir[] = "/tmp/reap-streaming-XXXXXX", admin[64], path[300];
    harness_server s;
    harness_proc run;
    double start_objects, streamed_in;
    char *json;

    (void)state;
    assert_non_null(mkdtemp(out_dir));
    start(&s, NULL);
    start_objects = harness_server_metric(&s, "reap_gc_objects");
    snprintf(admin, sizeof admin, "http://127.0.0.1:%u", s.admin_port);
    const char *args[] = { "--server", s.endpoint, "--admin", admin, "--bots", "8",
                           "--duration", "5", "--hold", "1", "--disconnect", "mixed",
                           "--spawn-mix", "Campfire:2", "--threshold", "leaked==0",
                           "--threshold", "mismatches==0", "--threshold", "errors==0",
                           "--out", out_dir, "--quiet", NULL };

    /* Given bots that spawn campfires referring to placed trees, */
    int rc = harness_run("reap-client", args, 90.0, &run);

    /* every mirror was exact and nothing outlived the run, */
    if (rc != 0)
        fail_msg("the run exited %d:\n%s\nserver:\n%s", rc, run.out, s.proc.out);
    snprintf(path, sizeof path, "%s/report.json", out_dir);
    json = read_text_file(path);
    assert_non_null(json);
    assert_int_equal(json_int(json, "leaked"), 0);
    assert_int_equal(json_int(json, "mismatch"), 0);
    assert_true(json_int(json, "checks") > 8);
    free(json);
    /* cells streamed in around them and, once they left, out again, every one collected, */
    harness_wait_metric(&s, "reap_world_levels{world=\"World0\",state=\"loaded\"}", HARNESS_EQ,
                        1, 15.0);
    harness_wait_metric(&s, "reap_world_levels{world=\"World0\",state=\"loading\"}", HARNESS_EQ,
                        0, 10.0);
    /* (a cell still being removed, a slice a frame, is neither loaded nor pending purge) */
    harness_wait_metric(&s, "reap_world_levels{world=\"World0\",state=\"unloading\"}",
                        HARNESS_EQ, 0, 10.0);
    harness_wait_metric(&s, "reap_world_levels{world=\"World0\",state=\"pending_purge\"}",
                        HARNESS_EQ, 0, 10.0);
    streamed_in = harness_server_metric(&s, "reap_world_level_streams_total{direction=\"in\"}");
    assert_true(streamed_in >= 1);
    assert_true(harness_server_metric(&s, "reap_world_level_streams_total{direction=\"out\"}") ==
                streamed_in);
    assert_true(harness_server_metric(&s, "reap_world_levels_survived_total") == 0);
    assert_true(harness_server_metric(&s, "reap_gc_collections_by_reason_total{reason=\"streaming\"}") >= 1);
    /* and the world holds what it held before the first bot came. */
    harness_wait_metric(&s, "reap_gc_objects", HARNESS_EQ, start_objects, 10.0);
    harness_proc_free(&run);
    remove_dir(out_dir);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_a_level_a_strong_handle_keeps_is_named_with_its_chain(void **state)
{
    char out_dir[] = "/tmp/reap-streaming-leak-XXXXXX";
    harness_server s;
    harness_proc run;

    (void)state;
    assert_non_null(mkdtemp(out_dir));
    start(&s, "s.ForceVerifyLevelsGotRemovedByGC=1");
    const char *hold_args[] = { "--server", s.endpoint, "--spawn", "0", "--hold", "2",
                                "--quiet", NULL };
    const char *args[] = { "--server", s.endpoint, "--bots", "1", "--duration", "1", "--hold",
                           "0.5", "--disconnect", "graceful", "--spawn-mix", "Shrine:1",
                           "--out", out_dir, "--quiet", NULL };
    harness_proc holder;

    /* Given a player whose cells are loaded (a spawn names a placed actor of a loaded cell:
     * one that spawns in its first frame finds none), */
    harness_proc_start(&holder, "reap-client", hold_args);
    harness_wait_metric(&s, "reap_world_levels{world=\"World0\",state=\"loaded\"}", HARNESS_GE,
                        2, 10.0);
    /* and a persistent shrine beside it holding a placed tree by a strong handle, */
    int rc = harness_run("reap-client", args, 60.0, &run);
    if (rc != 0)
        fail_msg("the run exited %d:\n%s", rc, run.out);
    assert_true(harness_proc_wait(&holder, 20.0));
    assert_int_equal(holder.status, 0);
    harness_proc_free(&holder);

    /* when its player leaves and the cell streams out, the collection that should free the
     * level names what keeps it. */
    harness_wait_metric(&s, "reap_world_levels_survived_total", HARNESS_GE, 1, 15.0);
    assert_true(harness_server_metric(&s, "reap_world_level_verify_survivors_total") >= 2);
    assert_true(harness_proc_wait_for_text(&s.proc, "didn't get garbage collected!", 5.0));
    assert_true(harness_proc_wait_for_text(&s.proc, "(reference count)", 5.0));
    assert_true(harness_proc_wait_for_text(&s.proc, "[outer]", 5.0));
    harness_proc_free(&run);
    remove_dir(out_dir);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_a_bad_cells_section_stops_the_server_naming_file_line_and_field(void **state)
{
    char path[] = "/tmp/reap-bad-cells-XXXXXX";
    int fd = mkstemp(path);
    harness_proc p;
    FILE *f;

    (void)state;
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    assert_non_null(f);
    fputs("[archetype Tree]\ncomponents = 1\n\n[cells]\nplaced = Tree:4, Bush:2\n", f);
    fclose(f);
    const char *args[] = { "--port", "0", "--admin-port", "0", "--world-profile", path, NULL };

    int rc = harness_run("reap-server", args, 10.0, &p);

    assert_int_equal(rc, 2);
    assert_non_null(strstr(p.out, ":5: [cells] placed: 'Bush' is not an archetype defined above "
                                  "[cells]"));
    harness_proc_free(&p);
    remove(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_bots_over_streamed_cells_keep_mirrors_exact_and_the_world_returns_to_its_start),
        cmocka_unit_test(test_a_level_a_strong_handle_keeps_is_named_with_its_chain),
        cmocka_unit_test(test_a_bad_cells_section_stops_the_server_naming_file_line_and_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
