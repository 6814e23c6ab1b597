/*
 * console_levels.h - the console's `stat levels` command: every world's streaming cells by
 * state, what streamed in and out, how long loads waited, and the levels that outlived a
 * collection (UE's `stat levels` lists the levels and their state).
 */
#ifndef REAP_CONSOLE_LEVELS_H
#define REAP_CONSOLE_LEVELS_H

#include "console.h"
#include "strbuf.h"
#include "world.h"

/* `stat levels` (a console_fn). */
console_status console_stat_levels(engine *e, int argc, char **argv, strbuf *out);

/* The same over any env and worlds, for tests. */
void console_levels_write(world_env *env, world *const *worlds, uint32_t world_count,
                          strbuf *out);

/* One world's level counts, as `worlds` shows them: "levels=N (loaded L, ...)". */
void console_levels_summary(const world *w, strbuf *out);

#endif /* REAP_CONSOLE_LEVELS_H */
