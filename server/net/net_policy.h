/*
 * net_policy.h - what a client may ask for: spawn rate, actors owned, request and input rates,
 * pawn speed, bad-message tolerance, and how many messages it may send at all.
 *
 * Pure functions over a per-connection state and the time of the request, so the rules are
 * tested with a fake clock. The net driver owns one net_policy_state per connection.
 *
 * Two layers. The datagram filter (net_filter.c) sees each ENet command before anything is
 * decoded: it counts it against the frame's message budget (net.MaxMessagesPerFrame, all
 * channels together) and spends a token of its channel's bucket. Those buckets hold
 * NET_POLICY_FILTER_HEADROOM times the rates the handlers allow, so a client within its
 * rates never meets them, while a flood past them costs the server a few instructions per
 * message and no decode. The handlers (net_handlers.c) then apply the exact rates to what
 * they decoded, with an error that names the limit. A peer over its frame budget in every
 * second of net.FloodKickSeconds is flooding, and is disconnected.
 */
#ifndef REAP_NET_POLICY_H
#define REAP_NET_POLICY_H

#include <stdbool.h>
#include <stdint.h>

typedef struct net_policy_limits {
    uint32_t max_actors_per_player; /* net.MaxActorsPerPlayer */
    uint32_t max_spawn_per_request; /* net.MaxSpawnPerRequest */
    double spawn_rate;              /* net.SpawnRatePerSecond: tokens added per second */
    double spawn_burst;             /* net.SpawnBurst: bucket size */
    uint32_t max_bad_messages;      /* net.MaxBadMessages */
    double request_rate;            /* net.RequestRatePerSecond */
    double request_burst;           /* net.RequestBurst */
    double move_rate;               /* net.MaxMoveInputsPerSecond (burst: one second's worth) */
    double max_pawn_speed;          /* net.MaxPawnSpeed */
    uint32_t max_messages_per_frame; /* net.MaxMessagesPerFrame, all channels together */
    double flood_kick_seconds;      /* net.FloodKickSeconds */
} net_policy_limits;

enum {
    NET_POLICY_CHANNELS = 3,        /* the protocol's channels: control, replication, updates */
    NET_POLICY_UPDATES_CHANNEL = 2, /* unreliable: MoveInput from clients */
};

/* The filter's buckets against the handlers' rates (see the banner). */
#define NET_POLICY_FILTER_HEADROOM 2.0

/* A token bucket: `tokens` available at time `updated` (seconds). */
typedef struct net_bucket {
    double tokens;
    double updated;
} net_bucket;

typedef struct net_policy_state {
    net_bucket spawns;      /* actors */
    net_bucket requests;    /* ping, stats, destroy, replication checks */
    net_bucket moves;       /* MoveInput messages */
    uint32_t bad_messages;  /* since the connection opened */
    uint32_t refused_inputs; /* MoveInputs not applied: over rate, too fast, not finite */

    /* The datagram filter's, before decoding (net_policy_count, net_policy_take). */
    net_bucket channels[NET_POLICY_CHANNELS];
    uint64_t frame;          /* the frame frame_messages counts */
    uint32_t frame_messages;
    bool over_budget;        /* a run of seconds with a frame over budget is going on */
    double over_since;       /* when that run began */
    double over_last;        /* the last time a frame went over budget */
    double rate_start;       /* the one-second window messages are counted in */
    uint32_t rate_count;     /* messages in that window */
    uint32_t rate_last;      /* messages in the window before it */
    uint64_t messages;       /* seen by the filter since the connection opened */
    uint64_t dropped;        /* of those, dropped by the filter */
} net_policy_state;

typedef enum net_policy_verdict {
    NET_POLICY_ALLOW = 0,
    NET_POLICY_BAD_COUNT,    /* count is 0 or above max_spawn_per_request */
    NET_POLICY_OVER_LIMIT,   /* would exceed max_actors_per_player */
    NET_POLICY_OVER_RATE,    /* not enough tokens */
    NET_POLICY_BAD_VALUE,    /* a number that is not finite */
    NET_POLICY_TOO_FAST,     /* a move faster than max_pawn_speed */
    NET_POLICY_OVER_BUDGET,  /* past max_messages_per_frame in this frame */
    NET_POLICY_FLOOD,        /* over budget in every second of flood_kick_seconds */
} net_policy_verdict;

/* A fresh connection starts with a full bucket. */
void net_policy_init(net_policy_state *st, const net_policy_limits *lim, double now);

/* Decides a spawn of `count` actors by a player who owns `owned` now; on ALLOW the tokens
 * are spent. A refused request spends nothing. */
net_policy_verdict net_policy_check_spawn(net_policy_state *st, const net_policy_limits *lim,
                                          double now, uint32_t owned, uint32_t count);

/* One request (ping, stats, destroy, check): ALLOW spends a token, OVER_RATE spends none. */
net_policy_verdict net_policy_check_request(net_policy_state *st, const net_policy_limits *lim,
                                            double now);

/* One MoveInput asking for velocity (vx, vy): BAD_VALUE, TOO_FAST, OVER_RATE or ALLOW (which
 * spends a token). */
net_policy_verdict net_policy_check_move(net_policy_state *st, const net_policy_limits *lim,
                                         double now, float vx, float vy);

/* One message seen by the datagram filter in `frame` (ENet commands that carry a message,
 * and ENet pings): ALLOW within the frame's budget, OVER_BUDGET past it, FLOOD when the peer
 * has now been over budget at least once in every second for flood_kick_seconds. Also feeds
 * the message rate. */
net_policy_verdict net_policy_count(net_policy_state *st, const net_policy_limits *lim,
                                    double now, uint64_t frame);

/* n more messages seen at the time and in the frame of the last one counted: counted as
 * net_policy_count would, without a verdict (the filter knows them to be over budget). */
void net_policy_count_more(net_policy_state *st, uint32_t n);

/* One message on `channel` that the budget let through: ALLOW spends a token of the
 * channel's filter bucket, OVER_RATE (the bucket is empty) spends none. Channels the protocol
 * does not have are left to ENet, which refuses them: ALLOW. */
net_policy_verdict net_policy_take(net_policy_state *st, const net_policy_limits *lim,
                                   double now, unsigned channel);

/* Messages per second the filter saw from this peer, over the last whole second (0 when it
 * has been silent for a second or more). */
double net_policy_message_rate(const net_policy_state *st, double now);

/* Counts one bad message; returns true when the connection has now sent too many and must be
 * disconnected. */
bool net_policy_note_bad_message(net_policy_state *st, const net_policy_limits *lim);

#endif /* REAP_NET_POLICY_H */
