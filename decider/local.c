/*
 * local.c - the in-process driver of `swf run --local`.
 *
 * It plays every part of the distributed system in one loop, through the
 * same interfaces: the history store (in memory here), the decision tasks
 * of the daemon (decider/decision.h), a "worker" that answers activities
 * from mocks (decider/mocks.h, as `swf run --dev`'s worker does), and a
 * timer service on a virtual clock. Like SWF, results that arrive while a
 * decision task is open are batched into the next decision task: the loop
 * answers every activity scheduled by the decision tasks before running
 * the next, so a Map over N items takes O(1) decision tasks, not N.
 */
#include "decider/local.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/decision.h"
#include "decider/mocks.h"
#include "decider/nested.h"
#include "decider/sw/sw.h"
#include "protocol/alloc.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/started.h"

typedef struct timer {
    int64_t fire_ms;
    int64_t order; /* ties fire in the order they were started */
    int64_t started_event_id;
    char id[32];
} timer_t_;

typedef struct timer_heap {
    timer_t_ *items;
    size_t count, cap;
} timer_heap_t;

static bool timer_before(const timer_t_ *a, const timer_t_ *b)
{
    return a->fire_ms != b->fire_ms ? a->fire_ms < b->fire_ms : a->order < b->order;
}

static void heap_push(timer_heap_t *h, timer_t_ t)
{
    SWF_ARRAY_RESERVE(h->items, h->count, h->cap, 16);
    size_t i = h->count++;
    h->items[i] = t;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!timer_before(&h->items[i], &h->items[p]))
            break;
        timer_t_ tmp = h->items[i];
        h->items[i] = h->items[p];
        h->items[p] = tmp;
        i = p;
    }
}

static timer_t_ heap_pop(timer_heap_t *h)
{
    timer_t_ top = h->items[0];
    h->items[0] = h->items[--h->count];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->count && timer_before(&h->items[l], &h->items[m]))
            m = l;
        if (r < h->count && timer_before(&h->items[r], &h->items[m]))
            m = r;
        if (m == i)
            break;
        timer_t_ tmp = h->items[i];
        h->items[i] = h->items[m];
        h->items[m] = tmp;
        i = m;
    }
    return top;
}

typedef struct local_run {
    const swf_local_options_t *opt;
    swf_history_store_t *store;
    const char *id;
    swf_decider_state_t *st;
    swf_decider_mocks_t *mocks;
    swf_event_list_t batch;     /* the events to append next */
    swf_decider_decision_t dec; /* builds them */
    swf_event_list_t scheduled; /* the activities to answer */
    int64_t now_ms;
    timer_heap_t timers;
    int64_t timer_order;
    int64_t tasks; /* decision tasks so far */
    int depth;     /* 0 at the top; a child runs at its parent's + 1 */
} local_run_t;

static swf_error_t *run_execution(const swf_local_options_t *opt, swf_history_store_t *store,
                                  swf_decider_mocks_t *mocks, int depth,
                                  swf_local_result_t *result);

/* Appends the batch to the store (the state has it already) and starts
 * the next one at the current time. The timers and activities it started
 * are noted for the timer service and the worker. */
static swf_error_t *batch_commit(local_run_t *r)
{
    for (size_t i = 0; i < r->batch.count; i++) {
        const swf_event_t *ev = &r->batch.items[i];
        if (ev->type == SWF_EVENT_ACTIVITY_TASK_SCHEDULED) {
            swf_event_list_push_copy(&r->scheduled, ev);
        } else if (ev->type == SWF_EVENT_TIMER_STARTED) {
            json_object *v;
            double s =
                swf_json_get(ev->attrs, "startToFireTimeout", &v) ? json_object_get_double(v) : 0;
            timer_t_ t = {.fire_ms = ev->time_ms + (int64_t)(s * 1000.0 + 0.5),
                          .order = r->timer_order++,
                          .started_event_id = ev->id};
            snprintf(t.id, sizeof(t.id), "%s", swf_json_get_string(ev->attrs, "timerId"));
            heap_push(&r->timers, t);
        }
    }
    swf_error_t *err =
        swf_history_append(r->store, r->id, r->dec.next_id, r->batch.items, r->batch.count);
    swf_decider_decision_init(&r->dec, r->st, &r->batch, r->now_ms, "local-decider");
    return err;
}

/* Records an activity's start and its answer: a result, or an error
 * and a cause. */
static swf_error_t *activity_close(local_run_t *r, const swf_event_t *sched, const char *identity,
                                   json_object *result, const char *error, const char *cause)
{
    json_object *started = json_object_new_object();
    swf_json_add(started, "scheduledEventId", json_object_new_int64(sched->id));
    swf_json_add(started, "identity", json_object_new_string(identity));
    swf_error_t *err = swf_decider_decision_add(&r->dec, SWF_EVENT_ACTIVITY_TASK_STARTED, started);
    if (err != NULL)
        return err;
    json_object *a = json_object_new_object();
    swf_json_add(a, "scheduledEventId", json_object_new_int64(sched->id));
    swf_json_add(a, "startedEventId",
                 json_object_new_int64(swf_decider_decision_next_id(&r->dec) - 1));
    if (error != NULL) {
        swf_json_add(a, "reason", json_object_new_string(error));
        swf_json_add(a, "details", json_object_new_string(cause ? cause : ""));
        return swf_decider_decision_add(&r->dec, SWF_EVENT_ACTIVITY_TASK_FAILED, a);
    }
    swf_json_add(a, "result", swf_json_ref(result));
    return swf_decider_decision_add(&r->dec, SWF_EVENT_ACTIVITY_TASK_COMPLETED, a);
}

void swf_local_machine_dir(const char *definition_path, char *buf, size_t size)
{
    const char *slash = strrchr(definition_path, '/');
    if (slash == NULL)
        snprintf(buf, size, ".");
    else
        snprintf(buf, size, "%.*s", (int)(slash - definition_path), definition_path);
}

json_object *swf_local_machine_read(const char *dir, const char *machine)
{
    const char *exts[] = {".asl.json", ".json"};
    for (size_t i = 0; i < 2; i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s%s", dir ? dir : ".", machine, exts[i]);
        json_object *def = NULL;
        swf_error_t *err = swf_json_read_file(path, SWF_LIMIT_DEFINITION_BYTES, &def);
        if (err == NULL)
            return def;
        swf_error_free(err);
    }
    return NULL;
}

json_object *swf_local_machines_read(const char *dir, json_object *definition)
{
    json_object *out = json_object_new_object(), *names = json_object_new_object();
    swf_nested_machines_named(definition, names);
    bool grew = true;
    while (grew && json_object_object_length(out) < SWF_LIMIT_NESTED_DEPTH) {
        grew = false;
        json_object *todo = json_object_new_object();
        json_object_object_foreach(names, name, unused)
        {
            (void)unused;
            json_object *v;
            if (!swf_json_get(out, name, &v) &&
                json_object_object_length(out) < SWF_LIMIT_NESTED_DEPTH) {
                json_object *def = swf_local_machine_read(dir, name);
                json_object_object_add(out, name, def);
                if (def != NULL)
                    swf_nested_machines_named(def, todo);
                grew = true;
            }
        }
        json_object_object_foreach(todo, n2, t)
        {
            json_object_object_add(names, n2, swf_json_ref(t));
        }
        json_object_put(todo);
    }
    json_object_put(names);
    /* Names whose file did not read are left out. */
    json_object *found = json_object_new_object();
    json_object_object_foreach(out, name, def)
    {
        if (def != NULL)
            json_object_object_add(found, name, swf_json_ref(def));
    }
    json_object_put(out);
    return found;
}

/* A nested execution (decider/nested.h): the child runs here, to its end,
 * on the same virtual clock and mocks, and its answer is the parent's.
 * .waitForTaskToken: nobody else can send the token back in-process, so
 * the Task's mock answers when it has one, else the child's output does
 * (as a child that sends its output with SendTaskSuccess would). */
static swf_error_t *answer_nested(local_run_t *r, const swf_event_t *sched,
                                  swf_nested_pattern_t pattern)
{
    json_object *params = NULL, *control = NULL;
    swf_json_get(sched->attrs, "input", &params);
    swf_json_get(sched->attrs, "control", &control);
    swf_nested_request_t req;
    swf_error_t *err = swf_nested_request_of(sched->attrs, r->id, &req);
    if (err != NULL) {
        swf_error_t *e = activity_close(r, sched, SWF_NESTED_IDENTITY, NULL, swf_error_name(err),
                                        swf_error_message(err));
        swf_error_free(err);
        return e;
    }
    json_object *def = swf_local_machine_read(r->opt->machine_dir, req.machine);
    if (def == NULL || r->depth + 1 >= SWF_LIMIT_NESTED_DEPTH) {
        char msg[600];
        if (def == NULL)
            swf_nested_missing_message(req.machine, msg, sizeof(msg));
        else
            snprintf(msg, sizeof(msg), "'%s' would nest more than %d executions deep", req.machine,
                     SWF_LIMIT_NESTED_DEPTH);
        json_object_put(def);
        swf_nested_request_clear(&req);
        return activity_close(r, sched, SWF_NESTED_IDENTITY, NULL,
                              def == NULL ? "StepFunctions.StateMachineDoesNotExistException"
                                          : "StepFunctions.ExecutionLimitExceeded",
                              msg);
    }
    /* The wait's deadline: TimeoutSeconds, or HeartbeatSeconds (nothing
     * beats for a .sync child); the child is stopped there, or where the
     * parent itself is. */
    int64_t task_deadline = 0;
    const char *timeout_type = "START_TO_CLOSE";
    json_object *v;
    if (pattern == SWF_NESTED_SYNC || pattern == SWF_NESTED_SYNC2) {
        if (swf_json_get(sched->attrs, "startToCloseTimeout", &v))
            task_deadline = sched->time_ms + (int64_t)(json_object_get_double(v) * 1000.0 + 0.5);
        if (swf_json_get(sched->attrs, "heartbeatTimeout", &v)) {
            int64_t h = sched->time_ms + (int64_t)(json_object_get_double(v) * 1000.0 + 0.5);
            if (task_deadline == 0 || h < task_deadline) {
                task_deadline = h;
                timeout_type = "HEARTBEAT";
            }
        }
    }
    int64_t stop_ms = task_deadline;
    if (r->opt->stop_ms > 0 && (stop_ms == 0 || r->opt->stop_ms < stop_ms))
        stop_ms = r->opt->stop_ms;
    swf_local_options_t child = {.stop_ms = stop_ms,
                                 .definition = def,
                                 .input = req.input,
                                 .machine_name = req.machine,
                                 .execution_id = req.name,
                                 .machine_dir = r->opt->machine_dir,
                                 .start_ms = r->now_ms,
                                 .parent_id = r->id,
                                 .parent_event_id = sched->id,
                                 .trusted = false};
    swf_local_result_t res;
    err = run_execution(&child, r->store, r->mocks, r->depth + 1, &res);
    if (err == NULL && res.status == SWF_ASL_TERMINATED && stop_ms > 0 && res.stop_ms >= stop_ms) {
        /* Stopped: the Task timed out, or the parent itself is stopped. */
        r->now_ms = r->dec.now_ms = stop_ms;
        json_object *a = json_object_new_object();
        if (stop_ms == task_deadline) {
            char identity[128];
            snprintf(identity, sizeof(identity), "%s%s", SWF_NESTED_IDENTITY, req.name);
            json_object *started = json_object_new_object();
            swf_json_add(started, "scheduledEventId", json_object_new_int64(sched->id));
            swf_json_add(started, "identity", json_object_new_string(identity));
            err = swf_decider_decision_add(&r->dec, SWF_EVENT_ACTIVITY_TASK_STARTED, started);
            swf_json_add(a, "scheduledEventId", json_object_new_int64(sched->id));
            swf_json_add(a, "startedEventId",
                         json_object_new_int64(swf_decider_decision_next_id(&r->dec) - 1));
            swf_json_add(a, "timeoutType", json_object_new_string(timeout_type));
            swf_json_add(a, "details", json_object_new_string("the task did not finish in time"));
            if (err == NULL)
                err = swf_decider_decision_add(&r->dec, SWF_EVENT_ACTIVITY_TASK_TIMED_OUT, a);
            else
                json_object_put(a);
        } else {
            swf_json_add(a, "reason", json_object_new_string("States.Aborted"));
            swf_json_add(a, "details", json_object_new_string(SWF_NESTED_STOPPED));
            err = swf_decider_decision_add(&r->dec, SWF_EVENT_WORKFLOW_EXECUTION_TERMINATED, a);
        }
        swf_local_result_free(&res);
    } else if (err == NULL) {
        char identity[128];
        snprintf(identity, sizeof(identity), "%s%s", SWF_NESTED_IDENTITY, req.name);
        json_object *result = NULL;
        const char *error = NULL;
        char *cause = NULL;
        if (pattern == SWF_NESTED_REQUEST) {
            result = swf_nested_started_result(req.machine, req.name, r->now_ms);
        } else if (pattern == SWF_NESTED_CALLBACK) {
            swf_decider_mock_answer_t ans;
            const char *state = swf_json_get_string(control, "state");
            if (swf_decider_mocks_has(r->mocks, state)) {
                err = swf_decider_mocks_answer(r->mocks, state, params, &ans);
                if (err == NULL && ans.failed) {
                    error = ans.error;
                    cause = strdup(ans.cause);
                } else if (err == NULL) {
                    result = swf_json_ref(ans.result);
                }
            } else if (res.status == SWF_ASL_SUCCEEDED) {
                result = swf_json_ref(res.output);
            } else {
                error = res.error ? res.error : "States.TaskFailed";
                cause = strdup(res.cause ? res.cause : "");
            }
        } else {
            swf_nested_child_t c = {.machine = req.machine,
                                    .id = req.name,
                                    .input = req.input,
                                    .start_ms = r->now_ms,
                                    .stop_ms = res.stop_ms,
                                    .status = swf_nested_status(res.status),
                                    .output = res.output,
                                    .error = res.error,
                                    .cause = res.cause};
            swf_nested_close_answer(pattern, &c, &result, &error, &cause);
        }
        /* The parent's clock goes on from where the child's stopped. */
        if (res.stop_ms > r->now_ms && pattern != SWF_NESTED_REQUEST)
            r->now_ms = r->dec.now_ms = res.stop_ms;
        if (err == NULL)
            err = activity_close(r, sched, identity, result, error, cause);
        json_object_put(result);
        free(cause);
        swf_local_result_free(&res);
    }
    json_object_put(def);
    swf_nested_request_clear(&req);
    return err;
}

/* Answers one scheduled activity from the mocks. */
static swf_error_t *answer_activity(local_run_t *r, const swf_event_t *sched)
{
    json_object *control, *input;
    swf_json_get(sched->attrs, "control", &control);
    swf_nested_pattern_t nested = swf_nested_pattern_of_scheduled(sched->attrs);
    if (nested != SWF_NESTED_NONE && !swf_sw_is_document(r->opt->definition))
        return answer_nested(r, sched, nested);
    /* ASL mocks are per Task state, Serverless Workflow mocks per function
     * (SPEC 14), which is the Task's resource in the translation. */
    const char *state =
        swf_json_get_string(control, swf_sw_is_document(r->opt->definition) ? "resource" : "state");
    if (!swf_json_get(sched->attrs, "input", &input))
        input = NULL;
    swf_decider_mock_answer_t ans;
    swf_error_t *err = swf_decider_mocks_answer(r->mocks, state, input, &ans);
    if (err != NULL)
        return err;
    return activity_close(r, sched, "local-mock-worker", ans.failed ? NULL : ans.result,
                          ans.failed ? ans.error : NULL, ans.cause);
}

/* Whether a timer of the heap is still pending (not fired or cancelled). */
static bool timer_pending(local_run_t *r, const timer_t_ *t)
{
    json_object *v;
    return swf_json_get(r->st->timers, t->id, &v) &&
           json_object_get_int64(v) == t->started_event_id;
}

/* The worker: answers the activities scheduled since it last looked that
 * are still open (the decider closes the ones it cancelled). *any says
 * whether there were some. */
static swf_error_t *answer_activities(local_run_t *r, bool *any)
{
    swf_error_t *err = NULL;
    *any = false;
    for (size_t i = 0; err == NULL && i < r->scheduled.count; i++) {
        const swf_event_t *ev = &r->scheduled.items[i];
        char key[32];
        snprintf(key, sizeof(key), "%lld", (long long)ev->id);
        if (swf_json_get_string(r->st->scheduled, key) == NULL)
            continue;
        err = answer_activity(r, ev);
        *any = true;
    }
    swf_event_list_clear(&r->scheduled);
    return err;
}

/* The timer service: nothing else can happen before the next timer, so the
 * clock jumps to it and every timer due then fires, unless the execution's
 * deadline comes first. *idle when no timer is pending. */
static swf_error_t *timers_fire(local_run_t *r, int64_t deadline_ms, bool *idle)
{
    while (r->timers.count > 0 && !timer_pending(r, &r->timers.items[0]))
        heap_pop(&r->timers);
    *idle = r->timers.count == 0;
    if (*idle)
        return NULL;
    int64_t when = r->timers.items[0].fire_ms, stop = r->opt->stop_ms;
    if (stop > 0 && when > stop && (deadline_ms <= 0 || stop <= deadline_ms)) {
        /* A child whose parent stops waiting first (decider/nested.h). */
        r->now_ms = r->dec.now_ms = stop;
        json_object *a = json_object_new_object();
        swf_json_add(a, "reason", json_object_new_string("States.Aborted"));
        swf_json_add(a, "details", json_object_new_string(SWF_NESTED_STOPPED));
        return swf_decider_decision_add(&r->dec, SWF_EVENT_WORKFLOW_EXECUTION_TERMINATED, a);
    }
    if (deadline_ms > 0 && when > deadline_ms) {
        r->now_ms = r->dec.now_ms = deadline_ms;
        json_object *a = json_object_new_object();
        swf_json_add(a, "timeoutType", json_object_new_string("START_TO_CLOSE"));
        return swf_decider_decision_add(&r->dec, SWF_EVENT_WORKFLOW_EXECUTION_TIMED_OUT, a);
    }
    if (when > r->now_ms)
        r->now_ms = r->dec.now_ms = when;
    swf_error_t *err = NULL;
    while (err == NULL && r->timers.count > 0 && r->timers.items[0].fire_ms == when) {
        timer_t_ t = heap_pop(&r->timers);
        if (!timer_pending(r, &t))
            continue;
        json_object *a = json_object_new_object();
        swf_json_add(a, "timerId", json_object_new_string(t.id));
        swf_json_add(a, "startedEventId", json_object_new_int64(t.started_event_id));
        err = swf_decider_decision_add(&r->dec, SWF_EVENT_TIMER_FIRED, a);
    }
    return err;
}

static bool running(local_run_t *r)
{
    return swf_asl_exec_status(r->st->exec) == SWF_ASL_RUNNING;
}

/* The run: decision tasks, then the worker's answers to them, or else the
 * timers', until the execution closes. */
static swf_error_t *local_loop(local_run_t *r, int64_t deadline_ms)
{
    swf_error_t *err = NULL;
    bool wake = true; /* the start */
    while (err == NULL) {
        err = swf_decider_decision_run(&r->dec, wake, (int)(SWF_LIMIT_DECISION_TASKS - r->tasks));
        r->tasks += r->dec.tasks;
        if (err == NULL)
            err = batch_commit(r);
        if (err != NULL || !running(r))
            break;
        if (r->tasks >= SWF_LIMIT_DECISION_TASKS)
            return swf_error_new(SWF_E_LIMIT, NULL,
                                 "the execution took more than %d decision tasks",
                                 SWF_LIMIT_DECISION_TASKS);
        bool answered, idle = false;
        err = answer_activities(r, &answered);
        if (err == NULL && !answered)
            err = timers_fire(r, deadline_ms, &idle);
        if (err == NULL && idle)
            return swf_error_new(SWF_E_INTERNAL, NULL,
                                 "the execution waits for nothing that can happen (a bug)");
        wake = true;
    }
    return err;
}

swf_error_t *swf_local_run(const swf_local_options_t *opt, swf_history_store_t *store,
                           swf_local_result_t *result)
{
    swf_decider_mocks_t *mocks = swf_decider_mocks_new(opt->mocks);
    swf_error_t *err = run_execution(opt, store, mocks, 0, result);
    swf_decider_mocks_free(mocks);
    return err;
}

/* One execution, the top one or a child (which shares the mocks handle:
 * a Task's answers are consumed in order across the whole run). */
static swf_error_t *run_execution(const swf_local_options_t *opt, swf_history_store_t *store,
                                  swf_decider_mocks_t *mocks, int depth, swf_local_result_t *result)
{
    memset(result, 0, sizeof(*result));
    local_run_t r = {.opt = opt, .store = store, .now_ms = opt->start_ms, .depth = depth};
    r.id = opt->execution_id ? opt->execution_id : "local";
    r.st = swf_decider_state_new(NULL);
    r.mocks = mocks;
    swf_asl_exec_set_trusted(r.st->exec, opt->trusted);
    swf_asl_exec_set_history_limit(r.st->exec, opt->history_limit);
    swf_decider_decision_init(&r.dec, r.st, &r.batch, r.now_ms, "local-decider");
    json_object *sa = json_object_new_object(), *wt = json_object_new_object(), *v;
    swf_json_add(sa, "executionId", json_object_new_string(r.id));
    swf_json_add(sa, "workflowId", json_object_new_string(r.id));
    swf_json_add(wt, "name",
                 json_object_new_string(opt->machine_name ? opt->machine_name : "StateMachine"));
    swf_json_add(wt, "version", json_object_new_string("1"));
    swf_json_add(sa, "workflowType", wt);
    swf_json_add(sa, "definition", swf_json_ref(opt->definition));
    swf_json_add(sa, "input", swf_json_ref(opt->input));
    if (opt->parent_id != NULL) /* a nested execution names its parent */
        swf_started_parent_record(sa, opt->parent_id, opt->parent_event_id, r.depth);
    if (swf_sw_is_document(opt->definition)) /* the events the run delivers (SPEC 14) */
        swf_json_add(sa, "cloudEvents",
                     opt->events ? swf_json_ref(opt->events) : json_object_new_array());
    int64_t deadline_ms = 0;
    if (swf_json_get(opt->definition, "TimeoutSeconds", &v) &&
        json_object_is_type(v, json_type_int)) {
        swf_json_add(sa, "executionStartToCloseTimeout", swf_json_ref(v));
        deadline_ms = opt->start_ms + json_object_get_int64(v) * 1000;
    }
    /* The deployment's settings: task list map, state data limit
     * (protocol/started.h). */
    swf_error_t *err = swf_started_settings_record(sa);
    if (err == NULL)
        err = swf_decider_decision_add(&r.dec, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, sa);
    else
        json_object_put(sa);
    if (err == NULL)
        err = local_loop(&r, deadline_ms);
    if (err == NULL) {
        result->status = swf_asl_exec_status(r.st->exec);
        result->output = swf_json_ref(swf_asl_exec_output(r.st->exec));
        const char *e = swf_asl_exec_error(r.st->exec), *c = swf_asl_exec_cause(r.st->exec);
        result->error = e ? strdup(e) : NULL;
        result->cause = c ? strdup(c) : NULL;
        result->events = swf_asl_exec_last_event_id(r.st->exec);
        result->stop_ms = r.now_ms;
    }
    swf_event_list_free(&r.batch);
    swf_event_list_free(&r.scheduled);
    free(r.timers.items);
    swf_decider_state_free(r.st);
    return err;
}

void swf_local_result_free(swf_local_result_t *result)
{
    json_object_put(result->output);
    free(result->error);
    free(result->cause);
    memset(result, 0, sizeof(*result));
}
