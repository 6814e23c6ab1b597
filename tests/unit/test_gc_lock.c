/* The GC lock: scope guards on other threads, try_collect and forcing. */
#include "gc_fixture.h"

#include <sched.h>
#include <uv.h>

typedef struct guard_thread {
    gc_heap *heap;
    uv_sem_t entered;
    uv_sem_t may_leave;
    bool leave_when_gc_waits;
    uv_thread_t tid;
} guard_thread;

static void guard_thread_main(void *arg)
{
    guard_thread *g = arg;
    gc_scope_guard_enter(g->heap);
    uv_sem_post(&g->entered);
    if (g->leave_when_gc_waits) {
        while (!gc_testing_gc_is_waiting(g->heap))
            sched_yield(); /* the collector blocks on us; nothing else to wait for */
    } else {
        uv_sem_wait(&g->may_leave);
    }
    gc_scope_guard_leave(g->heap);
}

static void guard_start(guard_thread *g, gc_heap *heap, bool leave_when_gc_waits)
{
    g->heap = heap;
    g->leave_when_gc_waits = leave_when_gc_waits;
    uv_sem_init(&g->entered, 0);
    uv_sem_init(&g->may_leave, 0);
    assert_int_equal(uv_thread_create(&g->tid, guard_thread_main, g), 0);
    uv_sem_wait(&g->entered);
}

static void guard_finish(guard_thread *g)
{
    if (!g->leave_when_gc_waits)
        uv_sem_post(&g->may_leave);
    uv_thread_join(&g->tid);
    uv_sem_destroy(&g->entered);
    uv_sem_destroy(&g->may_leave);
}

static void test_try_collect_gives_up_while_another_thread_holds_a_guard(void **state)
{
    fixture *f = *state;
    node *n = fix_node(f, NULL, NULL, 1, 0);
    gc_weak w = gc_weak_make(f->heap, n);
    guard_thread g;
    guard_start(&g, f->heap, false);

    gc_result r = gc_try_collect(f->heap, 0, true);

    assert_int_equal(r, GC_E_LOCKED);
    gc_stats st;
    gc_stats_get(f->heap, &st);
    assert_int_equal(st.try_collect_failures, 1);
    assert_true(fix_alive(f, w));
    guard_finish(&g);
    assert_int_equal(gc_try_collect(f->heap, 0, true), GC_OK);
    assert_false(fix_alive(f, w));
}

static void test_try_collect_forces_the_collection_after_the_retry_limit(void **state)
{
    fixture *f = *state;
    gc_settings s;
    gc_settings_default(&s);
    assert_int_equal(s.num_retries_before_forcing, 10); /* UE's default */
    node *n = fix_node(f, NULL, NULL, 1, 0);
    gc_weak w = gc_weak_make(f->heap, n);
    guard_thread g;
    guard_start(&g, f->heap, true);

    for (int i = 0; i < 10; i++)
        assert_int_equal(gc_try_collect(f->heap, 0, true), GC_E_LOCKED);
    gc_result forced = gc_try_collect(f->heap, 0, true); /* waits for the guard */

    assert_int_equal(forced, GC_OK);
    assert_false(fix_alive(f, w));
    guard_finish(&g);
}

static void test_collect_waits_for_guards_to_leave(void **state)
{
    fixture *f = *state;
    fix_node(f, NULL, NULL, 1, 0);
    guard_thread g;
    guard_start(&g, f->heap, true);

    assert_int_equal(gc_collect(f->heap, 0, true), GC_OK);

    assert_true(fix_log_find(f, "free:1") >= 0);
    guard_finish(&g);
}

typedef struct lock_probe {
    gc_heap *heap;
    bool collecting_in_pre;
    bool collecting_in_started;
    bool guard_entered_in_pre;
} lock_probe;

static void enter_and_leave(void *arg)
{
    lock_probe *p = arg;
    gc_scope_guard_enter(p->heap);
    p->guard_entered_in_pre = true;
    gc_scope_guard_leave(p->heap);
}

static void probe_cb(gc_heap *heap, gc_event ev, void *userdata)
{
    lock_probe *p = userdata;
    if (ev == GC_EVENT_PRE) {
        p->collecting_in_pre = gc_is_collecting(heap);
        uv_thread_t t; /* another thread can take a guard now: the lock is not held */
        uv_thread_create(&t, enter_and_leave, p);
        uv_thread_join(&t);
    } else if (ev == GC_EVENT_STARTED) {
        p->collecting_in_started = gc_is_collecting(heap);
    }
}

static void test_pre_collect_callbacks_run_without_the_lock(void **state)
{
    fixture *f = *state;
    lock_probe p = { .heap = f->heap };
    gc_callback_add(f->heap, GC_EVENT_PRE, probe_cb, &p);
    gc_callback_add(f->heap, GC_EVENT_STARTED, probe_cb, &p);

    fix_collect(f);

    assert_false(p.collecting_in_pre);
    assert_true(p.guard_entered_in_pre);
    assert_true(p.collecting_in_started);
    assert_false(gc_is_collecting(f->heap));
}

/* A try gives up at once while a guard is held, even with an incremental mark to finish. */
static void test_try_collect_gives_up_on_a_guard_even_with_a_mark_pending(void **state)
{
    fixture *f = *state;
    gc_settings s = *gc_heap_settings(f->heap);
    s.allow_incremental_reachability = true;
    s.incremental_reachability_time_limit = 1.5;
    s.num_workers = 1;
    gc_heap_configure(f->heap, &s);
    f->clock.step_per_read = 1.0;
    node *root = fix_node(f, NULL, NULL, 0, GC_CREATE_ROOT);
    node *prev = root;
    for (int i = 0; i < 2000; i++) {
        node *n = fix_node(f, NULL, NULL, i + 1, 0);
        prev->a = n;
        prev = n;
    }
    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    assert_true(gc_is_incremental_reachability_pending(f->heap));

    guard_thread g;
    guard_start(&g, f->heap, false);
    gc_result r = gc_try_collect(f->heap, 0, true);
    guard_finish(&g);
    assert_int_equal(r, GC_E_LOCKED); /* a try must not wait */
    assert_true(gc_is_incremental_reachability_pending(f->heap));
    while (!gc_incremental_reachability_step(f->heap))
        ;
    assert_true(gc_incremental_purge(f->heap, 0));
}

static int g_pre, g_post;
static void count_pre_post(gc_heap *heap, gc_event ev, void *userdata)
{
    (void)heap;
    (void)userdata;
    if (ev == GC_EVENT_PRE)
        g_pre++;
    if (ev == GC_EVENT_POST)
        g_post++;
}

/* A try that gives up does nothing, so it fires no callback either. */
static void test_a_try_collect_that_gives_up_fires_no_callbacks(void **state)
{
    fixture *f = *state;
    g_pre = g_post = 0;
    gc_callback_add(f->heap, GC_EVENT_PRE, count_pre_post, NULL);
    gc_callback_add(f->heap, GC_EVENT_POST, count_pre_post, NULL);
    guard_thread g;
    guard_start(&g, f->heap, false);
    assert_int_equal(gc_try_collect(f->heap, 0, true), GC_E_LOCKED);
    guard_finish(&g);
    assert_int_equal(g_pre, 0);
    assert_int_equal(g_post, 0);
}

static void ignore_line(const char *line, void *userdata) { (void)line; (void)userdata; }
static void *g_chain_target;
static bool g_locked_after_chain;
static gc_result g_chain_result;
static void chain_in_started(gc_heap *heap, gc_event ev, void *userdata)
{
    (void)ev;
    (void)userdata;
    g_chain_result = gc_reference_chain(heap, g_chain_target, ignore_line, NULL);
    g_locked_after_chain = gc_is_collecting(heap);
}

/* The GC lock is not reentrant: a reference chain asked for while a collection holds it is
 * refused, and the collection keeps its lock. */
static void test_a_reference_chain_asked_for_inside_a_collection_is_refused(void **state)
{
    fixture *f = *state;
    g_chain_target = fix_node(f, NULL, NULL, 1, GC_CREATE_ROOT);
    gc_callback_add(f->heap, GC_EVENT_STARTED, chain_in_started, NULL);
    g_locked_after_chain = false;
    fix_collect(f);
    assert_int_equal(g_chain_result, GC_E_STATE);
    assert_true(g_locked_after_chain);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_try_collect_gives_up_while_another_thread_holds_a_guard, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_try_collect_forces_the_collection_after_the_retry_limit, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_collect_waits_for_guards_to_leave, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_pre_collect_callbacks_run_without_the_lock, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_try_collect_gives_up_on_a_guard_even_with_a_mark_pending, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_try_collect_that_gives_up_fires_no_callbacks, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_reference_chain_asked_for_inside_a_collection_is_refused, fix_setup, fix_teardown),
    };
    return cmocka_run_group_tests_name("gc_lock", tests, NULL, NULL);
}
