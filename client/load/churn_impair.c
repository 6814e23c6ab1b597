/*
 * churn_impair.c - a bad network inside the load generator (--impair, a stage's `impair`):
 * an impaired visit talks to the server through a relay socket of its own, which drops,
 * delays, jitters, duplicates and reorders datagrams both ways, so a load test can run on a
 * bad network without root or netem.
 *
 *   the visit's ENet host (127.0.0.1) <-> its relay socket (the address and port the server
 *   sees: the bot's own address when it has one, client_ports.h) <-> server
 *
 * Each datagram's fate is drawn from a splitmix64 stream of its own per visit and direction,
 * seeded from the run's seed, the bot and the visit: the k-th datagram of a visit's one
 * direction meets the same fate in every run with the same seed. Datagrams wait in one
 * min-heap by due time, released by one timer on the run's loop. A relay stops reading when
 * its visit ends; what it had already queued towards the server still goes out (it was on
 * the wire), then its socket closes and its port rests like any visit's.
 */
#include "churn_impair.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "client_clock.h"
#include "client_rng.h"
#include "client_vec.h"

#define CHURN_REORDER_HOLD_MIN 0.010   /* a reordered datagram waits at least this long more */
#define CHURN_RELAY_BUFFER (256 * 1024)

/* ---- the option's text ------------------------------------------------------------------ */

/* ---- fates --------------------------------------------------------------------------------- */

uint64_t churn_impair_seed(uint64_t run_seed, uint32_t bot, uint32_t visit, bool up)
{
    uint64_t s = run_seed ^ 0x1A2B3C4D5E6F7081ull;

    s ^= ((uint64_t)bot << 33) ^ ((uint64_t)visit << 1) ^ (up ? 1u : 0u);
    client_rng_uniform(&s); /* decorrelate neighbouring seeds */
    return s;
}

void churn_impair_decide(const client_impair *im, churn_impair_stream *st, double now,
                         churn_fate *out)
{
    /* Every draw is made whatever the parameters, so one setting changing does not shift the
     * stream the others see. */
    double u_loss = client_rng_uniform(&st->rng), u_jitter = client_rng_uniform(&st->rng);
    double u_dup = client_rng_uniform(&st->rng), u_reorder = client_rng_uniform(&st->rng);
    double due = now + im->latency + im->jitter * (2 * u_jitter - 1);

    out->drop = u_loss < im->loss;
    out->copies = out->drop ? 0 : u_dup < im->dup ? 2 : 1;
    out->reordered = !out->drop && u_reorder < im->reorder;
    if (due < now)
        due = now;
    /* Jitter alone keeps the order (a datagram never leaves before the one sent before it);
     * a reordered one is held back behind those that follow it. */
    if (due < st->last_due)
        due = st->last_due;
    if (out->reordered) {
        due += 2 * im->jitter > CHURN_REORDER_HOLD_MIN ? 2 * im->jitter : CHURN_REORDER_HOLD_MIN;
    } else if (!out->drop) {
        st->last_due = due;
    }
    out->due = due;
}

/* ---- the queue ------------------------------------------------------------------------------ */

static bool datagram_before(const churn_datagram *a, const churn_datagram *b)
{
    return a->due < b->due || (a->due == b->due && a->order < b->order);
}

static void queue_sift_up(churn_impair_queue *q, uint32_t i)
{
    while (i > 0) {
        uint32_t parent = (i - 1) / 2;
        churn_datagram *t;
        if (!datagram_before(q->heap[i], q->heap[parent]))
            break;
        t = q->heap[i], q->heap[i] = q->heap[parent], q->heap[parent] = t;
        i = parent;
    }
}

static void queue_sift_down(churn_impair_queue *q, uint32_t i)
{
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        churn_datagram *t;
        if (l < q->n && datagram_before(q->heap[l], q->heap[m]))
            m = l;
        if (r < q->n && datagram_before(q->heap[r], q->heap[m]))
            m = r;
        if (m == i)
            return;
        t = q->heap[i], q->heap[i] = q->heap[m], q->heap[m] = t;
        i = m;
    }
}

static churn_datagram *queue_alloc(churn_impair_queue *q)
{
    churn_datagram *d = q->free;

    if (d != NULL) {
        q->free = d->next_free;
        return d;
    }
    return malloc(sizeof *d);
}

static bool queue_push(churn_impair_queue *q, churn_datagram *d)
{
    if (!CLIENT_VEC_RESERVE(q->heap, q->cap, (uint64_t)q->n + 1, 256))
        return false;
    d->order = q->order++;
    q->heap[q->n] = d;
    queue_sift_up(q, q->n++);
    return true;
}

static churn_datagram *queue_pop(churn_impair_queue *q)
{
    churn_datagram *d = q->heap[0];

    q->heap[0] = q->heap[--q->n];
    if (q->n > 0)
        queue_sift_down(q, 0);
    return d;
}

static void queue_release(churn_impair_queue *q, churn_datagram *d)
{
    d->next_free = q->free;
    q->free = d;
}

static void relay_free_if_done(churn_relay *r);
static void impair_timer_cb(uv_timer_t *timer);

/* ---- relays --------------------------------------------------------------------------------- */

static void relay_poll_closed_cb(uv_handle_t *handle)
{
    churn_relay *r = handle->data;

    r->poll_open = false;
    relay_free_if_done(r);
}

static void relay_free_if_done(churn_relay *r)
{
    churn_impair *imp = r->imp;

    if (!r->closed || r->poll_open || r->queued > 0)
        return;
    client_ports_rest(imp->ports, r->address.port, churn_since(imp->t0));
    enet_socket_destroy(r->socket);
    if (r->prev != NULL)
        r->prev->next = r->next;
    else
        imp->relays = r->next;
    if (r->next != NULL)
        r->next->prev = r->prev;
    free(r);
}

static void impair_arm(churn_impair *imp)
{
    double wait;

    if (imp->iq.n == 0) {
        uv_timer_stop(&imp->timer);
        return;
    }
    uv_update_time(imp->loop);
    wait = imp->iq.heap[0]->due - churn_since(imp->t0);
    uv_timer_start(&imp->timer, impair_timer_cb,
                   wait > 0 ? (uint64_t)ceil(wait * 1e3) : 0, 0);
}

/* What is due goes out: towards the server from the relay's port, towards the bot's host from
 * the relay (whose address the host knows as the server's). */
static void impair_timer_cb(uv_timer_t *timer)
{
    churn_impair *imp = timer->data;
    double now = churn_since(imp->t0);

    while (imp->iq.n > 0 && imp->iq.heap[0]->due <= now + 0.0005) {
        churn_datagram *d = queue_pop(&imp->iq);
        churn_relay *r = d->relay;
        ENetBuffer buf = { .data = d->data, .dataLength = d->len };

        if (d->up)
            enet_socket_send(r->socket, &imp->server, &buf, 1);
        else if (!r->closed)
            enet_socket_send(r->socket, &r->bot_addr, &buf, 1);
        r->queued--;
        queue_release(&imp->iq, d);
        relay_free_if_done(r);
    }
    impair_arm(imp);
}

static void relay_enqueue(churn_impair *imp, churn_relay *r, bool up, const uint8_t *data,
                          size_t len, double now)
{
    churn_fate fate;

    if (len > CHURN_DATAGRAM_MAX)
        return;
    churn_impair_decide(r->im, &r->stream[up], now, &fate);
    imp->totals->impair_datagrams++;
    imp->totals->impair_dropped += fate.drop;
    imp->totals->impair_duplicated += fate.copies > 1;
    imp->totals->impair_reordered += fate.reordered;
    churn_datagram *head = imp->iq.n > 0 ? imp->iq.heap[0] : NULL;

    for (int k = 0; k < fate.copies; k++) {
        churn_datagram *d = queue_alloc(&imp->iq);
        if (d == NULL)
            return;
        d->relay = r;
        d->up = up;
        d->due = fate.due;
        d->len = (uint32_t)len;
        memcpy(d->data, data, len);
        if (!queue_push(&imp->iq, d)) {
            queue_release(&imp->iq, d);
            return;
        }
        r->queued++;
    }
    if (imp->iq.n > 0 && imp->iq.heap[0] != head)
        impair_arm(imp); /* a new earliest datagram */
}

static void relay_poll_cb(uv_poll_t *handle, int status, int events)
{
    churn_relay *r = handle->data;
    churn_impair *imp = r->imp;
    double now = churn_since(imp->t0);
    uint8_t data[CHURN_DATAGRAM_MAX];

    (void)status;
    (void)events;
    for (int i = 0; i < 256 && !r->closed; i++) {
        ENetAddress from;
        ENetBuffer buf = { .data = data, .dataLength = sizeof data };
        int n = enet_socket_receive(r->socket, &from, &buf, 1);
        bool up;

        if (n <= 0)
            break;
        up = from.host == r->bot_addr.host && from.port == r->bot_addr.port;
        if (!up && (from.host != imp->server.host || from.port != imp->server.port))
            continue; /* neither the visit's host nor the server */
        relay_enqueue(imp, r, up, data, (size_t)n, now);
    }
}

churn_relay *churn_relay_open(churn_impair *imp, const client_impair *im, enet_uint32 source,
                              uint32_t bot, uint32_t visit, double now)
{
    ENetAddress bound;
    ENetSocket s = client_ports_open_socket(imp->ports, source, now, &bound);
    churn_relay *r;

    if (s == ENET_SOCKET_NULL)
        return NULL;
    r = calloc(1, sizeof *r);
    if (r == NULL || uv_poll_init(imp->loop, &r->poll, s) != 0) {
        enet_socket_destroy(s);
        free(r);
        return NULL;
    }
    enet_socket_set_option(s, ENET_SOCKOPT_NONBLOCK, 1);
    enet_socket_set_option(s, ENET_SOCKOPT_RCVBUF, CHURN_RELAY_BUFFER);
    enet_socket_set_option(s, ENET_SOCKOPT_SNDBUF, CHURN_RELAY_BUFFER);
    r->imp = imp;
    r->socket = s;
    r->address = bound;
    r->im = im;
    r->poll.data = r;
    r->poll_open = true;
    r->stream[0].rng = churn_impair_seed(imp->seed, bot, visit, false);
    r->stream[1].rng = churn_impair_seed(imp->seed, bot, visit, true);
    r->next = imp->relays;
    if (imp->relays != NULL)
        imp->relays->prev = r;
    imp->relays = r;
    if (uv_poll_start(&r->poll, UV_READABLE, relay_poll_cb) != 0) {
        churn_relay_close(r);
        return NULL;
    }
    return r;
}

void churn_relay_close(churn_relay *r)
{
    if (r == NULL || r->closed)
        return;
    r->closed = true;
    if (r->poll_open)
        uv_close((uv_handle_t *)&r->poll, relay_poll_closed_cb);
    else
        relay_free_if_done(r);
}

void churn_impair_open(churn_impair *imp, uv_loop_t *loop, ENetAddress server, double t0,
                       uint64_t seed, client_ports *ports, churn_totals *totals)
{
    memset(imp, 0, sizeof *imp);
    imp->loop = loop;
    imp->server = server;
    imp->t0 = t0;
    imp->seed = seed;
    imp->ports = ports;
    imp->totals = totals;
    uv_timer_init(loop, &imp->timer);
    imp->timer.data = imp;
    imp->timer_open = true;
}

void churn_impair_close(churn_impair *imp)
{
    churn_impair_queue *q = &imp->iq;

    /* The run is over: what is still queued is dropped. */
    while (q->n > 0) {
        churn_datagram *d = queue_pop(q);
        d->relay->queued--;
        free(d);
    }
    while (q->free != NULL) {
        churn_datagram *d = q->free;
        q->free = d->next_free;
        free(d);
    }
    free(q->heap);
    memset(q, 0, sizeof *q);
    for (churn_relay *r = imp->relays, *next; r != NULL; r = next) {
        next = r->next;
        if (r->closed)
            relay_free_if_done(r); /* its queue was just dropped */
        else
            churn_relay_close(r);
    }
    if (imp->timer_open)
        uv_close((uv_handle_t *)&imp->timer, NULL);
    imp->timer_open = false;
}
