/* test_schemas.c - protocol/schemas: every schema is JSON Schema 2020-12 in
 * the shape we rely on, every Kafka message has a schema and an example,
 * examples and recorded histories carry what their schemas require, and the
 * message codec builds messages its schemas accept.
 *
 * The check is a small subset of JSON Schema, enough for these schemas:
 * type, const, enum, required, properties (recursively), minimum,
 * exclusiveMinimum, minLength, maxLength. It is not a validator for
 * schemas in general. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/message.h"
#include "protocol/token.h"

#define SCHEMAS SWF_SOURCE_DIR "/protocol/schemas"

static const char *message_types[] = {"activity.task",
                                      "decide",
                                      "activity.completed",
                                      "activity.failed",
                                      "activity.heartbeat",
                                      "activity.started",
                                      "activity.timedOut",
                                      "timer.fired",
                                      "execution.timedOut",
                                      "signal",
                                      "cancel",
                                      "terminate",
                                      "redrive",
                                      "nested.start",
                                      "nested.closed",
                                      "dead-letter",
                                      NULL};

static json_object *read_json(const char *path)
{
    json_object *v = NULL;
    swf_error_t *err = swf_json_read_file(path, SWF_LIMIT_JSON_BYTES, &v);
    cr_assert_null(err, "%s: %s", path, err ? swf_error_message(err) : "");
    return v;
}

static bool type_is(const char *want, json_object *v)
{
    if (strcmp(want, "integer") == 0)
        return json_object_is_type(v, json_type_int);
    if (strcmp(want, "number") == 0)
        return swf_json_is_number(v);
    return strcmp(want, swf_json_type_name(v)) == 0;
}

/* The first way v breaks schema s, written into `why`; false when none. */
static bool breaks(json_object *s, json_object *v, const char *where, char *why, size_t n)
{
    json_object *k = NULL;
    if (swf_json_get(s, "type", &k)) {
        bool ok = false;
        if (json_object_is_type(k, json_type_array)) {
            for (size_t i = 0; i < json_object_array_length(k); i++)
                ok = ok || type_is(json_object_get_string(json_object_array_get_idx(k, i)), v);
        } else {
            ok = type_is(json_object_get_string(k), v);
        }
        if (!ok)
            return snprintf(why, n, "%s: %s is not of type %s", where, swf_json_type_name(v),
                            swf_json_str(k)),
                   true;
    }
    if (swf_json_get(s, "const", &k) && !swf_json_equal(k, v))
        return snprintf(why, n, "%s: %s is not %s", where, swf_json_str(v), swf_json_str(k)), true;
    if (swf_json_get(s, "enum", &k)) {
        bool ok = false;
        for (size_t i = 0; i < json_object_array_length(k); i++)
            ok = ok || swf_json_equal(json_object_array_get_idx(k, i), v);
        if (!ok)
            return snprintf(why, n, "%s: %s is not one of %s", where, swf_json_str(v),
                            swf_json_str(k)),
                   true;
    }
    if (swf_json_is_number(v)) {
        double d = json_object_get_double(v);
        if (swf_json_get(s, "minimum", &k) && d < json_object_get_double(k))
            return snprintf(why, n, "%s: below the minimum", where), true;
        if (swf_json_get(s, "exclusiveMinimum", &k) && d <= json_object_get_double(k))
            return snprintf(why, n, "%s: not above the minimum", where), true;
    }
    if (json_object_is_type(v, json_type_string)) {
        int len = json_object_get_string_len(v);
        if (swf_json_get(s, "minLength", &k) && len < json_object_get_int(k))
            return snprintf(why, n, "%s: too short", where), true;
        if (swf_json_get(s, "maxLength", &k) && len > json_object_get_int(k))
            return snprintf(why, n, "%s: too long", where), true;
    }
    if (!json_object_is_type(v, json_type_object))
        return false;
    if (swf_json_get(s, "required", &k)) {
        for (size_t i = 0; i < json_object_array_length(k); i++) {
            const char *name = json_object_get_string(json_object_array_get_idx(k, i));
            json_object *m = NULL;
            if (!swf_json_get(v, name, &m))
                return snprintf(why, n, "%s: missing %s", where, name), true;
        }
    }
    json_object *props = NULL;
    if (swf_json_get(s, "properties", &props)) {
        json_object_object_foreach(props, name, sub)
        {
            json_object *m = NULL;
            char at[256];
            snprintf(at, sizeof(at), "%s.%s", where, name);
            if (swf_json_get(v, name, &m) && breaks(sub, m, at, why, n))
                return true;
        }
    }
    return false;
}

/* The schema of a message type or an event type (NULL when there is none). */
static json_object *schema_of(const char *name)
{
    char path[512];
    snprintf(path, sizeof(path), SCHEMAS "/messages/%s.schema.json", name);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(path, sizeof(path), SCHEMAS "/events/%s.schema.json", name);
        f = fopen(path, "r");
    }
    if (f == NULL)
        return NULL;
    fclose(f);
    return read_json(path);
}

static void assert_valid(const char *schema_name, json_object *v, const char *what)
{
    json_object *s = schema_of(schema_name);
    cr_assert_not_null(s, "no schema for %s", schema_name);
    char why[512];
    cr_assert_not(breaks(s, v, "$", why, sizeof(why)), "%s: %s", what, why);
    json_object_put(s);
}

/* Calls fn for each regular file of dir whose name ends with suffix. */
static int each_file(const char *dir, const char *suffix, void (*fn)(const char *, const char *))
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot open %s", dir);
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name), k = strlen(suffix);
        if (n <= k || strcmp(e->d_name + n - k, suffix) != 0)
            continue;
        char path[1024];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        fn(path, e->d_name);
        count++;
    }
    closedir(d);
    return count;
}

static void check_schema_file(const char *path, const char *name)
{
    json_object *s = read_json(path);
    cr_assert_str_eq(swf_json_get_string(s, "$schema"),
                     "https://json-schema.org/draft/2020-12/schema", "%s", path);
    cr_assert_not_null(swf_json_get_string(s, "$id"), "%s: no $id", path);
    cr_assert_not_null(strstr(swf_json_get_string(s, "$id"), name), "%s: $id names another file",
                       path);
    cr_assert_not_null(swf_json_get_string(s, "description"), "%s: no description", path);
    cr_assert_str_eq(swf_json_get_string(s, "type"), "object", "%s", path);
    json_object *req = NULL, *props = NULL, *p = NULL;
    cr_assert(swf_json_get(s, "required", &req) && json_object_is_type(req, json_type_array),
              "%s: no required array", path);
    cr_assert(swf_json_get(s, "properties", &props), "%s: no properties", path);
    for (size_t i = 0; i < json_object_array_length(req); i++) {
        json_object *r = json_object_array_get_idx(req, i);
        cr_assert(json_object_is_type(r, json_type_string), "%s", path);
        cr_assert(swf_json_get(props, json_object_get_string(r), &p),
                  "%s: required %s is not among the properties", path, json_object_get_string(r));
    }
    json_object_put(s);
}

Test(schemas, every_schema_file_is_json_schema_2020_12_with_its_required_properties)
{
    int n = each_file(SCHEMAS "/messages", ".schema.json", check_schema_file);
    int m = each_file(SCHEMAS "/events", ".schema.json", check_schema_file);
    cr_assert_geq(n, 12, "only %d message schemas", n);
    cr_assert_geq(m, 27, "only %d event schemas", m);
}

Test(schemas, every_kafka_message_has_a_schema_and_an_example)
{
    for (size_t i = 0; message_types[i]; i++) {
        json_object *s = schema_of(message_types[i]);
        cr_assert_not_null(s, "no schema for %s", message_types[i]);
        json_object *k = NULL;
        cr_assert(swf_json_get(swf_json_get(s, "properties", &k) ? k : NULL, "type", &k));
        cr_assert_str_eq(swf_json_get_string(k, "const"), message_types[i]);
        json_object_put(s);
        char path[512];
        snprintf(path, sizeof(path), SCHEMAS "/examples/%s.json", message_types[i]);
        json_object_put(read_json(path));
    }
}

static void check_example(const char *path, const char *name)
{
    char schema[256];
    snprintf(schema, sizeof(schema), "%.*s", (int)(strlen(name) - 5), name);
    json_object *v = read_json(path);
    assert_valid(schema, v, path);
    json_object_put(v);
}

Test(schemas, examples_carry_the_fields_their_schema_requires)
{
    int n = each_file(SCHEMAS "/examples", ".json", check_example);
    cr_assert_geq(n, 12);
}

Test(schemas, the_check_catches_a_missing_field_a_wrong_type_and_a_wrong_const)
{
    json_object *s = schema_of("activity.task");
    json_object *v = read_json(SCHEMAS "/examples/activity.task.json");
    char why[512];
    cr_assert_not(breaks(s, v, "$", why, sizeof(why)), "%s", why);
    json_object_object_del(v, "taskToken");
    cr_assert(breaks(s, v, "$", why, sizeof(why)));
    cr_assert_str_eq(why, "$: missing taskToken");
    json_object_put(v);

    v = read_json(SCHEMAS "/examples/activity.task.json");
    json_object_object_add(v, "attempt", json_object_new_string("0"));
    cr_assert(breaks(s, v, "$", why, sizeof(why)));
    cr_assert_str_eq(why, "$.attempt: string is not of type \"integer\"");
    json_object_object_add(v, "attempt", json_object_new_int(0));
    json_object_object_add(v, "type", json_object_new_string("activity.tusk"));
    cr_assert(breaks(s, v, "$", why, sizeof(why)));
    json_object *at = NULL;
    swf_json_get(v, "activityType", &at);
    json_object_object_add(v, "type", json_object_new_string("activity.task"));
    json_object_object_del(at, "name");
    cr_assert(breaks(s, v, "$", why, sizeof(why)));
    cr_assert_str_eq(why, "$.activityType: missing name");
    json_object_put(v);
    json_object_put(s);
}

/* Every event of the recorded histories (tests/histories) against its schema. */
static int events_checked;

static void check_history(const char *path, const char *name)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    size_t cap = 0;
    char *line = NULL;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) > 0) {
        json_object *e = NULL;
        cr_assert_null(swf_json_parse(line, (size_t)len, SWF_LIMIT_JSON_BYTES, &e), "%s", path);
        const char *type = swf_json_get_string(e, "eventType");
        cr_assert_not_null(type);
        char key[128];
        snprintf(key, sizeof(key), "%c%sEventAttributes", type[0] + ('a' - 'A'), type + 1);
        json_object *attrs = NULL;
        cr_assert(swf_json_get(e, key, &attrs), "%s: %s without %s", path, type, key);
        char what[600];
        snprintf(what, sizeof(what), "%s: %s", name, type);
        assert_valid(type, attrs, what);
        json_object_put(e);
        events_checked++;
    }
    free(line);
    fclose(f);
}

Test(schemas, recorded_histories_match_the_event_schemas)
{
    int n = each_file(SWF_SOURCE_DIR "/tests/histories", ".jsonl", check_history);
    cr_assert_geq(n, 100);
    cr_assert_geq(events_checked, 1000);
}

/* The codec of protocol/message.c builds what the schemas describe. */
Test(schemas, messages_built_by_the_codec_match_their_schemas)
{
    json_object *in = json_object_new_object();
    json_object_object_add(in, "a", json_object_new_int(1));
    json_object *built[] = {
        swf_msg_decide_new(NULL, "e1"),
        swf_msg_activity_completed_new("tok", in, "me"),
        swf_msg_activity_completed_new("tok", NULL, NULL),
        swf_msg_activity_failed_new("tok", "my.Error", "why", "me"),
        swf_msg_activity_heartbeat_new("tok", in, true),
        swf_msg_activity_started_new("tok", "me"),
        swf_msg_activity_started_new("tok", NULL),
        swf_msg_activity_timed_out_new(NULL, "e1", 4, "HEARTBEAT"),
        swf_msg_timer_fired_new(NULL, "e1", "t1", 7),
        swf_msg_execution_timed_out_new(NULL, "e1"),
        swf_msg_signal_new(NULL, "e1", "go", in),
        swf_msg_cancel_new(NULL, "e1", "because"),
        swf_msg_terminate_new(NULL, "e1", "stuck", in, true),
        swf_msg_redrive_new(NULL, "e1", 1),
        swf_msg_dead_letter_new("bad", "swf.inbox", 0, 3, "{x", 2),
    };
    for (size_t i = 0; i < sizeof(built) / sizeof(built[0]); i++) {
        const char *type = swf_json_get_string(built[i], "type");
        cr_assert_not_null(type, "%s", swf_json_str(built[i]));
        assert_valid(type, built[i], swf_json_str(built[i]));
        json_object_put(built[i]);
    }
    json_object_put(in);
}

/* The examples of the control messages carry signatures that verify under
 * the development secret (KAFKA.md, "Signed control messages"). */
Test(schemas, the_control_message_examples_are_signed_with_the_development_secret)
{
    static const char *control[] = {
        "decide", "timer.fired", "execution.timedOut", "activity.timedOut", "signal",
        "cancel", "terminate",   "nested.start",       "nested.closed"};
    for (size_t i = 0; i < sizeof(control) / sizeof(control[0]); i++) {
        char path[512];
        snprintf(path, sizeof(path), SCHEMAS "/examples/%s.json", control[i]);
        json_object *v = read_json(path);
        swf_error_t *err = swf_msg_signature_check(v, SWF_TOKEN_DEV_SECRET);
        cr_assert_null(err, "%s: %s", path, err ? swf_error_message(err) : "");
        json_object_put(v);
    }
}
