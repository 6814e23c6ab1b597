/*
 * test_client_scenario.c - the churn generator's scenario files, its stages over time, the
 * --threshold rules, and the options that go with them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Writes text to a fresh temporary file; returns its path (static storage). */
static const char *scenario_file(const char *text)
{
    static char path[64];
    FILE *f;
    int fd;

    snprintf(path, sizeof path, "/tmp/reap-scenario-XXXXXX");
    fd = mkstemp(path);
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
    return path;
}

static bool load(client_options *o, const char *text, char *err)
{
    const char *path = scenario_file(text);
    bool ok;

    client_options_default(o);
    err[0] = '\0';
    ok = client_scenario_load(o, path, err, 512);
    unlink(path);
    return ok;
}

static const char three_stages[] =
    "[scenario]\n"
    "name = demo\n"
    "threshold = errors==0\n"
    "\n"
    "[stage up]\n"
    "duration = 10\n"
    "bots = 100\n"
    "ramp = linear\n"
    "spawn = 4\n"
    "moves = 5\n"
    "hold = 2\n"
    "leave = abrupt\n"
    "\n"
    "[stage plateau]\n"
    "duration = 20\n"
    "bots = 100\n"
    "projectiles = 1\n"
    "\n"
    "[stage leave]\n"
    "duration = 5\n"
    "bots = 0\n";

static void test_a_scenario_file_becomes_its_stages_in_order(void **state)
{
    client_options o;
    char err[512];

    (void)state;
    assert_true(load(&o, three_stages, err));

    assert_string_equal(o.scenario_name, "demo");
    assert_int_equal(o.n_stages, 3);
    assert_string_equal(o.stages[0].name, "up");
    assert_string_equal(o.stages[2].name, "leave");
    assert_int_equal(o.bots, 100);
    assert_true(o.duration == 35);
    assert_int_equal(o.n_thresholds, 1);
    assert_string_equal(o.thresholds[0].metric, "errors");
}

static void test_a_stage_inherits_what_it_does_not_set_from_the_one_before(void **state)
{
    client_options o;
    char err[512];

    (void)state;
    assert_true(load(&o, three_stages, err));

    assert_int_equal(o.stages[1].spawn, 4);
    assert_true(o.stages[1].move_hz == 5);
    assert_true(o.stages[1].hold == 2);
    assert_int_equal(o.stages[1].leave, CLIENT_DISCONNECT_ABRUPT);
    assert_true(o.stages[1].projectile_hz == 1);
    assert_true(o.stages[0].projectile_hz == 0);
}

static void test_a_linear_ramp_rises_from_the_previous_stage_and_a_step_is_immediate(void **state)
{
    client_options o;
    char err[512];
    uint32_t stage;

    (void)state;
    assert_true(load(&o, three_stages, err));

    assert_int_equal(client_stages_target(o.stages, o.n_stages, 0, &stage), 0);
    assert_int_equal(stage, 0);
    assert_int_equal(client_stages_target(o.stages, o.n_stages, 5, &stage), 50);
    assert_int_equal(client_stages_target(o.stages, o.n_stages, 15, &stage), 100);
    assert_int_equal(stage, 1);
    /* everyone leaves at once */
    assert_int_equal(client_stages_target(o.stages, o.n_stages, 30.5, &stage), 0);
    assert_int_equal(stage, 2);
    assert_int_equal(client_stages_target(o.stages, o.n_stages, 99, &stage), 0);
}

static void test_a_bad_value_is_refused_naming_the_file_line_and_key(void **state)
{
    client_options o;
    char err[512];

    (void)state;
    assert_false(load(&o, "[scenario]\nname = x\n\n[stage a]\nduration = 5\nbots = lots\n", err));

    assert_non_null(strstr(err, "/tmp/reap-scenario-"));
    assert_non_null(strstr(err, ":6: bad value 'lots' for bots"));
}

static void test_a_spawn_mix_is_read_per_stage_inherited_and_cleared_by_none(void **state)
{
    client_options o;
    char err[512];

    (void)state;
    assert_true(load(&o, "[scenario]\nname = m\n[stage a]\nduration = 5\nbots = 2\n"
                         "spawn_mix = Weapon:2, Inventory:1\n[stage b]\nduration = 5\n"
                         "bots = 2\n[stage c]\nduration = 5\nbots = 2\nspawn_mix = none\n",
                     err));

    assert_int_equal(o.stages[0].mix.n, 2);
    assert_string_equal(o.stages[0].mix.name[1], "Inventory");
    assert_int_equal(client_spawn_mix_total(&o.stages[0].mix), 3);
    assert_int_equal(o.stages[1].mix.n, 2);
    assert_int_equal(o.stages[2].mix.n, 0);
}

static void test_a_bad_spawn_mix_names_the_line_and_the_bad_entry(void **state)
{
    client_options o;
    client_spawn_mix m;
    char err[512];

    (void)state;
    assert_false(load(&o, "[scenario]\nname = x\n[stage a]\nduration = 5\nbots = 2\n"
                          "spawn_mix = Weapon:2,Ammo:0\n", err));
    assert_non_null(strstr(err, ":6: bad value 'Weapon:2,Ammo:0' for spawn_mix"));
    assert_non_null(strstr(err, "'Ammo:0': the count must be an integer in [1, 1000]"));

    assert_false(client_spawn_mix_parse("Gun-1:2", &m, err, sizeof err));
    assert_non_null(strstr(err, "'Gun-1:2': expected NAME:N"));
    assert_false(client_spawn_mix_parse("Gun:1,Gun:2", &m, err, sizeof err));
    assert_non_null(strstr(err, "'Gun' is named twice"));
    assert_false(client_spawn_mix_parse("Gun:1,", &m, err, sizeof err));
    assert_false(client_spawn_mix_parse("Gun", &m, err, sizeof err));
    assert_true(client_spawn_mix_parse("Gun:1000", &m, err, sizeof err));
    assert_int_equal(m.count[0], 1000);
}

static void test_an_unknown_key_or_section_is_refused_naming_the_line(void **state)
{
    client_options o;
    char err[512];

    (void)state;
    assert_false(load(&o, "[stage a]\nduration = 5\nbots = 3\nspeed = 9\n", err));
    assert_non_null(strstr(err, ":4: unknown key 'speed'"));

    assert_false(load(&o, "[stages]\nduration = 5\n", err));
    assert_non_null(strstr(err, ":2: unknown section [stages]"));
}

static void test_a_stage_without_a_duration_or_a_scenario_without_bots_is_refused(void **state)
{
    client_options o;
    char err[512];

    (void)state;
    assert_false(load(&o, "[stage a]\nbots = 3\n", err));
    assert_non_null(strstr(err, "stage 'a' has no duration"));

    assert_false(load(&o, "[stage a]\nduration = 3\n", err));
    assert_non_null(strstr(err, "no stage has any bots"));
}

static void test_a_missing_scenario_file_is_named(void **state)
{
    client_options o;
    char err[512];

    (void)state;
    client_options_default(&o);
    assert_false(client_scenario_load(&o, "/nonexistent/x.ini", err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent/x.ini"));
}

static void test_the_shipped_scenarios_load(void **state)
{
    static const char *const files[] = {
        "deploy/scenarios/smoke.ini", "deploy/scenarios/churn.ini",
        "deploy/scenarios/mass-leave.ini", "deploy/scenarios/spike.ini",
        "deploy/scenarios/bad-network.ini", "deploy/scenarios/shooter.ini",
        "deploy/scenarios/mmo.ini", "deploy/scenarios/deep.ini",
        "deploy/scenarios/matches.ini",
    };
    client_options o;
    char err[512];

    (void)state;
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        client_options_default(&o);
        snprintf(o.admin_url, sizeof o.admin_url, "http://127.0.0.1:7780"); /* travel's */
        if (!client_scenario_load(&o, files[i], err, sizeof err))
            fail_msg("%s: %s", files[i], err);
        assert_true(o.n_stages >= 2);
        assert_true(o.bots > 0);
    }
}

static bool load_with_admin(client_options *o, const char *text, char *err)
{
    const char *path = scenario_file(text);
    bool ok;

    client_options_default(o);
    snprintf(o->admin_url, sizeof o->admin_url, "http://127.0.0.1:7780");
    err[0] = '\0';
    ok = client_scenario_load(o, path, err, 512);
    unlink(path);
    return ok;
}

static void test_a_stage_travel_is_its_own_and_match_seconds_the_run_s(void **state)
{
    client_options o;
    char err[512];

    (void)state;
    if (!load_with_admin(&o, "[scenario]\nmatch_seconds = 60\n\n[stage a]\nduration = 5\n"
                             "bots = 4\n\n[stage b]\nduration = 5\ntravel = Docks seamless\n\n"
                             "[stage c]\nduration = 5\n\n[stage d]\nduration = 5\n"
                             "travel = Arena\n\n[stage e]\nduration = 5\ntravel = Arena hard\n",
                         err))
        fail_msg("%s", err);

    assert_true(o.match_seconds == 60);
    assert_string_equal(o.stages[0].travel_map, "");
    assert_string_equal(o.stages[1].travel_map, "Docks");
    assert_int_equal(o.stages[1].travel_mode, CLIENT_TRAVEL_SEAMLESS);
    assert_string_equal(o.stages[2].travel_map, ""); /* not inherited */
    assert_string_equal(o.stages[3].travel_map, "Arena");
    assert_int_equal(o.stages[3].travel_mode, CLIENT_TRAVEL_DEFAULT);
    assert_int_equal(o.stages[4].travel_mode, CLIENT_TRAVEL_HARD);
}

static void test_a_travel_without_admin_is_refused_naming_the_file_line_and_key(void **state)
{
    client_options o;
    char err[512];

    (void)state;
    assert_false(load(&o, "[scenario]\n\n[stage a]\nduration = 5\nbots = 4\n"
                          "travel = Docks seamless\n", err));

    assert_non_null(strstr(err, "/tmp/reap-scenario-"));
    assert_non_null(strstr(err, ":6: travel = Docks seamless needs --admin URL"));
}

static void test_a_bad_travel_or_match_seconds_names_the_line_and_key(void **state)
{
    client_options o;
    char err[512];

    (void)state;
    assert_false(load_with_admin(&o, "[scenario]\n\n[stage a]\nduration = 5\nbots = 4\n"
                                     "travel = Docks sideways\n", err));
    assert_non_null(strstr(err, ":6: bad value 'Docks sideways' for travel: 'sideways' is not "
                                "a travel mode"));
    assert_false(load_with_admin(&o, "[scenario]\n\n[stage a]\nduration = 5\nbots = 4\n"
                                     "travel = Do-cks\n", err));
    assert_non_null(strstr(err, ":6: bad value 'Do-cks' for travel: expected MAP"));
    assert_false(load_with_admin(&o, "[scenario]\nmatch_seconds = soon\n\n[stage a]\n"
                                     "duration = 5\nbots = 4\n", err));
    assert_non_null(strstr(err, ":2: bad value 'soon' for match_seconds: expected seconds"));
}

static void test_thresholds_parse_units_into_seconds_and_compare(void **state)
{
    client_threshold t;
    char err[256];

    (void)state;
    assert_true(client_threshold_parse("join_p99<500ms", &t, err, sizeof err));
    assert_string_equal(t.metric, "join_p99");
    assert_int_equal(t.cmp, CLIENT_CMP_LT);
    assert_true(t.value == 0.5);
    assert_true(client_threshold_check(&t, 0.499));
    assert_false(client_threshold_check(&t, 0.5));

    assert_true(client_threshold_parse("errors==0", &t, err, sizeof err));
    assert_true(client_threshold_check(&t, 0));
    assert_false(client_threshold_check(&t, 1));

    assert_true(client_threshold_parse("server_fps >= 29.5", &t, err, sizeof err));
    assert_int_equal(t.cmp, CLIENT_CMP_GE);
    assert_true(client_threshold_parse("rtt_p95<=250us", &t, err, sizeof err));
    assert_true(t.value == 250e-6);
    assert_true(client_threshold_parse("error_rate<1%", &t, err, sizeof err));
    assert_true(t.value == 0.01);
}

static void test_every_figure_the_help_names_is_a_threshold_of_its_kind(void **state)
{
    static const char *const counts[] = {
        "refused_busy==0", "server_outages==0", "server_rss_peak<200000000",
        "server_bytes_per_connection<5000", "server_fps>=29.5", "server_collections>0",
    };
    client_threshold t;
    char err[256];

    (void)state;
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
        if (!client_threshold_parse(counts[i], &t, err, sizeof err))
            fail_msg("%s: %s", counts[i], err);
    assert_false(client_threshold_parse("server_outages<1s", &t, err, sizeof err));
    assert_non_null(strstr(err, "is a count"));
    assert_true(client_threshold_parse("server_outage_seconds<500ms", &t, err, sizeof err));
    assert_true(t.value == 0.5);
}

static void test_a_bad_threshold_is_refused_with_the_reason(void **state)
{
    client_threshold t;
    char err[256];

    (void)state;
    assert_false(client_threshold_parse("latency<5ms", &t, err, sizeof err));
    assert_non_null(strstr(err, "unknown figure 'latency'"));
    assert_false(client_threshold_parse("join_p99~5ms", &t, err, sizeof err));
    assert_non_null(strstr(err, "expected an operator"));
    assert_false(client_threshold_parse("join_p99<fast", &t, err, sizeof err));
    assert_non_null(strstr(err, "expected a number"));
    assert_false(client_threshold_parse("join_p99<5hours", &t, err, sizeof err));
    assert_non_null(strstr(err, "unknown unit 'hours'"));
}

static void test_a_latency_threshold_refuses_a_percentage(void **state)
{
    client_threshold t;
    char err[256];

    (void)state;
    assert_false(client_threshold_parse("join_p99<5%", &t, err, sizeof err));
    assert_non_null(strstr(err, "'join_p99' is a time"));
    assert_false(client_threshold_parse("server_tick_p99<5%", &t, err, sizeof err));
    assert_false(client_threshold_parse("errors<5ms", &t, err, sizeof err));
    assert_non_null(strstr(err, "'errors' is a count"));
    assert_false(client_threshold_parse("error_rate<5ms", &t, err, sizeof err));
    assert_non_null(strstr(err, "'error_rate' is a fraction"));
    assert_true(client_threshold_parse("join_count>10", &t, err, sizeof err));
}

static void test_a_threshold_value_is_printed_in_the_unit_it_was_written_in(void **state)
{
    client_threshold t;
    char err[256], shown[48];

    (void)state;
    assert_true(client_threshold_parse("join_p99<1us", &t, err, sizeof err));
    client_threshold_format(&t, 0.03309, shown, sizeof shown);
    assert_string_equal(shown, "33090us");
    assert_true(client_threshold_parse("join_p99<500ms", &t, err, sizeof err));
    client_threshold_format(&t, 0.01234, shown, sizeof shown);
    assert_string_equal(shown, "12.34ms");
    assert_true(client_threshold_parse("error_rate<1%", &t, err, sizeof err));
    client_threshold_format(&t, 0.0025, shown, sizeof shown);
    assert_string_equal(shown, "0.25%");
    assert_true(client_threshold_parse("errors==0", &t, err, sizeof err));
    client_threshold_format(&t, 3, shown, sizeof shown);
    assert_string_equal(shown, "3");
}

static void test_scenario_and_single_stage_flags_conflict(void **state)
{
    char *argv[] = { "reap-client", "--server", "127.0.0.1:7777", "--scenario",
                     "deploy/scenarios/smoke.ini", "--bots", "5" };
    client_options o;
    char err[256];

    (void)state;
    client_options_default(&o);
    assert_int_equal(client_options_parse(&o, ARGC(argv), argv, err, sizeof err),
                     CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "--bots conflicts with --scenario"));
}

static void test_churn_flags_make_one_stage_with_moves_at_ten_hertz_by_default(void **state)
{
    char *argv[] = { "reap-client", "--server", "127.0.0.1:7777", "--bots", "50",
                     "--duration", "30", "--shard", "1/4", "--threshold", "errors==0",
                     "--admin", "http://127.0.0.1:7780" };
    client_options o;
    char err[256];

    (void)state;
    client_options_default(&o);
    assert_int_equal(client_options_parse(&o, ARGC(argv), argv, err, sizeof err),
                     CLIENT_OPTIONS_OK);

    assert_int_equal(o.n_stages, 1);
    assert_int_equal(o.stages[0].bots_to, 50);
    assert_true(o.stages[0].move_hz == 10);
    assert_true(o.stages[0].hold == 10);
    assert_int_equal(o.stages[0].spawn, 10);
    assert_int_equal(o.shard, 1);
    assert_int_equal(o.shards, 4);
    assert_int_equal(o.n_thresholds, 1);
    assert_string_equal(o.admin_url, "http://127.0.0.1:7780");
}

static void test_bad_churn_flag_values_are_named(void **state)
{
    static const char *const cases[][2] = {
        { "--shard", "4/4" }, { "--shard", "x" }, { "--move-rate", "61" },
        { "--projectile-rate", "-1" }, { "--admin", "127.0.0.1:7780" },
        { "--threshold", "nonsense" },
    };
    client_options o;
    char err[256];

    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *argv[] = { "reap-client", "--server", "127.0.0.1:7777", "--bots", "5",
                         "--duration", "5", (char *)cases[i][0], (char *)cases[i][1] };
        client_options_default(&o);
        assert_int_equal(client_options_parse(&o, ARGC(argv), argv, err, sizeof err),
                         CLIENT_OPTIONS_ERROR);
        if (strstr(err, cases[i][0]) == NULL && strstr(err, cases[i][1]) == NULL)
            fail_msg("the error for %s %s names neither: %s", cases[i][0], cases[i][1], err);
    }
}

static void test_the_checkpoint_period_is_ten_seconds_unless_a_scenario_or_the_flag_says(
    void **state)
{
    char path[128];
    const char *file = scenario_file("[scenario]\ncheckpoint = 30\n[stage a]\nduration = 5\n"
                                     "bots = 5\n");
    char *with_flag[] = { "reap-client", "--server", "127.0.0.1:7777", "--scenario", path,
                          "--checkpoint", "0" };
    char *bad[] = { "reap-client", "--server", "127.0.0.1:7777", "--bots", "5", "--duration",
                    "5", "--checkpoint", "-1" };
    client_options o;
    char err[512];

    (void)state;
    snprintf(path, sizeof path, "%s", file);
    client_options_default(&o);
    assert_true(o.checkpoint_period == 10);

    assert_true(client_scenario_load(&o, path, err, sizeof err));
    assert_true(o.checkpoint_period == 30);
    client_options_default(&o);
    assert_int_equal(client_options_parse(&o, ARGC(with_flag), with_flag, err, sizeof err),
                     CLIENT_OPTIONS_OK);
    assert_true(o.checkpoint_period == 0);             /* the flag wins: only at the end */
    client_options_default(&o);
    assert_int_equal(client_options_parse(&o, ARGC(bad), bad, err, sizeof err),
                     CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "bad value '-1' for --checkpoint"));
    assert_false(load(&o, "[scenario]\ncheckpoint = often\n", err));
    assert_non_null(strstr(err, "checkpoint"));
    unlink(path);
}

static void test_a_scenario_sets_the_source_addresses_unless_the_flag_says(void **state)
{
    char path[128];
    const char *file = scenario_file("[scenario]\nsource_addresses = one\n[stage a]\n"
                                     "duration = 5\nbots = 5\n");
    char *with_flag[] = { "reap-client", "--server", "127.0.0.1:7777", "--scenario", path,
                          "--source-addresses", "auto" };
    client_options o;
    char err[512];

    (void)state;
    snprintf(path, sizeof path, "%s", file);
    client_options_default(&o);
    assert_true(client_scenario_load(&o, path, err, sizeof err));
    assert_int_equal(o.source_addresses, CLIENT_SOURCE_ONE);
    client_options_default(&o);
    assert_int_equal(client_options_parse(&o, ARGC(with_flag), with_flag, err, sizeof err),
                     CLIENT_OPTIONS_OK);
    assert_int_equal(o.source_addresses, CLIENT_SOURCE_AUTO); /* the flag wins */
    assert_false(load(&o, "[scenario]\nsource_addresses = all\n[stage a]\nduration = 5\n"
                      "bots = 5\n", err));
    assert_non_null(strstr(err, ":2: bad value 'all' for source_addresses: expected auto or one"));
    unlink(path);
}

static void test_a_stage_impairment_is_inherited_and_overrides_the_command_line(void **state)
{
    static const char text[] =
        "[stage calm]\nduration = 5\nbots = 10\n"
        "[stage storm]\nduration = 5\nbots = 10\nimpair = loss=5%,latency=80ms\n"
        "[stage after]\nduration = 5\nbots = 10\n"
        "[stage clear]\nduration = 5\nbots = 10\nimpair = none\n";
    const char *path = scenario_file(text);
    char *argv[] = { "reap-client", "--server", "h:1", "--impair", "latency=20ms", "--scenario",
                     (char *)path };
    client_options o;
    char err[512];

    (void)state;
    client_options_default(&o);
    assert_int_equal(client_options_parse(&o, ARGC(argv), argv, err, sizeof err),
                     CLIENT_OPTIONS_OK);
    unlink(path);

    assert_int_equal(o.n_stages, 4);
    assert_true(o.stages[0].impair.latency == 0.02);          /* --impair */
    assert_true(o.stages[1].impair.latency == 0.08 && o.stages[1].impair.loss == 0.05);
    assert_true(o.stages[2].impair.latency == 0.08);          /* inherited */
    assert_false(client_impair_active(&o.stages[3].impair));
}

static void test_a_bad_stage_impairment_names_the_file_and_line(void **state)
{
    client_options o;
    char err[512];

    (void)state;
    assert_false(load(&o, "[stage a]\nduration = 5\nbots = 3\nimpair = loss=lots\n", err));
    assert_non_null(strstr(err, ":4:"));
    assert_non_null(strstr(err, "'loss=lots' for impair"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_checkpoint_period_is_ten_seconds_unless_a_scenario_or_the_flag_says),
        cmocka_unit_test(test_a_scenario_sets_the_source_addresses_unless_the_flag_says),
        cmocka_unit_test(test_a_stage_impairment_is_inherited_and_overrides_the_command_line),
        cmocka_unit_test(test_a_bad_stage_impairment_names_the_file_and_line),
        cmocka_unit_test(test_a_scenario_file_becomes_its_stages_in_order),
        cmocka_unit_test(test_a_stage_inherits_what_it_does_not_set_from_the_one_before),
        cmocka_unit_test(test_a_linear_ramp_rises_from_the_previous_stage_and_a_step_is_immediate),
        cmocka_unit_test(test_a_bad_value_is_refused_naming_the_file_line_and_key),
        cmocka_unit_test(test_an_unknown_key_or_section_is_refused_naming_the_line),
        cmocka_unit_test(test_a_stage_without_a_duration_or_a_scenario_without_bots_is_refused),
        cmocka_unit_test(test_a_missing_scenario_file_is_named),
        cmocka_unit_test(test_a_spawn_mix_is_read_per_stage_inherited_and_cleared_by_none),
        cmocka_unit_test(test_a_bad_spawn_mix_names_the_line_and_the_bad_entry),
        cmocka_unit_test(test_the_shipped_scenarios_load),
        cmocka_unit_test(test_thresholds_parse_units_into_seconds_and_compare),
        cmocka_unit_test(test_every_figure_the_help_names_is_a_threshold_of_its_kind),
        cmocka_unit_test(test_a_bad_threshold_is_refused_with_the_reason),
        cmocka_unit_test(test_a_latency_threshold_refuses_a_percentage),
        cmocka_unit_test(test_a_threshold_value_is_printed_in_the_unit_it_was_written_in),
        cmocka_unit_test(test_a_stage_travel_is_its_own_and_match_seconds_the_run_s),
        cmocka_unit_test(test_a_travel_without_admin_is_refused_naming_the_file_line_and_key),
        cmocka_unit_test(test_a_bad_travel_or_match_seconds_names_the_line_and_key),
        cmocka_unit_test(test_scenario_and_single_stage_flags_conflict),
        cmocka_unit_test(test_churn_flags_make_one_stage_with_moves_at_ten_hertz_by_default),
        cmocka_unit_test(test_bad_churn_flag_values_are_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
