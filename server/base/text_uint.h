/*
 * text_uint.h - a whole text read as an unsigned integer in a range: the one rule the server's
 * flags, ini files and world profiles share (digits only, no sign, no spaces, nothing after).
 */
#ifndef REAP_TEXT_UINT_H
#define REAP_TEXT_UINT_H

#include <stdbool.h>
#include <stdint.h>

/* *out = the number text spells when it is all decimal digits and within [min, max]; false
 * (and *out unchanged) otherwise, also for NULL. */
bool text_uint(const char *text, uint32_t min, uint32_t max, uint32_t *out);

#endif /* REAP_TEXT_UINT_H */
