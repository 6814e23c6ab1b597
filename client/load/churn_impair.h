/*
 * churn_impair.h - a bad network inside the load generator (--impair, a stage's `impair`): an
 * impaired visit talks to the server through a relay socket of its own that drops, delays,
 * jitters, duplicates and reorders its datagrams both ways (churn_impair.c says how).
 */
#ifndef REAP_CLIENT_CHURN_IMPAIR_H
#define REAP_CLIENT_CHURN_IMPAIR_H

#include <stdbool.h>
#include <stdint.h>

#include <enet/enet.h>
#include <uv.h>

#include "churn_plan.h"
#include "churn_totals.h"
#include "client_ports.h"

enum { CHURN_DATAGRAM_MAX = 4096 };   /* ENet's largest MTU */

typedef struct churn_impair_stream {
    uint64_t rng;             /* this direction's own stream */
    double last_due;          /* the latest due time of a datagram kept in order */
} churn_impair_stream;

typedef struct churn_fate {
    bool drop;
    int copies;               /* 0 (dropped), 1, or 2 (duplicated) */
    bool reordered;           /* held back behind the datagrams that follow it */
    double due;               /* when it is delivered, seconds since the run's start */
} churn_fate;

typedef struct churn_impair churn_impair;
typedef struct churn_relay churn_relay;

/* One visit's relay: the socket the server sees, between it and the visit's ENet host. */
struct churn_relay {
    churn_impair *imp;        /* the network it belongs to */
    ENetSocket socket;
    uv_poll_t poll;
    bool poll_open;           /* poll's close callback has not run */
    bool closed;              /* the visit is over: the socket goes once nothing is queued */
    ENetAddress address;      /* its socket's: what the server sees */
    ENetAddress bot_addr;     /* the visit's ENet host, on loopback */
    const client_impair *im;  /* borrowed from the visit's stage */
    churn_impair_stream stream[2]; /* [0] towards the bot, [1] towards the server */
    uint32_t queued;          /* its datagrams waiting in the network's queue */
    churn_relay *prev, *next; /* every relay of the network that is not freed yet */
};

typedef struct churn_datagram {
    struct churn_datagram *next_free;
    churn_relay *relay;
    double due;
    uint64_t order;           /* ties in due time keep arrival order */
    bool up;                  /* towards the server */
    uint32_t len;
    uint8_t data[CHURN_DATAGRAM_MAX];
} churn_datagram;

/* Datagrams waiting to be delivered: a min-heap by due time, and a free list. */
typedef struct churn_impair_queue {
    churn_datagram **heap;
    uint32_t n, cap;
    churn_datagram *free;
    uint64_t order;
} churn_impair_queue;

/* A run's impaired network: every relay, the datagrams they hold back, the timer that
 * releases them. */
struct churn_impair {
    uv_loop_t *loop;          /* borrowed: the run's */
    uv_timer_t timer;
    bool timer_open;
    churn_impair_queue iq;
    churn_relay *relays;
    ENetAddress server;       /* where datagrams towards the server go */
    double t0;                /* the run's start (churn_clock) */
    uint64_t seed;            /* the run's (this shard's) seed */
    client_ports *ports;      /* borrowed: a closed relay's port rests */
    churn_totals *totals;     /* borrowed: datagrams through it and what befell them */
};

/* The seed of one visit's direction, from the run's seed, the bot and its visit count. */
uint64_t churn_impair_seed(uint64_t run_seed, uint32_t bot, uint32_t visit, bool up);
/* The fate of a stream's next datagram sent at now (st advances). Pure: tests drive it. */
void churn_impair_decide(const client_impair *im, churn_impair_stream *st, double now,
                         churn_fate *out);
/* Starts the network on loop; every pointer is borrowed for its life. */
void churn_impair_open(churn_impair *imp, uv_loop_t *loop, ENetAddress server, double t0,
                       uint64_t seed, client_ports *ports, churn_totals *totals);
/* The run is over: drops what is queued, closes every relay and the timer (their close
 * callbacks run on the loop's next turn). */
void churn_impair_close(churn_impair *imp);
/* A relay bound to source (ENET_HOST_ANY: the kernel's choice; see client_ports_open_socket)
 * on a port of its own that no visit used in the last CLIENT_PORT_REST_S seconds, read by the
 * loop; the caller sets bot_addr. NULL when no socket could be had. */
churn_relay *churn_relay_open(churn_impair *imp, const client_impair *im, enet_uint32 source,
                              uint32_t bot, uint32_t visit, double now);
/* The visit is over: the relay stops reading; it is freed once its queue is delivered. */
void churn_relay_close(churn_relay *r);


#endif /* REAP_CLIENT_CHURN_IMPAIR_H */
