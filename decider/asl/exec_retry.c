/*
 * exec_retry.c - an error in a state: Retry, then Catch, then the frame
 * fails.
 *
 * An error reaches a state from an activity (ActivityTaskFailed or
 * TimedOut), from its children (a failed branch or iteration), or from its
 * own data processing (a path that selects nothing, an expression that
 * fails). The state's retriers are tried first, in order: the first whose
 * ErrorEquals matches decides, and a retrier that has used its attempts
 * sends the error on to Catch rather than to a later retrier. A retry waits
 * on a timer (its back-off, FULL jitter drawn from the decision's generator,
 * so a replay waits the same) and then enters the state again. A catcher
 * moves the frame to its Next with the error output placed by its own
 * ResultPath or Output (exec_io.c); an error in doing so is not caught
 * again. States.Runtime is neither retried nor caught.
 *
 * The matching rules are AWS's: States.ALL matches everything except
 * States.Runtime and States.DataLimitExceeded, States.TaskFailed everything
 * but the timeouts, and States.Timeout matches a heartbeat timeout too.
 */
#include "decider/asl/exec_internal.h"
#include "protocol/json.h"

static bool error_matches(const char *pattern, const char *error)
{
    if (strcmp(pattern, error) == 0)
        return true;
    if (strcmp(error, ERR_RUNTIME) == 0)
        return false;
    /* AWS: States.ALL "can't catch the States.DataLimitExceeded terminal
     * error"; only its own name does. */
    if (strcmp(error, ERR_DATA_LIMIT) == 0)
        return false;
    if (strcmp(pattern, ERR_ALL) == 0)
        return true;
    if (strcmp(pattern, ERR_TASK_FAILED) == 0)
        return strcmp(error, ERR_TIMEOUT) != 0 && strcmp(error, ERR_HEARTBEAT) != 0;
    if (strcmp(pattern, ERR_TIMEOUT) == 0)
        return strcmp(error, ERR_HEARTBEAT) == 0;
    return false;
}

static bool names_match(json_object *error_equals, const char *error)
{
    size_t n = json_object_array_length(error_equals);
    for (size_t i = 0; i < n; i++) {
        const char *p = json_object_get_string(json_object_array_get_idx(error_equals, i));
        if (p && error_matches(p, error))
            return true;
    }
    return false;
}

bool swf_asl_error_equals(json_object *error_equals, const char *error)
{
    return json_object_is_type(error_equals, json_type_array) && names_match(error_equals, error);
}

/* Retries the state if a retrier takes the error: STEP_BLOCKED on its
 * back-off timer. STEP_DONE when none does. */
static step_t retry(swf_asl_exec_t *ex, frame_t *f, const char *error, const char *why)
{
    json_object *retriers;
    if (!swf_json_get(f->state, "Retry", &retriers) || retriers == NULL)
        return STEP_DONE;
    size_t n = json_object_array_length(retriers);
    if (f->retry_counts == NULL)
        f->retry_counts = xcalloc(n, sizeof(int));
    for (size_t i = 0; i < n; i++) {
        json_object *r = json_object_array_get_idx(retriers, i), *v;
        if (!swf_json_get(r, "ErrorEquals", &v) || !names_match(v, error))
            continue;
        int max = swf_json_get(r, "MaxAttempts", &v) ? json_object_get_int(v) : 3;
        if (f->retry_counts[i] >= max)
            break; /* exhausted: the error goes to Catch, not to later retriers */
        f->retry_counts[i]++;
        f->retry_total++;
        double interval = swf_json_get(r, "IntervalSeconds", &v) ? json_object_get_double(v) : 1;
        double rate = swf_json_get(r, "BackoffRate", &v) ? json_object_get_double(v) : 2.0;
        double delay = interval * pow(rate, f->retry_counts[i] - 1);
        if (swf_json_get(r, "MaxDelaySeconds", &v) && delay > json_object_get_double(v))
            delay = json_object_get_double(v);
        const char *jitter = swf_json_get_string(r, "JitterStrategy");
        if (jitter && strcmp(jitter, "FULL") == 0)
            delay = floor(swf_asl_rng_unit(&ex->rng) * delay * 1000.0) / 1000.0;
        if (delay > 31536000.0 * 100)
            delay = 31536000.0 * 100;
        json_object *data = swf_asl__error_object(error, why);
        swf_json_add(data, "RetryCount", json_object_new_int(f->retry_total));
        swf_asl__trace(ex, f, SWF_ASL_STATE_RETRIED, data);
        json_object_put(data);
        f->wait_seq = swf_asl__timer_start(ex, f, delay, "retry");
        f->phase = PH_RETRY;
        return STEP_BLOCKED;
    }
    return STEP_DONE;
}

/* The catcher that takes the error, or NULL. */
static json_object *catcher_find(frame_t *f, const char *error)
{
    json_object *catchers;
    if (!swf_json_get(f->state, "Catch", &catchers) || catchers == NULL)
        return NULL;
    size_t n = json_object_array_length(catchers);
    for (size_t i = 0; i < n; i++) {
        json_object *c = json_object_array_get_idx(catchers, i), *v;
        if (swf_json_get(c, "ErrorEquals", &v) && names_match(v, error))
            return c;
    }
    return NULL;
}

/* Moves the frame to the catcher's Next with the error output as input. */
static step_t catch_error(swf_asl_exec_t *ex, frame_t *f, json_object *c, const char *error,
                          const char *why)
{
    json_object *eo = swf_asl__error_object(error, why), *out = NULL, *vars = NULL;
    swf_asl_io_t io;
    swf_asl__io_open(&io, ex, f, NULL);
    swf_error_t *err = swf_asl__io_output(
        &io, &(swf_asl_io_out_t){.kind = SWF_ASL_IO_ERROR, .value = eo, .holder = c}, &out, &vars);
    swf_asl__io_close(&io);
    json_object_put(eo);
    const char *next = swf_json_get_string(c, "Next");
    json_object *data = swf_asl__error_object(error, why);
    swf_json_add(data, "Next", jstr(next));
    swf_asl__trace(ex, f, SWF_ASL_STATE_CAUGHT, data);
    json_object_put(data);
    if (err != NULL) {
        /* The catcher's own output or Assign failed: that error is not
         * caught again. */
        step_t s = swf_asl__frame_finish_error(ex, f, swf_error_name(err), swf_error_message(err));
        swf_error_free(err);
        return s;
    }
    swf_asl__io_vars_commit(f, vars);
    json_object_put(f->effective);
    f->effective = NULL;
    json_object_put(f->input);
    f->input = out;
    swf_asl__frame_set_state(ex, f, next);
    return STEP_CONTINUE;
}

step_t swf_asl__state_error(swf_asl_exec_t *ex, frame_t *f, const char *error, const char *cause)
{
    const char *why = cause ? cause : "";
    if (ex->sw)
        error = swf_asl__sw_error_name(error);
    if (strcmp(error, ERR_RUNTIME) != 0) {
        step_t s = retry(ex, f, error, why);
        if (s != STEP_DONE)
            return s;
        json_object *c = catcher_find(f, error);
        if (c != NULL)
            return catch_error(ex, f, c, error, why);
    }
    json_object *data = swf_asl__error_object(error, why);
    swf_asl__trace(ex, f, SWF_ASL_STATE_FAILED, data);
    json_object_put(data);
    return swf_asl__frame_finish_error(ex, f, error, why);
}

step_t swf_asl__state_fail_with(swf_asl_exec_t *ex, frame_t *f, swf_error_t *err)
{
    const char *name = swf_error_name(err) ? swf_error_name(err) : ERR_RUNTIME;
    const char *cause = swf_error_cause(err) ? swf_error_cause(err) : swf_error_message(err);
    step_t s = swf_asl__state_error(ex, f, name, cause);
    swf_error_free(err);
    return s;
}
