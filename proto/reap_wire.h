/*
 * reap_wire.h - the packed actor records of ActorSpawn and ActorUpdate (proto/reap.proto,
 * "Record layouts", is the specification; this is its one implementation in C).
 *
 * The server encodes each actor's state once per change (a "tail": everything of a record but
 * its ids) and copies it into the packet of every connection that sends it; only the id deltas
 * are written per connection. The client and the tests decode with wire_reader. Nothing here
 * allocates: writers and readers work on caller-owned buffers.
 */
#ifndef REAP_WIRE_H
#define REAP_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum {
    WIRE_POS_MAX = 8388607,       /* largest |q| of a pos24 coordinate */
    WIRE_SPAWN_TAIL_MAX = 1 + 5 + 5 + 5 + 9, /* head, archetype, owner and slot varints
                                                  (32-bit), 3 pos24 */
    WIRE_UPDATE_TAIL_MAX = 9,     /* three pos24 */
    WIRE_SPAWN_MAX = 10 + 5 + WIRE_SPAWN_TAIL_MAX, /* one spawn record, ids included */
    WIRE_HEAD_OWNER = 0x10,
    WIRE_HEAD_Z = 0x20,
    WIRE_HEAD_SLOT = 0x40,
    WIRE_CLASS_ARCHETYPE = 7,     /* ActorClass ARCHETYPE: an archetype number follows the head */
};

/* The default step: UE rounds replicated positions to a tenth of a unit. */
#define WIRE_DEFAULT_STEP 0.1f

/* The step a world of the given extent (side of the square centred on the origin) needs:
 * WIRE_DEFAULT_STEP, doubled until half the extent fits in pos24. */
float wire_step_for_extent(float extent);

/* Rounds v to the nearest step, clamped to +-WIRE_POS_MAX. */
int32_t wire_quantize(float v, float step);
float wire_dequantize(int32_t q, float step);

/* splitmix64 of a net id: what ReplicationCheck's digests XOR together (reap.proto). Inline:
 * the server takes it at every spawn and destroy of every connection. */
static inline uint64_t wire_net_id_digest(uint64_t net_id)
{
    uint64_t z = net_id + 0x9E3779B97F4A7C15ull;

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* An actor as the records carry it. */
typedef struct wire_actor {
    uint64_t net_id;              /* spawn records only */
    uint32_t index;               /* spawn records only */
    uint32_t mover_slot;          /* update records; spawn records of moving actors (else 0) */
    uint32_t actor_class;         /* spawn records only */
    uint32_t archetype;           /* spawn records of class WIRE_CLASS_ARCHETYPE: 1 + its index
                                     in Welcome.archetypes; else 0 */
    uint32_t owner_player_id;     /* spawn records only */
    int32_t q[3];                 /* quantized x, y, z */
} wire_actor;

/* Encodes the shared part of a spawn record (head, archetype, owner, mover slot, position) into
 * out (WIRE_SPAWN_TAIL_MAX bytes); returns its length. mover_slot 0: the actor does not move.
 * archetype (>= 1) is written only for actor_class WIRE_CLASS_ARCHETYPE. */
size_t wire_spawn_tail(uint8_t *out, uint32_t actor_class, uint32_t archetype,
                       uint32_t owner_player_id, uint32_t mover_slot, const int32_t q[3]);
/* Encodes the shared part of an update record (the position) into out (WIRE_UPDATE_TAIL_MAX
 * bytes); returns its length. *out_has_z tells the writer to set z_flag. */
size_t wire_update_tail(uint8_t *out, const int32_t q[3], bool *out_has_z);

/* Builds one message's records in buf (borrowed). Appends fail, changing nothing, when the
 * record would not fit. */
typedef struct wire_writer {
    uint8_t *buf;
    size_t len, cap;
    uint32_t count;
    uint64_t prev_net_id;
    uint32_t prev_index;          /* spawn records */
    uint32_t prev_slot;           /* update records */
} wire_writer;

void wire_writer_init(wire_writer *w, uint8_t *buf, size_t cap);
/* Protobuf's base-128 varint of v at p (at most 10 bytes); returns the byte after it. */
static inline uint8_t *wire_varint_at(uint8_t *p, uint64_t v)
{
    for (; v >= 0x80; v >>= 7)
        *p++ = (uint8_t)(v | 0x80);
    *p++ = (uint8_t)v;
    return p;
}
/* The same, returning its length. */
static inline size_t wire_varint(uint8_t *out, uint64_t v)
{
    return (size_t)(wire_varint_at(out, v) - out);
}
/* Protobuf's zigzag code of a signed delta (sint64). */
static inline uint64_t wire_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}
/* A spawn record: net id and index delta-coded against the previous spawn record, then the
 * tail (wire_spawn_tail). tail is read up to WIRE_SPAWN_TAIL_MAX bytes whatever tail_len, as
 * wire_put_update's. Inline: a crowd's joins and leaves write tens of thousands a frame. */
bool wire_put_spawn_slow(wire_writer *w, uint64_t net_id, uint32_t index, const uint8_t *tail,
                         size_t tail_len);
static inline bool wire_put_spawn(wire_writer *w, uint64_t net_id, uint32_t index,
                                  const uint8_t *tail, size_t tail_len)
{
    /* Away from the buffer's end: the varints written in place, the tail copied at its
     * largest size (a fixed-size copy the compiler inlines), and only its length counted. */
    if (tail_len <= WIRE_SPAWN_TAIL_MAX && w->len + WIRE_SPAWN_MAX <= w->cap) {
        uint8_t *p = w->buf + w->len;

        p = wire_varint_at(p, wire_zigzag((int64_t)(net_id - w->prev_net_id)));
        p = wire_varint_at(p, wire_zigzag((int64_t)index - (int64_t)w->prev_index));
        memcpy(p, tail, WIRE_SPAWN_TAIL_MAX);
        w->len = (size_t)(p - w->buf) + tail_len;
        w->count++;
        w->prev_net_id = net_id;
        w->prev_index = index;
        return true;
    }
    return wire_put_spawn_slow(w, net_id, index, tail, tail_len);
}
/* An update record of the moving actor in mover slot `slot`. Refused (changing nothing) also
 * when slot is not greater than the previous update record's: it must start another message.
 * tail is read up to WIRE_UPDATE_TAIL_MAX bytes whatever tail_len (the writer may copy that
 * much and count only tail_len). Inline: a crowd's frame writes a hundred thousand of them. */
bool wire_put_update_slow(wire_writer *w, uint32_t slot, const uint8_t *tail, size_t tail_len,
                          bool has_z);
static inline bool wire_put_update(wire_writer *w, uint32_t slot, const uint8_t *tail,
                                   size_t tail_len, bool has_z)
{
    uint64_t head = ((uint64_t)(slot - w->prev_slot - 1) << 1) | has_z;

    /* The common case, one id byte: the tail is copied at its largest size (a fixed-size copy
     * the compiler inlines), and only its length counts. */
    if (slot > w->prev_slot && head < 0x80 && tail_len <= WIRE_UPDATE_TAIL_MAX &&
        w->len + 1 + WIRE_UPDATE_TAIL_MAX <= w->cap) {
        w->buf[w->len] = (uint8_t)head;
        memcpy(w->buf + w->len + 1, tail, WIRE_UPDATE_TAIL_MAX);
        w->len += 1 + tail_len;
        w->count++;
        w->prev_slot = slot;
        return true;
    }
    return wire_put_update_slow(w, slot, tail, tail_len, has_z);
}

/* The Envelope of an ActorSpawn (spawns) or ActorUpdate carrying frame, count and records,
 * written byte for byte as protobuf encodes it (reap.proto field numbers; zero fields left out,
 * as proto3 does), so the server sends a replication message without building and packing
 * protobuf-c structures. Returns the bytes written, 0 when cap is too small (at most
 * records_len + WIRE_ENVELOPE_MAX are needed). */
enum { WIRE_ENVELOPE_MAX = 3 + 3 + 11 + 6 + 6 }; /* tags and varints around the records */
size_t wire_envelope(uint8_t *out, size_t cap, bool spawns, uint64_t frame, uint32_t count,
                     const uint8_t *records, size_t records_len);

/* Reads one message's records (data borrowed). */
typedef struct wire_reader {
    const uint8_t *p, *end;
    uint32_t left;                /* records still to read */
    uint64_t prev_net_id;
    uint32_t prev_index;
    uint32_t prev_slot;
    bool bad;                     /* a record was malformed */
} wire_reader;

void wire_reader_init(wire_reader *r, const uint8_t *data, size_t len, uint32_t count);
/* The next record into *out. False at the end or on a malformed record; wire_reader_ok then
 * tells which (true: every record read and no byte left over). */
bool wire_next_spawn(wire_reader *r, wire_actor *out);
bool wire_next_update(wire_reader *r, wire_actor *out);
bool wire_reader_ok(const wire_reader *r);

#endif /* REAP_WIRE_H */
