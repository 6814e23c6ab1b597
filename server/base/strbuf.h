/*
 * strbuf.h - a growable text buffer for console output and the metrics page.
 *
 * The buffer owns its memory; reuse one buffer (strbuf_reset) rather than creating one per
 * request. On allocation failure the buffer keeps what it had and sets `failed`.
 */
#ifndef REAP_STRBUF_H
#define REAP_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct strbuf {
    char *data;   /* NUL-terminated when len > 0 or after any append */
    size_t len;
    size_t cap;
    bool failed;
} strbuf;

void strbuf_init(strbuf *sb);
void strbuf_free(strbuf *sb);
void strbuf_reset(strbuf *sb);
void strbuf_append(strbuf *sb, const char *text, size_t len);
void strbuf_puts(strbuf *sb, const char *text);
void strbuf_printf(strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The text so far; "" for an empty buffer. Borrowed until the next change. */
const char *strbuf_cstr(const strbuf *sb);

#endif /* REAP_STRBUF_H */
