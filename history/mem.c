/*
 * mem.c - the in-memory history store.
 *
 * Used by `swf run --local` and by tests. Executions are few per store, so
 * they are found by a linear scan; the events of one execution are an
 * swf_event_list_t whose attributes are shared (by reference) with the
 * appender, which is safe because event attributes are immutable.
 */
#include "history/store.h"

#include <stdlib.h>
#include <string.h>

#include "protocol/alloc.h"
#include "protocol/json.h"
#include "protocol/limits.h"

typedef struct mem_execution {
    char *id;
    swf_event_list_t events;
} mem_execution_t;

typedef struct mem_store {
    swf_history_store_t base;
    mem_execution_t *items;
    size_t count;
    size_t cap;
} mem_store_t;

static mem_execution_t *find(mem_store_t *m, const char *id)
{
    for (size_t i = 0; i < m->count; i++) {
        if (strcmp(m->items[i].id, id) == 0)
            return &m->items[i];
    }
    return NULL;
}

static swf_error_t *mem_append(swf_history_store_t *store, const char *execution_id,
                               int64_t expected_next_id, const swf_event_t *events, size_t count)
{
    mem_store_t *m = (mem_store_t *)store;
    mem_execution_t *ex = find(m, execution_id);
    int64_t next = ex ? (int64_t)ex->events.count + 1 : 1;
    if (expected_next_id != next)
        return swf_error_new(SWF_E_CONFLICT, NULL,
                             "execution %s: append expected event id %lld, the next is %lld",
                             execution_id, (long long)expected_next_id, (long long)next);
    if (count == 0)
        return NULL;
    if (ex == NULL) {
        if (events[0].type != SWF_EVENT_WORKFLOW_EXECUTION_STARTED)
            return swf_error_new(SWF_E_INPUT, NULL,
                                 "a history must start with WorkflowExecutionStarted");
        SWF_ARRAY_RESERVE(m->items, m->count, m->cap, 8);
        ex = &m->items[m->count++];
        memset(ex, 0, sizeof(*ex));
        ex->id = swf_strdup(execution_id);
    }
    if (ex->events.count + count > SWF_LIMIT_HISTORY_EVENTS)
        return swf_error_new(SWF_E_LIMIT, NULL, "execution %s: more than %d events", execution_id,
                             SWF_LIMIT_HISTORY_EVENTS);
    for (size_t i = 0; i < count; i++)
        swf_event_list_push(&ex->events, events[i].type, events[i].time_ms,
                            swf_json_ref(events[i].attrs));
    return NULL;
}

static swf_error_t *mem_load(swf_history_store_t *store, const char *execution_id, int64_t after_id,
                             size_t max, swf_event_list_t *out)
{
    mem_store_t *m = (mem_store_t *)store;
    mem_execution_t *ex = find(m, execution_id);
    if (ex == NULL)
        return swf_error_new(SWF_E_NOTFOUND, NULL, "no execution %s", execution_id);
    size_t from = after_id < 0 ? 0 : (size_t)after_id;
    for (size_t i = from, n = 0; i < ex->events.count && (max == 0 || n < max); i++, n++)
        swf_event_list_push_copy(out, &ex->events.items[i]);
    return NULL;
}

static void mem_free(swf_history_store_t *store)
{
    mem_store_t *m = (mem_store_t *)store;
    for (size_t i = 0; i < m->count; i++) {
        free(m->items[i].id);
        swf_event_list_free(&m->items[i].events);
    }
    free(m->items);
    free(m);
}

static const swf_history_store_ops_t mem_ops = {mem_append, mem_load, mem_free};

swf_history_store_t *swf_history_mem_new(void)
{
    mem_store_t *m = calloc(1, sizeof(*m));
    if (m == NULL)
        abort();
    m->base.ops = &mem_ops;
    return &m->base;
}
