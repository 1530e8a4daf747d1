/*
 * test_writer.c - proves decider/asl/writer.c: what a ResultWriter's task
 * receives (the writer's Parameters with Key, MapRunArn, OutputType,
 * Transformation and Results), the Map's output AWS gives
 * ({"MapRunArn", "ResultWriterDetails": {"Bucket", "Key"}}), WriterConfig's
 * transformations, and the checks swf validate makes.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "decider/asl/writer.h"
#include "protocol/json.h"

static json_object *parse(const char *text)
{
    json_object *v = NULL;
    swf_error_t *err = swf_json_parse(text, strlen(text), 1 << 20, &v);
    cr_assert_null(err, "bad test JSON: %s", swf_error_message(err));
    return v;
}

static void expect_json(json_object *got, const char *want)
{
    json_object *w = parse(want);
    cr_expect(json_object_equal(got, w), "got %s, want %s", swf_json_str(got), want);
    json_object_put(w);
}

Test(writer, the_task_gets_the_parameters_and_the_results_and_the_map_outputs_the_manifest)
{
    json_object *w = parse("{\"Resource\":\"arn:aws:states:::s3:putObject\",\"Parameters\":{}}");
    json_object *args = parse("{\"Bucket\":\"b\",\"Prefix\":\"out\",\"Results\":\"mine\"}");
    json_object *results = parse("[1,2]"), *in = NULL, *out = NULL;
    swf_error_t *err = swf_asl_writer_task(w, args, "run-7", "arn:x", results, &in, &out);
    cr_assert_null(err);
    expect_json(in, "{\"Bucket\":\"b\",\"Prefix\":\"out\",\"Key\":\"out/run-7/manifest.json\","
                    "\"MapRunArn\":\"arn:x\",\"OutputType\":\"JSON\",\"Transformation\":\"NONE\","
                    "\"Results\":[1,2]}");
    expect_json(out, "{\"MapRunArn\":\"arn:x\",\"ResultWriterDetails\":{\"Bucket\":\"b\","
                     "\"Key\":\"out/run-7/manifest.json\"}}");
    json_object_put(in);
    json_object_put(out);
    json_object_put(args);
    /* No Prefix: the key starts with the run; one ending in '/' gets no second. */
    args = parse("{\"Bucket\":\"b\",\"Prefix\":\"a/\"}");
    err = swf_asl_writer_task(w, args, "r", "arn:x", results, &in, &out);
    cr_assert_null(err);
    cr_expect_str_eq(swf_json_get_string(in, "Key"), "a/r/manifest.json");
    json_object_put(in);
    json_object_put(out);
    json_object_put(args);
    json_object_put(results);
    json_object_put(w);
}

Test(writer, parameters_without_a_bucket_fail_with_result_writer_failed)
{
    json_object *w = parse("{\"Resource\":\"arn:aws:states:::s3:putObject\",\"Parameters\":{}}");
    const char *bad[] = {"{\"Prefix\":\"p\"}", "{\"Bucket\":\"\"}",
                         "{\"Bucket\":\"b\",\"Prefix\":1}", "[]"};
    for (size_t i = 0; i < 4; i++) {
        json_object *args = parse(bad[i]), *in = NULL, *out = NULL, *r = parse("[]");
        swf_error_t *err = swf_asl_writer_task(w, args, "r", "arn", r, &in, &out);
        cr_expect_not_null(err, "%s", bad[i]);
        cr_expect_null(in);
        if (err != NULL)
            cr_expect_str_eq(swf_error_name(err), SWF_ASL_ERR_WRITER);
        swf_error_free(err);
        json_object_put(args);
        json_object_put(r);
    }
    json_object_put(w);
}

static void expect_transformed(const char *writer, const char *want)
{
    json_object *w = parse(writer), *items = parse("[{\"i\":0},{\"i\":1},{\"i\":2}]");
    json_object *r[3] = {parse("[1,[2]]"), parse("{\"Error\":\"E\",\"Cause\":\"C\"}"),
                         parse("\"s\"")};
    unsigned char failed[3] = {0, 1, 0};
    json_object *got = swf_asl_writer_results(w, r, items, failed, 3);
    expect_json(got, want);
    json_object_put(got);
    for (size_t i = 0; i < 3; i++)
        json_object_put(r[i]);
    json_object_put(items);
    json_object_put(w);
}

Test(writer, transformations_are_none_compact_and_flatten)
{
    const char *none =
        "[{\"Status\":\"SUCCEEDED\",\"Input\":\"{\\\"i\\\":0}\",\"Output\":\"[1,[2]]\"},"
        "{\"Status\":\"FAILED\",\"Input\":\"{\\\"i\\\":1}\",\"Error\":\"E\","
        "\"Cause\":\"C\"},"
        "{\"Status\":\"SUCCEEDED\",\"Input\":\"{\\\"i\\\":2}\",\"Output\":\"\\\"s\\\"\"}]";
    /* NONE is the default with a Resource, COMPACT without. */
    expect_transformed("{\"Resource\":\"r\",\"Parameters\":{}}", none);
    expect_transformed("{\"WriterConfig\":{\"Transformation\":\"NONE\"}}", none);
    expect_transformed("{\"WriterConfig\":{\"OutputType\":\"JSON\"}}",
                       "[[1,[2]],{\"Error\":\"E\",\"Cause\":\"C\"},\"s\"]");
    /* FLATTEN: one level; a failed iteration's result stays as it is. */
    expect_transformed("{\"WriterConfig\":{\"Transformation\":\"FLATTEN\"}}",
                       "[1,[2],{\"Error\":\"E\",\"Cause\":\"C\"},\"s\"]");
}

Test(writer, problems_are_named)
{
    const char *bad[][2] = {
        {"{}", "needs a Resource"},
        {"{\"Resource\":\"r\"}", "needs Parameters"},
        {"{\"Parameters\":{},\"WriterConfig\":{}}", "need a Resource"},
        {"{\"WriterConfig\":[]}", "must be an object"},
        {"{\"WriterConfig\":{\"Transformation\":\"X\"}}", "NONE, COMPACT or FLATTEN"},
        {"{\"WriterConfig\":{\"OutputType\":\"CSV\"}}", "JSON or JSONL"},
        {"{\"WriterConfig\":{\"Other\":1}}", "takes Transformation and OutputType"},
        {"{\"WriterConfig\":{\"OutputType\":\"JSONL\"}}", "without a Resource"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_object *w = parse(bad[i][0]);
        const char *why = swf_asl_writer_problem(w);
        cr_expect(why != NULL && strstr(why, bad[i][1]) != NULL, "%s: %s", bad[i][0],
                  why ? why : "(valid)");
        json_object_put(w);
    }
    const char *good[] = {"{\"WriterConfig\":{\"Transformation\":\"FLATTEN\"}}",
                          "{\"Resource\":\"r\",\"Parameters\":{\"Bucket\":\"b\"}}",
                          "{\"Resource\":\"r\",\"Arguments\":{},\"WriterConfig\":{\"OutputType\":"
                          "\"JSONL\",\"Transformation\":\"COMPACT\"}}"};
    for (size_t i = 0; i < 3; i++) {
        json_object *w = parse(good[i]);
        cr_expect_null(swf_asl_writer_problem(w), "%s", good[i]);
        json_object_put(w);
    }
}
