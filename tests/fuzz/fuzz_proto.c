/*
 * fuzz_proto.c - a mutation fuzzer for the wire decoder (make fuzz runs it under ASan+UBSan).
 *
 * It encodes one valid envelope of every kind, then for a number of rounds takes one, mutates
 * it (flipped bits, overwritten, inserted and deleted bytes, truncation, splices of two) and
 * decodes the result with the server's limits. Whatever arrives must decode or be refused
 * without a crash, an out-of-bounds access or undefined behaviour; what decodes must encode
 * again and decode to the same body. Deterministic: the seed is printed and can be given back.
 *
 * usage: fuzz_proto [ROUNDS] [SEED]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reap_msg.h"

static uint64_t rng_state;

static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static size_t below(size_t n)
{
    return n ? (size_t)(rng() % n) : 0;
}

enum { FUZZ_MAX_INPUT = 8192, FUZZ_SEEDS = 8 };

typedef struct input {
    uint8_t data[FUZZ_MAX_INPUT];
    size_t len;
} input;

static input seeds[FUZZ_SEEDS];
static size_t seed_count;

static void add_seed(Reap__Envelope *env)
{
    input *in = &seeds[seed_count];
    if (msg_encode(env, in->data, sizeof in->data, &in->len) != MSG_OK) {
        fprintf(stderr, "fuzz_proto: cannot encode a seed message\n");
        exit(2);
    }
    seed_count++;
}

static void make_seeds(void)
{
    Reap__Envelope env = REAP__ENVELOPE__INIT;
    Reap__Hello hello = REAP__HELLO__INIT;
    hello.protocol_version = MSG_PROTOCOL_VERSION;
    hello.player_name = "fuzzer";
    hello.world = "World0";
    env.seq = 7;
    env.body_case = REAP__ENVELOPE__BODY_HELLO;
    env.hello = &hello;
    add_seed(&env);

    Reap__SpawnRequest spawn = REAP__SPAWN_REQUEST__INIT;
    spawn.actor_class = REAP__ACTOR_CLASS__ACTOR_CLASS_PROP;
    spawn.count = 12;
    env.body_case = REAP__ENVELOPE__BODY_SPAWN_REQUEST;
    env.spawn_request = &spawn;
    add_seed(&env);

    Reap__DestroyRequest destroy = REAP__DESTROY_REQUEST__INIT;
    uint64_t ids[] = { 1, 2, 300000, UINT64_MAX };
    destroy.n_net_ids = 4;
    destroy.net_ids = ids;
    env.body_case = REAP__ENVELOPE__BODY_DESTROY_REQUEST;
    env.destroy_request = &destroy;
    add_seed(&env);

    Reap__StatsRequest stats = REAP__STATS_REQUEST__INIT;
    env.body_case = REAP__ENVELOPE__BODY_STATS_REQUEST;
    env.stats_request = &stats;
    add_seed(&env);

    Reap__Ping ping = REAP__PING__INIT;
    ping.nonce = 123456789;
    env.body_case = REAP__ENVELOPE__BODY_PING;
    env.ping = &ping;
    add_seed(&env);

    Reap__Goodbye bye = REAP__GOODBYE__INIT;
    bye.reason = "done";
    env.body_case = REAP__ENVELOPE__BODY_GOODBYE;
    env.goodbye = &bye;
    add_seed(&env);

    Reap__Error error = REAP__ERROR__INIT;
    error.code = REAP__ERROR_CODE__ERROR_CODE_LIMIT;
    error.text = "over the limit";
    env.body_case = REAP__ENVELOPE__BODY_ERROR;
    env.error = &error;
    add_seed(&env);
}

static void mutate(input *in)
{
    int steps = 1 + (int)below(6);
    for (int s = 0; s < steps; s++) {
        switch (below(7)) {
        case 0: /* flip a bit */
            if (in->len)
                in->data[below(in->len)] ^= (uint8_t)(1u << below(8));
            break;
        case 1: /* overwrite a byte with an interesting value */
            if (in->len) {
                static const uint8_t vals[] = { 0x00, 0x01, 0x7f, 0x80, 0xff, 0x08, 0x12, 0x1a };
                in->data[below(in->len)] = vals[below(sizeof vals)];
            }
            break;
        case 2: /* insert random bytes */
            if (in->len < FUZZ_MAX_INPUT - 16) {
                size_t at = below(in->len + 1), n = 1 + below(16);
                memmove(in->data + at + n, in->data + at, in->len - at);
                for (size_t i = 0; i < n; i++)
                    in->data[at + i] = (uint8_t)rng();
                in->len += n;
            }
            break;
        case 3: /* delete a run */
            if (in->len) {
                size_t at = below(in->len), n = 1 + below(in->len - at);
                memmove(in->data + at, in->data + at + n, in->len - at - n);
                in->len -= n;
            }
            break;
        case 4: /* truncate */
            in->len = below(in->len + 1);
            break;
        case 5: { /* splice the tail of another seed */
            const input *o = &seeds[below(seed_count)];
            size_t at = below(in->len + 1), from = below(o->len + 1);
            size_t n = o->len - from;
            if (at + n > FUZZ_MAX_INPUT)
                n = FUZZ_MAX_INPUT - at;
            memcpy(in->data + at, o->data + from, n);
            in->len = at + n;
            break;
        }
        case 6: /* a huge varint length */
            if (in->len > 2) {
                size_t at = below(in->len - 1);
                in->data[at] = 0xff;
                in->data[at + 1] = 0xff;
            }
            break;
        }
    }
}

int main(int argc, char **argv)
{
    unsigned long rounds = argc > 1 ? strtoul(argv[1], NULL, 10) : 200000;
    unsigned long long seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x5EEDF00DULL;
    static _Alignas(16) uint8_t arena_buf[512 * 1024];
    static uint8_t out[FUZZ_MAX_INPUT * 2];
    unsigned long counts[5] = { 0 };
    msg_arena arena;

    rng_state = seed;
    make_seeds();
    printf("fuzz_proto: %lu rounds, seed 0x%llx, %zu seed messages\n", rounds, seed, seed_count);
    for (unsigned long r = 1; r <= rounds; r++) {
        input in = seeds[below(seed_count)];
        mutate(&in);
        Reap__Envelope *env = NULL;
        msg_arena_init(&arena, arena_buf, sizeof arena_buf);
        msg_result res = msg_decode(&arena, in.data, in.len, 4096, &env);
        counts[-res < 5 ? -res : 0]++;
        if (res == MSG_OK) {
            size_t len;
            Reap__Envelope *again = NULL;
            if (msg_encode(env, out, sizeof out, &len) != MSG_OK) {
                fprintf(stderr, "fuzz_proto: round %lu: a decoded message does not encode\n", r);
                return 1;
            }
            msg_arena_init(&arena, arena_buf, sizeof arena_buf);
            if (msg_decode(&arena, out, len, sizeof out, &again) != MSG_OK ||
                again->body_case != env->body_case) {
                fprintf(stderr, "fuzz_proto: round %lu: re-encoded message decodes differently\n",
                        r);
                return 1;
            }
        }
        if (r % 50000 == 0 || r == rounds)
            printf("fuzz_proto: %lu/%lu rounds: %lu decoded, %lu undecodable, %lu unknown body, "
                   "%lu oversize\n", r, rounds, counts[0], counts[2], counts[3], counts[1]);
    }
    printf("fuzz_proto: done, no crash\n");
    return 0;
}
