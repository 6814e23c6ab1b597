/* Classes and their compiled reference schemas. */
#include "gc_fixture.h"

typedef struct pair {
    void *key;
    int weight;
    void *value;
} pair;

static const gc_member pair_members[] = {
    GC_REF(pair, key),
    GC_REF(pair, value),
    GC_MEMBERS_END,
};

typedef struct holder {
    node base;               /* a subclass of Node */
    gc_struct_array pairs;   /* of pair */
    struct { void *target; } custom;
    void *aro_target;
} holder;

static void custom_add_refs(void *data, gc_collector *c)
{
    gc_collector_add_ref(c, &((struct { void *target; } *)data)->target);
}

static void holder_add_refs(void *obj, gc_collector *c)
{
    gc_collector_add_ref(c, &((holder *)obj)->aro_target);
}

static void holder_destructor(void *obj)
{
    gc_struct_array_free(&((holder *)obj)->pairs);
    node_destructor(obj);
}

static gc_class *register_holder(fixture *f)
{
    static const gc_member members[] = {
        GC_STRUCT_ARRAY(holder, pairs, pair, pair_members),
        GC_STRUCT_ARO(holder, custom, custom_add_refs),
        GC_MEMBERS_END,
    };
    gc_class_desc d = { 0 };
    d.name = "Holder";
    d.size = sizeof(holder);
    d.super = f->node_class;
    d.members = members;
    d.add_referenced_objects = holder_add_refs;
    d.hooks.destructor = holder_destructor;
    gc_class *cls;
    assert_int_equal(gc_class_register(f->heap, &d, &cls), GC_OK);
    return cls;
}

static holder *make_holder(fixture *f, gc_class *cls)
{
    void *obj;
    assert_int_equal(gc_object_create(f->heap, cls, NULL, NULL, GC_CREATE_ROOT, &obj), GC_OK);
    return obj;
}

static void test_a_subclass_schema_starts_with_its_super_schema(void **state)
{
    fixture *f = *state;
    gc_class *cls = register_holder(f);

    /* Node: a, b, arr; Holder: pairs, custom, then its class-level callback. */
    assert_int_equal(gc_class_schema_length(f->node_class), 3);
    assert_int_equal(gc_class_schema_length(cls), 6);
    assert_true(gc_class_is_child_of(cls, f->node_class));
    assert_false(gc_class_is_child_of(f->node_class, cls));
}

static void test_every_member_kind_keeps_its_target_alive(void **state)
{
    fixture *f = *state;
    gc_class *cls = register_holder(f);
    holder *h = make_holder(f, cls);
    node *via_super = fix_node(f, NULL, NULL, 1, 0);
    node *via_array = fix_node(f, NULL, NULL, 2, 0);
    node *via_struct_key = fix_node(f, NULL, NULL, 3, 0);
    node *via_struct_value = fix_node(f, NULL, NULL, 4, 0);
    node *via_struct_aro = fix_node(f, NULL, NULL, 5, 0);
    node *via_class_aro = fix_node(f, NULL, NULL, 6, 0);
    node *unreferenced = fix_node(f, NULL, NULL, 7, 0);
    h->base.a = via_super;
    gc_ref_array_push(&h->base.arr, via_array);
    pair *p;
    assert_int_equal(gc_struct_array_push(&h->pairs, sizeof(pair), (void **)&p), GC_OK);
    p->key = via_struct_key;
    p->value = via_struct_value;
    h->custom.target = via_struct_aro;
    h->aro_target = via_class_aro;
    gc_weak w[7];
    node *all[7] = { via_super, via_array, via_struct_key, via_struct_value, via_struct_aro,
                     via_class_aro, unreferenced };
    for (int i = 0; i < 7; i++)
        w[i] = gc_weak_make(f->heap, all[i]);

    fix_collect(f);

    for (int i = 0; i < 6; i++)
        assert_true(fix_alive(f, w[i]));
    assert_false(fix_alive(f, w[6]));
}

static void test_a_class_is_found_by_name(void **state)
{
    fixture *f = *state;
    assert_ptr_equal(gc_class_find(f->heap, "Node"), f->node_class);
    assert_string_equal(gc_class_name(f->node_class), "Node");
    assert_null(gc_class_find(f->heap, "Missing"));
}

static void test_a_member_outside_the_instance_is_refused(void **state)
{
    fixture *f = *state;
    static const gc_member bad[] = {
        { GC_MEMBER_REF, "past_end", 64, sizeof(void *), 0, NULL, NULL },
        GC_MEMBERS_END,
    };
    gc_class_desc d = { .name = "Bad", .size = 64, .members = bad };
    gc_class *cls = NULL;

    assert_int_equal(gc_class_register(f->heap, &d, &cls), GC_E_SCHEMA);
    assert_null(cls);
    assert_null(gc_class_find(f->heap, "Bad"));
}

static void test_an_inner_member_outside_the_element_is_refused(void **state)
{
    fixture *f = *state;
    static const gc_member inner[] = {
        { GC_MEMBER_REF, "past_stride", 16, sizeof(void *), 0, NULL, NULL },
        GC_MEMBERS_END,
    };
    static const gc_member outer[] = {
        { GC_MEMBER_STRUCT_ARRAY, "items", 0, sizeof(gc_struct_array), 16, inner, NULL },
        GC_MEMBERS_END,
    };
    gc_class_desc d = { .name = "BadInner", .size = 64, .members = outer };
    gc_class *cls = NULL;

    assert_int_equal(gc_class_register(f->heap, &d, &cls), GC_E_SCHEMA);
}

static void test_a_misaligned_member_is_refused(void **state)
{
    fixture *f = *state;
    static const gc_member bad[] = {
        { GC_MEMBER_REF, "odd", 3, sizeof(void *), 0, NULL, NULL },
        GC_MEMBERS_END,
    };
    gc_class_desc d = { .name = "Odd", .size = 64, .members = bad };
    gc_class *cls = NULL;
    assert_int_equal(gc_class_register(f->heap, &d, &cls), GC_E_SCHEMA);
}

static void test_a_subclass_smaller_than_its_super_is_refused(void **state)
{
    fixture *f = *state;
    gc_class_desc d = { .name = "Tiny", .size = 4, .super = f->node_class };
    gc_class *cls = NULL;
    assert_int_equal(gc_class_register(f->heap, &d, &cls), GC_E_SCHEMA);
}

static void test_a_duplicate_class_name_is_refused(void **state)
{
    fixture *f = *state;
    gc_class_desc d = { .name = "Node", .size = 8 };
    gc_class *cls = NULL;
    assert_int_equal(gc_class_register(f->heap, &d, &cls), GC_E_EXISTS);
}

static void test_hooks_are_inherited_from_the_super_class(void **state)
{
    fixture *f = *state;
    gc_class_desc d = { .name = "Leaf", .size = sizeof(node), .super = f->node_class };
    gc_class *cls;
    assert_int_equal(gc_class_register(f->heap, &d, &cls), GC_OK);
    void *obj;
    assert_int_equal(gc_object_create(f->heap, cls, NULL, NULL, 0, &obj), GC_OK);
    ((node *)obj)->id = 42;

    fix_collect(f);

    assert_true(fix_log_find(f, "begin:42") >= 0);
    assert_true(fix_log_find(f, "finish:42") >= 0);
    assert_true(fix_log_find(f, "free:42") >= 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_subclass_schema_starts_with_its_super_schema, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_every_member_kind_keeps_its_target_alive, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_class_is_found_by_name, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_member_outside_the_instance_is_refused, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_an_inner_member_outside_the_element_is_refused, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_misaligned_member_is_refused, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_subclass_smaller_than_its_super_is_refused, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_a_duplicate_class_name_is_refused, fix_setup, fix_teardown),
        cmocka_unit_test_setup_teardown(test_hooks_are_inherited_from_the_super_class, fix_setup, fix_teardown),
    };
    return cmocka_run_group_tests_name("gc_class", tests, NULL, NULL);
}
