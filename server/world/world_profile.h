/*
 * world_profile.h - a world profile: the archetypes of a game's object graph, read from an ini
 * file, as plain data (no collector, no world): what a spawn of each archetype creates and
 * which references its objects hold.
 *
 * The file has one section per archetype:
 *
 *   [archetype Weapon]
 *   base = actor              ; actor | component
 *   components = 3            ; collected parts the actor owns (0-64)
 *   children = Scope:1,Ammo:2 ; child actors spawned with it (archetypes of this file)
 *   refs = owner, siblings, weak earlier:2   ; what each of its objects references
 *   payload = 256             ; bytes of plain data per object (0-65536)
 *   lifetime = visit          ; visit | SECONDS | persistent | instance
 *   cluster = yes             ; the actor and its parts are one GC cluster
 *   replicated = yes
 *   moves = no
 *
 * refs terms: owner (the object that owns it: a part's actor, an actor's parent), siblings (the
 * next part of the same actor, the last the first: a ring), level, earlier:N (N objects spawned
 * before it in the same spawn), placed (the first placed actor of the streaming cell it stands
 * in); `weak` before a term makes it a weak handle, `strong` a strong one (UE's
 * TStrongObjectPtr: it keeps its target alive even when the target is marked garbage). Children
 * may not contain their own ancestors (a spawn would not end); references may form any cycle.
 *
 * An optional [cells] section makes the world a grid of streaming cells (world_streaming.h):
 *
 *   [cells]
 *   placed = House:2, Tree:40 ; the actors every cell places (actor archetypes defined above)
 *   player_starts = 4         ; pawns spawn at one of N points (0: anywhere in world.Extent)
 *   player_start_sources = yes ; each player start is a streaming source (default no)
 *
 * [map NAME] sections name the maps a server can travel between (at most 16). Each is a world
 * layout: its extent, its streaming cells (the [cells] keys) and its persistent props; a key
 * it leaves out is the server's setting (world.Extent, world.PersistentProps), and a map
 * without `placed` has no cells. Without a [map Default] section, the map Default is what the
 * rest of the file and the cvars describe ([cells], world.Extent, world.PersistentProps):
 *
 *   [map Arena]
 *   extent = 100000           ; world units (1000-20000000)
 *   placed = House:2, Tree:40 ; its cells (none when left out)
 *   player_starts = 4
 *   persistent_props = 200000 ; props that outlive every player (0-4000000)
 */
#ifndef REAP_WORLD_PROFILE_H
#define REAP_WORLD_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum {
    WORLD_PROFILE_ARCHETYPES_MAX = 64,
    WORLD_PROFILE_NAME_MAX = 32,       /* bytes, with the NUL */
    WORLD_PROFILE_COMPONENTS_MAX = 64,
    WORLD_PROFILE_CHILDREN_MAX = 8,    /* child kinds per archetype */
    WORLD_PROFILE_CHILD_COUNT_MAX = 1000,
    WORLD_PROFILE_REFS_MAX = 8,        /* terms per archetype */
    WORLD_PROFILE_EARLIER_MAX = 16,
    WORLD_PROFILE_PAYLOAD_MAX = 65536,
    WORLD_PROFILE_DEPTH_MAX = 8,       /* an archetype, its children, theirs... */
    WORLD_PROFILE_SPAWN_OBJECTS_MAX = 10000,
    WORLD_PROFILE_PLACED_MAX = 16,     /* kinds of placed actors per cell */
    WORLD_PROFILE_PLACED_COUNT_MAX = 10000,
    WORLD_PROFILE_CELL_OBJECTS_MAX = 200000, /* objects one cell places, children included */
    WORLD_PROFILE_PLAYER_STARTS_MAX = 64,
    WORLD_PROFILE_MAPS_MAX = 16,
    WORLD_PROFILE_EXTENT_MIN = 1000,
    WORLD_PROFILE_EXTENT_MAX = 20000000,   /* world.Extent's range */
    WORLD_PROFILE_PERSISTENT_PROPS_MAX = 4000000, /* world.PersistentProps' */
};

typedef enum world_profile_base {
    WORLD_PROFILE_BASE_ACTOR = 0,
    WORLD_PROFILE_BASE_COMPONENT,
} world_profile_base;

typedef enum world_profile_ref_kind {
    WORLD_PROFILE_REF_OWNER = 0,
    WORLD_PROFILE_REF_SIBLINGS,
    WORLD_PROFILE_REF_LEVEL,
    WORLD_PROFILE_REF_EARLIER,
    WORLD_PROFILE_REF_PLACED,
} world_profile_ref_kind;

typedef enum world_profile_ref_hold {
    WORLD_PROFILE_HOLD_REF = 0,        /* an ordinary reference: nulled if its target is garbage */
    WORLD_PROFILE_HOLD_WEAK,           /* a weak handle */
    WORLD_PROFILE_HOLD_STRONG,         /* a strong handle (a reference count on the target) */
} world_profile_ref_hold;

typedef struct world_profile_ref {
    world_profile_ref_kind kind;
    uint32_t count;                    /* earlier:N; 1 otherwise */
    bool weak;                         /* hold == WORLD_PROFILE_HOLD_WEAK */
    world_profile_ref_hold hold;
} world_profile_ref;

typedef struct world_profile_child {
    uint32_t archetype;                /* index into the profile's archetypes */
    uint32_t count;
} world_profile_child;

typedef enum world_profile_lifetime {
    WORLD_PROFILE_LIFETIME_VISIT = 0,  /* destroyed when its player leaves */
    WORLD_PROFILE_LIFETIME_SECONDS,    /* destroyed after `seconds` */
    WORLD_PROFILE_LIFETIME_PERSISTENT, /* outlives its player */
    WORLD_PROFILE_LIFETIME_INSTANCE,   /* held by the game instance: outlives every world */
} world_profile_lifetime;

typedef struct world_profile_archetype {
    char name[WORLD_PROFILE_NAME_MAX];
    world_profile_base base;
    uint32_t components;
    world_profile_child children[WORLD_PROFILE_CHILDREN_MAX];
    uint32_t n_children;
    world_profile_ref refs[WORLD_PROFILE_REFS_MAX];
    uint32_t n_refs;
    uint32_t payload;
    world_profile_lifetime lifetime;
    double seconds;
    bool cluster, replicated, moves;
    uint32_t line;                     /* of its section, for messages */
    /* Derived once the file is read: */
    uint32_t objects;                  /* created by one spawn, children included */
    uint32_t depth;                    /* 1 without children */
} world_profile_archetype;

/* The [cells] section: what every streaming cell places. */
typedef struct world_profile_cells {
    bool present;                      /* the file has a [cells] section */
    world_profile_child placed[WORLD_PROFILE_PLACED_MAX]; /* archetype and count */
    uint32_t n_placed;
    uint32_t objects;                  /* objects one cell places, children and parts included */
    uint32_t player_starts;            /* 0: pawns spawn anywhere in world.Extent */
    bool start_sources;                /* player starts keep their cells loaded, as pawns do */
    uint32_t line;                     /* of the section, for messages */
} world_profile_cells;

/* A [map NAME] section. */
typedef struct world_profile_map {
    char name[WORLD_PROFILE_NAME_MAX];
    float extent;                      /* 0: world.Extent */
    world_profile_cells cells;         /* present: it has `placed` */
    uint32_t persistent_props;
    bool has_persistent_props;         /* false: world.PersistentProps */
} world_profile_map;

typedef struct world_profile {
    world_profile_archetype archetypes[WORLD_PROFILE_ARCHETYPES_MAX];
    uint32_t n;
    world_profile_cells cells;
    world_profile_map maps[WORLD_PROFILE_MAPS_MAX];
    uint32_t n_maps;
} world_profile;

/* Reads path into out. False with err "FILE:LINE: [archetype NAME] FIELD: what is wrong"
 * (or "FILE: ..." for what only the whole file shows: a cycle of children, a depth or size
 * over the limits); out is then unspecified. */
bool world_profile_load(world_profile *out, const char *path, char *err, size_t err_size);
/* The same from text; name stands for the file in messages. */
bool world_profile_parse(world_profile *out, const char *name, const char *text, char *err,
                         size_t err_size);
/* Checks that no archetype, nor the NAMEPart class of an archetype's components, takes the
 * name of one of the server's own classes or of another archetype's class. False with err
 * "FILE:LINE: [archetype NAME]: ..." at the first clash. */
bool world_profile_check_names(const world_profile *p, const char *path, char *err,
                               size_t err_size);
/* The archetype called name (case-sensitive), or -1. */
int world_profile_find(const world_profile *p, const char *name);
/* The [map NAME] section called name (case-sensitive), or -1. */
int world_profile_map_find(const world_profile *p, const char *name);

#endif
