/*
 * send_event.c - `swf send-event STATE_MACHINE EVENT`: a CloudEvent (1.0,
 * structured JSON mode) routed to the instances of a Serverless Workflow
 * (SPEC 11), with a report of where it went.
 *
 * Each open execution of the state machine is replayed from its history to
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
 * Not done here (decider/sw/README.md): the PostgreSQL index of open
 * instances by trigger and correlation value, the swf.events Kafka topic;
 * this command replays every open execution of the state machine, which
 * is fine for development sizes (at most SEND_EVENT_SCAN_MAX of them).
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
    swf_history_execution_t *items = NULL;
    size_t count = 0, taken = 0;
    int version = 0;
    err = swf_history_pg_new(swf_history_pg_conninfo_env(), &s);
    if (err == NULL)
        err = swf_history_pg_state_machine_get(s, name, 0, &def, &version);
    if (err == NULL && !swf_sw_is_document(def))
        err = swf_error_new(SWF_E_INPUT, NULL,
                            "%s is an ASL state machine, not a Serverless "
                            "Workflow (events go to Serverless Workflows)",
                            name);
    swf_history_filter_t filter = {
        .status = "open", .state_machine = name, .limit = SEND_EVENT_SCAN_MAX};
    if (err == NULL)
        err = swf_history_pg_executions_list(s, &filter, &items, &count);
    /* Oldest first: the order instances see a live event in does not
     * matter (each records it), but a report reads better in start order. */
    for (size_t k = count; err == NULL && k > 0; k--) {
        const char *id = items[k - 1].execution_id, *why = NULL;
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
        err = swf_cli_signal_post(id, "cloudevent", ce);
        if (err == NULL) {
            printf("%s: %s\n", id,
                   fate == SWF_SW_RECORDED ? "recorded by a waiting state"
                                           : "kept as a pending event");
            taken++;
        }
    }
    if (err == NULL && taken == 0 && swf_sw_event_starts(def, ce)) {
        char id[37];
        err = swf_uuid_new(id);
        json_object *input = json_object_new_object();
        swf_history_start_t req = {.execution_id = id,
                                   .state_machine = name,
                                   .version = version,
                                   .input = input,
                                   .time_ms = swf_time_now_ms(),
                                   .start_event = ce};
        if (err == NULL)
            err = swf_history_pg_execution_start(s, &req, NULL);
        json_object_put(input);
        if (err == NULL) {
            printf("%s: started by the event (its start state records it)\n", id);
            taken++;
            (void)swf_cli_decide_post(id);
        }
    }
    if (err == NULL && taken == 0)
        printf("dropped: no open instance of %s records it or is correlated with it (%zu "
               "open), and its start state does not wait for it\n",
               name, count);
    swf_history_executions_free(items, count);
    swf_history_store_free(s);
    json_object_put(def);
    json_object_put(ce);
    if (err != NULL)
        return fail(err);
    return taken > 0 ? SWF_EXIT_OK : SWF_EXIT_NO;
}
