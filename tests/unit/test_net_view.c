/*
 * test_net_view.c - a world's replication index and a connection's view of it: the states, their
 * counts and digests and the movers' bits against a reference model, and the rule that an index
 * or a mover slot is reused only after every connection that held its actor has been sent the
 * destroy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "net_index.h"
#include "net_view.h"
#include "reap_gc.h"
#include "world_fixture.h"

enum { ACTORS = 200, OPS = 20000 };

typedef struct fixture {
    gc_heap *heap;
    world_env env;
    world *w;
    net_index ix;
    actor *actors[ACTORS];
    uint32_t idx[ACTORS];
} fixture;

static int setup(void **state)
{
    static fixture fx;
    player_controller *pc;

    memset(&fx, 0, sizeof fx);
    world_fixture_open(&fx.heap, &fx.env, &fx.w);
    net_index_init(&fx.ix, WIRE_DEFAULT_STEP);
    assert_int_equal(actor_spawn_player(fx.w, 1, "p", &pc), GC_OK);
    for (int i = 0; i < ACTORS; i++) {
        assert_int_equal(actor_spawn(fx.w, i % 4 == 0 ? ACTOR_KIND_PROJECTILE : ACTOR_KIND_PROP,
                                     pc, &fx.actors[i]), GC_OK);
        fx.idx[i] = net_index_acquire(&fx.ix, fx.heap, fx.actors[i], 1);
        assert_true(fx.idx[i] != 0);
    }
    *state = &fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;

    net_index_free(&fx->ix);
    world_fixture_close(fx->heap);
    return 0;
}

static void check_against(const net_view *v, const net_index *ix, const uint8_t *model,
                          const fixture *fx)
{
    uint32_t n[4] = { 0 };
    uint64_t relevant = 0, held = 0;

    for (int i = 0; i < ACTORS; i++) {
        uint64_t h = net_view_id_hash(fx->actors[i]->net_id);
        n[model[i]]++;
        assert_int_equal(net_view_state(v, fx->idx[i]), model[i]);
        assert_int_equal(ix->v[fx->idx[i]].refs, model[i] != NET_VIEW_NONE);
        if (model[i] == NET_VIEW_PENDING || model[i] == NET_VIEW_OPEN)
            relevant ^= h;
        if (model[i] == NET_VIEW_OPEN || model[i] == NET_VIEW_CLOSING)
            held ^= h;
    }
    for (int i = 0; i < ACTORS; i++) {
        uint32_t slot = ix->v[fx->idx[i]].mover_slot;
        bool rel = model[i] == NET_VIEW_PENDING || model[i] == NET_VIEW_OPEN;

        if (slot == 0)
            continue;
        assert_int_equal(fx->actors[i]->moves, true);
        assert_int_equal(slot < v->mcap && (v->mrel[slot / 64] >> (slot % 64) & 1), rel);
        assert_int_equal(slot < v->mcap && (v->mopen[slot / 64] >> (slot % 64) & 1),
                         model[i] == NET_VIEW_OPEN);
    }
    assert_int_equal(v->n_pending, n[NET_VIEW_PENDING]);
    assert_int_equal(v->n_open, n[NET_VIEW_OPEN]);
    assert_int_equal(v->n_closing, n[NET_VIEW_CLOSING]);
    assert_true(v->digest_relevant == relevant);
    assert_true(v->digest_held == held);
}

static void test_random_operations_keep_states_counts_and_digests_equal_to_a_model(void **state)
{
    fixture *fx = *state;
    uint8_t model[ACTORS] = { 0 };
    uint64_t seed = 12345;
    net_view v;

    net_view_init(&v);
    for (int op = 0; op < OPS; op++) {
        int i;
        uint32_t idx;

        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        i = (int)((seed >> 33) % ACTORS);
        idx = fx->idx[i];
        switch ((seed >> 20) % 5) {
        case 0: /* becomes relevant */
            assert_true(net_view_touch(&v, &fx->ix, idx, (uint32_t)op));
            if (model[i] == NET_VIEW_NONE)
                model[i] = NET_VIEW_PENDING;
            else if (model[i] == NET_VIEW_CLOSING)
                model[i] = NET_VIEW_OPEN;
            break;
        case 1: /* stops being relevant */
            net_view_close(&v, &fx->ix, idx);
            if (model[i] == NET_VIEW_PENDING)
                model[i] = NET_VIEW_NONE;
            else if (model[i] == NET_VIEW_OPEN)
                model[i] = NET_VIEW_CLOSING;
            break;
        case 2: /* its spawn goes out */
            net_view_spawn_sent(&v, &fx->ix, idx, (uint32_t)op);
            if (model[i] == NET_VIEW_PENDING)
                model[i] = NET_VIEW_OPEN;
            break;
        case 3: /* its destroy goes out */
            net_view_destroy_sent(&v, &fx->ix, idx);
            if (model[i] == NET_VIEW_CLOSING)
                model[i] = NET_VIEW_NONE;
            break;
        default: /* the replication's walk */
            net_view_compact_closing(&v);
            break;
        }
        check_against(&v, &fx->ix, model, fx);
    }

    net_view_clear(&v, &fx->ix);
    memset(model, 0, sizeof model);
    check_against(&v, &fx->ix, model, fx);
    net_view_free(&v);
}

static void test_a_relevancy_pass_closes_exactly_the_movers_it_did_not_touch(void **state)
{
    fixture *fx = *state;
    net_view v;

    net_view_init(&v);
    for (int i = 0; i < ACTORS; i++) {
        assert_true(net_view_touch(&v, &fx->ix, fx->idx[i], 1));
        if (i % 2 == 0)
            net_view_spawn_sent(&v, &fx->ix, fx->idx[i], 1);
    }
    /* A pass that touches every third actor: movers it missed close, static ones stay. */
    net_view_begin_pass(&v, false);
    for (int i = 0; i < ACTORS; i += 3)
        assert_true(net_view_touch(&v, &fx->ix, fx->idx[i], 2));
    net_view_end_pass(&v, &fx->ix);
    for (int i = 0; i < ACTORS; i++) {
        uint8_t want = i % 2 == 0 ? NET_VIEW_OPEN : NET_VIEW_PENDING;
        if (fx->actors[i]->moves && i % 3 != 0)
            want = want == NET_VIEW_OPEN ? NET_VIEW_CLOSING : NET_VIEW_NONE;
        assert_int_equal(net_view_state(&v, fx->idx[i]), want);
        assert_int_equal(v.st[fx->idx[i]] & NET_VIEW_SEEN, 0);
    }
    net_view_clear(&v, &fx->ix);
    net_view_free(&v);
}

static void test_a_mover_slot_is_not_reused_while_a_connection_still_owes_its_destroy(void **state)
{
    fixture *fx = *state;
    actor *a = fx->actors[0], *b, *c; /* a projectile */
    uint32_t idx = fx->idx[0], slot = fx->ix.v[idx].mover_slot;
    player_controller *pc = a->owner != NULL ? (player_controller *)a->owner : NULL;
    net_view v;

    assert_true(slot != 0);
    net_view_init(&v);
    assert_true(net_view_touch(&v, &fx->ix, idx, 1));
    net_view_spawn_sent(&v, &fx->ix, idx, 1);
    /* Gone, its destroy owed: the slot stays its own, even for another mover's spawn. */
    actor_destroy(fx->w, a);
    net_index_begin_frame(&fx->ix, fx->heap, fx->w, 2);
    world_outbox_reset(fx->w);
    net_view_close(&v, &fx->ix, idx);
    assert_int_equal(actor_spawn(fx->w, ACTOR_KIND_PROJECTILE, pc, &b), GC_OK);
    assert_true(fx->ix.v[net_index_acquire(&fx->ix, fx->heap, b, 3)].mover_slot != slot);
    assert_int_equal(fx->ix.mhot[slot].index, idx);
    /* Once the destroy is sent, the slot is free for the next mover. */
    net_view_destroy_sent(&v, &fx->ix, idx);
    assert_int_equal(actor_spawn(fx->w, ACTOR_KIND_PROJECTILE, pc, &c), GC_OK);
    assert_int_equal(fx->ix.v[net_index_acquire(&fx->ix, fx->heap, c, 4)].mover_slot, slot);
    net_view_free(&v);
}

static void test_an_index_is_not_reused_while_a_connection_still_owes_its_destroy(void **state)
{
    fixture *fx = *state;
    actor *a = fx->actors[1], *b, *c;
    uint32_t idx = fx->idx[1];
    net_view v1, v2;

    /* Given an actor both connections hold... */
    net_view_init(&v1);
    net_view_init(&v2);
    for (net_view *v = &v1; v != NULL; v = v == &v1 ? &v2 : NULL) {
        assert_true(net_view_touch(v, &fx->ix, idx, 1));
        net_view_spawn_sent(v, &fx->ix, idx, 1);
    }
    /* ...destroyed, with its destroy sent to one connection only... */
    actor_destroy(fx->w, a);
    net_index_begin_frame(&fx->ix, fx->heap, fx->w, 2);
    world_outbox_reset(fx->w);
    assert_int_equal(fx->ix.gone_count, 1);
    net_view_close(&v1, &fx->ix, idx);
    net_view_close(&v2, &fx->ix, idx);
    net_view_destroy_sent(&v1, &fx->ix, idx);

    /* ...a new actor gets another index; once the other destroy is sent, the index is free. */
    assert_int_equal(actor_spawn(fx->w, ACTOR_KIND_PROP, NULL, &b), GC_OK);
    assert_true(net_index_acquire(&fx->ix, fx->heap, b, 3) != idx);
    net_view_destroy_sent(&v2, &fx->ix, idx);
    assert_int_equal(actor_spawn(fx->w, ACTOR_KIND_PROP, NULL, &c), GC_OK);
    assert_int_equal(net_index_acquire(&fx->ix, fx->heap, c, 4), idx);
    assert_true(fx->ix.v[idx].net_id == c->net_id);

    net_view_free(&v1);
    net_view_free(&v2);
}

static void test_a_moving_actor_is_encoded_once_a_frame_it_moves_and_not_otherwise(void **state)
{
    fixture *fx = *state;
    actor *p = fx->actors[0]; /* a projectile: it moves */
    uint64_t before = fx->ix.records_encoded;

    net_index_begin_frame(&fx->ix, fx->heap, fx->w, 2); /* nothing moved */
    assert_int_equal(fx->ix.records_encoded, before);
    p->pos[0] += 10;
    p->move_serial++;
    net_index_begin_frame(&fx->ix, fx->heap, fx->w, 3);
    assert_int_equal(fx->ix.records_encoded, before + 1);
    assert_int_equal(fx->ix.mhot[fx->ix.v[fx->idx[0]].mover_slot].changed_frame, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_random_operations_keep_states_counts_and_digests_equal_to_a_model, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_a_relevancy_pass_closes_exactly_the_movers_it_did_not_touch, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_mover_slot_is_not_reused_while_a_connection_still_owes_its_destroy, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_an_index_is_not_reused_while_a_connection_still_owes_its_destroy, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            test_a_moving_actor_is_encoded_once_a_frame_it_moves_and_not_otherwise, setup,
            teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
