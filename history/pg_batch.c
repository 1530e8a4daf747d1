/*
 * pg_batch.c - what a decider's batch needs from the store beyond
 * store.h: the new events of many executions in one round trip, and a
 * connection whose commits do not wait for the disk.
 *
 * A decider's batch touches hundreds of executions; those its cache lacks
 * (decider/cache.h) it must read whole, those it holds not at all. One
 * query per execution made those reads cost a round trip each, more than
 * the group commit itself. Here they are
 * one statement: the (execution, after id) pairs travel as one jsonb
 * array, and a LATERAL index range scan per pair returns at most
 * BATCH_LOAD_PAGE events of each; an execution that filled its page (a
 * cache miss on a long history) has the rest read page by page through
 * the store's own load.
 *
 * Not done: reading through a server-side cursor; histories are bounded
 * (SWF_LIMIT_HISTORY_EVENTS) and a batch is bounded, so the result is too.
 */
#include "history/pg_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/json.h"
#include "protocol/limits.h"

/* Events of one execution per statement; the rest is paged. */
#define BATCH_LOAD_PAGE 256

const char swf_history__load_batch_sql[] =
    "SELECT k.ord, e.event_id, e.event_type, (extract(epoch FROM e.event_time) * 1000)::bigint,"
    "  e.attributes"
    " FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS k(v, ord)"
    " CROSS JOIN LATERAL (SELECT v.event_id, v.event_type, v.event_time, v.attributes"
    "   FROM events v WHERE v.execution_id = k.v->>0 AND v.event_id > (k.v->>1)::bigint"
    "   ORDER BY v.event_id LIMIT $2) e"
    " ORDER BY k.ord, e.event_id";

/* Appends one row (ord, id, type, ms, attributes) to its execution's list. */
static swf_error_t *row_push(PGresult *res, int r, size_t n, swf_event_list_t *outs, size_t *got)
{
    long long ord = atoll(PQgetvalue(res, r, 0));
    if (ord < 1 || (size_t)ord > n)
        return swf_error_new(SWF_E_INTERNAL, NULL, "batch load: row for key %lld of %zu", ord, n);
    swf_error_t *err = swf_history__pg_row_push(res, r, 1, &outs[ord - 1]);
    if (err != NULL)
        return err;
    got[ord - 1]++;
    return NULL;
}

swf_error_t *swf_history_pg_load_batch(swf_history_store_t *store, const char *const *execution_ids,
                                       const int64_t *after_ids, size_t n, swf_event_list_t *outs,
                                       swf_error_t **errors)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    swf_error_t *err = swf_history__pg_items_start(pg, errors, n);
    if (err != NULL || n == 0)
        return err;
    json_object *keys = json_object_new_array_ext((int)n);
    for (size_t i = 0; i < n; i++) {
        json_object *k = json_object_new_array_ext(2);
        json_object_array_add(k, json_object_new_string(execution_ids[i]));
        json_object_array_add(k, json_object_new_int64(after_ids[i] < 0 ? 0 : after_ids[i]));
        json_object_array_add(keys, k);
    }
    char page[16];
    snprintf(page, sizeof(page), "%d", BATCH_LOAD_PAGE);
    const char *params[2] = {swf_json_str(keys), page};
    PGresult *res = NULL;
    err = swf_history__pg_prepared(pg, "swf_load_batch", 2, params, &res);
    json_object_put(keys);
    if (err != NULL)
        return err;
    size_t *got = calloc(n, sizeof(*got));
    size_t *before = calloc(n, sizeof(*before));
    if (got == NULL || before == NULL)
        abort();
    for (size_t i = 0; i < n; i++)
        before[i] = outs[i].count;
    int rows = PQntuples(res);
    for (int r = 0; r < rows && err == NULL; r++)
        err = row_push(res, r, n, outs, got);
    swf_history__pg_clear(res);
    for (size_t i = 0; i < n && err == NULL; i++) {
        if (got[i] == BATCH_LOAD_PAGE) {
            /* A long history read from the start: page through the rest. */
            int64_t last = outs[i].items[before[i] + got[i] - 1].id;
            errors[i] = swf_history_load(store, execution_ids[i], last, 0, &outs[i]);
        } else if (got[i] == 0 && after_ids[i] <= 0) {
            /* The events are the truth: no first event, no execution. */
            errors[i] = swf_error_new(SWF_E_NOTFOUND, NULL, "no execution %s", execution_ids[i]);
        }
    }
    if (err != NULL) {
        for (size_t i = 0; i < n; i++) {
            swf_error_free(errors[i]);
            errors[i] = NULL;
        }
    }
    free(got);
    free(before);
    return err;
}

swf_error_t *swf_history_pg_commit_async(swf_history_store_t *store)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    swf_error_t *err = swf_history__pg_ready(pg);
    if (err == NULL)
        err = swf_history__pg_query(pg->conn, "SET synchronous_commit = off", -1, NULL, NULL);
    pg->commit_async = pg->commit_async || err == NULL;
    return err;
}
