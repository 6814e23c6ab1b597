/*
 * churn_move.h - how a bot steers its pawn while it holds: a move pattern turns the visit's
 * steering state (and, for the random walk, the run's random stream) into the velocity of its
 * next MoveInput.
 *
 *   random  the random walk: a visit's first input draws a heading and a speed of its own
 *           (a quarter to nine tenths of the speed limit), then every input turns it a little;
 *   roam    straight lines at the server's net.MaxPawnSpeed (Welcome.limits), turning back at
 *           the world's edge (Welcome.world_extent): the pawn crosses streaming cells, so they
 *           load ahead of it and unload behind it. The pattern reckons where its pawn is from
 *           the pawn's spawn record and the velocities it asked for (movement updates are not
 *           decoded, to keep one process able to play many bots), and turns a component of
 *           the velocity round before the pawn would reach the edge.
 */
#ifndef REAP_CLIENT_CHURN_MOVE_H
#define REAP_CLIENT_CHURN_MOVE_H

#include <stdbool.h>
#include <stdint.h>

#include "churn_plan.h"

#define CHURN_SPEED_LIMIT 1200.0    /* the server's default net.MaxPawnSpeed */
#define CHURN_WORLD_EXTENT 200000.0 /* the server's default world.Extent */

/* A visit's steering. */
typedef struct churn_move {
    double heading;           /* radians */
    double speed;             /* world units per second, under the speed limit */
    client_move_pattern pattern;
    double limit;             /* the server's net.MaxPawnSpeed */
    double half_extent;       /* half the world's side: pawns live in [-half, half]^2 */
    double x, y;              /* roam: where the pawn is reckoned to be ... */
    double at;                /* ... at this time (seconds; < 0: not reckoned yet) */
    double vx, vy;            /* the velocity last asked for */
} churn_move;

/* A visit begins: its pattern, and what the server's Welcome says of speed and extent (<= 0:
 * the server's defaults). */
void churn_move_begin(churn_move *m, client_move_pattern pattern, double speed_limit,
                      double world_extent);
/* The pawn's spawn record: where it stands at now. */
void churn_move_place(churn_move *m, double x, double y, double now);
/* The velocity of the next MoveInput at now; first: the visit's first input. Draws from *rng
 * (the random walk only). */
void churn_move_next(churn_move *m, bool first, uint64_t *rng, double now, float *out_vx,
                     float *out_vy);

#endif /* REAP_CLIENT_CHURN_MOVE_H */
