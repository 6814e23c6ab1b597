/*
 * client_rng.h - the client's one random stream: splitmix64, seeded by --seed, so a run with
 * the same seed draws the same hold times, pauses, moves, leaves and network fates.
 */
#ifndef REAP_CLIENT_RNG_H
#define REAP_CLIENT_RNG_H

#include <stdint.h>

/* splitmix64: the next 64 bits of the stream at *state. */
static inline uint64_t client_rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);

    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A uniform double in [0, 1). */
static inline double client_rng_uniform(uint64_t *state)
{
    return (double)(client_rng_next(state) >> 11) * (1.0 / 9007199254740992.0);
}

#endif /* REAP_CLIENT_RNG_H */
