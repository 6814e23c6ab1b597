/*
 * churn_admin.c - the server's side of the story: its admin /metrics, sampled once a second
 * without ever blocking the bots' loop (churn_scrape.c reads the pages).
 *
 * The HTTP client is HTTP/1.0 with "Connection: close" over a non-blocking socket: the body
 * is everything after the headers when the server closes. Only the --admin address is used.
 */
#include "churn_admin.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client_clock.h"
#include "client_options.h"
#include "client_vec.h"

#define CHURN_ADMIN_PERIOD 1.0
#define CHURN_ADMIN_TIMEOUT 2.0

/* ---- the HTTP client ------------------------------------------------------------------- */

typedef enum churn_admin_state {
    CHURN_ADMIN_IDLE = 0, CHURN_ADMIN_CONNECTING, CHURN_ADMIN_RECEIVING,
} churn_admin_state;

struct churn_admin {
    struct sockaddr_storage addr;
    socklen_t addr_len;
    char host[128];
    char path[128];
    char token[CLIENT_ADMIN_TOKEN_MAX + 1]; /* "" = send no Authorization */
    churn_admin_state state;
    int fd;
    double started, next_due;
    char *buf;
    size_t len;
    uint32_t cap;
};

churn_admin *churn_admin_create(const char *url, char *err, size_t err_size)
{
    struct addrinfo hints, *res = NULL;
    const char *p = url, *colon, *slash;
    char port[8];
    churn_admin *a;
    size_t hlen;

    if (strncmp(p, "http://", 7) != 0) {
        snprintf(err, err_size, "bad value '%s' for --admin: expected http://HOST:PORT[/metrics]",
                 url);
        return NULL;
    }
    p += 7;
    slash = strchr(p, '/');
    if (slash == NULL)
        slash = p + strlen(p);
    colon = memchr(p, ':', (size_t)(slash - p));
    hlen = (size_t)((colon != NULL ? colon : slash) - p);
    if (colon == NULL || hlen == 0 || hlen >= 128 || (size_t)(slash - colon - 1) >= sizeof port ||
        slash == colon + 1) {
        snprintf(err, err_size, "bad value '%s' for --admin: expected http://HOST:PORT[/metrics]",
                 url);
        return NULL;
    }
    a = calloc(1, sizeof *a);
    if (a == NULL) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    memcpy(a->host, p, hlen);
    memcpy(port, colon + 1, (size_t)(slash - colon - 1));
    port[slash - colon - 1] = '\0';
    snprintf(a->path, sizeof a->path, "%s", *slash ? slash : "/metrics");
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(a->host, port, &hints, &res) != 0 || res == NULL ||
        res->ai_addrlen > sizeof a->addr) {
        snprintf(err, err_size, "bad value '%s' for --admin: cannot resolve '%s' port '%s'",
                 url, a->host, port);
        if (res != NULL)
            freeaddrinfo(res);
        free(a);
        return NULL;
    }
    memcpy(&a->addr, res->ai_addr, res->ai_addrlen);
    a->addr_len = res->ai_addrlen;
    freeaddrinfo(res);
    a->fd = -1;
    return a;
}

static void churn_admin_reset(churn_admin *a)
{
    if (a->fd >= 0)
        close(a->fd);
    a->fd = -1;
    a->len = 0;
    a->state = CHURN_ADMIN_IDLE;
}

void churn_admin_set_token(churn_admin *a, const char *token)
{
    snprintf(a->token, sizeof a->token, "%s", token != NULL ? token : "");
}

void churn_admin_destroy(churn_admin *a)
{
    if (a == NULL)
        return;
    churn_admin_reset(a);
    free(a->buf);
    free(a);
}

static bool churn_admin_start(churn_admin *a, const char *method, const char *path,
                              const char *body)
{
    churn_admin_reset(a);
    a->fd = socket(a->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (a->fd < 0)
        return false;
    if (connect(a->fd, (struct sockaddr *)&a->addr, a->addr_len) != 0 && errno != EINPROGRESS) {
        churn_admin_reset(a);
        return false;
    }
    /* The request is small: it goes into the socket buffer once connected (see send below). */
    free(a->buf);
    a->cap = (uint32_t)(4096 + (body != NULL ? strlen(body) : 0));
    a->buf = malloc(a->cap);
    if (a->buf == NULL) {
        churn_admin_reset(a);
        return false;
    }
    a->len = (size_t)snprintf(a->buf, a->cap, "%s %s HTTP/1.0\r\nHost: %s\r\nConnection: "
                              "close\r\n%s%s%sContent-Length: %zu\r\n\r\n%s", method, path,
                              a->host, a->token[0] ? "Authorization: Bearer " : "", a->token,
                              a->token[0] ? "\r\n" : "", body != NULL ? strlen(body) : 0,
                              body != NULL ? body : "");
    a->state = CHURN_ADMIN_CONNECTING;
    return true;
}

/* Advances the request; 1 when the response is complete in a->buf (NUL-terminated, a->len
 * bytes), 0 while it runs, -1 on failure. */
static int churn_admin_advance(churn_admin *a)
{
    if (a->state == CHURN_ADMIN_CONNECTING) {
        struct pollfd pfd = { a->fd, POLLOUT, 0 };
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        ssize_t w;

        if (poll(&pfd, 1, 0) <= 0)
            return 0;
        if (getsockopt(a->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0 || soerr != 0)
            return -1;
        w = send(a->fd, a->buf, a->len, MSG_NOSIGNAL);
        if (w < 0 || (size_t)w != a->len)
            return -1;
        a->len = 0;
        a->state = CHURN_ADMIN_RECEIVING;
    }
    for (;;) {
        ssize_t r;

        /* Room for a read of 4096 bytes: the buffer doubles. */
        if (a->cap - a->len < 4096 &&
            !CLIENT_VEC_RESERVE(a->buf, a->cap, (uint64_t)a->cap + 1, 4096))
            return -1;
        r = recv(a->fd, a->buf + a->len, a->cap - a->len - 1, 0);
        if (r > 0) {
            a->len += (size_t)r;
            continue;
        }
        if (r == 0) {
            a->buf[a->len] = '\0';
            return 1;
        }
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
    }
}

/* The body of a complete 200 response in a->buf, or NULL. */
static const char *churn_admin_body(const churn_admin *a)
{
    const char *body = strstr(a->buf, "\r\n\r\n");

    if (strncmp(a->buf, "HTTP/1.", 7) != 0 || strncmp(a->buf + 8, " 200", 4) != 0 ||
        body == NULL)
        return NULL;
    return body + 4;
}

bool churn_admin_poll(churn_admin *a, double now, churn_scrape *out)
{
    int r;

    if (a->state == CHURN_ADMIN_IDLE) {
        if (now < a->next_due)
            return false;
        a->next_due += CHURN_ADMIN_PERIOD;
        if (a->next_due < now)
            a->next_due = now + CHURN_ADMIN_PERIOD;
        if (!churn_admin_start(a, "GET", a->path, NULL))
            return false;
        a->started = now;
    }
    r = churn_admin_advance(a);
    if (r == 0 && now - a->started > CHURN_ADMIN_TIMEOUT)
        r = -1;
    if (r == 0)
        return false;
    if (r > 0) {
        const char *body = churn_admin_body(a);
        out->t = now;
        r = body != NULL && churn_scrape_parse(out, body) ? 1 : -1;
    }
    churn_admin_reset(a);
    return r > 0;
}

char *churn_admin_request(const churn_admin *ca, const char *method, const char *path,
                          const char *body, double timeout, char *err, size_t err_size)
{
    churn_admin a = *ca; /* a private copy: the sampler's own request is left alone */
    double deadline = churn_clock() + timeout;
    const char *text;
    char *copy = NULL;
    int r = -1;

    a.fd = -1;
    a.buf = NULL;
    a.state = CHURN_ADMIN_IDLE;
    if (churn_admin_start(&a, method, path, body)) {
        while ((r = churn_admin_advance(&a)) == 0 && churn_clock() < deadline) {
            struct pollfd pfd = { a.fd, a.state == CHURN_ADMIN_CONNECTING ? POLLOUT : POLLIN,
                                  0 };
            poll(&pfd, 1, 50);
        }
    }
    if (r > 0 && (text = churn_admin_body(&a)) != NULL)
        copy = strdup(text);
    else if (r > 0 && strncmp(a.buf, "HTTP/1.", 7) == 0 && strncmp(a.buf + 8, " 401", 4) == 0)
        snprintf(err, err_size, "%s %s on the admin endpoint %s was refused (401): the server "
                 "wants its admin token: give it with --admin-token FILE%s", method, path, a.host,
                 a.token[0] ? " (the one given is not it)" : "");
    else if (r > 0 && strncmp(a.buf, "HTTP/1.", 7) == 0 && a.len >= 12) {
        /* the answer's first line says why (a console command refused names its reason) */
        const char *why = strstr(a.buf, "\r\n\r\n");
        int why_len = why != NULL ? (int)strcspn(why + 4, "\r\n") : 0;

        snprintf(err, err_size, "%s %s on the admin endpoint %s answered HTTP %.3s%s%.*s", method,
                 path, a.host, a.buf + 9, why_len > 0 ? ": " : "", why_len > 200 ? 200 : why_len,
                 why != NULL ? why + 4 : "");
    }
    else
        snprintf(err, err_size, "%s %s on the admin endpoint %s failed%s", method, path,
                 a.host, r == 0 ? " (no answer in time)" : "");
    churn_admin_reset(&a);
    free(a.buf);
    return copy;
}
