/*
 * engine_travel.c - the travel state machine (engine_travel.h): one switch over the phases,
 * each case calling the operation named after it.
 */
#include "engine_travel.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *engine_travel_mode_name(engine_travel_mode m)
{
    return m == ENGINE_TRAVEL_SEAMLESS ? "seamless" : "hard";
}

const char *engine_travel_phase_name(engine_travel_phase p)
{
    switch (p) {
    case ENGINE_TRAVEL_IDLE: return "idle";
    case ENGINE_TRAVEL_DEPART: return "depart";
    case ENGINE_TRAVEL_LOAD: return "load";
    case ENGINE_TRAVEL_END_PLAY: return "end_play";
    case ENGINE_TRAVEL_COLLECT: return "collect";
    case ENGINE_TRAVEL_VERIFY: return "verify";
    case ENGINE_TRAVEL_ARRIVE: return "arrive";
    case ENGINE_TRAVEL_PHASE_COUNT: break;
    }
    return "?";
}

void engine_travel_init(engine_travel *t, const char *transition_map)
{
    memset(t, 0, sizeof *t);
    snprintf(t->transition, sizeof t->transition, "%s", transition_map);
}

bool engine_travel_busy(const engine_travel *t)
{
    return t->phase != ENGINE_TRAVEL_IDLE;
}

bool engine_travel_start(engine_travel *t, const engine_travel_config *cfg,
                         engine_travel_mode mode, const char *from, const char *map, double now,
                         char *reason, size_t reason_size)
{
    if (t->stopped) {
        snprintf(reason, reason_size, "the server is stopping: a travel found a leaked world "
                 "with Engine.VerifyLoadMapWorldCleanup.Severity=3");
        t->refused++;
        return false;
    }
    if (engine_travel_busy(t)) {
        snprintf(reason, reason_size, "a %s travel to %s is under way (%s, %s); try again once "
                 "it has finished", engine_travel_mode_name(t->mode), t->map,
                 engine_travel_phase_name(t->phase),
                 t->mode == ENGINE_TRAVEL_SEAMLESS ? (t->hop == 1 ? "hop 1 of 2" : "hop 2 of 2")
                                                   : "one hop");
        t->refused++;
        return false;
    }
    t->cfg = *cfg;
    t->mode = mode;
    snprintf(t->map, sizeof t->map, "%s", map);
    snprintf(t->from, sizeof t->from, "%s", from);
    t->hop = 1;
    t->started = t->phase_started = now;
    memset(&t->cur, 0, sizeof t->cur);
    snprintf(t->cur.map, sizeof t->cur.map, "%s", map);
    snprintf(t->cur.from, sizeof t->cur.from, "%s", from);
    t->cur.mode = mode;
    t->cur.sliced = cfg->sliced;
    t->phase = ENGINE_TRAVEL_DEPART;
    return true;
}

static void travel_log(const engine_travel_ops *ops, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void travel_log(const engine_travel_ops *ops, const char *fmt, ...)
{
    char line[ENGINE_TRAVEL_LINE_MAX];
    va_list ap;

    if (ops->log == NULL)
        return;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    ops->log(ops->ctx, line);
}

/* The phase ends: its time is added up (hops summed) and logged. */
static void travel_next(engine_travel *t, const engine_travel_ops *ops, engine_travel_phase next)
{
    double now = ops->clock(ops->ctx);
    double took = now - t->phase_started;

    t->cur.phase_seconds[t->phase] += took;
    t->phase_work += now - t->step_started;
    t->phase_frames++;
    /* The work beside the wall time: what slicing costs is the gap between them. */
    if (t->phase != ENGINE_TRAVEL_DEPART)
        travel_log(ops, "travel to %s: %s%s took %.3f s (%.3f s of work in %u frame(s))", t->map,
                   engine_travel_phase_name(t->phase),
                   t->mode == ENGINE_TRAVEL_SEAMLESS && t->phase != ENGINE_TRAVEL_VERIFY
                       ? (t->hop == 1 ? " (hop 1)" : " (hop 2)")
                       : "",
                   took, t->phase_work, t->phase_frames);
    t->phase_work = 0;
    t->phase_frames = 0;
    t->phase = next;
    t->phase_started = now;
}

static void travel_finish(engine_travel *t, const engine_travel_ops *ops)
{
    double now = ops->clock(ops->ctx);

    t->cur.phase_seconds[t->phase] += now - t->phase_started;
    t->cur.seconds = now - t->started;
    if (!t->stopped) {
        t->travels[t->mode]++;
        if (t->mode == ENGINE_TRAVEL_HARD)
            travel_log(ops, "Took %f seconds to LoadMap(%s)", t->cur.seconds, t->map);
        else
            travel_log(ops, "----SeamlessTravel finished in %.2f seconds ------",
                       t->cur.seconds);
    }
    t->last = t->cur;
    t->phase = ENGINE_TRAVEL_IDLE;
}

engine_travel_phase engine_travel_tick(engine_travel *t, double budget,
                                       const engine_travel_ops *ops)
{
    double limit = t->cfg.sliced ? (budget > 0 ? budget : 1e-3) : 0;
    bool seamless = t->mode == ENGINE_TRAVEL_SEAMLESS;

    if (t->phase == ENGINE_TRAVEL_IDLE)
        return ENGINE_TRAVEL_IDLE;
    t->cur.frames++;
    for (;;) {
        bool worked = false; /* a phase that did this call's sliced work */
        uint32_t leaked;
        engine_travel_phase stepped = t->phase;

        t->step_started = ops->clock(ops->ctx);

        switch (t->phase) {
        case ENGINE_TRAVEL_DEPART:
            if (seamless)
                travel_log(ops, "SeamlessTravel to: %s (from %s, through %s)%s", t->map,
                           t->from, t->transition, t->cfg.sliced ? ", sliced" : "");
            else
                travel_log(ops, "LoadMap: %s (hard travel from %s)%s", t->map, t->from,
                           t->cfg.sliced ? ", sliced" : "");
            ops->depart(ops->ctx, t->mode, t->map);
            travel_next(t, ops, seamless ? ENGINE_TRAVEL_LOAD : ENGINE_TRAVEL_END_PLAY);
            break;
        case ENGINE_TRAVEL_LOAD:
            worked = true;
            if (!ops->load_step(ops->ctx, seamless && t->hop == 1 ? t->transition : t->map,
                                seamless && t->hop == 1, limit))
                break;
            ops->enter(ops->ctx, t->mode);
            travel_next(t, ops, seamless ? ENGINE_TRAVEL_END_PLAY : ENGINE_TRAVEL_ARRIVE);
            break;
        case ENGINE_TRAVEL_END_PLAY:
            worked = true;
            if (ops->end_play_step(ops->ctx, limit))
                travel_next(t, ops, ENGINE_TRAVEL_COLLECT);
            break;
        case ENGINE_TRAVEL_COLLECT:
            worked = true;
            if (!ops->collect_step(ops->ctx, limit))
                break;
            if (seamless && t->hop == 1) {
                travel_next(t, ops, ENGINE_TRAVEL_LOAD);
                t->hop = 2;
            } else {
                travel_next(t, ops, ENGINE_TRAVEL_VERIFY);
            }
            break;
        case ENGINE_TRAVEL_VERIFY:
            leaked = t->cfg.severity > 0 ? ops->verify(ops->ctx, t->cfg.trace_mode) : 0;
            t->cur.leaked = leaked;
            if (leaked > 0 && t->cfg.severity >= 2)
                t->leaked_worlds += leaked;
            if (leaked > 0 && t->cfg.severity >= 3) {
                t->stopped = true;
                ops->fatal(ops->ctx, leaked);
                travel_finish(t, ops);
                return ENGINE_TRAVEL_IDLE;
            }
            travel_next(t, ops, seamless ? ENGINE_TRAVEL_ARRIVE : ENGINE_TRAVEL_LOAD);
            break;
        case ENGINE_TRAVEL_ARRIVE:
            ops->arrive(ops->ctx, t->mode, t->map);
            travel_finish(t, ops);
            return ENGINE_TRAVEL_IDLE;
        case ENGINE_TRAVEL_IDLE:
        case ENGINE_TRAVEL_PHASE_COUNT:
            return ENGINE_TRAVEL_IDLE;
        }
        if (worked && t->phase == stepped) {
            t->phase_work += ops->clock(ops->ctx) - t->step_started;
            t->phase_frames++;
        }
        /* Sliced: one phase's work per call; what is left waits for the next frame. */
        if (worked && t->cfg.sliced)
            return t->phase;
    }
}
