/*
 * local.h - run an execution in-process: `swf run --local`.
 *
 * The same decider code as in production drives the execution: events go
 * into a history store, the interpreter replays them and derives decisions,
 * which are appended as events. Activities are answered from a mocks
 * document instead of by workers, and time is virtual: timers fire as soon
 * as nothing else can happen, and the clock jumps to their firing time.
 *
 * Mocks: decider/mocks.h (a Task without mocks echoes its input).
 *
 * Nested executions (a Task on arn:aws:states:::states:startExecution*)
 * run in the same process, in the same store under their own execution
 * ids, on the same clock and mocks: the state machine a child names is
 * looked for as a file beside the definition (machine_dir).
 *
 * Ownership: the options are borrowed; the result owns its fields
 * (swf_local_result_free). Thread-safety: one run per thread.
 */
#ifndef SWF_DECIDER_LOCAL_H
#define SWF_DECIDER_LOCAL_H

#include <json-c/json.h>

#include "decider/asl/exec.h"
#include "history/store.h"
#include "protocol/error.h"

typedef struct swf_local_options {
    json_object *definition; /* validated by the interpreter unless `trusted` */
    json_object *input;
    json_object *mocks;       /* may be NULL */
    json_object *events;      /* Serverless Workflow: CloudEvents to deliver (SPEC 14), or NULL */
    const char *machine_name; /* NULL: "StateMachine" */
    const char *execution_id; /* NULL: "local" */
    /* Nested executions (decider/nested.h): a child's state machine NAME is
     * the file NAME.asl.json or NAME.json in this folder (NULL: "."). */
    const char *machine_dir;
    const char *parent_id;   /* a child's: its parent's execution id, */
    int64_t parent_event_id; /* and the parent's ActivityTaskScheduled */
    int64_t stop_ms;         /* a child's: terminated if it runs past this (0: never) */
    int64_t start_ms;        /* the virtual clock's start */
    bool trusted;            /* the caller validated the definition */
    int64_t history_limit;   /* tests only; 0: SWF_LIMIT_HISTORY_EVENTS */
} swf_local_options_t;

typedef struct swf_local_result {
    swf_asl_status_t status;
    json_object *output; /* SUCCEEDED */
    char *error;         /* otherwise */
    char *cause;
    int64_t events;  /* the length of the history */
    int64_t stop_ms; /* the virtual time it closed at */
} swf_local_result_t;

/* Runs the execution to its end, keeping its history in `store` under the
 * execution id. Errors are operating errors (a limit, a broken mock); the
 * execution's own failure is a result, not an error. */
swf_error_t *swf_local_run(const swf_local_options_t *opt, swf_history_store_t *store,
                           swf_local_result_t *result);

void swf_local_result_free(swf_local_result_t *result);

/* The folder of a definition file (".": the current one), where its nested
 * Tasks' machines are looked for. Writes at most size bytes. */
void swf_local_machine_dir(const char *definition_path, char *buf, size_t size);

/* The definition of the state machine `machine` as a nested Task of a run
 * finds it: dir/MACHINE.asl.json, else dir/MACHINE.json; NULL when neither
 * reads. A new reference. */
json_object *swf_local_machine_read(const char *dir, const char *machine);

/* Every state machine a definition's nested Tasks name literally, and
 * theirs, read as above: an object of name -> definition (a new
 * reference). A name whose file does not read is left out (its Task fails
 * at run time, as a machine that does not exist). At most
 * SWF_LIMIT_NESTED_DEPTH machines. */
json_object *swf_local_machines_read(const char *dir, json_object *definition);

#endif
