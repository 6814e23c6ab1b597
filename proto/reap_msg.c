/*
 * reap_msg.c - the envelope codec: size limit, arena-backed unpack, body validation.
 */
#include "reap_msg.h"

#include <stdalign.h>
#include <stddef.h>

static void *msg_arena_alloc_cb(void *data, size_t size)
{
    msg_arena *arena = data;
    size_t align = alignof(max_align_t);
    size_t start = (arena->used + align - 1) & ~(align - 1);

    if (start > arena->cap || size > arena->cap - start) {
        arena->failed = 1;
        return NULL;
    }
    arena->used = start + size;
    return arena->buf + start;
}

static void msg_arena_free_cb(void *data, void *ptr)
{
    (void)data;
    (void)ptr;
}

void msg_arena_init(msg_arena *arena, void *buf, size_t cap)
{
    arena->allocator.alloc = msg_arena_alloc_cb;
    arena->allocator.free = msg_arena_free_cb;
    arena->allocator.allocator_data = arena;
    arena->buf = buf;
    arena->cap = cap;
    arena->used = 0;
    arena->failed = 0;
}

void msg_arena_reset(msg_arena *arena)
{
    arena->used = 0;
    arena->failed = 0;
}

const char *msg_result_str(msg_result r)
{
    switch (r) {
    case MSG_OK: return "ok";
    case MSG_E_OVERSIZE: return "message larger than the size limit";
    case MSG_E_DECODE: return "undecodable message";
    case MSG_E_UNKNOWN_BODY: return "message with a missing or unknown body";
    case MSG_E_NOSPACE: return "encoded message does not fit the buffer";
    }
    return "unknown result";
}

Reap__ErrorCode msg_result_error_code(msg_result r)
{
    switch (r) {
    case MSG_E_OVERSIZE: return REAP__ERROR_CODE__ERROR_CODE_OVERSIZE;
    case MSG_E_UNKNOWN_BODY: return REAP__ERROR_CODE__ERROR_CODE_UNKNOWN_BODY;
    case MSG_E_DECODE:
    case MSG_E_NOSPACE:
    case MSG_OK:
        break;
    }
    return REAP__ERROR_CODE__ERROR_CODE_DECODE;
}

const char *msg_body_name(Reap__Envelope__BodyCase body)
{
    switch (body) {
    case REAP__ENVELOPE__BODY__NOT_SET: return "none";
    case REAP__ENVELOPE__BODY_HELLO: return "hello";
    case REAP__ENVELOPE__BODY_WELCOME: return "welcome";
    case REAP__ENVELOPE__BODY_SPAWN_REQUEST: return "spawn_request";
    case REAP__ENVELOPE__BODY_SPAWN_ACK: return "spawn_ack";
    case REAP__ENVELOPE__BODY_DESTROY_REQUEST: return "destroy_request";
    case REAP__ENVELOPE__BODY_DESTROY_ACK: return "destroy_ack";
    case REAP__ENVELOPE__BODY_ACTOR_SPAWN: return "actor_spawn";
    case REAP__ENVELOPE__BODY_ACTOR_UPDATE: return "actor_update";
    case REAP__ENVELOPE__BODY_ACTOR_DESTROY: return "actor_destroy";
    case REAP__ENVELOPE__BODY_STATS_REQUEST: return "stats_request";
    case REAP__ENVELOPE__BODY_STATS_REPLY: return "stats_reply";
    case REAP__ENVELOPE__BODY_PING: return "ping";
    case REAP__ENVELOPE__BODY_PONG: return "pong";
    case REAP__ENVELOPE__BODY_GOODBYE: return "goodbye";
    case REAP__ENVELOPE__BODY_ERROR: return "error";
    case REAP__ENVELOPE__BODY_MOVE_INPUT: return "move_input";
    case REAP__ENVELOPE__BODY_SNAPSHOT_COMPLETE: return "snapshot_complete";
    case REAP__ENVELOPE__BODY_REPLICATION_CHECK_REQUEST: return "replication_check_request";
    case REAP__ENVELOPE__BODY_REPLICATION_CHECK: return "replication_check";
    case REAP__ENVELOPE__BODY_TRAVEL: return "travel";
    default: break;
    }
    return "unknown";
}

msg_result msg_decode(msg_arena *arena, const uint8_t *data, size_t len, size_t max_bytes,
                      Reap__Envelope **out_env)
{
    Reap__Envelope *env;

    if (max_bytes > 0 && len > max_bytes)
        return MSG_E_OVERSIZE;
    if (data == NULL && len > 0)
        return MSG_E_DECODE;
    env = reap__envelope__unpack(&arena->allocator, len, data);
    if (env == NULL)
        return MSG_E_DECODE;
    /* A body from a newer protocol lands in unknown_fields and leaves body_case unset. */
    if (env->body_case < REAP__ENVELOPE__BODY_HELLO ||
        env->body_case > REAP__ENVELOPE__BODY_TRAVEL)
        return MSG_E_UNKNOWN_BODY;
    *out_env = env;
    return MSG_OK;
}

msg_result msg_encode(const Reap__Envelope *env, uint8_t *buf, size_t cap, size_t *out_len)
{
    size_t need = reap__envelope__get_packed_size(env);

    if (need > cap)
        return MSG_E_NOSPACE;
    *out_len = reap__envelope__pack(env, buf);
    return MSG_OK;
}
