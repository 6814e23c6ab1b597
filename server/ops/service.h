/*
 * service.h - systemd's notify protocol: READY=1 once the ports are bound, WATCHDOG=1 while
 * frames advance, STOPPING=1 when the goodbye starts (libsystemd's sd_notify).
 *
 * Only under a unit with Type=notify ($NOTIFY_SOCKET set); anywhere else service_create gives
 * NULL and every other function accepts NULL and does nothing.
 */
#ifndef REAP_SERVICE_H
#define REAP_SERVICE_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

typedef struct service service;

/* frame is borrowed for the service's life: the watchdog is fed only while it advances, so a
 * wedged loop (not merely a live process) gets the unit restarted. *out_service is NULL when
 * not under systemd. Returns 0, or -1 with err. */
int service_create(uv_loop_t *loop, const uint64_t *frame, service **out_service, char *err,
                   size_t err_size);
void service_ready(service *s);
void service_stopping(service *s);
/* Closes the watchdog timer; the memory goes once libuv has closed it. */
void service_close(service *s);

#endif /* REAP_SERVICE_H */
