/*
 * pg.c - the PostgreSQL history store: connection, appends, reads.
 *
 * An append is one SQL statement, so one round trip and one commit, however
 * many executions it covers. The events travel as one jsonb array. The
 * events primary key decides every race: an append wins when, in the
 * statement's snapshot, its execution's history ends right before its
 * first event (one descent of that key); a writer that committed since
 * makes the INSERT fail on the key (23505 -> SWF_E_CONFLICT). So single and
 * batch appends on one execution may interleave or race freely: no history
 * forks or has a gap. Plain appends (see plain()) write only events rows;
 * the others also lock their executions rows in execution-id order and
 * rewrite them (status, close time, the lazy last_event_id: see
 * append_one_sql), create the executions that start here (ON CONFLICT DO
 * NOTHING, which also covers the open-workflow-id index), and write timers
 * and outbox rows. The statement returns the winners; every other append
 * wrote nothing, and a follow-up query (on the failure path only) says why.
 * When the key fires inside a batch, the statement failed as a whole and
 * runs again with a fresh snapshot, where only the real losers lose.
 *
 * Projections are derived set-wise: an execution's status is that of its
 * last closing event, a timer is pending when the last of its
 * TimerStarted/TimerFired/TimerCanceled events is TimerStarted. The rebuild
 * in pg_admin.c uses the same rules over the whole events table.
 *
 * Reads page through the events table 10,000 rows at a time, so a large
 * history never sits in one PGresult.
 */
#include "history/pg_internal.h"

#include <assert.h>
#include <json-c/printbuf.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/alloc.h"
#include "protocol/json.h"
#include "protocol/limits.h"

#define LOAD_PAGE 10000

/* How many times a batch statement runs when it loses a race as a whole. */
#define BATCH_ATTEMPTS 4

/* Years 0000 to 9999, the range of RFC 3339 timestamps. */
#define TIME_MS_MIN (-62167219200000LL)
#define TIME_MS_MAX (253402300799999LL)

static const swf_history_store_ops_t pg_ops;

swf_history__pg_t *swf_history__pg(swf_history_store_t *store)
{
    assert(store != NULL && store->ops == &pg_ops);
    return (swf_history__pg_t *)store;
}

char *swf_history__strdup(const char *s)
{
    return swf_strdup(s != NULL ? s : "");
}

void swf_history__pg_clear(PGresult *res)
{
    if (res != NULL)
        PQclear(res);
}

/* The one translation of libpq failures into swf errors. Takes res. */
/* Copies a multi-line message into out as one line: a line that starts
 * a sentence follows "; ", a continuation a space. */
static void one_line(char *out, size_t size, const char *in)
{
    size_t n = 0;
    for (const char *p = in; *p != '\0' && n + 3 < size; p++) {
        if (*p != '\n' && *p != '\r') {
            out[n++] = *p == '\t' ? ' ' : *p;
            continue;
        }
        while (p[1] == '\n' || p[1] == '\r' || p[1] == '\t' || p[1] == ' ')
            p++;
        if (p[1] == '\0')
            break;
        if (p[1] >= 'A' && p[1] <= 'Z')
            out[n++] = ';';
        out[n++] = ' ';
    }
    while (n > 0 && out[n - 1] == ' ')
        n--;
    out[n] = '\0';
}

static swf_error_t *pg_error(PGconn *conn, PGresult *res)
{
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    const char *constraint = res ? PQresultErrorField(res, PG_DIAG_CONSTRAINT_NAME) : NULL;
    const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    const char *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
    char msg[512];
    if (primary != NULL) {
        snprintf(msg, sizeof(msg), "%s", primary);
    } else {
        /* libpq's own failure (the connection): lines ending in newlines,
         * the later ones indented; one line in a log is easier to follow. */
        one_line(msg, sizeof(msg), PQerrorMessage(conn));
    }
    swf_error_t *err;
    if (state == NULL || PQstatus(conn) == CONNECTION_BAD || strncmp(state, "08", 2) == 0) {
        err = swf_error_new(SWF_E_DB, NULL, "database connection: %s", msg);
        swf_error_set_retriable(err, true);
    } else if (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0) {
        err = swf_error_new(SWF_E_DB, NULL, "%s", msg);
        swf_error_set_retriable(err, true);
    } else if (strcmp(state, "23505") == 0 && constraint != NULL &&
               strcmp(constraint, "events_pkey") == 0) {
        err = swf_error_new(SWF_E_CONFLICT, NULL, "lost the append race");
        swf_error_set_retriable(err, true);
    } else if (strcmp(state, "23505") == 0 && constraint != NULL &&
               strcmp(constraint, "executions_open_workflow_id") == 0) {
        err = swf_error_new(SWF_E_CONFLICT, NULL, "an execution with this workflow id is open");
    } else if (strncmp(state, "22", 2) == 0) {
        /* Data exceptions: bad input that got past our own checks. */
        err = swf_error_new(SWF_E_INPUT, NULL, "%s", msg);
    } else {
        err = swf_error_new(SWF_E_DB, NULL, "%s (SQLSTATE %s)", msg, state);
    }
    if (detail != NULL)
        swf_error_set_cause(err, detail);
    swf_history__pg_clear(res);
    return err;
}

static swf_error_t *check(PGconn *conn, PGresult *res, PGresult **out)
{
    ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
        return pg_error(conn, res);
    if (out != NULL)
        *out = res;
    else
        swf_history__pg_clear(res);
    return NULL;
}

swf_error_t *swf_history__pg_query(PGconn *conn, const char *sql, int n, const char *const *values,
                                   PGresult **out)
{
    if (out != NULL)
        *out = NULL;
    PGresult *res =
        n < 0 ? PQexec(conn, sql) : PQexecParams(conn, sql, n, NULL, values, NULL, NULL, 0);
    return check(conn, res, out);
}

static swf_error_t *statement_prepare(swf_history__pg_t *pg, const char *name);

swf_error_t *swf_history__pg_prepared(swf_history__pg_t *pg, const char *name, int n,
                                      const char *const *values, PGresult **out)
{
    if (out != NULL)
        *out = NULL;
    swf_error_t *err = statement_prepare(pg, name);
    if (err != NULL)
        return err;
    return check(pg->conn, PQexecPrepared(pg->conn, name, n, values, NULL, NULL, 0), out);
}

swf_error_t *swf_history__pg_send_prepared(swf_history__pg_t *pg, const char *name, int n,
                                           const char *const *values)
{
    assert(!pg->sent);
    swf_error_t *err = statement_prepare(pg, name);
    if (err != NULL)
        return err;
    if (!PQsendQueryPrepared(pg->conn, name, n, values, NULL, NULL, 0))
        return pg_error(pg->conn, NULL);
    pg->sent = true;
    return NULL;
}

swf_error_t *swf_history__pg_collect(swf_history__pg_t *pg)
{
    if (!pg->sent)
        return NULL;
    pg->sent = false;
    PGresult *first = PQgetResult(pg->conn), *more;
    while ((more = PQgetResult(pg->conn)) != NULL)
        PQclear(more);
    return check(pg->conn, first, NULL);
}

swf_error_t *swf_history__pg_begin(PGconn *conn)
{
    return swf_history__pg_query(conn, "BEGIN", 0, NULL, NULL);
}

swf_error_t *swf_history__pg_commit(PGconn *conn)
{
    return swf_history__pg_query(conn, "COMMIT", 0, NULL, NULL);
}

void swf_history__pg_rollback(PGconn *conn)
{
    swf_error_free(swf_history__pg_query(conn, "ROLLBACK", 0, NULL, NULL));
}

const char *swf_history_pg_conninfo_env(void)
{
    const char *url = getenv("SWF_DATABASE_URL");
    return url != NULL ? url : "";
}

/* The settings every connection runs with, new or reset. */
static swf_error_t *session_setup(PGconn *conn)
{
    /* Quiet NOTICEs (CREATE ... IF NOT EXISTS) so commands' output stays clean.
     * Generic plans: planning the append statement costs more than running
     * it, and only named statements (the append) are affected; unnamed
     * ones are always planned for their values. */
    return swf_history__pg_query(conn,
                                 "SET client_min_messages = warning;"
                                 " SET TIME ZONE 'UTC';"
                                 " SET plan_cache_mode = force_generic_plan",
                                 -1, NULL, NULL);
}

/*
 * A connection the server closed (a restart, a terminated backend, a
 * network failure) stays broken in libpq: every later statement fails at
 * once. So each operation starts here, and a broken connection is reset
 * (PQreset: the same conninfo, a new session, the statements prepared
 * again on first use). The operation that met the failure has already
 * returned it, retriable ("database connection: ..."); the caller retries,
 * and while the server is still down each retry fails fast the same way.
 *
 * Only at the start of an operation, never inside a transaction: a
 * transaction died with its connection, and its remaining statements must
 * not go on in autocommit on a new one. Callers stop at the first error of
 * a transaction, so a broken connection is only ever met here between
 * operations.
 */
swf_error_t *swf_history__pg_ready(swf_history__pg_t *pg)
{
    assert(!pg->sent);
    if (PQstatus(pg->conn) == CONNECTION_OK)
        return NULL;
    pg->prepared = 0;
    PQreset(pg->conn);
    if (PQstatus(pg->conn) != CONNECTION_OK)
        return pg_error(pg->conn, NULL);
    swf_error_t *err = session_setup(pg->conn);
    if (err == NULL && pg->commit_async)
        err = swf_history__pg_query(pg->conn, "SET synchronous_commit = off", -1, NULL, NULL);
    return err;
}

swf_error_t *swf_history_pg_connect(const char *conninfo, swf_history_store_t **out)
{
    *out = NULL;
    PGconn *conn = PQconnectdb(conninfo != NULL ? conninfo : "");
    if (conn == NULL)
        abort();
    if (PQstatus(conn) != CONNECTION_OK) {
        swf_error_t *err = pg_error(conn, NULL);
        PQfinish(conn);
        /* libpq's defaults (a local socket) are rarely what was meant. */
        if ((conninfo == NULL || conninfo[0] == '\0') && getenv("SWF_DATABASE_URL") == NULL)
            swf_error_set_cause(err, "SWF_DATABASE_URL is not set, so libpq's defaults were tried;"
                                     " set it to the database's URL (`swf dev` prints one)");
        return err;
    }
    swf_error_t *err = session_setup(conn);
    if (err != NULL) {
        PQfinish(conn);
        return err;
    }
    swf_history__pg_t *pg = calloc(1, sizeof(*pg));
    if (pg == NULL)
        abort();
    pg->base.ops = &pg_ops;
    pg->conn = conn;
    *out = &pg->base;
    return NULL;
}

swf_error_t *swf_history_pg_new(const char *conninfo, swf_history_store_t **out)
{
    swf_error_t *err = swf_history_pg_connect(conninfo, out);
    if (err != NULL)
        return err;
    int version = 0, owner = 1;
    err = swf_history_pg_schema_version(*out, &version, &owner);
    if (err == NULL && version > swf_history_pg_schema_latest())
        err = swf_error_new(SWF_E_DB, NULL,
                            "the database schema is at version %d, newer than this swf (%d)",
                            version, swf_history_pg_schema_latest());
    else if (err == NULL && version < swf_history_pg_schema_latest()) {
        if (owner)
            err = swf_history_pg_migrate(*out, 0, NULL, NULL);
        else {
            err = swf_error_new(SWF_E_DB, NULL,
                                "the database schema is at version %d, this swf needs %d", version,
                                swf_history_pg_schema_latest());
            swf_error_set_cause(err, "run `swf db migrate` as the schema's owner (this role does "
                                     "not own it, so it never migrates)");
        }
    }
    if (err != NULL) {
        swf_history_store_free(*out);
        *out = NULL;
    }
    return err;
}

/* ---- appends ------------------------------------------------------------ */

/* The input rows of both batch statements, and each append's first and
 * last id. */
#define APPEND_INPUT                                                                               \
    "WITH ev AS MATERIALIZED ("                                                                    \
    "  SELECT r.x, r.i, r.t, timestamptz 'epoch' + r.ms * interval '1 millisecond' AS tm, r.a"     \
    "  FROM jsonb_to_recordset($1) AS r(x text, i bigint, t text, ms bigint, a jsonb)),"           \
    " ap AS MATERIALIZED (SELECT x, min(i) AS first_id, max(i) AS last_id,"                        \
    "  bool_or(t IN (" CLOSING ", " REDRIVEN ")) AS closes FROM ev GROUP BY x),"
/* The events that close an execution, and the one that opens it again (a
 * redrive, which "closes" here too): the only ones after its first that
 * rewrite its executions row (status, close_time). */
#define REDRIVEN "'WorkflowExecutionRedriven'"
#define CLOSING                                                                                    \
    "'WorkflowExecutionCompleted', 'WorkflowExecutionFailed', 'WorkflowExecutionTimedOut',"        \
    " 'WorkflowExecutionCanceled', 'WorkflowExecutionTerminated'"
/* "The history ends at first_id - 1", as of the statement's snapshot: one
 * descent of the events key (backward from the end of the execution's
 * range, stopping below first_id - 1). A writer that commits later makes
 * the INSERT hit the key instead. */
#define APPEND_FITS                                                                                \
    "(SELECT max(v.event_id) FROM events v"                                                        \
    "  WHERE v.execution_id = ap.x AND v.event_id >= ap.first_id - 1) = ap.first_id - 1"
/* Inserting in key order: two batches that both write (a, 5) and (b, 7)
 * then wait for each other in the same order, never in a cycle. */
#define APPEND_INSERT_ROWS                                                                         \
    " ins AS ("                                                                                    \
    "  INSERT INTO events (execution_id, event_id, event_type, event_time, attributes)"            \
    "  SELECT ev.x, ev.i, ev.t, ev.tm, ev.a FROM ev JOIN won ON won.x = ev.x ORDER BY ev.x, ev.i"
#define APPEND_INSERT APPEND_INSERT_ROWS ")"

/*
 * The projections of what an append statement inserted: timers (a timer
 * started in, its firing, its cancel or its execution's close out: a
 * close leaves open timers behind in the events, a timeout or a terminate
 * while a Wait runs, and swf-history must not fire them), the outbox (a
 * task in unless its activity or its execution closed in the same
 * statement, as in an imported history, whose tasks must not run again;
 * a closed execution's rows out; a nested execution's close in, with its
 * parent, for the publishers to tell the parent: decider/nested.h), activity_timeouts (an activity
 * with a timeout in, its close or its execution's out, its heartbeats noted; one scheduled and
 * closed in the same statement never goes in, and one scheduled and beaten in it goes in with its
 * heartbeat: the statement's writes do not see each other's rows, so `ah` finds no row of an
 * activity scheduled in it).
 *
 * They read the rows the INSERT returns (only the winners' events), grouped
 * per timer and per activity, and join nothing to the input: the planner
 * cannot count the rows of a jsonb array, and a join of the input with the
 * winners was planned as a nested loop that took 5 ms of a 100-execution
 * batch. `iv` sorts what `ins` returns, and a sort reads every row before
 * it returns one, so every projection write waits for all the events rows
 * of the statement (the lock order at append_sql).
 */
/* The events the heartbeat timeout counts from (besides the scheduling):
 * a recorded heartbeat, and the start a worker reported (activity.started). */
#define BEATS "'ActivityTaskHeartbeatRecorded', 'ActivityTaskStarted'"
#define APPEND_PROJECTIONS                                                                         \
    "  RETURNING execution_id AS x, event_id AS i, event_type AS t, event_time AS tm,"             \
    "    attributes AS a),"                                                                        \
    " iv AS MATERIALIZED (SELECT * FROM ins WHERE t IN ('TimerStarted', 'TimerFired',"             \
    "  'TimerCanceled', 'ActivityTaskScheduled', " BEATS ", " SWF_HISTORY__ACTIVITY_CLOSING        \
    ", " CLOSING ") ORDER BY x, i),"                                                               \
    " xc AS MATERIALIZED (SELECT DISTINCT x FROM iv WHERE t IN (" CLOSING ")),"                    \
    " tl AS MATERIALIZED ("                                                                        \
    "  SELECT DISTINCT ON (x, a->>'timerId') x, a->>'timerId' AS timer_id, t, i,"                  \
    "    tm + coalesce((a->>'startToFireTimeout')::float8, 0) * interval '1 second' AS fire_at"    \
    "  FROM iv WHERE t IN ('TimerStarted', 'TimerFired', 'TimerCanceled')"                         \
    "  ORDER BY x, a->>'timerId', i DESC),"                                                        \
    " ts AS ("                                                                                     \
    "  INSERT INTO timers (execution_id, timer_id, fire_at, started_event_id)"                     \
    "  SELECT x, timer_id, fire_at, i FROM tl"                                                     \
    "  WHERE t = 'TimerStarted' AND x NOT IN (SELECT x FROM xc)"                                   \
    "  ON CONFLICT (execution_id, timer_id) DO UPDATE"                                             \
    "  SET fire_at = excluded.fire_at, started_event_id = excluded.started_event_id),"             \
    " td AS ("                                                                                     \
    "  DELETE FROM timers tt USING (SELECT x, timer_id FROM tl WHERE t <> 'TimerStarted'"          \
    "   UNION ALL SELECT x, NULL FROM xc) k"                                                       \
    "  WHERE tt.execution_id = k.x AND (k.timer_id IS NULL OR tt.timer_id = k.timer_id)),"         \
    " ak AS MATERIALIZED ("                                                                        \
    "  SELECT x, CASE WHEN t = 'ActivityTaskScheduled' THEN i"                                     \
    "    ELSE (a->>'scheduledEventId')::bigint END AS sid,"                                        \
    "   bool_or(t IN (" SWF_HISTORY__ACTIVITY_CLOSING ")) AS closed,"                              \
    "   min(a#>>'{taskList,name}') FILTER (WHERE t = 'ActivityTaskScheduled') AS list,"            \
    "   bool_or(t = 'ActivityTaskScheduled'"                                                       \
    "     AND (a ? 'startToCloseTimeout' OR a ? 'heartbeatTimeout')) AS timed,"                    \
    "   min(tm) FILTER (WHERE t = 'ActivityTaskScheduled') AS at,"                                 \
    "   min((a->>'startToCloseTimeout')::float8)"                                                  \
    "     FILTER (WHERE t = 'ActivityTaskScheduled') AS stc,"                                      \
    "   min((a->>'heartbeatTimeout')::float8)"                                                     \
    "     FILTER (WHERE t = 'ActivityTaskScheduled') AS hb,"                                       \
    "   max(tm) FILTER (WHERE t IN (" BEATS ")) AS beat,"                                          \
    "   (array_agg(tm ORDER BY i DESC)"                                                            \
    "     FILTER (WHERE t IN (" BEATS ")))[1] AS last_beat"                                        \
    "  FROM iv WHERE t IN ('ActivityTaskScheduled', " BEATS ", " SWF_HISTORY__ACTIVITY_CLOSING ")" \
    "  GROUP BY 1, 2),"                                                                            \
    " ob AS ("                                                                                     \
    "  INSERT INTO outbox (execution_id, event_id, topic)"                                         \
    "  SELECT x, sid, list FROM ak"                                                                \
    "  WHERE list IS NOT NULL AND NOT closed AND x NOT IN (SELECT x FROM xc)),"                    \
    " od AS (DELETE FROM outbox o USING xc WHERE o.execution_id = xc.x),"                          \
    " oc AS ("                                                                                     \
    "  INSERT INTO outbox (execution_id, event_id, topic, payload)"                                \
    "  SELECT c.x, c.i, '" SWF_HISTORY_NESTED_CLOSED_TOPIC "', jsonb_build_object("                \
    "    'parentWorkflowExecution', s.attributes->'parentWorkflowExecution',"                      \
    "    'parentInitiatedEventId', s.attributes->'parentInitiatedEventId')"                        \
    "  FROM (SELECT x, max(i) AS i FROM iv WHERE t IN (" CLOSING ") GROUP BY x) c"                 \
    "  JOIN events s ON s.execution_id = c.x AND s.event_id = 1"                                   \
    "  WHERE s.attributes ? 'parentWorkflowExecution'),"                                           \
    " ai AS ("                                                                                     \
    "  INSERT INTO activity_timeouts (execution_id, scheduled_event_id, scheduled_time,"           \
    "    start_to_close, heartbeat, last_heartbeat)"                                               \
    "  SELECT x, sid, at, stc, hb, beat FROM ak"                                                   \
    "  WHERE timed AND NOT closed AND x NOT IN (SELECT x FROM xc)),"                               \
    " ah AS ("                                                                                     \
    "  UPDATE activity_timeouts a SET last_heartbeat = ak.last_beat FROM ak"                       \
    "  WHERE ak.last_beat IS NOT NULL AND NOT ak.closed AND ak.x NOT IN (SELECT x FROM xc)"        \
    "    AND a.execution_id = ak.x AND a.scheduled_event_id = ak.sid),"                            \
    " ad AS ("                                                                                     \
    "  DELETE FROM activity_timeouts a"                                                            \
    "  USING (SELECT x, sid FROM ak WHERE closed UNION ALL SELECT x, NULL FROM xc) k"              \
    "  WHERE a.execution_id = k.x AND (k.sid IS NULL OR a.scheduled_event_id = k.sid))"

/* A batch of plain appends only (the common case): the events rows and
 * nothing else, as for a single append. */
static const char append_plain_sql[] =
    APPEND_INPUT " won AS MATERIALIZED (SELECT x FROM ap WHERE " APPEND_FITS ")," APPEND_INSERT
                 " SELECT x FROM won";

/*
 * Any batch. Appends that close their execution lock its executions row,
 * in execution-id order, and rewrite it (status, close_time and
 * last_event_id); the others, among them every activity step, are checked
 * as above and leave the row alone (it is the lazy lower bound described
 * at append_one_sql): an activity's outbox row and a timer's row are keyed
 * by the event's own ids, and a losing statement fails on the events key
 * with all its writes undone.
 *
 * Locks: the closing rows first, in id order, then the events keys in
 * (execution, id) order, then timers and outbox rows of events already
 * won. A statement waits on another's events key only from that second
 * phase, and then holds no events key after it in the order, so two
 * batches racing on the same executions (deciders in a rebalance) wait for
 * each other but never in a cycle.
 */
static const char append_sql[] = APPEND_INPUT
    " lk AS MATERIALIZED ("
    "  SELECT e.execution_id FROM executions e"
    "  WHERE e.execution_id = ANY (ARRAY(SELECT x FROM ap WHERE first_id > 1 AND closes))"
    "  ORDER BY e.execution_id FOR NO KEY UPDATE),"
    " cl AS MATERIALIZED ("
    "  SELECT DISTINCT ON (x) x, tm, CASE t"
    "    WHEN 'WorkflowExecutionCompleted' THEN 'succeeded'"
    "    WHEN 'WorkflowExecutionFailed' THEN 'failed'"
    "    WHEN 'WorkflowExecutionTimedOut' THEN 'timed_out'"
    "    WHEN 'WorkflowExecutionCanceled' THEN 'canceled'"
    "    WHEN " REDRIVEN " THEN 'open'"
    "    ELSE 'terminated' END AS status"
    "  FROM ev WHERE t IN (" CLOSING ", " REDRIVEN ")"
    "  ORDER BY x, i DESC),"
    " created AS ("
    "  INSERT INTO executions AS e (execution_id, workflow_id, state_machine,"
    "    state_machine_version, status, start_time, close_time, last_event_id)"
    "  SELECT ev.x, coalesce(ev.a->>'workflowId', ev.x),"
    "    coalesce(ev.a#>>'{workflowType,name}', ''), coalesce(ev.a#>>'{workflowType,version}', ''),"
    "    coalesce(cl.status, 'open'), ev.tm, CASE WHEN cl.status <> 'open' THEN cl.tm END,"
    "    ap.last_id"
    "  FROM ap JOIN ev ON ev.x = ap.x AND ev.i = 1 LEFT JOIN cl ON cl.x = ap.x"
    "  WHERE ap.first_id = 1 ORDER BY ev.x"
    "  ON CONFLICT DO NOTHING RETURNING e.execution_id),"
    " advanced AS ("
    "  UPDATE executions e SET last_event_id = ap.last_id,"
    "    status = coalesce(cl.status, e.status),"
    "    close_time = CASE WHEN cl.status = 'open' THEN NULL ELSE coalesce(cl.tm, e.close_time) END"
    "  FROM ap LEFT JOIN cl ON cl.x = ap.x"
    "  WHERE e.execution_id = ap.x AND ap.first_id > 1 AND ap.closes"
    "    AND e.last_event_id < ap.first_id AND " APPEND_FITS
    "    AND (SELECT count(*) FROM lk) >= 0"
    "  RETURNING e.execution_id),"
    " won AS MATERIALIZED ("
    "  SELECT execution_id AS x FROM created UNION ALL SELECT execution_id FROM advanced"
    "  UNION ALL SELECT x FROM ap WHERE ap.first_id > 1 AND NOT ap.closes AND " APPEND_FITS
    ")," APPEND_INSERT_ROWS APPEND_PROJECTIONS " SELECT x FROM won";

/*
 * A batch of starts only: each append is an execution's first, its
 * WorkflowExecutionStarted and events that write no projection
 * (DecisionTaskScheduled: swf start, StartExecution, a nested start). It is
 * append_sql without the parts such a batch leaves empty (no execution
 * closes, no step, no projection row), so a new connection plans a
 * fraction of it: a lone `swf start` is a new backend that plans its one
 * statement once (swf_append's parse and plan took 6-9 ms of its ~20 ms of
 * PostgreSQL's time, bench/README.md).
 */
static const char append_start_sql[] = APPEND_INPUT
    " created AS ("
    "  INSERT INTO executions AS e (execution_id, workflow_id, state_machine,"
    "    state_machine_version, status, start_time, close_time, last_event_id)"
    "  SELECT ev.x, coalesce(ev.a->>'workflowId', ev.x),"
    "    coalesce(ev.a#>>'{workflowType,name}', ''), coalesce(ev.a#>>'{workflowType,version}', ''),"
    "    'open', ev.tm, NULL, ap.last_id"
    "  FROM ap JOIN ev ON ev.x = ap.x AND ev.i = 1"
    "  WHERE ap.first_id = 1 ORDER BY ev.x"
    "  ON CONFLICT DO NOTHING RETURNING e.execution_id),"
    " won AS MATERIALIZED (SELECT execution_id AS x FROM created)," APPEND_INSERT
    " SELECT x FROM won";

/*
 * A batch that neither starts nor closes an execution (append_needs says
 * which batches; those of activity events only have the leaner statement
 * below): append_sql without its work on executions rows, which only starts
 * and closes need. bench_history_append's "step" (one step a transaction):
 * 1,971-3,117 a second with this statement, 1,793-2,185 with append_sql.
 */
static const char append_step_sql[] =
    APPEND_INPUT " won AS MATERIALIZED (SELECT x FROM ap WHERE " APPEND_FITS
                 ")," APPEND_INSERT_ROWS APPEND_PROJECTIONS " SELECT x FROM won";

/*
 * A batch of activity steps only: no execution starts or closes, and no
 * timer or heartbeat event (append_needs says which). Its projections are
 * the outbox and activity_timeouts rows of activities scheduled and
 * closed, without the statement parts that only timers, heartbeats and
 * closes need: a plan of fewer nodes, which a lone step pays for in full.
 * bench_history_append's "step": 2,609-3,513 a second with this statement,
 * 1,855-2,310 with append_step_sql (three runs of each, interleaved).
 */
static const char append_activity_sql[] = APPEND_INPUT
    " won AS MATERIALIZED (SELECT x FROM ap WHERE " APPEND_FITS ")," APPEND_INSERT_ROWS
    "  RETURNING execution_id AS x, event_id AS i, event_type AS t, event_time AS tm,"
    "    attributes AS a),"
    " iv AS MATERIALIZED (SELECT * FROM ins WHERE t IN "
    "('ActivityTaskScheduled', " SWF_HISTORY__ACTIVITY_CLOSING ") ORDER BY x, i),"
    " ak AS MATERIALIZED ("
    "  SELECT x, CASE WHEN t = 'ActivityTaskScheduled' THEN i"
    "    ELSE (a->>'scheduledEventId')::bigint END AS sid,"
    "   bool_or(t <> 'ActivityTaskScheduled') AS closed,"
    "   min(a#>>'{taskList,name}') FILTER (WHERE t = 'ActivityTaskScheduled') AS list,"
    "   bool_or(t = 'ActivityTaskScheduled'"
    "     AND (a ? 'startToCloseTimeout' OR a ? 'heartbeatTimeout')) AS timed,"
    "   min(tm) FILTER (WHERE t = 'ActivityTaskScheduled') AS at,"
    "   min((a->>'startToCloseTimeout')::float8)"
    "     FILTER (WHERE t = 'ActivityTaskScheduled') AS stc,"
    "   min((a->>'heartbeatTimeout')::float8)"
    "     FILTER (WHERE t = 'ActivityTaskScheduled') AS hb"
    "  FROM iv GROUP BY 1, 2),"
    " ob AS ("
    "  INSERT INTO outbox (execution_id, event_id, topic)"
    "  SELECT x, sid, list FROM ak WHERE list IS NOT NULL AND NOT closed),"
    " ai AS ("
    "  INSERT INTO activity_timeouts (execution_id, scheduled_event_id, scheduled_time,"
    "    start_to_close, heartbeat)"
    "  SELECT x, sid, at, stc, hb FROM ak WHERE timed AND NOT closed),"
    " ad AS ("
    "  DELETE FROM activity_timeouts a USING ak"
    "  WHERE ak.closed AND a.execution_id = ak.x AND a.scheduled_event_id = ak.sid)"
    " SELECT x FROM won";

static bool is_string(json_object *v)
{
    return v != NULL && json_object_is_type(v, json_type_string);
}

/* A timeout or timer attribute, when present, is a number of seconds the
 * projections and swf-history can compute with. */
static swf_error_t *seconds_check(const swf_history_append_t *a, int64_t id, json_object *attrs,
                                  const char *name)
{
    json_object *v;
    if (!swf_json_get(attrs, name, &v) ||
        (swf_json_is_number(v) && json_object_get_double(v) >= 0 &&
         json_object_get_double(v) <= SWF_LIMIT_TIMER_SECONDS))
        return NULL;
    return swf_error_new(SWF_E_INPUT, NULL,
                         "execution %s: event %lld: %s must be a number of seconds from 0 to %g",
                         a->execution_id, (long long)id, name, SWF_LIMIT_TIMER_SECONDS);
}

/* Checks one append before it goes to the database: the shapes the
 * projections read must be there, so that a bad event fails its own append
 * and not the whole batch. */
static swf_error_t *append_check(const swf_history_append_t *a)
{
    if (a->execution_id == NULL || a->execution_id[0] == '\0')
        return swf_error_new(SWF_E_INPUT, NULL, "an execution id must not be empty");
    if (strlen(a->execution_id) > SWF_LIMIT_NAME_BYTES)
        return swf_error_new(SWF_E_LIMIT, NULL, "an execution id is longer than %d bytes",
                             SWF_LIMIT_NAME_BYTES);
    if (a->expected_next_id < 1)
        return swf_error_new(SWF_E_INPUT, NULL, "execution %s: expected event id %lld is not >= 1",
                             a->execution_id, (long long)a->expected_next_id);
    if (a->expected_next_id - 1 > SWF_LIMIT_HISTORY_EVENTS ||
        (int64_t)a->count > SWF_LIMIT_HISTORY_EVENTS - (a->expected_next_id - 1))
        return swf_error_new(SWF_E_LIMIT, NULL, "execution %s: more than %d events",
                             a->execution_id, SWF_LIMIT_HISTORY_EVENTS);
    for (size_t i = 0; i < a->count; i++) {
        const swf_event_t *ev = &a->events[i];
        int64_t id = a->expected_next_id + (int64_t)i;
        json_object *v;
        if (swf_event_type_name(ev->type) == NULL)
            return swf_error_new(SWF_E_INPUT, NULL, "execution %s: event %lld has no valid type",
                                 a->execution_id, (long long)id);
        if ((id == 1) != (ev->type == SWF_EVENT_WORKFLOW_EXECUTION_STARTED))
            return swf_error_new(SWF_E_INPUT, NULL,
                                 "execution %s: a history starts with WorkflowExecutionStarted, "
                                 "and only there (event %lld is %s)",
                                 a->execution_id, (long long)id, swf_event_type_name(ev->type));
        if (ev->time_ms < TIME_MS_MIN || ev->time_ms > TIME_MS_MAX)
            return swf_error_new(SWF_E_INPUT, NULL, "execution %s: event %lld: time out of range",
                                 a->execution_id, (long long)id);
        if (ev->attrs != NULL && !json_object_is_type(ev->attrs, json_type_object))
            return swf_error_new(SWF_E_INPUT, NULL,
                                 "execution %s: event %lld: attributes must be an object",
                                 a->execution_id, (long long)id);
        swf_error_t *err = NULL;
        switch (ev->type) {
        case SWF_EVENT_WORKFLOW_EXECUTION_STARTED:
            err = seconds_check(a, id, ev->attrs, "executionStartToCloseTimeout");
            if (err != NULL)
                return err;
            if (swf_json_get(ev->attrs, "workflowId", &v) &&
                (!is_string(v) || json_object_get_string_len(v) == 0 ||
                 json_object_get_string_len(v) > SWF_LIMIT_NAME_BYTES))
                return swf_error_new(SWF_E_INPUT, NULL,
                                     "execution %s: workflowId must be a non-empty string of at "
                                     "most %d bytes",
                                     a->execution_id, SWF_LIMIT_NAME_BYTES);
            break;
        case SWF_EVENT_TIMER_STARTED:
        case SWF_EVENT_TIMER_FIRED:
        case SWF_EVENT_TIMER_CANCELED:
            if (!swf_json_get(ev->attrs, "timerId", &v) || !is_string(v))
                return swf_error_new(SWF_E_INPUT, NULL,
                                     "execution %s: event %lld: timerId must be a string",
                                     a->execution_id, (long long)id);
            if (ev->type == SWF_EVENT_TIMER_STARTED)
                return seconds_check(a, id, ev->attrs, "startToFireTimeout");
            break;
        case SWF_EVENT_ACTIVITY_TASK_SCHEDULED:
            if (!swf_json_get(ev->attrs, "taskList", &v) ||
                !is_string(json_object_object_get(v, "name")))
                return swf_error_new(SWF_E_INPUT, NULL,
                                     "execution %s: event %lld: taskList.name must be a string",
                                     a->execution_id, (long long)id);
            err = seconds_check(a, id, ev->attrs, "startToCloseTimeout");
            if (err == NULL)
                err = seconds_check(a, id, ev->attrs, "heartbeatTimeout");
            if (err != NULL)
                return err;
            break;
        default:
            break;
        }
    }
    return NULL;
}

/* Says why an append that did not win wrote nothing. */
static swf_error_t *append_why(swf_history__pg_t *pg, const swf_history_append_t *a)
{
    PGresult *res;
    const char *params[1] = {a->execution_id};
    swf_error_t *err = swf_history__pg_query(
        pg->conn,
        "SELECT (SELECT max(event_id) FROM events WHERE execution_id = $1) FROM executions"
        " WHERE execution_id = $1",
        1, params, &res);
    if (err != NULL)
        return err;
    bool exists = PQntuples(res) == 1;
    long long last = exists ? atoll(PQgetvalue(res, 0, 0)) : 0;
    swf_history__pg_clear(res);
    if (a->expected_next_id == 1 && !exists) {
        json_object *wf = NULL;
        const char *wid = swf_json_get(a->events[0].attrs, "workflowId", &wf) && is_string(wf)
                              ? json_object_get_string(wf)
                              : a->execution_id;
        const char *p[1] = {wid};
        err = swf_history__pg_query(
            pg->conn,
            "SELECT execution_id FROM executions WHERE workflow_id = $1 AND status = 'open'", 1, p,
            &res);
        if (err != NULL)
            return err;
        if (PQntuples(res) == 1) {
            err = swf_error_new(SWF_E_CONFLICT, NULL,
                                "workflow id \"%s\" is already running as execution %s", wid,
                                PQgetvalue(res, 0, 0));
        } else {
            err = swf_error_new(SWF_E_CONFLICT, NULL,
                                "execution %s: lost the append race to create it", a->execution_id);
            swf_error_set_retriable(err, true);
        }
        swf_history__pg_clear(res);
        return err;
    }
    if (!exists)
        return swf_error_new(SWF_E_NOTFOUND, NULL, "no execution %s", a->execution_id);
    if (a->expected_next_id == 1)
        return swf_error_new(SWF_E_CONFLICT, NULL, "execution %s already exists", a->execution_id);
    err = swf_error_new(SWF_E_CONFLICT, NULL,
                        "execution %s: lost the append race (expected event id %lld, the next "
                        "is %lld)",
                        a->execution_id, (long long)a->expected_next_id, last + 1);
    swf_error_set_retriable(err, true);
    return err;
}

/*
 * The fast path: one event that touches no projection at all (the common
 * case: decision and activity task bookkeeping, markers, signals). It is a
 * bare INSERT of the events row, guarded by "the last event is the one
 * before": the check reads the events primary key (one index descent), and a
 * concurrent writer of the same id makes the loser's INSERT fail on that key
 * (23505, translated to SWF_E_CONFLICT). So the primary key alone decides
 * races, and the executions row is not touched.
 *
 * Why not keep executions.last_event_id exact on every append: rewriting
 * that row (and locking it) in the same statement halved the rate of single
 * appends, measured with pgbench against a bare one-row insert, and in a
 * batch of 100 one-event appends the 100 row rewrites cost more than
 * everything else together. The column is therefore written lazily: when an
 * execution is created, by appends that close it (status and close_time
 * change anyway), by import and by the rebuild. Between such writes
 * it is a lower bound. Whoever reports it (describe, list, append_why) or
 * checks against it (the batch statements) takes max(event_id) from the
 * events primary key instead, which is exact. SQL elsewhere must do the
 * same.
 *
 * Appends that are not plain take the batch statement.
 */
static const char append_one_sql[] =
    "INSERT INTO events (execution_id, event_id, event_type, event_time, attributes)"
    " SELECT $1, $2, $3, timestamptz 'epoch' + $4 * interval '1 millisecond', $5"
    " WHERE EXISTS (SELECT FROM events WHERE execution_id = $1 AND event_id = $2 - 1)";

/*
 * Which projections an event writes besides the history itself, as
 * append_sql writes them: its execution's row (the first event, a closing
 * event, a redrive), the step's (a timer event, an activity's heartbeat or
 * start, from which the heartbeat timeout counts), an activity's (its
 * scheduling and close: the activity_timeouts projection), or none (a
 * plain event, which changes only the executions row's lazy last_event_id).
 * Keep in step with the projections append_sql writes.
 */
typedef enum { WRITES_NONE, WRITES_ACTIVITY, WRITES_STEP, WRITES_EXECUTION } event_writes_t;

static event_writes_t event_writes(swf_event_type_t type)
{
    switch (type) {
    case SWF_EVENT_WORKFLOW_EXECUTION_STARTED:
    case SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED:
    case SWF_EVENT_WORKFLOW_EXECUTION_FAILED:
    case SWF_EVENT_WORKFLOW_EXECUTION_TIMED_OUT:
    case SWF_EVENT_WORKFLOW_EXECUTION_CANCELED:
    case SWF_EVENT_WORKFLOW_EXECUTION_TERMINATED:
    case SWF_EVENT_WORKFLOW_EXECUTION_REDRIVEN:
        return WRITES_EXECUTION;
    case SWF_EVENT_TIMER_STARTED:
    case SWF_EVENT_TIMER_FIRED:
    case SWF_EVENT_TIMER_CANCELED:
    case SWF_EVENT_ACTIVITY_TASK_HEARTBEAT_RECORDED:
    case SWF_EVENT_ACTIVITY_TASK_STARTED:
        return WRITES_STEP;
    case SWF_EVENT_ACTIVITY_TASK_SCHEDULED:
    case SWF_EVENT_ACTIVITY_TASK_COMPLETED:
    case SWF_EVENT_ACTIVITY_TASK_FAILED:
    case SWF_EVENT_ACTIVITY_TASK_TIMED_OUT:
    case SWF_EVENT_ACTIVITY_TASK_CANCELED:
        return WRITES_ACTIVITY;
    default:
        return WRITES_NONE;
    }
}

static bool plain(swf_event_type_t type)
{
    return event_writes(type) == WRITES_NONE;
}

/* The least an append needs of the statements that write projections, in
 * increasing order of what they do (append_activity_sql, append_step_sql,
 * append_sql): activity events only; also timers and heartbeats; the
 * start or the close of its execution. */
typedef enum { NEEDS_ACTIVITY, NEEDS_STEP, NEEDS_ANY } append_needs_t;

static append_needs_t append_needs(const swf_history_append_t *a)
{
    if (a->expected_next_id <= 1)
        return NEEDS_ANY;
    append_needs_t needs = NEEDS_ACTIVITY;
    for (size_t k = 0; k < a->count; k++) {
        swf_event_type_t type = a->events[k].type;
        switch (event_writes(type)) {
        case WRITES_EXECUTION:
            /* a first event comes only in a first append (above) */
            if (type != SWF_EVENT_WORKFLOW_EXECUTION_STARTED)
                return NEEDS_ANY;
            break;
        case WRITES_STEP:
            /* A start alone (activity.started) is a heartbeat; one the
             * answer follows at once changes no projection. */
            if (type != SWF_EVENT_ACTIVITY_TASK_STARTED || k + 1 == a->count ||
                (a->events[k + 1].type != SWF_EVENT_ACTIVITY_TASK_COMPLETED &&
                 a->events[k + 1].type != SWF_EVENT_ACTIVITY_TASK_FAILED))
                needs = NEEDS_STEP;
            break;
        default:
            break;
        }
    }
    return needs;
}

/* An execution's first append that writes no projection but its
 * executions row (append_start_sql). */
static bool start_only(const swf_history_append_t *a)
{
    if (a->expected_next_id != 1 || a->count == 0 ||
        a->events[0].type != SWF_EVENT_WORKFLOW_EXECUTION_STARTED)
        return false;
    for (size_t k = 1; k < a->count; k++) {
        if (!plain(a->events[k].type))
            return false;
    }
    return true;
}

static bool fast_path(const swf_history_append_t *a)
{
    return a->count == 1 && a->expected_next_id > 1 && plain(a->events[0].type);
}

/* The reads' statements (used further down), prepared with the appends'. */
#define EVENT_COLUMNS                                                                              \
    "SELECT event_id, event_type, (extract(epoch FROM event_time) * 1000)::bigint, attributes"
static const char load_sql[] = EVENT_COLUMNS " FROM events WHERE execution_id = $1"
                                             " AND event_id > $2 ORDER BY event_id LIMIT $3";
static const char load_reverse_sql[] = EVENT_COLUMNS
    " FROM events WHERE execution_id = $1 AND event_id < $2 ORDER BY event_id DESC LIMIT $3";

/* The executions projection's columns, but last_event_id from the events
 * primary key (exact; the column is a lower bound, see append_one_sql). */
#define EXECUTION_COLUMNS                                                                          \
    "x.execution_id, x.workflow_id, x.state_machine, x.state_machine_version, x.status,"           \
    " (extract(epoch FROM x.start_time) * 1000)::bigint,"                                          \
    " coalesce((extract(epoch FROM x.close_time) * 1000)::bigint, -1),"                            \
    " (SELECT max(v.event_id) FROM events v WHERE v.execution_id = x.execution_id)"
static const char describe_sql[] =
    "SELECT " EXECUTION_COLUMNS " FROM executions x WHERE x.execution_id = $1";

/* Type OIDs (pg_type.h is a server header): parameters declared with their
 * types spare the statements their casts. */
#define OID_INT8 20
#define OID_TEXT 25
#define OID_JSONB 3802

/*
 * The statements prepared on a connection, each at its first use there. They run
 * with generic plans (see swf_history_pg_connect): each is a few index
 * probes whose best plan does not depend on the values.
 */
static const struct {
    const char *name;
    const char *sql;
    int n;
    Oid types[5];
} statements[] = {
    {"swf_append", append_sql, 1, {OID_JSONB}},
    {"swf_append_plain", append_plain_sql, 1, {OID_JSONB}},
    {"swf_append_step", append_step_sql, 1, {OID_JSONB}},
    {"swf_append_activity", append_activity_sql, 1, {OID_JSONB}},
    {"swf_append_start", append_start_sql, 1, {OID_JSONB}},
    {"swf_append_one", append_one_sql, 5, {OID_TEXT, OID_INT8, OID_TEXT, OID_INT8, OID_JSONB}},
    {"swf_load", load_sql, 3, {OID_TEXT, OID_INT8, OID_INT8}},
    {"swf_load_reverse", load_reverse_sql, 3, {OID_TEXT, OID_INT8, OID_INT8}},
    {"swf_describe", describe_sql, 1, {OID_TEXT}},
    {"swf_load_batch", swf_history__load_batch_sql, 2, {OID_JSONB, OID_INT8}},
    {"swf_outbox_delete", swf_history__outbox_delete_sql, 2, {OID_JSONB, OID_JSONB}},
};

_Static_assert(sizeof(statements) / sizeof(statements[0]) <= 32, "one bit each in pg->prepared");

/* Prepares the statement called name on this connection unless it is. A
 * protocol-level prepare outlives a transaction that fails after it, so
 * the bit stays true; a reset connection clears every bit
 * (swf_history__pg_ready). */
static swf_error_t *statement_prepare(swf_history__pg_t *pg, const char *name)
{
    unsigned i = 0;
    while (strcmp(statements[i].name, name) != 0) {
        i++;
        assert(i < sizeof(statements) / sizeof(statements[0])); /* a name of the table */
    }
    if (pg->prepared & (1u << i))
        return NULL;
    swf_error_t *err = check(pg->conn,
                             PQprepare(pg->conn, statements[i].name, statements[i].sql,
                                       statements[i].n, statements[i].types),
                             NULL);
    if (err == NULL)
        pg->prepared |= 1u << i;
    return err;
}

/* Every operation of this file starts here. */
swf_error_t *swf_history__pg_prepare(swf_history__pg_t *pg)
{
    return swf_history__pg_ready(pg);
}

swf_error_t *swf_history__pg_items_start(swf_history__pg_t *pg, swf_error_t **errors, size_t n)
{
    for (size_t i = 0; i < n; i++)
        errors[i] = NULL;
    return n > 0 ? swf_history__pg_prepare(pg) : NULL;
}

static swf_error_t *append_one(swf_history__pg_t *pg, const swf_history_append_t *a)
{
    swf_error_t *err = append_check(a);
    if (err == NULL)
        err = swf_history__pg_prepare(pg);
    if (err != NULL)
        return err;
    const swf_event_t *ev = &a->events[0];
    char id[32], ms[32];
    snprintf(id, sizeof(id), "%lld", (long long)a->expected_next_id);
    snprintf(ms, sizeof(ms), "%lld", (long long)ev->time_ms);
    const char *params[5] = {a->execution_id, id, swf_event_type_name(ev->type), ms,
                             ev->attrs ? swf_json_str(ev->attrs) : "{}"};
    PGresult *res;
    err = swf_history__pg_prepared(pg, "swf_append_one", 5, params, &res);
    if (err != NULL)
        return err;
    /* No RETURNING: the command tag says whether the row went in. */
    bool won = strcmp(PQcmdTuples(res), "1") == 0;
    swf_history__pg_clear(res);
    return won ? NULL : append_why(pg, a);
}

swf_error_t *swf_history_pg_batch_append(swf_history_store_t *store,
                                         const swf_history_append_t *appends, size_t n,
                                         swf_error_t **errors)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    assert(errors != NULL);
    swf_error_t *err = swf_history__pg_items_start(pg, errors, n);
    if (err != NULL || n == 0)
        return err;

    /* The statement's jsonb array, written straight into text: a json-c
     * tree of every row would only be serialised again. */
    struct printbuf *doc = printbuf_new();
    if (doc == NULL)
        abort();
    printbuf_memappend(doc, "[", 1);
    size_t sent = 0;
    bool all_plain = true, all_starts = true;
    append_needs_t needs = NEEDS_ACTIVITY;
    bool *in = calloc(n, sizeof(*in));
    if (in == NULL)
        abort();
    for (size_t i = 0; i < n; i++) {
        const swf_history_append_t *a = &appends[i];
        errors[i] = append_check(a);
        for (size_t j = 0; errors[i] == NULL && j < i; j++) {
            if (in[j] && strcmp(appends[j].execution_id, a->execution_id) == 0)
                errors[i] = swf_error_new(
                    SWF_E_INPUT, NULL, "execution %s appears twice in one batch", a->execution_id);
        }
        if (errors[i] != NULL || a->count == 0)
            continue;
        in[i] = true;
        sent++;
        all_plain = all_plain && a->expected_next_id > 1;
        all_starts = all_starts && start_only(a);
        append_needs_t need = append_needs(a);
        needs = need > needs ? need : needs;
        json_object *x = json_object_new_string(a->execution_id);
        const char *xq = json_object_to_json_string_ext(x, JSON_C_TO_STRING_PLAIN |
                                                               JSON_C_TO_STRING_NOSLASHESCAPE);
        for (size_t k = 0; k < a->count; k++) {
            const swf_event_t *ev = &a->events[k];
            all_plain = all_plain && plain(ev->type);
            char head[160];
            int len = snprintf(head, sizeof(head), "%s{\"x\":", doc->bpos > 1 ? "," : "");
            printbuf_memappend(doc, head, len);
            printbuf_memappend(doc, xq, (int)strlen(xq));
            len = snprintf(head, sizeof(head), ",\"i\":%lld,\"t\":\"%s\",\"ms\":%lld,\"a\":",
                           (long long)(a->expected_next_id + (int64_t)k),
                           swf_event_type_name(ev->type), (long long)ev->time_ms);
            assert(len > 0 && (size_t)len < sizeof(head));
            printbuf_memappend(doc, head, len);
            const char *attrs = ev->attrs ? swf_json_str(ev->attrs) : "{}";
            printbuf_memappend(doc, attrs, (int)strlen(attrs));
            printbuf_memappend(doc, "}", 1);
        }
        json_object_put(x);
    }
    printbuf_memappend(doc, "]", 1);

    PGresult *res = NULL;
    if (sent > 0) {
        const char *params[1] = {doc->buf};
        /* The statement's own check reads the events as of its snapshot; a
         * single append (which takes no row lock) committed since then makes
         * its INSERT hit the events key, and the whole statement fails with
         * nothing written. Run it again then, with a fresh snapshot in which
         * only the appends that really lost fail, each on its own. Inside a
         * caller's transaction (import) the failure has aborted it: no
         * retry. */
        for (int attempt = 1;; attempt++) {
            const char *statement = all_plain                 ? "swf_append_plain"
                                    : all_starts              ? "swf_append_start"
                                    : needs == NEEDS_ACTIVITY ? "swf_append_activity"
                                    : needs == NEEDS_STEP     ? "swf_append_step"
                                                              : "swf_append";
            err = swf_history__pg_prepared(pg, statement, 1, params, &res);
            if (err == NULL || swf_error_code(err) != SWF_E_CONFLICT ||
                PQtransactionStatus(pg->conn) != PQTRANS_IDLE || attempt == BATCH_ATTEMPTS)
                break;
            swf_error_free(err);
        }
    }
    printbuf_free(doc);
    if (err != NULL) {
        for (size_t i = 0; i < n; i++) {
            swf_error_free(errors[i]);
            errors[i] = NULL;
        }
        free(in);
        return err;
    }

    /* Winners are few per batch (at most n): a linear scan is fine. */
    int rows = res ? PQntuples(res) : 0;
    for (size_t i = 0; i < n; i++) {
        const swf_history_append_t *a = &appends[i];
        if (errors[i] != NULL)
            continue;
        if (a->count == 0) {
            /* Nothing to write: only say whether the expected id is right. */
            swf_history_execution_t ex;
            errors[i] = swf_history_pg_execution_describe(store, a->execution_id, &ex);
            if (errors[i] == NULL) {
                if (ex.last_event_id + 1 != a->expected_next_id)
                    errors[i] = append_why(pg, a);
                swf_history_execution_free(&ex);
            } else if (a->expected_next_id == 1 && swf_error_code(errors[i]) == SWF_E_NOTFOUND) {
                swf_error_free(errors[i]);
                errors[i] = NULL;
            }
            continue;
        }
        bool won = false;
        for (int r = 0; r < rows && !won; r++)
            won = strcmp(PQgetvalue(res, r, 0), a->execution_id) == 0;
        if (!won)
            errors[i] = append_why(pg, a);
    }
    swf_history__pg_clear(res);
    free(in);
    return NULL;
}

static swf_error_t *pg_append(swf_history_store_t *store, const char *execution_id,
                              int64_t expected_next_id, const swf_event_t *events, size_t count)
{
    swf_history_append_t a = {execution_id, expected_next_id, events, count};
    if (fast_path(&a))
        return append_one(swf_history__pg(store), &a);
    swf_error_t *one = NULL;
    swf_error_t *err = swf_history_pg_batch_append(store, &a, 1, &one);
    return err != NULL ? err : one;
}

/* ---- reads -------------------------------------------------------------- */

swf_error_t *swf_history__pg_row_push(PGresult *res, int r, int col, swf_event_list_t *out)
{
    swf_event_t ev;
    ev.id = atoll(PQgetvalue(res, r, col));
    ev.type = swf_event_type_parse(PQgetvalue(res, r, col + 1));
    ev.time_ms = atoll(PQgetvalue(res, r, col + 2));
    if (ev.type == SWF_EVENT_NONE)
        return swf_error_new(SWF_E_INTERNAL, NULL, "event %lld has unknown type \"%s\"",
                             (long long)ev.id, PQgetvalue(res, r, col + 1));
    swf_error_t *err =
        swf_json_parse_stored(PQgetvalue(res, r, col + 3), (size_t)PQgetlength(res, r, col + 3),
                              SWF_LIMIT_JSON_BYTES, &ev.attrs);
    if (err != NULL) {
        swf_error_prefix(err, "event %lld", (long long)ev.id);
        return err;
    }
    swf_event_list_push_copy(out, &ev);
    json_object_put(ev.attrs);
    return NULL;
}

/* Appends the rows of res (id, type, ms, attributes) to out. */
static swf_error_t *rows_push(PGresult *res, swf_event_list_t *out)
{
    int rows = PQntuples(res);
    for (int r = 0; r < rows; r++) {
        swf_error_t *err = swf_history__pg_row_push(res, r, 0, out);
        if (err != NULL)
            return err;
    }
    return NULL;
}

static swf_error_t *exists(swf_history__pg_t *pg, const char *execution_id)
{
    PGresult *res;
    const char *params[1] = {execution_id};
    swf_error_t *err = swf_history__pg_query(
        pg->conn, "SELECT 1 FROM events WHERE execution_id = $1 AND event_id = 1", 1, params, &res);
    if (err != NULL)
        return err;
    bool found = PQntuples(res) > 0;
    swf_history__pg_clear(res);
    return found ? NULL : swf_error_new(SWF_E_NOTFOUND, NULL, "no execution %s", execution_id);
}

/* Pages through the events in either direction. `from` is exclusive. */
static swf_error_t *load_pages(swf_history_store_t *store, const char *execution_id, int64_t from,
                               size_t max, bool reverse, swf_event_list_t *out)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    swf_error_t *err = swf_history__pg_prepare(pg);
    if (err != NULL)
        return err;
    size_t got = 0;
    for (;;) {
        size_t want = max == 0 || max - got > LOAD_PAGE ? LOAD_PAGE : max - got;
        char from_s[32], limit_s[32];
        snprintf(from_s, sizeof(from_s), "%lld", (long long)from);
        snprintf(limit_s, sizeof(limit_s), "%zu", want);
        const char *params[3] = {execution_id, from_s, limit_s};
        PGresult *res;
        err = swf_history__pg_prepared(pg, reverse ? "swf_load_reverse" : "swf_load", 3, params,
                                       &res);
        if (err != NULL)
            return err;
        size_t before = out->count;
        err = rows_push(res, out);
        int rows = PQntuples(res);
        swf_history__pg_clear(res);
        if (err != NULL)
            return err;
        if (rows == 0 && got == 0)
            return exists(pg, execution_id);
        got += (size_t)rows;
        if ((size_t)rows < want || (max != 0 && got >= max))
            return NULL;
        from = out->items[before + (size_t)rows - 1].id;
    }
}

static swf_error_t *pg_load(swf_history_store_t *store, const char *execution_id, int64_t after_id,
                            size_t max, swf_event_list_t *out)
{
    return load_pages(store, execution_id, after_id < 0 ? 0 : after_id, max, false, out);
}

swf_error_t *swf_history_pg_load_reverse(swf_history_store_t *store, const char *execution_id,
                                         int64_t before_id, size_t max, swf_event_list_t *out)
{
    return load_pages(store, execution_id, before_id <= 0 ? INT64_MAX : before_id, max, true, out);
}

/* ---- the executions projection ------------------------------------------ */

static void execution_from_row(PGresult *res, int r, swf_history_execution_t *ex)
{
    ex->execution_id = swf_history__strdup(PQgetvalue(res, r, 0));
    ex->workflow_id = swf_history__strdup(PQgetvalue(res, r, 1));
    ex->state_machine = swf_history__strdup(PQgetvalue(res, r, 2));
    ex->state_machine_version = swf_history__strdup(PQgetvalue(res, r, 3));
    ex->status = swf_history__strdup(PQgetvalue(res, r, 4));
    ex->start_ms = atoll(PQgetvalue(res, r, 5));
    ex->close_ms = atoll(PQgetvalue(res, r, 6));
    ex->last_event_id = atoll(PQgetvalue(res, r, 7));
}

void swf_history_execution_free(swf_history_execution_t *ex)
{
    if (ex == NULL)
        return;
    free(ex->execution_id);
    free(ex->workflow_id);
    free(ex->state_machine);
    free(ex->state_machine_version);
    free(ex->status);
    memset(ex, 0, sizeof(*ex));
}

void swf_history_executions_free(swf_history_execution_t *items, size_t count)
{
    for (size_t i = 0; items != NULL && i < count; i++)
        swf_history_execution_free(&items[i]);
    free(items);
}

/* The row of a query of at most one execution into *out, or SWF_E_NOTFOUND
 * "no execution WHAT"; clears res. */
static swf_error_t *execution_row_take(PGresult *res, swf_history_execution_t *out,
                                       const char *what)
{
    swf_error_t *err = NULL;
    if (PQntuples(res) == 1)
        execution_from_row(res, 0, out);
    else
        err = swf_error_new(SWF_E_NOTFOUND, NULL, "no execution %s", what);
    swf_history__pg_clear(res);
    return err;
}

swf_error_t *swf_history_pg_execution_describe(swf_history_store_t *store, const char *execution_id,
                                               swf_history_execution_t *out)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    memset(out, 0, sizeof(*out));
    PGresult *res;
    const char *params[1] = {execution_id};
    swf_error_t *err = swf_history__pg_prepare(pg);
    if (err == NULL)
        err = swf_history__pg_prepared(pg, "swf_describe", 1, params, &res);
    return err != NULL ? err : execution_row_take(res, out, execution_id);
}

swf_error_t *swf_history_pg_execution_of_workflow(swf_history_store_t *store,
                                                  const char *workflow_id,
                                                  swf_history_execution_t *out)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    memset(out, 0, sizeof(*out));
    swf_error_t *err = swf_history__pg_ready(pg);
    if (err != NULL)
        return err;
    const char *params[1] = {workflow_id};
    PGresult *res;
    err = swf_history__pg_query(pg->conn,
                                "SELECT " EXECUTION_COLUMNS " FROM executions x"
                                " WHERE x.workflow_id = $1"
                                " ORDER BY x.status = 'open' DESC, x.start_time DESC,"
                                " x.execution_id DESC LIMIT 1",
                                1, params, &res);
    if (err != NULL)
        return err;
    char what[300];
    snprintf(what, sizeof(what), "of workflow id %.250s", workflow_id);
    return execution_row_take(res, out, what);
}

static bool status_valid(const char *s)
{
    static const char *const names[] = {"open",      "closed",   "succeeded", "failed",
                                        "timed_out", "canceled", "terminated"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(s, names[i]) == 0)
            return true;
    }
    return false;
}

swf_error_t *swf_history_pg_executions_list(swf_history_store_t *store,
                                            const swf_history_filter_t *filter,
                                            swf_history_execution_t **items, size_t *count)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    *items = NULL;
    *count = 0;
    swf_error_t *err = swf_history__pg_ready(pg);
    if (err != NULL)
        return err;
    swf_history_filter_t none = {0};
    if (filter == NULL)
        filter = &none;
    if (filter->status != NULL && !status_valid(filter->status))
        return swf_error_new(SWF_E_INPUT, NULL,
                             "unknown status \"%s\" (open, closed, succeeded, failed, timed_out, "
                             "canceled, terminated)",
                             filter->status);
    char after[32], before[32], limit[32];
    snprintf(after, sizeof(after), "%lld", (long long)filter->started_after_ms);
    snprintf(before, sizeof(before), "%lld", (long long)filter->started_before_ms);
    snprintf(limit, sizeof(limit), "%zu", filter->limit ? filter->limit : 100);
    const char *params[5] = {filter->status, filter->state_machine,
                             filter->started_after_ms ? after : NULL,
                             filter->started_before_ms ? before : NULL, limit};
    PGresult *res;
    err = swf_history__pg_query(
        pg->conn,
        "SELECT " EXECUTION_COLUMNS " FROM executions x"
        " WHERE ($1::text IS NULL OR status = $1 OR ($1 = 'closed' AND status <> 'open'))"
        "   AND ($2::text IS NULL OR state_machine = $2)"
        "   AND ($3::bigint IS NULL OR start_time >= timestamptz 'epoch' + $3 * interval '1 ms')"
        "   AND ($4::bigint IS NULL OR start_time < timestamptz 'epoch' + $4 * interval '1 ms')"
        " ORDER BY start_time DESC, execution_id LIMIT $5",
        5, params, &res);
    if (err != NULL)
        return err;
    int rows = PQntuples(res);
    if (rows > 0) {
        *items = calloc((size_t)rows, sizeof(**items));
        if (*items == NULL)
            abort();
        for (int r = 0; r < rows; r++)
            execution_from_row(res, r, &(*items)[r]);
        *count = (size_t)rows;
    }
    swf_history__pg_clear(res);
    return NULL;
}

static void pg_free(swf_history_store_t *store)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    PQfinish(pg->conn);
    free(pg);
}

static const swf_history_store_ops_t pg_ops = {pg_append, pg_load, pg_free};
