/*
 * client_ports.c - visits' ports, each resting after its visit, and bots' own loopback
 * addresses (see client_ports.h).
 */
#include "client_ports.h"

#include <stdlib.h>

#include "reap_msg.h"

bool client_ports_init(client_ports *p)
{
    p->rest_until = calloc(65536, sizeof *p->rest_until);
    return p->rest_until != NULL;
}

void client_ports_free(client_ports *p)
{
    free(p->rest_until);
    p->rest_until = NULL;
}

void client_ports_rest(client_ports *p, uint16_t port, double now)
{
    p->rest_until[port] = now + CLIENT_PORT_REST_S;
}

bool client_ports_is_loopback(enet_uint32 host)
{
    return ENET_NET_TO_HOST_32(host) >> 24 == 127;
}

enet_uint32 client_ports_own_address(uint32_t bot)
{
    return ENET_HOST_TO_NET_32(0x7F010000u + bot + 1);
}

ENetHost *client_ports_open_host(const client_ports *p, enet_uint32 source, double now)
{
    ENetAddress any = { .host = source, .port = 0 };
    ENetHost *rejects[CLIENT_PORT_TRIES], *h = NULL;
    uint32_t n = 0;

    while (n < CLIENT_PORT_TRIES) {
        h = enet_host_create(&any, 1, MSG_CHANNEL_COUNT, 0, 0);
        if (h == NULL || h->address.port == 0 || p->rest_until[h->address.port] <= now)
            break;
        rejects[n++] = h;
        h = NULL;
    }
    while (n > 0)
        enet_host_destroy(rejects[--n]);
    return h;
}

ENetSocket client_ports_open_socket(const client_ports *p, enet_uint32 source, double now,
                                    ENetAddress *out_bound)
{
    ENetAddress any = { .host = source, .port = 0 };
    ENetSocket rejects[CLIENT_PORT_TRIES], s = ENET_SOCKET_NULL;
    ENetAddress bound;
    uint32_t n = 0;

    while (n < CLIENT_PORT_TRIES) {
        s = enet_socket_create(ENET_SOCKET_TYPE_DATAGRAM);
        if (s == ENET_SOCKET_NULL)
            break;
        if (enet_socket_bind(s, &any) != 0 || enet_socket_get_address(s, &bound) != 0) {
            enet_socket_destroy(s);
            s = ENET_SOCKET_NULL;
            break;
        }
        if (p->rest_until[bound.port] <= now)
            break;
        rejects[n++] = s;
        s = ENET_SOCKET_NULL;
    }
    while (n > 0)
        enet_socket_destroy(rejects[--n]);
    if (s != ENET_SOCKET_NULL)
        *out_bound = bound;
    return s;
}
