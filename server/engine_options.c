/*
 * engine_options.c - command-line flags and the config file (inih).
 */
#include "engine_options.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

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
    "  --log-level LEVEL     debug, info, warn or error (default info)\n"
    "  --log-format FORMAT   text or json (one object per line) (default text)\n"
    "  --agones              report to the Agones SDK sidecar (on by itself when\n"
    "                        AGONES_SDK_HTTP_PORT is set)\n"
    "  --agones-player-tracking  track players with Agones' alpha player endpoints\n"
    "                        instead of the 'players' list\n"
    "  --help                print this help and exit\n"
    "  --version             print the version and exit\n"
    "\n"
    "admin endpoint: GET /metrics, GET /healthz, POST /console (one command per request).\n"
    "SIGINT/SIGTERM: say goodbye to clients, run a full purge, exit 0. SIGHUP: re-read the\n"
    "config file's console variables. SIGUSR1: log a status line.\n";

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
    { "log-format", "LogFormat", ENGINE_OPT_LOG_FORMAT, 0, 0 },
    { "admin-token", "AdminTokenFile", ENGINE_OPT_ADMIN_TOKEN, 0, 0 },
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

        if (strcmp(flag, "help") == 0 || strcmp(flag, "version") == 0 ||
            strcmp(flag, "agones") == 0 || strcmp(flag, "agones-player-tracking") == 0) {
            if (eq != NULL) {
                snprintf(err, err_size, "option '--%s' takes no value", flag);
                return ENGINE_OPTIONS_ERROR;
            }
            if (strcmp(flag, "help") == 0)
                opts->help = true;
            else if (strcmp(flag, "version") == 0)
                opts->version = true;
            else if (strcmp(flag, "agones") == 0)
                opts->agones = true;
            else
                opts->agones = opts->agones_alpha_players = true;
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

/* ---- the config file ------------------------------------------------------------------ */

/* How a section of the file is read. reap's own sections are strict (a typo stops the
 * server); Unreal Engine's sections map their keys to the same cvars, and what reap does not
 * know there is a warning, as UE itself treats unknown cvars. */
typedef enum engine_ini_section {
    ENGINE_INI_SERVER,
    ENGINE_INI_CVARS,
    ENGINE_INI_UE_CVARS,     /* [SystemSettings], [/Script/Engine.GarbageCollectionSettings] */
    ENGINE_INI_UE_OTHER,     /* any other [/Script/...] or UE section: ignored with a warning */
    ENGINE_INI_UNKNOWN,
} engine_ini_section;

static const char *const engine_ue_cvar_sections[] = {
    "SystemSettings",
    "/Script/Engine.GarbageCollectionSettings",
};

/* Sections a UE project's DefaultEngine.ini commonly holds besides the two above. */
static const char *const engine_ue_other_sections[] = {
    "URL", "Core.Log", "Core.System", "OnlineSubsystem", "ConsoleVariables.Editor",
};

static engine_ini_section engine_ini_classify(const char *section)
{
    if (strcasecmp(section, "Server") == 0)
        return ENGINE_INI_SERVER;
    if (strcasecmp(section, "ConsoleVariables") == 0)
        return ENGINE_INI_CVARS;
    for (size_t i = 0; i < sizeof engine_ue_cvar_sections / sizeof *engine_ue_cvar_sections; i++)
        if (strcasecmp(section, engine_ue_cvar_sections[i]) == 0)
            return ENGINE_INI_UE_CVARS;
    if (strncmp(section, "/Script/", 8) == 0)
        return ENGINE_INI_UE_OTHER;
    for (size_t i = 0; i < sizeof engine_ue_other_sections / sizeof *engine_ue_other_sections; i++)
        if (strcasecmp(section, engine_ue_other_sections[i]) == 0)
            return ENGINE_INI_UE_OTHER;
    return ENGINE_INI_UNKNOWN;
}

typedef struct engine_ini_ctx {
    engine_options *opts;
    cvar_registry *reg;
    const char *path;
    FILE *file;
    int line;              /* the line the reader returned last (1-based) */
    int max_line;          /* longest line inih can hold, newline included */
    char *err;
    size_t err_size;
    bool failed;
    char **seen;           /* "section\nkey" of every key so far, to find duplicates */
    size_t seen_count, seen_cap;
    char warned_section[128];
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

/* inih's line reader, replaced so that a line too long for inih's buffer is an error rather
 * than silently cut in two, and so that the handler knows the line it is called for. */
static char *engine_ini_reader(char *str, int num, void *stream)
{
    engine_ini_ctx *ctx = stream;
    int len = 0, c = EOF;

    if (ctx->failed)
        return NULL;
    while (len < num - 1 && (c = getc(ctx->file)) != EOF) {
        str[len++] = (char)c;
        if (c == '\n')
            break;
    }
    if (len == 0)
        return NULL;
    ctx->line++;
    str[len] = '\0';
    if (str[len - 1] != '\n' && len == num - 1 && (c = getc(ctx->file)) != EOF) {
        char limit[16];

        snprintf(limit, sizeof limit, "%d", num - 2);
        engine_ini_fail(ctx, "line longer than %s characters%s", limit,
                        " (split it, or shorten the value)");
        return NULL;
    }
    return str;
}

/* Remembers section/name; true if it was seen before. */
static bool engine_ini_seen_before(engine_ini_ctx *ctx, const char *section, const char *name)
{
    size_t len = strlen(section) + strlen(name) + 2;
    char *key = malloc(len);

    if (key == NULL)
        return false;
    snprintf(key, len, "%s\n%s", section, name);
    for (size_t i = 0; i < ctx->seen_count; i++) {
        if (strcasecmp(ctx->seen[i], key) == 0) {
            free(key);
            return true;
        }
    }
    if (ctx->seen_count == ctx->seen_cap) {
        size_t cap = ctx->seen_cap ? ctx->seen_cap * 2 : 32;
        char **grown = realloc(ctx->seen, cap * sizeof *grown);
        if (grown == NULL) {
            free(key);
            return false;
        }
        ctx->seen = grown;
        ctx->seen_cap = cap;
    }
    ctx->seen[ctx->seen_count++] = key;
    return false;
}

static int engine_ini_cvar(engine_ini_ctx *ctx, const char *section, const char *name,
                           const char *value, bool strict)
{
    char msg[256];
    cvar_id id;
    cvar_result r;

    if (!strict && !cvar_find(name, &id)) {
        engine_ini_warn(ctx, "[%s] %s: not a console variable reap has; ignored", section, name);
        return 1;
    }
    r = cvar_set(ctx->reg, name, value, CVAR_SOURCE_INI, msg, sizeof msg);
    if (r != CVAR_OK && r != CVAR_E_OVERRIDDEN) {
        engine_ini_fail(ctx, "%s%s", msg, "");
        return 0;
    }
    return 1;
}

static int engine_ini_server(engine_ini_ctx *ctx, const char *name, const char *value)
{
    char msg[256];

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

static int engine_ini_cb(void *user, const char *section, const char *name, const char *value)
{
    engine_ini_ctx *ctx = user;
    engine_ini_section kind = engine_ini_classify(section);
    bool strict = kind == ENGINE_INI_SERVER || kind == ENGINE_INI_CVARS;

    if (ctx->failed)
        return 0;
    if (kind == ENGINE_INI_UNKNOWN) {
        engine_ini_fail(ctx, "unknown section [%s] (expected [Server], [ConsoleVariables], "
                        "[SystemSettings] or a UE [/Script/...] section)%s", section, "");
        return 0;
    }
    if (kind == ENGINE_INI_UE_OTHER) {
        if (strcmp(ctx->warned_section, section) != 0) {
            snprintf(ctx->warned_section, sizeof ctx->warned_section, "%s", section);
            engine_ini_warn(ctx, "section [%s] is Unreal Engine's and means nothing to reap; "
                            "ignored%s", section, "");
        }
        return 1;
    }
    if (engine_ini_seen_before(ctx, section, name)) {
        if (strict) {
            engine_ini_fail(ctx, "duplicate key '%s' in [%s] (each key once)", name, section);
            return 0;
        }
        engine_ini_warn(ctx, "duplicate key '%s' in [%s]: the last value wins, as in UE", name,
                        section);
    }
    if (kind == ENGINE_INI_SERVER)
        return engine_ini_server(ctx, name, value);
    return engine_ini_cvar(ctx, section, name, value, strict);
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

int engine_options_load_config(engine_options *opts, cvar_registry *reg, const char *path,
                               char *err, size_t err_size)
{
    engine_ini_ctx ctx = { 0 };
    int line;

    ctx.opts = opts;
    ctx.reg = reg;
    ctx.path = path;
    ctx.err = err;
    ctx.err_size = err_size;
    ctx.file = engine_config_open(path, err, err_size);
    if (ctx.file == NULL)
        return -1;
    line = ini_parse_stream(engine_ini_reader, &ctx, engine_ini_cb, &ctx);
    if (!ctx.failed && ferror(ctx.file))
        snprintf(err, err_size, "cannot read config file '%s': %s", path, strerror(errno));
    else if (!ctx.failed && line != 0)
        snprintf(err, err_size, "%s:%d: syntax error (expected [Section] or KEY = VALUE)", path,
                 line);
    fclose(ctx.file);
    for (size_t i = 0; i < ctx.seen_count; i++)
        free(ctx.seen[i]);
    free(ctx.seen);
    return ctx.failed || line != 0 ? -1 : 0;
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
