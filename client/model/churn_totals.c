/*
 * churn_totals.c - a run's counts: their names, and merging the counts of shards.
 */
#include "churn_totals.h"

#include <string.h>

const char *const churn_lat_names[CHURN_LAT_COUNT] = {
    "connect", "welcome", "join", "spawn_ack", "spawn_replicated", "rtt", "check", "loop_lag",
    "travel",
};

const char *const churn_error_keys[CHURN_ERR_COUNT] = {
    "connect", "refused", "lost", "timeout", "leave", "mismatch", "server_lost",
};

const char *const churn_error_names[CHURN_ERR_COUNT] = {
    "connect timeouts", "rejected requests", "connections lost", "answer timeouts",
    "unanswered goodbyes", "replication mismatches", "server outages",
};

void churn_totals_init(churn_totals *t)
{
    memset(t, 0, sizeof *t);
    for (int i = 0; i < CHURN_LAT_COUNT; i++)
        hist_init(&t->lat[i]);
}

void churn_totals_merge(churn_totals *dst, const churn_totals *src)
{
    dst->joins += src->joins;
    dst->leaves += src->leaves;
    dst->leaves_abrupt += src->leaves_abrupt;
    dst->spawned += src->spawned;
    dst->projectiles += src->projectiles;
    dst->moves += src->moves;
    dst->checks += src->checks;
    dst->snapshots += src->snapshots;
    dst->unknown_destroys += src->unknown_destroys;
    dst->refused += src->refused;
    dst->refused_busy += src->refused_busy;
    dst->travels += src->travels;
    dst->travel_refused += src->travel_refused;
    dst->gen_cpu_us += src->gen_cpu_us;
    dst->gen_seconds += src->gen_seconds;
    dst->gen_saturated += src->gen_saturated;
    dst->impair_datagrams += src->impair_datagrams;
    dst->impair_dropped += src->impair_dropped;
    dst->impair_duplicated += src->impair_duplicated;
    dst->impair_reordered += src->impair_reordered;
    for (int i = 0; i < CHURN_ERR_COUNT; i++)
        dst->errors[i] += src->errors[i];
    for (int i = 0; i < CHURN_LAT_COUNT; i++)
        hist_merge(&dst->lat[i], &src->lat[i]);
}

uint64_t churn_totals_errors(const churn_totals *t)
{
    uint64_t n = 0;

    for (int i = 0; i < CHURN_ERR_COUNT; i++)
        n += t->errors[i];
    return n;
}
