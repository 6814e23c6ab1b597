/*
 * net_internal.h - shared by the net driver's own files, nobody else.
 *
 *   net_driver.c       the ENet host: service loop, connections, shutdown, console view
 *   net_send.c         the bottom of the send path: send, send an error, reject, kick
 *   net_filter.c       datagrams before ENet sees them: garbage, oversize fragments, handshakes,
 *                      each message against its peer's frame budget and channel bucket
 *   net_handlers.c     client messages: hello, spawn, destroy, stats, ping, moves, goodbye
 *   net_replication.c  per connection: relevancy, priority, budget, packing
 *   net_index.c        per world: the replication index, each actor's records encoded once
 *   net_view.c         per connection: state arrays over the index
 *   net_travel.c       a server travel: Travel to the clients, carried connections
 *   net_admission.c    admission control: the loop's load, busy refusals, band stretch
 *
 * What ENet costs (1.3.17, the version Debian ships; read from its protocol.c and peer.c):
 * - enet_host_service makes a send pass over every peer (twice per call) and reads up to 256
 *   datagrams. Received messages are queued; enet_host_check_events hands them out without
 *   touching the socket or the other peers. With an event argument the call returns early at
 *   a connect or disconnect only, so reap calls it once per such event plus once, never once
 *   per message. (With NULL it would return only after 256 datagrams, but a handshake then
 *   completes later, at dispatch, and ENet refuses a message that shares a datagram with the
 *   handshake's last step: the client resends it a round-trip timeout later, 500 ms at first.)
 * - A send pass walks each peer's outgoing command list from the start. In 1.3.17 reliable and
 *   unreliable commands share that list and the walk steps over every reliable command the
 *   window holds back (later versions keep a separate reliable list and stop at the first
 *   one the window refuses). So reap never queues more reliable bytes than the peer's window
 *   has room for (net_repl_window_room): after each flush the lists are short in either version.
 * - enet_host_flush is one send pass; reap calls it once per frame, after replication.
 * - ENet's packet throttle (enet_peer_throttle) lowers a peer's throttle whenever one round
 *   trip is much longer than the last, and the throttle then both shrinks the reliable window
 *   and drops unreliable commands at random as they are sent. A server's round trips jump by
 *   up to a frame with where in the frame an acknowledgement lands, so under load it throttled
 *   a crowd's peers for nothing: at crowded 500, 15% of connection-frames ran below a quarter
 *   (three quarters of their updates encoded and then dropped) and 38% of join-snapshot frames
 *   had less window than a frame's budget. reap paces each connection itself
 *   (net.MaxClientRate, net_repl_window_room), so each peer's throttle is configured never to
 *   fall (deceleration 0) at connect.
 * - Fragment reassembly allocates the whole announced packet on the first fragment; the
 *   filter refuses fragments of packets larger than net.MaxMessageBytes before ENet sees them,
 *   and the host's maximumWaitingData bounds what one peer can hold.
 */
#ifndef REAP_NET_INTERNAL_H
#define REAP_NET_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <enet/enet.h>
#include <uv.h>

#include "net_admission.h"
#include "net_driver.h"
#include "net_index.h"
#include "net_policy.h"
#include "net_view.h"
#include "reap_msg.h"
#include "vec.h"
#include "world.h"

enum {
    NET_ARENA_BYTES = 512 * 1024, /* decoded size of the largest allowed message, with room */
    NET_OUT_BYTES = 64 * 1024,    /* one encoded message */
    /* Records per replication message: with its envelope (16 bytes at most) it stays within one
     * datagram (ENet fragments a packet over MTU 1400 - 4 - 24 = 1372 bytes). */
    NET_PACKET_TARGET = 1340,
    NET_MAX_PACKET = 256 * 1024,  /* the most net.MaxMessageBytes allows */
    NET_FULL_PASS_WAIT = 8,       /* frames a first pass waits for net.FullPassBudgetMs at most */
    NET_REPL_MAX_DEFER = 3,       /* a connection is served at least every this many frames
                                     under net.ReplicationFrameBudget (waits 2 at most: 10 Hz at
                                     worst, at 30 Hz) */
    NET_HANDSHAKE_SLOTS = 256,    /* extra ENet peers for handshakes in flight */
    NET_HANDSHAKES_PER_ADDRESS = 32,
    NET_SERVICE_ROUNDS = 256,     /* enet_host_service calls per wake-up at most */
    NET_SOCKET_BUFFER = 4 * 1024 * 1024, /* UDP socket buffers asked for (rmem_max by default) */
    NET_MAX_WORLDS = 64,          /* --worlds' limit: one replication index each */
    /* ENet's command header in front of a message: reliable (command header and length) and
     * unreliable sequenced (also its sequence number), for the figures of bytes on the wire. */
    NET_RELIABLE_COMMAND_BYTES = 6,
    NET_UNRELIABLE_COMMAND_BYTES = 8,
    NET_DATAGRAM_HEADER_BYTES = 4,   /* ENet's protocol header (peer id, sent time) */
    NET_ACK_ROOM_BYTES = 16,         /* room left for two acknowledgements in a datagram */
    NET_POLL_PAUSE_MS = 2,        /* after reading the socket, wait this long to read again */
    NET_COOLDOWN_SLOTS = 16,      /* addresses kicked for abuse, refused for a while */
    NET_COOLDOWN_S = 10,          /* how long such an address may not connect again */
};

/* Update bands of other players' movers, and the period of the player's own (net_replication.c
 * says what they are). */
enum { NET_BANDS = 4, NET_OWN_UPDATE_PERIOD = 3 };
_Static_assert(NET_BANDS == NET_STRETCH_LEVELS + 1, "every band but the nearest can stretch");

typedef enum net_conn_state {
    NET_CONN_FREE = 0,
    NET_CONN_CONNECTED,  /* ENet connected; waiting for Hello */
    NET_CONN_JOINED,     /* in a world with a player controller */
    NET_CONN_CLOSING,    /* goodbye or kick: ignoring input until ENet disconnects */
    NET_CONN_TRAVELLING, /* carried by a seamless travel: in no replication until it arrives */
} net_conn_state;

typedef struct net_connection {
    ENetPeer *peer;
    net_conn_state state;
    uint32_t player_id;
    world *world;                   /* borrowed: worlds are rooted */
    player_controller *controller;  /* reported to the collector by the driver's referencer */
    net_policy_state policy;
    bool said_goodbye;
    bool kicked;
    bool sent_disconnect;           /* its ENet disconnect was seen: it left, not timed out */
    char name[PLAYER_NAME_MAX];
    char address[64];
    double connected_at;            /* engine time of the ENet connect (hello deadline) */
    bool oversize_reported;         /* a packet ENet will drop was refused: which one */
    uint16_t oversize_seq;
    bool input_noticed;             /* an error was sent for a refused MoveInput... */
    double last_input_notice;       /* ...at this time */
    /* The datagram filter's: per channel, the first reliable message it dropped and is
     * waiting for again; later ones on that channel are dropped too, so ENet never holds
     * messages out of order behind it. */
    bool filter_waiting[NET_POLICY_CHANNELS];
    uint16_t filter_wait_seq[NET_POLICY_CHANNELS];

    /* Replication (net_replication.c). */
    net_view view;
    uint32_t epoch;                 /* relevancy passes so far */
    uint32_t relevancy_frame;       /* frame of the last pass */
    uint32_t full_pass_due;         /* frame + 1 its first pass became due, waiting for the
                                       budget (0: none waits) */
    float relevancy_pos[2];         /* pawn position at the last pass */
    float relevancy_cull;           /* net.CullDistance at the last pass */
    double allowance;               /* bytes it may be sent now (net.MaxClientRate bucket) */
    uint32_t served_frame;          /* the last frame it was served (net_repl_budget_defers) */
    uint32_t replicated_frame;      /* the last frame it was replicated, served or deferred */
    bool batch_owed;                /* it waited on a frame of its spawn and destroy batch
                                       (repl_batch_frame): its next served frame sends them */
    bool snapshot_pending;          /* joined; SnapshotComplete not sent yet */
    bool check_requested;           /* a ReplicationCheck is owed */
    uint32_t check_seq;
    uint64_t bytes_sent;
} net_connection;

/* An actor spawned this frame in the world being replicated, resolved once for all. */
typedef struct net_fresh {
    actor *a;
    float x, y;
} net_fresh;

/* The frame's replication budget (net.ReplicationFrameBudget, net_repl_budget_defers): once
 * the frame's time so far and the flush of what is queued pass the deadline, the connections
 * left only follow their world's outbox this frame and are served first the next. */
typedef struct net_repl_budget {
    uint64_t deadline_ns;           /* uv_hrtime() by which sending stops (0: no budget) */
    uint64_t bytes_at_start;        /* counters.bytes_out when the frame's replication began */
    double flush_ns_per_byte;       /* what ENet's flush has cost per message byte (an average) */
    uint32_t served;                /* connections served this frame */
    uint32_t deferred;              /* ... and made to wait (once one waits, the rest do) */
} net_repl_budget;

/* A candidate for this frame's budget: a spawn to send or a move to update. */
typedef struct net_candidate {
    uint32_t index;                 /* spawn: its place in the view's pending list; update:
                                     * the mover slot */
    uint16_t bytes;                 /* record size, a close upper bound */
    uint8_t bucket;                 /* accumulated priority, clamped to 255 */
    uint8_t is_spawn;
} net_candidate;

/* A spawn chosen for this frame: written by priority, then net id. */
typedef struct net_pick {
    uint64_t key;                   /* 255 - bucket in the top byte, the net id below: one
                                     * compare orders by priority, then net id (NET_PICK_KEY) */
    uint32_t index;
} net_pick;

/* Net ids stay below 2^56 (one per replicated actor, never reused: at a million a second
 * that is two thousand years). */
#define NET_PICK_KEY(bucket, net_id) (((uint64_t)(255u - (bucket)) << 56) | (net_id))

struct net_driver {
    net_driver_env env;
    ENetHost *host;
    uv_poll_t poll;
    bool poll_started;
    uv_timer_t poll_pause;          /* re-arms the poll a moment after a read (net_poll_cb) */
    int open_handles;               /* libuv handles not closed yet: nd is freed at 0 */
    net_connection *conns;          /* host->peerCount entries, indexed like host->peers */
    uint32_t conn_count;
    uint32_t player_count;
    uint32_t next_player_id;
    uint32_t max_players;
    gc_referencer *referencer;
    net_driver_counters counters;
    msg_arena arena;
    void *arena_buf;
    uint8_t *out_buf;
    double trim_after;              /* give freed memory back to the OS after this time */
    double *handshake_seen;         /* per peer: when it was first seen half-open (0: not) */
    double *rest_until;             /* per peer: a reset handshake's slot rests until then */
    uint32_t resting;
    /* Addresses (host and port) kicked for abuse: their CONNECTs are refused until then. */
    struct {
        ENetAddress address;
        double until;
    } cooldown[NET_COOLDOWN_SLOTS];

    /* Scratch reused every message and every frame (nothing allocated per item). */
    uint64_t *ids;                  /* spawn ack net ids, destroy ids */
    uint32_t ids_cap;
    net_candidate *cands;
    uint32_t cands_count, cands_cap;
    uint32_t movers_first;          /* cands[movers_first..cands_count) are movers */
    net_fresh *fresh;
    uint32_t fresh_count, fresh_cap;
    uint64_t full_pass_ns;          /* this frame's first relevancy passes (net.FullPassBudgetMs) */
    net_repl_budget budget;         /* this frame's net.ReplicationFrameBudget */
    uint32_t repl_cursor;           /* the peer the next frame's replication starts at */
    uint32_t repl_world_cursor;     /* ... and the world */
    double repl_cut;                /* the share of the last frame's connections its budget
                                       made wait */
    uint64_t full_pass_frame;       /* ... the frame they are of */
    net_pick *picks, *picks_tmp;
    uint32_t picks_cap, picks_tmp_cap;
    uint8_t rec_buf[2 * NET_PACKET_TARGET]; /* a spawn message's records, an update's */

    net_index indexes[NET_MAX_WORLDS]; /* by world index */

    /* Admission control (net_admission.h): the loop's load, sampled once per frame from
     * libuv's idle time (UV_METRICS_IDLE_TIME), and this frame's band periods under it. */
    net_admission admission;
    bool load_measured;             /* the loop counts its idle time */
    uint64_t load_last_ns, load_last_idle_ns;
    uint8_t band_period[NET_BANDS];

    /* A server travel under way (net_travel.c): hellos are refused until it arrives. */
    bool travelling, travel_seamless;
    char travel_map[32], travel_from[32], travel_transition[32];
};

/* ---- net_driver.c ---- */
/* ENet's intercept hook has no user pointer; there is one host per process. */
extern net_driver *net_intercept_driver;

/* The world named name ("" or NULL: the first); NULL if none. */
world *net_find_world(const net_driver *nd, const char *name);
void net_leave_world(net_driver *nd, net_connection *conn, const char *reason);

/* Admission control's settings now (cvars read at each use). */
net_admission_config net_admission_settings(const net_driver *nd);

/* ---- net_filter.c ---- */
int ENET_CALLBACK net_intercept_cb(ENetHost *host, ENetEvent *event);
/* Resets handshakes that did not finish in time; called a few times a second. */
void net_filter_sweep_handshakes(net_driver *nd, double now);
/* Copies text into out (out_size > 0) with anything unprintable or non-ASCII escaped as \xNN,
 * so input echoed into errors and logs cannot forge lines or terminals. */
void net_sanitize(const char *text, char *out, size_t out_size);

/* ---- net_handlers.c ---- */
void net_on_receive(net_driver *nd, net_connection *conn, const ENetPacket *packet);
/* The Welcome of a connection in its world (seq: its Hello's); with travel, wrapped in that
 * Travel (ARRIVE) on the replication channel instead. */
void net_send_welcome(net_driver *nd, net_connection *conn, uint32_t seq, Reap__Travel *travel);

/* ---- net_travel.c ---- */
/* A message from a connection a seamless travel is carrying: true when it was refused (or
 * dropped) here, false when the ordinary handler serves it (Ping, StatsRequest...). */
bool net_travel_refuses(net_driver *nd, net_connection *conn, const Reap__Envelope *env);
/* A player name is valid UTF-8 with no control characters (C0, DEL, C1) and fits. */
bool net_name_is_valid(const char *name);

/* ---- net_replication.c ---- */
/* Update rates of other players' movers by distance d from the player's pawn (ReplicationGraph's
 * DynamicSpatialFrequency; repl_band; Welcome.update_bands): band k holds d below
 * cull / net_band_divisor[k] (the last up to cull itself) and is sent every net_band_period[k]
 * frames; the player's own movers every NET_OWN_UPDATE_PERIOD frames wherever they are. */
extern const uint8_t net_band_period[NET_BANDS];
extern const uint8_t net_band_divisor[NET_BANDS];
/* This frame's band periods: net_band_period stretched by admission control (at most 2x). */
void net_repl_band_periods(net_driver *nd);
/* Before the connections of w: resolves the world's spawned outbox once. */
void net_repl_begin_world(net_driver *nd, world *w);
void net_repl_join(net_driver *nd, net_connection *conn);
void net_repl_leave(net_driver *nd, net_connection *conn);
net_index *net_repl_index(net_driver *nd, const world *w);
/* One connection's replication this frame; a deferred one (net_repl_budget_defers) only
 * follows the world's outbox (closes what went, takes in what spawned) and banks its rate. */
void net_repl_connection(net_driver *nd, net_connection *conn, double dt, bool deferred);
/* Starts the frame's budget: deadline_ns (0: none), counting what is queued from now. */
void net_repl_budget_begin(net_driver *nd, uint64_t deadline_ns);
/* Whether conn waits for the next frame: the budget is spent (the clock now_ns plus the flush
 * the bytes queued so far will cost passed the deadline), it is not the frame's first, and it
 * was served within the last NET_REPL_MAX_DEFER - 1 frames (net_repl_budget_must_serve). A
 * connection that does not wait is counted served. */
bool net_repl_budget_defers(net_driver *nd, net_connection *conn, uint64_t now_ns);
/* Whether conn has waited as long as it may: it is served this frame whatever the budget. */
bool net_repl_budget_must_serve(const net_driver *nd, const net_connection *conn);
/* After the flush: what it cost (ns) for the bytes queued since net_repl_budget_begin. */
void net_repl_budget_flushed(net_driver *nd, uint64_t flush_ns);
/* Reliable bytes the peer's window can still take this frame. */
uint32_t net_repl_window_room(const ENetPeer *peer);

#endif /* REAP_NET_INTERNAL_H */
