/*
 * writer.c - a distributed Map's ResultWriter (writer.h).
 *
 * swf does not reach into S3 itself: the writer is a task like any other,
 * whose worker receives the Map's results (transformed as WriterConfig
 * says) with the writer's Parameters and the manifest's key, and writes
 * them. This file checks a ResultWriter for swf validate, transforms the
 * results (NONE, COMPACT, FLATTEN), builds the task's input and the Map's
 * output AWS gives when a ResultWriter is present:
 * {"MapRunArn", "ResultWriterDetails": {"Bucket", "Key"}}.
 */
#include "decider/asl/writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/json.h"

static const char *config_str(json_object *writer, const char *key)
{
    json_object *config = NULL;
    swf_json_get(writer, "WriterConfig", &config);
    return swf_json_get_string(config, key);
}

bool swf_asl_writer_has_task(json_object *writer)
{
    json_object *v;
    return swf_json_get(writer, "Resource", &v);
}

static bool one_of(const char *s, const char *a, const char *b, const char *c)
{
    return s != NULL &&
           (strcmp(s, a) == 0 || strcmp(s, b) == 0 || (c != NULL && strcmp(s, c) == 0));
}

const char *swf_asl_writer_problem(json_object *writer)
{
    json_object *config = NULL, *v;
    bool has_config = swf_json_get(writer, "WriterConfig", &config);
    bool has_args = swf_json_get(writer, "Parameters", &v) || swf_json_get(writer, "Arguments", &v);
    if (has_config) {
        if (!json_object_is_type(config, json_type_object))
            return "WriterConfig must be an object";
        json_object_object_foreach(config, key, cv)
        {
            const char *t =
                json_object_is_type(cv, json_type_string) ? json_object_get_string(cv) : NULL;
            if (strcmp(key, "Transformation") == 0) {
                if (!one_of(t, "NONE", "COMPACT", "FLATTEN"))
                    return "WriterConfig's Transformation must be NONE, COMPACT or FLATTEN";
            } else if (strcmp(key, "OutputType") == 0) {
                if (!one_of(t, "JSON", "JSONL", NULL))
                    return "WriterConfig's OutputType must be JSON or JSONL";
            } else {
                return "WriterConfig takes Transformation and OutputType";
            }
        }
    }
    if (!swf_asl_writer_has_task(writer)) {
        if (!has_config)
            return "ResultWriter needs a Resource with Parameters (the task that writes the "
                   "results), or WriterConfig, or both";
        if (has_args)
            return "ResultWriter's Parameters need a Resource (the task that writes the results)";
        if (one_of(config_str(writer, "OutputType"), "JSONL", "JSONL", NULL))
            return "WriterConfig's OutputType JSONL formats the files a ResultWriter's task "
                   "writes; without a Resource the Map's output is its results as a JSON array";
        return NULL;
    }
    if (!has_args)
        return "ResultWriter's Resource needs Parameters (Arguments in JSONata) naming the Bucket "
               "(and Prefix) to write to";
    return NULL;
}

static json_object *jtext(json_object *v)
{
    return json_object_new_string(swf_json_str(v));
}

json_object *swf_asl_writer_results(json_object *writer, json_object *const *results,
                                    json_object *items, const unsigned char *failed, size_t n)
{
    const char *t = config_str(writer, "Transformation");
    if (t == NULL)
        t = swf_asl_writer_has_task(writer) ? "NONE" : "COMPACT";
    json_object *out = json_object_new_array_ext((int)n);
    for (size_t i = 0; i < n; i++) {
        json_object *r = results[i];
        bool bad = failed != NULL && failed[i];
        if (strcmp(t, "NONE") == 0) {
            json_object *o = json_object_new_object();
            swf_json_add(o, "Status", json_object_new_string(bad ? "FAILED" : "SUCCEEDED"));
            swf_json_add(o, "Input", jtext(json_object_array_get_idx(items, i)));
            if (bad) {
                json_object *v = NULL;
                swf_json_get(r, "Error", &v);
                swf_json_add(o, "Error", swf_json_ref(v));
                v = NULL;
                swf_json_get(r, "Cause", &v);
                swf_json_add(o, "Cause", swf_json_ref(v));
            } else {
                swf_json_add(o, "Output", jtext(r));
            }
            json_object_array_add(out, o);
        } else if (strcmp(t, "FLATTEN") == 0 && !bad && json_object_is_type(r, json_type_array)) {
            for (size_t k = 0; k < json_object_array_length(r); k++)
                json_object_array_add(out, swf_json_ref(json_object_array_get_idx(r, k)));
        } else {
            json_object_array_add(out, swf_json_ref(r));
        }
    }
    return out;
}

swf_error_t *swf_asl_writer_task(json_object *writer, json_object *args, const char *run_id,
                                 const char *map_run_arn, json_object *results, json_object **input,
                                 json_object **output)
{
    *input = *output = NULL;
    if (!json_object_is_type(args, json_type_object))
        return swf_error_states(SWF_ASL_ERR_WRITER,
                                "the ResultWriter's Parameters are %s, not an object naming "
                                "the Bucket",
                                swf_json_type_name(args));
    const char *bucket = swf_json_get_string(args, "Bucket");
    json_object *prefix_v = NULL;
    if (bucket == NULL || bucket[0] == '\0')
        return swf_error_states(SWF_ASL_ERR_WRITER,
                                "the ResultWriter's Parameters need a Bucket (a non-empty string)");
    if (swf_json_get(args, "Prefix", &prefix_v) && !json_object_is_type(prefix_v, json_type_string))
        return swf_error_states(SWF_ASL_ERR_WRITER, "the ResultWriter's Prefix is %s, not a string",
                                swf_json_type_name(prefix_v));
    const char *prefix = prefix_v ? json_object_get_string(prefix_v) : "";
    size_t plen = strlen(prefix);
    bool slash = plen > 0 && prefix[plen - 1] != '/';
    size_t klen = plen + strlen(run_id) + 32;
    char *key = malloc(klen);
    if (key == NULL)
        abort();
    snprintf(key, klen, "%s%s%s/manifest.json", prefix, slash ? "/" : "", run_id);

    json_object *in = json_object_new_object();
    /* swf's fields take the place of any of the same name. */
    static const char *const ours[] = {"Key", "MapRunArn", "OutputType", "Transformation",
                                       "Results"};
    json_object_object_foreach(args, k, v)
    {
        bool mine = false;
        for (size_t i = 0; i < sizeof ours / sizeof ours[0]; i++)
            mine = mine || strcmp(k, ours[i]) == 0;
        if (!mine)
            json_object_object_add(in, k, swf_json_ref(v));
    }
    const char *otype = config_str(writer, "OutputType");
    const char *t = config_str(writer, "Transformation");
    swf_json_add(in, "Key", json_object_new_string(key));
    swf_json_add(in, "MapRunArn", json_object_new_string(map_run_arn));
    swf_json_add(in, "OutputType", json_object_new_string(otype ? otype : "JSON"));
    swf_json_add(in, "Transformation", json_object_new_string(t ? t : "NONE"));
    swf_json_add(in, "Results", swf_json_ref(results));

    json_object *details = json_object_new_object();
    swf_json_add(details, "Bucket", json_object_new_string(bucket));
    swf_json_add(details, "Key", json_object_new_string(key));
    json_object *out = json_object_new_object();
    swf_json_add(out, "MapRunArn", json_object_new_string(map_run_arn));
    swf_json_add(out, "ResultWriterDetails", details);
    free(key);
    *input = in;
    *output = out;
    return NULL;
}
