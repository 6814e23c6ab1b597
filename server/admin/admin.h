/*
 * admin.h - the admin HTTP endpoint (libmicrohttpd) on the engine's loop.
 *
 *   GET  /          the live GC dashboard, a read-only page (dashboard.h)
 *   GET  /stats.json the dashboard's last ten minutes, once-a-second samples
 *   GET  /metrics   Prometheus text format (admin_metrics.c)
 *   (both rendered at most once per admin.MetricsCacheSeconds and served from that copy
 *   meanwhile: admin_cache.h)
 *   GET  /healthz   "ok"
 *   POST /console   body: one console command; reply: its text output. With an admin token
 *                   (--admin-token) it needs "Authorization: Bearer TOKEN", else 401.
 *
 * libmicrohttpd runs in external epoll mode: its epoll descriptor is watched by a uv_poll
 * handle and MHD_run is called when it is readable and when MHD's own timeout expires, so
 * every request is served on the loop thread between frames.
 */
#ifndef REAP_ADMIN_H
#define REAP_ADMIN_H

#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

typedef struct engine engine;
typedef struct admin_server admin_server;

/* Listens on bind:port (port 0 = any free port). *out_admin: close with admin_close. */
int admin_create(engine *e, const char *bind, uint32_t port, admin_server **out_admin,
                 char *err, size_t err_size);
uint32_t admin_port(const admin_server *a);
/* /console requests refused with 401 so far. */
uint64_t admin_unauthorized_count(const admin_server *a);
/* Renders of a cached page so far (reap_admin_page_renders_total{page}). */
typedef enum admin_page { ADMIN_PAGE_METRICS = 0, ADMIN_PAGE_STATS } admin_page;
uint64_t admin_page_renders(const admin_server *a, admin_page p);
/* Stops the daemon; the memory goes once libuv has closed the handles. */
void admin_close(admin_server *a);

/* The /metrics page. */
void admin_metrics_render(engine *e, strbuf *out);

#endif /* REAP_ADMIN_H */
