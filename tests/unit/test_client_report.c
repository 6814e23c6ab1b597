/*
 * test_client_report.c - what the load tester reads and writes without a server: the
 * Prometheus text it samples, the figures thresholds name, report.json read back exactly (what
 * `merge` relies on), and the report page's charts.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "churn_scrape.h"
#include "report.h"
#include "client_fixture.h"

static const char metrics_a[] =
    "# HELP reap_tick_seconds Work time of one frame.\n"
    "# TYPE reap_tick_seconds histogram\n"
    "reap_tick_seconds_bucket{le=\"0.001\"} 10\n"
    "reap_tick_seconds_bucket{le=\"0.005\"} 20\n"
    "reap_tick_seconds_bucket{le=\"0.01\"} 20\n"
    "reap_tick_seconds_bucket{le=\"+Inf\"} 20\n"
    "reap_tick_seconds_sum 0.05\n"
    "reap_tick_seconds_count 20\n"
    "reap_gc_collections_total{kind=\"full\"} 1\n"
    "reap_gc_collections_total{kind=\"incremental\"} 2\n"
    "reap_frame 100\n";

/* 100 frames later: 50 more under 1 ms, 40 in (1, 5] ms, 10 in (5, 10] ms. */
static const char metrics_b[] =
    "reap_tick_seconds_bucket{le=\"0.001\"} 60\n"
    "reap_tick_seconds_bucket{le=\"0.005\"} 110\n"
    "reap_tick_seconds_bucket{le=\"0.01\"} 120\n"
    "reap_tick_seconds_bucket{le=\"+Inf\"} 120\n"
    "reap_frame_phase_seconds_bucket{phase=\"net\",le=\"0.001\"} 7\n"
    "reap_frame_phase_seconds_bucket{phase=\"net\",le=\"+Inf\"} 7\n"
    "reap_gc_collections_total{kind=\"full\"} 2\n"
    "reap_gc_collections_total{kind=\"incremental\"} 4\n"
    "reap_frame 200\n";

static void test_a_metrics_page_is_read_into_samples_by_exact_key(void **state)
{
    churn_scrape s;

    (void)state;
    memset(&s, 0, sizeof s);
    assert_true(churn_scrape_parse(&s, metrics_a));

    assert_int_equal(s.n, 9);
    assert_true(churn_scrape_get(&s, "reap_frame") == 100);
    assert_true(churn_scrape_get(&s, "reap_tick_seconds_bucket{le=\"0.005\"}") == 20);
    assert_true(churn_scrape_sum(&s, "reap_gc_collections_total") == 3);
    assert_true(isnan(churn_scrape_get(&s, "reap_nothing")));
    assert_true(isnan(churn_scrape_sum(&s, "reap_tick")));   /* a prefix is not a name */
    churn_scrape_free(&s);
}

static void test_percentiles_between_two_samples_interpolate_in_the_bucket(void **state)
{
    churn_scrape a, b;

    (void)state;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    assert_true(churn_scrape_parse(&a, metrics_a));
    assert_true(churn_scrape_parse(&b, metrics_b));

    /* Between the two: 50 frames <= 1 ms, 40 in (1, 5], 10 in (5, 10]. */
    assert_true(fabs(churn_scrape_quantile(&a, &b, "reap_tick_seconds", NULL, 50) - 0.001) <
                1e-12);
    assert_true(fabs(churn_scrape_quantile(&a, &b, "reap_tick_seconds", NULL, 70) - 0.003) <
                1e-12);
    assert_true(fabs(churn_scrape_quantile(&a, &b, "reap_tick_seconds", NULL, 95) - 0.0075) <
                1e-12);
    assert_true(churn_scrape_quantile(&a, &b, "reap_tick_seconds", NULL, 100) == 0.01);
    /* Since the server's start, and a labelled histogram. */
    assert_true(churn_scrape_quantile(NULL, &b, "reap_frame_phase_seconds", "phase=\"net\"",
                                      99) <= 0.001);
    assert_true(isnan(churn_scrape_quantile(&a, &b, "reap_frame_phase_seconds",
                                            "phase=\"gc\"", 99)));
    churn_scrape_free(&a);
    churn_scrape_free(&b);
}

/* A report with known figures. */
static void report_fixture(churn_report *r, churn_timeline *tl)
{
    char err[256];

    memset(r, 0, sizeof *r);
    churn_timeline_init(tl);
    churn_totals_init(&r->totals);
    churn_server_init(&r->server_figs);
    r->schema = CHURN_REPORT_SCHEMA;
    snprintf(r->run_id, sizeof r->run_id, "2026-01-01T00:00:00Z-0000000000000007");
    snprintf(r->start_time, sizeof r->start_time, "2026-01-01T00:00:00Z");
    snprintf(r->host, sizeof r->host, "loadgen-1");
    snprintf(r->scenario, sizeof r->scenario, "smoke");
    snprintf(r->server, sizeof r->server, "127.0.0.1:7777");
    r->seed = 7;
    r->shards = 1;
    r->bots = 20;
    r->duration = 3;
    r->elapsed = 3.2;
    r->totals.joins = 40;
    r->totals.leaves = 40;
    r->totals.errors[CHURN_ERR_TIMEOUT] = 2;
    r->totals.refused = 5;                                 /* "server full": not errors */
    r->totals.gen_cpu_us = 1500000;                        /* 1.5 s of CPU over 3 s */
    r->totals.gen_seconds = 3;
    r->totals.gen_saturated = 1;
    for (uint64_t v = 1; v <= 100; v++)
        hist_record(&r->totals.lat[CHURN_LAT_JOIN], v);   /* 1..100 us: exact buckets */
    r->server_figs.have = true;
    r->server_figs.seconds = 3;
    r->server_figs.frames = 90;
    r->server_figs.tick_p99 = 0.004;
    r->leaks.baseline = r->leaks.after = r->leaks.leaked = -1;
    for (int i = 0; i < 3; i++) {
        churn_row row;
        memset(&row, 0, sizeof row);
        row.t = i + 1;
        row.connected = row.target = 20;
        row.joins = 13;
        row.have_server = true;
        row.server_objects = 1000 + 100 * (uint32_t)i;
        row.have_admin = true;
        row.tick_p50 = 0.001;
        row.tick_p99 = 0.004;
        row.tick_max = 0.005;
        row.gc_collections = i;
        row.gc_work_max = 0.0005;
        row.admin_objects = row.rss_bytes = row.frames = -1;
        row.levels_loaded = row.levels_pending_purge = -1;  /* no streaming world */
        row.refused = (uint32_t)i;
        row.gen_cpu = 0.25 + 0.35 * i;                     /* the last second is saturated */
        row.loop_lag = 0.002;
        assert_true(churn_timeline_add_row(tl, &row));
        assert_true(churn_timeline_add_sample(tl, i + 0.5, 1000 + 100 * (uint32_t)i));
    }
    assert_true(churn_timeline_add_gc(tl, 1.5));
    assert_true(client_threshold_parse("errors==0", &r->thresholds[0], err, sizeof err));
    assert_true(client_threshold_parse("join_p99<500ms", &r->thresholds[1], err, sizeof err));
    r->n_thresholds = 2;
    r->tl = tl;
}

static void test_thresholds_name_the_runs_figures_in_seconds(void **state)
{
    static churn_report r;
    churn_timeline tl;
    double v;

    (void)state;
    report_fixture(&r, &tl);

    assert_true(churn_report_metric(&r, "join_p99", &v) && v == 99e-6);
    assert_true(churn_report_metric(&r, "join_max", &v) && v == 100e-6);
    assert_true(churn_report_metric(&r, "errors", &v) && v == 2);
    assert_true(churn_report_metric(&r, "server_fps", &v) && v == 30);
    assert_true(churn_report_metric(&r, "server_tick_p99", &v) && v == 0.004);
    assert_true(churn_report_metric(&r, "server_net_p99", &v) && isnan(v)); /* not exported */
    assert_true(churn_report_metric(&r, "rtt_p99", &v) && isnan(v));        /* no sample */
    assert_false(churn_report_metric(&r, "nonsense", &v));
    churn_timeline_free(&tl);
}

static void test_refusals_of_a_full_server_are_a_figure_of_their_own_not_errors(void **state)
{
    static churn_report r;
    churn_timeline tl;
    double v;

    (void)state;
    report_fixture(&r, &tl);

    assert_true(churn_report_metric(&r, "refused", &v) && v == 5);
    assert_true(churn_report_metric(&r, "errors", &v) && v == 2);
    assert_true(churn_report_metric(&r, "refusal_rate", &v) && v == 5.0 / 45.0);
    assert_int_equal(churn_totals_errors(&r.totals), 2);
    churn_timeline_free(&tl);
}

static void test_a_second_at_90_percent_cpu_or_100_ms_late_is_saturated(void **state)
{
    churn_row row;

    (void)state;
    memset(&row, 0, sizeof row);
    row.gen_cpu = 0.5;
    row.loop_lag = 0.01;
    assert_false(churn_row_saturated(&row));
    row.gen_cpu = 0.9;
    assert_true(churn_row_saturated(&row));
    row.gen_cpu = 0.5;
    row.loop_lag = 0.15;
    assert_true(churn_row_saturated(&row));
    row.gen_cpu = row.loop_lag = -1;                       /* not measured */
    assert_false(churn_row_saturated(&row));
}

static void test_a_saturated_generator_is_reported_with_a_warning(void **state)
{
    static churn_report r;
    churn_timeline tl;
    char *buf;
    double v;

    (void)state;
    report_fixture(&r, &tl);

    buf = report_summary_text(&r);

    assert_non_null(strstr(buf, "generator: 1.50 s CPU over 3 s (50% of a core)"));
    assert_non_null(strstr(buf, "warning: the load generator was saturated for 1 s of 3"));
    assert_true(churn_report_metric(&r, "generator_saturated_seconds", &v) && v == 1);
    assert_true(churn_report_metric(&r, "generator_cpu", &v) && v == 0.5);
    free(buf);

    r.totals.gen_saturated = 0;
    buf = report_summary_text(&r);
    assert_null(strstr(buf, "warning"));
    free(buf);
    churn_timeline_free(&tl);
}

static void test_a_failing_threshold_is_counted_and_listed(void **state)
{
    static churn_report r;
    churn_timeline tl;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    (void)state;
    report_fixture(&r, &tl);

    assert_int_equal(churn_report_thresholds(&r, f), 1);   /* errors==0 fails, join passes */
    fclose(f);
    assert_non_null(strstr(buf, "errors==0"));
    assert_non_null(strstr(buf, "FAIL"));
    assert_non_null(strstr(buf, "pass"));
    free(buf);
    churn_timeline_free(&tl);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf;
    long n;

    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void remove_report(const char *dir)
{
    static const char *const names[] = { "report.json", "report.dat", "summary.tsv",
                                         "report.html" };
    char path[256];

    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
}

/* Saves r's files into dir (a mkdtemp template, made here) and loads them back into back and
 * back_tl (initialised here); a save or load that fails fails the test. */
static void save_and_load(const churn_report *r, char *dir, churn_report *back,
                          churn_timeline *back_tl)
{
    char err[512];

    assert_non_null(mkdtemp(dir));
    if (!churn_report_save(r, dir, err, sizeof err))
        fail_msg("%s", err);
    churn_timeline_init(back_tl);
    if (!churn_report_load(back, back_tl, CLIENT_THRESHOLDS_MAX, dir, err, sizeof err))
        fail_msg("%s", err);
}

static void test_a_saved_report_reads_back_with_the_same_figures(void **state)
{
    static churn_report r, back;
    churn_timeline tl, back_tl;
    char dir[] = "/tmp/reap-report-XXXXXX";

    (void)state;
    report_fixture(&r, &tl);

    save_and_load(&r, dir, &back, &back_tl);

    assert_string_equal(back.run_id, r.run_id);
    assert_string_equal(back.scenario, "smoke");
    assert_int_equal(back.seed, 7);
    assert_int_equal(back.totals.joins, 40);
    assert_int_equal(back.totals.errors[CHURN_ERR_TIMEOUT], 2);
    assert_int_equal(back.totals.refused, 5);
    assert_int_equal(back.totals.gen_cpu_us, 1500000);
    assert_int_equal(back.totals.gen_seconds, 3);
    assert_int_equal(back.totals.gen_saturated, 1);
    assert_memory_equal(&back.totals.lat[CHURN_LAT_JOIN], &r.totals.lat[CHURN_LAT_JOIN],
                        sizeof(hist));
    assert_true(back.server_figs.have);
    assert_true(back.server_figs.tick_p99 == 0.004);
    assert_int_equal(back_tl.n_rows, 3);
    assert_int_equal(back_tl.rows[2].server_objects, 1200);
    assert_int_equal(back_tl.rows[2].refused, 2);
    assert_true(back_tl.rows[2].gen_cpu == 0.95);
    assert_true(back_tl.rows[2].loop_lag == 0.002);
    assert_int_equal(back_tl.n_gc, 1);
    assert_int_equal(back_tl.n_samples, 3);
    assert_int_equal(back.n_thresholds, r.n_thresholds);
    for (uint32_t i = 0; i < back.n_thresholds; i++)
        assert_string_equal(back.thresholds[i].text, r.thresholds[i].text);
    churn_timeline_free(&back_tl);
    churn_timeline_free(&tl);
    remove_report(dir);
}

static void test_the_report_says_where_the_bots_sent_from_and_a_merge_keeps_it(void **state)
{
    static churn_report r, back, other, merged;
    churn_timeline tl, back_tl, other_tl, merged_tl;
    char dir[] = "/tmp/reap-report-XXXXXX";
    char path[300], *json;

    (void)state;
    report_fixture(&r, &tl);
    snprintf(r.source_addresses, sizeof r.source_addresses, "own");
    snprintf(r.source_option, sizeof r.source_option, "auto");

    save_and_load(&r, dir, &back, &back_tl);

    snprintf(path, sizeof path, "%s/report.json", dir);
    json = read_file(path);
    assert_non_null(strstr(json, "\"source_addresses\": \"own\",\n"
                                 "  \"source_addresses_option\": \"auto\""));
    assert_string_equal(back.source_addresses, "own");
    assert_string_equal(back.source_option, "auto");
    /* shards that sent alike merge as they sent; shards that did not, as mixed */
    report_fixture(&other, &other_tl);
    snprintf(other.source_addresses, sizeof other.source_addresses, "own");
    report_merge_shards(&merged, &merged_tl, &r, &other);
    assert_string_equal(merged.source_addresses, "own");
    churn_timeline_free(&merged_tl);
    snprintf(other.source_addresses, sizeof other.source_addresses, "own, then one");
    report_merge_shards(&merged, &merged_tl, &r, &other);
    assert_string_equal(merged.source_addresses, "mixed");
    free(json);
    churn_timeline_free(&merged_tl);
    churn_timeline_free(&other_tl);
    churn_timeline_free(&back_tl);
    churn_timeline_free(&tl);
    remove_report(dir);
}

static void test_live_objects_by_class_are_kept_per_scrape_and_read_back(void **state)
{
    static churn_report r, back;
    static const char *const keys[] = {
        "reap_gc_objects", "reap_world_objects_by_class{class=\"Weapon\"}",
        "reap_world_objects_by_class{class=\"WeaponPart\"}",
    };
    const double values[] = { 5000, 40, 80 };
    churn_timeline tl, back_tl;
    char dir[] = "/tmp/reap-report-XXXXXX";
    char html[300];
    char *page;

    (void)state;
    report_fixture(&r, &tl);
    /* Given two scrapes, the second without WeaponPart and with a class first seen then... */
    assert_true(churn_timeline_add_classes(&tl, 1.0, keys, values, 3));
    const char *later[] = { keys[1], "reap_world_objects_by_class{class=\"Ammo\"}" };
    const double later_v[] = { 41, 7 };
    assert_true(churn_timeline_add_classes(&tl, 2.0, later, later_v, 2));
    assert_true(churn_timeline_add_classes(&tl, 3.0, keys, values, 1)); /* none: no sample */

    /* ...the classes are kept in the order first seen, a missing one is -1... */
    assert_int_equal(tl.n_classes, 3);
    assert_string_equal(tl.classes[2], "Ammo");
    assert_int_equal(tl.n_class_samples, 2);
    assert_true(tl.class_samples[1].count[0] == 41 && tl.class_samples[1].count[1] == -1);

    /* ...and they survive the report's save and load, and get a chart on the page. */
    save_and_load(&r, dir, &back, &back_tl);
    assert_int_equal(back_tl.n_classes, 3);
    assert_int_equal(back_tl.n_class_samples, 2);
    assert_true(back_tl.class_samples[0].count[1] == 80);
    assert_true(back_tl.class_samples[1].count[2] == 7);
    snprintf(html, sizeof html, "%s/report.html", dir);
    page = read_file(html);
    assert_non_null(strstr(page, "Live objects by class"));
    free(page);
    churn_timeline_free(&back_tl);
    churn_timeline_free(&tl);
    remove_report(dir);
}

static void test_a_report_that_is_not_json_is_refused_naming_the_file(void **state)
{
    static churn_report back;
    churn_timeline tl;
    char dir[] = "/tmp/reap-report-XXXXXX", path[256], err[512];
    FILE *f;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/report.json", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"schema_version\": 1, \"run_id\": ", f);
    fclose(f);
    churn_timeline_init(&tl);

    assert_false(churn_report_load(&back, &tl, CLIENT_THRESHOLDS_MAX, dir, err, sizeof err));
    assert_non_null(strstr(err, path));
    assert_non_null(strstr(err, "not JSON"));

    f = fopen(path, "w");
    assert_non_null(f);
    fputs("{\"schema_version\": 1, \"run_id\": \"x\", \"seed\": 1}", f);
    fclose(f);
    assert_false(churn_report_load(&back, &tl, CLIENT_THRESHOLDS_MAX, dir, err, sizeof err));
    assert_non_null(strstr(err, "not a reap-client report"));
    churn_timeline_free(&tl);
    remove_report(dir);
}

static void test_the_json_report_carries_schema_run_and_latency_buckets(void **state)
{
    static churn_report r;
    churn_timeline tl;
    char dir[] = "/tmp/reap-report-XXXXXX";
    char err[512], path[256];
    char *json;

    (void)state;
    report_fixture(&r, &tl);
    assert_non_null(mkdtemp(dir));
    assert_true(churn_report_save(&r, dir, err, sizeof err));
    snprintf(path, sizeof path, "%s/report.json", dir);
    json = read_file(path);

    assert_non_null(strstr(json, "\"schema_version\": 1"));
    assert_non_null(strstr(json, "\"run_id\": \"2026-01-01T00:00:00Z-0000000000000007\""));
    assert_non_null(strstr(json, "\"start_time\": \"2026-01-01T00:00:00Z\""));
    assert_non_null(strstr(json, "\"host\": \"loadgen-1\""));
    assert_non_null(strstr(json, "\"scenario\": \"smoke\""));
    assert_non_null(strstr(json, "\"seed\": 7"));
    assert_non_null(strstr(json, "\"join\": {\"count\": 100, \"p50_ms\": 0.050"));
    assert_non_null(strstr(json, "\"threshold\": \"errors==0\", \"value\": 2, \"pass\": false"));
    assert_non_null(strstr(json, "\"tick_p99_ms\": 4"));
    free(json);
    churn_timeline_free(&tl);
    remove_report(dir);
}

static void test_the_report_page_draws_a_chart_for_each_timeline_with_data(void **state)
{
    static churn_report r;
    churn_timeline tl;
    char *buf;

    (void)state;
    report_fixture(&r, &tl);

    buf = report_page_text(&r);

    assert_int_equal(strncmp(buf, "<!DOCTYPE html>", 15), 0);
    assert_int_equal(text_count(buf, "<svg class=\"chart\""), 7);
    /* bots (2 lines), rates (4), objects (1), tick (3), gc (2), generator (2), latency (join
     * only) */
    assert_int_equal(text_count(buf, "<polyline class=\"series\""), 15);
    assert_non_null(strstr(buf, "was saturated for 1 s of 3"));
    assert_non_null(strstr(buf, "class=\"fail\">FAIL"));
    assert_non_null(strstr(buf, "</html>\n"));
    free(buf);
    churn_timeline_free(&tl);
}

static void test_a_chart_breaks_its_line_where_a_second_was_not_measured(void **state)
{
    static churn_report r;
    churn_timeline tl;
    char *buf, *tick;

    (void)state;
    report_fixture(&r, &tl);
    for (uint32_t i = 0; i < 3; i++) {     /* six seconds: the fourth has no /metrics sample */
        churn_row row = tl.rows[i];
        row.t = 4 + i;
        row.have_admin = i != 0;
        assert_true(churn_timeline_add_row(&tl, &row));
    }

    buf = report_page_text(&r);

    assert_null(strstr(buf, "charts have data"));       /* no self-check text for people */
    assert_non_null(strstr(buf, "data-charts-drawn"));  /* ... but one for tests */
    tick = strstr(buf, "Server frame time per second");
    assert_non_null(tick);
    *strstr(tick, "</figure>") = '\0';
    /* p50, p99 and max each in two runs: seconds 1-3 and 5-6, no line across the fourth */
    assert_int_equal(text_count(tick, "<polyline class=\"series\""), 6);
    /* the dashboard's roles and palette (Okabe-Ito): p50 blue, p99 orange, max vermillion */
    assert_non_null(strstr(tick, "stroke=\"#0072B2\""));
    assert_non_null(strstr(tick, "stroke=\"#E69F00\""));
    assert_non_null(strstr(tick, "stroke=\"#D55E00\""));
    free(buf);
    churn_timeline_free(&tl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_metrics_page_is_read_into_samples_by_exact_key),
        cmocka_unit_test(test_percentiles_between_two_samples_interpolate_in_the_bucket),
        cmocka_unit_test(test_thresholds_name_the_runs_figures_in_seconds),
        cmocka_unit_test(test_refusals_of_a_full_server_are_a_figure_of_their_own_not_errors),
        cmocka_unit_test(test_a_second_at_90_percent_cpu_or_100_ms_late_is_saturated),
        cmocka_unit_test(test_a_saturated_generator_is_reported_with_a_warning),
        cmocka_unit_test(test_a_failing_threshold_is_counted_and_listed),
        cmocka_unit_test(test_a_saved_report_reads_back_with_the_same_figures),
        cmocka_unit_test(test_the_report_says_where_the_bots_sent_from_and_a_merge_keeps_it),
        cmocka_unit_test(test_live_objects_by_class_are_kept_per_scrape_and_read_back),
        cmocka_unit_test(test_a_report_that_is_not_json_is_refused_naming_the_file),
        cmocka_unit_test(test_the_json_report_carries_schema_run_and_latency_buckets),
        cmocka_unit_test(test_the_report_page_draws_a_chart_for_each_timeline_with_data),
        cmocka_unit_test(test_a_chart_breaks_its_line_where_a_second_was_not_measured),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
