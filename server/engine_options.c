/*
 * engine_options.c - command-line flags and the config file (inih).
 */
#include "engine_options.h"

#include <errno.h>
#include <ini.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
    "  --admin-bind ADDR     admin HTTP address (default 127.0.0.1)\n"
    "  --cvar NAME=VALUE     set a console variable (repeatable; overrides the config file)\n"
    "  --log-level LEVEL     debug, info, warn or error (default info)\n"
    "  --help                print this help and exit\n"
    "  --version             print the version and exit\n"
    "\n"
    "admin endpoint: GET /metrics, GET /healthz, POST /console (one command per request).\n"
    "SIGINT/SIGTERM: say goodbye to clients, run a full purge, exit 0.\n";

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

static bool engine_parse_uint(const char *text, uint32_t min, uint32_t max, uint32_t *out)
{
    char *end;
    unsigned long v;

    if (text == NULL || *text < '0' || *text > '9')
        return false;
    errno = 0;
    v = strtoul(text, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return false;
    *out = (uint32_t)v;
    return true;
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
};

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
    if (!engine_parse_uint(value, def->min, def->max, &n)) {
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
    default: break;
    }
    return true;
}

engine_options_result engine_options_parse(engine_options *opts, int argc, char **argv,
                                           char *err, size_t err_size)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *name, *value, *eq;
        char flag[64];
        size_t len;

        if (strncmp(arg, "--", 2) != 0) {
            snprintf(err, err_size, "unexpected argument '%s' (try --help)", arg);
            return ENGINE_OPTIONS_ERROR;
        }
        name = arg + 2;
        eq = strchr(name, '=');
        len = eq != NULL ? (size_t)(eq - name) : strlen(name);
        if (len >= sizeof flag) {
            snprintf(err, err_size, "unknown option '%s' (try --help)", arg);
            return ENGINE_OPTIONS_ERROR;
        }
        memcpy(flag, name, len);
        flag[len] = '\0';

        if (strcmp(flag, "help") == 0 || strcmp(flag, "version") == 0) {
            if (eq != NULL) {
                snprintf(err, err_size, "option '--%s' takes no value", flag);
                return ENGINE_OPTIONS_ERROR;
            }
            if (flag[0] == 'h')
                opts->help = true;
            else
                opts->version = true;
            continue;
        }
        bool known = strcmp(flag, "config") == 0 || strcmp(flag, "cvar") == 0;
        for (size_t d = 0; d < ENGINE_OPTION_COUNT && !known; d++)
            known = strcmp(flag, engine_option_defs[d].flag) == 0;
        if (!known) {
            snprintf(err, err_size, "unknown option '--%s' (try --help)", flag);
            return ENGINE_OPTIONS_ERROR;
        }
        if (eq != NULL) {
            value = eq + 1;
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            snprintf(err, err_size, "option '--%s' needs a value (try --help)", flag);
            return ENGINE_OPTIONS_ERROR;
        }

        if (strcmp(flag, "config") == 0) {
            opts->config_path = value;
            continue;
        }
        if (strcmp(flag, "cvar") == 0) {
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
            const engine_option_def *def = NULL;
            char what[80];

            for (size_t d = 0; d < ENGINE_OPTION_COUNT; d++)
                if (strcmp(flag, engine_option_defs[d].flag) == 0)
                    def = &engine_option_defs[d];
            if (def == NULL) {
                snprintf(err, err_size, "unknown option '--%s' (try --help)", flag);
                return ENGINE_OPTIONS_ERROR;
            }
            snprintf(what, sizeof what, "--%s", flag);
            if (!engine_option_store(opts, def, value, what, err, err_size))
                return ENGINE_OPTIONS_ERROR;
            opts->given |= def->bit;
        }
    }
    return opts->help || opts->version ? ENGINE_OPTIONS_EXIT : ENGINE_OPTIONS_OK;
}

typedef struct engine_ini_ctx {
    engine_options *opts;
    cvar_registry *reg;
    char *err;
    size_t err_size;
    bool failed;
} engine_ini_ctx;

static int engine_ini_cb(void *user, const char *section, const char *name, const char *value)
{
    engine_ini_ctx *ctx = user;
    char msg[256];

    if (ctx->failed)
        return 0; /* keep the first error's message: ini_parse reports its line */
    if (strcasecmp(section, "ConsoleVariables") == 0) {
        cvar_result r = cvar_set(ctx->reg, name, value, CVAR_SOURCE_INI, msg, sizeof msg);
        if (r != CVAR_OK && r != CVAR_E_OVERRIDDEN) {
            snprintf(ctx->err, ctx->err_size, "%s", msg);
            ctx->failed = true;
            return 0;
        }
        return 1;
    }
    if (strcasecmp(section, "Server") == 0) {
        for (size_t d = 0; d < ENGINE_OPTION_COUNT; d++) {
            const engine_option_def *def = &engine_option_defs[d];
            char what[80];

            if (strcasecmp(name, def->ini_key) != 0)
                continue;
            if (ctx->opts->given & def->bit)
                return 1; /* the command line wins */
            snprintf(what, sizeof what, "[Server] %s", def->ini_key);
            if (!engine_option_store(ctx->opts, def, value, what, msg, sizeof msg)) {
                snprintf(ctx->err, ctx->err_size, "%s", msg);
                ctx->failed = true;
                return 0;
            }
            return 1;
        }
        snprintf(ctx->err, ctx->err_size, "unknown key '%s' in [Server]", name);
        ctx->failed = true;
        return 0;
    }
    snprintf(ctx->err, ctx->err_size, "unknown section [%s] (expected [Server] or "
             "[ConsoleVariables])", section);
    ctx->failed = true;
    return 0;
}

int engine_options_load_config(engine_options *opts, cvar_registry *reg, const char *path,
                               char *err, size_t err_size)
{
    char msg[300] = "";
    engine_ini_ctx ctx = { opts, reg, msg, sizeof msg, false };
    int line = ini_parse(path, engine_ini_cb, &ctx);

    if (line == -1) {
        snprintf(err, err_size, "cannot read config file '%s': %s", path, strerror(errno));
        return -1;
    }
    if (line != 0) {
        if (ctx.failed)
            snprintf(err, err_size, "%s:%d: %s", path, line, msg);
        else
            snprintf(err, err_size, "%s:%d: syntax error", path, line);
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
