/*
 * wire_test.h - the cmocka side of wire_peer.h, for the integration tests that drive a real
 * server (harness.h) with a hand-driven ENet client (test_wire_contract.c, test_overload.c):
 * ENet started and stopped around the test group, and a peer connected, said Hello to or
 * joined, each within 10 s or failing the test with what it saw. wire_peer.h stays free of
 * cmocka: tests/wire/wire_capture.c shares it. Header-only: each test executable includes it
 * once.
 */
#ifndef REAP_TEST_WIRE_TEST_H
#define REAP_TEST_WIRE_TEST_H

#include "harness.h"

#include "integration/wire_peer.h"

/* cmocka group set-up and teardown: ENet for every test of the executable. */
static inline int wire_test_group_setup(void **state)
{
    (void)state;
    return enet_initialize();
}

static inline int wire_test_group_teardown(void **state)
{
    (void)state;
    enet_deinitialize();
    return 0;
}

/* Connects p to the server's game port (ENet's handshake only: nothing is sent yet). */
static inline void wire_test_connect(wire_peer *p, const harness_server *s)
{
    if (!wire_peer_connect(p, s->port, 10.0))
        fail_msg("could not connect to udp port %u", s->port);
}

/* Connects and says Hello (seq 1, this protocol version); waits for the Welcome or an Error,
 * whichever comes: the test then looks at which. */
static inline void wire_test_hello(wire_peer *p, const harness_server *s, const char *name)
{
    wire_test_connect(p, s);
    assert_true(wire_peer_hello(p, 1, MSG_PROTOCOL_VERSION, name, ""));
    if (!WIRE_PEER_UNTIL(p, p->welcomed || p->errors > 0, 10.0))
        fail_msg("%s: neither a Welcome nor an Error within 10 s", name);
}

/* Connects and joins with Hello seq 1; waits for the Welcome and the join snapshot. */
static inline void wire_test_join(wire_peer *p, const harness_server *s, const char *name)
{
    wire_test_connect(p, s);
    assert_true(wire_peer_hello(p, 1, MSG_PROTOCOL_VERSION, name, ""));
    if (!WIRE_PEER_UNTIL(p, p->welcomed && p->snapshot_complete, 10.0))
        fail_msg("%s: no Welcome and SnapshotComplete within 10 s (%u errors, last: %s)", name,
                 p->errors, p->last_error.text);
}

#endif /* REAP_TEST_WIRE_TEST_H */
