/*
 * harness.h - drives the real binaries for integration tests: starts reap-server on free
 * loopback ports, runs reap-client, talks HTTP/1.0 to the admin endpoint, reads metrics.
 *
 * Binaries come from $REAP_BUILD_DIR (set by tests/run-tests.sh; "build" otherwise). Every
 * wait has a deadline; waiting is poll() on the server's log pipe or a child's output, never a
 * sleep that stands in for a condition. Header-only: each test executable includes it once.
 */
#ifndef REAP_TEST_HARNESS_H
#define REAP_TEST_HARNESS_H

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

enum {
    HARNESS_LOG_MAX = 1 << 20,
    HARNESS_HTTP_MAX = 1 << 20,
    HARNESS_MAX_ARGS = 48,
};

static inline double harness_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline const char *harness_build_dir(void)
{
    const char *dir = getenv("REAP_BUILD_DIR");
    return dir != NULL && dir[0] != '\0' ? dir : "build";
}

/* ---- child processes ---------------------------------------------------------------------- */

typedef struct harness_proc {
    pid_t pid;
    int fd;          /* the child's stdout+stderr, non-blocking; -1 once at EOF */
    char *out;       /* everything it printed so far, NUL-terminated */
    size_t len;
    bool exited;
    int status;      /* exit status, or 128+signal */
} harness_proc;

/* Starts program (a path, or a name looked up in PATH) with args (NULL-terminated, without
 * argv[0]) and stdin from stdin_path (NULL: /dev/null). */
static inline void harness_proc_start_cmd(harness_proc *p, const char *program,
                                          const char *const *args, const char *stdin_path)
{
    const char *argv[HARNESS_MAX_ARGS];
    int pipefd[2];
    int n = 0;

    memset(p, 0, sizeof *p);
    argv[n++] = program;
    while (args != NULL && args[n - 1] != NULL && n < HARNESS_MAX_ARGS - 1) {
        argv[n] = args[n - 1];
        n++;
    }
    argv[n] = NULL;
    assert_int_equal(pipe(pipefd), 0);
    p->out = calloc(1, HARNESS_LOG_MAX + 1);
    assert_non_null(p->out);
    p->pid = fork();
    assert_true(p->pid >= 0);
    if (p->pid == 0) {
        int in = open(stdin_path != NULL ? stdin_path : "/dev/null", O_RDONLY);
        /* A failed assertion skips the test's clean-up: the child must not outlive us. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        dup2(in, STDIN_FILENO);
        dup2(pipefd[1], STDOUT_FILENO);
        dup2(pipefd[1], STDERR_FILENO);
        close(pipefd[0]);
        close(pipefd[1]);
        execvp(program, (char *const *)argv);
        fprintf(stderr, "harness: cannot run %s: %s\n", program, strerror(errno));
        _exit(127);
    }
    close(pipefd[1]);
    p->fd = pipefd[0];
    fcntl(p->fd, F_SETFL, fcntl(p->fd, F_GETFL) | O_NONBLOCK);
}

/* Starts build/<binary> (from $REAP_BUILD_DIR) with args (NULL-terminated, without argv[0]). */
static inline void harness_proc_start(harness_proc *p, const char *binary, const char *const *args)
{
    char path[512];

    snprintf(path, sizeof path, "%s/%s", harness_build_dir(), binary);
    harness_proc_start_cmd(p, path, args, NULL);
}

/* Reads what the child printed, waiting at most wait_ms for something to arrive. */
static inline void harness_proc_pump(harness_proc *p, int wait_ms)
{
    struct pollfd pfd = { p->fd, POLLIN, 0 };

    if (p->fd >= 0 && poll(&pfd, 1, wait_ms) > 0) {
        for (;;) {
            char buf[4096];
            ssize_t n = read(p->fd, buf, sizeof buf);
            if (n > 0) {
                size_t room = HARNESS_LOG_MAX - p->len;
                size_t take = (size_t)n < room ? (size_t)n : room;
                memcpy(p->out + p->len, buf, take);
                p->len += take;
                p->out[p->len] = '\0';
                continue;
            }
            if (n == 0) {
                close(p->fd);
                p->fd = -1;
            }
            break;
        }
    }
    if (!p->exited) {
        int status;
        if (waitpid(p->pid, &status, WNOHANG) == p->pid) {
            p->exited = true;
            p->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
    }
    if (p->fd < 0 && !p->exited && wait_ms > 0) {
        /* Output closed but not reaped yet: a short bounded wait for the exit itself. */
        struct timespec ts = { 0, 1000000 };
        nanosleep(&ts, NULL);
    }
}

/* Waits until the child exits; false at the deadline. */
static inline bool harness_proc_wait(harness_proc *p, double timeout)
{
    double deadline = harness_now() + timeout;

    while (!p->exited && harness_now() < deadline)
        harness_proc_pump(p, 20);
    harness_proc_pump(p, 0);
    return p->exited;
}

/* Waits until the child printed text; false at the deadline or if it exited first. */
static inline bool harness_proc_wait_for_text(harness_proc *p, const char *text, double timeout)
{
    double deadline = harness_now() + timeout;

    while (harness_now() < deadline) {
        if (strstr(p->out, text) != NULL)
            return true;
        if (p->exited)
            return false;
        harness_proc_pump(p, 20);
    }
    return strstr(p->out, text) != NULL;
}

static inline void harness_proc_kill(harness_proc *p)
{
    if (p->pid > 0 && !p->exited) {
        kill(p->pid, SIGKILL);
        harness_proc_wait(p, 5.0);
    }
}

static inline void harness_proc_free(harness_proc *p)
{
    harness_proc_kill(p);
    if (p->fd >= 0)
        close(p->fd);
    free(p->out);
    memset(p, 0, sizeof *p);
    p->fd = -1;
}

/* Runs a program to completion (at most timeout seconds); returns its exit status. */
static inline int harness_run(const char *binary, const char *const *args, double timeout,
                              harness_proc *out_proc)
{
    harness_proc_start(out_proc, binary, args);
    if (!harness_proc_wait(out_proc, timeout)) {
        harness_proc_kill(out_proc);
        fail_msg("%s did not finish within %g s; it printed:\n%s", binary, timeout,
                 out_proc->out);
    }
    return out_proc->status;
}

/* Runs chromium headless on url with one more flag (--dump-dom or --screenshot=...); false if
 * chromium is not installed. */
static inline bool harness_chromium(const char *url, const char *what, harness_proc *out)
{
    char profile[] = "/tmp/reap-chromium-XXXXXX";
    harness_proc rm;

    assert_non_null(mkdtemp(profile));
    char user_data[64];
    snprintf(user_data, sizeof user_data, "--user-data-dir=%s", profile);
    const char *args[] = { "--headless", "--no-sandbox", "--disable-gpu",
                           "--disable-background-networking", "--disable-component-update",
                           "--disable-sync", "--no-first-run", user_data,
                           "--virtual-time-budget=4000", "--window-size=1280,1300", what, url,
                           NULL };
    harness_proc_start_cmd(out, "chromium", args, NULL);
    if (!harness_proc_wait(out, 60.0)) {
        harness_proc_kill(out);
        fail_msg("chromium did not finish within 60 s:\n%s", out->out);
    }
    const char *rm_args[] = { "-rf", profile, NULL };
    harness_proc_start_cmd(&rm, "rm", rm_args, NULL);
    assert_true(harness_proc_wait(&rm, 30.0));
    harness_proc_free(&rm);
    return out->status != 127;
}

/* ---- the server -------------------------------------------------------------------------- */

typedef struct harness_server {
    harness_proc proc;
    unsigned port;        /* UDP */
    unsigned admin_port;  /* HTTP */
    char endpoint[64];    /* "127.0.0.1:PORT" for reap-client --server */
} harness_server;

static inline unsigned harness_parse_port_after(const char *text, const char *prefix)
{
    const char *p = strstr(text, prefix);
    return p != NULL ? (unsigned)strtoul(p + strlen(prefix), NULL, 10) : 0;
}

/* Starts reap-server on free loopback ports with extra args (NULL-terminated, may be NULL) and
 * waits until it says where it listens. Tests read /metrics right after what they did, so the
 * page is rendered for every request (admin.MetricsCacheSeconds=0; an extra --cvar of it comes
 * later and wins: test_overload.c tests the cache). */
static inline void harness_server_start(harness_server *s, const char *const *extra)
{
    const char *args[HARNESS_MAX_ARGS] = { "--port", "0", "--bind", "127.0.0.1", "--admin-port",
                                           "0", "--log-level", "info", "--cvar",
                                           "admin.MetricsCacheSeconds=0" };
    int n = 10;
    /* A big map (a million props) loads before the ports are printed: under ThreadSanitizer
     * that took more than 10 s. */
    double deadline = harness_now() + 60.0;

    for (int i = 0; extra != NULL && extra[i] != NULL && n < HARNESS_MAX_ARGS - 1; i++)
        args[n++] = extra[i];
    args[n] = NULL;
    memset(s, 0, sizeof *s);
    harness_proc_start(&s->proc, "reap-server", args);
    while (harness_now() < deadline && !s->proc.exited &&
           (s->port == 0 || s->admin_port == 0)) {
        harness_proc_pump(&s->proc, 20);
        s->port = harness_parse_port_after(s->proc.out, "listening on udp 127.0.0.1:");
        s->admin_port = harness_parse_port_after(s->proc.out, "admin on http://127.0.0.1:");
    }
    if (s->port == 0 || s->admin_port == 0)
        fail_msg("reap-server did not report its ports within 60 s; it printed:\n%s",
                 s->proc.out);
    snprintf(s->endpoint, sizeof s->endpoint, "127.0.0.1:%u", s->port);
}

/* SIGTERM and wait for the exit; returns the exit status. */
static inline int harness_server_stop(harness_server *s)
{
    if (!s->proc.exited)
        kill(s->proc.pid, SIGTERM);
    if (!harness_proc_wait(&s->proc, 10.0))
        fail_msg("reap-server did not exit within 10 s of SIGTERM; it printed:\n%s",
                 s->proc.out);
    return s->proc.status;
}

static inline void harness_server_free(harness_server *s)
{
    harness_proc_free(&s->proc);
}

/* ---- admin HTTP ------------------------------------------------------------------------- */

/* One HTTP/1.0 request to 127.0.0.1:port. Returns the status code (0 on failure); the body
 * goes to body (NUL-terminated, truncated to body_size - 1). */
static inline int harness_http(unsigned port, const char *method, const char *path,
                               const char *req_body, char *body, size_t body_size)
{
    static char resp[HARNESS_HTTP_MAX + 1];
    struct sockaddr_in sin;
    char head[512];
    size_t len = 0, blen = req_body ? strlen(req_body) : 0;
    double deadline = harness_now() + 10.0;
    int fd, status = 0;
    const char *sep;

    fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    memset(&sin, 0, sizeof sin);
    sin.sin_family = AF_INET;
    sin.sin_port = htons((uint16_t)port);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sin, sizeof sin) != 0) {
        close(fd);
        return 0;
    }
    snprintf(head, sizeof head,
             "%s %s HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Length: %zu\r\n"
             "Content-Type: text/plain\r\n\r\n", method, path, blen);
    if (write(fd, head, strlen(head)) < 0 || (blen > 0 && write(fd, req_body, blen) < 0)) {
        close(fd);
        return 0;
    }
    while (harness_now() < deadline && len < HARNESS_HTTP_MAX) {
        struct pollfd pfd = { fd, POLLIN, 0 };
        ssize_t n;

        if (poll(&pfd, 1, 100) <= 0)
            continue;
        n = read(fd, resp + len, HARNESS_HTTP_MAX - len);
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    resp[len] = '\0';
    sscanf(resp, "HTTP/%*s %d", &status);
    sep = strstr(resp, "\r\n\r\n");
    if (body != NULL && body_size > 0)
        snprintf(body, body_size, "%s", sep ? sep + 4 : "");
    return status;
}

/* POST /console; asserts a reply came back. */
static inline int harness_console(const harness_server *s, const char *command, char *out,
                                  size_t out_size)
{
    int status = harness_http(s->admin_port, "POST", "/console", command, out, out_size);

    if (status == 0)
        fail_msg("no answer from POST /console '%s'", command);
    return status;
}

/* The value of the sample named exactly `series` (name plus labels, e.g.
 * reap_world_actors{world="World0"}) in a metrics page; fails the test if absent. */
static inline double harness_metric(const char *page, const char *series)
{
    size_t n = strlen(series);

    for (const char *line = page; line != NULL && *line; line = strchr(line, '\n')) {
        if (*line == '\n')
            line++;
        if (strncmp(line, series, n) == 0 && line[n] == ' ')
            return strtod(line + n + 1, NULL);
    }
    fail_msg("metric %s not found in:\n%s", series, page);
    return -1;
}

/* Reads one metric now. */
static inline double harness_server_metric(harness_server *s, const char *series)
{
    static char page[HARNESS_HTTP_MAX];

    harness_proc_pump(&s->proc, 0);
    if (harness_http(s->admin_port, "GET", "/metrics", NULL, page, sizeof page) != 200)
        fail_msg("GET /metrics failed; server printed:\n%s", s->proc.out);
    return harness_metric(page, series);
}

typedef enum harness_cmp { HARNESS_EQ, HARNESS_GE, HARNESS_LE } harness_cmp;

/* Polls a metric until it compares true with want, or the deadline; returns the last value. */
static inline double harness_wait_metric(harness_server *s, const char *series, harness_cmp cmp,
                                         double want, double timeout)
{
    double deadline = harness_now() + timeout;
    double v;

    for (;;) {
        v = harness_server_metric(s, series);
        if ((cmp == HARNESS_EQ && v == want) || (cmp == HARNESS_GE && v >= want) ||
            (cmp == HARNESS_LE && v <= want))
            return v;
        if (harness_now() >= deadline)
            fail_msg("%s stayed at %g (wanted %s %g) for %g s; server printed:\n%s", series, v,
                     cmp == HARNESS_EQ ? "==" : cmp == HARNESS_GE ? ">=" : "<=", want, timeout,
                     s->proc.out);
        harness_proc_pump(&s->proc, 20); /* the wait between polls, bounded by the deadline */
    }
}

#endif /* REAP_TEST_HARNESS_H */
