/*
 * test_json.c - proves protocol/json.c: the project's rules around json-c.
 *
 * What matters is what json-c alone would get wrong or leave open: one value
 * and nothing after it, bounds on size and depth reported as SWF_E_LIMIT,
 * numbers equal by value, and errors that name the file they came from.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "protocol/json.h"
#include "protocol/limits.h"
#include "tests/fuzz.h"

/* Parses text; returns the error's code (SWF_OK on success) and frees all. */
static swf_code_t parse_code(const char *text, size_t len)
{
    json_object *v = (json_object *)1;
    swf_error_t *err = swf_json_parse(text, len, SWF_LIMIT_JSON_BYTES, &v);
    swf_code_t code = err ? swf_error_code(err) : SWF_OK;
    if (err != NULL)
        cr_expect_null(v, "a failed parse must leave *out NULL");
    swf_error_free(err);
    json_object_put(v);
    return code;
}

static json_object *parse(const char *text)
{
    json_object *v = NULL;
    swf_error_t *err = swf_json_parse(text, strlen(text), SWF_LIMIT_JSON_BYTES, &v);
    cr_assert_null(err, "%s: %s", text, err ? swf_error_message(err) : "");
    return v;
}

Test(json_parse, accepts_every_kind_of_value)
{
    const char *docs[] = {"{}",
                          "[]",
                          "{\"a\":[1,2.5,-3e2,true,false,null,\"x\"]}",
                          "0",
                          "12",
                          "-0.5",
                          "1e10",
                          "\"str\"",
                          "true",
                          "false",
                          "\"\\u00e9\\ud83d\\ude00\\n\"",
                          "  {\"a\" : { \"b\" : [ ] } }  \n"};
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
        cr_expect_eq(parse_code(docs[i], strlen(docs[i])), SWF_OK, "%s", docs[i]);
}

Test(json_parse, returns_the_value)
{
    json_object *v = parse("{\"a\":[1,\"two\"]}");
    json_object *a;
    cr_assert(swf_json_get(v, "a", &a));
    cr_expect_eq(json_object_array_length(a), 2);
    cr_expect_eq(json_object_get_int(json_object_array_get_idx(a, 0)), 1);
    cr_expect_str_eq(json_object_get_string(json_object_array_get_idx(a, 1)), "two");
    json_object_put(v);

    v = parse("12");
    cr_expect(json_object_is_type(v, json_type_int));
    cr_expect_eq(json_object_get_int64(v), 12);
    json_object_put(v);

    v = parse("-7.25");
    cr_expect(json_object_is_type(v, json_type_double));
    cr_expect_eq(json_object_get_double(v), -7.25);
    json_object_put(v);
}

Test(json_parse, null_is_the_null_pointer)
{
    json_object *v = (json_object *)1;
    swf_error_t *err = swf_json_parse("null", 4, SWF_LIMIT_JSON_BYTES, &v);
    cr_expect_null(err);
    cr_expect_null(v);
    swf_error_free(err);
}

Test(json_parse, reads_only_len_bytes)
{
    /* The buffer is not NUL-terminated at len: the rest must be ignored. */
    cr_expect_eq(parse_code("[1,2]garbage", 5), SWF_OK);
    cr_expect_eq(parse_code("123456", 3), SWF_OK);
    json_object *v = NULL;
    cr_assert_null(swf_json_parse("123456", 3, SWF_LIMIT_JSON_BYTES, &v));
    cr_expect_eq(json_object_get_int64(v), 123);
    json_object_put(v);
}

Test(json_parse, rejects_trailing_garbage)
{
    const char *docs[] = {"{} x",       "[1] [2]", "12 13", "\"a\"\"b\"",
                          "true false", "{}}",     "null,", "1 // comment"};
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
        cr_expect_eq(parse_code(docs[i], strlen(docs[i])), SWF_E_INPUT, "%s", docs[i]);
}

Test(json_parse, rejects_malformed_documents)
{
    const char *docs[] = {"{",       "[1,", "tru", "\"open",    "{\"a\":}", "[1,]",
                          "{'a':1}", "nul", "-",   "{\"a\" 1}", "NaN",      "01"};
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
        cr_expect_eq(parse_code(docs[i], strlen(docs[i])), SWF_E_INPUT, "%s", docs[i]);
}

Test(json_parse, rejects_what_json_c_strict_mode_lets_through)
{
    /* json-c 0.16 in strict mode still takes these; they are not JSON, and
     * NaN would be written back out verbatim. */
    const char *docs[] = {"NaN",     "[NaN]",          "Infinity", "-Infinity", "{\"a\":-Infinity}",
                          "{'a':1}", "{\"a\":{'b':2}}"};
    for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++)
        cr_expect_eq(parse_code(docs[i], strlen(docs[i])), SWF_E_INPUT, "%s", docs[i]);
    /* The same characters inside strings are fine. */
    const char *quoted = "{\"NaN's\":\"Infinity\\\"'\"}";
    cr_expect_eq(parse_code(quoted, strlen(quoted)), SWF_OK, "%s", quoted);
    const char *words = "[1E5,-2.5e-3,true,false,null]";
    cr_expect_eq(parse_code(words, strlen(words)), SWF_OK, "%s", words);
}

Test(json_parse, rejects_empty_documents)
{
    cr_expect_eq(parse_code("", 0), SWF_E_INPUT);
    cr_expect_eq(parse_code("   \n\t\r ", 7), SWF_E_INPUT);
}

Test(json_parse, rejects_a_nul_byte)
{
    cr_expect_eq(parse_code("{}\0", 3), SWF_E_INPUT);
    cr_expect_eq(parse_code("[1,\0 2]", 7), SWF_E_INPUT);
    cr_expect_eq(parse_code("\"a\0b\"", 5), SWF_E_INPUT);
}

Test(json_parse, rejects_documents_over_max_bytes)
{
    json_object *v = (json_object *)1;
    swf_error_t *err = swf_json_parse("[1,2,3]", 7, 6, &v);
    cr_assert_not_null(err);
    cr_expect_eq(swf_error_code(err), SWF_E_LIMIT);
    cr_expect_null(v);
    swf_error_free(err);
    err = swf_json_parse("[1,2,3]", 7, 7, &v);
    cr_expect_null(err);
    json_object_put(v);
}

/* n nested arrays: "[[[...]]]". */
static char *nested(size_t n)
{
    char *s = malloc(2 * n + 1);
    cr_assert_not_null(s);
    memset(s, '[', n);
    memset(s + n, ']', n);
    s[2 * n] = '\0';
    return s;
}

Test(json_parse, refuses_nesting_beyond_the_depth_limit)
{
    char *ok = nested(100);
    cr_expect_eq(parse_code(ok, strlen(ok)), SWF_OK);
    free(ok);
    char *deep = nested(SWF_LIMIT_JSON_DEPTH + 10);
    cr_expect_eq(parse_code(deep, strlen(deep)), SWF_E_LIMIT);
    free(deep);
    /* Even when the document is also unterminated. */
    char *open = nested(SWF_LIMIT_JSON_DEPTH * 4);
    open[SWF_LIMIT_JSON_DEPTH * 4] = '\0';
    cr_expect_eq(parse_code(open, strlen(open)), SWF_E_LIMIT);
    free(open);
}

Test(json_parse, depth_limit_boundary)
{
    /* SWF_LIMIT_JSON_DEPTH levels parse; one more is refused. */
    char *at = nested(SWF_LIMIT_JSON_DEPTH);
    cr_expect_eq(parse_code(at, strlen(at)), SWF_OK, "nesting %d", SWF_LIMIT_JSON_DEPTH);
    free(at);
    char *over = nested(SWF_LIMIT_JSON_DEPTH + 1);
    cr_expect_eq(parse_code(over, strlen(over)), SWF_E_LIMIT, "nesting %d",
                 SWF_LIMIT_JSON_DEPTH + 1);
    free(over);
}

Test(json_equal, numbers_compare_by_value)
{
    json_object *a = parse("1"), *b = parse("1.0"), *c = parse("1.5"), *d = parse("1e0");
    cr_expect(swf_json_equal(a, b));
    cr_expect(swf_json_equal(b, a));
    cr_expect(swf_json_equal(a, d));
    cr_expect_not(swf_json_equal(a, c));
    json_object *s = parse("\"1\"");
    cr_expect_not(swf_json_equal(a, s));
    json_object_put(a);
    json_object_put(b);
    json_object_put(c);
    json_object_put(d);
    json_object_put(s);
}

Test(json_equal, objects_ignore_key_order)
{
    json_object *a = parse("{\"x\":1,\"y\":{\"p\":[1,2],\"q\":null}}");
    json_object *b = parse("{\"y\":{\"q\":null,\"p\":[1.0,2]},\"x\":1}");
    json_object *c = parse("{\"x\":1,\"y\":{\"p\":[1,2]}}");
    json_object *d = parse("{\"x\":1,\"y\":{\"p\":[1,2],\"r\":null}}");
    cr_expect(swf_json_equal(a, b));
    cr_expect_not(swf_json_equal(a, c));
    cr_expect_not(swf_json_equal(c, a));
    cr_expect_not(swf_json_equal(a, d), "a null member is not the same as another null key");
    json_object_put(a);
    json_object_put(b);
    json_object_put(c);
    json_object_put(d);
}

Test(json_equal, arrays_are_ordered)
{
    json_object *a = parse("[1,2,3]"), *b = parse("[1,2,3]"), *c = parse("[3,2,1]"),
                *d = parse("[1,2]");
    cr_expect(swf_json_equal(a, b));
    cr_expect_not(swf_json_equal(a, c));
    cr_expect_not(swf_json_equal(a, d));
    cr_expect_not(swf_json_equal(d, a));
    json_object_put(a);
    json_object_put(b);
    json_object_put(c);
    json_object_put(d);
}

Test(json_equal, scalars_and_null)
{
    json_object *t = parse("true"), *f = parse("false"), *s = parse("\"a\""), *s2 = parse("\"a\""),
                *e = parse("\"\""), *z = parse("0");
    cr_expect(swf_json_equal(NULL, NULL));
    cr_expect_not(swf_json_equal(NULL, z));
    cr_expect_not(swf_json_equal(z, NULL));
    cr_expect_not(swf_json_equal(f, z));
    cr_expect_not(swf_json_equal(t, f));
    cr_expect(swf_json_equal(s, s2));
    cr_expect_not(swf_json_equal(s, e));
    cr_expect_not(swf_json_equal(NULL, e));
    json_object_put(t);
    json_object_put(f);
    json_object_put(s);
    json_object_put(s2);
    json_object_put(e);
    json_object_put(z);
}

Test(json_equal, strings_with_nul_compare_whole)
{
    json_object *a = parse("\"a\\u0000b\""), *b = parse("\"a\\u0000c\"");
    cr_expect_not(swf_json_equal(a, b));
    json_object_put(a);
    json_object_put(b);
}

Test(json_copy, is_deep_and_equal)
{
    json_object *a = parse("{\"x\":[1,{\"y\":null}]}");
    json_object *b = swf_json_copy(a);
    cr_expect_neq(a, b);
    cr_expect(swf_json_equal(a, b));
    json_object_object_add(b, "z", json_object_new_int(1));
    cr_expect_not(swf_json_equal(a, b), "changing the copy must not change the original");
    json_object_put(a);
    json_object_put(b);
    cr_expect_null(swf_json_copy(NULL));
}

Test(json_helpers, type_names_and_lookups)
{
    json_object *v =
        parse("{\"s\":\"x\",\"n\":null,\"i\":1,\"d\":1.5,\"b\":true,\"a\":[],\"o\":{}}");
    json_object *m;
    cr_expect_str_eq(swf_json_type_name(NULL), "null");
    cr_expect(swf_json_get(v, "n", &m));
    cr_expect_null(m);
    cr_expect_not(swf_json_get(v, "missing", &m));
    cr_expect_not(swf_json_get(NULL, "n", &m));
    cr_expect(swf_json_get(v, "i", &m));
    cr_expect_str_eq(swf_json_type_name(m), "number");
    cr_expect(swf_json_is_number(m));
    cr_expect(swf_json_get(v, "d", &m));
    cr_expect_str_eq(swf_json_type_name(m), "number");
    cr_expect(swf_json_is_number(m));
    cr_expect(swf_json_get(v, "b", &m));
    cr_expect_str_eq(swf_json_type_name(m), "boolean");
    cr_expect_not(swf_json_is_number(m));
    cr_expect(swf_json_get(v, "a", &m));
    cr_expect_str_eq(swf_json_type_name(m), "array");
    cr_expect(swf_json_get(v, "o", &m));
    cr_expect_str_eq(swf_json_type_name(m), "object");
    cr_expect_str_eq(swf_json_type_name(v), "object");
    cr_expect_str_eq(swf_json_get_string(v, "s"), "x");
    cr_expect_null(swf_json_get_string(v, "i"));
    cr_expect_null(swf_json_get_string(v, "n"));
    cr_expect_null(swf_json_get_string(v, "missing"));
    json_object_put(v);
}

Test(json_str, is_compact_without_slash_escapes)
{
    json_object *v = parse("{ \"a\" : [ 1 , \"x/y\" ] }");
    cr_expect_str_eq(swf_json_str(v), "{\"a\":[1,\"x/y\"]}");
    cr_expect_str_eq(swf_json_str(NULL), "null");
    json_object_put(v);
}

/* Writes text to a new temporary file; returns its path (to be freed). */
static char *temp_file(const char *text, size_t len)
{
    char *path = strdup("/tmp/swf-test-json-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, len), (ssize_t)len);
    close(fd);
    return path;
}

Test(json_read_file, reads_a_document)
{
    char *path = temp_file("{\"a\": 1}\n", 9);
    json_object *v = NULL;
    swf_error_t *err = swf_json_read_file(path, SWF_LIMIT_JSON_BYTES, &v);
    cr_expect_null(err);
    json_object *a;
    cr_expect(swf_json_get(v, "a", &a));
    json_object_put(v);
    swf_error_free(err);
    unlink(path);
    free(path);
}

Test(json_read_file, a_missing_file_is_an_io_error_naming_it)
{
    json_object *v = (json_object *)1;
    swf_error_t *err = swf_json_read_file("/nonexistent/swf/x.json", SWF_LIMIT_JSON_BYTES, &v);
    cr_assert_not_null(err);
    cr_expect_eq(swf_error_code(err), SWF_E_IO);
    cr_expect_not_null(strstr(swf_error_message(err), "/nonexistent/swf/x.json"));
    cr_expect_null(v);
    swf_error_free(err);
}

Test(json_read_file, parse_errors_name_the_file)
{
    char *path = temp_file("{\"a\": }", 7);
    json_object *v = (json_object *)1;
    swf_error_t *err = swf_json_read_file(path, SWF_LIMIT_JSON_BYTES, &v);
    cr_assert_not_null(err);
    cr_expect_eq(swf_error_code(err), SWF_E_INPUT);
    cr_expect_not_null(strstr(swf_error_message(err), path), "%s", swf_error_message(err));
    cr_expect_null(v);
    swf_error_free(err);
    unlink(path);
    free(path);
}

Test(json_read_file, refuses_a_file_over_the_limit)
{
    /* Larger than the first read buffer, so the growth path is taken. */
    size_t n = 200 * 1024;
    char *text = malloc(n);
    cr_assert_not_null(text);
    memset(text, ' ', n);
    text[0] = '1';
    char *path = temp_file(text, n);
    json_object *v = (json_object *)1;
    swf_error_t *err = swf_json_read_file(path, 1000, &v);
    cr_assert_not_null(err);
    cr_expect_eq(swf_error_code(err), SWF_E_LIMIT);
    cr_expect_null(v);
    swf_error_free(err);
    err = swf_json_read_file(path, n, &v);
    cr_expect_null(err, "%s", err ? swf_error_message(err) : "");
    cr_expect_eq(json_object_get_int(v), 1);
    swf_error_free(err);
    json_object_put(v);
    unlink(path);
    free(path);
    free(text);
}

Test(json_equal, integer_and_double_compare_exactly)
{
    json_object *i = json_object_new_int64(9007199254740993LL);
    json_object *d = json_object_new_double(9007199254740992.0);
    json_object *one = json_object_new_int64(1), *onef = json_object_new_double(1.0);
    cr_assert_not(swf_json_equal(i, d));
    cr_assert(swf_json_equal(one, onef));
    cr_assert(swf_json_equal(onef, one));
    json_object_put(i);
    json_object_put(d);
    json_object_put(one);
    json_object_put(onef);
}

/* RFC 8259 asks for UTF-8, and PostgreSQL's jsonb takes nothing else: a
 * document that is not is refused where it enters, naming the byte. */
Test(json_parse, refuses_text_that_is_not_utf8)
{
    static const struct {
        const char *text;
        size_t at;
    } bad[] = {
        {"\"\x80\"", 1},             /* a continuation byte alone */
        {"\"ok \xC3\"", 4},          /* a sequence cut short at the end */
        {"\"\xC3(\"", 1},            /* ... or by a byte that does not continue it */
        {"\"\xC0\xAF\"", 1},         /* an overlong form of '/' */
        {"\"\xE0\x80\xAF\"", 1},     /* another */
        {"\"\xED\xA0\x80\"", 1},     /* a surrogate, U+D800 */
        {"\"\xF4\x90\x80\x80\"", 1}, /* past U+10FFFF */
        {"\"\xF8\x88\x80\x80\x80\"", 1},
        {"{\"k\":1,\"\xFF\":2}", 8}, /* in a key */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        json_object *v = NULL;
        swf_error_t *err =
            swf_json_parse(bad[i].text, strlen(bad[i].text), SWF_LIMIT_JSON_BYTES, &v);
        cr_assert_not_null(err, "case %zu accepted", i);
        cr_expect_eq(swf_error_code(err), SWF_E_INPUT);
        char want[32];
        snprintf(want, sizeof(want), "byte %zu ", bad[i].at);
        cr_expect(strstr(swf_error_message(err), "not UTF-8") != NULL &&
                      strstr(swf_error_message(err), want) != NULL,
                  "case %zu: %s", i, swf_error_message(err));
        cr_expect_null(v);
        swf_error_free(err);
    }
    /* Every length of sequence, at the edges of its ranges, is text. */
    const char *good = "\"\x7F \xC2\x80 \xDF\xBF \xE0\xA0\x80 \xED\x9F\xBF \xEE\x80\x80 "
                       "\xF0\x90\x80\x80 \xF4\x8F\xBF\xBF\"";
    json_object *v = parse(good);
    cr_expect_eq((size_t)json_object_get_string_len(v), strlen(good) - 2);
    json_object_put(v);
}

Test(json_utf8, finds_the_first_bad_byte)
{
    cr_expect_eq(swf_json_utf8_invalid_at("", 0), 0);
    cr_expect_eq(swf_json_utf8_invalid_at("abc", 3), 3);
    cr_expect_eq(swf_json_utf8_invalid_at("caf\xC3\xA9", 5), 5);
    cr_expect_eq(swf_json_utf8_invalid_at("caf\xC3\xA9", 4), 3, "a sequence cut by the length");
    cr_expect_eq(swf_json_utf8_invalid_at("ab\xE2\x82\xAC\xE2\x82", 7), 5);
}

Test(json_utf8, new_text_marks_each_bad_byte)
{
    json_object *v = swf_json_new_text("a\x80"
                                       "b\xE2\x82"
                                       "c\xC3\xA9",
                                       9);
    cr_expect_str_eq(json_object_get_string(v), "a\xEF\xBF\xBD"
                                                "b\xEF\xBF\xBD\xEF\xBF\xBD"
                                                "c\xC3\xA9");
    /* What it makes is JSON the parser takes back. */
    const char *s = swf_json_str(v);
    json_object *back = parse(s);
    cr_expect(swf_json_equal(v, back));
    json_object_put(back);
    json_object_put(v);
    v = swf_json_new_text("plain \xC3\xA9", 8);
    cr_expect_str_eq(json_object_get_string(v), "plain \xC3\xA9");
    json_object_put(v);
}

/* Text from people (a file, an option) is named and its syntax errors say
 * where as editors do; the interpreter's unnamed messages keep their byte
 * offsets, since histories record them and replay compares them. */
Test(json_parse, a_named_document_says_line_and_column_and_an_unnamed_one_its_byte)
{
    const char *text = "{\n  \"é\": 1\n  \"b\": 2\n}";
    json_object *v = NULL;
    swf_error_t *err = swf_json_parse_named("in.json", text, strlen(text), 1024, &v);
    cr_assert_not_null(err);
    cr_assert_str_eq(swf_error_message(err),
                     "in.json:3:3: not JSON: object value separator ',' expected");
    swf_error_free(err);
    err = swf_json_parse(text, strlen(text), 1024, &v);
    cr_assert_not_null(err);
    cr_assert_str_eq(swf_error_message(err),
                     "not JSON: object value separator ',' expected at byte 14");
    swf_error_free(err);
    err = swf_json_parse_named("--input", "[1, nope]", 9, 4, &v);
    cr_assert_str_eq(swf_error_message(err), "--input: JSON document is 9 bytes, the limit is 4");
    swf_error_free(err);
    err = swf_json_parse_named("x", "[1,\n\xC3(]", 7, 64, &v);
    cr_assert_str_eq(swf_error_message(err),
                     "x:2:1: not JSON: the text is not UTF-8 (byte 4 is 0xC3)");
    swf_error_free(err);
    cr_assert_null(v);
}

static bool count_and_find_x(const char *s, size_t len, void *ctx)
{
    (*(int *)ctx)++;
    return len == 1 && s[0] == 'x';
}

Test(json_any_string, tests_names_before_values_and_stops_at_the_first_match)
{
    json_object *v = parse("{\"a\":[1,\"b\",{\"x\":\"c\"}],\"d\":\"e\"}");
    int seen = 0;
    cr_expect(swf_json_any_string(v, count_and_find_x, &seen));
    cr_expect_eq(seen, 3, "a, b, then the name x: %d", seen); /* not c, d, e */
    json_object *none = parse("[true,null,2,{\"y\":\"z\"}]");
    seen = 0;
    cr_expect_not(swf_json_any_string(none, count_and_find_x, &seen));
    cr_expect_eq(seen, 2);
    json_object_put(v);
    json_object_put(none);
}

Test(json_any_string, holds_nul_finds_u0000_in_a_value_only)
{
    json_object *with = parse("{\"k\":[\"a\\u0000b\"]}");
    json_object *without = parse("{\"k\":[\"ab\"]}");
    cr_expect(swf_json_holds_nul(with));
    cr_expect_not(swf_json_holds_nul(without));
    json_object_put(with);
    json_object_put(without);
}

/* The message of the error parsing text (unnamed), or NULL on success. */
static char *parse_message(const char *name, const char *text)
{
    json_object *v = NULL;
    swf_error_t *err = swf_json_parse_named(name, text, strlen(text), SWF_LIMIT_JSON_BYTES, &v);
    json_object_put(v);
    if (err == NULL)
        return NULL;
    cr_expect_null(v, "a failed parse must leave *out NULL");
    cr_expect_eq(swf_error_code(err), SWF_E_INPUT, "%s", swf_error_message(err));
    char *m = strdup(swf_error_message(err));
    swf_error_free(err);
    return m;
}

static void expect_refused(const char *text, const char *message)
{
    char *m = parse_message(NULL, text);
    cr_expect_not_null(m, "%s was accepted", text);
    if (m != NULL)
        cr_expect_str_eq(m, message, "%s", text);
    free(m);
}

Test(json_strict, refuses_a_duplicate_key_naming_the_object_s_path)
{
    expect_refused("{\"a\":1,\"a\":2}", "$: duplicate key \"a\"");
    expect_refused("{\"States\":{\"A\":{},\"B\":{},\"A\":{\"Type\":\"Pass\"}}}",
                   "$.States: duplicate key \"A\"");
    expect_refused("{\"x\":[0,{\"y\":{\"k\":1,\"k\":1}}]}", "$.x[1].y: duplicate key \"k\"");
    expect_refused("{\"a b\":{\"c\":1,\"c\":1}}", "$[\"a b\"]: duplicate key \"c\"");
    /* The same name written with an escape is the same name. */
    expect_refused("{\"a\":1,\"\\u0061\":2}", "$: duplicate key \"\\u0061\"");
    expect_refused("{\"\\ud83d\\ude00\":1,\"\xf0\x9f\x98\x80\":2}",
                   "$: duplicate key \"\xf0\x9f\x98\x80\"");
}

Test(json_strict, accepts_the_same_key_in_different_objects)
{
    json_object *v =
        parse("{\"a\":{\"a\":{\"a\":1}},\"b\":[{\"a\":1},{\"a\":2}],\"A\":1,\"ab\":2}");
    json_object_put(v);
    v = parse("[{\"k\":1},{\"k\":1}]");
    json_object_put(v);
}

Test(json_strict, a_named_document_says_where_the_duplicate_is)
{
    char *m = parse_message("def.json", "{\n  \"States\": {\n    \"A\": 1,\n    \"A\": 2\n  }\n}");
    cr_assert_not_null(m);
    cr_expect_str_eq(m, "def.json:4:5: $.States: duplicate key \"A\"");
    free(m);
}

Test(json_strict, refuses_lone_surrogates_and_accepts_a_pair)
{
    expect_refused("\"\\ud800\"", "$: lone surrogate \\ud800 in a string");
    expect_refused("{\"a\":[\"x\\uDC00y\"]}", "$.a[0]: lone surrogate \\uDC00 in a string");
    expect_refused("\"\\ud800\\u0041\"", "$: lone surrogate \\ud800 in a string");
    expect_refused("\"\\udc00\\ud800\"", "$: lone surrogate \\udc00 in a string");
    expect_refused("{\"\\ud800\":1}", "$: lone surrogate \\ud800 in a member name");
    expect_refused("{\"a\\u0000b\":1}", "$: \\u0000 in a member name");
    json_object *v = parse("\"\\ud83d\\ude00\"");
    cr_expect_str_eq(json_object_get_string(v), "\xf0\x9f\x98\x80");
    json_object_put(v);
    /* U+0000 in a string value is kept (json-c holds its length). */
    v = parse("\"a\\u0000b\"");
    cr_expect_eq(json_object_get_string_len(v), 3);
    json_object_put(v);
}

Test(json_strict, refuses_integers_outside_the_64_bit_range)
{
    expect_refused("{\"id\":123456789012345678901234567890}",
                   "$.id: the number 123456789012345678901234567890 is outside the 64-bit "
                   "integer range");
    expect_refused("[9223372036854775808]",
                   "$[0]: the number 9223372036854775808 is outside the 64-bit integer range");
    expect_refused("-9223372036854775809",
                   "$: the number -9223372036854775809 is outside the 64-bit integer range");
    /* Past UINT64_MAX json-c would clamp; between INT64_MAX and UINT64_MAX
     * it holds the number but the rest of swf (equality, paths) reads int64. */
    cr_expect_eq(parse_code("18446744073709551615", 20), SWF_E_INPUT);
    cr_expect_eq(parse_code("18446744073709551616", 20), SWF_E_INPUT);
}

Test(json_strict, keeps_the_64_bit_edges_and_minus_zero)
{
    const char *texts[] = {
        "9223372036854775807", "-9223372036854775808", "-0", "0", "999999999999999999", "-0.0"};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        json_object *v = parse(texts[i]);
        cr_expect_str_eq(swf_json_str(v), texts[i], "%s", texts[i]);
        json_object_put(v);
    }
    json_object *v = parse("-0");
    json_object *zero = parse("0");
    cr_expect(swf_json_equal(v, zero), "-0 equals 0");
    cr_expect(signbit(json_object_get_double(v)), "-0 is a negative zero");
    json_object_put(v);
    json_object_put(zero);
    /* Anywhere in a document, and only where it is a number. */
    v = parse(" [ -0 ,{\"-0\":-0, \"a\" : [\"-0\", -0.0, -0e1, -0 ]}, -0]");
    cr_expect_str_eq(swf_json_str(v), "[-0,{\"-0\":-0,\"a\":[\"-0\",-0.0,-0e1,-0]},-0]");
    json_object_put(v);
}

Test(json_strict, refuses_doubles_it_cannot_hold)
{
    expect_refused("{\"x\":1e400}",
                   "$.x: the number 1e400 is too large for a double (it would read as infinity)");
    expect_refused("[-1.5E8, -1e309]",
                   "$[1]: the number -1e309 is too large for a double (it would read as infinity)");
    expect_refused("1e-400", "$: the number 1e-400 is too small to be kept (it would read as 0)");
    /* A double json-c holds is kept as written, 2^63 and beyond included
     * (it is a double, not an integer). */
    const char *kept[] = {"1e18",
                          "-9.2e18",
                          "0.1000000000000000000001",
                          "0e400",
                          "0.0e-999",
                          "1e-300",
                          "123456789012345678.5",
                          "3.14",
                          "1e20",
                          "1.7976931348623157e308",
                          "100000000000000000000.0"};
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
        json_object *v = parse(kept[i]);
        cr_expect_str_eq(swf_json_str(v), kept[i], "kept as written");
        json_object_put(v);
    }
}

Test(json_strict, a_30_digit_number_in_a_long_document_is_found)
{
    /* About 100 KB of ordinary values, then the bad one. */
    size_t cap = 120 * 1024, o = 0;
    char *text = malloc(cap);
    o += (size_t)snprintf(text + o, cap - o, "{\"items\":[");
    for (int i = 0; o < 100 * 1024; i++)
        o += (size_t)snprintf(text + o, cap - o, "{\"id\":%d,\"name\":\"item %d\",\"v\":%d.5},", i,
                              i, i);
    o += (size_t)snprintf(text + o, cap - o, "{\"id\":123456789012345678901234567890}]}");
    json_object *v = NULL;
    swf_error_t *err = swf_json_parse(text, o, SWF_LIMIT_JSON_BYTES, &v);
    cr_assert_not_null(err);
    cr_expect(strstr(swf_error_message(err), "].id: the number 123456789012345678901234567890") !=
                  NULL,
              "%s", swf_error_message(err));
    swf_error_free(err);
    free(text);
}

/* What swf stored itself: jsonb writes 1e20 as 100000000000000000000, and so
 * does swf for a computed double; read back, it is that double, not json-c's
 * clamped UINT64_MAX. */
Test(json_stored, reads_an_integer_past_int64_as_the_double_it_was)
{
    const char *text = "{\"big\":100000000000000000000,\"neg\":-9223372036854775809,"
                       "\"s\":\"123456789012345678901\",\"max\":9223372036854775807,"
                       "\"f\":100000000000000000000.5,\"e\":1e-5}";
    json_object *v = NULL;
    swf_error_t *err = swf_json_parse_stored(text, strlen(text), SWF_LIMIT_JSON_BYTES, &v);
    cr_assert_null(err, "%s", err ? swf_error_message(err) : "");
    json_object *m;
    cr_assert(swf_json_get(v, "big", &m));
    cr_expect(json_object_is_type(m, json_type_double));
    cr_expect_eq(json_object_get_double(m), 1e20);
    cr_assert(swf_json_get(v, "neg", &m));
    cr_expect_eq(json_object_get_double(m), -9223372036854775809.0);
    cr_assert(swf_json_get(v, "max", &m));
    cr_expect_eq(json_object_get_int64(m), INT64_MAX);
    cr_expect_str_eq(swf_json_get_string(v, "s"), "123456789012345678901");
    cr_expect_str_eq(swf_json_str(v), "{\"big\":100000000000000000000.0,"
                                      "\"neg\":-9223372036854775809.0,"
                                      "\"s\":\"123456789012345678901\",\"max\":9223372036854775807,"
                                      "\"f\":100000000000000000000.5,\"e\":1e-5}");
    json_object_put(v);
    size_t n;
    cr_expect_null(swf_json_stored_widen("[1,2,\"x\"]", 9, &n), "nothing to widen");
}

/* ---- numbers at the edges, put anywhere in a document (tests/fuzz.h) ----
 *
 * Each round puts one number in place of a value of a seed document and
 * parses the text: the number is either refused with the path of the place
 * it was put (the path a lone surrogate at that place is refused with) and
 * its text, or kept byte for byte in what swf writes back (the integer -0
 * included, which json-c would hold as the int64_t 0). */

static const char *const number_edges[] = {
    "123456789012345678901234567890",
    "-123456789012345678901234567890",
    "-0",
    "-0.0",
    "-0e0",
    "0",
    "1e400",
    "-1e400",
    "1e-400",
    "-1e-400",
    "9223372036854775808",
    "9223372036854775807",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616",
    "1e999999999999999999999999",
    "1e-999999999999999999999999",
    "0e999999999999999999999999",
    "1E+308",
    "1.7976931348623157e308",
    "1.7976931348623159e308",
    "4.9e-324",
    "2e-324",
    "1e-300",
    "1e20",
    "123456789012345678.5",
    "0.1000000000000000000000000000000000000000000000000000000000000000000000001",
    "3.14159265358979323846264338327950288419716939937510582097494459230781640628620899",
};

/* A number's text (valid JSON) of random shape: sign, 1-40 digits, a
 * fraction of up to 400 digits, an exponent of up to 25 digits. */
static void number_random(fuzz_t *f, char *out, size_t cap)
{
    size_t o = 0;
    if (fuzz_below(f, 2))
        out[o++] = '-';
    size_t nint = 1 + fuzz_below(f, 40);
    out[o++] = nint == 1 ? (char)('0' + fuzz_below(f, 10)) : (char)('1' + fuzz_below(f, 9));
    for (size_t i = 1; i < nint; i++)
        out[o++] = (char)('0' + fuzz_below(f, 10));
    if (fuzz_below(f, 2)) {
        out[o++] = '.';
        for (size_t i = 1 + fuzz_below(f, fuzz_below(f, 2) ? 20 : 400); i > 0; i--)
            out[o++] = (char)('0' + fuzz_below(f, 10));
    }
    if (fuzz_below(f, 2)) {
        out[o++] = fuzz_below(f, 2) ? 'e' : 'E';
        if (fuzz_below(f, 2))
            out[o++] = fuzz_below(f, 2) ? '-' : '+';
        for (size_t i = 1 + fuzz_below(f, fuzz_below(f, 2) ? 3 : 25); i > 0; i--)
            out[o++] = (char)('0' + fuzz_below(f, 10));
    }
    cr_assert(o < cap);
    out[o] = '\0';
}

/* text with its first "\"@@\"" replaced by what (malloc'd). */
static char *put_at_mark(const char *text, const char *what)
{
    const char *at = strstr(text, "\"@@\"");
    cr_assert_not_null(at);
    size_t head = (size_t)(at - text), wl = strlen(what), tl = strlen(at + 4);
    char *out = malloc(head + wl + tl + 1);
    memcpy(out, text, head);
    memcpy(out + head, what, wl);
    memcpy(out + head + wl, at + 4, tl + 1);
    return out;
}

Test(json_fuzz, numbers_at_the_edges_come_out_as_written_or_are_refused_with_the_path)
{
    static const char *const seeds[] = {
        "{\"order\":{\"id\":1,\"lines\":[{\"sku\":\"a\",\"qty\":2,\"price\":9.99}],\"paid\":true}}",
        "[1,[2,[3,{\"x\":null}]],\"s\",{}]",
        "{\"type\":\"ActivityTaskCompleted\",\"eventId\":7,"
        "\"activityTaskCompletedEventAttributes\":"
        "{\"scheduledEventId\":5,\"result\":{\"total\":12.5,\"ids\":[10,20]}}}",
        "{\"Comment\":\"c\",\"StartAt\":\"A\",\"States\":{\"A\":{\"Type\":\"Wait\",\"Seconds\":1,"
        "\"End\":true}}}",
    };
    size_t nseeds = sizeof(seeds) / sizeof(seeds[0]);
    size_t nedges = sizeof(number_edges) / sizeof(number_edges[0]);
    fuzz_t f = fuzz_start();
    long rounds = fuzz_rounds(5000), kept = 0, refused = 0;
    for (long r = 0; r < rounds; r++) {
        json_object *doc = parse(seeds[fuzz_below(&f, nseeds)]);
        fuzz_slots_t sl = {0};
        fuzz_slots_of(doc, &sl);
        fuzz_slot_t at = sl.v[fuzz_below(&f, sl.n)];
        if (at.key != NULL)
            json_object_object_add(at.in, at.key, json_object_new_string("@@"));
        else
            json_object_array_put_idx(at.in, at.idx, json_object_new_string("@@"));
        free(sl.v);
        char num[1024];
        if (r < (long)nedges)
            snprintf(num, sizeof(num), "%s", number_edges[r]);
        else
            number_random(&f, num, sizeof(num));
        char *marked = strdup(swf_json_str(doc));
        json_object_put(doc);
        char *text = put_at_mark(marked, num);
        char *surrogate = put_at_mark(marked, "\"\\ud800\"");

        json_object *v = NULL;
        swf_error_t *err = swf_json_parse(text, strlen(text), SWF_LIMIT_JSON_BYTES, &v);
        if (err != NULL) {
            /* Refused: at the place it was put, naming it. */
            char *where = parse_message(NULL, surrogate);
            const char *colon = strstr(where, ": lone surrogate");
            cr_assert_not_null(colon, "%s", where);
            char want[1200];
            snprintf(want, sizeof(want), "%.*s: the number %.40s", (int)(colon - where), where,
                     num);
            cr_expect(strncmp(swf_error_message(err), want, strlen(want)) == 0,
                      "%s: refused with \"%s\", not at \"%s\"", num, swf_error_message(err), want);
            cr_expect_eq(swf_error_code(err), SWF_E_INPUT);
            free(where);
            swf_error_free(err);
            refused++;
        } else {
            /* Kept: written back as it was read, and read back the same. */
            const char *out = swf_json_str(v);
            char *want = put_at_mark(marked, num);
            cr_expect_str_eq(out, want, "%s came out as %s", text, out);
            free(want);
            fuzz_assert_json(v, text);
            json_object_put(v);
            kept++;
        }
        free(text);
        free(surrogate);
        free(marked);
    }
    cr_log_info("%ld numbers: %ld kept as written, %ld refused with the path", rounds, kept,
                refused);
    cr_expect_gt(kept, rounds / 10);
    cr_expect_gt(refused, rounds / 10);
}
