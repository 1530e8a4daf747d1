/*
 * replay_common.h - what `swf replay`, `swf timeline` and `swf graph` share
 * around the replay driver (decider/replay.h): loading the history the user
 * named (from PostgreSQL by execution id, or from an exported JSON-lines
 * file), mapping an error to an exit status, cutting a value to a line.
 *
 * Ownership: arguments are borrowed; what a function returns is said at
 * it. Thread-safety: none needed; one command per process.
 */
#ifndef SWF_CLI_REPLAY_COMMON_H
#define SWF_CLI_REPLAY_COMMON_H

#include <stddef.h>
#include <json-c/json.h>

#include "protocol/error.h"
#include "protocol/event.h"

/* Loads a whole history: from `file` when it is not NULL ("-" is standard
 * input), else execution `id` from the PostgreSQL history
 * (SWF_DATABASE_URL). Appends to `out`. */
swf_error_t *swf_cli_replay_history_load(const char *id, const char *file, swf_event_list_t *out);

/* The execution id recorded in WorkflowExecutionStarted, or "?" (borrowed). */
const char *swf_cli_replay_execution_id(const swf_event_list_t *events);

/* Maps an error to an exit status (cli.h) and prints it on stderr as
 * "swf CMD: message" with its cause; frees it. */
int swf_cli_replay_fail(const char *cmd, swf_error_t *err);

/* A value cut to at most `max` characters of compact JSON ("..." marks the
 * cut); writes into buf of size max + 4. */
const char *swf_cli_replay_json_cut(json_object *v, char *buf, size_t max);

#endif
