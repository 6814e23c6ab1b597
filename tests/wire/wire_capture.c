/*
 * wire_capture.c - plays the session of the README's "Wire examples" against a running
 * reap-server and saves every packet the clients receive, for tests/docs/wire_examples.py to
 * pick the examples from and decode (with tests/wire/decode_reap.py, written from the docs).
 *
 * The session, each step waited for (10 s at most): "ada" joins (Hello seq 1) and is sent its
 * join snapshot; "bob" joins near her (the server runs with a small world.Extent) and she is
 * sent his pawn; she spawns 3 props (seq 2), gets an update message of 2 records (her pawn
 * and his), destroys her first prop (seq 3), asks to spawn 0 props (seq 4: refused), asks for
 * a replication check (seq 5); with ADMIN_PORT, the admin console's `servertravel Default
 * seamless` carries both into a new world (ada is sent Travel DEPART, then ARRIVE with its
 * Welcome and the new snapshot); "cy" says Hello with the previous protocol version (refused,
 * disconnect). Ada's packets go to OUTDIR/ada/, cy's to OUTDIR/cy/, as NNNNNN-chC.bin.
 *
 * usage: wire_capture PORT OUTDIR [ADMIN_PORT]
 *        (exit 0: captured; 1: a step failed, said on stderr)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "integration/wire_peer.h"

static int fail(const char *step, const wire_peer *p)
{
    fprintf(stderr, "wire_capture: %s (errors %u, last: %s)\n", step, p->errors,
            p->last_error.text);
    return 1;
}

static bool make_dir(const char *dir, const char *sub, char *out, size_t out_size)
{
    snprintf(out, out_size, "%s/%s", dir, sub);
    return mkdir(out, 0755) == 0 || errno == EEXIST;
}

/* Services both until cond holds; false at the deadline. */
#define BOTH_UNTIL(a, b, cond, timeout)                                                       \
    ({                                                                                        \
        double both_deadline_ = wire_peer_now() + (timeout);                                  \
        while (!(cond) && wire_peer_now() < both_deadline_) {                                 \
            wire_peer_service((a), 2);                                                        \
            wire_peer_service((b), 2);                                                        \
        }                                                                                     \
        (bool)(cond);                                                                         \
    })

/* POST /console with one command to the admin endpoint on loopback; true on a 200. */
static bool admin_console(unsigned admin_port, const char *command)
{
    struct sockaddr_in sin = { 0 };
    char req[256], resp[512];
    ssize_t n;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    bool ok;

    if (fd < 0)
        return false;
    sin.sin_family = AF_INET;
    sin.sin_port = htons((uint16_t)admin_port);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    snprintf(req, sizeof req, "POST /console HTTP/1.0\r\nContent-Length: %zu\r\n\r\n%s",
             strlen(command), command);
    ok = connect(fd, (struct sockaddr *)&sin, sizeof sin) == 0 &&
         write(fd, req, strlen(req)) == (ssize_t)strlen(req);
    n = ok ? read(fd, resp, sizeof resp - 1) : -1;
    close(fd);
    if (n <= 0)
        return false;
    resp[n] = '\0';
    return strncmp(resp, "HTTP/1.0 200", 12) == 0 || strncmp(resp, "HTTP/1.1 200", 12) == 0;
}

static bool holds_all(wire_peer *p, const uint64_t *ids, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (wire_peer_find(p, ids[i]) == NULL)
            return false;
    return true;
}

static int capture(unsigned port, const char *dir, unsigned admin_port)
{
    char ada_dir[512], cy_dir[512];
    wire_peer ada, bob, cy;
    uint64_t props[3];

    if (!make_dir(dir, "ada", ada_dir, sizeof ada_dir) ||
        !make_dir(dir, "cy", cy_dir, sizeof cy_dir)) {
        fprintf(stderr, "wire_capture: cannot make folders in %s: %s\n", dir, strerror(errno));
        return 1;
    }
    if (!wire_peer_connect(&ada, port, 10.0))
        return fail("ada cannot connect", &ada);
    ada.capture_dir = ada_dir;
    wire_peer_hello(&ada, 1, MSG_PROTOCOL_VERSION, "ada", "");
    if (!WIRE_PEER_UNTIL(&ada, ada.welcomed && ada.snapshot_complete, 10.0))
        return fail("ada: no Welcome and join snapshot", &ada);

    if (!wire_peer_connect(&bob, port, 10.0))
        return fail("bob cannot connect", &bob);
    wire_peer_hello(&bob, 1, MSG_PROTOCOL_VERSION, "bob", "");
    if (!BOTH_UNTIL(&ada, &bob, bob.welcomed, 10.0))
        return fail("bob: no Welcome", &bob);
    if (!BOTH_UNTIL(&ada, &bob, wire_peer_find(&ada, bob.welcome.pawn_net_id) != NULL, 10.0))
        return fail("ada was not sent bob's pawn (is world.Extent small?)", &ada);

    wire_peer_spawn(&ada, 2, REAP__ACTOR_CLASS__ACTOR_CLASS_PROP, NULL, 3);
    if (!BOTH_UNTIL(&ada, &bob, ada.spawn_acks == 1 && ada.n_ack_ids == 3, 10.0))
        return fail("ada: no SpawnAck of 3", &ada);
    memcpy(props, ada.ack_ids, sizeof props);
    if (!BOTH_UNTIL(&ada, &bob, holds_all(&ada, props, 3), 10.0))
        return fail("ada was not sent her 3 props", &ada);

    if (!BOTH_UNTIL(&ada, &bob, ada.updates_by_count[2] > 0, 10.0))
        return fail("ada got no update message of 2 records", &ada);

    wire_peer_destroy(&ada, 3, props, 1);
    if (!BOTH_UNTIL(&ada, &bob, ada.destroy_acks == 1 && wire_peer_find(&ada, props[0]) == NULL,
                         10.0))
        return fail("ada: her first prop was not destroyed", &ada);
    wire_peer_spawn(&ada, 4, REAP__ACTOR_CLASS__ACTOR_CLASS_PROP, NULL, 0);
    if (!BOTH_UNTIL(&ada, &bob, ada.errors == 1, 10.0))
        return fail("ada: no Error for a spawn of 0", &ada);
    wire_peer_request(&ada, 5, REAP__ENVELOPE__BODY_REPLICATION_CHECK_REQUEST);
    if (!BOTH_UNTIL(&ada, &bob, ada.checks == 1, 10.0))
        return fail("ada: no ReplicationCheck", &ada);

    if (admin_port != 0) {
        if (!admin_console(admin_port, "servertravel Default seamless"))
            return fail("the admin console refused servertravel", &ada);
        if (!BOTH_UNTIL(&ada, &bob, ada.travel_arrives == 1 && ada.snapshot_complete &&
                                        bob.travel_arrives == 1, 10.0))
            return fail("ada: no Travel ARRIVE and new snapshot", &ada);
    }

    if (!wire_peer_connect(&cy, port, 10.0))
        return fail("cy cannot connect", &cy);
    cy.capture_dir = cy_dir;
    wire_peer_hello(&cy, 1, MSG_PROTOCOL_VERSION - 1, "cy", "");
    if (!WIRE_PEER_UNTIL(&cy, cy.disconnected, 10.0) || cy.errors != 1)
        return fail("cy: not refused with one Error", &cy);

    wire_peer_goodbye(&ada);
    wire_peer_goodbye(&bob);
    if (ada.capture_failed || cy.capture_failed) {
        fprintf(stderr, "wire_capture: cannot write packets into %s\n", dir);
        return 1;
    }
    wire_peer_close(&cy);
    wire_peer_close(&bob);
    wire_peer_close(&ada);
    return 0;
}

int main(int argc, char **argv)
{
    char *end;
    unsigned long port;
    int rc;

    unsigned long admin = 0;

    if ((argc != 3 && argc != 4) || (port = strtoul(argv[1], &end, 10)) == 0 || *end != '\0' ||
        port > 65535 ||
        (argc == 4 && ((admin = strtoul(argv[3], &end, 10)) == 0 || *end != '\0' ||
                       admin > 65535))) {
        fprintf(stderr, "usage: wire_capture PORT OUTDIR [ADMIN_PORT]\n");
        return 2;
    }
    if (enet_initialize() != 0) {
        fprintf(stderr, "wire_capture: enet_initialize failed\n");
        return 1;
    }
    rc = capture((unsigned)port, argv[2], (unsigned)admin);
    enet_deinitialize();
    return rc;
}
