/*
 * interp.c - the interpreter's Serverless Workflow dialect: the pieces of
 * the ASL interpreter that run a translated document (translate.c) and that
 * ASL has no word for. They are compiled into the interpreter's library and
 * see its internals (decider/asl/exec_internal.h); the interpreter calls
 * them only when the execution's definition is a Serverless Workflow
 * document (ex->sw).
 *
 *   - Error names (SPEC 12): what the ASL core raises as States.Runtime or
 *     States.ResultPathMatchFailure (a path that selects nothing, a result
 *     that cannot be placed) is SYS.FilterError, States.Timeout is
 *     SYS.Timeout, and a failure reported without a name (States.TaskFailed)
 *     is SYS.Fail. The renamed errors go through Retry and Catch like any
 *     other, which is what SPEC 6 asks of an action attempt; state filters
 *     sit on states without retriers, so their errors fail the instance.
 *   - Routes: a Parallel marked "swf:ServerlessWorkflow:Route" has one
 *     branch, which ends with {"next", "raw", "value"}: the state goes to
 *     `next` (or its own Next/End when null) with `value` as its result, or,
 *     when `raw`, as its output without its ResultPath and OutputPath.
 */
#include "decider/asl/exec_internal.h"
#include "decider/sw/sw_internal.h"
#include "protocol/json.h"

const char *swf_asl__sw_error_name(const char *error)
{
    if (strcmp(error, ERR_RUNTIME) == 0 || strcmp(error, "States.ResultPathMatchFailure") == 0)
        return "SYS.FilterError";
    if (strcmp(error, ERR_TIMEOUT) == 0 || strcmp(error, ERR_HEARTBEAT) == 0)
        return "SYS.Timeout";
    if (strcmp(error, ERR_TASK_FAILED) == 0)
        return "SYS.Fail";
    return error;
}

/* What the timeline and graph call a state of the translation: the
 * document's type for the document's states, "function" for an action's
 * Task, NULL (not shown) for the other helpers. */
const char *swf_asl__sw_trace_type(json_object *state)
{
    const char *t = swf_json_get_string(state, SWF_SW_MARKER ":Type");
    if (t != NULL)
        return t;
    t = swf_json_get_string(state, "Type");
    return t != NULL && strcmp(t, "Task") == 0 ? "function" : NULL;
}

bool swf_asl__sw_is_route(const swf_asl_exec_t *ex, const frame_t *f)
{
    return ex->sw && swf_sw__has(f->state, SWF_SW_MARKER ":Route");
}

step_t swf_asl__sw_route(swf_asl_exec_t *ex, frame_t *f, json_object *results)
{
    json_object *r = json_object_array_get_idx(results, 0), *value = NULL, *v;
    const char *next = swf_json_get_string(r, "next");
    if (next == NULL)
        next = swf_json_get_string(f->state, "Next");
    swf_json_get(r, "value", &value);
    if (swf_json_get(r, "raw", &v) && json_object_get_boolean(v))
        return swf_asl__transition(ex, f, next, swf_json_ref(value));
    swf_asl_io_t io;
    swf_asl__io_open(&io, ex, f, NULL);
    step_t s = swf_asl__io_leave(
        &io, &(swf_asl_io_out_t){.kind = SWF_ASL_IO_RESULT, .value = value}, next);
    swf_asl__io_close(&io);
    return s;
}

/* ---- EVENT states (SPEC 9, 11) --------------------------------------------------
 *
 * An EVENT state is a wrapper (above) whose branch starts with a wait state
 * of type "swf:ServerlessWorkflow:Event" (translate.c). Events reach the
 * execution as WorkflowExecutionSignaled events (signalName "cloudevent",
 * input the CloudEvent) and are routed when they are applied, as SPEC 11
 * says for one instance: a wait records the first event of each trigger it
 * waits for, and fires its first entry whose expression holds; an event no
 * wait records is kept as pending when it is correlated to the instance.
 * At the end of each decision's run the states that started waiting are
 * served pending events in document order (SPEC 9.4). Everything routing
 * depends on is in the history, so replay routes the same way.
 */

#include "decider/asl/path.h"

typedef struct sw_wait {
    frame_t *frame; /* NULL once the state stopped waiting */
    int64_t order;  /* document order */
    json_object *entries;
    size_t nentries;
    bool *stopped;
    int64_t *timer_seq;
    json_object *recorded; /* trigger -> {"event", "arrival"} */
    bool served;
    int fired; /* the entry that fired, or -1 */
    bool timed_out;
} sw_wait_t;

struct swf_asl_sw_rt {
    json_object *triggers; /* borrowed from the machine */
    json_object *corr;     /* the correlation value, or NULL */
    json_object *seen;     /* "source\nid" -> true */
    json_object *pending;  /* [{"event", "trigger", "arrival"}] */
    int64_t arrivals;
    json_object *script;      /* swf run's CloudEvents (SPEC 14), or NULL */
    json_object *start_event; /* the event that started the instance, until routed */
    size_t script_next;
    sw_wait_t **waits;
    size_t nwaits, cap;
};

static swf_asl_sw_rt_t *rt_get(swf_asl_exec_t *ex)
{
    if (ex->sw_rt == NULL) {
        swf_asl_sw_rt_t *rt = xcalloc(1, sizeof(*rt));
        swf_json_get(ex->sw_machine, SWF_SW_MARKER ":Triggers", &rt->triggers);
        rt->seen = json_object_new_object();
        rt->pending = json_object_new_array();
        ex->sw_rt = rt;
    }
    return ex->sw_rt;
}

static void wait_free(sw_wait_t *w)
{
    free(w->stopped);
    free(w->timer_seq);
    json_object_put(w->recorded);
    free(w);
}

void swf_asl__sw_rt_free(swf_asl_sw_rt_t *rt)
{
    if (rt == NULL)
        return;
    for (size_t i = 0; i < rt->nwaits; i++)
        wait_free(rt->waits[i]);
    free(rt->waits);
    json_object_put(rt->corr);
    json_object_put(rt->seen);
    json_object_put(rt->pending);
    json_object_put(rt->script);
    json_object_put(rt->start_event);
    free(rt);
}

void swf_asl__sw_frame_free(frame_t *f)
{
    sw_wait_t *w = f->sw_wait;
    if (w != NULL)
        w->frame = NULL;
    f->sw_wait = NULL;
}

bool swf_asl__sw_is_event(const swf_asl_exec_t *ex, const frame_t *f)
{
    const char *t = swf_json_get_string(f->state, "Type");
    return ex->sw && t != NULL && strcmp(t, SWF_SW_MARKER ":Event") == 0;
}

static json_object *select_path(const char *path, json_object *v, swf_error_t **err)
{
    swf_asl_env_t env;
    memset(&env, 0, sizeof(env));
    json_object *out = NULL;
    *err = swf_asl_path_eval(path, v, &env, &out);
    return out;
}

/* The trigger names an entry's expression mentions. */
static bool collect_operand(const char *name, size_t len, void *ctx)
{
    char *n = xprintf("%.*s", (int)len, name);
    json_object_object_add(ctx, n, json_object_new_boolean(1));
    free(n);
    return true;
}

static bool recorded_operand(const char *name, size_t len, void *ctx)
{
    char *n = xprintf("%.*s", (int)len, name);
    bool r = swf_sw__has(ctx, n);
    free(n);
    return r;
}

static bool entry_names(json_object *entry, const char *trigger)
{
    json_object *names = json_object_new_object();
    swf_sw_expr_eval(swf_json_get_string(entry, "event-expression"), collect_operand, names, NULL);
    bool r = swf_sw__has(names, trigger);
    json_object_put(names);
    return r;
}

/* Whether the wait would record an event of `trigger` now (SPEC 9.2). */
static bool wait_wants(const sw_wait_t *w, const char *trigger)
{
    if (w->frame == NULL || w->fired >= 0 || w->timed_out || swf_sw__has(w->recorded, trigger))
        return false;
    for (size_t i = 0; i < w->nentries; i++)
        if (!w->stopped[i] && entry_names(json_object_array_get_idx(w->entries, i), trigger))
            return true;
    return false;
}

/* Records the event and fires the first entry that holds. */
static void wait_record(swf_asl_exec_t *ex, sw_wait_t *w, const char *trigger, json_object *event,
                        int64_t arrival)
{
    json_object *r = json_object_new_object();
    swf_json_add(r, "event", swf_json_ref(event));
    swf_json_add(r, "arrival", json_object_new_int64(arrival));
    json_object_object_add(w->recorded, trigger, r);
    for (size_t i = 0; i < w->nentries; i++) {
        if (w->stopped[i])
            continue;
        json_object *e = json_object_array_get_idx(w->entries, i);
        if (swf_sw_expr_eval(swf_json_get_string(e, "event-expression"), recorded_operand,
                             w->recorded, NULL) == 1) {
            w->fired = (int)i;
            swf_asl__enqueue(ex, w->frame);
            return;
        }
    }
}

step_t swf_asl__sw_event_enter(swf_asl_exec_t *ex, frame_t *f)
{
    swf_asl_sw_rt_t *rt = rt_get(ex);
    sw_wait_t *w = xcalloc(1, sizeof(*w));
    json_object *v;
    w->frame = f;
    w->order = swf_json_get(f->state, "Order", &v) ? json_object_get_int64(v) : 0;
    swf_json_get(f->state, "Entries", &w->entries);
    w->nentries = json_object_array_length(w->entries);
    w->stopped = xcalloc(w->nentries, sizeof(bool));
    w->timer_seq = xcalloc(w->nentries, sizeof(int64_t));
    w->recorded = json_object_new_object();
    w->fired = -1;
    for (size_t i = 0; i < w->nentries; i++) {
        if (swf_json_get(json_object_array_get_idx(w->entries, i), "timeout", &v))
            w->timer_seq[i] = swf_asl__timer_start(ex, f, json_object_get_double(v), "event");
    }
    SWF_ARRAY_RESERVE(rt->waits, rt->nwaits, rt->cap, 8);
    rt->waits[rt->nwaits++] = w;
    f->sw_wait = w;
    json_object_put(f->effective);
    f->effective = swf_json_ref(f->input);
    f->phase = PH_SWEVENT;
    return STEP_BLOCKED;
}

/* The list input of the fired entry (SPEC 9.3). */
static swf_error_t *list_input(sw_wait_t *w, json_object *input, json_object **out)
{
    json_object *entry = json_object_array_get_idx(w->entries, (size_t)w->fired);
    json_object *names = json_object_new_object(), *feed = json_object_new_array();
    swf_sw_expr_eval(swf_json_get_string(entry, "event-expression"), collect_operand, names, NULL);
    json_object_object_foreach(w->recorded, trig, rec)
    {
        if (swf_sw__has(names, trig))
            json_object_array_add(feed, swf_json_ref(rec));
    }
    /* In arrival order (a handful of events: insertion sort). */
    size_t n = json_object_array_length(feed);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0; j--) {
            json_object *a = json_object_array_get_idx(feed, j - 1);
            json_object *b = json_object_array_get_idx(feed, j), *x, *y;
            swf_json_get(a, "arrival", &x);
            swf_json_get(b, "arrival", &y);
            if (json_object_get_int64(x) <= json_object_get_int64(y))
                break;
            json_object_get(a);
            json_object_get(b);
            json_object_array_put_idx(feed, j - 1, b);
            json_object_array_put_idx(feed, j, a);
        }
    const char *ip = swf_json_get_string(entry, "InputPath");
    const char *rp = swf_json_get_string(entry, "ResultPath");
    json_object *l = swf_json_ref(input);
    swf_error_t *err = NULL;
    for (size_t i = 0; i < n && err == NULL; i++) {
        json_object *ev, *data;
        swf_json_get(json_object_array_get_idx(feed, i), "event", &ev);
        if (!swf_json_get(ev, "data", &data))
            continue;
        json_object *d = select_path(ip ? ip : "$", data, &err);
        if (err != NULL)
            break;
        json_object *nl = NULL;
        if (rp != NULL) {
            err = swf_asl_path_set(rp, l, d, &nl);
        } else if (json_object_is_type(l, json_type_object) &&
                   json_object_is_type(d, json_type_object)) {
            nl = json_object_new_object();
            json_object_object_foreach(l, k1, v1) json_object_object_add(nl, k1, swf_json_ref(v1));
            json_object_object_foreach(d, k2, v2) json_object_object_add(nl, k2, swf_json_ref(v2));
        } else {
            nl = swf_json_ref(d);
        }
        json_object_put(d);
        if (err == NULL) {
            json_object_put(l);
            l = nl;
        }
    }
    json_object_put(names);
    json_object_put(feed);
    if (err != NULL) {
        json_object_put(l);
        l = NULL;
    }
    *out = l;
    return err;
}

step_t swf_asl__sw_event_step(swf_asl_exec_t *ex, frame_t *f)
{
    sw_wait_t *w = f->sw_wait;
    if (w == NULL || (w->fired < 0 && !w->timed_out))
        return STEP_BLOCKED;
    w->frame = NULL;
    f->sw_wait = NULL;
    if (w->fired < 0)
        return swf_asl__state_error(ex, f, "SYS.Timeout",
                                    "no event came before the EVENT state's entries timed out");
    json_object *l = NULL;
    swf_error_t *err = list_input(w, f->input, &l);
    if (err != NULL)
        return swf_asl__state_fail_with(ex, f, err);
    json_object *entry = json_object_array_get_idx(w->entries, (size_t)w->fired);
    return swf_asl__transition(ex, f, swf_json_get_string(entry, "Next"), l);
}

bool swf_asl__sw_event_timer(swf_asl_exec_t *ex, frame_t *f, int64_t seq)
{
    sw_wait_t *w = f->sw_wait;
    if (w == NULL || f->phase != PH_SWEVENT)
        return false;
    bool any = false, mine = false;
    for (size_t i = 0; i < w->nentries; i++) {
        if (w->timer_seq[i] == seq) {
            w->stopped[i] = true;
            mine = true;
        }
        any = any || !w->stopped[i];
    }
    if (mine && !any && w->fired < 0) {
        w->timed_out = true;
        swf_asl__enqueue(ex, f);
    }
    return mine;
}

/* Drops the waits that stopped, keeping the order of the others. */
static void waits_compact(swf_asl_sw_rt_t *rt)
{
    size_t k = 0;
    for (size_t i = 0; i < rt->nwaits; i++) {
        if (rt->waits[i]->frame != NULL)
            rt->waits[k++] = rt->waits[i];
        else
            wait_free(rt->waits[i]);
    }
    rt->nwaits = k;
}

/* The trigger a well-formed event belongs to (SPEC 4): false with *why
 * when none; *value gets its correlation value (a new reference) or NULL
 * when the trigger has no token. */
static bool trigger_of(const swf_asl_sw_rt_t *rt, json_object *ce, const char **tname,
                       json_object **value, const char **why)
{
    const char *source = swf_json_get_string(ce, "source"), *type = swf_json_get_string(ce, "type");
    json_object *trig = NULL;
    *value = NULL;
    for (size_t i = 0; rt->triggers && i < json_object_array_length(rt->triggers); i++) {
        json_object *t = json_object_array_get_idx(rt->triggers, i);
        const char *eid = swf_json_get_string(t, "eventID");
        if (strcmp(swf_json_get_string(t, "source"), source) == 0 &&
            (eid == NULL || strcmp(eid, type) == 0)) {
            trig = t;
            break;
        }
    }
    if (trig == NULL) {
        *why = "no trigger of the workflow fits its source and type";
        return false;
    }
    *tname = swf_json_get_string(trig, "name");
    const char *token = swf_json_get_string(trig, "correlation-token");
    if (token == NULL)
        return true;
    swf_error_t *err = NULL;
    *value = select_path(token, ce, &err);
    if (err != NULL || *value == NULL) {
        swf_error_free(err);
        json_object_put(*value);
        *value = NULL;
        *why = "its trigger's correlation-token selects nothing or null in it";
        return false;
    }
    return true;
}

/* What an instance does with a CloudEvent (SPEC 11 for one instance),
 * without doing it: SWF_SW_DROPPED with *why, or SWF_SW_RECORDED (a waiting
 * state records it) or SWF_SW_KEPT (pending) with its trigger's name and
 * its correlation value (a new reference, or NULL). */
static swf_sw_fate_t classify(const swf_asl_sw_rt_t *rt, json_object *ce, const char **why,
                              const char **tname, json_object **value)
{
    *tname = NULL;
    *value = NULL;
    const char *id = swf_json_get_string(ce, "id"), *source = swf_json_get_string(ce, "source");
    const char *type = swf_json_get_string(ce, "type");
    if (id == NULL || source == NULL || type == NULL) {
        *why = "malformed: id, source and type must be strings";
        return SWF_SW_DROPPED;
    }
    char *key = xprintf("%s\n%s", source, id);
    bool dup = swf_sw__has(rt->seen, key);
    free(key);
    if (dup) {
        *why = "a duplicate (an event with the same source and id came before)";
        return SWF_SW_DROPPED;
    }
    if (!trigger_of(rt, ce, tname, value, why))
        return SWF_SW_DROPPED;
    if (*value != NULL) {
        if (rt->corr != NULL && !swf_json_equal(rt->corr, *value)) {
            json_object_put(*value);
            *value = NULL;
            *why = "its correlation value is another instance's";
            return SWF_SW_DROPPED;
        }
    }
    for (size_t i = 0; i < rt->nwaits; i++)
        if (wait_wants(rt->waits[i], *tname))
            return SWF_SW_RECORDED;
    if (*value != NULL && rt->corr != NULL)
        return SWF_SW_KEPT;
    json_object_put(*value);
    *value = NULL;
    *why = "no state waits for it and it is not correlated to the instance";
    return SWF_SW_DROPPED;
}

/* Routes one CloudEvent to this instance (SPEC 11, one instance). */
static void route_event(swf_asl_exec_t *ex, json_object *ce)
{
    swf_asl_sw_rt_t *rt = rt_get(ex);
    waits_compact(rt);
    const char *why, *tname;
    json_object *value;
    swf_sw_fate_t fate = classify(rt, ce, &why, &tname, &value);
    const char *id = swf_json_get_string(ce, "id"), *source = swf_json_get_string(ce, "source");
    if (id != NULL && source != NULL && swf_json_get_string(ce, "type") != NULL) {
        /* Seen, whether it is used or not (SPEC 11). */
        char *key = xprintf("%s\n%s", source, id);
        if (!swf_sw__has(rt->seen, key))
            json_object_object_add(rt->seen, key, json_object_new_boolean(1));
        free(key);
    }
    int64_t arrival = ++rt->arrivals;
    if (fate == SWF_SW_RECORDED) {
        for (size_t i = 0; i < rt->nwaits; i++)
            if (wait_wants(rt->waits[i], tname))
                wait_record(ex, rt->waits[i], tname, ce, arrival);
        if (value != NULL && rt->corr == NULL) {
            rt->corr = value;
            value = NULL;
        }
    } else if (fate == SWF_SW_KEPT) {
        json_object *p = json_object_new_object();
        swf_json_add(p, "event", swf_json_ref(ce));
        swf_json_add(p, "trigger", json_object_new_string(tname));
        swf_json_add(p, "arrival", json_object_new_int64(arrival));
        json_object_array_add(rt->pending, p);
    }
    json_object_put(value);
}

swf_sw_fate_t swf_sw_event_fate(swf_asl_exec_t *ex, json_object *ce, const char **why)
{
    if (!ex->sw || swf_asl_exec_status(ex) != SWF_ASL_RUNNING) {
        *why = "the execution is not an open Serverless Workflow instance";
        return SWF_SW_DROPPED;
    }
    const char *tname;
    json_object *value;
    swf_sw_fate_t fate = classify(rt_get(ex), ce, why, &tname, &value);
    json_object_put(value);
    return fate;
}

json_object *swf_sw_route_state(swf_asl_exec_t *ex)
{
    if (!ex->sw || swf_asl_exec_status(ex) != SWF_ASL_RUNNING)
        return NULL;
    swf_asl_sw_rt_t *rt = rt_get(ex);
    json_object *waits = json_object_new_array();
    for (size_t i = 0; rt->triggers && i < json_object_array_length(rt->triggers); i++) {
        const char *name = swf_json_get_string(json_object_array_get_idx(rt->triggers, i), "name");
        for (size_t k = 0; name != NULL && k < rt->nwaits; k++) {
            if (wait_wants(rt->waits[k], name)) {
                json_object_array_add(waits, json_object_new_string(name));
                break;
            }
        }
    }
    json_object *o = json_object_new_object();
    swf_json_add(o, "correlation", rt->corr != NULL ? swf_json_ref(rt->corr) : NULL);
    swf_json_add(o, "waits", waits);
    return o;
}

void swf_asl__sw_signal(swf_asl_exec_t *ex, json_object *attrs)
{
    json_object *ce;
    const char *name = swf_json_get_string(attrs, "signalName");
    if (ex->sw && name != NULL && strcmp(name, "cloudevent") == 0 &&
        swf_json_get(attrs, "input", &ce))
        route_event(ex, ce);
}

void swf_asl__sw_started(swf_asl_exec_t *ex, json_object *attrs)
{
    json_object *script, *first;
    if (swf_json_get(attrs, "cloudEvents", &script) && json_object_is_type(script, json_type_array))
        rt_get(ex)->script = swf_json_ref(script);
    if (swf_json_get(attrs, "startEvent", &first) && first != NULL) {
        /* Started by an event (swf send-event): its start state records it
         * as soon as it waits (settle below); it counts as seen now. */
        swf_asl_sw_rt_t *rt = rt_get(ex);
        rt->start_event = swf_json_ref(first);
        /* Its start state records it at once (SPEC 11): its value is the
         * instance's from the start, so a correlated event that comes
         * before the first decision is kept, not dropped. */
        const char *tname, *why;
        json_object *value = NULL;
        if (swf_json_get_string(first, "type") != NULL &&
            swf_json_get_string(first, "source") != NULL &&
            trigger_of(rt, first, &tname, &value, &why))
            rt->corr = value;
        const char *id = swf_json_get_string(first, "id"),
                   *src = swf_json_get_string(first, "source");
        if (id != NULL && src != NULL) {
            char *key = xprintf("%s\n%s", src, id);
            json_object_object_add(rt->seen, key, json_object_new_boolean(1));
            free(key);
        }
    }
}

static bool waiter_open(const swf_asl_exec_t *ex, waiter_kind_t kind)
{
    for (size_t i = 0; i < ex->nwaiters; i++)
        if (ex->waiters[i].open && ex->waiters[i].kind == kind)
            return true;
    return false;
}

static bool serve_pending(swf_asl_exec_t *ex);

/*
 * The end of a decision's run (exec.c runs the ready frames again while
 * this returns true): the states that started waiting take pending events
 * (SPEC 9.4); then, in a run given its events (swf run --local or --dev,
 * WorkflowExecutionStarted's cloudEvents), when nothing can run but a state
 * waits, the next event is delivered, recorded as a MarkerRecorded decision
 * (markerName "cloudevent") so that the history shows it where it was
 * delivered; with none left and no timer running, the waits time out
 * (SPEC 14). Activities and timers decide "nothing can run", and both are
 * in the history, so a replay delivers at the same points.
 */
bool swf_asl__sw_settle(swf_asl_exec_t *ex)
{
    if (serve_pending(ex))
        return true;
    swf_asl_sw_rt_t *rt = ex->sw_rt;
    if (rt != NULL && rt->start_event != NULL && swf_asl__sw_waiting(ex)) {
        json_object *ce = rt->start_event;
        rt->start_event = NULL;
        char *key =
            xprintf("%s\n%s", swf_json_get_string(ce, "source"), swf_json_get_string(ce, "id"));
        json_object_object_del(rt->seen, key); /* seen from the start: routed now */
        free(key);
        route_event(ex, ce);
        json_object_put(ce);
        return true;
    }
    if (rt == NULL || rt->script == NULL || waiter_open(ex, W_ACTIVITY) || !swf_asl__sw_waiting(ex))
        return false;
    if (rt->script_next < json_object_array_length(rt->script)) {
        json_object *ce = json_object_array_get_idx(rt->script, rt->script_next++);
        json_object *a = json_object_new_object();
        swf_json_add(a, "markerName", json_object_new_string("cloudevent"));
        swf_json_add(a, "details", swf_json_ref(ce));
        swf_asl__decisions_push(ex->out, SWF_EVENT_MARKER_RECORDED, a);
        route_event(ex, ce);
        return true;
    }
    if (waiter_open(ex, W_TIMER))
        return false;
    for (size_t i = 0; i < rt->nwaits; i++) {
        sw_wait_t *w = rt->waits[i];
        if (w->frame != NULL && w->fired < 0 && !w->timed_out) {
            w->timed_out = true;
            swf_asl__enqueue(ex, w->frame);
        }
    }
    return true;
}

static bool serve_pending(swf_asl_exec_t *ex)
{
    swf_asl_sw_rt_t *rt = ex->sw_rt;
    if (rt == NULL)
        return false;
    waits_compact(rt);
    bool woke = false;
    for (;;) {
        /* The first unserved wait in document order. */
        sw_wait_t *w = NULL;
        for (size_t i = 0; i < rt->nwaits; i++) {
            sw_wait_t *c = rt->waits[i];
            if (!c->served && c->frame != NULL && (w == NULL || c->order < w->order))
                w = c;
        }
        if (w == NULL)
            break;
        w->served = true;
        for (size_t i = 0; i < json_object_array_length(rt->pending) && w->fired < 0;) {
            json_object *p = json_object_array_get_idx(rt->pending, i), *ev, *arr;
            const char *t = swf_json_get_string(p, "trigger");
            if (!wait_wants(w, t)) {
                i++;
                continue;
            }
            swf_json_get(p, "event", &ev);
            swf_json_get(p, "arrival", &arr);
            wait_record(ex, w, t, ev, json_object_get_int64(arr));
            json_object_array_del_idx(rt->pending, i, 1);
        }
        if (w->fired >= 0)
            woke = true;
    }
    return woke;
}

bool swf_asl__sw_waiting(const swf_asl_exec_t *ex)
{
    swf_asl_sw_rt_t *rt = ex->sw_rt;
    for (size_t i = 0; rt != NULL && i < rt->nwaits; i++)
        if (rt->waits[i]->frame != NULL && rt->waits[i]->fired < 0 && !rt->waits[i]->timed_out)
            return true;
    return false;
}
