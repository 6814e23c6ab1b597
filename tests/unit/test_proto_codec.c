/*
 * test_proto_codec.c - the wire envelope: round trips, and every way a packet can be bad.
 */
#include <setjmp.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "reap_msg.h"
#include "reap_wire.h"

typedef struct fixture {
    alignas(max_align_t) uint8_t arena_buf[64 * 1024];
    msg_arena arena;
    uint8_t wire[8192];
    size_t len;
} fixture;

static int setup(void **state)
{
    static fixture fx;

    memset(&fx, 0, sizeof fx);
    msg_arena_init(&fx.arena, fx.arena_buf, sizeof fx.arena_buf);
    *state = &fx;
    return 0;
}

static void encode(fixture *fx, const Reap__Envelope *env)
{
    assert_int_equal(msg_encode(env, fx->wire, sizeof fx->wire, &fx->len), MSG_OK);
}

static void test_a_hello_round_trips(void **state)
{
    fixture *fx = *state;
    Reap__Envelope env = REAP__ENVELOPE__INIT, *out = NULL;
    Reap__Hello hello = REAP__HELLO__INIT;

    hello.protocol_version = MSG_PROTOCOL_VERSION;
    hello.player_name = "ana";
    hello.world = "World1";
    env.seq = 42;
    env.body_case = REAP__ENVELOPE__BODY_HELLO;
    env.hello = &hello;
    encode(fx, &env);

    assert_int_equal(msg_decode(&fx->arena, fx->wire, fx->len, 4096, &out), MSG_OK);

    assert_int_equal(out->seq, 42);
    assert_int_equal(out->body_case, REAP__ENVELOPE__BODY_HELLO);
    assert_int_equal(out->hello->protocol_version, MSG_PROTOCOL_VERSION);
    assert_string_equal(out->hello->player_name, "ana");
    assert_string_equal(out->hello->world, "World1");
}

static void test_an_actor_spawn_batch_round_trips(void **state)
{
    fixture *fx = *state;
    Reap__Envelope env = REAP__ENVELOPE__INIT, *out = NULL;
    Reap__ActorSpawn spawn = REAP__ACTOR_SPAWN__INIT;
    uint8_t buf[256], tail[WIRE_SPAWN_TAIL_MAX];
    wire_writer w;
    wire_reader r;
    wire_actor a;

    wire_writer_init(&w, buf, sizeof buf);
    for (int i = 0; i < 3; i++) {
        int32_t q[3] = { i * 10, -i, 0 };
        size_t n = wire_spawn_tail(tail, REAP__ACTOR_CLASS__ACTOR_CLASS_PROP, 0, 7, 0, q);
        assert_true(wire_put_spawn(&w, 100u + (uint64_t)i, 5u + (uint32_t)i, tail, n));
    }
    spawn.frame = 42;
    spawn.count = w.count;
    spawn.records = (ProtobufCBinaryData){ w.len, w.buf };
    env.body_case = REAP__ENVELOPE__BODY_ACTOR_SPAWN;
    env.actor_spawn = &spawn;
    encode(fx, &env);

    assert_int_equal(msg_decode(&fx->arena, fx->wire, fx->len, 0, &out), MSG_OK);

    assert_int_equal(out->actor_spawn->frame, 42);
    assert_int_equal(out->actor_spawn->count, 3);
    wire_reader_init(&r, out->actor_spawn->records.data, out->actor_spawn->records.len,
                     out->actor_spawn->count);
    for (int i = 0; i < 3; i++) {
        assert_true(wire_next_spawn(&r, &a));
        assert_int_equal(a.net_id, 100 + i);
        assert_int_equal(a.index, 5 + i);
        assert_int_equal(a.owner_player_id, 7);
        assert_int_equal(a.q[0], i * 10);
        assert_int_equal(a.q[1], -i);
    }
    assert_true(wire_reader_ok(&r));
}

static void test_an_error_round_trips_with_its_code_and_text(void **state)
{
    fixture *fx = *state;
    Reap__Envelope env = REAP__ENVELOPE__INIT, *out = NULL;
    Reap__Error err = REAP__ERROR__INIT;

    err.code = REAP__ERROR_CODE__ERROR_CODE_RATE;
    err.text = "slow down";
    err.request_seq = 9;
    env.body_case = REAP__ENVELOPE__BODY_ERROR;
    env.error = &err;
    encode(fx, &env);

    assert_int_equal(msg_decode(&fx->arena, fx->wire, fx->len, 0, &out), MSG_OK);

    assert_int_equal(out->error->code, REAP__ERROR_CODE__ERROR_CODE_RATE);
    assert_string_equal(out->error->text, "slow down");
    assert_int_equal(out->error->request_seq, 9);
}

static void test_a_packet_over_the_size_limit_is_refused_without_decoding(void **state)
{
    fixture *fx = *state;
    Reap__Envelope *out = NULL;
    uint8_t big[5000];

    memset(big, 0, sizeof big);

    assert_int_equal(msg_decode(&fx->arena, big, sizeof big, 4096, &out), MSG_E_OVERSIZE);
    assert_null(out);
    assert_int_equal(fx->arena.used, 0);
    assert_int_equal(msg_result_error_code(MSG_E_OVERSIZE), REAP__ERROR_CODE__ERROR_CODE_OVERSIZE);
}

static void test_random_bytes_are_an_undecodable_message(void **state)
{
    fixture *fx = *state;
    Reap__Envelope *out = NULL;
    const uint8_t junk[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x02 };

    assert_int_equal(msg_decode(&fx->arena, junk, sizeof junk, 4096, &out), MSG_E_DECODE);
    assert_int_equal(msg_result_error_code(MSG_E_DECODE), REAP__ERROR_CODE__ERROR_CODE_DECODE);
}

static void test_every_truncation_of_a_valid_message_is_refused_or_decodes_cleanly(void **state)
{
    fixture *fx = *state;
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__SpawnRequest req = REAP__SPAWN_REQUEST__INIT;
    int refused = 0;

    req.actor_class = REAP__ACTOR_CLASS__ACTOR_CLASS_PROP;
    req.count = 300;
    env.seq = 1000;
    env.body_case = REAP__ENVELOPE__BODY_SPAWN_REQUEST;
    env.spawn_request = &req;
    encode(fx, &env);

    for (size_t cut = 0; cut < fx->len; cut++) {
        Reap__Envelope *out = NULL;
        msg_arena_reset(&fx->arena);
        msg_result r = msg_decode(&fx->arena, fx->wire, cut, 4096, &out);
        /* A prefix is either refused or, when it ends between fields, a valid envelope. */
        assert_true(r == MSG_E_DECODE || r == MSG_E_UNKNOWN_BODY || r == MSG_OK);
        if (r != MSG_OK)
            refused++;
        else
            assert_int_equal(out->body_case, REAP__ENVELOPE__BODY_SPAWN_REQUEST);
    }
    assert_true(refused > 0);
}

static void test_an_envelope_without_a_body_is_an_unknown_body(void **state)
{
    fixture *fx = *state;
    Reap__Envelope env = REAP__ENVELOPE__INIT, *out = NULL;

    env.seq = 3;
    encode(fx, &env);

    assert_int_equal(msg_decode(&fx->arena, fx->wire, fx->len, 4096, &out), MSG_E_UNKNOWN_BODY);
    assert_int_equal(msg_result_error_code(MSG_E_UNKNOWN_BODY),
                     REAP__ERROR_CODE__ERROR_CODE_UNKNOWN_BODY);
}

static void test_a_body_from_a_newer_protocol_is_an_unknown_body(void **state)
{
    fixture *fx = *state;
    Reap__Envelope *out = NULL;
    /* field 99, wire type 2 (length-delimited), length 1, one byte: a body we do not know */
    const uint8_t wire[] = { 0x08, 0x01, 0x9a, 0x06, 0x01, 0x00 };

    assert_int_equal(msg_decode(&fx->arena, wire, sizeof wire, 4096, &out), MSG_E_UNKNOWN_BODY);
}

static void test_an_empty_packet_is_an_unknown_body(void **state)
{
    fixture *fx = *state;
    Reap__Envelope *out = NULL;

    assert_int_equal(msg_decode(&fx->arena, (const uint8_t *)"", 0, 4096, &out),
                     MSG_E_UNKNOWN_BODY);
}

static void test_a_message_that_does_not_fit_the_arena_is_refused_not_allocated(void **state)
{
    fixture *fx = *state;
    Reap__Envelope env = REAP__ENVELOPE__INIT, *out = NULL;
    Reap__DestroyRequest req = REAP__DESTROY_REQUEST__INIT;
    uint64_t ids[1000];
    alignas(max_align_t) uint8_t small[256];
    msg_arena tiny;

    for (int i = 0; i < 1000; i++)
        ids[i] = (uint64_t)i + 1;
    req.n_net_ids = 1000;
    req.net_ids = ids;
    env.body_case = REAP__ENVELOPE__BODY_DESTROY_REQUEST;
    env.destroy_request = &req;
    encode(fx, &env);
    msg_arena_init(&tiny, small, sizeof small);

    assert_int_equal(msg_decode(&tiny, fx->wire, fx->len, 0, &out), MSG_E_DECODE);
    assert_true(tiny.failed);
}

static void test_resetting_the_arena_reuses_its_memory(void **state)
{
    fixture *fx = *state;
    Reap__Envelope env = REAP__ENVELOPE__INIT, *out = NULL;
    Reap__Ping ping = REAP__PING__INIT;

    env.body_case = REAP__ENVELOPE__BODY_PING;
    env.ping = &ping;
    encode(fx, &env);
    for (int i = 0; i < 10000; i++) {
        msg_arena_reset(&fx->arena);
        assert_int_equal(msg_decode(&fx->arena, fx->wire, fx->len, 0, &out), MSG_OK);
    }

    assert_true(fx->arena.used < 1024);
}

static void test_encoding_into_a_buffer_too_small_fails_cleanly(void **state)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__Goodbye bye = REAP__GOODBYE__INIT;
    uint8_t buf[4];
    size_t len = 12345;

    (void)state;
    bye.reason = "a reason longer than four bytes";
    env.body_case = REAP__ENVELOPE__BODY_GOODBYE;
    env.goodbye = &bye;

    assert_int_equal(msg_encode(&env, buf, sizeof buf, &len), MSG_E_NOSPACE);
    assert_int_equal(len, 12345);
}

static void test_every_body_kind_has_a_name(void **state)
{
    (void)state;
    for (int b = REAP__ENVELOPE__BODY_HELLO; b <= REAP__ENVELOPE__BODY_ERROR; b++)
        assert_string_not_equal(msg_body_name((Reap__Envelope__BodyCase)b), "unknown");
    assert_string_equal(msg_body_name((Reap__Envelope__BodyCase)99), "unknown");
}

/* The server writes replication envelopes itself (wire_envelope): byte for byte what
 * protobuf-c packs, over frames, counts and record lengths whose varints change size. */
static void test_a_hand_written_replication_envelope_is_what_protobuf_packs(void **state)
{
    static const uint64_t frames[] = { 0, 1, 127, 128, 16384, 4000000000ull, 1ull << 40 };
    static const uint32_t counts[] = { 0, 1, 127, 128, 300 };
    static const size_t lens[] = { 0, 1, 127, 128, 1340, 20000 };
    static uint8_t records[20000], mine[20100], theirs[20100];

    (void)state;
    for (size_t i = 0; i < sizeof records; i++)
        records[i] = (uint8_t)(i * 7);
    for (int spawns = 0; spawns < 2; spawns++)
        for (size_t f = 0; f < sizeof frames / sizeof frames[0]; f++)
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
                for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++) {
                    Reap__Envelope env = REAP__ENVELOPE__INIT;
                    Reap__ActorSpawn sp = REAP__ACTOR_SPAWN__INIT;
                    Reap__ActorUpdate up = REAP__ACTOR_UPDATE__INIT;
                    ProtobufCBinaryData rec = { lens[l], records };
                    size_t n, want;

                    if (spawns) {
                        sp.frame = frames[f], sp.count = counts[c], sp.records = rec;
                        env.body_case = REAP__ENVELOPE__BODY_ACTOR_SPAWN;
                        env.actor_spawn = &sp;
                    } else {
                        up.frame = frames[f], up.count = counts[c], up.records = rec;
                        env.body_case = REAP__ENVELOPE__BODY_ACTOR_UPDATE;
                        env.actor_update = &up;
                    }
                    assert_int_equal(msg_encode(&env, theirs, sizeof theirs, &want), MSG_OK);
                    n = wire_envelope(mine, sizeof mine, spawns, frames[f], counts[c], records,
                                      lens[l]);
                    assert_int_equal(n, want);
                    assert_true(n <= lens[l] + WIRE_ENVELOPE_MAX);
                    assert_memory_equal(mine, theirs, n);
                    assert_int_equal(wire_envelope(mine, n - 1, spawns, frames[f], counts[c],
                                                   records, lens[l]), 0);
                }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_a_hello_round_trips, setup),
        cmocka_unit_test(test_a_hand_written_replication_envelope_is_what_protobuf_packs),
        cmocka_unit_test_setup(test_an_actor_spawn_batch_round_trips, setup),
        cmocka_unit_test_setup(test_an_error_round_trips_with_its_code_and_text, setup),
        cmocka_unit_test_setup(test_a_packet_over_the_size_limit_is_refused_without_decoding, setup),
        cmocka_unit_test_setup(test_random_bytes_are_an_undecodable_message, setup),
        cmocka_unit_test_setup(test_every_truncation_of_a_valid_message_is_refused_or_decodes_cleanly, setup),
        cmocka_unit_test_setup(test_an_envelope_without_a_body_is_an_unknown_body, setup),
        cmocka_unit_test_setup(test_a_body_from_a_newer_protocol_is_an_unknown_body, setup),
        cmocka_unit_test_setup(test_an_empty_packet_is_an_unknown_body, setup),
        cmocka_unit_test_setup(test_a_message_that_does_not_fit_the_arena_is_refused_not_allocated, setup),
        cmocka_unit_test_setup(test_resetting_the_arena_reuses_its_memory, setup),
        cmocka_unit_test_setup(test_encoding_into_a_buffer_too_small_fails_cleanly, setup),
        cmocka_unit_test_setup(test_every_body_kind_has_a_name, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
