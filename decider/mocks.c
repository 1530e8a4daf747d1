/*
 * mocks.c - one behaviour per mocked response, for both `swf run` modes.
 *
 * `swf run --local` and the mock worker of `swf run --dev` each answered
 * from the mocks in code of their own, and the two disagreed on a Throw of
 * States.Timeout (a timeout in one, a failure in the other). Here the
 * response is chosen and interpreted once; each driver only turns the
 * answer into its own form (events for the local driver, an inbox message
 * for the worker). The invocation counters are a json-c object keyed by
 * state name: a run has a handful of Task states.
 */
#include "decider/mocks.h"

#include <stdlib.h>

#include "protocol/json.h"

struct swf_decider_mocks {
    json_object *doc;   /* state name -> responses; NULL: none */
    json_object *calls; /* state name -> invocations so far */
};

/* Whether a Throw's body is {"Error": non-empty string, "Cause": string}
 * (Cause optional, nothing else). */
static bool throw_ok(json_object *v)
{
    json_object *e, *c;
    if (!json_object_is_type(v, json_type_object) || !swf_json_get(v, "Error", &e) ||
        !json_object_is_type(e, json_type_string) || json_object_get_string_len(e) == 0)
        return false;
    size_t members = 1;
    if (swf_json_get(v, "Cause", &c)) {
        if (!json_object_is_type(c, json_type_string))
            return false;
        members++;
    }
    return (size_t)json_object_object_length(v) == members;
}

swf_error_t *swf_decider_mocks_check(json_object *doc)
{
    if (!json_object_is_type(doc, json_type_object))
        return swf_error_new(SWF_E_INPUT, NULL, "mocks must be a JSON object");
    json_object_object_foreach(doc, state, list)
    {
        if (!json_object_is_type(list, json_type_array) || json_object_array_length(list) == 0)
            return swf_error_new(SWF_E_INPUT, NULL,
                                 "\"%s\": must be a non-empty array of responses "
                                 "({\"Return\": ...}, {\"Throw\": ...} or {\"Echo\": true})",
                                 state);
        for (size_t i = 0; i < json_object_array_length(list); i++) {
            json_object *r = json_object_array_get_idx(list, i), *v;
            bool one =
                json_object_is_type(r, json_type_object) && json_object_object_length(r) == 1;
            if (one && swf_json_get(r, "Return", &v))
                continue;
            if (one && swf_json_get(r, "Echo", &v) && json_object_is_type(v, json_type_boolean) &&
                json_object_get_boolean(v))
                continue;
            if (one && swf_json_get(r, "Throw", &v)) {
                if (throw_ok(v))
                    continue;
                return swf_error_new(SWF_E_INPUT, NULL,
                                     "\"%s\"[%zu]: a Throw is {\"Error\": \"...\", "
                                     "\"Cause\": \"...\"} (Cause optional, both strings)",
                                     state, i);
            }
            return swf_error_new(SWF_E_INPUT, NULL,
                                 "\"%s\"[%zu]: a response must hold exactly one of Return, "
                                 "Throw or Echo (true)",
                                 state, i);
        }
    }
    return NULL;
}

swf_decider_mocks_t *swf_decider_mocks_new(json_object *doc)
{
    swf_decider_mocks_t *m = calloc(1, sizeof(*m));
    if (m == NULL)
        abort();
    m->doc = swf_json_ref(doc);
    m->calls = json_object_new_object();
    return m;
}

void swf_decider_mocks_free(swf_decider_mocks_t *m)
{
    if (m == NULL)
        return;
    json_object_put(m->doc);
    json_object_put(m->calls);
    free(m);
}

/* The response for the next invocation of `state`, or NULL (echo). */
static json_object *response_next(swf_decider_mocks_t *m, const char *state)
{
    json_object *list, *v;
    if (state == NULL || !swf_json_get(m->doc, state, &list) ||
        !json_object_is_type(list, json_type_array) || json_object_array_length(list) == 0)
        return NULL;
    size_t n = json_object_array_length(list);
    size_t calls = swf_json_get(m->calls, state, &v) ? (size_t)json_object_get_int64(v) : 0;
    json_object_object_add(m->calls, state, json_object_new_int64((int64_t)calls + 1));
    return json_object_array_get_idx(list, calls < n ? calls : n - 1);
}

bool swf_decider_mocks_has(const swf_decider_mocks_t *m, const char *state)
{
    json_object *list;
    return m != NULL && state != NULL && swf_json_get(m->doc, state, &list) &&
           json_object_is_type(list, json_type_array) && json_object_array_length(list) > 0;
}

swf_error_t *swf_decider_mocks_answer(swf_decider_mocks_t *m, const char *state, json_object *input,
                                      swf_decider_mock_answer_t *out)
{
    *out = (swf_decider_mock_answer_t){.result = input};
    json_object *resp = response_next(m, state), *v;
    if (resp == NULL || swf_json_get(resp, "Echo", &v))
        return NULL;
    if (swf_json_get(resp, "Return", &v)) {
        out->result = v;
        return NULL;
    }
    if (swf_json_get(resp, "Throw", &v) && throw_ok(v)) {
        const char *cause = swf_json_get_string(v, "Cause");
        *out = (swf_decider_mock_answer_t){
            .failed = true, .error = swf_json_get_string(v, "Error"), .cause = cause ? cause : ""};
        return NULL;
    }
    return swf_error_new(SWF_E_INPUT, NULL,
                         "mocks: \"%s\": a response must hold Return, Throw (with an Error "
                         "string) or Echo",
                         state);
}
