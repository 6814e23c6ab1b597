/*
 * engine_collect.c - the collector as the frame drives it.
 *
 * engine_gc.c decides when to collect from a view of the frame; this file builds that view,
 * hands the schedule the operations it may call (an ops table over the heap and the worlds),
 * observes what the collector did (logs, histograms) and gives freed memory back to the
 * system afterwards.
 */
#include <malloc.h>
#include <string.h>

#include "engine_internal.h"
#include "log.h"
#include "net_driver.h"
#include "reap_assert.h"
#include "sysmem.h"

void engine_settings_from_cvars(const cvar_registry *cv, gc_settings *s)
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
    /* Pacing marks and gathers in each frame's slack: both must be allowed to stop (a
     * gather of 600,000 objects at once cost a 30 ms frame). A full purge still gathers at
     * once, as UE's does. */
    if (cvar_get_bool(cv, CVAR_GC_FRAME_SLACK_PACING)) {
        s->allow_incremental_reachability = true;
        s->allow_incremental_gather = true;
    }
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
    c->low_memory_time_between_purging_levels =
        cvar_get(cv, CVAR_GC_LOW_MEMORY_TIME_BETWEEN_PURGING_LEVELS);
    c->force_after_level_streamed_out = cvar_get_bool(cv, CVAR_S_FORCE_GC_AFTER_LEVEL_STREAMED_OUT);
    c->sliced_after_level_streamed_out = cvar_get_bool(cv, CVAR_S_SLICED_GC_AFTER_LEVEL_STREAMED_OUT);
    c->incremental_reachability = cvar_get_bool(cv, CVAR_GC_ALLOW_INCREMENTAL_REACHABILITY);
    c->soft_collect_levels_pending =
        cvar_get_int(cv, CVAR_S_CONTINUOUSLY_INCREMENTAL_GC_PENDING_PURGE);
}

/* Streaming's cvars (world_streaming.h), the clock kept. UE's time limits are milliseconds. */
static void engine_streaming_config_from_cvars(const cvar_registry *cv,
                                               world_streaming_config *c)
{
    c->enabled = cvar_get_int(cv, CVAR_WP_ENABLE_SERVER_STREAMING) == 1;
    c->streaming_out = cvar_get_bool(cv, CVAR_WP_ENABLE_SERVER_STREAMING_OUT);
    c->cell_size = (float)cvar_get(cv, CVAR_WORLD_STREAMING_CELL_SIZE);
    c->loading_range = (float)cvar_get(cv, CVAR_WORLD_STREAMING_LOADING_RANGE);
    c->unload_delay = cvar_get(cv, CVAR_WORLD_STREAMING_UNLOAD_DELAY);
    c->add_time_limit = cvar_get(cv, CVAR_S_ACTORS_UPDATE_TIME_LIMIT) / 1e3;
    c->add_granularity = (uint32_t)cvar_get_int(cv, CVAR_S_ACTORS_UPDATE_GRANULARITY);
    c->remove_time_limit = cvar_get(cv, CVAR_S_UNREGISTER_COMPONENTS_TIME_LIMIT) / 1e3;
    c->remove_granularity = (uint32_t)cvar_get_int(cv, CVAR_S_UNREGISTER_GRANULARITY);
    c->hold_loads_while_pending_purge = cvar_get_bool(cv, CVAR_S_FORCE_GC_AFTER_LEVEL_STREAMED_OUT);
    c->level_clusters = cvar_get_bool(cv, CVAR_GC_ACTOR_CLUSTERING);
    c->verify_removed = cvar_get_bool(cv, CVAR_S_FORCE_VERIFY_LEVELS_REMOVED);
}

void engine_apply_cvars(engine *e)
{
    gc_settings s;
    gc_result r;

    if (e->applied_cvar_generation == e->cvars.generation)
        return;
    e->env.extent = e->map_count > 0 ? engine_map_extent(e)
                                     : (float)cvar_get(&e->cvars, CVAR_WORLD_EXTENT);
    e->env.cull_distance = (float)cvar_get(&e->cvars, CVAR_NET_CULL_DISTANCE);
    engine_streaming_config_from_cvars(&e->cvars, &e->env.streaming.cfg);
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

void engine_cleanup_actors(engine *e)
{
    for (uint32_t i = 0; i < e->world_count; i++)
        world_cleanup_actors(e->worlds[i]);
}

static void engine_ops_cleanup_actors(void *ctx)
{
    engine_cleanup_actors(ctx);
}

/* Pacing: the next mark slices may use `seconds` (the heap's settings are copied, changed and
 * given back; nothing is allocated). */
static void engine_ops_set_time_limit(void *ctx, double seconds)
{
    engine_gc_set_time_limit(ctx, seconds);
}

void engine_gc_set_time_limit(engine *e, double seconds)
{
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

static const engine_gc_ops engine_gc_ops_table = {
    .try_collect = engine_ops_try_collect,
    .reachability_step = engine_ops_reachability_step,
    .incremental_purge = engine_ops_incremental_purge,
    .is_reachability_pending = engine_ops_is_reachability_pending,
    .is_purge_pending = engine_ops_is_purge_pending,
    .cleanup_actors = engine_ops_cleanup_actors,
    .set_time_limit = engine_ops_set_time_limit,
};

/* Reading /proc each frame is wasteful; once a second is plenty for this rule. */
bool engine_read_free_memory(engine *e)
{
    if (e->gc_config.low_memory_threshold_mb <= 0)
        return false;
    e->free_memory_mb = sysmem_free_mb();
    return true;
}

/* Logs and measures every collection the collector finished since the last call. */
void engine_note_collections(engine *e)
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

static bool engine_gc_pending(const engine *e)
{
    return gc_is_incremental_purge_pending(e->heap) ||
           gc_is_incremental_reachability_pending(e->heap);
}

/* What the collector's clocks say this frame's gc phase did: the difference of its
 * statistics, or all of them when a collection began in the frame (they restart at a mark's
 * beginning; what the last purge did before that is not counted). */
static void engine_note_phase_work(engine *e, const gc_stats *before, bool began)
{
    gc_stats after;

    gc_stats_get(e->heap, &after);
    e->gc_phase_work.mark = after.mark_seconds - (began ? 0 : before->mark_seconds);
    e->gc_phase_work.gather = after.gather_seconds - (began ? 0 : before->gather_seconds);
    e->gc_phase_work.purge = after.purge_seconds + after.release_seconds -
                             (began ? 0 : before->purge_seconds + before->release_seconds);
    e->gc_phase_work.budget = e->gc.budget;
}

void engine_tick_gc(engine *e, double delta, uint64_t now_ns)
{
    engine_gc_ops ops = engine_gc_ops_table;
    engine_gc_frame fr;
    bool had_work = engine_gc_pending(e);
    uint64_t t0 = uv_hrtime();
    uint64_t collections = e->gc.collections;
    engine_gc_action action;
    gc_stats before;

    gc_stats_get(e->heap, &before);

    ops.ctx = e;
    fr.frame = e->frame;
    fr.delta_seconds = delta;
    fr.dedicated_server = true;
    fr.any_world_begun_play = false;
    for (uint32_t i = 0; i < e->world_count; i++)
        fr.any_world_begun_play |= e->worlds[i]->begun_play;
    fr.has_game_world = e->world_count > 0;
    fr.players_connected = engine_players_connected(e);
    fr.free_memory_mb = e->gc_config.low_memory_threshold_mb > 0 ? e->free_memory_mb : -1;
    /* e->last_frame_ns is this frame's start. */
    fr.work_seconds = (double)(now_ns - e->last_frame_ns) / 1e9;
    fr.predicted_work_seconds = engine_gc_slack_predict(&e->gc_slack);
    fr.levels_pending_purge = world_streaming_pending_purge(&e->env);

    engine_gc_streaming_rules(&e->gc, &e->gc_config, &fr, &e->levels_pending_seen);
    action = engine_conditional_collect_garbage(&e->gc, &e->gc_config, &fr, &ops);
    /* A full purge that ran leaves neither a mark nor a purge pending. */
    REAP_ASSERT(action != ENGINE_GC_FORCED_FULL_PURGE || e->gc.collections == collections ||
                !engine_gc_pending(e));
    if (action == ENGINE_GC_COLLECT || action == ENGINE_GC_FORCED_FULL_PURGE ||
        action == ENGINE_GC_REACHABILITY_STEP || action == ENGINE_GC_EARLY_COLLECT ||
        (action == ENGINE_GC_PURGE_STEP && had_work)) {
        stats_histogram_observe(&e->gc_frame_work_seconds, (double)(uv_hrtime() - t0) / 1e9);
        if (e->gc.budget > 0)
            stats_histogram_observe(&e->gc_frame_budget_seconds, e->gc.budget);
    }
    engine_note_phase_work(e, &before, e->gc.collections != collections);
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

void engine_collect_garbage_now(engine *e, strbuf *out)
{
    uint32_t before = gc_object_count(e->heap);
    uint64_t t0 = uv_hrtime();
    gc_result r = gc_collect(e->heap, 0, true);

    if (r != GC_OK) {
        strbuf_printf(out, "obj gc failed: %s\n", gc_result_str(r));
        return;
    }
    engine_cleanup_actors(e);
    /* A full collection purges everything it found: nothing is left pending. */
    REAP_ASSERT(!engine_gc_pending(e));
    engine_gc_count(&e->gc, ENGINE_GC_REASON_CONSOLE);
    e->gc.time_since_last_purge = 0;
    e->gc.full_purge_triggered = false;
    e->gc.force_reason = ENGINE_GC_REASON_NONE;
    strbuf_printf(out, "collected: %u -> %u objects in %.3f ms\n", before,
                  gc_object_count(e->heap), (double)(uv_hrtime() - t0) / 1e6);
    engine_note_collections(e);
    engine_trim_memory(e);
}
