/*
 * exec_internal.h - what the files of the interpreter share, and nothing
 * outside them includes.
 *
 * The interpreter (exec.h) is one module in five files, cut along its seams:
 *
 *   exec.c          the core: the execution object, frames and their tree,
 *                   the ready queue, activities and timers, decide() and the
 *                   apply of events (with the replay check), the snapshot;
 *   exec_states.c   what entering each state does: Pass, Task, Choice, Wait,
 *                   Succeed, Fail;
 *   exec_children.c Parallel and Map: starting branches and iterations,
 *                   batching, concurrency, tolerated failures, and their
 *                   results gathered;
 *   exec_io.c       a state's input and output processing, JSONPath
 *                   (InputPath, Parameters, ResultSelector, ResultPath,
 *                   OutputPath, Assign) and JSONata (Arguments, Output,
 *                   Assign, $states) behind one interface (swf_asl__io_*),
 *                   so that a state handler never asks which query language
 *                   its state uses;
 *   exec_retry.c    errors in a state: Retry, then Catch, then the frame
 *                   fails.
 *
 * Symbols shared between these files are named swf_asl__<noun>_<verb> (two
 * underscores: internal to the module, as libuv's uv__). The data structures
 * are here in full because every file walks them; the invariants are stated
 * where the fields are declared. Ownership follows exec.h and protocol/json.h:
 * arguments are borrowed unless a comment says a function takes them.
 */
#ifndef SWF_ASL_EXEC_INTERNAL_H
#define SWF_ASL_EXEC_INTERNAL_H

#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <json-c/linkhash.h>

#include "decider/asl/env.h"
#include "decider/asl/exec.h"
#include "protocol/alloc.h"

#define ERR_RUNTIME "States.Runtime"
#define ERR_ALL "States.ALL"
#define ERR_TASK_FAILED "States.TaskFailed"
#define ERR_TIMEOUT "States.Timeout"
#define ERR_HEARTBEAT "States.HeartbeatTimeout"
#define ERR_NO_CHOICE "States.NoChoiceMatched"
#define ERR_TOLERATED "States.ExceedToleratedFailureThreshold"
#define ERR_DATA_LIMIT "States.DataLimitExceeded"
#define ERR_QUERY "States.QueryEvaluationError"

typedef enum state_type {
    ST_PASS,
    ST_TASK,
    ST_CHOICE,
    ST_WAIT,
    ST_SUCCEED,
    ST_FAIL,
    ST_PARALLEL,
    ST_MAP,
} state_type_t;

/* "Pass", "Task", ... indexed by state_type_t. */
extern const char *const swf_asl__state_type_names[];

typedef enum phase {
    PH_ENTER,    /* about to run the current state */
    PH_ACTIVITY, /* waiting for an activity's result */
    PH_TIMER,    /* waiting for a Wait state's timer */
    PH_RETRY,    /* waiting for a retry back-off timer */
    PH_CHILDREN, /* waiting for branches or iterations */
    PH_SWEVENT,  /* a Serverless Workflow EVENT state waits (decider/sw/interp.c) */
    PH_DONE,
} phase_t;

typedef enum step {
    STEP_CONTINUE, /* the frame moved; run it again */
    STEP_BLOCKED,  /* the frame waits for an event */
    STEP_DONE,     /* the frame finished */
} step_t;

/* What the interpreter knows about one state, computed once. */
typedef struct state_info {
    state_type_t type;
    bool uses_context;          /* mentions "$$" somewhere */
    bool jsonata;               /* QueryLanguage JSONata (its own or the machine's) */
    json_object *activity_type; /* Task: {name, version}, shared by its decisions */
    json_object *task_list;     /* Task: {name} */
    /* A Map's ResultWriter task: its own activity type and task list (the
     * two above are its ItemReader's). */
    json_object *writer_activity_type;
    json_object *writer_task_list;
} state_info_t;

typedef struct frame frame_t;

struct frame {
    frame_t *parent;
    size_t index; /* position among the parent's children */
    char *path;   /* "" at top level, "Par[1]/Map[3]" below */
    json_object *states;
    const char *name;
    json_object *state;
    const state_info_t *info;
    phase_t phase;
    json_object *vars;      /* workflow variables (Assign): an object, or NULL */
    json_object *input;     /* the current state's raw input */
    json_object *effective; /* its effective input */
    int64_t entered_ms;
    int *retry_counts; /* one per retrier of the current state */
    int retry_total;   /* $$.State.RetryCount */
    int64_t wait_seq;  /* the activity or timer waited for */
    /* An outcome delivered by an event, consumed by the next run. */
    bool has_outcome;
    bool outcome_ok;
    json_object *outcome;
    char *outcome_error;
    char *outcome_cause;
    /* Parallel branches and Map iterations. */
    frame_t **children;
    json_object **results;
    size_t nchildren;
    size_t started, finished, failed, running;
    size_t max_running; /* 0: no limit */
    int64_t began_id;   /* Map: the DecisionTaskStarted its iterations began at */
    int64_t run_number; /* a distributed Map: its run's number (map_runs), else 0 */
    size_t tolerated_count;
    double tolerated_pct;
    bool tolerance;
    json_object *items;
    unsigned char *failed_at; /* Map: which iterations failed (ResultWriter's NONE) */
    json_object *written;     /* Map: its output once its ResultWriter's task answers */
    /* Map with an S3 inventory (InputType MANIFEST): the data files' task
     * inputs, the manifest's columns, the items read so far, the next file. */
    json_object *manifest_files;
    json_object *manifest_schema;
    json_object *manifest_items;
    size_t manifest_next;
    bool batched; /* items are ItemBatcher batches, already selected */
    char *child_error;
    char *child_cause;
    bool child_failed;
    /* Set when done. */
    bool ok;
    json_object *output;
    char *error;
    char *cause;
    bool *child_ok; /* which children ended well, while they run (NULL: none yet) */
    /* Redrive (exec_redrive.c): after its branches or iterations failed,
     * the results of those that succeeded, [{"ok": result} or null, ...];
     * used when the frame is redriven (redriving), dropped when it moves
     * on. */
    json_object *redrive_memo;
    bool redriving;
    bool queued;
    bool dead;
    frame_t *next_dead;
    /* State transitions made in the decision task started at event
     * transitions_dt (SWF_LIMIT_TRANSITIONS_PER_DECISION). */
    uint64_t transitions;
    int64_t transitions_dt;
    void *sw_wait; /* PH_SWEVENT: decider/sw/interp.c's wait */
};

typedef enum waiter_kind { W_ACTIVITY, W_TIMER } waiter_kind_t;

/* An activity or timer. Closed ones (answered, timed out, fired,
 * cancelled) are forgotten, but for a bit each (bits_t), so that a cached
 * execution's memory follows what is open, not the length of its history:
 * a closed one stays in the array only until the closed outnumber the open
 * (then the array is compacted in one pass), so that closing is O(1)
 * however many a Map has open. */
typedef struct waiter {
    int64_t seq; /* its activityId, or N of its timerId tN */
    waiter_kind_t kind;
    bool open;
    frame_t *frame;   /* NULL once abandoned */
    int64_t event_id; /* ActivityTaskScheduled / TimerStarted, 0 until applied */
    char *state;      /* for the snapshot */
    char *path;
} waiter_t;

/* A growable set of small integers. */
typedef struct bits {
    uint8_t *v;
    size_t cap; /* bytes */
} bits_t;

struct swf_asl_exec {
    swf_asl_status_t status;
    int64_t last_id;
    json_object *definition;
    json_object *input;
    char *execution_id;
    char *workflow_id;
    char *machine_name;
    char *task_list_prefix;     /* WorkflowExecutionStarted's taskListPrefix, or "" */
    int task_list_rule;         /* its taskListRule: 1 when absent (resource.h) */
    json_object *task_list_map; /* its taskListMap, or NULL */
    int64_t state_data_limit;   /* its stateDataLimit in bytes; 0: none */
    int64_t start_ms;
    json_object *ctx_execution;
    json_object *ctx_machine;
    struct lh_table *infos;
    frame_t *root;
    bool broken;
    char *broken_reason;
    /* Decision task bookkeeping. */
    bool decision_open;
    bool decided;
    int64_t dt_started_id;
    int64_t now_ms;
    swf_asl_decisions_t expected;
    size_t expected_next;
    bool close_decided;
    bool cancel_requested;
    /* Activities and timers by sequence number (ascending): the open ones
     * and some closed ones (waiter_t). */
    waiter_t *waiters;
    size_t nwaiters, cap_waiters;
    size_t open_waiters;   /* activities and timers not answered yet */
    int64_t last_seq;      /* activities and timers ever created */
    bits_t timer_seqs;     /* the sequence numbers that are timers */
    bits_t activity_ids;   /* the event ids of ActivityTaskScheduled */
    int64_t history_limit; /* the events a history may hold */
    /* Ready queue (FIFO). */
    frame_t **queue;
    size_t qhead, qtail, qcap;
    frame_t *graveyard;
    swf_asl_decisions_t *out; /* where decide() writes */
    swf_asl_rng_t rng;
    swf_asl_env_t jsonata_env; /* what JSONata bindings carry (jsonata.h) */
    uint64_t steps;            /* in this decision (SWF_LIMIT_STEPS_PER_DECISION) */
    json_object *output;
    char *error;
    char *cause;
    int64_t redrive_count; /* WorkflowExecutionRedriven events applied */
    int64_t map_runs;      /* distributed Maps' iterations begun (Map Runs) */
    int64_t redrive_ms;    /* the time of the last one */
    bool redrive_pending;  /* one was applied: the next decision redrives */
    swf_asl_trace_fn trace_fn;
    void *trace_ctx;
    swf_asl_map_trace_fn map_trace_fn;
    void *map_trace_ctx;
    bool trusted; /* the definition was validated by the caller */
    char *token_secret;
    /* Serverless Workflow (decider/sw/README.md): the definition is a
     * Serverless Workflow document and the machine run is its translation
     * (sw_machine, owned), with SYS.* error names. */
    bool sw;
    json_object *sw_machine;
    struct swf_asl_sw_rt *sw_rt; /* its events: correlation, pending, waits */
};

/* The Serverless Workflow dialect (decider/sw/interp.c). */
const char *swf_asl__sw_error_name(const char *error);
bool swf_asl__sw_is_route(const swf_asl_exec_t *ex, const frame_t *f);
step_t swf_asl__sw_route(swf_asl_exec_t *ex, frame_t *f, json_object *results);
typedef struct swf_asl_sw_rt swf_asl_sw_rt_t;
void swf_asl__sw_rt_free(swf_asl_sw_rt_t *rt);
void swf_asl__sw_frame_free(frame_t *f);
bool swf_asl__sw_is_event(const swf_asl_exec_t *ex, const frame_t *f);
step_t swf_asl__sw_event_enter(swf_asl_exec_t *ex, frame_t *f);
step_t swf_asl__sw_event_step(swf_asl_exec_t *ex, frame_t *f);
bool swf_asl__sw_event_timer(swf_asl_exec_t *ex, frame_t *f, int64_t seq);
void swf_asl__sw_signal(swf_asl_exec_t *ex, json_object *attrs);
bool swf_asl__sw_settle(swf_asl_exec_t *ex);
void swf_asl__sw_started(swf_asl_exec_t *ex, json_object *attrs);
bool swf_asl__sw_waiting(const swf_asl_exec_t *ex);
const char *swf_asl__sw_trace_type(json_object *state);

/* ---------------------------------------------------------------- helpers */

static inline char *xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline char *xprintf(const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    char *s = malloc(n < 0 ? 1 : (size_t)n + 1);
    if (s == NULL)
        abort();
    vsnprintf(s, n < 0 ? 1 : (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

static inline void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (p == NULL)
        abort();
    return p;
}

static inline json_object *jstr(const char *s)
{
    return s ? json_object_new_string(s) : NULL;
}

/* ------------------------------------------------------------ exec.c: core */

void swf_asl__decisions_push(swf_asl_decisions_t *d, swf_event_type_t type, json_object *attrs);
void swf_asl__trace(swf_asl_exec_t *ex, frame_t *f, swf_asl_trace_kind_t kind, json_object *data);
/* {"Error", "Cause"}: a new object. */
json_object *swf_asl__error_object(const char *error, const char *cause);
/* Queues a frame to run in this decision (once; not a dead one). */
void swf_asl__enqueue(swf_asl_exec_t *ex, frame_t *f);
/* Applies the signal SWF_ASL_MAP_UPDATE_SIGNAL's input (exec.h). */
void swf_asl__map_update(swf_asl_exec_t *ex, json_object *input);

/* A frame at the StartAt of `machine`; takes `path`, refs `input`. */
frame_t *swf_asl__frame_new(swf_asl_exec_t *ex, frame_t *parent, size_t index, char *path,
                            json_object *machine, json_object *input);
/* Puts the frame in state `name`, about to enter it, with no retries. */
void swf_asl__frame_set_state(swf_asl_exec_t *ex, frame_t *f, const char *name);
void swf_asl__frame_clear_children(frame_t *f);
/* Marks a frame dead; it is freed at the end of the decision. */
void swf_asl__frame_bury(swf_asl_exec_t *ex, frame_t *f);
/* Cancels, by a decision, the activity or timer f waits for, and forgets
 * an outcome delivered. */
void swf_asl__frame_drop_wait(swf_asl_exec_t *ex, frame_t *f);
/* Stops a frame and everything below it; its open activity or timer is
 * cancelled by a decision. */
void swf_asl__frame_abandon(swf_asl_exec_t *ex, frame_t *f);
step_t swf_asl__frame_finish_ok(swf_asl_exec_t *ex, frame_t *f, json_object *output);
step_t swf_asl__frame_finish_error(swf_asl_exec_t *ex, frame_t *f, const char *error,
                                   const char *cause);
/* Moves to `next`, or ends the frame when it is NULL. Takes `output`. */
step_t swf_asl__transition(swf_asl_exec_t *ex, frame_t *f, const char *next, json_object *output);

/* A new activity or timer waited for by f: its sequence number. */
int64_t swf_asl__waiter_add(swf_asl_exec_t *ex, waiter_kind_t kind, frame_t *f);
/* The control field of a decision: {"state", "path"} of f. */
json_object *swf_asl__control_new(frame_t *f);
/* Decides a StartTimer for f; returns the timer's sequence number. */
int64_t swf_asl__timer_start(swf_asl_exec_t *ex, frame_t *f, double seconds, const char *reason);

/* ----------------------------------------------------- exec_redrive.c */

/* Applies WorkflowExecutionRedriven: the execution runs again. */
swf_error_t *swf_asl__redrive_apply(swf_asl_exec_t *ex, const swf_event_t *ev);
/* In the decision after it: puts every frame that did not end well back
 * at the state where it stopped. */
void swf_asl__redrive(swf_asl_exec_t *ex);
/* A child of f ended well (its index). */
void swf_asl__redrive_child_ok(frame_t *f, size_t index);
/* f fails because a child failed: keeps the results of those that ended
 * well, for a redrive (before its children are cleared). */
void swf_asl__redrive_memo_save(frame_t *f);
/* In a redriven f: the kept result of child i (a new reference), or false
 * when the child must run. */
bool swf_asl__redrive_memo_take(frame_t *f, size_t i, json_object **result);

/* ------------------------------------------------------ exec_states.c */

/* Runs the current state of a frame in PH_ENTER. */
step_t swf_asl__state_enter(swf_asl_exec_t *ex, frame_t *f);
/* A Wait state's timer fired: its output, then Next. */
step_t swf_asl__wait_fired(swf_asl_exec_t *ex, frame_t *f);
/* A Task's, Parallel's or Map's result arrived: the state's output, then
 * Next. */
step_t swf_asl__state_result(swf_asl_exec_t *ex, frame_t *f, json_object *result);

/* ---------------------------------------------------- exec_children.c */

step_t swf_asl__parallel_enter(swf_asl_exec_t *ex, frame_t *f);
step_t swf_asl__map_enter(swf_asl_exec_t *ex, frame_t *f);
/* A Map's ItemReader answered with result (the object's content): its items,
 * after ReaderConfig, start the iterations. */
step_t swf_asl__map_items_read(swf_asl_exec_t *ex, frame_t *f, json_object *result);
/* Forgets a Map's S3 inventory reading (InputType MANIFEST). */
void swf_asl__map_manifest_clear(frame_t *f);
/* A Map's ResultWriter task answered (ok, or failed with error and cause):
 * the Map ends with f->written, or fails with States.ResultWriterFailed. */
step_t swf_asl__map_written(swf_asl_exec_t *ex, frame_t *f, bool ok, const char *error,
                            const char *cause);
/* Schedules the activity of a Task, or of a Map's ItemReader (holder: the
 * object with the Resource); takes params and token_buf (may be NULL). */
step_t swf_asl__activity_schedule(swf_asl_exec_t *ex, frame_t *f, json_object *holder,
                                  json_object *params, char *token_buf, int64_t timeout,
                                  int64_t heartbeat);
/* Parallel and Map, waiting for their children. */
step_t swf_asl__children_step(swf_asl_exec_t *ex, frame_t *f);
/* A child frame finished: its result goes to the parent, which wakes. */
void swf_asl__child_done(swf_asl_exec_t *ex, frame_t *c);

/* ---------------------------------------------------------- exec_retry.c */

/* An error in the current state: Retry, then Catch, then the frame fails. */
step_t swf_asl__state_error(swf_asl_exec_t *ex, frame_t *f, const char *error, const char *cause);
/* Turns an error from data processing into a state error; frees it. */
step_t swf_asl__state_fail_with(swf_asl_exec_t *ex, frame_t *f, swf_error_t *err);

/* ------------------------------------------------------------- exec_io.c */

/*
 * The scope of one state's expressions. A state handler opens it, asks it
 * for the values the state needs, and closes it; the functions below answer
 * in the state's query language, JSONPath or JSONata, so that the handler
 * never asks which. What a language needs is built on first use: for
 * JSONPath the env ($$ when the state reads it, the variables, the
 * generator), for JSONata the bindings (the variables and $states).
 * Nothing a scope builds draws random numbers, so building it later or not
 * at all changes no decision.
 */
typedef struct swf_asl_io {
    swf_asl_exec_t *ex;
    frame_t *f;
    const char *token; /* $$.Task.Token, or NULL */
    bool has_env;
    swf_asl_env_t env;     /* JSONPath */
    json_object *ctx;      /* owned: env's $$, or NULL */
    json_object *bindings; /* owned: JSONata's, or NULL until needed */
} swf_asl_io_t;

void swf_asl__io_open(swf_asl_io_t *io, swf_asl_exec_t *ex, frame_t *f, const char *token);
void swf_asl__io_close(swf_asl_io_t *io);

/* The effective input: InputPath applied (JSONPath); the input (JSONata). */
swf_error_t *swf_asl__io_input(swf_asl_io_t *io, json_object **eff);
/* What a Task or each branch of a Parallel gets: Parameters applied to the
 * effective input (JSONPath); Arguments, the input when absent (JSONata). */
swf_error_t *swf_asl__io_arguments(swf_asl_io_t *io, json_object *eff, json_object **args);
/* The arguments of a Map's ItemReader: its Parameters over eff (JSONPath) or
 * its Arguments (JSONata); {} when it has none. */
/* Lowers *limit to the ItemReader's MaxItems, or to the number its
 * ReaderConfig's MaxItemsPath selects in eff (a non-negative integer, or one
 * written as a string: "10"); 0 is no limit. */
swf_error_t *swf_asl__io_reader_max_items(swf_asl_io_t *io, json_object *eff, json_object *reader,
                                          size_t *limit);
swf_error_t *swf_asl__io_reader_arguments(swf_asl_io_t *io, json_object *eff, json_object *reader,
                                          json_object **args);
/* A Pass state's result: Result, or Parameters applied to eff (JSONPath);
 * none (JSONata, where a Pass has only Output). */
swf_error_t *swf_asl__io_pass_result(swf_asl_io_t *io, json_object *eff, json_object **result);
/* A Task's TimeoutSeconds or HeartbeatSeconds (`field`): a number, or
 * `path_field` on the raw input (JSONPath); an expression (JSONata). 0 when
 * absent. */
swf_error_t *swf_asl__io_task_seconds(swf_asl_io_t *io, const char *field, const char *path_field,
                                      int64_t *out);
/* How long a Wait state waits: Seconds, Timestamp, SecondsPath or
 * TimestampPath (the paths on eff); in JSONata, Seconds or Timestamp. */
swf_error_t *swf_asl__io_wait_seconds(swf_asl_io_t *io, json_object *eff, double *seconds);
/* A Fail state's Error and Cause (or ErrorPath and CausePath): new strings,
 * NULL when absent. */
swf_error_t *swf_asl__io_fail_fields(swf_asl_io_t *io, char **error, char **cause);
/* The first Choice rule that matches eff (JSONPath's rules, JSONata's
 * Conditions), or NULL. *rule is borrowed from the definition. */
swf_error_t *swf_asl__io_choose(swf_asl_io_t *io, json_object *eff, json_object **rule);
/* A Map's items: ItemsPath on eff, or eff (JSONPath); Items, or the input
 * (JSONata, which must give an array). */
swf_error_t *swf_asl__io_items(swf_asl_io_t *io, json_object *eff, json_object **items);
/* MaxConcurrency, ToleratedFailureCount or ToleratedFailurePercentage: a
 * number, or `path_field` on eff. *present is false when neither is given. */
swf_error_t *swf_asl__io_map_number(swf_asl_io_t *io, json_object *eff, const char *field,
                                    const char *path_field, double *out, bool *present);
/* An ItemBatcher limit: `field` (a number, or an expression in JSONata) or
 * `path_field` on the effective input. 0 when neither is given. */
swf_error_t *swf_asl__io_batcher_limit(swf_asl_io_t *io, json_object *batcher, const char *field,
                                       const char *path_field, double *out);
/* The ItemBatcher's BatchInput, or NULL when it has none. */
swf_error_t *swf_asl__io_batch_input(swf_asl_io_t *io, json_object *batcher, json_object **out);
/* The input of the Map iteration for item i: ItemSelector (or Parameters)
 * with $$.Map.Item (JSONPath: on the effective input), or the item itself. */
swf_error_t *swf_asl__io_item_input(swf_asl_exec_t *ex, frame_t *f, size_t i, json_object *item,
                                    json_object **input);

/* What a state's output is made from. */
typedef enum swf_asl_io_kind {
    /* A Task's, Parallel's or Map's result. JSONPath: ResultSelector,
     * Assign, ResultPath, OutputPath. JSONata: Output (the result when
     * absent) and Assign, with $states.result. */
    SWF_ASL_IO_RESULT,
    /* A Pass state's own result (swf_asl__io_pass_result). JSONPath:
     * Assign, ResultPath, OutputPath. JSONata: Output (the input when
     * absent) and Assign. */
    SWF_ASL_IO_PASS,
    /* No result: the effective input passes (Choice, Wait, Succeed).
     * JSONPath: Assign, OutputPath. JSONata: Output (the input when absent)
     * and Assign. */
    SWF_ASL_IO_INPUT,
    /* A catcher's error output. JSONPath: the catcher's Assign and
     * ResultPath. JSONata: its Output (the error output when absent) and
     * Assign, with $states.errorOutput. */
    SWF_ASL_IO_ERROR,
} swf_asl_io_kind_t;

typedef struct swf_asl_io_out {
    swf_asl_io_kind_t kind;
    /* The result, the Pass result, the effective input or the error output
     * (borrowed). */
    json_object *value;
    /* SWF_ASL_IO_INPUT: the Choice rule that matched, whose own Output or
     * Assign replaces the state's; SWF_ASL_IO_ERROR: the catcher, whose
     * fields alone count. NULL: the state. */
    json_object *holder;
    /* A Choice that matched no rule and has no Default: States.NoChoiceMatched,
     * raised after Assign in JSONPath and before Output in JSONata (the
     * order the recorded histories were made with). */
    bool no_match;
} swf_asl_io_out_t;

/* The output and the variables a state leaves with (*vars NULL: Assign
 * changes nothing). On error both are NULL. */
swf_error_t *swf_asl__io_output(swf_asl_io_t *io, const swf_asl_io_out_t *how, json_object **out,
                                json_object **vars);
/* swf_asl__io_output, then the variables are committed and the frame moves
 * to `next` (NULL: it ends); an error is the state's (Retry, Catch). */
step_t swf_asl__io_leave(swf_asl_io_t *io, const swf_asl_io_out_t *how, const char *next);
/* Makes assigned variables current (takes vars; NULL changes nothing). */
void swf_asl__io_vars_commit(frame_t *f, json_object *vars);

#endif
