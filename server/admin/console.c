/*
 * console.c - the operator's commands, shared by POST /console and the stdin console.
 */
#include "console.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "console_leaks.h"
#include "console_levels.h"
#include "console_travel.h"
#include "engine.h"
#include "log.h"
#include "net_driver.h"

enum {
    CONSOLE_MAX_ARGS = 8,
    CONSOLE_LINE_MAX = 1024,
    CONSOLE_LIST_LIMIT = 500, /* obj list prints at most this many lines */
};

typedef console_status (*console_fn)(engine *e, int argc, char **argv, strbuf *out);

typedef struct console_command {
    const char *name;      /* one or two words: "obj gc" */
    const char *usage;
    const char *help;
    console_fn fn;
    int max_args;          /* more arguments than this are a usage error, never ignored */
} console_command;

static console_status console_help(engine *e, int argc, char **argv, strbuf *out);

/* ---- obj ------------------------------------------------------------------------------ */

static console_status console_obj_gc(engine *e, int argc, char **argv, strbuf *out)
{
    (void)argc;
    (void)argv;
    engine_collect_garbage_now(e, out);
    return CONSOLE_OK;
}

enum { CONSOLE_CLASSES_MAX = 64 };

typedef struct console_class_count {
    const gc_class *cls;
    uint32_t count;
} console_class_count;

typedef struct console_list_ctx {
    engine *e;
    const gc_class *cls;
    strbuf *out;
    uint32_t matched;
    console_class_count classes[CONSOLE_CLASSES_MAX];
    uint32_t n_classes;
    uint32_t other;            /* objects of classes past the table */
} console_list_ctx;

/* The instance size of the world's classes (UE's obj list shows each class's count and
 * its instances' size); 0 for a class the world did not register (the built-in "Class"). */
static size_t console_class_size(const engine *e, const gc_class *cls)
{
    const world_classes *c = &e->env.classes;

    if (cls == c->world) return sizeof(world);
    if (cls == c->level) return sizeof(level);
    if (cls == c->actor || cls == c->world_settings || cls == c->default_volume ||
        cls == c->prop_part)
        return sizeof(actor);
    if (cls == c->player_controller) return sizeof(player_controller);
    if (cls == c->pawn) return sizeof(pawn);
    if (cls == c->movement_component || cls == c->collision_component)
        return sizeof(actor_component);
    if (cls == c->projectile) return sizeof(projectile);
    if (cls == c->prop) return sizeof(prop);
    return 0;
}

static void console_count_class(console_list_ctx *ctx, const gc_class *cls)
{
    for (uint32_t i = 0; i < ctx->n_classes; i++)
        if (ctx->classes[i].cls == cls) {
            ctx->classes[i].count++;
            return;
        }
    if (ctx->n_classes == CONSOLE_CLASSES_MAX) {
        ctx->other++;
        return;
    }
    ctx->classes[ctx->n_classes++] = (console_class_count){ cls, 1 };
}

/* A class by name, case-insensitive as UE's console is: an exact match first, then any
 * class a live object has (or inherits from) whose name matches in another case. */
typedef struct console_find_ctx {
    engine *e;
    const char *name;
    const gc_class *found;
} console_find_ctx;

static void console_find_class_cb(void *obj, void *userdata)
{
    console_find_ctx *ctx = userdata;

    for (const gc_class *cls = gc_object_class(ctx->e->heap, obj);
         cls != NULL && ctx->found == NULL; cls = gc_class_super(cls))
        if (strcasecmp(gc_class_name(cls), ctx->name) == 0)
            ctx->found = cls;
}

static const gc_class *console_class_find(engine *e, const char *name)
{
    console_find_ctx ctx = { e, name, gc_class_find(e->heap, name) };

    if (ctx.found == NULL)
        gc_object_foreach_read(e->heap, console_find_class_cb, &ctx);
    return ctx.found;
}

static void console_list_cb(void *obj, void *userdata)
{
    console_list_ctx *ctx = userdata;
    char path[256];

    if (ctx->cls != NULL && !gc_object_is_a(ctx->e->heap, obj, ctx->cls))
        return;
    console_count_class(ctx, gc_object_class(ctx->e->heap, obj));
    if (ctx->matched++ >= CONSOLE_LIST_LIMIT)
        return;
    gc_object_path(ctx->e->heap, obj, path, sizeof path);
    strbuf_printf(ctx->out, "%-48s %s%s%s\n", path, gc_class_name(gc_object_class(ctx->e->heap, obj)),
                  gc_object_is_permanent(obj) ? " permanent" : "",
                  gc_object_is_garbage(obj) ? " garbage" : "");
}

static console_status console_obj_list(engine *e, int argc, char **argv, strbuf *out)
{
    static console_list_ctx ctx; /* the loop thread's only: the table is too big for a stack */
    size_t total_bytes = 0;

    memset(&ctx, 0, sizeof ctx);
    ctx.e = e;
    ctx.out = out;
    if (argc > 1 || (argc == 1 && strncasecmp(argv[0], "class=", 6) != 0)) {
        strbuf_puts(out, "usage: obj list [class=NAME]\n");
        return CONSOLE_E_USAGE;
    }
    if (argc == 1) {
        ctx.cls = console_class_find(e, argv[0] + 6);
        if (ctx.cls == NULL) {
            strbuf_printf(out, "no class named '%s'\n", argv[0] + 6);
            return CONSOLE_E_USAGE;
        }
    }
    gc_object_foreach_read(e->heap, console_list_cb, &ctx);
    if (ctx.matched > CONSOLE_LIST_LIMIT)
        strbuf_printf(out, "... and %u more\n", ctx.matched - CONSOLE_LIST_LIMIT);
    strbuf_printf(out, "%-24s %8s %12s\n", "class", "count", "bytes");
    for (uint32_t i = 0; i < ctx.n_classes; i++) {
        size_t size = console_class_size(e, ctx.classes[i].cls);
        size_t bytes = size * ctx.classes[i].count;

        total_bytes += bytes;
        if (size > 0)
            strbuf_printf(out, "%-24s %8u %12zu\n", gc_class_name(ctx.classes[i].cls),
                          ctx.classes[i].count, bytes);
        else
            strbuf_printf(out, "%-24s %8u %12s\n", gc_class_name(ctx.classes[i].cls),
                          ctx.classes[i].count, "-");
    }
    if (ctx.other > 0)
        strbuf_printf(out, "%-24s %8u %12s\n", "(other classes)", ctx.other, "-");
    strbuf_printf(out, "%u object(s), %zu bytes in instances of the world's classes\n",
                  ctx.matched, total_bytes);
    return CONSOLE_OK;
}

static void console_line_cb(const char *line, void *userdata)
{
    strbuf_printf(userdata, "%s\n", line);
}

static console_status console_obj_refs(engine *e, int argc, char **argv, strbuf *out)
{
    void *obj;
    gc_result r;

    if (argc != 1 || strncasecmp(argv[0], "name=", 5) != 0) {
        strbuf_puts(out, "usage: obj refs name=PATH\n");
        return CONSOLE_E_USAGE;
    }
    obj = gc_object_find(e->heap, argv[0] + 5);
    if (obj == NULL) {
        strbuf_printf(out, "no object at '%s'\n", argv[0] + 5);
        return CONSOLE_E_FAILED;
    }
    r = gc_reference_chain(e->heap, obj, console_line_cb, out);
    if (r == GC_E_NOT_FOUND) {
        strbuf_printf(out, "nothing keeps '%s' alive: it goes at the next collection\n",
                      argv[0] + 5);
        return CONSOLE_OK;
    }
    if (r != GC_OK) {
        strbuf_printf(out, "obj refs failed: %s\n", gc_result_str(r));
        return CONSOLE_E_FAILED;
    }
    return CONSOLE_OK;
}

/* ---- gc, cvars -------------------------------------------------------------------------- */

static console_status console_gc_stats(engine *e, int argc, char **argv, strbuf *out)
{
    gc_stats st;

    (void)argc;
    (void)argv;
    gc_stats_get(e->heap, &st);
    strbuf_printf(out,
                  "objects:               %u (%u permanent), %u clusters\n"
                  "collections:           %llu (%llu full), %llu try-collect refusals\n"
                  "destroyed (total):     %llu\n"
                  "interval in force:     %g s (players connected: %s)\n"
                  "time since last purge: %.3f s\n"
                  "pending:               reachability %s, purge %s\n"
                  "last collection:       %u -> %u objects, %u roots, %u marked, "
                  "%u unreachable, %u destroyed\n"
                  "last timings:          mark %.3f ms (%u slices), gather %.3f ms, "
                  "purge %.3f ms, longest slice %.3f ms\n"
                  "last marking:          %u worker(s), %u blocks stolen, %u barrier objects, "
                  "%u garbage references nulled, %u assumption violations\n",
                  gc_object_count(e->heap), gc_permanent_count(e->heap),
                  gc_cluster_count(e->heap), (unsigned long long)st.collections,
                  (unsigned long long)st.collections_full,
                  (unsigned long long)st.try_collect_failures,
                  (unsigned long long)st.objects_destroyed, e->gc.interval,
                  engine_players_connected(e) ? "yes" : "no", e->gc.time_since_last_purge,
                  gc_is_incremental_reachability_pending(e->heap) ? "yes" : "no",
                  gc_is_incremental_purge_pending(e->heap) ? "yes" : "no", st.objects_before,
                  st.objects_after, st.roots, st.marked, st.unreachable, st.destroyed,
                  st.mark_seconds * 1e3, st.mark_slices, st.gather_seconds * 1e3,
                  st.purge_seconds * 1e3, st.longest_slice_seconds * 1e3, st.mark_workers,
                  st.blocks_stolen, st.barrier_objects, st.garbage_references,
                  st.assumption_violations);
    return CONSOLE_OK;
}

static const char *const console_source_names[] = { "default", "ini", "command line",
                                                    "console" };

static void console_describe_cvar(const engine *e, cvar_id id, bool verbose, strbuf *out)
{
    const cvar_def *def = cvar_def_get(id);
    char value[64], dflt[64], lo[64], hi[64];

    cvar_format_value(&e->cvars, id, value, sizeof value);
    if (!verbose) {
        strbuf_printf(out, "%s = %s\n", def->name, value);
        return;
    }
    cvar_format_number(def->default_value, dflt, sizeof dflt);
    cvar_format_number(def->min_value, lo, sizeof lo);
    cvar_format_number(def->max_value, hi, sizeof hi);
    strbuf_printf(out, "%s = %s (%s; default %s; range [%s, %s]; set by %s)\n  %s\n", def->name,
                  value, cvar_type_name(def->type), dflt, lo, hi,
                  console_source_names[e->cvars.sources[id]], def->help);
}

static console_status console_set(engine *e, int argc, char **argv, strbuf *out)
{
    char err[256];
    cvar_id id;

    if (argc != 2) {
        strbuf_puts(out, "usage: set NAME VALUE\n");
        return CONSOLE_E_USAGE;
    }
    if (cvar_set(&e->cvars, argv[0], argv[1], CVAR_SOURCE_CONSOLE, err, sizeof err) != CVAR_OK) {
        strbuf_printf(out, "%s\n", err);
        return CONSOLE_E_FAILED;
    }
    engine_apply_cvars(e);
    cvar_find(argv[0], &id);
    console_describe_cvar(e, id, false, out);
    {
        char value[64];

        /* the value as it now is ("True" reads as 1): the reply and the log say the same */
        cvar_format_value(&e->cvars, id, value, sizeof value);
        log_fields(LOG_INFO, LOG_FIELDS({ "cvar", cvar_def_get(id)->name }, { "value", value },
                                        { "given", argv[1] }),
                   "console: %s = %s", cvar_def_get(id)->name, value);
    }
    return CONSOLE_OK;
}

static console_status console_get(engine *e, int argc, char **argv, strbuf *out)
{
    cvar_id id;

    if (argc != 1) {
        strbuf_puts(out, "usage: get NAME\n");
        return CONSOLE_E_USAGE;
    }
    if (!cvar_find(argv[0], &id)) {
        strbuf_printf(out, "unknown console variable '%s' (the command 'cvars' lists them)\n",
                      argv[0]);
        return CONSOLE_E_FAILED;
    }
    console_describe_cvar(e, id, true, out);
    return CONSOLE_OK;
}

static console_status console_cvars(engine *e, int argc, char **argv, strbuf *out)
{
    const char *prefix = argc == 1 ? argv[0] : "";
    size_t len = strlen(prefix);
    int shown = 0;

    for (int i = 0; i < CVAR_COUNT; i++)
        if (strncasecmp(cvar_def_get((cvar_id)i)->name, prefix, len) == 0) {
            console_describe_cvar(e, (cvar_id)i, true, out);
            shown++;
        }
    if (shown == 0) {
        strbuf_printf(out, "no console variable starts with '%s' (try 'cvars')\n", prefix);
        return CONSOLE_E_FAILED;
    }
    return CONSOLE_OK;
}

/* ---- players, worlds, quit ---------------------------------------------------------- */

static console_status console_players(engine *e, int argc, char **argv, strbuf *out)
{
    (void)argc;
    (void)argv;
    net_driver_list_players(e->net, out);
    return CONSOLE_OK;
}

static console_status console_worlds(engine *e, int argc, char **argv, strbuf *out)
{
    (void)argc;
    (void)argv;
    for (uint32_t i = 0; i < e->world_count; i++) {
        const world *w = e->worlds[i];
        strbuf_printf(out, "%-8s %s frames=%llu connections=%u ", w->name,
                      w->begun_play ? "playing" : "waiting", (unsigned long long)w->frames,
                      w->connections);
        console_levels_summary(w, out);
        strbuf_printf(out, " actors=%u slots=%u\n", world_actor_count(w), world_actor_slots(w));
    }
    console_travel_worlds(e, out);
    return CONSOLE_OK;
}

static console_status console_quit(engine *e, int argc, char **argv, strbuf *out)
{
    (void)argc;
    (void)argv;
    strbuf_puts(out, "stopping: goodbye to clients, full purge, exit\n");
    engine_request_stop(e, "console quit");
    return CONSOLE_OK;
}

static const console_command console_commands[] = {
    { "help", "help", "list the commands", console_help, 0 },
    { "obj gc", "obj gc", "full collection now, then cleanup actors in every world",
      console_obj_gc, 0 },
    { "obj list", "obj list [class=NAME]", "list live objects (of a class and its subclasses)",
      console_obj_list, 1 },
    { "obj refs", "obj refs name=PATH", "the reference chain that keeps an object alive",
      console_obj_refs, 1 },
    { "gc stats", "gc stats", "collector statistics and the schedule's state (also 'stat gc')",
      console_gc_stats, 0 },
    { "stat gc", "stat gc", "the same as 'gc stats' (UE's stat command)", console_gc_stats, 0 },
    { "stat levels", "stat levels",
      "streaming levels: cells by state, streams in and out, load waits, survivors",
      console_stat_levels, 0 },
    { "gc leaks", "gc leaks mark | gc leaks since=MARK",
      "objects created since a mark that are still alive, by class, with chains",
      console_gc_leaks, 1 },
    { "set", "set NAME VALUE", "set a console variable (UE's form 'NAME VALUE' works too)",
      console_set, 2 },
    { "get", "get NAME", "show a console variable with its default, range and help (or 'NAME', "
      "'NAME ?')", console_get, 1 },
    { "cvars", "cvars [PREFIX]",
      "list the console variables (whose names start with PREFIX, e.g. 'cvars net.')",
      console_cvars, 1 },
    { "players", "players",
      "list connections (traffic, messages/s in, dropped unread, refused)", console_players,
      0 },
    { "worlds", "worlds", "list worlds with their levels, actor and slot counts, the map, and "
      "worlds that leaked", console_worlds, 0 },
    { "servertravel", "servertravel MAP [hard|seamless]",
      "travel to another map (UE's servertravel; the mode defaults to [Server] SeamlessTravel)",
      console_servertravel, 2 },
    { "stat travel", "stat travel", "the map, the travel under way or the last one, leaked worlds",
      console_stat_travel, 0 },
    { "quit", "quit", "stop the server (goodbye to clients, full purge, exit 0)",
      console_quit, 0 },
};

#define CONSOLE_COMMAND_COUNT (sizeof console_commands / sizeof console_commands[0])

static console_status console_help(engine *e, int argc, char **argv, strbuf *out)
{
    (void)e;
    (void)argc;
    (void)argv;
    for (size_t i = 0; i < CONSOLE_COMMAND_COUNT; i++)
        strbuf_printf(out, "%-24s %s\n", console_commands[i].usage, console_commands[i].help);
    return CONSOLE_OK;
}

static int console_split(char *line, char **argv, int max)
{
    int argc = 0;
    char *save = NULL;

    for (char *tok = strtok_r(line, " \t\r\n", &save); tok != NULL;
         tok = strtok_r(NULL, " \t\r\n", &save)) {
        if (argc == max)
            return -1;
        argv[argc++] = tok;
    }
    return argc;
}

/* Runs c with its arguments, or explains its usage when there are too many. */
static console_status console_run(const console_command *c, engine *e, int argc, char **argv,
                                  strbuf *out)
{
    if (argc > c->max_args) {
        strbuf_printf(out, "'%s' takes %s: usage: %s\n", c->name,
                      c->max_args == 0 ? "no arguments" : "fewer arguments", c->usage);
        return CONSOLE_E_USAGE;
    }
    return c->fn(e, argc, argv, out);
}

console_status console_execute(engine *e, const char *line, strbuf *out)
{
    cvar_id cvar;
    char buf[CONSOLE_LINE_MAX];
    char *argv[CONSOLE_MAX_ARGS];
    int argc;

    if (strlen(line) >= sizeof buf) {
        strbuf_printf(out, "command too long (at most %d bytes)\n", CONSOLE_LINE_MAX - 1);
        return CONSOLE_E_USAGE;
    }
    snprintf(buf, sizeof buf, "%s", line);
    argc = console_split(buf, argv, CONSOLE_MAX_ARGS);
    if (argc < 0) {
        strbuf_puts(out, "too many arguments\n");
        return CONSOLE_E_USAGE;
    }
    if (argc == 0) {
        strbuf_puts(out, "empty command (try 'help')\n");
        return CONSOLE_E_USAGE;
    }
    for (size_t i = 0; i < CONSOLE_COMMAND_COUNT; i++) {
        const console_command *c = &console_commands[i];
        const char *space = strchr(c->name, ' ');

        /* UE's console is case-insensitive throughout: OBJ GC, Stat GC */
        if (space == NULL) {
            if (strcasecmp(argv[0], c->name) == 0)
                return console_run(c, e, argc - 1, argv + 1, out);
        } else if (argc >= 2 && strncasecmp(argv[0], c->name, (size_t)(space - c->name)) == 0 &&
                   argv[0][space - c->name] == '\0' && strcasecmp(argv[1], space + 1) == 0) {
            return console_run(c, e, argc - 2, argv + 2, out);
        }
    }
    /* UE's console form: "gc.X VALUE" sets, "gc.X" and "gc.X ?" print it with its help. */
    if (cvar_find(argv[0], &cvar)) {
        if (argc == 1 || (argc == 2 && strcmp(argv[1], "?") == 0))
            return console_get(e, 1, argv, out);
        if (argc == 2)
            return console_set(e, 2, argv, out);
        strbuf_printf(out, "usage: %s [VALUE]\n", cvar_def_get(cvar)->name);
        return CONSOLE_E_USAGE;
    }
    strbuf_printf(out, "unknown command '%s%s%s' (try 'help')\n", argv[0], argc > 1 ? " " : "",
                  argc > 1 ? argv[1] : "");
    return CONSOLE_E_UNKNOWN;
}

/* ---- stdin ---------------------------------------------------------------------------- */

struct console {
    engine *engine;
    uv_poll_t poll;
    int fd;
    char line[CONSOLE_LINE_MAX];
    size_t len;
    bool overflow;  /* the current line is too long: drop it */
    strbuf out;
};

static void console_run_line(console *c)
{
    strbuf_reset(&c->out);
    console_execute(c->engine, c->line, &c->out);
    fputs(strbuf_cstr(&c->out), stdout);
    fflush(stdout);
}

static void console_poll_cb(uv_poll_t *handle, int status, int events)
{
    console *c = handle->data;
    char buf[512];
    ssize_t n;

    (void)events;
    if (status < 0)
        return;
    n = read(c->fd, buf, sizeof buf);
    if (n <= 0) {
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        uv_poll_stop(&c->poll); /* end of input: the server keeps running */
        return;
    }
    for (ssize_t i = 0; i < n; i++) {
        if (buf[i] != '\n') {
            if (c->len + 1 < sizeof c->line)
                c->line[c->len++] = buf[i];
            else
                c->overflow = true;
            continue;
        }
        c->line[c->len] = '\0';
        if (c->overflow)
            printf("command too long (at most %d bytes)\n", CONSOLE_LINE_MAX - 1);
        else if (c->len > 0)
            console_run_line(c);
        c->len = 0;
        c->overflow = false;
    }
}

int console_create(engine *e, int fd, console **out_console)
{
    console *c = calloc(1, sizeof *c);

    if (c == NULL)
        return -1;
    c->engine = e;
    c->fd = fd;
    strbuf_init(&c->out);
    if (uv_poll_init(e->loop, &c->poll, fd) != 0) {
        free(c);
        return -1;
    }
    c->poll.data = c;
    uv_poll_start(&c->poll, UV_READABLE, console_poll_cb);
    *out_console = c;
    return 0;
}

static void console_close_cb(uv_handle_t *handle)
{
    console *c = handle->data;

    strbuf_free(&c->out);
    free(c);
}

void console_close(console *c)
{
    if (c != NULL)
        uv_close((uv_handle_t *)&c->poll, console_close_cb);
}
