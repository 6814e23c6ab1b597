/*
 * test_client_matches.c - the load tester across the server's map travels, without a server:
 * a travel under way is never an outage (the watch, on a fake clock), the matches a run's
 * travels begin (by Travel.frame), their rows and figures (players, collections, the resident
 * memory's slope, the longest travel frame, leaked worlds), the thresholds that name them,
 * report.json with its matches read back (and one from before them), shards' matches merged
 * by frame, and the summary's and the page's matches; a long run keeps every match (a
 * hundred travels are 101 matches everywhere).
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

#include "churn_watch.h"
#include "report.h"
#include "client_fixture.h"

/* ---- the watch: a travel's silence is the travel's ----------------------------------------- */

static void test_a_server_silent_during_a_travel_is_not_lost(void **state)
{
    churn_watch w;

    (void)state;
    churn_watch_init(&w, 2.0);
    assert_int_equal(churn_watch_step(&w, 1.0, 1.0, 0.0, false, false), CHURN_WATCH_NONE);
    /* A hard travel: UE's LoadMap blocks the server for 8 s while the bots reconnect. */
    for (double now = 1.1; now < 9.0; now += 0.1)
        assert_int_equal(churn_watch_step(&w, now, 1.0, 0.5, false, true), CHURN_WATCH_NONE);
    /* Silence counts from the travel's end: not lost at once, lost 2 s later. */
    assert_int_equal(churn_watch_step(&w, 10.8, 1.0, 0.5, false, false), CHURN_WATCH_NONE);
    assert_int_equal(churn_watch_step(&w, 11.0, 1.0, 0.5, false, false), CHURN_WATCH_LOST);
    assert_true(w.lost_at == 1.0);
}

static void test_without_a_travel_the_same_silence_is_an_outage(void **state)
{
    churn_watch w;

    (void)state;
    churn_watch_init(&w, 2.0);
    assert_int_equal(churn_watch_step(&w, 1.0, 1.0, 0.0, false, false), CHURN_WATCH_NONE);
    assert_int_equal(churn_watch_step(&w, 3.0, 1.0, 0.5, false, false), CHURN_WATCH_LOST);
}

/* ---- matches ------------------------------------------------------------------------------- */

static void add_row(churn_timeline *tl, double t, uint32_t connected, double collections,
                    double rss)
{
    churn_row row;

    memset(&row, 0, sizeof row);
    row.t = t;
    row.connected = row.target = connected;
    row.gen_cpu = row.loop_lag = -1;
    row.tick_p50 = row.tick_p99 = row.tick_max = row.gc_work_max = -1;
    row.admin_objects = row.frames = -1;
    row.have_admin = collections >= 0;
    row.gc_collections = collections;
    row.rss_bytes = rss;
    assert_true(churn_timeline_add_row(tl, &row));
}

/* The server's figures after a travel, as the sampler takes them from /metrics. */
static void served(churn_match *m, double rss, double longest, double leaked)
{
    m->server_seen = true;
    m->server_seconds = 0.5;
    m->longest_frame = longest;
    m->frames_over_budget = 0;
    m->objects = 2000;
    m->rss = rss;
    m->leaked_worlds = leaked;
}

/* 30 s: match 1 on Arena (0-10 s), a seamless travel to Docks (10-20 s), a hard travel back
 * to Arena (20 s-); 4 bots, then 6 in the second match; a collection a second from 10 s. */
static void three_matches(churn_timeline *tl)
{
    churn_match *m;

    churn_timeline_init(tl);
    assert_non_null(churn_timeline_match(tl, 0, "Arena", 0, 0));
    for (int i = 1; i <= 30; i++)
        add_row(tl, i, i > 10 && i <= 20 ? 6 : 4, i > 10 ? 1 : 0, 100e6 + i);
    assert_non_null(m = churn_timeline_match(tl, 300, "Docks", 2, 10.0));
    m->departed = m->arrived = 4;
    hist_record(&m->travel, 400000);
    served(m, 100e6, 0.020, 0);
    assert_non_null(m = churn_timeline_match(tl, 600, "Arena", 1, 20.0));
    m->departed = m->arrived = 6;
    hist_record(&m->travel, 900000);
    served(m, 110e6, 0.045, 1);
}

/* The report of a 30 s run of 4 bots over tl: 10 travels followed by bots (one timed, 400 ms),
 * 3 requests answered "between maps". */
static void report_of(churn_report *r, churn_timeline *tl)
{
    memset(r, 0, sizeof *r);
    churn_totals_init(&r->totals);
    churn_server_init(&r->server_figs);
    r->schema = CHURN_REPORT_SCHEMA;
    snprintf(r->run_id, sizeof r->run_id, "2026-01-01T00:00:00Z-0000000000000009");
    snprintf(r->start_time, sizeof r->start_time, "2026-01-01T00:00:00Z");
    snprintf(r->scenario, sizeof r->scenario, "matches");
    r->shards = 1;
    r->bots = 4;
    r->duration = r->elapsed = 30;
    r->leaks.baseline = r->leaks.after = r->leaks.leaked = -1;
    r->totals.travels = 10;
    r->totals.travel_refused = 3;
    hist_record(&r->totals.lat[CHURN_LAT_TRAVEL], 400000);
    r->tl = tl;
}

/* The report of a run of three_matches (report_of), for the tests that start from it. */
typedef struct given {
    churn_report r;
    churn_timeline tl;
} given;

static int setup_three_matches(void **state)
{
    given *g = calloc(1, sizeof *g);

    if (g == NULL)
        return -1;
    three_matches(&g->tl);
    report_of(&g->r, &g->tl);
    *state = g;
    return 0;
}

static int teardown_three_matches(void **state)
{
    given *g = *state;

    churn_timeline_free(&g->tl);
    free(g);
    return 0;
}

static void test_a_travel_begins_a_match_that_ends_the_one_before(void **state)
{
    churn_timeline *tl = &((given *)*state)->tl;

    assert_int_equal(tl->n_matches, 3);
    assert_true(tl->matches[0].end == 10.0 && tl->matches[1].end == 20.0);
    assert_true(tl->matches[2].end < 0);
    /* The same travel seen by another bot is the same match. */
    assert_ptr_equal(churn_timeline_match(tl, 300, "Docks", 2, 10.2), &tl->matches[1]);
    assert_int_equal(tl->n_matches, 3);
    assert_string_equal(tl->matches[1].map, "Docks");
}

static void test_a_match_s_players_and_collections_come_from_its_seconds(void **state)
{
    const churn_timeline *tl = &((given *)*state)->tl;

    assert_int_equal(churn_match_players(tl, 0), 4);
    assert_int_equal(churn_match_players(tl, 1), 6);
    assert_true(churn_match_collections(tl, 0) == 0);
    assert_true(churn_match_collections(tl, 1) == 10);
    assert_true(churn_match_collections(tl, 2) == 10);
}

static void test_the_match_figures_are_thresholds(void **state)
{
    churn_report *r = &((given *)*state)->r;
    client_threshold t;
    char err[256];
    double v;

    hist_record(&r->totals.lat[CHURN_LAT_TRAVEL], 900000); /* with report_of's 400 ms */

    assert_true(churn_report_metric(r, "rss_growth_per_match", &v));
    assert_true(v == 10e6); /* two travels: 100 MB then 110 MB */
    assert_true(churn_report_metric(r, "server_travel_frame_max", &v));
    assert_true(v == 0.045);
    assert_true(churn_report_metric(r, "leaked_worlds", &v));
    assert_true(v == 1);
    assert_true(churn_report_metric(r, "travel_p99", &v));
    assert_true(fabs(v - 0.9) < 0.9 / 64);

    assert_true(client_threshold_parse("travel_p99<1s", &t, err, sizeof err));
    assert_true(client_threshold_parse("server_travel_frame_max<66ms", &t, err, sizeof err));
    assert_true(client_threshold_check(&t, 0.045));
    assert_true(client_threshold_parse("leaked_worlds==0", &t, err, sizeof err));
    assert_false(client_threshold_check(&t, 1));
    assert_true(client_threshold_parse("rss_growth_per_match<1000000", &t, err, sizeof err));
    assert_false(client_threshold_parse("leaked_worlds<1ms", &t, err, sizeof err));
    assert_non_null(strstr(err, "is a count"));
    assert_false(client_threshold_parse("server_travel_frame_max<5%", &t, err, sizeof err));
    assert_non_null(strstr(err, "is a time"));
}

static void test_a_run_without_travels_has_no_match_figures(void **state)
{
    static churn_report r;
    churn_timeline tl;
    double v;

    (void)state;
    churn_timeline_init(&tl);
    churn_timeline_match(&tl, 0, "Default", 0, 0);
    memset(&r, 0, sizeof r);
    churn_totals_init(&r.totals);
    r.tl = &tl;

    assert_true(churn_report_metric(&r, "rss_growth_per_match", &v) && isnan(v));
    assert_true(churn_report_metric(&r, "server_travel_frame_max", &v) && isnan(v));
    assert_true(churn_report_metric(&r, "leaked_worlds", &v) && isnan(v));
    churn_timeline_free(&tl);
}

/* ---- report.json -------------------------------------------------------------------------- */

/* Loads text as a run's report.json (in a directory made and removed here) into back and
 * back_tl (initialised here); a load that fails fails the test. */
static void read_back(const char *text, churn_report *back, churn_timeline *back_tl)
{
    char dir[] = "/tmp/reap-matches-XXXXXX", path[64], err[600];
    FILE *f;

    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/report.json", dir);
    assert_non_null(f = fopen(path, "w"));
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
    churn_timeline_init(back_tl);
    if (!churn_report_load(back, back_tl, CLIENT_THRESHOLDS_MAX, dir, err, sizeof err))
        fail_msg("%s", err);
    unlink(path);
    rmdir(dir);
}

/* Removes from text the first `what`, which must be there. */
static void cut(char *text, const char *what)
{
    char *p = strstr(text, what);

    assert_non_null(p);
    memmove(p, p + strlen(what), strlen(p + strlen(what)) + 1);
}

/* Removes from text the first `from` and what follows it up to the next `upto` (kept). */
static void cut_upto(char *text, const char *from, const char *upto)
{
    char *p = strstr(text, from), *q;

    assert_non_null(p);
    assert_non_null(q = strstr(p + strlen(from), upto));
    memmove(p, q, strlen(q) + 1);
}

static void test_a_report_s_matches_read_back(void **state)
{
    given *g = *state;
    static churn_report back;
    churn_timeline back_tl;
    char *json;

    g->tl.match_seconds = 10;
    json = report_json_text(&g->r);

    read_back(json, &back, &back_tl);

    assert_int_equal(back.totals.travels, 10);
    assert_int_equal(back.totals.travel_refused, 3);
    assert_int_equal(back.totals.lat[CHURN_LAT_TRAVEL].n, 1);
    assert_true(back_tl.match_seconds == 10);
    assert_int_equal(back_tl.n_matches, 3);
    for (uint32_t i = 0; i < 3; i++) {
        const churn_match *a = &g->tl.matches[i], *b = &back_tl.matches[i];

        assert_true(a->frame == b->frame);
        assert_string_equal(a->map, b->map);
        assert_int_equal(a->mode, b->mode);
        assert_true(fabs(a->start - b->start) < 1e-6);
        assert_int_equal(a->departed, b->departed);
        assert_int_equal(a->travel.n, b->travel.n);
        assert_true(a->server_seen == b->server_seen);
        assert_true(a->rss == b->rss);
        assert_true(fabs(a->longest_frame - b->longest_frame) < 1e-9);
        assert_true(a->leaked_worlds == b->leaked_worlds);
    }
    assert_true(back_tl.matches[1].end == 20.0);
    free(json);
    churn_timeline_free(&back_tl);
}

static void test_a_report_from_before_matches_still_loads(void **state)
{
    static churn_report r, back;
    churn_timeline tl, back_tl;
    char *json;

    (void)state;
    churn_timeline_init(&tl);
    report_of(&r, &tl);
    json = report_json_text(&r);
    /* What an earlier client wrote: no travel counts, latency, match_seconds or matches. */
    cut(json, ", \"travels\": 10, \"travel_refused\": 3");
    cut_upto(json, ",\n    \"travel\": {", "\n");
    cut_upto(json, "  \"match_seconds\"", "  \"timeline\"");
    assert_null(strstr(json, "travel"));

    read_back(json, &back, &back_tl);

    assert_int_equal(back.totals.travels, 0);
    assert_int_equal(back.totals.lat[CHURN_LAT_TRAVEL].n, 0);
    assert_int_equal(back_tl.n_matches, 0);
    free(json);
    churn_timeline_free(&tl);
    churn_timeline_free(&back_tl);
}

static void test_shards_saw_the_same_travel_as_one_match(void **state)
{
    static churn_report a, b, merged;
    churn_timeline tla, tlb, tl;

    (void)state;
    three_matches(&tla);
    three_matches(&tlb);
    tlb.matches[2].server_seen = false; /* shard b had no --admin */
    tlb.matches[2].rss = -1;
    report_of(&a, &tla);
    report_of(&b, &tlb);

    report_merge_shards(&merged, &tl, &a, &b);

    assert_int_equal(tl.n_matches, 3);
    assert_int_equal(tl.matches[1].departed, 8);
    assert_int_equal(tl.matches[2].arrived, 12);
    assert_int_equal(tl.matches[2].travel.n, 2);
    assert_true(tl.matches[2].server_seen && tl.matches[2].rss == 110e6);
    assert_int_equal(churn_match_players(&tl, 1), 12); /* the rows add up */
    assert_int_equal(merged.totals.travels, 20);
    churn_timeline_free(&tla);
    churn_timeline_free(&tlb);
    churn_timeline_free(&tl);
}

/* ---- what people read --------------------------------------------------------------------- */

static void test_the_summary_has_a_row_per_match(void **state)
{
    char *text = report_summary_text(&((given *)*state)->r);

    assert_non_null(strstr(text, "matches: 3 (10 travels followed by bots, 3 requests answered "
                                 "\"between maps\")"));
    assert_non_null(strstr(text, "  1   Arena        (start)       0.0       4"));
    assert_non_null(strstr(text, "  2   Docks        seamless     10.0       6       2000      "
                                 "95.4     400.0     400.0       20.00     10      0"));
    assert_non_null(strstr(text, "  3   Arena        hard         20.0       4       2000     "
                                 "104.9     900.0     900.0       45.00     10      1"));
    free(text);
}

static void test_the_page_draws_matches_as_bands_and_the_memory_after_each_travel(void **state)
{
    char *text = report_page_text(&((given *)*state)->r);

    /* Bands on every timeline that drew (here bots, rates and memory): 1 and 3 tinted alike. */
    assert_int_equal(text_count(text, "class=\"match m0\""), 2 * 3);
    assert_int_equal(text_count(text, "class=\"match m1\""), 3);
    assert_non_null(strstr(text, "<title>match 2: Docks</title>"));
    assert_non_null(strstr(text, "Server resident memory (MiB): each second, and after each "
                                 "travel"));
    assert_non_null(strstr(text, "<h2>Matches</h2>"));
    assert_non_null(strstr(text, "<td>3</td><td>Arena</td><td>hard</td><td>20.0</td>"));
    free(text);
}

/* Labels only where they fit: 30 matches of one second in a 30 s run are 30 bands, each too
 * narrow for "12 Docks", so none is labelled (they would print over each other); the bands'
 * titles still name them. The wide bands of three_matches are labelled. */
static void test_a_band_too_narrow_for_its_label_has_none(void **state)
{
    static churn_report r;
    churn_timeline tl;
    char *text;

    churn_timeline_init(&tl);
    assert_non_null(churn_timeline_match(&tl, 0, "Arena", 0, 0));
    for (int i = 1; i <= 30; i++) {
        add_row(&tl, i, 4, 0, 1e6);
        assert_non_null(churn_timeline_match(&tl, 30u * (uint64_t)i, i % 2 ? "Docks" : "Arena",
                                             2, i));
    }
    report_of(&r, &tl);
    text = report_page_text(&r);
    assert_non_null(strstr(text, "<title>match 12: Docks</title>"));
    assert_null(strstr(text, "class=\"matchtext\""));
    free(text);
    churn_timeline_free(&tl);

    text = report_page_text(&((given *)*state)->r);
    assert_non_null(strstr(text, "class=\"matchtext\">2 Docks"));
    free(text);
}

static void test_a_run_on_one_map_draws_no_bands(void **state)
{
    static churn_report r;
    churn_timeline tl;
    char *text;

    (void)state;
    churn_timeline_init(&tl);
    churn_timeline_match(&tl, 0, "Default", 0, 0);
    for (int i = 1; i <= 5; i++)
        add_row(&tl, i, 4, 0, 1e6);
    report_of(&r, &tl);

    text = report_page_text(&r);

    assert_null(strstr(text, "class=\"match"));
    assert_null(strstr(text, "<h2>Matches</h2>"));
    free(text);
    churn_timeline_free(&tl);
}

/* ---- a long run: every travel is kept -------------------------------------------------- */

enum { LONG_TRAVELS = 100 };

/* 2 x LONG_TRAVELS + 1 seconds of 4 bots with a travel every 2 s (to Docks and Arena in turn,
 * every bot following it in 300 ms), as the travel soak's hundred travels: LONG_TRAVELS + 1
 * matches. */
static void long_run(churn_report *r, churn_timeline *tl)
{
    churn_timeline_init(tl);
    assert_non_null(churn_timeline_match(tl, 0, "Arena", 0, 0));
    for (int i = 1; i <= LONG_TRAVELS; i++) {
        churn_match *m;

        add_row(tl, 2.0 * i - 1, 4, 0, 100e6);
        add_row(tl, 2.0 * i, 4, 0, 100e6);
        m = churn_timeline_match(tl, 60u * (uint64_t)i, i % 2 ? "Docks" : "Arena", 2, 2.0 * i);
        if (m == NULL)
            continue; /* not kept: the tests count the matches */
        m->departed = m->arrived = 4;
        hist_record(&m->travel, 300000);
        served(m, 100e6 + i, 0.010, 0);
    }
    add_row(tl, 2.0 * LONG_TRAVELS + 1, 4, 0, 100e6);
    report_of(r, tl);
    r->duration = r->elapsed = 2.0 * LONG_TRAVELS + 1;
    r->totals.travels = 4 * LONG_TRAVELS;
}

static void test_every_travel_of_a_long_run_begins_a_match_of_its_own(void **state)
{
    static churn_report r;
    churn_timeline tl;
    char *text;

    (void)state;
    long_run(&r, &tl);

    /* Each match ends where the next begins, the 64th and 65th too: only the last runs on. */
    assert_int_equal(tl.n_matches, LONG_TRAVELS + 1);
    for (uint32_t i = 0; i + 1 < tl.n_matches; i++)
        assert_true(tl.matches[i].end == tl.matches[i + 1].start);
    assert_true(tl.matches[64].start == 128.0 && tl.matches[64].frame == 60u * 64);
    assert_true(tl.matches[LONG_TRAVELS].end < 0);
    assert_true(churn_timeline_rss_growth_per_match(&tl) == 1.0);

    text = report_summary_text(&r);
    assert_non_null(strstr(text, "matches: 101 (400 travels followed by bots"));
    assert_non_null(strstr(text, "  101 Arena        seamless    200.0       4"));
    free(text);
    text = report_page_text(&r);
    assert_non_null(strstr(text, "<title>match 101: Arena</title>"));
    assert_non_null(strstr(text, "<td>101</td><td>Arena</td><td>seamless</td><td>200.0</td>"));
    free(text);
    churn_timeline_free(&tl);
}

static void test_a_long_run_s_matches_read_back_and_merge_whole(void **state)
{
    static churn_report r, back, merged;
    churn_timeline tl, back_tl, merged_tl;
    char *json;

    (void)state;
    long_run(&r, &tl);
    json = report_json_text(&r);

    read_back(json, &back, &back_tl);

    assert_int_equal(back_tl.n_matches, LONG_TRAVELS + 1);
    assert_true(back_tl.matches[LONG_TRAVELS].frame == 60u * LONG_TRAVELS);
    assert_true(back_tl.matches[LONG_TRAVELS].start == 200.0);
    assert_true(back_tl.matches[LONG_TRAVELS].rss == 100e6 + LONG_TRAVELS);

    /* Two shards of it: the same travels, one match each. */
    report_merge_shards(&merged, &merged_tl, &r, &back);

    assert_int_equal(merged_tl.n_matches, LONG_TRAVELS + 1);
    assert_int_equal(merged_tl.matches[LONG_TRAVELS].departed, 8);
    assert_int_equal(merged_tl.matches[LONG_TRAVELS].travel.n, 2);
    free(json);
    churn_timeline_free(&tl);
    churn_timeline_free(&back_tl);
    churn_timeline_free(&merged_tl);
}

#define GIVEN_THREE_MATCHES(fn) \
    cmocka_unit_test_setup_teardown(fn, setup_three_matches, teardown_three_matches)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_server_silent_during_a_travel_is_not_lost),
        cmocka_unit_test(test_without_a_travel_the_same_silence_is_an_outage),
        GIVEN_THREE_MATCHES(test_a_travel_begins_a_match_that_ends_the_one_before),
        GIVEN_THREE_MATCHES(test_a_match_s_players_and_collections_come_from_its_seconds),
        GIVEN_THREE_MATCHES(test_the_match_figures_are_thresholds),
        cmocka_unit_test(test_a_run_without_travels_has_no_match_figures),
        GIVEN_THREE_MATCHES(test_a_report_s_matches_read_back),
        cmocka_unit_test(test_a_report_from_before_matches_still_loads),
        cmocka_unit_test(test_shards_saw_the_same_travel_as_one_match),
        GIVEN_THREE_MATCHES(test_the_summary_has_a_row_per_match),
        GIVEN_THREE_MATCHES(test_the_page_draws_matches_as_bands_and_the_memory_after_each_travel),
        GIVEN_THREE_MATCHES(test_a_band_too_narrow_for_its_label_has_none),
        cmocka_unit_test(test_a_run_on_one_map_draws_no_bands),
        cmocka_unit_test(test_every_travel_of_a_long_run_begins_a_match_of_its_own),
        cmocka_unit_test(test_a_long_run_s_matches_read_back_and_merge_whole),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
