/*
 * resource.h - which task list a Task state's Resource is served on.
 *
 * The rule (decider/asl/PORTING.md, "Task lists"), version 2:
 *   arn:...:states:REGION:ACCOUNT:activity:NAME        -> NAME
 *   arn:...:lambda:REGION:ACCOUNT:function:NAME[:QUAL] -> NAME
 *   arn:...:states:::lambda:invoke[.PATTERN]           -> the function named by a literal
 *                                                         FunctionName (its NAME), or
 *                                                         lambda.invoke when it is computed
 *   arn:...:states:::aws-sdk:SERVICE:ACTION[.PATTERN]  -> aws-sdk.SERVICE.ACTION
 *   arn:...:states:::SERVICE:ACTION[.PATTERN]          -> SERVICE.ACTION
 *   anything else                                      -> itself
 * PATTERN (.sync, .sync:2, .waitForTaskToken) is taken off; any character
 * outside [A-Za-z0-9._-] becomes '_'. A deployment's map (protocol/task_list.h,
 * from the file SWF_TASK_LIST_MAP names) then replaces a list: its key is
 * the Resource as written or the list the rule gives, its value the task
 * list. Integrations swf cannot serve (an unknown pattern) are refused with
 * the reason, whatever the map says.
 *
 * arn:aws:states:::states:startExecution[.sync|.sync:2|.waitForTaskToken]
 * starts a nested execution (decider/nested.h): swf itself serves it, on
 * the list SWF_ASL_NESTED_TASK_LIST whatever the map says, and no worker
 * ever sees it.
 *
 * Version 1 (swf_asl_resource_task_list in exec.h) is kept for executions
 * whose history does not record "taskListRule": 2 in WorkflowExecutionStarted,
 * so that they replay and continue as they were recorded.
 *
 * Ownership: the functions borrow their arguments; *map and *out are new
 * references the caller puts.
 */
#ifndef SWF_DECIDER_ASL_RESOURCE_H
#define SWF_DECIDER_ASL_RESOURCE_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "protocol/error.h"

/* The task list of a Task state (its object) under the rule and map (NULL:
 * none); jsonata says whether the state uses JSONata. Writes the name to buf
 * (SWF_TASK_LIST_BYTES, protocol/task_list.h). A resource swf cannot serve is an SWF_E_INPUT
 * error whose message is the reason. */
swf_error_t *swf_asl_task_list(json_object *state, bool jsonata, json_object *map, char *buf,
                               size_t size);

/* The task list a nested execution's Task is recorded on. */
#define SWF_ASL_NESTED_TASK_LIST "states.startExecution"

/* The pattern of a nested execution's Resource: "" (request-response),
 * ".sync", ".sync:2" or ".waitForTaskToken"; NULL when the Resource does
 * not start a nested execution (a static string). */
const char *swf_asl_nested_pattern(const char *resource);

/* Every task of a definition: Task states (Parallel branches and Map
 * processors included) and Map ItemReaders and ResultWriters, as a JSON array of {"path",
 * "state", "resource", "taskList"}, or "error" instead of "taskList" for one
 * swf cannot serve; a nested execution's has "nestedExecution" too: its
 * pattern ("requestResponse", "sync", "sync:2", "waitForTaskToken"). */
json_object *swf_asl_task_lists(json_object *definition, json_object *map);

#endif
