/*
 * engine_travel.h - server travel: the match cycle's change of map, as UE does it.
 *
 * Travel is the engine's: it owns the worlds' lifecycle, asks for the collections and runs the
 * leak check. Like engine_gc.c, this is a pure state machine over a clock and a table of
 * operations (engine_travel_ops), so every step has a unit test with a fake clock and fake
 * worlds. The engine supplies the operations (engine_maps.c).
 *
 * Two modes, UE's:
 *   hard (UE LoadMap):  DEPART (every client is told and disconnected; the worlds stop being
 *                       current) -> END_PLAY (the old worlds' actors get their end of play,
 *                       the worlds leave the root set, marked garbage) -> COLLECT (one full
 *                       purge) -> VERIFY (the leak check) -> LOAD (the new map's worlds) ->
 *                       ARRIVE (clients may join again). "Took N seconds to LoadMap(MAP)".
 *   seamless (UE bUseSeamlessTravel): DEPART (clients told; connections and controllers kept)
 *                       -> LOAD (the transition map, empty worlds) -> ENTER (controllers carried
 *                       into it, the old worlds retired) -> END_PLAY -> COLLECT (hop 1) ->
 *                       LOAD (the destination) -> ENTER -> END_PLAY (the transition's) ->
 *                       COLLECT (hop 2) -> VERIFY -> ARRIVE (players restart in the new
 *                       worlds). "SeamlessTravel finished in N seconds".
 *
 * Blocking (UE's): every phase runs to its end in one call, so a hard travel is one frame and
 * a hitch. Sliced (reap's, with gc.FrameSlackPacing=1): each phase that does work (end of
 * play, collection, load) gets the frame's budget and the call returns after it, so the
 * server keeps its frame rate; the leak check runs once the collections are complete.
 *
 * State by lifetime: this struct lives for the process (in the engine); what it travels
 * between (worlds, levels, actors) lives for one map; the game instance and the connections
 * a seamless travel carries live for the game instance.
 */
#ifndef REAP_ENGINE_TRAVEL_H
#define REAP_ENGINE_TRAVEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { ENGINE_TRAVEL_MAP_MAX = 32, ENGINE_TRAVEL_LINE_MAX = 256 };

typedef enum engine_travel_mode {
    ENGINE_TRAVEL_HARD = 0,
    ENGINE_TRAVEL_SEAMLESS,
} engine_travel_mode;

typedef enum engine_travel_phase {
    ENGINE_TRAVEL_IDLE = 0,
    ENGINE_TRAVEL_DEPART,
    ENGINE_TRAVEL_LOAD,
    ENGINE_TRAVEL_END_PLAY,
    ENGINE_TRAVEL_COLLECT,
    ENGINE_TRAVEL_VERIFY,
    ENGINE_TRAVEL_ARRIVE,
    ENGINE_TRAVEL_PHASE_COUNT
} engine_travel_phase;

const char *engine_travel_mode_name(engine_travel_mode m);   /* "hard", "seamless" */
const char *engine_travel_phase_name(engine_travel_phase p); /* "idle", "depart", ... */

/* What the engine does for a travel. ctx is passed back. A *_step operation works for at most
 * time_limit seconds (0: until done) and returns true once done. */
typedef struct engine_travel_ops {
    void *ctx;
    /* Tells every client; hard: disconnects them; seamless: takes them out of replication.
     * hard also retires the current worlds (no world is current until ARRIVE). */
    void (*depart)(void *ctx, engine_travel_mode mode, const char *map);
    /* Builds the worlds of `map` (the transition map when transition is set) beside the
     * current ones, the first call creating them. */
    bool (*load_step)(void *ctx, const char *map, bool transition, double time_limit);
    /* The loaded worlds become the current ones; seamless: the players' controllers are
     * carried into them first, and the worlds they leave are retired. */
    void (*enter)(void *ctx, engine_travel_mode mode);
    /* The retired worlds' end of play. */
    bool (*end_play_step)(void *ctx, double time_limit);
    /* A full collection: blocking when time_limit is 0, else one slice of one that it starts
     * on its first call. True once it has marked and purged. */
    bool (*collect_step)(void *ctx, double time_limit);
    /* The leak check: every world that is neither current nor already known to have leaked,
     * found by walking the object array; each is reported (trace_mode 1: its full chain, 0:
     * its direct referencers), renamed and kept. Returns how many it found. */
    uint32_t (*verify)(void *ctx, int trace_mode);
    /* The new worlds are open: seamless: players restart in them and are told. */
    void (*arrive)(void *ctx, engine_travel_mode mode, const char *map);
    /* Severity 3 found a leak: the server stops with ENGINE_EXIT_WORLD_LEAK. */
    void (*fatal)(void *ctx, uint32_t leaked);
    /* A line for the log (info; errors go through verify). */
    void (*log)(void *ctx, const char *line);
    /* Monotonic seconds (tests pass a fake clock). */
    double (*clock)(void *ctx);
} engine_travel_ops;

/* The cvars a travel reads, copied when it starts. */
typedef struct engine_travel_config {
    int severity;                /* Engine.VerifyLoadMapWorldCleanup.Severity: 0 off, 1 error,
                                    2 error and counted, 3 fatal */
    int trace_mode;              /* Engine.VerifyLoadMapWorldCleanup.TraceMode: 1 full chains,
                                    0 direct referencers */
    bool sliced;                 /* gc.FrameSlackPacing: the phases in the frame's budget */
} engine_travel_config;

/* The last travel that finished, for the console and /metrics. */
typedef struct engine_travel_result {
    char map[ENGINE_TRAVEL_MAP_MAX], from[ENGINE_TRAVEL_MAP_MAX];
    engine_travel_mode mode;
    bool sliced;
    double seconds;              /* DEPART to ARRIVE */
    double phase_seconds[ENGINE_TRAVEL_PHASE_COUNT]; /* summed over hops */
    uint32_t frames;             /* calls it spanned */
    uint32_t leaked;             /* worlds the leak check found */
} engine_travel_result;

typedef struct engine_travel {
    engine_travel_phase phase;
    engine_travel_mode mode;
    engine_travel_config cfg;
    char map[ENGINE_TRAVEL_MAP_MAX];   /* where it goes */
    char from[ENGINE_TRAVEL_MAP_MAX];  /* the map it leaves */
    char transition[ENGINE_TRAVEL_MAP_MAX];
    uint32_t hop;                /* seamless: 1 to the transition map, 2 to the destination */
    double started, phase_started;
    double step_started;         /* when the step under way began (ops->clock) */
    double phase_work;           /* seconds the phase under way has worked (its steps) */
    uint32_t phase_frames;       /* calls the phase under way has worked in */
    engine_travel_result cur;    /* the travel under way */
    engine_travel_result last;   /* the last one that finished */
    uint64_t travels[2];         /* finished, by mode */
    uint64_t refused;            /* requests refused (unknown map, one under way) */
    uint64_t leaked_worlds;      /* leaks counted (severity >= 2) */
    bool stopped;                /* severity 3 stopped the server */
} engine_travel;

void engine_travel_init(engine_travel *t, const char *transition_map);

bool engine_travel_busy(const engine_travel *t);

/* Starts a travel from `from` to `map` at `now`. False, with why in reason, while another is
 * under way (the map is the caller's to check). */
bool engine_travel_start(engine_travel *t, const engine_travel_config *cfg,
                         engine_travel_mode mode, const char *from, const char *map, double now,
                         char *reason, size_t reason_size);

/* Advances the travel, with `budget` seconds for this call's work when sliced (blocking: every
 * phase runs to its end now). Returns the phase it is in afterwards (IDLE: done, or not
 * travelling). Call once per frame while it is busy. */
engine_travel_phase engine_travel_tick(engine_travel *t, double budget,
                                       const engine_travel_ops *ops);

#endif /* REAP_ENGINE_TRAVEL_H */
