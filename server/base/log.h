/*
 * log.h - leveled log lines on stderr: one line per event worth knowing.
 *
 * Process-wide state (the level and format), set once at start-up from --log-level and
 * --log-format. A text line carries a UTC timestamp and the level, e.g.
 * "2025-05-22T10:01:02.345Z info  listening on udp ..."; when stderr is the systemd journal
 * ($JOURNAL_STREAM names it) each line starts with the kernel-style priority "<6>" so that
 * `journalctl -p err` finds errors. A JSON line is one object:
 * {"time":"...","level":"info","component":"gc","message":"..."}: every line has a component
 * ("gc", "net", "agones", "admin", "console", "systemd", "world", "config" or "engine"), from
 * the message's "gc: " prefix (dropped from the message) or what it is about (log.c:
 * log_classify); "player N", "World0" and "SIGHUP" become player, world and signal fields;
 * then the event's own fields (log_write_fields) follow as string properties.
 */
#ifndef REAP_LOG_H
#define REAP_LOG_H

#include <stdbool.h>
#include <stddef.h>

typedef enum log_level {
    LOG_DEBUG = 0,
    LOG_INFO = 1,
    LOG_WARN = 2,
    LOG_ERROR = 3,
} log_level;

typedef enum log_format {
    LOG_FORMAT_TEXT = 0,  /* one line of text; "<N>" journald priority prefixes under systemd */
    LOG_FORMAT_JSON = 1,  /* one JSON object per line */
} log_format;

void log_set_level(log_level level);
log_level log_get_level(void);
void log_set_format(log_format format);
/* Whether stderr is the journal (decided at log_set_format; tests may ask). */
bool log_to_journal(void);
/* A named value of an event, for JSON lines (text lines say the same in their message). */
typedef struct log_field {
    const char *key;    /* a JSON-safe name: letters, digits, '_' */
    const char *value;  /* any text; escaped */
} log_field;

/* Formats one record as it would be written, without the newline; for tests. */
void log_format_line(log_level level, const char *message, const log_field *fields,
                     size_t field_count, char *out, size_t out_size);
bool log_enabled(log_level level);
/* Parses "debug|info|warn|error"; returns false for anything else. */
bool log_level_parse(const char *text, log_level *out_level);
const char *log_level_name(log_level level);

void log_write(log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* As log_write, with the event's fields (borrowed for the call). */
void log_write_fields(log_level level, const log_field *fields, size_t field_count,
                      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* log_fields(LOG_INFO, LOG_FIELDS({ "cvar", name }, { "value", text }), "console: ...") */
#define LOG_FIELDS(...) (const log_field[]){ __VA_ARGS__ }, \
    sizeof((const log_field[]){ __VA_ARGS__ }) / sizeof(log_field)
#define log_fields(level, ...) log_write_fields(level, __VA_ARGS__)

#define log_debug(...) log_write(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_write(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_write(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_write(LOG_ERROR, __VA_ARGS__)

#endif /* REAP_LOG_H */
