/*
 * client_options.h - what one run of reap-client is asked to do: the session's settings, and
 * for the churn load generator its plan (the stages), thresholds, the server's admin
 * endpoint, shards and output. Plain data, as k6's lib.Options: the command line
 * (cli/cli.h) fills it in, the load plays it.
 */
#ifndef REAP_CLIENT_OPTIONS_H
#define REAP_CLIENT_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "churn_plan.h"
#include "churn_threshold.h"
#include "client_session.h"

#define CLIENT_CHECKPOINT_DEFAULT 10.0  /* seconds */
#define CLIENT_CHECKPOINT_MAX 3600.0

enum {
    CLIENT_ADMIN_TOKEN_MIN = 16,    /* the server's bounds on its --admin-token */
    CLIENT_ADMIN_TOKEN_MAX = 256,
};

/* --source-addresses: where the bots' datagrams come from (client_ports.h says why). */
typedef enum client_source_mode {
    CLIENT_SOURCE_AUTO = 0,   /* each bot its own loopback address when the server is on
                               * loopback (127/8), else the kernel's choice */
    CLIENT_SOURCE_ONE,        /* every bot from the kernel-chosen address */
} client_source_mode;

typedef struct client_options {
    /* The server, the world, the answers' timeout, and what the one-client mode does (the
     * churn takes its defaults for the first stage from spawn, hold and disconnect). */
    client_session_options session;
    /* churn (--bots N or --scenario FILE): bots join, spawn, hold and leave over and over */
    uint32_t bots;            /* 0 = one client session; else the most bots of any stage */
    double duration;          /* the sum of the stages' durations */
    double move_hz;
    client_move_pattern move_pattern; /* --move-pattern */
    double projectile_hz;
    char out_dir[512];        /* where the timeline and report go (default build/churn) */
    double checkpoint_period; /* seconds between report.json checkpoints; 0: none */
    double match_seconds;     /* scenario: the rotation the server is expected to run; 0: none */
    bool checkpoint_set;      /* --checkpoint was given: a scenario's key does not win */
    uint64_t seed;
    uint64_t seed_effective;  /* this shard's stream: seed + shard x the golden gamma */
    bool seed_set;            /* false: the seed comes from the clock */
    bool leak_check;          /* after the run: collect and list what outlived it (--admin) */
    bool spawn_set, hold_set; /* churn has its own defaults for these */
    client_spawn_mix spawn_mix; /* --spawn-mix */
    bool move_hz_set, move_pattern_set;
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
    client_source_mode source_addresses; /* --source-addresses */
    bool source_addresses_set; /* ... was given: a scenario's key does not win */
    uint32_t procs;           /* --procs N: this many shard processes, merged at the end */
    uint32_t shard, shards;   /* this process is shard `shard` (0-based) of `shards` */
    int progress;             /* -1: a line in place when stdout is a terminal; 0/1: forced */
    bool help;
    bool version;
} client_options;

void client_options_default(client_options *opts);
/* "auto" or "one"; false (out untouched) for anything else. */
bool client_source_mode_parse(const char *text, client_source_mode *out);
/* The mode's name as --source-addresses takes it. */
const char *client_source_mode_name(client_source_mode m);

#endif /* REAP_CLIENT_OPTIONS_H */
