/*
 * engine_init.h - building and taking down the whole server (main.c's view of it).
 */
#ifndef REAP_ENGINE_INIT_H
#define REAP_ENGINE_INIT_H

#include <stddef.h>
#include <uv.h>

#include "cvar.h"
#include "engine.h"
#include "engine_options.h"

/* Builds the engine on loop: heap and classes, worlds, net driver, admin, dashboard, signals,
 * frame timer, console, Agones, systemd. opts and cvars are copied. On failure err says why
 * and nothing is left open. */
int engine_init(engine *e, uv_loop_t *loop, const engine_options *opts,
                const cvar_registry *cvars, char *err, size_t err_size);

/* Frees what engine_init built (the loop must have finished its handles). */
void engine_close(engine *e);

#endif /* REAP_ENGINE_INIT_H */
