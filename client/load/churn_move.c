/*
 * churn_move.c - the bots' move patterns (see churn_move.h).
 */
#include "churn_move.h"

#include <math.h>

#include "client_rng.h"

void churn_move_next(churn_move *m, bool first, uint64_t *rng, float *out_vx, float *out_vy)
{
    if (first || m->speed <= 0) {
        m->heading = 2 * M_PI * client_rng_uniform(rng);
        m->speed = CHURN_SPEED_LIMIT * (0.25 + 0.65 * client_rng_uniform(rng));
    }
    m->heading += (client_rng_uniform(rng) - 0.5) * 1.2;
    *out_vx = (float)(m->speed * cos(m->heading));
    *out_vy = (float)(m->speed * sin(m->heading));
}
