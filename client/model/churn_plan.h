/*
 * churn_plan.h - what a churn run is asked to do, as plain data: its stages, and what each
 * visit of a stage does (props or a spawn mix, moves, projectiles, hold, how it leaves, the
 * network it sees). The command line and scenario files fill it in; the load plays it; the
 * report echoes it. Parsing and formatting the values are pure functions.
 */
#ifndef REAP_CLIENT_CHURN_PLAN_H
#define REAP_CLIENT_CHURN_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

typedef enum client_disconnect {
    CLIENT_DISCONNECT_GRACEFUL = 0, /* goodbye, then an ENet disconnect */
    CLIENT_DISCONNECT_ABRUPT,       /* drop the connection silently: the server sees a timeout */
    CLIENT_DISCONNECT_MIXED,        /* churn only: each leave picks one of the two at random */
} client_disconnect;

/* "graceful", "abrupt" or "mixed". */
const char *client_disconnect_name(client_disconnect d);
bool client_disconnect_parse(const char *text, client_disconnect *out);

/* How a bot steers its pawn while it holds (load/churn_move.c). */
typedef enum client_move_pattern {
    CLIENT_MOVE_RANDOM = 0,   /* a random walk below net.MaxPawnSpeed */
    CLIENT_MOVE_ROAM,         /* straight lines at net.MaxPawnSpeed, turning at the world's edge */
} client_move_pattern;

const char *client_move_pattern_name(client_move_pattern p);
/* "random" or "roam"; false for anything else. */
bool client_move_pattern_parse(const char *text, client_move_pattern *out);

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

/* How a stage asks the server to travel (the wire's TravelMode numbers for hard and
 * seamless; DEFAULT: the server's own, [Server] SeamlessTravel). */
typedef enum client_travel_mode {
    CLIENT_TRAVEL_DEFAULT = 0, CLIENT_TRAVEL_HARD = 1, CLIENT_TRAVEL_SEAMLESS = 2,
} client_travel_mode;

enum { CLIENT_MAP_NAME_MAX = 32 };

/* "hard", "seamless" ("default" for the server's own). */
const char *client_travel_mode_name(client_travel_mode m);
/* Parses "MAP", "MAP seamless" or "MAP hard" (MAP: 1-31 letters, digits or _); false with err
 * naming the bad part. */
bool client_travel_parse(const char *text, char *map, size_t map_size, client_travel_mode *mode,
                         char *err, size_t err_size);

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
    client_move_pattern move_pattern;
    double projectile_hz;           /* projectiles spawned per second per bot (0: none) */
    double hold;                    /* a visit holds U(0.5, 1.5) x hold seconds */
    client_disconnect leave;
    client_impair impair;           /* applied to the visits that begin in this stage */
    /* `travel = MAP [seamless|hard]`: the stage's start asks the server (its console,
     * `servertravel`) to travel to MAP; "" for none. Never inherited by the next stage. */
    char travel_map[CLIENT_MAP_NAME_MAX];
    client_travel_mode travel_mode;
} client_stage;

/* Bots taking part at time t (seconds since the start) under the stages; and the stage index. */
uint32_t client_stages_target(const client_stage *stages, uint32_t n_stages, double t,
                              uint32_t *out_stage);
/* Describes the stages' impairments into buf ("none" when no stage has one, the one
 * impairment when every stage has the same, else "STAGE: ...; STAGE: ..."). */
void churn_describe_impairment(const client_stage *stages, uint32_t n_stages, char *buf,
                               size_t size);

#endif /* REAP_CLIENT_CHURN_PLAN_H */
