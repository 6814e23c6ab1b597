/* Threads other than the game thread, inside a scope guard, while an incremental mark is
 * suspended: their barriers must not race the game thread dissolving clusters. Run under
 * make tsan to see it. */
#include "gc_fixture.h"

#include <uv.h>

typedef struct actor { gc_ref_array components; int id; } actor;
typedef struct component { void *owner; int id; } component;

#define ACTORS 200
static component *g_comp[ACTORS][5];
static gc_heap *g_heap;
static uv_sem_t g_go;

static void other_thread(void *arg)
{
    (void)arg;
    uv_sem_wait(&g_go);
    for (int round = 0; round < 20; round++) {
        gc_scope_guard_enter(g_heap);
        for (int i = 0; i < ACTORS; i++) {
            if (gc_object_add_ref(g_heap, g_comp[i][1]) == GC_OK)
                gc_object_release_ref(g_heap, g_comp[i][1]);
        }
        gc_scope_guard_leave(g_heap);
    }
}

static void test_a_guarded_thread_referencing_cluster_members_while_clusters_dissolve_is_safe(void **state)
{
    fixture *f = *state;
    g_heap = f->heap;
    gc_settings s = *gc_heap_settings(f->heap);
    s.allow_incremental_reachability = true;
    s.incremental_reachability_time_limit = 1.5;
    s.num_workers = 1;
    gc_heap_configure(f->heap, &s);
    static const gc_member am[] = { GC_REF_ARRAY(actor, components), GC_MEMBERS_END };
    static const gc_member cm[] = { GC_REF(component, owner), GC_MEMBERS_END };
    gc_class_desc ad = { .name = "Actor", .size = sizeof(actor), .members = am,
                         .flags = GC_CLASS_CLUSTER_ROOT };
    gc_class_desc cd = { .name = "Component", .size = sizeof(component), .members = cm,
                         .flags = GC_CLASS_CAN_BE_IN_CLUSTER };
    gc_class *ac, *cc;
    assert_int_equal(gc_class_register(f->heap, &ad, &ac), GC_OK);
    assert_int_equal(gc_class_register(f->heap, &cd, &cc), GC_OK);
    node *root = fix_node(f, NULL, NULL, 0, GC_CREATE_ROOT);
    node *prev = root;
    for (int i = 0; i < 2000; i++) {
        node *n = fix_node(f, NULL, NULL, i + 1, 0);
        prev->a = n;
        prev = n;
    }
    for (int i = 0; i < ACTORS; i++) {
        actor *a;
        assert_int_equal(gc_object_create(f->heap, ac, NULL, NULL, 0, (void **)&a), GC_OK);
        gc_ref_array_push(&root->arr, a);
        for (int k = 0; k < 5; k++) {
            component *c;
            assert_int_equal(gc_object_create(f->heap, cc, a, NULL, 0, (void **)&c), GC_OK);
            c->owner = a;
            gc_ref_array_push(&a->components, c);
            g_comp[i][k] = c;
        }
        assert_int_equal(gc_cluster_create(f->heap, a), GC_OK);
    }
    f->clock.step_per_read = 1.0;
    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);
    assert_true(gc_is_incremental_reachability_pending(f->heap));

    uv_sem_init(&g_go, 0);
    uv_thread_t t;
    uv_thread_create(&t, other_thread, NULL);
    uv_sem_post(&g_go);
    for (int i = 0; i < ACTORS; i++)
        gc_object_mark_garbage(f->heap, g_comp[i][0]); /* dissolves actor i's cluster */
    uv_thread_join(&t);
    while (!gc_incremental_reachability_step(f->heap))
        ;
    assert_true(gc_incremental_purge(f->heap, 0));
    assert_int_equal(gc_cluster_count(f->heap), 0);
    for (int i = 0; i < ACTORS; i++) {
        assert_true(gc_object_is_valid(g_comp[i][1])); /* reachable through root->arr */
        actor *a = gc_object_outer(f->heap, g_comp[i][1]);
        gc_ref_array_free(&a->components);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_guarded_thread_referencing_cluster_members_while_clusters_dissolve_is_safe, fix_setup, fix_teardown),
    };
    return cmocka_run_group_tests_name("gc_guarded", tests, NULL, NULL);
}
