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

/* Appends the formatted text only if all of it fits before out_size - 1 (one byte stays for
 * the closing brace); returns the new length. */
static size_t log_append(char *out, size_t out_size, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static size_t log_append(char *out, size_t out_size, size_t n, const char *fmt, ...)
{
    va_list ap;
    int len;

    if (n + 1 >= out_size)
        return n;
    va_start(ap, fmt);
    len = vsnprintf(out + n, out_size - 1 - n, fmt, ap);
    va_end(ap);
    if (len < 0 || n + (size_t)len >= out_size - 1) {
        out[n] = '\0';
        return n;
    }
    return n + (size_t)len;
}

/* One JSON object, always whole: a message too long is cut at a character boundary, fields
 * that no longer fit are left out. */
static void log_format_json(log_level level, const char *stamp, const char *message,
                            const log_field *fields, size_t field_count, char *out,
                            size_t out_size)
{
    static const char message_key[] = ",\"message\":\"\"";
    char component[32] = "", escaped[2048];
    size_t c = log_component(message), n = 0, room;

    if (out_size < 3)
        return;
    if (c > 0) {
        memcpy(component, message, c);
        component[c] = '\0';
        message += c + 2;
    }
    n = log_append(out, out_size, n, "{\"time\":\"%s\",\"level\":\"%s\"", stamp,
                   log_level_name(level));
    if (c > 0)
        n = log_append(out, out_size, n, ",\"component\":\"%s\"", component);
    room = out_size - 1 - n > sizeof message_key ? out_size - 1 - n - (sizeof message_key - 1)
                                                 : 1;
    json_escape(escaped, room < sizeof escaped ? room : sizeof escaped, message);
    n = log_append(out, out_size, n, ",\"message\":\"%s\"", escaped);
    for (size_t i = 0; i < field_count; i++) {
        json_escape(escaped, sizeof escaped, fields[i].value != NULL ? fields[i].value : "");
        n = log_append(out, out_size, n, ",\"%s\":\"%s\"", fields[i].key, escaped);
    }
    out[n] = '}';
    out[n + 1] = '\0';
}

void log_format_line(log_level level, const char *message, const log_field *fields,
                     size_t field_count, char *out, size_t out_size)
{
    char stamp[40];

    log_timestamp(stamp, sizeof stamp);
    if (g_log_format == LOG_FORMAT_JSON)
        log_format_json(level, stamp, message, fields, field_count, out, out_size);
    else if (g_log_journal)
        snprintf(out, out_size, "<%d>%s %-5s %s", log_priorities[level], stamp,
                 log_level_name(level), message);
    else
        snprintf(out, out_size, "%s %-5s %s", stamp, log_level_name(level), message);
}

static void log_emit(log_level level, const log_field *fields, size_t field_count,
                     const char *fmt, va_list ap)
{
    char message[1024], line[4096];

    vsnprintf(message, sizeof message, fmt, ap);
    log_format_line(level, message, fields, field_count, line, sizeof line);
    /* One write per line so that lines from a crash or a pipe reader never interleave. */
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

void log_write(log_level level, const char *fmt, ...)
{
    va_list ap;

    if (!log_enabled(level))
        return;
    va_start(ap, fmt);
    log_emit(level, NULL, 0, fmt, ap);
    va_end(ap);
}

void log_write_fields(log_level level, const log_field *fields, size_t field_count,
                      const char *fmt, ...)
{
    va_list ap;

    if (!log_enabled(level))
        return;
    va_start(ap, fmt);
    log_emit(level, fields, field_count, fmt, ap);
    va_end(ap);
}
