/*
 * agones.h - the Agones SDK sidecar's REST API, spoken from the engine's loop.
 *
 * Requests go through libcurl's multi interface driven by libuv (curl_multi_socket_action with
 * a uv_poll per socket and one uv_timer), so no frame ever waits on the sidecar. The health
 * ping has a transfer of its own, outside the queue, so nothing can hold it back; every other
 * request is sent one at a time, in the order asked, so Ready never overtakes the labels and a
 * player's remove never overtakes its add:
 *
 *   GET  /v1beta1/lists/players                     at start: which Agones, the list's capacity
 *   PUT  /metadata/label {"key","value"}            agones_set_label (stored as agones.dev/sdk-KEY)
 *   POST /ready {}                                  agones_ready (the game port is bound)
 *   POST /health {}                                 every AGONES_HEALTH_PERIOD_MS, by itself
 *   POST /v1beta1/lists/players:addValue {"value"}  agones_player_joined
 *   POST /v1beta1/lists/players:removeValue         agones_player_left
 *     (/v1alpha1/... on an Agones before 1.41; /alpha/player/connect|disconnect {"playerID"}
 *     with alpha tracking)
 *   GET  /gameserver                                while idle, for --agones-shutdown-idle
 *   POST /shutdown {}                               agones_shutdown
 *
 * Failures. The real sidecar answers a list or player error with HTTP 500 and the SDK server's
 * message: "already exists" (an add that had landed) and "not found" (a remove of a value that
 * is not there) are done; "no available capacity", "List not found" and "not enabled" drop the
 * request with one warning each; any other 5xx or an unreachable sidecar is retried with a
 * growing delay, at most AGONES_PLAYER_ATTEMPTS times. Ready, labels and Shutdown are retried
 * until the sidecar answers (a 4xx drops them: retrying cannot mend it). Health pings are never
 * retried: the next period sends a fresh one. Nothing here is ever fatal.
 */
#ifndef REAP_AGONES_H
#define REAP_AGONES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

enum {
    AGONES_DEFAULT_PORT = 9358,
    AGONES_HEALTH_PERIOD_MS = 2000,  /* Agones checks every 5 s by default, 3 misses fail */
    AGONES_RETRY_MIN_MS = 250,
    AGONES_RETRY_MAX_MS = 4000,
    AGONES_PLAYER_ATTEMPTS = 8,      /* a list or player call is given up after this many */
    AGONES_IDLE_POLL_MS = 1000,      /* GET /gameserver while idle, for the idle rule */
    AGONES_CLOSE_DEADLINE_MS = 3000, /* how long the loop may wait at exit for /shutdown */
    AGONES_VALUE_MAX = 128,          /* longest player value (list value or player ID) */
};

typedef struct agones_config {
    uint32_t port;             /* the sidecar's HTTP port on 127.0.0.1 */
    bool alpha_players;        /* player tracking through the alpha endpoints */
    uint32_t max_players;      /* --max-players, compared with the list's capacity */
    uint32_t shutdown_idle_s;  /* Allocated with no player this long: Shutdown (0 = never) */
} agones_config;

typedef struct agones agones;

/* Whether Agones is asked for (flag, or AGONES_SDK_HTTP_PORT set) and on which port. Returns
 * false when it is not, with err "" (or a message naming the bad AGONES_SDK_HTTP_PORT). Fills
 * port and alpha_players; the caller sets the rest. */
bool agones_config_from_env(bool flag, bool alpha_players, agones_config *out_cfg, char *err,
                            size_t err_size);

/* Starts the health pings and asks for the players list. *out_agones: close with
 * agones_close. */
int agones_create(uv_loop_t *loop, const agones_config *cfg, agones **out_agones, char *err,
                  size_t err_size);

/* Each queues one request; all accept NULL (Agones off) and do nothing. Strings are copied. */
void agones_ready(agones *a);
/* player_id is the server's id for the connection; value is what goes in the list. */
void agones_player_joined(agones *a, uint32_t player_id, const char *value);
void agones_player_left(agones *a, uint32_t player_id);
void agones_set_label(agones *a, const char *key, const char *value);
void agones_shutdown(agones *a);

/* Whether the player value a matchmaker gave is one reap can list (1..AGONES_VALUE_MAX-1
 * printable ASCII characters, no space). */
bool agones_value_is_valid(const char *value);

/* Stops the health pings; requests already queued (the /shutdown) still go out for at most
 * AGONES_CLOSE_DEADLINE_MS, then everything is freed once libuv has closed the handles. */
void agones_close(agones *a);

#endif /* REAP_AGONES_H */
