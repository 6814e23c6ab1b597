/*
 * test_bad_input.c - whatever arrives on the game port, the server stays up, answers the
 * sender with an error, counts it, and disconnects only a peer that keeps at it; other players
 * never notice.
 */
#include "harness.h"

#include <enet/enet.h>

#include "reap_msg.h"

/* A hand-driven ENet peer, to send what reap-client never would. */
typedef struct raw_peer {
    ENetHost *host;
    ENetPeer *peer;
    bool disconnected;
    Reap__ErrorCode last_error;
    char last_error_text[256];
    int errors;
    bool welcomed;
} raw_peer;

static void raw_on_event(raw_peer *r, ENetEvent *ev)
{
    static _Alignas(max_align_t) uint8_t arena_buf[256 * 1024];
    msg_arena arena;
    Reap__Envelope *env;

    if (ev->type == ENET_EVENT_TYPE_DISCONNECT)
        r->disconnected = true;
    if (ev->type != ENET_EVENT_TYPE_RECEIVE)
        return;
    msg_arena_init(&arena, arena_buf, sizeof arena_buf);
    if (msg_decode(&arena, ev->packet->data, ev->packet->dataLength, 0, &env) == MSG_OK) {
        if (env->body_case == REAP__ENVELOPE__BODY_ERROR) {
            r->errors++;
            r->last_error = env->error->code;
            snprintf(r->last_error_text, sizeof r->last_error_text, "%s", env->error->text);
        } else if (env->body_case == REAP__ENVELOPE__BODY_WELCOME) {
            r->welcomed = true;
        }
    }
    enet_packet_destroy(ev->packet);
}

/* Services until *flag is true (or errors reach want_errors); false at the deadline. */
static bool raw_wait(raw_peer *r, const bool *flag, int want_errors, double timeout)
{
    double deadline = harness_now() + timeout;
    ENetEvent ev;

    while (harness_now() < deadline) {
        if ((flag != NULL && *flag) || (want_errors > 0 && r->errors >= want_errors))
            return true;
        if (enet_host_service(r->host, &ev, 20) > 0)
            raw_on_event(r, &ev);
    }
    return false;
}

static void raw_connect(raw_peer *r, unsigned port)
{
    ENetAddress addr;
    ENetEvent ev;
    double deadline = harness_now() + 10.0;

    memset(r, 0, sizeof *r);
    r->host = enet_host_create(NULL, 1, MSG_CHANNEL_COUNT, 0, 0);
    assert_non_null(r->host);
    enet_address_set_host_ip(&addr, "127.0.0.1");
    addr.port = (enet_uint16)port;
    r->peer = enet_host_connect(r->host, &addr, MSG_CHANNEL_COUNT, 0);
    assert_non_null(r->peer);
    while (harness_now() < deadline) {
        if (enet_host_service(r->host, &ev, 20) > 0 && ev.type == ENET_EVENT_TYPE_CONNECT)
            return;
    }
    fail_msg("raw peer could not connect to port %u", port);
}

static void raw_close(raw_peer *r)
{
    if (!r->disconnected)
        enet_peer_reset(r->peer);
    enet_host_destroy(r->host);
}

static void raw_send_bytes(raw_peer *r, const void *data, size_t len)
{
    ENetPacket *p = enet_packet_create(data, len, ENET_PACKET_FLAG_RELIABLE);
    assert_int_equal(enet_peer_send(r->peer, MSG_CHANNEL_CONTROL, p), 0);
    enet_host_flush(r->host);
}

static void raw_send(raw_peer *r, Reap__Envelope *env)
{
    uint8_t buf[4096];
    size_t len;

    assert_int_equal(msg_encode(env, buf, sizeof buf, &len), MSG_OK);
    raw_send_bytes(r, buf, len);
}

static void raw_hello(raw_peer *r)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__Hello hello = REAP__HELLO__INIT;

    hello.protocol_version = MSG_PROTOCOL_VERSION;
    hello.player_name = "raw";
    env.body_case = REAP__ENVELOPE__BODY_HELLO;
    env.hello = &hello;
    raw_send(r, &env);
    assert_true(raw_wait(r, &r->welcomed, 0, 10.0));
}

static void raw_spawn(raw_peer *r, Reap__ActorClass cls, uint32_t count)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__SpawnRequest req = REAP__SPAWN_REQUEST__INIT;

    req.actor_class = cls;
    req.count = count;
    env.body_case = REAP__ENVELOPE__BODY_SPAWN_REQUEST;
    env.spawn_request = &req;
    raw_send(r, &env);
}

static int group_setup(void **state)
{
    (void)state;
    return enet_initialize();
}

static int group_teardown(void **state)
{
    (void)state;
    enet_deinitialize();
    return 0;
}

static void test_garbage_datagrams_are_counted_and_the_server_keeps_serving(void **state)
{
    harness_server s;
    harness_proc c;
    struct sockaddr_in sin;
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    char body[64];

    (void)state;
    harness_server_start(&s, NULL);
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_port = htons((uint16_t)s.port);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

    for (int i = 0; i < 100; i++) {
        char junk[64];
        int n = snprintf(junk, sizeof junk, "garbage datagram %d \xff\xfe", i);
        sendto(fd, junk, (size_t)(i % 2 ? n : 1), 0, (struct sockaddr *)&sin, sizeof sin);
    }

    harness_wait_metric(&s, "reap_net_bad_datagrams_total", HARNESS_EQ, 100, 10.0);
    assert_int_equal(harness_http(s.admin_port, "GET", "/healthz", NULL, body, sizeof body), 200);
    const char *args[] = { "--server", s.endpoint, "--spawn", "3", NULL };
    assert_int_equal(harness_run("reap-client", args, 30.0, &c), 0);
    harness_proc_free(&c);
    close(fd);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_each_malformed_message_gets_an_error_reply_and_is_counted(void **state)
{
    harness_server s;
    raw_peer r;
    uint8_t big[5000];
    /* field 99 (a body this server does not know), length 1 */
    const uint8_t unknown_body[] = { 0x08, 0x01, 0x9a, 0x06, 0x01, 0x00 };
    const uint8_t junk[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };

    (void)state;
    harness_server_start(&s, NULL);
    raw_connect(&r, s.port);
    memset(big, 0x08, sizeof big);

    raw_send_bytes(&r, junk, sizeof junk);
    assert_true(raw_wait(&r, NULL, 1, 10.0));
    assert_int_equal(r.last_error, REAP__ERROR_CODE__ERROR_CODE_DECODE);
    raw_send_bytes(&r, unknown_body, sizeof unknown_body);
    assert_true(raw_wait(&r, NULL, 2, 10.0));
    assert_int_equal(r.last_error, REAP__ERROR_CODE__ERROR_CODE_UNKNOWN_BODY);
    raw_spawn(&r, REAP__ACTOR_CLASS__ACTOR_CLASS_PROP, 1);
    assert_true(raw_wait(&r, NULL, 3, 10.0));
    assert_int_equal(r.last_error, REAP__ERROR_CODE__ERROR_CODE_UNEXPECTED);
    assert_non_null(strstr(r.last_error_text, "hello"));
    /* Last: a fragmented message over net.MaxMessageBytes is refused before ENet reassembles
     * it, so nothing sent after it on the same reliable channel would be delivered. */
    raw_send_bytes(&r, big, sizeof big);
    assert_true(raw_wait(&r, NULL, 4, 10.0));
    assert_int_equal(r.last_error, REAP__ERROR_CODE__ERROR_CODE_OVERSIZE);

    harness_wait_metric(&s, "reap_net_bad_messages_total", HARNESS_EQ, 4, 10.0);
    assert_false(r.disconnected);
    raw_close(&r);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_requests_over_policy_are_refused_with_the_limit_named(void **state)
{
    const char *const server_args[] = { "--cvar", "net.MaxActorsPerPlayer=5", NULL };
    harness_server s;
    raw_peer r;

    (void)state;
    harness_server_start(&s, server_args);
    raw_connect(&r, s.port);
    raw_hello(&r);

    raw_spawn(&r, REAP__ACTOR_CLASS__ACTOR_CLASS_PROP, 6);
    assert_true(raw_wait(&r, NULL, 1, 10.0));
    assert_int_equal(r.last_error, REAP__ERROR_CODE__ERROR_CODE_LIMIT);
    assert_non_null(strstr(r.last_error_text, "net.MaxActorsPerPlayer=5"));
    raw_spawn(&r, REAP__ACTOR_CLASS__ACTOR_CLASS_PAWN, 1);
    assert_true(raw_wait(&r, NULL, 2, 10.0));
    assert_int_equal(r.last_error, REAP__ERROR_CODE__ERROR_CODE_BAD_REQUEST);
    raw_spawn(&r, REAP__ACTOR_CLASS__ACTOR_CLASS_PROP, 0);
    assert_true(raw_wait(&r, NULL, 3, 10.0));
    assert_int_equal(r.last_error, REAP__ERROR_CODE__ERROR_CODE_BAD_REQUEST);

    harness_wait_metric(&s, "reap_net_bad_messages_total", HARNESS_EQ, 3, 10.0);
    assert_true(harness_server_metric(&s, "reap_world_actors{world=\"World0\"}") == 4);
    raw_close(&r);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_a_peer_that_keeps_sending_garbage_is_disconnected_and_nobody_else_is(
    void **state)
{
    const char *const server_args[] = { "--cvar", "net.MaxBadMessages=5", NULL };
    harness_server s;
    harness_proc good;
    raw_peer r;
    const uint8_t junk[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };

    (void)state;
    harness_server_start(&s, server_args);
    const char *args[] = { "--server", s.endpoint, "--spawn", "10", "--hold", "1", NULL };
    harness_proc_start(&good, "reap-client", args);
    harness_wait_metric(&s, "reap_players_connected", HARNESS_EQ, 1, 10.0);
    raw_connect(&r, s.port);

    for (int i = 0; i < 20 && !r.disconnected; i++) {
        raw_send_bytes(&r, junk, sizeof junk);
        raw_wait(&r, NULL, i + 1, 2.0);
    }
    assert_true(raw_wait(&r, &r.disconnected, 0, 10.0));

    assert_int_equal(r.last_error, REAP__ERROR_CODE__ERROR_CODE_KICKED);
    assert_true(harness_server_metric(&s, "reap_net_kicked_total") == 1);
    assert_true(harness_proc_wait(&good, 30.0));
    if (good.status != 0)
        fail_msg("the well-behaved client failed:\n%s", good.out);
    assert_non_null(strstr(good.out, "left gracefully"));
    raw_close(&r);
    harness_proc_free(&good);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_a_connection_that_never_says_hello_is_dropped(void **state)
{
    const char *const server_args[] = { "--cvar", "net.HelloTimeout=0.5", NULL };
    harness_server s;
    raw_peer r;

    (void)state;
    harness_server_start(&s, server_args);
    raw_connect(&r, s.port);

    assert_true(raw_wait(&r, &r.disconnected, 0, 10.0));

    assert_int_equal(r.last_error, REAP__ERROR_CODE__ERROR_CODE_KICKED);
    assert_non_null(strstr(r.last_error_text, "net.HelloTimeout"));
    harness_wait_metric(&s, "reap_net_kicked_total", HARNESS_EQ, 1, 10.0);
    raw_close(&r);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_a_full_server_tells_the_next_client_so(void **state)
{
    const char *const server_args[] = { "--max-players", "1", NULL };
    harness_server s;
    raw_peer first, second;

    (void)state;
    harness_server_start(&s, server_args);
    raw_connect(&first, s.port);
    raw_hello(&first);

    raw_connect(&second, s.port);
    assert_true(raw_wait(&second, &second.disconnected, 0, 10.0));

    assert_int_equal(second.last_error, REAP__ERROR_CODE__ERROR_CODE_SERVER_FULL);
    assert_false(first.disconnected);
    harness_wait_metric(&s, "reap_net_refused_full_total", HARNESS_EQ, 1, 10.0);
    raw_close(&second);
    raw_close(&first);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_a_packet_far_over_the_size_limit_is_refused_and_counted(void **state)
{
    harness_server s;
    raw_peer r;
    static uint8_t huge[300 * 1024]; /* over ENet's own limit on the server too */

    (void)state;
    harness_server_start(&s, NULL);
    raw_connect(&r, s.port);
    raw_hello(&r);
    memset(huge, 0x08, sizeof huge);

    raw_send_bytes(&r, huge, sizeof huge);
    assert_true(raw_wait(&r, NULL, 1, 10.0));

    assert_int_equal(r.last_error, REAP__ERROR_CODE__ERROR_CODE_OVERSIZE);
    assert_non_null(strstr(r.last_error_text, "net.MaxMessageBytes"));
    harness_wait_metric(&s, "reap_net_oversize_packets_total", HARNESS_GE, 1, 10.0);
    raw_close(&r);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_garbage_datagrams_are_counted_and_the_server_keeps_serving),
        cmocka_unit_test(test_each_malformed_message_gets_an_error_reply_and_is_counted),
        cmocka_unit_test(test_requests_over_policy_are_refused_with_the_limit_named),
        cmocka_unit_test(test_a_peer_that_keeps_sending_garbage_is_disconnected_and_nobody_else_is),
        cmocka_unit_test(test_a_connection_that_never_says_hello_is_dropped),
        cmocka_unit_test(test_a_full_server_tells_the_next_client_so),
        cmocka_unit_test(test_a_packet_far_over_the_size_limit_is_refused_and_counted),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
