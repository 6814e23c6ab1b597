/*
 * world_archetype.c - a world profile (world_profile.h) compiled into collected classes, and
 * spawning its archetypes.
 *
 * Each archetype becomes a class named after it: a subclass of Actor laid out as an
 * archetype_actor (base = actor) or an archetype_part (base = component), followed by one
 * block of gc_strong handles for the strong `refs` terms (when it has any), then one reference
 * slot per ordinary term (earlier:N counts N), one gc_weak per weak term, and `payload` bytes. Its schema names every slot, so the collector traces exactly the edges the
 * profile describes. An actor archetype with `components = N` gets a second class, NAMEPart,
 * for those parts, with the same terms.
 *
 * Besides the terms, every object has the edges any actor or component has: an actor its
 * level, its player's controller (owner; not for a persistent archetype, which must not keep
 * its player alive) and an array of what it owns (its parts and child actors), a part the
 * actor it belongs to (owner_actor). A spawn builds the whole tree first,
 * then fills every object's slots (a ring of siblings needs its last member), then makes the
 * clusters the profile asks for, so the barrier and the clusters see finished objects.
 *
 * What a term refers to, for an object of the spawn:
 *   owner     an actor's parent actor (a spawned actor's: its player's controller, none when
 *             persistent), a part's actor;
 *   siblings  the next object its owner owns (the last the first; none when it is alone or a
 *             spawned actor);
 *   level     the level;
 *   earlier:N the N objects created just before it in the same spawn (fewer at its start);
 *   placed    the first placed actor of a streaming cell: a placed object's own cell, a
 *             spawned object's the visible cell its spawned actor stands in (none otherwise).
 *
 * Cells place archetypes too (world_archetype_place): the same tree in the cell's level, but
 * as net startup actors: no net id, not replicated, no owner, standing still.
 *
 * A `lifetime = instance` archetype is spawned outside every world: its actor's outer is the
 * game instance (world_env.instance), which holds it for the process (UE's GameInstance and its
 * subsystems), and it takes no level slot, is not replicated and does not tick. Its own
 * ordinary references are held as a game instance holds its properties when nothing nulls them
 * (UE5 without pending kill): reported to the collector as immutable references (a "held"
 * block, [n][slots], after its strong handles), never nulled, so that whatever they name in a
 * world keeps that world alive. That is how a real game leaks a world, and what the
 * travel's leak verdict names.
 */
#include "world.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vec.h"
#include "world_internal.h"
#include "world_streaming.h"

static size_t archetype_align(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/* Slots of each kind one object of d holds: ordinary references, weak and strong handles. */
static void archetype_slots(const world_profile_archetype *d, uint32_t *strong, uint32_t *weak,
                            uint32_t *pins)
{
    *strong = *weak = *pins = 0;
    for (uint32_t i = 0; i < d->n_refs; i++) {
        switch (d->refs[i].hold) {
        case WORLD_PROFILE_HOLD_REF: *strong += d->refs[i].count; break;
        case WORLD_PROFILE_HOLD_WEAK: *weak += d->refs[i].count; break;
        case WORLD_PROFILE_HOLD_STRONG: *pins += d->refs[i].count; break;
        }
    }
}

/* An object's strong handles, right after its struct: with the heap they were taken on and
 * their number, so that its class's hook can release them without knowing the archetype. */
typedef struct archetype_pins {
    gc_heap *heap;
    uint32_t n;
    gc_strong h[];
} archetype_pins;

static size_t archetype_pins_size(uint32_t pins)
{
    return pins > 0 ? sizeof(archetype_pins) + pins * sizeof(gc_strong) : 0;
}

static void archetype_actor_destructor(void *obj)
{
    gc_ref_array_free(&((archetype_actor *)obj)->owns);
}

/* An object's strong handles go with it (UE: a TStrongObjectPtr member's destructor), so what
 * they held can be collected once nothing else keeps it. */
static void archetype_release_pins(archetype_pins *p)
{
    for (uint32_t i = 0; i < p->n; i++)
        gc_strong_reset(p->heap, &p->h[i]);
}

static void archetype_actor_finish_destroy(void *obj)
{
    archetype_release_pins((archetype_pins *)((char *)obj +
                                              archetype_align(sizeof(archetype_actor))));
}

static void archetype_part_finish_destroy(void *obj)
{
    archetype_release_pins((archetype_pins *)((char *)obj +
                                              archetype_align(sizeof(archetype_part))));
}

/* A lifetime = instance actor's ordinary references: [n][n slots], each reported as an
 * immutable reference (never nulled, even when its target is garbage). */
typedef struct archetype_held {
    uint32_t n;
    uint32_t pad;
    void *slot[];
} archetype_held;

static void archetype_held_refs_cb(void *data, gc_collector *collector)
{
    archetype_held *h = data;

    for (uint32_t i = 0; i < h->n; i++)
        gc_collector_add_immutable(collector, h->slot[i]);
}

/* Registers one class: base members (those of archetype_actor or archetype_part) then a REF
 * member per slot at refs_offset, or (held) one block of immutable references there. */
static gc_result archetype_class_register(world_env *env, const char *name, bool is_actor,
                                          bool cluster_root, uint32_t strong, bool has_pins,
                                          bool held, size_t size, size_t refs_offset,
                                          gc_class **out)
{
    gc_member members[2 + 2 * WORLD_PROFILE_REFS_MAX * WORLD_PROFILE_EARLIER_MAX];
    gc_class_desc desc;
    uint32_t n = 0;

    if (is_actor) {
        members[n++] = (gc_member)GC_REF_ARRAY(archetype_actor, owns);
    } else {
        members[n++] = (gc_member)GC_REF(archetype_part, base.owner_actor);
    }
    if (held)
        members[n++] = (gc_member){ GC_MEMBER_STRUCT_ARO, "held",
                                    refs_offset - sizeof(archetype_held),
                                    sizeof(archetype_held) + strong * sizeof(void *), 0, NULL,
                                    archetype_held_refs_cb };
    for (uint32_t i = 0; !held && i < strong; i++)
        members[n++] = (gc_member){ GC_MEMBER_REF, "ref", refs_offset + i * sizeof(void *),
                                    sizeof(void *), 0, NULL, NULL };
    members[n++] = (gc_member)GC_MEMBERS_END;
    memset(&desc, 0, sizeof desc);
    desc.name = name;
    desc.size = size;
    desc.super = is_actor ? env->classes.actor : NULL;
    desc.flags = GC_CLASS_CAN_BE_IN_CLUSTER | (cluster_root ? GC_CLASS_CLUSTER_ROOT : 0);
    desc.members = members;
    if (is_actor)
        desc.hooks.destructor = archetype_actor_destructor;
    if (has_pins)
        desc.hooks.finish_destroy = is_actor ? archetype_actor_finish_destroy
                                             : archetype_part_finish_destroy;
    return gc_class_register(env->heap, &desc, out);
}

bool world_archetypes_compile(world_env *env, const world_profile *p, const char *path,
                              char *err, size_t err_size)
{
    world_archetype *v;

    if (!world_profile_check_names(p, path, err, err_size))
        return false;
    v = calloc(p->n > 0 ? p->n : 1, sizeof *v);
    if (v == NULL) {
        snprintf(err, err_size, "%s: out of memory compiling the world profile", path);
        return false;
    }
    for (uint32_t i = 0; i < p->n; i++) {
        world_archetype *a = &v[i];
        const world_profile_archetype *d = &p->archetypes[i];
        bool is_actor = d->base == WORLD_PROFILE_BASE_ACTOR;
        size_t head = is_actor ? sizeof(archetype_actor) : sizeof(archetype_part);
        char part_name[WORLD_PROFILE_NAME_MAX + 8];
        gc_result r;

        a->def = *d;
        a->held = d->lifetime == WORLD_PROFILE_LIFETIME_INSTANCE && is_actor;
        archetype_slots(d, &a->strong, &a->weak, &a->pins);
        a->pins_offset = archetype_align(head);
        a->refs_offset = a->pins_offset + archetype_pins_size(a->pins) +
                         (a->held ? sizeof(archetype_held) : 0);
        a->weak_offset = a->refs_offset + a->strong * sizeof(void *);
        a->payload_offset = a->weak_offset + a->weak * sizeof(gc_weak);
        r = archetype_class_register(env, d->name, is_actor, is_actor && d->cluster, a->strong,
                                     a->pins > 0, a->held, a->payload_offset + d->payload,
                                     a->refs_offset, &a->cls);
        if (r == GC_OK && is_actor && d->components > 0) {
            size_t ph = archetype_align(sizeof(archetype_part));

            snprintf(part_name, sizeof part_name, "%sPart", d->name);
            a->part_pins_offset = ph;
            a->part_refs_offset = ph + archetype_pins_size(a->pins);
            a->part_weak_offset = a->part_refs_offset + a->strong * sizeof(void *);
            a->part_payload_offset = a->part_weak_offset + a->weak * sizeof(gc_weak);
            r = archetype_class_register(env, part_name, false, false, a->strong, a->pins > 0,
                                         false, a->part_payload_offset + d->payload,
                                         a->part_refs_offset, &a->part_cls);
        }
        if (r != GC_OK) {
            snprintf(err, err_size, "%s:%u: [archetype %s]: cannot register its class: %s",
                     path, d->line, d->name, gc_result_str(r));
            free(v);
            return false;
        }
    }
    world_archetypes_free(env);
    env->archetypes = v;
    env->n_archetypes = p->n;
    env->cells = p->cells;
    return true;
}

void world_archetypes_free(world_env *env)
{
    free(env->archetypes);
    free(env->spawn_scratch);
    env->archetypes = NULL;
    env->spawn_scratch = NULL;
    env->n_archetypes = env->spawn_scratch_cap = 0;
}

int world_archetype_find(const world_env *env, const char *name)
{
    for (uint32_t i = 0; i < env->n_archetypes; i++)
        if (strcmp(env->archetypes[i].def.name, name) == 0)
            return (int)i;
    return -1;
}

/* ---- spawning ------------------------------------------------------------------------- */

typedef struct archetype_build {
    world *w;
    level *lvl;                    /* where its actors go: the persistent level, or a cell's */
    player_controller *owner;
    uint32_t top;                  /* the spawned archetype: its lifetime is the spawn's */
    uint32_t n;                    /* objects in env->spawn_scratch */
    bool placed;                   /* a cell's startup actor (world_archetype_place) */
    bool instance;                 /* a lifetime = instance spawn: the game instance's */
    uint32_t seq;                  /* placed: its number in the cell (its name's) */
    const float *pos;              /* placed: where it stands */
    gc_result r;
} archetype_build;

static bool archetype_record(archetype_build *b, void *obj)
{
    world_env *env = b->w->env;

    if (!VEC_RESERVE(env->spawn_scratch, env->spawn_scratch_cap, b->n + 1)) {
        b->r = GC_E_NOMEM;
        return false;
    }
    env->spawn_scratch[b->n++] = obj;
    return true;
}

static bool archetype_own(archetype_build *b, archetype_actor *parent, void *obj)
{
    gc_result r = gc_ref_array_push(&parent->owns, obj);

    if (r != GC_OK) {
        b->r = r;
        return false;
    }
    gc_write_barrier(b->w->env->heap, obj);
    return true;
}

static archetype_part *archetype_new_part(archetype_build *b, archetype_actor *parent,
                                          gc_class *cls, uint32_t archetype, bool is_child,
                                          const char *stem)
{
    gc_heap *heap = b->w->env->heap;
    char name[WORLD_PROFILE_NAME_MAX + 16];
    archetype_part *part;
    void *obj;

    snprintf(name, sizeof name, "%s%u", stem, parent->owns.count);
    b->r = gc_object_create(heap, cls, parent, name, 0, &obj);
    if (b->r != GC_OK)
        return NULL;
    part = obj;
    part->archetype = archetype;
    part->is_child = is_child;
    WORLD_STORE_REF(heap, part->base.owner_actor, &parent->base);
    if (!archetype_own(b, parent, part) || !archetype_record(b, part))
        return NULL;
    return part;
}

/* Creates an instance of archetype idx (and everything under it), parent NULL for the spawned
 * actor. *out_actor gets the actor (NULL for a component archetype). */
static bool archetype_build_tree(archetype_build *b, uint32_t idx, archetype_actor *parent,
                                 archetype_actor **out_actor)
{
    world *w = b->w;
    world_env *env = w->env;
    gc_heap *heap = env->heap;
    const world_archetype *arch = &env->archetypes[idx];
    const world_profile_archetype *d = &arch->def;
    level *lvl = b->lvl;
    char name[WORLD_PROFILE_NAME_MAX + 24];
    archetype_actor *aa;
    actor *a;
    uint32_t flags = 0;

    *out_actor = NULL;
    if (d->base == WORLD_PROFILE_BASE_COMPONENT)
        return parent != NULL && archetype_new_part(b, parent, arch->cls, idx, true, d->name);
    /* A cell's child actors stand still and stay off the wire: only its top actors take a
     * slot, as only the replicated or moving children of a spawn do. The game instance's
     * actors are in no level. */
    if (!b->instance && (parent == NULL || (!b->placed && (d->replicated || d->moves))))
        flags |= ACTOR_CREATE_PLACE;
    if (b->placed) {
        flags |= ACTOR_CREATE_STARTUP;
        if (parent == NULL)
            snprintf(name, sizeof name, "%s_%u", d->name, b->seq);
        else
            snprintf(name, sizeof name, "%s%u", d->name, parent->owns.count);
    } else {
        snprintf(name, sizeof name, "%s_%llu", d->name, (unsigned long long)env->next_net_id);
    }
    b->r = actor_create(w, lvl, arch->cls, ACTOR_KIND_ARCHETYPE,
                        parent != NULL ? (void *)parent
                                       : b->instance ? (void *)env->instance : (void *)lvl,
                        name, flags, &a);
    if (b->r != GC_OK)
        return false;
    aa = (archetype_actor *)a;
    if (!archetype_record(b, aa)) {
        actor_abandon(w, a);
        return false;
    }
    *out_actor = aa;
    a->archetype = idx + 1;
    a->replicates = d->replicated && !b->placed && !b->instance;
    a->moves = d->moves && !b->placed && !b->instance;
    aa->top_level = parent == NULL;
    aa->heading = (float)((b->placed ? b->seq : a->net_id) % 628) / 100.0f;
    if (b->owner != NULL) {
        /* A persistent actor names its player (replication) but does not hold the player's
         * controller: it must not keep the player alive once the player has gone; nor does
         * the game instance's. */
        if (env->archetypes[b->top].def.lifetime != WORLD_PROFILE_LIFETIME_PERSISTENT &&
            !b->instance)
            WORLD_STORE_REF(heap, a->owner, &b->owner->base);
        a->owner_player_id = b->owner->player_id;
    }
    if (parent == NULL && b->placed) {
        memcpy(a->pos, b->pos, sizeof a->pos);
    } else if (parent == NULL) {
        actor_place_near_owner(a, b->owner);
        if (d->lifetime == WORLD_PROFILE_LIFETIME_SECONDS)
            aa->life_left = d->seconds;
    } else {
        memcpy(a->pos, parent->base.pos, sizeof a->pos);
    }
    if (parent != NULL && !archetype_own(b, parent, aa))
        return false;
    for (uint32_t i = 0; i < d->components; i++)
        if (archetype_new_part(b, aa, arch->part_cls, idx, false, "Part") == NULL)
            return false;
    for (uint32_t c = 0; c < d->n_children; c++) {
        for (uint32_t k = 0; k < d->children[c].count; k++) {
            archetype_actor *child;

            if (!archetype_build_tree(b, d->children[c].archetype, aa, &child))
                return false;
        }
    }
    return true;
}

/* The first placed actor of a level, or NULL. */
static void *archetype_first_placed(const level *lvl)
{
    return lvl != NULL && lvl->actors.count > WORLD_FIRST_DYNAMIC_SLOT
               ? lvl->actors.data[WORLD_FIRST_DYNAMIC_SLOT]
               : NULL;
}

/* `placed` for this build: its own cell's first actor, or that of the visible cell where the
 * spawned actor stands. */
static void *archetype_placed_target(const archetype_build *b)
{
    const actor *top = b->n > 0 ? b->w->env->spawn_scratch[0] : NULL;
    world_cell *cell;

    if (b->placed)
        return archetype_first_placed(b->lvl);
    if (top == NULL)
        return NULL;
    cell = world_streaming_cell_at(b->w, top->pos[0], top->pos[1]);
    return cell != NULL && cell->state == WORLD_LEVEL_LOADED ? archetype_first_placed(cell->lvl)
                                                             : NULL;
}

/* The object a term names for scratch[i] (NULL: none). */
static void *archetype_target(const archetype_build *b, uint32_t i, world_profile_ref_kind kind,
                              uint32_t back, void *owner)
{
    void *const *v = b->w->env->spawn_scratch;

    switch (kind) {
    case WORLD_PROFILE_REF_OWNER:
        return owner;
    case WORLD_PROFILE_REF_LEVEL:
        return b->lvl;
    case WORLD_PROFILE_REF_EARLIER:
        return back <= i ? v[i - back] : NULL;
    case WORLD_PROFILE_REF_PLACED:
        return archetype_placed_target(b);
    case WORLD_PROFILE_REF_SIBLINGS:
        break;
    }
    if (owner != NULL && i > 0) {
        const archetype_actor *o = owner;

        /* owner is an archetype_actor whenever the object is not the spawned actor. */
        if (gc_object_is_a(b->w->env->heap, owner, b->w->env->classes.actor) &&
            ((const actor *)owner)->kind == ACTOR_KIND_ARCHETYPE && o->owns.count > 1) {
            for (uint32_t k = 0; k < o->owns.count; k++)
                if (o->owns.data[k] == v[i])
                    return o->owns.data[(k + 1) % o->owns.count];
        }
    }
    return NULL;
}

/* Fills every reference slot and weak handle of the spawn's objects. */
static void archetype_wire(archetype_build *b)
{
    world_env *env = b->w->env;
    gc_heap *heap = env->heap;

    for (uint32_t i = 0; i < b->n; i++) {
        void *obj = env->spawn_scratch[i];
        const world_archetype *arch;
        void *owner;
        char *base = obj;
        size_t refs_off, weak_off, pins_off, payload_off;
        uint32_t s = 0, wk = 0, pn = 0;
        bool held = false;

        if (gc_object_is_a(heap, obj, env->classes.actor)) {
            archetype_actor *aa = obj;

            arch = &env->archetypes[aa->base.archetype - 1];
            held = arch->held;
            owner = aa->top_level ? (void *)aa->base.owner : gc_object_outer(heap, obj);
            refs_off = arch->refs_offset;
            weak_off = arch->weak_offset;
            pins_off = arch->pins_offset;
            payload_off = arch->payload_offset;
        } else {
            archetype_part *part = obj;

            arch = &env->archetypes[part->archetype];
            owner = part->base.owner_actor;
            refs_off = part->is_child ? arch->refs_offset : arch->part_refs_offset;
            weak_off = part->is_child ? arch->weak_offset : arch->part_weak_offset;
            pins_off = part->is_child ? arch->pins_offset : arch->part_pins_offset;
            payload_off = part->is_child ? arch->payload_offset : arch->part_payload_offset;
        }
        if (arch->pins > 0) {
            ((archetype_pins *)(base + pins_off))->heap = heap;
            ((archetype_pins *)(base + pins_off))->n = arch->pins;
        }
        if (held)
            ((archetype_held *)(base + refs_off - sizeof(archetype_held)))->n = arch->strong;
        for (uint32_t t = 0; t < arch->def.n_refs; t++) {
            const world_profile_ref *ref = &arch->def.refs[t];

            for (uint32_t k = 1; k <= ref->count; k++) {
                void *target = archetype_target(b, i, ref->kind, k, owner);

                if (ref->hold == WORLD_PROFILE_HOLD_WEAK) {
                    gc_weak h = gc_weak_make(heap, target);
                    memcpy(base + weak_off + wk++ * sizeof(gc_weak), &h, sizeof h);
                } else if (ref->hold == WORLD_PROFILE_HOLD_STRONG) {
                    archetype_pins *pins = (archetype_pins *)(base + pins_off);
                    /* Refused only for a target being destroyed: the handle stays empty. */
                    if (target != NULL)
                        (void)gc_strong_set(heap, &pins->h[pn], target);
                    pn++;
                } else {
                    void **slot = (void **)(base + refs_off) + s++;
                    WORLD_STORE_REF(heap, *slot, target);
                }
            }
        }
        if (arch->def.payload > 0)
            memset(base + payload_off, (int)(i & 0xff), arch->def.payload);
    }
}

/* The topmost actors of the tree whose archetype asks for a cluster root one each. */
static void archetype_clusters(world_env *env, archetype_actor *aa)
{
    if (env->archetypes[aa->base.archetype - 1].def.cluster) {
        if (gc_cluster_create(env->heap, aa) == GC_OK)
            env->clusters_created++;
        return;
    }
    for (uint32_t i = 0; i < aa->owns.count; i++) {
        actor *child = aa->owns.data[i];
        if (child != NULL && gc_object_is_a(env->heap, child, env->classes.actor))
            archetype_clusters(env, (archetype_actor *)child);
    }
}

/* Every actor of the spawn, once built: into the grid and replication's outbox. */
static void archetype_announce(world *w, uint32_t n)
{
    world_env *env = w->env;

    for (uint32_t i = 0; i < n; i++) {
        actor *a = env->spawn_scratch[i];

        if (!gc_object_is_a(env->heap, a, env->classes.actor) || !a->placed)
            continue;
        actor_enter_grid(w, a);
        actor_queue_spawn(w, a);
    }
}

gc_result actor_spawn_archetype(world *w, uint32_t index, player_controller *owner,
                                actor **out_actor)
{
    world_env *env = w->env;
    archetype_build b = { w, w->persistent_level, owner, index, 0, false, false, 0, NULL,
                          GC_OK };
    const world_archetype *arch;
    archetype_actor *top = NULL;

    if (index >= env->n_archetypes || env->archetypes[index].def.base != WORLD_PROFILE_BASE_ACTOR)
        return GC_E_INVALID;
    arch = &env->archetypes[index];
    b.instance = arch->def.lifetime == WORLD_PROFILE_LIFETIME_INSTANCE;
    if (b.instance && env->instance == NULL)
        return GC_E_STATE;
    if (!archetype_build_tree(&b, index, NULL, &top)) {
        /* Nothing of it is announced yet: the placed actors give back their slots. */
        for (uint32_t i = 0; i < b.n; i++) {
            actor *a = env->spawn_scratch[i];
            if (gc_object_is_a(env->heap, a, env->classes.actor))
                actor_abandon(w, a);
        }
        return b.r != GC_OK ? b.r : GC_E_NOMEM;
    }
    archetype_wire(&b);
    if (b.instance) {
        /* The game instance holds it from now on, whatever world it was spawned in. */
        gc_result r = gc_ref_array_push(&env->instance->objects, top);

        if (r != GC_OK) {
            gc_object_mark_garbage(env->heap, top);
            return r;
        }
        gc_write_barrier(env->heap, top);
        *out_actor = &top->base;
        return GC_OK;
    }
    if (owner != NULL && arch->def.lifetime != WORLD_PROFILE_LIFETIME_PERSISTENT) {
        gc_result r = gc_ref_array_push(&owner->owned, top);

        if (r != GC_OK) {
            for (uint32_t i = 0; i < b.n; i++) {
                actor *a = env->spawn_scratch[i];
                if (gc_object_is_a(env->heap, a, env->classes.actor))
                    actor_abandon(w, a);
            }
            return r;
        }
        gc_write_barrier(env->heap, top);
    }
    archetype_clusters(env, top);
    archetype_announce(w, b.n);
    *out_actor = &top->base;
    return GC_OK;
}

gc_result world_archetype_place(world *w, level *lvl, uint32_t index, uint32_t seq,
                                const float pos[3], bool cluster, uint32_t *out_objects)
{
    world_env *env = w->env;
    archetype_build b = { w, lvl, NULL, index, 0, true, false, seq, pos, GC_OK };
    archetype_actor *top = NULL;

    if (index >= env->n_archetypes || env->archetypes[index].def.base != WORLD_PROFILE_BASE_ACTOR)
        return GC_E_INVALID;
    if (!archetype_build_tree(&b, index, NULL, &top)) {
        for (uint32_t i = 0; i < b.n; i++) {
            actor *a = env->spawn_scratch[i];
            if (gc_object_is_a(env->heap, a, env->classes.actor))
                actor_abandon(w, a);
        }
        return b.r != GC_OK ? b.r : GC_E_NOMEM;
    }
    archetype_wire(&b);
    if (cluster)
        archetype_clusters(env, top);
    *out_objects = b.n;
    return GC_OK;
}

bool world_object_is_persistent(const world_env *env, gc_heap *heap, const void *obj)
{
    const void *o = obj;

    if (env->n_archetypes == 0)
        return false;
    /* Up the outer chain to the spawned actor: the one whose outer is not an archetype's. */
    while (o != NULL) {
        void *outer;

        if (gc_object_is_a(heap, o, env->classes.actor)) {
            const actor *a = o;

            if (a->kind != ACTOR_KIND_ARCHETYPE)
                return false;
            if (((const archetype_actor *)a)->top_level)
                return env->archetypes[a->archetype - 1].def.lifetime ==
                           WORLD_PROFILE_LIFETIME_PERSISTENT ||
                       env->archetypes[a->archetype - 1].def.lifetime ==
                           WORLD_PROFILE_LIFETIME_INSTANCE;
        } else if (gc_object_outer(heap, o) == NULL) {
            return false;
        }
        outer = gc_object_outer(heap, o);
        o = outer;
    }
    return false;
}

typedef struct archetype_census {
    const world_env *env;
    gc_heap *heap;
    uint32_t *out;
} archetype_census;

static void archetype_census_cb(void *obj, void *userdata)
{
    archetype_census *c = userdata;
    const gc_class *cls = gc_object_class(c->heap, obj);
    const world_env *env = c->env;
    uint32_t i;

    /* Only archetype objects say which archetype they are of; their class tells which kind. */
    if (gc_class_super(cls) == env->classes.actor) {
        const actor *a = obj;

        if (a->kind == ACTOR_KIND_ARCHETYPE && a->archetype >= 1 &&
            a->archetype <= env->n_archetypes && env->archetypes[a->archetype - 1].cls == cls)
            c->out[2 * (a->archetype - 1)]++;
        return;
    }
    if (gc_class_super(cls) != NULL)
        return;
    /* Parts have no super; nor do the server's own components, levels and worlds, whose
     * layout differs: match the class before reading anything of the object. */
    for (i = 0; i < env->n_archetypes; i++) {
        if (env->archetypes[i].part_cls == cls) {
            c->out[2 * i + 1]++;
            return;
        }
        if (env->archetypes[i].cls == cls) {
            c->out[2 * i]++;
            return;
        }
    }
}

void world_archetype_census(const world_env *env, gc_heap *heap, uint32_t *out)
{
    archetype_census c = { env, heap, out };

    memset(out, 0, 2 * (size_t)env->n_archetypes * sizeof *out);
    if (env->n_archetypes > 0)
        gc_object_foreach_read(heap, archetype_census_cb, &c);
}
