/*
 * chain.h - which trigger computes the hash chain in a benchmark's
 * database (history/CHAIN.md): SWF_BENCH_CHAIN=c points it at the C
 * trigger of history/pgext (the server must have the extension), =plpgsql
 * at migration 7's; unset leaves it as migrated (plpgsql). Switched once,
 * as the owner, before the measurement; the figures of bench/README.md
 * "The hash chain's trigger in C" compare the two.
 */
#ifndef SWF_BENCH_CHAIN_H
#define SWF_BENCH_CHAIN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history/pg.h"

/* Switches the chain of the database at owner_conninfo as SWF_BENCH_CHAIN
 * says, and prints which it is on stderr; exits on a failure. */
static inline void bench_chain_set(const char *prog, const char *owner_conninfo)
{
    const char *want = getenv("SWF_BENCH_CHAIN");
    if (want == NULL || want[0] == '\0')
        return;
    swf_history_chain_impl_t impl = strcmp(want, "c") == 0         ? SWF_HISTORY_CHAIN_C
                                    : strcmp(want, "plpgsql") == 0 ? SWF_HISTORY_CHAIN_PLPGSQL
                                                                   : SWF_HISTORY_CHAIN_AUTO;
    swf_history_store_t *s = NULL;
    swf_history_chain_use_t use;
    swf_error_t *err = swf_history_pg_new(owner_conninfo, &s);
    if (err == NULL)
        err = swf_history_pg_chain_use(s, impl, &use);
    swf_history_store_free(s);
    if (err != NULL) {
        fprintf(stderr, "%s: SWF_BENCH_CHAIN=%s: %s\n", prog, want, swf_error_message(err));
        exit(1);
    }
    fprintf(stderr, "%s: %s\n", prog, use.says);
}

#endif
