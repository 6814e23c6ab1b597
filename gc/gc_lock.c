/*
 * gc_lock.c - the GC lock (UE FGCCSyncObject / FGCScopeGuard).
 *
 * Threads other than the game thread hold a scope guard while they touch the object graph.
 * A collection takes the lock exclusively: it waits until no guard is held, and while it
 * waits or holds the lock new guards wait, so a stream of guards cannot starve it. A try
 * acquisition gives up at once if any guard is held.
 */
#include "gc_internal.h"

void gc_lock_init(gc_heap *heap)
{
    uv_mutex_init(&heap->lock_mutex);
    uv_cond_init(&heap->lock_cond);
    heap->guards_active = 0;
    heap->gc_locked = false;
    heap->gc_waiting = false;
}

void gc_lock_close(gc_heap *heap)
{
    uv_cond_destroy(&heap->lock_cond);
    uv_mutex_destroy(&heap->lock_mutex);
}

void gc_scope_guard_enter(gc_heap *heap)
{
    uv_mutex_lock(&heap->lock_mutex);
    while (heap->gc_locked || heap->gc_waiting)
        uv_cond_wait(&heap->lock_cond, &heap->lock_mutex);
    heap->guards_active++;
    uv_mutex_unlock(&heap->lock_mutex);
}

void gc_scope_guard_leave(gc_heap *heap)
{
    uv_mutex_lock(&heap->lock_mutex);
    if (heap->guards_active > 0)
        heap->guards_active--;
    if (heap->guards_active == 0)
        uv_cond_broadcast(&heap->lock_cond);
    uv_mutex_unlock(&heap->lock_mutex);
}

bool gc_lock_is_free(gc_heap *heap)
{
    uv_mutex_lock(&heap->lock_mutex);
    bool free_now = heap->guards_active == 0 && !heap->gc_locked;
    uv_mutex_unlock(&heap->lock_mutex);
    return free_now;
}

/* The lock is not reentrant: a thread already holding it must not take it again (callers
 * inside a collection are refused before they get here). */
bool gc_lock_acquire(gc_heap *heap, bool wait)
{
    uv_mutex_lock(&heap->lock_mutex);
    if ((heap->guards_active > 0 || heap->gc_locked) && !wait) {
        uv_mutex_unlock(&heap->lock_mutex);
        return false;
    }
    heap->gc_waiting = true;
    while (heap->guards_active > 0 || heap->gc_locked)
        uv_cond_wait(&heap->lock_cond, &heap->lock_mutex);
    heap->gc_waiting = false;
    heap->gc_locked = true;
    uv_mutex_unlock(&heap->lock_mutex);
    return true;
}

void gc_lock_release(gc_heap *heap)
{
    uv_mutex_lock(&heap->lock_mutex);
    heap->gc_locked = false;
    uv_cond_broadcast(&heap->lock_cond);
    uv_mutex_unlock(&heap->lock_mutex);
}
