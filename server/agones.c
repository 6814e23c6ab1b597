/*
 * agones.c - the Agones SDK sidecar over REST, libcurl multi on the libuv loop (see agones.h).
 *
 * One request is in flight at a time; the rest wait in a FIFO. libcurl tells us which sockets
 * to watch (agones_socket_cb: one uv_poll each) and when to call it back (agones_curl_timer_cb:
 * one uv_timer); whatever libuv reports goes back through curl_multi_socket_action, and
 * finished transfers are collected in agones_collect.
 */
#include "agones.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "log.h"

enum {
    AGONES_QUEUE_MAX = 1024,       /* requests waiting; more are dropped with a warning */
    AGONES_REQUEST_TIMEOUT_MS = 2000,
    AGONES_BODY_MAX = 512,
};

typedef enum agones_kind {
    AGONES_REQ_STATE,   /* ready, labels, players, shutdown: retried until the sidecar answers */
    AGONES_REQ_HEALTH,  /* never retried: the next period sends another */
} agones_kind;

typedef struct agones_request {
    struct agones_request *next;
    agones_kind kind;
    const char *method;
    char path[96];
    char body[AGONES_BODY_MAX];
} agones_request;

/* A socket libcurl asked us to watch. */
typedef struct agones_socket {
    uv_poll_t poll;
    curl_socket_t fd;
    agones *owner;
    struct agones_socket *next, *prev; /* every socket still watched */
} agones_socket;

struct agones {
    uv_loop_t *loop;
    agones_config cfg;
    CURLM *multi;
    CURL *easy;                  /* the transfer in flight, or NULL */
    struct curl_slist *headers;
    agones_request *head, *tail; /* head is the one in flight (or next to go) */
    uint32_t queued;
    bool health_queued;
    uv_timer_t curl_timer;       /* libcurl's timeouts */
    uv_timer_t health_timer;
    uv_timer_t retry_timer;      /* backoff before resending the head */
    uv_timer_t close_timer;      /* the exit deadline */
    int open_handles;            /* timers and socket polls still open */
    agones_socket *sockets;
    uint32_t retry_ms;
    bool unreachable;            /* the last attempt failed; logged once per episode */
    bool closing;
    bool ready_sent;
};

static void agones_start_next(agones *a);
static void agones_maybe_free(agones *a);

/* ---- the queue -------------------------------------------------------------------------- */

static void agones_enqueue(agones *a, agones_kind kind, const char *method, const char *path,
                           const char *body)
{
    agones_request *r;

    if (a == NULL || a->multi == NULL)
        return;
    if (a->queued >= AGONES_QUEUE_MAX) {
        log_warn("agones: %u requests waiting for the sidecar; dropping %s %s", a->queued,
                 method, path);
        return;
    }
    r = calloc(1, sizeof *r);
    if (r == NULL)
        return;
    r->kind = kind;
    r->method = method;
    snprintf(r->path, sizeof r->path, "%s", path);
    snprintf(r->body, sizeof r->body, "%s", body);
    if (a->tail != NULL)
        a->tail->next = r;
    else
        a->head = r;
    a->tail = r;
    a->queued++;
    if (kind == AGONES_REQ_HEALTH)
        a->health_queued = true;
    agones_start_next(a);
}

static void agones_pop(agones *a)
{
    agones_request *r = a->head;

    if (r == NULL)
        return;
    a->head = r->next;
    if (a->head == NULL)
        a->tail = NULL;
    if (r->kind == AGONES_REQ_HEALTH)
        a->health_queued = false;
    a->queued--;
    free(r);
}

/* ---- libcurl on libuv -------------------------------------------------------------------- */

static size_t agones_discard_cb(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    (void)ptr;
    (void)userdata;
    return size * nmemb;
}

static void agones_handle_closed_cb(uv_handle_t *handle)
{
    agones *a = handle->data;

    a->open_handles--;
    agones_maybe_free(a);
}

static void agones_socket_closed_cb(uv_handle_t *handle)
{
    agones_socket *s = handle->data;
    agones *a = s->owner;

    free(s);
    a->open_handles--;
    agones_maybe_free(a);
}

static void agones_retry_cb(uv_timer_t *timer)
{
    agones_start_next(timer->data);
}

/* The head request finished with curl result rc and HTTP status. */
static void agones_finished(agones *a, CURLcode rc, long status)
{
    agones_request *r = a->head;
    bool transient = rc != CURLE_OK || status >= 500 || status == 0;

    if (r == NULL)
        return;
    if (!transient && status >= 200 && status < 300) {
        if (a->unreachable)
            log_info("agones: the sidecar answers again");
        a->unreachable = false;
        a->retry_ms = 0;
        if (strcmp(r->path, "/ready") == 0)
            log_info("agones: Ready");
        else if (strcmp(r->path, "/shutdown") == 0)
            log_info("agones: Shutdown sent");
        else
            log_debug("agones: %s %s: %ld", r->method, r->path, status);
        agones_pop(a);
        return;
    }
    if (!transient || r->kind == AGONES_REQ_HEALTH) {
        if (!transient)
            log_warn("agones: %s %s refused with HTTP %ld; dropped", r->method, r->path, status);
        else if (!a->unreachable)
            log_warn("agones: health ping failed: %s", rc != CURLE_OK ? curl_easy_strerror(rc)
                                                                       : "HTTP error");
        a->unreachable = transient;
        agones_pop(a);
        return;
    }
    /* Transient: keep it at the head and try again later. */
    a->retry_ms = a->retry_ms == 0 ? AGONES_RETRY_MIN_MS : a->retry_ms * 2;
    if (a->retry_ms > AGONES_RETRY_MAX_MS)
        a->retry_ms = AGONES_RETRY_MAX_MS;
    if (!a->unreachable) {
        const char *why = rc != CURLE_OK ? curl_easy_strerror(rc) : "HTTP 5xx";

        log_fields(LOG_WARN, LOG_FIELDS({ "request", r->path }, { "error", why }),
                   "agones: sidecar at 127.0.0.1:%u unreachable (%s %s: %s); retrying, the "
                   "server keeps running", a->cfg.port, r->method, r->path, why);
    }
    else
        log_debug("agones: %s %s failed again; next try in %u ms", r->method, r->path,
                  a->retry_ms);
    a->unreachable = true;
}

/* Collects finished transfers and starts the next request. */
static void agones_collect(agones *a)
{
    CURLMsg *msg;
    int left;

    while ((msg = curl_multi_info_read(a->multi, &left)) != NULL) {
        CURL *easy = msg->easy_handle;
        CURLcode result = msg->data.result;
        long status = 0;

        if (msg->msg != CURLMSG_DONE)
            continue;
        /* msg belongs to the easy handle: read it all before the handle goes. */
        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
        curl_multi_remove_handle(a->multi, easy);
        curl_easy_cleanup(easy);
        if (easy == a->easy)
            a->easy = NULL;
        agones_finished(a, result, status);
    }
    if (a->easy == NULL && a->head != NULL) {
        if (a->unreachable && a->head->kind == AGONES_REQ_STATE && a->retry_ms > 0)
            uv_timer_start(&a->retry_timer, agones_retry_cb, a->retry_ms, 0);
        else
            agones_start_next(a);
    }
    if (a->closing && a->easy == NULL && a->head == NULL)
        agones_close(a); /* everything sent: finish closing now */
}

static void agones_poll_cb(uv_poll_t *handle, int status, int events)
{
    agones_socket *s = handle->data;
    agones *a = s->owner;
    int flags = 0, running;

    if (status < 0)
        flags = CURL_CSELECT_ERR;
    if (events & UV_READABLE)
        flags |= CURL_CSELECT_IN;
    if (events & UV_WRITABLE)
        flags |= CURL_CSELECT_OUT;
    curl_multi_socket_action(a->multi, s->fd, flags, &running);
    agones_collect(a);
}

static void agones_socket_forget(agones *a, agones_socket *s)
{
    if (s->prev != NULL)
        s->prev->next = s->next;
    else
        a->sockets = s->next;
    if (s->next != NULL)
        s->next->prev = s->prev;
    uv_poll_stop(&s->poll);
    uv_close((uv_handle_t *)&s->poll, agones_socket_closed_cb);
}

static int agones_socket_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    agones *a = userp;
    agones_socket *s = socketp;
    int events = 0;

    (void)easy;
    if (what == CURL_POLL_REMOVE) {
        if (s != NULL) {
            agones_socket_forget(a, s);
            curl_multi_assign(a->multi, fd, NULL);
        }
        return 0;
    }
    if (s == NULL) {
        s = calloc(1, sizeof *s);
        if (s == NULL)
            return -1;
        s->fd = fd;
        s->owner = a;
        if (uv_poll_init_socket(a->loop, &s->poll, fd) != 0) {
            free(s);
            return -1;
        }
        s->poll.data = s;
        s->next = a->sockets;
        if (a->sockets != NULL)
            a->sockets->prev = s;
        a->sockets = s;
        a->open_handles++;
        curl_multi_assign(a->multi, fd, s);
    }
    if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
        events |= UV_READABLE;
    if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
        events |= UV_WRITABLE;
    uv_poll_start(&s->poll, events, agones_poll_cb);
    return 0;
}

static void agones_curl_timer_cb(uv_timer_t *timer)
{
    agones *a = timer->data;
    int running;

    curl_multi_socket_action(a->multi, CURL_SOCKET_TIMEOUT, 0, &running);
    agones_collect(a);
}

/* libcurl asks to be called back in timeout_ms (-1: cancel). Never call it from here. */
static int agones_timer_request_cb(CURLM *multi, long timeout_ms, void *userp)
{
    agones *a = userp;

    (void)multi;
    if (timeout_ms < 0)
        uv_timer_stop(&a->curl_timer);
    else
        uv_timer_start(&a->curl_timer, agones_curl_timer_cb, (uint64_t)timeout_ms, 0);
    return 0;
}

/* Sends the head of the queue unless a transfer is in flight or a retry is waiting. */
static void agones_start_next(agones *a)
{
    agones_request *r = a->head;
    char url[160];
    CURL *easy;

    if (r == NULL || a->easy != NULL || uv_is_active((uv_handle_t *)&a->retry_timer))
        return;
    easy = curl_easy_init();
    if (easy == NULL)
        return;
    snprintf(url, sizeof url, "http://127.0.0.1:%u%s", a->cfg.port, r->path);
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, r->method);
    curl_easy_setopt(easy, CURLOPT_COPYPOSTFIELDS, r->body);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, a->headers);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, agones_discard_cb);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_NOPROXY, "*");
    /* A request every two seconds needs no kept-alive connection, and without one no socket
     * outlives its transfer. */
    curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, 1L);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, (long)AGONES_REQUEST_TIMEOUT_MS);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, (long)AGONES_REQUEST_TIMEOUT_MS / 2);
    if (curl_multi_add_handle(a->multi, easy) != CURLM_OK) {
        curl_easy_cleanup(easy);
        return;
    }
    a->easy = easy;
}

/* ---- public --------------------------------------------------------------------------------- */

bool agones_config_from_env(bool flag, bool alpha_players, agones_config *out_cfg, char *err,
                            size_t err_size)
{
    const char *env = getenv("AGONES_SDK_HTTP_PORT");
    unsigned long port = AGONES_DEFAULT_PORT;

    err[0] = '\0';
    if (env != NULL && env[0] != '\0') {
        char *end;

        errno = 0;
        port = strtoul(env, &end, 10);
        if (errno != 0 || *end != '\0' || port == 0 || port > 65535 || env[0] < '0' ||
            env[0] > '9') {
            snprintf(err, err_size, "bad AGONES_SDK_HTTP_PORT '%s': expected a port 1..65535",
                     env);
            return false;
        }
    } else if (!flag) {
        return false;
    }
    out_cfg->port = (uint32_t)port;
    out_cfg->alpha_players = alpha_players;
    return true;
}

static void agones_health_cb(uv_timer_t *timer)
{
    agones *a = timer->data;

    if (!a->health_queued)
        agones_enqueue(a, AGONES_REQ_HEALTH, "POST", "/health", "{}");
}

int agones_create(uv_loop_t *loop, const agones_config *cfg, agones **out_agones, char *err,
                  size_t err_size)
{
    agones *a = calloc(1, sizeof *a);
    uv_timer_t *timers[4];

    if (a == NULL || curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(err, err_size, "agones: cannot initialise libcurl");
        free(a);
        return -1;
    }
    a->loop = loop;
    a->cfg = *cfg;
    a->multi = curl_multi_init();
    a->headers = curl_slist_append(NULL, "Content-Type: application/json");
    if (a->multi == NULL || a->headers == NULL) {
        snprintf(err, err_size, "agones: cannot initialise libcurl");
        if (a->multi != NULL)
            curl_multi_cleanup(a->multi);
        curl_slist_free_all(a->headers);
        free(a);
        return -1;
    }
    curl_multi_setopt(a->multi, CURLMOPT_SOCKETFUNCTION, agones_socket_cb);
    curl_multi_setopt(a->multi, CURLMOPT_SOCKETDATA, a);
    curl_multi_setopt(a->multi, CURLMOPT_TIMERFUNCTION, agones_timer_request_cb);
    curl_multi_setopt(a->multi, CURLMOPT_TIMERDATA, a);
    timers[0] = &a->curl_timer;
    timers[1] = &a->health_timer;
    timers[2] = &a->retry_timer;
    timers[3] = &a->close_timer;
    for (int i = 0; i < 4; i++) {
        uv_timer_init(loop, timers[i]);
        timers[i]->data = a;
        a->open_handles++;
    }
    uv_timer_start(&a->health_timer, agones_health_cb, AGONES_HEALTH_PERIOD_MS,
                   AGONES_HEALTH_PERIOD_MS);
    log_info("agones: talking to the SDK sidecar on 127.0.0.1:%u (%s player tracking)",
             cfg->port, cfg->alpha_players ? "alpha" : "list");
    *out_agones = a;
    return 0;
}

void agones_ready(agones *a)
{
    if (a == NULL || a->ready_sent)
        return;
    a->ready_sent = true;
    agones_enqueue(a, AGONES_REQ_STATE, "POST", "/ready", "{}");
    /* The first health ping right behind Ready, not a period later. */
    agones_health_cb(&a->health_timer);
}

static void agones_player(agones *a, const char *player, bool joined)
{
    char escaped[200], body[AGONES_BODY_MAX];

    if (a == NULL)
        return;
    json_escape(escaped, sizeof escaped, player);
    if (a->cfg.alpha_players) {
        snprintf(body, sizeof body, "{\"playerID\":\"%s\"}", escaped);
        agones_enqueue(a, AGONES_REQ_STATE, "POST",
                       joined ? "/alpha/player/connect" : "/alpha/player/disconnect", body);
        return;
    }
    snprintf(body, sizeof body, "{\"value\":\"%s\"}", escaped);
    agones_enqueue(a, AGONES_REQ_STATE, "POST",
                   joined ? "/v1beta1/lists/players:addValue"
                          : "/v1beta1/lists/players:removeValue",
                   body);
}

void agones_player_joined(agones *a, const char *player)
{
    agones_player(a, player, true);
}

void agones_player_left(agones *a, const char *player)
{
    agones_player(a, player, false);
}

void agones_set_label(agones *a, const char *key, const char *value)
{
    char k[96], v[96], body[AGONES_BODY_MAX];

    if (a == NULL)
        return;
    json_escape(k, sizeof k, key);
    json_escape(v, sizeof v, value);
    snprintf(body, sizeof body, "{\"key\":\"%s\",\"value\":\"%s\"}", k, v);
    agones_enqueue(a, AGONES_REQ_STATE, "PUT", "/metadata/label", body);
}

void agones_shutdown(agones *a)
{
    agones_enqueue(a, AGONES_REQ_STATE, "POST", "/shutdown", "{}");
}

static void agones_close_deadline_cb(uv_timer_t *timer)
{
    agones *a = timer->data;

    if (a->head != NULL)
        log_warn("agones: the sidecar did not take %s %s before exit", a->head->method,
                 a->head->path);
    while (a->head != NULL)
        agones_pop(a);
    if (a->easy != NULL) {
        curl_multi_remove_handle(a->multi, a->easy);
        curl_easy_cleanup(a->easy);
        a->easy = NULL;
    }
    agones_close(a);
}

static void agones_maybe_free(agones *a)
{
    if (a->open_handles == 0) {
        curl_slist_free_all(a->headers);
        free(a);
    }
}

void agones_close(agones *a)
{
    uv_timer_t *timers[4];

    if (a == NULL)
        return;
    uv_timer_stop(&a->health_timer);
    /* Drop health pings; whatever else is queued gets until the deadline. */
    if (a->head != NULL && a->easy == NULL && a->head->kind == AGONES_REQ_HEALTH)
        agones_pop(a);
    if (a->head != NULL || a->easy != NULL) {
        if (!a->closing) {
            a->closing = true;
            uv_timer_start(&a->close_timer, agones_close_deadline_cb, AGONES_CLOSE_DEADLINE_MS,
                           0);
            uv_timer_stop(&a->retry_timer);
            a->retry_ms = a->retry_ms > 0 ? AGONES_RETRY_MIN_MS : 0;
        }
        if (a->easy != NULL || a->head == NULL)
            return;
        if (!uv_is_active((uv_handle_t *)&a->retry_timer))
            agones_start_next(a);
        return;
    }
    if (a->multi == NULL)
        return; /* already closed */
    a->closing = true;
    curl_multi_cleanup(a->multi);
    a->multi = NULL;
    while (a->sockets != NULL)
        agones_socket_forget(a, a->sockets);
    timers[0] = &a->curl_timer;
    timers[1] = &a->health_timer;
    timers[2] = &a->retry_timer;
    timers[3] = &a->close_timer;
    for (int i = 0; i < 4; i++)
        uv_close((uv_handle_t *)timers[i], agones_handle_closed_cb);
}
