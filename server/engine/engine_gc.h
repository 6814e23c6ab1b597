/*
 * engine_gc.h - when to collect: UE's UEngine::ConditionalCollectGarbage, once per frame.
 *
 * The schedule is process-wide engine state. It does not call the collector itself: the engine
 * hands it a table of operations (try-collect, incremental steps, cleanup of every world's
 * actors) and a view of the frame (delta time, whether worlds have begun play, whether clients
 * are connected, free memory). That keeps every rule testable with a fake clock and fake
 * connection counts: a test feeds deltas and records the calls.
 *
 * The rules, in the order one call applies them:
 *  1. At most once per frame (last_gc_frame); a second call in the same frame only continues a
 *     pending incremental mark.
 *  2. A forced full purge (engine_gc_force(..., true)) runs now: try-collect with full purge,
 *     then clean up actors in every world and reset the timer.
 *  3. Otherwise, once any world has begun play, the frame's delta is added to
 *     time_since_last_purge and the interval is computed (engine_gc_interval). Then: a delayed
 *     frame skips; a pending incremental mark continues; else, with no purge pending and the
 *     interval passed (and > 0), a collection runs (full purge only if no game world exists)
 *     followed by cleanup actors; else the incremental purge advances within its frame budget.
 *  4. gc.CollectGarbageEveryFrame = N forces a full purge on every Nth frame;
 *     gc.ContinuousIncrementalGC starts a new collection whenever nothing is pending.
 *
 * Streaming levels force collections through engine_gc_force_for before the call (UE's
 * UWorld::UpdateLevelStreaming does it from the world's tick): a full purge once the number
 * of levels pending purge grew (s.ForceGCAfterLevelStreamedOut), a soft one while enough are
 * pending (s.ContinuouslyIncrementalGCWhileLevelsPendingPurge). Short of memory, levels
 * pending purge shorten the interval to gc.LowMemory.TimeBetweenPurgingPendingLevels. Every
 * collection the schedule starts is counted under the reason that started it.
 *
 * Frame-slack pacing (gc.FrameSlackPacing = 1, reap's own; 0 leaves every rule above exactly
 * as UE has it). A frame's collector budget is its predicted slack: the frame period minus the
 * larger of this frame's net/world/replication work so far and a short moving maximum of that
 * work over the last frames, minus gc.FrameSlackMargin. It is never below UE's fixed limits
 * (the incremental mark's and the purge's). Marking, gather and purge run in that budget
 * (ops->set_time_limit before each mark slice, the purge's time limit). The rules above still
 * decide the latest moment a collection starts; pacing may only start one earlier, when
 * nothing is pending, the slack is large and the interval is near (rule 5).
 *  5. Early start: with pacing, no purge or mark pending, and an unfloored budget of at least
 *     twice UE's mark limit, a collection starts once the interval is less than the lead time
 *     away (twice the last paced collection's duration, at least ENGINE_GC_EARLY_LEAD_MIN
 *     seconds, at most half the interval).
 */
#ifndef REAP_ENGINE_GC_H
#define REAP_ENGINE_GC_H

#include <stdbool.h>
#include <stdint.h>

/* What the collector and the worlds can do for the schedule. ctx is passed back. */
typedef struct engine_gc_ops {
    void *ctx;
    /* Collects; false if it could not run now (the GC lock is held elsewhere). */
    bool (*try_collect)(void *ctx, bool full_purge);
    /* Continues a pending incremental mark within its own time limit. */
    void (*reachability_step)(void *ctx);
    /* Advances the pending purge for at most time_limit seconds. */
    void (*incremental_purge)(void *ctx, double time_limit);
    bool (*is_reachability_pending)(void *ctx);
    bool (*is_purge_pending)(void *ctx);
    /* world_cleanup_actors on every world. */
    void (*cleanup_actors)(void *ctx);
    /* Pacing only (may be NULL when gc.FrameSlackPacing is never on): the time limit of the
     * next mark and gather slices, in seconds. */
    void (*set_time_limit)(void *ctx, double seconds);
} engine_gc_ops;

/* The gc.* cvars the schedule reads, copied each frame. */
typedef struct engine_gc_config {
    double time_between_purging;             /* gc.TimeBetweenPurgingPendingKillObjects */
    double idle_server_multiplier;           /* ...OnIdleServerMultiplier */
    double low_memory_threshold_mb;          /* gc.LowMemory.MemoryThresholdMB (0 = off) */
    double low_memory_time_between_purging;  /* gc.LowMemory.TimeBetweenPurgingPendingKillObjects */
    double incremental_time_per_frame;       /* gc.IncrementalGCTimePerFrame */
    int64_t collect_every_frame;             /* gc.CollectGarbageEveryFrame */
    bool continuous_incremental;             /* gc.ContinuousIncrementalGC */
    bool frame_slack_pacing;                 /* gc.FrameSlackPacing */
    double frame_slack_margin;               /* gc.FrameSlackMargin, seconds */
    double frame_period;                     /* 1 / --tick-hz, seconds */
    double reachability_time_limit;          /* gc.IncrementalReachabilityTimeLimit: pacing's
                                                floor for a mark slice */
    double low_memory_time_between_purging_levels; /* gc.LowMemory.TimeBetweenPurgingPendingLevels */
    bool force_after_level_streamed_out;     /* s.ForceGCAfterLevelStreamedOut */
    bool sliced_after_level_streamed_out;    /* s.SlicedGCAfterLevelStreamedOut (reap's own) */
    bool incremental_reachability;           /* gc.AllowIncrementalReachability */
    int64_t soft_collect_levels_pending;     /* s.ContinuouslyIncrementalGCWhileLevelsPendingPurge */
} engine_gc_config;

/* What the worlds look like this frame. */
typedef struct engine_gc_frame {
    uint64_t frame;            /* the engine's frame counter */
    double delta_seconds;      /* time since the previous frame */
    bool dedicated_server;     /* always true for reap-server; tests vary it */
    bool any_world_begun_play;
    bool has_game_world;       /* a world that is not a transient/editor world exists */
    bool players_connected;    /* some world has a client connection */
    double free_memory_mb;     /* < 0: unknown (the low-memory rule is then ignored) */
    double work_seconds;       /* pacing: this frame's net, world and replication work */
    double predicted_work_seconds; /* pacing: engine_gc_slack_predict of recent frames */
    uint32_t levels_pending_purge; /* streamed-out levels waiting for a collection */
} engine_gc_frame;

typedef enum engine_gc_action {
    ENGINE_GC_NONE,               /* no world has begun play: nothing to do */
    ENGINE_GC_SAME_FRAME,         /* already ran this frame */
    ENGINE_GC_DELAYED,            /* engine_gc_delay() skipped this frame */
    ENGINE_GC_FORCED_FULL_PURGE,  /* rule 2 ran (or was refused by the GC lock) */
    ENGINE_GC_REACHABILITY_STEP,  /* continued a pending incremental mark */
    ENGINE_GC_COLLECT,            /* the interval passed: collected (or was refused) */
    ENGINE_GC_PURGE_STEP,         /* advanced the incremental purge */
    ENGINE_GC_EARLY_COLLECT,      /* pacing started the interval's collection early (rule 5) */
} engine_gc_action;

const char *engine_gc_action_name(engine_gc_action action);

/* Why a collection started (reap_gc_collections_by_reason_total{reason}). */
typedef enum engine_gc_reason {
    ENGINE_GC_REASON_NONE = 0,
    ENGINE_GC_REASON_INTERVAL,      /* gc.TimeBetweenPurgingPendingKillObjects passed */
    ENGINE_GC_REASON_STREAMING,     /* a level finished streaming out */
    ENGINE_GC_REASON_PENDING_PURGE, /* levels pending purge */
    ENGINE_GC_REASON_LOW_MEMORY,    /* the low-memory interval passed */
    ENGINE_GC_REASON_FORCED,        /* engine_gc_force: every-frame and continuous rules */
    ENGINE_GC_REASON_CONSOLE,       /* an operator's `obj gc` */
    ENGINE_GC_REASON_COUNT
} engine_gc_reason;

/* The label value: "interval", "streaming", "pending_purge", "low_memory", "forced",
 * "console". */
const char *engine_gc_reason_name(engine_gc_reason reason);

typedef struct engine_gc_schedule {
    uint64_t last_gc_frame;
    bool ran_once;               /* last_gc_frame is meaningful */
    double time_since_last_purge;
    double interval;             /* the interval in force at the last call */
    bool full_purge_triggered;
    engine_gc_reason force_reason; /* why the pending force was asked for (NONE: none) */
    uint64_t by_reason[ENGINE_GC_REASON_COUNT]; /* collections started, by reason */
    bool should_delay;
    uint64_t collections;        /* collections this schedule started and the collector ran */
    uint64_t refused;            /* try_collect refusals */
    /* Pacing's decisions. */
    double budget;               /* the budget of the last call (seconds; 0 without pacing) */
    uint64_t early_starts;       /* collections rule 5 started */
    /* The collection in flight that the interval rule (or rule 5) started, until nothing is
     * pending: how many frames it spans and how it stands against UE's schedule. */
    bool tracking;
    uint64_t track_frames;
    double track_elapsed;        /* seconds since it started */
    double track_due;            /* seconds from its start to the moment UE would have run it
                                    (> 0 when it started early) */
    /* The last tracked collection that finished (marked, gathered and purged). */
    uint64_t finished;           /* tracked collections finished */
    uint64_t last_frames;        /* frames it spanned, its first included */
    double last_seconds;         /* seconds from its start to its end */
    double last_late_seconds;    /* its end minus UE's moment (< 0: it ended before it) */
} engine_gc_schedule;

enum {
    ENGINE_GC_SLACK_FRAMES = 8,  /* the moving estimate's window */
};
#define ENGINE_GC_EARLY_LEAD_MIN 1.0

/* The recent frames' net + world + replication work, for the slack prediction. Plain data,
 * zero-initialised or engine_gc_slack_init. */
typedef struct engine_gc_slack {
    double work[ENGINE_GC_SLACK_FRAMES];
    uint32_t next;
    uint32_t count;
} engine_gc_slack;

void engine_gc_slack_init(engine_gc_slack *w);
void engine_gc_slack_observe(engine_gc_slack *w, double work_seconds);
/* The largest work of the window's frames (0 before any): a frame rarely does much more work
 * than the worst of the last few, and a prediction too low costs a frame over budget. */
double engine_gc_slack_predict(const engine_gc_slack *w);

/* The frame's collector budget with pacing, never below floor; floor without pacing. */
double engine_gc_frame_budget(const engine_gc_config *cfg, const engine_gc_frame *fr,
                              double floor);

/* Pacing's budget for adding streamed-in actors this frame (world_streaming), reap's own: half
 * the slack the recent frames' other work (net, world, replication: streaming's own time
 * left out, else the budget would shrink itself) leaves after gc.FrameSlackMargin, never less
 * than floor (s.LevelStreamingActorsUpdateTimeLimit); the collector, which runs after, has
 * what is left. -1 without pacing (the fixed limit applies) or with a floor of 0 (no limit). */
double engine_gc_streaming_budget(const engine_gc_config *cfg, double predicted_other_work,
                                  double floor);

void engine_gc_schedule_init(engine_gc_schedule *s);

/* UE GetTimeBetweenGarbageCollectionPasses(bHasPlayersConnected). */
double engine_gc_interval(const engine_gc_config *cfg, const engine_gc_frame *fr);

/* UE ForceGarbageCollection: the next call collects; full_purge makes it a full purge. */
void engine_gc_force(engine_gc_schedule *s, const engine_gc_config *cfg,
                     const engine_gc_frame *fr, bool full_purge);
/* The same, counted under reason (the first reason asked for since the last collection). */
void engine_gc_force_for(engine_gc_schedule *s, const engine_gc_config *cfg,
                         const engine_gc_frame *fr, bool full_purge, engine_gc_reason reason);
/* Counts a collection started outside the schedule (the console's). */
void engine_gc_count(engine_gc_schedule *s, engine_gc_reason reason);

/* UE's UWorld::UpdateLevelStreaming asks for collections as levels stream out; call it before
 * engine_conditional_collect_garbage each frame. With s.ForceGCAfterLevelStreamedOut, more
 * levels pending purge than at the last call force a full purge (run by the call that
 * follows), or, with s.SlicedGCAfterLevelStreamedOut and incremental reachability or pacing
 * on, a soft collection that runs in slices; with
 * s.ContinuouslyIncrementalGCWhileLevelsPendingPurge = N > 0, N or more pending force a soft
 * one. *io_seen: the count at the last call. */
void engine_gc_streaming_rules(engine_gc_schedule *s, const engine_gc_config *cfg,
                               const engine_gc_frame *fr, uint32_t *io_seen);

/* UE DelayGarbageCollection: the next call that would act skips once (e.g. after a hitch). */
void engine_gc_delay(engine_gc_schedule *s);

/* Applies the rules above for one frame and returns what it did. */
engine_gc_action engine_conditional_collect_garbage(engine_gc_schedule *s,
                                                    const engine_gc_config *cfg,
                                                    const engine_gc_frame *fr,
                                                    const engine_gc_ops *ops);

#endif /* REAP_ENGINE_GC_H */
