/*
 * gc_parallel.c - parallel marking with work stealing (UE's parallel reachability workers).
 *
 * On entry to gc_parallel_drain the initial roots (and any barrier objects) sit in worker 0's
 * lists, and every other worker's lists are empty or hold what a suspended slice left; that
 * leftover is first handed to worker 0 (gc_worker_adopt), so the slice can always make
 * progress whether or not anyone joins. The calling thread runs worker 0; pool threads run
 * workers 1..n-1, each if it starts before the caller runs out of work (a thread the
 * scheduler is slow to run is withdrawn, not waited for). Each drains its own lists, which
 * are stealable but for a few dozen objects (see GC_PUSH_BUFFER); a worker that runs dry
 * counts itself idle and steals an array piece, a full block or half a block from the
 * others. On exit either every list is empty (marking complete: true) or the deadline passed
 * and every worker kept what it had left (false).
 *
 * A second worker must never make marking slower than one, even on a machine with no core
 * to spare. So the caller starts every slice marking as a lone worker does (plain stores,
 * no locks) and goes on so until a pool thread has actually been given a CPU (another than
 * the caller's) and asks to join: at its next look at the clock, if it holds no piece of a
 * long array, the caller switches to shared marking and lets it in (the join). Pool threads
 * run at idle priority (SCHED_IDLE on Linux, unless settings.marker_threads_normal_priority),
 * to use only CPU time that nothing else on the machine wants (idle priority alone does not
 * keep a thread off a busy CPU on Linux 6, hence the rule on CPUs); a thread that has not
 * joined when the caller runs out of work is withdrawn, never waited for.
 *
 * Each worker runs the single-threaded marker's drain loop (gc_mark.c) on its own lists; a
 * lone worker takes no lock, nobody steals from it, and it never comes here.
 */
#define _GNU_SOURCE /* SCHED_IDLE */
#include "gc_internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- stealable work ------------------------------------------------------------------ */

static void wake_sleepers(struct gc_pool *pool);

void gc_worker_published(gc_collector *w)
{
    if (!w->heap->pool)
        return;
    /* The count was stored before the sleepers are read (the fence), and a sleeper counts
     * itself before it reads the counts: one of the two sees the other (see idle_sleep). */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&w->stealable, memory_order_relaxed) >= GC_STEAL_MIN)
        wake_sleepers(w->heap->pool);
}

/* Takes work from a victim, under its lock: its most recent piece of a long array, else a
 * full block, else the older half of its current block. */
static bool steal_from(gc_collector *thief, gc_collector *victim, gc_array_range *range,
                       gc_work_block **block)
{
    bool got = false;
    gc_work_lock(victim);
    uint32_t ranges = atomic_load_explicit(&victim->range_count, memory_order_relaxed);
    gc_work_block *cur = victim->block;
    if (ranges > 0) {
        *range = victim->ranges[ranges - 1];
        atomic_store_explicit(&victim->range_count, ranges - 1, memory_order_relaxed);
        gc_stealable_add(victim, -(int64_t)GC_STEAL_MIN);
        got = true;
    } else if (victim->full) {
        *block = victim->full;
        victim->full = (*block)->next;
        (*block)->next = NULL;
        gc_stealable_add(victim, -(int64_t)(*block)->count);
        got = true;
    } else if (cur && cur->count >= GC_STEAL_MIN) {
        gc_work_block *half = gc_block_get(thief); /* the thief's spares: only it uses them */
        uint32_t n = cur->count / 2;
        memcpy(half->objs, cur->objs, n * sizeof cur->objs[0]);
        memmove(cur->objs, cur->objs + n, (cur->count - n) * sizeof cur->objs[0]);
        cur->count -= n;
        half->count = n;
        gc_stealable_add(victim, -(int64_t)n);
        *block = half;
        got = true;
    }
    gc_work_unlock(victim);
    return got;
}

bool gc_worker_steal(gc_collector *thief)
{
    gc_heap *heap = thief->heap;
    uint32_t n = heap->mark_workers;
    for (uint32_t k = 1; k < n; k++) {
        gc_collector *victim = heap->workers[(thief->worker_index + k) % n];
        if (atomic_load_explicit(&victim->stealable, memory_order_relaxed) < GC_STEAL_MIN)
            continue;
        gc_array_range range;
        gc_work_block *b = NULL;
        if (!steal_from(thief, victim, &range, &b))
            continue;
        gc_work_lock(thief); /* never two locks at once: the victim's is released */
        if (b) {
            gc_work_block *mine = thief->block;
            if (mine && mine->count > 0) {
                mine->next = thief->full;
                thief->full = mine;
            } else if (mine) {
                gc_block_put(thief, mine);
            }
            thief->block = b;
            gc_stealable_add(thief, b->count);
        } else {
            gc_worker_push_range_locked(thief, range);
        }
        gc_work_unlock(thief);
        thief->stolen++;
        return true;
    }
    return false;
}

/* ---- the marker threads --------------------------------------------------------------- */

/* A worker without work first tries to steal for a short while (yielding the CPU between
 * tries), then sleeps until work is published, every worker is idle or time is up. On a busy
 * machine a spinning thief would take CPU time from the very worker it waits for. */
#define IDLE_SPINS 32
/* The caller of a timed slice never sleeps past its deadline waiting for a helper (a helper
 * at idle priority may be kept off its CPU for milliseconds): it sleeps this long at most,
 * then looks at the clock. */
#define IDLE_CALLER_WAIT_NS 100000

typedef struct gc_pool {
    uv_thread_t threads[GC_MAX_WORKERS];
    uint32_t thread_count;     /* pool threads started: they run workers 1..thread_count */
    uv_mutex_t mutex;
    uv_cond_t wake;            /* a job was posted, or shutdown */
    uv_cond_t finished;        /* a pool thread finished its part of the job */
    uint64_t generation;       /* one per job */
    uint32_t job_workers;      /* workers taking part in the job, the caller included */
    uint32_t running;          /* pool threads that joined the job and still work on it */
    uint32_t joined;           /* pool threads that joined the job */
    /* Per pool thread and job, a CLAIM_* state. A thread the scheduler has not run yet, or
     * that waits to join, when the caller is done cannot delay the slice: the caller
     * withdraws its share instead of waiting for it. */
    _Atomic int claim[GC_MAX_WORKERS];
    _Atomic bool join_wanted;  /* a pool thread waits to join (the caller marks alone) */
    _Atomic int caller_cpu;    /* where the caller ran at its last look (-1: unknown) */
    _Atomic bool shared;       /* the caller marks shared: threads may join */
    double deadline;
    bool normal_priority;      /* settings.marker_threads_normal_priority of the job */
    bool held;                 /* heap->marker_threads_held of the job */
    bool shutdown;
    _Atomic bool stop;         /* the deadline passed: every worker stops */
#ifdef SCHED_IDLE
    cpu_set_t lent_from[GC_MAX_WORKERS]; /* a thread's CPUs while it runs on the caller's */
    bool lent[GC_MAX_WORKERS];
#endif
    uv_mutex_t idle_mutex;
    uv_cond_t idle_wake;       /* work was published, all are idle, or stop */
    _Atomic uint32_t sleepers; /* workers waiting on idle_wake */
    gc_heap *heap;
} gc_pool;

enum {
    CLAIM_POSTED,    /* the job is posted; the thread has not looked at it yet */
    CLAIM_WAITING,   /* the thread runs and waits for the caller to let it join */
    CLAIM_WITHDRAWN, /* the caller took the share back: the thread does nothing this job */
    CLAIM_MARKING,   /* the thread joined: it marks, and the caller waits for it */
};

typedef struct pool_thread_arg {
    gc_pool *pool;
    uint32_t worker_index;
} pool_thread_arg;

static bool all_idle(gc_heap *heap)
{
    return atomic_load_explicit(&heap->idle_workers, memory_order_acquire) >= heap->mark_workers;
}

static void wake_sleepers(gc_pool *pool)
{
    if (atomic_load(&pool->sleepers) == 0)
        return;
    uv_mutex_lock(&pool->idle_mutex);
    uv_cond_broadcast(&pool->idle_wake);
    uv_mutex_unlock(&pool->idle_mutex);
}

static bool any_stealable(const gc_heap *heap)
{
    for (uint32_t i = 0; i < heap->mark_workers; i++)
        if (atomic_load(&heap->workers[i]->stealable) >= GC_STEAL_MIN)
            return true;
    return false;
}

/* Waits until there is work to steal, every worker is idle, or the job stops. The sleeper
 * counts itself before it looks for work and a publisher counts its block before it looks
 * for sleepers (both sequentially consistent), so one of them sees the other: no wake-up is
 * lost. */
static void idle_sleep(gc_pool *pool, gc_heap *heap, bool timed)
{
    uv_mutex_lock(&pool->idle_mutex);
    atomic_fetch_add(&pool->sleepers, 1);
    while (!atomic_load(&pool->stop) && !all_idle(heap) && !any_stealable(heap)) {
        if (timed) { /* the caller: back to look at the clock (see IDLE_CALLER_WAIT_NS) */
            uv_cond_timedwait(&pool->idle_wake, &pool->idle_mutex, IDLE_CALLER_WAIT_NS);
            break;
        }
        uv_cond_wait(&pool->idle_wake, &pool->idle_mutex);
    }
    atomic_fetch_sub(&pool->sleepers, 1);
    uv_mutex_unlock(&pool->idle_mutex);
}

static void stop_job(gc_pool *pool)
{
    atomic_store(&pool->stop, true);
    wake_sleepers(pool);
}

/* The caller withdraws the shares of pool threads that have not joined yet: they count as
 * idle, and their work (all of it stealable, see gc_parallel_drain) is stolen instead. */
static void withdraw_unstarted(gc_pool *pool, gc_heap *heap)
{
    for (uint32_t i = 1; i < heap->mark_workers; i++) {
        int state = atomic_load_explicit(&pool->claim[i], memory_order_relaxed);
        if ((state == CLAIM_POSTED || state == CLAIM_WAITING) &&
            atomic_compare_exchange_strong(&pool->claim[i], &state, CLAIM_WITHDRAWN))
            atomic_fetch_add_explicit(&heap->idle_workers, 1, memory_order_acq_rel);
    }
}

static int current_cpu(void)
{
#ifdef SCHED_IDLE
    return sched_getcpu();
#else
    return -1;
#endif
}

bool gc_worker_join_poll(gc_collector *w)
{
    gc_pool *pool = w->heap->pool;
    int cpu = current_cpu();
    /* Stored only when it changed: the waiting threads read the line all the time, and a
     * store at every look would pull it back from their core each time. */
    if (cpu != atomic_load_explicit(&pool->caller_cpu, memory_order_relaxed))
        atomic_store_explicit(&pool->caller_cpu, cpu, memory_order_relaxed);
    return atomic_load_explicit(w->join, memory_order_relaxed) &&
           atomic_load_explicit(&w->range_count, memory_order_relaxed) == 0;
}

void gc_worker_go_shared(gc_collector *w)
{
    gc_pool *pool = w->heap->pool;
    gc_worker_keep_private(w, GC_PUSH_BUFFER / 2); /* still alone: no lock */
    w->alone = false;
    w->join = NULL;
    /* Release: what the caller marked and queued alone is seen by whoever joins. */
    atomic_store_explicit(&pool->shared, true, memory_order_release);
    gc_worker_published(w);
}

/* A joined thread that loses its CPU to another program holds private work (its stack
 * and FIFO) that the caller must wait for at the end, and the caller marks shared (atomic
 * marks, the work locks) all the while: where there is no CPU to add, a second worker can
 * only lose. So a waiting thread at idle priority asks to join only once it has shown that
 * it has a CPU nothing else wants: for GC_JOIN_PROOF_NS of wall time it gave its CPU away
 * at every turn (sched_yield) and got it back at once, on a CPU other than the caller's.
 * Beside a busy program, whose turn on the CPU is a scheduler slice (0.75 ms and more on
 * Linux 6), the thread loses more than GC_JOIN_PROOF_SLACK_NS of the window at its first
 * yield that hands the CPU over, and the window starts again. */
bool gc_join_proof_update(gc_join_proof *p, uint64_t wall_ns, uint64_t cpu_ns,
                          bool on_callers_cpu)
{
    uint64_t lost = p->started ? (wall_ns - p->wall_start) - (cpu_ns - p->cpu_start) : 0;
    if (!p->started || on_callers_cpu || (int64_t)lost > (int64_t)GC_JOIN_PROOF_SLACK_NS) {
        p->started = true;
        p->wall_start = wall_ns;
        p->cpu_start = cpu_ns;
        return false;
    }
    return wall_ns - p->wall_start >= GC_JOIN_PROOF_NS;
}

double gc_helper_rate(const gc_helper_rates *k)
{
    const double *v = k->last;
    switch (k->count) {
    case 0: return 0;
    case 1: return v[0];
    case 2: return (v[0] + v[1]) / 2;
    default: /* the median of three */
        return v[0] < v[1] ? (v[1] < v[2] ? v[1] : v[0] < v[2] ? v[2] : v[0])
                           : (v[0] < v[2] ? v[0] : v[1] < v[2] ? v[2] : v[1]);
    }
}

static bool rates_fresh(const gc_helper_rates *k, uint64_t marks)
{
    return k->count > 0 && marks - k->at < GC_HELPERS_STALE_MARKS;
}

/* A kind is compared only with two fresh samples or more: one mark decides nothing. */
static bool rates_known(const gc_helper_rates *k, uint64_t marks)
{
    return k->count >= 2 && rates_fresh(k, marks);
}

/* A second worker must never make marking slower than one, and on some machines it does
 * whatever the join rules above: two vCPUs whose shared lines travel far make every mark bit
 * set by both (a line the other wrote last) cost a transfer; measured here, a random graph
 * marked by two took 49-52 ms in some processes against 35 ms alone. So whether the threads
 * help is measured, on the heap's own marks:
 * - a kind's rate counts once it has two fresh samples (under GC_HELPERS_STALE_MARKS marks
 *   old); with a rate with them and none alone, marks run alone until there is one (so a heap
 *   they help runs two marks in 34 alone);
 * - when their rate falls below the caller's alone, they are benched for
 *   GC_HELPERS_BENCHED_MARKS marks, their samples dropped, then invited again from a trial
 *   mark on (the machine, or the graph, may have changed);
 * - so do GC_HELPERS_UNJOINED_MARKS invited marks in a row that none of them joined (beside
 *   a busy program): a thread waiting to join takes a little of some CPU (beside `stress-ng
 *   --cpu 1` two workers whose helper never joined lost to one in 14 of 20 runs, one worker
 *   to itself in 8), and on the bench it is not even woken;
 * - a mark whose object count moved by more than a quarter since the last one starts the
 *   record again (but for the missed joins): the heap has a new graph.
 * An invited mark that no thread joined is an alone sample, the waiting thread's cost
 * included. */
bool gc_helpers_invite(gc_helper_record *r, uint32_t objects)
{
    uint64_t before = r->objects, now = objects;
    if (before > 0 && (now * 4 > before * 5 || now * 4 < before * 3)) { /* beyond +-1/4 */
        uint32_t unjoined = r->unjoined; /* missed joins are the machine's, not the graph's */
        *r = (gc_helper_record){ .unjoined = unjoined };
    }
    r->objects = objects;
    if (r->benched > 0) { /* on the bench: alone, then marks with them again from the trial */
        r->benched--;
        return r->benched == 0;
    }
    bool alone_known = rates_known(&r->alone, r->marks);
    bool helped_known = rates_known(&r->helped, r->marks);
    if (helped_known && !alone_known)
        return false; /* marks alone, to compare with */
    if (r->unjoined >= GC_HELPERS_UNJOINED_MARKS ||
        (helped_known && gc_helper_rate(&r->helped) < gc_helper_rate(&r->alone))) {
        r->unjoined = 0;
        r->helped.count = r->helped.next = 0; /* measured afresh from the trial on */
        r->benched = GC_HELPERS_BENCHED_MARKS; /* this mark and the next 7 alone */
        return false;
    }
    return true;
}

/* Each kind's rate is the median of its last three marks, so that one slow mark among fast
 * ones (the machine's noise: 13-22 ms for one graph in one process here; one two-worker mark
 * at half the rate of those around it in a make bench) does not decide alone; stale samples
 * are dropped, not mixed with new ones. Every mark ages the samples, a sample or not; only a
 * sample counts a missed join (a mark too short to be one is too short to join). */
void gc_helpers_record(gc_helper_record *r, double rate, bool invited, bool helped)
{
    r->marks++;
    if (rate <= 0)
        return;
    if (helped)
        r->unjoined = 0;
    else if (invited)
        r->unjoined++;
    gc_helper_rates *k = helped ? &r->helped : &r->alone;
    if (!rates_fresh(k, r->marks))
        k->count = k->next = 0;
    k->last[k->next] = rate;
    k->next = (k->next + 1) % 3;
    k->count += k->count < 3;
    k->at = r->marks;
}

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A pool thread that claimed the job waits until the caller marks shared (then it joins:
 * true) or withdraws it (false). It asks only while it runs on another CPU than the caller
 * last did: on the caller's own CPU it would be taking the caller's time (idle priority
 * does not keep a thread off a busy CPU entirely), not adding a core; at idle priority,
 * only once it has shown that its CPU is free (gc_join_proof_update). The caller looks at
 * the request at least every GC_TIME_CHECK_INTERVAL objects it scans, so the wait is short
 * when the caller runs; a caller that has run out of work withdraws the thread instead. */
static bool join(gc_pool *pool, uint32_t index, bool held, bool normal_priority)
{
    if (held) { /* a test's stand-in for a thread that never gets a CPU in time */
        while (atomic_load_explicit(&pool->claim[index], memory_order_relaxed) == CLAIM_WAITING)
            sched_yield();
        return false;
    }
    gc_join_proof proof = { 0 };
    while (!atomic_load_explicit(&pool->shared, memory_order_acquire)) {
        if (atomic_load_explicit(&pool->claim[index], memory_order_relaxed) != CLAIM_WAITING)
            return false;
        int cpu = current_cpu();
        bool callers = cpu >= 0 &&
                       cpu == atomic_load_explicit(&pool->caller_cpu, memory_order_relaxed);
        bool ask = normal_priority ? !callers
                                   : gc_join_proof_update(&proof, clock_ns(CLOCK_MONOTONIC),
                                                          clock_ns(CLOCK_THREAD_CPUTIME_ID),
                                                          callers);
        if (ask)
            atomic_store_explicit(&pool->join_wanted, true, memory_order_relaxed);
        sched_yield();
    }
    uv_mutex_lock(&pool->mutex); /* against the caller's last withdrawal and its wait */
    int waiting = CLAIM_WAITING;
    bool joined = atomic_compare_exchange_strong(&pool->claim[index], &waiting, CLAIM_MARKING);
    if (joined) {
        pool->running++;
        pool->joined++;
    }
    uv_mutex_unlock(&pool->mutex);
    return joined;
}

/* Pool threads mark at idle priority unless the settings say otherwise (tests that must see
 * threads mark together on a busy machine). */
static void thread_priority_apply(bool normal)
{
#ifdef SCHED_IDLE
    struct sched_param param = { 0 };
    pthread_setschedparam(pthread_self(), normal ? SCHED_OTHER : SCHED_IDLE, &param);
#else
    (void)normal;
#endif
}

/* One worker's share of a job: drain, then steal until everyone is idle or time is up. The
 * caller withdraws unstarted threads before it ever sleeps, so it never waits for a thread
 * the scheduler has not run. */
static void worker_run(gc_pool *pool, gc_collector *w)
{
    gc_heap *heap = w->heap;
    double deadline = pool->deadline;
    bool caller = w->worker_index == 0;
    for (;;) {
        if (!gc_worker_drain(w, deadline)) {
            stop_job(pool); /* out of time, work kept in w's lists */
            return;
        }
        atomic_fetch_add(&heap->idle_workers, 1);
        for (uint32_t spins = 0;; spins++) {
            if (atomic_load_explicit(&pool->stop, memory_order_acquire))
                return;
            if (gc_worker_steal(w)) {
                atomic_fetch_sub(&heap->idle_workers, 1);
                break;
            }
            if (caller)
                withdraw_unstarted(pool, heap);
            if (all_idle(heap)) {
                wake_sleepers(pool); /* nobody holds work and nobody can make more */
                return;
            }
            if (deadline > 0 && (spins >= IDLE_SPINS || (spins & 7) == 7) &&
                gc_past(heap, deadline)) {
                stop_job(pool);
                return;
            }
            if (spins < IDLE_SPINS)
                sched_yield();
            else
                idle_sleep(pool, heap, caller && deadline > 0);
        }
    }
}

static void pool_thread_main(void *arg)
{
    pool_thread_arg *a = arg;
    gc_pool *pool = a->pool;
    uint32_t index = a->worker_index;
    free(a);
    uint64_t seen = 0;
    int priority = -1; /* 0 idle, 1 normal, -1 not set yet */
    uv_mutex_lock(&pool->mutex);
    for (;;) {
        while (pool->generation == seen && !pool->shutdown)
            uv_cond_wait(&pool->wake, &pool->mutex);
        if (pool->shutdown)
            break;
        seen = pool->generation;
        int posted = CLAIM_POSTED;
        if (index >= pool->job_workers ||
            !atomic_compare_exchange_strong(&pool->claim[index], &posted, CLAIM_WAITING))
            continue; /* not part of this job, or withdrawn before it could start */
        int want = pool->normal_priority;
        bool held = pool->held;
        uv_mutex_unlock(&pool->mutex);
        if (want != priority)
            thread_priority_apply(want);
        priority = want;
        if (join(pool, index, held, want)) {
            worker_run(pool, pool->heap->workers[index]);
            uv_mutex_lock(&pool->mutex);
            if (--pool->running == 0)
                uv_cond_signal(&pool->finished);
        } else {
            uv_mutex_lock(&pool->mutex);
        }
    }
    uv_mutex_unlock(&pool->mutex);
}

/* At the end of a slice the caller waits for the threads that joined it: each stops at its
 * next look at the clock (a few microseconds). One that another program took the CPU from
 * would make the caller wait for as long as that program runs (a 2 ms slice took 15.3 ms of
 * wall time, 1.5 ms of the caller's CPU, in one `make bench` here): the scheduler does not
 * move a thread that ran a moment ago to the CPU the caller leaves idle while it waits. So
 * after LEND_AFTER_NS the caller lends its CPU: the threads still marking may run only there
 * (which the caller's sleep leaves free, unless another program takes it) until they have
 * stopped, then each gets back the CPUs it had. */
#define LEND_AFTER_NS 50000

#ifdef SCHED_IDLE
/* Pins every thread still marking to `cpu`, keeping what it was allowed before. */
static void threads_lend(gc_pool *pool, uint32_t n, int cpu)
{
    cpu_set_t mine;
    CPU_ZERO(&mine);
    CPU_SET(cpu, &mine);
    for (uint32_t i = 1; i < n && i <= pool->thread_count; i++) {
        pool->lent[i] = false;
        if (atomic_load_explicit(&pool->claim[i], memory_order_relaxed) != CLAIM_MARKING)
            continue;
        pthread_t t = pool->threads[i - 1];
        if (pthread_getaffinity_np(t, sizeof pool->lent_from[i], &pool->lent_from[i]) == 0 &&
            pthread_setaffinity_np(t, sizeof mine, &mine) == 0)
            pool->lent[i] = true;
    }
}

static void threads_unlend(gc_pool *pool, uint32_t n)
{
    for (uint32_t i = 1; i < n && i <= pool->thread_count; i++)
        if (pool->lent[i]) {
            pthread_setaffinity_np(pool->threads[i - 1], sizeof pool->lent_from[i],
                                   &pool->lent_from[i]);
            pool->lent[i] = false;
        }
}
#endif

/* pool->mutex is held. */
static void wait_for_joined(gc_pool *pool, uint32_t n)
{
    if (pool->running == 0)
        return;
    uv_cond_timedwait(&pool->finished, &pool->mutex, LEND_AFTER_NS);
#ifdef SCHED_IDLE
    int cpu = current_cpu();
    bool lend = pool->running > 0 && cpu >= 0;
    if (lend)
        threads_lend(pool, n, cpu);
#endif
    while (pool->running > 0)
        uv_cond_wait(&pool->finished, &pool->mutex);
#ifdef SCHED_IDLE
    if (lend)
        threads_unlend(pool, n);
#endif
}

static gc_pool *pool_get(gc_heap *heap)
{
    if (heap->pool)
        return heap->pool;
    gc_pool *pool = gc_calloc(1, sizeof *pool);
    if (!pool)
        return NULL;
    uv_mutex_init(&pool->mutex);
    uv_cond_init(&pool->wake);
    uv_cond_init(&pool->finished);
    uv_mutex_init(&pool->idle_mutex);
    uv_cond_init(&pool->idle_wake);
    atomic_init(&pool->sleepers, 0);
    atomic_init(&pool->stop, false);
    pool->heap = heap;
    heap->pool = pool;
    return pool;
}

/* Makes sure workers 1..n-1 and their threads exist; returns how many workers can run. */
static uint32_t workers_ensure(gc_heap *heap, uint32_t n)
{
    gc_pool *pool = pool_get(heap);
    if (!pool)
        return 1;
    for (uint32_t i = 1; i < n; i++) {
        if (!heap->workers[i]) {
            gc_collector *w = gc_malloc(sizeof *w);
            if (!w)
                return i;
            gc_worker_init(w, heap, i);
            heap->workers[i] = w;
        }
        if (pool->thread_count < i) {
            pool_thread_arg *a = gc_malloc(sizeof *a);
            if (!a)
                return i;
            a->pool = pool;
            a->worker_index = i;
            if (uv_thread_create(&pool->threads[i - 1], pool_thread_main, a) != 0) {
                free(a);
                return i;
            }
            pool->thread_count = i;
        }
    }
    return n;
}

uint32_t gc_parallel_worker_count(const gc_heap *heap)
{
    uint32_t n = heap->settings.num_workers;
    if (n == 0)
        n = (uint32_t)uv_available_parallelism();
    if (n < 1)
        n = 1;
    if (n > GC_MAX_WORKERS)
        n = GC_MAX_WORKERS;
    return n == 1 ? 1 : workers_ensure((gc_heap *)heap, n);
}

bool gc_parallel_drain(gc_heap *heap, double deadline)
{
    gc_pool *pool = heap->pool;
    uint32_t n = heap->mark_workers;
    atomic_store(&heap->idle_workers, 0);
    atomic_store(&pool->stop, false);
    gc_collector *caller = heap->workers[0];
    caller->alone = true; /* until a pool thread joins */
    for (uint32_t i = 1; i < n; i++)
        gc_worker_adopt(caller, heap->workers[i]); /* what the last slice left them */
    if (!heap->helpers_invited) { /* benched, or a mark alone to compare (gc_helpers_invite) */
        caller->join = NULL;
        return gc_worker_drain(caller, deadline); /* the others hold nothing now */
    }
    caller->join = &pool->join_wanted;
    atomic_store(&pool->join_wanted, false);
    atomic_store(&pool->shared, false);
    atomic_store(&pool->caller_cpu, current_cpu());

    uv_mutex_lock(&pool->mutex);
    pool->deadline = deadline;
    pool->job_workers = n;
    pool->running = 0;
    pool->joined = 0;
    pool->normal_priority = heap->settings.marker_threads_normal_priority;
    pool->held = heap->marker_threads_held;
    for (uint32_t i = 1; i < n; i++)
        atomic_store(&pool->claim[i], CLAIM_POSTED);
    pool->generation++;
    uv_cond_broadcast(&pool->wake);
    uv_mutex_unlock(&pool->mutex);

    worker_run(pool, caller);
    caller->join = NULL;

    uv_mutex_lock(&pool->mutex);
    withdraw_unstarted(pool, heap);
    wait_for_joined(pool, n);
    heap->helpers_joined += pool->joined > 0;
    uv_mutex_unlock(&pool->mutex);
    atomic_store(&heap->idle_workers, 0);

    for (uint32_t i = 0; i < n; i++)
        if (!gc_worker_is_empty(heap->workers[i]))
            return false;
    return true;
}

void gc_parallel_close(gc_heap *heap)
{
    gc_pool *pool = heap->pool;
    if (pool) {
        uv_mutex_lock(&pool->mutex);
        pool->shutdown = true;
        uv_cond_broadcast(&pool->wake);
        uv_mutex_unlock(&pool->mutex);
        for (uint32_t i = 0; i < pool->thread_count; i++)
            uv_thread_join(&pool->threads[i]);
        uv_cond_destroy(&pool->wake);
        uv_cond_destroy(&pool->finished);
        uv_cond_destroy(&pool->idle_wake);
        uv_mutex_destroy(&pool->idle_mutex);
        uv_mutex_destroy(&pool->mutex);
        free(pool);
        heap->pool = NULL;
    }
    for (uint32_t i = 1; i < GC_MAX_WORKERS; i++) {
        if (heap->workers[i]) {
            gc_worker_close(heap->workers[i]);
            free(heap->workers[i]);
            heap->workers[i] = NULL;
        }
    }
}
