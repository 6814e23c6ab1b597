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
    CLIENT_EXIT_USAGE = 2,    /* bad command line */
};

typedef enum client_disconnect {
    CLIENT_DISCONNECT_GRACEFUL = 0, /* goodbye, then an ENet disconnect */
    CLIENT_DISCONNECT_ABRUPT,       /* drop the connection silently: the server sees a timeout */
    CLIENT_DISCONNECT_MIXED,        /* churn only: each leave picks one of the two at random */
} client_disconnect;

enum {
    CLIENT_BOTS_MAX = 1000,         /* churn: bots in one process */
};
#define CLIENT_DURATION_MAX 86400.0 /* churn: seconds */
#define CLIENT_CHURN_SPAWN_DEFAULT 10u
#define CLIENT_CHURN_HOLD_DEFAULT 2.0

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
    /* churn (--bots N): N bots join, spawn, hold and leave over and over for `duration` s */
    uint32_t bots;            /* 0 = one client session */
    double duration;
    char out_dir[512];        /* where the timeline goes (default build/churn) */
    uint64_t seed;
    bool seed_set;            /* false: the seed comes from the clock */
    bool spawn_set, hold_set; /* churn has its own defaults for these */
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

/* "graceful", "abrupt" or "mixed". */
const char *client_disconnect_name(client_disconnect d);

/* Runs one client session; progress and the summary go to out. Returns a CLIENT_EXIT_*. */
int client_run(const client_options *opts, FILE *out);

/* ---- the world mirror (by net id) ------------------------------------------------------ */

typedef struct client_mirror_entry {
    uint64_t net_id;          /* 0 = empty */
    uint32_t actor_class;
    uint32_t owner_player_id;
} client_mirror_entry;

typedef struct client_mirror {
    client_mirror_entry *slots;
    uint32_t capacity;        /* power of two */
    uint32_t count;
} client_mirror;

void client_mirror_init(client_mirror *m);
void client_mirror_free(client_mirror *m);
/* Adds or replaces; false on allocation failure. */
bool client_mirror_put(client_mirror *m, uint64_t net_id, uint32_t actor_class,
                       uint32_t owner_player_id);
bool client_mirror_remove(client_mirror *m, uint64_t net_id);
const client_mirror_entry *client_mirror_get(const client_mirror *m, uint64_t net_id);
/* Entries of a class owned by a player. */
uint32_t client_mirror_count_owned(const client_mirror *m, uint32_t actor_class,
                                   uint32_t owner_player_id);

#endif /* REAP_CLIENT_H */
