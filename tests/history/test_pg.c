/*
 * test_pg.c - proves history/pg.c against a real PostgreSQL: appends with
 * optimistic concurrency, group commit, reads, the projections, the
 * append-only table, hostile input, and what a killed writer leaves behind.
 */
#include "test_pg_fixture.h"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "history/pg_internal.h" /* the store's own session, for one check */
#include "protocol/json.h"
#include "protocol/limits.h"

#define T0 1763719200000LL /* 2025-11-21T10:00:00Z */

static json_object *parse(const char *text)
{
    json_object *v = NULL;
    swf_error_t *err = swf_json_parse(text, strlen(text), 1u << 30, &v);
    cr_assert(err == NULL, "%s", swf_error_message(err));
    return v;
}

static json_object *started_attrs(const char *execution_id, const char *workflow_id)
{
    json_object *a = json_object_new_object();
    json_object_object_add(a, "executionId", json_object_new_string(execution_id));
    json_object_object_add(a, "workflowId", json_object_new_string(workflow_id));
    json_object_object_add(a, "workflowType", parse("{\"name\":\"sm\",\"version\":\"1\"}"));
    json_object_object_add(
        a, "definition",
        parse("{\"StartAt\":\"A\",\"States\":{\"A\":{\"Type\":\"Pass\",\"End\":true}}}"));
    json_object_object_add(a, "input", parse("{\"k\":[1,2.5,\"three\"]}"));
    return a;
}

/* Creates an execution with WorkflowExecutionStarted + DecisionTaskScheduled. */
static void create(swf_history_store_t *s, const char *id, const char *workflow_id)
{
    swf_event_t evs[2] = {
        {0, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, T0, started_attrs(id, workflow_id)},
        {0, SWF_EVENT_DECISION_TASK_SCHEDULED, T0 + 1, json_object_new_object()},
    };
    swf_error_t *err = swf_history_append(s, id, 1, evs, 2);
    cr_assert(err == NULL, "%s", swf_error_message(err));
    json_object_put(evs[0].attrs);
    json_object_put(evs[1].attrs);
}

static swf_error_t *append1(swf_history_store_t *s, const char *id, int64_t next,
                            swf_event_type_t type, const char *attrs)
{
    swf_event_t ev = {0, type, T0 + next * 1000, parse(attrs)};
    swf_error_t *err = swf_history_append(s, id, next, &ev, 1);
    json_object_put(ev.attrs);
    return err;
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

Test(history_pg, appends_and_loads_exactly)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    create(s, "e1", "w1");
    ok(append1(s, "e1", 3, SWF_EVENT_DECISION_TASK_STARTED,
               "{\"scheduledEventId\":2,\"identity\":\"d\\u00e9cideur/1\"}"));
    swf_event_list_t out = {0};
    ok(swf_history_load(s, "e1", 0, 0, &out));
    cr_assert_eq(out.count, 3);
    for (size_t i = 0; i < out.count; i++)
        cr_assert_eq(out.items[i].id, (int64_t)i + 1);
    cr_assert_eq(out.items[0].type, SWF_EVENT_WORKFLOW_EXECUTION_STARTED);
    cr_assert_eq(out.items[0].time_ms, T0);
    cr_assert_eq(out.items[1].time_ms, T0 + 1);
    json_object *want = started_attrs("e1", "w1");
    cr_assert(swf_json_equal(out.items[0].attrs, want));
    json_object_put(want);
    cr_assert_str_eq(swf_json_get_string(out.items[2].attrs, "identity"), "d\xc3\xa9"
                                                                          "cideur/1");
    swf_event_list_free(&out);
    swf_history_store_free(s);
}

/* jsonb writes 1e20 back as 100000000000000000000, which json-c alone would
 * clamp to UINT64_MAX: what the store reads back is the double it was. */
Test(history_pg, a_double_past_2_63_reads_back_as_that_double)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    json_object *a = started_attrs("big", "w1");
    json_object *input = parse("[1e20,-1e19,9223372036854775807,-9223372036854775808,0.5]");
    json_object_array_add(input, json_object_new_double(1e300));
    json_object_object_add(a, "input", input);
    swf_event_t ev = {0, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, T0, a};
    ok(swf_history_append(s, "big", 1, &ev, 1));
    swf_event_list_t out = {0};
    ok(swf_history_load(s, "big", 0, 0, &out));
    cr_assert_eq(out.count, 1);
    json_object *got;
    cr_assert(swf_json_get(out.items[0].attrs, "input", &got));
    cr_assert(swf_json_equal(got, input), "%s", swf_json_str(got));
    cr_expect_eq(json_object_get_double(json_object_array_get_idx(got, 0)), 1e20);
    cr_expect_eq(json_object_get_int64(json_object_array_get_idx(got, 2)), INT64_MAX);
    swf_event_list_free(&out);
    json_object_put(a);
    swf_history_store_free(s);
}

Test(history_pg, pages_after_an_id_and_in_reverse)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    create(s, "e1", "w1");
    for (int64_t id = 3; id <= 30; id++)
        ok(append1(s, "e1", id, SWF_EVENT_MARKER_RECORDED, "{\"markerName\":\"m\"}"));
    swf_event_list_t out = {0};
    ok(swf_history_load(s, "e1", 10, 5, &out));
    cr_assert_eq(out.count, 5);
    cr_assert_eq(out.items[0].id, 11);
    cr_assert_eq(out.items[4].id, 15);
    swf_event_list_clear(&out);
    ok(swf_history_load(s, "e1", 28, 0, &out));
    cr_assert_eq(out.count, 2);
    swf_event_list_clear(&out);
    ok(swf_history_load(s, "e1", 30, 0, &out));
    cr_assert_eq(out.count, 0);
    ok(swf_history_pg_load_reverse(s, "e1", 0, 3, &out));
    cr_assert_eq(out.count, 3);
    cr_assert_eq(out.items[0].id, 30);
    cr_assert_eq(out.items[2].id, 28);
    swf_event_list_clear(&out);
    ok(swf_history_pg_load_reverse(s, "e1", 3, 0, &out));
    cr_assert_eq(out.count, 2);
    cr_assert_eq(out.items[0].id, 2);
    cr_assert_eq(out.items[1].id, 1);
    swf_event_list_free(&out);
    expect_code(swf_history_load(s, "nope", 0, 0, &out), SWF_E_NOTFOUND);
    expect_code(swf_history_pg_load_reverse(s, "nope", 0, 0, &out), SWF_E_NOTFOUND);
    swf_history_store_free(s);
}

Test(history_pg, refuses_stale_expected_id_and_changes_nothing)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    create(s, "e1", "w1");
    swf_error_t *err = append1(s, "e1", 2, SWF_EVENT_DECISION_TASK_STARTED, "{}");
    cr_assert(err != NULL);
    cr_assert_eq(swf_error_code(err), SWF_E_CONFLICT);
    cr_assert(swf_error_retriable(err));
    swf_error_free(err);
    expect_code(append1(s, "e1", 9, SWF_EVENT_DECISION_TASK_STARTED, "{}"), SWF_E_CONFLICT);
    expect_code(append1(s, "nope", 5, SWF_EVENT_DECISION_TASK_STARTED, "{}"), SWF_E_NOTFOUND);
    /* Creating an existing execution again is a lost race too. */
    swf_event_t ev = {0, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, T0, started_attrs("e1", "w9")};
    expect_code(swf_history_append(s, "e1", 1, &ev, 1), SWF_E_CONFLICT);
    json_object_put(ev.attrs);
    cr_assert_eq(count_sql(db, "SELECT count(*) FROM events"), 2);
    cr_assert_eq(count_sql(db, "SELECT last_event_id FROM executions WHERE execution_id = 'e1'"),
                 2);
    swf_history_store_free(s);
}

Test(history_pg, events_table_is_append_only)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    create(s, "e1", "w1");
    cr_assert_null(fixture_sql(db, "UPDATE events SET event_type = 'X' WHERE execution_id = 'e1'"));
    cr_assert(strstr(fixture_value, "append-only") != NULL, "%s", fixture_value);
    cr_assert_null(fixture_sql(db, "DELETE FROM events WHERE execution_id = 'e1'"));
    cr_assert(strstr(fixture_value, "append-only") != NULL, "%s", fixture_value);
    cr_assert_null(fixture_sql(db, "TRUNCATE events"));
    cr_assert_eq(count_sql(db, "SELECT count(*) FROM events"), 2);
    cr_assert_str_eq(fixture_sql(db, "SELECT event_type FROM events WHERE event_id = 1"),
                     "WorkflowExecutionStarted");
    swf_history_store_free(s);
}

Test(history_pg, projections_follow_the_events)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    create(s, "e1", "w1");
    swf_event_t evs[4] = {
        {0, SWF_EVENT_TIMER_STARTED, T0 + 10,
         parse("{\"timerId\":\"t1\",\"startToFireTimeout\":60}")},
        {0, SWF_EVENT_TIMER_STARTED, T0 + 10,
         parse("{\"timerId\":\"t2\",\"startToFireTimeout\":1.5}")},
        {0, SWF_EVENT_ACTIVITY_TASK_SCHEDULED, T0 + 10,
         parse("{\"activityId\":\"a1\",\"taskList\":{\"name\":\"charge\"},\"input\":{\"n\":1}}")},
        {0, SWF_EVENT_TIMER_FIRED, T0 + 20, parse("{\"timerId\":\"t1\",\"startedEventId\":3}")},
    };
    ok(swf_history_append(s, "e1", 3, evs, 4));
    for (int i = 0; i < 4; i++)
        json_object_put(evs[i].attrs);
    cr_assert_eq(count_sql(db, "SELECT count(*) FROM timers"), 1);
    cr_assert_str_eq(fixture_sql(db, "SELECT timer_id || ' ' || to_char(fire_at AT TIME ZONE 'UTC',"
                                     " 'HH24:MI:SS.MS') FROM timers"),
                     "t2 10:00:01.510");
    /* The outbox row names its event; the task is built from the event. */
    cr_assert_str_eq(fixture_sql(db, "SELECT o.topic || ' ' || o.event_id || ' ' ||"
                                     " coalesce(o.payload::text, 'no copy') || ' ' || e.event_type"
                                     " FROM outbox o JOIN events e USING (execution_id, event_id)"),
                     "charge 5 no copy ActivityTaskScheduled");
    ok(append1(s, "e1", 7, SWF_EVENT_WORKFLOW_EXECUTION_FAILED,
               "{\"reason\":\"States.TaskFailed\"}"));
    swf_history_execution_t ex;
    ok(swf_history_pg_execution_describe(s, "e1", &ex));
    cr_assert_str_eq(ex.status, "failed");
    cr_assert_str_eq(ex.workflow_id, "w1");
    cr_assert_str_eq(ex.state_machine, "sm");
    cr_assert_str_eq(ex.state_machine_version, "1");
    cr_assert_eq(ex.start_ms, T0);
    cr_assert_eq(ex.close_ms, T0 + 7000);
    cr_assert_eq(ex.last_event_id, 7);
    swf_history_execution_free(&ex);
    expect_code(swf_history_pg_execution_describe(s, "nope", &ex), SWF_E_NOTFOUND);
    swf_history_store_free(s);
}

/* The activity_timeouts rows, "id start_to_close heartbeat heartbeat_ms; ...". */
static const char *watched(const char *db, const char *id)
{
    char sql[512];
    snprintf(sql, sizeof(sql),
             "SELECT coalesce(string_agg(format('%%s %%s %%s %%s', scheduled_event_id,"
             " start_to_close, heartbeat, (extract(epoch FROM last_heartbeat) * 1000)::bigint"
             " - %lld), '; ' ORDER BY scheduled_event_id), '') FROM activity_timeouts"
             " WHERE execution_id = '%s'",
             (long long)T0, id);
    const char *v = fixture_sql(db, sql);
    cr_assert(v != NULL, "%s", fixture_value);
    return v;
}

Test(history_pg, activity_timeouts_follow_the_events)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    create(s, "a1", "a1");
    /* Scheduled with a timeout: watched; without one: not. */
    ok(append1(s, "a1", 3, SWF_EVENT_ACTIVITY_TASK_SCHEDULED,
               "{\"taskList\":{\"name\":\"q\"},\"startToCloseTimeout\":30}"));
    ok(append1(s, "a1", 4, SWF_EVENT_ACTIVITY_TASK_SCHEDULED,
               "{\"taskList\":{\"name\":\"q\"},\"heartbeatTimeout\":5}"));
    ok(append1(s, "a1", 5, SWF_EVENT_ACTIVITY_TASK_SCHEDULED, "{\"taskList\":{\"name\":\"q\"}}"));
    cr_assert_str_eq(watched(db, "a1"), "3 30  ; 4  5 ");
    /* A heartbeat is noted; a close, of either kind, ends the watch. */
    ok(append1(s, "a1", 6, SWF_EVENT_ACTIVITY_TASK_HEARTBEAT_RECORDED, "{\"scheduledEventId\":4}"));
    cr_assert_str_eq(watched(db, "a1"), "3 30  ; 4  5 6000");
    ok(append1(s, "a1", 7, SWF_EVENT_ACTIVITY_TASK_COMPLETED, "{\"scheduledEventId\":3}"));
    cr_assert_str_eq(watched(db, "a1"), "4  5 6000");
    ok(append1(s, "a1", 8, SWF_EVENT_ACTIVITY_TASK_TIMED_OUT, "{\"scheduledEventId\":4}"));
    cr_assert_str_eq(watched(db, "a1"), "");
    /* Scheduled and canceled in one append: never watched. Scheduled, then
     * the execution closes: no longer watched. */
    swf_event_t evs[3] = {
        {0, SWF_EVENT_ACTIVITY_TASK_SCHEDULED, T0 + 9000,
         parse("{\"taskList\":{\"name\":\"q\"},\"startToCloseTimeout\":1}")},
        {0, SWF_EVENT_ACTIVITY_TASK_CANCELED, T0 + 9000, parse("{\"scheduledEventId\":9}")},
        {0, SWF_EVENT_ACTIVITY_TASK_SCHEDULED, T0 + 9000,
         parse("{\"taskList\":{\"name\":\"q\"},\"startToCloseTimeout\":2}")},
    };
    ok(swf_history_append(s, "a1", 9, evs, 3));
    for (int i = 0; i < 3; i++)
        json_object_put(evs[i].attrs);
    cr_assert_str_eq(watched(db, "a1"), "11 2  ");
    ok(append1(s, "a1", 12, SWF_EVENT_WORKFLOW_EXECUTION_FAILED, "{}"));
    cr_assert_str_eq(watched(db, "a1"), "");
    /* A lost append leaves the projection as it was. */
    create(s, "a2", "a2");
    ok(append1(s, "a2", 3, SWF_EVENT_ACTIVITY_TASK_SCHEDULED,
               "{\"taskList\":{\"name\":\"q\"},\"startToCloseTimeout\":30}"));
    expect_code(append1(s, "a2", 3, SWF_EVENT_ACTIVITY_TASK_COMPLETED, "{\"scheduledEventId\":3}"),
                SWF_E_CONFLICT);
    cr_assert_str_eq(watched(db, "a2"), "3 30  ");
    /* The rebuild computes the same rows from the events. */
    cr_assert_not_null(fixture_sql(db, "DELETE FROM activity_timeouts"));
    ok(swf_history_pg_projections_rebuild(s, NULL, NULL));
    cr_assert_str_eq(watched(db, "a1"), "");
    cr_assert_str_eq(watched(db, "a2"), "3 30  ");
    swf_history_store_free(s);
}

Test(history_pg, lists_by_status_state_machine_and_time)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    create(s, "e1", "w1");
    create(s, "e2", "w2");
    create(s, "e3", "w3");
    ok(append1(s, "e2", 3, SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED, "{\"result\":1}"));
    ok(append1(s, "e3", 3, SWF_EVENT_WORKFLOW_EXECUTION_TERMINATED, "{\"reason\":\"r\"}"));
    swf_history_execution_t *items;
    size_t n;
    swf_history_filter_t f = {.status = "open"};
    ok(swf_history_pg_executions_list(s, &f, &items, &n));
    cr_assert_eq(n, 1);
    cr_assert_str_eq(items[0].execution_id, "e1");
    swf_history_executions_free(items, n);
    f.status = "closed";
    ok(swf_history_pg_executions_list(s, &f, &items, &n));
    cr_assert_eq(n, 2);
    swf_history_executions_free(items, n);
    f.status = "terminated";
    ok(swf_history_pg_executions_list(s, &f, &items, &n));
    cr_assert_eq(n, 1);
    cr_assert_str_eq(items[0].execution_id, "e3");
    swf_history_executions_free(items, n);
    f = (swf_history_filter_t){.state_machine = "sm", .limit = 2};
    ok(swf_history_pg_executions_list(s, &f, &items, &n));
    cr_assert_eq(n, 2);
    swf_history_executions_free(items, n);
    f = (swf_history_filter_t){.state_machine = "other"};
    ok(swf_history_pg_executions_list(s, &f, &items, &n));
    cr_assert_eq(n, 0);
    f = (swf_history_filter_t){.started_after_ms = T0 + 1};
    ok(swf_history_pg_executions_list(s, &f, &items, &n));
    cr_assert_eq(n, 0);
    f = (swf_history_filter_t){.started_after_ms = T0, .started_before_ms = T0 + 1};
    ok(swf_history_pg_executions_list(s, &f, &items, &n));
    cr_assert_eq(n, 3);
    swf_history_executions_free(items, n);
    f = (swf_history_filter_t){.status = "bogus"};
    expect_code(swf_history_pg_executions_list(s, &f, &items, &n), SWF_E_INPUT);
    swf_history_store_free(s);
}

Test(history_pg, batch_conflict_on_one_keeps_the_others)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    create(s, "a", "wa");
    create(s, "b", "wb");
    create(s, "c", "wc");
    swf_event_t ev = {0, SWF_EVENT_MARKER_RECORDED, T0, parse("{\"markerName\":\"m\"}")};
    swf_event_t st = {0, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, T0, started_attrs("d", "wd")};
    swf_history_append_t batch[6] = {
        {"c", 3, &ev, 1},  /* wins */
        {"a", 2, &ev, 1},  /* stale */
        {"b", 3, &ev, 1},  /* wins */
        {"zz", 3, &ev, 1}, /* no such execution */
        {"d", 1, &st, 1},  /* created */
        {"b", 4, &ev, 1},  /* twice in one batch */
    };
    swf_error_t *errors[6];
    ok(swf_history_pg_batch_append(s, batch, 6, errors));
    cr_assert_null(errors[0]);
    expect_code(errors[1], SWF_E_CONFLICT);
    cr_assert_null(errors[2]);
    expect_code(errors[3], SWF_E_NOTFOUND);
    cr_assert_null(errors[4]);
    expect_code(errors[5], SWF_E_INPUT);
    json_object_put(ev.attrs);
    json_object_put(st.attrs);
    cr_assert_eq(count_sql(db, "SELECT count(*) FROM events"), 6 + 2 + 1);
    swf_history_execution_t ex;
    ok(swf_history_pg_execution_describe(s, "a", &ex));
    cr_assert_eq(ex.last_event_id, 2);
    swf_history_execution_free(&ex);
    ok(swf_history_pg_execution_describe(s, "b", &ex));
    cr_assert_eq(ex.last_event_id, 3);
    swf_history_execution_free(&ex);
    swf_history_store_free(s);
}

Test(history_pg, hostile_input_is_refused_and_changes_nothing)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    const char *evil = "x'; DROP TABLE events; --";
    create(s, evil, "w\"); DELETE FROM executions; --");
    swf_event_list_t out = {0};
    ok(swf_history_load(s, evil, 0, 0, &out));
    cr_assert_eq(out.count, 2);
    swf_event_list_free(&out);
    swf_history_execution_t ex;
    ok(swf_history_pg_execution_describe(s, evil, &ex));
    cr_assert_str_eq(ex.workflow_id, "w\"); DELETE FROM executions; --");
    swf_history_execution_free(&ex);
    swf_history_filter_t f = {.state_machine = evil};
    swf_history_execution_t *items;
    size_t n;
    ok(swf_history_pg_executions_list(s, &f, &items, &n));
    cr_assert_eq(n, 0);
    /* Shapes the projections need are checked per append. */
    expect_code(append1(s, evil, 3, SWF_EVENT_TIMER_STARTED, "{\"timerId\":7}"), SWF_E_INPUT);
    expect_code(append1(s, evil, 3, SWF_EVENT_TIMER_STARTED,
                        "{\"timerId\":\"t\",\"startToFireTimeout\":\"soon\"}"),
                SWF_E_INPUT);
    expect_code(append1(s, evil, 3, SWF_EVENT_ACTIVITY_TASK_SCHEDULED, "{\"taskList\":3}"),
                SWF_E_INPUT);
    expect_code(append1(s, evil, 3, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, "{}"), SWF_E_INPUT);
    expect_code(append1(s, "", 1, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, "{}"), SWF_E_INPUT);
    expect_code(append1(s, "new", 1, SWF_EVENT_MARKER_RECORDED, "{}"), SWF_E_INPUT);
    /* PostgreSQL refuses \u0000 in jsonb: the whole statement fails, cleanly. */
    expect_code(append1(s, evil, 3, SWF_EVENT_MARKER_RECORDED, "{\"details\":\"a\\u0000b\"}"),
                SWF_E_INPUT);
    char longid[SWF_LIMIT_NAME_BYTES + 2];
    memset(longid, 'x', sizeof(longid) - 1);
    longid[sizeof(longid) - 1] = '\0';
    expect_code(append1(s, longid, 1, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, "{}"), SWF_E_LIMIT);
    cr_assert_eq(count_sql(db, "SELECT count(*) FROM events"), 2);
    cr_assert_eq(count_sql(db, "SELECT count(*) FROM executions"), 1);
    cr_assert_eq(count_sql(db, "SELECT count(*) FROM timers"), 0);
    cr_assert_eq(count_sql(db, "SELECT count(*) FROM outbox"), 0);
    swf_history_store_free(s);
}

/* ---- concurrency ---------------------------------------------------------- */

#define WRITERS 8
#define ATTEMPTS 150

typedef struct writer {
    const char *conninfo;
    int index;
    int successes;
    int conflicts;
    int others;
} writer_t;

static void *writer_run(void *arg)
{
    writer_t *w = arg;
    swf_history_store_t *s = NULL;
    swf_error_t *err = swf_history_pg_new(w->conninfo, &s);
    if (err != NULL) {
        w->others = ATTEMPTS;
        swf_error_free(err);
        return NULL;
    }
    for (int k = 0; k < ATTEMPTS; k++) {
        swf_history_execution_t ex;
        err = swf_history_pg_execution_describe(s, "race", &ex);
        if (err != NULL) {
            swf_error_free(err);
            w->others++;
            continue;
        }
        char attrs[64];
        snprintf(attrs, sizeof(attrs), "{\"markerName\":\"w\",\"details\":%d}", w->index);
        json_object *a = json_tokener_parse(attrs);
        swf_event_t ev = {0, SWF_EVENT_MARKER_RECORDED, T0, a};
        err = swf_history_append(s, "race", ex.last_event_id + 1, &ev, 1);
        json_object_put(a);
        swf_history_execution_free(&ex);
        if (err == NULL)
            w->successes++;
        else if (swf_error_code(err) == SWF_E_CONFLICT)
            w->conflicts++;
        else
            w->others++;
        swf_error_free(err);
    }
    swf_history_store_free(s);
    return NULL;
}

Test(history_pg, concurrent_writers_never_fork_the_history, .timeout = 300)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    create(s, "race", "race");
    writer_t w[WRITERS];
    pthread_t th[WRITERS];
    for (int i = 0; i < WRITERS; i++) {
        w[i] = (writer_t){.conninfo = db, .index = i};
        cr_assert_eq(pthread_create(&th[i], NULL, writer_run, &w[i]), 0);
    }
    int total = 0, conflicts = 0;
    for (int i = 0; i < WRITERS; i++) {
        pthread_join(th[i], NULL);
        cr_assert_eq(w[i].others, 0, "writer %d had %d unexpected errors", i, w[i].others);
        cr_assert_eq(w[i].successes + w[i].conflicts, ATTEMPTS);
        total += w[i].successes;
        conflicts += w[i].conflicts;
    }
    cr_assert_gt(conflicts, 0, "no races happened: the test proves nothing");
    swf_event_list_t out = {0};
    ok(swf_history_load(s, "race", 0, 0, &out));
    cr_assert_eq(out.count, (size_t)total + 2);
    int per[WRITERS] = {0};
    for (size_t i = 0; i < out.count; i++) {
        cr_assert_eq(out.items[i].id, (int64_t)i + 1, "gap or fork at %zu", i);
        if (i >= 2) {
            json_object *d;
            cr_assert(swf_json_get(out.items[i].attrs, "details", &d));
            per[json_object_get_int(d)]++;
        }
    }
    for (int i = 0; i < WRITERS; i++)
        cr_assert_eq(per[i], w[i].successes, "writer %d: %d events, %d successes", i, per[i],
                     w[i].successes);
    swf_event_list_free(&out);
    /* Single appends leave the executions row alone (pg.c, append_one_sql):
     * the last event id is read through describe, and a rebuild writes it. */
    swf_history_execution_t ex;
    ok(swf_history_pg_execution_describe(s, "race", &ex));
    cr_assert_eq(ex.last_event_id, total + 2);
    swf_history_execution_free(&ex);
    ok(swf_history_pg_projections_rebuild(s, NULL, NULL));
    cr_assert_eq(count_sql(db, "SELECT last_event_id FROM executions"), total + 2);
    swf_history_store_free(s);
}

/* ---- single and batch appends on one execution ---------------------------- */

static int64_t last_id(swf_history_store_t *s, const char *id)
{
    swf_history_execution_t ex;
    ok(swf_history_pg_execution_describe(s, id, &ex));
    int64_t last = ex.last_event_id;
    swf_history_execution_free(&ex);
    return last;
}

static swf_error_t *batch1(swf_history_store_t *s, const char *id, int64_t next, size_t count)
{
    swf_event_t evs[4];
    cr_assert_leq(count, 4);
    for (size_t k = 0; k < count; k++)
        evs[k] = (swf_event_t){0, SWF_EVENT_MARKER_RECORDED, T0, parse("{\"markerName\":\"b\"}")};
    /* A bystander in the same batch must win whatever happens to `id`. */
    int64_t other = last_id(s, "bystander") + 1;
    swf_history_append_t a[2] = {{id, next, evs, count}, {"bystander", other, evs, 1}};
    swf_error_t *errors[2];
    ok(swf_history_pg_batch_append(s, a, 2, errors));
    ok(errors[1]);
    for (size_t k = 0; k < count; k++)
        json_object_put(evs[k].attrs);
    return errors[0];
}

Test(history_pg, single_and_batch_appends_interleave_on_one_execution)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    create(s, "e1", "w1");
    create(s, "bystander", "bystander");
    const char *marker = "{\"markerName\":\"s\"}";
    ok(append1(s, "e1", 3, SWF_EVENT_MARKER_RECORDED, marker));
    /* Plain appends leave the executions row behind (it still says 2);
     * the batch statement checks against the events. */
    cr_assert_eq(count_sql(db, "SELECT last_event_id FROM executions WHERE execution_id = 'e1'"),
                 2);
    expect_code(batch1(s, "e1", 3, 1), SWF_E_CONFLICT); /* stale */
    expect_code(batch1(s, "e1", 5, 1), SWF_E_CONFLICT); /* a gap */
    ok(batch1(s, "e1", 4, 1));
    cr_assert_eq(last_id(s, "e1"), 4);
    /* A batch append that is not plain but does not close (a timer, an
     * activity: every step of a workflow) leaves the row behind too. */
    swf_event_t timer = {0, SWF_EVENT_TIMER_STARTED, T0, parse("{\"timerId\":\"t\"}")};
    swf_history_append_t heavy[2] = {{"bystander", last_id(s, "bystander") + 1, &timer, 1},
                                     {"e1", 5, &timer, 1}};
    swf_error_t *errors[2];
    ok(swf_history_pg_batch_append(s, heavy, 2, errors));
    ok(errors[0]);
    ok(errors[1]);
    json_object_put(timer.attrs);
    cr_assert_eq(count_sql(db, "SELECT last_event_id FROM executions WHERE execution_id = 'e1'"),
                 2);
    cr_assert_eq(last_id(s, "e1"), 5);
    ok(append1(s, "e1", 6, SWF_EVENT_TIMER_FIRED, "{\"timerId\":\"t\"}"));
    expect_code(append1(s, "e1", 6, SWF_EVENT_MARKER_RECORDED, marker), SWF_E_CONFLICT);
    expect_code(append1(s, "e1", 8, SWF_EVENT_MARKER_RECORDED, marker), SWF_E_CONFLICT);
    ok(append1(s, "e1", 7, SWF_EVENT_MARKER_RECORDED, marker));
    ok(append1(s, "e1", 8, SWF_EVENT_MARKER_RECORDED, marker));
    ok(batch1(s, "e1", 9, 3));
    ok(append1(s, "e1", 12, SWF_EVENT_MARKER_RECORDED, marker));
    cr_assert_eq(last_id(s, "e1"), 12);
    cr_assert_eq(count_sql(db, "SELECT last_event_id FROM executions WHERE execution_id = 'e1'"),
                 2);
    swf_history_execution_t *items;
    size_t n;
    swf_history_filter_t f = {.status = "open"};
    ok(swf_history_pg_executions_list(s, &f, &items, &n));
    cr_assert_eq(n, 2);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(items[i].last_event_id, strcmp(items[i].execution_id, "e1") == 0 ? 12 : 7);
    swf_history_executions_free(items, n);
    /* A closing event takes the batch statement: the row is exact again. */
    ok(append1(s, "e1", 13, SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED, "{}"));
    cr_assert_str_eq(fixture_sql(db, "SELECT status || ' ' || last_event_id FROM executions"
                                     " WHERE execution_id = 'e1'"),
                     "succeeded 13");
    expect_code(append1(s, "e1", 13, SWF_EVENT_MARKER_RECORDED, marker), SWF_E_CONFLICT);
    expect_code(batch1(s, "e1", 13, 1), SWF_E_CONFLICT);
    swf_event_list_t out = {0};
    ok(swf_history_load(s, "e1", 0, 0, &out));
    cr_assert_eq(out.count, 13);
    for (size_t i = 0; i < out.count; i++)
        cr_assert_eq(out.items[i].id, (int64_t)i + 1);
    swf_event_list_free(&out);
    swf_history_store_free(s);
}

/* Writers racing on one execution, half with single appends (no row lock),
 * half with batches that also append to an execution of their own: no fork,
 * no gap, and a batch is whole or nothing for each of its executions. */
typedef struct mixed_writer {
    const char *conninfo;
    int index;
    int successes;
    int own; /* events appended to the writer's own execution */
    int conflicts;
    int others;
    char message[256];
} mixed_writer_t;

static void *mixed_writer_run(void *arg)
{
    mixed_writer_t *w = arg;
    swf_history_store_t *s = NULL;
    swf_error_t *err = swf_history_pg_new(w->conninfo, &s);
    if (err != NULL) {
        w->others = ATTEMPTS;
        swf_error_free(err);
        return NULL;
    }
    char own[16];
    snprintf(own, sizeof(own), "own%d", w->index);
    char attrs[64];
    snprintf(attrs, sizeof(attrs), "{\"markerName\":\"w\",\"details\":%d}", w->index);
    json_object *a = json_tokener_parse(attrs);
    swf_event_t evs[2] = {{0, SWF_EVENT_MARKER_RECORDED, T0, a},
                          {0, SWF_EVENT_MARKER_RECORDED, T0, a}};
    for (int k = 0; k < ATTEMPTS; k++) {
        swf_history_execution_t ex;
        err = swf_history_pg_execution_describe(s, "race", &ex);
        if (err != NULL) {
            snprintf(w->message, sizeof(w->message), "%s", swf_error_message(err));
            swf_error_free(err);
            w->others++;
            continue;
        }
        int64_t next = ex.last_event_id + 1;
        swf_history_execution_free(&ex);
        if (w->index % 2 == 0) {
            err = swf_history_append(s, "race", next, evs, 1);
        } else {
            swf_history_append_t b[2] = {{own, w->own + 3, evs, 1}, {"race", next, evs, 2}};
            swf_error_t *errors[2];
            err = swf_history_pg_batch_append(s, b, 2, errors);
            if (err == NULL && errors[0] != NULL) {
                /* Its own execution never loses. */
                snprintf(w->message, sizeof(w->message), "%s: %s", own,
                         swf_error_message(errors[0]));
                w->others++;
                swf_error_free(errors[0]);
                swf_error_free(errors[1]);
                continue;
            }
            if (err == NULL) {
                w->own++;
                err = errors[1];
            }
        }
        if (err == NULL) {
            w->successes++;
        } else if (swf_error_code(err) == SWF_E_CONFLICT) {
            w->conflicts++;
        } else {
            snprintf(w->message, sizeof(w->message), "%s", swf_error_message(err));
            w->others++;
        }
        swf_error_free(err);
    }
    json_object_put(a);
    swf_history_store_free(s);
    return NULL;
}

Test(history_pg, single_and_batch_writers_race_without_forking, .timeout = 300)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    create(s, "race", "race");
    mixed_writer_t w[WRITERS];
    pthread_t th[WRITERS];
    for (int i = 0; i < WRITERS; i++) {
        char own[16];
        snprintf(own, sizeof(own), "own%d", i);
        create(s, own, own);
        w[i] = (mixed_writer_t){.conninfo = db, .index = i};
    }
    for (int i = 0; i < WRITERS; i++)
        cr_assert_eq(pthread_create(&th[i], NULL, mixed_writer_run, &w[i]), 0);
    int expected = 2, conflicts = 0;
    for (int i = 0; i < WRITERS; i++) {
        pthread_join(th[i], NULL);
        cr_assert_eq(w[i].others, 0, "writer %d had %d unexpected errors (%s)", i, w[i].others,
                     w[i].message);
        cr_assert_eq(w[i].successes + w[i].conflicts, ATTEMPTS);
        expected += w[i].successes * (i % 2 == 0 ? 1 : 2);
        conflicts += w[i].conflicts;
    }
    cr_assert_gt(conflicts, 0, "no races happened: the test proves nothing");
    swf_event_list_t out = {0};
    ok(swf_history_load(s, "race", 0, 0, &out));
    cr_assert_eq(out.count, (size_t)expected);
    int per[WRITERS] = {0};
    for (size_t i = 0; i < out.count; i++) {
        cr_assert_eq(out.items[i].id, (int64_t)i + 1, "gap or fork at %zu", i);
        if (i >= 2) {
            json_object *d;
            cr_assert(swf_json_get(out.items[i].attrs, "details", &d));
            per[json_object_get_int(d)]++;
        }
    }
    swf_event_list_free(&out);
    for (int i = 0; i < WRITERS; i++) {
        cr_assert_eq(per[i], w[i].successes * (i % 2 == 0 ? 1 : 2), "writer %d", i);
        char own[16];
        snprintf(own, sizeof(own), "own%d", i);
        cr_assert_eq(last_id(s, own), 2 + w[i].own, "writer %d", i);
    }
    cr_assert_eq(last_id(s, "race"), expected);
    /* The live projection and a rebuilt one agree. */
    char *live = strdup(fixture_sql(db, "SELECT string_agg(execution_id || status,"
                                        " ',' ORDER BY execution_id) FROM executions"));
    ok(swf_history_pg_projections_rebuild(s, NULL, NULL));
    cr_assert_str_eq(fixture_sql(db, "SELECT string_agg(execution_id || status,"
                                     " ',' ORDER BY execution_id) FROM executions"),
                     live);
    free(live);
    cr_assert_eq(count_sql(db, "SELECT last_event_id FROM executions WHERE execution_id = 'race'"),
                 expected);
    swf_history_store_free(s);
}

/* ---- a writer killed in the middle of a batch ----------------------------- */

#define CRASH_EXECUTIONS 10
#define CRASH_EVENTS 40 /* per execution per batch */

static void crash_writer(const char *conninfo)
{
    swf_history_store_t *s = NULL;
    if (swf_history_pg_new(conninfo, &s) != NULL)
        _exit(2);
    char ids[CRASH_EXECUTIONS][16];
    int64_t next[CRASH_EXECUTIONS];
    for (int e = 0; e < CRASH_EXECUTIONS; e++) {
        snprintf(ids[e], sizeof(ids[e]), "crash%d", e);
        swf_history_execution_t ex;
        if (swf_history_pg_execution_describe(s, ids[e], &ex) != NULL)
            _exit(2);
        next[e] = ex.last_event_id + 1;
        swf_history_execution_free(&ex);
    }
    swf_event_t evs[CRASH_EVENTS];
    /* Batches are numbered from 1 across rounds: batch b holds events
     * 3 + (b - 1) * CRASH_EVENTS ... of every execution. */
    for (int batch = (int)((next[0] - 3) / CRASH_EVENTS) + 1;; batch++) {
        char attrs[96];
        snprintf(attrs, sizeof(attrs),
                 "{\"markerName\":\"batch\",\"details\":{\"batch\":%d,\"size\":%d}}", batch,
                 CRASH_EVENTS);
        for (int k = 0; k < CRASH_EVENTS; k++)
            evs[k] = (swf_event_t){0, SWF_EVENT_MARKER_RECORDED, T0, json_tokener_parse(attrs)};
        swf_history_append_t appends[CRASH_EXECUTIONS];
        swf_error_t *errors[CRASH_EXECUTIONS];
        for (int e = 0; e < CRASH_EXECUTIONS; e++)
            appends[e] = (swf_history_append_t){ids[e], next[e], evs, CRASH_EVENTS};
        swf_error_t *err = swf_history_pg_batch_append(s, appends, CRASH_EXECUTIONS, errors);
        if (err != NULL)
            _exit(3);
        for (int e = 0; e < CRASH_EXECUTIONS; e++) {
            if (errors[e] != NULL)
                _exit(4);
            next[e] += CRASH_EVENTS;
        }
        for (int k = 0; k < CRASH_EVENTS; k++)
            json_object_put(evs[k].attrs);
    }
}

Test(history_pg, killed_writer_leaves_whole_batches_or_none, .timeout = 300)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    for (int e = 0; e < CRASH_EXECUTIONS; e++) {
        char id[16];
        snprintf(id, sizeof(id), "crash%d", e);
        create(s, id, id);
    }
    swf_history_store_free(s);
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    for (int round = 0; round < 3; round++) {
        pid_t pid = fork();
        cr_assert(pid >= 0);
        if (pid == 0)
            crash_writer(db);
        struct timespec ts = {0, (150 + rand() % 500) * 1000000L};
        nanosleep(&ts, NULL);
        int status;
        cr_assert_eq(waitpid(pid, &status, WNOHANG), 0, "the writer exited by itself (%d)",
                     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        kill(pid, SIGKILL);
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFSIGNALED(status));

        /* The server may still be rolling back the killed session's
         * transaction; wait until its backend is gone. */
        for (int tries = 0; tries < 100; tries++) {
            if (count_sql(db, "SELECT count(*) FROM pg_stat_activity WHERE datname ="
                              " current_database() AND pid <> pg_backend_pid()") == 0)
                break;
            nanosleep(&(struct timespec){0, 20000000L}, NULL);
        }
        s = fixture_store(db);
        int64_t batches = -1;
        for (int e = 0; e < CRASH_EXECUTIONS; e++) {
            char id[16];
            snprintf(id, sizeof(id), "crash%d", e);
            swf_event_list_t out = {0};
            ok(swf_history_load(s, id, 2, 0, &out));
            cr_assert_eq(out.count % CRASH_EVENTS, 0, "%s has a partial batch (%zu events)", id,
                         out.count);
            for (size_t i = 0; i < out.count; i++) {
                json_object *d;
                cr_assert(swf_json_get(out.items[i].attrs, "details", &d));
                json_object *b = json_object_object_get(d, "batch");
                cr_assert_eq(json_object_get_int(b), (int)(i / CRASH_EVENTS) + 1);
            }
            if (batches < 0)
                batches = (int64_t)(out.count / CRASH_EVENTS);
            cr_assert_eq((int64_t)(out.count / CRASH_EVENTS), batches,
                         "executions disagree on how many batches committed");
            swf_event_list_free(&out);
        }
        swf_history_execution_t ex;
        ok(swf_history_pg_execution_describe(s, "crash0", &ex));
        cr_assert_eq(ex.last_event_id, 2 + batches * CRASH_EVENTS);
        swf_history_execution_free(&ex);
        swf_history_store_free(s);
        cr_assert_gt(batches, 0, "round %d: no batch committed before the kill", round);
    }
}

/* Terminates every other session on the database of conninfo (the store's)
 * and waits until they are gone. */
static void terminate_others(const char *conninfo)
{
    count_sql(conninfo, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                        " WHERE datname = current_database() AND pid <> pg_backend_pid()");
    for (int i = 0; i < 500; i++) {
        if (count_sql(conninfo,
                      "SELECT count(*) FROM pg_stat_activity"
                      " WHERE datname = current_database() AND pid <> pg_backend_pid()") == 0)
            return;
        usleep(10000);
    }
    cr_assert_fail("the store's session did not end");
}

Test(history_pg, reconnects_after_the_server_closed_its_connection)
{
    const char *ci = fixture_db();
    swf_history_store_t *s = fixture_store(ci);
    create(s, "re-1", "re-1");
    swf_event_list_t evs = {0};
    ok(swf_history_load(s, "re-1", 0, 0, &evs)); /* the statements are prepared */
    swf_event_list_free(&evs);

    /* As in a server restart: the server ends the session under the store.
     * The operation that meets it fails, retriable; the next one connects
     * again and prepares its statements again, for every kind of call. */
    terminate_others(ci);
    swf_error_t *err = swf_history_load(s, "re-1", 0, 0, &evs);
    cr_assert(err != NULL, "a load on a terminated session succeeded");
    cr_assert_eq(swf_error_code(err), SWF_E_DB, "%s", swf_error_message(err));
    cr_assert(swf_error_retriable(err), "%s", swf_error_message(err));
    /* libpq says it over several lines; a log line is one. */
    cr_assert(strchr(swf_error_message(err), '\n') == NULL, "%s", swf_error_message(err));
    cr_assert(strchr(swf_error_message(err), '\t') == NULL, "%s", swf_error_message(err));
    swf_error_free(err);
    swf_event_list_free(&evs);
    /* A server that is not there at all. */
    swf_history_store_t *none = NULL;
    err = swf_history_pg_connect("host=/nonexistent-swf-socket-dir port=1 user=x dbname=x "
                                 "connect_timeout=2",
                                 &none);
    cr_assert(err != NULL && none == NULL);
    cr_assert_eq(swf_error_code(err), SWF_E_DB, "%s", swf_error_message(err));
    cr_assert(strstr(swf_error_message(err), "nonexistent-swf-socket-dir") != NULL, "%s",
              swf_error_message(err));
    cr_assert(strchr(swf_error_message(err), '\n') == NULL, "%s", swf_error_message(err));
    cr_log_info("%s", swf_error_message(err));
    swf_error_free(err);
    ok(append1(s, "re-1", 3, SWF_EVENT_DECISION_TASK_STARTED, "{\"scheduledEventId\":2}"));
    ok(swf_history_load(s, "re-1", 0, 0, &evs));
    cr_assert_eq(evs.count, 3);
    swf_event_list_free(&evs);

    terminate_others(ci);
    swf_history_execution_t ex;
    expect_code(swf_history_pg_execution_describe(s, "re-1", &ex), SWF_E_DB);
    ok(swf_history_pg_execution_describe(s, "re-1", &ex));
    cr_assert_eq(ex.last_event_id, 3);
    swf_history_execution_free(&ex);

    terminate_others(ci);
    swf_event_t ev = {0, SWF_EVENT_DECISION_TASK_COMPLETED, T0 + 4000,
                      parse("{\"scheduledEventId\":2,\"startedEventId\":3}")};
    swf_history_append_t a = {"re-1", 4, &ev, 1};
    swf_error_t *one = NULL;
    expect_code(swf_history_pg_batch_append(s, &a, 1, &one), SWF_E_DB);
    ok(swf_history_pg_batch_append(s, &a, 1, &one));
    ok(one);
    json_object_put(ev.attrs);
    cr_assert_eq(count_sql(ci, "SELECT max(event_id) FROM events WHERE execution_id = 're-1'"), 4);

    /* The batch load, and a session setting that must outlive a reset. */
    ok(swf_history_pg_commit_async(s));
    terminate_others(ci);
    const char *ids[1] = {"re-1"};
    int64_t after[1] = {2};
    swf_event_list_t outs[1] = {{0}};
    swf_error_t *errs[1] = {NULL};
    expect_code(swf_history_pg_load_batch(s, ids, after, 1, outs, errs), SWF_E_DB);
    swf_event_list_free(&outs[0]);
    ok(swf_history_pg_load_batch(s, ids, after, 1, outs, errs));
    ok(errs[0]);
    cr_assert_eq(outs[0].count, 2);
    swf_event_list_free(&outs[0]);
    cr_assert_eq(count_sql(ci, "SELECT count(*) FROM pg_stat_activity WHERE datname ="
                               " current_database() AND pid <> pg_backend_pid()"),
                 1);
    swf_history__pg_t *pg = swf_history__pg(s);
    PGresult *r = PQexec(pg->conn, "SHOW synchronous_commit");
    cr_assert_str_eq(PQgetvalue(r, 0, 0), "off");
    PQclear(r);
    swf_history_store_free(s);
}

/* The names of the statements prepared on the store's own session. */
static char *prepared_names(swf_history_store_t *s)
{
    PGresult *res =
        PQexec(swf_history__pg(s)->conn, "SELECT coalesce(string_agg(name, ',' ORDER BY name), '')"
                                         " FROM pg_prepared_statements");
    cr_assert_eq(PQresultStatus(res), PGRES_TUPLES_OK, "%s",
                 PQerrorMessage(swf_history__pg(s)->conn));
    char *names = strdup(PQgetvalue(res, 0, 0));
    PQclear(res);
    return names;
}

Test(history_pg, a_session_prepares_only_the_statements_it_runs_each_once)
{
    const char *ci = fixture_db();
    swf_history_store_t *s = fixture_store(ci);
    create(s, "lazy-1", "lazy-1"); /* through the store the fixture gave: its own session */
    swf_history_store_free(s);

    /* A command's session (`swf start`, `swf describe`): what it runs only. */
    s = fixture_store(ci);
    char *names = prepared_names(s);
    cr_expect_str_eq(names, "", "a new session prepared %s before any call", names);
    free(names);
    swf_history_execution_t ex;
    ok(swf_history_pg_execution_describe(s, "lazy-1", &ex));
    swf_history_execution_free(&ex);
    ok(swf_history_pg_execution_describe(s, "lazy-1", &ex));
    swf_history_execution_free(&ex);
    names = prepared_names(s);
    cr_expect_str_eq(names, "swf_describe");
    free(names);

    /* A statement prepared inside a transaction that fails stays prepared:
     * the next use does not prepare it again (which would fail, "already
     * exists"). */
    PGconn *conn = swf_history__pg(s)->conn;
    ok(swf_history__pg_begin(conn));
    swf_event_list_t evs = {0};
    ok(swf_history_load(s, "lazy-1", 0, 0, &evs));
    swf_event_list_free(&evs);
    expect_code(swf_history__pg_query(conn, "SELECT 1 / 0", -1, NULL, NULL), SWF_E_INPUT);
    swf_history__pg_rollback(conn);
    ok(swf_history_load(s, "lazy-1", 0, 0, &evs));
    cr_expect_eq(evs.count, 2);
    swf_event_list_free(&evs);
    ok(append1(s, "lazy-1", 3, SWF_EVENT_DECISION_TASK_STARTED, "{\"scheduledEventId\":2}"));
    names = prepared_names(s);
    cr_expect_str_eq(names, "swf_append_one,swf_describe,swf_load");
    free(names);
    swf_history_store_free(s);
}
