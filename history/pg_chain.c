/*
 * pg_chain.c - reading and verifying the events' hash chain.
 *
 * The chain is computed in the database, not here: a BEFORE INSERT trigger
 * (migration 7) hashes every event as it is inserted, so it holds for every
 * writer (the deciders' appends, swf-history, start, import, and anyone who
 * inserts by hand), and the runtime role, which cannot alter the trigger,
 * cannot store a hash the chain does not give. The canonical form hashes
 * the attributes exactly as stored, which is jsonb's text output; only the
 * database produces that text, so verifying is a query too. history/CHAIN.md
 * gives the form and what the chain proves (and what it cannot).
 *
 * The check recomputes each event's hash from its content and the stored
 * hash of the event before it (lag over the execution's events, one pass):
 * the first event where that differs, or where the ids jump, is where the
 * history was altered. It reports the first only: after an alteration every
 * later event may disagree, and naming them adds nothing.
 */
#include "history/pg_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The head, then the first break (NULL columns when none), then the
 * executions row's last_event_id (a lower bound; NULL without a row). */
static const char chain_check_sql[] =
    "WITH v AS ("
    "  SELECT event_id, event_type, hash, lag(event_id) OVER w AS prev_id,"
    "    swf_event_hash(coalesce(lag(hash) OVER w, " SWF_HISTORY__CHAIN_START "), execution_id,"
    "      event_id, event_type, event_time, attributes) AS computed"
    "  FROM events WHERE execution_id = $1 WINDOW w AS (ORDER BY event_id))"
    " SELECT h.event_id, encode(h.hash, 'hex'), b.event_id, b.event_type, b.prev_id,"
    "   encode(b.hash, 'hex'), encode(b.computed, 'hex'),"
    "   (SELECT last_event_id FROM executions WHERE execution_id = $1)"
    " FROM (SELECT event_id, hash FROM events WHERE execution_id = $1"
    "   ORDER BY event_id DESC LIMIT 1) h"
    " LEFT JOIN LATERAL (SELECT * FROM v"
    "   WHERE v.event_id <> coalesce(v.prev_id, 0) + 1 OR v.hash IS DISTINCT FROM v.computed"
    "   ORDER BY v.event_id LIMIT 1) b ON true";

/* A hash shortened for a message: its first 16 digits. */
#define SHORT "%.16s..."

swf_error_t *swf_history_pg_chain_check(swf_history_store_t *store, const char *execution_id,
                                        swf_history_chain_t *out)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    memset(out, 0, sizeof(*out));
    swf_error_t *err = swf_history__pg_ready(pg);
    PGresult *res = NULL;
    const char *params[1] = {execution_id};
    if (err == NULL)
        err = swf_history__pg_query(pg->conn, chain_check_sql, 1, params, &res);
    if (err != NULL)
        return err;
    if (PQntuples(res) == 0) {
        swf_history__pg_clear(res);
        return swf_error_new(SWF_E_NOTFOUND, NULL, "no events of execution %s", execution_id);
    }
    out->head_id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
    snprintf(out->head_hash, sizeof(out->head_hash), "%s", PQgetvalue(res, 0, 1));
    int64_t recorded = PQgetisnull(res, 0, 7) ? 0 : strtoll(PQgetvalue(res, 0, 7), NULL, 10);
    if (!PQgetisnull(res, 0, 2)) {
        int64_t id = strtoll(PQgetvalue(res, 0, 2), NULL, 10);
        const char *type = PQgetvalue(res, 0, 3);
        bool first = PQgetisnull(res, 0, 4);
        int64_t prev = first ? 0 : strtoll(PQgetvalue(res, 0, 4), NULL, 10);
        out->broken_id = prev + 1;
        if (id != prev + 1 && first)
            snprintf(out->broken, sizeof(out->broken),
                     "missing: the history starts at event %" PRId64 " (%s)", id, type);
        else if (id != prev + 1)
            snprintf(out->broken, sizeof(out->broken),
                     "missing: the ids jump from %" PRId64 " to %" PRId64 " (%s)", prev, id, type);
        else
            snprintf(out->broken, sizeof(out->broken),
                     "%s does not match its hash: its type, time or attributes, or the hash of "
                     "the event before it, changed after it was written (stored " SHORT
                     ", computed " SHORT ")",
                     type, PQgetvalue(res, 0, 5), PQgetvalue(res, 0, 6));
    } else if (recorded > out->head_id) {
        out->broken_id = out->head_id + 1;
        snprintf(out->broken, sizeof(out->broken),
                 "missing: the history ends at event %" PRId64
                 ", and its executions row records event %" PRId64,
                 out->head_id, recorded);
    }
    swf_history__pg_clear(res);
    return NULL;
}

/* The hashes of events 1 .. count, on a connection that is ready (or in a
 * transaction). */
static swf_error_t *hashes_load(PGconn *conn, const char *execution_id, size_t count,
                                swf_event_hash_t *hashes)
{
    char n[32];
    snprintf(n, sizeof(n), "%zu", count);
    const char *params[2] = {execution_id, n};
    PGresult *res = NULL;
    swf_error_t *err =
        swf_history__pg_query(conn,
                              "SELECT encode(hash, 'hex') FROM events"
                              " WHERE execution_id = $1 AND event_id <= $2 ORDER BY event_id",
                              2, params, &res);
    if (err != NULL)
        return err;
    if ((size_t)PQntuples(res) != count)
        err = swf_error_new(SWF_E_NOTFOUND, NULL,
                            "execution %s: %d hashes of events 1 to %zu, where %zu were expected",
                            execution_id, PQntuples(res), count, count);
    for (int r = 0; err == NULL && r < PQntuples(res); r++)
        snprintf(hashes[r], sizeof(hashes[r]), "%s", PQgetvalue(res, r, 0));
    swf_history__pg_clear(res);
    return err;
}

swf_error_t *swf_history_pg_chain_load(swf_history_store_t *store, const char *execution_id,
                                       size_t count, swf_event_hash_t *hashes)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    swf_error_t *err = swf_history__pg_ready(pg);
    return err != NULL ? err : hashes_load(pg->conn, execution_id, count, hashes);
}

swf_error_t *swf_history_pg_chain_hash(swf_history_store_t *store, const char *execution_id,
                                       int64_t event_id, swf_event_hash_t hash)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    char n[32];
    snprintf(n, sizeof(n), "%" PRId64, event_id);
    const char *params[2] = {execution_id, n};
    PGresult *res = NULL;
    swf_error_t *err = swf_history__pg_ready(pg);
    if (err == NULL)
        err = swf_history__pg_query(pg->conn,
                                    "SELECT encode(hash, 'hex') FROM events"
                                    " WHERE execution_id = $1 AND event_id = $2",
                                    2, params, &res);
    if (err != NULL)
        return err;
    if (PQntuples(res) == 1)
        snprintf(hash, SWF_EVENT_HASH_HEX + 1, "%s", PQgetvalue(res, 0, 0));
    else
        err = swf_error_new(SWF_E_NOTFOUND, NULL, "execution %s has no event %" PRId64,
                            execution_id, event_id);
    swf_history__pg_clear(res);
    return err;
}

swf_error_t *swf_history__chain_compare(swf_history__pg_t *pg, const char *execution_id,
                                        const swf_event_list_t *events,
                                        const swf_event_hash_t *hashes)
{
    swf_event_hash_t *stored = calloc(events->count + 1, sizeof(*stored));
    if (stored == NULL)
        abort();
    swf_error_t *err = hashes_load(pg->conn, execution_id, events->count, stored);
    for (size_t i = 0; err == NULL && i < events->count; i++) {
        if (strcmp(stored[i], hashes[i]) == 0)
            continue;
        err = swf_error_new(
            SWF_E_INPUT, NULL,
            "event %zu (%s): its eventHash " SHORT " is not the hash of the event as written "
            "(" SHORT "), so the event or its hash was changed after export",
            i + 1, swf_event_type_name(events->items[i].type), hashes[i], stored[i]);
    }
    free(stored);
    return err;
}
