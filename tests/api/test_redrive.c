/*
 * test_redrive.c - RedriveExecution and `swf redrive` on a dev system with
 * a real decider and swf-history (cli/dev.h), swf-api in front: an
 * execution fails at a Task inside a Parallel after other Tasks succeeded;
 * the "worker" (this test, answering on the inbox with the tasks' tokens)
 * is fixed; the redrive runs again only the Task that failed, and the
 * execution succeeds with the results of the first attempt kept. The
 * history shows the redrive, replays without a difference, and a second
 * redrive, or the same redrive message delivered again, changes nothing.
 * An execution stopped while its Task waited is redriven from the command
 * line and goes on at that Task; a Map runs again only the iteration that
 * failed, and a distributed one redrives its Map Run; a TIMED_OUT
 * execution gets its timeout again from the redrive; nothing reopens a
 * workflow id another execution runs as.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "cli/cli.h"
#include "cli/dev.h"
#include "client.h"
#include "decider/replay.h"
#include "history/pg.h"
#include "kafka/kafka.h"
#include "protocol/message.h"
#include "protocol/token.h"

typedef struct sys {
    swf_dev_t *dev;
    swf_api_t *api;
    swf_history_store_t *store;
    char creds[64];
    int port;
} sys_t;

static void sys_up(sys_t *s)
{
    swf_dev_options_t opt = {.deciders = 1,
                             .history_service = true,
                             .time_scale = 1,
                             .log = getenv("SWF_TEST_LOG") ? stderr : NULL};
    check(swf_dev_start(&opt, &s->dev));
    s->api = api_up(s->dev, s->creds, (swf_api_config_t){0});
    check(swf_history_pg_new(swf_dev_conninfo(s->dev), &s->store));
    s->port = swf_api_port(s->api);
}

static void sys_down(sys_t *s)
{
    swf_history_store_free(s->store);
    api_down(s->api, s->creds);
    swf_dev_stop(s->dev);
}

#define ARN "arn:aws:states:us-east-1:123456789012:"
#define ACT(name) "\"Resource\":\"" ARN "activity:" name "\""

/* First, then a Parallel of X and Y. */
static const char *DEF =
    "{\"StartAt\":\"First\",\"States\":{"
    "\"First\":{\"Type\":\"Task\"," ACT(
        "redo-first") ",\"Next\":\"Both\"},"
                      "\"Both\":{\"Type\":\"Parallel\",\"End\":true,\"Branches\":["
                      "{\"StartAt\":\"X\",\"States\":{\"X\":{\"Type\":\"Task\"," ACT(
                          "redo-x") ",\"End\":true}}},"
                                    "{\"StartAt\":\"Y\",\"States\":{\"Y\":{\"Type\":\"Task\"," ACT(
                                        "redo-y") ",\"End\":true}}}]}}}";

/* The activityIds of the execution's tasks scheduled for `state`, in
 * order; "STATE@PATH" takes only those at that path ("Work@Each[1]": the
 * state Work of the Map Each's iteration 1). */
static size_t scheduled(sys_t *s, const char *id, const char *state, char ids[8][32])
{
    swf_event_list_t events = {0};
    check(swf_history_load(s->store, id, 0, 0, &events));
    size_t n = 0;
    for (size_t k = 0; k < events.count && n < 8; k++) {
        json_object *c;
        const swf_event_t *ev = &events.items[k];
        if (ev->type != SWF_EVENT_ACTIVITY_TASK_SCHEDULED ||
            !swf_json_get(ev->attrs, "control", &c))
            continue;
        const char *st = swf_json_get_string(c, "state"), *path = swf_json_get_string(c, "path");
        const char *at = strchr(state, '@');
        size_t len = at ? (size_t)(at - state) : strlen(state);
        if (st != NULL && strlen(st) == len && strncmp(st, state, len) == 0 &&
            (at == NULL || (path != NULL && strcmp(path, at + 1) == 0)))
            snprintf(ids[n++], 32, "%s", swf_json_get_string(ev->attrs, "activityId"));
    }
    swf_event_list_free(&events);
    return n;
}

static void inbox_send(sys_t *s, const char *id, json_object *msg)
{
    rd_kafka_t *p;
    check(swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = swf_dev_brokers(s->dev)},
                                 &p));
    swf_kafka_names_t names;
    swf_kafka_names_env(&names);
    const char *text = swf_json_str(msg);
    swf_kafka_out_t o = {names.inbox, id, text, strlen(text), 0};
    check(swf_kafka_send(p, &o, 1));
    rd_kafka_destroy(p);
    json_object_put(msg);
}

/* Answers the nth (from 1) task scheduled for `state`, once scheduled
 * (bounded: 60 s): with result_text, or failed when it is NULL. */
static void answer(sys_t *s, const char *id, const char *state, size_t nth, const char *result_text)
{
    char ids[8][32];
    size_t n = 0;
    for (int i = 0; i < 1200 && (n = scheduled(s, id, state, ids)) < nth; i++)
        usleep(50000);
    cr_assert_geq(n, nth, "%s: no task %zu of %s", id, nth, state);
    char *tok = swf_token_make(swf_token_secret_env(), id, ids[nth - 1]);
    if (result_text != NULL) {
        json_object *r = parse(result_text);
        inbox_send(s, id, swf_msg_activity_completed_new(tok, r, "test"));
        json_object_put(r);
    } else {
        inbox_send(s, id, swf_msg_activity_failed_new(tok, "Worker.Broken", "a bug", "test"));
    }
    free(tok);
}

/* DescribeExecution of execution `id` of `machine`, once its status is
 * `status` (bounded: 60 s). */
static json_object *describe_when(sys_t *s, const char *machine, const char *id, const char *status)
{
    char body[256];
    snprintf(body, sizeof(body), "{\"executionArn\":\"" ARN "execution:%s:%s\"}", machine, id);
    for (int i = 0; i < 1200; i++) {
        json_object *d = call_ok(s->port, SFN "DescribeExecution", body);
        if (strcmp(swf_json_get_string(d, "status"), status) == 0)
            return d;
        json_object_put(d);
        usleep(50000);
    }
    cr_assert_fail("%s never %s", id, status);
    return NULL;
}

/* A redrive message for id (with that count) reaches the decider, which
 * ignores it (bounded: 30 s). */
static void redrive_ignored(sys_t *s, const char *id, int64_t count)
{
    swf_decider_stats_t st0, st1;
    swf_decider_stats(swf_dev_decider(s->dev, 0), &st0);
    inbox_send(s, id, swf_msg_redrive_new(NULL, id, count));
    for (int i = 0; i < 600; i++) {
        swf_decider_stats(swf_dev_decider(s->dev, 0), &st1);
        if (st1.ignored > st0.ignored)
            return;
        usleep(50000);
    }
    cr_assert_fail("the redrive of %s was not ignored", id);
}

static int64_t get_int(json_object *o, const char *key)
{
    json_object *v = NULL;
    cr_assert(swf_json_get(o, key, &v), "no %s in %s", key, swf_json_str(o));
    return json_object_get_int64(v);
}

/* The stored history replays without a difference; the execution's status. */
static swf_asl_status_t replayed(sys_t *s, const char *id)
{
    swf_event_list_t events = {0};
    check(swf_history_load(s->store, id, 0, 0, &events));
    swf_decider_replay_options_t opt = {0};
    swf_decider_replay_result_t r = {0};
    check(swf_decider_replay_run(&events, &opt, &r));
    cr_assert_null(r.error, "%s does not replay: %s", id,
                   r.error ? swf_error_message(r.error) : "");
    swf_asl_status_t st = swf_asl_exec_status(r.exec);
    swf_decider_replay_result_free(&r);
    swf_event_list_free(&events);
    return st;
}

/* CreateStateMachine `machine` of def_text, StartExecution `id` on {"n":1}. */
static void create_and_start(sys_t *s, const char *machine, const char *def_text, const char *id)
{
    char body[4096];
    json_object *def = json_object_new_string(def_text);
    snprintf(body, sizeof(body), "{\"name\":\"%s\",\"definition\":%s,\"roleArn\":\"" ARN "r\"}",
             machine, json_object_to_json_string_ext(def, JSON_C_TO_STRING_PLAIN));
    json_object_put(def);
    json_object_put(call_ok(s->port, SFN "CreateStateMachine", body));
    snprintf(body, sizeof(body),
             "{\"stateMachineArn\":\"" ARN "stateMachine:%s\",\"name\":\"%s\","
             "\"input\":\"{\\\"n\\\":1}\"}",
             machine, id);
    json_object_put(call_ok(s->port, SFN "StartExecution", body));
}

/* The three states' tasks were scheduled times[i] times each (scheduled's
 * STATE[@PATH]), and the history, succeeded, replays without a difference. */
static void expect_runs(sys_t *s, const char *id, const char *const states[3],
                        const size_t times[3])
{
    char ids[8][32];
    for (size_t i = 0; i < 3; i++)
        cr_assert_eq(scheduled(s, id, states[i], ids), times[i], "%s: %s", id, states[i]);
    cr_assert_eq(replayed(s, id), SWF_ASL_SUCCEEDED);
}

Test(redrive, reruns_only_the_failed_branch_and_keeps_what_succeeded, .timeout = 300)
{
    sys_t s;
    sys_up(&s);
    create_and_start(&s, "Redo", DEF, "redo-1");
    const char *earn = "{\"executionArn\":\"" ARN "execution:Redo:redo-1\"}";
    /* Not closed: not redrivable. */
    expect_signed(s.port, SFN "RedriveExecution", earn, KEY, SECRET, 400, "ExecutionNotRedrivable");

    answer(&s, "redo-1", "First", 1, "{\"first\":1}");
    answer(&s, "redo-1", "X", 1, "\"x\"");
    answer(&s, "redo-1", "Y", 1, NULL);
    json_object *d = describe_when(&s, "Redo", "redo-1", "FAILED");
    cr_assert_str_eq(swf_json_get_string(d, "error"), "Worker.Broken");
    cr_assert_str_eq(swf_json_get_string(d, "redriveStatus"), "REDRIVABLE");
    cr_assert_eq(get_int(d, "redriveCount"), 0);
    json_object_put(d);

    json_object *r = call_ok(s.port, SFN "RedriveExecution", earn);
    cr_assert(get_int(r, "redriveDate") > 0);
    json_object_put(r);
    /* The answer came once the redrive was in the history. */
    d = call_ok(s.port, SFN "DescribeExecution", earn);
    cr_assert_str_eq(swf_json_get_string(d, "status"), "RUNNING");
    cr_assert_eq(get_int(d, "redriveCount"), 1);
    cr_assert_str_eq(swf_json_get_string(d, "redriveStatus"), "NOT_REDRIVABLE");
    json_object_put(d);
    expect_signed(s.port, SFN "RedriveExecution", earn, KEY, SECRET, 400, "ExecutionNotRedrivable");

    answer(&s, "redo-1", "Y", 2, "\"y\"");
    d = describe_when(&s, "Redo", "redo-1", "SUCCEEDED");
    cr_assert_str_eq(swf_json_get_string(d, "output"), "[\"x\",\"y\"]");
    cr_assert_eq(get_int(d, "redriveCount"), 1);
    cr_assert(get_int(d, "redriveDate") > 0);
    json_object_put(d);

    /* The Tasks that had succeeded did not run again. */
    expect_runs(&s, "redo-1", (const char *const[]){"First", "X", "Y"}, (const size_t[]){1, 1, 2});

    json_object *h = call_ok(s.port, SFN "GetExecutionHistory",
                             "{\"executionArn\":\"" ARN "execution:Redo:redo-1\","
                             "\"maxResults\":1000}");
    cr_assert(strstr(swf_json_str(h), "\"type\":\"ExecutionRedriven\"") != NULL ||
                  strstr(swf_json_str(h), "\"type\": \"ExecutionRedriven\"") != NULL,
              "no ExecutionRedriven in %s", swf_json_str(h));
    cr_assert(strstr(swf_json_str(h), "\"executionRedrivenEventDetails\":{\"redriveCount\":1}"),
              "%s", swf_json_str(h));
    json_object_put(h);

    /* The same redrive message again, and a redrive of the succeeded
     * execution, change nothing. */
    size_t before = 0;
    swf_event_list_t ev = {0};
    check(swf_history_load(s.store, "redo-1", 0, 0, &ev));
    before = ev.count;
    swf_event_list_free(&ev);
    redrive_ignored(&s, "redo-1", 1);
    check(swf_history_load(s.store, "redo-1", 0, 0, &ev));
    cr_assert_eq(ev.count, before);
    swf_event_list_free(&ev);
    expect_signed(s.port, SFN "RedriveExecution", earn, KEY, SECRET, 400, "ExecutionNotRedrivable");
    expect_signed(s.port, SFN "RedriveExecution",
                  "{\"executionArn\":\"" ARN "execution:Redo:nobody\"}", KEY, SECRET, 400,
                  "ExecutionDoesNotExist");
    expect_signed(s.port, SFN "RedriveExecution", "{\"executionArn\":\"nope\"}", KEY, SECRET, 400,
                  "InvalidArn");
    sys_down(&s);
}

static const char *WAIT_DEF =
    "{\"StartAt\":\"A\",\"States\":{"
    "\"A\":{\"Type\":\"Task\"," ACT("redo-a") ",\"Next\":\"B\"},"
                                              "\"B\":{\"Type\":\"Task\"," ACT(
                                                  "redo-b") ",\"End\":true}}}";

Test(redrive, a_stopped_execution_goes_on_at_its_task_with_swf_redrive, .timeout = 300)
{
    sys_t s;
    sys_up(&s);
    create_and_start(&s, "Halt", WAIT_DEF, "halt-1");
    answer(&s, "halt-1", "A", 1, "{\"a\":1}");
    char ids[8][32];
    for (int i = 0; i < 1200 && scheduled(&s, "halt-1", "B", ids) < 1; i++)
        usleep(50000);
    json_object_put(call_ok(s.port, SFN "StopExecution",
                            "{\"executionArn\":\"" ARN
                            "execution:Halt:halt-1\",\"error\":\"Ops\"}"));
    json_object_put(describe_when(&s, "Halt", "halt-1", "ABORTED"));

    setenv("SWF_DATABASE_URL", swf_dev_conninfo(s.dev), 1);
    setenv("SWF_KAFKA_BROKERS", swf_dev_brokers(s.dev), 1);
    char *argv[] = {"redrive", "halt-1", NULL};
    cr_assert_eq(swf_cli_redrive(2, argv), SWF_EXIT_OK);
    json_object_put(describe_when(&s, "Halt", "halt-1", "RUNNING"));
    /* B's first task was cancelled by the redrive; its second is answered. */
    answer(&s, "halt-1", "B", 2, "{\"b\":2}");
    json_object *d = describe_when(&s, "Halt", "halt-1", "SUCCEEDED");
    cr_assert_str_eq(swf_json_get_string(d, "output"), "{\"b\":2}");
    json_object_put(d);
    cr_assert_eq(scheduled(&s, "halt-1", "A", ids), 1);
    cr_assert_eq(replayed(&s, "halt-1"), SWF_ASL_SUCCEEDED);
    /* Nothing to redrive in a succeeded execution. */
    cr_assert_eq(swf_cli_redrive(2, argv), SWF_EXIT_NO);
    sys_down(&s);
}

static const char *TIMEOUT_DEF = "{\"TimeoutSeconds\":8,\"StartAt\":\"T\",\"States\":{"
                                 "\"T\":{\"Type\":\"Task\"," ACT("redo-t") ",\"End\":true}}}";

/* TIMED_OUT, redriven: its TimeoutSeconds counts from the redrive, so it
 * runs again (not timed out at swf-history's next tick) and can finish. */
Test(redrive, a_timed_out_execution_gets_its_timeout_again_from_the_redrive, .timeout = 300)
{
    sys_t s;
    sys_up(&s);
    create_and_start(&s, "Slow", TIMEOUT_DEF, "slow-1");
    json_object *d = describe_when(&s, "Slow", "slow-1", "TIMED_OUT");
    cr_assert_str_eq(swf_json_get_string(d, "redriveStatus"), "REDRIVABLE");
    json_object_put(d);
    json_object_put(call_ok(s.port, SFN "RedriveExecution",
                            "{\"executionArn\":\"" ARN "execution:Slow:slow-1\"}"));
    usleep(5000000); /* swf-history ticks in the meantime: a timeout counted from the start would
                        have fired */
    d = describe_when(&s, "Slow", "slow-1", "RUNNING");
    json_object_put(d);
    answer(&s, "slow-1", "T", 2, "{\"late\":true}");
    d = describe_when(&s, "Slow", "slow-1", "SUCCEEDED");
    cr_assert_str_eq(swf_json_get_string(d, "output"), "{\"late\":true}");
    json_object_put(d);
    cr_assert_eq(replayed(&s, "slow-1"), SWF_ASL_SUCCEEDED);
    sys_down(&s);
}

/* Starts execution `id` of machine `machine` (created by the API) with
 * workflow id `wid`, as `swf start --workflow-id` does. */
static void start_with_workflow_id(sys_t *s, const char *machine, const char *id, const char *wid)
{
    json_object *input = parse("{}");
    swf_history_start_t st = {.execution_id = id,
                              .workflow_id = wid,
                              .state_machine = machine,
                              .input = input,
                              .time_ms = swf_time_now_ms()};
    check(swf_history_pg_execution_start(s->store, &st, NULL));
    inbox_send(s, id, swf_msg_decide_new(NULL, id));
    json_object_put(input);
}

/* At most one open execution per workflow id: an execution whose workflow
 * id runs again as another is not redriven, by the API, the command line
 * or a redrive message sent anyway. */
Test(redrive, not_while_its_workflow_id_runs_as_another_execution, .timeout = 300)
{
    sys_t s;
    sys_up(&s);
    create_and_start(&s, "Wf", WAIT_DEF, "wf-0");
    answer(&s, "wf-0", "A", 1, NULL);
    json_object_put(describe_when(&s, "Wf", "wf-0", "FAILED"));
    start_with_workflow_id(&s, "Wf", "wf-1", "order-9");
    answer(&s, "wf-1", "A", 1, NULL);
    json_object_put(describe_when(&s, "Wf", "wf-1", "FAILED"));
    start_with_workflow_id(&s, "Wf", "wf-2", "order-9"); /* runs: nobody answers A */
    expect_signed(s.port, SFN "RedriveExecution", "{\"executionArn\":\"" ARN "execution:Wf:wf-1\"}",
                  KEY, SECRET, 400, "ExecutionNotRedrivable");
    setenv("SWF_DATABASE_URL", swf_dev_conninfo(s.dev), 1);
    setenv("SWF_KAFKA_BROKERS", swf_dev_brokers(s.dev), 1);
    char *argv[] = {"redrive", "wf-1", NULL};
    cr_assert_eq(swf_cli_redrive(2, argv), SWF_EXIT_NO);
    redrive_ignored(&s, "wf-1", 1);
    json_object_put(describe_when(&s, "Wf", "wf-1", "FAILED"));
    /* wf-0's workflow id (its name) is free: it is redriven. */
    cr_assert_eq(swf_cli_redrive(2, (char *[]){"redrive", "wf-0", NULL}), SWF_EXIT_OK);
    json_object_put(describe_when(&s, "Wf", "wf-0", "RUNNING"));
    sys_down(&s);
}

static const char *MAP_DEF =
    "{\"StartAt\":\"Make\",\"States\":{"
    "\"Make\":{\"Type\":\"Pass\",\"Result\":[1,2,3],\"ResultPath\":\"$.items\",\"Next\":\"Each\"},"
    "\"Each\":{\"Type\":\"Map\",\"ItemsPath\":\"$.items\",\"End\":true,\"ItemProcessor\":{"
    "\"StartAt\":\"Work\",\"States\":{\"Work\":{\"Type\":\"Task\"," ACT(
        "redo-map") ",\"End\":true}}}}}}";

/* The events of `type` in the history reach n (bounded: 60 s). */
static void wait_events(sys_t *s, const char *id, swf_event_type_t type, size_t n)
{
    for (int i = 0; i < 1200; i++) {
        swf_event_list_t events = {0};
        check(swf_history_load(s->store, id, 0, 0, &events));
        size_t got = 0;
        for (size_t k = 0; k < events.count; k++)
            got += events.items[k].type == type;
        swf_event_list_free(&events);
        if (got >= n)
            return;
        usleep(50000);
    }
    cr_assert_fail("%s: fewer than %zu %s", id, n, swf_event_type_name(type));
}

/* The Map of MAP_DEF whose iteration 1 failed after 0 and 2 succeeded:
 * the redrive runs iteration 1 alone and the Map's result keeps the
 * others'. */
static void map_redriven(sys_t *s, const char *machine, const char *def, const char *id)
{
    char arn[256];
    snprintf(arn, sizeof(arn), "{\"executionArn\":\"" ARN "execution:%s:%s\"}", machine, id);
    create_and_start(s, machine, def, id);
    answer(s, id, "Work@Each[0]", 1, "\"a\"");
    answer(s, id, "Work@Each[2]", 1, "\"c\"");
    wait_events(s, id, SWF_EVENT_ACTIVITY_TASK_COMPLETED, 2);
    answer(s, id, "Work@Each[1]", 1, NULL);
    json_object_put(describe_when(s, machine, id, "FAILED"));
    json_object_put(call_ok(s->port, SFN "RedriveExecution", arn));
    answer(s, id, "Work@Each[1]", 2, "\"b\"");
    json_object *d = describe_when(s, machine, id, "SUCCEEDED");
    cr_assert_str_eq(swf_json_get_string(d, "output"), "[\"a\",\"b\",\"c\"]");
    json_object_put(d);
    expect_runs(s, id, (const char *const[]){"Work@Each[0]", "Work@Each[1]", "Work@Each[2]"},
                (const size_t[]){1, 2, 1});
}

Test(redrive, a_map_runs_again_only_the_iteration_that_failed, .timeout = 300)
{
    sys_t s;
    sys_up(&s);
    map_redriven(&s, "Each", MAP_DEF, "map-1");
    sys_down(&s);
}

/* The events of `type` in the execution's GetExecutionHistory; the last
 * one's details under `details` in *last (a new reference) when not NULL. */
static size_t history_count(sys_t *s, const char *machine, const char *id, const char *type,
                            const char *details, json_object **last)
{
    char body[256];
    snprintf(body, sizeof(body),
             "{\"executionArn\":\"" ARN "execution:%s:%s\",\"maxResults\":1000}", machine, id);
    json_object *h = call_ok(s->port, SFN "GetExecutionHistory", body), *evs = NULL, *d;
    swf_json_get(h, "events", &evs);
    size_t n = 0;
    for (size_t i = 0; i < json_object_array_length(evs); i++) {
        json_object *e = json_object_array_get_idx(evs, i);
        if (strcmp(swf_json_get_string(e, "type"), type) != 0)
            continue;
        n++;
        if (last != NULL && swf_json_get(e, details, &d)) {
            json_object_put(*last);
            *last = json_object_get(d);
        }
    }
    json_object_put(h);
    return n;
}

static int64_t counts_get(json_object *run, const char *counts, const char *key)
{
    json_object *c = NULL;
    cr_assert(swf_json_get(run, counts, &c), "no %s in %s", counts, swf_json_str(run));
    return get_int(c, key);
}

/* The same Map, distributed: AWS redrives its Map Run with the execution
 * (the same run: MapRunRedriven, redriveCount, redriveDate), the
 * iteration that failed run again (a child execution redriven). */
Test(redrive, a_distributed_map_s_failed_run_is_redriven_with_its_execution, .timeout = 300)
{
    static const char *dist =
        "{\"StartAt\":\"Make\",\"States\":{"
        "\"Make\":{\"Type\":\"Pass\",\"Result\":[1,2,3],\"ResultPath\":\"$.items\","
        "\"Next\":\"Each\"},\"Each\":{\"Type\":\"Map\",\"Label\":\"Batch\",\"ItemsPath\":"
        "\"$.items\",\"End\":true,\"ItemProcessor\":{\"ProcessorConfig\":{\"Mode\":"
        "\"DISTRIBUTED\",\"ExecutionType\":\"STANDARD\"},\"StartAt\":\"Work\",\"States\":{"
        "\"Work\":{\"Type\":\"Task\"," ACT("redo-dist") ",\"End\":true}}}}}}";
    static const char run_arn[] = ARN "mapRun:Dist/Batch:dmap-1-1";
    sys_t s;
    sys_up(&s);
    map_redriven(&s, "Dist", dist, "dmap-1");
    /* One run, started, failed, redriven once, succeeded. */
    json_object *det = NULL;
    cr_assert_eq(history_count(&s, "Dist", "dmap-1", "MapRunStarted", NULL, NULL), 1);
    cr_assert_eq(history_count(&s, "Dist", "dmap-1", "MapRunFailed", NULL, NULL), 1);
    cr_assert_eq(
        history_count(&s, "Dist", "dmap-1", "MapRunRedriven", "mapRunRedrivenEventDetails", &det),
        1);
    cr_assert_str_eq(swf_json_get_string(det, "mapRunArn"), run_arn);
    cr_assert_eq(get_int(det, "redriveCount"), 1);
    json_object_put(det);
    cr_assert_eq(history_count(&s, "Dist", "dmap-1", "MapRunSucceeded", NULL, NULL), 1);
    json_object *runs = call_ok(s.port, SFN "ListMapRuns",
                                "{\"executionArn\":\"" ARN "execution:Dist:dmap-1\"}"),
                *list = NULL;
    swf_json_get(runs, "mapRuns", &list);
    cr_assert_eq(json_object_array_length(list), 1, "%s", swf_json_str(runs));
    json_object_put(runs);
    json_object *run = call_ok(s.port, SFN "DescribeMapRun",
                               "{\"mapRunArn\":\"" ARN "mapRun:Dist/Batch:dmap-1-1\"}");
    cr_assert_str_eq(swf_json_get_string(run, "status"), "SUCCEEDED");
    cr_assert_eq(get_int(run, "redriveCount"), 1);
    cr_assert_geq(get_int(run, "redriveDate"), get_int(run, "startDate"));
    cr_assert_eq(counts_get(run, "executionCounts", "succeeded"), 3);
    cr_assert_eq(counts_get(run, "executionCounts", "failed"), 0);
    cr_assert_eq(counts_get(run, "itemCounts", "total"), 3);
    json_object_put(run);
    /* The interpreter numbered the redriven run's begin 2 (a ResultWriter's
     * MapRunArn): that ARN names the same run. */
    run = call_ok(s.port, SFN "DescribeMapRun",
                  "{\"mapRunArn\":\"" ARN "mapRun:Dist/Batch:dmap-1-2\"}");
    cr_assert_str_eq(swf_json_get_string(run, "mapRunArn"), run_arn);
    json_object_put(run);
    /* The iteration run again is its one redriven child execution. */
    json_object *redriven = call_ok(s.port, SFN "ListExecutions",
                                    "{\"mapRunArn\":\"" ARN "mapRun:Dist/Batch:dmap-1-1\","
                                    "\"redriveFilter\":\"REDRIVEN\"}");
    swf_json_get(redriven, "executions", &list);
    cr_assert_eq(json_object_array_length(list), 1, "%s", swf_json_str(redriven));
    json_object *it = json_object_array_get_idx(list, 0);
    cr_assert_str_eq(swf_json_get_string(it, "name"), "dmap-1-1-1");
    cr_assert_eq(get_int(it, "redriveCount"), 1);
    json_object_put(redriven);
    sys_down(&s);
}
