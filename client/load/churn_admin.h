/*
 * churn_admin.h - the server's admin endpoint as the load generator uses it: its /metrics,
 * sampled once a second without ever blocking the bots' loop, and its console (POST
 * /console) for the leak verdict. Only the --admin address is used.
 */
#ifndef REAP_CLIENT_CHURN_ADMIN_H
#define REAP_CLIENT_CHURN_ADMIN_H

#include <stdbool.h>
#include <stddef.h>

#include "churn_scrape.h"

typedef struct churn_admin churn_admin;

/* url: http://HOST:PORT[/path] (default path /metrics). NULL with a message on a bad URL. */
churn_admin *churn_admin_create(const char *url, char *err, size_t err_size);
void churn_admin_destroy(churn_admin *a);
/* Every request carries 'Authorization: Bearer token' (copied; "" or NULL: none). */
void churn_admin_set_token(churn_admin *a, const char *token);
/* Non-blocking: starts a GET when none is running and `now` is past the next due time, and
 * advances the one running. Returns true when a page was completed into out (t = now). */
bool churn_admin_poll(churn_admin *a, double now, churn_scrape *out);
/* Blocking with a deadline: one GET of path (e.g. "/metrics") or a POST of body to /console.
 * Returns a malloc'ed body (caller frees) or NULL with err set. */
char *churn_admin_request(const churn_admin *a, const char *method, const char *path,
                          const char *body, double timeout, char *err, size_t err_size);

#endif /* REAP_CLIENT_CHURN_ADMIN_H */
