/*
 * engine_options.c - command-line flags and the config file (inih).
 */
#include "engine_options.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "text_uint.h"
#include "ue_ini.h"
#include "vec.h"

static const char engine_usage[] =
    "usage: reap-server [options]\n"
    "\n"
    "A headless dedicated game server whose worlds are managed by an incremental,\n"
    "UE5-style garbage collector.\n"
    "\n"
    "options:\n"
    "  --config FILE         ini file: [Server] options and [ConsoleVariables] cvars\n"
    "  --port N              UDP port for players (default 7777; 0 = any free port)\n"
    "  --bind ADDR           address to listen on (default 0.0.0.0)\n"
    "  --worlds N            number of worlds, World0..World<N-1> (default 1, max 64)\n"
    "  --tick-hz N           frames per second (default 30, 1..1000)\n"
    "  --max-players N       connections accepted at once (default 64, max 4095)\n"
    "  --admin-port N        admin HTTP port (default 7780; 0 = any free port)\n"
    "  --admin-bind ADDR     admin HTTP address (default 127.0.0.1; any other address\n"
    "                        needs --admin-token)\n"
    "  --admin-token FILE    file holding the token POST /console needs as\n"
    "                        'Authorization: Bearer TOKEN' (or $REAP_ADMIN_TOKEN_FILE,\n"
    "                        $REAP_ADMIN_TOKEN); at least 16 characters\n"
    "  --cvar NAME=VALUE     set a console variable (repeatable; overrides the config file)\n"
    "  --world-profile FILE  the archetypes clients may spawn: [archetype NAME] sections\n"
    "                        (deploy/profiles/; default: Prop and Projectile only), and\n"
    "                        the maps: [map NAME] sections\n"
    "  --map NAME            the map to start with (default Default: the world the profile\n"
    "                        and the cvars describe)\n"
    "  --map-rotation A,B,.. the maps a match cycle travels through, in order\n"
    "                        (default: the start map alone)\n"
    "  --match-seconds N     travel to the next map of the rotation every N seconds\n"
    "                        (default 0 = no rotation; the console's servertravel works\n"
    "                        anyway)\n"
    "  --seamless-travel B   travel seamlessly (UE's bUseSeamlessTravel): players stay\n"
    "                        connected through an empty transition map (default false:\n"
    "                        hard travel, clients reconnect)\n"
    "  --log-level LEVEL     debug, info, warn or error (default info)\n"
    "  --log-format FORMAT   text or json (one object per line) (default text)\n"
    "  --agones              report to the Agones SDK sidecar (on by itself when\n"
    "                        AGONES_SDK_HTTP_PORT is set)\n"
    "  --agones-player-tracking  track players with Agones' alpha player endpoints\n"
    "                        instead of the 'players' list\n"
    "  --agones-shutdown-idle SECONDS  with Agones: once Allocated, ask for Shutdown\n"
    "                        after SECONDS with no player (default 0 = never)\n"
    "  -h, --help            print this help and exit\n"
    "  -V, --version         print the version and exit\n"
    "\n"
    "admin endpoint: GET /metrics, GET /healthz, POST /console (one command per request).\n"
    "SIGINT/SIGTERM: say goodbye to clients, run a full purge, exit 0. SIGHUP: re-read the\n"
    "config file's console variables. SIGUSR1: log a status line. Under Agones, 'quit' asks\n"
    "for Shutdown and the server stays up until SIGTERM.\n"
    "config files: reap's own (deploy/reap.ini) are strict; a file named *Engine.ini, in\n"
    "UTF-16, or with a [/Script/...], [SystemSettings], [Core.*], [URL] or\n"
    "[OnlineSubsystem*] section is read as Unreal Engine reads it (README: Configuration).\n"
    "\n"
    "exit status: 0 after a clean stop; 1 when start-up fails (a port in use, for instance); 2\n"
    "for a bad flag, config file, cvar, admin token or map (systemd does not restart it); 3\n"
    "when a travel leaked a world and Engine.VerifyLoadMapWorldCleanup.Severity is 3.\n";

const char *engine_options_usage(void)
{
    return engine_usage;
}

void engine_options_default(engine_options *opts)
{
    memset(opts, 0, sizeof *opts);
    snprintf(opts->bind, sizeof opts->bind, "0.0.0.0");
    opts->port = 7777;
    opts->worlds = 1;
    opts->tick_hz = 30;
    opts->max_players = 64;
    snprintf(opts->admin_bind, sizeof opts->admin_bind, "127.0.0.1");
    opts->admin_port = 7780;
    opts->log_level = LOG_INFO;
}

/* One option's name, range and where it goes; shared by the flag parser and the ini reader. */
typedef struct engine_option_def {
    const char *flag;     /* without the leading dashes */
    const char *ini_key;  /* [Server] key */
    uint32_t bit;
    uint32_t min, max;    /* numbers; max == 0 marks a string option */
} engine_option_def;

static const engine_option_def engine_option_defs[] = {
    { "port", "Port", ENGINE_OPT_PORT, 0, 65535 },
    { "bind", "Bind", ENGINE_OPT_BIND, 0, 0 },
    { "worlds", "Worlds", ENGINE_OPT_WORLDS, 1, ENGINE_MAX_WORLDS },
    { "tick-hz", "TickHz", ENGINE_OPT_TICK_HZ, 1, 1000 },
    { "max-players", "MaxPlayers", ENGINE_OPT_MAX_PLAYERS, 1, ENGINE_MAX_PLAYERS },
    { "admin-port", "AdminPort", ENGINE_OPT_ADMIN_PORT, 0, 65535 },
    { "admin-bind", "AdminBind", ENGINE_OPT_ADMIN_BIND, 0, 0 },
    { "log-level", "LogLevel", ENGINE_OPT_LOG_LEVEL, 0, 0 },
    { "log-format", "LogFormat", ENGINE_OPT_LOG_FORMAT, 0, 0 },
    { "admin-token", "AdminTokenFile", ENGINE_OPT_ADMIN_TOKEN, 0, 0 },
    { "agones-shutdown-idle", "AgonesShutdownIdle", ENGINE_OPT_AGONES_SHUTDOWN_IDLE, 0,
      604800 },
    { "world-profile", "WorldProfile", ENGINE_OPT_WORLD_PROFILE, 0, 0 },
    { "map", "Map", ENGINE_OPT_MAP, 0, 0 },
    { "map-rotation", "MapRotation", ENGINE_OPT_MAP_ROTATION, 0, 0 },
    { "match-seconds", "MatchSeconds", ENGINE_OPT_MATCH_SECONDS, 0, 604800 },
    { "seamless-travel", "SeamlessTravel", ENGINE_OPT_SEAMLESS_TRAVEL, 0, 0 },
};

/* A map's name as a profile spells it: 1-31 letters, digits or _. */
static bool engine_map_name_ok(const char *s, size_t n)
{
    if (n == 0 || n >= ENGINE_MAP_NAME_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            return false;
    return true;
}

/* "A, B, C" into opts->rotation. */
static bool engine_rotation_store(engine_options *opts, const char *value, const char *what,
                                  char *err, size_t err_size)
{
    const char *s = value;
    uint32_t n = 0;

    while (*s != '\0') {
        const char *end;
        size_t len;

        while (*s == ' ' || *s == '\t')
            s++;
        end = s + strcspn(s, ",");
        len = (size_t)(end - s);
        while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
            len--;
        if (!engine_map_name_ok(s, len)) {
            snprintf(err, err_size, "bad value '%s' for %s: expected map names separated by "
                     "commas (each 1-%d letters, digits or _)", value, what,
                     ENGINE_MAP_NAME_MAX - 1);
            return false;
        }
        if (n >= ENGINE_ROTATION_MAX) {
            snprintf(err, err_size, "bad value '%s' for %s: more than %d maps", value, what,
                     ENGINE_ROTATION_MAX);
            return false;
        }
        memcpy(opts->rotation[n], s, len);
        opts->rotation[n][len] = '\0';
        n++;
        s = *end == ',' ? end + 1 : end;
    }
    if (n == 0) {
        snprintf(err, err_size, "bad value '%s' for %s: expected at least one map", value, what);
        return false;
    }
    opts->rotation_count = n;
    return true;
}

#define ENGINE_OPTION_COUNT (sizeof engine_option_defs / sizeof engine_option_defs[0])

/* Stores value for def; on failure writes a message naming `what` (the flag or ini key). */
static bool engine_option_store(engine_options *opts, const engine_option_def *def,
                                const char *value, const char *what, char *err,
                                size_t err_size)
{
    uint32_t n = 0;
    char *dst = NULL;
    size_t dst_size = 0;

    switch (def->bit) {
    case ENGINE_OPT_BIND: dst = opts->bind; dst_size = sizeof opts->bind; break;
    case ENGINE_OPT_ADMIN_BIND: dst = opts->admin_bind; dst_size = sizeof opts->admin_bind; break;
    case ENGINE_OPT_LOG_LEVEL:
        if (!log_level_parse(value, &opts->log_level)) {
            snprintf(err, err_size, "bad value '%s' for %s: expected debug, info, warn or error",
                     value, what);
            return false;
        }
        return true;
    case ENGINE_OPT_LOG_FORMAT:
        if (strcmp(value, "text") == 0)
            opts->log_format = LOG_FORMAT_TEXT;
        else if (strcmp(value, "json") == 0)
            opts->log_format = LOG_FORMAT_JSON;
        else {
            snprintf(err, err_size, "bad value '%s' for %s: expected text or json", value, what);
            return false;
        }
        return true;
    case ENGINE_OPT_ADMIN_TOKEN:
        if (value[0] == '\0' || strlen(value) >= sizeof opts->admin_token_path) {
            snprintf(err, err_size, "bad value '%s' for %s: expected a file name", value, what);
            return false;
        }
        snprintf(opts->admin_token_path, sizeof opts->admin_token_path, "%s", value);
        return true;
    case ENGINE_OPT_MAP:
        if (!engine_map_name_ok(value, strlen(value))) {
            snprintf(err, err_size, "bad value '%s' for %s: expected a map's name (1-%d "
                     "letters, digits or _)", value, what, ENGINE_MAP_NAME_MAX - 1);
            return false;
        }
        snprintf(opts->map, sizeof opts->map, "%s", value);
        return true;
    case ENGINE_OPT_MAP_ROTATION:
        return engine_rotation_store(opts, value, what, err, err_size);
    case ENGINE_OPT_SEAMLESS_TRAVEL:
        if (strcasecmp(value, "true") == 0 || strcmp(value, "1") == 0 ||
            strcasecmp(value, "yes") == 0)
            opts->seamless_travel = true;
        else if (strcasecmp(value, "false") == 0 || strcmp(value, "0") == 0 ||
                 strcasecmp(value, "no") == 0)
            opts->seamless_travel = false;
        else {
            snprintf(err, err_size, "bad value '%s' for %s: expected true or false", value,
                     what);
            return false;
        }
        return true;
    case ENGINE_OPT_WORLD_PROFILE:
        if (value[0] == '\0' || strlen(value) >= sizeof opts->world_profile_path) {
            snprintf(err, err_size, "bad value '%s' for %s: expected a file name", value, what);
            return false;
        }
        snprintf(opts->world_profile_path, sizeof opts->world_profile_path, "%s", value);
        return true;
    default: break;
    }
    if (dst != NULL) {
        struct in_addr addr;
        if (value[0] == '\0' || strlen(value) >= dst_size || inet_pton(AF_INET, value, &addr) != 1) {
            snprintf(err, err_size, "bad value '%s' for %s: expected an IPv4 address", value,
                     what);
            return false;
        }
        snprintf(dst, dst_size, "%s", value);
        return true;
    }
    if (!text_uint(value, def->min, def->max, &n)) {
        snprintf(err, err_size, "bad value '%s' for %s: expected an integer in [%u, %u]", value,
                 what, def->min, def->max);
        return false;
    }
    switch (def->bit) {
    case ENGINE_OPT_PORT: opts->port = n; break;
    case ENGINE_OPT_WORLDS: opts->worlds = n; break;
    case ENGINE_OPT_TICK_HZ: opts->tick_hz = n; break;
    case ENGINE_OPT_MAX_PLAYERS: opts->max_players = n; break;
    case ENGINE_OPT_ADMIN_PORT: opts->admin_port = n; break;
    case ENGINE_OPT_AGONES_SHUTDOWN_IDLE: opts->agones_shutdown_idle_s = n; break;
    case ENGINE_OPT_MATCH_SECONDS: opts->match_seconds = n; break;
    default: break;
    }
    return true;
}

/* The flags for getopt_long(3): the table's options (val = ENGINE_OPTION_VAL + index), then
 * the switches and the two repeatable ones. */
enum {
    ENGINE_OPTION_VAL = 256,
    ENGINE_OPT_VAL_CONFIG = 512, ENGINE_OPT_VAL_CVAR, ENGINE_OPT_VAL_AGONES,
    ENGINE_OPT_VAL_AGONES_TRACKING,
};

static void engine_long_options(struct option *out)
{
    size_t n = 0;

    for (size_t d = 0; d < ENGINE_OPTION_COUNT; d++)
        out[n++] = (struct option){ engine_option_defs[d].flag, required_argument, NULL,
                                    ENGINE_OPTION_VAL + (int)d };
    out[n++] = (struct option){ "config", required_argument, NULL, ENGINE_OPT_VAL_CONFIG };
    out[n++] = (struct option){ "cvar", required_argument, NULL, ENGINE_OPT_VAL_CVAR };
    out[n++] = (struct option){ "agones", no_argument, NULL, ENGINE_OPT_VAL_AGONES };
    out[n++] = (struct option){ "agones-player-tracking", no_argument, NULL,
                                ENGINE_OPT_VAL_AGONES_TRACKING };
    out[n++] = (struct option){ "help", no_argument, NULL, 'h' };
    out[n++] = (struct option){ "version", no_argument, NULL, 'V' };
    out[n] = (struct option){ NULL, 0, NULL, 0 };
}

/* getopt_long's answer as reap words it: unknown wherever it stands, a missing value (or the
 * next flag where the value should be) "needs a value", a switch given one "takes no value". */
static bool engine_getopt_error(int val, int argc, char **argv, const char *flag,
                                char *err, size_t err_size)
{
    const char *arg = optind - 1 >= 1 && optind - 1 < argc ? argv[optind - 1] : "?";
    int len = (int)strcspn(arg, "=");

    if (val == 1)
        snprintf(err, err_size, "unexpected argument '%s' (try --help)", optarg);
    else if (val != '?' && val != ':')
        snprintf(err, err_size, "option '--%s' needs a value (try --help): '%s' is an option",
                 flag, optarg);
    else if (strncmp(arg, "--", 2) != 0)
        snprintf(err, err_size, val == ':' ? "option '-%c' needs a value (try --help)" :
                 "unknown option '-%c' (try --help)", optopt);
    else if (val == ':')
        snprintf(err, err_size, "option '%.*s' needs a value (try --help)", len, arg);
    else if (optopt != 0 && arg[len] == '=')
        snprintf(err, err_size, "option '%.*s' takes no value", len, arg);
    else
        snprintf(err, err_size, "unknown option '%.*s' (try --help)", len, arg);
    return false;
}

engine_options_result engine_options_parse(engine_options *opts, int argc, char **argv,
                                           char *err, size_t err_size)
{
    struct option longopts[ENGINE_OPTION_COUNT + 7];
    int val, idx;

    engine_long_options(longopts);
    optind = 0; /* glibc: start over (tests parse several command lines) */
    opterr = 0;
    while (idx = -1, (val = getopt_long(argc, argv, "-:hV", longopts, &idx)) != -1) {
        const char *value = optarg, *flag = idx >= 0 ? longopts[idx].name : "";

        if (val == 1 || val == '?' || val == ':')
            return engine_getopt_error(val, argc, argv, flag, err, err_size),
                   ENGINE_OPTIONS_ERROR;
        /* value == argv[optind - 1]: it was the next argument, not after '=' */
        if (value != NULL && value == argv[optind - 1] && strncmp(value, "--", 2) == 0 &&
            value[2] != '\0')
            return engine_getopt_error(val, argc, argv, flag, err, err_size),
                   ENGINE_OPTIONS_ERROR;
        switch (val) {
        case 'h': opts->help = true; continue;
        case 'V': opts->version = true; continue;
        case ENGINE_OPT_VAL_AGONES: opts->agones = true; continue;
        case ENGINE_OPT_VAL_AGONES_TRACKING: opts->agones = opts->agones_alpha_players = true;
            continue;
        default: break;
        }
        if (val == ENGINE_OPT_VAL_CONFIG) {
            opts->config_path = value;
            continue;
        }
        if (val == ENGINE_OPT_VAL_CVAR) {
            if (opts->cvar_count >= ENGINE_OPTIONS_MAX_CVARS) {
                snprintf(err, err_size, "too many --cvar options (at most %d)",
                         ENGINE_OPTIONS_MAX_CVARS);
                return ENGINE_OPTIONS_ERROR;
            }
            if (strchr(value, '=') == NULL) {
                snprintf(err, err_size, "bad value '%s' for --cvar: expected NAME=VALUE", value);
                return ENGINE_OPTIONS_ERROR;
            }
            opts->cvars[opts->cvar_count++] = value;
            continue;
        }
        {
            const engine_option_def *def = &engine_option_defs[val - ENGINE_OPTION_VAL];
            char what[80];

            snprintf(what, sizeof what, "--%s", flag);
            if (!engine_option_store(opts, def, value, what, err, err_size))
                return ENGINE_OPTIONS_ERROR;
            opts->given |= def->bit;
        }
    }
    return opts->help || opts->version ? ENGINE_OPTIONS_EXIT : ENGINE_OPTIONS_OK;
}

/* ---- the config file ------------------------------------------------------------------ */

/* A file is read one of two ways. reap's own files (deploy/reap.ini: only [Server] and
 * [ConsoleVariables]) are strict: an unknown section, key or value, a key given twice or a
 * line too long stops the server. A file is Unreal Engine's when its name ends in
 * "Engine.ini" (DefaultEngine.ini, WindowsEngine.ini...), when it is UTF-16, or when it holds
 * a section only UE files have ([/Script/...], [SystemSettings], [Core.*], [URL],
 * [OnlineSubsystem*]); it is then read as UE reads it (ue_ini.h), and what reap does not know
 * is a warning. Only its [Server] section stays strict. */

enum {
    ENGINE_CONFIG_MAX_BYTES = 16 << 20, /* real DefaultEngine.ini files are under 100 KB */
};

/* The sections of a UE file that hold cvars, in the order they apply: UE sets the project
 * settings (ECVF_SetByProjectSetting) below [ConsoleVariables] and [SystemSettings]
 * (ECVF_SetBySystemSettingsIni, applied in that order, so [SystemSettings] wins a tie). */
typedef enum engine_ue_slot {
    ENGINE_UE_SLOT_GC_SETTINGS,
    ENGINE_UE_SLOT_STREAMING_SETTINGS,
    ENGINE_UE_SLOT_CONSOLE_VARIABLES,
    ENGINE_UE_SLOT_SYSTEM_SETTINGS,
    ENGINE_UE_SLOT_COUNT,
} engine_ue_slot;

static const char *const engine_ue_slot_sections[ENGINE_UE_SLOT_COUNT] = {
    "/Script/Engine.GarbageCollectionSettings",
    "/Script/Engine.StreamingSettings",
    "ConsoleVariables",
    "SystemSettings",
};

/* One Key=Value pair of a UE cvar section, as UE's config keeps it (a multimap per section). */
typedef struct engine_ue_pair {
    engine_ue_slot slot;
    int line;
    bool alive;
    char *key;
    char *value;
} engine_ue_pair;

typedef struct engine_ini_ctx {
    engine_options *opts;
    cvar_registry *reg;
    const char *path;
    const char *text;      /* the whole file, UTF-8 */
    size_t pos;            /* the reap reader's place in text */
    int line;              /* the line being read (1-based) */
    char *err;
    size_t err_size;
    bool failed;
    char **seen;           /* "section\nkey" of every key so far, to find duplicates */
    size_t seen_count, seen_cap;
    /* UE files only */
    char **warned;         /* sections warned about once */
    size_t warned_count, warned_cap;
    engine_ue_pair *pairs;
    size_t pair_count, pair_cap;
} engine_ini_ctx;

static void engine_ini_fail(engine_ini_ctx *ctx, const char *fmt, const char *a, const char *b)
{
    char msg[300];

    if (ctx->failed)
        return;
    snprintf(msg, sizeof msg, fmt, a, b);
    snprintf(ctx->err, ctx->err_size, "%s:%d: %s", ctx->path, ctx->line, msg);
    ctx->failed = true;
}

static void engine_ini_warn(engine_ini_ctx *ctx, const char *fmt, const char *a, const char *b)
{
    char msg[300];

    snprintf(msg, sizeof msg, fmt, a, b);
    log_warn("%s:%d: %s", ctx->path, ctx->line, msg);
    ctx->opts->config_warnings++;
}

/* Adds s to the string set (case-insensitive); true if it was there already. */
static bool engine_string_set_add(char ***set, size_t *count, size_t *cap, const char *s)
{
    char *copy;

    for (size_t i = 0; i < *count; i++)
        if (strcasecmp((*set)[i], s) == 0)
            return true;
    copy = strdup(s);
    if (copy == NULL || !vec_grow((void **)set, cap, *count + 1, sizeof **set, 32)) {
        free(copy);
        return false;
    }
    (*set)[(*count)++] = copy;
    return false;
}

static void engine_string_set_free(char **set, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(set[i]);
    free(set);
}

/* Remembers section/name; true if it was seen before. */
static bool engine_ini_seen_before(engine_ini_ctx *ctx, const char *section, const char *name)
{
    char key[512];

    snprintf(key, sizeof key, "%s\n%s", section, name);
    return engine_string_set_add(&ctx->seen, &ctx->seen_count, &ctx->seen_cap, key);
}

/* inih's line reader over the file's text, so that a line too long for inih's buffer is an
 * error rather than silently cut in two, and so that the handler knows its line. */
static char *engine_ini_reader(char *str, int num, void *stream)
{
    engine_ini_ctx *ctx = stream;
    const char *p = ctx->text + ctx->pos;
    int len = 0;

    if (ctx->failed || *p == '\0')
        return NULL;
    while (len < num - 1 && p[len] != '\0') {
        str[len] = p[len];
        if (p[len++] == '\n')
            break;
    }
    ctx->pos += (size_t)len;
    ctx->line++;
    str[len] = '\0';
    /* A CRLF line that fills the buffer up to its CR still fits: the LF is all that is left. */
    if (str[len - 1] == '\r' && ctx->text[ctx->pos] == '\n')
        ctx->pos++;
    else if (str[len - 1] != '\n' && len == num - 1 && ctx->text[ctx->pos] != '\0') {
        char limit[16];

        snprintf(limit, sizeof limit, "%d", num - 2);
        engine_ini_fail(ctx, "line longer than %s characters%s", limit,
                        " (split it, or shorten the value)");
        return NULL;
    }
    return str;
}

static int engine_ini_server(engine_ini_ctx *ctx, const char *name, const char *value)
{
    char msg[256];

    if (engine_ini_seen_before(ctx, "Server", name)) {
        engine_ini_fail(ctx, "duplicate key '%s' in [%s] (each key once)", name, "Server");
        return 0;
    }
    for (size_t d = 0; d < ENGINE_OPTION_COUNT; d++) {
        const engine_option_def *def = &engine_option_defs[d];
        char what[80];

        if (strcasecmp(name, def->ini_key) != 0)
            continue;
        if (ctx->opts->given & def->bit)
            return 1; /* the command line wins */
        snprintf(what, sizeof what, "[Server] %s", def->ini_key);
        if (!engine_option_store(ctx->opts, def, value, what, msg, sizeof msg)) {
            engine_ini_fail(ctx, "%s%s", msg, "");
            return 0;
        }
        return 1;
    }
    engine_ini_fail(ctx, "unknown key '%s' in [Server]%s", name, "");
    return 0;
}

/* inih's handler for reap's own files: everything is strict. */
static int engine_ini_cb(void *user, const char *section, const char *name, const char *value)
{
    engine_ini_ctx *ctx = user;
    char msg[256];
    cvar_result r;

    if (ctx->failed)
        return 0;
    if (strcasecmp(section, "Server") == 0)
        return engine_ini_server(ctx, name, value);
    if (strcasecmp(section, "ConsoleVariables") != 0) {
        engine_ini_fail(ctx, "unknown section [%s] (reap's files have [Server] and "
                        "[ConsoleVariables]; a UE file is one named *Engine.ini or with a "
                        "[/Script/...] or [SystemSettings] section)%s", section, "");
        return 0;
    }
    if (engine_ini_seen_before(ctx, "ConsoleVariables", name)) {
        engine_ini_fail(ctx, "duplicate key '%s' in [%s] (each key once)", name, section);
        return 0;
    }
    r = cvar_set(ctx->reg, name, value, CVAR_SOURCE_INI, msg, sizeof msg);
    if (r != CVAR_OK && r != CVAR_E_OVERRIDDEN) {
        engine_ini_fail(ctx, "%s%s", msg, "");
        return 0;
    }
    return 1;
}

static int engine_load_reap_file(engine_ini_ctx *ctx)
{
    int line = ini_parse_stream(engine_ini_reader, ctx, engine_ini_cb, ctx);

    if (!ctx->failed && line != 0) {
        ctx->line = line;
        engine_ini_fail(ctx, "syntax error (expected [Section] or KEY = VALUE)%s%s", "", "");
    }
    return ctx->failed ? -1 : 0;
}

/* ---- UE files ---- */

static bool engine_ue_ini_name(const char *path)
{
    const char *base = strrchr(path, '/');
    size_t n;

    base = base != NULL ? base + 1 : path;
    n = strlen(base);
    return n >= 10 && strcasecmp(base + n - 10, "Engine.ini") == 0;
}

static bool engine_ue_slot_of(const char *section, engine_ue_slot *out_slot)
{
    for (int s = 0; s < ENGINE_UE_SLOT_COUNT; s++) {
        if (strcasecmp(section, engine_ue_slot_sections[s]) == 0) {
            *out_slot = (engine_ue_slot)s;
            return true;
        }
    }
    return false;
}

static bool engine_ue_pair_add(engine_ini_ctx *ctx, engine_ue_slot slot, const char *key,
                               const char *value)
{
    engine_ue_pair *p;

    if (!VEC_GROW(ctx->pairs, ctx->pair_cap, ctx->pair_count + 1, 32))
        return false;
    p = &ctx->pairs[ctx->pair_count];
    p->key = strdup(key);
    p->value = strdup(value);
    if (p->key == NULL || p->value == NULL) {
        free(p->key);
        free(p->value);
        return false;
    }
    p->slot = slot;
    p->line = ctx->line;
    p->alive = true;
    ctx->pair_count++;
    return true;
}

/* The pair of slot with key (and value, when not NULL) that is still alive; NULL if none. */
static engine_ue_pair *engine_ue_pair_find(engine_ini_ctx *ctx, engine_ue_slot slot,
                                           const char *key, const char *value)
{
    for (size_t i = 0; i < ctx->pair_count; i++) {
        engine_ue_pair *p = &ctx->pairs[i];

        if (p->alive && p->slot == slot && strcasecmp(p->key, key) == 0 &&
            (value == NULL || strcmp(p->value, value) == 0))
            return p;
    }
    return NULL;
}

/* One key line of a UE cvar section: UE's config operations on the section's pairs. */
static int engine_ue_cvar_entry(engine_ini_ctx *ctx, engine_ue_slot slot,
                                const ue_ini_entry *e)
{
    engine_ue_pair *p;
    cvar_id id;

    if (e->op == UE_INI_OTHER) {
        engine_ini_warn(ctx, "[%s] %s: a struct-array key (@ or *) means nothing for a console "
                        "variable; ignored", e->section, e->key);
        return 0;
    }
    if (!cvar_find(e->key, &id)) {
        engine_ini_warn(ctx, "[%s] %s: not a console variable reap has; ignored", e->section,
                        e->key);
        return 0;
    }
    if (e->value == NULL && e->op != UE_INI_CLEAR) {
        engine_ini_warn(ctx, "[%s] %s: no '=' and no value; ignored", e->section, e->key);
        return 0;
    }
    switch (e->op) {
    case UE_INI_SET:
        p = engine_ue_pair_find(ctx, slot, e->key, NULL);
        if (p != NULL) {
            char *v = strdup(e->value);
            if (v == NULL)
                return -1;
            free(p->value);
            p->value = v;
            p->line = e->line;
            return 0;
        }
        return engine_ue_pair_add(ctx, slot, e->key, e->value) ? 0 : -1;
    case UE_INI_ADD_UNIQUE:
        if (engine_ue_pair_find(ctx, slot, e->key, e->value) != NULL)
            return 0;
        return engine_ue_pair_add(ctx, slot, e->key, e->value) ? 0 : -1;
    case UE_INI_ADD:
        return engine_ue_pair_add(ctx, slot, e->key, e->value) ? 0 : -1;
    case UE_INI_REMOVE:
        p = engine_ue_pair_find(ctx, slot, e->key, e->value);
        if (p != NULL)
            p->alive = false;
        else
            log_debug("%s:%d: -%s=%s removes nothing", ctx->path, e->line, e->key, e->value);
        return 0;
    case UE_INI_CLEAR:
        while ((p = engine_ue_pair_find(ctx, slot, e->key, NULL)) != NULL)
            p->alive = false;
        return 0;
    case UE_INI_OTHER: break;
    }
    return 0;
}

static int engine_ue_entry_cb(void *user, const ue_ini_entry *e)
{
    engine_ini_ctx *ctx = user;
    engine_ue_slot slot;

    ctx->line = e->line;
    if (strcasecmp(e->section, "Server") == 0) {
        if (e->key == NULL)
            return 0;
        if (e->op != UE_INI_SET || e->value == NULL) {
            engine_ini_fail(ctx, "'%s' in [Server]: reap's own section takes KEY = VALUE "
                            "only%s", e->key, "");
            return -1;
        }
        return engine_ini_server(ctx, e->key, e->value) ? 0 : -1;
    }
    if (engine_ue_slot_of(e->section, &slot))
        return e->key != NULL ? engine_ue_cvar_entry(ctx, slot, e) : 0;
    if (!engine_string_set_add(&ctx->warned, &ctx->warned_count, &ctx->warned_cap, e->section)) {
        if (e->section[0] == '\0')
            engine_ini_warn(ctx, "keys before the first section mean nothing to reap; "
                            "ignored%s%s", "", "");
        else
            engine_ini_warn(ctx, "section [%s] means nothing to reap; ignored%s", e->section,
                            "");
    }
    return 0;
}

/* Sets the pairs left once the whole file is read, slot by slot: UE's priorities. A value
 * reap cannot take is a warning and the value before it stays, as UE keeps a cvar's value
 * when it cannot parse the text. */
static void engine_ue_apply(engine_ini_ctx *ctx)
{
    for (int s = 0; s < ENGINE_UE_SLOT_COUNT; s++) {
        for (size_t i = 0; i < ctx->pair_count; i++) {
            engine_ue_pair *p = &ctx->pairs[i];
            char msg[256];
            cvar_result r;

            if (!p->alive || p->slot != (engine_ue_slot)s)
                continue;
            r = cvar_set(ctx->reg, p->key, p->value, CVAR_SOURCE_INI, msg, sizeof msg);
            if (r == CVAR_OK || r == CVAR_E_OVERRIDDEN)
                continue;
            ctx->line = p->line;
            engine_ini_warn(ctx, "[%s] %s; the value before it stays",
                            engine_ue_slot_sections[s], msg);
        }
    }
}

static int engine_load_ue_file(engine_ini_ctx *ctx, bool utf16)
{
    int rc;

    log_info("%s: read as an Unreal Engine file%s", ctx->path, utf16 ? " (UTF-16)" : "");
    rc = ue_ini_parse(ctx->text, engine_ue_entry_cb, ctx);
    if (rc != 0 && !ctx->failed)
        engine_ini_fail(ctx, "out of memory reading the file%s%s", "", "");
    if (!ctx->failed)
        engine_ue_apply(ctx);
    for (size_t i = 0; i < ctx->pair_count; i++) {
        free(ctx->pairs[i].key);
        free(ctx->pairs[i].value);
    }
    free(ctx->pairs);
    engine_string_set_free(ctx->warned, ctx->warned_count);
    return ctx->failed ? -1 : 0;
}

/* Opens path for reading only if it is a regular file; never blocks (a FIFO with no writer
 * would block a plain open) and never reads a device such as /dev/zero forever. */
static FILE *engine_config_open(const char *path, char *err, size_t err_size)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    FILE *f;

    if (fd < 0) {
        snprintf(err, err_size, "cannot read config file '%s': %s", path, strerror(errno));
        return NULL;
    }
    memset(&st, 0, sizeof st);
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, err_size, "config file '%s' is not a regular file (%s)", path,
                 S_ISDIR(st.st_mode)    ? "a directory"
                 : S_ISFIFO(st.st_mode) ? "a FIFO"
                 : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                              : "not a plain file");
        close(fd);
        return NULL;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    f = fdopen(fd, "r");
    if (f == NULL) {
        snprintf(err, err_size, "cannot read config file '%s': %s", path, strerror(errno));
        close(fd);
    }
    return f;
}

/* The file's bytes, malloc'd (free them); NULL with err set. */
static unsigned char *engine_config_read(const char *path, size_t *out_len, char *err,
                                         size_t err_size)
{
    FILE *f = engine_config_open(path, err, err_size);
    unsigned char *bytes;
    struct stat st;
    size_t n, size;

    if (f == NULL)
        return NULL;
    /* The size is a hint (the file may change while it is read); the limit is what counts. */
    size = fstat(fileno(f), &st) == 0 && st.st_size > 0 ? (size_t)st.st_size : 0;
    if (size > ENGINE_CONFIG_MAX_BYTES)
        size = ENGINE_CONFIG_MAX_BYTES;
    bytes = malloc(size + 1);
    if (bytes == NULL) {
        snprintf(err, err_size, "cannot read config file '%s': out of memory", path);
        fclose(f);
        return NULL;
    }
    n = fread(bytes, 1, size + 1, f);
    if (ferror(f) || n > ENGINE_CONFIG_MAX_BYTES || n > size) {
        if (ferror(f))
            snprintf(err, err_size, "cannot read config file '%s': %s", path, strerror(errno));
        else if (n > ENGINE_CONFIG_MAX_BYTES)
            snprintf(err, err_size, "config file '%s' is larger than %d MB", path,
                     ENGINE_CONFIG_MAX_BYTES >> 20);
        else
            snprintf(err, err_size, "config file '%s' grew while it was read; try again",
                     path);
        free(bytes);
        fclose(f);
        return NULL;
    }
    fclose(f);
    *out_len = n;
    return bytes;
}

int engine_options_load_config(engine_options *opts, cvar_registry *reg, const char *path,
                               char *err, size_t err_size)
{
    engine_ini_ctx ctx = { 0 };
    unsigned char *bytes;
    char *text = NULL, why[160];
    size_t len = 0;
    bool utf16 = false;
    int rc;

    bytes = engine_config_read(path, &len, err, err_size);
    if (bytes == NULL)
        return -1;
    rc = ue_ini_decode(bytes, len, &text, &utf16, why, sizeof why);
    free(bytes);
    if (rc != 0) {
        snprintf(err, err_size, "%s: cannot read the file: %s", path, why);
        return -1;
    }
    ctx.opts = opts;
    ctx.reg = reg;
    ctx.path = path;
    ctx.text = text;
    ctx.err = err;
    ctx.err_size = err_size;
    if (utf16 || engine_ue_ini_name(path) || ue_ini_has_ue_section(text))
        rc = engine_load_ue_file(&ctx, utf16);
    else
        rc = engine_load_reap_file(&ctx);
    engine_string_set_free(ctx.seen, ctx.seen_count);
    free(text);
    return rc;
}

int engine_options_reload_cvars(cvar_registry *reg, const char *path, char *err,
                                size_t err_size)
{
    engine_options scratch;
    cvar_registry next = *reg;

    engine_options_default(&scratch);
    scratch.given = ~0u; /* [Server] keys are checked, never applied */
    for (int i = 0; i < CVAR_COUNT; i++) {
        if (next.sources[i] == CVAR_SOURCE_INI) {
            next.sources[i] = CVAR_SOURCE_DEFAULT;
            cvar_set_id(&next, (cvar_id)i, cvar_def_get((cvar_id)i)->default_value,
                        CVAR_SOURCE_DEFAULT);
        }
    }
    if (engine_options_load_config(&scratch, &next, path, err, err_size) != 0)
        return -1;
    *reg = next;
    return 0;
}

/* ---- admin token and combined checks -------------------------------------------------- */

static int engine_token_from_text(engine_options *opts, const char *text, size_t len,
                                  const char *source, char *err, size_t err_size)
{
    while (len > 0 && isspace((unsigned char)*text)) {
        text++;
        len--;
    }
    while (len > 0 && isspace((unsigned char)text[len - 1]))
        len--;
    if (len < ENGINE_ADMIN_TOKEN_MIN || len > ENGINE_ADMIN_TOKEN_MAX) {
        snprintf(err, err_size, "admin token from %s must be %d to %d characters (it has %zu)",
                 source, ENGINE_ADMIN_TOKEN_MIN, ENGINE_ADMIN_TOKEN_MAX, len);
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        if (!isgraph((unsigned char)text[i])) {
            snprintf(err, err_size, "admin token from %s holds a space or control character",
                     source);
            return -1;
        }
    }
    memcpy(opts->admin_token, text, len);
    opts->admin_token[len] = '\0';
    return 0;
}

int engine_options_load_admin_token(engine_options *opts, char *err, size_t err_size)
{
    const char *path = opts->admin_token_path;
    const char *env_value = getenv("REAP_ADMIN_TOKEN");
    char text[ENGINE_ADMIN_TOKEN_MAX + 64];
    char source[300];
    size_t n;
    FILE *f;

    opts->admin_token[0] = '\0';
    if (path[0] == '\0')
        path = getenv("REAP_ADMIN_TOKEN_FILE");
    if (path == NULL || path[0] == '\0') {
        if (env_value == NULL || env_value[0] == '\0')
            return 0;
        return engine_token_from_text(opts, env_value, strlen(env_value), "$REAP_ADMIN_TOKEN",
                                      err, err_size);
    }
    f = engine_config_open(path, err, err_size);
    if (f == NULL) {
        snprintf(err, err_size, "cannot read the admin token file '%s'", path);
        return -1;
    }
    n = fread(text, 1, sizeof text, f);
    fclose(f);
    snprintf(source, sizeof source, "'%s'", path);
    return engine_token_from_text(opts, text, n, source, err, err_size);
}

bool engine_address_is_loopback(const char *addr)
{
    struct in_addr a;

    return inet_pton(AF_INET, addr, &a) == 1 && (ntohl(a.s_addr) >> 24) == 127;
}

int engine_options_check(const engine_options *opts, char *err, size_t err_size)
{
    if (!engine_address_is_loopback(opts->admin_bind) && opts->admin_token[0] == '\0') {
        snprintf(err, err_size,
                 "refusing to bind the admin endpoint to %s without a token: anyone who reaches "
                 "it could run console commands (quit, set). Give --admin-token FILE (or "
                 "$REAP_ADMIN_TOKEN_FILE), or keep --admin-bind on 127.0.0.1",
                 opts->admin_bind);
        return -1;
    }
    return 0;
}

int engine_options_apply_cvars(const engine_options *opts, cvar_registry *reg, char *err,
                               size_t err_size)
{
    for (uint32_t i = 0; i < opts->cvar_count; i++) {
        char msg[256];
        cvar_result r = cvar_set_assignment(reg, opts->cvars[i], CVAR_SOURCE_COMMAND_LINE, msg,
                                            sizeof msg);
        if (r != CVAR_OK && r != CVAR_E_OVERRIDDEN) {
            snprintf(err, err_size, "--cvar %s: %s", opts->cvars[i], msg);
            return -1;
        }
    }
    return 0;
}

/* Whether name is one of the server's maps: a [map NAME] of the profile, or Default. */
static bool engine_map_known(const engine_options *opts, const char *name)
{
    return strcmp(name, "Default") == 0 ||
           (opts->profile != NULL && world_profile_map_find(opts->profile, name) >= 0);
}

static int engine_maps_check(const engine_options *opts, char *err, size_t err_size)
{
    const char *bad = NULL, *what = NULL;
    char known[512];
    size_t n;

    if (opts->map[0] != '\0' && !engine_map_known(opts, opts->map)) {
        bad = opts->map;
        what = "--map";
    }
    for (uint32_t i = 0; bad == NULL && i < opts->rotation_count; i++)
        if (!engine_map_known(opts, opts->rotation[i])) {
            bad = opts->rotation[i];
            what = "MapRotation";
        }
    if (bad == NULL)
        return 0;
    n = (size_t)snprintf(known, sizeof known, "Default");
    for (uint32_t i = 0; opts->profile != NULL && i < opts->profile->n_maps && n < sizeof known;
         i++)
        if (strcmp(opts->profile->maps[i].name, "Default") != 0)
            n += (size_t)snprintf(known + n, sizeof known - n, ", %s",
                                  opts->profile->maps[i].name);
    snprintf(err, err_size, "%s: no map named '%s' (the maps are: %s; a map is a [map NAME] "
             "section of --world-profile)", what, bad, known);
    return -1;
}

int engine_options_load_world_profile(engine_options *opts, char *err, size_t err_size)
{
    world_profile *p;

    if (opts->world_profile_path[0] == '\0')
        return engine_maps_check(opts, err, err_size);
    p = malloc(sizeof *p);
    if (p == NULL) {
        snprintf(err, err_size, "out of memory reading the world profile");
        return -1;
    }
    if (!world_profile_load(p, opts->world_profile_path, err, err_size) ||
        !world_profile_check_names(p, opts->world_profile_path, err, err_size)) {
        free(p);
        return -1;
    }
    free(opts->profile);
    opts->profile = p;
    if (engine_maps_check(opts, err, err_size) != 0) {
        engine_options_free(opts);
        return -1;
    }
    return 0;
}

void engine_options_free(engine_options *opts)
{
    free(opts->profile);
    opts->profile = NULL;
}
