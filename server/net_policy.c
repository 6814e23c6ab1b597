/*
 * net_policy.c - spawn token bucket, ownership limit, bad-message count.
 */
#include "net_policy.h"

void net_policy_init(net_policy_state *st, const net_policy_limits *lim, double now)
{
    st->tokens = lim->spawn_burst;
    st->updated = now;
    st->bad_messages = 0;
}

static void net_policy_refill(net_policy_state *st, const net_policy_limits *lim, double now)
{
    if (now > st->updated) {
        st->tokens += (now - st->updated) * lim->spawn_rate;
        st->updated = now;
    }
    if (st->tokens > lim->spawn_burst)
        st->tokens = lim->spawn_burst;
}

net_policy_verdict net_policy_check_spawn(net_policy_state *st, const net_policy_limits *lim,
                                          double now, uint32_t owned, uint32_t count)
{
    if (count == 0 || count > lim->max_spawn_per_request)
        return NET_POLICY_BAD_COUNT;
    if ((uint64_t)owned + count > lim->max_actors_per_player)
        return NET_POLICY_OVER_LIMIT;
    net_policy_refill(st, lim, now);
    if (st->tokens < (double)count)
        return NET_POLICY_OVER_RATE;
    st->tokens -= (double)count;
    return NET_POLICY_ALLOW;
}

bool net_policy_note_bad_message(net_policy_state *st, const net_policy_limits *lim)
{
    if (st->bad_messages < UINT32_MAX)
        st->bad_messages++;
    return st->bad_messages >= lim->max_bad_messages;
}
