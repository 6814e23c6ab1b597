/*
 * client_console.c - lines for people (see client_console.h).
 */
#include "client_console.h"

void client_vsay(const client_console *con, const char *fmt, va_list ap)
{
    if (con->progress_tty)
        fputs("\r\033[K", con->out); /* over the progress line; the next one redraws it */
    fputs("reap-client: ", con->out);
    vfprintf(con->out, fmt, ap);
    fputc('\n', con->out);
    fflush(con->out);
}

void client_say(const client_console *con, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    client_vsay(con, fmt, ap);
    va_end(ap);
}
