/*
 * lua_bench.c - Lua 5.4 on the benchmark graph, through the C API. An object is a table
 * whose array part holds its 4 references (lua_createtable(L, 4, 0): 4 TValues of 16 bytes,
 * the 64 bytes of payload). The root array is one table of n entries on the stack; the single
 * root is the one table left on the stack. The collector is stopped while building.
 *
 * Full collections are lua_gc(L, LUA_GCCOLLECT), what collectgarbage("collect") calls. The
 * step figure drives one whole incremental cycle with lua_gc(L, LUA_GCSTEP, 0) (one basic
 * step each) and times every step: Lua traverses a table in one piece, so a table of 1M
 * references makes one long step.
 */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "bench_peers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LUA_WARMUP 2
#define LUA_MAX_STEPS (1u << 22) /* a cycle longer than this is reported as broken */

/* Builds the graph; leaves the root array (or the single root) as the only stack slot. */
static int lua_build(lua_State *L, const bench_graph *g)
{
    lua_gc(L, LUA_GCSTOP);
    lua_createtable(L, (int)g->n, 0); /* the object table, stack index 1 */
    for (uint32_t i = 0; i < g->n; i++) {
        lua_createtable(L, BENCH_GRAPH_SLOTS, 0);
        lua_rawseti(L, 1, (lua_Integer)i + 1);
    }
    for (uint32_t i = 0; i < g->n; i++) {
        lua_rawgeti(L, 1, (lua_Integer)i + 1);
        for (unsigned j = 0; j < BENCH_GRAPH_SLOTS; j++) {
            uint32_t c = g->child[i][j];
            if (c == BENCH_GRAPH_NO_CHILD)
                continue;
            lua_rawgeti(L, 1, (lua_Integer)c + 1);
            lua_rawseti(L, -2, (lua_Integer)j + 1);
        }
        lua_pop(L, 1);
    }
    if (g->shape == BENCH_SHAPE_SINGLE_ROOT) {
        lua_rawgeti(L, 1, (lua_Integer)g->root + 1);
        lua_remove(L, 1);
    }
    lua_gc(L, LUA_GCRESTART);
    return 0;
}

static lua_State *lua_start(const bench_graph *g, lua_result *out)
{
    snprintf(out->version, sizeof out->version, "%s", LUA_RELEASE);
    lua_State *L = luaL_newstate();
    if (!L)
        return NULL;
    double t0 = bench_now();
    lua_build(L, g);
    out->build = bench_now() - t0;
    return L;
}

int lua_bench_collect(const bench_graph *g, lua_result *out)
{
    lua_State *L = lua_start(g, out);
    if (!L)
        return 1;
    for (int i = 0; i < LUA_WARMUP + BENCH_REPS; i++) {
        double t0 = bench_now();
        lua_gc(L, LUA_GCCOLLECT);
        double t = bench_now() - t0;
        if (i >= LUA_WARMUP)
            bench_runs_add(&out->runs, t);
    }
    lua_close(L);
    return 0;
}

int lua_bench_steps(const bench_graph *g, lua_result *out)
{
    lua_State *L = lua_start(g, out);
    if (!L)
        return 1;
    double *steps = malloc(LUA_MAX_STEPS * sizeof *steps);
    if (!steps) {
        lua_close(L);
        return 1;
    }
    /* Full collections first (the first ones untimed): the cycle timed below then starts
     * from a settled heap, and the full-collection time of this graph comes for free. */
    for (int i = 0; i < LUA_WARMUP; i++)
        lua_gc(L, LUA_GCCOLLECT);
    for (int i = 0; i < BENCH_REPS; i++) {
        double t0 = bench_now();
        lua_gc(L, LUA_GCCOLLECT);
        bench_runs_add(&out->runs, bench_now() - t0);
    }
    size_t n = 0;
    int done = 0;
    while (!done && n < LUA_MAX_STEPS) {
        double t0 = bench_now();
        done = lua_gc(L, LUA_GCSTEP, 0);
        steps[n++] = bench_now() - t0;
    }
    bench_slices_summarise(steps, n, &out->steps);
    free(steps);
    lua_close(L);
    return done ? 0 : 1;
}
