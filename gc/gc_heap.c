/*
 * gc_heap.c - the heap's life: creation, settings, the clock, callbacks, statistics and the
 * disregard-for-GC pool.
 *
 * On entry to gc_heap_create nothing exists; on exit the object array, the metaclass and the
 * locks are ready. gc_heap_destroy runs every object through the destroy pipeline (instances
 * first, classes last, since an instance's hooks live in its class) and frees everything.
 */
#include "gc_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *gc_result_str(gc_result r)
{
    switch (r) {
    case GC_OK: return "ok";
    case GC_E_NULL: return "a required pointer is NULL";
    case GC_E_DEAD: return "the object or handle is no longer alive";
    case GC_E_LIMIT: return "the object or class limit is reached";
    case GC_E_PERMANENT: return "not allowed on a permanent (disregard-for-GC) object";
    case GC_E_GARBAGE: return "the object is marked as garbage";
    case GC_E_ROOTED: return "the object is rooted or reference-counted";
    case GC_E_SCHEMA: return "malformed class description";
    case GC_E_NOMEM: return "out of memory";
    case GC_E_LOCKED: return "the GC lock is held by another thread";
    case GC_E_STATE: return "not allowed in the collector's current state";
    case GC_E_INVALID: return "invalid argument";
    case GC_E_EXISTS: return "an object with that name already exists under that outer";
    case GC_E_NOT_FOUND: return "not found";
    }
    return "unknown result";
}

void gc_settings_default(gc_settings *s)
{
    memset(s, 0, sizeof *s);
    s->num_retries_before_forcing = 10;
    s->num_workers = 0;
    s->allow_incremental_reachability = false;
    s->incremental_reachability_time_limit = 0.005;
    s->delay_reachability_iterations = 0;
    s->allow_incremental_gather = false;
    s->incremental_gather_time_limit = 0.0;
    s->incremental_begin_destroy = true;
    s->create_clusters = true;
    s->min_cluster_size = 5;
    s->history_size = 0;
    s->garbage_reference_tracking = false;
    s->verify_assumptions = false;
    s->finish_destroy_wait_limit = 60.0;
}

static bool settings_all_zero(const gc_settings *s)
{
    static const gc_settings zero;
    return memcmp(s, &zero, sizeof zero) == 0;
}

static double monotonic_clock(void *userdata)
{
    (void)userdata;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double gc_now(const gc_heap *heap)
{
    return heap->clock(heap->clock_userdata);
}

static gc_result settings_check(const gc_settings *s)
{
    if (s->incremental_reachability_time_limit < 0 || s->incremental_gather_time_limit < 0 ||
        s->finish_destroy_wait_limit < 0)
        return GC_E_INVALID;
    if (s->num_workers > 64)
        return GC_E_INVALID;
    return GC_OK;
}

gc_result gc_heap_create(const gc_heap_config *cfg, gc_heap **out_heap)
{
    if (!out_heap)
        return GC_E_NULL;
    gc_heap_config c;
    if (cfg)
        c = *cfg;
    else
        memset(&c, 0, sizeof c);
    if (settings_all_zero(&c.settings))
        gc_settings_default(&c.settings);
    if (settings_check(&c.settings) != GC_OK)
        return GC_E_INVALID;
    if (c.max_objects == 0)
        c.max_objects = 1u << 22;
    if (c.max_classes == 0)
        c.max_classes = 4096;
    if (c.max_bytes == 0)
        c.max_bytes = (size_t)4 << 30;
    if (c.max_objects > (1u << 30) || c.max_classes > (1u << 20))
        return GC_E_INVALID;

    gc_heap *heap = gc_calloc(1, sizeof *heap);
    if (!heap)
        return GC_E_NOMEM;
    heap->settings = c.settings;
    heap->clock = c.clock ? c.clock : monotonic_clock;
    heap->clock_userdata = c.clock_userdata;
    heap->max_classes = c.max_classes;
    heap->classes = gc_calloc(c.max_classes, sizeof *heap->classes);
    heap->mark_value = 1;
    heap->phase = GC_PHASE_IDLE;
    if (!heap->classes || gc_array_init(heap, c.max_objects) != GC_OK) {
        free(heap->classes);
        free(heap);
        return GC_E_NOMEM;
    }
    if (gc_region_init(heap, c.max_bytes) != GC_OK) {
        gc_array_close(heap);
        free(heap->classes);
        free(heap);
        return GC_E_NOMEM;
    }
    uv_mutex_init(&heap->table_lock);
    heap->name_entry_free = UINT32_MAX; /* no free entry */
    heap->cluster_free = UINT32_MAX;    /* no free cluster slot */
    gc_map_init(&heap->names_by_index);
    gc_map_init(&heap->names_by_path);
    gc_map_init(&heap->pins);
    gc_map_init(&heap->cluster_of);
    gc_lock_init(heap);
    gc_barrier_init(heap);
    gc_worker_init(&heap->main_worker, heap, 0);
    atomic_flag_clear(&heap->block_pool_lock);
    heap->workers[0] = &heap->main_worker;
    heap->mark_workers = 1;
    gc_result r = gc_class_bootstrap(heap);
    if (r != GC_OK) {
        gc_heap_destroy(heap);
        return r;
    }
    *out_heap = heap;
    return GC_OK;
}

/* Runs a set of objects through begin_destroy, finish_destroy and free, as a purge would. */
static void destroy_objects(gc_heap *heap, bool classes)
{
    heap->unreachable.count = 0;
    heap->unreachable_plain.count = 0; /* a gather in flight may have begun it */
    heap->pending_finish.count = 0;    /* every object is in the new list */
    size_t n = gc_object_count(heap);
    if (gc_ptr_vec_reserve(&heap->unreachable, n) != GC_OK ||
        gc_ptr_vec_reserve(&heap->pending_finish, n) != GC_OK ||
        gc_ptr_vec_reserve(&heap->purge_classes, n) != GC_OK)
        abort(); /* cannot leave objects behind half-destroyed (see reap_gc.h) */
    for (uint32_t i = 0; i < gc_high_water(heap); i++) {
        gc_header *h = gc_object_at(heap, i);
        if (!h || (bool)(gc_flags(h) & GC_F_IS_CLASS) != classes)
            continue;
        gc_flags_set(h, GC_F_UNREACHABLE);
        gc_ptr_vec_push_reserved(&heap->unreachable, h);
    }
    heap->purge_cursor = 0;
    gc_purge_begin_destroy(heap, 0);
    gc_purge_finish_destroy(heap, 0); /* waits for stragglers, within the wait limit */
    heap->purge_cursor = 0;           /* stragglers that never got ready are freed anyway */
    heap->pending_finish.count = 0;
    gc_purge_free(heap, 0);
}

void gc_heap_destroy(gc_heap *heap)
{
    if (!heap)
        return;
    if (!heap->reachability_pending && heap->phase >= GC_PHASE_GATHER)
        gc_incremental_purge(heap, 0); /* finish what a collection left */
    gc_barrier_set_active(heap, false);
    heap->reachability_pending = false;
    heap->phase = GC_PHASE_IDLE;
    heap->mark_done_pending_gather = false;
    gc_clusters_close(heap);
    destroy_objects(heap, false);
    destroy_objects(heap, true);
    while (heap->referencers) {
        gc_referencer *r = heap->referencers;
        heap->referencers = r->next;
        free(r->name);
        free(r);
    }
    for (int ev = 0; ev < GC_EVENT_COUNT_; ev++) {
        for (size_t i = 0; i < heap->callbacks[ev].count; i++)
            free(heap->callbacks[ev].data[i]);
        gc_ptr_vec_free(&heap->callbacks[ev]);
    }
    free(heap->name_entries);
    gc_map_free(&heap->names_by_index);
    gc_map_free(&heap->names_by_path);
    gc_map_free(&heap->pins);
    gc_map_free(&heap->cluster_of);
    gc_ptr_vec_free(&heap->unreachable);
    gc_ptr_vec_free(&heap->unreachable_plain);
    gc_ptr_vec_free(&heap->pending_finish);
    gc_ptr_vec_free(&heap->purge_classes);
    gc_barrier_close(heap);
    gc_history_close(heap);
    gc_parallel_close(heap);
    gc_worker_close(&heap->main_worker);
    gc_block_pool_close(heap);
    gc_lock_close(heap);
    uv_mutex_destroy(&heap->table_lock);
    gc_array_close(heap);
    gc_region_close(heap);
    free(heap->classes);
    free(heap);
}

gc_result gc_heap_configure(gc_heap *heap, const gc_settings *settings)
{
    if (!heap || !settings)
        return GC_E_NULL;
    gc_result r = settings_check(settings);
    if (r != GC_OK)
        return r;
    heap->settings = *settings;
    return GC_OK;
}

const gc_settings *gc_heap_settings(const gc_heap *heap)
{
    return heap ? &heap->settings : NULL;
}

gc_result gc_disregard_open(gc_heap *heap)
{
    if (!heap)
        return GC_E_NULL;
    if (heap->disregard_open || heap->disregard_closed)
        return GC_E_STATE;
    /* Only the metaclass may exist already: the pool is the bottom of the array. */
    if (atomic_load(&heap->live_count) != heap->permanent_count)
        return GC_E_STATE;
    heap->disregard_open = true;
    return GC_OK;
}

gc_result gc_disregard_close(gc_heap *heap)
{
    if (!heap)
        return GC_E_NULL;
    if (!heap->disregard_open)
        return GC_E_STATE;
    heap->disregard_open = false;
    heap->disregard_closed = true;
    return GC_OK;
}

gc_result gc_callback_add(gc_heap *heap, gc_event ev, gc_event_fn fn, void *userdata)
{
    if (!heap || !fn)
        return GC_E_NULL;
    if ((unsigned)ev >= GC_EVENT_COUNT_)
        return GC_E_INVALID;
    gc_callback *cb = gc_malloc(sizeof *cb);
    if (!cb)
        return GC_E_NOMEM;
    cb->fn = fn;
    cb->userdata = userdata;
    if (gc_ptr_vec_push(&heap->callbacks[ev], cb) != GC_OK) {
        free(cb);
        return GC_E_NOMEM;
    }
    return GC_OK;
}

void gc_callback_remove(gc_heap *heap, gc_event ev, gc_event_fn fn, void *userdata)
{
    if (!heap || (unsigned)ev >= GC_EVENT_COUNT_)
        return;
    gc_ptr_vec *v = &heap->callbacks[ev];
    for (size_t i = 0; i < v->count; i++) {
        gc_callback *cb = v->data[i];
        if (cb->fn != fn || cb->userdata != userdata)
            continue;
        if (heap->firing[ev]) {
            cb->fn = NULL; /* gc_fire is walking the list: it drops the entry when done */
            return;
        }
        free(cb);
        memmove(&v->data[i], &v->data[i + 1], (v->count - i - 1) * sizeof v->data[0]);
        v->count--;
        return;
    }
}

/* Calls every callback of ev in the order they were added. A callback may remove itself or
 * another one (removed ones are not called after their removal); one added meanwhile is first
 * called by the next firing. */
void gc_fire(gc_heap *heap, gc_event ev)
{
    gc_ptr_vec *v = &heap->callbacks[ev];
    size_t n = v->count;
    heap->firing[ev]++;
    for (size_t i = 0; i < n; i++) {
        gc_callback *cb = v->data[i];
        if (cb->fn)
            cb->fn(heap, ev, cb->userdata);
    }
    if (--heap->firing[ev] > 0)
        return;
    size_t kept = 0;
    for (size_t i = 0; i < v->count; i++) {
        gc_callback *cb = v->data[i];
        if (cb->fn)
            v->data[kept++] = cb;
        else
            free(cb);
    }
    v->count = kept;
}

void gc_stats_get(const gc_heap *heap, gc_stats *out_stats)
{
    if (!heap || !out_stats)
        return;
    *out_stats = heap->stats;
}

uint32_t gc_object_count(const gc_heap *heap)
{
    return heap ? atomic_load(&heap->live_count) : 0;
}

uint32_t gc_permanent_count(const gc_heap *heap)
{
    return heap ? heap->permanent_count : 0;
}

gc_result gc_referencer_add(gc_heap *heap, const char *name, gc_add_refs_fn fn, void *userdata,
                            gc_referencer **out_ref)
{
    if (!heap || !fn || !out_ref)
        return GC_E_NULL;
    gc_referencer *r = gc_calloc(1, sizeof *r);
    if (!r)
        return GC_E_NOMEM;
    r->name = gc_strdup(name ? name : "referencer");
    if (!r->name) {
        free(r);
        return GC_E_NOMEM;
    }
    r->fn = fn;
    r->userdata = userdata;
    r->next = heap->referencers;
    if (r->next)
        r->next->prev = r;
    heap->referencers = r;
    *out_ref = r;
    return GC_OK;
}

void gc_referencer_remove(gc_heap *heap, gc_referencer *r)
{
    if (!heap || !r)
        return;
    if (r->prev)
        r->prev->next = r->next;
    else
        heap->referencers = r->next;
    if (r->next)
        r->next->prev = r->prev;
    free(r->name);
    free(r);
}

void gc_memory_get(const gc_heap *heap, gc_memory *out)
{
    if (!heap || !out)
        return;
    gc_heap *h = (gc_heap *)heap;
    uv_mutex_lock(&h->alloc_lock);
    out->slab_bytes = (size_t)h->slab_count * GC_SLAB_SIZE;
    out->large_bytes = h->large_bytes;
    out->array_bytes = gc_array_committed_bytes(h);
    out->slab_side_bytes = (size_t)h->slab_count *
                               ((size_t)2 * GC_SLAB_MARK_BYTES + sizeof(gc_slab_meta) +
                                2 * sizeof(uint32_t)) +
                           (size_t)h->slab_small_count * 2 * GC_SLAB_MARK_BYTES; /* twice */
    out->free_slab_bytes = ((size_t)h->slab_free_count[0] + h->slab_free_count[1]) * GC_SLAB_SIZE;
    uv_mutex_unlock(&h->alloc_lock);
    out->total_bytes = out->slab_bytes + out->large_bytes + out->array_bytes + out->slab_side_bytes;
}

size_t gc_heap_bytes(const gc_heap *heap)
{
    if (!heap)
        return 0;
    gc_memory m;
    gc_memory_get(heap, &m);
    return m.total_bytes + m.free_slab_bytes;
}
