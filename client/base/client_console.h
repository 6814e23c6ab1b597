/*
 * client_console.h - reap-client's lines for people: "reap-client: ..." on the run's output,
 * over the in-place progress line when there is one (the next progress line redraws it).
 */
#ifndef REAP_CLIENT_CONSOLE_H
#define REAP_CLIENT_CONSOLE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

typedef struct client_console {
    FILE *out;                /* borrowed */
    bool progress_tty;        /* a progress line is drawn in place on out */
} client_console;

/* One line, flushed. */
void client_say(const client_console *con, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void client_vsay(const client_console *con, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

#endif /* REAP_CLIENT_CONSOLE_H */
