/*
 * test_decision.c - the decision-task builder (decider/decision.c) that
 * swf-decider and `swf run --local` share: what a decision task records,
 * when one is scheduled, how cancelled activities are closed, and that
 * what it builds replays.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "decider/decision.h"
#include "protocol/json.h"
#include "tests/json_text.h"

/* One execution under test: its state, a builder over it, and the events
 * built. */
typedef struct run {
    swf_decider_decision_t b;
    swf_event_list_t events;
    swf_decider_state_t *st;
} run_t;

/* WorkflowExecutionStarted of `def` applied, the builder at time 1000. */
static void started(run_t *r, const char *def)
{
    memset(r, 0, sizeof(*r));
    r->st = swf_decider_state_new(NULL);
    swf_decider_decision_init(&r->b, r->st, &r->events, 1000, "test-decider");
    json_object *a = json_object_new_object();
    swf_json_add(a, "definition", json_text(def));
    swf_json_add(a, "input", json_text("{\"x\":1}"));
    cr_assert_null(swf_decider_decision_add(&r->b, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, a));
}

static void run_free(run_t *r)
{
    swf_event_list_free(&r->events);
    swf_decider_state_free(r->st);
}

static void expect_types(const swf_event_list_t *events, const swf_event_type_t *types, size_t n)
{
    cr_assert_eq(events->count, n, "%zu events, expected %zu", events->count, n);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(events->items[i].type, types[i], "event %zu is %s, expected %s", i,
                     swf_event_type_name(events->items[i].type), swf_event_type_name(types[i]));
        cr_assert_eq(events->items[i].id, (int64_t)i + 1);
    }
}

/* The events replay through a fresh interpreter without complaint. */
static void expect_replays(const swf_event_list_t *events)
{
    swf_asl_exec_t *ex = swf_asl_exec_new();
    for (size_t i = 0; i < events->count; i++) {
        swf_error_t *err = swf_asl_exec_apply(ex, &events->items[i]);
        cr_assert_null(err, "event %zu: %s", i + 1, swf_error_message(err));
    }
    swf_asl_exec_free(ex);
}

static const char PASS[] =
    "{\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Pass\",\"End\":true}}}";

Test(decider_decision, a_woken_execution_gets_a_decision_task_with_its_decisions)
{
    run_t r;
    started(&r, PASS);
    cr_assert_null(swf_decider_decision_run(&r.b, true, 16));
    static const swf_event_type_t want[] = {
        SWF_EVENT_WORKFLOW_EXECUTION_STARTED, SWF_EVENT_DECISION_TASK_SCHEDULED,
        SWF_EVENT_DECISION_TASK_STARTED, SWF_EVENT_DECISION_TASK_COMPLETED,
        SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED};
    expect_types(&r.events, want, 5);
    cr_assert_eq(r.b.tasks, 1);
    cr_assert_str_eq(swf_json_get_string(r.events.items[2].attrs, "identity"), "test-decider");
    json_object *v;
    cr_assert(swf_json_get(r.events.items[4].attrs, "decisionTaskCompletedEventId", &v));
    cr_assert_eq(json_object_get_int64(v), 4);
    for (size_t i = 0; i < r.events.count; i++)
        cr_assert_eq(r.events.items[i].time_ms, 1000, "every event has the builder's time");
    cr_assert_eq(swf_asl_exec_status(r.st->exec), SWF_ASL_SUCCEEDED);
    expect_replays(&r.events);
    run_free(&r);
}

Test(decider_decision, nothing_is_decided_when_nothing_woke_the_execution)
{
    run_t r;
    started(&r, PASS);
    cr_assert_null(swf_decider_decision_run(&r.b, false, 16));
    cr_assert_eq(r.events.count, 1);
    cr_assert_eq(r.b.tasks, 0);
    run_free(&r);
}

Test(decider_decision, a_decision_task_left_started_is_timed_out_and_decided_again)
{
    run_t r;
    started(&r, PASS);
    cr_assert_null(swf_decider_decision_add(&r.b, SWF_EVENT_DECISION_TASK_SCHEDULED,
                                            json_object_new_object()));
    json_object *a = json_object_new_object();
    swf_json_add(a, "scheduledEventId", json_object_new_int64(2));
    cr_assert_null(swf_decider_decision_add(&r.b, SWF_EVENT_DECISION_TASK_STARTED, a));
    cr_assert_null(swf_decider_decision_run(&r.b, false, 16));
    static const swf_event_type_t want[] = {
        SWF_EVENT_WORKFLOW_EXECUTION_STARTED, SWF_EVENT_DECISION_TASK_SCHEDULED,
        SWF_EVENT_DECISION_TASK_STARTED,      SWF_EVENT_DECISION_TASK_TIMED_OUT,
        SWF_EVENT_DECISION_TASK_SCHEDULED,    SWF_EVENT_DECISION_TASK_STARTED,
        SWF_EVENT_DECISION_TASK_COMPLETED,    SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED};
    expect_types(&r.events, want, 8);
    expect_replays(&r.events);
    run_free(&r);
}

/* Branch A waits for an activity; branch B fails after a Wait, which
 * cancels A's activity while the catcher goes on to a Wait of its own. */
static const char PARALLEL[] =
    "{\"StartAt\":\"Par\",\"States\":{\"Caught\":{\"Type\":\"Wait\",\"Seconds\":10,\"End\":true},"
    "\"Par\":{\"Type\":\"Parallel\",\"Next\":\"Caught\","
    "\"Catch\":[{\"ErrorEquals\":[\"States.ALL\"],\"Next\":\"Caught\"}],"
    "\"Branches\":["
    "{\"StartAt\":\"T\",\"States\":{\"T\":{\"Type\":\"Task\",\"Resource\":\"work\","
    "\"End\":true}}},"
    "{\"StartAt\":\"W\",\"States\":{\"W\":{\"Type\":\"Wait\",\"Seconds\":5,\"Next\":\"F\"},"
    "\"F\":{\"Type\":\"Fail\",\"Error\":\"Boom\"}}}]}}}";

Test(decider_decision, a_cancelled_activity_is_closed_by_the_decider_and_decided_on_at_once)
{
    run_t r;
    started(&r, PARALLEL);
    cr_assert_null(swf_decider_decision_run(&r.b, true, 16));
    /* the activity is scheduled, the timer started */
    const char *timer = NULL;
    int64_t timer_started = 0;
    for (size_t i = 0; i < r.events.count; i++) {
        if (r.events.items[i].type == SWF_EVENT_TIMER_STARTED) {
            timer = swf_json_get_string(r.events.items[i].attrs, "timerId");
            timer_started = r.events.items[i].id;
        }
    }
    cr_assert_not_null(timer);
    size_t before = r.events.count;
    json_object *a = json_object_new_object();
    swf_json_add(a, "timerId", json_object_new_string(timer));
    swf_json_add(a, "startedEventId", json_object_new_int64(timer_started));
    cr_assert_null(swf_decider_decision_add(&r.b, SWF_EVENT_TIMER_FIRED, a));
    cr_assert_null(swf_decider_decision_run(&r.b, true, 16));
    cr_assert_eq(r.b.tasks, 3, "the first task, the one the timer woke, the one after the close");
    size_t canceled = 0, requested = 0;
    for (size_t i = before; i < r.events.count; i++) {
        const swf_event_t *ev = &r.events.items[i];
        if (ev->type == SWF_EVENT_ACTIVITY_TASK_CANCEL_REQUESTED) {
            requested = i;
        } else if (ev->type == SWF_EVENT_ACTIVITY_TASK_CANCELED) {
            canceled = i;
            cr_assert_str_eq(swf_json_get_string(ev->attrs, "details"),
                             SWF_DECIDER_CANCELED_DETAILS);
            cr_assert_eq(r.events.items[i + 1].type, SWF_EVENT_DECISION_TASK_SCHEDULED,
                         "a new decision task follows the close");
        }
    }
    cr_assert(requested > 0 && canceled > requested);
    cr_assert_eq(swf_asl_exec_status(r.st->exec), SWF_ASL_RUNNING, "waiting in Caught");
    cr_assert(r.st->activities == NULL || json_object_object_length(r.st->activities) == 0,
              "no activity is left open");
    expect_replays(&r.events);
    run_free(&r);
}

Test(decider_decision, at_most_max_tasks_run_and_the_next_stays_scheduled)
{
    run_t r;
    started(&r, PASS);
    cr_assert_null(swf_decider_decision_run(&r.b, true, 0));
    cr_assert_eq(r.b.tasks, 0);
    cr_assert_eq(r.events.count, 2);
    cr_assert_eq(r.st->decision_scheduled_id, 2);
    cr_assert_null(swf_decider_decision_run(&r.b, false, 1));
    cr_assert_eq(r.b.tasks, 1);
    cr_assert_eq(swf_asl_exec_status(r.st->exec), SWF_ASL_SUCCEEDED);
    run_free(&r);
}

Test(decider_decision, a_closed_execution_gets_no_decision_task)
{
    run_t r;
    started(&r, PASS);
    json_object *a = json_object_new_object();
    swf_json_add(a, "reason", json_object_new_string("stop"));
    cr_assert_null(swf_decider_decision_add(&r.b, SWF_EVENT_WORKFLOW_EXECUTION_TERMINATED, a));
    cr_assert_null(swf_decider_decision_run(&r.b, true, 16));
    cr_assert_eq(r.events.count, 2);
    cr_assert_eq(r.b.tasks, 0);
    run_free(&r);
}

/* ---- the development clock (SWF_DEV_TIME_SKIP) --------------------------- */

static const char WAIT_THEN_TASK[] =
    "{\"StartAt\":\"W\",\"States\":{\"W\":{\"Type\":\"Wait\",\"Seconds\":3600,\"Next\":\"T\"},"
    "\"T\":{\"Type\":\"Task\",\"Resource\":\"work\",\"End\":true}}}";

static const swf_event_t *last_of(const swf_event_list_t *events, swf_event_type_t type)
{
    for (size_t i = events->count; i > 0; i--) {
        if (events->items[i - 1].type == type)
            return &events->items[i - 1];
    }
    cr_assert_fail("no %s", swf_event_type_name(type));
    return NULL;
}

/* Applies the batch's events to a history kept across builders. */
static void keep(swf_event_list_t *history, const swf_event_list_t *batch)
{
    for (size_t i = 0; i < batch->count; i++)
        swf_event_list_push_copy(history, &batch->items[i]);
}

Test(decider_decision, under_time_skip_a_timer_fired_early_is_recorded_at_its_deadline)
{
    run_t r;
    swf_event_list_t history = {0};
    started(&r, WAIT_THEN_TASK);
    /* the first decision task comes 40 ms later on the wall clock: the
     * execution waited for the system only, so its clock stood still */
    cr_assert_null(swf_decider_decision_run(&r.b, true, 16));
    keep(&history, &r.events);
    swf_decider_decision_init(&r.b, r.st, &r.events, 1040, "d");
    swf_decider_decision_skip(&r.b, 1040);
    cr_assert_eq(r.b.now_ms, 1000, "no activity in flight: the clock stands still");
    /* swf-history fires the idle execution's timer at once, 65 ms in */
    const swf_event_t *ts = last_of(&history, SWF_EVENT_TIMER_STARTED);
    swf_decider_decision_init(&r.b, r.st, &r.events, 1065, "d");
    swf_decider_decision_skip(&r.b, 1065);
    json_object *a = json_object_new_object();
    swf_json_add(a, "timerId", json_object_new_string(swf_json_get_string(ts->attrs, "timerId")));
    swf_json_add(a, "startedEventId", json_object_new_int64(ts->id));
    cr_assert_null(swf_decider_decision_add(&r.b, SWF_EVENT_TIMER_FIRED, a));
    cr_assert_null(swf_decider_decision_run(&r.b, true, 16));
    const swf_event_t *fired = last_of(&r.events, SWF_EVENT_TIMER_FIRED);
    cr_assert_eq(fired->time_ms, 1000 + 3600000, "at the timer's deadline, as --local has it");
    json_object *v;
    cr_assert(swf_json_get(fired->attrs, "clockOffsetMs", &v), "the jump is in the history");
    cr_assert_eq(json_object_get_int64(v), 1000 + 3600000 - 1065);
    cr_assert_eq(r.st->clock_offset_ms, 1000 + 3600000 - 1065);
    const swf_event_t *sched = last_of(&r.events, SWF_EVENT_ACTIVITY_TASK_SCHEDULED);
    cr_assert_eq(sched->time_ms, 1000 + 3600000, "the next state entered an hour later");
    keep(&history, &r.events);
    /* the activity's answer, 250 ms of real work later: the clock ran */
    swf_decider_decision_init(&r.b, r.st, &r.events, 1065 + 250, "d");
    swf_decider_decision_skip(&r.b, 1065 + 250);
    cr_assert_eq(r.b.now_ms, 1000 + 3600000 + 250, "an activity in flight: real time counts");
    keep(&history, &r.events);
    expect_replays(&history);
    swf_event_list_free(&history);
    run_free(&r);
}

Test(decider_decision, without_time_skip_events_take_the_callers_time_and_no_offset)
{
    run_t r;
    started(&r, WAIT_THEN_TASK);
    cr_assert_null(swf_decider_decision_run(&r.b, true, 16));
    const swf_event_t *ts = last_of(&r.events, SWF_EVENT_TIMER_STARTED);
    int64_t timer_started = ts->id;
    char timer[32];
    snprintf(timer, sizeof(timer), "%s", swf_json_get_string(ts->attrs, "timerId"));
    swf_decider_decision_init(&r.b, r.st, &r.events, 1065, "d");
    json_object *a = json_object_new_object();
    swf_json_add(a, "timerId", json_object_new_string(timer));
    swf_json_add(a, "startedEventId", json_object_new_int64(timer_started));
    cr_assert_null(swf_decider_decision_add(&r.b, SWF_EVENT_TIMER_FIRED, a));
    cr_assert_eq(r.events.items[0].time_ms, 1065);
    json_object *v;
    cr_assert_not(swf_json_get(r.events.items[0].attrs, "clockOffsetMs", &v));
    run_free(&r);
}
