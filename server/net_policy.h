/*
 * net_policy.h - what a client may ask for: spawn rate, actors owned, request and input rates,
 * pawn speed, bad-message tolerance.
 *
 * Pure functions over a per-connection state and the time of the request, so the rules are
 * tested with a fake clock. The net driver owns one net_policy_state per connection.
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
} net_policy_limits;

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
} net_policy_state;

typedef enum net_policy_verdict {
    NET_POLICY_ALLOW = 0,
    NET_POLICY_BAD_COUNT,    /* count is 0 or above max_spawn_per_request */
    NET_POLICY_OVER_LIMIT,   /* would exceed max_actors_per_player */
    NET_POLICY_OVER_RATE,    /* not enough tokens */
    NET_POLICY_BAD_VALUE,    /* a number that is not finite */
    NET_POLICY_TOO_FAST,     /* a move faster than max_pawn_speed */
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

/* Counts one bad message; returns true when the connection has now sent too many and must be
 * disconnected. */
bool net_policy_note_bad_message(net_policy_state *st, const net_policy_limits *lim);

#endif /* REAP_NET_POLICY_H */
