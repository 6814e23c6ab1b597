/*
 * net_send.h - the bottom of the net driver's send path (Quake III's sv_net_chan.c).
 *
 * The driver, the datagram filter, the handlers and replication call down into these; they
 * call nothing above them (ENet, the codec, the policy's counters, the log only). Like the
 * rest of the driver's files, for the driver's own files only.
 */
#ifndef REAP_NET_SEND_H
#define REAP_NET_SEND_H

#include <stddef.h>
#include <stdint.h>

#include "net_internal.h"

/* The driver's clock: seconds since env.start_ns (the engine's time). */
static inline double net_now(const net_driver *nd)
{
    return (double)(uv_hrtime() - nd->env.start_ns) / 1e9;
}

/* The policy's limits as the cvars stand now. */
net_policy_limits net_limits(const net_driver *nd);

/* Encodes env once and queues it to one peer; counts bytes and packets. Returns the encoded
 * size, or 0 if nothing was sent. env is borrowed; the packet is ENet's once queued. */
size_t net_send(net_driver *nd, net_connection *conn, uint8_t channel, const Reap__Envelope *env);
/* Queues a packet the caller built (NULL: nothing; a refused one is destroyed) and counts it, as
 * net_send does; its size, or 0. */
size_t net_send_packet(net_driver *nd, net_connection *conn, uint8_t channel, ENetPacket *packet);
/* An Error the connection survives (Error.disconnect false). */
void net_send_error(net_driver *nd, net_connection *conn, Reap__ErrorCode code, const char *text,
                    uint32_t seq);
/* Answers bad input: an error to this peer (the connection stays), one count, and on the
 * net.MaxBadMessages-th a kick after it. */
void net_reject(net_driver *nd, net_connection *conn, Reap__ErrorCode code, uint32_t seq,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Sends ERROR_CODE_KICKED with why (Error.disconnect set), logs it once, counts it under
 * reason, and closes the
 * connection once the error is delivered. Abuse (bad messages, a flood) also puts the
 * address in the cooldown (its CONNECTs are refused for NET_COOLDOWN_S; host and port, not
 * the host alone: players behind one NAT are not punished for one of them); silence does not
 * (load-test bots share one address and port). */
void net_kick(net_driver *nd, net_connection *conn, net_kick_reason reason, const char *why,
              uint32_t seq);
/* Sends the Error (Error.disconnect set) and closes the connection once it is delivered: for a
 * client that cannot go on (wrong protocol, bad hello, no room). Not a kick: nothing is
 * counted. Nothing happens to a connection already closing (it was told). */
void net_close_with_error(net_driver *nd, net_connection *conn, Reap__ErrorCode code,
                          const char *text, uint32_t seq);
/* The same with Error.retry_after_ms: when the client may try again (ERROR_CODE_BUSY). */
void net_close_with_retry(net_driver *nd, net_connection *conn, Reap__ErrorCode code,
                          const char *text, uint32_t seq, uint32_t retry_after_ms);

#endif /* REAP_NET_SEND_H */
