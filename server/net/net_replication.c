/*
 * net_replication.c - what each connection is sent, every frame (UE's NetDriver relevancy and
 * saturation, ReplicationGraph's grid and distance-based frequency, Iris's replication index
 * and serialize-once).
 *
 * Assumes: called once per frame, per world: net_repl_begin_world, then net_repl_connection
 * for each joined connection of the world, all before the world's outbox is reset (it names
 * this frame's spawned, teleported and destroyed actors).
 * Guarantees: a connection's view (net_view.h) has an actor pending or open exactly when it is
 * relevant to it; an open actor that stops being relevant closes and owes the client a destroy,
 * sent when ENet's window has room; pending spawns and moved actors go out by accumulated
 * priority (NetPriority x frames waited / the actor's update period, so nothing starves) until
 * net.MaxClientRate's per-frame allowance is spent; reliable bytes never exceed what the peer's
 * window can send at the next flush (net_internal.h says why); a peer silent for a second is
 * sent nothing new. Each actor's records are encoded once per change, in the world's index
 * (net_index.h), and copied into every packet that carries them: per connection only the ids
 * are written.
 *
 * Relevant: the player's own actors (controller, pawn, what it spawned), always-relevant
 * actors (the level fixtures), and actors within net.CullDistance of the player's pawn.
 * The spatial part is re-evaluated when the pawn has moved an eighth of the cull distance or
 * a second has passed (UE likewise keeps an actor relevant for a while after it stops being so:
 * its RelevantTimeout is 5 s): moving actors afresh, static ones only in the ring the pawn's move can have
 * changed (repl_relevancy_pass). Actors spawned or teleported in between are tested as they
 * appear.
 *
 * Update rates fall with distance (ReplicationGraph's DynamicSpatialFrequency): a moving actor
 * is a candidate every frame near the pawn and down to every 6th frame far from it; the
 * player's own movers every 3rd frame (repl_band). Under load admission control doubles the
 * far bands' periods, farthest first (net_repl_band_periods). A mover's band is decided when it is
 * touched: at each relevancy pass and when it appears, so the frame's walk over the movers
 * reads one byte for it instead of measuring a distance.
 *
 * A frame serves its connections within net.ReplicationFrameBudget (net_repl_budget_defers,
 * the driver's turn order): the ones left once it is spent only follow the outbox and bank
 * their rate, and are served first the next frame.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "net_internal.h"
#include "net_send.h"

enum {
    REPL_DESTROY_IDS = 200,  /* net ids per ActorDestroy (at most 10 bytes each) */
    REPL_BUCKETS = 256,
    REPL_MSG_OVERHEAD = 16,  /* an ActorSpawn/ActorUpdate envelope around its records, at most */
    REPL_SPAWN_BOOST = 2,    /* a pending spawn outranks an update of the same priority */
    REPL_SNAPSHOT_BOOST = 8, /* ... by this much while the join snapshot streams */
    REPL_MIN_SPAWN_BYTES = 8, /* the smallest spawn record with its ids, about */
    REPL_RELEVANCY_PERIOD = 1, /* seconds between two relevancy passes at most */
    REPL_BATCH_PERIOD = 3,     /* frames between two spawn and destroy messages, past the
                                  join snapshot (repl_batch_frame) */
    REPL_BATCH_BACKLOG = 96,   /* pending spawns or owed destroys that go at once regardless */
    REPL_PENDING_TAIL = 32,    /* newest pending spawns looked at for the player's own */
};

typedef struct repl_frame {
    net_driver *nd;
    net_connection *c;
    net_view *v;
    net_index *ix;
    world *w;
    gc_heap *heap;
    uint32_t frame;
    float cull;
    float px, py;            /* the pawn now (valid when has_pawn) */
    bool has_pawn;
    bool batch;              /* spawns and destroys go this frame (repl_batch_frame) */
    double allowance_hint;   /* the budget this frame, for the pending window */
} repl_frame;

net_index *net_repl_index(net_driver *nd, const world *w)
{
    return &nd->indexes[w->index];
}

/* Always relevant to this connection, wherever it is: the fixtures and the player's own. */
static bool repl_always(const repl_frame *f, const actor *a)
{
    return a->always_relevant || a->owner_player_id == f->c->player_id;
}

/* Relevance of an actor at (x, y) seen from (px, py). */
static bool repl_is_relevant(const repl_frame *f, const actor *a, float x, float y, float px,
                             float py)
{
    float dx = x - px, dy = y - py;

    if (!a->replicates)
        return false;
    if (repl_always(f, a))
        return true;
    if (a->kind == ACTOR_KIND_PLAYER_CONTROLLER || !f->has_pawn)
        return false; /* a controller is only relevant to its owner */
    return dx * dx + dy * dy <= f->cull * f->cull;
}

const uint8_t net_band_period[NET_BANDS] = { 1, 2, 3, 6 };
const uint8_t net_band_divisor[NET_BANDS] = { 8, 4, 2, 1 };

/* Under load admission control stretches the far bands first (net_admission.h): their periods
 * double (12, 6, 4 at most), the nearest band's never. */
void net_repl_band_periods(net_driver *nd)
{
    for (uint32_t k = 0; k < NET_BANDS; k++)
        nd->band_period[k] =
            (uint8_t)net_admission_band_period(&nd->admission, k, net_band_period[k]);
}

/* Frames between two updates of a moving actor d2 (squared) from the pawn: every frame within
 * an eighth of the cull distance, every 2nd within a quarter, every 3rd within half, every 6th
 * beyond (30, 15, 10 and 5 Hz at 30 frames a second). The player's own movers every 3rd frame:
 * its client steers them, and what it needs are corrections (UE does not replicate an
 * autonomous proxy's movement to its owner at all); a lone player's connection then carries a
 * datagram every third frame instead of every frame. Decided when the mover is touched (at most
 * a second or an eighth of the cull distance of the pawn's travel old), which is as close as
 * the bands are wide. */
static uint8_t repl_band(const repl_frame *f, uint32_t owner_player_id, float d2)
{
    /* The squares of net_band_divisor's distances: (cull / 8)^2 x 1, 4, 16. */
    float e2 = f->cull * f->cull * (1.0f / 64.0f);

    if (owner_player_id == f->c->player_id)
        return NET_OWN_UPDATE_PERIOD;
    if (!f->has_pawn)
        return 1;
    /* Counted, not branched on: in a crowd the band is a coin toss for the branch predictor. */
    return f->nd->band_period[(d2 >= e2) + (d2 >= 4.0f * e2) + (d2 >= 16.0f * e2)];
}

/* Squared distance of (x, y) from the pawn (0 without one). */
static float repl_d2(const repl_frame *f, float x, float y)
{
    float dx = x - f->px, dy = y - f->py;

    return f->has_pawn ? dx * dx + dy * dy : 0.0f;
}

/* Marks a as relevant now (giving it a replication index if it has none); a moving one gets
 * the update band of its squared distance d2 from the pawn. */
static void repl_touch(const repl_frame *f, actor *a, float d2)
{
    uint32_t had = a->net_index, idx = net_index_acquire(f->ix, f->heap, a, f->frame);
    uint32_t slot;

    if (idx != had)
        world_grid_retag(&f->w->grid, a);

    if (idx == 0 || !net_view_touch(f->v, f->ix, idx, f->frame)) {
        log_warn("net: out of memory replicating an actor to player %u", f->c->player_id);
        return;
    }
    if ((slot = f->ix->v[idx].mover_slot) != 0)
        f->v->mperiod[slot] = repl_band(f, a->owner_player_id, d2);
}

static void repl_close(const repl_frame *f, const actor *a)
{
    uint32_t idx = net_index_of(f->ix, a);

    if (idx != 0)
        net_view_close(f->v, f->ix, idx);
}

typedef struct repl_pass {
    const repl_frame *f;
    float inner2, outer2;    /* static actors between these squared distances may change */
    bool full;               /* every static actor in range is touched */
} repl_pass;

static void repl_grid_visit_cb(const world_grid_entry *e, float d2, void *userdata)
{
    repl_pass *pass = userdata;
    const repl_frame *f = pass->f;

    if (e->moves && !pass->full && e->tag != 0 && e->tag < f->v->cap &&
        d2 <= f->cull * f->cull) {
        /* A mover this connection has already (the crowd's common case): marked seen from the
         * entry's copy of its index, without reading the actor. While an actor lives its index
         * is its own, and a view holding the index holds this actor. */
        uint8_t *st = &f->v->st[e->tag];
        uint8_t state = *st & NET_VIEW_STATE;
        if (state == NET_VIEW_PENDING || state == NET_VIEW_OPEN) {
            uint32_t slot = f->ix->v[e->tag].mover_slot;
            *st |= NET_VIEW_SEEN;
            if (slot != 0)
                f->v->mperiod[slot] = repl_band(f, f->ix->hot[e->tag].owner_player_id, d2);
            return;
        }
    }
    if (!e->a->replicates)
        return;
    if (e->moves || pass->full) {
        if (d2 <= f->cull * f->cull)
            repl_touch(f, e->a, d2);
        return;
    }
    /* A static actor well inside stayed relevant and one well outside stayed irrelevant
     * (the pawn moved at most m since the last pass): only the ring between can change. */
    if (d2 < pass->inner2 || d2 > pass->outer2 || repl_always(f, e->a))
        return;
    if (d2 <= f->cull * f->cull)
        repl_touch(f, e->a, d2);
    else
        repl_close(f, e->a);
}

/* A relevancy pass. Moving actors are decided afresh (the ones the pass does not touch close);
 * static actors hold this invariant between passes: one is relevant exactly when it is always
 * relevant or within the cull distance of the pawn's position at the last pass. A full pass
 * (the first, or a new cull distance) decides every actor afresh. */
static void repl_relevancy_pass(repl_frame *f)
{
    net_connection *c = f->c;
    player_controller *pc = c->controller;
    pawn *p = pc->pawn;
    repl_pass pass = { .f = f, .full = c->epoch == 0 || c->relevancy_cull != f->cull };

    c->epoch++;
    net_view_begin_pass(f->v, pass.full);
    for (uint32_t l = 0; l < f->w->levels.count; l++) {
        level *lvl = f->w->levels.data[l];
        for (uint32_t i = 0; lvl != NULL && i < WORLD_FIRST_DYNAMIC_SLOT && i < lvl->actors.count;
             i++) {
            actor *a = lvl->actors.data[i];
            if (a != NULL && a->replicates && a->always_relevant)
                repl_touch(f, a, repl_d2(f, a->pos[0], a->pos[1]));
        }
    }
    repl_touch(f, &pc->base, 0.0f);
    for (uint32_t i = 0; i < pc->owned.count; i++)
        if (pc->owned.data[i] != NULL)
            repl_touch(f, pc->owned.data[i], 0.0f); /* its own: the band does not look */
    if (p != NULL) {
        float dx = p->base.pos[0] - c->relevancy_pos[0];
        float dy = p->base.pos[1] - c->relevancy_pos[1];
        float m = pass.full ? 0.0f : sqrtf(dx * dx + dy * dy);
        float inner = f->cull - m;

        repl_touch(f, &p->base, 0.0f);
        pass.inner2 = inner > 0 ? inner * inner : 0.0f;
        pass.outer2 = (f->cull + m) * (f->cull + m);
        /* Static actors well inside the ring's inner circle are not even read. */
        world_grid_query_ring(&f->w->grid, p->base.pos[0], p->base.pos[1], f->cull + m,
                              pass.full ? -1.0f : inner, repl_grid_visit_cb, &pass);
        c->relevancy_pos[0] = p->base.pos[0];
        c->relevancy_pos[1] = p->base.pos[1];
    }
    c->relevancy_frame = f->frame;
    c->relevancy_cull = f->cull;
    net_view_end_pass(f->v, f->ix);
}

static bool repl_relevancy_due(const repl_frame *f, double period_frames)
{
    const net_connection *c = f->c;
    float step = f->cull / 8.0f, dx, dy;

    /* Connections that joined in the same frame would pass in the same frames forever:
     * their periodic passes are spread over eight frames by player id. */
    if (c->epoch == 0 || c->relevancy_cull != f->cull ||
        (double)(f->frame - c->relevancy_frame) >= period_frames - (double)(c->player_id % 8))
        return true;
    if (!f->has_pawn)
        return false;
    dx = f->px - c->relevancy_pos[0];
    dy = f->py - c->relevancy_pos[1];
    return dx * dx + dy * dy >= step * step;
}

/* A joiner's first pass (repl_relevancy_pass, full) visits every actor in range: about a
 * millisecond in a crowd of a thousand players with ten props each, so a burst of joiners in
 * one frame is a long frame for everyone (measured: 17 of them, 21 ms). The frame's first
 * passes stop at net.FullPassBudgetMs; the others wait for the next frame, none longer than
 * NET_FULL_PASS_WAIT frames, and the first of a frame always runs. A joiner has nothing to
 * be sent before it, so waiting costs it only time. (Other full passes, a silent connection's
 * return or a new cull distance, run at once: that connection's view holds what went while
 * it was silent, and sending from it would spawn ghosts.) */
static bool repl_first_pass_may_run(repl_frame *f)
{
    net_driver *nd = f->nd;
    net_connection *c = f->c;
    double budget_ms = cvar_get(nd->env.cvars, CVAR_NET_FULL_PASS_BUDGET_MS);

    if (c->full_pass_due == 0)
        c->full_pass_due = f->frame + 1; /* + 1: 0 is "not waiting" */
    if (budget_ms <= 0 || (double)nd->full_pass_ns < budget_ms * 1e6 ||
        f->frame + 1 - c->full_pass_due >= NET_FULL_PASS_WAIT)
        return true;
    nd->counters.full_passes_deferred++;
    return false;
}

/* The relevancy pass, a joiner's first within net.FullPassBudgetMs. */
static void repl_relevancy_update(repl_frame *f, double period_frames)
{
    net_connection *c = f->c;
    uint64_t t0;

    if (!repl_relevancy_due(f, period_frames))
        return;
    if (c->epoch != 0) {
        repl_relevancy_pass(f);
        return;
    }
    if (!repl_first_pass_may_run(f))
        return;
    t0 = uv_hrtime();
    repl_relevancy_pass(f);
    f->nd->full_pass_ns += uv_hrtime() - t0;
    c->full_pass_due = 0;
}

void net_repl_begin_world(net_driver *nd, world *w)
{
    gc_heap *heap = nd->env.heap;
    net_index *ix = net_repl_index(nd, w);

    net_index_begin_frame(ix, heap, w, (uint32_t)*nd->env.frame);
    nd->fresh_count = 0;
    if (nd->full_pass_frame != *nd->env.frame) { /* the budget is the frame's, for all worlds */
        nd->full_pass_frame = *nd->env.frame;
        nd->full_pass_ns = 0;
    }
    if (!VEC_RESERVE(nd->fresh, nd->fresh_cap, w->spawned_count))
        return;
    for (uint32_t i = 0; i < w->spawned_count; i++) {
        actor *a = gc_weak_get(heap, w->spawned[i].actor);
        if (a != NULL)
            nd->fresh[nd->fresh_count++] = (net_fresh){ a, a->pos[0], a->pos[1] };
    }
}

/* This frame's spawns, teleports and destroys, between relevancy passes. A static actor is
 * judged from where the pawn was at the last pass (the invariant above), a moving one from
 * where it is now. */
static void repl_outbox(repl_frame *f)
{
    const net_driver *nd = f->nd;
    const net_connection *c = f->c;

    for (uint32_t i = 0; i < f->ix->gone_count; i++)
        net_view_close(f->v, f->ix, f->ix->gone[i]);
    if (c->epoch == 0)
        return; /* the first pass, right after this, sees them all */
    for (uint32_t i = 0; i < nd->fresh_count; i++) {
        const net_fresh *fr = &nd->fresh[i];
        bool still = !fr->a->moves;
        float px = still || !f->has_pawn ? c->relevancy_pos[0] : f->px;
        float py = still || !f->has_pawn ? c->relevancy_pos[1] : f->py;

        if (repl_is_relevant(f, fr->a, fr->x, fr->y, px, py))
            repl_touch(f, fr->a, repl_d2(f, fr->x, fr->y));
        else
            repl_close(f, fr->a); /* a teleport out of range */
    }
}

uint32_t net_repl_window_room(const ENetPeer *peer)
{
    uint32_t window = (peer->packetThrottle * peer->windowSize) / ENET_PEER_PACKET_THROTTLE_SCALE;

    if (window < peer->mtu)
        window = peer->mtu;
    return peer->reliableDataInTransit >= window ? 0 : window - peer->reliableDataInTransit;
}

/* ---- sending ---------------------------------------------------------------------------- */

/* What one connection may still be sent this frame. */
typedef struct repl_out {
    double allowance;        /* bytes of budget left (may end a little below 0) */
    int64_t room;            /* reliable bytes ENet's window can still take */
    uint32_t datagram_fill;  /* bytes of the datagram ENet's flush will be filling when the
                              * reliable messages queued so far are packed (repl_queued) */
} repl_out;

/* ENet's flush packs a peer's commands into datagrams of its MTU: acknowledgements first, then
 * the reliable commands, then the unreliable ones, each whole (ours never need fragments).
 * Following that packing for the reliable messages lets the first update message take what
 * the datagram has left, instead of a datagram of its own. */
static void repl_queued(repl_out *o, const net_connection *c, size_t message_bytes)
{
    uint32_t room = c->peer->mtu - NET_DATAGRAM_HEADER_BYTES;
    uint32_t m = (uint32_t)message_bytes + NET_RELIABLE_COMMAND_BYTES;

    o->datagram_fill = o->datagram_fill + m > room ? m : o->datagram_fill + m;
}

/* Record bytes for an update message that fits in what the current datagram has left, or a
 * datagram's worth when that is too little to be worth it. */
static size_t repl_first_update_cap(const repl_out *o, const net_connection *c)
{
    int64_t left = (int64_t)c->peer->mtu - NET_DATAGRAM_HEADER_BYTES - o->datagram_fill -
                   NET_ACK_ROOM_BYTES - NET_UNRELIABLE_COMMAND_BYTES - REPL_MSG_OVERHEAD;

    return left >= 64 && left < NET_PACKET_TARGET ? (size_t)left : NET_PACKET_TARGET;
}

/* Sends owed destroys (closing actors) while the window has room; the rest wait. */
static void repl_send_destroys(repl_frame *f, repl_out *o)
{
    net_driver *nd = f->nd;
    net_view *v = f->v;

    net_view_compact_closing(v);
    while (v->closing_count > 0) {
        uint32_t n = v->closing_count < REPL_DESTROY_IDS ? v->closing_count : REPL_DESTROY_IDS;
        int64_t fits = (o->room - 16) / 10; /* ids of at most 10 bytes, and the envelope */
        Reap__Envelope env = REAP__ENVELOPE__INIT;
        Reap__ActorDestroy d = REAP__ACTOR_DESTROY__INIT;
        size_t sent;

        if (fits <= 0)
            return;
        if (n > fits)
            n = (uint32_t)fits;
        if (!VEC_RESERVE(nd->ids, nd->ids_cap, n))
            return;
        for (uint32_t i = 0; i < n; i++)
            nd->ids[i] = f->ix->v[v->closing[v->closing_count - 1 - i]].net_id;
        d.n_net_ids = n;
        d.net_ids = nd->ids;
        env.body_case = REAP__ENVELOPE__BODY_ACTOR_DESTROY;
        env.actor_destroy = &d;
        sent = net_send(nd, f->c, MSG_CHANNEL_REPLICATION, &env);
        if (sent == 0)
            return;
        repl_queued(o, f->c, sent);
        o->room -= (int64_t)sent;
        o->allowance -= (double)sent;
        nd->counters.destroys_sent += n;
        for (uint32_t i = 0; i < n; i++) { /* the last ones, so nothing else moves */
            uint32_t idx = v->closing[--v->closing_count];
            v->st[idx] &= (uint8_t)~NET_VIEW_IN_CLOSING;
            net_view_destroy_sent(v, f->ix, idx);
        }
    }
}

/* Sends one ActorSpawn or ActorUpdate of wr's records. Its envelope is written straight into
 * the ENet packet (wire_envelope): no protobuf-c structures, and one copy of the records. */
static size_t repl_send_records(repl_frame *f, const wire_writer *wr, bool spawns)
{
    net_driver *nd = f->nd;
    net_connection *c = f->c;
    uint8_t channel = spawns ? MSG_CHANNEL_REPLICATION : MSG_CHANNEL_UPDATES;
    ENetPacket *packet;
    size_t sent;

    if (wr->count == 0)
        return 0;
    packet = enet_packet_create(NULL, wr->len + WIRE_ENVELOPE_MAX,
                                spawns ? ENET_PACKET_FLAG_RELIABLE : 0);
    if (packet == NULL)
        return 0;
    sent = wire_envelope(packet->data, packet->dataLength, spawns, f->frame, wr->count, wr->buf,
                         wr->len);
    packet->dataLength = sent; /* ENet sends dataLength bytes; the rest is slack it frees */
    if (sent == 0) {
        enet_packet_destroy(packet);
        return 0;
    }
    if (net_send_packet(nd, c, channel, packet) == 0)
        return 0;
    if (spawns) {
        nd->counters.spawn_records_sent += wr->count;
        nd->counters.spawn_bytes_sent += sent + NET_RELIABLE_COMMAND_BYTES;
    } else {
        nd->counters.update_records_sent += wr->count;
        nd->counters.update_bytes_sent += sent + NET_UNRELIABLE_COMMAND_BYTES;
    }
    return sent;
}

static uint8_t repl_bucket(uint64_t score)
{
    return score >= REPL_BUCKETS - 1 ? REPL_BUCKETS - 1 : (uint8_t)score;
}

/* The player's own actors count four times as much (UE gives the viewer's actors priority). */
static uint32_t repl_priority(const repl_frame *f, uint32_t owner_player_id, uint32_t priority)
{
    return owner_player_id == f->c->player_id ? priority * 4u : priority;
}

/* x / period for periods 1..15 (repl_band gives 1, 2, 3 and 6, stretched up to 12; 0,
 * undecided, counts as 1), without a division or a branch: exact where repl_bucket does not
 * clamp (x < 256 x period). */
static uint64_t repl_div_period(uint64_t x, uint32_t period)
{
    static const uint32_t recip[16] = { 65536, 65536, 32768, 21846, 16384, 13108, 10923, 9363,
                                        8192,  7282,  6554,  5958,  5462,  5042,  4682,  4370 };

    return (x * recip[period & 15]) >> 16;
}

/* Adds the pending spawn at place `place` of the pending list as a candidate, its priority
 * accumulated over `weight` (boost x frames waited); returns its bytes. */
static uint32_t repl_spawn_candidate(repl_frame *f, uint32_t place, const net_index_hot *h,
                                     uint64_t weight)
{
    net_candidate *cd = &f->nd->cands[f->nd->cands_count++];

    cd->index = place;
    cd->is_spawn = 1;
    cd->bytes = (uint16_t)(h->spawn_len + 4);
    cd->bucket = repl_bucket(repl_priority(f, h->owner_player_id, h->priority) * weight);
    return cd->bytes;
}

/* Lists this frame's candidates: every pending spawn (by its place in the pending list, which
 * is compacted on the way: entries whose state moved on are dropped), then every open mover
 * whose update is newer than what this connection was sent and whose period has come (by its
 * mover slot, so in the order update records are written). */
static uint64_t repl_gather(repl_frame *f)
{
    net_driver *nd = f->nd;
    net_view *v = f->v;
    const net_index_hot *hot = f->ix->hot;
    const net_mover_hot *mhot = f->ix->mhot;
    uint64_t bytes = 0;
    uint32_t n = 0;

    nd->cands_count = 0;
    if (!VEC_RESERVE(nd->cands, nd->cands_cap, v->pending_count + v->mcap))
        return 0;
    /* Pending spawns in the order they became relevant (the player's own first): only a window
     * of them a frame's budget could take is looked at, so a join snapshot of thousands costs
     * what is sent, not what waits. */
    uint32_t window = (uint32_t)(f->allowance_hint / REPL_MIN_SPAWN_BYTES) + 16, k = 0;
    /* While the join snapshot streams, spawns come first: the movers it already has would
     * otherwise take most of the budget (in a crowd of 500, two thirds) and double the join;
     * their updates still go as they age (the accumulator), only less often. */
    uint32_t boost = f->c->snapshot_pending ? REPL_SNAPSHOT_BOOST : REPL_SPAWN_BOOST;
    if (!f->batch && v->pending_count <= REPL_BATCH_BACKLOG)
        window = 0;
    for (; k < v->pending_count && nd->cands_count < window; k++) {
        net_view_item it = v->pending[k];

        /* The state bytes are read at random: ask for the ones a few entries on. */
        if (k + 8 < v->pending_count)
            __builtin_prefetch(&v->st[v->pending[k + 8].index]);
        const net_index_hot *h = &hot[it.index];
        uint32_t age = f->frame - it.frame + 1;

        if ((v->st[it.index] & NET_VIEW_STATE) != NET_VIEW_PENDING) {
            v->st[it.index] &= (uint8_t)~NET_VIEW_IN_PENDING;
            continue;
        }
        v->pending[n] = it;
        bytes += repl_spawn_candidate(f, n++, h, boost * age);
    }
    if (n < k)
        memmove(v->pending + n, v->pending + k, (v->pending_count - k) * sizeof *v->pending);
    v->pending_count -= k - n;
    /* And the newest few beyond the window, for the player's own: what it just asked to spawn
     * joins the end of the list, behind a join snapshot of thousands or a batch frame away, and
     * its client is waiting for it. */
    uint32_t tail = v->pending_count > n + REPL_PENDING_TAIL ? v->pending_count - REPL_PENDING_TAIL
                                                             : n;
    for (uint32_t t = tail; t < v->pending_count; t++) {
        net_view_item it = v->pending[t];
        const net_index_hot *h = &hot[it.index];

        if (h->owner_player_id == f->c->player_id &&
            (v->st[it.index] & NET_VIEW_STATE) == NET_VIEW_PENDING)
            bytes += repl_spawn_candidate(f, t, h, boost * (f->frame - it.frame + 1));
    }
    /* Open movers, a bit each: the due ones, whose band's period has come (repl_band decided
     * it when they were touched) and which changed since last sent. Without a branch per mover
     * (in a crowd that test is a coin toss for the branch predictor): the slot is written
     * either way and kept by advancing the count. Their priorities wait until the budget asks
     * for them (repl_mover_priorities). */
    uint32_t first = nd->cands_count, m = first;
    for (uint32_t w = 0; w < v->mcap / 64; w++) {
        for (uint64_t bits = v->mopen[w]; bits != 0; bits &= bits - 1) {
            uint32_t slot = w * 64 + (uint32_t)__builtin_ctzll(bits);
            uint32_t sent = v->msent[slot];
            const net_mover_hot *h = &mhot[slot];
            uint32_t due = (f->frame - sent >= v->mperiod[slot]) & (h->changed_frame > sent);

            nd->cands[m] = (net_candidate){ .index = slot,
                                            .bytes = (uint16_t)(h->update_len + 1) };
            bytes += due * nd->cands[m].bytes;
            m += due;
        }
    }
    nd->movers_first = first;
    nd->cands_count = m;
    return bytes;
}

/* Each due mover's accumulated priority: NetPriority (four times for the player's own, as
 * repl_priority) x frames since last sent / its period. Only a frame whose candidates do not
 * all fit the budget needs it (repl_fill). */
static void repl_mover_priorities(repl_frame *f)
{
    net_driver *nd = f->nd;
    const net_view *v = f->v;
    const net_mover_hot *mhot = f->ix->mhot;
    uint32_t me = f->c->player_id;

    for (uint32_t i = nd->movers_first; i < nd->cands_count; i++) {
        net_candidate *cd = &nd->cands[i];
        uint32_t slot = cd->index, age = f->frame - v->msent[slot];
        const net_mover_hot *h = &mhot[slot];
        uint32_t prio = (uint32_t)h->priority << (2 * (h->owner_player_id == me));

        cd->bucket = repl_bucket(repl_div_period((uint64_t)prio * age, v->mperiod[slot]));
    }
}

/* The lowest priority bucket that still fits the budget, taking higher ones first, and what
 * the buckets above it take. */
static uint32_t repl_threshold(const net_driver *nd, double allowance, double *out_above)
{
    uint64_t by_bucket[REPL_BUCKETS];
    double left = allowance;

    memset(by_bucket, 0, sizeof by_bucket);
    for (uint32_t i = 0; i < nd->cands_count; i++)
        by_bucket[nd->cands[i].bucket] += nd->cands[i].bytes;
    for (uint32_t b = REPL_BUCKETS; b-- > 0;) {
        if ((double)by_bucket[b] >= left) {
            *out_above = allowance - left;
            return b;
        }
        left -= (double)by_bucket[b];
    }
    *out_above = allowance - left;
    return 0;
}

static bool repl_pick_before(const net_pick *x, const net_pick *y)
{
    return x->key < y->key;
}

/* Sorts picks[0..n) with a bottom-up merge through the driver's scratch (qsort would call
 * malloc for a join snapshot's worth every frame). */
static void repl_sort_picks(net_driver *nd, uint32_t n)
{
    net_pick *src = nd->picks, *dst = nd->picks_tmp;

    /* A player's handful (a new neighbour's actors) by insertion: fewer moves than merging. */
    if (n <= 16) {
        for (uint32_t i = 1; i < n; i++) {
            net_pick x = src[i];
            uint32_t j = i;
            for (; j > 0 && repl_pick_before(&x, &src[j - 1]); j--)
                src[j] = src[j - 1];
            src[j] = x;
        }
        return;
    }

    for (uint32_t width = 1; width < n; width *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * width) {
            uint32_t mid = lo + width < n ? lo + width : n;
            uint32_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            uint32_t i = lo, j = mid, k = lo;

            while (i < mid && j < hi)
                dst[k++] = repl_pick_before(&src[j], &src[i]) ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        net_pick *t = src;
        src = dst;
        dst = t;
    }
    if (src != nd->picks)
        memcpy(nd->picks, src, n * sizeof *src);
}

/* Writes the chosen spawns, by priority and within a priority by net id (so their ids
 * delta-code small), while the window has room; the rest stay pending. False when the window
 * stopped them. */
static bool repl_write_spawns(repl_frame *f, repl_out *o, uint32_t n)
{
    net_driver *nd = f->nd;
    wire_writer wr;
    bool stopped = false;

    if (n == 0)
        return true;
    repl_sort_picks(nd, n);
    wire_writer_init(&wr, nd->rec_buf, NET_PACKET_TARGET);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t idx = nd->picks[i].index;
        const net_index_entry *e = &f->ix->v[idx];
        size_t before = wr.len;

        if ((int64_t)(wr.len + WIRE_SPAWN_MAX + REPL_MSG_OVERHEAD) > o->room) {
            stopped = true;
            break;
        }
        if (!wire_put_spawn(&wr, e->net_id, idx, e->spawn, f->ix->hot[idx].spawn_len)) {
            size_t sent = repl_send_records(f, &wr, true);
            repl_queued(o, f->c, sent);
            o->room -= (int64_t)sent;
            wire_writer_init(&wr, nd->rec_buf, NET_PACKET_TARGET);
            i--;
            continue;
        }
        o->allowance -= (double)(wr.len - before);
        net_view_spawn_sent(f->v, f->ix, nd->picks[i].index, f->frame);
        nd->counters.spawns_sent++;
    }
    if (wr.count > 0) {
        size_t sent = repl_send_records(f, &wr, true);
        repl_queued(o, f->c, sent);
        o->room -= (int64_t)sent;
    }
    return !stopped;
}

/* Takes candidates above the threshold bucket, and from the threshold bucket what the budget
 * has left after them. Spawns are written first (reliable: ENet packs them first), then the
 * chosen updates in mover slot order, the first message sized to what the spawns' last
 * datagram has left. */
static void repl_fill(repl_frame *f, repl_out *o)
{
    net_driver *nd = f->nd;
    net_view *v = f->v;
    uint64_t wanted = repl_gather(f);
    bool everything = (double)wanted <= o->allowance;
    double above = 0;
    uint32_t threshold = 0;

    if (!everything) {
        repl_mover_priorities(f);
        threshold = repl_threshold(nd, o->allowance, &above);
    }
    double at_threshold = o->allowance - above;
    double estimate = o->allowance; /* what the chosen would leave; the writers charge o */
    uint32_t picks = 0, moves = 0;
    bool spawns_done;
    wire_writer wr;

    if (!VEC_RESERVE(nd->picks, nd->picks_cap, v->pending_count) ||
        !VEC_RESERVE(nd->picks_tmp, nd->picks_tmp_cap, v->pending_count))
        return;
    /* The chosen updates are compacted to the front of the candidates (in slot order still). */
    for (uint32_t i = 0; i < nd->cands_count && estimate > 0; i++) {
        const net_candidate *cd = &nd->cands[i];

        if (!everything && cd->bucket < threshold)
            continue;
        if (!everything && cd->bucket == threshold) {
            if (at_threshold <= 0)
                continue;
            at_threshold -= cd->bytes;
        }
        estimate -= cd->bytes;
        if (cd->is_spawn) {
            uint32_t idx = v->pending[cd->index].index;
            nd->picks[picks++] = (net_pick){ NET_PICK_KEY(cd->bucket, f->ix->v[idx].net_id), idx };
        } else {
            nd->cands[moves++] = *cd;
        }
    }
    spawns_done = repl_write_spawns(f, o, picks);

    wire_writer_init(&wr, nd->rec_buf + NET_PACKET_TARGET, repl_first_update_cap(o, f->c));
    for (uint32_t i = 0; i < moves; i++) {
        uint32_t slot = nd->cands[i].index;
        const net_mover_hot *h = &f->ix->mhot[slot];
        size_t before = wr.len;

        if (!wire_put_update(&wr, slot, h->update, h->update_len, h->update_has_z)) {
            repl_send_records(f, &wr, false);
            wire_writer_init(&wr, nd->rec_buf + NET_PACKET_TARGET, NET_PACKET_TARGET);
            wire_put_update(&wr, slot, h->update, h->update_len, h->update_has_z);
            before = 0;
        }
        o->allowance -= (double)(wr.len - before);
        v->msent[slot] = f->frame;
    }
    repl_send_records(f, &wr, false);
    if (!spawns_done || !everything)
        nd->counters.saturated++;
}

static void repl_send_snapshot_complete(repl_frame *f)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__SnapshotComplete done = REAP__SNAPSHOT_COMPLETE__INIT;

    done.actors = net_view_held(f->v);
    env.body_case = REAP__ENVELOPE__BODY_SNAPSHOT_COMPLETE;
    env.snapshot_complete = &done;
    net_send(f->nd, f->c, MSG_CHANNEL_REPLICATION, &env);
    f->c->snapshot_pending = false;
}

static void repl_send_check(repl_frame *f)
{
    const net_view *v = f->v;
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__ReplicationCheck check = REAP__REPLICATION_CHECK__INIT;

    check.pending = v->n_pending;
    check.closing = v->n_closing;
    check.relevant_actors = net_view_relevant(v);
    check.relevant_digest = v->digest_relevant;
    check.open_actors = net_view_held(v);
    check.open_digest = v->digest_held;
    env.seq = f->c->check_seq;
    env.body_case = REAP__ENVELOPE__BODY_REPLICATION_CHECK;
    env.replication_check = &check;
    net_send(f->nd, f->c, MSG_CHANNEL_REPLICATION, &env);
    f->c->check_requested = false;
}

/* A peer that has sent nothing (not even an acknowledgement) for a second: updates to it
 * would only add datagrams and queue reliable data it will never acknowledge. */
/* Whether others' spawns and destroys go this frame. Past its join snapshot a connection is sent
 * them every REPL_BATCH_PERIOD-th frame (10 Hz at 30; its frames spread by player id), each in
 * one reliable message: in a crowd somebody joins or leaves nearly every frame, and every
 * reliable message costs an acknowledgement datagram back, ENet's bookkeeping until it comes,
 * and a datagram of its own when the frame's updates do not leave it room. A new neighbour
 * then shows up to two frames later, as an actor of UE's usual NetUpdateFrequency (10 Hz)
 * would; a backlog larger than REPL_BATCH_BACKLOG (a teleport into a town) streams at once. */
static bool repl_batch_frame(const repl_frame *f)
{
    return f->c->snapshot_pending || (f->frame + f->c->player_id) % REPL_BATCH_PERIOD == 0;
}

static bool repl_unresponsive(const net_driver *nd, const net_connection *c)
{
    enet_uint32 last = c->peer->lastReceiveTime;
    enet_uint32 silent = nd->host->serviceTime - last; /* ENet's clock wraps; so does this */

    return last != 0 && silent > 1000 && silent < 86400000;
}

void net_repl_connection(net_driver *nd, net_connection *c, double dt, bool deferred)
{
    const net_driver_env *e = &nd->env;
    double rate = (double)cvar_get_int(e->cvars, CVAR_NET_MAX_CLIENT_RATE);
    double per_frame = rate / (double)e->tick_hz;
    repl_frame f = {
        .nd = nd,
        .c = c,
        .v = &c->view,
        .w = c->world,
        .heap = e->heap,
        .frame = (uint32_t)*e->frame,
        .cull = (float)cvar_get(e->cvars, CVAR_NET_CULL_DISTANCE),
    };
    repl_out o;
    bool silent;

    if (c->controller == NULL || c->world == NULL)
        return;
    f.ix = net_repl_index(nd, c->world);
    if (c->controller->pawn != NULL) {
        f.has_pawn = true;
        f.px = c->controller->pawn->base.pos[0];
        f.py = c->controller->pawn->base.pos[1];
    }
    /* A silent peer (a crowd's abrupt leavers stay connected until ENet times them out) is
     * left as it is: what it holds keeps its indices (refs), and the first frame it answers
     * again decides everything afresh in a full pass, which also closes what went meanwhile. */
    silent = repl_unresponsive(nd, c);
    if (silent) {
        c->relevancy_cull = -1.0f; /* no cull distance: the next pass is due, and full */
    } else {
        /* The outbox is this frame's alone: a deferred connection follows it too, so that its
         * next pass, not a full one, still knows what spawned and went meanwhile. */
        repl_outbox(&f);
        if (!deferred)
            repl_relevancy_update(&f, REPL_RELEVANCY_PERIOD * e->tick_hz);
    }

    /* Budget: net.MaxClientRate accrues every frame; at most two frames' worth is banked. */
    c->allowance += rate * dt;
    if (c->allowance > 2.0 * per_frame)
        c->allowance = 2.0 * per_frame;
    /* A silent peer is sent nothing until it answers again (most likely it is gone, and ENet
     * will time it out): its owed destroys wait as closing actors, not in ENet's queue. A
     * deferred one is sent its banked allowance next frame. */
    if (silent)
        return;
    if (deferred) {
        /* Its spawns and destroys go on its next served frame instead of waiting up to three
         * frames for its next batch frame. */
        if (repl_batch_frame(&f))
            c->batch_owed = true;
        return;
    }
    o.room = net_repl_window_room(c->peer);
    o.allowance = c->allowance;
    o.datagram_fill = 0;
    f.allowance_hint = c->allowance > 0 ? c->allowance : 0;
    f.batch = repl_batch_frame(&f) || c->batch_owed;
    c->batch_owed = false;
    /* Destroys first: small, and the client must not keep ghosts. */
    if (f.batch || f.v->closing_count > REPL_BATCH_BACKLOG)
        repl_send_destroys(&f, &o);
    if (o.allowance > 0)
        repl_fill(&f, &o);
    else if (f.v->n_pending > 0)
        nd->counters.saturated++;
    c->allowance = o.allowance;

    /* Complete once the first pass has run (it may wait for net.FullPassBudgetMs) and its
     * spawns are all sent. */
    if (c->snapshot_pending && c->epoch > 0 && f.v->n_pending == 0)
        repl_send_snapshot_complete(&f);
    if (c->check_requested)
        repl_send_check(&f);
}

/* ---- the frame's budget (net.ReplicationFrameBudget) ----------------------------------- */

enum {
    REPL_FLUSH_SAMPLE_BYTES = 16384, /* fewer queued bytes say too little of the flush's cost
                                        (its fixed part, a pass over every peer, would count
                                        as a high cost per byte) */
    REPL_FLUSH_SAMPLE_CAP = 4,      /* a sample counts at most this many times the average */
};

void net_repl_budget_begin(net_driver *nd, uint64_t deadline_ns)
{
    net_repl_budget *b = &nd->budget;

    b->deadline_ns = deadline_ns;
    b->bytes_at_start = nd->counters.bytes_out;
    b->served = 0;
    b->deferred = 0;
}

bool net_repl_budget_must_serve(const net_driver *nd, const net_connection *c)
{
    return (uint32_t)*nd->env.frame - c->served_frame >= NET_REPL_MAX_DEFER;
}

bool net_repl_budget_defers(net_driver *nd, net_connection *c, uint64_t now_ns)
{
    net_repl_budget *b = &nd->budget;
    uint32_t frame = (uint32_t)*nd->env.frame;

    if (b->deadline_ns != 0 && b->served > 0 && !net_repl_budget_must_serve(nd, c)) {
        /* Spent stays spent for the frame. ENet sends at the flush, after every connection:
         * what is queued costs then. */
        double flush = (double)(nd->counters.bytes_out - b->bytes_at_start) *
                       b->flush_ns_per_byte;

        if (b->deferred > 0 || (double)now_ns + flush >= (double)b->deadline_ns) {
            nd->counters.connections_deferred++;
            b->deferred++;
            return true;
        }
    }
    c->served_frame = frame;
    b->served++;
    return false;
}

void net_repl_budget_flushed(net_driver *nd, uint64_t flush_ns)
{
    net_repl_budget *b = &nd->budget;
    uint64_t bytes = nd->counters.bytes_out - b->bytes_at_start;
    double per_byte;

    if (bytes < REPL_FLUSH_SAMPLE_BYTES)
        return;
    per_byte = (double)flush_ns / (double)bytes;
    /* A flush the kernel preempted is not what the next one will cost: capped, one such moves
     * the average less than half (and cuts no frames for long). */
    if (b->flush_ns_per_byte > 0 && per_byte > REPL_FLUSH_SAMPLE_CAP * b->flush_ns_per_byte)
        per_byte = REPL_FLUSH_SAMPLE_CAP * b->flush_ns_per_byte;
    /* An average over about the last eight frames: one slow flush moves it an eighth. */
    b->flush_ns_per_byte = b->flush_ns_per_byte == 0
                               ? per_byte
                               : b->flush_ns_per_byte + (per_byte - b->flush_ns_per_byte) / 8;
}

void net_repl_join(net_driver *nd, net_connection *c)
{
    const net_driver_env *e = &nd->env;

    net_view_clear(&c->view, net_repl_index(nd, c->world));
    c->epoch = 0;
    c->relevancy_frame = 0;
    c->full_pass_due = 0;
    c->snapshot_pending = true;
    c->check_requested = false;
    c->allowance = (double)cvar_get_int(e->cvars, CVAR_NET_MAX_CLIENT_RATE) / e->tick_hz;
}

void net_repl_leave(net_driver *nd, net_connection *c)
{
    /* Freed, not kept: a crowd's views are large, and the slot may stay unused. */
    if (c->world != NULL)
        net_view_clear(&c->view, net_repl_index(nd, c->world));
    net_view_free(&c->view);
    c->snapshot_pending = false;
    c->check_requested = false;
}
