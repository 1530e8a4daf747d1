/*
 * pg_admin.c - state machines, starting executions, import, rebuild.
 *
 * These sit on top of the append in pg.c rather than beside it: starting an
 * execution is an ordinary first append (WorkflowExecutionStarted plus
 * DecisionTaskScheduled), so the workflow-id rule is enforced by the same
 * statement and the same partial unique index as any other append; import
 * is a chain of appends inside one transaction, so a history is imported
 * whole or not at all; given the hashes of an export, it compares them with
 * the ones the database computed, in that transaction, before committing.
 *
 * The rebuild recomputes executions, timers and activity_timeouts with the
 * same rules the append statement applies incrementally (status of the
 * last closing event; a timer pending when its last event is TimerStarted;
 * an activity with a timeout open until its close), and writes
 * last_event_id exact, which appends leave behind. The outbox is left
 * alone: rows are deleted when published, so the events cannot say which
 * ActivityTaskScheduled events still await publication, and recreating them
 * would publish tasks twice.
 */
#include "history/pg_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/started.h"

#define IMPORT_CHUNK 5000

static swf_error_t *name_check(const char *what, const char *name)
{
    if (name == NULL || name[0] == '\0')
        return swf_error_new(SWF_E_INPUT, NULL, "a %s must not be empty", what);
    if (strlen(name) > SWF_LIMIT_NAME_BYTES)
        return swf_error_new(SWF_E_LIMIT, NULL, "a %s is longer than %d bytes", what,
                             SWF_LIMIT_NAME_BYTES);
    return NULL;
}

swf_error_t *swf_history_pg_state_machine_register(swf_history_store_t *store, const char *name,
                                                   json_object *definition, int *version)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    swf_error_t *err = name_check("state machine name", name);
    if (err != NULL)
        return err;
    if (!json_object_is_type(definition, json_type_object))
        return swf_error_new(SWF_E_INPUT, NULL, "a definition must be a JSON object");
    const char *text = swf_json_str(definition);
    if (strlen(text) > SWF_LIMIT_DEFINITION_BYTES)
        return swf_error_new(SWF_E_LIMIT, NULL, "the definition is larger than %u bytes",
                             SWF_LIMIT_DEFINITION_BYTES);
    err = swf_history__pg_ready(pg);
    if (err == NULL)
        err = swf_history__pg_begin(pg->conn);
    if (err != NULL)
        return err;
    PGresult *res = NULL;
    const char *params[2] = {name, text};
    /* The advisory lock serialises registrations of one name, so versions
     * are dense without a retry loop. */
    err = swf_history__pg_query(pg->conn, "SELECT pg_advisory_xact_lock(hashtext($1))", 1, params,
                                NULL);
    if (err == NULL)
        err = swf_history__pg_query(
            pg->conn,
            "INSERT INTO state_machines (name, version, definition)"
            " SELECT $1, coalesce(max(version), 0) + 1, $2::jsonb FROM state_machines"
            " WHERE name = $1 RETURNING version",
            2, params, &res);
    if (err == NULL) {
        if (version != NULL)
            *version = atoi(PQgetvalue(res, 0, 0));
        swf_history__pg_clear(res);
        err = swf_history__pg_commit(pg->conn);
    }
    if (err != NULL)
        swf_history__pg_rollback(pg->conn);
    return err;
}

swf_error_t *swf_history_pg_state_machine_get(swf_history_store_t *store, const char *name,
                                              int version, json_object **definition,
                                              int *version_out)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    *definition = NULL;
    char vs[16];
    snprintf(vs, sizeof(vs), "%d", version);
    const char *params[2] = {name, version > 0 ? vs : NULL};
    PGresult *res;
    swf_error_t *err = swf_history__pg_ready(pg);
    if (err != NULL)
        return err;
    err = swf_history__pg_query(
        pg->conn,
        "SELECT version, definition FROM state_machines WHERE name = $1"
        " AND ($2::integer IS NULL OR version = $2) ORDER BY version DESC LIMIT 1",
        2, params, &res);
    if (err != NULL)
        return err;
    if (PQntuples(res) == 0) {
        err = version > 0 ? swf_error_new(SWF_E_NOTFOUND, NULL,
                                          "no state machine \"%s\" version %d", name, version)
                          : swf_error_new(SWF_E_NOTFOUND, NULL, "no state machine \"%s\"", name);
    } else {
        if (version_out != NULL)
            *version_out = atoi(PQgetvalue(res, 0, 0));
        err = swf_json_parse_stored(PQgetvalue(res, 0, 1), (size_t)PQgetlength(res, 0, 1),
                                    SWF_LIMIT_JSON_BYTES, definition);
    }
    swf_history__pg_clear(res);
    return err;
}

size_t swf_history_pg_start_input_limit(void)
{
    const char *env = getenv("SWF_LIMIT_START_INPUT_BYTES");
    if (env != NULL && env[0] != '\0') {
        char *end;
        unsigned long long v = strtoull(env, &end, 10);
        if (*end == '\0' && v > 0)
            return (size_t)v;
    }
    return SWF_HISTORY_START_INPUT_BYTES;
}

/* The open execution of a workflow id, or NULL (caller frees). */
static swf_error_t *running_of(swf_history__pg_t *pg, const char *workflow_id, char **running)
{
    *running = NULL;
    PGresult *res;
    const char *params[1] = {workflow_id};
    swf_error_t *err = swf_history__pg_query(
        pg->conn, "SELECT execution_id FROM executions WHERE workflow_id = $1 AND status = 'open'",
        1, params, &res);
    if (err != NULL)
        return err;
    if (PQntuples(res) == 1)
        *running = swf_history__strdup(PQgetvalue(res, 0, 0));
    swf_history__pg_clear(res);
    return NULL;
}

swf_error_t *swf_history_pg_start_check(const swf_history_start_t *start)
{
    const char *workflow_id = start->workflow_id ? start->workflow_id : start->execution_id;
    swf_error_t *err = name_check("execution id", start->execution_id);
    if (err == NULL)
        err = name_check("workflow id", workflow_id);
    if (err == NULL)
        err = name_check("state machine name", start->state_machine);
    if (err != NULL)
        return err;
    size_t limit = swf_history_pg_start_input_limit();
    size_t input_len = strlen(swf_json_str(start->input));
    if (input_len > limit)
        return swf_error_new(SWF_E_LIMIT, NULL,
                             "the input is %zu bytes, more than the limit of %zu "
                             "(SWF_LIMIT_START_INPUT_BYTES)",
                             input_len, limit);
    return NULL;
}

/* The attributes of a start's WorkflowExecutionStarted (a new object), its
 * definition `definition` (borrowed) at `version`. */
static swf_error_t *started_attrs(const swf_history_start_t *start, json_object *definition,
                                  int version, json_object **out)
{
    *out = NULL;
    const char *workflow_id = start->workflow_id ? start->workflow_id : start->execution_id;
    json_object *attrs = json_object_new_object();
    json_object_object_add(attrs, "executionId", json_object_new_string(start->execution_id));
    json_object_object_add(attrs, "workflowId", json_object_new_string(workflow_id));
    json_object *type = json_object_new_object();
    char vs[16];
    snprintf(vs, sizeof(vs), "%d", version);
    json_object_object_add(type, "name", json_object_new_string(start->state_machine));
    json_object_object_add(type, "version", json_object_new_string(vs));
    json_object_object_add(attrs, "workflowType", type);
    json_object *timeout;
    if (swf_json_get(definition, "TimeoutSeconds", &timeout) && swf_json_is_number(timeout))
        json_object_object_add(attrs, "executionStartToCloseTimeout", swf_json_ref(timeout));
    json_object_object_add(attrs, "definition", swf_json_ref(definition));
    json_object_object_add(attrs, "input", swf_json_ref(start->input));
    if (start->task_list_prefix != NULL && start->task_list_prefix[0] != '\0')
        json_object_object_add(attrs, "taskListPrefix",
                               json_object_new_string(start->task_list_prefix));
    if (start->cloud_events != NULL) /* Serverless Workflow: swf run --dev's events */
        json_object_object_add(attrs, "cloudEvents", swf_json_ref(start->cloud_events));
    if (start->start_event != NULL) /* Serverless Workflow: started by this event */
        json_object_object_add(attrs, "startEvent", swf_json_ref(start->start_event));
    if (start->parent_id != NULL) /* a nested execution */
        swf_started_parent_record(attrs, start->parent_id, start->parent_event_id,
                                  start->nested_depth);
    /* The deployment's settings (task list map, state data limit), recorded
     * so that the decider and a replay use them (protocol/started.h). */
    swf_error_t *err = swf_started_settings_record(attrs);
    if (err != NULL) {
        json_object_put(attrs);
        return err;
    }
    *out = attrs;
    return NULL;
}

/* A start that lost to an open execution of its workflow id: err (taken)
 * becomes the sentence `swf start` prints, and *running_id (may be NULL)
 * that execution's id. Any other error is returned as it is. */
static swf_error_t *conflict_explain(swf_history__pg_t *pg, const char *workflow_id,
                                     swf_error_t *err, char **running_id)
{
    if (err == NULL || swf_error_code(err) != SWF_E_CONFLICT)
        return err;
    char *running = NULL;
    swf_error_t *err2 = running_of(pg, workflow_id, &running);
    if (err2 != NULL) {
        swf_error_free(err);
        return err2;
    }
    if (running == NULL)
        return err;
    swf_error_free(err);
    err = swf_error_new(SWF_E_CONFLICT, NULL,
                        "workflow id \"%s\" is already running as execution %s; "
                        "no new execution was started",
                        workflow_id, running);
    if (running_id != NULL)
        *running_id = running;
    else
        free(running);
    return err;
}

/* What a batch of starts keeps per start until its append is done. */
typedef struct start_slot {
    json_object *attrs; /* WorkflowExecutionStarted's, NULL: not appended */
    swf_event_t events[2];
} start_slot_t;

swf_error_t *swf_history_pg_executions_start(swf_history_store_t *store,
                                             const swf_history_start_t *starts, size_t n,
                                             char **running_ids, swf_error_t **errors)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    for (size_t i = 0; i < n; i++) {
        errors[i] = NULL;
        if (running_ids != NULL)
            running_ids[i] = NULL;
    }
    start_slot_t *slots = calloc(n > 0 ? n : 1, sizeof(*slots));
    swf_history_append_t *appends = calloc(n > 0 ? n : 1, sizeof(*appends));
    size_t *which = calloc(n > 0 ? n : 1, sizeof(*which));
    swf_error_t **errs = calloc(n > 0 ? n : 1, sizeof(*errs));
    if (slots == NULL || appends == NULL || which == NULL || errs == NULL)
        abort();
    /* The definition is read once for a run of starts of the same state
     * machine and version (swf start --inputs: all of them). */
    json_object *definition = NULL;
    const char *def_name = NULL;
    int def_asked = 0, def_version = 0;
    swf_error_t *def_err = NULL, *err = NULL;
    size_t m = 0;
    for (size_t i = 0; i < n && err == NULL; i++) {
        const swf_history_start_t *st = &starts[i];
        errors[i] = swf_history_pg_start_check(st);
        if (errors[i] != NULL)
            continue;
        if (def_name == NULL || strcmp(def_name, st->state_machine) != 0 ||
            def_asked != st->version) {
            json_object_put(definition);
            definition = NULL;
            swf_error_free(def_err);
            def_name = st->state_machine;
            def_asked = st->version;
            def_err = swf_history_pg_state_machine_get(store, st->state_machine, st->version,
                                                       &definition, &def_version);
            if (def_err != NULL && swf_error_code(def_err) != SWF_E_NOTFOUND) {
                err = def_err; /* the database: the whole batch fails */
                def_err = NULL;
                break;
            }
        }
        if (def_err != NULL) {
            errors[i] =
                swf_error_new(swf_error_code(def_err), NULL, "%s", swf_error_message(def_err));
            continue;
        }
        errors[i] = started_attrs(st, definition, def_version, &slots[i].attrs);
        if (errors[i] != NULL)
            continue;
        slots[i].events[0] =
            (swf_event_t){1, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, st->time_ms, slots[i].attrs};
        slots[i].events[1] = (swf_event_t){2, SWF_EVENT_DECISION_TASK_SCHEDULED, st->time_ms,
                                           json_object_new_object()};
        appends[m] = (swf_history_append_t){st->execution_id, 1, slots[i].events, 2};
        which[m++] = i;
    }
    json_object_put(definition);
    swf_error_free(def_err);
    if (err == NULL && m > 0)
        err = swf_history_pg_batch_append(store, appends, m, errs);
    for (size_t k = 0; k < m; k++) {
        size_t i = which[k];
        const swf_history_start_t *st = &starts[i];
        if (err == NULL)
            errors[i] = conflict_explain(pg, st->workflow_id ? st->workflow_id : st->execution_id,
                                         errs[k], running_ids != NULL ? &running_ids[i] : NULL);
    }
    for (size_t i = 0; i < n; i++) {
        json_object_put(slots[i].events[0].attrs);
        json_object_put(slots[i].events[1].attrs);
        if (err != NULL) {
            swf_error_free(errors[i]);
            errors[i] = NULL;
        }
    }
    free(slots);
    free(appends);
    free(which);
    free(errs);
    return err;
}

swf_error_t *swf_history_pg_execution_start(swf_history_store_t *store,
                                            const swf_history_start_t *start, char **running_id)
{
    swf_error_t *one = NULL;
    swf_error_t *err = swf_history_pg_executions_start(store, start, 1, running_id, &one);
    return err != NULL ? err : one;
}

swf_error_t *swf_history_pg_import(swf_history_store_t *store, const swf_event_list_t *events,
                                   char **execution_id)
{
    return swf_history_pg_import_chained(store, events, NULL, execution_id);
}

swf_error_t *swf_history_pg_import_chained(swf_history_store_t *store,
                                           const swf_event_list_t *events,
                                           const swf_event_hash_t *hashes, char **execution_id)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    if (execution_id != NULL)
        *execution_id = NULL;
    if (events->count == 0 || events->items[0].type != SWF_EVENT_WORKFLOW_EXECUTION_STARTED)
        return swf_error_new(SWF_E_INPUT, NULL,
                             "a history must start with WorkflowExecutionStarted");
    const char *id = swf_json_get_string(events->items[0].attrs, "executionId");
    if (id == NULL)
        return swf_error_new(SWF_E_INPUT, NULL,
                             "WorkflowExecutionStarted has no executionId to import under");
    for (size_t i = 0; i < events->count; i++) {
        if (events->items[i].id != (int64_t)i + 1)
            return swf_error_new(SWF_E_INPUT, NULL, "event %zu has id %lld: ids must be dense",
                                 i + 1, (long long)events->items[i].id);
    }
    swf_error_t *err = swf_history__pg_ready(pg);
    if (err == NULL)
        err = swf_history__pg_begin(pg->conn);
    if (err != NULL)
        return err;
    for (size_t at = 0; at < events->count && err == NULL; at += IMPORT_CHUNK) {
        size_t n = events->count - at < IMPORT_CHUNK ? events->count - at : IMPORT_CHUNK;
        err = swf_history_append(store, id, (int64_t)at + 1, events->items + at, n);
    }
    if (err == NULL) {
        /* Plain appends leave executions.last_event_id behind (pg.c,
         * append_one_sql); an imported execution starts exact. */
        char last[32];
        snprintf(last, sizeof(last), "%zu", events->count);
        const char *params[2] = {id, last};
        err = swf_history__pg_query(
            pg->conn, "UPDATE executions SET last_event_id = $2 WHERE execution_id = $1", 2, params,
            NULL);
    }
    if (err == NULL && hashes != NULL)
        err = swf_history__chain_compare(pg, id, events, hashes);
    if (err == NULL)
        err = swf_history__pg_commit(pg->conn);
    if (err != NULL) {
        swf_history__pg_rollback(pg->conn);
        swf_error_prefix(err, "import refused, nothing written");
        return err;
    }
    if (execution_id != NULL)
        *execution_id = swf_history__strdup(id);
    return NULL;
}

static const char rebuild_sql[] =
    "LOCK TABLE events IN SHARE MODE;"
    "LOCK TABLE executions, timers, activity_timeouts, sw_instances IN EXCLUSIVE MODE;"
    "DELETE FROM timers;"
    "DELETE FROM activity_timeouts;"
    "DELETE FROM sw_instances;"
    "DELETE FROM executions;"
    "INSERT INTO executions (execution_id, workflow_id, state_machine, state_machine_version,"
    "  status, start_time, close_time, last_event_id)"
    " SELECT s.execution_id, coalesce(s.attributes->>'workflowId', s.execution_id),"
    "  coalesce(s.attributes#>>'{workflowType,name}', ''),"
    "  coalesce(s.attributes#>>'{workflowType,version}', ''),"
    "  coalesce(c.status, 'open'), s.event_time,"
    "  CASE WHEN c.status <> 'open' THEN c.event_time END, m.last_id"
    " FROM events s"
    " JOIN (SELECT execution_id, max(event_id) AS last_id FROM events GROUP BY execution_id) m"
    "  ON m.execution_id = s.execution_id"
    " LEFT JOIN (SELECT DISTINCT ON (execution_id) execution_id, event_time, CASE event_type"
    "    WHEN 'WorkflowExecutionCompleted' THEN 'succeeded'"
    "    WHEN 'WorkflowExecutionFailed' THEN 'failed'"
    "    WHEN 'WorkflowExecutionTimedOut' THEN 'timed_out'"
    "    WHEN 'WorkflowExecutionCanceled' THEN 'canceled'"
    "    WHEN 'WorkflowExecutionRedriven' THEN 'open'"
    "    ELSE 'terminated' END AS status"
    "  FROM events WHERE event_type IN ('WorkflowExecutionCompleted', 'WorkflowExecutionFailed',"
    "   'WorkflowExecutionTimedOut', 'WorkflowExecutionCanceled', 'WorkflowExecutionTerminated',"
    "   'WorkflowExecutionRedriven')"
    "  ORDER BY execution_id, event_id DESC) c ON c.execution_id = s.execution_id"
    " WHERE s.event_id = 1;"
    "INSERT INTO timers (execution_id, timer_id, fire_at, started_event_id)"
    " SELECT execution_id, timer_id, fire_at, event_id FROM ("
    "  SELECT DISTINCT ON (execution_id, attributes->>'timerId') execution_id,"
    "   attributes->>'timerId' AS timer_id, event_type, event_id,"
    "   event_time + coalesce((attributes->>'startToFireTimeout')::float8, 0)"
    "    * interval '1 second' AS fire_at"
    "  FROM events WHERE event_type IN ('TimerStarted', 'TimerFired', 'TimerCanceled')"
    "  ORDER BY execution_id, attributes->>'timerId', event_id DESC) l"
    " WHERE event_type = 'TimerStarted'"
    "  AND execution_id IN (SELECT execution_id FROM executions WHERE status = 'open');"
    "INSERT INTO activity_timeouts " SWF_HISTORY__ACTIVITY_TIMEOUTS_FROM_EVENTS_AND_STARTS ";"
    "INSERT INTO sw_instances " SWF_HISTORY__SW_INSTANCES_FROM_EVENTS;

swf_error_t *swf_history_pg_projections_rebuild(swf_history_store_t *store, size_t *executions,
                                                size_t *timers)
{
    swf_history__pg_t *pg = swf_history__pg(store);
    swf_error_t *err = swf_history__pg_ready(pg);
    if (err == NULL)
        err = swf_history__pg_begin(pg->conn);
    if (err != NULL)
        return err;
    PGresult *res = NULL;
    err = swf_history__pg_query(pg->conn, rebuild_sql, -1, NULL, NULL);
    if (err == NULL)
        err = swf_history__pg_query(
            pg->conn, "SELECT (SELECT count(*) FROM executions), (SELECT count(*) FROM timers)", 0,
            NULL, &res);
    if (err == NULL) {
        if (executions != NULL)
            *executions = (size_t)atoll(PQgetvalue(res, 0, 0));
        if (timers != NULL)
            *timers = (size_t)atoll(PQgetvalue(res, 0, 1));
        swf_history__pg_clear(res);
        err = swf_history__pg_commit(pg->conn);
    }
    if (err != NULL)
        swf_history__pg_rollback(pg->conn);
    return err;
}
