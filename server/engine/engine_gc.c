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
    case ENGINE_GC_EARLY_COLLECT: return "early-collect";
    }
    return "?";
}

const char *engine_gc_reason_name(engine_gc_reason reason)
{
    switch (reason) {
    case ENGINE_GC_REASON_NONE: return "none";
    case ENGINE_GC_REASON_INTERVAL: return "interval";
    case ENGINE_GC_REASON_STREAMING: return "streaming";
    case ENGINE_GC_REASON_PENDING_PURGE: return "pending_purge";
    case ENGINE_GC_REASON_LOW_MEMORY: return "low_memory";
    case ENGINE_GC_REASON_FORCED: return "forced";
    case ENGINE_GC_REASON_CONSOLE: return "console";
    case ENGINE_GC_REASON_COUNT: break;
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
    s->force_reason = ENGINE_GC_REASON_NONE;
    for (int i = 0; i < ENGINE_GC_REASON_COUNT; i++)
        s->by_reason[i] = 0;
    s->should_delay = false;
    s->collections = 0;
    s->refused = 0;
    s->budget = 0;
    s->early_starts = 0;
    s->tracking = false;
    s->track_frames = 0;
    s->track_elapsed = 0;
    s->track_due = 0;
    s->finished = 0;
    s->last_frames = 0;
    s->last_seconds = 0;
    s->last_late_seconds = 0;
}

/* ---- pacing: the frame's slack -------------------------------------------------------- */

void engine_gc_slack_init(engine_gc_slack *w)
{
    for (uint32_t i = 0; i < ENGINE_GC_SLACK_FRAMES; i++)
        w->work[i] = 0;
    w->next = 0;
    w->count = 0;
}

void engine_gc_slack_observe(engine_gc_slack *w, double work_seconds)
{
    w->work[w->next] = work_seconds;
    w->next = (w->next + 1) % ENGINE_GC_SLACK_FRAMES;
    if (w->count < ENGINE_GC_SLACK_FRAMES)
        w->count++;
}

double engine_gc_slack_predict(const engine_gc_slack *w)
{
    double worst = 0;

    for (uint32_t i = 0; i < w->count; i++)
        if (w->work[i] > worst)
            worst = w->work[i];
    return worst;
}

/* The frame's slack for the collector, before any floor; may be negative. */
static double engine_gc_slack_seconds(const engine_gc_config *cfg, const engine_gc_frame *fr)
{
    double work = fr->work_seconds > fr->predicted_work_seconds ? fr->work_seconds
                                                                : fr->predicted_work_seconds;

    return cfg->frame_period - work - cfg->frame_slack_margin;
}

double engine_gc_frame_budget(const engine_gc_config *cfg, const engine_gc_frame *fr,
                              double floor)
{
    double slack;

    if (!cfg->frame_slack_pacing)
        return floor;
    slack = engine_gc_slack_seconds(cfg, fr);
    return slack > floor ? slack : floor;
}

double engine_gc_streaming_budget(const engine_gc_config *cfg, double predicted_other_work,
                                  double floor)
{
    double half;

    if (!cfg->frame_slack_pacing || floor <= 0)
        return -1; /* no pacing, or no limit at all */
    half = 0.5 * (cfg->frame_period - predicted_other_work - cfg->frame_slack_margin);
    return half > floor ? half : floor;
}

/* Before a mark slice: with pacing, the slice may use the frame's budget. */
static void engine_gc_pace_mark(engine_gc_schedule *s, const engine_gc_config *cfg,
                                const engine_gc_frame *fr, const engine_gc_ops *ops)
{
    if (!cfg->frame_slack_pacing || ops->set_time_limit == NULL)
        return;
    s->budget = engine_gc_frame_budget(cfg, fr, cfg->reachability_time_limit);
    ops->set_time_limit(ops->ctx, s->budget);
}

static void engine_gc_reachability_step(engine_gc_schedule *s, const engine_gc_config *cfg,
                                        const engine_gc_frame *fr, const engine_gc_ops *ops)
{
    engine_gc_pace_mark(s, cfg, fr, ops);
    ops->reachability_step(ops->ctx);
}

/* Rule 5: with pacing, start the interval's collection early while the frame has room. */
static bool engine_gc_should_start_early(const engine_gc_schedule *s,
                                         const engine_gc_config *cfg,
                                         const engine_gc_frame *fr, const engine_gc_ops *ops)
{
    double lead = 2 * s->last_seconds;

    if (!cfg->frame_slack_pacing || s->interval <= 0 || ops->is_purge_pending(ops->ctx))
        return false;
    if (engine_gc_slack_seconds(cfg, fr) < 2 * cfg->reachability_time_limit)
        return false;
    if (lead < ENGINE_GC_EARLY_LEAD_MIN)
        lead = ENGINE_GC_EARLY_LEAD_MIN;
    if (lead > s->interval / 2)
        lead = s->interval / 2;
    return s->time_since_last_purge >= s->interval - lead;
}

/* A tracked collection ends when nothing is pending: marked, gathered and purged. */
static void engine_gc_track_end(engine_gc_schedule *s, const engine_gc_ops *ops)
{
    if (!s->tracking || ops->is_reachability_pending(ops->ctx) ||
        ops->is_purge_pending(ops->ctx))
        return;
    s->tracking = false;
    s->finished++;
    s->last_frames = s->track_frames;
    s->last_seconds = s->track_elapsed;
    s->last_late_seconds = s->track_elapsed - s->track_due;
}

static bool engine_gc_low_memory(const engine_gc_config *cfg, const engine_gc_frame *fr)
{
    return cfg->low_memory_threshold_mb > 0 && fr->free_memory_mb >= 0 &&
           fr->free_memory_mb < cfg->low_memory_threshold_mb;
}

/* The interval, and whether the low-memory rule chose it. */
static double engine_gc_interval_why(const engine_gc_config *cfg, const engine_gc_frame *fr,
                                     bool *out_low_memory)
{
    double interval = cfg->time_between_purging;
    bool low = false;

    /* An idle dedicated server collects less often: there is nobody to notice a hitch, but
     * also nobody creating garbage. */
    if (fr->dedicated_server && !fr->players_connected)
        interval *= cfg->idle_server_multiplier;
    /* Short of memory: the low-memory interval if it is shorter (UE takes the minimum after
     * applying the idle multiplier), and shorter still while streamed-out levels wait for
     * their purge. A low-memory interval of 0 would mean "never", the opposite of what it is
     * for, so it counts as off. */
    if (engine_gc_low_memory(cfg, fr)) {
        if (cfg->low_memory_time_between_purging > 0 &&
            cfg->low_memory_time_between_purging < interval) {
            interval = cfg->low_memory_time_between_purging;
            low = true;
        }
        if (fr->levels_pending_purge > 0 && cfg->low_memory_time_between_purging_levels > 0 &&
            cfg->low_memory_time_between_purging_levels < interval) {
            interval = cfg->low_memory_time_between_purging_levels;
            low = true;
        }
    }
    *out_low_memory = low;
    return interval;
}

double engine_gc_interval(const engine_gc_config *cfg, const engine_gc_frame *fr)
{
    bool low;

    return engine_gc_interval_why(cfg, fr, &low);
}

void engine_gc_force_for(engine_gc_schedule *s, const engine_gc_config *cfg,
                         const engine_gc_frame *fr, bool full_purge, engine_gc_reason reason)
{
    s->time_since_last_purge = 1.0 + engine_gc_interval(cfg, fr);
    s->full_purge_triggered = s->full_purge_triggered || full_purge;
    if (s->force_reason == ENGINE_GC_REASON_NONE)
        s->force_reason = reason;
}

void engine_gc_force(engine_gc_schedule *s, const engine_gc_config *cfg,
                     const engine_gc_frame *fr, bool full_purge)
{
    engine_gc_force_for(s, cfg, fr, full_purge, ENGINE_GC_REASON_FORCED);
}

void engine_gc_count(engine_gc_schedule *s, engine_gc_reason reason)
{
    s->by_reason[reason]++;
}

void engine_gc_streaming_rules(engine_gc_schedule *s, const engine_gc_config *cfg,
                               const engine_gc_frame *fr, uint32_t *io_seen)
{
    uint32_t pending = fr->levels_pending_purge;

    if (pending > *io_seen && cfg->force_after_level_streamed_out) {
        /* Beyond UE: its forced full purges never mark incrementally. */
        bool sliced = cfg->sliced_after_level_streamed_out &&
                      (cfg->frame_slack_pacing || cfg->incremental_reachability);

        engine_gc_force_for(s, cfg, fr, !sliced, ENGINE_GC_REASON_STREAMING);
    }
    *io_seen = pending;
    if (cfg->soft_collect_levels_pending > 0 &&
        (int64_t)pending >= cfg->soft_collect_levels_pending)
        engine_gc_force_for(s, cfg, fr, false, ENGINE_GC_REASON_PENDING_PURGE);
}

void engine_gc_delay(engine_gc_schedule *s)
{
    s->should_delay = true;
}

/* A collection the schedule started: counted under what asked for it. */
static void engine_gc_after_collect(engine_gc_schedule *s, const engine_gc_config *cfg,
                                    const engine_gc_frame *fr, const engine_gc_ops *ops)
{
    engine_gc_reason reason = s->force_reason;
    bool low;

    if (reason == ENGINE_GC_REASON_NONE) {
        engine_gc_interval_why(cfg, fr, &low);
        reason = low ? ENGINE_GC_REASON_LOW_MEMORY : ENGINE_GC_REASON_INTERVAL;
    }
    s->by_reason[reason]++;
    ops->cleanup_actors(ops->ctx);
    s->time_since_last_purge = 0;
    s->full_purge_triggered = false;
    s->force_reason = ENGINE_GC_REASON_NONE;
    s->collections++;
}

static void engine_gc_forced_full_purge(engine_gc_schedule *s, const engine_gc_config *cfg,
                                        const engine_gc_frame *fr, const engine_gc_ops *ops)
{
    if (!ops->try_collect(ops->ctx, true)) {
        s->refused++;
        return;
    }
    engine_gc_after_collect(s, cfg, fr, ops);
    s->should_delay = false;
}

/* UE PerformGarbageCollectionAndCleanupActors: while a game world exists, leave the purge to
 * later frames so that a collection costs one frame only its mark. */
static bool engine_gc_collect_and_cleanup(engine_gc_schedule *s, const engine_gc_config *cfg,
                                          const engine_gc_frame *fr, const engine_gc_ops *ops)
{
    engine_gc_pace_mark(s, cfg, fr, ops);
    if (!ops->try_collect(ops->ctx, !fr->has_game_world)) {
        s->refused++;
        return false;
    }
    /* A collection streaming asked for is not the interval's: it is not measured against
     * UE's schedule, nor does it teach pacing's early start how long one takes. */
    if (s->force_reason != ENGINE_GC_REASON_STREAMING &&
        s->force_reason != ENGINE_GC_REASON_PENDING_PURGE) {
        s->tracking = true;
        s->track_frames = 1;
        s->track_elapsed = 0;
        s->track_due = s->interval - s->time_since_last_purge;
    }
    engine_gc_after_collect(s, cfg, fr, ops);
    s->last_gc_frame = fr->frame;
    s->ran_once = true;
    return true;
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
        engine_gc_reachability_step(s, cfg, fr, ops);
        return ENGINE_GC_REACHABILITY_STEP;
    }
    if (!ops->is_purge_pending(ops->ctx) && s->time_since_last_purge > s->interval &&
        s->interval > 0) {
        engine_gc_collect_and_cleanup(s, cfg, fr, ops);
        return ENGINE_GC_COLLECT;
    }
    if (engine_gc_should_start_early(s, cfg, fr, ops)) {
        if (engine_gc_collect_and_cleanup(s, cfg, fr, ops))
            s->early_starts++;
        return ENGINE_GC_EARLY_COLLECT;
    }
    if (cfg->frame_slack_pacing)
        s->budget = engine_gc_frame_budget(cfg, fr, cfg->incremental_time_per_frame);
    ops->incremental_purge(ops->ctx,
                           engine_gc_frame_budget(cfg, fr, cfg->incremental_time_per_frame));
    return ENGINE_GC_PURGE_STEP;
}

engine_gc_action engine_conditional_collect_garbage(engine_gc_schedule *s,
                                                    const engine_gc_config *cfg,
                                                    const engine_gc_frame *fr,
                                                    const engine_gc_ops *ops)
{
    engine_gc_action action = ENGINE_GC_NONE;

    s->interval = engine_gc_interval(cfg, fr);
    s->budget = 0;
    if (s->ran_once && fr->frame == s->last_gc_frame) {
        if (ops->is_reachability_pending(ops->ctx)) {
            engine_gc_reachability_step(s, cfg, fr, ops);
            engine_gc_track_end(s, ops);
            return ENGINE_GC_REACHABILITY_STEP;
        }
        return ENGINE_GC_SAME_FRAME;
    }
    if (s->tracking) {
        s->track_frames++;
        s->track_elapsed += fr->delta_seconds;
    }

    if (s->full_purge_triggered) {
        engine_gc_forced_full_purge(s, cfg, fr, ops);
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
    engine_gc_track_end(s, ops);
    s->last_gc_frame = fr->frame;
    s->ran_once = true;
    return action;
}
