/*
 * store.h - the history store interface: where events live.
 *
 * An execution's history is an append-only list of events with dense ids
 * from 1 (protocol/event.h). Two stores implement this interface: the
 * in-memory one (history/mem.c, for `swf run --local` and tests) and the
 * PostgreSQL one (history/pg*.c). The decider and the replay tools only see
 * this interface.
 *
 * Appends use optimistic concurrency: the caller states the id the first new
 * event will get (the last id it saw + 1). When another writer got there
 * first the whole append fails with SWF_E_CONFLICT (retriable) and nothing
 * is written; the caller reloads and decides again. No history ever forks.
 *
 * Ownership: the store borrows the events given to append (it copies what it
 * keeps); load appends new events (with their own ids) to `out`, which the
 * caller owns. Thread-safety: a store handle is used by one thread at a time.
 */
#ifndef SWF_HISTORY_STORE_H
#define SWF_HISTORY_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "protocol/error.h"
#include "protocol/event.h"

typedef struct swf_history_store swf_history_store_t;

typedef struct swf_history_store_ops {
    /* Appends `count` events to the history of `execution_id`. The events'
     * own ids are ignored: they get expected_next_id, expected_next_id + 1,
     * ... The first event of a history (expected_next_id 1) must be
     * WorkflowExecutionStarted and creates the execution. */
    swf_error_t *(*append)(swf_history_store_t *store, const char *execution_id,
                           int64_t expected_next_id, const swf_event_t *events, size_t count);
    /* Appends to `out` the events of `execution_id` with id > after_id, in
     * order, at most `max` of them (0: all). SWF_E_NOTFOUND when the
     * execution does not exist. */
    swf_error_t *(*load)(swf_history_store_t *store, const char *execution_id, int64_t after_id,
                         size_t max, swf_event_list_t *out);
    void (*free)(swf_history_store_t *store);
} swf_history_store_ops_t;

struct swf_history_store {
    const swf_history_store_ops_t *ops;
};

static inline swf_error_t *swf_history_append(swf_history_store_t *s, const char *execution_id,
                                              int64_t expected_next_id, const swf_event_t *events,
                                              size_t count)
{
    return s->ops->append(s, execution_id, expected_next_id, events, count);
}

static inline swf_error_t *swf_history_load(swf_history_store_t *s, const char *execution_id,
                                            int64_t after_id, size_t max, swf_event_list_t *out)
{
    return s->ops->load(s, execution_id, after_id, max, out);
}

/* Frees a store; NULL does nothing. */
static inline void swf_history_store_free(swf_history_store_t *s)
{
    if (s != NULL)
        s->ops->free(s);
}

/* The in-memory store. */
swf_history_store_t *swf_history_mem_new(void);

#endif
