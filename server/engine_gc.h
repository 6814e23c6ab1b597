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
} engine_gc_frame;

typedef enum engine_gc_action {
    ENGINE_GC_NONE,               /* no world has begun play: nothing to do */
    ENGINE_GC_SAME_FRAME,         /* already ran this frame */
    ENGINE_GC_DELAYED,            /* engine_gc_delay() skipped this frame */
    ENGINE_GC_FORCED_FULL_PURGE,  /* rule 2 ran (or was refused by the GC lock) */
    ENGINE_GC_REACHABILITY_STEP,  /* continued a pending incremental mark */
    ENGINE_GC_COLLECT,            /* the interval passed: collected (or was refused) */
    ENGINE_GC_PURGE_STEP,         /* advanced the incremental purge */
} engine_gc_action;

const char *engine_gc_action_name(engine_gc_action action);

typedef struct engine_gc_schedule {
    uint64_t last_gc_frame;
    bool ran_once;               /* last_gc_frame is meaningful */
    double time_since_last_purge;
    double interval;             /* the interval in force at the last call */
    bool full_purge_triggered;
    bool should_delay;
    uint64_t collections;        /* collections this schedule started and the collector ran */
    uint64_t refused;            /* try_collect refusals */
} engine_gc_schedule;

void engine_gc_schedule_init(engine_gc_schedule *s);

/* UE GetTimeBetweenGarbageCollectionPasses(bHasPlayersConnected). */
double engine_gc_interval(const engine_gc_config *cfg, const engine_gc_frame *fr);

/* UE ForceGarbageCollection: the next call collects; full_purge makes it a full purge. */
void engine_gc_force(engine_gc_schedule *s, const engine_gc_config *cfg,
                     const engine_gc_frame *fr, bool full_purge);

/* UE DelayGarbageCollection: the next call that would act skips once (e.g. after a hitch). */
void engine_gc_delay(engine_gc_schedule *s);

/* Applies the rules above for one frame and returns what it did. */
engine_gc_action engine_conditional_collect_garbage(engine_gc_schedule *s,
                                                    const engine_gc_config *cfg,
                                                    const engine_gc_frame *fr,
                                                    const engine_gc_ops *ops);

#endif /* REAP_ENGINE_GC_H */
