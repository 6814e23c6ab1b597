/*
 * report_merge.h - one run model from the run models of its shards (`reap-client merge`, and
 * --procs after its shards end).
 *
 * Counts and latency histograms add up exactly (the buckets are the same in every process).
 * The server's figures were sampled by every shard that had --admin: they are taken once,
 * from the first shard that has them, with its collections and object samples; timeline rows
 * add the bots' counts second by second. The stretches without a server are their union (the
 * shards lost the same server), and the merge is partial when a shard's report is.
 */
#ifndef REAP_CLIENT_REPORT_MERGE_H
#define REAP_CLIENT_REPORT_MERGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "churn_report.h"

/* What merging has gathered so far. */
typedef struct churn_merge {
    churn_report *merged;     /* borrowed; merged->tl is the merged timeline */
    uint32_t reports;         /* added so far */
    bool have_server;         /* the server's figures are taken */
} churn_merge;

/* Starts a merge into r (whose tl points at an initialised, empty timeline). */
void churn_merge_begin(churn_merge *m, churn_report *r);
/* Adds one shard's report (its timeline in one->tl). The first one gives the run's identity
 * (id, scenario, seed, server). */
void churn_merge_add(churn_merge *m, const churn_report *one);
/* Adds the threshold `text` to list (of *n) unless the same text is there already; false
 * with err when it does not parse or the list is full (CLIENT_THRESHOLDS_MAX). */
bool churn_merge_add_threshold(client_threshold *list, uint32_t *n, const char *text, char *err,
                               size_t err_size);

#endif /* REAP_CLIENT_REPORT_MERGE_H */
