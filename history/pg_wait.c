/*
 * pg_wait.c - which of a set of executions have closed, in one query
 * (history/catalog.h, swf_history_pg_executions_closed).
 *
 * swf-api's StartSyncExecution (api/sync.c) waits for executions to close:
 * one thread asks, a few times a second, which of the executions it waits
 * for are closed. One query for all of them keeps that cost flat in the
 * number of waiters (at most a thousand, api/README.md) rather than a
 * query per waiter per tick.
 */
#include "history/catalog.h"

#include <stdlib.h>
#include <string.h>

#include "history/pg_internal.h"
#include "protocol/limits.h"

/* Appends s as an element of a PostgreSQL array literal: double-quoted,
 * with " and \ escaped. */
static void array_add(char *buf, size_t *len, const char *s)
{
    if (*len > 1)
        buf[(*len)++] = ',';
    buf[(*len)++] = '"';
    for (; *s != '\0'; s++) {
        if (*s == '"' || *s == '\\')
            buf[(*len)++] = '\\';
        buf[(*len)++] = *s;
    }
    buf[(*len)++] = '"';
}

swf_error_t *swf_history_pg_executions_closed(swf_history_store_t *store,
                                              const char *const *execution_ids, size_t n,
                                              bool *closed)
{
    if (n == 0)
        return NULL;
    memset(closed, 0, n * sizeof(*closed));
    size_t cap = 3;
    for (size_t i = 0; i < n; i++)
        cap += 2 * strlen(execution_ids[i]) + 3;
    char *arr = malloc(cap);
    if (arr == NULL)
        abort();
    size_t len = 0;
    arr[len++] = '{';
    for (size_t i = 0; i < n; i++)
        array_add(arr, &len, execution_ids[i]);
    arr[len++] = '}';
    arr[len] = '\0';
    swf_history__pg_t *pg = swf_history__pg(store);
    swf_error_t *err = swf_history__pg_ready(pg);
    PGresult *res = NULL;
    const char *params[1] = {arr};
    if (err == NULL)
        err = swf_history__pg_query(pg->conn,
                                    "SELECT execution_id FROM executions"
                                    " WHERE execution_id = ANY($1::text[]) AND status <> 'open'",
                                    1, params, &res);
    free(arr);
    if (err != NULL)
        return err;
    for (int r = 0; r < PQntuples(res); r++) {
        const char *id = PQgetvalue(res, r, 0);
        for (size_t i = 0; i < n; i++)
            if (strcmp(execution_ids[i], id) == 0)
                closed[i] = true;
    }
    swf_history__pg_clear(res);
    return NULL;
}
