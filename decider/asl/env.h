/*
 * env.h - what an ASL expression may read besides its input.
 *
 * Paths, payload templates, intrinsic functions and Choice rules are pure
 * functions of (expression, input, env). The env carries the context object
 * ($$), the workflow variables ($name, from Assign) and the random source for
 * States.UUID and States.MathRandom. The random source is seeded by the
 * interpreter from the execution id and the decision's event id, so replay
 * draws the same numbers. Nothing here reads the clock or the environment.
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

typedef struct swf_asl_env {
    json_object *context;   /* the context object $$; NULL means {} */
    json_object *variables; /* an object of workflow variables; NULL means none */
    swf_asl_rng_t *rng;     /* may be NULL: then a fixed seed is used */
} swf_asl_env_t;

#endif
