/*
 * engine_internal.h - shared by the engine's own files, nobody else.
 *
 *   engine.c          the frame, the loop's body and the table of periodic jobs
 *   engine_collect.c  the collector as the frame drives it: settings from cvars, the ops table
 *                     engine_gc.c's schedule calls, the per-frame tick, logging, trimming memory
 *   engine_init.c     start-up, signals, config reload and shutdown; the only engine file that
 *                     knows the operator's side (admin, console, dashboard) and creates it
 *   engine_maps.c     the maps, loading one, server travel's operations and the leak verdict
 *   engine_travel.c   the travel state machine (pure, like engine_gc.c)
 *
 * engine_gc.c stays a pure function of a fake clock: it sees the collector only through
 * engine_collect.c's ops table.
 */
#ifndef REAP_ENGINE_INTERNAL_H
#define REAP_ENGINE_INTERNAL_H

#include "engine.h"
#include "reap_gc.h"

/* ---- engine.c ---- */
/* The frame timer's callback: periodic jobs, then one frame. */
void engine_frame_cb(uv_timer_t *timer);
/* When the periodic jobs first run (engine_run). */
void engine_jobs_begin(engine *e);

/* ---- engine_collect.c ---- */
/* The collector's settings the cvars ask for (gc_settings_default for the rest). */
void engine_settings_from_cvars(const cvar_registry *cv, gc_settings *s);
/* The gc phase of a frame: the schedule's decision, then logging and trimming. delta is the
 * frame's, now_ns the phase's start. */
void engine_tick_gc(engine *e, double delta, uint64_t now_ns);
/* world_cleanup_actors on every world. */
void engine_cleanup_actors(engine *e);
/* The low-memory rule's reading of free memory, once a second while the rule is on (a
 * periodic job); false while it is off. */
bool engine_read_free_memory(engine *e);
/* The next mark and gather slices may use `seconds` (pacing's, a sliced travel's). */
void engine_gc_set_time_limit(engine *e, double seconds);
/* The collections the collector finished since the last call, logged and measured. */
void engine_note_collections(engine *e);

/* ---- engine_maps.c ---- */
/* The map table from the profile: Default, every [map NAME], the transition map. */
void engine_maps_init(engine *e);
/* Loads the start map (--map, else the rotation's first, else Default), blocking. */
int engine_load_start_map(engine *e, char *err, size_t err_size);
/* world.Extent as the current map has it. */
float engine_map_extent(const engine *e);
/* The gc phase while a travel runs (it owns the collector then): the rotation's clock, then
 * the travel's step. False when no travel runs: the schedule's turn. */
bool engine_tick_travel(engine *e, uint64_t now_ns);
/* A frame's length, while a travel runs (the frames it cost). */
void engine_travel_frame_observe(engine *e, double frame_seconds);

#endif /* REAP_ENGINE_INTERNAL_H */
