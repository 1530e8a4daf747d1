/*
 * sw_route.c - one CloudEvent (1.0, structured JSON mode) routed to the
 * instances of a Serverless Workflow (SPEC 11); `swf send-event`, the
 * swf.events consumer and swf-api all go through swf_sw_route_event.
 *
 * The instances the event may reach are looked up in the sw_instances
 * projection (history/pg_sw.c: by state machine, the event's trigger and
 * its correlation value); each of those is replayed from its history to
 * ask what it would do with the event now (swf_sw_event_fate: a waiting
 * state records it, the instance keeps it as pending, or why it drops it);
 * those that record or keep it get it as a WorkflowExecutionSignaled
 * (signalName "cloudevent") on their inbox, where the decider routes it
 * again against the history as it is then, so a race with the execution
 * moving on changes nothing but what it does with it. When no instance
 * takes it and the workflow's start state waits for its trigger, a new
 * instance starts with the input {} and the event in its
 * WorkflowExecutionStarted (startEvent), which its start state records as
 * soon as it waits. A duplicate (source + id) is dropped by every instance
 * that has it, and counts as taken, so a redelivered starting event starts
 * no second instance.
 *
 * A start by an event is idempotent: the new execution's id is derived from
 * the state machine's name and the event's source and id (start_id), so two
 * deliveries of one starting event racing each other, or a redelivery
 * after the instance it started has closed, append the same
 * WorkflowExecutionStarted under the same id, and PostgreSQL's primary key
 * lets exactly one of them in; the other reports the instance the event
 * started. Each signal carries a request id derived the same way, which the
 * decider records once per history, so an event delivered twice to an
 * instance is recorded once.
 */
#include "decider/sw_route.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/sw/sw.h"
#include "history/pg.h"
#include "protocol/hash.h"
#include "protocol/json.h"
#include "protocol/message.h"
#include "protocol/time.h"
#include "protocol/token.h"

/* What execution `id` would do with the event (its history replayed). */
static swf_error_t *fate_of(swf_history_store_t *s, const char *secret, const char *id,
                            json_object *ce, swf_sw_fate_t *fate, const char **why)
{
    swf_event_list_t events = {0};
    swf_error_t *err = swf_history_load(s, id, 0, 0, &events);
    swf_asl_exec_t *ex = swf_asl_exec_new();
    swf_asl_exec_set_trusted(ex, true);
    swf_asl_exec_set_token_secret(ex, secret);
    for (size_t i = 0; err == NULL && i < events.count; i++)
        err = swf_asl_exec_apply(ex, &events.items[i]);
    if (err == NULL)
        *fate = swf_sw_event_fate(ex, ce, why);
    swf_asl_exec_free(ex);
    swf_event_list_free(&events);
    return err;
}

/* SHA-256 of the state machine's name and the event's source and id,
 * NUL-separated (none holds a NUL: they are JSON strings read by json-c,
 * which stops at one): the identity of one event for one workflow. */
static void event_digest(const char *name, json_object *ce, uint8_t out[SWF_HASH_SHA256_BYTES])
{
    const char *source = swf_json_get_string(ce, "source"), *id = swf_json_get_string(ce, "id");
    size_t ln = strlen(name) + 1, ls = strlen(source) + 1, li = strlen(id) + 1;
    char *buf = malloc(ln + ls + li);
    if (buf == NULL)
        abort();
    memcpy(buf, name, ln);
    memcpy(buf + ln, source, ls);
    memcpy(buf + ln + ls, id, li);
    swf_hash_digest(SWF_HASH_SHA256, buf, ln + ls + li, out);
    free(buf);
}

/* The id of the execution the event starts: its digest laid out as a UUID
 * (version 8, RFC 9562: the bits are ours). One event starts at most one
 * execution of a state machine, whoever delivers it and however often. */
static void start_id(const char *name, json_object *ce, char out[37])
{
    uint8_t b[SWF_HASH_SHA256_BYTES];
    event_digest(name, ce, b);
    b[6] = (uint8_t)((b[6] & 0x0f) | 0x80);
    b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

/* The requestId of the cloudevent signal that carries the event: the
 * decider records a request id once per history (protocol/KAFKA.md), so an
 * event delivered twice to an instance is recorded once. 128 bits of its
 * digest in hex, the form of the random request ids of protocol/message.c. */
static void request_id(const char *name, json_object *ce, char out[33])
{
    uint8_t b[SWF_HASH_SHA256_BYTES];
    event_digest(name, ce, b);
    swf_hash_hex_encode(b + 16, 16, out);
}

static void hit_add(swf_sw_route_t *r, const char *id, swf_sw_route_kind_t kind)
{
    swf_sw_route_hit_t *h = realloc(r->hits, (r->count + 1) * sizeof(*h));
    if (h == NULL)
        abort();
    r->hits = h;
    h[r->count].execution_id = strdup(id);
    if (h[r->count].execution_id == NULL)
        abort();
    h[r->count++].kind = kind;
}

static void drop(swf_sw_route_t *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    r->dropped = malloc((size_t)n + 1);
    if (r->dropped == NULL)
        abort();
    va_start(ap, fmt);
    vsnprintf(r->dropped, (size_t)n + 1, fmt, ap);
    va_end(ap);
}

/* The signed cloudevent signal to `id`, with the event's own request id. */
static json_object *signal_new(const char *secret, const char *name, const char *id,
                               json_object *ce)
{
    char rid[33];
    request_id(name, ce, rid);
    json_object *m = swf_msg_signal_new(secret, id, "cloudevent", ce);
    json_object_object_del(m, "signature");
    json_object_object_del(m, "requestId");
    swf_json_add(m, "requestId", json_object_new_string(rid));
    return swf_msg_sign(m, secret != NULL ? secret : swf_token_secret_env());
}

/* The candidates replayed, signalled when they take it. */
static swf_error_t *route_candidates(swf_history_store_t *s, const char *secret, const char *name,
                                     json_object *ce, char **ids, swf_sw_route_send_fn send,
                                     void *ctx, swf_sw_route_t *r)
{
    swf_error_t *err = NULL;
    for (size_t k = 0; err == NULL && k < r->looked_at; k++) {
        const char *why = NULL;
        swf_sw_fate_t fate = SWF_SW_DROPPED;
        err = fate_of(s, secret, ids[k], ce, &fate, &why);
        if (err != NULL)
            break;
        if (fate == SWF_SW_DROPPED) {
            if (strncmp(why, "a duplicate", 11) == 0)
                hit_add(r, ids[k], SWF_SW_ROUTE_DUPLICATE);
            continue;
        }
        json_object *m = signal_new(secret, name, ids[k], ce);
        err = send(ctx, ids[k], m);
        json_object_put(m);
        if (err == NULL)
            hit_add(r, ids[k], fate == SWF_SW_RECORDED ? SWF_SW_ROUTE_RECORDED : SWF_SW_ROUTE_KEPT);
    }
    return err;
}

/* No instance took it and the start state waits for it: a new instance. */
static swf_error_t *route_start(swf_history_store_t *s, const char *secret, const char *name,
                                int version, json_object *ce, swf_sw_route_send_fn send, void *ctx,
                                swf_sw_route_t *r)
{
    char id[37];
    start_id(name, ce, id);
    json_object *input = json_object_new_object();
    swf_history_start_t req = {.execution_id = id,
                               .state_machine = name,
                               .version = version,
                               .input = input,
                               .time_ms = swf_time_now_ms(),
                               .start_event = ce};
    swf_error_t *err = swf_history_pg_execution_start(s, &req, NULL);
    json_object_put(input);
    if (err != NULL && swf_error_code(err) == SWF_E_CONFLICT) {
        /* Another delivery of this event started it first (its instance
         * may have closed since): a duplicate. */
        swf_error_free(err);
        hit_add(r, id, SWF_SW_ROUTE_RESTARTED);
        return NULL;
    }
    if (err != NULL)
        return err;
    hit_add(r, id, SWF_SW_ROUTE_STARTED);
    json_object *m = swf_msg_decide_new(secret, id);
    swf_error_free(send(ctx, id, m));
    json_object_put(m);
    return NULL;
}

swf_error_t *swf_sw_route_event(swf_history_store_t *s, const char *secret, const char *name,
                                json_object *ce, swf_sw_route_send_fn send, void *ctx,
                                swf_sw_route_t *r)
{
    memset(r, 0, sizeof(*r));
    if (!json_object_is_type(ce, json_type_object) || swf_json_get_string(ce, "id") == NULL ||
        swf_json_get_string(ce, "source") == NULL || swf_json_get_string(ce, "type") == NULL) {
        drop(r, "malformed (a CloudEvent is an object with string id, source and type)");
        return NULL;
    }
    json_object *def = NULL, *value = NULL;
    int version = 0;
    const char *trigger = NULL;
    char **ids = NULL;
    swf_error_t *err = swf_history_pg_state_machine_get(s, name, 0, &def, &version);
    if (err == NULL && !swf_sw_is_document(def))
        err = swf_error_new(SWF_E_INPUT, NULL,
                            "%s is an ASL state machine, not a Serverless "
                            "Workflow (events go to Serverless Workflows)",
                            name);
    if (err == NULL && !swf_sw_event_trigger(def, ce, &trigger, &value)) {
        drop(r,
             "no trigger of %s fits its source and type, or its trigger's correlation-token "
             "selects nothing or null in it",
             name);
        json_object_put(def);
        return NULL;
    }
    if (err == NULL)
        err = swf_history_pg_sw_candidates(s, name, trigger, value, SWF_SW_ROUTE_SCAN_MAX, &ids,
                                           &r->looked_at);
    if (err == NULL)
        err = route_candidates(s, secret, name, ce, ids, send, ctx, r);
    if (err == NULL && r->count == 0 && swf_sw_event_starts(def, ce))
        err = route_start(s, secret, name, version, ce, send, ctx, r);
    if (err == NULL && r->count == 0)
        drop(r,
             "no open instance of %s records it or is correlated with it (%zu looked at), and "
             "its start state does not wait for it",
             name, r->looked_at);
    for (size_t k = 0; ids != NULL && k < r->looked_at; k++)
        free(ids[k]);
    free(ids);
    json_object_put(value);
    json_object_put(def);
    return err;
}

const char *swf_sw_route_kind_name(swf_sw_route_kind_t kind)
{
    switch (kind) {
    case SWF_SW_ROUTE_RECORDED:
        return "recorded";
    case SWF_SW_ROUTE_KEPT:
        return "kept";
    case SWF_SW_ROUTE_STARTED:
        return "started";
    case SWF_SW_ROUTE_DUPLICATE:
    case SWF_SW_ROUTE_RESTARTED:
        return "duplicate";
    }
    return "?";
}

json_object *swf_sw_route_json(const swf_sw_route_t *r)
{
    json_object *o = json_object_new_object();
    if (r->dropped != NULL) {
        swf_json_add(o, "dropped", json_object_new_string(r->dropped));
        return o;
    }
    json_object *a = json_object_new_array();
    for (size_t i = 0; i < r->count; i++) {
        json_object *h = json_object_new_object();
        swf_json_add(h, "executionId", json_object_new_string(r->hits[i].execution_id));
        swf_json_add(h, "outcome", json_object_new_string(swf_sw_route_kind_name(r->hits[i].kind)));
        json_object_array_add(a, h);
    }
    swf_json_add(o, "instances", a);
    return o;
}

void swf_sw_route_clear(swf_sw_route_t *r)
{
    for (size_t i = 0; i < r->count; i++)
        free(r->hits[i].execution_id);
    free(r->hits);
    free(r->dropped);
    memset(r, 0, sizeof(*r));
}
