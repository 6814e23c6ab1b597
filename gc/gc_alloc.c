/*
 * gc_alloc.c - object memory: slabs of same-sized objects, with their mark bits kept apart.
 *
 * Objects up to GC_SLAB_MAX_OBJECT bytes live in 64 KiB slabs, one size class per 16 bytes,
 * carved from one reserved, huge-page-backed region of address space in two parts: objects
 * of 64 bytes and more in the first, the 32- and 48-byte classes in the second (a quarter of
 * the first's size), each part with its own slab bump pointer and free lists. An object's
 * slab is its offset in the region shifted right; its mark bit is its offset shifted right
 * by 6 (first part) or 5 (second part), since no two objects start in one granule of their
 * part; so marking reads and sets a bit in one compact table of 64-bit words instead of
 * touching the object, with no division by the object size (see gc_internal.h). A "special"
 * object (garbage, permanent, clustered) sends marking to its header. Larger objects are
 * malloc'ed outside the region and keep their mark bit in their header. The per-slab
 * divisors are kept for allocation and freeing only.
 *
 * Slab bookkeeping (free slots, fill) lives in a side table too, touched only by allocation,
 * which runs under heap->alloc_lock. Empty slabs go on a free list for any size class. After
 * each purge the memory of empty slabs beyond a reserve goes back to the system (MADV_DONTNEED:
 * the address range stays ours, its pages are dropped and come back zeroed when touched). The
 * reserve - a quarter of the slabs in use, at least GC_SLABS_KEPT - is the hysteresis that
 * keeps a sawtooth of allocation and collection from trading pages with the kernel every time.
 *
 * Every other allocation of the collector (side tables, work lists) goes through gc_malloc
 * and its friends at the end of this file, the one place fault injection hooks into.
 */
#include "gc_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define FREE_END UINT32_MAX
#define NO_SLAB UINT32_MAX
#define HUGE_PAGE ((size_t)2 << 20)
#define GC_SLABS_KEPT 8u   /* empty slabs (512 KiB) always kept committed for reuse */

static size_t round_up(size_t n, size_t to)
{
    return (n + to - 1) / to * to;
}

static void *reserve(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

gc_result gc_region_init(gc_heap *heap, size_t big_bytes)
{
    big_bytes = round_up(big_bytes, HUGE_PAGE);
    size_t small_bytes = round_up(big_bytes / GC_SMALL_PART_DIVISOR, HUGE_PAGE);
    size_t region_bytes = big_bytes + small_bytes;
    char *raw = reserve(region_bytes + HUGE_PAGE);
    if (!raw)
        return GC_E_NOMEM;
    char *base = (char *)round_up((uintptr_t)raw, HUGE_PAGE); /* huge-page aligned */
    size_t front = (size_t)(base - raw), back = HUGE_PAGE - front;
    if (front)
        munmap(raw, front);
    if (back)
        munmap(base + region_bytes, back);
#ifdef MADV_HUGEPAGE
    madvise(base, region_bytes, MADV_HUGEPAGE); /* a hint: fewer TLB misses when marking */
#endif
    heap->region = base;
    heap->region_bytes = region_bytes;
    heap->region_big = big_bytes;
    heap->region_slabs = (uint32_t)(region_bytes >> GC_SLAB_SHIFT);
    heap->big_slabs = (uint32_t)(big_bytes >> GC_SLAB_SHIFT);
    heap->small_marks_at = big_bytes >> (GC_GRANULE_SHIFT + GC_BITS_SHIFT);
    heap->mark_table_bytes = (heap->small_marks_at +
                              (small_bytes >> (GC_SMALL_GRANULE_SHIFT + GC_BITS_SHIFT))) * 8;
    heap->slab_inv = reserve((size_t)heap->region_slabs * sizeof *heap->slab_inv);
    heap->slab_marks = reserve(heap->mark_table_bytes);
    heap->slab_special = reserve(heap->mark_table_bytes);
    heap->slab_meta = reserve((size_t)heap->region_slabs * sizeof *heap->slab_meta);
    heap->slab_dying = reserve((size_t)heap->region_slabs * sizeof *heap->slab_dying);
    if (!heap->slab_inv || !heap->slab_marks || !heap->slab_special || !heap->slab_meta ||
        !heap->slab_dying) {
        gc_region_close(heap);
        return GC_E_NOMEM;
    }
    for (int part = 0; part < 2; part++) {
        heap->slab_bump[part] = part ? heap->big_slabs : 0;
        heap->slab_free[part] = NO_SLAB;
        heap->slab_free_count[part] = 0;
        heap->slab_released[part] = NO_SLAB;
    }
    for (uint32_t c = 0; c < GC_SLAB_CLASSES; c++)
        heap->slab_partial[c] = NO_SLAB;
    return GC_OK;
}

void gc_region_close(gc_heap *heap)
{
    if (heap->region)
        munmap(heap->region, heap->region_bytes);
    if (heap->slab_inv)
        munmap(heap->slab_inv, (size_t)heap->region_slabs * sizeof *heap->slab_inv);
    if (heap->slab_marks)
        munmap((void *)heap->slab_marks, heap->mark_table_bytes);
    if (heap->slab_special)
        munmap((void *)heap->slab_special, heap->mark_table_bytes);
    if (heap->slab_meta)
        munmap(heap->slab_meta, (size_t)heap->region_slabs * sizeof *heap->slab_meta);
    if (heap->slab_dying)
        munmap(heap->slab_dying, (size_t)heap->region_slabs * sizeof *heap->slab_dying);
    heap->region = NULL;
    heap->slab_inv = NULL;
    heap->slab_marks = NULL;
    heap->slab_special = NULL;
    heap->slab_meta = NULL;
    heap->slab_dying = NULL;
}

static void partial_link(gc_heap *heap, uint32_t cls, uint32_t si)
{
    gc_slab_meta *m = &heap->slab_meta[si];
    m->prev = NO_SLAB;
    m->next = heap->slab_partial[cls];
    if (m->next != NO_SLAB)
        heap->slab_meta[m->next].prev = si;
    heap->slab_partial[cls] = si;
}

static void partial_unlink(gc_heap *heap, uint32_t cls, uint32_t si)
{
    gc_slab_meta *m = &heap->slab_meta[si];
    if (m->prev != NO_SLAB)
        heap->slab_meta[m->prev].next = m->next;
    else
        heap->slab_partial[cls] = m->next;
    if (m->next != NO_SLAB)
        heap->slab_meta[m->next].prev = m->prev;
    m->next = m->prev = NO_SLAB;
}

/* Which part of the region a slab is in: 0 for objects of GC_GRANULE bytes and more, 1 for
 * smaller ones. */
static int slab_part(const gc_heap *heap, uint32_t si)
{
    return si >= heap->big_slabs;
}

/* Puts an empty slab on its part's free list. */
static void slab_put_free(gc_heap *heap, uint32_t si)
{
    int part = slab_part(heap, si);
    heap->slab_meta[si].next = heap->slab_free[part];
    heap->slab_free[part] = si;
    heap->slab_free_count[part]++;
    heap->slab_count--;
    heap->slab_small_count -= (uint32_t)part;
}

/* A slab for size class cls: from its part's free list, else the next unused one of the
 * part. */
static uint32_t slab_new(gc_heap *heap, uint32_t cls)
{
    int part = cls * 16 < GC_GRANULE;
    uint32_t si, end = part ? heap->region_slabs : heap->big_slabs;
    if (heap->slab_free[part] != NO_SLAB) {
        si = heap->slab_free[part];
        heap->slab_free[part] = heap->slab_meta[si].next;
        heap->slab_free_count[part]--;
    } else if (heap->slab_released[part] != NO_SLAB) {
        si = heap->slab_released[part]; /* its pages come back, zeroed, as they are touched */
        heap->slab_released[part] = heap->slab_meta[si].next;
    } else if (heap->slab_bump[part] < end) {
        si = heap->slab_bump[part]++;
    } else {
        return NO_SLAB;
    }
    uint32_t size = cls * 16;
    gc_slab_meta *m = &heap->slab_meta[si];
    memset(m, 0, sizeof *m);
    m->object_size = size;
    m->capacity = (uint32_t)(GC_SLAB_SIZE / size);
    m->size_class = cls;
    m->free_head = FREE_END;
    heap->slab_inv[si] = (uint32_t)(((1ull << 32) + size - 1) / size);
    size_t words, at = gc_slab_marks_at(heap, si, &words);
    memset((void *)&heap->slab_marks[at], 0, words * sizeof heap->slab_marks[0]);
    memset((void *)&heap->slab_special[at], 0, words * sizeof heap->slab_special[0]);
    heap->slab_count++;
    heap->slab_small_count += (uint32_t)part;
    partial_link(heap, cls, si);
    return si;
}

static gc_header *large_alloc(gc_heap *heap, size_t object_size)
{
    void *mem = NULL;
    if (gc_posix_memalign(&mem, 16, object_size) != 0)
        return NULL;
    memset(mem, 0, object_size);
    heap->large_count++;
    heap->large_bytes += object_size;
    return mem;
}

gc_header *gc_slab_alloc(gc_heap *heap, size_t payload_size)
{
    size_t object_size = round_up(sizeof(gc_header) + (payload_size ? payload_size : 16), 16);
    if (object_size > GC_SLAB_MAX_OBJECT)
        return large_alloc(heap, object_size);
    uint32_t cls = (uint32_t)(object_size / 16);
    uint32_t si = heap->slab_partial[cls];
    if (si == NO_SLAB && (si = slab_new(heap, cls)) == NO_SLAB)
        return NULL;
    gc_slab_meta *m = &heap->slab_meta[si];
    char *slab = heap->region + ((size_t)si << GC_SLAB_SHIFT);
    uint32_t slot;
    if (m->free_head != FREE_END) {
        slot = m->free_head;
        memcpy(&m->free_head, slab + (size_t)slot * m->object_size, sizeof m->free_head);
    } else {
        slot = m->bump++;
    }
    if (++m->live == m->capacity)
        partial_unlink(heap, cls, si);
    gc_header *h = (gc_header *)(slab + (size_t)slot * m->object_size);
    memset(h, 0, m->object_size);
    return h;
}

void gc_slab_free(gc_heap *heap, gc_header *h, size_t payload_size)
{
    if (!gc_in_region(heap, h)) {
        heap->large_count--;
        heap->large_bytes -= round_up(sizeof(gc_header) + payload_size, 16);
        free(h);
        return;
    }
    uint32_t si = gc_slab_index(heap, h);
    gc_slab_meta *m = &heap->slab_meta[si];
    uint32_t *dying = &heap->slab_dying[si];
    if ((gc_flags(h) & GC_F_UNREACHABLE) && *dying > 0)
        (*dying)--; /* h was gathered (only the collector thread counts these) */
    if (!m->going && *dying + 1 == m->live) {
        /* Everything left in the slab is garbage being purged: it goes back whole. Off the
         * partial list, so nothing is allocated in it meanwhile; slots are not relinked. */
        if (m->live < m->capacity)
            partial_unlink(heap, m->size_class, si);
        m->going = 1;
    }
    if (m->going) {
        if (--m->live == 0) {
            m->going = 0;
            slab_put_free(heap, si);
        }
        return;
    }
    uint32_t slot = gc_slab_slot(heap, si, h);
    if (m->live == m->capacity)
        partial_link(heap, m->size_class, si);
    memcpy(h, &m->free_head, sizeof m->free_head);
    m->free_head = slot;
    if (--m->live == 0) { /* empty: any size class may have it next */
        partial_unlink(heap, m->size_class, si);
        slab_put_free(heap, si);
    }
}

static int slab_order(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Gives back empty slabs beyond the reserve, a batch per lock: the batch is sorted so that
 * neighbouring slabs go back in one madvise call (whole huge pages are then dropped whole
 * instead of being split). */
bool gc_slabs_release(gc_heap *heap, double deadline)
{
    enum { BATCH = HUGE_PAGE >> GC_SLAB_SHIFT }; /* a run of them can drop a huge page whole */
    uint32_t batch[BATCH];
    for (;;) {
        uv_mutex_lock(&heap->alloc_lock);
        uint32_t keep = heap->slab_count / 4 > GC_SLABS_KEPT ? heap->slab_count / 4 : GC_SLABS_KEPT;
        uint32_t n = 0;
        while (n < BATCH && heap->slab_free_count[0] + heap->slab_free_count[1] > keep) {
            int part = heap->slab_free_count[1] > heap->slab_free_count[0];
            uint32_t si = heap->slab_free[part];
            heap->slab_free[part] = heap->slab_meta[si].next;
            heap->slab_free_count[part]--;
            heap->slab_meta[si].next = heap->slab_released[part];
            heap->slab_released[part] = si;
            batch[n++] = si;
        }
        qsort(batch, n, sizeof batch[0], slab_order);
        for (uint32_t i = 0, run; i < n; i += run) {
            for (run = 1; i + run < n && batch[i + run] == batch[i] + run; run++)
                ;
            madvise(heap->region + ((size_t)batch[i] << GC_SLAB_SHIFT),
                    (size_t)run << GC_SLAB_SHIFT, MADV_DONTNEED);
        }
        bool done = heap->slab_free_count[0] + heap->slab_free_count[1] <= keep;
        uv_mutex_unlock(&heap->alloc_lock);
        gc_work_add(&heap->work_done, (uint64_t)n * (GC_WORK_UNIT / BATCH));
        if (done)
            return true;
        if (gc_past(heap, deadline))
            return false;
    }
}

/* ---- the collector's own allocations ---------------------------------------------- */

_Atomic long gc_alloc_failure_countdown = -1;

/* True when fault injection says this allocation fails. */
static bool alloc_fails(void)
{
    if (atomic_load_explicit(&gc_alloc_failure_countdown, memory_order_relaxed) < 0)
        return false;
    return atomic_fetch_sub(&gc_alloc_failure_countdown, 1) == 0;
}

void *gc_malloc(size_t n)
{
    return alloc_fails() ? NULL : malloc(n);
}

void *gc_calloc(size_t count, size_t n)
{
    return alloc_fails() ? NULL : calloc(count, n);
}

void *gc_realloc(void *p, size_t n)
{
    return alloc_fails() ? NULL : realloc(p, n);
}

char *gc_strdup(const char *s)
{
    return alloc_fails() ? NULL : strdup(s);
}

int gc_posix_memalign(void **out, size_t align, size_t n)
{
    return alloc_fails() ? -1 : posix_memalign(out, align, n);
}
