/*
 * task_list.h - task list names and a deployment's map to them.
 *
 * A deployment may say itself which task list serves a Task's Resource: a
 * JSON object in the file SWF_TASK_LIST_MAP names, from the Resource as
 * written (or the task list the rule of decider/asl/resource.h gives it) to
 * a task list. Whoever starts an execution records the map in its
 * WorkflowExecutionStarted (taskListMap, with taskListRule), so that the
 * decider, and any replay, uses the map the execution started with.
 *
 * Ownership: *map is a new reference the caller puts.
 */
#ifndef SWF_PROTOCOL_TASK_LIST_H
#define SWF_PROTOCOL_TASK_LIST_H

#include <stdbool.h>

#include <json-c/json.h>

#include "protocol/error.h"

/* The version of the Resource-to-task-list rule new executions record
 * (taskListRule; decider/asl/resource.h). */
#define SWF_TASK_LIST_RULE 2

/* Bytes of a task list name, its terminator included. */
#define SWF_TASK_LIST_BYTES 256

/* Bytes of a task list map file, and entries in it. */
#define SWF_TASK_LIST_MAP_BYTES (1024u * 1024u)
#define SWF_TASK_LIST_MAP_ENTRIES 10000

/* Whether c may appear in a task list name: [A-Za-z0-9._-]. */
bool swf_task_list_char(char c);

/* The pattern of a Resource that starts a nested execution
 * (arn:aws:states:::states:startExecution[.PATTERN], decider/nested.h):
 * "", ".sync", ".sync:2" or ".waitForTaskToken" (a static string); NULL
 * for any other Resource. */
const char *swf_task_list_nested_pattern(const char *resource);

/* Checks a map: an object of at most SWF_TASK_LIST_MAP_ENTRIES whose values
 * are task list names of 1 to 255 characters. where names it in errors. */
swf_error_t *swf_task_list_map_check(json_object *map, const char *where);

/* Reads and checks the map file SWF_TASK_LIST_MAP names; *map is NULL when
 * the variable is not set or empty. */
swf_error_t *swf_task_list_map_from_env(json_object **map);

#endif
