/*
 * ue_ini.c - Unreal Engine's ini syntax (see ue_ini.h).
 *
 * The rules follow UE's FConfigFile::ProcessInputFileContents: lines are trimmed, a line that
 * starts with '[' and ends with ']' opens a section, ';' or '#' at the start is a comment, a
 * key line splits at its first '=', the key's first character may be an array operator, and
 * a value that starts with '"' is a quoted string.
 */
#include "ue_ini.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- encodings ---------------------------------------------------------------------------- */

static size_t ue_ini_put_utf8(char *dst, uint32_t cp)
{
    if (cp < 0x80) {
        dst[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        dst[0] = (char)(0xC0 | (cp >> 6));
        dst[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        dst[0] = (char)(0xE0 | (cp >> 12));
        dst[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        dst[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    dst[0] = (char)(0xF0 | (cp >> 18));
    dst[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    dst[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    dst[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static int ue_ini_from_utf16(const unsigned char *p, size_t len, bool little, char **out_text,
                             char *err, size_t err_size)
{
    size_t units = len / 2, n = 0;
    char *text;

    if (len % 2 != 0) {
        snprintf(err, err_size, "UTF-16 file with an odd number of bytes (truncated?)");
        return -1;
    }
    text = malloc(units * 3 + 1); /* a unit never takes more than 3 bytes of UTF-8 */
    if (text == NULL) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < units; i++) {
        uint32_t u = little ? (uint32_t)(p[2 * i] | p[2 * i + 1] << 8)
                            : (uint32_t)(p[2 * i] << 8 | p[2 * i + 1]);

        if (u >= 0xD800 && u < 0xDC00 && i + 1 < units) {
            uint32_t lo = little ? (uint32_t)(p[2 * i + 2] | p[2 * i + 3] << 8)
                                 : (uint32_t)(p[2 * i + 2] << 8 | p[2 * i + 3]);
            if (lo >= 0xDC00 && lo < 0xE000) {
                n += ue_ini_put_utf8(text + n, 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00));
                i++;
                continue;
            }
        }
        if (u >= 0xD800 && u < 0xE000) {
            snprintf(err, err_size, "invalid UTF-16 (a lone surrogate at byte %zu)", 2 * i + 2);
            free(text);
            return -1;
        }
        if (u == 0) {
            snprintf(err, err_size, "a NUL character at byte %zu", 2 * i + 2);
            free(text);
            return -1;
        }
        n += ue_ini_put_utf8(text + n, u);
    }
    text[n] = '\0';
    *out_text = text;
    return 0;
}

int ue_ini_decode(const unsigned char *bytes, size_t len, char **out_text, bool *out_utf16,
                  char *err, size_t err_size)
{
    char *text;

    if (len >= 2 && ((bytes[0] == 0xFF && bytes[1] == 0xFE) ||
                     (bytes[0] == 0xFE && bytes[1] == 0xFF))) {
        if (ue_ini_from_utf16(bytes + 2, len - 2, bytes[0] == 0xFF, out_text, err, err_size) != 0)
            return -1;
        *out_utf16 = true;
        return 0;
    }
    if (len >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF) {
        bytes += 3;
        len -= 3;
    }
    if (memchr(bytes, '\0', len) != NULL) {
        snprintf(err, err_size, "a NUL byte at byte %zu (UTF-16 without a BOM?)",
                 (size_t)((const unsigned char *)memchr(bytes, '\0', len) - bytes) + 1);
        return -1;
    }
    text = malloc(len + 1);
    if (text == NULL) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    memcpy(text, bytes, len);
    text[len] = '\0';
    *out_text = text;
    *out_utf16 = false;
    return 0;
}

/* ---- lines -------------------------------------------------------------------------------- */

static bool ue_ini_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* Trims s in place (s is writable); returns the first non-space character. */
static char *ue_ini_trim(char *s)
{
    size_t n;

    while (ue_ini_space(*s))
        s++;
    n = strlen(s);
    while (n > 0 && ue_ini_space(s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* Takes the quotes and escapes off a quoted value, in place. Text after the closing quote is
 * dropped, as UE's FParse::QuotedString does. */
static void ue_ini_unquote(char *v)
{
    char *out = v;
    const char *in = v + 1;

    while (*in != '\0' && *in != '"') {
        if (in[0] == '\\' && (in[1] == '"' || in[1] == '\\'))
            in++;
        *out++ = *in++;
    }
    *out = '\0';
}

/* Headers only UE files have; a trailing '*' matches any rest. */
static const char *const ue_ini_marker_sections[] = {
    "[/Script/*", "[SystemSettings]", "[Core.*", "[URL]", "[OnlineSubsystem*",
};

bool ue_ini_has_ue_section(const char *text)
{
    const char *line = text;

    while (line != NULL && *line != '\0') {
        while (*line == ' ' || *line == '\t')
            line++;
        for (size_t i = 0; i < sizeof ue_ini_marker_sections / sizeof *ue_ini_marker_sections;
             i++) {
            const char *m = ue_ini_marker_sections[i];
            size_t n = strlen(m);

            if (m[n - 1] == '*' ? strncmp(line, m, n - 1) == 0 : strncmp(line, m, n) == 0)
                return true;
        }
        line = strchr(line, '\n');
        if (line != NULL)
            line++;
    }
    return false;
}

int ue_ini_parse(const char *text, ue_ini_entry_cb cb, void *user)
{
    char *copy = strdup(text);
    char *next = copy;
    const char *section = "";
    int lineno = 0, rc = 0;

    if (copy == NULL)
        return -1;
    while (next != NULL && rc == 0) {
        char *line = next, *eq;
        ue_ini_entry e;

        next = strchr(next, '\n');
        if (next != NULL)
            *next++ = '\0';
        lineno++;
        line = ue_ini_trim(line);
        if (*line == '\0' || *line == ';' || *line == '#')
            continue;
        memset(&e, 0, sizeof e);
        e.line = lineno;
        e.op = UE_INI_SET;
        if (line[0] == '[' && line[strlen(line) - 1] == ']') {
            line[strlen(line) - 1] = '\0';
            section = line + 1;
            e.section = section;
            rc = cb(user, &e);
            continue;
        }
        e.section = section;
        switch (line[0]) {
        case '+': e.op = UE_INI_ADD_UNIQUE; break;
        case '.': e.op = UE_INI_ADD; break;
        case '-': e.op = UE_INI_REMOVE; break;
        case '!': e.op = UE_INI_CLEAR; break;
        case '@':
        case '*': e.op = UE_INI_OTHER; break;
        default: break;
        }
        if (e.op != UE_INI_SET)
            line++;
        eq = strchr(line, '=');
        if (eq != NULL) {
            char *value;

            *eq = '\0';
            value = ue_ini_trim(eq + 1);
            if (*value == '"')
                ue_ini_unquote(value);
            e.value = value;
        }
        e.key = ue_ini_trim(line);
        rc = cb(user, &e);
    }
    free(copy);
    return rc;
}
