/*
 * test_pg_batch.c - proves history/pg_batch.c against a real PostgreSQL:
 * one load for many executions returns exactly what one load per execution
 * returns (after any id, across the page boundary, for unknown
 * executions), and a connection with asynchronous commits still commits.
 */
#include "test_pg_fixture.h"

#include "history/service.h"
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

/* One event with its attributes parsed from JSON. */
static swf_event_t ev(swf_event_type_t type, int64_t ms, const char *attrs)
{
    return (swf_event_t){0, type, T0 + ms, json_tokener_parse(attrs)};
}

/* The rows of a projection of these tests' executions, as one string. */
static const char *rows(const char *db, const char *sql)
{
    const char *v = fixture_sql(db, sql);
    cr_assert(v != NULL, "%s", fixture_value);
    return v;
}

#define TIMEOUT_ROWS                                                                               \
    "SELECT coalesce(string_agg(format('%s/%s %s %s %s', execution_id, scheduled_event_id,"        \
    " start_to_close, heartbeat, (extract(epoch FROM scheduled_time) * 1000)::bigint - "           \
    "1763719200000), '; ' ORDER BY execution_id, scheduled_event_id), '') FROM activity_timeouts"
#define OUTBOX_ROWS                                                                                \
    "SELECT coalesce(string_agg(format('%s/%s %s', execution_id, event_id, topic), '; '"           \
    " ORDER BY execution_id, event_id), '') FROM outbox"

/*
 * Batches of several executions keep the outbox, activity_timeouts and
 * timers exactly as the events say, through the three append statements
 * that write them (rounds 1 and 2: activity events only, the decider's
 * common case; round 3: a heartbeat and a timer, but no execution starts
 * or closes; round 4: heartbeats and timers again, and a close: any
 * batch): activities scheduled with a timeout are watched, closed ones are
 * not, one scheduled and closed in the same batch never is, heartbeats are
 * noted, timers started and canceled, a closed execution's activities are
 * no longer watched; and the rebuild from the events (a separate
 * computation) agrees.
 */
Test(history_pg_batch, batches_of_steps_keep_the_projections)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db);
    const char *ids[3] = {"x1", "x2", "x3"};
    for (int i = 0; i < 3; i++)
        history_make(s, ids[i], 1);
    /* Round 1: x1 schedules two activities (one timed), x2 one with a
     * heartbeat timeout, x3 schedules one and cancels it at once. */
    swf_event_t r1x1[2] = {
        ev(SWF_EVENT_ACTIVITY_TASK_SCHEDULED, 1000,
           "{\"taskList\":{\"name\":\"q\"},\"startToCloseTimeout\":30}"),
        ev(SWF_EVENT_ACTIVITY_TASK_SCHEDULED, 1000, "{\"taskList\":{\"name\":\"r\"}}"),
    };
    swf_event_t r1x2[1] = {
        ev(SWF_EVENT_ACTIVITY_TASK_SCHEDULED, 2000,
           "{\"taskList\":{\"name\":\"q\"},\"heartbeatTimeout\":5,\"startToCloseTimeout\":60}"),
    };
    swf_event_t r1x3[3] = {
        ev(SWF_EVENT_ACTIVITY_TASK_SCHEDULED, 3000,
           "{\"taskList\":{\"name\":\"q\"},\"startToCloseTimeout\":1}"),
        ev(SWF_EVENT_ACTIVITY_TASK_CANCELED, 3000, "{\"scheduledEventId\":2}"),
        ev(SWF_EVENT_DECISION_TASK_SCHEDULED, 3000, "{}"),
    };
    swf_history_append_t round1[3] = {{"x1", 2, r1x1, 2}, {"x2", 2, r1x2, 1}, {"x3", 2, r1x3, 3}};
    swf_error_t *errors[3];
    ok(swf_history_pg_batch_append(s, round1, 3, errors));
    for (int i = 0; i < 3; i++)
        ok(errors[i]);
    cr_assert_str_eq(rows(db, TIMEOUT_ROWS), "x1/2 30  1000; x2/2 60 5 2000");
    /* x3's canceled activity has no task to publish. */
    cr_assert_str_eq(rows(db, OUTBOX_ROWS), "x1/2 q; x1/3 r; x2/2 q");
    /* Round 2: x1's timed activity completes and a new one is scheduled;
     * x2's times out; x3 goes on with a step. */
    swf_event_t r2x1[3] = {
        ev(SWF_EVENT_ACTIVITY_TASK_STARTED, 4000, "{\"scheduledEventId\":2}"),
        ev(SWF_EVENT_ACTIVITY_TASK_COMPLETED, 4000,
           "{\"scheduledEventId\":2,\"startedEventId\":4,\"result\":{}}"),
        ev(SWF_EVENT_ACTIVITY_TASK_SCHEDULED, 4000,
           "{\"taskList\":{\"name\":\"q\"},\"startToCloseTimeout\":7}"),
    };
    swf_event_t r2x2[1] = {
        ev(SWF_EVENT_ACTIVITY_TASK_TIMED_OUT, 5000,
           "{\"scheduledEventId\":2,\"timeoutType\":\"HEARTBEAT\"}"),
    };
    swf_event_t r2x3[1] = {
        ev(SWF_EVENT_ACTIVITY_TASK_SCHEDULED, 6000,
           "{\"taskList\":{\"name\":\"s\"},\"heartbeatTimeout\":9}"),
    };
    swf_history_append_t round2[3] = {{"x1", 4, r2x1, 3}, {"x2", 3, r2x2, 1}, {"x3", 5, r2x3, 1}};
    ok(swf_history_pg_batch_append(s, round2, 3, errors));
    for (int i = 0; i < 3; i++)
        ok(errors[i]);
    const char *want = "x1/6 7  4000; x3/5  9 6000";
    cr_assert_str_eq(rows(db, TIMEOUT_ROWS), want);
    cr_assert_str_eq(rows(db, OUTBOX_ROWS), "x1/2 q; x1/3 r; x1/6 q; x2/2 q; x3/5 s");
    /* Round 3, with a heartbeat and a timer (the statement for steps):
     * x1's activity is beaten, x2 starts a timer and an activity that is
     * beaten in the same append. */
    swf_event_t r3x1[1] = {
        ev(SWF_EVENT_ACTIVITY_TASK_HEARTBEAT_RECORDED, 7000, "{\"scheduledEventId\":6}"),
    };
    swf_event_t r3x2[3] = {
        ev(SWF_EVENT_TIMER_STARTED, 8000, "{\"timerId\":\"w\",\"startToFireTimeout\":60}"),
        ev(SWF_EVENT_ACTIVITY_TASK_SCHEDULED, 8000,
           "{\"taskList\":{\"name\":\"q\"},\"heartbeatTimeout\":3}"),
        ev(SWF_EVENT_ACTIVITY_TASK_HEARTBEAT_RECORDED, 8500, "{\"scheduledEventId\":5}"),
    };
    swf_history_append_t round3[2] = {{"x1", 7, r3x1, 1}, {"x2", 4, r3x2, 3}};
    ok(swf_history_pg_batch_append(s, round3, 2, errors));
    for (int i = 0; i < 2; i++)
        ok(errors[i]);
    cr_assert_str_eq(rows(db, TIMEOUT_ROWS), "x1/6 7  4000; x2/5  3 8000; x3/5  9 6000");
    const char *beat = "SELECT string_agg(((extract(epoch FROM last_heartbeat) * 1000)::bigint"
                       " - 1763719200000)::text, ' ' ORDER BY execution_id) FROM activity_timeouts";
    cr_assert_str_eq(rows(db, beat), "7000 8500");
    const char *timers = "SELECT coalesce(string_agg(format('%s %s %s', execution_id, timer_id,"
                         " (extract(epoch FROM fire_at) * 1000)::bigint - 1763719200000), '; '"
                         " ORDER BY execution_id, timer_id), '') FROM timers";
    cr_assert_str_eq(rows(db, timers), "x2 w 68000");
    /* Round 4, through the statement for any batch: x1's activity is
     * beaten again, x2 starts a timer and cancels the other, x3 fails,
     * which ends the watch of its activity. */
    swf_event_t r4x1[1] = {
        ev(SWF_EVENT_ACTIVITY_TASK_HEARTBEAT_RECORDED, 9500, "{\"scheduledEventId\":6}"),
    };
    swf_event_t r4x2[2] = {
        ev(SWF_EVENT_TIMER_STARTED, 9600, "{\"timerId\":\"v\",\"startToFireTimeout\":30}"),
        ev(SWF_EVENT_TIMER_CANCELED, 9600, "{\"timerId\":\"w\"}"),
    };
    swf_event_t r4x3[1] = {ev(SWF_EVENT_WORKFLOW_EXECUTION_FAILED, 9000, "{}")};
    swf_history_append_t round4[3] = {{"x1", 8, r4x1, 1}, {"x2", 7, r4x2, 2}, {"x3", 6, r4x3, 1}};
    ok(swf_history_pg_batch_append(s, round4, 3, errors));
    for (int i = 0; i < 3; i++)
        ok(errors[i]);
    want = "x1/6 7  4000; x2/5  3 8000";
    cr_assert_str_eq(rows(db, TIMEOUT_ROWS), want);
    cr_assert_str_eq(rows(db, beat), "9500 8500");
    cr_assert_str_eq(rows(db, timers), "x2 v 39600");
    /* The rebuild from the events computes the same rows. */
    cr_assert_not_null(fixture_sql(db, "DELETE FROM activity_timeouts; DELETE FROM timers"));
    ok(swf_history_pg_projections_rebuild(s, NULL, NULL));
    cr_assert_str_eq(rows(db, TIMEOUT_ROWS), want);
    cr_assert_str_eq(rows(db, beat), "9500 8500");
    cr_assert_str_eq(rows(db, timers), "x2 v 39600");
    swf_event_t *all[] = {r1x1, r1x2, r1x3, r2x1, r2x2, r2x3, r3x1, r3x2, r4x1, r4x2, r4x3};
    size_t counts[] = {2, 1, 3, 3, 1, 1, 1, 3, 1, 2, 1};
    for (size_t k = 0; k < 11; k++) {
        for (size_t i = 0; i < counts[k]; i++)
            json_object_put(all[k][i].attrs);
    }
    swf_history_store_free(s);
}

/*
 * Outbox deletes sent without waiting (the decider's committer): each
 * call collects the one before; a delete that failed (its session ended
 * under it) is reported by the next call, which still deletes its own rows
 * on a new session; the failed one's row stays for swf-history.
 */
Test(history_pg_batch, outbox_deletes_sent_without_waiting)
{
    const char *db = fixture_db();
    swf_history_store_t *s = fixture_store(db), *o;
    ok(swf_history_pg_connect(db, &o));
    ok(swf_history_pg_commit_async(o));
    history_make(s, "y", 1);
    swf_event_t sched[5];
    for (int i = 0; i < 5; i++)
        sched[i] = ev(SWF_EVENT_ACTIVITY_TASK_SCHEDULED, 1000, "{\"taskList\":{\"name\":\"q\"}}");
    swf_history_append_t a = {"y", 2, sched, 5};
    swf_error_t *errors[1];
    ok(swf_history_pg_batch_append(s, &a, 1, errors));
    ok(errors[0]);
    cr_assert_str_eq(rows(db, OUTBOX_ROWS), "y/2 q; y/3 q; y/4 q; y/5 q; y/6 q");

    swf_history_outbox_key_t k2[2] = {{"y", 2}, {"y", 3}}, k4[1] = {{"y", 4}}, k5[1] = {{"y", 5}},
                             k6[1] = {{"y", 6}};
    ok(swf_history_outbox_delete_send(o, k2, 2));
    ok(swf_history_outbox_delete_send(o, k4, 1));
    ok(swf_history_outbox_wait(o));
    ok(swf_history_outbox_wait(o)); /* nothing outstanding */
    cr_assert_str_eq(rows(db, OUTBOX_ROWS), "y/5 q; y/6 q");

    /* The server ends the delete store's session (and the other store's). */
    rows(db, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
             " WHERE datname = current_database() AND pid <> pg_backend_pid()");
    for (int i = 0; i < 500 && strcmp(rows(db, "SELECT count(*) FROM pg_stat_activity WHERE"
                                               " datname = current_database() AND"
                                               " pid <> pg_backend_pid()"),
                                      "0") != 0;
         i++)
        usleep(10000);
    /* The delete of y/5 fails, when sent or when collected by the next
     * call; the next call deletes y/6 all the same. */
    swf_error_t *first = swf_history_outbox_delete_send(o, k5, 1);
    swf_error_t *second = swf_history_outbox_delete_send(o, k6, 1);
    cr_assert((first != NULL) != (second != NULL), "failures: %s, %s",
              first ? swf_error_message(first) : "none",
              second ? swf_error_message(second) : "none");
    swf_error_t *failed = first != NULL ? first : second;
    cr_assert(swf_error_retriable(failed), "%s", swf_error_message(failed));
    swf_error_free(failed);
    ok(swf_history_outbox_wait(o));
    cr_assert_str_eq(rows(db, OUTBOX_ROWS), "y/5 q");
    for (int i = 0; i < 5; i++)
        json_object_put(sched[i].attrs);
    swf_history_store_free(o);
    swf_history_store_free(s);
}
