/*
 * nested_store.c - the decider daemon's part of nested executions: the
 * child started in the store, and the parent's answer read from the
 * child's history.
 *
 * Both run on the parent's decider, while it handles a signed message of
 * the outbox's publishers (nested.start when the parent's Task was
 * scheduled, nested.closed when the child closed: protocol/KAFKA.md), so
 * the parent's history is written by its own decider only, as every other
 * answer is. Exactly once comes from two facts: the child's name is the
 * same on every try (decider/nested.h), and the store starts an execution
 * id once; a start that finds the child it would create is taken for the
 * start made before. The answer of a closed child is read from the child's
 * history rather than carried by a message, so the message is small and
 * says nothing the history does not.
 */
#include "decider/nested.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history/pg.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/started.h"

void swf_nested_answer_clear(swf_nested_answer_t *a)
{
    json_object_put(a->result);
    free(a->error);
    free(a->cause);
    memset(a, 0, sizeof(*a));
}

/* A start refused: no child to name. */
static void answer_fail(swf_nested_answer_t *a, const char *error, const char *cause)
{
    a->child_id[0] = '\0';
    a->error = strdup(error);
    a->cause = strdup(cause ? cause : "");
    if (a->error == NULL || a->cause == NULL)
        abort();
}

/* Event `id` of an execution: *out gets it (caller frees the list). */
static swf_error_t *event_load(swf_history_store_t *store, const char *id, int64_t event_id,
                               swf_event_list_t *out)
{
    swf_error_t *err = swf_history_load(store, id, event_id - 1, 1, out);
    if (err == NULL && (out->count != 1 || out->items[0].id != event_id))
        err = swf_error_new(SWF_E_NOTFOUND, NULL, "execution %s has no event %lld", id,
                            (long long)event_id);
    return err;
}

/* Whether the execution `child` is the one this parent's Task started. */
static swf_error_t *child_is_ours(swf_history_store_t *store, const char *child,
                                  const char *parent_id, int64_t sched, bool *ours)
{
    swf_event_list_t first = {0};
    *ours = false;
    swf_error_t *err = event_load(store, child, 1, &first);
    if (err == NULL) {
        int64_t initiated;
        const char *p = swf_started_parent_of(first.items[0].attrs, &initiated);
        *ours = p != NULL && strcmp(p, parent_id) == 0 && initiated == sched;
    } else if (swf_error_code(err) == SWF_E_NOTFOUND) {
        swf_error_free(err);
        err = NULL;
    }
    swf_event_list_free(&first);
    return err;
}

swf_error_t *swf_nested_child_start(swf_history_store_t *store, const char *parent_id,
                                    int parent_depth, const char *task_list_prefix,
                                    const swf_event_t *scheduled, int64_t now_ms,
                                    swf_nested_answer_t *out)
{
    memset(out, 0, sizeof(*out));
    swf_nested_pattern_t pattern = swf_nested_pattern_of_scheduled(scheduled->attrs);
    swf_nested_request_t req;
    swf_error_t *why = swf_nested_request_of(scheduled->attrs, parent_id, &req);
    if (why != NULL) {
        answer_fail(out, swf_error_name(why), swf_error_message(why));
        swf_error_free(why);
        return NULL;
    }
    snprintf(out->child_id, sizeof(out->child_id), "%s", req.name);
    if (parent_depth + 1 > SWF_LIMIT_NESTED_DEPTH) {
        char msg[160];
        snprintf(msg, sizeof(msg), "executions nest at most %d deep", SWF_LIMIT_NESTED_DEPTH);
        answer_fail(out, "StepFunctions.ExecutionLimitExceeded", msg);
        swf_nested_request_clear(&req);
        return NULL;
    }
    swf_history_start_t start = {.task_list_prefix = task_list_prefix,
                                 .nested_depth = parent_depth + 1,
                                 .execution_id = req.name,
                                 .workflow_id = req.name,
                                 .state_machine = req.machine,
                                 .version = req.version,
                                 .input = req.input,
                                 .time_ms = now_ms,
                                 .parent_id = parent_id,
                                 .parent_event_id = scheduled->id};
    swf_error_t *err = swf_history_pg_execution_start(store, &start, NULL);
    if (err != NULL && swf_error_code(err) == SWF_E_NOTFOUND) {
        char msg[SWF_NESTED_ARN_BYTES + 64];
        swf_nested_missing_message(req.machine, msg, sizeof(msg));
        answer_fail(out, "StepFunctions.StateMachineDoesNotExistException", msg);
        swf_error_free(err);
        err = NULL;
    } else if (err != NULL && swf_error_code(err) == SWF_E_CONFLICT) {
        bool ours;
        swf_error_free(err);
        err = child_is_ours(store, req.name, parent_id, scheduled->id, &ours);
        if (err == NULL && !ours) {
            char msg[256];
            snprintf(msg, sizeof(msg), "Execution Already Exists: '%s'", req.name);
            answer_fail(out, "StepFunctions.ExecutionAlreadyExistsException", msg);
        }
    } else if (err != NULL && swf_error_code(err) == SWF_E_INPUT) {
        answer_fail(out, "StepFunctions.ValidationException", swf_error_message(err));
        swf_error_free(err);
        err = NULL;
    } else if (err != NULL && swf_error_code(err) == SWF_E_LIMIT) {
        answer_fail(out, "StepFunctions.InvalidExecutionInput", swf_error_message(err));
        swf_error_free(err);
        err = NULL;
    }
    if (err == NULL && out->error == NULL && pattern == SWF_NESTED_REQUEST)
        out->result = swf_nested_started_result(req.machine, req.name, now_ms);
    swf_nested_request_clear(&req);
    return err;
}

/* The status a close event gives its execution. */
static swf_asl_status_t status_of(swf_event_type_t t)
{
    return t == SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED   ? SWF_ASL_SUCCEEDED
           : t == SWF_EVENT_WORKFLOW_EXECUTION_TIMED_OUT ? SWF_ASL_TIMED_OUT
           : t == SWF_EVENT_WORKFLOW_EXECUTION_FAILED    ? SWF_ASL_FAILED
                                                         : SWF_ASL_TERMINATED;
}

swf_error_t *swf_nested_child_answer(swf_history_store_t *store, const char *parent_id,
                                     const swf_event_t *scheduled, swf_nested_answer_t *out)
{
    memset(out, 0, sizeof(*out));
    swf_nested_pattern_t pattern = swf_nested_pattern_of_scheduled(scheduled->attrs);
    if (pattern != SWF_NESTED_SYNC && pattern != SWF_NESTED_SYNC2)
        return NULL; /* request-response was answered at the start; a callback by its token */
    swf_nested_request_t req;
    swf_error_t *err = swf_nested_request_of(scheduled->attrs, parent_id, &req);
    if (err != NULL) { /* never started */
        swf_error_free(err);
        return NULL;
    }
    swf_history_execution_t ex = {0};
    swf_event_list_t first = {0}, last = {0};
    err = swf_history_pg_execution_describe(store, req.name, &ex);
    if (err == NULL && ex.close_ms < 0)
        goto done; /* still running */
    if (err == NULL)
        err = event_load(store, req.name, 1, &first);
    if (err == NULL)
        err = event_load(store, req.name, ex.last_event_id, &last);
    if (err != NULL)
        goto done;
    int64_t initiated;
    const char *p = swf_started_parent_of(first.items[0].attrs, &initiated);
    const swf_event_t *close = &last.items[0];
    if (p == NULL || strcmp(p, parent_id) != 0 || initiated != scheduled->id ||
        !swf_event_type_is_close(close->type))
        goto done;
    json_object *input = NULL, *output = NULL;
    swf_json_get(first.items[0].attrs, "input", &input);
    swf_json_get(close->attrs, "result", &output);
    const char *error = swf_json_get_string(close->attrs, "reason");
    const char *cause = swf_json_get_string(close->attrs, "details");
    if (close->type == SWF_EVENT_WORKFLOW_EXECUTION_TIMED_OUT) {
        error = "States.Timeout";
        cause = "the execution ran longer than its TimeoutSeconds";
    }
    swf_nested_child_t c = {.machine = req.machine,
                            .id = req.name,
                            .input = input,
                            .start_ms = first.items[0].time_ms,
                            .stop_ms = close->time_ms,
                            .status = swf_nested_status(status_of(close->type)),
                            .output = output,
                            .error = error,
                            .cause = cause};
    const char *e = NULL;
    swf_nested_close_answer(pattern, &c, &out->result, &e, &out->cause);
    if (e != NULL && (out->error = strdup(e)) == NULL)
        abort();
    snprintf(out->child_id, sizeof(out->child_id), "%s", req.name);
done:
    if (err != NULL && swf_error_code(err) == SWF_E_NOTFOUND) {
        swf_error_free(err);
        err = NULL;
    }
    swf_history_execution_free(&ex);
    swf_event_list_free(&first);
    swf_event_list_free(&last);
    swf_nested_request_clear(&req);
    return err;
}
