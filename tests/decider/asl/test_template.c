/*
 * test_template.c - proves decider/asl/template.c: ".$" keys at any depth,
 * literal copying, context and variable paths, intrinsic dispatch, sharing of
 * static subtrees, and the wording of errors (the corpus's parameters/ group).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "decider/asl/template.h"
#include "protocol/json.h"
#include "protocol/limits.h"

static json_object *J(const char *text)
{
    json_object *v = NULL;
    swf_error_t *err = swf_json_parse(text, strlen(text), SWF_LIMIT_JSON_BYTES, &v);
    cr_assert_null(err, "bad test JSON: %s", text);
    return v;
}

static void expect_template_env(const char *tmpl_text, const char *input_text,
                                const swf_asl_env_t *env, const char *expected_text)
{
    json_object *tmpl = J(tmpl_text);
    json_object *input = J(input_text);
    json_object *expected = J(expected_text);
    json_object *tmpl_before = swf_json_copy(tmpl);
    json_object *out = NULL;
    swf_error_t *err = swf_asl_template_eval(tmpl, input, env, &out);
    cr_assert_null(err, "%s: %s", tmpl_text, err ? swf_error_message(err) : "");
    cr_assert(swf_json_equal(out, expected), "got %s, expected %s", swf_json_str(out),
              expected_text);
    cr_assert(swf_json_equal(tmpl, tmpl_before), "the template was modified");
    json_object_put(out);
    json_object_put(tmpl_before);
    json_object_put(expected);
    json_object_put(input);
    json_object_put(tmpl);
}

static void expect_template(const char *tmpl_text, const char *input_text,
                            const char *expected_text)
{
    expect_template_env(tmpl_text, input_text, NULL, expected_text);
}

static swf_error_t *eval_error(const char *tmpl_text, const char *input_text)
{
    json_object *tmpl = J(tmpl_text);
    json_object *input = J(input_text);
    json_object *out = NULL;
    swf_error_t *err = swf_asl_template_eval(tmpl, input, NULL, &out);
    cr_assert_not_null(err, "expected an error, got %s", swf_json_str(out));
    cr_assert_null(out);
    json_object_put(input);
    json_object_put(tmpl);
    return err;
}

Test(template_eval, dollar_key_selects_input)
{
    expect_template("{\"x.$\":\"$.a\"}", "{\"a\":1,\"b\":2}", "{\"x\":1}");
}

Test(template_eval, whole_input_with_dollar)
{
    expect_template("{\"all.$\":\"$\"}", "{\"a\":1}", "{\"all\":{\"a\":1}}");
}

Test(template_eval, literals_are_copied)
{
    expect_template("{\"s\":\"$.a\",\"n\":1,\"b\":true,\"z\":null,\"o\":{\"k\":[1,\"x\"]}}",
                    "{\"a\":1}",
                    "{\"s\":\"$.a\",\"n\":1,\"b\":true,\"z\":null,\"o\":{\"k\":[1,\"x\"]}}");
    expect_template("{\"f\":\"States.Format('x')\"}", "{}", "{\"f\":\"States.Format('x')\"}");
}

Test(template_eval, scalar_and_array_templates)
{
    expect_template("7", "{}", "7");
    expect_template("null", "{}", "null");
    expect_template("[1,{\"v.$\":\"$.a\"}]", "{\"a\":3}", "[1,{\"v\":3}]");
}

Test(template_eval, key_with_inner_dots_is_literal)
{
    expect_template("{\"a.b\":1,\"c.d.$\":\"$.x\",\"e$\":2,\".$\":\"$.x\"}", "{\"x\":5}",
                    "{\"a.b\":1,\"c.d\":5,\"e$\":2,\"\":5}");
}

Test(template_eval, nested_objects_with_paths)
{
    expect_template("{\"outer\":{\"inner\":{\"v.$\":\"$.a.b\",\"k\":\"lit\"},\"w.$\":\"$.c\"}}",
                    "{\"a\":{\"b\":[1,2]},\"c\":\"see\"}",
                    "{\"outer\":{\"inner\":{\"v\":[1,2],\"k\":\"lit\"},\"w\":\"see\"}}");
}

Test(template_eval, paths_inside_array_elements)
{
    expect_template("{\"list\":[{\"id.$\":\"$.id\"},\"plain\",[{\"n.$\":\"$.n\"}]]}",
                    "{\"id\":9,\"n\":\"x\"}", "{\"list\":[{\"id\":9},\"plain\",[{\"n\":\"x\"}]]}");
}

Test(template_eval, selected_values_keep_their_type)
{
    expect_template("{\"a.$\":\"$.a\",\"o.$\":\"$.o\",\"n.$\":\"$.n\",\"s.$\":\"$.s\"}",
                    "{\"a\":[1],\"o\":{\"p\":1},\"n\":null,\"s\":\"t\"}",
                    "{\"a\":[1],\"o\":{\"p\":1},\"n\":null,\"s\":\"t\"}");
}

Test(template_eval, indefinite_paths_give_arrays)
{
    expect_template("{\"v.$\":\"$.items[?(@.p > 1)].n\",\"w.$\":\"$.missing[1:]\"}",
                    "{\"items\":[{\"p\":1,\"n\":\"a\"},{\"p\":2,\"n\":\"b\"}]}",
                    "{\"v\":[\"b\"],\"w\":[]}");
}

Test(template_eval, keeps_key_order)
{
    json_object *tmpl = J("{\"a\":1,\"b.$\":\"$.x\",\"c\":3}");
    json_object *input = J("{\"x\":2}");
    json_object *out = NULL;
    cr_assert_null(swf_asl_template_eval(tmpl, input, NULL, &out));
    cr_assert_str_eq(swf_json_str(out), "{\"a\":1,\"b\":2,\"c\":3}");
    json_object_put(out);
    json_object_put(input);
    json_object_put(tmpl);
}

Test(template_eval, context_object_paths)
{
    json_object *ctx = J("{\"Execution\":{\"Id\":\"arn:e\"},\"Map\":{\"Item\":{\"Index\":2,"
                         "\"Value\":{\"sku\":\"k\"}}}}");
    swf_asl_env_t env = {.context = ctx};
    expect_template_env("{\"id.$\":\"$$.Execution.Id\",\"i.$\":\"$$.Map.Item.Index\","
                        "\"sku.$\":\"$$.Map.Item.Value.sku\",\"in.$\":\"$.a\"}",
                        "{\"a\":0}", &env, "{\"id\":\"arn:e\",\"i\":2,\"sku\":\"k\",\"in\":0}");
    json_object_put(ctx);
}

Test(template_eval, variables)
{
    json_object *vars = J("{\"count\":3,\"cfg\":{\"mode\":\"fast\"}}");
    swf_asl_env_t env = {.variables = vars};
    expect_template_env("{\"c.$\":\"$count\",\"m.$\":\"$cfg.mode\"}", "{}", &env,
                        "{\"c\":3,\"m\":\"fast\"}");
    json_object_put(vars);
}

Test(template_eval, intrinsic_calls_are_dispatched)
{
    json_object *tmpl = J("{\"g.$\":\"States.Format('Hello {}', $.who)\"}");
    json_object *input = J("{\"who\":\"you\"}");
    json_object *out = NULL;
    swf_error_t *err = swf_asl_template_eval(tmpl, input, NULL, &out);
    /* Whatever the intrinsic module answers, the call must not have been
     * read as a path (which would say "must start with '$'"). */
    if (err != NULL) {
        cr_assert(strstr(swf_error_message(err), "must start with '$'") == NULL, "%s",
                  swf_error_message(err));
        swf_error_free(err);
    } else {
        cr_assert_str_eq(swf_json_str(out), "{\"g\":\"Hello you\"}");
    }
    json_object_put(out);
    json_object_put(input);
    json_object_put(tmpl);
}

Test(template_eval, missing_path_is_runtime_error_naming_the_field)
{
    swf_error_t *err = eval_error("{\"x.$\":\"$.missing\"}", "{\"a\":1}");
    cr_assert_eq(swf_error_code(err), SWF_E_STATES);
    cr_assert_str_eq(swf_error_name(err), "States.Runtime");
    cr_assert_str_eq(swf_error_message(err),
                     "the JSONPath '$.missing' specified for the field 'x.$' could not be found "
                     "in the input '{\"a\":1}'");
    swf_error_free(err);
}

Test(template_eval, nested_missing_path_names_the_inner_field)
{
    swf_error_t *err = eval_error("{\"o\":[{\"deep.$\":\"$.l[5]\"}]}", "{\"l\":[]}");
    cr_assert_str_eq(swf_error_name(err), "States.Runtime");
    cr_assert(strstr(swf_error_message(err), "'deep.$'") != NULL, "%s", swf_error_message(err));
    swf_error_free(err);
}

Test(template_eval, non_string_dollar_value_is_an_error)
{
    swf_error_t *err = eval_error("{\"x.$\":5}", "{}");
    cr_assert_str_eq(swf_error_name(err), "States.Runtime");
    cr_assert(strstr(swf_error_message(err), "'x.$'") != NULL);
    swf_error_free(err);
}

Test(template_eval, static_subtrees_are_shared)
{
    json_object *tmpl = J("{\"static\":{\"k\":[1,2]},\"arr\":[{\"z\":1}],\"v.$\":\"$.a\"}");
    json_object *input = J("{\"a\":1}");
    json_object *out = NULL;
    cr_assert_null(swf_asl_template_eval(tmpl, input, NULL, &out));
    json_object *t_static = NULL, *o_static = NULL, *t_arr = NULL, *o_arr = NULL;
    json_object_object_get_ex(tmpl, "static", &t_static);
    json_object_object_get_ex(out, "static", &o_static);
    json_object_object_get_ex(tmpl, "arr", &t_arr);
    json_object_object_get_ex(out, "arr", &o_arr);
    cr_assert_eq(t_static, o_static);
    cr_assert_eq(t_arr, o_arr);
    json_object_put(out);

    /* A template without any ".$" is returned as it is. */
    json_object *lit = J("{\"a\":{\"b\":[1,{\"c\":2}]}}");
    cr_assert_null(swf_asl_template_eval(lit, input, NULL, &out));
    cr_assert_eq(out, lit);
    json_object_put(out);
    json_object_put(lit);
    json_object_put(input);
    json_object_put(tmpl);
}

Test(template_eval, dynamic_value_after_static_entries)
{
    /* The copy starts at the first changed entry; earlier entries come along. */
    expect_template("{\"a\":1,\"b\":{\"c\":2},\"d\":[3],\"e.$\":\"$\"}", "0",
                    "{\"a\":1,\"b\":{\"c\":2},\"d\":[3],\"e\":0}");
    expect_template("[1,[2],{\"x\":3},{\"y.$\":\"$\"}]", "4", "[1,[2],{\"x\":3},{\"y\":4}]");
}

Test(template_eval, long_dynamic_key)
{
    char key[300];
    memset(key, 'k', 200);
    strcpy(key + 200, ".$");
    json_object *tmpl = json_object_new_object();
    json_object_object_add(tmpl, key, json_object_new_string("$"));
    json_object_object_add(tmpl, "short.$", json_object_new_string("$"));
    json_object *input = J("1");
    json_object *out = NULL;
    cr_assert_null(swf_asl_template_eval(tmpl, input, NULL, &out));
    key[200] = '\0';
    json_object *v = NULL;
    cr_assert(json_object_object_get_ex(out, key, &v));
    cr_assert(json_object_object_get_ex(out, "short", &v));
    json_object_put(out);
    json_object_put(input);
    json_object_put(tmpl);
}

Test(expr_eval, path_and_intrinsic)
{
    json_object *input = J("{\"a\":[1,2]}");
    json_object *out = NULL;
    cr_assert_null(swf_asl_expr_eval("$.a[1]", input, NULL, &out));
    cr_assert_eq(json_object_get_int(out), 2);
    json_object_put(out);
    swf_error_t *err = swf_asl_expr_eval("States.ArrayLength($.a)", input, NULL, &out);
    if (err == NULL) {
        cr_assert_eq(json_object_get_int(out), 2);
        json_object_put(out);
    }
    swf_error_free(err);
    json_object_put(input);
}
