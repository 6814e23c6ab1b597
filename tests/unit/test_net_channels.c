/*
 * test_net_channels.c - a connection's actor channels: the partitioned sets and the hash that
 * finds them, checked against a plain reference model over random operations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "net_channels.h"

enum { MODEL_IDS = 600 };

/* The reference: which ids have a channel, in which state. */
typedef struct model {
    bool has[MODEL_IDS];
    bool open[MODEL_IDS];
    bool moves[MODEL_IDS];
} model;

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void check_against_model(net_channels *t, const model *m)
{
    uint32_t count = 0, pending = 0;

    for (uint64_t id = 0; id < MODEL_IDS; id++) {
        net_channel *ch = net_channels_find(t, id + 1);
        if (!m->has[id]) {
            assert_null(ch);
            continue;
        }
        assert_non_null(ch);
        assert_int_equal(ch->net_id, id + 1);
        assert_int_equal(ch->state, m->open[id] ? NET_CHANNEL_OPEN : NET_CHANNEL_PENDING);
        assert_int_equal(ch->set, m->moves[id] ? NET_SET_MOVER : NET_SET_STATIC);
        count++;
        pending += !m->open[id];
    }
    assert_int_equal(net_channels_count(t), count);
    assert_int_equal(net_channels_pending(t), pending);
    /* The partition: pending first, then open, in both sets. */
    for (int s = 0; s < NET_SET_COUNT; s++)
        for (uint32_t i = 0; i < t->sets[s].count; i++)
            assert_int_equal(t->sets[s].v[i].state,
                             i < t->sets[s].pending ? NET_CHANNEL_PENDING : NET_CHANNEL_OPEN);
}

static void test_random_adds_opens_and_removes_agree_with_a_reference_model(void **state)
{
    net_channels t;
    model m;
    uint64_t seed = 0x5EEDF00D;
    gc_weak none = { 0, 0 };

    (void)state;
    net_channels_init(&t);
    memset(&m, 0, sizeof m);
    for (int step = 0; step < 20000; step++) {
        uint64_t id = rng_next(&seed) % MODEL_IDS;
        uint32_t op = (uint32_t)(rng_next(&seed) % 3);
        net_channel *ch = net_channels_find(&t, id + 1);

        if (!m.has[id]) {
            bool moves = rng_next(&seed) & 1;
            assert_non_null(net_channels_add(&t, id + 1, none, 1, moves, 0, 0));
            m.has[id] = true;
            m.moves[id] = moves;
        } else if (op == 0 && !m.open[id]) {
            ch = net_channels_open(&t, ch);
            assert_int_equal(ch->net_id, id + 1);
            m.open[id] = true;
        } else if (op == 1) {
            net_channels_remove(&t, ch);
            m.has[id] = m.open[id] = false;
        }
        if (step % 500 == 0)
            check_against_model(&t, &m);
        if (step % 777 == 0)
            net_channels_refilter(&t);
    }
    check_against_model(&t, &m);
    net_channels_free(&t);
}

static void test_digests_cover_the_open_set_and_the_relevant_set(void **state)
{
    net_channels t;
    gc_weak none = { 0, 0 };

    (void)state;
    net_channels_init(&t);
    net_channels_add(&t, 7, none, 1, false, 0, 0);
    net_channels_open(&t, net_channels_add(&t, 9, none, 1, true, 0, 0));
    assert_true(net_channels_digest(&t, true) == net_channels_id_hash(9));
    assert_true(net_channels_digest(&t, false) ==
                (net_channels_id_hash(9) ^ net_channels_id_hash(7)));
    net_channels_free(&t);
}

static void test_clear_forgets_every_channel_and_the_table_is_reusable(void **state)
{
    net_channels t;
    gc_weak none = { 0, 0 };

    (void)state;
    net_channels_init(&t);
    for (uint64_t id = 1; id <= 1000; id++)
        assert_non_null(net_channels_add(&t, id, none, 1, id % 3 == 0, 0, 0));
    net_channels_clear(&t);
    assert_int_equal(net_channels_count(&t), 0);
    assert_null(net_channels_find(&t, 5));
    assert_non_null(net_channels_add(&t, 5, none, 1, false, 0, 0));
    assert_non_null(net_channels_find(&t, 5));
    net_channels_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_adds_opens_and_removes_agree_with_a_reference_model),
        cmocka_unit_test(test_digests_cover_the_open_set_and_the_relevant_set),
        cmocka_unit_test(test_clear_forgets_every_channel_and_the_table_is_reusable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
