/*
 * churn_internal.h - what the churn generator's own files share: the bots, the run, the
 * figures it counts (which merge across shards by addition), and the server's figures sampled
 * from its admin /metrics.
 *
 * Files: churn.c runs the loop and the stages; churn_bot.c is one bot's visit and its
 * messages; churn_admin.c samples /metrics; churn_report.c writes report.json, report.html,
 * report.dat (what `merge` reads) and summary.tsv, and evaluates the thresholds.
 */
#ifndef REAP_CLIENT_CHURN_INTERNAL_H
#define REAP_CLIENT_CHURN_INTERNAL_H

#include <enet/enet.h>
#include <uv.h>

#include "churn.h"
#include "client.h"
#include "client_net.h"
#include "hist.h"
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
    CHURN_REPORT_SCHEMA = 1,
};

/* The generator is saturated in a second when its loop used this share of a core or more (as
 * Locust warns at 90%), or a turn ran this late: its latencies then measure itself too. */
#define CHURN_SATURATED_CPU 0.9
#define CHURN_SATURATED_LAG 0.1

/* Latencies, recorded in microseconds. */
typedef enum churn_lat {
    CHURN_LAT_CONNECT = 0,   /* enet connect -> connected */
    CHURN_LAT_WELCOME,       /* hello sent -> welcome */
    CHURN_LAT_JOIN,          /* connect -> SnapshotComplete (the join snapshot has arrived) */
    CHURN_LAT_SPAWN_ACK,     /* first spawn request -> every prop acknowledged */
    CHURN_LAT_SPAWN_REPL,    /* first spawn request -> every prop replicated back */
    CHURN_LAT_RTT,           /* ping -> pong, once a second per bot */
    CHURN_LAT_CHECK,         /* replication check request -> reply */
    CHURN_LAT_LOOP_LAG,      /* how late each turn of the generator's own loop ran */
    CHURN_LAT_COUNT,
} churn_lat;

typedef enum churn_error {
    CHURN_ERR_CONNECT = 0, /* no answer to a connection request */
    CHURN_ERR_REFUSED,     /* the server rejected a request with an Error (not "full") */
    CHURN_ERR_LOST,        /* the server closed a connection we had not closed */
    CHURN_ERR_TIMEOUT,     /* no welcome, spawn ack, replication, snapshot or check in time */
    CHURN_ERR_LEAVE,       /* the server did not close the connection after our goodbye */
    CHURN_ERR_MISMATCH,    /* a bot's mirror differed from the server's replication check */
    CHURN_ERR_COUNT,
} churn_error;

extern const char *const churn_lat_names[CHURN_LAT_COUNT];
extern const char *const churn_error_keys[CHURN_ERR_COUNT];
extern const char *const churn_error_names[CHURN_ERR_COUNT];

/* What a run counts. Every field merges across shards by addition. */
typedef struct churn_totals {
    uint64_t joins, leaves, leaves_abrupt, spawned, projectiles, moves, checks, snapshots;
    uint64_t unknown_destroys;   /* destroys for a net id the bot did not hold */
    uint64_t refused;            /* "server full" answers: the server working as designed */
    uint64_t gen_cpu_us;         /* the generator's own CPU time */
    uint64_t gen_seconds;        /* seconds (timeline rows) it was measured over */
    uint64_t gen_saturated;      /* ... of which it was saturated (see churn_row_saturated) */
    /* Datagrams through an impairment (churn_impair.c) and what befell them. */
    uint64_t impair_datagrams, impair_dropped, impair_duplicated, impair_reordered;
    uint64_t errors[CHURN_ERR_COUNT];
    hist lat[CHURN_LAT_COUNT];
} churn_totals;

uint64_t churn_totals_errors(const churn_totals *t);
void churn_totals_init(churn_totals *t);
void churn_totals_merge(churn_totals *dst, const churn_totals *src);

/* The server's figures over the run, from its /metrics (negative: not exported). */
typedef enum churn_phase {
    CHURN_PHASE_NET = 0, CHURN_PHASE_WORLD, CHURN_PHASE_REPL, CHURN_PHASE_GC, CHURN_PHASE_COUNT,
} churn_phase;

extern const char *const churn_phase_names[CHURN_PHASE_COUNT];

typedef struct churn_server {
    bool have;                   /* two scrapes or more: the figures below are deltas */
    uint32_t scrapes, scrape_errors;
    double seconds;              /* between the first and the last scrape */
    double frames;
    double tick_p50, tick_p99, tick_max;   /* seconds; tick_max is a bucket's upper bound */
    double phase_p99[CHURN_PHASE_COUNT];
    double collections;
    double gc_work_p99, gc_work_max, gc_work_sum;
    double bytes_sent;
    double players_mean;
    double cpu_seconds;
    double objects_first, objects_last, objects_peak;
    double rss_peak;
} churn_server;

void churn_server_init(churn_server *s);

/* ---- /metrics sampling (churn_admin.c) ------------------------------------------------- */

typedef struct churn_metric {
    char *key;                   /* name{labels} exactly as exported */
    double value;
} churn_metric;

typedef struct churn_scrape {
    double t;                    /* seconds since the run's start */
    churn_metric *metrics;       /* owned, sorted by key */
    uint32_t n;
} churn_scrape;

/* Parses a Prometheus text page into s (replacing its metrics); false on no sample at all. */
bool churn_scrape_parse(churn_scrape *s, const char *text);
void churn_scrape_free(churn_scrape *s);
/* Deep copy; false (dst empty) on allocation failure. */
bool churn_scrape_copy(churn_scrape *dst, const churn_scrape *src);
/* The value of key, or NAN. */
double churn_scrape_get(const churn_scrape *s, const char *key);
/* Sum over every sample whose key is name or starts with "name{". NAN when there is none. */
double churn_scrape_sum(const churn_scrape *s, const char *name);
/* Percentile p of histogram `name` (samples matching `label`, e.g. phase="net", or NULL)
 * between two scrapes (a == NULL: since the server's start), interpolated in the bucket as
 * Prometheus' histogram_quantile does; NAN when the histogram is absent or empty. With p =
 * 100, the upper bound of the highest bucket that gained a sample. */
double churn_scrape_quantile(const churn_scrape *a, const churn_scrape *b, const char *name,
                             const char *label, double p);

typedef struct churn_admin churn_admin;

/* url: http://HOST:PORT[/path] (default path /metrics). NULL with a message on a bad URL. */
churn_admin *churn_admin_create(const char *url, char *err, size_t err_size);
void churn_admin_destroy(churn_admin *a);
/* Every request carries 'Authorization: Bearer token' (copied; "" or NULL: none). */
void churn_admin_set_token(churn_admin *a, const char *token);
/* Non-blocking: starts a GET when none is running and `now` is past the next due time, and
 * advances the one running. Returns true when a page was completed into out (t = now). */
bool churn_admin_poll(churn_admin *a, double now, churn_scrape *out);
/* Blocking with a deadline: one GET of path (e.g. "/metrics") or a POST of body to /console.
 * Returns a malloc'ed body (caller frees) or NULL with err set. */
char *churn_admin_request(const churn_admin *a, const char *method, const char *path,
                          const char *body, double timeout, char *err, size_t err_size);

/* ---- the run's report (churn_report.c) ------------------------------------------------- */

typedef struct churn_leaks {
    bool checked;                /* a verdict was asked for (needs --admin) */
    bool supported;              /* the server knows `gc leaks` */
    long baseline, after;        /* objects before the first join and after the final gc */
    long leaked;                 /* objects created during the run still alive, -1 unknown */
    char *detail;                /* owned: the server's listing, by class with chains */
} churn_leaks;

typedef struct churn_report {
    int schema;
    char run_id[64];
    char start_time[32];         /* ISO 8601, UTC */
    char host[128];
    char scenario[64];
    char server[300];
    char impairment[300];        /* "none", one impairment, or "STAGE: ...; STAGE: ..." */
    uint64_t seed;
    uint32_t shard, shards;      /* shards: how many processes were merged into this */
    uint32_t bots;
    double duration, elapsed;
    churn_totals totals;
    churn_server server_figs;
    churn_leaks leaks;
    bool interrupted;            /* stopped early by SIGINT or SIGTERM */
    churn_timeline *tl;          /* borrowed */
    const client_options *opts;  /* borrowed: thresholds, stages */
} churn_report;

/* The figure a threshold names, in base units; false if the name is unknown, NAN if not
 * measured. */
bool churn_report_metric(const churn_report *r, const char *name, double *out);
/* Evaluates opts' thresholds: prints a table to out; returns how many failed. */
uint32_t churn_report_thresholds(const churn_report *r, FILE *out);
bool churn_report_save(const churn_report *r, const char *dir, char *err, size_t err_size);
/* Reads DIR/report.json into r (rows, collections and samples into tl; the run's thresholds
 * into thresholds, at most max, their count in *out_n); false with a message naming the file
 * and what is wrong (churn_report_load.c). */
bool churn_report_load(churn_report *r, churn_timeline *tl, client_threshold *thresholds,
                       uint32_t max_thresholds, uint32_t *out_n_thresholds, const char *dir,
                       char *err, size_t err_size);
/* Writes the thresholds' verdict (and the leak check's) as JUnit XML to path; false with a
 * message naming the file. */
bool churn_report_write_junit(const churn_report *r, const char *path, char *err,
                              size_t err_size);
/* The self-contained page (churn_report_html.c). */
bool churn_report_write_html(const churn_report *r, FILE *f);
/* Describes the stages' impairments into buf ("none" when no stage has one). */
void churn_describe_impairment(const client_options *o, char *buf, size_t size);
/* Writes one summary line per figure to out (what `make loadbench` and people read). */
void churn_report_print(const churn_report *r, FILE *out);


/* ---- comparing two runs (churn_compare.c) ---------------------------------------------- */

typedef enum churn_verdict {
    CHURN_VERDICT_SAME = 0, CHURN_VERDICT_BETTER, CHURN_VERDICT_WORSE, CHURN_VERDICT_UNMEASURED,
    CHURN_VERDICT_COUNT,
} churn_verdict;

extern const char *const churn_verdict_names[CHURN_VERDICT_COUNT];

/* One run's figure and the interval its measurement cannot tell apart (lo <= v <= hi; hi is
 * INFINITY when too few samples bound it). Times in seconds. */
typedef struct churn_compare_value {
    bool have;
    double v, lo, hi;
    uint64_t n;                  /* samples behind it */
} churn_compare_value;

/* stat: "pN" (a percentile), "mean" or "max" of a latency histogram (microseconds). */
void churn_compare_value_hist(const hist *h, const char *stat, churn_compare_value *out);
/* A server time quantile p (100: max) over `frames` frames, from the server's buckets;
 * seconds < 0 or NAN: not measured. */
void churn_compare_value_server_time(double seconds, double frames, double p,
                                     churn_compare_value *out);
void churn_compare_value_count(double count, churn_compare_value *out);
void churn_compare_value_exact(double v, churn_compare_value *out);
/* Better or worse only when the change ((new - base) / base, into *out_change) is beyond the
 * tolerance and the intervals do not overlap; *out_why says why a change is "same". */
churn_verdict churn_compare_judge(const churn_compare_value *base, const churn_compare_value *nv,
                                  bool higher_is_better, double tolerance, double *out_change,
                                  const char **out_why);
/* "5%" or "0.05"; false on anything else or outside [0, 100]. */
bool churn_compare_tolerance_parse(const char *text, double *out);

/* ---- the bots and the run (churn.c, churn_bot.c) --------------------------------------- */

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

/* --procs N (churn_procs.c): forks N shards of the run, waits for them, merges their reports
 * into opts->out_dir and evaluates the thresholds there. Returns a CLIENT_EXIT_*. */
int churn_run_procs(const client_options *opts, FILE *out);

/* Whether a row's generator figures say it was saturated that second. */
bool churn_row_saturated(const churn_row *row);
/* The process's user + system CPU time, seconds. */
double churn_cpu_seconds(void);

/* The checks of a reply against a mirror: true when they agree (see ReplicationCheck). */
bool churn_check_matches(const client_mirror *m, const Reap__ReplicationCheck *r);

#endif /* REAP_CLIENT_CHURN_INTERNAL_H */
