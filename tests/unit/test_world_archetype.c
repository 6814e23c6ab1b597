/*
 * test_world_archetype.c - a world profile compiled into collected classes: what a spawn
 * creates, that the collector finds every reference slot the schema names, that cycles are
 * collected, weak references cleared, clusters made, lifetimes kept, and that a name taken by
 * a built-in class is an error naming the file and line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "world_fixture.h"

typedef struct fixture {
    gc_heap *heap;
    world_env env;
    world *w;
    player_controller *pc;
    world_profile profile;
    char err[512];
} fixture;

/* A heap with the server's classes and those of `text`, World0 and one player. */
static void fixture_open(fixture *fx, const char *text)
{
    assert_int_equal(gc_heap_create(NULL, &fx->heap), GC_OK);
    world_env_init(&fx->env, fx->heap);
    assert_int_equal(gc_disregard_open(fx->heap), GC_OK);
    assert_int_equal(world_classes_register(fx->heap, &fx->env.classes), GC_OK);
    if (!world_profile_parse(&fx->profile, "t.ini", text, fx->err, sizeof fx->err))
        fail_msg("%s", fx->err);
    if (!world_archetypes_compile(&fx->env, &fx->profile, "t.ini", fx->err, sizeof fx->err))
        fail_msg("%s", fx->err);
    assert_int_equal(gc_disregard_close(fx->heap), GC_OK);
    assert_int_equal(world_create(&fx->env, 0, &fx->w), GC_OK);
    assert_int_equal(actor_spawn_player(fx->w, 1, "p1", &fx->pc), GC_OK);
}

static void fixture_close(fixture *fx)
{
    world_archetypes_free(&fx->env);
    world_fixture_close(fx->heap);
}

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);

    assert_non_null(fx);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;

    fixture_close(fx);
    free(fx);
    return 0;
}

static uint32_t index_of(fixture *fx, const char *name)
{
    int i = world_archetype_find(&fx->env, name);

    assert_true(i >= 0);
    return (uint32_t)i;
}

static actor *spawn(fixture *fx, const char *name)
{
    actor *a = NULL;

    assert_int_equal(actor_spawn_archetype(fx->w, index_of(fx, name), fx->pc, &a), GC_OK);
    assert_non_null(a);
    return a;
}

/* The i-th strong reference slot of an object of archetype `name` (its actor). */
static void **slot(fixture *fx, const char *name, void *obj, uint32_t i)
{
    const world_archetype *arch = &fx->env.archetypes[index_of(fx, name)];

    assert_true(i < arch->strong);
    return (void **)((char *)obj + arch->refs_offset) + i;
}

static gc_weak *weak_slot(fixture *fx, const char *name, void *obj, uint32_t i)
{
    const world_archetype *arch = &fx->env.archetypes[index_of(fx, name)];

    assert_true(i < arch->weak);
    return (gc_weak *)((char *)obj + arch->weak_offset) + i;
}

static void collect(fixture *fx)
{
    assert_int_equal(gc_collect(fx->heap, 0, true), GC_OK);
}

static const char shooter[] =
    "[archetype Attachment]\nbase = component\nrefs = owner, siblings\npayload = 64\n"
    "[archetype Ammo]\ncomponents = 1\nrefs = owner\npayload = 32\nreplicated = no\n"
    "[archetype Weapon]\ncomponents = 1\nchildren = Attachment:4, Ammo:2\n"
    "refs = owner, siblings, level\npayload = 256\ncluster = yes\n";

static void test_each_archetype_becomes_a_class_named_after_it(void **state)
{
    fixture *fx = *state;

    fixture_open(fx, shooter);
    assert_non_null(gc_class_find(fx->heap, "Weapon"));
    assert_non_null(gc_class_find(fx->heap, "WeaponPart"));
    assert_non_null(gc_class_find(fx->heap, "Attachment"));
    assert_true(gc_class_is_child_of(fx->env.archetypes[index_of(fx, "Ammo")].cls,
                                     fx->env.classes.actor));
    /* Every slot is in the schema: Weapon has three strong terms. */
    assert_int_equal(fx->env.archetypes[index_of(fx, "Weapon")].strong, 3);
}

static void test_a_spawn_creates_the_actor_its_parts_and_its_children(void **state)
{
    fixture *fx = *state;
    uint32_t before;
    archetype_actor *weapon;

    fixture_open(fx, shooter);
    before = gc_object_count(fx->heap);
    weapon = (archetype_actor *)spawn(fx, "Weapon");

    /* 1 weapon + 1 part + 4 attachments + 2 ammo with a part each */
    assert_int_equal(gc_object_count(fx->heap) - before, 1 + 1 + 4 + 2 * 2);
    assert_int_equal(gc_object_count(fx->heap) - before,
                     fx->profile.archetypes[index_of(fx, "Weapon")].objects);
    assert_int_equal(weapon->owns.count, 1 + 4 + 2);
    assert_int_equal(weapon->base.kind, ACTOR_KIND_ARCHETYPE);
    assert_int_equal(weapon->base.archetype, index_of(fx, "Weapon") + 1);
    assert_int_equal(actor_owned_count(fx->pc), 1);
    /* Its level slot, and its terms: owner, siblings (alone: none), level. */
    assert_ptr_equal(*slot(fx, "Weapon", weapon, 0), &fx->pc->base);
    assert_null(*slot(fx, "Weapon", weapon, 1));
    assert_ptr_equal(*slot(fx, "Weapon", weapon, 2), fx->w->persistent_level);
}

static void test_replicated_actors_of_a_spawn_are_queued_and_the_rest_are_not(void **state)
{
    fixture *fx = *state;

    fixture_open(fx, shooter);
    world_outbox_reset(fx->w);
    spawn(fx, "Weapon");

    /* The weapon replicates; its ammo does not; parts are never actors. */
    assert_int_equal(fx->w->spawned_count, 1);
}

static const char rack[] =
    "[archetype Hook]\nbase = component\nrefs = siblings\n"
    "[archetype Rack]\nchildren = Hook:3\n";

static void test_the_collector_follows_every_reference_slot(void **state)
{
    fixture *fx = *state;
    archetype_actor *r;
    archetype_part *first, *second;
    gc_weak second_h;

    fixture_open(fx, rack);
    r = (archetype_actor *)spawn(fx, "Rack");
    first = r->owns.data[0];
    second = r->owns.data[1];
    assert_ptr_equal(*slot(fx, "Hook", first, 0), second); /* siblings: the next */
    second_h = gc_weak_make(fx->heap, second);

    /* Given the second hook is held only by the first's sibling slot, it stays. */
    r->owns.data[1] = NULL;
    collect(fx);
    assert_non_null(gc_weak_get(fx->heap, second_h));

    /* When that slot lets go too, nothing holds it. */
    *slot(fx, "Hook", first, 0) = NULL;
    collect(fx);
    assert_null(gc_weak_get(fx->heap, second_h));
}

static const char deep[] =
    "[archetype Step]\ncomponents = 2\nrefs = siblings, earlier:1\nreplicated = no\n"
    "[archetype Chain]\nchildren = Step:50\nrefs = owner, earlier:1, level\n";

static void test_a_destroyed_spawn_full_of_cycles_is_collected_whole(void **state)
{
    fixture *fx = *state;
    uint32_t before;
    actor *chain;

    fixture_open(fx, deep);
    before = gc_object_count(fx->heap);
    chain = spawn(fx, "Chain");
    assert_int_equal(gc_object_count(fx->heap) - before, 1 + 50 * 3);

    /* Siblings make rings, owner and earlier point back: the graph is full of cycles. */
    actor_destroy(fx->w, chain);
    collect(fx);
    world_cleanup_actors(fx->w);
    assert_int_equal(gc_object_count(fx->heap), before);
    assert_int_equal(actor_owned_count(fx->pc), 0);
}

static void test_earlier_refers_to_the_object_created_just_before(void **state)
{
    fixture *fx = *state;
    archetype_actor *chain, *step0, *step1;

    fixture_open(fx, deep);
    chain = (archetype_actor *)spawn(fx, "Chain");
    step0 = chain->owns.data[0];
    step1 = chain->owns.data[1];

    /* Creation order: chain, step0, its 2 parts, step1...: step1's earlier is step0's part. */
    assert_ptr_equal(*slot(fx, "Step", step0, 1), chain);
    assert_ptr_equal(*slot(fx, "Step", step1, 1), step0->owns.data[1]);
    assert_ptr_equal(*slot(fx, "Step", step0, 0), step1); /* siblings: the next step */
}

static const char weak_profile[] =
    "[archetype Item]\nrefs = weak earlier:1\nreplicated = no\n"
    "[archetype Bag]\nchildren = Item:3\n";

static void test_a_weak_reference_is_cleared_when_its_target_goes(void **state)
{
    fixture *fx = *state;
    archetype_actor *bag, *item0, *item1;

    fixture_open(fx, weak_profile);
    bag = (archetype_actor *)spawn(fx, "Bag");
    item0 = bag->owns.data[0];
    item1 = bag->owns.data[1];
    assert_ptr_equal(gc_weak_get(fx->heap, *weak_slot(fx, "Item", item1, 0)), item0);

    /* A weak handle does not keep its target: with its owner's hold gone, item0 goes. */
    bag->owns.data[0] = NULL;
    collect(fx);
    assert_null(gc_weak_get(fx->heap, *weak_slot(fx, "Item", item1, 0)));
    assert_true(gc_weak_is_stale(fx->heap, *weak_slot(fx, "Item", item1, 0)));
    assert_true(gc_object_is_valid(item1));
}

static void test_a_cluster_archetype_roots_one_cluster_per_spawn(void **state)
{
    fixture *fx = *state;
    archetype_actor *weapon;
    uint32_t before;

    fixture_open(fx, shooter);
    before = gc_cluster_count(fx->heap);
    weapon = (archetype_actor *)spawn(fx, "Weapon");

    assert_int_equal(gc_cluster_count(fx->heap), before + 1);
    assert_true(gc_object_in_cluster(weapon));
    assert_true(gc_object_in_cluster(weapon->owns.data[6])); /* its last ammo */
    collect(fx);
    assert_true(gc_object_is_valid(weapon->owns.data[6]));
}

static const char lifetimes[] =
    "[archetype Flare]\nlifetime = 1.5\nmoves = yes\n"
    "[archetype House]\ncomponents = 2\nlifetime = persistent\n";

static void test_a_timed_archetype_is_destroyed_when_its_lifetime_runs_out(void **state)
{
    fixture *fx = *state;
    actor *flare;
    gc_weak h;

    fixture_open(fx, lifetimes);
    flare = spawn(fx, "Flare");
    h = gc_weak_make(fx->heap, flare);
    world_tick(fx->w, 1.0);
    assert_true(gc_object_is_valid(flare));
    assert_true(flare->move_serial > 0); /* moves = yes: it moved */

    world_tick(fx->w, 1.0);
    assert_true(gc_object_is_garbage(flare));
    collect(fx);
    assert_null(gc_weak_get(fx->heap, h));
}

static void test_a_persistent_archetype_outlives_its_player(void **state)
{
    fixture *fx = *state;
    archetype_actor *house;

    fixture_open(fx, lifetimes);
    house = (archetype_actor *)spawn(fx, "House");
    assert_int_equal(actor_owned_count(fx->pc), 0);
    assert_true(world_object_is_persistent(&fx->env, fx->heap, house->owns.data[1]));
    assert_false(world_object_is_persistent(&fx->env, fx->heap, fx->pc));

    /* It names its player but does not hold the controller, so the player can go. */
    assert_null(house->base.owner);
    assert_int_equal(house->base.owner_player_id, 1);
    gc_weak pc = gc_weak_make(fx->heap, fx->pc);
    actor_destroy(fx->w, &fx->pc->base);
    collect(fx);
    assert_true(gc_object_is_valid(house));
    assert_true(gc_object_is_valid(house->owns.data[1]));
    assert_null(gc_weak_get(fx->heap, pc));
}

static void test_the_census_counts_each_archetype_class_and_its_parts(void **state)
{
    fixture *fx = *state;
    uint32_t counts[2 * 3];
    uint32_t weapon = 0, ammo = 0, attachment = 0;

    fixture_open(fx, shooter);
    spawn(fx, "Weapon");
    spawn(fx, "Weapon");
    weapon = index_of(fx, "Weapon");
    ammo = index_of(fx, "Ammo");
    attachment = index_of(fx, "Attachment");

    world_archetype_census(&fx->env, fx->heap, counts);
    assert_int_equal(counts[2 * weapon], 2);
    assert_int_equal(counts[2 * weapon + 1], 2);     /* WeaponPart */
    assert_int_equal(counts[2 * ammo], 4);
    assert_int_equal(counts[2 * ammo + 1], 4);       /* AmmoPart */
    assert_int_equal(counts[2 * attachment], 8);
    assert_int_equal(counts[2 * attachment + 1], 0); /* a component has no parts' class */
}

static void test_an_archetype_named_like_a_built_in_class_is_an_error_naming_its_line(
    void **state)
{
    fixture *fx = *state;
    world_env env;

    (void)state;
    fixture_open(fx, shooter);
    world_env_init(&env, fx->heap);
    env.classes = fx->env.classes;
    assert_true(world_profile_parse(&fx->profile, "bad.ini",
                                    "; a comment\n[archetype Gun]\n\n[archetype Pawn]\n"
                                    "components = 1\n", fx->err, sizeof fx->err));
    assert_false(world_archetypes_compile(&env, &fx->profile, "bad.ini", fx->err,
                                          sizeof fx->err));
    assert_string_equal(fx->err, "bad.ini:4: [archetype Pawn]: the name is taken by a built-in "
                        "class or another archetype's class");
    assert_int_equal(env.n_archetypes, 0);
}

static void test_the_shipped_profiles_compile_and_spawn_every_archetype(void **state)
{
    static const char *const files[] = { "deploy/profiles/shooter.ini",
                                         "deploy/profiles/mmo.ini", "deploy/profiles/deep.ini" };
    fixture *fx = *state;

    (void)state;
    for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
        world_profile *p = &fx->profile;

        assert_int_equal(gc_heap_create(NULL, &fx->heap), GC_OK);
        world_env_init(&fx->env, fx->heap);
        assert_int_equal(world_classes_register(fx->heap, &fx->env.classes), GC_OK);
        if (!world_profile_load(p, files[f], fx->err, sizeof fx->err) ||
            !world_archetypes_compile(&fx->env, p, files[f], fx->err, sizeof fx->err))
            fail_msg("%s", fx->err);
        assert_int_equal(world_create(&fx->env, 0, &fx->w), GC_OK);
        assert_int_equal(actor_spawn_player(fx->w, 1, "p1", &fx->pc), GC_OK);
        for (uint32_t i = 0; i < p->n; i++) {
            uint32_t before = gc_object_count(fx->heap);
            actor *a;

            if (p->archetypes[i].base != WORLD_PROFILE_BASE_ACTOR)
                continue;
            assert_int_equal(actor_spawn_archetype(fx->w, i, fx->pc, &a), GC_OK);
            assert_int_equal(gc_object_count(fx->heap) - before, p->archetypes[i].objects);
        }
        if (f + 1 < sizeof files / sizeof files[0])
            fixture_close(fx);
    }
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_each_archetype_becomes_a_class_named_after_it),
        T(test_a_spawn_creates_the_actor_its_parts_and_its_children),
        T(test_replicated_actors_of_a_spawn_are_queued_and_the_rest_are_not),
        T(test_the_collector_follows_every_reference_slot),
        T(test_a_destroyed_spawn_full_of_cycles_is_collected_whole),
        T(test_earlier_refers_to_the_object_created_just_before),
        T(test_a_weak_reference_is_cleared_when_its_target_goes),
        T(test_a_cluster_archetype_roots_one_cluster_per_spawn),
        T(test_a_timed_archetype_is_destroyed_when_its_lifetime_runs_out),
        T(test_a_persistent_archetype_outlives_its_player),
        T(test_the_census_counts_each_archetype_class_and_its_parts),
        T(test_an_archetype_named_like_a_built_in_class_is_an_error_naming_its_line),
        T(test_the_shipped_profiles_compile_and_spawn_every_archetype),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
