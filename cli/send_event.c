/*
 * send_event.c - `swf send-event STATE_MACHINE EVENT`: a CloudEvent (1.0,
 * structured JSON mode) routed to the instances of a Serverless Workflow
 * (SPEC 11), with a report of where it went.
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
 * send-events of one starting event racing each other, or a redelivery
 * after the instance it started has closed, append the same
 * WorkflowExecutionStarted under the same id, and PostgreSQL's primary key
 * lets exactly one of them in; the other reports the instance the event
 * started. Each signal carries a request id derived the same way, which the
 * decider records once per history, so an event delivered twice to an
 * instance is recorded once.
 *
 * At most SEND_EVENT_SCAN_MAX candidates are looked at (an event without a
 * correlation value may reach every instance waiting for its trigger).
 * Not done here (decider/sw/README.md): the swf.events Kafka topic.
 */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/sw/sw.h"
#include "history/pg.h"
#include "history/store.h"
#include "protocol/hash.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/time.h"
#include "protocol/token.h"

#define SEND_EVENT_SCAN_MAX 10000

static const swf_cli_cmd_t send_event_cmd = {
    "swf send-event", NULL,
    "Route a CloudEvent to the open instances of a Serverless Workflow state machine "
    "(SPEC 11): print which instances record it, which keep it for later, or that it started "
    "a new one, or why it was dropped. Exit status 0 when some instance took it, 1 when it "
    "was dropped.",
    (const swf_cli_opt_t[]){
        {"STATE_MACHINE", NULL, SWF_CLI_REQUIRED, "the registered Serverless Workflow",
         "swf send-event loans @approval.json"},
        {"EVENT", NULL, SWF_CLI_REQUIRED, "the CloudEvent: " SWF_CLI_JSON_HELP,
         "swf send-event loans '{\"specversion\":\"1.0\",\"id\":\"e1\",\"source\":\"/mgr\","
         "\"type\":\"loan.decision\",\"data\":{\"loanId\":\"L-1\"}}'"},
        SWF_CLI_OPTS_END},
    NULL};

static int fail(swf_error_t *err)
{
    fprintf(stderr, "swf send-event: %s\n", swf_error_message(err));
    swf_error_free(err);
    return SWF_EXIT_ERROR;
}

/* What execution `id` would do with the event (its history replayed). */
static swf_error_t *fate_of(swf_history_store_t *s, const char *id, json_object *ce,
                            swf_sw_fate_t *fate, const char **why)
{
    swf_event_list_t events = {0};
    swf_error_t *err = swf_history_load(s, id, 0, 0, &events);
    swf_asl_exec_t *ex = swf_asl_exec_new();
    swf_asl_exec_set_trusted(ex, true);
    swf_asl_exec_set_token_secret(ex, swf_token_secret_env());
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
 * event delivered twice to an instance, by two send-events or a retried
 * one, is recorded once. 128 bits of its digest in hex, the form of the
 * random request ids of protocol/message.c. */
static void request_id(const char *name, json_object *ce, char out[33])
{
    uint8_t b[SWF_HASH_SHA256_BYTES];
    event_digest(name, ce, b);
    swf_hash_hex_encode(b + 16, 16, out);
}

int swf_cli_send_event(int argc, char **argv)
{
    swf_cli_args_t a;
    if (!swf_cli_args_parse(&send_event_cmd, argc, argv, &a))
        return a.status;
    const char *name = swf_cli_args_get(&a, "STATE_MACHINE");
    json_object *ce = NULL, *def = NULL;
    swf_error_t *err =
        swf_cli_json_arg("EVENT", swf_cli_args_get(&a, "EVENT"), SWF_LIMIT_PAYLOAD_BYTES, &ce);
    if (err != NULL)
        return fail(err);
    if (swf_json_get_string(ce, "id") == NULL || swf_json_get_string(ce, "source") == NULL ||
        swf_json_get_string(ce, "type") == NULL) {
        printf("dropped: malformed (a CloudEvent is an object with string id, source and type)\n");
        json_object_put(ce);
        return SWF_EXIT_NO;
    }
    swf_history_store_t *s = NULL;
    char **ids = NULL;
    size_t count = 0, taken = 0;
    int version = 0;
    const char *trigger = NULL;
    json_object *value = NULL;
    err = swf_history_pg_new(swf_history_pg_conninfo_env(), &s);
    if (err == NULL)
        err = swf_history_pg_state_machine_get(s, name, 0, &def, &version);
    if (err == NULL && !swf_sw_is_document(def))
        err = swf_error_new(SWF_E_INPUT, NULL,
                            "%s is an ASL state machine, not a Serverless "
                            "Workflow (events go to Serverless Workflows)",
                            name);
    if (err == NULL && !swf_sw_event_trigger(def, ce, &trigger, &value)) {
        printf("dropped: no trigger of %s fits its source and type, or its trigger's "
               "correlation-token selects nothing or null in it\n",
               name);
        swf_history_store_free(s);
        json_object_put(def);
        json_object_put(ce);
        return SWF_EXIT_NO;
    }
    /* The instances it may reach, from the sw_instances projection; each
     * one's replayed history says what it would do now. */
    if (err == NULL)
        err = swf_history_pg_sw_candidates(s, name, trigger, value, SEND_EVENT_SCAN_MAX, &ids,
                                           &count);
    for (size_t k = 0; err == NULL && k < count; k++) {
        const char *id = ids[k], *why = NULL;
        swf_sw_fate_t fate = SWF_SW_DROPPED;
        err = fate_of(s, id, ce, &fate, &why);
        if (err != NULL)
            break;
        if (fate == SWF_SW_DROPPED) {
            if (strncmp(why, "a duplicate", 11) == 0) {
                printf("%s: already received it (a duplicate), dropped\n", id);
                taken++;
            }
            continue;
        }
        char rid[33];
        request_id(name, ce, rid);
        err = swf_cli_signal_post(id, "cloudevent", ce, rid);
        if (err == NULL) {
            printf("%s: %s\n", id,
                   fate == SWF_SW_RECORDED ? "recorded by a waiting state"
                                           : "kept as a pending event");
            taken++;
        }
    }
    if (err == NULL && taken == 0 && swf_sw_event_starts(def, ce)) {
        char id[37];
        start_id(name, ce, id);
        json_object *input = json_object_new_object();
        swf_history_start_t req = {.execution_id = id,
                                   .state_machine = name,
                                   .version = version,
                                   .input = input,
                                   .time_ms = swf_time_now_ms(),
                                   .start_event = ce};
        err = swf_history_pg_execution_start(s, &req, NULL);
        json_object_put(input);
        if (err != NULL && swf_error_code(err) == SWF_E_CONFLICT) {
            /* Another delivery of this event started it first (its
             * instance may have closed since): a duplicate. */
            swf_error_free(err);
            err = NULL;
            printf("%s: already started by this event (a duplicate), dropped\n", id);
            taken++;
        } else if (err == NULL) {
            printf("%s: started by the event (its start state records it)\n", id);
            taken++;
            (void)swf_cli_decide_post(id);
        }
    }
    if (err == NULL && taken == 0)
        printf("dropped: no open instance of %s records it or is correlated with it (%zu "
               "looked at), and its start state does not wait for it\n",
               name, count);
    for (size_t k = 0; k < count; k++)
        free(ids[k]);
    free(ids);
    json_object_put(value);
    swf_history_store_free(s);
    json_object_put(def);
    json_object_put(ce);
    if (err != NULL)
        return fail(err);
    return taken > 0 ? SWF_EXIT_OK : SWF_EXIT_NO;
}
