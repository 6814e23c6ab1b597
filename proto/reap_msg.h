/*
 * reap_msg.h - encoding and decoding of reap's wire envelope (proto/reap.proto).
 *
 * A thin layer over the protoc-c generated code shared by the server and the client. Decoding
 * never calls malloc: a message is unpacked into a caller-owned arena that is reset before the
 * next packet, so a packet handler allocates nothing per message. A decoded envelope is plain
 * data; copy what you need out of it before resetting the arena.
 */
#ifndef REAP_MSG_H
#define REAP_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "reap.pb-c.h"

/* ENet channels (reap.proto says what each carries). */
enum {
    MSG_CHANNEL_CONTROL = 0,     /* reliable: hello, requests, replies, errors, goodbye */
    MSG_CHANNEL_REPLICATION = 1, /* reliable: actor spawns and destroys */
    MSG_CHANNEL_UPDATES = 2,     /* unreliable sequenced: actor movement */
    MSG_CHANNEL_COUNT = 3,
};

#define MSG_PROTOCOL_VERSION ((uint32_t)REAP__PROTOCOL_VERSION__PROTOCOL_VERSION_CURRENT)

typedef enum msg_result {
    MSG_OK = 0,
    MSG_E_OVERSIZE = -1,     /* longer than the size limit; not decoded */
    MSG_E_DECODE = -2,       /* not a valid Envelope (or it would not fit the arena) */
    MSG_E_UNKNOWN_BODY = -3, /* valid, but with no body or a body this build does not know */
    MSG_E_NOSPACE = -4,      /* encode: the output buffer is too small */
} msg_result;

const char *msg_result_str(msg_result r);
/* The error code a peer is sent for a decode failure. */
Reap__ErrorCode msg_result_error_code(msg_result r);
/* A short, static name of a body kind ("hello", "spawn_request", ...); "none" or "unknown". */
const char *msg_body_name(Reap__Envelope__BodyCase body);

/* A bump allocator that backs decoded messages. Memory is borrowed from the caller. */
typedef struct msg_arena {
    ProtobufCAllocator allocator; /* hands out memory from buf; free is a no-op */
    uint8_t *buf;
    size_t cap;
    size_t used;
    int failed;                   /* an allocation did not fit since the last reset */
} msg_arena;

/* buf (cap bytes) is borrowed for the arena's life and must be suitably aligned for any type
 * (malloc'ed memory or a max_align_t-aligned array). */
void msg_arena_init(msg_arena *arena, void *buf, size_t cap);
/* Forgets every message decoded into the arena. */
void msg_arena_reset(msg_arena *arena);

/* Decodes one packet. On MSG_OK *out_env borrows arena memory until msg_arena_reset.
 * max_bytes: packets longer than this are refused without decoding (0 = no limit). */
msg_result msg_decode(msg_arena *arena, const uint8_t *data, size_t len, size_t max_bytes,
                      Reap__Envelope **out_env);

/* Packs env into buf. On MSG_OK *out_len is the encoded length. */
msg_result msg_encode(const Reap__Envelope *env, uint8_t *buf, size_t cap, size_t *out_len);

#endif /* REAP_MSG_H */
