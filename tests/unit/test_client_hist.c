/*
 * test_client_hist.c - the load tester's latency histograms: percentiles of known data, bucket
 * bounds, exact merging across shards, and the text form that `merge` reads back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hist.h"

static uint64_t rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void test_percentiles_of_small_values_are_exact(void **state)
{
    static hist h;

    (void)state;
    hist_init(&h);
    for (uint64_t v = 1; v <= 100; v++)
        hist_record(&h, v);

    assert_int_equal(hist_percentile(&h, 50), 50);
    assert_int_equal(hist_percentile(&h, 95), 95);
    assert_int_equal(hist_percentile(&h, 99), 99);
    assert_int_equal(hist_percentile(&h, 100), 100);
    assert_int_equal(h.min, 1);
    assert_int_equal(h.max, 100);
    assert_true(hist_mean(&h) == 50.5);
}

static void test_every_value_lies_in_its_bucket_which_is_at_most_a_64th_of_it_wide(void **state)
{
    uint64_t rng = 3;

    (void)state;
    for (int i = 0; i < 100000; i++) {
        uint64_t v = rng_next(&rng) >> (rng_next(&rng) % 64);
        uint32_t b;

        if (v >= (1ull << HIST_TOP_BIT))
            continue;
        b = hist_bucket_of(v);
        assert_true(b < HIST_BUCKETS);
        assert_true(hist_bucket_low(b) <= v);
        assert_true(v <= hist_bucket_high(b));
        if (b + 1 < HIST_BUCKETS) /* the last bucket is open-ended: it takes what is clamped */
            assert_true(hist_bucket_high(b) - hist_bucket_low(b) <=
                        (v < HIST_EXACT ? 0 : v / 64));
    }
}

static void test_a_percentile_of_large_values_is_within_one_bucket_of_the_true_one(void **state)
{
    static hist h;
    uint64_t p99_true = 0;

    (void)state;
    hist_init(&h);
    /* 10,000 values 1000, 1100, ..., 1000 + 9999 x 100: the 99th percentile is the 9900th. */
    for (uint64_t i = 0; i < 10000; i++)
        hist_record(&h, 1000 + i * 100);
    p99_true = 1000 + 9899 * 100;

    uint64_t p99 = hist_percentile(&h, 99);

    assert_true(p99 >= p99_true);
    assert_true(p99 - p99_true <= p99_true / 64);
}

static void test_merging_shards_equals_one_histogram_over_all_their_samples(void **state)
{
    static hist whole, shards[3], merged;
    uint64_t rng = 42;

    (void)state;
    hist_init(&whole);
    hist_init(&merged);
    for (int s = 0; s < 3; s++)
        hist_init(&shards[s]);
    for (int i = 0; i < 30000; i++) {
        uint64_t v = rng_next(&rng) % 5000000;
        hist_record(&whole, v);
        hist_record(&shards[i % 3], v);
    }

    for (int s = 0; s < 3; s++)
        hist_merge(&merged, &shards[s]);

    assert_memory_equal(&merged, &whole, sizeof whole);
    assert_int_equal(hist_percentile(&merged, 99), hist_percentile(&whole, 99));
}

static void test_a_histogram_written_as_a_line_parses_back_equal(void **state)
{
    static hist h, back;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    (void)state;
    hist_init(&h);
    for (uint64_t v = 0; v < 100000; v += 37)
        hist_record(&h, v * v);
    hist_write_line(&h, f);
    fclose(f);

    assert_true(hist_parse(&back, buf));

    assert_memory_equal(&back, &h, sizeof h);
    free(buf);
}

static void test_a_malformed_histogram_line_is_refused(void **state)
{
    static hist h;

    (void)state;
    assert_false(hist_parse(&h, "3 1 5 9 1:1 5:1"));        /* counts add to 2, not 3 */
    assert_false(hist_parse(&h, "1 1 1 1 999999:1"));       /* no such bucket */
    assert_false(hist_parse(&h, "1 1 1"));                  /* header cut short */
    assert_false(hist_parse(&h, "1 1 1 1 2-1"));
    assert_true(hist_parse(&h, "0 0 0 0"));
    assert_int_equal(h.n, 0);
}

static void test_an_empty_histogram_has_no_percentiles(void **state)
{
    static hist h;

    (void)state;
    hist_init(&h);

    assert_int_equal(hist_percentile(&h, 99), 0);
    assert_true(hist_mean(&h) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_percentiles_of_small_values_are_exact),
        cmocka_unit_test(test_every_value_lies_in_its_bucket_which_is_at_most_a_64th_of_it_wide),
        cmocka_unit_test(test_a_percentile_of_large_values_is_within_one_bucket_of_the_true_one),
        cmocka_unit_test(test_merging_shards_equals_one_histogram_over_all_their_samples),
        cmocka_unit_test(test_a_histogram_written_as_a_line_parses_back_equal),
        cmocka_unit_test(test_a_malformed_histogram_line_is_refused),
        cmocka_unit_test(test_an_empty_histogram_has_no_percentiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
