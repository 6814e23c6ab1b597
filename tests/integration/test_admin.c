/*
 * test_admin.c - the admin endpoint under hostile or careless use: held connections never
 * wedge it, one address cannot take it all, and with a token /console needs it while
 * /metrics and /healthz stay open.
 */
#include "harness.h"

enum { MAX_HELD = 64 };

static char reply[1 << 16];

/* Opens a TCP connection from src (a loopback address) to 127.0.0.1:port; -1 on failure. */
static int connect_from(const char *src, unsigned port)
{
    struct sockaddr_in from, to;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    memset(&from, 0, sizeof from);
    from.sin_family = AF_INET;
    inet_pton(AF_INET, src, &from.sin_addr);
    memset(&to, 0, sizeof to);
    to.sin_family = AF_INET;
    to.sin_port = htons((uint16_t)port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&from, sizeof from) != 0 ||
        connect(fd, (struct sockaddr *)&to, sizeof to) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Sends req from src to 127.0.0.1:port and reads the answer until the server closes or the
 * deadline; the status code, or 0 when nothing answered in time. */
static int exchange_from(const char *src, unsigned port, const char *req, double timeout)
{
    char resp[2048];
    size_t len = 0;
    double deadline = harness_now() + timeout;
    int status = 0, fd = connect_from(src, port);

    if (fd < 0)
        return 0;
    if (write(fd, req, strlen(req)) < 0) {
        close(fd);
        return 0;
    }
    while (harness_now() < deadline && len < sizeof resp - 1) {
        struct pollfd pfd = { fd, POLLIN, 0 };
        ssize_t n;

        if (poll(&pfd, 1, 50) <= 0)
            continue;
        n = read(fd, resp + len, sizeof resp - 1 - len);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    resp[len] = '\0';
    sscanf(resp, "HTTP/%*s %d", &status);
    return status;
}

static int get_from(const char *src, unsigned port, const char *path, double timeout)
{
    char req[256];

    snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
    return exchange_from(src, port, req, timeout);
}

/* Polls GET /healthz from src until it answers 200 or the deadline passes. */
static bool healthz_answers_within(harness_server *s, const char *src, double timeout)
{
    double deadline = harness_now() + timeout;

    do {
        if (get_from(src, s->admin_port, "/healthz", deadline - harness_now()) == 200)
            return true;
        harness_proc_pump(&s->proc, 20);
    } while (harness_now() < deadline);
    return false;
}

static void close_all(int *fds, int n)
{
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

static void start_server(harness_server *s)
{
    const char *args[] = { "--log-level", "debug", NULL };

    harness_server_start(s, args);
}

static void test_healthz_answers_soon_after_the_connection_limit_is_released(void **state)
{
    const char *sources[] = { "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5" };
    harness_server s;
    int fds[32];
    double settle;

    (void)state;
    start_server(&s);
    /* Given: every admin connection taken, 8 from each of four addresses, held idle. */
    for (int i = 0; i < 32; i++)
        fds[i] = connect_from(sources[i / 8], s.admin_port);
    settle = harness_now() + 5.0;
    while (harness_now() < settle && strstr(s.proc.out, "admin: 32 connection(s) open") == NULL)
        harness_proc_pump(&s.proc, 20);

    /* When they all go away, */
    close_all(fds, 32);

    /* then the endpoint serves again at once (before the fix it never did). */
    if (!healthz_answers_within(&s, "127.0.0.1", 3.0))
        fail_msg("GET /healthz did not answer within 3 s of the held connections closing; "
                 "server printed:\n%s", s.proc.out);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_one_address_cannot_take_every_admin_connection(void **state)
{
    harness_server s;
    int fds[MAX_HELD];

    (void)state;
    start_server(&s);
    /* Given: one address opening more connections than the endpoint's whole limit, */
    for (int i = 0; i < 40; i++)
        fds[i] = connect_from("127.0.0.2", s.admin_port);

    /* when another address asks, it is served while they are held. */
    bool served = healthz_answers_within(&s, "127.0.0.1", 3.0);

    close_all(fds, 40);
    if (!served)
        fail_msg("GET /healthz from another address was not served while 127.0.0.2 held 40 "
                 "connections; server printed:\n%s", s.proc.out);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

/* An HTTP/1.0 POST /console with an optional Authorization header; the status code. */
static int console_with(unsigned port, const char *authorization, const char *command)
{
    char req[1024];

    snprintf(req, sizeof req,
             "POST /console HTTP/1.0\r\nHost: 127.0.0.1\r\n%s%s%sContent-Length: %zu\r\n\r\n%s",
             authorization ? "Authorization: " : "", authorization ? authorization : "",
             authorization ? "\r\n" : "", strlen(command), command);
    return exchange_from("127.0.0.1", port, req, 10.0);
}

static void test_with_a_token_console_needs_it_and_metrics_stay_open(void **state)
{
    const char *token = "an-admin-token-for-the-test-0123";
    char path[] = "/tmp/reap-test-admin-token-XXXXXX";
    char bearer[128];
    harness_server s;
    int fd = mkstemp(path);

    (void)state;
    assert_true(fd >= 0);
    assert_int_equal(write(fd, token, strlen(token)), (ssize_t)strlen(token));
    close(fd);
    const char *args[] = { "--admin-token", path, NULL };
    harness_server_start(&s, args);
    snprintf(bearer, sizeof bearer, "Bearer %s", token);

    assert_int_equal(console_with(s.admin_port, NULL, "players"), 401);
    assert_int_equal(console_with(s.admin_port, "Bearer an-admin-token-for-the-test-0124",
                                  "players"), 401);
    assert_int_equal(console_with(s.admin_port, "Bearer an-admin", "players"), 401);
    assert_int_equal(console_with(s.admin_port, bearer, "players"), 200);
    assert_int_equal(harness_http(s.admin_port, "GET", "/healthz", NULL, reply, sizeof reply),
                     200);
    assert_int_equal(harness_http(s.admin_port, "GET", "/metrics", NULL, reply, sizeof reply),
                     200);
    assert_true(harness_metric(reply, "reap_admin_unauthorized_total") == 3);
    unlink(path);
    assert_int_equal(harness_server_stop(&s), 0);
    harness_server_free(&s);
}

static void test_an_admin_bind_off_loopback_without_a_token_refuses_to_start(void **state)
{
    harness_proc p;
    const char *args[] = { "--port", "0", "--admin-port", "0", "--admin-bind", "0.0.0.0", NULL };

    (void)state;
    unsetenv("REAP_ADMIN_TOKEN");
    unsetenv("REAP_ADMIN_TOKEN_FILE");

    int rc = harness_run("reap-server", args, 10.0, &p);

    assert_int_equal(rc, 2);
    assert_non_null(strstr(p.out, "0.0.0.0"));
    assert_non_null(strstr(p.out, "--admin-token"));
    harness_proc_free(&p);
}

static void test_an_admin_bind_off_loopback_with_a_token_starts_with_a_warning(void **state)
{
    harness_proc p;
    const char *args[] = { "--port", "0", "--bind", "127.0.0.1", "--admin-port", "0",
                           "--admin-bind", "0.0.0.0", NULL };

    (void)state;
    setenv("REAP_ADMIN_TOKEN", "another-token-for-the-test-4567", 1);
    harness_proc_start(&p, "reap-server", args);
    unsetenv("REAP_ADMIN_TOKEN");

    assert_true(harness_proc_wait_for_text(&p, "admin on http://0.0.0.0:", 10.0));
    assert_non_null(strstr(p.out, "warn"));
    assert_non_null(strstr(p.out, "off loopback"));
    kill(p.pid, SIGTERM);
    assert_true(harness_proc_wait(&p, 10.0));
    assert_int_equal(p.status, 0);
    harness_proc_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_healthz_answers_soon_after_the_connection_limit_is_released),
        cmocka_unit_test(test_one_address_cannot_take_every_admin_connection),
        cmocka_unit_test(test_with_a_token_console_needs_it_and_metrics_stay_open),
        cmocka_unit_test(test_an_admin_bind_off_loopback_without_a_token_refuses_to_start),
        cmocka_unit_test(test_an_admin_bind_off_loopback_with_a_token_starts_with_a_warning),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
