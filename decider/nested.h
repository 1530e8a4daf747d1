/*
 * nested.h - nested executions: a Task whose Resource is
 * arn:aws:states:::states:startExecution[.sync|.sync:2|.waitForTaskToken]
 * starts an execution of a registered state machine on swf itself.
 *
 * The interpreter does not know about them: such a Task is scheduled as an
 * activity like any other (its Resource is in the ActivityTaskScheduled's
 * control), so timeouts, heartbeats, retries, catchers and replay are the
 * activity's. What differs is who answers it: not a worker but the driver,
 * `swf run --local` (decider/local.c, the child run in-process) or the
 * decider daemon (decider/daemon.c: the child started through the store,
 * its close posted back to the parent's inbox). Both build the child's
 * request and the parent's answer here, so the shapes are AWS's in both
 * (decider/asl/PORTING.md, "Nested executions").
 *
 * Ownership: arguments are borrowed; results are new references or filled
 * buffers. Nothing here does I/O. Thread-safe.
 */
#ifndef SWF_DECIDER_NESTED_H
#define SWF_DECIDER_NESTED_H

#include <stdbool.h>
#include <stdint.h>
#include <json-c/json.h>

#include "protocol/error.h"

typedef enum swf_nested_pattern {
    SWF_NESTED_NONE,     /* not a nested execution */
    SWF_NESTED_REQUEST,  /* startExecution: answered once the child started */
    SWF_NESTED_SYNC,     /* .sync: the child's DescribeExecution, Output a JSON string */
    SWF_NESTED_SYNC2,    /* .sync:2: the same, Input and Output JSON */
    SWF_NESTED_CALLBACK, /* .waitForTaskToken: answered by SendTaskSuccess/Failure */
} swf_nested_pattern_t;

/* The pattern of a Task Resource (NULL: NONE). */
swf_nested_pattern_t swf_nested_pattern(const char *resource);

/* The pattern of an ActivityTaskScheduled event's attributes (its
 * control.resource). */
swf_nested_pattern_t swf_nested_pattern_of_scheduled(json_object *attrs);

/* An execution name: 1 to 80 bytes, as AWS allows (no whitespace, no
 * ?*"#%\^|~`$&,;:/ nor control characters). */
#define SWF_NESTED_NAME_BYTES 80

/* What a child's start needs, read from the Task's Parameters (the
 * activity's input). Borrowed from it, except input (a new reference). */
typedef struct swf_nested_request {
    char machine[SWF_NESTED_NAME_BYTES + 1]; /* the state machine's name */
    int version;                             /* 0: the latest */
    char name[SWF_NESTED_NAME_BYTES + 1];    /* the child's execution id */
    json_object *input;                      /* the child's input */
} swf_nested_request_t;

/*
 * Reads a request: StateMachineArn (arn:aws:states:REGION:ACCOUNT:
 * stateMachine:NAME[:VERSION] or a bare NAME; an alias is refused), Input
 * (an object, or a string holding JSON; absent: {}) and Name (absent: the
 * parent's id, '-', and the activity's id, or a digest when that is longer
 * than 80 bytes: the same on every try, which is what makes a start
 * idempotent). Errors carry AWS's error names
 * (StepFunctions.InvalidArnException, StepFunctions.InvalidName,
 * StepFunctions.InvalidExecutionInput) for the parent Task to fail with.
 */
swf_error_t *swf_nested_request_read(json_object *params, const char *parent_id,
                                     const char *activity_id, swf_nested_request_t *out);
void swf_nested_request_clear(swf_nested_request_t *req);

/* The ARNs swf gives executions and state machines (the same as
 * $$.Execution.Id and $$.StateMachine.Id: region "local", account
 * 000000000000). Written into buf. */
#define SWF_NESTED_ARN_BYTES 320
void swf_nested_execution_arn(const char *machine, const char *id, char buf[SWF_NESTED_ARN_BYTES]);
void swf_nested_machine_arn(const char *machine, char buf[SWF_NESTED_ARN_BYTES]);

/* The request-response answer: {"ExecutionArn", "StartDate"} (epoch ms,
 * as AWS's integrations print dates). A new reference. */
json_object *swf_nested_started_result(const char *machine, const char *id, int64_t start_ms);

/* A closed child as the parent sees it. */
typedef struct swf_nested_child {
    const char *machine;
    const char *id;
    json_object *input;
    int64_t start_ms, stop_ms;
    const char *status;  /* SUCCEEDED, FAILED, TIMED_OUT, ABORTED */
    json_object *output; /* SUCCEEDED */
    const char *error;   /* otherwise (may be NULL) */
    const char *cause;
} swf_nested_child_t;

/* The parent's answer to a closed child, for .sync (Input and Output as
 * JSON strings) or .sync:2 (as JSON): on SUCCEEDED *result gets AWS's
 * DescribeExecution shape; otherwise *error gets "States.TaskFailed" and
 * *cause (caller frees) the same shape as a JSON string, with the child's
 * Error and Cause. */
void swf_nested_close_answer(swf_nested_pattern_t pattern, const swf_nested_child_t *child,
                             json_object **result, const char **error, char **cause);

/* A child's WorkflowExecutionStarted names its parent as SWF does:
 * "parentWorkflowExecution": {"workflowId": PARENT_ID} and
 * "parentInitiatedEventId": the parent's ActivityTaskScheduled. */
void swf_nested_parent_record(json_object *started_attrs, const char *parent_id,
                              int64_t initiated_event_id);
/* The parent a WorkflowExecutionStarted names: borrowed, NULL for none. */
const char *swf_nested_parent_of(json_object *started_attrs, int64_t *initiated_event_id);

#endif
