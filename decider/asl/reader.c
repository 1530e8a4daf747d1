/*
 * reader.c - a distributed Map's ItemReader content to items (reader.h).
 *
 * swf does not reach into S3 itself: the reader is a task like any other,
 * served by a worker on the task list its Resource maps to (resource.h),
 * which returns the object's content. This file applies ReaderConfig to that
 * content: JSON (an array), JSONL (one JSON value per line) or CSV (RFC 4180:
 * quoted fields with "" inside, CRLF or LF rows), each CSV row an object of
 * strings keyed by the header row or CSVHeaders; then MaxItems.
 */
#include "decider/asl/reader.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/json.h"
#include "protocol/limits.h"

static const char *config_str(json_object *config, const char *key, const char *dflt)
{
    const char *s = swf_json_get_string(config, key);
    return s != NULL ? s : dflt;
}

const char *swf_asl_reader_config_problem(json_object *config)
{
    if (config == NULL)
        return NULL;
    if (!json_object_is_type(config, json_type_object))
        return "ReaderConfig must be an object";
    json_object_object_foreach(config, key, v)
    {
        const char *t = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
        if (strcmp(key, "InputType") == 0) {
            if (strcmp(t, "JSON") != 0 && strcmp(t, "JSONL") != 0 && strcmp(t, "CSV") != 0 &&
                strcmp(t, "MANIFEST") != 0)
                return "InputType must be JSON, JSONL, CSV or MANIFEST";
        } else if (strcmp(key, "CSVHeaderLocation") == 0) {
            if (strcmp(t, "FIRST_ROW") != 0 && strcmp(t, "GIVEN") != 0)
                return "CSVHeaderLocation must be FIRST_ROW or GIVEN";
        } else if (strcmp(key, "CSVHeaders") == 0) {
            if (!json_object_is_type(v, json_type_array) || json_object_array_length(v) == 0)
                return "CSVHeaders must be a non-empty array of strings";
            for (size_t i = 0; i < json_object_array_length(v); i++)
                if (!json_object_is_type(json_object_array_get_idx(v, i), json_type_string))
                    return "CSVHeaders must be a non-empty array of strings";
        } else if (strcmp(key, "CSVDelimiter") == 0) {
            const char *ok[] = {"COMMA", "PIPE", "SEMICOLON", "SPACE", "TAB"};
            bool found = false;
            for (size_t i = 0; i < 5; i++)
                found = found || strcmp(t, ok[i]) == 0;
            if (!found)
                return "CSVDelimiter must be COMMA, PIPE, SEMICOLON, SPACE or TAB";
        } else if (strcmp(key, "MaxItems") == 0) {
            bool expr = t[0] == '{' && t[1] == '%'; /* JSONata's; validate checks it */
            if (!expr && (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0 ||
                          json_object_get_int64(v) > 100000000))
                return "MaxItems must be an integer from 0 to 100000000 (in JSONata, or an "
                       "expression {% ... %})";
        } else if (strcmp(key, "MaxItemsPath") == 0) {
            if (!json_object_is_type(v, json_type_string))
                return "MaxItemsPath must be a reference path (a string)";
        } else {
            return "ReaderConfig takes InputType, CSVHeaderLocation, CSVHeaders, CSVDelimiter, "
                   "MaxItems and MaxItemsPath";
        }
    }
    if (json_object_object_get_ex(config, "MaxItems", NULL) &&
        json_object_object_get_ex(config, "MaxItemsPath", NULL))
        return "MaxItems and MaxItemsPath are mutually exclusive";
    if (strcmp(config_str(config, "InputType", ""), "MANIFEST") == 0 &&
        (json_object_object_get_ex(config, "CSVHeaderLocation", NULL) ||
         json_object_object_get_ex(config, "CSVHeaders", NULL) ||
         json_object_object_get_ex(config, "CSVDelimiter", NULL)))
        return "InputType MANIFEST takes no CSV settings: an inventory's columns are its "
               "manifest's fileSchema";
    const char *loc = config_str(config, "CSVHeaderLocation", "FIRST_ROW");
    bool given = strcmp(loc, "GIVEN") == 0;
    if (given != json_object_object_get_ex(config, "CSVHeaders", NULL))
        return given ? "CSVHeaderLocation GIVEN needs CSVHeaders"
                     : "CSVHeaders needs CSVHeaderLocation GIVEN";
    return NULL;
}

static swf_error_t *fail(const char *fmt, size_t n)
{
    return swf_error_states(SWF_ASL_ERR_READER, fmt, n);
}

/* Reads one CSV row from s[*pos..len): its fields into a new array. */
static swf_error_t *csv_row(const char *s, size_t len, size_t *pos, char delim, size_t row,
                            json_object **out)
{
    json_object *fields = json_object_new_array();
    char *buf = malloc(len - *pos + 1);
    if (fields == NULL || buf == NULL)
        abort();
    size_t i = *pos;
    for (;;) {
        size_t n = 0;
        if (i < len && s[i] == '"') {
            for (i++;; i++) {
                if (i >= len) {
                    free(buf);
                    json_object_put(fields);
                    return fail("CSV row %zu: a quoted field is not closed", row);
                }
                if (s[i] == '"' && i + 1 < len && s[i + 1] == '"')
                    buf[n++] = s[i++];
                else if (s[i] == '"')
                    break;
                else
                    buf[n++] = s[i];
            }
            i++; /* the closing quote */
            if (i < len && s[i] != delim && s[i] != '\n' && s[i] != '\r') {
                free(buf);
                json_object_put(fields);
                return fail("CSV row %zu: text after a quoted field", row);
            }
        } else {
            while (i < len && s[i] != delim && s[i] != '\n' && s[i] != '\r')
                buf[n++] = s[i++];
        }
        json_object_array_add(fields, json_object_new_string_len(buf, (int)n));
        if (i < len && s[i] == delim) {
            i++;
            continue;
        }
        break;
    }
    if (i < len && s[i] == '\r')
        i++;
    if (i < len && s[i] == '\n')
        i++;
    *pos = i;
    free(buf);
    *out = fields;
    return NULL;
}

static char csv_delimiter(json_object *config)
{
    const char *d = config_str(config, "CSVDelimiter", "COMMA");
    return strcmp(d, "PIPE") == 0        ? '|'
           : strcmp(d, "SEMICOLON") == 0 ? ';'
           : strcmp(d, "SPACE") == 0     ? ' '
           : strcmp(d, "TAB") == 0       ? '\t'
                                         : ',';
}

static swf_error_t *read_csv(json_object *config, const char *s, size_t len, size_t limit,
                             json_object *items)
{
    char delim = csv_delimiter(config);
    json_object *headers = NULL, *given;
    swf_error_t *err = NULL;
    size_t pos = 0, row = 0;
    if (swf_json_get(config, "CSVHeaders", &given))
        headers = json_object_get(given);
    while (err == NULL && pos < len && json_object_array_length(items) < limit) {
        json_object *fields = NULL;
        row++;
        if ((err = csv_row(s, len, &pos, delim, row, &fields)) != NULL)
            break;
        if (headers == NULL) {
            headers = fields;
            continue;
        }
        size_t nf = json_object_array_length(fields), nh = json_object_array_length(headers);
        if (nf != nh) {
            err = swf_error_states(SWF_ASL_ERR_READER, "CSV row %zu has %zu fields, not %zu", row,
                                   nf, nh);
        } else {
            json_object *o = json_object_new_object();
            for (size_t k = 0; k < nh; k++)
                json_object_object_add(
                    o, json_object_get_string(json_object_array_get_idx(headers, k)),
                    json_object_get(json_object_array_get_idx(fields, k)));
            json_object_array_add(items, o);
        }
        json_object_put(fields);
    }
    json_object_put(headers);
    return err;
}

static swf_error_t *read_jsonl(const char *s, size_t len, size_t limit, json_object *items)
{
    size_t pos = 0, line = 0;
    while (pos < len && json_object_array_length(items) < limit) {
        const char *nl = memchr(s + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - s) : len;
        line++;
        size_t a = pos, b = end;
        while (a < b && strchr(" \t\r", s[a]))
            a++;
        while (b > a && strchr(" \t\r", s[b - 1]))
            b--;
        if (b > a) {
            json_object *v = NULL;
            swf_error_t *err = swf_json_parse(s + a, b - a, SWF_LIMIT_PAYLOAD_BYTES, &v);
            if (err != NULL) {
                swf_error_free(err);
                return fail("JSONL line %zu is not JSON", line);
            }
            json_object_array_add(items, v);
        }
        pos = end + 1;
    }
    return NULL;
}

/* Takes the first `limit` items of an array into items. */
static void take(json_object *arr, size_t limit, json_object *items)
{
    for (size_t i = 0; i < json_object_array_length(arr) && i < limit; i++)
        json_object_array_add(items, json_object_get(json_object_array_get_idx(arr, i)));
}

swf_error_t *swf_asl_reader_items(json_object *reader, json_object *result, size_t limit,
                                  json_object **items)
{
    json_object *config = NULL, *v;
    swf_json_get(reader, "ReaderConfig", &config);
    if (swf_json_get(config, "MaxItems", &v) && json_object_is_type(v, json_type_int) &&
        json_object_get_int64(v) > 0 && (size_t)json_object_get_int64(v) < limit)
        limit = (size_t)json_object_get_int64(v);
    const char *type = swf_json_get_string(config, "InputType");
    json_object *content = result;
    if (json_object_is_type(result, json_type_object) &&
        (swf_json_get(result, "Body", &v) || swf_json_get(result, "Contents", &v)))
        content = v;
    *items = json_object_new_array();
    swf_error_t *err = NULL;
    if (json_object_is_type(content, json_type_array) &&
        (type == NULL || strcmp(type, "JSON") == 0)) {
        take(content, limit, *items);
    } else if (!json_object_is_type(content, json_type_string)) {
        err = swf_error_states(SWF_ASL_ERR_READER,
                               "the reader's task returned %s, not the object's content (a "
                               "string, or an object with it in Body)",
                               swf_json_type_name(content));
    } else {
        const char *s = json_object_get_string(content);
        size_t len = (size_t)json_object_get_string_len(content);
        if (type != NULL && strcmp(type, "CSV") == 0) {
            err = read_csv(config, s, len, limit, *items);
        } else if (type != NULL && strcmp(type, "JSONL") == 0) {
            err = read_jsonl(s, len, limit, *items);
        } else {
            json_object *arr = NULL;
            err = swf_json_parse(s, len, SWF_LIMIT_PAYLOAD_BYTES, &arr);
            if (err != NULL || !json_object_is_type(arr, json_type_array)) {
                swf_error_free(err);
                err = swf_error_states(SWF_ASL_ERR_READER,
                                       "the content is not a JSON array (InputType JSON)");
            } else {
                take(arr, limit, *items);
            }
            json_object_put(arr);
        }
    }
    if (err != NULL) {
        json_object_put(*items);
        *items = NULL;
    }
    return err;
}

/* ---- InputType MANIFEST: an S3 inventory ---------------------------------- */

bool swf_asl_reader_is_manifest(json_object *reader)
{
    json_object *config = NULL;
    swf_json_get(reader, "ReaderConfig", &config);
    const char *t = swf_json_get_string(config, "InputType");
    return t != NULL && strcmp(t, "MANIFEST") == 0;
}

/* The content of a reader task's result: the string itself or its Body. */
static json_object *content_of(json_object *result)
{
    json_object *v;
    if (json_object_is_type(result, json_type_object) && swf_json_get(result, "Body", &v))
        return v;
    return result;
}

swf_error_t *swf_asl_reader_manifest(json_object *result, json_object **files, json_object **schema)
{
    *files = *schema = NULL;
    json_object *content = content_of(result), *m = NULL, *list;
    if (json_object_is_type(content, json_type_string)) {
        swf_error_t *err = swf_json_parse(json_object_get_string(content),
                                          (size_t)json_object_get_string_len(content),
                                          SWF_LIMIT_PAYLOAD_BYTES, &m);
        if (err != NULL) {
            swf_error_free(err);
            return swf_error_states(SWF_ASL_ERR_READER, "the manifest is not JSON");
        }
    } else {
        m = json_object_get(content);
    }
    swf_error_t *err = NULL;
    const char *format = swf_json_get_string(m, "fileFormat");
    const char *dest = swf_json_get_string(m, "destinationBucket");
    const char *cols = swf_json_get_string(m, "fileSchema");
    if (!json_object_is_type(m, json_type_object))
        err = swf_error_states(SWF_ASL_ERR_READER, "the manifest is %s, not an object",
                               swf_json_type_name(m));
    else if (format == NULL || strcmp(format, "CSV") != 0)
        err = swf_error_states(SWF_ASL_ERR_READER,
                               "the manifest's fileFormat is %s: swf reads CSV inventories "
                               "(not ORC or Parquet)",
                               format ? format : "missing");
    else if (dest == NULL || strncmp(dest, "arn:aws:s3:::", 13) != 0 || dest[13] == '\0')
        err = swf_error_states(SWF_ASL_ERR_READER,
                               "the manifest's destinationBucket is not a bucket's ARN "
                               "(arn:aws:s3:::NAME)");
    else if (cols == NULL || cols[0] == '\0')
        err = swf_error_states(SWF_ASL_ERR_READER, "the manifest has no fileSchema");
    else if (!swf_json_get(m, "files", &list) || !json_object_is_type(list, json_type_array))
        err = swf_error_states(SWF_ASL_ERR_READER, "the manifest has no files array");
    if (err != NULL) {
        json_object_put(m);
        return err;
    }
    /* fileSchema: "Bucket, Key, Size, LastModifiedDate". */
    *schema = json_object_new_array();
    for (const char *p = cols; *p;) {
        while (*p == ' ' || *p == ',')
            p++;
        const char *e = p;
        while (*e && *e != ',')
            e++;
        const char *t = e;
        while (t > p && t[-1] == ' ')
            t--;
        if (t > p)
            json_object_array_add(*schema, json_object_new_string_len(p, (int)(t - p)));
        p = e;
    }
    *files = json_object_new_array();
    for (size_t i = 0; err == NULL && i < json_object_array_length(list); i++) {
        const char *key = swf_json_get_string(json_object_array_get_idx(list, i), "key");
        if (key == NULL) {
            err = swf_error_states(SWF_ASL_ERR_READER, "the manifest's files[%zu] has no key", i);
            break;
        }
        json_object *in = json_object_new_object();
        swf_json_add(in, "Bucket", json_object_new_string(dest + 13));
        swf_json_add(in, "Key", json_object_new_string(key));
        json_object_array_add(*files, in);
    }
    json_object_put(m);
    if (err != NULL) {
        json_object_put(*files);
        json_object_put(*schema);
        *files = *schema = NULL;
    }
    return err;
}

swf_error_t *swf_asl_reader_inventory_rows(json_object *schema, json_object *result, size_t limit,
                                           json_object *items)
{
    json_object *content = content_of(result);
    if (!json_object_is_type(content, json_type_string))
        return swf_error_states(SWF_ASL_ERR_READER,
                                "the reader's task returned %s for an inventory file, not its "
                                "content (a string, decompressed)",
                                swf_json_type_name(content));
    json_object *config = json_object_new_object();
    swf_json_add(config, "CSVHeaderLocation", json_object_new_string("GIVEN"));
    swf_json_add(config, "CSVHeaders", json_object_get(schema));
    swf_error_t *err = read_csv(config, json_object_get_string(content),
                                (size_t)json_object_get_string_len(content), limit, items);
    json_object_put(config);
    return err;
}
