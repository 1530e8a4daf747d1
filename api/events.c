/*
 * events.c - `POST /events/STATE_MACHINE`: a CloudEvent for a Serverless
 * Workflow, in the CloudEvents HTTP binding's structured mode (content-type
 * application/cloudevents+json: the body is the event) or binary mode (the
 * attributes in ce-* headers, the body the event's data: JSON when the
 * content-type is application/json, else a string, with datacontenttype),
 * signed with SigV4 like every request. It is routed as `swf send-event`
 * routes it (decider/sw_route.h); the answer (200) is the outcome:
 * {"instances":[{"executionId","outcome"}...]} or {"dropped": why}.
 * Limits: the request body's SWF_API_BODY_BYTES, at most 32 ce-* headers.
 */
#include "api/internal.h"

#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "decider/sw_route.h"
#include "protocol/json.h"

#define CE_HEADERS_MAX 32

typedef struct ce_headers {
    json_object *ce;
    int n;
} ce_headers_t;

static enum MHD_Result ce_collect(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
    (void)kind;
    ce_headers_t *h = cls;
    if (strncasecmp(key, "ce-", 3) != 0 || key[3] == '\0' || value == NULL)
        return MHD_YES;
    if (++h->n > CE_HEADERS_MAX)
        return MHD_NO;
    char name[64];
    size_t i = 0;
    for (const char *p = key + 3; *p != '\0' && i < sizeof(name) - 1; p++)
        name[i++] = (char)((*p >= 'A' && *p <= 'Z') ? *p - 'A' + 'a' : *p);
    name[i] = '\0';
    /* A copied key: name is on the stack (swf_json_add keeps its key). */
    json_object_object_add(h->ce, name, json_object_new_string(value));
    return MHD_YES;
}

/* The event of the request, structured or binary (a new reference). */
static swf_error_t *event_of(swf_api_call_t *call, const char *body, size_t len, json_object **out)
{
    const char *ct = MHD_lookup_connection_value(call->conn, MHD_HEADER_KIND, "Content-Type");
    static const char structured[] = "application/cloudevents+json";
    swf_error_t *err = NULL;
    if (ct != NULL && strncasecmp(ct, structured, sizeof(structured) - 1) == 0) {
        err = swf_json_parse(body, len, SWF_API_BODY_BYTES, out);
        if (err != NULL) {
            swf_error_t *e =
                swf_api__err("SerializationException", "the event: %s", swf_error_message(err));
            swf_error_free(err);
            return e;
        }
        return NULL;
    }
    ce_headers_t h = {json_object_new_object(), 0};
    MHD_get_connection_values(call->conn, MHD_HEADER_KIND, ce_collect, &h);
    if (h.n > CE_HEADERS_MAX) {
        json_object_put(h.ce);
        return swf_api__err("ValidationException", "more than %d ce-* headers", CE_HEADERS_MAX);
    }
    if (len > 0) {
        json_object *data = NULL;
        if (ct != NULL && strncasecmp(ct, "application/json", 16) == 0) {
            err = swf_json_parse(body, len, SWF_API_BODY_BYTES, &data);
            if (err != NULL) {
                json_object_put(h.ce);
                swf_error_t *e = swf_api__err("SerializationException", "the event's data: %s",
                                              swf_error_message(err));
                swf_error_free(err);
                return e;
            }
        } else {
            data = json_object_new_string_len(body, (int)len);
        }
        swf_json_add(h.ce, "data", data);
        if (ct != NULL)
            swf_json_add(h.ce, "datacontenttype", json_object_new_string(ct));
    }
    *out = h.ce;
    return NULL;
}

static swf_error_t *inbox_send(void *ctx, const char *execution_id, json_object *msg)
{
    return swf_api__inbox_send(ctx, execution_id, msg);
}

swf_error_t *swf_api__event_post(swf_api_call_t *call, const char *name, const char *body,
                                 size_t len, json_object **out)
{
    swf_error_t *err = swf_api__allowed(call, "stateMachine", name);
    json_object *ce = NULL;
    swf_history_store_t *s = NULL;
    if (err == NULL)
        err = event_of(call, body, len, &ce);
    if (err == NULL)
        err = swf_api__store(call, &s);
    swf_sw_route_t r = {0};
    if (err == NULL) {
        /* The routing's own refusals, in the API's names. */
        err = swf_sw_route_event(s, call->api->secret, name, ce, inbox_send, call->api, &r);
        if (err != NULL && swf_error_code(err) == SWF_E_NOTFOUND) {
            swf_error_free(err);
            err = swf_api__err("StateMachineDoesNotExist", "State Machine Does Not Exist: '%s'",
                               name);
        } else if (err != NULL && swf_error_code(err) == SWF_E_INPUT) {
            swf_error_t *e = swf_api__err("ValidationException", "%s", swf_error_message(err));
            swf_error_free(err);
            err = e;
        }
    }
    json_object_put(ce);
    if (err == NULL)
        *out = swf_sw_route_json(&r);
    swf_sw_route_clear(&r);
    return err;
}
