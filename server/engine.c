/*
 * engine.c - start-up, the frame, collector scheduling glue and shutdown.
 */
#include "engine.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admin.h"
#include "agones.h"
#include "console.h"
#include "dashboard.h"
#include "log.h"
#include "net_driver.h"
#include "service.h"
#include "sysmem.h"

double engine_now(const engine *e)
{
    return (double)(uv_hrtime() - e->start_ns) / 1e9;
}

/* ---- cvars -> collector settings ------------------------------------------------------ */

static void engine_settings_from_cvars(const cvar_registry *cv, gc_settings *s)
{
    gc_settings_default(s);
    s->num_retries_before_forcing = (uint32_t)cvar_get_int(cv, CVAR_GC_NUM_RETRIES_BEFORE_FORCING);
    s->num_workers = (uint32_t)cvar_get_int(cv, CVAR_GC_NUM_WORKER_THREADS);
    s->allow_incremental_reachability = cvar_get_bool(cv, CVAR_GC_ALLOW_INCREMENTAL_REACHABILITY);
    s->incremental_reachability_time_limit =
        cvar_get(cv, CVAR_GC_INCREMENTAL_REACHABILITY_TIME_LIMIT);
    s->delay_reachability_iterations =
        (uint32_t)cvar_get_int(cv, CVAR_GC_DELAY_REACHABILITY_ITERATIONS);
    s->allow_incremental_gather = cvar_get_bool(cv, CVAR_GC_ALLOW_INCREMENTAL_GATHER);
    s->incremental_gather_time_limit = cvar_get(cv, CVAR_GC_INCREMENTAL_GATHER_TIME_LIMIT);
    s->incremental_begin_destroy = cvar_get_bool(cv, CVAR_GC_INCREMENTAL_BEGIN_DESTROY);
    s->create_clusters = cvar_get_bool(cv, CVAR_GC_CREATE_CLUSTERS);
    s->min_cluster_size = (uint32_t)cvar_get_int(cv, CVAR_GC_MIN_CLUSTER_SIZE);
    s->history_size = (uint32_t)cvar_get_int(cv, CVAR_GC_HISTORY_SIZE);
    s->garbage_reference_tracking = cvar_get_bool(cv, CVAR_GC_GARBAGE_REFERENCE_TRACKING);
    s->verify_assumptions = cvar_get_bool(cv, CVAR_GC_VERIFY_ASSUMPTIONS);
    /* Pacing marks in each frame's slack: marking must be allowed to stop. */
    if (cvar_get_bool(cv, CVAR_GC_FRAME_SLACK_PACING))
        s->allow_incremental_reachability = true;
}

static void engine_gc_config_from_cvars(const cvar_registry *cv, uint32_t tick_hz,
                                        engine_gc_config *c)
{
    c->time_between_purging = cvar_get(cv, CVAR_GC_TIME_BETWEEN_PURGING);
    c->idle_server_multiplier = cvar_get(cv, CVAR_GC_IDLE_SERVER_MULTIPLIER);
    c->low_memory_threshold_mb = cvar_get(cv, CVAR_GC_LOW_MEMORY_THRESHOLD_MB);
    c->low_memory_time_between_purging = cvar_get(cv, CVAR_GC_LOW_MEMORY_TIME_BETWEEN_PURGING);
    c->incremental_time_per_frame = cvar_get(cv, CVAR_GC_INCREMENTAL_TIME_PER_FRAME);
    c->collect_every_frame = cvar_get_int(cv, CVAR_GC_COLLECT_EVERY_FRAME);
    c->continuous_incremental = cvar_get_bool(cv, CVAR_GC_CONTINUOUS_INCREMENTAL);
    c->frame_slack_pacing = cvar_get_bool(cv, CVAR_GC_FRAME_SLACK_PACING);
    c->frame_slack_margin = cvar_get(cv, CVAR_GC_FRAME_SLACK_MARGIN);
    c->frame_period = tick_hz > 0 ? 1.0 / tick_hz : 0;
    c->reachability_time_limit = cvar_get(cv, CVAR_GC_INCREMENTAL_REACHABILITY_TIME_LIMIT);
}

const char *const engine_phase_names[ENGINE_PHASE_COUNT] = { "net", "world", "repl", "gc" };

void engine_apply_cvars(engine *e)
{
    gc_settings s;
    gc_result r;

    if (e->applied_cvar_generation == e->cvars.generation)
        return;
    e->env.extent = (float)cvar_get(&e->cvars, CVAR_WORLD_EXTENT);
    e->env.cull_distance = (float)cvar_get(&e->cvars, CVAR_NET_CULL_DISTANCE);
    for (uint32_t i = 0; i < e->world_count; i++)
        world_apply_settings(e->worlds[i]);
    engine_settings_from_cvars(&e->cvars, &s);
    r = gc_heap_configure(e->heap, &s);
    if (r != GC_OK)
        log_warn("gc: settings refused: %s", gc_result_str(r));
    engine_gc_config_from_cvars(&e->cvars, e->opts.tick_hz, &e->gc_config);
    e->applied_cvar_generation = e->cvars.generation;
}

/* ---- the collector as the schedule sees it ------------------------------------------ */

static bool engine_ops_try_collect(void *ctx, bool full_purge)
{
    engine *e = ctx;
    gc_result r = gc_try_collect(e->heap, 0, full_purge);

    if (r == GC_OK)
        return true;
    if (r == GC_E_LOCKED)
        log_debug("gc: try-collect gave up: the GC lock is held");
    else
        log_warn("gc: collection failed: %s", gc_result_str(r));
    return false;
}

static void engine_ops_reachability_step(void *ctx)
{
    gc_incremental_reachability_step(((engine *)ctx)->heap);
}

static void engine_ops_incremental_purge(void *ctx, double time_limit)
{
    engine *e = ctx;

    if (gc_is_incremental_purge_pending(e->heap))
        gc_incremental_purge(e->heap, time_limit);
}

static bool engine_ops_is_reachability_pending(void *ctx)
{
    return gc_is_incremental_reachability_pending(((engine *)ctx)->heap);
}

static bool engine_ops_is_purge_pending(void *ctx)
{
    return gc_is_incremental_purge_pending(((engine *)ctx)->heap);
}

static void engine_ops_cleanup_actors(void *ctx)
{
    engine *e = ctx;

    for (uint32_t i = 0; i < e->world_count; i++)
        world_cleanup_actors(e->worlds[i]);
}

/* Pacing: the next mark slices may use `seconds` (the heap's settings are copied, changed and
 * given back; nothing is allocated). */
static void engine_ops_set_time_limit(void *ctx, double seconds)
{
    engine *e = ctx;
    gc_settings s = *gc_heap_settings(e->heap);
    gc_result r;

    if (s.allow_incremental_reachability && s.incremental_reachability_time_limit == seconds)
        return;
    s.allow_incremental_reachability = true;
    s.incremental_reachability_time_limit = seconds;
    r = gc_heap_configure(e->heap, &s);
    if (r != GC_OK)
        log_warn("gc: pacing's time limit %g s refused: %s", seconds, gc_result_str(r));
}

bool engine_players_connected(const engine *e)
{
    return e->net != NULL && net_driver_connection_count(e->net) > 0;
}

/* Players are known to Agones by the id their matchmaker gave (the GameServerAllocation put
 * it in the list; the hello carries it), else by "<id>-<name>": ids are unique for the
 * server's life, names are what an operator looks for. */
void engine_player_joined(engine *e, uint32_t player_id, const char *name,
                          const char *agones_id)
{
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

void engine_player_left(engine *e, uint32_t player_id, const char *name)
{
    (void)name;
    agones_player_left(e->agones, player_id);
}

static double engine_free_memory(engine *e, uint64_t now_ns)
{
    if (e->gc_config.low_memory_threshold_mb <= 0)
        return -1;
    /* Reading /proc each frame is wasteful; once a second is plenty for this rule. */
    if (e->free_memory_read_ns == 0 || now_ns - e->free_memory_read_ns > 1000000000u) {
        e->free_memory_mb = sysmem_free_mb();
        e->free_memory_read_ns = now_ns;
    }
    return e->free_memory_mb;
}

/* Logs and measures every collection the collector finished since the last call. */
static void engine_note_collections(engine *e)
{
    gc_stats st;

    gc_stats_get(e->heap, &st);
    if (st.collections == e->seen_collections)
        return;
    e->seen_collections = st.collections;
    e->gc_assumption_violations += st.assumption_violations;
    e->gc_garbage_references += st.garbage_references;
    stats_histogram_observe(&e->gc_mark_seconds, st.mark_seconds);
    log_info("gc: collection %llu: %u -> %u objects (%u unreachable), mark %.3f ms in %u "
             "slice(s), gather %.3f ms, purge %.3f ms%s",
             (unsigned long long)st.collections, st.objects_before,
             st.objects_before - st.unreachable, st.unreachable, st.mark_seconds * 1e3,
             st.mark_slices, st.gather_seconds * 1e3, st.purge_seconds * 1e3,
             st.unreachable > 0 && gc_is_incremental_purge_pending(e->heap)
                 ? " (purge continues incrementally)"
                 : "");
}

/* Once a purge has freed many objects, malloc gives its free pages back to the system, so a
 * churn's peak does not stay resident (the collector returns its own slabs itself). Every
 * frame this costs a copy of the collector's statistics, nothing more. */
static void engine_trim_memory(engine *e)
{
    enum { TRIM_OBJECTS = 10000 };
    gc_stats st;

    gc_stats_get(e->heap, &st);
    if (st.objects_destroyed - e->trim_destroyed < TRIM_OBJECTS ||
        gc_is_incremental_purge_pending(e->heap))
        return;
    malloc_trim(0);
    e->trim_destroyed = st.objects_destroyed;
}

static void engine_tick_gc(engine *e, double delta, uint64_t now_ns)
{
    engine_gc_ops ops = {
        .ctx = e,
        .try_collect = engine_ops_try_collect,
        .reachability_step = engine_ops_reachability_step,
        .incremental_purge = engine_ops_incremental_purge,
        .is_reachability_pending = engine_ops_is_reachability_pending,
        .is_purge_pending = engine_ops_is_purge_pending,
        .cleanup_actors = engine_ops_cleanup_actors,
        .set_time_limit = engine_ops_set_time_limit,
    };
    engine_gc_frame fr;
    bool had_work = gc_is_incremental_purge_pending(e->heap) ||
                    gc_is_incremental_reachability_pending(e->heap);
    uint64_t t0 = uv_hrtime();
    engine_gc_action action;

    fr.frame = e->frame;
    fr.delta_seconds = delta;
    fr.dedicated_server = true;
    fr.any_world_begun_play = false;
    for (uint32_t i = 0; i < e->world_count; i++)
        fr.any_world_begun_play |= e->worlds[i]->begun_play;
    fr.has_game_world = e->world_count > 0;
    fr.players_connected = engine_players_connected(e);
    fr.free_memory_mb = engine_free_memory(e, now_ns);
    /* e->last_frame_ns is this frame's start. */
    fr.work_seconds = (double)(now_ns - e->last_frame_ns) / 1e9;
    fr.predicted_work_seconds = engine_gc_slack_predict(&e->gc_slack);

    action = engine_conditional_collect_garbage(&e->gc, &e->gc_config, &fr, &ops);
    if (action == ENGINE_GC_COLLECT || action == ENGINE_GC_FORCED_FULL_PURGE ||
        action == ENGINE_GC_REACHABILITY_STEP || action == ENGINE_GC_EARLY_COLLECT ||
        (action == ENGINE_GC_PURGE_STEP && had_work)) {
        stats_histogram_observe(&e->gc_frame_work_seconds, (double)(uv_hrtime() - t0) / 1e9);
        if (e->gc.budget > 0)
            stats_histogram_observe(&e->gc_frame_budget_seconds, e->gc.budget);
    }
    if (e->gc.finished != e->seen_finished) {
        e->seen_finished = e->gc.finished;
        stats_histogram_observe(&e->gc_collection_seconds, e->gc.last_seconds);
        log_info("gc: interval collection ended: %llu frame(s), %.3f s, %+.3f s against UE's "
                 "schedule%s",
                 (unsigned long long)e->gc.last_frames, e->gc.last_seconds,
                 e->gc.last_late_seconds, e->gc_config.frame_slack_pacing ? " (paced)" : "");
    }
    engine_note_collections(e);
    engine_trim_memory(e);
}

/* ---- the frame ------------------------------------------------------------------------ */

void engine_frame(engine *e)
{
    uint64_t t_start = uv_hrtime();
    double delta = (double)(t_start - e->last_frame_ns) / 1e9;
    uint64_t t_net, t_world, t_repl, t_end;
    uint64_t t_phase[ENGINE_PHASE_COUNT + 1];
    double slow_ms, frame_ms;

    e->last_frame_ns = t_start;
    e->frame++;
    engine_apply_cvars(e);

    net_driver_service(e->net);
    t_net = uv_hrtime();
    for (uint32_t i = 0; i < e->world_count; i++)
        world_tick(e->worlds[i], delta);
    t_world = uv_hrtime();
    net_driver_replicate(e->net, delta);
    t_repl = uv_hrtime();
    engine_tick_gc(e, delta, t_repl);
    t_end = uv_hrtime();

    frame_ms = (double)(t_end - t_start) / 1e6;
    stats_histogram_observe(&e->tick_seconds, frame_ms / 1e3);
    t_phase[ENGINE_PHASE_NET] = t_start;
    t_phase[ENGINE_PHASE_WORLD] = t_net;
    t_phase[ENGINE_PHASE_REPL] = t_world;
    t_phase[ENGINE_PHASE_GC] = t_repl;
    t_phase[ENGINE_PHASE_COUNT] = t_end;
    for (int p = 0; p < ENGINE_PHASE_COUNT; p++)
        stats_histogram_observe(&e->phase_seconds[p],
                                (double)(t_phase[p + 1] - t_phase[p]) / 1e9);
    engine_gc_slack_observe(&e->gc_slack, (double)(t_repl - t_start) / 1e9);
    dashboard_frame(e->dashboard, t_phase);
    slow_ms = cvar_get(&e->cvars, CVAR_ENGINE_SLOW_FRAME_MS);
    if (slow_ms > 0 && frame_ms > slow_ms) {
        e->slow_frames++;
        log_warn("slow frame %llu: %.1f ms (net %.1f, world %.1f, repl %.1f, gc %.1f)",
                 (unsigned long long)e->frame, frame_ms, (double)(t_net - t_start) / 1e6,
                 (double)(t_world - t_net) / 1e6, (double)(t_repl - t_world) / 1e6,
                 (double)(t_end - t_repl) / 1e6);
    }
}

/* Warns when the loop does not achieve --tick-hz for a few seconds in a row. */
static void engine_watch_tick_rate(engine *e)
{
    switch (tick_rate_frame(&e->tick_rate, engine_now(e))) {
    case TICK_RATE_SLOW: {
        char achieved[32], target[16];

        snprintf(achieved, sizeof achieved, "%.1f", e->tick_rate.achieved_hz);
        snprintf(target, sizeof target, "%u", e->opts.tick_hz);
        log_fields(LOG_WARN, LOG_FIELDS({ "achieved_hz", achieved }, { "tick_hz", target }),
                   "frame rate: %s frames/s for %d s, under %.0f%% of --tick-hz %s; the machine "
                   "cannot sustain this rate (lower --tick-hz, or the load)",
                   achieved, TICK_RATE_SLOW_WINDOWS, TICK_RATE_FRACTION * 100, target);
        break;
    }
    case TICK_RATE_RECOVERED:
        log_info("frame rate: back to %.1f frames/s (--tick-hz %u)", e->tick_rate.achieved_hz,
                 e->opts.tick_hz);
        break;
    case TICK_RATE_NOTHING:
        break;
    }
}

static void engine_frame_cb(uv_timer_t *timer)
{
    engine *e = timer->data;

    if (e->stopping)
        return;
    engine_watch_tick_rate(e);
    engine_frame(e);
}

void engine_collect_garbage_now(engine *e, strbuf *out)
{
    uint32_t before = gc_object_count(e->heap);
    uint64_t t0 = uv_hrtime();
    gc_result r = gc_collect(e->heap, 0, true);

    if (r != GC_OK) {
        strbuf_printf(out, "obj gc failed: %s\n", gc_result_str(r));
        return;
    }
    engine_ops_cleanup_actors(e);
    e->gc.time_since_last_purge = 0;
    e->gc.full_purge_triggered = false;
    strbuf_printf(out, "collected: %u -> %u objects in %.3f ms\n", before,
                  gc_object_count(e->heap), (double)(uv_hrtime() - t0) / 1e6);
    engine_note_collections(e);
    engine_trim_memory(e);
}

world *engine_find_world(engine *e, const char *name)
{
    if (e->world_count == 0)
        return NULL;
    if (name == NULL || name[0] == '\0')
        return e->worlds[0];
    for (uint32_t i = 0; i < e->world_count; i++)
        if (strcmp(e->worlds[i]->name, name) == 0)
            return e->worlds[i];
    return NULL;
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
    engine_ops_cleanup_actors(e);
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
    if (e->awaiting_sigterm) {
        log_info("agones: Shutdown asked; staying up until SIGTERM");
        engine_close_handle((uv_handle_t *)&e->frame_timer);
        return;
    }
    engine_close_handles(e);
}

void engine_request_stop(engine *e, const char *reason)
{
    if (e->stopping)
        return;
    e->stopping = true;
    snprintf(e->stop_reason, sizeof e->stop_reason, "%s", reason);
    /* Not here: the caller may be inside an admin request or an ENet event. */
    uv_timer_start(&e->stop_timer, engine_stop_cb, 0, 0);
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
    if (r == GC_OK)
        r = gc_disregard_close(e->heap);
    if (r != GC_OK) {
        snprintf(err, err_size, "cannot register classes: %s", gc_result_str(r));
        return -1;
    }
    return 0;
}

static int engine_create_worlds(engine *e, char *err, size_t err_size)
{
    e->worlds = calloc(e->opts.worlds, sizeof *e->worlds);
    if (e->worlds == NULL) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < e->opts.worlds; i++) {
        gc_result r = world_create(&e->env, i, &e->worlds[i]);
        if (r != GC_OK) {
            snprintf(err, err_size, "cannot create World%u: %s", i, gc_result_str(r));
            return -1;
        }
        e->world_count++;
    }
    if (cvar_get_int(&e->cvars, CVAR_WORLD_PERSISTENT_PROPS) > 0) {
        uint32_t n = (uint32_t)cvar_get_int(&e->cvars, CVAR_WORLD_PERSISTENT_PROPS);
        gc_result r = world_spawn_persistent_props(e->worlds[0], n);

        if (r != GC_OK) {
            snprintf(err, err_size, "cannot spawn %u persistent props (world.PersistentProps): "
                     "%s", n, gc_result_str(r));
            return -1;
        }
        log_info("%s: %u persistent props", e->worlds[0]->name, n);
    }
    return 0;
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
    if (r == 0)
        r = uv_timer_start(&e->frame_timer, engine_frame_cb, period, period);
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
    tick_rate_init(&e->tick_rate, opts->tick_hz);

    if (engine_create_heap(e, err, err_size) != 0)
        goto fail;
    engine_apply_cvars(e);
    if (engine_create_worlds(e, err, err_size) != 0)
        goto fail;
    if (net_driver_create(e, opts->bind, opts->port, opts->max_players, &e->net, err,
                          err_size) != 0)
        goto fail;
    if (admin_create(e, opts->admin_bind, opts->admin_port, &e->admin, err, err_size) != 0)
        goto fail;
    if (dashboard_create(e, &e->dashboard, err, err_size) != 0)
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

int engine_run(engine *e)
{
    gc_stats st;

    gc_stats_get(e->heap, &st);
    e->seen_collections = st.collections;
    log_info("reap-server %s: %u world(s) at %u Hz, %u objects (%u permanent)", REAP_VERSION,
             e->world_count, e->opts.tick_hz, gc_object_count(e->heap),
             gc_permanent_count(e->heap));
    log_info("listening on udp %s:%u", e->opts.bind, net_driver_port(e->net));
    log_info("admin on http://%s:%u (GET / dashboard, GET /metrics, GET /healthz, "
             "POST /console%s)",
             e->opts.admin_bind, admin_port(e->admin),
             e->opts.admin_token[0] != '\0' ? " with the admin token" : "");
    /* The game port is bound and the first frame is scheduled: ready for players. */
    service_ready(e->service);
    agones_ready(e->agones);
    uv_run(e->loop, UV_RUN_DEFAULT);
    log_info("stopped");
    return 0;
}

void engine_close(engine *e)
{
    /* Handles still open mean start-up failed half-way; close them and let libuv finish. */
    if (e->handles_open || e->net != NULL || e->admin != NULL || e->console != NULL ||
        e->agones != NULL || e->service != NULL || e->dashboard != NULL) {
        agones_close(e->agones);
        service_close(e->service);
        console_close(e->console);
        admin_close(e->admin);
        dashboard_close(e->dashboard);
        e->dashboard = NULL;
        net_driver_close(e->net);
        e->agones = NULL;
        e->service = NULL;
        e->console = NULL;
        e->admin = NULL;
        e->net = NULL;
        if (e->handles_open)
            engine_close_handles(e);
        uv_run(e->loop, UV_RUN_DEFAULT);
    }
    if (e->heap != NULL)
        gc_heap_destroy(e->heap);
    e->heap = NULL;
    free(e->worlds);
    e->worlds = NULL;
    e->world_count = 0;
}
