/*
 * cvar.h - console variables: a fixed registry of named, typed, ranged settings.
 *
 * Names and defaults follow Unreal Engine so that operators recognise them. Every cvar has an
 * id (an enum, for the per-frame reads of the engine), a name (matched case-insensitively, as
 * UE does), a type, a default, an inclusive range and a line of help. Values are set, in order
 * of precedence, by the console `set`, `--cvar name=value`, the ini file (reap's
 * [ConsoleVariables], or a UE file's cvar sections in UE's own order: engine_options.c), and the
 * defaults. Process-wide state: one registry per server.
 */
#ifndef REAP_CVAR_H
#define REAP_CVAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum cvar_id {
    CVAR_GC_TIME_BETWEEN_PURGING,
    CVAR_GC_IDLE_SERVER_MULTIPLIER,
    CVAR_GC_LOW_MEMORY_THRESHOLD_MB,
    CVAR_GC_LOW_MEMORY_TIME_BETWEEN_PURGING,
    CVAR_GC_INCREMENTAL_TIME_PER_FRAME,
    CVAR_GC_ALLOW_INCREMENTAL_REACHABILITY,
    CVAR_GC_INCREMENTAL_REACHABILITY_TIME_LIMIT,
    CVAR_GC_DELAY_REACHABILITY_ITERATIONS,
    CVAR_GC_ALLOW_INCREMENTAL_GATHER,
    CVAR_GC_INCREMENTAL_GATHER_TIME_LIMIT,
    CVAR_GC_INCREMENTAL_BEGIN_DESTROY,
    CVAR_GC_CREATE_CLUSTERS,
    CVAR_GC_MIN_CLUSTER_SIZE,
    CVAR_GC_NUM_RETRIES_BEFORE_FORCING,
    CVAR_GC_NUM_WORKER_THREADS,
    CVAR_GC_COLLECT_EVERY_FRAME,
    CVAR_GC_CONTINUOUS_INCREMENTAL,
    CVAR_GC_HISTORY_SIZE,
    CVAR_GC_GARBAGE_REFERENCE_TRACKING,
    CVAR_GC_VERIFY_ASSUMPTIONS,
    CVAR_GC_FRAME_SLACK_PACING,
    CVAR_GC_FRAME_SLACK_MARGIN,
    CVAR_NET_MAX_MESSAGE_BYTES,
    CVAR_NET_MAX_ACTORS_PER_PLAYER,
    CVAR_NET_MAX_SPAWN_PER_REQUEST,
    CVAR_NET_SPAWN_RATE,
    CVAR_NET_SPAWN_BURST,
    CVAR_NET_MAX_BAD_MESSAGES,
    CVAR_NET_CONNECTION_TIMEOUT,
    CVAR_NET_HELLO_TIMEOUT,
    CVAR_NET_CULL_DISTANCE,
    CVAR_NET_MAX_CLIENT_RATE,
    CVAR_NET_FULL_PASS_BUDGET_MS,
    CVAR_NET_REPLICATION_FRAME_BUDGET,
    CVAR_NET_MAX_PAWN_SPEED,
    CVAR_NET_MAX_MOVE_INPUT_RATE,
    CVAR_NET_REQUEST_RATE,
    CVAR_NET_REQUEST_BURST,
    CVAR_NET_MAX_MESSAGES_PER_FRAME,
    CVAR_NET_FLOOD_KICK_SECONDS,
    CVAR_WORLD_EXTENT,
    CVAR_WORLD_PERSISTENT_PROPS,
    CVAR_ENGINE_SLOW_FRAME_MS,
    CVAR_WP_ENABLE_SERVER_STREAMING,
    CVAR_WP_ENABLE_SERVER_STREAMING_OUT,
    CVAR_WORLD_STREAMING_CELL_SIZE,
    CVAR_WORLD_STREAMING_LOADING_RANGE,
    CVAR_WORLD_STREAMING_UNLOAD_DELAY,
    CVAR_S_ACTORS_UPDATE_TIME_LIMIT,
    CVAR_S_ACTORS_UPDATE_GRANULARITY,
    CVAR_S_UNREGISTER_COMPONENTS_TIME_LIMIT,
    CVAR_S_UNREGISTER_GRANULARITY,
    CVAR_S_FORCE_GC_AFTER_LEVEL_STREAMED_OUT,
    CVAR_S_CONTINUOUSLY_INCREMENTAL_GC_PENDING_PURGE,
    CVAR_S_SLICED_GC_AFTER_LEVEL_STREAMED_OUT,
    CVAR_S_FORCE_VERIFY_LEVELS_REMOVED,
    CVAR_GC_LOW_MEMORY_TIME_BETWEEN_PURGING_LEVELS,
    CVAR_GC_ACTOR_CLUSTERING,
    CVAR_VERIFY_LOAD_MAP_WORLD_CLEANUP_SEVERITY,
    CVAR_VERIFY_LOAD_MAP_WORLD_CLEANUP_TRACE_MODE,
    CVAR_NET_ADMISSION_CONTROL,
    CVAR_NET_ADMISSION_HIGH_LOAD,
    CVAR_NET_ADMISSION_LOW_LOAD,
    CVAR_NET_ADMISSION_STRETCH_LOAD,
    CVAR_NET_ADMISSION_WINDOW_SECONDS,
    CVAR_NET_ADMISSION_RETRY_AFTER_MS,
    CVAR_ENGINE_TEST_FRAME_COST_MS,
    CVAR_ADMIN_METRICS_CACHE_SECONDS,
    CVAR_COUNT
} cvar_id;

typedef enum cvar_type {
    CVAR_INT,
    CVAR_FLOAT,
    CVAR_BOOL,
} cvar_type;

/* Where the current value came from; a lower source never overrides a higher one. */
typedef enum cvar_source {
    CVAR_SOURCE_DEFAULT = 0,
    CVAR_SOURCE_INI,
    CVAR_SOURCE_COMMAND_LINE,
    CVAR_SOURCE_CONSOLE,
} cvar_source;

typedef struct cvar_def {
    const char *name;
    cvar_type type;
    double default_value;
    double min_value;
    double max_value;
    const char *help;
} cvar_def;

typedef struct cvar_registry {
    double values[CVAR_COUNT];
    cvar_source sources[CVAR_COUNT];
    uint64_t generation; /* bumped on every change, so users can re-read cheaply */
} cvar_registry;

typedef enum cvar_result {
    CVAR_OK = 0,
    CVAR_E_UNKNOWN = -1,   /* no cvar of that name */
    CVAR_E_VALUE = -2,     /* not a value of the cvar's type */
    CVAR_E_RANGE = -3,     /* outside the cvar's range */
    CVAR_E_SYNTAX = -4,    /* "name=value" expected */
    CVAR_E_IO = -5,        /* the ini file could not be read */
    CVAR_E_OVERRIDDEN = -6,/* a higher-precedence source already set it (not an error for users) */
} cvar_result;

const char *cvar_result_str(cvar_result r);

/* All values at their defaults. */
void cvar_registry_init(cvar_registry *reg);

const cvar_def *cvar_def_get(cvar_id id);
const char *cvar_type_name(cvar_type type);
/* Case-insensitive lookup; false if unknown. */
bool cvar_find(const char *name, cvar_id *out_id);

/* Parses value_text for the cvar and stores it, unless a higher source set it before (then
 * CVAR_E_OVERRIDDEN and nothing changes). On failure err (if not NULL) receives a message that
 * names the cvar and its accepted range, and the registry is unchanged. */
cvar_result cvar_set(cvar_registry *reg, const char *name, const char *value_text,
                     cvar_source source, char *err, size_t err_size);
cvar_result cvar_set_id(cvar_registry *reg, cvar_id id, double value, cvar_source source);
/* "name=value" (the --cvar argument). */
cvar_result cvar_set_assignment(cvar_registry *reg, const char *assignment, cvar_source source,
                                char *err, size_t err_size);

double cvar_get(const cvar_registry *reg, cvar_id id);
int64_t cvar_get_int(const cvar_registry *reg, cvar_id id);
bool cvar_get_bool(const cvar_registry *reg, cvar_id id);

/* The shortest text that reads back as v ("60", "0.002", "1000000"). */
void cvar_format_number(double v, char *buf, size_t buf_size);

/* The value as a user would type it ("60", "0.002", "1"); returns buf. */
const char *cvar_format_value(const cvar_registry *reg, cvar_id id, char *buf, size_t buf_size);

#endif /* REAP_CVAR_H */
