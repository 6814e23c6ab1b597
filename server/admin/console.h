/*
 * console.h - operator commands: `obj gc`, `obj list`, `obj refs`, `gc stats` (`stat gc`),
 * `gc leaks`, `set`, `get`, `NAME [VALUE | ?]`,
 * `cvars`, `players`, `worlds`, `quit`, `help`.
 *
 * The same commands come from POST /console and, when stdin is a terminal, from stdin. They run
 * on the loop thread between frames.
 */
#ifndef REAP_CONSOLE_H
#define REAP_CONSOLE_H

#include "strbuf.h"

typedef struct engine engine;
typedef struct console console;

typedef enum console_status {
    CONSOLE_OK = 0,
    CONSOLE_E_UNKNOWN = -1,  /* no such command */
    CONSOLE_E_USAGE = -2,    /* bad or missing arguments */
    CONSOLE_E_FAILED = -3,   /* the command ran and failed */
} console_status;

/* Runs one command line; its output (or the error) is appended to out. */
console_status console_execute(engine *e, const char *line, strbuf *out);

/* Reads commands from fd (a terminal) on the engine's loop; output goes to stdout. */
int console_create(engine *e, int fd, console **out_console);
void console_close(console *c);

#endif /* REAP_CONSOLE_H */
