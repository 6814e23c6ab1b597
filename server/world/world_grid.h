/*
 * world_grid.h - a uniform 2D grid over a world's actors, for relevancy (ReplicationGraph's
 * GridSpatialization2D).
 *
 * The cell side is at least the cull distance, so every actor within the cull distance of a
 * point lies in the 3x3 cells around it: a query costs what a player can see, not what the
 * world holds. Positions outside the grid's extent are clamped into the edge cells (a query
 * still tests the exact distance, so nothing is lost, only bunched up).
 *
 * Each entry copies the actor's x/y so that a query tests distances without touching actors.
 * A cell keeps its moving and its static actors apart, with a box around the static ones, so
 * a ring query (world_grid_query_ring) skips a cell's static actors without reading them when
 * the box lies wholly inside the ring's inner circle.
 * The grid borrows actor pointers: an actor is in the grid exactly while it is placed in a
 * level (actor.c inserts it when it spawns and removes it when it is destroyed, before the
 * collector can free it), so a pointer in the grid is never stale.
 */
#ifndef REAP_WORLD_GRID_H
#define REAP_WORLD_GRID_H

#include <stdbool.h>
#include <stdint.h>

typedef struct actor actor;

enum { WORLD_GRID_NONE = UINT32_MAX, WORLD_GRID_MAX_DIM = 512 };

typedef struct world_grid_entry {
    actor *a;
    float x, y;
    uint32_t tag;            /* the actor's net_index, copied so queries need not read it */
    bool moves;              /* copied from the actor, so queries can tell without it */
} world_grid_entry;

typedef struct world_grid_list {
    world_grid_entry *v;
    uint32_t count, cap;
} world_grid_list;

typedef struct world_grid_cell {
    world_grid_list movers, statics;
    float box[4];            /* min x, min y, max x, max y of the static entries, or more */
} world_grid_cell;

typedef struct world_grid {
    float extent;            /* what it was built for */
    float cull_distance;
    float cell;              /* side of a cell, >= the cull distance it was built for */
    float origin;            /* world coordinate of the low corner of cell (0, 0) */
    uint32_t dim;            /* cells per side */
    world_grid_cell *cells;  /* dim * dim, row-major by y */
    uint32_t count;          /* actors in the grid */
} world_grid;

/* Builds an empty grid covering the square [-extent/2, extent/2]^2 with cells of at least
 * cull_distance (larger when the extent would need more than WORLD_GRID_MAX_DIM cells a side).
 * Returns false (and leaves *g empty, safe to free) when out of memory. */
bool world_grid_init(world_grid *g, float extent, float cull_distance);
void world_grid_free(world_grid *g);

/* Re-grids every actor for a new extent or cull distance. False (grid unchanged) on OOM. */
bool world_grid_rebuild(world_grid *g, float extent, float cull_distance);

/* Adds a at its current position (a must not be in the grid). False when out of memory:
 * the actor then simply is not spatially relevant to anyone. */
bool world_grid_insert(world_grid *g, actor *a);
/* Removes a if it is in the grid. */
void world_grid_remove(world_grid *g, actor *a);
/* After a's net_index changed: updates its entry's copy (tag). */
void world_grid_retag(world_grid *g, const actor *a);
/* After a's position changed: updates its entry, moving it to another cell if needed. */
void world_grid_move(world_grid *g, actor *a);

uint32_t world_grid_cell_of(const world_grid *g, float x, float y);

/* Calls fn for every actor within radius of (x, y) (distance <= radius, in 2D), with the
 * squared distance. fn must not change the grid. */
typedef void (*world_grid_visit_fn)(const world_grid_entry *e, float d2, void *userdata);
void world_grid_query(const world_grid *g, float x, float y, float radius,
                      world_grid_visit_fn fn, void *userdata);
/* Like world_grid_query, but static actors only where inner < distance <= radius: every moving
 * actor within radius, and the static ones in the ring (what a move of at most radius - cull
 * can have changed). Cells whose static actors all lie within inner are not read. */
void world_grid_query_ring(const world_grid *g, float x, float y, float radius, float inner,
                           world_grid_visit_fn fn, void *userdata);

#endif /* REAP_WORLD_GRID_H */
