/*
 * text_uint.c - see text_uint.h.
 */
#include "text_uint.h"

#include <errno.h>
#include <stdlib.h>

bool text_uint(const char *text, uint32_t min, uint32_t max, uint32_t *out)
{
    char *end;
    unsigned long v;

    if (text == NULL || *text < '0' || *text > '9')
        return false;
    errno = 0;
    v = strtoul(text, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return false;
    *out = (uint32_t)v;
    return true;
}
