/*
 * check.c - checking a stored history against the engine's invariants.
 *
 * One pass over the events keeps just enough state to judge each event
 * against what came before it: the previous id, the open decision task, per
 * ActivityTaskScheduled its start and its result, per timerId its open
 * TimerStarted, and the close. References between events (scheduledEventId,
 * startedEventId) are resolved through the ids as stored, not the positions,
 * so a history with a gap or a duplicate id is still judged sensibly after
 * the id problem is reported. Then, when the ids are dense, the history is
 * replayed through the interpreter, which re-derives every decision and
 * compares it with the recorded one: the same fold `swf replay` runs.
 *
 * The checks are deliberately about the shape of the history, not about the
 * ASL semantics (that is replay's part): each one is a sentence of
 * protocol/README.md or DESIGN.md that a crash in the wrong place could
 * break. Nothing here trusts the history: a missing or mistyped attribute
 * is a problem reported, never an assertion.
 */
#include "decider/check.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/replay.h"
#include "protocol/json.h"

typedef struct pass pass_t;
static void problem(pass_t *p, int64_t event_id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A new string "event N: " + msg. */
static char *item_new(int64_t event_id, const char *msg)
{
    size_t n = strlen(msg) + 32;
    char *item = malloc(n);
    if (item == NULL)
        abort();
    snprintf(item, n, "event %lld: %s", (long long)event_id, msg);
    return item;
}

static void items_push(swf_decider_check_problems_t *out, char *item)
{
    char **items = realloc(out->items, (out->count + 1) * sizeof(*items));
    if (items == NULL)
        abort();
    out->items = items;
    out->items[out->count++] = item;
}

/* The integer attribute `key`, or -1 when it is absent or not an integer. */
static int64_t attr_id(const swf_event_t *ev, const char *key)
{
    json_object *v;
    if (!swf_json_get(ev->attrs, key, &v) || !json_object_is_type(v, json_type_int))
        return -1;
    return json_object_get_int64(v);
}

/* The position of the first event with id `id`, or -1. Dense histories
 * take the fast path. */
static long find(const swf_event_list_t *events, int64_t id)
{
    if (id >= 1 && (size_t)id <= events->count && events->items[id - 1].id == id)
        return (long)(id - 1);
    for (size_t i = 0; i < events->count; i++) {
        if (events->items[i].id == id)
            return (long)i;
    }
    return -1;
}

static bool is_activity_result(swf_event_type_t t)
{
    return t == SWF_EVENT_ACTIVITY_TASK_COMPLETED || t == SWF_EVENT_ACTIVITY_TASK_FAILED ||
           t == SWF_EVENT_ACTIVITY_TASK_TIMED_OUT || t == SWF_EVENT_ACTIVITY_TASK_CANCELED;
}

/* What one pass keeps. Per event position: for an ActivityTaskScheduled,
 * the ids of its start and result (0: none yet); for a TimerStarted, the id
 * of the event that closed it. */
struct pass {
    const swf_event_list_t *events;
    swf_decider_check_problems_t *out;
    size_t dropped;
    int64_t *started_by;       /* per position */
    int64_t *closed_by;        /* per position: result of an activity, fire/cancel of a timer */
    json_object *activity_ids; /* activityId -> scheduled event id */
    json_object *open_timers;  /* timerId -> TimerStarted event id */
    int64_t dt_scheduled, dt_started, dt_completed;
    bool in_decisions; /* every event since the last DecisionTaskCompleted is a decision */
    bool news;         /* an event a decider reacts to since the last DecisionTaskCompleted */
    int64_t closed_at;
    size_t base; /* out->count when this history's check began */
};

static void problem(pass_t *p, int64_t event_id, const char *fmt, ...)
{
    if (p->out->count - p->base >= SWF_DECIDER_CHECK_PROBLEMS_MAX) {
        p->dropped++;
        return;
    }
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    items_push(p->out, item_new(event_id, msg));
}

/* The ActivityTaskScheduled event an activity event names by
 * scheduledEventId: its position, or -1 (reported). */
static long scheduled_of(pass_t *p, const swf_event_t *ev)
{
    int64_t s = attr_id(ev, "scheduledEventId");
    long at = s > 0 ? find(p->events, s) : -1;
    if (at < 0 || p->events->items[at].type != SWF_EVENT_ACTIVITY_TASK_SCHEDULED) {
        problem(p, ev->id,
                "%s names scheduledEventId %lld, which is no ActivityTaskScheduled event",
                swf_event_type_name(ev->type), (long long)s);
        return -1;
    }
    return at;
}

static void check_decision_task(pass_t *p, const swf_event_t *ev)
{
    const char *type = swf_event_type_name(ev->type);
    switch (ev->type) {
    case SWF_EVENT_DECISION_TASK_SCHEDULED:
        if (p->dt_scheduled != 0)
            problem(p, ev->id,
                    "a second decision task is scheduled while the one scheduled at event %lld "
                    "is open",
                    (long long)p->dt_scheduled);
        else if (!p->news)
            problem(p, ev->id,
                    "a decision task is scheduled though nothing happened since the one that "
                    "completed at event %lld (a duplicate \"decide\" acted upon)",
                    (long long)p->dt_completed);
        p->dt_scheduled = ev->id;
        p->dt_started = 0;
        break;
    case SWF_EVENT_DECISION_TASK_STARTED:
        if (p->dt_scheduled == 0)
            problem(p, ev->id, "DecisionTaskStarted with no decision task open");
        else if (p->dt_started != 0)
            problem(p, ev->id,
                    "a second DecisionTaskStarted for the task scheduled at event %lld (started "
                    "at event %lld)",
                    (long long)p->dt_scheduled, (long long)p->dt_started);
        else if (attr_id(ev, "scheduledEventId") != p->dt_scheduled)
            problem(p, ev->id,
                    "DecisionTaskStarted names scheduledEventId %lld, the open task was scheduled "
                    "at event %lld",
                    (long long)attr_id(ev, "scheduledEventId"), (long long)p->dt_scheduled);
        p->dt_started = ev->id;
        break;
    case SWF_EVENT_DECISION_TASK_COMPLETED:
    case SWF_EVENT_DECISION_TASK_TIMED_OUT:
        if (p->dt_started == 0) {
            problem(p, ev->id, "%s with no decision task started", type);
        } else if (attr_id(ev, "scheduledEventId") != p->dt_scheduled ||
                   attr_id(ev, "startedEventId") != p->dt_started) {
            problem(p, ev->id, "%s names events %lld and %lld, the open task's are %lld and %lld",
                    type, (long long)attr_id(ev, "scheduledEventId"),
                    (long long)attr_id(ev, "startedEventId"), (long long)p->dt_scheduled,
                    (long long)p->dt_started);
        }
        p->dt_scheduled = p->dt_started = 0;
        if (ev->type == SWF_EVENT_DECISION_TASK_COMPLETED)
            p->dt_completed = ev->id;
        p->news = ev->type == SWF_EVENT_DECISION_TASK_TIMED_OUT;
        break;
    default:
        break;
    }
}

static void check_activity(pass_t *p, const swf_event_t *ev)
{
    const char *type = swf_event_type_name(ev->type);
    json_object *v;
    if (ev->type == SWF_EVENT_ACTIVITY_TASK_SCHEDULED) {
        const char *aid = swf_json_get_string(ev->attrs, "activityId");
        if (aid == NULL)
            problem(p, ev->id, "ActivityTaskScheduled without an activityId");
        else if (swf_json_get(p->activity_ids, aid, &v))
            problem(p, ev->id, "activityId \"%s\" was scheduled already at event %lld", aid,
                    (long long)json_object_get_int64(v));
        else
            json_object_object_add(p->activity_ids, aid, json_object_new_int64(ev->id));
        return;
    }
    if (ev->type == SWF_EVENT_ACTIVITY_TASK_CANCEL_REQUESTED) {
        const char *aid = swf_json_get_string(ev->attrs, "activityId");
        if (aid == NULL || !swf_json_get(p->activity_ids, aid, &v))
            problem(p, ev->id,
                    "ActivityTaskCancelRequested names activityId \"%s\", which was never "
                    "scheduled",
                    aid ? aid : "(none)");
        return;
    }
    long at = scheduled_of(p, ev);
    if (at < 0)
        return;
    int64_t sched = p->events->items[at].id;
    if (p->closed_by[at] != 0) {
        problem(p, ev->id,
                "%s for the activity scheduled at event %lld, whose result was recorded at event "
                "%lld",
                type, (long long)sched, (long long)p->closed_by[at]);
        return;
    }
    if (ev->type == SWF_EVENT_ACTIVITY_TASK_STARTED) {
        if (p->started_by[at] != 0)
            problem(p, ev->id,
                    "the activity scheduled at event %lld was started already at event %lld",
                    (long long)sched, (long long)p->started_by[at]);
        else
            p->started_by[at] = ev->id;
        return;
    }
    if (!is_activity_result(ev->type))
        return; /* a heartbeat of an open activity */
    p->closed_by[at] = ev->id;
    int64_t started = attr_id(ev, "startedEventId");
    if (started > 0 && started != p->started_by[at])
        problem(p, ev->id,
                "%s names startedEventId %lld, the activity scheduled at event %lld was started "
                "at event %lld",
                type, (long long)started, (long long)sched, (long long)p->started_by[at]);
}

static void check_timer(pass_t *p, const swf_event_t *ev)
{
    const char *type = swf_event_type_name(ev->type);
    const char *tid = swf_json_get_string(ev->attrs, "timerId");
    if (tid == NULL) {
        problem(p, ev->id, "%s without a timerId", type);
        return;
    }
    json_object *v;
    bool open = swf_json_get(p->open_timers, tid, &v);
    int64_t open_id = open ? json_object_get_int64(v) : 0;
    if (ev->type == SWF_EVENT_TIMER_STARTED) {
        if (open)
            problem(p, ev->id,
                    "timer \"%s\" is started again while the one started at event %lld is open",
                    tid, (long long)open_id);
        json_object_object_add(p->open_timers, tid, json_object_new_int64(ev->id));
        return;
    }
    /* Fired or canceled: it names its TimerStarted by startedEventId. */
    int64_t started = attr_id(ev, "startedEventId");
    if (started <= 0)
        started = open_id;
    long at = started > 0 ? find(p->events, started) : -1;
    const swf_event_t *st = at >= 0 ? &p->events->items[at] : NULL;
    const char *st_tid = st ? swf_json_get_string(st->attrs, "timerId") : NULL;
    if (st == NULL || st->type != SWF_EVENT_TIMER_STARTED || st_tid == NULL ||
        strcmp(st_tid, tid) != 0 || st->id > ev->id) {
        problem(p, ev->id,
                "%s of timer \"%s\" names startedEventId %lld, which is no TimerStarted of that "
                "timer before it",
                type, tid, (long long)started);
        return;
    }
    if (p->closed_by[at] != 0) {
        problem(p, ev->id,
                "%s of timer \"%s\" started at event %lld, which was closed already at event %lld",
                type, tid, (long long)st->id, (long long)p->closed_by[at]);
        return;
    }
    p->closed_by[at] = ev->id;
    if (open && open_id == st->id)
        json_object_object_del(p->open_timers, tid);
}

/* Replays the history through decider/replay.c, the fold `swf replay`
 * runs; a failure is one problem at the event it names. Events after the
 * close are left out: the pass above reported each of them already, and
 * replay would only say so again. Called with dense ids only, so the close
 * is at position closed_at - 1. */
static void check_replay(pass_t *p)
{
    swf_event_list_t upto = *p->events; /* a view, borrowed */
    if (p->closed_at > 0)
        upto.count = (size_t)p->closed_at;
    swf_decider_replay_options_t opt = {0};
    swf_decider_replay_result_t res = {0};
    swf_error_t *err = swf_decider_replay_run(&upto, &opt, &res);
    if (err == NULL) {
        err = res.error;
        res.error = NULL;
    }
    int64_t at = res.events_applied < upto.count ? upto.items[res.events_applied].id
                                                 : upto.items[upto.count - 1].id + 1;
    if (err != NULL) {
        json_object *cause = NULL, *v;
        const char *c = swf_error_cause(err);
        if (c != NULL && swf_json_parse(c, strlen(c), strlen(c), &cause) == NULL &&
            swf_json_get(cause, "eventId", &v) && json_object_is_type(v, json_type_int))
            at = json_object_get_int64(v);
        json_object_put(cause);
        problem(p, at, "replay fails (%s): %s", swf_code_name(swf_error_code(err)),
                swf_error_message(err));
        swf_error_free(err);
    }
    swf_decider_replay_result_free(&res);
}

static swf_error_t *check_events(const swf_event_list_t *events, swf_decider_check_problems_t *out,
                                 bool replay)
{
    if (events->count == 0)
        return swf_error_new(SWF_E_INPUT, NULL, "the history has no events");
    pass_t p = {.events = events, .out = out, .news = true};
    p.started_by = calloc(events->count, sizeof(*p.started_by));
    p.closed_by = calloc(events->count, sizeof(*p.closed_by));
    if (p.started_by == NULL || p.closed_by == NULL)
        abort();
    p.activity_ids = json_object_new_object();
    p.open_timers = json_object_new_object();
    p.base = out->count;
    bool dense = true;

    for (size_t i = 0; i < events->count; i++) {
        const swf_event_t *ev = &events->items[i];
        int64_t prev = i == 0 ? 0 : events->items[i - 1].id;
        if (ev->id <= prev) {
            dense = false;
            problem(&p, ev->id, "duplicate or out-of-order id after event %lld (a forked history)",
                    (long long)prev);
        } else if (ev->id > prev + 1) {
            dense = false;
            if (ev->id == prev + 2)
                problem(&p, ev->id, "gap: event %lld is missing", (long long)(prev + 1));
            else
                problem(&p, ev->id, "gap: events %lld to %lld are missing", (long long)(prev + 1),
                        (long long)(ev->id - 1));
        }

        if (i == 0 && ev->type != SWF_EVENT_WORKFLOW_EXECUTION_STARTED)
            problem(&p, ev->id, "the history starts with %s, not WorkflowExecutionStarted",
                    swf_event_type_name(ev->type) ? swf_event_type_name(ev->type) : "?");
        else if (i > 0 && ev->type == SWF_EVENT_WORKFLOW_EXECUTION_STARTED)
            problem(&p, ev->id, "a second WorkflowExecutionStarted");

        if (p.closed_at != 0 && ev->type == SWF_EVENT_WORKFLOW_EXECUTION_REDRIVEN) {
            p.closed_at = 0; /* redriven: it runs again */
        } else if (p.closed_at != 0) {
            if (swf_event_type_is_close(ev->type))
                problem(&p, ev->id, "a second close event (%s): the execution closed at event %lld",
                        swf_event_type_name(ev->type), (long long)p.closed_at);
            else
                problem(&p, ev->id, "%s after the execution closed at event %lld",
                        swf_event_type_name(ev->type), (long long)p.closed_at);
        } else if (swf_event_type_is_close(ev->type)) {
            p.closed_at = ev->id;
        }

        if (swf_event_type_is_decision(ev->type)) {
            int64_t dtc = attr_id(ev, "decisionTaskCompletedEventId");
            if (!p.in_decisions)
                problem(&p, ev->id,
                        "decision event %s does not directly follow its DecisionTaskCompleted",
                        swf_event_type_name(ev->type));
            else if (dtc != p.dt_completed)
                problem(&p, ev->id,
                        "%s names decisionTaskCompletedEventId %lld, the last decision task "
                        "completed at event %lld",
                        swf_event_type_name(ev->type), (long long)dtc, (long long)p.dt_completed);
        } else {
            p.in_decisions = ev->type == SWF_EVENT_DECISION_TASK_COMPLETED;
        }

        /* What a decider reacts to: anything but its own decision tasks and
         * decisions. */
        bool own = swf_event_type_is_decision(ev->type) ||
                   ev->type == SWF_EVENT_DECISION_TASK_SCHEDULED ||
                   ev->type == SWF_EVENT_DECISION_TASK_STARTED ||
                   ev->type == SWF_EVENT_DECISION_TASK_COMPLETED ||
                   ev->type == SWF_EVENT_DECISION_TASK_TIMED_OUT;
        if (!own)
            p.news = true;

        switch (ev->type) {
        case SWF_EVENT_DECISION_TASK_SCHEDULED:
        case SWF_EVENT_DECISION_TASK_STARTED:
        case SWF_EVENT_DECISION_TASK_COMPLETED:
        case SWF_EVENT_DECISION_TASK_TIMED_OUT:
            check_decision_task(&p, ev);
            break;
        case SWF_EVENT_ACTIVITY_TASK_SCHEDULED:
        case SWF_EVENT_ACTIVITY_TASK_STARTED:
        case SWF_EVENT_ACTIVITY_TASK_COMPLETED:
        case SWF_EVENT_ACTIVITY_TASK_FAILED:
        case SWF_EVENT_ACTIVITY_TASK_TIMED_OUT:
        case SWF_EVENT_ACTIVITY_TASK_CANCELED:
        case SWF_EVENT_ACTIVITY_TASK_CANCEL_REQUESTED:
        case SWF_EVENT_ACTIVITY_TASK_HEARTBEAT_RECORDED:
            check_activity(&p, ev);
            break;
        case SWF_EVENT_TIMER_STARTED:
        case SWF_EVENT_TIMER_FIRED:
        case SWF_EVENT_TIMER_CANCELED:
            check_timer(&p, ev);
            break;
        default:
            break;
        }
    }

    /* The interpreter needs dense ids; without them replay would only
     * repeat the id problem. A history that breaks the rules above may
     * still replay (the interpreter ignores a second result, for one), so
     * replay runs whatever they found. */
    if (dense && replay)
        check_replay(&p);
    if (p.dropped > 0) {
        char msg[64];
        snprintf(msg, sizeof(msg), "... and %zu more problems", p.dropped);
        items_push(out, strdup(msg));
    }
    free(p.started_by);
    free(p.closed_by);
    json_object_put(p.activity_ids);
    json_object_put(p.open_timers);
    return NULL;
}

swf_error_t *swf_decider_check_events(const swf_event_list_t *events,
                                      swf_decider_check_problems_t *out)
{
    return check_events(events, out, true);
}

swf_error_t *swf_decider_check_structure(const swf_event_list_t *events,
                                         swf_decider_check_problems_t *out)
{
    return check_events(events, out, false);
}

swf_error_t *swf_decider_check_execution(swf_history_store_t *store, const char *execution_id,
                                         swf_decider_check_problems_t *out)
{
    swf_event_list_t events = {0};
    swf_error_t *err = swf_history_load(store, execution_id, 0, 0, &events);
    if (err == NULL)
        err = swf_decider_check_events(&events, out);
    else
        swf_error_prefix(err, "execution %s", execution_id);
    swf_event_list_free(&events);
    return err;
}

void swf_decider_check_problems_free(swf_decider_check_problems_t *p)
{
    for (size_t i = 0; i < p->count; i++)
        free(p->items[i]);
    free(p->items);
    p->items = NULL;
    p->count = 0;
}
