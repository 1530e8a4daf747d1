/*
 * exec_io.c - a state's input and output, in either query language.
 *
 * ASL has two ways for a state to read its input and shape its output:
 * JSONPath (InputPath, Parameters, ResultSelector, ResultPath, OutputPath,
 * the *Path forms of numbers, Assign as a payload template) and JSONata
 * (Arguments, Output, Assign and every field an expression over $states).
 * The state handlers (exec_states.c, exec_children.c) and Retry/Catch
 * (exec_retry.c) ask this file for what they need, a state's effective
 * input, its arguments, a number, its items, its output, and never which
 * language the state uses; each function here is the one place where the
 * two differ for its field.
 *
 * The order in which fields are evaluated, and each error message, are as
 * they were when the recorded histories were made: an error ends in a
 * recorded decision (the reason of a failed execution), and an evaluation
 * may draw random numbers, so replay needs the same order.
 */
#include <ctype.h>
#include <errno.h>

#include "decider/asl/choice.h"
#include "decider/asl/exec_internal.h"
#include "decider/asl/jsonata.h"
#include "decider/asl/path.h"
#include "decider/asl/template.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/time.h"

/* ---------------------------------------------------------------- context */

static json_object *context_build(swf_asl_exec_t *ex, frame_t *f, json_object *map_item,
                                  const char *token)
{
    json_object *ctx = json_object_new_object();
    swf_json_add(ctx, "Execution", swf_json_ref(ex->ctx_execution));
    swf_json_add(ctx, "StateMachine", swf_json_ref(ex->ctx_machine));
    json_object *st = json_object_new_object();
    char ts[SWF_TIME_BUF];
    swf_time_format_ms(f->entered_ms, ts);
    swf_json_add(st, "EnteredTime", json_object_new_string(ts));
    swf_json_add(st, "Name", json_object_new_string(f->name));
    swf_json_add(st, "RetryCount", json_object_new_int(f->retry_total));
    swf_json_add(ctx, "State", st);
    if (token != NULL) {
        json_object *task = json_object_new_object();
        swf_json_add(task, "Token", json_object_new_string(token));
        swf_json_add(ctx, "Task", task);
    }
    if (map_item != NULL)
        swf_json_add(ctx, "Map", map_item);
    return ctx;
}

/* The environment of the current state. *ctx is owned by the caller (may be
 * NULL when the state never reads $$). */
static void env_init(swf_asl_exec_t *ex, frame_t *f, swf_asl_env_t *env, json_object **ctx,
                     const char *token)
{
    *ctx = f->info->uses_context ? context_build(ex, f, NULL, token) : NULL;
    env->context = *ctx;
    env->variables = f->vars;
    env->rng = &ex->rng;
}

/* The variables a JSONata expression in frame f sees: the workflow
 * variables and $states {input, context, result?, errorOutput?}. */
static json_object *jsonata_bindings(swf_asl_exec_t *ex, frame_t *f, bool has_result,
                                     json_object *result, json_object *error_output,
                                     json_object *map_item, const char *token)
{
    json_object *b = json_object_new_object();
    /* The decision's generator and time, for $random, $uuid, $shuffle, $now
     * and $millis: both come from the history, so a replay gets the same. */
    ex->jsonata_env = (swf_asl_env_t){.rng = &ex->rng, .now_ms = ex->now_ms};
    json_object_set_userdata(b, &ex->jsonata_env, NULL);
    if (f->vars != NULL) {
        json_object_object_foreach(f->vars, key, val)
            json_object_object_add(b, key, swf_json_ref(val));
    }
    json_object *st = json_object_new_object();
    swf_json_add(st, "input", swf_json_ref(f->input));
    swf_json_add(st, "context", context_build(ex, f, map_item, token));
    if (has_result)
        swf_json_add(st, "result", swf_json_ref(result));
    if (error_output != NULL)
        swf_json_add(st, "errorOutput", swf_json_ref(error_output));
    json_object_object_add(b, "states", st);
    return b;
}

/* ------------------------------------------------------------------ scope */

void swf_asl__io_open(swf_asl_io_t *io, swf_asl_exec_t *ex, frame_t *f, const char *token)
{
    *io = (swf_asl_io_t){.ex = ex, .f = f, .token = token};
}

void swf_asl__io_close(swf_asl_io_t *io)
{
    json_object_put(io->ctx);
    json_object_put(io->bindings);
    io->ctx = io->bindings = NULL;
    io->has_env = false;
}

static const swf_asl_env_t *io_env(swf_asl_io_t *io)
{
    if (!io->has_env) {
        env_init(io->ex, io->f, &io->env, &io->ctx, io->token);
        io->has_env = true;
    }
    return &io->env;
}

static json_object *io_bindings(swf_asl_io_t *io)
{
    if (io->bindings == NULL)
        io->bindings = jsonata_bindings(io->ex, io->f, false, NULL, NULL, NULL, io->token);
    return io->bindings;
}

/* ------------------------------------------------------- JSONPath fields */

/* InputPath: absent is "$", null gives {}. */
static swf_error_t *input_path(frame_t *f, const swf_asl_env_t *env, json_object **out)
{
    json_object *p;
    if (!swf_json_get(f->state, "InputPath", &p)) {
        *out = swf_json_ref(f->input);
        return NULL;
    }
    if (p == NULL) {
        *out = json_object_new_object();
        return NULL;
    }
    return swf_asl_path_eval(json_object_get_string(p), f->input, env, out);
}

/* A payload template field (Parameters, ResultSelector); absent: the value. */
static swf_error_t *template_field(frame_t *f, const char *field, json_object *value,
                                   const swf_asl_env_t *env, json_object **out)
{
    json_object *tmpl;
    if (!swf_json_get(f->state, field, &tmpl)) {
        *out = swf_json_ref(value);
        return NULL;
    }
    return swf_asl_template_eval(tmpl, value, env, out);
}

/* ResultPath (on the raw input) then OutputPath. */
static swf_error_t *result_and_output(frame_t *f, json_object *state, json_object *result,
                                      const swf_asl_env_t *env, json_object **out)
{
    json_object *rp, *merged = NULL, *op;
    swf_error_t *err = NULL;
    *out = NULL;
    if (!swf_json_get(state, "ResultPath", &rp)) {
        merged = swf_json_ref(result);
    } else if (rp == NULL) {
        merged = swf_json_ref(f->input);
    } else {
        err = swf_asl_path_set(json_object_get_string(rp), f->input, result, &merged);
        if (err)
            return err;
    }
    if (!swf_json_get(f->state, "OutputPath", &op)) {
        *out = merged;
        return NULL;
    }
    if (op == NULL) {
        json_object_put(merged);
        *out = json_object_new_object();
        return NULL;
    }
    err = swf_asl_path_eval(json_object_get_string(op), merged, env, out);
    json_object_put(merged);
    return err;
}

/* The variables from the next state on: the current ones with `assigned`
 * over them. A new object; `assigned` is borrowed. */
static json_object *vars_merge(frame_t *f, json_object *assigned)
{
    json_object *merged = json_object_new_object();
    if (f->vars != NULL) {
        json_object_object_foreach(f->vars, key, val)
            json_object_object_add(merged, key, swf_json_ref(val));
    }
    json_object_object_foreach(assigned, key2, val2)
        json_object_object_add(merged, key2, swf_json_ref(val2));
    return merged;
}

/*
 * Assign (workflow variables, JSONPath states): evaluates holder's Assign
 * template with `dollar` as $ and the variables as they were when the state
 * was entered, and returns in *vars the variables to use from the next state
 * on (NULL when holder assigns nothing). Every expression sees the entry
 * values, so {"x.$": "$y", "y.$": "$x"} swaps.
 */
static swf_error_t *assign_eval(frame_t *f, json_object *holder, json_object *dollar,
                                const swf_asl_env_t *env, json_object **vars)
{
    json_object *tmpl, *assigned = NULL;
    *vars = NULL;
    if (!swf_json_get(holder, "Assign", &tmpl) || !json_object_is_type(tmpl, json_type_object))
        return NULL;
    swf_error_t *err = swf_asl_template_eval(tmpl, dollar, env, &assigned);
    if (err != NULL)
        return err;
    *vars = vars_merge(f, assigned);
    json_object_put(assigned);
    return NULL;
}

void swf_asl__io_vars_commit(frame_t *f, json_object *vars)
{
    if (vars == NULL)
        return;
    json_object_put(f->vars);
    f->vars = vars;
}

/* OutputPath on the effective input, for states without a result. */
static swf_error_t *passthrough_output(frame_t *f, json_object *eff, const swf_asl_env_t *env,
                                       json_object **out)
{
    json_object *op;
    if (!swf_json_get(f->state, "OutputPath", &op)) {
        *out = swf_json_ref(eff);
        return NULL;
    }
    if (op == NULL) {
        *out = json_object_new_object();
        return NULL;
    }
    return swf_asl_path_eval(json_object_get_string(op), eff, env, out);
}

/* -------------------------------------------------------- JSONata fields */

/* Evaluates holder[field] (a literal, an expression, or a JSON value with
 * expressions inside). *present is false when the field is absent; an
 * undefined value is an error naming the field. */
static swf_error_t *jsonata_field(json_object *holder, const char *field, json_object *bindings,
                                  json_object **out, bool *present)
{
    json_object *v;
    *out = NULL;
    *present = swf_json_get(holder, field, &v);
    if (!*present)
        return NULL;
    bool defined = true;
    swf_error_t *err = swf_asl_jsonata_template_eval(v, bindings, out, &defined);
    if (err == NULL && !defined)
        err = swf_error_states(ERR_QUERY, "the expression of %s has no value (undefined)", field);
    return err;
}

/* Assign in a JSONata state: new variables from the entry values. */
static swf_error_t *jsonata_assign(frame_t *f, json_object *holder, json_object *bindings,
                                   json_object **vars)
{
    json_object *assigned = NULL;
    bool present;
    *vars = NULL;
    swf_error_t *err = jsonata_field(holder, "Assign", bindings, &assigned, &present);
    if (err != NULL || !present)
        return err;
    if (!json_object_is_type(assigned, json_type_object)) {
        json_object_put(assigned);
        return swf_error_states(ERR_QUERY, "Assign must produce an object");
    }
    *vars = vars_merge(f, assigned);
    json_object_put(assigned);
    return NULL;
}

/* A number field that may be an expression (Seconds, TimeoutSeconds...). */
static swf_error_t *jsonata_number(json_object *holder, const char *field, json_object *bindings,
                                   double *out, bool *present)
{
    json_object *v = NULL;
    swf_error_t *err = jsonata_field(holder, field, bindings, &v, present);
    if (err == NULL && *present) {
        /* The messages are part of recorded decisions: the first one is
         * kept as it was, so that older histories replay. */
        if (!swf_json_is_number(v) || json_object_get_double(v) < 0 ||
            json_object_get_double(v) != floor(json_object_get_double(v)))
            err = swf_error_states(ERR_QUERY, "%s must be a non-negative integer, not %s", field,
                                   swf_json_str(v));
        else if (json_object_get_double(v) > SWF_LIMIT_STATE_SECONDS)
            err = swf_error_states(ERR_QUERY, "%s must be at most %d, not %s", field,
                                   SWF_LIMIT_STATE_SECONDS, swf_json_str(v));
        else
            *out = json_object_get_double(v);
    }
    json_object_put(v);
    return err;
}

/* ------------------------------------------------------------------ input */

swf_error_t *swf_asl__io_input(swf_asl_io_t *io, json_object **eff)
{
    if (io->f->info->jsonata) {
        *eff = swf_json_ref(io->f->input);
        return NULL;
    }
    return input_path(io->f, io_env(io), eff);
}

swf_error_t *swf_asl__io_arguments(swf_asl_io_t *io, json_object *eff, json_object **args)
{
    if (!io->f->info->jsonata)
        return template_field(io->f, "Parameters", eff, io_env(io), args);
    bool present;
    swf_error_t *err = jsonata_field(io->f->state, "Arguments", io_bindings(io), args, &present);
    if (err == NULL && !present)
        *args = swf_json_ref(io->f->input);
    return err;
}

swf_error_t *swf_asl__io_reader_arguments(swf_asl_io_t *io, json_object *eff, json_object *reader,
                                          json_object **args)
{
    json_object *tmpl;
    bool present;
    *args = NULL;
    if (io->f->info->jsonata) {
        swf_error_t *err = jsonata_field(reader, "Arguments", io_bindings(io), args, &present);
        if (err == NULL && !present)
            *args = json_object_new_object();
        return err;
    }
    if (!swf_json_get(reader, "Parameters", &tmpl)) {
        *args = json_object_new_object();
        return NULL;
    }
    return swf_asl_template_eval(tmpl, eff, io_env(io), args);
}

swf_error_t *swf_asl__io_pass_result(swf_asl_io_t *io, json_object *eff, json_object **result)
{
    json_object *v;
    *result = NULL;
    if (io->f->info->jsonata)
        return NULL;
    if (swf_json_get(io->f->state, "Result", &v)) {
        *result = swf_json_ref(v);
        return NULL;
    }
    return template_field(io->f, "Parameters", eff, io_env(io), result);
}

/* ---------------------------------------------------------------- numbers */

/* Reads TimeoutSeconds/HeartbeatSeconds or their *Path forms. */
static swf_error_t *task_seconds(frame_t *f, const char *field, const char *path_field,
                                 const swf_asl_env_t *env, int64_t *out)
{
    json_object *v;
    *out = 0;
    if (swf_json_get(f->state, field, &v)) {
        *out = json_object_get_int64(v);
        return NULL;
    }
    if (!swf_json_get(f->state, path_field, &v))
        return NULL;
    json_object *val = NULL;
    swf_error_t *err = swf_asl_path_eval(json_object_get_string(v), f->input, env, &val);
    if (err)
        return err;
    if (!json_object_is_type(val, json_type_int) || json_object_get_int64(val) <= 0) {
        err = swf_error_states(ERR_RUNTIME, "%s '%s' must select a positive integer, not %s",
                               path_field, json_object_get_string(v), swf_json_str(val));
    } else if (json_object_get_int64(val) > SWF_LIMIT_STATE_SECONDS) {
        err =
            swf_error_states(ERR_RUNTIME, "%s '%s' must select at most %d, not %s", path_field,
                             json_object_get_string(v), SWF_LIMIT_STATE_SECONDS, swf_json_str(val));
    } else {
        *out = json_object_get_int64(val);
    }
    json_object_put(val);
    return err;
}

swf_error_t *swf_asl__io_task_seconds(swf_asl_io_t *io, const char *field, const char *path_field,
                                      int64_t *out)
{
    if (!io->f->info->jsonata)
        return task_seconds(io->f, field, path_field, io_env(io), out);
    double seconds = 0;
    bool present;
    swf_error_t *err = jsonata_number(io->f->state, field, io_bindings(io), &seconds, &present);
    *out = (int64_t)seconds;
    return err;
}

/* Seconds, Timestamp, SecondsPath or TimestampPath of a JSONPath Wait. */
static swf_error_t *wait_seconds_path(swf_asl_io_t *io, json_object *eff, double *seconds)
{
    swf_asl_exec_t *ex = io->ex;
    frame_t *f = io->f;
    const swf_asl_env_t *env = io_env(io);
    json_object *v, *val = NULL;
    swf_error_t *err = NULL;
    if (swf_json_get(f->state, "Seconds", &v)) {
        *seconds = json_object_get_double(v);
    } else if (swf_json_get(f->state, "Timestamp", &v)) {
        swf_time_t t;
        if (swf_time_parse(json_object_get_string(v), &t))
            *seconds = (double)(swf_time_to_ms(t) - ex->now_ms) / 1000.0;
    } else if (swf_json_get(f->state, "SecondsPath", &v)) {
        err = swf_asl_path_eval(json_object_get_string(v), eff, env, &val);
        if (err == NULL) {
            double d = json_object_is_type(val, json_type_int) ? (double)json_object_get_int64(val)
                                                               : json_object_get_double(val);
            if (!swf_json_is_number(val) || !(d >= 0) || d != floor(d))
                err = swf_error_states(ERR_RUNTIME,
                                       "SecondsPath '%s' must select a non-negative integer, "
                                       "not %s",
                                       json_object_get_string(v), swf_json_str(val));
            else if (d > SWF_LIMIT_STATE_SECONDS)
                err = swf_error_states(
                    ERR_RUNTIME, "SecondsPath '%s' must select at most %d, not %s",
                    json_object_get_string(v), SWF_LIMIT_STATE_SECONDS, swf_json_str(val));
            else
                *seconds = d;
        }
    } else if (swf_json_get(f->state, "TimestampPath", &v)) {
        err = swf_asl_path_eval(json_object_get_string(v), eff, env, &val);
        swf_time_t t;
        if (err == NULL) {
            if (json_object_is_type(val, json_type_string) &&
                swf_time_parse(json_object_get_string(val), &t))
                *seconds = (double)(swf_time_to_ms(t) - ex->now_ms) / 1000.0;
            else
                err = swf_error_states(ERR_RUNTIME,
                                       "TimestampPath '%s' must select an RFC 3339 timestamp, "
                                       "not %s",
                                       json_object_get_string(v), swf_json_str(val));
        }
    }
    json_object_put(val);
    return err;
}

/* Seconds or Timestamp of a JSONata Wait. */
static swf_error_t *wait_seconds_jsonata(swf_asl_io_t *io, double *seconds)
{
    json_object *b = io_bindings(io);
    bool present;
    swf_error_t *err = jsonata_number(io->f->state, "Seconds", b, seconds, &present);
    if (err != NULL || present)
        return err;
    json_object *ts = NULL;
    err = jsonata_field(io->f->state, "Timestamp", b, &ts, &present);
    swf_time_t t;
    if (err == NULL && present) {
        if (json_object_is_type(ts, json_type_string) &&
            swf_time_parse(json_object_get_string(ts), &t))
            *seconds = (double)(swf_time_to_ms(t) - io->ex->now_ms) / 1000.0;
        else
            err = swf_error_states(ERR_QUERY, "Timestamp must be an RFC 3339 timestamp, not %s",
                                   swf_json_str(ts));
    }
    json_object_put(ts);
    return err;
}

swf_error_t *swf_asl__io_wait_seconds(swf_asl_io_t *io, json_object *eff, double *seconds)
{
    *seconds = 0;
    if (io->f->info->jsonata)
        return wait_seconds_jsonata(io, seconds);
    return wait_seconds_path(io, eff, seconds);
}

/* Reads an optional non-negative integer field or its *Path form. */
/* Replaces *val, a JSON string, by the number it spells when the whole of it
 * is an integer (or, when decimal, a finite decimal number); leaves it alone
 * otherwise, for the caller to refuse. */
static void string_as_number(json_object **val, bool decimal)
{
    const char *s = json_object_get_string(*val);
    size_t len = (size_t)json_object_get_string_len(*val);
    if (len == 0 || len > 32 || isspace((unsigned char)s[0]))
        return;
    char *end;
    errno = 0;
    json_object *num = NULL;
    if (decimal) {
        double d = strtod(s, &end);
        if (end == s + len && errno == 0 && isfinite(d))
            num = json_object_new_double(d);
    } else {
        long long n = strtoll(s, &end, 10);
        if (end == s + len && errno == 0)
            num = json_object_new_int64(n);
    }
    if (num != NULL) {
        json_object_put(*val);
        *val = num;
    }
}

/* A number of holder (a Map state, or its ReaderConfig): field, or what
 * path_field selects in eff. */
static swf_error_t *map_number(json_object *holder, json_object *eff, const char *field,
                               const char *path_field, const swf_asl_env_t *env, double *out,
                               bool *present)
{
    json_object *v, *val = NULL;
    *present = false;
    if (swf_json_get(holder, field, &v)) {
        *out = json_object_get_double(v);
        *present = true;
        return NULL;
    }
    if (!swf_json_get(holder, path_field, &v))
        return NULL;
    swf_error_t *err = swf_asl_path_eval(json_object_get_string(v), eff, env, &val);
    if (err)
        return err;
    bool is_pct = strstr(field, "Percentage") != NULL;
    /* AWS also takes the number as a JSON string ("1"), recorded: the whole
     * string must be an integer (a decimal for the percentage). */
    if (json_object_is_type(val, json_type_string))
        string_as_number(&val, is_pct);
    bool okv = is_pct ? swf_json_is_number(val) : json_object_is_type(val, json_type_int);
    if (!okv || json_object_get_double(val) < 0 || (is_pct && json_object_get_double(val) > 100))
        err = swf_error_states(
            ERR_RUNTIME, "%s '%s' must select a %s, not %s", path_field, json_object_get_string(v),
            is_pct ? "number from 0 to 100" : "non-negative integer", swf_json_str(val));
    else {
        *out = json_object_get_double(val);
        *present = true;
    }
    json_object_put(val);
    return err;
}

swf_error_t *swf_asl__io_map_number(swf_asl_io_t *io, json_object *eff, const char *field,
                                    const char *path_field, double *out, bool *present)
{
    /* Both languages read these as JSONPath does: a number, or a path. */
    return map_number(io->f->state, eff, field, path_field, io_env(io), out, present);
}

swf_error_t *swf_asl__io_reader_max_items(swf_asl_io_t *io, json_object *eff, json_object *reader,
                                          size_t *limit)
{
    json_object *config = NULL;
    double n = 0;
    bool present = false;
    swf_json_get(reader, "ReaderConfig", &config);
    /* In JSONata MaxItems may be an expression (and there is no MaxItemsPath). */
    swf_error_t *err =
        io->f->info->jsonata
            ? jsonata_number(config, "MaxItems", io_bindings(io), &n, &present)
            : map_number(config, eff, "MaxItems", "MaxItemsPath", io_env(io), &n, &present);
    if (err == NULL && present && n > 0 && n < (double)*limit)
        *limit = (size_t)n;
    return err;
}

swf_error_t *swf_asl__io_batcher_limit(swf_asl_io_t *io, json_object *batcher, const char *field,
                                       const char *path_field, double *out)
{
    frame_t *f = io->f;
    json_object *v, *val = NULL;
    swf_error_t *err = NULL;
    bool present = false;
    *out = 0;
    if (f->info->jsonata) {
        err = jsonata_number(batcher, field, io_bindings(io), out, &present);
    } else if (swf_json_get(batcher, field, &v)) {
        *out = json_object_get_double(v);
    } else if (swf_json_get(batcher, path_field, &v)) {
        err = swf_asl_path_eval(json_object_get_string(v), f->effective, io_env(io), &val);
        if (err == NULL &&
            (!json_object_is_type(val, json_type_int) || json_object_get_int64(val) < 1))
            err = swf_error_states(ERR_RUNTIME, "%s '%s' must select a positive integer, not %s",
                                   path_field, json_object_get_string(v), swf_json_str(val));
        else if (err == NULL)
            *out = json_object_get_double(val);
    }
    json_object_put(val);
    return err;
}

/* ------------------------------------------------------------ Map, batches */

swf_error_t *swf_asl__io_items(swf_asl_io_t *io, json_object *eff, json_object **items)
{
    frame_t *f = io->f;
    json_object *v;
    *items = NULL;
    if (!f->info->jsonata) {
        if (swf_json_get(f->state, "ItemsPath", &v) && v != NULL)
            return swf_asl_path_eval(json_object_get_string(v), eff, io_env(io), items);
        *items = swf_json_ref(eff);
        return NULL;
    }
    bool present;
    swf_error_t *err = jsonata_field(f->state, "Items", io_bindings(io), items, &present);
    if (err == NULL && !present)
        *items = swf_json_ref(f->input);
    if (err == NULL && !json_object_is_type(*items, json_type_array))
        err = swf_error_states(ERR_QUERY, "Items of the Map state '%s' must be an array, not %s",
                               f->name, swf_json_type_name(*items));
    return err;
}

swf_error_t *swf_asl__io_batch_input(swf_asl_io_t *io, json_object *batcher, json_object **out)
{
    json_object *tmpl;
    *out = NULL;
    if (!swf_json_get(batcher, "BatchInput", &tmpl))
        return NULL;
    if (!io->f->info->jsonata)
        return swf_asl_template_eval(tmpl, io->f->effective, io_env(io), out);
    bool defined = true;
    swf_error_t *err = swf_asl_jsonata_template_eval(tmpl, io_bindings(io), out, &defined);
    if (err == NULL && !defined)
        err = swf_error_states(ERR_QUERY, "BatchInput has no value (undefined)");
    return err;
}

swf_error_t *swf_asl__io_item_input(swf_asl_exec_t *ex, frame_t *f, size_t i, json_object *item,
                                    json_object **input)
{
    json_object *sel;
    *input = NULL;
    if (!swf_json_get(f->state, "ItemSelector", &sel))
        swf_json_get(f->state, "Parameters", &sel);
    if (sel == NULL) {
        *input = swf_json_ref(item);
        return NULL;
    }
    json_object *mi = json_object_new_object(), *it = json_object_new_object();
    swf_json_add(it, "Index", json_object_new_int64((int64_t)i));
    swf_json_add(it, "Value", swf_json_ref(item));
    swf_json_add(mi, "Item", it);
    swf_error_t *err;
    if (f->info->jsonata) {
        json_object *b = jsonata_bindings(ex, f, false, NULL, NULL, mi, NULL);
        bool defined = true;
        err = swf_asl_jsonata_template_eval(sel, b, input, &defined);
        if (err == NULL && !defined)
            err = swf_error_states(ERR_QUERY, "ItemSelector has no value (undefined)");
        json_object_put(b);
    } else {
        json_object *ctx = context_build(ex, f, mi, NULL);
        swf_asl_env_t env = {.context = ctx, .variables = f->vars, .rng = &ex->rng};
        err = swf_asl_template_eval(sel, f->effective, &env, input);
        json_object_put(ctx);
    }
    if (err != NULL) {
        json_object_put(*input);
        *input = NULL;
    }
    return err;
}

/* ------------------------------------------------------ Fail and Choice */

/* Error/Cause, or ErrorPath/CausePath (a path or an intrinsic call). */
static swf_error_t *fail_field(frame_t *f, const char *field, const char *path_field,
                               const swf_asl_env_t *env, char **out)
{
    json_object *v, *val = NULL;
    *out = NULL;
    if (swf_json_get(f->state, field, &v)) {
        *out = swf_strdup(json_object_get_string(v));
        return NULL;
    }
    if (!swf_json_get(f->state, path_field, &v))
        return NULL;
    swf_error_t *err = swf_asl_expr_eval(json_object_get_string(v), f->input, env, &val);
    if (err)
        return err;
    if (!json_object_is_type(val, json_type_string))
        err = swf_error_states(ERR_RUNTIME, "%s '%s' must select a string, not %s", path_field,
                               json_object_get_string(v), swf_json_str(val));
    else
        *out = swf_strdup(json_object_get_string(val));
    json_object_put(val);
    return err;
}

/* Error and Cause of a JSONata Fail: both strings when given. */
static swf_error_t *fail_fields_jsonata(swf_asl_io_t *io, char **error, char **cause)
{
    json_object *b = io_bindings(io), *e = NULL, *c = NULL;
    bool pe, pc;
    swf_error_t *err = jsonata_field(io->f->state, "Error", b, &e, &pe);
    if (err == NULL)
        err = jsonata_field(io->f->state, "Cause", b, &c, &pc);
    if (err == NULL && ((pe && !json_object_is_type(e, json_type_string)) ||
                        (pc && !json_object_is_type(c, json_type_string))))
        err = swf_error_states(ERR_QUERY, "Error and Cause must be strings");
    if (err == NULL) {
        *error = pe ? swf_strdup(json_object_get_string(e)) : NULL;
        *cause = pc ? swf_strdup(json_object_get_string(c)) : NULL;
    }
    json_object_put(e);
    json_object_put(c);
    return err;
}

swf_error_t *swf_asl__io_fail_fields(swf_asl_io_t *io, char **error, char **cause)
{
    *error = *cause = NULL;
    swf_error_t *err;
    if (io->f->info->jsonata) {
        err = fail_fields_jsonata(io, error, cause);
    } else {
        err = fail_field(io->f, "Error", "ErrorPath", io_env(io), error);
        if (err == NULL)
            err = fail_field(io->f, "Cause", "CausePath", io_env(io), cause);
    }
    if (err != NULL) {
        free(*error);
        free(*cause);
        *error = *cause = NULL;
    }
    return err;
}

swf_error_t *swf_asl__io_choose(swf_asl_io_t *io, json_object *eff, json_object **rule)
{
    frame_t *f = io->f;
    *rule = NULL;
    if (!f->info->jsonata)
        return swf_asl_choice_eval(f->state, eff, io_env(io), rule);
    json_object *choices = NULL, *b = io_bindings(io);
    swf_error_t *err = NULL;
    swf_json_get(f->state, "Choices", &choices);
    size_t n = json_object_array_length(choices);
    for (size_t i = 0; i < n && err == NULL && *rule == NULL; i++) {
        json_object *r = json_object_array_get_idx(choices, i), *cond = NULL;
        bool present;
        err = jsonata_field(r, "Condition", b, &cond, &present);
        if (err == NULL && !json_object_is_type(cond, json_type_boolean))
            err = swf_error_states(ERR_QUERY,
                                   "the Condition of Choices[%zu] must be a "
                                   "boolean, not %s",
                                   i, swf_json_type_name(cond));
        if (err == NULL && json_object_get_boolean(cond))
            *rule = r;
        json_object_put(cond);
    }
    return err;
}

/* ------------------------------------------------------------------ output */

static swf_error_t *no_choice(frame_t *f)
{
    return swf_error_states(ERR_NO_CHOICE,
                            "no Choice rule matched and there is no Default "
                            "in state '%s'",
                            f->name);
}

/* `field` of the holder when it has one, else of the state (a Choice rule's
 * Output and Assign replace the state's). */
static json_object *holder_of(frame_t *f, json_object *holder, const char *field)
{
    json_object *tmp;
    return holder != NULL && swf_json_get(holder, field, &tmp) ? holder : f->state;
}

static swf_error_t *output_path(swf_asl_io_t *io, const swf_asl_io_out_t *how, json_object **out,
                                json_object **vars)
{
    frame_t *f = io->f;
    const swf_asl_env_t *env = io_env(io);
    json_object *selected = NULL, *rp;
    swf_error_t *err = NULL;
    switch (how->kind) {
    case SWF_ASL_IO_RESULT:
        err = template_field(f, "ResultSelector", how->value, env, &selected);
        if (err == NULL)
            err = assign_eval(f, f->state, selected, env, vars);
        if (err == NULL)
            err = result_and_output(f, f->state, selected, env, out);
        json_object_put(selected);
        break;
    case SWF_ASL_IO_PASS:
        err = assign_eval(f, f->state, how->value, env, vars);
        if (err == NULL)
            err = result_and_output(f, f->state, how->value, env, out);
        break;
    case SWF_ASL_IO_INPUT:
        err = assign_eval(f, holder_of(f, how->holder, "Assign"), how->value, env, vars);
        if (err == NULL && how->no_match)
            err = no_choice(f);
        if (err == NULL)
            err = passthrough_output(f, how->value, env, out);
        break;
    case SWF_ASL_IO_ERROR:
        /* The catcher's ResultPath puts the error output into the input;
         * there is no OutputPath. */
        err = assign_eval(f, how->holder, how->value, env, vars);
        if (err != NULL)
            ;
        else if (!swf_json_get(how->holder, "ResultPath", &rp))
            *out = swf_json_ref(how->value);
        else if (rp == NULL)
            *out = swf_json_ref(f->input);
        else
            err = swf_asl_path_set(json_object_get_string(rp), f->input, how->value, out);
        break;
    }
    return err;
}

static swf_error_t *output_jsonata(swf_asl_io_t *io, const swf_asl_io_out_t *how, json_object **out,
                                   json_object **vars)
{
    frame_t *f = io->f;
    json_object *own = NULL, *b, *fallback = f->input;
    json_object *out_holder = f->state, *assign_holder = f->state;
    switch (how->kind) {
    case SWF_ASL_IO_RESULT:
        b = own = jsonata_bindings(io->ex, f, true, how->value, NULL, NULL, NULL);
        fallback = how->value;
        break;
    case SWF_ASL_IO_ERROR:
        b = own = jsonata_bindings(io->ex, f, false, NULL, how->value, NULL, NULL);
        fallback = how->value;
        out_holder = assign_holder = how->holder;
        break;
    case SWF_ASL_IO_INPUT:
        if (how->no_match)
            return no_choice(f);
        out_holder = holder_of(f, how->holder, "Output");
        assign_holder = holder_of(f, how->holder, "Assign");
        b = io_bindings(io);
        break;
    case SWF_ASL_IO_PASS:
    default:
        b = io_bindings(io);
        break;
    }
    bool present;
    swf_error_t *err = jsonata_field(out_holder, "Output", b, out, &present);
    if (err == NULL && !present)
        *out = swf_json_ref(fallback);
    if (err == NULL)
        err = jsonata_assign(f, assign_holder, b, vars);
    json_object_put(own);
    return err;
}

swf_error_t *swf_asl__io_output(swf_asl_io_t *io, const swf_asl_io_out_t *how, json_object **out,
                                json_object **vars)
{
    *out = *vars = NULL;
    swf_error_t *err =
        io->f->info->jsonata ? output_jsonata(io, how, out, vars) : output_path(io, how, out, vars);
    if (err != NULL) {
        json_object_put(*out);
        json_object_put(*vars);
        *out = *vars = NULL;
    }
    return err;
}

step_t swf_asl__io_leave(swf_asl_io_t *io, const swf_asl_io_out_t *how, const char *next)
{
    json_object *out, *vars;
    swf_error_t *err = swf_asl__io_output(io, how, &out, &vars);
    /* A state's output (the next one's input) past the execution's
     * stateDataLimit fails it, as AWS's 256 KiB quota does. */
    size_t bytes = err == NULL && io->ex->state_data_limit > 0 ? strlen(swf_json_str(out)) : 0;
    if (bytes > (size_t)io->ex->state_data_limit && io->ex->state_data_limit > 0) {
        err = swf_error_states(ERR_DATA_LIMIT,
                               "the state's output is %zu bytes; the limit is %lld "
                               "(SWF_STATE_DATA_LIMIT_BYTES when the execution started)",
                               bytes, (long long)io->ex->state_data_limit);
        json_object_put(out);
        json_object_put(vars);
    }
    if (err != NULL)
        return swf_asl__state_fail_with(io->ex, io->f, err);
    swf_asl__io_vars_commit(io->f, vars);
    return swf_asl__transition(io->ex, io->f, next, out);
}
