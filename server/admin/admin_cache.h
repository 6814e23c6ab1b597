/*
 * admin_cache.h - a rendered admin page kept for a while, so that however many scrapers ask,
 * the loop renders it at most once per admin.MetricsCacheSeconds (GET /metrics, /stats.json).
 *
 * Plain data on the loop thread (libmicrohttpd runs in external epoll mode there: admin.h);
 * time is the caller's, so the rules are unit-tested with a fake clock
 * (tests/unit/test_admin_cache.c).
 */
#ifndef REAP_ADMIN_CACHE_H
#define REAP_ADMIN_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "strbuf.h"

/* Renders the page into out (empty on entry). */
typedef void (*admin_render_fn)(void *ctx, strbuf *out);

typedef struct admin_page_cache {
    strbuf body;
    double rendered_at;     /* the caller's time of the last render */
    bool valid;             /* body holds a render */
    uint64_t renders;       /* renders so far (reap_admin_page_renders_total) */
} admin_page_cache;

void admin_page_cache_init(admin_page_cache *c);
void admin_page_cache_free(admin_page_cache *c);

/* The page as it was at most max_age seconds before now: the copy when it is younger than
 * that, else a new render (max_age 0: every call renders; a clock that went back renders).
 * The body is borrowed until the next call. */
const strbuf *admin_page_cache_get(admin_page_cache *c, double now, double max_age,
                                   admin_render_fn render, void *ctx);

#endif /* REAP_ADMIN_CACHE_H */
