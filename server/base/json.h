/*
 * json.h - the one piece of JSON the server writes by hand: a string's escaped contents.
 */
#ifndef REAP_JSON_H
#define REAP_JSON_H

#include <stddef.h>

/* Writes src as the inside of a JSON string (quotes, backslashes and control bytes escaped)
 * into dst, NUL-terminated; stops before an escape that would not fit. Returns the length
 * written. Bytes >= 0x80 pass through (the caller's text is UTF-8). */
size_t json_escape(char *dst, size_t dst_size, const char *src);

#endif /* REAP_JSON_H */
