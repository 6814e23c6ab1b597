/*
 * test_client_faults.c - the load tester when things go wrong, without a server: the rule
 * that holds a silent server lost (on a fake clock), the stretches without a server and their
 * union across shards, a run's files written in order of value when the disk has little room
 * (fake writers), and a partial checkpoint that reads back, merges and prints as partial.
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

#include "churn_meter.h"
#include "churn_outage.h"
#include "churn_watch.h"
#include "report.h"
#include "report_stream.h"
#include "client_fixture.h"

/* ---- the watch: a silent server is lost from the last moment it was heard ---------------- */

static void test_a_server_heard_every_second_is_never_lost(void **state)
{
    churn_watch w;

    (void)state;
    churn_watch_init(&w, 2.0);

    for (double now = 0.005; now < 60; now += 0.005)
        assert_int_equal(churn_watch_step(&w, now, floor(now), 0.0, false, false),
                         CHURN_WATCH_NONE);

    assert_false(w.lost);
}

static void test_silence_while_a_bot_listens_makes_the_server_lost_when_it_fell_silent(
    void **state)
{
    churn_watch w;

    (void)state;
    churn_watch_init(&w, 2.0);
    assert_int_equal(churn_watch_step(&w, 6.1, 6.1, 0.0, false, false), CHURN_WATCH_NONE);

    assert_int_equal(churn_watch_step(&w, 8.0, 6.1, 0.0, false, false), CHURN_WATCH_NONE);
    assert_int_equal(churn_watch_step(&w, 8.1, 6.1, 0.0, false, false), CHURN_WATCH_LOST);

    assert_true(w.lost);
    assert_true(w.lost_at == 6.1);
    assert_true(w.found_at == 8.1);
    /* once lost it is not found lost again */
    assert_int_equal(churn_watch_step(&w, 20.0, 6.1, 0.0, false, false), CHURN_WATCH_NONE);
}

static void test_silence_while_no_bot_listens_is_not_loss(void **state)
{
    churn_watch w;

    (void)state;
    churn_watch_init(&w, 2.0);
    assert_int_equal(churn_watch_step(&w, 1.0, 1.0, 0.0, false, false), CHURN_WATCH_NONE);

    /* every bot between visits for 30 s: nobody to hear the server */
    assert_int_equal(churn_watch_step(&w, 31.0, 1.0, -1, false, false), CHURN_WATCH_NONE);
    /* a bot connects at 31 s: silence counts from then */
    assert_int_equal(churn_watch_step(&w, 32.9, 1.0, 31.0, false, false), CHURN_WATCH_NONE);
    assert_int_equal(churn_watch_step(&w, 33.0, 1.0, 31.0, false, false), CHURN_WATCH_LOST);

    assert_true(w.lost_at == 1.0);
}

static void test_a_server_never_heard_is_not_lost(void **state)
{
    churn_watch w;

    (void)state;
    churn_watch_init(&w, 2.0);

    assert_int_equal(churn_watch_step(&w, 30.0, -1, 0.0, false, false), CHURN_WATCH_NONE);

    assert_false(w.lost);
}

static void test_a_late_turn_decides_nothing_and_the_next_one_does(void **state)
{
    churn_watch w;

    (void)state;
    churn_watch_init(&w, 2.0);
    assert_int_equal(churn_watch_step(&w, 5.0, 5.0, 0.0, false, false), CHURN_WATCH_NONE);

    /* the loop was away 3 s: what arrived meanwhile is read after this turn */
    assert_int_equal(churn_watch_step(&w, 8.0, 5.0, 0.0, true, false), CHURN_WATCH_NONE);
    assert_int_equal(churn_watch_step(&w, 8.005, 7.9, 0.0, false, false), CHURN_WATCH_NONE);
    assert_false(w.lost);
    assert_int_equal(churn_watch_step(&w, 8.010, 5.0, 0.0, false, false), CHURN_WATCH_NONE);
    assert_false(w.lost);
}

static void test_a_lost_server_heard_again_is_back_at_that_moment(void **state)
{
    churn_watch w;

    (void)state;
    churn_watch_init(&w, 2.0);
    churn_watch_step(&w, 6.0, 6.0, 0.0, false, false);
    assert_int_equal(churn_watch_step(&w, 8.5, 6.0, 0.0, false, false), CHURN_WATCH_LOST);

    assert_int_equal(churn_watch_step(&w, 12.3, 12.25, 11.0, false, false), CHURN_WATCH_BACK);

    assert_false(w.lost);
    assert_true(w.back_at == 12.25);
    /* and it can be lost again */
    assert_int_equal(churn_watch_step(&w, 14.3, 12.25, 11.0, false, false), CHURN_WATCH_LOST);
    assert_true(w.lost_at == 12.25);
}

/* ---- stretches without a server --------------------------------------------------------- */

static void test_a_stretch_still_open_lasts_to_the_end_of_the_run(void **state)
{
    churn_outages o;

    (void)state;
    memset(&o, 0, sizeof o);

    churn_outages_begin(&o, 6.1);

    assert_true(churn_outages_open(&o));
    assert_true(fabs(churn_outages_seconds(&o, 20.0) - 13.9) < 1e-9);
    churn_outages_end(&o, 9.1);
    assert_false(churn_outages_open(&o));
    assert_true(fabs(churn_outages_seconds(&o, 20.0) - 3.0) < 1e-9);
}

static void test_shards_that_lost_the_same_server_lost_it_once(void **state)
{
    churn_outages a, b;

    (void)state;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    churn_outages_begin(&a, 6.10);
    churn_outages_end(&a, 9.00);
    churn_outages_begin(&a, 15.0);           /* never back, in shard a */
    churn_outages_begin(&b, 6.12);
    churn_outages_end(&b, 9.05);
    churn_outages_begin(&b, 12.0);
    churn_outages_end(&b, 13.0);

    churn_outages_merge(&a, &b);

    assert_int_equal(a.n, 3);
    assert_true(a.list[0].from == 6.10 && a.list[0].to == 9.05);
    assert_true(a.list[1].from == 12.0 && a.list[1].to == 13.0);
    assert_true(a.list[2].from == 15.0 && a.list[2].to < 0);
    assert_true(fabs(churn_outages_seconds(&a, 20.0) - (2.95 + 1.0 + 5.0)) < 1e-9);
}

static void test_past_the_list_s_room_stretches_fold_into_the_last_one(void **state)
{
    churn_outages o;

    (void)state;
    memset(&o, 0, sizeof o);

    for (int i = 0; i < CHURN_OUTAGES_MAX + 5; i++) {
        churn_outages_begin(&o, 10.0 * i);
        churn_outages_end(&o, 10.0 * i + 1);
    }

    assert_int_equal(o.n, CHURN_OUTAGES_MAX);
    /* the last entry spans every stretch folded into it: never fewer seconds than there were */
    assert_true(o.list[o.n - 1].to == 10.0 * (CHURN_OUTAGES_MAX + 4) + 1);
    assert_true(churn_outages_seconds(&o, 1e9) >= CHURN_OUTAGES_MAX + 5);
}

static void test_a_lost_server_is_an_error_of_its_own_kind_and_an_open_stretch(void **state)
{
    static churn_meter m;

    (void)state;
    churn_meter_init(&m);

    churn_meter_server_lost(&m, 6.1);

    assert_int_equal(m.totals.errors[CHURN_ERR_SERVER_LOST], 1);
    assert_int_equal(m.second.errors, 1);
    assert_non_null(strstr(m.first_error, "stopped answering at 6.1 s"));
    assert_true(churn_outages_open(&m.outages));
    churn_meter_server_back(&m, 9.0);
    assert_false(churn_outages_open(&m.outages));
}

static void test_a_busy_refusal_is_a_refusal_counted_apart_not_an_error(void **state)
{
    static churn_meter m;

    (void)state;
    churn_meter_init(&m);

    churn_meter_refused(&m, true);
    churn_meter_refused(&m, false);

    assert_int_equal(m.totals.refused, 2);
    assert_int_equal(m.totals.refused_busy, 1);
    assert_int_equal(m.second.refused, 2);
    assert_int_equal(churn_totals_errors(&m.totals), 0);
}

/* ---- a run's files, in order of value ----------------------------------------------------- */

static void report_fixture(churn_report *r, churn_timeline *tl)
{
    memset(r, 0, sizeof *r);
    churn_timeline_init(tl);
    churn_totals_init(&r->totals);
    churn_server_init(&r->server_figs);
    r->schema = CHURN_REPORT_SCHEMA;
    snprintf(r->run_id, sizeof r->run_id, "2026-01-01T00:00:00Z-0000000000000007");
    snprintf(r->start_time, sizeof r->start_time, "2026-01-01T00:00:00Z");
    snprintf(r->scenario, sizeof r->scenario, "soak");
    r->shards = 1;
    r->bots = 20;
    r->duration = 14400;
    r->elapsed = 40;
    r->totals.joins = 80;
    r->totals.refused = 7;
    r->totals.refused_busy = 4;
    r->leaks.baseline = r->leaks.after = r->leaks.leaked = -1;
    for (uint64_t v = 1; v <= 100; v++)
        hist_record(&r->totals.lat[CHURN_LAT_JOIN], v * 1000);
    for (int i = 0; i < 40; i++) {
        churn_row row;

        memset(&row, 0, sizeof row);
        row.t = i + 1;
        row.connected = row.target = 20;
        row.gen_cpu = row.loop_lag = -1;
        row.tick_p50 = row.tick_p99 = row.tick_max = row.gc_work_max = -1;
        row.gc_collections = row.admin_objects = row.rss_bytes = row.frames = -1;
        row.server_lost = i >= 30 && i < 34;
        assert_true(churn_timeline_add_row(tl, &row));
    }
    churn_outages_begin(&r->outages, 29.5);
    churn_outages_end(&r->outages, 33.2);
    r->tl = tl;
}

static const char *const value_order[] = {
    "report.json", "report.dat", "summary.tsv", "out/verdict.xml", "timeline.csv", "churn.json",
    "report.html", "churn.svg",
};

static void test_a_run_s_files_come_in_order_of_value(void **state)
{
    static churn_report r;
    churn_timeline tl;
    churn_output outs[CHURN_OUTPUTS_MAX];
    uint32_t n;

    (void)state;
    report_fixture(&r, &tl);

    n = churn_outputs_list(&r, &tl, false, "out/verdict.xml", outs);

    assert_int_equal(n, sizeof value_order / sizeof *value_order);
    for (uint32_t i = 0; i < n; i++)
        assert_string_equal(outs[i].name, value_order[i]);
    /* a streamed timeline.csv that holds every row is not written again; a merge has no
     * timeline files */
    assert_int_equal(churn_outputs_list(&r, &tl, true, "", outs), n - 2);
    assert_int_equal(churn_outputs_list(&r, NULL, false, NULL, outs), 4);
    churn_timeline_free(&tl);
}

/* A fake disk: each file is rendered into memory to learn its size, and written only while
 * the room left holds it, as a filesystem that fills up would. */
typedef struct fake_disk {
    size_t room;
    char log[512];            /* the files tried, in order */
} fake_disk;

typedef struct fake_file {
    fake_disk *disk;
    const char *name;
    churn_write_fn real;
    const void *data;
} fake_file;

static bool fake_write_fn(const void *data, FILE *f)
{
    const fake_file *ff = data;
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    bool ok;

    assert_non_null(mem);
    ok = ff->real(ff->data, mem);
    fclose(mem);
    free(buf);
    snprintf(ff->disk->log + strlen(ff->disk->log), sizeof ff->disk->log - strlen(ff->disk->log),
             "%s ", ff->name);
    if (!ok || len > ff->disk->room)
        return false;
    ff->disk->room -= len;
    fputs("x", f);
    fflush(f);
    return !ferror(f);
}

/* Bytes the real writer of outs[i] writes. */
static size_t size_of(const churn_output *o)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);

    assert_non_null(mem);
    assert_true(o->write(o->data, mem));
    fclose(mem);
    free(buf);
    return len;
}

static void test_a_disk_with_room_for_the_data_gets_the_data_and_the_rest_is_still_tried(
    void **state)
{
    static churn_report r;
    churn_timeline tl;
    churn_output outs[CHURN_OUTPUTS_MAX];
    fake_file files[CHURN_OUTPUTS_MAX];
    fake_disk disk = { 0, "" };
    char dir[] = "/tmp/reap-faults-XXXXXX", failed[256], path[300];
    FILE *errors;
    char *said = NULL;
    size_t said_len = 0;
    uint32_t n, not_written;
    struct stat st;

    (void)state;
    report_fixture(&r, &tl);
    n = churn_outputs_list(&r, &tl, false, NULL, outs);
    /* room for report.json and report.dat, and a little more: not for the page */
    disk.room = size_of(&outs[0]) + size_of(&outs[1]) + 100;
    assert_true(size_of(&outs[5]) > 100);                       /* report.html */
    for (uint32_t i = 0; i < n; i++) {
        files[i] = (fake_file){ &disk, outs[i].name, outs[i].write, outs[i].data };
        outs[i].write = fake_write_fn;
        outs[i].data = &files[i];
    }
    assert_non_null(mkdtemp(dir));
    errors = open_memstream(&said, &said_len);
    assert_non_null(errors);

    not_written = churn_outputs_write(dir, outs, n, errors, "reap-client", failed, sizeof failed);
    fclose(errors);

    /* every file was tried, in order of value */
    assert_string_equal(disk.log, "report.json report.dat summary.tsv timeline.csv churn.json "
                                  "report.html churn.svg ");
    snprintf(path, sizeof path, "%s/report.json", dir);
    assert_int_equal(stat(path, &st), 0);
    snprintf(path, sizeof path, "%s/report.dat", dir);
    assert_int_equal(stat(path, &st), 0);
    snprintf(path, sizeof path, "%s/report.html", dir);
    assert_int_not_equal(stat(path, &st), 0);
    assert_true(not_written >= 1);
    assert_non_null(strstr(failed, "report.html"));
    assert_null(strstr(failed, "report.json"));
    /* each failure is named, as a path, on its own line */
    assert_non_null(strstr(said, "reap-client: cannot write '"));
    assert_non_null(strstr(said, "/report.html'"));
    free(said);
    for (uint32_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, value_order[i < 3 ? i : i + 1]);
        unlink(path);
    }
    rmdir(dir);
    churn_timeline_free(&tl);
}

static int failures_left;

/* Fails while failures_left > 0 (each call spends one), then writes "new". */
static bool flaky_fn(const void *data, FILE *f)
{
    (void)data;
    if (failures_left-- > 0)
        return false;
    fputs("new", f);
    fflush(f);
    return !ferror(f);
}

static void test_report_json_that_fits_only_without_its_checkpoint_replaces_it(void **state)
{
    char dir[] = "/tmp/reap-faults-XXXXXX", path[300], failed[64], text[16] = "";
    churn_output json = { "report.json", NULL, flaky_fn, NULL, true };
    churn_output page = { "report.html", NULL, flaky_fn, NULL, false };
    FILE *f, *errors = fopen("/dev/null", "w");

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/report.json", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs("checkpoint", f);
    fclose(f);
    failures_left = 1;

    assert_int_equal(churn_outputs_write(dir, &json, 1, errors, "t", failed, sizeof failed), 0);

    f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(text, sizeof text, f));
    fclose(f);
    assert_string_equal(text, "new");
    /* a page gets no second try: only the report may give up its old copy */
    snprintf(path, sizeof path, "%s/report.html", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    fclose(f);
    failures_left = 1;
    assert_int_equal(churn_outputs_write(dir, &page, 1, errors, "t", failed, sizeof failed), 1);
    fclose(errors);
    unlink(path);
    snprintf(path, sizeof path, "%s/report.json", dir);
    unlink(path);
    rmdir(dir);
}

/* ---- partial reports ---------------------------------------------------------------------- */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    char *buf = calloc(1, 1 << 20);

    assert_non_null(f);
    assert_non_null(buf);
    buf[fread(buf, 1, (1 << 20) - 1, f)] = '\0';
    fclose(f);
    return buf;
}

static void test_a_checkpoint_reads_back_partial_with_its_outages_and_busy_refusals(void **state)
{
    static churn_report r, back;
    churn_timeline tl, back_tl;
    churn_stream st;
    char dir[] = "/tmp/reap-faults-XXXXXX", err[600], path[300];
    FILE *errors = fopen("/dev/null", "w");
    double v;

    (void)state;
    report_fixture(&r, &tl);
    r.partial = true;
    assert_non_null(mkdtemp(dir));
    assert_true(churn_stream_open(&st, dir, errors));

    churn_stream_checkpoint(&st, &r);
    churn_stream_close(&st, 0);

    churn_timeline_init(&back_tl);
    if (!churn_report_load(&back, &back_tl, CLIENT_THRESHOLDS_MAX, dir, err, sizeof err))
        fail_msg("%s", err);
    assert_true(back.partial);
    assert_true(back.elapsed == 40);
    assert_int_equal(back.totals.refused_busy, 4);
    assert_int_equal(back.outages.n, 1);
    assert_true(back.outages.list[0].from == 29.5 && back.outages.list[0].to == 33.2);
    assert_int_equal(back_tl.n_rows, 40);
    assert_true(back_tl.rows[31].server_lost && !back_tl.rows[29].server_lost);
    assert_true(churn_report_metric(&back, "refused_busy", &v) && v == 4);
    assert_true(churn_report_metric(&back, "server_outages", &v) && v == 1);
    assert_true(churn_report_metric(&back, "server_outage_seconds", &v) && fabs(v - 3.7) < 1e-9);
    fclose(errors);
    snprintf(path, sizeof path, "%s/report.json", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/timeline.csv", dir);
    unlink(path);
    rmdir(dir);
    churn_timeline_free(&tl);
    churn_timeline_free(&back_tl);
}

static void test_the_streamed_csv_holds_each_row_as_it_closes(void **state)
{
    static churn_report r;
    churn_timeline tl;
    churn_stream st;
    char dir[] = "/tmp/reap-faults-XXXXXX", path[300];
    char *csv;
    FILE *errors = fopen("/dev/null", "w");
    int lines = 0;

    (void)state;
    report_fixture(&r, &tl);
    assert_non_null(mkdtemp(dir));
    assert_true(churn_stream_open(&st, dir, errors));
    snprintf(path, sizeof path, "%s/timeline.csv", dir);

    for (uint32_t i = 0; i < 3; i++)
        churn_stream_row(&st, &tl.rows[30 + i]);

    /* readable before the stream is closed: a killed run leaves it so */
    csv = slurp(path);
    for (char *p = csv; (p = strchr(p, '\n')) != NULL; p++)
        lines++;
    assert_int_equal(lines, 1 + 3);
    assert_non_null(strstr(csv, ",server_lost\n"));
    assert_non_null(strstr(csv, ",1\n"));
    free(csv);
    assert_true(churn_stream_close(&st, 3));
    fclose(errors);
    unlink(path);
    rmdir(dir);
    churn_timeline_free(&tl);
}

static void test_a_merge_with_a_partial_shard_is_partial_and_says_so(void **state)
{
    static churn_report a, b, merged;
    churn_timeline tla, tlb, tl;
    char *text;

    (void)state;
    report_fixture(&a, &tla);
    report_fixture(&b, &tlb);
    b.partial = true;
    memset(&b.outages, 0, sizeof b.outages);
    churn_outages_begin(&b.outages, 29.6);

    report_merge_shards(&merged, &tl, &a, &b);

    assert_true(merged.partial);
    assert_int_equal(merged.outages.n, 1);
    assert_true(merged.outages.list[0].from == 29.5 && merged.outages.list[0].to < 0);
    assert_true(tl.rows[31].server_lost);
    text = report_summary_text(&merged);
    assert_non_null(strstr(text, "partial: this report is a checkpoint of a run that did not "
                                 "finish: it stops at 40.0 s of 14400.0 s"));
    assert_non_null(strstr(text, "server lost: the server stopped answering at 29.5 s; 10.5 s "
                                 "of the run had no server"));
    free(text);
    churn_timeline_free(&tla);
    churn_timeline_free(&tlb);
    churn_timeline_free(&tl);
}

static void test_the_page_of_a_partial_run_says_so_and_shades_the_outage(void **state)
{
    static churn_report r;
    churn_timeline tl;
    char *html;

    (void)state;
    report_fixture(&r, &tl);
    r.partial = true;

    html = report_page_text(&r);

    assert_non_null(strstr(html, "Partial report"));
    assert_non_null(strstr(html, "It stops at 40.0 s of 14400.0 s"));
    assert_non_null(strstr(html, "The server stopped answering at 29.5 s and answered again at "
                                 "33.2 s"));
    assert_non_null(strstr(html, "class=\"nosrv\""));
    free(html);
    churn_timeline_free(&tl);
}

static void test_a_timeline_copy_shares_nothing_with_its_source(void **state)
{
    static churn_report r;
    churn_timeline tl, copy;

    (void)state;
    report_fixture(&r, &tl);
    assert_true(churn_timeline_add_sample(&tl, 1.0, 77));
    assert_true(churn_timeline_add_gc(&tl, 2.0));
    churn_timeline_init(&copy);

    assert_true(churn_timeline_copy(&copy, &tl));
    tl.rows[0].connected = 999;
    assert_true(churn_timeline_add_row(&tl, &tl.rows[1]));

    assert_int_equal(copy.n_rows, 40);
    assert_int_equal(copy.rows[0].connected, 20);
    assert_true(copy.rows != tl.rows && copy.samples != tl.samples);
    assert_int_equal(copy.samples[0].objects, 77);
    assert_true(copy.gc_times[0] == 2.0);
    /* copied again, into the same arrays */
    assert_true(churn_timeline_copy(&copy, &tl));
    assert_int_equal(copy.n_rows, 41);
    assert_int_equal(copy.rows[0].connected, 999);
    churn_timeline_free(&copy);
    churn_timeline_free(&tl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_server_heard_every_second_is_never_lost),
        cmocka_unit_test(test_silence_while_a_bot_listens_makes_the_server_lost_when_it_fell_silent),
        cmocka_unit_test(test_silence_while_no_bot_listens_is_not_loss),
        cmocka_unit_test(test_a_server_never_heard_is_not_lost),
        cmocka_unit_test(test_a_late_turn_decides_nothing_and_the_next_one_does),
        cmocka_unit_test(test_a_lost_server_heard_again_is_back_at_that_moment),
        cmocka_unit_test(test_a_stretch_still_open_lasts_to_the_end_of_the_run),
        cmocka_unit_test(test_shards_that_lost_the_same_server_lost_it_once),
        cmocka_unit_test(test_past_the_list_s_room_stretches_fold_into_the_last_one),
        cmocka_unit_test(test_a_lost_server_is_an_error_of_its_own_kind_and_an_open_stretch),
        cmocka_unit_test(test_a_busy_refusal_is_a_refusal_counted_apart_not_an_error),
        cmocka_unit_test(test_a_run_s_files_come_in_order_of_value),
        cmocka_unit_test(test_a_disk_with_room_for_the_data_gets_the_data_and_the_rest_is_still_tried),
        cmocka_unit_test(test_report_json_that_fits_only_without_its_checkpoint_replaces_it),
        cmocka_unit_test(test_a_checkpoint_reads_back_partial_with_its_outages_and_busy_refusals),
        cmocka_unit_test(test_the_streamed_csv_holds_each_row_as_it_closes),
        cmocka_unit_test(test_a_merge_with_a_partial_shard_is_partial_and_says_so),
        cmocka_unit_test(test_the_page_of_a_partial_run_says_so_and_shades_the_outage),
        cmocka_unit_test(test_a_timeline_copy_shares_nothing_with_its_source),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
