/*
 * test_maprun.c - Map Runs through swf-api (api/maprun.c) on a dev system
 * with a real decider, swf-history and PostgreSQL (cli/dev.h): an
 * execution runs two distributed Maps, one at once and one whose
 * iterations wait (a Wait state) one at a time; ListMapRuns pages through
 * both, DescribeMapRun counts the second's iterations while it runs and
 * once it succeeded, ListExecutions of its mapRunArn lists its iterations,
 * GetExecutionHistory names the same ARNs, and ARNs malformed, unknown, of
 * another machine, label or execution get AWS's errors. UpdateMapRun of a
 * running run lets a waiting iteration start at once, and the history
 * with its signal replays; a run whose execution is stopped is aborted; a
 * failed run's execution redriven redrives the run (MapRunRedriven).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "decider/replay.h"
#include "history/pg.h"

#define ARN "arn:aws:states:us-east-1:123456789012:"
#define RUN ARN "mapRun:Runs/"

/* Quick (Pass iterations) then Slow (each iteration waits $.nap s, one at
 * a time, half of them may fail). */
static const char *DEF =
    "{\"StartAt\":\"Quick\",\"States\":{"
    "\"Quick\":{\"Type\":\"Map\",\"Label\":\"Quick\",\"ItemsPath\":\"$.items\",\"ResultPath\":null,"
    "\"ItemProcessor\":{\"ProcessorConfig\":{\"Mode\":\"DISTRIBUTED\",\"ExecutionType\":"
    "\"STANDARD\"},\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Pass\",\"End\":true}}},"
    "\"Next\":\"Slow\"},"
    "\"Slow\":{\"Type\":\"Map\",\"Label\":\"Slow\",\"ItemsPath\":\"$.items\",\"MaxConcurrency\":1,"
    "\"ToleratedFailurePercentage\":50,\"ItemProcessor\":{\"ProcessorConfig\":{\"Mode\":"
    "\"DISTRIBUTED\",\"ExecutionType\":\"STANDARD\"},\"StartAt\":\"Nap\",\"States\":{"
    "\"Nap\":{\"Type\":\"Wait\",\"SecondsPath\":\"$.nap\",\"End\":true}}},\"End\":true}}}";

static int64_t num(json_object *o, const char *key)
{
    json_object *v = NULL;
    cr_assert(swf_json_get(o, key, &v), "no %s in %s", key, swf_json_str(o));
    return json_object_get_int64(v);
}

static int64_t count_of(json_object *run, const char *counts, const char *key)
{
    json_object *c = NULL;
    cr_assert(swf_json_get(run, counts, &c), "no %s in %s", counts, swf_json_str(run));
    return num(c, key);
}

/* DescribeMapRun of arn once `ok` holds for it (bounded: 60 s). */
static json_object *run_when(int port, const char *arn, bool (*ok)(json_object *run))
{
    char body[512];
    snprintf(body, sizeof(body), "{\"mapRunArn\":\"%s\"}", arn);
    for (int i = 0; i < 1200; i++) {
        char *req = request(port, SFN "DescribeMapRun", body, KEY, SECRET);
        char resp[16384];
        size_t n = exchange(port, req, strlen(req), resp, sizeof(resp), 5000);
        free(req);
        const char *json = n > 0 ? strstr(resp, "\r\n\r\n") : NULL;
        json_object *run = json ? json_tokener_parse(json + 4) : NULL;
        if (run != NULL && swf_json_get_string(run, "status") != NULL && ok(run))
            return run;
        json_object_put(run);
        usleep(50000);
    }
    cr_assert_fail("%s: never as wanted", arn);
    return NULL;
}

static bool is_running_one(json_object *run)
{
    json_object *c = NULL;
    return strcmp(swf_json_get_string(run, "status"), "RUNNING") == 0 &&
           swf_json_get(run, "executionCounts", &c) &&
           json_object_get_int64(json_object_object_get(c, "running")) == 1;
}

static bool is_one_done_one_running(json_object *run)
{
    json_object *c = NULL;
    return swf_json_get(run, "executionCounts", &c) &&
           json_object_get_int64(json_object_object_get(c, "running")) == 1 &&
           json_object_get_int64(json_object_object_get(c, "succeeded")) == 1;
}

static bool is_succeeded(json_object *run)
{
    return strcmp(swf_json_get_string(run, "status"), "SUCCEEDED") == 0;
}

static bool is_failed(json_object *run)
{
    return strcmp(swf_json_get_string(run, "status"), "FAILED") == 0;
}

static bool is_failed_once_redriven(json_object *run)
{
    json_object *v = NULL;
    return is_failed(run) && swf_json_get(run, "redriveCount", &v) && json_object_get_int64(v) == 1;
}

static bool is_aborted(json_object *run)
{
    return strcmp(swf_json_get_string(run, "status"), "ABORTED") == 0;
}

static void start(int port, const char *name, const char *input_text)
{
    char body[512];
    json_object *input = json_object_new_string(input_text);
    snprintf(body, sizeof(body),
             "{\"stateMachineArn\":\"" ARN "stateMachine:Runs\",\"name\":\"%s\","
             "\"input\":%s}",
             name, json_object_to_json_string_ext(input, JSON_C_TO_STRING_PLAIN));
    json_object_put(input);
    json_object_put(call_ok(port, SFN "StartExecution", body));
}

/* The number of events of `type` in the execution's history naming arn. */
static size_t history_names(int port, const char *execution, const char *type, const char *arn)
{
    char body[256];
    snprintf(body, sizeof(body),
             "{\"executionArn\":\"" ARN "execution:Runs:%s\","
             "\"maxResults\":1000}",
             execution);
    json_object *h = call_ok(port, SFN "GetExecutionHistory", body), *evs = NULL;
    swf_json_get(h, "events", &evs);
    size_t n = 0;
    for (size_t i = 0; i < json_object_array_length(evs); i++) {
        json_object *e = json_object_array_get_idx(evs, i), *d = NULL;
        if (strcmp(swf_json_get_string(e, "type"), type) != 0)
            continue;
        n += arn == NULL || (swf_json_get(e, "mapRunStartedEventDetails", &d) &&
                             strcmp(swf_json_get_string(d, "mapRunArn"), arn) == 0);
    }
    json_object_put(h);
    return n;
}

static void expect_error(int port, const char *action, const char *body, const char *type)
{
    expect_signed(port, action, body, KEY, SECRET, 400, type);
}

Test(maprun, distributed_maps_are_map_runs_the_api_lists_describes_and_the_history_names,
     .timeout = 300)
{
    swf_dev_options_t opt = {.deciders = 1,
                             .history_service = true,
                             .time_scale = 1,
                             .log = getenv("SWF_TEST_LOG") ? stderr : NULL};
    swf_dev_t *dev;
    char creds[64];
    check(swf_dev_start(&opt, &dev));
    swf_api_t *api = api_up(dev, creds, (swf_api_config_t){0});
    int port = swf_api_port(api);
    json_object *def = json_object_new_string(DEF);
    char body[4096];
    snprintf(body, sizeof(body), "{\"name\":\"Runs\",\"definition\":%s,\"roleArn\":\"" ARN "r\"}",
             json_object_to_json_string_ext(def, JSON_C_TO_STRING_PLAIN));
    json_object_put(def);
    json_object_put(call_ok(port, SFN "CreateStateMachine", body));
    start(port, "runs-1", "{\"items\":[{\"nap\":2},{\"nap\":2}]}");

    /* Slow runs its first iteration: RUNNING, one running, one pending. */
    json_object *run = run_when(port, RUN "Slow:runs-1-2", is_running_one);
    cr_assert_str_eq(swf_json_get_string(run, "executionArn"), ARN "execution:Runs:runs-1");
    cr_assert_eq(num(run, "maxConcurrency"), 1);
    cr_assert_eq(num(run, "toleratedFailurePercentage"), 50);
    cr_assert_eq(num(run, "toleratedFailureCount"), 0);
    cr_assert_eq(count_of(run, "executionCounts", "pending"), 1);
    cr_assert_eq(count_of(run, "itemCounts", "total"), 2);
    cr_assert_eq(count_of(run, "itemCounts", "resultsWritten"), 0);
    cr_assert(!json_object_object_get_ex(run, "stopDate", NULL));
    json_object_put(run);
    json_object *list =
        call_ok(port, SFN "ListExecutions", "{\"mapRunArn\":\"" RUN "Slow:runs-1-2\"}");
    cr_assert(strstr(swf_json_str(list), "\"name\":\"runs-1-2-0\"") &&
                  strstr(swf_json_str(list), "\"status\":\"RUNNING\""),
              "%s", swf_json_str(list));
    json_object_put(list);
    /* UpdateMapRun checks its arguments as AWS does. */
    expect_error(port, SFN "UpdateMapRun", "{\"mapRunArn\":\"" RUN "Slow:runs-1-2\"}",
                 "ValidationException");
    expect_error(port, SFN "UpdateMapRun",
                 "{\"mapRunArn\":\"" RUN "Slow:runs-1-2\",\"toleratedFailurePercentage\":101}",
                 "ValidationException");
    expect_error(port, SFN "UpdateMapRun",
                 "{\"mapRunArn\":\"" RUN "Slow:runs-1-9\","
                 "\"maxConcurrency\":2}",
                 "ResourceNotFound");

    run = run_when(port, RUN "Slow:runs-1-2", is_succeeded);
    cr_assert(json_object_object_get_ex(run, "stopDate", NULL) &&
              num(run, "stopDate") >= num(run, "startDate"));
    cr_assert_eq(count_of(run, "itemCounts", "succeeded"), 2);
    cr_assert_eq(count_of(run, "itemCounts", "resultsWritten"), 2);
    cr_assert_eq(count_of(run, "executionCounts", "running"), 0);
    json_object_put(run);

    /* ListMapRuns pages through both, in the order they started. */
    json_object *page =
        call_ok(port, SFN "ListMapRuns",
                "{\"executionArn\":\"" ARN "execution:Runs:runs-1\",\"maxResults\":1}");
    cr_assert(strstr(swf_json_str(page), "Runs/Quick:runs-1-1") != NULL, "%s", swf_json_str(page));
    cr_assert(strstr(swf_json_str(page), "\"stateMachineArn\":\"" ARN "stateMachine:Runs/Quick\""),
              "%s", swf_json_str(page));
    cr_assert_str_eq(swf_json_get_string(page, "nextToken"), "1");
    json_object_put(page);
    page = call_ok(port, SFN "ListMapRuns",
                   "{\"executionArn\":\"" ARN "execution:Runs:runs-1\",\"nextToken\":\"1\"}");
    cr_assert(strstr(swf_json_str(page), "Runs/Slow:runs-1-2") != NULL, "%s", swf_json_str(page));
    cr_assert(!json_object_object_get_ex(page, "nextToken", NULL));
    json_object_put(page);
    /* The history names the same runs. */
    cr_assert_eq(history_names(port, "runs-1", "MapRunStarted", RUN "Quick:runs-1-1"), 1);
    cr_assert_eq(history_names(port, "runs-1", "MapRunStarted", RUN "Slow:runs-1-2"), 1);
    cr_assert_eq(history_names(port, "runs-1", "MapRunSucceeded", NULL), 2);

    /* The ARN a ResultWriter's task receives: the interpreter's region and
     * account, the same run. */
    json_object_put(call_ok(port, SFN "DescribeMapRun",
                            "{\"mapRunArn\":\"arn:aws:states:local:000000000000:mapRun:Runs/"
                            "Slow:runs-1-2\"}"));
    /* Bad ARNs and arguments. */
    static const char *const bad[][2] = {
        {"{\"mapRunArn\":\"x\"}", "InvalidArn"},
        {"{\"mapRunArn\":\"" ARN "execution:Runs:runs-1\"}", "InvalidArn"},
        {"{\"mapRunArn\":\"" RUN "Slow\"}", "InvalidArn"},
        {"{\"mapRunArn\":\"" RUN "Slow:runs-1-0\"}", "InvalidArn"},
        {"{\"mapRunArn\":\"" RUN "Slow:runs-1-x\"}", "InvalidArn"},
        {"{}", "ValidationException"},
        {"{\"mapRunArn\":\"" RUN "Slow:runs-1-3\"}", "ResourceNotFound"},
        {"{\"mapRunArn\":\"" RUN "Quick:runs-1-2\"}", "ResourceNotFound"},
        {"{\"mapRunArn\":\"" ARN "mapRun:Other/Slow:runs-1-2\"}", "ResourceNotFound"},
        {"{\"mapRunArn\":\"" RUN "Slow:nobody-2\"}", "ResourceNotFound"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
        expect_error(port, SFN "DescribeMapRun", bad[i][0], bad[i][1]);
    expect_error(port, SFN "ListMapRuns", "{\"executionArn\":\"" ARN "execution:Runs:nobody\"}",
                 "ExecutionDoesNotExist");
    expect_error(port, SFN "ListMapRuns", "{\"executionArn\":\"" RUN "Slow:runs-1-2\"}",
                 "InvalidArn");
    expect_error(port, SFN "ListMapRuns",
                 "{\"executionArn\":\"" ARN "execution:Runs:runs-1\",\"nextToken\":\"zz\"}",
                 "InvalidToken");
    expect_error(port, SFN "ListExecutions", "{\"mapRunArn\":\"" RUN "Slow:runs-1-3\"}",
                 "ResourceNotFound");
    expect_error(port, SFN "ListExecutions",
                 "{\"mapRunArn\":\"" RUN "Slow:runs-1-2\",\"stateMachineArn\":\"" ARN
                 "stateMachine:Runs\"}",
                 "ValidationException");
    /* A closed run is not updated. */
    expect_error(port, SFN "UpdateMapRun",
                 "{\"mapRunArn\":\"" RUN "Slow:runs-1-2\",\"maxConcurrency\":3}",
                 "ValidationException");

    /* UpdateMapRun of a running run: with MaxConcurrency 2 the second
     * iteration (1 s) starts while the first (600 s) still runs, which
     * MaxConcurrency 1 forbids; DescribeMapRun shows the new limits. */
    start(port, "runs-2", "{\"items\":[{\"nap\":600},{\"nap\":1}]}");
    json_object_put(run_when(port, RUN "Slow:runs-2-2", is_running_one));
    json_object_put(call_ok(port, SFN "UpdateMapRun",
                            "{\"mapRunArn\":\"" RUN "Slow:runs-2-2\",\"maxConcurrency\":2,"
                            "\"toleratedFailureCount\":3}"));
    run = run_when(port, RUN "Slow:runs-2-2", is_one_done_one_running);
    cr_assert_eq(num(run, "maxConcurrency"), 2);
    cr_assert_eq(num(run, "toleratedFailureCount"), 3);
    cr_assert_eq(num(run, "toleratedFailurePercentage"), 50);
    json_object_put(run);
    /* A run whose execution is stopped is aborted, its running iteration
     * too. */
    json_object_put(
        call_ok(port, SFN "StopExecution", "{\"executionArn\":\"" ARN "execution:Runs:runs-2\"}"));
    run = run_when(port, RUN "Slow:runs-2-2", is_aborted);
    cr_assert_eq(count_of(run, "executionCounts", "aborted"), 1);
    cr_assert_eq(count_of(run, "executionCounts", "succeeded"), 1);
    json_object_put(run);
    cr_assert_eq(history_names(port, "runs-2", "MapRunAborted", NULL), 1);
    /* The update is in the history, which replays without a difference. */
    swf_history_store_t *store;
    check(swf_history_pg_new(swf_dev_conninfo(dev), &store));
    swf_event_list_t events = {0};
    check(swf_history_load(store, "runs-2", 0, 0, &events));
    size_t signals = 0;
    for (size_t i = 0; i < events.count; i++)
        signals += events.items[i].type == SWF_EVENT_WORKFLOW_EXECUTION_SIGNALED;
    cr_assert_eq(signals, 1);
    swf_decider_replay_result_t r = {0};
    check(swf_decider_replay_run(&events, &(swf_decider_replay_options_t){0}, &r));
    cr_assert_null(r.error, "%s", r.error ? swf_error_message(r.error) : "");
    swf_decider_replay_result_free(&r);
    swf_event_list_free(&events);
    swf_history_store_free(store);

    /* Two of three iterations fail (a SecondsPath that is no number): more
     * than the 50% tolerated, the run fails; redriven with its execution,
     * the same run is redriven (a redrive does not run Quick again), and
     * fails again. */
    start(port, "runs-3", "{\"items\":[{\"nap\":\"x\"},{\"nap\":\"y\"},{\"nap\":1}]}");
    run = run_when(port, RUN "Slow:runs-3-2", is_failed);
    cr_assert_eq(count_of(run, "executionCounts", "failed"), 2);
    cr_assert_eq(count_of(run, "executionCounts", "aborted"), 1);
    cr_assert_eq(num(run, "redriveCount"), 0);
    cr_assert(!json_object_object_get_ex(run, "redriveDate", NULL));
    json_object_put(run);
    json_object_put(call_ok(port, SFN "RedriveExecution",
                            "{\"executionArn\":\"" ARN "execution:Runs:runs-3\"}"));
    run = run_when(port, RUN "Slow:runs-3-2", is_failed_once_redriven);
    cr_assert(json_object_object_get_ex(run, "redriveDate", NULL));
    json_object_put(run);
    cr_assert_eq(history_names(port, "runs-3", "MapRunStarted", NULL), 2);
    cr_assert_eq(history_names(port, "runs-3", "MapRunRedriven", NULL), 1);
    cr_assert_eq(history_names(port, "runs-3", "MapRunFailed", NULL), 2);
    api_down(api, creds);
    swf_dev_stop(dev);
}
