/*
 * exec_states.c - what entering a state does: Pass, Task, Choice, Wait,
 * Succeed and Fail (Parallel and Map, which run children, are in
 * exec_children.c).
 *
 * A handler runs when a frame enters its state, and either moves the frame
 * on (STEP_CONTINUE), finishes it (STEP_DONE), or makes a decision and waits
 * for its answer (STEP_BLOCKED: a Task schedules an activity, a Wait starts
 * a timer). The answer comes back through the core (exec.c), which calls
 * swf_asl__state_result, swf_asl__wait_fired or, for an error, Retry/Catch
 * (exec_retry.c).
 *
 * Handlers read their fields through the scope of exec_io.c and never test
 * the state's query language: the order of the calls below is the order in
 * which a state's fields are evaluated in both.
 */
#include <assert.h>

#include "decider/asl/exec_internal.h"
#include "decider/asl/resource.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/task_list.h"
#include "protocol/token.h"

static const char *next_of(frame_t *f)
{
    return swf_json_get_string(f->state, "Next");
}

static step_t enter_pass(swf_asl_exec_t *ex, frame_t *f)
{
    swf_asl_io_t io;
    json_object *eff = NULL, *result = NULL;
    swf_asl__io_open(&io, ex, f, NULL);
    swf_error_t *err = swf_asl__io_input(&io, &eff);
    if (err == NULL)
        err = swf_asl__io_pass_result(&io, eff, &result);
    json_object_put(eff);
    step_t s;
    if (err != NULL)
        s = swf_asl__state_fail_with(ex, f, err);
    else
        s = swf_asl__io_leave(&io, &(swf_asl_io_out_t){.kind = SWF_ASL_IO_PASS, .value = result},
                              next_of(f));
    json_object_put(result);
    swf_asl__io_close(&io);
    return s;
}

/* The task list of a Task state (or of a Map's ItemReader: holder), by the
 * rule its execution recorded (resource.h); one swf cannot serve fails the
 * state (validation refuses such a definition first). */
static swf_error_t *task_list_of(swf_asl_exec_t *ex, frame_t *f, json_object *holder,
                                 const char *resource, char *list, size_t size)
{
    if (ex->task_list_rule < SWF_TASK_LIST_RULE) {
        swf_asl_resource_task_list(resource, list, size);
        return NULL;
    }
    swf_error_t *err = swf_asl_task_list(holder, f->info->jsonata, ex->task_list_map, list, size);
    if (err == NULL)
        return NULL;
    swf_error_t *s = swf_error_states(ERR_RUNTIME, "%s", swf_error_message(err));
    swf_error_free(err);
    return s;
}

step_t swf_asl__activity_schedule(swf_asl_exec_t *ex, frame_t *f, json_object *holder,
                                  json_object *params, char *token_buf, int64_t timeout,
                                  int64_t heartbeat)
{
    const char *resource = swf_json_get_string(holder, "Resource");
    int64_t seq = ex->last_seq + 1;
    char activity_id[32];
    snprintf(activity_id, sizeof(activity_id), "%lld", (long long)seq);
    swf_error_t *err = NULL;
    size_t bytes = strlen(swf_json_str(params));
    if (bytes > SWF_LIMIT_TASK_INPUT_BYTES)
        err = swf_error_states(ERR_DATA_LIMIT,
                               "the task's input is %zu bytes; an activity task carries at most %u",
                               bytes, SWF_LIMIT_TASK_INPUT_BYTES);
    state_info_t *info = (state_info_t *)f->info;
    /* A Map's ResultWriter has its own task list (the state's is its reader's). */
    json_object *w = NULL;
    bool writer = swf_json_get(f->state, "ResultWriter", &w) && w == holder;
    json_object **type_slot = writer ? &info->writer_activity_type : &info->activity_type;
    json_object **list_slot = writer ? &info->writer_task_list : &info->task_list;
    char list[SWF_TASK_LIST_BYTES];
    if (err == NULL && *type_slot == NULL)
        err = task_list_of(ex, f, holder, resource, list, sizeof(list));
    if (err != NULL) {
        json_object_put(params);
        free(token_buf);
        return swf_asl__state_fail_with(ex, f, err);
    }
    json_object_put(f->effective);
    f->effective = params;
    int64_t got = swf_asl__waiter_add(ex, W_ACTIVITY, f);
    assert(got == seq);
    (void)got;
    if (*type_slot == NULL) {
        *type_slot = json_object_new_object();
        swf_json_add(*type_slot, "name", json_object_new_string(list));
        swf_json_add(*type_slot, "version", json_object_new_string("1"));
        *list_slot = json_object_new_object();
        /* The execution's prefix (swf run --dev's own task lists) goes
         * before the list: the activity type stays the resource's. */
        char *prefixed = xprintf("%s%s", ex->task_list_prefix ? ex->task_list_prefix : "", list);
        swf_json_add(*list_slot, "name", json_object_new_string(prefixed));
        free(prefixed);
    }
    json_object *a = json_object_new_object();
    swf_json_add(a, "activityId", json_object_new_string(activity_id));
    swf_json_add(a, "activityType", swf_json_ref(*type_slot));
    swf_json_add(a, "taskList", swf_json_ref(*list_slot));
    swf_json_add(a, "input", swf_json_ref(params));
    json_object *c = swf_asl__control_new(f);
    swf_json_add(c, "attempt", json_object_new_int(f->retry_total));
    swf_json_add(c, "resource", jstr(resource));
    if (token_buf != NULL)
        swf_json_add(c, "token", json_object_new_string(token_buf));
    free(token_buf);
    swf_json_add(a, "control", c);
    if (timeout > 0)
        swf_json_add(a, "startToCloseTimeout", json_object_new_int64(timeout));
    if (heartbeat > 0)
        swf_json_add(a, "heartbeatTimeout", json_object_new_int64(heartbeat));
    swf_asl__decisions_push(ex->out, SWF_EVENT_ACTIVITY_TASK_SCHEDULED, a);
    f->wait_seq = seq;
    f->phase = PH_ACTIVITY;
    return STEP_BLOCKED;
}

/* The activity's id is the sequence number it will get. A Task whose
 * Resource ends in .waitForTaskToken hands $$.Task.Token to someone else:
 * the same signed token a worker gets (protocol/KAFKA.md). */
static step_t enter_task(swf_asl_exec_t *ex, frame_t *f)
{
    const char *resource = swf_json_get_string(f->state, "Resource");
    bool token = resource && strstr(resource, ".waitForTaskToken") != NULL;
    int64_t seq = ex->last_seq + 1;
    char activity_id[32];
    snprintf(activity_id, sizeof(activity_id), "%lld", (long long)seq);
    char *token_buf =
        token ? swf_token_make(ex->token_secret ? ex->token_secret : SWF_TOKEN_DEV_SECRET,
                               ex->execution_id, activity_id)
              : NULL;
    swf_asl_io_t io;
    json_object *eff = NULL, *params = NULL;
    int64_t timeout = 0, heartbeat = 0;
    swf_asl__io_open(&io, ex, f, token_buf);
    swf_error_t *err = swf_asl__io_input(&io, &eff);
    if (err == NULL)
        err = swf_asl__io_arguments(&io, eff, &params);
    if (err == NULL)
        err = swf_asl__io_task_seconds(&io, "TimeoutSeconds", "TimeoutSecondsPath", &timeout);
    if (err == NULL)
        err = swf_asl__io_task_seconds(&io, "HeartbeatSeconds", "HeartbeatSecondsPath", &heartbeat);
    swf_asl__io_close(&io);
    json_object_put(eff);
    if (err != NULL) {
        json_object_put(params);
        free(token_buf);
        return swf_asl__state_fail_with(ex, f, err);
    }
    return swf_asl__activity_schedule(ex, f, f->state, params, token_buf, timeout, heartbeat);
}

static step_t enter_choice(swf_asl_exec_t *ex, frame_t *f)
{
    swf_asl_io_t io;
    json_object *eff = NULL, *rule = NULL;
    swf_asl__io_open(&io, ex, f, NULL);
    swf_error_t *err = swf_asl__io_input(&io, &eff);
    if (err == NULL)
        err = swf_asl__io_choose(&io, eff, &rule);
    step_t s;
    if (err != NULL) {
        s = swf_asl__state_fail_with(ex, f, err);
    } else {
        const char *next =
            rule ? swf_json_get_string(rule, "Next") : swf_json_get_string(f->state, "Default");
        swf_asl_io_out_t how = {
            .kind = SWF_ASL_IO_INPUT, .value = eff, .holder = rule, .no_match = next == NULL};
        s = swf_asl__io_leave(&io, &how, next);
    }
    json_object_put(eff);
    swf_asl__io_close(&io);
    return s;
}

static step_t enter_wait(swf_asl_exec_t *ex, frame_t *f)
{
    swf_asl_io_t io;
    json_object *eff = NULL;
    double seconds = 0;
    swf_asl__io_open(&io, ex, f, NULL);
    swf_error_t *err = swf_asl__io_input(&io, &eff);
    if (err == NULL)
        err = swf_asl__io_wait_seconds(&io, eff, &seconds);
    swf_asl__io_close(&io);
    if (err != NULL) {
        json_object_put(eff);
        return swf_asl__state_fail_with(ex, f, err);
    }
    json_object_put(f->effective);
    f->effective = eff;
    f->wait_seq = swf_asl__timer_start(ex, f, seconds, "wait");
    f->phase = PH_TIMER;
    return STEP_BLOCKED;
}

step_t swf_asl__wait_fired(swf_asl_exec_t *ex, frame_t *f)
{
    swf_asl_io_t io;
    swf_asl__io_open(&io, ex, f, NULL);
    step_t s = swf_asl__io_leave(
        &io, &(swf_asl_io_out_t){.kind = SWF_ASL_IO_INPUT, .value = f->effective}, next_of(f));
    swf_asl__io_close(&io);
    return s;
}

static step_t enter_succeed(swf_asl_exec_t *ex, frame_t *f)
{
    swf_asl_io_t io;
    json_object *eff = NULL;
    swf_asl__io_open(&io, ex, f, NULL);
    swf_error_t *err = swf_asl__io_input(&io, &eff);
    step_t s;
    if (err != NULL)
        s = swf_asl__state_fail_with(ex, f, err);
    else
        s = swf_asl__io_leave(&io, &(swf_asl_io_out_t){.kind = SWF_ASL_IO_INPUT, .value = eff},
                              NULL);
    json_object_put(eff);
    swf_asl__io_close(&io);
    return s;
}

static step_t enter_fail(swf_asl_exec_t *ex, frame_t *f)
{
    swf_asl_io_t io;
    char *error = NULL, *cause = NULL;
    swf_asl__io_open(&io, ex, f, NULL);
    swf_error_t *err = swf_asl__io_fail_fields(&io, &error, &cause);
    swf_asl__io_close(&io);
    if (err != NULL)
        return swf_asl__state_fail_with(ex, f, err);
    json_object *data = swf_asl__error_object(error ? error : "", cause);
    swf_asl__trace(ex, f, SWF_ASL_STATE_FAILED, data);
    json_object_put(data);
    step_t s = swf_asl__frame_finish_error(ex, f, error ? error : "", cause);
    free(error);
    free(cause);
    return s;
}

step_t swf_asl__state_result(swf_asl_exec_t *ex, frame_t *f, json_object *result)
{
    swf_asl_io_t io;
    swf_asl__io_open(&io, ex, f, NULL);
    step_t s = swf_asl__io_leave(
        &io, &(swf_asl_io_out_t){.kind = SWF_ASL_IO_RESULT, .value = result}, next_of(f));
    swf_asl__io_close(&io);
    return s;
}

step_t swf_asl__state_enter(swf_asl_exec_t *ex, frame_t *f)
{
    f->entered_ms = ex->now_ms;
    swf_asl__trace(ex, f, SWF_ASL_STATE_ENTERED, f->input);
    switch (f->info->type) {
    case ST_PASS:
        return enter_pass(ex, f);
    case ST_TASK:
        return enter_task(ex, f);
    case ST_CHOICE:
        return enter_choice(ex, f);
    case ST_WAIT:
        return enter_wait(ex, f);
    case ST_SUCCEED:
        return enter_succeed(ex, f);
    case ST_FAIL:
        return enter_fail(ex, f);
    case ST_PARALLEL:
        return swf_asl__parallel_enter(ex, f);
    case ST_MAP:
        return swf_asl__map_enter(ex, f);
    }
    return STEP_DONE;
}
