/*
 * A randomized mutator against incremental marking: between slices it creates objects, moves
 * references and drops them, always through the write barrier. After every slice no object
 * the program can reach may be destroyed, and after every collection every object that was
 * unreachable when it started must be gone.
 */
#include "gc_fixture.h"

enum { MAX_NODES = 6000, ROOTS = 8, COLLECTIONS = 100 };

typedef struct world {
    fixture *f;
    uint64_t rng;
    node *nodes[MAX_NODES];     /* every node ever made (pointers only used while alive) */
    gc_weak weak[MAX_NODES];
    int count;
    node *roots[ROOTS];
    uint8_t reach[MAX_NODES];   /* scratch for the model's reachability */
} world;

static uint32_t below(world *w, uint32_t n)
{
    uint64_t z = (w->rng += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return (uint32_t)(((unsigned __int128)z * n) >> 64);
}

/* The model: which nodes can the program reach from its roots right now? */
static void model_reach(world *w)
{
    static int stack[MAX_NODES * 8];
    memset(w->reach, 0, sizeof w->reach);
    int top = 0;
    for (int r = 0; r < ROOTS; r++) {
        int id = w->roots[r]->id;
        if (!w->reach[id]) {
            w->reach[id] = 1;
            stack[top++] = id;
        }
    }
    while (top > 0) {
        node *n = w->nodes[stack[--top]];
        uint32_t edges = 2 + n->arr.count;
        for (uint32_t k = 0; k < edges; k++) {
            node *t = k == 0 ? n->a : k == 1 ? n->b : n->arr.data[k - 2];
            if (t && !w->reach[t->id]) {
                w->reach[t->id] = 1;
                stack[top++] = t->id;
            }
        }
    }
}

static node *random_reachable(world *w)
{
    for (int tries = 0; tries < 64; tries++) {
        int id = (int)below(w, (uint32_t)w->count);
        if (w->reach[id])
            return w->nodes[id];
    }
    return w->roots[below(w, ROOTS)];
}

static void mutate(world *w, int steps)
{
    fixture *f = w->f;
    model_reach(w);
    for (int s = 0; s < steps; s++) {
        node *x = random_reachable(w), *y = random_reachable(w);
        switch (below(w, 6)) {
        case 0: /* create and attach */
            if (w->count < MAX_NODES) {
                node *n = fix_node(f, NULL, NULL, w->count, 0);
                w->nodes[w->count] = n;
                w->weak[w->count] = gc_weak_make(f->heap, n);
                w->reach[w->count] = 1;
                w->count++;
                gc_store(f->heap, below(w, 2) ? &x->a : &x->b, n);
            }
            break;
        case 1: /* move a reference behind the marker */
            if (x->b) {
                gc_store(f->heap, &y->a, x->b);
                x->b = NULL;
            }
            break;
        case 2: /* move from an array */
            if (x->arr.count) {
                void *t = x->arr.data[--x->arr.count];
                if (t)
                    gc_store(f->heap, &y->b, t);
            }
            break;
        case 3: /* push onto an array (may reallocate it between slices) */
            gc_ref_array_push(&y->arr, x);
            gc_write_barrier(f->heap, x);
            break;
        case 4: /* drop */
            x->a = NULL;
            break;
        case 5: /* swap */ {
            void *t = x->a;
            gc_store(f->heap, &x->a, y->b);
            gc_store(f->heap, &y->b, t);
            break;
        }
        }
        model_reach(w);
    }
}

static void check_reachable_alive(world *w)
{
    model_reach(w);
    for (int i = 0; i < w->count; i++)
        if (w->reach[i] && gc_weak_is_stale(w->f->heap, w->weak[i]))
            fail_msg("reachable node %d was destroyed", i);
}

static void run_stress(fixture *f, uint64_t seed)
{
    static world w;
    memset(&w, 0, sizeof w);
    w.f = f;
    w.rng = seed;
    for (int r = 0; r < ROOTS; r++) {
        w.roots[r] = fix_node(f, NULL, NULL, w.count, GC_CREATE_ROOT);
        w.nodes[w.count] = w.roots[r];
        w.weak[w.count] = gc_weak_make(f->heap, w.roots[r]);
        w.count++;
    }
    static uint8_t dead_at_start[MAX_NODES];
    int destroyed_total = 0;
    for (int c = 0; c < COLLECTIONS; c++) {
        mutate(&w, 300);
        model_reach(&w);
        memset(dead_at_start, 0, sizeof dead_at_start); /* nodes made later were alive */
        for (int i = 0; i < w.count; i++)
            dead_at_start[i] = !w.reach[i] && !gc_weak_is_stale(f->heap, w.weak[i]);

        assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
        int slices = 0;
        while (!gc_incremental_reachability_step(f->heap)) {
            check_reachable_alive(&w);
            mutate(&w, 20);
            assert_true(++slices < 100000);
        }
        while (!gc_incremental_purge(f->heap, 0.0005)) {
            check_reachable_alive(&w);
            mutate(&w, 5);
        }
        check_reachable_alive(&w);
        for (int i = 0; i < w.count; i++) {
            if (dead_at_start[i]) {
                if (!gc_weak_is_stale(f->heap, w.weak[i]))
                    fail_msg("node %d unreachable since collection %d survived it", i, c);
                destroyed_total++;
            }
        }
        const char *broken = gc_testing_check(f->heap);
        if (broken)
            fail_msg("after collection %d: %s", c, broken);
    }
    assert_true(destroyed_total > 100);  /* the mutator really made garbage */
}

static int stress_setup(void **state, uint32_t workers)
{
    gc_settings s;
    gc_settings_default(&s);
    s.allow_incremental_reachability = true;
    s.incremental_reachability_time_limit = 1.5;
    s.num_workers = workers;
    s.marker_threads_normal_priority = true; /* they mark together, busy or not */
    int r = fix_setup_with(state, &s);
    ((fixture *)*state)->clock.step_per_read = 1.0;
    return r;
}

static int stress_setup_one(void **state) { return stress_setup(state, 1); }
static int stress_setup_two(void **state) { return stress_setup(state, 2); }

static void test_a_random_mutator_never_loses_a_reachable_object_with_one_worker(void **state)
{
    run_stress(*state, 0x5EED1);
}

static void test_a_random_mutator_never_loses_a_reachable_object_with_two_workers(void **state)
{
    run_stress(*state, 0x5EED2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_random_mutator_never_loses_a_reachable_object_with_one_worker, stress_setup_one, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_random_mutator_never_loses_a_reachable_object_with_two_workers, stress_setup_two, fix_teardown),
    };
    return cmocka_run_group_tests_name("gc_stress", tests, NULL, NULL);
}
