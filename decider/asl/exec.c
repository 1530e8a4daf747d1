/*
 * exec.c - the ASL interpreter as a fold over an SWF-style history.
 *
 * The running machine is a tree of *frames*. A frame is one thread of
 * control through one States object: the top-level machine, one Parallel
 * branch, or one Map iteration. Each frame sits in one state at a time, in
 * one phase: about to run it, waiting for an activity, for a timer (Wait or
 * a retry back-off), for its children (Parallel/Map), or done.
 *
 * Events only *deliver*: a result is handed to the frame waiting for it and
 * the frame is queued. All movement happens in decide(), which runs queued
 * frames first-in first-out until each must wait again. Queue order follows
 * event order, so a replay of the same events makes the same moves and the
 * same decisions, in the same order. That is the whole determinism argument;
 * nothing here reads a clock or a random source of its own (randomness comes
 * from a generator seeded with the execution id and the decision's event
 * id).
 *
 * Frames that finish are not freed on the spot but put in a graveyard that
 * decide() empties at its end, because the ready queue may still point at
 * them. Map iterations are frames too; a finished iteration's output moves to
 * its Map's results array and the frame goes away, so a Map over 100,000
 * items costs memory for the items in flight, not for all of them.
 *
 * Workflow variables (Assign) live in the frame: an immutable object
 * replaced, never changed, by each Assign, and inherited by branches and
 * iterations. JSONata states (QueryLanguage, the state's or the machine's)
 * share the frame machinery and differ only in how a state reads its input
 * and writes its output: Arguments/Output/Items/Condition expressions with
 * $states bound, instead of the JSONPath fields.
 */
#include "decider/asl/exec.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/linkhash.h>

#include "decider/asl/choice.h"
#include "decider/asl/env.h"
#include "decider/asl/jsonata.h"
#include "decider/asl/path.h"
#include "decider/asl/template.h"
#include "decider/asl/validate.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/time.h"
#include "protocol/token.h"

#define ERR_RUNTIME "States.Runtime"
#define ERR_ALL "States.ALL"
#define ERR_TASK_FAILED "States.TaskFailed"
#define ERR_TIMEOUT "States.Timeout"
#define ERR_HEARTBEAT "States.HeartbeatTimeout"
#define ERR_NO_CHOICE "States.NoChoiceMatched"
#define ERR_TOLERATED "States.ExceedToleratedFailureThreshold"
#define ERR_DATA_LIMIT "States.DataLimitExceeded"

typedef enum state_type {
    ST_PASS, ST_TASK, ST_CHOICE, ST_WAIT, ST_SUCCEED, ST_FAIL, ST_PARALLEL, ST_MAP,
} state_type_t;

static const char *const state_type_names[] = {"Pass", "Task", "Choice", "Wait",
                                               "Succeed", "Fail", "Parallel", "Map"};

typedef enum phase {
    PH_ENTER,    /* about to run the current state */
    PH_ACTIVITY, /* waiting for an activity's result */
    PH_TIMER,    /* waiting for a Wait state's timer */
    PH_RETRY,    /* waiting for a retry back-off timer */
    PH_CHILDREN, /* waiting for branches or iterations */
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
    bool uses_context; /* mentions "$$" somewhere */
    bool jsonata;      /* QueryLanguage JSONata (its own or the machine's) */
    json_object *activity_type; /* Task: {name, version}, shared by its decisions */
    json_object *task_list;     /* Task: {name} */
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
    size_t tolerated_count;
    double tolerated_pct;
    bool tolerance;
    json_object *items;
    bool batched; /* items are ItemBatcher batches, already selected */
    char *child_error;
    char *child_cause;
    bool child_failed;
    /* Set when done. */
    bool ok;
    json_object *output;
    char *error;
    char *cause;
    bool queued;
    bool dead;
    frame_t *next_dead;
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
    char *task_list_prefix; /* WorkflowExecutionStarted's taskListPrefix, or "" */
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
    uint64_t transitions;
    json_object *output;
    char *error;
    char *cause;
    swf_asl_trace_fn trace_fn;
    void *trace_ctx;
    bool trusted; /* the definition was validated by the caller */
    char *token_secret;
};

/* ---------------------------------------------------------------- helpers */

static char *xstrdup(const char *s)
{
    if (s == NULL)
        return NULL;
    char *c = strdup(s);
    if (c == NULL)
        abort();
    return c;
}

static char *xprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xprintf(const char *fmt, ...)
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

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (p == NULL)
        abort();
    return p;
}

static json_object *jstr(const char *s)
{
    return s ? json_object_new_string(s) : NULL;
}

static json_object *jseconds(double s)
{
    if (s == floor(s) && fabs(s) < 9e15)
        return json_object_new_int64((int64_t)s);
    return json_object_new_double(s);
}

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

void swf_asl_decisions_clear(swf_asl_decisions_t *d)
{
    for (size_t i = 0; i < d->count; i++)
        json_object_put(d->items[i].attrs);
    d->count = 0;
}

void swf_asl_decisions_free(swf_asl_decisions_t *d)
{
    swf_asl_decisions_clear(d);
    free(d->items);
    d->items = NULL;
    d->cap = 0;
}

static void decisions_push(swf_asl_decisions_t *d, swf_event_type_t type, json_object *attrs)
{
    if (d->count == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 16;
        swf_asl_decision_t *items = realloc(d->items, cap * sizeof(*items));
        if (items == NULL)
            abort();
        d->items = items;
        d->cap = cap;
    }
    d->items[d->count].type = type;
    d->items[d->count].attrs = attrs;
    d->count++;
}

const char *swf_asl_status_name(swf_asl_status_t status)
{
    switch (status) {
    case SWF_ASL_NOT_STARTED: return "NOT_STARTED";
    case SWF_ASL_RUNNING: return "RUNNING";
    case SWF_ASL_SUCCEEDED: return "SUCCEEDED";
    case SWF_ASL_FAILED: return "FAILED";
    case SWF_ASL_TIMED_OUT: return "TIMED_OUT";
    case SWF_ASL_CANCELED: return "CANCELED";
    case SWF_ASL_TERMINATED: return "TERMINATED";
    }
    return "UNKNOWN";
}

void swf_asl_resource_task_list(const char *resource, char *buf, size_t size)
{
    assert(size > 0);
    const char *name = resource ? resource : "";
    const char *marks[] = {":activity:", ":function:"};
    for (size_t i = 0; i < 2; i++) {
        const char *p = strstr(name, marks[i]);
        if (p != NULL) {
            name = p + strlen(marks[i]);
            break;
        }
    }
    size_t n = 0;
    for (const char *p = name; *p && n + 1 < size; p++) {
        char c = *p;
        if (name != resource && c == ':')
            break; /* a version or alias after the function name */
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        buf[n++] = ok ? c : '_';
    }
    buf[n] = '\0';
    /* ".waitForTaskToken" and ".sync" pick a pattern, not a task list. */
    const char *suffixes[] = {".waitForTaskToken", ".sync"};
    for (size_t i = 0; i < 2; i++) {
        size_t ls = strlen(suffixes[i]);
        if (n > ls && strcmp(buf + n - ls, suffixes[i]) == 0) {
            n -= ls;
            buf[n] = '\0';
        }
    }
}

/* ------------------------------------------------------------- state info */

static state_type_t parse_type(const char *t)
{
    for (int i = 0; i <= ST_MAP; i++) {
        if (t && strcmp(t, state_type_names[i]) == 0)
            return (state_type_t)i;
    }
    return ST_PASS; /* unreachable for a validated definition */
}

/* True when a string (value or key) anywhere in v contains "$$". */
static bool mentions_context(json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_string:
        return strstr(json_object_get_string(v), "$$") != NULL;
    case json_type_array:
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            if (mentions_context(json_object_array_get_idx(v, i)))
                return true;
        }
        return false;
    case json_type_object: {
        json_object_object_foreach(v, key, val) {
            if (strstr(key, "$$") != NULL || mentions_context(val))
                return true;
        }
        return false;
    }
    default:
        return false;
    }
}

static const state_info_t *state_info(swf_asl_exec_t *ex, json_object *state)
{
    void *v;
    if (lh_table_lookup_ex(ex->infos, state, &v))
        return v;
    state_info_t *info = xcalloc(1, sizeof(*info));
    info->type = parse_type(swf_json_get_string(state, "Type"));
    json_object *tmp;
    /* Look only at the state's own fields, not into its branches. */
    json_object_object_foreach(state, key, val) {
        if (strcmp(key, "Branches") == 0 || strcmp(key, "ItemProcessor") == 0 ||
            strcmp(key, "Iterator") == 0)
            continue;
        if (mentions_context(val))
            info->uses_context = true;
    }
    /* A state's query language is its own or the machine's. */
    const char *ql = swf_json_get_string(state, "QueryLanguage");
    if (ql == NULL)
        ql = swf_json_get_string(ex->definition, "QueryLanguage");
    (void)tmp;
    if (ql && strcmp(ql, "JSONata") == 0)
        info->jsonata = true;
    lh_table_insert(ex->infos, state, info);
    return info;
}

static void info_free(struct lh_entry *e)
{
    state_info_t *info = (state_info_t *)lh_entry_v(e);
    json_object_put(info->activity_type);
    json_object_put(info->task_list);
    free(info);
}

/* ------------------------------------------------------------------ trace */

static void trace(swf_asl_exec_t *ex, frame_t *f, swf_asl_trace_kind_t kind, json_object *data)
{
    if (ex->trace_fn == NULL)
        return;
    swf_asl_trace_t t = {
        .kind = kind,
        .path = f->path,
        .state = f->name,
        .state_type = state_type_names[f->info->type],
        .data = data,
        .time_ms = ex->now_ms,
        .event_id = ex->dt_started_id,
    };
    ex->trace_fn(ex->trace_ctx, &t);
}

static json_object *error_object(const char *error, const char *cause)
{
    json_object *o = json_object_new_object();
    swf_json_add(o, "Error", jstr(error ? error : ""));
    swf_json_add(o, "Cause", jstr(cause ? cause : ""));
    return o;
}

/* ------------------------------------------------------------------ queue */

static void enqueue(swf_asl_exec_t *ex, frame_t *f)
{
    if (f->queued || f->dead)
        return;
    if (ex->qtail == ex->qcap) {
        if (ex->qhead > 0) {
            memmove(ex->queue, ex->queue + ex->qhead, (ex->qtail - ex->qhead) * sizeof(frame_t *));
            ex->qtail -= ex->qhead;
            ex->qhead = 0;
        }
        if (ex->qtail == ex->qcap) {
            size_t cap = ex->qcap ? ex->qcap * 2 : 64;
            frame_t **q = realloc(ex->queue, cap * sizeof(*q));
            if (q == NULL)
                abort();
            ex->queue = q;
            ex->qcap = cap;
        }
    }
    ex->queue[ex->qtail++] = f;
    f->queued = true;
}

/* ------------------------------------------------------------------ frames */

static void frame_clear_outcome(frame_t *f)
{
    json_object_put(f->outcome);
    free(f->outcome_error);
    free(f->outcome_cause);
    f->outcome = NULL;
    f->outcome_error = f->outcome_cause = NULL;
    f->has_outcome = false;
}

static void frame_clear_children(frame_t *f)
{
    for (size_t i = 0; i < f->nchildren; i++) {
        if (f->results)
            json_object_put(f->results[i]);
    }
    free(f->children);
    free(f->results);
    json_object_put(f->items);
    free(f->child_error);
    free(f->child_cause);
    f->children = NULL;
    f->results = NULL;
    f->items = NULL;
    f->child_error = f->child_cause = NULL;
    f->nchildren = f->started = f->finished = f->failed = f->running = 0;
    f->child_failed = false;
}

static void frame_free(frame_t *f)
{
    frame_clear_outcome(f);
    frame_clear_children(f);
    json_object_put(f->input);
    json_object_put(f->vars);
    json_object_put(f->effective);
    json_object_put(f->output);
    free(f->retry_counts);
    free(f->error);
    free(f->cause);
    free(f->path);
    free(f);
}

/* Marks a frame dead; it is freed at the end of the decision. */
static void frame_bury(swf_asl_exec_t *ex, frame_t *f)
{
    if (f->dead)
        return;
    f->dead = true;
    f->next_dead = ex->graveyard;
    ex->graveyard = f;
}

static void graveyard_empty(swf_asl_exec_t *ex)
{
    while (ex->graveyard) {
        frame_t *f = ex->graveyard;
        ex->graveyard = f->next_dead;
        frame_free(f);
    }
}

static void frame_set_state(swf_asl_exec_t *ex, frame_t *f, const char *name)
{
    json_object *state = NULL;
    json_object_object_get_ex(f->states, name, &state);
    assert(state != NULL); /* validation guarantees every transition target exists */
    /* Use the key's own storage, which lives as long as the definition. */
    struct lh_entry *e = lh_table_lookup_entry(json_object_get_object(f->states), name);
    f->name = e ? (const char *)lh_entry_k(e) : name;
    f->state = state;
    f->info = state_info(ex, state);
    f->phase = PH_ENTER;
    free(f->retry_counts);
    f->retry_counts = NULL;
    f->retry_total = 0;
}

static frame_t *frame_new(swf_asl_exec_t *ex, frame_t *parent, size_t index, char *path,
                          json_object *machine, json_object *input)
{
    frame_t *f = xcalloc(1, sizeof(*f));
    f->parent = parent;
    /* Branches and iterations read the variables of their state's frame;
     * what they assign stays inside them. */
    f->vars = parent ? swf_json_ref(parent->vars) : NULL;
    f->index = index;
    f->path = path;
    json_object_object_get_ex(machine, "States", &f->states);
    frame_set_state(ex, f, swf_json_get_string(machine, "StartAt"));
    f->input = swf_json_ref(input);
    return f;
}

static waiter_t *waiter_find(swf_asl_exec_t *ex, int64_t seq);

/* Stops a frame and everything below it: open activities are cancelled and
 * timers cancelled, by decisions. */
static void frame_abandon(swf_asl_exec_t *ex, frame_t *f)
{
    if (f->dead)
        return;
    if ((f->phase == PH_ACTIVITY || f->phase == PH_TIMER || f->phase == PH_RETRY) &&
        !f->has_outcome && f->wait_seq > 0) {
        waiter_t *w = waiter_find(ex, f->wait_seq);
        if (w != NULL && w->frame == f) {
            json_object *a = json_object_new_object();
            char id[32];
            if (w->kind == W_ACTIVITY) {
                snprintf(id, sizeof(id), "%lld", (long long)f->wait_seq);
                swf_json_add(a, "activityId", json_object_new_string(id));
                decisions_push(ex->out, SWF_EVENT_ACTIVITY_TASK_CANCEL_REQUESTED, a);
            } else {
                snprintf(id, sizeof(id), "t%lld", (long long)f->wait_seq);
                swf_json_add(a, "timerId", json_object_new_string(id));
                swf_json_add(a, "startedEventId", json_object_new_int64(w->event_id));
                decisions_push(ex->out, SWF_EVENT_TIMER_CANCELED, a);
            }
        }
        w->frame = NULL;
    }
    for (size_t i = 0; i < f->nchildren; i++) {
        if (f->children[i] != NULL) {
            frame_abandon(ex, f->children[i]);
            f->children[i] = NULL;
        }
    }
    frame_bury(ex, f);
}

/* ---------------------------------------------------------------- context */

static json_object *context_build(swf_asl_exec_t *ex, frame_t *f, json_object *map_item,
                                  const char *token)
{
    json_object *ctx = json_object_new_object();
    swf_json_add(ctx, "Execution", swf_json_ref(ex->ctx_execution));
    swf_json_add(ctx, "StateMachine", swf_json_ref(ex->ctx_machine));
    json_object *st = json_object_new_object();
    char ts[SWF_TIME_BUF];
    swf_time_format_ms(f->entered_ms, ts);
    swf_json_add(st, "EnteredTime", json_object_new_string(ts));
    swf_json_add(st, "Name", json_object_new_string(f->name));
    swf_json_add(st, "RetryCount", json_object_new_int(f->retry_total));
    swf_json_add(ctx, "State", st);
    if (token != NULL) {
        json_object *task = json_object_new_object();
        swf_json_add(task, "Token", json_object_new_string(token));
        swf_json_add(ctx, "Task", task);
    }
    if (map_item != NULL)
        swf_json_add(ctx, "Map", map_item);
    return ctx;
}

/* The environment of the current state. *ctx is owned by the caller (may be
 * NULL when the state never reads $$). */
static void env_init(swf_asl_exec_t *ex, frame_t *f, swf_asl_env_t *env, json_object **ctx,
                     const char *token)
{
    *ctx = f->info->uses_context ? context_build(ex, f, NULL, token) : NULL;
    env->context = *ctx;
    env->variables = f->vars;
    env->rng = &ex->rng;
}

/* ------------------------------------------------------------ data flow */

/* InputPath: absent is "$", null gives {}. */
static swf_error_t *input_path(frame_t *f, const swf_asl_env_t *env, json_object **out)
{
    json_object *p;
    if (!swf_json_get(f->state, "InputPath", &p)) {
        *out = swf_json_ref(f->input);
        return NULL;
    }
    if (p == NULL) {
        *out = json_object_new_object();
        return NULL;
    }
    return swf_asl_path_eval(json_object_get_string(p), f->input, env, out);
}

/* A payload template field (Parameters, ResultSelector); absent: the value. */
static swf_error_t *template_field(frame_t *f, const char *field, json_object *value,
                                   const swf_asl_env_t *env, json_object **out)
{
    json_object *tmpl;
    if (!swf_json_get(f->state, field, &tmpl)) {
        *out = swf_json_ref(value);
        return NULL;
    }
    return swf_asl_template_eval(tmpl, value, env, out);
}

/* ResultPath (on the raw input) then OutputPath. */
static swf_error_t *result_and_output(frame_t *f, json_object *state, json_object *result,
                                      const swf_asl_env_t *env, json_object **out)
{
    json_object *rp, *merged = NULL, *op;
    swf_error_t *err = NULL;
    *out = NULL;
    if (!swf_json_get(state, "ResultPath", &rp)) {
        merged = swf_json_ref(result);
    } else if (rp == NULL) {
        merged = swf_json_ref(f->input);
    } else {
        err = swf_asl_path_set(json_object_get_string(rp), f->input, result, &merged);
        if (err)
            return err;
    }
    if (!swf_json_get(f->state, "OutputPath", &op)) {
        *out = merged;
        return NULL;
    }
    if (op == NULL) {
        json_object_put(merged);
        *out = json_object_new_object();
        return NULL;
    }
    err = swf_asl_path_eval(json_object_get_string(op), merged, env, out);
    json_object_put(merged);
    return err;
}

/* --------------------------------------------------------------- finishing */

static step_t frame_finish_ok(swf_asl_exec_t *ex, frame_t *f, json_object *output)
{
    f->phase = PH_DONE;
    f->ok = true;
    f->output = output;
    return STEP_DONE;
}

static step_t frame_finish_error(swf_asl_exec_t *ex, frame_t *f, const char *error,
                                 const char *cause)
{
    f->phase = PH_DONE;
    f->ok = false;
    f->error = xstrdup(error);
    f->cause = xstrdup(cause ? cause : "");
    return STEP_DONE;
}

/* Moves to the state's Next, or ends the frame. Takes `output`. */
static step_t transition(swf_asl_exec_t *ex, frame_t *f, const char *next, json_object *output)
{
    trace(ex, f, SWF_ASL_STATE_EXITED, output);
    json_object_put(f->effective);
    f->effective = NULL;
    if (next == NULL)
        return frame_finish_ok(ex, f, output);
    json_object_put(f->input);
    f->input = output;
    frame_set_state(ex, f, next);
    return STEP_CONTINUE;
}

static step_t transition_default(swf_asl_exec_t *ex, frame_t *f, json_object *output)
{
    return transition(ex, f, swf_json_get_string(f->state, "Next"), output);
}

static bool error_matches(const char *pattern, const char *error)
{
    if (strcmp(pattern, error) == 0)
        return true;
    if (strcmp(error, ERR_RUNTIME) == 0)
        return false;
    /* AWS: States.ALL "can't catch the States.DataLimitExceeded terminal
     * error"; only its own name does. */
    if (strcmp(error, ERR_DATA_LIMIT) == 0)
        return false;
    if (strcmp(pattern, ERR_ALL) == 0)
        return true;
    if (strcmp(pattern, ERR_TASK_FAILED) == 0)
        return strcmp(error, ERR_TIMEOUT) != 0 && strcmp(error, ERR_HEARTBEAT) != 0;
    if (strcmp(pattern, ERR_TIMEOUT) == 0)
        return strcmp(error, ERR_HEARTBEAT) == 0;
    return false;
}

static bool names_match(json_object *error_equals, const char *error)
{
    size_t n = json_object_array_length(error_equals);
    for (size_t i = 0; i < n; i++) {
        const char *p = json_object_get_string(json_object_array_get_idx(error_equals, i));
        if (p && error_matches(p, error))
            return true;
    }
    return false;
}

static int64_t timer_start(swf_asl_exec_t *ex, frame_t *f, double seconds, const char *reason);
static json_object *jsonata_bindings(swf_asl_exec_t *ex, frame_t *f, bool has_result,
                                     json_object *result, json_object *error_output,
                                     json_object *map_item, const char *token);
static swf_error_t *jsonata_field(json_object *holder, const char *field, json_object *bindings,
                                  json_object **out, bool *present);
static swf_error_t *jsonata_assign(frame_t *f, json_object *holder, json_object *bindings,
                                   json_object **vars);

/*
 * Assign (workflow variables, JSONPath states): evaluates holder's Assign
 * template with `dollar` as $ and the variables as they were when the state
 * was entered, and returns in *vars the variables to use from the next state
 * on (NULL when holder assigns nothing). Every expression sees the entry
 * values, so {"x.$": "$y", "y.$": "$x"} swaps.
 */
static swf_error_t *assign_eval(frame_t *f, json_object *holder, json_object *dollar,
                                const swf_asl_env_t *env, json_object **vars)
{
    json_object *tmpl, *assigned = NULL;
    *vars = NULL;
    if (!swf_json_get(holder, "Assign", &tmpl) || !json_object_is_type(tmpl, json_type_object))
        return NULL;
    swf_error_t *err = swf_asl_template_eval(tmpl, dollar, env, &assigned);
    if (err != NULL)
        return err;
    json_object *merged = json_object_new_object();
    if (f->vars != NULL) {
        json_object_object_foreach(f->vars, key, val)
            json_object_object_add(merged, key, swf_json_ref(val));
    }
    json_object_object_foreach(assigned, key2, val2)
        json_object_object_add(merged, key2, swf_json_ref(val2));
    json_object_put(assigned);
    *vars = merged;
    return NULL;
}

/* Makes assigned variables current (takes vars; NULL changes nothing). */
static void vars_commit(frame_t *f, json_object *vars)
{
    if (vars == NULL)
        return;
    json_object_put(f->vars);
    f->vars = vars;
}

/* An error in the current state: Retry, then Catch, then the frame fails. */
static step_t state_error(swf_asl_exec_t *ex, frame_t *f, const char *error, const char *cause)
{
    json_object *retry, *catch;
    const char *why = cause ? cause : "";
    if (strcmp(error, ERR_RUNTIME) != 0 && swf_json_get(f->state, "Retry", &retry) && retry) {
        size_t n = json_object_array_length(retry);
        if (f->retry_counts == NULL)
            f->retry_counts = xcalloc(n, sizeof(int));
        for (size_t i = 0; i < n; i++) {
            json_object *r = json_object_array_get_idx(retry, i), *v;
            if (!swf_json_get(r, "ErrorEquals", &v) || !names_match(v, error))
                continue;
            int max = swf_json_get(r, "MaxAttempts", &v) ? json_object_get_int(v) : 3;
            if (f->retry_counts[i] >= max)
                break; /* exhausted: the error goes to Catch, not to later retriers */
            f->retry_counts[i]++;
            f->retry_total++;
            double interval = swf_json_get(r, "IntervalSeconds", &v) ? json_object_get_double(v) : 1;
            double rate = swf_json_get(r, "BackoffRate", &v) ? json_object_get_double(v) : 2.0;
            double delay = interval * pow(rate, f->retry_counts[i] - 1);
            if (swf_json_get(r, "MaxDelaySeconds", &v) && delay > json_object_get_double(v))
                delay = json_object_get_double(v);
            const char *jitter = swf_json_get_string(r, "JitterStrategy");
            if (jitter && strcmp(jitter, "FULL") == 0)
                delay = floor(swf_asl_rng_unit(&ex->rng) * delay * 1000.0) / 1000.0;
            if (delay > 31536000.0 * 100)
                delay = 31536000.0 * 100;
            json_object *data = error_object(error, why);
            swf_json_add(data, "RetryCount", json_object_new_int(f->retry_total));
            trace(ex, f, SWF_ASL_STATE_RETRIED, data);
            json_object_put(data);
            f->wait_seq = timer_start(ex, f, delay, "retry");
            f->phase = PH_RETRY;
            return STEP_BLOCKED;
        }
    }
    if (strcmp(error, ERR_RUNTIME) != 0 && swf_json_get(f->state, "Catch", &catch) && catch) {
        size_t n = json_object_array_length(catch);
        for (size_t i = 0; i < n; i++) {
            json_object *c = json_object_array_get_idx(catch, i), *v;
            if (!swf_json_get(c, "ErrorEquals", &v) || !names_match(v, error))
                continue;
            if (f->info->jsonata) {
                /* The catcher's Output (default: the error output) and its
                 * Assign, which replaces the state's. An error in them is
                 * not caught again. */
                json_object *eo = error_object(error, why), *out = NULL, *vars = NULL;
                const char *next = swf_json_get_string(c, "Next");
                json_object *data = error_object(error, why);
                swf_json_add(data, "Next", jstr(next));
                trace(ex, f, SWF_ASL_STATE_CAUGHT, data);
                json_object_put(data);
                json_object *b = jsonata_bindings(ex, f, false, NULL, eo, NULL, NULL);
                bool present;
                swf_error_t *jerr = jsonata_field(c, "Output", b, &out, &present);
                if (jerr == NULL && !present)
                    out = swf_json_ref(eo);
                if (jerr == NULL)
                    jerr = jsonata_assign(f, c, b, &vars);
                json_object_put(b);
                json_object_put(eo);
                if (jerr != NULL) {
                    json_object_put(out);
                    json_object_put(vars);
                    step_t s = frame_finish_error(ex, f, swf_error_name(jerr),
                                                  swf_error_message(jerr));
                    swf_error_free(jerr);
                    return s;
                }
                vars_commit(f, vars);
                json_object_put(f->effective);
                f->effective = NULL;
                json_object_put(f->input);
                f->input = out;
                frame_set_state(ex, f, next);
                return STEP_CONTINUE;
            }
            json_object *eo = error_object(error, why), *out = NULL, *rp, *vars = NULL;
            swf_asl_env_t aenv;
            json_object *actx;
            env_init(ex, f, &aenv, &actx, NULL);
            swf_error_t *err = assign_eval(f, c, eo, &aenv, &vars);
            json_object_put(actx);
            if (err != NULL)
                ;
            else if (!swf_json_get(c, "ResultPath", &rp))
                out = swf_json_ref(eo);
            else if (rp == NULL)
                out = swf_json_ref(f->input);
            else
                err = swf_asl_path_set(json_object_get_string(rp), f->input, eo, &out);
            const char *next = swf_json_get_string(c, "Next");
            json_object *data = error_object(error, why);
            swf_json_add(data, "Next", jstr(next));
            trace(ex, f, SWF_ASL_STATE_CAUGHT, data);
            json_object_put(data);
            json_object_put(eo);
            if (err != NULL) {
                /* The catcher's own ResultPath or Assign failed: that error
                 * is not caught again. */
                step_t s = frame_finish_error(ex, f, swf_error_name(err), swf_error_message(err));
                swf_error_free(err);
                json_object_put(vars);
                return s;
            }
            vars_commit(f, vars);
            json_object_put(f->effective);
            f->effective = NULL;
            json_object_put(f->input);
            f->input = out;
            frame_set_state(ex, f, next);
            return STEP_CONTINUE;
        }
    }
    json_object *data = error_object(error, why);
    trace(ex, f, SWF_ASL_STATE_FAILED, data);
    json_object_put(data);
    return frame_finish_error(ex, f, error, why);
}

/* Turns an swf_error_t from data processing into a state error; frees it. */
static step_t state_fail_with(swf_asl_exec_t *ex, frame_t *f, swf_error_t *err)
{
    const char *name = swf_error_name(err) ? swf_error_name(err) : ERR_RUNTIME;
    const char *cause = swf_error_cause(err) ? swf_error_cause(err) : swf_error_message(err);
    step_t s = state_error(ex, f, name, cause);
    swf_error_free(err);
    return s;
}


/* ---------------------------------------------------------------- JSONata */

#define ERR_QUERY "States.QueryEvaluationError"

/* The variables a JSONata expression in frame f sees: the workflow
 * variables and $states {input, context, result?, errorOutput?}. */
static json_object *jsonata_bindings(swf_asl_exec_t *ex, frame_t *f, bool has_result,
                                     json_object *result, json_object *error_output,
                                     json_object *map_item, const char *token)
{
    json_object *b = json_object_new_object();
    /* The decision's generator and time, for $random, $uuid, $shuffle, $now
     * and $millis: both come from the history, so a replay gets the same. */
    ex->jsonata_env = (swf_asl_env_t){.rng = &ex->rng, .now_ms = ex->now_ms};
    json_object_set_userdata(b, &ex->jsonata_env, NULL);
    if (f->vars != NULL) {
        json_object_object_foreach(f->vars, key, val)
            json_object_object_add(b, key, swf_json_ref(val));
    }
    json_object *st = json_object_new_object();
    swf_json_add(st, "input", swf_json_ref(f->input));
    swf_json_add(st, "context", context_build(ex, f, map_item, token));
    if (has_result)
        swf_json_add(st, "result", swf_json_ref(result));
    if (error_output != NULL)
        swf_json_add(st, "errorOutput", swf_json_ref(error_output));
    json_object_object_add(b, "states", st);
    return b;
}

/* Evaluates holder[field] (a literal, an expression, or a JSON value with
 * expressions inside). *present is false when the field is absent; an
 * undefined value is an error naming the field. */
static swf_error_t *jsonata_field(json_object *holder, const char *field, json_object *bindings,
                                  json_object **out, bool *present)
{
    json_object *v;
    *out = NULL;
    *present = swf_json_get(holder, field, &v);
    if (!*present)
        return NULL;
    bool defined = true;
    swf_error_t *err = swf_asl_jsonata_template_eval(v, bindings, out, &defined);
    if (err == NULL && !defined)
        err = swf_error_states(ERR_QUERY, "the expression of %s has no value (undefined)", field);
    return err;
}

/* Assign in a JSONata state: new variables from the entry values. */
static swf_error_t *jsonata_assign(frame_t *f, json_object *holder, json_object *bindings,
                                   json_object **vars)
{
    json_object *assigned = NULL;
    bool present;
    *vars = NULL;
    swf_error_t *err = jsonata_field(holder, "Assign", bindings, &assigned, &present);
    if (err != NULL || !present)
        return err;
    if (!json_object_is_type(assigned, json_type_object)) {
        json_object_put(assigned);
        return swf_error_states(ERR_QUERY, "Assign must produce an object");
    }
    json_object *merged = json_object_new_object();
    if (f->vars != NULL) {
        json_object_object_foreach(f->vars, key, val)
            json_object_object_add(merged, key, swf_json_ref(val));
    }
    json_object_object_foreach(assigned, key2, val2)
        json_object_object_add(merged, key2, swf_json_ref(val2));
    json_object_put(assigned);
    *vars = merged;
    return NULL;
}

/* Output (or `fallback` when there is none) and Assign of `holder`, then
 * the move to `next` (NULL: the frame ends). Takes nothing. */
static step_t jsonata_leave(swf_asl_exec_t *ex, frame_t *f, json_object *out_holder,
                            json_object *assign_holder, json_object *bindings,
                            json_object *fallback, const char *next)
{
    json_object *out = NULL, *vars = NULL;
    bool present;
    swf_error_t *err = jsonata_field(out_holder, "Output", bindings, &out, &present);
    if (err == NULL && !present)
        out = swf_json_ref(fallback);
    if (err == NULL)
        err = jsonata_assign(f, assign_holder, bindings, &vars);
    if (err != NULL) {
        json_object_put(out);
        json_object_put(vars);
        return state_fail_with(ex, f, err);
    }
    vars_commit(f, vars);
    return transition(ex, f, next, out);
}

/* A number field that may be an expression (Seconds, TimeoutSeconds...). */
static swf_error_t *jsonata_number(json_object *holder, const char *field, json_object *bindings,
                                   double *out, bool *present)
{
    json_object *v = NULL;
    swf_error_t *err = jsonata_field(holder, field, bindings, &v, present);
    if (err == NULL && *present) {
        /* The messages are part of recorded decisions: the first one is
         * kept as it was, so that older histories replay. */
        if (!swf_json_is_number(v) || json_object_get_double(v) < 0 ||
            json_object_get_double(v) != floor(json_object_get_double(v)))
            err = swf_error_states(ERR_QUERY, "%s must be a non-negative integer, not %s", field,
                                   swf_json_str(v));
        else if (json_object_get_double(v) > SWF_LIMIT_STATE_SECONDS)
            err = swf_error_states(ERR_QUERY, "%s must be at most %d, not %s", field,
                                   SWF_LIMIT_STATE_SECONDS, swf_json_str(v));
        else
            *out = json_object_get_double(v);
    }
    json_object_put(v);
    return err;
}

/* A state's result: ResultSelector, ResultPath, OutputPath, then Next. */
static step_t state_result(swf_asl_exec_t *ex, frame_t *f, json_object *result)
{
    if (f->info->jsonata) {
        json_object *b = jsonata_bindings(ex, f, true, result, NULL, NULL, NULL);
        step_t s = jsonata_leave(ex, f, f->state, f->state, b, result,
                                 swf_json_get_string(f->state, "Next"));
        json_object_put(b);
        return s;
    }
    swf_asl_env_t env;
    json_object *ctx, *selected = NULL, *out = NULL, *vars = NULL;
    env_init(ex, f, &env, &ctx, NULL);
    swf_error_t *err = template_field(f, "ResultSelector", result, &env, &selected);
    if (err == NULL)
        err = assign_eval(f, f->state, selected, &env, &vars);
    if (err == NULL)
        err = result_and_output(f, f->state, selected, &env, &out);
    json_object_put(selected);
    json_object_put(ctx);
    if (err != NULL) {
        json_object_put(vars);
        return state_fail_with(ex, f, err);
    }
    vars_commit(f, vars);
    return transition_default(ex, f, out);
}

/* ------------------------------------------------------ activities, timers */

static void bits_set(bits_t *b, int64_t k)
{
    size_t byte = (size_t)k / 8;
    if (byte >= b->cap) {
        size_t cap = b->cap ? b->cap : 16;
        while (cap <= byte)
            cap *= 2;
        uint8_t *v = realloc(b->v, cap);
        if (v == NULL)
            abort();
        memset(v + b->cap, 0, cap - b->cap);
        b->v = v;
        b->cap = cap;
    }
    b->v[byte] |= (uint8_t)(1u << (k % 8));
}

static bool bits_has(const bits_t *b, int64_t k)
{
    return k >= 0 && (size_t)k / 8 < b->cap && (b->v[k / 8] & (1u << (k % 8))) != 0;
}

/* The index of the waiter with this sequence number, or nwaiters. */
static size_t waiter_index(const swf_asl_exec_t *ex, int64_t seq)
{
    size_t lo = 0, hi = ex->nwaiters;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ex->waiters[mid].seq < seq)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ex->nwaiters && ex->waiters[lo].seq == seq ? lo : ex->nwaiters;
}

/* The open activity or timer with this sequence number, or NULL. The
 * pointer is good until the next waiter_close or waiter_add. */
static waiter_t *waiter_find(swf_asl_exec_t *ex, int64_t seq)
{
    size_t i = waiter_index(ex, seq);
    return i < ex->nwaiters && ex->waiters[i].open ? &ex->waiters[i] : NULL;
}

/* An activity or timer answered, cancelled or timed out: forgotten. */
static void waiter_close(swf_asl_exec_t *ex, waiter_t *w)
{
    assert(w->open && ex->open_waiters > 0);
    free(w->state);
    free(w->path);
    w->state = w->path = NULL;
    w->frame = NULL;
    w->open = false;
    ex->open_waiters--;
    if (ex->nwaiters - ex->open_waiters <= ex->open_waiters + 8)
        return;
    size_t k = 0;
    for (size_t i = 0; i < ex->nwaiters; i++) {
        if (ex->waiters[i].open)
            ex->waiters[k++] = ex->waiters[i];
    }
    ex->nwaiters = k;
}

static int64_t waiter_add(swf_asl_exec_t *ex, waiter_kind_t kind, frame_t *f)
{
    if (ex->nwaiters == ex->cap_waiters) {
        size_t cap = ex->cap_waiters ? ex->cap_waiters * 2 : 8;
        waiter_t *w = realloc(ex->waiters, cap * sizeof(*w));
        if (w == NULL)
            abort();
        ex->waiters = w;
        ex->cap_waiters = cap;
    }
    waiter_t *w = &ex->waiters[ex->nwaiters++]; /* the newest has the highest seq */
    memset(w, 0, sizeof(*w));
    w->seq = ++ex->last_seq;
    w->kind = kind;
    w->open = true;
    w->frame = f;
    w->state = xstrdup(f->name);
    w->path = xstrdup(f->path);
    ex->open_waiters++;
    if (kind == W_TIMER)
        bits_set(&ex->timer_seqs, w->seq);
    return w->seq;
}

static json_object *control_new(frame_t *f)
{
    json_object *c = json_object_new_object();
    swf_json_add(c, "state", json_object_new_string(f->name));
    swf_json_add(c, "path", json_object_new_string(f->path));
    return c;
}

static int64_t timer_start(swf_asl_exec_t *ex, frame_t *f, double seconds, const char *reason)
{
    int64_t seq = waiter_add(ex, W_TIMER, f);
    char id[32];
    snprintf(id, sizeof(id), "t%lld", (long long)seq);
    json_object *a = json_object_new_object();
    swf_json_add(a, "timerId", json_object_new_string(id));
    swf_json_add(a, "startToFireTimeout", jseconds(seconds < 0 ? 0 : seconds));
    json_object *c = control_new(f);
    swf_json_add(c, "reason", json_object_new_string(reason));
    swf_json_add(a, "control", c);
    decisions_push(ex->out, SWF_EVENT_TIMER_STARTED, a);
    return seq;
}

/* Reads TimeoutSeconds/HeartbeatSeconds or their *Path forms. */
static swf_error_t *task_seconds(frame_t *f, const char *field, const char *path_field,
                                 const swf_asl_env_t *env, int64_t *out)
{
    json_object *v;
    *out = 0;
    if (swf_json_get(f->state, field, &v)) {
        *out = json_object_get_int64(v);
        return NULL;
    }
    if (!swf_json_get(f->state, path_field, &v))
        return NULL;
    json_object *val = NULL;
    swf_error_t *err = swf_asl_path_eval(json_object_get_string(v), f->input, env, &val);
    if (err)
        return err;
    if (!json_object_is_type(val, json_type_int) || json_object_get_int64(val) <= 0) {
        err = swf_error_states(ERR_RUNTIME, "%s '%s' must select a positive integer, not %s",
                               path_field, json_object_get_string(v), swf_json_str(val));
    } else if (json_object_get_int64(val) > SWF_LIMIT_STATE_SECONDS) {
        err =
            swf_error_states(ERR_RUNTIME, "%s '%s' must select at most %d, not %s", path_field,
                             json_object_get_string(v), SWF_LIMIT_STATE_SECONDS, swf_json_str(val));
    } else {
        *out = json_object_get_int64(val);
    }
    json_object_put(val);
    return err;
}

static step_t enter_task(swf_asl_exec_t *ex, frame_t *f, const swf_asl_env_t *env_in)
{
    const char *resource = swf_json_get_string(f->state, "Resource");
    bool token = resource && strstr(resource, ".waitForTaskToken") != NULL;
    int64_t seq = ex->last_seq + 1; /* the id the activity will get */
    char activity_id[32];
    snprintf(activity_id, sizeof(activity_id), "%lld", (long long)seq);
    /* The callback pattern hands $$.Task.Token to someone else; it is the
     * same signed token a worker gets (protocol/KAFKA.md). */
    char *token_buf = token ? swf_token_make(ex->token_secret ? ex->token_secret
                                                              : SWF_TOKEN_DEV_SECRET,
                                             ex->execution_id, activity_id)
                            : NULL;
    swf_asl_env_t env;
    json_object *ctx;
    env_init(ex, f, &env, &ctx, token_buf);
    (void)env_in;
    json_object *eff = NULL, *params = NULL;
    int64_t timeout = 0, heartbeat = 0;
    swf_error_t *err = NULL;
    if (f->info->jsonata) {
        json_object *b = jsonata_bindings(ex, f, false, NULL, NULL, NULL, token_buf);
        bool present;
        double t = 0, h = 0;
        err = jsonata_field(f->state, "Arguments", b, &params, &present);
        if (err == NULL && !present)
            params = swf_json_ref(f->input);
        if (err == NULL)
            err = jsonata_number(f->state, "TimeoutSeconds", b, &t, &present);
        if (err == NULL)
            err = jsonata_number(f->state, "HeartbeatSeconds", b, &h, &present);
        timeout = (int64_t)t;
        heartbeat = (int64_t)h;
        json_object_put(b);
    } else {
        err = input_path(f, &env, &eff);
        if (err == NULL)
            err = template_field(f, "Parameters", eff, &env, &params);
        if (err == NULL)
            err = task_seconds(f, "TimeoutSeconds", "TimeoutSecondsPath", &env, &timeout);
        if (err == NULL)
            err = task_seconds(f, "HeartbeatSeconds", "HeartbeatSecondsPath", &env, &heartbeat);
    }
    json_object_put(ctx);
    json_object_put(eff);
    size_t bytes = err == NULL ? strlen(swf_json_str(params)) : 0;
    if (bytes > SWF_LIMIT_TASK_INPUT_BYTES)
        err = swf_error_states(ERR_DATA_LIMIT,
                               "the task's input is %zu bytes; an activity task carries at most %u",
                               bytes, SWF_LIMIT_TASK_INPUT_BYTES);
    if (err != NULL) {
        json_object_put(params);
        free(token_buf);
        return state_fail_with(ex, f, err);
    }
    json_object_put(f->effective);
    f->effective = params;
    int64_t got = waiter_add(ex, W_ACTIVITY, f);
    assert(got == seq);
    state_info_t *info = (state_info_t *)f->info;
    if (info->activity_type == NULL) {
        char list[256];
        swf_asl_resource_task_list(resource, list, sizeof(list));
        info->activity_type = json_object_new_object();
        swf_json_add(info->activity_type, "name", json_object_new_string(list));
        swf_json_add(info->activity_type, "version", json_object_new_string("1"));
        /* The execution's prefix (swf run --dev's own task lists) goes
         * before the list: the activity type stays the resource's. */
        char *prefixed = xprintf("%s%s", ex->task_list_prefix ? ex->task_list_prefix : "", list);
        info->task_list = json_object_new_object();
        swf_json_add(info->task_list, "name", json_object_new_string(prefixed));
        free(prefixed);
    }
    json_object *a = json_object_new_object();
    swf_json_add(a, "activityId", json_object_new_string(activity_id));
    swf_json_add(a, "activityType", swf_json_ref(info->activity_type));
    swf_json_add(a, "taskList", swf_json_ref(info->task_list));
    swf_json_add(a, "input", swf_json_ref(params));
    json_object *c = control_new(f);
    swf_json_add(c, "attempt", json_object_new_int(f->retry_total));
    swf_json_add(c, "resource", jstr(resource));
    if (token)
        swf_json_add(c, "token", json_object_new_string(token_buf));
    free(token_buf);
    swf_json_add(a, "control", c);
    if (timeout > 0)
        swf_json_add(a, "startToCloseTimeout", json_object_new_int64(timeout));
    if (heartbeat > 0)
        swf_json_add(a, "heartbeatTimeout", json_object_new_int64(heartbeat));
    decisions_push(ex->out, SWF_EVENT_ACTIVITY_TASK_SCHEDULED, a);
    f->wait_seq = seq;
    f->phase = PH_ACTIVITY;
    return STEP_BLOCKED;
}

/* ---------------------------------------------------------------- states */

static step_t enter_pass(swf_asl_exec_t *ex, frame_t *f, const swf_asl_env_t *env)
{
    json_object *eff = NULL, *result = NULL, *v;
    swf_error_t *err = input_path(f, env, &eff);
    if (err == NULL) {
        if (swf_json_get(f->state, "Result", &v))
            result = swf_json_ref(v);
        else
            err = template_field(f, "Parameters", eff, env, &result);
    }
    json_object_put(eff);
    if (err != NULL)
        return state_fail_with(ex, f, err);
    json_object *out = NULL, *vars = NULL;
    err = assign_eval(f, f->state, result, env, &vars);
    if (err == NULL)
        err = result_and_output(f, f->state, result, env, &out);
    json_object_put(result);
    if (err != NULL) {
        json_object_put(vars);
        return state_fail_with(ex, f, err);
    }
    vars_commit(f, vars);
    return transition_default(ex, f, out);
}

static step_t enter_choice(swf_asl_exec_t *ex, frame_t *f, const swf_asl_env_t *env)
{
    json_object *eff = NULL, *rule = NULL, *out = NULL, *op, *vars = NULL, *tmp;
    swf_error_t *err = input_path(f, env, &eff);
    if (err == NULL)
        err = swf_asl_choice_eval(f->state, eff, env, &rule);
    if (err == NULL) {
        /* A matching rule's Assign replaces the state's. */
        json_object *holder = rule && swf_json_get(rule, "Assign", &tmp) ? rule : f->state;
        err = assign_eval(f, holder, eff, env, &vars);
    }
    const char *next = NULL;
    if (err == NULL) {
        next = rule ? swf_json_get_string(rule, "Next") : swf_json_get_string(f->state, "Default");
        if (next == NULL)
            err = swf_error_states(ERR_NO_CHOICE, "no Choice rule matched and there is no Default "
                                                  "in state '%s'", f->name);
    }
    if (err == NULL) {
        if (!swf_json_get(f->state, "OutputPath", &op))
            out = swf_json_ref(eff);
        else if (op == NULL)
            out = json_object_new_object();
        else
            err = swf_asl_path_eval(json_object_get_string(op), eff, env, &out);
    }
    json_object_put(eff);
    if (err != NULL) {
        json_object_put(vars);
        return state_fail_with(ex, f, err);
    }
    vars_commit(f, vars);
    return transition(ex, f, next, out);
}

/* Input then OutputPath, for Wait and Succeed (no result). */
static swf_error_t *passthrough_output(frame_t *f, json_object *eff, const swf_asl_env_t *env,
                                       json_object **out)
{
    json_object *op;
    if (!swf_json_get(f->state, "OutputPath", &op)) {
        *out = swf_json_ref(eff);
        return NULL;
    }
    if (op == NULL) {
        *out = json_object_new_object();
        return NULL;
    }
    return swf_asl_path_eval(json_object_get_string(op), eff, env, out);
}

static step_t enter_wait(swf_asl_exec_t *ex, frame_t *f, const swf_asl_env_t *env)
{
    json_object *eff = NULL, *v, *val = NULL;
    swf_error_t *err = input_path(f, env, &eff);
    double seconds = 0;
    if (err == NULL) {
        if (swf_json_get(f->state, "Seconds", &v)) {
            seconds = json_object_get_double(v);
        } else if (swf_json_get(f->state, "Timestamp", &v)) {
            swf_time_t t;
            if (swf_time_parse(json_object_get_string(v), &t))
                seconds = (double)(swf_time_to_ms(t) - ex->now_ms) / 1000.0;
        } else if (swf_json_get(f->state, "SecondsPath", &v)) {
            err = swf_asl_path_eval(json_object_get_string(v), eff, env, &val);
            if (err == NULL) {
                double d = json_object_is_type(val, json_type_int)
                               ? (double)json_object_get_int64(val)
                               : json_object_get_double(val);
                if (!swf_json_is_number(val) || !(d >= 0) || d != floor(d))
                    err = swf_error_states(ERR_RUNTIME,
                                           "SecondsPath '%s' must select a non-negative integer, "
                                           "not %s",
                                           json_object_get_string(v), swf_json_str(val));
                else if (d > SWF_LIMIT_STATE_SECONDS)
                    err = swf_error_states(
                        ERR_RUNTIME, "SecondsPath '%s' must select at most %d, not %s",
                        json_object_get_string(v), SWF_LIMIT_STATE_SECONDS, swf_json_str(val));
                else
                    seconds = d;
            }
        } else if (swf_json_get(f->state, "TimestampPath", &v)) {
            err = swf_asl_path_eval(json_object_get_string(v), eff, env, &val);
            swf_time_t t;
            if (err == NULL) {
                if (json_object_is_type(val, json_type_string) &&
                    swf_time_parse(json_object_get_string(val), &t))
                    seconds = (double)(swf_time_to_ms(t) - ex->now_ms) / 1000.0;
                else
                    err = swf_error_states(ERR_RUNTIME,
                                           "TimestampPath '%s' must select an RFC 3339 timestamp, "
                                           "not %s", json_object_get_string(v), swf_json_str(val));
            }
        }
    }
    json_object_put(val);
    if (err != NULL) {
        json_object_put(eff);
        return state_fail_with(ex, f, err);
    }
    json_object_put(f->effective);
    f->effective = eff;
    f->wait_seq = timer_start(ex, f, seconds, "wait");
    f->phase = PH_TIMER;
    return STEP_BLOCKED;
}

static step_t enter_succeed(swf_asl_exec_t *ex, frame_t *f, const swf_asl_env_t *env)
{
    json_object *eff = NULL, *out = NULL;
    swf_error_t *err = input_path(f, env, &eff);
    if (err == NULL)
        err = passthrough_output(f, eff, env, &out);
    json_object_put(eff);
    if (err != NULL)
        return state_fail_with(ex, f, err);
    return transition(ex, f, NULL, out);
}

/* Error/Cause, or ErrorPath/CausePath (a path or an intrinsic call). */
static swf_error_t *fail_field(frame_t *f, const char *field, const char *path_field,
                               const swf_asl_env_t *env, char **out)
{
    json_object *v, *val = NULL;
    *out = NULL;
    if (swf_json_get(f->state, field, &v)) {
        *out = xstrdup(json_object_get_string(v));
        return NULL;
    }
    if (!swf_json_get(f->state, path_field, &v))
        return NULL;
    swf_error_t *err = swf_asl_expr_eval(json_object_get_string(v), f->input, env, &val);
    if (err)
        return err;
    if (!json_object_is_type(val, json_type_string))
        err = swf_error_states(ERR_RUNTIME, "%s '%s' must select a string, not %s", path_field,
                               json_object_get_string(v), swf_json_str(val));
    else
        *out = xstrdup(json_object_get_string(val));
    json_object_put(val);
    return err;
}

static step_t enter_fail(swf_asl_exec_t *ex, frame_t *f, const swf_asl_env_t *env)
{
    char *error = NULL, *cause = NULL;
    swf_error_t *err = fail_field(f, "Error", "ErrorPath", env, &error);
    if (err == NULL)
        err = fail_field(f, "Cause", "CausePath", env, &cause);
    if (err != NULL) {
        free(error);
        free(cause);
        return state_fail_with(ex, f, err);
    }
    json_object *data = error_object(error ? error : "", cause);
    trace(ex, f, SWF_ASL_STATE_FAILED, data);
    json_object_put(data);
    step_t s = frame_finish_error(ex, f, error ? error : "", cause);
    free(error);
    free(cause);
    return s;
}

static step_t enter_parallel(swf_asl_exec_t *ex, frame_t *f, const swf_asl_env_t *env)
{
    json_object *eff = NULL, *params = NULL, *branches;
    swf_error_t *err;
    if (f->info->jsonata) {
        /* Arguments (default: the input) is what every branch gets. */
        json_object *b = jsonata_bindings(ex, f, false, NULL, NULL, NULL, NULL);
        bool present;
        err = jsonata_field(f->state, "Arguments", b, &params, &present);
        if (err == NULL && !present)
            params = swf_json_ref(f->input);
        json_object_put(b);
    } else {
        err = input_path(f, env, &eff);
        if (err == NULL)
            err = template_field(f, "Parameters", eff, env, &params);
        json_object_put(eff);
    }
    if (err != NULL)
        return state_fail_with(ex, f, err);
    json_object_put(f->effective);
    f->effective = params;
    swf_json_get(f->state, "Branches", &branches);
    frame_clear_children(f);
    size_t n = json_object_array_length(branches);
    f->nchildren = n;
    f->children = xcalloc(n, sizeof(frame_t *));
    f->results = xcalloc(n, sizeof(json_object *));
    f->phase = PH_CHILDREN;
    f->max_running = 0;
    f->tolerance = false;
    for (size_t i = 0; i < n; i++) {
        char *path = xprintf("%s%s%s[%zu]", f->path, *f->path ? "/" : "", f->name, i);
        frame_t *c = frame_new(ex, f, i, path, json_object_array_get_idx(branches, i), params);
        c->entered_ms = ex->now_ms;
        f->children[i] = c;
        f->started++;
        f->running++;
        enqueue(ex, c);
    }
    return n == 0 ? STEP_CONTINUE : STEP_BLOCKED;
}

/* Reads an optional non-negative integer field or its *Path form. */
static swf_error_t *map_number(frame_t *f, json_object *eff, const char *field,
                               const char *path_field, const swf_asl_env_t *env, double *out,
                               bool *present)
{
    json_object *v, *val = NULL;
    *present = false;
    if (swf_json_get(f->state, field, &v)) {
        *out = json_object_get_double(v);
        *present = true;
        return NULL;
    }
    if (!swf_json_get(f->state, path_field, &v))
        return NULL;
    swf_error_t *err = swf_asl_path_eval(json_object_get_string(v), eff, env, &val);
    if (err)
        return err;
    bool is_pct = strstr(field, "Percentage") != NULL;
    bool okv = is_pct ? swf_json_is_number(val) : json_object_is_type(val, json_type_int);
    if (!okv || json_object_get_double(val) < 0 || (is_pct && json_object_get_double(val) > 100))
        err = swf_error_states(ERR_RUNTIME, "%s '%s' must select a %s, not %s", path_field,
                               json_object_get_string(v),
                               is_pct ? "number from 0 to 100" : "non-negative integer",
                               swf_json_str(val));
    else {
        *out = json_object_get_double(val);
        *present = true;
    }
    json_object_put(val);
    return err;
}

/* The input of the iteration for item i: the ItemSelector (or Parameters)
 * applied to it, or the item itself. */
static swf_error_t *map_item_input(swf_asl_exec_t *ex, frame_t *f, size_t i, json_object *item,
                                   json_object **input)
{
    json_object *sel;
    *input = NULL;
    if (!swf_json_get(f->state, "ItemSelector", &sel))
        swf_json_get(f->state, "Parameters", &sel);
    if (sel == NULL) {
        *input = swf_json_ref(item);
        return NULL;
    }
    json_object *mi = json_object_new_object(), *it = json_object_new_object();
    swf_json_add(it, "Index", json_object_new_int64((int64_t)i));
    swf_json_add(it, "Value", swf_json_ref(item));
    swf_json_add(mi, "Item", it);
    swf_error_t *err;
    if (f->info->jsonata) {
        json_object *b = jsonata_bindings(ex, f, false, NULL, NULL, mi, NULL);
        bool defined = true;
        err = swf_asl_jsonata_template_eval(sel, b, input, &defined);
        if (err == NULL && !defined)
            err = swf_error_states(ERR_QUERY, "ItemSelector has no value (undefined)");
        json_object_put(b);
    } else {
        json_object *ctx = context_build(ex, f, mi, NULL);
        swf_asl_env_t env = {.context = ctx, .variables = f->vars, .rng = &ex->rng};
        err = swf_asl_template_eval(sel, f->effective, &env, input);
        json_object_put(ctx);
    }
    if (err != NULL) {
        json_object_put(*input);
        *input = NULL;
    }
    return err;
}

static swf_error_t *map_start_child(swf_asl_exec_t *ex, frame_t *f)
{
    size_t i = f->started;
    json_object *item = json_object_array_get_idx(f->items, i), *input = NULL;
    json_object *processor;
    if (!swf_json_get(f->state, "ItemProcessor", &processor))
        swf_json_get(f->state, "Iterator", &processor);
    if (f->batched) {
        input = swf_json_ref(item);
    } else {
        swf_error_t *err = map_item_input(ex, f, i, item, &input);
        if (err)
            return err;
    }
    char *path = xprintf("%s%s%s[%zu]", f->path, *f->path ? "/" : "", f->name, i);
    frame_t *c = frame_new(ex, f, i, path, processor, input);
    json_object_put(input);
    c->entered_ms = ex->now_ms;
    f->children[i] = c;
    f->started++;
    f->running++;
    enqueue(ex, c);
    return NULL;
}

/* A limit of the ItemBatcher: `field` (a positive integer, or a JSONata
 * expression in a JSONata state) or `path_field` (a reference path into the
 * effective input). *out is 0 when neither is given. */
static swf_error_t *batcher_limit(frame_t *f, json_object *batcher, const char *field,
                                  const char *path_field, json_object *bindings,
                                  const swf_asl_env_t *env, double *out)
{
    json_object *v, *val = NULL;
    swf_error_t *err = NULL;
    bool present = false;
    *out = 0;
    if (f->info->jsonata) {
        err = jsonata_number(batcher, field, bindings, out, &present);
    } else if (swf_json_get(batcher, field, &v)) {
        *out = json_object_get_double(v);
    } else if (swf_json_get(batcher, path_field, &v)) {
        err = swf_asl_path_eval(json_object_get_string(v), f->effective, env, &val);
        if (err == NULL &&
            (!json_object_is_type(val, json_type_int) || json_object_get_int64(val) < 1))
            err = swf_error_states(ERR_RUNTIME, "%s '%s' must select a positive integer, not %s",
                                   path_field, json_object_get_string(v), swf_json_str(val));
        else if (err == NULL)
            *out = json_object_get_double(val);
    }
    json_object_put(val);
    return err;
}

/* ItemBatcher: replaces *items by batches {"Items": [...]} (with
 * "BatchInput" when given) of at most MaxItemsPerBatch items and
 * MaxInputBytesPerBatch bytes, each item after ItemSelector (AWS,
 * input-output-itembatcher.html). */
static swf_error_t *map_batch(swf_asl_exec_t *ex, frame_t *f, json_object *batcher,
                              const swf_asl_env_t *env, json_object **items)
{
    double max_items = 0, max_bytes = 0;
    json_object *b =
        f->info->jsonata ? jsonata_bindings(ex, f, false, NULL, NULL, NULL, NULL) : NULL;
    json_object *bi = NULL, *batches = NULL, *batch = NULL, *list = NULL;
    swf_error_t *err =
        batcher_limit(f, batcher, "MaxItemsPerBatch", "MaxItemsPerBatchPath", b, env, &max_items);
    if (err == NULL)
        err = batcher_limit(f, batcher, "MaxInputBytesPerBatch", "MaxInputBytesPerBatchPath", b,
                            env, &max_bytes);
    json_object *tmpl;
    if (err == NULL && swf_json_get(batcher, "BatchInput", &tmpl)) {
        if (f->info->jsonata) {
            bool defined = true;
            err = swf_asl_jsonata_template_eval(tmpl, b, &bi, &defined);
            if (err == NULL && !defined)
                err = swf_error_states(ERR_QUERY, "BatchInput has no value (undefined)");
        } else {
            err = swf_asl_template_eval(tmpl, f->effective, env, &bi);
        }
    }
    json_object_put(b);
    if (err != NULL) {
        json_object_put(bi);
        return err;
    }
    size_t n = json_object_array_length(*items), in_batch = 0, bytes = 0;
    size_t base =
        strlen("{\"Items\":[]}") + (bi ? strlen(",\"BatchInput\":") + strlen(swf_json_str(bi)) : 0);
    batches = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        json_object *input = NULL;
        err = map_item_input(ex, f, i, json_object_array_get_idx(*items, i), &input);
        if (err != NULL)
            break;
        size_t size = strlen(swf_json_str(input)) + (in_batch > 0 ? 1 : 0);
        if (batch != NULL && ((max_items > 0 && (double)in_batch >= max_items) ||
                              (max_bytes > 0 && (double)(base + bytes + size) > max_bytes)))
            batch = NULL;
        if (batch == NULL) {
            batch = json_object_new_object();
            list = json_object_new_array();
            if (bi != NULL)
                swf_json_add(batch, "BatchInput", swf_json_ref(bi));
            swf_json_add(batch, "Items", list);
            json_object_array_add(batches, batch);
            in_batch = bytes = 0;
            size = strlen(swf_json_str(input));
        }
        json_object_array_add(list, input);
        in_batch++;
        bytes += size;
    }
    json_object_put(bi);
    if (err != NULL) {
        json_object_put(batches);
        return err;
    }
    json_object_put(*items);
    *items = batches;
    return NULL;
}

static step_t enter_map(swf_asl_exec_t *ex, frame_t *f, const swf_asl_env_t *env)
{
    json_object *eff = NULL, *items = NULL, *v;
    swf_error_t *err = NULL;
    if (f->info->jsonata) {
        json_object *b = jsonata_bindings(ex, f, false, NULL, NULL, NULL, NULL);
        bool present;
        err = jsonata_field(f->state, "Items", b, &items, &present);
        if (err == NULL && !present)
            items = swf_json_ref(f->input);
        json_object_put(b);
        eff = swf_json_ref(f->input);
        if (err == NULL && !json_object_is_type(items, json_type_array))
            err = swf_error_states(ERR_QUERY, "Items of the Map state '%s' must be an array, not %s",
                                   f->name, swf_json_type_name(items));
    } else {
        err = input_path(f, env, &eff);
        if (err == NULL) {
            if (swf_json_get(f->state, "ItemsPath", &v) && v != NULL)
                err = swf_asl_path_eval(json_object_get_string(v), eff, env, &items);
            else
                items = swf_json_ref(eff);
        }
    }
    if (err == NULL && !json_object_is_type(items, json_type_array))
        err = swf_error_states(ERR_RUNTIME, "the Map state '%s' needs an array of items, not %s",
                               f->name, swf_json_type_name(items));
    if (err == NULL && json_object_array_length(items) > SWF_LIMIT_MAP_ITEMS)
        err = swf_error_states(ERR_RUNTIME, "the Map state '%s' has %zu items, the limit is %d",
                               f->name, json_object_array_length(items), SWF_LIMIT_MAP_ITEMS);
    double maxc = 0, tcount = 0, tpct = 0;
    bool has_max, has_count, has_pct;
    if (err == NULL)
        err = map_number(f, eff, "MaxConcurrency", "MaxConcurrencyPath", env, &maxc, &has_max);
    if (err == NULL)
        err = map_number(f, eff, "ToleratedFailureCount", "ToleratedFailureCountPath", env,
                         &tcount, &has_count);
    if (err == NULL)
        err = map_number(f, eff, "ToleratedFailurePercentage", "ToleratedFailurePercentagePath",
                         env, &tpct, &has_pct);
    if (err != NULL) {
        json_object_put(eff);
        json_object_put(items);
        return state_fail_with(ex, f, err);
    }
    json_object_put(f->effective);
    f->effective = eff;
    frame_clear_children(f);
    json_object *batcher;
    f->batched = swf_json_get(f->state, "ItemBatcher", &batcher) &&
                 json_object_is_type(batcher, json_type_object);
    if (f->batched && (err = map_batch(ex, f, batcher, env, &items)) != NULL) {
        json_object_put(items);
        return state_fail_with(ex, f, err);
    }
    size_t n = json_object_array_length(items);
    f->items = items;
    f->nchildren = n;
    f->children = xcalloc(n, sizeof(frame_t *));
    f->results = xcalloc(n, sizeof(json_object *));
    f->max_running = has_max ? (size_t)maxc : 0;
    f->tolerance = has_count || has_pct;
    f->tolerated_count = has_count ? (size_t)tcount : (size_t)-1;
    f->tolerated_pct = has_pct ? tpct : 100.0;
    if (!has_count && has_pct)
        f->tolerated_count = (size_t)-1;
    if (has_count && !has_pct)
        f->tolerated_pct = 100.0;
    f->phase = PH_CHILDREN;
    return STEP_CONTINUE; /* children start in the PH_CHILDREN step */
}

static bool tolerated(frame_t *f)
{
    if (!f->tolerance)
        return false;
    if (f->tolerated_count != (size_t)-1 && f->failed > f->tolerated_count)
        return false;
    if (f->nchildren > 0 && (double)f->failed * 100.0 / (double)f->nchildren > f->tolerated_pct)
        return false;
    return true;
}

/* Parallel and Map, waiting for their children. */
static step_t step_children(swf_asl_exec_t *ex, frame_t *f)
{
    if (f->child_failed) {
        for (size_t i = 0; i < f->nchildren; i++) {
            if (f->children[i] != NULL) {
                frame_abandon(ex, f->children[i]);
                f->children[i] = NULL;
            }
        }
        char *error = f->child_error, *cause = f->child_cause;
        f->child_error = f->child_cause = NULL;
        frame_clear_children(f);
        step_t s = state_error(ex, f, error, cause);
        free(error);
        free(cause);
        return s;
    }
    if (f->info->type == ST_MAP) {
        while (f->started < f->nchildren && (f->max_running == 0 || f->running < f->max_running)) {
            swf_error_t *err = map_start_child(ex, f);
            if (err != NULL) {
                for (size_t i = 0; i < f->nchildren; i++) {
                    if (f->children[i] != NULL) {
                        frame_abandon(ex, f->children[i]);
                        f->children[i] = NULL;
                    }
                }
                frame_clear_children(f);
                return state_fail_with(ex, f, err);
            }
        }
    }
    if (f->finished < f->nchildren)
        return STEP_BLOCKED;
    json_object *arr = json_object_new_array_ext((int)f->nchildren);
    for (size_t i = 0; i < f->nchildren; i++) {
        json_object_array_add(arr, f->results[i]);
        f->results[i] = NULL;
    }
    frame_clear_children(f);
    step_t s = state_result(ex, f, arr);
    json_object_put(arr);
    return s;
}

/* A child frame finished: record its result in the parent and wake it. */
static void child_done(swf_asl_exec_t *ex, frame_t *c)
{
    frame_t *p = c->parent;
    assert(p != NULL && p->phase == PH_CHILDREN && p->children[c->index] == c);
    p->children[c->index] = NULL;
    p->finished++;
    p->running--;
    if (c->ok) {
        p->results[c->index] = c->output;
        c->output = NULL;
    } else {
        p->failed++;
        p->results[c->index] = error_object(c->error, c->cause);
        if (!p->child_failed && !tolerated(p)) {
            /* Stop the siblings now, before any of them starts more work:
             * AWS starts no further iteration once one has failed. */
            p->child_failed = true;
            for (size_t i = 0; i < p->nchildren; i++) {
                if (p->children[i] != NULL) {
                    frame_abandon(ex, p->children[i]);
                    p->children[i] = NULL;
                }
            }
            if (p->tolerance) {
                p->child_error = xstrdup(ERR_TOLERATED);
                p->child_cause = xprintf("the Map state '%s' failed because %zu of its %zu "
                                         "iterations failed, more than it tolerates",
                                         p->name, p->failed, p->nchildren);
            } else {
                p->child_error = xstrdup(c->error);
                p->child_cause = xstrdup(c->cause);
            }
        }
    }
    frame_bury(ex, c);
    enqueue(ex, p);
}

/* -------------------------------------------------------------- the loop */

/* Pass, Succeed, Fail, Choice and Wait in a JSONata state. (Task,
 * Parallel and Map share their JSONPath code and branch where they differ.) */
static step_t enter_jsonata(swf_asl_exec_t *ex, frame_t *f)
{
    json_object *b = jsonata_bindings(ex, f, false, NULL, NULL, NULL, NULL);
    swf_error_t *err = NULL;
    step_t s = STEP_DONE;
    switch (f->info->type) {
    case ST_PASS:
        s = jsonata_leave(ex, f, f->state, f->state, b, f->input,
                          swf_json_get_string(f->state, "Next"));
        break;
    case ST_SUCCEED:
        s = jsonata_leave(ex, f, f->state, f->state, b, f->input, NULL);
        break;
    case ST_FAIL: {
        json_object *e = NULL, *c = NULL;
        bool pe, pc;
        err = jsonata_field(f->state, "Error", b, &e, &pe);
        if (err == NULL)
            err = jsonata_field(f->state, "Cause", b, &c, &pc);
        if (err == NULL && ((pe && !json_object_is_type(e, json_type_string)) ||
                            (pc && !json_object_is_type(c, json_type_string))))
            err = swf_error_states(ERR_QUERY, "Error and Cause must be strings");
        if (err == NULL) {
            const char *error = pe ? json_object_get_string(e) : "";
            const char *cause = pc ? json_object_get_string(c) : "";
            json_object *data = error_object(error, cause);
            trace(ex, f, SWF_ASL_STATE_FAILED, data);
            json_object_put(data);
            s = frame_finish_error(ex, f, error, cause);
        }
        json_object_put(e);
        json_object_put(c);
        break;
    }
    case ST_CHOICE: {
        json_object *choices = NULL, *rule = NULL;
        swf_json_get(f->state, "Choices", &choices);
        size_t n = json_object_array_length(choices);
        for (size_t i = 0; i < n && err == NULL && rule == NULL; i++) {
            json_object *r = json_object_array_get_idx(choices, i), *cond = NULL;
            bool present;
            err = jsonata_field(r, "Condition", b, &cond, &present);
            if (err == NULL && !json_object_is_type(cond, json_type_boolean))
                err = swf_error_states(ERR_QUERY, "the Condition of Choices[%zu] must be a "
                                                  "boolean, not %s", i, swf_json_type_name(cond));
            if (err == NULL && json_object_get_boolean(cond))
                rule = r;
            json_object_put(cond);
        }
        if (err != NULL)
            break;
        const char *next = rule ? swf_json_get_string(rule, "Next")
                                : swf_json_get_string(f->state, "Default");
        if (next == NULL) {
            err = swf_error_states(ERR_NO_CHOICE, "no Choice rule matched and there is no "
                                                  "Default in state '%s'", f->name);
            break;
        }
        json_object *tmp;
        json_object *out_holder = rule && swf_json_get(rule, "Output", &tmp) ? rule : f->state;
        json_object *assign_holder = rule && swf_json_get(rule, "Assign", &tmp) ? rule : f->state;
        s = jsonata_leave(ex, f, out_holder, assign_holder, b, f->input, next);
        break;
    }
    case ST_WAIT: {
        double seconds = 0;
        bool present;
        err = jsonata_number(f->state, "Seconds", b, &seconds, &present);
        if (err == NULL && !present) {
            json_object *ts = NULL;
            err = jsonata_field(f->state, "Timestamp", b, &ts, &present);
            swf_time_t t;
            if (err == NULL && present) {
                if (json_object_is_type(ts, json_type_string) &&
                    swf_time_parse(json_object_get_string(ts), &t))
                    seconds = (double)(swf_time_to_ms(t) - ex->now_ms) / 1000.0;
                else
                    err = swf_error_states(ERR_QUERY, "Timestamp must be an RFC 3339 "
                                                      "timestamp, not %s", swf_json_str(ts));
            }
            json_object_put(ts);
        }
        if (err == NULL) {
            f->wait_seq = timer_start(ex, f, seconds, "wait");
            f->phase = PH_TIMER;
            s = STEP_BLOCKED;
        }
        break;
    }
    default:
        break;
    }
    json_object_put(b);
    if (err != NULL)
        return state_fail_with(ex, f, err);
    return s;
}

static step_t step_enter(swf_asl_exec_t *ex, frame_t *f)
{
    f->entered_ms = ex->now_ms;
    swf_asl_env_t env;
    json_object *ctx;
    trace(ex, f, SWF_ASL_STATE_ENTERED, f->input);
    if (f->info->type == ST_TASK)
        return enter_task(ex, f, NULL);
    if (f->info->jsonata && f->info->type != ST_PARALLEL && f->info->type != ST_MAP)
        return enter_jsonata(ex, f);
    env_init(ex, f, &env, &ctx, NULL);
    step_t s = STEP_DONE;
    switch (f->info->type) {
    case ST_PASS: s = enter_pass(ex, f, &env); break;
    case ST_CHOICE: s = enter_choice(ex, f, &env); break;
    case ST_WAIT: s = enter_wait(ex, f, &env); break;
    case ST_SUCCEED: s = enter_succeed(ex, f, &env); break;
    case ST_FAIL: s = enter_fail(ex, f, &env); break;
    case ST_PARALLEL: s = enter_parallel(ex, f, &env); break;
    case ST_MAP: s = enter_map(ex, f, &env); break;
    case ST_TASK: break;
    }
    json_object_put(ctx);
    return s;
}

static step_t step_outcome(swf_asl_exec_t *ex, frame_t *f)
{
    if (!f->has_outcome)
        return STEP_BLOCKED;
    bool ok = f->outcome_ok;
    json_object *result = swf_json_ref(f->outcome);
    char *error = xstrdup(f->outcome_error), *cause = xstrdup(f->outcome_cause);
    frame_clear_outcome(f);
    f->wait_seq = 0;
    step_t s;
    if (f->phase == PH_RETRY) {
        f->phase = PH_ENTER;
        s = STEP_CONTINUE;
    } else if (f->phase == PH_TIMER && f->info->jsonata) {
        json_object *b = jsonata_bindings(ex, f, false, NULL, NULL, NULL, NULL);
        s = jsonata_leave(ex, f, f->state, f->state, b, f->input,
                          swf_json_get_string(f->state, "Next"));
        json_object_put(b);
    } else if (f->phase == PH_TIMER) {
        swf_asl_env_t env;
        json_object *ctx, *out = NULL, *vars = NULL;
        env_init(ex, f, &env, &ctx, NULL);
        swf_error_t *err = assign_eval(f, f->state, f->effective, &env, &vars);
        if (err == NULL)
            err = passthrough_output(f, f->effective, &env, &out);
        json_object_put(ctx);
        if (err != NULL) {
            json_object_put(vars);
            s = state_fail_with(ex, f, err);
        } else {
            vars_commit(f, vars);
            s = transition_default(ex, f, out);
        }
    } else if (ok) {
        s = state_result(ex, f, result);
    } else {
        s = state_error(ex, f, error, cause);
    }
    json_object_put(result);
    free(error);
    free(cause);
    return s;
}

static void run_frame(swf_asl_exec_t *ex, frame_t *f)
{
    for (;;) {
        if (f->dead)
            return;
        step_t s;
        if (++ex->transitions > SWF_LIMIT_TRANSITIONS_PER_DECISION) {
            s = frame_finish_error(ex, f, ERR_RUNTIME,
                                   "more state transitions in one decision than the limit "
                                   "allows: is there a loop without a Wait or a Task?");
        } else {
            switch (f->phase) {
            case PH_ENTER: s = step_enter(ex, f); break;
            case PH_CHILDREN: s = step_children(ex, f); break;
            case PH_ACTIVITY:
            case PH_TIMER:
            case PH_RETRY: s = step_outcome(ex, f); break;
            case PH_DONE:
            default: s = STEP_DONE; break;
            }
        }
        if (s == STEP_BLOCKED)
            return;
        if (s == STEP_DONE) {
            if (f->parent != NULL)
                child_done(ex, f);
            return;
        }
    }
}

/* ---------------------------------------------------------------- decide */

static void close_decision(swf_asl_exec_t *ex)
{
    frame_t *r = ex->root;
    json_object *a = json_object_new_object();
    if (r->ok) {
        swf_json_add(a, "result", swf_json_ref(r->output));
        decisions_push(ex->out, SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED, a);
    } else {
        swf_json_add(a, "reason", jstr(r->error));
        swf_json_add(a, "details", jstr(r->cause ? r->cause : ""));
        decisions_push(ex->out, SWF_EVENT_WORKFLOW_EXECUTION_FAILED, a);
    }
    ex->close_decided = true;
}

/*
 * A history holds at most ex->history_limit events (SWF_LIMIT_HISTORY_EVENTS;
 * the store refuses more). A decision that would leave too little room for
 * what may still come fails the execution instead, as AWS fails an execution
 * at its history limit: each open activity or timer may still bring its
 * answer and a decision task (five events at most: ActivityTaskStarted and
 * Completed, DecisionTaskScheduled, Started and Completed), and the close
 * needs a decision task too. A decision that closes the execution needs
 * only to fit. Event ids alone decide, so replay derives the same.
 */
static void history_limit_check(swf_asl_exec_t *ex)
{
    /* Counted from the decision task's DecisionTaskStarted, which is the
     * last event when deciding live and not when replaying. */
    int64_t after = ex->dt_started_id + 1 + (int64_t)ex->expected.count;
    int64_t room = ex->close_decided ? 0 : (int64_t)ex->open_waiters * 5 + 4;
    if (after + room <= ex->history_limit)
        return;
    swf_asl_decisions_clear(&ex->expected);
    json_object *a = json_object_new_object();
    swf_json_add(a, "reason", json_object_new_string(ERR_RUNTIME));
    char *why =
        xprintf("the execution history would outgrow its limit of %lld events "
                "(%lld events so far; activities and timers open: %zu)",
                (long long)ex->history_limit, (long long)ex->dt_started_id, ex->open_waiters);
    swf_json_add(a, "details", json_object_new_string(why));
    free(why);
    decisions_push(ex->out, SWF_EVENT_WORKFLOW_EXECUTION_FAILED, a);
    ex->close_decided = true;
}

swf_error_t *swf_asl_exec_decide(swf_asl_exec_t *ex, swf_asl_decisions_t *out)
{
    if (!ex->decision_open || ex->dt_started_id == 0)
        return swf_error_new(SWF_E_INTERNAL, NULL, "decide() needs a started decision task");
    if (ex->decided) {
        for (size_t i = 0; i < ex->expected.count; i++)
            decisions_push(out, ex->expected.items[i].type,
                           swf_json_ref(ex->expected.items[i].attrs));
        return NULL;
    }
    swf_asl_decisions_clear(&ex->expected);
    ex->expected_next = 0;
    ex->decided = true;
    ex->out = &ex->expected;
    ex->rng.state = hash_str(ex->execution_id) ^ ((uint64_t)ex->dt_started_id * 0x9e3779b97f4a7c15ULL);
    ex->transitions = 0;
    if (ex->status == SWF_ASL_RUNNING && !ex->close_decided && ex->root == NULL && !ex->broken) {
        /* Cancelled: the close decision was made and failed; make it again. */
        json_object *a = json_object_new_object();
        swf_json_add(a, "details", json_object_new_string("cancel requested"));
        decisions_push(ex->out, SWF_EVENT_WORKFLOW_EXECUTION_CANCELED, a);
        ex->close_decided = true;
    } else if (ex->status == SWF_ASL_RUNNING && !ex->close_decided) {
        if (ex->broken) {
            json_object *a = json_object_new_object();
            swf_json_add(a, "reason", json_object_new_string(ERR_RUNTIME));
            swf_json_add(a, "details", jstr(ex->broken_reason));
            decisions_push(ex->out, SWF_EVENT_WORKFLOW_EXECUTION_FAILED, a);
            ex->close_decided = true;
        } else if (ex->cancel_requested) {
            frame_abandon(ex, ex->root);
            ex->root = NULL; /* buried: freed with the graveyard below */
            json_object *a = json_object_new_object();
            swf_json_add(a, "details", json_object_new_string("cancel requested"));
            decisions_push(ex->out, SWF_EVENT_WORKFLOW_EXECUTION_CANCELED, a);
            ex->close_decided = true;
        } else {
            while (ex->qhead < ex->qtail) {
                frame_t *f = ex->queue[ex->qhead++];
                f->queued = false;
                run_frame(ex, f);
            }
            ex->qhead = ex->qtail = 0;
            if (ex->root->phase == PH_DONE)
                close_decision(ex);
        }
        history_limit_check(ex);
    }
    graveyard_empty(ex);
    ex->out = NULL;
    for (size_t i = 0; i < ex->expected.count; i++)
        decisions_push(out, ex->expected.items[i].type, swf_json_ref(ex->expected.items[i].attrs));
    return NULL;
}

/* ----------------------------------------------------------------- apply */

static swf_error_t *bad_event(const swf_event_t *ev, const char *why)
{
    return swf_error_new(SWF_E_INPUT, NULL, "event %lld (%s): %s", (long long)ev->id,
                         swf_event_type_name(ev->type), why);
}

static bool is_decision_event(swf_event_type_t t)
{
    return swf_event_type_is_decision(t);
}

/* Compares attributes, ignoring the bookkeeping field that only the
 * recorded event has. */
static bool decision_equal(json_object *derived, json_object *recorded)
{
    size_t n = 0;
    json_object_object_foreach(recorded, key, val) {
        if (strcmp(key, "decisionTaskCompletedEventId") == 0)
            continue;
        json_object *d;
        if (!json_object_object_get_ex(derived, key, &d) || !swf_json_equal(d, val))
            return false;
        n++;
    }
    size_t m = 0;
    json_object_object_foreach(derived, dkey, dval) {
        (void)dval;
        if (strcmp(dkey, "decisionTaskCompletedEventId") != 0)
            m++;
    }
    return n == m;
}

static const char *decision_state(json_object *attrs)
{
    json_object *c;
    if (swf_json_get(attrs, "control", &c))
        return swf_json_get_string(c, "state");
    return NULL;
}

static const char *decision_path(json_object *attrs)
{
    json_object *c;
    if (swf_json_get(attrs, "control", &c))
        return swf_json_get_string(c, "path");
    return NULL;
}

/* The path of a recorded or derived decision, or of the derived one. */
static const char *pick_path(json_object *a, json_object *b)
{
    const char *p = a ? decision_path(a) : NULL;
    return p ? p : (b ? decision_path(b) : NULL);
}

/* A derived decision that the history does not record, at event_id. */
static swf_error_t *unrecorded(const swf_asl_decision_t *d, int64_t event_id, const char *note)
{
    swf_error_t *err = swf_error_new(
        SWF_E_NONDETERMINISM, NULL,
        "event %lld: replay derived a %s decision that the history does not record%s",
        (long long)event_id, swf_event_type_name(d->type), note);
    json_object *detail = json_object_new_object();
    swf_json_add(detail, "eventId", json_object_new_int64(event_id));
    swf_json_add(detail, "state", jstr(decision_state(d->attrs)));
    swf_json_add(detail, "path", jstr(decision_path(d->attrs)));
    swf_json_add(detail, "recorded", NULL);
    json_object *der = json_object_new_object();
    swf_json_add(der, "eventType", json_object_new_string(swf_event_type_name(d->type)));
    swf_json_add(der, "attributes", swf_json_ref(d->attrs));
    swf_json_add(detail, "derived", der);
    swf_error_set_cause(err, swf_json_str(detail));
    json_object_put(detail);
    return err;
}

static swf_error_t *nondeterminism(swf_asl_exec_t *ex, const swf_event_t *ev,
                                   const swf_asl_decision_t *derived)
{
    json_object *rec = json_object_new_object();
    swf_json_add(rec, "eventType", json_object_new_string(swf_event_type_name(ev->type)));
    swf_json_add(rec, "attributes", swf_json_ref(ev->attrs));
    json_object *der = NULL;
    if (derived != NULL) {
        der = json_object_new_object();
        swf_json_add(der, "eventType",
                               json_object_new_string(swf_event_type_name(derived->type)));
        swf_json_add(der, "attributes", swf_json_ref(derived->attrs));
    }
    const char *state = decision_state(ev->attrs);
    if (state == NULL && derived)
        state = decision_state(derived->attrs);
    swf_error_t *err = swf_error_new(SWF_E_NONDETERMINISM, NULL,
                                     "event %lld: the recorded decision differs from the one "
                                     "derived by replay%s%s%s",
                                     (long long)ev->id, state ? " (state '" : "",
                                     state ? state : "", state ? "')" : "");
    json_object *detail = json_object_new_object();
    swf_json_add(detail, "eventId", json_object_new_int64(ev->id));
    swf_json_add(detail, "state", jstr(state));
    swf_json_add(detail, "path", jstr(pick_path(ev->attrs, derived ? derived->attrs : NULL)));
    swf_json_add(detail, "recorded", rec);
    swf_json_add(detail, "derived", der);
    swf_error_set_cause(err, swf_json_str(detail));
    json_object_put(detail);
    (void)ex;
    return err;
}

static int64_t attr_int(json_object *attrs, const char *key)
{
    json_object *v;
    if (!swf_json_get(attrs, key, &v) || !json_object_is_type(v, json_type_int))
        return 0;
    return json_object_get_int64(v);
}

/* Hands an activity's or timer's outcome to the frame waiting for it. */
static void deliver(swf_asl_exec_t *ex, int64_t seq, bool ok, json_object *result,
                    const char *error, const char *cause)
{
    waiter_t *w = waiter_find(ex, seq);
    if (w == NULL)
        return; /* a duplicate or late result changes nothing */
    frame_t *f = w->frame;
    waiter_close(ex, w);
    if (f == NULL || f->dead || f->wait_seq != seq || f->has_outcome)
        return;
    f->has_outcome = true;
    f->outcome_ok = ok;
    f->outcome = swf_json_ref(result);
    f->outcome_error = xstrdup(error);
    f->outcome_cause = xstrdup(cause ? cause : "");
    enqueue(ex, f);
}

/* The activity an event's scheduledEventId names: its sequence number
 * while open, -1 once closed (a late answer, which changes nothing), 0 when
 * it names no activity. */
static int64_t activity_seq(swf_asl_exec_t *ex, const swf_event_t *ev)
{
    int64_t sched = attr_int(ev->attrs, "scheduledEventId");
    if (sched <= 0 || !bits_has(&ex->activity_ids, sched))
        return 0;
    /* Scheduled events are recorded in the order of their sequence numbers,
     * so the array is in event id order too (those not yet recorded, at the
     * end, have 0): a binary search, and a scan should a history say
     * otherwise. */
    size_t lo = 0, hi = ex->nwaiters;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        int64_t id = ex->waiters[mid].event_id;
        if (id != 0 && id < sched)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t i = lo < ex->nwaiters && ex->waiters[lo].event_id == sched ? lo : 0;
    for (; i < ex->nwaiters && ex->waiters[i].event_id != sched; i++)
        ;
    if (i == ex->nwaiters || !ex->waiters[i].open)
        return -1; /* closed: known by its bit */
    return ex->waiters[i].kind == W_ACTIVITY ? ex->waiters[i].seq : 0;
}

static swf_error_t *apply_started(swf_asl_exec_t *ex, const swf_event_t *ev)
{
    json_object *def, *input;
    if (!swf_json_get(ev->attrs, "definition", &def) || !json_object_is_type(def, json_type_object))
        return bad_event(ev, "the definition is missing");
    if (!swf_json_get(ev->attrs, "input", &input))
        input = NULL;
    ex->definition = swf_json_ref(def);
    ex->input = swf_json_ref(input);
    const char *eid = swf_json_get_string(ev->attrs, "executionId");
    const char *wid = swf_json_get_string(ev->attrs, "workflowId");
    json_object *wt;
    const char *mname = NULL;
    if (swf_json_get(ev->attrs, "workflowType", &wt))
        mname = swf_json_get_string(wt, "name");
    ex->execution_id = xstrdup(eid ? eid : "local");
    ex->workflow_id = xstrdup(wid ? wid : ex->execution_id);
    ex->machine_name = xstrdup(mname ? mname : "StateMachine");
    const char *prefix = swf_json_get_string(ev->attrs, "taskListPrefix");
    ex->task_list_prefix = xstrdup(prefix ? prefix : "");
    ex->start_ms = ev->time_ms;
    ex->status = SWF_ASL_RUNNING;

    char ts[SWF_TIME_BUF];
    swf_time_format_ms(ev->time_ms, ts);
    char *sm_arn = xprintf("arn:aws:states:local:000000000000:stateMachine:%s", ex->machine_name);
    char *ex_arn = xprintf("arn:aws:states:local:000000000000:execution:%s:%s", ex->machine_name,
                           ex->workflow_id);
    json_object *e = json_object_new_object();
    swf_json_add(e, "Id", json_object_new_string(ex_arn));
    swf_json_add(e, "Input", swf_json_ref(input));
    swf_json_add(e, "Name", json_object_new_string(ex->workflow_id));
    swf_json_add(e, "RoleArn",
                           json_object_new_string("arn:aws:iam::000000000000:role/swf"));
    swf_json_add(e, "StartTime", json_object_new_string(ts));
    swf_json_add(e, "RedriveCount", json_object_new_int(0));
    ex->ctx_execution = e;
    json_object *m = json_object_new_object();
    swf_json_add(m, "Id", json_object_new_string(sm_arn));
    swf_json_add(m, "Name", json_object_new_string(ex->machine_name));
    ex->ctx_machine = m;
    free(sm_arn);
    free(ex_arn);

    swf_asl_problems_t problems = {0};
    if (!ex->trusted && swf_asl_validate(def, &problems) > 0) {
        ex->broken = true;
        ex->broken_reason = xprintf("the definition is invalid: %s: %s", problems.items[0].where,
                                    problems.items[0].message);
        swf_asl_problems_free(&problems);
        return NULL;
    }
    swf_asl_problems_free(&problems);
    ex->root = frame_new(ex, NULL, 0, xstrdup(""), def, input);
    ex->root->entered_ms = ev->time_ms;
    enqueue(ex, ex->root);
    return NULL;
}

swf_error_t *swf_asl_exec_apply(swf_asl_exec_t *ex, const swf_event_t *ev)
{
    if (ev->id != ex->last_id + 1)
        return bad_event(ev, "event ids must follow each other");
    if (ex->status == SWF_ASL_NOT_STARTED && ev->type != SWF_EVENT_WORKFLOW_EXECUTION_STARTED)
        return bad_event(ev, "a history must start with WorkflowExecutionStarted");
    if (!json_object_is_type(ev->attrs, json_type_object))
        return bad_event(ev, "attributes must be an object");
    ex->last_id = ev->id;

    /* Decision events must be exactly the ones derived, in order. */
    if (is_decision_event(ev->type)) {
        if (ex->expected_next >= ex->expected.count)
            return nondeterminism(ex, ev, NULL);
        swf_asl_decision_t *d = &ex->expected.items[ex->expected_next++];
        if (d->type != ev->type || !decision_equal(d->attrs, ev->attrs))
            return nondeterminism(ex, ev, d);
    } else if (ex->expected_next < ex->expected.count &&
               ev->type != SWF_EVENT_DECISION_TASK_COMPLETED) {
        return unrecorded(&ex->expected.items[ex->expected_next], ev->id, "");
    }

    switch (ev->type) {
    case SWF_EVENT_WORKFLOW_EXECUTION_STARTED:
        if (ex->status != SWF_ASL_NOT_STARTED)
            return bad_event(ev, "the execution has already started");
        return apply_started(ex, ev);
    case SWF_EVENT_DECISION_TASK_SCHEDULED:
        ex->decision_open = true;
        ex->decided = false;
        ex->dt_started_id = 0;
        break;
    case SWF_EVENT_DECISION_TASK_STARTED:
        ex->decision_open = true;
        ex->decided = false;
        ex->dt_started_id = ev->id;
        ex->now_ms = ev->time_ms;
        swf_asl_decisions_clear(&ex->expected);
        ex->expected_next = 0;
        break;
    case SWF_EVENT_DECISION_TASK_COMPLETED:
        if (ex->dt_started_id == 0)
            return bad_event(ev, "no decision task was started");
        if (!ex->decided) {
            swf_asl_decisions_t scratch = {0};
            swf_error_t *err = swf_asl_exec_decide(ex, &scratch);
            swf_asl_decisions_free(&scratch);
            if (err)
                return err;
        }
        ex->decision_open = false;
        ex->expected_next = 0;
        break;
    case SWF_EVENT_DECISION_TASK_TIMED_OUT:
        /* The decisions of a timed-out task were never recorded: forget them
         * and let the next task decide again from the same state. Nothing
         * was run: decide() only runs when the decider applies completion. */
        ex->decision_open = false;
        break;
    case SWF_EVENT_ACTIVITY_TASK_SCHEDULED: {
        const char *id = swf_json_get_string(ev->attrs, "activityId");
        int64_t seq = id ? strtoll(id, NULL, 10) : 0;
        if (seq <= 0 || seq > ex->last_seq || bits_has(&ex->timer_seqs, seq))
            return bad_event(ev, "unknown activityId");
        waiter_t *w = waiter_find(ex, seq);
        if (w != NULL)
            w->event_id = ev->id;
        bits_set(&ex->activity_ids, ev->id);
        break;
    }
    case SWF_EVENT_TIMER_STARTED: {
        const char *id = swf_json_get_string(ev->attrs, "timerId");
        int64_t seq = id && id[0] == 't' ? strtoll(id + 1, NULL, 10) : 0;
        if (seq <= 0 || seq > ex->last_seq || !bits_has(&ex->timer_seqs, seq))
            return bad_event(ev, "unknown timerId");
        waiter_t *w = waiter_find(ex, seq);
        if (w != NULL)
            w->event_id = ev->id;
        break;
    }
    case SWF_EVENT_ACTIVITY_TASK_STARTED:
    case SWF_EVENT_ACTIVITY_TASK_HEARTBEAT_RECORDED:
    case SWF_EVENT_MARKER_RECORDED:
    case SWF_EVENT_WORKFLOW_EXECUTION_SIGNALED:
        break;
    case SWF_EVENT_ACTIVITY_TASK_COMPLETED: {
        int64_t seq = activity_seq(ex, ev);
        if (seq == 0)
            return bad_event(ev, "scheduledEventId names no activity");
        if (seq < 0)
            break;
        json_object *result;
        if (!swf_json_get(ev->attrs, "result", &result))
            result = NULL;
        deliver(ex, seq, true, result, NULL, NULL);
        break;
    }
    case SWF_EVENT_ACTIVITY_TASK_FAILED: {
        int64_t seq = activity_seq(ex, ev);
        if (seq == 0)
            return bad_event(ev, "scheduledEventId names no activity");
        if (seq < 0)
            break;
        const char *reason = swf_json_get_string(ev->attrs, "reason");
        deliver(ex, seq, false, NULL, reason ? reason : ERR_TASK_FAILED,
                swf_json_get_string(ev->attrs, "details"));
        break;
    }
    case SWF_EVENT_ACTIVITY_TASK_TIMED_OUT: {
        int64_t seq = activity_seq(ex, ev);
        if (seq == 0)
            return bad_event(ev, "scheduledEventId names no activity");
        if (seq < 0)
            break;
        const char *type = swf_json_get_string(ev->attrs, "timeoutType");
        const char *details = swf_json_get_string(ev->attrs, "details");
        bool hb = type && strcmp(type, "HEARTBEAT") == 0;
        deliver(ex, seq, false, NULL, hb ? ERR_HEARTBEAT : ERR_TIMEOUT,
                details ? details : (hb ? "the task sent no heartbeat in time"
                                        : "the task did not finish in time"));
        break;
    }
    case SWF_EVENT_ACTIVITY_TASK_CANCELED: {
        waiter_t *w = waiter_find(ex, activity_seq(ex, ev));
        if (w != NULL)
            waiter_close(ex, w);
        break;
    }
    case SWF_EVENT_ACTIVITY_TASK_CANCEL_REQUESTED:
        break;
    case SWF_EVENT_TIMER_FIRED:
    case SWF_EVENT_TIMER_CANCELED: {
        const char *id = swf_json_get_string(ev->attrs, "timerId");
        int64_t seq = id && id[0] == 't' ? strtoll(id + 1, NULL, 10) : 0;
        if (seq <= 0 || seq > ex->last_seq || !bits_has(&ex->timer_seqs, seq))
            return bad_event(ev, "timerId names no timer");
        waiter_t *w = waiter_find(ex, seq);
        if (ev->type == SWF_EVENT_TIMER_FIRED)
            deliver(ex, seq, true, NULL, NULL, NULL);
        else if (w != NULL)
            waiter_close(ex, w);
        break;
    }
    case SWF_EVENT_WORKFLOW_EXECUTION_CANCEL_REQUESTED:
        ex->cancel_requested = true;
        break;
    case SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED: {
        json_object *r;
        ex->status = SWF_ASL_SUCCEEDED;
        ex->output = swf_json_get(ev->attrs, "result", &r) ? swf_json_ref(r) : NULL;
        break;
    }
    case SWF_EVENT_WORKFLOW_EXECUTION_FAILED:
    case SWF_EVENT_WORKFLOW_EXECUTION_TIMED_OUT:
    case SWF_EVENT_WORKFLOW_EXECUTION_CANCELED:
    case SWF_EVENT_WORKFLOW_EXECUTION_TERMINATED: {
        const char *reason = swf_json_get_string(ev->attrs, "reason");
        const char *details = swf_json_get_string(ev->attrs, "details");
        if (ev->type == SWF_EVENT_WORKFLOW_EXECUTION_FAILED) {
            ex->status = SWF_ASL_FAILED;
        } else if (ev->type == SWF_EVENT_WORKFLOW_EXECUTION_TIMED_OUT) {
            ex->status = SWF_ASL_TIMED_OUT;
            reason = ERR_TIMEOUT;
            details = "the execution ran longer than its TimeoutSeconds";
        } else if (ev->type == SWF_EVENT_WORKFLOW_EXECUTION_CANCELED) {
            ex->status = SWF_ASL_CANCELED;
            reason = "States.Canceled";
        } else {
            ex->status = SWF_ASL_TERMINATED;
            if (reason == NULL)
                reason = "States.Terminated";
        }
        free(ex->error);
        free(ex->cause);
        ex->error = xstrdup(reason ? reason : "");
        ex->cause = xstrdup(details ? details : "");
        break;
    }
    case SWF_EVENT_COMPLETE_WORKFLOW_EXECUTION_FAILED:
    case SWF_EVENT_FAIL_WORKFLOW_EXECUTION_FAILED:
    case SWF_EVENT_CANCEL_WORKFLOW_EXECUTION_FAILED:
        /* New events arrived while deciding: the next task decides again. */
        ex->close_decided = false;
        break;
    case SWF_EVENT_NONE:
    case SWF_EVENT_TYPE_COUNT:
        return bad_event(ev, "unknown event type");
    }
    return NULL;
}

swf_error_t *swf_asl_exec_check_end(const swf_asl_exec_t *ex)
{
    if (ex->decision_open && ex->dt_started_id != 0 && !ex->decided)
        return NULL; /* a decision task in progress: nothing was decided yet */
    if (ex->expected_next >= ex->expected.count || ex->decision_open)
        return NULL;
    return unrecorded(&ex->expected.items[ex->expected_next], ex->last_id + 1,
                      " (the history ends)");
}

/* ------------------------------------------------------------- accessors */

swf_asl_exec_t *swf_asl_exec_new(void)
{
    swf_asl_exec_t *ex = xcalloc(1, sizeof(*ex));
    ex->infos = lh_kptr_table_new(8, info_free); /* grows with the states visited */
    ex->history_limit = SWF_LIMIT_HISTORY_EVENTS;
    return ex;
}

static void frame_free_tree(frame_t *f)
{
    if (f == NULL)
        return;
    for (size_t i = 0; i < f->nchildren; i++) {
        if (f->children && f->children[i])
            frame_free_tree(f->children[i]);
    }
    frame_free(f);
}

void swf_asl_exec_free(swf_asl_exec_t *ex)
{
    if (ex == NULL)
        return;
    graveyard_empty(ex);
    frame_free_tree(ex->root);
    for (size_t i = 0; i < ex->nwaiters; i++) {
        free(ex->waiters[i].state);
        free(ex->waiters[i].path);
    }
    free(ex->waiters);
    free(ex->timer_seqs.v);
    free(ex->activity_ids.v);
    free(ex->queue);
    swf_asl_decisions_free(&ex->expected);
    lh_table_free(ex->infos);
    json_object_put(ex->definition);
    json_object_put(ex->input);
    json_object_put(ex->ctx_execution);
    json_object_put(ex->ctx_machine);
    json_object_put(ex->output);
    free(ex->execution_id);
    free(ex->workflow_id);
    free(ex->machine_name);
    free(ex->task_list_prefix);
    free(ex->broken_reason);
    free(ex->token_secret);
    free(ex->error);
    free(ex->cause);
    free(ex);
}

void swf_asl_exec_set_history_limit(swf_asl_exec_t *ex, int64_t events)
{
    ex->history_limit = events > 0 ? events : SWF_LIMIT_HISTORY_EVENTS;
}

void swf_asl_exec_set_trusted(swf_asl_exec_t *ex, bool trusted)
{
    ex->trusted = trusted;
}

void swf_asl_exec_set_token_secret(swf_asl_exec_t *ex, const char *secret)
{
    free(ex->token_secret);
    ex->token_secret = xstrdup(secret);
}

void swf_asl_exec_set_trace(swf_asl_exec_t *ex, swf_asl_trace_fn fn, void *ctx)
{
    ex->trace_fn = fn;
    ex->trace_ctx = ctx;
}

swf_asl_status_t swf_asl_exec_status(const swf_asl_exec_t *ex)
{
    return ex->status;
}

int64_t swf_asl_exec_last_event_id(const swf_asl_exec_t *ex)
{
    return ex->last_id;
}

bool swf_asl_exec_decision_open(const swf_asl_exec_t *ex)
{
    return ex->decision_open;
}

json_object *swf_asl_exec_output(const swf_asl_exec_t *ex)
{
    return ex->output;
}

const char *swf_asl_exec_error(const swf_asl_exec_t *ex)
{
    return ex->error;
}

const char *swf_asl_exec_cause(const swf_asl_exec_t *ex)
{
    return ex->cause;
}

static const char *phase_name(phase_t p)
{
    switch (p) {
    case PH_ENTER: return "ready";
    case PH_ACTIVITY: return "waiting for activity";
    case PH_TIMER: return "waiting for timer";
    case PH_RETRY: return "waiting to retry";
    case PH_CHILDREN: return "waiting for branches";
    case PH_DONE: return "done";
    }
    return "unknown";
}

static json_object *frame_snapshot(const swf_asl_exec_t *ex, const frame_t *f)
{
    json_object *o = json_object_new_object();
    swf_json_add(o, "path", json_object_new_string(f->path));
    swf_json_add(o, "state", json_object_new_string(f->name));
    swf_json_add(o, "type", json_object_new_string(state_type_names[f->info->type]));
    swf_json_add(o, "phase", json_object_new_string(phase_name(f->phase)));
    swf_json_add(o, "input", swf_json_ref(f->input));
    if (f->effective)
        swf_json_add(o, "effectiveInput", swf_json_ref(f->effective));
    if (f->retry_total > 0)
        swf_json_add(o, "retryCount", json_object_new_int(f->retry_total));
    if (f->wait_seq > 0 && (f->phase == PH_ACTIVITY || f->phase == PH_TIMER || f->phase == PH_RETRY)) {
        char id[32];
        snprintf(id, sizeof(id), f->phase == PH_ACTIVITY ? "%lld" : "t%lld", (long long)f->wait_seq);
        json_object_object_add(o, f->phase == PH_ACTIVITY ? "activityId" : "timerId",
                               json_object_new_string(id));
    }
    if (f->phase == PH_CHILDREN) {
        json_object *m = json_object_new_object();
        swf_json_add(m, "total", json_object_new_int64((int64_t)f->nchildren));
        swf_json_add(m, "done", json_object_new_int64((int64_t)f->finished));
        swf_json_add(m, "running", json_object_new_int64((int64_t)f->running));
        swf_json_add(m, "waiting",
                               json_object_new_int64((int64_t)(f->nchildren - f->started)));
        swf_json_add(m, "failed", json_object_new_int64((int64_t)f->failed));
        swf_json_add(o, "children", m);
        json_object *kids = json_object_new_array();
        for (size_t i = 0; i < f->nchildren; i++) {
            if (f->children[i] != NULL && !f->children[i]->dead)
                json_object_array_add(kids, frame_snapshot(ex, f->children[i]));
        }
        swf_json_add(o, "active", kids);
    }
    return o;
}

json_object *swf_asl_exec_snapshot(const swf_asl_exec_t *ex)
{
    json_object *s = json_object_new_object();
    swf_json_add(s, "status", json_object_new_string(swf_asl_status_name(ex->status)));
    swf_json_add(s, "lastEventId", json_object_new_int64(ex->last_id));
    if (ex->root != NULL && !ex->root->dead)
        swf_json_add(s, "machine", frame_snapshot(ex, ex->root));
    json_object *acts = json_object_new_array(), *timers = json_object_new_array();
    for (size_t i = 0; i < ex->nwaiters; i++) {
        const waiter_t *w = &ex->waiters[i];
        if (!w->open)
            continue;
        json_object *o = json_object_new_object();
        char id[32];
        snprintf(id, sizeof(id), w->kind == W_ACTIVITY ? "%lld" : "t%lld", (long long)w->seq);
        json_object_object_add(o, w->kind == W_ACTIVITY ? "activityId" : "timerId",
                               json_object_new_string(id));
        swf_json_add(o, "state", jstr(w->state));
        swf_json_add(o, "path", jstr(w->path));
        swf_json_add(o, "scheduledEventId", json_object_new_int64(w->event_id));
        json_object_array_add(w->kind == W_ACTIVITY ? acts : timers, o);
    }
    swf_json_add(s, "openActivities", acts);
    swf_json_add(s, "openTimers", timers);
    if (ex->status == SWF_ASL_SUCCEEDED)
        swf_json_add(s, "output", swf_json_ref(ex->output));
    if (ex->error) {
        swf_json_add(s, "error", jstr(ex->error));
        swf_json_add(s, "cause", jstr(ex->cause));
    }
    return s;
}
