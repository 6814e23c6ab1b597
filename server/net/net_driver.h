/*
 * net_driver.h - players over ENet: connections, message handling, replication.
 *
 * Process-wide (one ENet host on one UDP port for every world); each connection belongs to
 * one world once its Hello is accepted. ENet does its acks, resends and timeouts only inside
 * enet_host_service, so the driver services it whenever the socket is readable (uv_poll) and
 * once per frame, and flushes once per frame after replication (net_internal.h says what
 * each ENet call costs).
 *
 * Replication sends each connection only what is relevant to it (its own actors, actors that
 * are always relevant, and actors within net.CullDistance of its pawn), in priority order,
 * within net.MaxClientRate bytes per second and ENet's window (net_replication.c).
 *
 * Input handling (the hot path) allocates nothing per message: packets are decoded into a
 * reused arena and replies are encoded into a reused buffer. Before that, the datagram filter
 * drops unread what a peer sends past its frame budget (net.MaxMessagesPerFrame) or twice its
 * rates, and kicks a peer that floods for net.FloodKickSeconds. Anything undecodable,
 * unknown, oversize or over policy is answered with an Error to that peer and counted
 * (reap_net_bad_messages_total); a peer that reaches net.MaxBadMessages is disconnected.
 * Nothing a peer sends affects another peer.
 */
#ifndef REAP_NET_DRIVER_H
#define REAP_NET_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <enet/enet.h>
#include <uv.h>

#include "cvar.h"
#include "reap_gc.h"
#include "strbuf.h"
#include "world.h"

typedef struct net_driver net_driver;

/* What the driver's owner (the engine) hands it: all borrowed for the driver's life. The
 * driver reads these and calls the callbacks; it never calls up into the engine. */
typedef struct net_driver_env {
    uv_loop_t *loop;
    gc_heap *heap;
    const cvar_registry *cvars;      /* read at each use, so changes apply at once */
    world *const *worlds;            /* world_count; "" or no name in a Hello: the first */
    uint32_t world_count;
    uint32_t tick_hz;
    const uint64_t *frame;           /* the engine's frame counter */
    const uint64_t *frame_start_ns;  /* uv_hrtime() at the frame's start (NULL: replication's
                                        budget counts from its own start) */
    uint64_t start_ns;               /* the clock: the driver's time is seconds since this
                                        uv_hrtime() reading (the engine's time) */
    /* StatsReply reads the collector's schedule through these: the interval in force and the
     * seconds since the last purge (both seconds; owned by whoever runs the schedule). */
    const double *gc_interval;
    const double *gc_since_purge;
    /* A player joined a world (after its Welcome; matchmaker_id: the hello's, "" if none)
     * or left it (goodbye, timeout, kick, shutdown). Strings are borrowed for the call.
     * Either may be NULL. */
    void *hooks_ctx;
    void (*player_joined_cb)(void *ctx, uint32_t player_id, const char *name,
                             const char *matchmaker_id);
    void (*player_left_cb)(void *ctx, uint32_t player_id, const char *name);
} net_driver_env;

/* Why a connection was disconnected by the server (reap_net_kicked_by_reason_total{reason}). */
typedef enum net_kick_reason {
    NET_KICK_BAD_MESSAGES = 0, /* net.MaxBadMessages reached */
    NET_KICK_HELLO_TIMEOUT,    /* no hello within net.HelloTimeout */
    NET_KICK_FLOOD,            /* over net.MaxMessagesPerFrame for net.FloodKickSeconds */
    NET_KICK_REASONS
} net_kick_reason;

/* Why the datagram filter dropped a message before decoding it
 * (reap_net_dropped_messages_total{reason}). */
typedef enum net_drop_reason {
    NET_DROP_RATE = 0,  /* its channel's bucket was empty */
    NET_DROP_BUDGET,    /* past net.MaxMessagesPerFrame this frame */
    NET_DROP_WAITING,   /* reliable, behind one that was dropped: resent by ENet later */
    NET_DROP_CLOSING,   /* from a connection the server is closing */
    NET_DROP_REASONS
} net_drop_reason;

/* Why a connection was refused a place in a world (reap_net_refused_joins_total{reason}). */
typedef enum net_refuse_reason {
    NET_REFUSE_BUSY = 0,  /* admission control: the server is too loaded now (ERROR_CODE_BUSY) */
    NET_REFUSE_FULL,      /* --max-players reached at connect, or no room to spawn the player */
    NET_REFUSE_TRAVEL,    /* a server travel is under way */
    NET_REFUSE_VERSION,   /* another protocol version */
    NET_REFUSE_BAD_HELLO, /* a player name that is not valid */
    NET_REFUSE_NO_WORLD,  /* no world of that name */
    NET_REFUSE_REASONS
} net_refuse_reason;

typedef struct net_driver_counters {
    uint64_t bad_messages;     /* error replies for bad input (reap_net_bad_messages_total) */
    uint64_t bad_datagrams;    /* datagrams that are not ENet protocol at all */
    uint64_t kicked;           /* connections dropped for repeated abuse or silence */
    uint64_t kicked_by[NET_KICK_REASONS]; /* the same by reason; they sum to kicked */
    uint64_t dropped[NET_DROP_REASONS];   /* messages the datagram filter dropped, by reason */
    uint64_t refused_full;     /* connections refused because the server was full */
    uint64_t oversize_packets; /* packets too large for ENet to reassemble, refused */
    uint64_t connects;
    uint64_t disconnects;
    uint64_t timeouts;         /* disconnects without a goodbye */
    uint64_t messages_in;
    uint64_t packets_out;      /* reap_net_packets_sent_total */
    uint64_t bytes_out;        /* reap_net_bytes_sent_total (message bytes, before ENet) */
    uint64_t saturated;        /* reap_net_saturated_total: connection-frames left wanting */
    uint64_t full_passes_deferred; /* reap_net_full_passes_deferred_total (net.FullPassBudgetMs) */
    uint64_t connections_deferred; /* reap_net_connections_deferred_total: connection-frames
                                      that waited for the next frame (net.ReplicationFrameBudget) */
    uint64_t frames_cut;       /* reap_net_replication_frames_cut_total: frames that deferred any */
    uint64_t refused_inputs;   /* reap_net_refused_inputs_total: MoveInputs not applied */
    uint64_t rate_limited;     /* requests refused with ERROR_CODE_RATE */
    uint64_t refused_handshakes; /* CONNECTs dropped: too many handshakes in flight */
    uint64_t handshake_timeouts; /* handshakes reset for not finishing in time */
    uint64_t refused_fragments;  /* fragments of packets over net.MaxMessageBytes dropped */
    uint64_t datagrams_out;    /* UDP datagrams ENet sent (acks, pings, resends included) */
    uint64_t datagrams_in;
    uint64_t wire_bytes_out;   /* UDP payload bytes ENet sent */
    uint64_t spawns_sent;      /* spawn records sent: an actor became relevant to a client */
    uint64_t destroys_sent;    /* destroys sent: gone, or no longer relevant to a client */
    uint64_t records_encoded;  /* reap_net_records_encoded_total: spawn and update records
                                  encoded into the replication index (once per change) */
    uint64_t spawn_records_sent, spawn_bytes_sent;   /* ActorSpawn: records, wire bytes */
    uint64_t update_records_sent, update_bytes_sent; /* ActorUpdate: records, wire bytes */
    uint64_t pairs;            /* actor-connection pairs (relevant or held) after the frame */
    uint64_t pair_frames;      /* pairs summed over frames */
    uint64_t streaming_levels_unloaded; /* levels the worlds told it were streaming out */
    uint64_t travels;          /* server travels it told its clients of */
    uint64_t travel_refusals;  /* requests refused with ERROR_CODE_TRAVEL */
    uint64_t refused_joins[NET_REFUSE_REASONS]; /* Hellos (and full connects) refused, by why */
} net_driver_counters;

/* Opens the UDP host on bind:port (port 0 = any free port) and starts watching its socket on
 * env->loop. env is copied (what it points to is borrowed). *out_nd is owned by the caller:
 * close with net_driver_close. */
int net_driver_create(const net_driver_env *env, const char *bind, uint32_t port,
                      uint32_t max_players, net_driver **out_nd, char *err, size_t err_size);

/* Says goodbye to every peer and waits (servicing ENet) at most timeout seconds for their
 * acknowledgements; then every remaining player leaves its world. */
void net_driver_shutdown(net_driver *nd, const char *reason, double timeout);

/* Stops watching the socket and frees the driver once libuv has closed the handle. */
void net_driver_close(net_driver *nd);

uint32_t net_driver_port(const net_driver *nd);

/* UE's NetDriver::NotifyStreamingLevelUnload: lvl of w starts to stream out. Its replicated
 * actors (destroyed with it this frame) go through the ordinary destroy path; a cell's placed
 * actors never reach the wire, so nothing else of the level is held here. */
void net_driver_notify_streaming_level_unload(net_driver *nd, world *w, level *lvl);

/* ---- server travel (net_travel.c; reap.proto's Travel) ----
 * depart: every joined client is sent Travel (DEPART) after the old world's replication;
 * seamless: its connection stays, out of replication, its controller in its world; hard: it
 * leaves its world (its actors are destroyed) and the connection closes once the Travel is
 * delivered. Until arrive, a Hello is refused with ERROR_CODE_TRAVEL (disconnect). */
void net_driver_travel_depart(net_driver *nd, const char *map, const char *from,
                              const char *transition, bool seamless);
/* The current worlds are now worlds[0..count) (borrowed, as env.worlds): every world's
 * replication index starts afresh, its positions quantized for the new worlds' extent. */
void net_driver_set_worlds(net_driver *nd, world *const *worlds, uint32_t count);
/* Seamless: each carried connection's controller crosses into to[its world's index]
 * (world_carry_player). Call before the worlds they are in are retired. Returns how many. */
uint32_t net_driver_travel_carry(net_driver *nd, world *const *to, uint32_t count);
/* The travel is over: seamless: each carried player restarts (a pawn), is sent Travel
 * (ARRIVE, with the new world's Welcome) and its new join snapshot; Hellos are welcome. */
void net_driver_travel_arrive(net_driver *nd);
bool net_driver_travelling(const net_driver *nd);

/* Drains pending ENet events: connects, messages, disconnects. */
void net_driver_service(net_driver *nd);

/* A few times a second (a periodic job): kicks connections that never said hello, resets
 * handshakes that never finished, and gives back to the system what disconnects freed. */
void net_driver_sweep(net_driver *nd);

/* Replicates to every joined connection (dt: seconds since the last frame, for the rate
 * budget), resets the worlds' outboxes and flushes ENet. Once per frame, after the worlds
 * ticked. */
void net_driver_replicate(net_driver *nd, double dt);

uint32_t net_driver_connection_count(const net_driver *nd); /* connected peers */
uint32_t net_driver_player_count(const net_driver *nd);     /* joined a world */
const net_driver_counters *net_driver_counters_get(const net_driver *nd);

/* The label values of reap_net_kicked_by_reason_total{reason} and reap_net_dropped_messages_total. */
const char *net_kick_reason_name(net_kick_reason r);
const char *net_drop_reason_name(net_drop_reason r);
const char *net_refuse_reason_name(net_refuse_reason r);

/* Admission control's state after the last frame (net_admission.h): the loop's load over the
 * window, whether new players are refused, how many bands are stretched. */
typedef struct net_driver_admission {
    bool refusing;
    bool measured;          /* the load is measured (libuv counts its idle time) */
    double load;
    double achieved_hz;
    uint32_t stretched_bands;
} net_driver_admission;
void net_driver_admission_get(const net_driver *nd, net_driver_admission *out);

/* Console `players`: one line per connection. */
void net_driver_list_players(const net_driver *nd, strbuf *out);

/* True when a received datagram cannot be ENet protocol for this host (exposed for tests). */
bool net_datagram_is_garbage(const ENetHost *host, const ENetAddress *from, const uint8_t *data,
                             size_t len);

#endif /* REAP_NET_DRIVER_H */
