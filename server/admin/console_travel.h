/*
 * console_travel.h - the console's side of the match cycle: `servertravel MAP` (UE's
 * command), `stat travel` (the travel under way or the last one: its phases, its frames, the
 * leak verdict), and what `worlds` says of the map and of leaked worlds.
 */
#ifndef REAP_CONSOLE_TRAVEL_H
#define REAP_CONSOLE_TRAVEL_H

#include "console.h"
#include "strbuf.h"

/* `servertravel MAP [hard|seamless]` (a console_fn). */
console_status console_servertravel(engine *e, int argc, char **argv, strbuf *out);
/* `stat travel` (a console_fn). */
console_status console_stat_travel(engine *e, int argc, char **argv, strbuf *out);
/* `worlds`' lines after the current worlds: the map, and each leaked world still alive. */
void console_travel_worlds(engine *e, strbuf *out);

#endif /* REAP_CONSOLE_TRAVEL_H */
