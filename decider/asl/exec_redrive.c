/*
 * exec_redrive.c - redriving an execution that did not succeed, as Step
 * Functions' RedriveExecution does: it goes on from where it stopped, with
 * the work that succeeded kept.
 *
 * A redrive is one event, WorkflowExecutionRedriven, appended to the
 * closed execution's history by the decider (decider/daemon.c, on a
 * signed `redrive` inbox message). Applying it makes the execution RUNNING
 * again; the decision task that follows puts every frame that did not end
 * well back at its state, with that state's input:
 *
 *   - a frame that failed (the top level, whose failure failed the
 *     execution) enters its failed state again, its retries counted anew;
 *   - a frame that waited for an activity or a timer when the execution
 *     timed out or was stopped cancels it (a decision) and enters its state
 *     again;
 *   - a Parallel or Map still running (timed out, stopped) redrives its
 *     branches and iterations that had not ended, and keeps the others;
 *   - a Parallel or Map that failed because a branch or iteration failed
 *     enters again, and runs only the branches and iterations that did not
 *     succeed: the results of the others were kept when it failed
 *     (swf_asl__redrive_memo_save) and are taken instead of running them.
 *
 * A branch or iteration that is run again starts at its StartAt (AWS goes
 * on inside it): only the first level of a Parallel or Map keeps its
 * successes. Everything here happens in decide(), from the events alone,
 * so replay derives the same decisions.
 */
#include "decider/asl/exec_internal.h"
#include "protocol/json.h"

const char *swf_asl_exec_not_redrivable(const swf_asl_exec_t *ex)
{
    switch (ex->status) {
    case SWF_ASL_FAILED:
    case SWF_ASL_TIMED_OUT:
    case SWF_ASL_TERMINATED:
    case SWF_ASL_CANCELED:
        break;
    case SWF_ASL_SUCCEEDED:
        return "the execution succeeded";
    case SWF_ASL_RUNNING:
        return "the execution is running";
    case SWF_ASL_NOT_STARTED:
    default:
        return "the execution has not started";
    }
    if (ex->sw)
        return "a Serverless Workflow execution cannot be redriven";
    if (ex->broken)
        return "the execution failed before its first state (its definition)";
    if (ex->root == NULL)
        return "the execution was canceled";
    if (ex->root->phase == PH_DONE && ex->root->ok)
        return "the execution's states all succeeded";
    return NULL;
}

int64_t swf_asl_exec_redrive_count(const swf_asl_exec_t *ex)
{
    return ex->redrive_count;
}

swf_error_t *swf_asl__redrive_apply(swf_asl_exec_t *ex, const swf_event_t *ev)
{
    const char *why = swf_asl_exec_not_redrivable(ex);
    if (why != NULL)
        return swf_error_new(SWF_E_INPUT, NULL, "event %lld (WorkflowExecutionRedriven): %s",
                             (long long)ev->id, why);
    ex->status = SWF_ASL_RUNNING;
    free(ex->error);
    free(ex->cause);
    ex->error = ex->cause = NULL;
    json_object_put(ex->output);
    ex->output = NULL;
    ex->close_decided = false;
    ex->cancel_requested = false;
    ex->redrive_count++;
    ex->redrive_ms = ev->time_ms;
    ex->redrive_pending = true;
    return NULL;
}

static void redrive_frame(swf_asl_exec_t *ex, frame_t *f)
{
    if (f == NULL || f->dead)
        return;
    switch (f->phase) {
    case PH_DONE: {
        if (f->ok)
            return;
        json_object *memo = f->redrive_memo;
        f->redrive_memo = NULL;
        free(f->error);
        free(f->cause);
        f->error = f->cause = NULL;
        swf_asl__frame_set_state(ex, f, f->name);
        f->redrive_memo = memo;
        f->redriving = memo != NULL;
        break;
    }
    case PH_ACTIVITY:
    case PH_TIMER:
    case PH_RETRY:
        swf_asl__frame_drop_wait(ex, f);
        swf_asl__frame_set_state(ex, f, f->name);
        break;
    case PH_CHILDREN:
        for (size_t i = 0; i < f->nchildren; i++)
            redrive_frame(ex, f->children[i]);
        break;
    case PH_ENTER:
    case PH_SWEVENT:
        break;
    }
    swf_asl__enqueue(ex, f);
}

void swf_asl__redrive(swf_asl_exec_t *ex)
{
    ex->redrive_pending = false;
    redrive_frame(ex, ex->root);
}

void swf_asl__redrive_child_ok(frame_t *f, size_t index)
{
    if (f->child_ok == NULL)
        f->child_ok = xcalloc(f->nchildren, sizeof(bool));
    f->child_ok[index] = true;
}

void swf_asl__redrive_memo_save(frame_t *f)
{
    json_object_put(f->redrive_memo);
    f->redrive_memo = json_object_new_array_ext((int)f->nchildren);
    for (size_t i = 0; i < f->nchildren; i++) {
        json_object *kept = NULL;
        if (f->child_ok != NULL && f->child_ok[i]) {
            kept = json_object_new_object();
            json_object_object_add(kept, "ok", swf_json_ref(f->results[i]));
        }
        json_object_array_add(f->redrive_memo, kept);
    }
}

bool swf_asl__redrive_memo_take(frame_t *f, size_t i, json_object **result)
{
    json_object *kept, *r;
    if (!f->redriving || f->redrive_memo == NULL || i >= json_object_array_length(f->redrive_memo))
        return false;
    kept = json_object_array_get_idx(f->redrive_memo, i);
    if (kept == NULL || !json_object_object_get_ex(kept, "ok", &r))
        return false;
    *result = swf_json_ref(r);
    swf_asl__redrive_child_ok(f, i);
    return true;
}
