/*
 * engine.h - the process-wide server: loop, frame, worlds, collector scheduling.
 *
 * One thread, the loop thread, owns every collected object. A frame is one tick of a libuv
 * timer at --tick-hz and runs its phases in order:
 *
 *   net:    service ENet (socket also watched by uv_poll) -> decode -> world commands
 *   world:  tick every world (movement, projectile lifetimes)
 *   repl:   per connection, send actor spawns / updates / destroys
 *   gc:     engine_conditional_collect_garbage (engine_gc.c), time-sliced
 *   stats:  frame time, slow-frame log
 *
 * Before each frame the periodic jobs that are due run (engine_jobs.h: the net sweep, the
 * free-memory reading, the dashboard's second). Everything else that needs the loop (ENet's
 * socket, admin HTTP, stdin console, signals) is a handle on the same loop, so console
 * commands run between frames, never beside them.
 *
 * Layers: the engine calls down into the net driver, the worlds, the collector and the
 * dashboard's ring, and passes them what they need (the clock, cvars, callbacks); none of them
 * includes this header. The operator's side (admin, console) reads the engine through it;
 * engine_init.h builds everything.
 *
 * State by lifetime: this struct (engine, cvars, net driver, admin) lives for the process;
 * worlds and what they hold are collected objects, per world.
 */
#ifndef REAP_ENGINE_H
#define REAP_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "cvar.h"
#include "engine_gc.h"
#include "engine_jobs.h"
#include "engine_options.h"
#include "engine_travel.h"
#include "reap_gc.h"
#include "stats.h"
#include "strbuf.h"
#include "tick_rate.h"
#include "world.h"

typedef struct net_driver net_driver;

/* The phases of a frame, as timed in reap_frame_phase_seconds{phase}. */
typedef enum engine_phase {
    ENGINE_PHASE_NET,
    ENGINE_PHASE_WORLD,
    ENGINE_PHASE_REPL,
    ENGINE_PHASE_GC,
    ENGINE_PHASE_COUNT
} engine_phase;

extern const char *const engine_phase_names[ENGINE_PHASE_COUNT];

enum { ENGINE_JOB_COUNT = 3 }; /* engine.c's table of periodic jobs */
typedef struct admin_server admin_server;
typedef struct console console;
typedef struct agones agones;
typedef struct service service;
typedef struct dashboard dashboard;

/* reap-server's exit statuses (README "exit status"). */
enum {
    ENGINE_EXIT_OK = 0,
    ENGINE_EXIT_START_FAILED = 1,
    ENGINE_EXIT_BAD_CONFIG = 2,
    ENGINE_EXIT_WORLD_LEAK = 3,   /* Engine.VerifyLoadMapWorldCleanup.Severity=3 found a leak */
};

/* A map the server can travel to (engine_maps.c): a [map NAME] of the profile, Default, or
 * the transition map (empty). */
typedef struct engine_map {
    char name[ENGINE_MAP_NAME_MAX];
    float extent;                 /* 0: world.Extent */
    world_profile_cells cells;    /* present: streaming cells */
    int64_t persistent_props;     /* < 0: world.PersistentProps */
} engine_map;

/* A world the leak verdict found: renamed and kept (it cannot be freed), so the next map
 * still loads. */
typedef struct engine_leaked_world {
    gc_weak world;
    char name[WORLD_NAME_MAX + 48]; /* its name now (..._Leaked) */
    char map[ENGINE_MAP_NAME_MAX];
    uint32_t objects;             /* objects inside it when it was found */
    uint64_t travel;              /* the travel that found it (1 = the first) */
} engine_leaked_world;

enum { ENGINE_MAPS_MAX = WORLD_PROFILE_MAPS_MAX + 2, ENGINE_LEAKED_MAX = 64 };

/* What the last travel cost the frames (engine_maps.c). */
typedef struct engine_travel_frames {
    double longest_frame;         /* seconds */
    uint64_t frames;
    uint64_t over_budget;         /* frames longer than the --tick-hz period */
    double rss_mb;                /* resident memory once it arrived (< 0: unknown) */
    uint32_t objects;             /* objects once it arrived */
} engine_travel_frames;

typedef struct engine {
    engine_options opts;
    cvar_registry cvars;
    uint64_t applied_cvar_generation;

    uv_loop_t *loop;
    uv_timer_t frame_timer;
    uv_timer_t stop_timer;
    uv_timer_cb stop_cb;          /* the shutdown engine_request_stop starts (engine_init.c) */
    uv_signal_t sigint;
    uv_signal_t sigterm;
    uv_signal_t sighup;           /* re-read the config file's cvars */
    uv_signal_t sigusr1;          /* a status line in the log */
    uv_signal_t sigusr2;          /* ignored with a log line (its default would kill) */
    bool handles_open;

    gc_heap *heap;
    world_env env;
    world **worlds;               /* rooted; world_count entries */
    uint32_t world_count;

    net_driver *net;
    admin_server *admin;
    uint32_t admin_port;          /* the admin endpoint's bound port */
    console *console;             /* stdin console, when stdin is a terminal */
    agones *agones;               /* the Agones SDK sidecar, when asked for; else NULL */
    service *service;             /* systemd notify/watchdog, under Type=notify; else NULL */
    dashboard *dashboard;         /* the admin page's once-a-second samples */
    tick_rate_monitor tick_rate;  /* warns when --tick-hz is not achieved */

    engine_gc_schedule gc;
    engine_gc_config gc_config;   /* copied from cvars each frame */
    uint64_t frame;
    uint64_t start_ns;
    uint64_t last_frame_ns;
    double free_memory_mb;        /* the last reading (a periodic job); < 0: none */
    uint64_t job_next_ns[ENGINE_JOB_COUNT]; /* when each periodic job is due next */
    uint64_t frame_due_ns;        /* the grid point the next frame is due at (uv_hrtime) */

    stats_histogram tick_seconds;
    stats_histogram phase_seconds[ENGINE_PHASE_COUNT];
    stats_histogram gc_mark_seconds;
    stats_histogram gc_frame_work_seconds;
    stats_histogram gc_frame_budget_seconds; /* pacing: the budget of frames with GC work */
    stats_histogram gc_collection_seconds;   /* interval collections: start to end (purged) */
    uint64_t seen_finished;       /* e->gc.finished already observed */
    /* This frame's gc phase by the collector's own clocks (seconds), for the slow-frame log:
     * what a frame the collector put over budget spent its time on. */
    struct {
        double mark, gather, purge, budget;
    } gc_phase_work;
    engine_gc_slack gc_slack;     /* recent frames' net + world + repl, for pacing */
    engine_gc_slack stream_slack; /* the same without streaming's adds and removals */
    uint64_t seen_collections;    /* gc_stats.collections already logged */
    uint64_t slow_frames;
    uint64_t frames_over_budget;       /* frames longer than the --tick-hz period */
    uint64_t frames_over_budget_gc;    /* of those, the ones the gc phase put over it */
    uint64_t gc_assumption_violations; /* gc.VerifyAssumptions findings, summed */
    uint64_t gc_garbage_references;    /* references to garbage nulled (when tracked) */
    uint64_t trim_destroyed;           /* objects destroyed at the last malloc_trim */
    uint32_t levels_pending_seen;      /* levels pending purge at the last gc phase */

    /* The match cycle (engine_maps.c). By lifetime: the map table, the travel's state machine,
     * the leaked worlds and the game instance (env.instance) live for the process; worlds[]
     * and what they hold for one map; next_worlds and retired for one travel. */
    engine_map maps[ENGINE_MAPS_MAX];
    uint32_t map_count;
    uint32_t map_index;           /* the current map */
    uint32_t rotation_next;       /* the next map of opts.rotation */
    double match_started;         /* engine time the current map opened */
    engine_travel travel;
    world **next_worlds;          /* a travel's worlds being loaded (opts.worlds entries) */
    uint32_t next_map;            /* maps[] index of what loads */
    bool loading;
    uint64_t props_left;          /* persistent props still to spawn in next_worlds[0] */
    world **retired;              /* worlds whose end of play runs (opts.worlds entries) */
    uint32_t retired_count;
    bool retired_begun;
    uint64_t ended_actors;        /* actors given their end of play (all travels) */
    bool travel_gc_started;       /* a sliced travel's collection is under way */
    uint64_t travel_gc_base;      /* gc_stats.collections when it started */
    gc_settings travel_gc_saved;  /* the collector's settings before it (restored after) */
    engine_leaked_world leaked[ENGINE_LEAKED_MAX];
    uint32_t leaked_count;
    /* The worlds that stopped being current during this travel (both hops of a seamless
     * one): what the leak check looks for, without walking the heap. */
    gc_weak departed[2 * ENGINE_MAX_WORLDS];
    uint32_t departed_count;
    uint64_t leaked_found;        /* leaked worlds found, whatever the severity */
    engine_travel_frames travel_frames, last_travel_frames;
    char world_names[ENGINE_MAX_WORLDS][WORLD_NAME_MAX]; /* for the dashboard: for the process */

    bool stopping;
    bool awaiting_sigterm;        /* quit under Agones: Shutdown asked, the pod goes next */
    char stop_reason[64];
    int exit_status;              /* ENGINE_EXIT_*: what engine_run returns */
} engine;

/* Runs the loop until a stop request has finished shutting down. Returns the exit status. */
int engine_run(engine *e);

/* Asks for a graceful stop (signal, console quit): goodbye to clients, full purge, exit 0.
 * Safe from any callback on the loop thread; the work runs on the next loop iteration. */
void engine_request_stop(engine *e, const char *reason);

/* One frame (the timer callback calls it; tests may too). */
void engine_frame(engine *e);

/* Console `obj gc`: a full collection now, then cleanup actors in every world. */
void engine_collect_garbage_now(engine *e, strbuf *out);

/* Monotonic seconds since the engine started. */
double engine_now(const engine *e);

/* Copies changed cvars into the collector's settings. */
void engine_apply_cvars(engine *e);

/* A client connection exists in some world (the idle-server rule). */
bool engine_players_connected(const engine *e);

/* ---- maps and travel (engine_maps.c) ---- */

/* The maps[] index of name; -1 if the server has no such map. */
int engine_map_find(const engine *e, const char *name);
/* Console `servertravel MAP [hard|seamless]` and the rotation: starts a travel to map (mode
 * NULL: [Server] SeamlessTravel's). Unknown map: false, out lists the known ones; a travel
 * under way: false with why. Nothing changes on false. */
bool engine_server_travel(engine *e, const char *map, const char *mode, strbuf *out);
/* The current map's name. */
const char *engine_map_name(const engine *e);

#endif /* REAP_ENGINE_H */
