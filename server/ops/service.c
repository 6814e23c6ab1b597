/*
 * service.c - systemd notify and watchdog (see service.h).
 */
#include "service.h"

#include <stdio.h>
#include <stdlib.h>
#include <systemd/sd-daemon.h>

#include "log.h"

struct service {
    uv_timer_t watchdog;
    const uint64_t *frame;
    uint64_t fed_frame;       /* the frame counter at the last WATCHDOG=1 */
    bool watchdog_on;
};

static void service_watchdog_cb(uv_timer_t *timer)
{
    service *s = timer->data;

    /* A loop that runs timers but no frames is as stuck as one that runs nothing. */
    if (*s->frame == s->fed_frame)
        return;
    s->fed_frame = *s->frame;
    sd_notify(0, "WATCHDOG=1");
}

int service_create(uv_loop_t *loop, const uint64_t *frame, service **out_service, char *err,
                   size_t err_size)
{
    const char *socket = getenv("NOTIFY_SOCKET");
    uint64_t watchdog_us = 0;
    service *s;

    *out_service = NULL;
    if (socket == NULL || socket[0] == '\0')
        return 0;
    s = calloc(1, sizeof *s);
    if (s == NULL) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    s->frame = frame;
    s->fed_frame = *frame;
    uv_timer_init(loop, &s->watchdog);
    s->watchdog.data = s;
    if (sd_watchdog_enabled(0, &watchdog_us) > 0 && watchdog_us > 0) {
        /* Feed at a third of the interval: two late feeds still arrive in time. */
        uint64_t period_ms = watchdog_us / 3000;

        if (period_ms == 0)
            period_ms = 1;
        uv_timer_start(&s->watchdog, service_watchdog_cb, period_ms, period_ms);
        s->watchdog_on = true;
        log_info("systemd: watchdog every %llu ms", (unsigned long long)period_ms);
    }
    uv_unref((uv_handle_t *)&s->watchdog);
    *out_service = s;
    return 0;
}

void service_ready(service *s)
{
    if (s != NULL)
        sd_notify(0, "READY=1\nSTATUS=serving players");
}

void service_stopping(service *s)
{
    if (s != NULL)
        sd_notify(0, "STOPPING=1\nSTATUS=saying goodbye to players");
}

static void service_close_cb(uv_handle_t *handle)
{
    free(handle->data);
}

void service_close(service *s)
{
    if (s != NULL)
        uv_close((uv_handle_t *)&s->watchdog, service_close_cb);
}
