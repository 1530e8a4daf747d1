/*
 * migrations.c - the schema of the PostgreSQL history, as numbered steps.
 *
 * Each migration is a C string of SQL, applied once, in order; the versions
 * applied are rows of schema_migrations. The SQL lives here rather than in
 * .sql files so that the binary is the whole product: no path to find at
 * run time. A migration is never edited after it ships; a change is a new
 * one appended to the list, so an older database is upgraded in place.
 *
 * swf_history_pg_migrate runs every pending step in a single transaction
 * holding a transaction-scoped advisory lock, so two processes starting at
 * once do not both migrate, and a failed step leaves the database at its old
 * version.
 *
 * The events table is append-only by trigger: UPDATE, DELETE and TRUNCATE
 * raise an exception. (Revoked privileges would not stop the table's owner.)
 * So the owner migrates and the processes run as another role:
 * swf_history_pg_grant gives that role what the runtime's statements need
 * (history/pg*.c, history/service.c) and nothing that alters events: it may
 * read and insert events, and it cannot update, delete, truncate, alter or
 * drop them or their triggers, which only the owner may. Nor can it store a
 * hash of the chain (migration 7) other than the one the trigger computes.
 */
#include "history/pg_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * Migration 7: the hash chain (history/CHAIN.md). Every event gets hash =
 * sha256(the previous event's hash || its canonical form), computed by a
 * BEFORE INSERT trigger for every writer; existing histories get theirs in
 * one pass of a running aggregate (a fold of the chain per execution), the
 * append-only trigger held off for that UPDATE only. The functions name
 * their schema and pg_catalog's outright, so a session's search_path (a
 * temporary table named events, say) cannot change what they read. The
 * trigger refuses a hash given that the chain does not give, and an event
 * with no event before it to chain to.
 */
/* The canonical form in SQL, two ways: in a UTF8 database (the usual
 * case, and the cheaper) a text's octet_length is already its UTF-8 length
 * and the message is converted once; elsewhere each field is converted to
 * UTF-8 to be measured (ten conversions an event, a third of the hash's
 * cost). The migration picks one; both give the same bytes. */
/* clang-format off */
#define CHAIN_TIME_SQL "(EXTRACT(epoch FROM tm) * 1000000)::bigint::text"
#define CHAIN_MESSAGE_SQL(NS)                                                                      \
    "pg_catalog.convert_to("                                                                       \
    NS("x") " || " NS("i::text") " || " NS("t") " || " NS(CHAIN_TIME_SQL) " || " NS("a::text")     \
    ", 'UTF8')"
#define CHAIN_NS_UTF8(e) "pg_catalog.octet_length(" e ")::text || ':' || " e " || ','"
#define CHAIN_MESSAGE_UTF8_SQL CHAIN_MESSAGE_SQL(CHAIN_NS_UTF8)
#define CHAIN_MESSAGE_ANY_SQL CHAIN_MESSAGE_SQL(SWF_HISTORY__NS)
/* clang-format on */
static const char migration_chain[] =
    "ALTER TABLE events ADD COLUMN hash bytea;"
    "DO $do$ DECLARE m text; BEGIN"
    " IF pg_catalog.getdatabaseencoding() = 'UTF8' THEN"
    "  m := $m$" CHAIN_MESSAGE_UTF8_SQL "$m$;"
    " ELSE"
    "  m := $m$" CHAIN_MESSAGE_ANY_SQL "$m$;"
    " END IF;"
    " EXECUTE pg_catalog.replace(pg_catalog.replace($f$"
    "CREATE FUNCTION @S.swf_event_message(x text, i bigint, t text, tm timestamptz, a jsonb)"
    " RETURNS bytea LANGUAGE sql STABLE PARALLEL SAFE AS $b$ SELECT @M $b$;"
    "CREATE FUNCTION @S.swf_event_hash(prev bytea, x text, i bigint, t text, tm timestamptz,"
    "  a jsonb) RETURNS bytea LANGUAGE sql STABLE PARALLEL SAFE AS"
    " $b$ SELECT pg_catalog.sha256(prev || @S.swf_event_message(x, i, t, tm, a)) $b$;"
    "CREATE FUNCTION @S.swf_events_chain() RETURNS trigger LANGUAGE plpgsql AS $b$"
    " DECLARE prev bytea; h bytea;"
    " BEGIN"
    "  IF NEW.event_id = 1 THEN prev := " SWF_HISTORY__CHAIN_START ";"
    "  ELSE"
    "   SELECT e.hash INTO prev FROM @S.events e"
    "    WHERE e.execution_id = NEW.execution_id AND e.event_id = NEW.event_id - 1;"
    "   IF prev IS NULL THEN"
    "    RAISE EXCEPTION 'execution %: event % has no event % to chain to', NEW.execution_id,"
    "     NEW.event_id, NEW.event_id - 1 USING ERRCODE = 'SWF02',"
    "     HINT = 'event ids are dense from 1';"
    "   END IF;"
    "  END IF;"
    "  h := @S.swf_event_hash(prev, NEW.execution_id, NEW.event_id, NEW.event_type,"
    "   NEW.event_time, NEW.attributes);"
    "  IF NEW.hash IS NOT NULL AND NEW.hash <> h THEN"
    "   RAISE EXCEPTION 'execution %: event %: the hash given is not the chain''s',"
    "    NEW.execution_id, NEW.event_id USING ERRCODE = 'SWF02',"
    "    HINT = 'leave the hash out: the database computes it';"
    "  END IF;"
    "  NEW.hash := h;"
    "  RETURN NEW;"
    " END $b$;"
    "CREATE FUNCTION @S.swf_chain_step(s bytea, m bytea) RETURNS bytea LANGUAGE sql"
    " IMMUTABLE STRICT AS $b$ SELECT pg_catalog.sha256(s || m) $b$;"
    "CREATE AGGREGATE @S.swf_chain(bytea) (SFUNC = @S.swf_chain_step, STYPE = bytea,"
    " INITCOND = '" SWF_HISTORY__CHAIN_START_HEX "');"
    "$f$, '@M', m), '@S', pg_catalog.quote_ident(pg_catalog.current_schema())); END $do$;"
    "ALTER TABLE events DISABLE TRIGGER events_append_only;"
    "UPDATE events e SET hash = c.hash FROM ("
    "  SELECT execution_id, event_id, swf_chain(swf_event_message(execution_id, event_id,"
    "    event_type, event_time, attributes)) OVER (PARTITION BY execution_id ORDER BY event_id)"
    "    AS hash FROM events) c"
    " WHERE c.execution_id = e.execution_id AND c.event_id = e.event_id;"
    "ALTER TABLE events ENABLE TRIGGER events_append_only;"
    "DROP AGGREGATE swf_chain(bytea);"
    "DROP FUNCTION swf_chain_step(bytea, bytea);"
    "ALTER TABLE events ALTER COLUMN hash SET NOT NULL,"
    "  ADD CONSTRAINT events_hash_length CHECK (octet_length(hash) = 32);"
    "CREATE TRIGGER events_chain BEFORE INSERT ON events"
    "  FOR EACH ROW EXECUTE FUNCTION swf_events_chain();";

/*
 * Migration 10: sw_instances, the open Serverless Workflow instances by
 * state machine, correlation value and the triggers their waiting states
 * record (decider/sw/README.md), which `swf send-event` looks events up in.
 * An AFTER INSERT trigger on events keeps it, so it changes in the
 * transaction of the append that changes it, whichever statement appends:
 * a WorkflowExecutionStarted of a Serverless Workflow document adds the
 * row (waits unknown), a DecisionTaskCompleted carrying "swRoute" (the
 * decider's, decider/decision.c) sets the correlation value and the waits,
 * a cloudevent signal makes the waits unknown again until the next
 * decision, a closing event removes the row. The trigger's function runs
 * as the owner (SECURITY DEFINER, its search_path pinned), so the runtime
 * role only reads the table and a database migrated without granting again
 * keeps appending. Unknown waits (NULL) make an
 * instance a candidate for any event its correlation value allows; the
 * caller then asks its replayed history.
 */
static const char migration_sw_instances[] =
    "CREATE TABLE sw_instances ("
    "  execution_id text PRIMARY KEY,"
    "  state_machine text NOT NULL,"
    "  correlation jsonb,"
    "  waits text[]);"
    "CREATE INDEX sw_instances_route ON sw_instances (state_machine, correlation);"
    "DO $do$ BEGIN EXECUTE pg_catalog.replace($f$"
    "CREATE FUNCTION @S.swf_sw_instances_keep() RETURNS trigger LANGUAGE plpgsql"
    " SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $b$"
    " BEGIN"
    "  IF NEW.event_type = 'WorkflowExecutionStarted' THEN"
    "   INSERT INTO @S.sw_instances (execution_id, state_machine)"
    "    VALUES (NEW.execution_id, coalesce(NEW.attributes#>>'{workflowType,name}', ''))"
    "    ON CONFLICT DO NOTHING;"
    "  ELSIF NEW.event_type = 'DecisionTaskCompleted' THEN"
    "   UPDATE @S.sw_instances SET"
    "    correlation = NULLIF(NEW.attributes#>'{swRoute,correlation}',"
    "     'null'::jsonb),"
    "    waits = ARRAY(SELECT pg_catalog.jsonb_array_elements_text("
    "     NEW.attributes#>'{swRoute,waits}'))"
    "    WHERE execution_id = NEW.execution_id;"
    "  ELSIF NEW.event_type = 'WorkflowExecutionSignaled' THEN"
    "   UPDATE @S.sw_instances SET waits = NULL WHERE execution_id = NEW.execution_id;"
    "  ELSE"
    "   DELETE FROM @S.sw_instances WHERE execution_id = NEW.execution_id;"
    "  END IF;"
    "  RETURN NULL;"
    " END $b$;"
    "$f$, '@S', pg_catalog.quote_ident(pg_catalog.current_schema())); END $do$;"
    "CREATE TRIGGER events_sw_instances AFTER INSERT ON events FOR EACH ROW WHEN ("
    "  (NEW.event_type = 'WorkflowExecutionStarted' AND NEW.attributes->'definition' ? 'states')"
    "  OR (NEW.event_type = 'DecisionTaskCompleted' AND NEW.attributes ? 'swRoute')"
    "  OR (NEW.event_type = 'WorkflowExecutionSignaled'"
    "   AND NEW.attributes->>'signalName' = 'cloudevent')"
    "  OR NEW.event_type IN ('WorkflowExecutionCompleted', 'WorkflowExecutionFailed',"
    "   'WorkflowExecutionTimedOut', 'WorkflowExecutionCanceled', 'WorkflowExecutionTerminated'))"
    "  EXECUTE FUNCTION swf_sw_instances_keep();"
    "INSERT INTO sw_instances " SWF_HISTORY__SW_INSTANCES_FROM_EVENTS ";";

static const char *const migrations[] = {
    /* 1: events, projections, state machines. */
    "CREATE TABLE events ("
    "  execution_id text NOT NULL,"
    "  event_id bigint NOT NULL CHECK (event_id >= 1),"
    "  event_type text NOT NULL,"
    "  event_time timestamptz NOT NULL,"
    "  attributes jsonb NOT NULL,"
    "  CONSTRAINT events_pkey PRIMARY KEY (execution_id, event_id));"
    "CREATE FUNCTION swf_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$"
    " BEGIN"
    "  RAISE EXCEPTION 'the events table is append-only: % is refused', TG_OP"
    "    USING ERRCODE = 'SWF01', HINT = 'histories are never changed; append new events';"
    " END $$;"
    "CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events"
    "  FOR EACH ROW EXECUTE FUNCTION swf_events_append_only();"
    "CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events"
    "  FOR EACH STATEMENT EXECUTE FUNCTION swf_events_append_only();"
    "CREATE TABLE executions ("
    "  execution_id text PRIMARY KEY,"
    "  workflow_id text NOT NULL,"
    "  state_machine text NOT NULL,"
    "  state_machine_version text NOT NULL,"
    "  status text NOT NULL CHECK (status IN ('open', 'succeeded', 'failed', 'timed_out',"
    "    'canceled', 'terminated')),"
    "  start_time timestamptz NOT NULL,"
    "  close_time timestamptz,"
    "  last_event_id bigint NOT NULL);"
    "CREATE UNIQUE INDEX executions_open_workflow_id ON executions (workflow_id)"
    "  WHERE status = 'open';"
    "CREATE TABLE timers ("
    "  execution_id text NOT NULL,"
    "  timer_id text NOT NULL,"
    "  fire_at timestamptz NOT NULL,"
    "  started_event_id bigint NOT NULL,"
    "  PRIMARY KEY (execution_id, timer_id));"
    "CREATE INDEX timers_fire_at ON timers (fire_at);"
    "CREATE TABLE outbox ("
    "  execution_id text NOT NULL,"
    "  event_id bigint NOT NULL,"
    "  topic text NOT NULL,"
    "  payload jsonb NOT NULL,"
    "  created timestamptz NOT NULL DEFAULT now(),"
    "  PRIMARY KEY (execution_id, event_id));"
    "CREATE TABLE state_machines ("
    "  name text NOT NULL,"
    "  version integer NOT NULL CHECK (version >= 1),"
    "  definition jsonb NOT NULL,"
    "  created timestamptz NOT NULL DEFAULT now(),"
    "  PRIMARY KEY (name, version));",

    /* 2: indexes for `swf list` (by status or state machine, newest first). */
    "CREATE INDEX executions_status_start ON executions (status, start_time DESC);"
    "CREATE INDEX executions_state_machine_start ON executions (state_machine, start_time DESC);",

    /* 3: outbox rows name their ActivityTaskScheduled event instead of
     * copying it: the task is built from the event itself (rows written
     * before keep their copy, which is used). */
    "ALTER TABLE outbox ALTER COLUMN payload DROP NOT NULL;",

    /* 4: the activities swf-history watches for a timeout: scheduled with
     * a start-to-close or heartbeat timeout, not closed, in an open
     * execution (it used to find them by reading every open history on
     * each tick). Filled from the events for the executions open now. */
    "CREATE TABLE activity_timeouts ("
    "  execution_id text NOT NULL,"
    "  scheduled_event_id bigint NOT NULL,"
    "  scheduled_time timestamptz NOT NULL,"
    "  start_to_close float8,"
    "  heartbeat float8,"
    "  last_heartbeat timestamptz,"
    "  PRIMARY KEY (execution_id, scheduled_event_id));"
    "INSERT INTO activity_timeouts " SWF_HISTORY__ACTIVITY_TIMEOUTS_FROM_EVENTS ";",

    /* 5: the timers of closed executions go. The append statements of
     * schema 4 and before left them when an execution closed with a timer
     * open (a timeout or a terminate during a Wait), and swf-history
     * posted them again and again. */
    "DELETE FROM timers t USING executions x"
    " WHERE x.execution_id = t.execution_id AND x.status <> 'open';",

    /* 6: finding the executions of a workflow id (swf describe
     * --workflow-id ...), newest first; the unique index covers open ones
     * only. */
    "CREATE INDEX executions_workflow_id_start ON executions (workflow_id, start_time DESC);",

    /* 7: the hash chain, above. */
    migration_chain,

    /* 8: the catalogue of the Step Functions API (api/, history/
     * pg_catalog.c): a state machine's role ARN and type, which swf does
     * not use but AWS's clients send and read back, and the activities
     * (CreateActivity), whose names are task lists. */
    "CREATE TABLE state_machine_settings ("
    "  name text PRIMARY KEY,"
    "  role_arn text NOT NULL,"
    "  type text NOT NULL DEFAULT 'STANDARD');"
    "CREATE TABLE activities ("
    "  name text PRIMARY KEY,"
    "  created timestamptz NOT NULL DEFAULT now());",

    /* 9: the API's tags (TagResource), by resource: "stateMachine:NAME"
     * or "activity:NAME". */
    "CREATE TABLE tags ("
    "  resource text NOT NULL,"
    "  key text NOT NULL,"
    "  value text NOT NULL,"
    "  PRIMARY KEY (resource, key));",

    /* 10: sw_instances, the Serverless Workflow routing index, above. */
    migration_sw_instances,

    /* 11: the API's state machine aliases (CreateStateMachineAlias,
     * history/pg_catalog.c): each routes StartExecution to one or two
     * versions by weight, routing [{"version": N, "weight": W}, ...]; and
     * the version or alias an execution was started through
     * (DescribeExecution's stateMachineVersionArn, stateMachineAliasArn),
     * a row only for those started so. */
    "CREATE TABLE state_machine_aliases ("
    "  machine text NOT NULL,"
    "  name text NOT NULL,"
    "  description text NOT NULL DEFAULT '',"
    "  routing jsonb NOT NULL,"
    "  created timestamptz NOT NULL DEFAULT now(),"
    "  updated timestamptz NOT NULL DEFAULT now(),"
    "  PRIMARY KEY (machine, name));"
    "CREATE TABLE execution_targets ("
    "  execution_id text PRIMARY KEY,"
    "  version integer NOT NULL,"
    "  alias text);",
};

#define MIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))

int swf_history_pg_schema_latest(void)
{
    return MIGRATIONS;
}

/* Migrations run as the role that owns the schema's tables (or one that
 * has its privileges); any other role, such as the runtime role made by
 * `swf db migrate --grant`, gets this error naming the owner, rather than
 * PostgreSQL's "permission denied" from the middle of a migration. On an
 * empty schema the role must be able to create tables in it. */
static swf_error_t *migrate_role_check(PGconn *conn)
{
    PGresult *res = NULL;
    swf_error_t *err = swf_history__pg_query(
        conn,
        "SELECT current_user::text, current_schema(),"
        " (SELECT pg_get_userbyid(c.relowner) FROM pg_class c"
        "   WHERE c.oid = coalesce(to_regclass('events'), to_regclass('schema_migrations'))),"
        " coalesce((SELECT pg_has_role(c.relowner, 'USAGE') FROM pg_class c"
        "   WHERE c.oid = coalesce(to_regclass('events'), to_regclass('schema_migrations'))),"
        "   has_schema_privilege(current_schema(), 'CREATE'))",
        0, NULL, &res);
    if (err != NULL)
        return err;
    if (strcmp(PQgetvalue(res, 0, 3), "t") != 0) {
        const char *user = PQgetvalue(res, 0, 0), *schema = PQgetvalue(res, 0, 1);
        if (PQgetisnull(res, 0, 2))
            err = swf_error_new(SWF_E_DB, NULL,
                                "connected as role \"%s\", which cannot create tables in schema "
                                "\"%s\": migrations must run as the role that is to own swf's "
                                "tables (the runtime role is made by swf db migrate --grant ROLE, "
                                "run as that owner)",
                                user, schema);
        else
            err = swf_error_new(SWF_E_DB, NULL,
                                "connected as role \"%s\", but swf's tables in schema \"%s\" "
                                "belong to role \"%s\": migrations must run as the owner (set "
                                "SWF_DATABASE_URL's user to %s); a runtime role, made by swf db "
                                "migrate --grant ROLE, can read and append events but not migrate",
                                user, schema, PQgetvalue(res, 0, 2), PQgetvalue(res, 0, 2));
    }
    swf_history__pg_clear(res);
    return err;
}

swf_error_t *swf_history_pg_migrate(swf_history_store_t *store, int target, int *from, int *to)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    if (target <= 0 || target > MIGRATIONS)
        target = MIGRATIONS;
    PGresult *res = NULL;
    int version = 0;
    swf_error_t *err = migrate_role_check(pg->conn);
    if (err != NULL) {
        if (to != NULL)
            *to = -1;
        return err;
    }
    err = swf_history__pg_begin(pg->conn);
    if (err != NULL)
        return err;
    err = swf_history__pg_query(pg->conn,
                                "SELECT pg_advisory_xact_lock(" SWF_HISTORY__MIGRATION_LOCK ");"
                                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                                "  version integer PRIMARY KEY,"
                                "  applied_at timestamptz NOT NULL DEFAULT now())",
                                -1, NULL, NULL);
    if (err != NULL)
        goto out;
    err = swf_history__pg_query(pg->conn, "SELECT coalesce(max(version), 0) FROM schema_migrations",
                                0, NULL, &res);
    if (err != NULL)
        goto out;
    version = atoi(PQgetvalue(res, 0, 0));
    swf_history__pg_clear(res);
    if (from != NULL)
        *from = version;
    if (version > MIGRATIONS) {
        err = swf_error_new(SWF_E_DB, NULL,
                            "the database schema is at version %d, newer than this swf (%d)",
                            version, MIGRATIONS);
        goto out;
    }
    for (int v = version + 1; v <= target; v++) {
        err = swf_history__pg_query(pg->conn, migrations[v - 1], -1, NULL, NULL);
        if (err == NULL) {
            char vs[16];
            snprintf(vs, sizeof(vs), "%d", v);
            const char *params[1] = {vs};
            err = swf_history__pg_query(
                pg->conn, "INSERT INTO schema_migrations (version) VALUES ($1)", 1, params, NULL);
        }
        if (err != NULL) {
            swf_error_prefix(err, "migration %d", v);
            goto out;
        }
        version = v;
    }
    err = swf_history__pg_commit(pg->conn);
out:
    if (err != NULL)
        swf_history__pg_rollback(pg->conn);
    if (to != NULL)
        *to = err == NULL ? version : -1;
    return err;
}

/* What the runtime issues, per table: events are read and appended;
 * executions rows are created and updated (FOR NO KEY UPDATE needs UPDATE);
 * timers, outbox and activity_timeouts rows come and go (claimed FOR UPDATE
 * by swf-history); state machines are registered, and deleted by the API
 * (api/), with their settings and the activities. `swf admin
 * rebuild-projections` (DELETE FROM executions, LOCK TABLE events) is the
 * owner's. The advisory lock functions are PUBLIC's by default. */
static const char *const runtime_grants[] = {
    "GRANT SELECT, INSERT ON events TO %s",
    /* DeleteStateMachine (api/) removes a state machine's versions. */
    "GRANT SELECT, INSERT, DELETE ON state_machines TO %s",
    /* Tables of migrations 8 and 9: granted once they exist (a schema may be
     * granted before it is migrated to the latest). */
    "DO $$ BEGIN IF to_regclass('activities') IS NOT NULL THEN"
    " GRANT SELECT, INSERT, UPDATE, DELETE ON state_machine_settings, activities TO %s;"
    " END IF; END $$",
    "DO $$ BEGIN IF to_regclass('tags') IS NOT NULL THEN"
    " GRANT SELECT, INSERT, UPDATE, DELETE ON tags TO %s;"
    " END IF; END $$",
    "DO $$ BEGIN IF to_regclass('state_machine_aliases') IS NOT NULL THEN"
    " GRANT SELECT, INSERT, UPDATE, DELETE ON state_machine_aliases, execution_targets TO %s;"
    " END IF; END $$",
    "GRANT SELECT, INSERT, UPDATE ON executions TO %s",
    "GRANT SELECT, INSERT, UPDATE, DELETE ON timers, outbox, activity_timeouts TO %s",
    /* Read by swf send-event; the trigger of migration 10 writes it as the
     * owner. Schemas behind 10 have no such table. */
    ("DO $g$ BEGIN IF pg_catalog.to_regclass('sw_instances') IS NOT NULL THEN"
     " GRANT SELECT ON sw_instances TO %s; END IF; END $g$"),
    "GRANT SELECT ON schema_migrations TO %s",
};

swf_error_t *swf_history_pg_grant(swf_history_store_t *store, const char *role)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    if (role == NULL || role[0] == '\0')
        return swf_error_new(SWF_E_INPUT, NULL, "--grant: the role is empty");
    PGresult *res = NULL;
    swf_error_t *err = swf_history__pg_query(
        pg->conn, "SELECT current_database(), current_schema(), current_user::text", 0, NULL, &res);
    if (err != NULL)
        return err;
    char *db = PQescapeIdentifier(pg->conn, PQgetvalue(res, 0, 0), strlen(PQgetvalue(res, 0, 0)));
    char *schema =
        PQescapeIdentifier(pg->conn, PQgetvalue(res, 0, 1), strlen(PQgetvalue(res, 0, 1)));
    int self = strcmp(PQgetvalue(res, 0, 2), role) == 0;
    swf_history__pg_clear(res);
    char *r = PQescapeIdentifier(pg->conn, role, strlen(role));
    if (db == NULL || schema == NULL || r == NULL)
        abort();
    if (self)
        err = swf_error_new(SWF_E_INPUT, NULL,
                            "--grant %s: that is the role migrating (the owner); grant a "
                            "runtime role of its own",
                            role);
    if (err == NULL)
        err = swf_history__pg_begin(pg->conn);
    char sql[512];
    if (err == NULL) {
        snprintf(sql, sizeof(sql),
                 "GRANT CONNECT ON DATABASE %s TO %s; GRANT USAGE ON SCHEMA %s TO %s", db, r,
                 schema, r);
        err = swf_history__pg_query(pg->conn, sql, -1, NULL, NULL);
        for (size_t i = 0; err == NULL && i < sizeof(runtime_grants) / sizeof(runtime_grants[0]);
             i++) {
            snprintf(sql, sizeof(sql), runtime_grants[i], r);
            err = swf_history__pg_query(pg->conn, sql, -1, NULL, NULL);
        }
        if (err == NULL)
            err = swf_history__pg_commit(pg->conn);
        else
            swf_history__pg_rollback(pg->conn);
        if (err != NULL)
            swf_error_prefix(err, "granting %s the runtime's privileges", role);
    }
    PQfreemem(db);
    PQfreemem(schema);
    PQfreemem(r);
    return err;
}

swf_error_t *swf_history_pg_schema_version(swf_history_store_t *store, int *version, int *owner)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    PGresult *res = NULL;
    swf_error_t *err =
        swf_history__pg_query(pg->conn,
                              "SELECT to_regclass('schema_migrations') IS NOT NULL,"
                              " coalesce((SELECT pg_has_role(c.relowner, 'USAGE') FROM pg_class c"
                              "  WHERE c.oid = to_regclass('events')), true)",
                              0, NULL, &res);
    if (err != NULL)
        return err;
    int exists = strcmp(PQgetvalue(res, 0, 0), "t") == 0;
    *owner = strcmp(PQgetvalue(res, 0, 1), "t") == 0;
    swf_history__pg_clear(res);
    *version = 0;
    if (!exists)
        return NULL;
    err = swf_history__pg_query(pg->conn, "SELECT coalesce(max(version), 0) FROM schema_migrations",
                                0, NULL, &res);
    if (err != NULL)
        return err;
    *version = atoi(PQgetvalue(res, 0, 0));
    swf_history__pg_clear(res);
    return NULL;
}
