/*
 * world_streaming.h - streaming levels: a world as a grid of cells that load around the
 * players and unload behind them (UE World Partition's runtime grid, served as UE's dedicated
 * server streams it), and the collector's side of it (UE FLevelStreamingGCHelper).
 *
 * A world whose profile has a [cells] section gets one cell per world.StreamingCellSize square
 * of its extent. A cell is a collected Level under the world (World0.Cell_X2_Y-1) holding the
 * placed actors the profile lists, built from a seed of the cell's coordinates so that a cell
 * reloads identical. Placed actors are net startup actors: they never go on the wire. A cell
 * goes through these states, one step per frame at most:
 *
 *   UNLOADED --(a pawn within world.StreamingLoadingRange)--> LOADING
 *   LOADING: its actors are created a time slice a frame (s.LevelStreamingActorsUpdateTimeLimit);
 *            new loads do not start while a level is pending purge and
 *            s.ForceGCAfterLevelStreamedOut is on
 *   LOADING --(all created)--> LOADED (visible; one GC cluster with gc.ActorClusteringEnabled)
 *   LOADED --(no pawn in range for world.StreamingUnloadDelay s, streaming out on)--> UNLOADING
 *   UNLOADING: its actors and their components are marked garbage a time slice a frame
 *              (s.UnregisterComponentsTimeLimit, checked every
 *              s.LevelStreamingComponentsUnregistrationGranularity objects); the net side is
 *              told once, at the start (UE NetDriver::NotifyStreamingLevelUnload)
 *   UNLOADING --(all marked)--> PENDING_PURGE: the level leaves the world; its object is
 *              marked garbage just before the next collection starts (a pre-collection
 *              callback, as UE's PrepareStreamedOutLevelsForGC)
 *   PENDING_PURGE --(that collection's mark is done)--> UNLOADED
 *
 * After the mark, every level prepared for it must have been found unreachable; one that was
 * not is counted as a survivor (never freed early: the collector decides), and with
 * s.ForceVerifyLevelsGotRemovedByGC every object still inside it is logged with the chain of
 * references that keeps it.
 *
 * A world and its levels are collected objects; the cell table here is plain memory the world
 * owns (freed with the world). The process-wide side (the levels pending purge of every world,
 * the counters) lives in world_env.
 */
#ifndef REAP_WORLD_STREAMING_H
#define REAP_WORLD_STREAMING_H

#include <stdbool.h>
#include <stdint.h>

#include "reap_gc.h"
#include "stats.h"

typedef struct world world;
typedef struct level level;
typedef struct world_env world_env;

typedef enum world_level_state {
    WORLD_LEVEL_UNLOADED = 0,
    WORLD_LEVEL_LOADING,
    WORLD_LEVEL_LOADED,
    WORLD_LEVEL_UNLOADING,
    WORLD_LEVEL_PENDING_PURGE,
    WORLD_LEVEL_STATE_COUNT
} world_level_state;

const char *world_level_state_name(world_level_state s);

enum { WORLD_STREAMING_RECENT_WAITS = 4096 };

/* Monotonic seconds, for the time slices (injectable: tests pass a fake clock). */
typedef double (*world_clock_fn)(void *ctx);

/* The cvars streaming reads, copied into world_env by the engine each frame. */
typedef struct world_streaming_config {
    bool enabled;                 /* wp.Runtime.EnableServerStreaming (0: all loaded at start) */
    bool streaming_out;           /* wp.Runtime.EnableServerStreamingOut */
    float cell_size;              /* world.StreamingCellSize (read when a world is created) */
    float loading_range;          /* world.StreamingLoadingRange */
    double unload_delay;          /* world.StreamingUnloadDelay, seconds */
    double add_time_limit;        /* s.LevelStreamingActorsUpdateTimeLimit, seconds (0: none) */
    double add_budget;            /* this frame's limit when >= 0 (pacing's), else the above */
    uint32_t add_granularity;     /* s.LevelStreamingActorsUpdateGranularity, actors */
    double remove_time_limit;     /* s.UnregisterComponentsTimeLimit, seconds (0: none) */
    uint32_t remove_granularity;  /* s.LevelStreamingComponentsUnregistrationGranularity */
    bool hold_loads_while_pending_purge; /* s.ForceGCAfterLevelStreamedOut */
    bool level_clusters;          /* gc.ActorClusteringEnabled */
    bool verify_removed;          /* s.ForceVerifyLevelsGotRemovedByGC */
    bool defer_initial_load;      /* a travel's new world: queue every cell, load in slices */
    world_clock_fn clock;
    void *clock_ctx;
} world_streaming_config;

/* The defaults of every cvar above (UE's where UE has one), a real clock. */
void world_streaming_config_default(world_streaming_config *cfg);

/* Process-wide figures (world_env.streaming_stats). */
typedef struct world_streaming_stats {
    uint64_t streamed_in;         /* levels made visible */
    uint64_t streamed_out;        /* levels whose removal finished (now pending purge) */
    uint64_t levels_collected;    /* streamed-out levels a collection found unreachable */
    uint64_t levels_survived;     /* streamed-out levels a collection did not free */
    uint64_t verify_survivors;    /* objects s.ForceVerifyLevelsGotRemovedByGC found alive */
    uint64_t loads_held;          /* load starts put off by a level pending purge */
    uint32_t pending_purge_max;   /* the most levels pending purge at once */
    stats_histogram load_wait;    /* a load's request to its level being visible, seconds */
    float recent_waits[WORLD_STREAMING_RECENT_WAITS]; /* the last waits, exact (a ring) */
    uint32_t recent_count, recent_next;
} world_streaming_stats;

/* The q-quantile (0..1) of the recent load waits, seconds; 0 before any. */
double world_streaming_wait_quantile(const world_streaming_stats *st, double q);

/* One cell of a world (plain data; the level it names is held by the world's level array
 * while LOADING, LOADED or UNLOADING). */
typedef struct world_cell {
    int32_t x, y;                 /* grid coordinates; cell (0, 0) has its low corner at 0, 0 */
    world_level_state state;
    level *lvl;                   /* LOADING .. UNLOADING; NULL otherwise */
    gc_weak purged;               /* PENDING_PURGE: the old level (it leaves the world) */
    bool wanted;                  /* a pawn is within the loading range (last update) */
    bool prepared;                /* PENDING_PURGE: its level was marked for a collection */
    double last_wanted;           /* when a pawn was last in range */
    double requested;             /* when the load it waits for was asked for (< 0: none) */
    bool held;                    /* its load was put off by a level pending purge */
    uint64_t rng;                 /* LOADING: placement's state, seeded by x and y */
    uint32_t next_item, next_count; /* LOADING: the next placed actor to create */
    uint32_t next_slot;           /* UNLOADING: the next actor slot to remove */
} world_cell;

typedef struct world_streaming {
    world_cell *cells;            /* dim * dim, row-major by y */
    uint32_t dim;                 /* cells per side */
    float cell_size;
    float origin;                 /* world coordinate of cell index 0's low corner */
    uint32_t counts[WORLD_LEVEL_STATE_COUNT]; /* cells by state */
    uint32_t *loading, *unloading; /* queues of cell indices, oldest first */
    uint32_t loading_count, unloading_count;
    float *sources;               /* x, y of each pawn this frame (UE's streaming sources) */
    uint32_t source_count, source_cap;
    float (*starts)[2];           /* [cells] player_starts: where pawns spawn */
    uint32_t start_count;
} world_streaming;

/* Process-wide streaming state: what every world's cells share (UE's static
 * FLevelStreamingGCHelper). Part of world_env. */
typedef struct world_streaming_env {
    world_streaming_config cfg;
    world_streaming_stats stats;
    world **worlds;               /* worlds with cells, for the collector's callbacks */
    uint32_t world_count, world_cap;
    uint32_t pending_purge;       /* levels in PENDING_PURGE, every world */
    bool callbacks_added;
    gc_weak *survivors;           /* streamed-out levels that outlived a collection */
    uint32_t survivor_count, survivor_cap;
    char report[2048];            /* the last survivor's report: what the log said of it */
    /* Called when a level starts to unload (the net side drops what it held of it). */
    void (*level_unload_cb)(void *ctx, world *w, level *lvl);
    void *level_unload_ctx;
    /* What world_streaming_update spent, seconds by cfg.clock, summed until its reader zeroes
     * it (the engine, each frame, for the slow-frame log): deciding and starting loads and
     * unloads, adding placed actors, building the loaded levels' clusters, removing. */
    struct {
        double decide, add, cluster, remove;
    } work;
} world_streaming_env;

enum {
    WORLD_STREAMING_DIM_MAX = 256,       /* cells a side */
    WORLD_STREAMING_SURVIVORS_MAX = 64,  /* surviving levels remembered (stat levels) */
    WORLD_STREAMING_VERIFY_LINES = 8,    /* survivors named per level by the verify */
};

/* Builds w's cell grid from its env's profile [cells] (nothing when there is none) and, with
 * wp.Runtime.EnableServerStreaming off, loads every cell now, whole. Registers the collector
 * callbacks the first time. GC_E_NOMEM leaves the world without cells. */
gc_result world_streaming_init(world *w);
/* Frees the cell table (the world's destructor calls it). */
void world_streaming_free(world *w);

/* One frame of streaming for w, after world_tick: which cells pawns want, their state
 * changes, and this frame's slices of loading and unloading. now is the engine's clock. */
void world_streaming_update(world *w, double now);

/* The cell containing (x, y), or NULL outside the grid or without cells. */
world_cell *world_streaming_cell_at(world *w, float x, float y);

/* A travel's new world (cfg.defer_initial_load): adds its queued cells' actors for at most
 * time_limit seconds (0: no limit); true once every cell is loaded. */
bool world_streaming_load_step(world *w, double time_limit);

/* A world that ends (a travel): it leaves the process-wide list, so the collector callbacks
 * never touch its cells again, and its levels pending purge are marked garbage now (they are
 * no longer counted as pending). Its cell table stays until the world is freed. */
void world_streaming_detach(world *w);

/* Levels pending purge in every world. */
uint32_t world_streaming_pending_purge(const world_env *env);

/* True when obj lies in (its outer chain reaches) the level a streaming cell holds now: it
 * goes when that cell unloads, not with any player. A level that outlived its cell's unload
 * holds no cell: its objects are not this. */
bool world_object_in_streamed_level(const world_env *env, gc_heap *heap, const void *obj);

/* Frees what the env's streaming side allocated (after every world is gone). */
void world_streaming_env_free(world_env *env);

#endif /* REAP_WORLD_STREAMING_H */
