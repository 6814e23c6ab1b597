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

/* What a JSON line says about its event besides the message: every line has a component;
 * a message that begins "gc: " (one of the components below) has it as its component and
 * loses the prefix; "SIGHUP: ..." is the engine's, with a "signal" field; "FILE:LINE: ..." is
 * the config's; "player N ..." is the net's, with "player" (and "world", for a join or a
 * leave) as fields; "World0: ..." is the world's; anything else is the engine's. */
typedef struct log_meta {
    char component[16];
    size_t strip;               /* bytes of prefix to drop from the message */
    log_field extra[2];
    size_t n_extra;
    char signal[16], player[16], world[40];
} log_meta;

static const char *const log_components[] = { "gc", "net", "agones", "admin", "console",
                                              "systemd", "world", "engine", "config" };

/* Copies the word at p (up to a space, ':' or the end) into out; returns its length. */
static size_t log_word(const char *p, char *out, size_t out_size)
{
    size_t n = strcspn(p, " :(");

    if (n >= out_size)
        n = out_size - 1;
    memcpy(out, p, n);
    out[n] = '\0';
    return n;
}

static void log_classify(const char *message, log_meta *m)
{
    size_t n = strcspn(message, " :");
    const char *p;

    memset(m, 0, sizeof *m);
    snprintf(m->component, sizeof m->component, "engine");
    if (n > 0 && message[n] == ':' && message[n + 1] == ' ') {
        for (size_t i = 0; i < sizeof log_components / sizeof *log_components; i++)
            if (strlen(log_components[i]) == n && strncmp(message, log_components[i], n) == 0) {
                snprintf(m->component, sizeof m->component, "%s", log_components[i]);
                m->strip = n + 2;
                return;
            }
        if (n < sizeof m->signal && strncmp(message, "SIG", 3) == 0) {
            log_word(message, m->signal, sizeof m->signal);
            m->extra[m->n_extra++] = (log_field){ "signal", m->signal };
            return;
        }
        if (strncmp(message, "World", 5) == 0 && n < sizeof m->world) {
            snprintf(m->component, sizeof m->component, "world");
            log_word(message, m->world, sizeof m->world);
            m->extra[m->n_extra++] = (log_field){ "world", m->world };
            return;
        }
    }
    if (n > 0 && message[n] == ':' && message[n + 1] >= '0' && message[n + 1] <= '9') {
        snprintf(m->component, sizeof m->component, "config"); /* FILE:LINE: ... */
        return;
    }
    if (strncmp(message, "player ", 7) == 0 && message[7] >= '0' && message[7] <= '9') {
        snprintf(m->component, sizeof m->component, "net");
        log_word(message + 7, m->player, sizeof m->player);
        m->extra[m->n_extra++] = (log_field){ "player", m->player };
        if ((p = strstr(message, " joined ")) != NULL)
            log_word(p + 8, m->world, sizeof m->world);
        else if ((p = strstr(message, " left ")) != NULL)
            log_word(p + 6, m->world, sizeof m->world);
        if (m->world[0] != '\0')
            m->extra[m->n_extra++] = (log_field){ "world", m->world };
        return;
    }
    if (strncmp(message, "listening on udp", 16) == 0)
        snprintf(m->component, sizeof m->component, "net");
    else if (strncmp(message, "admin on http", 13) == 0)
        snprintf(m->component, sizeof m->component, "admin");
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
    char escaped[2048];
    size_t n = 0, room;
    log_meta meta;

    if (out_size < 3)
        return;
    log_classify(message, &meta);
    message += meta.strip;
    n = log_append(out, out_size, n, "{\"time\":\"%s\",\"level\":\"%s\",\"component\":\"%s\"",
                   stamp, log_level_name(level), meta.component);
    room = out_size - 1 - n > sizeof message_key ? out_size - 1 - n - (sizeof message_key - 1)
                                                 : 1;
    json_escape(escaped, room < sizeof escaped ? room : sizeof escaped, message);
    n = log_append(out, out_size, n, ",\"message\":\"%s\"", escaped);
    for (size_t i = 0; i < meta.n_extra; i++) {
        bool given = false;  /* the caller's own field of that name wins */
        for (size_t k = 0; k < field_count; k++)
            given |= strcmp(fields[k].key, meta.extra[i].key) == 0;
        if (given)
            continue;
        json_escape(escaped, sizeof escaped, meta.extra[i].value);
        n = log_append(out, out_size, n, ",\"%s\":\"%s\"", meta.extra[i].key, escaped);
    }
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
