/*
 * test_churn.c - ten players come, each spawns twenty props, and leave (half of them
 * abruptly, so the server only learns of it by timing them out). After `obj gc` the server is
 * back where it started: the same object count, and no null actor slots. The same holds after
 * reap-client's churn load generator (--bots) has run twenty bots through a world for four
 * seconds, and the generator leaves its timeline as JSON and SVG; and a hundred moving bots
 * each hold exactly the actors the server replicated to them.
 */
#include <sys/stat.h>

#include "harness.h"
#include "test_load_files.h"

enum { CLIENTS = 10, PROPS = 20 };

static void test_players_leaving_gracefully_or_abruptly_leave_nothing_behind(void **state)
{
    const char *const server_args[] = { "--cvar", "net.ConnectionTimeout=1", NULL };
    harness_server s;
    harness_proc clients[CLIENTS];
    char reply[4096];

    (void)state;
    harness_server_start(&s, server_args);
    harness_wait_metric(&s, "reap_frame", HARNESS_GE, 2, 10.0);
    assert_int_equal(harness_console(&s, "obj gc", reply, sizeof reply), 200);
    double baseline = harness_server_metric(&s, "reap_gc_objects");

    for (int i = 0; i < CLIENTS; i++) {
        const char *args[] = { "--server", s.endpoint, "--spawn", "20", "--hold", "0.5",
                               "--disconnect", i % 2 ? "abrupt" : "graceful", NULL };
        harness_proc_start(&clients[i], "reap-client", args);
    }
    harness_wait_metric(&s, "reap_gc_objects", HARNESS_GE, baseline + CLIENTS * PROPS * 5, 20.0);
    for (int i = 0; i < CLIENTS; i++) {
        assert_true(harness_proc_wait(&clients[i], 30.0));
        if (clients[i].status != 0)
            fail_msg("client %d failed:\n%s", i, clients[i].out);
        assert_non_null(strstr(clients[i].out, "spawned 20 props: 20 acknowledged, 20 replicated"));
    }
    harness_wait_metric(&s, "reap_net_connections", HARNESS_EQ, 0, 20.0);
    assert_true(harness_server_metric(&s, "reap_players_connected") == 0);
    assert_true(harness_server_metric(&s, "reap_net_timeouts_total") >= CLIENTS / 2);

    assert_int_equal(harness_console(&s, "obj gc", reply, sizeof reply), 200);

    assert_true(harness_server_metric(&s, "reap_gc_objects") == baseline);
    assert_true(harness_server_metric(&s, "reap_world_actor_slots{world=\"World0\"}") ==
                harness_server_metric(&s, "reap_world_actors{world=\"World0\"}"));
    assert_true(harness_server_metric(&s, "reap_world_actors{world=\"World0\"}") == 2);
    for (int i = 0; i < CLIENTS; i++)
        harness_proc_free(&clients[i]);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_players_in_two_worlds_are_cleaned_up_per_world(void **state)
{
    const char *const server_args[] = { "--worlds", "2", NULL };
    harness_server s;
    harness_proc a, b;
    char reply[4096];

    (void)state;
    harness_server_start(&s, server_args);
    harness_wait_metric(&s, "reap_frame", HARNESS_GE, 2, 10.0);
    const char *args_a[] = { "--server", s.endpoint, "--world", "World0", "--spawn", "7", NULL };
    const char *args_b[] = { "--server", s.endpoint, "--world", "World1", "--spawn", "9",
                             "--hold", "30", NULL };
    harness_proc_start(&b, "reap-client", args_b);
    harness_wait_metric(&s, "reap_world_actors{world=\"World1\"}", HARNESS_EQ, 2 + 2 + 9, 10.0);

    assert_int_equal(harness_run("reap-client", args_a, 30.0, &a), 0);
    assert_int_equal(harness_console(&s, "obj gc", reply, sizeof reply), 200);

    assert_true(harness_server_metric(&s, "reap_world_actors{world=\"World0\"}") == 2);
    assert_true(harness_server_metric(&s, "reap_world_actor_slots{world=\"World0\"}") == 2);
    assert_true(harness_server_metric(&s, "reap_world_actors{world=\"World1\"}") == 13);
    harness_proc_free(&a);
    harness_proc_free(&b);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;

    for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + strlen(needle), needle))
        n++;
    return n;
}

/* Every world in /metrics has as many actor slots as actors (no null slots) and only its two
 * permanent actors; returns how many worlds were checked. */
static int assert_worlds_are_compact_and_empty(harness_server *s)
{
    static char page[HARNESS_HTTP_MAX];
    const char *prefix = "reap_world_actor_slots{world=\"";
    int worlds = 0;

    assert_int_equal(harness_http(s->admin_port, "GET", "/metrics", NULL, page, sizeof page),
                     200);
    for (const char *p = strstr(page, prefix); p != NULL; p = strstr(p + 1, prefix)) {
        char name[64], series[128];
        const char *q = p + strlen(prefix);
        size_t n = strcspn(q, "\"");

        assert_true(n < sizeof name);
        memcpy(name, q, n);
        name[n] = '\0';
        snprintf(series, sizeof series, "reap_world_actor_slots{world=\"%s\"}", name);
        double slots = harness_metric(page, series);
        snprintf(series, sizeof series, "reap_world_actors{world=\"%s\"}", name);
        double actors = harness_metric(page, series);
        if (slots != actors || actors != 2)
            fail_msg("world %s has %g actor slots for %g actors after obj gc", name, slots,
                     actors);
        worlds++;
    }
    return worlds;
}

static void test_the_churn_generator_runs_bots_that_leave_nothing_behind(void **state)
{
    const char *const server_args[] = { "--worlds", "2", "--cvar",
                                        "gc.TimeBetweenPurgingPendingKillObjects=1", "--cvar",
                                        "net.ConnectionTimeout=1", NULL };
    double t0 = harness_now();
    char out_dir[] = "/tmp/reap-churn-XXXXXX";
    char path[128], reply[4096];
    unsigned joins = 0, leaves = 0, props = 0;
    harness_server s;
    harness_proc churn;
    char *json, *svg;
    const char *summary;

    (void)state;
    assert_non_null(mkdtemp(out_dir));
    harness_server_start(&s, server_args);
    harness_wait_metric(&s, "reap_frame", HARNESS_GE, 2, 10.0);
    assert_int_equal(harness_console(&s, "obj gc", reply, sizeof reply), 200);
    double baseline = harness_server_metric(&s, "reap_gc_objects");

    const char *args[] = { "--server", s.endpoint, "--bots", "20", "--duration", "4",
                           "--world", "World1", "--spawn", "5", "--hold", "0.5",
                           "--disconnect", "mixed", "--seed", "7", "--out", out_dir, NULL };
    if (harness_run("reap-client", args, 15.0, &churn) != 0)
        fail_msg("reap-client --bots exited with %d:\n%s", churn.status, churn.out);

    /* It printed progress once a second and a summary in which every bot joined. */
    assert_true(count_of(churn.out, "bots joined") >= 4);
    summary = strstr(churn.out, "churn done in");
    assert_non_null(summary);
    assert_int_equal(sscanf(strstr(summary, "20 bots, "), "20 bots, %u joins, %u leaves", &joins,
                            &leaves), 2);
    assert_true(joins >= 20);
    assert_int_equal(leaves, joins);
    assert_int_equal(sscanf(strstr(summary, "leaves ("), "leaves (%*u abrupt), %u props", &props),
                     1);
    assert_true(props >= 20 * 5);
    assert_true(harness_server_metric(&s, "reap_net_connects_total") >= joins);

    /* The timeline: one JSON row per second, and a picture with its lines. */
    snprintf(path, sizeof path, "%s/churn.json", out_dir);
    json = read_text_file(path);
    if (json == NULL)
        fail_msg("no %s; reap-client printed:\n%s", path, churn.out);
    assert_true(json[0] == '{');
    assert_non_null(strstr(json, "\"bots\": 20"));
    assert_int_equal(count_of(json, "{\"t\": "), 4);
    assert_non_null(strstr(json, "]\n}\n"));
    snprintf(path, sizeof path, "%s/churn.svg", out_dir);
    svg = read_text_file(path);
    if (svg == NULL)
        fail_msg("no %s; reap-client printed:\n%s", path, churn.out);
    assert_int_equal(strncmp(svg, "<svg", 4), 0);
    assert_int_equal(count_of(svg, "<polyline "), 2);
    assert_non_null(strstr(svg, "</svg>\n"));

    /* The abrupt leavers are timed out; then a full collection takes the server back. */
    harness_wait_metric(&s, "reap_net_connections", HARNESS_EQ, 0, 10.0);
    assert_true(harness_server_metric(&s, "reap_players_connected") == 0);
    assert_int_equal(harness_console(&s, "obj gc", reply, sizeof reply), 200);
    assert_true(harness_server_metric(&s, "reap_gc_objects") == baseline);
    assert_int_equal(assert_worlds_are_compact_and_empty(&s), 2);
    assert_true(harness_now() - t0 < 20.0);

    free(json);
    free(svg);
    remove_dir(out_dir);
    harness_proc_free(&churn);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

/* A JSON number after "key": in text (the first one), or -1. */
static double json_number_after(const char *text, const char *key)
{
    const char *p = strstr(text, key);

    return p != NULL ? strtod(p + strlen(key), NULL) : -1;
}

/* The exactness case of the load tester, at a size CI affords: 120 bots that vanish without a
 * word every half second or so, against a server that times them out after one, while others
 * join. Each visit comes from a port of its own that no recent visit used, so no late datagram
 * of a finished visit reaches a new one: no replication check differs and no ActorDestroy names
 * an actor the bot never had. */
static void test_bots_vanishing_under_churn_get_exact_mirrors_and_no_stale_destroys(void **state)
{
    const char *const server_args[] = { "--max-players", "600", "--cvar",
                                        "net.ConnectionTimeout=1", "--cvar",
                                        "gc.TimeBetweenPurgingPendingKillObjects=1", NULL };
    char out_dir[] = "/tmp/reap-churn-exact-XXXXXX";
    char path[128];
    unsigned joins = 0, checks = 0, errors = 0;
    harness_server s;
    harness_proc churn;
    const char *summary;
    char *json;

    (void)state;
    assert_non_null(mkdtemp(out_dir));
    harness_server_start(&s, server_args);
    harness_wait_metric(&s, "reap_frame", HARNESS_GE, 2, 10.0);
    const char *args[] = { "--server", s.endpoint, "--bots", "120", "--duration", "6",
                           "--spawn", "10", "--hold", "0.5", "--disconnect", "abrupt",
                           "--seed", "16", "--out", out_dir, "--quiet", NULL };
    if (run_client_beside(&s, args, 60.0, &churn) != 0)
        fail_msg("reap-client --bots exited with %d:\n%s", churn.status, churn.out);

    summary = strstr(churn.out, "churn done in");
    assert_non_null(summary);
    assert_int_equal(sscanf(strstr(summary, "120 bots, "), "120 bots, %u joins", &joins), 1);
    assert_int_equal(sscanf(strstr(summary, "moves, "), "moves, %u replication checks, %u "
                            "errors", &checks, &errors), 2);
    snprintf(path, sizeof path, "%s/report.json", out_dir);
    json = read_text_file(path);
    assert_non_null(json);
    if (json_number_after(json, "\"mismatch\": ") != 0 ||
        json_number_after(json, "\"unknown_destroys\": ") != 0 || checks < joins / 2)
        fail_msg("%u joins, %u checks; mismatches and unknown destroys must be 0:\n%s", joins,
                 checks, churn.out);
    assert_true(joins > 240); /* most bots came back at least twice */

    free(json);
    remove_dir(out_dir);
    harness_proc_free(&churn);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

/* Issue 7's check: 100 bots steer their pawns (MoveInput at 10 Hz over a small world, so
 * actors enter and leave each other's relevancy) and before every leave ask the server for a
 * replication check; every bot's mirror matches (a mismatch would be counted as an error),
 * no bot errs, and after the churn a full collection takes the server back to its baseline. */
static void hundred_moving_bots_mirror_exactly(const char *extent)
{
    const char *const server_args[] = { "--max-players", "300", "--cvar", extent,
                                        "--cvar", "net.ConnectionTimeout=1", NULL };
    char out_dir[] = "/tmp/reap-churn-check-XXXXXX";
    char reply[4096];
    unsigned joins = 0, checks = 0, errors = 0, moves = 0;
    harness_server s;
    harness_proc churn;
    const char *summary;

    assert_non_null(mkdtemp(out_dir));
    harness_server_start(&s, server_args);
    harness_wait_metric(&s, "reap_frame", HARNESS_GE, 2, 10.0);
    assert_int_equal(harness_console(&s, "obj gc", reply, sizeof reply), 200);
    double baseline = harness_server_metric(&s, "reap_gc_objects");

    const char *args[] = { "--server", s.endpoint, "--bots", "100", "--duration", "5",
                           "--spawn", "5", "--hold", "1", "--move-rate", "10", "--disconnect",
                           "mixed", "--seed", "5", "--out", out_dir, "--quiet", NULL };
    if (run_client_beside(&s, args, 60.0, &churn) != 0)
        fail_msg("reap-client --bots exited with %d:\n%s", churn.status, churn.out);

    summary = strstr(churn.out, "churn done in");
    assert_non_null(summary);
    assert_int_equal(sscanf(strstr(summary, "100 bots, "), "100 bots, %u joins", &joins), 1);
    assert_int_equal(sscanf(strstr(summary, "spawned, "), "spawned, %u moves, %u replication "
                            "checks, %u errors", &moves, &checks, &errors), 3);
    if (errors != 0 || checks != joins)
        fail_msg("%u of %u visits checked, %u errors:\n%s", checks, joins, errors, churn.out);
    assert_true(moves > joins);
    assert_true(harness_server_metric(&s, "reap_net_refused_inputs_total") == 0);
    harness_wait_metric(&s, "reap_net_connections", HARNESS_EQ, 0, 15.0);
    assert_int_equal(harness_console(&s, "obj gc", reply, sizeof reply), 200);
    assert_true(harness_server_metric(&s, "reap_gc_objects") == baseline);

    remove_dir(out_dir);
    harness_proc_free(&churn);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_a_hundred_moving_bots_mirror_exactly_what_the_server_sent_them(void **state)
{
    (void)state;
    hundred_moving_bots_mirror_exactly("world.Extent=40000");
}

/* The same in a crowd: every pawn within one cull distance of every other, so every visit
 * fans out to all the others and every join streams a snapshot of everyone's actors. */
static void test_a_hundred_bots_in_a_crowd_mirror_exactly_what_the_server_sent_them(void **state)
{
    (void)state;
    hundred_moving_bots_mirror_exactly("world.Extent=10000");
}

/* The server's use of the collector, checked by the collector itself: under a churn with
 * clusters and incremental marking in small slices, every mark starts with no broken
 * assumption (cluster records cover what members reference, nothing contradictory). */
static void test_a_churn_with_incremental_marking_breaks_no_collector_assumption(void **state)
{
    const char *const server_args[] = {
        "--cvar", "gc.TimeBetweenPurgingPendingKillObjects=0.5",
        "--cvar", "gc.AllowIncrementalReachability=1",
        "--cvar", "gc.IncrementalReachabilityTimeLimit=0.0002",
        "--cvar", "gc.VerifyAssumptions=1",
        "--cvar", "gc.GarbageReferenceTrackingEnabled=1",
        "--cvar", "net.ConnectionTimeout=1", NULL };
    char out_dir[] = "/tmp/reap-churn-verify-XXXXXX";
    char reply[4096];
    harness_server s;
    harness_proc churn;

    (void)state;
    assert_non_null(mkdtemp(out_dir));
    harness_server_start(&s, server_args);
    harness_wait_metric(&s, "reap_frame", HARNESS_GE, 2, 10.0);
    const char *args[] = { "--server", s.endpoint, "--bots", "15", "--duration", "3",
                           "--spawn", "6", "--hold", "0.4", "--disconnect", "mixed",
                           "--seed", "11", "--out", out_dir, NULL };
    if (harness_run("reap-client", args, 15.0, &churn) != 0)
        fail_msg("reap-client --bots exited with %d:\n%s", churn.status, churn.out);
    harness_wait_metric(&s, "reap_net_connections", HARNESS_EQ, 0, 10.0);
    assert_int_equal(harness_console(&s, "obj gc", reply, sizeof reply), 200);

    assert_true(harness_server_metric(&s, "reap_gc_collections_total{kind=\"incremental\"}") >= 2);
    assert_true(harness_server_metric(&s, "reap_gc_clusters") == 0); /* all props are gone */
    assert_true(harness_server_metric(&s, "reap_gc_assumption_violations_total") == 0);
    assert_int_equal(assert_worlds_are_compact_and_empty(&s), 1);

    remove_dir(out_dir);
    harness_proc_free(&churn);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

/* The bad network (loss, latency, jitter, duplicates, reordering), applied in the
 * client: every ping's round trip carries the added latency both ways, datagrams were really
 * dropped and duplicated, and ENet's retransmissions still bring every bot's mirror to exactly
 * what the server sent it. */
static void test_bots_on_an_impaired_network_still_mirror_exactly(void **state)
{
    const char *const server_args[] = { "--cvar", "net.ConnectionTimeout=2", NULL };
    char out_dir[] = "/tmp/reap-churn-impair-XXXXXX";
    char path[128];
    unsigned joins = 0, checks = 0, errors = 0;
    harness_server s;
    harness_proc churn;
    const char *summary, *rtt;
    char *json;

    (void)state;
    assert_non_null(mkdtemp(out_dir));
    harness_server_start(&s, server_args);
    harness_wait_metric(&s, "reap_frame", HARNESS_GE, 2, 10.0);
    const char *args[] = { "--server", s.endpoint, "--bots", "20", "--duration", "5",
                           "--spawn", "5", "--hold", "1", "--disconnect", "mixed", "--seed", "8",
                           "--impair", "loss=2%,latency=60ms,jitter=15ms,dup=0.5%,reorder=1%",
                           "--out", out_dir, "--quiet", NULL };
    if (run_client_beside(&s, args, 60.0, &churn) != 0)
        fail_msg("reap-client --impair exited with %d:\n%s", churn.status, churn.out);

    summary = strstr(churn.out, "churn done in");
    assert_non_null(summary);
    assert_int_equal(sscanf(strstr(summary, "20 bots, "), "20 bots, %u joins", &joins), 1);
    assert_int_equal(sscanf(strstr(summary, "moves, "), "moves, %u replication checks, %u "
                            "errors", &checks, &errors), 2);
    if (errors != 0 || checks != joins || joins < 20)
        fail_msg("%u of %u visits checked, %u errors:\n%s", checks, joins, errors, churn.out);
    snprintf(path, sizeof path, "%s/report.json", out_dir);
    json = read_text_file(path);
    assert_non_null(json);
    assert_non_null(strstr(json, "\"impairment\": \"loss=2%,latency=60ms,jitter=15ms,dup=0.5%,"
                              "reorder=1%\""));
    assert_true(json_number_after(json, "\"dropped\": ") > 0);
    assert_true(json_number_after(json, "\"datagrams\": ") > 1000);
    assert_true(json_number_after(json, "\"unknown_destroys\": ") == 0);
    /* Each way at least latency - jitter: no round trip can be shorter than 90 ms. */
    rtt = strstr(json, "\"rtt\": {");
    assert_non_null(rtt);
    assert_true(json_number_after(rtt, "\"count\": ") > 0);
    assert_true(json_number_after(rtt, "\"min_ms\": ") >= 90.0);

    free(json);
    remove_dir(out_dir);
    harness_proc_free(&churn);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_players_leaving_gracefully_or_abruptly_leave_nothing_behind),
        cmocka_unit_test(test_players_in_two_worlds_are_cleaned_up_per_world),
        cmocka_unit_test(test_the_churn_generator_runs_bots_that_leave_nothing_behind),
        cmocka_unit_test(test_a_churn_with_incremental_marking_breaks_no_collector_assumption),
        cmocka_unit_test(test_a_hundred_moving_bots_mirror_exactly_what_the_server_sent_them),
        cmocka_unit_test(test_a_hundred_bots_in_a_crowd_mirror_exactly_what_the_server_sent_them),
        cmocka_unit_test(test_bots_vanishing_under_churn_get_exact_mirrors_and_no_stale_destroys),
        cmocka_unit_test(test_bots_on_an_impaired_network_still_mirror_exactly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
