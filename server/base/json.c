/*
 * json.c - JSON string escaping (see json.h).
 */
#include "json.h"

#include <stdio.h>

size_t json_escape(char *dst, size_t dst_size, const char *src)
{
    size_t n = 0;

    if (dst_size == 0)
        return 0;
    for (const unsigned char *p = (const unsigned char *)src; *p != '\0'; p++) {
        char esc[8];
        size_t len;

        switch (*p) {
        case '"': len = (size_t)snprintf(esc, sizeof esc, "\\\""); break;
        case '\\': len = (size_t)snprintf(esc, sizeof esc, "\\\\"); break;
        case '\n': len = (size_t)snprintf(esc, sizeof esc, "\\n"); break;
        case '\r': len = (size_t)snprintf(esc, sizeof esc, "\\r"); break;
        case '\t': len = (size_t)snprintf(esc, sizeof esc, "\\t"); break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                len = (size_t)snprintf(esc, sizeof esc, "\\u%04x", *p);
            else {
                esc[0] = (char)*p;
                esc[1] = '\0';
                len = 1;
            }
        }
        if (n + len >= dst_size)
            break;
        for (size_t i = 0; i < len; i++)
            dst[n++] = esc[i];
    }
    dst[n] = '\0';
    return n;
}
