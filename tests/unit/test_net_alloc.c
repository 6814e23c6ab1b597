/*
 * test_net_alloc.c - the block pool under ENet (net_alloc.h): sizes and alignment, reuse,
 * the cap on what a class keeps free, trimming, two threads at once, and ENet carrying
 * messages over it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <enet/enet.h>
#include <pthread.h>

#include "net_alloc.h"

static void test_sizes_are_usable_and_aligned(void **state)
{
    static const size_t sizes[] = { 0, 1, 15, 16, 63, 64, 65, 200, 1024, 2047, 2048, 2049, 70000 };
    void *blocks[sizeof sizes / sizeof sizes[0]];

    (void)state;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        blocks[i] = net_alloc_get(sizes[i]);
        assert_non_null(blocks[i]);
        assert_int_equal((uintptr_t)blocks[i] % 16, 0);
        memset(blocks[i], (int)i, sizes[i]);
    }
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (size_t j = 0; j < sizes[i]; j++)
            assert_int_equal(((unsigned char *)blocks[i])[j], (unsigned char)i);
        net_alloc_put(blocks[i]);
    }
    net_alloc_put(NULL);
    net_alloc_trim();
}

static void test_a_freed_block_is_reused_in_its_class(void **state)
{
    net_alloc_stats before, after;
    void *a, *b, *c;

    (void)state;
    net_alloc_trim();
    a = net_alloc_get(100);
    net_alloc_put(a);
    before = net_alloc_get_stats();
    assert_int_equal(before.free_blocks, 1);
    b = net_alloc_get(128);  /* the same class as 100 */
    assert_ptr_equal(b, a);
    c = net_alloc_get(100);  /* the list is empty now: a new block */
    assert_ptr_not_equal(c, b);
    after = net_alloc_get_stats();
    assert_int_equal(after.reused - before.reused, 1);
    assert_int_equal(after.pooled - before.pooled, 2);
    assert_int_equal(after.free_blocks, 0);
    net_alloc_put(b);
    net_alloc_put(c);
    net_alloc_trim();
}

static void test_large_requests_bypass_the_classes(void **state)
{
    net_alloc_stats before = net_alloc_get_stats(), after;
    void *big;

    (void)state;
    big = net_alloc_get(4096);
    assert_non_null(big);
    net_alloc_put(big);
    after = net_alloc_get_stats();
    assert_int_equal(after.large - before.large, 1);
    assert_int_equal(after.pooled, before.pooled);
    assert_int_equal(after.free_blocks, before.free_blocks); /* given back to malloc */
}

static void test_a_class_keeps_at_most_its_cap_free(void **state)
{
    enum { SIZE = 2048, CAP = NET_ALLOC_MAX_FREE_BYTES / SIZE, N = CAP + 100 };
    static void *blocks[N];

    (void)state;
    net_alloc_trim();
    for (int i = 0; i < N; i++)
        assert_non_null(blocks[i] = net_alloc_get(SIZE));
    for (int i = 0; i < N; i++)
        net_alloc_put(blocks[i]);
    assert_int_equal(net_alloc_get_stats().free_blocks, CAP);
    net_alloc_trim();
    assert_int_equal(net_alloc_get_stats().free_blocks, 0);
}

enum { THREAD_ROUNDS = 20000, THREAD_HELD = 64 };

static void *churn_thread(void *arg)
{
    void *held[THREAD_HELD] = { 0 };
    unsigned seed = (unsigned)(uintptr_t)arg;

    for (int r = 0; r < THREAD_ROUNDS; r++) {
        unsigned k;
        seed = seed * 1103515245u + 12345u;
        k = (seed >> 16) % THREAD_HELD;
        if (held[k] != NULL) {
            if (((unsigned char *)held[k])[0] != (unsigned char)k)
                return (void *)1; /* someone else wrote into a block this thread holds */
            net_alloc_put(held[k]);
        }
        held[k] = net_alloc_get(32u + (seed >> 8) % 1500u);
        if (held[k] == NULL)
            return (void *)1;
        ((unsigned char *)held[k])[0] = (unsigned char)k;
    }
    for (int k = 0; k < THREAD_HELD; k++)
        net_alloc_put(held[k]);
    return NULL;
}

static void test_two_threads_share_the_pool(void **state)
{
    pthread_t t[2];
    void *r[2];

    (void)state;
    for (uintptr_t i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&t[i], NULL, churn_thread, (void *)(i + 1)), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pthread_join(t[i], &r[i]), 0);
        assert_null(r[i]);
    }
    net_alloc_trim();
}

/* A server and a client host exchange reliable and unreliable messages with ENet allocating
 * through the pool (in a build that installs it). */
static void test_enet_runs_over_the_pool(void **state)
{
    enum { MESSAGES = 200 };
    ENetAddress addr = { .host = ENET_HOST_ANY, .port = 0 };
    ENetHost *server, *client;
    ENetPeer *peer;
    ENetEvent ev;
    int connected = 0, received = 0;
    net_alloc_stats before = net_alloc_get_stats();

    (void)state;
    enet_address_set_host_ip(&addr, "127.0.0.1");
    server = enet_host_create(&addr, 4, 2, 0, 0);
    assert_non_null(server);
    client = enet_host_create(NULL, 1, 2, 0, 0);
    assert_non_null(client);
    addr.port = server->address.port;
    peer = enet_host_connect(client, &addr, 2, 0);
    assert_non_null(peer);
    for (int round = 0; round < 2000 && (connected < 2 || received < MESSAGES); round++) {
        while (enet_host_service(client, &ev, 0) > 0) {
            if (ev.type == ENET_EVENT_TYPE_CONNECT) {
                connected++;
                for (int i = 0; i < MESSAGES; i++) {
                    char text[64];
                    int n = snprintf(text, sizeof text, "message %d", i);
                    enet_peer_send(peer, (enet_uint8)(i & 1),
                                   enet_packet_create(text, (size_t)n + 1,
                                                      ENET_PACKET_FLAG_RELIABLE));
                }
            }
        }
        while (enet_host_service(server, &ev, 1) > 0) {
            if (ev.type == ENET_EVENT_TYPE_CONNECT)
                connected++;
            if (ev.type == ENET_EVENT_TYPE_RECEIVE) {
                assert_memory_equal(ev.packet->data, "message ", 8);
                received++;
                enet_packet_destroy(ev.packet);
            }
        }
    }
    assert_int_equal(connected, 2);
    assert_int_equal(received, MESSAGES);
    enet_host_destroy(client);
    enet_host_destroy(server);
#if !defined(__SANITIZE_ADDRESS__)
    assert_true(net_alloc_get_stats().pooled - before.pooled >= MESSAGES);
#else
    (void)before;
#endif
    net_alloc_trim();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes_are_usable_and_aligned),
        cmocka_unit_test(test_a_freed_block_is_reused_in_its_class),
        cmocka_unit_test(test_large_requests_bypass_the_classes),
        cmocka_unit_test(test_a_class_keeps_at_most_its_cap_free),
        cmocka_unit_test(test_two_threads_share_the_pool),
        cmocka_unit_test(test_enet_runs_over_the_pool),
    };

    if (net_alloc_install() != 0)
        return 1;
    return cmocka_run_group_tests(tests, NULL, NULL);
}
