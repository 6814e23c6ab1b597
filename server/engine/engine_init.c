/*
 * engine_init.c - start-up, signals, config reload and shutdown.
 *
 * The top of the server: it builds the engine, then what stands beside it on the loop (the
 * net driver, the operator's side: admin, console, dashboard; Agones, systemd), and takes
 * them down in the reverse order. It is the only engine file that knows the operator's side:
 * admin and console read the engine (engine.h), the engine never calls them.
 */
#include "engine_init.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admin.h"
#include "agones.h"
#include "console.h"
#include "dashboard.h"
#include "engine_internal.h"
#include "log.h"
#include "net_driver.h"
#include "service.h"

/* ---- players, as orchestrators know them ------------------------------------------------ */

/* Players are known to Agones by the id their matchmaker gave (the GameServerAllocation put
 * it in the list; the hello carries it), else by "<id>-<name>": ids are unique for the
 * server's life, names are what an operator looks for. */
static void engine_player_joined_cb(void *ctx, uint32_t player_id, const char *name,
                                    const char *agones_id)
{
    engine *e = ctx;
    char value[AGONES_VALUE_MAX];

    if (e->agones == NULL)
        return;
    if (agones_id != NULL && agones_id[0] != '\0') {
        if (agones_value_is_valid(agones_id)) {
            agones_player_joined(e->agones, player_id, agones_id);
            return;
        }
        log_warn("agones: player %u's matchmaker id is not a list value (1-%d printable "
                 "characters, no space); listed as %u-%s", player_id, AGONES_VALUE_MAX - 1,
                 player_id, name != NULL ? name : "");
    }
    snprintf(value, sizeof value, "%u-%s", player_id, name != NULL ? name : "");
    agones_player_joined(e->agones, player_id, value);
}

static void engine_player_left_cb(void *ctx, uint32_t player_id, const char *name)
{
    engine *e = ctx;

    (void)name;
    agones_player_left(e->agones, player_id);
}

/* ---- stop ----------------------------------------------------------------------------- */

static void engine_close_handle(uv_handle_t *h)
{
    if (!uv_is_closing(h))
        uv_close(h, NULL);
}

static void engine_close_handles(engine *e)
{
    uv_signal_t *signals[] = { &e->sigint, &e->sigterm, &e->sighup, &e->sigusr1, &e->sigusr2 };

    engine_close_handle((uv_handle_t *)&e->frame_timer);
    engine_close_handle((uv_handle_t *)&e->stop_timer);
    for (size_t i = 0; i < sizeof signals / sizeof *signals; i++)
        engine_close_handle((uv_handle_t *)signals[i]);
    e->handles_open = false;
}

/* What stands beside the engine on the loop, but Agones (which may outlive a stop). */
static void engine_close_parts(engine *e)
{
    service_close(e->service);
    e->service = NULL;
    console_close(e->console);
    e->console = NULL;
    admin_close(e->admin);
    e->admin = NULL;
    dashboard_close(e->dashboard);
    e->dashboard = NULL;
    net_driver_close(e->net);
    e->net = NULL;
}

/* engine_request_stop's work, on the next loop iteration. */
static void engine_stop_cb(uv_timer_t *timer)
{
    engine *e = timer->data;
    uint32_t before;
    gc_result r;

    log_info("stopping (%s)", e->stop_reason);
    uv_timer_stop(&e->frame_timer);
    service_stopping(e->service);
    if (e->net != NULL)
        net_driver_shutdown(e->net, "server shutting down", 1.0);
    before = gc_object_count(e->heap);
    r = gc_collect(e->heap, 0, true);
    engine_cleanup_actors(e);
    if (r == GC_OK)
        log_info("final full purge: %u -> %u objects", before, gc_object_count(e->heap));
    else
        log_warn("final full purge failed: %s", gc_result_str(r));

    /* Agones: the goodbye is said, the players are gone: the sidecar may delete the pod. On
     * a signal the request finishes while the loop closes the other handles. After `quit`
     * the server stays up until Agones sends SIGTERM: a container that exits first may be
     * restarted by the kubelet before the pod is deleted. */
    agones_shutdown(e->agones);
    e->awaiting_sigterm = e->agones != NULL && strcmp(e->stop_reason, "SIGTERM") != 0 &&
                          strcmp(e->stop_reason, "SIGINT") != 0;
    if (!e->awaiting_sigterm) {
        agones_close(e->agones);
        e->agones = NULL;
    }
    engine_close_parts(e);
    if (e->awaiting_sigterm) {
        log_info("agones: Shutdown asked; staying up until SIGTERM");
        engine_close_handle((uv_handle_t *)&e->frame_timer);
        return;
    }
    engine_close_handles(e);
}

/* SIGHUP, as daemons do: re-read the config file's cvars. A file that no longer loads changes
 * nothing. */
static void engine_reload_config(engine *e)
{
    cvar_registry next = e->cvars;
    char err[512];
    uint32_t changed = 0;

    if (e->opts.config_path == NULL) {
        log_info("SIGHUP: no --config file to re-read; nothing changed");
        return;
    }
    if (engine_options_reload_cvars(&next, e->opts.config_path, err, sizeof err) != 0) {
        log_error("SIGHUP: config not reloaded, the current values stay: %s", err);
        return;
    }
    for (int i = 0; i < CVAR_COUNT; i++) {
        char was[64], now[64];

        if (next.values[i] == e->cvars.values[i])
            continue;
        changed++;
        cvar_format_number(e->cvars.values[i], was, sizeof was);
        cvar_format_number(next.values[i], now, sizeof now);
        log_fields(LOG_INFO,
                   LOG_FIELDS({ "cvar", cvar_def_get((cvar_id)i)->name }, { "value", now },
                              { "was", was }),
                   "SIGHUP: %s = %s (was %s)", cvar_def_get((cvar_id)i)->name, now, was);
    }
    e->cvars = next;
    engine_apply_cvars(e);
    log_info("SIGHUP: re-read %s: %u console variable(s) changed", e->opts.config_path,
             changed);
}

static void engine_log_status(engine *e)
{
    log_info("status: frame %llu, %.1f frames/s, %u player(s), %u object(s), %g s to the next "
             "collection",
             (unsigned long long)e->frame, e->tick_rate.achieved_hz,
             net_driver_player_count(e->net), gc_object_count(e->heap),
             e->gc.interval - e->gc.time_since_last_purge);
}

static void engine_signal_cb(uv_signal_t *sig, int signum)
{
    engine *e = sig->data;

    if (e->awaiting_sigterm) {
        /* The worlds are stopped: only SIGTERM/SIGINT mean something now. */
        if (signum != SIGTERM && signum != SIGINT) {
            log_info("signal %d: stopped, waiting for SIGTERM; ignored", signum);
            return;
        }
        log_info("%s: exiting", signum == SIGINT ? "SIGINT" : "SIGTERM");
        e->awaiting_sigterm = false;
        agones_close(e->agones);
        e->agones = NULL;
        engine_close_handles(e);
        return;
    }
    if (signum == SIGHUP) {
        engine_reload_config(e);
        return;
    }
    if (signum == SIGUSR1) {
        engine_log_status(e);
        return;
    }
    if (signum == SIGUSR2) {
        log_info("SIGUSR2: ignored");
        return;
    }
    if (e->stopping) {
        log_warn("%s again while stopping; stop is under way", signum == SIGINT ? "SIGINT" : "SIGTERM");
        return;
    }
    engine_request_stop(e, signum == SIGINT ? "SIGINT" : "SIGTERM");
}

/* ---- start ---------------------------------------------------------------------------- */

/* The collector's diagnostics (gc.VerifyAssumptions, gc.GarbageReferenceTrackingEnabled)
 * go to the log. */
static void engine_gc_diagnostic_cb(const char *line, void *userdata)
{
    (void)userdata;
    log_warn("gc: %s", line);
}

static int engine_create_heap(engine *e, char *err, size_t err_size)
{
    gc_heap_config cfg;
    gc_result r;

    memset(&cfg, 0, sizeof cfg);
    engine_settings_from_cvars(&e->cvars, &cfg.settings);
    r = gc_heap_create(&cfg, &e->heap);
    if (r != GC_OK) {
        snprintf(err, err_size, "cannot create the collector heap: %s", gc_result_str(r));
        return -1;
    }
    gc_heap_set_diagnostics(e->heap, engine_gc_diagnostic_cb, NULL);
    world_env_init(&e->env, e->heap);
    /* Classes are created once and live as long as the process: keep them out of every
     * collection (UE's disregard-for-GC region). */
    r = gc_disregard_open(e->heap);
    if (r == GC_OK)
        r = world_classes_register(e->heap, &e->env.classes);
    if (r == GC_OK && e->opts.profile != NULL &&
        !world_archetypes_compile(&e->env, e->opts.profile, e->opts.world_profile_path, err,
                                  err_size))
        return -1;
    if (r == GC_OK)
        r = gc_disregard_close(e->heap);
    if (r != GC_OK) {
        snprintf(err, err_size, "cannot register classes: %s", gc_result_str(r));
        return -1;
    }
    if (e->env.n_archetypes > 0) {
        char names[2048];
        size_t n = 0;

        names[0] = '\0';
        for (uint32_t i = 0; i < e->env.n_archetypes && n + 1 < sizeof names; i++)
            n += (size_t)snprintf(names + n, sizeof names - n, "%s%s (%u objects)",
                                  i > 0 ? ", " : "", e->env.archetypes[i].def.name,
                                  e->env.archetypes[i].def.objects);
        log_info("world profile %s: %u archetypes: %s", e->opts.world_profile_path,
                 e->env.n_archetypes, names);
    }
    return 0;
}

/* A profile with [cells]: the grid must be one streaming can hold. */
static int engine_check_cells(const engine *e, char *err, size_t err_size)
{
    const world_streaming_config *cfg = &e->env.streaming.cfg;
    double dim;

    if (!e->env.cells.present)
        return 0;
    dim = ceil((double)e->env.extent / cfg->cell_size);
    if (dim > WORLD_STREAMING_DIM_MAX) {
        snprintf(err, err_size, "%s: [cells]: world.Extent %g over world.StreamingCellSize %g "
                 "makes %.0f cells a side (at most %d): raise the cell size or lower the extent",
                 e->opts.world_profile_path, (double)e->env.extent, (double)cfg->cell_size, dim,
                 WORLD_STREAMING_DIM_MAX);
        return -1;
    }
    return 0;
}

static void engine_log_cells(const engine *e, double seconds)
{
    const world_streaming *st = &e->worlds[0]->streaming;
    const world_streaming_config *cfg = &e->env.streaming.cfg;

    if (st->dim == 0)
        return;
    log_info("streaming: %u world(s) of %ux%u cells of %g units, %u objects placed a cell; "
             "wp.Runtime.EnableServerStreaming=%d%s (%u objects after %.2f s)",
             e->world_count, st->dim, st->dim, (double)st->cell_size, e->env.cells.objects,
             cfg->enabled ? 1 : 0,
             cfg->enabled ? (cfg->streaming_out ? ": cells load and unload around players"
                                                : ": cells load around players and stay")
                          : ": every cell loaded and kept",
             gc_object_count(e->heap), seconds);
}

static int engine_create_worlds(engine *e, char *err, size_t err_size)
{
    uint64_t t0 = uv_hrtime();
    gc_result r;

    for (uint32_t i = 0; i < e->map_count; i++) {
        /* Every map's grid must be one streaming can hold. */
        e->env.cells = e->maps[i].cells;
        e->env.extent = e->maps[i].extent > 0 ? e->maps[i].extent
                                              : (float)cvar_get(&e->cvars, CVAR_WORLD_EXTENT);
        if (engine_check_cells(e, err, err_size) != 0)
            return -1;
    }
    e->worlds = calloc(e->opts.worlds, sizeof *e->worlds);
    e->next_worlds = calloc(e->opts.worlds, sizeof *e->next_worlds);
    e->retired = calloc(e->opts.worlds, sizeof *e->retired);
    if (e->worlds == NULL || e->next_worlds == NULL || e->retired == NULL) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    r = world_game_instance_create(&e->env);
    if (r != GC_OK) {
        snprintf(err, err_size, "cannot create the game instance: %s", gc_result_str(r));
        return -1;
    }
    if (engine_load_start_map(e, err, err_size) != 0)
        return -1;
    for (uint32_t i = 0; i < e->world_count; i++)
        snprintf(e->world_names[i], sizeof e->world_names[i], "%s", e->worlds[i]->name);
    engine_log_cells(e, (double)(uv_hrtime() - t0) / 1e9);
    return 0;
}

static void engine_level_unload_cb(void *ctx, world *w, level *lvl)
{
    engine *e = ctx;

    net_driver_notify_streaming_level_unload(e->net, w, lvl);
}

static int engine_create_net(engine *e, char *err, size_t err_size)
{
    net_driver_env env = {
        .loop = e->loop,
        .heap = e->heap,
        .cvars = &e->cvars,
        .worlds = e->worlds,
        .world_count = e->world_count,
        .tick_hz = e->opts.tick_hz,
        .frame = &e->frame,
        .frame_start_ns = &e->last_frame_ns,
        .start_ns = e->start_ns,
        .gc_interval = &e->gc.interval,
        .gc_since_purge = &e->gc.time_since_last_purge,
        .hooks_ctx = e,
        .player_joined_cb = engine_player_joined_cb,
        .player_left_cb = engine_player_left_cb,
    };

    if (net_driver_create(&env, e->opts.bind, e->opts.port, e->opts.max_players, &e->net, err,
                          err_size) != 0)
        return -1;
    /* Positions quantized for the start map's extent. */
    net_driver_set_worlds(e->net, e->worlds, e->world_count);
    /* The net side hears of every level that streams out (UE NotifyStreamingLevelUnload). */
    e->env.streaming.level_unload_cb = engine_level_unload_cb;
    e->env.streaming.level_unload_ctx = e;
    return 0;
}

static int engine_create_dashboard(engine *e, char *err, size_t err_size)
{
    const char *names[ENGINE_MAX_WORLDS];
    gc_stats st;

    /* The engine's copies: a world's own name goes with it at a travel. */
    for (uint32_t w = 0; w < e->world_count; w++)
        names[w] = e->world_names[w];
    gc_stats_get(e->heap, &st);
    return dashboard_create(names, e->world_count, e->opts.tick_hz, st.collections,
                            &e->dashboard, err, err_size);
}

static int engine_start_handles(engine *e, char *err, size_t err_size)
{
    uint64_t period = 1000u / e->opts.tick_hz;
    int r;

    if (period == 0)
        period = 1;
    uv_timer_init(e->loop, &e->frame_timer);
    uv_timer_init(e->loop, &e->stop_timer);
    e->frame_timer.data = e->stop_timer.data = e;
    e->stop_cb = engine_stop_cb;
    e->handles_open = true;
    {
        uv_signal_t *handles[] = { &e->sigint, &e->sigterm, &e->sighup, &e->sigusr1,
                                   &e->sigusr2 };
        const int signums[] = { SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 };

        r = 0;
        for (size_t i = 0; i < sizeof signums / sizeof *signums; i++) {
            uv_signal_init(e->loop, handles[i]);
            handles[i]->data = e;
            if (r == 0)
                r = uv_signal_start(handles[i], engine_signal_cb, signums[i]);
        }
    }
    engine_jobs_begin(e);
    e->frame_due_ns = uv_hrtime() + 1000000000ull / e->opts.tick_hz;
    if (r == 0)
        r = uv_timer_start(&e->frame_timer, engine_frame_cb, period, 0);
    if (r != 0) {
        snprintf(err, err_size, "cannot start the loop handles: %s", uv_strerror(r));
        return -1;
    }
    return 0;
}

/* Agones when --agones or AGONES_SDK_HTTP_PORT asks for it; labels say what this server is. */
static int engine_start_agones(engine *e, char *err, size_t err_size)
{
    agones_config cfg;
    char worlds[16];

    if (!agones_config_from_env(e->opts.agones, e->opts.agones_alpha_players, &cfg, err,
                                err_size))
        return err[0] != '\0' ? -1 : 0;
    cfg.max_players = e->opts.max_players;
    cfg.shutdown_idle_s = e->opts.agones_shutdown_idle_s;
    if (agones_create(e->loop, &cfg, &e->agones, err, err_size) != 0)
        return -1;
    snprintf(worlds, sizeof worlds, "%u", e->world_count);
    agones_set_label(e->agones, "reap-version", REAP_VERSION);
    agones_set_label(e->agones, "reap-worlds", worlds);
    return 0;
}

int engine_init(engine *e, uv_loop_t *loop, const engine_options *opts,
                const cvar_registry *cvars, char *err, size_t err_size)
{
    memset(e, 0, sizeof *e);
    e->opts = *opts;
    e->cvars = *cvars;
    e->loop = loop;
    e->start_ns = e->last_frame_ns = uv_hrtime();
    e->free_memory_mb = -1;
    engine_gc_schedule_init(&e->gc);
    stats_histogram_init(&e->tick_seconds);
    for (int p = 0; p < ENGINE_PHASE_COUNT; p++)
        stats_histogram_init(&e->phase_seconds[p]);
    stats_histogram_init(&e->gc_mark_seconds);
    stats_histogram_init(&e->gc_frame_work_seconds);
    stats_histogram_init(&e->gc_frame_budget_seconds);
    stats_histogram_init(&e->gc_collection_seconds);
    engine_gc_slack_init(&e->gc_slack);
    engine_gc_slack_init(&e->stream_slack);
    tick_rate_init(&e->tick_rate, opts->tick_hz);

    if (engine_create_heap(e, err, err_size) != 0)
        goto fail;
    engine_maps_init(e);
    engine_apply_cvars(e);
    if (engine_create_worlds(e, err, err_size) != 0)
        goto fail;
    if (engine_create_net(e, err, err_size) != 0)
        goto fail;
    if (admin_create(e, opts->admin_bind, opts->admin_port, &e->admin, err, err_size) != 0)
        goto fail;
    e->admin_port = admin_port(e->admin);
    if (engine_create_dashboard(e, err, err_size) != 0)
        goto fail;
    if (engine_start_handles(e, err, err_size) != 0)
        goto fail;
    if (isatty(STDIN_FILENO) && console_create(e, STDIN_FILENO, &e->console) != 0)
        log_warn("console: cannot read commands from the terminal");
    if (engine_start_agones(e, err, err_size) != 0)
        goto fail;
    if (service_create(e->loop, &e->frame, &e->service, err, err_size) != 0)
        goto fail;
    return 0;
fail:
    engine_close(e);
    return -1;
}

void engine_close(engine *e)
{
    /* Handles still open mean start-up failed half-way; close them and let libuv finish. */
    if (e->handles_open || e->net != NULL || e->admin != NULL || e->console != NULL ||
        e->agones != NULL || e->service != NULL || e->dashboard != NULL) {
        agones_close(e->agones);
        e->agones = NULL;
        engine_close_parts(e);
        if (e->handles_open)
            engine_close_handles(e);
        uv_run(e->loop, UV_RUN_DEFAULT);
    }
    if (e->heap != NULL)
        gc_heap_destroy(e->heap);
    e->heap = NULL;
    world_env_close(&e->env);
    free(e->worlds);
    free(e->next_worlds);
    free(e->retired);
    e->next_worlds = e->retired = NULL;
    e->worlds = NULL;
    e->world_count = 0;
}
