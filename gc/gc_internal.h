/*
 * gc_internal.h - the collector's private structures, shared by the files of gc/ only.
 *
 * Memory layout. Every object is a slot in a slab (gc_alloc.c): a 16-byte gc_header followed
 * by the instance (the "payload" the public API hands out). The heap's object array (UE
 * GUObjectArray) is a table of fixed-size chunks of slots; chunks never move, so a slot's
 * address is stable and readers need no lock. 16 bytes of header plus 12 of slot plus the
 * mark bits are the whole per-object cost; names, reference counts, root membership and
 * cluster membership live in side tables that only the objects using them pay for.
 *
 * The marking invariant. During reachability analysis an object is "marked" when its bit in
 * the mark table equals heap->mark_value. Starting a collection flips mark_value (UE's
 * swap of the Reachable and MaybeUnreachable flags): every object that survived the last
 * collection is unmarked at once, without a pass over the array, and objects created from then
 * on are born marked. Marking sets a bit with an atomic read-modify-write of a 64-bit word it
 * shares with neighbours, so exactly one worker wins each object; a lone worker (no other
 * thread writes mark bits while it drains: the only worker, or the caller of a parallel
 * slice before any pool thread joined) uses a plain store. When the work
 * lists are empty, every object reachable from the initial roots is marked and has been
 * scanned; the rest are garbage. Permanent objects are
 * never marked, scanned or freed.
 *
 * The barrier's duty. While an incremental mark is suspended the program runs and may store a
 * reference to an unmarked object into an object that was already scanned. gc_write_barrier
 * marks such a target and queues it, so that the next slice scans it: no reference created
 * during marking can hide an object from the collector.
 */
#ifndef REAP_GC_INTERNAL_H
#define REAP_GC_INTERNAL_H

#include "reap_gc.h"

#include <stdatomic.h>
#include <uv.h>

/* ---- checked invariants ------------------------------------------------------------- */

/* GC_ASSERT(cond) checks an invariant the code relies on in the checked builds (gc/module.mk
 * defines GC_CHECKS for the asan and tsan variants) and costs nothing in release builds.
 * GC_CHECKED(expr) always evaluates expr and, in checked builds, asserts that it is true. */
#ifdef GC_CHECKS
void gc_assert_failed(const char *cond, const char *file, int line);
#define GC_ASSERT(cond) ((cond) ? (void)0 : gc_assert_failed(#cond, __FILE__, __LINE__))
#define GC_CHECKED(expr) GC_ASSERT(expr)
#else
#define GC_ASSERT(cond) ((void)0)
#define GC_CHECKED(expr) ((void)(expr))
#endif

/* ---- object header and item ---------------------------------------------------------- */
/* (The header layout above is per object; mark bits live beside the objects, in the mark
 * bytes of the slab that holds them: see gc_alloc.c.) */

/* Flag bits of gc_header.flags (atomic: marking sets MARK from several threads). */
enum {
    GC_F_LARGE_MARK = 1u << 0,      /* mark bit of an object outside the slab region */
    GC_F_ROOT = 1u << 1,            /* in the root set */
    GC_F_GARBAGE = 1u << 2,         /* explicitly marked as garbage */
    GC_F_PERMANENT = 1u << 3,       /* created in the disregard-for-GC pool */
    GC_F_UNREACHABLE = 1u << 4,     /* gathered as unreachable; being destroyed */
    GC_F_CLUSTER_ROOT = 1u << 5,    /* roots a cluster */
    GC_F_IN_CLUSTER = 1u << 6,      /* member of a cluster (item.cluster_index = its root) */
    GC_F_BEGIN_DESTROYED = 1u << 7,
    GC_F_FINISH_DESTROYED = 1u << 8,
    GC_F_PINNED = 1u << 9,          /* has an entry in the pin table */
    GC_F_NAMED = 1u << 10,          /* has an entry in the name table */
    GC_F_IS_CLASS = 1u << 11,       /* the payload is a gc_class */
    GC_F_GARBAGE_MARK = 1u << 12,   /* a garbage object in the region, marked this cycle by an
                                     * immutable reference (see gc_try_mark) */
    GC_F_OBJ_SHIFT = 16,            /* GC_OBJ_* user and internal flags live above here */
};

#define GC_OBJ_FLAGS_MASK ((uint32_t)(GC_OBJ_USER_MASK | GC_OBJ_INTERNAL_ROOT_MASK))
#define GC_F_FROM_OBJ(f) ((uint32_t)(f) << GC_F_OBJ_SHIFT)
#define GC_F_TO_OBJ(f) (((uint32_t)(f) >> GC_F_OBJ_SHIFT) & GC_OBJ_FLAGS_MASK)

#define GC_INDEX_NONE UINT32_MAX

/* Flags that make an object "special": marking it must read its header. */
#define GC_F_SPECIAL (GC_F_GARBAGE | GC_F_PERMANENT | GC_F_IN_CLUSTER | GC_F_CLUSTER_ROOT)

typedef struct gc_header {
    uint32_t class_id;       /* index into heap->classes */
    uint32_t outer_index;    /* object index of the outer, GC_INDEX_NONE for none */
    _Atomic uint32_t flags;  /* GC_F_* */
    uint32_t index;          /* own index in the object array */
} gc_header;

_Static_assert(sizeof(gc_header) == 16, "the header keeps payloads 16-byte aligned");

/* The object array's slots, kept as two arrays per chunk (12 bytes a slot, not 16 padded):
 * the object, and its weak-handle serial (0 = none issued yet; while the slot is free, the
 * next free slot). Which cluster a clustered object belongs to is in heap->cluster_of. */
typedef struct gc_chunk {
    _Atomic(gc_header *) objects[1u << 16];
    _Atomic uint32_t serials[1u << 16];
} gc_chunk;

/* ---- object memory (gc_alloc.c) ------------------------------------------------------- */

#define GC_SLAB_SHIFT 16
#define GC_SLAB_SIZE ((size_t)1 << GC_SLAB_SHIFT)
#define GC_SLAB_MAX_OBJECT 2048   /* bytes, header included; larger: malloc, mark in header */
#define GC_SLAB_CLASSES (GC_SLAB_MAX_OBJECT / 16 + 1)
#define GC_SLAB_MIN_OBJECT 32
#define GC_SLAB_SLOT_SHIFT 11     /* at most GC_SLAB_SIZE / GC_SLAB_MIN_OBJECT slots a slab */
_Static_assert(GC_SLAB_SIZE / GC_SLAB_MIN_OBJECT == 1u << GC_SLAB_SLOT_SHIFT, "slots a slab");

/* An object's mark bit sits in a table beside the slabs (heap->slab_marks), and at the same
 * place in a second table (heap->slab_special) its "special" bit, which sends marking to the
 * header. The bit is found by shifts alone: the region has two parts, and in the first
 * (objects of GC_GRANULE bytes and more, the common case) an object owns the bit of the
 * 64-byte granule its header starts in, since no two such objects start in one granule; in
 * the second (the 32- and 48-byte classes) the granule is 32 bytes. So no division by the
 * object size and no table load stand between a reference and its bit, at the price of a
 * table a little sparser than one bit a slot (80-byte objects use 4 bits in 5: a million of
 * them take 156 KiB, which stays in L2 beside the objects streaming through). Marking reads
 * the mark table for every reference; the special table only for a reference to an object
 * not marked yet (about one in five), so a marked object is never special to the marker.
 * The tables are arrays of 64-bit words, so one load and one bit test decide a reference.
 * Setting a mark is an atomic read-modify-write of a word shared with neighbours; it also
 * makes exactly one worker win each object, so no object is scanned twice. */
#define GC_GRANULE_SHIFT 6
#define GC_GRANULE ((size_t)1 << GC_GRANULE_SHIFT)
#define GC_SMALL_GRANULE_SHIFT 5  /* = log2(GC_SLAB_MIN_OBJECT) */
_Static_assert(GC_SLAB_MIN_OBJECT == 1u << GC_SMALL_GRANULE_SHIFT, "small granule");
#define GC_SLAB_MARK_BYTES (GC_SLAB_SIZE >> (GC_GRANULE_SHIFT + 3)) /* a slab of the first part */
#define GC_SMALL_PART_DIVISOR 4   /* the second part is a quarter of the first's size */

#define GC_BITS_SHIFT 6           /* 64 bits a word */

/* Where an object's bits are: its word in the mark table (the special word is at the same
 * offset in the special table), and its bit in it. */
typedef struct gc_mark_loc {
    _Atomic uint64_t *word;
    uint64_t bit;
} gc_mark_loc;

/* Allocation bookkeeping of one slab (a side table: marking never reads it). */
typedef struct gc_slab_meta {
    uint32_t next, prev;          /* partial list of its class, or the free-slab list */
    uint32_t object_size;         /* header included, multiple of 16 */
    uint32_t capacity;
    uint32_t live;
    uint32_t bump;                /* slots [0, bump) were handed out at some time */
    uint32_t free_head;           /* freed slots, linked through their first 4 bytes */
    uint32_t size_class;
    uint32_t going;               /* all its live objects are being purged: off the partial
                                     list, freed without relinking slots (gc_slab_free) */
} gc_slab_meta;

gc_result gc_region_init(gc_heap *heap, size_t region_bytes);
void gc_region_close(gc_heap *heap);
gc_header *gc_slab_alloc(gc_heap *heap, size_t payload_size); /* zeroed; alloc_lock held */
void gc_slab_free(gc_heap *heap, gc_header *h, size_t payload_size); /* alloc_lock held */
/* Gives the memory of empty slabs back to the system, keeping some for reuse (see
 * gc_alloc.c); returns how many slabs it released. Takes alloc_lock. */
bool gc_slabs_release(gc_heap *heap, double deadline); /* true when done */

#define GC_CHUNK_SHIFT 16
#define GC_CHUNK_ITEMS (1u << GC_CHUNK_SHIFT)

static inline void *gc_payload(gc_header *h) { return h + 1; }
static inline gc_header *gc_hdr(const void *payload) { return (gc_header *)payload - 1; }

/* ---- classes and compiled schemas ---------------------------------------------------- */

typedef enum gc_op_kind {
    GC_OP_END = 0,
    GC_OP_REF,
    GC_OP_REF_ARRAY,
    GC_OP_STRUCT_ARRAY,
    GC_OP_STRUCT_ARO,
    GC_OP_OBJECT_ARO,   /* class-level add_referenced_objects, called with the payload */
    GC_OP_REF_RUN,      /* `stride` consecutive references from offset (marking schema only) */
} gc_op_kind;

typedef struct gc_schema_op {
    uint32_t kind;
    uint32_t offset;
    uint32_t stride;                   /* STRUCT_ARRAY */
    const struct gc_schema_op *inner;  /* STRUCT_ARRAY, END-terminated */
    gc_add_refs_fn fn;                 /* STRUCT_ARO, OBJECT_ARO */
    const char *name;
} gc_schema_op;

struct gc_class {
    char *name;
    size_t size;
    gc_class *super;
    uint32_t flags;                 /* GC_CLASS_* */
    uint32_t id;                    /* index into heap->classes */
    gc_schema_op *schema;           /* END-terminated, super's ops first */
    uint32_t schema_len;
    gc_schema_op *mark_schema;      /* the same with adjacent REFs merged into REF_RUNs: what
                                       marking runs (diagnostics run `schema`, which names
                                       every member) */
    uint32_t run_offset, run_count; /* run_count > 0: the mark schema is that many
                                       references from run_offset and nothing else, which
                                       marking scans without the op loop */
    gc_schema_op **inner_schemas;   /* owned inner op lists, freed with the class */
    uint32_t inner_count;
    gc_class_hooks hooks;           /* own or inherited */
};

/* ---- allocation ------------------------------------------------------------------------ */

/* Every allocation of the collector goes through these, so that tests can make the Nth one
 * fail (gc_testing_fail_allocation) and check that the failing operation reports it and leaves
 * no half-done state. Off, they cost one relaxed load. */
void *gc_malloc(size_t n);
void *gc_calloc(size_t count, size_t n);
void *gc_realloc(void *p, size_t n);
char *gc_strdup(const char *s);
int gc_posix_memalign(void **out, size_t align, size_t n);
extern _Atomic long gc_alloc_failure_countdown; /* < 0: off; 0: the next allocation fails */

/* ---- small hash tables --------------------------------------------------------------- */

#include "gc_map.h"

/* The growth rule of every array of the collector: the capacity doubles (starting at
 * `first`) and data is reallocated for it. Returns the (maybe moved) array with *capacity
 * updated, or NULL (data and *capacity unchanged) when memory runs out or the capacity
 * would pass UINT32_MAX. Call it when the array is full. */
void *gc_grow(void *data, size_t elem_size, uint32_t *capacity, uint32_t first);

/* A growable array of 32-bit values (object indices, cluster ids). */
typedef struct gc_u32_vec {
    uint32_t *data;
    uint32_t count;
    uint32_t capacity;
} gc_u32_vec;

gc_result gc_u32_vec_push(gc_u32_vec *v, uint32_t x);
bool gc_u32_vec_remove(gc_u32_vec *v, uint32_t x); /* first occurrence, order not kept */
void gc_u32_vec_free(gc_u32_vec *v);

/* A growable array of pointers (work lists, unreachable lists). */
typedef struct gc_ptr_vec {
    void **data;
    size_t count;
    uint32_t capacity;
} gc_ptr_vec;

gc_result gc_ptr_vec_push(gc_ptr_vec *v, void *p);
/* Gives the pages wholly inside [p, p + n) back to the system; they read as zero when touched
 * again. The memory stays allocated: it is freed as usual. */
void gc_pages_discard(void *p, size_t n);
/* Makes room for n entries in all, so that pushes up to n need no allocation. */
gc_result gc_ptr_vec_reserve(gc_ptr_vec *v, size_t n);
void gc_ptr_vec_push_reserved(gc_ptr_vec *v, void *p); /* room was reserved: cannot fail */
void gc_ptr_vec_free(gc_ptr_vec *v);

/* ---- marking work ----------------------------------------------------------------------*/

/* Marking processes objects in blocks (UE FWorkBlock). What a worker finds goes first into a
 * small private stack (`pushed`), then, GC_PUSH_BUFFER / 2 at a time, into its current block;
 * a block that fills up goes on its list of full blocks. The current block, the full blocks
 * and the pieces of long arrays are all stealable, under the worker's work_lock: a thief
 * takes a piece, a full block, or the older half of the current block. So what nobody else
 * can mark when the scheduler takes a worker's CPU away is at most the private stack and
 * the prefetch FIFO (a few dozen objects), and the lock is taken once per
 * GC_PUSH_BUFFER / 2 objects. A lone worker takes no lock, and its private stack is
 * GC_PUSH_BUFFER_ALONE long (nobody could steal from it anyway), so that it moves objects
 * between its stack and its blocks an eighth as often. */
#define GC_WORK_BLOCK_CAPACITY 512
#define GC_PUSH_BUFFER 32
#define GC_PUSH_BUFFER_ALONE 256
#define GC_STEAL_MIN 16   /* a thief takes half of a current block holding at least this */

typedef struct gc_work_block {
    struct gc_work_block *next;
    uint32_t count;
    gc_header *objs[GC_WORK_BLOCK_CAPACITY];
} gc_work_block;

/* Arrays longer than this are scanned in pieces of this many references, so that one huge
 * array cannot blow an incremental slice's time limit. A piece is found again through its
 * object and offset each time, never through a saved data pointer: the program may grow
 * (and so move) the array between slices. */
#define GC_ARRAY_PIECE 2048

typedef struct gc_array_range {
    gc_header *obj;
    uint32_t offset;            /* of the gc_ref_array in the payload */
    uint32_t start;             /* next element to scan */
} gc_array_range;

#define GC_SCAN_AHEAD 8  /* objects prefetched ahead of the scanner (a power of two) */

/* One marker's state; the public gc_collector is this. */
struct gc_collector {
    gc_heap *heap;
    uint32_t mark_value;        /* copy of heap->mark_value for the hot loop */
    bool no_prefetch;           /* settings.no_prefetch, for measuring what prefetching buys */
    bool alone;                 /* no other thread writes mark bits while it drains (the only
                                   worker of this mark, scope guards being locked out, or the
                                   caller of a parallel slice before anyone joined), so it
                                   sets them with a plain store and takes no lock */
    _Atomic bool *join;         /* the caller of a parallel slice, marking alone: set when a
                                   pool thread wants to join (gc_parallel.c) */
    gc_header *pushed[GC_PUSH_BUFFER_ALONE]; /* found, marked, not yet in a block (a stack,
                                   GC_PUSH_BUFFER long unless alone);
                                   private */
    uint32_t pushed_count;
    /* Stealable, guarded by work_lock (not taken when alone): */
    gc_work_block *block;       /* being filled and drained (a stack) */
    gc_work_block *full;        /* full blocks */
    gc_array_range *ranges;     /* pending pieces of long arrays (a stack) */
    _Atomic uint32_t range_count; /* (atomic: the owner peeks at it without the lock) */
    uint32_t range_capacity;
    atomic_flag work_lock;
    _Atomic uint32_t stealable; /* objects in block and full + ranges: thieves peek at it */
    gc_work_block *spare;       /* empty blocks for reuse; private (see gc_block_get) */
    uint32_t spare_count;
    bool direct;                /* take every reference through the header path (visit
                                   mode, edge logs) */
    /* Diagnostics: when set, references are reported to visit instead of being marked,
     * and nothing is nulled (reference chain search). */
    void (*visit)(gc_collector *w, gc_header *target);
    void *visit_userdata;
    const gc_class *last_class; /* class marked by this worker in this mark (skip it next) */
    gc_header *scanning;        /* object whose references are being reported */
    const char *scanning_member;/* schema member being scanned, for diagnostics */
    struct gc_edge_log *edges;  /* first-reach edges (gc.HistorySize) */
    struct gc_edge_log *garbage_edges; /* nulled references to garbage */
    uint64_t stolen;            /* pieces of work it took from others */
    _Atomic uint64_t work_done; /* see GC_WORK_UNIT; written by this worker only */
    uint32_t worker_index;
};

/* ---- diagnostics --------------------------------------------------------------------- */

/* An edge noted during marking: `from` (GC_INDEX_NONE for a root) reached `to` through
 * `member`. Workers append to their own log; the logs are merged after the mark. */
typedef struct gc_edge {
    uint32_t to;
    uint32_t from;
    const char *member;
} gc_edge;

typedef struct gc_edge_log {
    gc_edge *data;
    size_t count;
    uint32_t capacity;
} gc_edge_log;

void gc_edge_log_push(gc_edge_log *log, uint32_t to, uint32_t from, const char *member);

/* One collection's first-reach record (gc.HistorySize keeps a ring of them). */
typedef struct gc_history_entry {
    uint64_t collection;      /* stats.collections when it was taken; 0 = empty */
    gc_edge *edges;           /* sorted by `to` */
    size_t count;
} gc_history_entry;

/* ---- clusters -------------------------------------------------------------------------- */

/* A cluster (UE FUObjectCluster): a root and the objects it owns, marked as one unit. When the
 * root is reached, it and every member are marked without being scanned; what they referenced
 * outside the cluster when it was built (or since, through gc_object_reference_stored) is
 * kept in mutable_objs and referenced, and marked in their stead. Links between clusters are
 * kept both ways so that dissolving one can cascade to the clusters that reference it. */
typedef struct gc_cluster {
    uint32_t root_index;         /* GC_INDEX_NONE while the slot is free */
    uint32_t next_free;
    gc_ptr_vec members;          /* gc_header*, root excluded (members outlive no cluster:
                                    one is dissolved before any member is freed) */
    gc_weak *mutable_objs;       /* objects outside any cluster that members reference */
    uint32_t mutable_count, mutable_capacity;
    gc_u32_vec referenced;       /* ids of clusters members reference */
    gc_u32_vec referenced_by;    /* ids of clusters that reference this one */
    _Atomic bool needs_dissolving; /* a mutable object turned garbage: dissolve after mark */
} gc_cluster;

/* ---- the heap ------------------------------------------------------------------------ */

typedef enum gc_phase {
    GC_PHASE_IDLE,           /* nothing in flight */
    GC_PHASE_BEGIN_MARK,     /* the mark bit flipped: statistics, initial roots */
    GC_PHASE_MARK,           /* reachability analysis (suspended between slices) */
    GC_PHASE_GATHER,         /* collecting unmarked objects into the unreachable list */
    GC_PHASE_BEGIN_DESTROY,  /* unhash + begin_destroy */
    GC_PHASE_FINISH_DESTROY, /* finish_destroy once ready; pending list */
    GC_PHASE_FREE,           /* destructors, memory, indices */
    GC_PHASE_RELEASE,        /* memory no longer needed goes back to the system */
} gc_phase;

typedef struct gc_callback {
    gc_event_fn fn;
    void *userdata;
} gc_callback;

struct gc_referencer {
    struct gc_referencer *next;
    struct gc_referencer *prev;
    char *name;
    gc_add_refs_fn fn;
    void *userdata;
};

typedef struct gc_name_entry {
    char *name;
    uint32_t index;          /* object index; next free entry while unused */
    uint32_t outer_index;
    uint64_t path_key;       /* key in names_by_path */
    uint32_t next_same_key;  /* next entry with the same path key, UINT32_MAX ends */
} gc_name_entry;

/* Whether the marker threads make marking faster on this heap, measured (gc_parallel.c):
 * the work a second of marking did in the marks they joined and in the marks the caller ran
 * alone, and how many marks are left to run without them after they were slower. A heap's
 * graph changes slowly from one mark to the next, so its marks are comparable. */
typedef struct gc_helper_rates {
    double last[3];                 /* GC_WORK_UNIT a second of the kind's last marks */
    uint32_t count, next;           /* samples held (at most 3), where the next goes */
    uint64_t at;                    /* the record's `marks` at the last sample */
} gc_helper_rates;
typedef struct gc_helper_record {
    gc_helper_rates alone, helped;  /* marks the caller ran alone, and marks they joined */
    uint64_t marks;                 /* marks recorded */
    uint32_t objects;               /* objects the last mark could mark (its candidates) */
    uint32_t benched;               /* marks left on the bench, the trial included */
    uint32_t unjoined;              /* marks in a row they were invited to and none joined */
} gc_helper_record;

struct gc_heap {
    gc_settings settings;
    gc_clock_fn clock;
    void *clock_userdata;

    /* object array */
    gc_chunk **chunks;             /* max_chunks pointers, allocated on demand */
    uint32_t *chunk_live;          /* per chunk: objects in it (alloc_lock) */
    bool *chunk_released;          /* per chunk: its empty objects[] pages were given back */
    uint32_t max_chunks;
    uint32_t max_objects;
    _Atomic uint32_t high_water;   /* indices [0, high_water) have been handed out */
    uint32_t free_head;            /* free slots, linked through their serials */
    uint32_t free_count;
    _Atomic uint32_t live_count;   /* live objects (permanent included) */
    uint32_t permanent_count;
    _Atomic uint32_t next_serial;
    uv_mutex_t alloc_lock;         /* index and memory allocation from several threads */
    char *region;                  /* reserved address space the slabs are cut from: */
    size_t region_bytes;           /* both parts */
    size_t region_big;             /* bytes of the first part (64-byte granules) */
    uint32_t region_slabs;
    uint32_t big_slabs;            /* slabs [0, big_slabs) are the first part */
    size_t small_marks_at;         /* the word where the second part's bits start */
    size_t mark_table_bytes;
    uint32_t *slab_inv;            /* per slab: ceil(2^32 / object size) */
    _Atomic uint64_t *slab_marks;  /* a mark bit a granule */
    _Atomic uint64_t *slab_special; /* a special bit a granule (same layout) */
    gc_slab_meta *slab_meta;
    uint32_t slab_partial[GC_SLAB_CLASSES]; /* per size class: slabs with free slots */
    /* per part of the region: */
    uint32_t slab_free[2];         /* empty slabs whose memory is still committed */
    uint32_t slab_free_count[2];   /* length of slab_free */
    uint32_t slab_released[2];     /* empty slabs given back to the system (MADV_DONTNEED) */
    uint32_t slab_bump[2];         /* the part's slabs below slab_bump were used */
    uint32_t slab_count;           /* slabs holding objects */
    uint32_t slab_small_count;     /* of them, in the second part */
    uint32_t large_count;          /* objects malloc'ed outside the region */
    size_t large_bytes;

    /* classes */
    gc_class **classes;            /* by id; NULL slots free */
    uint32_t max_classes;
    uint32_t class_count;          /* ids in [0, class_count) used at some time */
    gc_class *class_class;         /* the metaclass "Class" */

    /* side tables (protected by table_lock) */
    uv_mutex_t table_lock;
    gc_map names_by_index;         /* index -> name entry id */
    gc_map names_by_path;          /* hash(outer, name) -> name entry id (chained by probe) */
    gc_name_entry *name_entries;
    uint32_t name_entry_count, name_entry_capacity;
    uint32_t name_entry_free;      /* free list through .index */
    gc_map pins;                   /* index -> ref count, for every object that is rooted,
                                      ref-counted or has internal root flags */

    gc_referencer *referencers;
    gc_ptr_vec callbacks[GC_EVENT_COUNT_]; /* gc_callback* (fn NULL: removed while firing) */
    uint32_t firing[GC_EVENT_COUNT_];      /* gc_fire calls in progress per event */

    /* disregard pool */
    bool disregard_open;
    bool disregard_closed;

    /* GC lock */
    uv_mutex_t lock_mutex;
    uv_cond_t lock_cond;
    uint32_t guards_active;        /* threads inside a scope guard */
    bool gc_locked;                /* a collection holds the lock */
    bool gc_waiting;               /* a collection waits for guards to leave */
    uint32_t try_collect_failures_in_row;

    /* collection state */
    gc_phase phase;
    uint32_t mark_value;           /* the mark bit value (0 or 1) that means "marked" */
    uint32_t mark_candidates;      /* objects that could be marked when the mark began: each
                                      ends marked or gathered (stats.marked = the rest) */
    uint32_t keep_flags;           /* of the collection in flight */
    bool full_purge;               /* of the collection in flight */
    bool mark_done_pending_gather; /* marking finished; unmarked means unreachable */
    bool reachability_pending;     /* marking (or the gather that ends it) is in flight */
    bool purge_stuck;              /* a full purge gave up waiting on finish_destroy */
    bool in_collect;               /* inside gc_collect / gc_try_collect (callbacks too) */
    gc_collector main_worker;      /* worker 0: the thread that runs the collection */
    gc_collector *workers[GC_MAX_WORKERS]; /* [0] = &main_worker; others made on demand */
    uint32_t mark_workers;         /* workers taking part in the mark in flight */
    gc_work_block *block_pool;     /* empty work blocks the workers share (gc_block_get) */
    _Atomic uint32_t block_pool_count; /* (atomic: peeked at without the lock) */
    _Atomic uint64_t blocks_allocated; /* work blocks ever allocated (for tests) */
    atomic_flag block_pool_lock;   /* taken by workers that do not mark alone */
    _Atomic uint32_t idle_workers; /* workers looking for work to steal */
    struct gc_pool *pool;          /* marker threads (gc_parallel.c), NULL until needed */
    bool marker_threads_held;      /* tests: pool threads never ask to join */
    gc_helper_record helpers;      /* whether marker threads help this heap (gc_parallel.c) */
    bool helpers_invited;          /* the mark in flight invites them */
    uint32_t helpers_joined;       /* slices of the mark in flight a marker thread joined */
    uint64_t mark_work;            /* GC_WORK_UNIT the mark in flight did so far */
    double mark_run_seconds;       /* its wall time in gc_mark_run so far */
    gc_ptr_vec unreachable;        /* gc_header* gathered that need begin/finish_destroy work
                                      (hooks, a name, classes) */
    gc_ptr_vec unreachable_plain;  /* gc_header* gathered that only need freeing */
    uint32_t *slab_dying;          /* per slab: gathered objects not yet freed (collector
                                      thread only) */
    size_t gather_cursor;          /* next object index to gather */
    size_t purge_cursor;           /* into unreachable, then (free) into unreachable_plain;
                                      (release) into the part in progress */
    uint32_t release_part;         /* what the release step gives back now (gc_purge.c) */
    size_t release_offset;         /* bytes of the list in progress given back */
    gc_ptr_vec pending_finish;     /* gc_header* not yet ready for finish_destroy */
    gc_ptr_vec purge_classes;      /* class objects freed after their instances */
    uint32_t delayed_slices;       /* slices skipped for gc.DelayReachabilityIterations */
    _Atomic bool barrier_active;   /* an incremental mark is in flight */
    uv_mutex_t barrier_lock;
    uv_mutex_t cluster_lock;       /* cluster tables, against barriers of guarded threads */
    gc_ptr_vec barrier_queue;      /* gc_header* marked by the barrier, to be scanned */
    gc_ptr_vec barrier_clusters;   /* cluster roots the barrier reached, to be marked */

    /* clusters */
    gc_map cluster_of;             /* index+1 -> cluster id, for roots and members */
    gc_cluster *clusters;
    uint32_t cluster_capacity;     /* slots in clusters */
    uint32_t cluster_free;         /* free slot list through next_free */
    uint32_t cluster_live;         /* clusters in use */

    gc_stats stats;
    _Atomic uint64_t work_done;    /* sliced work of the collector thread (GC_WORK_UNIT) */

    /* diagnostics */
    gc_line_fn diag_fn;
    void *diag_userdata;
    gc_history_entry *history;     /* ring of settings.history_size entries */
    uint32_t history_capacity;
    uint32_t history_next;
    char **garbage_lines;          /* last collection's garbage references, as text */
    uint32_t garbage_line_count;
};

/* ---- functions shared between gc files ------------------------------------------------ */

double gc_now(const gc_heap *heap);

static inline _Atomic(gc_header *) *gc_object_slot(const gc_heap *heap, uint32_t index)
{
    return &heap->chunks[index >> GC_CHUNK_SHIFT]->objects[index & (GC_CHUNK_ITEMS - 1)];
}
static inline _Atomic uint32_t *gc_serial_slot(const gc_heap *heap, uint32_t index)
{
    return &heap->chunks[index >> GC_CHUNK_SHIFT]->serials[index & (GC_CHUNK_ITEMS - 1)];
}
static inline gc_header *gc_object_at(const gc_heap *heap, uint32_t index)
{
    return atomic_load_explicit(gc_object_slot(heap, index), memory_order_acquire);
}
static inline uint32_t gc_high_water(const gc_heap *heap)
{
    return atomic_load_explicit(&((gc_heap *)heap)->high_water, memory_order_acquire);
}
static inline gc_class *gc_class_of(const gc_heap *heap, const gc_header *h)
{
    return heap->classes[h->class_id];
}
static inline uint32_t gc_flags(const gc_header *h)
{
    return atomic_load_explicit(&((gc_header *)h)->flags, memory_order_relaxed);
}
static inline void gc_flags_set(gc_header *h, uint32_t f)
{
    atomic_fetch_or_explicit(&h->flags, f, memory_order_relaxed);
}
static inline void gc_flags_clear(gc_header *h, uint32_t f)
{
    atomic_fetch_and_explicit(&h->flags, ~f, memory_order_relaxed);
}

/* object array (gc_object_array.c) */
gc_result gc_array_init(gc_heap *heap, uint32_t max_objects);
void gc_array_close(gc_heap *heap);
/* Allocates an object's memory (zeroed) and an index for it; its header's index is set. */
gc_result gc_array_alloc(gc_heap *heap, size_t payload_size, gc_header **out_h);
void gc_array_free(gc_heap *heap, gc_header *h, size_t payload_size);
void gc_array_free_locked(gc_heap *heap, gc_header *h, size_t payload_size); /* alloc_lock */
/* Gives back the pages of the object slots of chunks that hold no object (they read as NULL
 * when touched again); the free list, kept in the serials, stays. A chunk at a time, from
 * chunk *cursor on, until the deadline; true when every chunk was seen. Takes alloc_lock. */
bool gc_array_release(gc_heap *heap, size_t *cursor, double deadline);
size_t gc_array_committed_bytes(const gc_heap *heap); /* alloc_lock held */

/* objects (gc_object.c) */
gc_result gc_object_alloc(gc_heap *heap, gc_class *cls, uint32_t outer_index,
                          const char *name, uint32_t create_flags, gc_header **out_h);
void gc_object_unhash(gc_heap *heap, gc_header *h);
void gc_object_free(gc_heap *heap, gc_header *h);
/* Whether a gathered object needs the begin/finish_destroy passes (hooks, a name, a class) or
 * only freeing. */
bool gc_object_needs_destroy_passes(const gc_heap *heap, const gc_header *h);
/* Checks the common preconditions of operations on a live object. */
gc_result gc_check_live(const gc_heap *heap, const void *obj);

/* names (gc_name.c): takes name for the object at index under outer; a dying object holding
 * it gives it up; GC_E_EXISTS if a live one holds it. */
gc_result gc_name_claim(gc_heap *heap, uint32_t index, uint32_t outer_index, const char *name);

/* pins (gc_pin.c) */
/* Keeps the pin table entry of h in step with its root flag, ref count (changed by
 * ref_delta) and internal root flags. Only adding an entry can fail (GC_E_NOMEM, nothing
 * changed); updating or removing one cannot. */
gc_result gc_pin_update(gc_heap *heap, gc_header *h, int32_t ref_delta);
void gc_pin_forget(gc_heap *heap, gc_header *h);
/* Calls fn for every object the pin table makes an initial root, with the reason ("root set",
 * "reference count", "internal root flag"); table_lock is held meanwhile. */
void gc_pins_foreach(gc_heap *heap, void (*fn)(gc_header *h, const char *why, void *userdata),
                     void *userdata);
/* True once h is known to be garbage: gathered, or unmarked after marking completed. */
bool gc_header_is_unreachable(const gc_heap *heap, const gc_header *h);

/* classes (gc_class.c) */
gc_result gc_class_bootstrap(gc_heap *heap);
void gc_class_release(gc_heap *heap, gc_class *cls);

/* GC lock (gc_lock.c) */
void gc_lock_init(gc_heap *heap);
void gc_lock_close(gc_heap *heap);
bool gc_lock_acquire(gc_heap *heap, bool wait);
bool gc_lock_is_free(gc_heap *heap);   /* no scope guard held right now */
void gc_lock_release(gc_heap *heap);

/* marking (gc_mark.c) */
/* Flips the mark bit and reserves the room the collection's lists need; GC_E_NOMEM (nothing
 * changed) when it cannot. */
gc_result gc_mark_flip(gc_heap *heap);
void gc_mark_begin(gc_heap *heap);   /* after the flip: the workers, the initial roots */
/* After a collection: gives back the pages of those lists that are empty and hold room for
 * more than GC_LIST_KEPT entries (untouched room costs nothing, but the room a big purge
 * touched would stay committed), a GC_RELEASE_PIECE at a time. The room stays the list's,
 * as address space, so the next mark's reserve neither allocates nor copies; freeing it
 * instead would hand the C library a cost with no bound (trimming its heap took over a
 * millisecond for an 8 MB list). Resumes at heap->purge_cursor (the list) and
 * heap->release_offset (its bytes given back); true when done. */
#define GC_LIST_KEPT (1u << 16)
bool gc_collection_lists_release(gc_heap *heap, double deadline);
bool gc_mark_run(gc_heap *heap, double deadline);   /* true when marking is complete */
void gc_mark_end(gc_heap *heap);
void gc_worker_init(gc_collector *w, gc_heap *heap, uint32_t worker_index);
/* The lock over a worker's stealable lists (none when it marks alone). A holder may be
 * preempted, so a waiter yields the CPU after a short spin. */
void gc_work_lock(gc_collector *w);
static inline void gc_work_unlock(gc_collector *w)
{
    if (!w->alone)
        atomic_flag_clear_explicit(&w->work_lock, memory_order_release);
}
/* w's stealable count after a change made under its lock (a thief and the owner both make
 * changes, always under the lock, so a load and a store do). */
static inline void gc_stealable_add(gc_collector *w, int64_t n)
{
    uint32_t v = atomic_load_explicit(&w->stealable, memory_order_relaxed);
    atomic_store_explicit(&w->stealable, (uint32_t)((int64_t)v + n), memory_order_relaxed);
}
/* A collector in visit mode: references are reported to visit, nothing is marked or nulled. */
void gc_visitor_init(gc_collector *w, gc_heap *heap,
                     void (*visit)(gc_collector *w, gc_header *target), void *userdata);
void gc_worker_close(gc_collector *w);
void gc_worker_push(gc_collector *w, gc_header *h);
/* Moves all but the `keep` most recently found objects of w's private stack where thieves
 * can take them; w's lock is held (or w is alone). */
void gc_worker_keep_private(gc_collector *w, uint32_t keep);
/* Moves everything w holds privately (its private stack) where thieves can take it. */
void gc_worker_publish(gc_collector *w);
/* Moves everything `from` holds (private stack, blocks, array pieces) to `to`, which is
 * alone; no thread may be running either (the start of a parallel slice). */
void gc_worker_adopt(gc_collector *to, gc_collector *from);
gc_work_block *gc_block_get(gc_collector *w);            /* an empty block (spare or new) */
void gc_block_put(gc_collector *w, gc_work_block *b);    /* onto w's spares */
void gc_block_pool_close(gc_heap *heap);                 /* frees the shared spares */
void gc_worker_push_range(gc_collector *w, gc_header *obj, uint32_t offset, uint32_t start);
/* Appends a range to w's list; its lock is held (or w is alone). */
void gc_worker_push_range_locked(gc_collector *w, gc_array_range r);
bool gc_worker_drain(gc_collector *w, double deadline);
bool gc_worker_is_empty(const gc_collector *w);
/* Reports every reference of h (class, outer, schema) to w (visit mode or marking). */
void gc_scan_object(gc_collector *w, gc_header *h);

/* parallel marking (gc_parallel.c) */
bool gc_parallel_drain(gc_heap *heap, double deadline);
void gc_parallel_close(gc_heap *heap);
uint32_t gc_parallel_worker_count(const gc_heap *heap);
/* The caller of a parallel slice, marking alone, at a look at the clock: notes the CPU it
 * runs on and says whether a pool thread should be let in now (one asks, and the caller
 * holds no piece of a long array: marking through one sets bits all over the mark table,
 * which two cores would trade line by line, where scanning objects mostly reads it). */
bool gc_worker_join_poll(gc_collector *w);
/* The caller of a parallel slice, asked to let a pool thread join, marks shared from now. */
void gc_worker_go_shared(gc_collector *w);
/* Whether a pool thread waiting to join has shown that it has a CPU nothing else wants
 * (gc_parallel.c): a window of its wall and thread CPU clocks, in nanoseconds. */
typedef struct gc_join_proof {
    bool started;
    uint64_t wall_start, cpu_start;
} gc_join_proof;
/* One look of the waiting thread, after a yield: restarts the window if it lost more than
 * GC_JOIN_PROOF_SLACK_NS of it to others (or runs on the caller's CPU); true once the window
 * is GC_JOIN_PROOF_NS long. A pure function of its arguments, for tests. */
#define GC_JOIN_PROOF_NS 200000u
#define GC_JOIN_PROOF_SLACK_NS 50000u
bool gc_join_proof_update(gc_join_proof *p, uint64_t wall_ns, uint64_t cpu_ns,
                          bool on_callers_cpu);
/* Marks run without marker threads after they made marking slower than the caller alone,
 * before a mark that tries them again (the trial). */
#define GC_HELPERS_BENCHED_MARKS 8
/* A mark shorter than this (wall time in gc_mark_run) is no sample: a thread needs a fifth
 * of it to join (GC_JOIN_PROOF_NS), and a rate over so little work is mostly noise. */
#define GC_HELPERS_SAMPLE_MIN_NS 1000000u
/* A kind's rate: the median of its last three samples (the mean of two; 0: none). */
double gc_helper_rate(const gc_helper_rates *k);
/* At the start of a mark of `objects` candidates: whether to invite the marker threads to it.
 * A heap whose object count moved by more than a quarter since its last mark has a new graph
 * (a level loaded, a world dropped): what was measured of the old one is forgotten. Pure, for
 * tests. */
bool gc_helpers_invite(gc_helper_record *r, uint32_t objects);
/* A rate last sampled this many marks ago is stale: the graph may have changed since (one
 * collection of this heap's marks is no longer comparable with another's). */
#define GC_HELPERS_STALE_MARKS 32
/* Invited marks in a row that no marker thread joined (none got a CPU nothing else wanted)
 * before they are benched all the same: not woken, they cost the caller nothing at all. */
#define GC_HELPERS_UNJOINED_MARKS 2
/* At a mark's end: its rate (GC_WORK_UNIT a second; 0 when it is no sample), whether the
 * marker threads were invited to it and whether one joined it. */
void gc_helpers_record(gc_helper_record *r, double rate, bool invited, bool helped);
/* Wakes sleeping thieves if w now holds enough to steal (after w, not alone, published). */
void gc_worker_published(gc_collector *w);
bool gc_worker_steal(gc_collector *thief);  /* a piece, a full block or half a block */

/* write barrier (gc_barrier.c) */
void gc_barrier_init(gc_heap *heap);
void gc_barrier_close(gc_heap *heap);
void gc_barrier_set_active(gc_heap *heap, bool active);
void gc_barrier_drain(gc_heap *heap, gc_collector *w);  /* queue -> worker */
bool gc_barrier_is_empty(gc_heap *heap);
void gc_barrier_drain_clusters(gc_heap *heap, gc_collector *w); /* in gc_mark.c */

static inline bool gc_in_region(const gc_heap *heap, const gc_header *h)
{
    return (uintptr_t)((const char *)h - heap->region) < heap->region_bytes;
}
static inline uint32_t gc_slab_index(const gc_heap *heap, const gc_header *h)
{
    return (uint32_t)(((const char *)h - heap->region) >> GC_SLAB_SHIFT);
}
/* Exact: offsets are multiples of the object size and below 2^16, sizes at most 2^11, so the
 * rounding error of the divisor never reaches a whole slot. */
static inline uint32_t gc_slab_slot(const gc_heap *heap, uint32_t si, const gc_header *h)
{
    uint64_t off = (uint64_t)((const char *)h - heap->region) & (GC_SLAB_SIZE - 1);
    return (uint32_t)((off * heap->slab_inv[si]) >> 32);
}

/* The word where slab si's bits start in the mark tables, and (in *out_words) how many
 * words they take. */
static inline size_t gc_slab_marks_at(const gc_heap *heap, uint32_t si, size_t *out_words)
{
    if (si < heap->big_slabs) {
        *out_words = GC_SLAB_SIZE >> (GC_GRANULE_SHIFT + GC_BITS_SHIFT);
        return (size_t)si * *out_words;
    }
    *out_words = GC_SLAB_SIZE >> (GC_SMALL_GRANULE_SHIFT + GC_BITS_SHIFT);
    return heap->small_marks_at + (size_t)(si - heap->big_slabs) * *out_words;
}

/* Finds h's mark bits; false for an object outside the region (its mark bit is
 * GC_F_LARGE_MARK in its header, and it always takes the header path). */
static inline bool gc_mark_loc_of(const gc_heap *heap, const gc_header *h, gc_mark_loc *out)
{
    uintptr_t off = (uintptr_t)((const char *)h - heap->region);
    if (off < heap->region_big) {
        out->word = &heap->slab_marks[off >> (GC_GRANULE_SHIFT + GC_BITS_SHIFT)];
        out->bit = (uint64_t)1 << ((off >> GC_GRANULE_SHIFT) & 63);
        return true;
    }
    if (off >= heap->region_bytes)
        return false;
    off -= heap->region_big;
    out->word = &heap->slab_marks[heap->small_marks_at +
                                  (off >> (GC_SMALL_GRANULE_SHIFT + GC_BITS_SHIFT))];
    out->bit = (uint64_t)1 << ((off >> GC_SMALL_GRANULE_SHIFT) & 63);
    return true;
}

/* Sets (or, for mark_value 0, clears) a mark bit; true if this call changed it. Atomic:
 * other threads may set the neighbours' bits meanwhile. */
static inline bool gc_mark_bit_set(gc_mark_loc loc, uint32_t mark_value)
{
    if (mark_value)
        return !(atomic_fetch_or_explicit(loc.word, loc.bit, memory_order_relaxed) & loc.bit);
    return atomic_fetch_and_explicit(loc.word, ~loc.bit, memory_order_relaxed) & loc.bit;
}

/* Marks h (in the marking sense of the invariant above) with one atomic read-modify-write;
 * true if this call marked it, so exactly one caller wins.
 *
 * A garbage object in the region is marked in its header (GC_F_GARBAGE_MARK), never in the
 * table: the marker's fast path reads only the table, so every killable reference to it goes
 * on finding it unmarked and special, and the header path nulls it, even after an immutable
 * reference (an inner's outer, a class) has kept it for this cycle. UE tests the garbage flag
 * before the mark; a table bit set here would make the result depend on which reference was
 * scanned first. The gather turns the header mark back into the table's (gc_gather_run). */
static inline bool gc_try_mark(const gc_heap *heap, uint32_t mark_value, gc_header *h)
{
    gc_mark_loc loc;
    if (gc_flags(h) & GC_F_GARBAGE) {
        if (gc_mark_loc_of(heap, h, &loc)) {
            /* Marked in the table before it became garbage (a mark in flight): kept so. */
            if (((atomic_load_explicit(loc.word, memory_order_relaxed) & loc.bit) != 0) ==
                (mark_value != 0))
                return false;
            return !(atomic_fetch_or_explicit(&h->flags, GC_F_GARBAGE_MARK,
                                              memory_order_relaxed) & GC_F_GARBAGE_MARK);
        }
    }
    if (!gc_mark_loc_of(heap, h, &loc)) {
        if (mark_value)
            return !(atomic_fetch_or_explicit(&h->flags, GC_F_LARGE_MARK, memory_order_relaxed) &
                     GC_F_LARGE_MARK);
        return atomic_fetch_and_explicit(&h->flags, ~(uint32_t)GC_F_LARGE_MARK,
                                         memory_order_relaxed) & GC_F_LARGE_MARK;
    }
    return gc_mark_bit_set(loc, mark_value);
}

/* Objects are born marked. (A reused slot may still carry its last occupant's bit.) */
static inline void gc_mark_born(const gc_heap *heap, gc_header *h)
{
    (void)gc_try_mark(heap, heap->mark_value, h);
}

/* The word of the special table that holds the special bit of the object at loc. */
static inline _Atomic uint64_t *gc_special_word(const gc_heap *heap, gc_mark_loc loc)
{
    return heap->slab_special + (loc.word - heap->slab_marks);
}

/* Keeps h's special bit equal to whether it has any GC_F_SPECIAL flag. Call after changing
 * one of those flags (never while workers mark: the marker reads the special bit of an
 * unmarked object without the header). An object that is already marked in a mark in flight
 * is not special to that mark: references to an object made garbage meanwhile are nulled
 * by the next mark. */
static inline void gc_special_sync(const gc_heap *heap, gc_header *h)
{
    gc_mark_loc loc;
    if (!gc_mark_loc_of(heap, h, &loc))
        return; /* objects outside the region always take the header path */
    _Atomic uint64_t *word = gc_special_word(heap, loc);
    if (gc_flags(h) & GC_F_SPECIAL)
        atomic_fetch_or_explicit(word, loc.bit, memory_order_relaxed);
    else
        atomic_fetch_and_explicit(word, ~loc.bit, memory_order_relaxed);
}

/* Whether h's special bit is set (false outside the region, where there is none). */
static inline bool gc_special_bit_of(const gc_heap *heap, const gc_header *h)
{
    gc_mark_loc loc;
    return gc_mark_loc_of(heap, h, &loc) &&
           (atomic_load_explicit(gc_special_word(heap, loc), memory_order_relaxed) & loc.bit);
}

static inline bool gc_is_marked(const gc_heap *heap, uint32_t mark_value, const gc_header *h)
{
    gc_mark_loc loc;
    uint32_t f = gc_flags(h);
    uint32_t set = gc_mark_loc_of(heap, h, &loc)
                       ? (atomic_load_explicit(loc.word, memory_order_relaxed) & loc.bit) != 0
                       : (f & GC_F_LARGE_MARK) != 0;
    return set == mark_value || (f & GC_F_GARBAGE_MARK); /* see gc_try_mark */
}

/* diagnostics (gc_history.c, gc_verify.c) */
void gc_history_mark_begin(gc_heap *heap);   /* gives workers edge logs (or not) */
void gc_history_mark_end(gc_heap *heap);     /* merges workers' edge logs */
void gc_history_close(gc_heap *heap);
void gc_diag(gc_heap *heap, const char *fmt, ...);

/* clusters (gc_cluster.c) */
void gc_cluster_on_member_garbage(gc_heap *heap, gc_header *h);
void gc_cluster_dissolve(gc_heap *heap, uint32_t cluster_id);
void gc_clusters_close(gc_heap *heap);
void gc_clusters_before_mark(gc_heap *heap);   /* gc.CreateGCClusters=0: dissolve all */
void gc_clusters_after_mark(gc_heap *heap);    /* dissolve those flagged needs_dissolving */
/* The cluster of a root or member (its GC_F_CLUSTER_ROOT or GC_F_IN_CLUSTER flag is set).
 * Marker threads call it at once: a lookup only reads, and cluster_of's keys move only in
 * a put (gc_cluster_create, refused while a mark is in flight) or in the purge's release
 * (under cluster_lock, which the barrier takes), never while markers run. */
static inline uint32_t gc_cluster_id_of(const gc_heap *heap, const gc_header *h)
{
    uint32_t id = UINT32_MAX;
    gc_map_get(&heap->cluster_of, (uint64_t)h->index + 1, &id);
    return id;
}
static inline gc_header *gc_cluster_root_of(const gc_heap *heap, const gc_header *member)
{
    return gc_object_at(heap, heap->clusters[gc_cluster_id_of(heap, member)].root_index);
}

/* gathering and purging (gc_gather.c, gc_purge.c) */
bool gc_gather_run(gc_heap *heap, double deadline);
bool gc_purge_begin_destroy(gc_heap *heap, double deadline);
bool gc_purge_finish_destroy(gc_heap *heap, double deadline);
bool gc_purge_free(gc_heap *heap, double deadline);
/* Gives back what the collection freed beyond the reserves: empty slabs, empty chunks'
 * object slots, the collection's big lists. Sliced like the purge; true when done. */
bool gc_release_run(gc_heap *heap, double deadline);

/* callbacks (gc_heap.c) */
void gc_fire(gc_heap *heap, gc_event ev);

/* Work done, counted by every sliced loop for a test's work clock (gc_testing.h), in weights
 * chosen so that what a loop does between two looks at the clock is GC_WORK_UNIT in every
 * phase: GC_TIME_CHECK_INTERVAL objects scanned, destroyed or freed; a piece of a long array;
 * 16 times as many objects gathered; a batch of 32 slabs (a huge page) or GC_RELEASE_PIECE
 * bytes of a list or a chunk's slots given back; a table of 1024 slots rebuilt. A clock that advances
 * only with this count shows a step that ignores its budget as a step that takes too long.
 * Written by one thread each (the collector's, a worker's): a relaxed load and store. */
#define GC_WORK_UNIT 1024u
#define GC_WORK_OBJECT (GC_WORK_UNIT / GC_TIME_CHECK_INTERVAL)
#define GC_RELEASE_PIECE ((size_t)1 << 20)
static inline void gc_work_add(_Atomic uint64_t *counter, uint64_t n)
{
    atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

/* Deadline helpers: a deadline of 0 means no limit. Checking the clock costs, so loops check
 * every GC_TIME_CHECK_INTERVAL items. */
#define GC_TIME_CHECK_INTERVAL 64
static inline bool gc_past(const gc_heap *heap, double deadline)
{
    return deadline > 0 && gc_now(heap) >= deadline;
}

#endif /* REAP_GC_INTERNAL_H */
