/*
 * test_intrinsic.c - the States.* intrinsic functions: the parser and its
 * checker, every function on success and on failure, and determinism of the
 * random ones.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/asl/intrinsic.h"
#include "decider/asl/path.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "tests/fuzz.h"

static json_object *parse_json(const char *text)
{
    json_object *v = NULL;
    swf_error_t *err = swf_json_parse(text, strlen(text), SWF_LIMIT_JSON_BYTES, &v);
    cr_assert_null(err, "bad test JSON %s: %s", text, err ? swf_error_message(err) : "");
    return v;
}

/* Evaluates expr over input (JSON text) and expects the JSON text `want`. */
static void expect_value_env(const char *expr, const char *input, const swf_asl_env_t *env,
                             const char *want)
{
    json_object *in = parse_json(input), *expected = parse_json(want), *got = NULL;
    swf_error_t *err = swf_asl_intrinsic_eval(expr, in, env, &got);
    cr_expect_null(err, "%s failed: %s", expr, err ? swf_error_message(err) : "");
    if (err == NULL)
        cr_expect(swf_json_equal(got, expected), "%s gave %s, want %s", expr, swf_json_str(got),
                  want);
    swf_error_free(err);
    json_object_put(got);
    json_object_put(expected);
    json_object_put(in);
}

static void expect_value(const char *expr, const char *input, const char *want)
{
    swf_asl_env_t env = {0};
    expect_value_env(expr, input, &env, want);
}

/* Expects evaluation to fail with the ASL error `name`; returns nothing but
 * checks that the message names the function where one is given. */
static void expect_failure(const char *expr, const char *input, const char *name,
                           const char *in_message)
{
    swf_asl_env_t env = {0};
    json_object *in = parse_json(input), *got = (json_object *)1;
    swf_error_t *err = swf_asl_intrinsic_eval(expr, in, &env, &got);
    cr_expect_not_null(err, "%s succeeded with %s", expr, err ? "" : swf_json_str(got));
    cr_expect_null(got, "%s: out must be NULL on failure", expr);
    if (err != NULL) {
        cr_expect_eq(swf_error_code(err), SWF_E_STATES);
        cr_expect_str_eq(swf_error_name(err), name, "%s: %s", expr, swf_error_message(err));
        if (in_message)
            cr_expect(strstr(swf_error_message(err), in_message) != NULL,
                      "%s: message '%s' does not mention '%s'", expr, swf_error_message(err),
                      in_message);
    } else {
        json_object_put(got);
    }
    swf_error_free(err);
    json_object_put(in);
}

static void expect_intrinsic_failure(const char *expr, const char *fn)
{
    expect_failure(expr, "{}", "States.IntrinsicFailure", fn);
}

static void expect_valid(const char *expr)
{
    swf_error_t *err = swf_asl_intrinsic_check(expr);
    cr_expect_null(err, "%s rejected: %s", expr, err ? swf_error_message(err) : "");
    swf_error_free(err);
}

static void expect_invalid(const char *expr, const char *in_message)
{
    swf_error_t *err = swf_asl_intrinsic_check(expr);
    cr_expect_not_null(err, "%s accepted", expr);
    if (err != NULL) {
        cr_expect(swf_error_code(err) == SWF_E_INPUT || swf_error_code(err) == SWF_E_LIMIT);
        if (in_message)
            cr_expect(strstr(swf_error_message(err), in_message) != NULL,
                      "%s: message '%s' does not mention '%s'", expr, swf_error_message(err),
                      in_message);
    }
    swf_error_free(err);
}

/* ---- recognising a call ---- */

Test(intrinsic_is_call, tells_calls_from_paths)
{
    cr_expect(swf_asl_intrinsic_is_call("States.Format('x')"));
    cr_expect(swf_asl_intrinsic_is_call("  States.UUID()"));
    cr_expect(swf_asl_intrinsic_is_call("States.Nope(1)")); /* a call, rejected later */
    cr_expect_not(swf_asl_intrinsic_is_call("$.States.Format"));
    cr_expect_not(swf_asl_intrinsic_is_call("$"));
    cr_expect_not(swf_asl_intrinsic_is_call("States.Format"));
    cr_expect_not(swf_asl_intrinsic_is_call("States.(1)"));
    cr_expect_not(swf_asl_intrinsic_is_call(""));
    cr_expect_not(swf_asl_intrinsic_is_call(NULL));
}

/* ---- the checker ---- */

Test(intrinsic_check, accepts_well_formed_calls)
{
    expect_valid("States.Format('Hello {}', 'x')");
    expect_valid("  States.Format( 'a' , 1 , -2.5 , true , false , null )  ");
    expect_valid("States.Array()");
    expect_valid("States.Array( )");
    expect_valid("States.UUID()");
    expect_valid("States.MathRandom(1, 10)");
    expect_valid("States.MathRandom(1, 10, 7)");
    expect_valid("States.Format('It\\'s \\{\\} a\\\\b {}', 1)");
    expect_valid("States.Format('(a, b)', States.Array(1, States.Array(2)))");
    expect_valid("States.Format('{}', 1e3)");
    expect_valid("States.Array($.a, $$.Execution.Id, $['a,b'], $[?(@.x > 1)], $var)");
}

Test(intrinsic_check, rejects_bad_syntax)
{
    expect_invalid("", NULL);
    expect_invalid("States.Format", NULL);
    expect_invalid("States.Format('x'", NULL);
    expect_invalid("States.Format('x',)", NULL);
    expect_invalid("States.Format(,'x')", NULL);
    expect_invalid("States.Format('x') extra", "unexpected text");
    expect_invalid("States.Format('x' 'y')", NULL);
    expect_invalid("States.Format('unterminated)", "unterminated");
    expect_invalid("States.Array(01)", NULL);
    expect_invalid("States.Array(1.)", NULL);
    expect_invalid("States.Array(-)", NULL);
    expect_invalid("States.Array(1x)", NULL);
    expect_invalid("States.Array(truex)", NULL);
    expect_invalid("States.Array(True)", NULL);
    expect_invalid("States.Array(\"double\")", NULL);
    expect_invalid("States.Array(abc)", NULL);
    expect_invalid("States.Array ($.a)", NULL);
    expect_invalid("$.a", NULL);
    expect_invalid("States.Array($[?(@.x > 1)", "unterminated path");
}

Test(intrinsic_check, rejects_unknown_functions)
{
    expect_invalid("States.Nope()", "States.Nope");
    expect_invalid("States.format('x')", "States.format");
    expect_invalid("States.Array(States.Frobnicate(1))", "States.Frobnicate");
    expect_invalid("Other.Format('x')", NULL);
}

Test(intrinsic_check, rejects_escapes_other_than_the_four)
{
    /* The conformance case intrinsics/illegal-escape-is-invalid. */
    expect_invalid("States.Format('say \\\"hi\\\" {}', $.v)", "escape");
    expect_invalid("States.Format('a\\nb')", "escape");
    expect_invalid("States.Format('a\\')", NULL);
}

Test(intrinsic_check, rejects_wrong_argument_counts)
{
    expect_invalid("States.Format()", "at least 1");
    expect_invalid("States.ArrayGetItem($.a)", "takes 2");
    expect_invalid("States.ArrayGetItem($.a, 1, 2)", "takes 2");
    expect_invalid("States.Hash('x')", "takes 2");
    expect_invalid("States.MathRandom(1)", "2 to 3");
    expect_invalid("States.MathRandom(1, 2, 3, 4)", "2 to 3");
    expect_invalid("States.UUID(1)", "takes 0");
    expect_invalid("States.StringToJson()", NULL);
    expect_invalid("States.JsonToString(1, 2)", NULL);
    expect_invalid("States.ArrayPartition($.a)", NULL);
    expect_invalid("States.ArrayContains($.a)", NULL);
    expect_invalid("States.ArrayRange(1, 2)", NULL);
    expect_invalid("States.ArrayLength()", NULL);
    expect_invalid("States.ArrayUnique()", NULL);
    expect_invalid("States.Base64Encode()", NULL);
    expect_invalid("States.Base64Decode('a', 'b')", NULL);
    expect_invalid("States.JsonMerge($.a, $.b)", NULL);
    expect_invalid("States.MathAdd(1)", NULL);
    expect_invalid("States.StringSplit('a')", NULL);
    /* Arity errors inside nested calls are found too. */
    expect_invalid("States.Array(States.UUID(1))", "takes 0");
}

Test(intrinsic_check, enforces_the_limits)
{
    char deep[1024] = "";
    for (int i = 0; i < SWF_LIMIT_INTRINSIC_DEPTH; i++)
        strcat(deep, "States.Array(");
    strcat(deep, "1");
    for (int i = 0; i < SWF_LIMIT_INTRINSIC_DEPTH; i++)
        strcat(deep, ")");
    expect_valid(deep);

    char deeper[1024] = "States.Array(";
    strcat(deeper, deep);
    strcat(deeper, ")");
    expect_invalid(deeper, "nested");

    size_t n = SWF_LIMIT_PATH_BYTES + 16;
    char *big = malloc(n + 1);
    strcpy(big, "States.Format('");
    size_t len = strlen(big);
    memset(big + len, 'x', n - len - 2);
    strcpy(big + n - 2, "')");
    expect_invalid(big, "limit");
    free(big);
}

/* ---- evaluation: literals and syntax ---- */

Test(intrinsic_eval, literals_of_every_kind)
{
    expect_value("States.Array('Foo', 2022, -1, 1.5, -2.5e1, true, false, null)", "{}",
                 "[\"Foo\", 2022, -1, 1.5, -25, true, false, null]");
    expect_value("States.Array()", "{}", "[]");
    expect_value("States.Array('')", "{}", "[\"\"]");
    expect_value("States.Array(99999999999999999999)", "{}", "[1e20]");
    /* Written so that it reads back as a double, not as an integer past
     * int64_t's range (which the parser refuses). */
    expect_value("States.JsonToString(States.Array(99999999999999999999))", "{}",
                 "\"[99999999999999999999.0]\"");
}

Test(intrinsic_eval, string_escapes)
{
    expect_value("States.Array('It\\'s', 'a\\\\b', '\\{\\}', '{}')", "{}",
                 "[\"It's\", \"a\\\\b\", \"{}\", \"{}\"]");
}

Test(intrinsic_eval, commas_and_parens_inside_literals_are_literal)
{
    expect_value("States.Format('{} and {}', 'a, b', 'c')", "{}", "\"a, b and c\"");
    expect_value("States.Format('({}) [{}]', 'a b', 'c')", "{}", "\"(a b) [c]\"");
    expect_value("States.Array('States.UUID()')", "{}", "[\"States.UUID()\"]");
}

Test(intrinsic_eval, syntax_errors_fail_at_run_time)
{
    expect_intrinsic_failure("States.Nope()", "States.Nope");
    expect_intrinsic_failure("States.Format('a\\nb')", "escape");
}

/* ---- Format ---- */

Test(intrinsic_format, fills_placeholders_in_order)
{
    expect_value("States.Format('Hello, my name is {}.', 'Arnav')", "{}",
                 "\"Hello, my name is Arnav.\"");
    expect_value("States.Format('no placeholders')", "{}", "\"no placeholders\"");
    expect_value("States.Format('{}{}', 'a', 'b')", "{}", "\"ab\"");
}

Test(intrinsic_format, renders_scalars_as_json_text)
{
    expect_value("States.Format('{} {} {} {} {}', 42, 1.5, true, null, 0.1)", "{}",
                 "\"42 1.5 true null 0.1\"");
}

Test(intrinsic_format, escaped_braces_are_not_placeholders)
{
    expect_value("States.Format('Escaped \\{\\} but {} is filled', 'this')", "{}",
                 "\"Escaped {} but this is filled\"");
    expect_value("States.Format('It\\'s {}', 'fine')", "{}", "\"It's fine\"");
    expect_value("States.Format('a\\\\b {}', 'c')", "{}", "\"a\\\\b c\"");
    /* A lone brace is an ordinary character. */
    expect_value("States.Format('{ x }')", "{}", "\"{ x }\"");
}

Test(intrinsic_format, wrong_placeholder_count_fails)
{
    expect_intrinsic_failure("States.Format('{} {}', 'a')", "States.Format");
    expect_intrinsic_failure("States.Format('{}', 'a', 'b')", "States.Format");
    expect_intrinsic_failure("States.Format('x', 'a')", "States.Format");
}

Test(intrinsic_format, objects_and_arrays_print_as_aws_prints_them)
{
    expect_value("States.Format('{}', States.Array(1, 'two', States.Array()))", "{}",
                 "\"[1, two, []]\"");
    expect_value("States.Format('{}', $.o)", "{\"o\": {\"Arg1\": 1, \"Arg2\": [], \"s\": \"x\"}}",
                 "\"{Arg1=1, Arg2=[], s=x}\"");
    expect_intrinsic_failure("States.Format(1)", "States.Format");
}

/* ---- JSON ---- */

Test(intrinsic_json, string_to_json_parses_any_json_text)
{
    expect_value("States.StringToJson('{\"foo\": \"bar\", \"n\": [1, 2]}')", "{}",
                 "{\"foo\": \"bar\", \"n\": [1, 2]}");
    expect_value("States.StringToJson('1.5')", "{}", "1.5");
    expect_value("States.StringToJson('null')", "{}", "null");
    expect_value("States.StringToJson(' [true] ')", "{}", "[true]");
}

Test(intrinsic_json, string_to_json_fails_on_bad_input)
{
    expect_intrinsic_failure("States.StringToJson('{not json')", "States.StringToJson");
    expect_intrinsic_failure("States.StringToJson('1 2')", "States.StringToJson");
    expect_intrinsic_failure("States.StringToJson(1)", "States.StringToJson");
}

Test(intrinsic_json, string_to_json_of_an_empty_or_blank_string_is_null)
{
    expect_value("States.StringToJson('')", "{}", "null");
    expect_value("States.StringToJson('  ')", "{}", "null");
}

Test(intrinsic_json, json_to_string_serialises_compactly)
{
    expect_value("States.JsonToString('text')", "{}", "\"\\\"text\\\"\"");
    expect_value("States.JsonToString(States.Array(1, 'a/b', null))", "{}",
                 "\"[1,\\\"a/b\\\",null]\"");
    expect_value("States.StringToJson(States.JsonToString(States.Array(1, States.Array(2))))", "{}",
                 "[1, [2]]");
}

Test(intrinsic_json, merge_is_shallow_and_the_second_wins)
{
    expect_value("States.JsonMerge(States.StringToJson('{\"a\": 1, \"b\": {\"x\": 1}}'), "
                 "States.StringToJson('{\"b\": {\"y\": 2}, \"c\": 3}'), false)",
                 "{}", "{\"a\": 1, \"b\": {\"y\": 2}, \"c\": 3}");
}

Test(intrinsic_json, merge_failures)
{
    expect_intrinsic_failure("States.JsonMerge(States.StringToJson('{}'), "
                             "States.StringToJson('{}'), true)",
                             "deep merge");
    expect_intrinsic_failure("States.JsonMerge(States.Array(), States.StringToJson('{}'), false)",
                             "States.JsonMerge");
    expect_intrinsic_failure("States.JsonMerge(States.StringToJson('{}'), 1, false)",
                             "States.JsonMerge");
    expect_intrinsic_failure("States.JsonMerge(States.StringToJson('{}'), "
                             "States.StringToJson('{}'), 'false')",
                             "States.JsonMerge");
}

/* ---- arrays ---- */

Test(intrinsic_array, partition)
{
    expect_value("States.ArrayPartition(States.Array(1, 2, 3, 4, 5, 6, 7), 3)", "{}",
                 "[[1, 2, 3], [4, 5, 6], [7]]");
    expect_value("States.ArrayPartition(States.Array(1, 2), 2)", "{}", "[[1, 2]]");
    expect_value("States.ArrayPartition(States.Array(1, 2), 5)", "{}", "[[1, 2]]");
    expect_value("States.ArrayPartition(States.Array(), 4)", "{}", "[]");
    expect_intrinsic_failure("States.ArrayPartition(States.Array(1), 0)", "States.ArrayPartition");
    expect_intrinsic_failure("States.ArrayPartition(States.Array(1), -1)", "States.ArrayPartition");
    expect_intrinsic_failure("States.ArrayPartition('abc', 1)", "States.ArrayPartition");
    expect_intrinsic_failure("States.ArrayPartition(States.Array(1), 'x')",
                             "States.ArrayPartition");
}

Test(intrinsic_array, contains_compares_structurally)
{
    expect_value("States.ArrayContains(States.Array(1, 2, 3), 4)", "{}", "false");
    expect_value("States.ArrayContains(States.Array(1, 2, 3), 2)", "{}", "true");
    expect_value("States.ArrayContains(States.Array(1, 2, 3), 2.0)", "{}", "true");
    expect_value("States.ArrayContains(States.Array(1, States.StringToJson('{\"k\": [2]}')), "
                 "States.StringToJson('{\"k\": [2]}'))",
                 "{}", "true");
    expect_value("States.ArrayContains(States.Array(null), null)", "{}", "true");
    expect_value("States.ArrayContains(States.Array('1'), 1)", "{}", "false");
    expect_intrinsic_failure("States.ArrayContains('abc', 'a')", "States.ArrayContains");
}

Test(intrinsic_array, range_is_inclusive)
{
    expect_value("States.ArrayRange(1, 9, 2)", "{}", "[1, 3, 5, 7, 9]");
    expect_value("States.ArrayRange(0, 10, 3)", "{}", "[0, 3, 6, 9]");
    expect_value("States.ArrayRange(5, 5, 1)", "{}", "[5]");
    expect_value("States.ArrayRange(10, 0, -5)", "{}", "[10, 5, 0]");
    expect_value("States.ArrayRange(5, 1, 1)", "{}", "[]");
    expect_value("States.ArrayRange(1, 1000, 1)", "{}",
                 "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,"
                 "29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,"
                 "55,56,57,58,59,60,61,62,63,64,65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,"
                 "81,82,83,84,85,86,87,88,89,90,91,92,93,94,95,96,97,98,99,100,101,102,103,104,"
                 "105,106,107,108,109,110,111,112,113,114,115,116,117,118,119,120,121,122,123,124,"
                 "125,126,127,128,129,130,131,132,133,134,135,136,137,138,139,140,141,142,143,144,"
                 "145,146,147,148,149,150,151,152,153,154,155,156,157,158,159,160,161,162,163,164,"
                 "165,166,167,168,169,170,171,172,173,174,175,176,177,178,179,180,181,182,183,184,"
                 "185,186,187,188,189,190,191,192,193,194,195,196,197,198,199,200,201,202,203,204,"
                 "205,206,207,208,209,210,211,212,213,214,215,216,217,218,219,220,221,222,223,224,"
                 "225,226,227,228,229,230,231,232,233,234,235,236,237,238,239,240,241,242,243,244,"
                 "245,246,247,248,249,250,251,252,253,254,255,256,257,258,259,260,261,262,263,264,"
                 "265,266,267,268,269,270,271,272,273,274,275,276,277,278,279,280,281,282,283,284,"
                 "285,286,287,288,289,290,291,292,293,294,295,296,297,298,299,300,301,302,303,304,"
                 "305,306,307,308,309,310,311,312,313,314,315,316,317,318,319,320,321,322,323,324,"
                 "325,326,327,328,329,330,331,332,333,334,335,336,337,338,339,340,341,342,343,344,"
                 "345,346,347,348,349,350,351,352,353,354,355,356,357,358,359,360,361,362,363,364,"
                 "365,366,367,368,369,370,371,372,373,374,375,376,377,378,379,380,381,382,383,384,"
                 "385,386,387,388,389,390,391,392,393,394,395,396,397,398,399,400,401,402,403,404,"
                 "405,406,407,408,409,410,411,412,413,414,415,416,417,418,419,420,421,422,423,424,"
                 "425,426,427,428,429,430,431,432,433,434,435,436,437,438,439,440,441,442,443,444,"
                 "445,446,447,448,449,450,451,452,453,454,455,456,457,458,459,460,461,462,463,464,"
                 "465,466,467,468,469,470,471,472,473,474,475,476,477,478,479,480,481,482,483,484,"
                 "485,486,487,488,489,490,491,492,493,494,495,496,497,498,499,500,501,502,503,504,"
                 "505,506,507,508,509,510,511,512,513,514,515,516,517,518,519,520,521,522,523,524,"
                 "525,526,527,528,529,530,531,532,533,534,535,536,537,538,539,540,541,542,543,544,"
                 "545,546,547,548,549,550,551,552,553,554,555,556,557,558,559,560,561,562,563,564,"
                 "565,566,567,568,569,570,571,572,573,574,575,576,577,578,579,580,581,582,583,584,"
                 "585,586,587,588,589,590,591,592,593,594,595,596,597,598,599,600,601,602,603,604,"
                 "605,606,607,608,609,610,611,612,613,614,615,616,617,618,619,620,621,622,623,624,"
                 "625,626,627,628,629,630,631,632,633,634,635,636,637,638,639,640,641,642,643,644,"
                 "645,646,647,648,649,650,651,652,653,654,655,656,657,658,659,660,661,662,663,664,"
                 "665,666,667,668,669,670,671,672,673,674,675,676,677,678,679,680,681,682,683,684,"
                 "685,686,687,688,689,690,691,692,693,694,695,696,697,698,699,700,701,702,703,704,"
                 "705,706,707,708,709,710,711,712,713,714,715,716,717,718,719,720,721,722,723,724,"
                 "725,726,727,728,729,730,731,732,733,734,735,736,737,738,739,740,741,742,743,744,"
                 "745,746,747,748,749,750,751,752,753,754,755,756,757,758,759,760,761,762,763,764,"
                 "765,766,767,768,769,770,771,772,773,774,775,776,777,778,779,780,781,782,783,784,"
                 "785,786,787,788,789,790,791,792,793,794,795,796,797,798,799,800,801,802,803,804,"
                 "805,806,807,808,809,810,811,812,813,814,815,816,817,818,819,820,821,822,823,824,"
                 "825,826,827,828,829,830,831,832,833,834,835,836,837,838,839,840,841,842,843,844,"
                 "845,846,847,848,849,850,851,852,853,854,855,856,857,858,859,860,861,862,863,864,"
                 "865,866,867,868,869,870,871,872,873,874,875,876,877,878,879,880,881,882,883,884,"
                 "885,886,887,888,889,890,891,892,893,894,895,896,897,898,899,900,901,902,903,904,"
                 "905,906,907,908,909,910,911,912,913,914,915,916,917,918,919,920,921,922,923,924,"
                 "925,926,927,928,929,930,931,932,933,934,935,936,937,938,939,940,941,942,943,944,"
                 "945,946,947,948,949,950,951,952,953,954,955,956,957,958,959,960,961,962,963,964,"
                 "965,966,967,968,969,970,971,972,973,974,975,976,977,978,979,980,981,982,983,984,"
                 "985,986,987,988,989,990,991,992,993,994,995,996,997,998,999,1000]");
}

Test(intrinsic_array, range_failures)
{
    expect_intrinsic_failure("States.ArrayRange(1, 1001, 1)", "at most 1000");
    expect_intrinsic_failure("States.ArrayRange(1, 5, 0)", "step");
    expect_intrinsic_failure("States.ArrayRange('1', 5, 1)", "States.ArrayRange");
    expect_intrinsic_failure("States.ArrayRange(-9007199254740993, 9007199254740993, 1)",
                             "States.ArrayRange");
}

Test(intrinsic_array, get_item)
{
    expect_value("States.ArrayGetItem(States.Array(1, 2, 3, 4, 5, 6, 7, 8, 9), 5)", "{}", "6");
    expect_value("States.ArrayGetItem(States.Array('a', null), 1)", "{}", "null");
    expect_value("States.ArrayGetItem(States.Array(States.Array(1)), 0)", "{}", "[1]");
    expect_intrinsic_failure("States.ArrayGetItem(States.Array(1), 1)", "out of range");
    expect_intrinsic_failure("States.ArrayGetItem(States.Array(1), -1)", "out of range");
    expect_intrinsic_failure("States.ArrayGetItem('abc', 0)", "States.ArrayGetItem");
    expect_intrinsic_failure("States.ArrayGetItem(States.Array(1), '0')", "States.ArrayGetItem");
}

Test(intrinsic_array, length)
{
    expect_value("States.ArrayLength(States.Array(1, States.Array(2, 3), null))", "{}", "3");
    expect_value("States.ArrayLength(States.Array())", "{}", "0");
    expect_intrinsic_failure("States.ArrayLength('abc')", "States.ArrayLength");
    expect_intrinsic_failure("States.ArrayLength(null)", "States.ArrayLength");
}

Test(intrinsic_array, unique_keeps_first_occurrences_in_order)
{
    expect_value("States.ArrayUnique(States.Array(1, 2, 2, 3, 3, 3))", "{}", "[1, 2, 3]");
    expect_value("States.ArrayUnique(States.Array(3, 1, 3, 2, 1))", "{}", "[3, 1, 2]");
    expect_value("States.ArrayUnique(States.Array(1, 1.0, '1', true, null, null, false))", "{}",
                 "[1, \"1\", true, null, false]");
    expect_value("States.ArrayUnique(States.StringToJson("
                 "'[{\"a\": 1, \"b\": [2]}, {\"b\": [2], \"a\": 1}, {\"a\": 1}, [1, 2], [2, 1]]'))",
                 "{}", "[{\"a\": 1, \"b\": [2]}, {\"a\": 1}, [1, 2], [2, 1]]");
    expect_value("States.ArrayUnique(States.Array())", "{}", "[]");
    expect_intrinsic_failure("States.ArrayUnique('abc')", "States.ArrayUnique");
}

/* ---- encodings and hashes ---- */

Test(intrinsic_encoding, base64)
{
    expect_value("States.Base64Encode('Data to encode')", "{}", "\"RGF0YSB0byBlbmNvZGU=\"");
    expect_value("States.Base64Decode('RGF0YSB0byBlbmNvZGU=')", "{}", "\"Data to encode\"");
    expect_value("States.Base64Decode(States.Base64Encode('round trip! é'))", "{}",
                 "\"round trip! é\"");
    expect_value("States.Base64Encode('')", "{}", "\"\"");
    expect_intrinsic_failure("States.Base64Decode('not base64!')", "States.Base64Decode");
    expect_intrinsic_failure("States.Base64Decode('//8=')", "UTF-8");
    expect_intrinsic_failure("States.Base64Encode(1)", "States.Base64Encode");
    expect_intrinsic_failure("States.Base64Decode(null)", "States.Base64Decode");
    /* The 10,000-character limits count characters, not UTF-8 bytes. */
    char *in = malloc(2 * 10001 * 2 + 64);
    cr_assert_not_null(in);
    char *p = in + sprintf(in, "{\"s\": \"");
    for (int i = 0; i < 10000; i++)
        p += sprintf(p, "\xc3\xa9"); /* U+00E9: 2 bytes, 1 character */
    strcpy(p, "\"}");
    swf_asl_env_t env = {0};
    json_object *input = parse_json(in), *got = NULL;
    const char *ok[] = {"States.Base64Encode($.s)", "States.Hash($.s, 'MD5')"};
    for (size_t i = 0; i < 2; i++) {
        swf_error_t *err = swf_asl_intrinsic_eval(ok[i], input, &env, &got);
        cr_expect_null(err, "%s", ok[i]);
        swf_error_free(err);
        json_object_put(got);
        got = NULL;
    }
    json_object_put(input);
    strcpy(p, "\xc3\xa9\"}"); /* 10,001 characters */
    input = parse_json(in);
    const char *bad[] = {"States.Base64Encode($.s)", "States.Hash($.s, 'MD5')"};
    for (size_t i = 0; i < 2; i++) {
        swf_error_t *err = swf_asl_intrinsic_eval(bad[i], input, &env, &got);
        cr_expect_not_null(err, "%s", bad[i]);
        if (err != NULL)
            cr_expect_str_eq(swf_error_name(err), "States.IntrinsicFailure");
        swf_error_free(err);
        json_object_put(got);
        got = NULL;
    }
    json_object_put(input);
    free(in);
}

Test(intrinsic_encoding, hash_in_every_algorithm)
{
    expect_value("States.Hash('input data', 'MD5')", "{}", "\"812f45842bc6d66ee14572ce20db8e86\"");
    expect_value("States.Hash('input data', 'SHA-256')", "{}",
                 "\"b4a697a057313163aee33cd8d40c66e9f0f177e00cac2de32475ffff6169c3e3\"");
    expect_value("States.Hash('abc', 'SHA-1')", "{}",
                 "\"a9993e364706816aba3e25717850c26c9cd0d89d\"");
    expect_value("States.Hash('abc', 'SHA-384')", "{}",
                 "\"cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e"
                 "7cc2358baeca134c825a7\"");
    expect_value("States.Hash('abc', 'SHA-512')", "{}",
                 "\"ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274"
                 "fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f\"");
}

Test(intrinsic_encoding, hash_failures)
{
    expect_intrinsic_failure("States.Hash('abc', 'SHA-3')", "unknown algorithm");
    expect_intrinsic_failure("States.Hash('abc', 'sha-256')", "unknown algorithm");
    expect_intrinsic_failure("States.Hash(1, 'MD5')", "States.Hash");
    expect_intrinsic_failure("States.Hash('abc', null)", "States.Hash");

    /* Longer than SWF_LIMIT_INTRINSIC_STRING_CHARS, built without a path. */
    char expr[256];
    snprintf(expr, sizeof(expr),
             "States.Hash(States.Format('{}{}', States.JsonToString(States.ArrayRange(1, %d, 1)), "
             "'x'), 'MD5')",
             1000);
    /* 1..1000 as JSON is 3,893 bytes: under the limit. */
    swf_asl_env_t env = {0};
    json_object *got = NULL;
    swf_error_t *err = swf_asl_intrinsic_eval(expr, NULL, &env, &got);
    cr_expect_null(err);
    swf_error_free(err);
    json_object_put(got);
    /* Three times that is over it. */
    expect_intrinsic_failure(
        "States.Hash(States.Format('{}{}{}', States.JsonToString(States.ArrayRange(1, 1000, 1)), "
        "States.JsonToString(States.ArrayRange(1, 1000, 1)), "
        "States.JsonToString(States.ArrayRange(1, 1000, 1))), 'MD5')",
        "limit");
}

/* ---- math ---- */

Test(intrinsic_math, add)
{
    expect_value("States.MathAdd(111, -1)", "{}", "110");
    expect_value("States.MathAdd(1.5, 1.51)", "{}", "4");
    expect_value("States.MathAdd(1.4, 0)", "{}", "1");
    expect_value("States.MathAdd(-1.5, 0)", "{}", "-1");
    expect_value("States.MathAdd(2147483647, 1)", "{}", "2147483648");
    expect_intrinsic_failure("States.MathAdd('1', 1)", "States.MathAdd");
    expect_intrinsic_failure("States.MathAdd(1, null)", "States.MathAdd");
    expect_intrinsic_failure("States.MathAdd(1e300, 1)", "States.MathAdd");
    /* Arguments must lie in -2147483648..2147483647 (AWS input validation). */
    expect_value("States.MathAdd(-2147483648, 2147483647)", "{}", "-1");
    expect_intrinsic_failure("States.MathAdd(2147483648, 0)", "outside");
    expect_intrinsic_failure("States.MathAdd(0, -2147483649)", "outside");
}

static void check_random_range(const char *expr, swf_asl_env_t *env, int64_t lo, int64_t hi)
{
    json_object *got = NULL;
    swf_error_t *err = swf_asl_intrinsic_eval(expr, NULL, env, &got);
    cr_assert_null(err, "%s: %s", expr, err ? swf_error_message(err) : "");
    cr_assert(json_object_is_type(got, json_type_int), "%s gave %s", expr, swf_json_str(got));
    int64_t v = json_object_get_int64(got);
    cr_expect(v >= lo && v < hi, "%s gave %lld", expr, (long long)v);
    json_object_put(got);
}

static char *eval_text(const char *expr, swf_asl_env_t *env)
{
    json_object *got = NULL;
    swf_error_t *err = swf_asl_intrinsic_eval(expr, NULL, env, &got);
    cr_assert_null(err, "%s: %s", expr, err ? swf_error_message(err) : "");
    char *s = strdup(swf_json_str(got));
    json_object_put(got);
    return s;
}

Test(intrinsic_math, random_stays_in_range)
{
    swf_asl_rng_t rng = {42};
    swf_asl_env_t env = {.rng = &rng};
    for (int i = 0; i < 500; i++) {
        check_random_range("States.MathRandom(1, 10)", &env, 1, 10);
        check_random_range("States.MathRandom(-5, -4)", &env, -5, -4);
    }
    for (int seed = 0; seed < 200; seed++) {
        char expr[64];
        snprintf(expr, sizeof(expr), "States.MathRandom(100, 200, %d)", seed);
        check_random_range(expr, &env, 100, 200);
    }
    swf_asl_env_t no_rng = {0};
    check_random_range("States.MathRandom(0, 3)", &no_rng, 0, 3);
    check_random_range("States.MathRandom(0, 3)", NULL, 0, 3);
}

Test(intrinsic_math, random_is_deterministic)
{
    /* The same rng seed gives the same sequence: replay draws the same. */
    swf_asl_rng_t r1 = {7}, r2 = {7};
    swf_asl_env_t e1 = {.rng = &r1}, e2 = {.rng = &r2};
    int distinct = 0;
    char *prev = NULL;
    for (int i = 0; i < 20; i++) {
        char *a = eval_text("States.MathRandom(0, 1000000)", &e1);
        char *b = eval_text("States.MathRandom(0, 1000000)", &e2);
        cr_expect_str_eq(a, b);
        if (prev != NULL && strcmp(prev, a) != 0)
            distinct++;
        free(prev);
        prev = a;
        free(b);
    }
    free(prev);
    cr_expect_gt(distinct, 10, "the draws should vary");

    /* A seeded call depends on the seed alone, not on the env's rng. */
    swf_asl_rng_t r3 = {1}, r4 = {999};
    swf_asl_env_t e3 = {.rng = &r3}, e4 = {.rng = &r4};
    char *a = eval_text("States.MathRandom(0, 1000000, 7)", &e3);
    char *b = eval_text("States.MathRandom(0, 1000000, 7)", &e4);
    char *c = eval_text("States.MathRandom(0, 1000000, 7)", &e4);
    char *d = eval_text("States.MathRandom(0, 1000000, 8)", &e4);
    cr_expect_str_eq(a, b);
    cr_expect_str_eq(b, c);
    cr_expect_str_neq(a, d);
    cr_expect_eq(r4.state, 999, "a seeded call must not consume the env's rng");
    free(a);
    free(b);
    free(c);
    free(d);
}

Test(intrinsic_math, random_failures)
{
    expect_intrinsic_failure("States.MathRandom(10, 1)", "States.MathRandom");
    expect_intrinsic_failure("States.MathRandom(1, 1)", "States.MathRandom");
    expect_intrinsic_failure("States.MathRandom('1', 10)", "States.MathRandom");
    expect_intrinsic_failure("States.MathRandom(1, 10, 'seed')", "States.MathRandom");
}

/* ---- strings ---- */

Test(intrinsic_string, split)
{
    expect_value("States.StringSplit('1,2,3,4,5', ',')", "{}", "[\"1\",\"2\",\"3\",\"4\",\"5\"]");
    expect_value("States.StringSplit(',a,,b,', ',')", "{}", "[\"a\", \"b\"]");
    expect_value("States.StringSplit('abc', '|')", "{}", "[\"abc\"]");
    expect_value("States.StringSplit('a.b-c', '.-')", "{}", "[\"a\", \"b\", \"c\"]");
    expect_value("States.StringSplit('a b', ' ')", "{}", "[\"a\", \"b\"]");
    expect_value("States.StringSplit('', ',')", "{}", "[]");
    expect_value("States.StringSplit(',,,', ',')", "{}", "[]");
    expect_value("States.StringSplit('abc', '')", "{}", "[\"abc\"]");
    expect_value("States.StringSplit('xéyéz', 'é')", "{}", "[\"x\", \"y\", \"z\"]");
    /* é is two bytes; a delimiter of é must not split on its bytes alone. */
    expect_value("States.StringSplit('aèb', 'é')", "{}", "[\"aèb\"]");
    expect_intrinsic_failure("States.StringSplit(1, ',')", "States.StringSplit");
    expect_intrinsic_failure("States.StringSplit('a', 1)", "States.StringSplit");
}

Test(intrinsic_string, nested_calls)
{
    expect_value("States.ArrayGetItem(States.StringSplit('arn:aws:states:us-east-1:1:sm:Orders', "
                 "':'), States.MathAdd(States.ArrayLength(States.StringSplit("
                 "'arn:aws:states:us-east-1:1:sm:Orders', ':')), -1))",
                 "{}", "\"Orders\"");
}

/* ---- UUID ---- */

static void check_uuid_shape(const char *s)
{
    cr_assert_eq(strlen(s), 36, "%s", s);
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23)
            cr_expect_eq(s[i], '-', "%s", s);
        else
            cr_expect(strchr("0123456789abcdef", s[i]) != NULL, "%s", s);
    }
    cr_expect_eq(s[14], '4', "version nibble of %s", s);
    cr_expect(strchr("89ab", s[19]) != NULL, "variant of %s", s);
}

Test(intrinsic_uuid, is_version_4_and_deterministic)
{
    swf_asl_rng_t r1 = {123}, r2 = {123};
    swf_asl_env_t e1 = {.rng = &r1}, e2 = {.rng = &r2};
    for (int i = 0; i < 50; i++) {
        json_object *a = NULL, *b = NULL;
        cr_assert_null(swf_asl_intrinsic_eval("States.UUID()", NULL, &e1, &a));
        cr_assert_null(swf_asl_intrinsic_eval("States.UUID()", NULL, &e2, &b));
        cr_assert(json_object_is_type(a, json_type_string));
        check_uuid_shape(json_object_get_string(a));
        cr_expect_str_eq(json_object_get_string(a), json_object_get_string(b));
        json_object_put(a);
        json_object_put(b);
    }
    char *x = eval_text("States.UUID()", &e1);
    char *y = eval_text("States.UUID()", &e1);
    cr_expect_str_neq(x, y);
    free(x);
    free(y);
    /* Without a random source the answer is still a UUID. */
    swf_asl_env_t none = {0};
    json_object *z = NULL;
    cr_assert_null(swf_asl_intrinsic_eval("States.UUID()", NULL, &none, &z));
    check_uuid_shape(json_object_get_string(z));
    json_object_put(z);
}

/* ---- path arguments (need decider/asl/path.c) ---- */

/* path.c is written alongside this file; until it evaluates "$" these tests
 * are skipped rather than failed. */
static void require_paths(void)
{
    json_object *in = json_object_new_object(), *got = NULL;
    swf_asl_env_t env = {0};
    swf_error_t *err = swf_asl_path_eval("$", in, &env, &got);
    json_object_put(got);
    json_object_put(in);
    if (err != NULL) {
        swf_error_free(err);
        cr_skip_test("decider/asl/path.c cannot evaluate paths yet");
    }
}

Test(intrinsic_paths, arguments_from_input_context_and_variables)
{
    require_paths();
    json_object *ctx = parse_json("{\"Execution\": {\"Input\": {\"v\": \"ctx\"}}}");
    json_object *vars = parse_json("{\"greeting\": \"hi\"}");
    swf_asl_env_t env = {.context = ctx, .variables = vars};
    expect_value_env("States.Format('input was {}', $$.Execution.Input.v)", "{}", &env,
                     "\"input was ctx\"");
    expect_value_env("States.Format('{} {}', $greeting, $.name)", "{\"name\": \"Ann\"}", &env,
                     "\"hi Ann\"");
    json_object_put(ctx);
    json_object_put(vars);

    expect_value("States.Array('Foo', 2022, $.someJson, null)",
                 "{\"someJson\": {\"random\": \"abcdefg\"}, \"zebra\": \"stripe\"}",
                 "[\"Foo\", 2022, {\"random\": \"abcdefg\"}, null]");
    expect_value("States.Format($.template, $.name)",
                 "{\"name\": \"Arnav\", \"template\": \"Hello, my name is {}.\"}",
                 "\"Hello, my name is Arnav.\"");
    expect_value("States.Format($.t, 'x')", "{\"t\": \"\\\\{\\\\} {}\"}", "\"{} x\"");
    expect_value("States.ArrayGetItem($.a, $.i)", "{\"a\": [1, 2, 3, 4, 5, 6, 7, 8, 9], \"i\": 5}",
                 "6");
    expect_value("States.MathAdd($.a, $.b)", "{\"a\": 1.5, \"b\": 1.51}", "4");
    expect_value("States.Array($['a,b'], $.c )", "{\"a,b\": 1, \"c\": 2}", "[1, 2]");
    expect_value("States.ArrayLength($)", "[1, 2, 3]", "3");
}

Test(intrinsic_paths, indefinite_paths_give_arrays)
{
    require_paths();
    expect_value("States.ArrayLength($.items[?(@.n > 1)])",
                 "{\"items\": [{\"n\": 1}, {\"n\": 2}, {\"n\": 3}]}", "2");
    expect_value("States.ArrayLength($.items[*].n)",
                 "{\"items\": [{\"n\": 1}, {\"n\": 2}, {\"n\": 3}]}", "3");
}

Test(intrinsic_paths, a_path_that_selects_nothing_keeps_its_runtime_error)
{
    require_paths();
    expect_failure("States.Format('{}', $.missing)", "{}", "States.Runtime", NULL);
    expect_failure("States.MathAdd($.a, 1)", "{\"a\": \"1\"}", "States.IntrinsicFailure",
                   "States.MathAdd");
}

Test(intrinsic_paths, check_validates_path_syntax)
{
    require_paths();
    expect_invalid("States.Array($.a.)", NULL);
    expect_invalid("States.Array($.a[?(@.x > 1)]]])", NULL);
}

/* The de-duplication is hashed, not pairwise: a large array stays fast. */
Test(intrinsic_paths, unique_on_a_large_array, .timeout = 20)
{
    require_paths();
    json_object *items = json_object_new_array();
    for (int i = 0; i < 200000; i++)
        json_object_array_add(items, json_object_new_int(i % 1000));
    json_object *in = json_object_new_object();
    json_object_object_add(in, "a", items);
    swf_asl_env_t env = {0};
    json_object *got = NULL;
    swf_error_t *err =
        swf_asl_intrinsic_eval("States.ArrayLength(States.ArrayUnique($.a))", in, &env, &got);
    cr_expect_null(err, "%s", err ? swf_error_message(err) : "");
    cr_expect_eq(json_object_get_int(got), 1000);
    swf_error_free(err);
    json_object_put(got);
    json_object_put(in);
}

/* ---- mutated calls (tests/fuzz.h) ---- */

static void pick_call(const char *key, const char *value, fuzz_corpus_t *c)
{
    (void)key;
    if (swf_asl_intrinsic_is_call(value))
        fuzz_corpus_add(c, value);
}

static fuzz_outcome_t intrinsic_round(const char *call, void *input)
{
    swf_error_t *bad = swf_asl_intrinsic_check(call);
    if (bad != NULL) {
        swf_error_free(bad);
        return FUZZ_REFUSED;
    }
    swf_asl_env_t env = {0};
    json_object *out = NULL;
    swf_error_t *err = swf_asl_intrinsic_eval(call, input, &env, &out);
    return fuzz_outcome(call, err, out);
}

/* A mutated call the check takes evaluates to JSON or to an error with a
 * message (States.IntrinsicFailure and the like), whatever its arguments. */
Test(intrinsic_fuzz, mutated_calls_fail_cleanly_or_give_json)
{
    fuzz_corpus_t seeds = {0};
    fuzz_corpus_from_histories(&seeds, pick_call);
    cr_assert(seeds.n > 30, "only %zu calls in tests/histories", seeds.n);
    /* The fields the recorded calls read. */
    json_object *input = parse_json(
        "{\"a\":[1,2,2,3],\"v\":\"x\",\"i\":1,\"n\":2.5,\"b\":true,\"f\":0.5,\"s\":\"x,y|z\","
        "\"name\":\"Ann\",\"data\":\"abc\",\"template\":\"hi {}\",\"id\":\"a-b-c\",\"why\":\"no\","
        "\"orderId\":\"o1\",\"lo\":1,\"hi\":9,\"seed\":4,\"o\":{\"k\":\"v\"},\"records\":[1,2,3],"
        "\"arn\":\"arn:aws:states:x:y\",\"reservations\":[],\"someJson\":{\"j\":[1]}}");
    fuzz_tally_t t = fuzz_run(&seeds, 50000, intrinsic_round, input);
    cr_expect(t.outcomes[FUZZ_VALUE] > t.rounds / 100 && t.outcomes[FUZZ_FAILED] > 0,
              "%ld values, %ld failed", t.outcomes[FUZZ_VALUE], t.outcomes[FUZZ_FAILED]);
    json_object_put(input);
    fuzz_corpus_free(&seeds);
}
