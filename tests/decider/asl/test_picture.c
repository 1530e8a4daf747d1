/*
 * test_picture.c - XPath picture strings (picture.c): $formatInteger and
 * $parseInteger, the components and widths of $fromMillis, and $toMillis
 * with a picture, each with its errors and limits. Expected values are
 * jsonata-js 2.0.6's (the version Step Functions runs) except where a test
 * says it follows the XPath specification instead.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/asl/jsonata.h"
#include "decider/asl/picture.h"
#include "protocol/json.h"
#include "protocol/limits.h"

#define QEE "States.QueryEvaluationError"

/* 2025-11-24T16:00:00Z, a Monday: the decision's time in these tests. */
#define NOW_MS 1764000000000LL

static void expect_int(double value, const char *pic, const char *want)
{
    char *out = NULL;
    size_t n = 0;
    swf_error_t *err = swf_asl_picture_integer_format(value, pic, strlen(pic), &out, &n);
    cr_expect_null(err, "%g with '%s' failed: %s", value, pic, err ? swf_error_message(err) : "");
    if (err == NULL) {
        cr_expect_str_eq(out, want, "%g with '%s'", value, pic);
        cr_expect_eq(n, strlen(want));
    }
    swf_error_free(err);
    free(out);
}

static void expect_parsed(const char *text, const char *pic, double want)
{
    double v = -12345;
    swf_error_t *err = swf_asl_picture_integer_parse(text, strlen(text), pic, strlen(pic), &v);
    cr_expect_null(err, "'%s' with '%s' failed: %s", text, pic, err ? swf_error_message(err) : "");
    if (err == NULL)
        cr_expect_eq(v, want, "'%s' with '%s' gave %.17g, want %.17g", text, pic, v, want);
    swf_error_free(err);
}

static void expect_date(int64_t ms, int zone, const char *pic, const char *want)
{
    char *out = NULL;
    size_t n = 0;
    swf_error_t *err = swf_asl_picture_date_format(ms, zone, pic, strlen(pic), &out, &n);
    cr_expect_null(err, "%lld with '%s' failed: %s", (long long)ms, pic,
                   err ? swf_error_message(err) : "");
    if (err == NULL)
        cr_expect_str_eq(out, want, "%lld with '%s'", (long long)ms, pic);
    swf_error_free(err);
    free(out);
}

static void expect_millis(const char *text, const char *pic, double want)
{
    double ms = -1;
    bool matched = false;
    swf_error_t *err =
        swf_asl_picture_date_parse(text, strlen(text), pic, strlen(pic), NOW_MS, &ms, &matched);
    cr_expect_null(err, "'%s' with '%s' failed: %s", text, pic, err ? swf_error_message(err) : "");
    cr_expect(err != NULL || matched, "'%s' with '%s' did not match", text, pic);
    if (err == NULL && matched)
        cr_expect_eq(ms, want, "'%s' with '%s' gave %.17g, want %.17g", text, pic, ms, want);
    swf_error_free(err);
}

static void expect_no_match(const char *text, const char *pic)
{
    double ms = -1;
    bool matched = true;
    swf_error_t *err =
        swf_asl_picture_date_parse(text, strlen(text), pic, strlen(pic), NOW_MS, &ms, &matched);
    cr_expect_null(err, "'%s' with '%s' failed: %s", text, pic, err ? swf_error_message(err) : "");
    cr_expect(!matched, "'%s' with '%s' matched: %.17g", text, pic, ms);
    swf_error_free(err);
}

/* Checks a States.QueryEvaluationError whose message holds `in_message`. */
static void expect_err(swf_error_t *err, const char *what, const char *in_message)
{
    cr_expect_not_null(err, "%s succeeded", what);
    if (err == NULL)
        return;
    cr_expect_eq(swf_error_code(err), SWF_E_STATES);
    cr_expect_str_eq(swf_error_name(err), QEE);
    cr_expect(strstr(swf_error_message(err), in_message) != NULL, "%s: \"%s\" lacks \"%s\"", what,
              swf_error_message(err), in_message);
    swf_error_free(err);
}

static void expect_int_error(double value, const char *pic, const char *in_message)
{
    char *out = (char *)1;
    size_t n;
    swf_error_t *err = swf_asl_picture_integer_format(value, pic, strlen(pic), &out, &n);
    cr_expect_null(out, "out must be NULL on failure");
    expect_err(err, pic, in_message);
}

static void expect_parse_error(const char *text, const char *pic, const char *in_message)
{
    double v;
    expect_err(swf_asl_picture_integer_parse(text, strlen(text), pic, strlen(pic), &v), text,
               in_message);
}

static void expect_date_error(const char *pic, const char *in_message)
{
    char *out = (char *)1;
    size_t n;
    swf_error_t *err = swf_asl_picture_date_format(0, 0, pic, strlen(pic), &out, &n);
    cr_expect_null(out, "out must be NULL on failure");
    expect_err(err, pic, in_message);
}

static void expect_millis_error(const char *text, const char *pic, int64_t now_ms,
                                const char *in_message)
{
    double ms;
    bool matched;
    expect_err(
        swf_asl_picture_date_parse(text, strlen(text), pic, strlen(pic), now_ms, &ms, &matched),
        text, in_message);
}

/* ---- $formatInteger ---- */

Test(picture, decimal_patterns_pad_to_their_mandatory_digits)
{
    expect_int(7, "0", "7");
    expect_int(7, "000", "007");
    expect_int(1234, "00", "1234");
    expect_int(7, "#0", "7");
    expect_int(0, "0", "0");
    expect_int(12, "1", "12"); /* any digit is a mandatory digit */
}

Test(picture, regular_grouping_repeats_over_the_whole_number)
{
    expect_int(1234567, "#,##0", "1,234,567");
    expect_int(1234567, "0,000", "1,234,567");
    expect_int(123, "#,##0", "123");
    expect_int(1234567, "#\xc2\xa0##0",
               "1\xc2\xa0"
               "234\xc2\xa0"
               "567"); /* no-break space */
    expect_int(1e20, "#,##0", "100,000,000,000,000,000,000");
}

/* SPEC: jsonata-js writes ",,12" for 12 here, and drops digits for 1234. */
Test(picture, irregular_grouping_keeps_its_places_and_needs_digits_on_both_sides)
{
    expect_int(123456789, "000-00-0000", "123-45-6789");
    expect_int(1234567, "000-00-0000", "001-23-4567");
    expect_int(1234567, "#,##,##0", "12,34,567");
    expect_int(12, "#,##,##0", "12");
    expect_int(1234, "#,##,##0", "1,234");
}

Test(picture, other_digit_families_write_their_digits)
{
    expect_int(1234, "\xd9\xa0", "\xd9\xa1\xd9\xa2\xd9\xa3\xd9\xa4");      /* Arabic-Indic */
    expect_int(5, "\xef\xbc\x90\xef\xbc\x90", "\xef\xbc\x90\xef\xbc\x95"); /* fullwidth */
}

Test(picture, ordinals_take_english_suffixes)
{
    expect_int(1, "0;o", "1st");
    expect_int(2, "0;o", "2nd");
    expect_int(3, "0;o", "3rd");
    expect_int(4, "0;o", "4th");
    expect_int(11, "0;o", "11th");
    expect_int(12, "0;o", "12th");
    expect_int(13, "0;o", "13th");
    expect_int(21, "0;o", "21st");
    expect_int(112, "0;o", "112th");
    expect_int(1001, "#,##0;o", "1,001st");
    expect_int(12, "0;c", "12");
    expect_int(5, "0;o(-en)", "5th");
}

Test(picture, letters_count_as_spreadsheet_columns)
{
    expect_int(1, "a", "a");
    expect_int(26, "A", "Z");
    expect_int(27, "a", "aa");
    expect_int(702, "a", "zz");
    expect_int(703, "A", "AAA");
}

Test(picture, roman_numerals_subtract_and_repeat_m)
{
    expect_int(4, "i", "iv");
    expect_int(1999, "I", "MCMXCIX");
    expect_int(2026, "I", "MMXXVI");
    expect_int(3999, "i", "mmmcmxcix");
    expect_int(4000, "I", "MMMM");
    expect_int(-4, "I", "-IV");
}

/* SPEC: jsonata-js writes "" for 0 in letters and roman numerals. */
Test(picture, zero_without_a_letter_or_numeral_is_written_in_digits)
{
    expect_int(0, "a", "0");
    expect_int(0, "I", "0");
}

Test(picture, words_are_british_english_in_three_cases)
{
    expect_int(0, "w", "zero");
    expect_int(21, "w", "twenty-one");
    expect_int(101, "Ww", "One Hundred and One");
    expect_int(1001, "w", "one thousand and one");
    expect_int(1100, "w", "one thousand, one hundred");
    expect_int(1234567, "W",
               "ONE MILLION, TWO HUNDRED AND THIRTY-FOUR THOUSAND, FIVE HUNDRED AND SIXTY-SEVEN");
    expect_int(1e15, "w", "one thousand trillion");
    expect_int(-7, "w", "-seven");
}

Test(picture, word_ordinals_change_the_last_word)
{
    expect_int(1, "w;o", "first");
    expect_int(12, "w;o", "twelfth");
    expect_int(21, "w;o", "twenty-first");
    expect_int(90, "Ww;o", "Ninetieth");
    expect_int(100, "w;o", "one hundredth");
    expect_int(1e12, "Ww;o", "One Trillionth");
}

Test(picture, fractions_round_down_as_in_jsonata)
{
    expect_int(2.7, "0", "2");
    expect_int(-2.5, "0", "-3");
    expect_int(-0.1, "0", "-1");
}

Test(picture, bad_integer_pictures_are_errors)
{
    expect_int_error(5, "", "not supported");
    expect_int_error(5, "ww", "not supported");
    expect_int_error(5, "\xce\xb1", "not supported"); /* a numbering sequence from alpha */
    expect_int_error(5, "#,###", "not supported");    /* no mandatory digit */
    expect_int_error(5, "0\xd9\xa0", "one family");
    expect_int_error(5, "0#", "follows a mandatory digit");
    expect_int_error(5, "0,", "not between two digits");
    expect_int_error(5, ",0", "not between two digits");
    expect_int_error(5, "0,,0", "not between two digits");
    expect_int_error(5, "00a", "mixes letters and digits");
    expect_int_error(5, "0;x", "modifier");
    expect_int_error(5, "0;o(en", "no closing )");
}

Test(picture, integer_limits_are_errors)
{
    char big[SWF_LIMIT_PICTURE_BYTES + 2];
    memset(big, '0', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    expect_int_error(5, big, "longer than");
    big[SWF_LIMIT_PICTURE_BYTES] = '\0'; /* exactly the limit: fine */
    char *out;
    size_t n;
    swf_error_t *err = swf_asl_picture_integer_format(5, big, strlen(big), &out, &n);
    cr_expect_null(err);
    if (err == NULL) {
        cr_expect_eq(n, SWF_LIMIT_PICTURE_BYTES);
        free(out);
    }
    swf_error_free(err);
    expect_int_error(1e21, "0", "too large");
    expect_int_error(1e16, "w", "too large");
    expect_int_error(9007199254740992.0, "I", "longer than");
    expect_int_error(NAN, "0", "cannot write");
}

/* ---- $parseInteger ---- */

Test(picture, parse_reads_what_format_writes)
{
    expect_parsed("1,234,567", "#,##0", 1234567);
    expect_parsed("0012", "0000", 12);
    expect_parsed("-12", "0", -12);
    expect_parsed("123-45-6789", "000-00-0000", 123456789);
    expect_parsed("12th", "0;o", 12);
    expect_parsed("1st", "0;o", 1);
    expect_parsed("\xd9\xa1\xd9\xa2\xd9\xa3", "\xd9\xa0", 123);
    expect_parsed("xii", "i", 12);
    expect_parsed("MCMXCIX", "I", 1999);
    expect_parsed("-iv", "i", -4);
    expect_parsed("zz", "a", 702);
    expect_parsed("AAA", "A", 703);
    expect_parsed("twelve", "w", 12);
    expect_parsed("One Hundred and One", "Ww", 101);
    expect_parsed("one thousand, two hundred and thirty-four", "w", 1234);
    expect_parsed("one hundred thousand", "w", 100000);
    expect_parsed("two billion, three million", "w", 2003000000);
    expect_parsed("twenty-first", "w;o", 21);
    expect_parsed("one hundred and twenty-third", "w;o", 123);
}

/* SPEC: jsonata-js removes only commas, whatever the picture's separator,
 * so that "1.234" is 1 there. */
Test(picture, parse_removes_the_pictures_own_separators)
{
    expect_parsed("1.234.567", "#.##0", 1234567);
    expect_parsed("1 234", "# ##0", 1234);
}

/* SPEC: jsonata-js reads "12abc" as 12 and gives null for "abc". */
Test(picture, parse_refuses_text_of_another_form)
{
    expect_parse_error("12abc", "0", "is not an integer written as");
    expect_parse_error("abc", "0", "is not an integer written as");
    expect_parse_error("", "0", "is not an integer written as");
    expect_parse_error("-", "0", "is not an integer written as");
    expect_parse_error("twelve apples", "w", "is not an integer written as");
    expect_parse_error("xiiz", "I", "is not an integer written as");
    expect_parse_error("12", "q", "not supported");
}

/* ---- $fromMillis ---- */

/* 2017-11-07T15:12:37.121Z, a Tuesday. */
#define T1 1510067557121LL

Test(picture, dates_write_names_ordinals_and_words)
{
    expect_date(T1, 0, "[D1o] [MNn] [Y]", "7th November 2017");
    expect_date(T1, 0, "[FNn], [Dwo] of [MNn]", "Tuesday, seventh of November");
    expect_date(T1, 0, "[FN,*-3] [Mn,3-3]", "TUE nov");
    expect_date(T1, 0, "[YI]", "MMXVII");
    expect_date(T1, 0, "[Yw]", "two thousand and seventeen");
    expect_date(T1, 0, "[Da]", "g");
    expect_date(T1, 0, "[h]:[m01] [PN]", "3:12 PM");
    expect_date(T1, 0, "[d] [F1] [C] [E]", "311 2 ISO ISO");
    expect_date(T1, 0, "[[[Y]]] ]]", "[2017] ]");
    expect_date(T1, 0, "[ Y0001 ]-[ M01 ]", "2017-11");
}

/* Week 1 of a year (and of a month) is the one holding its first Thursday. */
Test(picture, weeks_are_iso_8601_weeks)
{
    /* Saturday 2005-01-01 is in week 53 of 2004 */
    expect_date(1104537600000LL, 0, "[X]-W[W01]-[F1]", "2004-W53-6");
    /* Monday 2007-12-31 is in week 1 of 2008 */
    expect_date(1199059200000LL, 0, "[X]-W[W01]-[F1]", "2008-W01-1");
    /* Thursday 2009-01-01 is in week 1 of 2009 */
    expect_date(1230768000000LL, 0, "[X]-W[W]", "2009-W1");
    expect_date(T1, 0, "[W] [w] [xNn]", "45 2 November");
    /* Saturday 2005-01-01 is in December 2004's fifth week */
    expect_date(1104537600000LL, 0, "[w] [xNn] [x]", "5 December 12");
}

Test(picture, widths_pad_numbers_and_cut_names)
{
    expect_date(T1, 0, "[M,2]", "11");
    expect_date(0, 0, "[M,2]-[D,2]", "01-01");
    expect_date(T1, 0, "[Y,2]", "17");
    expect_date(T1, 0, "[Y,*-2]", "17");
    expect_date(T1, 0, "[Y01]", "17");
    expect_date(T1, 0, "[Y,4-4]", "2017");
    expect_date(T1, 0, "[H,3]", "015");
    expect_date(T1, 0, "[MNn,*-3]", "Nov");
    expect_date(T1, 0, "[MNn,2]", "November");
    expect_date(0, 0, "[M,1-2]", "01"); /* JSONATA: the maximum becomes the minimum */
}

/* JSONATA: [f] writes milliseconds as an integer; F&O reads it as a fraction. */
Test(picture, fractional_seconds_are_milliseconds)
{
    expect_date(45, 0, "[f001]", "045");
    expect_date(45, 0, "[f]", "45");
    expect_date(450, 0, "[f01]", "450");
}

Test(picture, time_zones_take_the_picture_form)
{
    expect_date(T1, 330, "[H01][Z]", "20+05:30");
    expect_date(T1, 330, "[Z0101]", "+0530");
    expect_date(T1, 330, "[Z0]", "+5:30");
    expect_date(T1, 330, "[Z010]", "+530");
    expect_date(T1, -300, "[Z0]", "-5");
    expect_date(T1, -300, "[z]", "GMT-05:00");
    expect_date(T1, 0, "[Z01:01t]", "Z");
    expect_date(T1, 0, "[Z]", "+00:00");
    /* SPEC: jsonata-js writes -6:-30 */
    expect_date(T1, -390, "[Z0]", "-6:30");
}

Test(picture, bad_date_pictures_are_errors)
{
    expect_date_error("[Y", "no closing ]");
    expect_date_error("[]", "empty component");
    expect_date_error("[Q]", "unknown");
    expect_date_error("[HN]", "has no names");
    expect_date_error("[Mo]", "not supported");
    expect_date_error("[Y,a]", "width");
    expect_date_error("[Y,2-]", "width");
    expect_date_error("[Y,9999]", "over");
    expect_date_error("[Z00000]", "at most four digits");
    expect_date_error("[Zi]", "at most four digits");
}

/* ---- $toMillis with a picture ---- */

Test(picture, timestamps_are_read_with_the_picture)
{
    expect_millis("2017-11-07T15:12:37.121+00:00",
                  "[Y0001]-[M01]-[D01]T[H01]:[m01]:[s01].[f001][Z]", (double)T1);
    expect_millis("07/11/2017", "[D]/[M]/[Y]", 1510012800000.0);
    expect_millis("7th November 2017", "[D1o] [MNn] [Y]", 1510012800000.0);
    expect_millis("seventh of november, two thousand and seventeen", "[Dwo] of [MNn], [Yw]",
                  1510012800000.0);
    expect_millis("20171107", "[Y0001][M01][D01]", 1510012800000.0);
    expect_millis("2017-311", "[Y]-[d]", 1510012800000.0);
    expect_millis("MMXVII-XI-vii", "[YI]-[MI]-[Di]", 1510012800000.0);
    expect_millis("Tue 7 Nov 2017", "[FNn,3-3] [D] [MNn,3-3] [Y]", 1510012800000.0);
    expect_millis("2017-11-07 3:12 pm", "[Y]-[M]-[D] [h]:[m] [P]", 1510067520000.0);
    expect_millis("2017-11-07 12:12 AM", "[Y]-[M]-[D] [h]:[m] [P]", 1510013520000.0);
    expect_millis("2017-11-07 20:42 +0530", "[Y]-[M]-[D] [H]:[m] [Z0101]", 1510067520000.0);
    expect_millis("2017-11-07 10:12 GMT-05:00", "[Y]-[M]-[D] [H]:[m] [z]", 1510067520000.0);
    expect_millis("2017-11-07t15:12", "[Y]-[M]-[D]T[H]:[m]", 1510067520000.0); /* any case */
}

/* SPEC: jsonata-js reads neither Z (it writes it), nor month names in
 * another case, and adds a negative zone's minutes. */
Test(picture, timestamps_read_z_any_case_and_negative_zones)
{
    expect_millis("2024-01-01T00:00:00Z", "[Y]-[M]-[D]T[H]:[m]:[s][Z01:01t]", 1704067200000.0);
    expect_millis("12 MARCH 2024", "[D] [MNn] [Y]", 1710201600000.0);
    expect_millis("2024-01-01 -05:30", "[Y]-[M]-[D] [Z]", 1704087000000.0);
}

/* JSONATA: each marker takes the most text it can (as a regular
 * expression would), two-digit years are 1900s (JavaScript's Date.UTC)
 * and days past the month's end roll over. */
Test(picture, timestamps_follow_javascript_dates)
{
    expect_millis("1230", "[H01][m01]", 1764000000000.0 - 16 * 3600000.0 + 123 * 3600000.0);
    expect_millis("26-01-05", "[Y01]-[M01]-[D01]", -1388188800000.0);
    expect_millis("2024-02-30", "[Y]-[M]-[D]", 1709251200000.0);
    expect_millis("2024-13-01", "[Y]-[M]-[D]", 1735689600000.0);
}

Test(picture, missing_components_come_from_now_before_and_are_lowest_after)
{
    expect_millis("2024", "[Y]", 1704067200000.0);
    expect_millis("2024-03", "[Y]-[M]", 1709251200000.0);
    /* today (2025-11-24) at 10:30 */
    expect_millis("10:30", "[H]:[m]", 1763980200000.0);
    expect_millis("15", "[D]", 1763164800000.0); /* this month's 15th, midnight */
    expect_millis("3 pm", "[h] [P]", 1763996400000.0);
}

Test(picture, unmatched_timestamps_are_undefined)
{
    expect_no_match("x", "[Y]");
    expect_no_match("2024-01-01", "[Y]/[M]/[D]");
    expect_no_match("202", "[Y0001]");
    expect_no_match("20241", "[Y0001]");
    expect_no_match("abc", "abc"); /* nothing to read */
    expect_no_match("Smarch 1", "[MNn] [D]");
}

Test(picture, unreadable_timestamps_are_errors)
{
    expect_millis_error("2024 7", "[Y] [H]", NOW_MS, "not those between");
    expect_millis_error("2024-W01-1", "[X]-W[W]-[F1]", NOW_MS, "ISO week dates");
    expect_millis_error("ISO", "[C]", NOW_MS, "cannot be read");
    expect_millis_error("10:30", "[H]:[m]", 0, "has no time");
    expect_millis_error("99999999999999999", "[Y]", NOW_MS, "out of range");
    expect_millis_error("275760-09-14", "[Y]-[M]-[D]", NOW_MS, "outside the range");
    char long_text[SWF_LIMIT_PICTURE_BYTES + 2];
    memset(long_text, '1', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    expect_millis_error(long_text, "[Y]", NOW_MS, "longer than");
}

/* Three hundred markers over a thousand digits and no way to match: the
 * backtracking stops at its bound instead of running for ages. */
Test(picture, hopeless_matches_stop_at_their_bound, .timeout = 10)
{
    char text[1002], pic[901];
    memset(text, '1', 1000);
    text[1000] = 'x';
    text[1001] = '\0';
    for (int i = 0; i < 300; i++)
        memcpy(pic + 3 * i, "[H]", 3);
    pic[900] = '\0';
    expect_millis_error(text, pic, NOW_MS, "could not be matched");
}

/* ---- through the evaluator ---- */

static void expect_eval(const char *expr, const char *want)
{
    swf_asl_env_t env = {.now_ms = NOW_MS};
    json_object *b = json_object_new_object(), *got = NULL;
    json_object_set_userdata(b, &env, NULL);
    bool defined = false;
    swf_error_t *err = swf_asl_jsonata_eval(expr, b, &got, &defined);
    cr_expect_null(err, "%s failed: %s", expr, err ? swf_error_message(err) : "");
    if (err == NULL)
        cr_expect_str_eq(defined ? swf_json_str(got) : "undefined", want, "%s", expr);
    swf_error_free(err);
    json_object_put(got);
    json_object_put(b);
}

Test(picture, builtins_call_the_pictures)
{
    expect_eval("$formatInteger(1234567, '#,##0')", "\"1,234,567\"");
    expect_eval("$parseInteger('MMXXVI', 'I')", "2026");
    expect_eval("[1, 2, 3].$formatInteger($, 'w;o')", "[\"first\",\"second\",\"third\"]");
    expect_eval("$formatInteger({}.none, '0')", "undefined");
    expect_eval("$parseInteger({}.none, '0')", "undefined");
    expect_eval("$fromMillis(1510067557121, '[FNn] [D1o] [MNn] [Y] week [W]', '+0100')",
                "\"Tuesday 7th November 2017 week 45\"");
    expect_eval("$toMillis('7 November 2017', '[D] [MNn] [Y]')", "1510012800000");
    expect_eval("$toMillis('10:30', '[H]:[m]')", "1763980200000");
    expect_eval("$toMillis('Smarch', '[MNn]')", "undefined");
    expect_eval("$now('[Y0001]-W[W01]')", "\"2025-W48\"");
}
