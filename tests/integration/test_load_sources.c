/*
 * test_load_sources.c - where the load tester's bots send from (--source-addresses), seen by a
 * fake server: a plain UDP socket on 127.0.0.1 that never answers and notes the source of
 * every datagram (each bot's ENet connect and its resends). Under auto each bot sends from a
 * loopback address of its own, 127.1.0.0 + its number across the run's shards + 1, as each
 * real player has its own, and an impaired bot's relay does too; under one, every bot sends
 * from the same address. Where only 127.0.0.1 is local (a network namespace of the test's own,
 * entered by the last test for the rest of the process), the run warns once and sends every
 * bot from the kernel's choice.
 */
#define _GNU_SOURCE /* unshare(2) */
#include <sched.h>

#include "harness.h"

enum { SOURCES_MAX = 64 };

typedef struct fake_server {
    int fd;
    unsigned port;
    struct sockaddr_in from[SOURCES_MAX]; /* distinct (address, port) pairs, first seen first */
    int n;
} fake_server;

static void fake_server_open(fake_server *f)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = 0 };
    socklen_t len = sizeof a;

    memset(f, 0, sizeof *f);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    f->fd = socket(AF_INET, SOCK_DGRAM, 0);
    assert_true(f->fd >= 0);
    assert_int_equal(bind(f->fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(f->fd, (struct sockaddr *)&a, &len), 0);
    f->port = ntohs(a.sin_port);
}

/* Reads what arrived within wait_ms, noting each new (address, port). */
static void fake_server_read(fake_server *f, int wait_ms)
{
    struct pollfd pfd = { f->fd, POLLIN, 0 };

    if (poll(&pfd, 1, wait_ms) <= 0)
        return;
    for (;;) {
        uint8_t buf[4096];
        struct sockaddr_in from;
        socklen_t len = sizeof from;
        int k;

        if (recvfrom(f->fd, buf, sizeof buf, MSG_DONTWAIT, (struct sockaddr *)&from, &len) < 0)
            break;
        for (k = 0; k < f->n; k++)
            if (f->from[k].sin_addr.s_addr == from.sin_addr.s_addr &&
                f->from[k].sin_port == from.sin_port)
                break;
        if (k == f->n && f->n < SOURCES_MAX)
            f->from[f->n++] = from;
    }
}

/* Distinct addresses among the sources seen. */
static int fake_server_addresses(const fake_server *f)
{
    int n = 0;

    for (int i = 0; i < f->n; i++) {
        int k = 0;
        while (k < i && f->from[k].sin_addr.s_addr != f->from[i].sin_addr.s_addr)
            k++;
        n += k == i;
    }
    return n;
}

/* Whether some source came from a.b.c.d. */
static bool fake_server_saw(const fake_server *f, uint32_t host_order)
{
    for (int i = 0; i < f->n; i++)
        if (ntohl(f->from[i].sin_addr.s_addr) == host_order)
            return true;
    return false;
}

static const char *fake_server_list(const fake_server *f)
{
    static char text[SOURCES_MAX * 24];
    size_t used = 0;

    text[0] = '\0';
    for (int i = 0; i < f->n && used < sizeof text; i++) {
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &f->from[i].sin_addr, ip, sizeof ip);
        used += (size_t)snprintf(text + used, sizeof text - used, " %s:%u", ip,
                                 ntohs(f->from[i].sin_port));
    }
    return text;
}

/* Runs reap-client's churn against f with extra flags (NULL-terminated) until f has seen
 * want distinct sources (address, port) or timeout passed; the client is killed then. */
static void fake_server_churn(fake_server *f, const char *bots, const char *const *extra,
                              int want, double timeout)
{
    char endpoint[64], out_dir[] = "/tmp/reap-load-sources-XXXXXX";
    const char *args[HARNESS_MAX_ARGS] = { "--server", endpoint, "--bots", bots, "--duration",
                                           "10", "--timeout", "5", "--seed", "5", "--out",
                                           out_dir, "--no-progress" };
    int n = 13;
    harness_proc run;
    double deadline = harness_now() + timeout;

    assert_non_null(mkdtemp(out_dir));
    snprintf(endpoint, sizeof endpoint, "127.0.0.1:%u", f->port);
    while (extra != NULL && *extra != NULL && n < HARNESS_MAX_ARGS - 1)
        args[n++] = *extra++;
    args[n] = NULL;
    harness_proc_start(&run, "reap-client", args);
    while (f->n < want && harness_now() < deadline && !run.exited) {
        fake_server_read(f, 20);
        harness_proc_pump(&run, 0);
    }
    fake_server_read(f, 0);
    harness_proc_pump(&run, 0);
    if (f->n < want)
        fail_msg("the fake server saw %d sources of %d (%s) by %g s; reap-client printed:\n%s",
                 f->n, want, fake_server_list(f), timeout, run.out);
    harness_proc_free(&run);
    const char *rm_args[] = { "-rf", out_dir, NULL };
    harness_proc_start_cmd(&run, "rm", rm_args, NULL);
    assert_true(harness_proc_wait(&run, 30.0));
    harness_proc_free(&run);
}

/* Churns `bots` bots with extra flags against a fake server until it has seen `sources`
 * sources, then asks that they came from exactly `addresses` addresses and, when `first` is
 * not 0, from 127.1.0.first, then every `step`-th bot's address after it (bot b's own is
 * 127.1.0.(b + 1)). */
static void expect_sources(const char *what, const char *bots, const char *const *extra,
                           int sources, int addresses, uint32_t first, uint32_t step)
{
    fake_server f;

    fake_server_open(&f);
    fake_server_churn(&f, bots, extra, sources, 15.0);
    fake_server_read(&f, 200); /* resends, and any bot that might share an address */

    if (fake_server_addresses(&f) != addresses)
        fail_msg("%s: %d addresses, not %d:%s", what, fake_server_addresses(&f), addresses,
                 fake_server_list(&f));
    for (int k = 0; first != 0 && k < addresses; k++) {
        uint32_t last_octet = first + (uint32_t)k * step;
        if (!fake_server_saw(&f, 0x7F010000u + last_octet))
            fail_msg("%s: no datagram from 127.1.0.%u:%s", what, last_octet,
                     fake_server_list(&f));
    }
    close(f.fd);
}

static void test_each_bot_sends_from_its_own_loopback_address_by_default(void **state)
{
    (void)state;
    expect_sources("8 bots", "8", NULL, 8, 8, 1, 1);
}

static void test_source_addresses_one_sends_every_bot_from_one_address(void **state)
{
    const char *const one[] = { "--source-addresses", "one", NULL };

    (void)state;
    /* 8 sources: one port per bot's visit, all from one address */
    expect_sources("8 bots under 'one'", "8", one, 8, 1, 0, 0);
}

static void test_the_shards_of_a_run_send_from_addresses_of_their_own(void **state)
{
    const char *const shard[] = { "--shard", "1/2", NULL };

    (void)state;
    /* shard 1 of 2 plays bots 1, 3, 5, 7 of the run (0-based): 127.1.0.2, .4, .6, .8 */
    expect_sources("shard 1/2's 4 bots", "8", shard, 4, 4, 2, 2);
}

static void test_an_impaired_bots_relay_sends_from_the_bots_own_address(void **state)
{
    const char *const impair[] = { "--impair", "latency=1ms", NULL };

    (void)state;
    expect_sources("4 impaired bots", "4", impair, 4, 4, 1, 1);
}

/* Writes text to path; false when it cannot. */
static bool write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    bool ok = f != NULL && fputs(text, f) >= 0;

    return f != NULL ? fclose(f) == 0 && ok : false;
}

/* Runs ip(8) with args; true when it exits 0. */
static bool run_ip(const char *const *args)
{
    harness_proc ip;
    bool ok;

    harness_proc_start_cmd(&ip, "ip", args, NULL);
    ok = harness_proc_wait(&ip, 10.0) && ip.status == 0;
    harness_proc_free(&ip);
    return ok;
}

/* Moves this process into a network namespace of its own whose loopback has 127.0.0.1 alone
 * (127.0.0.1/32 instead of Linux's 127.0.0.1/8); false when this system does not allow it. */
static bool enter_a_namespace_with_one_loopback_address(void)
{
    const char *const up[] = { "link", "set", "lo", "up", NULL };
    const char *const del[] = { "addr", "del", "127.0.0.1/8", "dev", "lo", NULL };
    const char *const add[] = { "addr", "add", "127.0.0.1/32", "dev", "lo", NULL };
    char map[64];
    unsigned uid = (unsigned)getuid(), gid = (unsigned)getgid();

    if (unshare(CLONE_NEWNET) != 0) {
        /* Without the right to: a user namespace of our own, mapped to who we are. */
        if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0)
            return false;
        snprintf(map, sizeof map, "0 %u 1\n", uid);
        if (!write_text("/proc/self/uid_map", map) ||
            !write_text("/proc/self/setgroups", "deny"))
            return false;
        snprintf(map, sizeof map, "0 %u 1\n", gid);
        if (!write_text("/proc/self/gid_map", map))
            return false;
    }
    return run_ip(up) && run_ip(del) && run_ip(add);
}

static void test_where_own_addresses_cannot_be_bound_the_run_warns_once_and_uses_one(
    void **state)
{
    struct sockaddr_in own = { .sin_family = AF_INET, .sin_port = 0 };
    char endpoint[64], out_dir[] = "/tmp/reap-load-sources-XXXXXX";
    harness_proc run;
    fake_server f;
    int probe;
    double deadline;

    (void)state;
    if (!enter_a_namespace_with_one_loopback_address()) {
        skip(); /* no network namespace of our own here (or no ip(8)) */
        return;
    }
    own.sin_addr.s_addr = htonl(0x7F010001u);
    probe = socket(AF_INET, SOCK_DGRAM, 0);
    assert_true(probe >= 0);
    assert_int_not_equal(bind(probe, (struct sockaddr *)&own, sizeof own), 0); /* as wanted */
    close(probe);
    fake_server_open(&f);
    assert_non_null(mkdtemp(out_dir));
    snprintf(endpoint, sizeof endpoint, "127.0.0.1:%u", f.port);
    const char *args[] = { "--server", endpoint, "--bots", "8", "--duration", "10",
                           "--timeout", "5", "--seed", "5", "--out", out_dir, "--no-progress",
                           NULL };

    harness_proc_start(&run, "reap-client", args);
    deadline = harness_now() + 15.0;
    while (f.n < 8 && harness_now() < deadline && !run.exited) {
        fake_server_read(&f, 20);
        harness_proc_pump(&run, 0);
    }
    fake_server_read(&f, 200);
    harness_proc_pump(&run, 0);

    if (f.n < 8 || fake_server_addresses(&f) != 1 || !fake_server_saw(&f, 0x7F000001u))
        fail_msg("8 bots came from %d addresses, not 127.0.0.1 alone:%s\n%s",
                 fake_server_addresses(&f), fake_server_list(&f), run.out);
    {
        const char *w = strstr(run.out, "warning: cannot bind 127.1.0.");
        if (w == NULL || strstr(w + 1, "warning: cannot bind") != NULL)
            fail_msg("expected one warning about the own addresses:\n%s", run.out);
        if (strstr(w, "the rest of the run sends every bot from the kernel's choice") == NULL)
            fail_msg("the warning does not say what the run does instead:\n%s", run.out);
    }
    harness_proc_free(&run);
    close(f.fd);
    const char *rm_args[] = { "-rf", out_dir, NULL };
    harness_proc_start_cmd(&run, "rm", rm_args, NULL);
    assert_true(harness_proc_wait(&run, 30.0));
    harness_proc_free(&run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_bot_sends_from_its_own_loopback_address_by_default),
        cmocka_unit_test(test_source_addresses_one_sends_every_bot_from_one_address),
        cmocka_unit_test(test_the_shards_of_a_run_send_from_addresses_of_their_own),
        cmocka_unit_test(test_an_impaired_bots_relay_sends_from_the_bots_own_address),
        /* last: it leaves the process in a network namespace of its own */
        cmocka_unit_test(test_where_own_addresses_cannot_be_bound_the_run_warns_once_and_uses_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
