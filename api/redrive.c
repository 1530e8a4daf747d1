/*
 * redrive.c - RedriveExecution, and the redrive fields DescribeExecution
 * shows (redriveCount, redriveDate, redriveStatus, redriveStatusReason).
 *
 * A redrive is decided where every change to an execution is: the request
 * is checked here (the execution exists, closed without succeeding less
 * than 14 days ago, and its history, replayed, says the interpreter can go
 * on: swf_asl_exec_not_redrivable), then a signed `redrive` message with
 * the redrive count it will make goes to the inbox, and the decider that
 * holds the execution appends WorkflowExecutionRedriven and the decision
 * task that enters again the states that did not end well
 * (decider/asl/exec_redrive.c). The answer waits, a few seconds at most,
 * for that append, so that a DescribeExecution right after the answer sees
 * the execution RUNNING, as AWS shows it.
 *
 * clientToken is checked (1 to 64 characters) but not remembered: a
 * second RedriveExecution of an execution the first one set running again
 * is ExecutionNotRedrivable (the execution is RUNNING), whatever its token
 * (api/README.md).
 */
#include "api/internal.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "decider/asl/exec.h"
#include "decider/replay.h"
#include "history/catalog.h"
#include "history/pg.h"
#include "protocol/json.h"
#include "protocol/message.h"
#include "protocol/time.h"

/* AWS redrives executions that closed in the last 14 days. */
#define REDRIVE_WINDOW_MS (14LL * 24 * 3600 * 1000)
/* How long the answer waits for the decider to append the redrive. */
#define REDRIVE_WAIT_MS 5000

/* Why an execution (a row of the projection) cannot be redriven, from its
 * row alone, or NULL. */
static const char *row_not_redrivable(const swf_history_execution_t *ex, int64_t now_ms)
{
    if (strcmp(ex->status, "open") == 0)
        return "Execution is RUNNING and cannot be redriven";
    if (strcmp(ex->status, "succeeded") == 0)
        return "Execution is SUCCEEDED and cannot be redriven";
    if (ex->close_ms >= 0 && now_ms - ex->close_ms > REDRIVE_WINDOW_MS)
        return "Execution can only be redriven within 14 days of its close";
    return NULL;
}

void swf_api__redrive_describe(swf_api_call_t *call, const swf_history_execution_t *ex,
                               json_object *o)
{
    swf_history_store_t *s;
    int64_t count = 0, last_ms = -1;
    swf_error_t *err = swf_api__store(call, &s);
    if (err == NULL)
        err = swf_history_pg_execution_redrives(s, ex->execution_id, &count, &last_ms);
    swf_error_free(err); /* the fields are left out: the rest of the answer stands */
    if (err != NULL)
        return;
    swf_json_add(o, "redriveCount", json_object_new_int64(count));
    if (last_ms >= 0)
        swf_json_add(o, "redriveDate", swf_api__time(last_ms));
    const char *why = row_not_redrivable(ex, swf_time_now_ms());
    swf_json_add(o, "redriveStatus", json_object_new_string(why ? "NOT_REDRIVABLE" : "REDRIVABLE"));
    if (why != NULL)
        swf_json_add(o, "redriveStatusReason", json_object_new_string(why));
}

/* Replays the execution's history as a decider would: the count the
 * redrive will make, or ExecutionNotRedrivable with the interpreter's
 * reason. */
static swf_error_t *replay_check(swf_history_store_t *s, const char *id, int64_t *next_count)
{
    swf_event_list_t events = {0};
    swf_decider_replay_result_t r = {0};
    swf_decider_replay_options_t opt = {0};
    swf_error_t *err = swf_history_load(s, id, 0, 0, &events);
    if (err == NULL)
        err = swf_decider_replay_run(&events, &opt, &r);
    if (err == NULL && r.error != NULL) {
        err = r.error;
        r.error = NULL;
    }
    const char *why = err == NULL ? swf_asl_exec_not_redrivable(r.exec) : NULL;
    if (why != NULL)
        err = swf_api__err("ExecutionNotRedrivable", "Execution cannot be redriven: %s", why);
    if (err == NULL)
        *next_count = swf_asl_exec_redrive_count(r.exec) + 1;
    swf_decider_replay_result_free(&r);
    swf_event_list_free(&events);
    return err;
}

swf_error_t *swf_api__execution_redrive(swf_api_call_t *call, json_object *in, json_object **out)
{
    const char *token;
    swf_error_t *err = swf_api__str(in, "clientToken", false, 64, &token);
    if (err == NULL && token != NULL && token[0] == '\0')
        err = swf_api__err("ValidationException", "clientToken must be 1 to 64 characters");
    swf_history_execution_t ex;
    if (err == NULL)
        err = swf_api__execution_find(call, in, &ex);
    if (err != NULL)
        return err;
    int64_t now = swf_time_now_ms(), next = 0;
    const char *why = row_not_redrivable(&ex, now);
    swf_history_store_t *s = NULL;
    if (why != NULL)
        err = swf_api__err("ExecutionNotRedrivable", "%s", why);
    if (err == NULL)
        err = swf_api__store(call, &s);
    if (err == NULL)
        err = replay_check(s, ex.execution_id, &next);
    char *other = NULL;
    if (err == NULL)
        err = swf_history_pg_workflow_taken(s, ex.execution_id, &other);
    if (err == NULL && other != NULL)
        err = swf_api__err("ExecutionNotRedrivable",
                           "Execution cannot be redriven: its workflow id is running as %s", other);
    free(other);
    if (err == NULL) {
        json_object *m = swf_msg_redrive_new(call->api->secret, ex.execution_id, next);
        err = swf_api__inbox_send(call->api, ex.execution_id, m);
        json_object_put(m);
    }
    /* Until the decider appended it (or the wait is over: the message is
     * in Kafka, and the redrive happens all the same). */
    for (int waited = 0; err == NULL && waited < REDRIVE_WAIT_MS; waited += 50) {
        int64_t count = 0, last = -1;
        err = swf_history_pg_execution_redrives(s, ex.execution_id, &count, &last);
        if (err == NULL && count >= next) {
            now = last;
            break;
        }
        usleep(50000);
    }
    if (err == NULL) {
        *out = json_object_new_object();
        swf_json_add(*out, "redriveDate", swf_api__time(now));
    }
    swf_history_execution_free(&ex);
    return err;
}
