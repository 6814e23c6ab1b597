/*
 * client_ports.h - the UDP ports and source addresses a load generator's visits take. Each
 * visit of a bot has its own socket and port, as a real player has; a port a visit used rests
 * CLIENT_PORT_REST_S before another visit may take it, because the server may still resend to
 * it until it times the old connection out (an abrupt leave), and a late datagram of an earlier
 * visit must never reach a later one.
 *
 * Against a server on loopback each bot can also have an address of its own
 * (client_ports_own_address), as each real player has: the server limits handshakes in flight
 * per source address, and a thousand bots from 127.0.0.1 would look like one huge NAT to it.
 * The rest stays per port number, whatever address the port was bound on: the server sends to
 * an address and a port, so a port number resting on every address is more than enough to keep
 * a late datagram from a later visit (a visit of another bot may even take the same number
 * safely); it costs a few more kernel picks refused, which CLIENT_PORT_TRIES covers when, as
 * here, far fewer ports rest than the kernel has to pick from.
 */
#ifndef REAP_CLIENT_PORTS_H
#define REAP_CLIENT_PORTS_H

#include <stdbool.h>
#include <stdint.h>

#include <enet/enet.h>

enum {
    CLIENT_PORT_REST_S = 15,  /* longer than the server's net.ConnectionTimeout (10 s) */
    CLIENT_PORT_TRIES = 16,   /* kernel-chosen ports tried before a visit gives up */
    /* Bots that can have an address of their own: 127.1.0.1 up to 127.255.255.255. */
    CLIENT_OWN_ADDRESSES = (1 << 24) - (1 << 16) - 1,
};

typedef struct client_ports {
    double *rest_until;       /* owned: per UDP port number, not taken for a visit before then */
} client_ports;

/* False on allocation failure. */
bool client_ports_init(client_ports *p);
void client_ports_free(client_ports *p);
/* A visit is done with port: it rests from now. */
void client_ports_rest(client_ports *p, uint16_t port, double now);
/* Whether host (network order, as ENet keeps it) is in 127.0.0.0/8. */
bool client_ports_is_loopback(enet_uint32 host);
/* Bot number bot's own loopback address, 127.1.0.0 + bot + 1 in network order (bot 0 is
 * 127.1.0.1, bot 256 is 127.1.1.1). bot < CLIENT_OWN_ADDRESSES; on Linux every address of
 * 127/8 is local, elsewhere binding it may fail. */
enet_uint32 client_ports_own_address(uint32_t bot);
/* A one-peer ENet host bound to source (ENET_HOST_ANY: the kernel's choice) on a port of its
 * own that rests no more: the kernel picks the port; resting ones are held open while it picks
 * again, then closed. NULL when none could be had (a source that is not local cannot be
 * bound). The caller owns the host (enet_host_destroy). */
ENetHost *client_ports_open_host(const client_ports *p, enet_uint32 source, double now);
/* The same for a bare datagram socket; its address in *out_bound. ENET_SOCKET_NULL when none
 * could be had; the caller owns the socket. */
ENetSocket client_ports_open_socket(const client_ports *p, enet_uint32 source, double now,
                                    ENetAddress *out_bound);

#endif /* REAP_CLIENT_PORTS_H */
