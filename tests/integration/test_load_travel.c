/*
 * test_load_travel.c - reap-client's churn bots across the server's map travels, against the
 * real server: a scenario whose stages travel (seamless, then hard) through the two maps of
 * deploy/profiles/leaky.ini while the bots churn; the bots follow both travels with exact
 * mirrors (checked right after each), no error and no outage, no world leaks, and the report
 * has a row per match with the server's figures. A server whose hard travel blocks for
 * seconds (UE's LoadMap of a big map) is not "lost" while the bots reconnect. The server's
 * own rotation (--match-seconds) is followed without a scenario's travel key.
 */
#include <sys/stat.h>

#include <enet/enet.h>

#include "harness.h"
#include "test_load_files.h"

static const char leaky[] = "deploy/profiles/leaky.ini";

/* The end of what a process printed (its summary), which a failure message can hold. */
static const char *tail_of(const char *text)
{
    size_t len = strlen(text);

    return len > 2500 ? text + len - 2500 : text;
}

static void start(harness_server *s, const char *const *extra)
{
    harness_server_start(s, extra);
    harness_wait_metric(s, "reap_frames_total", HARNESS_GE, 2, 10.0);
}

/* One reap-client run of a scenario against a server, with --admin: the scenario file and
 * the run's --out in a directory of its own, and what the run printed and wrote. */
typedef struct scenario_run {
    char dir[32], scenario[300], out[100];
    harness_proc proc;      /* its summary in proc.out */
    char *json;             /* its report.json */
} scenario_run;

/* Writes text as the scenario `name`, runs it against s (--seed seed) for at most timeout s
 * and reads its report.json; a run that fails fails the test with the summary's end. */
static void run_scenario(scenario_run *t, harness_server *s, const char *name, const char *text,
                         const char *seed, double timeout)
{
    char admin[64], path[400];
    FILE *f;

    snprintf(t->dir, sizeof t->dir, "/tmp/reap-load-travel-XXXXXX");
    assert_non_null(mkdtemp(t->dir));
    snprintf(t->scenario, sizeof t->scenario, "%s/%s", t->dir, name);
    assert_non_null(f = fopen(t->scenario, "w"));
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    snprintf(admin, sizeof admin, "http://127.0.0.1:%u", s->admin_port);
    snprintf(t->out, sizeof t->out, "%s/out", t->dir);
    const char *const args[] = { "--server", s->endpoint, "--admin", admin, "--scenario",
                                 t->scenario, "--seed", seed, "--out", t->out, NULL };

    int rc = run_client_beside(s, args, timeout, &t->proc);
    if (rc != 0)
        fail_msg("the run failed (%d):\n%s", rc, tail_of(t->proc.out));
    snprintf(path, sizeof path, "%s/report.json", t->out);
    t->json = read_text_file(path);
    assert_non_null(t->json);
}

/* Frees what run_scenario kept and removes its files. */
static void scenario_run_free(scenario_run *t)
{
    free(t->json);
    harness_proc_free(&t->proc);
    remove_dir(t->out);
    unlink(t->scenario);
    rmdir(t->dir);
}

static const char two_travels[] =
    "[scenario]\n"
    "name = two-travels\n"
    "threshold = errors==0\n"
    "threshold = mismatches==0\n"
    "threshold = server_outages==0\n"
    "threshold = leaked_worlds==0\n"
    "\n"
    "[stage arena]\n"
    "duration = 4\n"
    "bots = 12\n"
    "spawn_mix = Crate:3\n"
    "moves = 10\n"
    "hold = 1.5\n"
    "leave = mixed\n"
    "\n"
    "[stage docks]\n"
    "duration = 5\n"
    "bots = 12\n"
    "travel = Docks seamless\n"
    "\n"
    "[stage arena-again]\n"
    "duration = 5\n"
    "bots = 12\n"
    "travel = Arena hard\n";

/* The value of `"key": N` inside the n-th (1-based) object of the report's "matches" list. */
static double match_field(const char *json, int n, const char *key)
{
    const char *p = strstr(json, "\"matches\": [");
    char want[64];

    for (int i = 0; p != NULL && i < n; i++)
        p = strstr(p + 1, "{\"match\": ");
    if (p == NULL)
        return -1;
    snprintf(want, sizeof want, "\"%s\": ", key);
    p = strstr(p, want);
    return p != NULL && strncmp(p + strlen(want), "null", 4) != 0 ? strtod(p + strlen(want), NULL)
                                                                  : -1;
}

/* report.html in a real browser: its script ran, every timeline drew, and the matches are
 * bands on them (three matches: two tinted alike), a table and the memory chart. */
static void page_draws_the_matches(const char *out)
{
    harness_proc dom;
    char url[200];
    const char *body, *drawn_at, *rss;

    snprintf(url, sizeof url, "file://%s/report.html", out);
    if (!harness_chromium(url, "--dump-dom", &dom)) {
        harness_proc_free(&dom);
        return; /* deploy/install-deps.sh installs Debian's chromium */
    }
    body = strstr(dom.out, "<body");
    if (body == NULL || (drawn_at = strstr(body, "data-charts-drawn=\"")) == NULL)
        fail_msg("the page's script did not run; chromium printed:\n%.4000s", dom.out);
    assert_true(strtoul(drawn_at + 19, NULL, 10) >= 8);
    assert_non_null(strstr(body, "<title>match 2: Docks</title>"));
    assert_non_null(strstr(body, "<title>match 3: Arena</title>"));
    assert_true(strstr(body, "class=\"match m1\"") != NULL);
    assert_non_null(strstr(body, "<h2>Matches</h2>"));
    rss = strstr(body, "Server resident memory (MiB): each second, and after each travel");
    assert_non_null(rss);
    assert_true(strstr(rss, "polyline class=\"series\"") < strstr(rss, "</figure>"));
    harness_proc_free(&dom);
}

static void test_churning_bots_follow_a_seamless_and_a_hard_travel_with_exact_mirrors(
    void **state)
{
    const char *const server_args[] = { "--world-profile", leaky, "--map", "Arena", "--cvar",
                                        "net.ConnectionTimeout=2", NULL };
    harness_server s;
    scenario_run t;
    const char *printed, *json;

    (void)state;
    start(&s, server_args);

    run_scenario(&t, &s, "two-travels.ini", two_travels, "7", 60.0);
    printed = t.proc.out;
    json = t.json;

    /* Both travels happened, the bots followed them, and nothing went wrong. */
    assert_int_equal(harness_server_metric(&s, "reap_travels_total{mode=\"seamless\"}"), 1);
    assert_int_equal(harness_server_metric(&s, "reap_travels_total{mode=\"hard\"}"), 1);
    assert_non_null(strstr(printed, "stage docks: servertravel Docks seamless: servertravel: "
                                    "seamless travel to Docks from Arena"));
    assert_non_null(strstr(printed, " 0 errors, "));
    assert_null(strstr(printed, "stopped answering"));
    assert_non_null(strstr(printed, "matches: 3 ("));
    assert_non_null(strstr(printed, "  1   Arena        (start)"));
    assert_non_null(strstr(printed, "  2   Docks        seamless"));
    assert_non_null(strstr(printed, "  3   Arena        hard"));
    assert_int_equal(json_int(json, "errors"), 0);
    assert_int_equal(json_int(json, "mismatch"), 0);
    assert_true(json_int(json, "travels") >= 2 * 6);
    assert_true(json_int(json, "checks") >= json_int(json, "travels"));
    assert_non_null(strstr(json, "\"server_outages\": []"));
    for (int m = 2; m <= 3; m++) {
        /* every bot the travel carried off had the new map's snapshot */
        assert_true(match_field(json, m, "departed") >= 6);
        assert_true(match_field(json, m, "arrived") == match_field(json, m, "departed"));
        assert_true(match_field(json, m, "leaked_worlds") == 0);
        assert_true(match_field(json, m, "objects") > 0);
        assert_true(match_field(json, m, "rss_bytes") > 0);
        assert_true(match_field(json, m, "server_longest_frame_ms") > 0);
    }
    assert_true(match_field(json, 2, "start_seconds") >= 4 &&
                match_field(json, 2, "start_seconds") < 5);
    assert_true(match_field(json, 3, "start_seconds") >= 9 &&
                match_field(json, 3, "start_seconds") < 10);
    assert_int_equal(harness_server_metric(&s, "reap_world_leaked_worlds"), 0);
    page_draws_the_matches(t.out);
    scenario_run_free(&t);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

/* The map of the blocking travel below, and how long the run goes on after it. The travel must
 * block for longer than the client's 2 s of silence: 1500000 props blocked a release build for
 * 1.6 to 2.1 s (measured: too close), so a release build travels 3000000; AddressSanitizer's
 * build takes 1500000 for several seconds, ThreadSanitizer's about 30 s (measured), so it
 * travels a fifth of that, which still blocks it for seconds. ThreadSanitizer's ordinary
 * frames are several times slower too, which admission control rightly sees as load: the
 * check that the travel's frame is not taken for the players' load is left to the others. */
#if defined(__SANITIZE_THREAD__)
#define HARD_TRAVEL_PROPS "300000"
#define HARD_TRAVEL_AFTER "20"
#define HARD_TRAVEL_SEES_LOAD 0
#elif defined(__SANITIZE_ADDRESS__)
#define HARD_TRAVEL_PROPS "1500000"
#define HARD_TRAVEL_AFTER "14"
#define HARD_TRAVEL_SEES_LOAD 1
#else
#define HARD_TRAVEL_PROPS "3000000"
#define HARD_TRAVEL_AFTER "14"
#define HARD_TRAVEL_SEES_LOAD 1
#endif

/* A hard travel of a big map of persistent props, UE's way (blocking): the server is
 * silent for longer than the client's 2 s of silence that make a server lost, while every
 * bot reconnects. */
static void test_a_hard_travel_that_blocks_for_seconds_is_not_an_outage(void **state)
{
    const char *const server_args[] = { "--cvar", "world.PersistentProps=" HARD_TRAVEL_PROPS,
                                        NULL };
    harness_server s;
    scenario_run t;
    const char *json;

    (void)state;
    harness_server_start(&s, server_args);
    harness_wait_metric(&s, "reap_frames_total", HARNESS_GE, 2, 60.0);

    run_scenario(&t, &s, "hard.ini", "[scenario]\n\n[stage a]\nduration = 3\nbots = 6\n"
                 "spawn = 2\nhold = 30\n\n[stage b]\nduration = " HARD_TRAVEL_AFTER
                 "\nbots = 6\ntravel = Default hard\n", "3", 120.0);
    json = t.json;

    /* The travel did block for longer than the silence that makes a server lost, */
    assert_true(harness_server_metric(&s, "reap_travel_last_longest_frame_seconds") > 2.0);
    /* and the run held it a travel: no outage, no error, every bot back. */
    assert_null(strstr(t.proc.out, "stopped answering"));
    assert_non_null(strstr(t.proc.out, " 0 errors, "));
    assert_non_null(strstr(json, "\"server_outages\": []"));
    assert_int_equal(json_int(json, "travels"), 6);
    assert_true(match_field(json, 2, "arrived") == 6);
    /* The travel's long frame was not the players' load: the reconnecting bots were not
     * refused as busy. */
    if (HARD_TRAVEL_SEES_LOAD)
        assert_true(harness_server_metric(&s, "reap_net_refused_joins_total{reason=\"busy\"}") ==
                    0);
    scenario_run_free(&t);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

/* The server's own match cycle (--match-seconds, hard travels through its rotation): the bots
 * follow every travel without being told, and the report has a match for each. */
static void test_the_server_s_rotation_is_followed_without_a_travel_key(void **state)
{
    const char *const server_args[] = { "--world-profile", leaky, "--map-rotation",
                                        "Arena, Docks", "--match-seconds", "3", "--cvar",
                                        "net.ConnectionTimeout=2", NULL };
    harness_server s;
    scenario_run t;
    const char *json;

    (void)state;
    start(&s, server_args);

    run_scenario(&t, &s, "rotation.ini", "[scenario]\nmatch_seconds = 3\n"
                 "threshold = errors==0\n\n[stage a]\nduration = 8\nbots = 6\n"
                 "spawn_mix = Crate:2\nhold = 2\n", "5", 60.0);
    json = t.json;

    assert_non_null(strstr(t.proc.out, "expected match length: 3 s (match_seconds)"));
    assert_true(json_int(json, "travels") >= 6);
    assert_true(match_field(json, 3, "start_seconds") > 0); /* two travels at least */
    assert_true(match_field(json, 2, "arrived") >= 1);
    assert_non_null(strstr(json, "\"match_seconds\": 3,"));
    assert_non_null(strstr(json, "\"server_outages\": []"));
    scenario_run_free(&t);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_churning_bots_follow_a_seamless_and_a_hard_travel_with_exact_mirrors),
        cmocka_unit_test(test_a_hard_travel_that_blocks_for_seconds_is_not_an_outage),
        cmocka_unit_test(test_the_server_s_rotation_is_followed_without_a_travel_key),
    };

    if (enet_initialize() != 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
