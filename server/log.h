/*
 * log.h - leveled log lines on stderr: one line per event worth knowing.
 *
 * Process-wide state (the level), set once at start-up from --log-level. Each line carries a
 * UTC timestamp and the level, e.g. "2025-05-22T10:01:02.345Z info  listening on udp ...".
 */
#ifndef REAP_LOG_H
#define REAP_LOG_H

#include <stdbool.h>

typedef enum log_level {
    LOG_DEBUG = 0,
    LOG_INFO = 1,
    LOG_WARN = 2,
    LOG_ERROR = 3,
} log_level;

void log_set_level(log_level level);
log_level log_get_level(void);
bool log_enabled(log_level level);
/* Parses "debug|info|warn|error"; returns false for anything else. */
bool log_level_parse(const char *text, log_level *out_level);
const char *log_level_name(log_level level);

void log_write(log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_debug(...) log_write(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_write(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_write(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_write(LOG_ERROR, __VA_ARGS__)

#endif /* REAP_LOG_H */
