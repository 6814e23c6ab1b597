/*
 * test_dashboard_ring.c - what the dashboard keeps: once-a-second samples for ten minutes and
 * the collections among them, fed by hand (no loop, no engine).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dashboard.h"

static const double no_phases[DASHBOARD_PHASES] = { 0, 0, 0, 0 };

static int setup(void **state)
{
    dashboard_ring *r = malloc(sizeof *r);

    assert_non_null(r);
    assert_true(dashboard_ring_init(r, 2, 64));
    *state = r;
    return 0;
}

static int teardown(void **state)
{
    dashboard_ring_free(*state);
    free(*state);
    return 0;
}

static dashboard_inputs inputs_at(double t)
{
    static const uint32_t actors[2] = { 7, 9 };
    dashboard_inputs in = { 0 };

    in.t = t;
    in.objects = 100;
    in.actors = actors;
    in.rss_mb = 12.5;
    return in;
}

static void test_a_seconds_tick_percentiles_come_from_its_frames(void **state)
{
    dashboard_ring *r = *state;
    dashboard_inputs in = inputs_at(1);

    for (int ms = 50; ms >= 1; ms--) /* 1..50 ms, out of order */
        dashboard_ring_frame(r, ms / 1e3, no_phases);
    dashboard_ring_second(r, &in);

    const dashboard_sample *s = dashboard_ring_sample(r, 0);
    assert_int_equal(r->count, 1);
    assert_int_equal(s->frames, 50);
    assert_float_equal(s->tick_p50_ms, 25, 1e-3);
    assert_float_equal(s->tick_p99_ms, 50, 1e-3);
    assert_float_equal(s->tick_max_ms, 50, 1e-3);
}

static void test_phase_times_are_means_per_frame(void **state)
{
    dashboard_ring *r = *state;
    dashboard_inputs in = inputs_at(1);
    const double a[DASHBOARD_PHASES] = { 0.001, 0.002, 0.003, 0.004 };
    const double b[DASHBOARD_PHASES] = { 0.003, 0.002, 0.001, 0.000 };

    dashboard_ring_frame(r, 0.010, a);
    dashboard_ring_frame(r, 0.006, b);
    dashboard_ring_second(r, &in);

    const dashboard_sample *s = dashboard_ring_sample(r, 0);
    assert_float_equal(s->phase_ms[0], 2, 1e-4);
    assert_float_equal(s->phase_ms[1], 2, 1e-4);
    assert_float_equal(s->phase_ms[2], 2, 1e-4);
    assert_float_equal(s->phase_ms[3], 2, 1e-4);
}

static void test_frames_beyond_the_capacity_still_count_in_max_and_frames(void **state)
{
    dashboard_ring *r = *state;
    dashboard_inputs in = inputs_at(1);

    for (int i = 0; i < 64; i++)
        dashboard_ring_frame(r, 0.001, no_phases);
    dashboard_ring_frame(r, 0.040, no_phases);
    dashboard_ring_second(r, &in);

    const dashboard_sample *s = dashboard_ring_sample(r, 0);
    assert_int_equal(s->frames, 65);
    assert_float_equal(s->tick_max_ms, 40, 1e-3);
}

static void test_the_next_second_starts_empty(void **state)
{
    dashboard_ring *r = *state;
    dashboard_inputs in = inputs_at(1);

    dashboard_ring_frame(r, 0.030, no_phases);
    dashboard_ring_second(r, &in);
    in.t = 2;
    dashboard_ring_second(r, &in);

    const dashboard_sample *s = dashboard_ring_sample(r, 1);
    assert_int_equal(s->frames, 0);
    assert_float_equal(s->tick_max_ms, 0, 0);
    assert_float_equal(s->tick_p99_ms, 0, 0);
}

static void test_bytes_sent_become_a_rate_per_second(void **state)
{
    dashboard_ring *r = *state;
    dashboard_inputs in = inputs_at(1);

    in.bytes_sent_total = 1000;
    dashboard_ring_second(r, &in);
    in.t = 3;
    in.bytes_sent_total = 5000;
    dashboard_ring_second(r, &in);

    assert_float_equal(dashboard_ring_sample(r, 0)->sent_bytes_per_second, 0, 0);
    assert_float_equal(dashboard_ring_sample(r, 1)->sent_bytes_per_second, 2000, 1e-3);
}

static void test_the_ring_keeps_the_last_ten_minutes_oldest_first(void **state)
{
    dashboard_ring *r = *state;

    for (int i = 1; i <= DASHBOARD_SECONDS + 100; i++) {
        dashboard_inputs in = inputs_at(i);
        in.objects = (uint32_t)i;
        dashboard_ring_second(r, &in);
    }

    assert_int_equal(r->count, DASHBOARD_SECONDS);
    assert_float_equal(dashboard_ring_sample(r, 0)->t, 101, 0);
    assert_int_equal(dashboard_ring_sample(r, DASHBOARD_SECONDS - 1)->objects,
                     DASHBOARD_SECONDS + 100);
    assert_int_equal(dashboard_ring_sample_actors(r, 0, 1), 9);
}

static void test_a_finished_collection_becomes_an_event_with_its_costs(void **state)
{
    dashboard_ring *r = *state;
    dashboard_inputs in = inputs_at(1);
    dashboard_ring_second(r, &in);

    in.t = 2;
    in.collections = 1;
    in.mark_seconds = 0.012;
    in.gather_seconds = 0.001;
    in.purge_seconds = 0.002;
    in.objects_before = 500;
    in.unreachable = 40;
    dashboard_ring_second(r, &in);

    assert_int_equal(r->col_count, 1);
    const dashboard_collection *c = dashboard_ring_collection(r, 0);
    assert_float_equal(c->t, 2, 0);
    assert_int_equal(c->merged, 1);
    assert_float_equal(c->mark_ms, 12, 1e-3);
    assert_float_equal(c->gather_ms, 1, 1e-3);
    assert_float_equal(c->purge_ms, 2, 1e-3);
    assert_int_equal(c->objects_before, 500);
    assert_int_equal(c->unreachable, 40);
}

static void test_collections_in_one_second_are_one_event_that_says_how_many(void **state)
{
    dashboard_ring *r = *state;
    dashboard_inputs in = inputs_at(1);

    in.collections = 3;
    dashboard_ring_second(r, &in);

    assert_int_equal(r->col_count, 1);
    assert_int_equal(dashboard_ring_collection(r, 0)->merged, 3);
}

static void test_an_incremental_purge_grows_its_events_purge_time_until_it_ends(void **state)
{
    dashboard_ring *r = *state;
    dashboard_inputs in = inputs_at(1);

    in.collections = 1;
    in.purge_seconds = 0.001;
    in.purge_pending = true;
    dashboard_ring_second(r, &in);
    in.t = 2;
    in.purge_seconds = 0.004;
    in.purge_pending = false;
    dashboard_ring_second(r, &in);
    in.t = 3;
    in.purge_seconds = 0.009; /* not this collection's any more */
    dashboard_ring_second(r, &in);

    const dashboard_collection *c = dashboard_ring_collection(r, 0);
    assert_int_equal(r->col_count, 1);
    assert_float_equal(c->purge_ms, 4, 1e-3);
    assert_false(c->purging);
}

static void test_old_collection_events_give_way_to_new_ones(void **state)
{
    dashboard_ring *r = *state;

    for (int i = 1; i <= DASHBOARD_COLLECTIONS + 5; i++) {
        dashboard_inputs in = inputs_at(i);
        in.collections = (uint64_t)i;
        dashboard_ring_second(r, &in);
    }

    assert_int_equal(r->col_count, DASHBOARD_COLLECTIONS);
    assert_int_equal(dashboard_ring_collection(r, 0)->seq, 6);
}

static void test_the_json_has_every_column_and_the_collections(void **state)
{
    dashboard_ring *r = *state;
    const char *const names[2] = { "World0", "World1" };
    dashboard_inputs in = inputs_at(1);
    strbuf out;

    in.rss_mb = -1; /* unknown */
    in.collections = 1;
    in.mark_seconds = 0.0125;
    dashboard_ring_frame(r, 0.004, no_phases);
    dashboard_ring_second(r, &in);
    strbuf_init(&out);

    dashboard_ring_json(r, names, 33.3, 1.5, &out);

    const char *j = strbuf_cstr(&out);
    assert_non_null(strstr(j, "\"worlds\":[\"World0\",\"World1\"]"));
    assert_non_null(strstr(j, "\"objects\":[100]"));
    assert_non_null(strstr(j, "\"tick_max\":[4]"));
    assert_non_null(strstr(j, "\"rss_mb\":[null]"));
    assert_non_null(strstr(j, "\"actors\":[[7],[9]]"));
    assert_non_null(strstr(j, "\"mark_ms\":12.5"));
    assert_non_null(strstr(j, "\"budget_ms\":33.3"));
    assert_int_equal(j[0], '{');
    assert_int_equal(j[out.len - 1], '}');
    strbuf_free(&out);
}

static void test_a_world_name_cannot_break_the_json(void **state)
{
    dashboard_ring *r = *state;
    const char *const names[2] = { "a\"b", "c\\d\n" };
    strbuf out;

    strbuf_init(&out);

    dashboard_ring_json(r, names, 33.3, 0, &out);

    assert_non_null(strstr(strbuf_cstr(&out), "[\"a\\u0022b\",\"c\\u005cd\\u000a\"]"));
    strbuf_free(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_seconds_tick_percentiles_come_from_its_frames, setup, teardown),
        cmocka_unit_test_setup_teardown(test_phase_times_are_means_per_frame, setup, teardown),
        cmocka_unit_test_setup_teardown(test_frames_beyond_the_capacity_still_count_in_max_and_frames, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_next_second_starts_empty, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bytes_sent_become_a_rate_per_second, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_ring_keeps_the_last_ten_minutes_oldest_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_finished_collection_becomes_an_event_with_its_costs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_collections_in_one_second_are_one_event_that_says_how_many, setup, teardown),
        cmocka_unit_test_setup_teardown(test_an_incremental_purge_grows_its_events_purge_time_until_it_ends, setup, teardown),
        cmocka_unit_test_setup_teardown(test_old_collection_events_give_way_to_new_ones, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_json_has_every_column_and_the_collections, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_world_name_cannot_break_the_json, setup, teardown),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
