/*
 * churn_outage.c - the stretches without a server, and their union across shards (see
 * churn_outage.h).
 */
#include "churn_outage.h"

#include <math.h>

/* An open stretch ends at +infinity for ordering and union. */
static double outage_end(const churn_outage *x)
{
    return x->to < 0 ? INFINITY : x->to;
}

void churn_outages_begin(churn_outages *o, double from)
{
    if (o->n == CHURN_OUTAGES_MAX) {
        o->list[o->n - 1].to = -1; /* folded: the last stretch now reaches this one */
        return;
    }
    o->list[o->n].from = from;
    o->list[o->n].to = -1;
    o->n++;
}

void churn_outages_end(churn_outages *o, double to)
{
    if (churn_outages_open(o))
        o->list[o->n - 1].to = to < o->list[o->n - 1].from ? o->list[o->n - 1].from : to;
}

bool churn_outages_open(const churn_outages *o)
{
    return o->n > 0 && o->list[o->n - 1].to < 0;
}

double churn_outages_seconds(const churn_outages *o, double elapsed)
{
    double sum = 0;

    for (uint32_t i = 0; i < o->n; i++) {
        double from = o->list[i].from < 0 ? 0 : o->list[i].from;
        double to = o->list[i].to < 0 || o->list[i].to > elapsed ? elapsed : o->list[i].to;

        if (to > from)
            sum += to - from;
    }
    return sum;
}

void churn_outages_merge(churn_outages *dst, const churn_outages *src)
{
    churn_outage all[2 * CHURN_OUTAGES_MAX];
    uint32_t n = 0, i = 0, k = 0;

    /* Both lists are in order: merge them by start, then join what overlaps. */
    while (i < dst->n || k < src->n) {
        bool take_dst = k >= src->n || (i < dst->n && dst->list[i].from <= src->list[k].from);
        churn_outage next = take_dst ? dst->list[i++] : src->list[k++];

        if (n > 0 && next.from <= outage_end(&all[n - 1])) {
            if (outage_end(&next) > outage_end(&all[n - 1]))
                all[n - 1].to = next.to;
            continue;
        }
        all[n++] = next;
    }
    dst->n = 0;
    for (uint32_t j = 0; j < n; j++) {
        if (dst->n == CHURN_OUTAGES_MAX) {
            dst->list[dst->n - 1].to = all[n - 1].to; /* the rest folded into the last */
            break;
        }
        dst->list[dst->n++] = all[j];
    }
}

bool churn_outages_overlap(const churn_outages *o, double from, double to)
{
    for (uint32_t i = 0; i < o->n; i++)
        if (o->list[i].from <= to && outage_end(&o->list[i]) >= from)
            return true;
    return false;
}
