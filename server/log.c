/*
 * log.c - leveled log lines on stderr, as text (journald priorities when it reads them) or
 * JSON (see log.h).
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "json.h"

static log_level g_log_level = LOG_INFO;
static log_format g_log_format = LOG_FORMAT_TEXT;
static bool g_log_journal;

static const char *const log_names[] = { "debug", "info", "warn", "error" };
/* syslog priorities, as journald reads them from a "<N>" prefix */
static const int log_priorities[] = { 7, 6, 4, 3 };

void log_set_level(log_level level)
{
    g_log_level = level;
}

log_level log_get_level(void)
{
    return g_log_level;
}

/* systemd sets $JOURNAL_STREAM to "DEVICE:INODE" of the stream it connected; stderr is the
 * journal only if it is that very stream (not a pipe the service opened itself). */
static bool log_stderr_is_journal(void)
{
    const char *env = getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;

    if (env == NULL || sscanf(env, "%llu:%llu", &dev, &ino) != 2)
        return false;
    if (fstat(STDERR_FILENO, &st) != 0)
        return false;
    return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void log_set_format(log_format format)
{
    g_log_format = format;
    g_log_journal = format == LOG_FORMAT_TEXT && log_stderr_is_journal();
}

bool log_to_journal(void)
{
    return g_log_journal;
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

static size_t log_timestamp(char *out, size_t out_size)
{
    struct timespec ts;
    struct tm tm;
    size_t n;

    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    n = strftime(out, out_size, "%Y-%m-%dT%H:%M:%S", &tm);
    n += (size_t)snprintf(out + n, out_size - n, ".%03ldZ", ts.tv_nsec / 1000000L);
    return n;
}

/* The word before the first ": " when it is one short word ("gc", "agones", "SIGHUP"). */
static size_t log_component(const char *message)
{
    size_t n = strcspn(message, " :");

    return n > 0 && n <= 24 && message[n] == ':' && message[n + 1] == ' ' ? n : 0;
}

void log_format_line(log_level level, const char *message, char *out, size_t out_size)
{
    char stamp[40];
    size_t n;

    log_timestamp(stamp, sizeof stamp);
    if (g_log_format == LOG_FORMAT_JSON) {
        char component[32] = "", escaped[2048];
        size_t c = log_component(message);

        if (c > 0) {
            memcpy(component, message, c);
            component[c] = '\0';
            message += c + 2;
        }
        json_escape(escaped, sizeof escaped, message);
        n = (size_t)snprintf(out, out_size, "{\"time\":\"%s\",\"level\":\"%s\"", stamp,
                             log_level_name(level));
        if (c > 0 && n < out_size)
            n += (size_t)snprintf(out + n, out_size - n, ",\"component\":\"%s\"", component);
        if (n < out_size)
            snprintf(out + n, out_size - n, ",\"message\":\"%s\"}", escaped);
        return;
    }
    if (g_log_journal)
        snprintf(out, out_size, "<%d>%s %-5s %s", log_priorities[level], stamp,
                 log_level_name(level), message);
    else
        snprintf(out, out_size, "%s %-5s %s", stamp, log_level_name(level), message);
}

void log_write(log_level level, const char *fmt, ...)
{
    char message[1024], line[2400];
    va_list ap;

    if (!log_enabled(level))
        return;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    log_format_line(level, message, line, sizeof line);
    /* One write per line so that lines from a crash or a pipe reader never interleave. */
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}
