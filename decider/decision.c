/*
 * decision.c - one decision task, as both drivers record it.
 *
 * The daemon and `swf run --local` used to build decision tasks each in
 * its own way, and the copies had drifted apart: the daemon closed every
 * open activity whose cancellation was decided and ran the next decision
 * task at once, with "canceled by the decider"; the local driver closed
 * only the activities scheduled in the same task, with "canceled before it
 * started" (untrue in the distributed system, where a worker may have the
 * task already), and answered the rest of the task's activities before the
 * next decision. The daemon's order is the one that the distributed system
 * can keep, so it is the one kept here; the local driver now answers its
 * activities after the decision tasks this builder ran, as a worker would.
 *
 * Nothing here reads a clock or does I/O: the time is the caller's, which
 * is what keeps the events of `swf run --local` (virtual time) and the
 * daemon's (the wall clock) built by the same code. The one exception to
 * "the caller's time" is the development clock of SWF_DEV_TIME_SKIP
 * (swf_decider_decision_skip), derived from the history so that the
 * stateless deciders and swf-history agree on it.
 */
#include "decider/decision.h"

#include "decider/sw/sw.h"
#include "protocol/json.h"

void swf_decider_decision_init(swf_decider_decision_t *b, swf_decider_state_t *st,
                               swf_event_list_t *events, int64_t now_ms, const char *identity)
{
    swf_event_list_clear(events);
    *b = (swf_decider_decision_t){.st = st,
                                  .events = events,
                                  .next_id = swf_asl_exec_last_event_id(st->exec) + 1,
                                  .now_ms = now_ms,
                                  .identity = identity ? identity : ""};
}

int64_t swf_decider_decision_next_id(const swf_decider_decision_t *b)
{
    return b->next_id + (int64_t)b->events->count;
}

void swf_decider_decision_skip(swf_decider_decision_t *b, int64_t wall_ms)
{
    const swf_decider_state_t *st = b->st;
    bool in_flight = st->activities != NULL && json_object_object_length(st->activities) > 0;
    int64_t now = in_flight ? wall_ms + st->clock_offset_ms : st->last_time_ms;
    if (now < st->last_time_ms)
        now = st->last_time_ms; /* never before an event already recorded */
    b->time_skip = true;
    b->wall_ms = wall_ms;
    b->now_ms = now;
    b->offset_ms = now - wall_ms;
}

/* Under time skip: the deadline of what `type` reports (a timer, the
 * execution's timeout), which the clock must have reached; 0: none. */
static int64_t clock_deadline(const swf_decider_decision_t *b, swf_event_type_t type,
                              json_object *attrs)
{
    json_object *v;
    if (type == SWF_EVENT_TIMER_FIRED) {
        const char *tid = swf_json_get_string(attrs, "timerId");
        return tid != NULL && swf_json_get(b->st->timer_fire_ms, tid, &v) ? json_object_get_int64(v)
                                                                          : 0;
    }
    return type == SWF_EVENT_WORKFLOW_EXECUTION_TIMED_OUT ? b->st->deadline_ms : 0;
}

/* Adds one event; a decision event's attributes are the interpreter's,
 * which the clock must leave alone (it checks them on replay). */
static swf_error_t *event_add(swf_decider_decision_t *b, swf_event_type_t type, json_object *attrs,
                              bool decision)
{
    if (b->time_skip && !decision) {
        int64_t deadline = clock_deadline(b, type, attrs);
        if (deadline > b->now_ms) {
            b->now_ms = deadline;
            b->offset_ms = deadline - b->wall_ms;
        }
        if (b->offset_ms != b->st->clock_offset_ms)
            swf_json_add(attrs, "clockOffsetMs", json_object_new_int64(b->offset_ms));
    }
    int64_t id = swf_decider_decision_next_id(b);
    swf_event_t *ev = swf_event_list_push(b->events, type, b->now_ms, attrs);
    ev->id = id;
    return swf_decider_state_apply(b->st, ev);
}

swf_error_t *swf_decider_decision_add(swf_decider_decision_t *b, swf_event_type_t type,
                                      json_object *attrs)
{
    return event_add(b, type, attrs, false);
}

static bool running(const swf_decider_decision_t *b)
{
    return swf_asl_exec_status(b->st->exec) == SWF_ASL_RUNNING;
}

/* The scheduledEventId of the open activity `activity_id`, or 0. */
static int64_t open_activity(const swf_decider_state_t *st, const char *activity_id)
{
    json_object *a, *v;
    if (activity_id == NULL || !swf_json_get(st->activities, activity_id, &a))
        return 0;
    return swf_json_get(a, "s", &v) ? json_object_get_int64(v) : 0;
}

/* Closes the open activities whose cancellation the task decided (the
 * events from `first` on); *closed says whether there were any. */
static swf_error_t *cancellations_close(swf_decider_decision_t *b, size_t first, bool *closed)
{
    swf_error_t *err = NULL;
    size_t end = b->events->count; /* the ActivityTaskCanceled go after */
    for (size_t i = first; err == NULL && i < end; i++) {
        const swf_event_t *ev = &b->events->items[i];
        if (ev->type != SWF_EVENT_ACTIVITY_TASK_CANCEL_REQUESTED)
            continue;
        int64_t sched = open_activity(b->st, swf_json_get_string(ev->attrs, "activityId"));
        if (sched == 0)
            continue;
        json_object *a = json_object_new_object();
        swf_json_add(a, "scheduledEventId", json_object_new_int64(sched));
        swf_json_add(a, "startedEventId", json_object_new_int64(0));
        swf_json_add(a, "details", json_object_new_string(SWF_DECIDER_CANCELED_DETAILS));
        err = swf_decider_decision_add(b, SWF_EVENT_ACTIVITY_TASK_CANCELED, a);
        *closed = true;
    }
    return err;
}

/* One decision task on the execution (one is scheduled). */
static swf_error_t *decision_task(swf_decider_decision_t *b)
{
    int64_t scheduled = b->st->decision_scheduled_id;
    json_object *a = json_object_new_object();
    swf_json_add(a, "scheduledEventId", json_object_new_int64(scheduled));
    swf_json_add(a, "identity", json_object_new_string(b->identity));
    swf_error_t *err = swf_decider_decision_add(b, SWF_EVENT_DECISION_TASK_STARTED, a);
    if (err != NULL)
        return err;
    int64_t started = swf_decider_decision_next_id(b) - 1;
    b->tasks++;
    swf_asl_decisions_t ds = {0};
    err = swf_asl_exec_decide(b->st->exec, &ds);
    if (err != NULL)
        goto done;
    a = json_object_new_object();
    swf_json_add(a, "scheduledEventId", json_object_new_int64(scheduled));
    swf_json_add(a, "startedEventId", json_object_new_int64(started));
    /* A Serverless Workflow instance's routing state after the decision,
     * for the sw_instances projection (decider/sw/README.md). */
    json_object *route = swf_sw_route_state(b->st->exec);
    if (route != NULL)
        swf_json_add(a, "swRoute", route);
    err = swf_decider_decision_add(b, SWF_EVENT_DECISION_TASK_COMPLETED, a);
    int64_t completed = swf_decider_decision_next_id(b) - 1;
    size_t first = b->events->count;
    for (size_t i = 0; err == NULL && i < ds.count; i++) {
        /* The interpreter keeps the same object to check the event against;
         * it ignores the one field an event adds to its decision. */
        a = ds.items[i].attrs;
        ds.items[i].attrs = NULL;
        swf_json_add(a, "decisionTaskCompletedEventId", json_object_new_int64(completed));
        err = event_add(b, ds.items[i].type, a, true);
    }
    bool closed = false;
    if (err == NULL && running(b))
        err = cancellations_close(b, first, &closed);
    if (err == NULL && closed)
        err = swf_decider_decision_add(b, SWF_EVENT_DECISION_TASK_SCHEDULED,
                                       json_object_new_object());
done:
    swf_asl_decisions_free(&ds);
    return err;
}

swf_error_t *swf_decider_decision_run(swf_decider_decision_t *b, bool wake, int max_tasks)
{
    if (!running(b))
        return NULL;
    swf_error_t *err = NULL;
    if (b->st->decision_started_id != 0) {
        /* A decision task left started by a decider that is gone (ours
         * append Started and Completed in one transaction, but a history
         * imported or written by other tools may hold one). */
        json_object *a = json_object_new_object();
        swf_json_add(a, "scheduledEventId", json_object_new_int64(b->st->decision_scheduled_id));
        swf_json_add(a, "startedEventId", json_object_new_int64(b->st->decision_started_id));
        swf_json_add(a, "timeoutType", json_object_new_string("START_TO_CLOSE"));
        err = swf_decider_decision_add(b, SWF_EVENT_DECISION_TASK_TIMED_OUT, a);
        wake = true;
    }
    if (err == NULL && b->st->decision_scheduled_id == 0 && wake)
        err = swf_decider_decision_add(b, SWF_EVENT_DECISION_TASK_SCHEDULED,
                                       json_object_new_object());
    for (int n = 0; err == NULL && n < max_tasks && running(b) && b->st->decision_scheduled_id != 0;
         n++)
        err = decision_task(b);
    return err;
}
