/*
 * check.h - the invariants every stored history must hold, checked.
 *
 * The crash tests kill deciders, workers and swf-history in the middle of
 * load and then ask one question of every history: is it still a history
 * the engine could have written? This is that question, as a function of
 * the events alone (swf_decider_check_events) or of an execution in any
 * store (swf_decider_check_execution). It checks:
 *
 *   - ids: dense from 1, no gap, no duplicate (a fork would show as one);
 *   - WorkflowExecutionStarted is the first event, and the only one;
 *   - at most one close event (WorkflowExecutionCompleted/Failed/TimedOut/
 *     Canceled/Terminated), and nothing after it;
 *   - decision tasks: at most one open at a time, each Started and
 *     Completed/TimedOut naming the open task's events, decision events
 *     only directly after DecisionTaskCompleted and naming it, and a new
 *     task scheduled only when something happened since the last one
 *     completed (an event other than decision tasks and decisions: a
 *     result, a timer, a signal...; a duplicate "decide" changes nothing);
 *   - activities: activityId unique in the execution; Started, results
 *     (Completed, Failed, TimedOut, Canceled) and heartbeats name an
 *     ActivityTaskScheduled event; at most one start and one result per
 *     activity, nothing recorded for it after its result;
 *   - timers: a timer fires or is canceled at most once, only after its
 *     TimerStarted, and a timerId is not started again while open;
 *   - the history replays through the interpreter (decider/asl/exec.h)
 *     without a non-determinism or input error (only when the ids are
 *     dense: the interpreter needs them so).
 *
 * Problems are sentences naming the event they were found at
 * ("event 12: ..."), in the order of the history; at most
 * SWF_DECIDER_CHECK_PROBLEMS_MAX are kept per history, followed then by
 * one item that says how many more there were.
 *
 * It lives beside the interpreter's other drivers because the last check
 * needs the interpreter: it is the fold of decider/replay.c, the one `swf
 * replay` runs. The history library stores histories and knows nothing of
 * ASL; the store read here is any history/store.h.
 *
 * Ownership: events and the store are borrowed; *out belongs to the caller
 * (swf_decider_check_problems_free), also after an error. Thread-safety:
 * none kept; one call per store handle at a time.
 */
#ifndef SWF_DECIDER_CHECK_H
#define SWF_DECIDER_CHECK_H

#include <stddef.h>

#include "history/store.h"
#include "protocol/error.h"
#include "protocol/event.h"

/* Problems kept per history; beyond it one item counts the rest. */
#define SWF_DECIDER_CHECK_PROBLEMS_MAX 100

typedef struct swf_decider_check_problems {
    size_t count;
    char **items; /* "event 12: ...", owned */
} swf_decider_check_problems_t;

/* Checks one history (events as loaded from a store, with the ids as
 * stored). Appends what is wrong to *out (which starts empty, or holds the
 * problems of earlier calls); a clean history appends nothing. Returns an
 * error only when it cannot check at all (an empty list). */
swf_error_t *swf_decider_check_events(const swf_event_list_t *events,
                                      swf_decider_check_problems_t *out);

/* As swf_decider_check_events, without the replay: the rules of ids,
 * start and close, decision tasks, activities and timers only. What `swf
 * import` asks of a file: a history recorded under another deployment's
 * token secret, or by an older interpreter, is still a history, but one
 * with an event after its close is not. */
swf_error_t *swf_decider_check_structure(const swf_event_list_t *events,
                                         swf_decider_check_problems_t *out);

/* Loads the whole history of `execution_id` from `store` and checks it.
 * Errors are the store's (SWF_E_NOTFOUND, SWF_E_DB, ...). */
swf_error_t *swf_decider_check_execution(swf_history_store_t *store, const char *execution_id,
                                         swf_decider_check_problems_t *out);

/* Frees the items and empties *p; a zeroed or empty *p is fine. */
void swf_decider_check_problems_free(swf_decider_check_problems_t *p);

#endif
