/*
 * env.h - what an ASL expression may read besides its input.
 *
 * Paths, payload templates, intrinsic functions and Choice rules are pure
 * functions of (expression, input, env). The env carries the context object
 * ($$), the workflow variables ($name, from Assign) and the random source for
 * States.UUID and States.MathRandom. The random source is seeded by the
 * interpreter from the execution id and the decision's event id, so replay
 * draws the same numbers. Nothing here reads the clock or the environment:
 * now_ms is the time of the decision being made, taken from its event, so a
 * replay sees the same time too.
 *
 * Ownership: the env borrows everything it points to.
 */
#ifndef SWF_ASL_ENV_H
#define SWF_ASL_ENV_H

#include <stdint.h>
#include <json-c/json.h>

/* splitmix64: small, fast, and the same on every platform. */
typedef struct swf_asl_rng {
    uint64_t state;
} swf_asl_rng_t;

static inline uint64_t swf_asl_rng_next(swf_asl_rng_t *rng)
{
    uint64_t z = (rng->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* A double in [0, 1). */
static inline double swf_asl_rng_unit(swf_asl_rng_t *rng)
{
    return (double)(swf_asl_rng_next(rng) >> 11) * (1.0 / 9007199254740992.0);
}

/* A version 4 UUID drawn from rng, as text (36 characters and a NUL):
 * what States.UUID and JSONata's $uuid give. */
static inline void swf_asl_rng_uuid(swf_asl_rng_t *rng, char text[37])
{
    static const char hex[] = "0123456789abcdef";
    unsigned char b[16];
    for (int half = 0; half < 2; half++) {
        uint64_t r = swf_asl_rng_next(rng);
        for (int i = 0; i < 8; i++)
            b[half * 8 + i] = (unsigned char)(r >> (8 * i));
    }
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* variant 10xx (RFC 4122) */
    int k = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            text[k++] = '-';
        text[k++] = hex[b[i] >> 4];
        text[k++] = hex[b[i] & 0x0f];
    }
    text[k] = '\0';
}

typedef struct swf_asl_env {
    json_object *context;   /* the context object $$; NULL means {} */
    json_object *variables; /* an object of workflow variables; NULL means none */
    swf_asl_rng_t *rng;     /* may be NULL: then a fixed seed is used */
    int64_t now_ms;         /* the decision's time (JSONata's $now, $millis); 0: none */
} swf_asl_env_t;

#endif
