/*
 * test_gc_map.c - the collector's hash tables: they grow without a pause (keys move into the
 * larger table a few slots per put, and every operation sees both tables meanwhile), and they
 * give back a peak's memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gc_internal.h"
#include "gc_testing.h"

static void assert_map_valid(const gc_map *m)
{
    const char *why = gc_map_verify(m);
    if (why)
        fail_msg("map invariant broken: %s", why);
}

/* Puts keys first, first+1, ... (value = key * 3) until a put makes the map start moving
 * keys into a larger table; returns the last key put. */
static uint64_t put_until_growth(gc_map *m, uint64_t first)
{
    for (uint64_t k = first; k < first + (1u << 22); k++) {
        assert_int_equal(gc_map_put(m, k, (uint32_t)(k * 3)), GC_OK);
        if (gc_map_is_rehashing(m))
            return k;
    }
    fail_msg("4M puts and the map never started moving keys");
    return 0;
}

static void finish_moving(gc_map *m)
{
    for (int guard = 0; !gc_map_rehash_step(m, 64); guard++)
        assert_true(guard < 1 << 18); /* every table here moves in fewer steps */
}

/* Grows a map (keys 1, 2, ..., value = key * 3) until the table that keys are moving out of
 * has at least min_old slots; returns the last key put. */
static uint64_t grow_to(gc_map *m, uint32_t min_old)
{
    uint64_t last = put_until_growth(m, 1);
    while (m->old.capacity < min_old) {
        finish_moving(m);
        last = put_until_growth(m, last + 1);
    }
    return last;
}

/* The key the old table holds that moves last (while keys move), or 0. */
static uint64_t a_key_in_old(const gc_map *m)
{
    uint32_t mask = m->old.capacity - 1;
    for (uint32_t j = m->old.capacity; j-- > m->moved;) { /* slots not moved yet */
        uint64_t k = m->old.keys ? m->old.keys[(m->start + j) & mask] : 0;
        if (k != 0 && k != UINT64_MAX)
            return k;
    }
    return 0;
}

/* ---- growing ------------------------------------------------------------------------- */

static void test_a_growth_moves_keys_a_few_slots_per_put(void **state)
{
    gc_map m;

    (void)state;
    gc_map_init(&m);
    uint64_t last = grow_to(&m, 1u << 15);
    uint32_t keys_before = m.count - 1;
    assert_true(gc_map_is_rehashing(&m));
    assert_int_equal(m.t.capacity, 2 * m.old.capacity);
    assert_int_equal(m.old.used, keys_before); /* the put that grew it moved nothing yet */

    assert_int_equal(gc_map_put(&m, last + 1, 1), GC_OK);

    assert_true(m.old.used < keys_before);                        /* it moved some */
    assert_true(m.old.used > keys_before - 2 * GC_MAP_STEP_SLOTS); /* but only a few */
    assert_map_valid(&m);
    gc_map_free(&m);
}

static void test_every_key_is_found_with_its_value_while_keys_move(void **state)
{
    gc_map m;
    uint32_t v;

    (void)state;
    gc_map_init(&m);
    uint64_t last = grow_to(&m, 1u << 13);
    assert_true(m.old.used > 1000);

    for (uint64_t k = 1; k <= last; k++) {
        assert_true(gc_map_get(&m, k, &v));
        assert_int_equal(v, (uint32_t)(k * 3));
    }
    for (uint64_t k = last + 1; k <= last + 1000; k++)
        assert_false(gc_map_get(&m, k, NULL));
    assert_true(gc_map_is_rehashing(&m)); /* lookups moved nothing */
    gc_map_free(&m);
}

static void test_the_old_table_is_empty_before_the_new_one_must_grow(void **state)
{
    gc_map m;

    (void)state;
    gc_map_init(&m);
    for (uint64_t k = 1; k <= 300000; k++) {
        uint32_t cap = m.t.capacity;
        bool moving = gc_map_is_rehashing(&m);
        assert_int_equal(gc_map_put(&m, k, 1), GC_OK);
        if (m.t.capacity != cap)
            assert_false(moving); /* no put finished a move that was still going on */
    }
    assert_map_valid(&m);
    gc_map_free(&m);
}

static void test_many_growths_in_a_row_keep_every_key(void **state)
{
    gc_map m;
    uint32_t v;
    unsigned growths = 0;

    (void)state;
    gc_map_init(&m);
    for (uint64_t k = 1; k <= 500000; k++) {
        uint32_t cap = m.t.capacity;
        assert_int_equal(gc_map_put(&m, k * 7919, (uint32_t)k), GC_OK);
        if (m.t.capacity != cap) {
            growths++;
            assert_map_valid(&m);
        }
    }

    assert_true(growths >= 15); /* 16 slots to 2^20 */
    assert_int_equal(m.count, 500000);
    for (uint64_t k = 1; k <= 500000; k++) {
        assert_true(gc_map_get(&m, k * 7919, &v));
        assert_int_equal(v, (uint32_t)k);
    }
    gc_map_free(&m);
}

/* ---- writing while keys move ---------------------------------------------------------- */

static void test_a_key_still_in_the_old_table_can_be_removed(void **state)
{
    gc_map m;

    (void)state;
    gc_map_init(&m);
    grow_to(&m, 4096);
    uint64_t k = a_key_in_old(&m);
    assert_true(k != 0);
    uint32_t count = m.count;

    assert_true(gc_map_remove(&m, k));

    assert_false(gc_map_get(&m, k, NULL));
    assert_false(gc_map_remove(&m, k));
    assert_int_equal(m.count, count - 1);
    assert_map_valid(&m);
    finish_moving(&m);
    assert_false(gc_map_get(&m, k, NULL)); /* not moved back to life */
    assert_int_equal(m.count, count - 1);
    assert_map_valid(&m);
    gc_map_free(&m);
}

static void test_a_put_of_a_key_in_the_old_table_updates_it_in_place(void **state)
{
    gc_map m;
    uint32_t v;

    (void)state;
    gc_map_init(&m);
    grow_to(&m, 4096);
    uint64_t k = a_key_in_old(&m);
    assert_true(k != 0);
    uint32_t count = m.count;

    assert_int_equal(gc_map_put(&m, k, 12345), GC_OK);

    assert_int_equal(a_key_in_old(&m), k);  /* still there, not copied to the new table */
    assert_int_equal(m.count, count);
    assert_true(gc_map_get(&m, k, &v));
    assert_int_equal(v, 12345);
    assert_map_valid(&m);
    finish_moving(&m);
    assert_true(gc_map_get(&m, k, &v));
    assert_int_equal(v, 12345);
    assert_int_equal(m.count, count);
    gc_map_free(&m);
}

static void test_an_update_of_a_key_in_the_old_table_is_seen(void **state)
{
    gc_map m;
    uint32_t v;

    (void)state;
    gc_map_init(&m);
    grow_to(&m, 4096);
    uint64_t k = a_key_in_old(&m);

    assert_true(gc_map_update(&m, k, 777));

    assert_true(gc_map_get(&m, k, &v));
    assert_int_equal(v, 777);
    finish_moving(&m);
    assert_true(gc_map_get(&m, k, &v));
    assert_int_equal(v, 777);
    assert_map_valid(&m);
    gc_map_free(&m);
}

static void test_removing_every_key_of_the_old_table_frees_it_at_the_next_step(void **state)
{
    gc_map m;

    (void)state;
    gc_map_init(&m);
    grow_to(&m, 4096);
    for (uint64_t k; (k = a_key_in_old(&m)) != 0;)
        assert_true(gc_map_remove(&m, k));
    assert_true(gc_map_is_rehashing(&m)); /* a remove frees nothing */

    assert_true(gc_map_rehash_step(&m, 1));

    assert_false(gc_map_is_rehashing(&m));
    assert_int_equal(m.old.capacity, 0);
    assert_map_valid(&m);
    gc_map_free(&m);
}

static void test_iteration_while_keys_move_visits_every_key_once(void **state)
{
    gc_map m;
    uint64_t k;
    uint32_t v;

    (void)state;
    gc_map_init(&m);
    uint64_t last = grow_to(&m, 4096);
    for (int i = 0; i < 20; i++) { /* keys in both tables */
        last++;
        assert_int_equal(gc_map_put(&m, last, (uint32_t)(last * 3)), GC_OK);
    }
    assert_true(gc_map_is_rehashing(&m) && m.old.used > 0 && m.t.used > 0);
    unsigned char *seen = calloc(last + 1, 1);
    assert_non_null(seen);
    uint32_t visits = 0;

    gc_map_iter it;
    for (gc_map_iter_init(&it, &m); gc_map_iter_next(&it, &k, &v);) {
        assert_true(k >= 1 && k <= last);
        assert_int_equal(seen[k], 0);
        assert_int_equal(v, (uint32_t)(k * 3));
        seen[k] = 1;
        visits++;
    }

    assert_int_equal(visits, last);
    free(seen);
    gc_map_free(&m);
}

static void test_a_put_that_cannot_allocate_the_larger_table_changes_nothing(void **state)
{
    gc_map m;
    uint32_t v;

    (void)state;
    gc_map_init(&m);
    uint64_t last = put_until_growth(&m, 1);
    finish_moving(&m);
    while (!((m.count + m.t.tombstones + 1) * 2 > m.t.capacity)) { /* the next put grows */
        last++;
        assert_int_equal(gc_map_put(&m, last, (uint32_t)(last * 3)), GC_OK);
    }
    uint32_t cap = m.t.capacity;

    gc_testing_fail_allocation(0);
    gc_result r = gc_map_put(&m, last + 1, 1);
    gc_testing_fail_allocation(-1);

    assert_int_equal(r, GC_E_NOMEM);
    assert_int_equal(m.t.capacity, cap);
    assert_false(gc_map_is_rehashing(&m));
    assert_false(gc_map_get(&m, last + 1, NULL));
    for (uint64_t k = 1; k <= last; k++)
        assert_true(gc_map_get(&m, k, &v) && v == (uint32_t)(k * 3));
    assert_map_valid(&m);
    gc_map_free(&m);
}

/* ---- a model ---------------------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Random puts, updates, removes, lookups, steps and shrinks against a plain array of the
 * same keys, in phases that fill the map and empty it again (so it grows and shrinks while
 * keys move); the map and the array must agree after every operation, and the map's
 * invariants must hold. */
static void test_random_operations_agree_with_a_plain_array(void **state)
{
    enum { KEYS = 20000, OPS = 600000 };
    uint32_t *model = calloc(KEYS + 1, sizeof *model); /* 0: absent, else value + 1 */
    uint32_t model_count = 0, v;
    uint64_t seed = 0x5EEDF00D;
    gc_map m;
    unsigned growths = 0, shrinks = 0;

    (void)state;
    assert_non_null(model);
    gc_map_init(&m);
    for (uint32_t op = 0; op < OPS; op++) {
        bool filling = (op / 100000) % 2 == 0;
        uint64_t r = splitmix64(&seed);
        uint64_t key = 1 + (r >> 32) % KEYS;
        uint32_t value = (uint32_t)r & 0xffff;
        uint64_t slots = gc_map_slots(&m);
        switch ((r >> 16) % 16) {
        case 0: case 1: case 2: case 3: case 4: case 5: case 6:
            if (!filling && (r >> 20) % 4 != 0)
                goto remove;
            assert_int_equal(gc_map_put(&m, key, value), GC_OK);
            model_count += model[key] == 0;
            model[key] = value + 1;
            break;
        case 7:
            assert_int_equal(gc_map_update(&m, key, value), model[key] != 0);
            if (model[key])
                model[key] = value + 1;
            break;
        case 8: case 9: case 10:
        remove:
            assert_int_equal(gc_map_remove(&m, key), model[key] != 0);
            model_count -= model[key] != 0;
            model[key] = 0;
            break;
        case 11: case 12: case 13:
            if (model[key]) {
                assert_true(gc_map_get(&m, key, &v));
                assert_int_equal(v + 1, model[key]);
            } else {
                assert_false(gc_map_get(&m, key, NULL));
            }
            break;
        case 14:
            gc_map_rehash_step(&m, (uint32_t)(r >> 40) % 200);
            break;
        case 15:
            gc_map_shrink(&m);
            shrinks += gc_map_slots(&m) > slots && m.t.capacity < m.old.capacity;
            break;
        }
        growths += gc_map_is_rehashing(&m) && m.t.capacity > m.old.capacity &&
                   gc_map_slots(&m) != slots;
        assert_int_equal(m.count, model_count);
        if (op % 4096 == 0 || gc_map_slots(&m) != slots)
            assert_map_valid(&m);
    }
    for (uint64_t k = 1; k <= KEYS; k++)
        assert_int_equal(gc_map_get(&m, k, &v), model[k] != 0);
    uint32_t visits = 0;
    gc_map_iter it;
    uint64_t k;
    for (gc_map_iter_init(&it, &m); gc_map_iter_next(&it, &k, &v);) {
        assert_int_equal(v + 1, model[k]);
        visits++;
    }
    assert_int_equal(visits, model_count);

    assert_true(growths >= 8); /* the run did what it is meant to test */
    assert_true(shrinks >= 1);
    free(model);
    gc_map_free(&m);
}

/* ---- shrinking ------------------------------------------------------------------------ */

static void test_a_table_emptied_after_a_peak_shrinks_and_keeps_its_keys(void **state)
{
    gc_map m;
    uint32_t v;

    (void)state;
    gc_map_init(&m);
    for (uint64_t k = 1; k <= 5000; k++)
        assert_int_equal(gc_map_put(&m, k, (uint32_t)k), GC_OK);
    finish_moving(&m);
    for (uint64_t k = 4; k <= 5000; k++)
        assert_true(gc_map_remove(&m, k));
    uint64_t peak = gc_map_slots(&m);

    gc_map_shrink(&m);
    finish_moving(&m);

    assert_true(gc_map_slots(&m) < peak);
    assert_true(gc_map_slots(&m) <= 16);
    for (uint64_t k = 1; k <= 3; k++) {
        assert_true(gc_map_get(&m, k, &v));
        assert_int_equal(v, k);
    }
    assert_false(gc_map_get(&m, 4, NULL));
    assert_map_valid(&m);
    gc_map_free(&m);
}

static void test_keys_are_found_while_a_shrink_moves_them(void **state)
{
    gc_map m;
    uint32_t v;

    (void)state;
    gc_map_init(&m);
    for (uint64_t k = 1; k <= 40000; k++)
        assert_int_equal(gc_map_put(&m, k, (uint32_t)k), GC_OK);
    finish_moving(&m);
    for (uint64_t k = 1; k <= 40000; k++)
        if (k % 20 != 0)
            assert_true(gc_map_remove(&m, k));
    uint32_t big = m.t.capacity;

    gc_map_shrink(&m);
    gc_map_rehash_step(&m, big / 3);

    assert_true(gc_map_is_rehashing(&m));
    assert_true(m.t.capacity < big);
    for (uint64_t k = 1; k <= 40000; k++)
        assert_int_equal(gc_map_get(&m, k, &v) && v == k, k % 20 == 0);
    for (uint64_t k = 40001; k <= 40100; k++) /* puts while shrinking */
        assert_int_equal(gc_map_put(&m, k, (uint32_t)k), GC_OK);
    assert_map_valid(&m);
    assert_int_equal(m.count, 2000 + 100);
    gc_map_free(&m);
}

static void test_a_small_or_busy_table_is_left_as_it_is(void **state)
{
    gc_map small, busy;

    (void)state;
    gc_map_init(&small);
    gc_map_init(&busy);
    for (uint64_t k = 1; k <= 300; k++)
        gc_map_put(&small, k, 1);
    for (uint64_t k = 1; k <= 3000; k++)
        gc_map_put(&busy, k, 1);
    finish_moving(&small);
    finish_moving(&busy);
    for (uint64_t k = 1; k <= 299; k++)
        gc_map_remove(&small, k);
    uint32_t small_cap = small.t.capacity, busy_cap = busy.t.capacity;

    gc_map_shrink(&small);
    gc_map_shrink(&busy);

    assert_int_equal(small.t.capacity, small_cap); /* 1024 slots or fewer: not worth it */
    assert_int_equal(busy.t.capacity, busy_cap);   /* more than an eighth full */
    assert_false(gc_map_is_rehashing(&small) || gc_map_is_rehashing(&busy));
    gc_map_free(&small);
    gc_map_free(&busy);
}

/* ---- the collector's own tables -------------------------------------------------------- */

typedef struct holder {
    gc_ref_array items;
} holder;

typedef struct part {
    void *owner;
} part;

static const gc_member holder_members[] = { GC_REF_ARRAY(holder, items), GC_MEMBERS_END };
static const gc_member part_members[] = { GC_REF(part, owner), GC_MEMBERS_END };

static void holder_destructor(void *obj)
{
    gc_ref_array_free(&((holder *)obj)->items);
}

typedef struct cluster_heap {
    gc_heap *heap;
    gc_class *part_class;
    uint32_t clusters;
} cluster_heap;

/* A heap whose rooted actors are each a cluster with two parts, made until cluster_of is
 * moving keys out of a table of 2048 slots or more. */
static void make_clusters_until_cluster_of_moves(cluster_heap *ch)
{
    gc_heap_config cfg = { .max_objects = 0 };
    gc_settings_default(&cfg.settings);
    cfg.settings.create_clusters = true;
    cfg.settings.min_cluster_size = 1;
    assert_int_equal(gc_heap_create(&cfg, &ch->heap), GC_OK);
    gc_class *actor_class;
    gc_class_desc ad = { .name = "Actor", .size = sizeof(holder), .members = holder_members,
                         .flags = GC_CLASS_CLUSTER_ROOT,
                         .hooks = { .destructor = holder_destructor } };
    gc_class_desc pd = { .name = "Part", .size = sizeof(part), .members = part_members,
                         .flags = GC_CLASS_CAN_BE_IN_CLUSTER };
    assert_int_equal(gc_class_register(ch->heap, &ad, &actor_class), GC_OK);
    assert_int_equal(gc_class_register(ch->heap, &pd, &ch->part_class), GC_OK);
    gc_map *cluster_of = &ch->heap->cluster_of;
    ch->clusters = 0;
    while (!(gc_map_is_rehashing(cluster_of) && cluster_of->old.capacity >= 2048)) {
        assert_true(ch->clusters < 100000);
        holder *actor;
        assert_int_equal(gc_object_create(ch->heap, actor_class, NULL, NULL, GC_CREATE_ROOT,
                                          (void **)&actor), GC_OK);
        for (int i = 0; i < 2; i++) {
            part *p;
            assert_int_equal(gc_object_create(ch->heap, ch->part_class, actor, NULL, 0,
                                              (void **)&p), GC_OK);
            p->owner = actor;
            assert_int_equal(gc_ref_array_push(&actor->items, p), GC_OK);
        }
        assert_int_equal(gc_cluster_create(ch->heap, actor), GC_OK);
        ch->clusters++;
    }
}

static void test_a_mark_while_cluster_of_moves_keeps_every_cluster(void **state)
{
    cluster_heap ch;

    (void)state;
    make_clusters_until_cluster_of_moves(&ch);
    uint32_t objects = gc_object_count(ch.heap);

    assert_int_equal(gc_collect(ch.heap, 0, true), GC_OK); /* nothing to destroy */

    assert_true(gc_map_is_rehashing(&ch.heap->cluster_of)); /* the mark read both tables */
    assert_int_equal(gc_object_count(ch.heap), objects);
    assert_int_equal(gc_cluster_count(ch.heap), ch.clusters);
    assert_null(gc_testing_check(ch.heap));
    assert_map_valid(&ch.heap->cluster_of);
    gc_heap_destroy(ch.heap);
}

static void test_a_purge_finishes_moving_the_keys_of_cluster_of(void **state)
{
    cluster_heap ch;
    void *garbage;

    (void)state;
    make_clusters_until_cluster_of_moves(&ch);
    assert_int_equal(gc_object_create(ch.heap, ch.part_class, NULL, NULL, 0, &garbage), GC_OK);

    assert_int_equal(gc_collect(ch.heap, 0, true), GC_OK); /* destroys one: purges */

    assert_false(gc_map_is_rehashing(&ch.heap->cluster_of));
    assert_int_equal(gc_cluster_count(ch.heap), ch.clusters);
    assert_null(gc_testing_check(ch.heap));
    assert_map_valid(&ch.heap->cluster_of);
    gc_heap_destroy(ch.heap);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_growth_moves_keys_a_few_slots_per_put),
        cmocka_unit_test(test_every_key_is_found_with_its_value_while_keys_move),
        cmocka_unit_test(test_the_old_table_is_empty_before_the_new_one_must_grow),
        cmocka_unit_test(test_many_growths_in_a_row_keep_every_key),
        cmocka_unit_test(test_a_key_still_in_the_old_table_can_be_removed),
        cmocka_unit_test(test_a_put_of_a_key_in_the_old_table_updates_it_in_place),
        cmocka_unit_test(test_an_update_of_a_key_in_the_old_table_is_seen),
        cmocka_unit_test(test_removing_every_key_of_the_old_table_frees_it_at_the_next_step),
        cmocka_unit_test(test_iteration_while_keys_move_visits_every_key_once),
        cmocka_unit_test(test_a_put_that_cannot_allocate_the_larger_table_changes_nothing),
        cmocka_unit_test(test_random_operations_agree_with_a_plain_array),
        cmocka_unit_test(test_a_table_emptied_after_a_peak_shrinks_and_keeps_its_keys),
        cmocka_unit_test(test_keys_are_found_while_a_shrink_moves_them),
        cmocka_unit_test(test_a_small_or_busy_table_is_left_as_it_is),
        cmocka_unit_test(test_a_mark_while_cluster_of_moves_keeps_every_cluster),
        cmocka_unit_test(test_a_purge_finishes_moving_the_keys_of_cluster_of),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
