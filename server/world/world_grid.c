/*
 * world_grid.c - the uniform 2D grid of a world's actors (see world_grid.h).
 *
 * A cell's lists are unsorted arrays; an actor remembers its cell, and its index in the list
 * it was put in (moving or static, as it was then) with GRID_STATIC marking the latter, so insert, remove and a move within
 * a cell are O(1), and a move across cells is a swap-remove plus an append. The static box only
 * grows while the cell has static actors (a larger box only means fewer cells skipped) and is
 * reset when the last one leaves.
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

static void grid_free_cells(world_grid_cell *cells, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        free(cells[i].movers.v);
        free(cells[i].statics.v);
    }
    free(cells);
}

void world_grid_free(world_grid *g)
{
    grid_free_cells(g->cells, g->dim * g->dim);
    memset(g, 0, sizeof *g);
}

enum { GRID_STATIC = 1u << 31 }; /* in grid_index: the actor is in its cell's static list */

static world_grid_list *grid_list(world_grid_cell *c, const actor *a)
{
    return a->grid_index & GRID_STATIC ? &c->statics : &c->movers;
}

static void grid_box_add(world_grid_cell *c, float x, float y)
{
    if (c->statics.count == 1) {
        c->box[0] = c->box[2] = x;
        c->box[1] = c->box[3] = y;
        return;
    }
    c->box[0] = fminf(c->box[0], x);
    c->box[1] = fminf(c->box[1], y);
    c->box[2] = fmaxf(c->box[2], x);
    c->box[3] = fmaxf(c->box[3], y);
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
    world_grid_list *l = a->moves ? &c->movers : &c->statics;

    if (!VEC_RESERVE(l->v, l->cap, l->count + 1))
        return false;
    l->v[l->count] = (world_grid_entry){ a, a->pos[0], a->pos[1], a->net_index, a->moves };
    a->grid_cell = ci;
    a->grid_index = l->count++ | (a->moves ? 0 : GRID_STATIC);
    if (!a->moves)
        grid_box_add(c, a->pos[0], a->pos[1]);
    return true;
}

static void grid_take(world_grid *g, actor *a)
{
    world_grid_list *l = grid_list(&g->cells[a->grid_cell], a);
    uint32_t flag = a->grid_index & GRID_STATIC, i = a->grid_index & ~GRID_STATIC;

    l->v[i] = l->v[--l->count];
    if (i < l->count)
        l->v[i].a->grid_index = i | flag;
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

void world_grid_retag(world_grid *g, const actor *a)
{
    if (a->grid_cell != WORLD_GRID_NONE)
        grid_list(&g->cells[a->grid_cell], a)->v[a->grid_index & ~GRID_STATIC].tag = a->net_index;
}

void world_grid_move(world_grid *g, actor *a)
{
    uint32_t ci;

    if (a->grid_cell == WORLD_GRID_NONE)
        return;
    ci = world_grid_cell_of(g, a->pos[0], a->pos[1]);
    if (ci == a->grid_cell) {
        world_grid_cell *c = &g->cells[ci];
        world_grid_entry *e = &grid_list(c, a)->v[a->grid_index & ~GRID_STATIC];
        e->x = a->pos[0];
        e->y = a->pos[1];
        if (a->grid_index & GRID_STATIC)
            grid_box_add(c, e->x, e->y);
        return;
    }
    grid_take(g, a);
    if (!grid_put(g, ci, a))
        g->count--; /* out of memory: the actor leaves the grid rather than lie about it */
}

/* Puts every actor of g back in its cell and list of g (after a failed rebuild moved them). */
static void grid_restore(world_grid *g)
{
    for (uint32_t j = 0; j < g->dim * g->dim; j++) {
        world_grid_list *lists[2] = { &g->cells[j].movers, &g->cells[j].statics };
        for (int k = 0; k < 2; k++)
            for (uint32_t m = 0; m < lists[k]->count; m++) {
                lists[k]->v[m].a->grid_cell = j;
                lists[k]->v[m].a->grid_index = m | (k == 1 ? GRID_STATIC : 0);
            }
    }
}

bool world_grid_rebuild(world_grid *g, float extent, float cull_distance)
{
    world_grid fresh;

    if (!grid_alloc(&fresh, extent, cull_distance))
        return false;
    for (uint32_t i = 0; i < g->dim * g->dim; i++) {
        const world_grid_list *lists[2] = { &g->cells[i].movers, &g->cells[i].statics };
        for (int l = 0; l < 2; l++) {
            for (uint32_t k = 0; k < lists[l]->count; k++) {
                actor *a = lists[l]->v[k].a;
                if (!grid_put(&fresh, world_grid_cell_of(&fresh, a->pos[0], a->pos[1]), a)) {
                    grid_restore(g);
                    world_grid_free(&fresh);
                    return false;
                }
                fresh.count++;
            }
        }
    }
    grid_free_cells(g->cells, g->dim * g->dim);
    *g = fresh;
    return true;
}

static void grid_visit_list(const world_grid_list *l, float x, float y, float r2, float inner2,
                            world_grid_visit_fn fn, void *userdata)
{
    for (uint32_t i = 0; i < l->count; i++) {
        float dx = l->v[i].x - x, dy = l->v[i].y - y;
        float d2 = dx * dx + dy * dy;
        if (d2 <= r2 && d2 > inner2)
            fn(&l->v[i], d2, userdata);
    }
}

/* The largest squared distance from (x, y) to a point of the box. */
static float grid_box_far2(const float box[4], float x, float y)
{
    float dx = fmaxf(fabsf(x - box[0]), fabsf(x - box[2]));
    float dy = fmaxf(fabsf(y - box[1]), fabsf(y - box[3]));

    return dx * dx + dy * dy;
}

/* inner < 0: every actor within radius. */
static void grid_query(const world_grid *g, float x, float y, float radius, float inner,
                       world_grid_visit_fn fn, void *userdata)
{
    float r2 = radius * radius, inner2 = inner < 0.0f ? -1.0f : inner * inner;
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
            grid_visit_list(&c->movers, x, y, r2, -1.0f, fn, userdata);
            if (c->statics.count > 0 && (inner2 < 0.0f || grid_box_far2(c->box, x, y) > inner2))
                grid_visit_list(&c->statics, x, y, r2, inner2, fn, userdata);
        }
    }
}

void world_grid_query(const world_grid *g, float x, float y, float radius,
                      world_grid_visit_fn fn, void *userdata)
{
    grid_query(g, x, y, radius, -1.0f, fn, userdata);
}

void world_grid_query_ring(const world_grid *g, float x, float y, float radius, float inner,
                           world_grid_visit_fn fn, void *userdata)
{
    grid_query(g, x, y, radius, inner > 0.0f ? inner : -1.0f, fn, userdata);
}
