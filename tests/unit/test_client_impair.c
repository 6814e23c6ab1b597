/*
 * test_client_impair.c - the load generator's network impairment without a network: the
 * --impair text, and the fate of each datagram (dropped, delayed, duplicated, reordered),
 * drawn from seeded streams so that a run can be repeated exactly.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "churn_impair.h"

enum { DRAWS = 100000 };

static void test_the_issue_example_parses_into_rates_and_seconds(void **state)
{
    client_impair im;
    char err[256], text[160];

    (void)state;
    assert_true(client_impair_parse("loss=2%,latency=60ms,jitter=15ms,dup=0.5%,reorder=1%", &im,
                                    err, sizeof err));

    assert_true(fabs(im.loss - 0.02) < 1e-12);
    assert_true(fabs(im.latency - 0.060) < 1e-12);
    assert_true(fabs(im.jitter - 0.015) < 1e-12);
    assert_true(fabs(im.dup - 0.005) < 1e-12);
    assert_true(fabs(im.reorder - 0.01) < 1e-12);
    client_impair_format(&im, text, sizeof text);
    assert_string_equal(text, "loss=2%,latency=60ms,jitter=15ms,dup=0.5%,reorder=1%");
}

static void test_units_and_none_are_understood(void **state)
{
    client_impair im;
    char err[256], text[64];

    (void)state;
    assert_true(client_impair_parse("latency=0.05s,loss=3", &im, err, sizeof err));
    assert_true(fabs(im.latency - 0.05) < 1e-12 && fabs(im.loss - 0.03) < 1e-12);
    assert_true(client_impair_parse("jitter=500us", &im, err, sizeof err));
    assert_true(fabs(im.jitter - 0.0005) < 1e-12 && im.latency == 0);
    assert_true(client_impair_parse("none", &im, err, sizeof err));
    assert_false(client_impair_active(&im));
    client_impair_format(&im, text, sizeof text);
    assert_string_equal(text, "none");
}

static void test_a_bad_part_is_refused_naming_it_and_nothing_changes(void **state)
{
    client_impair im = { .loss = 0.5 };
    char err[256];

    (void)state;
    assert_false(client_impair_parse("loss=2%,lag=5ms", &im, err, sizeof err));
    assert_non_null(strstr(err, "lag=5ms"));
    assert_false(client_impair_parse("loss=120%", &im, err, sizeof err));
    assert_non_null(strstr(err, "'120%' for loss"));
    assert_false(client_impair_parse("latency=11s", &im, err, sizeof err));
    assert_non_null(strstr(err, "latency"));
    assert_false(client_impair_parse("latency=5parsecs", &im, err, sizeof err));
    assert_false(client_impair_parse("loss", &im, err, sizeof err));
    assert_non_null(strstr(err, "KEY=VALUE"));
    assert_true(im.loss == 0.5);
}

static void test_latency_alone_delays_every_datagram_by_exactly_that(void **state)
{
    client_impair im = { .latency = 0.05 };
    churn_impair_stream st = { .rng = churn_impair_seed(1, 0, 1, true) };
    churn_fate fate;

    (void)state;
    for (int i = 0; i < 1000; i++) {
        double now = i * 0.001;
        churn_impair_decide(&im, &st, now, &fate);
        assert_false(fate.drop);
        assert_int_equal(fate.copies, 1);
        assert_true(fabs(fate.due - (now + 0.05)) < 1e-12);
    }
}

static void test_loss_and_duplication_happen_at_their_rates(void **state)
{
    client_impair im = { .loss = 0.02, .dup = 0.005 };
    churn_impair_stream st = { .rng = churn_impair_seed(7, 3, 2, false) };
    churn_fate fate;
    int dropped = 0, doubled = 0;

    (void)state;
    for (int i = 0; i < DRAWS; i++) {
        churn_impair_decide(&im, &st, 0, &fate);
        dropped += fate.drop;
        doubled += fate.copies == 2;
        assert_true(fate.drop == (fate.copies == 0));
    }

    /* Binomial: 2000 +/- 44 and 500 +/- 22 (one sigma); five sigmas of room. */
    assert_in_range(dropped, 2000 - 221, 2000 + 221);
    assert_in_range(doubled, 490 - 111, 490 + 111);
}

static void test_jitter_keeps_the_order_and_a_reordered_datagram_is_overtaken(void **state)
{
    client_impair im = { .latency = 0.06, .jitter = 0.015, .reorder = 0.01 };
    churn_impair_stream st = { .rng = churn_impair_seed(9, 1, 1, true) };
    double last_in_order = 0, held_due = -1;
    int reordered = 0, overtaken = 0;

    (void)state;
    for (int i = 0; i < DRAWS; i++) {
        double now = i * 0.0005; /* a datagram every half millisecond */
        churn_fate fate;

        churn_impair_decide(&im, &st, now, &fate);
        assert_true(fate.due >= now + 0.045 - 1e-12);
        if (fate.reordered) {
            reordered++;
            held_due = fate.due;
            continue;
        }
        assert_true(fate.due >= last_in_order);
        if (held_due >= 0 && fate.due < held_due) {
            overtaken++;
            held_due = -1;
        }
        last_in_order = fate.due;
    }

    assert_in_range(reordered, 1000 - 160, 1000 + 160);
    assert_true(overtaken >= reordered * 9 / 10);
}

static void test_the_same_seed_gives_the_same_fates_and_another_visit_others(void **state)
{
    client_impair im = { .loss = 0.3, .latency = 0.02, .jitter = 0.01, .dup = 0.1 };
    churn_impair_stream a = { .rng = churn_impair_seed(42, 5, 3, true) };
    churn_impair_stream b = { .rng = churn_impair_seed(42, 5, 3, true) };
    churn_impair_stream other = { .rng = churn_impair_seed(42, 5, 4, true) };
    int differ = 0;

    (void)state;
    for (int i = 0; i < 1000; i++) {
        churn_fate fa, fb, fo;
        churn_impair_decide(&im, &a, i * 0.01, &fa);
        churn_impair_decide(&im, &b, i * 0.01, &fb);
        churn_impair_decide(&im, &other, i * 0.01, &fo);
        assert_true(fa.drop == fb.drop && fa.copies == fb.copies && fa.due == fb.due);
        differ += fa.drop != fo.drop || fa.due != fo.due;
    }
    assert_true(differ > 500);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_issue_example_parses_into_rates_and_seconds),
        cmocka_unit_test(test_units_and_none_are_understood),
        cmocka_unit_test(test_a_bad_part_is_refused_naming_it_and_nothing_changes),
        cmocka_unit_test(test_latency_alone_delays_every_datagram_by_exactly_that),
        cmocka_unit_test(test_loss_and_duplication_happen_at_their_rates),
        cmocka_unit_test(test_jitter_keeps_the_order_and_a_reordered_datagram_is_overtaken),
        cmocka_unit_test(test_the_same_seed_gives_the_same_fates_and_another_visit_others),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
