/*
 * started.c - the deployment's settings an execution records in its
 * WorkflowExecutionStarted (started.h): the task list rule and map, and the
 * state data limit, read from the environment once per start.
 */
#include "protocol/started.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/task_list.h"

static swf_error_t *data_limit_from_env(int64_t *out)
{
    const char *s = getenv("SWF_STATE_DATA_LIMIT_BYTES");
    *out = SWF_STATE_DATA_LIMIT_DEFAULT;
    if (s == NULL || s[0] == '\0')
        return NULL;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    bool ok =
        errno == 0 && *end == '\0' && end != s && v >= 1 && v <= (long long)SWF_LIMIT_PAYLOAD_BYTES;
    if (ok)
        *out = v;
    return ok ? NULL
              : swf_error_new(SWF_E_INPUT, NULL,
                              "SWF_STATE_DATA_LIMIT_BYTES is '%s'; it must be a number of bytes "
                              "from 1 to %u",
                              s, SWF_LIMIT_PAYLOAD_BYTES);
}

swf_error_t *swf_started_settings_record(json_object *attrs)
{
    json_object *map = NULL;
    int64_t limit;
    swf_error_t *err = swf_task_list_map_from_env(&map);
    if (err == NULL)
        err = data_limit_from_env(&limit);
    if (err != NULL) {
        json_object_put(map);
        return err;
    }
    swf_json_add(attrs, "taskListRule", json_object_new_int(SWF_TASK_LIST_RULE));
    if (map != NULL)
        swf_json_add(attrs, "taskListMap", map);
    swf_json_add(attrs, "stateDataLimit", json_object_new_int64(limit));
    return NULL;
}

void swf_started_parent_record(json_object *attrs, const char *parent_id,
                               int64_t initiated_event_id, int depth)
{
    swf_json_add(attrs, "nestedDepth", json_object_new_int(depth));
    json_object *p = json_object_new_object();
    swf_json_add(p, "workflowId", json_object_new_string(parent_id));
    swf_json_add(attrs, "parentWorkflowExecution", p);
    swf_json_add(attrs, "parentInitiatedEventId", json_object_new_int64(initiated_event_id));
}

const char *swf_started_parent_of(json_object *attrs, int64_t *initiated_event_id)
{
    json_object *p, *v;
    *initiated_event_id = 0;
    if (!swf_json_get(attrs, "parentWorkflowExecution", &p))
        return NULL;
    if (swf_json_get(attrs, "parentInitiatedEventId", &v))
        *initiated_event_id = json_object_get_int64(v);
    return swf_json_get_string(p, "workflowId");
}

int swf_started_nested_depth(json_object *attrs)
{
    json_object *v;
    return swf_json_get(attrs, "nestedDepth", &v) && json_object_is_type(v, json_type_int)
               ? json_object_get_int(v)
               : 0;
}
