/*
 * test_choice.c - proves decider/asl/choice.c.
 *
 * Three layers, from the inside out: the comparison logic on values already
 * resolved (swf_asl__choice_apply, which needs no path evaluator), whole
 * rules read through real paths ("$.x", "$", "$$.State.Name"), and the
 * conformance corpus's Choice cases, run as one data-driven test over the
 * files in cases/choice.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "decider/asl/choice.h"
#include "protocol/json.h"
#include "protocol/limits.h"

/* Internal to choice.c, exported for this test. */
swf_error_t *swf_asl__choice_apply(const char *name, bool present, json_object *value,
                                   json_object *operand, bool *matched);

static json_object *J(const char *text)
{
    json_object *v = NULL;
    swf_error_t *err = swf_json_parse(text, strlen(text), SWF_LIMIT_JSON_BYTES, &v);
    cr_assert_null(err, "bad test JSON %s: %s", text, err ? swf_error_message(err) : "");
    return v;
}

/* Applies op to the JSON texts value and operand; asserts no error. */
static bool apply(const char *op, const char *value, const char *operand)
{
    json_object *v = J(value), *o = J(operand);
    bool matched = true;
    swf_error_t *err = swf_asl__choice_apply(op, true, v, o, &matched);
    cr_assert_null(err, "%s %s %s: %s", value, op, operand, err ? swf_error_message(err) : "");
    json_object_put(v);
    json_object_put(o);
    return matched;
}

static bool apply_error(const char *op, bool present, const char *value, const char *operand)
{
    json_object *v = J(value), *o = J(operand);
    bool matched = true;
    swf_error_t *err = swf_asl__choice_apply(op, present, v, o, &matched);
    bool failed = err != NULL && strcmp(swf_error_name(err), "States.Runtime") == 0;
    swf_error_free(err);
    json_object_put(v);
    json_object_put(o);
    return failed && !matched;
}

Test(choice_apply, numbers_compare_by_value)
{
    cr_expect(apply("NumericEquals", "1", "1.0"));
    cr_expect(apply("NumericEquals", "1.0", "1"));
    cr_expect(apply("NumericEquals", "1e2", "100"));
    cr_expect_not(apply("NumericEquals", "1", "1.5"));
    cr_expect(apply("NumericLessThan", "1", "1.5"));
    cr_expect_not(apply("NumericLessThan", "2", "2"));
    cr_expect(apply("NumericLessThanEquals", "2", "2.0"));
    cr_expect(apply("NumericGreaterThan", "-1", "-1.5"));
    cr_expect_not(apply("NumericGreaterThan", "3", "3"));
    cr_expect(apply("NumericGreaterThanEquals", "3", "3"));
    cr_expect(apply("NumericGreaterThanEquals", "-0.0", "0"));
}

Test(choice_apply, integer_and_double_compare_exactly)
{
    /* 2^53 + 1 is not representable as a double: a conversion would make
     * it equal 2^53. */
    cr_expect_not(apply("NumericEquals", "9007199254740993", "9007199254740992.0"));
    cr_expect(apply("NumericGreaterThan", "9007199254740993", "9007199254740992.0"));
    cr_expect(apply("NumericLessThan", "9007199254740992.0", "9007199254740993"));
    cr_expect(apply("NumericLessThan", "9223372036854775807", "1e19"));
    cr_expect(apply("NumericGreaterThan", "-9223372036854775807", "-1e19"));
    cr_expect(apply("NumericLessThan", "-3", "-2.5"));
    cr_expect(apply("NumericGreaterThan", "-2", "-2.5"));
}

Test(choice_apply, numeric_operators_never_match_other_types)
{
    cr_expect_not(apply("NumericEquals", "\"1\"", "1"));
    cr_expect_not(apply("NumericLessThan", "\"0\"", "1"));
    cr_expect_not(apply("NumericGreaterThanEquals", "null", "0"));
    cr_expect_not(apply("NumericEquals", "true", "1"));
    cr_expect_not(apply("NumericEquals", "[1]", "1"));
    cr_expect_not(apply("NumericEquals", "1", "\"1\""));
}

Test(choice_apply, booleans_do_not_coerce)
{
    cr_expect(apply("BooleanEquals", "true", "true"));
    cr_expect(apply("BooleanEquals", "false", "false"));
    cr_expect_not(apply("BooleanEquals", "false", "true"));
    cr_expect_not(apply("BooleanEquals", "\"true\"", "true"));
    cr_expect_not(apply("BooleanEquals", "1", "true"));
    cr_expect_not(apply("BooleanEquals", "0", "false"));
    cr_expect_not(apply("BooleanEquals", "null", "false"));
}

Test(choice_apply, strings_are_case_sensitive_and_typed)
{
    cr_expect(apply("StringEquals", "\"abc\"", "\"abc\""));
    cr_expect_not(apply("StringEquals", "\"abc\"", "\"ABC\""));
    cr_expect_not(apply("StringEquals", "1", "\"1\""));
    cr_expect_not(apply("StringEquals", "null", "\"null\""));
    cr_expect(apply("StringEquals", "\"\"", "\"\""));
    cr_expect(apply("StringEquals", "\"a\\u0000b\"", "\"a\\u0000b\""));
    cr_expect_not(apply("StringEquals", "\"a\\u0000b\"", "\"a\\u0000c\""));
}

Test(choice_apply, strings_order_by_utf16_code_units)
{
    cr_expect(apply("StringLessThan", "\"Zebra\"", "\"apple\""));
    cr_expect(apply("StringLessThan", "\"app\"", "\"apple\""));
    cr_expect_not(apply("StringLessThan", "\"apple\"", "\"app\""));
    cr_expect(apply("StringGreaterThan", "\"b\"", "\"abc\""));
    cr_expect(apply("StringLessThanEquals", "\"x\"", "\"x\""));
    cr_expect_not(apply("StringLessThan", "\"x\"", "\"x\""));
    cr_expect(apply("StringGreaterThanEquals", "\"x\"", "\"x\""));
    cr_expect_not(apply("StringGreaterThanEquals", "\"a\"", "\"b\""));
    cr_expect(apply("StringLessThan", "\"\"", "\"a\""));
    /* U+1F600 is the surrogate pair D83D DE00 in UTF-16, which sorts before
     * U+FF61; in UTF-8 bytes (F0 ... against EF ...) it would sort after. */
    cr_expect(apply("StringLessThan", "\"\\ud83d\\ude00\"", "\"\\uff61\""));
    cr_expect(apply("StringGreaterThan", "\"\\uff61\"", "\"\\ud83d\\ude00\""));
    /* Within the BMP code unit order is code point order. */
    cr_expect(apply("StringLessThan", "\"\\u00e9\"", "\"\\u4e2d\""));
    cr_expect(apply("StringLessThan", "\"z\"", "\"\\u00e9\""));
    cr_expect_not(apply("StringLessThan", "1", "\"2\""));
}

Test(choice_apply, string_matches_is_a_whole_string_glob)
{
    cr_expect(apply("StringMatches", "\"log-2024.txt\"", "\"log-*.txt\""));
    cr_expect(apply("StringMatches", "\"log-.txt\"", "\"log-*.txt\""));
    cr_expect_not(apply("StringMatches", "\"log-1.txt.bak\"", "\"log-*.txt\""));
    cr_expect_not(apply("StringMatches", "\"xlog-1.txt\"", "\"log-*.txt\""));
    cr_expect(apply("StringMatches", "\"anything\"", "\"*\""));
    cr_expect(apply("StringMatches", "\"\"", "\"*\""));
    cr_expect(apply("StringMatches", "\"\"", "\"\""));
    cr_expect_not(apply("StringMatches", "\"a\"", "\"\""));
    cr_expect(apply("StringMatches", "\"abcbcd\"", "\"a*bcd\""));
    cr_expect(apply("StringMatches", "\"aXbYc\"", "\"a**b*c\""));
    cr_expect(apply("StringMatches", "\"mississippi\"", "\"*iss*ppi\""));
    cr_expect_not(apply("StringMatches", "\"mississippi\"", "\"*iss*ppx\""));
    cr_expect(apply("StringMatches", "\"\\u00e9t\\u00e9\"", "\"*t\\u00e9\""));
    cr_expect_not(apply("StringMatches", "1", "\"*\""));
    cr_expect_not(apply("StringMatches", "null", "\"*\""));
}

Test(choice_apply, string_matches_escapes_and_literals)
{
    /* JSON "a\\*b" is the pattern a\*b: a literal star. */
    cr_expect(apply("StringMatches", "\"a*b\"", "\"a\\\\*b\""));
    cr_expect_not(apply("StringMatches", "\"axxb\"", "\"a\\\\*b\""));
    /* JSON "a\\\\b" is the pattern a\\b: one literal backslash. */
    cr_expect(apply("StringMatches", "\"a\\\\b\"", "\"a\\\\\\\\b\""));
    cr_expect_not(apply("StringMatches", "\"a\\\\\\\\b\"", "\"a\\\\\\\\b\""));
    /* An escaped backslash before a star leaves the star a wildcard. */
    cr_expect(apply("StringMatches", "\"a\\\\xyz\"", "\"a\\\\\\\\*\""));
    /* ? and other glob or regex characters are literal. */
    cr_expect(apply("StringMatches", "\"a?c\"", "\"a?c\""));
    cr_expect_not(apply("StringMatches", "\"abc\"", "\"a?c\""));
    cr_expect_not(apply("StringMatches", "\"abc\"", "\"a.c\""));
    cr_expect_not(apply("StringMatches", "\"b\"", "\"[abc]\""));
    cr_expect(apply("StringMatches", "\"[abc]\"", "\"[abc]\""));
}

Test(choice_apply, timestamps_compare_as_instants)
{
    cr_expect(apply("TimestampEquals", "\"2016-03-14T01:59:00Z\"", "\"2016-03-14T01:59:00Z\""));
    cr_expect(
        apply("TimestampEquals", "\"2016-03-14T01:59:00Z\"", "\"2016-03-14T02:59:00+01:00\""));
    cr_expect(apply("TimestampEquals", "\"2016-03-14T01:59:00.000Z\"", "\"2016-03-14T01:59:00Z\""));
    cr_expect(apply("TimestampLessThan", "\"2016-03-14T01:59:00.1Z\"",
                    "\"2016-03-14T01:59:00.100000001Z\""));
    cr_expect(
        apply("TimestampLessThanEquals", "\"2016-03-14T01:59:00Z\"", "\"2016-03-14T01:59:00Z\""));
    cr_expect(
        apply("TimestampGreaterThan", "\"2017-01-01T00:00:00Z\"", "\"2016-12-31T23:59:59Z\""));
    cr_expect(apply("TimestampGreaterThanEquals", "\"2017-01-01T00:00:00Z\"",
                    "\"2016-12-31T23:59:59Z\""));
    cr_expect_not(
        apply("TimestampGreaterThan", "\"2016-12-31T23:59:59Z\"", "\"2017-01-01T00:00:00Z\""));
}

Test(choice_apply, non_timestamps_never_match)
{
    cr_expect_not(apply("TimestampEquals", "\"2016-03-14\"", "\"2016-03-14T00:00:00Z\""));
    cr_expect_not(apply("TimestampLessThan", "0", "\"2016-03-14T00:00:00Z\""));
    cr_expect_not(apply("TimestampEquals", "\"2016-03-14T00:00:00\"", "\"2016-03-14T00:00:00\""));
    cr_expect_not(apply("TimestampGreaterThan", "\"2016-03-14T00:00:00Z\"", "\"yesterday\""));
    cr_expect_not(apply("TimestampEquals", "null", "\"2016-03-14T00:00:00Z\""));
}

Test(choice_apply, type_tests_with_true_and_false)
{
    cr_expect(apply("IsNull", "null", "true"));
    cr_expect_not(apply("IsNull", "0", "true"));
    cr_expect(apply("IsNull", "\"null\"", "false"));
    cr_expect(apply("IsNumeric", "1.5", "true"));
    cr_expect(apply("IsNumeric", "\"1\"", "false"));
    cr_expect(apply("IsNumeric", "null", "false"));
    cr_expect(apply("IsString", "\"\"", "true"));
    cr_expect(apply("IsString", "[]", "false"));
    cr_expect(apply("IsBoolean", "false", "true"));
    cr_expect(apply("IsBoolean", "0", "false"));
    cr_expect(apply("IsTimestamp", "\"2016-03-14T01:59:00Z\"", "true"));
    cr_expect(apply("IsTimestamp", "\"2016-03-14\"", "false"));
    cr_expect(apply("IsTimestamp", "12", "false"));
    cr_expect(apply("IsPresent", "null", "true"));
    cr_expect_not(apply("IsPresent", "null", "false"));
}

Test(choice_apply, is_present_alone_accepts_a_missing_value)
{
    bool matched = false;
    json_object *t = J("true"), *f = J("false");
    cr_assert_null(swf_asl__choice_apply("IsPresent", false, NULL, f, &matched));
    cr_expect(matched);
    cr_assert_null(swf_asl__choice_apply("IsPresent", false, NULL, t, &matched));
    cr_expect_not(matched);
    json_object_put(t);
    json_object_put(f);
    cr_expect(apply_error("IsNull", false, "null", "true"));
    cr_expect(apply_error("StringEquals", false, "null", "\"a\""));
    cr_expect(apply_error("IsNumeric", false, "null", "false"));
}

Test(choice_apply, malformed_operators_are_errors)
{
    cr_expect(apply_error("StringContains", true, "\"a\"", "\"a\""));
    cr_expect(apply_error("StringEqualsPath", true, "\"a\"", "\"a\""));
    cr_expect(apply_error("IsNull", true, "null", "\"true\""));
    cr_expect(apply_error("IsPresent", true, "1", "1"));
}

/* Rules through real paths. */

static json_object *ctx;
static swf_asl_env_t env;

static void env_setup(void)
{
    ctx = J("{\"State\":{\"Name\":\"C\"},\"Execution\":{\"Id\":\"e1\"}}");
    env = (swf_asl_env_t){.context = ctx, .variables = NULL, .rng = NULL};
}

static void env_teardown(void)
{
    json_object_put(ctx);
}

/* Evaluates the rule on the input; *err_name gets the error's name, or NULL. */
static bool rule(const char *rule_text, const char *input_text, const char **err_name)
{
    static char name[64];
    json_object *r = J(rule_text), *in = J(input_text);
    bool matched = false;
    swf_error_t *err = swf_asl_choice_rule_eval(r, in, &env, &matched);
    *err_name = NULL;
    if (err != NULL) {
        snprintf(name, sizeof(name), "%s", swf_error_name(err) ? swf_error_name(err) : "?");
        *err_name = name;
        cr_expect_not(matched);
    }
    swf_error_free(err);
    json_object_put(r);
    json_object_put(in);
    return matched;
}

static bool rule_ok(const char *rule_text, const char *input_text)
{
    const char *err_name;
    bool m = rule(rule_text, input_text, &err_name);
    cr_expect_null(err_name, "%s on %s failed with %s", rule_text, input_text, err_name);
    return m;
}

static bool rule_fails(const char *rule_text, const char *input_text)
{
    const char *err_name;
    rule(rule_text, input_text, &err_name);
    return err_name != NULL && strcmp(err_name, "States.Runtime") == 0;
}

TestSuite(choice_rule, .init = env_setup, .fini = env_teardown);

Test(choice_rule, variable_reads_input_context_and_whole_input)
{
    cr_expect(rule_ok("{\"Variable\":\"$.x\",\"NumericEquals\":3}", "{\"x\":3}"));
    cr_expect_not(rule_ok("{\"Variable\":\"$.x\",\"NumericEquals\":4}", "{\"x\":3}"));
    cr_expect(rule_ok("{\"Variable\":\"$\",\"NumericGreaterThan\":10}", "11"));
    cr_expect(rule_ok("{\"Variable\":\"$$.State.Name\",\"StringEquals\":\"C\"}", "{}"));
    cr_expect(rule_ok("{\"Variable\":\"$.a.b\",\"IsNull\":true}", "{\"a\":{\"b\":null}}"));
}

Test(choice_rule, missing_variable_is_a_runtime_error)
{
    cr_expect(rule_fails("{\"Variable\":\"$.absent\",\"StringEquals\":\"a\"}", "{\"v\":\"b\"}"));
    cr_expect(rule_fails("{\"Variable\":\"$.absent\",\"IsNull\":true}", "{}"));
    cr_expect(rule_fails("{\"Variable\":\"$.absent\",\"IsString\":false}", "{}"));
}

Test(choice_rule, missing_variable_error_names_the_path)
{
    json_object *r = J("{\"Variable\":\"$.absent\",\"StringEquals\":\"a\"}"), *in = J("{}");
    bool matched = true;
    swf_error_t *err = swf_asl_choice_rule_eval(r, in, &env, &matched);
    cr_assert_not_null(err);
    cr_expect_eq(swf_error_code(err), SWF_E_STATES);
    cr_expect_str_eq(swf_error_name(err), "States.Runtime");
    cr_expect_not_null(strstr(swf_error_message(err), "$.absent"), "%s", swf_error_message(err));
    swf_error_free(err);
    json_object_put(r);
    json_object_put(in);
}

Test(choice_rule, is_present_asks_without_error)
{
    cr_expect_not(rule_ok("{\"Variable\":\"$.nope\",\"IsPresent\":true}", "{\"v\":1}"));
    cr_expect(rule_ok("{\"Variable\":\"$.nope\",\"IsPresent\":false}", "{\"v\":1}"));
    cr_expect(rule_ok("{\"Variable\":\"$.v\",\"IsPresent\":true}", "{\"v\":null}"));
    cr_expect_not(rule_ok("{\"Variable\":\"$.v\",\"IsPresent\":false}", "{\"v\":1}"));
}

Test(choice_rule, path_operands_read_the_input)
{
    cr_expect(
        rule_ok("{\"Variable\":\"$.a\",\"NumericLessThanPath\":\"$.b\"}", "{\"a\":1,\"b\":2}"));
    cr_expect_not(
        rule_ok("{\"Variable\":\"$.a\",\"NumericGreaterThanPath\":\"$.b\"}", "{\"a\":1,\"b\":2}"));
    cr_expect(
        rule_ok("{\"Variable\":\"$.a\",\"NumericEqualsPath\":\"$.b\"}", "{\"a\":1,\"b\":1.0}"));
    cr_expect(
        rule_ok("{\"Variable\":\"$.a\",\"StringEqualsPath\":\"$$.State.Name\"}", "{\"a\":\"C\"}"));
    cr_expect(rule_ok("{\"Variable\":\"$.a\",\"BooleanEqualsPath\":\"$.b\"}",
                      "{\"a\":false,\"b\":false}"));
    cr_expect_not(rule_ok("{\"Variable\":\"$.a\",\"BooleanEqualsPath\":\"$.b\"}",
                          "{\"a\":false,\"b\":\"false\"}"));
    cr_expect(rule_ok("{\"Variable\":\"$.a\",\"TimestampEqualsPath\":\"$.b\"}",
                      "{\"a\":\"2012-10-09T19:00:55Z\",\"b\":\"2012-10-09T21:00:55+02:00\"}"));
    cr_expect(rule_ok("{\"Variable\":\"$.a\",\"StringGreaterThanEqualsPath\":\"$.b\"}",
                      "{\"a\":\"b\",\"b\":\"a\"}"));
}

Test(choice_rule, missing_path_operand_is_a_runtime_error)
{
    cr_expect(rule_fails("{\"Variable\":\"$.a\",\"NumericEqualsPath\":\"$.nope\"}", "{\"a\":1}"));
    cr_expect(
        rule_fails("{\"Variable\":\"$.a\",\"StringEqualsPath\":\"$.nope\"}", "{\"a\":\"x\"}"));
}

Test(choice_rule, and_or_not_nest)
{
    const char *r = "{\"And\":[{\"Or\":[{\"Variable\":\"$.x\",\"NumericLessThan\":0},"
                    "{\"Variable\":\"$.x\",\"NumericGreaterThan\":100}]},"
                    "{\"Not\":{\"Variable\":\"$.skip\",\"BooleanEquals\":true}}]}";
    cr_expect(rule_ok(r, "{\"x\":150,\"skip\":false}"));
    cr_expect(rule_ok(r, "{\"x\":-1,\"skip\":false}"));
    cr_expect_not(rule_ok(r, "{\"x\":50,\"skip\":false}"));
    cr_expect_not(rule_ok(r, "{\"x\":150,\"skip\":true}"));
    cr_expect(rule_ok("{\"Not\":{\"Not\":{\"Not\":{\"Variable\":\"$\",\"IsNull\":true}}}}", "1"));
    cr_expect(rule_ok("{\"And\":[{\"Variable\":\"$\",\"IsNumeric\":true}]}", "1"));
    cr_expect_not(rule_ok("{\"Or\":[{\"Variable\":\"$\",\"IsString\":true},"
                          "{\"Variable\":\"$\",\"IsBoolean\":true}]}",
                          "1"));
}

Test(choice_rule, and_or_short_circuit)
{
    /* The second sub-rule's Variable is missing; it is never reached. */
    cr_expect_not(rule_ok("{\"And\":[{\"Variable\":\"$.x\",\"NumericEquals\":2},"
                          "{\"Variable\":\"$.gone\",\"NumericEquals\":1}]}",
                          "{\"x\":1}"));
    cr_expect(rule_ok("{\"Or\":[{\"Variable\":\"$.x\",\"NumericEquals\":1},"
                      "{\"Variable\":\"$.gone\",\"NumericEquals\":1}]}",
                      "{\"x\":1}"));
    cr_expect(rule_fails("{\"Or\":[{\"Variable\":\"$.x\",\"NumericEquals\":2},"
                         "{\"Variable\":\"$.gone\",\"NumericEquals\":1}]}",
                         "{\"x\":1}"));
}

Test(choice_rule, malformed_rules_are_errors_not_crashes)
{
    cr_expect(rule_fails("{\"Variable\":\"$.x\"}", "{\"x\":1}"));
    cr_expect(rule_fails("{\"NumericEquals\":1}", "{\"x\":1}"));
    cr_expect(rule_fails("{\"Variable\":\"$.x\",\"NumericEquals\":1,\"StringEquals\":\"a\"}",
                         "{\"x\":1}"));
    cr_expect(rule_fails("{\"And\":[]}", "{}"));
    cr_expect(rule_fails("{\"Or\":{}}", "{}"));
    cr_expect(rule_fails("[]", "{}"));
    cr_expect(rule_fails("{\"Variable\":\"$.x\",\"NumericEqualsPath\":3}", "{\"x\":3}"));
    cr_expect(rule_fails("{\"Variable\":\"$.x\",\"StringMatchesPath\":\"$.x\"}", "{\"x\":\"a\"}"));
}

Test(choice_rule, choices_pick_the_first_match)
{
    json_object *state = J("{\"Type\":\"Choice\",\"Choices\":["
                           "{\"Variable\":\"$.v\",\"NumericGreaterThan\":10,\"Next\":\"A\"},"
                           "{\"Variable\":\"$.v\",\"NumericGreaterThan\":5,\"Next\":\"B\"},"
                           "{\"Variable\":\"$.v\",\"NumericGreaterThan\":0,\"Next\":\"C\"}],"
                           "\"Default\":\"D\"}");
    const char *inputs[] = {"{\"v\":20}", "{\"v\":7}", "{\"v\":1}", "{\"v\":0}"};
    const char *want[] = {"A", "B", "C", NULL};
    for (size_t i = 0; i < 4; i++) {
        json_object *in = J(inputs[i]), *chosen = (json_object *)1;
        swf_error_t *err = swf_asl_choice_eval(state, in, &env, &chosen);
        cr_expect_null(err, "%s: %s", inputs[i], err ? swf_error_message(err) : "");
        swf_error_free(err);
        if (want[i] == NULL)
            cr_expect_null(chosen, "%s", inputs[i]);
        else
            cr_expect_str_eq(swf_json_get_string(chosen, "Next"), want[i], "%s", inputs[i]);
        json_object_put(in);
    }
    json_object_put(state);
}

Test(choice_rule, choices_stop_at_an_error)
{
    json_object *state = J("{\"Choices\":["
                           "{\"Variable\":\"$.gone\",\"IsNull\":true,\"Next\":\"A\"},"
                           "{\"Variable\":\"$.v\",\"IsNumeric\":true,\"Next\":\"B\"}]}");
    json_object *in = J("{\"v\":1}"), *chosen = (json_object *)1;
    swf_error_t *err = swf_asl_choice_eval(state, in, &env, &chosen);
    cr_assert_not_null(err);
    cr_expect_str_eq(swf_error_name(err), "States.Runtime");
    cr_expect_null(chosen);
    swf_error_free(err);
    json_object_put(in);
    json_object_put(state);
}

/*
 * The conformance corpus. Most Choice cases share one shape: a Choice state
 * "C" routing to Pass states whose Result is "matched" or "default". For
 * those, the expected outcome follows from the chosen rule alone: output
 * "matched" or "default", States.NoChoiceMatched when nothing matched and
 * there is no Default, or the error the evaluation raised. Cases of another
 * shape (loops, Fail states) need the whole interpreter and are skipped here.
 */
static json_object *read_json(const char *dir, const char *file)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    json_object *v = NULL;
    swf_error_t *err = swf_json_read_file(path, SWF_LIMIT_JSON_BYTES, &v);
    cr_assert_null(err, "%s", err ? swf_error_message(err) : "");
    return v;
}

/* The Result of the Pass state `name`, or NULL when it is not such a state. */
static const char *pass_result(json_object *states, const char *name)
{
    json_object *st;
    if (name == NULL || !swf_json_get(states, name, &st))
        return NULL;
    const char *type = swf_json_get_string(st, "Type");
    if (type == NULL || strcmp(type, "Pass") != 0)
        return NULL;
    return swf_json_get_string(st, "Result");
}

/* Runs one case; returns false when it is of another shape. */
static bool run_case(const char *dir, const char *case_name)
{
    json_object *def = read_json(dir, "definition.json");
    json_object *input = read_json(dir, "input.json");
    json_object *expected = read_json(dir, "expected.json");
    json_object *states, *c;
    bool ran = false;
    if (!swf_json_get(def, "States", &states) || !swf_json_get(states, "C", &c) ||
        swf_json_get_string(c, "Type") == NULL ||
        strcmp(swf_json_get_string(c, "Type"), "Choice") != 0)
        goto done;

    json_object *chosen = NULL;
    swf_error_t *err = swf_asl_choice_eval(c, input, &env, &chosen);
    const char *error = NULL, *output = NULL;
    char error_buf[128];
    if (err != NULL) {
        snprintf(error_buf, sizeof(error_buf), "%s", swf_error_name(err));
        error = error_buf;
        swf_error_free(err);
    } else {
        const char *next =
            chosen ? swf_json_get_string(chosen, "Next") : swf_json_get_string(c, "Default");
        if (next == NULL)
            error = "States.NoChoiceMatched";
        else if ((output = pass_result(states, next)) == NULL)
            goto done;
    }
    ran = true;
    const char *status = swf_json_get_string(expected, "status");
    if (error != NULL) {
        cr_expect_str_eq(status, "FAILED", "%s: failed with %s", case_name, error);
        const char *want = swf_json_get_string(expected, "error");
        cr_expect(want != NULL && strcmp(want, error) == 0, "%s: error %s, expected %s", case_name,
                  error, want ? want : "(none)");
    } else {
        cr_expect_str_eq(status, "SUCCEEDED", "%s: succeeded with %s", case_name, output);
        const char *want = swf_json_get_string(expected, "output");
        cr_expect(want != NULL && strcmp(want, output) == 0, "%s: output %s, expected %s",
                  case_name, output, want ? want : "(not a string)");
    }
done:
    json_object_put(def);
    json_object_put(input);
    json_object_put(expected);
    return ran;
}

#define CORPUS_DIR "/work/shared/conformance/cases/choice"

Test(choice_rule, conformance_corpus_choice_cases)
{
    DIR *d = opendir(CORPUS_DIR);
    if (d == NULL)
        cr_skip_test("no conformance corpus at %s", CORPUS_DIR);
    int ran = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char dir[768];
        snprintf(dir, sizeof(dir), "%s/%s", CORPUS_DIR, e->d_name);
        if (run_case(dir, e->d_name))
            ran++;
    }
    closedir(d);
    cr_expect_gt(ran, 40, "only %d cases had the common shape", ran);
}
