/*
 * churn_meter.h - where a live run's samples land: every count and latency goes into the
 * run's totals and into the second being counted (a timeline row when it closes), and the
 * first error and the first replication mismatch are kept in full for the summary. The load
 * (load/) records into it; nothing in it knows how a sample was taken.
 */
#ifndef REAP_CLIENT_CHURN_METER_H
#define REAP_CLIENT_CHURN_METER_H

#include <stdbool.h>
#include <stdint.h>

#include "churn_outage.h"
#include "churn_totals.h"

/* Counts of the second being measured (a timeline row's). */
typedef struct churn_counts {
    uint32_t joins, leaves, leaves_abrupt, spawned, errors, refused;
    double lag_max;           /* the latest turn of the loop this second, seconds */
} churn_counts;

typedef struct churn_meter {
    churn_totals totals;      /* the whole run's */
    churn_counts second;      /* this second's; cleared when its row closes */
    char first_error[400];
    char first_mismatch[400]; /* the first replication mismatch, in full */
    uint64_t undecodable;     /* server messages msg_decode refused (a mirror would miss them) */
    churn_outages outages;    /* when the server did not answer */
} churn_meter;

void churn_meter_init(churn_meter *m);
/* An error of kind; fmt describes it (kept when it is the run's first). */
void churn_meter_error(churn_meter *m, churn_error kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The run's first error, whatever came before: a failure that ends the run. */
void churn_meter_fail(churn_meter *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A replication mismatch described in full (kept when it is the run's first; the error is
 * counted apart, with churn_meter_error). */
void churn_meter_mismatch(churn_meter *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A latency of kind, in seconds (recorded in microseconds; negative counts as 0). */
void churn_meter_latency(churn_meter *m, churn_lat kind, double seconds);
void churn_meter_join(churn_meter *m);
/* A refusal ("server full", or busy when busy): the server working as designed, not an
 * error. */
void churn_meter_refused(churn_meter *m, bool busy);
/* The server stopped answering at `from` (the last moment anything was heard from it): an
 * error of its own kind, and a stretch without a server, which ends when it is heard again
 * (churn_meter_server_back). */
void churn_meter_server_lost(churn_meter *m, double from);
void churn_meter_server_back(churn_meter *m, double at);
void churn_meter_leave(churn_meter *m, bool abrupt);

#endif /* REAP_CLIENT_CHURN_METER_H */
