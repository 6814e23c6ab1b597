/*
 * console_travel.c - servertravel, stat travel, and the leaked worlds `worlds` lists.
 */
#include "console_travel.h"

#include <string.h>

#include "engine.h"

console_status console_servertravel(engine *e, int argc, char **argv, strbuf *out)
{
    if (argc < 1) {
        strbuf_puts(out, "usage: servertravel MAP [hard|seamless]\n");
        return CONSOLE_E_USAGE;
    }
    return engine_server_travel(e, argv[0], argc == 2 ? argv[1] : NULL, out) ? CONSOLE_OK
                                                                              : CONSOLE_E_FAILED;
}

static void travel_phases(const engine_travel_result *r, strbuf *out)
{
    for (int p = ENGINE_TRAVEL_LOAD; p < ENGINE_TRAVEL_PHASE_COUNT; p++)
        if (r->phase_seconds[p] > 0)
            strbuf_printf(out, " %s=%.3fs", engine_travel_phase_name((engine_travel_phase)p),
                          r->phase_seconds[p]);
}

console_status console_stat_travel(engine *e, int argc, char **argv, strbuf *out)
{
    const engine_travel *t = &e->travel;
    const engine_travel_frames *f = &e->last_travel_frames;

    (void)argc;
    (void)argv;
    strbuf_printf(out, "map %s, %s travel by default (SeamlessTravel=%s), match %u s (%s)\n",
                  engine_map_name(e), e->opts.seamless_travel ? "seamless" : "hard",
                  e->opts.seamless_travel ? "true" : "false", e->opts.match_seconds,
                  e->opts.match_seconds > 0 ? "rotation on" : "no rotation");
    if (engine_travel_busy(t))
        strbuf_printf(out, "under way: %s travel to %s from %s, phase %s%s, %u frame(s)\n",
                      engine_travel_mode_name(t->mode), t->map, t->from,
                      engine_travel_phase_name(t->phase),
                      t->mode == ENGINE_TRAVEL_SEAMLESS ? (t->hop == 1 ? " (hop 1)" : " (hop 2)")
                                                        : "",
                      t->cur.frames);
    strbuf_printf(out, "travels: %llu hard, %llu seamless, %llu refused; leaked worlds: %llu "
                  "found, %llu counted, %u alive\n",
                  (unsigned long long)t->travels[ENGINE_TRAVEL_HARD],
                  (unsigned long long)t->travels[ENGINE_TRAVEL_SEAMLESS],
                  (unsigned long long)t->refused, (unsigned long long)e->leaked_found,
                  (unsigned long long)t->leaked_worlds, e->leaked_count);
    if (t->last.map[0] == '\0')
        return CONSOLE_OK;
    strbuf_printf(out, "last: %s travel %s -> %s%s: %.3f s in %u frame(s), longest frame "
                  "%.1f ms, %llu over budget, leaked %u;",
                  engine_travel_mode_name(t->last.mode), t->last.from, t->last.map,
                  t->last.sliced ? " (sliced)" : "", t->last.seconds, t->last.frames,
                  f->longest_frame * 1e3, (unsigned long long)f->over_budget, t->last.leaked);
    travel_phases(&t->last, out);
    strbuf_printf(out, "\nafter it: %u objects, %.1f MiB resident\n", f->objects, f->rss_mb);
    return CONSOLE_OK;
}

void console_travel_worlds(engine *e, strbuf *out)
{
    strbuf_printf(out, "map %s%s\n", engine_map_name(e),
                  engine_travel_busy(&e->travel) ? " (travelling)" : "");
    for (uint32_t i = 0; i < e->leaked_count; i++) {
        const engine_leaked_world *lk = &e->leaked[i];

        if (gc_weak_get_even_if_garbage(e->heap, lk->world) == NULL)
            continue;
        strbuf_printf(out, "%-8s leaked: map %s, found by travel %llu with %u object(s) in it\n",
                      lk->name, lk->map, (unsigned long long)lk->travel, lk->objects);
    }
}
