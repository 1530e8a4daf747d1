/*
 * test_pg_admin.c - proves history/pg_admin.c: state machine registration,
 * starting executions under the workflow-id rule and the input limit,
 * import, and that rebuilding the projections from the events reproduces
 * the live ones after a mixed workload.
 */
#include "test_pg_fixture.h"

#include "protocol/json.h"

#define T0 1763719200000LL

static json_object *parse(const char *text)
{
    json_object *v = NULL;
    swf_error_t *err = swf_json_parse(text, strlen(text), 1u << 30, &v);
    cr_assert(err == NULL, "%s", swf_error_message(err));
    return v;
}

static void ok(swf_error_t *err)
{
    cr_assert(err == NULL, "%s", err ? swf_error_message(err) : "");
}

static void expect_code(swf_error_t *err, swf_code_t code)
{
    cr_assert(err != NULL, "expected a %s error, got success", swf_code_name(code));
    cr_assert_eq(swf_error_code(err), code, "expected %s, got %s: %s", swf_code_name(code),
                 swf_code_name(swf_error_code(err)), swf_error_message(err));
    swf_error_free(err);
}

static long long count_sql(const char *conninfo, const char *sql)
{
    const char *v = fixture_sql(conninfo, sql);
    cr_assert(v != NULL, "%s: %s", sql, fixture_value);
    return atoll(v);
}

static const char definition[] =
    "{\"StartAt\":\"A\",\"TimeoutSeconds\":60,\"States\":{\"A\":{\"Type\":\"Pass\",\"End\":true}}}";

static swf_history_store_t *with_machine(const char *db, const char *name)
{
    swf_history_store_t *s = fixture_store(db);
    json_object *def = parse(definition);
    int version = 0;
    ok(swf_history_pg_state_machine_register(s, name, def, &version));
    cr_assert_eq(version, 1);
    json_object_put(def);
    return s;
}

Test(history_pg_admin, registers_a_new_version_each_time)
{
    const char *db = fixture_db();
    const char *evil = "x'; DROP TABLE events; --";
    swf_history_store_t *s = with_machine(db, evil);
    json_object *def = parse(definition), *got;
    int version;
    ok(swf_history_pg_state_machine_register(s, evil, def, &version));
    cr_assert_eq(version, 2);
    ok(swf_history_pg_state_machine_get(s, evil, 0, &got, &version));
    cr_assert_eq(version, 2);
    cr_assert(swf_json_equal(got, def));
    json_object_put(got);
    ok(swf_history_pg_state_machine_get(s, evil, 1, &got, &version));
    cr_assert_eq(version, 1);
    json_object_put(got);
    expect_code(swf_history_pg_state_machine_get(s, evil, 3, &got, &version), SWF_E_NOTFOUND);
    expect_code(swf_history_pg_state_machine_get(s, "nope", 0, &got, &version), SWF_E_NOTFOUND);
    expect_code(swf_history_pg_state_machine_register(s, "", def, &version), SWF_E_INPUT);
    json_object *arr = json_object_new_array();
    expect_code(swf_history_pg_state_machine_register(s, "arr", arr, &version), SWF_E_INPUT);
    json_object_put(arr);
    json_object_put(def);
    cr_assert_eq(count_sql(db, "SELECT count(*) FROM state_machines"), 2);
    cr_assert_eq(count_sql(db, "SELECT count(*) FROM events"), 0);
    swf_history_store_free(s);
}

Test(history_pg_admin, start_writes_a_self_contained_history)
{
    const char *db = fixture_db();
    swf_history_store_t *s = with_machine(db, "hello");
    json_object *input = parse("{\"order\":42}");
    swf_history_start_t req = {"ex-1", "order-42", "hello", 0,    input, T0,
                               NULL,   NULL,       NULL,    NULL, 0,     0};
    ok(swf_history_pg_execution_start(s, &req, NULL));
    swf_event_list_t out = {0};
    ok(swf_history_load(s, "ex-1", 0, 0, &out));
    cr_assert_eq(out.count, 2);
    cr_assert_eq(out.items[0].type, SWF_EVENT_WORKFLOW_EXECUTION_STARTED);
    cr_assert_eq(out.items[1].type, SWF_EVENT_DECISION_TASK_SCHEDULED);
    json_object *a = out.items[0].attrs, *v;
    cr_assert_str_eq(swf_json_get_string(a, "executionId"), "ex-1");
    cr_assert_str_eq(swf_json_get_string(a, "workflowId"), "order-42");
    cr_assert(swf_json_get(a, "input", &v) && swf_json_equal(v, input));
    json_object *def = parse(definition);
    cr_assert(swf_json_get(a, "definition", &v) && swf_json_equal(v, def));
    json_object_put(def);
    cr_assert(swf_json_get(a, "workflowType", &v));
    cr_assert_str_eq(swf_json_get_string(v, "name"), "hello");
    cr_assert_str_eq(swf_json_get_string(v, "version"), "1");
    cr_assert(swf_json_get(a, "executionStartToCloseTimeout", &v));
    cr_assert_eq(json_object_get_int(v), 60);
    swf_event_list_free(&out);
    json_object_put(input);
    swf_history_store_free(s);
}

Test(history_pg_admin, one_open_execution_per_workflow_id)
{
    const char *db = fixture_db();
    swf_history_store_t *s = with_machine(db, "hello");
    swf_history_start_t req = {"ex-1", "w", "hello", 0, NULL, T0, NULL, NULL, NULL, NULL, 0, 0};
    ok(swf_history_pg_execution_start(s, &req, NULL));
    char *running = NULL;
    req.execution_id = "ex-2";
    swf_error_t *err = swf_history_pg_execution_start(s, &req, &running);
    cr_assert(err != NULL);
    cr_assert_eq(swf_error_code(err), SWF_E_CONFLICT);
    cr_assert(strstr(swf_error_message(err), "already running as execution ex-1") != NULL, "%s",
              swf_error_message(err));
    cr_assert_str_eq(running, "ex-1");
    free(running);
    swf_error_free(err);
    cr_assert_eq(count_sql(db, "SELECT count(*) FROM executions"), 1);
    cr_assert_eq(count_sql(db, "SELECT count(*) FROM events"), 2);

    /* Once closed, the workflow id is free again. */
    swf_event_t done = {0, SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED, T0 + 5, parse("{\"result\":1}")};
    ok(swf_history_append(s, "ex-1", 3, &done, 1));
    json_object_put(done.attrs);
    ok(swf_history_pg_execution_start(s, &req, &running));
    cr_assert_null(running);
    cr_assert_eq(count_sql(db, "SELECT count(*) FROM executions WHERE workflow_id = 'w'"), 2);
    swf_history_store_free(s);
}

Test(history_pg_admin, start_refuses_hostile_input_and_writes_nothing)
{
    const char *db = fixture_db();
    swf_history_store_t *s = with_machine(db, "hello");
    size_t big = 10u * 1024u * 1024u;
    char *text = malloc(big + 3);
    cr_assert_not_null(text);
    text[0] = '"';
    memset(text + 1, 'a', big);
    text[big + 1] = '"';
    text[big + 2] = '\0';
    json_object *input = parse(text);
    free(text);
    swf_history_start_t req = {"ex-1", NULL, "hello", 0, input, T0, NULL, NULL, NULL, NULL, 0, 0};
    swf_error_t *err = swf_history_pg_execution_start(s, &req, NULL);
    cr_assert(err != NULL);
    cr_assert_eq(swf_error_code(err), SWF_E_LIMIT);
    cr_assert(strstr(swf_error_message(err), "SWF_LIMIT_START_INPUT_BYTES") != NULL);
    swf_error_free(err);
    /* The limit is configurable. */
    setenv("SWF_LIMIT_START_INPUT_BYTES", "20000000", 1);
    ok(swf_history_pg_execution_start(s, &req, NULL));
    unsetenv("SWF_LIMIT_START_INPUT_BYTES");
    json_object_put(input);

    req = (swf_history_start_t){"ex-2", NULL, "nope", 0, NULL, T0, NULL, NULL, NULL, NULL, 0, 0};
    expect_code(swf_history_pg_execution_start(s, &req, NULL), SWF_E_NOTFOUND);
    req = (swf_history_start_t){
        "ex-3", "x'; DROP TABLE executions; --", "hello", 0, NULL, T0, NULL, NULL, NULL, NULL, 0,
        0};
    ok(swf_history_pg_execution_start(s, &req, NULL));
    req = (swf_history_start_t){"", NULL, "hello", 0, NULL, T0, NULL, NULL, NULL, NULL, 0, 0};
    expect_code(swf_history_pg_execution_start(s, &req, NULL), SWF_E_INPUT);
    cr_assert_eq(count_sql(db, "SELECT count(*) FROM executions"), 2);
    swf_history_store_free(s);
}

Test(history_pg_admin, import_is_whole_or_nothing)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    swf_event_list_t h = {0};
    swf_event_list_push(
        &h, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, T0,
        parse("{\"executionId\":\"imp\",\"workflowId\":\"w\","
              "\"workflowType\":{\"name\":\"n\",\"version\":\"3\"},\"input\":null}"));
    for (int i = 0; i < 12000; i++)
        swf_event_list_push(&h, SWF_EVENT_MARKER_RECORDED, T0 + i, parse("{\"markerName\":\"m\"}"));
    char *id = NULL;
    ok(swf_history_pg_import(s, &h, &id));
    cr_assert_str_eq(id, "imp");
    free(id);
    cr_assert_eq(count_sql(db, "SELECT last_event_id FROM executions"), 12001);
    /* Again: refused, nothing changes. */
    expect_code(swf_history_pg_import(s, &h, NULL), SWF_E_CONFLICT);
    /* A bad event in the last chunk rolls back the earlier chunks. */
    json_object_put(h.items[0].attrs);
    h.items[0].attrs = parse("{\"executionId\":\"imp2\",\"workflowId\":\"w2\"}");
    json_object_put(h.items[11999].attrs);
    h.items[11999].type = SWF_EVENT_TIMER_STARTED;
    h.items[11999].attrs = parse("{\"timerId\":5}");
    expect_code(swf_history_pg_import(s, &h, NULL), SWF_E_INPUT);
    cr_assert_eq(count_sql(db, "SELECT count(*) FROM events"), 12001);
    cr_assert_eq(count_sql(db, "SELECT count(*) FROM executions"), 1);
    swf_event_list_free(&h);
    swf_history_store_free(s);
}

/* The projections as text, for comparison. */
/* The projections as the store reports them: last_event_id from the events
 * (the column is a lower bound between closing appends; see
 * exact_last_ids for the rebuild's). */
static char *projections(const char *db)
{
    const char *v = fixture_sql(
        db, "SELECT (SELECT coalesce(string_agg(format('%s|%s|%s|%s|%s|%s|%s|%s', execution_id,"
            " workflow_id, state_machine, state_machine_version, status, start_time, close_time,"
            " (SELECT max(v.event_id) FROM events v WHERE v.execution_id = x.execution_id)),"
            " E'\\n' ORDER BY execution_id), '') FROM executions x) || E'\\n--\\n' ||"
            " (SELECT coalesce(string_agg(format('%s|%s|%s|%s', execution_id, timer_id, fire_at,"
            " started_event_id), E'\\n' ORDER BY execution_id, timer_id), '') FROM timers) ||"
            " E'\\n--\\n' || (SELECT coalesce(string_agg(format('%s|%s|%s|%s|%s', execution_id,"
            " scheduled_event_id, scheduled_time, start_to_close, last_heartbeat), E'\\n'"
            " ORDER BY execution_id, scheduled_event_id), '') FROM activity_timeouts)");
    cr_assert(v != NULL, "%s", fixture_value);
    return strdup(v);
}

/* Executions whose last_event_id column differs from their history's. */
static long inexact_last_ids(const char *db)
{
    return count_sql(db, "SELECT count(*) FROM executions x WHERE last_event_id <>"
                         " (SELECT max(v.event_id) FROM events v"
                         " WHERE v.execution_id = x.execution_id)");
}

Test(history_pg_admin, rebuild_reproduces_the_live_projections)
{
    const char *db = fixture_db();
    swf_history_store_t *s = with_machine(db, "hello");
    /* A mixed workload: every closing status, timers started, fired,
     * canceled and restarted, activities, open executions, in single
     * appends and in batches. */
    static const char *closes[] = {"WorkflowExecutionCompleted",
                                   "WorkflowExecutionFailed",
                                   "WorkflowExecutionTimedOut",
                                   "WorkflowExecutionCanceled",
                                   "WorkflowExecutionTerminated",
                                   NULL,
                                   NULL};
    for (int e = 0; e < 7; e++) {
        char id[16], wf[16];
        snprintf(id, sizeof(id), "ex-%d", e);
        snprintf(wf, sizeof(wf), "w-%d", e % 3);
        if (e >= 3) /* reuse workflow ids of closed executions */
            snprintf(wf, sizeof(wf), "w-%d", e);
        swf_history_start_t req = {id, wf, "hello", 0, NULL, T0 + e, NULL, NULL, NULL, NULL, 0, 0};
        ok(swf_history_pg_execution_start(s, &req, NULL));
        swf_event_t evs[5] = {
            {0, SWF_EVENT_TIMER_STARTED, T0 + 10,
             parse("{\"timerId\":\"t1\",\"startToFireTimeout\":30}")},
            {0, SWF_EVENT_TIMER_STARTED, T0 + 10,
             parse("{\"timerId\":\"t2\",\"startToFireTimeout\":0.25}")},
            {0, SWF_EVENT_ACTIVITY_TASK_SCHEDULED, T0 + 10,
             parse("{\"activityId\":\"a\",\"taskList\":{\"name\":\"q\"},"
                   "\"startToCloseTimeout\":60}")},
            {0, SWF_EVENT_TIMER_FIRED, T0 + 20, parse("{\"timerId\":\"t1\"}")},
            {0, SWF_EVENT_TIMER_STARTED, T0 + 30,
             parse("{\"timerId\":\"t1\",\"startToFireTimeout\":5}")},
        };
        ok(swf_history_append(s, id, 3, evs, (size_t)(e % 2 ? 5 : 3)));
        for (int k = 0; k < 5; k++)
            json_object_put(evs[k].attrs);
        swf_event_t more = {0, SWF_EVENT_TIMER_CANCELED, T0 + 40, parse("{\"timerId\":\"t2\"}")};
        ok(swf_history_append(s, id, e % 2 ? 8 : 6, &more, 1));
        json_object_put(more.attrs);
        if (closes[e] == NULL) {
            /* A start a worker reported (activity.started) is a heartbeat. */
            swf_event_t started = {0, SWF_EVENT_ACTIVITY_TASK_STARTED, T0 + 45,
                                   parse("{\"scheduledEventId\":5,\"identity\":\"w\"}")};
            ok(swf_history_append(s, id, e % 2 ? 9 : 7, &started, 1));
            json_object_put(started.attrs);
        }
        if (closes[e] != NULL) {
            char attrs[64];
            snprintf(attrs, sizeof(attrs), "{\"reason\":\"r%d\"}", e);
            swf_event_t close = {0, swf_event_type_parse(closes[e]), T0 + 50, parse(attrs)};
            ok(swf_history_append(s, id, e % 2 ? 9 : 7, &close, 1));
            json_object_put(close.attrs);
        }
    }
    char *live = projections(db);
    cr_assert(strstr(live, "|timed_out|") != NULL && strstr(live, "|open|") != NULL, "%s", live);
    /* The open executions' activities are watched, the closed ones' not. */
    cr_assert(strstr(live, "ex-5|5|") != NULL && strstr(live, "ex-6|5|") != NULL, "%s", live);
    cr_assert(strstr(live, "ex-0|5|") == NULL, "%s", live);
    /* Its reported start is its last heartbeat (the row does not end in "|"). */
    const char *row = strstr(live, "ex-5|5|");
    size_t row_len = strcspn(row, "\n");
    cr_assert(row[row_len - 1] != '|', "no heartbeat from the start: %s", live);
    size_t executions = 0, timers = 0;
    cr_assert_gt(inexact_last_ids(db), 0, "open executions' rows lag behind their histories");
    ok(swf_history_pg_projections_rebuild(s, &executions, &timers));
    cr_assert_eq(executions, 7);
    cr_assert_eq(timers, 2); /* the open executions' (ex-5, ex-6); closing drops the others' */
    char *rebuilt = projections(db);
    cr_assert_str_eq(rebuilt, live);
    free(rebuilt);
    cr_assert_eq(inexact_last_ids(db), 0, "the rebuild writes last_event_id exact");

    /* From damaged projections too. */
    cr_assert_not_null(fixture_sql(db, "DELETE FROM timers WHERE timer_id = 't1';"
                                       " DELETE FROM activity_timeouts WHERE execution_id = 'ex-5';"
                                       " UPDATE executions SET status = 'open', close_time = NULL,"
                                       " last_event_id = 1 WHERE execution_id = 'ex-1'"));
    ok(swf_history_pg_projections_rebuild(s, NULL, NULL));
    rebuilt = projections(db);
    cr_assert_str_eq(rebuilt, live);
    free(rebuilt);
    free(live);
    cr_assert_eq(inexact_last_ids(db), 0);
    /* The open executions' tasks; closing drops an execution's. */
    cr_assert_eq(count_sql(db, "SELECT count(*) FROM outbox"), 2);
    swf_history_store_free(s);
}
