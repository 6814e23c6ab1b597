/*
 * console_leaks.h - the console's `gc leaks` command: which objects created after a mark are
 * still alive (the load tester's leak verdict).
 */
#ifndef REAP_CONSOLE_LEAKS_H
#define REAP_CONSOLE_LEAKS_H

#include "console.h"
#include "reap_gc.h"
#include "strbuf.h"

/* `gc leaks mark` / `gc leaks since=MARK` on the engine's heap (a console_fn). */
console_status console_gc_leaks(engine *e, int argc, char **argv, strbuf *out);

/* The same on any heap, for tests. */
console_status console_leaks_run(gc_heap *heap, int argc, char **argv, strbuf *out);

#endif /* REAP_CONSOLE_LEAKS_H */
