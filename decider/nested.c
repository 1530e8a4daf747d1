/*
 * nested.c - the shapes of nested executions, for every driver.
 *
 * A nested execution's Task talks AWS's StartExecution API: its Parameters
 * are StartExecution's request (StateMachineArn, Input, Name) and what the
 * parent gets back is AWS's answer, which differs by pattern: the
 * request-response form gets StartExecution's {ExecutionArn, StartDate},
 * .sync and .sync:2 get DescribeExecution's shape once the child closed
 * (.sync with Input and Output as the JSON strings the API returns, .sync:2
 * with them parsed), and a child that did not succeed fails the Task with
 * States.TaskFailed and that same shape, as a string, for the cause. Dates
 * are epoch milliseconds, as AWS's integrations print them.
 *
 * The child's name defaults to one derived from the parent's id and the
 * activity's: a start that is tried again (a redelivered message, a decider
 * that crashed after the start and before its append) names the same
 * child, so the store's uniqueness of execution ids is what makes a start
 * happen once.
 */
#include "decider/nested.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/hash.h"
#include "protocol/json.h"
#include "protocol/started.h"
#include "protocol/limits.h"
#include "protocol/task_list.h"

swf_nested_pattern_t swf_nested_pattern(const char *resource)
{
    const char *p = swf_task_list_nested_pattern(resource);
    if (p == NULL)
        return SWF_NESTED_NONE;
    if (*p == '\0')
        return SWF_NESTED_REQUEST;
    if (strcmp(p, ".sync") == 0)
        return SWF_NESTED_SYNC;
    return strcmp(p, ".sync:2") == 0 ? SWF_NESTED_SYNC2 : SWF_NESTED_CALLBACK;
}

swf_nested_pattern_t swf_nested_pattern_of_scheduled(json_object *attrs)
{
    json_object *control;
    if (!swf_json_get(attrs, "control", &control))
        return SWF_NESTED_NONE;
    return swf_nested_pattern(swf_json_get_string(control, "resource"));
}

static bool name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > SWF_NESTED_NAME_BYTES)
        return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p <= 0x20 || *p == 0x7f || strchr("?*\"#%\\^|~`$&,;:/<>{}[]", *p) != NULL)
            return false;
    return true;
}

static swf_error_t *refuse(const char *name, const char *fmt, const char *arg)
{
    return swf_error_new(SWF_E_STATES, name, fmt, arg);
}

/* StateMachineArn: a bare name, or arn:aws:states:REGION:ACCOUNT:
 * stateMachine:NAME[:VERSION]. */
static swf_error_t *machine_read(const char *arn, swf_nested_request_t *out)
{
    static const char invalid[] = "StepFunctions.InvalidArnException";
    const char *name = arn;
    if (strncmp(arn, "arn:", 4) == 0) {
        const char *p = arn;
        for (int i = 0; i < 6 && p != NULL; i++)
            p = strchr(p, ':') ? strchr(p, ':') + 1 : NULL;
        if (p == NULL || strncmp(arn, "arn:aws:states:", 15) != 0 ||
            strncmp(p - strlen("stateMachine:"), "stateMachine:", 13) != 0)
            return refuse(invalid, "Invalid Arn: '%s' is not a state machine ARN", arn);
        name = p;
    }
    const char *colon = strchr(name, ':');
    size_t n = colon ? (size_t)(colon - name) : strlen(name);
    if (n == 0 || n > SWF_NESTED_NAME_BYTES)
        return refuse(invalid, "Invalid Arn: '%s' names no state machine", arn);
    memcpy(out->machine, name, n);
    out->machine[n] = '\0';
    if (!name_ok(out->machine))
        return refuse(invalid, "Invalid Arn: '%s' names no state machine", arn);
    if (colon != NULL) {
        char *end;
        long v = strtol(colon + 1, &end, 10);
        if (*end != '\0' || v < 1 || v > 1000000 || colon[1] < '1' || colon[1] > '9')
            return refuse(invalid,
                          "Invalid Arn: '%s': swf runs a version (NAME:N) of a state machine, "
                          "not an alias",
                          arn);
        out->version = (int)v;
    }
    return NULL;
}

swf_error_t *swf_nested_request_read(json_object *params, const char *parent_id,
                                     const char *activity_id, swf_nested_request_t *out)
{
    memset(out, 0, sizeof(*out));
    static const char validation[] = "StepFunctions.ValidationException";
    if (!json_object_is_type(params, json_type_object))
        return refuse(validation, "the Parameters of startExecution must be an object%s", "");
    const char *arn = swf_json_get_string(params, "StateMachineArn");
    if (arn == NULL)
        return refuse(validation, "startExecution needs a StateMachineArn (a string)%s", "");
    swf_error_t *err = machine_read(arn, out);
    if (err != NULL)
        return err;
    json_object *v;
    if (swf_json_get(params, "Name", &v)) {
        const char *name =
            json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
        if (!name_ok(name))
            return refuse("StepFunctions.InvalidNameException",
                          "Invalid Name: '%s' (1 to 80 characters, no whitespace nor "
                          "?*\"#%%\\^|~`$&,;:/<>{}[])",
                          name);
        snprintf(out->name, sizeof(out->name), "%s", name);
    } else if (strlen(parent_id) + 1 + strlen(activity_id) <= SWF_NESTED_NAME_BYTES) {
        size_t np = strlen(parent_id);
        memcpy(out->name, parent_id, np);
        out->name[np] = '-';
        memcpy(out->name + np + 1, activity_id, strlen(activity_id) + 1);
    } else {
        /* The first 64 bytes of the parent's id would not tell children of
         * two parents apart: a digest of both does. */
        char both[1024];
        snprintf(both, sizeof(both), "%s/%s", parent_id, activity_id);
        uint8_t d[SWF_HASH_SHA256_BYTES];
        char hex[2 * SWF_HASH_SHA256_BYTES + 1];
        swf_hash_digest(SWF_HASH_SHA256, both, strlen(both), d);
        swf_hash_hex_encode(d, 32, hex);
        snprintf(out->name, sizeof(out->name), "child-%.64s", hex);
    }
    if (!swf_json_get(params, "Input", &v) || v == NULL) {
        out->input = json_object_new_object();
    } else if (json_object_is_type(v, json_type_string)) {
        const char *s = json_object_get_string(v);
        err = swf_json_parse(s, strlen(s), SWF_LIMIT_PAYLOAD_BYTES, &out->input);
        if (err != NULL) {
            swf_error_t *e = swf_error_new(SWF_E_STATES, "StepFunctions.InvalidExecutionInput",
                                           "Invalid Input: %s", swf_error_message(err));
            swf_error_free(err);
            return e;
        }
    } else if (json_object_is_type(v, json_type_object)) {
        out->input = swf_json_ref(v);
    } else {
        return refuse("StepFunctions.InvalidExecutionInput",
                      "Invalid Input: the Input of startExecution must be an object or a string "
                      "holding JSON, not %s",
                      swf_json_type_name(v));
    }
    return NULL;
}

swf_error_t *swf_nested_request_of(json_object *scheduled_attrs, const char *parent_id,
                                   swf_nested_request_t *out)
{
    json_object *params = NULL;
    swf_json_get(scheduled_attrs, "input", &params);
    const char *activity_id = swf_json_get_string(scheduled_attrs, "activityId");
    return swf_nested_request_read(params, parent_id, activity_id ? activity_id : "", out);
}

const char *swf_nested_status(swf_asl_status_t status)
{
    return status == SWF_ASL_CANCELED || status == SWF_ASL_TERMINATED ? "ABORTED"
                                                                      : swf_asl_status_name(status);
}

void swf_nested_request_clear(swf_nested_request_t *req)
{
    json_object_put(req->input);
    req->input = NULL;
}

void swf_nested_execution_arn(const char *machine, const char *id, char buf[SWF_NESTED_ARN_BYTES])
{
    snprintf(buf, SWF_NESTED_ARN_BYTES, "arn:aws:states:local:000000000000:execution:%s:%s",
             machine, id);
}

void swf_nested_machine_arn(const char *machine, char buf[SWF_NESTED_ARN_BYTES])
{
    snprintf(buf, SWF_NESTED_ARN_BYTES, "arn:aws:states:local:000000000000:stateMachine:%s",
             machine);
}

void swf_nested_missing_message(const char *machine, char *buf, size_t size)
{
    char arn[SWF_NESTED_ARN_BYTES];
    swf_nested_machine_arn(machine, arn);
    snprintf(buf, size, "State Machine Does Not Exist: '%s'", arn);
}

json_object *swf_nested_started_result(const char *machine, const char *id, int64_t start_ms)
{
    char arn[SWF_NESTED_ARN_BYTES];
    swf_nested_execution_arn(machine, id, arn);
    json_object *o = json_object_new_object();
    swf_json_add(o, "ExecutionArn", json_object_new_string(arn));
    swf_json_add(o, "StartDate", json_object_new_int64(start_ms));
    return o;
}

/* A JSON value, or its text when `as_string` (.sync). */
static json_object *payload(json_object *v, bool as_string)
{
    return as_string ? json_object_new_string(swf_json_str(v)) : swf_json_ref(v);
}

void swf_nested_close_answer(swf_nested_pattern_t pattern, const swf_nested_child_t *child,
                             json_object **result, const char **error, char **cause)
{
    bool text = pattern != SWF_NESTED_SYNC2;
    char arn[SWF_NESTED_ARN_BYTES];
    json_object *o = json_object_new_object(), *details = json_object_new_object();
    swf_json_add(details, "Included", json_object_new_boolean(1));
    swf_nested_execution_arn(child->machine, child->id, arn);
    swf_json_add(o, "ExecutionArn", json_object_new_string(arn));
    swf_json_add(o, "Input", payload(child->input, text));
    swf_json_add(o, "InputDetails", details);
    swf_json_add(o, "Name", json_object_new_string(child->id));
    bool ok = strcmp(child->status, "SUCCEEDED") == 0;
    if (ok) {
        swf_json_add(o, "Output", payload(child->output, text));
        swf_json_add(o, "OutputDetails", swf_json_ref(details));
    }
    swf_json_add(o, "StartDate", json_object_new_int64(child->start_ms));
    swf_nested_machine_arn(child->machine, arn);
    swf_json_add(o, "StateMachineArn", json_object_new_string(arn));
    swf_json_add(o, "Status", json_object_new_string(child->status));
    swf_json_add(o, "StopDate", json_object_new_int64(child->stop_ms));
    if (!ok) {
        if (child->error != NULL)
            swf_json_add(o, "Error", json_object_new_string(child->error));
        if (child->cause != NULL)
            swf_json_add(o, "Cause", json_object_new_string(child->cause));
    }
    *result = NULL;
    *error = NULL;
    *cause = NULL;
    if (ok) {
        *result = o;
        return;
    }
    *error = "States.TaskFailed";
    *cause = strdup(swf_json_str(o));
    if (*cause == NULL)
        abort();
    json_object_put(o);
}

static void machines_walk(json_object *v, json_object *names, int depth)
{
    if (depth > SWF_LIMIT_JSON_DEPTH)
        return;
    if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++)
            machines_walk(json_object_array_get_idx(v, i), names, depth + 1);
        return;
    }
    if (!json_object_is_type(v, json_type_object))
        return;
    const char *type = swf_json_get_string(v, "Type");
    if (type != NULL && strcmp(type, "Task") == 0 &&
        swf_nested_pattern(swf_json_get_string(v, "Resource")) != SWF_NESTED_NONE) {
        const char *keys[] = {"Parameters", "Arguments"};
        for (size_t i = 0; i < 2; i++) {
            json_object *args;
            swf_nested_request_t req;
            if (!swf_json_get(v, keys[i], &args) ||
                swf_json_get_string(args, "StateMachineArn") == NULL)
                continue;
            memset(&req, 0, sizeof(req));
            swf_error_t *err = machine_read(swf_json_get_string(args, "StateMachineArn"), &req);
            if (err == NULL)
                json_object_object_add(names, req.machine, json_object_new_boolean(1));
            swf_error_free(err);
        }
    }
    json_object_object_foreach(v, key, val)
    {
        (void)key;
        machines_walk(val, names, depth + 1);
    }
}

void swf_nested_machines_named(json_object *definition, json_object *names)
{
    machines_walk(definition, names, 0);
}

json_object *swf_nested_links(const swf_event_list_t *events)
{
    json_object *out = json_object_new_object(), *children = json_object_new_array();
    json_object *states = json_object_new_object(); /* scheduled event id -> state */
    for (size_t i = 0; i < events->count; i++) {
        const swf_event_t *ev = &events->items[i];
        char key[32];
        json_object *v, *control;
        if (ev->type == SWF_EVENT_WORKFLOW_EXECUTION_STARTED) {
            int64_t initiated;
            const char *parent = swf_started_parent_of(ev->attrs, &initiated);
            if (parent != NULL) {
                json_object *p = json_object_new_object();
                swf_json_add(p, "executionId", json_object_new_string(parent));
                swf_json_add(p, "initiatedEventId", json_object_new_int64(initiated));
                swf_json_add(out, "parent", p);
            }
        } else if (ev->type == SWF_EVENT_ACTIVITY_TASK_SCHEDULED &&
                   swf_nested_pattern_of_scheduled(ev->attrs) != SWF_NESTED_NONE &&
                   swf_json_get(ev->attrs, "control", &control)) {
            snprintf(key, sizeof(key), "%lld", (long long)ev->id);
            const char *state = swf_json_get_string(control, "state");
            json_object_object_add(states, key, json_object_new_string(state ? state : ""));
        } else if (ev->type == SWF_EVENT_ACTIVITY_TASK_STARTED &&
                   swf_json_get(ev->attrs, "scheduledEventId", &v)) {
            snprintf(key, sizeof(key), "%lld", (long long)json_object_get_int64(v));
            const char *who = swf_json_get_string(ev->attrs, "identity");
            size_t n = strlen(SWF_NESTED_IDENTITY);
            json_object *state;
            if (who == NULL || strncmp(who, SWF_NESTED_IDENTITY, n) != 0 || who[n] == '\0' ||
                !swf_json_get(states, key, &state))
                continue;
            json_object *c = json_object_new_object();
            swf_json_add(c, "executionId", json_object_new_string(who + n));
            swf_json_add(c, "scheduledEventId", swf_json_ref(v));
            swf_json_add(c, "state", swf_json_ref(state));
            json_object_array_add(children, c);
        }
    }
    json_object_put(states);
    swf_json_add(out, "children", children);
    return out;
}
