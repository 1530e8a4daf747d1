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

/*
 * Which function computes the chain (swf_history_pg_chain_use). The
 * extension's C function and migration 7's plpgsql one store the same
 * hashes (history/pgext/swf_chain.c), so switching changes no stored hash
 * and `swf admin check` (SQL) verifies either's. What is read first, one
 * row: the version of the server's extension files (NULL: none), the
 * extension's schema in this database (NULL: not created), the trigger
 * function's language, whether this role may create a trusted extension,
 * the role and the current schema.
 */
static const char chain_state_sql[] =
    "SELECT (SELECT default_version FROM pg_catalog.pg_available_extensions"
    "   WHERE name = 'swf_chain'),"
    " (SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension e"
    "   JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'swf_chain'),"
    " (SELECT l.lanname FROM pg_catalog.pg_trigger t"
    "   JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid"
    "   JOIN pg_catalog.pg_language l ON l.oid = p.prolang"
    "   WHERE t.tgrelid = pg_catalog.to_regclass('events') AND t.tgname = 'events_chain'),"
    " (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = current_user)"
    "   OR pg_catalog.has_database_privilege(pg_catalog.current_database(), 'CREATE'),"
    " current_user::text, pg_catalog.quote_ident(pg_catalog.current_schema())";

/* Points events_chain at schema.function() (both quoted already). */
static swf_error_t *chain_trigger_point(PGconn *conn, const char *schema, const char *function)
{
    char sql[512];
    snprintf(sql, sizeof(sql),
             "CREATE OR REPLACE TRIGGER events_chain BEFORE INSERT ON events"
             " FOR EACH ROW EXECUTE FUNCTION %s.%s()",
             schema, function);
    return swf_history__pg_query(conn, sql, -1, NULL, NULL);
}

swf_error_t *swf_history_pg_chain_use(swf_history_store_t *store, swf_history_chain_impl_t want,
                                      swf_history_chain_use_t *out)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    memset(out, 0, sizeof(*out));
    PGresult *res = NULL;
    swf_error_t *err = swf_history__pg_ready(pg);
    if (err == NULL)
        err = swf_history__pg_begin(pg->conn);
    if (err != NULL)
        return err;
    err = swf_history__pg_query(
        pg->conn, "SELECT pg_advisory_xact_lock(" SWF_HISTORY__MIGRATION_LOCK ")", 0, NULL, NULL);
    if (err == NULL)
        err = swf_history__pg_query(pg->conn, chain_state_sql, 0, NULL, &res);
    if (err == NULL && PQgetisnull(res, 0, 2))
        err = swf_error_new(SWF_E_DB, NULL,
                            "the events table has no events_chain trigger (a schema before "
                            "migration 7): migrate first");
    if (err != NULL)
        goto out;
    bool available = !PQgetisnull(res, 0, 0), created = !PQgetisnull(res, 0, 1);
    bool c_now = strcmp(PQgetvalue(res, 0, 2), "c") == 0;
    bool may_create = strcmp(PQgetvalue(res, 0, 3), "t") == 0;
    const char *ext_schema = PQgetvalue(res, 0, 1), *schema = PQgetvalue(res, 0, 5);
    char why_not[320] = ""; /* why C is not taken, when it is not */
    if (want == SWF_HISTORY_CHAIN_PLPGSQL)
        snprintf(why_not, sizeof(why_not), "as asked (--chain plpgsql)");
    else if (!available)
        snprintf(why_not, sizeof(why_not),
                 "the extension swf_chain is not installed on this server (history/pgext: "
                 "cmake --install BUILD --component swf_chain, as root)");
    else if (!created && !may_create)
        snprintf(why_not, sizeof(why_not),
                 "the extension swf_chain is on this server, but role %s may not create it "
                 "(that needs CREATE on the database; or a superuser runs CREATE EXTENSION "
                 "swf_chain once)",
                 PQgetvalue(res, 0, 4));
    if (why_not[0] != '\0' && want == SWF_HISTORY_CHAIN_C) {
        err = swf_error_new(SWF_E_DB, NULL, "--chain c: %s", why_not);
        goto out;
    }
    if (why_not[0] == '\0') {
        if (!created) {
            char sql[256];
            snprintf(sql, sizeof(sql), "CREATE EXTENSION swf_chain SCHEMA %s", schema);
            err = swf_history__pg_query(pg->conn, sql, -1, NULL, NULL);
            ext_schema = schema;
        }
        if (err == NULL && !c_now)
            err = chain_trigger_point(pg->conn, ext_schema, "swf_chain_events");
        out->impl = SWF_HISTORY_CHAIN_C;
        out->changed = !c_now;
        snprintf(out->says, sizeof(out->says),
                 "hash chain: computed by the C trigger of the extension swf_chain %s",
                 PQgetvalue(res, 0, 0));
    } else {
        if (c_now) /* back to migration 7's function, in the tables' schema */
            err = chain_trigger_point(pg->conn, schema, "swf_events_chain");
        /* The extension goes when nothing else uses it and this role owns
         * it; otherwise it stays, unused here. */
        if (err == NULL && created)
            err = swf_history__pg_query(
                pg->conn,
                "DO $d$ BEGIN DROP EXTENSION swf_chain;"
                " EXCEPTION WHEN dependent_objects_still_exist OR insufficient_privilege"
                " THEN NULL; END $d$",
                -1, NULL, NULL);
        out->impl = SWF_HISTORY_CHAIN_PLPGSQL;
        out->changed = c_now;
        snprintf(out->says, sizeof(out->says),
                 "hash chain: computed by the plpgsql trigger of migration 7: %s", why_not);
    }
    if (err == NULL)
        err = swf_history__pg_commit(pg->conn);
out:
    if (err != NULL) {
        swf_history__pg_rollback(pg->conn);
        swf_error_prefix(err, "pointing the hash chain's trigger");
    }
    swf_history__pg_clear(res);
    return err;
}
