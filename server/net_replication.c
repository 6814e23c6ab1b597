/*
 * net_replication.c - what each connection is sent, every frame (UE's NetDriver relevancy and
 * saturation, with ReplicationGraph's grid for the candidates).
 *
 * Assumes: called once per frame per joined connection, after the worlds ticked and before
 * their outboxes are reset (the outboxes name this frame's spawned, teleported and destroyed
 * actors, so no channel is ever used after its actor was destroyed).
 * Guarantees: a connection has a live (pending or open) channel exactly for the actors
 * relevant to it; an open channel that stops being relevant closes and owes the client a
 * destroy, sent when ENet's window has room; pending spawns and changed positions go out in
 * priority order (NetPriority x frames waited, so nothing starves) until net.MaxClientRate's
 * per-frame allowance is spent; reliable bytes never exceed what the peer's window can send at
 * the next flush (net_internal.h says why); a peer silent for a second is sent nothing new.
 *
 * Relevant: the player's own actors (controller, pawn, what it spawned), always-relevant
 * actors (the level fixtures), and actors within net.CullDistance of the player's pawn.
 * The spatial part is re-evaluated when the pawn has moved a sixteenth of the cull distance or
 * half a second has passed (UE likewise keeps an actor relevant for a while after it stops
 * being so): moving actors afresh, static ones only in the ring the pawn's move can have
 * changed (repl_relevancy_pass). Actors spawned or teleported in between are tested as they
 * appear.
 */
#include <math.h>
#include <string.h>

#include "engine.h"
#include "log.h"
#include "net_internal.h"

enum {
    REPL_SPAWN_BYTES = 56,   /* an ActorState in an ActorSpawn, upper bound for planning */
    REPL_MOVE_BYTES = 24,    /* an ActorMove in an ActorUpdate */
    REPL_DESTROY_IDS = 200,  /* net ids per ActorDestroy (at most 10 bytes each) */
    REPL_BUCKETS = 256,
};

typedef struct repl_frame {
    net_driver *nd;
    net_connection *c;
    world *w;
    gc_heap *heap;
    uint32_t frame;
    float cull;
} repl_frame;

static uint8_t repl_priority(const net_connection *c, const actor *a)
{
    uint8_t p;

    switch (a->kind) {
    case ACTOR_KIND_PLAYER_CONTROLLER:
    case ACTOR_KIND_PAWN: p = 3; break;
    case ACTOR_KIND_PROJECTILE: p = 2; break;
    default: p = 1; break;
    }
    return a->owner_player_id == c->player_id ? (uint8_t)(p * 4) : p;
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
    if (a->kind == ACTOR_KIND_PLAYER_CONTROLLER || f->c->controller->pawn == NULL)
        return false; /* a controller is only relevant to its owner */
    return dx * dx + dy * dy <= f->cull * f->cull;
}

/* Marks a as relevant now: refreshes its channel, reopens a closing one, or opens a pending
 * one. */
static void repl_touch(const repl_frame *f, actor *a)
{
    net_connection *c = f->c;
    net_channel *ch = net_channels_find(&c->channels, a->net_id);

    if (ch != NULL && ch->state == NET_CHANNEL_CLOSING) {
        if (net_channels_reopen(&c->channels, ch, c->epoch) != NULL)
            return;
        ch = NULL; /* out of memory: it was forgotten; open it afresh */
    }
    if (ch != NULL) {
        ch->epoch = c->epoch;
        return;
    }
    if (net_channels_add(&c->channels, a->net_id, gc_weak_make(f->heap, a),
                         repl_priority(c, a), a->moves, f->frame, c->epoch) == NULL)
        log_warn("net: out of memory opening a channel for player %u", c->player_id);
}

/* The actor is no longer relevant (or gone): a pending channel goes away, an open one owes
 * the client a destroy. */
static void repl_close(repl_frame *f, net_channel *ch)
{
    if (ch->state == NET_CHANNEL_PENDING)
        net_channels_remove(&f->c->channels, ch);
    else if (ch->state == NET_CHANNEL_OPEN)
        net_channels_close(&f->c->channels, ch);
}

typedef struct repl_pass {
    repl_frame *f;
    float px, py;            /* the pawn now */
    float inner2, outer2;    /* static actors between these squared distances may change */
    bool full;               /* every static actor in range is touched */
} repl_pass;

static void repl_grid_visit_cb(const world_grid_entry *e, float d2, void *userdata)
{
    repl_pass *pass = userdata;
    repl_frame *f = pass->f;
    net_channel *ch;

    if (e->moves) {
        if (d2 <= f->cull * f->cull && e->a->replicates)
            repl_touch(f, e->a);
        return;
    }
    if (pass->full) {
        if (d2 <= f->cull * f->cull && e->a->replicates)
            repl_touch(f, e->a);
        return;
    }
    /* A static actor well inside stayed relevant and one well outside stayed irrelevant
     * (the pawn moved at most m since the last pass): only the ring between can change. */
    if (d2 < pass->inner2 || d2 > pass->outer2 || !e->a->replicates || repl_always(f, e->a))
        return;
    if (d2 <= f->cull * f->cull)
        repl_touch(f, e->a);
    else if ((ch = net_channels_find(&f->c->channels, e->a->net_id)) != NULL)
        repl_close(f, ch);
}

/* A relevancy pass. Moving actors are decided afresh (epochs close the ones left behind);
 * static actors hold this invariant between passes: one has a live channel exactly when it is
 * always relevant or within the cull distance of the pawn's position at the last pass. */
static void repl_relevancy_pass(repl_frame *f)
{
    net_connection *c = f->c;
    player_controller *pc = c->controller;
    pawn *p = pc->pawn;
    repl_pass pass = { .f = f, .full = c->epoch == 0 || c->relevancy_cull != f->cull };

    c->epoch++;
    for (uint32_t l = 0; l < f->w->levels.count; l++) {
        level *lvl = f->w->levels.data[l];
        for (uint32_t i = 0; lvl != NULL && i < WORLD_FIRST_DYNAMIC_SLOT && i < lvl->actors.count;
             i++) {
            actor *a = lvl->actors.data[i];
            if (a != NULL && a->replicates && a->always_relevant)
                repl_touch(f, a);
        }
    }
    repl_touch(f, &pc->base);
    for (uint32_t i = 0; i < pc->owned.count; i++)
        if (pc->owned.data[i] != NULL)
            repl_touch(f, pc->owned.data[i]);
    if (p != NULL) {
        float dx = p->base.pos[0] - c->relevancy_pos[0];
        float dy = p->base.pos[1] - c->relevancy_pos[1];
        float m = pass.full ? 0.0f : sqrtf(dx * dx + dy * dy);
        float inner = f->cull - m;

        repl_touch(f, &p->base);
        pass.px = p->base.pos[0];
        pass.py = p->base.pos[1];
        pass.inner2 = inner > 0 ? inner * inner : 0.0f;
        pass.outer2 = (f->cull + m) * (f->cull + m);
        world_grid_query(&f->w->grid, pass.px, pass.py, f->cull + m, repl_grid_visit_cb, &pass);
        c->relevancy_pos[0] = pass.px;
        c->relevancy_pos[1] = pass.py;
    }
    c->relevancy_frame = f->frame;
    c->relevancy_cull = f->cull;
    /* Downwards, so a removal only moves channels already seen into the hole. */
    for (int s = pass.full ? NET_SET_STATIC : NET_SET_MOVER; s < NET_SET_LIVE; s++) {
        net_channel_set *set = &c->channels.sets[s];
        for (uint32_t i = set->count; i-- > 0;)
            if (set->v[i].epoch != c->epoch)
                repl_close(f, &set->v[i]);
    }
    net_channels_refilter(&c->channels);
}

static bool repl_relevancy_due(const repl_frame *f, double period_frames)
{
    const net_connection *c = f->c;
    const pawn *p = c->controller->pawn;
    float step = f->cull / 16.0f, dx, dy;

    if (c->epoch == 0 || (double)(f->frame - c->relevancy_frame) >= period_frames ||
        c->relevancy_cull != f->cull)
        return true;
    if (p == NULL)
        return false;
    dx = p->base.pos[0] - c->relevancy_pos[0];
    dy = p->base.pos[1] - c->relevancy_pos[1];
    return dx * dx + dy * dy >= step * step;
}

void net_repl_begin_world(net_driver *nd, world *w)
{
    gc_heap *heap = nd->engine->heap;

    nd->fresh_count = 0;
    if (!VEC_RESERVE(nd->fresh, nd->fresh_cap, w->spawned_count))
        return;
    for (uint32_t i = 0; i < w->spawned_count; i++) {
        actor *a = gc_weak_get(heap, w->spawned[i].actor);
        if (a != NULL)
            nd->fresh[nd->fresh_count++] = (net_fresh){ a, a->pos[0], a->pos[1] };
    }
}

/* This frame's spawns, teleports and destroys, between relevancy passes. The channel filter
 * answers most destroyed ids (someone else's actors) without touching the hash. A static
 * actor is judged from where the pawn was at the last pass (the invariant above), a moving
 * one from where it is now. */
static void repl_outbox(repl_frame *f)
{
    const world *w = f->w;
    const net_driver *nd = f->nd;
    const net_connection *c = f->c;
    const pawn *p = c->controller->pawn;

    for (uint32_t i = 0; i < w->destroyed_count; i++) {
        net_channel *ch = net_channels_find(&f->c->channels, w->destroyed[i]);
        if (ch != NULL)
            repl_close(f, ch);
    }
    if (c->epoch == 0)
        return; /* the first pass, right after this, sees them all */
    for (uint32_t i = 0; i < nd->fresh_count; i++) {
        const net_fresh *fr = &nd->fresh[i];
        bool still = !fr->a->moves;
        float px = still || p == NULL ? c->relevancy_pos[0] : p->base.pos[0];
        float py = still || p == NULL ? c->relevancy_pos[1] : p->base.pos[1];
        net_channel *ch;

        if (repl_is_relevant(f, fr->a, fr->x, fr->y, px, py))
            repl_touch(f, fr->a);
        else if ((ch = net_channels_find(&f->c->channels, fr->a->net_id)) != NULL)
            repl_close(f, ch); /* a teleport out of range */
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

/* What one connection may still be sent this frame, and what has been built so far. */
typedef struct repl_out {
    double allowance;        /* bytes of budget left (may end a little below 0) */
    int64_t room;            /* reliable bytes ENet's window can still take */
    uint32_t n_states, n_moves;
    size_t state_bytes, move_bytes;
} repl_out;

static size_t repl_varint_size(uint64_t v)
{
    size_t n = 1;

    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* Sends owed destroys (closing channels) while the window has room; the rest wait. */
static void repl_send_destroys(repl_frame *f, repl_out *o)
{
    net_driver *nd = f->nd;
    net_channel_set *closing = &f->c->channels.sets[NET_SET_CLOSING];

    while (closing->count > 0) {
        uint32_t n = closing->count < REPL_DESTROY_IDS ? closing->count : REPL_DESTROY_IDS;
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
            nd->ids[i] = closing->v[closing->count - 1 - i].net_id;
        d.n_net_ids = n;
        d.net_ids = nd->ids;
        env.body_case = REAP__ENVELOPE__BODY_ACTOR_DESTROY;
        env.actor_destroy = &d;
        sent = net_send(nd, f->c, MSG_CHANNEL_REPLICATION, &env);
        if (sent == 0)
            return;
        o->room -= (int64_t)sent;
        o->allowance -= (double)sent;
        nd->counters.destroys_sent += n;
        for (uint32_t i = 0; i < n; i++) /* the last ones, so nothing else moves */
            net_channels_remove(&f->c->channels, &closing->v[closing->count - 1]);
    }
}

static void repl_flush_spawns(repl_frame *f, repl_out *o)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__ActorSpawn spawn = REAP__ACTOR_SPAWN__INIT;
    net_driver *nd = f->nd;

    if (o->n_states == 0)
        return;
    for (uint32_t i = 0; i < o->n_states; i++)
        nd->state_ptrs[i] = &nd->states[i];
    spawn.n_actors = o->n_states;
    spawn.actors = nd->state_ptrs;
    env.body_case = REAP__ENVELOPE__BODY_ACTOR_SPAWN;
    env.actor_spawn = &spawn;
    o->room -= (int64_t)net_send(nd, f->c, MSG_CHANNEL_REPLICATION, &env);
    o->n_states = 0;
    o->state_bytes = 0;
}

static void repl_flush_moves(repl_frame *f, repl_out *o)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__ActorUpdate upd = REAP__ACTOR_UPDATE__INIT;
    net_driver *nd = f->nd;

    if (o->n_moves == 0)
        return;
    for (uint32_t i = 0; i < o->n_moves; i++)
        nd->move_ptrs[i] = &nd->moves[i];
    upd.frame = nd->engine->frame;
    upd.n_moves = o->n_moves;
    upd.moves = nd->move_ptrs;
    env.body_case = REAP__ENVELOPE__BODY_ACTOR_UPDATE;
    env.actor_update = &upd;
    net_send(nd, f->c, MSG_CHANNEL_UPDATES, &env);
    o->n_moves = 0;
    o->move_bytes = 0;
}

/* Sends the spawn of a pending channel; false when the window has no room left for it. */
static bool repl_add_spawn(repl_frame *f, repl_out *o, uint32_t set, uint32_t pending_pos)
{
    net_driver *nd = f->nd;
    net_channel_set *s = &f->c->channels.sets[set];
    net_channel *ch = &s->v[s->pending[pending_pos]];
    uint64_t net_id = ch->net_id;
    Reap__ActorState *st;
    const char *name;
    actor *a;
    size_t bytes;

    if ((a = gc_weak_get(f->heap, ch->actor)) == NULL)
        return true; /* destroyed meanwhile: the outbox closes its channel next frame */
    name = gc_object_name(f->heap, a);
    if (name == NULL)
        name = "";
    bytes = 24 + repl_varint_size(net_id) + repl_varint_size(a->owner_player_id) + strlen(name);
    if ((int64_t)(o->state_bytes + bytes) > o->room)
        return false;
    if (o->n_states == NET_MSG_ITEMS || o->state_bytes + bytes > NET_PACKET_TARGET) {
        repl_flush_spawns(f, o);
        if ((int64_t)bytes > o->room)
            return false;
    }
    st = &nd->states[o->n_states++];
    reap__actor_state__init(st);
    st->net_id = a->net_id;
    st->actor_class = (Reap__ActorClass)a->kind;
    st->owner_player_id = a->owner_player_id;
    st->x = a->pos[0];
    st->y = a->pos[1];
    st->z = a->pos[2];
    st->name = (char *)name; /* borrowed from the collector until the message is sent */
    o->state_bytes += bytes;
    o->allowance -= (double)bytes;
    net_channels_open(&f->c->channels, ch);
    ch->sent_serial = a->move_serial;
    ch->since_frame = f->frame;
    nd->counters.spawns_sent++;
    return true;
}

static void repl_add_move(repl_frame *f, repl_out *o, uint32_t index)
{
    net_channel *ch = &f->c->channels.sets[NET_SET_MOVER].v[index];
    actor *a = gc_weak_get(f->heap, ch->actor);
    Reap__ActorMove *m;
    size_t bytes = 17 + repl_varint_size(ch->net_id);

    if (a == NULL)
        return;
    if (o->n_moves == NET_MSG_ITEMS || o->move_bytes + bytes > NET_PACKET_TARGET)
        repl_flush_moves(f, o);
    m = &f->nd->moves[o->n_moves++];
    reap__actor_move__init(m);
    m->net_id = a->net_id;
    m->x = a->pos[0];
    m->y = a->pos[1];
    m->z = a->pos[2];
    o->move_bytes += bytes;
    o->allowance -= (double)bytes;
    ch->sent_serial = a->move_serial;
    ch->since_frame = f->frame;
}

static uint8_t repl_bucket(uint32_t priority, uint32_t age)
{
    uint64_t score = (uint64_t)priority * (age < REPL_BUCKETS ? age : REPL_BUCKETS);

    return score >= REPL_BUCKETS - 1 ? REPL_BUCKETS - 1 : (uint8_t)score;
}

static net_candidate *repl_candidate(net_driver *nd, const net_channel *ch, uint32_t index,
                                     uint32_t set, uint32_t frame)
{
    net_candidate *cd = &nd->cands[nd->cands_count++];
    uint32_t age = frame - ch->since_frame;

    cd->index = index;
    cd->set = (uint8_t)set;
    cd->is_spawn = ch->state == NET_CHANNEL_PENDING;
    cd->bytes = cd->is_spawn ? REPL_SPAWN_BYTES : REPL_MOVE_BYTES;
    cd->bucket = repl_bucket(ch->priority, cd->is_spawn ? age + 1 : age);
    return cd;
}

/* Lists this frame's candidates: every pending spawn (by its place in the pending list),
 * every open mover that moved (by its place in the set). */
static uint64_t repl_gather(repl_frame *f)
{
    net_driver *nd = f->nd;
    net_connection *c = f->c;
    const net_channel_set *movers = &c->channels.sets[NET_SET_MOVER];
    uint64_t bytes = 0;

    nd->cands_count = 0;
    if (!VEC_RESERVE(nd->cands, nd->cands_cap, net_channels_pending(&c->channels) +
                                                     movers->count))
        return 0;
    for (int s = 0; s < NET_SET_LIVE; s++) {
        const net_channel_set *set = &c->channels.sets[s];
        for (uint32_t k = 0; k < set->pending_count; k++)
            bytes += repl_candidate(nd, &set->v[set->pending[k]], k, (uint32_t)s, f->frame)->bytes;
    }
    for (uint32_t i = 0; i < movers->count; i++) {
        const net_channel *ch = &movers->v[i];
        const actor *a;

        if (ch->state != NET_CHANNEL_OPEN)
            continue;
        a = gc_weak_get(f->heap, ch->actor);
        if (a == NULL || a->move_serial == ch->sent_serial)
            continue;
        bytes += repl_candidate(nd, ch, i, NET_SET_MOVER, f->frame)->bytes;
    }
    return bytes;
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

/* One pass, backwards: opening a channel moves the last entry of its pending list into its
 * place, which (going down) is never a candidate still to come, and moves nothing in the sets,
 * so every candidate's position stays valid without a lookup. Candidates above the threshold
 * bucket are all taken; the threshold bucket gets what the budget has left after them. */
static void repl_fill(repl_frame *f, repl_out *o)
{
    net_driver *nd = f->nd;
    uint64_t wanted = repl_gather(f);
    bool everything = (double)wanted <= o->allowance;
    double above = 0;
    uint32_t threshold = everything ? 0 : repl_threshold(nd, o->allowance, &above);
    double at_threshold = o->allowance - above;
    bool window_full = false;

    for (uint32_t i = nd->cands_count; i-- > 0 && o->allowance > 0;) {
        const net_candidate *cd = &nd->cands[i];
        double before = o->allowance;

        if (!everything && cd->bucket < threshold)
            continue;
        if (!everything && cd->bucket == threshold && at_threshold <= 0)
            continue;
        if (!cd->is_spawn)
            repl_add_move(f, o, cd->index);
        else if (!window_full && !repl_add_spawn(f, o, cd->set, cd->index))
            window_full = true;
        if (!everything && cd->bucket == threshold)
            at_threshold -= before - o->allowance;
    }
    repl_flush_spawns(f, o);
    repl_flush_moves(f, o);
    if (!everything || window_full)
        nd->counters.saturated++;
}

static void repl_send_snapshot_complete(repl_frame *f)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__SnapshotComplete done = REAP__SNAPSHOT_COMPLETE__INIT;

    done.actors = net_channels_held(&f->c->channels);
    env.body_case = REAP__ENVELOPE__BODY_SNAPSHOT_COMPLETE;
    env.snapshot_complete = &done;
    net_send(f->nd, f->c, MSG_CHANNEL_REPLICATION, &env);
    f->c->snapshot_pending = false;
}

static void repl_send_check(repl_frame *f)
{
    const net_channels *t = &f->c->channels;
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__ReplicationCheck check = REAP__REPLICATION_CHECK__INIT;

    check.pending = net_channels_pending(t);
    check.relevant_actors = net_channels_relevant(t);
    check.relevant_digest = net_channels_digest(t, false);
    check.open_actors = net_channels_held(t);
    check.open_digest = net_channels_digest(t, true);
    env.seq = f->c->check_seq;
    env.body_case = REAP__ENVELOPE__BODY_REPLICATION_CHECK;
    env.replication_check = &check;
    net_send(f->nd, f->c, MSG_CHANNEL_REPLICATION, &env);
    f->c->check_requested = false;
}

/* A peer that has sent nothing (not even an acknowledgement) for a second: updates to it
 * would only add datagrams and queue reliable data it will never acknowledge. */
static bool repl_unresponsive(const net_driver *nd, const net_connection *c)
{
    enet_uint32 last = c->peer->lastReceiveTime;
    enet_uint32 silent = nd->host->serviceTime - last; /* ENet's clock wraps; so does this */

    return last != 0 && silent > 1000 && silent < 86400000;
}

void net_repl_connection(net_driver *nd, net_connection *c, double dt)
{
    const engine *e = nd->engine;
    double rate = (double)cvar_get_int(&e->cvars, CVAR_NET_MAX_CLIENT_RATE);
    double per_frame = rate / (double)e->opts.tick_hz;
    repl_frame f = {
        .nd = nd,
        .c = c,
        .w = c->world,
        .heap = e->heap,
        .frame = (uint32_t)e->frame,
        .cull = (float)cvar_get(&e->cvars, CVAR_NET_CULL_DISTANCE),
    };
    repl_out o;

    if (c->controller == NULL || c->world == NULL)
        return;
    repl_outbox(&f);
    if (repl_relevancy_due(&f, 0.5 * e->opts.tick_hz))
        repl_relevancy_pass(&f);

    /* Budget: net.MaxClientRate accrues every frame; at most two frames' worth is banked. */
    c->allowance += rate * dt;
    if (c->allowance > 2.0 * per_frame)
        c->allowance = 2.0 * per_frame;
    /* A silent peer is sent nothing until it answers again (most likely it is gone, and ENet
     * will time it out): its owed destroys wait as closing channels, not in ENet's queue. */
    if (repl_unresponsive(nd, c))
        return;
    memset(&o, 0, sizeof o);
    o.room = net_repl_window_room(c->peer);
    o.allowance = c->allowance;
    /* Destroys first: small, and the client must not keep ghosts. */
    repl_send_destroys(&f, &o);
    if (o.allowance > 0)
        repl_fill(&f, &o);
    else if (net_channels_pending(&c->channels) > 0)
        nd->counters.saturated++;
    c->allowance = o.allowance;

    if (c->snapshot_pending && net_channels_pending(&c->channels) == 0)
        repl_send_snapshot_complete(&f);
    if (c->check_requested)
        repl_send_check(&f);
}

void net_repl_join(net_driver *nd, net_connection *c)
{
    const engine *e = nd->engine;

    net_channels_clear(&c->channels);
    c->epoch = 0;
    c->relevancy_frame = 0;
    c->snapshot_pending = true;
    c->check_requested = false;
    c->allowance = (double)cvar_get_int(&e->cvars, CVAR_NET_MAX_CLIENT_RATE) / e->opts.tick_hz;
}

void net_repl_leave(net_connection *c)
{
    /* Freed, not kept: a crowd's channel tables are large, and the slot may stay unused. */
    net_channels_free(&c->channels);
    c->snapshot_pending = false;
    c->check_requested = false;
}
