/*
 * test_console.c - the operator console over POST /console: every command answers, bad
 * commands get a 400 that says why, and `quit` stops the server cleanly.
 */
#include "harness.h"

static char reply[1 << 16];

typedef struct fixture {
    harness_server s;
    harness_proc client;
} fixture;

/* A server with one player holding five props. */
static int setup(void **state)
{
    static fixture fx;

    harness_server_start(&fx.s, NULL);
    const char *args[] = { "--server", fx.s.endpoint, "--name", "ana", "--spawn", "5", "--hold",
                           "60", NULL };
    harness_proc_start(&fx.client, "reap-client", args);
    harness_wait_metric(&fx.s, "reap_world_actors{world=\"World0\"}", HARNESS_EQ, 2 + 2 + 5, 10.0);
    *state = &fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;

    harness_proc_free(&fx->client);
    if (!fx->s.proc.exited)
        harness_server_stop(&fx->s);
    harness_server_free(&fx->s);
    return 0;
}

static void test_help_lists_every_command(void **state)
{
    fixture *fx = *state;
    const char *commands[] = { "obj gc", "obj list", "obj refs", "gc stats", "set", "get",
                               "players", "worlds", "quit" };

    assert_int_equal(harness_console(&fx->s, "help", reply, sizeof reply), 200);

    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        assert_non_null(strstr(reply, commands[i]));
}

static void test_obj_list_filters_by_class_including_subclasses(void **state)
{
    fixture *fx = *state;

    assert_int_equal(harness_console(&fx->s, "obj list class=Prop", reply, sizeof reply), 200);
    assert_non_null(strstr(reply, "5 object(s)"));
    assert_int_equal(harness_console(&fx->s, "obj list class=Actor", reply, sizeof reply), 200);
    /* 2 fixtures, controller, pawn, 5 props and their 5 parts each */
    assert_non_null(strstr(reply, "34 object(s)"));
    assert_int_equal(harness_console(&fx->s, "obj list class=Nope", reply, sizeof reply), 400);
}

static void test_obj_refs_shows_the_chain_from_the_world_root(void **state)
{
    fixture *fx = *state;
    char cmd[160], path[128];

    assert_int_equal(harness_console(&fx->s, "obj list class=Pawn", reply, sizeof reply), 200);
    assert_int_equal(sscanf(reply, "%127s", path), 1);
    snprintf(cmd, sizeof cmd, "obj refs name=%s", path);

    assert_int_equal(harness_console(&fx->s, cmd, reply, sizeof reply), 200);

    assert_non_null(strstr(reply, "World0"));
    assert_non_null(strstr(reply, "Level0"));
    assert_int_equal(harness_console(&fx->s, "obj refs name=World0.Nothing", reply, sizeof reply),
                     400);
}

static void test_set_changes_a_cvar_that_get_then_reports(void **state)
{
    fixture *fx = *state;

    assert_int_equal(harness_console(&fx->s, "set gc.TimeBetweenPurgingPendingKillObjects 2.5",
                                     reply, sizeof reply), 200);
    assert_int_equal(harness_console(&fx->s, "get gc.TimeBetweenPurgingPendingKillObjects",
                                     reply, sizeof reply), 200);

    assert_non_null(strstr(reply, "= 2.5"));
    assert_non_null(strstr(reply, "set by console"));
    harness_wait_metric(&fx->s, "reap_gc_interval_seconds", HARNESS_EQ, 2.5, 5.0);
}

static void test_set_with_a_bad_value_names_the_cvar_and_its_range(void **state)
{
    fixture *fx = *state;

    assert_int_equal(harness_console(&fx->s, "set gc.MinGCClusterSize many", reply,
                                     sizeof reply), 400);

    assert_non_null(strstr(reply, "gc.MinGCClusterSize"));
    assert_non_null(strstr(reply, "[1, 1000000]"));
}

static void test_an_unknown_command_is_a_400_that_suggests_help(void **state)
{
    fixture *fx = *state;

    assert_int_equal(harness_console(&fx->s, "obj explode", reply, sizeof reply), 400);
    assert_non_null(strstr(reply, "unknown command"));
    assert_non_null(strstr(reply, "help"));
    assert_int_equal(harness_http(fx->s.admin_port, "GET", "/console", NULL, reply, sizeof reply),
                     405);
}

static void test_players_and_worlds_describe_who_is_where(void **state)
{
    fixture *fx = *state;

    assert_int_equal(harness_console(&fx->s, "players", reply, sizeof reply), 200);
    assert_non_null(strstr(reply, "ana"));
    assert_non_null(strstr(reply, "1 player(s)"));
    assert_int_equal(harness_console(&fx->s, "worlds", reply, sizeof reply), 200);
    assert_non_null(strstr(reply, "World0"));
    assert_non_null(strstr(reply, "actors=9"));
}

static void test_obj_gc_reports_the_collection_and_gc_stats_counts_it(void **state)
{
    fixture *fx = *state;

    assert_int_equal(harness_console(&fx->s, "obj gc", reply, sizeof reply), 200);
    assert_non_null(strstr(reply, "collected:"));
    assert_int_equal(harness_console(&fx->s, "gc stats", reply, sizeof reply), 200);

    assert_non_null(strstr(reply, "collections:"));
    assert_null(strstr(reply, "collections:           0 "));
}

static void test_quit_stops_the_server_with_exit_status_zero(void **state)
{
    fixture *fx = *state;

    assert_int_equal(harness_console(&fx->s, "quit", reply, sizeof reply), 200);

    assert_true(harness_proc_wait(&fx->s.proc, 10.0));
    assert_int_equal(fx->s.proc.status, 0);
    assert_non_null(strstr(fx->s.proc.out, "stopping (console quit)"));
}


static void test_extra_arguments_are_refused_so_quit_now_does_not_quit(void **state)
{
    fixture *fx = *state;

    assert_int_equal(harness_console(&fx->s, "quit now", reply, sizeof reply), 400);
    assert_non_null(strstr(reply, "usage: quit"));
    assert_int_equal(harness_console(&fx->s, "players all", reply, sizeof reply), 400);
    assert_int_equal(harness_console(&fx->s, "get gc.HistorySize extra", reply, sizeof reply),
                     400);

    assert_int_equal(harness_http(fx->s.admin_port, "GET", "/healthz", NULL, reply, sizeof reply),
                     200);
    assert_string_equal(reply, "ok\n");
}

static void test_ues_console_form_sets_and_prints_a_cvar(void **state)
{
    fixture *fx = *state;

    assert_int_equal(harness_console(&fx->s, "gc.TimeBetweenPurgingPendingKillObjects 5", reply,
                                     sizeof reply), 200);
    harness_wait_metric(&fx->s, "reap_gc_interval_seconds", HARNESS_EQ, 5, 5.0);

    assert_int_equal(harness_console(&fx->s, "gc.timebetweenpurgingpendingkillobjects", reply,
                                     sizeof reply), 200);
    assert_non_null(strstr(reply, "gc.TimeBetweenPurgingPendingKillObjects = 5"));
    assert_non_null(strstr(reply, "set by console"));
}

static void test_a_refused_set_says_so_and_changes_nothing(void **state)
{
    fixture *fx = *state;

    assert_int_equal(harness_console(&fx->s, "set gc.NumWorkerThreads 65", reply, sizeof reply),
                     400);
    assert_non_null(strstr(reply, "gc.NumWorkerThreads"));
    assert_non_null(strstr(reply, "[0, 64]"));
    assert_int_equal(harness_console(&fx->s, "set gc.MinGCClusterSize 0x10", reply,
                                     sizeof reply), 400);

    assert_int_equal(harness_console(&fx->s, "get gc.NumWorkerThreads", reply, sizeof reply), 200);
    assert_non_null(strstr(reply, "gc.NumWorkerThreads = 0 "));
    assert_int_equal(harness_console(&fx->s, "get gc.MinGCClusterSize", reply, sizeof reply), 200);
    assert_non_null(strstr(reply, "gc.MinGCClusterSize = 5 "));
    assert_null(strstr(fx->s.proc.out, "settings refused"));
}

static void test_commands_and_class_names_are_case_insensitive_as_in_ue(void **state)
{
    fixture *fx = *state;

    assert_int_equal(harness_console(&fx->s, "OBJ LIST class=prop", reply, sizeof reply), 200);
    assert_non_null(strstr(reply, "5 object(s)"));
    assert_int_equal(harness_console(&fx->s, "Obj List CLASS=PAWN", reply, sizeof reply), 200);
    assert_non_null(strstr(reply, "1 object(s)"));
    assert_int_equal(harness_console(&fx->s, "Gc Stats", reply, sizeof reply), 200);
    assert_non_null(strstr(reply, "collections:"));
}

static void test_obj_list_ends_with_counts_and_bytes_per_class(void **state)
{
    fixture *fx = *state;
    const char *row;
    unsigned count = 0;
    unsigned long bytes = 0;

    assert_int_equal(harness_console(&fx->s, "obj list class=Prop", reply, sizeof reply), 200);

    row = strstr(reply, "\nProp ");
    assert_non_null(strstr(reply, "class                       count        bytes"));
    assert_non_null(row);
    assert_int_equal(sscanf(row, " Prop %u %lu", &count, &bytes), 2);
    assert_int_equal(count, 5);
    assert_true(bytes > 0 && bytes % 5 == 0);
    assert_non_null(strstr(reply, "bytes in instances of the world's classes"));
}

static void test_stat_gc_is_gc_stats(void **state)
{
    fixture *fx = *state;

    assert_int_equal(harness_console(&fx->s, "stat gc", reply, sizeof reply), 200);
    assert_non_null(strstr(reply, "interval in force:"));
}

static void test_cvars_with_a_prefix_lists_only_those(void **state)
{
    fixture *fx = *state;

    assert_int_equal(harness_console(&fx->s, "cvars net.", reply, sizeof reply), 200);
    assert_non_null(strstr(reply, "net.MaxMessageBytes = "));
    assert_null(strstr(reply, "gc.TimeBetweenPurgingPendingKillObjects"));
    assert_int_equal(harness_console(&fx->s, "cvars nosuch.", reply, sizeof reply), 400);
    assert_non_null(strstr(reply, "no console variable starts with 'nosuch.'"));
}

static void test_a_cvar_followed_by_a_question_mark_prints_its_help(void **state)
{
    fixture *fx = *state;

    assert_int_equal(harness_console(&fx->s, "gc.CreateGCClusters ?", reply, sizeof reply), 200);
    assert_non_null(strstr(reply, "gc.CreateGCClusters = 1 (boolean; default 1"));
}

static void test_the_reply_and_the_log_say_the_same_value(void **state)
{
    fixture *fx = *state;

    assert_int_equal(harness_console(&fx->s, "gc.CreateGCClusters True", reply, sizeof reply),
                     200);
    assert_non_null(strstr(reply, "gc.CreateGCClusters = 1"));
    assert_true(harness_proc_wait_for_text(&fx->s.proc, "console: gc.CreateGCClusters = 1", 5.0));
    assert_null(strstr(fx->s.proc.out, "set to True"));
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_help_lists_every_command),
        T(test_obj_list_filters_by_class_including_subclasses),
        T(test_obj_refs_shows_the_chain_from_the_world_root),
        T(test_set_changes_a_cvar_that_get_then_reports),
        T(test_set_with_a_bad_value_names_the_cvar_and_its_range),
        T(test_an_unknown_command_is_a_400_that_suggests_help),
        T(test_players_and_worlds_describe_who_is_where),
        T(test_obj_gc_reports_the_collection_and_gc_stats_counts_it),
        T(test_extra_arguments_are_refused_so_quit_now_does_not_quit),
        T(test_ues_console_form_sets_and_prints_a_cvar),
        T(test_a_refused_set_says_so_and_changes_nothing),
        T(test_commands_and_class_names_are_case_insensitive_as_in_ue),
        T(test_obj_list_ends_with_counts_and_bytes_per_class),
        T(test_stat_gc_is_gc_stats),
        T(test_cvars_with_a_prefix_lists_only_those),
        T(test_a_cvar_followed_by_a_question_mark_prints_its_help),
        T(test_the_reply_and_the_log_say_the_same_value),
        T(test_quit_stops_the_server_with_exit_status_zero),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
