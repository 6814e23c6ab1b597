/*
 * net_policy.c - spawn token bucket, ownership limit, bad-message count.
 */
#include "net_policy.h"

#include <math.h>

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

void net_policy_init(net_policy_state *st, const net_policy_limits *lim, double now)
{
    net_bucket_fill(&st->spawns, lim->spawn_burst, now);
    net_bucket_fill(&st->requests, lim->request_burst, now);
    net_bucket_fill(&st->moves, lim->move_rate, now);
    st->bad_messages = 0;
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

    if (!isfinite(vx) || !isfinite(vy))
        return NET_POLICY_BAD_VALUE;
    if (speed2 > lim->max_pawn_speed * lim->max_pawn_speed)
        return NET_POLICY_TOO_FAST;
    if (!net_bucket_take(&st->moves, lim->move_rate, lim->move_rate, now, 1.0))
        return NET_POLICY_OVER_RATE;
    return NET_POLICY_ALLOW;
}

bool net_policy_note_bad_message(net_policy_state *st, const net_policy_limits *lim)
{
    if (st->bad_messages < UINT32_MAX)
        st->bad_messages++;
    return st->bad_messages >= lim->max_bad_messages;
}
