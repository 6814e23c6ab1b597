/*
 * repl_bench.c - what replication costs the server per connection and frame in a crowd, without
 * the bots, the loop or the kernel's share of sending: the crowded layout of `make loadbench`
 * (every pawn within one cull distance of every other) in one process.
 *
 * One world, N players each with a pawn that walks and PROPS props, N connections over real ENet
 * peers on loopback (one client host holds them all and drains what arrives every frame, so
 * ENet's windows and acks behave). Every frame: the pawns move (world_tick), the replication of
 * every connection runs (net_repl_begin_world, net_repl_connection, world_outbox_reset), ENet
 * flushes, both hosts are drained. Players leave (their actors destroyed) and new ones join at
 * random, one every CHURN frames on average (a Poisson stream, as a churn's joins are), so
 * spawn and destroy fan-out and its bursts are in the figures. The first
 * WARM frames let every join snapshot arrive; the rest are measured.
 *
 * Prints and writes OUT/repl.json: the replication's own thread CPU time per connection-frame
 * (net_repl_connection alone: gather, priorities, records, enet_peer_send), per frame (mean and
 * p99 over frames), the flush's (ENet and the kernel), and records and spawns per frame. Its figures are CPU time of
 * one thread, so a second process beside it changes them less than it changes a wall clock; for
 * an exact A/B of two builds count instructions instead:
 *   valgrind --tool=callgrind --toggle-collect=net_repl_connection repl_bench OUT 500 90
 *
 * usage: repl_bench OUTDIR [PLAYERS [FRAMES [PROPS [CHURN]]]]   (defaults 500 300 10 1: a join
 * every frame, as 500 bots holding 10 s on average make at 30 Hz)
 */
#include <enet/enet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

#include "cvar.h"
#include "net_alloc.h"
#include "net_internal.h"
#include "reap_gc.h"
#include "world.h"

enum { WARM_FRAMES = 90, EXTENT = 10000 };

typedef struct bench {
    gc_heap *heap;
    world_env env;
    world *w;
    cvar_registry cvars;
    uint64_t frame;
    double gc_interval, gc_since;
    net_driver *nd;
    ENetHost *cli;
    uint32_t n, props, next_player;
    uint32_t *player_of;          /* by connection: its player's id */
    uint64_t seed;
} bench;

static double thread_cpu(void)
{
    struct timespec t;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;

    return (a > b) - (a < b);
}

static float rnd(bench *b)
{
    b->seed = b->seed * 6364136223846793005ull + 1442695040888963407ull;
    return (float)(b->seed >> 40) / (float)(1u << 24);
}

static void die(const char *what)
{
    fprintf(stderr, "repl_bench: %s\n", what);
    exit(1);
}

static void place(bench *b, actor *a)
{
    a->pos[0] = (rnd(b) - 0.5f) * EXTENT;
    a->pos[1] = (rnd(b) - 0.5f) * EXTENT;
    world_actor_moved(b->w, a);
}

/* A player joins on connection c: controller, pawn and props in the crowd, then its view. */
static void join(bench *b, net_connection *c)
{
    player_controller *pc;
    actor *a;
    uint32_t id = b->next_player++;

    if (actor_spawn_player(b->w, id, "bot", &pc) != GC_OK)
        die("cannot spawn a player");
    place(b, &pc->pawn->base);
    actor_steer_pawn(pc->pawn, (rnd(b) - 0.5f) * 600.0f, (rnd(b) - 0.5f) * 600.0f);
    for (uint32_t i = 0; i < b->props; i++) {
        if (actor_spawn(b->w, ACTOR_KIND_PROP, pc, &a) != GC_OK)
            die("cannot spawn a prop");
        place(b, a);
    }
    net_view_init(&c->view);
    c->state = NET_CONN_JOINED;
    c->player_id = id;
    c->world = b->w;
    c->controller = pc;
    c->epoch = 0;
    net_repl_join(b->nd, c);
}

static void leave(bench *b, net_connection *c)
{
    player_controller *pc = c->controller;

    net_repl_leave(b->nd, c);
    for (uint32_t i = 0; i < pc->owned.count; i++)
        if (pc->owned.data[i] != NULL)
            actor_destroy(b->w, pc->owned.data[i]);
    if (pc->pawn != NULL)
        actor_destroy(b->w, &pc->pawn->base);
    actor_destroy(b->w, &pc->base);
    c->controller = NULL;
}

/* Everything pending on a host read and dropped; ENet answers what needs answering. */
static void drain(ENetHost *h)
{
    ENetEvent ev;

    for (int k = 0; k < 64; k++) {
        enet_uint32 before = h->totalReceivedPackets;
        if (enet_host_service(h, NULL, 0) < 0 || h->totalReceivedPackets == before)
            break;
    }
    while (enet_host_check_events(h, &ev) > 0)
        if (ev.type == ENET_EVENT_TYPE_RECEIVE)
            enet_packet_destroy(ev.packet);
}

static void open_bench(bench *b)
{
    ENetAddress addr = { .host = ENET_HOST_ANY, .port = 0 };
    ENetEvent ev;
    uint32_t connected = 0;

    /* ENet over the server's block pool, as reap-server runs it. */
    if (net_alloc_install() != 0 || enet_initialize() != 0 ||
        gc_heap_create(NULL, &b->heap) != GC_OK)
        die("cannot start ENet or the heap");
    world_env_init(&b->env, b->heap);
    if (gc_disregard_open(b->heap) != GC_OK ||
        world_classes_register(b->heap, &b->env.classes) != GC_OK ||
        gc_disregard_close(b->heap) != GC_OK || world_create(&b->env, 0, &b->w) != GC_OK)
        die("cannot create the world");
    cvar_registry_init(&b->cvars);
    b->nd = calloc(1, sizeof *b->nd);
    b->nd->env = (net_driver_env){
        .heap = b->heap, .cvars = &b->cvars, .worlds = &b->w, .world_count = 1, .tick_hz = 30,
        .frame = &b->frame, .start_ns = uv_hrtime(), .gc_interval = &b->gc_interval,
        .gc_since_purge = &b->gc_since,
    };
    enet_address_set_host_ip(&addr, "127.0.0.1");
    b->nd->host = enet_host_create(&addr, b->n + 1, MSG_CHANNEL_COUNT, 0, 0);
    b->cli = enet_host_create(NULL, b->n, MSG_CHANNEL_COUNT, 0, 0);
    if (b->nd->host == NULL || b->cli == NULL)
        die("cannot create the ENet hosts");
    enet_socket_set_option(b->cli->socket, ENET_SOCKOPT_RCVBUF, 16 << 20);
    enet_socket_get_address(b->nd->host->socket, &addr);
    b->nd->conns = calloc(b->nd->host->peerCount, sizeof *b->nd->conns);
    b->nd->out_buf = malloc(NET_OUT_BYTES);
    for (uint32_t w = 0; w < NET_MAX_WORLDS; w++)
        net_index_init(&b->nd->indexes[w], WIRE_DEFAULT_STEP);
    for (uint32_t i = 0; i < b->n; i++)
        if (enet_host_connect(b->cli, &addr, MSG_CHANNEL_COUNT, 0) == NULL)
            die("cannot connect a peer");
    for (int round = 0; round < 20000 && connected < b->n; round++) {
        while (enet_host_service(b->cli, &ev, 0) > 0)
            ;
        while (enet_host_service(b->nd->host, &ev, 1) > 0)
            if (ev.type == ENET_EVENT_TYPE_CONNECT) {
                net_connection *c = &b->nd->conns[ev.peer - b->nd->host->peers];
                c->peer = ev.peer;
                join(b, c);
                connected++;
            }
    }
    if (connected < b->n)
        die("not every peer connected within 20000 rounds");
}

static void close_bench(bench *b)
{
    net_driver *nd = b->nd;

    for (size_t i = 0; i < nd->host->peerCount; i++)
        if (nd->conns[i].state == NET_CONN_JOINED)
            net_repl_leave(nd, &nd->conns[i]);
    for (uint32_t w = 0; w < NET_MAX_WORLDS; w++)
        net_index_free(&nd->indexes[w]);
    free(nd->picks);
    free(nd->picks_tmp);
    free(nd->ids);
    free(nd->cands);
    free(nd->fresh);
    free(nd->out_buf);
    free(nd->conns);
    enet_host_destroy(b->cli);
    enet_host_destroy(nd->host);
    free(nd);
    gc_heap_destroy(b->heap);
    enet_deinitialize();
}

int main(int argc, char **argv)
{
    static bench b;
    const char *out = argc > 1 ? argv[1] : "build/bench";
    uint32_t frames = argc > 3 ? (uint32_t)atoi(argv[3]) : 300;
    uint32_t churn = argc > 5 ? (uint32_t)atoi(argv[5]) : 1;
    double repl_cpu = 0, flush_cpu = 0, recv_cpu = 0, *per_frame = calloc(frames, sizeof *per_frame);
    uint64_t conn_frames = 0, records0 = 0, spawns0 = 0;
    char path[512];
    FILE *f;

    b.n = argc > 2 ? (uint32_t)atoi(argv[2]) : 500;
    b.props = argc > 4 ? (uint32_t)atoi(argv[4]) : 10;
    b.next_player = 1;
    b.seed = 1;
    if (b.n < 1 || b.n > 4000 || frames < 1 || churn < 1)
        die("usage: repl_bench OUTDIR [PLAYERS 1..4000 [FRAMES >= 1 [PROPS [CHURN >= 1]]]]");
    open_bench(&b);
    for (uint32_t k = 0; k < WARM_FRAMES + frames; k++) {
        net_driver *nd = b.nd;
        double t0, t1, t2, t3;

        if (k == WARM_FRAMES) {
            records0 = nd->counters.update_records_sent;
            spawns0 = nd->counters.spawns_sent;
        }
        /* Poisson joins: one draw per player this frame, each a chance of 1 / (CHURN x N). */
        for (uint32_t j = 0; j < b.n; j++) {
            net_connection *c = &nd->conns[(uint32_t)(rnd(&b) * (float)b.n) % b.n];
            if (rnd(&b) * (float)churn * (float)b.n < 1.0f && c->state == NET_CONN_JOINED) {
                leave(&b, c);
                join(&b, c);
            }
        }
        b.frame++;
        world_tick(b.w, 1.0 / 30.0);
        t0 = thread_cpu();
        net_repl_begin_world(nd, b.w);
        for (size_t i = 0; i < nd->host->peerCount; i++)
            if (nd->conns[i].state == NET_CONN_JOINED)
                net_repl_connection(nd, &nd->conns[i], 1.0 / 30.0);
        world_outbox_reset(b.w);
        t1 = thread_cpu();
        enet_host_flush(nd->host);
        t2 = thread_cpu();
        drain(b.cli);
        enet_host_flush(b.cli);
        t3 = thread_cpu();
        drain(nd->host);
        if (k >= WARM_FRAMES) {
            repl_cpu += t1 - t0;
            per_frame[k - WARM_FRAMES] = t1 - t0;
            flush_cpu += t2 - t1;
            recv_cpu += thread_cpu() - t3;
            conn_frames += b.n;
        }
    }
    double per_conn_us = repl_cpu / (double)conn_frames * 1e6;
    qsort(per_frame, frames, sizeof *per_frame, cmp_double);
    double p99 = per_frame[(size_t)((frames - 1) * 0.99)];
    double records = (double)(b.nd->counters.update_records_sent - records0) / frames;
    double spawns = (double)(b.nd->counters.spawns_sent - spawns0) / frames;
    printf("repl_bench: %u players x %u props, crowded in %d, %u frames (+%d warm), a join "
           "every %u frames on average\n", b.n, b.props, EXTENT, frames, WARM_FRAMES, churn);
    printf("  replication %.2f us per connection-frame, %.2f ms per frame, p99 %.2f ms "
           "(thread CPU)\n", per_conn_us, repl_cpu / frames * 1e3, p99 * 1e3);
    printf("  flush       %.2f ms per frame (ENet and the kernel's send, thread CPU)\n",
           flush_cpu / frames * 1e3);
    printf("  receive     %.2f ms per frame (the clients' acknowledgements, thread CPU)\n",
           recv_cpu / frames * 1e3);
    printf("  %.0f update records and %.0f spawns per frame\n", records, spawns);
    snprintf(path, sizeof path, "%s/repl.json", out);
    if ((f = fopen(path, "w")) == NULL)
        die("cannot write OUTDIR/repl.json");
    fprintf(f, "{\"players\": %u, \"props\": %u, \"frames\": %u, \"churn_frames\": %u,\n"
               " \"repl_us_per_connection_frame\": %.3f, \"repl_ms_per_frame\": %.3f,\n"
               " \"repl_ms_per_frame_p99\": %.3f,\n"
               " \"flush_ms_per_frame\": %.3f, \"receive_ms_per_frame\": %.3f,\n"
               " \"update_records_per_frame\": %.1f,\n"
               " \"spawns_per_frame\": %.1f}\n",
            b.n, b.props, frames, churn, per_conn_us, repl_cpu / frames * 1e3, p99 * 1e3,
            flush_cpu / frames * 1e3, recv_cpu / frames * 1e3, records, spawns);
    fclose(f);
    free(per_frame);
    close_bench(&b);
    printf("  written to %s\n", path);
    return 0;
}
