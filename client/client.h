/*
 * client.h - reap-client: one thin client that joins a world, spawns props, holds and leaves.
 *
 * The client keeps a mirror of the world keyed by net id (the only actor identity that goes on
 * the wire), fed by replication. Every wait has a deadline; failures come back as an exit
 * status with a message that says what went wrong (no server, refused, timed out).
 */
#ifndef REAP_CLIENT_H
#define REAP_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum {
    CLIENT_EXIT_OK = 0,
    CLIENT_EXIT_FAILED = 1,   /* the server was unreachable, refused us or timed out */
    CLIENT_EXIT_USAGE = 2,    /* bad command line or scenario file */
    CLIENT_EXIT_THRESHOLD = 99, /* churn: the run completed but a --threshold failed (as k6) */
    CLIENT_EXIT_INTERRUPTED = 105, /* churn: stopped by SIGINT/SIGTERM, report written (as k6) */
};

enum {
    CLIENT_ADMIN_TOKEN_MIN = 16,    /* the server's bounds on its --admin-token */
    CLIENT_ADMIN_TOKEN_MAX = 256,
};

typedef enum client_disconnect {
    CLIENT_DISCONNECT_GRACEFUL = 0, /* goodbye, then an ENet disconnect */
    CLIENT_DISCONNECT_ABRUPT,       /* drop the connection silently: the server sees a timeout */
    CLIENT_DISCONNECT_MIXED,        /* churn only: each leave picks one of the two at random */
} client_disconnect;

enum {
    CLIENT_BOTS_MAX = 1000,         /* churn: bots in one process */
    CLIENT_STAGES_MAX = 16,         /* churn: stages in one scenario */
    CLIENT_THRESHOLDS_MAX = 16,
    CLIENT_PROCS_MAX = 64,          /* churn: --procs */
};
#define CLIENT_DURATION_MAX 86400.0 /* churn: seconds */
#define CLIENT_CHURN_SPAWN_DEFAULT 10u
#define CLIENT_CHURN_HOLD_DEFAULT 10.0
#define CLIENT_CHURN_MOVE_HZ_DEFAULT 10.0
#define CLIENT_MOVE_HZ_MAX 60.0     /* the server's default net.MaxMoveInputsPerSecond */
#define CLIENT_PROJECTILE_HZ_MAX 20.0

/* A network impairment applied in the client to each bot's datagrams, both ways (UE's
 * PktLoss, PktLag, PktLagVariance, PktDup, PktOrder). All zero: none. */
typedef struct client_impair {
    double loss;                    /* probability a datagram is dropped */
    double latency;                 /* seconds added to each datagram, each way */
    double jitter;                  /* ... plus U(-jitter, +jitter), order kept */
    double dup;                     /* probability a datagram is delivered twice */
    double reorder;                 /* probability a datagram is held back behind later ones */
} client_impair;

#define CLIENT_IMPAIR_LATENCY_MAX 10.0  /* seconds */

/* Parses "loss=2%,latency=60ms,jitter=15ms,dup=0.5%,reorder=1%" (any subset, any order;
 * percentages with or without %, times in ms, s or us, plain numbers are ms; "none" or ""
 * for none) into out; false with a message naming the bad part. */
bool client_impair_parse(const char *text, client_impair *out, char *err, size_t err_size);
/* The canonical text of im ("none" when inactive). */
void client_impair_format(const client_impair *im, char *buf, size_t size);
bool client_impair_active(const client_impair *im);

/* What a visit spawns when it is not `spawn` props: archetypes of the server's world profile
 * by name, with a count each ("Weapon:2,Inventory:1"). */
enum { CLIENT_MIX_MAX = 8, CLIENT_MIX_NAME_MAX = 32, CLIENT_MIX_COUNT_MAX = 1000 };
typedef struct client_spawn_mix {
    char name[CLIENT_MIX_MAX][CLIENT_MIX_NAME_MAX];
    uint32_t count[CLIENT_MIX_MAX];
    uint32_t n;                     /* 0: none (spawn props) */
} client_spawn_mix;

/* Parses "NAME:N,NAME:N..." (names of letters, digits and _, N in [1, 1000], at most 8
 * entries, no name twice) or "none"; false with err naming the bad part. */
bool client_spawn_mix_parse(const char *text, client_spawn_mix *out, char *err,
                            size_t err_size);
uint32_t client_spawn_mix_total(const client_spawn_mix *m);
/* "Weapon:2,Inventory:1" ("none" when empty). */
void client_spawn_mix_format(const client_spawn_mix *m, char *buf, size_t size);

/* One stage of a churn run: for `duration` seconds the number of bots taking part goes
 * linearly from bots_from to bots_to (equal: a plateau; bots_to 0: everyone leaves at once),
 * and each visit behaves as the rest says. */
typedef struct client_stage {
    char name[32];
    double duration;
    uint32_t bots_from, bots_to;
    uint32_t spawn;                 /* props per visit */
    client_spawn_mix mix;           /* n > 0: a visit spawns these instead of `spawn` props */
    double move_hz;                 /* MoveInputs per second per bot (0: none) */
    double projectile_hz;           /* projectiles spawned per second per bot (0: none) */
    double hold;                    /* a visit holds U(0.5, 1.5) x hold seconds */
    client_disconnect leave;
    client_impair impair;           /* applied to the visits that begin in this stage */
} client_stage;

/* A pass/fail rule on one figure of the run: "join_p99<500ms", "errors==0". */
typedef enum client_cmp {
    CLIENT_CMP_LT, CLIENT_CMP_LE, CLIENT_CMP_GT, CLIENT_CMP_GE, CLIENT_CMP_EQ, CLIENT_CMP_NE,
} client_cmp;

typedef struct client_threshold {
    char text[64];                  /* as given */
    char metric[40];
    client_cmp cmp;
    double value;                   /* in the metric's base unit (seconds for times) */
    char unit[4];                   /* as written ("ms", "s", "us", "%" or ""), for display */
    double scale;                   /* base units per written unit (0.001 for ms) */
} client_threshold;

typedef struct client_options {
    char host[256];
    uint16_t port;
    char world[32];           /* "" = the server's first world */
    char name[32];
    uint32_t spawn;           /* props to spawn */
    double hold;              /* seconds to stay after spawning */
    client_disconnect disconnect;
    double timeout;           /* seconds to wait for each answer */
    bool quiet;
    /* churn (--bots N or --scenario FILE): bots join, spawn, hold and leave over and over */
    uint32_t bots;            /* 0 = one client session; else the most bots of any stage */
    double duration;          /* the sum of the stages' durations */
    double move_hz;
    double projectile_hz;
    char out_dir[512];        /* where the timeline and report go (default build/churn) */
    uint64_t seed;
    uint64_t seed_effective;  /* this shard's stream: seed + shard x the golden gamma */
    bool seed_set;            /* false: the seed comes from the clock */
    bool leak_check;          /* after the run: collect and list what outlived it (--admin) */
    bool spawn_set, hold_set; /* churn has its own defaults for these */
    client_spawn_mix spawn_mix; /* --spawn-mix */
    bool move_hz_set;
    char scenario_name[64];   /* "" = from the command line */
    char scenario_path[512];
    client_stage stages[CLIENT_STAGES_MAX];
    uint32_t n_stages;
    client_threshold thresholds[CLIENT_THRESHOLDS_MAX];
    uint32_t n_thresholds;
    char admin_url[256];      /* "" = no /metrics sampling */
    char admin_token[CLIENT_ADMIN_TOKEN_MAX + 1]; /* "" = none; sent with POST /console */
    char junit_path[512];     /* --junit FILE, "" = none */
    client_impair impair;     /* --impair: every stage's unless its scenario stage says */
    uint32_t procs;           /* --procs N: this many shard processes, merged at the end */
    uint32_t shard, shards;   /* this process is shard `shard` (0-based) of `shards` */
    int progress;             /* -1: a line in place when stdout is a terminal; 0/1: forced */
    bool help;
    bool version;
} client_options;

typedef enum client_options_result {
    CLIENT_OPTIONS_OK = 0,
    CLIENT_OPTIONS_EXIT = 1,   /* --help or --version */
    CLIENT_OPTIONS_ERROR = -1, /* err names the bad flag or value */
} client_options_result;

void client_options_default(client_options *opts);
client_options_result client_options_parse(client_options *opts, int argc, char **argv,
                                           char *err, size_t err_size);
/* Splits "HOST:PORT"; false (with a message) on a missing or bad port. */
bool client_parse_endpoint(const char *text, char *host, size_t host_size, uint16_t *out_port,
                           char *err, size_t err_size);
const char *client_options_usage(void);

/* getopt_long(3) over argv with "-:hV" (positionals come back in order as val 1), with
 * reap's messages: an unknown flag is called unknown wherever it stands, a flag whose value
 * is missing (or is the next flag) needs a value. Reset optind to 0 before the first call. */
struct option;
typedef enum client_getopt_result {
    CLIENT_GETOPT_OK = 0, CLIENT_GETOPT_END = 1, CLIENT_GETOPT_ERROR = -1,
} client_getopt_result;
client_getopt_result client_getopt(int argc, char **argv, const struct option *longopts,
                                   int *out_val, const char **out_value, char *err,
                                   size_t err_size);
/* The long options reap-client's run takes (the man page test lists them). */
const struct option *client_options_long(void);
/* Reads an admin token file (trailing newline dropped; 16-256 printable characters). */
bool client_admin_token_read(const char *path, char *out, size_t out_size, char *err,
                             size_t err_size);

/* "graceful", "abrupt" or "mixed". */
const char *client_disconnect_name(client_disconnect d);
bool client_disconnect_parse(const char *text, client_disconnect *out);

/* Parses "NAME<500ms", "NAME==0", "NAME<=0.5s"... (operators < <= > >= == !=; units ms, s, us,
 * % or none) into t; false with a message naming the text on error. */
bool client_threshold_parse(const char *text, client_threshold *t, char *err, size_t err_size);
/* value (base units) as t was written: "12.5ms". */
void client_threshold_format(const client_threshold *t, double value, char *buf, size_t size);
/* Whether value passes t. */
bool client_threshold_check(const client_threshold *t, double value);
const char *client_cmp_str(client_cmp cmp);

/* Reads an ini scenario into opts->stages (see deploy/scenarios/); errors name the file and the
 * line. */
bool client_scenario_load(client_options *opts, const char *path, char *err, size_t err_size);
/* Bots taking part at time t (seconds since the start) under the stages; and the stage index. */
uint32_t client_stages_target(const client_options *opts, double t, uint32_t *out_stage);

/* Runs one client session; progress and the summary go to out. Returns a CLIENT_EXIT_*. */
int client_run(const client_options *opts, FILE *out);

/* ---- the world mirror (by net id) ------------------------------------------------------ */

typedef struct client_mirror_entry {
    uint64_t net_id;          /* 0 = empty */
    uint32_t actor_class;
    uint32_t owner_player_id;
    uint32_t archetype;       /* class ARCHETYPE: 1 + its index in Welcome.archetypes; else 0 */
} client_mirror_entry;

typedef struct client_mirror {
    client_mirror_entry *slots;
    uint32_t capacity;        /* power of two */
    uint32_t count;
    uint64_t digest;          /* XOR of client_net_id_digest over the entries */
} client_mirror;

void client_mirror_init(client_mirror *m);
void client_mirror_free(client_mirror *m);
/* Adds, or replaces the class and owner of an entry already there (a duplicate spawn does not
 * count twice); false on allocation failure. */
bool client_mirror_put(client_mirror *m, uint64_t net_id, uint32_t actor_class,
                       uint32_t owner_player_id);
/* False (and nothing changes) when net_id is not there: a destroy for an unknown actor. */
bool client_mirror_remove(client_mirror *m, uint64_t net_id);
/* Records which archetype an entry already there is of; false when net_id is not there. */
bool client_mirror_set_archetype(client_mirror *m, uint64_t net_id, uint32_t archetype);
const client_mirror_entry *client_mirror_get(const client_mirror *m, uint64_t net_id);
/* Empties the mirror, keeping its memory. */
void client_mirror_clear(client_mirror *m);
/* The digest the server's ReplicationCheck carries: XOR over the set of splitmix64(net_id),
 * where splitmix64(x) is the finaliser of x + 0x9E3779B97F4A7C15. */
uint64_t client_net_id_digest(uint64_t net_id);
/* Entries of a class owned by a player. */
uint32_t client_mirror_count_owned(const client_mirror *m, uint32_t actor_class,
                                   uint32_t owner_player_id);

#endif /* REAP_CLIENT_H */
