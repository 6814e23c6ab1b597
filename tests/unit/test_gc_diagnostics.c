/* Diagnostics: history, reference chains, garbage references, assumption checks. */
#include "gc_fixture.h"

typedef struct lines {
    char text[16][512];
    int count;
} lines;

static void collect_line(const char *line, void *userdata)
{
    lines *l = userdata;
    if (l->count < 16)
        snprintf(l->text[l->count++], sizeof l->text[0], "%s", line);
}

static bool any_line_contains(const lines *l, const char *needle)
{
    for (int i = 0; i < l->count; i++)
        if (strstr(l->text[i], needle))
            return true;
    return false;
}

static void set_settings(fixture *f, void (*edit)(gc_settings *))
{
    gc_settings s = *gc_heap_settings(f->heap);
    edit(&s);
    assert_int_equal(gc_heap_configure(f->heap, &s), GC_OK);
}

static void history_two(gc_settings *s) { s->history_size = 2; }
static void track_garbage(gc_settings *s) { s->garbage_reference_tracking = true; }
static void verify_on(gc_settings *s) { s->verify_assumptions = true; }

static void test_history_tells_which_object_first_reached_another(void **state)
{
    fixture *f = *state;
    set_settings(f, history_two);
    node *world = fix_node(f, NULL, "World", 0, GC_CREATE_ROOT);
    node *level = fix_node(f, world, "Level", 1, 0);
    world->b = level;
    lines l = { .count = 0 };

    fix_collect(f);

    assert_int_equal(gc_history_describe(f->heap, 0, level, collect_line, &l), GC_OK);
    assert_true(any_line_contains(&l, "World.Level first reached from World [b]"));
    l.count = 0;
    assert_int_equal(gc_history_describe(f->heap, 0, world, collect_line, &l), GC_OK);
    assert_true(any_line_contains(&l, "from (root) [root set]"));
}

static void test_history_keeps_only_the_last_n_collections(void **state)
{
    fixture *f = *state;
    set_settings(f, history_two);
    node *root = fix_node(f, NULL, "Root", 0, GC_CREATE_ROOT);
    lines l = { .count = 0 };

    fix_collect(f);
    fix_collect(f);
    fix_collect(f);

    assert_int_equal(gc_history_describe(f->heap, 0, root, collect_line, &l), GC_OK);
    assert_int_equal(gc_history_describe(f->heap, 1, root, collect_line, &l), GC_OK);
    assert_int_equal(gc_history_describe(f->heap, 2, root, collect_line, &l), GC_E_NOT_FOUND);
    assert_true(any_line_contains(&l, "collection 3:"));
    assert_true(any_line_contains(&l, "collection 2:"));
}

static void test_the_reference_chain_is_the_shortest_path_from_a_root(void **state)
{
    fixture *f = *state;
    node *world = fix_node(f, NULL, "World", 0, GC_CREATE_ROOT);
    node *level = fix_node(f, world, "Level", 1, 0);
    node *pawn = fix_node(f, level, "Pawn", 2, 0);
    node *detour = fix_node(f, NULL, "Detour", 3, 0);
    world->a = detour;
    detour->a = level;     /* World -> Detour -> Level: one hop longer ... */
    world->b = level;      /* ... than World -> Level */
    gc_ref_array_push(&level->arr, pawn);
    lines l = { .count = 0 };

    assert_int_equal(gc_reference_chain(f->heap, pawn, collect_line, &l), GC_OK);

    assert_int_equal(l.count, 3);
    assert_string_equal(l.text[0], "World (root set)");
    assert_string_equal(l.text[1], "  -> World.Level [b]");
    assert_string_equal(l.text[2], "  -> World.Level.Pawn [arr]");
}

static void test_an_object_nothing_keeps_has_no_chain(void **state)
{
    fixture *f = *state;
    node *stray = fix_node(f, NULL, "Stray", 0, 0);
    lines l = { .count = 0 };

    assert_int_equal(gc_reference_chain(f->heap, stray, collect_line, &l), GC_E_NOT_FOUND);
    assert_int_equal(l.count, 0);
}

static void test_garbage_reference_tracking_reports_the_nulled_reference(void **state)
{
    fixture *f = *state;
    set_settings(f, track_garbage);
    lines sink = { .count = 0 };
    gc_heap_set_diagnostics(f->heap, collect_line, &sink);
    node *world = fix_node(f, NULL, "World", 0, GC_CREATE_ROOT);
    node *doomed = fix_node(f, world, "Doomed", 1, 0);
    world->a = doomed;
    gc_object_mark_garbage(f->heap, doomed);
    lines l = { .count = 0 };

    fix_collect(f);

    assert_int_equal(gc_garbage_references(f->heap, collect_line, &l), 1);
    assert_string_equal(l.text[0], "World [a] referenced garbage World.Doomed (reference nulled)");
    assert_true(any_line_contains(&sink, "World.Doomed"));
    gc_stats st;
    gc_stats_get(f->heap, &st);
    assert_int_equal(st.garbage_references, 1);
}

static void test_a_clean_heap_passes_the_assumption_checks(void **state)
{
    fixture *f = *state;
    node *world = fix_node(f, NULL, "World", 0, GC_CREATE_ROOT);
    world->a = fix_node(f, world, "Level", 1, 0);
    assert_int_equal(gc_verify_assumptions(f->heap, NULL, NULL), 0);
}

static void test_verify_catches_a_permanent_object_referencing_a_collectable_one(void **state)
{
    (void)state;
    gc_heap *heap;
    assert_int_equal(gc_heap_create(NULL, &heap), GC_OK);
    gc_disregard_open(heap);
    gc_class_desc d = { .name = "Node", .size = sizeof(node), .members = node_members };
    d.hooks.destructor = node_destructor;
    gc_class *cls;
    assert_int_equal(gc_class_register(heap, &d, &cls), GC_OK);
    node *engine;
    gc_object_create(heap, cls, NULL, "Engine", 0, (void **)&engine);
    gc_disregard_close(heap);
    node *world;
    gc_object_create(heap, cls, NULL, "World", GC_CREATE_ROOT, (void **)&world);
    engine->a = world; /* planted: marking never scans permanent objects */
    lines l = { .count = 0 };

    assert_int_equal(gc_verify_assumptions(heap, collect_line, &l), 1);
    assert_true(any_line_contains(&l, "permanent object references a collectable object: Engine [a] -> World"));
    gc_heap_destroy(heap);
}

static void test_verify_catches_contradictory_flags(void **state)
{
    fixture *f = *state;
    node *n = fix_node(f, NULL, "Odd", 0, GC_CREATE_ROOT);
    gc_testing_force_flag(f->heap, n, "garbage", true);
    lines l = { .count = 0 };

    assert_true(gc_verify_assumptions(f->heap, collect_line, &l) >= 1);
    assert_true(any_line_contains(&l, "object is both rooted and garbage: Odd"));
    gc_testing_force_flag(f->heap, n, "garbage", false);
}

typedef struct holder {
    gc_ref_array parts;
    void *other;
} holder;

static void holder_destructor(void *obj)
{
    gc_ref_array_free(&((holder *)obj)->parts);
}

static void test_verify_catches_a_cluster_member_reference_the_cluster_does_not_know(void **state)
{
    fixture *f = *state;
    static const gc_member members[] = { GC_REF_ARRAY(holder, parts), GC_REF(holder, other),
                                         GC_MEMBERS_END };
    gc_class_desc rd = { .name = "Root", .size = sizeof(holder), .members = members,
                         .flags = GC_CLASS_CLUSTER_ROOT, .hooks.destructor = holder_destructor };
    gc_class_desc pd = { .name = "Part", .size = sizeof(holder), .members = members,
                         .flags = GC_CLASS_CAN_BE_IN_CLUSTER };
    gc_class *rc, *pc;
    assert_int_equal(gc_class_register(f->heap, &rd, &rc), GC_OK);
    assert_int_equal(gc_class_register(f->heap, &pd, &pc), GC_OK);
    holder *root;
    gc_object_create(f->heap, rc, NULL, "Root", GC_CREATE_ROOT, (void **)&root);
    holder *parts[5];
    for (int i = 0; i < 5; i++) {
        gc_object_create(f->heap, pc, root, NULL, 0, (void **)&parts[i]);
        gc_ref_array_push(&root->parts, parts[i]);
    }
    assert_int_equal(gc_cluster_create(f->heap, root), GC_OK);
    assert_int_equal(gc_verify_assumptions(f->heap, NULL, NULL), 0);
    node *stranger = fix_node(f, NULL, "Stranger", 9, GC_CREATE_ROOT);
    parts[2]->other = stranger; /* planted: not recorded with gc_object_store */
    lines l = { .count = 0 };
    set_settings(f, verify_on);
    gc_heap_set_diagnostics(f->heap, collect_line, &l);

    fix_collect(f);

    gc_stats st;
    gc_stats_get(f->heap, &st);
    assert_int_equal(st.assumption_violations, 1);
    assert_true(any_line_contains(&l, "cluster member references an object its cluster does not know"));
    assert_true(any_line_contains(&l, "-> Stranger"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_history_tells_which_object_first_reached_another, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_history_keeps_only_the_last_n_collections, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_the_reference_chain_is_the_shortest_path_from_a_root, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_an_object_nothing_keeps_has_no_chain, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_garbage_reference_tracking_reports_the_nulled_reference, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_clean_heap_passes_the_assumption_checks, fix_setup, fix_teardown),
        cmocka_unit_test(test_verify_catches_a_permanent_object_referencing_a_collectable_one),
        cmocka_unit_test_setup_teardown(test_verify_catches_contradictory_flags, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_verify_catches_a_cluster_member_reference_the_cluster_does_not_know, fix_setup, fix_teardown),
    };
    return cmocka_run_group_tests_name("gc_diagnostics", tests, NULL, NULL);
}
