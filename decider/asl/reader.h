/*
 * reader.h - a distributed Map's ItemReader: from what its task returned to
 * the Map's items, as ReaderConfig says (InputType JSON, JSONL or CSV with
 * CSVHeaderLocation FIRST_ROW or GIVEN and CSVHeaders, CSVDelimiter,
 * MaxItems). https://docs.aws.amazon.com/step-functions/latest/dg/input-output-itemreader.html
 *
 * What the task returns: the object's content as a string, or an object with
 * that string in "Body" (the shape of S3's GetObject); for InputType JSON
 * the parsed array itself; for a reader without InputType (listObjectsV2)
 * the array of items, or an object with it in "Contents".
 *
 * Ownership: *items is a new reference; the arguments are borrowed.
 */
#ifndef SWF_DECIDER_ASL_READER_H
#define SWF_DECIDER_ASL_READER_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "protocol/error.h"

/* The error a reader's content that cannot be read fails the Map with. */
#define SWF_ASL_ERR_READER "States.ItemReaderFailed"

/* Turns a reader task's result into the Map's items (at most `limit`). A
 * content that does not read is an SWF_E_STATES error named
 * States.ItemReaderFailed saying where. */
swf_error_t *swf_asl_reader_items(json_object *reader, json_object *result, size_t limit,
                                  json_object **items);

/* InputType MANIFEST (an S3 inventory): the reader's task returns the
 * inventory's manifest.json (its text, or an object with it in "Body", or the
 * object itself); then each data file is read by a task of its own on the
 * same task list, whose worker returns the file's content decompressed (S3
 * writes inventory files gzip-compressed). Each CSV row, headed by the
 * manifest's fileSchema, is an item: {"Bucket", "Key", ...} of strings. */
bool swf_asl_reader_is_manifest(json_object *reader);

/* The manifest's data files as the inputs of their tasks ({"Bucket", "Key"}:
 * the destinationBucket's name and each files[].key) and its fileSchema's
 * columns. A manifest that is not a CSV inventory's fails with
 * States.ItemReaderFailed saying why. */
swf_error_t *swf_asl_reader_manifest(json_object *result, json_object **files,
                                     json_object **schema);

/* Appends one inventory file's rows (its task's result) to items, until
 * items holds `limit`. */
swf_error_t *swf_asl_reader_inventory_rows(json_object *schema, json_object *result, size_t limit,
                                           json_object *items);

/* Checks an ItemReader's ReaderConfig for swf validate: NULL when good, else a
 * message (static) saying what is wrong. */
const char *swf_asl_reader_config_problem(json_object *config);

#endif
