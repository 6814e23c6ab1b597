/*
 * reap_wire.c - packed actor records (reap_wire.h; the layout is specified in reap.proto).
 */
#include "reap_wire.h"

#include <math.h>
#include <string.h>

float wire_step_for_extent(float extent)
{
    float step = WIRE_DEFAULT_STEP;

    while ((double)extent * 0.5 / (double)step > (double)WIRE_POS_MAX)
        step *= 2.0f;
    return step;
}

int32_t wire_quantize(float v, float step)
{
    double q = floor((double)v / (double)step + 0.5);

    if (!(q < (double)WIRE_POS_MAX)) /* also NaN */
        return q != q ? 0 : WIRE_POS_MAX;
    if (q < -(double)WIRE_POS_MAX)
        return -WIRE_POS_MAX;
    return (int32_t)q;
}

float wire_dequantize(int32_t q, float step)
{
    return (float)((double)q * (double)step);
}

static int64_t wire_unzigzag(uint64_t v)
{
    return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static void wire_pos24(uint8_t *out, int32_t q)
{
    uint32_t u = (uint32_t)q;

    out[0] = (uint8_t)u;
    out[1] = (uint8_t)(u >> 8);
    out[2] = (uint8_t)(u >> 16);
}

size_t wire_spawn_tail(uint8_t *out, uint32_t actor_class, uint32_t archetype,
                       uint32_t owner_player_id, uint32_t mover_slot, const int32_t q[3])
{
    size_t n = 1;

    out[0] = (uint8_t)(actor_class & 0x0f);
    if (actor_class == WIRE_CLASS_ARCHETYPE)
        n += wire_varint(out + n, archetype);
    if (owner_player_id != 0) {
        out[0] |= WIRE_HEAD_OWNER;
        n += wire_varint(out + n, owner_player_id);
    }
    if (mover_slot != 0) {
        out[0] |= WIRE_HEAD_SLOT;
        n += wire_varint(out + n, mover_slot);
    }
    wire_pos24(out + n, q[0]);
    wire_pos24(out + n + 3, q[1]);
    n += 6;
    if (q[2] != 0) {
        out[0] |= WIRE_HEAD_Z;
        wire_pos24(out + n, q[2]);
        n += 3;
    }
    return n;
}

size_t wire_update_tail(uint8_t *out, const int32_t q[3], bool *out_has_z)
{
    wire_pos24(out, q[0]);
    wire_pos24(out + 3, q[1]);
    *out_has_z = q[2] != 0;
    if (!*out_has_z)
        return 6;
    wire_pos24(out + 6, q[2]);
    return 9;
}

static size_t wire_varint_len(uint64_t v)
{
    size_t n = 1;

    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

size_t wire_envelope(uint8_t *out, size_t cap, bool spawns, uint64_t frame, uint32_t count,
                     const uint8_t *records, size_t records_len)
{
    /* ActorSpawn: frame = 2, count = 3, records = 4; ActorUpdate: frame = 1, count = 3,
     * records = 4; in Envelope, actor_spawn = 16 and actor_update = 17. */
    uint8_t frame_tag = spawns ? 0x10 : 0x08, body_field = spawns ? 16 : 17;
    size_t inner = 0, n = 0;

    if (frame != 0)
        inner += 1 + wire_varint_len(frame);
    if (count != 0)
        inner += 1 + wire_varint_len(count);
    if (records_len != 0)
        inner += 1 + wire_varint_len(records_len) + records_len;
    if (wire_varint_len(((uint64_t)body_field << 3) | 2) + wire_varint_len(inner) + inner > cap)
        return 0;
    n += wire_varint(out + n, ((uint64_t)body_field << 3) | 2);
    n += wire_varint(out + n, inner);
    if (frame != 0) {
        out[n++] = frame_tag;
        n += wire_varint(out + n, frame);
    }
    if (count != 0) {
        out[n++] = 0x18;
        n += wire_varint(out + n, count);
    }
    if (records_len != 0) {
        out[n++] = 0x22;
        n += wire_varint(out + n, records_len);
        memcpy(out + n, records, records_len);
        n += records_len;
    }
    return n;
}

void wire_writer_init(wire_writer *w, uint8_t *buf, size_t cap)
{
    memset(w, 0, sizeof *w);
    w->buf = buf;
    w->cap = cap;
}

/* What wire_put_spawn's inline path leaves: the buffer's last bytes (the tail copied at its
 * length) and the refusals. */
bool wire_put_spawn_slow(wire_writer *w, uint64_t net_id, uint32_t index, const uint8_t *tail,
                         size_t tail_len)
{
    uint8_t ids[20];
    size_t n = wire_varint(ids, wire_zigzag((int64_t)(net_id - w->prev_net_id)));

    n += wire_varint(ids + n, wire_zigzag((int64_t)index - (int64_t)w->prev_index));
    if (w->len + n + tail_len > w->cap)
        return false;
    memcpy(w->buf + w->len, ids, n);
    memcpy(w->buf + w->len + n, tail, tail_len);
    w->len += n + tail_len;
    w->count++;
    w->prev_net_id = net_id;
    w->prev_index = index;
    return true;
}

/* What wire_put_update's inline path leaves: a slot gap of 64 or more (a longer id varint),
 * the buffer's last bytes (the tail copied at its length), and the refusals. */
bool wire_put_update_slow(wire_writer *w, uint32_t slot, const uint8_t *tail, size_t tail_len,
                          bool has_z)
{
    uint8_t ids[10];
    uint64_t head;
    size_t n;

    if (slot <= w->prev_slot || tail_len > WIRE_UPDATE_TAIL_MAX)
        return false; /* out of order: it belongs in the next message */
    head = ((uint64_t)(slot - w->prev_slot - 1) << 1) | has_z;
    n = wire_varint(ids, head);
    if (w->len + n + tail_len > w->cap)
        return false;
    memcpy(w->buf + w->len, ids, n);
    memcpy(w->buf + w->len + n, tail, tail_len);
    w->len += n + tail_len;
    w->count++;
    w->prev_slot = slot;
    return true;
}

void wire_reader_init(wire_reader *r, const uint8_t *data, size_t len, uint32_t count)
{
    memset(r, 0, sizeof *r);
    r->p = data;
    r->end = data + len;
    r->left = count;
}

static bool wire_read_varint(wire_reader *r, uint64_t *out)
{
    uint64_t v = 0;

    for (unsigned shift = 0; shift < 64; shift += 7) {
        uint8_t b;

        if (r->p >= r->end)
            return false;
        b = *r->p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if ((b & 0x80) == 0) {
            *out = v;
            return true;
        }
    }
    return false;
}

static bool wire_read_pos24(wire_reader *r, int32_t *out)
{
    uint32_t u;

    if (r->end - r->p < 3)
        return false;
    u = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16;
    r->p += 3;
    *out = (int32_t)(u ^ 0x800000u) - 0x800000; /* sign-extend 24 bits */
    return true;
}

static bool wire_fail(wire_reader *r)
{
    r->bad = true;
    r->left = 0;
    return false;
}

bool wire_next_spawn(wire_reader *r, wire_actor *out)
{
    uint64_t dnet, dindex, owner = 0, slot = 0, archetype = 0;
    int64_t index;
    uint8_t head;

    if (r->left == 0)
        return false;
    if (!wire_read_varint(r, &dnet) || !wire_read_varint(r, &dindex) || r->p >= r->end)
        return wire_fail(r);
    head = *r->p++;
    if ((head & 0x80) != 0 || (head & 0x0f) == 0 || (head & 0x0f) > WIRE_CLASS_ARCHETYPE)
        return wire_fail(r);
    if ((head & 0x0f) == WIRE_CLASS_ARCHETYPE &&
        (!wire_read_varint(r, &archetype) || archetype == 0 || archetype > UINT32_MAX))
        return wire_fail(r);
    if ((head & WIRE_HEAD_OWNER) && (!wire_read_varint(r, &owner) || owner > UINT32_MAX))
        return wire_fail(r);
    if ((head & WIRE_HEAD_SLOT) &&
        (!wire_read_varint(r, &slot) || slot == 0 || slot > UINT32_MAX))
        return wire_fail(r);
    memset(out, 0, sizeof *out);
    if (!wire_read_pos24(r, &out->q[0]) || !wire_read_pos24(r, &out->q[1]) ||
        ((head & WIRE_HEAD_Z) && !wire_read_pos24(r, &out->q[2])))
        return wire_fail(r);
    index = (int64_t)r->prev_index + wire_unzigzag(dindex);
    if (index < 1 || index > UINT32_MAX)
        return wire_fail(r);
    out->net_id = r->prev_net_id + (uint64_t)wire_unzigzag(dnet);
    out->index = (uint32_t)index;
    out->actor_class = head & 0x0f;
    out->archetype = (uint32_t)archetype;
    out->owner_player_id = (uint32_t)owner;
    out->mover_slot = (uint32_t)slot;
    r->prev_net_id = out->net_id;
    r->prev_index = out->index;
    r->left--;
    return true;
}

bool wire_next_update(wire_reader *r, wire_actor *out)
{
    uint64_t head, slot;

    if (r->left == 0)
        return false;
    if (!wire_read_varint(r, &head))
        return wire_fail(r);
    slot = (uint64_t)r->prev_slot + (head >> 1) + 1;
    if (slot > UINT32_MAX)
        return wire_fail(r);
    memset(out, 0, sizeof *out);
    if (!wire_read_pos24(r, &out->q[0]) || !wire_read_pos24(r, &out->q[1]) ||
        ((head & 1) && !wire_read_pos24(r, &out->q[2])))
        return wire_fail(r);
    out->mover_slot = (uint32_t)slot;
    r->prev_slot = out->mover_slot;
    r->left--;
    return true;
}

bool wire_reader_ok(const wire_reader *r)
{
    return !r->bad && r->left == 0 && r->p == r->end;
}
