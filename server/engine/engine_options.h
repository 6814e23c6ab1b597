/*
 * engine_options.h - reap-server's command line and the [Server] section of its config file.
 *
 * Precedence: a flag on the command line, then the config file, then the defaults. --cvar
 * assignments are kept as given (borrowed from argv) and applied after the config file's
 * [ConsoleVariables], so the command line wins.
 */
#ifndef REAP_ENGINE_OPTIONS_H
#define REAP_ENGINE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cvar.h"
#include "log.h"
#include "world_profile.h"

enum {
    ENGINE_OPTIONS_MAX_CVARS = 128,
    ENGINE_MAX_WORLDS = 64,
    ENGINE_MAX_PLAYERS = 4095, /* ENet's peer limit */
};

/* Bits of engine_options.given: which options the command line set. */
enum {
    ENGINE_OPT_PORT = 1u << 0,
    ENGINE_OPT_BIND = 1u << 1,
    ENGINE_OPT_WORLDS = 1u << 2,
    ENGINE_OPT_TICK_HZ = 1u << 3,
    ENGINE_OPT_MAX_PLAYERS = 1u << 4,
    ENGINE_OPT_ADMIN_PORT = 1u << 5,
    ENGINE_OPT_ADMIN_BIND = 1u << 6,
    ENGINE_OPT_LOG_LEVEL = 1u << 7,
    ENGINE_OPT_ADMIN_TOKEN = 1u << 8,
    ENGINE_OPT_LOG_FORMAT = 1u << 9,
    ENGINE_OPT_AGONES_SHUTDOWN_IDLE = 1u << 10,
    ENGINE_OPT_WORLD_PROFILE = 1u << 11,
    ENGINE_OPT_MAP = 1u << 12,
    ENGINE_OPT_MAP_ROTATION = 1u << 13,
    ENGINE_OPT_MATCH_SECONDS = 1u << 14,
    ENGINE_OPT_SEAMLESS_TRAVEL = 1u << 15,
};

enum {
    ENGINE_MAP_NAME_MAX = 32,      /* a map's name, with the NUL (a profile name) */
    ENGINE_ROTATION_MAX = 16,      /* maps in [Server] MapRotation */
};

enum {
    ENGINE_ADMIN_TOKEN_MAX = 256,  /* bytes of an admin token, at most */
    ENGINE_ADMIN_TOKEN_MIN = 16,   /* shorter tokens are refused: guessable */
};

typedef struct engine_options {
    const char *config_path;   /* borrowed from argv; NULL = none */
    char bind[64];
    uint32_t port;             /* 0 = any free port (printed at start) */
    uint32_t worlds;
    uint32_t tick_hz;
    uint32_t max_players;
    char admin_bind[64];
    uint32_t admin_port;       /* 0 = any free port */
    log_level log_level;
    log_format log_format;
    char admin_token_path[256];  /* --admin-token FILE ([Server] AdminTokenFile); "" = none */
    char admin_token[ENGINE_ADMIN_TOKEN_MAX + 1]; /* read by engine_options_load_admin_token */
    bool agones;               /* --agones (also on when AGONES_SDK_HTTP_PORT is set) */
    bool agones_alpha_players; /* --agones-player-tracking: the alpha player endpoints */
    uint32_t agones_shutdown_idle_s; /* --agones-shutdown-idle: Allocated and empty this long,
                                        Shutdown (0 = never) */
    char world_profile_path[256]; /* --world-profile FILE ([Server] WorldProfile); "" = the
                                     default profile */
    world_profile *profile;    /* read by engine_options_load_world_profile; NULL = default.
                                  Owned: engine_options_free */
    char map[ENGINE_MAP_NAME_MAX]; /* --map ([Server] Map): the first map (default Default) */
    char rotation[ENGINE_ROTATION_MAX][ENGINE_MAP_NAME_MAX]; /* [Server] MapRotation */
    uint32_t rotation_count;
    uint32_t match_seconds;    /* --match-seconds ([Server] MatchSeconds): 0 = no rotation */
    bool seamless_travel;      /* --seamless-travel ([Server] SeamlessTravel), UE's
                                  bUseSeamlessTravel */
    uint32_t config_warnings;  /* warnings the config file raised (UE keys reap ignores) */
    const char *cvars[ENGINE_OPTIONS_MAX_CVARS]; /* "NAME=VALUE", borrowed from argv */
    uint32_t cvar_count;
    uint32_t given;            /* ENGINE_OPT_* set on the command line */
    bool help;
    bool version;
} engine_options;

typedef enum engine_options_result {
    ENGINE_OPTIONS_OK = 0,
    ENGINE_OPTIONS_EXIT = 1,   /* --help or --version: print and exit 0 */
    ENGINE_OPTIONS_ERROR = -1, /* err names the bad flag or value */
} engine_options_result;

void engine_options_default(engine_options *opts);

/* Parses argv (argv[0] is the program). Accepts "--flag value" and "--flag=value". */
engine_options_result engine_options_parse(engine_options *opts, int argc, char **argv,
                                           char *err, size_t err_size);

/* Reads the ini file: [Server] keys fill options the command line did not give, and cvars are
 * set in reg with source INI: from [ConsoleVariables] in reap's own (strict) files, from UE's
 * cvar sections in a UE file (named *Engine.ini, UTF-16, or with a UE section; see
 * engine_options.c), where what reap does not know is a warning counted in config_warnings.
 * On failure err names the file, the line and the bad key or value. */
int engine_options_load_config(engine_options *opts, cvar_registry *reg, const char *path,
                               char *err, size_t err_size);

/* SIGHUP: re-reads path's cvars into reg. Values the file set before and no longer sets go back
 * to their defaults; the command line and the console keep precedence; [Server] options are
 * read for errors only (they need a restart). On failure reg is unchanged and err says why. */
int engine_options_reload_cvars(cvar_registry *reg, const char *path, char *err,
                                size_t err_size);

/* Reads the admin token: from admin_token_path, else $REAP_ADMIN_TOKEN_FILE, else
 * $REAP_ADMIN_TOKEN. Surrounding white space is dropped. No source: no token (returns 0). */
int engine_options_load_admin_token(engine_options *opts, char *err, size_t err_size);

/* Reads and checks the world profile file, if one was given, into opts->profile, and checks
 * that --map and [Server] MapRotation name its maps (or Default). On failure err names the
 * file, the line and the field, or the map and the maps there are. */
int engine_options_load_world_profile(engine_options *opts, char *err, size_t err_size);
/* Frees what the options own (the profile). */
void engine_options_free(engine_options *opts);

/* Checks the options together: an admin endpoint bound off loopback needs a token. */
int engine_options_check(const engine_options *opts, char *err, size_t err_size);

/* True if addr (IPv4 text) is in 127.0.0.0/8. */
bool engine_address_is_loopback(const char *addr);

/* Applies the --cvar assignments (source COMMAND_LINE). */
int engine_options_apply_cvars(const engine_options *opts, cvar_registry *reg, char *err,
                               size_t err_size);

/* The --help text. */
const char *engine_options_usage(void);

#endif /* REAP_ENGINE_OPTIONS_H */
