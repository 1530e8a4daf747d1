/*
 * test_reader.c - proves decider/asl/reader.c: CSV (quoting, header row or
 * given headers, delimiters), JSONL, JSON, MaxItems, and that content that
 * does not read fails with States.ItemReaderFailed saying where.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "decider/asl/reader.h"
#include "protocol/json.h"

static json_object *parse(const char *text)
{
    json_object *v = NULL;
    swf_error_t *err = swf_json_parse(text, strlen(text), 1 << 20, &v);
    cr_assert_null(err, "bad test JSON: %s", swf_error_message(err));
    return v;
}

static void expect_items(const char *reader, const char *result, const char *want)
{
    json_object *r = parse(reader), *res = parse(result), *w = parse(want), *items = NULL;
    swf_error_t *err = swf_asl_reader_items(r, res, 1000, &items);
    cr_expect_null(err, "%s", err ? swf_error_message(err) : "");
    if (err == NULL)
        cr_expect(json_object_equal(items, w), "got %s, want %s", swf_json_str(items), want);
    swf_error_free(err);
    json_object_put(items);
    json_object_put(r);
    json_object_put(res);
    json_object_put(w);
}

static void expect_failure(const char *reader, const char *result, const char *why)
{
    json_object *r = parse(reader), *res = parse(result), *items = NULL;
    swf_error_t *err = swf_asl_reader_items(r, res, 1000, &items);
    cr_expect_not_null(err);
    cr_expect_null(items);
    if (err != NULL) {
        cr_expect_str_eq(swf_error_name(err), "States.ItemReaderFailed");
        cr_expect(strstr(swf_error_message(err), why) != NULL, "%s", swf_error_message(err));
    }
    swf_error_free(err);
    json_object_put(r);
    json_object_put(res);
}

#define CSV "{\"ReaderConfig\":{\"InputType\":\"CSV\"}}"

Test(reader, csv_rows_are_objects_keyed_by_the_header_row)
{
    expect_items(CSV, "\"a,b\\r\\n1,\\\"x, \\\"\\\"y\\\"\\\"\\\"\\r\\n2,\\n\"",
                 "[{\"a\":\"1\",\"b\":\"x, \\\"y\\\"\"},{\"a\":\"2\",\"b\":\"\"}]");
}

Test(reader, given_headers_make_every_row_data)
{
    expect_items("{\"ReaderConfig\":{\"InputType\":\"CSV\",\"CSVHeaderLocation\":\"GIVEN\","
                 "\"CSVHeaders\":[\"k\",\"v\"],\"CSVDelimiter\":\"TAB\"}}",
                 "{\"Body\":\"a\\t1\\nb\\t2\"}",
                 "[{\"k\":\"a\",\"v\":\"1\"},{\"k\":\"b\",\"v\":\"2\"}]");
}

Test(reader, jsonl_json_and_max_items)
{
    expect_items("{\"ReaderConfig\":{\"InputType\":\"JSONL\",\"MaxItems\":2}}",
                 "\"1\\n\\n\\\"two\\\"\\n[3]\\n\"", "[1,\"two\"]");
    expect_items("{\"ReaderConfig\":{\"InputType\":\"JSON\"}}", "\"[1,2]\"", "[1,2]");
    expect_items("{\"ReaderConfig\":{\"InputType\":\"JSON\"}}", "[1,2]", "[1,2]");
    expect_items("{}", "{\"Contents\":[{\"Key\":\"a\"}]}", "[{\"Key\":\"a\"}]");
}

Test(reader, content_that_does_not_read_fails_saying_where)
{
    expect_failure(CSV, "\"a,b\\n1\\n\"", "CSV row 2 has 1 fields, not 2");
    expect_failure(CSV, "\"a\\n\\\"open\\n\"", "CSV row 2: a quoted field is not closed");
    expect_failure("{\"ReaderConfig\":{\"InputType\":\"JSONL\"}}", "\"1\\n{\\n\"",
                   "JSONL line 2 is not JSON");
    expect_failure("{\"ReaderConfig\":{\"InputType\":\"JSON\"}}", "\"{}\"", "not a JSON array");
    expect_failure(CSV, "42", "returned number");
}

Test(reader, reader_config_problems_are_named)
{
    json_object *c = parse("{\"InputType\":\"MANIFEST\"}");
    cr_expect_null(swf_asl_reader_config_problem(c));
    json_object_put(c);
    c = parse("{\"InputType\":\"PARQUET\"}");
    cr_expect(strstr(swf_asl_reader_config_problem(c), "JSON, JSONL, CSV or MANIFEST") != NULL);
    json_object_put(c);
    c = parse("{\"MaxItems\":1,\"MaxItemsPath\":\"$.n\"}");
    cr_expect(strstr(swf_asl_reader_config_problem(c), "mutually exclusive") != NULL);
    json_object_put(c);
    c = parse("{\"InputType\":null}");
    cr_expect_not_null(swf_asl_reader_config_problem(c));
    json_object_put(c);
    c = parse("{\"InputType\":\"CSV\",\"CSVHeaders\":[\"a\"]}");
    cr_expect(strstr(swf_asl_reader_config_problem(c), "needs CSVHeaderLocation GIVEN") != NULL);
    json_object_put(c);
    cr_expect_null(swf_asl_reader_config_problem(NULL));
}

Test(reader, an_inventory_manifest_names_its_files_and_their_rows_are_the_items)
{
    json_object *m = parse(
        "{\"Body\":\"{\\\"destinationBucket\\\":\\\"arn:aws:s3:::inv\\\",\\\"fileFormat\\\":"
        "\\\"CSV\\\",\\\"fileSchema\\\":\\\"Bucket, Key ,Size\\\",\\\"files\\\":[{\\\"key\\\":"
        "\\\"d/a.csv.gz\\\"},{\\\"key\\\":\\\"d/b.csv.gz\\\"}]}\"}");
    json_object *files = NULL, *schema = NULL;
    swf_error_t *err = swf_asl_reader_manifest(m, &files, &schema);
    cr_assert_null(err, "%s", swf_error_message(err));
    json_object *want = parse("[{\"Bucket\":\"inv\",\"Key\":\"d/a.csv.gz\"},"
                              "{\"Bucket\":\"inv\",\"Key\":\"d/b.csv.gz\"}]");
    cr_expect(json_object_equal(files, want), "%s", swf_json_str(files));
    json_object_put(want);
    want = parse("[\"Bucket\",\"Key\",\"Size\"]");
    cr_expect(json_object_equal(schema, want), "%s", swf_json_str(schema));
    json_object_put(want);
    /* Rows accumulate across files, up to the limit. */
    json_object *items = json_object_new_array();
    json_object *one =
        parse("\"\\\"b\\\",\\\"k1\\\",\\\"1\\\"\\n\\\"b\\\",\\\"k2\\\",\\\"2\\\"\\n\"");
    cr_assert_null(swf_asl_reader_inventory_rows(schema, one, 3, items));
    cr_assert_null(swf_asl_reader_inventory_rows(schema, one, 3, items));
    want = parse("[{\"Bucket\":\"b\",\"Key\":\"k1\",\"Size\":\"1\"},"
                 "{\"Bucket\":\"b\",\"Key\":\"k2\",\"Size\":\"2\"},"
                 "{\"Bucket\":\"b\",\"Key\":\"k1\",\"Size\":\"1\"}]");
    cr_expect(json_object_equal(items, want), "%s", swf_json_str(items));
    json_object_put(want);
    json_object *bad = parse("\"\\\"b\\\",\\\"k1\\\"\\n\"");
    err = swf_asl_reader_inventory_rows(schema, bad, 10, items);
    cr_expect(err != NULL && strstr(swf_error_message(err), "has 2 fields, not 3") != NULL);
    swf_error_free(err);
    err = swf_asl_reader_inventory_rows(schema, schema, 10, items);
    cr_expect(err != NULL && strstr(swf_error_message(err), "returned array") != NULL);
    swf_error_free(err);
    json_object_put(bad);
    json_object_put(one);
    json_object_put(items);
    json_object_put(files);
    json_object_put(schema);
    json_object_put(m);
}

Test(reader, a_manifest_that_is_not_a_csv_inventory_is_named)
{
    const char *bad[][2] = {
        {"\"{\"", "not JSON"},
        {"[]", "not an object"},
        {"{\"fileFormat\":\"ORC\"}", "fileFormat is ORC"},
        {"{\"fileFormat\":\"CSV\",\"destinationBucket\":\"inv\"}", "not a bucket's ARN"},
        {"{\"fileFormat\":\"CSV\",\"destinationBucket\":\"arn:aws:s3:::i\"}", "no fileSchema"},
        {"{\"fileFormat\":\"CSV\",\"destinationBucket\":\"arn:aws:s3:::i\",\"fileSchema\":\"Key\"}",
         "no files array"},
        {"{\"fileFormat\":\"CSV\",\"destinationBucket\":\"arn:aws:s3:::i\",\"fileSchema\":\"Key\","
         "\"files\":[{}]}",
         "files[0] has no key"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_object *m = parse(bad[i][0]), *files = NULL, *schema = NULL;
        swf_error_t *err = swf_asl_reader_manifest(m, &files, &schema);
        cr_expect(err != NULL && strstr(swf_error_message(err), bad[i][1]) != NULL, "%s: %s",
                  bad[i][0], err ? swf_error_message(err) : "(read)");
        cr_expect(err == NULL || strcmp(swf_error_name(err), SWF_ASL_ERR_READER) == 0);
        cr_expect_null(files);
        swf_error_free(err);
        json_object_put(m);
    }
}
