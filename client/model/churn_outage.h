/*
 * churn_outage.h - the stretches of a run when the server did not answer (load/churn_watch.c
 * finds them): each from the last moment anything was heard from it to the first moment it
 * was heard again, or open when the run ended without it. Shards of one run that lost the
 * same server lost it once: their stretches merge as a union.
 */
#ifndef REAP_CLIENT_CHURN_OUTAGE_H
#define REAP_CLIENT_CHURN_OUTAGE_H

#include <stdbool.h>
#include <stdint.h>

enum { CHURN_OUTAGES_MAX = 32 };

/* Seconds since the run's start; to < 0: the server had not answered again by the end. */
typedef struct churn_outage {
    double from, to;
} churn_outage;

/* In order of from, none overlapping. Past CHURN_OUTAGES_MAX a new stretch is folded into the
 * last one (which then spans both), so the seconds without a server are never undercounted. */
typedef struct churn_outages {
    churn_outage list[CHURN_OUTAGES_MAX];
    uint32_t n;
} churn_outages;

/* The server stopped answering at from (after the last stretch, which has ended). */
void churn_outages_begin(churn_outages *o, double from);
/* ... and answered again at to: the open stretch ends. */
void churn_outages_end(churn_outages *o, double to);
/* Whether the last stretch is still open. */
bool churn_outages_open(const churn_outages *o);
/* Seconds of [0, elapsed] the server did not answer (an open stretch lasts to elapsed). */
double churn_outages_seconds(const churn_outages *o, double elapsed);
/* dst becomes the union of dst and src. */
void churn_outages_merge(churn_outages *dst, const churn_outages *src);
/* Whether [from, to] (seconds) overlaps a stretch. */
bool churn_outages_overlap(const churn_outages *o, double from, double to);

#endif /* REAP_CLIENT_CHURN_OUTAGE_H */
