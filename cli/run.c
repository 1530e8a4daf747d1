/*
 * run.c - `swf run --local DEFINITION [--input JSON|@FILE] [--mocks FILE] [--history]`
 * (and the options of `swf run --dev`, which cli/dev.c runs).
 *
 * Runs one execution in-process (decider/local.h) and prints one JSON object,
 * the contract of the conformance harness:
 *
 *   {"status":"SUCCEEDED","output":...}
 *   {"status":"FAILED","error":"...","cause":"..."}
 *   {"status":"INVALID","errors":["$.States.X: ..."]}
 *
 * or, with --history, the recorded events as JSON lines. Exit status: 0 when
 * the execution succeeded, 1 when it failed or the definition is invalid, 2
 * for a usage error, 3 when a file cannot be read.
 */
#include "cli/cli.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/dev.h"
#include "decider/asl/validate.h"
#include "decider/sw/sw.h"
#include "decider/local.h"
#include "decider/mocks.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/time.h"

static const swf_cli_cmd_t run_cmd = {
    "swf run",
    "(--local | --dev) DEFINITION [--input JSON|@FILE] [--mocks FILE] [--events FILE] [--history]",
    "Run one execution of a definition to its end and print its result as one JSON object: "
    "{\"status\":\"SUCCEEDED\",\"output\":...}, "
    "{\"status\":\"FAILED\",\"error\":...,\"cause\":...} "
    "or {\"status\":\"INVALID\",\"errors\":[...]}. Exit status 0 when it succeeded, 1 when it "
    "failed or the definition is invalid.",
    (const swf_cli_opt_t[]){
        {"DEFINITION", NULL, SWF_CLI_REQUIRED,
         "the ASL definition or Serverless Workflow document (a JSON file)",
         "swf run --local examples/order.asl.json"},
        {"--local", NULL, 0, "run in this process, with an in-memory history",
         "swf run --local order.asl.json"},
        {"--dev", NULL, 0,
         "run on swf dev's system: deciders, swf-history and Kafka (the running swf dev's when "
         "SWF_DATABASE_URL and SWF_KAFKA_BROKERS are set, else a throwaway one)",
         "swf run --dev examples/order.asl.json --mocks mocks.json"},
        {"--input", "JSON|@FILE", 0, "the execution's input, {} when not given: " SWF_CLI_JSON_HELP,
         "swf run --local order.asl.json --input '{\"orderId\": 7}'"},
        {"--mocks", "FILE", 0,
         "answers for the Task states, by state name (Serverless Workflow: by function "
         "name): a list of {\"Return\": VALUE}, "
         "{\"Throw\": {\"Error\": ..., \"Cause\": ...}} or {\"Echo\": true}, one per call",
         "swf run --local order.asl.json --mocks mocks.json"},
        {"--events", "FILE", 0,
         "Serverless Workflow: a JSON array of CloudEvents, delivered one at a time whenever a "
         "state waits and nothing else can run (SPEC 14)",
         "swf run --local loan.sw.json --events events.json"},
        {"--history", NULL, 0, "--local: print the recorded events as JSON lines instead",
         "swf run --local order.asl.json --history"},
        SWF_CLI_OPTS_END},
    NULL};

static void print_json_line(json_object *o)
{
    fputs(swf_json_str(o), stdout);
    fputc('\n', stdout);
}

/* Prints {"status":"INVALID","errors":[...]} for a definition. */
static int print_invalid(const char **messages, size_t n)
{
    json_object *o = json_object_new_object(), *errs = json_object_new_array();
    json_object_object_add(o, "status", json_object_new_string("INVALID"));
    for (size_t i = 0; i < n; i++)
        json_object_array_add(errs, json_object_new_string(messages[i]));
    json_object_object_add(o, "errors", errs);
    print_json_line(o);
    json_object_put(o);
    return SWF_EXIT_NO;
}

int swf_cli_run_definition(const char *def_path, json_object **def)
{
    *def = NULL;
    json_object *d = NULL;
    swf_error_t *err = swf_json_read_file(def_path, SWF_LIMIT_DEFINITION_BYTES, &d);
    if (err != NULL) {
        /* A definition that is not JSON is refused like any invalid one; one
         * that cannot be read is not a verdict on the definition. */
        const char *msg = swf_error_message(err);
        fprintf(stderr, "swf: %s\n", msg);
        int rc = swf_error_code(err) == SWF_E_IO ? SWF_EXIT_ERROR : print_invalid(&msg, 1);
        swf_error_free(err);
        return rc;
    }
    swf_asl_problems_t problems = {0};
    if (swf_sw_validate_any(d, &problems) == 0) {
        swf_asl_problems_free(&problems);
        *def = d;
        return SWF_EXIT_OK;
    }
    const char **msgs = calloc(problems.count, sizeof(char *));
    char **owned = calloc(problems.count, sizeof(char *));
    assert(msgs != NULL && owned != NULL);
    for (size_t i = 0; i < problems.count; i++) {
        size_t n = strlen(problems.items[i].where) + strlen(problems.items[i].message) + 3;
        owned[i] = malloc(n);
        assert(owned[i] != NULL);
        snprintf(owned[i], n, "%s: %s", problems.items[i].where, problems.items[i].message);
        msgs[i] = owned[i];
        fprintf(stderr, "%s: %s\n", def_path, owned[i]);
    }
    int rc = print_invalid(msgs, problems.count);
    for (size_t i = 0; i < problems.count; i++)
        free(owned[i]);
    free(owned);
    free(msgs);
    swf_asl_problems_free(&problems);
    json_object_put(d);
    return rc;
}

static int print_history(swf_history_store_t *store, const char *id)
{
    swf_event_list_t events = {0};
    swf_error_t *err = swf_history_load(store, id, 0, 0, &events);
    if (err != NULL) {
        fprintf(stderr, "swf: %s\n", swf_error_message(err));
        swf_error_free(err);
        return SWF_EXIT_ERROR;
    }
    for (size_t i = 0; i < events.count; i++) {
        json_object *o = swf_event_to_json(&events.items[i]);
        print_json_line(o);
        json_object_put(o);
    }
    swf_event_list_free(&events);
    return SWF_EXIT_OK;
}

static json_object *result_json(const swf_local_result_t *res)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "status", json_object_new_string(swf_asl_status_name(res->status)));
    if (res->status == SWF_ASL_SUCCEEDED) {
        json_object_object_add(o, "output", swf_json_ref(res->output));
    } else {
        json_object_object_add(o, "error", json_object_new_string(res->error ? res->error : ""));
        json_object_object_add(o, "cause", json_object_new_string(res->cause ? res->cause : ""));
    }
    return o;
}

int swf_cli_run(int argc, char **argv)
{
    swf_cli_args_t a;
    if (!swf_cli_args_parse(&run_cmd, argc, argv, &a))
        return a.status;
    const char *def_path = swf_cli_args_get(&a, "DEFINITION");
    const char *input_arg = swf_cli_args_get(&a, "--input");
    const char *mocks_path = swf_cli_args_get(&a, "--mocks");
    const char *events_path = swf_cli_args_get(&a, "--events");
    bool history = swf_cli_args_has(&a, "--history");
    if (swf_cli_args_has(&a, "--local") == swf_cli_args_has(&a, "--dev"))
        return swf_cli_args_usage(&a, "give one of --local and --dev");
    if (swf_cli_args_has(&a, "--dev")) {
        if (history)
            return swf_cli_args_usage(&a, "--history goes with --local (swf history shows a "
                                          "--dev execution's)");
        return swf_cli_run_dev(def_path, input_arg, mocks_path, events_path);
    }

    int rc = SWF_EXIT_ERROR;
    json_object *def = NULL, *input = NULL, *mocks = NULL, *events = NULL;
    swf_history_store_t *store = NULL;
    swf_local_result_t res = {0};
    swf_error_t *err = NULL;
    rc = swf_cli_run_definition(def_path, &def);
    if (def == NULL)
        goto done;
    rc = SWF_EXIT_ERROR;
    if (input_arg != NULL) {
        err = swf_cli_json_arg("--input", input_arg, SWF_LIMIT_PAYLOAD_BYTES, &input);
        if (err != NULL) {
            fprintf(stderr, "swf run: input: %s\n", swf_error_message(err));
            goto done;
        }
    } else {
        input = json_object_new_object();
    }
    if (mocks_path != NULL) {
        err = swf_json_read_file(mocks_path, SWF_LIMIT_JSON_BYTES, &mocks);
        if (err == NULL) {
            err = swf_decider_mocks_check(mocks);
            if (err != NULL)
                swf_error_prefix(err, "%s", mocks_path);
        }
        if (err != NULL) {
            fprintf(stderr, "swf: mocks: %s\n", swf_error_message(err));
            goto done;
        }
    }
    if (events_path != NULL && swf_sw_is_document(def)) { /* ASL ignores --events */
        err = swf_json_read_file(events_path, SWF_LIMIT_JSON_BYTES, &events);
        if (err == NULL && !json_object_is_type(events, json_type_array))
            err = swf_error_new(SWF_E_INPUT, NULL, "%s: must be a JSON array of CloudEvents",
                                events_path);
        if (err != NULL) {
            fprintf(stderr, "swf: events: %s\n", swf_error_message(err));
            goto done;
        }
    }
    store = swf_history_mem_new();
    /* A nested execution's state machine is a file beside the definition
     * (decider/local.h). */
    char dir[4096];
    swf_local_machine_dir(def_path, dir, sizeof(dir));
    swf_local_options_t opt = {
        .machine_dir = dir,
        .definition = def,
        .input = input,
        .mocks = mocks,
        .events = events,
        .machine_name = "StateMachine",
        .execution_id = "local",
        .start_ms = swf_time_now_ms(),
        .trusted = true, /* validated above */
    };
    err = swf_local_run(&opt, store, &res);
    if (err != NULL) {
        fprintf(stderr, "swf: run: %s\n", swf_error_message(err));
        goto done;
    }
    if (history) {
        /* The history is printed whatever the outcome; the exit status still
         * says how the execution ended, as without --history. */
        rc = print_history(store, "local");
        if (rc == SWF_EXIT_OK && res.status != SWF_ASL_SUCCEEDED)
            rc = SWF_EXIT_NO;
    } else {
        json_object *o = result_json(&res);
        print_json_line(o);
        json_object_put(o);
        rc = res.status == SWF_ASL_SUCCEEDED ? SWF_EXIT_OK : SWF_EXIT_NO;
    }
done:
    swf_error_free(err);
    swf_local_result_free(&res);
    swf_history_store_free(store);
    json_object_put(def);
    json_object_put(input);
    json_object_put(mocks);
    json_object_put(events);
    return rc;
}
