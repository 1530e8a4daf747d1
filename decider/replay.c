/*
 * replay.c - folding a recorded history through the interpreter, as a
 * live decider did.
 *
 * The fold is the interpreter's own: swf_asl_exec_apply checks every
 * recorded decision against the one it derives, so this file adds no
 * checking of its own and cannot drift from what a live decider does. The
 * one thing it does besides applying events is to ask for a decision task's
 * decisions early (swf_asl_exec_decide right after DecisionTaskStarted, as
 * the live decider does) when the caller wants to see them, and only when
 * the history goes on with DecisionTaskCompleted: a task that timed out
 * decided nothing, and deciding it anyway would move the machine where the
 * recorded execution did not go.
 *
 * The definition can be substituted (`swf replay --definition`): the
 * WorkflowExecutionStarted event is replayed with a copy of its attributes
 * in which only "definition" differs; the history itself is not touched.
 */
#include "decider/replay.h"

#include <string.h>

#include "protocol/json.h"
#include "protocol/token.h"

/* A copy of WorkflowExecutionStarted's attributes with another definition:
 * values are immutable and shared, so the members are referenced, not
 * copied. */
static json_object *started_attrs_with(json_object *attrs, json_object *definition)
{
    json_object *o = json_object_new_object();
    json_object_object_foreach(attrs, key, val)
    {
        if (strcmp(key, "definition") != 0)
            json_object_object_add(o, key, swf_json_ref(val));
    }
    json_object_object_add(o, "definition", swf_json_ref(definition));
    return o;
}

swf_error_t *swf_decider_replay_run(const swf_event_list_t *events,
                                    const swf_decider_replay_options_t *opt,
                                    swf_decider_replay_result_t *res)
{
    memset(res, 0, sizeof(*res));
    if (events->count == 0 || events->items[0].type != SWF_EVENT_WORKFLOW_EXECUTION_STARTED)
        return swf_error_new(SWF_E_INPUT, NULL,
                             "the history does not start with WorkflowExecutionStarted");
    if (opt->until_event_id < 0 || opt->until_event_id > (int64_t)events->count)
        return swf_error_new(SWF_E_INPUT, NULL, "--until %lld: the history has events 1 to %zu",
                             (long long)opt->until_event_id, events->count);
    size_t n = opt->until_event_id > 0 ? (size_t)opt->until_event_id : events->count;

    swf_asl_exec_t *ex = swf_asl_exec_new();
    res->exec = ex;
    swf_asl_exec_set_token_secret(ex, swf_token_secret_env());
    if (opt->trace != NULL)
        swf_asl_exec_set_trace(ex, opt->trace, opt->trace_ctx);
    if (opt->map_trace != NULL)
        swf_asl_exec_set_map_trace(ex, opt->map_trace, opt->map_trace_ctx);

    swf_asl_decisions_t derived = {0};
    size_t task_from = 0;
    int64_t closed_at = 0; /* the id of the event that closed the execution */
    swf_error_t *err = NULL;
    for (size_t i = 0; i < n && err == NULL; i++) {
        const swf_event_t *ev = &events->items[i];
        /* Nothing happens to a closed execution: an event after its close
         * is a history no engine wrote (the interpreter would pass over it
         * and the report would say all is well). */
        if (closed_at > 0 && ev->type == SWF_EVENT_WORKFLOW_EXECUTION_REDRIVEN) {
            closed_at = 0; /* it runs again (the interpreter says whether it may) */
        } else if (closed_at > 0) {
            err = swf_error_new(
                SWF_E_INPUT, NULL, "event %lld (%s) comes after the execution closed at event %lld",
                (long long)ev->id, swf_event_type_name(ev->type), (long long)closed_at);
            break;
        }
        if (swf_event_type_is_close(ev->type))
            closed_at = ev->id;
        if (i == 0 && opt->definition != NULL) {
            swf_event_t sub = *ev;
            sub.attrs = started_attrs_with(ev->attrs, opt->definition);
            err = swf_asl_exec_apply(ex, &sub);
            json_object_put(sub.attrs);
        } else {
            err = swf_asl_exec_apply(ex, ev);
        }
        if (err != NULL)
            break;
        res->events_applied++;
        if (ev->type == SWF_EVENT_DECISION_TASK_COMPLETED)
            res->decision_tasks++;
        else if (swf_event_type_is_decision(ev->type))
            res->decisions++;
        bool completes =
            i + 1 < events->count && events->items[i + 1].type == SWF_EVENT_DECISION_TASK_COMPLETED;
        if (ev->type == SWF_EVENT_DECISION_TASK_STARTED && opt->task != NULL && completes) {
            swf_asl_decisions_clear(&derived);
            err = swf_asl_exec_decide(ex, &derived);
            if (err != NULL)
                break;
            opt->task(opt->task_ctx, events, task_from, i, res->decision_tasks + 1, &derived);
            task_from = i + 1;
        }
    }
    /* A history cut short by --until may stop between a task and its
     * decisions: only a whole history must not miss any. */
    if (err == NULL && n == events->count)
        err = swf_asl_exec_check_end(ex);
    res->error = err;
    swf_asl_decisions_free(&derived);
    return NULL;
}

void swf_decider_replay_result_free(swf_decider_replay_result_t *res)
{
    swf_asl_exec_free(res->exec);
    swf_error_free(res->error);
    memset(res, 0, sizeof(*res));
}
