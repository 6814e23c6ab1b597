/*
 * churn_bot.h - the churn load generator's bots: each visit of a bot joins, spawns, steers
 * its pawn, holds, asks for a replication check and leaves (churn_bot.c), on a host of its
 * own watched by the run's loop. The run (churn_run.c) sets what the bots should do (how many
 * take part, the stage, when to stop) and reads what they found out; they record what they
 * measure into the run's meter (model/churn_meter.h) and call nothing above them.
 */
#ifndef REAP_CLIENT_CHURN_BOT_H
#define REAP_CLIENT_CHURN_BOT_H

#include <stdbool.h>
#include <stdint.h>

#include <enet/enet.h>
#include <uv.h>

#include "churn_impair.h"
#include "churn_meter.h"
#include "churn_move.h"
#include "churn_stats.h"
#include "client_console.h"
#include "client_mirror.h"
#include "client_options.h"
#include "client_ports.h"
#include "reap_msg.h"

enum {
    CHURN_ARENA_BYTES = 1024 * 1024,
    CHURN_OUT_BYTES = 4096,
    CHURN_SPAWN_BATCH = 50,      /* the server's default net.MaxSpawnPerRequest */
    CHURN_HOST_IDLE_MS = 20,     /* a quiet host is still serviced this often (ENet's timers) */
    CHURN_SEQ_KINDS = 1 << 16,   /* sends remembered by seq, to place errors */
};

/* Following a server travel: the longest a bot follows one (DEPART to the new map's
 * snapshot) before it is an error, and a hard travel's reconnects: the first at once, then
 * after each Hello refused with ERROR_CODE_TRAVEL a wait from 0.25 s doubling up to 4 s. */
#define CHURN_TRAVEL_MAX 60.0
#define CHURN_TRAVEL_RETRY_FIRST 0.25
#define CHURN_TRAVEL_RETRY_MAX 4.0
/* A connection being opened that the server closes within this of a travel being seen (either
 * side) was closed by the travel. */
#define CHURN_TRAVEL_CLOSE_GRACE 0.5

typedef struct churn_bots churn_bots;

typedef enum churn_bot_state {
    CHURN_BOT_IDLE = 0,   /* between visits: connects at next_at if its index is wanted */
    CHURN_BOT_CONNECTING, /* ENet connect sent */
    CHURN_BOT_HELLO,      /* hello sent, waiting for the welcome */
    CHURN_BOT_SPAWNING,   /* spawn requests sent, waiting for acks and replication */
    CHURN_BOT_HOLDING,    /* moves; checks and leaves at next_at */
    CHURN_BOT_CHECKING,   /* replication check asked, waiting for the answer */
    CHURN_BOT_LEAVING,    /* goodbye sent, waiting for the server to close */
    CHURN_BOT_TRAVELLING, /* the server is between maps (Travel DEPART): hard, waiting for it
                           * to close the connection (or, reconnected, for the new map's
                           * snapshot); seamless, for Travel ARRIVE and the new snapshot */
    CHURN_BOT_DONE,       /* the run is over for this bot */
} churn_bot_state;

/* What a send was, by its envelope seq, so that an Error naming the seq can be placed. */
typedef enum churn_seq_kind {
    CHURN_SEQ_OTHER = 0, CHURN_SEQ_MOVE, CHURN_SEQ_CHECK, CHURN_SEQ_PING,
} churn_seq_kind;

/* An acknowledged actor a bot waits to see replicated, and what it must arrive as. */
typedef struct churn_awaited {
    uint64_t net_id;
    uint32_t actor_class, archetype;
} churn_awaited;

/* What a visit's actor number k (0-based, in request order) must replicate as, for a mix
 * whose entries replicate as mix_class[i] / mix_number[i] (what the Welcome made of them);
 * a visit without a mix spawns props. net_id is left 0. */
churn_awaited churn_mix_expected(const client_spawn_mix *m, const uint32_t *mix_class,
                                 const uint32_t *mix_number, uint32_t k);

typedef struct churn_bot {
    uint32_t index;
    churn_bot_state state;
    /* Each visit has its own ENet host: its own UDP socket and port, as a real player has,
     * so a late datagram of an earlier visit can never reach this one. */
    ENetHost *host;       /* NULL between visits */
    ENetPeer *peer;       /* host's one peer, NULL between visits; peer->data points here */
    uv_poll_t poll;       /* readiness of host's socket, on the run's loop */
    bool poll_open;       /* poll is initialised and its close callback has not run */
    bool dirty;           /* something was queued on peer since host was last flushed */
    double serviced_at;   /* when host was last serviced (ENet's retransmits and pings) */
    churn_relay *relay;   /* an impaired visit's relay (host talks to it), else NULL */
    uint32_t visit;       /* visits begun, for the impairment's streams */
    bool joined;          /* welcomed, not gone yet */
    bool snapshot_done;   /* SnapshotComplete arrived this visit */
    bool snapshot_late;   /* ... and its absence was counted */
    uint32_t stage;       /* the stage the visit began in: its behaviour */
    double deadline;      /* of the current wait */
    double next_at;       /* IDLE: when to connect; HOLDING: when to leave */
    double connect_at, hello_at, welcome_at, spawn_at, check_at;
    double next_move_at, next_ping_at, next_projectile_at;
    double ping_at;
    uint64_t ping_nonce;  /* 0: none outstanding */
    uint32_t player_id;
    uint32_t acked;       /* props (or the mix's actors) acknowledged this visit */
    uint32_t replicated;  /* acknowledged ones that replicate, replicated back this visit */
    uint32_t expected;    /* acknowledged ones that replicate (SpawnAck.net_ids) */
    churn_awaited *awaited; /* those of them not replicated back yet */
    uint32_t n_awaited, awaited_cap;
    /* What a spawn of each mix entry must replicate as (Welcome.archetypes numbers them):
     * class PROP or ARCHETYPE, and for ARCHETYPE the archetype's number. */
    uint32_t mix_class[CLIENT_MIX_MAX], mix_number[CLIENT_MIX_MAX];
    uint32_t input_seq;
    uint32_t check_seq;   /* the seq of the replication check asked (its answer carries it) */
    /* A server travel this bot follows: Travel (DEPART) arrived, the new map's
     * SnapshotComplete not yet. A hard travel's reconnect keeps it (a new visit, the same
     * travel). */
    bool travelling;
    bool travel_check;    /* the check asked is the one right after a travel: then it spawns */
    uint32_t travel_mode; /* Travel.mode (REAP__TRAVEL_MODE__...) */
    uint64_t travel_frame; /* Travel.frame of its DEPART: which match it goes to */
    double travel_at;     /* when the DEPART arrived */
    double travel_retry;  /* seconds to wait after the next Hello a travel refuses */
    double closed_at;     /* a connection being opened the server closed then, not judged
                           * yet (-1: none): a travel's, or an error (churn_bot_judge_close) */
    bool closed_connecting; /* ... it was still in ENet's handshake */
    uint64_t pawn_net_id; /* its pawn (Welcome): its spawn record says where it stands */
    float position_step;  /* Welcome.position_step: world units per quantized step */
    churn_move move;      /* how it steers its pawn */
    client_mirror mirror; /* what the server replicated to this bot, by net id */
    char name[40];
} churn_bot;

/* The bots of one run and what they share. The run fills in the control fields; the bots
 * fill in the outcomes. */
struct churn_bots {
    const client_options *opts;    /* borrowed: the stages, the server, the timeout */
    const client_console *con;     /* borrowed */
    uv_loop_t *loop;               /* borrowed: every visit's socket is watched there */
    ENetAddress server;
    double t0;                     /* the run's start (churn_clock) */
    churn_bot *bots;               /* owned */
    uint32_t n_bots;
    uint64_t rng;                  /* hold times, pauses, moves, leave modes */
    churn_meter *meter;            /* borrowed: what the bots measure goes there */
    churn_stats *stats;            /* borrowed: the server's StatsReply figures */
    churn_impair *impair;          /* borrowed: the relays of impaired visits */
    client_ports *ports;           /* borrowed: the visits' ports */
    churn_timeline *tl;            /* borrowed: the matches the bots' travels begin (or NULL) */
    /* Where the visits' datagrams come from (--source-addresses): true, each bot's own
     * loopback address (client_ports_own_address of its index across the run's shards); false,
     * the kernel's choice. Decided at open; an own address that cannot be bound where the
     * kernel's choice can turns it off for the rest of the run, said once. */
    bool own_sources;
    bool own_sources_failed;       /* ... they were on and a bind failed */
    /* Control, set by the run. */
    uint32_t target;               /* bots the current stage wants taking part */
    uint32_t stage;
    bool stopping;                 /* the duration is over: no new visits */
    bool leave_all;                /* ... and every bot is to leave now */
    /* Outcomes. */
    bool fatal;                    /* a failure no retry can fix (the meter says which) */
    bool moves_unsupported;        /* the server answered MoveInput with "unexpected" */
    bool checks_unsupported;       /* ... and ReplicationCheckRequest */
    bool snapshot_supported;       /* a SnapshotComplete arrived */
    double heard_at;               /* when a datagram from the server last arrived (-1: never) */
    double travel_until;           /* a travel is under way until then (the bots saw a DEPART
                                    * or a Hello refused with ERROR_CODE_TRAVEL): connections
                                    * closed or refused are the travel's, not errors */
    double travel_seen_at;         /* when a travel was last seen (-1: never) */
    /* Sending and receiving. */
    uint32_t next_stats_bot;
    uint32_t seq;
    uint8_t seq_kind[CHURN_SEQ_KINDS];
    msg_arena arena;
    void *arena_buf;               /* owned */
    uint8_t out_buf[CHURN_OUT_BYTES];
};

/* n bots named after opts' shard, their first visits spread over the first second (drawn from
 * --seed), then the stream of this shard (opts->seed_effective); each from its own loopback
 * address when opts->source_addresses is auto and server is on loopback. loop->data must be bs
 * while the bots run. False on allocation failure. */
bool churn_bots_open(churn_bots *bs, const client_options *opts, uint32_t n,
                     const client_console *con, uv_loop_t *loop, ENetAddress server, double t0,
                     churn_meter *meter, churn_stats *stats, churn_impair *impair,
                     client_ports *ports);
/* Ends every visit at once (ENet's disconnect, no waiting); the poll handles close on the
 * loop's next turn. */
void churn_bots_end_visits(churn_bots *bs, double now);
/* Frees the bots (after their handles have closed). */
void churn_bots_free(churn_bots *bs);
/* Advances every bot whose timer or deadline may have passed. */
void churn_bots_step(churn_bots *bs, double now);
/* Services the hosts no datagram woke for CHURN_HOST_IDLE_MS (ENet's retransmits and pings),
 * and sends what the others queued this turn. */
void churn_bots_flush(churn_bots *bs, double now);
/* Asks one joined bot (round robin) for the server's stats; false when none is joined. */
bool churn_bots_request_stats(churn_bots *bs);
/* When the longest-open of the visits' connections (open or being opened) was opened; -1
 * when no visit has one. */
double churn_bots_listening_since(const churn_bots *bs);
/* Bots following a server travel now (DEPART seen, the new map's snapshot not yet). */
uint32_t churn_bots_travelling(const churn_bots *bs);
/* Bots welcomed and not gone. */
uint32_t churn_bots_joined(const churn_bots *bs);
/* Whether every bot is done with the run. */
bool churn_bots_done(const churn_bots *bs);
/* Where the bots' datagrams came from, for the report: "own" (each bot its own loopback
 * address), "one" (the kernel's choice) or "own, then one" (a bind failed during the run). */
const char *churn_bots_sources(const churn_bots *bs);

#endif /* REAP_CLIENT_CHURN_BOT_H */
