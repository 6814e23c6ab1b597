/*
 * client_session.h - reap-client's one-client mode: one player joins a world, spawns props,
 * waits for their acks and their replication, holds, asks for the server's stats, and leaves.
 *
 * Every wait has a deadline; failures come back as an exit status with a message that says
 * what went wrong (no server, refused, timed out).
 */
#ifndef REAP_CLIENT_SESSION_H
#define REAP_CLIENT_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "churn_plan.h"

/* What one session does. */
typedef struct client_session_options {
    char host[256];
    uint16_t port;
    char world[32];           /* "" = the server's first world */
    char name[32];
    uint32_t spawn;           /* props to spawn */
    double hold;              /* seconds to stay after spawning */
    client_disconnect disconnect; /* graceful or abrupt */
    double timeout;           /* seconds to wait for each answer */
    bool quiet;
} client_session_options;

/* Runs one client session; progress and the summary go to out, errors to stderr. Returns a
 * CLIENT_EXIT_*. */
int client_run(const client_session_options *opts, FILE *out);

#endif /* REAP_CLIENT_SESSION_H */
