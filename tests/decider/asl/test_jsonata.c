/*
 * test_jsonata.c - the JSONata evaluator: each construct, each built-in
 * function, the errors (undefined variables, type errors, syntax, limits,
 * non-deterministic functions), templates, and one parameterised test over
 * the expressions of the JSONata conformance cases (cases/jsonata and
 * cases/variables/jsonata-*), each with the bindings its state sees.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/asl/jsonata.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "tests/fuzz.h"

#define QEE "States.QueryEvaluationError"

/* The input most tests read as $states.input. */
static const char *const ORDER =
    "{\"states\": {\"input\": {"
    "\"items\": [{\"name\": \"a\", \"price\": 5}, {\"name\": \"b\", \"price\": 15},"
    "            {\"name\": \"c\", \"price\": 25}],"
    "\"n\": [1, 2, 3], \"s\": \"abbbc\", \"nested\": [[1, 2], [3]], \"one\": [7],"
    "\"obj\": {\"k\": \"v\", \"z\": null}, \"zero\": 0, \"empty\": \"\"}},"
    " \"x\": 3, \"name\": \"Ann\", \"nothing\": null}";

static json_object *parse_json(const char *text)
{
    json_object *v = NULL;
    swf_error_t *err = swf_json_parse(text, strlen(text), SWF_LIMIT_JSON_BYTES, &v);
    cr_assert_null(err, "bad test JSON %s: %s", text, err ? swf_error_message(err) : "");
    return v;
}

/* Evaluates expr with bindings (JSON text, or NULL) and expects the JSON
 * text `want`. */
static void expect_value_in(const char *expr, const char *bindings, const char *want)
{
    json_object *b = bindings ? parse_json(bindings) : NULL, *expected = parse_json(want);
    json_object *got = NULL;
    bool defined = false;
    swf_error_t *err = swf_asl_jsonata_eval(expr, b, &got, &defined);
    cr_expect_null(err, "%s failed: %s", expr, err ? swf_error_message(err) : "");
    if (err == NULL) {
        cr_expect(defined, "%s is undefined, want %s", expr, want);
        cr_expect(swf_json_equal(got, expected), "%s gave %s, want %s", expr, swf_json_str(got),
                  want);
    }
    swf_error_free(err);
    json_object_put(got);
    json_object_put(expected);
    json_object_put(b);
}

static void expect_value(const char *expr, const char *want)
{
    expect_value_in(expr, ORDER, want);
}

/* Expects the exact serialisation (types and number formatting). */
static void expect_text(const char *expr, const char *want)
{
    json_object *b = parse_json(ORDER), *got = NULL;
    bool defined = false;
    swf_error_t *err = swf_asl_jsonata_eval(expr, b, &got, &defined);
    cr_expect_null(err, "%s failed: %s", expr, err ? swf_error_message(err) : "");
    if (err == NULL)
        cr_expect_str_eq(swf_json_str(got), want, "%s", expr);
    swf_error_free(err);
    json_object_put(got);
    json_object_put(b);
}

static void expect_undefined(const char *expr)
{
    json_object *b = parse_json(ORDER), *got = NULL;
    bool defined = true;
    swf_error_t *err = swf_asl_jsonata_eval(expr, b, &got, &defined);
    cr_expect_null(err, "%s failed: %s", expr, err ? swf_error_message(err) : "");
    cr_expect(!defined, "%s gave %s, want undefined", expr, swf_json_str(got));
    cr_expect_null(got);
    swf_error_free(err);
    json_object_put(b);
}

/* Expects States.QueryEvaluationError whose message contains `in_message`. */
static void expect_error(const char *expr, const char *in_message)
{
    json_object *b = parse_json(ORDER), *got = (json_object *)1;
    bool defined = true;
    swf_error_t *err = swf_asl_jsonata_eval(expr, b, &got, &defined);
    cr_expect_not_null(err, "%.80s succeeded with %s", expr, err ? "" : swf_json_str(got));
    cr_expect_null(got, "out must be NULL on failure");
    cr_expect(!defined);
    if (err != NULL) {
        cr_expect_eq(swf_error_code(err), SWF_E_STATES);
        cr_expect_str_eq(swf_error_name(err), QEE);
        cr_expect(strstr(swf_error_message(err), in_message) != NULL,
                  "%.80s: message \"%s\" lacks \"%s\"", expr, swf_error_message(err), in_message);
    } else {
        json_object_put(got);
    }
    swf_error_free(err);
    json_object_put(b);
}

/* ---- literals and constructors ---- */

Test(jsonata, literals_are_their_values)
{
    expect_text("42", "42");
    expect_text("-1.5", "-1.5");
    expect_text("1e3", "1000");
    expect_text("'single'", "\"single\"");
    expect_text("\"double\"", "\"double\"");
    expect_text("'tab\\there \\u00e9 \\ud83d\\ude00'", "\"tab\\there é 😀\"");
    expect_text("true", "true");
    expect_text("false", "false");
    expect_text("null", "null");
}

Test(jsonata, numbers_print_as_integers_when_integral)
{
    expect_text("2.0 * 3", "6");
    expect_text("7 / 2", "3.5");
    expect_text("0.1 + 0.2", "0.30000000000000004");
    expect_text("1e300 * 10", "1e+301");
}

Test(jsonata, object_constructor_evaluates_keys_and_values)
{
    expect_value("{'a': 1, 'b': $x + 1, 'c': [1, 2]}", "{\"a\": 1, \"b\": 4, \"c\": [1, 2]}");
    expect_value("{'k' & 'ey': 'v'}", "{\"key\": \"v\"}");
    expect_value("{}", "{}");
}

Test(jsonata, object_constructor_drops_undefined_values)
{
    expect_value("{'a': $states.input.missing, 'b': 1}", "{\"b\": 1}");
}

Test(jsonata, array_constructor_flattens_values_but_keeps_nested_constructors)
{
    expect_value("[1, 'two', null]", "[1, \"two\", null]");
    expect_value("[$states.input.n, 4]", "[1, 2, 3, 4]");
    expect_value("[[1, 2], [3]]", "[[1, 2], [3]]");
    expect_value("[]", "[]");
    expect_value("[$states.input.missing]", "[]");
}

Test(jsonata, range_inside_an_array_constructor)
{
    expect_value("[1..5]", "[1, 2, 3, 4, 5]");
    expect_value("[0, 2..4, 9]", "[0, 2, 3, 4, 9]");
    expect_value("[5..1]", "[]");
    expect_value("[1..$x]", "[1, 2, 3]");
}

/* ---- paths ---- */

Test(jsonata, path_navigates_objects)
{
    expect_value("$states.input.obj.k", "\"v\"");
    expect_value("$states.input.obj.z", "null");
    expect_value("$states.input.obj.`k`", "\"v\"");
    expect_undefined("'k'.$states"); /* a string first step is a field name */
    expect_value("$states.input.obj.\"k\"", "\"v\"");
}

Test(jsonata, path_maps_over_arrays_and_flattens)
{
    expect_value("$states.input.items.price", "[5, 15, 25]");
    expect_value("$states.input.nested", "[[1, 2], [3]]");
    expect_value("$states.input.items.name.$uppercase()", "[\"A\", \"B\", \"C\"]");
}

Test(jsonata, single_match_is_not_wrapped)
{
    expect_value("$states.input.items[price > 20].name", "\"c\"");
}

Test(jsonata, an_array_in_the_last_step_is_kept_as_is)
{
    expect_value("$states.input.one", "[7]");
    expect_value("$states.input.n", "[1, 2, 3]");
}

Test(jsonata, empty_brackets_keep_a_singleton_array)
{
    expect_value("$states.input.items[price > 20].name[]", "[\"c\"]");
}

Test(jsonata, missing_fields_are_undefined_not_errors)
{
    expect_undefined("$states.input.nothing");
    expect_undefined("$states.input.obj.k.deeper");
    expect_undefined("$states.input.items[price > 100].name");
}

Test(jsonata, predicate_with_an_index)
{
    expect_value("$states.input.items[0].name", "\"a\"");
    expect_value("$states.input.items[-1].name", "\"c\"");
    expect_value("$states.input.n[1]", "2");
    expect_value("$states.input.n[1.7]", "2");
    expect_undefined("$states.input.n[10]");
    expect_value("$x[0]", "3");
}

Test(jsonata, predicate_with_a_condition)
{
    expect_value("$states.input.items[price < 20].name", "[\"a\", \"b\"]");
    expect_value("$states.input.items[name = 'b'].price", "15");
    expect_value("$states.input.n[$ > 1]", "[2, 3]");
    expect_value("$states.input.items[price > 1][1].name", "\"b\"");
}

Test(jsonata, wildcard_and_descendants)
{
    expect_value("$states.input.obj.*", "[\"v\", null]");
    /* as jsonata-js: the context itself, then everything below it */
    expect_value("$states.input.items[0].**", "[{\"name\": \"a\", \"price\": 5}, \"a\", 5]");
    expect_value("$states.input.obj.**", "[{\"k\": \"v\", \"z\": null}, \"v\", null]");
}

Test(jsonata, map_operator_evaluates_per_item)
{
    expect_value("$states.input.n.($ * 10)", "[10, 20, 30]");
    expect_value("[1, 2, 3].($ + 1)", "[2, 3, 4]");
    expect_value("$states.input.items.{'n': name}",
                 "[{\"n\": \"a\"}, {\"n\": \"b\"}, {\"n\": \"c\"}]");
    expect_value("$states.input.items.[name, price]", "[[\"a\", 5], [\"b\", 15], [\"c\", 25]]");
}

/* ---- operators ---- */

Test(jsonata, arithmetic)
{
    expect_value("1 + 2 * 3", "7");
    expect_value("(1 + 2) * 3", "9");
    expect_value("10 - 4 - 3", "3");
    expect_value("7 % 3", "1");
    expect_value("-7 % 3", "-1");
    expect_value("9 / 3", "3");
    expect_value("-$x", "-3");
    expect_value("-(1 + 1)", "-2");
    expect_undefined("$states.input.missing + 1");
}

Test(jsonata, string_concatenation_casts_its_operands)
{
    expect_value("'Hello, ' & $name & '!'", "\"Hello, Ann!\"");
    expect_value("'n=' & 1.5 & true & null", "\"n=1.5truenull\"");
    expect_value("'a' & $states.input.missing & 'b'", "\"ab\"");
    expect_value("'' & [1, 'x']", "\"[1,\\\"x\\\"]\"");
    expect_value("'' & (0.1 + 0.2)", "\"0.3\"");
}

Test(jsonata, comparisons)
{
    expect_value("1 = 1.0", "true");
    expect_value("'a' != 'b'", "true");
    expect_value("[1, {'a': 2}] = [1, {'a': 2}]", "true");
    expect_value("1 = '1'", "false");
    expect_value("2 < 3", "true");
    expect_value("3 <= 3", "true");
    expect_value("'b' > 'a'", "true");
    expect_value("'ab' >= 'abc'", "false");
    expect_value("$states.input.missing = 1", "false");
    expect_value("$states.input.missing != 1", "false");
    /* an order comparison with undefined is undefined in jsonata-js 2 */
    expect_undefined("$states.input.missing < 1");
    expect_undefined("1 >= $states.input.missing");
    expect_value("{'a': $states.input.missing > 1}", "{}");
    expect_error("$states.input.missing < {}", "compares numbers or strings");
}

Test(jsonata, in_operator)
{
    expect_value("2 in $states.input.n", "true");
    expect_value("5 in $states.input.n", "false");
    expect_value("'a' in 'a'", "true");
    expect_value("$states.input.missing in [1]", "false");
}

Test(jsonata, boolean_operators_short_circuit)
{
    expect_value("true and false", "false");
    expect_value("false or true", "true");
    expect_value("$states.input.n and $states.input.s", "true");
    expect_value("$states.input.missing or $states.input.zero", "false");
    /* the right side would fail, but is never evaluated */
    expect_value("false and $undefinedVariable", "false");
    expect_value("true or $undefinedVariable", "true");
}

Test(jsonata, conditional)
{
    expect_value("$x > 2 ? 'big' : 'small'", "\"big\"");
    expect_value("$x > 5 ? 'big' : 'small'", "\"small\"");
    expect_value("$states.input.empty ? 1 : 2", "2");
    expect_undefined("$x > 5 ? 'big'");
    expect_value("$x > 1 ? $x > 2 ? 'a' : 'b' : 'c'", "\"a\"");
}

Test(jsonata, blocks_and_variable_binding)
{
    expect_value("($a := 2; $b := $a * $x; $b + 1)", "7");
    expect_value("($a := 1; ($a := 2); $a)", "1");
    expect_value("($x := 10; $x)", "10");
    expect_value("$v := 5", "5");
    expect_undefined("()");
}

Test(jsonata, chain_operator_passes_the_left_side_as_first_argument)
{
    expect_value("$name ~> $uppercase()", "\"ANN\"");
    expect_value("'a-b' ~> $split('-') ~> $join('+')", "\"a+b\"");
}

Test(jsonata, comments_are_ignored)
{
    expect_value("/* the answer */ 40 + 2", "42");
}

Test(jsonata, names_at_the_top_level_have_no_context)
{
    /* Step Functions evaluates with no input document: use $states.input. */
    expect_undefined("items");
    expect_undefined("$");
    expect_undefined("$$");
}

/* ---- built-in functions ---- */

Test(jsonata, fn_string)
{
    expect_value("$string(1)", "\"1\"");
    expect_value("$string(1e21)", "\"1e+21\"");
    expect_value("$string(0.1 + 0.2)", "\"0.3\"");
    expect_value("$string('s')", "\"s\"");
    expect_value("$string(true)", "\"true\"");
    expect_value("$string(null)", "\"null\"");
    expect_value("$string({'a': [1, 'b']})", "\"{\\\"a\\\":[1,\\\"b\\\"]}\"");
    expect_value("$string({'a': 1}, true)", "\"{\\n  \\\"a\\\": 1\\n}\"");
    expect_undefined("$string($states.input.missing)");
}

Test(jsonata, fn_number)
{
    expect_value("$number('12.5')", "12.5");
    expect_value("$number('-1e2')", "-100");
    expect_value("$number('0x1F')", "31");
    expect_value("$number(true)", "1");
    expect_value("$number(4)", "4");
    expect_error("$number('12a')", "cannot convert");
    expect_error("$number({})", "cannot convert");
}

Test(jsonata, fn_boolean_and_not)
{
    expect_value("$boolean(0)", "false");
    expect_value("$boolean('x')", "true");
    expect_value("$boolean([])", "false");
    expect_value("$boolean([0, 1])", "true");
    expect_value("$boolean([0])", "false");
    expect_value("$boolean({})", "false");
    expect_value("$boolean(null)", "false");
    expect_value("$not(true)", "false");
    expect_value("$not('')", "true");
    expect_undefined("$not($states.input.missing)");
}

Test(jsonata, fn_exists)
{
    expect_value("$exists($states.input.s)", "true");
    expect_value("$exists($states.input.obj.z)", "true");
    expect_value("$exists($states.input.missing)", "false");
}

Test(jsonata, fn_count_sum_max_min_average)
{
    expect_value("$count($states.input.n)", "3");
    expect_value("$count($states.input.missing)", "0");
    expect_value("$count(5)", "1");
    expect_value("$sum($states.input.n)", "6");
    expect_value("$sum([])", "0");
    expect_value("$sum(5)", "5");
    expect_value("$max($states.input.items.price)", "25");
    expect_value("$min($states.input.items.price)", "5");
    expect_value("$average([1, 2])", "1.5");
    expect_undefined("$max([])");
    expect_undefined("$average([])");
    expect_error("$sum([1, 'a'])", "array of numbers");
}

Test(jsonata, fn_length_and_substring_count_code_points)
{
    expect_value("$length('héllo')", "5");
    expect_value("$length('')", "0");
    expect_value("$substring('héllo', 1, 3)", "\"éll\"");
    expect_value("$substring('hello', -3)", "\"llo\"");
    expect_value("$substring('hello', -3, 2)", "\"ll\"");
    expect_value("$substring('hello', 2)", "\"llo\"");
    expect_value("$substring('hello', 10)", "\"\"");
    expect_value("$substring('hello', 1, 0)", "\"\"");
    expect_error("$length(5)", "must be a string");
}

Test(jsonata, fn_substring_before_and_after)
{
    expect_value("$substringBefore('a-b-c', '-')", "\"a\"");
    expect_value("$substringAfter('a-b-c', '-')", "\"b-c\"");
    expect_value("$substringBefore('abc', 'x')", "\"abc\"");
    expect_value("$substringAfter('abc', 'x')", "\"abc\"");
}

Test(jsonata, fn_case_and_trim)
{
    expect_value("$uppercase('abc Z')", "\"ABC Z\"");
    /* JavaScript's toUpperCase/toLowerCase: every letter, not only ASCII */
    expect_value("$uppercase('jos\u00e9 stra\u00dfe')", "\"JOS\u00c9 STRASSE\"");
    expect_value("$lowercase('\u00c9COLE \u0416')", "\"\u00e9cole \u0436\"");
    expect_value("$lowercase('\u039f\u0394\u039f\u03a3')", "\"\u03bf\u03b4\u03bf\u03c2\"");
    expect_value("$lowercase('ABC z')", "\"abc z\"");
    expect_value("$trim('  a \\n\\t b  ')", "\"a b\"");
    expect_value("$states.input.s.$uppercase()", "\"ABBBC\"");
}

Test(jsonata, fn_contains_with_a_string_or_a_regex)
{
    expect_value("$contains('abbbc', 'bbb')", "true");
    expect_value("$contains('abbbc', 'x')", "false");
    expect_value("$contains($states.input.s, /^ab+c$/)", "true");
    expect_value("$contains('ABC', /b/i)", "true");
    expect_value("$contains('a1', /\\d$/)", "true");
    expect_value("$contains('a b', /a\\sb/)", "true");
    expect_value("$contains('x', /[\\d]/)", "false");
    expect_value("$contains('ab', /(?:a)b/)", "true");
}

Test(jsonata, fn_split_and_join)
{
    expect_value("$split('a,b,c', ',')", "[\"a\", \"b\", \"c\"]");
    expect_value("$split('a,b,c', ',', 2)", "[\"a\", \"b\"]");
    expect_value("$split('abc', '')", "[\"a\", \"b\", \"c\"]");
    expect_value("$split('a1b22c', /[0-9]+/)", "[\"a\", \"b\", \"c\"]");
    expect_value("$join(['a', 'b'], '-')", "\"a-b\"");
    expect_value("$join(['a', 'b'])", "\"ab\"");
    expect_value("$join($states.input.items.name, ', ')", "\"a, b, c\"");
    expect_error("$join([1, 2])", "array of strings");
}

Test(jsonata, fn_replace)
{
    expect_value("$replace('a-b-c', '-', '+')", "\"a+b+c\"");
    expect_value("$replace('a-b-c', '-', '+', 1)", "\"a+b-c\"");
    expect_value("$replace('hello world', /o(r?)/, '[$1]')", "\"hell[] w[r]ld\"");
    expect_value("$replace('abc', /b/, '$$')", "\"a$c\"");
    expect_error("$replace('abc', '', 'x')", "empty");
    expect_error("$replace('abc', /x*/, 'y')", "empty string");
}

Test(jsonata, fn_keys_and_lookup)
{
    expect_value("$keys($states.input.obj)", "[\"k\", \"z\"]");
    expect_value("$keys({'only': 1})", "\"only\"");
    expect_value("$keys($states.input.items)", "[\"name\", \"price\"]");
    expect_value("$lookup($states.input.obj, 'k')", "\"v\"");
    expect_value("$lookup($states.input.items, 'price')", "[5, 15, 25]");
    expect_undefined("$lookup($states.input.obj, 'missing')");
}

Test(jsonata, fn_append_reverse_sort_distinct)
{
    expect_value("$append([1, 2], [3])", "[1, 2, 3]");
    expect_value("$append(1, 2)", "[1, 2]");
    expect_value("$append([1], $states.input.missing)", "[1]");
    expect_value("$reverse([1, 2, 3])", "[3, 2, 1]");
    expect_value("$sort([3, 1, 2])", "[1, 2, 3]");
    expect_value("$sort(['b', 'a'])", "[\"a\", \"b\"]");
    expect_value("$distinct([1, 2, 1, {'a': 1}, {'a': 1}])", "[1, 2, {\"a\": 1}]");
    expect_error("$sort([1, 'a'])", "numbers or of strings");
}

Test(jsonata, fn_merge)
{
    expect_value("$merge([{'a': 1, 'b': 1}, {'b': 2}])", "{\"a\": 1, \"b\": 2}");
    expect_value("$merge([])", "{}");
    expect_error("$merge([1])", "array of objects");
}

Test(jsonata, fn_numeric)
{
    expect_value("$round(2.5)", "2");
    expect_value("$round(3.5)", "4");
    expect_value("$round(-2.5)", "-2");
    expect_value("$round(2.675, 2)", "2.68");
    expect_value("$round(1234, -2)", "1200");
    expect_value("$floor(2.7)", "2");
    expect_value("$ceil(2.1)", "3");
    expect_value("$abs(-3)", "3");
    expect_value("$power(2, 10)", "1024");
    expect_value("$sqrt(16)", "4");
    expect_error("$sqrt(-1)", "negative");
    expect_error("$power(10, 400)", "out of range");
}

/* A number past 2^63 is a double; written as JavaScript writes it
 * (100000000000000000000), it would read back as an integer outside int64_t's
 * range, which the parser refuses (protocol/json_strict.c). */
Test(jsonata, a_number_past_2_63_is_written_so_that_it_reads_back)
{
    expect_text("$power(10, 20)", "100000000000000000000.0");
    expect_text("[-$power(2, 64), 1e300]", "[-18446744073709552000.0,1e+300]");
    json_object *b = parse_json(ORDER), *got = NULL;
    bool defined = false;
    cr_assert_null(swf_asl_jsonata_eval("$power(10, 20)", b, &got, &defined));
    fuzz_assert_json(got, "$power(10, 20)");
    json_object_put(got);
    json_object_put(b);
}

Test(jsonata, fn_type)
{
    expect_value("$type(1)", "\"number\"");
    expect_value("$type('s')", "\"string\"");
    expect_value("$type(null)", "\"null\"");
    expect_value("$type([])", "\"array\"");
    expect_value("$type({})", "\"object\"");
    expect_value("$type(true)", "\"boolean\"");
}

Test(jsonata, fn_base64)
{
    expect_value("$base64encode('hello')", "\"aGVsbG8=\"");
    expect_value("$base64decode('aGVsbG8=')", "\"hello\"");
}

Test(jsonata, fn_partition)
{
    expect_value("$partition([1, 2, 3, 4, 5], 2)", "[[1, 2], [3, 4], [5]]");
    expect_value("$partition([], 2)", "[]");
    expect_error("$partition([1], 0)", "positive");
}

Test(jsonata, fn_range)
{
    expect_value("$range(0, 6, 2)", "[0, 2, 4, 6]");
    expect_value("$range(1, 3)", "[1, 2, 3]");
    expect_value("$range(3, 1, -1)", "[3, 2, 1]");
    expect_value("$range(1, 3, -1)", "[]");
    expect_error("$range(0, 1, 0)", "zero");
}

Test(jsonata, fn_hash_every_algorithm)
{
    expect_value("$hash('input data', 'SHA-256')",
                 "\"b4a697a057313163aee33cd8d40c66e9f0f177e00cac2de32475ffff6169c3e3\"");
    expect_value("$hash('abc', 'MD5')", "\"900150983cd24fb0d6963f7d28e17f72\"");
    expect_value("$hash('abc', 'SHA-1')", "\"a9993e364706816aba3e25717850c26c9cd0d89d\"");
    expect_value("$hash('abc', 'SHA-384')",
                 "\"cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed"
                 "8086072ba1e7cc2358baeca134c825a7\"");
    expect_value("$hash('abc', 'SHA-512')",
                 "\"ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                 "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f\"");
    expect_error("$hash('abc', 'SHA-3')", "unknown algorithm");
}

Test(jsonata, fn_parse)
{
    expect_value("$parse('{\"k\": [1]}')", "{\"k\": [1]}");
    expect_value("$parse('null')", "null");
    expect_error("$parse('{oops')", "not JSON");
}

Test(jsonata, functions_use_the_context_when_the_first_argument_is_missing)
{
    expect_value("$states.input.items.name.$string()", "[\"a\", \"b\", \"c\"]");
    expect_value("$states.input.s.$length()", "5");
}

/* Found by comparing with jsonata-js 2.0.6. */
Test(jsonata, paths_agree_with_jsonata_js)
{
    /* a wildcard flattens arrays at any depth */
    expect_value_in("$o.*", "{\"o\": {\"a\": [1, [2, [3]]], \"b\": 4}}", "[1, 2, 3, 4]");
    /* an object constructor groups the items of its context */
    expect_value("[[1, 2], [3]].{'k': $}", "[{\"k\": [1, 2]}, {\"k\": 3}]");
    expect_value("{$states.input.missing: 1, 'b': 2}", "{\"b\": 2}");
    /* an index selecting an array gives that array, kept by the last step */
    expect_value_in("$a[-1]", "{\"a\": [[1]]}", "[1]");
    expect_value("[1, [2, 3]][-1][-1]", "3");
    /* only the array constructor written as a step is kept whole */
    expect_value("($x := [1, 2]; $x.{'x': $})", "[{\"x\": 1}, {\"x\": 2}]");
    expect_value("([1, 2, 3]).{'x': $}", "[{\"x\": 1}, {\"x\": 2}, {\"x\": 3}]");
}

/* ---- functions: lambdas, closures, higher-order functions ---- */

/* Conditions take a function as true, as jsonata-js does; $boolean and
 * $not take it as false, as jsonata-js's do. */
Test(jsonata, a_function_is_true_as_a_condition)
{
    expect_value("(function() { 1 }) ? 't' : 'f'", "\"t\"");
    expect_value("$string and true", "true");
    expect_value("[1][$string]", "1");
    expect_value("/a/ ? 't' : 'f'", "\"f\"");
    expect_value("$boolean(function() { 1 })", "false");
    expect_value("$not($string)", "true");
}

Test(jsonata, a_lambda_is_called_through_its_binding)
{
    expect_value("($double := function($x) { $x * 2 }; $double(21))", "42");
    expect_value("(function($a, $b) { $a & $b })('x', 'y')", "\"xy\"");
    expect_value("\u03bb($x) { $x + 1 }(1)", "2");
    expect_value("function($x)<n:n> { $x + 1 }(1)", "2"); /* signatures: accepted, not checked */
}

Test(jsonata, missing_arguments_are_undefined_and_extra_ones_ignored)
{
    expect_value("($f := function($a, $b) { $exists($b) }; $f(1))", "false");
    expect_value("($f := function($a) { $a }; $f(1, 2, 3))", "1");
}

Test(jsonata, closures_keep_the_bindings_they_were_made_in)
{
    expect_value("($add := function($x) { function($y) { $x + $y } }; $add2 := $add(2); "
                 "[$add2(1), $add(10)(1)])",
                 "[3, 11]");
    expect_value("($n := 1; $f := function() { $n }; $n := 5; $f())", "5");
    expect_value("($f := (function() { ($hidden := 7; function() { $hidden }) })(); $f())", "7");
}

Test(jsonata, a_lambda_sees_the_context_it_was_made_in)
{
    expect_value("$states.input.obj.(function() { k })()", "\"v\"");
}

Test(jsonata, a_binding_hides_a_built_in_of_the_same_name)
{
    expect_value("($sum := function($a, $b) { $a - $b }; $sum(5, 2))", "3");
}

Test(jsonata, built_in_functions_are_values)
{
    expect_value("($u := $uppercase; $u('a'))", "\"A\"");
    expect_value("$map(['1', '2'], $number)", "[1, 2]");
    expect_value("$map([1, 2], $string)", "[\"1\", \"2\"]");
    expect_value("$type($sum)", "\"function\"");
    expect_value("$string($sum)", "\"\"");
    expect_error("($u := $uppercase; $u('a', 'b'))", "at most 1 argument");
}

Test(jsonata, calling_what_is_not_a_function_is_an_error)
{
    expect_error("($f := 1; $f(2))", "$f is not a function but number");
    expect_error("$states.input.n(1)", "only functions can be called");
    expect_error("/a/(1)", "a regular expression is called on a string, not number");
}

Test(jsonata, unknown_functions_fail_when_evaluated_not_when_checked)
{
    /* As on AWS: a valid definition, a States.QueryEvaluationError at run time. */
    swf_error_t *err = swf_asl_jsonata_check("$lenght('abc')");
    cr_expect_null(err);
    swf_error_free(err);
    expect_error("$lenght('abc')", "the function $lenght is not defined");
    expect_error("$x(1)", "$x is not a function"); /* workflow variables are JSON */
}

Test(jsonata, chain_applies_a_function_value)
{
    expect_value("$name ~> $uppercase", "\"ANN\"");
    expect_value("$name ~> function($s) { $s & '!' }", "\"Ann!\"");
    expect_value("$states.input.n ~> $map(function($v) { $v * 10 }) ~> $sum()", "60");
    expect_value("($shout := $uppercase ~> function($s) { $s & '!' }; $shout('hi'))", "\"HI!\"");
    expect_error("1 ~> 2", "right side of ~> must be a function");
}

Test(jsonata, partial_application_makes_a_function_of_the_holes)
{
    expect_value("($first := $substring(?, 0, 1); $first('hello'))", "\"h\"");
    expect_value("($add := function($a, $b) { $a + $b }; $map([1, 2], $add(?, 10)))", "[11, 12]");
    expect_value("($pow := $power(?, ?); $pow(2, 10))", "1024");
    expect_value("($dash := $join(?, '-'); ['a', 'b'] ~> $dash)", "\"a-b\"");
    expect_error("$power(2, ?)()", "argument 2 must be a number");
    expect_error("$power(?, 2)", "is a function, not JSON");
}

Test(jsonata, fn_map)
{
    expect_value("$map($states.input.n, function($v) { $v * 2 })", "[2, 4, 6]");
    expect_value("$map($states.input.n, function($v, $i) { $v * $i })", "[0, 2, 6]");
    expect_value("$map($states.input.n, function($v, $i, $a) { $count($a) })", "[3, 3, 3]");
    expect_value("$map($states.input.items, function($o) { $o.price > 10 ? $o.name })",
                 "[\"b\", \"c\"]");
    expect_value("$map([1, 2], function($v) { [$v, $v] })", "[[1, 1], [2, 2]]");
    expect_value("$map(5, function($v) { $v + 1 })", "6");
    expect_value("$map([7], function($v) { $v })", "7"); /* a sequence of one */
    expect_undefined("$map($states.input.missing, function($v) { $v })");
    expect_undefined("$map([], function($v) { $v })");
    expect_error("$map([1], 2)", "argument 2 must be a function, not number");
}

Test(jsonata, fn_filter)
{
    expect_value("$filter($states.input.items, function($o) { $o.price >= 15 }).name",
                 "[\"b\", \"c\"]");
    expect_value("$filter([1, 2, 3, 4], function($v, $i) { $i % 2 = 0 })", "[1, 3]");
    expect_value("[0, 1, '', 'a'] ~> $filter($boolean)", "[1, \"a\"]");
    expect_undefined("$filter([1, 2], function($v) { $v > 5 })");
}

Test(jsonata, fn_reduce)
{
    expect_value("$reduce($states.input.n, function($acc, $v) { $acc + $v })", "6");
    expect_value("$reduce($states.input.n, function($acc, $v) { $acc + $v }, 10)", "16");
    expect_value("$reduce(['a', 'b', 'c'], function($acc, $v, $i) { $acc & $i & $v }, '')",
                 "\"0a1b2c\"");
    expect_value("$reduce([5], function($acc, $v) { $acc + $v })", "5");
    expect_value("$reduce([], function($acc, $v) { $acc + $v }, 'init')", "\"init\"");
    expect_undefined("$reduce([], function($acc, $v) { $acc + $v })");
    expect_value("$reduce($states.input.items, function($m, $o) { $merge([$m, {$o.name: "
                 "$o.price}]) }, {})",
                 "{\"a\": 5, \"b\": 15, \"c\": 25}");
    expect_error("$reduce([1, 2], function($v) { $v })", "at least two arguments");
}

Test(jsonata, fn_single)
{
    expect_value("$single($states.input.items, function($o) { $o.name = 'b' }).price", "15");
    expect_value("$single([4])", "4");
    expect_error("$single($states.input.n, function($v) { $v > 1 })", "more than one item");
    expect_error("$single($states.input.n, function($v) { $v > 5 })", "no item matches");
    expect_error("$single([1, 2])", "more than one item");
}

Test(jsonata, fn_sift_and_each)
{
    expect_value("$sift({'a': 1, 'b': 2, 'c': 3}, function($v) { $v >= 2 })",
                 "{\"b\": 2, \"c\": 3}");
    expect_value("$sift({'a': 1, 'bb': 2}, function($v, $k) { $length($k) = 2 })", "{\"bb\": 2}");
    expect_value("$states.input.obj ~> $sift(function($v) { $v != null })", "{\"k\": \"v\"}");
    expect_undefined("$sift({'a': 1}, function($v) { false })");
    expect_value("$each({'a': 1, 'b': 2}, function($v, $k) { $k & '=' & $v })",
                 "[\"a=1\", \"b=2\"]");
    expect_value("$states.input.obj.$each(function($v, $k) { $k })", "[\"k\", \"z\"]");
    expect_error("$each([1], function($v) { $v })", "must be an object");
}

Test(jsonata, fn_sort_with_a_comparator)
{
    expect_value("$sort($states.input.items, function($l, $r) { $l.price < $r.price }).name",
                 "[\"c\", \"b\", \"a\"]");
    expect_value("$sort([3, 1, 2], function($a, $b) { $a > $b })", "[1, 2, 3]");
    /* stable: equal items keep their order */
    expect_value("$sort([{'k': 1, 'i': 0}, {'k': 0, 'i': 1}, {'k': 1, 'i': 2}], "
                 "function($a, $b) { $a.k > $b.k }).i",
                 "[1, 0, 2]");
    expect_value("$sort([[1], 'mixed', {}], function($a, $b) { false })", "[[1], \"mixed\", {}]");
    expect_value("$sort(3, function($a, $b) { true })", "[3]"); /* one item: an array */
    expect_error("$sort([1, 2], 'no')", "must be a function");
}

Test(jsonata, errors_inside_a_lambda_are_query_errors)
{
    expect_error("$map([1, 'a'], function($v) { $v + 1 })", "must be a number");
    expect_error("$map(['a'], $number)", "$map: $number: cannot convert");
}

Test(jsonata, runaway_recursion_ends_in_an_error)
{
    char want[64];
    snprintf(want, sizeof want, "nested more than %d deep", SWF_LIMIT_JSONATA_CALL_DEPTH);
    expect_error("($f := function($n) { $f($n + 1) }; $f(0))", want);
    expect_error("($f := function($n) { 1 + $f($n + 1) }; $f(0))", "nested more than");
    expect_error("($f := function() { $map([1], function($v) { $f() }) }; $f())",
                 "nested more than");
    expect_error("($f := function($g) { $g($g) }; $f($f))", "nested more than");
    /* each call nested in 50 parentheses: the evaluation depth ends it first */
    char deep[512] = "($f := function($n) { ";
    for (int i = 0; i < 50; i++)
        strcat(deep, "(");
    strcat(deep, "$f($n + 1)");
    for (int i = 0; i < 50; i++)
        strcat(deep, ")");
    strcat(deep, " }; $f(0))");
    snprintf(want, sizeof want, "nested more than %d deep", SWF_LIMIT_JSONATA_EVAL_DEPTH);
    expect_error(deep, want);
    /* exponential but shallow: ends on the work limit */
    expect_error("($fib := function($n) { $n < 2 ? $n : $fib($n - 1) + $fib($n - 2) }; "
                 "$fib(40))",
                 "too much");
}

Test(jsonata, bounded_recursion_works)
{
    expect_value("($fact := function($n) { $n <= 1 ? 1 : $n * $fact($n - 1) }; $fact(10))",
                 "3628800");
    expect_value("($fib := function($n) { $n < 2 ? $n : $fib($n - 1) + $fib($n - 2) }; "
                 "$fib(15))",
                 "610");
    char expr[160];
    snprintf(expr, sizeof expr,
             "($depth := function($n) { $n = 0 ? 0 : 1 + $depth($n - 1) }; $depth(%d))",
             SWF_LIMIT_JSONATA_CALL_DEPTH - 1);
    char want[16];
    snprintf(want, sizeof want, "%d", SWF_LIMIT_JSONATA_CALL_DEPTH - 1);
    expect_value(expr, want);
}

Test(jsonata, work_in_lambdas_is_limited)
{
    expect_error("$map([1..100000], function($v) { $map([1..1000], function($w) { $w }) })",
                 "too much");
}

Test(jsonata, a_regular_expression_called_gives_its_first_match)
{
    expect_value("'abc' ~> /b(c)/",
                 "{\"match\": \"bc\", \"start\": 1, \"end\": 3, \"groups\": [\"c\"]}");
    expect_undefined("'abc' ~> /x/");
    expect_value("$filter(['apple', 'berry', 'avocado'], /^a/)", "[\"apple\", \"avocado\"]");
    expect_value("$sift({'Ab': 1, 'b': 2}, function($v, $k) { $k ~> /^A/ })", "{\"Ab\": 1}");
}

Test(jsonata, regular_expressions_match_characters_not_bytes)
{
    /* JavaScript's . is one character, and not a line end */
    expect_value("$replace('caf\u00e9', /.$/, 'x')", "\"cafx\"");
    expect_value("$match('\u00e9', /^.$/).match", "\"\u00e9\"");
    expect_value("$replace('\u00fcber', /[\u00fc\u00f6]/, 'u')", "\"uber\"");
    expect_value("$contains('\u00c4', /\u00e4/i)", "true");
    expect_undefined("$match('a\\nb', /a.b/)");
    expect_value("$split('a\u00e9b', /./)", "[\"\", \"\", \"\", \"\"]");
    /* \\w is ASCII only, as in JavaScript */
    expect_value("$match('\u00e9a', /\\w+/).match", "\"a\"");
    /* positions count UTF-16 code units, as JavaScript's match.index */
    expect_value("$match('\U0001F600x', /x/).index", "2");
}

Test(jsonata, regular_expressions_follow_javascript)
{
    /* the first alternative that matches, not the longest (POSIX) */
    expect_value("$match('ab', /a|ab/).match", "\"a\"");
    expect_value("$match('<a><b>', /<.*?>/).match", "[\"<a>\", \"<b>\"]");
    expect_value("$match('cost 42, $7', /(?<=\\$)\\d+/).match", "\"7\"");
    expect_value("$replace('CamelCaseWord', /(?<=[a-z])([A-Z])/, '_$1')", "\"Camel_Case_Word\"");
    expect_value("$match('scat cat', /\\bcat\\b/).index", "5");
    expect_value("$replace('2024-01-15', /(?<y>\\d+)-(?<m>\\d+)-(\\d+)/, '$3.$2.$1')",
                 "\"15.01.2024\"");
    expect_value("$match('abcabc', /(abc)\\1/).groups", "[\"abc\"]");
    /* a group of a loop's earlier iteration is forgotten, as in JavaScript */
    expect_value("$match('ab', /(?:(a)|b)+/).groups", "[null]");
    /* $0 is the match; $N takes as many digits as there are groups */
    expect_value("$replace('abc', /b/, '[$0]')", "\"a[b]c\"");
    expect_value("$replace('abcdefghijk', /(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)/, '$11$10$12')",
                 "\"kja2\"");
    expect_value("$replace('abc', /(b)/, '[$2$]')", "\"a[$]c\"");
    /* a match that reached the end is the last (jsonata-js's next()) */
    expect_value("$replace('abc', /$/, '!')", "\"abc!\"");
    expect_value("$split('a,b,', /,|$/)", "[\"a\", \"b\", \"\"]");
    expect_value("$split('', /x*/)", "[\"\", \"\"]");
    expect_error("$replace('abc', /x*/, '-')", "matches an empty string");
    /* brackets are counted by jsonata-js's scanner, so these never end */
    expect_error("$match('a]', /]/)", "unterminated regular expression");
    expect_error("$match('a', /(/)", "unterminated regular expression");
    expect_error("$match('a', /a**/)", "nothing to repeat");
    /* catastrophic backtracking is an error, not a hang */
    expect_error("$match('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab', /^(a+)+$/)",
                 "backtracks too much");
}

Test(jsonata, string_literals_may_hold_nul)
{
    /* \u0000 is a character like any other (the literal was cut there) */
    expect_value("$length('a\\u0000b')", "3");
    expect_value("$match('a\\u0000b', /\\0/).index", "1");
    expect_value("'x\\u0000y' & 'z'", "\"x\\u0000yz\"");
}

Test(jsonata, fn_replace_with_a_function_and_groups)
{
    expect_value("$replace('abc', /b/, function($m) { $uppercase($m.match) })", "\"aBc\"");
    expect_value("$replace('x-y', /(\\w)-(\\w)/, function($m) { $m.groups[1] & $m.groups[0] })",
                 "\"yx\"");
    expect_error("$replace('abc', /b/, function($m) { 5 })", "must return a string");
    /* $1 is the first capturing group: (?:...) is not one */
    expect_value("$replace('ab', /(?:a)(b)/, '[$1]')", "\"[b]\"");
    /* a fractional limit is truncated, as String.split does */
    expect_value("$split('a,b,c', ',', 2.9)", "[\"a\", \"b\"]");
}

Test(jsonata, fn_match)
{
    expect_value("$match('ababbabbcc', /a(b+)/)",
                 "[{\"match\": \"ab\", \"index\": 0, \"groups\": [\"b\"]},"
                 " {\"match\": \"abb\", \"index\": 2, \"groups\": [\"bb\"]},"
                 " {\"match\": \"abb\", \"index\": 5, \"groups\": [\"bb\"]}]");
    expect_value("$match('ababbabbcc', /a(b+)/, 1)",
                 "{\"match\": \"ab\", \"index\": 0, \"groups\": [\"b\"]}");
    /* (?:...) captures nothing, as in JavaScript */
    expect_value("$match('xab', /(?:a)(b)/).groups", "[\"b\"]");
    expect_value("$match('\u00e9a', /a/).index", "1"); /* characters, not bytes */
    expect_undefined("$match('x', /y/)");
    expect_error("$match('x', 'x')", "must be a regular expression");
}

Test(jsonata, fn_pad)
{
    expect_value("$pad('foo', 5)", "\"foo  \"");
    expect_value("$pad('foo', -5, '#')", "\"##foo\"");
    expect_value("$pad('5', -3, '0')", "\"005\"");
    expect_value("$pad('x', 6, 'ab')", "\"xababa\"");
    expect_value("$pad('\u00e9', 3, '\u00e8')", "\"\u00e9\u00e8\u00e8\"");
    expect_value("$pad('long', 2)", "\"long\"");
    expect_error("$pad('x', 1e9)", "longer than");
}

Test(jsonata, fn_error_and_fn_assert_fail_with_the_message)
{
    expect_error("$error('custom failure')", "custom failure");
    expect_error("$error()", "$error() function evaluated");
    expect_error("$assert($x = 4, 'x must be 4')", "x must be 4");
    expect_error("$assert(false)", "$assert() statement failed");
    expect_value("($assert($x = 3); 'ok')", "\"ok\"");
    expect_error("$assert(1)", "must be a boolean");
}

Test(jsonata, fn_zip_and_fn_spread)
{
    expect_value("$zip([1, 2, 3], [4, 5], [7, 8, 9])", "[[1, 4, 7], [2, 5, 8]]");
    expect_value("$zip([1, 2])", "[[1], [2]]");
    expect_value("$zip(1, 2)", "[[1, 2]]");
    expect_value("$spread({'a': 1, 'b': 2})", "[{\"a\": 1}, {\"b\": 2}]");
    expect_value("$spread([{'a': 1}, {'b': 2, 'c': 3}])", "[{\"a\": 1}, {\"b\": 2}, {\"c\": 3}]");
    expect_value("$spread('x')", "\"x\"");
    expect_undefined("$spread({})"); /* an empty result (a fixed use after free) */
    expect_undefined("$spread([])");
}

Test(jsonata, url_encoding_and_decoding)
{
    expect_value("$encodeUrlComponent('?x=test&y=\u00e9')", "\"%3Fx%3Dtest%26y%3D%C3%A9\"");
    expect_value("$encodeUrl('https://example.org/a b?x=\u00e9&y=1#top')",
                 "\"https://example.org/a%20b?x=%C3%A9&y=1#top\"");
    expect_value("$decodeUrlComponent('%3Fx%3Dtest%26y%3D%C3%A9')", "\"?x=test&y=\u00e9\"");
    expect_value("$decodeUrl('a%20b%3F%41')", "\"a b%3FA\""); /* keeps reserved escapes */
    expect_error("$decodeUrlComponent('%E0%A4%A')", "malformed URL escape");
    expect_error("$decodeUrlComponent('%FF')", "not UTF-8");
}

Test(jsonata, fn_format_base)
{
    expect_value("$formatBase(100, 2)", "\"1100100\"");
    expect_value("$formatBase(2555, 16)", "\"9fb\"");
    expect_value("$formatBase(-255, 16)", "\"-ff\"");
    expect_value("$formatBase(2.5)", "\"2\""); /* rounded half to even */
    expect_error("$formatBase(1, 37)", "between 2 and 36");
}

/* ---- transforms ---- */

Test(jsonata, a_transform_changes_a_copy)
{
    const char *o = "{\"o\": {\"items\": [{\"id\": 1, \"p\": 2.5, \"tmp\": true},"
                    " {\"id\": 2, \"p\": 3, \"tmp\": false}], \"k\": \"v\"}}";
    expect_value_in("$o ~> |items|{'checked': true}|", o,
                    "{\"items\": [{\"id\": 1, \"p\": 2.5, \"tmp\": true, \"checked\": true},"
                    " {\"id\": 2, \"p\": 3, \"tmp\": false, \"checked\": true}], \"k\": \"v\"}");
    expect_value_in("($o ~> |items|{'p2': p * 2}, 'tmp'|).items", o,
                    "[{\"id\": 1, \"p\": 2.5, \"p2\": 5}, {\"id\": 2, \"p\": 3, \"p2\": 6}]");
    expect_value_in("($o ~> |items|{}, ['tmp', 'id']|).items", o, "[{\"p\": 2.5}, {\"p\": 3}]");
    expect_value_in("($t := |items[id = 2]|{'p': 0}|; $t($o).items.p)", o, "[2.5, 0]");
    /* the original is untouched */
    expect_value_in("($n := $o ~> |items|{'x': 1}, 'id'|; [$o.items[0].id, $n.items[0].x])", o,
                    "[1, 1]");
    /* a match put into itself is copied, not linked */
    expect_value_in("($o ~> |items[0]|{'self': $}|).items[0].self.id", o, "1");
    expect_undefined("$states.input.missing ~> |a|{}|");
}

Test(jsonata, transform_errors)
{
    expect_error("$states.input ~> |items|5|", "update of a transform must be an object");
    expect_error("$states.input ~> |items|{}, 5|", "deletions of a transform must be strings");
    expect_error("5 ~> |a|{}|", "applies to an object or an array");
    expect_error("|a|{}|", "is a function, not JSON");
}

/* ---- order-by, group-by ---- */

Test(jsonata, order_by_sorts_a_path)
{
    expect_value("$states.input.items^(>price).name", "[\"c\", \"b\", \"a\"]");
    expect_value("$states.input.items^(price).name", "[\"a\", \"b\", \"c\"]");
    expect_value("$states.input.items^(<name)[0].price", "5");
    expect_value("$states.input.n^(>$)", "[3, 2, 1]");
    expect_value("[{'a': 1, 'b': 2}, {'a': 1, 'b': 1}, {'a': 0, 'b': 3}]^(a, >b).b", "[3, 2, 1]");
    /* an undefined key sorts last, in either direction */
    expect_value("[{'a': 1}, {'b': 2}, {'a': 0}]^(a)", "[{\"a\": 0}, {\"a\": 1}, {\"b\": 2}]");
    expect_value("[{'a': 1}, {'b': 2}, {'a': 0}]^(>a)", "[{\"a\": 1}, {\"a\": 0}, {\"b\": 2}]");
    /* stable */
    expect_value("[{'k': 1, 'i': 0}, {'k': 0, 'i': 1}, {'k': 1, 'i': 2}]^(k).i", "[1, 0, 2]");
    expect_value("($states.input.items^(price).{'n': name, 'p': price})[1]",
                 "{\"n\": \"b\", \"p\": 15}");
}

Test(jsonata, order_by_errors)
{
    expect_error("[{'a': 1}, {'a': 'x'}]^(a)", "compares number with string");
    expect_error("[{'a': [1]}, {'a': 2}]^(a)", "must be a number or a string, not array");
}

Test(jsonata, group_by_builds_an_object_per_key)
{
    expect_value("$states.input.items{name: price}", "{\"a\": 5, \"b\": 15, \"c\": 25}");
    const char *sales = "{\"s\": [{\"r\": \"eu\", \"v\": 1}, {\"r\": \"us\", \"v\": 2},"
                        " {\"r\": \"eu\", \"v\": 3}]}";
    /* a key's value expression sees all its items */
    expect_value_in("$s{r: v}", sales, "{\"eu\": [1, 3], \"us\": 2}");
    expect_value_in("$s{r: $sum(v)}", sales, "{\"eu\": 4, \"us\": 2}");
    expect_value_in("$s{r: $count($)}", sales, "{\"eu\": 2, \"us\": 1}");
    expect_value_in("$s{r & '-total': $sum(v), 'all': $count($)}", sales,
                    "{\"eu-total\": 4, \"us-total\": 2, \"all\": 3}");
    expect_value_in("($s{r: v}).eu", sales, "[1, 3]");
    expect_value_in("$s{r: v}.eu", sales, "[1, 3]"); /* goes on from the grouped object */
    expect_value_in("$s{r: $sum(v)}^($)", sales, "{\"eu\": 4, \"us\": 2}");
    expect_value_in("$s{r: $missing}", "{\"s\": [{\"r\": \"x\"}], \"missing\": null}",
                    "{\"x\": null}");
    expect_value_in("$s{r: v.nothing}", sales, "{}");
}

Test(jsonata, group_by_errors)
{
    expect_error("$states.input.items{price: name}", "key must be a string, not number");
    expect_error("$states.input.items{name: 1, 'a': 2}", "comes twice");
    expect_error("$states.input.items{name: $uppercase}", "cannot be the value of");
}

/* ---- positional (#) and context (@) bindings ---- */

static const char *const LIBRARY =
    "{\"l\": {\"loans\": [{\"isbn\": \"1\", \"who\": \"ann\"}, {\"isbn\": \"2\", \"who\": \"bob\"},"
    "                {\"isbn\": \"1\", \"who\": \"cy\"}],"
    "        \"books\": [{\"isbn\": \"1\", \"title\": \"A\"}, {\"isbn\": \"2\", \"title\": "
    "\"B\"}]}}";

Test(jsonata, positional_binding_numbers_the_items_of_a_step)
{
    expect_value_in("$l.books#$i.{'t': title, 'i': $i}", LIBRARY,
                    "[{\"t\": \"A\", \"i\": 0}, {\"t\": \"B\", \"i\": 1}]");
    expect_value("([10, 20, 30])#$i.($ * $i)", "[0, 20, 60]");
    /* jsonata-js would evaluate a leading [...] whole and bind nothing */
    expect_error("[10, 20, 30]#$i.($ * $i)", "binds nothing");
    expect_value_in("$l.loans#$i[$i > 0].who", LIBRARY, "[\"bob\", \"cy\"]");
    /* before a filter: positions in the step's result; after one: in what it kept */
    expect_value_in("$l.loans#$i[who != 'ann'].$i", LIBRARY, "[1, 2]");
    expect_value_in("$l.loans[who != 'ann']#$i.$i", LIBRARY, "[0, 1]");
    /* after an order-by: positions in the sorted order */
    expect_value_in("$l.loans^(>who)#$i.(who & $i)", LIBRARY, "[\"cy0\", \"bob1\", \"ann2\"]");
    expect_value_in("$l.loans#$i^(>who).(who & $i)", LIBRARY, "[\"cy2\", \"bob1\", \"ann0\"]");
}

Test(jsonata, context_binding_joins_two_arrays)
{
    expect_value_in("$l.loans@$x.books@$b[$x.isbn = $b.isbn].{'title': $b.title, 'who': $x.who}",
                    LIBRARY,
                    "[{\"title\": \"A\", \"who\": \"ann\"}, {\"title\": \"B\", \"who\": \"bob\"},"
                    " {\"title\": \"A\", \"who\": \"cy\"}]");
    expect_value_in("$l.loans@$x.books@$b[$x.isbn = $b.isbn]^(>$x.who).$b.title", LIBRARY,
                    "[\"A\", \"B\", \"A\"]");
    expect_undefined("$states.input.items@$x.nothing@$y.($x)");
    /* both on one step */
    expect_value_in("$l.loans@$v#$i[$i > 0].{'i': $i, 'who': $v.who}", LIBRARY,
                    "[{\"i\": 1, \"who\": \"bob\"}, {\"i\": 2, \"who\": \"cy\"}]");
}

Test(jsonata, bindings_errors)
{
    expect_error("$states.input.items@$x[0]@$y", "must come before the step's filters");
}

Test(jsonata, later_step_filters_filter_the_whole_stream)
{
    /* as jsonata-js: once a path is a tuple stream, ($)[0] keeps its first */
    expect_value_in("$l.loans#$i.($)[0].who", LIBRARY, "\"ann\"");
    expect_value_in("$l.loans.($)[0].who", LIBRARY, "[\"ann\", \"bob\", \"cy\"]");
}

/* ---- group-by after # and @ bindings ---- */

Test(jsonata, group_by_after_bindings_sees_each_tuples_variables)
{
    expect_value_in("$l.loans@$x.books@$b[$x.isbn = $b.isbn]{$x.who: $b.title}", LIBRARY,
                    "{\"ann\": \"A\", \"bob\": \"B\", \"cy\": \"A\"}");
    /* a group of several tuples sees each variable's values appended */
    expect_value_in("$l.loans@$x.books@$b[$x.isbn = $b.isbn]{$b.title: $x.who}", LIBRARY,
                    "{\"A\": [\"ann\", \"cy\"], \"B\": \"bob\"}");
    expect_value_in("$l.loans@$x.books@$b[$x.isbn = $b.isbn]{$b.title: $count($x)}", LIBRARY,
                    "{\"A\": 2, \"B\": 1}");
    expect_value_in("$l.loans#$i{isbn: $i}", LIBRARY, "{\"1\": [0, 2], \"2\": 1}");
    expect_value_in("$l.loans#$i{'all': $count($), who: 1}", LIBRARY,
                    "{\"all\": 3, \"ann\": 1, \"bob\": 1, \"cy\": 1}");
    /* jsonata-js 2.0.6 takes the item away from a tuple grouped alone, so a
     * group evaluated after that one no longer counts it */
    expect_value_in("$l.loans#$i{who: 1, 'all': $count($)}", LIBRARY,
                    "{\"ann\": 1, \"all\": 2, \"bob\": 1, \"cy\": 1}");
    /* a path's group-by groups the path it ends, however long */
    expect_value_in("$l.loans{'n': $count($)}.isbn", LIBRARY, "{\"n\": 3}");
    /* as jsonata-js: a filter after a path's group-by filters its last step */
    expect_value_in("$l.loans#$i{who: $i}[0]", LIBRARY, "{\"ann\": 0}");
    expect_value_in("$l.loans{who: isbn}[1]", LIBRARY, "{\"bob\": \"2\"}");
    /* the path ended before its first binding: no tuples, one undefined item */
    expect_value_in("$l.nothing.x#$i{'a': 1}", LIBRARY, "{\"a\": 1}");
}

Test(jsonata, group_by_after_bindings_errors)
{
    /* jsonata-js 2.0.6 fails too (reading a tuple that is not there) */
    expect_error("$states.input.items#$i.nothing{'a': 1}", "no items to group");
    expect_error("$states.input.items#$i{$i: name}", "key must be a string, not number");
    expect_error("$states.input.items#$i{name: $i, 'a': $i, 'b': 2}", "comes twice");
}

/* ---- the parent operator (%) ---- */

static const char *const ACCOUNT =
    "{\"a\": {\"Account\": {\"name\": \"Firefly\", \"Order\": ["
    "  {\"id\": \"o1\", \"Product\": [{\"name\": \"hat\", \"price\": 34},"
    "                              {\"name\": \"cap\", \"price\": 21}]},"
    "  {\"id\": \"o2\", \"Product\": [{\"name\": \"hat\", \"price\": 34},"
    "                              {\"name\": \"cloak\", \"price\": 107}]}]}},"
    " \"l\": {\"loans\": [{\"isbn\": \"1\", \"who\": \"ann\"}, {\"isbn\": \"2\", \"who\": "
    "\"bob\"}],"
    "       \"books\": [{\"isbn\": \"1\", \"title\": \"A\"}, {\"isbn\": \"2\", \"title\": "
    "\"B\"}]}}";

Test(jsonata, parent_operator_is_the_item_of_the_step_before)
{
    expect_value_in("$a.Account.Order.Product.{'p': name, 'o': %.id, 'acc': %.%.name}", ACCOUNT,
                    "[{\"p\": \"hat\", \"o\": \"o1\", \"acc\": \"Firefly\"},"
                    " {\"p\": \"cap\", \"o\": \"o1\", \"acc\": \"Firefly\"},"
                    " {\"p\": \"hat\", \"o\": \"o2\", \"acc\": \"Firefly\"},"
                    " {\"p\": \"cloak\", \"o\": \"o2\", \"acc\": \"Firefly\"}]");
    expect_value_in("$a.Account.Order.Product.%.id", ACCOUNT, "[\"o1\", \"o1\", \"o2\", \"o2\"]");
    expect_value_in("$a.Account.Order.Product.%.%.name", ACCOUNT,
                    "[\"Firefly\", \"Firefly\", \"Firefly\", \"Firefly\"]");
    expect_value_in("$a.Account.Order.Product[%.id = 'o2'].name", ACCOUNT, "[\"hat\", \"cloak\"]");
    expect_value_in("$a.Account.Order.Product^(>%.id, price).name", ACCOUNT,
                    "[\"hat\", \"cloak\", \"cap\", \"hat\"]");
    expect_value_in("$a.Account.Order.Product.(name & '@' & %.id)", ACCOUNT,
                    "[\"hat@o1\", \"cap@o1\", \"hat@o2\", \"cloak@o2\"]");
    expect_value_in("$a.Account.Order.Product.($uppercase(%.id))", ACCOUNT,
                    "[\"O1\", \"O1\", \"O2\", \"O2\"]");
    /* the path is a tuple stream: [0] keeps the first of all the products */
    expect_value_in("$a.Account.Order.Product[0].%.id", ACCOUNT, "\"o1\"");
    /* a % after a block looks into its last expression */
    expect_value_in("$a.Account.Order.(Product).%.id", ACCOUNT, "[\"o1\", \"o1\", \"o2\", \"o2\"]");
    expect_value_in("$a.Account.Order.((Product)[0]).%.id", ACCOUNT, "[\"o1\", \"o2\"]");
    expect_value_in("$a.Account.Order.Product[%.%].price", ACCOUNT, "[34, 21, 34, 107]");
    expect_value_in("$a.Account.Order#$i.Product.{'i': $i, 'o': %.id}", ACCOUNT,
                    "[{\"i\": 0, \"o\": \"o1\"}, {\"i\": 0, \"o\": \"o1\"},"
                    " {\"i\": 1, \"o\": \"o2\"}, {\"i\": 1, \"o\": \"o2\"}]");
    /* after @ the context stays: % is the item loans was applied to */
    expect_value_in("$l.loans@$x.%.books[isbn = $x.isbn].title", ACCOUNT, "[\"A\", \"B\"]");
    expect_value_in("$a.Account.Order.Product.{'o': %.id, 'p': price}{o: $sum(p)}", ACCOUNT,
                    "{\"o1\": 55, \"o2\": 141}");
    expect_value_in("$a.Account.Order#$o.Product{$string($o): $sum(price)}", ACCOUNT,
                    "{\"0\": 55, \"1\": 141}");
    expect_value_in("$a.Account.Order#$o.Product{name: $o}", ACCOUNT,
                    "{\"hat\": [0, 1], \"cap\": 0, \"cloak\": 1}");
}

Test(jsonata, parent_operator_is_undefined_where_jsonata_does_not_pass_it_on)
{
    /* lambdas, ~>, group-by pairs and a path's first step keep their % */
    expect_undefined("$states.input.items.$map([1], function($v) { %.s })");
    expect_undefined("$states.input.items.(%.s ~> $uppercase())");
    expect_value("$states.input.items.$uppercase(%.s)", "[\"ABBBC\", \"ABBBC\", \"ABBBC\"]");
    expect_value_in("$a.Account.Order.Product{name: %.id}", ACCOUNT, "{}");
    expect_undefined("(%).x");
    expect_undefined("$states.input.items[%]"); /* a filter that is a % alone */
}

Test(jsonata, parent_operator_errors)
{
    const char *bad[] = {
        "%",                             /* above the whole expression */
        "$a.%",                          /* a variable has no parent */
        "$a.Account.**.%",               /* nor descendants */
        "$a.Account.Order.{'x': %.%.%}", /* above $a */
        "$a.Account.Order^(id).%",       /* nor an order-by */
        "$a.Account.Order.{'a': 1}.%",   /* nor an object */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        swf_error_t *err = swf_asl_jsonata_check(bad[i]);
        cr_expect_not_null(err, "check accepted \"%s\"", bad[i]);
        swf_error_free(err);
        expect_error(bad[i], "cannot be derived from this expression");
    }
}

Test(jsonata, parent_chains_and_grouped_tuples_stay_within_the_limits)
{
    /* each step binds a label: 1300 of them, carried by every tuple */
    char *expr = malloc(SWF_LIMIT_JSONATA_BYTES);
    cr_assert_not_null(expr);
    size_t n = (size_t)snprintf(expr, SWF_LIMIT_JSONATA_BYTES, "$l");
    for (int i = 0; i < 1300; i++)
        n += (size_t)snprintf(expr + n, SWF_LIMIT_JSONATA_BYTES - n, ".loans[0].%%");
    snprintf(expr + n, SWF_LIMIT_JSONATA_BYTES - n, ".loans#$i{who: $i}");
    expect_value_in(expr, ACCOUNT, "{\"ann\": 0, \"bob\": 1}");
    /* each % doubles the stream */
    n = (size_t)snprintf(expr, SWF_LIMIT_JSONATA_BYTES, "$l");
    for (int i = 0; i < 200; i++)
        n += (size_t)snprintf(expr + n, SWF_LIMIT_JSONATA_BYTES - n, ".loans.%%");
    snprintf(expr + n, SWF_LIMIT_JSONATA_BYTES - n, ".loans#$i{who: $count($i)}");
    json_object *b = parse_json(ACCOUNT), *got = NULL;
    bool defined = false;
    swf_error_t *err = swf_asl_jsonata_eval(expr, b, &got, &defined);
    cr_expect_not_null(err);
    if (err)
        cr_expect(strstr(swf_error_message(err), "too much") != NULL, "%s", swf_error_message(err));
    swf_error_free(err);
    json_object_put(got);
    json_object_put(b);
    free(expr);
}

/* ---- dates ---- */

Test(jsonata, fn_to_millis_reads_iso_8601)
{
    expect_text("$toMillis('1970-01-01T00:00:00.000Z')", "0");
    expect_text("$toMillis('2017-11-07T15:12:37.121Z')", "1510067557121");
    expect_text("$toMillis('2017-11-07T15:12:37.121+01:00')", "1510063957121");
    expect_text("$toMillis('2017-11-07T15:12:37-0530')", "1510087357000");
    expect_text("$toMillis('2017-11-07T15:12:37')", "1510067557000");
    expect_text("$toMillis('2017-11-07T15:12:37.1234Z')", "1510067557123");
    expect_text("$toMillis('2017-11-07T15:12:37.5Z')", "1510067557500");
    expect_text("$toMillis('2017-11-07')", "1510012800000");
    expect_text("$toMillis('2017')", "1483228800000");
    expect_text("$toMillis('2024-02-29')", "1709164800000");
    expect_text("$toMillis('1969-12-31T23:59:59.999Z')", "-1");
    expect_undefined("$toMillis($states.input.missing)");
}

Test(jsonata, fn_to_millis_errors)
{
    expect_error("$toMillis('2017-13-01')", "not ISO 8601");
    expect_error("$toMillis('2023-02-29')", "not ISO 8601");
    expect_error("$toMillis('2017-11-07T25:00:00Z')", "not ISO 8601");
    expect_error("$toMillis('yesterday')", "not ISO 8601");
    expect_error("$toMillis('2017-11-07T15:12:37Zjunk')", "not ISO 8601");
    expect_error("$toMillis('07/11/2017', '[D]/[M]/[Y')", "no closing ]");
    expect_error("$toMillis(0)", "must be a string");
}

Test(jsonata, fn_from_millis_writes_iso_8601)
{
    expect_value("$fromMillis(0)", "\"1970-01-01T00:00:00.000Z\"");
    expect_value("$fromMillis(1510067557121)", "\"2017-11-07T15:12:37.121Z\"");
    expect_value("$fromMillis(-1)", "\"1969-12-31T23:59:59.999Z\"");
    expect_value("$fromMillis(951782400000)", "\"2000-02-29T00:00:00.000Z\"");
    expect_value("$fromMillis(1510067557121, (), '+0100')", "\"2017-11-07T16:12:37.121+01:00\"");
    /* jsonata-js reads -0530 as -6 hours and -30 minutes: Step Functions does */
    expect_value("$fromMillis(1510067557121, (), '-0530')", "\"2017-11-07T08:42:37.121-06:30\"");
    expect_value("$fromMillis(1510067557121, (), '+0000')", "\"2017-11-07T15:12:37.121Z\"");
    expect_value("$toMillis($fromMillis(1234567890123))", "1234567890123");
    expect_undefined("$fromMillis($states.input.missing)");
    expect_value("$toMillis('2018-10-21T13:05:00Z').[$fromMillis(), $fromMillis($, (), '0000')]",
                 "[\"2018-10-21T13:05:00.000Z\", \"2018-10-21T13:05:00.000Z\"]");
    expect_error("$fromMillis(0, (), 'Europe/Paris')", "timezone");
    expect_error("$fromMillis(1e20)", "outside the years 0 to 9999");
    expect_error("$fromMillis(-62167219200001)", "outside the years");
    expect_value("$fromMillis(-62167219200000)", "\"0000-01-01T00:00:00.000Z\"");
}

/* The expected texts are those of jsonata-js's own test suite. */
Test(jsonata, fn_from_millis_formats_a_picture)
{
    expect_value("$fromMillis(1521801216617, 'Year: <[Y0001]>')", "\"Year: <2018>\"");
    expect_value("$fromMillis(1521801216617, '[[Year]]: [[[Y0001]]]')", "\"[Year]: [2018]\"");
    expect_value("$fromMillis(1521801216617, '[D#1]/[M#1]/[Y0001]')", "\"23/3/2018\"");
    expect_value("$fromMillis(1521801216617, '[Y0001]-[M01]-[D01]')", "\"2018-03-23\"");
    expect_value("$fromMillis(1521801216617, '[M01]/[D01]/[Y0001] at [H01]:[m01]:[s01]')",
                 "\"03/23/2018 at 10:33:36\"");
    expect_value("$fromMillis(1521801216617, '[Y]-[M01]-[D01]T[H01]:[m]:[s].[f001][Z01:01t]')",
                 "\"2018-03-23T10:33:36.617Z\"");
    expect_value("$fromMillis(1521801216617, '[Y]-[ M01]-[D 01]T[H01 ]:[ m ]:[s].[f0 01]')",
                 "\"2018-03-23T10:33:36.617\"");
    expect_value("$fromMillis(1522616700000, '[F0] [FNn]')", "\"7 Sunday\"");
    expect_value("$fromMillis(1522703100000, '[F0] [FNn]')", "\"1 Monday\"");
    expect_value("$fromMillis(1521801216617, '[FNn], [D1o] [MNn] [Y]')",
                 "\"Friday, 23rd March 2018\"");
    expect_value("$fromMillis(1521801216617, '[D1o] [MN] [Y]')", "\"23rd MARCH 2018\"");
    expect_value("$fromMillis(1521801216617, '[FNn,3-3], [D1o] [MNn,3-3] [Y] [C]')",
                 "\"Fri, 23rd Mar 2018 ISO\"");
    expect_value("$fromMillis(1521801216617, '[F], [D]/[M]/[Y] [h]:[m]:[s] [P]')",
                 "\"friday, 23/3/2018 10:33:36 am\"");
    expect_value("$fromMillis(1204405500000, '[F], [D]/[M]/[Y] [h]:[m]:[s] [P]')",
                 "\"saturday, 1/3/2008 9:05:00 pm\"");
    expect_value("$fromMillis(1199664000000, '[h]:[m] [PN]')", "\"12:00 AM\"");
    expect_value("$fromMillis(1546257600000, '[d] days in [Y0001]')", "\"365 days in 2018\"");
    expect_value("$fromMillis(1483185600000, '[d] days in [Y0001]')", "\"366 days in 2016\"");
    expect_value("$fromMillis(1521801216617, '[Y01]')", "\"18\"");
}

Test(jsonata, fn_from_millis_shows_time_zones)
{
    expect_value("$fromMillis(1521801216617, '[H01]:[m] [Z0101t]', '+0100')", "\"11:33 +0100\"");
    expect_value("$fromMillis(1531310400000, '[H01][Z01:01]')", "\"12+00:00\"");
    expect_value("$fromMillis(1531310400000, '[H01][Z01:01t]')", "\"12Z\"");
    expect_value("$fromMillis(1531310400000, '[H01][Z]', '-0500')", "\"07-05:00\"");
    expect_value("$fromMillis(1531310400000, '[H01][Z0]', '-0500')", "\"07-5\"");
    expect_value("$fromMillis(1531310400000, '[H01][Z0]', '+0530')", "\"17+5:30\"");
    expect_value("$fromMillis(1531310400000, '[H01][z]', '-0500')", "\"07GMT-05:00\"");
    expect_value("$fromMillis(1230757500000, '[Y]-[M01]-[D01]T[H01]:[m]', '+0530')",
                 "\"2009-01-01T02:35\"");
}

Test(jsonata, fn_from_millis_picture_errors)
{
    expect_error("$fromMillis(0, '[YN]')", "has no names");
    expect_error("$fromMillis(0, '[Y')", "no closing ]");
    expect_error("$fromMillis(0, '[Z010101t]')", "at most four digits");
    expect_error("$fromMillis(0, '[Q]')", "unknown");
    expect_error("$fromMillis(0, '[Y\u03b1]')", "not supported");
    expect_error("$fromMillis(0, '[M1,x]')", "width");
    expect_error("$fromMillis(0, '[]')", "empty component");
}

/* Expected values from jsonata-js 2.0.6, the version Step Functions runs,
 * but where it strays from XPath's format-number on pictures no one uses
 * ("#,##,##0" gives ",0," there; exact powers of ten in exponent pictures
 * follow JavaScript's inexact log10). */
Test(jsonata, fn_format_number)
{
    expect_value("$formatNumber(1234.5678, '#,##0.00')", "\"1,234.57\"");
    expect_value("$formatNumber(12345.678, '$#,##0.00')", "\"$12,345.68\"");
    expect_value("$formatNumber(-1, '$#,##0.00')", "\"-$1.00\"");
    expect_value("$formatNumber(-1234, '#,##0;(#,##0)')", "\"(1,234)\"");
    expect_value("$formatNumber(1e6, '#,###')", "\"1,000,000\"");
    expect_value("$formatNumber(123456789, '#,##,###')", "\"1234,56,789\"");
    expect_value("$formatNumber(0.5, '0%')", "\"50%\"");
    expect_value("$formatNumber(0.0035, '0.00\u2030')", "\"3.50\u2030\"");
    expect_value("$formatNumber(-12.5, '000.0')", "\"-012.5\"");
    expect_value("$formatNumber(2.5, '0')", "\"2\"");            /* half to even */
    expect_value("$formatNumber(99.995, '0.00')", "\"100.00\""); /* as $round rounds */
    expect_value("$formatNumber(1.23456, '#,##0.00##')", "\"1.2346\"");
    expect_value("$formatNumber(0.5, '#.#')", "\".5\"");
    expect_value("$formatNumber(1, '#.##')", "\"1.0\"");
    expect_value("$formatNumber(0, '#')", "\"0\"");
    expect_value("$formatNumber(3.14159, '0.000e0')", "\"3.142e0\"");
    expect_value("$formatNumber(0.00012, '0.0e00')", "\"1.2e-04\"");
    expect_value("$formatNumber(2.675, '00.0e00')", "\"26.8e-01\"");
    expect_value("$formatNumber(9.9999, '0.00e0')", "\"10.00e0\"");
    expect_value("$formatNumber(0.5, '#.0e0')", "\"0.5e0\"");
    expect_value("$formatNumber(1234.5, '#.##0,00', "
                 "{'decimal-separator': ',', 'grouping-separator': '.'})",
                 "\"1.234,50\"");
    expect_value("$formatNumber(42, '\u0660\u0660\u0660', {'zero-digit': '\u0660'})",
                 "\"\u0660\u0664\u0662\"");
    expect_value("$states.input.items.price.$formatNumber($, '#0.00')",
                 "[\"5.00\", \"15.00\", \"25.00\"]");
    expect_undefined("$formatNumber($states.input.missing, '0')");
    expect_error("$formatNumber(1, '#..#')", "more than one decimal separator");
    expect_error("$formatNumber(1, '#;#;#')", "more than two sub-pictures");
    expect_error("$formatNumber(1, '0%\u2030')", "more than one percent or per-mille");
    expect_error("$formatNumber(1, '#,.0')", "grouping separator");
    expect_error("$formatNumber(1, '0#')", "digit sign (#) must not follow a digit");
    expect_error("$formatNumber(1, 'x')", "no digit");
    expect_error("$formatNumber('1', '0')", "must be a number");
    expect_error("$formatNumber(1, '0', {'zero-digit': 'ab'})", "one character");
}

/* Without a decision (no env on the bindings) there is no time to give. */
Test(jsonata, clock_functions_need_a_decision)
{
    expect_error("$now()", "has no time here");
    expect_error("$millis()", "has no time here");
    expect_error("$fromMillis($millis())", "has no time here");
}

/* ---- errors ---- */

Test(jsonata, undefined_variable_is_an_error)
{
    expect_error("$doesNotExist", "$doesNotExist is not defined");
    expect_error("$doesNotExist.a", "not defined");
    json_object *got = NULL;
    bool defined;
    swf_error_t *err = swf_asl_jsonata_eval("$states", NULL, &got, &defined);
    cr_expect_not_null(err, "no bindings: $states is not defined");
    swf_error_free(err);
}

Test(jsonata, a_bound_null_variable_is_null_not_an_error)
{
    expect_value("$nothing", "null");
}

Test(jsonata, a_function_is_not_a_json_result)
{
    expect_error("$string", "is a function, not JSON");
    expect_error("function($x) { $x }", "is a function, not JSON");
    expect_error("[function($x) { $x }]", "cannot be an array item");
    expect_error("{'f': $uppercase}", "cannot be the value of \"f\"");
    expect_error("$map([1], function($v) { $string })", "cannot be an item of the result");
}

Test(jsonata, type_errors)
{
    expect_error("'a' + 1", "must be a number");
    expect_error("1 - {}", "must be a number");
    expect_error("-'a'", "negates a number");
    expect_error("{} < 1", "compares numbers or strings");
    expect_error("1 < 'a'", "cannot compare");
    expect_error("$uppercase(1)", "$uppercase");
    expect_error("{1: 2}", "key must be a string");
    expect_error("{'a': 1, 'a': 2}", "twice");
    expect_error("1 / 0", "finite");
    expect_error("[1..'a']", "integer");
}

Test(jsonata, syntax_errors_fail_check_and_eval)
{
    const char *bad[] = {
        "1 +",
        "(1",
        "[1, 2",
        "{'a' 1}",
        "'unterminated",
        "$f(",
        "a..b",
        "1 2",
        "",
        "$uppercase('a', 'b')",
        "$substring()",
        "/]/",
        "/a{/",
        "function($x) $x",
        "function(1) { 1 }",
        "function($x, $x) { 1 }",
        "function($x)<n:n { 1 }",
        "$a{'k': 1}[0]",
        "a#$i#$j",
        "1#$i.a",
        "true.a",
        "a{'k': 1}{'j': 2}",
        "a^(b",
        "a@x",
        "a#1",
        "a@$x[0]@$y",
        "a[0]@$x",
        "a^(b)@$x",
        "%",
        "%.a",
        "$states.%",
        "a.**.%",
        "a.{'b': %.%.c}",
        "|a|{}",
        "|a {}|",
        "$substring(?, 0, 1, ?)",
        "$f(?",
        "$map([1])",
        "$x.1",
        "^(a)",
        "1 := 2",
        "'\\q'",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        swf_error_t *err = swf_asl_jsonata_check(bad[i]);
        cr_expect_not_null(err, "check accepted \"%s\"", bad[i]);
        if (err)
            cr_expect_eq(swf_error_code(err), SWF_E_INPUT, "%s", bad[i]);
        swf_error_free(err);
        expect_error(bad[i], "invalid JSONata expression");
    }
}

Test(jsonata, check_accepts_valid_expressions)
{
    const char *good[] = {
        "$states.input.items[price < 20].name",
        "($a := 1; $a + 1)",
        "$contains($states.input.s, /^ab+c$/i)",
        "{'a': [1..3], 'b': $x ? 1 : 2}",
        "$now()", /* valid syntax: refused when evaluated outside a decision */
        "($f := function($x) { $x }; $f(1))",
        "[1, 2] ~> $map(function($v) { $v })",
        "a^(>b, c)",
        "a{b: c}",
        "$substring(?, 0, 1)",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        swf_error_t *err = swf_asl_jsonata_check(good[i]);
        cr_expect_null(err, "check refused \"%s\": %s", good[i], err ? swf_error_message(err) : "");
        swf_error_free(err);
    }
}

/* Evaluates expr with the ORDER bindings and `env` attached, as the
 * interpreter attaches the decision's (jsonata.h); a new reference. */
static json_object *eval_in_decision(const char *expr, swf_asl_env_t *env)
{
    json_object *b = parse_json(ORDER), *got = NULL;
    json_object_set_userdata(b, env, NULL);
    bool defined = false;
    swf_error_t *err = swf_asl_jsonata_eval(expr, b, &got, &defined);
    cr_assert_null(err, "%s failed: %s", expr, err ? swf_error_message(err) : "");
    cr_assert(defined, "%s is undefined", expr);
    json_object_put(b);
    return got;
}

/* $now, $millis, $random, $uuid and $shuffle read the decision's time and
 * generator: the same env gives the same values (a replay), another
 * generator state other values. */
Test(jsonata, clock_and_random_functions_read_the_decision)
{
    const char *expr = "{'now': $now(), 'year': $now('[Y0001]', '+0100'), 'millis': $millis(), "
                       "'r': $random(), 'seeded': [$random(7), $random(7)], 'uuid': $uuid(), "
                       "'shuffled': $shuffle([1, 2, 3, 4, 5, 6, 7, 8])}";
    swf_asl_rng_t rng = {42};
    swf_asl_env_t env = {.rng = &rng, .now_ms = 1795354573036};
    json_object *first = eval_in_decision(expr, &env);
    cr_expect_str_eq(swf_json_get_string(first, "now"), "2026-11-22T13:36:13.036Z");
    cr_expect_str_eq(swf_json_get_string(first, "year"), "2026");
    json_object *v;
    cr_assert(swf_json_get(first, "millis", &v));
    cr_expect_eq(json_object_get_int64(v), 1795354573036);
    cr_assert(swf_json_get(first, "r", &v));
    cr_expect(json_object_get_double(v) >= 0 && json_object_get_double(v) < 1);
    cr_assert(swf_json_get(first, "seeded", &v));
    cr_expect(swf_json_equal(json_object_array_get_idx(v, 0), json_object_array_get_idx(v, 1)),
              "a seeded $random is a function of its seed: %s", swf_json_str(v));
    const char *uuid = swf_json_get_string(first, "uuid");
    cr_assert_not_null(uuid);
    cr_expect_eq(strlen(uuid), 36);
    cr_expect_eq(uuid[14], '4', "version 4: %s", uuid);
    cr_assert(swf_json_get(first, "shuffled", &v));
    cr_expect_eq(json_object_array_length(v), 8);
    int seen = 0;
    for (size_t i = 0; i < 8; i++)
        seen |= 1 << json_object_get_int(json_object_array_get_idx(v, i));
    cr_expect_eq(seen, 0x1fe, "a shuffle keeps every item once: %s", swf_json_str(v));

    rng.state = 42; /* a replay of the same decision */
    json_object *again = eval_in_decision(expr, &env);
    cr_expect(swf_json_equal(first, again), "%s then %s", swf_json_str(first), swf_json_str(again));
    rng.state = 43; /* another decision */
    json_object *other = eval_in_decision(expr, &env);
    cr_expect_str_neq(swf_json_get_string(other, "uuid"), uuid);
    json_object_put(first);
    json_object_put(again);
    json_object_put(other);

    expect_error("$random(1.5)", "must be an integer");
}

Test(jsonata, expression_length_is_limited)
{
    size_t n = SWF_LIMIT_JSONATA_BYTES + 1;
    char *expr = malloc(n + 1);
    memset(expr, ' ', n);
    expr[0] = '1';
    expr[n] = '\0';
    expect_error(expr, "limit");
    expr[n - 1] = '\0'; /* exactly at the limit: fine */
    expect_value(expr, "1");
    free(expr);
}

Test(jsonata, nesting_depth_is_limited)
{
    char expr[512];
    size_t d = SWF_LIMIT_JSONATA_DEPTH + 1, k = 0;
    for (size_t i = 0; i < d; i++)
        expr[k++] = '(';
    expr[k++] = '1';
    for (size_t i = 0; i < d; i++)
        expr[k++] = ')';
    expr[k] = '\0';
    expect_error(expr, "nested");
    expect_value("((((((((((1))))))))))", "1");
}

Test(jsonata, ranges_are_limited)
{
    expect_error("[1..1000000000]", "more than");
    expect_error("$range(0, 1e9)", "limit");
}

Test(jsonata, work_is_limited)
{
    /* 12.5 million comparisons, on little data */
    expect_error("$distinct([1..5000])", "too much work");
    expect_value("$count($distinct([1..1000]))", "1000");
}

Test(jsonata, data_built_is_limited)
{
    expect_error("[1..100000].([1..100000])", "too much data");
    expect_error("($s := $join([1..10000].$string(), '-'); [1..100000].($s & $s))",
                 "too much data");
    expect_value("$sum([1..100000])", "5000050000");
}

/* ---- templates ---- */

static void expect_template(const char *tmpl, const char *bindings, const char *want)
{
    json_object *t = parse_json(tmpl), *b = parse_json(bindings), *expected = parse_json(want);
    json_object *got = NULL;
    bool defined = false;
    swf_error_t *err = swf_asl_jsonata_template_eval(t, b, &got, &defined);
    cr_expect_null(err, "%s failed: %s", tmpl, err ? swf_error_message(err) : "");
    cr_expect(defined);
    cr_expect(swf_json_equal(got, expected), "%s gave %s, want %s", tmpl, swf_json_str(got), want);
    swf_error_free(err);
    json_object_put(got);
    json_object_put(expected);
    json_object_put(b);
    json_object_put(t);
}

Test(jsonata_template, is_expr_needs_the_whole_string)
{
    cr_expect(swf_asl_jsonata_is_expr("{% 1 %}"));
    cr_expect(swf_asl_jsonata_is_expr("{%1%}"));
    cr_expect(!swf_asl_jsonata_is_expr(" {% 1 %}"));
    cr_expect(!swf_asl_jsonata_is_expr("{% 1 %} "));
    cr_expect(!swf_asl_jsonata_is_expr("{%}"));
    cr_expect(!swf_asl_jsonata_is_expr("$.a"));
}

Test(jsonata_template, evaluates_expressions_at_any_depth)
{
    expect_template(
        "{\"sum\": \"{% $sum($states.input.n) %}\", \"label\": \"total\","
        " \"nested\": {\"count\": \"{% $count($states.input.n) %}\", \"lit\": [1, true]},"
        " \"list\": [\"{% $states.input.n[0] %}\", \"x\"]}",
        "{\"states\": {\"input\": {\"n\": [1, 2, 3]}}}",
        "{\"sum\": 6, \"label\": \"total\", \"nested\": {\"count\": 3, \"lit\": [1, true]},"
        " \"list\": [1, \"x\"]}");
}

Test(jsonata_template, strings_not_wrapped_are_literal)
{
    expect_template("{\"a\": \" {% $states.input %} \", \"b\": \"$states.input\"}",
                    "{\"states\": {\"input\": {\"v\": 1}}}",
                    "{\"a\": \" {% $states.input %} \", \"b\": \"$states.input\"}");
    expect_template("42", "{}", "42");
}

Test(jsonata_template, whole_value_expression)
{
    expect_template("\"{% $states.input.a + 1 %}\"", "{\"states\": {\"input\": {\"a\": 41}}}",
                    "42");
}

Test(jsonata_template, undefined_at_the_top_is_not_defined)
{
    json_object *t = json_object_new_string("{% $states.input.nothing %}");
    json_object *b = parse_json("{\"states\": {\"input\": {}}}"), *got = (json_object *)1;
    bool defined = true;
    swf_error_t *err = swf_asl_jsonata_template_eval(t, b, &got, &defined);
    cr_expect_null(err);
    cr_expect(!defined);
    cr_expect_null(got);
    swf_error_free(err);
    json_object_put(b);
    json_object_put(t);
}

Test(jsonata_template, undefined_inside_an_object_names_the_field)
{
    json_object *t = parse_json("{\"outer\": {\"x\": \"{% $states.input.nothing %}\"}}");
    json_object *b = parse_json("{\"states\": {\"input\": {}}}"), *got = (json_object *)1;
    bool defined = true;
    swf_error_t *err = swf_asl_jsonata_template_eval(t, b, &got, &defined);
    cr_assert_not_null(err);
    cr_expect_str_eq(swf_error_name(err), QEE);
    cr_expect(strstr(swf_error_message(err), "outer.x") != NULL, "%s", swf_error_message(err));
    cr_expect_null(got);
    swf_error_free(err);
    json_object_put(b);
    json_object_put(t);
}

Test(jsonata_template, errors_name_the_field)
{
    json_object *t = parse_json("{\"f\": \"{% 'a' + 1 %}\"}");
    json_object *b = parse_json("{\"states\": {\"input\": {}}}"), *got = NULL;
    bool defined;
    swf_error_t *err = swf_asl_jsonata_template_eval(t, b, &got, &defined);
    cr_assert_not_null(err);
    cr_expect_str_eq(swf_error_name(err), QEE);
    cr_expect(strstr(swf_error_message(err), "field f") != NULL, "%s", swf_error_message(err));
    swf_error_free(err);
    json_object_put(b);
    json_object_put(t);
}

/* ---- the expressions of the conformance cases ---- */

typedef struct corpus_case {
    const char *name;     /* the case it comes from */
    const char *expr;     /* between {% and %} */
    const char *bindings; /* what the state sees */
    const char *want;     /* JSON, or NULL for undefined, or "!" for an error */
} corpus_case_t;

#define IN(x) "{\"states\": {\"input\": " x "}}"

static corpus_case_t corpus[] = {
    {"jsonata/builtin-hash-parse", "$hash($states.input.d, 'SHA-256')",
     IN("{\"d\": \"input data\", \"s\": \"{\\\"k\\\": [1]}\"}"),
     "\"b4a697a057313163aee33cd8d40c66e9f0f177e00cac2de32475ffff6169c3e3\""},
    {"jsonata/builtin-hash-parse", "$parse($states.input.s)",
     IN("{\"d\": \"input data\", \"s\": \"{\\\"k\\\": [1]}\"}"), "{\"k\": [1]}"},
    {"jsonata/builtin-partition-range", "$partition($states.input.a, 2)",
     IN("{\"a\": [1, 2, 3, 4, 5]}"), "[[1, 2], [3, 4], [5]]"},
    {"jsonata/builtin-partition-range", "$range(0, 6, 2)", IN("{\"a\": [1, 2, 3, 4, 5]}"),
     "[0, 2, 4, 6]"},
    {"jsonata/catch-error-output", "$states.errorOutput",
     "{\"states\": {\"input\": {\"req\": 1}, \"errorOutput\": {\"Error\": \"Boom.Error\","
     " \"Cause\": \"kaput\"}}}",
     "{\"Error\": \"Boom.Error\", \"Cause\": \"kaput\"}"},
    {"jsonata/catch-error-output", "$states.input",
     "{\"states\": {\"input\": {\"req\": 1}, \"errorOutput\": {}}}", "{\"req\": 1}"},
    {"jsonata/choice-condition", "$states.input.age >= 18", IN("{\"age\": 20}"), "true"},
    {"jsonata/choice-default", "$states.input.status = 'active'", IN("{\"status\": \"paused\"}"),
     "false"},
    {"jsonata/choice-no-match-fails", "false", IN("{}"), "false"},
    {"jsonata/choice-rule-output", "$states.input.flag", IN("{\"flag\": true}"), "true"},
    {"jsonata/conditional-expression", "$states.input.total > 100 ? 'gold' : 'standard'",
     IN("{\"total\": 150}"), "\"gold\""},
    {"jsonata/fail-error-cause-expressions", "$states.input.code",
     IN("{\"code\": \"OrderError\", \"id\": \"o-9\"}"), "\"OrderError\""},
    {"jsonata/fail-error-cause-expressions", "'Order ' & $states.input.id & ' failed'",
     IN("{\"code\": \"OrderError\", \"id\": \"o-9\"}"), "\"Order o-9 failed\""},
    {"jsonata/filter-and-map", "$states.input.items[price < 20].name",
     IN("{\"items\": [{\"name\": \"a\", \"price\": 5}, {\"name\": \"b\", \"price\": 15},"
        " {\"name\": \"c\", \"price\": 25}]}"),
     "[\"a\", \"b\"]"},
    {"jsonata/filter-and-map", "$states.input.items.price",
     IN("{\"items\": [{\"name\": \"a\", \"price\": 5}, {\"name\": \"b\", \"price\": 15},"
        " {\"name\": \"c\", \"price\": 25}]}"),
     "[5, 15, 25]"},
    {"jsonata/jsonpath-to-jsonata-dataflow", "$count($states.input.r.a)",
     IN("{\"x\": 0, \"r\": {\"a\": [1, 2]}}"), "2"},
    {"jsonata/map-items-and-itemselector", "$states.input.list", IN("{\"list\": [\"a\", \"b\"]}"),
     "[\"a\", \"b\"]"},
    {"jsonata/map-items-and-itemselector", "$states.context.Map.Item.Index",
     "{\"states\": {\"input\": {}, \"context\": {\"Map\": {\"Item\": {\"Index\": 1,"
     " \"Value\": \"b\"}}}}}",
     "1"},
    {"jsonata/map-items-and-itemselector", "$states.context.Map.Item.Value",
     "{\"states\": {\"input\": {}, \"context\": {\"Map\": {\"Item\": {\"Index\": 1,"
     " \"Value\": \"b\"}}}}}",
     "\"b\""},
    {"jsonata/map-items-and-itemselector", "$states.input.v & '#' & $string($states.input.i)",
     IN("{\"i\": 1, \"v\": \"b\"}"), "\"b#1\""},
    {"jsonata/map-items-literal-array", "$states.input * 10", IN("2"), "20"},
    {"jsonata/map-items-not-array-fails", "$states.input.items",
     IN("{\"items\": {\"foo\": \"bar\"}}"), "{\"foo\": \"bar\"}"},
    {"jsonata/output-object-mixes-literals-and-expressions", "$sum($states.input.n)",
     IN("{\"n\": [1, 2, 3]}"), "6"},
    {"jsonata/output-object-mixes-literals-and-expressions", "$count($states.input.n)",
     IN("{\"n\": [1, 2, 3]}"), "3"},
    {"jsonata/pass-output-expression", "$states.input.a + 1", IN("{\"a\": 41}"), "42"},
    {"jsonata/regex-contains", "$contains($states.input.s, /^ab+c$/)", IN("{\"s\": \"abbbc\"}"),
     "true"},
    {"jsonata/single-match-is-not-wrapped", "$states.input.items[price > 20].name",
     IN("{\"items\": [{\"name\": \"a\", \"price\": 5}, {\"name\": \"c\", \"price\": 25}]}"),
     "\"c\""},
    {"jsonata/state-level-query-language", "$states.input.v * 2", IN("{\"v\": 4}"), "8"},
    {"jsonata/string-concatenation", "'Hello, ' & $states.input.name & '!'",
     IN("{\"name\": \"Ann\"}"), "\"Hello, Ann!\""},
    {"jsonata/task-output-from-result", "$states.result.Payload.price",
     "{\"states\": {\"input\": {\"sku\": \"A1\"}, \"result\": {\"Payload\": {\"price\": 9.5},"
     " \"StatusCode\": 200}}}",
     "9.5"},
    {"jsonata/task-output-from-result", "$states.input.sku", IN("{\"sku\": \"A1\"}"), "\"A1\""},
    {"jsonata/undefined-output-fails", "$states.input.nothing", IN("{\"a\": 1}"), NULL},
    {"jsonata/wait-seconds-expression", "$states.input.delay", IN("{\"delay\": 5}"), "5"},
    {"jsonata/wait-seconds-expression", "$states.input", IN("{\"delay\": 5}"), "{\"delay\": 5}"},
    {"variables/jsonata-assign-and-reference", "$sum($states.input.n)", IN("{\"n\": [1, 2, 3]}"),
     "6"},
    {"variables/jsonata-assign-and-reference", "$label",
     "{\"states\": {\"input\": {}}, \"label\": \"sum\", \"total\": 6}", "\"sum\""},
    {"variables/jsonata-assign-and-reference", "$total",
     "{\"states\": {\"input\": {}}, \"label\": \"sum\", \"total\": 6}", "6"},
    {"variables/jsonata-assign-from-task-result", "$states.result.price",
     "{\"states\": {\"input\": {\"sku\": \"A\"}, \"result\": {\"price\": 12}}}", "12"},
    {"variables/jsonata-assign-from-task-result", "$price",
     "{\"states\": {\"input\": {\"sku\": \"A\"}}, \"price\": 12}", "12"},
    {"variables/jsonata-catch-assign", "$states.errorOutput.Error",
     "{\"states\": {\"input\": {}, \"errorOutput\": {\"Error\": \"Boom.Failed\","
     " \"Cause\": \"x\"}}}",
     "\"Boom.Failed\""},
    {"variables/jsonata-catch-assign", "$result",
     "{\"states\": {\"input\": {}}, \"result\": \"Boom.Failed\"}", "\"Boom.Failed\""},
    {"variables/jsonata-map-iteration-reads-outer", "$states.input * $factor",
     "{\"states\": {\"input\": 2}, \"factor\": 3}", "6"},
    {"variables/jsonata-output-sees-old-value", "$x + 1", "{\"states\": {\"input\": {}}, \"x\": 1}",
     "2"},
    {"variables/jsonata-output-sees-old-value", "$x", "{\"states\": {\"input\": {}}, \"x\": 1}",
     "1"},
    {"variables/jsonata-undefined-variable-fails", "$doesNotExist", "{\"states\": {\"input\": {}}}",
     "!"},
};

/* Criterion runs each parameter in a new process image, where pointers into
 * this one do not hold: the strings are copied into its shared memory. */
static const char *shared_strdup(const char *s)
{
    if (s == NULL)
        return NULL;
    char *c = cr_malloc(strlen(s) + 1);
    strcpy(c, s);
    return c;
}

static void corpus_free(struct criterion_test_params *params)
{
    corpus_case_t *cases = params->params;
    for (size_t i = 0; i < params->length; i++) {
        cr_free((void *)cases[i].name);
        cr_free((void *)cases[i].expr);
        cr_free((void *)cases[i].bindings);
        cr_free((void *)cases[i].want);
    }
    cr_free(cases);
}

ParameterizedTestParameters(jsonata_corpus, expressions_of_the_conformance_cases)
{
    size_t n = sizeof corpus / sizeof corpus[0];
    corpus_case_t *cases = cr_malloc(n * sizeof *cases);
    for (size_t i = 0; i < n; i++) {
        cases[i].name = shared_strdup(corpus[i].name);
        cases[i].expr = shared_strdup(corpus[i].expr);
        cases[i].bindings = shared_strdup(corpus[i].bindings);
        cases[i].want = shared_strdup(corpus[i].want);
    }
    return cr_make_param_array(corpus_case_t, cases, n, corpus_free);
}

ParameterizedTest(corpus_case_t *c, jsonata_corpus, expressions_of_the_conformance_cases)
{
    json_object *b = parse_json(c->bindings), *got = NULL;
    bool defined = false;
    swf_error_t *err = swf_asl_jsonata_eval(c->expr, b, &got, &defined);
    if (c->want != NULL && strcmp(c->want, "!") == 0) {
        cr_expect_not_null(err, "%s: %s should fail", c->name, c->expr);
        if (err)
            cr_expect_str_eq(swf_error_name(err), QEE);
    } else if (c->want == NULL) {
        cr_expect_null(err, "%s: %s failed: %s", c->name, c->expr,
                       err ? swf_error_message(err) : "");
        cr_expect(!defined, "%s: %s should be undefined", c->name, c->expr);
    } else {
        json_object *want = parse_json(c->want);
        cr_expect_null(err, "%s: %s failed: %s", c->name, c->expr,
                       err ? swf_error_message(err) : "");
        cr_expect(defined, "%s: %s is undefined", c->name, c->expr);
        cr_expect(swf_json_equal(got, want), "%s: %s gave %s, want %s", c->name, c->expr,
                  swf_json_str(got), c->want);
        json_object_put(want);
    }
    swf_error_free(err);
    json_object_put(got);
    json_object_put(b);
}

/* Whatever an expression builds is text PostgreSQL's jsonb takes: UTF-8. A
 * lone surrogate escape becomes U+FFFD (json-c does the same for JSON
 * input); functions that decode bytes refuse bytes that are not text. */
Test(jsonata_text, results_are_always_utf8)
{
    expect_value("\"a\\uD800b\"", "\"a\xEF\xBF\xBD"
                                  "b\"");
    expect_value("\"\\uDC00\"", "\"\xEF\xBF\xBD\"");
    expect_value("\"\\uD83D\\uDE00\"", "\"\xF0\x9F\x98\x80\"");
    expect_value("$base64decode(\"w6k=\")", "\"\xC3\xA9\"");
    expect_error("$base64decode(\"/w==\")", "not UTF-8");
    expect_error("$decodeUrlComponent(\"%C0%AF\")", "not UTF-8");    /* overlong '/' */
    expect_error("$decodeUrlComponent(\"%ED%A0%80\")", "not UTF-8"); /* a surrogate */
    expect_value("$decodeUrlComponent(\"caf%C3%A9\")", "\"caf\xC3\xA9\"");
}

/* The engine never sees such a padding (its inputs are UTF-8), but a pad of
 * continuation bytes alone once divided by zero. */
Test(jsonata_text, pad_of_no_characters_is_an_error)
{
    expect_error("$pad(\"x\", 4, \"\x80\x80\")", "not UTF-8");
}

/* ---- mutated expressions (tests/fuzz.h) ---- */

static void pick_jsonata(const char *key, const char *value, fuzz_corpus_t *c)
{
    (void)key;
    size_t n = strlen(value);
    if (n >= 4 && swf_asl_jsonata_is_expr(value)) {
        char *inner = strndup(value + 2, n - 4);
        fuzz_corpus_add(c, inner);
        free(inner);
    }
}

static fuzz_outcome_t jsonata_round(const char *expr, void *bindings)
{
    swf_error_t *bad = swf_asl_jsonata_check(expr);
    json_object *got = NULL;
    bool defined = false;
    swf_error_t *err = swf_asl_jsonata_eval(expr, bindings, &got, &defined);
    if (bad != NULL) {
        cr_assert_not_null(err, "refused by the check, evaluated: %s", expr);
        swf_error_free(bad);
        swf_error_free(err);
        return FUZZ_REFUSED;
    }
    if (err == NULL && !defined) {
        json_object_put(got);
        return FUZZ_EMPTY;
    }
    return fuzz_outcome(expr, err, got);
}

/* Each mutation is refused by the syntax check and by evaluation alike, or
 * evaluates to nothing, to an error or to JSON that the parser takes back
 * unchanged. */
Test(jsonata_fuzz, mutated_expressions_fail_cleanly_or_give_json)
{
    fuzz_corpus_t seeds = {0};
    fuzz_corpus_from_histories(&seeds, pick_jsonata);
    cr_assert(seeds.n > 50, "only %zu expressions in tests/histories", seeds.n);
    json_object *b = parse_json(ORDER);
    fuzz_tally_t t = fuzz_run(&seeds, 50000, jsonata_round, b);
    cr_expect(t.outcomes[FUZZ_VALUE] > t.rounds / 100 && t.outcomes[FUZZ_FAILED] > t.rounds / 100,
              "%ld values, %ld failed", t.outcomes[FUZZ_VALUE], t.outcomes[FUZZ_FAILED]);
    json_object_put(b);
    fuzz_corpus_free(&seeds);
}
