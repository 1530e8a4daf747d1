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
 * $states bound, instead of the JSONPath fields (exec_io.c holds both).
 *
 * This file is the core: the execution object, frames, the ready queue,
 * activities and timers, decide() and the apply of events. What entering
 * each state does, input and output processing, and Retry/Catch are in
 * files of their own (exec_internal.h lists them).
 */
#include "decider/asl/exec.h"

#include <assert.h>

#include "decider/asl/exec_internal.h"
#include "decider/asl/resource.h"
#include "decider/asl/validate.h"
#include "decider/sw/sw.h"
#include "protocol/alloc.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/task_list.h"
#include "protocol/time.h"

const char *const swf_asl__state_type_names[] = {"Pass",    "Task", "Choice",   "Wait",
                                                 "Succeed", "Fail", "Parallel", "Map"};

/* ---------------------------------------------------------------- helpers */

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

void swf_asl__decisions_push(swf_asl_decisions_t *d, swf_event_type_t type, json_object *attrs)
{
    SWF_ARRAY_RESERVE(d->items, d->count, d->cap, 16);
    d->items[d->count].type = type;
    d->items[d->count].attrs = attrs;
    d->count++;
}

const char *swf_asl_status_name(swf_asl_status_t status)
{
    switch (status) {
    case SWF_ASL_NOT_STARTED:
        return "NOT_STARTED";
    case SWF_ASL_RUNNING:
        return "RUNNING";
    case SWF_ASL_SUCCEEDED:
        return "SUCCEEDED";
    case SWF_ASL_FAILED:
        return "FAILED";
    case SWF_ASL_TIMED_OUT:
        return "TIMED_OUT";
    case SWF_ASL_CANCELED:
        return "CANCELED";
    case SWF_ASL_TERMINATED:
        return "TERMINATED";
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
        if (t && strcmp(t, swf_asl__state_type_names[i]) == 0)
            return (state_type_t)i;
    }
    return ST_PASS; /* unreachable for a validated definition */
}

/* True when s (a string value or a key, up to its first U+0000) contains
 * "$$", the mark of the context object: swf_json_any_string's test. */
static bool mentions_context(const char *s, size_t len, void *ctx)
{
    return strstr(s, "$$") != NULL;
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
    json_object_object_foreach(state, key, val)
    {
        if (strcmp(key, "Branches") == 0 || strcmp(key, "ItemProcessor") == 0 ||
            strcmp(key, "Iterator") == 0)
            continue;
        if (swf_json_any_string(val, mentions_context, NULL))
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
    json_object_put(info->writer_activity_type);
    json_object_put(info->writer_task_list);
    free(info);
}

/* ------------------------------------------------------------------ trace */

void swf_asl__trace(swf_asl_exec_t *ex, frame_t *f, swf_asl_trace_kind_t kind, json_object *data)
{
    if (ex->trace_fn == NULL)
        return;
    const char *type = swf_asl__state_type_names[f->info->type];
    if (ex->sw && (type = swf_asl__sw_trace_type(f->state)) == NULL)
        return; /* a helper state of the translation (decider/sw/README.md) */
    swf_asl_trace_t t = {
        .kind = kind,
        .path = f->path,
        .state = f->name,
        .state_type = type,
        .data = data,
        .time_ms = ex->now_ms,
        .event_id = ex->dt_started_id,
    };
    ex->trace_fn(ex->trace_ctx, &t);
}

json_object *swf_asl__error_object(const char *error, const char *cause)
{
    json_object *o = json_object_new_object();
    swf_json_add(o, "Error", jstr(error ? error : ""));
    swf_json_add(o, "Cause", jstr(cause ? cause : ""));
    return o;
}

/* ------------------------------------------------------------------ queue */

void swf_asl__enqueue(swf_asl_exec_t *ex, frame_t *f)
{
    if (f->queued || f->dead)
        return;
    if (ex->qtail == ex->qcap) {
        if (ex->qhead > 0) {
            memmove(ex->queue, ex->queue + ex->qhead, (ex->qtail - ex->qhead) * sizeof(frame_t *));
            ex->qtail -= ex->qhead;
            ex->qhead = 0;
        }
        SWF_ARRAY_RESERVE(ex->queue, ex->qtail, ex->qcap, 64);
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

void swf_asl__frame_clear_children(frame_t *f)
{
    for (size_t i = 0; i < f->nchildren; i++) {
        if (f->results)
            json_object_put(f->results[i]);
    }
    free(f->children);
    free(f->results);
    free(f->failed_at);
    f->failed_at = NULL;
    free(f->child_ok);
    f->child_ok = NULL;
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
    swf_asl__sw_frame_free(f);
    frame_clear_outcome(f);
    swf_asl__frame_clear_children(f);
    json_object_put(f->written);
    swf_asl__map_manifest_clear(f);
    json_object_put(f->input);
    json_object_put(f->vars);
    json_object_put(f->effective);
    json_object_put(f->output);
    json_object_put(f->redrive_memo);
    free(f->retry_counts);
    free(f->error);
    free(f->cause);
    free(f->path);
    free(f);
}

/* Marks a frame dead; it is freed at the end of the decision. */
void swf_asl__frame_bury(swf_asl_exec_t *ex, frame_t *f)
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

void swf_asl__frame_set_state(swf_asl_exec_t *ex, frame_t *f, const char *name)
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
    json_object_put(f->redrive_memo);
    f->redrive_memo = NULL;
    f->redriving = false;
}

frame_t *swf_asl__frame_new(swf_asl_exec_t *ex, frame_t *parent, size_t index, char *path,
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
    swf_asl__frame_set_state(ex, f, swf_json_get_string(machine, "StartAt"));
    f->input = swf_json_ref(input);
    return f;
}

static waiter_t *waiter_find(swf_asl_exec_t *ex, int64_t seq);

/* Cancels, by a decision, the activity or timer a frame waits for. */
void swf_asl__frame_drop_wait(swf_asl_exec_t *ex, frame_t *f)
{
    if ((f->phase == PH_ACTIVITY || f->phase == PH_TIMER || f->phase == PH_RETRY) &&
        !f->has_outcome && f->wait_seq > 0) {
        waiter_t *w = waiter_find(ex, f->wait_seq);
        if (w != NULL && w->frame == f) {
            json_object *a = json_object_new_object();
            char id[32];
            if (w->kind == W_ACTIVITY) {
                snprintf(id, sizeof(id), "%lld", (long long)f->wait_seq);
                swf_json_add(a, "activityId", json_object_new_string(id));
                swf_asl__decisions_push(ex->out, SWF_EVENT_ACTIVITY_TASK_CANCEL_REQUESTED, a);
            } else {
                snprintf(id, sizeof(id), "t%lld", (long long)f->wait_seq);
                swf_json_add(a, "timerId", json_object_new_string(id));
                swf_json_add(a, "startedEventId", json_object_new_int64(w->event_id));
                swf_asl__decisions_push(ex->out, SWF_EVENT_TIMER_CANCELED, a);
            }
        }
        w->frame = NULL;
    }
    frame_clear_outcome(f);
    f->wait_seq = 0;
}

/* Stops a frame and everything below it: open activities are cancelled and
 * timers cancelled, by decisions. */
void swf_asl__frame_abandon(swf_asl_exec_t *ex, frame_t *f)
{
    if (f->dead)
        return;
    swf_asl__frame_drop_wait(ex, f);
    for (size_t i = 0; i < f->nchildren; i++) {
        if (f->children[i] != NULL) {
            swf_asl__frame_abandon(ex, f->children[i]);
            f->children[i] = NULL;
        }
    }
    swf_asl__frame_bury(ex, f);
}

/* --------------------------------------------------------------- finishing */

step_t swf_asl__frame_finish_ok(swf_asl_exec_t *ex, frame_t *f, json_object *output)
{
    f->phase = PH_DONE;
    f->ok = true;
    f->output = output;
    return STEP_DONE;
}

step_t swf_asl__frame_finish_error(swf_asl_exec_t *ex, frame_t *f, const char *error,
                                   const char *cause)
{
    f->phase = PH_DONE;
    f->ok = false;
    f->error = swf_strdup(error);
    f->cause = swf_strdup(cause ? cause : "");
    return STEP_DONE;
}

/* Moves to the state's Next, or ends the frame. Takes `output`. */
step_t swf_asl__transition(swf_asl_exec_t *ex, frame_t *f, const char *next, json_object *output)
{
    swf_asl__trace(ex, f, SWF_ASL_STATE_EXITED, output);
    json_object_put(f->effective);
    f->effective = NULL;
    if (next == NULL)
        return swf_asl__frame_finish_ok(ex, f, output);
    json_object_put(f->input);
    f->input = output;
    swf_asl__frame_set_state(ex, f, next);
    return STEP_CONTINUE;
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

int64_t swf_asl__waiter_add(swf_asl_exec_t *ex, waiter_kind_t kind, frame_t *f)
{
    SWF_ARRAY_RESERVE(ex->waiters, ex->nwaiters, ex->cap_waiters, 8);
    waiter_t *w = &ex->waiters[ex->nwaiters++]; /* the newest has the highest seq */
    memset(w, 0, sizeof(*w));
    w->seq = ++ex->last_seq;
    w->kind = kind;
    w->open = true;
    w->frame = f;
    w->state = swf_strdup(f->name);
    w->path = swf_strdup(f->path);
    ex->open_waiters++;
    if (kind == W_TIMER)
        bits_set(&ex->timer_seqs, w->seq);
    return w->seq;
}

json_object *swf_asl__control_new(frame_t *f)
{
    json_object *c = json_object_new_object();
    swf_json_add(c, "state", json_object_new_string(f->name));
    swf_json_add(c, "path", json_object_new_string(f->path));
    return c;
}

int64_t swf_asl__timer_start(swf_asl_exec_t *ex, frame_t *f, double seconds, const char *reason)
{
    int64_t seq = swf_asl__waiter_add(ex, W_TIMER, f);
    char id[32];
    snprintf(id, sizeof(id), "t%lld", (long long)seq);
    json_object *a = json_object_new_object();
    swf_json_add(a, "timerId", json_object_new_string(id));
    swf_json_add(a, "startToFireTimeout", jseconds(seconds < 0 ? 0 : seconds));
    json_object *c = swf_asl__control_new(f);
    swf_json_add(c, "reason", json_object_new_string(reason));
    swf_json_add(a, "control", c);
    swf_asl__decisions_push(ex->out, SWF_EVENT_TIMER_STARTED, a);
    return seq;
}

static step_t step_outcome(swf_asl_exec_t *ex, frame_t *f)
{
    if (!f->has_outcome)
        return STEP_BLOCKED;
    bool ok = f->outcome_ok;
    json_object *result = swf_json_ref(f->outcome);
    char *error = swf_strdup(f->outcome_error), *cause = swf_strdup(f->outcome_cause);
    frame_clear_outcome(f);
    f->wait_seq = 0;
    step_t s;
    if (f->phase == PH_RETRY) {
        f->phase = PH_ENTER;
        s = STEP_CONTINUE;
    } else if (f->phase == PH_TIMER) {
        s = swf_asl__wait_fired(ex, f);
    } else if (f->info->type == ST_MAP && f->written != NULL) {
        s = swf_asl__map_written(ex, f, ok, error, cause); /* its ResultWriter's task answered */
    } else if (ok && f->info->type == ST_MAP) {
        s = swf_asl__map_items_read(ex, f, result); /* its ItemReader's task answered */
    } else if (ok) {
        s = swf_asl__state_result(ex, f, result);
    } else {
        s = swf_asl__state_error(ex, f, error, cause);
    }
    json_object_put(result);
    free(error);
    free(cause);
    return s;
}

/* Runs a frame until it waits or ends. Two bounds keep a decision finite:
 * each chain of states may make SWF_LIMIT_TRANSITIONS_PER_DECISION
 * transitions (a loop without a Wait or a Task; a Map or Parallel woken by
 * its iterations makes none), and all chains together
 * SWF_LIMIT_STEPS_PER_DECISION steps. */
static void run_frame(swf_asl_exec_t *ex, frame_t *f)
{
    for (;;) {
        if (f->dead)
            return;
        step_t s;
        if (f->transitions_dt != ex->dt_started_id) {
            f->transitions_dt = ex->dt_started_id;
            f->transitions = 0;
        }
        if (++ex->steps > SWF_LIMIT_STEPS_PER_DECISION) {
            s = swf_asl__frame_finish_error(ex, f, ERR_RUNTIME,
                                            "more steps in one decision than the limit allows: "
                                            "do many iterations loop without a Wait or a Task?");
        } else if (f->phase != PH_CHILDREN &&
                   ++f->transitions > SWF_LIMIT_TRANSITIONS_PER_DECISION) {
            s = swf_asl__frame_finish_error(ex, f, ERR_RUNTIME,
                                            "more state transitions in one decision than the limit "
                                            "allows: is there a loop without a Wait or a Task?");
        } else {
            switch (f->phase) {
            case PH_ENTER:
                s = swf_asl__sw_is_event(ex, f) ? swf_asl__sw_event_enter(ex, f)
                                                : swf_asl__state_enter(ex, f);
                break;
            case PH_SWEVENT:
                s = swf_asl__sw_event_step(ex, f);
                break;
            case PH_CHILDREN:
                s = swf_asl__children_step(ex, f);
                break;
            case PH_ACTIVITY:
            case PH_TIMER:
            case PH_RETRY:
                s = step_outcome(ex, f);
                break;
            case PH_DONE:
            default:
                s = STEP_DONE;
                break;
            }
        }
        if (s == STEP_BLOCKED)
            return;
        if (s == STEP_DONE) {
            if (f->parent != NULL)
                swf_asl__child_done(ex, f);
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
        swf_asl__decisions_push(ex->out, SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED, a);
    } else {
        swf_json_add(a, "reason", jstr(r->error));
        swf_json_add(a, "details", jstr(r->cause ? r->cause : ""));
        swf_asl__decisions_push(ex->out, SWF_EVENT_WORKFLOW_EXECUTION_FAILED, a);
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
    swf_asl__decisions_push(ex->out, SWF_EVENT_WORKFLOW_EXECUTION_FAILED, a);
    ex->close_decided = true;
}

swf_error_t *swf_asl_exec_decide(swf_asl_exec_t *ex, swf_asl_decisions_t *out)
{
    if (!ex->decision_open || ex->dt_started_id == 0)
        return swf_error_new(SWF_E_INTERNAL, NULL, "decide() needs a started decision task");
    if (ex->decided) {
        for (size_t i = 0; i < ex->expected.count; i++)
            swf_asl__decisions_push(out, ex->expected.items[i].type,
                                    swf_json_ref(ex->expected.items[i].attrs));
        return NULL;
    }
    swf_asl_decisions_clear(&ex->expected);
    ex->expected_next = 0;
    ex->decided = true;
    ex->out = &ex->expected;
    ex->rng.state =
        hash_str(ex->execution_id) ^ ((uint64_t)ex->dt_started_id * 0x9e3779b97f4a7c15ULL);
    ex->steps = 0;
    if (ex->status == SWF_ASL_RUNNING && !ex->close_decided && ex->root == NULL && !ex->broken) {
        /* Cancelled: the close decision was made and failed; make it again. */
        json_object *a = json_object_new_object();
        swf_json_add(a, "details", json_object_new_string("cancel requested"));
        swf_asl__decisions_push(ex->out, SWF_EVENT_WORKFLOW_EXECUTION_CANCELED, a);
        ex->close_decided = true;
    } else if (ex->status == SWF_ASL_RUNNING && !ex->close_decided) {
        if (ex->broken) {
            json_object *a = json_object_new_object();
            swf_json_add(a, "reason", json_object_new_string(ERR_RUNTIME));
            swf_json_add(a, "details", jstr(ex->broken_reason));
            swf_asl__decisions_push(ex->out, SWF_EVENT_WORKFLOW_EXECUTION_FAILED, a);
            ex->close_decided = true;
        } else if (ex->cancel_requested) {
            swf_asl__frame_abandon(ex, ex->root);
            ex->root = NULL; /* buried: freed with the graveyard below */
            json_object *a = json_object_new_object();
            swf_json_add(a, "details", json_object_new_string("cancel requested"));
            swf_asl__decisions_push(ex->out, SWF_EVENT_WORKFLOW_EXECUTION_CANCELED, a);
            ex->close_decided = true;
        } else {
            if (ex->redrive_pending)
                swf_asl__redrive(ex); /* exec_redrive.c */
            do {
                while (ex->qhead < ex->qtail) {
                    frame_t *f = ex->queue[ex->qhead++];
                    f->queued = false;
                    run_frame(ex, f);
                }
                ex->qhead = ex->qtail = 0;
            } while (ex->sw && swf_asl__sw_settle(ex)); /* events (decider/sw/interp.c) */
            if (ex->root->phase == PH_DONE)
                close_decision(ex);
        }
        history_limit_check(ex);
    }
    graveyard_empty(ex);
    ex->out = NULL;
    for (size_t i = 0; i < ex->expected.count; i++)
        swf_asl__decisions_push(out, ex->expected.items[i].type,
                                swf_json_ref(ex->expected.items[i].attrs));
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
    json_object_object_foreach(recorded, key, val)
    {
        if (strcmp(key, "decisionTaskCompletedEventId") == 0)
            continue;
        json_object *d;
        if (!json_object_object_get_ex(derived, key, &d) || !swf_json_equal(d, val))
            return false;
        n++;
    }
    size_t m = 0;
    json_object_object_foreach(derived, dkey, dval)
    {
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
    swf_error_t *err =
        swf_error_new(SWF_E_NONDETERMINISM, NULL,
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
        swf_json_add(der, "eventType", json_object_new_string(swf_event_type_name(derived->type)));
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
    if (ex->sw && f != NULL && !f->dead && swf_asl__sw_event_timer(ex, f, seq))
        return;
    if (f == NULL || f->dead || f->wait_seq != seq || f->has_outcome)
        return;
    f->has_outcome = true;
    f->outcome_ok = ok;
    f->outcome = swf_json_ref(result);
    f->outcome_error = swf_strdup(error);
    f->outcome_cause = swf_strdup(cause ? cause : "");
    swf_asl__enqueue(ex, f);
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
    ex->execution_id = swf_strdup(eid ? eid : "local");
    ex->workflow_id = swf_strdup(wid ? wid : ex->execution_id);
    ex->machine_name = swf_strdup(mname ? mname : "StateMachine");
    const char *prefix = swf_json_get_string(ev->attrs, "taskListPrefix");
    ex->task_list_prefix = swf_strdup(prefix ? prefix : "");
    /* The rule and map that give each Task its task list, as recorded when
     * the execution started: a history from before the rule had a version
     * replays under the first one (resource.h). */
    json_object *rule, *map;
    ex->task_list_rule = 1;
    if (swf_json_get(ev->attrs, "taskListRule", &rule)) {
        if (!json_object_is_type(rule, json_type_int) ||
            json_object_get_int(rule) != SWF_TASK_LIST_RULE)
            return bad_event(ev, "taskListRule must be 2, the only numbered rule this decider "
                                 "knows (decider/asl/resource.h)");
        ex->task_list_rule = SWF_TASK_LIST_RULE;
    }
    /* The largest state input or output, as recorded (protocol/started.h);
     * none in a history from before it was. */
    json_object *limit;
    if (swf_json_get(ev->attrs, "stateDataLimit", &limit)) {
        if (!json_object_is_type(limit, json_type_int) || json_object_get_int64(limit) < 1 ||
            json_object_get_int64(limit) > (int64_t)SWF_LIMIT_PAYLOAD_BYTES)
            return bad_event(ev, "stateDataLimit must be a number of bytes from 1 to 33554432");
        ex->state_data_limit = json_object_get_int64(limit);
    }
    if (swf_json_get(ev->attrs, "taskListMap", &map) && map != NULL) {
        swf_error_t *merr = swf_task_list_map_check(map, "taskListMap");
        if (merr != NULL) {
            swf_error_t *b = bad_event(ev, swf_error_message(merr));
            swf_error_free(merr);
            return b;
        }
        ex->task_list_map = swf_json_ref(map);
    }
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
    swf_json_add(e, "RoleArn", json_object_new_string("arn:aws:iam::000000000000:role/swf"));
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
    if (swf_sw_is_document(def)) {
        /* Serverless Workflow (decider/sw/): validated always, as the
         * translation relies on it, then run as its translation. */
        ex->sw = true;
        if (swf_sw_validate(def, &problems) == 0) {
            def = ex->sw_machine = swf_sw_translate(def);
            swf_asl__sw_started(ex, ev->attrs);
        }
    } else if (!ex->trusted) {
        swf_asl_validate(def, &problems);
    }
    if (problems.count > 0) {
        ex->broken = true;
        ex->broken_reason = xprintf("the definition is invalid: %s: %s", problems.items[0].where,
                                    problems.items[0].message);
        swf_asl_problems_free(&problems);
        return NULL;
    }
    swf_asl_problems_free(&problems);
    ex->root = swf_asl__frame_new(ex, NULL, 0, swf_strdup(""), def, input);
    ex->root->entered_ms = ev->time_ms;
    swf_asl__enqueue(ex, ex->root);
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
        break;
    case SWF_EVENT_WORKFLOW_EXECUTION_SIGNALED: {
        const char *name = swf_json_get_string(ev->attrs, "signalName");
        if (!ex->sw && name != NULL && strcmp(name, SWF_ASL_MAP_UPDATE_SIGNAL) == 0)
            swf_asl__map_update(ex, json_object_object_get(ev->attrs, "input"));
        else
            swf_asl__sw_signal(ex, ev->attrs); /* CloudEvents (decider/sw/interp.c) */
        break;
    }
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
                details ? details
                        : (hb ? "the task sent no heartbeat in time"
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
        ex->error = swf_strdup(reason ? reason : "");
        ex->cause = swf_strdup(details ? details : "");
        break;
    }
    case SWF_EVENT_WORKFLOW_EXECUTION_REDRIVEN:
        return swf_asl__redrive_apply(ex, ev); /* exec_redrive.c */
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
    json_object_put(ex->sw_machine);
    swf_asl__sw_rt_free(ex->sw_rt);
    json_object_put(ex->input);
    json_object_put(ex->ctx_execution);
    json_object_put(ex->ctx_machine);
    json_object_put(ex->output);
    free(ex->execution_id);
    free(ex->workflow_id);
    free(ex->machine_name);
    free(ex->task_list_prefix);
    json_object_put(ex->task_list_map);
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
    ex->token_secret = swf_strdup(secret);
}

void swf_asl_exec_set_trace(swf_asl_exec_t *ex, swf_asl_trace_fn fn, void *ctx)
{
    ex->trace_fn = fn;
    ex->trace_ctx = ctx;
}

void swf_asl_exec_set_map_trace(swf_asl_exec_t *ex, swf_asl_map_trace_fn fn, void *ctx)
{
    ex->map_trace_fn = fn;
    ex->map_trace_ctx = ctx;
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
    case PH_ENTER:
        return "ready";
    case PH_ACTIVITY:
        return "waiting for activity";
    case PH_TIMER:
        return "waiting for timer";
    case PH_RETRY:
        return "waiting to retry";
    case PH_CHILDREN:
        return "waiting for branches";
    case PH_SWEVENT:
        return "waiting for events";
    case PH_DONE:
        return "done";
    }
    return "unknown";
}

static json_object *frame_snapshot(const swf_asl_exec_t *ex, const frame_t *f)
{
    json_object *o = json_object_new_object();
    swf_json_add(o, "path", json_object_new_string(f->path));
    swf_json_add(o, "state", json_object_new_string(f->name));
    swf_json_add(o, "type", json_object_new_string(swf_asl__state_type_names[f->info->type]));
    swf_json_add(o, "phase", json_object_new_string(phase_name(f->phase)));
    swf_json_add(o, "input", swf_json_ref(f->input));
    if (f->effective)
        swf_json_add(o, "effectiveInput", swf_json_ref(f->effective));
    if (f->retry_total > 0)
        swf_json_add(o, "retryCount", json_object_new_int(f->retry_total));
    if (f->wait_seq > 0 &&
        (f->phase == PH_ACTIVITY || f->phase == PH_TIMER || f->phase == PH_RETRY)) {
        char id[32];
        snprintf(id, sizeof(id), f->phase == PH_ACTIVITY ? "%lld" : "t%lld",
                 (long long)f->wait_seq);
        json_object_object_add(o, f->phase == PH_ACTIVITY ? "activityId" : "timerId",
                               json_object_new_string(id));
    }
    if (f->phase == PH_CHILDREN) {
        json_object *m = json_object_new_object();
        swf_json_add(m, "total", json_object_new_int64((int64_t)f->nchildren));
        swf_json_add(m, "done", json_object_new_int64((int64_t)f->finished));
        swf_json_add(m, "running", json_object_new_int64((int64_t)f->running));
        swf_json_add(m, "waiting", json_object_new_int64((int64_t)(f->nchildren - f->started)));
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
