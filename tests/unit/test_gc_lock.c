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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_try_collect_gives_up_while_another_thread_holds_a_guard, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_try_collect_forces_the_collection_after_the_retry_limit, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_collect_waits_for_guards_to_leave, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_pre_collect_callbacks_run_without_the_lock, fix_setup, fix_teardown),
    };
    return cmocka_run_group_tests_name("gc_lock", tests, NULL, NULL);
}
