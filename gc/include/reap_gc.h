/*
 * reap_gc.h - the public interface of reap's garbage collector.
 *
 * A precise mark-sweep collector modelled on Unreal Engine 5's. Every managed object lives in
 * one heap (UE: GUObjectArray) and is described by a class whose reference schema tells the
 * collector where the object keeps references to other objects. An object survives a
 * collection when it can be reached from a root: the root set, a positive reference count,
 * the collection's keep flags, the internal root flags, or an external referencer.
 *
 * Objects are plain C structs. The collector hands out a pointer to the instance ("payload");
 * a hidden header sits just before it. References between objects are ordinary pointers to
 * payloads, stored in the members the schema names.
 *
 * Threads: one thread (the "game thread") owns the heap, creates most objects and runs
 * collections. Other threads may create objects and change roots and reference counts while
 * they hold a gc_scope_guard; a collection waits for (or, with gc_try_collect, skips) them.
 *
 * Ownership: unless a comment says otherwise, pointer arguments are borrowed for the call.
 *
 * Allocation failure is reported as GC_E_NOMEM everywhere but in three places, where dropping
 * the work would free live objects or leave objects half-destroyed; there the process aborts:
 * marking when it cannot get a 4 KiB work block or grow its list of long-array pieces,
 * linking a new cluster to the clusters it references, and gc_heap_destroy when it cannot
 * list the objects it destroys. The barrier, gathering and purging never allocate: the room
 * they need is taken before a collection starts (see gc_collect).
 */
#ifndef REAP_GC_H
#define REAP_GC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gc_heap gc_heap;
typedef struct gc_class gc_class;
typedef struct gc_collector gc_collector; /* passed to reference-reporting callbacks */

/* ---- results ------------------------------------------------------------------------- */

typedef enum gc_result {
    GC_OK = 0,
    GC_E_NULL = -1,        /* a required pointer was NULL */
    GC_E_DEAD = -2,        /* the object or handle no longer refers to a live object */
    GC_E_LIMIT = -3,       /* the heap's object limit (or class limit) is reached */
    GC_E_PERMANENT = -4,   /* the operation is not allowed on a permanent (disregarded) object */
    GC_E_GARBAGE = -5,     /* the object is marked as garbage */
    GC_E_ROOTED = -6,      /* the object is rooted or referenced-counted and cannot be garbage */
    GC_E_SCHEMA = -7,      /* a class description is malformed (offset outside instance...) */
    GC_E_NOMEM = -8,       /* out of memory */
    GC_E_LOCKED = -9,      /* the GC lock is held elsewhere (try_collect gave up) */
    GC_E_STATE = -10,      /* not allowed in the heap's current state */
    GC_E_INVALID = -11,    /* an argument is out of range */
    GC_E_EXISTS = -12,     /* an object with that name already exists under that outer */
    GC_E_NOT_FOUND = -13,
} gc_result;

/* A static, human-readable description of a result. */
const char *gc_result_str(gc_result r);

/* ---- time ---------------------------------------------------------------------------- */

/* Monotonic seconds. Injectable so that time-limit rules can be tested deterministically. */
typedef double (*gc_clock_fn)(void *userdata);

/* ---- heap ---------------------------------------------------------------------------- */

/* The most marking workers a heap takes (gc_settings.num_workers). */
#define GC_MAX_WORKERS 64

/* Settings that may change between collections (the engine maps its gc.* cvars onto these).
 * Zero-initialise then call gc_settings_default() to get UE's defaults. */
typedef struct gc_settings {
    uint32_t num_retries_before_forcing;  /* gc.NumRetriesBeforeForcingGC (10) */
    uint32_t num_workers;                 /* gc.NumWorkerThreads; 0 = number of cores, at most
                                             GC_MAX_WORKERS (more is GC_E_INVALID) */
    bool allow_incremental_reachability;  /* gc.AllowIncrementalReachability (false) */
    double incremental_reachability_time_limit; /* seconds (0.005) */
    uint32_t delay_reachability_iterations;     /* gc.DelayReachabilityIterations (0) */
    bool allow_incremental_gather;        /* gc.AllowIncrementalGather (false) */
    double incremental_gather_time_limit; /* seconds, 0 = no limit */
    bool incremental_begin_destroy;       /* gc.IncrementalBeginDestroyEnabled (true) */
    bool create_clusters;                 /* gc.CreateGCClusters (true) */
    uint32_t min_cluster_size;            /* gc.MinGCClusterSize (5) */
    uint32_t history_size;                /* gc.HistorySize (0) */
    bool garbage_reference_tracking;      /* gc.GarbageReferenceTrackingEnabled (false) */
    bool verify_assumptions;              /* gc.VerifyAssumptions (false) */
    double finish_destroy_wait_limit;     /* full purge: seconds to wait for objects not ready
                                             for finish_destroy before giving up (60) */
    bool no_prefetch;                     /* measurement only: scan without prefetching */
    bool marker_threads_normal_priority;  /* false: marking threads beyond the caller run at
                                             idle priority (SCHED_IDLE on Linux) and join a
                                             mark only once given a CPU, so that they never
                                             slow the caller or other programs down; true:
                                             at the caller's priority (tests) */
} gc_settings;

void gc_settings_default(gc_settings *out_settings);

typedef struct gc_heap_config {
    uint32_t max_objects;   /* hard limit on live objects (0 = 1 << 22) */
    uint32_t max_classes;   /* hard limit on registered classes (0 = 4096) */
    size_t max_bytes;       /* address space reserved for objects of 64 bytes up to 2 KiB
                               (0 = 4 GiB), and a quarter as much again for smaller ones;
                               reserved, not committed: memory is used as objects need it */
    gc_clock_fn clock;      /* NULL = CLOCK_MONOTONIC */
    void *clock_userdata;
    gc_settings settings;   /* all-zero = gc_settings_default() */
} gc_heap_config;

/* Creates a heap. On success *out_heap owns it; free with gc_heap_destroy. cfg may be NULL. */
gc_result gc_heap_create(const gc_heap_config *cfg, gc_heap **out_heap);

/* Destroys every object (running their lifecycle hooks, permanent objects included) and
 * frees the heap. Must not be called while another thread holds a scope guard. */
void gc_heap_destroy(gc_heap *heap);

/* Replaces the heap's settings; takes effect at the next collection or slice. */
gc_result gc_heap_configure(gc_heap *heap, const gc_settings *settings);
const gc_settings *gc_heap_settings(const gc_heap *heap);

/* Disregard-for-GC pool: objects created while it is open are permanent (never scanned,
 * never collected, destroyed only with the heap). Open it once at start-up, before any
 * ordinary object exists; closing is one-way. */
gc_result gc_disregard_open(gc_heap *heap);
gc_result gc_disregard_close(gc_heap *heap);

/* ---- classes and reference schemas ------------------------------------------------------ */

/* A growable array of references, as stored in an object (UE: TArray<UObject*>). The collector
 * reads count and data; it nulls elements that point to garbage. */
typedef struct gc_ref_array {
    void **data;
    uint32_t count;
    uint32_t capacity;
} gc_ref_array;

/* A growable array of structs (UE: TArray<FStruct>) whose elements hold references described
 * by an inner schema. */
typedef struct gc_struct_array {
    void *data;
    uint32_t count;
    uint32_t capacity;
} gc_struct_array;

/* Helpers for the arrays above. They allocate with malloc; free with *_free. */
gc_result gc_ref_array_push(gc_ref_array *a, void *obj);
void gc_ref_array_free(gc_ref_array *a);
/* Appends one zeroed element of elem_size bytes; *out_elem borrows it until the next push. */
gc_result gc_struct_array_push(gc_struct_array *a, size_t elem_size, void **out_elem);
void gc_struct_array_free(gc_struct_array *a);

/* Reports the references a struct member or a whole object holds (UE AddReferencedObjects). */
typedef void (*gc_add_refs_fn)(void *data, gc_collector *collector);

typedef enum gc_member_kind {
    GC_MEMBER_END = 0,       /* terminates a member list */
    GC_MEMBER_REF,           /* void *            at offset */
    GC_MEMBER_REF_ARRAY,     /* gc_ref_array      at offset */
    GC_MEMBER_STRUCT_ARRAY,  /* gc_struct_array   at offset; elements of `stride` bytes,
                                described by `inner` (offsets relative to the element) */
    GC_MEMBER_STRUCT_ARO,    /* a struct at offset whose references `add_refs` reports */
} gc_member_kind;

typedef struct gc_member {
    gc_member_kind kind;
    const char *name;              /* for diagnostics; may be NULL */
    size_t offset;
    size_t size;                   /* STRUCT_ARO: the struct's size (bounds check) */
    size_t stride;                 /* STRUCT_ARRAY: element size */
    const struct gc_member *inner; /* STRUCT_ARRAY: element members, GC_MEMBER_END-terminated */
    gc_add_refs_fn add_refs;       /* STRUCT_ARO */
} gc_member;

#define GC_REF(type, field) \
    { GC_MEMBER_REF, #field, offsetof(type, field), sizeof(void *), 0, NULL, NULL }
#define GC_REF_ARRAY(type, field) \
    { GC_MEMBER_REF_ARRAY, #field, offsetof(type, field), sizeof(gc_ref_array), 0, NULL, NULL }
#define GC_STRUCT_ARRAY(type, field, elem_type, inner_members) \
    { GC_MEMBER_STRUCT_ARRAY, #field, offsetof(type, field), sizeof(gc_struct_array), \
      sizeof(elem_type), (inner_members), NULL }
#define GC_STRUCT_ARO(type, field, fn) \
    { GC_MEMBER_STRUCT_ARO, #field, offsetof(type, field), sizeof(((type *)0)->field), 0, NULL, (fn) }
#define GC_MEMBERS_END { GC_MEMBER_END, NULL, 0, 0, 0, NULL, NULL }

/* Class flags. */
enum {
    GC_CLASS_CLUSTER_ROOT = 1u << 0,      /* instances may root a cluster */
    GC_CLASS_CAN_BE_IN_CLUSTER = 1u << 1, /* instances may be members of a cluster */
};

/* Lifecycle hooks, in the order the destroy pipeline calls them. All optional. */
typedef struct gc_class_hooks {
    void (*begin_destroy)(void *obj);                /* start async release (UE BeginDestroy) */
    bool (*is_ready_for_finish_destroy)(void *obj);  /* polled until true */
    void (*finish_destroy)(void *obj);               /* last use of other objects */
    void (*destructor)(void *obj);                   /* free what the object malloc'ed */
} gc_class_hooks;

typedef struct gc_class_desc {
    const char *name;                 /* copied; unique among live classes */
    size_t size;                      /* instance size in bytes (>= the super's) */
    const gc_class *super;            /* NULL for a base class */
    uint32_t flags;                   /* GC_CLASS_* */
    const gc_member *members;         /* GC_MEMBERS_END-terminated; NULL for none. Copied. */
    gc_add_refs_fn add_referenced_objects; /* class-level reporter, called after the schema */
    gc_class_hooks hooks;             /* NULL hooks are inherited from the super */
} gc_class_desc;

/* Registers a class and compiles its schema (the super's members first, then its own). The
 * class is itself an object (of the built-in class "Class") and is added to the root set;
 * unroot it with gc_root_remove(heap, gc_class_object(cls)) to let it be collected once no
 * instance refers to it. *out_class is owned by the heap. */
gc_result gc_class_register(gc_heap *heap, const gc_class_desc *desc, gc_class **out_class);
const char *gc_class_name(const gc_class *cls);
const gc_class *gc_class_super(const gc_class *cls);
bool gc_class_is_child_of(const gc_class *cls, const gc_class *base);
void *gc_class_object(const gc_class *cls); /* the class's own object */
gc_class *gc_class_find(gc_heap *heap, const char *name);
uint32_t gc_class_schema_length(const gc_class *cls); /* number of compiled schema ops */

/* ---- objects ------------------------------------------------------------------------- */

/* Creation flags. */
enum {
    GC_CREATE_ROOT = 1u << 0,  /* add to the root set at creation (UE RF_MarkAsRootSet) */
};

/* Object flags that keep_flags match (UE RF_*), and internal root flags (UE
 * EInternalObjectFlags::Async/Native) that keep an object alive while set. */
enum {
    GC_OBJ_STANDALONE = 1u << 0,  /* user flags: kept when a collection's keep_flags match */
    GC_OBJ_PUBLIC = 1u << 1,
    GC_OBJ_USER2 = 1u << 2,
    GC_OBJ_USER3 = 1u << 3,
    GC_OBJ_USER_MASK = 0xFu,
    GC_OBJ_ASYNC = 1u << 8,       /* internal root flag: being built on another thread */
    GC_OBJ_NATIVE = 1u << 9,      /* internal root flag: owned by native code */
    GC_OBJ_INTERNAL_ROOT_MASK = GC_OBJ_ASYNC | GC_OBJ_NATIVE,
};

/* Creates a zeroed instance of cls (hooks are not called for construction). outer may be
 * NULL (a top-level object); name may be NULL (anonymous: not findable by path) and is
 * copied. The object keeps its class and outer alive. *out_obj is owned by the heap and
 * stays valid until the object is collected. */
gc_result gc_object_create(gc_heap *heap, gc_class *cls, void *outer, const char *name,
                           uint32_t create_flags, void **out_obj);

gc_class *gc_object_class(const gc_heap *heap, const void *obj);
void *gc_object_outer(gc_heap *heap, const void *obj);
const char *gc_object_name(gc_heap *heap, const void *obj);   /* NULL if anonymous */
uint32_t gc_object_index(const void *obj);
bool gc_object_is_a(const gc_heap *heap, const void *obj, const gc_class *cls);
/* Writes the dotted path ("World0.Level0.Pawn_12") into buf; returns the length it needs
 * (like snprintf). Anonymous objects appear as Class#index. */
size_t gc_object_path(gc_heap *heap, const void *obj, char *buf, size_t buf_size);
/* Finds a live, named object by its dotted path; NULL if none. */
void *gc_object_find(gc_heap *heap, const char *path);

/* UE's Rename: gives obj a new name (NULL: keeps its own; an anonymous object stays
 * anonymous), a new outer (NULL: keeps its own), or both, so that its path changes and a new
 * object may take its old one. A dying object holding the new path gives it up. GC_E_EXISTS
 * when a live object has that path, GC_E_STATE for a new outer of a cluster member or root,
 * GC_E_INVALID for a name with a '.' or an outer inside obj itself; nothing changes then.
 * Game thread, outside a collection's lock (a marking slice may be pending). */
gc_result gc_object_rename(gc_heap *heap, void *obj, void *new_outer, const char *new_name);

/* Flags: GC_OBJ_* bits. */
gc_result gc_object_set_flags(gc_heap *heap, void *obj, uint32_t flags);
gc_result gc_object_clear_flags(gc_heap *heap, void *obj, uint32_t flags);
uint32_t gc_object_flags(const void *obj);

/* True while obj is alive: not marked garbage and not found unreachable. */
bool gc_object_is_valid(const void *obj);
bool gc_object_is_garbage(const void *obj);
bool gc_object_is_unreachable(const void *obj);
bool gc_object_is_permanent(const void *obj);

/* Marks obj as garbage (UE MarkAsGarbage): ordinary references to it are nulled at the next
 * collection and it is destroyed once only class/outer references remain. Refused for
 * rooted, referenced-counted and permanent objects. */
gc_result gc_object_mark_garbage(gc_heap *heap, void *obj);

/* Root set (UE AddToRoot / RemoveFromRoot). Refused for garbage objects. */
gc_result gc_root_add(gc_heap *heap, void *obj);
gc_result gc_root_remove(gc_heap *heap, void *obj);
bool gc_root_contains(const void *obj);

/* Reference counts: a positive count keeps an object alive like a root (UE AddRef). */
gc_result gc_object_add_ref(gc_heap *heap, void *obj);
gc_result gc_object_release_ref(gc_heap *heap, void *obj);
uint32_t gc_object_ref_count(gc_heap *heap, const void *obj);

/* A strong handle (UE TStrongObjectPtr): holds one reference count while set. */
typedef struct gc_strong {
    void *obj;
} gc_strong;
gc_result gc_strong_set(gc_heap *heap, gc_strong *h, void *obj); /* releases the old one */
void gc_strong_reset(gc_heap *heap, gc_strong *h);

/* A weak handle (UE TWeakObjectPtr): index + serial. Resolves to NULL once the object is
 * found unreachable or purged, and never to a newer object that reused the slot. */
typedef struct gc_weak {
    uint32_t index;
    uint32_t serial;
} gc_weak;
gc_weak gc_weak_make(gc_heap *heap, const void *obj);   /* {0,0} for NULL */
void *gc_weak_get(gc_heap *heap, gc_weak w);             /* NULL if dead or garbage */
void *gc_weak_get_even_if_garbage(gc_heap *heap, gc_weak w);
bool gc_weak_is_stale(gc_heap *heap, gc_weak w);         /* was set, now dead */

/* ---- reporting references from callbacks --------------------------------------------- */

/* Reports a reference held in *slot. If the target is garbage the collector nulls *slot
 * (a killable reference, like every reflected reference). */
void gc_collector_add_ref(gc_collector *c, void **slot);
/* Reports a reference that must not be nulled: the target stays alive even if garbage. */
void gc_collector_add_immutable(gc_collector *c, void *obj);

/* External referencers (UE FGCObject): non-object holders that report the references they
 * own. The callback runs during marking; it must only report, not mutate the heap. */
typedef struct gc_referencer gc_referencer;
gc_result gc_referencer_add(gc_heap *heap, const char *name, gc_add_refs_fn fn, void *userdata,
                            gc_referencer **out_ref);
void gc_referencer_remove(gc_heap *heap, gc_referencer *ref);

/* ---- write barrier ------------------------------------------------------------------- */

/* Call after storing a reference to `target` into any object while incremental marking may
 * be in progress (cheap when it is not). Storing NULL needs no barrier. */
void gc_write_barrier(gc_heap *heap, void *target);
/* Stores *slot = value and applies the barrier. */
static inline void gc_store(gc_heap *heap, void **slot, void *value)
{
    *slot = value;
    if (value)
        gc_write_barrier(heap, value);
}

/* Call after storing a reference to target anywhere in owner (a field, an array element, a
 * struct). Applies the write barrier and, when owner is a cluster member, records target so
 * the cluster keeps it alive: members are marked with their cluster, not scanned. */
void gc_object_reference_stored(gc_heap *heap, void *owner, void *target);
/* Stores *slot = value, a member of owner, with gc_object_reference_stored. */
static inline void gc_object_store(gc_heap *heap, void *owner, void **slot, void *value)
{
    *slot = value;
    if (value)
        gc_object_reference_stored(heap, owner, value);
}

/* ---- collecting ---------------------------------------------------------------------- */

/* Performs a collection: objects not reachable are destroyed. keep_flags: GC_OBJ_USER_MASK
 * bits that keep objects having any of them. full_purge: destroy everything unreachable
 * before returning; otherwise the purge is left pending for gc_incremental_purge (and, with
 * incremental reachability enabled, marking itself may be left pending). Waits for the GC
 * lock. Before it marks, a collection takes the room its lists need (a pointer per live
 * object, untouched until used); GC_E_NOMEM if that fails, with nothing changed. */
gc_result gc_collect(gc_heap *heap, uint32_t keep_flags, bool full_purge);

/* As gc_collect, but gives up with GC_E_LOCKED if another thread holds a scope guard,
 * counting the attempt; after settings.num_retries_before_forcing failed attempts it waits
 * for the lock instead. */
gc_result gc_try_collect(gc_heap *heap, uint32_t keep_flags, bool full_purge);

/* Continues a pending incremental reachability analysis within its time limit. Returns true
 * when the mark (and gather) finished. */
bool gc_incremental_reachability_step(gc_heap *heap);

/* Advances a pending purge for at most time_limit seconds (0 = until done). Returns true
 * when nothing is left to purge. */
bool gc_incremental_purge(gc_heap *heap, double time_limit);

bool gc_is_incremental_reachability_pending(const gc_heap *heap);
bool gc_is_incremental_purge_pending(const gc_heap *heap);
bool gc_is_collecting(const gc_heap *heap);

/* ---- GC lock (UE FGCScopeGuard) ------------------------------------------------------ */

/* Other threads that touch the object graph hold a scope guard; a collection waits for all
 * guards to leave and keeps new ones out while it marks. Not reentrant. */
void gc_scope_guard_enter(gc_heap *heap);
void gc_scope_guard_leave(gc_heap *heap);

/* ---- clusters ------------------------------------------------------------------------ */

/* Builds a cluster rooted at obj (its class must have GC_CLASS_CLUSTER_ROOT): the objects it
 * owns through the outer chain (and reaches through references) that may be clustered
 * (GC_CLASS_CAN_BE_IN_CLUSTER, not rooted) become members, marked as one unit with the root.
 * Members are not scanned at each mark: what they reference outside the cluster is recorded
 * now, and must be recorded later with gc_object_store / gc_object_reference_stored when it
 * changes. Marking a member or the root as garbage dissolves the cluster. Returns
 * GC_E_INVALID when it would have fewer than min_cluster_size members, GC_E_STATE when
 * clusters are disabled or a mark is in flight. */
gc_result gc_cluster_create(gc_heap *heap, void *root);
uint32_t gc_cluster_count(const gc_heap *heap);
bool gc_object_in_cluster(const void *obj); /* root or member */

/* ---- diagnostics --------------------------------------------------------------------- */

/* Finds the shortest chain of references from a root (root set, ref count, keep flag,
 * internal flag or referencer) to target and calls line_fn once per hop, root first, e.g.
 * "World0 (root) -> World0.Level0 [levels]". Returns GC_E_NOT_FOUND if nothing keeps it,
 * GC_E_STATE when called while a collection holds the GC lock (from a STARTED callback).
 * Game thread only: it takes the GC lock, so a thread holding a scope guard would deadlock. */
typedef void (*gc_line_fn)(const char *line, void *userdata);
gc_result gc_reference_chain(gc_heap *heap, const void *target, gc_line_fn line_fn,
                             void *userdata);

/* Where the collector sends diagnostic lines as they happen (assumption violations, garbage
 * references); NULL to drop them. The callback runs on the collecting thread. */
void gc_heap_set_diagnostics(gc_heap *heap, gc_line_fn fn, void *userdata);

/* With settings.history_size > 0: reports which object first reached obj in the collection
 * `ago` collections back (0 = the last). Indices of objects destroyed since may have been
 * reused: the line names what is there now. GC_E_NOT_FOUND if obj was not reached then or
 * the history does not go back that far. */
gc_result gc_history_describe(gc_heap *heap, uint32_t ago, const void *obj, gc_line_fn line_fn,
                              void *userdata);

/* With settings.garbage_reference_tracking: the references to objects marked as garbage that
 * the last collection nulled, one line each naming the referencer (path and member) and the
 * garbage object. Returns how many there were. */
uint32_t gc_garbage_references(gc_heap *heap, gc_line_fn line_fn, void *userdata);

/* Checks the collector's assumptions (gc.VerifyAssumptions does so before every mark):
 * permanent objects reference no collectable object; cluster bookkeeping is consistent and
 * members reference nothing the cluster does not know; no object carries contradictory flags.
 * Returns the number of violations, each described to line_fn (may be NULL). */
uint32_t gc_verify_assumptions(gc_heap *heap, gc_line_fn line_fn, void *userdata);

/* ---- callbacks and statistics -------------------------------------------------------- */

typedef enum gc_event {
    GC_EVENT_PRE,        /* before the lock is taken (may touch the heap) */
    GC_EVENT_STARTED,    /* lock held, marking about to start */
    GC_EVENT_POST_MARK,  /* reachability and gather done, lock released */
    GC_EVENT_POST,       /* after the collection returns (purge done if full) */
    GC_EVENT_COUNT_
} gc_event;

typedef void (*gc_event_fn)(gc_heap *heap, gc_event ev, void *userdata);
gc_result gc_callback_add(gc_heap *heap, gc_event ev, gc_event_fn fn, void *userdata);
void gc_callback_remove(gc_heap *heap, gc_event ev, gc_event_fn fn, void *userdata);

typedef struct gc_stats {
    uint64_t collections;         /* completed reachability analyses since heap creation */
    uint64_t collections_full;    /* of those, full purges */
    uint64_t objects_destroyed;   /* total freed since heap creation */
    uint64_t try_collect_failures;/* gc_try_collect attempts that gave up */
    /* the last collection */
    uint32_t objects_before;      /* live objects when it started */
    uint32_t objects_after;       /* live objects after its purge (or now, if pending) */
    uint32_t roots;               /* initial roots (root set, ref counts, flags, referencers) */
    uint32_t marked;              /* objects alive when the mark began and found reachable
                                     (known once gathering ends) */
    uint32_t unreachable;         /* objects gathered as unreachable */
    uint32_t destroyed;           /* objects freed by its purge so far */
    uint32_t mark_slices;         /* reachability slices it took */
    uint32_t barrier_objects;     /* objects the write barrier queued during it */
    uint32_t mark_workers;        /* marking threads it used (the caller included) */
    uint32_t blocks_stolen;       /* work blocks idle workers took from busy ones */
    uint32_t mark_slices_helped;  /* its slices a marking thread beyond the caller joined */
    bool mark_helpers_invited;    /* false: the caller marked alone by choice, because the
                                     marking threads had made this heap's marks slower than
                                     one thread (or to measure one thread alone) */
    uint32_t garbage_references;  /* references to garbage it nulled (when tracking) */
    uint32_t assumption_violations; /* found before it marked (gc.VerifyAssumptions) */
    uint32_t pending_finish;      /* objects still waiting to be ready for finish_destroy */
    double mark_seconds;
    double gather_seconds;
    double purge_seconds;         /* begin_destroy, finish_destroy and free */
    double longest_slice_seconds;
    double release_seconds;       /* giving emptied memory back to the system (madvise) */
} gc_stats;

void gc_stats_get(const gc_heap *heap, gc_stats *out_stats);

/* Memory the heap holds for objects right now (side tables for names, roots and clusters
 * not included). Per-object overhead = (total_bytes - payload bytes) / objects. */
typedef struct gc_memory {
    size_t slab_bytes;      /* 64 KiB slabs that hold objects (headers, payloads, slack) */
    size_t large_bytes;     /* objects too big for a slab, headers included */
    size_t array_bytes;     /* the object array's chunks (12 bytes per slot; the slots of a
                               chunk left empty by a collection are given back) */
    size_t slab_side_bytes; /* mark bits and bookkeeping of the slabs in use */
    size_t total_bytes;     /* the four above */
    size_t free_slab_bytes; /* empty slabs kept committed for reuse (the rest go back to the
                               system after each collection) */
} gc_memory;
void gc_memory_get(const gc_heap *heap, gc_memory *out_memory);

/* Bytes the collector holds committed right now: gc_memory's total_bytes plus the empty slabs
 * it keeps for reuse. After a collection, empty slabs beyond a reserve (a quarter of the slabs
 * in use, at least 512 KiB) are returned to the system (madvise MADV_DONTNEED), and large
 * objects and the collector's own lists are free()d, so this falls when objects go. Memory
 * free()d to the C library is not counted here: whether it leaves the process is the
 * allocator's business (glibc: malloc_trim). 0 for a NULL heap. */
size_t gc_heap_bytes(const gc_heap *heap);

/* Object counts right now. */
uint32_t gc_object_count(const gc_heap *heap);          /* live objects, permanent included */
uint32_t gc_permanent_count(const gc_heap *heap);

/* Calls fn for every live object (permanent included), in index order. fn must not create
 * or destroy objects. fn may keep the pointer: while an incremental mark is in flight every
 * object visited is passed through the write barrier, so that mark keeps them all. */
typedef void (*gc_object_visit_fn)(void *obj, void *userdata);
void gc_object_foreach(gc_heap *heap, gc_object_visit_fn fn, void *userdata);
/* The same for a visitor that only reads: fn must neither keep obj past the call nor store it
 * anywhere (a weak handle is fine). No barrier, so a mark in flight is left as it was: use it
 * for counting, listing and diagnostics, which must not keep garbage for a collection. */
void gc_object_foreach_read(gc_heap *heap, gc_object_visit_fn fn, void *userdata);

#ifdef __cplusplus
}
#endif

#endif /* REAP_GC_H */
