/* Clusters: building, marking as a unit, dissolving. */
#include "gc_fixture.h"

typedef struct actor {
    gc_ref_array components;
    void *target;
    int id;
} actor;

typedef struct component {
    void *owner;
    void *other;
    int id;
} component;

static int g_component_scans;
static void component_add_refs(void *obj, gc_collector *c)
{
    (void)obj;
    (void)c;
    g_component_scans++;
}

static void actor_destructor(void *obj)
{
    gc_ref_array_free(&((actor *)obj)->components);
}

/* The fixture plus the two classes; the fixture must stay where the heap's clock points. */
typedef struct cl_fixture {
    fixture base;
    gc_class *actor_class;
    gc_class *component_class;
} cl_fixture;

static int cl_setup(void **state)
{
    cl_fixture *cf = calloc(1, sizeof *cf);
    assert_non_null(cf);
    cf->base.clock.now = 1000.0;
    gc_heap_config cfg = { 0 };
    cfg.clock = gc_fake_clock_read;
    cfg.clock_userdata = &cf->base.clock;
    assert_int_equal(gc_heap_create(&cfg, &cf->base.heap), GC_OK);
    gc_class_desc nd = { .name = "Node", .size = sizeof(node), .members = node_members,
                         .hooks.destructor = node_destructor };
    assert_int_equal(gc_class_register(cf->base.heap, &nd, &cf->base.node_class), GC_OK);
    g_fix = &cf->base;
    *state = cf;
    static const gc_member actor_members[] = {
        GC_REF_ARRAY(actor, components),
        GC_REF(actor, target),
        GC_MEMBERS_END,
    };
    gc_class_desc a = { .name = "Actor", .size = sizeof(actor), .members = actor_members };
    a.flags = GC_CLASS_CLUSTER_ROOT;
    a.hooks.destructor = actor_destructor;
    assert_int_equal(gc_class_register(cf->base.heap, &a, &cf->actor_class), GC_OK);
    static const gc_member component_members[] = {
        GC_REF(component, owner),
        GC_REF(component, other),
        GC_MEMBERS_END,
    };
    gc_class_desc c = { .name = "Component", .size = sizeof(component),
                        .members = component_members };
    c.flags = GC_CLASS_CAN_BE_IN_CLUSTER;
    c.add_referenced_objects = component_add_refs;
    assert_int_equal(gc_class_register(cf->base.heap, &c, &cf->component_class), GC_OK);
    g_component_scans = 0;
    return 0;
}

static actor *make_actor(cl_fixture *cf, const char *name, int components, uint32_t flags,
                         component **out)
{
    actor *a;
    assert_int_equal(gc_object_create(cf->base.heap, cf->actor_class, NULL, name, flags,
                                      (void **)&a), GC_OK);
    for (int i = 0; i < components; i++) {
        component *c;
        assert_int_equal(gc_object_create(cf->base.heap, cf->component_class, a, NULL, 0,
                                          (void **)&c), GC_OK);
        c->owner = a;
        c->id = i;
        gc_ref_array_push(&a->components, c);
        if (out)
            out[i] = c;
    }
    return a;
}

static void test_a_cluster_gathers_the_objects_its_root_owns(void **state)
{
    cl_fixture *cf = *state;
    component *c[6];
    actor *a = make_actor(cf, "Pawn", 6, GC_CREATE_ROOT, c);

    assert_int_equal(gc_cluster_create(cf->base.heap, a), GC_OK);

    assert_int_equal(gc_cluster_count(cf->base.heap), 1);
    assert_true(gc_object_in_cluster(a));
    for (int i = 0; i < 6; i++)
        assert_true(gc_object_in_cluster(c[i]));
}

static void test_a_cluster_smaller_than_the_minimum_is_not_created(void **state)
{
    cl_fixture *cf = *state;
    actor *a = make_actor(cf, "Small", 4, GC_CREATE_ROOT, NULL); /* default minimum: 5 */

    assert_int_equal(gc_cluster_create(cf->base.heap, a), GC_E_INVALID);

    assert_int_equal(gc_cluster_count(cf->base.heap), 0);
    assert_false(gc_object_in_cluster(a));
}

static void test_only_cluster_root_classes_can_root_a_cluster(void **state)
{
    cl_fixture *cf = *state;
    node *n = fix_node(&cf->base, NULL, NULL, 1, GC_CREATE_ROOT);
    assert_int_equal(gc_cluster_create(cf->base.heap, n), GC_E_INVALID);
}

static void test_a_reachable_cluster_marks_its_members_without_scanning_them(void **state)
{
    cl_fixture *cf = *state;
    component *c[10];
    actor *a = make_actor(cf, "Pawn", 10, GC_CREATE_ROOT, c);
    assert_int_equal(gc_cluster_create(cf->base.heap, a), GC_OK);
    g_component_scans = 0;

    fix_collect(&cf->base);

    assert_int_equal(g_component_scans, 0);
    for (int i = 0; i < 10; i++)
        assert_true(gc_object_is_valid(c[i]));
    gc_stats st;
    gc_stats_get(cf->base.heap, &st);
    assert_int_equal(st.unreachable, 0);
}

static void test_objects_members_reference_outside_are_kept_as_mutable_objects(void **state)
{
    cl_fixture *cf = *state;
    component *c[5];
    actor *a = make_actor(cf, "Pawn", 5, GC_CREATE_ROOT, c);
    node *outside = fix_node(&cf->base, NULL, NULL, 77, 0);
    c[3]->other = outside;
    gc_weak w = gc_weak_make(cf->base.heap, outside);
    assert_int_equal(gc_cluster_create(cf->base.heap, a), GC_OK);

    fix_collect(&cf->base);

    assert_true(fix_alive(&cf->base, w));
    assert_false(gc_object_in_cluster(outside));
}

static void test_a_reference_stored_into_a_member_later_is_recorded(void **state)
{
    cl_fixture *cf = *state;
    component *c[5];
    actor *a = make_actor(cf, "Pawn", 5, GC_CREATE_ROOT, c);
    assert_int_equal(gc_cluster_create(cf->base.heap, a), GC_OK);
    node *late = fix_node(&cf->base, NULL, NULL, 78, 0);
    gc_weak w = gc_weak_make(cf->base.heap, late);

    gc_object_store(cf->base.heap, c[1], &c[1]->other, late);
    fix_collect(&cf->base);

    assert_true(fix_alive(&cf->base, w));
}

static void test_a_reference_stored_into_the_root_later_is_recorded(void **state)
{
    cl_fixture *cf = *state;
    actor *a = make_actor(cf, "Pawn", 5, GC_CREATE_ROOT, NULL);
    assert_int_equal(gc_cluster_create(cf->base.heap, a), GC_OK);
    node *target = fix_node(&cf->base, NULL, NULL, 79, 0);
    gc_weak w = gc_weak_make(cf->base.heap, target);

    gc_object_store(cf->base.heap, a, &a->target, target);
    fix_collect(&cf->base);

    assert_true(fix_alive(&cf->base, w));
    assert_int_equal(gc_verify_assumptions(cf->base.heap, NULL, NULL), 0);
}

static void test_a_cluster_keeps_the_clusters_its_members_reference(void **state)
{
    cl_fixture *cf = *state;
    component *ca[5], *cb[5];
    actor *a = make_actor(cf, "A", 5, GC_CREATE_ROOT, ca);
    actor *b = make_actor(cf, "B", 5, 0, cb);
    assert_int_equal(gc_cluster_create(cf->base.heap, b), GC_OK);
    ca[0]->other = cb[2];
    assert_int_equal(gc_cluster_create(cf->base.heap, a), GC_OK);
    gc_weak wb = gc_weak_make(cf->base.heap, b);

    fix_collect(&cf->base);
    assert_true(fix_alive(&cf->base, wb));

    assert_int_equal(gc_object_mark_garbage(cf->base.heap, cb[2]), GC_OK);
    assert_int_equal(gc_cluster_count(cf->base.heap), 0); /* B dissolved, and A with it */
    fix_collect(&cf->base);
    assert_null(ca[0]->other);
    assert_false(fix_alive(&cf->base, wb));
}

static void test_a_rooted_member_keeps_its_cluster(void **state)
{
    cl_fixture *cf = *state;
    component *c[5];
    actor *a = make_actor(cf, "Pawn", 5, 0, c);
    node *holder = fix_node(&cf->base, NULL, NULL, 1, GC_CREATE_ROOT);
    holder->a = a;
    assert_int_equal(gc_cluster_create(cf->base.heap, a), GC_OK);
    holder->a = NULL;
    assert_int_equal(gc_root_add(cf->base.heap, c[4]), GC_OK);
    gc_weak wa = gc_weak_make(cf->base.heap, a), w0 = gc_weak_make(cf->base.heap, c[0]);

    fix_collect(&cf->base);

    assert_true(fix_alive(&cf->base, wa));
    assert_true(fix_alive(&cf->base, w0));
    assert_int_equal(gc_cluster_count(cf->base.heap), 1);
}

static void test_a_garbage_root_dissolves_its_cluster_and_members_are_judged_alone(void **state)
{
    cl_fixture *cf = *state;
    component *c[5];
    actor *a = make_actor(cf, "Pawn", 5, 0, c);
    node *holder = fix_node(&cf->base, NULL, NULL, 1, GC_CREATE_ROOT);
    holder->a = a;
    holder->b = c[2]; /* one member is also referenced from outside */
    assert_int_equal(gc_cluster_create(cf->base.heap, a), GC_OK);
    gc_weak w0 = gc_weak_make(cf->base.heap, c[0]), w2 = gc_weak_make(cf->base.heap, c[2]);

    assert_int_equal(gc_object_mark_garbage(cf->base.heap, a), GC_OK);
    assert_int_equal(gc_cluster_count(cf->base.heap), 0);
    assert_false(gc_object_in_cluster(c[0]));
    fix_collect(&cf->base);

    assert_null(holder->a);                /* the root is garbage: references to it go */
    assert_true(fix_alive(&cf->base, w2)); /* kept on its own, and its outer with it */
    assert_true(gc_object_is_garbage(a));

    holder->b = NULL;
    fix_collect(&cf->base);
    assert_false(fix_alive(&cf->base, w0));
    assert_false(fix_alive(&cf->base, w2));
}

static void test_destroying_a_member_dissolves_its_cluster(void **state)
{
    cl_fixture *cf = *state;
    component *c[5];
    actor *a = make_actor(cf, "Pawn", 5, GC_CREATE_ROOT, c);
    assert_int_equal(gc_cluster_create(cf->base.heap, a), GC_OK);

    assert_int_equal(gc_object_mark_garbage(cf->base.heap, c[1]), GC_OK);
    fix_collect(&cf->base);

    assert_int_equal(gc_cluster_count(cf->base.heap), 0);
    assert_int_equal(a->components.data[1], NULL);
    assert_true(gc_object_is_valid(c[0]));
}

static void test_an_unreachable_cluster_is_collected_whole(void **state)
{
    cl_fixture *cf = *state;
    component *c[8];
    actor *a = make_actor(cf, "Pawn", 8, 0, c);
    assert_int_equal(gc_cluster_create(cf->base.heap, a), GC_OK);
    uint32_t before = gc_object_count(cf->base.heap);

    fix_collect(&cf->base);

    assert_int_equal(gc_object_count(cf->base.heap), before - 9);
    assert_int_equal(gc_cluster_count(cf->base.heap), 0);
}

static void test_a_mutable_object_turned_garbage_dissolves_the_cluster_after_the_mark(void **state)
{
    cl_fixture *cf = *state;
    component *c[5];
    actor *a = make_actor(cf, "Pawn", 5, GC_CREATE_ROOT, c);
    node *outside = fix_node(&cf->base, NULL, NULL, 77, 0);
    c[3]->other = outside;
    assert_int_equal(gc_cluster_create(cf->base.heap, a), GC_OK);
    gc_weak w = gc_weak_make(cf->base.heap, outside);

    gc_object_mark_garbage(cf->base.heap, outside);
    fix_collect(&cf->base);
    assert_int_equal(gc_cluster_count(cf->base.heap), 0);
    assert_true(fix_alive(&cf->base, w)); /* kept by the cluster's record this once */

    fix_collect(&cf->base);
    assert_null(c[3]->other);
    assert_false(fix_alive(&cf->base, w));
}

static void test_disabling_clusters_dissolves_all_and_creates_none(void **state)
{
    cl_fixture *cf = *state;
    actor *a = make_actor(cf, "A", 5, GC_CREATE_ROOT, NULL);
    actor *b = make_actor(cf, "B", 5, GC_CREATE_ROOT, NULL);
    assert_int_equal(gc_cluster_create(cf->base.heap, a), GC_OK);
    gc_settings s = *gc_heap_settings(cf->base.heap);
    s.create_clusters = false;
    gc_heap_configure(cf->base.heap, &s);

    assert_int_equal(gc_cluster_create(cf->base.heap, b), GC_E_STATE);
    fix_collect(&cf->base);

    assert_int_equal(gc_cluster_count(cf->base.heap), 0);
    assert_false(gc_object_in_cluster(a));
}

/* Incremental marking in slices of about 64 objects, and a clustered actor reachable only
 * from the far end of a 600-node chain hanging off a root: the first slice will not reach it.
 * Returns the actor; *out_root, *out_last and c[] get the root, the chain's end, the parts. */
static actor *actor_at_the_end_of_a_chain(cl_fixture *cf, node **out_root, node **out_last,
                                          component **c)
{
    gc_settings s = *gc_heap_settings(cf->base.heap);
    s.allow_incremental_reachability = true;
    s.incremental_reachability_time_limit = 1.5;
    s.num_workers = 1;
    gc_heap_configure(cf->base.heap, &s);
    cf->base.clock.step_per_read = 1.0;
    node *root = fix_node(&cf->base, NULL, NULL, 0, GC_CREATE_ROOT);
    node *prev = root;
    for (int i = 0; i < 600; i++) {
        node *n = fix_node(&cf->base, NULL, NULL, i + 1, 0);
        prev->a = n;
        prev = n;
    }
    actor *a = make_actor(cf, "Pawn", 5, 0, c);
    prev->b = a;
    assert_int_equal(gc_cluster_create(cf->base.heap, a), GC_OK);
    *out_root = root;
    *out_last = prev;
    return a;
}

static void test_the_barrier_reaching_a_member_marks_the_whole_cluster(void **state)
{
    cl_fixture *cf = *state;
    node *root, *last;
    component *c[5];
    actor *a = actor_at_the_end_of_a_chain(cf, &root, &last, c);
    gc_weak w = gc_weak_make(cf->base.heap, c[4]);
    assert_int_equal(gc_collect(cf->base.heap, 0, false), GC_OK);

    gc_store(cf->base.heap, &root->b, c[4]);
    last->b = NULL;
    while (!gc_incremental_reachability_step(cf->base.heap))
        ;
    assert_true(gc_incremental_purge(cf->base.heap, 0));

    assert_true(fix_alive(&cf->base, w));
    assert_true(gc_object_is_valid(a));
}

/* A cluster root the barrier reached stays alive even if its cluster dissolves before the
 * next slice marks the cluster. */
static void test_a_root_stored_behind_the_marker_survives_its_cluster_dissolving(void **state)
{
    cl_fixture *cf = *state;
    node *root, *last;
    component *c[5];
    actor *a = actor_at_the_end_of_a_chain(cf, &root, &last, c);
    gc_weak wa = gc_weak_make(cf->base.heap, a);
    assert_int_equal(gc_collect(cf->base.heap, 0, false), GC_OK);
    assert_true(gc_is_incremental_reachability_pending(cf->base.heap));

    /* Between slices: move the only reference to the actor into the (scanned) root. */
    gc_store(cf->base.heap, &root->b, a);
    last->b = NULL;
    /* The actor drops its components and one of them is destroyed: the cluster dissolves. */
    a->components.count = 0;
    assert_int_equal(gc_object_mark_garbage(cf->base.heap, c[0]), GC_OK);
    assert_int_equal(gc_cluster_count(cf->base.heap), 0);

    while (!gc_incremental_reachability_step(cf->base.heap))
        ;
    assert_true(gc_incremental_purge(cf->base.heap, 0));
    assert_ptr_equal(root->b, a);
    assert_true(fix_alive(&cf->base, wa)); /* root->b still points at it */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_cluster_gathers_the_objects_its_root_owns, cl_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_cluster_smaller_than_the_minimum_is_not_created, cl_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_only_cluster_root_classes_can_root_a_cluster, cl_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_reachable_cluster_marks_its_members_without_scanning_them, cl_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_objects_members_reference_outside_are_kept_as_mutable_objects, cl_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_reference_stored_into_a_member_later_is_recorded, cl_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_reference_stored_into_the_root_later_is_recorded, cl_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_cluster_keeps_the_clusters_its_members_reference, cl_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_rooted_member_keeps_its_cluster, cl_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_garbage_root_dissolves_its_cluster_and_members_are_judged_alone, cl_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_destroying_a_member_dissolves_its_cluster, cl_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_an_unreachable_cluster_is_collected_whole, cl_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_mutable_object_turned_garbage_dissolves_the_cluster_after_the_mark, cl_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_disabling_clusters_dissolves_all_and_creates_none, cl_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_the_barrier_reaching_a_member_marks_the_whole_cluster, cl_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_root_stored_behind_the_marker_survives_its_cluster_dissolving, cl_setup, fix_teardown),
    };
    return cmocka_run_group_tests_name("gc_cluster", tests, NULL, NULL);
}
