/*
 * send_event.c - `swf send-event STATE_MACHINE EVENT`: a CloudEvent (1.0,
 * structured JSON mode) routed to the instances of a Serverless Workflow
 * (SPEC 11) by decider/sw_route.c, the routing the swf.events consumer and
 * swf-api share, with a report of where it went: each instance that records
 * it, keeps it, was started by it or had it already, or why it was dropped.
 * The signals and the decide of a started instance go to the inbox through
 * the command line's producer (cli/control.c).
 */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/sw_route.h"
#include "history/pg.h"
#include "protocol/limits.h"

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

int swf_cli_send_event(int argc, char **argv)
{
    swf_cli_args_t a;
    if (!swf_cli_args_parse(&send_event_cmd, argc, argv, &a))
        return a.status;
    const char *name = swf_cli_args_get(&a, "STATE_MACHINE");
    json_object *ce = NULL;
    swf_error_t *err =
        swf_cli_json_arg("EVENT", swf_cli_args_get(&a, "EVENT"), SWF_LIMIT_PAYLOAD_BYTES, &ce);
    if (err != NULL)
        return fail(err);
    swf_history_store_t *s = NULL;
    swf_sw_route_t r = {0};
    err = swf_history_pg_new(swf_history_pg_conninfo_env(), &s);
    if (err == NULL)
        err = swf_sw_route_event(s, NULL, name, ce, swf_cli_inbox_post, NULL, &r);
    static const char *const says[] = {
        [SWF_SW_ROUTE_RECORDED] = "recorded by a waiting state",
        [SWF_SW_ROUTE_KEPT] = "kept as a pending event",
        [SWF_SW_ROUTE_STARTED] = "started by the event (its start state records it)",
        [SWF_SW_ROUTE_DUPLICATE] = "already received it (a duplicate), dropped",
        [SWF_SW_ROUTE_RESTARTED] = "already started by this event (a duplicate), dropped"};
    for (size_t i = 0; i < r.count; i++)
        printf("%s: %s\n", r.hits[i].execution_id, says[r.hits[i].kind]);
    if (err == NULL && r.dropped != NULL)
        printf("dropped: %s\n", r.dropped);
    int code = r.count > 0 ? SWF_EXIT_OK : SWF_EXIT_NO;
    swf_sw_route_clear(&r);
    swf_history_store_free(s);
    json_object_put(ce);
    if (err != NULL)
        return fail(err);
    return code;
}
