/*
 * churn_leaks.h - the leak verdict, through the server's admin console: a mark before the
 * first join, then after the run, once every player is gone, a full collection and the objects
 * created since the mark that are still alive.
 */
#ifndef REAP_CLIENT_CHURN_LEAKS_H
#define REAP_CLIENT_CHURN_LEAKS_H

#include <stdbool.h>
#include <stddef.h>

#include "churn_admin.h"
#include "churn_report.h"
#include "client_console.h"

/* Takes the mark (its id into mark, the objects alive then into *out_baseline, -1 unknown);
 * false (err says why) when it cannot be taken: the check cannot run. */
bool churn_leaks_mark(const churn_admin *admin, char *mark, size_t mark_size, long *out_baseline,
                      char *err, size_t err_size);
/* Waits (bounded) for the server to see every player go, collects, and lists what outlived
 * the run into out (out->detail is the caller's to free). con: where to say it is waiting
 * (NULL: quiet). */
void churn_leaks_verdict(const churn_admin *admin, const client_console *con, const char *mark,
                         long baseline, churn_leaks *out);

#endif /* REAP_CLIENT_CHURN_LEAKS_H */
