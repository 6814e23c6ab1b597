/*
 * log.c - leveled log lines on stderr.
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static log_level g_log_level = LOG_INFO;

static const char *const log_names[] = { "debug", "info", "warn", "error" };

void log_set_level(log_level level)
{
    g_log_level = level;
}

log_level log_get_level(void)
{
    return g_log_level;
}

bool log_enabled(log_level level)
{
    return level >= g_log_level;
}

bool log_level_parse(const char *text, log_level *out_level)
{
    for (int i = LOG_DEBUG; i <= LOG_ERROR; i++) {
        if (text != NULL && strcmp(text, log_names[i]) == 0) {
            *out_level = (log_level)i;
            return true;
        }
    }
    return false;
}

const char *log_level_name(log_level level)
{
    return level >= LOG_DEBUG && level <= LOG_ERROR ? log_names[level] : "?";
}

void log_write(log_level level, const char *fmt, ...)
{
    char line[1024];
    struct timespec ts;
    struct tm tm;
    size_t n;
    va_list ap;

    if (!log_enabled(level))
        return;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    n = strftime(line, sizeof line, "%Y-%m-%dT%H:%M:%S", &tm);
    n += (size_t)snprintf(line + n, sizeof line - n, ".%03ldZ %-5s ", ts.tv_nsec / 1000000L,
                          log_level_name(level));
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - n, fmt, ap);
    va_end(ap);
    /* One write per line so that lines from a crash or a pipe reader never interleave. */
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}
