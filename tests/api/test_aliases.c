/*
 * test_aliases.c - state machine aliases over a real socket (swf-api on a
 * dev system, cli/dev.h): AWS's validation of a routing (one or two
 * versions of one machine, weights summing to 100), idempotent creation,
 * StartExecution on an alias ARN drawing its version by the weights (the
 * version recorded in the history is the one DescribeExecution names),
 * a routed-to version that cannot be deleted, listing and deleting.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "cli/dev.h"
#include "client.h"
#include "history/pg.h"

#define ARN "arn:aws:states:us-east-1:123456789012:"

SWF_API_TEST_SUITE(aliases);

static const char *PASS1 = "{\\\"StartAt\\\":\\\"P\\\",\\\"States\\\":{\\\"P\\\":{\\\"Type\\\":"
                           "\\\"Pass\\\",\\\"Result\\\":1,\\\"End\\\":true}}}";
static const char *PASS2 = "{\\\"StartAt\\\":\\\"P\\\",\\\"States\\\":{\\\"P\\\":{\\\"Type\\\":"
                           "\\\"Pass\\\",\\\"Result\\\":2,\\\"End\\\":true}}}";

/* Machine `name` with versions 1 and 2. */
static void machine_with_two_versions(const char *name)
{
    char body[1024];
    snprintf(body, sizeof(body), "{\"name\":\"%s\",\"definition\":\"%s\",\"roleArn\":\"" ARN "r\"}",
             name, PASS1);
    json_object_put(call_ok(port, SFN "CreateStateMachine", body));
    snprintf(body, sizeof(body),
             "{\"stateMachineArn\":\"" ARN "stateMachine:%s\",\"definition\":\"%s\"}", name, PASS2);
    json_object_put(call_ok(port, SFN "UpdateStateMachine", body));
}

/* A CreateStateMachineAlias body: alias `name` over the routes, each
 * "MACHINE:VERSION=WEIGHT". */
static char *alias_body(const char *name, const char *description, int n, const char *const *routes)
{
    static char body[2048];
    size_t o =
        (size_t)snprintf(body, sizeof(body), "{\"name\":\"%s\",%s%s%s\"routingConfiguration\":[",
                         name, description ? "\"description\":\"" : "",
                         description ? description : "", description ? "\"," : "");
    for (int i = 0; i < n; i++) {
        char m[128];
        int w = 0;
        const char *eq = strchr(routes[i], '=');
        snprintf(m, sizeof(m), "%.*s", (int)(eq - routes[i]), routes[i]);
        w = atoi(eq + 1);
        o += (size_t)snprintf(body + o, sizeof(body) - o,
                              "%s{\"stateMachineVersionArn\":\"" ARN "stateMachine:%s\","
                              "\"weight\":%d}",
                              i ? "," : "", m, w);
    }
    snprintf(body + o, sizeof(body) - o, "]}");
    return body;
}

/* The request is refused with status and AWS's error name. */
static void refused(const char *action, const char *body, int status, const char *type)
{
    expect_signed(port, action, body, KEY, SECRET, status, type);
}

static int64_t int_of(json_object *o, const char *key)
{
    json_object *v = NULL;
    cr_assert(swf_json_get(o, key, &v), "no %s in %s", key, swf_json_str(o));
    return json_object_get_int64(v);
}

Test(aliases, routing_is_validated_as_aws_validates_it)
{
    machine_with_two_versions("Al");
    machine_with_two_versions("Other");
    static const struct {
        const char *name;
        int n;
        const char *routes[3];
        const char *error;
    } bad[] = {
        {"live", 2, {"Al:1=60", "Al:2=30"}, "ValidationException"},           /* sum 90 */
        {"live", 3, {"Al:1=50", "Al:2=50", "Al:1=0"}, "ValidationException"}, /* three */
        {"live", 2, {"Al:1=50", "Al:1=50"}, "ValidationException"},           /* twice */
        {"live", 2, {"Al:1=50", "Other:2=50"}, "ValidationException"},        /* two machines */
        {"live", 1, {"Al:9=100"}, "ResourceNotFound"},                        /* no version 9 */
        {"live", 1, {"Al=100"}, "ValidationException"},                       /* not a version */
        {"live", 1, {"Al:1=101"}, "ValidationException"},                     /* weight */
        {"123", 1, {"Al:1=100"}, "InvalidName"},                              /* a number */
        {"li ve", 1, {"Al:1=100"}, "InvalidName"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        refused(SFN "CreateStateMachineAlias",
                alias_body(bad[i].name, NULL, bad[i].n, bad[i].routes), 400, bad[i].error);
    refused(SFN "CreateStateMachineAlias", "{\"name\":\"live\"}", 400, "ValidationException");

    const char *const routes[] = {"Al:1=70", "Al:2=30"};
    json_object *a =
        call_ok(port, SFN "CreateStateMachineAlias", alias_body("live", "canary", 2, routes));
    cr_assert_str_eq(swf_json_get_string(a, "stateMachineAliasArn"), ARN "stateMachine:Al:live");
    /* The same again is the same alias; another routing is a conflict. */
    json_object *again =
        call_ok(port, SFN "CreateStateMachineAlias", alias_body("live", "canary", 2, routes));
    cr_assert_eq(int_of(again, "creationDate"), int_of(a, "creationDate"));
    json_object_put(again);
    json_object_put(a);
    const char *const other[] = {"Al:1=100"};
    refused(SFN "CreateStateMachineAlias", alias_body("live", "canary", 1, other), 409,
            "ConflictException");

    json_object *d = call_ok(port, SFN "DescribeStateMachineAlias",
                             "{\"stateMachineAliasArn\":\"" ARN "stateMachine:Al:live\"}");
    cr_assert_str_eq(swf_json_get_string(d, "name"), "live");
    cr_assert_str_eq(swf_json_get_string(d, "description"), "canary");
    cr_assert_str_eq(swf_json_str(swf_json_get(d, "routingConfiguration", &a) ? a : NULL),
                     "[{\"stateMachineVersionArn\":\"" ARN "stateMachine:Al:1\",\"weight\":70},"
                     "{\"stateMachineVersionArn\":\"" ARN "stateMachine:Al:2\",\"weight\":30}]");
    json_object_put(d);
    refused(SFN "DescribeStateMachineAlias",
            "{\"stateMachineAliasArn\":\"" ARN "stateMachine:Al:nope\"}", 400, "ResourceNotFound");
    refused(SFN "DescribeStateMachineAlias",
            "{\"stateMachineAliasArn\":\"" ARN "stateMachine:Al:2\"}", 400, "InvalidArn");
}

/* Starts `id` on the alias; the version DescribeExecution names, checked
 * against the one the history runs. */
static int start_on_alias(swf_history_store_t *store, const char *alias, const char *id)
{
    char body[512];
    snprintf(body, sizeof(body),
             "{\"stateMachineArn\":\"" ARN "stateMachine:Al:%s\",\"name\":\"%s\"}", alias, id);
    json_object_put(call_ok(port, SFN "StartExecution", body));
    snprintf(body, sizeof(body), "{\"executionArn\":\"" ARN "execution:Al:%s\"}", id);
    json_object *d = call_ok(port, SFN "DescribeExecution", body);
    char want[256];
    snprintf(want, sizeof(want), ARN "stateMachine:Al:%s", alias);
    cr_assert_str_eq(swf_json_get_string(d, "stateMachineAliasArn"), want);
    const char *varn = swf_json_get_string(d, "stateMachineVersionArn");
    cr_assert_not_null(varn, "%s", swf_json_str(d));
    int v = atoi(strrchr(varn, ':') + 1);
    json_object_put(d);
    swf_history_execution_t ex;
    check(swf_history_pg_execution_describe(store, id, &ex));
    cr_assert_eq(atoi(ex.state_machine_version), v);
    swf_history_execution_free(&ex);
    return v;
}

Test(aliases, start_execution_on_an_alias_draws_its_version_by_the_weights)
{
    machine_with_two_versions("Al");
    const char *const routes[] = {"Al:1=50", "Al:2=50"};
    json_object_put(
        call_ok(port, SFN "CreateStateMachineAlias", alias_body("split", NULL, 2, routes)));
    swf_history_store_t *store;
    check(swf_history_pg_new(swf_dev_conninfo(dev), &store));
    int runs[3] = {0};
    for (int i = 0; i < 30; i++) {
        char id[32];
        snprintf(id, sizeof(id), "split-%d", i);
        runs[start_on_alias(store, "split", id)]++;
    }
    cr_assert(runs[1] > 0 && runs[2] > 0, "versions 1 and 2 ran %d and %d times", runs[1], runs[2]);

    /* All to version 2 now; version 2 cannot be deleted while routed to. */
    json_object *u = call_ok(port, SFN "UpdateStateMachineAlias",
                             "{\"stateMachineAliasArn\":\"" ARN "stateMachine:Al:split\","
                             "\"routingConfiguration\":[{\"stateMachineVersionArn\":\"" ARN
                             "stateMachine:Al:2\",\"weight\":100}]}");
    cr_assert(int_of(u, "updateDate") > 0);
    json_object_put(u);
    for (int i = 0; i < 5; i++) {
        char id[32];
        snprintf(id, sizeof(id), "two-%d", i);
        cr_assert_eq(start_on_alias(store, "split", id), 2);
    }
    refused(SFN "DeleteStateMachineVersion",
            "{\"stateMachineVersionArn\":\"" ARN "stateMachine:Al:2\"}", 409, "ConflictException");
    refused(SFN "UpdateStateMachineAlias",
            "{\"stateMachineAliasArn\":\"" ARN "stateMachine:Al:split\"}", 400,
            "ValidationException");

    /* Listed by machine, and by version (only the aliases routing to it). */
    json_object *l = call_ok(port, SFN "ListStateMachineAliases",
                             "{\"stateMachineArn\":\"" ARN "stateMachine:Al\"}");
    cr_assert(strstr(swf_json_str(l), "\"stateMachineAliasArn\":\"" ARN "stateMachine:Al:split\""),
              "%s", swf_json_str(l));
    json_object_put(l);
    l = call_ok(port, SFN "ListStateMachineAliases",
                "{\"stateMachineArn\":\"" ARN "stateMachine:Al:1\"}");
    cr_assert_str_eq(swf_json_str(l), "{\"stateMachineAliases\":[]}");
    json_object_put(l);
    refused(SFN "ListStateMachineAliases", "{\"stateMachineArn\":\"" ARN "stateMachine:Nobody\"}",
            400, "StateMachineDoesNotExist");

    /* Deleted: gone, and version 2 may go. */
    json_object_put(call_ok(port, SFN "DeleteStateMachineAlias",
                            "{\"stateMachineAliasArn\":\"" ARN "stateMachine:Al:split\"}"));
    refused(SFN "DeleteStateMachineAlias",
            "{\"stateMachineAliasArn\":\"" ARN "stateMachine:Al:split\"}", 400, "ResourceNotFound");
    refused(SFN "StartExecution",
            "{\"stateMachineArn\":\"" ARN "stateMachine:Al:split\",\"name\":\"late\"}", 400,
            "ResourceNotFound");
    json_object_put(call_ok(port, SFN "DeleteStateMachineVersion",
                            "{\"stateMachineVersionArn\":\"" ARN "stateMachine:Al:2\"}"));
    swf_history_store_free(store);
}
