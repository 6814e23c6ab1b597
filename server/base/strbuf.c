/*
 * strbuf.c - a growable text buffer.
 */
#include "strbuf.h"
#include "vec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void strbuf_init(strbuf *sb)
{
    sb->data = NULL;
    sb->len = 0;
    sb->cap = 0;
    sb->failed = false;
}

void strbuf_free(strbuf *sb)
{
    free(sb->data);
    strbuf_init(sb);
}

void strbuf_reset(strbuf *sb)
{
    sb->len = 0;
    sb->failed = false;
    if (sb->data != NULL)
        sb->data[0] = '\0';
}

static bool strbuf_reserve(strbuf *sb, size_t extra)
{
    if (!VEC_GROW(sb->data, sb->cap, sb->len + extra + 1, 256)) {
        sb->failed = true;
        return false;
    }
    return true;
}

void strbuf_append(strbuf *sb, const char *text, size_t len)
{
    if (!strbuf_reserve(sb, len))
        return;
    memcpy(sb->data + sb->len, text, len);
    sb->len += len;
    sb->data[sb->len] = '\0';
}

void strbuf_puts(strbuf *sb, const char *text)
{
    strbuf_append(sb, text, strlen(text));
}

void strbuf_printf(strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !strbuf_reserve(sb, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb->len += (size_t)n;
}

const char *strbuf_cstr(const strbuf *sb)
{
    return sb->data != NULL ? sb->data : "";
}
