/*
 * test_service.c - systemd's notify protocol as the server speaks it, against a datagram
 * socket of the test's own standing in for systemd: READY and STOPPING when asked, WATCHDOG
 * only while frames advance, nothing at all outside systemd.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>
#include <uv.h>

#include "service.h"

typedef struct fixture {
    int fd;                  /* systemd's end */
    char path[108];
    uv_loop_t loop;
    uint64_t frame;
    service *svc;
} fixture;

static int setup(void **state)
{
    static fixture fx;
    struct sockaddr_un sun;
    char err[128];

    memset(&fx, 0, sizeof fx);
    snprintf(fx.path, sizeof fx.path, "/tmp/reap-test-notify-%d", (int)getpid());
    unlink(fx.path);
    fx.fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    assert_true(fx.fd >= 0);
    memset(&sun, 0, sizeof sun);
    sun.sun_family = AF_UNIX;
    snprintf(sun.sun_path, sizeof sun.sun_path, "%s", fx.path);
    assert_int_equal(bind(fx.fd, (struct sockaddr *)&sun, sizeof sun), 0);
    setenv("NOTIFY_SOCKET", fx.path, 1);
    setenv("WATCHDOG_USEC", "30000", 1); /* fed every 10 ms */
    unsetenv("WATCHDOG_PID");
    assert_int_equal(uv_loop_init(&fx.loop), 0);
    assert_int_equal(service_create(&fx.loop, &fx.frame, &fx.svc, err, sizeof err), 0);
    assert_non_null(fx.svc);
    *state = &fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;

    service_close(fx->svc);
    uv_run(&fx->loop, UV_RUN_DEFAULT);
    assert_int_equal(uv_loop_close(&fx->loop), 0);
    close(fx->fd);
    unlink(fx->path);
    unsetenv("NOTIFY_SOCKET");
    unsetenv("WATCHDOG_USEC");
    return 0;
}

/* Every datagram systemd would have received so far, joined by '|'. */
static void received(fixture *fx, char *out, size_t size)
{
    char msg[256];
    ssize_t n;

    out[0] = '\0';
    while ((n = recv(fx->fd, msg, sizeof msg - 1, 0)) > 0) {
        msg[n] = '\0';
        strncat(out, msg, size - strlen(out) - 2);
        strcat(out, "|");
    }
}

static void stop_cb(uv_timer_t *timer)
{
    uv_close((uv_handle_t *)timer, NULL);
}

/* Runs the loop for ms milliseconds (the service's own timer does not keep it alive). */
static void run_for(fixture *fx, uint64_t ms)
{
    uv_timer_t timer;

    uv_timer_init(&fx->loop, &timer);
    uv_timer_start(&timer, stop_cb, ms, 0);
    uv_run(&fx->loop, UV_RUN_DEFAULT);
}

static void test_ready_and_stopping_reach_systemd_when_asked(void **state)
{
    fixture *fx = *state;
    char got[1024];

    service_ready(fx->svc);
    service_stopping(fx->svc);

    received(fx, got, sizeof got);
    assert_non_null(strstr(got, "READY=1"));
    assert_non_null(strstr(got, "STOPPING=1"));
    assert_true(strstr(got, "READY=1") < strstr(got, "STOPPING=1"));
}

static void test_the_watchdog_is_fed_only_while_frames_advance(void **state)
{
    fixture *fx = *state;
    char got[1024];

    run_for(fx, 60); /* several watchdog periods, no frame */
    received(fx, got, sizeof got);
    assert_null(strstr(got, "WATCHDOG=1"));

    fx->frame++;
    run_for(fx, 60);
    received(fx, got, sizeof got);
    assert_non_null(strstr(got, "WATCHDOG=1"));
}

static void test_outside_systemd_there_is_no_service_and_nothing_is_sent(void **state)
{
    uv_loop_t loop;
    service *svc = (service *)&loop; /* must be overwritten */
    uint64_t frame = 0;
    char err[128];

    (void)state;
    unsetenv("NOTIFY_SOCKET");
    assert_int_equal(uv_loop_init(&loop), 0);

    assert_int_equal(service_create(&loop, &frame, &svc, err, sizeof err), 0);

    assert_null(svc);
    service_ready(svc);
    service_stopping(svc);
    service_close(svc);
    assert_int_equal(uv_loop_close(&loop), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ready_and_stopping_reach_systemd_when_asked, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_the_watchdog_is_fed_only_while_frames_advance,
                                        setup, teardown),
        cmocka_unit_test(test_outside_systemd_there_is_no_service_and_nothing_is_sent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
