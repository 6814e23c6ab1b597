/*
 * admin.c - libmicrohttpd in external epoll mode, driven by the engine's libuv loop.
 *
 * Why admin_run may call MHD_run twice: at its connection limit libmicrohttpd takes the listen
 * socket out of its epoll set, and puts it back only at the start of a later MHD_run. When the
 * last connections close (or time out) inside a run, that run ends with the listen socket still
 * out of the set and, with no connection left, MHD_get_timeout reports no deadline: nothing
 * would ever wake the loop for MHD again, and new connections would wait in the backlog for
 * good. So a run that closed connections is followed by one more, and the timer never sleeps
 * longer than ADMIN_MAX_SLEEP_MS whatever MHD says.
 */
#include "admin.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <uv.h>

#include "admin_cache.h"
#include "console.h"
#include "dashboard.h"
#include "engine.h"
#include "log.h"

enum {
    ADMIN_MAX_BODY = 4096,      /* one console command */
    ADMIN_MAX_CONNECTIONS = 32,
    ADMIN_MAX_PER_ADDRESS = 8,  /* one client address cannot take the whole endpoint */
    ADMIN_IDLE_TIMEOUT_S = 10,
    ADMIN_MAX_SLEEP_MS = 1000,
};

struct admin_server {
    engine *engine;
    struct MHD_Daemon *daemon;
    uv_poll_t poll;             /* MHD's epoll descriptor */
    uv_timer_t timer;           /* MHD's own timeouts */
    int open_handles;
    uint32_t port;
    strbuf page;                /* reused for every console response */
    admin_page_cache metrics;   /* GET /metrics, at most once per admin.MetricsCacheSeconds */
    admin_page_cache stats;     /* GET /stats.json, likewise */
    uint64_t requests;
    uint64_t unauthorized;      /* /console requests refused for a missing or wrong token */
    unsigned int connections;   /* open, as MHD's connection notifications count them */
    const char *token;          /* borrowed from the engine's options; "" = none */
};

/* Per-request state while a POST body arrives. */
typedef struct admin_request {
    char body[ADMIN_MAX_BODY + 1];
    size_t len;
    bool too_large;
} admin_request;

static enum MHD_Result admin_respond(struct MHD_Connection *conn, unsigned int status,
                                     const char *content_type, const char *text, size_t len)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, (void *)text, MHD_RESPMEM_MUST_COPY);
    enum MHD_Result r;

    if (resp == NULL)
        return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
    r = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return r;
}

static enum MHD_Result admin_text(struct MHD_Connection *conn, unsigned int status,
                                  const char *text)
{
    return admin_respond(conn, status, "text/plain; charset=utf-8", text, strlen(text));
}

static enum MHD_Result admin_console(admin_server *a, struct MHD_Connection *conn,
                                     const char *upload_data, size_t *upload_size,
                                     void **req_cls)
{
    admin_request *req = *req_cls;
    console_status st;

    if (req == NULL) {
        req = calloc(1, sizeof *req);
        if (req == NULL)
            return MHD_NO;
        *req_cls = req;
        return MHD_YES;
    }
    if (*upload_size > 0) {
        if (req->len + *upload_size > ADMIN_MAX_BODY)
            req->too_large = true;
        else {
            memcpy(req->body + req->len, upload_data, *upload_size);
            req->len += *upload_size;
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (req->too_large)
        return admin_text(conn, MHD_HTTP_CONTENT_TOO_LARGE,
                          "console command too long (at most 4096 bytes)\n");
    req->body[req->len] = '\0';
    strbuf_reset(&a->page);
    st = console_execute(a->engine, req->body, &a->page);
    /* A command may change what the pages show (a cvar, a collection): the next request
     * renders anew, so an operator sees what the command did. */
    a->metrics.valid = false;
    a->stats.valid = false;
    return admin_respond(conn, st == CONSOLE_OK ? MHD_HTTP_OK : MHD_HTTP_BAD_REQUEST,
                         "text/plain; charset=utf-8", strbuf_cstr(&a->page), a->page.len);
}

/* Compares in time that depends only on the lengths, never on where the first difference is. */
static bool admin_token_equal(const char *given, const char *want)
{
    size_t glen = strlen(given), wlen = strlen(want);
    unsigned char diff = (unsigned char)(glen != wlen);

    for (size_t i = 0; i < wlen; i++)
        diff |= (unsigned char)(want[i] ^ (i < glen ? given[i] : 0));
    return diff == 0;
}

/* With a token configured, /console needs "Authorization: Bearer TOKEN". */
static bool admin_authorized(const admin_server *a, struct MHD_Connection *conn)
{
    const char *auth;
    const char *prefix = "Bearer ";

    if (a->token == NULL || a->token[0] == '\0')
        return true;
    auth = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    if (auth == NULL || strncasecmp(auth, prefix, strlen(prefix)) != 0)
        return false;
    auth += strlen(prefix);
    while (*auth == ' ')
        auth++;
    return admin_token_equal(auth, a->token);
}

static enum MHD_Result admin_unauthorized(admin_server *a, struct MHD_Connection *conn)
{
    static const char text[] =
        "unauthorized: POST /console needs 'Authorization: Bearer TOKEN' (--admin-token)\n";
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
    enum MHD_Result r;

    a->unauthorized++;
    if (resp == NULL)
        return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"reap\"");
    r = MHD_queue_response(conn, MHD_HTTP_UNAUTHORIZED, resp);
    MHD_destroy_response(resp);
    return r;
}

static void admin_render_metrics_cb(void *ctx, strbuf *out)
{
    admin_metrics_render(((admin_server *)ctx)->engine, out);
}

static void admin_render_stats_cb(void *ctx, strbuf *out)
{
    engine *e = ((admin_server *)ctx)->engine;

    dashboard_render_json(e->dashboard, engine_now(e), out);
}

/* A cached page: rendered on the loop at most once per admin.MetricsCacheSeconds, whatever the
 * number of requests, so the frames' cost stays flat under a crowd of scrapers. */
static enum MHD_Result admin_cached(admin_server *a, struct MHD_Connection *conn,
                                    admin_page_cache *c, admin_render_fn render,
                                    const char *content_type)
{
    double max_age = cvar_get(&a->engine->cvars, CVAR_ADMIN_METRICS_CACHE_SECONDS);
    const strbuf *body = admin_page_cache_get(c, engine_now(a->engine), max_age, render, a);

    return admin_respond(conn, MHD_HTTP_OK, content_type, strbuf_cstr(body), body->len);
}

uint64_t admin_page_renders(const admin_server *a, admin_page p)
{
    return p == ADMIN_PAGE_METRICS ? a->metrics.renders : a->stats.renders;
}

static enum MHD_Result admin_handler_cb(void *cls, struct MHD_Connection *conn, const char *url,
                                        const char *method, const char *version,
                                        const char *upload_data, size_t *upload_size,
                                        void **req_cls)
{
    admin_server *a = cls;
    bool is_get = strcmp(method, MHD_HTTP_METHOD_GET) == 0 ||
                  strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;

    (void)version;
    if (strcmp(url, "/console") == 0) {
        if (strcmp(method, MHD_HTTP_METHOD_POST) != 0)
            return admin_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "POST a console command\n");
        if (*req_cls == NULL && !admin_authorized(a, conn))
            return admin_unauthorized(a, conn);
        return admin_console(a, conn, upload_data, upload_size, req_cls);
    }
    if (*upload_size > 0) {
        *upload_size = 0; /* ignore bodies sent to other paths */
        return MHD_YES;
    }
    a->requests++;
    if (strcmp(url, "/metrics") == 0) {
        if (!is_get)
            return admin_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET /metrics\n");
        return admin_cached(a, conn, &a->metrics, admin_render_metrics_cb,
                            "text/plain; version=0.0.4; charset=utf-8");
    }
    if (strcmp(url, "/healthz") == 0) {
        if (!is_get)
            return admin_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET /healthz\n");
        return admin_text(conn, MHD_HTTP_OK, a->engine->stopping ? "stopping\n" : "ok\n");
    }
    if (strcmp(url, "/") == 0) {
        if (!is_get)
            return admin_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET /\n");
        return admin_respond(conn, MHD_HTTP_OK, "text/html; charset=utf-8", dashboard_page_html,
                             dashboard_page_html_len);
    }
    if (strcmp(url, "/stats.json") == 0) {
        if (!is_get)
            return admin_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET /stats.json\n");
        if (a->engine->dashboard == NULL)
            return admin_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "no samples yet\n");
        return admin_cached(a, conn, &a->stats, admin_render_stats_cb, "application/json");
    }
    return admin_text(conn, MHD_HTTP_NOT_FOUND,
                      "not found: try GET / (dashboard), GET /stats.json, GET /metrics, "
                      "GET /healthz or POST /console\n");
}

static void admin_completed_cb(void *cls, struct MHD_Connection *conn, void **req_cls,
                               enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    free(*req_cls);
    *req_cls = NULL;
}

static void admin_connection_cb(void *cls, struct MHD_Connection *conn, void **socket_context,
                                enum MHD_ConnectionNotificationCode toe)
{
    admin_server *a = cls;

    (void)conn;
    (void)socket_context;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED)
        a->connections++;
    else if (a->connections > 0)
        a->connections--;
    log_debug("admin: %u connection(s) open", a->connections);
}

static void admin_timer_cb(uv_timer_t *timer);

/* Runs MHD (again if connections closed: see the top of the file) and re-arms the timer with
 * MHD's next deadline, never later than ADMIN_MAX_SLEEP_MS. */
static void admin_run(admin_server *a)
{
    MHD_UNSIGNED_LONG_LONG timeout_ms = ADMIN_MAX_SLEEP_MS;
    unsigned int before = a->connections;

    MHD_run(a->daemon);
    if (a->connections < before)
        MHD_run(a->daemon);
    if (MHD_get_timeout(a->daemon, &timeout_ms) != MHD_YES || timeout_ms > ADMIN_MAX_SLEEP_MS)
        timeout_ms = ADMIN_MAX_SLEEP_MS;
    uv_timer_start(&a->timer, admin_timer_cb, (uint64_t)timeout_ms, 0);
}

static void admin_timer_cb(uv_timer_t *timer)
{
    admin_run(timer->data);
}

static void admin_poll_cb(uv_poll_t *handle, int status, int events)
{
    (void)status;
    (void)events;
    admin_run(handle->data);
}

static void admin_log_cb(void *cls, const char *fmt, va_list ap)
{
    char line[256];
    size_t n;

    (void)cls;
    vsnprintf(line, sizeof line, fmt, ap);
    n = strlen(line);
    while (n > 0 && line[n - 1] == '\n')
        line[--n] = '\0';
    log_debug("admin: %s", line);
}

int admin_create(engine *e, const char *bind, uint32_t port, admin_server **out_admin,
                 char *err, size_t err_size)
{
    admin_server *a = calloc(1, sizeof *a);
    struct sockaddr_in sin;
    const union MHD_DaemonInfo *info;
    int r;

    if (a == NULL) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, bind, &sin.sin_addr) != 1) {
        snprintf(err, err_size, "bad admin bind address '%s': expected an IPv4 address", bind);
        free(a);
        return -1;
    }
    a->engine = e;
    a->token = e->opts.admin_token;
    strbuf_init(&a->page);
    admin_page_cache_init(&a->metrics);
    admin_page_cache_init(&a->stats);
    a->daemon = MHD_start_daemon(
        MHD_USE_EPOLL | MHD_USE_ERROR_LOG, (uint16_t)port, NULL, NULL, admin_handler_cb, a,
        MHD_OPTION_EXTERNAL_LOGGER, admin_log_cb, a,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sin,
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int)ADMIN_MAX_CONNECTIONS,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)ADMIN_MAX_PER_ADDRESS,
        MHD_OPTION_NOTIFY_CONNECTION, admin_connection_cb, a,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)ADMIN_IDLE_TIMEOUT_S,
        MHD_OPTION_NOTIFY_COMPLETED, admin_completed_cb, a,
        MHD_OPTION_END);
    if (a->daemon == NULL) {
        snprintf(err, err_size, "cannot start the admin endpoint on %s:%u (port in use?)", bind,
                 port);
        free(a);
        return -1;
    }
    info = MHD_get_daemon_info(a->daemon, MHD_DAEMON_INFO_BIND_PORT);
    a->port = info != NULL ? info->port : port;
    info = MHD_get_daemon_info(a->daemon, MHD_DAEMON_INFO_EPOLL_FD);
    if (info == NULL) {
        snprintf(err, err_size, "admin endpoint: libmicrohttpd has no epoll descriptor");
        MHD_stop_daemon(a->daemon);
        free(a);
        return -1;
    }
    uv_timer_init(e->loop, &a->timer);
    a->timer.data = a;
    a->open_handles = 1;
    r = uv_poll_init(e->loop, &a->poll, info->epoll_fd);
    if (r == 0) {
        a->poll.data = a;
        a->open_handles++;
        r = uv_poll_start(&a->poll, UV_READABLE, admin_poll_cb);
    }
    if (r != 0) {
        snprintf(err, err_size, "admin endpoint: cannot watch its descriptor: %s",
                 uv_strerror(r));
        admin_close(a);
        return -1;
    }
    admin_run(a);
    *out_admin = a;
    return 0;
}

uint32_t admin_port(const admin_server *a)
{
    return a->port;
}

uint64_t admin_unauthorized_count(const admin_server *a)
{
    return a->unauthorized;
}

static void admin_close_cb(uv_handle_t *handle)
{
    admin_server *a = handle->data;

    if (--a->open_handles == 0) {
        strbuf_free(&a->page);
        admin_page_cache_free(&a->metrics);
        admin_page_cache_free(&a->stats);
        free(a);
    }
}

void admin_close(admin_server *a)
{
    if (a == NULL)
        return;
    /* Stop watching MHD's descriptor before MHD closes it. */
    if (a->open_handles == 2)
        uv_poll_stop(&a->poll);
    uv_timer_stop(&a->timer);
    MHD_stop_daemon(a->daemon);
    a->daemon = NULL;
    if (a->open_handles == 2)
        uv_close((uv_handle_t *)&a->poll, admin_close_cb);
    uv_close((uv_handle_t *)&a->timer, admin_close_cb);
}
