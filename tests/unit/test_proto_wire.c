/*
 * test_proto_wire.c - the packed actor records of reap.proto ("Record layouts"): quantization,
 * id deltas, and what a decoder refuses.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "reap_wire.h"

static uint64_t rng_state = 0x5EEDF00D;

static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static float uniform(float lo, float hi)
{
    return lo + (hi - lo) * (float)((double)(rng() >> 11) * 0x1.0p-53);
}

static void test_quantization_stays_within_half_a_step_over_the_whole_default_world(void **state)
{
    float step = wire_step_for_extent(200000.0f);
    float worst = 0;

    (void)state;
    assert_true(step == WIRE_DEFAULT_STEP);
    for (int i = 0; i < 200000; i++) {
        float v = i < 4 ? (float[]){ -100000.0f, 100000.0f, 0.0f, -0.05f }[i]
                        : uniform(-100000.0f, 100000.0f);
        float err = fabsf(wire_dequantize(wire_quantize(v, step), step) - v);
        if (err > worst)
            worst = err;
    }
    /* Half a step, plus the float rounding of a coordinate of 1e5 (an ulp is 0.0078). */
    assert_true(worst <= step / 2 + 0.008f);
}

static void test_a_larger_world_gets_a_coarser_step_that_still_covers_it(void **state)
{
    float extent = 2e7f, step = wire_step_for_extent(extent);

    (void)state;
    assert_true(step > WIRE_DEFAULT_STEP);
    assert_true((double)extent / 2 / step <= WIRE_POS_MAX);
    assert_true(fabsf(wire_dequantize(wire_quantize(extent / 2, step), step) - extent / 2) <=
                step / 2 + 1.0f);
    assert_true(fabsf(wire_dequantize(wire_quantize(-extent / 2, step), step) + extent / 2) <=
                step / 2 + 1.0f);
}

static void test_positions_beyond_the_range_are_clamped_and_nan_is_zero(void **state)
{
    (void)state;
    assert_int_equal(wire_quantize(1e9f, 0.1f), WIRE_POS_MAX);
    assert_int_equal(wire_quantize(-1e9f, 0.1f), -WIRE_POS_MAX);
    assert_int_equal(wire_quantize(NAN, 0.1f), 0);
}

static void test_spawn_records_round_trip_exactly_in_any_id_order(void **state)
{
    uint8_t buf[64 * WIRE_SPAWN_MAX], tail[WIRE_SPAWN_TAIL_MAX];
    wire_actor want[64], got;
    wire_writer w;
    wire_reader r;

    (void)state;
    wire_writer_init(&w, buf, sizeof buf);
    for (int i = 0; i < 64; i++) {
        wire_actor *a = &want[i];
        memset(a, 0, sizeof *a);
        a->net_id = i == 0 ? UINT64_MAX / 3 : rng() % 100000 + 1; /* not sorted: deltas go down */
        a->index = (uint32_t)(rng() % 70000) + 1;
        a->actor_class = (uint32_t)(rng() % 7) + 1;
        a->archetype = a->actor_class == WIRE_CLASS_ARCHETYPE ? (uint32_t)(rng() % 300) + 1 : 0;
        a->owner_player_id = i % 3 == 0 ? 0 : (uint32_t)rng();
        a->mover_slot = i % 4 == 1 ? 0 : (uint32_t)(rng() % 70000) + 1;
        for (int k = 0; k < 3; k++)
            a->q[k] = (int32_t)(rng() % (2 * WIRE_POS_MAX + 1)) - WIRE_POS_MAX;
        if (i % 2)
            a->q[2] = 0;
        size_t n = wire_spawn_tail(tail, a->actor_class, a->archetype, a->owner_player_id, a->mover_slot, a->q);
        assert_true(wire_put_spawn(&w, a->net_id, a->index, tail, n));
    }

    wire_reader_init(&r, buf, w.len, w.count);
    for (int i = 0; i < 64; i++) {
        assert_true(wire_next_spawn(&r, &got));
        assert_true(got.net_id == want[i].net_id);
        assert_int_equal(got.index, want[i].index);
        assert_int_equal(got.actor_class, want[i].actor_class);
        assert_int_equal(got.archetype, want[i].archetype);
        assert_int_equal(got.owner_player_id, want[i].owner_player_id);
        assert_int_equal(got.mover_slot, want[i].mover_slot);
        assert_memory_equal(got.q, want[i].q, sizeof got.q);
    }
    assert_false(wire_next_spawn(&r, &got));
    assert_true(wire_reader_ok(&r));
}

static void test_update_records_round_trip_and_cost_seven_bytes_near_each_other(void **state)
{
    uint8_t buf[1300], tail[WIRE_UPDATE_TAIL_MAX];
    wire_writer w;
    wire_reader r;
    wire_actor got;
    uint32_t slot = 0, want[100];

    (void)state;
    wire_writer_init(&w, buf, sizeof buf);
    for (int i = 0; i < 100; i++) {
        int32_t q[3] = { -i * 1000, i * 777, 0 };
        bool has_z;
        size_t n = wire_update_tail(tail, q, &has_z);
        slot += (uint32_t)(rng() % 60) + 1; /* gaps of up to 60 mover slots */
        want[i] = slot;
        assert_true(wire_put_update(&w, slot, tail, n, has_z));
    }
    assert_int_equal(w.len, 100 * 7);

    wire_reader_init(&r, buf, w.len, w.count);
    for (int i = 0; i < 100; i++) {
        assert_true(wire_next_update(&r, &got));
        assert_int_equal(got.mover_slot, want[i]);
        assert_int_equal(got.q[0], -i * 1000);
        assert_int_equal(got.q[1], i * 777);
        assert_int_equal(got.q[2], 0);
    }
    assert_true(wire_reader_ok(&r));
}

static void test_a_writer_refuses_a_record_that_does_not_fit_and_changes_nothing(void **state)
{
    uint8_t buf[9], tail[WIRE_UPDATE_TAIL_MAX];
    int32_t q[3] = { 1, 2, 3 };
    bool has_z;
    size_t n = wire_update_tail(tail, q, &has_z);
    wire_writer w;

    (void)state;
    wire_writer_init(&w, buf, sizeof buf);
    assert_true(has_z);
    assert_false(wire_put_update(&w, 1, tail, n, has_z)); /* 1 + 9 bytes into 9 */
    assert_int_equal(w.len, 0);
    assert_int_equal(w.count, 0);
}

static void test_an_update_out_of_slot_order_is_refused_for_the_next_message(void **state)
{
    uint8_t buf[64], tail[WIRE_UPDATE_TAIL_MAX];
    int32_t q[3] = { 1, 2, 0 };
    bool has_z;
    size_t n = wire_update_tail(tail, q, &has_z);
    wire_writer w;

    (void)state;
    wire_writer_init(&w, buf, sizeof buf);
    assert_true(wire_put_update(&w, 9, tail, n, has_z));
    assert_false(wire_put_update(&w, 9, tail, n, has_z));
    assert_false(wire_put_update(&w, 4, tail, n, has_z));
    assert_int_equal(w.count, 1);
    assert_true(wire_put_update(&w, 10, tail, n, has_z));
}

static void test_every_truncation_of_a_message_is_refused(void **state)
{
    uint8_t buf[256], tail[WIRE_SPAWN_TAIL_MAX];
    int32_t q[3] = { 1234567, -7654321, 42 };
    wire_writer w;
    wire_actor got;

    (void)state;
    wire_writer_init(&w, buf, sizeof buf);
    for (int i = 0; i < 3; i++)
        assert_true(wire_put_spawn(&w, 1000u + (uint64_t)i * 300, 7u + (uint32_t)i, tail,
                                   wire_spawn_tail(tail, 6, 0, 99999, 0, q)));
    for (size_t len = 0; len < w.len; len++) {
        wire_reader r;
        wire_reader_init(&r, buf, len, w.count);
        while (wire_next_spawn(&r, &got))
            ;
        assert_false(wire_reader_ok(&r));
    }
}

/* The writer takes the inline path away from the buffer's end and the slow one near it: a
 * buffer just big enough for a message must hold the same bytes as a roomy one, and refuse
 * the record after, changing nothing. */
static void test_a_spawn_message_fills_a_tight_buffer_exactly_as_a_roomy_one(void **state)
{
    uint8_t roomy[1024], tight[1024], tail[WIRE_SPAWN_TAIL_MAX];
    int32_t q[3] = { 1234567, -7654321, 42 };
    size_t n = wire_spawn_tail(tail, 6, 0, 99999, 17, q);
    wire_writer a, b;

    (void)state;
    wire_writer_init(&a, roomy, sizeof roomy);
    for (int i = 0; i < 20; i++)
        assert_true(wire_put_spawn(&a, 5u + (uint64_t)i * (i % 3 ? 1 : 900), 3u + (uint32_t)i * 77,
                                   tail, n));
    assert_true(a.len > WIRE_SPAWN_MAX); /* so the tight buffer's last records go slow */

    wire_writer_init(&b, tight, a.len);
    for (int i = 0; i < 20; i++)
        assert_true(wire_put_spawn(&b, 5u + (uint64_t)i * (i % 3 ? 1 : 900), 3u + (uint32_t)i * 77,
                                   tail, n));
    assert_int_equal(b.len, a.len);
    assert_int_equal(b.count, 20);
    assert_memory_equal(tight, roomy, a.len);

    assert_false(wire_put_spawn(&b, 100000, 9, tail, n)); /* full: refused, nothing changed */
    assert_int_equal(b.len, a.len);
    assert_int_equal(b.count, 20);
}

static void test_bytes_left_over_or_reserved_head_bits_are_refused(void **state)
{
    uint8_t buf[64], tail[WIRE_SPAWN_TAIL_MAX];
    int32_t q[3] = { 5, 6, 0 };
    wire_writer w;
    wire_reader r;
    wire_actor got;

    (void)state;
    wire_writer_init(&w, buf, sizeof buf);
    assert_true(wire_put_spawn(&w, 5, 1, tail, wire_spawn_tail(tail, 4, 0, 0, 0, q)));
    buf[w.len] = 0;
    wire_reader_init(&r, buf, w.len + 1, 1); /* one byte too many */
    assert_true(wire_next_spawn(&r, &got));
    assert_false(wire_reader_ok(&r));

    buf[2] |= 0x80; /* the head byte of the record: the reserved bit */
    wire_reader_init(&r, buf, w.len, 1);
    assert_false(wire_next_spawn(&r, &got));
    assert_false(wire_reader_ok(&r));
}

static void test_an_archetype_record_names_its_archetype_and_refuses_number_zero(void **state)
{
    uint8_t buf[64], tail[WIRE_SPAWN_TAIL_MAX];
    int32_t q[3] = { 5, 6, 0 };
    wire_writer w;
    wire_reader r;
    wire_actor got;

    (void)state;
    wire_writer_init(&w, buf, sizeof buf);
    assert_true(wire_put_spawn(&w, 5, 1, tail,
                               wire_spawn_tail(tail, WIRE_CLASS_ARCHETYPE, 3, 0, 0, q)));
    assert_int_equal(tail[1], 3); /* the archetype's varint, right after the head */
    wire_reader_init(&r, buf, w.len, 1);
    assert_true(wire_next_spawn(&r, &got));
    assert_int_equal(got.actor_class, WIRE_CLASS_ARCHETYPE);
    assert_int_equal(got.archetype, 3);

    buf[3] = 0; /* ids 0, 0, head, then the archetype number */
    wire_reader_init(&r, buf, w.len, 1);
    assert_false(wire_next_spawn(&r, &got));
    buf[3] = 3;
    buf[2] = (uint8_t)((buf[2] & 0xf0) | 8); /* classes above 7 are reserved */
    wire_reader_init(&r, buf, w.len, 1);
    assert_false(wire_next_spawn(&r, &got));
}

static void test_a_spawn_naming_mover_slot_zero_is_refused(void **state)
{
    uint8_t buf[64], tail[WIRE_SPAWN_TAIL_MAX];
    int32_t q[3] = { 5, 6, 0 };
    size_t n = wire_spawn_tail(tail, 4, 0, 0, 1, q);
    wire_writer w;
    wire_reader r;
    wire_actor got;

    (void)state;
    assert_true(tail[0] & WIRE_HEAD_SLOT);
    assert_int_equal(tail[1], 1); /* the slot's varint, right after the head (no owner) */
    tail[1] = 0;
    wire_writer_init(&w, buf, sizeof buf);
    assert_true(wire_put_spawn(&w, 5, 1, tail, n));
    wire_reader_init(&r, buf, w.len, 1);
    assert_false(wire_next_spawn(&r, &got));
    assert_false(wire_reader_ok(&r));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(
            test_quantization_stays_within_half_a_step_over_the_whole_default_world),
        cmocka_unit_test(test_a_larger_world_gets_a_coarser_step_that_still_covers_it),
        cmocka_unit_test(test_positions_beyond_the_range_are_clamped_and_nan_is_zero),
        cmocka_unit_test(test_spawn_records_round_trip_exactly_in_any_id_order),
        cmocka_unit_test(test_update_records_round_trip_and_cost_seven_bytes_near_each_other),
        cmocka_unit_test(test_a_writer_refuses_a_record_that_does_not_fit_and_changes_nothing),
        cmocka_unit_test(test_an_update_out_of_slot_order_is_refused_for_the_next_message),
        cmocka_unit_test(test_every_truncation_of_a_message_is_refused),
        cmocka_unit_test(test_a_spawn_message_fills_a_tight_buffer_exactly_as_a_roomy_one),
        cmocka_unit_test(test_bytes_left_over_or_reserved_head_bits_are_refused),
        cmocka_unit_test(test_an_archetype_record_names_its_archetype_and_refuses_number_zero),
        cmocka_unit_test(test_a_spawn_naming_mover_slot_zero_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
