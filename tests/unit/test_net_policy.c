/*
 * test_net_policy.c - what a client may ask for (spawn rate, ownership limit, abuse) and
 * which datagrams are not ENet at all. Time is the argument the tests pass.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <enet/enet.h>

#include "net_driver.h"
#include "net_internal.h"
#include "net_policy.h"

static net_policy_limits limits(void)
{
    net_policy_limits lim = {
        .max_actors_per_player = 100,
        .max_spawn_per_request = 50,
        .spawn_rate = 10,
        .spawn_burst = 40,
        .max_bad_messages = 3,
        .request_rate = 2,
        .request_burst = 5,
        .move_rate = 10,
        .max_pawn_speed = 1200,
        .max_messages_per_frame = 8,
        .flood_kick_seconds = 2,
    };
    return lim;
}

static void test_a_fresh_connection_may_spawn_a_full_burst_at_once(void **state)
{
    net_policy_limits lim = limits();
    net_policy_state st;

    (void)state;
    net_policy_init(&st, &lim, 0.0);

    assert_int_equal(net_policy_check_spawn(&st, &lim, 0.0, 0, 40), NET_POLICY_ALLOW);
}

static void test_spawning_beyond_the_burst_is_over_rate(void **state)
{
    net_policy_limits lim = limits();
    net_policy_state st;

    (void)state;
    net_policy_init(&st, &lim, 0.0);
    net_policy_check_spawn(&st, &lim, 0.0, 0, 40);

    assert_int_equal(net_policy_check_spawn(&st, &lim, 0.0, 40, 1), NET_POLICY_OVER_RATE);
}

static void test_tokens_come_back_at_the_spawn_rate(void **state)
{
    net_policy_limits lim = limits();
    net_policy_state st;

    (void)state;
    net_policy_init(&st, &lim, 100.0);
    net_policy_check_spawn(&st, &lim, 100.0, 0, 40);

    assert_int_equal(net_policy_check_spawn(&st, &lim, 100.5, 40, 6), NET_POLICY_OVER_RATE);
    assert_int_equal(net_policy_check_spawn(&st, &lim, 100.5, 40, 5), NET_POLICY_ALLOW);
    assert_int_equal(net_policy_check_spawn(&st, &lim, 102.5, 45, 20), NET_POLICY_ALLOW);
}

static void test_tokens_never_exceed_the_burst_however_long_a_player_waits(void **state)
{
    net_policy_limits lim = limits();
    net_policy_state st;

    (void)state;
    net_policy_init(&st, &lim, 0.0);
    net_policy_check_spawn(&st, &lim, 0.0, 0, 40);

    assert_int_equal(net_policy_check_spawn(&st, &lim, 1e6, 0, 41), NET_POLICY_OVER_RATE);
    assert_int_equal(net_policy_check_spawn(&st, &lim, 1e6, 0, 40), NET_POLICY_ALLOW);
}

static void test_a_refused_request_spends_no_tokens(void **state)
{
    net_policy_limits lim = limits();
    net_policy_state st;

    (void)state;
    net_policy_init(&st, &lim, 0.0);

    assert_int_equal(net_policy_check_spawn(&st, &lim, 0.0, 99, 5), NET_POLICY_OVER_LIMIT);
    assert_int_equal(net_policy_check_spawn(&st, &lim, 0.0, 0, 40), NET_POLICY_ALLOW);
}

static void test_owning_more_than_the_limit_is_refused(void **state)
{
    net_policy_limits lim = limits();
    net_policy_state st;

    (void)state;
    net_policy_init(&st, &lim, 0.0);

    assert_int_equal(net_policy_check_spawn(&st, &lim, 0.0, 90, 10), NET_POLICY_ALLOW);
    assert_int_equal(net_policy_check_spawn(&st, &lim, 0.0, 100, 1), NET_POLICY_OVER_LIMIT);
}

static void test_a_count_of_zero_or_above_the_request_limit_is_a_bad_count(void **state)
{
    net_policy_limits lim = limits();
    net_policy_state st;

    (void)state;
    net_policy_init(&st, &lim, 0.0);

    assert_int_equal(net_policy_check_spawn(&st, &lim, 0.0, 0, 0), NET_POLICY_BAD_COUNT);
    assert_int_equal(net_policy_check_spawn(&st, &lim, 0.0, 0, 51), NET_POLICY_BAD_COUNT);
    assert_int_equal(net_policy_check_spawn(&st, &lim, 0.0, 0, UINT32_MAX), NET_POLICY_BAD_COUNT);
}

static void test_a_connection_is_dropped_on_its_nth_bad_message_not_before(void **state)
{
    net_policy_limits lim = limits();
    net_policy_state st;

    (void)state;
    net_policy_init(&st, &lim, 0.0);

    assert_false(net_policy_note_bad_message(&st, &lim));
    assert_false(net_policy_note_bad_message(&st, &lim));
    assert_true(net_policy_note_bad_message(&st, &lim));
}

static void test_bad_messages_on_one_connection_never_count_against_another(void **state)
{
    net_policy_limits lim = limits();
    net_policy_state a, b;

    (void)state;
    net_policy_init(&a, &lim, 0.0);
    net_policy_init(&b, &lim, 0.0);
    for (int i = 0; i < 10; i++)
        net_policy_note_bad_message(&a, &lim);

    assert_false(net_policy_note_bad_message(&b, &lim));
    assert_int_equal(b.bad_messages, 1);
}

/* ---- datagrams that are not ENet ----------------------------------------------------- */

static ENetHost *host;
static ENetAddress stranger;

static int host_setup(void **state)
{
    ENetAddress addr;

    (void)state;
    assert_int_equal(enet_initialize(), 0);
    memset(&addr, 0, sizeof addr);
    enet_address_set_host_ip(&addr, "127.0.0.1");
    addr.port = 0;
    host = enet_host_create(&addr, 4, 3, 0, 0);
    assert_non_null(host);
    enet_address_set_host_ip(&stranger, "127.0.0.1");
    stranger.port = 40000;
    return 0;
}

static int host_teardown(void **state)
{
    (void)state;
    enet_host_destroy(host);
    enet_deinitialize();
    return 0;
}

static void test_a_datagram_shorter_than_a_header_is_garbage(void **state)
{
    const uint8_t d[] = { 0x0f };

    (void)state;
    assert_true(net_datagram_is_garbage(host, &stranger, d, sizeof d));
}

static void test_text_sent_to_the_game_port_is_garbage(void **state)
{
    const char *text = "garbage datagram, not enet";

    (void)state;
    assert_true(net_datagram_is_garbage(host, &stranger, (const uint8_t *)text, strlen(text)));
}

static void test_a_datagram_for_a_peer_that_does_not_exist_is_garbage(void **state)
{
    /* peer 3 exists but is disconnected; command 6 (send reliable) */
    const uint8_t d[] = { 0x00, 0x03, 0x86, 0x00, 0x00, 0x01 };

    (void)state;
    assert_true(net_datagram_is_garbage(host, &stranger, d, sizeof d));
}

static void test_a_datagram_with_an_unknown_command_is_garbage(void **state)
{
    const uint8_t d[] = { 0x0f, 0xff, 0x0e, 0x00, 0x00, 0x00 };

    (void)state;
    assert_true(net_datagram_is_garbage(host, &stranger, d, sizeof d));
}

static void test_a_connection_request_from_a_new_address_is_not_garbage(void **state)
{
    /* peer id 0xFFF (none yet) with the sent-time flag; command CONNECT with ACK flag */
    const uint8_t d[] = { 0x8f, 0xff, 0x12, 0x34, 0x82, 0xff, 0x00, 0x01 };

    (void)state;
    assert_false(net_datagram_is_garbage(host, &stranger, d, sizeof d));
}

static void test_a_non_connect_command_without_a_peer_is_garbage(void **state)
{
    const uint8_t d[] = { 0x8f, 0xff, 0x12, 0x34, 0x86, 0xff, 0x00, 0x01 };

    (void)state;
    assert_true(net_datagram_is_garbage(host, &stranger, d, sizeof d));
}

static void test_requests_beyond_the_burst_are_over_rate_until_tokens_return(void **state)
{
    net_policy_limits lim = limits();
    net_policy_state st;

    (void)state;
    net_policy_init(&st, &lim, 0.0);
    for (int i = 0; i < 5; i++)
        assert_int_equal(net_policy_check_request(&st, &lim, 0.0), NET_POLICY_ALLOW);

    assert_int_equal(net_policy_check_request(&st, &lim, 0.0), NET_POLICY_OVER_RATE);
    assert_int_equal(net_policy_check_request(&st, &lim, 0.5), NET_POLICY_ALLOW);
}

static void test_a_move_input_must_be_finite_and_within_the_speed_limit(void **state)
{
    net_policy_limits lim = limits();
    net_policy_state st;

    (void)state;
    net_policy_init(&st, &lim, 0.0);

    assert_int_equal(net_policy_check_move(&st, &lim, 0.0, 1000.0f, 600.0f), NET_POLICY_ALLOW);
    assert_int_equal(net_policy_check_move(&st, &lim, 0.0, 1000.0f, 700.0f),
                     NET_POLICY_TOO_FAST);
    assert_int_equal(net_policy_check_move(&st, &lim, 0.0, NAN, 0.0f), NET_POLICY_BAD_VALUE);
    assert_int_equal(net_policy_check_move(&st, &lim, 0.0, 0.0f, INFINITY),
                     NET_POLICY_BAD_VALUE);
}

static void test_move_inputs_over_their_rate_are_refused(void **state)
{
    net_policy_limits lim = limits();
    net_policy_state st;
    int allowed = 0;

    (void)state;
    net_policy_init(&st, &lim, 0.0);
    for (int i = 0; i < 100; i++)
        allowed += net_policy_check_move(&st, &lim, 0.0, 1.0f, 0.0f) == NET_POLICY_ALLOW;

    assert_int_equal(allowed, 10); /* a second's worth at once, no more */
}

/* ---- the datagram filter's budget and buckets ------------------------------------------ */

static void test_messages_past_the_frame_budget_are_over_budget_until_the_next_frame(void **state)
{
    net_policy_limits lim = limits();
    net_policy_state st;

    (void)state;
    net_policy_init(&st, &lim, 0.0);
    for (int i = 0; i < 8; i++)
        assert_int_equal(net_policy_count(&st, &lim, 0.0, 7), NET_POLICY_ALLOW);

    assert_int_equal(net_policy_count(&st, &lim, 0.0, 7), NET_POLICY_OVER_BUDGET);
    assert_int_equal(net_policy_count(&st, &lim, 0.03, 8), NET_POLICY_ALLOW);
}

static void over_budget_at(net_policy_state *st, const net_policy_limits *lim, double now,
                           uint64_t frame, net_policy_verdict *last)
{
    for (uint32_t i = 0; i <= lim->max_messages_per_frame; i++)
        *last = net_policy_count(st, lim, now, frame);
}

static void test_a_peer_over_budget_in_every_second_for_the_flood_time_is_flooding(void **state)
{
    net_policy_limits lim = limits();
    net_policy_state st;
    net_policy_verdict v = NET_POLICY_ALLOW;
    uint64_t frame = 0;

    (void)state;
    net_policy_init(&st, &lim, 0.0);
    for (double t = 0.0; t < 1.95; t += 0.5)
        over_budget_at(&st, &lim, t, frame++, &v);
    assert_int_equal(v, NET_POLICY_OVER_BUDGET);

    over_budget_at(&st, &lim, 2.0, frame++, &v);
    assert_int_equal(v, NET_POLICY_FLOOD);
}

static void test_a_second_within_budget_ends_a_flood_run(void **state)
{
    net_policy_limits lim = limits();
    net_policy_state st;
    net_policy_verdict v = NET_POLICY_ALLOW;

    (void)state;
    net_policy_init(&st, &lim, 0.0);
    over_budget_at(&st, &lim, 0.0, 1, &v);
    over_budget_at(&st, &lim, 0.9, 2, &v);
    net_policy_count(&st, &lim, 1.5, 3); /* within budget; nothing over until 2.1 */

    over_budget_at(&st, &lim, 2.1, 4, &v); /* a run from 0.0 would be flooding by now */
    assert_int_equal(v, NET_POLICY_OVER_BUDGET);
    over_budget_at(&st, &lim, 3.0, 5, &v);
    over_budget_at(&st, &lim, 3.9, 6, &v);
    assert_int_equal(v, NET_POLICY_OVER_BUDGET);
    over_budget_at(&st, &lim, 4.2, 7, &v);
    assert_int_equal(v, NET_POLICY_FLOOD);
}

static void test_a_client_within_the_handlers_rates_never_meets_the_filters_buckets(void **state)
{
    net_policy_limits lim = limits();
    net_policy_state st;
    int refused = 0;

    (void)state;
    net_policy_init(&st, &lim, 0.0);
    /* Ten seconds at the move rate, plus a whole second's worth at once at the start. */
    for (int i = 0; i < 10; i++)
        refused += net_policy_take(&st, &lim, 0.0, NET_POLICY_UPDATES_CHANNEL) !=
                   NET_POLICY_ALLOW;
    for (int i = 0; i < 100; i++)
        refused += net_policy_take(&st, &lim, i / lim.move_rate, NET_POLICY_UPDATES_CHANNEL) !=
                   NET_POLICY_ALLOW;
    for (int i = 0; i < 5 + 40; i++) /* the request burst and the spawn burst, one by one */
        refused += net_policy_take(&st, &lim, 10.0, 0) != NET_POLICY_ALLOW;

    assert_int_equal(refused, 0);
}

static void test_the_filters_buckets_stop_a_flood_at_twice_the_rate(void **state)
{
    net_policy_limits lim = limits();
    net_policy_state st;
    int allowed = 0;

    (void)state;
    net_policy_init(&st, &lim, 0.0);
    for (int i = 0; i < 1000; i++)
        allowed += net_policy_take(&st, &lim, 0.0, NET_POLICY_UPDATES_CHANNEL) ==
                   NET_POLICY_ALLOW;

    assert_int_equal(allowed, (int)(NET_POLICY_FILTER_HEADROOM * lim.move_rate));
    assert_int_equal(net_policy_take(&st, &lim, 0.0, 7), NET_POLICY_ALLOW); /* no such channel */
}

static void test_the_message_rate_is_the_last_seconds_and_falls_to_zero_when_silent(void **state)
{
    net_policy_limits lim = limits();
    net_policy_state st;

    (void)state;
    net_policy_init(&st, &lim, 0.0);
    for (int i = 0; i < 50; i++)
        net_policy_count(&st, &lim, i * 0.02, (uint64_t)i);
    net_policy_count(&st, &lim, 1.0, 100);

    assert_true(fabs(net_policy_message_rate(&st, 1.5) - 50.0) < 1e-9);
    assert_true(net_policy_message_rate(&st, 3.5) == 0.0);
    assert_int_equal(st.messages, 51);
}

static void test_refused_move_inputs_are_counted_per_connection(void **state)
{
    net_policy_limits lim = limits();
    net_policy_state st;

    (void)state;
    net_policy_init(&st, &lim, 0.0);
    net_policy_check_move(&st, &lim, 0.0, NAN, 0.0f);
    net_policy_check_move(&st, &lim, 0.0, 5000.0f, 0.0f);
    net_policy_check_move(&st, &lim, 0.0, 1.0f, 0.0f);

    assert_int_equal(st.refused_inputs, 2);
}

static void test_player_names_are_printable_utf8_without_control_characters(void **state)
{
    (void)state;
    assert_true(net_name_is_valid("Zo\xc3\xab \xe6\x97\xa5\xe6\x9c\xac"));
    assert_true(net_name_is_valid(""));
    assert_false(net_name_is_valid("bad\xff"));           /* not UTF-8 */
    assert_false(net_name_is_valid("\xc2\x85next"));       /* C1 control (NEL) */
    assert_false(net_name_is_valid("\xc0\xaf"));           /* overlong */
    assert_false(net_name_is_valid("\xed\xa0\x80"));       /* a surrogate */
    assert_false(net_name_is_valid("line\nbreak"));
    assert_false(net_name_is_valid("del\x7f"));
    assert_false(net_name_is_valid("0123456789012345678901234567890123456789"));
}

static void test_echoed_text_has_control_and_non_ascii_bytes_escaped(void **state)
{
    char out[64];

    (void)state;
    net_sanitize("World0\nFAKE LOG\x1b[2J\xc3", out, sizeof out);

    assert_string_equal(out, "World0\\x0aFAKE LOG\\x1b[2J\\xc3");
    net_sanitize("0123456789", out, 5);
    assert_string_equal(out, "0123");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_fresh_connection_may_spawn_a_full_burst_at_once),
        cmocka_unit_test(test_spawning_beyond_the_burst_is_over_rate),
        cmocka_unit_test(test_tokens_come_back_at_the_spawn_rate),
        cmocka_unit_test(test_tokens_never_exceed_the_burst_however_long_a_player_waits),
        cmocka_unit_test(test_a_refused_request_spends_no_tokens),
        cmocka_unit_test(test_owning_more_than_the_limit_is_refused),
        cmocka_unit_test(test_a_count_of_zero_or_above_the_request_limit_is_a_bad_count),
        cmocka_unit_test(test_a_connection_is_dropped_on_its_nth_bad_message_not_before),
        cmocka_unit_test(test_bad_messages_on_one_connection_never_count_against_another),
        cmocka_unit_test(test_a_datagram_shorter_than_a_header_is_garbage),
        cmocka_unit_test(test_text_sent_to_the_game_port_is_garbage),
        cmocka_unit_test(test_a_datagram_for_a_peer_that_does_not_exist_is_garbage),
        cmocka_unit_test(test_a_datagram_with_an_unknown_command_is_garbage),
        cmocka_unit_test(test_a_connection_request_from_a_new_address_is_not_garbage),
        cmocka_unit_test(test_a_non_connect_command_without_a_peer_is_garbage),
        cmocka_unit_test(test_requests_beyond_the_burst_are_over_rate_until_tokens_return),
        cmocka_unit_test(test_a_move_input_must_be_finite_and_within_the_speed_limit),
        cmocka_unit_test(test_move_inputs_over_their_rate_are_refused),
        cmocka_unit_test(test_messages_past_the_frame_budget_are_over_budget_until_the_next_frame),
        cmocka_unit_test(test_a_peer_over_budget_in_every_second_for_the_flood_time_is_flooding),
        cmocka_unit_test(test_a_second_within_budget_ends_a_flood_run),
        cmocka_unit_test(test_a_client_within_the_handlers_rates_never_meets_the_filters_buckets),
        cmocka_unit_test(test_the_filters_buckets_stop_a_flood_at_twice_the_rate),
        cmocka_unit_test(test_the_message_rate_is_the_last_seconds_and_falls_to_zero_when_silent),
        cmocka_unit_test(test_refused_move_inputs_are_counted_per_connection),
        cmocka_unit_test(test_player_names_are_printable_utf8_without_control_characters),
        cmocka_unit_test(test_echoed_text_has_control_and_non_ascii_bytes_escaped),
    };
    return cmocka_run_group_tests(tests, host_setup, host_teardown);
}
