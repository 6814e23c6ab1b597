/*
 * net_alloc.h - a pool of small blocks under ENet's allocations.
 *
 * ENet allocates and frees a packet header, a copy of the data and a command for every message
 * it sends, and an acknowledgement or incoming command for every one it receives: in a crowd,
 * thousands of each per frame, in a handful of sizes, freed out of order as peers acknowledge.
 * glibc's malloc spends much of that in consolidating and splitting chunks. The pool keeps
 * freed blocks in one stack per power-of-two size class (64 bytes to 2 KB; larger requests go
 * to malloc), each capped, so a frame's churn costs a pop and a push.
 *
 * Thread-safe (one mutex; ENet runs on the loop thread, so it is never contended there).
 * net_alloc_install must run before ENet allocates anything in the process: a block malloc'd
 * earlier would later be handed to net_alloc_put (which aborts on a block not its own).
 * AddressSanitizer builds install nothing, so ASan still sees every ENet allocation as it is.
 */
#ifndef REAP_NET_ALLOC_H
#define REAP_NET_ALLOC_H

#include <stddef.h>
#include <stdint.h>

enum {
    NET_ALLOC_CLASSES = 6,            /* 64, 128, 256, 512, 1024, 2048 bytes */
    NET_ALLOC_MAX_FREE_BYTES = 4 << 20, /* kept free per class at most */
};

typedef struct net_alloc_stats {
    uint64_t pooled;                  /* requests served by a class (new or reused block) */
    uint64_t reused;                  /* of which from a free list */
    uint64_t large;                   /* requests above the largest class, given to malloc */
    uint64_t free_blocks;             /* blocks in the free lists now */
} net_alloc_stats;

/* A block of at least size bytes, aligned for any type; NULL when out of memory. */
void *net_alloc_get(size_t size);
/* Gives back a block from net_alloc_get (NULL is ignored). */
void net_alloc_put(void *block);
/* Frees every block in the free lists. */
void net_alloc_trim(void);
net_alloc_stats net_alloc_get_stats(void);

/* Makes ENet allocate through the pool (enet_initialize_with_callbacks). 0 on success. */
int net_alloc_install(void);

#endif /* REAP_NET_ALLOC_H */
