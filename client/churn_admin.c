/*
 * churn_admin.c - the server's side of the story: its admin /metrics, sampled once a second
 * without ever blocking the bots' loop, and the Prometheus text format read back.
 *
 * The HTTP client is HTTP/1.0 with "Connection: close" over a non-blocking socket: the body
 * is everything after the headers when the server closes. Only the --admin address is used.
 */
#include "churn_internal.h"
#include "client_vec.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CHURN_ADMIN_PERIOD 1.0
#define CHURN_ADMIN_TIMEOUT 2.0

const char *const churn_phase_names[CHURN_PHASE_COUNT] = { "net", "world", "repl", "gc" };

void churn_server_init(churn_server *s)
{
    memset(s, 0, sizeof *s);
    s->tick_p50 = s->tick_p99 = s->tick_max = -1;
    for (int i = 0; i < CHURN_PHASE_COUNT; i++)
        s->phase_p99[i] = -1;
    s->collections = s->gc_work_p99 = s->gc_work_max = s->gc_work_sum = -1;
    s->bytes_sent = s->cpu_seconds = -1;
    s->objects_first = s->objects_last = s->objects_peak = s->rss_peak = -1;
}

/* ---- the text format ------------------------------------------------------------------- */

static int churn_metric_cmp(const void *a, const void *b)
{
    return strcmp(((const churn_metric *)a)->key, ((const churn_metric *)b)->key);
}

void churn_scrape_free(churn_scrape *s)
{
    for (uint32_t i = 0; i < s->n; i++)
        free(s->metrics[i].key);
    free(s->metrics);
    s->metrics = NULL;
    s->n = 0;
}

bool churn_scrape_copy(churn_scrape *dst, const churn_scrape *src)
{
    memset(dst, 0, sizeof *dst);
    dst->t = src->t;
    if (src->n == 0)
        return true;
    dst->metrics = calloc(src->n, sizeof *dst->metrics);
    if (dst->metrics == NULL)
        return false;
    for (uint32_t i = 0; i < src->n; i++) {
        dst->metrics[i].value = src->metrics[i].value;
        dst->metrics[i].key = strdup(src->metrics[i].key);
        dst->n++;
        if (dst->metrics[i].key == NULL) {
            churn_scrape_free(dst);
            return false;
        }
    }
    return true;
}

bool churn_scrape_parse(churn_scrape *s, const char *text)
{
    uint32_t cap = 0;
    double t = s->t;

    churn_scrape_free(s);
    s->t = t;
    for (const char *line = text; *line != '\0';) {
        const char *eol = strchr(line, '\n');
        const char *end = eol != NULL ? eol : line + strlen(line);
        const char *brace = memchr(line, '{', (size_t)(end - line));
        const char *sep;
        char *num_end;
        double v;

        if (*line == '#' || end == line)
            goto next;
        sep = brace != NULL ? memchr(brace, '}', (size_t)(end - brace)) : line;
        if (sep == NULL)
            goto next;
        sep = memchr(sep, ' ', (size_t)(end - sep));
        if (sep == NULL)
            goto next;
        v = strtod(sep + 1, &num_end);
        if (num_end == sep + 1)
            goto next;
        if (!CLIENT_VEC_RESERVE(s->metrics, cap, (uint64_t)s->n + 1, 256))
            break;
        s->metrics[s->n].key = strndup(line, (size_t)(sep - line));
        if (s->metrics[s->n].key == NULL)
            break;
        s->metrics[s->n].value = v;
        s->n++;
    next:
        line = eol != NULL ? eol + 1 : end;
    }
    if (s->n > 0)
        qsort(s->metrics, s->n, sizeof *s->metrics, churn_metric_cmp);
    return s->n > 0;
}

double churn_scrape_get(const churn_scrape *s, const char *key)
{
    churn_metric k = { (char *)key, 0 };
    const churn_metric *m;

    if (s == NULL || s->n == 0)
        return NAN;
    m = bsearch(&k, s->metrics, s->n, sizeof *s->metrics, churn_metric_cmp);
    return m != NULL ? m->value : NAN;
}

double churn_scrape_sum(const churn_scrape *s, const char *name)
{
    size_t len = strlen(name);
    double sum = 0;
    bool any = false;

    for (uint32_t i = 0; s != NULL && i < s->n; i++) {
        const char *k = s->metrics[i].key;
        if (strncmp(k, name, len) == 0 && (k[len] == '\0' || k[len] == '{')) {
            sum += s->metrics[i].value;
            any = true;
        }
    }
    return any ? sum : NAN;
}

typedef struct churn_bucket {
    double le, count;
} churn_bucket;

static int churn_bucket_cmp(const void *a, const void *b)
{
    double x = ((const churn_bucket *)a)->le, y = ((const churn_bucket *)b)->le;

    return x < y ? -1 : x > y;
}

double churn_scrape_quantile(const churn_scrape *a, const churn_scrape *b, const char *name,
                             const char *label, double p)
{
    churn_bucket buckets[64];
    uint32_t n = 0;
    char prefix[128];
    size_t plen;
    double total, rank, prev_le = 0, prev_cum = 0;

    if (b == NULL)
        return NAN;
    plen = (size_t)snprintf(prefix, sizeof prefix, "%s_bucket{", name);
    for (uint32_t i = 0; i < b->n && n < 64; i++) {
        const char *k = b->metrics[i].key;
        const char *le;
        double before = 0;

        if (strncmp(k, prefix, plen) != 0 || (label != NULL && strstr(k, label) == NULL))
            continue;
        le = strstr(k, "le=\"");
        if (le == NULL)
            continue;
        buckets[n].le = strncmp(le + 4, "+Inf", 4) == 0 ? INFINITY : strtod(le + 4, NULL);
        if (a != NULL) {
            before = churn_scrape_get(a, k);
            if (isnan(before))
                before = 0;
        }
        buckets[n].count = b->metrics[i].value - before;
        n++;
    }
    if (n == 0)
        return NAN;
    qsort(buckets, n, sizeof *buckets, churn_bucket_cmp);
    total = buckets[n - 1].count;
    if (!(total > 0))
        return NAN;
    if (p >= 100) {
        /* The first bucket that holds them all; past the last finite bound, that bound. */
        for (uint32_t i = 0; i < n; i++)
            if (buckets[i].count >= total)
                return isinf(buckets[i].le) ? (i > 0 ? buckets[i - 1].le : 0) : buckets[i].le;
        return NAN;
    }
    rank = p / 100.0 * total;
    for (uint32_t i = 0; i < n; i++) {
        if (buckets[i].count >= rank) {
            if (isinf(buckets[i].le))
                return prev_le;
            if (buckets[i].count <= prev_cum)
                return buckets[i].le;
            return prev_le + (buckets[i].le - prev_le) * (rank - prev_cum) /
                             (buckets[i].count - prev_cum);
        }
        prev_le = buckets[i].le;
        prev_cum = buckets[i].count;
    }
    return prev_le;
}

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
    else if (r > 0 && strncmp(a.buf, "HTTP/1.", 7) == 0 && a.len >= 12)
        snprintf(err, err_size, "%s %s on the admin endpoint %s answered HTTP %.3s", method, path,
                 a.host, a.buf + 9);
    else
        snprintf(err, err_size, "%s %s on the admin endpoint %s failed%s", method, path,
                 a.host, r == 0 ? " (no answer in time)" : "");
    churn_admin_reset(&a);
    free(a.buf);
    return copy;
}
