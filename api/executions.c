/*
 * executions.c - StartExecution, DescribeExecution, StopExecution and
 * ListExecutions.
 *
 * An execution's name is its execution id in swf (so `swf describe NAME`
 * and the API's ARN name the same execution) and its workflow id. AWS
 * makes StartExecution idempotent by name: the same name and input while
 * the execution runs answers with that execution; another input, or an
 * execution of that name that already closed, is ExecutionAlreadyExists.
 * So it is here, with one difference: AWS scopes names to a state machine,
 * swf's execution ids are global, so a name another state machine already
 * used is ExecutionAlreadyExists too (api/README.md).
 *
 * Starting is swf_history_pg_execution_start (WorkflowExecutionStarted and
 * DecisionTaskScheduled in one append) and then a signed `decide` on the
 * inbox; if that message is lost, swf-history's sweep hands the execution
 * to a decider, so the start is answered once it is in PostgreSQL.
 * StopExecution is a signed `terminate` (status ABORTED once a decider
 * appended it).
 */
#include "api/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history/catalog.h"
#include "history/pg.h"
#include "protocol/hash.h"
#include "protocol/json.h"
#include "protocol/message.h"
#include "protocol/time.h"

const char *swf_api__execution_status(const char *status)
{
    if (strcmp(status, "open") == 0)
        return "RUNNING";
    if (strcmp(status, "succeeded") == 0)
        return "SUCCEEDED";
    if (strcmp(status, "failed") == 0)
        return "FAILED";
    if (strcmp(status, "timed_out") == 0)
        return "TIMED_OUT";
    return "ABORTED"; /* canceled, terminated */
}

static swf_error_t *no_execution(const char *arn)
{
    return swf_api__err("ExecutionDoesNotExist", "Execution Does Not Exist: '%s'", arn);
}

swf_error_t *swf_api__execution_find(swf_api_call_t *call, json_object *in,
                                     swf_history_execution_t *out)
{
    memset(out, 0, sizeof(*out));
    char machine[SWF_API_NAME_BYTES + 1], name[SWF_API_NAME_BYTES + 1];
    const char *arn;
    swf_error_t *err = swf_api__str(in, "executionArn", true, SWF_API_ARN_BYTES, &arn);
    if (err == NULL)
        err = swf_api__arn_parse(arn, "execution", machine, name);
    if (err == NULL && name[0] == '\0')
        err = swf_api__err("InvalidArn", "Invalid Arn: '%s': no execution name", arn);
    if (err == NULL)
        err = swf_api__allowed(call, "stateMachine", machine);
    swf_history_store_t *s;
    if (err == NULL)
        err = swf_api__store(call, &s);
    if (err == NULL)
        err = swf_history_pg_execution_describe(s, name, out);
    if (err != NULL && swf_error_code(err) == SWF_E_NOTFOUND) {
        swf_error_free(err);
        return no_execution(arn);
    }
    if (err == NULL && strcmp(out->state_machine, machine) != 0) {
        swf_history_execution_free(out);
        return no_execution(arn);
    }
    return err;
}

/* The input an execution started with (a new reference; NULL is JSON null). */
static swf_error_t *execution_input(swf_history_store_t *s, const char *id, json_object **input)
{
    *input = NULL;
    swf_event_list_t first = {0};
    swf_error_t *err = swf_history_load(s, id, 0, 1, &first);
    if (err == NULL && first.count == 1) {
        json_object *v = NULL;
        swf_json_get(first.items[0].attrs, "input", &v);
        *input = swf_json_ref(v);
    }
    swf_event_list_free(&first);
    return err;
}

/* The answer to a start that finds the execution `name` already there. */
static swf_error_t *start_again(swf_api_call_t *call, swf_history_store_t *s, const char *machine,
                                const char *name, json_object *input, json_object **out)
{
    swf_history_execution_t ex;
    char arn[SWF_API_ARN_BYTES];
    swf_api__arn(call->api, "execution", machine, name, arn);
    swf_error_t *err = swf_history_pg_execution_describe(s, name, &ex);
    if (err != NULL)
        return err;
    json_object *old = NULL;
    bool same = strcmp(ex.state_machine, machine) == 0 && strcmp(ex.status, "open") == 0;
    if (same) {
        err = execution_input(s, name, &old);
        same = err == NULL && swf_json_equal(old, input);
    }
    json_object_put(old);
    if (err == NULL && !same)
        err = swf_api__err("ExecutionAlreadyExists", "Execution Already Exists: '%s'", arn);
    if (err == NULL) {
        *out = json_object_new_object();
        swf_json_add(*out, "executionArn", json_object_new_string(arn));
        swf_json_add(*out, "startDate", swf_api__time(ex.start_ms));
    }
    swf_history_execution_free(&ex);
    return err;
}

swf_error_t *swf_api__execution_start(swf_api_call_t *call, json_object *in, json_object **out)
{
    const char *name, *input_text;
    char machine[SWF_API_NAME_BYTES + 1], alias[SWF_API_NAME_BYTES + 1];
    int version = 0;
    swf_error_t *err =
        swf_api__machine_target(call, in, "stateMachineArn", machine, &version, alias);
    if (err == NULL)
        err = swf_api__str(in, "name", false, SWF_API_NAME_BYTES, &name);
    if (err == NULL)
        err = swf_api__str(in, "input", false, SWF_API_PAYLOAD_BYTES, &input_text);
    char uuid[37];
    if (err == NULL && name == NULL) {
        err = swf_uuid_new(uuid);
        name = uuid;
    }
    if (err == NULL)
        err = swf_api__name_check(name);
    json_object *input = NULL;
    if (err == NULL && input_text != NULL) {
        swf_error_t *perr =
            swf_json_parse(input_text, strlen(input_text), SWF_API_PAYLOAD_BYTES, &input);
        if (perr != NULL) {
            err = swf_api__err("InvalidExecutionInput", "Invalid Execution Input: %s",
                               swf_error_message(perr));
            swf_error_free(perr);
        }
    } else if (err == NULL) {
        input = json_object_new_object();
    }
    swf_history_store_t *s = NULL;
    if (err == NULL)
        err = swf_api__store(call, &s);
    if (err == NULL) {
        swf_history_execution_t ex;
        swf_error_t *e = swf_history_pg_execution_describe(s, name, &ex);
        if (e == NULL) {
            swf_history_execution_free(&ex);
            err = start_again(call, s, machine, name, input, out);
            json_object_put(input);
            return err;
        }
        if (swf_error_code(e) != SWF_E_NOTFOUND)
            err = e;
        else
            swf_error_free(e);
    }
    if (err != NULL) {
        json_object_put(input);
        return err;
    }
    int64_t now = swf_time_now_ms();
    swf_history_start_t req = {.execution_id = name,
                               .workflow_id = name,
                               .state_machine = machine,
                               .version = version,
                               .input = input,
                               .time_ms = now};
    char *running = NULL;
    err = swf_history_pg_execution_start(s, &req, &running);
    free(running);
    if (err != NULL && swf_error_code(err) == SWF_E_NOTFOUND) {
        swf_error_free(err);
        char marn[SWF_API_ARN_BYTES];
        swf_api__arn(call->api, "stateMachine", machine, NULL, marn);
        err = swf_api__err("StateMachineDoesNotExist", "State Machine Does Not Exist: '%s'", marn);
    } else if (err != NULL && swf_error_code(err) == SWF_E_CONFLICT) {
        /* Another start of the same name won the race: answer as for it. */
        swf_error_free(err);
        err = start_again(call, s, machine, name, input, out);
        json_object_put(input);
        return err;
    }
    json_object_put(input);
    if (err != NULL)
        return err;
    swf_api__execution_target_record(call, name, version, alias); /* aliases.c */
    json_object *m = swf_msg_decide_new(call->api->secret, name);
    swf_error_t *serr = swf_api__inbox_send(call->api, name, m);
    json_object_put(m);
    /* Started all the same: swf-history's sweep notifies a decider. */
    swf_error_free(serr);
    char earn[SWF_API_ARN_BYTES];
    swf_api__arn(call->api, "execution", machine, name, earn);
    *out = json_object_new_object();
    swf_json_add(*out, "executionArn", json_object_new_string(earn));
    swf_json_add(*out, "startDate", swf_api__time(now));
    return NULL;
}

/* What DescribeExecution and ListExecutions both show of an execution. */
static json_object *execution_summary(swf_api_call_t *call, const swf_history_execution_t *ex)
{
    char marn[SWF_API_ARN_BYTES], earn[SWF_API_ARN_BYTES];
    swf_api__arn(call->api, "stateMachine", ex->state_machine, NULL, marn);
    swf_api__arn(call->api, "execution", ex->state_machine, ex->execution_id, earn);
    json_object *o = json_object_new_object();
    swf_json_add(o, "executionArn", json_object_new_string(earn));
    swf_json_add(o, "stateMachineArn", json_object_new_string(marn));
    swf_json_add(o, "name", json_object_new_string(ex->execution_id));
    swf_json_add(o, "status", json_object_new_string(swf_api__execution_status(ex->status)));
    swf_json_add(o, "startDate", swf_api__time(ex->start_ms));
    if (ex->close_ms >= 0)
        swf_json_add(o, "stopDate", swf_api__time(ex->close_ms));
    return o;
}

/* A JSON value as the string the API carries it in. */
static json_object *json_text(json_object *v)
{
    return json_object_new_string(swf_json_str(v));
}

swf_error_t *swf_api__execution_describe(swf_api_call_t *call, json_object *in, json_object **out)
{
    swf_history_execution_t ex;
    swf_error_t *err = swf_api__execution_find(call, in, &ex);
    if (err != NULL)
        return err;
    swf_history_store_t *s;
    json_object *input = NULL;
    swf_event_list_t last = {0};
    err = swf_api__store(call, &s);
    if (err == NULL)
        err = execution_input(s, ex.execution_id, &input);
    if (err == NULL && ex.close_ms >= 0)
        err = swf_history_pg_load_reverse(s, ex.execution_id, 0, 1, &last);
    if (err == NULL) {
        json_object *o = execution_summary(call, &ex);
        swf_json_add(o, "input", json_text(input));
        json_object *det = json_object_new_object();
        swf_json_add(det, "included", json_object_new_boolean(1));
        swf_json_add(o, "inputDetails", det);
        if (last.count == 1) {
            const swf_event_t *ev = &last.items[0];
            json_object *v = NULL;
            if (ev->type == SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED) {
                swf_json_get(ev->attrs, "result", &v);
                swf_json_add(o, "output", json_text(v));
                json_object *od = json_object_new_object();
                swf_json_add(od, "included", json_object_new_boolean(1));
                swf_json_add(o, "outputDetails", od);
            } else {
                const char *error = swf_json_get_string(ev->attrs, "reason");
                const char *cause = swf_json_get_string(ev->attrs, "details");
                /* The words the interpreter closes a timed-out execution
                 * with (decider/asl/exec.c): swf run --local says the same. */
                if (ev->type == SWF_EVENT_WORKFLOW_EXECUTION_TIMED_OUT) {
                    error = "States.Timeout";
                    if (cause == NULL)
                        cause = "the execution ran longer than its TimeoutSeconds";
                }
                if (error != NULL)
                    swf_json_add(o, "error", json_object_new_string(error));
                if (cause != NULL)
                    swf_json_add(o, "cause", json_object_new_string(cause));
            }
        }
        swf_api__execution_target_describe(call, &ex, o); /* aliases.c */
        swf_api__redrive_describe(call, &ex, o);
        *out = o;
    }
    json_object_put(input);
    swf_event_list_free(&last);
    swf_history_execution_free(&ex);
    return err;
}

swf_error_t *swf_api__execution_stop(swf_api_call_t *call, json_object *in, json_object **out)
{
    const char *error, *cause;
    swf_error_t *err = swf_api__str(in, "error", false, SWF_MSG_NAME_BYTES, &error);
    if (err == NULL)
        err = swf_api__str(in, "cause", false, SWF_MSG_CAUSE_BYTES, &cause);
    swf_history_execution_t ex;
    if (err == NULL)
        err = swf_api__execution_find(call, in, &ex);
    if (err != NULL)
        return err;
    int64_t stop_ms = ex.close_ms;
    if (strcmp(ex.status, "open") == 0) {
        json_object *details = cause ? json_object_new_string(cause) : NULL;
        json_object *m = swf_msg_terminate_new(call->api->secret, ex.execution_id, error, details,
                                               cause != NULL);
        json_object_put(details);
        err = swf_api__inbox_send(call->api, ex.execution_id, m);
        json_object_put(m);
        stop_ms = swf_time_now_ms();
    }
    if (err == NULL) {
        *out = json_object_new_object();
        swf_json_add(*out, "stopDate", swf_api__time(stop_ms));
    }
    swf_history_execution_free(&ex);
    return err;
}

/* ListExecutions' statusFilter in the projection's words. */
/* swf's statuses of an AWS statusFilter (ABORTED is both canceled and
 * terminated); false for a value AWS does not have. PENDING_REDRIVE has
 * none: nothing is pending a redrive of a Map Run in swf. */
static bool status_filter(const char *aws, const char *out[2])
{
    static const char *const map[][3] = {{"RUNNING", "open", NULL},
                                         {"SUCCEEDED", "succeeded", NULL},
                                         {"FAILED", "failed", NULL},
                                         {"TIMED_OUT", "timed_out", NULL},
                                         {"ABORTED", "terminated", "canceled"},
                                         {"PENDING_REDRIVE", NULL, NULL}};
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (strcmp(aws, map[i][0]) == 0) {
            out[0] = map[i][1];
            out[1] = map[i][2];
            return true;
        }
    return false;
}

/* How deep ListExecutions pages (the newest executions). */
#define LIST_DEPTH 10000

/* The rows of one ListExecutions query, newest first: those of `statuses`
 * (two at most; none: every status), of the machine's version when
 * version > 0, up to `limit`. */
static swf_error_t *executions_rows(swf_history_store_t *s, const char *machine, int version,
                                    const char *const statuses[2], bool any, size_t limit,
                                    swf_history_execution_t **items, size_t *n)
{
    *items = NULL;
    *n = 0;
    swf_history_execution_t *got[2] = {NULL, NULL};
    size_t count[2] = {0, 0};
    swf_error_t *err = NULL;
    int queries = any ? 1 : (statuses[1] != NULL ? 2 : statuses[0] != NULL ? 1 : 0);
    for (int q = 0; q < queries && err == NULL; q++) {
        swf_history_filter_t f = {.status = any ? NULL : statuses[q],
                                  .state_machine = machine,
                                  .limit = version > 0 ? LIST_DEPTH : limit};
        err = swf_history_pg_executions_list(s, &f, &got[q], &count[q]);
    }
    if (err != NULL) {
        swf_history_executions_free(got[0], count[0]);
        swf_history_executions_free(got[1], count[1]);
        return err;
    }
    /* Merged newest first, the other version's left out (freed here). */
    swf_history_execution_t *out = calloc(count[0] + count[1] + 1, sizeof(*out));
    if (out == NULL)
        abort();
    size_t i = 0, j = 0, k = 0;
    while (i < count[0] || j < count[1]) {
        bool first = j >= count[1] || (i < count[0] && got[0][i].start_ms >= got[1][j].start_ms);
        swf_history_execution_t *ex = first ? &got[0][i++] : &got[1][j++];
        if ((version > 0 && atoi(ex->state_machine_version) != version) || k >= limit)
            swf_history_execution_free(ex);
        else
            out[k++] = *ex;
    }
    free(got[0]);
    free(got[1]);
    *items = out;
    *n = k;
    return NULL;
}

/* Keeps, in order, the rows that were redriven (or were not), at most
 * `want` of them; frees the others. *n is the count before and after. */
static swf_error_t *executions_redrive_filter(swf_history_store_t *s, bool redriven, size_t want,
                                              swf_history_execution_t *items, size_t *n)
{
    size_t kept = 0;
    swf_error_t *err = NULL;
    for (size_t i = 0; i < *n; i++) {
        int64_t count = 0, last_ms = -1;
        if (err == NULL && kept < want)
            err = swf_history_pg_execution_redrives(s, items[i].execution_id, &count, &last_ms);
        if (err == NULL && kept < want && (count > 0) == redriven)
            items[kept++] = items[i];
        else
            swf_history_execution_free(&items[i]);
    }
    *n = kept;
    return err;
}

swf_error_t *swf_api__executions_list(swf_api_call_t *call, json_object *in, json_object **out)
{
    const char *status = NULL, *redrive = NULL, *sm = NULL, *map_run = NULL;
    const char *statuses[2] = {NULL, NULL};
    char machine[SWF_API_NAME_BYTES + 1];
    int version = 0;
    int64_t max = 100;
    swf_error_t *err = swf_api__str(in, "stateMachineArn", false, SWF_API_ARN_BYTES, &sm);
    if (err == NULL)
        err = swf_api__str(in, "mapRunArn", false, SWF_API_ARN_BYTES, &map_run);
    if (err == NULL && (sm == NULL) == (map_run == NULL))
        err = swf_api__err("ValidationException",
                           sm ? "Specify either a stateMachineArn or a mapRunArn, not both"
                              : "Must provide a stateMachineArn or a mapRunArn");
    if (err == NULL && map_run == NULL)
        err = swf_api__machine_arn(call, in, "stateMachineArn", machine, &version);
    if (err == NULL)
        err = swf_api__str(in, "statusFilter", false, 16, &status);
    if (err == NULL && status != NULL && !status_filter(status, statuses))
        err = swf_api__err("ValidationException",
                           "1 validation error detected: Value '%s' at 'statusFilter' failed to "
                           "satisfy constraint: Member must satisfy enum value set: [RUNNING, "
                           "SUCCEEDED, FAILED, TIMED_OUT, ABORTED, PENDING_REDRIVE]",
                           status);
    if (err == NULL && map_run == NULL && status != NULL && strcmp(status, "PENDING_REDRIVE") == 0)
        err = swf_api__err("ValidationException",
                           "statusFilter PENDING_REDRIVE needs a mapRunArn, not a stateMachineArn");
    if (err == NULL)
        err = swf_api__str(in, "redriveFilter", false, 16, &redrive);
    if (err == NULL && redrive != NULL && strcmp(redrive, "REDRIVEN") != 0 &&
        strcmp(redrive, "NOT_REDRIVEN") != 0)
        err = swf_api__err("ValidationException",
                           "1 validation error detected: Value '%s' at 'redriveFilter' failed to "
                           "satisfy constraint: Member must satisfy enum value set: [REDRIVEN, "
                           "NOT_REDRIVEN]",
                           redrive);
    if (err == NULL)
        err = swf_api__max_results(in, &max);
    long offset = 0;
    if (err == NULL)
        err = swf_api__page_token(in, LIST_DEPTH, &offset);
    if (err == NULL && map_run != NULL)
        return swf_api__map_run_executions(call, in, status, redrive, max, offset, out);
    swf_history_store_t *s;
    if (err == NULL)
        err = swf_api__store(call, &s);
    swf_history_execution_t *items = NULL;
    size_t n = 0;
    /* With a redriveFilter the rows are read as deep as a listing goes and
     * kept by their redrive count (RedriveExecution), so that pages and
     * their tokens count the filtered list. */
    if (err == NULL)
        err = executions_rows(s, machine, version, statuses, status == NULL,
                              redrive != NULL ? LIST_DEPTH : (size_t)offset + (size_t)max + 1,
                              &items, &n);
    if (err == NULL && redrive != NULL)
        err = executions_redrive_filter(s, strcmp(redrive, "REDRIVEN") == 0,
                                        (size_t)offset + (size_t)max + 1, items, &n);
    if (err != NULL) {
        swf_history_executions_free(items, n);
        return err;
    }
    json_object *list = json_object_new_array();
    size_t end = n > (size_t)offset + (size_t)max ? (size_t)offset + (size_t)max : n;
    for (size_t i = (size_t)offset; i < end; i++)
        json_object_array_add(list, execution_summary(call, &items[i]));
    *out = json_object_new_object();
    swf_json_add(*out, "executions", list);
    if (n > end && end < LIST_DEPTH) {
        char next[32];
        snprintf(next, sizeof(next), "%zu", end);
        swf_json_add(*out, "nextToken", json_object_new_string(next));
    }
    swf_history_executions_free(items, n);
    return NULL;
}
