/*
 * world_grid.c - the uniform 2D grid of a world's actors (see world_grid.h).
 *
 * Cells are unsorted arrays; an actor remembers its cell and index, so insert, remove and a
 * move within a cell are O(1), and a move across cells is a swap-remove plus an append.
 */
#include "world_grid.h"

#include <math.h>
#include <string.h>

#include "vec.h"
#include "world.h"

static bool grid_alloc(world_grid *g, float extent, float cull_distance)
{
    float cell = cull_distance > 1.0f ? cull_distance : 1.0f;
    double dim = ceil((double)extent / cell);

    if (dim < 1)
        dim = 1;
    if (dim > WORLD_GRID_MAX_DIM) {
        dim = WORLD_GRID_MAX_DIM;
        cell = (float)((double)extent / dim);
    }
    memset(g, 0, sizeof *g);
    g->extent = extent;
    g->cull_distance = cull_distance;
    g->cell = cell;
    g->dim = (uint32_t)dim;
    g->origin = -0.5f * (float)g->dim * cell;
    g->cells = calloc((size_t)g->dim * g->dim, sizeof *g->cells);
    if (g->cells == NULL) {
        g->dim = 0;
        return false;
    }
    return true;
}

bool world_grid_init(world_grid *g, float extent, float cull_distance)
{
    return grid_alloc(g, extent, cull_distance);
}

void world_grid_free(world_grid *g)
{
    for (uint32_t i = 0; i < g->dim * g->dim; i++)
        free(g->cells[i].v);
    free(g->cells);
    memset(g, 0, sizeof *g);
}

static uint32_t grid_coord(const world_grid *g, float v)
{
    float c = floorf((v - g->origin) / g->cell);

    if (!(c >= 0.0f)) /* also NaN */
        return 0;
    if (c >= (float)g->dim)
        return g->dim - 1;
    return (uint32_t)c;
}

uint32_t world_grid_cell_of(const world_grid *g, float x, float y)
{
    return grid_coord(g, y) * g->dim + grid_coord(g, x);
}

static bool grid_put(world_grid *g, uint32_t ci, actor *a)
{
    world_grid_cell *c = &g->cells[ci];

    if (!VEC_RESERVE(c->v, c->cap, c->count + 1))
        return false;
    c->v[c->count] = (world_grid_entry){ a, a->pos[0], a->pos[1], a->moves };
    a->grid_cell = ci;
    a->grid_index = c->count++;
    return true;
}

static void grid_take(world_grid *g, actor *a)
{
    world_grid_cell *c = &g->cells[a->grid_cell];
    uint32_t i = a->grid_index;

    c->v[i] = c->v[--c->count];
    if (i < c->count)
        c->v[i].a->grid_index = i;
    a->grid_cell = WORLD_GRID_NONE;
}

bool world_grid_insert(world_grid *g, actor *a)
{
    if (g->cells == NULL || !grid_put(g, world_grid_cell_of(g, a->pos[0], a->pos[1]), a)) {
        a->grid_cell = WORLD_GRID_NONE;
        return false;
    }
    g->count++;
    return true;
}

void world_grid_remove(world_grid *g, actor *a)
{
    if (a->grid_cell == WORLD_GRID_NONE)
        return;
    grid_take(g, a);
    g->count--;
}

void world_grid_move(world_grid *g, actor *a)
{
    uint32_t ci;

    if (a->grid_cell == WORLD_GRID_NONE)
        return;
    ci = world_grid_cell_of(g, a->pos[0], a->pos[1]);
    if (ci == a->grid_cell) {
        world_grid_entry *e = &g->cells[ci].v[a->grid_index];
        e->x = a->pos[0];
        e->y = a->pos[1];
        return;
    }
    grid_take(g, a);
    if (!grid_put(g, ci, a))
        g->count--; /* out of memory: the actor leaves the grid rather than lie about it */
}

bool world_grid_rebuild(world_grid *g, float extent, float cull_distance)
{
    world_grid fresh;

    if (!grid_alloc(&fresh, extent, cull_distance))
        return false;
    for (uint32_t i = 0; i < g->dim * g->dim; i++) {
        const world_grid_cell *c = &g->cells[i];
        for (uint32_t k = 0; k < c->count; k++) {
            actor *a = c->v[k].a;
            if (!grid_put(&fresh, world_grid_cell_of(&fresh, a->pos[0], a->pos[1]), a)) {
                /* Put every actor back where it was before giving up. */
                for (uint32_t j = 0; j < g->dim * g->dim; j++)
                    for (uint32_t m = 0; m < g->cells[j].count; m++) {
                        g->cells[j].v[m].a->grid_cell = j;
                        g->cells[j].v[m].a->grid_index = m;
                    }
                world_grid_free(&fresh);
                return false;
            }
            fresh.count++;
        }
    }
    for (uint32_t i = 0; i < g->dim * g->dim; i++)
        free(g->cells[i].v);
    free(g->cells);
    *g = fresh;
    return true;
}

void world_grid_query(const world_grid *g, float x, float y, float radius,
                      world_grid_visit_fn fn, void *userdata)
{
    float r2 = radius * radius;
    uint32_t x0, x1, y0, y1;

    if (g->cells == NULL || !(radius >= 0.0f))
        return;
    x0 = grid_coord(g, x - radius);
    x1 = grid_coord(g, x + radius);
    y0 = grid_coord(g, y - radius);
    y1 = grid_coord(g, y + radius);
    for (uint32_t cy = y0; cy <= y1; cy++) {
        for (uint32_t cx = x0; cx <= x1; cx++) {
            const world_grid_cell *c = &g->cells[cy * g->dim + cx];
            for (uint32_t i = 0; i < c->count; i++) {
                float dx = c->v[i].x - x, dy = c->v[i].y - y;
                float d2 = dx * dx + dy * dy;
                if (d2 <= r2)
                    fn(&c->v[i], d2, userdata);
            }
        }
    }
}
