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
 * buffers. Nothing here does I/O but the two functions of "the store's
 * part" (decider/nested_store.c). Thread-safe (the store's part: one
 * thread per store).
 */
#ifndef SWF_DECIDER_NESTED_H
#define SWF_DECIDER_NESTED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "decider/asl/exec.h"
#include "history/store.h"
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

/* The details of the WorkflowExecutionTerminated of a child whose parent
 * stopped waiting for it (its Task timed out or was cancelled, or the
 * parent closed): .sync and .sync:2 children are stopped, as on AWS. */
#define SWF_NESTED_STOPPED "its parent stopped waiting for it"

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

/* The same, from the ActivityTaskScheduled of the Task (its input and
 * activityId). */
swf_error_t *swf_nested_request_of(json_object *scheduled_attrs, const char *parent_id,
                                   swf_nested_request_t *out);

/* AWS's status of a closed child: SUCCEEDED, FAILED, TIMED_OUT, or ABORTED
 * (canceled or terminated). */
const char *swf_nested_status(swf_asl_status_t status);

/* The ARNs swf gives executions and state machines (the same as
 * $$.Execution.Id and $$.StateMachine.Id: region "local", account
 * 000000000000). Written into buf. */
#define SWF_NESTED_ARN_BYTES 320
void swf_nested_execution_arn(const char *machine, const char *id, char buf[SWF_NESTED_ARN_BYTES]);
void swf_nested_machine_arn(const char *machine, char buf[SWF_NESTED_ARN_BYTES]);

/* AWS's message for a state machine that does not exist (swf run --local
 * looks for it as NAME.asl.json or NAME.json beside the definition). */
void swf_nested_missing_message(const char *machine, char *buf, size_t size);

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

/* Adds to `names` (an object used as a set) the state machines the nested
 * Tasks of a definition name literally (StateMachineArn in Parameters or
 * Arguments, not computed), anywhere in it. */
void swf_nested_machines_named(json_object *definition, json_object *names);

/* The links of an execution, read from its history: {"parent":
 * {"executionId", "initiatedEventId"}} when it is a nested execution, and
 * "children": [{"executionId", "scheduledEventId", "state"}], one per
 * child its nested Tasks started (the ActivityTaskStarted of such a Task
 * names the child: identity "swf-nested:ID"). A new reference. */
#define SWF_NESTED_IDENTITY "swf-nested:"
json_object *swf_nested_links(const swf_event_list_t *events);

/* ---- the store's part (decider/nested_store.c): the decider daemon's ---- */

/* What the parent records for its nested Task: a result, or an error and a
 * cause (owned: swf_nested_answer_clear), or nothing yet (all NULL: the
 * child runs, or the message came late). child_id names the child. */
typedef struct swf_nested_answer {
    char child_id[SWF_NESTED_NAME_BYTES + 1];
    json_object *result;
    char *error;
    char *cause;
} swf_nested_answer_t;

void swf_nested_answer_clear(swf_nested_answer_t *a);

/*
 * Starts the child of the parent's startExecution Task whose
 * ActivityTaskScheduled is `scheduled` (an event of parent_id), at now_ms,
 * through the PostgreSQL store: WorkflowExecutionStarted naming the parent
 * and DecisionTaskScheduled, in one append. Idempotent: a child of that
 * name that already names this parent and event is the one started before
 * (a redelivered message, a decider that crashed after the start), and is
 * not started again. The answer is the request-response result, or the
 * error the Task fails with (no such state machine, a name taken by
 * another execution, a bad request); the other patterns get none yet.
 * The child keeps the parent's task_list_prefix (swf run --dev's worker
 * serves both) and is nested parent_depth + 1 deep, at most
 * SWF_LIMIT_NESTED_DEPTH. Errors are the store's (retry).
 */
swf_error_t *swf_nested_child_start(swf_history_store_t *store, const char *parent_id,
                                    int parent_depth, const char *task_list_prefix,
                                    const swf_event_t *scheduled, int64_t now_ms,
                                    swf_nested_answer_t *out);

/*
 * The answer of the parent's nested Task `scheduled` (.sync or .sync:2)
 * now that its child closed, read from the child's history: its start and
 * its close. Nothing (an empty answer) when the child is still open or
 * does not name this parent and event. Errors are the store's.
 */
swf_error_t *swf_nested_child_answer(swf_history_store_t *store, const char *parent_id,
                                     const swf_event_t *scheduled, swf_nested_answer_t *out);

#endif
