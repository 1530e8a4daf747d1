/*
 * event.h - history events, in Amazon SWF's vocabulary.
 *
 * An execution is nothing but its list of events. Each event has a dense id
 * (1, 2, 3, ... within its execution), a type, a time (milliseconds since
 * the epoch, UTC) and a JSON object of attributes whose names follow SWF
 * where SWF has them (see protocol/README.md for every event's attributes).
 * Payloads (inputs, results) are JSON values, not JSON-encoded strings.
 *
 * The exported form of an event, one per line in `swf run --local --history`
 * and `swf history --json`, is SWF's shape:
 *
 *   {"eventId":3,"eventType":"DecisionTaskCompleted",
 *    "eventTimestamp":"2026-11-21T10:00:00.000Z",
 *    "decisionTaskCompletedEventAttributes":{...}}
 *
 * Ownership: an swf_event_t owns its attributes (one reference). A list owns
 * its events.
 */
#ifndef SWF_PROTOCOL_EVENT_H
#define SWF_PROTOCOL_EVENT_H

#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "protocol/error.h"

#define SWF_EVENT_TYPES(X)                                                                         \
    X(WORKFLOW_EXECUTION_STARTED, WorkflowExecutionStarted)                                        \
    X(WORKFLOW_EXECUTION_SIGNALED, WorkflowExecutionSignaled)                                      \
    X(WORKFLOW_EXECUTION_CANCEL_REQUESTED, WorkflowExecutionCancelRequested)                       \
    X(WORKFLOW_EXECUTION_COMPLETED, WorkflowExecutionCompleted)                                    \
    X(WORKFLOW_EXECUTION_FAILED, WorkflowExecutionFailed)                                          \
    X(WORKFLOW_EXECUTION_TIMED_OUT, WorkflowExecutionTimedOut)                                     \
    X(WORKFLOW_EXECUTION_CANCELED, WorkflowExecutionCanceled)                                      \
    X(WORKFLOW_EXECUTION_TERMINATED, WorkflowExecutionTerminated)                                  \
    X(COMPLETE_WORKFLOW_EXECUTION_FAILED, CompleteWorkflowExecutionFailed)                         \
    X(FAIL_WORKFLOW_EXECUTION_FAILED, FailWorkflowExecutionFailed)                                 \
    X(CANCEL_WORKFLOW_EXECUTION_FAILED, CancelWorkflowExecutionFailed)                             \
    X(DECISION_TASK_SCHEDULED, DecisionTaskScheduled)                                              \
    X(DECISION_TASK_STARTED, DecisionTaskStarted)                                                  \
    X(DECISION_TASK_COMPLETED, DecisionTaskCompleted)                                              \
    X(DECISION_TASK_TIMED_OUT, DecisionTaskTimedOut)                                               \
    X(ACTIVITY_TASK_SCHEDULED, ActivityTaskScheduled)                                              \
    X(ACTIVITY_TASK_STARTED, ActivityTaskStarted)                                                  \
    X(ACTIVITY_TASK_COMPLETED, ActivityTaskCompleted)                                              \
    X(ACTIVITY_TASK_FAILED, ActivityTaskFailed)                                                    \
    X(ACTIVITY_TASK_TIMED_OUT, ActivityTaskTimedOut)                                               \
    X(ACTIVITY_TASK_CANCEL_REQUESTED, ActivityTaskCancelRequested)                                 \
    X(ACTIVITY_TASK_CANCELED, ActivityTaskCanceled)                                                \
    X(ACTIVITY_TASK_HEARTBEAT_RECORDED, ActivityTaskHeartbeatRecorded)                             \
    X(TIMER_STARTED, TimerStarted)                                                                 \
    X(TIMER_FIRED, TimerFired)                                                                     \
    X(TIMER_CANCELED, TimerCanceled)                                                               \
    X(MARKER_RECORDED, MarkerRecorded)                                                             \
    X(WORKFLOW_EXECUTION_REDRIVEN, WorkflowExecutionRedriven)

typedef enum swf_event_type {
    SWF_EVENT_NONE = 0,
#define SWF_X(id, name) SWF_EVENT_##id,
    SWF_EVENT_TYPES(SWF_X)
#undef SWF_X
        SWF_EVENT_TYPE_COUNT
} swf_event_type_t;

typedef struct swf_event {
    int64_t id;
    swf_event_type_t type;
    int64_t time_ms;
    json_object *attrs; /* owned; always an object */
} swf_event_t;

typedef struct swf_event_list {
    swf_event_t *items;
    size_t count;
    size_t cap;
} swf_event_list_t;

/* "WorkflowExecutionStarted" etc.; NULL for an unknown value. */
const char *swf_event_type_name(swf_event_type_t type);
/* Parses a type name; returns SWF_EVENT_NONE when it is unknown. */
swf_event_type_t swf_event_type_parse(const char *name);
/* The attributes key of the exported form: "workflowExecutionStartedEventAttributes". */
const char *swf_event_attrs_key(swf_event_type_t type);
/* True for the five events that close an execution. */
bool swf_event_type_is_close(swf_event_type_t type);
/* True for the events that record a decision (protocol/README.md, "Decision
 * tasks"): they follow their DecisionTaskCompleted directly and replay checks
 * them against the decisions it derives. */
bool swf_event_type_is_decision(swf_event_type_t type);

/* The exported (SWF-shaped) form of an event: a new reference. */
json_object *swf_event_to_json(const swf_event_t *ev);
/* Parses the exported form; *out takes a new reference to the attributes.
 * Errors describe what is wrong with the event (SWF_E_INPUT). */
swf_error_t *swf_event_from_json(json_object *obj, swf_event_t *out);

/* Appends an event to the list, taking `attrs` (one reference). The id is
 * the list's next id (count + 1): lists always hold a whole history. */
swf_event_t *swf_event_list_push(swf_event_list_t *list, swf_event_type_t type, int64_t time_ms,
                                 json_object *attrs);
/* Appends a copy of ev (a new reference to its attributes), keeping its id. */
void swf_event_list_push_copy(swf_event_list_t *list, const swf_event_t *ev);
/* Releases every event, keeps the list usable (empty). */
void swf_event_list_clear(swf_event_list_t *list);
/* Releases every event and the storage. */
void swf_event_list_free(swf_event_list_t *list);

/* Reads an exported history: one event per line (blank lines skipped), ids
 * dense from 1. Errors name the line. */
swf_error_t *swf_event_list_read_file(const char *path, swf_event_list_t *out);

/* An event's hash in the chain of its history (history/CHAIN.md), as the
 * exported form's optional "eventHash" carries it: 64 lowercase
 * hexadecimal digits. */
#define SWF_EVENT_HASH_HEX 64
typedef char swf_event_hash_t[SWF_EVENT_HASH_HEX + 1];

/* The same, and *hashes gets each event's eventHash (a new array of
 * out->count, the caller frees it), or NULL when no line has one (a file
 * exported before the chain). A file where some lines carry one and others
 * do not, or one that is not 64 lowercase hexadecimal digits, is refused,
 * naming the line. */
swf_error_t *swf_event_list_read_file_hashes(const char *path, swf_event_list_t *out,
                                             swf_event_hash_t **hashes);

#endif
