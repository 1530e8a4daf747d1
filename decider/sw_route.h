/*
 * sw_route.h - where one CloudEvent goes among the instances of a
 * Serverless Workflow state machine (SPEC 11), shared by `swf send-event`,
 * the swf.events Kafka consumer and swf-api.
 *
 * Ownership: the caller owns the store, the event and the outcome, which
 * swf_sw_route_clear() releases; the route owns nothing it was given.
 */
#ifndef SWF_DECIDER_SW_ROUTE_H
#define SWF_DECIDER_SW_ROUTE_H

#include <json-c/json.h>
#include <stddef.h>

#include "history/store.h"
#include "protocol/error.h"

/* At most this many candidates are looked at for one event (an event
 * without a correlation value may reach every instance waiting for its
 * trigger). */
#define SWF_SW_ROUTE_SCAN_MAX 10000

/* What one instance did with the event. */
typedef enum swf_sw_route_kind {
    SWF_SW_ROUTE_RECORDED,  /* a waiting state records it (signal sent) */
    SWF_SW_ROUTE_KEPT,      /* kept as a pending event (signal sent) */
    SWF_SW_ROUTE_STARTED,   /* the event started this instance */
    SWF_SW_ROUTE_DUPLICATE, /* it has it already (same source + id) */
    SWF_SW_ROUTE_RESTARTED, /* this event started it before: a duplicate */
} swf_sw_route_kind_t;

typedef struct swf_sw_route_hit {
    char *execution_id;
    swf_sw_route_kind_t kind;
} swf_sw_route_hit_t;

/* The outcome: the instances that took the event (a duplicate counts as
 * taken, so a redelivered event starts nothing), or, when none did,
 * `dropped`: why, in a sentence. */
typedef struct swf_sw_route {
    swf_sw_route_hit_t *hits;
    size_t count;
    size_t looked_at; /* candidates replayed */
    char *dropped;    /* NULL when some instance took it */
} swf_sw_route_t;

/* Sends one control message to the inbox under the execution's key
 * (the caller's Kafka producer); the message is borrowed. */
typedef swf_error_t *(*swf_sw_route_send_fn)(void *ctx, const char *execution_id, json_object *msg);

/*
 * Routes the CloudEvent `ce` (structured JSON, already parsed and within
 * SWF_LIMIT_PAYLOAD_BYTES) to the instances of `state_machine`: each
 * candidate of the sw_instances projection is replayed to ask what it
 * would do with it, those that record or keep it get it as a signed
 * "cloudevent" signal through `send` with a request id derived from the
 * state machine's name and the event's source and id (recorded once per
 * history); when none takes it and the start state waits for it, an
 * instance starts under an id derived the same way (idempotent) and is
 * announced by a decide message (whose failure is ignored: swf-history's
 * sweep hands it over). `secret` signs the messages (NULL:
 * swf_token_secret_env()). A malformed event or one no trigger fits is an
 * outcome with `dropped`, not an error; an unknown state machine, an ASL
 * one, a store or a send failure are errors (some instances may have been
 * reached already; a retry reaches them again harmlessly).
 */
swf_error_t *swf_sw_route_event(swf_history_store_t *store, const char *secret,
                                const char *state_machine, json_object *ce,
                                swf_sw_route_send_fn send, void *ctx, swf_sw_route_t *out);

/* The outcome as JSON: {"dropped": why} or {"instances": [{"executionId",
 * "outcome": "recorded"|"kept"|"started"|"duplicate"}, a
 * restarted one "duplicate" too...]}; a new object. */
json_object *swf_sw_route_json(const swf_sw_route_t *r);

/* "recorded", "kept", "started", "duplicate" (RESTARTED too). */
const char *swf_sw_route_kind_name(swf_sw_route_kind_t kind);

void swf_sw_route_clear(swf_sw_route_t *r);

#endif
