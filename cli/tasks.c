/*
 * tasks.c - the task lists an execution's tasks use, for `swf describe`.
 *
 * They are what the decider schedules on: each Task state's (and each Map
 * reader's and writer's) task list by the rule and map the execution
 * recorded when it started (decider/asl/resource.h), behind the prefix it
 * recorded (`swf run --dev`'s own lists). A Serverless Workflow document's
 * tasks are those of its translation. An execution recorded before the rule
 * had a version (no taskListRule) has no such list: its task lists are the
 * names in its ActivityTaskScheduled events (`swf history`).
 */
#include <json-c/printbuf.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "decider/asl/resource.h"
#include "decider/sw/sw.h"
#include "history/store.h"
#include "protocol/json.h"

json_object *swf_cli_execution_tasks(swf_history_store_t *s, const char *execution_id,
                                     swf_error_t **err)
{
    swf_event_list_t first = {0};
    json_object *def, *map = NULL, *rule, *out = NULL;
    *err = swf_history_load(s, execution_id, 0, 1, &first);
    if (*err != NULL && swf_error_code(*err) == SWF_E_NOTFOUND) {
        swf_error_free(*err); /* a row without events (imported, rebuilt): none to show */
        *err = NULL;
    }
    if (*err != NULL || first.count == 0 ||
        first.items[0].type != SWF_EVENT_WORKFLOW_EXECUTION_STARTED)
        goto done;
    json_object *attrs = first.items[0].attrs;
    if (!swf_json_get(attrs, "definition", &def) || !swf_json_get(attrs, "taskListRule", &rule) ||
        json_object_get_int(rule) < 2)
        goto done;
    swf_json_get(attrs, "taskListMap", &map);
    const char *prefix = swf_json_get_string(attrs, "taskListPrefix");
    json_object *machine = swf_sw_is_document(def) ? swf_sw_translate(def) : NULL;
    out = swf_asl_task_lists(machine != NULL ? machine : def, map);
    json_object_put(machine);
    for (size_t i = 0; prefix != NULL && prefix[0] && i < json_object_array_length(out); i++) {
        json_object *t = json_object_array_get_idx(out, i);
        const char *list = swf_json_get_string(t, "taskList");
        if (list == NULL)
            continue;
        struct printbuf *full = printbuf_new();
        if (full == NULL || sprintbuf(full, "%s%s", prefix, list) < 0)
            abort();
        json_object_object_add(t, "taskList", json_object_new_string(full->buf));
        printbuf_free(full);
    }
done:
    swf_event_list_free(&first);
    return out;
}
