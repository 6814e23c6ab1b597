/*
 * churn_leaks.c - the leak verdict: did the run leave objects behind on the server?
 *
 * Before the first bot joins, the server's console is asked for a leak mark (`gc leaks
 * mark`). After the run, once the server counts no player (abrupt leavers must first time
 * out), a full collection (`obj gc`) runs and `gc leaks since=MARK` lists the objects created
 * since the mark that are still alive, by class, with the reference chain of a few. A clean
 * run leaves none: everything a player brought in went with it.
 */
#include "churn_leaks.h"

#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_clock.h"

#define CHURN_LEAKS_TIMEOUT 5.0          /* per console request */
#define CHURN_LEAKS_DRAIN 40.0           /* at most, for the server to see every player go */

static double churn_leaks_objects(const churn_admin *admin)
{
    char err[200];
    char *page = churn_admin_request(admin, "GET", "/metrics", NULL, CHURN_LEAKS_TIMEOUT,
                                     err, sizeof err);
    churn_scrape s;
    double v = NAN;

    memset(&s, 0, sizeof s);
    if (page != NULL && churn_scrape_parse(&s, page))
        v = churn_scrape_sum(&s, "reap_gc_objects");
    churn_scrape_free(&s);
    free(page);
    return v;
}

bool churn_leaks_mark(const churn_admin *admin, char *mark, size_t mark_size, long *out_baseline,
                      char *err, size_t err_size)
{
    char *reply;
    unsigned id;
    long alive = -1;

    mark[0] = '\0';
    *out_baseline = -1;
    if (admin == NULL) {
        snprintf(err, err_size, "it needs --admin URL (the server's console)");
        return false;
    }
    reply = churn_admin_request(admin, "POST", "/console", "gc leaks mark",
                                CHURN_LEAKS_TIMEOUT, err, err_size);
    if (reply == NULL)
        return false;
    if (sscanf(reply, "leak mark %u: %ld", &id, &alive) < 1) {
        snprintf(err, err_size, "the server has no leak marks (its console does not know `gc "
                 "leaks mark`)");
        free(reply);
        return false;
    }
    snprintf(mark, mark_size, "%u", id);
    *out_baseline = alive;
    free(reply);
    return true;
}

/* Waits (bounded) until the server counts no player: abrupt leavers time out first. */
static bool churn_leaks_drain(const churn_admin *admin)
{
    double deadline = churn_clock() + CHURN_LEAKS_DRAIN;

    while (churn_clock() < deadline) {
        char err[200];
        char *page = churn_admin_request(admin, "GET", "/metrics", NULL, CHURN_LEAKS_TIMEOUT,
                                         err, sizeof err);
        churn_scrape s;
        double players = NAN, conns = NAN;

        memset(&s, 0, sizeof s);
        if (page != NULL && churn_scrape_parse(&s, page)) {
            players = churn_scrape_sum(&s, "reap_players_connected");
            conns = churn_scrape_sum(&s, "reap_net_connections");
        }
        churn_scrape_free(&s);
        free(page);
        if (players == 0 && (isnan(conns) || conns == 0))
            return true;
        poll(NULL, 0, 250);
    }
    return false;
}

void churn_leaks_verdict(const churn_admin *admin, const client_console *con, const char *mark,
                         long baseline, churn_leaks *out)
{
    char err[300], cmd[64];
    char *reply;
    unsigned id;
    long leaked;

    memset(out, 0, sizeof *out);
    out->checked = true;
    out->leaked = -1;
    out->baseline = out->after = -1;
    if (con != NULL)
        client_say(con, "leak verdict: waiting for the server to see every player go, then a "
                   "full collection");
    if (!churn_leaks_drain(admin)) {
        out->detail = strdup("players were still connected after the run: no verdict");
        return;
    }
    reply = churn_admin_request(admin, "POST", "/console", "obj gc", 30.0, err, sizeof err);
    free(reply);
    snprintf(cmd, sizeof cmd, "gc leaks since=%s", mark);
    reply = churn_admin_request(admin, "POST", "/console", cmd, CHURN_LEAKS_TIMEOUT, err,
                                sizeof err);
    if (reply == NULL) {
        out->detail = strdup(err);
        return;
    }
    out->supported = true;
    out->detail = reply;
    if (sscanf(reply, "leaks since mark %u: %ld", &id, &leaked) == 2)
        out->leaked = leaked;
    {
        double after = churn_leaks_objects(admin);
        out->after = isnan(after) ? -1 : (long)after;
    }
    out->baseline = baseline;
}
