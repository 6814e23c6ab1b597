/*
 * engine_gc.c - the per-frame collection schedule (UE ConditionalCollectGarbage).
 */
#include "engine_gc.h"

#include <stddef.h>

const char *engine_gc_action_name(engine_gc_action action)
{
    switch (action) {
    case ENGINE_GC_NONE: return "none";
    case ENGINE_GC_SAME_FRAME: return "same-frame";
    case ENGINE_GC_DELAYED: return "delayed";
    case ENGINE_GC_FORCED_FULL_PURGE: return "forced-full-purge";
    case ENGINE_GC_REACHABILITY_STEP: return "reachability-step";
    case ENGINE_GC_COLLECT: return "collect";
    case ENGINE_GC_PURGE_STEP: return "purge-step";
    }
    return "?";
}

void engine_gc_schedule_init(engine_gc_schedule *s)
{
    s->last_gc_frame = 0;
    s->ran_once = false;
    s->time_since_last_purge = 0;
    s->interval = 0;
    s->full_purge_triggered = false;
    s->should_delay = false;
    s->collections = 0;
    s->refused = 0;
}

double engine_gc_interval(const engine_gc_config *cfg, const engine_gc_frame *fr)
{
    double interval = cfg->time_between_purging;

    /* An idle dedicated server collects less often: there is nobody to notice a hitch, but
     * also nobody creating garbage. */
    if (fr->dedicated_server && !fr->players_connected)
        interval *= cfg->idle_server_multiplier;
    /* Short of memory: the low-memory interval if it is shorter (UE takes the minimum after
     * applying the idle multiplier). A low-memory interval of 0 would mean "never", the
     * opposite of what it is for, so it counts as off. */
    if (cfg->low_memory_threshold_mb > 0 && fr->free_memory_mb >= 0 &&
        fr->free_memory_mb < cfg->low_memory_threshold_mb &&
        cfg->low_memory_time_between_purging > 0 &&
        cfg->low_memory_time_between_purging < interval)
        interval = cfg->low_memory_time_between_purging;
    return interval;
}

void engine_gc_force(engine_gc_schedule *s, const engine_gc_config *cfg,
                     const engine_gc_frame *fr, bool full_purge)
{
    s->time_since_last_purge = 1.0 + engine_gc_interval(cfg, fr);
    s->full_purge_triggered = s->full_purge_triggered || full_purge;
}

void engine_gc_delay(engine_gc_schedule *s)
{
    s->should_delay = true;
}

static void engine_gc_after_collect(engine_gc_schedule *s, const engine_gc_ops *ops)
{
    ops->cleanup_actors(ops->ctx);
    s->time_since_last_purge = 0;
    s->full_purge_triggered = false;
    s->collections++;
}

static void engine_gc_forced_full_purge(engine_gc_schedule *s, const engine_gc_ops *ops)
{
    if (!ops->try_collect(ops->ctx, true)) {
        s->refused++;
        return;
    }
    engine_gc_after_collect(s, ops);
    s->should_delay = false;
}

/* UE PerformGarbageCollectionAndCleanupActors: while a game world exists, leave the purge to
 * later frames so that a collection costs one frame only its mark. */
static void engine_gc_collect_and_cleanup(engine_gc_schedule *s, const engine_gc_frame *fr,
                                          const engine_gc_ops *ops)
{
    if (!ops->try_collect(ops->ctx, !fr->has_game_world)) {
        s->refused++;
        return;
    }
    engine_gc_after_collect(s, ops);
    s->last_gc_frame = fr->frame;
    s->ran_once = true;
}

static engine_gc_action engine_gc_tick_timer(engine_gc_schedule *s, const engine_gc_config *cfg,
                                             const engine_gc_frame *fr, const engine_gc_ops *ops)
{
    s->time_since_last_purge += fr->delta_seconds;
    if (s->should_delay) {
        s->should_delay = false;
        return ENGINE_GC_DELAYED;
    }
    if (ops->is_reachability_pending(ops->ctx)) {
        ops->reachability_step(ops->ctx);
        return ENGINE_GC_REACHABILITY_STEP;
    }
    if (!ops->is_purge_pending(ops->ctx) && s->time_since_last_purge > s->interval &&
        s->interval > 0) {
        engine_gc_collect_and_cleanup(s, fr, ops);
        return ENGINE_GC_COLLECT;
    }
    ops->incremental_purge(ops->ctx, cfg->incremental_time_per_frame);
    return ENGINE_GC_PURGE_STEP;
}

engine_gc_action engine_conditional_collect_garbage(engine_gc_schedule *s,
                                                    const engine_gc_config *cfg,
                                                    const engine_gc_frame *fr,
                                                    const engine_gc_ops *ops)
{
    engine_gc_action action = ENGINE_GC_NONE;

    s->interval = engine_gc_interval(cfg, fr);
    if (s->ran_once && fr->frame == s->last_gc_frame) {
        if (ops->is_reachability_pending(ops->ctx)) {
            ops->reachability_step(ops->ctx);
            return ENGINE_GC_REACHABILITY_STEP;
        }
        return ENGINE_GC_SAME_FRAME;
    }

    if (s->full_purge_triggered) {
        engine_gc_forced_full_purge(s, ops);
        action = ENGINE_GC_FORCED_FULL_PURGE;
    } else if (fr->any_world_begun_play) {
        action = engine_gc_tick_timer(s, cfg, fr, ops);
    }

    if (cfg->collect_every_frame > 0) {
        if (fr->frame % (uint64_t)cfg->collect_every_frame == 0)
            engine_gc_force(s, cfg, fr, true);
    } else if (cfg->continuous_incremental && !ops->is_reachability_pending(ops->ctx) &&
               !ops->is_purge_pending(ops->ctx)) {
        engine_gc_force(s, cfg, fr, false);
    }
    s->last_gc_frame = fr->frame;
    s->ran_once = true;
    return action;
}
