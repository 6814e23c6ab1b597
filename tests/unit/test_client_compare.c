/*
 * test_client_compare.c - `reap-client compare`'s verdicts: a change must be beyond the
 * tolerance and beyond what the measurements can tell apart (histogram buckets, the samples'
 * confidence interval, the server's buckets and frame count, Poisson noise for counts).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report_compare.h"

static hist base_h, new_h;

/* n samples spread evenly over [from_us, to_us]. */
static void fill(hist *h, uint64_t n, uint64_t from_us, uint64_t to_us)
{
    hist_init(h);
    for (uint64_t i = 0; i < n; i++)
        hist_record(h, from_us + (to_us - from_us) * i / (n > 1 ? n - 1 : 1));
}

static churn_verdict judge_hist(const char *stat, bool higher_is_better, double tolerance,
                                const char **why)
{
    churn_compare_value a, b;
    double change;

    churn_compare_value_hist(&base_h, stat, &a);
    churn_compare_value_hist(&new_h, stat, &b);
    return churn_compare_judge(&a, &b, higher_is_better, tolerance, &change, why);
}

static void test_a_histogram_compared_with_itself_is_the_same_for_every_statistic(void **state)
{
    static const char *const stats[] = { "p50", "p95", "p99", "max", "mean" };
    const char *why;

    (void)state;
    fill(&base_h, 5000, 1000, 50000);
    new_h = base_h;

    for (size_t i = 0; i < sizeof stats / sizeof stats[0]; i++)
        assert_int_equal(judge_hist(stats[i], false, 0.05, &why), CHURN_VERDICT_SAME);
}

static void test_a_p99_twice_as_slow_over_many_samples_is_worse(void **state)
{
    const char *why;

    (void)state;
    fill(&base_h, 10000, 1000, 20000);
    fill(&new_h, 10000, 2000, 40000);

    assert_int_equal(judge_hist("p99", false, 0.05, &why), CHURN_VERDICT_WORSE);
    assert_int_equal(judge_hist("p50", false, 0.05, &why), CHURN_VERDICT_WORSE);
    assert_int_equal(judge_hist("mean", false, 0.05, &why), CHURN_VERDICT_WORSE);
}

static void test_a_faster_run_is_better_and_a_higher_is_better_figure_turns_it_round(void **state)
{
    const char *why;

    (void)state;
    fill(&base_h, 10000, 2000, 40000);
    fill(&new_h, 10000, 1000, 20000);

    assert_int_equal(judge_hist("p99", false, 0.05, &why), CHURN_VERDICT_BETTER);
    assert_int_equal(judge_hist("p99", true, 0.05, &why), CHURN_VERDICT_WORSE);
}

static void test_a_p99_of_twenty_samples_cannot_be_worse_however_it_moved(void **state)
{
    churn_compare_value v;
    const char *why;

    (void)state;
    fill(&base_h, 20, 1000, 2000);
    fill(&new_h, 20, 10000, 20000);

    churn_compare_value_hist(&new_h, "p99", &v);
    assert_true(isinf(v.hi));
    assert_int_equal(judge_hist("p99", false, 0.05, &why), CHURN_VERDICT_SAME);
    assert_string_equal(why, "too few samples to tell");
    assert_int_equal(judge_hist("p50", false, 0.05, &why), CHURN_VERDICT_WORSE);
}

static void test_a_shift_smaller_than_a_bucket_is_the_same_even_with_no_tolerance(void **state)
{
    churn_compare_value a, b;
    const char *why;

    (void)state;
    /* Around 65 ms a bucket is 512 or 1024 us wide; the runs differ by 200 us. */
    fill(&base_h, 10000, 60000, 70000);
    fill(&new_h, 10000, 60200, 70200);

    churn_compare_value_hist(&base_h, "p50", &a);
    churn_compare_value_hist(&new_h, "p50", &b);
    assert_true(b.v > a.v);
    assert_int_equal(judge_hist("p50", false, 0.0, &why), CHURN_VERDICT_SAME);
    assert_string_equal(why, "within the measurements' resolution");
}

static void test_a_change_within_the_tolerance_is_the_same(void **state)
{
    churn_compare_value a, b;
    double change;
    const char *why;

    (void)state;
    churn_compare_value_exact(100e6, &a);
    churn_compare_value_exact(104e6, &b);

    assert_int_equal(churn_compare_judge(&a, &b, false, 0.05, &change, &why),
                     CHURN_VERDICT_SAME);
    assert_string_equal(why, "within tolerance");
    assert_true(fabs(change - 0.04) < 1e-9);
    assert_int_equal(churn_compare_judge(&a, &b, false, 0.03, &change, &why),
                     CHURN_VERDICT_WORSE);
}

static void test_server_times_in_one_bucket_are_the_same_and_a_bucket_apart_are_not(void **state)
{
    churn_compare_value a, b, c;
    double change;
    const char *why;

    (void)state;
    /* The server's buckets end at 2.5, 5 and 7.5 ms. */
    churn_compare_value_server_time(0.003, 10000, 100, &a);
    churn_compare_value_server_time(0.0045, 10000, 100, &b);
    churn_compare_value_server_time(0.006, 10000, 100, &c);

    assert_int_equal(churn_compare_judge(&a, &b, false, 0.05, &change, &why),
                     CHURN_VERDICT_SAME);
    assert_string_equal(why, "within the measurements' resolution");
    assert_int_equal(churn_compare_judge(&a, &c, false, 0.05, &change, &why),
                     CHURN_VERDICT_WORSE);
}

static void test_a_server_p99_over_too_few_frames_is_open(void **state)
{
    churn_compare_value a;

    (void)state;
    churn_compare_value_server_time(0.003, 999, 99, &a);
    assert_true(isinf(a.hi));
    churn_compare_value_server_time(0.003, 1000, 99, &a);
    assert_true(a.hi == 0.005);
}

static void test_counts_differ_only_beyond_their_poisson_noise(void **state)
{
    churn_compare_value a, b;
    double change;
    const char *why;

    (void)state;
    churn_compare_value_count(100, &a);
    churn_compare_value_count(115, &b);
    assert_int_equal(churn_compare_judge(&a, &b, false, 0.05, &change, &why),
                     CHURN_VERDICT_SAME);
    churn_compare_value_count(160, &b);
    assert_int_equal(churn_compare_judge(&a, &b, false, 0.05, &change, &why),
                     CHURN_VERDICT_WORSE);
}

static void test_a_figure_missing_from_a_run_is_not_measured(void **state)
{
    churn_compare_value a, b;
    double change;
    const char *why;

    (void)state;
    churn_compare_value_exact(-1, &a);
    churn_compare_value_exact(3, &b);

    assert_false(a.have);
    assert_int_equal(churn_compare_judge(&a, &b, false, 0.05, &change, &why),
                     CHURN_VERDICT_UNMEASURED);
    assert_true(isnan(change));
}

static void test_tolerance_takes_a_percentage_or_a_fraction(void **state)
{
    double t = -1;

    (void)state;
    assert_true(churn_compare_tolerance_parse("5%", &t));
    assert_true(fabs(t - 0.05) < 1e-12);
    assert_true(churn_compare_tolerance_parse("0.1", &t));
    assert_true(fabs(t - 0.1) < 1e-12);
    assert_false(churn_compare_tolerance_parse("", &t));
    assert_false(churn_compare_tolerance_parse("5%%", &t));
    assert_false(churn_compare_tolerance_parse("-1%", &t));
    assert_false(churn_compare_tolerance_parse("fast", &t));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_histogram_compared_with_itself_is_the_same_for_every_statistic),
        cmocka_unit_test(test_a_p99_twice_as_slow_over_many_samples_is_worse),
        cmocka_unit_test(test_a_faster_run_is_better_and_a_higher_is_better_figure_turns_it_round),
        cmocka_unit_test(test_a_p99_of_twenty_samples_cannot_be_worse_however_it_moved),
        cmocka_unit_test(test_a_shift_smaller_than_a_bucket_is_the_same_even_with_no_tolerance),
        cmocka_unit_test(test_a_change_within_the_tolerance_is_the_same),
        cmocka_unit_test(test_server_times_in_one_bucket_are_the_same_and_a_bucket_apart_are_not),
        cmocka_unit_test(test_a_server_p99_over_too_few_frames_is_open),
        cmocka_unit_test(test_counts_differ_only_beyond_their_poisson_noise),
        cmocka_unit_test(test_a_figure_missing_from_a_run_is_not_measured),
        cmocka_unit_test(test_tolerance_takes_a_percentage_or_a_fraction),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
