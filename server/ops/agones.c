/*
 * agones.c - the Agones SDK sidecar over REST, libcurl multi on the libuv loop (see agones.h).
 *
 * Two transfers at most are in flight: the health ping (its own slot, so a slow or failing
 * request never delays it) and the head of the request FIFO. libcurl tells us which sockets
 * to watch (agones_socket_cb: one uv_poll each) and when to call it back (agones_curl_timer_cb:
 * one uv_timer); whatever libuv reports goes back through curl_multi_socket_action, and
 * finished transfers are collected in agones_collect.
 */
#include "agones.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json.h"
#include "log.h"
#include "vec.h"

enum {
    AGONES_QUEUE_MAX = 1024,       /* requests waiting; more are dropped with a warning */
    AGONES_REQUEST_TIMEOUT_MS = 2000,
    AGONES_BODY_MAX = 512,
    AGONES_REPLY_MAX = 2048,       /* what is kept of an answer: enough for its message */
};

typedef enum agones_kind {
    AGONES_REQ_STATE,      /* ready, labels, shutdown: retried until the sidecar answers */
    AGONES_REQ_PLAYER,     /* a list value or an alpha player: the 500's message decides */
    AGONES_REQ_PROBE,      /* GET the players list at start */
    AGONES_REQ_GAMESERVER, /* GET /gameserver for the idle rule: never retried */
} agones_kind;

typedef struct agones_request {
    struct agones_request *next;
    agones_kind kind;
    const char *method;
    char path[96];          /* players: written when sent, once the list API is known */
    bool join;              /* players: add (true) or remove */
    uint32_t attempts;      /* answers that asked for a retry */
    char body[AGONES_BODY_MAX];
} agones_request;

/* One HTTP exchange and what came back. */
typedef struct agones_transfer {
    CURL *easy;
    char reply[AGONES_REPLY_MAX];
    size_t reply_len;
} agones_transfer;

/* A socket libcurl asked us to watch. */
typedef struct agones_socket {
    uv_poll_t poll;
    curl_socket_t fd;
    agones *owner;
    struct agones_socket *next, *prev; /* every socket still watched */
} agones_socket;

/* A player reap put in the list: its value, to remove the same one when it leaves. */
typedef struct agones_player {
    uint32_t id;
    char value[AGONES_VALUE_MAX];
} agones_player;

/* What the start-up GET of the players list found. */
typedef enum agones_list_state {
    AGONES_LIST_UNKNOWN,   /* not asked yet, or the answer did not say: send and see */
    AGONES_LIST_OK,
    AGONES_LIST_OFF,       /* missing, not enabled or no such API: player calls are dropped */
} agones_list_state;

struct agones {
    uv_loop_t *loop;
    agones_config cfg;
    CURLM *multi;
    struct curl_slist *headers;
    agones_transfer queue_xfer;  /* the head of the queue in flight, when easy != NULL */
    agones_transfer health_xfer; /* the health ping in flight, when easy != NULL */
    agones_request *head, *tail; /* head is the one in flight (or next to go) */
    uint32_t queued;
    uv_timer_t curl_timer;       /* libcurl's timeouts */
    uv_timer_t health_timer;
    uv_timer_t retry_timer;      /* backoff before resending the head */
    uv_timer_t close_timer;      /* the exit deadline */
    uv_timer_t idle_timer;       /* --agones-shutdown-idle */
    int open_handles;            /* timers and socket polls still open */
    agones_socket *sockets;
    uint32_t retry_ms;
    bool unreachable;            /* the last attempt failed; logged once per episode */
    bool health_failing;         /* the last health ping failed; logged once per episode */
    bool closing;
    bool ready_sent;
    bool shutdown_sent;
    /* the players list */
    const char *list_version;    /* "v1beta1", or "v1alpha1" on an Agones before 1.41 */
    agones_list_state list_state;
    bool warned_capacity;
    agones_player *players;      /* the players connected now */
    size_t player_count, player_cap;
    /* the idle rule */
    bool gameserver_queued;
    uint64_t idle_since_ms;      /* Allocated and empty since (uv_now), 0 = not */
};

static void agones_start_next(agones *a);
static void agones_maybe_free(agones *a);

/* ---- the queue -------------------------------------------------------------------------- */

/* Queues a request; join says add or remove for a player request. */
static void agones_enqueue(agones *a, agones_kind kind, bool join, const char *method,
                           const char *path, const char *body)
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
    r->join = join;
    r->method = method;
    snprintf(r->path, sizeof r->path, "%s", path);
    snprintf(r->body, sizeof r->body, "%s", body);
    if (a->tail != NULL)
        a->tail->next = r;
    else
        a->head = r;
    a->tail = r;
    a->queued++;
    if (kind == AGONES_REQ_GAMESERVER)
        a->gameserver_queued = true;
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
    if (r->kind == AGONES_REQ_GAMESERVER)
        a->gameserver_queued = false;
    a->queued--;
    a->retry_ms = 0;
    free(r);
}

/* ---- reading answers ---------------------------------------------------------------------- */

/* Whether text holds needle, ignoring case. */
static bool agones_text_has(const char *text, const char *needle)
{
    size_t n = strlen(needle);

    for (const char *p = text; *p != '\0'; p++)
        if (strncasecmp(p, needle, n) == 0)
            return true;
    return false;
}

/* Where the value of "key" starts in a JSON text (after the colon and spaces), or NULL. */
static const char *agones_json_value(const char *json, const char *key)
{
    char quoted[64];
    const char *p;

    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    for (p = strstr(json, quoted); p != NULL; p = strstr(p + 1, quoted)) {
        const char *v = p + strlen(quoted);

        while (*v == ' ' || *v == '\t' || *v == '\r' || *v == '\n')
            v++;
        if (*v == ':') {
            v++;
            while (*v == ' ' || *v == '\t' || *v == '\r' || *v == '\n')
                v++;
            return v;
        }
    }
    return NULL;
}

/* An integer field; protojson writes int64 as a string ("10"), so both forms are taken. */
static bool agones_json_int(const char *json, const char *key, long long *out)
{
    const char *v = agones_json_value(json, key);
    char *end;
    long long n;

    if (v == NULL)
        return false;
    if (*v == '"')
        v++;
    errno = 0;
    n = strtoll(v, &end, 10);
    if (errno != 0 || end == v)
        return false;
    *out = n;
    return true;
}

/* A string field's text, unescaped only as far as reap needs (it compares plain words). */
static bool agones_json_string(const char *json, const char *key, char *out, size_t out_size)
{
    const char *v = agones_json_value(json, key);
    size_t n = 0;

    if (v == NULL || *v != '"' || out_size == 0)
        return false;
    for (v++; *v != '\0' && *v != '"' && n + 1 < out_size; v++) {
        if (*v == '\\' && v[1] != '\0')
            v++;
        out[n++] = *v;
    }
    out[n] = '\0';
    return true;
}

/* How many strings the array field holds. */
static int agones_json_array_len(const char *json, const char *key)
{
    const char *v = agones_json_value(json, key);
    int count = 0;
    bool in_string = false;

    if (v == NULL || *v != '[')
        return 0;
    for (v++; *v != '\0'; v++) {
        if (in_string) {
            if (*v == '\\' && v[1] != '\0')
                v++;
            else if (*v == '"')
                in_string = false;
        } else if (*v == '"') {
            in_string = true;
            count++;
        } else if (*v == ']') {
            break;
        }
    }
    return count;
}

/* ---- libcurl on libuv -------------------------------------------------------------------- */

static size_t agones_reply_cb(char *ptr, size_t size, size_t nmemb, void *userdata)
{
    agones_transfer *t = userdata;
    size_t n = size * nmemb, room = sizeof t->reply - 1 - t->reply_len;

    if (n > room)
        n = room;
    memcpy(t->reply + t->reply_len, ptr, n);
    t->reply_len += n;
    t->reply[t->reply_len] = '\0';
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

/* Starts method path body on t; false if libcurl refused. */
static bool agones_transfer_start(agones *a, agones_transfer *t, const char *method,
                                  const char *path, const char *body)
{
    char url[160];
    CURL *easy = curl_easy_init();

    if (easy == NULL)
        return false;
    t->reply_len = 0;
    t->reply[0] = '\0';
    snprintf(url, sizeof url, "http://127.0.0.1:%u%s", a->cfg.port, path);
    curl_easy_setopt(easy, CURLOPT_URL, url);
    if (strcmp(method, "GET") == 0) {
        curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
    } else {
        curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(easy, CURLOPT_COPYPOSTFIELDS, body);
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, a->headers);
    }
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, agones_reply_cb);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_NOPROXY, "*");
    /* A request every second or two needs no kept-alive connection, and without one no
     * socket outlives its transfer. */
    curl_easy_setopt(easy, CURLOPT_FORBID_REUSE, 1L);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, (long)AGONES_REQUEST_TIMEOUT_MS);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, (long)AGONES_REQUEST_TIMEOUT_MS / 2);
    if (curl_multi_add_handle(a->multi, easy) != CURLM_OK) {
        curl_easy_cleanup(easy);
        return false;
    }
    t->easy = easy;
    return true;
}

static void agones_transfer_abort(agones *a, agones_transfer *t)
{
    if (t->easy == NULL)
        return;
    curl_multi_remove_handle(a->multi, t->easy);
    curl_easy_cleanup(t->easy);
    t->easy = NULL;
}

/* ---- what each answer means --------------------------------------------------------------- */

static void agones_list_off(agones *a, const char *why)
{
    if (a->list_state != AGONES_LIST_OFF)
        log_warn("agones: %s; players are served but not listed in Agones", why);
    a->list_state = AGONES_LIST_OFF;
}

static void agones_probe_answered(agones *a, const char *reply)
{
    long long capacity = -1;
    int values = agones_json_array_len(reply, "values");

    a->list_state = AGONES_LIST_OK;
    agones_json_int(reply, "capacity", &capacity);
    log_info("agones: players list at /%s/lists/players (capacity %lld, %d value(s) already "
             "in it)", a->list_version, capacity, values);
    if (capacity >= 0 && (long long)a->cfg.max_players > capacity)
        log_warn("agones: --max-players %u exceeds the players list's capacity %lld: players "
                 "past %lld are served but not listed (raise spec.lists.players.capacity)",
                 a->cfg.max_players, capacity, capacity);
}

/* The idle rule: Allocated with no player for shutdown_idle_s seconds calls Shutdown. */
static void agones_gameserver_answered(agones *a, const char *reply)
{
    char state[32] = "";
    uint64_t now = uv_now(a->loop);

    agones_json_string(reply, "state", state, sizeof state);
    if (strcmp(state, "Allocated") != 0 || a->player_count > 0) {
        a->idle_since_ms = 0;
        return;
    }
    if (a->idle_since_ms == 0)
        a->idle_since_ms = now;
    if (!a->shutdown_sent && now - a->idle_since_ms >= (uint64_t)a->cfg.shutdown_idle_s * 1000) {
        log_info("agones: Allocated with no player for %u s (--agones-shutdown-idle); asking "
                 "for Shutdown", a->cfg.shutdown_idle_s);
        agones_shutdown(a);
    }
}

/* A 500 from a list or player call, read by its message as the SDK server words it. True if
 * the request is finished with (done or dropped); false if it may be retried. */
static bool agones_player_error(agones *a, const agones_request *r, const char *reply)
{
    if (agones_text_has(reply, "already exists")) {
        log_debug("agones: %s %s: already there (done)", r->method, r->path);
        return true;
    }
    if (agones_text_has(reply, "list not found")) {
        agones_list_off(a, "the GameServer has no 'players' list (add spec.lists.players to "
                           "its template)");
        return true;
    }
    if (agones_text_has(reply, "not found")) {
        log_debug("agones: %s %s: not there (done)", r->method, r->path);
        return true;
    }
    if (agones_text_has(reply, "not enabled")) {
        agones_list_off(a, a->cfg.alpha_players
                               ? "Agones' PlayerTracking feature is not enabled"
                               : "Agones' CountsAndLists feature is not enabled");
        return true;
    }
    if (agones_text_has(reply, "capacity")) {
        if (!a->warned_capacity)
            log_warn("agones: the players list is full (%s %s refused); players past its "
                     "capacity are served but not listed", r->method, r->path);
        a->warned_capacity = true;
        return true;
    }
    return false;
}

/* The head request finished with curl result rc, HTTP status and the answer's text. */
static void agones_finished(agones *a, CURLcode rc, long status, const char *reply)
{
    agones_request *r = a->head;
    bool transient = rc != CURLE_OK || status >= 500 || status == 0;

    if (r == NULL)
        return;
    if (rc == CURLE_OK && status != 0) {
        if (a->unreachable)
            log_info("agones: the sidecar answers again");
        a->unreachable = false;
    }
    if (!transient && status >= 200 && status < 300) {
        agones_kind kind = r->kind;
        char path[sizeof r->path];

        /* Off the queue first: what the answer leads to may queue a request (Shutdown). */
        snprintf(path, sizeof path, "%s", r->path);
        log_debug("agones: %s %s: %ld", r->method, r->path, status);
        agones_pop(a);
        if (kind == AGONES_REQ_PROBE)
            agones_probe_answered(a, reply);
        else if (kind == AGONES_REQ_GAMESERVER)
            agones_gameserver_answered(a, reply);
        else if (strcmp(path, "/ready") == 0)
            log_info("agones: Ready");
        else if (strcmp(path, "/shutdown") == 0)
            log_info("agones: Shutdown sent");
        return;
    }
    if (status == 404 && r->kind == AGONES_REQ_PROBE && strcmp(a->list_version, "v1beta1") == 0) {
        log_info("agones: /v1beta1/lists answers 404: an Agones before 1.41; using /v1alpha1 "
                 "(needs the CountsAndLists feature gate)");
        a->list_version = "v1alpha1";
        snprintf(r->path, sizeof r->path, "/%s/lists/players", a->list_version);
        a->retry_ms = 0;
        return; /* sent again at once */
    }
    if (status == 404 && (r->kind == AGONES_REQ_PROBE || r->kind == AGONES_REQ_PLAYER)) {
        agones_list_off(a, a->cfg.alpha_players
                               ? "this sidecar has no alpha player API (404)"
                               : "this sidecar has no lists API (404; Agones 1.37 or later "
                                 "is needed)");
        agones_pop(a);
        return;
    }
    if (status == 500 && (r->kind == AGONES_REQ_PLAYER || r->kind == AGONES_REQ_PROBE) &&
        agones_player_error(a, r, reply)) {
        a->retry_ms = 0;
        agones_pop(a);
        return;
    }
    if (!transient || r->kind == AGONES_REQ_GAMESERVER) {
        if (!transient)
            log_warn("agones: %s %s refused with HTTP %ld (%.200s); dropped", r->method,
                     r->path, status, reply);
        agones_pop(a);
        return;
    }
    /* Transient: keep it at the head and try again later, a bounded number of times for
     * the list and player calls (a retried add that had landed reads "already exists"). */
    r->attempts++;
    if ((r->kind == AGONES_REQ_PLAYER || (r->kind == AGONES_REQ_PROBE && status != 0)) &&
        r->attempts >= AGONES_PLAYER_ATTEMPTS) {
        log_warn("agones: %s %s %s failed %u times; given up", r->method, r->path, r->body,
                 r->attempts);
        agones_pop(a);
        return;
    }
    a->retry_ms = a->retry_ms == 0 ? AGONES_RETRY_MIN_MS : a->retry_ms * 2;
    if (a->retry_ms > AGONES_RETRY_MAX_MS)
        a->retry_ms = AGONES_RETRY_MAX_MS;
    if (rc != CURLE_OK || status == 0) {
        const char *why = curl_easy_strerror(rc);

        if (!a->unreachable)
            log_fields(LOG_WARN, LOG_FIELDS({ "request", r->path }, { "error", why }),
                       "agones: sidecar at 127.0.0.1:%u unreachable (%s %s: %s); retrying, "
                       "the server keeps running", a->cfg.port, r->method, r->path, why);
        a->unreachable = true;
    } else if (r->attempts == 1) {
        log_warn("agones: %s %s: HTTP %ld (%.200s); retrying", r->method, r->path, status,
                 reply);
    }
    log_debug("agones: %s %s failed (attempt %u); next try in %u ms", r->method, r->path,
              r->attempts, a->retry_ms);
}

static void agones_health_finished(agones *a, CURLcode rc, long status)
{
    bool ok = rc == CURLE_OK && status >= 200 && status < 300;

    if (!ok && !a->health_failing)
        log_warn("agones: health ping failed: %s", rc != CURLE_OK ? curl_easy_strerror(rc)
                                                                  : "HTTP error");
    else if (ok && a->health_failing)
        log_info("agones: health pings answered again");
    a->health_failing = !ok;
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
        if (easy == a->health_xfer.easy) {
            a->health_xfer.easy = NULL;
            agones_health_finished(a, result, status);
        } else if (easy == a->queue_xfer.easy) {
            a->queue_xfer.easy = NULL;
            agones_finished(a, result, status, a->queue_xfer.reply);
        }
    }
    if (a->queue_xfer.easy == NULL && a->head != NULL) {
        if (a->retry_ms > 0)
            uv_timer_start(&a->retry_timer, agones_retry_cb, a->retry_ms, 0);
        else
            agones_start_next(a);
    }
    if (a->closing && a->queue_xfer.easy == NULL && a->head == NULL)
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

/* Writes a player request's path now that the list API's version is known. */
static void agones_player_path(const agones *a, agones_request *r)
{
    if (a->cfg.alpha_players)
        snprintf(r->path, sizeof r->path, "%s",
                 r->join ? "/alpha/player/connect" : "/alpha/player/disconnect");
    else
        snprintf(r->path, sizeof r->path, "/%s/lists/players:%s", a->list_version,
                 r->join ? "addValue" : "removeValue");
}

/* Sends the head of the queue unless a transfer is in flight or a retry is waiting. Player
 * requests are dropped here once the list is known to be off. */
static void agones_start_next(agones *a)
{
    agones_request *r;

    if (a->queue_xfer.easy != NULL || uv_is_active((uv_handle_t *)&a->retry_timer))
        return;
    while ((r = a->head) != NULL && r->kind == AGONES_REQ_PLAYER &&
           a->list_state == AGONES_LIST_OFF)
        agones_pop(a);
    if (r == NULL)
        return;
    if (r->kind == AGONES_REQ_PLAYER)
        agones_player_path(a, r);
    agones_transfer_start(a, &a->queue_xfer, r->method, r->path, r->body);
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

bool agones_value_is_valid(const char *value)
{
    size_t n = value != NULL ? strlen(value) : 0;

    if (n == 0 || n >= AGONES_VALUE_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isgraph((unsigned char)value[i]))
            return false;
    return true;
}

static void agones_health_cb(uv_timer_t *timer)
{
    agones *a = timer->data;

    if (a->health_xfer.easy == NULL && !a->closing)
        agones_transfer_start(a, &a->health_xfer, "POST", "/health", "{}");
}

static void agones_idle_cb(uv_timer_t *timer)
{
    agones *a = timer->data;

    if (a->player_count > 0) {
        a->idle_since_ms = 0;
        return;
    }
    if (a->ready_sent && !a->shutdown_sent && !a->gameserver_queued)
        agones_enqueue(a, AGONES_REQ_GAMESERVER, false, "GET", "/gameserver", "");
}

int agones_create(uv_loop_t *loop, const agones_config *cfg, agones **out_agones, char *err,
                  size_t err_size)
{
    agones *a = calloc(1, sizeof *a);
    uv_timer_t *timers[5];

    if (a == NULL || curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(err, err_size, "agones: cannot initialise libcurl");
        free(a);
        return -1;
    }
    a->loop = loop;
    a->cfg = *cfg;
    a->list_version = "v1beta1";
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
    timers[4] = &a->idle_timer;
    for (int i = 0; i < 5; i++) {
        uv_timer_init(loop, timers[i]);
        timers[i]->data = a;
        a->open_handles++;
    }
    uv_timer_start(&a->health_timer, agones_health_cb, AGONES_HEALTH_PERIOD_MS,
                   AGONES_HEALTH_PERIOD_MS);
    if (cfg->shutdown_idle_s > 0)
        uv_timer_start(&a->idle_timer, agones_idle_cb, AGONES_IDLE_POLL_MS, AGONES_IDLE_POLL_MS);
    log_info("agones: talking to the SDK sidecar on 127.0.0.1:%u (%s player tracking)",
             cfg->port, cfg->alpha_players ? "alpha" : "list");
    if (!cfg->alpha_players)
        agones_enqueue(a, AGONES_REQ_PROBE, false, "GET", "/v1beta1/lists/players", "");
    *out_agones = a;
    return 0;
}

void agones_ready(agones *a)
{
    if (a == NULL || a->ready_sent)
        return;
    a->ready_sent = true;
    agones_enqueue(a, AGONES_REQ_STATE, false, "POST", "/ready", "{}");
    /* The first health ping right behind Ready, not a period later. */
    agones_health_cb(&a->health_timer);
}

static void agones_player_request(agones *a, const char *value, bool join)
{
    char escaped[2 * AGONES_VALUE_MAX], body[AGONES_BODY_MAX];
    json_escape(escaped, sizeof escaped, value);
    snprintf(body, sizeof body, a->cfg.alpha_players ? "{\"playerID\":\"%s\"}"
                                                     : "{\"value\":\"%s\"}", escaped);
    agones_enqueue(a, AGONES_REQ_PLAYER, join, "POST", join ? "(add)" : "(remove)", body);
}

void agones_player_joined(agones *a, uint32_t player_id, const char *value)
{
    agones_player *p;

    if (a == NULL || a->multi == NULL)
        return;
    if (!VEC_GROW(a->players, a->player_cap, a->player_count + 1, 16))
        return;
    p = &a->players[a->player_count++];
    p->id = player_id;
    snprintf(p->value, sizeof p->value, "%s", value);
    a->idle_since_ms = 0;
    agones_player_request(a, p->value, true);
}

void agones_player_left(agones *a, uint32_t player_id)
{
    if (a == NULL)
        return;
    for (size_t i = 0; i < a->player_count; i++) {
        if (a->players[i].id != player_id)
            continue;
        agones_player_request(a, a->players[i].value, false);
        a->players[i] = a->players[--a->player_count];
        return;
    }
}

void agones_set_label(agones *a, const char *key, const char *value)
{
    char k[96], v[96], body[AGONES_BODY_MAX];

    if (a == NULL)
        return;
    json_escape(k, sizeof k, key);
    json_escape(v, sizeof v, value);
    snprintf(body, sizeof body, "{\"key\":\"%s\",\"value\":\"%s\"}", k, v);
    agones_enqueue(a, AGONES_REQ_STATE, false, "PUT", "/metadata/label", body);
}

void agones_shutdown(agones *a)
{
    if (a == NULL || a->shutdown_sent)
        return;
    a->shutdown_sent = true;
    agones_enqueue(a, AGONES_REQ_STATE, false, "POST", "/shutdown", "{}");
}

static void agones_close_deadline_cb(uv_timer_t *timer)
{
    agones *a = timer->data;

    if (a->head != NULL)
        log_warn("agones: the sidecar did not take %s %s before exit", a->head->method,
                 a->head->path);
    while (a->head != NULL)
        agones_pop(a);
    agones_transfer_abort(a, &a->queue_xfer);
    agones_close(a);
}

static void agones_maybe_free(agones *a)
{
    if (a->open_handles == 0) {
        curl_slist_free_all(a->headers);
        free(a->players);
        free(a);
    }
}

void agones_close(agones *a)
{
    uv_timer_t *timers[5];

    if (a == NULL)
        return;
    uv_timer_stop(&a->health_timer);
    uv_timer_stop(&a->idle_timer);
    if (a->multi != NULL)
        agones_transfer_abort(a, &a->health_xfer);
    /* Whatever is queued gets until the deadline. */
    if (a->head != NULL || a->queue_xfer.easy != NULL) {
        if (!a->closing) {
            a->closing = true;
            uv_timer_start(&a->close_timer, agones_close_deadline_cb, AGONES_CLOSE_DEADLINE_MS,
                           0);
            uv_timer_stop(&a->retry_timer);
            a->retry_ms = a->retry_ms > 0 ? AGONES_RETRY_MIN_MS : 0;
        }
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
    timers[4] = &a->idle_timer;
    for (int i = 0; i < 5; i++)
        uv_close((uv_handle_t *)timers[i], agones_handle_closed_cb);
}
