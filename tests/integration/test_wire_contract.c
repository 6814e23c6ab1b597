/*
 * test_wire_contract.c - what the README's "Wire protocol" and "Limits" sections and
 * proto/reap.proto promise a client, held to the bytes a real server sends a hand-driven ENet
 * client (wire_peer.h): the Welcome's figures and limits are the server's, every name it calls
 * spawnable spawns and no other does, the update bands are the rates a mover is sent at, an
 * Error says whether the connection ends and the server does what it says, refused move inputs
 * are told once a second and never end a connection, replies echo their request's seq and
 * nothing else carries one, unknown fields are skipped and groups refused, and the README's
 * captured packets are what a server sends today.
 */
#include "wire_test.h"

/* A ping answered: everything the server sent before its Pong on channel 0 has arrived. */
static void round_trip(wire_peer *p, uint32_t seq)
{
    uint32_t pongs = p->pongs;

    assert_true(wire_peer_ping(p, seq, seq));
    if (!WIRE_PEER_UNTIL(p, p->pongs > pongs || p->disconnected, 10.0))
        fail_msg("no Pong to ping seq %u within 10 s", seq);
    assert_false(p->disconnected);
}

static bool has_name(char (*names)[WIRE_PEER_NAME_MAX], uint32_t n, const char *name)
{
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

/* ---- the Welcome ------------------------------------------------------------------------- */

static void test_the_welcome_states_the_servers_replication_figures_and_limits(void **state)
{
    const char *const server_args[] = {
        "--tick-hz", "20", "--cvar", "net.CullDistance=4000", "--cvar", "world.Extent=50000",
        "--cvar", "net.MaxClientRate=50000", "--cvar", "net.MaxPawnSpeed=700", "--cvar",
        "net.MaxMoveInputsPerSecond=40", "--cvar", "net.SpawnRatePerSecond=7", "--cvar",
        "net.SpawnBurst=9", "--cvar", "net.MaxSpawnPerRequest=6", "--cvar",
        "net.MaxActorsPerPlayer=30", "--cvar", "net.RequestRatePerSecond=11", "--cvar",
        "net.RequestBurst=13", "--cvar", "net.MaxMessageBytes=3000", "--cvar",
        "net.MaxBadMessages=8", "--cvar", "net.MaxMessagesPerFrame=1000", NULL
    };
    static const float band_divisor[] = { 8, 4, 2, 1 };
    static const uint32_t band_period[] = { 1, 2, 3, 6 };
    harness_server s;
    wire_peer p;

    (void)state;
    harness_server_start(&s, server_args);
    wire_test_join(&p, &s, "figures");

    /* The figures are the server's settings (README "Replication at scale": bands at an
     * eighth, a quarter and half the cull distance, every 1, 2, 3, 6 frames; own movers every
     * 3rd frame)... */
    assert_int_equal(p.welcome_seq, 1);
    assert_int_equal(p.welcome.tick_hz, 20);
    assert_true(p.welcome.position_step == 0.1f);
    assert_true(p.welcome.cull_distance == 4000.0f);
    assert_true(p.welcome.world_extent == 50000.0f);
    assert_int_equal(p.welcome.max_client_rate, 50000);
    assert_int_equal(p.welcome.own_update_period, 3);
    assert_int_equal(p.n_bands, 4);
    for (uint32_t k = 0; k < 4; k++) {
        assert_true(p.bands[k].max_distance == 4000.0f / band_divisor[k]);
        assert_int_equal(p.bands[k].period, band_period[k]);
    }
    assert_true(p.limits.max_pawn_speed == 700);
    assert_true(p.limits.max_move_inputs_per_second == 40);
    assert_true(p.limits.spawn_rate_per_second == 7);
    assert_true(p.limits.spawn_burst == 9);
    assert_int_equal(p.limits.max_spawn_per_request, 6);
    assert_int_equal(p.limits.max_actors_per_player, 30);
    assert_true(p.limits.request_rate_per_second == 11);
    assert_true(p.limits.request_burst == 13);
    assert_int_equal(p.limits.max_message_bytes, 3000);
    assert_int_equal(p.limits.max_bad_messages, 8);
    /* ...the default profile has no archetypes, and its two spawnable kinds by name. */
    assert_int_equal(p.n_archetypes, 0);
    assert_int_equal(p.n_spawnable, 2);
    assert_string_equal(p.spawnable[0], "Prop");
    assert_string_equal(p.spawnable[1], "Projectile");

    /* And the server keeps to them: max_spawn_per_request spawns, one more is refused... */
    assert_true(wire_peer_spawn(&p, 2, REAP__ACTOR_CLASS__ACTOR_CLASS_PROP, NULL,
                                p.limits.max_spawn_per_request));
    assert_true(WIRE_PEER_UNTIL(&p, p.spawn_acks == 1 || p.errors > 0, 10.0));
    assert_int_equal(p.errors, 0);
    assert_int_equal(p.last_ack_count, p.limits.max_spawn_per_request);
    assert_true(wire_peer_spawn(&p, 3, REAP__ACTOR_CLASS__ACTOR_CLASS_PROP, NULL,
                                p.limits.max_spawn_per_request + 1));
    assert_true(WIRE_PEER_UNTIL(&p, p.errors == 1, 10.0));
    assert_int_equal(p.last_error.code, REAP__ERROR_CODE__ERROR_CODE_BAD_REQUEST);
    assert_int_equal(p.last_error.request_seq, 3);
    assert_non_null(strstr(p.last_error.text, "net.MaxSpawnPerRequest"));
    /* ...a move at max_pawn_speed is taken, one a little faster refused... */
    assert_true(wire_peer_move(&p, 4, (float)p.limits.max_pawn_speed, 0));
    round_trip(&p, 5);
    assert_int_equal(p.errors, 1);
    assert_true(harness_server_metric(&s, "reap_net_refused_inputs_total") == 0);
    assert_true(wire_peer_move(&p, 6, 0, (float)p.limits.max_pawn_speed * 1.01f));
    assert_true(WIRE_PEER_UNTIL(&p, p.errors == 2, 10.0));
    assert_int_equal(p.last_error.code, REAP__ERROR_CODE__ERROR_CODE_BAD_REQUEST);
    assert_non_null(strstr(p.last_error.text, "net.MaxPawnSpeed"));
    /* ...and of request_burst + 1 pings at once, at most request_burst are answered (the
     * bucket refills at request_rate_per_second, so the one above may be back) and the rest
     * refused for the rate. */
    {
        uint32_t burst = (uint32_t)p.limits.request_burst, pongs = p.pongs, errors = p.errors;

        for (uint32_t i = 0; i <= burst; i++) {
            Reap__Envelope env = REAP__ENVELOPE__INIT;
            Reap__Ping ping = REAP__PING__INIT;
            uint8_t buf[64];
            size_t len;

            ping.nonce = 100 + i;
            env.seq = 100 + i;
            env.body_case = REAP__ENVELOPE__BODY_PING;
            env.ping = &ping;
            assert_int_equal(msg_encode(&env, buf, sizeof buf, &len), MSG_OK);
            assert_int_equal(enet_peer_send(p.peer, MSG_CHANNEL_CONTROL,
                                            enet_packet_create(buf, len,
                                                               ENET_PACKET_FLAG_RELIABLE)), 0);
        }
        enet_host_flush(p.host);
        assert_true(WIRE_PEER_UNTIL(&p, p.pongs - pongs + p.errors - errors == burst + 1, 10.0));
        assert_in_range(p.pongs - pongs, burst - 1, burst);
        assert_int_equal(p.last_error.code, REAP__ERROR_CODE__ERROR_CODE_RATE);
        assert_false(p.last_error.disconnect);
        assert_non_null(strstr(p.last_error.text, "net.RequestRatePerSecond=11"));
    }
    wire_peer_close(&p);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_every_name_the_welcome_calls_spawnable_spawns_and_no_other_archetype_does(
    void **state)
{
    const char *const server_args[] = { "--world-profile", "deploy/profiles/shooter.ini",
                                        "--cvar", "net.MaxBadMessages=100", NULL };
    harness_server s;
    wire_peer p;
    uint32_t seq = 1, refused = 0;

    (void)state;
    harness_server_start(&s, server_args);
    wire_test_join(&p, &s, "spawner");

    /* Given a profile with a component archetype (Attachment)... */
    assert_true(p.n_archetypes > 0);
    assert_true(has_name(p.archetypes, p.n_archetypes, "Attachment"));
    assert_true(has_name(p.spawnable, p.n_spawnable, "Prop"));
    assert_true(has_name(p.spawnable, p.n_spawnable, "Projectile"));
    assert_false(has_name(p.spawnable, p.n_spawnable, "Attachment"));
    /* ...each spawnable name spawns... */
    for (uint32_t i = 0; i < p.n_spawnable; i++) {
        uint32_t acks = p.spawn_acks;

        assert_true(wire_peer_spawn(&p, ++seq, REAP__ACTOR_CLASS__ACTOR_CLASS_UNSPECIFIED,
                                    p.spawnable[i], 1));
        if (!WIRE_PEER_UNTIL(&p, p.spawn_acks > acks || p.errors > 0, 10.0) || p.errors > 0)
            fail_msg("the Welcome calls '%s' spawnable, but spawning it got: %s", p.spawnable[i],
                     p.last_error.text);
        assert_int_equal(p.last_ack_seq, seq);
        assert_int_equal(p.last_ack_count, 1);
    }
    /* ...and every archetype it does not list is refused. */
    for (uint32_t i = 0; i < p.n_archetypes; i++) {
        uint32_t acks = p.spawn_acks, errors = p.errors;

        if (has_name(p.spawnable, p.n_spawnable, p.archetypes[i]))
            continue;
        assert_true(wire_peer_spawn(&p, ++seq, REAP__ACTOR_CLASS__ACTOR_CLASS_UNSPECIFIED,
                                    p.archetypes[i], 1));
        assert_true(WIRE_PEER_UNTIL(&p, p.spawn_acks > acks || p.errors > errors, 10.0));
        if (p.spawn_acks > acks)
            fail_msg("'%s' is not spawnable by the Welcome, yet it spawned", p.archetypes[i]);
        assert_int_equal(p.last_error.code, REAP__ERROR_CODE__ERROR_CODE_BAD_REQUEST);
        assert_int_equal(p.last_error.request_seq, seq);
        refused++;
    }
    assert_true(refused >= 1);
    wire_peer_close(&p);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

/* ---- errors and disconnects -------------------------------------------------------------- */

static void test_an_error_says_whether_the_connection_ends_and_the_server_does_so(void **state)
{
    const char *const server_args[] = { "--cvar", "net.MaxBadMessages=3", "--max-players", "2",
                                        NULL };
    static const uint8_t junk[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
    harness_server s;
    wire_peer a, b, c, full;

    (void)state;
    harness_server_start(&s, server_args);

    /* A refused request: disconnect is false, and the connection goes on. */
    wire_test_join(&a, &s, "refused");
    assert_true(wire_peer_spawn(&a, 2, REAP__ACTOR_CLASS__ACTOR_CLASS_PROP, NULL, 0));
    assert_true(WIRE_PEER_UNTIL(&a, a.errors == 1, 10.0));
    assert_false(a.last_error.disconnect);
    assert_int_equal(a.last_error.channel, MSG_CHANNEL_CONTROL);
    round_trip(&a, 3);

    /* The net.MaxBadMessages-th bad message: its own Error (disconnect false), then KICKED
     * (disconnect true), then ENet's disconnect. */
    wire_test_connect(&b, &s);
    for (int i = 0; i < 3; i++)
        assert_true(wire_peer_send_bytes(&b, MSG_CHANNEL_CONTROL, junk, sizeof junk));
    assert_true(WIRE_PEER_UNTIL(&b, b.disconnected, 10.0));
    assert_int_equal(b.errors, 4);
    assert_int_equal(b.first_error.code, REAP__ERROR_CODE__ERROR_CODE_DECODE);
    assert_false(b.first_error.disconnect);
    assert_int_equal(b.first_error.request_seq, 0);
    assert_int_equal(b.last_error.code, REAP__ERROR_CODE__ERROR_CODE_KICKED);
    assert_true(b.last_error.disconnect);

    /* Bad messages, then a Hello the server cannot accept: one Error for the Hello, which ends
     * the connection; not a second one for the kick. */
    wire_test_connect(&c, &s);
    for (int i = 0; i < 2; i++)
        assert_true(wire_peer_send_bytes(&c, MSG_CHANNEL_CONTROL, junk, sizeof junk));
    assert_true(WIRE_PEER_UNTIL(&c, c.errors == 2, 10.0));
    assert_true(wire_peer_hello(&c, 7, MSG_PROTOCOL_VERSION + 1, "late", ""));
    assert_true(WIRE_PEER_UNTIL(&c, c.disconnected, 10.0));
    assert_int_equal(c.errors, 3);
    assert_int_equal(c.last_error.code, REAP__ERROR_CODE__ERROR_CODE_VERSION);
    assert_int_equal(c.last_error.request_seq, 7);
    assert_true(c.last_error.disconnect);

    /* Refused hellos of each kind end the connection, each with one Error that says so. */
    {
        static const struct {
            uint32_t version;
            const char *name, *world;
            Reap__ErrorCode code;
        } cases[] = {
            { MSG_PROTOCOL_VERSION - 1, "old", "", REAP__ERROR_CODE__ERROR_CODE_VERSION },
            { MSG_PROTOCOL_VERSION, "bad\x01name", "", REAP__ERROR_CODE__ERROR_CODE_BAD_REQUEST },
            { MSG_PROTOCOL_VERSION, "lost", "Nowhere", REAP__ERROR_CODE__ERROR_CODE_NO_SUCH_WORLD },
        };
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            wire_peer h;
            wire_test_connect(&h, &s);
            assert_true(wire_peer_hello(&h, 9, cases[i].version, cases[i].name, cases[i].world));
            assert_true(WIRE_PEER_UNTIL(&h, h.disconnected, 10.0));
            assert_int_equal(h.errors, 1);
            assert_int_equal(h.last_error.code, cases[i].code);
            assert_true(h.last_error.disconnect);
            assert_false(h.welcomed);
            wire_peer_close(&h);
        }
    }

    /* A full server (two players: a, and d below) refuses the next connection at once. */
    {
        wire_peer d;
        harness_wait_metric(&s, "reap_net_connections", HARNESS_EQ, 1, 10.0);
        wire_test_join(&d, &s, "second");
        wire_test_connect(&full, &s);
        assert_true(WIRE_PEER_UNTIL(&full, full.disconnected, 10.0));
        assert_int_equal(full.errors, 1);
        assert_int_equal(full.last_error.code, REAP__ERROR_CODE__ERROR_CODE_SERVER_FULL);
        assert_true(full.last_error.disconnect);
        assert_int_equal(full.last_error.seq, 0);
        wire_peer_close(&d);
    }
    /* Through all of it the first connection stayed. */
    round_trip(&a, 4);
    assert_int_equal(a.errors, 1);
    wire_peer_close(&full);
    wire_peer_close(&c);
    wire_peer_close(&b);
    wire_peer_close(&a);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_no_hello_in_time_is_a_kick_that_says_it_disconnects(void **state)
{
    const char *const server_args[] = { "--cvar", "net.HelloTimeout=0.5", NULL };
    harness_server s;
    wire_peer p;

    (void)state;
    harness_server_start(&s, server_args);
    wire_test_connect(&p, &s);

    assert_true(WIRE_PEER_UNTIL(&p, p.disconnected, 10.0));

    assert_int_equal(p.errors, 1);
    assert_int_equal(p.last_error.code, REAP__ERROR_CODE__ERROR_CODE_KICKED);
    assert_true(p.last_error.disconnect);
    assert_int_equal(p.last_error.seq, 0);
    wire_peer_close(&p);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

/* ---- move inputs --------------------------------------------------------------------------- */

static void test_refused_move_inputs_are_told_once_a_second_and_never_end_the_connection(
    void **state)
{
    /* Were refused inputs bad messages, the second would end the connection. */
    const char *const server_args[] = { "--cvar", "net.MaxBadMessages=2", NULL };
    harness_server s;
    wire_peer p;
    double first_at;

    (void)state;
    harness_server_start(&s, server_args);
    wire_test_join(&p, &s, "mover");

    /* Given six refused inputs within a fraction of a second: three not finite, three too
     * fast... */
    assert_true(wire_peer_move(&p, 10, NAN, 0));
    first_at = wire_peer_now();
    assert_true(wire_peer_move(&p, 11, 0, INFINITY));
    assert_true(wire_peer_move(&p, 12, NAN, NAN));
    for (uint32_t i = 0; i < 3; i++)
        assert_true(wire_peer_move(&p, 13 + i, 1e6f, 0));
    harness_wait_metric(&s, "reap_net_refused_inputs_total", HARNESS_EQ, 6, 10.0);
    round_trip(&p, 20);

    /* ...the sender is told once, on channel 0, about the first, and stays... */
    if (wire_peer_now() - first_at < 1.0) {
        assert_int_equal(p.errors, 1);
        assert_int_equal(p.last_error.code, REAP__ERROR_CODE__ERROR_CODE_BAD_REQUEST);
        assert_int_equal(p.last_error.channel, MSG_CHANNEL_CONTROL);
        assert_int_equal(p.last_error.request_seq, 10);
        assert_int_equal(p.last_error.seq, 10);
        assert_false(p.last_error.disconnect);
        assert_non_null(strstr(p.last_error.text, "finite"));
    }
    assert_false(p.disconnected);
    assert_true(harness_server_metric(&s, "reap_net_bad_messages_total") == 0);

    /* ...and a second later it is told again. */
    wire_peer *const peers[] = { &p };
    wire_peers_run(peers, 1, 1.1 - (wire_peer_now() - first_at));
    uint32_t before = p.errors;
    assert_true(wire_peer_move(&p, 30, 1e6f, 0));
    assert_true(WIRE_PEER_UNTIL(&p, p.errors > before, 10.0));
    assert_int_equal(p.last_error.request_seq, 30);
    assert_non_null(strstr(p.last_error.text, "net.MaxPawnSpeed"));
    round_trip(&p, 31);
    assert_false(p.disconnected);
    wire_peer_close(&p);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

/* ---- sequence numbers ------------------------------------------------------------------- */

static void test_replies_carry_their_requests_seq_and_nothing_else_carries_one(void **state)
{
    harness_server s;
    wire_peer p;
    uint64_t mine;

    (void)state;
    harness_server_start(&s, NULL);
    wire_test_connect(&p, &s);
    assert_true(wire_peer_hello(&p, 77, MSG_PROTOCOL_VERSION, "seq", ""));
    assert_true(WIRE_PEER_UNTIL(&p, p.welcomed && p.snapshot_complete, 10.0));
    assert_int_equal(p.welcome_seq, 77);

    assert_true(wire_peer_spawn(&p, 78, REAP__ACTOR_CLASS__ACTOR_CLASS_PROP, NULL, 1));
    assert_true(WIRE_PEER_UNTIL(&p, p.spawn_acks == 1, 10.0));
    assert_int_equal(p.last_ack_seq, 78);
    mine = p.ack_ids[0];
    assert_true(WIRE_PEER_UNTIL(&p, wire_peer_find(&p, mine) != NULL, 10.0));
    assert_true(wire_peer_request(&p, 79, REAP__ENVELOPE__BODY_STATS_REQUEST));
    assert_true(wire_peer_request(&p, 80, REAP__ENVELOPE__BODY_REPLICATION_CHECK_REQUEST));
    assert_true(wire_peer_destroy(&p, 81, &mine, 1));
    assert_true(WIRE_PEER_UNTIL(&p, p.stats_replies == 1 && p.checks == 1 &&
                                        p.destroy_acks == 1 && wire_peer_find(&p, mine) == NULL,
                                10.0));
    assert_int_equal(p.last_stats_seq, 79);
    assert_int_equal(p.last_check_seq, 80);
    assert_int_equal(p.last_check_channel, MSG_CHANNEL_REPLICATION);
    assert_int_equal(p.last_destroy_ack_seq, 81);
    assert_true(wire_peer_destroy(&p, 82, &mine, 1)); /* not ours any more */
    assert_true(WIRE_PEER_UNTIL(&p, p.errors == 1, 10.0));
    assert_int_equal(p.last_error.seq, 82);
    assert_int_equal(p.last_error.request_seq, 82);
    round_trip(&p, 83);
    assert_int_equal(p.last_pong_seq, 83);

    /* Spawns, updates, destroys and SnapshotComplete came unasked, every one with seq 0. */
    assert_true(p.spawn_messages >= 2 && p.destroy_messages >= 1 && p.update_messages >= 1);
    assert_int_equal(p.unsolicited_with_seq, 0);
    wire_peer_close(&p);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

/* ---- decoding ----------------------------------------------------------------------------- */

static void test_unknown_fields_are_skipped_and_a_group_is_refused(void **state)
{
    /* Envelope{seq 5, ping{nonce 9, and fields 100-103 of wire types 0, 1, 2, 5}, field 200}. */
    static const uint8_t unknown[] = {
        0x08, 0x05,                                     /* seq = 5 */
        0xaa, 0x01, 0x1a,                               /* ping, 26 bytes */
        0x08, 0x09,                                     /* nonce = 9 */
        0xa0, 0x06, 0x07,                               /* field 100, varint 7 */
        0xa9, 0x06, 1, 2, 3, 4, 5, 6, 7, 8,             /* field 101, 64-bit */
        0xb2, 0x06, 0x02, 'h', 'i',                     /* field 102, 2 bytes */
        0xbd, 0x06, 1, 2, 3, 4,                         /* field 103, 32-bit */
        0xc0, 0x0c, 0x01,                               /* field 200, varint 1 */
    };
    /* The same ping with a group (field 104, wire types 3 and 4) inside. */
    static const uint8_t group[] = {
        0x08, 0x06, 0xaa, 0x01, 0x06, 0x08, 0x09, 0xc3, 0x06, 0xc4, 0x06,
    };
    harness_server s;
    wire_peer p;

    (void)state;
    harness_server_start(&s, NULL);
    wire_test_join(&p, &s, "decoder");

    assert_true(wire_peer_send_bytes(&p, MSG_CHANNEL_CONTROL, unknown, sizeof unknown));
    assert_true(WIRE_PEER_UNTIL(&p, p.pongs == 1 || p.errors > 0, 10.0));
    assert_int_equal(p.errors, 0);
    assert_int_equal(p.last_pong_seq, 5);
    assert_true(p.last_pong_nonce == 9);

    assert_true(wire_peer_send_bytes(&p, MSG_CHANNEL_CONTROL, group, sizeof group));
    assert_true(WIRE_PEER_UNTIL(&p, p.errors == 1, 10.0));
    assert_int_equal(p.last_error.code, REAP__ERROR_CODE__ERROR_CODE_DECODE);
    assert_int_equal(p.pongs, 1);
    wire_peer_close(&p);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

/* ---- update rates ------------------------------------------------------------------------ */

/* Frames between consecutive updates of the watched actor from record `from` on: how many of
 * them equal period, and whether any is not a multiple of it (a lost datagram doubles one). */
static void update_gaps(const wire_peer *p, uint32_t from, uint32_t period, uint32_t *out_exact,
                        uint32_t *out_gaps, uint64_t *out_odd)
{
    *out_exact = *out_gaps = 0;
    *out_odd = 0;
    for (uint32_t i = from + 1; i < p->n_watch; i++) {
        uint64_t gap = p->watch_frames[i] - p->watch_frames[i - 1];
        (*out_gaps)++;
        if (gap == period)
            (*out_exact)++;
        else if (gap == 0 || gap % period != 0)
            *out_odd = gap;
    }
}

/* Band of distance d by the Welcome's update_bands (reap.proto, UpdateBand). */
static int band_of(const wire_peer *p, double d)
{
    for (uint32_t k = 0; k < p->n_bands; k++)
        if (d < p->bands[k].max_distance || k + 1 == p->n_bands)
            return (int)k;
    return -1;
}

/* Keeps m's pawn moving back and forth along x (60 units/s, a quarter second each way), so
 * that its quantized position changes every frame while it stays in place. */
static void sway(wire_peer *m, uint32_t *seq, double *next, bool *right)
{
    if (wire_peer_now() < *next)
        return;
    assert_true(wire_peer_move(m, ++*seq, *right ? 60.0f : -60.0f, 0));
    *right = !*right;
    *next = wire_peer_now() + 0.25;
}

static void test_other_movers_are_updated_at_their_distance_bands_period(void **state)
{
    const char *const server_args[] = { "--cvar", "net.CullDistance=800", "--cvar",
                                        "world.Extent=1600", NULL };
    harness_server s;
    wire_peer m, o;
    wire_peer *const both[] = { &m, &o };
    uint32_t mseq = 1, oseq = 1, measured = 0;
    double next = 0, pm[2] = { 0, 0 }, u[2], len;
    bool right = true;

    (void)state;
    harness_server_start(&s, server_args);
    wire_test_join(&m, &s, "mover");
    wire_test_join(&o, &s, "observer");
    assert_true(wire_peer_position(&m, m.welcome.pawn_net_id, pm));
    /* The observer is taken to each band's middle, on the line from the mover towards the
     * world's centre (so the point is inside the world). */
    len = sqrt(pm[0] * pm[0] + pm[1] * pm[1]);
    u[0] = len > 1 ? -pm[0] / len : 1;
    u[1] = len > 1 ? -pm[1] / len : 0;
    m.watch_id = m.welcome.pawn_net_id;
    o.watch_id = m.welcome.pawn_net_id;

    for (uint32_t k = 0; k < o.n_bands; k++) {
        double lo = k == 0 ? 0 : o.bands[k - 1].max_distance, hi = o.bands[k].max_distance;
        double d = (lo + hi) / 2, target[2] = { pm[0] + u[0] * d, pm[1] + u[1] * d };
        double deadline = wire_peer_now() + 20.0, po[2] = { 0, 0 }, pmnow[2] = { 0, 0 }, dist;
        uint32_t from = 0, exact, gaps;
        uint64_t odd;

        /* Steer the observer there (its own updates say where it is), then stop it. */
        for (;;) {
            double dx, dy, r, speed;
            sway(&m, &mseq, &next, &right);
            wire_peers_run(both, 2, 0.05);
            assert_true(wire_peer_position(&o, o.welcome.pawn_net_id, po));
            dx = target[0] - po[0];
            dy = target[1] - po[1];
            r = sqrt(dx * dx + dy * dy);
            if (r < 5.0 || wire_peer_now() > deadline)
                break;
            speed = r * 3 < 1000 ? r * 3 : 1000;
            assert_true(wire_peer_move(&o, ++oseq, (float)(dx / r * speed),
                                       (float)(dy / r * speed)));
        }
        assert_true(wire_peer_move(&o, ++oseq, 0, 0));
        /* A relevancy pass (at least once a second: every tick_hz frames or sooner) decides the
         * band again; then 60 frames are watched. Frames, not seconds: a loaded machine may run
         * the server late, and the rates are in frames. */
        for (int phase = 0; phase < 2; phase++) {
            uint64_t until = o.last_update_frame + (phase == 0 ? 3 * o.welcome.tick_hz / 2 : 60);
            double give_up = wire_peer_now() + 20.0;

            from = o.n_watch;
            while (o.last_update_frame < until && wire_peer_now() < give_up) {
                sway(&m, &mseq, &next, &right);
                wire_peers_run(both, 2, 0.02);
            }
            assert_true(o.last_update_frame >= until);
        }
        assert_true(wire_peer_position(&o, o.welcome.pawn_net_id, po));
        assert_true(wire_peer_position(&o, m.welcome.pawn_net_id, pmnow));
        dist = hypot(po[0] - pmnow[0], po[1] - pmnow[1]);
        if (band_of(&o, dist) != (int)k)
            fail_msg("band %u: the observer ended %.1f units from the mover, outside [%g, %g)",
                     k, dist, lo, hi);

        /* Every update the observer got of the mover came `period` frames after the last. */
        update_gaps(&o, from, o.bands[k].period, &exact, &gaps, &odd);
        print_message("band %u (%.0f units): %u of %u gaps of %u frames\n", k, dist, exact, gaps,
                      o.bands[k].period);
        assert_true(gaps >= 60 / o.bands[k].period / 2);
        if (odd != 0)
            fail_msg("band %u: an update came %llu frames after the last, not a multiple of %u",
                     k, (unsigned long long)odd, o.bands[k].period);
        assert_true(exact * 10 >= gaps * 8);
        measured++;
    }
    assert_int_equal(measured, 4);

    /* The mover's own client got its pawn every own_update_period frames throughout. */
    {
        uint32_t exact, gaps;
        uint64_t odd;
        update_gaps(&m, m.n_watch / 2, m.welcome.own_update_period, &exact, &gaps, &odd);
        assert_true(gaps >= 20);
        assert_int_equal(odd, 0);
        assert_true(exact * 10 >= gaps * 8);
    }
    wire_peer_close(&o);
    wire_peer_close(&m);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_a_pawn_circles_until_its_first_input_then_keeps_the_velocity_asked(
    void **state)
{
    harness_server s;
    wire_peer p;
    wire_peer *const one[] = { &p };
    double start[2] = { 0, 0 }, at[2] = { 0, 0 }, far = 0, t0;

    (void)state;
    harness_server_start(&s, NULL);
    wire_test_join(&p, &s, "idle");
    p.watch_id = p.welcome.pawn_net_id;

    /* Without input: a circle of radius 6 (3 units/s, half a radian a second)... */
    assert_true(wire_peer_position(&p, p.welcome.pawn_net_id, start));
    wire_peers_run(one, 1, 3.0);
    assert_true(p.n_watch >= 20);
    for (uint32_t i = 0; i < p.n_watch; i++) {
        double d = hypot(p.watch_q[i][0] * 0.1 - start[0], p.watch_q[i][1] * 0.1 - start[1]);
        far = d > far ? d : far;
    }
    assert_true(far > 5.0 && far <= 12.0 + 0.1);

    /* ...with one, straight on at that velocity. */
    assert_true(wire_peer_move(&p, 2, 0, -90.0f));
    wire_peers_run(one, 1, 0.5);
    assert_true(wire_peer_position(&p, p.welcome.pawn_net_id, start));
    t0 = wire_peer_now();
    wire_peers_run(one, 1, 2.0);
    assert_true(wire_peer_position(&p, p.welcome.pawn_net_id, at));
    assert_true(fabs(at[0] - start[0]) < 0.1 + 1e-9);
    /* 90 units a second over the time the updates span (within a few frames). */
    assert_in_range((long)(start[1] - at[1]), (long)(90 * (wire_peer_now() - t0) - 30),
                    (long)(90 * (wire_peer_now() - t0) + 30));
    wire_peer_close(&p);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

/* ---- the README's worked examples ------------------------------------------------------- */

static void test_the_readme_wire_examples_are_what_a_real_server_sends(void **state)
{
    harness_proc p;
    const char *args[] = { "tests/docs/wire_examples.py", harness_build_dir(), "--check", NULL };

    (void)state;
    harness_proc_start_cmd(&p, "/usr/bin/python3", args, NULL);
    if (!harness_proc_wait(&p, 90.0)) {
        harness_proc_kill(&p);
        fail_msg("wire_examples.py did not finish within 90 s:\n%s", p.out);
    }
    if (p.status != 0)
        fail_msg("%s", p.out);
    assert_non_null(strstr(p.out, "wire examples match"));
    harness_proc_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_welcome_states_the_servers_replication_figures_and_limits),
        cmocka_unit_test(
            test_every_name_the_welcome_calls_spawnable_spawns_and_no_other_archetype_does),
        cmocka_unit_test(test_an_error_says_whether_the_connection_ends_and_the_server_does_so),
        cmocka_unit_test(test_no_hello_in_time_is_a_kick_that_says_it_disconnects),
        cmocka_unit_test(
            test_refused_move_inputs_are_told_once_a_second_and_never_end_the_connection),
        cmocka_unit_test(test_replies_carry_their_requests_seq_and_nothing_else_carries_one),
        cmocka_unit_test(test_unknown_fields_are_skipped_and_a_group_is_refused),
        cmocka_unit_test(test_other_movers_are_updated_at_their_distance_bands_period),
        cmocka_unit_test(test_a_pawn_circles_until_its_first_input_then_keeps_the_velocity_asked),
        cmocka_unit_test(test_the_readme_wire_examples_are_what_a_real_server_sends),
    };
    return cmocka_run_group_tests(tests, wire_test_group_setup, wire_test_group_teardown);
}
