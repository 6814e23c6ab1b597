/*
 * net_policy.c - token buckets (spawns, requests, moves, and the filter's per channel), the
 * ownership limit, the frame's message budget and the flood rule, the bad-message count.
 */
#include "net_policy.h"

#include <math.h>
#include <string.h>

static void net_bucket_fill(net_bucket *b, double burst, double now)
{
    b->tokens = burst;
    b->updated = now;
}

/* Refills at rate up to burst, then takes n tokens if there are that many. */
static bool net_bucket_take(net_bucket *b, double rate, double burst, double now, double n)
{
    if (now > b->updated) {
        b->tokens += (now - b->updated) * rate;
        b->updated = now;
    }
    if (b->tokens > burst)
        b->tokens = burst;
    if (b->tokens < n)
        return false;
    b->tokens -= n;
    return true;
}

/* The filter's bucket for a channel: moves on the updates channel; on the reliable ones
 * requests, spawn requests (each asks for one actor at least) and a little room for hello and
 * goodbye. */
static void net_channel_bucket(const net_policy_limits *lim, unsigned channel, double *rate,
                               double *burst)
{
    if (channel == NET_POLICY_UPDATES_CHANNEL) {
        *rate = NET_POLICY_FILTER_HEADROOM * lim->move_rate;
        *burst = NET_POLICY_FILTER_HEADROOM * lim->move_rate;
    } else {
        *rate = NET_POLICY_FILTER_HEADROOM * (lim->request_rate + lim->spawn_rate) + 1.0;
        *burst = NET_POLICY_FILTER_HEADROOM * (lim->request_burst + lim->spawn_burst) + 4.0;
    }
}

void net_policy_init(net_policy_state *st, const net_policy_limits *lim, double now)
{
    memset(st, 0, sizeof *st);
    net_bucket_fill(&st->spawns, lim->spawn_burst, now);
    net_bucket_fill(&st->requests, lim->request_burst, now);
    net_bucket_fill(&st->moves, lim->move_rate, now);
    for (unsigned c = 0; c < NET_POLICY_CHANNELS; c++) {
        double rate, burst;
        net_channel_bucket(lim, c, &rate, &burst);
        net_bucket_fill(&st->channels[c], burst, now);
    }
    st->rate_start = now;
}

net_policy_verdict net_policy_check_spawn(net_policy_state *st, const net_policy_limits *lim,
                                          double now, uint32_t owned, uint32_t count)
{
    if (count == 0 || count > lim->max_spawn_per_request)
        return NET_POLICY_BAD_COUNT;
    if ((uint64_t)owned + count > lim->max_actors_per_player)
        return NET_POLICY_OVER_LIMIT;
    if (!net_bucket_take(&st->spawns, lim->spawn_rate, lim->spawn_burst, now, (double)count))
        return NET_POLICY_OVER_RATE;
    return NET_POLICY_ALLOW;
}

net_policy_verdict net_policy_check_request(net_policy_state *st, const net_policy_limits *lim,
                                            double now)
{
    if (!net_bucket_take(&st->requests, lim->request_rate, lim->request_burst, now, 1.0))
        return NET_POLICY_OVER_RATE;
    return NET_POLICY_ALLOW;
}

net_policy_verdict net_policy_check_move(net_policy_state *st, const net_policy_limits *lim,
                                         double now, float vx, float vy)
{
    double speed2 = (double)vx * vx + (double)vy * vy;

    net_policy_verdict v = NET_POLICY_ALLOW;

    if (!isfinite(vx) || !isfinite(vy))
        v = NET_POLICY_BAD_VALUE;
    else if (speed2 > lim->max_pawn_speed * lim->max_pawn_speed)
        v = NET_POLICY_TOO_FAST;
    else if (!net_bucket_take(&st->moves, lim->move_rate, lim->move_rate, now, 1.0))
        v = NET_POLICY_OVER_RATE;
    if (v != NET_POLICY_ALLOW && st->refused_inputs < UINT32_MAX)
        st->refused_inputs++;
    return v;
}

/* Windows of at least a second; a window is closed by the first message after it. */
static void net_rate_note(net_policy_state *st, double now)
{
    double age = now - st->rate_start;

    if (age >= 1.0) {
        st->rate_last = age < 2.0 ? st->rate_count : 0;
        st->rate_start = now;
        st->rate_count = 0;
    }
    if (st->rate_count < UINT32_MAX)
        st->rate_count++;
}

double net_policy_message_rate(const net_policy_state *st, double now)
{
    double age = now - st->rate_start;

    if (age < 1.0)
        return st->rate_last;
    return age < 2.0 ? st->rate_count / age : 0.0;
}

net_policy_verdict net_policy_count(net_policy_state *st, const net_policy_limits *lim,
                                    double now, uint64_t frame)
{
    st->messages++;
    net_rate_note(st, now);
    if (frame != st->frame) {
        st->frame = frame;
        st->frame_messages = 0;
    }
    if (st->frame_messages < UINT32_MAX)
        st->frame_messages++;
    if (st->frame_messages <= lim->max_messages_per_frame)
        return NET_POLICY_ALLOW;
    /* A second with no frame over budget ends the run. */
    if (!st->over_budget || now - st->over_last > 1.0) {
        st->over_budget = true;
        st->over_since = now;
    }
    st->over_last = now;
    return now - st->over_since >= lim->flood_kick_seconds ? NET_POLICY_FLOOD
                                                           : NET_POLICY_OVER_BUDGET;
}

static uint32_t net_add_saturating(uint32_t a, uint32_t b)
{
    return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

void net_policy_count_more(net_policy_state *st, uint32_t n)
{
    st->messages += n;
    st->rate_count = net_add_saturating(st->rate_count, n);
    st->frame_messages = net_add_saturating(st->frame_messages, n);
}

net_policy_verdict net_policy_take(net_policy_state *st, const net_policy_limits *lim,
                                   double now, unsigned channel)
{
    double rate, burst;

    if (channel >= NET_POLICY_CHANNELS)
        return NET_POLICY_ALLOW;
    net_channel_bucket(lim, channel, &rate, &burst);
    return net_bucket_take(&st->channels[channel], rate, burst, now, 1.0) ? NET_POLICY_ALLOW
                                                                          : NET_POLICY_OVER_RATE;
}

bool net_policy_note_bad_message(net_policy_state *st, const net_policy_limits *lim)
{
    if (st->bad_messages < UINT32_MAX)
        st->bad_messages++;
    return st->bad_messages >= lim->max_bad_messages;
}
