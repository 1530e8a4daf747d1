/*
 * task_list.c - task list names and the deployment's map to them
 * (task_list.h): read from the file SWF_TASK_LIST_MAP names, checked, and
 * recorded in WorkflowExecutionStarted by whoever starts an execution
 * (started.c).
 */
#include "protocol/task_list.h"

#include <stdlib.h>
#include <string.h>

#include "protocol/json.h"

bool swf_task_list_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

swf_error_t *swf_task_list_map_check(json_object *map, const char *where)
{
    if (!json_object_is_type(map, json_type_object))
        return swf_error_new(SWF_E_INPUT, NULL, "%s: a task list map must be a JSON object", where);
    if (json_object_object_length(map) > SWF_TASK_LIST_MAP_ENTRIES)
        return swf_error_new(SWF_E_LIMIT, NULL, "%s: %d entries; the limit is %d", where,
                             json_object_object_length(map), SWF_TASK_LIST_MAP_ENTRIES);
    json_object_object_foreach(map, key, v)
    {
        const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
        size_t n = strlen(s);
        bool ok = n > 0 && n < SWF_TASK_LIST_BYTES;
        for (size_t i = 0; ok && i < n; i++)
            ok = swf_task_list_char(s[i]);
        if (!ok)
            return swf_error_new(SWF_E_INPUT, NULL,
                                 "%s: \"%s\": a task list must be a string of 1 to %d characters "
                                 "from [A-Za-z0-9._-]",
                                 where, key, SWF_TASK_LIST_BYTES - 1);
    }
    return NULL;
}

swf_error_t *swf_task_list_map_from_env(json_object **map)
{
    const char *file = getenv("SWF_TASK_LIST_MAP");
    *map = NULL;
    if (file == NULL || file[0] == '\0')
        return NULL;
    swf_error_t *err = swf_json_read_file(file, SWF_TASK_LIST_MAP_BYTES, map);
    if (err == NULL && (err = swf_task_list_map_check(*map, file)) != NULL) {
        json_object_put(*map);
        *map = NULL;
    }
    return err;
}

const char *swf_task_list_nested_pattern(const char *resource)
{
    static const char start[] = "arn:aws:states:::states:startExecution";
    if (resource == NULL || strncmp(resource, start, sizeof(start) - 1) != 0)
        return NULL;
    const char *rest = resource + sizeof(start) - 1;
    static const char *const known[] = {"", ".sync", ".sync:2", ".waitForTaskToken"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(rest, known[i]) == 0)
            return known[i];
    return NULL;
}
