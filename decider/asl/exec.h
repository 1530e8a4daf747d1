/*
 * exec.h - an execution of a state machine, as a fold over its history.
 *
 * The interpreter is a pure function of (definition, events): it never reads
 * the clock, random numbers or the environment. An execution object is built
 * by applying the events of a history one by one, in order:
 *
 *   - WorkflowExecutionStarted carries the definition and the input;
 *   - results (ActivityTask*, TimerFired, cancel requests) are delivered to
 *     the part of the machine waiting for them;
 *   - at each decision task the interpreter runs every part of the machine
 *     that can move until it must wait again, deriving decisions (schedule
 *     an activity, start a timer, close the execution). "Now" is the time of
 *     the DecisionTaskStarted event.
 *
 * Live deciding and replay are the same code: a decider applies events up to
 * DecisionTaskStarted, calls swf_asl_exec_decide() and appends the decisions
 * as events (which it then applies too). When replaying a recorded history,
 * applying DecisionTaskCompleted derives the decisions itself, and each
 * decision event that follows is checked against them: a difference is an
 * SWF_E_NONDETERMINISM error naming the event id, the state and both
 * versions. The error's cause is a JSON object: {"eventId", "state", "path"
 * (through Parallel branches and Map iterations, "Par[1]/Map[3]"),
 * "recorded": {"eventType","attributes"} or null, "derived": the same or
 * null}.
 *
 * Ownership: the execution copies (references) what it keeps from events.
 * Decisions handed out are owned by the caller. Thread-safety: one thread at
 * a time per execution object.
 */
#ifndef SWF_ASL_EXEC_H
#define SWF_ASL_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "protocol/error.h"
#include "protocol/event.h"

typedef struct swf_asl_exec swf_asl_exec_t;

/* A decision is the event it becomes: its type and its attributes. */
typedef struct swf_asl_decision {
    swf_event_type_t type;
    json_object *attrs; /* owned */
} swf_asl_decision_t;

typedef struct swf_asl_decisions {
    swf_asl_decision_t *items;
    size_t count;
    size_t cap;
} swf_asl_decisions_t;

void swf_asl_decisions_clear(swf_asl_decisions_t *d);
void swf_asl_decisions_free(swf_asl_decisions_t *d);

typedef enum swf_asl_status {
    SWF_ASL_NOT_STARTED,
    SWF_ASL_RUNNING,
    SWF_ASL_SUCCEEDED,
    SWF_ASL_FAILED,
    SWF_ASL_TIMED_OUT,
    SWF_ASL_CANCELED,
    SWF_ASL_TERMINATED,
} swf_asl_status_t;

/* "RUNNING", "SUCCEEDED", ... (Step Functions' names; ABORTED for both
 * canceled and terminated is not used: we keep SWF's distinction). */
const char *swf_asl_status_name(swf_asl_status_t status);

/* What happens inside the machine, for the timeline and the graph. */
typedef enum swf_asl_trace_kind {
    SWF_ASL_STATE_ENTERED,
    SWF_ASL_STATE_EXITED,  /* succeeded; `data` is the state output */
    SWF_ASL_STATE_FAILED,  /* `data` is {"Error","Cause"} */
    SWF_ASL_STATE_RETRIED, /* `data` is {"Error","Cause","RetryCount"} */
    SWF_ASL_STATE_CAUGHT,  /* `data` is {"Error","Cause","Next"} */
} swf_asl_trace_kind_t;

typedef struct swf_asl_trace {
    swf_asl_trace_kind_t kind;
    const char *path;       /* position through branches/iterations, "" at top level */
    const char *state;      /* state name */
    const char *state_type; /* "Task", "Map", ... */
    json_object *data;      /* borrowed: input for ENTERED, output or error otherwise */
    int64_t time_ms;        /* the decision task's time */
    int64_t event_id;       /* the DecisionTaskStarted event id */
} swf_asl_trace_t;

typedef void (*swf_asl_trace_fn)(void *ctx, const swf_asl_trace_t *trace);

/* A Map's iterations begin: its items are read and counted, its
 * MaxConcurrency and tolerated failures evaluated (for the Map Runs of the
 * Step Functions API, api/maprun.c). After the Map's ENTERED trace, before
 * the first iteration's; again for each run of the Map (a Retry); and when
 * a signal changes its limits while it runs (`update`). */
typedef struct swf_asl_map_trace {
    const char *path;        /* as in swf_asl_trace_t */
    const char *state;       /* the Map's name */
    const char *label;       /* its Label, or NULL */
    bool distributed;        /* its processor's Mode is DISTRIBUTED */
    json_object *iterations; /* borrowed: each iteration's input (a batch
                                {"Items": [...]} with ItemBatcher) */
    bool batched;            /* ItemBatcher */
    size_t max_concurrency;  /* 0: no limit */
    int64_t tolerated_count; /* -1: not set */
    double tolerated_pct;    /* -1: not set */
    int64_t time_ms;         /* the decision task's time */
    int64_t event_id;        /* the DecisionTaskStarted event id */
    /* NULL when the iterations begin; for a change, the signal's input
     * applied (borrowed; SWF_ASL_MAP_UPDATE_SIGNAL). */
    json_object *update;
} swf_asl_map_trace_t;

/* The signal (WorkflowExecutionSignaled's signalName) that changes the
 * limits of a Map's iterations while they run (UpdateMapRun): its input is
 * {"path", "state" (the Map's, as in swf_asl_trace_t), "beganEventId" (the
 * event_id of the map trace of the run it changes), and any of
 * "maxConcurrency" (0: no limit), "toleratedFailureCount",
 * "toleratedFailurePercentage"}. A Map not running that run any more
 * (closed, retried, abandoned), or an input out of range, is left alone.
 * Applied in history order, so replay sees what the decider saw. */
#define SWF_ASL_MAP_UPDATE_SIGNAL "swf.mapRun.update"

typedef void (*swf_asl_map_trace_fn)(void *ctx, const swf_asl_map_trace_t *map);

swf_asl_exec_t *swf_asl_exec_new(void);
void swf_asl_exec_free(swf_asl_exec_t *exec);

/* The events a history may hold (0: SWF_LIMIT_HISTORY_EVENTS). A decision
 * that would leave too little room for the answers still to come fails the
 * execution with States.Runtime instead (exec.c, history_limit_check). Only
 * tests set another limit; a history replays only with the limit it was
 * made with. */
void swf_asl_exec_set_history_limit(swf_asl_exec_t *exec, int64_t events);

/* Skips the validation of the definition when WorkflowExecutionStarted is
 * applied: the caller validated it already (swf run --local, the decider of
 * an execution started through `swf start`). An untrusted definition that is
 * invalid fails the execution with States.Runtime at the first decision. */
void swf_asl_exec_set_trusted(swf_asl_exec_t *exec, bool trusted);

/* The secret that signs task tokens ($$.Task.Token of .waitForTaskToken
 * Tasks, protocol/token.h); the default is SWF_TOKEN_DEV_SECRET. Replaying a
 * history needs the secret it was recorded with. Copied. */
void swf_asl_exec_set_token_secret(swf_asl_exec_t *exec, const char *secret);

/* Calls fn for every state entered/exited/failed/retried/caught, as the
 * machine moves (while applying events or deciding). */
void swf_asl_exec_set_trace(swf_asl_exec_t *exec, swf_asl_trace_fn fn, void *ctx);
/* Sets the callback told when a Map's iterations begin (may be NULL); it
 * changes nothing the machine does. */
void swf_asl_exec_set_map_trace(swf_asl_exec_t *exec, swf_asl_map_trace_fn fn, void *ctx);

/* Applies the next event of the history (ids must follow each other from 1).
 * Errors: SWF_E_INPUT for an event that does not fit the history (wrong id,
 * unknown activity), SWF_E_NONDETERMINISM for a recorded decision that the
 * interpreter does not derive. After an error the execution object must not
 * be used further. */
swf_error_t *swf_asl_exec_apply(swf_asl_exec_t *exec, const swf_event_t *ev);

/* Derives the decisions of the open decision task (DecisionTaskStarted must
 * be the last event applied). Appends them to `out`. The decider then
 * appends DecisionTaskCompleted and one event per decision, in order, and
 * applies them. The attributes objects are shared with the execution, which
 * checks the events against them; the caller may add the one field an event
 * has that its decision has not (decisionTaskCompletedEventId) and nothing
 * else. */
swf_error_t *swf_asl_exec_decide(swf_asl_exec_t *exec, swf_asl_decisions_t *out);

/* At the end of a replayed history: an SWF_E_NONDETERMINISM error when the
 * last decision task derived decisions that the history does not record. */
swf_error_t *swf_asl_exec_check_end(const swf_asl_exec_t *exec);

swf_asl_status_t swf_asl_exec_status(const swf_asl_exec_t *exec);
/* The id of the last event applied. */
int64_t swf_asl_exec_last_event_id(const swf_asl_exec_t *exec);
/* True while a decision task is scheduled or started and not completed. */
bool swf_asl_exec_decision_open(const swf_asl_exec_t *exec);
/* The output (SUCCEEDED) or NULL: borrowed. */
json_object *swf_asl_exec_output(const swf_asl_exec_t *exec);
/* The error name and cause (FAILED, TIMED_OUT, ...), or NULL: borrowed. */
const char *swf_asl_exec_error(const swf_asl_exec_t *exec);
const char *swf_asl_exec_cause(const swf_asl_exec_t *exec);

/* Redrive (exec_redrive.c; Step Functions' RedriveExecution): NULL when a
 * WorkflowExecutionRedriven event may be applied now (the execution failed,
 * timed out or was stopped, and ran a state), else why not. Applying one
 * makes the execution RUNNING; the decision task that follows enters again
 * every state that did not end well, keeping the results of those that
 * did. */
const char *swf_asl_exec_not_redrivable(const swf_asl_exec_t *exec);
/* The WorkflowExecutionRedriven events applied. */
int64_t swf_asl_exec_redrive_count(const swf_asl_exec_t *exec);

/* Whether a Retry's or Catch's ErrorEquals (an array of names) takes
 * `error`, by AWS's rules (exec_retry.c): States.ALL, States.TaskFailed,
 * States.Timeout and States.Runtime as the interpreter reads them. */
bool swf_asl_error_equals(json_object *error_equals, const char *error);

/* A JSON picture of the execution's state now: active states with their
 * inputs, open activities and timers, retry counters, Map progress. A new
 * reference. Used by `swf replay --until`. */
json_object *swf_asl_exec_snapshot(const swf_asl_exec_t *exec);

/* The first rule (executions whose WorkflowExecutionStarted records no
 * taskListRule; the current one is in resource.h): the task list an ASL Task
 * Resource maps to: the NAME of
 * arn:...:activity:NAME or arn:...:function:NAME (without a version or
 * alias), otherwise the resource with every character outside
 * [A-Za-z0-9._-] replaced by '_'. Writes at most `size` bytes. */
void swf_asl_resource_task_list(const char *resource, char *buf, size_t size);

#endif
