/*
 * test_resource.c - proves decider/asl/resource.c: the task list each kind
 * of Resource maps to, the deployment's map and the refusals (that a new
 * execution records the rule and the map: tests/decider/test_local.c; that a
 * history without them keeps its names: decider_test_histories).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/asl/resource.h"
#include "protocol/json.h"
#include "protocol/task_list.h"

static json_object *parse(const char *text)
{
    json_object *v = NULL;
    swf_error_t *err = swf_json_parse(text, strlen(text), 1 << 20, &v);
    cr_assert_null(err, "bad test JSON: %s", swf_error_message(err));
    return v;
}

/* The task list of a Task state given as JSON text, or the refusal. */
static void expect_list(const char *state, bool jsonata, json_object *map, const char *want)
{
    json_object *st = parse(state);
    char list[SWF_TASK_LIST_BYTES];
    swf_error_t *err = swf_asl_task_list(st, jsonata, map, list, sizeof list);
    cr_expect_null(err, "%s: %s", state, err ? swf_error_message(err) : "");
    if (err == NULL)
        cr_expect_str_eq(list, want, "%s", state);
    swf_error_free(err);
    json_object_put(st);
}

static void expect_refused(const char *state, const char *why)
{
    json_object *st = parse(state);
    char list[SWF_TASK_LIST_BYTES];
    swf_error_t *err = swf_asl_task_list(st, false, NULL, list, sizeof list);
    cr_expect_not_null(err, "%s was given %s", state, err ? "" : list);
    if (err != NULL)
        cr_expect(strstr(swf_error_message(err), why) != NULL, "%s", swf_error_message(err));
    swf_error_free(err);
    json_object_put(st);
}

Test(task_list, activities_and_functions_are_served_on_their_names)
{
    expect_list("{\"Resource\":\"arn:aws:states:us-east-1:123456789012:activity:payments\"}", false,
                NULL, "payments");
    expect_list("{\"Resource\":\"arn:aws:lambda:us-east-1:123456789012:function:Ship:prod\"}",
                false, NULL, "Ship");
    expect_list("{\"Resource\":\"plain name!\"}", false, NULL, "plain_name_");
}

Test(task_list, integrations_drop_their_pattern)
{
    expect_list("{\"Resource\":\"arn:aws:states:::sqs:sendMessage.waitForTaskToken\"}", false, NULL,
                "sqs.sendMessage");
    expect_list("{\"Resource\":\"arn:aws:states:::ecs:runTask.sync\"}", false, NULL, "ecs.runTask");
    expect_list("{\"Resource\":\"arn:aws-us-gov:states:::glue:startJobRun.sync:2\"}", false, NULL,
                "glue.startJobRun");
    expect_list("{\"Resource\":\"arn:aws:states:::aws-sdk:s3:getObject\"}", false, NULL,
                "aws-sdk.s3.getObject");
}

Test(task_list, lambda_invoke_is_served_on_the_function_it_names)
{
    expect_list("{\"Resource\":\"arn:aws:states:::lambda:invoke\",\"Parameters\":"
                "{\"FunctionName\":\"arn:aws:lambda:eu-west-1:1:function:Charge:3\"}}",
                false, NULL, "Charge");
    expect_list("{\"Resource\":\"arn:aws:states:::lambda:invoke.waitForTaskToken\","
                "\"Parameters\":{\"FunctionName\":\"Charge:live\"}}",
                false, NULL, "Charge");
    expect_list("{\"Resource\":\"arn:aws:states:::lambda:invoke\",\"Arguments\":"
                "{\"FunctionName\":\"Charge\"}}",
                true, NULL, "Charge");
    /* a name computed at run time cannot pick a list ahead of time */
    expect_list("{\"Resource\":\"arn:aws:states:::lambda:invoke\",\"Parameters\":"
                "{\"FunctionName.$\":\"$.fn\"}}",
                false, NULL, "lambda.invoke");
    expect_list("{\"Resource\":\"arn:aws:states:::lambda:invoke\",\"Arguments\":"
                "{\"FunctionName\":\"{% $states.input.fn %}\"}}",
                true, NULL, "lambda.invoke");
}

Test(task_list, a_deployment_map_names_the_list_by_resource_or_by_rule)
{
    json_object *map = parse("{\"sqs.sendMessage\":\"queue\",\"arn:aws:states:::ecs:runTask.sync\":"
                             "\"containers\"}");
    cr_assert_null(swf_task_list_map_check(map, "map"));
    expect_list("{\"Resource\":\"arn:aws:states:::sqs:sendMessage.waitForTaskToken\"}", false, map,
                "queue");
    expect_list("{\"Resource\":\"arn:aws:states:::ecs:runTask.sync\"}", false, map, "containers");
    expect_list("{\"Resource\":\"arn:aws:states:::ecs:runTask\"}", false, map, "ecs.runTask");
    json_object_put(map);
    json_object *bad = parse("{\"sqs.sendMessage\":\"has space\"}");
    swf_error_t *err = swf_task_list_map_check(bad, "map.json");
    cr_expect_not_null(err);
    if (err)
        cr_expect(strstr(swf_error_message(err), "map.json: \"sqs.sendMessage\"") != NULL);
    swf_error_free(err);
    json_object_put(bad);
}

Test(task_list, integrations_swf_cannot_serve_are_refused_with_the_reason)
{
    expect_refused("{\"Resource\":\"arn:aws:states:::sqs:sendMessage.waitForIt\"}",
                   "integration pattern");
    char long_name[400];
    snprintf(long_name, sizeof long_name, "{\"Resource\":\"%0300d\"}", 0);
    expect_refused(long_name, "the limit is 255");
}

Test(task_list, every_task_of_a_definition_is_listed_with_its_path)
{
    json_object *def = parse(
        "{\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Parallel\",\"Branches\":[{\"StartAt\":"
        "\"T\",\"States\":{\"T\":{\"Type\":\"Task\",\"Resource\":\"arn:aws:states:::sns:publish\","
        "\"End\":true}}}],\"Next\":\"M\"},\"M\":{\"Type\":\"Map\",\"ItemProcessor\":{\"StartAt\":"
        "\"U\",\"States\":{\"U\":{\"Type\":\"Task\",\"Resource\":\"arn:aws:states:::states:"
        "startExecution\",\"End\":true}}},\"ItemReader\":{\"Resource\":\"arn:aws:states:::s3:"
        "getObject\"},\"End\":true}}}");
    json_object *tasks = swf_asl_task_lists(def, NULL);
    cr_assert_eq(json_object_array_length(tasks), 3);
    json_object *t = json_object_array_get_idx(tasks, 0), *u = json_object_array_get_idx(tasks, 2);
    cr_expect_str_eq(swf_json_get_string(t, "path"), "$.States.P.Branches[0].States.T");
    cr_expect_str_eq(swf_json_get_string(t, "taskList"), "sns.publish");
    cr_expect_str_eq(swf_json_get_string(u, "path"), "$.States.M.ItemProcessor.States.U");
    cr_expect_str_eq(swf_json_get_string(u, "taskList"), "states.startExecution");
    cr_expect_str_eq(swf_json_get_string(u, "nestedExecution"), "requestResponse");
    json_object *r = json_object_array_get_idx(tasks, 1); /* a Map's reader, then its processor */
    cr_expect_str_eq(swf_json_get_string(r, "path"), "$.States.M.ItemReader");
    cr_expect_str_eq(swf_json_get_string(r, "taskList"), "s3.getObject");
    json_object_put(tasks);
    json_object_put(def);
}
