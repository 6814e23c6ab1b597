/*
 * Fault injection (SQLite's way): make allocation N of an operation fail, for N = 0, 1, ...
 * until the operation succeeds. Every failure must be reported as GC_E_NOMEM and leave the
 * heap exactly as it was: invariants hold, nothing half-made is findable or counted.
 */
#include "gc_fixture.h"

typedef gc_result (*operation)(fixture *f, int attempt, void **out);

/* Runs op under every possible single allocation failure; returns how many failed. */
static int fail_each_allocation(fixture *f, operation op, void **out)
{
    for (int n = 0; n < 1000; n++) {
        uint32_t objects = gc_object_count(f->heap);
        uint32_t clusters = gc_cluster_count(f->heap);
        gc_testing_fail_allocation(n);
        gc_result r = op(f, n, out);
        gc_testing_fail_allocation(-1);
        if (r == GC_OK)
            return n;
        assert_int_equal(r, GC_E_NOMEM);
        const char *broken = gc_testing_check(f->heap);
        if (broken)
            fail_msg("after failing allocation %d: %s", n, broken);
        assert_int_equal(gc_object_count(f->heap), objects);
        assert_int_equal(gc_cluster_count(f->heap), clusters);
    }
    fail_msg("the operation never succeeded");
    return -1;
}

static gc_result create_named_root(fixture *f, int attempt, void **out)
{
    char name[32];
    snprintf(name, sizeof name, "Thing_%d", attempt);
    gc_result r = gc_object_create(f->heap, f->node_class, NULL, name, GC_CREATE_ROOT, out);
    if (r != GC_OK)
        assert_null(gc_object_find(f->heap, name));
    return r;
}

static void test_a_failed_allocation_while_creating_an_object_leaves_nothing_behind(void **state)
{
    fixture *f = *state;
    void *obj = NULL;

    int failures = fail_each_allocation(f, create_named_root, &obj);

    assert_true(failures >= 2); /* memory, name, root entry at least */
    assert_true(gc_root_contains(obj));
    assert_non_null(gc_object_find(f->heap, gc_object_name(f->heap, obj)));
}

typedef struct pair {
    void *a, *b;
} pair;

typedef struct pair_holder {
    gc_struct_array pairs;
    void *x;
} pair_holder;

static gc_result register_class(fixture *f, int attempt, void **out)
{
    static const gc_member inner[] = { GC_REF(pair, a), GC_REF(pair, b), GC_MEMBERS_END };
    static const gc_member members[] = {
        GC_STRUCT_ARRAY(pair_holder, pairs, pair, inner),
        GC_REF(pair_holder, x),
        GC_MEMBERS_END,
    };
    char name[32];
    snprintf(name, sizeof name, "Holder%d", attempt);
    gc_class_desc d = { .name = name, .size = sizeof(pair_holder), .members = members,
                        .super = NULL };
    gc_result r = gc_class_register(f->heap, &d, (gc_class **)out);
    if (r != GC_OK)
        assert_null(gc_class_find(f->heap, name));
    return r;
}

static void test_a_failed_allocation_while_registering_a_class_leaves_nothing_behind(void **state)
{
    fixture *f = *state;
    gc_class *cls = NULL;

    int failures = fail_each_allocation(f, register_class, (void **)&cls);

    assert_true(failures >= 3);
    assert_non_null(cls);
    assert_int_equal(gc_class_schema_length(cls), 2);
}

typedef struct owner {
    gc_ref_array parts;
    void *outside;
} owner;

static void owner_destructor(void *obj)
{
    gc_ref_array_free(&((owner *)obj)->parts);
}

static void *g_root;

static gc_result make_cluster(fixture *f, int attempt, void **out)
{
    (void)attempt;
    (void)out;
    return gc_cluster_create(f->heap, g_root);
}

static void test_a_failed_allocation_while_building_a_cluster_leaves_no_cluster(void **state)
{
    fixture *f = *state;
    static const gc_member members[] = { GC_REF_ARRAY(owner, parts), GC_REF(owner, outside),
                                         GC_MEMBERS_END };
    gc_class_desc rd = { .name = "Owner", .size = sizeof(owner), .members = members,
                         .flags = GC_CLASS_CLUSTER_ROOT, .hooks.destructor = owner_destructor };
    gc_class_desc pd = { .name = "Part", .size = sizeof(owner), .members = members,
                         .flags = GC_CLASS_CAN_BE_IN_CLUSTER, .hooks.destructor = owner_destructor };
    gc_class *rc, *pc;
    assert_int_equal(gc_class_register(f->heap, &rd, &rc), GC_OK);
    assert_int_equal(gc_class_register(f->heap, &pd, &pc), GC_OK);
    owner *root;
    assert_int_equal(gc_object_create(f->heap, rc, NULL, "Root", GC_CREATE_ROOT, (void **)&root),
                     GC_OK);
    for (int i = 0; i < 8; i++) {
        owner *part;
        assert_int_equal(gc_object_create(f->heap, pc, root, NULL, 0, (void **)&part), GC_OK);
        gc_ref_array_push(&root->parts, part);
        part->outside = fix_node(f, NULL, NULL, i, GC_CREATE_ROOT);
    }
    g_root = root;

    int failures = fail_each_allocation(f, make_cluster, NULL);

    assert_true(failures >= 1);
    assert_int_equal(gc_cluster_count(f->heap), 1);
    assert_int_equal(gc_verify_assumptions(f->heap, NULL, NULL), 0);
    fix_collect(f);
    assert_true(gc_object_is_valid(root->parts.data[7]));
}

static gc_result add_refs_and_roots(fixture *f, int attempt, void **out)
{
    (void)attempt;
    node *n = *out;
    gc_result r = gc_object_add_ref(f->heap, n);
    if (r != GC_OK) {
        assert_int_equal(gc_object_ref_count(f->heap, n), 0);
        return r;
    }
    gc_object_release_ref(f->heap, n);
    return GC_OK;
}

static void test_a_failed_allocation_while_pinning_an_object_changes_nothing(void **state)
{
    fixture *f = *state;
    /* Fill the pin table up to its next growth. */
    node *n = NULL;
    for (int i = 0; i < 8; i++)
        n = fix_node(f, NULL, NULL, i, GC_CREATE_ROOT);
    n = fix_node(f, NULL, NULL, 100, 0);
    void *slot = n;

    fail_each_allocation(f, add_refs_and_roots, &slot);

    assert_false(gc_root_contains(n));
    fix_collect(f);
    assert_true(fix_log_find(f, "free:100") >= 0);
}

/* Updating a pin that is already there must never need memory. The table is filled one pin
 * at a time past its growth boundaries; at every fill, with the next allocation failing,
 * dropping one of an object's two references succeeds and leaves one, and taking it back
 * succeeds too. */
static void test_changing_the_count_of_a_pinned_object_needs_no_memory_at_any_table_fill(
    void **state)
{
    fixture *f = *state;
    node *held = fix_node(f, NULL, NULL, 1000, 0);
    assert_int_equal(gc_object_add_ref(f->heap, held), GC_OK);
    assert_int_equal(gc_object_add_ref(f->heap, held), GC_OK);
    for (int fill = 0; fill < 40; fill++) {
        assert_int_equal(gc_object_add_ref(f->heap, fix_node(f, NULL, NULL, fill, 0)), GC_OK);

        gc_testing_fail_allocation(0);
        gc_result released = gc_object_release_ref(f->heap, held);
        gc_testing_fail_allocation(-1);
        assert_int_equal(released, GC_OK);
        assert_int_equal(gc_object_ref_count(f->heap, held), 1);

        gc_testing_fail_allocation(0);
        gc_result added = gc_object_add_ref(f->heap, held);
        gc_testing_fail_allocation(-1);
        assert_int_equal(added, GC_OK);
        assert_int_equal(gc_object_ref_count(f->heap, held), 2);
    }
    const char *broken = gc_testing_check(f->heap);
    if (broken)
        fail_msg("%s", broken);
}

static gc_result collect_full(fixture *f, int attempt, void **out)
{
    (void)attempt;
    (void)out;
    return gc_collect(f->heap, 0, true);
}

/* A collection takes the room its lists need (barrier queues, unreachable and pending lists)
 * before it starts: if that fails it reports GC_E_NOMEM and changes nothing, so gathering,
 * purging and the barrier never meet a failing allocation half-way. */
static void test_a_collection_without_room_for_its_lists_fails_before_it_starts(void **state)
{
    fixture *f = *state;
    gc_settings s = *gc_heap_settings(f->heap);
    s.num_workers = 1;
    assert_int_equal(gc_heap_configure(f->heap, &s), GC_OK);
    node *root = fix_node(f, NULL, NULL, 0, GC_CREATE_ROOT);
    for (int i = 0; i < 100; i++)
        assert_int_equal(gc_ref_array_push(&root->arr, fix_node(f, NULL, NULL, i + 1, 0)), GC_OK);
    fix_collect(f); /* the lists now fit 100 objects; the garbage below needs more */
    uint32_t live = gc_object_count(f->heap);
    for (int i = 0; i < 3000; i++)
        fix_node(f, NULL, NULL, 1000 + i, 0);

    int failures = fail_each_allocation(f, collect_full, NULL);

    assert_true(failures >= 1);
    assert_int_equal(gc_object_count(f->heap), live); /* the garbage went, once it could */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_failed_allocation_while_creating_an_object_leaves_nothing_behind, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_failed_allocation_while_registering_a_class_leaves_nothing_behind, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_failed_allocation_while_building_a_cluster_leaves_no_cluster, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_failed_allocation_while_pinning_an_object_changes_nothing, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_collection_without_room_for_its_lists_fails_before_it_starts, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_changing_the_count_of_a_pinned_object_needs_no_memory_at_any_table_fill, fix_setup, fix_teardown),
    };
    return cmocka_run_group_tests_name("gc_faults", tests, NULL, NULL);
}
