/*
 * replay_common.h - what `swf replay`, `swf timeline` and `swf graph` share:
 * loading a history (from PostgreSQL by execution id, or from an exported
 * JSON-lines file) and folding it through the interpreter.
 *
 * The replay driver applies the events one by one with swf_asl_exec_apply,
 * which re-derives every decision task's decisions and checks the recorded
 * decision events against them; at the end it calls swf_asl_exec_check_end.
 * The driver adds only what the debugging commands need around that fold:
 * stopping at an event id, substituting the definition, a trace callback,
 * and a callback per decision task with the events that arrived since the
 * previous one and the decisions derived for it.
 *
 * Ownership: histories and options are borrowed; the result owns its
 * execution object and error (swf_cli_replay_result_free). Thread-safety:
 * none needed; one replay per thread.
 */
#ifndef SWF_CLI_REPLAY_COMMON_H
#define SWF_CLI_REPLAY_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "decider/asl/exec.h"
#include "protocol/error.h"
#include "protocol/event.h"

/* Loads a whole history: from `file` when it is not NULL ("-" is standard
 * input), else execution `id` from the PostgreSQL history
 * (SWF_DATABASE_URL). Appends to `out`. */
swf_error_t *swf_cli_replay_history_load(const char *id, const char *file, swf_event_list_t *out);

/* Called once per decision task that completes in the history, before its
 * decisions are checked: `from`..`to` (indexes into the history, `to`
 * inclusive, the DecisionTaskStarted event) are the events since the
 * previous task; `derived` the decisions replay derives. */
typedef void (*swf_cli_replay_task_fn)(void *ctx, const swf_event_list_t *events, size_t from,
                                       size_t to, size_t task_number,
                                       const swf_asl_decisions_t *derived);

typedef struct swf_cli_replay_options {
    int64_t until_event_id;      /* stop after this event (0: the whole history) */
    json_object *definition;     /* NULL: the recorded one; else replaces it (borrowed) */
    swf_asl_trace_fn trace;      /* may be NULL */
    void *trace_ctx;
    swf_cli_replay_task_fn task; /* may be NULL */
    void *task_ctx;
} swf_cli_replay_options_t;

typedef struct swf_cli_replay_result {
    swf_asl_exec_t *exec;    /* the execution as of the last event applied */
    size_t events_applied;   /* events applied without error */
    size_t decision_tasks;   /* DecisionTaskCompleted events applied */
    size_t decisions;        /* recorded decision events checked and matching */
    swf_error_t *error;      /* NULL, or why the history does not replay (NONDETERMINISM, INPUT) */
} swf_cli_replay_result_t;

/* Replays `events` (a whole history, ids from 1). A history that does not
 * replay is not an error of this function: it is reported in result->error.
 * Returns an error only when the options are unusable (an --until id past
 * the end, a history without WorkflowExecutionStarted). */
swf_error_t *swf_cli_replay_run(const swf_event_list_t *events,
                                const swf_cli_replay_options_t *opt,
                                swf_cli_replay_result_t *result);

void swf_cli_replay_result_free(swf_cli_replay_result_t *result);

/* True for the events that record a decision (the ones replay checks). */
bool swf_cli_replay_is_decision(swf_event_type_t type);

/* The execution id recorded in WorkflowExecutionStarted, or "?" (borrowed). */
const char *swf_cli_replay_execution_id(const swf_event_list_t *events);

/* Maps an error to an exit status (cli.h) and prints it on stderr as
 * "swf CMD: message" with its cause; frees it. */
int swf_cli_replay_fail(const char *cmd, swf_error_t *err);

/* A value cut to at most `max` characters of compact JSON ("..." marks the
 * cut); writes into buf of size max + 4. */
const char *swf_cli_replay_json_cut(json_object *v, char *buf, size_t max);

#endif
