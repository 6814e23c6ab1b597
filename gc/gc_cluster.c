/*
 * gc_cluster.c - clusters (UE FUObjectCluster): a root and the objects it owns, marked as
 * one unit.
 */
#include "gc_internal.h"

gc_result gc_cluster_create(gc_heap *heap, void *root)
{
    if (!heap || !root)
        return GC_E_NULL;
    return GC_E_STATE; /* clusters are not built yet */
}

uint32_t gc_cluster_count(const gc_heap *heap)
{
    (void)heap;
    return 0;
}

void gc_cluster_on_member_garbage(gc_heap *heap, gc_header *h)
{
    (void)heap;
    (void)h;
}
