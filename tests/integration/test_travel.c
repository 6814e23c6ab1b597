/*
 * test_travel.c - server travel end to end, against the real server: a hard travel tells its
 * clients and disconnects them, and they join the new map; a seamless travel keeps the
 * connection, answers requests made during it with ERROR_CODE_TRAVEL, and sends the new
 * world's Welcome in a Travel (ARRIVE) and then its snapshot; the leaky profile's world is
 * found with its chain through the game instance (and is not without the check), and
 * severity 3 stops the server with status 3; servertravel to an unknown map lists the maps, a
 * travel during a travel is refused; a bad [map] section stops the server naming the file,
 * the line and the field; MatchSeconds rotates the maps.
 */
#include <sys/stat.h>

#include "harness.h"
#include "integration/wire_peer.h"

static const char leaky[] = "deploy/profiles/leaky.ini";

static void start(harness_server *s, const char *const *extra)
{
    harness_server_start(s, extra);
    harness_wait_metric(s, "reap_frames_total", HARNESS_GE, 2, 10.0);
}

static void join(wire_peer *p, const harness_server *s, const char *name)
{
    if (!wire_peer_connect(p, s->port, 5.0))
        fail_msg("%s could not connect", name);
    assert_true(wire_peer_hello(p, 1, 5, name, ""));
    if (!WIRE_PEER_UNTIL(p, p->welcomed && p->snapshot_complete, 5.0))
        fail_msg("%s was not welcomed with a snapshot", name);
}

static void console_ok(harness_server *s, const char *command, char *out, size_t size)
{
    int status = harness_console(s, command, out, size);

    if (status != 200)
        fail_msg("'%s' answered %d: %s", command, status, out);
}

static void test_a_hard_travel_tells_and_disconnects_every_client_who_then_rejoins(
    void **state)
{
    harness_server s;
    wire_peer a, b, again;
    char out[2048];

    (void)state;
    start(&s, NULL);
    join(&a, &s, "alice");
    join(&b, &s, "bob");

    console_ok(&s, "servertravel Default hard", out, sizeof out);

    /* Both are sent Travel (DEPART, hard) on the replication channel, then disconnected. */
    assert_true(WIRE_PEER_UNTIL(&a, a.disconnected, 5.0));
    assert_true(WIRE_PEER_UNTIL(&b, b.disconnected, 5.0));
    assert_int_equal(a.travel_departs, 1);
    assert_int_equal(a.travel_mode, REAP__TRAVEL_MODE__TRAVEL_MODE_HARD);
    assert_int_equal(a.travel_channel, MSG_CHANNEL_REPLICATION);
    assert_string_equal(a.travel_map, "Default");
    assert_int_equal(a.n_actors, 0);
    assert_int_equal(b.travel_departs, 1);
    harness_wait_metric(&s, "reap_travels_total{mode=\"hard\"}", HARNESS_EQ, 1, 10.0);
    assert_true(harness_proc_wait_for_text(&s.proc, "seconds to LoadMap(Default)", 5.0));
    assert_true(harness_proc_wait_for_text(&s.proc, "no world leaked", 5.0));
    /* and a client that connects again joins the new map. */
    join(&again, &s, "alice");
    assert_true(again.welcome.player_id > a.welcome.player_id);
    assert_int_equal(harness_server_metric(&s, "reap_world_leaked_worlds"), 0);
    wire_peer_close(&a);
    wire_peer_close(&b);
    wire_peer_close(&again);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_a_seamless_travel_keeps_the_client_and_sends_the_new_world(void **state)
{
    /* A world of 300000 persistent props and sliced travel: the travel spans many frames. */
    const char *const args[] = { "--cvar", "world.PersistentProps=300000", "--cvar",
                                 "gc.FrameSlackPacing=1", "--seamless-travel", "true", NULL };
    harness_server s;
    wire_peer p;
    uint32_t player, errors;
    uint64_t controller, pawn;
    char out[2048];

    (void)state;
    start(&s, args);
    join(&p, &s, "carol");
    assert_true(wire_peer_spawn(&p, 2, REAP__ACTOR_CLASS__ACTOR_CLASS_PROP, NULL, 3));
    assert_true(WIRE_PEER_UNTIL(&p, p.spawn_acks == 1 && p.n_actors >= 7, 5.0));
    player = p.welcome.player_id;
    controller = p.welcome.controller_net_id;
    pawn = p.welcome.pawn_net_id;

    console_ok(&s, "servertravel Default", out, sizeof out);
    assert_non_null(strstr(out, "seamless travel to Default"));

    /* Given the departure, */
    assert_true(WIRE_PEER_UNTIL(&p, p.travel_departs == 1, 5.0));
    assert_int_equal(p.travel_mode, REAP__TRAVEL_MODE__TRAVEL_MODE_SEAMLESS);
    assert_int_equal(p.n_actors, 0);
    /* a request made during the travel is answered with ERROR_CODE_TRAVEL, not applied; */
    errors = p.errors;
    assert_true(wire_peer_spawn(&p, 3, REAP__ACTOR_CLASS__ACTOR_CLASS_PROP, NULL, 1));
    if (!WIRE_PEER_UNTIL(&p, p.errors > errors || p.travel_arrives > 0, 10.0) ||
        p.errors == errors)
        fail_msg("no Error for a spawn during the travel:\n%s", s.proc.out);
    assert_int_equal(p.last_error.code, REAP__ERROR_CODE__ERROR_CODE_TRAVEL);
    assert_int_equal(p.last_error.request_seq, 3);
    assert_false(p.last_error.disconnect);
    assert_int_equal(p.travel_arrives, 0);
    /* then the arrival: the same player and controller, a new pawn, the new snapshot. */
    if (!WIRE_PEER_UNTIL(&p, p.travel_arrives == 1 && p.snapshot_complete, 20.0))
        fail_msg("no Travel ARRIVE and snapshot:\n%s", s.proc.out);
    assert_false(p.disconnected);
    assert_int_equal(p.welcome.player_id, player);
    assert_int_equal(p.welcome.controller_net_id, controller);
    assert_true(p.welcome.pawn_net_id != pawn && p.welcome.pawn_net_id != 0);
    assert_non_null(wire_peer_find(&p, controller));
    assert_non_null(wire_peer_find(&p, p.welcome.pawn_net_id));
    assert_null(wire_peer_find(&p, pawn));
    assert_true(harness_proc_wait_for_text(&s.proc, "----SeamlessTravel finished in", 5.0));
    /* The mirror is what the server thinks the client holds. */
    assert_true(wire_peer_request(&p, 4, REAP__ENVELOPE__BODY_REPLICATION_CHECK_REQUEST));
    assert_true(WIRE_PEER_UNTIL(&p, p.checks == 1, 5.0));
    assert_int_equal(p.last_check.open_actors, p.n_actors);
    assert_int_equal(harness_server_metric(&s, "reap_travels_total{mode=\"seamless\"}"), 1);
    assert_int_equal(harness_server_metric(&s, "reap_world_leaked_worlds"), 0);
    wire_peer_close(&p);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

/* A bot's Tracker (lifetime = instance) holds Arena's level; then a travel to Docks. */
static void leak_one(harness_server *s, const char *severity, const char *mode)
{
    const char *const args[] = { "--world-profile", leaky, "--map", "Arena", "--cvar",
                                 severity, NULL };
    wire_peer p;
    char out[2048], cmd[64];

    start(s, args);
    join(&p, s, "dave");
    assert_true(wire_peer_spawn(&p, 2, REAP__ACTOR_CLASS__ACTOR_CLASS_UNSPECIFIED, "Tracker", 1));
    assert_true(WIRE_PEER_UNTIL(&p, p.spawn_acks == 1, 5.0));
    assert_int_equal(p.last_ack_count, 1);
    harness_wait_metric(s, "reap_game_instance_objects", HARNESS_EQ, 1, 5.0);
    snprintf(cmd, sizeof cmd, "servertravel Docks %s", mode);
    console_ok(s, cmd, out, sizeof out);
    WIRE_PEER_UNTIL(&p, p.travel_arrives == 1 || p.disconnected, 5.0);
    wire_peer_close(&p);
}

static void test_the_leaky_profile_leaks_its_world_with_the_chain_through_the_game_instance(
    void **state)
{
    harness_server s;
    char out[4096];

    (void)state;
    leak_one(&s, "Engine.VerifyLoadMapWorldCleanup.Severity=2", "seamless");

    harness_wait_metric(&s, "reap_world_leaks_total", HARNESS_EQ, 1, 10.0);
    assert_true(harness_proc_wait_for_text(&s.proc, "(map Arena) not cleaned up by garbage "
                                                    "collection!", 5.0));
    assert_true(harness_proc_wait_for_text(&s.proc, "GameInstance (root set)", 5.0));
    assert_true(harness_proc_wait_for_text(&s.proc, "-> GameInstance.Tracker_", 5.0));
    assert_true(harness_proc_wait_for_text(&s.proc, "_Leaked [outer]", 5.0));
    assert_int_equal(harness_server_metric(&s, "reap_world_leaked_worlds"), 1);
    /* The leaked world is kept under its new name; the next map loaded all the same. */
    console_ok(&s, "worlds", out, sizeof out);
    assert_non_null(strstr(out, "map Docks"));
    assert_non_null(strstr(out, "_Leaked leaked: map Arena"));
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);

    /* Without the check the same leak goes unseen: the check is what finds it. */
    leak_one(&s, "Engine.VerifyLoadMapWorldCleanup.Severity=0", "hard");
    harness_wait_metric(&s, "reap_travels_total{mode=\"hard\"}", HARNESS_EQ, 1, 10.0);
    assert_int_equal(harness_server_metric(&s, "reap_world_leaks_total"), 0);
    assert_null(strstr(s.proc.out, "not cleaned up by garbage collection"));
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_severity_3_stops_the_server_with_exit_status_3(void **state)
{
    harness_server s;

    (void)state;
    leak_one(&s, "Engine.VerifyLoadMapWorldCleanup.Severity=3", "hard");

    if (!harness_proc_wait(&s.proc, 10.0))
        fail_msg("the server did not stop after a fatal leak:\n%s", s.proc.out);
    assert_int_equal(s.proc.status, 3);
    assert_non_null(strstr(s.proc.out, "Fatal world leaks detected"));
    harness_server_free(&s);
}

static void test_a_bad_travel_request_changes_nothing(void **state)
{
    const char *const args[] = { "--cvar", "world.PersistentProps=300000", "--cvar",
                                 "gc.FrameSlackPacing=1", NULL };
    harness_server s;
    char out[2048];

    (void)state;
    start(&s, args);

    /* An unknown map is answered with the known ones. */
    assert_int_equal(harness_console(&s, "servertravel Nowhere", out, sizeof out), 400);
    assert_non_null(strstr(out, "no map named 'Nowhere'; the maps are: Default, Transition"));
    assert_int_equal(harness_console(&s, "servertravel Default sideways", out, sizeof out), 400);
    assert_non_null(strstr(out, "'sideways' is not a mode"));
    /* A travel during a travel is refused with the reason. */
    console_ok(&s, "servertravel Default", out, sizeof out);
    assert_int_equal(harness_console(&s, "servertravel Transition", out, sizeof out), 400);
    assert_non_null(strstr(out, "refused: a hard travel to Default is under way"));
    harness_wait_metric(&s, "reap_travels_total{mode=\"hard\"}", HARNESS_EQ, 1, 20.0);
    assert_int_equal(harness_server_metric(&s, "reap_travel_refused_total"), 2);
    console_ok(&s, "stat travel", out, sizeof out);
    assert_non_null(strstr(out, "last: hard travel Default -> Default (sliced)"));
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_a_bad_map_section_or_map_stops_the_server_naming_it(void **state)
{
    char dir[] = "/tmp/reap-travel-XXXXXX", path[300];
    harness_proc run;
    FILE *f;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/maps.ini", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("[archetype Crate]\npayload = 8\n[map Arena]\nextent = 12\n", f);
    fclose(f);
    const char *const bad_field[] = { "--port", "0", "--admin-port", "0", "--world-profile",
                                      path, NULL };
    assert_int_equal(harness_run("reap-server", bad_field, 10.0, &run), 2);
    assert_non_null(strstr(run.out, "maps.ini:4: [map Arena] extent: '12': expected world "
                                    "units in [1000, 20000000]"));
    harness_proc_free(&run);

    const char *const bad_map[] = { "--port", "0", "--admin-port", "0", "--world-profile", leaky,
                                    "--map", "Arnea", NULL };
    assert_int_equal(harness_run("reap-server", bad_map, 10.0, &run), 2);
    assert_non_null(strstr(run.out, "--map: no map named 'Arnea' (the maps are: Default, Arena, "
                                    "Docks"));
    harness_proc_free(&run);
    unlink(path);
    rmdir(dir);
}

static void test_match_seconds_travels_through_the_rotation(void **state)
{
    const char *const args[] = { "--world-profile", leaky, "--map-rotation", "Arena, Docks",
                                 "--match-seconds", "1", NULL };
    harness_server s;
    char out[2048];

    (void)state;
    start(&s, args);
    console_ok(&s, "worlds", out, sizeof out);
    assert_non_null(strstr(out, "map Arena"));

    harness_wait_metric(&s, "reap_travels_total{mode=\"hard\"}", HARNESS_GE, 2, 20.0);

    assert_true(harness_proc_wait_for_text(&s.proc, "match over after 1 s: travelling to Docks",
                                           5.0));
    assert_true(harness_proc_wait_for_text(&s.proc, "match over after 1 s: travelling to Arena",
                                           5.0));
    assert_int_equal(harness_server_metric(&s, "reap_world_leaked_worlds"), 0);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

/* The thin client (one session) does not follow a travel: it must never crash on one, and a
 * hard travel's disconnect is its server lost. The churn bots follow a seamless travel
 * (tests/integration/test_load_travel.c tests them across both kinds): no error. */
static void test_the_existing_client_survives_both_travels_without_crashing(void **state)
{
    harness_server s;
    harness_proc thin, churn;
    char out[2048], dir[] = "/tmp/reap-travel-churn-XXXXXX";

    (void)state;
    start(&s, NULL);
    assert_non_null(mkdtemp(dir));
    const char *const thin_args[] = { "--server", s.endpoint, "--spawn", "2", "--hold", "30",
                                      "--timeout", "5", NULL };
    harness_proc_start(&thin, "reap-client", thin_args);
    assert_true(harness_proc_wait_for_text(&thin, "replicated", 10.0));
    console_ok(&s, "servertravel Default hard", out, sizeof out);
    if (!harness_proc_wait(&thin, 20.0))
        fail_msg("the thin client did not end after a hard travel:\n%s", thin.out);
    /* It lost its server: an ordinary failure (1), not a crash. */
    assert_int_equal(thin.status, 1);
    harness_proc_free(&thin);

    const char *const churn_args[] = { "--server", s.endpoint, "--bots", "4", "--duration", "4",
                                       "--hold", "1", "--quiet", "--out", dir, NULL };
    harness_proc_start(&churn, "reap-client", churn_args);
    harness_wait_metric(&s, "reap_players_connected", HARNESS_GE, 1, 10.0);
    console_ok(&s, "servertravel Default seamless", out, sizeof out);
    if (!harness_proc_wait(&churn, 60.0))
        fail_msg("the churn did not end:\n%s", churn.out);
    assert_int_equal(churn.status, 0);
    assert_non_null(strstr(churn.out, "churn done"));
    assert_non_null(strstr(churn.out, " 0 errors, "));
    harness_proc_free(&churn);
    harness_wait_metric(&s, "reap_travels_total{mode=\"seamless\"}", HARNESS_EQ, 1, 5.0);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_hard_travel_tells_and_disconnects_every_client_who_then_rejoins),
        cmocka_unit_test(test_a_seamless_travel_keeps_the_client_and_sends_the_new_world),
        cmocka_unit_test(
            test_the_leaky_profile_leaks_its_world_with_the_chain_through_the_game_instance),
        cmocka_unit_test(test_severity_3_stops_the_server_with_exit_status_3),
        cmocka_unit_test(test_a_bad_travel_request_changes_nothing),
        cmocka_unit_test(test_a_bad_map_section_or_map_stops_the_server_naming_it),
        cmocka_unit_test(test_match_seconds_travels_through_the_rotation),
        cmocka_unit_test(test_the_existing_client_survives_both_travels_without_crashing),
    };

    if (enet_initialize() != 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
