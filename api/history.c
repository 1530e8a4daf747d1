/*
 * history.c - GetExecutionHistory: an execution's history in Step
 * Functions' own event types, derived from swf's history by replay.
 *
 * Nothing new is stored. swf records activities, timers and decisions
 * (SWF's vocabulary); Step Functions shows states entered and exited and
 * the tasks between. The first come from the stored events, one for one
 * (ActivityTaskScheduled -> ActivityScheduled for an activity ARN, else
 * TaskScheduled; ActivityTaskCompleted -> ActivitySucceeded or
 * TaskSucceeded; the closing events -> ExecutionSucceeded, ExecutionFailed,
 * ExecutionTimedOut, ExecutionAborted); the second from replaying the
 * history through the interpreter with its trace callback (decider/
 * replay.h), which reports each state entered and exited at the decision
 * task that did it, so they are placed at that DecisionTaskStarted
 * event. Decision tasks and timers themselves have no Step Functions
 * event and are left out.
 *
 * Ids are dense from 1 in the derived order and previousEventId is the
 * event before (AWS's points at the causing event; api/README.md).
 * nextToken is the index of the page's first event.
 */
#include "api/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/replay.h"
#include "history/pg.h"
#include "protocol/json.h"
#include "protocol/limits.h"

typedef struct trace_rec {
    swf_asl_trace_kind_t kind;
    char *state, *type;
    json_object *data; /* a reference */
    int64_t time_ms, event_id;
} trace_rec_t;

typedef struct traces {
    trace_rec_t *items;
    size_t n, cap;
    /* "path/state" of the states being retried: their next entry is the
     * same state going on, which Step Functions does not show again. */
    char **retrying;
    size_t nretrying, capretrying;
} traces_t;

/* Whether key is among the states being retried; removes it if so. */
static bool retry_take(traces_t *tr, const char *key)
{
    for (size_t i = 0; i < tr->nretrying; i++) {
        if (strcmp(tr->retrying[i], key) == 0) {
            free(tr->retrying[i]);
            tr->retrying[i] = tr->retrying[--tr->nretrying];
            return true;
        }
    }
    return false;
}

static char *dup_s(const char *s)
{
    char *d = strdup(s ? s : "");
    if (d == NULL)
        abort();
    return d;
}

static void on_trace(void *ctx, const swf_asl_trace_t *t)
{
    traces_t *tr = ctx;
    char key[SWF_LIMIT_PATH_BYTES + SWF_LIMIT_NAME_BYTES + 2];
    snprintf(key, sizeof(key), "%s/%s", t->path ? t->path : "", t->state ? t->state : "");
    if (t->kind == SWF_ASL_STATE_RETRIED) {
        (void)retry_take(tr, key); /* kept once however often it is retried */
        if (tr->nretrying == tr->capretrying) {
            tr->capretrying = tr->capretrying ? tr->capretrying * 2 : 8;
            tr->retrying = realloc(tr->retrying, tr->capretrying * sizeof(*tr->retrying));
            if (tr->retrying == NULL)
                abort();
        }
        tr->retrying[tr->nretrying++] = dup_s(key);
        return;
    }
    if (t->kind == SWF_ASL_STATE_ENTERED && retry_take(tr, key))
        return;
    if (t->kind != SWF_ASL_STATE_ENTERED && t->kind != SWF_ASL_STATE_EXITED &&
        t->kind != SWF_ASL_STATE_FAILED)
        return;
    if (tr->n == tr->cap) {
        tr->cap = tr->cap ? tr->cap * 2 : 64;
        tr->items = realloc(tr->items, tr->cap * sizeof(*tr->items));
        if (tr->items == NULL)
            abort();
    }
    tr->items[tr->n++] =
        (trace_rec_t){t->kind,    dup_s(t->state), dup_s(t->state_type), swf_json_ref(t->data),
                      t->time_ms, t->event_id};
}

/* The derived events, and what they need to know as they are built. */
typedef struct out {
    json_object *events;
    bool data; /* includeExecutionData */
    const char *role;
} out_t;

static json_object *ev_new(out_t *o, const char *type, int64_t time_ms)
{
    json_object *e = json_object_new_object();
    size_t id = json_object_array_length(o->events) + 1;
    swf_json_add(e, "timestamp", swf_api__time(time_ms));
    swf_json_add(e, "type", json_object_new_string(type));
    swf_json_add(e, "id", json_object_new_int64((int64_t)id));
    swf_json_add(e, "previousEventId", json_object_new_int64((int64_t)id - 1));
    json_object_array_add(o->events, e);
    return e;
}

/* A detail member holding a JSON value as text, with its "...Details". */
static void payload_add(out_t *o, json_object *det, const char *key, json_object *v)
{
    if (!o->data)
        return;
    json_object_object_add(det, key, json_object_new_string(swf_json_str(v)));
    char dk[64];
    snprintf(dk, sizeof(dk), "%sDetails", key);
    json_object *d = json_object_new_object();
    swf_json_add(d, "truncated", json_object_new_boolean(0));
    json_object_object_add(det, dk, d);
}

static void str_add(json_object *det, const char *key, const char *v)
{
    if (v != NULL)
        json_object_object_add(det, key, json_object_new_string(v));
}

static void trace_emit(out_t *o, const trace_rec_t *t)
{
    char type[96];
    json_object *det = json_object_new_object();
    str_add(det, "name", t->state);
    bool fan = strcmp(t->type, "Map") == 0 || strcmp(t->type, "Parallel") == 0;
    if (t->kind == SWF_ASL_STATE_ENTERED) {
        snprintf(type, sizeof(type), "%sStateEntered", t->type);
        payload_add(o, det, "input", t->data);
        json_object_object_add(ev_new(o, type, t->time_ms), "stateEnteredEventDetails", det);
        if (fan) {
            snprintf(type, sizeof(type), "%sStateStarted", t->type);
            ev_new(o, type, t->time_ms);
        }
    } else if (t->kind == SWF_ASL_STATE_EXITED) {
        if (fan) {
            snprintf(type, sizeof(type), "%sStateSucceeded", t->type);
            ev_new(o, type, t->time_ms);
        }
        snprintf(type, sizeof(type), "%sStateExited", t->type);
        payload_add(o, det, "output", t->data);
        json_object_object_add(ev_new(o, type, t->time_ms), "stateExitedEventDetails", det);
    } else if (fan) {
        json_object_put(det);
        snprintf(type, sizeof(type), "%sStateFailed", t->type);
        ev_new(o, type, t->time_ms);
    } else {
        json_object_put(det);
    }
}

/* The Task's resource of an ActivityTaskScheduled event. */
static const char *resource_of(const swf_event_t *ev)
{
    json_object *control = NULL;
    swf_json_get(ev->attrs, "control", &control);
    const char *r = swf_json_get_string(control, "resource");
    return r ? r : "";
}

static bool is_activity(const char *resource)
{
    return strncmp(resource, "arn:aws:states:", 15) == 0 && strstr(resource, ":activity:") != NULL;
}

/* The resource type and name AWS shows for a Task's resource: "lambda"
 * and the function for arn:aws:lambda:..., "swf" and the whole resource
 * otherwise. */
static void task_details(json_object *det, const char *resource)
{
    str_add(det, "resourceType", strncmp(resource, "arn:aws:lambda:", 15) == 0 ? "lambda" : "swf");
    str_add(det, "resource", resource);
}

static void event_emit(out_t *o, const swf_event_t *ev, const swf_event_list_t *all)
{
    json_object *v = NULL, *det = NULL;
    const swf_event_t *sched = NULL;
    int64_t sid = 0;
    if (swf_json_get(ev->attrs, "scheduledEventId", &v) && swf_json_as_int64(v, &sid) && sid >= 1 &&
        (size_t)sid <= all->count)
        sched = &all->items[sid - 1];
    const char *res = sched ? resource_of(sched) : "";
    bool act = is_activity(res);
    switch (ev->type) {
    case SWF_EVENT_WORKFLOW_EXECUTION_STARTED:
        det = json_object_new_object();
        swf_json_get(ev->attrs, "input", &v);
        payload_add(o, det, "input", v);
        str_add(det, "roleArn", o->role);
        json_object_object_add(ev_new(o, "ExecutionStarted", ev->time_ms),
                               "executionStartedEventDetails", det);
        break;
    case SWF_EVENT_ACTIVITY_TASK_SCHEDULED: {
        const char *r = resource_of(ev);
        det = json_object_new_object();
        if (is_activity(r))
            str_add(det, "resource", r);
        else
            task_details(det, r);
        swf_json_get(ev->attrs, "input", &v);
        payload_add(o, det, is_activity(r) ? "input" : "parameters", v);
        if (!is_activity(r))
            json_object_object_del(det, "parametersDetails");
        json_object *t;
        if (swf_json_get(ev->attrs, "startToCloseTimeout", &t) && swf_json_is_number(t))
            json_object_object_add(det, "timeoutInSeconds",
                                   json_object_new_int64((int64_t)json_object_get_double(t)));
        if (swf_json_get(ev->attrs, "heartbeatTimeout", &t) && swf_json_is_number(t))
            json_object_object_add(det, "heartbeatInSeconds",
                                   json_object_new_int64((int64_t)json_object_get_double(t)));
        json_object_object_add(
            ev_new(o, is_activity(r) ? "ActivityScheduled" : "TaskScheduled", ev->time_ms),
            is_activity(r) ? "activityScheduledEventDetails" : "taskScheduledEventDetails", det);
        break;
    }
    case SWF_EVENT_ACTIVITY_TASK_STARTED:
        det = json_object_new_object();
        if (act)
            str_add(det, "workerName", swf_json_get_string(ev->attrs, "identity"));
        else
            task_details(det, res);
        json_object_object_add(ev_new(o, act ? "ActivityStarted" : "TaskStarted", ev->time_ms),
                               act ? "activityStartedEventDetails" : "taskStartedEventDetails",
                               det);
        break;
    case SWF_EVENT_ACTIVITY_TASK_COMPLETED:
        det = json_object_new_object();
        if (!act)
            task_details(det, res);
        swf_json_get(ev->attrs, "result", &v);
        payload_add(o, det, "output", v);
        json_object_object_add(ev_new(o, act ? "ActivitySucceeded" : "TaskSucceeded", ev->time_ms),
                               act ? "activitySucceededEventDetails" : "taskSucceededEventDetails",
                               det);
        break;
    case SWF_EVENT_ACTIVITY_TASK_FAILED:
        det = json_object_new_object();
        if (!act)
            task_details(det, res);
        str_add(det, "error", swf_json_get_string(ev->attrs, "reason"));
        str_add(det, "cause", swf_json_get_string(ev->attrs, "details"));
        json_object_object_add(ev_new(o, act ? "ActivityFailed" : "TaskFailed", ev->time_ms),
                               act ? "activityFailedEventDetails" : "taskFailedEventDetails", det);
        break;
    case SWF_EVENT_ACTIVITY_TASK_TIMED_OUT: {
        det = json_object_new_object();
        if (!act)
            task_details(det, res);
        const char *tt = swf_json_get_string(ev->attrs, "timeoutType");
        str_add(det, "error",
                tt && strcmp(tt, "HEARTBEAT") == 0 ? "States.HeartbeatTimeout" : "States.Timeout");
        json_object_object_add(ev_new(o, act ? "ActivityTimedOut" : "TaskTimedOut", ev->time_ms),
                               act ? "activityTimedOutEventDetails" : "taskTimedOutEventDetails",
                               det);
        break;
    }
    case SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED:
        det = json_object_new_object();
        swf_json_get(ev->attrs, "result", &v);
        payload_add(o, det, "output", v);
        json_object_object_add(ev_new(o, "ExecutionSucceeded", ev->time_ms),
                               "executionSucceededEventDetails", det);
        break;
    case SWF_EVENT_WORKFLOW_EXECUTION_FAILED:
        det = json_object_new_object();
        str_add(det, "error", swf_json_get_string(ev->attrs, "reason"));
        str_add(det, "cause", swf_json_get_string(ev->attrs, "details"));
        json_object_object_add(ev_new(o, "ExecutionFailed", ev->time_ms),
                               "executionFailedEventDetails", det);
        break;
    case SWF_EVENT_WORKFLOW_EXECUTION_TIMED_OUT:
        det = json_object_new_object();
        str_add(det, "error", "States.Timeout");
        json_object_object_add(ev_new(o, "ExecutionTimedOut", ev->time_ms),
                               "executionTimedOutEventDetails", det);
        break;
    case SWF_EVENT_WORKFLOW_EXECUTION_REDRIVEN: /* RedriveExecution (redrive.c) */
        det = json_object_new_object();
        if (swf_json_get(ev->attrs, "redriveCount", &v))
            json_object_object_add(det, "redriveCount", swf_json_ref(v));
        json_object_object_add(ev_new(o, "ExecutionRedriven", ev->time_ms),
                               "executionRedrivenEventDetails", det);
        break;
    case SWF_EVENT_WORKFLOW_EXECUTION_TERMINATED:
    case SWF_EVENT_WORKFLOW_EXECUTION_CANCELED:
        det = json_object_new_object();
        str_add(det, "error", swf_json_get_string(ev->attrs, "reason"));
        str_add(det, "cause", swf_json_get_string(ev->attrs, "details"));
        json_object_object_add(ev_new(o, "ExecutionAborted", ev->time_ms),
                               "executionAbortedEventDetails", det);
        break;
    default:
        break;
    }
}

swf_error_t *swf_api__execution_history(swf_api_call_t *call, json_object *in, json_object **out)
{
    int64_t max = 100;
    bool reverse = false, data = true;
    swf_error_t *err = swf_api__max_results(in, &max);
    if (err == NULL)
        err = swf_api__bool(in, "reverseOrder", &reverse);
    if (err == NULL)
        err = swf_api__bool(in, "includeExecutionData", &data);
    long from = 0;
    if (err == NULL)
        err = swf_api__page_token(in, SWF_LIMIT_HISTORY_EVENTS * 3L, &from);
    swf_history_execution_t ex;
    if (err == NULL)
        err = swf_api__execution_find(call, in, &ex);
    if (err != NULL)
        return err;
    swf_history_store_t *s;
    swf_event_list_t events = {0};
    err = swf_api__store(call, &s);
    if (err == NULL)
        err = swf_history_load(s, ex.execution_id, 0, 0, &events);
    swf_history_execution_free(&ex);
    traces_t tr = {0};
    swf_decider_replay_result_t result = {0};
    if (err == NULL) {
        swf_decider_replay_options_t opt = {.trace = on_trace, .trace_ctx = &tr};
        err = swf_decider_replay_run(&events, &opt, &result);
    }
    if (err == NULL) {
        out_t o = {json_object_new_array(), data, NULL};
        size_t t = 0;
        for (size_t i = 0; i < events.count; i++) {
            const swf_event_t *ev = &events.items[i];
            if (ev->type == SWF_EVENT_DECISION_TASK_STARTED)
                for (; t < tr.n && tr.items[t].event_id <= ev->id; t++)
                    trace_emit(&o, &tr.items[t]);
            event_emit(&o, ev, &events);
        }
        for (; t < tr.n; t++)
            trace_emit(&o, &tr.items[t]);
        size_t total = json_object_array_length(o.events);
        json_object *page = json_object_new_array();
        size_t end = (size_t)from + (size_t)max < total ? (size_t)from + (size_t)max : total;
        for (size_t k = (size_t)from; k < end; k++) {
            size_t idx = reverse ? total - 1 - k : k;
            json_object_array_add(page, json_object_get(json_object_array_get_idx(o.events, idx)));
        }
        json_object_put(o.events);
        *out = json_object_new_object();
        swf_json_add(*out, "events", page);
        if (end < total) {
            char next[32];
            snprintf(next, sizeof(next), "%zu", end);
            swf_json_add(*out, "nextToken", json_object_new_string(next));
        }
    }
    for (size_t i = 0; i < tr.n; i++) {
        free(tr.items[i].state);
        free(tr.items[i].type);
        json_object_put(tr.items[i].data);
    }
    free(tr.items);
    for (size_t i = 0; i < tr.nretrying; i++)
        free(tr.retrying[i]);
    free(tr.retrying);
    swf_decider_replay_result_free(&result);
    swf_event_list_free(&events);
    return err;
}
