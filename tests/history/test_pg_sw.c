/*
 * test_pg_sw.c - proves migration 10 and history/pg_sw.c: the sw_instances
 * projection follows the appends that change it (a Serverless Workflow
 * start, a DecisionTaskCompleted with "swRoute", a cloudevent signal, a
 * close) in their own transaction, the rebuild derives the same rows from
 * the events, and the candidates of an event are the instances its trigger
 * and correlation value allow.
 */
#include "test_pg_fixture.h"

#include "history/pg.h"
#include "protocol/json.h"

#define T0 1763719200000LL

static void ok(swf_error_t *err)
{
    cr_assert(err == NULL, "%s", err ? swf_error_message(err) : "");
}

static json_object *parse(const char *text)
{
    json_object *v = NULL;
    ok(swf_json_parse(text, strlen(text), 1u << 20, &v));
    return v;
}

static void append(swf_history_store_t *s, const char *id, int64_t at, swf_event_type_t type,
                   const char *attrs)
{
    json_object *a = parse(attrs);
    swf_event_t ev = {at, type, T0 + at, a};
    ok(swf_history_append(s, id, at, &ev, 1));
    json_object_put(a);
}

static void start(swf_history_store_t *s, const char *id, const char *definition)
{
    char attrs[1024];
    snprintf(attrs, sizeof(attrs),
             "{\"executionId\":\"%s\",\"workflowType\":{\"name\":\"loans\",\"version\":\"1\"},"
             "\"definition\":%s,\"input\":{}}",
             id, definition);
    append(s, id, 1, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, attrs);
}

/* The candidates of an event, as one comma-separated string. */
static const char *candidates(swf_history_store_t *s, const char *trigger, const char *value)
{
    static char out[256];
    json_object *v = value != NULL ? parse(value) : NULL;
    char **ids = NULL;
    size_t n = 0;
    ok(swf_history_pg_sw_candidates(s, "loans", trigger, v, 100, &ids, &n));
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%s", i ? "," : "", ids[i]);
        free(ids[i]);
    }
    free(ids);
    json_object_put(v);
    return out;
}

static const char rows_sql[] =
    "SELECT coalesce(string_agg(execution_id || '=' || coalesce(correlation::text, '-') || '/' ||"
    " coalesce(array_to_string(waits, '+'), '?'), ' ' ORDER BY execution_id), '')"
    " FROM sw_instances";

Test(history_pg_sw, the_projection_follows_the_appends_and_the_rebuild_gives_the_same_rows)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    const char *sw = "{\"states\":[]}", *asl = "{\"StartAt\":\"A\",\"States\":{}}";
    start(s, "a", sw);
    start(s, "b", sw);
    start(s, "c", sw);
    start(s, "asl", asl);
    cr_assert_str_eq(fixture_sql(db, rows_sql), "a=-/? b=-/? c=-/?");
    /* Waits unknown: every instance without a value is a candidate. */
    cr_assert_str_eq(candidates(s, "Ok", "\"L1\""), "a,b,c");
    append(s, "a", 2, SWF_EVENT_DECISION_TASK_COMPLETED,
           "{\"scheduledEventId\":1,\"startedEventId\":1,"
           "\"swRoute\":{\"correlation\":\"L1\",\"waits\":[\"Ok\"]}}");
    append(s, "b", 2, SWF_EVENT_DECISION_TASK_COMPLETED,
           "{\"scheduledEventId\":1,\"startedEventId\":1,"
           "\"swRoute\":{\"correlation\":null,\"waits\":[\"Req\"]}}");
    append(s, "c", 2, SWF_EVENT_DECISION_TASK_COMPLETED,
           "{\"scheduledEventId\":1,\"startedEventId\":1,"
           "\"swRoute\":{\"correlation\":\"L3\",\"waits\":[]}}");
    cr_assert_str_eq(fixture_sql(db, rows_sql), "a=\"L1\"/Ok b=-/Req c=\"L3\"/");
    cr_assert_str_eq(candidates(s, "Ok", "\"L1\""), "a");
    cr_assert_str_eq(candidates(s, "Ok", "\"L3\""), "c");
    cr_assert_str_eq(candidates(s, "Req", "\"L9\""), "b");
    cr_assert_str_eq(candidates(s, "Ok", "\"L9\""), "");
    cr_assert_str_eq(candidates(s, "Ok", NULL), "a");
    /* A cloudevent signal makes the waits unknown until the next decision;
     * another signal changes nothing. */
    append(s, "b", 3, SWF_EVENT_WORKFLOW_EXECUTION_SIGNALED,
           "{\"signalName\":\"cloudevent\",\"input\":{\"id\":\"e\",\"source\":\"/s\",\"type\":"
           "\"t\"}}");
    append(s, "c", 3, SWF_EVENT_WORKFLOW_EXECUTION_SIGNALED, "{\"signalName\":\"other\"}");
    cr_assert_str_eq(fixture_sql(db, rows_sql), "a=\"L1\"/Ok b=-/? c=\"L3\"/");
    cr_assert_str_eq(candidates(s, "Ok", "\"L9\""), "b");
    append(s, "c", 4, SWF_EVENT_WORKFLOW_EXECUTION_TERMINATED, "{}");
    const char *want = "a=\"L1\"/Ok b=-/?";
    cr_assert_str_eq(fixture_sql(db, rows_sql), want);
    size_t executions = 0, timers = 0;
    ok(swf_history_pg_projections_rebuild(s, &executions, &timers));
    cr_assert_str_eq(fixture_sql(db, rows_sql), want);
    swf_history_store_free(s);
}
