/*
 * teststate.c - TestState: one state run by the interpreter, in-process,
 * with no side effect (no Kafka, no history kept, nothing in PostgreSQL).
 *
 * The state (the definition, or the state `stateName` of a whole machine)
 * becomes the StartAt of a small machine run by `swf run --local`'s driver
 * (decider/local.h) on a history in memory: every state it may go to (Next,
 * Default, each Choice's Next, each catcher's Next) is a Succeed state of
 * its own under a name of swf's, so the machine ends right after the state
 * and its output is the state's output. The interpreter's trace of the
 * state (decider/asl/exec.h) says what happened first after it was
 * entered: it exited (SUCCEEDED, nextState the state entered after it), a
 * retrier took the error (RETRIABLE), a catcher did (CAUGHT_ERROR), or it
 * failed (FAILED). Each retrier may retry once at most, and
 * stateConfiguration.retrierRetryCount counts as attempts already made, so
 * a run is always short.
 *
 * A Task runs no activity: it needs `mock` (result or errorOutput), which
 * answers it as a worker would; without one the answer is
 * ValidationException (api/README.md). A Parallel or Map with a mock is run
 * as a Task whose result is the mock (AWS likewise takes the mock as the
 * state's result); without one it runs for real, unless a Task is inside.
 *
 * inspectionLevel DEBUG (and TRACE, which adds nothing here: swf has no
 * HTTP Task, whose request and response TRACE shows) returns the data at
 * each step of a JSONPath state's processing. Each is computed by the
 * interpreter too, as the output of a Pass state that does that step
 * alone: InputPath; InputPath and Parameters; the result's ResultSelector
 * (as a Pass's Parameters); the result put at ResultPath in the input.
 */
#include "api/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/asl/exec.h"
#include "decider/local.h"
#include "decider/replay.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/time.h"

#define INPUT_BYTES (256 * 1024) /* AWS's quota for an input or a result */
#define TEST_ID "teststate"
#define MOCK_RESOURCE "arn:aws:states:::activity:teststate"

/* What the trace of the tested state showed. */
typedef struct watch {
    const char *state;
    bool entered;
    int kind;          /* the first trace after the entry, -1: none */
    json_object *data; /* its data (a reference) */
    char *next;        /* the first other state entered at the top level */
} watch_t;

static void on_trace(void *ctx, const swf_asl_trace_t *t)
{
    watch_t *w = ctx;
    if (t->path[0] != '\0')
        return;
    bool self = strcmp(t->state, w->state) == 0;
    if (self && !w->entered && t->kind == SWF_ASL_STATE_ENTERED) {
        w->entered = true;
    } else if (self && w->entered && w->kind < 0 && t->kind != SWF_ASL_STATE_ENTERED) {
        w->kind = (int)t->kind;
        w->data = swf_json_ref(t->data);
    } else if (!self && w->entered && w->next == NULL && t->kind == SWF_ASL_STATE_ENTERED) {
        w->next = strdup(t->state);
    }
}

/* Runs machine on input with mocks (may be NULL) to its end in memory;
 * with w, the trace of its run is watched. */
static swf_error_t *run(json_object *machine, json_object *input, json_object *mocks, watch_t *w,
                        swf_local_result_t *res)
{
    memset(res, 0, sizeof(*res));
    swf_history_store_t *store = swf_history_mem_new();
    swf_local_options_t opt = {.definition = machine,
                               .input = input,
                               .mocks = mocks,
                               .execution_id = TEST_ID,
                               .start_ms = swf_time_now_ms(),
                               .trusted = true};
    swf_error_t *err = swf_local_run(&opt, store, res);
    if (err == NULL && w != NULL) {
        swf_event_list_t events = {0};
        swf_decider_replay_result_t r = {0};
        swf_decider_replay_options_t ro = {.trace = on_trace, .trace_ctx = w};
        err = swf_history_load(store, TEST_ID, 0, 0, &events);
        if (err == NULL)
            err = swf_decider_replay_run(&events, &ro, &r);
        swf_decider_replay_result_free(&r);
        swf_event_list_free(&events);
    }
    swf_history_store_free(store);
    return err;
}

/* A machine of one state, `name`, ending there (the caller's, taken). */
static json_object *machine_of(const char *name, json_object *state, json_object *states_extra,
                               const char *query_language)
{
    json_object *m = json_object_new_object(), *states = json_object_new_object();
    if (query_language != NULL)
        swf_json_add(m, "QueryLanguage", json_object_new_string(query_language));
    swf_json_add(m, "StartAt", json_object_new_string(name));
    swf_json_add(states, name, state);
    if (states_extra != NULL) {
        json_object_object_foreach(states_extra, k, v)
        {
            swf_json_add(states, k, swf_json_ref(v));
        }
    }
    swf_json_add(m, "States", states);
    return m;
}

/* The output of a Pass state made of the given members of `from` (and
 * `extra`, taken) on input: one processing step alone. NULL when it fails
 * or the state has none of them. */
static json_object *step_output(json_object *from, const char *const *keys, json_object *extra,
                                json_object *input, const char *ql)
{
    json_object *pass = json_object_new_object(), *v;
    swf_json_add(pass, "Type", json_object_new_string("Pass"));
    bool any = extra != NULL;
    for (size_t i = 0; keys[i] != NULL; i++) {
        if (swf_json_get(from, keys[i], &v)) {
            swf_json_add(pass, strcmp(keys[i], "ResultSelector") == 0 ? "Parameters" : keys[i],
                         swf_json_ref(v));
            any = true;
        }
    }
    if (extra != NULL) {
        json_object_object_foreach(extra, k, ev)
        {
            swf_json_add(pass, k, swf_json_ref(ev));
        }
        json_object_put(extra);
    }
    swf_json_add(pass, "End", json_object_new_boolean(1));
    json_object *out = NULL;
    if (any) {
        json_object *m = machine_of("Step", pass, NULL, ql);
        swf_local_result_t res;
        swf_error_t *err = run(m, input, NULL, NULL, &res);
        if (err == NULL && res.status == SWF_ASL_SUCCEEDED)
            out = swf_json_ref(res.output);
        swf_error_free(err);
        swf_local_result_free(&res);
        json_object_put(m);
    } else {
        json_object_put(pass);
        out = swf_json_ref(input);
    }
    return out;
}

static void text_add(json_object *o, const char *key, json_object *v)
{
    swf_json_add(o, key, json_object_new_string(swf_json_str(v)));
}

/* DEBUG's inspectionData of a JSONPath state (input, afterInputPath,
 * afterParameters, result, afterResultSelector, afterResultPath); result
 * is the mock's, the Pass state's own, or NULL. */
static json_object *inspection(json_object *state, json_object *input, json_object *result,
                               bool jsonata)
{
    json_object *d = json_object_new_object();
    text_add(d, "input", input);
    const char *type = swf_json_get_string(state, "Type");
    if (jsonata || strcmp(type, "Fail") == 0) {
        if (result != NULL)
            text_add(d, "result", result);
        return d;
    }
    static const char *const ip[] = {"InputPath", NULL};
    static const char *const ipp[] = {"InputPath", "Parameters", NULL};
    static const char *const rs[] = {"ResultSelector", NULL};
    json_object *after_ip = step_output(state, ip, NULL, input, NULL), *v;
    if (after_ip == NULL)
        return d;
    text_add(d, "afterInputPath", after_ip);
    json_object *after_p = NULL;
    if (strcmp(type, "Map") != 0 && swf_json_get(state, "Parameters", &v)) {
        after_p = step_output(state, ipp, NULL, input, NULL);
        if (after_p != NULL)
            text_add(d, "afterParameters", after_p);
    }
    json_object *res = swf_json_ref(result);
    if (res == NULL && strcmp(type, "Pass") == 0)
        res = swf_json_get(state, "Result", &v) ? swf_json_ref(v)
                                                : swf_json_ref(after_p ? after_p : after_ip);
    if (res != NULL) {
        text_add(d, "result", res);
        json_object *sel = swf_json_get(state, "ResultSelector", &v)
                               ? step_output(state, rs, NULL, res, NULL)
                               : swf_json_ref(res);
        if (sel != NULL && swf_json_get(state, "ResultSelector", &v))
            text_add(d, "afterResultSelector", sel);
        if (sel != NULL) {
            static const char *const rp[] = {"ResultPath", NULL};
            json_object *extra = json_object_new_object();
            swf_json_add(extra, "Result", swf_json_ref(sel));
            json_object *placed = step_output(state, rp, extra, input, NULL);
            if (placed != NULL)
                text_add(d, "afterResultPath", placed);
            json_object_put(placed);
        }
        json_object_put(sel);
    }
    json_object_put(res);
    json_object_put(after_p);
    json_object_put(after_ip);
    return d;
}

/* ---- the request ------------------------------------------------------------ */

typedef struct test {
    json_object *state;   /* the state as given */
    const char *name;     /* its name */
    const char *ql;       /* the machine's QueryLanguage, or NULL */
    json_object *holder;  /* what owns state and name (the parsed definition) */
    json_object *input;   /* the input */
    json_object *mocked;  /* mock.result, or NULL */
    const char *m_error;  /* mock.errorOutput */
    const char *m_cause;  /* may be NULL */
    bool has_mock;        /* result or errorOutput */
    int64_t retry_count;  /* stateConfiguration.retrierRetryCount */
    const char *level;    /* INFO, DEBUG, TRACE */
    json_object *targets; /* stub name -> the state it stands for */
} test_t;

static swf_error_t *json_member(json_object *in, const char *key, size_t max, const char *aws_error,
                                json_object **out)
{
    const char *text;
    *out = NULL;
    swf_error_t *err = swf_api__str(in, key, false, max, &text);
    if (err != NULL || text == NULL)
        return err;
    err = swf_json_parse(text, strlen(text), max, out);
    if (err != NULL) {
        swf_error_t *e = swf_api__err(aws_error, "%s is not JSON: %s", key, swf_error_message(err));
        swf_error_free(err);
        return e;
    }
    return NULL;
}

static swf_error_t *read_mock(json_object *in, test_t *t)
{
    json_object *mock, *eo;
    if (!swf_json_get(in, "mock", &mock) || mock == NULL)
        return NULL;
    if (!json_object_is_type(mock, json_type_object))
        return swf_api__err("ValidationException", "mock must be an object");
    const char *mode = NULL;
    swf_error_t *err = json_member(mock, "result", INPUT_BYTES, "ValidationException", &t->mocked);
    if (err == NULL)
        err = swf_api__str(mock, "fieldValidationMode", false, 16, &mode);
    if (err == NULL && mode != NULL && strcmp(mode, "STRICT") != 0 &&
        strcmp(mode, "PRESENT") != 0 && strcmp(mode, "NONE") != 0)
        err = swf_api__err("ValidationException",
                           "mock.fieldValidationMode must be STRICT, PRESENT or NONE");
    if (err == NULL && swf_json_get(mock, "errorOutput", &eo) && eo != NULL) {
        if (!json_object_is_type(eo, json_type_object))
            return swf_api__err("ValidationException", "mock.errorOutput must be an object");
        err = swf_api__str(eo, "error", false, SWF_LIMIT_NAME_BYTES * 4, &t->m_error);
        if (err == NULL)
            err = swf_api__str(eo, "cause", false, 32768, &t->m_cause);
        if (err == NULL && t->m_error == NULL)
            t->m_error = "States.TaskFailed";
    }
    if (err == NULL && t->mocked != NULL && t->m_error != NULL)
        err = swf_api__err("ValidationException", "mock takes result or errorOutput, not both");
    t->has_mock = t->mocked != NULL || t->m_error != NULL;
    return err;
}

/* The state to test: the definition, or its state stateName. */
static swf_error_t *read_state(json_object *in, test_t *t)
{
    const char *text, *name;
    swf_error_t *err = swf_api__str(in, "definition", true, SWF_LIMIT_DEFINITION_BYTES, &text);
    if (err == NULL)
        err = swf_api__str(in, "stateName", false, SWF_API_NAME_BYTES, &name);
    if (err != NULL)
        return err;
    err = swf_json_parse(text, strlen(text), SWF_LIMIT_DEFINITION_BYTES, &t->holder);
    if (err != NULL) {
        swf_error_t *e = swf_api__err("InvalidDefinition", "Invalid State Definition: %s",
                                      swf_error_message(err));
        swf_error_free(err);
        return e;
    }
    if (!json_object_is_type(t->holder, json_type_object))
        return swf_api__err("InvalidDefinition", "Invalid State Definition: not a JSON object");
    json_object *states;
    if (name == NULL) {
        t->state = t->holder;
        t->name = "TestState";
        return NULL;
    }
    if (!swf_json_get(t->holder, "States", &states) || !swf_json_get(states, name, &t->state) ||
        !json_object_is_type(t->state, json_type_object))
        return swf_api__err("ValidationException", "the definition has no state '%s'", name);
    t->name = name;
    t->ql = swf_json_get_string(t->holder, "QueryLanguage");
    return NULL;
}

/* The stub standing for `target` (new, or the one it already has): a
 * name kept by t->targets. */
static const char *stub_for(test_t *t, const char *target)
{
    json_object_object_foreach(t->targets, k, v)
    {
        if (strcmp(json_object_get_string(v), target) == 0)
            return k;
    }
    char name[48];
    size_t n = (size_t)json_object_object_length(t->targets);
    do
        snprintf(name, sizeof(name), "swf.next.%zu", n++);
    while (strcmp(name, t->name) == 0 || json_object_object_get_ex(t->targets, name, NULL));
    json_object_object_add(t->targets, name, json_object_new_string(target));
    json_object_object_foreach(t->targets, k2, v2)
    {
        (void)v2;
        if (strcmp(k2, name) == 0)
            return k2;
    }
    return NULL;
}

/* obj's member "Next" (or key) pointed at its stub. */
static void rewire(test_t *t, json_object *obj, const char *key)
{
    const char *target = swf_json_get_string(obj, key);
    if (target != NULL)
        json_object_object_add(obj, key, json_object_new_string(stub_for(t, target)));
}

static bool has_task(json_object *v)
{
    if (json_object_is_type(v, json_type_object)) {
        const char *type = swf_json_get_string(v, "Type");
        if (type != NULL && strcmp(type, "Task") == 0)
            return true;
        json_object_object_foreach(v, k, c)
        {
            (void)k;
            if (has_task(c))
                return true;
        }
    } else if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++)
            if (has_task(json_object_array_get_idx(v, i)))
                return true;
    }
    return false;
}

/* The state as the test machine runs it (a new object): its transitions
 * on stubs, each retrier retrying once at most, a mocked Parallel or Map
 * a Task. */
static swf_error_t *state_for_run(test_t *t, json_object **out)
{
    *out = NULL;
    const char *type = swf_json_get_string(t->state, "Type");
    if (type == NULL)
        return swf_api__err("InvalidDefinition", "Invalid State Definition: no Type");
    bool group = strcmp(type, "Parallel") == 0 || strcmp(type, "Map") == 0;
    if (strcmp(type, "Task") == 0 && !t->has_mock)
        return swf_api__err("ValidationException",
                            "swf's TestState runs no activity: a Task state needs mock.result or "
                            "mock.errorOutput");
    if (group && !t->has_mock && has_task(t->state))
        return swf_api__err("ValidationException",
                            "swf's TestState runs no activity: a %s state with a Task inside "
                            "needs mock.result or mock.errorOutput",
                            type);
    json_object *st = swf_json_copy(t->state), *v;
    if (group && t->has_mock) {
        static const char *const drop[] = {"Branches",
                                           "ItemProcessor",
                                           "Iterator",
                                           "ItemsPath",
                                           "Items",
                                           "ItemSelector",
                                           "ItemReader",
                                           "ItemBatcher",
                                           "ResultWriter",
                                           "MaxConcurrency",
                                           "MaxConcurrencyPath",
                                           "ToleratedFailureCount",
                                           "ToleratedFailureCountPath",
                                           "ToleratedFailurePercentage",
                                           "ToleratedFailurePercentagePath",
                                           "Label",
                                           NULL};
        for (size_t i = 0; drop[i] != NULL; i++)
            json_object_object_del(st, drop[i]);
        if (strcmp(type, "Map") == 0)
            json_object_object_del(st, "Parameters"); /* the items' (ItemSelector) */
        swf_json_add(st, "Type", json_object_new_string("Task"));
        swf_json_add(st, "Resource", json_object_new_string(MOCK_RESOURCE));
    }
    rewire(t, st, "Next");
    rewire(t, st, "Default");
    static const char *const lists[] = {"Choices", "Catch"};
    for (size_t l = 0; l < 2; l++) {
        if (swf_json_get(st, lists[l], &v) && json_object_is_type(v, json_type_array))
            for (size_t i = 0; i < json_object_array_length(v); i++)
                rewire(t, json_object_array_get_idx(v, i), "Next");
    }
    if (swf_json_get(st, "Retry", &v) && json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *r = json_object_array_get_idx(v, i), *m;
            int64_t max = swf_json_get(r, "MaxAttempts", &m) ? json_object_get_int64(m) : 3;
            max -= t->retry_count;
            swf_json_add(r, "MaxAttempts", json_object_new_int64(max < 0 ? 0 : max > 1 ? 1 : max));
        }
    }
    *out = st;
    return NULL;
}

/* The first retrier or catcher of the state (member `list`) that takes
 * error, or -1. */
static int taker(json_object *state, const char *list, const char *error, json_object **which)
{
    json_object *arr, *eq;
    if (!swf_json_get(state, list, &arr) || !json_object_is_type(arr, json_type_array))
        return -1;
    for (size_t i = 0; i < json_object_array_length(arr); i++) {
        json_object *r = json_object_array_get_idx(arr, i);
        if (swf_json_get(r, "ErrorEquals", &eq) && swf_asl_error_equals(eq, error)) {
            *which = r;
            return (int)i;
        }
    }
    return -1;
}

/* The back-off before the retry (retrierRetryCount attempts made). */
static int64_t backoff(json_object *r, int64_t attempts)
{
    json_object *v;
    double interval = swf_json_get(r, "IntervalSeconds", &v) ? json_object_get_double(v) : 1;
    double rate = swf_json_get(r, "BackoffRate", &v) ? json_object_get_double(v) : 2.0;
    double d = interval * pow(rate, (double)attempts);
    if (swf_json_get(r, "MaxDelaySeconds", &v) && d > json_object_get_double(v))
        d = json_object_get_double(v);
    return d > 99999999 ? 99999999 : (int64_t)d;
}

/* Runs the test: the answer's members into out. */
static swf_error_t *test_run(test_t *t, json_object *out)
{
    json_object *st = NULL;
    swf_error_t *err = state_for_run(t, &st);
    if (err != NULL)
        return err;
    json_object *stubs = json_object_new_object();
    json_object_object_foreach(t->targets, k, v)
    {
        (void)v;
        json_object *succeed = json_object_new_object();
        swf_json_add(succeed, "Type", json_object_new_string("Succeed"));
        swf_json_add(stubs, k, succeed);
    }
    json_object *machine = machine_of(t->name, st, stubs, t->ql);
    json_object_put(stubs);
    err = swf_api__definition_check(machine);
    json_object *mocks = NULL;
    if (err == NULL && t->has_mock) {
        json_object *answer = json_object_new_object();
        if (t->mocked != NULL) {
            swf_json_add(answer, "Return", swf_json_ref(t->mocked));
        } else {
            json_object *th = json_object_new_object();
            swf_json_add(th, "Error", json_object_new_string(t->m_error));
            if (t->m_cause != NULL)
                swf_json_add(th, "Cause", json_object_new_string(t->m_cause));
            swf_json_add(answer, "Throw", th);
        }
        json_object *list = json_object_new_array();
        json_object_array_add(list, answer);
        mocks = json_object_new_object();
        swf_json_add(mocks, t->name, list);
    }
    watch_t w = {.state = t->name, .kind = -1};
    swf_local_result_t res = {0};
    if (err == NULL)
        err = run(machine, t->input, mocks, &w, &res);
    if (err == NULL) {
        const char *status, *error = NULL, *cause = NULL, *next = NULL;
        json_object *output = NULL, *details = json_object_new_object(), *r = NULL;
        if (w.kind == SWF_ASL_STATE_RETRIED || w.kind == SWF_ASL_STATE_CAUGHT ||
            w.kind == SWF_ASL_STATE_FAILED) {
            error = swf_json_get_string(w.data, "Error");
            cause = swf_json_get_string(w.data, "Cause");
        } else if (w.kind < 0 && res.status != SWF_ASL_SUCCEEDED) {
            error = res.error;
            cause = res.cause;
        }
        if (w.kind == SWF_ASL_STATE_RETRIED) {
            status = "RETRIABLE";
            int i = taker(t->state, "Retry", error ? error : "", &r);
            swf_json_add(details, "retryIndex", json_object_new_int(i));
            if (r != NULL)
                swf_json_add(details, "retryBackoffIntervalSeconds",
                             json_object_new_int64(backoff(r, t->retry_count)));
        } else if (w.kind == SWF_ASL_STATE_CAUGHT) {
            status = "CAUGHT_ERROR";
            swf_json_add(details, "catchIndex",
                         json_object_new_int(taker(t->state, "Catch", error ? error : "", &r)));
            next = swf_json_get_string(t->targets, swf_json_get_string(w.data, "Next"));
            output = res.output;
        } else if (error != NULL) {
            status = "FAILED";
        } else {
            status = "SUCCEEDED";
            output = res.output;
            if (w.next != NULL)
                next = swf_json_get_string(t->targets, w.next);
        }
        swf_json_add(out, "status", json_object_new_string(status));
        if (output != NULL || strcmp(status, "SUCCEEDED") == 0)
            text_add(out, "output", output);
        if (error != NULL)
            swf_json_add(out, "error", json_object_new_string(error));
        if (cause != NULL)
            swf_json_add(out, "cause", json_object_new_string(cause));
        if (next != NULL)
            swf_json_add(out, "nextState", json_object_new_string(next));
        if (strcmp(t->level, "INFO") != 0) {
            const char *ql = swf_json_get_string(t->state, "QueryLanguage");
            if (ql == NULL)
                ql = t->ql;
            bool jsonata = ql != NULL && strcmp(ql, "JSONata") == 0;
            json_object *d = inspection(t->state, t->input, t->mocked, jsonata);
            if (json_object_object_length(details) > 0)
                swf_json_add(d, "errorDetails", swf_json_ref(details));
            swf_json_add(out, "inspectionData", d);
        }
        json_object_put(details);
    }
    swf_local_result_free(&res);
    json_object_put(w.data);
    free(w.next);
    json_object_put(mocks);
    json_object_put(machine);
    return err;
}

swf_error_t *swf_api__state_test(swf_api_call_t *call, json_object *in, json_object **out)
{
    (void)call; /* runs nothing of the deployment's: no resource to check */
    test_t t = {.level = "INFO", .targets = json_object_new_object()};
    json_object *cfg, *v;
    const char *role;
    bool reveal = false;
    swf_error_t *err = read_state(in, &t);
    if (err == NULL)
        err = json_member(in, "input", INPUT_BYTES, "InvalidExecutionInput", &t.input);
    if (err == NULL && !swf_json_get(in, "input", &v))
        t.input = json_object_new_object(); /* AWS's default: {} */
    if (err == NULL)
        err = swf_api__str(in, "inspectionLevel", false, 8, &t.level);
    if (err == NULL && t.level == NULL)
        t.level = "INFO";
    if (err == NULL && strcmp(t.level, "INFO") != 0 && strcmp(t.level, "DEBUG") != 0 &&
        strcmp(t.level, "TRACE") != 0)
        err = swf_api__err("ValidationException", "inspectionLevel must be INFO, DEBUG or TRACE");
    if (err == NULL)
        err = swf_api__str(in, "roleArn", false, SWF_API_ARN_BYTES, &role);
    if (err == NULL)
        err = swf_api__bool(in, "revealSecrets", &reveal);
    if (err == NULL && swf_json_get(in, "variables", &v))
        err = swf_api__err("ValidationException",
                           "variables are not supported by swf's TestState (api/README.md)");
    if (err == NULL)
        err = read_mock(in, &t);
    if (err == NULL && swf_json_get(in, "stateConfiguration", &cfg) && cfg != NULL)
        err = swf_api__int(cfg, "retrierRetryCount", 0, 99999999, &t.retry_count);
    if (err == NULL) {
        *out = json_object_new_object();
        err = test_run(&t, *out);
        if (err != NULL) {
            json_object_put(*out);
            *out = NULL;
        }
    }
    json_object_put(t.holder);
    json_object_put(t.input);
    json_object_put(t.mocked);
    json_object_put(t.targets);
    return err;
}
