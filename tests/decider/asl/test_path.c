/*
 * test_path.c - proves decider/asl/path.c: JSONPath syntax and evaluation,
 * Reference Path checks and ResultPath application, with the semantics the
 * conformance corpus (jsonpath/, paths/, errors/) records for AWS.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "decider/asl/path.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "tests/fuzz.h"

static json_object *J(const char *text)
{
    json_object *v = NULL;
    swf_error_t *err = swf_json_parse(text, strlen(text), SWF_LIMIT_JSON_BYTES, &v);
    cr_assert_null(err, "bad test JSON: %s", text);
    return v;
}

static const char *STORE =
    "{\"store\":{\"book\":["
    "{\"category\":\"reference\",\"author\":\"Nigel Rees\",\"title\":\"Sayings\",\"price\":8.95},"
    "{\"category\":\"fiction\",\"author\":\"Evelyn Waugh\",\"title\":\"Sword\",\"price\":12.99},"
    "{\"category\":\"fiction\",\"author\":\"Herman Melville\",\"title\":\"Moby Dick\","
    "\"isbn\":\"0-553\",\"price\":8.99},"
    "{\"category\":\"fiction\",\"author\":\"Tolkien\",\"title\":\"LOTR\",\"isbn\":\"0-395\","
    "\"price\":22.99}],"
    "\"bicycle\":{\"color\":\"red\",\"price\":19.95}},"
    "\"expensive\":10,\"a b\":1,\"delivery-partner\":\"ups\",\"l\":[0,1,2,3,4,5]}";

/* Evaluates path against input and compares with the expected JSON text. */
static void expect_eval_env(const char *input_text, const char *path, const swf_asl_env_t *env,
                            const char *expected_text)
{
    json_object *input = J(input_text);
    json_object *expected = J(expected_text);
    json_object *out = NULL;
    swf_error_t *err = swf_asl_path_eval(path, input, env, &out);
    cr_assert_null(err, "%s: %s", path, err ? swf_error_message(err) : "");
    cr_assert(swf_json_equal(out, expected), "%s: got %s, expected %s", path, swf_json_str(out),
              expected_text);
    json_object_put(out);
    json_object_put(expected);
    json_object_put(input);
}

static void expect_eval(const char *input_text, const char *path, const char *expected_text)
{
    expect_eval_env(input_text, path, NULL, expected_text);
}

/* Expects an evaluation error; returns nothing, checks name and a message part. */
static void expect_eval_error(const char *input_text, const char *path, const char *name,
                              const char *message_part)
{
    json_object *input = J(input_text);
    json_object *out = NULL;
    swf_error_t *err = swf_asl_path_eval(path, input, NULL, &out);
    cr_assert_not_null(err, "%s: expected an error, got %s", path, swf_json_str(out));
    cr_assert_null(out);
    cr_assert_str_eq(swf_error_name(err), name);
    if (message_part != NULL)
        cr_assert(strstr(swf_error_message(err), message_part) != NULL, "message: %s",
                  swf_error_message(err));
    swf_error_free(err);
    json_object_put(input);
}

static void expect_check_ok(const char *path, swf_asl_path_kind_t kind)
{
    swf_error_t *err = swf_asl_path_check(path, kind);
    cr_assert_null(err, "%s: %s", path, err ? swf_error_message(err) : "");
}

static void expect_check_error(const char *path, swf_asl_path_kind_t kind, const char *part)
{
    swf_error_t *err = swf_asl_path_check(path, kind);
    cr_assert_not_null(err, "%s: expected a syntax error", path);
    cr_assert_eq(swf_error_code(err), SWF_E_INPUT);
    cr_assert(strstr(swf_error_message(err), part) != NULL, "%s: message: %s", path,
              swf_error_message(err));
    swf_error_free(err);
}

/* ---- definite paths ---- */

Test(path_eval, dollar_is_whole_input)
{
    expect_eval("{\"a\":1}", "$", "{\"a\":1}");
    expect_eval("5", "$", "5");
    expect_eval("null", "$", "null");
}

Test(path_eval, dot_notation_nested)
{
    expect_eval("{\"a\":{\"b\":{\"c\":3}}}", "$.a.b.c", "3");
    expect_eval("{\"a\":{\"b\":null}}", "$.a.b", "null");
}

Test(path_eval, bracket_notation_both_quotes)
{
    expect_eval(STORE, "$['a b']", "1");
    expect_eval(STORE, "$[\"a b\"]", "1");
    expect_eval(STORE, "$['store']['bicycle'].color", "\"red\"");
    expect_eval("{\"it's\":2}", "$['it\\'s']", "2");
    expect_eval("{\"a.b\":3}", "$['a.b']", "3");
}

Test(path_eval, dot_name_with_hyphen)
{
    expect_eval(STORE, "$.delivery-partner", "\"ups\"");
}

Test(path_eval, indexes_positive_and_negative)
{
    expect_eval(STORE, "$.l[0]", "0");
    expect_eval(STORE, "$.l[-1]", "5");
    expect_eval(STORE, "$.store.book[1].author", "\"Evelyn Waugh\"");
    expect_eval("{\"m\":[[1,2],[3,4]]}", "$.m[1][0]", "3");
    expect_eval("[{\"v\":7}]", "$[0].v", "7");
}

Test(path_eval, definite_missing_field_is_runtime_error)
{
    expect_eval_error("{\"a\":1}", "$.x", "States.Runtime",
                      "the JSONPath '$.x' could not be found in the input '{\"a\":1}'");
}

Test(path_eval, definite_index_out_of_range_is_runtime_error)
{
    expect_eval_error("{\"l\":[1,2]}", "$.l[10]", "States.Runtime", "$.l[10]");
    expect_eval_error("{\"l\":[1,2]}", "$.l[-3]", "States.Runtime", NULL);
}

Test(path_eval, definite_field_on_array_or_scalar_is_runtime_error)
{
    expect_eval_error("{\"list\":[{\"name\":\"a\"}]}", "$.list.name", "States.Runtime", NULL);
    expect_eval_error("{\"a\":5}", "$.a.b", "States.Runtime", NULL);
    expect_eval_error("null", "$.a", "States.Runtime", NULL);
    expect_eval_error("{\"a\":{}}", "$.a[0]", "States.Runtime", NULL);
}

Test(path_eval, error_message_cuts_long_input)
{
    char big[2000];
    strcpy(big, "{\"s\":\"");
    memset(big + 6, 'x', 1500);
    strcpy(big + 1506, "\"}");
    json_object *input = J(big);
    json_object *out = NULL;
    swf_error_t *err = swf_asl_path_eval("$.nope", input, NULL, &out);
    cr_assert_not_null(err);
    cr_assert_lt(strlen(swf_error_message(err)), 400);
    swf_error_free(err);
    json_object_put(input);
}

Test(path_eval, result_shares_the_input_node)
{
    json_object *input = J("{\"a\":{\"b\":[1,2]}}");
    json_object *out = NULL;
    cr_assert_null(swf_asl_path_eval("$.a", input, NULL, &out));
    json_object *a = NULL;
    json_object_object_get_ex(input, "a", &a);
    cr_assert_eq(out, a);
    json_object_put(out);
    json_object_put(input);
}

/* ---- context object and variables ---- */

Test(path_eval, context_object_paths)
{
    json_object *ctx = J("{\"Execution\":{\"Id\":\"e1\",\"Input\":{\"k\":1}},"
                         "\"Map\":{\"Item\":{\"Index\":3}}}");
    swf_asl_env_t env = {.context = ctx};
    expect_eval_env("{}", "$$.Execution.Id", &env, "\"e1\"");
    expect_eval_env("{}", "$$.Execution.Input.k", &env, "1");
    expect_eval_env("{}", "$$.Map.Item.Index", &env, "3");
    expect_eval_env("{}", "$$['Execution']['Id']", &env, "\"e1\"");
    json_object_put(ctx);
}

Test(path_eval, null_context_is_empty_object)
{
    swf_asl_env_t env = {0};
    expect_eval_env("{\"a\":1}", "$$", &env, "{}");
    json_object *out = NULL;
    swf_error_t *err = swf_asl_path_eval("$$.Execution.Id", NULL, &env, &out);
    cr_assert_not_null(err);
    cr_assert_str_eq(swf_error_name(err), "States.Runtime");
    swf_error_free(err);
}

Test(path_eval, variables)
{
    json_object *vars = J("{\"x\":42,\"list\":[1,2,3],\"obj\":{\"f\":{\"g\":\"h\"}},\"n\":null}");
    swf_asl_env_t env = {.variables = vars};
    expect_eval_env("{}", "$x", &env, "42");
    expect_eval_env("{}", "$list[1]", &env, "2");
    expect_eval_env("{}", "$obj.f.g", &env, "\"h\"");
    expect_eval_env("{}", "$obj['f']", &env, "{\"g\":\"h\"}");
    expect_eval_env("{}", "$list[*]", &env, "[1,2,3]");
    expect_eval_env("{}", "$n", &env, "null");
    json_object *out = NULL;
    swf_error_t *err = swf_asl_path_eval("$undefined", NULL, &env, &out);
    cr_assert_not_null(err);
    cr_assert_str_eq(swf_error_name(err), "States.Runtime");
    cr_assert(strstr(swf_error_message(err), "undefined") != NULL);
    swf_error_free(err);
    err = swf_asl_path_eval("$x", NULL, NULL, &out);
    cr_assert_not_null(err);
    swf_error_free(err);
    json_object_put(vars);
}

/* ---- indefinite paths ---- */

Test(path_eval, wildcards)
{
    expect_eval("{\"o\":{\"a\":1,\"b\":2,\"c\":3}}", "$.o.*", "[1,2,3]");
    expect_eval("{\"o\":{\"a\":1,\"b\":2}}", "$.o[*]", "[1,2]");
    expect_eval(STORE, "$.store.book[*].author",
                "[\"Nigel Rees\",\"Evelyn Waugh\",\"Herman Melville\",\"Tolkien\"]");
    expect_eval(STORE, "$.store.book.*.price", "[8.95,12.99,8.99,22.99]");
    expect_eval("{\"a\":5}", "$.a.*", "[]");
}

Test(path_eval, wildcard_skips_elements_without_the_field)
{
    expect_eval(STORE, "$.store.book[*].isbn", "[\"0-553\",\"0-395\"]");
}

Test(path_eval, slices)
{
    expect_eval(STORE, "$.l[1:3]", "[1,2]");
    expect_eval(STORE, "$.l[:2]", "[0,1]");
    expect_eval(STORE, "$.l[3:]", "[3,4,5]");
    expect_eval(STORE, "$.l[-2:]", "[4,5]");
    expect_eval(STORE, "$.l[::2]", "[0,2,4]");
    expect_eval(STORE, "$.l[1:100]", "[1,2,3,4,5]");
    expect_eval(STORE, "$.l[4:2]", "[]");
    expect_eval(STORE, "$.l[::-1]", "[5,4,3,2,1,0]");
    expect_eval(STORE, "$.l[ 1 : 3 ]", "[1,2]");
}

Test(path_eval, slice_on_missing_field_is_empty_array)
{
    expect_eval("{\"a\":1}", "$.missing[1:]", "[]");
}

Test(path_eval, unions)
{
    expect_eval(STORE, "$.l[0,2]", "[0,2]");
    expect_eval(STORE, "$.l[-1, 0, 99]", "[5,0]");
    expect_eval("{\"a\":1,\"b\":2,\"c\":3}", "$['c','a']", "[3,1]");
    expect_eval("{\"a\":1,\"b\":2}", "$['a', \"zz\"]", "[1]");
}

Test(path_eval, deep_scan)
{
    expect_eval("{\"shop\":{\"shelf\":{\"box\":{\"price\":9}}}}", "$..price", "[9]");
    expect_eval(STORE, "$..author",
                "[\"Nigel Rees\",\"Evelyn Waugh\",\"Herman Melville\",\"Tolkien\"]");
    expect_eval(STORE, "$.store..price", "[8.95,12.99,8.99,22.99,19.95]");
    expect_eval("{\"a\":{\"b\":1},\"c\":[2]}", "$..*", "[{\"b\":1},[2],1,2]");
    expect_eval(STORE, "$..book[2].title", "[\"Moby Dick\"]");
    expect_eval(STORE, "$..['color']", "[\"red\"]");
    expect_eval("{\"a\":{\"a\":1}}", "$..a", "[{\"a\":1},1]");
}

Test(path_eval, filter_comparisons)
{
    expect_eval(STORE, "$.store.book[?(@.price < 10)].title", "[\"Sayings\",\"Moby Dick\"]");
    expect_eval(STORE, "$.store.book[?(@.price <= 8.99)].title", "[\"Sayings\",\"Moby Dick\"]");
    expect_eval(STORE, "$.store.book[?(@.price > 20)].title", "[\"LOTR\"]");
    expect_eval(STORE, "$.store.book[?(@.price >= 22.99)].title", "[\"LOTR\"]");
    expect_eval(STORE, "$.store.book[?(@.category == 'reference')].title", "[\"Sayings\"]");
    expect_eval(STORE, "$.store.book[?(@.category == \"reference\")].title", "[\"Sayings\"]");
    expect_eval(STORE, "$.store.book[?(@.category != 'fiction')].title", "[\"Sayings\"]");
    expect_eval("[{\"n\":1},{\"n\":-2},{\"n\":3e0}]", "$[?(@.n==-2)]", "[{\"n\":-2}]");
    expect_eval("[{\"n\":1},{\"n\":2.0}]", "$[?(@.n == 2)].n", "[2.0]");
    expect_eval("[{\"s\":\"b\"},{\"s\":\"a\"}]", "$[?(@.s > 'a')].s", "[\"b\"]");
}

Test(path_eval, filter_literals_true_false_null)
{
    const char *in = "{\"items\":[{\"ok\":true,\"v\":1},{\"ok\":false,\"v\":2},"
                     "{\"ok\":null,\"v\":3}]}";
    expect_eval(in, "$.items[?(@.ok == true)].v", "[1]");
    expect_eval(in, "$.items[?(@.ok == false)].v", "[2]");
    expect_eval(in, "$.items[?(@.ok == null)].v", "[3]");
}

Test(path_eval, filter_logic_and_grouping)
{
    const char *in = "{\"items\":[{\"name\":\"a\",\"price\":5,\"ok\":true},"
                     "{\"name\":\"b\",\"price\":15,\"ok\":false},"
                     "{\"name\":\"c\",\"price\":25,\"ok\":true}]}";
    expect_eval(in, "$.items[?(@.price > 1 && @.ok == true)].name", "[\"a\",\"c\"]");
    expect_eval(in, "$.items[?(@.price < 10 || @.price > 20)].name", "[\"a\",\"c\"]");
    expect_eval(in, "$.items[?(!(@.price < 10))].name", "[\"b\",\"c\"]");
    expect_eval(in, "$.items[?((@.price < 10 || @.price > 20) && @.name != 'a')].name", "[\"c\"]");
    expect_eval(in, "$.items[?(@.ok == true || @.price > 10 && @.price < 20)].name",
                "[\"a\",\"b\",\"c\"]");
}

Test(path_eval, filter_existence)
{
    expect_eval(STORE, "$.store.book[?(@.isbn)].title", "[\"Moby Dick\",\"LOTR\"]");
    expect_eval(STORE, "$.store.book[?(!@.isbn)].title", "[\"Sayings\",\"Sword\"]");
    expect_eval("[{\"a\":null},{}]", "$[?(@.a)]", "[{\"a\":null}]");
}

Test(path_eval, filter_mixed_types_do_not_match)
{
    expect_eval("[{\"v\":\"10\"},{\"v\":10},{\"v\":null},{}]", "$[?(@.v > 5)]", "[{\"v\":10}]");
    expect_eval("[{\"v\":\"10\"},{\"v\":10}]", "$[?(@.v == 10)]", "[{\"v\":10}]");
}

Test(path_eval, filter_with_root_reference)
{
    expect_eval(STORE, "$.store.book[?(@.price > $.expensive)].title", "[\"Sword\",\"LOTR\"]");
}

Test(path_eval, filter_no_match_is_empty_array)
{
    expect_eval("{\"items\":[{\"price\":1}]}", "$.items[?(@.price > 100)]", "[]");
    expect_eval("{\"a\":1}", "$.missing[?(@.x)]", "[]");
}

Test(path_eval, filter_on_object_tests_the_object)
{
    expect_eval("{\"o\":{\"x\":1}}", "$.o[?(@.x == 1)]", "[{\"x\":1}]");
    expect_eval("{\"o\":{\"x\":1}}", "$.o[?(@.x == 2)]", "[]");
}

Test(path_eval, deep_scan_then_filter)
{
    expect_eval(STORE, "$..book[?(@.price < 9)].author", "[\"Nigel Rees\",\"Herman Melville\"]");
    expect_eval(STORE, "$..[?(@.color)].price", "[19.95]");
}

Test(path_eval, invalid_path_is_runtime_error)
{
    expect_eval_error("{}", "$.a[", "States.Runtime", "invalid");
}

/* ---- is_definite ---- */

Test(path_is_definite, classifies)
{
    cr_assert(swf_asl_path_is_definite("$"));
    cr_assert(swf_asl_path_is_definite("$.a.b[0]['c']"));
    cr_assert(swf_asl_path_is_definite("$$.Execution.Id"));
    cr_assert(swf_asl_path_is_definite("$var.x"));
    cr_assert_not(swf_asl_path_is_definite("$.a[*]"));
    cr_assert_not(swf_asl_path_is_definite("$.a.*"));
    cr_assert_not(swf_asl_path_is_definite("$..a"));
    cr_assert_not(swf_asl_path_is_definite("$.a[1:2]"));
    cr_assert_not(swf_asl_path_is_definite("$.a[0,1]"));
    cr_assert_not(swf_asl_path_is_definite("$['a','b']"));
    cr_assert_not(swf_asl_path_is_definite("$.a[?(@.x)]"));
    cr_assert_not(swf_asl_path_is_definite("not a path"));
}

/* ---- check ---- */

Test(path_check, accepts_every_syntax_element)
{
    const char *ok[] = {
        "$",
        "$$",
        "$x",
        "$.a",
        "$.a.b",
        "$['a b']",
        "$[\"a\"]",
        "$.a-b",
        "$[0]",
        "$[-1]",
        "$.a[1:3]",
        "$.a[::2]",
        "$.a[:]",
        "$.*",
        "$[*]",
        "$.a[0,2]",
        "$['a','b']",
        "$..a",
        "$..*",
        "$..[0]",
        "$.a[?(@.p < 10)]",
        "$.a[?(@.p == 'x' && !(@.q))]",
        "$.a[?(@.p >= -1.5e3 || @.q != null)]",
        "$$.Map.Item.Value",
        "$var[0].x",
        "$.a[?(@['b c'] == true)]",
        "$.a[?(@.p > $.limit)]",
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        expect_check_ok(ok[i], SWF_ASL_PATH_ANY);
}

Test(path_check, rejects_bad_syntax_with_a_sentence)
{
    expect_check_error("", SWF_ASL_PATH_ANY, "must start with '$'");
    expect_check_error("a.b", SWF_ASL_PATH_ANY, "must start with '$'");
    expect_check_error("$.", SWF_ASL_PATH_ANY, "expected a field name");
    expect_check_error("$.a.", SWF_ASL_PATH_ANY, "expected a field name");
    expect_check_error("$...a", SWF_ASL_PATH_ANY, "expected a field name");
    expect_check_error("$.a[0", SWF_ASL_PATH_ANY, "unterminated bracket at offset 3");
    expect_check_error("$.abc[", SWF_ASL_PATH_ANY, "unterminated bracket at offset 5");
    expect_check_error("$['a", SWF_ASL_PATH_ANY, "unterminated string");
    expect_check_error("$[a]", SWF_ASL_PATH_ANY, "unexpected character 'a'");
    expect_check_error("$.a[1:2:0]", SWF_ASL_PATH_ANY, "step cannot be zero");
    expect_check_error("$.a[?(@.x = 1)]", SWF_ASL_PATH_ANY, "'=='");
    expect_check_error("$.a[?(@.x =~ /a/)]", SWF_ASL_PATH_ANY, "regular expressions");
    expect_check_error("$.a[?(@.x > 1]", SWF_ASL_PATH_ANY, "expected ')'");
    expect_check_error("$.a[?(1)]", SWF_ASL_PATH_ANY, "comparison");
    expect_check_error("$.a[(@.length-1)]", SWF_ASL_PATH_ANY, "script expressions");
    expect_check_error("$.a.length()", SWF_ASL_PATH_ANY, "functions");
    expect_check_error("$.a b", SWF_ASL_PATH_ANY, "unexpected character ' '");
    expect_check_error("$[99999999999999999999]", SWF_ASL_PATH_ANY, "too large");
}

Test(path_check, enforces_length_limit)
{
    char *long_path = malloc(SWF_LIMIT_PATH_BYTES + 10);
    long_path[0] = '$';
    for (size_t i = 1; i < SWF_LIMIT_PATH_BYTES + 8; i += 2) {
        long_path[i] = '.';
        long_path[i + 1] = 'a';
    }
    long_path[SWF_LIMIT_PATH_BYTES + 9] = '\0';
    expect_check_error(long_path, SWF_ASL_PATH_ANY, "longer than");
    free(long_path);
}

Test(path_check, limits_filter_nesting)
{
    char path[400] = "$.a[?(";
    for (int i = 0; i < 100; i++)
        strcat(path, "!");
    strcat(path, "@.x)]");
    expect_check_error(path, SWF_ASL_PATH_ANY, "nested too deeply");
}

Test(path_check, reference_path_accepts_names_and_indexes)
{
    expect_check_ok("$", SWF_ASL_PATH_REFERENCE);
    expect_check_ok("$.a.b[0]['c d']", SWF_ASL_PATH_REFERENCE);
    expect_check_ok("$$.Execution.Input", SWF_ASL_PATH_REFERENCE);
    expect_check_ok("$var.x", SWF_ASL_PATH_REFERENCE);
}

Test(path_check, reference_path_rejects_indefinite_elements)
{
    expect_check_error("$..a", SWF_ASL_PATH_REFERENCE, "cannot contain a deep scan");
    expect_check_error("$.a[?(@.x)]", SWF_ASL_PATH_REFERENCE, "cannot contain a filter");
    expect_check_error("$.a[*]", SWF_ASL_PATH_REFERENCE, "cannot contain a wildcard");
    expect_check_error("$.a.*", SWF_ASL_PATH_REFERENCE, "cannot contain a wildcard");
    expect_check_error("$.a[1:2]", SWF_ASL_PATH_REFERENCE, "cannot contain a slice");
    expect_check_error("$.a[0,1]", SWF_ASL_PATH_REFERENCE, "cannot contain a union");
    expect_check_error("$['a','b']", SWF_ASL_PATH_REFERENCE, "cannot contain a union");
}

/* ---- ResultPath ---- */

static void expect_set(const char *input_text, const char *path, const char *value_text,
                       const char *expected_text)
{
    json_object *input = J(input_text);
    json_object *value = J(value_text);
    json_object *expected = J(expected_text);
    json_object *before = swf_json_copy(input);
    json_object *out = NULL;
    swf_error_t *err = swf_asl_path_set(path, input, value, &out);
    cr_assert_null(err, "%s: %s", path, err ? swf_error_message(err) : "");
    cr_assert(swf_json_equal(out, expected), "%s: got %s, expected %s", path, swf_json_str(out),
              expected_text);
    cr_assert(swf_json_equal(input, before), "%s: the input was modified: %s", path,
              swf_json_str(input));
    json_object_put(out);
    json_object_put(before);
    json_object_put(expected);
    json_object_put(value);
    json_object_put(input);
}

static void expect_set_failure(const char *input_text, const char *path)
{
    json_object *input = J(input_text);
    json_object *value = J("1");
    json_object *out = NULL;
    swf_error_t *err = swf_asl_path_set(path, input, value, &out);
    cr_assert_not_null(err, "%s on %s: expected a failure", path, input_text);
    cr_assert_null(out);
    cr_assert_str_eq(swf_error_name(err), "States.ResultPathMatchFailure");
    swf_error_free(err);
    json_object_put(value);
    json_object_put(input);
}

Test(path_set, dollar_replaces_any_input)
{
    expect_set("{\"a\":1}", "$", "{\"r\":2}", "{\"r\":2}");
    expect_set("5", "$", "\"x\"", "\"x\"");
    expect_set("{\"a\":1}", "$", "null", "null");
}

Test(path_set, adds_and_overwrites_fields)
{
    expect_set("{\"a\":1}", "$.r", "2", "{\"a\":1,\"r\":2}");
    expect_set("{\"a\":1,\"r\":0}", "$.r", "2", "{\"a\":1,\"r\":2}");
    expect_set("{\"a\":1}", "$.r", "null", "{\"a\":1,\"r\":null}");
}

Test(path_set, keeps_field_order_when_overwriting)
{
    json_object *input = J("{\"a\":1,\"b\":2,\"c\":3}");
    json_object *value = J("9");
    json_object *out = NULL;
    cr_assert_null(swf_asl_path_set("$.b", input, value, &out));
    cr_assert_str_eq(swf_json_str(out), "{\"a\":1,\"b\":9,\"c\":3}");
    json_object_put(out);
    json_object_put(value);
    json_object_put(input);
}

Test(path_set, creates_missing_intermediate_objects)
{
    expect_set("{\"a\":1}", "$.x.y.z", "true", "{\"a\":1,\"x\":{\"y\":{\"z\":true}}}");
    expect_set("{}", "$['my key'].v", "1", "{\"my key\":{\"v\":1}}");
}

Test(path_set, into_existing_nested_object_keeps_other_fields)
{
    expect_set("{\"o\":{\"k\":1,\"m\":{\"n\":2}},\"p\":3}", "$.o.m.q", "4",
               "{\"o\":{\"k\":1,\"m\":{\"n\":2,\"q\":4}},\"p\":3}");
}

Test(path_set, copy_on_write_shares_untouched_subtrees)
{
    json_object *input = J("{\"o\":{\"k\":1},\"big\":{\"x\":[1,2,3]}}");
    json_object *value = J("5");
    json_object *out = NULL;
    cr_assert_null(swf_asl_path_set("$.o.v", input, value, &out));
    json_object *big_in = NULL, *big_out = NULL, *o_in = NULL, *o_out = NULL;
    json_object_object_get_ex(input, "big", &big_in);
    json_object_object_get_ex(out, "big", &big_out);
    json_object_object_get_ex(input, "o", &o_in);
    json_object_object_get_ex(out, "o", &o_out);
    cr_assert_eq(big_in, big_out);
    cr_assert_neq(o_in, o_out);
    cr_assert_str_eq(swf_json_str(input), "{\"o\":{\"k\":1},\"big\":{\"x\":[1,2,3]}}");
    json_object_put(out);
    json_object_put(value);
    json_object_put(input);
}

Test(path_set, bracket_notation)
{
    expect_set("{\"a\":1}", "$['r']", "2", "{\"a\":1,\"r\":2}");
    expect_set("{\"a\":1}", "$[\"r s\"]['t']", "2", "{\"a\":1,\"r s\":{\"t\":2}}");
}

Test(path_set, index_replaces_existing_element)
{
    expect_set("{\"l\":[1,2,3]}", "$.l[1]", "9", "{\"l\":[1,9,3]}");
    expect_set("{\"l\":[1,2,3]}", "$.l[-1]", "9", "{\"l\":[1,2,9]}");
    expect_set("[{\"a\":1},{\"a\":2}]", "$[1].b", "9", "[{\"a\":1},{\"a\":2,\"b\":9}]");
}

Test(path_set, field_on_non_object_fails)
{
    expect_set_failure("[1,2,3]", "$.r");
    expect_set_failure("\"text\"", "$.r");
    expect_set_failure("5", "$.res");
    expect_set_failure("null", "$.r");
    expect_set_failure("true", "$.r");
    expect_set_failure("{\"a\":5}", "$.a.b");
}

Test(path_set, index_out_of_range_or_on_non_array_fails)
{
    expect_set_failure("{\"l\":[1]}", "$.l[3]");
    expect_set_failure("{\"l\":{}}", "$.l[0]");
    expect_set_failure("{}", "$.l[0]");
}

Test(path_set, non_reference_path_fails)
{
    expect_set_failure("{}", "$.a[*]");
    expect_set_failure("{}", "$..a");
    expect_set_failure("{}", "$$.a");
}

Test(path_check, long_path_of_quoted_names)
{
    /* Each quoted name is sized by its own text (it once took the rest of
     * the path each time). */
    char path[SWF_LIMIT_PATH_BYTES + 1] = "$";
    while (strlen(path) + 7 < SWF_LIMIT_PATH_BYTES)
        strcat(path, "['a\\'']");
    expect_check_ok(path, SWF_ASL_PATH_REFERENCE);
    json_object *input = J("{\"a'\":1}");
    json_object *out = NULL;
    cr_assert_null(swf_asl_path_eval("$['a\\'']", input, NULL, &out));
    cr_assert_eq(json_object_get_int(out), 1);
    json_object_put(out);
    json_object_put(input);
}

/* ---- mutated paths (tests/fuzz.h) ---- */

static void pick_path(const char *key, const char *value, fuzz_corpus_t *c)
{
    size_t k = strlen(key);
    bool path_key = (k >= 4 && strcmp(key + k - 4, "Path") == 0) || strcmp(key, "Variable") == 0 ||
                    (k >= 2 && strcmp(key + k - 2, ".$") == 0);
    if (path_key && value[0] == '$')
        fuzz_corpus_add(c, value);
}

typedef struct path_fuzz {
    json_object *input, *value;
    swf_asl_env_t env;
    long sets;
} path_fuzz_t;

static fuzz_outcome_t path_round(const char *path, void *arg)
{
    path_fuzz_t *pf = arg;
    swf_error_t *bad = swf_asl_path_check(path, SWF_ASL_PATH_REFERENCE);
    if (bad == NULL && path[0] == '$' && path[1] != '$') {
        json_object *out = NULL;
        swf_error_t *err = swf_asl_path_set(path, pf->input, pf->value, &out);
        pf->sets += fuzz_outcome(path, err, out) == FUZZ_VALUE;
    }
    swf_error_free(bad);
    bad = swf_asl_path_check(path, SWF_ASL_PATH_ANY);
    if (bad != NULL) {
        swf_error_free(bad);
        return FUZZ_REFUSED;
    }
    json_object *out = NULL;
    swf_error_t *err = swf_asl_path_eval(path, pf->input, &pf->env, &out);
    return fuzz_outcome(path, err, out);
}

/* A mutated path the check takes evaluates to an error or to JSON; one it
 * takes as a Reference Path also applies as a ResultPath or says why not. */
Test(path_fuzz, mutated_paths_fail_cleanly_or_give_json)
{
    fuzz_corpus_t seeds = {0};
    fuzz_corpus_from_histories(&seeds, pick_path);
    cr_assert(seeds.n > 50, "only %zu paths in tests/histories", seeds.n);
    path_fuzz_t pf = {.input = J(STORE), .value = J("{\"set\":true}")};
    pf.env.context = J("{\"Execution\":{\"Id\":\"x\"},\"Map\":{}}");
    pf.env.variables = J("{\"v\":[1,{\"w\":2}]}");
    fuzz_tally_t t = fuzz_run(&seeds, 50000, path_round, &pf);
    cr_expect(t.outcomes[FUZZ_VALUE] > t.rounds / 100 && pf.sets > t.rounds / 100,
              "%ld values, %ld set", t.outcomes[FUZZ_VALUE], pf.sets);
    json_object_put(pf.input);
    json_object_put(pf.value);
    json_object_put(pf.env.context);
    json_object_put(pf.env.variables);
    fuzz_corpus_free(&seeds);
}
