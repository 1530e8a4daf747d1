/*
 * test_history.c - GetExecutionHistory's events (api/history.c) for the
 * example order workflow (examples/order.asl.json), run in-process with its
 * mocks (`swf run --local`), beside the events Step Functions shows for the
 * same execution: the same types, in the same order in each thread (the top
 * level, each Parallel branch, each Map iteration; threads that run at once
 * interleave as they happen to), and AWS's previousEventId chain; and three
 * histories Step Functions recorded (LocalStack's snapshot tests, recorded
 * against AWS: tests/aws/services/stepfunctions/v2/scenarios/
 * test_base_scenarios.snapshot.json, test_map_state_catch and
 * test_map_state_retry; .../activities/test_activities.snapshot.json,
 * test_activity_task_failure), event for event; the iterations a Map
 * stops (MapIterationAborted) when it fails, is retried (at the failure),
 * or the execution times out or is stopped; MapStateStarted's length (the
 * Map's items); and how a distributed Map's iterations count.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/internal.h"
#include "decider/local.h"
#include "history/store.h"
#include "protocol/json.h"

static json_object *file_json(const char *rel)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", SWF_SOURCE_DIR, rel);
    json_object *o = json_object_from_file(path);
    cr_assert_not_null(o, "%s", path);
    return o;
}

/* The derived events of an execution run in-process (takes the three),
 * stopped (terminated) at stop_ms when it runs past it (0: never); its Map
 * Runs in *runs when runs is not NULL. */
static json_object *run_derive(json_object *def, json_object *input, json_object *mocks,
                               int64_t stop_ms, json_object **runs)
{
    swf_history_store_t *store = swf_history_mem_new();
    swf_local_options_t opt = {.definition = def,
                               .input = input,
                               .mocks = mocks,
                               .machine_name = "m",
                               .machine_dir = SWF_SOURCE_DIR "/examples",
                               .execution_id = "e-1",
                               .start_ms = 1700000000000,
                               .stop_ms = stop_ms};
    swf_local_result_t res = {0};
    cr_assert_null(swf_local_run(&opt, store, &res));
    swf_event_list_t events = {0};
    cr_assert_null(swf_history_load(store, "e-1", 0, 0, &events));
    json_object *out = NULL;
    swf_api__derive_t d = {.data = true,
                           .run_arn = "arn:aws:states:us-east-1:123456789012:mapRun:m/",
                           .execution_id = "e-1"};
    cr_assert_null(swf_api__history_derive(&events, &d, &out, runs));
    swf_event_list_free(&events);
    swf_local_result_free(&res);
    swf_history_store_free(store);
    json_object_put(def);
    json_object_put(input);
    json_object_put(mocks);
    return out;
}

static json_object *run_events(json_object *def, json_object *input, json_object *mocks)
{
    return run_derive(def, input, mocks, 0, NULL);
}

static const char *detail_string(json_object *e, const char *key)
{
    json_object_object_foreach(e, k, v)
    {
        size_t n = strlen(k);
        if (n > 7 && strcmp(k + n - 7, "Details") == 0 && json_object_is_type(v, json_type_object))
            return swf_json_get_string(v, key);
    }
    return NULL;
}

static long detail_long(json_object *e, const char *key)
{
    json_object_object_foreach(e, k, v)
    {
        json_object *x;
        size_t n = strlen(k);
        if (n > 7 && strcmp(k + n - 7, "Details") == 0 && json_object_object_get_ex(v, key, &x))
            return (long)json_object_get_int64(x);
    }
    return -1;
}

/* Checks the events against `want`, what Step Functions shows: events
 * separated by ", ", each "TYPE[:NAME][#N] PREV" (N the iteration's index,
 * or a MapStateStarted's length; PREV the previousEventId). */
static void events_match(json_object *evs, const char *want)
{
    char *copy = strdup(want), *save = NULL;
    size_t i = 0;
    for (char *w = strtok_r(copy, ",", &save); w != NULL; w = strtok_r(NULL, ",", &save), i++) {
        char type[64] = "", name[64] = "";
        long index = -1, prev = -1;
        while (*w == ' ')
            w++;
        size_t n = strcspn(w, ":# ");
        snprintf(type, sizeof(type), "%.*s", (int)n, w);
        w += n;
        if (*w == ':') {
            n = strcspn(++w, "# ");
            snprintf(name, sizeof(name), "%.*s", (int)n, w);
            w += n;
        }
        if (*w == '#')
            index = strtol(w + 1, &w, 10);
        prev = strtol(w, NULL, 10);
        cr_assert_lt(i, json_object_array_length(evs), "AWS shows more events: %s ...", type);
        json_object *e = json_object_array_get_idx(evs, i), *v;
        const char *got = swf_json_get_string(e, "type");
        cr_assert_str_eq(got, type, "event %zu: %s, AWS shows %s", i + 1, got, type);
        cr_assert(json_object_object_get_ex(e, "id", &v));
        cr_assert_eq(json_object_get_int64(v), (int64_t)i + 1);
        cr_assert(json_object_object_get_ex(e, "previousEventId", &v));
        cr_assert_eq(json_object_get_int64(v), prev,
                     "event %zu (%s): previousEventId %lld, AWS shows %ld", i + 1, type,
                     (long long)json_object_get_int64(v), prev);
        const char *nm = detail_string(e, "name");
        if (*name != '\0')
            cr_assert(nm != NULL && strcmp(nm, name) == 0, "event %zu (%s): name %s, AWS shows %s",
                      i + 1, type, nm ? nm : "none", name);
        if (index >= 0) {
            long x = detail_long(e, strcmp(type, "MapStateStarted") == 0 ? "length" : "index");
            cr_assert_eq(x, index, "event %zu (%s): %ld, AWS shows %ld", i + 1, type, x, index);
        }
    }
    cr_assert_eq(json_object_array_length(evs), i, "%zu events, AWS shows %zu",
                 json_object_array_length(evs), i);
    free(copy);
    json_object_put(evs);
}

/* The example order workflow as Step Functions shows it when its workers
 * answer in the order the tasks were scheduled (as the mocks do): the
 * Notify branch and the Map's iterations run at once and interleave in
 * time order, each thread's events chained: the retry of Charge
 * (Payment.Throttled, events 5-10); branch 0's Map and branch 1's Notify
 * (14-17); iterations 0 and 1 at once (MaxConcurrency 2), 2 when 0 has
 * ended (35); the Invoice, a nested execution (.sync:2: TaskSubmitted
 * once the child started, 50). Also in api/README.md. */
static const char order_want[] =
    "ExecutionStarted 0, ChoiceStateEntered:Validate 0, ChoiceStateExited:Validate 2, "
    "TaskStateEntered:Charge 3, "
    "ActivityScheduled 4, ActivityStarted 5, ActivityFailed 6, ActivityScheduled 7, "
    "ActivityStarted 8, ActivitySucceeded 9, TaskStateExited:Charge 10, "
    "ParallelStateEntered:Fulfil 11, "
    "ParallelStateStarted 12, MapStateEntered:PackItems 13, MapStateStarted#3 14, "
    "TaskStateEntered:Notify 13, "
    "ActivityScheduled 16, MapIterationStarted:PackItems#0 15, TaskStateEntered:Pack 18, "
    "ActivityScheduled 19, "
    "MapIterationStarted:PackItems#1 15, TaskStateEntered:Pack 21, ActivityScheduled 22, "
    "ActivityStarted 17, "
    "ActivitySucceeded 24, ActivityStarted 20, ActivitySucceeded 26, ActivityStarted 23, "
    "ActivitySucceeded 28, TaskStateExited:Notify 25, TaskStateExited:Pack 27, "
    "MapIterationSucceeded:PackItems#0 31, "
    "TaskStateExited:Pack 29, MapIterationSucceeded:PackItems#1 33, "
    "MapIterationStarted:PackItems#2 33, TaskStateEntered:Pack 35, "
    "ActivityScheduled 36, ActivityStarted 37, ActivitySucceeded 38, TaskStateExited:Pack 39, "
    "MapIterationSucceeded:PackItems#2 40, MapStateSucceeded 41, MapStateExited:PackItems 41, "
    "ParallelStateSucceeded 43, "
    "ParallelStateExited:Fulfil 43, WaitStateEntered:WaitForCourier 45, "
    "WaitStateExited:WaitForCourier 46, TaskStateEntered:Invoice 47, TaskScheduled 48, "
    "TaskStarted 49, TaskSubmitted 50, TaskSucceeded 51, TaskStateExited:Invoice 52, "
    "PassStateEntered:Done 53, PassStateExited:Done 54, ExecutionSucceeded 55";

Test(api_history, the_order_example_shows_the_events_step_functions_shows_in_its_order)
{
    json_object *evs =
        run_events(file_json("examples/order.asl.json"), file_json("examples/order.input.json"),
                   file_json("examples/order.mocks.json"));
    events_match(evs, order_want);
}

static json_object *text(const char *s)
{
    json_object *o = json_tokener_parse(s);
    cr_assert_not_null(o, "%s", s);
    return o;
}

/* A Map over [1] whose one iteration fails (Fail state), with `handling`
 * (its Catch or Retry, and Next: the Pass state FinalCaught): its events are
 * AWS's up to the first failed iteration, then `after`. */
static void map_fail_case(const char *handling, const char *after)
{
    char def[1024], want[1024];
    snprintf(def, sizeof(def),
             "{\"StartAt\":\"StartState\",\"States\":{\"StartState\":{\"Type\":\"Pass\","
             "\"Result\":{\"arr\":[1]},\"Next\":\"MapState\"},\"MapState\":{\"Type\":\"Map\","
             "\"ItemsPath\":\"$.arr\",\"Iterator\":{\"StartAt\":\"HandleItemFail\",\"States\":{"
             "\"HandleItemFail\":{\"Type\":\"Fail\",\"Error\":\"HandleItemFailError\","
             "\"Cause\":\"HandleItemFailCause\"}}},%s},"
             "\"FinalCaught\":{\"Type\":\"Pass\",\"End\":true}}}",
             handling);
    snprintf(want, sizeof(want),
             "ExecutionStarted 0, PassStateEntered:StartState 0, PassStateExited:StartState 2, "
             "MapStateEntered:MapState 3, MapStateStarted#1 4, MapIterationStarted:MapState#0 5, "
             "FailStateEntered:HandleItemFail 6, MapIterationFailed:MapState#0 7, %s",
             after);
    events_match(run_events(text(def), text("{}"), NULL), want);
}

Test(api_history, a_failed_iteration_caught_at_its_map_is_what_aws_recorded)
{
    map_fail_case("\"Catch\":[{\"ErrorEquals\":[\"States.ALL\"],\"Next\":\"FinalCaught\"}],"
                  "\"Next\":\"FinalCaught\"",
                  "MapStateFailed 7, MapStateExited:MapState 9, PassStateEntered:FinalCaught 10, "
                  "PassStateExited:FinalCaught 11, ExecutionSucceeded 12");
}

Test(api_history, a_retried_map_starts_again_without_being_entered_again_as_aws_recorded)
{
    map_fail_case("\"Retry\":[{\"ErrorEquals\":[\"States.ALL\"],\"IntervalSeconds\":1,"
                  "\"MaxAttempts\":2}],\"Next\":\"FinalCaught\"",
                  "MapStateStarted#1 7, MapIterationStarted:MapState#0 9, "
                  "FailStateEntered:HandleItemFail 10, MapIterationFailed:MapState#0 11, "
                  "MapStateStarted#1 11, MapIterationStarted:MapState#0 13, "
                  "FailStateEntered:HandleItemFail 14, MapIterationFailed:MapState#0 15, "
                  "MapStateFailed 15, ExecutionFailed 17");
}

Test(api_history, a_failed_activity_fails_the_execution_without_exiting_its_state)
{
    static const char want[] = "ExecutionStarted 0, TaskStateEntered:ActivityTask 0, "
                               "ActivityScheduled 2, ActivityStarted 3, "
                               "ActivityFailed 4, ExecutionFailed 5";
    json_object *evs = run_events(
        text("{\"StartAt\":\"ActivityTask\",\"States\":{\"ActivityTask\":{\"Type\":\"Task\","
             "\"Resource\":\"arn:aws:states:us-east-1:123456789012:activity:a\",\"End\":true}}}"),
        text("{\"Value1\":\"Hello\"}"),
        text("{\"ActivityTask\":[{\"Throw\":{\"Error\":\"Programmatic Error\"}}]}"));
    events_match(evs, want);
}

/* Items [1,2,3] through a distributed Map labelled Batch whose iteration
 * of 2 fails (a Fail state), with `fields` (MaxConcurrency, tolerated
 * failures, Catch, ...). */
static json_object *distributed_run(const char *fields, json_object **runs)
{
    char def[2048];
    snprintf(def, sizeof(def),
             "{\"StartAt\":\"Each\",\"States\":{\"Each\":{\"Type\":\"Map\",\"Label\":\"Batch\","
             "\"ItemsPath\":\"$.items\",%s\"ItemProcessor\":{\"ProcessorConfig\":{\"Mode\":"
             "\"DISTRIBUTED\",\"ExecutionType\":\"STANDARD\"},\"StartAt\":\"Is2\",\"States\":{"
             "\"Is2\":{\"Type\":\"Choice\",\"Choices\":[{\"Variable\":\"$\",\"NumericEquals\":2,"
             "\"Next\":\"Bad\"}],\"Default\":\"Good\"},"
             "\"Bad\":{\"Type\":\"Fail\",\"Error\":\"Item.Bad\",\"Cause\":\"two\"},"
             "\"Good\":{\"Type\":\"Pass\",\"End\":true}}},\"End\":true}}}",
             fields);
    return run_derive(text(def), text("{\"items\":[1,2,3]}"), NULL, 0, runs);
}

static const char *run_get(json_object *runs, size_t i, const char *key)
{
    cr_assert_lt(i, json_object_array_length(runs), "no run %zu in %s", i, swf_json_str(runs));
    json_object *v = NULL;
    cr_assert(swf_json_get(json_object_array_get_idx(runs, i), key, &v), "no %s", key);
    return json_object_get_string(v);
}

/* The statuses of run i's iterations, and their items, as "S/1,F/1,...". */
static void iterations_are(json_object *runs, size_t i, const char *want)
{
    json_object *its = NULL;
    swf_json_get(json_object_array_get_idx(runs, i), "iterations", &its);
    char got[256] = "";
    for (size_t k = 0; k < json_object_array_length(its); k++) {
        json_object *it = json_object_array_get_idx(its, k);
        size_t n = strlen(got);
        snprintf(got + n, sizeof(got) - n, "%s%c/%s", k ? "," : "",
                 swf_json_get_string(it, "status")[0],
                 json_object_get_string(json_object_object_get(it, "items")));
    }
    cr_assert_str_eq(got, want);
}

/* The first run's status and iterations (iterations_are); frees runs and
 * evs. */
static void run_is(json_object *runs, const char *status, const char *iterations, json_object *evs)
{
    cr_assert_str_eq(run_get(runs, 0, "status"), status);
    iterations_are(runs, 0, iterations);
    json_object_put(runs);
    json_object_put(evs);
}

/* AWS: MapRunStarted after MapStateStarted, MapRunSucceeded before
 * MapStateSucceeded (which points at it); swf shows the iterations between,
 * where AWS has them in child executions. */
Test(api_history, a_distributed_map_shows_its_map_run_between_its_start_and_its_close)
{
    json_object *runs = NULL;
    json_object *evs = distributed_run("\"MaxConcurrency\":2,\"ToleratedFailureCount\":1,", &runs);
    events_match(json_object_get(evs),
                 "ExecutionStarted 0, MapStateEntered:Each 0, MapStateStarted#3 2, "
                 "MapRunStarted 3, MapIterationStarted:Each#0 4, ChoiceStateEntered 5, "
                 "ChoiceStateExited 6, PassStateEntered 7, PassStateExited 8, "
                 "MapIterationSucceeded:Each#0 9, MapIterationStarted:Each#1 9, "
                 "ChoiceStateEntered 11, ChoiceStateExited 12, FailStateEntered 13, "
                 "MapIterationFailed:Each#1 14, MapIterationStarted:Each#2 14, "
                 "ChoiceStateEntered 16, ChoiceStateExited 17, PassStateEntered 18, "
                 "PassStateExited 19, MapIterationSucceeded:Each#2 20, MapRunSucceeded 21, "
                 "MapStateSucceeded 22, MapStateExited:Each 22, ExecutionSucceeded 24");
    const char *arn = "arn:aws:states:us-east-1:123456789012:mapRun:m/Batch:e-1-1";
    cr_assert_str_eq(detail_string(json_object_array_get_idx(evs, 3), "mapRunArn"), arn);
    cr_assert_eq(json_object_array_length(runs), 1);
    cr_assert_str_eq(run_get(runs, 0, "mapRunArn"), arn);
    cr_assert_str_eq(run_get(runs, 0, "maxConcurrency"), "2");
    cr_assert_str_eq(run_get(runs, 0, "toleratedFailureCount"), "1");
    run_is(runs, "SUCCEEDED", "S/1,F/1,S/1", evs);
}

/* A failure beyond the tolerated ones: MapRunFailed with the Map's error;
 * the iteration that had not started is aborted. */
Test(api_history, a_distributed_map_that_fails_shows_map_run_failed_and_aborts_the_rest)
{
    json_object *runs = NULL;
    json_object *evs = distributed_run("\"MaxConcurrency\":1,", &runs);
    size_t n = json_object_array_length(evs);
    static const char *const last[] = {"MapRunFailed", "MapStateFailed", "ExecutionFailed"};
    for (size_t i = 0; i < 3; i++)
        cr_assert_str_eq(swf_json_get_string(json_object_array_get_idx(evs, n - 3 + i), "type"),
                         last[i]);
    json_object *failed = json_object_array_get_idx(evs, n - 3);
    cr_assert(strcmp(detail_string(failed, "error"), "Item.Bad") == 0 &&
              strcmp(detail_string(failed, "cause"), "two") == 0);
    run_is(runs, "FAILED", "S/1,F/1,A/1", evs);
}

/* Each run of a retried Map is a Map Run of its own, numbered in order. */
Test(api_history, a_retried_distributed_map_starts_a_new_map_run)
{
    json_object *runs = NULL;
    json_object *evs = distributed_run(
        "\"Retry\":[{\"ErrorEquals\":[\"States.ALL\"],\"IntervalSeconds\":1,\"MaxAttempts\":1}],",
        &runs);
    cr_assert_eq(json_object_array_length(runs), 2);
    cr_assert_str_eq(run_get(runs, 0, "status"), "FAILED");
    cr_assert_str_eq(run_get(runs, 1, "status"), "FAILED");
    cr_assert_str_eq(run_get(runs, 1, "mapRunArn"),
                     "arn:aws:states:us-east-1:123456789012:mapRun:m/Batch:e-1-2");
    size_t started = 0, failed = 0;
    for (size_t i = 0; i < json_object_array_length(evs); i++) {
        const char *t = swf_json_get_string(json_object_array_get_idx(evs, i), "type");
        started += strcmp(t, "MapRunStarted") == 0;
        failed += strcmp(t, "MapRunFailed") == 0;
    }
    cr_assert_eq(started, 2);
    cr_assert_eq(failed, 2);
    json_object_put(runs);
    json_object_put(evs);
}

/* With ItemBatcher an iteration is a batch: items counted per batch. */
Test(api_history, a_batched_map_run_counts_the_items_of_each_batch)
{
    json_object *runs = NULL;
    json_object_put(distributed_run("\"ItemBatcher\":{\"MaxItemsPerBatch\":2},", &runs));
    iterations_are(runs, 0, "S/2,S/1");
    json_object_put(runs);
}

/* An inline Map has no Map Run. */
Test(api_history, an_inline_map_has_no_map_run)
{
    json_object *runs = NULL;
    json_object_put(run_derive(file_json("examples/order.asl.json"),
                               file_json("examples/order.input.json"),
                               file_json("examples/order.mocks.json"), 0, &runs));
    cr_assert_eq(json_object_array_length(runs), 0);
    json_object_put(runs);
}

/* The MapRunArn a ResultWriter's task receives names the run as the API
 * does (its region and account are the interpreter's, local:000000000000,
 * which DescribeMapRun does not read). */
Test(api_history, a_result_writer_names_the_map_run_the_api_names)
{
    json_object *runs = NULL;
    json_object *evs = run_derive(
        text("{\"StartAt\":\"Each\",\"States\":{\"Each\":{\"Type\":\"Map\",\"Label\":"
             "\"Batch\",\"ResultWriter\":{\"Resource\":\"arn:aws:states:::s3:putObject\","
             "\"Parameters\":{\"Bucket\":\"b\"}},\"ItemProcessor\":{\"ProcessorConfig\":{"
             "\"Mode\":\"DISTRIBUTED\"},\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":"
             "\"Pass\",\"End\":true}}},\"End\":true}}}"),
        text("[1,2]"), text("{\"Each\":[{\"Return\":{}}]}"), 0, &runs);
    json_object *last = json_object_array_get_idx(evs, json_object_array_length(evs) - 1);
    json_object *out = json_tokener_parse(detail_string(last, "output"));
    const char *writer = swf_json_get_string(out, "MapRunArn"),
               *api = run_get(runs, 0, "mapRunArn");
    cr_assert(writer != NULL && strstr(writer, ":mapRun:") != NULL, "%s", swf_json_str(out));
    cr_assert_str_eq(strstr(writer, ":mapRun:"), strstr(api, ":mapRun:"));
    json_object_put(out);
    run_is(runs, "SUCCEEDED", "S/1,S/1", evs);
}

/* Prints the derived events in events_match's notation (to write a case). */
static void events_print(json_object *evs)
{
    for (size_t i = 0; i < json_object_array_length(evs); i++) {
        json_object *e = json_object_array_get_idx(evs, i), *v;
        json_object_object_get_ex(e, "previousEventId", &v);
        const char *nm = detail_string(e, "name");
        long x = detail_long(e, "index");
        fprintf(stderr, "%s%s%s", i ? ", " : "", swf_json_get_string(e, "type"), nm ? ":" : "");
        fprintf(stderr, "%s", nm ? nm : "");
        if (x >= 0)
            fprintf(stderr, "#%ld", x);
        fprintf(stderr, " %lld", (long long)json_object_get_int64(v));
    }
    fprintf(stderr, "\n");
}

/* A Map over [0, 1] whose iteration 0 fails after fail_after_s (Wait S,
 * Fail F) and whose iteration 1 waits a minute (W), with the Map's `handling`
 * and the definition's `timeout` (its TimeoutSeconds member or ""): the
 * derived events. */
static json_object *map_abort_case(const char *handling, const char *timeout, int fail_after_s,
                                   int64_t stop_ms)
{
    char def[1536];
    snprintf(def, sizeof(def),
             "{%s\"StartAt\":\"M\",\"States\":{\"M\":{\"Type\":\"Map\",\"ItemsPath\":\"$.a\","
             "\"ItemProcessor\":{\"StartAt\":\"C\",\"States\":{\"C\":{\"Type\":\"Choice\","
             "\"Choices\":[{\"Variable\":\"$\",\"NumericEquals\":0,\"Next\":\"S\"}],"
             "\"Default\":\"W\"},\"S\":{\"Type\":\"Wait\",\"Seconds\":%d,\"Next\":\"F\"},"
             "\"F\":{\"Type\":\"Fail\",\"Error\":\"E\"},"
             "\"W\":{\"Type\":\"Wait\",\"Seconds\":60,\"End\":true}}},%s}}}",
             timeout, fail_after_s, handling);
    json_object *evs = run_derive(text(def), text("{\"a\":[0,1]}"), NULL, stop_ms, NULL);
    if (getenv("HISTORY_PRINT") != NULL)
        events_print(evs);
    return evs;
}

/* What the four cases below share: iteration 0 waits (S) while 1 starts
 * and waits (W), then 0 fails (event 14). */
#define ABORT_START                                                                                \
    "ExecutionStarted 0, MapStateEntered:M 0, MapStateStarted#2 2, MapIterationStarted:M#0 3, "    \
    "ChoiceStateEntered:C 4, ChoiceStateExited:C 5, WaitStateEntered:S 6, "                        \
    "MapIterationStarted:M#1 3, ChoiceStateEntered:C 8, ChoiceStateExited:C 9, "                   \
    "WaitStateEntered:W 10, WaitStateExited:S 7, FailStateEntered:F 12, MapIterationFailed:M#0 "   \
    "13, "

Test(api_history, an_iteration_still_running_when_a_sibling_fails_its_map_is_aborted)
{
    /* The Map stops iteration 1 (MapIterationAborted, pointing at the
     * iteration's last event) before it fails; MapStateFailed points at
     * the failed iteration's last event, as in AWS. */
    events_match(map_abort_case("\"End\":true", "", 1, 0),
                 ABORT_START "MapIterationAborted:M#1 11, MapStateFailed 13, ExecutionFailed 16");
}

Test(api_history, an_iteration_still_running_when_its_map_fails_and_is_caught_is_aborted)
{
    events_match(map_abort_case("\"Catch\":[{\"ErrorEquals\":[\"States.ALL\"],\"Next\":\"P\"}],"
                                "\"Next\":\"P\"},\"P\":{\"Type\":\"Pass\",\"End\":true",
                                "", 1, 0),
                 ABORT_START "MapIterationAborted:M#1 11, MapStateFailed 13, MapStateExited:M 16, "
                             "PassStateEntered:P 17, PassStateExited:P 18, ExecutionSucceeded 19");
}

Test(api_history, an_iteration_still_running_when_its_map_is_retried_is_aborted_before_it_restarts)
{
    /* The second attempt's iteration 1 is aborted in its turn. */
    events_match(map_abort_case("\"Retry\":[{\"ErrorEquals\":[\"States.ALL\"],"
                                "\"IntervalSeconds\":1,\"MaxAttempts\":1}],\"End\":true",
                                "", 1, 0),
                 ABORT_START "MapIterationAborted:M#1 11, MapStateStarted#2 13, "
                             "MapIterationStarted:M#0 16, ChoiceStateEntered:C 17, "
                             "ChoiceStateExited:C 18, WaitStateEntered:S 19, "
                             "MapIterationStarted:M#1 16, ChoiceStateEntered:C 21, "
                             "ChoiceStateExited:C 22, WaitStateEntered:W 23, "
                             "WaitStateExited:S 20, FailStateEntered:F 25, "
                             "MapIterationFailed:M#0 26, MapIterationAborted:M#1 24, "
                             "MapStateFailed 26, ExecutionFailed 29");
}

Test(api_history, iterations_still_running_when_the_execution_times_out_are_aborted)
{
    /* Both iterations wait when the execution's 1 s is up: each is aborted
     * before ExecutionTimedOut. */
    events_match(map_abort_case("\"End\":true", "\"TimeoutSeconds\":1,", 30, 0),
                 "ExecutionStarted 0, MapStateEntered:M 0, MapStateStarted#2 2, "
                 "MapIterationStarted:M#0 3, ChoiceStateEntered:C 4, ChoiceStateExited:C 5, "
                 "WaitStateEntered:S 6, MapIterationStarted:M#1 3, ChoiceStateEntered:C 8, "
                 "ChoiceStateExited:C 9, WaitStateEntered:W 10, MapIterationAborted:M#0 7, "
                 "MapIterationAborted:M#1 11, ExecutionTimedOut 3");
}

Test(api_history, iterations_still_running_when_the_execution_is_stopped_are_aborted)
{
    /* Stopped (terminated) 2 s in, both iterations waiting. */
    events_match(map_abort_case("\"End\":true", "", 30, 1700000002000),
                 "ExecutionStarted 0, MapStateEntered:M 0, MapStateStarted#2 2, "
                 "MapIterationStarted:M#0 3, ChoiceStateEntered:C 4, ChoiceStateExited:C 5, "
                 "WaitStateEntered:S 6, MapIterationStarted:M#1 3, ChoiceStateEntered:C 8, "
                 "ChoiceStateExited:C 9, WaitStateEntered:W 10, MapIterationAborted:M#0 7, "
                 "MapIterationAborted:M#1 11, ExecutionAborted 3");
}

/* Event i (from 0). */
static json_object *event_at(json_object *evs, size_t i)
{
    cr_assert_lt(i, json_object_array_length(evs));
    return json_object_array_get_idx(evs, i);
}

/* The index of the first event of `type` (and name, when not NULL) from
 * `from`; fails when there is none. */
static size_t event_find(json_object *evs, size_t from, const char *type, const char *name)
{
    for (size_t i = from; i < json_object_array_length(evs); i++) {
        json_object *e = json_object_array_get_idx(evs, i);
        const char *nm = detail_string(e, "name");
        if (strcmp(swf_json_get_string(e, "type"), type) == 0 &&
            (name == NULL || (nm != NULL && strcmp(nm, name) == 0)))
            return i;
    }
    cr_assert_fail("no %s%s%s from event %zu", type, name ? ":" : "", name ? name : "", from + 1);
    return 0;
}

/* AWS: MapStateStarted's length is the number of items of the Map (after
 * ItemsPath or ItemReader and MaxItems), however many iterations start:
 * here MaxConcurrency 1 and the first iteration fails, so one starts. */
Test(api_history, map_state_started_counts_the_map_s_items_not_the_iterations_started)
{
    /* Inline, over [1,2,3]. */
    events_match(
        run_events(text("{\"StartAt\":\"M\",\"States\":{\"M\":{\"Type\":\"Map\",\"MaxConcurrency\":"
                        "1,\"ItemProcessor\":{\"StartAt\":\"F\",\"States\":{\"F\":{\"Type\":"
                        "\"Fail\",\"Error\":\"E\"}}},\"End\":true}}}"),
                   text("[1,2,3]"), NULL),
        "ExecutionStarted 0, MapStateEntered:M 0, MapStateStarted#3 2, "
        "MapIterationStarted:M#0 3, FailStateEntered:F 4, MapIterationFailed:M#0 5, "
        "MapStateFailed 5, ExecutionFailed 7");
    /* Distributed: iterations 0 and 1 start, 2 never does. */
    json_object *runs = NULL;
    json_object *evs = distributed_run("\"MaxConcurrency\":1,", &runs);
    json_object *started = event_at(evs, event_find(evs, 0, "MapStateStarted", NULL));
    cr_assert_eq(detail_long(started, "length"), 3);
    run_is(runs, "FAILED", "S/1,F/1,A/1", evs);
    /* Read by an ItemReader: 3 items, MaxItems 2. */
    evs = run_derive(
        text("{\"StartAt\":\"M\",\"States\":{\"M\":{\"Type\":\"Map\",\"MaxConcurrency\":1,"
             "\"ItemReader\":{\"Resource\":\"arn:aws:states:::s3:getObject\",\"ReaderConfig\":{"
             "\"InputType\":\"JSON\",\"MaxItems\":2},\"Parameters\":{\"Bucket\":\"b\",\"Key\":"
             "\"k\"}},\"ItemProcessor\":{\"ProcessorConfig\":{\"Mode\":\"DISTRIBUTED\"},"
             "\"StartAt\":\"F\",\"States\":{\"F\":{\"Type\":\"Fail\",\"Error\":\"E\"}}},"
             "\"End\":true}}}"),
        text("{}"), text("{\"M\":[{\"Return\":\"[1,2,3]\"}]}"), 0, NULL);
    started = event_at(evs, event_find(evs, 0, "MapStateStarted", NULL));
    cr_assert_eq(detail_long(started, "length"), 2);
    json_object_put(evs);
}

/* AWS stops a Map's other iterations when one fails, whatever comes next:
 * for a Map its Retry takes, MapIterationAborted is at the failure (its
 * time, and before what other threads do during the back-off), not when
 * the Map starts again. Here the Map (Retry after 5 s) is a branch of a
 * Parallel whose other branch waits 3 s: its WaitStateExited comes
 * between the failure (1 s) and the Map's second start (6 s). */
Test(api_history, a_retried_map_s_iterations_are_aborted_when_it_fails_not_when_it_starts_again)
{
    json_object *evs = map_abort_case("\"Retry\":[{\"ErrorEquals\":[\"States.ALL\"],"
                                      "\"IntervalSeconds\":5,\"MaxAttempts\":1}],\"End\":true",
                                      "", 1, 0);
    size_t failed = event_find(evs, 0, "MapIterationFailed", NULL);
    size_t aborted = event_find(evs, 0, "MapIterationAborted", NULL);
    cr_assert_eq(aborted, failed + 1);
    cr_assert_eq(
        json_object_get_double(json_object_object_get(event_at(evs, aborted), "timestamp")),
        json_object_get_double(json_object_object_get(event_at(evs, failed), "timestamp")),
        "MapIterationAborted at the restart, not at the failure");
    json_object_put(evs);

    evs = run_events(
        text("{\"StartAt\":\"Par\",\"States\":{\"Par\":{\"Type\":\"Parallel\",\"End\":true,"
             "\"Branches\":[{\"StartAt\":\"M\",\"States\":{\"M\":{\"Type\":\"Map\",\"ItemsPath\":"
             "\"$.a\",\"Retry\":[{\"ErrorEquals\":[\"States.ALL\"],\"IntervalSeconds\":5,"
             "\"MaxAttempts\":1}],\"End\":true,\"ItemProcessor\":{\"StartAt\":\"C\",\"States\":{"
             "\"C\":{\"Type\":\"Choice\",\"Choices\":[{\"Variable\":\"$\",\"NumericEquals\":0,"
             "\"Next\":\"S\"}],\"Default\":\"W\"},\"S\":{\"Type\":\"Wait\",\"Seconds\":1,"
             "\"Next\":\"F\"},\"F\":{\"Type\":\"Fail\",\"Error\":\"E\"},\"W\":{\"Type\":\"Wait\","
             "\"Seconds\":60,\"End\":true}}}}}},{\"StartAt\":\"B\",\"States\":{\"B\":{\"Type\":"
             "\"Wait\",\"Seconds\":3,\"End\":true}}}]}}}"),
        text("{\"a\":[0,1]}"), NULL);
    failed = event_find(evs, 0, "MapIterationFailed", NULL);
    aborted = event_find(evs, 0, "MapIterationAborted", NULL);
    size_t other = event_find(evs, 0, "WaitStateExited", "B");
    size_t again = event_find(evs, failed, "MapStateStarted", NULL);
    cr_assert(failed < aborted && aborted < other && other < again,
              "failed %zu, aborted %zu, the other branch %zu, the restart %zu", failed + 1,
              aborted + 1, other + 1, again + 1);
    json_object_put(evs);
}

/* A Task's TimeoutSeconds inside a distributed Map's iteration: AWS fails
 * the child execution with States.Timeout (FAILED: only an execution's own
 * timeout makes it TIMED_OUT, and an item processor has none), so the run
 * counts it failed, not timedOut. The mock answers as a timed-out task
 * does (mocks.h: the interpreter raises the same States.Timeout). */
Test(api_history, a_task_timing_out_in_a_distributed_iteration_fails_the_iteration)
{
    json_object *runs = NULL;
    json_object *evs = run_derive(
        text("{\"StartAt\":\"M\",\"States\":{\"M\":{\"Type\":\"Map\",\"ToleratedFailureCount\":1,"
             "\"ItemProcessor\":{\"ProcessorConfig\":{\"Mode\":\"DISTRIBUTED\"},\"StartAt\":"
             "\"T\",\"States\":{\"T\":{\"Type\":\"Task\",\"Resource\":\"arn:aws:states:us-east-"
             "1:123456789012:activity:a\",\"TimeoutSeconds\":1,\"End\":true}}},\"End\":true}}}"),
        text("[1,2]"), text("{\"T\":[{\"Throw\":{\"Error\":\"States.Timeout\"}},{\"Return\":{}}]}"),
        0, &runs);
    run_is(runs, "SUCCEEDED", "F/1,S/1", evs);
}
