/*
 * writer.h - a distributed Map's ResultWriter: WriterConfig's Transformation
 * of the Map's results, the input of the writer's task, and the Map's output
 * once the task has written them.
 * https://docs.aws.amazon.com/step-functions/latest/dg/input-output-resultwriter.html
 *
 * swf does not write to S3 itself: the writer is a task like any other,
 * served by a worker on the task list its Resource maps to (resource.h;
 * arn:aws:states:::s3:putObject is served on s3.putObject). Its input is the
 * writer's Parameters (JSONPath) or Arguments (JSONata), an object naming
 * at least a Bucket, with swf's fields added: "Key" (where the manifest
 * goes: PREFIX/RUN/manifest.json), "MapRunArn", "OutputType",
 * "Transformation" and "Results". The Map's output is then AWS's:
 * {"MapRunArn", "ResultWriterDetails": {"Bucket", "Key"}}. A ResultWriter
 * with only WriterConfig writes nothing: the Map's output is its results,
 * transformed.
 *
 * Ownership: every json_object ** out is a new reference; the arguments are
 * borrowed.
 */
#ifndef SWF_DECIDER_ASL_WRITER_H
#define SWF_DECIDER_ASL_WRITER_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "protocol/error.h"

/* The error a writer whose task fails, or whose Parameters do not name a
 * Bucket, fails the Map with. */
#define SWF_ASL_ERR_WRITER "States.ResultWriterFailed"

/* Checks a ResultWriter for swf validate (its Parameters or Arguments are
 * checked as templates by the caller): NULL when good, else a message
 * (static) saying what is wrong. */
const char *swf_asl_writer_problem(json_object *writer);

/* Whether the writer has a task (a Resource): false for WriterConfig alone. */
bool swf_asl_writer_has_task(json_object *writer);

/* The Map's n results transformed as WriterConfig's Transformation says
 * (NONE, the default with a Resource: one {"Status", "Input", "Output"} or
 * {"Status", "Input", "Error", "Cause"} per iteration, Input and Output as
 * JSON text; COMPACT, the default without: the results as they are; FLATTEN:
 * COMPACT with each array result's items in its place). items are the
 * iterations' inputs; failed[i] marks the iterations that failed (their
 * result is {"Error", "Cause"}). */
json_object *swf_asl_writer_results(json_object *writer, json_object *const *results,
                                    json_object *items, const unsigned char *failed, size_t n);

/* The writer task's input (args, the writer's evaluated Parameters or
 * Arguments, with swf's fields) and the Map's output once it has written
 * them. run_id names this run of the Map (unique in its execution);
 * map_run_arn is its ARN. Parameters that are not an object with a string
 * Bucket (and a string Prefix, if any) fail with States.ResultWriterFailed. */
swf_error_t *swf_asl_writer_task(json_object *writer, json_object *args, const char *run_id,
                                 const char *map_run_arn, json_object *results, json_object **input,
                                 json_object **output);

#endif
