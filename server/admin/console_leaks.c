/*
 * console_leaks.c - `gc leaks mark` and `gc leaks since=MARK`: objects created after a mark
 * that are still alive, grouped by class, with the reference chain of the first few of each.
 *
 * A mark records a weak handle (index + serial) of every live object. An object whose handle
 * is not in the mark was created after it: its slot was free then, or held another object
 * (a reused index gets a new serial). Only the collector's public interface is used: object
 * foreach, weak handles, class names, paths and gc_reference_chain. Run `obj gc` first, or the
 * listing includes garbage the next collection would take anyway.
 *
 * Marks live for the process (the last CONSOLE_LEAKS_MARKS of them); each is tied to its
 * heap. Cost: one pass over the objects per command, 4 bytes per object slot per mark.
 */
#include "console_leaks.h"

#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "vec.h"

enum {
    CONSOLE_LEAKS_MARKS = 8,
    CONSOLE_LEAKS_CLASSES = 64,      /* classes listed; the rest are summed as "other" */
    CONSOLE_LEAKS_CHAINS = 3,        /* reference chains shown per class */
};

typedef struct leak_mark {
    const gc_heap *heap;
    uint32_t id;                     /* 0: unused */
    uint32_t *serials;               /* by object index: the serial at the mark, 0 = free */
    uint32_t cap;
    uint32_t alive;
} leak_mark;

static leak_mark leak_marks[CONSOLE_LEAKS_MARKS];
static uint32_t leak_next_id = 1;

typedef struct leak_class {
    const gc_class *cls;
    uint32_t count;
    gc_weak first[CONSOLE_LEAKS_CHAINS];
} leak_class;

typedef struct leak_scan {
    gc_heap *heap;
    const world_env *env;            /* NULL: no world profile to consult */
    uint32_t persistent;             /* of lifetime = persistent archetypes: not leaks */
    uint32_t streamed;               /* in a streaming cell's level still loaded: not leaks */
    leak_mark *mark;                 /* marking: filled; since: compared against */
    bool failed;                     /* out of memory while marking */
    uint32_t found, other;
    leak_class classes[CONSOLE_LEAKS_CLASSES];
    uint32_t n_classes;
} leak_scan;

static void leak_mark_cb(void *obj, void *userdata)
{
    leak_scan *s = userdata;
    leak_mark *m = s->mark;
    gc_weak w = gc_weak_make(s->heap, obj);

    if (w.index >= m->cap) {
        uint32_t old = m->cap;

        if (!VEC_RESERVE_FROM(m->serials, m->cap, w.index + 1, 1024)) {
            s->failed = true;
            return;
        }
        memset(m->serials + old, 0, (size_t)(m->cap - old) * sizeof *m->serials);
    }
    m->serials[w.index] = w.serial;
    m->alive++;
}

static void leak_since_cb(void *obj, void *userdata)
{
    leak_scan *s = userdata;
    gc_weak w = gc_weak_make(s->heap, obj);
    const gc_class *cls = gc_object_class(s->heap, obj);
    leak_class *lc = NULL;

    if (w.index < s->mark->cap && s->mark->serials[w.index] == w.serial)
        return; /* alive at the mark */
    if (s->env != NULL && world_object_is_persistent(s->env, s->heap, obj)) {
        s->persistent++; /* it outlives its player by design */
        return;
    }
    if (s->env != NULL && world_object_in_streamed_level(s->env, s->heap, obj)) {
        s->streamed++; /* it goes when its cell unloads */
        return;
    }
    s->found++;
    for (uint32_t i = 0; i < s->n_classes; i++)
        if (s->classes[i].cls == cls)
            lc = &s->classes[i];
    if (lc == NULL && s->n_classes < CONSOLE_LEAKS_CLASSES) {
        lc = &s->classes[s->n_classes++];
        lc->cls = cls;
    }
    if (lc == NULL) {
        s->other++;
        return;
    }
    if (lc->count < CONSOLE_LEAKS_CHAINS)
        lc->first[lc->count] = w;
    lc->count++;
}

static void leak_line_cb(const char *line, void *userdata)
{
    strbuf_printf(userdata, "      %s\n", line);
}

static console_status leak_mark_new(gc_heap *heap, strbuf *out)
{
    leak_mark *m = &leak_marks[leak_next_id % CONSOLE_LEAKS_MARKS];
    leak_scan s;

    free(m->serials);
    memset(m, 0, sizeof *m);
    memset(&s, 0, sizeof s);
    s.heap = heap;
    s.mark = m;
    gc_object_foreach_read(heap, leak_mark_cb, &s);
    if (s.failed) {
        free(m->serials);
        memset(m, 0, sizeof *m);
        strbuf_puts(out, "gc leaks mark: out of memory\n");
        return CONSOLE_E_FAILED;
    }
    m->heap = heap;
    m->id = leak_next_id++;
    strbuf_printf(out, "leak mark %u: %u objects alive\n", m->id, m->alive);
    return CONSOLE_OK;
}

static console_status leak_report(gc_heap *heap, const world_env *env, uint32_t id,
                                  strbuf *out)
{
    leak_mark *m = &leak_marks[id % CONSOLE_LEAKS_MARKS];
    leak_scan *s;

    if (m->id != id || m->heap != heap) {
        strbuf_printf(out, "gc leaks: no mark %u (make one with `gc leaks mark`; the last %d "
                      "are kept)\n", id, CONSOLE_LEAKS_MARKS);
        return CONSOLE_E_FAILED;
    }
    s = calloc(1, sizeof *s);
    if (s == NULL) {
        strbuf_puts(out, "gc leaks: out of memory\n");
        return CONSOLE_E_FAILED;
    }
    s->heap = heap;
    s->env = env;
    s->mark = m;
    gc_object_foreach_read(heap, leak_since_cb, s);
    strbuf_printf(out, "leaks since mark %u: %u objects created since the mark are still "
                  "alive\n", id, s->found);
    if (s->persistent > 0)
        strbuf_printf(out, "  (not counted: %u objects of lifetime = persistent archetypes, "
                      "which outlive their players by design)\n", s->persistent);
    if (s->streamed > 0)
        strbuf_printf(out, "  (not counted: %u objects of streaming levels still loaded, which "
                      "go when their cells unload)\n", s->streamed);
    for (uint32_t i = 0; i < s->n_classes; i++) {
        const leak_class *lc = &s->classes[i];
        strbuf_printf(out, "  %-24s %u\n", gc_class_name(lc->cls), lc->count);
        for (uint32_t k = 0; k < lc->count && k < CONSOLE_LEAKS_CHAINS; k++) {
            void *obj = gc_weak_get(heap, lc->first[k]);
            char path[256];
            if (obj == NULL)
                continue;
            gc_object_path(heap, obj, path, sizeof path);
            strbuf_printf(out, "    %s, kept alive by:\n", path[0] ? path : "(anonymous)");
            if (gc_reference_chain(heap, obj, leak_line_cb, out) != GC_OK)
                strbuf_puts(out, "      (no chain from a root: it goes at the next "
                            "collection)\n");
        }
    }
    if (s->other > 0)
        strbuf_printf(out, "  %-24s %u\n", "(other classes)", s->other);
    free(s);
    return CONSOLE_OK;
}

static console_status leak_run(gc_heap *heap, const world_env *env, int argc, char **argv,
                               strbuf *out)
{
    char *end;
    unsigned long id;

    if (argc == 1 && strcmp(argv[0], "mark") == 0)
        return leak_mark_new(heap, out);
    if (argc == 1 && strncmp(argv[0], "since=", 6) == 0) {
        id = strtoul(argv[0] + 6, &end, 10);
        if (argv[0][6] >= '0' && argv[0][6] <= '9' && *end == '\0' && id > 0 &&
            id < UINT32_MAX)
            return leak_report(heap, env, (uint32_t)id, out);
    }
    strbuf_puts(out, "usage: gc leaks mark | gc leaks since=MARK\n");
    return CONSOLE_E_USAGE;
}

console_status console_leaks_run(gc_heap *heap, int argc, char **argv, strbuf *out)
{
    return leak_run(heap, NULL, argc, argv, out);
}

console_status console_gc_leaks(engine *e, int argc, char **argv, strbuf *out)
{
    return leak_run(e->heap, &e->env, argc, argv, out);
}
