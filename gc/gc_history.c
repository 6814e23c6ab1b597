/*
 * gc_history.c - what marking saw: which object first reached each object (gc.HistorySize)
 * and which references to garbage it nulled (gc.GarbageReferenceTrackingEnabled).
 *
 * Workers note edges in their own logs while they mark, so recording takes no lock; after the
 * mark the logs are merged on the collecting thread: first-reach edges into a ring of the
 * last history_size collections, garbage references into text lines (with both paths, taken
 * while both objects still exist) sent to the diagnostics sink.
 */
#include "gc_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gc_edge_log_push(gc_edge_log *log, uint32_t to, uint32_t from, const char *member)
{
    if (log->count == log->capacity) {
        gc_edge *v = gc_grow(log->data, sizeof *v, &log->capacity, 1024);
        if (!v)
            return; /* diagnostics only: drop rather than fail the collection */
        log->data = v;
    }
    log->data[log->count++] = (gc_edge){ to, from, member };
}

static void log_free(gc_edge_log *log)
{
    if (log) {
        free(log->data);
        free(log);
    }
}

void gc_heap_set_diagnostics(gc_heap *heap, gc_line_fn fn, void *userdata)
{
    if (!heap)
        return;
    heap->diag_fn = fn;
    heap->diag_userdata = userdata;
}

void gc_diag(gc_heap *heap, const char *fmt, ...)
{
    if (!heap->diag_fn)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    heap->diag_fn(line, heap->diag_userdata);
}

void gc_history_mark_begin(gc_heap *heap)
{
    bool history = heap->settings.history_size > 0;
    bool garbage = heap->settings.garbage_reference_tracking;
    for (uint32_t i = 0; i < heap->mark_workers; i++) {
        gc_collector *w = heap->workers[i];
        if (history && !w->edges)
            w->edges = gc_calloc(1, sizeof *w->edges);
        if (!history) {
            log_free(w->edges);
            w->edges = NULL;
        }
        if (garbage && !w->garbage_edges)
            w->garbage_edges = gc_calloc(1, sizeof *w->garbage_edges);
        if (!garbage) {
            log_free(w->garbage_edges);
            w->garbage_edges = NULL;
        }
        w->direct = w->edges || w->garbage_edges; /* edges name the object being scanned */
        if (w->edges)
            w->edges->count = 0;
        if (w->garbage_edges)
            w->garbage_edges->count = 0;
    }
}

static int edge_cmp(const void *a, const void *b)
{
    uint32_t x = ((const gc_edge *)a)->to, y = ((const gc_edge *)b)->to;
    return x < y ? -1 : x > y;
}

static void history_store(gc_heap *heap)
{
    uint32_t size = heap->settings.history_size;
    if (size != heap->history_capacity) { /* resized: start the ring afresh */
        for (uint32_t i = 0; i < heap->history_capacity; i++)
            free(heap->history[i].edges);
        free(heap->history);
        heap->history = gc_calloc(size, sizeof *heap->history);
        heap->history_capacity = heap->history ? size : 0;
        heap->history_next = 0;
    }
    if (!heap->history_capacity)
        return;
    size_t total = 0;
    for (uint32_t i = 0; i < heap->mark_workers; i++)
        total += heap->workers[i]->edges ? heap->workers[i]->edges->count : 0;
    gc_history_entry *e = &heap->history[heap->history_next];
    free(e->edges);
    e->edges = gc_malloc((total ? total : 1) * sizeof *e->edges);
    e->count = 0;
    e->collection = heap->stats.collections + 1;
    if (!e->edges)
        return;
    for (uint32_t i = 0; i < heap->mark_workers; i++) {
        gc_edge_log *log = heap->workers[i]->edges;
        if (log && log->count) {
            memcpy(e->edges + e->count, log->data, log->count * sizeof *log->data);
            e->count += log->count;
        }
    }
    qsort(e->edges, e->count, sizeof *e->edges, edge_cmp);
    heap->history_next = (heap->history_next + 1) % heap->history_capacity;
}

static void object_path_at(gc_heap *heap, uint32_t index, char *buf, size_t size)
{
    gc_header *h = index == GC_INDEX_NONE ? NULL : gc_object_at(heap, index);
    if (h)
        gc_object_path(heap, gc_payload(h), buf, size);
    else
        snprintf(buf, size, "%s", index == GC_INDEX_NONE ? "(root)" : "(gone)");
}

static void garbage_store(gc_heap *heap)
{
    for (uint32_t i = 0; i < heap->garbage_line_count; i++)
        free(heap->garbage_lines[i]);
    free(heap->garbage_lines);
    heap->garbage_lines = NULL;
    heap->garbage_line_count = 0;
    size_t total = 0;
    for (uint32_t i = 0; i < heap->mark_workers; i++)
        total += heap->workers[i]->garbage_edges ? heap->workers[i]->garbage_edges->count : 0;
    heap->stats.garbage_references = (uint32_t)total;
    if (!total || !(heap->garbage_lines = gc_calloc(total, sizeof *heap->garbage_lines)))
        return;
    for (uint32_t i = 0; i < heap->mark_workers; i++) {
        gc_edge_log *log = heap->workers[i]->garbage_edges;
        for (size_t k = 0; log && k < log->count; k++) {
            char from[512], to[512], line[1200];
            object_path_at(heap, log->data[k].from, from, sizeof from);
            object_path_at(heap, log->data[k].to, to, sizeof to);
            snprintf(line, sizeof line, "%s [%s] referenced garbage %s (reference nulled)",
                     from, log->data[k].member ? log->data[k].member : "?", to);
            heap->garbage_lines[heap->garbage_line_count] = gc_strdup(line);
            if (heap->garbage_lines[heap->garbage_line_count])
                heap->garbage_line_count++;
            gc_diag(heap, "%s", line);
        }
    }
}

void gc_history_mark_end(gc_heap *heap)
{
    if (heap->settings.history_size > 0 || heap->history_capacity)
        history_store(heap);
    heap->stats.garbage_references = 0;
    if (heap->settings.garbage_reference_tracking)
        garbage_store(heap);
}

void gc_history_close(gc_heap *heap)
{
    for (uint32_t i = 0; i < heap->history_capacity; i++)
        free(heap->history[i].edges);
    free(heap->history);
    heap->history = NULL;
    heap->history_capacity = 0;
    for (uint32_t i = 0; i < heap->garbage_line_count; i++)
        free(heap->garbage_lines[i]);
    free(heap->garbage_lines);
    heap->garbage_lines = NULL;
    heap->garbage_line_count = 0;
    for (uint32_t i = 0; i < GC_MAX_WORKERS; i++) {
        if (heap->workers[i]) {
            log_free(heap->workers[i]->edges);
            log_free(heap->workers[i]->garbage_edges);
            heap->workers[i]->edges = heap->workers[i]->garbage_edges = NULL;
        }
    }
}

gc_result gc_history_describe(gc_heap *heap, uint32_t ago, const void *obj, gc_line_fn line_fn,
                              void *userdata)
{
    if (!heap || !obj || !line_fn)
        return GC_E_NULL;
    if (ago >= heap->history_capacity)
        return GC_E_NOT_FOUND;
    uint32_t slot = (heap->history_next + heap->history_capacity - 1 - ago) %
                    heap->history_capacity;
    const gc_history_entry *e = &heap->history[slot];
    if (!e->collection)
        return GC_E_NOT_FOUND;
    uint32_t index = gc_hdr(obj)->index;
    size_t lo = 0, hi = e->count;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (e->edges[mid].to < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == e->count || e->edges[lo].to != index)
        return GC_E_NOT_FOUND;
    char path[512], from[512], line[1200];
    gc_object_path(heap, obj, path, sizeof path);
    object_path_at(heap, e->edges[lo].from, from, sizeof from);
    snprintf(line, sizeof line, "collection %llu: %s first reached from %s [%s]",
             (unsigned long long)e->collection, path, from,
             e->edges[lo].member ? e->edges[lo].member : "?");
    line_fn(line, userdata);
    return GC_OK;
}

uint32_t gc_garbage_references(gc_heap *heap, gc_line_fn line_fn, void *userdata)
{
    if (!heap)
        return 0;
    for (uint32_t i = 0; line_fn && i < heap->garbage_line_count; i++)
        line_fn(heap->garbage_lines[i], userdata);
    return heap->garbage_line_count;
}
