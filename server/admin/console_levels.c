/*
 * console_levels.c - `stat levels` (console_levels.h).
 */
#include "console_levels.h"

#include "engine.h"

void console_levels_summary(const world *w, strbuf *out)
{
    const world_streaming *st = &w->streaming;

    strbuf_printf(out, "levels=%u", w->levels.count);
    if (st->dim == 0)
        return;
    strbuf_printf(out, " (loaded %u, loading %u, unloading %u, pending purge %u of %u cells)",
                  st->counts[WORLD_LEVEL_LOADED], st->counts[WORLD_LEVEL_LOADING],
                  st->counts[WORLD_LEVEL_UNLOADING], st->counts[WORLD_LEVEL_PENDING_PURGE],
                  st->dim * st->dim);
}

void console_levels_write(world_env *env, world *const *worlds, uint32_t world_count,
                          strbuf *out)
{
    const world_streaming_env *se = &env->streaming;
    const world_streaming_config *cfg = &se->cfg;
    const world_streaming_stats *s = &se->stats;
    bool any = false;

    for (uint32_t i = 0; i < world_count; i++) {
        const world *w = worlds[i];
        const world_streaming *st = &w->streaming;

        if (st->dim == 0)
            continue;
        any = true;
        strbuf_printf(out, "%s: %ux%u cells of %g units; ", w->name, st->dim, st->dim,
                      (double)st->cell_size);
        console_levels_summary(w, out);
        strbuf_puts(out, "\n");
    }
    if (!any) {
        strbuf_puts(out, "no streaming levels: the world profile has no [cells] section (every "
                         "world is its persistent level)\n");
        return;
    }
    strbuf_printf(out, "streaming: wp.Runtime.EnableServerStreaming=%d, "
                       "wp.Runtime.EnableServerStreamingOut=%d, range %g, unload delay %g s\n",
                  cfg->enabled ? 1 : 0, cfg->streaming_out ? 1 : 0, (double)cfg->loading_range,
                  cfg->unload_delay);
    strbuf_printf(out, "streamed in %llu, out %llu; pending purge %u (most at once %u); loads "
                       "held back %llu\n",
                  (unsigned long long)s->streamed_in, (unsigned long long)s->streamed_out,
                  se->pending_purge, s->pending_purge_max, (unsigned long long)s->loads_held);
    strbuf_printf(out, "load wait: p50 %.3f s, p99 %.3f s, max %.3f s (last %u loads)\n",
                  world_streaming_wait_quantile(s, 0.50), world_streaming_wait_quantile(s, 0.99),
                  s->load_wait.max, s->recent_count);
    strbuf_printf(out, "after collections: %llu streamed-out level(s) collected, %llu "
                       "survived%s\n",
                  (unsigned long long)s->levels_collected, (unsigned long long)s->levels_survived,
                  s->levels_survived > 0 && !cfg->verify_removed
                      ? " (s.ForceVerifyLevelsGotRemovedByGC=1 names what keeps them)"
                      : "");
    for (uint32_t i = 0; i < se->survivor_count; i++) {
        void *lvl = gc_weak_get_even_if_garbage(env->heap, se->survivors[i]);
        char path[256];

        if (lvl == NULL)
            continue;
        gc_object_path(env->heap, lvl, path, sizeof path);
        strbuf_printf(out, "  still alive: %s\n", path);
    }
    if (se->report[0] != '\0')
        strbuf_printf(out, "last survivor report:\n%s", se->report);
}

console_status console_stat_levels(engine *e, int argc, char **argv, strbuf *out)
{
    (void)argc;
    (void)argv;
    console_levels_write(&e->env, e->worlds, e->world_count, out);
    return CONSOLE_OK;
}
