/*
 * cvar.c - the console-variable registry.
 */
#include "cvar.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "reap_gc.h"

/* gc.NumWorkerThreads' range is the collector's own limit (GC_MAX_WORKERS, reap_gc.h), so that
 * no accepted value is refused later. */

/* The table is the single source of truth for names, defaults, ranges and help; deploy/reap.ini
 * lists the same entries. */
static const cvar_def cvar_defs[CVAR_COUNT] = {
    [CVAR_GC_TIME_BETWEEN_PURGING] = { "gc.TimeBetweenPurgingPendingKillObjects", CVAR_FLOAT,
        60, 0, 86400, "seconds between collections while players are connected (0 = never)" },
    [CVAR_GC_IDLE_SERVER_MULTIPLIER] = {
        "gc.TimeBetweenPurgingPendingKillObjectsOnIdleServerMultiplier", CVAR_FLOAT, 10, 0.01,
        1000, "multiplies the interval while no client is connected to any world" },
    [CVAR_GC_LOW_MEMORY_THRESHOLD_MB] = { "gc.LowMemory.MemoryThresholdMB", CVAR_FLOAT, 0, 0,
        1048576, "below this much free memory (MB) use the low-memory interval (0 = off)" },
    [CVAR_GC_LOW_MEMORY_TIME_BETWEEN_PURGING] = {
        "gc.LowMemory.TimeBetweenPurgingPendingKillObjects", CVAR_FLOAT, 30, 0, 86400,
        "seconds between collections when memory is low, if shorter than the interval" },
    [CVAR_GC_INCREMENTAL_TIME_PER_FRAME] = { "gc.IncrementalGCTimePerFrame", CVAR_FLOAT, 0.002,
        0, 10, "seconds per frame the incremental purge may use" },
    [CVAR_GC_ALLOW_INCREMENTAL_REACHABILITY] = { "gc.AllowIncrementalReachability", CVAR_BOOL,
        0, 0, 1, "let marking stop at its time limit and resume next frame" },
    [CVAR_GC_INCREMENTAL_REACHABILITY_TIME_LIMIT] = { "gc.IncrementalReachabilityTimeLimit",
        CVAR_FLOAT, 0.005, 0, 10, "seconds per frame incremental marking may use" },
    [CVAR_GC_DELAY_REACHABILITY_ITERATIONS] = { "gc.DelayReachabilityIterations", CVAR_INT, 0,
        0, 1000000, "testing: extra suspended marking iterations before finishing" },
    [CVAR_GC_ALLOW_INCREMENTAL_GATHER] = { "gc.AllowIncrementalGather", CVAR_BOOL, 0, 0, 1,
        "let gathering unreachable objects be time-sliced" },
    [CVAR_GC_INCREMENTAL_GATHER_TIME_LIMIT] = { "gc.IncrementalGatherTimeLimit", CVAR_FLOAT, 0,
        0, 10, "seconds per slice for incremental gather (0 = no limit)" },
    [CVAR_GC_INCREMENTAL_BEGIN_DESTROY] = { "gc.IncrementalBeginDestroyEnabled", CVAR_BOOL, 1,
        0, 1, "time-slice begin_destroy during the incremental purge" },
    [CVAR_GC_CREATE_CLUSTERS] = { "gc.CreateGCClusters", CVAR_BOOL, 1, 0, 1,
        "build clusters for pawns and props (marked as one unit)" },
    [CVAR_GC_MIN_CLUSTER_SIZE] = { "gc.MinGCClusterSize", CVAR_INT, 5, 1, 1000000,
        "smallest number of objects worth a cluster" },
    [CVAR_GC_NUM_RETRIES_BEFORE_FORCING] = { "gc.NumRetriesBeforeForcingGC", CVAR_INT, 10, 0,
        1000000, "failed try-collects (GC lock busy) before a collection waits for the lock" },
    [CVAR_GC_NUM_WORKER_THREADS] = { "gc.NumWorkerThreads", CVAR_INT, 0, 0,
        GC_MAX_WORKERS, "parallel marking workers (0 = one per core)" },
    [CVAR_GC_COLLECT_EVERY_FRAME] = { "gc.CollectGarbageEveryFrame", CVAR_INT, 0, 0, 1000000,
        "force a full collection every N frames (0 = off)" },
    [CVAR_GC_CONTINUOUS_INCREMENTAL] = { "gc.ContinuousIncrementalGC", CVAR_INT, 0, 0, 1,
        "start a new incremental collection whenever nothing is pending" },
    [CVAR_GC_HISTORY_SIZE] = { "gc.HistorySize", CVAR_INT, 0, 0, 1024,
        "collections whose reference history is kept for diagnostics" },
    [CVAR_GC_GARBAGE_REFERENCE_TRACKING] = { "gc.GarbageReferenceTrackingEnabled", CVAR_BOOL,
        0, 0, 1, "report who still referenced objects marked as garbage" },
    [CVAR_GC_VERIFY_ASSUMPTIONS] = { "gc.VerifyAssumptions", CVAR_BOOL, 0, 0, 1,
        "check the collector's invariants during each collection (slow)" },
    [CVAR_GC_FRAME_SLACK_PACING] = { "gc.FrameSlackPacing", CVAR_BOOL, 0, 0, 1,
        "reap's own: run the collector in each frame's predicted idle time (0 = UE's fixed "
        "limits)" },
    [CVAR_GC_FRAME_SLACK_MARGIN] = { "gc.FrameSlackMargin", CVAR_FLOAT, 0.004, 0, 1,
        "seconds pacing keeps free at the end of each frame" },
    [CVAR_NET_MAX_MESSAGE_BYTES] = { "net.MaxMessageBytes", CVAR_INT, 4096, 64, 262144,
        "largest packet a client may send; larger ones are refused and counted" },
    [CVAR_NET_MAX_ACTORS_PER_PLAYER] = { "net.MaxActorsPerPlayer", CVAR_INT, 100, 0, 100000,
        "actors (props and projectiles) one player may own at a time" },
    [CVAR_NET_MAX_SPAWN_PER_REQUEST] = { "net.MaxSpawnPerRequest", CVAR_INT, 50, 1, 5000,
        "largest count one spawn request may ask for" },
    [CVAR_NET_SPAWN_RATE] = { "net.SpawnRatePerSecond", CVAR_FLOAT, 100, 0, 1000000,
        "actors per second a player may spawn, sustained (token bucket rate)" },
    [CVAR_NET_SPAWN_BURST] = { "net.SpawnBurst", CVAR_FLOAT, 200, 1, 1000000,
        "actors a player may spawn at once before the rate applies (token bucket size)" },
    [CVAR_NET_MAX_BAD_MESSAGES] = { "net.MaxBadMessages", CVAR_INT, 10, 1, 1000000,
        "bad messages from one connection before it is disconnected" },
    [CVAR_NET_CONNECTION_TIMEOUT] = { "net.ConnectionTimeout", CVAR_FLOAT, 10, 0.5, 3600,
        "seconds without acknowledgement before a client is dropped as timed out" },
    [CVAR_NET_HELLO_TIMEOUT] = { "net.HelloTimeout", CVAR_FLOAT, 5, 0.1, 3600,
        "seconds a new connection may take to say hello before it is disconnected" },
    [CVAR_NET_CULL_DISTANCE] = { "net.CullDistance", CVAR_FLOAT, 15000, 100, 10000000,
        "actors farther than this from a player's pawn are not replicated to it (UE's "
        "NetCullDistanceSquared = 15000^2)" },
    [CVAR_NET_MAX_CLIENT_RATE] = { "net.MaxClientRate", CVAR_INT, 100000, 1000, 100000000,
        "bytes per second the server sends one connection at most (UE's MaxClientRate)" },
    [CVAR_NET_FULL_PASS_BUDGET_MS] = { "net.FullPassBudgetMs", CVAR_FLOAT, 4, 0, 1000,
        "reap's own: milliseconds a frame spends on joiners' first relevancy passes before "
        "the other joiners wait for the next frame; one waits at most 8 frames (0: no "
        "budget)" },
    [CVAR_NET_REPLICATION_FRAME_BUDGET] = { "net.ReplicationFrameBudget", CVAR_FLOAT, 0.8, 0,
        1, "reap's own: the share of the frame period after which, with the flush its queued "
        "bytes will cost, the frame's other connections wait for the next frame (served first "
        "then; each is served at least every 3rd frame; 0: no budget)" },
    [CVAR_NET_MAX_PAWN_SPEED] = { "net.MaxPawnSpeed", CVAR_FLOAT, 1200, 0, 1000000,
        "fastest pawn velocity a MoveInput may ask for, in units per second" },
    [CVAR_NET_MAX_MOVE_INPUT_RATE] = { "net.MaxMoveInputsPerSecond", CVAR_FLOAT, 60, 1, 10000,
        "move inputs per second a player may send; the rest are refused and counted" },
    [CVAR_NET_REQUEST_RATE] = { "net.RequestRatePerSecond", CVAR_FLOAT, 20, 0.1, 1000000,
        "requests (ping, stats, destroy, checks) per second a player may make, sustained" },
    [CVAR_NET_REQUEST_BURST] = { "net.RequestBurst", CVAR_FLOAT, 40, 1, 1000000,
        "requests a player may make at once before net.RequestRatePerSecond applies" },
    [CVAR_NET_MAX_MESSAGES_PER_FRAME] = { "net.MaxMessagesPerFrame", CVAR_INT, 256, 1,
        1000000, "messages one connection may send per frame, all channels together; the rest "
        "are dropped before decoding" },
    [CVAR_NET_FLOOD_KICK_SECONDS] = { "net.FloodKickSeconds", CVAR_FLOAT, 2, 0.1, 3600,
        "a connection over net.MaxMessagesPerFrame in every second for this long is "
        "disconnected" },
    [CVAR_WORLD_EXTENT] = { "world.Extent", CVAR_FLOAT, 200000, 100, 20000000,
        "side of the square area (centred on 0,0) where pawns spawn and move, in units" },
    [CVAR_WORLD_PERSISTENT_PROPS] = { "world.PersistentProps", CVAR_INT, 0, 0, 4000000,
        "collected objects the first world holds for its whole life (a big persistent world; "
        "read at start)" },
    [CVAR_ENGINE_SLOW_FRAME_MS] = { "engine.SlowFrameMs", CVAR_FLOAT, 100, 0, 60000,
        "frames longer than this many milliseconds are logged (0 = never)" },
    [CVAR_WP_ENABLE_SERVER_STREAMING] = { "wp.Runtime.EnableServerStreaming", CVAR_INT, 0, 0,
        2, "streaming cells load around the players (0: every cell loaded at start and kept; "
        "2, UE's 'in PIE only', is 0 on a dedicated server)" },
    [CVAR_WP_ENABLE_SERVER_STREAMING_OUT] = { "wp.Runtime.EnableServerStreamingOut",
        CVAR_BOOL, 0, 0, 1, "with server streaming, cells nobody is near unload again" },
    [CVAR_WORLD_STREAMING_CELL_SIZE] = { "world.StreamingCellSize", CVAR_FLOAT, 12800, 100,
        10000000, "side of a streaming cell, in units (read when a world is created)" },
    [CVAR_WORLD_STREAMING_LOADING_RANGE] = { "world.StreamingLoadingRange", CVAR_FLOAT, 25600,
        0, 100000000, "a cell loads while a pawn is this close to it, in units" },
    [CVAR_WORLD_STREAMING_UNLOAD_DELAY] = { "world.StreamingUnloadDelay", CVAR_FLOAT, 2, 0,
        86400, "seconds a cell stays loaded after the last pawn left its range" },
    [CVAR_S_ACTORS_UPDATE_TIME_LIMIT] = { "s.LevelStreamingActorsUpdateTimeLimit", CVAR_FLOAT,
        5, 0, 10000, "milliseconds a frame may spend adding streamed-in actors (0 = no limit)" },
    [CVAR_S_ACTORS_UPDATE_GRANULARITY] = { "s.LevelStreamingActorsUpdateGranularity",
        CVAR_INT, 10, 1, 1000000, "actors added between two looks at the clock" },
    [CVAR_S_UNREGISTER_COMPONENTS_TIME_LIMIT] = { "s.UnregisterComponentsTimeLimit",
        CVAR_FLOAT, 1, 0, 10000, "milliseconds a frame may spend removing a streamed-out "
        "level's actors and components (0 = no limit)" },
    [CVAR_S_UNREGISTER_GRANULARITY] = { "s.LevelStreamingComponentsUnregistrationGranularity",
        CVAR_INT, 5, 1, 1000000, "components removed between two looks at the clock" },
    [CVAR_S_FORCE_GC_AFTER_LEVEL_STREAMED_OUT] = { "s.ForceGCAfterLevelStreamedOut",
        CVAR_BOOL, 1, 0, 1, "a full purge on the frame a level finishes streaming out; no new "
        "level loads while a level is pending purge" },
    [CVAR_S_CONTINUOUSLY_INCREMENTAL_GC_PENDING_PURGE] = {
        "s.ContinuouslyIncrementalGCWhileLevelsPendingPurge", CVAR_INT, 1, 0, 1000000,
        "a soft collection whenever at least this many levels are pending purge (0 = off)" },
    [CVAR_S_SLICED_GC_AFTER_LEVEL_STREAMED_OUT] = { "s.SlicedGCAfterLevelStreamedOut",
        CVAR_BOOL, 1, 0, 1, "reap's own: with incremental reachability or frame-slack pacing "
        "on, the collection a stream-out forces runs in slices (0 = UE's blocking full purge)" },
    [CVAR_S_FORCE_VERIFY_LEVELS_REMOVED] = { "s.ForceVerifyLevelsGotRemovedByGC", CVAR_BOOL, 0,
        0, 1, "after each collection, name every object of a streamed-out level still alive, "
        "with its reference chain" },
    [CVAR_GC_LOW_MEMORY_TIME_BETWEEN_PURGING_LEVELS] = {
        "gc.LowMemory.TimeBetweenPurgingPendingLevels", CVAR_FLOAT, 15, 0, 86400,
        "seconds between collections when memory is low and levels are pending purge" },
    [CVAR_GC_ACTOR_CLUSTERING] = { "gc.ActorClusteringEnabled", CVAR_BOOL, 1, 0, 1,
        "a streamed-in level's placed actors form one GC cluster" },
    [CVAR_VERIFY_LOAD_MAP_WORLD_CLEANUP_SEVERITY] = {
        "Engine.VerifyLoadMapWorldCleanup.Severity", CVAR_INT, 2, 0, 3,
        "after a travel's collections, a world that survived: 0 not checked, 1 an error, 2 an "
        "error and counted, 3 fatal (the server exits with status 3)" },
    [CVAR_VERIFY_LOAD_MAP_WORLD_CLEANUP_TRACE_MODE] = {
        "Engine.VerifyLoadMapWorldCleanup.TraceMode", CVAR_INT, 1, 0, 1,
        "a leaked world's report: 1 its shortest reference chain from a root, 0 its direct "
        "referencers only" },
    [CVAR_NET_ADMISSION_CONTROL] = { "net.AdmissionControl", CVAR_BOOL, 1, 0, 1,
        "reap's own: answer new players' Hellos with ERROR_CODE_BUSY while the loop's load is "
        "over net.Admission.HighLoad, and stretch far update bands first" },
    [CVAR_NET_ADMISSION_HIGH_LOAD] = { "net.Admission.HighLoad", CVAR_FLOAT, 0.85, 0.05, 10,
        "refuse new players from this load (the loop's work per frame over the frame period, "
        "averaged over net.Admission.WindowSeconds)" },
    [CVAR_NET_ADMISSION_LOW_LOAD] = { "net.Admission.LowLoad", CVAR_FLOAT, 0.7, 0.01, 10,
        "admit new players again below this load; stretched update bands unwind below it" },
    [CVAR_NET_ADMISSION_STRETCH_LOAD] = { "net.Admission.StretchLoad", CVAR_FLOAT, 0.8, 0.01,
        10, "from this load the farthest update band not yet stretched doubles its period, "
        "one band per window (the nearest band never)" },
    [CVAR_NET_ADMISSION_WINDOW_SECONDS] = { "net.Admission.WindowSeconds", CVAR_FLOAT, 2, 0.1,
        30, "seconds of frames the load is averaged over" },
    [CVAR_NET_ADMISSION_RETRY_AFTER_MS] = { "net.Admission.RetryAfterMs", CVAR_INT, 2000, 0,
        600000, "a busy refusal's Error.retry_after_ms is this to twice this, at random" },
    [CVAR_ENGINE_TEST_FRAME_COST_MS] = { "engine.TestFrameCostMs", CVAR_FLOAT, 0, 0, 10000,
        "testing: every frame sleeps this many milliseconds in its world phase, a fake load "
        "(0 = off)" },
    [CVAR_ADMIN_METRICS_CACHE_SECONDS] = { "admin.MetricsCacheSeconds", CVAR_FLOAT, 0.5, 0,
        3600, "GET /metrics and /stats.json are rendered at most once per this many seconds and "
        "served from that copy meanwhile (0 = every request)" },
};

static const char *const cvar_result_strs[] = {
    [0] = "ok",
    [1] = "unknown console variable",
    [2] = "bad value",
    [3] = "value out of range",
    [4] = "expected NAME=VALUE",
    [5] = "cannot read the config file",
    [6] = "already set by a source of higher precedence",
};

const char *cvar_result_str(cvar_result r)
{
    int i = -(int)r;
    return i >= 0 && i < (int)(sizeof cvar_result_strs / sizeof *cvar_result_strs)
               ? cvar_result_strs[i]
               : "unknown result";
}

void cvar_registry_init(cvar_registry *reg)
{
    for (int i = 0; i < CVAR_COUNT; i++) {
        reg->values[i] = cvar_defs[i].default_value;
        reg->sources[i] = CVAR_SOURCE_DEFAULT;
    }
    reg->generation = 1;
}

const cvar_def *cvar_def_get(cvar_id id)
{
    return id >= 0 && id < CVAR_COUNT ? &cvar_defs[id] : NULL;
}

const char *cvar_type_name(cvar_type type)
{
    switch (type) {
    case CVAR_INT: return "integer";
    case CVAR_FLOAT: return "number";
    case CVAR_BOOL: return "boolean";
    }
    return "?";
}

bool cvar_find(const char *name, cvar_id *out_id)
{
    if (name == NULL)
        return false;
    for (int i = 0; i < CVAR_COUNT; i++) {
        if (strcasecmp(name, cvar_defs[i].name) == 0) {
            *out_id = (cvar_id)i;
            return true;
        }
    }
    return false;
}

void cvar_format_number(double v, char *buf, size_t buf_size)
{
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, buf_size, "%.0f", v);
        return;
    }
    snprintf(buf, buf_size, "%.17g", v);
    /* Prefer the shortest text that reads back as the same value ("0.002", not 0.0020000...). */
    for (int prec = 1; prec <= 17; prec++) {
        char tmp[64];
        snprintf(tmp, sizeof tmp, "%.*g", prec, v);
        if (strtod(tmp, NULL) == v) {
            snprintf(buf, buf_size, "%s", tmp);
            return;
        }
    }
}

static void cvar_describe_range(const cvar_def *def, char *buf, size_t buf_size)
{
    char lo[32], hi[32];

    if (def->type == CVAR_BOOL) {
        snprintf(buf, buf_size, "0 or 1");
        return;
    }
    cvar_format_number(def->min_value, lo, sizeof lo);
    cvar_format_number(def->max_value, hi, sizeof hi);
    snprintf(buf, buf_size, "%s in [%s, %s]", def->type == CVAR_INT ? "an integer" : "a number",
             lo, hi);
}

/* Parses text as a value of def's type, without range checks. */
static bool cvar_parse_value(const cvar_def *def, const char *text, double *out_value)
{
    char *end;
    double v;

    if (text == NULL)
        return false;
    while (*text == ' ' || *text == '\t')
        text++;
    if (def->type == CVAR_BOOL) {
        if (strcasecmp(text, "true") == 0 || strcasecmp(text, "on") == 0) {
            *out_value = 1;
            return true;
        }
        if (strcasecmp(text, "false") == 0 || strcasecmp(text, "off") == 0) {
            *out_value = 0;
            return true;
        }
    }
    if (*text == '\0')
        return false;
    /* Decimal only: strtod would also take "0x10" (16), "inf" and "nan". */
    for (const char *c = text; *c != '\0' && *c != ' ' && *c != '\t'; c++)
        if (strchr("0123456789+-.eE", *c) == NULL)
            return false;
    errno = 0;
    v = strtod(text, &end);
    while (*end == ' ' || *end == '\t')
        end++;
    if (errno != 0 || *end != '\0' || !isfinite(v))
        return false;
    if ((def->type == CVAR_INT || def->type == CVAR_BOOL) && v != floor(v))
        return false;
    *out_value = v;
    return true;
}

static void cvar_error(char *err, size_t err_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void cvar_error(char *err, size_t err_size, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL || err_size == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
}

static bool cvar_store(cvar_registry *reg, cvar_id id, double value, cvar_source source)
{
    if (source < reg->sources[id])
        return false;
    reg->sources[id] = source;
    if (reg->values[id] != value) {
        reg->values[id] = value;
        reg->generation++;
    }
    return true;
}

cvar_result cvar_set(cvar_registry *reg, const char *name, const char *value_text,
                     cvar_source source, char *err, size_t err_size)
{
    cvar_id id;
    const cvar_def *def;
    char range[96];
    double v;

    if (!cvar_find(name, &id)) {
        cvar_error(err, err_size,
                   "unknown console variable '%s' (the console command 'cvars' lists them)",
                   name ? name : "");
        return CVAR_E_UNKNOWN;
    }
    def = &cvar_defs[id];
    cvar_describe_range(def, range, sizeof range);
    if (!cvar_parse_value(def, value_text, &v)) {
        cvar_error(err, err_size, "bad value '%s' for %s: expected %s", value_text ? value_text : "",
                   def->name, range);
        return CVAR_E_VALUE;
    }
    if (v < def->min_value || v > def->max_value) {
        cvar_error(err, err_size, "value '%s' for %s is out of range: expected %s", value_text,
                   def->name, range);
        return CVAR_E_RANGE;
    }
    if (!cvar_store(reg, id, v, source))
        return CVAR_E_OVERRIDDEN;
    return CVAR_OK;
}

cvar_result cvar_set_id(cvar_registry *reg, cvar_id id, double value, cvar_source source)
{
    const cvar_def *def = cvar_def_get(id);

    if (def == NULL)
        return CVAR_E_UNKNOWN;
    if (!isfinite(value) || ((def->type != CVAR_FLOAT) && value != floor(value)))
        return CVAR_E_VALUE;
    if (value < def->min_value || value > def->max_value)
        return CVAR_E_RANGE;
    if (!cvar_store(reg, id, value, source))
        return CVAR_E_OVERRIDDEN;
    return CVAR_OK;
}

cvar_result cvar_set_assignment(cvar_registry *reg, const char *assignment, cvar_source source,
                                char *err, size_t err_size)
{
    const char *eq = assignment ? strchr(assignment, '=') : NULL;
    char name[128];
    size_t n;

    if (eq == NULL || eq == assignment || (size_t)(eq - assignment) >= sizeof name) {
        cvar_error(err, err_size, "bad cvar assignment '%s': expected NAME=VALUE",
                   assignment ? assignment : "");
        return CVAR_E_SYNTAX;
    }
    n = (size_t)(eq - assignment);
    memcpy(name, assignment, n);
    while (n > 0 && (name[n - 1] == ' ' || name[n - 1] == '\t'))
        n--;
    name[n] = '\0';
    return cvar_set(reg, name, eq + 1, source, err, err_size);
}

double cvar_get(const cvar_registry *reg, cvar_id id)
{
    return reg->values[id];
}

int64_t cvar_get_int(const cvar_registry *reg, cvar_id id)
{
    return (int64_t)reg->values[id];
}

bool cvar_get_bool(const cvar_registry *reg, cvar_id id)
{
    return reg->values[id] != 0;
}

const char *cvar_format_value(const cvar_registry *reg, cvar_id id, char *buf, size_t buf_size)
{
    cvar_format_number(reg->values[id], buf, buf_size);
    return buf;
}
