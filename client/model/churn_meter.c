/*
 * churn_meter.c - a live run's samples into its totals and its second (see churn_meter.h).
 */
#include "churn_meter.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void churn_meter_init(churn_meter *m)
{
    memset(m, 0, sizeof *m);
    churn_totals_init(&m->totals);
}

void churn_meter_error(churn_meter *m, churn_error kind, const char *fmt, ...)
{
    va_list ap;

    m->totals.errors[kind]++;
    m->second.errors++;
    if (m->first_error[0] != '\0')
        return;
    va_start(ap, fmt);
    vsnprintf(m->first_error, sizeof m->first_error, fmt, ap);
    va_end(ap);
}

void churn_meter_fail(churn_meter *m, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(m->first_error, sizeof m->first_error, fmt, ap);
    va_end(ap);
}

void churn_meter_mismatch(churn_meter *m, const char *fmt, ...)
{
    va_list ap;

    if (m->first_mismatch[0] != '\0')
        return;
    va_start(ap, fmt);
    vsnprintf(m->first_mismatch, sizeof m->first_mismatch, fmt, ap);
    va_end(ap);
}

void churn_meter_latency(churn_meter *m, churn_lat kind, double seconds)
{
    hist_record(&m->totals.lat[kind], seconds > 0 ? (uint64_t)(seconds * 1e6 + 0.5) : 0);
}

void churn_meter_join(churn_meter *m)
{
    m->second.joins++;
    m->totals.joins++;
}

void churn_meter_leave(churn_meter *m, bool abrupt)
{
    m->second.leaves++;
    m->totals.leaves++;
    if (abrupt) {
        m->second.leaves_abrupt++;
        m->totals.leaves_abrupt++;
    }
}

void churn_meter_refused(churn_meter *m, bool busy)
{
    m->second.refused++;
    m->totals.refused++;
    m->totals.refused_busy += busy;
}

void churn_meter_server_lost(churn_meter *m, double from)
{
    churn_meter_error(m, CHURN_ERR_SERVER_LOST, "the server stopped answering at %.1f s", from);
    churn_outages_begin(&m->outages, from);
}

void churn_meter_server_back(churn_meter *m, double at)
{
    churn_outages_end(&m->outages, at);
}
