/*
 * bench.h - what the benchmarks that run on `swf dev` share: failing loud,
 * and the start of a run (the dev system, its hash chain's trigger as
 * SWF_BENCH_CHAIN says (bench/chain.h), a store on its database, the
 * benchmark's state machine registered).
 */
#ifndef SWF_BENCH_H
#define SWF_BENCH_H

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench/chain.h"
#include "cli/dev.h"
#include "history/pg.h"

/* Exits with the error's message, prefixed with the program's name. */
static inline void bench_die(const char *prog, swf_error_t *err)
{
    if (err != NULL) {
        fprintf(stderr, "%s: %s\n", prog, swf_error_message(err));
        exit(1);
    }
}

typedef struct bench_rig {
    swf_dev_t *dev;
    swf_history_store_t *store;
    int version; /* of the registered machine */
} bench_rig_t;

/* Starts the dev system of opt and registers definition as `name`; exits
 * on failure. */
static inline void bench_rig_up(const char *prog, const swf_dev_options_t *opt, const char *name,
                                const char *definition, bench_rig_t *r)
{
    bench_die(prog, swf_dev_start(opt, &r->dev));
    bench_chain_set(prog, swf_dev_owner_conninfo(r->dev));
    bench_die(prog, swf_history_pg_new(swf_dev_conninfo(r->dev), &r->store));
    json_object *def = json_tokener_parse(definition);
    if (def == NULL) {
        fprintf(stderr, "%s: the benchmark's definition is not JSON\n", prog);
        exit(1);
    }
    bench_die(prog, swf_history_pg_state_machine_register(r->store, name, def, &r->version));
    json_object_put(def);
}

static inline void bench_rig_down(bench_rig_t *r)
{
    swf_history_store_free(r->store);
    swf_dev_stop(r->dev);
}

#endif
