/*
 * test_local.c - runs whole executions in-process (decider/local.c) and
 * proves that the history they leave replays to the same decisions, and that
 * an altered history is caught at the exact event.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decider/asl/exec.h"
#include "decider/local.h"
#include "history/store.h"
#include "protocol/json.h"
#include "protocol/limits.h"

static json_object *parse(const char *text)
{
    json_object *v = NULL;
    swf_error_t *err = swf_json_parse(text, strlen(text), 1 << 20, &v);
    cr_assert_null(err, "bad test JSON: %s", swf_error_message(err));
    return v;
}

typedef struct run {
    swf_history_store_t *store;
    swf_local_result_t res;
    swf_event_list_t events;
} run_t;

static void run_machine(run_t *r, const char *def, const char *input, const char *mocks)
{
    memset(r, 0, sizeof(*r));
    json_object *d = parse(def), *in = parse(input), *m = mocks ? parse(mocks) : NULL;
    r->store = swf_history_mem_new();
    swf_local_options_t opt = {.definition = d,
                               .input = in,
                               .mocks = m,
                               .execution_id = "test-1",
                               .start_ms = 1700000000000};
    swf_error_t *err = swf_local_run(&opt, r->store, &r->res);
    cr_assert_null(err, "run failed: %s", swf_error_message(err));
    err = swf_history_load(r->store, "test-1", 0, 0, &r->events);
    cr_assert_null(err);
    json_object_put(d);
    json_object_put(in);
    json_object_put(m);
}

static void run_free(run_t *r)
{
    swf_local_result_free(&r->res);
    swf_event_list_free(&r->events);
    swf_history_store_free(r->store);
}

/* Replays events through a fresh interpreter; returns the first error. */
static swf_error_t *replay(const swf_event_list_t *events, swf_asl_exec_t **out)
{
    swf_asl_exec_t *ex = swf_asl_exec_new();
    swf_error_t *err = NULL;
    for (size_t i = 0; i < events->count && err == NULL; i++)
        err = swf_asl_exec_apply(ex, &events->items[i]);
    if (out)
        *out = ex;
    else
        swf_asl_exec_free(ex);
    return err;
}

static size_t count_type(const swf_event_list_t *events, swf_event_type_t t)
{
    size_t n = 0;
    for (size_t i = 0; i < events->count; i++)
        n += events->items[i].type == t;
    return n;
}

static const swf_event_t *find_type(const swf_event_list_t *events, swf_event_type_t t, int nth)
{
    for (size_t i = 0; i < events->count; i++) {
        if (events->items[i].type == t && nth-- == 0)
            return &events->items[i];
    }
    return NULL;
}

#define TASK "\"Type\":\"Task\",\"Resource\":\"arn:aws:states:us-east-1:1:activity:work\""

Test(local_run, pass_machine_succeeds_with_its_input)
{
    run_t r;
    run_machine(&r, "{\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Pass\",\"End\":true}}}",
                "{\"a\":1}", NULL);
    cr_assert_eq(r.res.status, SWF_ASL_SUCCEEDED);
    cr_assert_str_eq(swf_json_str(r.res.output), "{\"a\":1}");
    cr_assert_eq(r.events.items[0].type, SWF_EVENT_WORKFLOW_EXECUTION_STARTED);
    cr_assert_eq(r.events.items[r.events.count - 1].type, SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED);
    run_free(&r);
}

Test(local_run, task_result_comes_from_mock_and_is_recorded)
{
    run_t r;
    run_machine(&r, "{\"StartAt\":\"T\",\"States\":{\"T\":{" TASK ",\"End\":true}}}", "{}",
                "{\"T\":[{\"Return\":{\"ok\":true}}]}");
    cr_assert_eq(r.res.status, SWF_ASL_SUCCEEDED);
    cr_assert_str_eq(swf_json_str(r.res.output), "{\"ok\":true}");
    const swf_event_t *s = find_type(&r.events, SWF_EVENT_ACTIVITY_TASK_SCHEDULED, 0);
    cr_assert_not_null(s);
    json_object *type;
    cr_assert(swf_json_get(s->attrs, "activityType", &type));
    cr_assert_str_eq(swf_json_get_string(type, "name"), "work");
    cr_assert_eq(count_type(&r.events, SWF_EVENT_ACTIVITY_TASK_COMPLETED), 1);
    run_free(&r);
}

Test(local_run, uncaught_task_error_fails_execution_with_name_and_cause)
{
    run_t r;
    run_machine(&r, "{\"StartAt\":\"T\",\"States\":{\"T\":{" TASK ",\"End\":true}}}", "{}",
                "{\"T\":[{\"Throw\":{\"Error\":\"Boom\",\"Cause\":\"it broke\"}}]}");
    cr_assert_eq(r.res.status, SWF_ASL_FAILED);
    cr_assert_str_eq(r.res.error, "Boom");
    cr_assert_str_eq(r.res.cause, "it broke");
    run_free(&r);
}

Test(local_run, retry_waits_on_a_timer_with_backoff_in_virtual_time)
{
    run_t r;
    run_machine(&r,
                "{\"StartAt\":\"T\",\"States\":{\"T\":{" TASK ",\"End\":true,"
                "\"Retry\":[{\"ErrorEquals\":[\"E\"],\"IntervalSeconds\":3,\"BackoffRate\":2,"
                "\"MaxAttempts\":2}]}}}",
                "{}",
                "{\"T\":[{\"Throw\":{\"Error\":\"E\"}},{\"Throw\":{\"Error\":\"E\"}},"
                "{\"Return\":7}]}");
    cr_assert_eq(r.res.status, SWF_ASL_SUCCEEDED);
    cr_assert_str_eq(swf_json_str(r.res.output), "7");
    cr_assert_eq(count_type(&r.events, SWF_EVENT_ACTIVITY_TASK_SCHEDULED), 3);
    cr_assert_eq(count_type(&r.events, SWF_EVENT_TIMER_FIRED), 2);
    const swf_event_t *t0 = find_type(&r.events, SWF_EVENT_TIMER_STARTED, 0);
    const swf_event_t *t1 = find_type(&r.events, SWF_EVENT_TIMER_STARTED, 1);
    json_object *v;
    cr_assert(swf_json_get(t0->attrs, "startToFireTimeout", &v));
    cr_assert_eq(json_object_get_int(v), 3);
    cr_assert(swf_json_get(t1->attrs, "startToFireTimeout", &v));
    cr_assert_eq(json_object_get_int(v), 6);
    /* The clock moved by the back-off, and only virtually. */
    int64_t span = r.events.items[r.events.count - 1].time_ms - r.events.items[0].time_ms;
    cr_assert_eq(span, 9000);
    run_free(&r);
}

Test(local_run, long_wait_takes_no_real_time)
{
    run_t r;
    run_machine(&r,
                "{\"StartAt\":\"W\",\"States\":{\"W\":{\"Type\":\"Wait\",\"Seconds\":31536000,"
                "\"End\":true}}}",
                "[1]", NULL);
    cr_assert_eq(r.res.status, SWF_ASL_SUCCEEDED);
    int64_t span = r.events.items[r.events.count - 1].time_ms - r.events.items[0].time_ms;
    cr_assert_eq(span, 31536000LL * 1000);
    run_free(&r);
}

Test(local_run, execution_timeout_closes_as_timed_out)
{
    run_t r;
    run_machine(&r,
                "{\"StartAt\":\"W\",\"TimeoutSeconds\":60,\"States\":{\"W\":{\"Type\":\"Wait\","
                "\"Seconds\":3600,\"End\":true}}}",
                "{}", NULL);
    cr_assert_eq(r.res.status, SWF_ASL_TIMED_OUT);
    cr_assert_str_eq(r.res.error, "States.Timeout");
    cr_assert_eq(r.events.items[r.events.count - 1].type, SWF_EVENT_WORKFLOW_EXECUTION_TIMED_OUT);
    run_free(&r);
}

Test(local_run, parallel_branch_failure_fails_the_state)
{
    run_t r;
    run_machine(
        &r,
        "{\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Parallel\",\"End\":true,"
        "\"Branches\":[{\"StartAt\":\"A\",\"States\":{\"A\":{\"Type\":\"Pass\",\"End\":true}}},"
        "{\"StartAt\":\"B\",\"States\":{\"B\":{\"Type\":\"Fail\",\"Error\":\"X\",\"Cause\":\"c\"}}}"
        "]}}}",
        "{}", NULL);
    cr_assert_eq(r.res.status, SWF_ASL_FAILED);
    cr_assert_str_eq(r.res.error, "X");
    cr_assert_str_eq(r.res.cause, "c");
    run_free(&r);
}

Test(local_run, map_over_items_keeps_item_order)
{
    run_t r;
    run_machine(
        &r,
        "{\"StartAt\":\"M\",\"States\":{\"M\":{\"Type\":\"Map\",\"End\":true,\"MaxConcurrency\":2,"
        "\"ItemProcessor\":{\"StartAt\":\"T\",\"States\":{\"T\":{" TASK ",\"End\":true}}}}}}",
        "[1,2,3,4,5]", NULL);
    cr_assert_eq(r.res.status, SWF_ASL_SUCCEEDED);
    cr_assert_str_eq(swf_json_str(r.res.output), "[1,2,3,4,5]");
    cr_assert_eq(count_type(&r.events, SWF_EVENT_ACTIVITY_TASK_SCHEDULED), 5);
    run_free(&r);
}

Test(local_run, map_failure_starts_no_further_iteration)
{
    run_t r;
    run_machine(
        &r,
        "{\"StartAt\":\"M\",\"States\":{\"M\":{\"Type\":\"Map\",\"End\":true,\"MaxConcurrency\":1,"
        "\"ItemProcessor\":{\"StartAt\":\"T\",\"States\":{\"T\":{" TASK ",\"End\":true}}}}}}",
        "[1,2,3]", "{\"T\":[{\"Return\":1},{\"Throw\":{\"Error\":\"E\"}},{\"Return\":3}]}");
    cr_assert_eq(r.res.status, SWF_ASL_FAILED);
    cr_assert_eq(count_type(&r.events, SWF_EVENT_ACTIVITY_TASK_SCHEDULED), 2);
    run_free(&r);
}

Test(replay, recorded_history_replays_cleanly)
{
    run_t r;
    run_machine(&r,
                "{\"StartAt\":\"T\",\"States\":{\"T\":{" TASK ",\"Next\":\"W\","
                "\"Retry\":[{\"ErrorEquals\":[\"States.ALL\"],\"JitterStrategy\":\"FULL\"}]},"
                "\"W\":{\"Type\":\"Wait\",\"Seconds\":5,\"Next\":\"P\"},"
                "\"P\":{\"Type\":\"Parallel\",\"End\":true,\"Branches\":["
                "{\"StartAt\":\"A\",\"States\":{\"A\":{" TASK ",\"End\":true}}},"
                "{\"StartAt\":\"B\",\"States\":{\"B\":{" TASK ",\"End\":true}}}]}}}",
                "{\"x\":1}", "{\"T\":[{\"Throw\":{\"Error\":\"E\"}},{\"Return\":{\"y\":2}}]}");
    cr_assert_eq(r.res.status, SWF_ASL_SUCCEEDED);
    swf_asl_exec_t *ex;
    swf_error_t *err = replay(&r.events, &ex);
    cr_assert_null(err, "replay: %s", swf_error_message(err));
    cr_assert_eq(swf_asl_exec_status(ex), SWF_ASL_SUCCEEDED);
    cr_assert(swf_json_equal(swf_asl_exec_output(ex), r.res.output));
    swf_asl_exec_free(ex);
    run_free(&r);
}

Test(replay, altered_result_is_caught_at_the_next_decision)
{
    run_t r;
    run_machine(&r,
                "{\"StartAt\":\"T1\",\"States\":{\"T1\":{" TASK ",\"Next\":\"T2\"},"
                "\"T2\":{" TASK ",\"End\":true}}}",
                "{}", "{\"T1\":[{\"Return\":{\"v\":1}}]}");
    /* Change T1's recorded result: T2's recorded input no longer follows. */
    swf_event_t *done = (swf_event_t *)find_type(&r.events, SWF_EVENT_ACTIVITY_TASK_COMPLETED, 0);
    json_object *attrs = swf_json_copy(done->attrs);
    json_object_object_add(attrs, "result", parse("{\"v\":2}"));
    json_object_put(done->attrs);
    done->attrs = attrs;
    const swf_event_t *second = find_type(&r.events, SWF_EVENT_ACTIVITY_TASK_SCHEDULED, 1);
    swf_error_t *err = replay(&r.events, NULL);
    cr_assert_not_null(err);
    cr_assert_eq(swf_error_code(err), SWF_E_NONDETERMINISM);
    char want[64];
    snprintf(want, sizeof(want), "event %lld:", (long long)second->id);
    cr_assert(strstr(swf_error_message(err), want) != NULL, "%s", swf_error_message(err));
    cr_assert(strstr(swf_error_message(err), "'T2'") != NULL, "%s", swf_error_message(err));
    swf_error_free(err);
    run_free(&r);
}

Test(replay, removed_decision_event_is_caught)
{
    run_t r;
    run_machine(&r, "{\"StartAt\":\"T\",\"States\":{\"T\":{" TASK ",\"End\":true}}}", "{}", NULL);
    /* Drop the ActivityTaskScheduled event and renumber what follows. */
    const swf_event_t *s = find_type(&r.events, SWF_EVENT_ACTIVITY_TASK_SCHEDULED, 0);
    size_t at = (size_t)(s->id - 1);
    int64_t removed_id = s->id;
    json_object_put(r.events.items[at].attrs);
    memmove(&r.events.items[at], &r.events.items[at + 1],
            (r.events.count - at - 1) * sizeof(swf_event_t));
    r.events.count--;
    for (size_t i = at; i < r.events.count; i++)
        r.events.items[i].id--;
    swf_error_t *err = replay(&r.events, NULL);
    cr_assert_not_null(err);
    cr_assert_eq(swf_error_code(err), SWF_E_NONDETERMINISM);
    char want[64];
    snprintf(want, sizeof(want), "event %lld:", (long long)removed_id);
    cr_assert(strstr(swf_error_message(err), want) != NULL, "%s", swf_error_message(err));
    swf_error_free(err);
    run_free(&r);
}

Test(replay, duplicate_result_changes_nothing)
{
    run_t r;
    run_machine(&r,
                "{\"StartAt\":\"T\",\"States\":{\"T\":{" TASK ",\"Next\":\"W\"},"
                "\"W\":{\"Type\":\"Wait\",\"Seconds\":1,\"End\":true}}}",
                "{}", "{\"T\":[{\"Return\":1}]}");
    swf_asl_exec_t *ex = swf_asl_exec_new();
    /* Replay up to the timer, then deliver the activity result a second time. */
    size_t i = 0;
    const swf_event_t *done = find_type(&r.events, SWF_EVENT_ACTIVITY_TASK_COMPLETED, 0);
    for (; i < r.events.count && r.events.items[i].type != SWF_EVENT_TIMER_STARTED; i++)
        cr_assert_null(swf_asl_exec_apply(ex, &r.events.items[i]));
    cr_assert_null(swf_asl_exec_apply(ex, &r.events.items[i]));
    swf_event_t dup = *done;
    dup.id = r.events.items[i].id + 1;
    cr_assert_null(swf_asl_exec_apply(ex, &dup));
    json_object *snap = swf_asl_exec_snapshot(ex);
    json_object *timers;
    cr_assert(swf_json_get(snap, "openTimers", &timers));
    cr_assert_eq(json_object_array_length(timers), 1);
    json_object_put(snap);
    swf_asl_exec_free(ex);
    run_free(&r);
}

/* An interpreter forgets the activities and timers that closed (its memory
 * follows what is open, not the history's length), yet still knows their
 * ids: a late answer to one changes nothing, and events that name an
 * activity as a timer or a timer as an activity are refused. */
Test(replay, closed_activities_are_forgotten_but_known)
{
    run_t r;
    run_machine(&r,
                "{\"StartAt\":\"T\",\"States\":{\"T\":{" TASK ",\"Next\":\"Inc\"},"
                "\"Inc\":{\"Type\":\"Pass\",\"Parameters\":{\"i.$\":\"States.MathAdd($.i, 1)\"},"
                "\"Next\":\"C\"},\"C\":{\"Type\":\"Choice\",\"Choices\":[{\"Variable\":\"$.i\","
                "\"NumericLessThan\":300,\"Next\":\"T\"}],\"Default\":\"W\"},"
                "\"W\":{\"Type\":\"Wait\",\"Seconds\":60,\"End\":true}}}",
                "{\"i\":0}", NULL);
    cr_assert_eq(r.res.status, SWF_ASL_SUCCEEDED);
    swf_asl_exec_t *ex = swf_asl_exec_new();
    size_t i = 0;
    for (; r.events.items[i].type != SWF_EVENT_TIMER_STARTED; i++)
        cr_assert_null(swf_asl_exec_apply(ex, &r.events.items[i]));
    const swf_event_t *timer = &r.events.items[i];
    cr_assert_null(swf_asl_exec_apply(ex, timer));
    json_object *snap = swf_asl_exec_snapshot(ex), *acts, *timers;
    cr_assert(swf_json_get(snap, "openActivities", &acts));
    cr_assert(swf_json_get(snap, "openTimers", &timers));
    cr_expect_eq(json_object_array_length(acts), 0);
    cr_assert_eq(json_object_array_length(timers), 1);
    cr_expect_str_eq(swf_json_get_string(json_object_array_get_idx(timers, 0), "timerId"), "t301");
    json_object_put(snap);

    int64_t next = timer->id + 1;
    swf_event_t late = *find_type(&r.events, SWF_EVENT_ACTIVITY_TASK_COMPLETED, 0);
    late.id = next++;
    cr_expect_null(swf_asl_exec_apply(ex, &late), "a late answer to activity 1 is refused");

    json_object *a = parse("{\"scheduledEventId\":0,\"result\":1}");
    json_object_object_add(a, "scheduledEventId", json_object_new_int64(timer->id));
    swf_event_t wrong = {.id = next,
                         .type = SWF_EVENT_ACTIVITY_TASK_COMPLETED,
                         .time_ms = timer->time_ms,
                         .attrs = a};
    swf_error_t *err = swf_asl_exec_apply(ex, &wrong);
    cr_expect_not_null(err, "an answer naming a timer's event was taken");
    swf_error_free(err);
    json_object_put(a);

    swf_asl_exec_t *ex2 = swf_asl_exec_new();
    for (size_t k = 0; k <= i; k++)
        cr_assert_null(swf_asl_exec_apply(ex2, &r.events.items[k]));
    json_object *f = parse("{\"timerId\":\"t1\",\"startedEventId\":1}");
    swf_event_t fired = {
        .id = timer->id + 1, .type = SWF_EVENT_TIMER_FIRED, .time_ms = timer->time_ms, .attrs = f};
    err = swf_asl_exec_apply(ex2, &fired);
    cr_expect_not_null(err, "t1, an activity, fired as a timer");
    swf_error_free(err);
    json_object_put(f);
    swf_asl_exec_free(ex2);
    swf_asl_exec_free(ex);
    run_free(&r);
}

Test(local_run, assign_sets_variables_seen_from_the_next_state_and_in_iterations)
{
    run_t r;
    run_machine(
        &r,
        "{\"StartAt\":\"A\",\"States\":{"
        "\"A\":{\"Type\":\"Pass\",\"Assign\":{\"x\":1,\"y\":2},\"Next\":\"B\"},"
        "\"B\":{\"Type\":\"Pass\",\"Assign\":{\"x.$\":\"$y\",\"y.$\":\"$x\"},\"Next\":\"M\"},"
        "\"M\":{\"Type\":\"Map\",\"ItemsPath\":\"$.items\",\"End\":true,"
        "\"ItemProcessor\":{\"StartAt\":\"I\",\"States\":{\"I\":{\"Type\":\"Pass\","
        "\"Parameters\":{\"v.$\":\"$\",\"x.$\":\"$x\",\"y.$\":\"$y\"},\"End\":true}}}}}}",
        "{\"items\":[7]}", NULL);
    cr_assert_eq(r.res.status, SWF_ASL_SUCCEEDED, "%s %s", r.res.error, r.res.cause);
    cr_assert_str_eq(swf_json_str(r.res.output), "[{\"v\":7,\"x\":2,\"y\":1}]");
    run_free(&r);
}

Test(local_run, jsonata_task_arguments_output_and_catcher)
{
    run_t r;
    run_machine(
        &r,
        "{\"QueryLanguage\":\"JSONata\",\"StartAt\":\"T\",\"States\":{"
        "\"T\":{" TASK ",\"Arguments\":{\"n\":\"{% $states.input.n * 2 %}\"},"
        "\"Output\":\"{% $states.result.n + 1 %}\",\"Next\":\"F\"},"
        "\"F\":{" TASK ",\"Catch\":[{\"ErrorEquals\":[\"States.ALL\"],"
        "\"Output\":{\"was\":\"{% $states.input %}\",\"e\":\"{% $states.errorOutput.Error %}\"},"
        "\"Next\":\"D\"}],\"End\":true},"
        "\"D\":{\"Type\":\"Succeed\"}}}",
        "{\"n\":20}", "{\"F\":[{\"Throw\":{\"Error\":\"Nope\"}}]}");
    cr_assert_eq(r.res.status, SWF_ASL_SUCCEEDED, "%s %s", r.res.error, r.res.cause);
    cr_assert_str_eq(swf_json_str(r.res.output), "{\"was\":41,\"e\":\"Nope\"}");
    run_free(&r);
}

/* A history may not outgrow its limit: a decision that would leave too
 * little room for the answers still to come fails the execution with
 * States.Runtime, as AWS fails an execution at its history limit, instead
 * of the store refusing the append and the execution staying open. */
Test(local_run, an_endless_loop_fails_at_the_history_limit)
{
    const char *def = "{\"StartAt\":\"W\",\"States\":{"
                      "\"W\":{\"Type\":\"Wait\",\"Seconds\":1,\"Next\":\"T\"},"
                      "\"T\":{" TASK ",\"Next\":\"W\"}}}";
    json_object *d = parse(def), *in = parse("{}"), *m = parse("{\"work\":{\"return\":{}}}");
    swf_history_store_t *store = swf_history_mem_new();
    swf_local_options_t opt = {.definition = d,
                               .input = in,
                               .mocks = m,
                               .execution_id = "test-1",
                               .start_ms = 1700000000000,
                               .history_limit = 200};
    swf_local_result_t res = {0};
    swf_error_t *err = swf_local_run(&opt, store, &res);
    cr_assert_null(err, "%s", swf_error_message(err));
    cr_expect_eq(res.status, SWF_ASL_FAILED);
    cr_expect_str_eq(res.error, "States.Runtime");
    cr_expect(strstr(res.cause, "limit of 200 events") != NULL, "%s", res.cause);
    cr_log_info("failed after %lld events: %s", (long long)res.events, res.cause);
    cr_expect_leq(res.events, 200);
    cr_expect_geq(res.events, 180, "it ran until the limit was near: %lld", (long long)res.events);
    swf_event_list_t events = {0};
    cr_assert_null(swf_history_load(store, "test-1", 0, 0, &events));
    cr_expect_eq(events.items[events.count - 1].type, SWF_EVENT_WORKFLOW_EXECUTION_FAILED);
    /* Replayed with the same limit it derives the same failure... */
    swf_asl_exec_t *ex = swf_asl_exec_new();
    swf_asl_exec_set_history_limit(ex, 200);
    for (size_t i = 0; i < events.count && err == NULL; i++)
        err = swf_asl_exec_apply(ex, &events.items[i]);
    cr_expect_null(err, "%s", err ? swf_error_message(err) : "");
    swf_error_free(err);
    swf_asl_exec_free(ex);
    /* ...and with the real limit the history is not its own: the loop goes on. */
    err = replay(&events, NULL);
    cr_expect_not_null(err);
    cr_expect_eq(swf_error_code(err), SWF_E_NONDETERMINISM);
    swf_error_free(err);
    swf_event_list_free(&events);
    swf_local_result_free(&res);
    swf_history_store_free(store);
    json_object_put(d);
    json_object_put(in);
    json_object_put(m);
}

/* Runs `def` on an array of n integers; returns the result (free it). */
static swf_local_result_t run_on_items(const char *def, size_t n)
{
    json_object *d = parse(def), *in = json_object_new_array_ext((int)n);
    for (size_t i = 0; i < n; i++)
        json_object_array_add(in, json_object_new_int64((int64_t)i));
    swf_history_store_t *store = swf_history_mem_new();
    swf_local_options_t opt = {
        .definition = d, .input = in, .execution_id = "test-1", .start_ms = 1700000000000};
    swf_local_result_t res = {0};
    swf_error_t *err = swf_local_run(&opt, store, &res);
    cr_assert_null(err, "%s", swf_error_message(err));
    swf_history_store_free(store);
    json_object_put(d);
    json_object_put(in);
    return res;
}

#define PASS_MAP                                                                                   \
    "{\"StartAt\":\"M\",\"States\":{\"M\":{\"Type\":\"Map\",\"ItemProcessor\":{\"StartAt\":\"P\"," \
    "\"States\":{\"P\":{\"Type\":\"Pass\",\"End\":true}}},\"End\":true}}}"

/* The loop guard counts the transitions of each chain of states, not of the
 * whole decision: a Map at its documented item limit is not a loop. */
Test(local_run, a_map_of_exactly_the_item_limit_succeeds, .timeout = 120)
{
    /* Its output, about 7 MB, needs the state data limit raised from AWS's 256 KiB. */
    setenv("SWF_STATE_DATA_LIMIT_BYTES", "33554432", 1);
    swf_local_result_t res = run_on_items(PASS_MAP, SWF_LIMIT_MAP_ITEMS);
    unsetenv("SWF_STATE_DATA_LIMIT_BYTES");
    cr_assert_eq(res.status, SWF_ASL_SUCCEEDED, "%s: %s", res.error, res.cause);
    cr_expect_eq(json_object_array_length(res.output), SWF_LIMIT_MAP_ITEMS);
    cr_expect_eq(json_object_get_int64(json_object_array_get_idx(res.output, 999999)), 999999);
    swf_local_result_free(&res);
}

Test(local_run, a_map_of_one_item_past_the_limit_fails_naming_it)
{
    swf_local_result_t res = run_on_items(PASS_MAP, SWF_LIMIT_MAP_ITEMS + 1);
    cr_assert_eq(res.status, SWF_ASL_FAILED);
    cr_expect_str_eq(res.error, "States.Runtime");
    cr_expect_str_eq(res.cause, "the Map state 'M' has 1000001 items, the limit is 1000000");
    swf_local_result_free(&res);
}

/* A Choice whose first rule leads back to itself while $.x is 1. */
static const char choice_loop[] =
    "{\"StartAt\":\"C\",\"States\":{\"C\":{\"Type\":\"Choice\",\"Choices\":[{"
    "\"Variable\":\"$.x\",\"NumericEquals\":1,\"Next\":\"C\"}],\"Default\":\"D\"},"
    "\"D\":{\"Type\":\"Succeed\"}}}";

Test(local_run, a_choice_looping_on_itself_fails_as_a_loop, .timeout = 120)
{
    run_t r;
    run_machine(&r, choice_loop, "{\"x\":1}", NULL);
    cr_assert_eq(r.res.status, SWF_ASL_FAILED);
    cr_expect_str_eq(r.res.error, "States.Runtime");
    cr_expect(strstr(r.res.cause, "is there a loop without a Wait or a Task?") != NULL, "%s",
              r.res.cause);
    run_free(&r);
}

/* The first ActivityTaskScheduled's task list of a local run, and the
 * WorkflowExecutionStarted attributes (a new reference). */
static char *run_first_list(const char *def, json_object **started)
{
    json_object *d = parse(def), *in = parse("{}");
    swf_history_store_t *store = swf_history_mem_new();
    swf_local_options_t opt = {
        .definition = d, .input = in, .execution_id = "tl-1", .start_ms = 1700000000000};
    swf_local_result_t res;
    swf_error_t *err = swf_local_run(&opt, store, &res);
    cr_assert_null(err, "run failed: %s", swf_error_message(err));
    swf_event_list_t events = {0};
    cr_assert_null(swf_history_load(store, "tl-1", 0, 0, &events));
    char *list = NULL;
    *started = json_object_get(events.items[0].attrs);
    for (size_t i = 0; i < events.count && list == NULL; i++) {
        json_object *tl;
        if (events.items[i].type == SWF_EVENT_ACTIVITY_TASK_SCHEDULED &&
            swf_json_get(events.items[i].attrs, "taskList", &tl))
            list = strdup(swf_json_get_string(tl, "name"));
    }
    swf_event_list_free(&events);
    swf_local_result_free(&res);
    swf_history_store_free(store);
    json_object_put(d);
    json_object_put(in);
    return list;
}

#define INVOKE                                                                                     \
    "{\"StartAt\":\"T\",\"States\":{\"T\":{\"Type\":\"Task\",\"Resource\":"                        \
    "\"arn:aws:states:::lambda:invoke\",\"Parameters\":{\"FunctionName\":\"Charge\"},"             \
    "\"End\":true}}}"

Test(local_run, a_new_execution_records_the_rule_and_the_map_it_uses)
{
    json_object *started;
    unsetenv("SWF_TASK_LIST_MAP");
    char *list = run_first_list(INVOKE, &started);
    cr_expect_str_eq(list, "Charge");
    json_object *rule;
    cr_expect(swf_json_get(started, "taskListRule", &rule) && json_object_get_int(rule) == 2);
    json_object *none;
    cr_expect(!swf_json_get(started, "taskListMap", &none));
    free(list);
    json_object_put(started);

    char path[] = "/tmp/swf-tlmap-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs("{\"Charge\":\"payments\"}", f);
    fclose(f);
    setenv("SWF_TASK_LIST_MAP", path, 1);
    list = run_first_list(INVOKE, &started);
    unsetenv("SWF_TASK_LIST_MAP");
    unlink(path);
    cr_expect_str_eq(list, "payments");
    json_object *map;
    cr_expect(swf_json_get(started, "taskListMap", &map) &&
              strcmp(swf_json_get_string(map, "Charge"), "payments") == 0);
    free(list);
    json_object_put(started);
}

#define GROW(bytes)                                                                                \
    "{\"QueryLanguage\":\"JSONata\",\"StartAt\":\"Grow\",\"States\":{\"Grow\":{\"Type\":"          \
    "\"Pass\",\"Output\":\"{% {'blob': $pad('', " bytes ", 'x')} %}\",\"Next\":\"Send\"},"         \
    "\"Send\":{\"Type\":\"Task\",\"Resource\":\"arn:aws:states:::activity:big\",\"End\":true}}}"

/* AWS's 256 KiB per state by default; SWF_STATE_DATA_LIMIT_BYTES raises it,
 * up to the 960 KiB an activity task can carry. */
Test(local_run, a_state_output_past_the_data_limit_fails_unless_the_deployment_raises_it)
{
    run_t r;
    unsetenv("SWF_STATE_DATA_LIMIT_BYTES");
    run_machine(&r, GROW("300000"), "{}", NULL);
    cr_expect_eq(r.res.status, SWF_ASL_FAILED);
    cr_expect_str_eq(r.res.error, "States.DataLimitExceeded");
    cr_expect(strstr(r.res.cause, "the limit is 262144") != NULL, "%s", r.res.cause);
    json_object *limit;
    cr_expect(swf_json_get(r.events.items[0].attrs, "stateDataLimit", &limit) &&
              json_object_get_int64(limit) == 262144);
    run_free(&r);

    setenv("SWF_STATE_DATA_LIMIT_BYTES", "2000000", 1);
    run_machine(&r, GROW("300000"), "{}", NULL);
    cr_expect_eq(r.res.status, SWF_ASL_SUCCEEDED, "%s", r.res.cause);
    run_free(&r);
    /* Past the activity task's own limit, the Task fails before scheduling. */
    run_machine(&r, GROW("1000000"), "{}", NULL);
    unsetenv("SWF_STATE_DATA_LIMIT_BYTES");
    cr_expect_eq(r.res.status, SWF_ASL_FAILED);
    cr_expect_str_eq(r.res.error, "States.DataLimitExceeded");
    cr_expect(strstr(r.res.cause, "an activity task carries at most") != NULL, "%s", r.res.cause);
    run_free(&r);

    setenv("SWF_STATE_DATA_LIMIT_BYTES", "lots", 1);
    json_object *d = parse(GROW("1")), *in = parse("{}");
    swf_history_store_t *store = swf_history_mem_new();
    swf_local_options_t opt = {
        .definition = d, .input = in, .execution_id = "dl-1", .start_ms = 1700000000000};
    swf_local_result_t res;
    swf_error_t *err = swf_local_run(&opt, store, &res);
    unsetenv("SWF_STATE_DATA_LIMIT_BYTES");
    cr_expect_not_null(err);
    if (err)
        cr_expect(strstr(swf_error_message(err), "SWF_STATE_DATA_LIMIT_BYTES is 'lots'") != NULL);
    swf_error_free(err);
    swf_history_store_free(store);
    json_object_put(d);
    json_object_put(in);
}
