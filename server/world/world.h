/*
 * world.h - worlds, levels and actors: the collected objects of the game.
 *
 * Per-world state (UE UWorld/ULevel/AActor). Every struct below except world_env and the
 * outbox records (world_spawned, world_destroyed) is the payload of a collected object; its
 * reference members are listed in the class schema (world.c) so the collector can trace and
 * null them. Store a reference with
 * WORLD_STORE_REF (the write barrier) and never keep a pointer to an actor anywhere the
 * collector cannot see.
 *
 * Ownership tree (outer chain), which is also the object path:
 *   World0 -> World0.Level0 -> World0.Level0.Pawn_12 -> World0.Level0.Pawn_12.Movement
 * A level's actor array keeps slots 0 and 1 permanent (world settings, default volume);
 * dynamic actors start at WORLD_FIRST_DYNAMIC_SLOT. Destroying an actor marks it garbage and
 * nulls its slot; world_cleanup_actors removes the null slots after a collection.
 *
 * Actors carry a net id that is never reused (UE's network GUID); clients key their mirror of
 * the world by it. Object indices are reused and never go on the wire.
 */
#ifndef REAP_WORLD_H
#define REAP_WORLD_H

#include <stdbool.h>
#include <stdint.h>

#include "reap_gc.h"
#include "world_grid.h"
#include "world_profile.h"
#include "world_streaming.h"

enum {
    WORLD_FIRST_DYNAMIC_SLOT = 2,
    WORLD_PROP_PARTS = 5,        /* child actors per prop: enough members for a cluster at the
                                    default gc.MinGCClusterSize */
    WORLD_PERSISTENT_GROUP = 1000, /* persistent props per holder (world.PersistentProps) */
    WORLD_NAME_MAX = 32,
    ACTOR_NAME_MAX = 48,
    PLAYER_NAME_MAX = 32,
};

/* Numbered as reap.proto's ActorClass, so a kind goes on the wire as is. */
typedef enum actor_kind {
    ACTOR_KIND_WORLD_SETTINGS = 1,
    ACTOR_KIND_DEFAULT_VOLUME = 2,
    ACTOR_KIND_PLAYER_CONTROLLER = 3,
    ACTOR_KIND_PAWN = 4,
    ACTOR_KIND_PROJECTILE = 5,
    ACTOR_KIND_PROP = 6,
    ACTOR_KIND_ARCHETYPE = 7,    /* an actor of the world profile's archetypes (actor.archetype
                                    says which); on the wire with its archetype's number */
    ACTOR_KIND_PROP_PART = 8,    /* a prop's child actor: owned by the prop, not replicated */
} actor_kind;

#define WORLD_STORE_REF(heap, lvalue, value)          \
    do {                                              \
        (lvalue) = (value);                           \
        if ((lvalue) != NULL)                         \
            gc_write_barrier((heap), (lvalue));       \
    } while (0)

typedef struct world_classes {
    gc_class *world;
    gc_class *level;
    gc_class *actor;
    gc_class *world_settings;
    gc_class *default_volume;
    gc_class *player_controller;
    gc_class *pawn;
    gc_class *movement_component;
    gc_class *collision_component;
    gc_class *projectile;
    gc_class *prop;
    gc_class *prop_part;
    gc_class *game_instance;
} world_classes;

/* The game instance (UE UGameInstance): one rooted object outside every world, for the
 * process. It holds the lifetime = instance actors, which survive every travel. */
typedef struct game_instance {
    gc_ref_array objects;        /* refs: its actors, in spawn order */
} game_instance;

/* One archetype of the world profile compiled into collected classes (world_archetype.c).
 * An instance's reference slots, weak handles and payload follow its struct (archetype_actor or
 * archetype_part) at the offsets below, and the class schema names every slot. */
typedef struct world_archetype {
    world_profile_archetype def; /* as the profile gave it */
    gc_class *cls;               /* its actors (or, base = component, its parts) */
    gc_class *part_cls;          /* the parts `components = N` creates; NULL when none */
    uint32_t strong, weak, pins; /* reference slots, weak and strong handles per object */
    bool held;                   /* lifetime = instance: its actor's slots are held immutably */
    size_t pins_offset, refs_offset, weak_offset, payload_offset; /* in a cls instance */
    size_t part_pins_offset, part_refs_offset, part_weak_offset, part_payload_offset;
} world_archetype;

/* Process-wide state the worlds share; owned by the engine (not a collected object). */
typedef struct world_env {
    gc_heap *heap;
    world_classes classes;
    world_archetype *archetypes; /* the world profile's; NULL and 0 for the default profile */
    uint32_t n_archetypes;
    world_profile_cells cells;   /* the profile's [cells]: what every streaming cell places */
    world_streaming_env streaming; /* streaming levels' process-wide side */
    game_instance *instance;     /* rooted; NULL until world_game_instance_create */
    void **spawn_scratch;        /* objects of the spawn being built, in creation order */
    uint32_t spawn_scratch_cap;
    uint64_t next_net_id;        /* starts at 1; never reused */
    double projectile_lifetime;  /* seconds */
    uint64_t clusters_created;
    float extent;                /* world.Extent: side of the square pawns live in */
    float cull_distance;         /* net.CullDistance: the grid's cell side */
    uint64_t rng;                /* splitmix64 state: spawn positions */
} world_env;

typedef struct level level;
typedef struct world world;
typedef struct player_controller player_controller;

typedef struct actor {
    uint64_t net_id;
    actor_kind kind;
    uint32_t slot;               /* index in level->actors while placed */
    level *level;                /* ref */
    struct actor *owner;         /* ref: the owning player controller, or NULL */
    uint32_t owner_player_id;    /* 0: owned by the world */
    bool replicates;
    bool moves;
    bool placed;                 /* has a level slot */
    bool always_relevant;        /* replicated to every connection of its world */
    float pos[3];
    float vel[3];
    uint32_t move_serial;        /* bumped whenever pos changes (replication sends changes) */
    uint32_t grid_cell;          /* world_grid bookkeeping; WORLD_GRID_NONE when not in it */
    uint32_t grid_index;         /* its place in the cell's list; top bit: the static list */
    uint32_t net_index;          /* replication index (the net driver's), 0: none yet */
    uint32_t archetype;          /* ACTOR_KIND_ARCHETYPE: 1 + its index in env->archetypes */
} actor;

typedef struct actor_component {
    actor *owner_actor;          /* ref */
    float params[4];
} actor_component;

typedef struct pawn {
    actor base;
    actor_component *movement;   /* ref, outer = the pawn */
    actor_component *collision;  /* ref, outer = the pawn */
    float heading;
    float input_vel[2];          /* the velocity the player asked for (MoveInput) */
    bool has_input;              /* a player steers it; otherwise it idles in a slow circle */
} pawn;

struct player_controller {
    actor base;
    pawn *pawn;                  /* ref */
    gc_ref_array owned;          /* refs: props and projectiles this player spawned */
    uint32_t player_id;
    char player_name[PLAYER_NAME_MAX];
};

typedef struct projectile {
    actor base;
    gc_weak instigator;          /* weak: the pawn that fired it may die first */
    double life_left;
} projectile;

typedef struct prop_attachment {
    actor *part;                 /* ref */
    actor *anchor;               /* ref: the owner's pawn when spawned (killable) */
    float offset[3];
} prop_attachment;

typedef struct prop {
    actor base;
    gc_ref_array parts;          /* refs: child actors, outer = the prop */
    gc_struct_array attachments; /* prop_attachment elements, refs inside */
} prop;

/* An actor of a profile archetype. Its class lays out after it: `strong` reference slots,
 * `weak` gc_weak handles, `payload` bytes. */
typedef struct archetype_actor {
    actor base;
    gc_ref_array owns;           /* refs: its parts and child actors, in creation order */
    double life_left;            /* lifetime = SECONDS, top-level actors only; else 0 */
    float heading;               /* moves = yes: it circles */
    bool top_level;              /* spawned by a request (not a child): in its player's owned */
} archetype_actor;

/* A part: one of an archetype's `components`, or a child of a base = component archetype. */
typedef struct archetype_part {
    actor_component base;        /* owner_actor: the actor that owns it */
    uint32_t archetype;          /* index in env->archetypes of the archetype it belongs to */
    uint32_t is_child;           /* a base = component child (its archetype's own slots) */
} archetype_part;

struct level {
    world *world;                /* ref */
    gc_ref_array actors;         /* refs; slots 0-1 permanent, null slots until cleanup */
    uint32_t index;
    uint32_t live_actors;        /* non-null dynamic + permanent slots */
    world_cell *cell;            /* a streaming cell's level: its cell; NULL: the persistent */
    bool pending_visibility;     /* being added or removed (UE CurrentLevelPendingVisibility):
                                    world_cleanup_actors leaves its slots alone */
};

/* An actor destroyed this frame, for replication to send its destroy. */
typedef struct world_destroyed {
    uint64_t net_id;
    uint32_t net_index;          /* the actor's replication index then (0: none) */
} world_destroyed;

/* An actor spawned (or teleported) this frame, for replication to decide who it is relevant
 * to. */
typedef struct world_spawned {
    uint64_t net_id;
    uint32_t owner_player_id;
    gc_weak actor;               /* resolves to NULL if it was destroyed since */
} world_spawned;

struct world {
    world_env *env;              /* borrowed; outlives the world */
    char name[WORLD_NAME_MAX];
    char map[32];                /* the map it was loaded for ("" outside the engine) */
    uint32_t index;
    gc_ref_array levels;         /* refs */
    level *persistent_level;     /* ref */
    bool begun_play;             /* its first frame ran */
    uint64_t frames;
    uint32_t connections;        /* client connections in this world (net driver keeps it) */
    world_grid grid;             /* spatial index of replicated actors that have a position */
    world_streaming streaming;   /* its streaming cells (none without a profile [cells]) */
    /* Its end at a travel (world_travel.c): where the end of play has got to. */
    bool tearing_down, torn_down;
    uint32_t teardown_level, teardown_slot;
    /* Replication outbox for this frame: plain data, drained by the net driver. */
    world_spawned *spawned;
    uint32_t spawned_count, spawned_cap;
    world_destroyed *destroyed;
    uint32_t destroyed_count, destroyed_cap;
};

/* ---- classes and worlds --------------------------------------------------------------- */

/* Registers the classes (their schemas name every reference member). Call once, at start-up,
 * best while the disregard pool is open so the classes are permanent. */
gc_result world_classes_register(gc_heap *heap, world_classes *out_classes);

void world_env_init(world_env *env, gc_heap *heap);
/* Frees what env allocated (the archetypes, streaming's lists), once its heap is destroyed. */
void world_env_close(world_env *env);

/* Creates World<index> with its persistent level Level0 (world settings and default volume in
 * slots 0-1) and adds it to the root set. *out_world is owned by the heap. */
gc_result world_create(world_env *env, uint32_t index, world **out_world);

/* Begins play (first call) and advances movement and projectile lifetimes by dt seconds;
 * projectiles whose life ran out are destroyed. Pawns stay inside the world's extent. */
void world_tick(world *w, double dt);

/* After code other than world_tick changed a's position (a teleport): updates the grid, and
 * for an actor that does not normally move, queues it for replication to re-decide who it
 * is relevant to (moving actors are re-decided every relevancy pass anyway). */
void world_actor_moved(world *w, actor *a);

/* Applies a new world.Extent / net.CullDistance (from env) to the world's grid. */
void world_apply_settings(world *w);

/* A random point of the world's extent (for spawning pawns). */
void world_random_point(world_env *env, float out_pos[3]);
/* Where a new pawn of w spawns: near one of its player starts ([cells] player_starts), else a
 * random point of the extent. */
void world_spawn_point(world *w, float out_pos[3]);

/* UE UWorld::CleanupActors: removes null slots of every level whose visibility is not
 * changing (see world_cleanup.c). */
void world_cleanup_actors(world *w);
/* The compaction itself over a plain array; returns the new count. */
uint32_t world_compact_actor_slots(void **slots, uint32_t count, uint32_t first_dynamic);

uint32_t world_actor_count(const world *w);   /* live actors in all levels */
uint32_t world_actor_slots(const world *w);   /* slot count including null slots */
void world_outbox_reset(world *w);

/* Calls fn for every live, placed actor of the world in slot order. fn may destroy actors. */
typedef void (*world_actor_visit_fn)(actor *a, void *userdata);
void world_foreach_actor(world *w, world_actor_visit_fn fn, void *userdata);

/* ---- actors --------------------------------------------------------------------------- */

const char *actor_kind_name(actor_kind kind);

/* Spawns a player: a controller and its pawn (with movement and collision components), the
 * pawn at a random point of the world's extent. */
gc_result actor_spawn_player(world *w, uint32_t player_id, const char *player_name,
                             player_controller **out_controller);

/* Spawns a prop or a projectile owned by the controller's player. */
gc_result actor_spawn(world *w, actor_kind kind, player_controller *owner, actor **out_actor);

/* Destroys an actor: marks it garbage, nulls its level slot and queues the destroy for
 * clients. A controller takes its pawn and everything it owns with it. Destroying an actor
 * twice does nothing. */
void actor_destroy(world *w, actor *a);

/* A player's MoveInput: the pawn moves at (vx, vy) units/s until the next input. The caller
 * has checked the values (finite, within net.MaxPawnSpeed). */
void actor_steer_pawn(pawn *p, float vx, float vy);

/* Finds an actor the controller owns by net id; NULL if none. */
actor *actor_find_owned(player_controller *pc, uint64_t net_id);
uint32_t actor_owned_count(const player_controller *pc);

/* Spawns count persistent props in w (world.PersistentProps), once, before play begins. A
 * failure leaves those spawned so far in place. */
gc_result world_spawn_persistent_props(world *w, uint32_t count);

/* ---- world profiles (world_archetype.c) ------------------------------------------------- */

/* Compiles every archetype of p into collected classes with their reference schemas and
 * stores them in env (env->archetypes, owned by env: free with world_archetypes_free). Call
 * once at start-up, after world_classes_register and best while the disregard pool is open.
 * path names the file in messages. False with err "PATH:LINE: [archetype NAME] FIELD: ..."
 * when a name is taken by a built-in class or a class made for another archetype; env is
 * then unchanged (classes registered so far stay, unused). */
bool world_archetypes_compile(world_env *env, const world_profile *p, const char *path,
                              char *err, size_t err_size);
void world_archetypes_free(world_env *env);
/* The archetype called name, as its index in env->archetypes; -1 if none. */
int world_archetype_find(const world_env *env, const char *name);

/* Spawns one instance of archetype `index` for owner's player: the actor, its parts and its
 * children, every reference slot filled, a cluster where the profile asks. A failure leaves
 * nothing placed (what was built is garbage). */
gc_result actor_spawn_archetype(world *w, uint32_t index, player_controller *owner,
                                actor **out_actor);

/* Live objects of each archetype's classes, in one pass over the heap: out[2 * i] counts
 * archetype i's class, out[2 * i + 1] its parts' class (NAMEPart; 0 when it has none). out
 * holds 2 * env->n_archetypes entries. Cost: one visit per live object. */
void world_archetype_census(const world_env *env, gc_heap *heap, uint32_t *out);

/* True when obj belongs to an actor of a `lifetime = persistent` or `instance` archetype (the actor, its
 * parts or its children): it outlives its player by design. */
bool world_object_is_persistent(const world_env *env, gc_heap *heap, const void *obj);

/* ---- travel (world_travel.c) ------------------------------------------------------------ */

/* Creates the game instance (world_env.instance), rooted, once, at start-up: it lives for the
 * process, outside every world. */
gc_result world_game_instance_create(world_env *env);
/* Actors the game instance holds (lifetime = instance). */
uint32_t world_game_instance_count(const world_env *env);

/* A world ends (UE CleanupWorld at a travel). begin: it leaves streaming's process-wide list
 * (world_streaming_detach). step: every actor's end of play (it and its components, parts and
 * child actors marked garbage, its slot emptied) for at most time_limit seconds (0: no
 * limit), counting actors in *io_actors; true once done, when its levels are garbage and the
 * world has left the root set, marked garbage. The caller stops ticking and replicating it
 * first, and takes out what must cross into the next world (world_carry_player). */
void world_teardown_begin(world *w);
bool world_teardown_step(world *w, double time_limit, uint64_t *io_actors);

/* A seamless travel keeps a player's controller: what it owned and its pawn are destroyed in
 * `from`, and the controller moves into `to`'s persistent level (its outer changes, as UE's
 * Rename does). Nothing changes on failure. */
gc_result world_carry_player(world *from, world *to, player_controller *pc);
/* The carried controller's player restarts in w (UE RestartPlayer): a new pawn, and the
 * controller queued for replication. */
gc_result world_restart_player(world *w, player_controller *pc);
/* A controller's new pawn at one of w's spawn points. */
gc_result actor_spawn_pawn(world *w, player_controller *pc);

/* For world_create: places the two permanent actors in slots 0-1 of a fresh level. */
gc_result actor_spawn_level_fixtures(world *w, level *lvl);

#endif /* REAP_WORLD_H */
