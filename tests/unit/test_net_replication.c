/*
 * test_net_replication.c - relevancy, channels, priority and the rate budget, end to end over
 * a real ENet pair on loopback inside this process: the server side is the net driver's own
 * replication (net_repl_connection) for one connection; the client side decodes what arrives
 * into a mirror keyed by net id.
 *
 * Each frame of a test is: the world's outbox, one replication of the connection, a flush,
 * and servicing both hosts until the client has read everything sent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine.h"
#include "net_internal.h"
#include "reap_gc.h"
#include "reap_msg.h"
#include "reap_wire.h"
#include "world_fixture.h"

enum { MIRROR_MAX = 16384 };

typedef struct mirror {
    uint64_t ids[MIRROR_MAX];      /* open addressing, 0 = empty; never shrinks (tombstone ~id) */
    uint32_t count;
    uint32_t spawns_of[8];         /* spawns received per watched id */
    uint32_t destroys_of[8];
    uint64_t watch[8];
    uint64_t slot_ids[MIRROR_MAX]; /* mover slot -> net id of the mover the client holds there */
    uint32_t updates_of[8];
    uint32_t order[MIRROR_MAX];    /* kinds in arrival order */
    uint32_t arrived;
    bool snapshot_complete;
    uint32_t snapshot_complete_at; /* mirror count when SnapshotComplete arrived */
    bool check_arrived;
    Reap__ReplicationCheck check;
    uint64_t check_mirror_digest;  /* the mirror's digest when the check arrived */
    uint32_t check_mirror_count;
} mirror;

typedef struct fixture {
    gc_heap *heap;
    engine e;
    net_driver *nd;
    ENetHost *client;
    ENetPeer *to_server;
    net_connection *conn;
    world *w;
    player_controller *me;     /* the connection's player */
    player_controller *other;  /* a player with no connection, to own things nearby */
    mirror m;
    msg_arena arena;
    void *arena_buf;
    const char *capture_dir;   /* when set, every replication packet received is saved there */
    uint32_t captured;
} fixture;

static uint32_t mirror_slot(const mirror *m, uint64_t id)
{
    uint32_t i = (uint32_t)(net_view_id_hash(id) % MIRROR_MAX);

    while (m->ids[i] != 0 && m->ids[i] != id)
        i = (i + 1) % MIRROR_MAX;
    return i;
}

static bool mirror_has(const mirror *m, uint64_t id)
{
    uint32_t i = (uint32_t)(net_view_id_hash(id) % MIRROR_MAX);

    while (m->ids[i] != 0) {
        if (m->ids[i] == id)
            return true;
        i = (i + 1) % MIRROR_MAX;
    }
    return false;
}

static uint64_t mirror_digest(const mirror *m)
{
    uint64_t d = 0;

    for (uint32_t i = 0; i < MIRROR_MAX; i++)
        if (m->ids[i] != 0 && (m->ids[i] >> 63) == 0)
            d ^= net_view_id_hash(m->ids[i]);
    return d;
}

static void mirror_watch_count(mirror *m, uint64_t id, bool spawn)
{
    for (int i = 0; i < 8; i++)
        if (m->watch[i] == id)
            (spawn ? m->spawns_of : m->destroys_of)[i]++;
}

static void mirror_apply(mirror *m, const Reap__Envelope *env)
{
    switch (env->body_case) {
    case REAP__ENVELOPE__BODY_ACTOR_SPAWN: {
        wire_reader r;
        wire_actor a;

        wire_reader_init(&r, env->actor_spawn->records.data, env->actor_spawn->records.len,
                         env->actor_spawn->count);
        while (wire_next_spawn(&r, &a)) {
            uint32_t s = mirror_slot(m, a.net_id);
            assert_true(m->ids[s] != a.net_id); /* never spawned twice while held */
            m->ids[s] = a.net_id;
            m->count++;
            if (a.mover_slot != 0) {
                assert_true(a.mover_slot < MIRROR_MAX);
                assert_true(m->slot_ids[a.mover_slot] == 0); /* a held slot is never reused */
                m->slot_ids[a.mover_slot] = a.net_id;
            }
            if (m->arrived < MIRROR_MAX)
                m->order[m->arrived++] = a.actor_class;
            mirror_watch_count(m, a.net_id, true);
        }
        assert_true(wire_reader_ok(&r));
        break;
    }
    case REAP__ENVELOPE__BODY_ACTOR_UPDATE: {
        wire_reader r;
        wire_actor a;

        wire_reader_init(&r, env->actor_update->records.data, env->actor_update->records.len,
                         env->actor_update->count);
        while (wire_next_update(&r, &a)) {
            /* Updates go only to movers the client holds. */
            assert_true(a.mover_slot < MIRROR_MAX && m->slot_ids[a.mover_slot] != 0);
            for (int i = 0; i < 8; i++)
                if (m->watch[i] != 0 && m->watch[i] == m->slot_ids[a.mover_slot])
                    m->updates_of[i]++;
        }
        assert_true(wire_reader_ok(&r));
        break;
    }
    case REAP__ENVELOPE__BODY_ACTOR_DESTROY:
        for (size_t i = 0; i < env->actor_destroy->n_net_ids; i++) {
            uint64_t id = env->actor_destroy->net_ids[i];
            uint32_t s = mirror_slot(m, id);
            assert_true(m->ids[s] == id); /* never destroyed unless held */
            m->ids[s] = id | (1ull << 63); /* a tombstone keeps the probe chain intact */
            m->count--;
            for (uint32_t k = 1; k < MIRROR_MAX; k++)
                if (m->slot_ids[k] == id)
                    m->slot_ids[k] = 0;
            mirror_watch_count(m, id, false);
        }
        break;
    case REAP__ENVELOPE__BODY_SNAPSHOT_COMPLETE:
        m->snapshot_complete = true;
        m->snapshot_complete_at = m->count;
        break;
    case REAP__ENVELOPE__BODY_REPLICATION_CHECK:
        m->check_arrived = true;
        m->check = *env->replication_check;
        m->check_mirror_digest = mirror_digest(m);
        m->check_mirror_count = m->count;
        break;
    default:
        break;
    }
}

/* A destroyed id leaves a tombstone; a later spawn of the same id (re-entering relevancy)
 * must find it as absent. */
static bool mirror_holds(const mirror *m, uint64_t id)
{
    return mirror_has(m, id);
}

static void capture(fixture *fx, const uint8_t *data, size_t len)
{
    char path[256];
    FILE *f;

    snprintf(path, sizeof path, "%s/%06u.bin", fx->capture_dir, fx->captured++);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static void pump(fixture *fx)
{
    ENetEvent ev;

    for (int round = 0; round < 50; round++) {
        bool any = false;
        while (enet_host_service(fx->nd->host, &ev, 0) > 0) {
            any = true;
            if (ev.type == ENET_EVENT_TYPE_RECEIVE)
                enet_packet_destroy(ev.packet);
        }
        while (enet_host_service(fx->client, &ev, 1) > 0) {
            any = true;
            if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
                Reap__Envelope *env;
                msg_arena_reset(&fx->arena);
                assert_int_equal(msg_decode(&fx->arena, ev.packet->data, ev.packet->dataLength,
                                            0, &env), MSG_OK);
                mirror_apply(&fx->m, env);
                if (fx->capture_dir != NULL && ev.channelID != MSG_CHANNEL_CONTROL)
                    capture(fx, ev.packet->data, ev.packet->dataLength);
                enet_packet_destroy(ev.packet);
            }
        }
        if (!any && round > 2)
            break;
    }
}

/* One frame of the connection: first passes of others already took full_pass_ns of the
 * frame's net.FullPassBudgetMs (0: none), and the frame's budget made it wait (deferred) or
 * not. */
static void frame_with(fixture *fx, uint64_t full_pass_ns, bool deferred)
{
    fx->e.frame++;
    net_repl_begin_world(fx->nd, fx->w);
    fx->nd->full_pass_ns = full_pass_ns;
    net_repl_connection(fx->nd, fx->conn, 1.0 / 30.0, deferred);
    world_outbox_reset(fx->w);
    enet_host_flush(fx->nd->host);
    pump(fx);
}

static void frame(fixture *fx)
{
    frame_with(fx, 0, false);
}

static void frames(fixture *fx, int n)
{
    for (int i = 0; i < n; i++)
        frame(fx);
}

static void place(fixture *fx, actor *a, float x, float y)
{
    a->pos[0] = x;
    a->pos[1] = y;
    world_actor_moved(fx->w, a);
}

/* Moves a by (dx, dy), as the world does when it moves an actor that replicates moves. */
static void walk(fixture *fx, actor *a, float dx, float dy)
{
    a->pos[0] += dx;
    a->pos[1] += dy;
    a->move_serial++;
    world_grid_move(&fx->w->grid, a);
}

static int setup(void **state)
{
    static fixture fx;
    ENetAddress addr = { .host = ENET_HOST_ANY, .port = 0 };
    ENetEvent ev;

    memset(&fx, 0, sizeof fx);
    assert_int_equal(enet_initialize(), 0);
    world_fixture_open(&fx.heap, &fx.e.env, &fx.w);
    fx.e.heap = fx.heap;
    fx.e.opts.tick_hz = 30;
    fx.e.start_ns = uv_hrtime();
    cvar_registry_init(&fx.e.cvars);
    fx.e.worlds = &fx.w;
    fx.e.world_count = 1;

    fx.nd = calloc(1, sizeof *fx.nd);
    fx.nd->env = (net_driver_env){
        .heap = fx.e.heap,
        .cvars = &fx.e.cvars,
        .worlds = fx.e.worlds,
        .world_count = fx.e.world_count,
        .tick_hz = fx.e.opts.tick_hz,
        .frame = &fx.e.frame,
        .start_ns = fx.e.start_ns,
        .gc_interval = &fx.e.gc.interval,
        .gc_since_purge = &fx.e.gc.time_since_last_purge,
    };
    enet_address_set_host_ip(&addr, "127.0.0.1");
    fx.nd->host = enet_host_create(&addr, 2, MSG_CHANNEL_COUNT, 0, 0);
    assert_non_null(fx.nd->host);
    enet_socket_get_address(fx.nd->host->socket, &addr);
    fx.nd->conns = calloc(fx.nd->host->peerCount, sizeof *fx.nd->conns);
    fx.nd->out_buf = malloc(NET_OUT_BYTES);
    net_repl_band_periods(fx.nd); /* no load: the bands' own periods */
    for (uint32_t w = 0; w < NET_MAX_WORLDS; w++)
        net_index_init(&fx.nd->indexes[w], WIRE_DEFAULT_STEP);
    fx.client = enet_host_create(NULL, 1, MSG_CHANNEL_COUNT, 0, 0);
    assert_non_null(fx.client);
    fx.to_server = enet_host_connect(fx.client, &addr, MSG_CHANNEL_COUNT, 0);
    for (int i = 0; i < 200 && fx.conn == NULL; i++) {
        enet_host_service(fx.client, &ev, 5);
        if (enet_host_service(fx.nd->host, &ev, 5) > 0 && ev.type == ENET_EVENT_TYPE_CONNECT)
            fx.conn = &fx.nd->conns[ev.peer - fx.nd->host->peers];
        if (fx.conn != NULL)
            fx.conn->peer = ev.peer;
    }
    assert_non_null(fx.conn);
    fx.arena_buf = malloc(NET_ARENA_BYTES);
    msg_arena_init(&fx.arena, fx.arena_buf, NET_ARENA_BYTES);

    assert_int_equal(actor_spawn_player(fx.w, 1, "me", &fx.me), GC_OK);
    assert_int_equal(actor_spawn_player(fx.w, 2, "other", &fx.other), GC_OK);
    place(&fx, &fx.me->pawn->base, 0, 0);
    place(&fx, &fx.other->pawn->base, 50000, 50000);
    fx.me->pawn->base.moves = false; /* keep the scene still unless a test moves it */
    fx.other->pawn->base.moves = false;
    fx.conn->state = NET_CONN_JOINED;
    fx.conn->player_id = 1;
    fx.conn->world = fx.w;
    fx.conn->controller = fx.me;
    net_repl_join(fx.nd, fx.conn);
    *state = &fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;

    net_repl_leave(fx->nd, fx->conn);
    for (uint32_t i = 1; i < net_repl_index(fx->nd, fx->w)->count; i++)
        assert_int_equal(net_repl_index(fx->nd, fx->w)->v[i].refs, 0); /* the view let go */
    for (uint32_t w = 0; w < NET_MAX_WORLDS; w++)
        net_index_free(&fx->nd->indexes[w]);
    free(fx->nd->picks);
    free(fx->nd->picks_tmp);
    enet_host_destroy(fx->client);
    enet_host_destroy(fx->nd->host);
    free(fx->nd->conns);
    free(fx->nd->out_buf);
    free(fx->nd->ids);
    free(fx->nd->cands);
    free(fx->nd->fresh);
    free(fx->nd);
    free(fx->arena_buf);
    world_fixture_close(fx->heap);
    enet_deinitialize();
    return 0;
}

static actor *spawn_prop(fixture *fx, player_controller *owner, float x, float y)
{
    actor *a;

    assert_int_equal(actor_spawn(fx->w, ACTOR_KIND_PROP, owner, &a), GC_OK);
    place(fx, a, x, y);
    return a;
}

/* ---- relevancy ---------------------------------------------------------------------------- */

static void test_an_actor_beyond_the_cull_distance_is_never_sent(void **state)
{
    fixture *fx = *state;
    actor *near = spawn_prop(fx, fx->other, 14000, 0);    /* within net.CullDistance=15000 */
    actor *far = spawn_prop(fx, fx->other, 15001, 0);

    frames(fx, 20);

    assert_true(mirror_holds(&fx->m, near->net_id));
    assert_false(mirror_holds(&fx->m, far->net_id));
    assert_false(mirror_holds(&fx->m, fx->other->pawn->base.net_id));
    assert_false(mirror_holds(&fx->m, fx->other->base.net_id)); /* others' controllers: never */
}

static void test_crossing_into_relevancy_sends_one_spawn_and_out_one_destroy(void **state)
{
    fixture *fx = *state;
    actor *theirs = &fx->other->pawn->base;

    fx->m.watch[0] = theirs->net_id;
    frames(fx, 20);
    assert_int_equal(fx->m.spawns_of[0], 0);

    place(fx, theirs, 1000, 1000);
    frames(fx, 20);
    assert_int_equal(fx->m.spawns_of[0], 1);
    assert_true(mirror_holds(&fx->m, theirs->net_id));

    place(fx, theirs, 40000, 0);
    frames(fx, 20);
    assert_int_equal(fx->m.destroys_of[0], 1);
    assert_int_equal(fx->m.spawns_of[0], 1);
    assert_false(mirror_holds(&fx->m, theirs->net_id));
}

static void test_static_actors_follow_the_players_own_movement(void **state)
{
    fixture *fx = *state;
    actor *theirs = spawn_prop(fx, fx->other, 20000, 0);

    fx->m.watch[0] = theirs->net_id;
    frames(fx, 20);
    assert_false(mirror_holds(&fx->m, theirs->net_id));

    place(fx, &fx->me->pawn->base, 10000, 0);   /* the prop is 10000 away now */
    frames(fx, 20);
    assert_true(mirror_holds(&fx->m, theirs->net_id));

    place(fx, &fx->me->pawn->base, -10000, 0);  /* 30000 away */
    frames(fx, 20);
    assert_false(mirror_holds(&fx->m, theirs->net_id));
    assert_int_equal(fx->m.spawns_of[0], 1);
    assert_int_equal(fx->m.destroys_of[0], 1);
}

static void test_own_and_always_relevant_actors_are_sent_wherever_they_are(void **state)
{
    fixture *fx = *state;
    actor *mine = spawn_prop(fx, fx->me, 0, 0);
    const level *lvl = fx->w->persistent_level;

    place(fx, mine, -90000, 90000); /* far from my pawn */
    frames(fx, 20);

    assert_true(mirror_holds(&fx->m, mine->net_id));
    assert_true(mirror_holds(&fx->m, fx->me->base.net_id));
    assert_true(mirror_holds(&fx->m, fx->me->pawn->base.net_id));
    assert_true(mirror_holds(&fx->m, ((actor *)lvl->actors.data[0])->net_id));
    assert_true(mirror_holds(&fx->m, ((actor *)lvl->actors.data[1])->net_id));
}

static void test_a_destroyed_actor_is_destroyed_on_the_client_once(void **state)
{
    fixture *fx = *state;
    actor *near = spawn_prop(fx, fx->other, 100, 0);

    fx->m.watch[0] = near->net_id;
    frames(fx, 10);
    assert_true(mirror_holds(&fx->m, near->net_id));

    actor_destroy(fx->w, near);
    frames(fx, 10);

    assert_int_equal(fx->m.destroys_of[0], 1);
    assert_false(mirror_holds(&fx->m, near->net_id));
}

/* A frame in which the client has been silent for two seconds (and is not pumped). */
static void silent_frame(fixture *fx)
{
    fx->e.frame++;
    net_repl_begin_world(fx->nd, fx->w);
    fx->nd->host->serviceTime = fx->conn->peer->lastReceiveTime + 2000;
    net_repl_connection(fx->nd, fx->conn, 1.0 / 30.0, false);
    world_outbox_reset(fx->w);
}

static void test_a_silent_peer_is_sent_nothing_and_set_right_when_it_answers(void **state)
{
    fixture *fx = *state;
    actor *gone = spawn_prop(fx, fx->other, 100, 0), *came;
    uint64_t packets;

    fx->m.watch[0] = gone->net_id;
    frames(fx, 10);
    assert_true(mirror_holds(&fx->m, gone->net_id));

    /* While it is silent one actor goes and another comes: nothing is sent... */
    packets = fx->nd->counters.packets_out;
    actor_destroy(fx->w, gone);
    silent_frame(fx);
    came = spawn_prop(fx, fx->other, 200, 0);
    fx->m.watch[1] = came->net_id;
    for (int i = 0; i < 5; i++)
        silent_frame(fx);
    assert_int_equal(fx->nd->counters.packets_out, packets);

    /* ...and once it answers, the client gets the destroy and the spawn, and agrees. */
    frames(fx, 10);
    assert_int_equal(fx->m.destroys_of[0], 1);
    assert_false(mirror_holds(&fx->m, gone->net_id));
    assert_int_equal(fx->m.spawns_of[1], 1);
    fx->conn->check_requested = true;
    frame(fx);
    assert_true(fx->m.check_arrived);
    assert_int_equal(fx->m.check.pending, 0);
    assert_int_equal(fx->m.check.closing, 0);
    assert_int_equal(fx->m.check.open_actors, fx->m.check_mirror_count);
    assert_true(fx->m.check.open_digest == fx->m.check_mirror_digest);
}

static void test_the_replication_check_matches_the_client_mirror(void **state)
{
    fixture *fx = *state;

    for (int i = 0; i < 50; i++)
        spawn_prop(fx, fx->other, (float)(i * 100), 0);
    frames(fx, 10);

    fx->conn->check_requested = true;
    frame(fx);

    assert_true(fx->m.check_arrived);
    assert_int_equal(fx->m.check.pending, 0);
    assert_int_equal(fx->m.check.open_actors, fx->m.check_mirror_count);
    assert_true(fx->m.check.open_digest == fx->m.check_mirror_digest);
    assert_true(fx->m.check.relevant_digest == fx->m.check.open_digest);
}

/* ---- the budget ----------------------------------------------------------------------------- */

static void test_a_tiny_budget_still_delivers_everything_in_priority_order(void **state)
{
    fixture *fx = *state;
    int n = 0;

    assert_int_equal(cvar_set(&fx->e.cvars, "net.MaxClientRate", "1000", CVAR_SOURCE_CONSOLE,
                              NULL, 0), CVAR_OK);
    fx->conn->allowance = 0;
    for (int i = 0; i < 40; i++)
        spawn_prop(fx, fx->other, (float)(i * 10), 500);

    for (; n < 600 && !fx->m.snapshot_complete; n++)
        frame(fx);

    /* 1000 B/s is 33 bytes a frame, two or three spawn records: everything arrives, over
     * many frames... */
    assert_true(fx->m.snapshot_complete);
    assert_true(n > 10);
    assert_int_equal(fx->m.snapshot_complete_at, 2 + 2 + 40); /* fixtures, mine, the props */
    /* ...and the player's own controller and pawn (priority 12) come first. */
    for (uint32_t i = 0; i < 2; i++)
        assert_true(fx->m.order[i] == REAP__ACTOR_CLASS__ACTOR_CLASS_PLAYER_CONTROLLER ||
                    fx->m.order[i] == REAP__ACTOR_CLASS__ACTOR_CLASS_PAWN);
    assert_true(fx->nd->counters.saturated > 0);
}

static void test_a_snapshot_of_ten_thousand_actors_arrives_complete(void **state)
{
    fixture *fx = *state;
    int n = 0;

    for (int i = 0; i < 10000; i++)
        spawn_prop(fx, fx->other, (float)(i % 100) * 100.0f, (float)(i / 100) * 100.0f);

    for (; n < 3000 && !fx->m.snapshot_complete; n++)
        frame(fx);

    assert_true(fx->m.snapshot_complete);
    assert_int_equal(fx->m.count, 10000 + 4);
    assert_int_equal(fx->m.snapshot_complete_at, 10000 + 4);
    /* Streamed within net.MaxClientRate (100000 B/s, two frames' worth banked at most), not
     * sent as one burst. */
    assert_true(n > 20);
    assert_true(fx->nd->counters.spawn_bytes_sent <= (uint64_t)(n + 2) * (100000 / 30 + 64));
}

/* A frame in which other joiners' full passes have spent net.FullPassBudgetMs already. */
static void frame_after_others_full_passes(fixture *fx)
{
    frame_with(fx, UINT64_MAX / 2, false);
}

static void test_a_joiners_first_pass_waits_for_the_frames_budget_but_not_long(void **state)
{
    fixture *fx = *state;
    int n = 0;

    for (int i = 0; i < 20; i++)
        spawn_prop(fx, fx->other, (float)(i * 10), 500);

    /* While every frame's budget is spent by others, the joiner's first pass waits... */
    for (int i = 0; i < NET_FULL_PASS_WAIT; i++) {
        frame_after_others_full_passes(fx);
        assert_false(fx->m.snapshot_complete); /* nothing was decided yet, nothing sent */
    }
    assert_int_equal(fx->m.count, 0);
    assert_int_equal(fx->conn->epoch, 0);
    assert_int_equal(fx->nd->counters.full_passes_deferred, NET_FULL_PASS_WAIT);
    /* ...but not longer than NET_FULL_PASS_WAIT frames: then it runs regardless. */
    frame_after_others_full_passes(fx);
    assert_int_equal(fx->conn->epoch, 1);
    for (; n < 100 && !fx->m.snapshot_complete; n++)
        frame_after_others_full_passes(fx);
    assert_true(fx->m.snapshot_complete);
    assert_int_equal(fx->m.count, 20 + 4);
    assert_int_equal(fx->nd->counters.full_passes_deferred, NET_FULL_PASS_WAIT);
}

static void test_with_no_full_pass_budget_a_joiners_first_pass_never_waits(void **state)
{
    fixture *fx = *state;

    assert_int_equal(cvar_set(&fx->e.cvars, "net.FullPassBudgetMs", "0", CVAR_SOURCE_CONSOLE,
                              NULL, 0), CVAR_OK);
    spawn_prop(fx, fx->other, 10, 500);

    frame_after_others_full_passes(fx);

    assert_int_equal(fx->conn->epoch, 1);
    assert_int_equal(fx->nd->counters.full_passes_deferred, 0);
}

/* ---- the frame's replication budget (net.ReplicationFrameBudget) ------------------------- */

/* A frame whose budget is already spent when the connection's turn comes: it only follows the
 * outbox. */
static void deferred_frame(fixture *fx)
{
    frame_with(fx, 0, true);
}

static void test_once_the_frames_budget_is_spent_the_other_connections_wait(void **state)
{
    fixture *fx = *state;
    net_connection c[4];

    memset(c, 0, sizeof c);
    for (int i = 0; i < 4; i++)
        c[i].served_frame = 99; /* all served the frame before */
    fx->e.frame = 100;
    net_repl_budget_begin(fx->nd, 1000); /* the deadline: 1000 ns on a clock of the test's */
    /* The first of a frame always runs, even past the deadline. */
    assert_false(net_repl_budget_defers(fx->nd, &c[0], 2000));
    assert_false(net_repl_budget_defers(fx->nd, &c[1], 999));
    assert_true(net_repl_budget_defers(fx->nd, &c[2], 1000));
    /* Spent stays spent for the rest of the frame, whatever the clock says. */
    assert_true(net_repl_budget_defers(fx->nd, &c[3], 10));
    assert_int_equal(fx->nd->counters.connections_deferred, 2);
    assert_int_equal(c[0].served_frame, 100);
    assert_int_equal(c[1].served_frame, 100);
    assert_int_equal(c[2].served_frame, 99);

    /* A new frame starts unspent. */
    fx->e.frame = 101;
    net_repl_budget_begin(fx->nd, 1000);
    assert_false(net_repl_budget_defers(fx->nd, &c[2], 100));
    assert_false(net_repl_budget_defers(fx->nd, &c[3], 200));
    assert_int_equal(fx->nd->counters.connections_deferred, 2);
}

static void test_no_connection_waits_for_the_frames_budget_more_than_three_frames(void **state)
{
    fixture *fx = *state;
    net_connection first, late;
    int waited = 0;

    memset(&first, 0, sizeof first);
    memset(&late, 0, sizeof late);
    /* A connection never served (a joiner, a reused slot) counts as having waited long. */
    fx->e.frame = 50;
    net_repl_budget_begin(fx->nd, 1000);
    assert_false(net_repl_budget_defers(fx->nd, &first, 5000));
    assert_false(net_repl_budget_defers(fx->nd, &late, 5000));
    net_repl_budget_begin(fx->nd, 1000);
    /* Every later frame is spent before its turn: it waits, but not longer than the rule. */
    for (uint32_t f = 51; f < 51 + 2 * NET_REPL_MAX_DEFER; f++) {
        fx->e.frame = f;
        net_repl_budget_begin(fx->nd, 1000);
        assert_false(net_repl_budget_defers(fx->nd, &first, 5000));
        if (net_repl_budget_defers(fx->nd, &late, 5000)) {
            waited++;
        } else {
            assert_int_equal(f - 50, NET_REPL_MAX_DEFER); /* served on the third frame */
            break;
        }
    }
    assert_int_equal(waited, NET_REPL_MAX_DEFER - 1);
    assert_int_equal(late.served_frame, 50 + NET_REPL_MAX_DEFER);
}

static void test_the_frames_budget_counts_the_flush_of_what_is_queued(void **state)
{
    fixture *fx = *state;
    net_connection c[3];

    memset(c, 0, sizeof c);
    for (int i = 0; i < 3; i++)
        c[i].served_frame = 9;
    fx->e.frame = 10;
    fx->nd->budget.flush_ns_per_byte = 2.0;
    net_repl_budget_begin(fx->nd, 10000);
    assert_false(net_repl_budget_defers(fx->nd, &c[0], 0));
    fx->nd->counters.bytes_out += 3000; /* its messages: a flush of about 6000 ns */
    assert_false(net_repl_budget_defers(fx->nd, &c[1], 3999));
    assert_true(net_repl_budget_defers(fx->nd, &c[2], 4000)); /* 4000 + 6000 reach it */

    /* The flush's cost per byte is learnt from the flushes (an eighth at a time), and a flush
     * of little says nothing. */
    fx->nd->budget.flush_ns_per_byte = 0;
    net_repl_budget_begin(fx->nd, 0);
    fx->nd->counters.bytes_out += 100;
    net_repl_budget_flushed(fx->nd, 1000000);
    assert_true(fx->nd->budget.flush_ns_per_byte == 0);
    net_repl_budget_begin(fx->nd, 0);
    fx->nd->counters.bytes_out += 100000;
    net_repl_budget_flushed(fx->nd, 400000);
    assert_true(fx->nd->budget.flush_ns_per_byte == 4.0);
    net_repl_budget_begin(fx->nd, 0);
    fx->nd->counters.bytes_out += 100000;
    net_repl_budget_flushed(fx->nd, 1200000);
    assert_true(fx->nd->budget.flush_ns_per_byte == 5.0); /* 4 + (12 - 4) / 8 */
    /* A flush the kernel preempted (100 ns a byte) counts as four times the average at most. */
    net_repl_budget_begin(fx->nd, 0);
    fx->nd->counters.bytes_out += 100000;
    net_repl_budget_flushed(fx->nd, 10000000);
    assert_true(fx->nd->budget.flush_ns_per_byte == 6.875); /* 5 + (20 - 5) / 8 */
    /* With no budget nothing waits. */
    assert_false(net_repl_budget_defers(fx->nd, &c[2], UINT64_MAX / 2));
}

static void test_a_connection_that_waited_still_follows_what_spawned_and_went(void **state)
{
    fixture *fx = *state;
    actor *gone = spawn_prop(fx, fx->other, 100, 0);
    actor *fresh;
    uint64_t sent_before;

    fx->m.watch[0] = gone->net_id;
    frames(fx, 10);
    assert_true(mirror_holds(&fx->m, gone->net_id));

    /* While it waits: one actor it holds is destroyed, one near it spawns; nothing is sent. */
    actor_destroy(fx->w, gone);
    fresh = spawn_prop(fx, fx->other, 200, 0);
    fx->m.watch[1] = fresh->net_id;
    sent_before = fx->nd->counters.packets_out;
    deferred_frame(fx);
    deferred_frame(fx);
    assert_int_equal(fx->nd->counters.packets_out, sent_before);
    assert_true(mirror_holds(&fx->m, gone->net_id));
    assert_false(mirror_holds(&fx->m, fresh->net_id));

    /* Served again, without a full pass: the destroy and the spawn arrive once each. */
    frames(fx, 4);
    assert_int_equal(fx->m.destroys_of[0], 1);
    assert_int_equal(fx->m.spawns_of[1], 1);
    assert_false(mirror_holds(&fx->m, gone->net_id));
    assert_true(mirror_holds(&fx->m, fresh->net_id));
    fx->conn->check_requested = true;
    frame(fx);
    assert_true(fx->m.check_arrived);
    assert_int_equal(fx->m.check.pending, 0);
    assert_true(fx->m.check.open_digest == fx->m.check_mirror_digest);
}

static void test_a_connection_that_waited_on_its_batch_frame_is_sent_the_batch_next(void **state)
{
    fixture *fx = *state;
    actor *gone = spawn_prop(fx, fx->other, 100, 0);
    actor *fresh;

    fx->m.watch[0] = gone->net_id;
    for (int i = 0; i < 20 && !fx->m.snapshot_complete; i++)
        frame(fx);
    assert_true(fx->m.snapshot_complete);
    /* Past its snapshot its spawns and destroys go on every 3rd frame: (frame + id) % 3 == 0.
     * Stop just before one. */
    while ((fx->e.frame + 1 + fx->conn->player_id) % 3 != 0)
        frame(fx);

    actor_destroy(fx->w, gone);
    fresh = spawn_prop(fx, fx->other, 200, 0);
    fx->m.watch[1] = fresh->net_id;
    deferred_frame(fx);               /* its batch frame, waited */
    assert_true(fx->conn->batch_owed);
    frame(fx);                        /* not a batch frame: the owed batch goes anyway */
    assert_int_equal(fx->m.destroys_of[0], 1);
    assert_int_equal(fx->m.spawns_of[1], 1);
    assert_false(fx->conn->batch_owed);
}

static void test_connections_take_turns_when_the_frames_budget_cuts(void **state)
{
    fixture *fx = *state;
    net_connection *second = &fx->nd->conns[fx->conn == &fx->nd->conns[0] ? 1 : 0];
    uint32_t served[2] = { 0, 0 }, last[2] = { 0, 0 }, longest_gap = 0;

    for (int i = 0; i < 20 && !fx->m.snapshot_complete; i++)
        frame(fx);
    assert_true(fx->m.snapshot_complete);
    /* A second joined connection (its ENet peer never connected: what it is sent is dropped),
     * past its snapshot too, so that neither goes first as a joiner. */
    second->peer = &fx->nd->host->peers[second - fx->nd->conns];
    second->state = NET_CONN_JOINED;
    second->player_id = 2;
    second->world = fx->w;
    second->controller = fx->other;
    net_repl_join(fx->nd, second);
    second->snapshot_pending = false;
    fx->w->connections = 2; /* the driver's count of the world's joined connections */
    fx->nd->env.loop = uv_default_loop();
    /* A budget of 33 ns: spent as soon as the first connection of a frame has run. */
    assert_int_equal(cvar_set(&fx->e.cvars, "net.ReplicationFrameBudget", "0.000001",
                              CVAR_SOURCE_CONSOLE, NULL, 0), CVAR_OK);
    for (int f = 0; f < 13; f++) {
        fx->e.frame++;
        net_driver_replicate(fx->nd, 1.0 / 30.0);
        pump(fx);
        for (int k = 0; k < 2; k++) {
            net_connection *c = k == 0 ? fx->conn : second;
            if (f > 0 && c->served_frame == (uint32_t)fx->e.frame) {
                served[k]++;
                if (last[k] != 0 && fx->e.frame - last[k] > longest_gap)
                    longest_gap = (uint32_t)(fx->e.frame - last[k]);
                last[k] = (uint32_t)fx->e.frame;
            }
        }
    }
    /* Who waited goes first the next frame: they alternate, six frames of twelve each, where
     * always starting from the same one would serve the other only when overdue (four). */
    assert_true(served[0] >= 5);
    assert_true(served[1] >= 5);
    assert_true(longest_gap <= NET_REPL_MAX_DEFER);
    assert_true(fx->nd->counters.frames_cut >= 10);
    /* What admission is told of the last frame: one of its two connections waited. */
    assert_true(fx->nd->repl_cut == 0.5);
    net_repl_leave(fx->nd, second);
    second->state = NET_CONN_FREE;
    fx->w->connections = 0;
}

/* ---- update rates ------------------------------------------------------------------------ */

static void test_the_players_own_spawn_does_not_wait_behind_its_join_snapshot(void **state)
{
    fixture *fx = *state;
    actor *mine;
    int n = 0;

    /* Given a join snapshot of 5000 actors streaming (several seconds' worth of budget)... */
    for (int i = 0; i < 5000; i++)
        spawn_prop(fx, fx->other, (float)(i % 100) * 100.0f, (float)(i / 100) * 100.0f);
    frames(fx, 2);
    assert_false(fx->m.snapshot_complete);
    /* ...a prop the player asks for now... */
    mine = spawn_prop(fx, fx->me, 100, 100);
    for (; n < 3 && !mirror_has(&fx->m, mine->net_id); n++)
        frame(fx);
    /* ...arrives within a frame or two, long before the snapshot ends. */
    assert_true(mirror_has(&fx->m, mine->net_id));
    assert_false(fx->m.snapshot_complete);
    assert_true(fx->m.count < 5000);
}

static void test_while_the_join_snapshot_streams_the_movers_already_sent_wait(void **state)
{
    fixture *fx = *state;
    player_controller *near_pc;
    actor *near;

    /* Given a join snapshot of 10000 props (over a second of budget) and another player's pawn
     * beside the player's, sent first (a pawn outranks a prop), moving every frame... */
    for (int i = 0; i < 10000; i++)
        spawn_prop(fx, fx->other, (float)(i % 100) * 100.0f, (float)(i / 100) * 100.0f);
    assert_int_equal(actor_spawn_player(fx->w, 3, "near", &near_pc), GC_OK);
    near = &near_pc->pawn->base;
    place(fx, near, 100, 0);
    frames(fx, 3);
    assert_true(mirror_holds(&fx->m, near->net_id));
    fx->m.watch[0] = near->net_id;

    /* ...for 15 frames of the snapshot... */
    for (int i = 0; i < 15; i++) {
        walk(fx, near, 0, 1.0f);
        frame(fx);
    }

    /* ...it gets no update (its spawn said where it was): pending spawns outrank it 8x while
     * the snapshot streams, and the budget goes to them... */
    assert_false(fx->m.snapshot_complete);
    assert_int_equal(fx->m.updates_of[0], 0);

    /* ...and once the snapshot is complete its moves go again. */
    for (int n = 0; n < 300 && !fx->m.snapshot_complete; n++)
        frame(fx);
    assert_true(fx->m.snapshot_complete);
    walk(fx, near, 0, 1.0f);
    frames(fx, 2);
    assert_true(fx->m.updates_of[0] >= 1);
}

static void test_far_movers_are_updated_less_often_than_near_ones(void **state)
{
    fixture *fx = *state;
    player_controller *near_pc, *far_pc;
    actor *near, *far;

    /* Given two other players' pawns moving every frame, one beside the player's pawn and one
     * beyond half the cull distance (15000)... */
    assert_int_equal(actor_spawn_player(fx->w, 3, "near", &near_pc), GC_OK);
    assert_int_equal(actor_spawn_player(fx->w, 4, "far", &far_pc), GC_OK);
    near = &near_pc->pawn->base;
    far = &far_pc->pawn->base;
    place(fx, near, 100, 0);
    place(fx, far, 12000, 0);
    frames(fx, 5);
    assert_true(mirror_holds(&fx->m, near->net_id) && mirror_holds(&fx->m, far->net_id));
    fx->m.watch[0] = near->net_id;
    fx->m.watch[1] = far->net_id;

    /* ...over 60 frames... */
    for (int i = 0; i < 60; i++) {
        walk(fx, near, 0, 1.0f);
        walk(fx, far, 0, 1.0f);
        frame(fx);
    }

    /* ...the near one is sent every frame, the far one every 6th (5 Hz at 30). */
    assert_in_range(fx->m.updates_of[0], 58, 60);
    assert_in_range(fx->m.updates_of[1], 9, 11);
}

static void test_under_load_far_bands_stretch_and_the_nearest_never(void **state)
{
    fixture *fx = *state;
    player_controller *near_pc, *far_pc;
    actor *near, *far;

    /* Given admission control stretching every band it can (the three farthest)... */
    fx->nd->admission.stretch = NET_STRETCH_LEVELS;
    net_repl_band_periods(fx->nd);
    /* ...and two other players' pawns moving every frame, one beside the player's pawn and one
     * beyond half the cull distance... */
    assert_int_equal(actor_spawn_player(fx->w, 3, "near", &near_pc), GC_OK);
    assert_int_equal(actor_spawn_player(fx->w, 4, "far", &far_pc), GC_OK);
    near = &near_pc->pawn->base;
    far = &far_pc->pawn->base;
    place(fx, near, 100, 0);
    place(fx, far, 12000, 0);
    frames(fx, 5);
    assert_true(mirror_holds(&fx->m, near->net_id) && mirror_holds(&fx->m, far->net_id));
    fx->m.watch[0] = near->net_id;
    fx->m.watch[1] = far->net_id;

    for (int i = 0; i < 60; i++) {
        walk(fx, near, 0, 1.0f);
        walk(fx, far, 0, 1.0f);
        frame(fx);
    }

    /* ...the near one is still sent every frame, the far one every 12th instead of every 6th. */
    assert_in_range(fx->m.updates_of[0], 58, 60);
    assert_in_range(fx->m.updates_of[1], 4, 6);
}

static void test_a_move_within_one_quantization_step_sends_no_update(void **state)
{
    fixture *fx = *state;
    player_controller *near_pc;
    actor *near;

    /* Given another player's pawn beside the player's, its spawn sent... */
    assert_int_equal(actor_spawn_player(fx->w, 3, "near", &near_pc), GC_OK);
    near = &near_pc->pawn->base;
    place(fx, near, 100.0f, 0);
    frames(fx, 5);
    assert_true(mirror_holds(&fx->m, near->net_id));
    fx->m.watch[0] = near->net_id;

    /* ...moving a hundredth of a unit a frame (x 100.04 still rounds to step 1000)... */
    for (int i = 0; i < 4; i++) {
        walk(fx, near, 0.01f, 0);
        frame(fx);
    }

    /* ...it is sent no update: its record would say what the spawn said... */
    assert_int_equal(fx->m.updates_of[0], 0);
    /* ...until its quantized position changes. */
    walk(fx, near, 1.0f, 0);
    frame(fx);
    assert_int_equal(fx->m.updates_of[0], 1);
}

static void test_the_players_own_movers_are_updated_every_third_frame(void **state)
{
    fixture *fx = *state;
    actor *own;

    /* Given a projectile of the player's own, moving every frame... */
    assert_int_equal(actor_spawn(fx->w, ACTOR_KIND_PROJECTILE, fx->me, &own), GC_OK);
    place(fx, own, 50, 50);
    frames(fx, 5);
    assert_true(mirror_holds(&fx->m, own->net_id));
    fx->m.watch[0] = own->net_id;
    for (int i = 0; i < 60; i++) {
        walk(fx, own, 1.0f, 0);
        frame(fx);
    }
    /* ...it is sent every third frame (10 Hz): its client steers it. */
    assert_in_range(fx->m.updates_of[0], 19, 21);
}

/* ---- the wire ------------------------------------------------------------------------------- */

static void expect_spawn(FILE *f, const net_index *ix, const actor *a)
{
    fprintf(f, "spawn %llu %u %u %u %u %d %d %d %u\n", (unsigned long long)a->net_id, a->net_index,
            (unsigned)a->kind, a->owner_player_id, ix->v[a->net_index].mover_slot,
            wire_quantize(a->pos[0], WIRE_DEFAULT_STEP),
            wire_quantize(a->pos[1], WIRE_DEFAULT_STEP),
            wire_quantize(a->pos[2], WIRE_DEFAULT_STEP), a->archetype);
}

static void test_captured_packets_decode_with_the_independent_python_decoder(void **state)
{
    fixture *fx = *state;
    char dir[] = "/tmp/reap-wire-XXXXXX", path[300], cmd[1024];
    const char *build = getenv("REAP_BUILD_DIR");
    actor *props[40], *crates[3], *mover = &fx->other->pawn->base;
    world_profile profile;
    FILE *f;
    int rc;

    /* Given props at awkward positions (negative, fractional, one off the ground) and another
     * player's pawn moving nearby, every packet the client gets saved... */
    assert_non_null(mkdtemp(dir));
    fx->capture_dir = dir;
    for (int i = 0; i < 40; i++)
        props[i] = spawn_prop(fx, fx->other, (float)i * 37.31f - 700.0f, -(float)i * 11.97f);
    props[7]->pos[2] = 55.55f;
    world_actor_moved(fx->w, props[7]);
    /* ...and actors of a world profile's archetypes (class ARCHETYPE and their number)... */
    assert_true(world_profile_parse(&profile, "p.ini", "[archetype Crate]\npayload = 8\n"
                                    "[archetype Barrel]\ncomponents = 1\n", path, sizeof path));
    assert_true(world_archetypes_compile(&fx->e.env, &profile, "p.ini", path, sizeof path));
    for (int i = 0; i < 3; i++) {
        assert_int_equal(actor_spawn_archetype(fx->w, (uint32_t)(i % 2), fx->other, &crates[i]),
                         GC_OK);
        place(fx, crates[i], 300.5f * (float)i, -41.0f);
    }
    mover->moves = true;
    place(fx, mover, 120.25f, -80.75f);
    frame(fx); /* its spawn goes out from here (so it gets a mover slot) */
    snprintf(path, sizeof path, "%s/expected.txt", dir);
    f = fopen(path, "w");
    assert_non_null(f);
    expect_spawn(f, net_repl_index(fx->nd, fx->w), mover);
    for (int i = 0; i < 20; i++) {
        frame(fx);
        walk(fx, mover, 13.37f, -7.1f);
    }
    frames(fx, 10);

    /* ...when the Python decoder reads them with what the server knows as the truth... */
    for (int i = 0; i < 40; i++)
        expect_spawn(f, net_repl_index(fx->nd, fx->w), props[i]);
    for (int i = 0; i < 3; i++)
        expect_spawn(f, net_repl_index(fx->nd, fx->w), crates[i]);
    fprintf(f, "last %llu %d %d %d\n", (unsigned long long)mover->net_id,
            wire_quantize(mover->pos[0], 0.1f),
            wire_quantize(mover->pos[1], 0.1f), wire_quantize(mover->pos[2], 0.1f));
    assert_int_equal(fclose(f), 0);
    /* Debian's python3, which python3-protobuf installs into (not whatever is first on PATH). */
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/wire/decode_reap.py %s/gen/reap.desc %s "
             "--expect %s"
             " > %s/decoded.txt 2>&1", build != NULL ? build : "build", dir, path, dir);
    rc = system(cmd);

    /* ...it agrees on every spawn and on the last position sent. */
    if (rc != 0) {
        snprintf(cmd, sizeof cmd, "tail -n 20 %s/decoded.txt", dir);
        assert_int_equal(system(cmd), 0);
    }
    assert_int_equal(rc, 0);
    assert_true(fx->captured > 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    world_archetypes_free(&fx->e.env);
}

/* ---- serialize once ------------------------------------------------------------------------ */

/* Records encoded over n frames while `watchers` connections watch a crowd of moving pawns (the
 * fixture's own, and others on an ENet peer that is not connected: their sends go nowhere). */
static uint64_t records_encoded_with(fixture *fx, uint32_t watchers, uint32_t movers, int n,
                                     uint64_t *out_changes)
{
    static net_connection extra[64];
    player_controller *pcs[64];
    net_index *ix = net_repl_index(fx->nd, fx->w);
    uint64_t before = 0, changes = 0;

    assert_true(watchers <= 64 && movers <= 64);
    for (uint32_t i = 0; i < movers; i++) {
        assert_int_equal(actor_spawn_player(fx->w, 100 + i, "crowd", &pcs[i]), GC_OK);
        place(fx, &pcs[i]->pawn->base, (float)(i * 50), 300);
    }
    memset(extra, 0, sizeof extra);
    for (uint32_t i = 1; i < watchers; i++) {
        extra[i] = *fx->conn;
        extra[i].peer = &fx->nd->host->peers[fx->conn->peer == &fx->nd->host->peers[0]];
        net_view_init(&extra[i].view);
        extra[i].player_id = 100 + i % movers;
        extra[i].controller = pcs[i % movers];
        net_repl_join(fx->nd, &extra[i]);
    }
    /* Three frames for every watcher to find its actors (each new actor's spawn record is
     * encoded once then), then n frames counted. */
    for (int k = -3; k < n; k++) {
        if (k == 0)
            before = ix->records_encoded;
        for (uint32_t i = 0; k >= 0 && i < movers; i++) {
            actor *a = &pcs[i]->pawn->base;
            if ((k + (int)i) % 3 == 0) { /* a third of the crowd moves each frame */
                a->pos[0] += 1.0f;
                a->move_serial++;
                changes++;
            }
        }
        fx->e.frame++;
        net_repl_begin_world(fx->nd, fx->w);
        net_repl_connection(fx->nd, fx->conn, 1.0 / 30.0, false);
        for (uint32_t i = 1; i < watchers; i++)
            net_repl_connection(fx->nd, &extra[i], 1.0 / 30.0, false);
        world_outbox_reset(fx->w);
        enet_host_flush(fx->nd->host);
        pump(fx);
    }
    for (uint32_t i = 1; i < watchers; i++)
        net_repl_leave(fx->nd, &extra[i]);
    *out_changes = changes;
    return ix->records_encoded - before;
}

static void test_records_encoded_equal_the_changes_with_one_watcher(void **state)
{
    fixture *fx = *state;
    uint64_t changes, encoded;

    encoded = records_encoded_with(fx, 1, 30, 12, &changes);

    assert_int_equal(encoded, changes);
}

static void test_records_encoded_equal_the_changes_with_fifty_watchers(void **state)
{
    fixture *fx = *state;
    uint64_t changes, encoded;

    encoded = records_encoded_with(fx, 50, 30, 12, &changes);

    assert_int_equal(encoded, changes); /* not 50 times as many */
    assert_true(changes > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_an_actor_beyond_the_cull_distance_is_never_sent,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_captured_packets_decode_with_the_independent_python_decoder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_players_own_spawn_does_not_wait_behind_its_join_snapshot,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_players_own_movers_are_updated_every_third_frame,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_while_the_join_snapshot_streams_the_movers_already_sent_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(test_far_movers_are_updated_less_often_than_near_ones,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_under_load_far_bands_stretch_and_the_nearest_never,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_move_within_one_quantization_step_sends_no_update,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_records_encoded_equal_the_changes_with_one_watcher,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_records_encoded_equal_the_changes_with_fifty_watchers, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_crossing_into_relevancy_sends_one_spawn_and_out_one_destroy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_static_actors_follow_the_players_own_movement,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_own_and_always_relevant_actors_are_sent_wherever_they_are, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_destroyed_actor_is_destroyed_on_the_client_once,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_silent_peer_is_sent_nothing_and_set_right_when_it_answers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_the_replication_check_matches_the_client_mirror,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_tiny_budget_still_delivers_everything_in_priority_order, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_joiners_first_pass_waits_for_the_frames_budget_but_not_long, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_with_no_full_pass_budget_a_joiners_first_pass_never_waits, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_snapshot_of_ten_thousand_actors_arrives_complete,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_once_the_frames_budget_is_spent_the_other_connections_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_no_connection_waits_for_the_frames_budget_more_than_three_frames, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_the_frames_budget_counts_the_flush_of_what_is_queued,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_connection_that_waited_still_follows_what_spawned_and_went, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_connection_that_waited_on_its_batch_frame_is_sent_the_batch_next, setup,
            teardown),
        cmocka_unit_test_setup_teardown(test_connections_take_turns_when_the_frames_budget_cuts,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
