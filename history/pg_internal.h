/*
 * pg_internal.h - what the history/pg*.c and migrations.c files share.
 *
 * Not included from outside history/. Every query goes through
 * swf_history__pg_query, which is the one place where a PGresult's failure
 * is translated into an swf_error_t (SQLSTATE 40001/40P01 -> retriable,
 * 23505 on the events key -> lost the append race) and the one place a
 * failed result is cleared.
 */
#ifndef SWF_HISTORY_PG_INTERNAL_H
#define SWF_HISTORY_PG_INTERNAL_H

#include <libpq-fe.h>

#include "history/pg.h"

typedef struct swf_history__pg {
    swf_history_store_t base;
    PGconn *conn;
    unsigned prepared; /* bit i: statements[i] of pg.c is prepared on this connection */
    bool commit_async; /* swf_history_pg_commit_async: set again after a reconnect */
    bool sent;         /* a statement was sent and its result not yet collected */
} swf_history__pg_t;

/* The PostgreSQL store behind a generic handle (asserts it is one). */
swf_history__pg_t *swf_history__pg(swf_history_store_t *store);

/* Resets a connection the server closed; call it at the start of every
 * operation, never inside a transaction (pg.c says why). A retriable
 * SWF_E_DB error while the server cannot be reached. */
swf_error_t *swf_history__pg_ready(swf_history__pg_t *pg);

/*
 * Runs sql with n text parameters (NULL values are SQL NULL). n < 0 runs
 * sql through the simple protocol (several statements allowed, no
 * parameters). On success *out (when not NULL) gets the result, which the
 * caller clears with swf_history__pg_clear; with out NULL it is cleared
 * here. On failure nothing is left to clear.
 */
swf_error_t *swf_history__pg_query(PGconn *conn, const char *sql, int n, const char *const *values,
                                   PGresult **out);
/* Same, for the statement of pg.c's table called `name`, prepared on the
 * connection first when it is not yet (once per connection). */
swf_error_t *swf_history__pg_prepared(swf_history__pg_t *pg, const char *name, int n,
                                      const char *const *values, PGresult **out);
/* Sends a prepared statement without waiting for it: its result is
 * swf_history__pg_collect's. The store takes no other call in between
 * (swf_history__pg_ready asserts it). */
swf_error_t *swf_history__pg_send_prepared(swf_history__pg_t *pg, const char *name, int n,
                                           const char *const *values);
/* The result of the statement sent last, waiting for it (NULL at once when
 * none is outstanding); only whether it failed is kept. */
swf_error_t *swf_history__pg_collect(swf_history__pg_t *pg);
/* Makes the connection ready (as swf_history__pg_ready). The statements of
 * pg.c's table (among them those of pg_batch.c and service.c) are prepared
 * at their first use on a connection, each once, so that the calls per
 * batch of a decider are neither parsed nor planned again, and a short-lived
 * command (`swf start`) prepares only the one or two it runs: preparing all
 * ten on a new connection cost a new backend ~14 ms of PostgreSQL's time,
 * ~100 ms with 8 commands at once on two cores. */
swf_error_t *swf_history__pg_prepare(swf_history__pg_t *pg);
/* The start of a call on n items (the batch load, the batch append):
 * clears errors[0..n), then, when there is anything to do, prepares the
 * connection. The caller returns the result when it is an error or n is 0. */
swf_error_t *swf_history__pg_items_start(swf_history__pg_t *pg, swf_error_t **errors, size_t n);
extern const char swf_history__load_batch_sql[];    /* "swf_load_batch" */
extern const char swf_history__outbox_delete_sql[]; /* "swf_outbox_delete" */

/* The rows of the activity_timeouts projection, computed from the events
 * (migration 4 and the rebuild): ActivityTaskScheduled events with a
 * timeout, of open executions, that no ActivityTask{Completed, Failed,
 * TimedOut, Canceled} closed, with their last heartbeat: the last event
 * BEAT (an SQL condition on h.event_type) matches. Migration 4 counted
 * recorded heartbeats only (its text must not change); the rebuild counts
 * a reported start too, as appends do (pg.c, BEATS). */
#define SWF_HISTORY__ACTIVITY_TIMEOUTS_FROM_EVENTS                                                 \
    SWF_HISTORY__ACTIVITY_TIMEOUTS_BEATING("h.event_type = 'ActivityTaskHeartbeatRecorded'")
#define SWF_HISTORY__ACTIVITY_TIMEOUTS_FROM_EVENTS_AND_STARTS                                      \
    SWF_HISTORY__ACTIVITY_TIMEOUTS_BEATING(                                                        \
        "h.event_type IN ('ActivityTaskHeartbeatRecorded', 'ActivityTaskStarted')")
#define SWF_HISTORY__ACTIVITY_TIMEOUTS_BEATING(BEAT)                                               \
    "SELECT s.execution_id, s.event_id, s.event_time,"                                             \
    "  (s.attributes->>'startToCloseTimeout')::float8, "                                           \
    "(s.attributes->>'heartbeatTimeout')::float8,"                                                 \
    "  (SELECT max(h.event_time) FROM events h WHERE h.execution_id = s.execution_id"              \
    "    AND h.event_id > s.event_id AND " BEAT                                                    \
    "    AND (h.attributes->>'scheduledEventId')::bigint = s.event_id)"                            \
    " FROM executions x JOIN events s ON s.execution_id = x.execution_id"                          \
    " WHERE x.status = 'open' AND s.event_type = 'ActivityTaskScheduled'"                          \
    " AND (s.attributes ? 'startToCloseTimeout' OR s.attributes ? 'heartbeatTimeout')"             \
    " AND NOT EXISTS (SELECT 1 FROM events c WHERE c.execution_id = s.execution_id"                \
    "   AND c.event_id > s.event_id AND c.event_type IN (" SWF_HISTORY__ACTIVITY_CLOSING ")"       \
    "   AND (c.attributes->>'scheduledEventId')::bigint = s.event_id)"
/* The rows of the sw_instances projection (migration 10 and the rebuild):
 * each open execution whose definition is a Serverless Workflow document
 * (a top-level "states"), with the routing state of its last
 * DecisionTaskCompleted that has one ("swRoute", decider/decision.c);
 * waits is NULL (unknown) before its first decision and when a cloudevent
 * signal came after that decision. */
#define SWF_HISTORY__SW_INSTANCES_FROM_EVENTS                                                      \
    "SELECT s.execution_id, x.state_machine,"                                                      \
    "  nullif(d.attributes#>'{swRoute,correlation}', 'null'::jsonb),"                              \
    "  CASE WHEN d.event_id IS NULL OR EXISTS (SELECT 1 FROM events g"                             \
    "    WHERE g.execution_id = s.execution_id AND g.event_id > d.event_id"                        \
    "    AND g.event_type = 'WorkflowExecutionSignaled'"                                           \
    "    AND g.attributes->>'signalName' = 'cloudevent') THEN NULL"                                \
    "  ELSE ARRAY(SELECT jsonb_array_elements_text(d.attributes#>'{swRoute,waits}')) END"          \
    " FROM executions x JOIN events s ON s.execution_id = x.execution_id AND s.event_id = 1"       \
    " LEFT JOIN LATERAL (SELECT e.event_id, e.attributes FROM events e"                            \
    "   WHERE e.execution_id = s.execution_id AND e.event_type = 'DecisionTaskCompleted'"          \
    "   AND e.attributes ? 'swRoute' ORDER BY e.event_id DESC LIMIT 1) d ON true"                  \
    " WHERE x.status = 'open' AND s.attributes->'definition' ? 'states'"
#define SWF_HISTORY__ACTIVITY_CLOSING                                                              \
    "'ActivityTaskCompleted', 'ActivityTaskFailed', 'ActivityTaskTimedOut', "                      \
    "'ActivityTaskCanceled'"

/* An arbitrary constant naming the advisory lock of migrations and of the
 * chain's implementation ("swf" in ASCII). */
#define SWF_HISTORY__MIGRATION_LOCK "7558502"

/* The hash chain (history/CHAIN.md): what event 1 chains to (32 zero
 * bytes), as bytea input and as an SQL expression, and a field of an
 * event's canonical form, in SQL: a netstring, "LENGTH:BYTES," with the
 * length in bytes of the UTF-8 text. */
#define SWF_HISTORY__CHAIN_START_HEX                                                               \
    "\\x0000000000000000000000000000000000000000000000000000000000000000"
#define SWF_HISTORY__CHAIN_START "'" SWF_HISTORY__CHAIN_START_HEX "'::bytea"
#define SWF_HISTORY__NS(e)                                                                         \
    "pg_catalog.octet_length(pg_catalog.convert_to(" e ", 'UTF8'))::text || ':' || " e " || ','"

/* Inside the import's transaction (pg_chain.c): the hashes the database
 * gave events 1 .. events->count of execution_id must be hashes[0 ..
 * count); the first that is not refuses the import, naming its event. */
swf_error_t *swf_history__chain_compare(swf_history__pg_t *pg, const char *execution_id,
                                        const swf_event_list_t *events,
                                        const swf_event_hash_t *hashes);

/* SWF_LIMIT_TIMER_SECONDS (protocol/limits.h), written for SQL. */
#define SWF_HISTORY__TIMER_SECONDS_SQL "1e12"

/* Clears a result; NULL does nothing. */
void swf_history__pg_clear(PGresult *res);

/* Runs BEGIN / COMMIT / ROLLBACK. Rollback ignores errors (it is cleanup). */
swf_error_t *swf_history__pg_begin(PGconn *conn);
swf_error_t *swf_history__pg_commit(PGconn *conn);
void swf_history__pg_rollback(PGconn *conn);

/* Appends the event in row r of res, columns col .. col+3 (id, type, time
 * in ms, attributes), to out. Errors name the event. */
swf_error_t *swf_history__pg_row_push(PGresult *res, int r, int col, swf_event_list_t *out);

/* Duplicates a string or aborts. */
char *swf_history__strdup(const char *s);

#endif
