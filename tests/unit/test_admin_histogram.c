/*
 * test_admin_histogram.c - histograms as the /metrics page prints them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "stats.h"

static void test_an_observation_lands_in_the_first_bucket_that_holds_it(void **state)
{
    stats_histogram h;

    (void)state;
    stats_histogram_init(&h);

    stats_histogram_observe(&h, 0.003);

    assert_int_equal(h.counts[6], 1); /* le 0.005 */
    assert_int_equal(h.count, 1);
    assert_true(h.sum == 0.003);
}

static void test_an_observation_on_a_bound_counts_in_that_bucket(void **state)
{
    stats_histogram h;

    (void)state;
    stats_histogram_init(&h);

    stats_histogram_observe(&h, 0.001);

    assert_int_equal(h.counts[4], 1); /* le 0.001 */
}

static void test_a_huge_observation_only_counts_in_plus_inf(void **state)
{
    stats_histogram h;
    strbuf out;

    (void)state;
    stats_histogram_init(&h);
    strbuf_init(&out);

    stats_histogram_observe(&h, 30.0);
    stats_histogram_write(&h, "x_seconds", "help", &out);

    assert_non_null(strstr(strbuf_cstr(&out), "x_seconds_bucket{le=\"1\"} 0\n"));
    assert_non_null(strstr(strbuf_cstr(&out), "x_seconds_bucket{le=\"+Inf\"} 1\n"));
    strbuf_free(&out);
}

static void test_printed_buckets_are_cumulative_and_end_with_sum_and_count(void **state)
{
    stats_histogram h;
    strbuf out;

    (void)state;
    stats_histogram_init(&h);
    strbuf_init(&out);
    stats_histogram_observe(&h, 0.00001);
    stats_histogram_observe(&h, 0.002);
    stats_histogram_observe(&h, 0.002);

    stats_histogram_write(&h, "reap_x_seconds", "Some help.", &out);
    const char *text = strbuf_cstr(&out);

    assert_non_null(strstr(text, "# HELP reap_x_seconds Some help.\n"));
    assert_non_null(strstr(text, "# TYPE reap_x_seconds histogram\n"));
    assert_non_null(strstr(text, "reap_x_seconds_bucket{le=\"5e-05\"} 1\n"));
    assert_non_null(strstr(text, "reap_x_seconds_bucket{le=\"0.001\"} 1\n"));
    assert_non_null(strstr(text, "reap_x_seconds_bucket{le=\"0.0025\"} 3\n"));
    assert_non_null(strstr(text, "reap_x_seconds_bucket{le=\"+Inf\"} 3\n"));
    assert_non_null(strstr(text, "reap_x_seconds_count 3\n"));
    assert_non_null(strstr(text, "reap_x_seconds_sum 0.00401"));
    strbuf_free(&out);
}

static void test_bucket_bounds_increase(void **state)
{
    (void)state;
    for (int i = 1; i < STATS_BUCKETS - 1; i++)
        assert_true(stats_bucket_bounds[i] > stats_bucket_bounds[i - 1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_an_observation_lands_in_the_first_bucket_that_holds_it),
        cmocka_unit_test(test_an_observation_on_a_bound_counts_in_that_bucket),
        cmocka_unit_test(test_a_huge_observation_only_counts_in_plus_inf),
        cmocka_unit_test(test_printed_buckets_are_cumulative_and_end_with_sum_and_count),
        cmocka_unit_test(test_bucket_bounds_increase),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
