/*
 * test_pg_batch.c - proves history/pg_batch.c against a real PostgreSQL:
 * one load for many executions returns exactly what one load per execution
 * returns (after any id, across the page boundary, for unknown
 * executions), and a connection with asynchronous commits still commits.
 */
#include "test_pg_fixture.h"

#include "protocol/json.h"

#define T0 1763719200000LL /* 2025-11-21T10:00:00Z */

static void ok(swf_error_t *err)
{
    cr_assert(err == NULL, "%s", err ? swf_error_message(err) : "");
}

/* An execution of `count` events: Started, then MarkerRecorded ones. */
static void history_make(swf_history_store_t *s, const char *id, size_t count)
{
    swf_event_list_t evs = {0};
    json_object *a = json_object_new_object();
    json_object_object_add(a, "executionId", json_object_new_string(id));
    json_object_object_add(a, "workflowType",
                           json_tokener_parse("{\"name\":\"sm\",\"version\":\"1\"}"));
    swf_event_list_push(&evs, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, T0, a);
    for (size_t i = 1; i < count; i++) {
        a = json_object_new_object();
        json_object_object_add(a, "markerName", json_object_new_string("m"));
        json_object_object_add(a, "details", json_object_new_int64((int64_t)i));
        swf_event_list_push(&evs, SWF_EVENT_MARKER_RECORDED, T0 + (int64_t)i, a);
    }
    ok(swf_history_append(s, id, 1, evs.items, evs.count));
    swf_event_list_free(&evs);
}

static void lists_equal(const swf_event_list_t *a, const swf_event_list_t *b)
{
    cr_assert_eq(a->count, b->count);
    for (size_t i = 0; i < a->count; i++) {
        cr_assert_eq(a->items[i].id, b->items[i].id);
        cr_assert_eq(a->items[i].type, b->items[i].type);
        cr_assert_eq(a->items[i].time_ms, b->items[i].time_ms);
        cr_assert(swf_json_equal(a->items[i].attrs, b->items[i].attrs));
    }
}

Test(history_pg_batch, loads_what_single_loads_load)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    history_make(s, "short", 5);
    history_make(s, "long", 700); /* more than a page: read on page by page */
    history_make(s, "other", 3);
    const char *ids[] = {"long", "short", "nobody", "short", "other", "long"};
    int64_t after[] = {0, 2, 0, 5, 0, 650};
    enum { N = sizeof(ids) / sizeof(ids[0]) };
    swf_event_list_t outs[N] = {{0}};
    swf_error_t *errors[N];
    ok(swf_history_pg_load_batch(s, ids, after, N, outs, errors));
    for (size_t i = 0; i < N; i++) {
        if (strcmp(ids[i], "nobody") == 0) {
            cr_assert(errors[i] != NULL && swf_error_code(errors[i]) == SWF_E_NOTFOUND);
            swf_error_free(errors[i]);
            cr_assert_eq(outs[i].count, 0);
            continue;
        }
        cr_assert(errors[i] == NULL, "%s: %s", ids[i], swf_error_message(errors[i]));
        swf_event_list_t want = {0};
        ok(swf_history_load(s, ids[i], after[i], 0, &want));
        lists_equal(&outs[i], &want);
        swf_event_list_free(&want);
        swf_event_list_free(&outs[i]);
    }
    swf_history_store_free(s);
}

Test(history_pg_batch, nothing_to_load_is_not_an_error)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    history_make(s, "e", 2);
    const char *ids[] = {"e"};
    int64_t after[] = {2};
    swf_event_list_t outs[1] = {{0}};
    swf_error_t *errors[1];
    ok(swf_history_pg_load_batch(s, ids, after, 1, outs, errors));
    cr_assert(errors[0] == NULL);
    cr_assert_eq(outs[0].count, 0);
    ok(swf_history_pg_load_batch(s, ids, after, 0, outs, errors));
    swf_history_store_free(s);
}

Test(history_pg_batch, async_commits_are_committed)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    ok(swf_history_pg_commit_async(s));
    history_make(s, "e", 3);
    const char *v = fixture_sql(db, "SHOW synchronous_commit");
    cr_assert_str_eq(v, "on", "other sessions keep their setting");
    v = fixture_sql(db, "SELECT count(*) FROM events WHERE execution_id = 'e'");
    cr_assert_str_eq(v, "3");
    swf_history_store_free(s);
}
