/*
 * task.c - an activity.task message, parsed and checked, and its accessors.
 *
 * The checks are those of protocol/schemas/activity.task.schema.json: every
 * field a worker needs is present, of its JSON type and within its bound, so
 * that code answering a task never meets a half-formed one. The reason of a
 * refusal is short, lowercase and names the field, because it is what the
 * dead-letter entry says. The token is only checked for shape: workers do not
 * hold the secret that would verify it (the decider does).
 *
 * A task keeps the parsed message and points into it, so the strings need no
 * copies and all die together.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/token.h"
#include "worker/internal.h"

static swf_error_t *bad(const char *fmt, const char *field)
{
    return swf_error_new(SWF_E_INPUT, NULL, fmt, field);
}

/* A required (or, when !required, optional) non-empty string of at most max bytes. */
static swf_error_t *get_str(json_object *obj, const char *key, bool required, size_t max,
                            const char **out)
{
    json_object *v = NULL;
    *out = "";
    if (!swf_json_get(obj, key, &v))
        return required ? bad("missing field %s", key) : NULL;
    if (!json_object_is_type(v, json_type_string))
        return bad("field %s is not a string", key);
    size_t n = (size_t)json_object_get_string_len(v);
    if (n == 0 && required)
        return bad("field %s is empty", key);
    if (n > max)
        return swf_error_new(SWF_E_LIMIT, NULL, "field %s exceeds %zu bytes", key, max);
    *out = json_object_get_string(v);
    return NULL;
}

static swf_error_t *get_int(json_object *obj, const char *key, int64_t min, int64_t *out)
{
    json_object *v = NULL;
    if (!swf_json_get(obj, key, &v))
        return bad("missing field %s", key);
    if (!swf_json_as_int64(v, out))
        return bad("field %s is not an integer", key);
    if (*out < min)
        return bad("field %s is out of range", key);
    return NULL;
}

/* An optional positive number of seconds; 0 when absent. No upper bound:
 * the schema has none, and a Task's TimeoutSeconds may be as large as
 * SWF_LIMIT_STATE_SECONDS (more than three years). */
static swf_error_t *get_seconds(json_object *obj, const char *key, double *out)
{
    json_object *v = NULL;
    *out = 0;
    if (!swf_json_get(obj, key, &v))
        return NULL;
    if (!swf_json_is_number(v))
        return bad("field %s is not a number", key);
    double d = json_object_get_double(v);
    if (!isfinite(d) || d <= 0)
        return bad("field %s is out of range", key);
    *out = d;
    return NULL;
}

static swf_error_t *check(swf_worker_task_t *t)
{
    json_object *m = t->msg, *v = NULL;
    swf_error_t *err = NULL;
    if (!json_object_is_type(m, json_type_object))
        return swf_error_new(SWF_E_INPUT, NULL, "message is not a JSON object");
    const char *type = swf_json_get_string(m, "type");
    if (type == NULL)
        return bad("missing field %s", "type");
    if (strcmp(type, "activity.task") != 0)
        return swf_error_new(SWF_E_INPUT, NULL, "type %.64s is not activity.task", type);
    /* "v" is optional on tasks; when present it must be a version we speak. */
    int64_t version;
    if (swf_json_get(m, "v", &v) && (!swf_json_as_int64(v, &version) || version != 1))
        return bad("field %s is not 1", "v");
    if ((err = get_str(m, "taskToken", true, SWF_TOKEN_MAX_BYTES, &t->token)) ||
        (err = get_str(m, "executionId", true, SWF_WORKER_NAME_BYTES_MAX, &t->execution_id)) ||
        (err = get_str(m, "activityId", true, SWF_WORKER_NAME_BYTES_MAX, &t->activity_id)) ||
        (err = get_str(m, "state", false, SWF_WORKER_NAME_BYTES_MAX, &t->state)) ||
        (err = get_int(m, "attempt", 0, &t->attempt)) ||
        (err = get_int(m, "scheduledEventId", 1, &t->scheduled_event_id)) ||
        (err = get_seconds(m, "startToCloseTimeout", &t->start_to_close_s)) ||
        (err = get_seconds(m, "heartbeatTimeout", &t->heartbeat_s)))
        return err;
    json_object *at = NULL;
    if (!swf_json_get(m, "activityType", &at))
        return bad("missing field %s", "activityType");
    if (!json_object_is_type(at, json_type_object))
        return bad("field %s is not an object", "activityType");
    if ((err = get_str(at, "name", true, SWF_WORKER_NAME_BYTES_MAX, &t->type_name)))
        return swf_error_prefix(err, "activityType"), err;
    if ((err = get_str(at, "version", false, SWF_WORKER_NAME_BYTES_MAX, &t->type_version)))
        return swf_error_prefix(err, "activityType"), err;
    if (!swf_json_get(m, "input", &t->input))
        return bad("missing field %s", "input");
    return NULL;
}

swf_error_t *swf_worker_task_parse(const char *buf, size_t len, swf_worker_task_t **out)
{
    *out = NULL;
    if (buf == NULL || len == 0)
        return swf_error_new(SWF_E_INPUT, NULL, "empty message");
    if (len > SWF_WORKER_MESSAGE_BYTES_MAX)
        return swf_error_new(SWF_E_LIMIT, NULL, "message exceeds %u bytes",
                             SWF_WORKER_MESSAGE_BYTES_MAX);
    swf_worker_task_t *t = calloc(1, sizeof(*t));
    if (t == NULL)
        abort();
    swf_error_t *err = swf_json_parse(buf, len, SWF_WORKER_MESSAGE_BYTES_MAX, &t->msg);
    if (err != NULL) {
        swf_error_prefix(err, "message is not JSON");
        goto out;
    }
    err = check(t);
out:
    if (err != NULL) {
        swf_worker__task_destroy(t);
        return err;
    }
    t->partition = -1;
    t->offset = -1;
    *out = t;
    return NULL;
}

void swf_worker__task_destroy(swf_worker_task_t *t)
{
    if (t == NULL)
        return;
    json_object_put(t->msg);
    free(t);
}

const char *swf_worker_task_token(const swf_worker_task_t *t) { return t->token; }
const char *swf_worker_task_execution_id(const swf_worker_task_t *t) { return t->execution_id; }
const char *swf_worker_task_activity_id(const swf_worker_task_t *t) { return t->activity_id; }
const char *swf_worker_task_activity_type(const swf_worker_task_t *t) { return t->type_name; }
const char *swf_worker_task_activity_version(const swf_worker_task_t *t) { return t->type_version; }
const char *swf_worker_task_state(const swf_worker_task_t *t) { return t->state; }
json_object *swf_worker_task_input(const swf_worker_task_t *t) { return t->input; }
int64_t swf_worker_task_attempt(const swf_worker_task_t *t) { return t->attempt; }
int64_t swf_worker_task_scheduled_event_id(const swf_worker_task_t *t)
{
    return t->scheduled_event_id;
}
double swf_worker_task_start_to_close_timeout_s(const swf_worker_task_t *t)
{
    return t->start_to_close_s;
}
double swf_worker_task_heartbeat_timeout_s(const swf_worker_task_t *t) { return t->heartbeat_s; }
int32_t swf_worker_task_partition(const swf_worker_task_t *t) { return t->partition; }
int64_t swf_worker_task_offset(const swf_worker_task_t *t) { return t->offset; }
bool swf_worker_task_answered(const swf_worker_task_t *t) { return t->answered; }
