/*
 * test_teststate.c - TestState over a real socket (swf-api on a dev
 * system, cli/dev.h): one state run by the interpreter with a mocked
 * result or error, its status (SUCCEEDED, CAUGHT_ERROR, RETRIABLE,
 * FAILED), nextState, output, and DEBUG's inspection data at each step;
 * AWS's errors for what cannot be run; nothing is written (no execution,
 * no history).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "cli/dev.h"
#include "client.h"
#include "history/pg.h"

/* A dev system and swf-api for each test: TestState writes nothing. */
SWF_API_TEST_SUITE(teststate);

/* TestState of the state (JSON text), on input (JSON text), with the other
 * request members `extra` ("" or ",\"k\":v..."). */
static json_object *test_state(const char *state, const char *input, const char *extra)
{
    json_object *d = json_object_new_string(state), *i = json_object_new_string(input);
    size_t cap = strlen(state) * 2 + strlen(input) * 2 + strlen(extra) + 256;
    char *body = malloc(cap);
    snprintf(body, cap, "{\"definition\":%s,\"input\":%s%s}",
             json_object_to_json_string_ext(d, JSON_C_TO_STRING_PLAIN),
             json_object_to_json_string_ext(i, JSON_C_TO_STRING_PLAIN), extra);
    json_object_put(d);
    json_object_put(i);
    json_object *out = call_ok(port, SFN "TestState", body);
    free(body);
    return out;
}

static void expect_str(json_object *o, const char *key, const char *want)
{
    const char *got = swf_json_get_string(o, key);
    cr_assert(got != NULL && strcmp(got, want) == 0, "%s: %s, not %s, in %s", key,
              got ? got : "(none)", want, swf_json_str(o));
}

/* Checks an answer's status, one other member (key: want) and nextState
 * (NULL: none), and frees it. */
static void expect_outcome(json_object *r, const char *status, const char *key, const char *want,
                           const char *next)
{
    expect_str(r, "status", status);
    expect_str(r, key, want);
    if (next != NULL)
        expect_str(r, "nextState", next);
    else
        cr_assert_not(json_object_object_get_ex(r, "nextState", NULL), "%s", swf_json_str(r));
    json_object_put(r);
}

static json_object *member(json_object *o, const char *key)
{
    json_object *v = NULL;
    cr_assert(swf_json_get(o, key, &v), "no %s in %s", key, swf_json_str(o));
    return v;
}

Test(teststate, a_task_with_a_mocked_result_shows_each_processing_step)
{
    const char *task = "{\"Type\":\"Task\",\"Resource\":\"arn:aws:states:::activity:pay\","
                       "\"InputPath\":\"$.order\",\"Parameters\":{\"id.$\":\"$.id\",\"k\":1},"
                       "\"ResultSelector\":{\"paid.$\":\"$.ok\"},\"ResultPath\":\"$.payment\","
                       "\"OutputPath\":\"$.payment\",\"Next\":\"Ship\"}";
    json_object *r = test_state(task, "{\"order\":{\"id\":7},\"other\":true}",
                                ",\"inspectionLevel\":\"DEBUG\","
                                "\"mock\":{\"result\":\"{\\\"ok\\\":true,\\\"fee\\\":3}\"}");
    expect_str(r, "status", "SUCCEEDED");
    expect_str(r, "nextState", "Ship");
    expect_str(r, "output", "{\"paid\":true}");
    /* Each step of the processing, as AWS names them. */
    static const char *const steps[][2] = {
        {"input", "{\"order\":{\"id\":7},\"other\":true}"},
        {"afterInputPath", "{\"id\":7}"},
        {"afterParameters", "{\"id\":7,\"k\":1}"},
        {"result", "{\"ok\":true,\"fee\":3}"},
        {"afterResultSelector", "{\"paid\":true}"},
        {"afterResultPath", "{\"order\":{\"id\":7},\"other\":true,\"payment\":{\"paid\":true}}"},
    };
    json_object *d = member(r, "inspectionData");
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
        expect_str(d, steps[i][0], steps[i][1]);
    json_object_put(r);

    /* INFO: no inspection data. */
    r = test_state(task, "{\"order\":{\"id\":7}}", ",\"mock\":{\"result\":\"{\\\"ok\\\":1}\"}");
    cr_assert_not(json_object_object_get_ex(r, "inspectionData", NULL), "%s", swf_json_str(r));
    expect_str(r, "output", "{\"paid\":1}");
    json_object_put(r);

    /* Nothing was written: no execution, no history. */
    swf_history_store_t *store;
    check(swf_history_pg_new(swf_dev_conninfo(dev), &store));
    swf_history_execution_t *items = NULL;
    size_t n = 0;
    swf_history_filter_t f = {.limit = 10};
    check(swf_history_pg_executions_list(store, &f, &items, &n));
    cr_assert_eq(n, 0);
    swf_history_executions_free(items, n);
    swf_history_store_free(store);
}

Test(teststate, an_error_is_retriable_caught_or_failed_as_its_state_says)
{
    const char *err = ",\"mock\":{\"errorOutput\":{\"error\":\"Pay.Declined\",\"cause\":\"card\"}}";
    /* A retrier takes it: RETRIABLE, with the retrier and its back-off
     * after one attempt already made (2 * 3^1). */
    const char *retry =
        "{\"Type\":\"Task\",\"Resource\":\"arn:aws:states:::activity:pay\","
        "\"Retry\":[{\"ErrorEquals\":[\"Other\"]},{\"ErrorEquals\":[\"States.ALL\"],"
        "\"IntervalSeconds\":2,\"BackoffRate\":3}],"
        "\"Catch\":[{\"ErrorEquals\":[\"Pay.Declined\"],\"Next\":\"Refund\","
        "\"ResultPath\":\"$.err\"}],\"End\":true}";
    char extra[512];
    snprintf(extra, sizeof(extra),
             "%s,\"inspectionLevel\":\"DEBUG\",\"stateConfiguration\":{\"retrierRetryCount\":1}",
             err);
    json_object *r = test_state(retry, "{\"a\":1}", extra);
    expect_str(r, "status", "RETRIABLE");
    expect_str(r, "error", "Pay.Declined");
    expect_str(r, "cause", "card");
    json_object *det = member(member(r, "inspectionData"), "errorDetails");
    cr_assert_eq(json_object_get_int(member(det, "retryIndex")), 1);
    cr_assert_eq(json_object_get_int(member(det, "retryBackoffIntervalSeconds")), 6);
    json_object_put(r);

    /* Its attempts used up (MaxAttempts 3 by default): the catcher takes it. */
    r = test_state(retry, "{\"a\":1}",
                   ",\"mock\":{\"errorOutput\":{\"error\":\"Pay.Declined\",\"cause\":\"card\"}},"
                   "\"stateConfiguration\":{\"retrierRetryCount\":3}");
    expect_outcome(r, "CAUGHT_ERROR", "output",
                   "{\"a\":1,\"err\":{\"Error\":\"Pay.Declined\",\"Cause\":\"card\"}}", "Refund");

    /* No retrier, no catcher: FAILED. */
    r = test_state(
        "{\"Type\":\"Task\",\"Resource\":\"arn:aws:states:::activity:pay\",\"End\":true}", "{}",
        err);
    expect_outcome(r, "FAILED", "error", "Pay.Declined", NULL);
}

Test(teststate, choice_pass_and_a_state_of_a_whole_machine)
{
    const char *choice = "{\"Type\":\"Choice\",\"Choices\":[{\"Variable\":\"$.n\","
                         "\"NumericGreaterThan\":10,\"Next\":\"Big\"}],\"Default\":\"Small\"}";
    json_object *r = test_state(choice, "{\"n\":42}", "");
    expect_outcome(r, "SUCCEEDED", "output", "{\"n\":42}", "Big");
    r = test_state("{\"Type\":\"Choice\",\"Choices\":[{\"Variable\":\"$.n\","
                   "\"NumericGreaterThan\":10,\"Next\":\"Big\"}]}",
                   "{\"n\":1}", "");
    expect_outcome(r, "FAILED", "error", "States.NoChoiceMatched", NULL);

    /* A Pass that goes back to itself: nextState is itself, run once. */
    r = test_state("{\"Type\":\"Pass\",\"Result\":{\"x\":1},\"ResultPath\":\"$.r\","
                   "\"Next\":\"TestState\"}",
                   "{\"a\":1}", ",\"inspectionLevel\":\"DEBUG\"");
    expect_str(r, "nextState", "TestState");
    expect_str(r, "output", "{\"a\":1,\"r\":{\"x\":1}}");
    expect_str(member(r, "inspectionData"), "result", "{\"x\":1}");
    json_object_put(r);

    /* stateName picks a state of a whole machine. */
    json_object *m = json_object_new_string(
        "{\"StartAt\":\"A\",\"States\":{\"A\":{\"Type\":\"Pass\",\"Next\":\"B\"},"
        "\"B\":{\"Type\":\"Pass\",\"Parameters\":{\"v.$\":\"States.MathAdd($.n, 1)\"},"
        "\"End\":true}}}");
    char body[1024];
    snprintf(body, sizeof(body),
             "{\"definition\":%s,\"stateName\":\"B\",\"input\":\"{\\\"n\\\":1}\"}",
             json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN));
    json_object_put(m);
    r = call_ok(port, SFN "TestState", body);
    expect_outcome(r, "SUCCEEDED", "output", "{\"v\":2}", NULL);
}

Test(teststate, what_cannot_be_run_is_refused_with_aws_error_names)
{
    const char *task = "{\\\"Type\\\":\\\"Task\\\",\\\"Resource\\\":\\\"arn:aws:states:::"
                       "activity:pay\\\",\\\"End\\\":true}";
    char body[1024];
    /* A Task without a mock would need a real call. */
    snprintf(body, sizeof(body), "{\"definition\":\"%s\",\"input\":\"{}\"}", task);
    expect_signed(port, SFN "TestState", body, KEY, SECRET, 400, "ValidationException");
    snprintf(body, sizeof(body), "{\"definition\":\"%s\",\"input\":\"{oops\"}", task);
    expect_signed(port, SFN "TestState", body, KEY, SECRET, 400, "InvalidExecutionInput");
    snprintf(body, sizeof(body),
             "{\"definition\":\"%s\",\"inspectionLevel\":\"LOUD\",\"mock\":{\"result\":\"1\"}}",
             task);
    expect_signed(port, SFN "TestState", body, KEY, SECRET, 400, "ValidationException");
    snprintf(
        body, sizeof(body),
        "{\"definition\":\"%s\",\"mock\":{\"result\":\"1\",\"errorOutput\":{\"error\":\"E\"}}}",
        task);
    expect_signed(port, SFN "TestState", body, KEY, SECRET, 400, "ValidationException");
    expect_signed(port, SFN "TestState", "{\"definition\":\"{nope\"}", KEY, SECRET, 400,
                  "InvalidDefinition");
    expect_signed(port, SFN "TestState",
                  "{\"definition\":\"{\\\"Type\\\":\\\"Pass\\\",\\\"Next\\\":3}\"}", KEY, SECRET,
                  400, "InvalidDefinition");
    expect_signed(port, SFN "TestState", "{\"input\":\"{}\"}", KEY, SECRET, 400,
                  "ValidationException");
}
