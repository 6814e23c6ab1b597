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

static void collect_cb(const world_grid_entry *e, float d2, void *userdata)
{
    found *f = userdata;

    (void)d2;
    f->hits[f->count++] = e->a;
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

/* A ring query against brute force, over random moving and static actors that move, leave and
 * come back: every mover within the radius, and the static ones in the ring, exactly. */
static void ring_cb(const world_grid_entry *e, float d2, void *userdata)
{
    int *seen = userdata;

    (void)d2;
    seen[e->a->net_index]++;
}

static void test_a_ring_query_finds_movers_within_and_statics_in_the_ring(void **state)
{
    enum { N = 400, ROUNDS = 400 };
    static actor actors[N];
    static int seen[N];
    world_grid g;
    uint32_t seed = 7;

    (void)state;
    assert_true(world_grid_init(&g, 40000, 6000));
    for (int i = 0; i < N; i++) {
        seed = seed * 1664525u + 1013904223u;
        put(&g, &actors[i], (float)(seed % 44000) - 22000.0f, (float)(seed / 44000 % 44000) - 22000.0f);
        actors[i].net_index = (uint32_t)i;
        actors[i].moves = i % 3 == 0;
        world_grid_remove(&g, &actors[i]);      /* in again with its kind */
        assert_true(world_grid_insert(&g, &actors[i]));
    }
    for (int round = 0; round < ROUNDS; round++) {
        float qx, qy, radius, inner;
        int k;

        /* Some actors move (statics too: a teleport), leave or come back. */
        for (int j = 0; j < 20; j++) {
            seed = seed * 1664525u + 1013904223u;
            k = (int)(seed % N);
            if (actors[k].grid_cell == WORLD_GRID_NONE) {
                assert_true(world_grid_insert(&g, &actors[k]));
            } else if (seed % 7 == 0) {
                world_grid_remove(&g, &actors[k]);
            } else {
                /* Mostly a short step (it stays in its cell, maybe out of the box). */
                float step = seed % 5 == 0 ? 44000.0f : 3000.0f;
                actors[k].pos[0] += (float)(seed / 7 % 2001) / 1000.0f * step - step;
                actors[k].pos[1] += (float)(seed / 13 % 2001) / 1000.0f * step - step;
                world_grid_move(&g, &actors[k]);
            }
        }
        seed = seed * 1664525u + 1013904223u;
        qx = (float)(seed % 40000) - 20000.0f;
        qy = (float)(seed / 40000 % 40000) - 20000.0f;
        radius = 8000.0f + (float)(seed % 14000);
        inner = round % 4 == 0 ? -1.0f : radius - (float)(seed / 3 % 3000);
        memset(seen, 0, sizeof seen);
        world_grid_query_ring(&g, qx, qy, radius, inner, ring_cb, seen);
        for (int i = 0; i < N; i++) {
            float dx = actors[i].pos[0] - qx, dy = actors[i].pos[1] - qy;
            float d2 = dx * dx + dy * dy;
            bool in = actors[i].grid_cell != WORLD_GRID_NONE && d2 <= radius * radius &&
                      (actors[i].moves || inner <= 0.0f || d2 > inner * inner);
            assert_int_equal(seen[i], in ? 1 : 0);
        }
    }
    world_grid_free(&g);
}

static void tag_cb(const world_grid_entry *e, float d2, void *userdata)
{
    (void)d2;
    *(uint32_t *)userdata = e->tag;
}

static void test_an_entry_carries_its_actors_net_index_after_a_retag_and_a_move(void **state)
{
    world_grid g;
    actor a;
    uint32_t tag = 99;

    (void)state;
    assert_true(world_grid_init(&g, 200000, 15000));
    put(&g, &a, 10, 10);
    world_grid_query(&g, 0, 0, 100, tag_cb, &tag);
    assert_int_equal(tag, 0);
    a.net_index = 42;
    world_grid_retag(&g, &a);
    a.pos[0] = 60000; /* into another cell: the copy moves with it */
    world_grid_move(&g, &a);
    world_grid_query(&g, 60000, 10, 100, tag_cb, &tag);
    assert_int_equal(tag, 42);
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
        cmocka_unit_test(test_a_ring_query_finds_movers_within_and_statics_in_the_ring),
        cmocka_unit_test(test_an_entry_carries_its_actors_net_index_after_a_retag_and_a_move),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
