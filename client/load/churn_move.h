/*
 * churn_move.h - how a bot steers its pawn while it holds: a move pattern turns the visit's
 * steering state and the run's random stream into the velocity of its next MoveInput. One
 * pattern so far, the random walk; another (a roaming route, say) is another pattern here.
 */
#ifndef REAP_CLIENT_CHURN_MOVE_H
#define REAP_CLIENT_CHURN_MOVE_H

#include <stdbool.h>
#include <stdint.h>

#define CHURN_SPEED_LIMIT 1200.0    /* the server's default net.MaxPawnSpeed */

/* A visit's steering. */
typedef struct churn_move {
    double heading;           /* radians */
    double speed;             /* world units per second, under the speed limit */
} churn_move;

/* The random walk: a visit's first input (first) draws a heading and a speed of its own,
 * then every input turns the heading a little. Draws from *rng. */
void churn_move_next(churn_move *m, bool first, uint64_t *rng, float *out_vx, float *out_vy);

#endif /* REAP_CLIENT_CHURN_MOVE_H */
