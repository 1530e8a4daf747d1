/*
 * started.h - the deployment's settings an execution records when it starts.
 *
 * Whoever starts an execution (swf-history's start, swf run --local) adds
 * them to its WorkflowExecutionStarted from the environment, so that the
 * decider, and any later replay, use the settings the execution started
 * with, whatever the deployment says later:
 *   taskListRule, taskListMap  which task list serves each Task (task_list.h)
 *   stateDataLimit             the largest state input or output, in bytes:
 *                              SWF_STATE_DATA_LIMIT_BYTES, by default 262144
 *                              (256 KiB, AWS's quota); past it the state
 *                              fails with States.DataLimitExceeded
 * A history without them (recorded before they existed) keeps the old
 * behaviour: the first task list rule, no state data limit.
 */
#ifndef SWF_PROTOCOL_STARTED_H
#define SWF_PROTOCOL_STARTED_H

#include <stdint.h>
#include <json-c/json.h>

#include "protocol/error.h"

/* The default of SWF_STATE_DATA_LIMIT_BYTES: AWS's 256 KiB. Its largest
 * value is SWF_LIMIT_PAYLOAD_BYTES (limits.h). */
#define SWF_STATE_DATA_LIMIT_DEFAULT (256 * 1024)

/* Adds the settings to WorkflowExecutionStarted's attributes; an environment
 * that does not read (a map file, a limit that is no number in range) is an
 * error naming it, and nothing is added. */
swf_error_t *swf_started_settings_record(json_object *attrs);

/* A nested execution's WorkflowExecutionStarted names its parent in
 * SWF's words: "parentWorkflowExecution": {"workflowId": PARENT_ID} and
 * "parentInitiatedEventId": the parent's ActivityTaskScheduled of the
 * startExecution Task (decider/nested.h), and says how deep it is nested:
 * "nestedDepth", 1 for a child of a top execution. */
void swf_started_parent_record(json_object *attrs, const char *parent_id,
                               int64_t initiated_event_id, int depth);
/* Its nestedDepth: 0 for a top execution. */
int swf_started_nested_depth(json_object *attrs);
/* The parent a WorkflowExecutionStarted names (borrowed), or NULL. */
const char *swf_started_parent_of(json_object *attrs, int64_t *initiated_event_id);

#endif
