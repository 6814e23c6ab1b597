/*
 * churn_move.c - the bots' move patterns (see churn_move.h).
 */
#include "churn_move.h"

#include <math.h>

#include "client_rng.h"

/* Under the limit by a hair, so that rounding never makes the server refuse the input. */
#define CHURN_ROAM_SPEED_SHARE 0.999

void churn_move_begin(churn_move *m, client_move_pattern pattern, double speed_limit,
                      double world_extent)
{
    m->heading = 0;
    m->speed = 0;
    m->pattern = pattern;
    m->limit = speed_limit > 0 ? speed_limit : CHURN_SPEED_LIMIT;
    m->half_extent = 0.5 * (world_extent > 0 ? world_extent : CHURN_WORLD_EXTENT);
    m->x = m->y = 0;
    m->at = -1;
    m->vx = m->vy = 0;
}

void churn_move_place(churn_move *m, double x, double y, double now)
{
    m->x = x;
    m->y = y;
    m->at = now;
}

static void churn_random_walk(churn_move *m, bool first, uint64_t *rng)
{
    if (first || m->speed <= 0) {
        m->heading = 2 * M_PI * client_rng_uniform(rng);
        m->speed = CHURN_SPEED_LIMIT * (0.25 + 0.65 * client_rng_uniform(rng));
    }
    m->heading += (client_rng_uniform(rng) - 0.5) * 1.2;
    m->vx = m->speed * cos(m->heading);
    m->vy = m->speed * sin(m->heading);
}

/* One component of a roaming velocity: reversed when the pawn would be past the edge within
 * `margin` units, heading out. */
static double churn_roam_turn(double pos, double v, double half, double margin)
{
    if ((v > 0 && pos + margin >= half) || (v < 0 && pos - margin <= -half))
        return -v;
    return v;
}

static void churn_roam(churn_move *m, bool first, uint64_t *rng, double now)
{
    double dt, margin;

    if (first || m->speed <= 0) {
        m->heading = 2 * M_PI * client_rng_uniform(rng);
        m->speed = m->limit * CHURN_ROAM_SPEED_SHARE;
        m->vx = m->speed * cos(m->heading);
        m->vy = m->speed * sin(m->heading);
        if (m->at < 0)
            m->at = now; /* no spawn record yet: reckon from the world's centre */
        return;
    }
    dt = m->at >= 0 && now > m->at ? now - m->at : 0;
    m->x += m->vx * dt;
    m->y += m->vy * dt;
    m->at = now;
    /* Clamp as the server does: a pawn never leaves the square. */
    m->x = fmax(-m->half_extent, fmin(m->half_extent, m->x));
    m->y = fmax(-m->half_extent, fmin(m->half_extent, m->y));
    /* Turn a second's travel before the edge: inputs come several times a second. */
    margin = m->speed;
    m->vx = churn_roam_turn(m->x, m->vx, m->half_extent, margin);
    m->vy = churn_roam_turn(m->y, m->vy, m->half_extent, margin);
}

void churn_move_next(churn_move *m, bool first, uint64_t *rng, double now, float *out_vx,
                     float *out_vy)
{
    if (m->pattern == CLIENT_MOVE_ROAM)
        churn_roam(m, first, rng, now);
    else
        churn_random_walk(m, first, rng);
    *out_vx = (float)m->vx;
    *out_vy = (float)m->vy;
}
