/*
 * flood_client.c - one hostile client for the flood benchmark (flood_bench.sh): it joins,
 * then sends one kind of message as fast as ENet takes them until the server disconnects it,
 * then joins again, for --duration seconds. It prints one line per connection and a summary
 * line of key=value figures that flood_bench.sh reads.
 *
 * usage: flood_client HOST:PORT --mode move|spawn|destroy|stats|garbage [--duration S]
 *                    [--rotate-ports]
 *
 *   move     MoveInput on channel 2 (unreliable sequenced)
 *   spawn    SpawnRequest of one prop, channel 0 (reliable)
 *   destroy  DestroyRequest naming an actor nobody owns, channel 0
 *   stats    StatsRequest, channel 0
 *   garbage  bytes that are no Envelope, on channel 2
 *
 * --rotate-ports rejoins from a new UDP port each time, as an attacker would once the server
 * refuses its address for a while after a kick.
 *
 * Loopback only: the bench runs it against a server it started on 127.0.0.1.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <enet/enet.h>

#include "client_net.h"
#include "reap_msg.h"

enum {
    FLOOD_BATCH = 64,         /* messages queued between two services of the host */
    FLOOD_MAX_CONNECTIONS = 200,
    FLOOD_CONNECT_TIMEOUT_MS = 5000,
    FLOOD_ONE_CONNECTION_S = 30, /* a flood nobody stops ends here */
};

typedef enum flood_mode {
    FLOOD_MOVE,
    FLOOD_SPAWN,
    FLOOD_DESTROY,
    FLOOD_STATS,
    FLOOD_GARBAGE
} flood_mode;

static const char *const mode_names[] = { "move", "spawn", "destroy", "stats", "garbage" };

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One connection's fate. */
typedef struct flood_run {
    bool welcomed;
    bool disconnected;
    bool kicked;              /* an ERROR_CODE_KICKED came before the disconnect */
    char kick_text[200];
    uint64_t sent;
    double flood_start, disconnect_at;
} flood_run;

static void on_event(flood_run *run, ENetEvent *ev)
{
    static _Alignas(max_align_t) uint8_t arena_buf[64 * 1024];
    msg_arena arena;
    Reap__Envelope *env;

    if (ev->type == ENET_EVENT_TYPE_DISCONNECT) {
        run->disconnected = true;
        run->disconnect_at = now_s();
        return;
    }
    if (ev->type != ENET_EVENT_TYPE_RECEIVE)
        return;
    msg_arena_init(&arena, arena_buf, sizeof arena_buf);
    if (ev->channelID == MSG_CHANNEL_CONTROL &&
        msg_decode(&arena, ev->packet->data, ev->packet->dataLength, 0, &env) == MSG_OK) {
        if (env->body_case == REAP__ENVELOPE__BODY_WELCOME)
            run->welcomed = true;
        else if (env->body_case == REAP__ENVELOPE__BODY_ERROR &&
                 env->error->code == REAP__ERROR_CODE__ERROR_CODE_KICKED) {
            run->kicked = true;
            snprintf(run->kick_text, sizeof run->kick_text, "%s", env->error->text);
        }
    }
    enet_packet_destroy(ev->packet);
}

/* Queues raw bytes (the garbage mode): unreliable on the updates channel. */
static bool send_raw(ENetPeer *peer, const void *data, size_t len)
{
    ENetPacket *p = enet_packet_create(data, len, 0);

    if (p == NULL)
        return false;
    if (enet_peer_send(peer, MSG_CHANNEL_UPDATES, p) != 0) {
        enet_packet_destroy(p);
        return false;
    }
    return true;
}

static bool send_env(ENetPeer *peer, uint8_t channel, const Reap__Envelope *env)
{
    static uint8_t buf[512];

    return client_net_send(peer, buf, sizeof buf, channel, env);
}

static bool send_one(ENetPeer *peer, flood_mode mode, uint32_t n)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__MoveInput move = REAP__MOVE_INPUT__INIT;
    Reap__SpawnRequest spawn = REAP__SPAWN_REQUEST__INIT;
    Reap__DestroyRequest destroy = REAP__DESTROY_REQUEST__INIT;
    Reap__StatsRequest stats = REAP__STATS_REQUEST__INIT;
    uint64_t nobodys = 0xFFFFFFFFu;

    env.seq = n;
    switch (mode) {
    case FLOOD_MOVE:
        move.input_seq = n;
        move.vx = 100.0f;
        env.body_case = REAP__ENVELOPE__BODY_MOVE_INPUT;
        env.move_input = &move;
        return send_env(peer, MSG_CHANNEL_UPDATES, &env);
    case FLOOD_SPAWN:
        spawn.actor_class = REAP__ACTOR_CLASS__ACTOR_CLASS_PROP;
        spawn.count = 1;
        env.body_case = REAP__ENVELOPE__BODY_SPAWN_REQUEST;
        env.spawn_request = &spawn;
        return send_env(peer, MSG_CHANNEL_CONTROL, &env);
    case FLOOD_DESTROY:
        destroy.n_net_ids = 1;
        destroy.net_ids = &nobodys;
        env.body_case = REAP__ENVELOPE__BODY_DESTROY_REQUEST;
        env.destroy_request = &destroy;
        return send_env(peer, MSG_CHANNEL_CONTROL, &env);
    case FLOOD_STATS:
        env.body_case = REAP__ENVELOPE__BODY_STATS_REQUEST;
        env.stats_request = &stats;
        return send_env(peer, MSG_CHANNEL_CONTROL, &env);
    case FLOOD_GARBAGE: {
        uint8_t junk[12] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 };
        memcpy(junk + 8, &n, sizeof n);
        return send_raw(peer, junk, sizeof junk);
    }
    }
    return false;
}

/* Connects, says hello, floods until disconnected or the deadline; false if it could not
 * even join. */
static bool flood_once(ENetHost *host, const ENetAddress *addr, flood_mode mode, double deadline,
                       flood_run *run)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__Hello hello = REAP__HELLO__INIT;
    ENetPeer *peer = enet_host_connect(host, addr, MSG_CHANNEL_COUNT, 0);
    ENetEvent ev;
    double until;

    memset(run, 0, sizeof *run);
    if (peer == NULL)
        return false;
    until = now_s() + FLOOD_CONNECT_TIMEOUT_MS / 1000.0;
    while (now_s() < until) {
        if (enet_host_service(host, &ev, 20) > 0 && ev.type == ENET_EVENT_TYPE_CONNECT)
            break;
    }
    if (peer->state != ENET_PEER_STATE_CONNECTED) {
        enet_peer_reset(peer);
        return false;
    }
    hello.protocol_version = MSG_PROTOCOL_VERSION;
    hello.player_name = "flooder";
    env.body_case = REAP__ENVELOPE__BODY_HELLO;
    env.hello = &hello;
    send_env(peer, MSG_CHANNEL_CONTROL, &env);
    until = now_s() + FLOOD_CONNECT_TIMEOUT_MS / 1000.0;
    while (!run->welcomed && !run->disconnected && now_s() < until)
        if (enet_host_service(host, &ev, 20) > 0)
            on_event(run, &ev);
    if (!run->welcomed) {
        if (!run->disconnected)
            enet_peer_reset(peer);
        return false;
    }
    run->flood_start = now_s();
    until = run->flood_start + FLOOD_ONE_CONNECTION_S;
    if (until > deadline)
        until = deadline;
    while (!run->disconnected && now_s() < until) {
        /* A new batch once ENet has put the last one on the wire: for the unreliable modes
         * that is every service; the reliable ones go as fast as ENet's window lets them. */
        if (enet_list_empty(&peer->outgoingCommands))
            for (int i = 0; i < FLOOD_BATCH; i++)
                if (send_one(peer, mode, (uint32_t)run->sent + 1))
                    run->sent++;
        while (enet_host_service(host, &ev, 0) > 0)
            on_event(run, &ev);
    }
    if (!run->disconnected)
        enet_peer_reset(peer);
    return true;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    const char *server = NULL;
    flood_mode mode = FLOOD_MOVE;
    double duration = 10.0, kick_times[FLOOD_MAX_CONNECTIONS], start, deadline;
    int connections = 0, kicks = 0, failed_joins = 0;
    bool rotate = false;
    uint64_t sent = 0;
    char host_ip[64];
    unsigned port;
    ENetAddress addr;
    ENetHost *host;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mode") == 0 && i + 1 < argc) {
            const char *m = argv[++i];
            size_t k;
            for (k = 0; k < sizeof mode_names / sizeof *mode_names; k++)
                if (strcmp(m, mode_names[k]) == 0)
                    break;
            if (k == sizeof mode_names / sizeof *mode_names) {
                fprintf(stderr, "flood_client: unknown --mode '%s' (move, spawn, destroy, stats, "
                                "garbage)\n", m);
                return 2;
            }
            mode = (flood_mode)k;
        } else if (strcmp(argv[i], "--duration") == 0 && i + 1 < argc) {
            duration = strtod(argv[++i], NULL);
            if (!(duration > 0 && duration <= 600)) {
                fprintf(stderr, "flood_client: --duration must be in (0, 600] seconds\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--rotate-ports") == 0) {
            rotate = true;
        } else if (strcmp(argv[i], "--help") == 0) {
            printf("usage: flood_client HOST:PORT --mode move|spawn|destroy|stats|garbage "
                   "[--duration S] [--rotate-ports]\n");
            return 0;
        } else if (server == NULL && argv[i][0] != '-') {
            server = argv[i];
        } else {
            fprintf(stderr, "flood_client: unexpected argument '%s' (try --help)\n", argv[i]);
            return 2;
        }
    }
    if (server == NULL || sscanf(server, "%63[^:]:%u", host_ip, &port) != 2 || port > 65535) {
        fprintf(stderr, "flood_client: expected HOST:PORT (try --help)\n");
        return 2;
    }
    if (strncmp(host_ip, "127.", 4) != 0) {
        fprintf(stderr, "flood_client: floods loopback only (127.0.0.0/8), not %s\n", host_ip);
        return 2;
    }
    if (enet_initialize() != 0)
        return 1;
    host = enet_host_create(NULL, 1, MSG_CHANNEL_COUNT, 0, 0);
    if (host == NULL || enet_address_set_host_ip(&addr, host_ip) != 0)
        return 1;
    addr.port = (enet_uint16)port;

    start = now_s();
    deadline = start + duration;
    while (now_s() < deadline && connections < FLOOD_MAX_CONNECTIONS && failed_joins < 20) {
        flood_run run;
        if (rotate && connections + failed_joins > 0) {
            enet_host_destroy(host);
            host = enet_host_create(NULL, 1, MSG_CHANNEL_COUNT, 0, 0);
            if (host == NULL)
                return 1;
        }
        if (!flood_once(host, &addr, mode, deadline, &run)) {
            failed_joins++;
            continue;
        }
        sent += run.sent;
        if (run.disconnected && run.kicked) {
            kick_times[kicks++] = run.disconnect_at - run.flood_start;
            printf("connection %d: %llu %s messages, kicked after %.2f s: %s\n", connections + 1,
                   (unsigned long long)run.sent, mode_names[mode],
                   run.disconnect_at - run.flood_start, run.kick_text);
        } else {
            printf("connection %d: %llu %s messages, %s\n", connections + 1,
                   (unsigned long long)run.sent, mode_names[mode],
                   run.disconnected ? "disconnected without a kick" : "never disconnected");
        }
        connections++;
    }
    qsort(kick_times, (size_t)kicks, sizeof *kick_times, cmp_double);
    printf("summary: mode=%s connections=%d kicks=%d failed_joins=%d sent=%llu "
           "sent_per_s=%.0f kick_p50_s=%.3f kick_max_s=%.3f\n",
           mode_names[mode], connections, kicks, failed_joins, (unsigned long long)sent,
           sent / (now_s() - start), kicks ? kick_times[kicks / 2] : -1.0,
           kicks ? kick_times[kicks - 1] : -1.0);
    enet_host_destroy(host);
    enet_deinitialize();
    return 0;
}
