/*
 * test_client_churn.c - the churn load generator's command line, and the timeline it writes
 * (JSON rows and the SVG picture), checked without a server.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "churn_bot.h"
#include "cli.h"
#include "report.h"

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])))

static client_options_result parse(client_options *o, int argc, char **argv, char *err)
{
    client_options_default(o);
    err[0] = '\0';
    return client_options_parse(o, argc, argv, err, 256);
}

/* Counts non-overlapping occurrences of needle in hay. */
static int count_of(const char *hay, const char *needle)
{
    int n = 0;

    for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + strlen(needle), needle))
        n++;
    return n;
}

/* Renders with writer into a malloc'ed, NUL-terminated string. */
static char *render(bool (*writer)(const churn_timeline *, FILE *), const churn_timeline *tl)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    assert_true(writer(tl, f));
    assert_int_equal(fclose(f), 0);
    assert_non_null(buf);
    return buf;
}

/* A four-second run: bots join, objects rise, two collections bring them down. */
static void timeline_fixture(churn_timeline *tl)
{
    static const uint32_t objects[] = { 300, 900, 600, 700 };
    static const uint32_t connected[] = { 10, 18, 20, 0 };

    churn_timeline_init(tl);
    snprintf(tl->server, sizeof tl->server, "127.0.0.1:7777");
    tl->bots = 20;
    tl->duration = 4;
    tl->spawn = 10;
    tl->hold = 0.5;
    tl->disconnect = "mixed";
    tl->seed = 7;
    for (uint32_t i = 0; i < 4; i++) {
        churn_row r;
        memset(&r, 0, sizeof r);
        r.t = i + 1.0;
        r.connected = connected[i];
        r.joins = 12;
        r.leaves = 8;
        r.spawned = 120;
        r.have_server = i > 0; /* the first second had no stats reply yet */
        r.server_objects = objects[i];
        r.collections = i;
        r.gc_interval = 1;
        assert_true(churn_timeline_add_row(tl, &r));
    }
    assert_true(churn_timeline_add_gc(tl, 1.5));
    assert_true(churn_timeline_add_gc(tl, 2.6));
}

/* ---- the command line --------------------------------------------------------------------- */

static void test_the_random_walk_keeps_a_visit_s_speed_and_turns_its_heading_a_little(void **state)
{
    churn_move m;
    uint64_t rng = 7;
    float vx, vy;
    double speed, heading;

    (void)state;
    churn_move_begin(&m, CLIENT_MOVE_RANDOM, 0, 0);
    churn_move_next(&m, true, &rng, 0.0, &vx, &vy);
    speed = m.speed;
    heading = m.heading;
    assert_true(speed >= 0.25 * CHURN_SPEED_LIMIT && speed <= 0.9 * CHURN_SPEED_LIMIT);
    assert_true(fabs(sqrt((double)vx * vx + (double)vy * vy) - speed) < 1e-3 * speed);

    for (int i = 0; i < 100; i++) {
        churn_move_next(&m, false, &rng, 0.1 * i, &vx, &vy);
        assert_true(m.speed == speed);                 /* the visit's own speed */
        assert_true(fabs(m.heading - heading) <= 0.6); /* a turn of at most 0.6 rad */
        heading = m.heading;
    }
}

static void test_a_roaming_pawn_goes_straight_at_the_servers_speed_limit(void **state)
{
    churn_move m;
    uint64_t rng = 11;
    float vx, vy, vx0, vy0;

    (void)state;
    churn_move_begin(&m, CLIENT_MOVE_ROAM, 900, 100000);
    churn_move_place(&m, 0, 0, 0.0);
    churn_move_next(&m, true, &rng, 0.0, &vx0, &vy0);
    /* at the limit the Welcome gave, never over it */
    assert_true(sqrt((double)vx0 * vx0 + (double)vy0 * vy0) <= 900.0);
    assert_true(sqrt((double)vx0 * vx0 + (double)vy0 * vy0) > 0.99 * 900.0);

    for (int i = 1; i <= 10; i++) {
        churn_move_next(&m, false, &rng, 0.1 * i, &vx, &vy);
        assert_true(vx == vx0 && vy == vy0); /* far from the edge: a straight line */
    }
    assert_true(fabs(m.x - vx0 * 1.0) < 1e-3 && fabs(m.y - vy0 * 1.0) < 1e-3);
}

static void test_a_roaming_pawn_turns_back_before_the_worlds_edge(void **state)
{
    churn_move m;
    uint64_t rng = 3;
    float vx, vy;
    double t = 0;
    bool turned_x = false, turned_y = false;

    (void)state;
    /* a 20000-unit world: the edge is 10000 from the centre, crossed in under 12 s at 1200 */
    churn_move_begin(&m, CLIENT_MOVE_ROAM, 0, 20000);
    churn_move_place(&m, 0, 0, 0.0);
    churn_move_next(&m, true, &rng, t, &vx, &vy);
    for (int i = 0; i < 600; i++) {
        float px = vx, py = vy;

        t += 0.1;
        churn_move_next(&m, false, &rng, t, &vx, &vy);
        turned_x |= (px > 0) != (vx > 0);
        turned_y |= (py > 0) != (vy > 0);
        /* the reckoned pawn never leaves the square */
        assert_true(fabs(m.x) <= 10000 && fabs(m.y) <= 10000);
    }
    /* a minute of roaming bounces off both pairs of edges */
    assert_true(turned_x && turned_y);
    assert_true(fabs(sqrt((double)vx * vx + (double)vy * vy) - 0.999 * CHURN_SPEED_LIMIT) < 1);
}

static void test_move_patterns_read_and_name_themselves(void **state)
{
    client_move_pattern p;

    (void)state;
    assert_true(client_move_pattern_parse("roam", &p));
    assert_int_equal(p, CLIENT_MOVE_ROAM);
    assert_string_equal(client_move_pattern_name(p), "roam");
    assert_true(client_move_pattern_parse("random", &p));
    assert_int_equal(p, CLIENT_MOVE_RANDOM);
    assert_false(client_move_pattern_parse("wander", &p));
}

static void test_a_churn_command_line_is_parsed(void **state)
{
    client_options o;
    char *argv[] = { "reap-client", "--server", "127.0.0.1:7777", "--bots", "100",
                     "--duration=20", "--disconnect", "mixed", "--out", "/tmp/x", "--seed",
                     "42", "--world", "World1" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), CLIENT_OPTIONS_OK);

    assert_int_equal(o.bots, 100);
    assert_true(o.duration == 20);
    assert_int_equal(o.session.disconnect, CLIENT_DISCONNECT_MIXED);
    assert_string_equal(o.out_dir, "/tmp/x");
    assert_true(o.seed_set);
    assert_true(o.seed == 42);
    assert_string_equal(o.session.world, "World1");
}

static void test_a_spawn_mix_on_the_command_line_becomes_the_stage_s_and_conflicts_with_spawn(
    void **state)
{
    client_options o;
    char *argv[] = { "reap-client", "--server", "127.0.0.1:7777", "--bots", "10",
                     "--duration", "5", "--spawn-mix", "Weapon:2,Inventory:1" };
    char *both[] = { "reap-client", "--server", "127.0.0.1:7777", "--bots", "10",
                     "--duration", "5", "--spawn-mix", "Weapon:2", "--spawn", "3" };
    char *alone[] = { "reap-client", "--server", "127.0.0.1:7777", "--spawn-mix", "Weapon:2" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), CLIENT_OPTIONS_OK);
    assert_int_equal(o.stages[0].mix.n, 2);
    assert_int_equal(o.stages[0].mix.count[0], 2);
    assert_string_equal(o.stages[0].mix.name[1], "Inventory");

    assert_int_equal(parse(&o, ARGC(both), both, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "--spawn conflicts with --spawn-mix"));
    assert_int_equal(parse(&o, ARGC(alone), alone, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "--spawn-mix is for the churn load generator"));
}

static void test_each_actor_of_a_mix_must_replicate_as_its_entry_s_archetype(void **state)
{
    client_spawn_mix m;
    const uint32_t cls[] = { 7, 6, 7 }, num[] = { 3, 0, 5 };
    churn_awaited w;
    char err[256];

    (void)state;
    assert_true(client_spawn_mix_parse("Weapon:2,Prop:1,Inventory:1", &m, err, sizeof err));

    /* Requests go out in the mix's order, so acknowledged actor k is of the entry k falls in. */
    w = churn_mix_expected(&m, cls, num, 1);
    assert_true(w.actor_class == 7 && w.archetype == 3);
    w = churn_mix_expected(&m, cls, num, 2);
    assert_true(w.actor_class == 6 && w.archetype == 0);
    w = churn_mix_expected(&m, cls, num, 3);
    assert_true(w.actor_class == 7 && w.archetype == 5);
    m.n = 0; /* no mix: props */
    w = churn_mix_expected(&m, cls, num, 0);
    assert_true(w.actor_class == 6 && w.archetype == 0);
}

static void test_churn_has_its_own_spawn_and_hold_defaults_that_flags_override(void **state)
{
    client_options o;
    char *defaults[] = { "reap-client", "--server", "h:1", "--bots", "3", "--duration", "1" };
    char *given[] = { "reap-client", "--server", "h:1", "--bots", "3", "--duration", "1",
                      "--spawn", "0", "--hold", "0" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(defaults), defaults, err), CLIENT_OPTIONS_OK);
    assert_int_equal(o.session.spawn, CLIENT_CHURN_SPAWN_DEFAULT);
    assert_true(o.session.hold == CLIENT_CHURN_HOLD_DEFAULT);
    assert_string_equal(o.out_dir, "build/churn");
    assert_false(o.seed_set);

    assert_int_equal(parse(&o, ARGC(given), given, err), CLIENT_OPTIONS_OK);
    assert_int_equal(o.session.spawn, 0);
    assert_true(o.session.hold == 0);
}

static void test_one_client_mode_keeps_its_defaults(void **state)
{
    client_options o;
    char *argv[] = { "reap-client", "--server", "h:1" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), CLIENT_OPTIONS_OK);
    assert_int_equal(o.bots, 0);
    assert_int_equal(o.session.spawn, 0);
    assert_true(o.session.hold == 0);
    assert_int_equal(o.session.disconnect, CLIENT_DISCONNECT_GRACEFUL);
}

static void test_bot_counts_out_of_range_are_refused_naming_the_flag_and_range(void **state)
{
    client_options o;
    char *zero[] = { "reap-client", "--server", "h:1", "--bots", "0", "--duration", "1" };
    char *many[] = { "reap-client", "--server", "h:1", "--bots", "1001", "--duration", "1" };
    char *word[] = { "reap-client", "--server", "h:1", "--bots", "lots", "--duration", "1" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(zero), zero, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "--bots"));
    assert_non_null(strstr(err, "[1, 1000]"));
    assert_int_equal(parse(&o, ARGC(many), many, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "'1001'"));
    assert_int_equal(parse(&o, ARGC(word), word, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "'lots'"));
}

static void test_a_zero_negative_or_non_numeric_duration_is_refused(void **state)
{
    client_options o;
    char *zero[] = { "reap-client", "--server", "h:1", "--bots", "2", "--duration", "0" };
    char *neg[] = { "reap-client", "--server", "h:1", "--bots", "2", "--duration", "-5" };
    char *word[] = { "reap-client", "--server", "h:1", "--bots", "2", "--duration", "long" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(zero), zero, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "--duration"));
    assert_int_equal(parse(&o, ARGC(neg), neg, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "'-5'"));
    assert_int_equal(parse(&o, ARGC(word), word, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "'long'"));
}

static void test_bots_without_a_duration_are_refused(void **state)
{
    client_options o;
    char *argv[] = { "reap-client", "--server", "h:1", "--bots", "5" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(argv), argv, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "--duration"));
}

static void test_churn_only_flags_without_bots_are_refused(void **state)
{
    client_options o;
    char *duration[] = { "reap-client", "--server", "h:1", "--duration", "5" };
    char *mixed[] = { "reap-client", "--server", "h:1", "--disconnect", "mixed" };
    char *seed[] = { "reap-client", "--server", "h:1", "--seed", "1" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(duration), duration, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "--duration"));
    assert_non_null(strstr(err, "--bots"));
    assert_int_equal(parse(&o, ARGC(mixed), mixed, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "mixed"));
    assert_int_equal(parse(&o, ARGC(seed), seed, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "--seed"));
}

static void test_a_bad_seed_or_empty_out_dir_is_refused(void **state)
{
    client_options o;
    char *seed[] = { "reap-client", "--server", "h:1", "--bots", "1", "--duration", "1",
                     "--seed", "-1" };
    char *out[] = { "reap-client", "--server", "h:1", "--bots", "1", "--duration", "1",
                    "--out", "" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(seed), seed, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "--seed"));
    assert_int_equal(parse(&o, ARGC(out), out, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "--out"));
}

static void test_procs_and_impair_are_churn_flags_with_checked_values(void **state)
{
    client_options o;
    char *good[] = { "reap-client", "--server", "h:1", "--bots", "10", "--duration", "1",
                     "--procs", "4", "--impair", "latency=50ms" };
    char *many[] = { "reap-client", "--server", "h:1", "--bots", "10", "--duration", "1",
                     "--procs", "65" };
    char *both[] = { "reap-client", "--server", "h:1", "--bots", "10", "--duration", "1",
                     "--procs", "2", "--shard", "0/2" };
    char *alone[] = { "reap-client", "--server", "h:1", "--impair", "loss=1%" };
    char *bad[] = { "reap-client", "--server", "h:1", "--bots", "10", "--duration", "1",
                    "--impair", "loss=1%,wobble=3" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(good), good, err), CLIENT_OPTIONS_OK);
    assert_int_equal(o.procs, 4);
    assert_true(o.stages[0].impair.latency == 0.05);
    assert_int_equal(parse(&o, ARGC(many), many, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "--procs"));
    assert_int_equal(parse(&o, ARGC(both), both, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "--shard"));
    assert_int_equal(parse(&o, ARGC(alone), alone, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "--impair is for the churn load generator"));
    assert_int_equal(parse(&o, ARGC(bad), bad, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "wobble=3"));
}

static void test_source_addresses_default_to_auto_and_take_one(void **state)
{
    client_options o;
    char *plain[] = { "reap-client", "--server", "h:1", "--bots", "10", "--duration", "1" };
    char *one[] = { "reap-client", "--server", "h:1", "--bots", "10", "--duration", "1",
                    "--source-addresses", "one" };
    char *again[] = { "reap-client", "--server", "h:1", "--bots", "10", "--duration", "1",
                      "--source-addresses=one", "--source-addresses", "auto" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(plain), plain, err), CLIENT_OPTIONS_OK);
    assert_int_equal(o.source_addresses, CLIENT_SOURCE_AUTO);
    assert_false(o.source_addresses_set);
    assert_int_equal(parse(&o, ARGC(one), one, err), CLIENT_OPTIONS_OK);
    assert_int_equal(o.source_addresses, CLIENT_SOURCE_ONE);
    assert_true(o.source_addresses_set);
    assert_int_equal(parse(&o, ARGC(again), again, err), CLIENT_OPTIONS_OK);
    assert_int_equal(o.source_addresses, CLIENT_SOURCE_AUTO); /* the last one given */
    assert_string_equal(client_source_mode_name(CLIENT_SOURCE_AUTO), "auto");
    assert_string_equal(client_source_mode_name(CLIENT_SOURCE_ONE), "one");
}

static void test_a_bad_source_addresses_mode_names_the_value_and_the_choices(void **state)
{
    client_options o;
    char *bad[] = { "reap-client", "--server", "h:1", "--bots", "10", "--duration", "1",
                    "--source-addresses", "many" };
    char *alone[] = { "reap-client", "--server", "h:1", "--source-addresses", "one" };
    char err[256];

    (void)state;
    assert_int_equal(parse(&o, ARGC(bad), bad, err), CLIENT_OPTIONS_ERROR);
    assert_string_equal(err, "bad value 'many' for --source-addresses: expected auto or one");
    assert_int_equal(parse(&o, ARGC(alone), alone, err), CLIENT_OPTIONS_ERROR);
    assert_non_null(strstr(err, "--source-addresses is for the churn load generator"));
}

static void test_a_bots_own_address_is_127_1_0_0_plus_its_number_plus_one(void **state)
{
    (void)state;
    assert_int_equal(ENET_NET_TO_HOST_32(client_ports_own_address(0)), 0x7F010001u);
    assert_int_equal(ENET_NET_TO_HOST_32(client_ports_own_address(255)), 0x7F010100u);
    assert_int_equal(ENET_NET_TO_HOST_32(client_ports_own_address(256)), 0x7F010101u);
    assert_int_equal(ENET_NET_TO_HOST_32(client_ports_own_address(999)), 0x7F0103E8u);
    assert_true(client_ports_is_loopback(ENET_HOST_TO_NET_32(0x7F000001u)));
    assert_true(client_ports_is_loopback(ENET_HOST_TO_NET_32(0x7FFFFFFEu)));
    assert_false(client_ports_is_loopback(ENET_HOST_TO_NET_32(0x0A000001u)));
    assert_false(client_ports_is_loopback(ENET_HOST_TO_NET_32(0x80000001u)));
    assert_false(client_ports_is_loopback(ENET_HOST_ANY));
}

static void test_the_help_describes_the_churn_flags(void **state)
{
    const char *usage = client_options_usage();

    (void)state;
    assert_non_null(strstr(usage, "--bots N"));
    assert_non_null(strstr(usage, "--duration SECONDS"));
    assert_non_null(strstr(usage, "--out DIR"));
    assert_non_null(strstr(usage, "--seed N"));
    assert_non_null(strstr(usage, "mixed"));
    assert_non_null(strstr(usage, "--source-addresses MODE"));
}

/* ---- the timeline ------------------------------------------------------------------------- */

static void test_the_json_timeline_has_one_row_per_second_with_the_run_settings(void **state)
{
    churn_timeline tl;
    char *json;

    (void)state;
    timeline_fixture(&tl);

    json = render(churn_timeline_write_json, &tl);

    assert_int_equal(count_of(json, "{\"t\": "), 4);
    assert_non_null(strstr(json, "\"bots\": 20"));
    assert_non_null(strstr(json, "\"disconnect\": \"mixed\""));
    assert_non_null(strstr(json, "\"seed\": 7"));
    assert_non_null(strstr(json, "\"gc_times\": [1.500, 2.600]"));
    assert_non_null(strstr(json, "\"server_objects\": 900"));
    assert_non_null(strstr(json, "\"joins\": 48")); /* the totals */
    assert_true(json[0] == '{');
    assert_non_null(strstr(json, "]\n}\n"));
    free(json);
    churn_timeline_free(&tl);
}

static void test_a_second_without_server_figures_writes_nulls_not_zeros(void **state)
{
    churn_timeline tl;
    char *json, *first_row;

    (void)state;
    timeline_fixture(&tl);

    json = render(churn_timeline_write_json, &tl);

    first_row = strstr(json, "{\"t\": 1.000");
    assert_non_null(first_row);
    assert_non_null(strstr(first_row, "\"server_objects\": null"));
    assert_true(strstr(first_row, "\"server_objects\": null") < strstr(first_row, "{\"t\": 2"));
    /* no stats reply sampled: the run's object figures are not known, not 0 */
    assert_non_null(strstr(json, "\"server_objects_first\": null"));
    free(json);
    churn_timeline_free(&tl);
}

static void test_the_runs_object_figures_come_from_the_stats_samples_in_every_output(void **state)
{
    churn_timeline tl;
    uint32_t first, last, peak, collections;
    char *json;

    (void)state;
    timeline_fixture(&tl);
    assert_true(churn_timeline_add_sample(&tl, 0.4, 51));
    assert_true(churn_timeline_add_sample(&tl, 1.2, 2533));
    assert_true(churn_timeline_add_sample(&tl, 2.9, 700));

    assert_true(churn_timeline_objects(&tl, &first, &last, &peak, &collections));
    json = render(churn_timeline_write_json, &tl);

    assert_int_equal(first, 51);
    assert_int_equal(last, 700);
    assert_int_equal(peak, 2533);
    assert_int_equal(collections, tl.n_gc);
    assert_non_null(strstr(json, "\"server_objects_first\": 51, \"server_objects_last\": 700, "
                                 "\"server_objects_peak\": 2533, \"collections\": 2}"));
    free(json);
    churn_timeline_free(&tl);
}

static void test_json_strings_are_escaped(void **state)
{
    churn_timeline tl;
    char *json;

    (void)state;
    timeline_fixture(&tl);
    snprintf(tl.world, sizeof tl.world, "W\"1\\");

    json = render(churn_timeline_write_json, &tl);

    assert_non_null(strstr(json, "\"world\": \"W\\\"1\\\\\""));
    free(json);
    churn_timeline_free(&tl);
}

static void test_the_svg_plots_objects_and_bots_as_polylines(void **state)
{
    churn_timeline tl;
    char *svg;

    (void)state;
    timeline_fixture(&tl);

    svg = render(churn_timeline_write_svg, &tl);

    assert_int_equal(strncmp(svg, "<svg ", 5), 0);
    assert_non_null(strstr(svg, "</svg>\n"));
    assert_int_equal(count_of(svg, "<polyline "), 2);
    /* objects: only the three seconds with server figures; bots: the origin plus four rows */
    assert_int_equal(count_of(svg, "<circle "), 3);
    free(svg);
    churn_timeline_free(&tl);
}

static void test_the_objects_line_follows_every_stats_sample_when_there_are_some(void **state)
{
    churn_timeline tl;
    char *svg, *line, *end;
    int points = 0;

    (void)state;
    timeline_fixture(&tl);
    for (int i = 0; i < 9; i++)
        assert_true(churn_timeline_add_sample(&tl, 1.0 + 0.25 * i, 500 + 50 * (uint32_t)i));

    svg = render(churn_timeline_write_svg, &tl);

    line = strstr(svg, "<polyline fill=\"none\" stroke=\"#0072B2\"");
    assert_non_null(line);
    end = strstr(line, "/>");
    for (char *p = strstr(line, "points=\""); p != NULL && p < end; p = strchr(p + 1, ','))
        points++;
    assert_int_equal(points - 1, 9); /* the first hit is the attribute itself */
    free(svg);
    churn_timeline_free(&tl);
}

static void test_the_svg_marks_each_collection_with_a_vertical_line(void **state)
{
    churn_timeline tl;
    char *svg, *mark;
    double x1, x2;

    (void)state;
    timeline_fixture(&tl);

    svg = render(churn_timeline_write_svg, &tl);

    assert_int_equal(count_of(svg, "<title>collection at"), 2);
    mark = strstr(svg, "<title>collection at 1.50 s");
    assert_non_null(mark);
    while (mark > svg && strncmp(mark, "<line ", 6) != 0)
        mark--;
    assert_int_equal(sscanf(mark, "<line x1=\"%lf\" y1=\"%*d\" x2=\"%lf\"", &x1, &x2), 2);
    assert_true(x1 == x2);
    free(svg);
    churn_timeline_free(&tl);
}

static void test_the_svg_labels_its_axes_and_legend(void **state)
{
    churn_timeline tl;
    char *svg;

    (void)state;
    timeline_fixture(&tl);

    svg = render(churn_timeline_write_svg, &tl);

    assert_non_null(strstr(svg, ">time since start (s)</text>"));
    assert_non_null(strstr(svg, ">server objects</text>"));
    assert_non_null(strstr(svg, ">connected bots</text>"));
    assert_non_null(strstr(svg, ">GC collection (2)</text>"));
    assert_non_null(strstr(svg, ">1000</text>")); /* the objects axis reaches past the peak */
    assert_non_null(strstr(svg, "20 bots against 127.0.0.1:7777"));
    free(svg);
    churn_timeline_free(&tl);
}

static void test_svg_text_from_the_command_line_is_escaped(void **state)
{
    churn_timeline tl;
    char *svg;

    (void)state;
    timeline_fixture(&tl);
    snprintf(tl.world, sizeof tl.world, "<b>&");

    svg = render(churn_timeline_write_svg, &tl);

    assert_null(strstr(svg, "<b>"));
    assert_non_null(strstr(svg, "&lt;b&gt;&amp;"));
    free(svg);
    churn_timeline_free(&tl);
}

static void test_an_empty_timeline_still_draws_a_valid_picture(void **state)
{
    churn_timeline tl;
    char *svg;

    (void)state;
    churn_timeline_init(&tl);
    tl.bots = 1;
    tl.duration = 1;

    svg = render(churn_timeline_write_svg, &tl);

    assert_int_equal(strncmp(svg, "<svg ", 5), 0);
    assert_non_null(strstr(svg, "no stats reply from the server"));
    assert_null(strstr(svg, "nan"));
    assert_null(strstr(svg, "inf"));
    free(svg);
    churn_timeline_free(&tl);
}

static void test_save_creates_the_directory_and_both_files(void **state)
{
    churn_timeline tl;
    char dir[] = "/tmp/reap-churn-test-XXXXXX", sub[128], path[256], err[256];
    struct stat st;

    (void)state;
    timeline_fixture(&tl);
    assert_non_null(mkdtemp(dir));
    snprintf(sub, sizeof sub, "%s/a/b", dir);

    assert_true(churn_timeline_save(&tl, sub, err, sizeof err));

    snprintf(path, sizeof path, "%s/churn.json", sub);
    assert_int_equal(stat(path, &st), 0);
    assert_true(st.st_size > 0);
    unlink(path);
    snprintf(path, sizeof path, "%s/churn.svg", sub);
    assert_int_equal(stat(path, &st), 0);
    assert_true(st.st_size > 0);
    unlink(path);
    rmdir(sub);
    snprintf(sub, sizeof sub, "%s/a", dir);
    rmdir(sub);
    rmdir(dir);
    churn_timeline_free(&tl);
}

static void test_save_into_an_unwritable_place_says_where(void **state)
{
    churn_timeline tl;
    char err[256] = "";

    (void)state;
    timeline_fixture(&tl);

    assert_false(churn_timeline_save(&tl, "/proc/reap-churn-test", err, sizeof err));

    assert_non_null(strstr(err, "/proc/reap-churn-test"));
    churn_timeline_free(&tl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_churn_command_line_is_parsed),
        cmocka_unit_test(test_the_random_walk_keeps_a_visit_s_speed_and_turns_its_heading_a_little),
        cmocka_unit_test(test_a_roaming_pawn_goes_straight_at_the_servers_speed_limit),
        cmocka_unit_test(test_a_roaming_pawn_turns_back_before_the_worlds_edge),
        cmocka_unit_test(test_move_patterns_read_and_name_themselves),
        cmocka_unit_test(test_a_spawn_mix_on_the_command_line_becomes_the_stage_s_and_conflicts_with_spawn),
        cmocka_unit_test(test_each_actor_of_a_mix_must_replicate_as_its_entry_s_archetype),
        cmocka_unit_test(test_churn_has_its_own_spawn_and_hold_defaults_that_flags_override),
        cmocka_unit_test(test_one_client_mode_keeps_its_defaults),
        cmocka_unit_test(test_bot_counts_out_of_range_are_refused_naming_the_flag_and_range),
        cmocka_unit_test(test_a_zero_negative_or_non_numeric_duration_is_refused),
        cmocka_unit_test(test_bots_without_a_duration_are_refused),
        cmocka_unit_test(test_churn_only_flags_without_bots_are_refused),
        cmocka_unit_test(test_a_bad_seed_or_empty_out_dir_is_refused),
        cmocka_unit_test(test_procs_and_impair_are_churn_flags_with_checked_values),
        cmocka_unit_test(test_source_addresses_default_to_auto_and_take_one),
        cmocka_unit_test(test_a_bad_source_addresses_mode_names_the_value_and_the_choices),
        cmocka_unit_test(test_a_bots_own_address_is_127_1_0_0_plus_its_number_plus_one),
        cmocka_unit_test(test_the_help_describes_the_churn_flags),
        cmocka_unit_test(test_the_json_timeline_has_one_row_per_second_with_the_run_settings),
        cmocka_unit_test(test_a_second_without_server_figures_writes_nulls_not_zeros),
        cmocka_unit_test(test_the_runs_object_figures_come_from_the_stats_samples_in_every_output),
        cmocka_unit_test(test_json_strings_are_escaped),
        cmocka_unit_test(test_the_svg_plots_objects_and_bots_as_polylines),
        cmocka_unit_test(test_the_objects_line_follows_every_stats_sample_when_there_are_some),
        cmocka_unit_test(test_the_svg_marks_each_collection_with_a_vertical_line),
        cmocka_unit_test(test_the_svg_labels_its_axes_and_legend),
        cmocka_unit_test(test_svg_text_from_the_command_line_is_escaped),
        cmocka_unit_test(test_an_empty_timeline_still_draws_a_valid_picture),
        cmocka_unit_test(test_save_creates_the_directory_and_both_files),
        cmocka_unit_test(test_save_into_an_unwritable_place_says_where),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
