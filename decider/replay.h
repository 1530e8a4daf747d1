/*
 * replay.h - folding a recorded history through the interpreter, the way
 * a live decider folded it, to see where it went and whether it still
 * goes there.
 *
 * The driver applies the events one by one with swf_asl_exec_apply, which
 * re-derives every decision task's decisions and checks the recorded
 * decision events against them; at the end it calls swf_asl_exec_check_end.
 * Around that fold it adds only what its callers need: stopping at an event
 * id, substituting the definition, a trace callback, and a callback per
 * decision task with the events that arrived since the previous one and the
 * decisions derived for it. Its callers are the debugging commands (`swf
 * replay`, `swf timeline`, `swf graph`), the recorded-history determinism
 * guard (tests/decider/test_histories.c) and the replay bench.
 *
 * Like the interpreter, it does no I/O: where the history comes from (a
 * file, PostgreSQL) is the caller's business.
 *
 * Ownership: histories and options are borrowed; the result owns its
 * execution object and error (swf_decider_replay_result_free).
 * Thread-safety: none needed; one replay per thread.
 */
#ifndef SWF_DECIDER_REPLAY_H
#define SWF_DECIDER_REPLAY_H

#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "decider/asl/exec.h"
#include "protocol/error.h"
#include "protocol/event.h"

/* Called once per decision task that completes in the history, before its
 * decisions are checked: `from`..`to` (indexes into the history, `to`
 * inclusive, the DecisionTaskStarted event) are the events since the
 * previous task; `derived` the decisions replay derives. */
typedef void (*swf_decider_replay_task_fn)(void *ctx, const swf_event_list_t *events, size_t from,
                                           size_t to, size_t task_number,
                                           const swf_asl_decisions_t *derived);

typedef struct swf_decider_replay_options {
    int64_t until_event_id;  /* stop after this event (0: the whole history) */
    json_object *definition; /* NULL: the recorded one; else replaces it (borrowed) */
    swf_asl_trace_fn trace;  /* may be NULL */
    void *trace_ctx;
    swf_asl_map_trace_fn map_trace; /* may be NULL */
    void *map_trace_ctx;
    swf_decider_replay_task_fn task; /* may be NULL */
    void *task_ctx;
} swf_decider_replay_options_t;

typedef struct swf_decider_replay_result {
    swf_asl_exec_t *exec;  /* the execution as of the last event applied */
    size_t events_applied; /* events applied without error */
    size_t decision_tasks; /* DecisionTaskCompleted events applied */
    size_t decisions;      /* recorded decision events checked and matching */
    swf_error_t *error;    /* NULL, or why the history does not replay (NONDETERMINISM, INPUT) */
} swf_decider_replay_result_t;

/* Replays `events` (a whole history, ids from 1) with the task-token secret
 * of the environment (protocol/token.h). A history that does not replay is
 * not an error of this function: it is reported in result->error. Returns
 * an error only when the options are unusable (an --until id past the end,
 * a history without WorkflowExecutionStarted). */
swf_error_t *swf_decider_replay_run(const swf_event_list_t *events,
                                    const swf_decider_replay_options_t *opt,
                                    swf_decider_replay_result_t *result);

/* Frees what the result owns and zeroes it; a zeroed result is fine. */
void swf_decider_replay_result_free(swf_decider_replay_result_t *result);

#endif
