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
    int pongs;
    bool pongs_out_of_order;
    uint64_t last_pong_nonce;
    int spawn_acks;
    uint32_t spawn_ack_count;
    int destroy_acks;
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
        } else if (env->body_case == REAP__ENVELOPE__BODY_PONG) {
            if (r->pongs > 0 && env->pong->nonce <= r->last_pong_nonce)
                r->pongs_out_of_order = true;
            r->last_pong_nonce = env->pong->nonce;
            r->pongs++;
        } else if (env->body_case == REAP__ENVELOPE__BODY_SPAWN_ACK) {
            r->spawn_acks++;
            r->spawn_ack_count = env->spawn_ack->count;
        } else if (env->body_case == REAP__ENVELOPE__BODY_DESTROY_ACK) {
            r->destroy_acks++;
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

/* Queues bytes as one message on a channel (reliable but on the updates channel). */
static void raw_queue_bytes(raw_peer *r, uint8_t channel, const void *data, size_t len)
{
    ENetPacket *p = enet_packet_create(data, len,
                                       channel == MSG_CHANNEL_UPDATES ? 0
                                                                      : ENET_PACKET_FLAG_RELIABLE);
    assert_int_equal(enet_peer_send(r->peer, channel, p), 0);
}

static void raw_send_bytes(raw_peer *r, const void *data, size_t len)
{
    raw_queue_bytes(r, MSG_CHANNEL_CONTROL, data, len);
    enet_host_flush(r->host);
}

static void raw_queue(raw_peer *r, uint8_t channel, Reap__Envelope *env)
{
    uint8_t buf[4096];
    size_t len;

    assert_int_equal(msg_encode(env, buf, sizeof buf, &len), MSG_OK);
    raw_queue_bytes(r, channel, buf, len);
}

static void raw_send(raw_peer *r, Reap__Envelope *env)
{
    raw_queue(r, MSG_CHANNEL_CONTROL, env);
    enet_host_flush(r->host);
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
    assert_true(harness_server_metric(&s, "reap_net_kicked_by_reason_total{reason=\"bad_messages\"}") ==
                1);
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
    harness_wait_metric(&s, "reap_net_kicked_by_reason_total{reason=\"hello_timeout\"}", HARNESS_EQ, 1,
                        10.0);
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

static void raw_queue_ping(raw_peer *r, uint64_t nonce)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__Ping ping = REAP__PING__INIT;

    ping.nonce = nonce;
    env.body_case = REAP__ENVELOPE__BODY_PING;
    env.ping = &ping;
    raw_queue(r, MSG_CHANNEL_CONTROL, &env);
}

static void raw_ping(raw_peer *r, uint64_t nonce)
{
    raw_queue_ping(r, nonce);
    enet_host_flush(r->host);
}

static void raw_queue_move(raw_peer *r, uint32_t input_seq)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__MoveInput in = REAP__MOVE_INPUT__INIT;

    in.input_seq = input_seq;
    in.vx = 100.0f;
    env.body_case = REAP__ENVELOPE__BODY_MOVE_INPUT;
    env.move_input = &in;
    raw_queue(r, MSG_CHANNEL_UPDATES, &env);
}

/* Handles what has arrived, without waiting. */
static void raw_poll(raw_peer *r)
{
    ENetEvent ev;

    while (enet_host_service(r->host, &ev, 0) > 0)
        raw_on_event(r, &ev);
}

static long server_rss_kb(const harness_server *s)
{
    char path[64], line[256];
    long kb = -1;
    FILE *f;

    snprintf(path, sizeof path, "/proc/%d/status", (int)s->proc.pid);
    f = fopen(path, "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

/* The first fragment of a 256 KB reliable packet that is never finished, written by hand so
 * that nothing ever completes it (ENet itself would send every fragment). */
static void raw_send_first_fragment(raw_peer *r, enet_uint16 seq)
{
    uint8_t dgram[2 + sizeof(ENetProtocolSendFragment) + 1000];
    enet_uint16 header = (enet_uint16)(r->peer->outgoingPeerID |
                                       (r->peer->outgoingSessionID
                                        << ENET_PROTOCOL_HEADER_SESSION_SHIFT));
    ENetProtocolSendFragment frag;
    ENetBuffer buf;

    memset(&frag, 0, sizeof frag);
    frag.header.command = ENET_PROTOCOL_COMMAND_SEND_FRAGMENT |
                          ENET_PROTOCOL_COMMAND_FLAG_ACKNOWLEDGE;
    frag.header.channelID = MSG_CHANNEL_CONTROL;
    frag.header.reliableSequenceNumber = ENET_HOST_TO_NET_16(seq);
    frag.startSequenceNumber = ENET_HOST_TO_NET_16(seq);
    frag.dataLength = ENET_HOST_TO_NET_16(1000);
    frag.fragmentCount = ENET_HOST_TO_NET_32(263);
    frag.fragmentNumber = 0;
    frag.totalLength = ENET_HOST_TO_NET_32(262144);
    frag.fragmentOffset = 0;
    header = ENET_HOST_TO_NET_16(header);
    memcpy(dgram, &header, 2);
    memcpy(dgram + 2, &frag, sizeof frag);
    memset(dgram + 2 + sizeof frag, 0x08, 1000);
    buf.data = dgram;
    buf.dataLength = sizeof dgram;
    assert_true(enet_socket_send(r->host->socket, &r->peer->address, &buf, 1) > 0);
}

static void test_unfinished_fragmented_packets_cannot_pin_the_servers_memory(void **state)
{
    harness_server s;
    raw_peer r[4];
    long before, after;

    (void)state;
    harness_server_start(&s, NULL);
    for (int p = 0; p < 4; p++) {
        raw_connect(&r[p], s.port);
        raw_hello(&r[p]);
    }
    before = server_rss_kb(&s);

    /* 4 peers x 60 packets x 256 KB announced: 60 MB if reassembly buffers were allocated. */
    for (int p = 0; p < 4; p++)
        for (enet_uint16 i = 0; i < 60; i++)
            raw_send_first_fragment(&r[p], (enet_uint16)(r[p].peer->channels[0]
                                                             .outgoingReliableSequenceNumber +
                                                         1 + i));
    /* Each peer is told, and after net.MaxBadMessages such packets it is disconnected. */
    harness_wait_metric(&s, "reap_net_kicked_by_reason_total{reason=\"bad_messages\"}", HARNESS_EQ, 4,
                        10.0);
    after = server_rss_kb(&s);

    assert_true(after - before < 8 * 1024);
    assert_true(harness_server_metric(&s, "reap_net_refused_fragments_total") >= 40);
    for (int p = 0; p < 4; p++) {
        assert_true(raw_wait(&r[p], &r[p].disconnected, 0, 10.0));
        assert_int_equal(r[p].last_error, REAP__ERROR_CODE__ERROR_CODE_KICKED);
        raw_close(&r[p]);
    }
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void send_half_open_connect(int fd, unsigned port, enet_uint32 connect_id)
{
    uint8_t dgram[4 + sizeof(ENetProtocolConnect)];
    enet_uint16 header = ENET_HOST_TO_NET_16(ENET_PROTOCOL_MAXIMUM_PEER_ID |
                                             ENET_PROTOCOL_HEADER_FLAG_SENT_TIME);
    enet_uint16 sent_time = 0;
    ENetProtocolConnect c;
    struct sockaddr_in to;

    memset(&c, 0, sizeof c);
    c.header.command = ENET_PROTOCOL_COMMAND_CONNECT | ENET_PROTOCOL_COMMAND_FLAG_ACKNOWLEDGE;
    c.header.channelID = 0xFF;
    c.header.reliableSequenceNumber = ENET_HOST_TO_NET_16(1);
    c.mtu = ENET_HOST_TO_NET_32(1400);
    c.windowSize = ENET_HOST_TO_NET_32(ENET_PROTOCOL_MAXIMUM_WINDOW_SIZE);
    c.channelCount = ENET_HOST_TO_NET_32(MSG_CHANNEL_COUNT);
    c.packetThrottleInterval = ENET_HOST_TO_NET_32(ENET_PEER_PACKET_THROTTLE_INTERVAL);
    c.packetThrottleAcceleration = ENET_HOST_TO_NET_32(ENET_PEER_PACKET_THROTTLE_ACCELERATION);
    c.packetThrottleDeceleration = ENET_HOST_TO_NET_32(ENET_PEER_PACKET_THROTTLE_DECELERATION);
    c.connectID = connect_id;
    memcpy(dgram, &header, 2);
    memcpy(dgram + 2, &sent_time, 2);
    memcpy(dgram + 4, &c, sizeof c);
    memset(&to, 0, sizeof to);
    to.sin_family = AF_INET;
    to.sin_port = htons((uint16_t)port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_true(sendto(fd, dgram, sizeof dgram, 0, (struct sockaddr *)&to, sizeof to) > 0);
}

static void test_half_open_handshakes_do_not_lock_real_players_out(void **state)
{
    const char *const server_args[] = { "--max-players", "4", NULL };
    harness_server s;
    harness_proc c;
    struct sockaddr_in from;
    int fd = socket(AF_INET, SOCK_DGRAM, 0);

    (void)state;
    harness_server_start(&s, server_args);
    /* The flood comes from another loopback address, as it would from another host. */
    memset(&from, 0, sizeof from);
    from.sin_family = AF_INET;
    from.sin_addr.s_addr = htonl(0x7f000002); /* 127.0.0.2 */
    assert_int_equal(bind(fd, (struct sockaddr *)&from, sizeof from), 0);
    for (enet_uint32 i = 0; i < 200; i++)
        send_half_open_connect(fd, s.port, 0x1000 + i);
    harness_wait_metric(&s, "reap_net_refused_handshakes_total", HARNESS_GE, 150, 10.0);

    const char *args[] = { "--server", s.endpoint, "--spawn", "1", NULL };
    assert_int_equal(harness_run("reap-client", args, 30.0, &c), 0);

    harness_proc_free(&c);
    close(fd);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

/* A join storm: more ENet handshakes at once than the server keeps in flight (256, from ten
 * addresses: each under its limit of 32). The first 256 are answered; the rest are refused,
 * not let in by resetting one answered a moment ago (its client may be sending its hello to
 * it): an unfinished handshake gives way only once it is a second old. */
enum { STORM_ADDRESSES = 10, STORM_PER_ADDRESS = 30, STORM_SLOTS = 256 };

static void test_a_join_storm_never_resets_a_handshake_answered_a_moment_ago(void **state)
{
    const char *const server_args[] = { "--max-players", "400", NULL };
    int fds[STORM_ADDRESSES * STORM_PER_ADDRESS];
    bool answered[STORM_ADDRESSES * STORM_PER_ADDRESS] = { false };
    int n = STORM_ADDRESSES * STORM_PER_ADDRESS, heard = 0;
    harness_server s;
    double until;

    (void)state;
    harness_server_start(&s, server_args);
    for (int i = 0; i < n; i++) {
        struct sockaddr_in from;

        fds[i] = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
        assert_true(fds[i] >= 0);
        memset(&from, 0, sizeof from);
        from.sin_family = AF_INET;
        from.sin_addr.s_addr = htonl(0x7f00000a + (uint32_t)(i % STORM_ADDRESSES)); /* 127.0.0.10+ */
        assert_int_equal(bind(fds[i], (struct sockaddr *)&from, sizeof from), 0);
    }
    for (int i = 0; i < n; i++)
        send_half_open_connect(fds[i], s.port, 0x2000 + (enet_uint32)i);

    /* Answers come within a frame or two; a reset one's client would have had its answer too
     * (ENet answers every CONNECT it takes), so the answered are those the server took. */
    until = harness_now() + 0.5;
    while (harness_now() < until) {
        uint8_t buf[1500];

        for (int i = 0; i < n; i++)
            if (!answered[i] && recv(fds[i], buf, sizeof buf, 0) > 0) {
                answered[i] = true;
                heard++;
            }
        harness_proc_pump(&s.proc, 5);
    }
    assert_int_equal(heard, STORM_SLOTS);
    assert_true(harness_server_metric(&s, "reap_net_refused_handshakes_total") >= n - STORM_SLOTS);

    for (int i = 0; i < n; i++)
        close(fds[i]);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_a_ping_flood_is_refused_over_the_request_rate_and_counted(void **state)
{
    harness_server s;
    raw_peer r;

    (void)state;
    harness_server_start(&s, NULL);
    raw_connect(&r, s.port);
    raw_hello(&r);

    for (uint64_t i = 0; i < 500; i++)
        raw_ping(&r, i);
    assert_true(raw_wait(&r, &r.disconnected, 0, 20.0));

    /* The burst (net.RequestBurst=40) and what the rate refilled are served; the rest are
     * refused with ERROR_CODE_RATE until net.MaxBadMessages (10) ends the connection. */
    assert_true(r.pongs >= 40 && r.pongs < 60);
    assert_int_equal(r.last_error, REAP__ERROR_CODE__ERROR_CODE_KICKED);
    harness_wait_metric(&s, "reap_net_rate_limited_total", HARNESS_GE, 10, 10.0);
    assert_true(harness_server_metric(&s, "reap_net_rate_limited_total") <= 11);
    raw_close(&r);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_the_largest_spawn_request_allowed_is_acknowledged(void **state)
{
    const char *const server_args[] = { "--cvar", "net.MaxSpawnPerRequest=5000", "--cvar",
                                        "net.MaxActorsPerPlayer=5000", "--cvar",
                                        "net.SpawnBurst=5000", NULL };
    harness_server s;
    raw_peer r;

    (void)state;
    harness_server_start(&s, server_args);
    raw_connect(&r, s.port);
    raw_hello(&r);

    raw_spawn(&r, REAP__ACTOR_CLASS__ACTOR_CLASS_PROP, 5000);
    for (double deadline = harness_now() + 30.0; r.spawn_acks == 0 && r.errors == 0 &&
                                                 harness_now() < deadline;)
        raw_wait(&r, NULL, 1, 0.1);

    assert_int_equal(r.errors, 0);
    assert_int_equal(r.spawn_acks, 1);
    assert_int_equal(r.spawn_ack_count, 5000);
    raw_close(&r);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_a_spawn_limit_whose_answer_could_not_fit_is_refused_at_start(void **state)
{
    const char *args[] = { "--port", "0", "--admin-port", "0", "--cvar",
                           "net.MaxSpawnPerRequest=100000", NULL };
    harness_proc p;

    (void)state;
    assert_int_equal(harness_run("reap-server", args, 10.0, &p), 2);
    assert_non_null(strstr(p.out, "net.MaxSpawnPerRequest"));
    harness_proc_free(&p);
}

static void test_an_empty_destroy_request_gets_one_error_and_no_acknowledgement(void **state)
{
    harness_server s;
    raw_peer r;
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__DestroyRequest req = REAP__DESTROY_REQUEST__INIT;

    (void)state;
    harness_server_start(&s, NULL);
    raw_connect(&r, s.port);
    raw_hello(&r);

    env.body_case = REAP__ENVELOPE__BODY_DESTROY_REQUEST;
    env.destroy_request = &req;
    raw_send(&r, &env);
    raw_ping(&r, 1); /* answered after the destroy request: the reply that closes the wait */
    for (double deadline = harness_now() + 10.0; r.pongs == 0 && harness_now() < deadline;)
        raw_wait(&r, NULL, r.errors + 1, 0.1);

    assert_int_equal(r.pongs, 1);
    assert_int_equal(r.errors, 1);
    assert_int_equal(r.last_error, REAP__ERROR_CODE__ERROR_CODE_BAD_REQUEST);
    assert_int_equal(r.destroy_acks, 0);
    raw_close(&r);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_a_clean_disconnect_without_goodbye_is_not_a_timeout(void **state)
{
    harness_server s;
    raw_peer r;

    (void)state;
    harness_server_start(&s, NULL);
    raw_connect(&r, s.port);
    raw_hello(&r);

    enet_peer_disconnect(r.peer, 0);
    assert_true(raw_wait(&r, &r.disconnected, 0, 10.0));

    harness_wait_metric(&s, "reap_net_connections", HARNESS_EQ, 0, 10.0);
    assert_true(harness_server_metric(&s, "reap_net_timeouts_total") == 0);
    raw_close(&r);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_a_move_input_flood_is_dropped_unread_and_the_flooder_is_kicked(void **state)
{
    const char *const server_args[] = { "--cvar", "net.FloodKickSeconds=0.5", NULL };
    harness_server s;
    harness_proc good;
    raw_peer r;
    double started, elapsed, decoded_bound;
    uint32_t sent = 0;

    (void)state;
    harness_server_start(&s, server_args);
    const char *args[] = { "--server", s.endpoint, "--spawn", "10", "--hold", "2", NULL };
    harness_proc_start(&good, "reap-client", args);
    harness_wait_metric(&s, "reap_players_connected", HARNESS_EQ, 1, 10.0);
    raw_connect(&r, s.port);
    raw_hello(&r);

    /* As fast as ENet sends them, for at most 20 s or 4 million inputs. */
    started = harness_now();
    while (!r.disconnected && sent < 4000000 && harness_now() - started < 20.0) {
        for (int i = 0; i < 64; i++)
            raw_queue_move(&r, ++sent);
        raw_poll(&r);
    }
    elapsed = harness_now() - started;
    print_message("flooder: %u move inputs in %.2f s before the kick\n", sent, elapsed);

    assert_true(r.disconnected);
    assert_int_equal(r.last_error, REAP__ERROR_CODE__ERROR_CODE_KICKED);
    assert_non_null(strstr(r.last_error_text, "net.MaxMessagesPerFrame"));
    harness_wait_metric(&s, "reap_net_kicked_by_reason_total{reason=\"flood\"}", HARNESS_EQ, 1, 10.0);
    assert_true(harness_server_metric(&s, "reap_net_dropped_messages_total{reason=\"budget\"}") >
                0);
    /* What was decoded at all got through the updates channel's filter bucket: twice
     * net.MaxMoveInputsPerSecond (60), as a burst and per second. Applied inputs plus refused
     * ones cannot exceed it. */
    decoded_bound = 2 * 60 * (1 + elapsed);
    assert_true(harness_server_metric(&s, "reap_net_refused_inputs_total") <= decoded_bound);
    assert_true(sent > 10 * decoded_bound);
    assert_true(harness_proc_wait(&good, 30.0));
    if (good.status != 0)
        fail_msg("the well-behaved client beside the flood failed:\n%s", good.out);
    assert_non_null(strstr(good.out, "left gracefully"));

    /* From the same address and port it may not come straight back. */
    {
        ENetAddress addr;
        enet_address_set_host_ip(&addr, "127.0.0.1");
        addr.port = (enet_uint16)s.port;
        r.peer = enet_host_connect(r.host, &addr, MSG_CHANNEL_COUNT, 0);
        assert_non_null(r.peer);
        enet_host_flush(r.host);
        harness_wait_metric(&s, "reap_net_refused_handshakes_total", HARNESS_GE, 1, 10.0);
        raw_poll(&r);
        assert_int_not_equal(r.peer->state, ENET_PEER_STATE_CONNECTED);
        enet_peer_reset(r.peer);
        r.disconnected = true;
    }
    raw_close(&r);
    harness_proc_free(&good);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_reliable_messages_past_the_frame_budget_wait_and_keep_their_order(void **state)
{
    const char *const server_args[] = { "--cvar", "net.MaxMessagesPerFrame=10", "--cvar",
                                        "net.FloodKickSeconds=3600", NULL };
    harness_server s;
    raw_peer r;

    (void)state;
    harness_server_start(&s, server_args);
    raw_connect(&r, s.port);
    raw_hello(&r);

    /* One datagram, so one frame: ten get through, the rest are resent by ENet. The next
     * datagram, sent long before a resend is due, carries only later ones: they wait. */
    for (uint64_t i = 1; i <= 30; i++)
        raw_queue_ping(&r, i);
    enet_host_flush(r.host);
    for (uint64_t i = 31; i <= 35; i++)
        raw_queue_ping(&r, i);
    enet_host_flush(r.host);
    for (double deadline = harness_now() + 20.0; r.pongs < 35 && harness_now() < deadline;)
        raw_wait(&r, NULL, r.errors + 1, 0.1);

    assert_int_equal(r.pongs, 35);
    assert_false(r.pongs_out_of_order);
    assert_int_equal(r.errors, 0);
    assert_true(harness_server_metric(&s, "reap_net_dropped_messages_total{reason=\"budget\"}") >=
                20);
    assert_true(
        harness_server_metric(&s, "reap_net_dropped_messages_total{reason=\"waiting\"}") >= 5);
    raw_close(&r);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_a_client_within_the_allowed_rates_is_never_refused(void **state)
{
    harness_server s;
    raw_peer r;
    char view[4096];
    double start, next_move, next_ping;
    uint32_t moves = 0;
    uint64_t pings = 0;

    (void)state;
    harness_server_start(&s, NULL);
    raw_connect(&r, s.port);
    raw_hello(&r);

    /* Half of net.MaxMoveInputsPerSecond (60) and of net.RequestRatePerSecond (20) for 3 s;
     * a late send is not made up for, so the pace never exceeds the rate. */
    start = next_move = next_ping = harness_now();
    while (harness_now() - start < 3.0) {
        double now = harness_now();
        if (now >= next_move) {
            raw_queue_move(&r, ++moves);
            next_move = (next_move + 1.0 / 30 > now ? next_move : now) + 1.0 / 30;
        }
        if (now >= next_ping) {
            raw_queue_ping(&r, ++pings);
            next_ping = (next_ping + 1.0 / 10 > now ? next_ping : now) + 1.0 / 10;
        }
        enet_host_flush(r.host);
        raw_wait(&r, NULL, r.errors + 1, 0.005);
    }
    for (double deadline = harness_now() + 10.0; r.pongs < (int)pings &&
                                                 harness_now() < deadline;)
        raw_wait(&r, NULL, r.errors + 1, 0.1);

    assert_int_equal(r.errors, 0);
    assert_int_equal(r.pongs, (int)pings);
    assert_false(r.pongs_out_of_order);
    assert_false(r.disconnected);
    assert_true(harness_server_metric(&s, "reap_net_refused_inputs_total") == 0);
    assert_true(harness_server_metric(&s, "reap_net_rate_limited_total") == 0);
    assert_true(harness_server_metric(&s, "reap_net_bad_messages_total") == 0);
    assert_true(harness_server_metric(&s, "reap_net_dropped_messages_total{reason=\"rate\"}") ==
                0);
    assert_true(harness_server_metric(&s, "reap_net_dropped_messages_total{reason=\"budget\"}") ==
                0);
    assert_int_equal(harness_console(&s, "players", view, sizeof view), 200);
    assert_non_null(strstr(view, "dropped=0 refused=0"));
    assert_non_null(strstr(view, "in="));
    raw_close(&r);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void raw_send_hello(raw_peer *r, uint32_t version, const char *name, const char *world)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__Hello hello = REAP__HELLO__INIT;

    hello.protocol_version = version;
    hello.player_name = (char *)name;
    hello.world = (char *)world;
    env.body_case = REAP__ENVELOPE__BODY_HELLO;
    env.hello = &hello;
    raw_send(r, &env);
}

static void test_a_hello_the_server_cannot_accept_is_answered_and_the_connection_closed(
    void **state)
{
    static const struct {
        uint32_t version;
        const char *name, *world;
        Reap__ErrorCode code;
    } cases[] = {
        { MSG_PROTOCOL_VERSION + 1, "raw", "", REAP__ERROR_CODE__ERROR_CODE_VERSION },
        { MSG_PROTOCOL_VERSION, "bad\nname", "", REAP__ERROR_CODE__ERROR_CODE_BAD_REQUEST },
        { MSG_PROTOCOL_VERSION, "raw", "Nowhere", REAP__ERROR_CODE__ERROR_CODE_NO_SUCH_WORLD },
    };
    harness_server s;

    (void)state;
    harness_server_start(&s, NULL);

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        raw_peer r;
        raw_connect(&r, s.port);
        raw_send_hello(&r, cases[i].version, cases[i].name, cases[i].world);
        assert_true(raw_wait(&r, &r.disconnected, 0, 10.0));
        assert_int_equal(r.errors, 1);
        assert_int_equal(r.last_error, cases[i].code);
        assert_false(r.welcomed);
        raw_close(&r);
    }

    harness_wait_metric(&s, "reap_net_connections", HARNESS_EQ, 0, 10.0);
    assert_true(harness_server_metric(&s, "reap_net_bad_messages_total") == 3);
    assert_true(harness_server_metric(&s, "reap_net_timeouts_total") == 0);
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
        cmocka_unit_test(test_unfinished_fragmented_packets_cannot_pin_the_servers_memory),
        cmocka_unit_test(test_half_open_handshakes_do_not_lock_real_players_out),
        cmocka_unit_test(test_a_join_storm_never_resets_a_handshake_answered_a_moment_ago),
        cmocka_unit_test(test_a_ping_flood_is_refused_over_the_request_rate_and_counted),
        cmocka_unit_test(test_the_largest_spawn_request_allowed_is_acknowledged),
        cmocka_unit_test(test_a_spawn_limit_whose_answer_could_not_fit_is_refused_at_start),
        cmocka_unit_test(test_an_empty_destroy_request_gets_one_error_and_no_acknowledgement),
        cmocka_unit_test(test_a_clean_disconnect_without_goodbye_is_not_a_timeout),
        cmocka_unit_test(test_a_move_input_flood_is_dropped_unread_and_the_flooder_is_kicked),
        cmocka_unit_test(test_reliable_messages_past_the_frame_budget_wait_and_keep_their_order),
        cmocka_unit_test(test_a_client_within_the_allowed_rates_is_never_refused),
        cmocka_unit_test(
            test_a_hello_the_server_cannot_accept_is_answered_and_the_connection_closed),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
