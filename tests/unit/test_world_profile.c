/*
 * test_world_profile.c - reading a world profile: every field, what one spawn of an archetype
 * creates, the limits, errors that name the file, the line and the field, and the shipped
 * profiles (deploy/profiles/) read cleanly.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "world_profile.h"

static world_profile profile;
static char err[512];

/* Expects text to fail with a message that starts with want. */
static void expect_error(const char *text, const char *want)
{
    err[0] = '\0';
    if (world_profile_parse(&profile, "p.ini", text, err, sizeof err))
        fail_msg("accepted:\n%s", text);
    if (strncmp(err, want, strlen(want)) != 0)
        fail_msg("expected an error starting '%s', got '%s'", want, err);
}

static void test_every_field_is_read_into_its_archetype(void **state)
{
    const char *text =
        "[archetype Scope]\nbase = component\nrefs = owner\n"
        "[archetype Weapon]\nbase = actor\ncomponents = 3\nchildren = Scope:2\n"
        "refs = owner, siblings, level, weak earlier:2\npayload = 256\nlifetime = 12.5\n"
        "cluster = yes\nreplicated = no\nmoves = on\n";
    const world_profile_archetype *w;

    (void)state;
    assert_true(world_profile_parse(&profile, "p.ini", text, err, sizeof err));

    assert_int_equal(profile.n, 2);
    w = &profile.archetypes[world_profile_find(&profile, "Weapon")];
    assert_int_equal(w->base, WORLD_PROFILE_BASE_ACTOR);
    assert_int_equal(w->components, 3);
    assert_int_equal(w->n_children, 1);
    assert_int_equal(w->children[0].archetype, 0);
    assert_int_equal(w->children[0].count, 2);
    assert_int_equal(w->n_refs, 4);
    assert_int_equal(w->refs[1].kind, WORLD_PROFILE_REF_SIBLINGS);
    assert_int_equal(w->refs[3].kind, WORLD_PROFILE_REF_EARLIER);
    assert_int_equal(w->refs[3].count, 2);
    assert_true(w->refs[3].weak);
    assert_false(w->refs[0].weak);
    assert_int_equal(w->payload, 256);
    assert_int_equal(w->lifetime, WORLD_PROFILE_LIFETIME_SECONDS);
    assert_true(w->seconds == 12.5);
    assert_true(w->cluster);
    assert_false(w->replicated);
    assert_true(w->moves);
    assert_int_equal(profile.archetypes[0].base, WORLD_PROFILE_BASE_COMPONENT);
}

static void test_a_spawn_counts_the_actor_its_parts_and_its_childrens_objects(void **state)
{
    const char *text =
        "[archetype Leaf]\ncomponents = 2\n"
        "[archetype Mid]\ncomponents = 1\nchildren = Leaf:3\n"
        "[archetype Top]\nchildren = Mid:2, Leaf:1\n";

    (void)state;
    assert_true(world_profile_parse(&profile, "p.ini", text, err, sizeof err));

    assert_int_equal(profile.archetypes[0].objects, 3);
    assert_int_equal(profile.archetypes[1].objects, 1 + 1 + 3 * 3);
    assert_int_equal(profile.archetypes[2].objects, 1 + 2 * 11 + 3);
    assert_int_equal(profile.archetypes[2].depth, 3);
    assert_int_equal(profile.archetypes[0].lifetime, WORLD_PROFILE_LIFETIME_VISIT);
    assert_true(profile.archetypes[0].replicated);
}

static void test_errors_name_the_file_the_line_and_the_field(void **state)
{
    (void)state;
    expect_error("[archetype A]\ncomponents = 2\npayload = lots\n",
                 "p.ini:3: [archetype A] payload: 'lots': expected bytes");
    expect_error("[archetype A]\nbase = pawn\n", "p.ini:2: [archetype A] base: 'pawn'");
    expect_error("[archetype A]\n\nlifetime = forever\n",
                 "p.ini:3: [archetype A] lifetime: 'forever': expected visit, persistent, instance or");
    expect_error("[archetype A]\ncluster = maybe\n", "p.ini:2: [archetype A] cluster: 'maybe'");
    expect_error("[archetype A]\nrefs = owner, parent\n",
                 "p.ini:2: [archetype A] refs: 'parent': expected owner, siblings, level, "
                 "earlier:N or placed");
    expect_error("[archetype A]\nrefs = earlier\n", "p.ini:2: [archetype A] refs: 'earlier'");
    expect_error("[archetype A]\nrefs = owner:2\n",
                 "p.ini:2: [archetype A] refs: 'owner:2': only earlier takes a count");
    expect_error("[archetype A]\ncolour = red\n", "p.ini:2: [archetype A] unknown field 'colour'");
    expect_error("[house]\nbase = actor\n", "p.ini:2: unknown section [house]");
    expect_error("base = actor\n", "p.ini:1: 'base' outside a section");
    expect_error("[archetype A]\nbase = actor\nthis is not ini\n", "p.ini:3: not an ini line");
    expect_error("; nothing\n", "p.ini: no [archetype NAME] section");
}

static void test_children_name_archetypes_defined_above_so_no_spawn_contains_itself(void **state)
{
    (void)state;
    expect_error("[archetype A]\nchildren = B:1\n[archetype B]\ncomponents = 1\n",
                 "p.ini:2: [archetype A] children: 'B' is not an archetype defined above");
    expect_error("[archetype A]\nchildren = A:1\n",
                 "p.ini:2: [archetype A] children: 'A' is not an archetype defined above");
    expect_error("[archetype A]\ncomponents = 1\n[archetype B]\nchildren = A:0\n",
                 "p.ini:4: [archetype B] children: 'A:0': expected NAME:N");
    expect_error("[archetype A]\nbase = component\ncomponents = 2\n",
                 "p.ini:3: [archetype A] components: a component archetype has no components");
}

static void test_the_limits_are_errors_at_the_field_that_breaks_them(void **state)
{
    char text[4096];
    size_t n = 0;

    (void)state;
    expect_error("[archetype A]\ncomponents = 65\n", "p.ini:2: [archetype A] components: '65'");
    expect_error("[archetype A]\npayload = 65537\n", "p.ini:2: [archetype A] payload: '65537'");
    expect_error("[archetype A]\ncomponents = 4\n[archetype B]\nchildren = A:1000\n"
                 "[archetype C]\nchildren = B:2\n",
                 "p.ini:6: [archetype C] children: one spawn would create 10003 objects");
    /* nine levels of children: A0 <- A1 <- ... <- A8 */
    n += (size_t)snprintf(text + n, sizeof text - n, "[archetype A0]\ncomponents = 0\n");
    for (int i = 1; i <= 8; i++)
        n += (size_t)snprintf(text + n, sizeof text - n, "[archetype A%d]\nchildren = A%d\n",
                              i, i - 1);
    expect_error(text, "p.ini:18: [archetype A8] children: children nest 9 deep (at most 8)");
    expect_error("[archetype A]\nbase = actor\n[archetype A]\nbase = actor\n[archetype B]\n"
                 "base = actor\n[archetype A]\nbase = actor\n",
                 "p.ini:8: [archetype A]: archetype 'A' is defined twice");
    expect_error("[archetype Bad-Name]\nbase = actor\n", "p.ini:2: [archetype Bad-Name]: an");
}

static void test_a_cells_section_lists_what_every_cell_places(void **state)
{
    const char *text =
        "[archetype Leaf]\nbase = component\n"
        "[archetype Tree]\ncomponents = 2\nchildren = Leaf:3\n"
        "[archetype Rock]\nrefs = level, strong placed, weak placed\n"
        "[cells]\nplaced = Tree:10, Rock:4\nplayer_starts = 3\nplayer_start_sources = yes\n";
    const world_profile_archetype *rock;

    (void)state;
    assert_true(world_profile_parse(&profile, "p.ini", text, err, sizeof err));

    assert_true(profile.cells.present);
    assert_int_equal(profile.cells.line, 8);
    assert_int_equal(profile.cells.n_placed, 2);
    assert_int_equal(profile.cells.placed[0].archetype, 1);
    assert_int_equal(profile.cells.placed[0].count, 10);
    assert_int_equal(profile.cells.objects, 10 * (1 + 2 + 3) + 4);
    assert_int_equal(profile.cells.player_starts, 3);
    assert_true(profile.cells.start_sources);
    rock = &profile.archetypes[2];
    assert_int_equal(rock->refs[1].kind, WORLD_PROFILE_REF_PLACED);
    assert_int_equal(rock->refs[1].hold, WORLD_PROFILE_HOLD_STRONG);
    assert_int_equal(rock->refs[2].hold, WORLD_PROFILE_HOLD_WEAK);
}

static void test_a_profile_without_cells_has_none(void **state)
{
    (void)state;
    assert_true(world_profile_parse(&profile, "p.ini", "[archetype A]\nbase = actor\n", err,
                                    sizeof err));

    assert_false(profile.cells.present);
    assert_int_equal(profile.cells.objects, 0);
}

static void test_a_bad_cells_section_names_the_file_the_line_and_the_field(void **state)
{
    (void)state;
    expect_error("[archetype A]\n[cells]\nplaced = B:2\n",
                 "p.ini:3: [cells] placed: 'B' is not an archetype defined above [cells]");
    expect_error("[archetype C]\nbase = component\n[cells]\nplaced = C:1\n",
                 "p.ini:4: [cells] placed: 'C' is a component archetype");
    expect_error("[archetype A]\n[cells]\nplaced = A:0\n",
                 "p.ini:3: [cells] placed: 'A:0': expected NAME:N with N in [1, 10000]");
    expect_error("[archetype A]\ncomponents = 64\n[cells]\nplaced = A:5000\n",
                 "p.ini:4: [cells] placed: one cell would place 325000 objects (at most 200000)");
    expect_error("[archetype A]\n[cells]\nterrain = hills\n",
                 "p.ini:3: [cells] unknown field 'terrain' (known: placed, player_starts, "
                 "player_start_sources)");
    expect_error("[archetype A]\n[cells]\nplayer_starts = 65\n",
                 "p.ini:3: [cells] player_starts: '65': expected an integer in [0, 64]");
    expect_error("[archetype A]\nbase = actor\n[cells]\nplaced = A:1\n[archetype B]\n"
                 "base = actor\n[cells]\nplaced = A\n",
                 "p.ini:8: [cells] is given twice");
    expect_error("[archetype A]\nrefs = strong weak owner\n",
                 "p.ini:2: [archetype A] refs: 'weak owner'");
}

static void test_a_missing_file_is_an_error_naming_it(void **state)
{
    (void)state;
    assert_false(world_profile_load(&profile, "/nonexistent/x.ini", err, sizeof err));
    assert_non_null(strstr(err, "cannot read the world profile '/nonexistent/x.ini'"));
}

static void test_the_shipped_profiles_read_cleanly(void **state)
{
    static const char *const files[] = { "deploy/profiles/shooter.ini",
                                         "deploy/profiles/mmo.ini", "deploy/profiles/deep.ini" };

    (void)state;
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        if (!world_profile_load(&profile, files[i], err, sizeof err))
            fail_msg("%s", err);

    assert_true(world_profile_load(&profile, "deploy/profiles/deep.ini", err, sizeof err));
    assert_int_equal(profile.archetypes[world_profile_find(&profile, "QuestLog")].objects, 2597);
    assert_true(world_profile_load(&profile, "deploy/profiles/mmo.ini", err, sizeof err));
    assert_int_equal(profile.archetypes[world_profile_find(&profile, "House")].lifetime,
                     WORLD_PROFILE_LIFETIME_PERSISTENT);
}


static void test_a_map_section_describes_a_world_layout(void **state)
{
    const char *text =
        "[archetype Tree]\npayload = 8\n"
        "[map Arena]\nextent = 50000\nplaced = Tree:7\nplayer_starts = 2\n"
        "persistent_props = 3000\n"
        "[map Lobby]\n";
    const world_profile_map *arena, *lobby;

    (void)state;
    assert_true(world_profile_parse(&profile, "p.ini", text, err, sizeof err));

    assert_int_equal(profile.n_maps, 2);
    assert_int_equal(world_profile_map_find(&profile, "Lobby"), 1);
    assert_int_equal(world_profile_map_find(&profile, "Nope"), -1);
    arena = &profile.maps[0];
    lobby = &profile.maps[1];
    assert_string_equal(arena->name, "Arena");
    assert_true(arena->extent == 50000.0f);
    assert_true(arena->cells.present);
    assert_int_equal(arena->cells.placed[0].count, 7);
    assert_int_equal(arena->cells.objects, 7);
    assert_int_equal(arena->cells.player_starts, 2);
    assert_true(arena->has_persistent_props);
    assert_int_equal(arena->persistent_props, 3000);
    /* What a map leaves out is the server's: no cells, world.Extent, world.PersistentProps. */
    assert_false(lobby->cells.present);
    assert_true(lobby->extent == 0.0f);
    assert_false(lobby->has_persistent_props);
    assert_false(profile.cells.present);
}

static void test_a_bad_map_field_names_the_file_the_line_and_the_field(void **state)
{
    (void)state;
    expect_error("[archetype A]\n[map Arena]\nextent = 5\n",
                 "p.ini:3: [map Arena] extent: '5': expected world units in [1000, 20000000]");
    expect_error("[archetype A]\n[map Arena]\nplaced = B:2\n",
                 "p.ini:3: [map Arena] placed: 'B' is not an archetype defined above [map Arena]");
    expect_error("[archetype A]\n[map Arena]\npersistent_props = lots\n",
                 "p.ini:3: [map Arena] persistent_props: 'lots': expected an integer in [0, 4000000]");
    expect_error("[archetype A]\n[map Arena]\nsize = 3\n",
                 "p.ini:3: [map Arena] unknown field 'size' (known: extent, placed, "
                 "player_starts, player_start_sources, persistent_props)");
    expect_error("[archetype A]\npayload = 1\n[map Arena]\nextent = 9000\n[map Lobby]\n"
                 "extent = 9000\n[map Arena]\nextent = 9000\n",
                 "p.ini:8: [map Arena]: map 'Arena' is defined twice");
    expect_error("[archetype A]\n[map Are.na]\nextent = 9000\n",
                 "p.ini:3: [map Are.na]: a map's name is 1-31 letters, digits or _");
}

static void test_lifetime_instance_is_an_actor_the_game_instance_holds(void **state)
{
    (void)state;
    assert_true(world_profile_parse(&profile, "p.ini",
                                    "[archetype Tracker]\nrefs = level\nlifetime = instance\n",
                                    err, sizeof err));
    assert_int_equal(profile.archetypes[0].lifetime, WORLD_PROFILE_LIFETIME_INSTANCE);

    expect_error("[archetype T]\ncluster = yes\nlifetime = instance\n",
                 "p.ini:3: [archetype T] lifetime: a lifetime = instance archetype is an actor");
    expect_error("[archetype T]\nlifetime = instance\n[cells]\nplaced = T:1\n",
                 "p.ini:4: [cells] placed: 'T' has lifetime = instance");
    expect_error("[archetype T]\nlifetime = forever\n",
                 "p.ini:2: [archetype T] lifetime: 'forever': expected visit, persistent, "
                 "instance or seconds");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_field_is_read_into_its_archetype),
        cmocka_unit_test(test_a_spawn_counts_the_actor_its_parts_and_its_childrens_objects),
        cmocka_unit_test(test_errors_name_the_file_the_line_and_the_field),
        cmocka_unit_test(test_children_name_archetypes_defined_above_so_no_spawn_contains_itself),
        cmocka_unit_test(test_the_limits_are_errors_at_the_field_that_breaks_them),
        cmocka_unit_test(test_a_cells_section_lists_what_every_cell_places),
        cmocka_unit_test(test_a_profile_without_cells_has_none),
        cmocka_unit_test(test_a_bad_cells_section_names_the_file_the_line_and_the_field),
        cmocka_unit_test(test_a_missing_file_is_an_error_naming_it),
        cmocka_unit_test(test_the_shipped_profiles_read_cleanly),
        cmocka_unit_test(test_a_map_section_describes_a_world_layout),
        cmocka_unit_test(test_a_bad_map_field_names_the_file_the_line_and_the_field),
        cmocka_unit_test(test_lifetime_instance_is_an_actor_the_game_instance_holds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
