/*
 * activities.c - CreateActivity, DescribeActivity, DeleteActivity,
 * ListActivities, and the answers of a task: SendTaskSuccess,
 * SendTaskFailure, SendTaskHeartbeat.
 *
 * An activity's name is its task list: a Task whose Resource is
 * `arn:aws:states:...:activity:NAME` is published on the task topic of
 * NAME, where GetActivityTask pollers (poll.c) and Kafka workers share one
 * consumer group. Creating an activity only records its name; a Task can
 * name one that was never created, as with swf's own workers.
 *
 * The answers are checked as far as they can be before anything is sent,
 * and answered as AWS answers them: a token that does not verify under the
 * deployment's secret is InvalidToken, output that is not JSON is
 * InvalidOutput, a token whose execution does not exist is
 * TaskDoesNotExist, one whose execution already closed is TaskTimedOut.
 * What passes becomes the same inbox message a Kafka worker sends
 * (protocol/KAFKA.md); an answer to an activity that closed meanwhile (a
 * timeout) changes nothing there, as for any worker.
 */
#include "api/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history/catalog.h"
#include "history/pg.h"
#include "protocol/json.h"
#include "protocol/message.h"
#include "protocol/token.h"

static swf_error_t *activity_arn(swf_api_call_t *call, json_object *in,
                                 char name[SWF_API_NAME_BYTES + 1])
{
    const char *arn;
    swf_error_t *err = swf_api__str(in, "activityArn", true, SWF_API_ARN_BYTES, &arn);
    if (err == NULL)
        err = swf_api__arn_parse(arn, "activity", name, NULL);
    if (err == NULL)
        err = swf_api__allowed(call, "activity", name);
    return err;
}

static json_object *activity_json(swf_api_call_t *call, const char *name, int64_t created_ms,
                                  bool with_name)
{
    char arn[SWF_API_ARN_BYTES];
    swf_api__arn(call->api, "activity", name, NULL, arn);
    json_object *o = json_object_new_object();
    swf_json_add(o, "activityArn", json_object_new_string(arn));
    if (with_name)
        swf_json_add(o, "name", json_object_new_string(name));
    swf_json_add(o, "creationDate", swf_api__time(created_ms));
    return o;
}

swf_error_t *swf_api__activity_create(swf_api_call_t *call, json_object *in, json_object **out)
{
    const char *name;
    swf_error_t *err = swf_api__str(in, "name", true, SWF_API_NAME_BYTES, &name);
    if (err == NULL)
        err = swf_api__name_check(name);
    if (err == NULL)
        err = swf_api__allowed(call, "activity", name);
    swf_history_store_t *s;
    int64_t created = 0;
    if (err == NULL)
        err = swf_api__store(call, &s);
    if (err == NULL)
        err = swf_history_pg_activity_create(s, name, &created);
    if (err == NULL)
        err = swf_api__tags_apply(call, "activity", name, in);
    if (err == NULL)
        *out = activity_json(call, name, created, false);
    return err;
}

swf_error_t *swf_api__activity_describe(swf_api_call_t *call, json_object *in, json_object **out)
{
    char name[SWF_API_NAME_BYTES + 1];
    swf_error_t *err = activity_arn(call, in, name);
    swf_history_store_t *s;
    if (err == NULL)
        err = swf_api__store(call, &s);
    swf_history_catalog_entry_t e = {0};
    if (err == NULL)
        err = swf_history_pg_activity_entry(s, name, &e);
    if (err != NULL && swf_error_code(err) == SWF_E_NOTFOUND) {
        swf_error_free(err);
        char arn[SWF_API_ARN_BYTES];
        swf_api__arn(call->api, "activity", name, NULL, arn);
        err = swf_api__err("ActivityDoesNotExist", "Activity Does Not Exist: '%s'", arn);
    }
    if (err == NULL)
        *out = activity_json(call, name, e.created_ms, true);
    free(e.name);
    return err;
}

swf_error_t *swf_api__activity_delete(swf_api_call_t *call, json_object *in, json_object **out)
{
    char name[SWF_API_NAME_BYTES + 1];
    swf_error_t *err = activity_arn(call, in, name);
    swf_history_store_t *s;
    if (err == NULL)
        err = swf_api__store(call, &s);
    if (err == NULL)
        err = swf_history_pg_activity_delete(s, name);
    if (err == NULL)
        *out = json_object_new_object();
    return err;
}

static json_object *activity_item(swf_api_call_t *call, const swf_history_catalog_entry_t *e)
{
    return activity_json(call, e->name, e->created_ms, true);
}

swf_error_t *swf_api__activities_list(swf_api_call_t *call, json_object *in, json_object **out)
{
    return swf_api__names_page(call, in, "activity", swf_history_pg_activities_list, activity_item,
                               "activities", out);
}

/* ---- the answers of a task ----------------------------------------------------- */

/* Verifies the token and finds its execution: *execution_id (caller frees). */
static swf_error_t *token_check(swf_api_call_t *call, json_object *in, const char **token,
                                char **execution_id)
{
    *execution_id = NULL;
    swf_error_t *err = swf_api__str(in, "taskToken", true, 1u << 20, token);
    if (err != NULL)
        return err;
    if (strlen(*token) > SWF_TOKEN_MAX_BYTES)
        return swf_api__err("InvalidToken", "Invalid Token: longer than %d bytes",
                            SWF_TOKEN_MAX_BYTES);
    char *activity_id = NULL;
    err = swf_token_verify(call->api->secret, *token, execution_id, &activity_id);
    free(activity_id);
    if (err != NULL) {
        swf_error_t *e = swf_api__err("InvalidToken", "Invalid Token: %s", swf_error_message(err));
        swf_error_free(err);
        return e;
    }
    swf_history_store_t *s;
    swf_history_execution_t ex = {0};
    err = swf_api__store(call, &s);
    if (err == NULL)
        err = swf_history_pg_execution_describe(s, *execution_id, &ex);
    if (err != NULL && swf_error_code(err) == SWF_E_NOTFOUND) {
        swf_error_free(err);
        err = swf_api__err("TaskDoesNotExist", "Task Does Not Exist");
    }
    if (err == NULL)
        err = swf_api__allowed(call, "stateMachine", ex.state_machine);
    if (err == NULL && strcmp(ex.status, "open") != 0)
        err = swf_api__err("TaskTimedOut", "Task Timed Out: the execution is %s",
                           swf_api__execution_status(ex.status));
    swf_history_execution_free(&ex);
    if (err != NULL) {
        free(*execution_id);
        *execution_id = NULL;
    }
    return err;
}

/* Sends msg (taken) to the execution's inbox and answers {}. */
static swf_error_t *answer(swf_api_call_t *call, char *execution_id, json_object *msg,
                           json_object **out)
{
    swf_error_t *err = swf_api__inbox_send(call->api, execution_id, msg);
    json_object_put(msg);
    free(execution_id);
    if (err == NULL)
        *out = json_object_new_object();
    return err;
}

static const char *identity(swf_api_call_t *call, char buf[SWF_MSG_NAME_BYTES])
{
    snprintf(buf, SWF_MSG_NAME_BYTES, "swf-api:%s", call->key);
    return buf;
}

swf_error_t *swf_api__task_success(swf_api_call_t *call, json_object *in, json_object **out)
{
    const char *token, *output;
    char *execution_id;
    swf_error_t *err = swf_api__str(in, "output", true, SWF_API_PAYLOAD_BYTES, &output);
    if (err == NULL)
        err = token_check(call, in, &token, &execution_id);
    if (err != NULL)
        return err;
    json_object *result = NULL;
    err = swf_json_parse(output, strlen(output), SWF_API_PAYLOAD_BYTES, &result);
    if (err != NULL) {
        swf_error_t *e =
            swf_api__err("InvalidOutput", "Invalid Output: %s", swf_error_message(err));
        swf_error_free(err);
        free(execution_id);
        return e;
    }
    char who[SWF_MSG_NAME_BYTES];
    json_object *m = swf_msg_activity_completed_new(token, result, identity(call, who));
    json_object_put(result);
    return answer(call, execution_id, m, out);
}

swf_error_t *swf_api__task_failure(swf_api_call_t *call, json_object *in, json_object **out)
{
    const char *token, *error, *cause;
    char *execution_id;
    swf_error_t *err = swf_api__str(in, "error", false, SWF_MSG_NAME_BYTES, &error);
    if (err == NULL)
        err = swf_api__str(in, "cause", false, SWF_MSG_CAUSE_BYTES, &cause);
    if (err == NULL)
        err = token_check(call, in, &token, &execution_id);
    if (err != NULL)
        return err;
    char who[SWF_MSG_NAME_BYTES];
    /* AWS's default error name of a failed task. */
    json_object *m = swf_msg_activity_failed_new(token, error ? error : "States.TaskFailed",
                                                 cause ? cause : "", identity(call, who));
    return answer(call, execution_id, m, out);
}

swf_error_t *swf_api__task_heartbeat(swf_api_call_t *call, json_object *in, json_object **out)
{
    const char *token;
    char *execution_id;
    swf_error_t *err = token_check(call, in, &token, &execution_id);
    if (err != NULL)
        return err;
    return answer(call, execution_id, swf_msg_activity_heartbeat_new(token, NULL, false), out);
}
