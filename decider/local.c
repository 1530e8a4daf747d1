/*
 * local.c - the in-process driver of `swf run --local`.
 *
 * It plays every part of the distributed system in one loop, through the
 * same interfaces: the history store (in memory here), the interpreter's
 * fold and decide, a "worker" that answers activities from mocks, and a
 * timer service on a virtual clock. Like SWF, results that arrive while a
 * decision task is open are batched into the next decision task: the loop
 * answers every activity scheduled by one decision task before starting the
 * next, so a Map over N items takes O(1) decision tasks, not N.
 */
#include "decider/local.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/json.h"
#include "protocol/limits.h"

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
    if (h->count == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 16;
        timer_t_ *items = realloc(h->items, cap * sizeof(*items));
        if (items == NULL)
            abort();
        h->items = items;
        h->cap = cap;
    }
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

/* Per-state mock cursor. */
typedef struct mock_cursor {
    char *state;
    size_t calls;
} mock_cursor_t;

typedef struct local_run {
    const swf_local_options_t *opt;
    swf_history_store_t *store;
    const char *id;
    swf_asl_exec_t *exec;
    swf_event_list_t batch; /* events to append next */
    int64_t next_id;
    int64_t now_ms;
    timer_heap_t timers;
    int64_t timer_order;
    mock_cursor_t *cursors;
    size_t ncursors;
    char **canceled_timers;
    size_t ncanceled;
} local_run_t;

static json_object *attrs_new(void)
{
    return json_object_new_object();
}

static void batch_add(local_run_t *r, swf_event_type_t type, json_object *attrs)
{
    swf_event_t *ev = swf_event_list_push(&r->batch, type, r->now_ms, attrs);
    ev->id = r->next_id + (int64_t)r->batch.count - 1;
}

/* Appends the batch to the store and folds it into the execution. */
static swf_error_t *batch_commit(local_run_t *r)
{
    swf_error_t *err = swf_history_append(r->store, r->id, r->next_id, r->batch.items,
                                          r->batch.count);
    for (size_t i = 0; err == NULL && i < r->batch.count; i++)
        err = swf_asl_exec_apply(r->exec, &r->batch.items[i]);
    r->next_id += (int64_t)r->batch.count;
    swf_event_list_clear(&r->batch);
    return err;
}

static size_t *mock_calls(local_run_t *r, const char *state)
{
    for (size_t i = 0; i < r->ncursors; i++) {
        if (strcmp(r->cursors[i].state, state) == 0)
            return &r->cursors[i].calls;
    }
    mock_cursor_t *c = realloc(r->cursors, (r->ncursors + 1) * sizeof(*c));
    if (c == NULL)
        abort();
    r->cursors = c;
    c[r->ncursors].state = strdup(state);
    if (c[r->ncursors].state == NULL)
        abort();
    c[r->ncursors].calls = 0;
    return &r->cursors[r->ncursors++].calls;
}

/* Answers one scheduled activity from the mocks. */
static swf_error_t *answer_activity(local_run_t *r, const swf_event_t *sched)
{
    json_object *control, *input, *list, *resp = NULL, *v;
    swf_json_get(sched->attrs, "control", &control);
    const char *state = swf_json_get_string(control, "state");
    if (!swf_json_get(sched->attrs, "input", &input))
        input = NULL;
    if (state != NULL && swf_json_get(r->opt->mocks, state, &list) &&
        json_object_is_type(list, json_type_array) && json_object_array_length(list) > 0) {
        size_t *calls = mock_calls(r, state);
        size_t n = json_object_array_length(list);
        resp = json_object_array_get_idx(list, *calls < n ? *calls : n - 1);
        (*calls)++;
    }
    json_object *started = attrs_new();
    swf_json_add(started, "scheduledEventId", json_object_new_int64(sched->id));
    swf_json_add(started, "identity", json_object_new_string("local-mock-worker"));
    batch_add(r, SWF_EVENT_ACTIVITY_TASK_STARTED, started);
    int64_t started_id = r->next_id + (int64_t)r->batch.count - 1;
    json_object *a = attrs_new();
    swf_json_add(a, "scheduledEventId", json_object_new_int64(sched->id));
    swf_json_add(a, "startedEventId", json_object_new_int64(started_id));
    if (resp != NULL && swf_json_get(resp, "Throw", &v)) {
        const char *error = swf_json_get_string(v, "Error");
        const char *cause = swf_json_get_string(v, "Cause");
        if (error == NULL) {
            json_object_put(a);
            return swf_error_new(SWF_E_INPUT, NULL, "mocks: \"%s\": a Throw needs an Error string",
                                 state);
        }
        if (strcmp(error, "States.Timeout") == 0) {
            swf_json_add(a, "timeoutType", json_object_new_string("START_TO_CLOSE"));
            swf_json_add(a, "details", json_object_new_string(cause ? cause : ""));
            batch_add(r, SWF_EVENT_ACTIVITY_TASK_TIMED_OUT, a);
        } else {
            swf_json_add(a, "reason", json_object_new_string(error));
            swf_json_add(a, "details", json_object_new_string(cause ? cause : ""));
            batch_add(r, SWF_EVENT_ACTIVITY_TASK_FAILED, a);
        }
        return NULL;
    }
    if (resp != NULL && swf_json_get(resp, "Return", &v)) {
        swf_json_add(a, "result", swf_json_ref(v));
    } else if (resp == NULL || swf_json_get(resp, "Echo", &v)) {
        swf_json_add(a, "result", swf_json_ref(input));
    } else {
        json_object_put(a);
        return swf_error_new(SWF_E_INPUT, NULL,
                             "mocks: \"%s\": a response must hold Return, Throw or Echo", state);
    }
    batch_add(r, SWF_EVENT_ACTIVITY_TASK_COMPLETED, a);
    return NULL;
}

static bool timer_canceled(local_run_t *r, const char *id)
{
    for (size_t i = 0; i < r->ncanceled; i++) {
        if (strcmp(r->canceled_timers[i], id) == 0)
            return true;
    }
    return false;
}

/* One decision task, then the worker's and the timers' answers to it.
 * Sets *idle when nothing can happen any more. */
static swf_error_t *local_step(local_run_t *r, int64_t deadline_ms, bool *idle)
{
    *idle = false;
    json_object *st = attrs_new();
    swf_json_add(st, "scheduledEventId", json_object_new_int64(r->next_id - 1));
    swf_json_add(st, "identity", json_object_new_string("local-decider"));
    batch_add(r, SWF_EVENT_DECISION_TASK_STARTED, st);
    int64_t started_id = r->next_id;
    swf_error_t *err = batch_commit(r);
    if (err)
        return err;
    swf_asl_decisions_t ds = {0};
    err = swf_asl_exec_decide(r->exec, &ds);
    if (err) {
        swf_asl_decisions_free(&ds);
        return err;
    }
    json_object *done = attrs_new();
    swf_json_add(done, "scheduledEventId", json_object_new_int64(started_id - 1));
    swf_json_add(done, "startedEventId", json_object_new_int64(started_id));
    batch_add(r, SWF_EVENT_DECISION_TASK_COMPLETED, done);
    int64_t completed_id = started_id + 1;
    size_t first_decision = r->batch.count;
    for (size_t i = 0; i < ds.count; i++) {
        /* The interpreter keeps the same object to check the event against;
         * it ignores the one field an event adds to its decision. */
        json_object *a = ds.items[i].attrs;
        ds.items[i].attrs = NULL;
        swf_json_add(a, "decisionTaskCompletedEventId", json_object_new_int64(completed_id));
        batch_add(r, ds.items[i].type, a);
    }
    swf_asl_decisions_free(&ds);
    /* Keep the decision events to answer them after the commit. */
    swf_event_list_t decided = {0};
    for (size_t i = first_decision; i < r->batch.count; i++)
        swf_event_list_push_copy(&decided, &r->batch.items[i]);
    err = batch_commit(r);
    if (err || swf_asl_exec_status(r->exec) != SWF_ASL_RUNNING)
        goto done;

    for (size_t i = 0; i < decided.count; i++) {
        const swf_event_t *ev = &decided.items[i];
        if (ev->type == SWF_EVENT_TIMER_STARTED) {
            json_object *v;
            double s = swf_json_get(ev->attrs, "startToFireTimeout", &v) ? json_object_get_double(v) : 0;
            timer_t_ t = {.fire_ms = r->now_ms + (int64_t)(s * 1000.0 + 0.5),
                          .order = r->timer_order++,
                          .started_event_id = ev->id};
            snprintf(t.id, sizeof(t.id), "%s", swf_json_get_string(ev->attrs, "timerId"));
            heap_push(&r->timers, t);
        } else if (ev->type == SWF_EVENT_TIMER_CANCELED) {
            char **c = realloc(r->canceled_timers, (r->ncanceled + 1) * sizeof(*c));
            if (c == NULL)
                abort();
            r->canceled_timers = c;
            c[r->ncanceled++] = strdup(swf_json_get_string(ev->attrs, "timerId"));
        }
    }
    /* The worker: every activity this decision task scheduled and did not
     * cancel in the same breath. Cancellations are rare (a failed Parallel
     * or Map), so they are collected first and the common case costs
     * nothing per activity. */
    const char **cancels = NULL;
    size_t ncancels = 0;
    for (size_t i = 0; i < decided.count; i++) {
        if (decided.items[i].type != SWF_EVENT_ACTIVITY_TASK_CANCEL_REQUESTED)
            continue;
        const char **c = realloc(cancels, (ncancels + 1) * sizeof(*c));
        if (c == NULL)
            abort();
        cancels = c;
        cancels[ncancels++] = swf_json_get_string(decided.items[i].attrs, "activityId");
    }
    for (size_t i = 0; i < decided.count && err == NULL; i++) {
        const swf_event_t *ev = &decided.items[i];
        if (ev->type != SWF_EVENT_ACTIVITY_TASK_SCHEDULED)
            continue;
        const char *aid = swf_json_get_string(ev->attrs, "activityId");
        bool canceled = false;
        for (size_t j = 0; j < ncancels && !canceled; j++)
            canceled = cancels[j] && aid && strcmp(cancels[j], aid) == 0;
        if (canceled) {
            json_object *a = attrs_new();
            swf_json_add(a, "scheduledEventId", json_object_new_int64(ev->id));
            swf_json_add(a, "startedEventId", json_object_new_int64(0));
            swf_json_add(a, "details", json_object_new_string("canceled before it started"));
            batch_add(r, SWF_EVENT_ACTIVITY_TASK_CANCELED, a);
        } else {
            err = answer_activity(r, ev);
        }
    }
    free(cancels);
    if (err)
        goto done;
    bool results = r->batch.count > 0;
    if (!results) {
        /* Nothing else can happen before the next timer: jump to it. */
        while (r->timers.count > 0 && timer_canceled(r, r->timers.items[0].id))
            heap_pop(&r->timers);
        if (r->timers.count == 0) {
            *idle = true;
            goto done;
        }
        int64_t when = r->timers.items[0].fire_ms;
        if (deadline_ms > 0 && when > deadline_ms) {
            r->now_ms = deadline_ms;
            json_object *a = attrs_new();
            swf_json_add(a, "timeoutType", json_object_new_string("START_TO_CLOSE"));
            batch_add(r, SWF_EVENT_WORKFLOW_EXECUTION_TIMED_OUT, a);
            err = batch_commit(r);
            goto done;
        }
        if (when > r->now_ms)
            r->now_ms = when;
        while (r->timers.count > 0 && r->timers.items[0].fire_ms == when) {
            timer_t_ t = heap_pop(&r->timers);
            if (timer_canceled(r, t.id))
                continue;
            json_object *a = attrs_new();
            swf_json_add(a, "timerId", json_object_new_string(t.id));
            swf_json_add(a, "startedEventId", json_object_new_int64(t.started_event_id));
            batch_add(r, SWF_EVENT_TIMER_FIRED, a);
        }
    }
    batch_add(r, SWF_EVENT_DECISION_TASK_SCHEDULED, attrs_new());
    err = batch_commit(r);
done:
    swf_event_list_free(&decided);
    return err;
}

swf_error_t *swf_local_run(const swf_local_options_t *opt, swf_history_store_t *store,
                           swf_local_result_t *result)
{
    memset(result, 0, sizeof(*result));
    local_run_t r = {.opt = opt, .store = store, .next_id = 1, .now_ms = opt->start_ms};
    r.id = opt->execution_id ? opt->execution_id : "local";
    r.exec = swf_asl_exec_new();
    swf_asl_exec_set_trusted(r.exec, opt->trusted);
    swf_asl_exec_set_history_limit(r.exec, opt->history_limit);
    json_object *sa = attrs_new(), *wt = json_object_new_object(), *v;
    swf_json_add(sa, "executionId", json_object_new_string(r.id));
    swf_json_add(sa, "workflowId", json_object_new_string(r.id));
    swf_json_add(wt, "name", json_object_new_string(opt->machine_name ? opt->machine_name
                                                                                : "StateMachine"));
    swf_json_add(wt, "version", json_object_new_string("1"));
    swf_json_add(sa, "workflowType", wt);
    swf_json_add(sa, "definition", swf_json_ref(opt->definition));
    swf_json_add(sa, "input", swf_json_ref(opt->input));
    int64_t deadline_ms = 0;
    if (swf_json_get(opt->definition, "TimeoutSeconds", &v) && json_object_is_type(v, json_type_int)) {
        swf_json_add(sa, "executionStartToCloseTimeout", swf_json_ref(v));
        deadline_ms = opt->start_ms + json_object_get_int64(v) * 1000;
    }
    batch_add(&r, SWF_EVENT_WORKFLOW_EXECUTION_STARTED, sa);
    batch_add(&r, SWF_EVENT_DECISION_TASK_SCHEDULED, attrs_new());
    swf_error_t *err = batch_commit(&r);
    for (int64_t tasks = 0; err == NULL && swf_asl_exec_status(r.exec) == SWF_ASL_RUNNING; tasks++) {
        if (tasks >= SWF_LIMIT_DECISION_TASKS) {
            err = swf_error_new(SWF_E_LIMIT, NULL, "the execution took more than %d decision tasks",
                                SWF_LIMIT_DECISION_TASKS);
            break;
        }
        bool idle;
        err = local_step(&r, deadline_ms, &idle);
        if (err == NULL && idle && swf_asl_exec_status(r.exec) == SWF_ASL_RUNNING)
            err = swf_error_new(SWF_E_INTERNAL, NULL,
                                "the execution waits for nothing that can happen (a bug)");
    }
    if (err == NULL) {
        result->status = swf_asl_exec_status(r.exec);
        result->output = swf_json_ref(swf_asl_exec_output(r.exec));
        const char *e = swf_asl_exec_error(r.exec), *c = swf_asl_exec_cause(r.exec);
        result->error = e ? strdup(e) : NULL;
        result->cause = c ? strdup(c) : NULL;
        result->events = r.next_id - 1;
    }
    swf_event_list_free(&r.batch);
    free(r.timers.items);
    for (size_t i = 0; i < r.ncursors; i++)
        free(r.cursors[i].state);
    free(r.cursors);
    for (size_t i = 0; i < r.ncanceled; i++)
        free(r.canceled_timers[i]);
    free(r.canceled_timers);
    swf_asl_exec_free(r.exec);
    return err;
}

void swf_local_result_free(swf_local_result_t *result)
{
    json_object_put(result->output);
    free(result->error);
    free(result->cause);
    memset(result, 0, sizeof(*result));
}
