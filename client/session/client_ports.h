/*
 * client_ports.h - the UDP ports a load generator's visits take. Each visit of a bot has its
 * own socket and port, as a real player has; a port a visit used rests CLIENT_PORT_REST_S
 * before another visit may take it, because the server may still resend to it until it times
 * the old connection out (an abrupt leave), and a late datagram of an earlier visit must never
 * reach a later one.
 */
#ifndef REAP_CLIENT_PORTS_H
#define REAP_CLIENT_PORTS_H

#include <stdbool.h>
#include <stdint.h>

#include <enet/enet.h>

enum {
    CLIENT_PORT_REST_S = 15,  /* longer than the server's net.ConnectionTimeout (10 s) */
    CLIENT_PORT_TRIES = 16,   /* kernel-chosen ports tried before a visit gives up */
};

typedef struct client_ports {
    double *rest_until;       /* owned: per UDP port, not taken for a visit before then */
} client_ports;

/* False on allocation failure. */
bool client_ports_init(client_ports *p);
void client_ports_free(client_ports *p);
/* A visit is done with port: it rests from now. */
void client_ports_rest(client_ports *p, uint16_t port, double now);
/* A one-peer ENet host on a port of its own that rests no more: the kernel picks the port;
 * resting ones are held open while it picks again, then closed. NULL when none could be had.
 * The caller owns the host (enet_host_destroy). */
ENetHost *client_ports_open_host(const client_ports *p, double now);
/* The same for a bare datagram socket bound to any address; its address in *out_bound.
 * ENET_SOCKET_NULL when none could be had; the caller owns the socket. */
ENetSocket client_ports_open_socket(const client_ports *p, double now, ENetAddress *out_bound);

#endif /* REAP_CLIENT_PORTS_H */
