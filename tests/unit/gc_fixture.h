/*
 * gc_fixture.h - shared set-up for the collector's unit tests: a heap with a fake clock and a
 * "Node" class (two references and an array of references), and a teardown that checks the
 * heap's invariants before destroying it. Header-only: each test executable includes it once.
 */
#ifndef REAP_TEST_GC_FIXTURE_H
#define REAP_TEST_GC_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gc_testing.h"
#include "reap_gc.h"

typedef struct node {
    void *a;
    void *b;
    gc_ref_array arr;
    int id;
} node;

/* Hook calls are logged as "<event>:<id>" so tests can assert their order. */
#define FIX_LOG_MAX 4096
typedef struct fixture {
    gc_heap *heap;
    gc_class *node_class;
    gc_fake_clock clock;
    char log[FIX_LOG_MAX][24];
    int log_count;
} fixture;

static fixture *g_fix;

static inline void fix_log(const char *event, void *obj)
{
    if (g_fix && g_fix->log_count < FIX_LOG_MAX)
        snprintf(g_fix->log[g_fix->log_count++], sizeof g_fix->log[0], "%s:%d", event,
                 ((node *)obj)->id);
}

static inline void node_begin_destroy(void *obj) { fix_log("begin", obj); }
static inline void node_finish_destroy(void *obj) { fix_log("finish", obj); }
static inline void node_destructor(void *obj)
{
    fix_log("free", obj);
    gc_ref_array_free(&((node *)obj)->arr);
}

static const gc_member node_members[] = {
    GC_REF(node, a),
    GC_REF(node, b),
    GC_REF_ARRAY(node, arr),
    GC_MEMBERS_END,
};

/* As fix_setup_with, on another clock (clock_userdata NULL: the fixture's fake clock). */
static inline int fix_setup_clock(void **state, const gc_settings *settings, gc_clock_fn clock,
                                  void *clock_userdata)
{
    fixture *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->clock.now = 1000.0;
    gc_heap_config cfg = { 0 };
    cfg.clock = clock;
    cfg.clock_userdata = clock_userdata ? clock_userdata : &f->clock;
    if (settings)
        cfg.settings = *settings;
    assert_int_equal(gc_heap_create(&cfg, &f->heap), GC_OK);
    gc_class_desc d = { 0 };
    d.name = "Node";
    d.size = sizeof(node);
    d.members = node_members;
    d.hooks.begin_destroy = node_begin_destroy;
    d.hooks.finish_destroy = node_finish_destroy;
    d.hooks.destructor = node_destructor;
    assert_int_equal(gc_class_register(f->heap, &d, &f->node_class), GC_OK);
    g_fix = f;
    *state = f;
    return 0;
}

static inline int fix_setup_with(void **state, const gc_settings *settings)
{
    return fix_setup_clock(state, settings, gc_fake_clock_read, NULL);
}

static inline int fix_setup(void **state)
{
    return fix_setup_with(state, NULL);
}

/* A fixture whose incremental marking stops after about GC_TIME_CHECK_INTERVAL objects a
 * slice: every clock read advances time by 1 s and the limit is 1.5 s, so a slice ends at
 * its second look at the clock. With one worker the slices are deterministic. */
static inline int fix_setup_sliced(void **state, uint32_t workers)
{
    gc_settings s;
    gc_settings_default(&s);
    s.allow_incremental_reachability = true;
    s.incremental_reachability_time_limit = 1.5;
    s.num_workers = workers;
    int r = fix_setup_with(state, &s);
    ((fixture *)*state)->clock.step_per_read = 1.0;
    return r;
}

static inline int fix_teardown(void **state)
{
    fixture *f = *state;
    const char *broken = gc_testing_check(f->heap);
    if (broken)
        fail_msg("heap invariant broken: %s", broken);
    gc_heap_destroy(f->heap);
    g_fix = NULL;
    free(f);
    return 0;
}

/* Creates a Node; name may be NULL. */
static inline node *fix_node(fixture *f, void *outer, const char *name, int id, uint32_t flags)
{
    void *obj = NULL;
    assert_int_equal(gc_object_create(f->heap, f->node_class, outer, name, flags, &obj), GC_OK);
    ((node *)obj)->id = id;
    return obj;
}

static inline void fix_collect(fixture *f)
{
    assert_int_equal(gc_collect(f->heap, 0, true), GC_OK);
}

static inline int fix_log_find(const fixture *f, const char *entry)
{
    for (int i = 0; i < f->log_count; i++)
        if (strcmp(f->log[i], entry) == 0)
            return i;
    return -1;
}

/* A weak handle tells whether an object survived without touching freed memory. */
static inline bool fix_alive(fixture *f, gc_weak w)
{
    return gc_weak_get_even_if_garbage(f->heap, w) != NULL;
}

#endif
