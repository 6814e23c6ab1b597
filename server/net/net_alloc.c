/*
 * net_alloc.c - a pool of small blocks under ENet's allocations (net_alloc.h).
 *
 * Every block starts with a 16-byte header naming its class (or NET_ALLOC_LARGE), so
 * net_alloc_put needs no size. A class keeps its free blocks as a stack of pointers in an
 * array of its own, not as a list threaded through the blocks: a block freed a frame ago is
 * long out of the cache, and popping a list would wait for its first word before the next
 * allocation could even start.
 */
#include "net_alloc.h"

#include <enet/enet.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdlib.h>

enum {
    NET_ALLOC_MIN_SHIFT = 6,          /* the smallest class: 64 bytes */
    NET_ALLOC_LARGE = 0xff,
    NET_ALLOC_MAGIC = 0x6e61,         /* "na": a block of ours */
};

typedef struct net_alloc_header {
    alignas(16) uint16_t magic;
    uint8_t cls;
} net_alloc_header;

typedef struct net_alloc_class {
    void **free;                      /* free blocks (their headers), a stack */
    uint32_t count, cap;
} net_alloc_class;

static struct {
    pthread_mutex_t lock;
    net_alloc_class cls[NET_ALLOC_CLASSES];
    net_alloc_stats stats;
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER };

static size_t net_alloc_class_size(unsigned cls)
{
    return (size_t)1 << (cls + NET_ALLOC_MIN_SHIFT);
}

/* The smallest class that holds size bytes, or NET_ALLOC_LARGE. */
static unsigned net_alloc_class_of(size_t size)
{
    for (unsigned cls = 0; cls < NET_ALLOC_CLASSES; cls++)
        if (size <= net_alloc_class_size(cls))
            return cls;
    return NET_ALLOC_LARGE;
}

void *net_alloc_get(size_t size)
{
    unsigned cls = net_alloc_class_of(size);
    net_alloc_header *h = NULL;

    if (cls == NET_ALLOC_LARGE) {
        if (size > SIZE_MAX - sizeof *h)
            return NULL;
        h = malloc(sizeof *h + size);
        pthread_mutex_lock(&pool.lock);
        pool.stats.large++;
        pthread_mutex_unlock(&pool.lock);
    } else {
        net_alloc_class *c = &pool.cls[cls];

        pthread_mutex_lock(&pool.lock);
        pool.stats.pooled++;
        if (c->count > 0) {
            h = c->free[--c->count];
            pool.stats.reused++;
            pool.stats.free_blocks--;
            /* The next block of the class is fetched now, so the next request finds it in the
             * cache; this one's header is still intact from when it was put. */
            if (c->count > 0)
                __builtin_prefetch(c->free[c->count - 1], 1);
        }
        pthread_mutex_unlock(&pool.lock);
        if (h != NULL)
            return h + 1;
        h = malloc(sizeof *h + net_alloc_class_size(cls));
    }
    if (h == NULL)
        return NULL;
    h->magic = NET_ALLOC_MAGIC;
    h->cls = (uint8_t)cls;
    return h + 1;
}

/* Room for one more free block in class cls (the lock held). */
static bool net_alloc_room(net_alloc_class *c, unsigned cls)
{
    uint32_t most = (uint32_t)(NET_ALLOC_MAX_FREE_BYTES / net_alloc_class_size(cls)), n;
    void **p;

    if (c->count < c->cap)
        return true;
    if (c->cap >= most)
        return false;
    n = c->cap ? c->cap * 2 : 256;
    if (n > most)
        n = most;
    p = realloc(c->free, (size_t)n * sizeof *p);
    if (p == NULL)
        return false;
    c->free = p;
    c->cap = n;
    return true;
}

void net_alloc_put(void *block)
{
    net_alloc_header *h;
    unsigned cls;

    if (block == NULL)
        return;
    h = (net_alloc_header *)block - 1;
    cls = h->cls;
    if (h->magic != NET_ALLOC_MAGIC)
        abort(); /* not a block of ours: freeing it would corrupt the heap */
    if (cls != NET_ALLOC_LARGE) {
        net_alloc_class *c = &pool.cls[cls];

        pthread_mutex_lock(&pool.lock);
        if (net_alloc_room(c, cls)) {
            c->free[c->count++] = h;
            pool.stats.free_blocks++;
            pthread_mutex_unlock(&pool.lock);
            return;
        }
        pthread_mutex_unlock(&pool.lock);
    }
    h->magic = 0;
    free(h);
}

void net_alloc_trim(void)
{
    net_alloc_class taken[NET_ALLOC_CLASSES];

    pthread_mutex_lock(&pool.lock);
    for (unsigned cls = 0; cls < NET_ALLOC_CLASSES; cls++) {
        taken[cls] = pool.cls[cls];
        pool.cls[cls] = (net_alloc_class){ 0 };
    }
    pool.stats.free_blocks = 0;
    pthread_mutex_unlock(&pool.lock);
    for (unsigned cls = 0; cls < NET_ALLOC_CLASSES; cls++) {
        for (uint32_t i = 0; i < taken[cls].count; i++)
            free(taken[cls].free[i]);
        free(taken[cls].free);
    }
}

net_alloc_stats net_alloc_get_stats(void)
{
    net_alloc_stats s;

    pthread_mutex_lock(&pool.lock);
    s = pool.stats;
    pthread_mutex_unlock(&pool.lock);
    return s;
}

/* Under AddressSanitizer ENet keeps malloc, so a use after free in ENet's lists is reported. */
#if defined(__SANITIZE_ADDRESS__)
#define NET_ALLOC_INSTALL 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NET_ALLOC_INSTALL 0
#endif
#endif
#ifndef NET_ALLOC_INSTALL
#define NET_ALLOC_INSTALL 1
#endif

static void *ENET_CALLBACK net_alloc_enet_malloc(size_t size)
{
    return net_alloc_get(size);
}

static void ENET_CALLBACK net_alloc_enet_free(void *block)
{
    net_alloc_put(block);
}

int net_alloc_install(void)
{
    ENetCallbacks cb = { 0 };

    if (!NET_ALLOC_INSTALL)
        return enet_initialize();
    cb.malloc = net_alloc_enet_malloc;
    cb.free = net_alloc_enet_free;
    return enet_initialize_with_callbacks(ENET_VERSION, &cb);
}
