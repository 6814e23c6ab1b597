/*
 * test_world_grid.c - the uniform 2D grid that finds a player's relevancy candidates.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "world.h"
#include "world_grid.h"

enum { ACTORS = 8 };

typedef struct found {
    actor *hits[64];
    int count;
} found;

static void collect_cb(actor *a, float d2, void *userdata)
{
    found *f = userdata;

    (void)d2;
    f->hits[f->count++] = a;
}

static bool found_has(const found *f, const actor *a)
{
    for (int i = 0; i < f->count; i++)
        if (f->hits[i] == a)
            return true;
    return false;
}

static found query(const world_grid *g, float x, float y, float r)
{
    found f;

    memset(&f, 0, sizeof f);
    world_grid_query(g, x, y, r, collect_cb, &f);
    return f;
}

static void put(world_grid *g, actor *a, float x, float y)
{
    memset(a, 0, sizeof *a);
    a->pos[0] = x;
    a->pos[1] = y;
    a->grid_cell = WORLD_GRID_NONE;
    assert_true(world_grid_insert(g, a));
}

static void test_a_query_finds_exactly_the_actors_within_the_radius(void **state)
{
    world_grid g;
    actor in, edge, out, far;

    (void)state;
    assert_true(world_grid_init(&g, 200000, 15000));
    put(&g, &in, 100, 100);
    put(&g, &edge, 15000, 0);     /* exactly at the cull distance: relevant */
    put(&g, &out, 15000, 10);     /* just beyond */
    put(&g, &far, -90000, 90000);

    found f = query(&g, 0, 0, 15000);

    assert_int_equal(f.count, 2);
    assert_true(found_has(&f, &in));
    assert_true(found_has(&f, &edge));
    world_grid_free(&g);
}

static void test_a_moved_actor_changes_cell_and_is_found_where_it_is(void **state)
{
    world_grid g;
    actor a;

    (void)state;
    assert_true(world_grid_init(&g, 200000, 15000));
    put(&g, &a, 0, 0);
    uint32_t before = a.grid_cell;

    a.pos[0] = 60000;
    world_grid_move(&g, &a);

    assert_true(a.grid_cell != before);
    assert_int_equal(a.grid_cell, world_grid_cell_of(&g, 60000, 0));
    assert_int_equal(query(&g, 0, 0, 15000).count, 0);
    assert_int_equal(query(&g, 60000, 0, 15000).count, 1);
    world_grid_free(&g);
}

static void test_removing_an_actor_keeps_the_others_findable(void **state)
{
    world_grid g;
    actor a[ACTORS];

    (void)state;
    assert_true(world_grid_init(&g, 200000, 15000));
    for (int i = 0; i < ACTORS; i++)
        put(&g, &a[i], (float)i, 0);

    world_grid_remove(&g, &a[2]);
    world_grid_remove(&g, &a[0]);

    found f = query(&g, 0, 0, 100);
    assert_int_equal(f.count, ACTORS - 2);
    assert_false(found_has(&f, &a[0]));
    assert_false(found_has(&f, &a[2]));
    assert_int_equal(a[2].grid_cell, WORLD_GRID_NONE);
    assert_int_equal(g.count, ACTORS - 2);
    world_grid_free(&g);
}

static void test_actors_outside_the_extent_are_still_found(void **state)
{
    world_grid g;
    actor a;

    (void)state;
    assert_true(world_grid_init(&g, 20000, 15000));
    put(&g, &a, 500000, -500000); /* clamped into an edge cell */

    assert_int_equal(query(&g, 500000, -500000, 100).count, 1);
    assert_int_equal(query(&g, 0, 0, 15000).count, 0);
    world_grid_free(&g);
}

static void test_a_rebuild_for_a_new_cull_distance_keeps_every_actor(void **state)
{
    world_grid g;
    actor a[ACTORS];

    (void)state;
    assert_true(world_grid_init(&g, 200000, 15000));
    for (int i = 0; i < ACTORS; i++)
        put(&g, &a[i], (float)(i * 9000), 0);

    assert_true(world_grid_rebuild(&g, 200000, 5000));

    assert_true(g.cell >= 5000 && g.cell < 15000);
    assert_int_equal(g.count, ACTORS);
    for (int i = 0; i < ACTORS; i++)
        assert_int_equal(query(&g, (float)(i * 9000), 0, 1).count, 1);
    world_grid_free(&g);
}

static void test_a_huge_extent_caps_the_cells_and_grows_them(void **state)
{
    world_grid g;

    (void)state;
    assert_true(world_grid_init(&g, 20000000, 100));

    assert_int_equal(g.dim, WORLD_GRID_MAX_DIM);
    assert_true(g.cell * (float)g.dim >= 20000000.0f * 0.999f);
    world_grid_free(&g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_query_finds_exactly_the_actors_within_the_radius),
        cmocka_unit_test(test_a_moved_actor_changes_cell_and_is_found_where_it_is),
        cmocka_unit_test(test_removing_an_actor_keeps_the_others_findable),
        cmocka_unit_test(test_actors_outside_the_extent_are_still_found),
        cmocka_unit_test(test_a_rebuild_for_a_new_cull_distance_keeps_every_actor),
        cmocka_unit_test(test_a_huge_extent_caps_the_cells_and_grows_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
