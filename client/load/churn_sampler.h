/*
 * churn_sampler.h - the server's figures from its admin /metrics (--admin), read a page a
 * second without blocking the bots' loop: the run's (the deltas between the first and the
 * last page: frames, tick and phase percentiles, collections, bytes, CPU, memory), each
 * second's for its timeline row, and each travel's (reap_travel_last_*, the objects, resident
 * memory and leaked worlds after it) for its match.
 */
#ifndef REAP_CLIENT_CHURN_SAMPLER_H
#define REAP_CLIENT_CHURN_SAMPLER_H

#include <stdbool.h>

#include "churn_admin.h"
#include "churn_report.h"
#include "churn_scrape.h"

typedef struct churn_sampler {
    churn_admin *admin;       /* borrowed; NULL: nothing is sampled */
    churn_scrape fresh;       /* the page being read */
    churn_scrape first, last, row; /* the run's first and newest pages; the row's first */
    bool have_first, have_row;
    churn_server server;      /* the run's figures, complete after churn_sampler_finish */
    double players_sum;       /* players connected, summed over the pages */
    double travels;           /* reap_travels_total, every mode, at the last page (-1: none) */
} churn_sampler;

void churn_sampler_init(churn_sampler *s, churn_admin *admin);
void churn_sampler_free(churn_sampler *s);
/* Advances the page being read; a complete one is folded in (its objects by class onto tl). */
void churn_sampler_poll(churn_sampler *s, churn_timeline *tl, double now);
/* The /metrics figures of the second that ends now, into row: between the row's first page
 * and the newest. */
void churn_sampler_row(churn_sampler *s, churn_row *row);
/* The run's server figures into s->server: the deltas between the first and the last page. */
void churn_sampler_finish(churn_sampler *s);

#endif /* REAP_CLIENT_CHURN_SAMPLER_H */
