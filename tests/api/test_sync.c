/*
 * test_sync.c - api/sync.c over a real socket, on a dev system with a
 * decider (PostgreSQL and the mock Kafka cluster, cli/dev.h): EXPRESS
 * state machines and what AWS refuses in them, StartSyncExecution's answer
 * for an execution that succeeds, fails or outlives the wait, and the bound
 * on the waiters, and a fuzz round over its request bodies.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../fuzz.h"
#include "api/api.h"
#include "cli/dev.h"
#include "protocol/json.h"

#define KEY "AKIDSYNC"
#define SECRET "sync-secret"

#include "client.h"

typedef struct sys {
    swf_dev_t *dev;
    swf_api_t *api;
    char creds[64];
    int port;
} sys_t;

static void sys_start(sys_t *s, int sync_s, int max_waiters)
{
    swf_dev_options_t opt = {.deciders = 1, .time_scale = 1};
    check(swf_dev_start(&opt, &s->dev));
    strcpy(s->creds, "/tmp/swf-api-sync-XXXXXX");
    creds_write(s->creds, KEY " " SECRET " *\n");
    swf_api_config_t cfg = {.conninfo = swf_dev_conninfo(s->dev),
                            .brokers = swf_dev_brokers(s->dev),
                            .credentials = s->creds,
                            .threads = 2,
                            .sync_s = sync_s,
                            .max_sync_waiters = max_waiters,
                            .log = getenv("SYNC_LOG") ? stderr : NULL};
    check(swf_api_start(&cfg, &s->api));
    s->port = swf_api_port(s->api);
}

static void sys_stop(sys_t *s)
{
    swf_api_stop(s->api);
    unlink(s->creds);
    swf_dev_stop(s->dev);
}

/* The body of a CreateStateMachine of `name` with a definition (JSON
 * written as a JSON string) and a type. */
static json_object *machine_body(const char *name, const char *type, const char *definition)
{
    json_object *in = json_object_new_object();
    swf_json_add(in, "name", json_object_new_string(name));
    swf_json_add(in, "definition", json_object_new_string(definition));
    swf_json_add(in, "roleArn", json_object_new_string("arn:aws:iam::123456789012:role/r"));
    swf_json_add(in, "type", json_object_new_string(type));
    return in;
}

static void machine_create(sys_t *s, const char *name, const char *type, const char *definition)
{
    json_object *in = machine_body(name, type, definition);
    json_object_put(call_ok(s->port, SFN "CreateStateMachine", swf_json_str(in)));
    json_object_put(in);
}

/* The status and body of a signed call (the body's text in buf). */
static int call(sys_t *s, const char *target, const char *body, char *buf, size_t cap)
{
    char *req = request(s->port, target, body, KEY, SECRET);
    exchange(s->port, req, strlen(req), buf, cap, 30000);
    free(req);
    int status = 0;
    sscanf(buf, "HTTP/1.1 %d", &status);
    return status;
}

#define ARN "arn:aws:states:us-east-1:123456789012:stateMachine:"
/* A machine whose executions outlive the tests' waits. */
#define SLOW                                                                                       \
    "{\"StartAt\":\"W\",\"States\":{\"W\":{\"Type\":\"Wait\",\"Seconds\":60,\"End\":true}}}"

/* Sends a StartSyncExecution of machine's execution `name` and returns
 * the connection, whose answer is still to come, once the execution
 * exists (the waiter's slot is taken before the start). */
static int sync_send(sys_t *s, const char *machine, const char *name)
{
    char body[256], arn[256], buf[4096];
    snprintf(body, sizeof(body), "{\"stateMachineArn\":\"" ARN "%s\",\"name\":\"%s\"}", machine,
             name);
    char *req = request(s->port, SFN "StartSyncExecution", body, KEY, SECRET);
    int fd = connect_to(s->port);
    cr_assert_eq(send(fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
    free(req);
    snprintf(arn, sizeof(arn),
             "{\"executionArn\":\"arn:aws:states:us-east-1:123456789012:execution:%s:%s\"}",
             machine, name);
    for (int i = 0; i < 100 && call(s, SFN "DescribeExecution", arn, buf, sizeof(buf)) != 200; i++)
        usleep(50 * 1000);
    return fd;
}

Test(sync, an_express_execution_answers_with_its_end, .timeout = 300)
{
    sys_t s;
    sys_start(&s, 0, 0);
    machine_create(&s, "hello", "EXPRESS",
                   "{\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Pass\",\"Parameters\":"
                   "{\"greeting.$\":\"$.who\"},\"End\":true}}}");
    json_object *d =
        call_ok(s.port, SFN "DescribeStateMachine", "{\"stateMachineArn\":\"" ARN "hello\"}");
    cr_assert_str_eq(swf_json_get_string(d, "type"), "EXPRESS");
    json_object_put(d);

    json_object *r = call_ok(s.port, SFN "StartSyncExecution",
                             "{\"stateMachineArn\":\"" ARN "hello\",\"name\":\"h1\","
                             "\"input\":\"{\\\"who\\\":\\\"world\\\"}\"}");
    cr_assert_str_eq(swf_json_get_string(r, "status"), "SUCCEEDED", "%s", swf_json_str(r));
    cr_assert_str_eq(swf_json_get_string(r, "output"), "{\"greeting\":\"world\"}");
    cr_assert_str_eq(swf_json_get_string(r, "executionArn"),
                     "arn:aws:states:us-east-1:123456789012:execution:hello:h1");
    cr_assert_str_eq(swf_json_get_string(r, "name"), "h1");
    json_object *bill = NULL, *stop = NULL;
    cr_assert(swf_json_get(r, "billingDetails", &bill));
    cr_assert(swf_json_get(r, "stopDate", &stop));
    cr_assert(json_object_get_int64(json_object_object_get(bill, "billedDurationInMilliseconds")) >=
              100);
    json_object_put(r);

    /* swf keeps it: DescribeExecution works (AWS has none for express). */
    d = call_ok(s.port, SFN "DescribeExecution",
                "{\"executionArn\":\"arn:aws:states:us-east-1:123456789012:execution:hello:h1\"}");
    cr_assert_str_eq(swf_json_get_string(d, "status"), "SUCCEEDED");
    json_object_put(d);

    /* StartExecution of an EXPRESS machine: an asynchronous express run. */
    r = call_ok(s.port, SFN "StartExecution",
                "{\"stateMachineArn\":\"" ARN "hello\",\"name\":\"h2\",\"input\":\"{}\"}");
    cr_assert_not_null(swf_json_get_string(r, "executionArn"));
    json_object_put(r);

    /* A failing one: FAILED with its error and cause, no output. */
    machine_create(&s, "boom", "EXPRESS",
                   "{\"StartAt\":\"F\",\"States\":{\"F\":{\"Type\":\"Fail\",\"Error\":\"Bad\","
                   "\"Cause\":\"it broke\"}}}");
    r = call_ok(s.port, SFN "StartSyncExecution", "{\"stateMachineArn\":\"" ARN "boom\"}");
    cr_assert_str_eq(swf_json_get_string(r, "status"), "FAILED", "%s", swf_json_str(r));
    cr_assert_str_eq(swf_json_get_string(r, "error"), "Bad");
    cr_assert_str_eq(swf_json_get_string(r, "cause"), "it broke");
    cr_assert_null(swf_json_get_string(r, "output"));
    json_object_put(r);
    sys_stop(&s);
}

Test(sync, refuses_what_aws_refuses_of_express_and_of_standard, .timeout = 300)
{
    sys_t s;
    sys_start(&s, 0, 0);
    char buf[16384];
    static const char *const refused[] = {
        "arn:aws:states:us-east-1:123456789012:activity:work",
        "arn:aws:states:::ecs:runTask.sync",
        "arn:aws:states:::glue:startJobRun.sync:2",
        "arn:aws:states:::lambda:invoke.waitForTaskToken",
    };
    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        char def[512];
        snprintf(def, sizeof(def),
                 "{\"StartAt\":\"M\",\"States\":{\"M\":{\"Type\":\"Map\",\"ItemProcessor\":{"
                 "\"StartAt\":\"T\",\"States\":{\"T\":{\"Type\":\"Task\",\"Resource\":\"%s\","
                 "\"End\":true}}},\"End\":true}}}",
                 refused[i]);
        json_object *in = machine_body("express", "EXPRESS", def);
        cr_assert_eq(call(&s, SFN "CreateStateMachine", swf_json_str(in), buf, sizeof(buf)), 400,
                     "%s: %s", refused[i], buf);
        cr_assert(strstr(buf, "InvalidDefinition") != NULL, "%s", buf);
        cr_assert(strstr(buf, "$.States.M.ItemProcessor.States.T.Resource") != NULL, "%s", buf);
        /* ValidateStateMachineDefinition says the same for type EXPRESS. */
        json_object *v = json_object_new_object();
        swf_json_add(v, "definition", json_object_new_string(def));
        swf_json_add(v, "type", json_object_new_string("EXPRESS"));
        json_object *r = call_ok(s.port, SFN "ValidateStateMachineDefinition", swf_json_str(v));
        cr_assert_str_eq(swf_json_get_string(r, "result"), "FAIL", "%s", swf_json_str(r));
        cr_assert(strstr(swf_json_str(r), "$.States.M.ItemProcessor.States.T.Resource") != NULL);
        json_object_put(r);
        json_object_object_add(v, "type", json_object_new_string("STANDARD"));
        r = call_ok(s.port, SFN "ValidateStateMachineDefinition", swf_json_str(v));
        cr_assert_str_eq(swf_json_get_string(r, "result"), "OK", "%s", swf_json_str(r));
        json_object_put(r);
        json_object_put(v);
        /* The same definition is a STANDARD machine's right. */
        json_object_object_add(in, "type", json_object_new_string("STANDARD"));
        char name[16];
        snprintf(name, sizeof(name), "standard%zu", i);
        json_object_object_add(in, "name", json_object_new_string(name));
        cr_assert_eq(call(&s, SFN "CreateStateMachine", swf_json_str(in), buf, sizeof(buf)), 200,
                     "%s", buf);
        json_object_put(in);
    }
    /* An update of an EXPRESS machine is held to the same rules. */
    machine_create(&s, "fast", "EXPRESS",
                   "{\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Pass\",\"End\":true}}}");
    cr_assert_eq(call(&s, SFN "UpdateStateMachine",
                      "{\"stateMachineArn\":\"" ARN "fast\",\"definition\":\"{\\\"StartAt\\\":"
                      "\\\"T\\\",\\\"States\\\":{\\\"T\\\":{\\\"Type\\\":\\\"Task\\\","
                      "\\\"Resource\\\":\\\"arn:aws:states:::lambda:invoke.waitForTaskToken\\\","
                      "\\\"End\\\":true}}}\"}",
                      buf, sizeof(buf)),
                 400, "%s", buf);
    cr_assert(strstr(buf, "InvalidDefinition") != NULL, "%s", buf);
    cr_assert_eq(call(&s, SFN "CreateStateMachine",
                      "{\"name\":\"x\",\"definition\":\"{}\",\"roleArn\":\"r\",\"type\":\"FAST\"}",
                      buf, sizeof(buf)),
                 400);
    cr_assert(strstr(buf, "ValidationException") != NULL, "%s", buf);
    cr_assert_eq(call(&s, SFN "StartSyncExecution", "{\"stateMachineArn\":\"" ARN "standard0\"}",
                      buf, sizeof(buf)),
                 400);
    cr_assert(strstr(buf, "StateMachineTypeNotSupported") != NULL, "%s", buf);
    cr_assert_eq(call(&s, SFN "StartSyncExecution", "{\"stateMachineArn\":\"" ARN "nothing\"}", buf,
                      sizeof(buf)),
                 400);
    cr_assert(strstr(buf, "StateMachineDoesNotExist") != NULL, "%s", buf);
    sys_stop(&s);
}

Test(sync, the_wait_is_bounded_and_ends_the_execution, .timeout = 300)
{
    sys_t s;
    sys_start(&s, 1, 1);
    machine_create(&s, "slow", "EXPRESS", SLOW);
    /* One waiter at a time: a second while the first waits is throttled. */
    int fd = sync_send(&s, "slow", "s1");
    char buf[16384];
    cr_assert_eq(call(&s, SFN "StartSyncExecution",
                      "{\"stateMachineArn\":\"" ARN "slow\",\"name\":\"s2\"}", buf, sizeof(buf)),
                 400, "%s", buf);
    cr_assert(strstr(buf, "ThrottlingException") != NULL, "%s", buf);

    /* The first one's answer after its 1 s: TIMED_OUT. */
    answer_read(fd, buf, sizeof(buf), 10000);
    cr_assert(strncmp(buf, "HTTP/1.1 200", 12) == 0, "%s", buf);
    json_object *r = parse(strstr(buf, "\r\n\r\n") + 4);
    cr_assert_str_eq(swf_json_get_string(r, "status"), "TIMED_OUT", "%s", swf_json_str(r));
    cr_assert_str_eq(swf_json_get_string(r, "error"), "States.Timeout");
    json_object_put(r);

    /* The execution was stopped with that error. */
    const char *status = NULL;
    json_object *d = NULL;
    for (int i = 0; i < 100; i++) {
        json_object_put(d);
        d = call_ok(s.port, SFN "DescribeExecution",
                    "{\"executionArn\":\"arn:aws:states:us-east-1:123456789012:execution:slow:"
                    "s1\"}");
        status = swf_json_get_string(d, "status");
        if (strcmp(status, "RUNNING") != 0)
            break;
        usleep(100 * 1000);
    }
    cr_assert_str_eq(status, "ABORTED", "%s", swf_json_str(d));
    cr_assert_str_eq(swf_json_get_string(d, "error"), "States.Timeout");
    json_object_put(d);
    sys_stop(&s);
}

Test(sync, answers_mutated_start_sync_bodies_and_stays_up, .timeout = 600)
{
    sys_t s;
    sys_start(&s, 2, 0);
    machine_create(&s, "m", "EXPRESS",
                   "{\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Pass\",\"End\":true}}}");
    fuzz_corpus_t seeds = {0};
    fuzz_corpus_add(&seeds, "{\"stateMachineArn\": \"" ARN "m\", \"name\": \"e\", "
                            "\"input\": \"{\\\"a\\\": [1, \\\"x\\\"]}\", \"traceHeader\": \"t\"}");
    fuzz_corpus_add(&seeds, "{\"stateMachineArn\": \"" ARN "m:1\", \"input\": \"{}\"}");
    fuzz_t f = fuzz_start();
    long rounds = fuzz_rounds(150);
    char buf[16384];
    for (long i = 0; i < rounds; i++) {
        char *m = fuzz_mutate(&f, seeds.v[fuzz_below(&f, seeds.n)], &seeds);
        int st = call(&s, SFN "StartSyncExecution", m, buf, sizeof(buf));
        cr_assert(st == 200 || st == 400, "%s: %d %s", m, st, buf);
        free(m);
    }
    fuzz_corpus_free(&seeds);
    /* Still answering, and no waiter left behind. */
    json_object *r =
        call_ok(s.port, SFN "StartSyncExecution", "{\"stateMachineArn\":\"" ARN "m\"}");
    cr_assert_str_eq(swf_json_get_string(r, "status"), "SUCCEEDED", "%s", swf_json_str(r));
    json_object_put(r);
    sys_stop(&s);
}

Test(sync, a_waiter_is_told_to_retry_when_the_server_stops, .timeout = 300)
{
    sys_t s;
    sys_start(&s, 0, 0);
    machine_create(&s, "slow", "EXPRESS", SLOW);
    /* A first run, so that the second's start (PostgreSQL, then Kafka)
     * is quick, and it waits when the server stops. */
    machine_create(&s, "fast", "EXPRESS",
                   "{\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Pass\",\"End\":true}}}");
    json_object_put(
        call_ok(s.port, SFN "StartSyncExecution", "{\"stateMachineArn\":\"" ARN "fast\"}"));
    int fd = sync_send(&s, "slow", "w1");
    char buf[16384];
    usleep(500 * 1000);
    swf_api_stop(s.api);
    s.api = NULL;
    answer_read(fd, buf, sizeof(buf), 10000);
    cr_assert(strncmp(buf, "HTTP/1.1 503", 12) == 0, "%s", buf);
    cr_assert(strstr(buf, "ServiceUnavailable") != NULL, "%s", buf);
    sys_stop(&s);
}
