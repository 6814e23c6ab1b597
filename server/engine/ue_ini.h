/*
 * ue_ini.h - Unreal Engine's ini syntax, read as UE's config system reads it.
 *
 * UE's files are not inih's: any section name is allowed, lines have no length limit, an
 * indented line is an ordinary line (not a continuation), `;` and `#` start a comment only at
 * the start of a line, a key may carry an array operator (`+` add unique, `.` add, `-` remove,
 * `!` clear), a value in double quotes loses its quotes and its `\"` / `\\` escapes, and a file
 * may be UTF-8 (with or without BOM) or UTF-16 with a BOM (UE writes UTF-16LE when a file holds
 * non-ASCII text). This module only tokenizes; what the entries mean is engine_options.c's.
 */
#ifndef REAP_UE_INI_H
#define REAP_UE_INI_H

#include <stdbool.h>
#include <stddef.h>

typedef enum ue_ini_op {
    UE_INI_SET,         /* Key=Value: replace the key's first value, or add it */
    UE_INI_ADD_UNIQUE,  /* +Key=Value: add unless that exact pair is there */
    UE_INI_ADD,         /* .Key=Value: add, duplicates allowed */
    UE_INI_REMOVE,      /* -Key=Value: remove that exact pair */
    UE_INI_CLEAR,       /* !Key=...: remove every value of the key */
    UE_INI_OTHER,       /* @Key, *Key: struct-array keys UE uses for its own objects */
} ue_ini_op;

/* One line that says something. For a section header key and value are NULL. Strings are
 * borrowed for the duration of the callback. */
typedef struct ue_ini_entry {
    int line;            /* 1-based */
    const char *section; /* "" before the first header */
    ue_ini_op op;
    const char *key;     /* NULL: the line opened `section` */
    const char *value;   /* unquoted; NULL for a line without '=' */
} ue_ini_entry;

/* Returns 0 to go on, anything else to stop (ue_ini_parse then returns that value). */
typedef int (*ue_ini_entry_cb)(void *user, const ue_ini_entry *entry);

/* Turns the file's bytes into UTF-8 text without BOM: UTF-8 passes through, UTF-16LE/BE with
 * a BOM are converted. *out_text is malloc'd, NUL-terminated (free it); *out_utf16 says
 * whether the file was UTF-16. Returns -1 with err set on a truncated or invalid UTF-16 file
 * or when out of memory. */
int ue_ini_decode(const unsigned char *bytes, size_t len, char **out_text, bool *out_utf16,
                  char *err, size_t err_size);

/* True if the text holds a section header that only UE files have: `[/Script/...]`,
 * `[SystemSettings]`, `[Core.*]`, `[URL]` or `[OnlineSubsystem*]`. */
bool ue_ini_has_ue_section(const char *text);

/* Calls cb for every header and key line of text (UTF-8, NUL-terminated); comments and blank
 * lines are skipped. Never fails on its own: UE accepts any line. */
int ue_ini_parse(const char *text, ue_ini_entry_cb cb, void *user);

#endif /* REAP_UE_INI_H */
