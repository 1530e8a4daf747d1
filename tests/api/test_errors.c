/*
 * test_errors.c - api/errors.c: AWS's error shapes and statuses, ARNs,
 * names and the validation of request members.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "api/internal.h"
#include "protocol/json.h"

Test(errors, answers_aws_error_names_with_their_status_and_shape)
{
    swf_error_t *err = swf_api__err("ExecutionDoesNotExist", "Execution Does Not Exist: '%s'", "x");
    cr_assert_eq(swf_api__status(err), 400);
    json_object *body = swf_api__error_body(err);
    cr_assert_str_eq(swf_json_get_string(body, "__type"), "ExecutionDoesNotExist");
    cr_assert_str_eq(swf_json_get_string(body, "message"), "Execution Does Not Exist: 'x'");
    json_object_put(body);
    swf_error_free(err);

    err = swf_api__err("RequestEntityTooLarge", "too large");
    cr_assert_eq(swf_api__status(err), 413);
    swf_error_free(err);
}

Test(errors, hides_internal_failures_from_the_client)
{
    swf_error_t *err = swf_error_new(SWF_E_DB, NULL, "relation \"events\" secret detail");
    cr_assert_eq(swf_api__status(err), 500);
    json_object *body = swf_api__error_body(err);
    cr_assert_str_eq(swf_json_get_string(body, "__type"), "InternalFailure");
    cr_assert_null(strstr(swf_json_str(body), "secret detail"));
    json_object_put(body);
    swf_error_set_retriable(err, true);
    cr_assert_eq(swf_api__status(err), 503);
    cr_assert_str_eq(swf_api__type(err), "ServiceUnavailable");
    swf_error_free(err);
}

Test(errors, writes_and_reads_arns_in_aws_forms)
{
    swf_api_t api = {.region = "eu-west-1", .account = "111122223333"};
    char arn[SWF_API_ARN_BYTES];
    swf_api__arn(&api, "stateMachine", "orders", NULL, arn);
    cr_assert_str_eq(arn, "arn:aws:states:eu-west-1:111122223333:stateMachine:orders");
    swf_api__arn(&api, "execution", "orders", "run-7", arn);
    cr_assert_str_eq(arn, "arn:aws:states:eu-west-1:111122223333:execution:orders:run-7");
    char name[SWF_API_NAME_BYTES + 1], sub[SWF_API_NAME_BYTES + 1];
    cr_assert_null(swf_api__arn_parse(arn, "execution", name, sub));
    cr_assert_str_eq(name, "orders");
    cr_assert_str_eq(sub, "run-7");
    cr_assert_null(
        swf_api__arn_parse("arn:aws:states:us-east-1:1:activity:ship", "activity", name, NULL));
    cr_assert_str_eq(name, "ship");
}

Test(errors, refuses_what_is_not_an_arn_of_its_kind)
{
    static const char *const bad[] = {
        "orders",
        "arn:aws:lambda:us-east-1:1:function:f",
        "arn:aws:states:us-east-1:1:activity:ship",
        "arn:aws:states:us-east-1:1:stateMachine:",
        "arn:aws:states:us-east-1:1:stateMachine:a:b:c",
        "arn:aws:states:us-east-1",
    };
    char name[SWF_API_NAME_BYTES + 1];
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        swf_error_t *err = swf_api__arn_parse(bad[i], "stateMachine", name, NULL);
        cr_assert_not_null(err, "accepted %s", bad[i]);
        cr_assert_str_eq(swf_error_name(err), "InvalidArn");
        swf_error_free(err);
    }
}

Test(errors, allows_the_names_aws_allows)
{
    cr_assert_null(swf_api__name_check("order-7_A.b"));
    static const char *const bad[] = {
        "",
        "a b",
        "a:b",
        "a/b",
        "a*",
        "x\x01",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        swf_error_t *err = swf_api__name_check(bad[i]);
        cr_assert_not_null(err, "accepted '%s'", bad[i]);
        cr_assert_str_eq(swf_error_name(err), "InvalidName");
        swf_error_free(err);
    }
}

Test(errors, validates_members_as_aws_does)
{
    json_object *in = json_tokener_parse("{\"name\": 7, \"maxResults\": 5000, \"flag\": \"yes\"}");
    const char *s;
    swf_error_t *err = swf_api__str(in, "name", true, 80, &s);
    cr_assert_str_eq(swf_error_name(err), "ValidationException");
    swf_error_free(err);
    err = swf_api__str(in, "missing", true, 80, &s);
    cr_assert_str_eq(swf_error_name(err), "ValidationException");
    cr_assert(strstr(swf_error_message(err), "must not be null") != NULL);
    swf_error_free(err);
    cr_assert_null(swf_api__str(in, "missing", false, 80, &s));
    cr_assert_null(s);
    int64_t n = 100;
    err = swf_api__int(in, "maxResults", 0, 1000, &n);
    cr_assert_str_eq(swf_error_name(err), "ValidationException");
    cr_assert_eq(n, 100);
    swf_error_free(err);
    bool b = false;
    err = swf_api__bool(in, "flag", &b);
    cr_assert_str_eq(swf_error_name(err), "ValidationException");
    swf_error_free(err);
    json_object_put(in);
}
