/*
 * test_nested.c - the shapes of nested executions (decider/nested.c): the
 * request a startExecution Task makes, the answers its parent gets, and the
 * links read from a history; and whole nested runs of swf run --local,
 * whose histories replay.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decider/asl/exec.h"
#include "decider/local.h"
#include "decider/nested.h"
#include "history/store.h"
#include "protocol/json.h"

static json_object *parse(const char *text)
{
    json_object *v = NULL;
    swf_error_t *err = swf_json_parse(text, strlen(text), 1 << 20, &v);
    cr_assert_null(err, "bad test JSON: %s", swf_error_message(err));
    return v;
}

Test(nested_pattern, the_four_resources_and_nothing_else)
{
    cr_expect_eq(swf_nested_pattern("arn:aws:states:::states:startExecution"), SWF_NESTED_REQUEST);
    cr_expect_eq(swf_nested_pattern("arn:aws:states:::states:startExecution.sync"),
                 SWF_NESTED_SYNC);
    cr_expect_eq(swf_nested_pattern("arn:aws:states:::states:startExecution.sync:2"),
                 SWF_NESTED_SYNC2);
    cr_expect_eq(swf_nested_pattern("arn:aws:states:::states:startExecution.waitForTaskToken"),
                 SWF_NESTED_CALLBACK);
    cr_expect_eq(swf_nested_pattern("arn:aws:states:::states:startExecution.sync:3"),
                 SWF_NESTED_NONE);
    cr_expect_eq(swf_nested_pattern("arn:aws:states:::lambda:invoke"), SWF_NESTED_NONE);
    cr_expect_eq(swf_nested_pattern(NULL), SWF_NESTED_NONE);
}

/* Reads params and returns the error's name, or NULL (then *req is set). */
static const char *read_request(const char *params, swf_nested_request_t *req)
{
    static char name[128];
    json_object *p = parse(params);
    swf_error_t *err = swf_nested_request_read(p, "parent-1", "4", req);
    json_object_put(p);
    if (err == NULL)
        return NULL;
    snprintf(name, sizeof(name), "%s", swf_error_name(err));
    swf_error_free(err);
    return name;
}

Test(nested_request, takes_an_arn_a_version_or_a_bare_name)
{
    swf_nested_request_t req;
    cr_assert_null(read_request("{\"StateMachineArn\":\"arn:aws:states:eu-west-1:1:stateMachine:"
                                "Pay\",\"Input\":{\"a\":1}}",
                                &req));
    cr_expect_str_eq(req.machine, "Pay");
    cr_expect_eq(req.version, 0);
    cr_expect_str_eq(req.name, "parent-1-4", "the default name is the parent's and the task's");
    cr_expect_str_eq(swf_json_str(req.input), "{\"a\":1}");
    swf_nested_request_clear(&req);
    cr_assert_null(read_request("{\"StateMachineArn\":\"arn:aws:states:eu-west-1:1:stateMachine:"
                                "Pay:3\",\"Input\":\"{\\\"b\\\": 2}\",\"Name\":\"pay-7\"}",
                                &req));
    cr_expect_str_eq(req.machine, "Pay");
    cr_expect_eq(req.version, 3);
    cr_expect_str_eq(req.name, "pay-7");
    cr_expect_str_eq(swf_json_str(req.input), "{\"b\":2}", "a string Input is parsed");
    swf_nested_request_clear(&req);
    cr_assert_null(read_request("{\"StateMachineArn\":\"Pay\"}", &req));
    cr_expect_str_eq(req.machine, "Pay");
    cr_expect_str_eq(swf_json_str(req.input), "{}", "no Input is {}");
    swf_nested_request_clear(&req);
}

Test(nested_request, refuses_what_aws_refuses_with_its_error_names)
{
    swf_nested_request_t req;
    cr_expect_str_eq(read_request("{\"Input\":{}}", &req), "StepFunctions.ValidationException");
    cr_expect_str_eq(read_request("{\"StateMachineArn\":\"arn:aws:states:x:1:activity:A\"}", &req),
                     "StepFunctions.InvalidArnException");
    cr_expect_str_eq(read_request("{\"StateMachineArn\":\"arn:aws:states:x:1:stateMachine:A:"
                                  "prod\"}",
                                  &req),
                     "StepFunctions.InvalidArnException", "an alias is not run");
    cr_expect_str_eq(read_request("{\"StateMachineArn\":\"A\",\"Name\":\"a b\"}", &req),
                     "StepFunctions.InvalidNameException");
    cr_expect_str_eq(read_request("{\"StateMachineArn\":\"A\",\"Input\":\"{oops\"}", &req),
                     "StepFunctions.InvalidExecutionInput");
    cr_expect_str_eq(read_request("{\"StateMachineArn\":\"A\",\"Input\":[1]}", &req),
                     "StepFunctions.InvalidExecutionInput");
}

Test(nested_request, a_long_parent_id_gives_a_digest_name_the_same_every_time)
{
    char parent[90];
    memset(parent, 'p', sizeof(parent) - 1);
    parent[sizeof(parent) - 1] = '\0';
    json_object *p = parse("{\"StateMachineArn\":\"A\"}");
    swf_nested_request_t a, b, c;
    cr_assert_null(swf_nested_request_read(p, parent, "1", &a));
    cr_assert_null(swf_nested_request_read(p, parent, "1", &b));
    cr_assert_null(swf_nested_request_read(p, parent, "2", &c));
    cr_expect_leq(strlen(a.name), SWF_NESTED_NAME_BYTES);
    cr_expect_str_eq(a.name, b.name);
    cr_expect_str_neq(a.name, c.name);
    swf_nested_request_clear(&a);
    swf_nested_request_clear(&b);
    swf_nested_request_clear(&c);
    json_object_put(p);
}

Test(nested_answer, request_response_is_the_arn_and_the_start_date)
{
    json_object *r = swf_nested_started_result("Pay", "pay-7", 1700000000123);
    cr_expect_str_eq(swf_json_str(r), "{\"ExecutionArn\":\"arn:aws:states:local:000000000000:"
                                      "execution:Pay:pay-7\",\"StartDate\":1700000000123}");
    json_object_put(r);
}

Test(nested_answer, sync_gives_strings_and_sync2_json)
{
    json_object *in = parse("{\"n\":1}"), *out = parse("{\"m\":[2]}");
    swf_nested_child_t c = {.machine = "Pay",
                            .id = "pay-7",
                            .input = in,
                            .start_ms = 1000,
                            .stop_ms = 2000,
                            .status = "SUCCEEDED",
                            .output = out};
    json_object *r;
    const char *error;
    char *cause;
    swf_nested_close_answer(SWF_NESTED_SYNC, &c, &r, &error, &cause);
    cr_assert_null(error);
    cr_expect_str_eq(swf_json_get_string(r, "Output"), "{\"m\":[2]}");
    cr_expect_str_eq(swf_json_get_string(r, "Input"), "{\"n\":1}");
    cr_expect_str_eq(swf_json_get_string(r, "Status"), "SUCCEEDED");
    cr_expect_str_eq(swf_json_get_string(r, "StateMachineArn"),
                     "arn:aws:states:local:000000000000:stateMachine:Pay");
    json_object_put(r);
    swf_nested_close_answer(SWF_NESTED_SYNC2, &c, &r, &error, &cause);
    json_object *v;
    cr_assert(swf_json_get(r, "Output", &v));
    cr_expect(swf_json_equal(v, out));
    cr_assert(swf_json_get(r, "StopDate", &v));
    cr_expect_eq(json_object_get_int64(v), 2000);
    json_object_put(r);
    json_object_put(in);
    json_object_put(out);
}

Test(nested_answer, a_child_that_did_not_succeed_fails_the_task_with_its_execution_as_cause)
{
    json_object *in = parse("{}");
    swf_nested_child_t c = {.machine = "Pay",
                            .id = "pay-7",
                            .input = in,
                            .status = "FAILED",
                            .error = "Card.Declined",
                            .cause = "expired"};
    json_object *r;
    const char *error;
    char *cause;
    swf_nested_close_answer(SWF_NESTED_SYNC2, &c, &r, &error, &cause);
    cr_assert_null(r);
    cr_expect_str_eq(error, "States.TaskFailed");
    json_object *d = parse(cause);
    cr_expect_str_eq(swf_json_get_string(d, "Status"), "FAILED");
    cr_expect_str_eq(swf_json_get_string(d, "Error"), "Card.Declined");
    cr_expect_str_eq(swf_json_get_string(d, "Cause"), "expired");
    cr_expect_null(json_object_object_get(d, "Output"));
    json_object_put(d);
    free(cause);
    json_object_put(in);
}

/* ---- swf run --local ------------------------------------------------------- */

/* The folder of the child machines: one per test process. */
static char dir[64];

/* Writes DIR/NAME.asl.json. */
static void write_machine(const char *name, const char *text)
{
    if (dir[0] == '\0') {
        snprintf(dir, sizeof(dir), "/tmp/swf-test-nested-XXXXXX");
        cr_assert_not_null(mkdtemp(dir));
    }
    char path[256];
    snprintf(path, sizeof(path), "%s/%s.asl.json", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static void remove_machine(const char *name)
{
    char path[256];
    snprintf(path, sizeof(path), "%s/%s.asl.json", dir, name);
    remove(path);
    rmdir(dir);
}

/* Runs def (children looked for in DIR) and returns the store. */
static swf_history_store_t *run_local(const char *def, const char *mocks, swf_local_result_t *res)
{
    json_object *d = parse(def), *in = parse("{\"n\":5}"), *m = mocks ? parse(mocks) : NULL;
    swf_history_store_t *store = swf_history_mem_new();
    swf_local_options_t opt = {.definition = d,
                               .input = in,
                               .mocks = m,
                               .execution_id = "top",
                               .machine_dir = dir,
                               .start_ms = 1700000000000};
    swf_error_t *err = swf_local_run(&opt, store, res);
    cr_assert_null(err, "%s", swf_error_message(err));
    json_object_put(d);
    json_object_put(in);
    json_object_put(m);
    return store;
}

/* Replays an execution's stored history; returns its status. */
static swf_asl_status_t replay(swf_history_store_t *store, const char *id, swf_event_list_t *events)
{
    cr_assert_null(swf_history_load(store, id, 0, 0, events));
    swf_asl_exec_t *exec = swf_asl_exec_new();
    for (size_t i = 0; i < events->count; i++) {
        swf_error_t *err = swf_asl_exec_apply(exec, &events->items[i]);
        cr_assert_null(err, "%s event %zu: %s", id, i + 1, swf_error_message(err));
    }
    cr_assert_null(swf_asl_exec_check_end(exec));
    swf_asl_status_t st = swf_asl_exec_status(exec);
    swf_asl_exec_free(exec);
    return st;
}

Test(nested_local, the_child_runs_in_the_same_store_and_both_histories_replay_and_link)
{
    write_machine("SwfTestNestedChild",
                  "{\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Pass\",\"Parameters\":{"
                  "\"m.$\":\"States.MathAdd($.n, 1)\"},\"End\":true}}}");
    swf_local_result_t res;
    swf_history_store_t *store = run_local(
        "{\"StartAt\":\"C\",\"States\":{\"C\":{\"Type\":\"Task\",\"Resource\":"
        "\"arn:aws:states:::states:startExecution.sync:2\",\"Parameters\":{\"StateMachineArn\":"
        "\"SwfTestNestedChild\",\"Input\":{\"n.$\":\"$.n\"}},\"OutputPath\":\"$.Output\","
        "\"End\":true}}}",
        NULL, &res);
    cr_assert_eq(res.status, SWF_ASL_SUCCEEDED, "%s %s", res.error, res.cause);
    cr_expect_str_eq(swf_json_str(res.output), "{\"m\":6}");
    swf_event_list_t parent = {0}, child = {0};
    cr_expect_eq(replay(store, "top", &parent), SWF_ASL_SUCCEEDED);
    cr_expect_eq(replay(store, "top-1", &child), SWF_ASL_SUCCEEDED);
    json_object *links = swf_nested_links(&parent), *kids, *p;
    cr_assert(swf_json_get(links, "children", &kids));
    cr_assert_eq(json_object_array_length(kids), 1);
    cr_expect_str_eq(swf_json_get_string(json_object_array_get_idx(kids, 0), "executionId"),
                     "top-1");
    json_object_put(links);
    links = swf_nested_links(&child);
    cr_assert(swf_json_get(links, "parent", &p));
    cr_expect_str_eq(swf_json_get_string(p, "executionId"), "top");
    json_object_put(links);
    swf_event_list_free(&parent);
    swf_event_list_free(&child);
    swf_local_result_free(&res);
    swf_history_store_free(store);
    remove_machine("SwfTestNestedChild");
}

Test(nested_local, a_callback_is_answered_by_its_mock_and_a_missing_machine_fails_the_task)
{
    write_machine("SwfTestNestedCb",
                  "{\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Pass\",\"End\":true}}}");
    swf_local_result_t res;
    swf_history_store_t *store = run_local(
        "{\"StartAt\":\"C\",\"States\":{\"C\":{\"Type\":\"Task\",\"Resource\":"
        "\"arn:aws:states:::states:startExecution.waitForTaskToken\",\"Parameters\":{"
        "\"StateMachineArn\":\"SwfTestNestedCb\",\"Input\":{\"t.$\":\"$$.Task.Token\"}},"
        "\"Next\":\"M\"},\"M\":{\"Type\":\"Task\",\"Resource\":"
        "\"arn:aws:states:::states:startExecution.sync\",\"Parameters\":{\"StateMachineArn\":"
        "\"SwfTestNoSuchMachine\"},\"End\":true}}}",
        "{\"C\":[{\"Return\":{\"approved\":true}}]}", &res);
    cr_assert_eq(res.status, SWF_ASL_FAILED);
    cr_expect_str_eq(res.error, "StepFunctions.StateMachineDoesNotExistException");
    swf_event_list_t parent = {0};
    cr_expect_eq(replay(store, "top", &parent), SWF_ASL_FAILED);
    int completed = 0;
    for (size_t i = 0; i < parent.count; i++) {
        json_object *r;
        if (parent.items[i].type == SWF_EVENT_ACTIVITY_TASK_COMPLETED &&
            swf_json_get(parent.items[i].attrs, "result", &r)) {
            cr_expect_str_eq(swf_json_str(r), "{\"approved\":true}");
            completed++;
        }
    }
    cr_expect_eq(completed, 1);
    swf_event_list_free(&parent);
    swf_local_result_free(&res);
    swf_history_store_free(store);
    remove_machine("SwfTestNestedCb");
}

Test(nested_local, the_tasks_timeout_ends_the_wait_and_stops_the_child)
{
    write_machine("SwfTestNestedHour",
                  "{\"StartAt\":\"W\",\"States\":{\"W\":{\"Type\":\"Wait\",\"Seconds\":3600,"
                  "\"End\":true}}}");
    swf_local_result_t res;
    swf_history_store_t *store = run_local(
        "{\"StartAt\":\"C\",\"States\":{\"C\":{\"Type\":\"Task\",\"Resource\":"
        "\"arn:aws:states:::states:startExecution.sync\",\"TimeoutSeconds\":5,\"Parameters\":{"
        "\"StateMachineArn\":\"SwfTestNestedHour\"},\"End\":true}}}",
        NULL, &res);
    cr_assert_eq(res.status, SWF_ASL_FAILED);
    cr_expect_str_eq(res.error, "States.Timeout");
    cr_expect_eq(res.stop_ms, 1700000000000 + 5000, "the wait ended at the Task's deadline");
    swf_event_list_t parent = {0}, child = {0};
    cr_expect_eq(replay(store, "top", &parent), SWF_ASL_FAILED);
    cr_expect_eq(replay(store, "top-1", &child), SWF_ASL_TERMINATED);
    cr_expect_eq(child.items[child.count - 1].time_ms, 1700000000000 + 5000);
    swf_event_list_free(&parent);
    swf_event_list_free(&child);
    swf_local_result_free(&res);
    swf_history_store_free(store);
    remove_machine("SwfTestNestedHour");
}
