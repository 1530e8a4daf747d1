/*
 * test_pg_wait.c - proves history/pg_wait.c: which of a set of executions
 * are closed, in one query, whatever their ids hold (quotes, backslashes,
 * commas: they travel as a PostgreSQL array literal); an id that names no
 * execution reads as open.
 */
#include "test_pg_fixture.h"

#include "history/catalog.h"
#include "history/pg.h"
#include "protocol/json.h"

#define T0 1763719200000LL

static void ok(swf_error_t *err)
{
    cr_assert(err == NULL, "%s", err ? swf_error_message(err) : "");
}

static void append(swf_history_store_t *s, const char *id, int64_t at, swf_event_type_t type,
                   json_object *attrs)
{
    swf_event_t ev = {at, type, T0 + at, attrs};
    ok(swf_history_append(s, id, at, &ev, 1));
    json_object_put(attrs);
}

static void start(swf_history_store_t *s, const char *id)
{
    json_object *a = json_object_new_object();
    swf_json_add(a, "executionId", json_object_new_string(id));
    swf_json_add(a, "input", json_object_new_object());
    append(s, id, 1, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, a);
}

Test(history_pg_wait, tells_the_closed_executions_among_many_in_one_query)
{
    swf_history_store_t *s = NULL;
    ok(swf_history_pg_new(fixture_db(), &s));
    const char *ids[] = {"open-1", "closed-1", "a\"b\\c,d{e}", "never-started", "closed-2"};
    start(s, ids[0]);
    start(s, ids[1]);
    start(s, ids[2]);
    start(s, ids[4]);
    append(s, ids[1], 2, SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED, json_object_new_object());
    append(s, ids[2], 2, SWF_EVENT_WORKFLOW_EXECUTION_FAILED, json_object_new_object());
    append(s, ids[4], 2, SWF_EVENT_WORKFLOW_EXECUTION_TERMINATED, json_object_new_object());
    bool closed[5];
    ok(swf_history_pg_executions_closed(s, ids, 5, closed));
    cr_assert(!closed[0] && closed[1] && closed[2] && !closed[3] && closed[4]);
    /* None asked: nothing to answer, no query. */
    ok(swf_history_pg_executions_closed(s, NULL, 0, NULL));
    swf_history_store_free(s);
}
