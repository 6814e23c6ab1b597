/*
 * engine.c - the frame, the loop's body and the table of periodic jobs.
 *
 * A frame runs its phases in order (net, world, repl, gc) and times each; before it, the
 * periodic jobs that are due run (engine_jobs.h). Start-up, signals and shutdown are
 * engine_init.c's; the collector's side of the gc phase is engine_collect.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "agones.h"
#include "dashboard.h"
#include "engine_internal.h"
#include "log.h"
#include "net_driver.h"
#include "reap_assert.h"
#include "service.h"
#include "sysmem.h"

const char *const engine_phase_names[ENGINE_PHASE_COUNT] = { "net", "world", "repl", "gc" };

_Static_assert((int)DASHBOARD_PHASES == (int)ENGINE_PHASE_COUNT,
               "the dashboard keeps every frame phase");

double engine_now(const engine *e)
{
    return (double)(uv_hrtime() - e->start_ns) / 1e9;
}

bool engine_players_connected(const engine *e)
{
    return e->net != NULL && net_driver_connection_count(e->net) > 0;
}

/* ---- periodic jobs ---------------------------------------------------------------------- */

static bool engine_job_net_sweep_cb(void *ctx, uint64_t now_ns)
{
    engine *e = ctx;

    (void)now_ns;
    if (e->net != NULL)
        net_driver_sweep(e->net);
    return true;
}

static bool engine_job_free_memory_cb(void *ctx, uint64_t now_ns)
{
    (void)now_ns;
    return engine_read_free_memory(ctx);
}

/* What the server looks like at the end of a second, for the dashboard's ring. */
static bool engine_job_dashboard_cb(void *ctx, uint64_t now_ns)
{
    engine *e = ctx;
    uint32_t actors[ENGINE_MAX_WORLDS] = { 0 };
    dashboard_inputs in = { 0 };
    sysmem_process proc;
    gc_stats st;

    (void)now_ns;
    if (e->dashboard == NULL)
        return true;
    for (uint32_t w = 0; w < e->world_count; w++)
        actors[w] = world_actor_count(e->worlds[w]);
    gc_stats_get(e->heap, &st);
    in.t = engine_now(e);
    in.players = e->net != NULL ? net_driver_player_count(e->net) : 0;
    in.connections = e->net != NULL ? net_driver_connection_count(e->net) : 0;
    in.objects = gc_object_count(e->heap);
    in.actors = actors;
    in.rss_mb = sysmem_process_read(&proc) ? (double)proc.resident_bytes / (1024.0 * 1024.0)
                                           : -1;
    in.bytes_sent_total = e->net != NULL ? net_driver_counters_get(e->net)->wire_bytes_out : 0;
    in.collections = st.collections;
    in.mark_seconds = st.mark_seconds;
    in.gather_seconds = st.gather_seconds;
    in.purge_seconds = st.purge_seconds;
    in.objects_before = st.objects_before;
    in.unreachable = st.unreachable;
    in.purge_pending = gc_is_incremental_purge_pending(e->heap);
    for (uint32_t w = 0; w < e->world_count; w++) {
        const world_streaming *ws = &e->worlds[w]->streaming;

        in.streaming |= ws->dim > 0;
        in.levels_loaded += ws->counts[WORLD_LEVEL_LOADED];
        in.levels_changing += ws->counts[WORLD_LEVEL_LOADING] + ws->counts[WORLD_LEVEL_UNLOADING];
        in.levels_pending_purge += ws->counts[WORLD_LEVEL_PENDING_PURGE];
    }
    in.streamed_in_total = e->env.streaming.stats.streamed_in;
    in.streamed_out_total = e->env.streaming.stats.streamed_out;
    dashboard_second(e->dashboard, &in);
    return true;
}

/* Every periodic job, with its period (Redis's run_with_period). */
static const engine_job engine_jobs[ENGINE_JOB_COUNT] = {
    /* Connections that never said hello, handshakes that never finished; freed memory. */
    { "net sweep", 0, 100, engine_job_net_sweep_cb },
    /* gc.LowMemory.MemoryThresholdMB's reading, while that rule is on. */
    { "free memory", 0, 1000, engine_job_free_memory_cb },
    /* The admin page's one-second sample. */
    { "dashboard", 1000, 1000, engine_job_dashboard_cb },
};

void engine_jobs_begin(engine *e)
{
    engine_jobs_start(engine_jobs, ENGINE_JOB_COUNT, e->job_next_ns, uv_hrtime());
}

/* ---- the frame ------------------------------------------------------------------------ */

/* engine.TestFrameCostMs: the frame's world phase sleeps that long, a fake load that the
 * frame's figures and admission control see as work (the loop is not waiting in epoll). */
static void engine_test_frame_cost(const engine *e)
{
    double ms = cvar_get(&e->cvars, CVAR_ENGINE_TEST_FRAME_COST_MS);
    struct timespec ts;

    if (ms <= 0)
        return;
    ts.tv_sec = (time_t)(ms / 1000.0);
    ts.tv_nsec = (long)((ms - (double)ts.tv_sec * 1000.0) * 1e6);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

void engine_frame(engine *e)
{
    uint64_t t_start = uv_hrtime();
    double delta = (double)(t_start - e->last_frame_ns) / 1e9;
    uint64_t t_net, t_world, t_repl, t_end, streaming_ns = 0;
    uint64_t t_phase[ENGINE_PHASE_COUNT + 1];
    double slow_ms, frame_ms;
    bool travelled;
    sysmem_thread_usage usage_start, usage_end;
    bool have_usage = sysmem_thread_usage_read(&usage_start);

    e->last_frame_ns = t_start;
    e->frame++;
    engine_apply_cvars(e);

    net_driver_service(e->net);
    t_net = uv_hrtime();
    /* Pacing gives streaming's adds part of the frame's predicted slack. */
    e->env.streaming.cfg.add_budget =
        engine_gc_streaming_budget(&e->gc_config, engine_gc_slack_predict(&e->stream_slack),
                                   e->env.streaming.cfg.add_time_limit);
    memset(&e->env.streaming.work, 0, sizeof e->env.streaming.work);
    for (uint32_t i = 0; i < e->world_count; i++) {
        uint64_t t0;

        world_tick(e->worlds[i], delta);
        t0 = uv_hrtime();
        world_streaming_update(e->worlds[i], engine_now(e));
        streaming_ns += uv_hrtime() - t0;
    }
    engine_test_frame_cost(e);
    t_world = uv_hrtime();
    net_driver_replicate(e->net, delta);
    t_repl = uv_hrtime();
    /* Replication drained every world's outbox: the next frame's spawns start from none. */
    for (uint32_t i = 0; i < e->world_count; i++)
        REAP_ASSERT(e->worlds[i]->spawned_count == 0);
    /* A travel, while one runs, owns the collector; else the schedule decides. */
    memset(&e->gc_phase_work, 0, sizeof e->gc_phase_work);
    travelled = engine_tick_travel(e, t_repl);
    if (travelled)
        engine_note_collections(e);
    else
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
    engine_gc_slack_observe(&e->stream_slack, (double)(t_repl - t_start - streaming_ns) / 1e9);
    if (travelled)
        engine_travel_frame_observe(e, frame_ms / 1e3);
    if (frame_ms * 1e3 > 1e6 / e->opts.tick_hz) {
        /* The collector's when the frame would have fit without its gc phase. */
        e->frames_over_budget++;
        if ((double)(t_repl - t_start) / 1e3 <= 1e6 / e->opts.tick_hz)
            e->frames_over_budget_gc++;
    }
    dashboard_frame(e->dashboard, t_phase);
    slow_ms = cvar_get(&e->cvars, CVAR_ENGINE_SLOW_FRAME_MS);
    if (slow_ms > 0 && frame_ms > slow_ms) {
        e->slow_frames++;
        char budget[48] = "", cpu[64] = "", streaming[128] = "";

        if (e->gc_phase_work.budget > 0)
            snprintf(budget, sizeof budget, " (a %.1f ms budget)", e->gc_phase_work.budget * 1e3);
        if (streaming_ns > 0)
            snprintf(streaming, sizeof streaming,
                     "; streaming: decide %.1f, add %.1f, cluster %.1f, remove %.1f ms",
                     e->env.streaming.work.decide * 1e3, e->env.streaming.work.add * 1e3,
                     e->env.streaming.work.cluster * 1e3, e->env.streaming.work.remove * 1e3);
        /* A frame can be long without being busy: on a shared machine the kernel may give the
         * loop's CPU to another process mid-frame. */
        if (have_usage && sysmem_thread_usage_read(&usage_end))
            snprintf(cpu, sizeof cpu, "; on the CPU %.1f ms, preempted %llu time(s)",
                     (usage_end.cpu_seconds - usage_start.cpu_seconds) * 1e3,
                     (unsigned long long)(usage_end.preempted - usage_start.preempted));
        log_warn("slow frame %llu: %.1f ms (net %.1f, world %.1f, repl %.1f, gc %.1f); gc: "
                 "mark %.1f, gather %.1f, purge %.1f ms%s%s%s",
                 (unsigned long long)e->frame, frame_ms, (double)(t_net - t_start) / 1e6,
                 (double)(t_world - t_net) / 1e6, (double)(t_repl - t_world) / 1e6,
                 (double)(t_end - t_repl) / 1e6, e->gc_phase_work.mark * 1e3,
                 e->gc_phase_work.gather * 1e3, e->gc_phase_work.purge * 1e3, budget, streaming,
                 cpu);
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

/* The loop's body, once per --tick-hz period: the rate check, the periodic jobs that are due
 * (between frames, outside every phase's time), the frame. */
void engine_frame_cb(uv_timer_t *timer)
{
    engine *e = timer->data;
    uint64_t now, delay_ms;

    if (!e->stopping) {
        engine_watch_tick_rate(e);
        engine_jobs_run(engine_jobs, ENGINE_JOB_COUNT, e->job_next_ns, uv_hrtime(), e);
        engine_frame(e);
    }
    if (uv_is_closing((uv_handle_t *)timer))
        return;
    /* One shot at a time, aimed at the grid (engine_frame_due); the loop's clock is brought
     * up to date first, or libuv would count the wait from before this frame. */
    now = uv_hrtime();
    e->frame_due_ns = engine_frame_due(e->frame_due_ns, 1000000000ull / e->opts.tick_hz, now);
    uv_update_time(e->loop);
    /* At least 1 ms: a late frame's timer restarted at 0 is due again at once, and libuv runs
     * it again in the same pass over the timers, for ever: the loop would never poll its
     * sockets and signals again while frames run over the period. */
    delay_ms = (e->frame_due_ns - now + 999999) / 1000000;
    uv_timer_start(timer, engine_frame_cb, delay_ms > 0 ? delay_ms : 1, 0);
}

void engine_request_stop(engine *e, const char *reason)
{
    if (e->stopping)
        return;
    e->stopping = true;
    snprintf(e->stop_reason, sizeof e->stop_reason, "%s", reason);
    /* Not here: the caller may be inside an admin request or an ENet event. */
    uv_timer_start(&e->stop_timer, e->stop_cb, 0, 0);
}

int engine_run(engine *e)
{
    gc_stats st;

    gc_stats_get(e->heap, &st);
    e->seen_collections = st.collections;
    log_info("reap-server %s: map %s, %u world(s) at %u Hz, %u objects (%u permanent)",
             REAP_VERSION, engine_map_name(e), e->world_count, e->opts.tick_hz,
             gc_object_count(e->heap), gc_permanent_count(e->heap));
    log_info("listening on udp %s:%u", e->opts.bind, net_driver_port(e->net));
    log_info("admin on http://%s:%u (GET / dashboard, GET /metrics, GET /healthz, "
             "POST /console%s)",
             e->opts.admin_bind, e->admin_port,
             e->opts.admin_token[0] != '\0' ? " with the admin token" : "");
    /* The game port is bound and the first frame is scheduled: ready for players. */
    service_ready(e->service);
    agones_ready(e->agones);
    uv_run(e->loop, UV_RUN_DEFAULT);
    log_info("stopped%s", e->exit_status == ENGINE_EXIT_WORLD_LEAK
                              ? ": exit status 3, a travel leaked a world" : "");
    return e->exit_status;
}
