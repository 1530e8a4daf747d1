/*
 * interp.c - the interpreter's Serverless Workflow dialect: the pieces of
 * the ASL interpreter that run a translated document (translate.c) and that
 * ASL has no word for. They are compiled into the interpreter's library and
 * see its internals (decider/asl/exec_internal.h); the interpreter calls
 * them only when the execution's definition is a Serverless Workflow
 * document (ex->sw).
 *
 *   - Error names (SPEC 12): what the ASL core raises as States.Runtime or
 *     States.ResultPathMatchFailure (a path that selects nothing, a result
 *     that cannot be placed) is SYS.FilterError, States.Timeout is
 *     SYS.Timeout, and a failure reported without a name (States.TaskFailed)
 *     is SYS.Fail. The renamed errors go through Retry and Catch like any
 *     other, which is what SPEC 6 asks of an action attempt; state filters
 *     sit on states without retriers, so their errors fail the instance.
 *   - Routes: a Parallel marked "swf:ServerlessWorkflow:Route" has one
 *     branch, which ends with {"next", "raw", "value"}: the state goes to
 *     `next` (or its own Next/End when null) with `value` as its result, or,
 *     when `raw`, as its output without its ResultPath and OutputPath.
 */
#include "decider/asl/exec_internal.h"
#include "decider/sw/sw_internal.h"
#include "protocol/json.h"

const char *swf_asl__sw_error_name(const char *error)
{
    if (strcmp(error, ERR_RUNTIME) == 0 || strcmp(error, "States.ResultPathMatchFailure") == 0)
        return "SYS.FilterError";
    if (strcmp(error, ERR_TIMEOUT) == 0 || strcmp(error, ERR_HEARTBEAT) == 0)
        return "SYS.Timeout";
    if (strcmp(error, ERR_TASK_FAILED) == 0)
        return "SYS.Fail";
    return error;
}

bool swf_asl__sw_is_route(const swf_asl_exec_t *ex, const frame_t *f)
{
    return ex->sw && swf_sw__has(f->state, SWF_SW_MARKER ":Route");
}

step_t swf_asl__sw_route(swf_asl_exec_t *ex, frame_t *f, json_object *results)
{
    json_object *r = json_object_array_get_idx(results, 0), *value = NULL, *v;
    const char *next = swf_json_get_string(r, "next");
    if (next == NULL)
        next = swf_json_get_string(f->state, "Next");
    swf_json_get(r, "value", &value);
    if (swf_json_get(r, "raw", &v) && json_object_get_boolean(v))
        return swf_asl__transition(ex, f, next, swf_json_ref(value));
    swf_asl_io_t io;
    swf_asl__io_open(&io, ex, f, NULL);
    step_t s = swf_asl__io_leave(
        &io, &(swf_asl_io_out_t){.kind = SWF_ASL_IO_RESULT, .value = value}, next);
    swf_asl__io_close(&io);
    return s;
}
