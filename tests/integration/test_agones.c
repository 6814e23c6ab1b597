/*
 * test_agones.c - reap-server against a stand-in for the Agones SDK sidecar: a small HTTP
 * server inside the test that records every request and answers 200 "{}". Ready comes once
 * the game port answers, Health keeps coming, players are added and removed as they join and
 * leave, Shutdown follows `quit`; a sidecar that is down at start is retried until it answers,
 * and players are served meanwhile.
 */
#include "harness.h"

enum {
    SIDECAR_MAX_CONNS = 16,
    SIDECAR_LOG_MAX = 1 << 16,
    SIDECAR_MAX_REQUESTS = 512,
};

typedef struct sidecar_conn {
    int fd;
    char buf[4096];
    size_t len;
} sidecar_conn;

typedef struct sidecar_request {
    double at;            /* harness_now() when it arrived */
    char line[256];       /* "POST /ready {}" */
} sidecar_request;

typedef struct sidecar {
    int listen_fd;
    unsigned port;
    bool listening;
    sidecar_conn conns[SIDECAR_MAX_CONNS];
    sidecar_request requests[SIDECAR_MAX_REQUESTS];
    int count;
} sidecar;

static sidecar sc;

/* Binds a free loopback port; listens only when listen_now (else connections are refused
 * until sidecar_listen). */
static void sidecar_open(sidecar *s, bool listen_now)
{
    struct sockaddr_in sin;
    socklen_t len = sizeof sin;
    int one = 1;

    memset(s, 0, sizeof *s);
    for (int i = 0; i < SIDECAR_MAX_CONNS; i++)
        s->conns[i].fd = -1;
    s->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    assert_true(s->listen_fd >= 0);
    setsockopt(s->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(s->listen_fd, (struct sockaddr *)&sin, sizeof sin), 0);
    assert_int_equal(getsockname(s->listen_fd, (struct sockaddr *)&sin, &len), 0);
    s->port = ntohs(sin.sin_port);
    if (listen_now) {
        assert_int_equal(listen(s->listen_fd, 16), 0);
        s->listening = true;
    }
}

static void sidecar_listen(sidecar *s)
{
    assert_int_equal(listen(s->listen_fd, 16), 0);
    s->listening = true;
}

static void sidecar_close(sidecar *s)
{
    for (int i = 0; i < SIDECAR_MAX_CONNS; i++)
        if (s->conns[i].fd >= 0)
            close(s->conns[i].fd);
    close(s->listen_fd);
}

/* A complete request in c->buf: record it, answer, close. */
static void sidecar_serve(sidecar *s, sidecar_conn *c)
{
    static const char answer[] =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
        "Connection: close\r\n\r\n{}";
    char method[16] = "", path[128] = "";
    const char *end = strstr(c->buf, "\r\n\r\n");
    const char *cl = strstr(c->buf, "\r\nContent-Length:") /* as curl spells it */;
    size_t body_len = cl != NULL ? strtoul(cl + 17, NULL, 10) : 0;

    if (end == NULL || c->len < (size_t)(end + 4 - c->buf) + body_len)
        return; /* not complete yet */
    sscanf(c->buf, "%15s %127s", method, path);
    if (s->count < SIDECAR_MAX_REQUESTS) {
        sidecar_request *r = &s->requests[s->count++];
        r->at = harness_now();
        snprintf(r->line, sizeof r->line, "%s %s %.*s", method, path, (int)body_len, end + 4);
    }
    if (write(c->fd, answer, sizeof answer - 1) < 0) {
        /* the server went away: nothing to answer */
    }
    close(c->fd);
    c->fd = -1;
    c->len = 0;
}

/* Serves the sidecar and pumps the server's output for about wait_ms. */
static void sidecar_pump(sidecar *s, harness_server *srv, int wait_ms)
{
    struct pollfd pfds[SIDECAR_MAX_CONNS + 1];
    int n = 0;

    if (s->listening)
        pfds[n++] = (struct pollfd){ s->listen_fd, POLLIN, 0 };
    for (int i = 0; i < SIDECAR_MAX_CONNS; i++)
        if (s->conns[i].fd >= 0)
            pfds[n++] = (struct pollfd){ s->conns[i].fd, POLLIN, 0 };
    if (n > 0)
        poll(pfds, (nfds_t)n, wait_ms);
    if (s->listening) {
        int fd;
        while ((fd = accept(s->listen_fd, NULL, NULL)) >= 0) {
            int slot = -1;
            for (int i = 0; i < SIDECAR_MAX_CONNS && slot < 0; i++)
                if (s->conns[i].fd < 0)
                    slot = i;
            if (slot < 0) {
                close(fd);
                continue;
            }
            s->conns[slot].fd = fd;
            s->conns[slot].len = 0;
        }
    }
    for (int i = 0; i < SIDECAR_MAX_CONNS; i++) {
        sidecar_conn *c = &s->conns[i];
        ssize_t got;

        if (c->fd < 0)
            continue;
        got = recv(c->fd, c->buf + c->len, sizeof c->buf - 1 - c->len, MSG_DONTWAIT);
        if (got == 0) {
            close(c->fd);
            c->fd = -1;
            continue;
        }
        if (got > 0) {
            c->len += (size_t)got;
            c->buf[c->len] = '\0';
            sidecar_serve(s, c);
        }
    }
    if (srv != NULL)
        harness_proc_pump(&srv->proc, 0);
}

/* Index of the first request from `from` on that starts with prefix (and holds `holding`,
 * when not NULL), or -1. */
static int sidecar_find(const sidecar *s, int from, const char *prefix, const char *holding)
{
    for (int i = from; i < s->count; i++)
        if (strncmp(s->requests[i].line, prefix, strlen(prefix)) == 0 &&
            (holding == NULL || strstr(s->requests[i].line, holding) != NULL))
            return i;
    return -1;
}

/* Serves until such a request arrives; its index. Fails the test at the deadline. */
static int sidecar_wait(sidecar *s, harness_server *srv, const char *prefix, const char *holding,
                        double timeout)
{
    double deadline = harness_now() + timeout;
    int i;

    while ((i = sidecar_find(s, 0, prefix, holding)) < 0) {
        if (harness_now() >= deadline) {
            fprintf(stderr, "requests seen:\n");
            for (int k = 0; k < s->count; k++)
                fprintf(stderr, "  %s\n", s->requests[k].line);
            fail_msg("no '%s%s%s' within %g s; server printed:\n%s", prefix,
                     holding ? " ... " : "", holding ? holding : "", timeout,
                     srv ? srv->proc.out : "");
        }
        sidecar_pump(s, srv, 20);
    }
    return i;
}

/* Runs reap-client to completion while the sidecar keeps serving. */
static int run_client_serving(sidecar *s, harness_server *srv, const char *const *args)
{
    harness_proc c;
    double deadline = harness_now() + 30.0;
    int status;

    harness_proc_start(&c, "reap-client", args);
    while (!c.exited && harness_now() < deadline) {
        sidecar_pump(s, srv, 20);
        harness_proc_pump(&c, 0);
    }
    if (!c.exited)
        fail_msg("reap-client did not finish; it printed:\n%s", c.out);
    status = c.status;
    harness_proc_free(&c);
    return status;
}

static void start_with_sidecar(harness_server *srv, unsigned port)
{
    char env[16];

    snprintf(env, sizeof env, "%u", port);
    setenv("AGONES_SDK_HTTP_PORT", env, 1);
    harness_server_start(srv, NULL);
    unsetenv("AGONES_SDK_HTTP_PORT");
}

static void test_ready_health_players_and_shutdown_reach_the_sidecar(void **state)
{
    harness_server srv;
    char reply[256];

    (void)state;
    sidecar_open(&sc, true);
    start_with_sidecar(&srv, sc.port);

    /* Ready, with labels saying what this server is, and then health pings. */
    int ready = sidecar_wait(&sc, &srv, "POST /ready", NULL, 10.0);
    assert_string_equal(sc.requests[ready].line, "POST /ready {}");
    int label = sidecar_find(&sc, 0, "PUT /metadata/label", "\"key\":\"reap-version\"");
    assert_true(label >= 0 && label < ready);
    int first = sidecar_wait(&sc, &srv, "POST /health", NULL, 10.0);
    double deadline = sc.requests[first].at + 10.0;
    int second = -1;
    while (second < 0 && harness_now() < deadline) {
        sidecar_pump(&sc, &srv, 20);
        second = sidecar_find(&sc, first + 1, "POST /health", NULL);
    }
    assert_true(second > first);
    assert_true(sc.requests[second].at - sc.requests[first].at <= 5.0);

    /* A player's join and leave. */
    const char *args[] = { "--server", srv.endpoint, "--name", "ana", "--hold", "0.2", NULL };
    assert_int_equal(run_client_serving(&sc, &srv, args), 0);
    int add = sidecar_wait(&sc, &srv, "POST /v1beta1/lists/players:addValue", "ana", 10.0);
    int rm = sidecar_wait(&sc, &srv, "POST /v1beta1/lists/players:removeValue", "ana", 10.0);
    assert_true(add < rm);
    assert_non_null(strstr(sc.requests[add].line, "{\"value\":\""));

    /* quit: the goodbye, then Shutdown, then the exit. */
    assert_int_equal(harness_console(&srv, "quit", reply, sizeof reply), 200);
    sidecar_wait(&sc, &srv, "POST /shutdown", NULL, 10.0);
    assert_true(harness_proc_wait(&srv.proc, 10.0));
    assert_int_equal(srv.proc.status, 0);
    harness_server_free(&srv);
    sidecar_close(&sc);
}

static void test_a_sidecar_down_at_start_is_retried_and_players_are_served_meanwhile(
    void **state)
{
    harness_server srv;

    (void)state;
    sidecar_open(&sc, false); /* the port is taken but refuses connections */
    start_with_sidecar(&srv, sc.port);
    assert_true(harness_proc_wait_for_text(&srv.proc, "unreachable", 10.0));

    const char *args[] = { "--server", srv.endpoint, "--name", "bo", "--spawn", "3", "--hold",
                           "0.2", NULL };
    assert_int_equal(run_client_serving(&sc, &srv, args), 0);
    assert_false(srv.proc.exited);

    sidecar_listen(&sc);
    sidecar_wait(&sc, &srv, "POST /ready", NULL, 15.0);
    sidecar_wait(&sc, &srv, "POST /v1beta1/lists/players:addValue", "bo", 10.0);
    sidecar_wait(&sc, &srv, "POST /v1beta1/lists/players:removeValue", "bo", 10.0);
    assert_true(harness_proc_wait_for_text(&srv.proc, "agones: Ready", 5.0));
    assert_int_equal(harness_server_stop(&srv), 0);
    harness_server_free(&srv);
    sidecar_close(&sc);
}

static void test_sigterm_sends_shutdown_after_the_goodbye(void **state)
{
    harness_server srv;

    (void)state;
    sidecar_open(&sc, true);
    start_with_sidecar(&srv, sc.port);
    sidecar_wait(&sc, &srv, "POST /ready", NULL, 10.0);

    kill(srv.proc.pid, SIGTERM);

    sidecar_wait(&sc, &srv, "POST /shutdown", NULL, 10.0);
    assert_true(harness_proc_wait(&srv.proc, 10.0));
    assert_int_equal(srv.proc.status, 0);
    assert_non_null(strstr(srv.proc.out, "final full purge"));
    harness_server_free(&srv);
    sidecar_close(&sc);
}

static void test_a_bad_sidecar_port_is_refused_by_name(void **state)
{
    harness_proc p;
    const char *args[] = { "--port", "0", "--admin-port", "0", NULL };

    (void)state;
    setenv("AGONES_SDK_HTTP_PORT", "nine", 1);
    int rc = harness_run("reap-server", args, 10.0, &p);
    unsetenv("AGONES_SDK_HTTP_PORT");

    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(p.out, "AGONES_SDK_HTTP_PORT"));
    assert_non_null(strstr(p.out, "'nine'"));
    harness_proc_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ready_health_players_and_shutdown_reach_the_sidecar),
        cmocka_unit_test(test_a_sidecar_down_at_start_is_retried_and_players_are_served_meanwhile),
        cmocka_unit_test(test_sigterm_sends_shutdown_after_the_goodbye),
        cmocka_unit_test(test_a_bad_sidecar_port_is_refused_by_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
