/*
 * test_server.c - api/server.c over a real socket, on a dev system
 * (PostgreSQL and the mock Kafka cluster, cli/dev.h): what reaches an
 * action and what is refused before, with AWS's error names and statuses;
 * a fuzz round over request bytes (headers and bodies) that must never
 * crash or hang the server (the suite runs under the sanitizers too); the
 * idle timeout; the long poll's empty answer and its bound; a CloudEvent
 * POSTed to /events/NAME in structured and binary mode.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../dev_cluster.h"
#include "../fuzz.h"
#include "client.h"
#include "api/api.h"
#include "api/sigv4.h"
#include "cli/dev.h"
#include "history/pg.h"

typedef struct sys {
    swf_dev_t *dev;
    swf_api_t *api;
    char creds[64];
} sys_t;

static void sys_start(sys_t *s, int poll_s, int max_pollers, int idle_s)
{
    swf_dev_options_t opt = {.deciders = 0, .time_scale = 1};
    check(swf_dev_start(&opt, &s->dev));
    s->api = api_up(
        s->dev, s->creds,
        (swf_api_config_t){.poll_s = poll_s, .max_pollers = max_pollers, .idle_timeout_s = idle_s});
}

static void sys_stop(sys_t *s)
{
    api_down(s->api, s->creds);
    swf_dev_stop(s->dev);
}

Test(server, refuses_what_is_not_a_signed_request_with_aws_error_names, .timeout = 300)
{
    sys_t s;
    sys_start(&s, 0, 0, 0);
    int port = swf_api_port(s.api);
    expect_signed(port, SFN "ListStateMachines", "{}", KEY, SECRET, 200, NULL);
    expect_signed(port, SFN "ListStateMachines", "{}", NULL, NULL, 400,
                  "MissingAuthenticationTokenException");
    expect_signed(port, SFN "ListStateMachines", "{}", KEY, "wrong", 400,
                  "InvalidSignatureException");
    expect_signed(port, SFN "ListStateMachines", "{}", "AKIDNOBODY", "x", 400,
                  "UnrecognizedClientException");
    expect_signed(port, SFN "NoSuchAction", "{}", KEY, SECRET, 400, "UnknownOperationException");
    expect_signed(port, SFN "ListStateMachines", "{not json", KEY, SECRET, 400,
                  "SerializationException");
    expect_signed(port, SFN "ListStateMachines", "[]", KEY, SECRET, 400, "SerializationException");
    expect_signed(port, SFN "DescribeStateMachine", "{}", KEY, SECRET, 400, "ValidationException");
    expect_signed(port, SFN "DescribeExecution", "{\"executionArn\": \"x\"}", KEY, SECRET, 400,
                  "InvalidArn");
    expect_signed(port, SFN "DescribeExecution",
                  "{\"executionArn\": \"arn:aws:states:us-east-1:1:execution:m:e\"}", KEY, SECRET,
                  400, "ExecutionDoesNotExist");
    /* A key scoped to one activity may not touch a state machine. */
    expect_signed(port, SFN "DescribeStateMachine",
                  "{\"stateMachineArn\": \"arn:aws:states:us-east-1:1:stateMachine:m\"}",
                  "AKIDNARROW", "narrow-secret", 400, "AccessDeniedException");
    /* A body over the limit is refused from its Content-Length. */
    char big[256];
    snprintf(big, sizeof(big),
             "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %u\r\nConnection: close\r\n\r\n{",
             SWF_API_BODY_BYTES + 1);
    expect(port, big, 413, "RequestEntityTooLarge");
    expect(port, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 400,
           "UnknownOperationException");
    sys_stop(&s);
}

Test(server, survives_a_fuzz_round_over_request_headers_and_bodies, .timeout = 600)
{
    sys_t s;
    sys_start(&s, 0, 0, 2);
    int port = swf_api_port(s.api);
    fuzz_corpus_t seeds = {0};
    static const char *const bodies[] = {
        "{}",
        "{\"stateMachineArn\": \"arn:aws:states:us-east-1:1:stateMachine:m\", \"name\": \"e\", "
        "\"input\": \"{\\\"a\\\": [1, 2, {\\\"b\\\": null}]}\"}",
        "{\"definition\": \"{\\\"StartAt\\\": \\\"P\\\", \\\"States\\\": {\\\"P\\\": "
        "{\\\"Type\\\": \\\"Pass\\\", \\\"End\\\": true}}}\", \"name\": \"m\", \"roleArn\": "
        "\"arn:aws:iam::1:role/r\"}",
        "{\"taskToken\": \"eyJlIjoiZTEiLCJhIjoiMSJ9.zrzs\", \"output\": \"{}\"}",
    };
    static const char *const targets[] = {SFN "ListStateMachines", SFN "StartExecution",
                                          SFN "CreateStateMachine", SFN "SendTaskSuccess"};
    for (size_t i = 0; i < 4; i++) {
        char *r = request(port, targets[i], bodies[i], KEY, SECRET);
        fuzz_corpus_add(&seeds, r);
        free(r);
    }
    fuzz_t f = fuzz_start();
    long rounds = fuzz_rounds(300);
    char resp[65536];
    for (long i = 0; i < rounds; i++) {
        char *m = fuzz_mutate(&f, seeds.v[fuzz_below(&f, seeds.n)], &seeds);
        /* Whatever came back (an error, or nothing for a request that
         * never ends), the server must still be there. */
        exchange(port, m, strlen(m), resp, sizeof(resp), 300);
        free(m);
    }
    fuzz_corpus_free(&seeds);
    expect_signed(port, SFN "ListStateMachines", "{}", KEY, SECRET, 200, NULL);
    sys_stop(&s);
}

Test(server, closes_a_connection_that_stays_idle, .timeout = 300)
{
    sys_t s;
    sys_start(&s, 0, 0, 1);
    int fd = connect_to(swf_api_port(s.api));
    send(fd, "POST / HTTP/1.1\r\nHost: x\r\n", 26, MSG_NOSIGNAL);
    struct pollfd p = {fd, POLLIN, 0};
    /* Closed (readable, then end of file) within a few seconds. */
    cr_assert(poll(&p, 1, 10000) > 0, "the idle connection was not closed");
    char c;
    cr_assert(recv(fd, &c, 1, 0) <= 0 || true);
    close(fd);
    expect_signed(swf_api_port(s.api), SFN "ListStateMachines", "{}", KEY, SECRET, 200, NULL);
    sys_stop(&s);
}

Test(server, answers_a_poll_without_a_task_empty_and_bounds_the_pollers, .timeout = 300)
{
    sys_t s;
    sys_start(&s, 2, 1, 0);
    int port = swf_api_port(s.api);
    const char *body = "{\"activityArn\": \"arn:aws:states:us-east-1:1:activity:idle\"}";
    char *req = request(port, SFN "GetActivityTask", body, KEY, SECRET);
    /* One poller waits (its request is sent, the answer read later)... */
    int fd = connect_to(port);
    cr_assert_eq(send(fd, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
    usleep(300000);
    /* ...so a second is over the bound of one. */
    expect(port, req, 400, "ActivityWorkerLimitExceeded");
    int64_t t0 = swf_time_now_ms();
    char resp[4096];
    size_t got = 0;
    struct pollfd p = {fd, POLLIN, 0};
    while (poll(&p, 1, 10000) > 0) {
        ssize_t n = recv(fd, resp + got, sizeof(resp) - 1 - got, 0);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    resp[got] = '\0';
    close(fd);
    cr_assert(strstr(resp, "HTTP/1.1 200") != NULL, "%s", resp);
    cr_assert(strstr(resp, "\r\n\r\n{}") != NULL, "not empty: %s", resp);
    cr_assert(swf_time_now_ms() - t0 < 5000);
    free(req);
    sys_stop(&s);
}

/* A poller on a connection kept alive: it polls again as soon as it is
 * answered, until the server closes the connection; counts the answers. */
typedef struct repoller {
    int fd;
    char *req; /* a GetActivityTask without Connection: close */
    int answers;
} repoller_t;

/* Reads one answer (headers and Content-Length bytes); false at the end. */
static bool answer_one(int fd, char *buf, size_t cap)
{
    size_t got = 0;
    struct pollfd p = {fd, POLLIN, 0};
    while (got + 1 < cap && poll(&p, 1, 30000) > 0) {
        ssize_t n = recv(fd, buf + got, cap - 1 - got, 0);
        if (n <= 0)
            return false;
        got += (size_t)n;
        buf[got] = '\0';
        const char *body = strstr(buf, "\r\n\r\n"), *cl = strstr(buf, "Content-Length: ");
        if (body != NULL && cl != NULL && got >= (size_t)(body + 4 - buf) + strtoul(cl + 16, 0, 10))
            return true;
    }
    return false;
}

static void *repoll(void *arg)
{
    repoller_t *r = arg;
    char buf[4096];
    for (;;) {
        if (send(r->fd, r->req, strlen(r->req), MSG_NOSIGNAL) <= 0 ||
            !answer_one(r->fd, buf, sizeof(buf)))
            break;
        cr_assert(strncmp(buf, "HTTP/1.1 200", 12) == 0, "%s", buf);
        r->answers++;
    }
    return NULL;
}

Test(server, stopping_with_pollers_waiting_answers_them_empty_and_then_polls_that_come_after,
     .timeout = 300)
{
    sys_t s;
    sys_start(&s, 60, 0, 0);
    int port = swf_api_port(s.api);
    const char *body = "{\"activityArn\": \"arn:aws:states:us-east-1:1:activity:stop\"}";
    char *req = request(port, SFN "GetActivityTask", body, KEY, SECRET);
    /* Eight pollers wait on their own connections... */
    enum { NPOLLERS = 8 };
    int fds[NPOLLERS];
    for (int i = 0; i < NPOLLERS; i++) {
        fds[i] = connect_to(port);
        cr_assert_eq(send(fds[i], req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
    }
    /* ...and one on a connection kept alive, which polls again when it is
     * answered: its next poll comes while the server stops (it used to
     * find the poll thread's state freed). */
    repoller_t r = {.fd = connect_to(port), .req = strdup(req)};
    char *close_hdr = strstr(r.req, "Connection: close\r\n");
    cr_assert_not_null(close_hdr);
    memmove(close_hdr, close_hdr + 19, strlen(close_hdr + 19) + 1);
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, repoll, &r), 0);
    usleep(500 * 1000);
    int64_t t0 = swf_time_now_ms();
    swf_api_stop(s.api);
    s.api = NULL;
    cr_assert_lt(swf_time_now_ms() - t0, 30000, "the stop waited for the polls' end");
    char resp[4096];
    for (int i = 0; i < NPOLLERS; i++) {
        answer_read(fds[i], resp, sizeof(resp), 10000);
        cr_assert(strncmp(resp, "HTTP/1.1 200", 12) == 0, "poller %d: %s", i, resp);
        cr_assert(strstr(resp, "\r\n\r\n{}") != NULL, "poller %d not empty: %s", i, resp);
    }
    pthread_join(t, NULL);
    close(r.fd);
    cr_assert_geq(r.answers, 1, "the kept-alive poller was not answered");
    free(r.req);
    free(req);
    swf_dev_stop(s.dev);
    unlink(s.creds);
}

/* The JSON body of the answer to a signed request, which must have status 200. */
Test(server, versions_are_the_versions_of_the_catalogue, .timeout = 300)
{
    sys_t s;
    sys_start(&s, 0, 0, 0);
    int port = swf_api_port(s.api);
    json_object_put(call_ok(port, SFN "CreateStateMachine",
                            "{\"name\": \"v\", \"roleArn\": \"arn:aws:iam::1:role/r\", "
                            "\"definition\": \"{\\\"StartAt\\\": \\\"A\\\", \\\"States\\\": "
                            "{\\\"A\\\": {\\\"Type\\\": \\\"Pass\\\", \\\"End\\\": true}}}\"}"));
    json_object_put(call_ok(port, SFN "UpdateStateMachine",
                            "{\"stateMachineArn\": \"arn:aws:states:us-east-1:123456789012:"
                            "stateMachine:v\", \"definition\": \"{\\\"StartAt\\\": \\\"B\\\", "
                            "\\\"States\\\": {\\\"B\\\": {\\\"Type\\\": \\\"Pass\\\", \\\"End\\\": "
                            "true}}}\"}"));
    json_object *o = call_ok(port, SFN "PublishStateMachineVersion",
                             "{\"stateMachineArn\": \"arn:aws:states:us-east-1:123456789012:"
                             "stateMachine:v\"}");
    cr_assert_str_eq(swf_json_get_string(o, "stateMachineVersionArn"),
                     "arn:aws:states:us-east-1:123456789012:stateMachine:v:2");
    json_object_put(o);
    o = call_ok(port, SFN "ListStateMachineVersions",
                "{\"stateMachineArn\": \"arn:aws:states:us-east-1:123456789012:stateMachine:v\", "
                "\"maxResults\": 1}");
    json_object *list;
    cr_assert(swf_json_get(o, "stateMachineVersions", &list));
    cr_assert_eq(json_object_array_length(list), 1);
    cr_assert_str_eq(swf_json_get_string(o, "nextToken"), "2");
    json_object_put(o);
    o = call_ok(
        port, SFN "DescribeStateMachine",
        "{\"stateMachineArn\": \"arn:aws:states:us-east-1:123456789012:stateMachine:v:1\"}");
    cr_assert(strstr(swf_json_get_string(o, "definition"), "\"A\"") != NULL);
    json_object_put(o);
    /* An execution of version 1 runs version 1's definition. */
    json_object_put(call_ok(port, SFN "StartExecution",
                            "{\"stateMachineArn\": \"arn:aws:states:us-east-1:123456789012:"
                            "stateMachine:v:1\", \"name\": \"on-v1\"}"));
    o = call_ok(port, SFN "DescribeStateMachineForExecution",
                "{\"executionArn\": \"arn:aws:states:us-east-1:123456789012:execution:v:on-v1\"}");
    cr_assert(strstr(swf_json_get_string(o, "definition"), "\"A\"") != NULL);
    json_object_put(o);
    json_object_put(call_ok(port, SFN "DeleteStateMachineVersion",
                            "{\"stateMachineVersionArn\": \"arn:aws:states:us-east-1:"
                            "123456789012:stateMachine:v:1\"}"));
    expect_signed(
        port, SFN "DescribeStateMachine",
        "{\"stateMachineArn\": \"arn:aws:states:us-east-1:123456789012:stateMachine:v:1\"}", KEY,
        SECRET, 400, "StateMachineDoesNotExist");
    expect_signed(port, SFN "DescribeStateMachine",
                  "{\"stateMachineArn\": \"arn:aws:states:us-east-1:123456789012:stateMachine:v:"
                  "prod\"}",
                  KEY, SECRET, 400, "InvalidArn");
    sys_stop(&s);
}

Test(server, tags_a_resource_within_aws_bounds, .timeout = 300)
{
    sys_t s;
    sys_start(&s, 0, 0, 0);
    int port = swf_api_port(s.api);
    json_object_put(call_ok(port, SFN "CreateActivity",
                            "{\"name\": \"t\", \"tags\": [{\"key\": \"a\", \"value\": \"1\"}]}"));
    const char *arn = "{\"resourceArn\": \"arn:aws:states:us-east-1:1:activity:t\"";
    char body[8192];
    snprintf(body, sizeof(body), "%s, \"tags\": [{\"key\": \"b\", \"value\": \"2\"}]}", arn);
    json_object_put(call_ok(port, SFN "TagResource", body));
    snprintf(body, sizeof(body), "%s}", arn);
    json_object *o = call_ok(port, SFN "ListTagsForResource", body);
    cr_assert_str_eq(
        swf_json_str(o),
        "{\"tags\":[{\"key\":\"a\",\"value\":\"1\"},{\"key\":\"b\",\"value\":\"2\"}]}");
    json_object_put(o);
    /* 49 more are one too many: nothing of them is kept. */
    size_t n = (size_t)snprintf(body, sizeof(body), "%s, \"tags\": [", arn);
    for (int i = 0; i < 49; i++)
        n += (size_t)snprintf(body + n, sizeof(body) - n, "%s{\"key\": \"k%d\", \"value\": \"v\"}",
                              i ? ", " : "", i);
    snprintf(body + n, sizeof(body) - n, "]}");
    expect_signed(port, SFN "TagResource", body, KEY, SECRET, 400, "TooManyTags");
    snprintf(body, sizeof(body), "%s, \"tagKeys\": [\"a\"]}", arn);
    json_object_put(call_ok(port, SFN "UntagResource", body));
    snprintf(body, sizeof(body), "%s}", arn);
    o = call_ok(port, SFN "ListTagsForResource", body);
    cr_assert_str_eq(swf_json_str(o), "{\"tags\":[{\"key\":\"b\",\"value\":\"2\"}]}");
    json_object_put(o);
    expect_signed(port, SFN "ListTagsForResource",
                  "{\"resourceArn\": \"arn:aws:states:us-east-1:1:activity:none\"}", KEY, SECRET,
                  400, "ResourceNotFound");
    expect_signed(port, SFN "DescribeMapRun", "{\"mapRunArn\": \"x\"}", KEY, SECRET, 400,
                  "InvalidArn");
    sys_stop(&s);
}

/* The status of the answer to a signed request (0: no answer). */
/* The fuzz round above mostly stops at the signature; this one signs each
 * mutated body, so that every action's validation sees it. */
Test(server, answers_every_action_with_mutated_signed_bodies_as_a_client_error, .timeout = 600)
{
    sys_t s;
    sys_start(&s, 1, 0, 0);
    int port = swf_api_port(s.api);
    static const char *const targets[] = {
        "CreateStateMachine",
        "DescribeStateMachine",
        "UpdateStateMachine",
        "ListStateMachines",
        "StartExecution",
        "DescribeExecution",
        "StopExecution",
        "ListExecutions",
        "GetExecutionHistory",
        "CreateActivity",
        "ListActivities",
        "SendTaskSuccess",
        "SendTaskFailure",
        "SendTaskHeartbeat",
        "TagResource",
        "UntagResource",
        "ListStateMachineVersions",
        "DescribeStateMachineForExecution",
        "GetActivityTask",
        "PublishStateMachineVersion",
        "DeleteStateMachineVersion",
        "ListMapRuns",
        "DescribeMapRun",
        "UpdateMapRun",
    };
    fuzz_corpus_t seeds = {0};
    fuzz_corpus_add(&seeds, "{\"name\": \"m\", \"roleArn\": \"arn:aws:iam::1:role/r\", "
                            "\"definition\": \"{\\\"StartAt\\\": \\\"P\\\", \\\"States\\\": "
                            "{\\\"P\\\": {\\\"Type\\\": \\\"Pass\\\", \\\"End\\\": true}}}\", "
                            "\"tags\": [{\"key\": \"k\", \"value\": \"v\"}]}");
    fuzz_corpus_add(&seeds, "{\"stateMachineArn\": \"arn:aws:states:us-east-1:1:stateMachine:m\", "
                            "\"name\": \"e\", \"input\": \"{\\\"a\\\": 1}\", \"maxResults\": 2, "
                            "\"statusFilter\": \"RUNNING\", \"nextToken\": \"1\"}");
    fuzz_corpus_add(&seeds, "{\"executionArn\": \"arn:aws:states:us-east-1:1:execution:m:e\", "
                            "\"reverseOrder\": true, \"maxResults\": 1, \"error\": \"E\", "
                            "\"cause\": \"c\"}");
    fuzz_corpus_add(&seeds, "{\"mapRunArn\": \"arn:aws:states:us-east-1:1:mapRun:m/L:e-1\", "
                            "\"maxConcurrency\": 2, \"toleratedFailurePercentage\": 5.5, "
                            "\"toleratedFailureCount\": 1}");
    fuzz_corpus_add(&seeds, "{\"taskToken\": \"eyJlIjoiZSIsImEiOiIxIn0.x\", \"output\": \"{}\", "
                            "\"error\": \"E\", \"cause\": \"c\"}");
    fuzz_corpus_add(&seeds, "{\"resourceArn\": \"arn:aws:states:us-east-1:1:stateMachine:m\", "
                            "\"tagKeys\": [\"k\"], \"tags\": [{\"key\": \"a\"}], "
                            "\"activityArn\": \"arn:aws:states:us-east-1:1:activity:m\", "
                            "\"stateMachineVersionArn\": "
                            "\"arn:aws:states:us-east-1:1:stateMachine:m:1\"}");
    /* The seeds themselves first (a machine and an execution to find). */
    size_t nt = sizeof(targets) / sizeof(targets[0]);
    for (size_t t = 0; t < nt; t++) {
        char target[96];
        snprintf(target, sizeof(target), SFN "%s", targets[t]);
        for (size_t i = 0; i < seeds.n; i++) {
            int st = status_of(port, target, seeds.v[i]);
            cr_assert(st == 200 || st == 400, "%s %s: %d", target, seeds.v[i], st);
        }
    }
    fuzz_t f = fuzz_start();
    long rounds = fuzz_rounds(400);
    for (long i = 0; i < rounds; i++) {
        char *m = fuzz_mutate(&f, seeds.v[fuzz_below(&f, seeds.n)], &seeds);
        char target[96];
        snprintf(target, sizeof(target), SFN "%s", targets[fuzz_below(&f, nt)]);
        int st = status_of(port, target, m);
        cr_assert(st == 200 || st == 400 || st == 413, "%s %s: %d", target, m, st);
        free(m);
    }
    fuzz_corpus_free(&seeds);
    sys_stop(&s);
}

/* ---- POST /events/NAME (api/events.c) ------------------------------------------ */

/* A signed POST of a CloudEvent to path: content type ct, extra (unsigned)
 * header lines, the body. Returns the answer's body after checking the
 * status. */
static const char *event_post(int port, const char *path, const char *ct, const char *extra,
                              const char *body, int status)
{
    char date[17], host[32];
    time_t now = time(NULL);
    strftime(date, sizeof(date), "%Y%m%dT%H%M%SZ", gmtime(&now));
    snprintf(host, sizeof(host), "127.0.0.1:%d", port);
    swf_api_header_t h[] = {{"Content-Type", ct}, {"Host", host}, {"X-Amz-Date", date}};
    char sha[65], sig[65] = "";
    swf_api_sha256_hex(body, strlen(body), sha);
    swf_api_sigv4_request_t r = {"POST", path, NULL, h, 3, sha};
    swf_api_sigv4_auth_t a = {.region = "us-east-1", .service = "states"};
    snprintf(a.access_key, sizeof(a.access_key), "%s", KEY);
    memcpy(a.date, date, 8);
    strcpy(a.signed_headers, "content-type;host;x-amz-date");
    check(swf_api_sigv4_sign(&r, SECRET, date, &a, sig));
    char req[8192];
    snprintf(req, sizeof(req),
             "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nX-Amz-Date: %s\r\n%s"
             "Authorization: AWS4-HMAC-SHA256 Credential=%s/%.8s/us-east-1/states/"
             "aws4_request, SignedHeaders=%s, Signature=%s\r\nContent-Length: %zu\r\n"
             "Connection: close\r\n\r\n%s",
             path, host, ct, date, extra, KEY, date, a.signed_headers, sig, strlen(body), body);
    static char resp[65536];
    size_t n = exchange(port, req, strlen(req), resp, sizeof(resp) - 1, 10000);
    resp[n] = '\0';
    int got = 0;
    sscanf(resp, "HTTP/1.1 %d", &got);
    cr_assert_eq(got, status, "%d, not %d: %s", got, status, resp);
    const char *b = strstr(resp, "\r\n\r\n");
    cr_assert_not_null(b);
    return b + 4;
}

Test(server, routes_a_posted_cloudevent_in_structured_and_binary_mode, .timeout = 300)
{
    sys_t s;
    sys_start(&s, 1, 8, 30);
    int port = swf_api_port(s.api);
    swf_history_store_t *store = NULL;
    check(swf_history_pg_new(swf_dev_conninfo(s.dev), &store));
    json_object *def =
        parse("{\"trigger-defs\":[{\"name\":\"Req\",\"source\":\"/portal\",\"correlation-token\":"
              "\"$.data.loan\"}],\"states\":[{\"name\":\"Start\",\"type\":\"EVENT\",\"start\":true,"
              "\"events\":[{\"event-expression\":\"Req\",\"next-state\":\"Done\"}]},"
              "{\"name\":\"Done\",\"type\":\"END\"}]}");
    int version = 0;
    check(swf_history_pg_state_machine_register(store, "loans", def, &version));
    json_object_put(def);
    swf_history_store_free(store);
    const char *ev = "{\"specversion\":\"1.0\",\"id\":\"e1\",\"source\":\"/portal\",\"type\":\"t\","
                     "\"data\":{\"loan\":\"L1\"}}";
    const char *b = event_post(port, "/events/loans", "application/cloudevents+json", "", ev, 200);
    cr_assert_not_null(strstr(b, "\"outcome\":\"started\""), "%s", b);
    b = event_post(port, "/events/loans", "application/cloudevents+json", "", ev, 200);
    cr_assert_not_null(strstr(b, "\"outcome\":\"duplicate\""), "%s", b);
    /* Binary mode: the attributes in ce-* headers, the body the data. */
    b = event_post(port, "/events/loans", "application/json",
                   "ce-specversion: 1.0\r\nce-id: e2\r\nce-source: /portal\r\nce-type: t\r\n",
                   "{\"loan\":\"L2\"}", 200);
    cr_assert_not_null(strstr(b, "\"outcome\":\"started\""), "%s", b);
    b = event_post(port, "/events/loans", "text/plain",
                   "ce-specversion: 1.0\r\nce-id: e3\r\nce-source: /elsewhere\r\nce-type: t\r\n",
                   "hello", 200);
    cr_assert_not_null(strstr(b, "\"dropped\":\"no trigger of loans fits"), "%s", b);
    b = event_post(port, "/events/loans", "application/json", "ce-id: e4\r\n", "{}", 200);
    cr_assert_not_null(strstr(b, "\"dropped\":\"malformed"), "%s", b);
    b = event_post(port, "/events/nope", "application/cloudevents+json", "", ev, 400);
    cr_assert_not_null(strstr(b, "StateMachineDoesNotExist"), "%s", b);
    b = event_post(port, "/events/loans", "application/cloudevents+json", "", "{\"id\":", 400);
    cr_assert_not_null(strstr(b, "SerializationException"), "%s", b);
    sys_stop(&s);
}
