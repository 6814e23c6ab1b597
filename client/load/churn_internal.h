/*
 * churn_internal.h - what the load generator's own files share: the bots, the run, the
 * impaired network, and the server's figures sampled from its admin /metrics.
 *
 * Files: churn_run.c runs the loop and the stages; churn_bot.c is one bot's visit and its
 * messages; churn_impair.c the impaired network; churn_admin.c samples /metrics;
 * churn_leaks.c takes the leak verdict.
 */
#ifndef REAP_CLIENT_CHURN_INTERNAL_H
#define REAP_CLIENT_CHURN_INTERNAL_H

#include <enet/enet.h>
#include <uv.h>

#include "churn_run.h"
#include "churn_admin.h"
#include "churn_report.h"
#include "client_mirror.h"
#include "client_net.h"
#include "client_options.h"
#include "reap_msg.h"

enum {
    CHURN_ARENA_BYTES = 1024 * 1024,
    CHURN_OUT_BYTES = 4096,
    CHURN_SPAWN_BATCH = 50,              /* the server's default net.MaxSpawnPerRequest */
    CHURN_PORT_REST_S = 15,      /* longer than the server's net.ConnectionTimeout (10 s) */
    CHURN_PORT_TRIES = 16,       /* kernel-chosen ports tried before a visit gives up */
    CHURN_TURN_MS = 5,           /* the loop's turn: timers of every bot, rows, flushes */
    CHURN_HOST_IDLE_MS = 20,     /* a quiet host is still serviced this often (ENet's timers) */
    CHURN_SEQ_KINDS = 1 << 16,           /* sends remembered by seq, to place errors */
    CHURN_DATAGRAM_MAX = 4096,           /* ENet's largest MTU */
};

/* ---- impaired networks (churn_impair.c) --------------------------------------------------- */

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

typedef struct churn churn;
typedef struct churn_relay churn_relay;

/* One visit's relay: the socket the server sees, between it and the visit's ENet host. */
struct churn_relay {
    churn *c;
    ENetSocket socket;
    uv_poll_t poll;
    bool poll_open;           /* poll's close callback has not run */
    bool closed;              /* the visit is over: the socket goes once nothing is queued */
    uint16_t port;
    ENetAddress bot_addr;     /* the visit's ENet host, on loopback */
    const client_impair *im;  /* borrowed from the visit's stage */
    churn_impair_stream stream[2]; /* [0] towards the bot, [1] towards the server */
    uint32_t queued;          /* its datagrams waiting in the run's queue */
    churn_relay *prev, *next; /* every relay of the run that is not freed yet */
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

/* The seed of one visit's direction, from the run's seed, the bot and its visit count. */
uint64_t churn_impair_seed(uint64_t run_seed, uint32_t bot, uint32_t visit, bool up);
/* The fate of a stream's next datagram sent at now (st advances). Pure: tests drive it. */
void churn_impair_decide(const client_impair *im, churn_impair_stream *st, double now,
                         churn_fate *out);
/* A relay on a port of its own that no visit used in the last CHURN_PORT_REST_S seconds, read
 * by the run's loop; the caller sets bot_addr. NULL when no socket could be had. */
churn_relay *churn_relay_open(churn *c, const client_impair *im, uint32_t bot, uint32_t visit,
                              double now);
/* The visit is over: the relay stops reading; it is freed once its queue is delivered. */
void churn_relay_close(churn_relay *r);
void churn_relay_free_if_done(churn_relay *r);
void churn_impair_timer_cb(uv_timer_t *timer);
/* The run is over: drops what is queued and closes every relay. */
void churn_impair_close(churn *c);

typedef enum churn_bot_state {
    CHURN_BOT_IDLE = 0,   /* between visits: connects at next_at if its index is wanted */
    CHURN_BOT_CONNECTING, /* ENet connect sent */
    CHURN_BOT_HELLO,      /* hello sent, waiting for the welcome */
    CHURN_BOT_SPAWNING,   /* spawn requests sent, waiting for acks and replication */
    CHURN_BOT_HOLDING,    /* moves; checks and leaves at next_at */
    CHURN_BOT_CHECKING,   /* replication check asked, waiting for the answer */
    CHURN_BOT_LEAVING,    /* goodbye sent, waiting for the server to close */
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
    double heading, speed;
    client_mirror mirror; /* what the server replicated to this bot, by net id */
    char name[40];
} churn_bot;

/* Per-second counts for the timeline row. */
typedef struct churn_counts {
    uint32_t joins, leaves, leaves_abrupt, spawned, errors, refused;
    double lag_max;           /* the latest turn of the loop this second, seconds */
} churn_counts;

struct churn {
    const client_options *opts;
    FILE *out;
    uv_loop_t loop;           /* every bot's socket and the turn timer */
    uv_timer_t turn;
    bool loop_open, turn_open;
    double *port_rest_until;  /* per UDP port: not taken for a visit before then */
    ENetAddress addr;
    churn_bot *bots;
    uint32_t n_bots;
    uint64_t rng;
    double t0;
    uint32_t target;          /* bots the current stage wants taking part */
    uint32_t stage;
    bool stopping;            /* the duration is over: no new visits */
    bool leave_all;           /* ... and every bot is to leave now */
    double final_stats_deadline;
    uint64_t final_stats_after;
    bool fatal;               /* a failure no retry can fix: the run ends */
    bool done;                /* the loop has been told to stop */
    bool moves_unsupported;   /* the server answered MoveInput with "unexpected" */
    bool checks_unsupported;  /* ... and ReplicationCheckRequest */
    bool snapshot_supported;  /* a SnapshotComplete arrived */
    churn_counts second;
    double turn_at;           /* when the last turn ran (its lag is measured from it) */
    double row_cpu, row_wall; /* the generator's CPU time and the clock at the last row */
    churn_totals *totals;     /* owned */
    char first_error[400];
    char first_mismatch[400]; /* the first replication mismatch, in full */
    uint64_t undecodable;     /* server messages msg_decode refused (a mirror would miss them) */
    /* The server's figures: the newest stats reply (scalars copied) and when it came. */
    bool have_stats;
    Reap__StatsReply stats;
    double stats_at;
    uint64_t stats_replies;
    Reap__StatsReply first_stats;
    uint32_t peak_objects;
    uint64_t gc_collections;  /* collections seen during the run */
    uint32_t next_stats_bot;
    double next_stats_at;
    /* --admin */
    churn_admin *admin;
    churn_scrape fresh;       /* the page being read */
    churn_scrape first_scrape, prev_scrape, last_scrape, row_scrape;
    bool have_first_scrape, have_row_scrape;
    churn_server server;
    double players_sum;
    long leak_baseline;       /* objects alive at the leak mark, -1 unknown */
    churn_timeline tl;
    uint32_t rows_total;      /* ceil(duration) */
    bool progress_tty;
    uint32_t seq;
    uint8_t seq_kind[CHURN_SEQ_KINDS];
    msg_arena arena;
    void *arena_buf;
    uint8_t out_buf[CHURN_OUT_BYTES];
    /* Impaired networks */
    churn_impair_queue iq;
    uv_timer_t impair_timer;
    bool impair_timer_open;
    churn_relay *relays;
};

double churn_clock(void);
double churn_now(const churn *c);
double churn_random(churn *c);
void churn_say(churn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void churn_count_error(churn *c, churn_error kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Keeps the newest stats reply and places the collections it reveals on the timeline. */
void churn_on_stats(churn *c, const Reap__StatsReply *r, double now);
/* Asks one joined bot (round robin) for the server's stats; false when none is joined. */
bool churn_request_stats(churn *c);

/* Advances a bot whose timer or deadline may have passed. */
void churn_bot_step(churn *c, churn_bot *b, double now);
/* Services b's host: its datagrams, ENet's timers, then what the events queued. */
void churn_bot_service(churn *c, churn_bot *b);
/* Ends b's visit's host (if any): its port rests, its socket closes. */
void churn_bot_release(churn *c, churn_bot *b, double now);
void churn_on_event(churn *c, ENetEvent *ev, double now);
/* The leak verdict (churn_leaks.c), through the admin console: a mark before the first join,
 * then after the run, once every player is gone, a full collection and the objects created
 * since the mark that are still alive. */
/* False (err says why) when the mark cannot be taken: the check cannot run. */
bool churn_leaks_mark(churn *c, char *mark, size_t mark_size, char *err, size_t err_size);
void churn_leaks_verdict(churn *c, const char *mark, churn_leaks *out);

/* The process's user + system CPU time, seconds. */
double churn_cpu_seconds(void);

#endif /* REAP_CLIENT_CHURN_INTERNAL_H */
