/* Marking: the flag swap, and objects born between collections. */
#include "gc_fixture.h"

static void test_starting_a_mark_unmarks_every_survivor_without_a_pass(void **state)
{
    fixture *f = *state;
    gc_settings s;
    gc_settings_default(&s);
    s.allow_incremental_reachability = true;
    s.incremental_reachability_time_limit = 1e-9; /* stop after the initial roots */
    gc_heap_configure(f->heap, &s);
    f->clock.step_per_read = 1.0;
    node *root = fix_node(f, NULL, NULL, 1, GC_CREATE_ROOT);
    node *orphan = fix_node(f, NULL, NULL, 2, 0);
    node *chain[200];
    for (int i = 0; i < 200; i++) {
        chain[i] = fix_node(f, NULL, NULL, 10 + i, 0);
        if (i > 0)
            chain[i - 1]->a = chain[i];
    }
    root->a = chain[0];
    assert_true(gc_testing_is_marked(f->heap, orphan)); /* born marked */

    assert_int_equal(gc_collect(f->heap, 0, false), GC_OK);

    assert_true(gc_is_incremental_reachability_pending(f->heap));
    assert_true(gc_testing_is_marked(f->heap, root));        /* an initial root */
    assert_false(gc_testing_is_marked(f->heap, orphan));      /* the swap unmarked it */
    assert_false(gc_testing_is_marked(f->heap, chain[199]));  /* not reached yet */
    while (!gc_incremental_reachability_step(f->heap))
        ;
    assert_true(gc_testing_is_marked(f->heap, chain[199]));
    assert_true(gc_incremental_purge(f->heap, 0));
}

static void test_objects_created_between_collections_are_reachable_until_the_next(void **state)
{
    fixture *f = *state;
    fix_collect(f);
    node *fresh = fix_node(f, NULL, NULL, 1, 0);

    assert_true(gc_testing_is_marked(f->heap, fresh));
    assert_true(gc_object_is_valid(fresh));
    assert_int_equal(fix_log_find(f, "begin:1"), -1);
    fix_collect(f);
    assert_true(fix_log_find(f, "free:1") >= 0);
}

static void test_marking_twice_in_a_row_gives_the_same_survivors(void **state)
{
    fixture *f = *state;
    node *root = fix_node(f, NULL, NULL, 0, GC_CREATE_ROOT);
    node *kept[50];
    gc_weak dropped[50];
    for (int i = 0; i < 50; i++) {
        kept[i] = fix_node(f, NULL, NULL, i, 0);
        gc_ref_array_push(&root->arr, kept[i]);
        dropped[i] = gc_weak_make(f->heap, fix_node(f, NULL, NULL, 100 + i, 0));
    }
    uint32_t live_before = gc_object_count(f->heap);

    fix_collect(f);
    uint32_t after_first = gc_object_count(f->heap);
    fix_collect(f);

    assert_int_equal(after_first, live_before - 50);
    assert_int_equal(gc_object_count(f->heap), after_first);
    for (int i = 0; i < 50; i++) {
        assert_false(fix_alive(f, dropped[i]));
        assert_true(gc_object_is_valid(kept[i]));
    }
}

static void test_a_long_reference_array_is_scanned_completely(void **state)
{
    fixture *f = *state;
    node *root = fix_node(f, NULL, NULL, 0, GC_CREATE_ROOT);
    enum { N = 10000 }; /* several scan pieces */
    static gc_weak w[N];
    for (int i = 0; i < N; i++) {
        node *n = fix_node(f, NULL, NULL, i, 0);
        gc_ref_array_push(&root->arr, n);
        w[i] = gc_weak_make(f->heap, n);
    }

    fix_collect(f);

    for (int i = 0; i < N; i++)
        assert_true(fix_alive(f, w[i]));
    gc_stats st;
    gc_stats_get(f->heap, &st);
    assert_int_equal(st.unreachable, 0);
}

/* A class of `n` references and nothing else: 8 bytes a reference, so 1 and 2 references
 * make objects of 32 and 48 bytes (the region's small part), 6 make one of 64. */
typedef struct refs6 {
    void *ref[6];
} refs6;

static const gc_member refs1_members[] = { GC_REF(refs6, ref[0]), GC_MEMBERS_END };
static const gc_member refs2_members[] = { GC_REF(refs6, ref[0]), GC_REF(refs6, ref[1]),
                                           GC_MEMBERS_END };
static const gc_member refs6_members[] = {
    GC_REF(refs6, ref[0]), GC_REF(refs6, ref[1]), GC_REF(refs6, ref[2]),
    GC_REF(refs6, ref[3]), GC_REF(refs6, ref[4]), GC_REF(refs6, ref[5]), GC_MEMBERS_END,
};

static void test_objects_of_every_small_size_side_by_side_are_marked_one_by_one(void **state)
{
    fixture *f = *state;
    const gc_member *members[] = { refs1_members, refs2_members, refs6_members };
    const size_t sizes[] = { sizeof(void *), 2 * sizeof(void *), 6 * sizeof(void *) };
    const char *names[] = { "Refs1", "Refs2", "Refs6" };
    node *root = fix_node(f, NULL, NULL, 0, GC_CREATE_ROOT);
    enum { PER_CLASS = 3000 };
    static gc_weak kept[3][PER_CLASS], dropped[3][PER_CLASS];
    for (int c = 0; c < 3; c++) {
        gc_class *cls;
        gc_class_desc d = { .name = names[c], .size = sizes[c], .members = members[c] };
        assert_int_equal(gc_class_register(f->heap, &d, &cls), GC_OK);
        refs6 *prev = NULL;
        for (int i = 0; i < PER_CLASS; i++) { /* neighbours alternate: kept, dropped, ... */
            refs6 *k, *x;
            assert_int_equal(gc_object_create(f->heap, cls, NULL, NULL, 0, (void **)&k), GC_OK);
            assert_int_equal(gc_object_create(f->heap, cls, NULL, NULL, 0, (void **)&x), GC_OK);
            if (prev)
                prev->ref[0] = k; /* a chain of the kept ones */
            else
                gc_ref_array_push(&root->arr, k);
            prev = k;
            kept[c][i] = gc_weak_make(f->heap, k);
            dropped[c][i] = gc_weak_make(f->heap, x);
        }
    }

    fix_collect(f);
    fix_collect(f); /* both mark values */

    for (int c = 0; c < 3; c++)
        for (int i = 0; i < PER_CLASS; i++) {
            assert_true(fix_alive(f, kept[c][i]));
            assert_false(fix_alive(f, dropped[c][i]));
        }
}

/* Two references after 24 bytes that are not references: the run of references is at 24. */
typedef struct padded2 {
    uintptr_t pad[3];
    void *ref[2];
} padded2;

static const gc_member padded2_members[] = { GC_REF(padded2, ref[0]), GC_REF(padded2, ref[1]),
                                             GC_MEMBERS_END };

/* A chain whose links cycle through three classes: references at offset 0 (Refs2), at
 * offset 24 (Padded2), and a schema that is not one run (the fixture's Node, whose array
 * makes it so). Each link's pad holds the address of an object nothing references. */
static void build_mixed_chain(fixture *f, node *root, int n, gc_weak *kept, gc_weak *dropped)
{
    gc_class *refs2, *padded;
    gc_class_desc d2 = { .name = "Refs2", .size = 2 * sizeof(void *), .members = refs2_members };
    gc_class_desc dp = { .name = "Padded2", .size = sizeof(padded2),
                         .members = padded2_members };
    assert_int_equal(gc_class_register(f->heap, &d2, &refs2), GC_OK);
    assert_int_equal(gc_class_register(f->heap, &dp, &padded), GC_OK);
    void **link = &root->a;
    for (int i = 0; i < n; i++) {
        void *obj;
        node *x = fix_node(f, NULL, NULL, 100000 + i, 0);
        dropped[i] = gc_weak_make(f->heap, x);
        if (i % 3 == 0) {
            assert_int_equal(gc_object_create(f->heap, refs2, NULL, NULL, 0, &obj), GC_OK);
            *link = obj;
            link = &((refs6 *)obj)->ref[1];
        } else if (i % 3 == 1) {
            assert_int_equal(gc_object_create(f->heap, padded, NULL, NULL, 0, &obj), GC_OK);
            ((padded2 *)obj)->pad[0] = (uintptr_t)x; /* not a reference */
            *link = obj;
            link = &((padded2 *)obj)->ref[1];
        } else {
            obj = fix_node(f, NULL, NULL, i, 0);
            *link = obj;
            link = &((node *)obj)->b;
        }
        kept[i] = gc_weak_make(f->heap, obj);
    }
}

static void test_objects_whose_references_sit_at_different_offsets_are_each_scanned_at_theirs(
    void **state)
{
    fixture *f = *state;
    node *root = fix_node(f, NULL, NULL, 0, GC_CREATE_ROOT);
    enum { N = 3000 };
    static gc_weak kept[N], dropped[N];
    build_mixed_chain(f, root, N, kept, dropped);

    fix_collect(f);
    fix_collect(f); /* both mark values */

    for (int i = 0; i < N; i++) {
        assert_true(fix_alive(f, kept[i]));
        assert_false(fix_alive(f, dropped[i]));
    }
}

static int fix_setup_no_prefetch(void **state)
{
    gc_settings s;
    gc_settings_default(&s);
    s.no_prefetch = true;
    return fix_setup_with(state, &s);
}

static void test_a_mark_without_prefetching_keeps_the_same_objects(void **state)
{
    fixture *f = *state;
    node *root = fix_node(f, NULL, NULL, 0, GC_CREATE_ROOT);
    enum { N = 3000 };
    static gc_weak kept[N], dropped[N];
    build_mixed_chain(f, root, N, kept, dropped);
    for (int i = 0; i < N; i++) /* and a long array beside the chain */
        gc_ref_array_push(&root->arr, gc_weak_get(f->heap, kept[i]));

    fix_collect(f);
    fix_collect(f);

    for (int i = 0; i < N; i++) {
        assert_true(fix_alive(f, kept[i]));
        assert_false(fix_alive(f, dropped[i]));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_starting_a_mark_unmarks_every_survivor_without_a_pass, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_objects_created_between_collections_are_reachable_until_the_next, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_marking_twice_in_a_row_gives_the_same_survivors, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_long_reference_array_is_scanned_completely, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_objects_of_every_small_size_side_by_side_are_marked_one_by_one, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_objects_whose_references_sit_at_different_offsets_are_each_scanned_at_theirs, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_mark_without_prefetching_keeps_the_same_objects, fix_setup_no_prefetch, fix_teardown),
    };
    return cmocka_run_group_tests_name("gc_mark", tests, NULL, NULL);
}
