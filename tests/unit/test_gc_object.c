/* Objects: creation, outers, names, paths, lookup; class and outer keep-alive. */
#include "gc_fixture.h"

static void test_an_object_has_a_dotted_path_through_its_outers(void **state)
{
    fixture *f = *state;
    node *world = fix_node(f, NULL, "World0", 0, GC_CREATE_ROOT);
    node *level = fix_node(f, world, "Level0", 1, 0);
    node *pawn = fix_node(f, level, "Pawn_12", 2, 0);
    char path[128];

    size_t len = gc_object_path(f->heap, pawn, path, sizeof path);

    assert_string_equal(path, "World0.Level0.Pawn_12");
    assert_int_equal(len, strlen("World0.Level0.Pawn_12"));
    assert_ptr_equal(gc_object_outer(f->heap, pawn), level);
    assert_string_equal(gc_object_name(f->heap, pawn), "Pawn_12");
}

static void test_a_path_that_does_not_fit_is_truncated_and_its_length_reported(void **state)
{
    fixture *f = *state;
    node *world = fix_node(f, NULL, "World0", 0, GC_CREATE_ROOT);
    node *level = fix_node(f, world, "Level0", 1, 0);
    char path[8];

    size_t len = gc_object_path(f->heap, level, path, sizeof path);

    assert_int_equal(len, strlen("World0.Level0"));
    assert_string_equal(path, "World0.");
}

static void test_an_object_is_found_by_its_path(void **state)
{
    fixture *f = *state;
    node *world = fix_node(f, NULL, "World0", 0, GC_CREATE_ROOT);
    node *level = fix_node(f, world, "Level0", 1, 0);
    world->a = level;
    node *pawn = fix_node(f, level, "Pawn_12", 2, 0);
    level->a = pawn;

    assert_ptr_equal(gc_object_find(f->heap, "World0.Level0.Pawn_12"), pawn);
    assert_ptr_equal(gc_object_find(f->heap, "World0"), world);
    assert_null(gc_object_find(f->heap, "World0.Pawn_12"));
    assert_null(gc_object_find(f->heap, "World0.Level0."));
    assert_null(gc_object_find(f->heap, ""));
}

static void test_an_unhashed_object_is_no_longer_found(void **state)
{
    fixture *f = *state;
    node *world = fix_node(f, NULL, "World0", 0, GC_CREATE_ROOT);
    fix_node(f, world, "Gone", 1, 0);
    assert_non_null(gc_object_find(f->heap, "World0.Gone"));

    fix_collect(f);

    assert_null(gc_object_find(f->heap, "World0.Gone"));
}

static void test_two_live_objects_cannot_share_a_name_under_one_outer(void **state)
{
    fixture *f = *state;
    node *world = fix_node(f, NULL, "World0", 0, GC_CREATE_ROOT);
    node *first = fix_node(f, world, "Thing", 1, 0);
    world->a = first;
    void *second = NULL;

    gc_result r = gc_object_create(f->heap, f->node_class, world, "Thing", 0, &second);

    assert_int_equal(r, GC_E_EXISTS);
    assert_null(second);
    fix_node(f, first, "Thing", 2, 0); /* the same name under another outer is fine */
}

static void test_a_garbage_object_gives_its_name_up_to_a_new_one(void **state)
{
    fixture *f = *state;
    node *world = fix_node(f, NULL, "World0", 0, GC_CREATE_ROOT);
    node *old = fix_node(f, world, "Pawn", 1, 0);
    world->a = old;
    assert_int_equal(gc_object_mark_garbage(f->heap, old), GC_OK);

    node *fresh = fix_node(f, world, "Pawn", 2, 0);

    assert_ptr_equal(gc_object_find(f->heap, "World0.Pawn"), fresh);
}

static void test_an_object_keeps_its_outer_alive(void **state)
{
    fixture *f = *state;
    node *level = fix_node(f, NULL, "Level0", 0, 0);
    node *actor = fix_node(f, level, "Actor", 1, GC_CREATE_ROOT);
    gc_weak level_w = gc_weak_make(f->heap, level);

    fix_collect(f);

    assert_ptr_equal(gc_weak_get(f->heap, level_w), level);
    assert_int_equal(gc_root_remove(f->heap, actor), GC_OK);
    fix_collect(f);
    assert_null(gc_weak_get(f->heap, level_w));
}

static void test_an_object_keeps_its_class_alive(void **state)
{
    fixture *f = *state;
    gc_class_desc d = { .name = "Transient", .size = 16 };
    gc_class *cls;
    assert_int_equal(gc_class_register(f->heap, &d, &cls), GC_OK);
    assert_int_equal(gc_root_remove(f->heap, gc_class_object(cls)), GC_OK);
    void *obj;
    assert_int_equal(gc_object_create(f->heap, cls, NULL, NULL, GC_CREATE_ROOT, &obj), GC_OK);

    fix_collect(f);

    assert_ptr_equal(gc_class_find(f->heap, "Transient"), cls);
    assert_ptr_equal(gc_object_class(f->heap, obj), cls);
    assert_int_equal(gc_root_remove(f->heap, obj), GC_OK);
    fix_collect(f);
    assert_null(gc_class_find(f->heap, "Transient"));
}

static void test_an_anonymous_object_path_names_its_class_and_index(void **state)
{
    fixture *f = *state;
    node *n = fix_node(f, NULL, NULL, 0, GC_CREATE_ROOT);
    char path[64], expected[64];
    snprintf(expected, sizeof expected, "Node#%u", gc_object_index(n));

    gc_object_path(f->heap, n, path, sizeof path);

    assert_string_equal(path, expected);
    assert_null(gc_object_name(f->heap, n));
}

static void test_names_with_dots_are_refused(void **state)
{
    fixture *f = *state;
    void *obj = NULL;
    assert_int_equal(gc_object_create(f->heap, f->node_class, NULL, "a.b", 0, &obj), GC_E_INVALID);
    assert_int_equal(gc_object_create(f->heap, f->node_class, NULL, "", 0, &obj), GC_E_INVALID);
    assert_null(obj);
}


static void test_a_renamed_object_is_found_by_its_new_path_only(void **state)
{
    fixture *f = *state;
    node *world = fix_node(f, NULL, "World0", 0, GC_CREATE_ROOT);
    node *level = fix_node(f, world, "Level0", 1, 0);
    world->a = level;

    assert_int_equal(gc_object_rename(f->heap, world, NULL, "World0_Leaked_1"), GC_OK);

    assert_ptr_equal(gc_object_find(f->heap, "World0_Leaked_1.Level0"), level);
    assert_null(gc_object_find(f->heap, "World0"));
}

static void test_an_object_moved_to_a_new_outer_takes_its_path_and_keeps_it_alive(void **state)
{
    fixture *f = *state;
    node *old_world = fix_node(f, NULL, "World0", 0, GC_CREATE_ROOT);
    node *new_world = fix_node(f, NULL, "World1", 1, GC_CREATE_ROOT);
    node *pc = fix_node(f, old_world, "PlayerController_3", 2, GC_CREATE_ROOT);
    char path[64];

    assert_int_equal(gc_object_rename(f->heap, pc, new_world, NULL), GC_OK);
    gc_root_remove(f->heap, old_world);
    fix_collect(f);

    gc_object_path(f->heap, pc, path, sizeof path);
    assert_string_equal(path, "World1.PlayerController_3");
    assert_ptr_equal(gc_object_outer(f->heap, pc), new_world);
    assert_null(gc_object_find(f->heap, "World0"));
}

static void test_a_rename_onto_a_live_path_is_refused_and_changes_nothing(void **state)
{
    fixture *f = *state;
    node *a = fix_node(f, NULL, "A", 0, GC_CREATE_ROOT);
    node *b = fix_node(f, NULL, "B", 1, GC_CREATE_ROOT);

    assert_int_equal(gc_object_rename(f->heap, b, NULL, "A"), GC_E_EXISTS);
    assert_int_equal(gc_object_rename(f->heap, a, a, NULL), GC_E_INVALID);
    assert_int_equal(gc_object_rename(f->heap, a, NULL, "A.B"), GC_E_INVALID);

    assert_ptr_equal(gc_object_find(f->heap, "A"), a);
    assert_ptr_equal(gc_object_find(f->heap, "B"), b);
}

static void test_a_garbage_object_gives_its_path_up_to_a_rename(void **state)
{
    fixture *f = *state;
    node *old = fix_node(f, NULL, "World0", 0, 0);
    node *fresh = fix_node(f, NULL, "World0_new", 1, GC_CREATE_ROOT);

    assert_int_equal(gc_object_mark_garbage(f->heap, old), GC_OK);

    assert_int_equal(gc_object_rename(f->heap, fresh, NULL, "World0"), GC_OK);

    assert_ptr_equal(gc_object_find(f->heap, "World0"), fresh);
    assert_null(gc_object_name(f->heap, old));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_an_object_has_a_dotted_path_through_its_outers, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_path_that_does_not_fit_is_truncated_and_its_length_reported, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_an_object_is_found_by_its_path, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_an_unhashed_object_is_no_longer_found, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_two_live_objects_cannot_share_a_name_under_one_outer, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_garbage_object_gives_its_name_up_to_a_new_one, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_an_object_keeps_its_outer_alive, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_an_object_keeps_its_class_alive, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_an_anonymous_object_path_names_its_class_and_index, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_names_with_dots_are_refused, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_renamed_object_is_found_by_its_new_path_only, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_an_object_moved_to_a_new_outer_takes_its_path_and_keeps_it_alive, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_rename_onto_a_live_path_is_refused_and_changes_nothing, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_garbage_object_gives_its_path_up_to_a_rename, fix_setup, fix_teardown),
    };
    return cmocka_run_group_tests_name("gc_object", tests, NULL, NULL);
}
