/*
 * agones.h - the Agones SDK sidecar's REST API, spoken from the engine's loop.
 *
 * Requests go through libcurl's multi interface driven by libuv (curl_multi_socket_action with
 * a uv_poll per socket and one uv_timer), so no frame ever waits on the sidecar. They are sent
 * one at a time, in the order asked, so Ready never overtakes the labels and a player's remove
 * never overtakes its add:
 *
 *   POST /ready {}                                  agones_ready (the game port is bound)
 *   POST /health {}                                 every AGONES_HEALTH_PERIOD_MS by itself
 *   POST /v1beta1/lists/players:addValue {"value"}  agones_player_joined
 *   POST /v1beta1/lists/players:removeValue         agones_player_left
 *     (or /alpha/player/connect, /alpha/player/disconnect {"playerID"} with alpha tracking)
 *   PUT  /metadata/label {"key","value"}            agones_set_label
 *   POST /shutdown {}                               agones_shutdown
 *
 * An unreachable sidecar (or a 5xx) is logged and the request retried with a growing delay,
 * never fatal; a 4xx is logged and dropped (retrying cannot mend it). Health pings are never
 * queued twice and never retried: the next period sends a fresh one.
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
    AGONES_CLOSE_DEADLINE_MS = 3000, /* how long the loop may wait at exit for /shutdown */
};

typedef struct agones_config {
    uint32_t port;            /* the sidecar's HTTP port on 127.0.0.1 */
    bool alpha_players;       /* player tracking through the alpha endpoints */
} agones_config;

typedef struct agones agones;

/* Whether Agones is asked for (flag, or AGONES_SDK_HTTP_PORT set) and on which port. Returns
 * false when it is not, with err "" (or a message naming the bad AGONES_SDK_HTTP_PORT). */
bool agones_config_from_env(bool flag, bool alpha_players, agones_config *out_cfg, char *err,
                            size_t err_size);

/* Starts the health pings on loop. *out_agones: close with agones_close. */
int agones_create(uv_loop_t *loop, const agones_config *cfg, agones **out_agones, char *err,
                  size_t err_size);

/* Each queues one request; all accept NULL (Agones off) and do nothing. Strings are copied. */
void agones_ready(agones *a);
void agones_player_joined(agones *a, const char *player);
void agones_player_left(agones *a, const char *player);
void agones_set_label(agones *a, const char *key, const char *value);
void agones_shutdown(agones *a);

/* Stops the health pings; requests already queued (the /shutdown) still go out for at most
 * AGONES_CLOSE_DEADLINE_MS, then everything is freed once libuv has closed the handles. */
void agones_close(agones *a);

#endif /* REAP_AGONES_H */
