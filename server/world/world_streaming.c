/*
 * world_streaming.c - streaming cells (world_streaming.h): the grid, each cell's state
 * machine, the time slices that add and remove a level's actors, and the collector callbacks
 * that prepare streamed-out levels for a collection and check them after its mark.
 *
 * A cell's level is held by the world's level array from the frame its load starts to the
 * frame its removal ends, so the raw pointer in the cell is valid exactly then. Once the
 * level leaves the world the cell keeps a weak handle only: whatever the collector decides,
 * nothing here can touch freed memory.
 */
#include "world_streaming.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "log.h"
#include "vec.h"
#include "world.h"
#include "world_internal.h"

const char *world_level_state_name(world_level_state s)
{
    switch (s) {
    case WORLD_LEVEL_UNLOADED: return "unloaded";
    case WORLD_LEVEL_LOADING: return "loading";
    case WORLD_LEVEL_LOADED: return "loaded";
    case WORLD_LEVEL_UNLOADING: return "unloading";
    case WORLD_LEVEL_PENDING_PURGE: return "pending_purge";
    case WORLD_LEVEL_STATE_COUNT: break;
    }
    return "?";
}

static double world_streaming_real_clock(void *ctx)
{
    (void)ctx;
    return (double)uv_hrtime() / 1e9;
}

void world_streaming_config_default(world_streaming_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->enabled = false;
    cfg->streaming_out = false;
    cfg->cell_size = 12800.0f;
    cfg->loading_range = 25600.0f;
    cfg->unload_delay = 2.0;
    cfg->add_time_limit = 0.005;
    cfg->add_budget = -1;
    cfg->add_granularity = 10;
    cfg->remove_time_limit = 0.001;
    cfg->remove_granularity = 5;
    cfg->hold_loads_while_pending_purge = true;
    cfg->level_clusters = true;
    cfg->verify_removed = false;
    cfg->clock = world_streaming_real_clock;
    cfg->clock_ctx = NULL;
}

/* ---- the grid ------------------------------------------------------------------------- */

static uint32_t cell_index(const world_streaming *st, const world_cell *c)
{
    return (uint32_t)(c - st->cells);
}

static void cell_set_state(world_streaming *st, world_cell *c, world_level_state s)
{
    st->counts[c->state]--;
    st->counts[s]++;
    c->state = s;
}

world_cell *world_streaming_cell_at(world *w, float x, float y)
{
    world_streaming *st = &w->streaming;
    float fx, fy;

    if (st->dim == 0)
        return NULL;
    fx = floorf((x - st->origin) / st->cell_size);
    fy = floorf((y - st->origin) / st->cell_size);
    if (!(fx >= 0 && fy >= 0 && fx < (float)st->dim && fy < (float)st->dim))
        return NULL;
    return &st->cells[(uint32_t)fy * st->dim + (uint32_t)fx];
}

/* The placement seed of cell (x, y): the same cell always places the same actors. */
static uint64_t cell_seed(int32_t x, int32_t y)
{
    return 0x5EEDF00DULL ^ ((uint64_t)(uint32_t)x << 32) ^ (uint64_t)(uint32_t)y * 0x9E37ULL;
}

static uint64_t cell_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double cell_unit(uint64_t *state)
{
    return (double)(cell_splitmix64(state) >> 11) * 0x1.0p-53; /* [0, 1) */
}

static bool streaming_env_add_world(world_env *env, world *w)
{
    world_streaming_env *se = &env->streaming;

    if (!VEC_RESERVE(se->worlds, se->world_cap, se->world_count + 1))
        return false;
    se->worlds[se->world_count++] = w;
    return true;
}

static void streaming_env_remove_world(world_env *env, const world *w)
{
    world_streaming_env *se = &env->streaming;

    for (uint32_t i = 0; i < se->world_count; i++) {
        if (se->worlds[i] == w) {
            se->worlds[i] = se->worlds[--se->world_count];
            return;
        }
    }
}

static void streaming_gc_pre_cb(gc_heap *heap, gc_event ev, void *userdata);
static void streaming_gc_post_mark_cb(gc_heap *heap, gc_event ev, void *userdata);

/* Player starts: seeded points well inside the extent. */
static void streaming_place_starts(world *w, uint32_t n)
{
    world_streaming *st = &w->streaming;
    uint64_t rng = 0x57A27ULL + w->index;
    float span = 0.8f * w->env->extent;

    for (uint32_t i = 0; i < n; i++) {
        st->starts[i][0] = (float)((cell_unit(&rng) - 0.5) * span);
        st->starts[i][1] = (float)((cell_unit(&rng) - 0.5) * span);
    }
    st->start_count = n;
}

static void cell_load_whole(world *w, world_cell *c);
static bool cell_begin_load(world *w, world_cell *c);
static void streaming_add_slice(world *w, double now);
static void streaming_mark_wanted(world *w, double now);

gc_result world_streaming_init(world *w)
{
    world_env *env = w->env;
    world_streaming *st = &w->streaming;
    const world_streaming_config *cfg = &env->streaming.cfg;
    uint32_t dim, n;

    memset(st, 0, sizeof *st);
    if (!env->cells.present)
        return GC_OK;
    if (!(cfg->cell_size > 0))
        return GC_E_INVALID;
    dim = (uint32_t)ceilf(env->extent / cfg->cell_size);
    if (dim < 1)
        dim = 1;
    if (dim > WORLD_STREAMING_DIM_MAX)
        return GC_E_INVALID;
    n = dim * dim;
    st->cells = calloc(n, sizeof *st->cells);
    st->loading = calloc(n, sizeof *st->loading);
    st->unloading = calloc(n, sizeof *st->unloading);
    if (env->cells.player_starts > 0)
        st->starts = calloc(env->cells.player_starts, sizeof *st->starts);
    if (st->cells == NULL || st->loading == NULL || st->unloading == NULL ||
        (env->cells.player_starts > 0 && st->starts == NULL) || !streaming_env_add_world(env, w)) {
        world_streaming_free(w);
        return GC_E_NOMEM;
    }
    st->dim = dim;
    st->cell_size = cfg->cell_size;
    st->origin = -0.5f * (float)dim * cfg->cell_size;
    for (uint32_t i = 0; i < n; i++) {
        world_cell *c = &st->cells[i];

        c->x = (int32_t)(i % dim);
        c->y = (int32_t)(i / dim);
        c->state = WORLD_LEVEL_UNLOADED;
        c->requested = -1;
        c->last_wanted = -1e300;
    }
    st->counts[WORLD_LEVEL_UNLOADED] = n;
    streaming_place_starts(w, env->cells.player_starts);
    if (!env->streaming.callbacks_added) {
        if (gc_callback_add(env->heap, GC_EVENT_PRE, streaming_gc_pre_cb, env) != GC_OK ||
            gc_callback_add(env->heap, GC_EVENT_POST_MARK, streaming_gc_post_mark_cb, env) !=
                GC_OK) {
            gc_callback_remove(env->heap, GC_EVENT_PRE, streaming_gc_pre_cb, env);
            world_streaming_free(w);
            return GC_E_NOMEM;
        }
        env->streaming.callbacks_added = true;
    }
    /* UE's default: a dedicated server loads every cell at start and keeps them. A travel's
     * world loads them in slices instead (world_streaming_load_step) before play begins. */
    if (!cfg->enabled && cfg->defer_initial_load) {
        for (uint32_t i = 0; i < n; i++)
            if (!cell_begin_load(w, &st->cells[i]))
                return GC_E_NOMEM;
    } else if (!cfg->enabled) {
        for (uint32_t i = 0; i < n; i++) {
            cell_load_whole(w, &st->cells[i]);
            if (st->cells[i].state != WORLD_LEVEL_LOADED)
                return GC_E_NOMEM;
        }
    } else if (env->cells.start_sources && !cfg->defer_initial_load) {
        /* The player starts' cells are there before the first player arrives. */
        streaming_mark_wanted(w, 0);
        for (uint32_t i = 0; i < n; i++) {
            if (!st->cells[i].wanted)
                continue;
            cell_load_whole(w, &st->cells[i]);
            if (st->cells[i].state != WORLD_LEVEL_LOADED)
                return GC_E_NOMEM;
        }
    }
    return GC_OK;
}

void world_streaming_free(world *w)
{
    world_streaming *st = &w->streaming;

    if (st->cells != NULL)
        streaming_env_remove_world(w->env, w);
    free(st->cells);
    free(st->loading);
    free(st->unloading);
    free(st->sources);
    free(st->starts);
    memset(st, 0, sizeof *st);
}

bool world_streaming_load_step(world *w, double time_limit)
{
    world_streaming *st = &w->streaming;
    world_streaming_config *cfg = &w->env->streaming.cfg;
    double keep = cfg->add_time_limit;

    if (st->loading_count == 0)
        return true;
    cfg->add_time_limit = time_limit;
    streaming_add_slice(w, 0);
    cfg->add_time_limit = keep;
    return st->loading_count == 0;
}

void world_streaming_detach(world *w)
{
    world_env *env = w->env;
    world_streaming_env *se = &env->streaming;
    world_streaming *st = &w->streaming;
    uint32_t n = st->dim * st->dim;

    if (st->cells == NULL)
        return;
    streaming_env_remove_world(env, w);
    /* Nothing will prepare these for a collection now: they go with the world's. */
    for (uint32_t i = 0; i < n; i++) {
        world_cell *c = &st->cells[i];
        void *lvl;

        if (c->state != WORLD_LEVEL_PENDING_PURGE)
            continue;
        lvl = gc_weak_get_even_if_garbage(env->heap, c->purged);
        if (lvl != NULL)
            gc_object_mark_garbage(env->heap, lvl);
        c->purged = (gc_weak){ 0, 0 };
        cell_set_state(st, c, WORLD_LEVEL_UNLOADED);
        se->pending_purge--;
    }
    st->loading_count = st->unloading_count = 0;
}

uint32_t world_streaming_pending_purge(const world_env *env)
{
    return env->streaming.pending_purge;
}

static int wait_cmp(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;

    return (x > y) - (x < y);
}

double world_streaming_wait_quantile(const world_streaming_stats *st, double q)
{
    float v[WORLD_STREAMING_RECENT_WAITS];
    uint32_t n = st->recent_count, k;

    if (n == 0)
        return 0;
    memcpy(v, st->recent_waits, n * sizeof *v);
    qsort(v, n, sizeof *v, wait_cmp);
    k = (uint32_t)ceil(q * (double)n);
    return v[k > 0 ? k - 1 : 0];
}

bool world_object_in_streamed_level(const world_env *env, gc_heap *heap, const void *obj)
{
    if (env->streaming.world_count == 0)
        return false;
    for (const void *o = obj; o != NULL; o = gc_object_outer(heap, o)) {
        if (gc_object_class(heap, o) == env->classes.level) {
            const level *lvl = o;

            return lvl->cell != NULL && lvl->cell->lvl == lvl;
        }
    }
    return false;
}

void world_streaming_env_free(world_env *env)
{
    world_streaming_env *se = &env->streaming;

    free(se->worlds);
    free(se->survivors);
    se->worlds = NULL;
    se->survivors = NULL;
    se->world_count = se->world_cap = se->survivor_count = se->survivor_cap = 0;
}

/* ---- loading ---------------------------------------------------------------------------- */

/* Creates the cell's level in the world, its two fixtures in slots 0-1, and queues it. */
static bool cell_begin_load(world *w, world_cell *c)
{
    world_env *env = w->env;
    world_streaming *st = &w->streaming;
    gc_heap *heap = env->heap;
    char name[48];
    void *obj;
    level *lvl;
    gc_result r;

    snprintf(name, sizeof name, "Cell_X%d_Y%d", c->x, c->y);
    r = gc_object_create(heap, env->classes.level, w, name, 0, &obj);
    if (r != GC_OK)
        return false;
    lvl = obj;
    lvl->cell = c;
    lvl->pending_visibility = true;
    WORLD_STORE_REF(heap, lvl->world, w);
    r = gc_ref_array_push(&w->levels, lvl);
    if (r != GC_OK)
        return false; /* unreferenced: garbage at the next collection */
    gc_write_barrier(heap, lvl);
    lvl->index = w->levels.count - 1;
    r = actor_spawn_level_fixtures(w, lvl);
    c->lvl = lvl;
    c->next_item = c->next_count = 0;
    c->rng = cell_seed(c->x, c->y);
    cell_set_state(st, c, WORLD_LEVEL_LOADING);
    st->loading[st->loading_count++] = cell_index(st, c);
    return r == GC_OK;
}

/* Creates the cell's next placed actor; false once every one is there. */
static bool cell_add_next(world *w, world_cell *c, uint32_t *io_objects)
{
    const world_profile_cells *cells = &w->env->cells;
    const world_streaming *st = &w->streaming;
    uint32_t objects = 0, seq;
    float pos[3];

    while (c->next_item < cells->n_placed && c->next_count >= cells->placed[c->next_item].count) {
        c->next_item++;
        c->next_count = 0;
    }
    if (c->next_item >= cells->n_placed)
        return false;
    seq = c->next_count++;
    pos[0] = st->origin + ((float)c->x + (float)cell_unit(&c->rng)) * st->cell_size;
    pos[1] = st->origin + ((float)c->y + (float)cell_unit(&c->rng)) * st->cell_size;
    pos[2] = 0.0f;
    /* A failed placement leaves nothing placed; the cell goes on with the rest. */
    if (world_archetype_place(w, c->lvl, cells->placed[c->next_item].archetype, seq, pos,
                              !w->env->streaming.cfg.level_clusters, &objects) == GC_OK)
        *io_objects += objects;
    return true;
}

/* The level is complete: one cluster of its actors (UE's level actor clustering), visible. */
static void cell_finish_load(world *w, world_cell *c, double now)
{
    world_streaming_env *se = &w->env->streaming;
    world_streaming *st = &w->streaming;

    /* Refused while a mark is in flight, or for a level too small: it stays unclustered. */
    if (se->cfg.level_clusters) {
        double t0 = se->cfg.clock(se->cfg.clock_ctx);

        if (gc_cluster_create(w->env->heap, c->lvl) == GC_OK)
            w->env->clusters_created++;
        se->work.cluster += se->cfg.clock(se->cfg.clock_ctx) - t0;
    }
    c->lvl->pending_visibility = false;
    cell_set_state(st, c, WORLD_LEVEL_LOADED);
    se->stats.streamed_in++;
    if (c->requested >= 0) {
        world_streaming_stats *s = &se->stats;

        stats_histogram_observe(&s->load_wait, now - c->requested);
        s->recent_waits[s->recent_next] = (float)(now - c->requested);
        s->recent_next = (s->recent_next + 1) % WORLD_STREAMING_RECENT_WAITS;
        if (s->recent_count < WORLD_STREAMING_RECENT_WAITS)
            s->recent_count++;
    }
    c->requested = -1;
    c->held = false;
}

static void cell_load_whole(world *w, world_cell *c)
{
    uint32_t objects = 0;

    if (!cell_begin_load(w, c))
        return;
    while (cell_add_next(w, c, &objects))
        ;
    w->streaming.loading_count--;
    cell_finish_load(w, c, 0);
}

/* This frame's slice of adding actors: the oldest loads first, within the time limit, the
 * clock read every `add_granularity` actors (UE's s.LevelStreamingActorsUpdateGranularity). */
static void streaming_add_slice(world *w, double now)
{
    world_streaming *st = &w->streaming;
    const world_streaming_config *cfg = &w->env->streaming.cfg;
    double limit = cfg->add_budget >= 0 ? cfg->add_budget : cfg->add_time_limit;
    double t0 = cfg->clock(cfg->clock_ctx);
    uint32_t granularity = cfg->add_granularity > 0 ? cfg->add_granularity : 1;
    uint32_t done = 0, objects = 0;

    while (st->loading_count > 0) {
        world_cell *c = &st->cells[st->loading[0]];

        if (cell_add_next(w, c, &objects)) {
            if (++done % granularity == 0 && limit > 0 && cfg->clock(cfg->clock_ctx) - t0 >= limit)
                return;
            continue;
        }
        memmove(st->loading, st->loading + 1, --st->loading_count * sizeof *st->loading);
        cell_finish_load(w, c, now);
        log_debug("streaming: %s.Cell_X%d_Y%d is visible", w->name, c->x, c->y);
        /* Its cluster took time too: the next cell waits if the slice is spent. */
        if (limit > 0 && cfg->clock(cfg->clock_ctx) - t0 >= limit)
            return;
    }
}

/* ---- unloading ---------------------------------------------------------------------------- */

static void cell_begin_unload(world *w, world_cell *c)
{
    world_streaming *st = &w->streaming;
    world_streaming_env *se = &w->env->streaming;

    level *lvl = c->lvl;

    lvl->pending_visibility = true;
    c->next_slot = 0;
    cell_set_state(st, c, WORLD_LEVEL_UNLOADING);
    st->unloading[st->unloading_count++] = cell_index(st, c);
    /* UE's NetDriver::NotifyStreamingLevelUnload: the net side lets go of the level now, all
     * of it: whatever of it replicates is destroyed in this frame, not slice by slice. */
    for (uint32_t i = WORLD_FIRST_DYNAMIC_SLOT; i < lvl->actors.count; i++) {
        actor *a = lvl->actors.data[i];
        if (a != NULL && a->replicates)
            actor_destroy(w, a);
    }
    if (se->level_unload_cb != NULL)
        se->level_unload_cb(se->level_unload_ctx, w, lvl);
}

/* Marks an actor's components (its parts) garbage, then the actor and its child actors;
 * returns the objects marked. */
static uint32_t cell_remove_actor(world *w, actor *a)
{
    gc_heap *heap = w->env->heap;
    uint32_t n = 1;

    if (a->kind == ACTOR_KIND_ARCHETYPE) {
        archetype_actor *aa = (archetype_actor *)a;

        for (uint32_t i = 0; i < aa->owns.count; i++) {
            void *o = aa->owns.data[i];

            if (o == NULL)
                continue;
            if (gc_object_is_a(heap, o, w->env->classes.actor))
                n += cell_remove_actor(w, o);
            else if (gc_object_mark_garbage(heap, o) == GC_OK)
                n++;
        }
    }
    actor_destroy(w, a);
    return n;
}

/* The level leaves the world; its own object is marked garbage just before the next
 * collection (streaming_gc_pre_cb), as UE's PrepareStreamedOutLevelsForGC does. */
static void cell_finish_unload(world *w, world_cell *c)
{
    world_streaming_env *se = &w->env->streaming;
    world_streaming *st = &w->streaming;
    level *lvl = c->lvl;

    for (uint32_t i = 0; i < w->levels.count; i++) {
        if (w->levels.data[i] == lvl) {
            w->levels.data[i] = w->levels.data[--w->levels.count];
            if (i < w->levels.count)
                ((level *)w->levels.data[i])->index = i;
            break;
        }
    }
    c->purged = gc_weak_make(w->env->heap, lvl);
    c->lvl = NULL;
    c->prepared = false;
    cell_set_state(st, c, WORLD_LEVEL_PENDING_PURGE);
    se->pending_purge++;
    if (se->pending_purge > se->stats.pending_purge_max)
        se->stats.pending_purge_max = se->pending_purge;
    se->stats.streamed_out++;
    log_debug("streaming: %s.Cell_X%d_Y%d removed, pending purge", w->name, c->x, c->y);
}

/* This frame's slice of removal: the oldest first, within s.UnregisterComponentsTimeLimit, the
 * clock read every s.LevelStreamingComponentsUnregistrationGranularity objects. */
static void streaming_remove_slice(world *w)
{
    world_streaming *st = &w->streaming;
    const world_streaming_config *cfg = &w->env->streaming.cfg;
    double t0 = cfg->clock(cfg->clock_ctx);
    uint32_t granularity = cfg->remove_granularity > 0 ? cfg->remove_granularity : 1;
    uint32_t since_check = 0;

    while (st->unloading_count > 0) {
        world_cell *c = &st->cells[st->unloading[0]];
        level *lvl = c->lvl;

        while (c->next_slot < lvl->actors.count) {
            actor *a = lvl->actors.data[c->next_slot];

            /* The fixtures (slots 0-1) go too: the whole level is leaving. */
            if (a != NULL) {
                if (c->next_slot < WORLD_FIRST_DYNAMIC_SLOT) {
                    gc_object_mark_garbage(w->env->heap, a);
                    since_check++;
                } else {
                    since_check += cell_remove_actor(w, a);
                }
            }
            c->next_slot++;
            if (since_check >= granularity) {
                since_check = 0;
                if (cfg->remove_time_limit > 0 &&
                    cfg->clock(cfg->clock_ctx) - t0 >= cfg->remove_time_limit)
                    return;
            }
        }
        memmove(st->unloading, st->unloading + 1, --st->unloading_count * sizeof *st->unloading);
        lvl->pending_visibility = false;
        cell_finish_unload(w, c);
    }
}

/* ---- the frame's update ------------------------------------------------------------------ */

/* Squared distance from (x, y) to cell c's square. */
static float cell_distance2(const world_streaming *st, const world_cell *c, float x, float y)
{
    float x0 = st->origin + (float)c->x * st->cell_size, y0 = st->origin + (float)c->y * st->cell_size;
    float dx = x < x0 ? x0 - x : (x > x0 + st->cell_size ? x - x0 - st->cell_size : 0.0f);
    float dy = y < y0 ? y0 - y : (y > y0 + st->cell_size ? y - y0 - st->cell_size : 0.0f);

    return dx * dx + dy * dy;
}

/* Marks the cells within the loading range of (x, y). */
static void streaming_want_around(world_streaming *st, float x, float y, float range)
{
    int32_t reach = (int32_t)ceilf(range / st->cell_size);
    int32_t cx = (int32_t)floorf((x - st->origin) / st->cell_size);
    int32_t cy = (int32_t)floorf((y - st->origin) / st->cell_size);

    for (int32_t j = cy - reach; j <= cy + reach; j++) {
        for (int32_t i = cx - reach; i <= cx + reach; i++) {
            world_cell *c;

            if (i < 0 || j < 0 || i >= (int32_t)st->dim || j >= (int32_t)st->dim)
                continue;
            c = &st->cells[(uint32_t)j * st->dim + (uint32_t)i];
            if (!c->wanted && cell_distance2(st, c, x, y) <= range * range)
                c->wanted = true;
        }
    }
}

/* Which cells a streaming source is within the loading range of: every pawn's, and with
 * [cells] player_start_sources every player start's (as a UE streaming source component on
 * it would); every cell while streaming is off. */
static void streaming_mark_wanted(world *w, double now)
{
    world_streaming *st = &w->streaming;
    const world_streaming_config *cfg = &w->env->streaming.cfg;
    uint32_t n = st->dim * st->dim;

    for (uint32_t i = 0; i < n; i++)
        st->cells[i].wanted = !cfg->enabled;
    for (uint32_t s = 0; cfg->enabled && s < st->source_count; s++)
        streaming_want_around(st, st->sources[2 * s], st->sources[2 * s + 1], cfg->loading_range);
    for (uint32_t s = 0; cfg->enabled && w->env->cells.start_sources && s < st->start_count; s++)
        streaming_want_around(st, st->starts[s][0], st->starts[s][1], cfg->loading_range);
    for (uint32_t i = 0; i < n; i++)
        if (st->cells[i].wanted)
            st->cells[i].last_wanted = now;
}

void world_streaming_update(world *w, double now)
{
    world_streaming *st = &w->streaming;
    world_streaming_env *se = &w->env->streaming;
    const world_streaming_config *cfg = &se->cfg;
    uint32_t n = st->dim * st->dim;
    double t0, t1;

    if (st->dim == 0)
        return;
    t0 = cfg->clock(cfg->clock_ctx);
    streaming_mark_wanted(w, now);
    for (uint32_t i = 0; i < n; i++) {
        world_cell *c = &st->cells[i];

        switch (c->state) {
        case WORLD_LEVEL_UNLOADED:
        case WORLD_LEVEL_PENDING_PURGE:
            if (!c->wanted)
                break;
            if (c->requested < 0)
                c->requested = now;
            if (c->state == WORLD_LEVEL_PENDING_PURGE)
                break; /* its old level has to go first */
            /* UE: no new level loads while a streamed-out level waits for its purge. */
            if (cfg->hold_loads_while_pending_purge && se->pending_purge > 0) {
                if (!c->held)
                    se->stats.loads_held++;
                c->held = true;
                break;
            }
            if (!cell_begin_load(w, c) && c->state == WORLD_LEVEL_UNLOADED)
                log_warn("streaming: %s.Cell_X%d_Y%d could not load: out of memory", w->name,
                         c->x, c->y);
            break;
        case WORLD_LEVEL_LOADED:
            if (!c->wanted && cfg->enabled && cfg->streaming_out &&
                now - c->last_wanted >= cfg->unload_delay)
                cell_begin_unload(w, c);
            break;
        case WORLD_LEVEL_LOADING:
        case WORLD_LEVEL_UNLOADING:
        case WORLD_LEVEL_STATE_COUNT:
            break;
        }
    }
    t1 = cfg->clock(cfg->clock_ctx);
    se->work.decide += t1 - t0;
    if (st->loading_count > 0) {
        double cluster = se->work.cluster; /* the slice's clusters are counted apart */

        streaming_add_slice(w, now);
        t0 = t1;
        t1 = cfg->clock(cfg->clock_ctx);
        se->work.add += (t1 - t0) - (se->work.cluster - cluster);
    }
    if (st->unloading_count > 0) {
        streaming_remove_slice(w);
        se->work.remove += cfg->clock(cfg->clock_ctx) - t1;
    }
}

/* ---- the collector's side (UE FLevelStreamingGCHelper) ------------------------------------ */

/* Before a collection: every level that finished its removal is marked garbage, so this
 * collection is the one that must free it. */
static void streaming_gc_pre_cb(gc_heap *heap, gc_event ev, void *userdata)
{
    world_env *env = userdata;
    world_streaming_env *se = &env->streaming;

    (void)ev;
    for (uint32_t k = 0; k < se->world_count; k++) {
        world_streaming *st = &se->worlds[k]->streaming;
        uint32_t n = st->dim * st->dim;

        for (uint32_t i = 0; i < n && st->counts[WORLD_LEVEL_PENDING_PURGE] > 0; i++) {
            world_cell *c = &st->cells[i];
            void *lvl;

            if (c->state != WORLD_LEVEL_PENDING_PURGE || c->prepared)
                continue;
            lvl = gc_weak_get_even_if_garbage(heap, c->purged);
            if (lvl != NULL)
                gc_object_mark_garbage(heap, lvl);
            c->prepared = true;
        }
    }
}

typedef struct verify_walk {
    gc_heap *heap;
    world_streaming_env *se;
    const void *lvl;
    uint32_t found;
    char path[256];
} verify_walk;

/* A line of a survivor's report: to the log, and into the env's last report. */
static void report_line(world_streaming_env *se, const char *line)
{
    size_t n = strlen(se->report);

    log_error("streaming: %s", line);
    if (n + 1 < sizeof se->report)
        snprintf(se->report + n, sizeof se->report - n, "%s\n", line);
}

static void verify_chain_line_cb(const char *line, void *userdata)
{
    char buf[640];

    snprintf(buf, sizeof buf, "  %s", line);
    report_line(userdata, buf);
}

/* An object still alive whose outer chain ends in the streamed-out level. */
static void verify_object_cb(void *obj, void *userdata)
{
    verify_walk *v = userdata;

    if (gc_object_is_unreachable(obj))
        return;
    for (const void *o = obj; o != NULL; o = gc_object_outer(v->heap, o)) {
        if (o != v->lvl)
            continue;
        if (v->found++ < WORLD_STREAMING_VERIFY_LINES) {
            char line[400];

            gc_object_path(v->heap, obj, v->path, sizeof v->path);
            snprintf(line, sizeof line, "%s didn't get garbage collected! The chain that keeps it:",
                     v->path);
            report_line(v->se, line);
            if (gc_reference_chain(v->heap, obj, verify_chain_line_cb, v->se) != GC_OK)
                report_line(v->se, "  (no chain from a root found)");
        }
        return;
    }
}

static void streaming_survivor_keep(world_streaming_env *se, gc_heap *heap, void *lvl)
{
    if (se->survivor_count >= WORLD_STREAMING_SURVIVORS_MAX) {
        memmove(se->survivors, se->survivors + 1, (se->survivor_count - 1) * sizeof *se->survivors);
        se->survivor_count--;
    }
    if (VEC_RESERVE(se->survivors, se->survivor_cap, se->survivor_count + 1))
        se->survivors[se->survivor_count++] = gc_weak_make(heap, lvl);
}

/* After a collection's mark: each level prepared for it is gone, or it survived. Either way
 * the cell may load again: a survivor is the collector's to keep, never freed early. */
static void streaming_gc_post_mark_cb(gc_heap *heap, gc_event ev, void *userdata)
{
    world_env *env = userdata;
    world_streaming_env *se = &env->streaming;

    (void)ev;
    for (uint32_t k = 0; k < se->world_count; k++) {
        world *w = se->worlds[k];
        world_streaming *st = &w->streaming;
        uint32_t n = st->dim * st->dim;

        for (uint32_t i = 0; i < n && st->counts[WORLD_LEVEL_PENDING_PURGE] > 0; i++) {
            world_cell *c = &st->cells[i];
            void *lvl;

            if (c->state != WORLD_LEVEL_PENDING_PURGE)
                continue;
            lvl = gc_weak_get_even_if_garbage(heap, c->purged);
            /* Not prepared: it left the world during this mark; gone already, or the next
             * collection's. */
            if (!c->prepared && lvl != NULL)
                continue;
            if (lvl == NULL) {
                se->stats.levels_collected++;
            } else {
                verify_walk v = { heap, se, lvl, 0, "" };
                char line[400];

                se->stats.levels_survived++;
                streaming_survivor_keep(se, heap, lvl);
                se->report[0] = '\0';
                snprintf(line, sizeof line, "%s.Cell_X%d_Y%d was streamed out but survived a "
                         "collection%s", w->name, c->x, c->y,
                         se->cfg.verify_removed ? "" : " (s.ForceVerifyLevelsGotRemovedByGC=1 "
                                                       "names what keeps it)");
                report_line(se, line);
                if (se->cfg.verify_removed) {
                    gc_object_foreach_read(heap, verify_object_cb, &v);
                    se->stats.verify_survivors += v.found;
                    snprintf(line, sizeof line, "streamed out levels were not completely "
                             "garbage collected: %u object(s) of %s.Cell_X%d_Y%d are alive",
                             v.found, w->name, c->x, c->y);
                    report_line(se, line);
                }
            }
            c->purged = (gc_weak){ 0, 0 };
            c->prepared = false;
            cell_set_state(st, c, WORLD_LEVEL_UNLOADED);
            se->pending_purge--;
        }
    }
}
