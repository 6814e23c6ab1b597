/*
 * test_gc_schedule.c - the idle-server rule on the real server: with an interval of 1 s and
 * an idle multiplier of 5, the interval is 5 s while nobody is connected and 1 s while a client
 * is, and collections happen at that pace. And the slow-frame log line's account of the gc
 * phase: the frame a collection marked in says so, the frames after it do not.
 */
#include "harness.h"

static const char *const schedule_args[] = {
    "--cvar", "gc.TimeBetweenPurgingPendingKillObjects=1",
    "--cvar", "gc.TimeBetweenPurgingPendingKillObjectsOnIdleServerMultiplier=5",
    NULL,
};

static double collections(harness_server *s)
{
    return harness_server_metric(s, "reap_gc_collections_total{kind=\"incremental\"}") +
           harness_server_metric(s, "reap_gc_collections_total{kind=\"full\"}");
}

static void test_an_empty_server_uses_the_idle_interval_and_waits_it_out(void **state)
{
    harness_server s;

    (void)state;
    harness_server_start(&s, schedule_args);
    harness_wait_metric(&s, "reap_frame", HARNESS_GE, 2, 10.0);
    double before = collections(&s);

    assert_true(harness_server_metric(&s, "reap_gc_interval_seconds") == 5.0);
    /* The timer climbs past the connected interval without a collection: the idle interval
     * is in force. */
    harness_wait_metric(&s, "reap_gc_time_since_last_purge_seconds", HARNESS_GE, 2.0, 10.0);
    assert_true(collections(&s) == before);

    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_a_connected_client_brings_the_interval_down_and_collections_follow(
    void **state)
{
    harness_server s;
    harness_proc c;
    const char *args[] = { "--server", NULL, "--spawn", "3", "--hold", "30", NULL };

    (void)state;
    harness_server_start(&s, schedule_args);
    args[1] = s.endpoint;
    harness_proc_start(&c, "reap-client", args);
    harness_wait_metric(&s, "reap_players_connected", HARNESS_EQ, 1, 10.0);
    harness_wait_metric(&s, "reap_gc_interval_seconds", HARNESS_EQ, 1.0, 5.0);

    double t0 = harness_now();
    double c0 = collections(&s);
    harness_wait_metric(&s, "reap_gc_collections_total{kind=\"incremental\"}", HARNESS_GE,
                        harness_server_metric(&s, "reap_gc_collections_total{kind=\"incremental\"}") + 3,
                        8.0);
    double elapsed = harness_now() - t0;

    /* Three collections one second apart take at least two seconds and, at the idle
     * interval, would have taken more than ten. */
    assert_true(collections(&s) >= c0 + 3);
    assert_true(elapsed >= 1.5);
    assert_true(elapsed < 8.0);
    assert_true(harness_server_metric(&s, "reap_gc_time_since_last_purge_seconds") < 1.5);

    harness_proc_kill(&c);
    harness_proc_free(&c);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_the_interval_returns_to_the_idle_value_when_the_last_client_leaves(
    void **state)
{
    harness_server s;
    harness_proc c;
    const char *args[] = { "--server", NULL, "--spawn", "2", "--hold", "0.5", NULL };

    (void)state;
    harness_server_start(&s, schedule_args);
    args[1] = s.endpoint;
    harness_proc_start(&c, "reap-client", args);
    harness_wait_metric(&s, "reap_gc_interval_seconds", HARNESS_EQ, 1.0, 10.0);
    assert_true(harness_proc_wait(&c, 20.0));
    assert_int_equal(c.status, 0);

    harness_wait_metric(&s, "reap_gc_interval_seconds", HARNESS_EQ, 5.0, 10.0);

    assert_true(harness_server_metric(&s, "reap_players_connected") == 0);
    harness_proc_free(&c);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

/* Every frame is "slow" (engine.SlowFrameMs 0.001), a collection every 0.5 s marks 100,000
 * props at once (no incremental reachability): the frames whose line has a mark are the
 * collections' frames, no more (a figure left over from an earlier frame would show in the
 * next), and the collector's figures fit in the gc phase they are part of. */
static void test_the_slow_frame_line_tells_the_collection_s_frame_and_no_other(void **state)
{
    static const char *const args[] = {
        "--cvar", "engine.SlowFrameMs=0.001",
        "--cvar", "world.PersistentProps=100000",
        "--cvar", "gc.TimeBetweenPurgingPendingKillObjects=0.5",
        "--cvar", "gc.TimeBetweenPurgingPendingKillObjectsOnIdleServerMultiplier=1",
        NULL,
    };
    harness_server s;
    uint32_t lines = 0, marked = 0, collections_logged = 0;
    const char *p;

    (void)state;
    harness_server_start(&s, args);
    harness_wait_metric(&s, "reap_gc_collections_total{kind=\"incremental\"}", HARNESS_GE, 3,
                        20.0);
    assert_int_equal(harness_server_stop(&s), 0);

    for (p = strstr(s.proc.out, "gc: collection "); p != NULL; p = strstr(p + 1, "gc: collection "))
        collections_logged++;
    for (p = strstr(s.proc.out, "slow frame "); p != NULL; p = strstr(p + 1, "slow frame ")) {
        double net, world, repl, gc, mark, gather, purge;
        const char *fields = strstr(p, "(net ");

        assert_non_null(fields);
        assert_int_equal(sscanf(fields, "(net %lf, world %lf, repl %lf, gc %lf); gc: mark %lf, "
                                        "gather %lf, purge %lf ms",
                                &net, &world, &repl, &gc, &mark, &gather, &purge), 7);
        assert_non_null(strstr(fields, "; on the CPU "));
        /* each figure is rounded to 0.1 ms */
        assert_true(mark + gather + purge <= gc + 0.2);
        lines++;
        if (mark > 0)
            marked++;
    }
    assert_true(collections_logged >= 3);
    /* Frames without a collection have lines too (at 30 Hz about 15 per collection; a
     * ThreadSanitizer build, whose frames are several times slower, once had fewer than 10). */
    assert_true(lines > 2 * collections_logged);
    assert_true(marked >= 1);
    assert_true(marked <= collections_logged);
    harness_server_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_an_empty_server_uses_the_idle_interval_and_waits_it_out),
        cmocka_unit_test(test_a_connected_client_brings_the_interval_down_and_collections_follow),
        cmocka_unit_test(test_the_interval_returns_to_the_idle_value_when_the_last_client_leaves),
        cmocka_unit_test(test_the_slow_frame_line_tells_the_collection_s_frame_and_no_other),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
