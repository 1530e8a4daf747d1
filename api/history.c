/*
 * history.c - GetExecutionHistory: an execution's history in Step
 * Functions' own event types, derived from swf's history by replay.
 *
 * Nothing new is stored. swf records activities, timers and decisions
 * (SWF's vocabulary); Step Functions shows states entered and exited, the
 * tasks between, and the iterations of Map states. The tasks come from the
 * stored events, one for one (ActivityTaskScheduled -> ActivityScheduled for
 * an activity ARN, else TaskScheduled; ActivityTaskCompleted ->
 * ActivitySucceeded or TaskSucceeded; the closing events ->
 * ExecutionSucceeded, ExecutionFailed, ExecutionTimedOut, ExecutionAborted);
 * the states from replaying the history through the interpreter with its
 * trace callback (decider/replay.h), which reports each state entered,
 * exited, failed, retried and caught at the decision task that did it, so
 * they are placed at that DecisionTaskStarted event. A task scheduled by a
 * decision follows the TaskStateEntered of its state (its control names the
 * state and path), as in AWS. Map iterations are the trace's paths
 * ("Par[0]/Items[3]" is iteration 3 of the Map Items in branch 0 of Par):
 * MapIterationStarted before the first state of an iteration,
 * MapIterationSucceeded after a state that ends it (End or Succeed, read in
 * the definition), MapIterationFailed after a failure that leaves it, and
 * MapIterationAborted for an iteration still running when it is stopped:
 * its Map or a Parallel around it fails (a sibling failed: before the
 * MapStateFailed), is retried (when the Retry takes the error, not when it
 * starts again after the back-off), or the execution
 * closes (failed, timed out or stopped: before the Execution... event). As
 * in Step Functions, the aborted iteration's event points at its last
 * event and its parent's chain goes on from where it was.
 * Decision tasks and timers themselves have no Step Functions event.
 * A distributed Map's iterations are a Map Run (maprun.c): the
 * interpreter's map trace says when they begin (MapRunStarted) and when
 * UpdateMapRun changed their limits; the Map's close, retry or re-entry,
 * or the execution's close, ends the run (MapRunSucceeded, MapRunFailed,
 * MapRunAborted), and each iteration's start and end is counted in it. A
 * redrive of the execution redrives the last run of a Map it runs again
 * when that run failed or was aborted (MapRunRedriven), as AWS does. The
 * map trace also gives MapStateStarted's length: the Map's items, however
 * many iterations start.
 *
 * Ids are dense from 1 in the derived order. previousEventId follows
 * AWS's chain of causes, kept per thread (the top level, each Parallel
 * branch, each Map iteration): an event points at its thread's last event;
 * the first state at 0, as in AWS; an iteration's start at its Map's last
 * event; the Map's close at its last iteration's close. api/README.md shows
 * the example order workflow beside what Step Functions shows.
 * nextToken is the index of the page's first event.
 */
#include "api/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/nested.h"
#include "decider/replay.h"
#include "history/catalog.h"
#include "history/pg.h"
#include "protocol/json.h"
#include "protocol/limits.h"

/* What happened to a state, as kept from the trace: the trace's kinds, and
 * a retried Map or Parallel starting again (Step Functions shows
 * ...StateStarted again, not ...StateEntered). */
typedef enum rec_kind {
    REC_ENTERED,
    REC_EXITED,
    REC_FAILED,
    REC_CAUGHT,
    REC_RESTARTED,
    REC_ITERATING, /* a Map's iterations begin (the map trace); data: see on_map_trace */
    REC_RETRIED,   /* a Map or Parallel retried; data: {"Error","Cause","RetryCount"} */
    REC_UPDATED,   /* a Map's limits changed; data: the signal's input (exec.h) */
} rec_kind_t;

typedef struct trace_rec {
    rec_kind_t kind;
    char *path, *state, *type;
    json_object *data; /* a reference */
    int64_t time_ms, event_id;
} trace_rec_t;

typedef struct traces {
    trace_rec_t *items;
    size_t n, cap;
    /* "path/state" of the states being retried: their next entry is the
     * same state going on, which Step Functions does not show again. */
    char **retrying;
    size_t nretrying, capretrying;
} traces_t;

/* Whether key is among the states being retried; removes it if so. */
static bool retry_take(traces_t *tr, const char *key)
{
    for (size_t i = 0; i < tr->nretrying; i++) {
        if (strcmp(tr->retrying[i], key) == 0) {
            free(tr->retrying[i]);
            tr->retrying[i] = tr->retrying[--tr->nretrying];
            return true;
        }
    }
    return false;
}

static char *dup_s(const char *s)
{
    char *d = strdup(s ? s : "");
    if (d == NULL)
        abort();
    return d;
}

static bool is_fan(const char *type)
{
    return strcmp(type, "Map") == 0 || strcmp(type, "Parallel") == 0;
}

static void rec_add(traces_t *tr, rec_kind_t kind, const char *path, const char *state,
                    const char *type, json_object *data, int64_t time_ms, int64_t event_id)
{
    if (tr->n == tr->cap) {
        tr->cap = tr->cap ? tr->cap * 2 : 64;
        tr->items = realloc(tr->items, tr->cap * sizeof(*tr->items));
        if (tr->items == NULL)
            abort();
    }
    tr->items[tr->n++] =
        (trace_rec_t){kind, dup_s(path), dup_s(state), dup_s(type), data, time_ms, event_id};
}

/* A Map's iterations begin, kept as {"length": its items}; a distributed
 * Map's is a Map Run (maprun.c), kept with "label", "distributed": true,
 * "iterations": [items of each], "maxConcurrency", "toleratedFailureCount",
 * "toleratedFailurePercentage". */
static void on_map_trace(void *ctx, const swf_asl_map_trace_t *m)
{
    if (m->update != NULL) {
        rec_add(ctx, REC_UPDATED, m->path, m->state, "Map", swf_json_ref(m->update), m->time_ms,
                m->event_id);
        return;
    }
    json_object *d = json_object_new_object(), *its = json_object_new_array();
    size_t n = json_object_array_length(m->iterations), length = 0;
    for (size_t i = 0; i < n; i++) {
        json_object *items = NULL;
        swf_json_get(json_object_array_get_idx(m->iterations, i), "Items", &items);
        size_t k = m->batched && json_object_is_type(items, json_type_array)
                       ? json_object_array_length(items)
                       : 1;
        json_object_array_add(its, json_object_new_int64((int64_t)k));
        length += k;
    }
    /* MapStateStarted's length: the Map's items (map_lengths). */
    swf_json_add(d, "length", json_object_new_int64((int64_t)length));
    if (!m->distributed) { /* an inline Map is no Map Run */
        json_object_put(its);
        rec_add(ctx, REC_ITERATING, m->path, m->state, "Map", d, m->time_ms, m->event_id);
        return;
    }
    swf_json_add(d, "label", json_object_new_string(m->label ? m->label : m->state));
    swf_json_add(d, "distributed", json_object_new_boolean(m->distributed));
    swf_json_add(d, "iterations", its);
    swf_json_add(d, "maxConcurrency", json_object_new_int64((int64_t)m->max_concurrency));
    swf_json_add(d, "toleratedFailureCount",
                 json_object_new_int64(m->tolerated_count < 0 ? 0 : m->tolerated_count));
    swf_json_add(d, "toleratedFailurePercentage",
                 json_object_new_double(m->tolerated_pct < 0 ? 0 : m->tolerated_pct));
    rec_add(ctx, REC_ITERATING, m->path, m->state, "Map", d, m->time_ms, m->event_id);
}

static void on_trace(void *ctx, const swf_asl_trace_t *t)
{
    traces_t *tr = ctx;
    char key[SWF_LIMIT_PATH_BYTES + SWF_LIMIT_NAME_BYTES + 2];
    snprintf(key, sizeof(key), "%s/%s", t->path ? t->path : "", t->state ? t->state : "");
    if (t->kind == SWF_ASL_STATE_RETRIED && t->state_type && is_fan(t->state_type))
        rec_add(tr, REC_RETRIED, t->path, t->state, t->state_type, swf_json_ref(t->data),
                t->time_ms, t->event_id);
    if (t->kind == SWF_ASL_STATE_RETRIED) {
        (void)retry_take(tr, key); /* kept once however often it is retried */
        if (tr->nretrying == tr->capretrying) {
            tr->capretrying = tr->capretrying ? tr->capretrying * 2 : 8;
            tr->retrying = realloc(tr->retrying, tr->capretrying * sizeof(*tr->retrying));
            if (tr->retrying == NULL)
                abort();
        }
        tr->retrying[tr->nretrying++] = dup_s(key);
        return;
    }
    rec_kind_t kind = t->kind == SWF_ASL_STATE_ENTERED  ? REC_ENTERED
                      : t->kind == SWF_ASL_STATE_EXITED ? REC_EXITED
                      : t->kind == SWF_ASL_STATE_FAILED ? REC_FAILED
                                                        : REC_CAUGHT;
    if (t->kind == SWF_ASL_STATE_ENTERED && retry_take(tr, key)) {
        if (!is_fan(t->state_type ? t->state_type : ""))
            return;
        kind = REC_RESTARTED;
    }
    rec_add(tr, kind, t->path, t->state, t->state_type, swf_json_ref(t->data), t->time_ms,
            t->event_id);
}

static void traces_free(traces_t *tr)
{
    for (size_t i = 0; i < tr->n; i++) {
        free(tr->items[i].path);
        free(tr->items[i].state);
        free(tr->items[i].type);
        json_object_put(tr->items[i].data);
    }
    free(tr->items);
    for (size_t i = 0; i < tr->nretrying; i++)
        free(tr->retrying[i]);
    free(tr->retrying);
}

/* The derived events, and what they need to know as they are built. */
typedef struct out {
    json_object *events;
    bool data; /* includeExecutionData */
    const char *role;
    const swf_api__derive_t *opt;
    /* The Map Runs (maprun.c says what each holds), and the open ones by
     * "path/Map" (their index in runs). */
    json_object *runs, *open_runs;
    /* The last run of each Map ("path/Map": its index in runs) until the
     * Map is left (MapStateExited); those a redrive redrives. */
    json_object *last_run, *redrivable;
    json_object *definition; /* borrowed; NULL when the history has none */
    /* Per thread ("" the top level, "Par[0]" a branch, "Par[0]/Items[3]" an
     * iteration): "last" its last event's id, absent before it started;
     * "done" the close of its last child (a Map's last iteration); "kids"
     * the threads started under each Map or Parallel ("parent/name");
     * "open" the Map iterations started and not yet ended. */
    json_object *last, *done, *kids, *open;
    const swf_event_list_t *all;
    bool *placed;  /* stored events already emitted after their state */
    long *map_len; /* map_lengths */
} out_t;

static int64_t id_get(json_object *map, const char *path)
{
    json_object *v;
    return json_object_object_get_ex(map, path, &v) ? json_object_get_int64(v) : 0;
}

static void id_set(json_object *map, const char *path, int64_t id)
{
    json_object_object_add(map, path, json_object_new_int64(id));
}

/* A new event pointing at prev. */
static json_object *ev_new(out_t *o, const char *type, int64_t time_ms, int64_t prev)
{
    json_object *e = json_object_new_object();
    size_t id = json_object_array_length(o->events) + 1;
    swf_json_add(e, "timestamp", swf_api__time(time_ms));
    swf_json_add(e, "type", json_object_new_string(type));
    swf_json_add(e, "id", json_object_new_int64((int64_t)id));
    swf_json_add(e, "previousEventId", json_object_new_int64(prev));
    json_object_array_add(o->events, e);
    return e;
}

static int64_t ev_id(json_object *e)
{
    json_object *v;
    return json_object_object_get_ex(e, "id", &v) ? json_object_get_int64(v) : 0;
}

/* A new event of thread `path`, which it then ends. */
static json_object *ev_thread(out_t *o, const char *path, const char *type, int64_t time_ms)
{
    json_object *e = ev_new(o, type, time_ms, id_get(o->last, path));
    id_set(o->last, path, ev_id(e));
    return e;
}

/* A detail member holding a JSON value as text, with its "...Details". */
static void payload_add(out_t *o, json_object *det, const char *key, json_object *v)
{
    if (!o->data)
        return;
    json_object_object_add(det, key, json_object_new_string(swf_json_str(v)));
    char dk[64];
    snprintf(dk, sizeof(dk), "%sDetails", key);
    json_object *d = json_object_new_object();
    swf_json_add(d, "truncated", json_object_new_boolean(0));
    json_object_object_add(det, dk, d);
}

static void str_add(json_object *det, const char *key, const char *v)
{
    if (v != NULL)
        json_object_object_add(det, key, json_object_new_string(v));
}

/* ---- threads: Parallel branches and Map iterations ------------------------ */

/* The last component of a child thread's path: parent's path (written to
 * parent, at most `cap` bytes), the Map or Parallel's name (to name) and
 * the index. False for the top level or a path of another form. */
static bool thread_split(const char *path, char *parent, size_t cap, char *name, size_t ncap,
                         long *index)
{
    size_t len = strlen(path);
    if (len < 4 || path[len - 1] != ']')
        return false;
    const char *open = strrchr(path, '[');
    if (open == NULL)
        return false;
    const char *slash = open;
    while (slash > path && slash[-1] != '/')
        slash--;
    char *end;
    *index = strtol(open + 1, &end, 10);
    if (end != path + len - 1 || *index < 0 || slash == open)
        return false;
    size_t plen = slash > path ? (size_t)(slash - 1 - path) : 0;
    size_t nlen = (size_t)(open - slash);
    if (plen >= cap || nlen >= ncap)
        return false;
    memcpy(parent, path, plen);
    parent[plen] = '\0';
    memcpy(name, slash, nlen);
    name[nlen] = '\0';
    return true;
}

/* The States object that a thread's path leads to in the definition. */
static json_object *states_at(json_object *def, const char *path)
{
    json_object *states = NULL;
    if (!swf_json_get(def, "States", &states))
        return NULL;
    const char *p = path;
    while (*p != '\0' && states != NULL) {
        const char *open = strchr(p, '['), *close = open ? strchr(open, ']') : NULL;
        if (close == NULL)
            return NULL;
        char name[SWF_LIMIT_NAME_BYTES + 1];
        size_t n = (size_t)(open - p);
        if (n >= sizeof(name))
            return NULL;
        memcpy(name, p, n);
        name[n] = '\0';
        long i = strtol(open + 1, NULL, 10);
        json_object *st = NULL, *v = NULL;
        if (!swf_json_get(states, name, &st) || st == NULL)
            return NULL;
        const char *type = swf_json_get_string(st, "Type");
        states = NULL;
        if (type && strcmp(type, "Parallel") == 0 && swf_json_get(st, "Branches", &v) &&
            json_object_is_type(v, json_type_array) && i >= 0 &&
            (size_t)i < json_object_array_length(v))
            swf_json_get(json_object_array_get_idx(v, (size_t)i), "States", &states);
        else if (type && strcmp(type, "Map") == 0 &&
                 (swf_json_get(st, "ItemProcessor", &v) || swf_json_get(st, "Iterator", &v)))
            swf_json_get(v, "States", &states);
        p = close[1] == '/' ? close + 2 : close + 1;
    }
    return json_object_is_type(states, json_type_object) ? states : NULL;
}

/* Whether the state `name` of thread `path` ends its thread when it exits. */
static bool state_ends(out_t *o, const char *path, const char *name)
{
    json_object *states = o->definition ? states_at(o->definition, path) : NULL, *st = NULL, *v;
    if (states == NULL || !swf_json_get(states, name, &st) || st == NULL)
        return false;
    const char *type = swf_json_get_string(st, "Type");
    return (type && strcmp(type, "Succeed") == 0) ||
           (swf_json_get(st, "End", &v) && json_object_get_boolean(v));
}

/* Whether the component `name` under `parent` is a Map (else a Parallel). */
static bool thread_is_map(out_t *o, const char *parent, const char *name)
{
    json_object *states = o->definition ? states_at(o->definition, parent) : NULL, *st = NULL;
    if (states == NULL || !swf_json_get(states, name, &st) || st == NULL)
        return false;
    const char *type = swf_json_get_string(st, "Type");
    return type && strcmp(type, "Map") == 0;
}

static void iteration_event(out_t *o, const char *type, const char *name, long index,
                            int64_t time_ms, int64_t prev)
{
    char key[64];
    json_object *det = json_object_new_object();
    str_add(det, "name", name);
    swf_json_add(det, "index", json_object_new_int64(index));
    snprintf(key, sizeof(key), "m%sEventDetails", type + 1);
    json_object_object_add(ev_new(o, type, time_ms, prev), key, det);
}

/* ---- Map Runs: a distributed Map's iterations ---------------------------- */

/* The open Map Run of the Map `key` ("path/Map"), or NULL. */
static json_object *run_open(out_t *o, const char *key)
{
    json_object *v;
    if (!json_object_object_get_ex(o->open_runs, key, &v))
        return NULL;
    return json_object_array_get_idx(o->runs, (size_t)json_object_get_int64(v));
}

/* The iteration `index` of the open run of `key`, or NULL. */
static json_object *run_iteration(out_t *o, const char *key, long index)
{
    json_object *run = run_open(o, key), *its = NULL;
    if (run == NULL || !swf_json_get(run, "iterations", &its) || index < 0 ||
        (size_t)index >= json_object_array_length(its))
        return NULL;
    return json_object_array_get_idx(its, (size_t)index);
}

static void run_status(json_object *o, const char *status, int64_t time_ms, bool start)
{
    json_object_object_add(o, "status", json_object_new_string(status));
    json_object_object_add(o, start ? "startMs" : "stopMs", json_object_new_int64(time_ms));
}

/* The execution is redriven: the last run of each Map that did not end
 * well and was not left (no MapStateExited: failed uncaught, or aborted
 * with its execution) is redriven when its Map begins again, as AWS
 * redrives a Map Run with its parent, unless it failed with
 * States.DataLimitExceeded or States.Runtime (AWS then starts a new one). */
static void runs_redrivable(out_t *o)
{
    json_object_put(o->redrivable);
    o->redrivable = json_object_new_object();
    json_object_object_foreach(o->last_run, key, v)
    {
        json_object *run = json_object_array_get_idx(o->runs, (size_t)json_object_get_int64(v));
        const char *st = swf_json_get_string(run, "status"),
                   *error = swf_json_get_string(run, "error");
        if (st == NULL || (strcmp(st, "FAILED") != 0 && strcmp(st, "ABORTED") != 0) ||
            (error != NULL && (strcmp(error, "States.DataLimitExceeded") == 0 ||
                               strcmp(error, "States.Runtime") == 0)))
            continue;
        json_object_object_add(o->redrivable, key, json_object_get(v));
    }
}

/* The Map or Parallel `name` of thread `path` is left (its ...Exited):
 * its run and those of the Maps inside it are not redriven. */
static void runs_left(out_t *o, const char *path, const char *name)
{
    char key[SWF_LIMIT_PATH_BYTES + SWF_LIMIT_NAME_BYTES + 2],
        prefix[SWF_LIMIT_PATH_BYTES + SWF_LIMIT_NAME_BYTES + 3];
    snprintf(key, sizeof(key), "%s/%s", path, name);
    snprintf(prefix, sizeof(prefix), "%s%s%s[", path, *path ? "/" : "", name);
    json_object *gone = json_object_new_array();
    json_object_object_foreach(o->last_run, k, v)
    {
        (void)v;
        if (strcmp(k, key) == 0 || strncmp(k, prefix, strlen(prefix)) == 0)
            json_object_array_add(gone, json_object_new_string(k));
    }
    for (size_t i = 0; i < json_object_array_length(gone); i++)
        json_object_object_del(o->last_run,
                               json_object_get_string(json_object_array_get_idx(gone, i)));
    json_object_put(gone);
}

/* Redrives the run `run` of the Map `t` begins again with its iterations
 * (those that succeeded are kept, the others wait to run again): false
 * when it cannot be (another number of iterations: a new run then). */
static bool run_redrive(out_t *o, json_object *run, const trace_rec_t *t, json_object *its)
{
    json_object *list = NULL, *v;
    swf_json_get(run, "iterations", &list);
    if (json_object_array_length(list) != json_object_array_length(its))
        return false;
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        json_object *it = json_object_array_get_idx(list, i);
        if (strcmp(swf_json_get_string(it, "status"), "SUCCEEDED") == 0)
            continue;
        json_object_object_del(it, "stopMs");
        int64_t n = swf_json_get(it, "redriveCount", &v) ? json_object_get_int64(v) : 0;
        swf_json_add(it, "redriveCount", json_object_new_int64(n + 1));
        json_object_object_add(it, "status", json_object_new_string("PENDING"));
    }
    int64_t n = swf_json_get(run, "redriveCount", &v) ? json_object_get_int64(v) : 0;
    json_object_object_add(run, "redriveCount", json_object_new_int64(n + 1));
    json_object_object_add(run, "redriveMs", json_object_new_int64(t->time_ms));
    json_object_object_add(run, "status", json_object_new_string("RUNNING"));
    json_object_object_add(run, "beganEventId", json_object_new_int64(t->event_id));
    json_object_object_del(run, "stopMs");
    json_object_object_del(run, "error");
    static const char *const keep[] = {"maxConcurrency", "toleratedFailureCount",
                                       "toleratedFailurePercentage"};
    for (size_t i = 0; i < sizeof(keep) / sizeof(*keep); i++)
        json_object_object_add(run, keep[i],
                               swf_json_ref(json_object_object_get(t->data, keep[i])));
    json_object *det = json_object_new_object();
    swf_json_add(det, "mapRunArn", swf_json_ref(json_object_object_get(run, "mapRunArn")));
    swf_json_add(det, "redriveCount", json_object_new_int64(n + 1));
    json_object_object_add(ev_thread(o, t->path, "MapRunRedriven", t->time_ms),
                           "mapRunRedrivenEventDetails", det);
    return true;
}

/* A distributed Map's iterations begin (rec data from on_map_trace): a
 * new Map Run and its MapRunStarted, or, the first time after a redrive,
 * the run redriven (runs_redrivable) and its MapRunRedriven. Either way
 * the runs array gets one more entry, as the interpreter numbers a run
 * each time (a ResultWriter's MapRunArn): a redriven run's is the same
 * record again, under the number the interpreter gave it. */
static void run_begin(out_t *o, const trace_rec_t *t)
{
    json_object *v = NULL, *its = NULL;
    if (!swf_json_get(t->data, "distributed", &v) || !json_object_get_boolean(v))
        return;
    char key[SWF_LIMIT_PATH_BYTES + SWF_LIMIT_NAME_BYTES + 2], arn[SWF_API_ARN_BYTES];
    snprintf(key, sizeof(key), "%s/%s", t->path, t->state);
    size_t k = json_object_array_length(o->runs);
    swf_json_get(t->data, "iterations", &its);
    if (json_object_object_get_ex(o->redrivable, key, &v)) {
        int64_t r = json_object_get_int64(v);
        json_object *run = json_object_array_get_idx(o->runs, (size_t)r);
        json_object_object_del(o->redrivable, key);
        if (run_redrive(o, run, t, its)) {
            json_object_array_add(o->runs, json_object_get(run));
            json_object_object_add(o->open_runs, key, json_object_new_int64(r));
            json_object_object_add(o->last_run, key, json_object_new_int64(r));
            return;
        }
    }
    snprintf(arn, sizeof(arn), "%s%s:%s-%zu", o->opt->run_arn ? o->opt->run_arn : "",
             swf_json_get_string(t->data, "label"),
             o->opt->execution_id ? o->opt->execution_id : "", k + 1);
    json_object *run = json_object_new_object();
    swf_json_add(run, "mapRunArn", json_object_new_string(arn));
    swf_json_add(run, "path", json_object_new_string(t->path));
    swf_json_add(run, "state", json_object_new_string(t->state));
    swf_json_add(run, "beganEventId", json_object_new_int64(t->event_id));
    swf_json_add(run, "label", swf_json_ref(json_object_object_get(t->data, "label")));
    static const char *const keep[] = {"maxConcurrency", "toleratedFailureCount",
                                       "toleratedFailurePercentage"};
    for (size_t i = 0; i < sizeof(keep) / sizeof(*keep); i++)
        swf_json_add(run, keep[i], swf_json_ref(json_object_object_get(t->data, keep[i])));
    swf_json_add(run, "number", json_object_new_int64((int64_t)k + 1));
    run_status(run, "RUNNING", t->time_ms, true);
    json_object *list = json_object_new_array();
    for (size_t i = 0; i < json_object_array_length(its); i++) {
        json_object *it = json_object_new_object();
        swf_json_add(it, "items", swf_json_ref(json_object_array_get_idx(its, i)));
        swf_json_add(it, "status", json_object_new_string("PENDING"));
        json_object_array_add(list, it);
    }
    swf_json_add(run, "iterations", list);
    json_object_array_add(o->runs, run);
    json_object_object_add(o->open_runs, key, json_object_new_int64((int64_t)k));
    json_object_object_add(o->last_run, key, json_object_new_int64((int64_t)k));
    json_object *det = json_object_new_object();
    swf_json_add(det, "mapRunArn", json_object_new_string(arn));
    json_object_object_add(ev_thread(o, t->path, "MapRunStarted", t->time_ms),
                           "mapRunStartedEventDetails", det);
}

/* Closes the open run of `key` (if any) as status (SUCCEEDED, FAILED,
 * ABORTED) with its event (MapRunSucceeded, ...; error and cause for
 * MapRunFailed); its iterations still running or pending are aborted. */
static void run_close(out_t *o, const char *key, const char *status, json_object *error,
                      int64_t time_ms)
{
    json_object *run = run_open(o, key), *its = NULL;
    if (run == NULL)
        return;
    run_status(run, status, time_ms, false);
    swf_json_get(run, "iterations", &its);
    bool ok = strcmp(status, "SUCCEEDED") == 0;
    for (size_t i = 0; i < json_object_array_length(its); i++) {
        json_object *it = json_object_array_get_idx(its, i);
        const char *st = swf_json_get_string(it, "status");
        /* A run that succeeded with an iteration never started: a redrive
         * kept what it returned before (decider/asl/exec_children.c). */
        if (ok && st && strcmp(st, "PENDING") == 0)
            json_object_object_add(it, "status", json_object_new_string("SUCCEEDED"));
        else if (st && (strcmp(st, "RUNNING") == 0 || strcmp(st, "PENDING") == 0))
            run_status(it, "ABORTED", time_ms, false);
    }
    json_object *e = ev_thread(o, swf_json_get_string(run, "path"),
                               strcmp(status, "SUCCEEDED") == 0 ? "MapRunSucceeded"
                               : strcmp(status, "FAILED") == 0  ? "MapRunFailed"
                                                                : "MapRunAborted",
                               time_ms);
    if (strcmp(status, "FAILED") == 0) {
        const char *er = swf_json_get_string(error, "Error");
        if (er != NULL)
            json_object_object_add(run, "error", json_object_new_string(er));
        json_object *det = json_object_new_object();
        str_add(det, "error", swf_json_get_string(error, "Error"));
        str_add(det, "cause", swf_json_get_string(error, "Cause"));
        json_object_object_add(e, "mapRunFailedEventDetails", det);
    }
    json_object_object_del(o->open_runs, key);
}

/* UpdateMapRun's signal, applied by the interpreter to the open run of
 * `key` that began at t->event_id: its new limits. */
static void run_update(out_t *o, const char *key, const trace_rec_t *t)
{
    json_object *run = run_open(o, key), *v;
    if (run == NULL || id_get(run, "beganEventId") != t->event_id)
        return;
    static const char *const keys[] = {"maxConcurrency", "toleratedFailureCount",
                                       "toleratedFailurePercentage"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
        if (swf_json_get(t->data, keys[i], &v))
            json_object_object_add(run, keys[i],
                                   i < 2 ? json_object_new_int64(json_object_get_int64(v))
                                         : json_object_new_double(json_object_get_double(v)));
}

/* The execution closed: the runs still open are aborted. */
static void runs_abort(out_t *o, int64_t time_ms)
{
    while (json_object_object_length(o->open_runs) > 0) {
        struct lh_entry *e = json_object_get_object(o->open_runs)->head;
        char key[SWF_LIMIT_PATH_BYTES + SWF_LIMIT_NAME_BYTES + 2];
        snprintf(key, sizeof(key), "%s", (const char *)lh_entry_k(e));
        run_close(o, key, "ABORTED", NULL, time_ms);
    }
}

/* Before the first event of a thread: its start (MapIterationStarted for an
 * iteration; a branch starts silently at its Parallel's start). */
static void thread_start(out_t *o, const char *path, int64_t time_ms)
{
    json_object *v;
    if (*path == '\0' || json_object_object_get_ex(o->last, path, &v))
        return;
    char parent[SWF_LIMIT_PATH_BYTES + 1], name[SWF_LIMIT_NAME_BYTES + 1];
    long index;
    if (!thread_split(path, parent, sizeof(parent), name, sizeof(name), &index))
        return;
    thread_start(o, parent, time_ms);
    int64_t prev = id_get(o->last, parent);
    char key[SWF_LIMIT_PATH_BYTES + SWF_LIMIT_NAME_BYTES + 2];
    snprintf(key, sizeof(key), "%s/%s", parent, name);
    if (thread_is_map(o, parent, name)) {
        iteration_event(o, "MapIterationStarted", name, index, time_ms, prev);
        prev = (int64_t)json_object_array_length(o->events);
        json_object_object_add(o->open, path, json_object_new_boolean(1));
        json_object *it = run_iteration(o, key, index);
        if (it != NULL)
            run_status(it, "RUNNING", time_ms, true);
    }
    id_set(o->last, path, prev);
    json_object *kids;
    if (!json_object_object_get_ex(o->kids, key, &kids)) {
        kids = json_object_new_array();
        json_object_object_add(o->kids, key, kids);
    }
    json_object_array_add(kids, json_object_new_string(path));
}

/* After a thread's last event: MapIterationSucceeded or ...Failed for an
 * iteration; the parent goes on from there. */
static void thread_end(out_t *o, const char *path, bool ok, int64_t time_ms)
{
    char parent[SWF_LIMIT_PATH_BYTES + 1], name[SWF_LIMIT_NAME_BYTES + 1];
    long index;
    if (!thread_split(path, parent, sizeof(parent), name, sizeof(name), &index))
        return;
    int64_t last = id_get(o->last, path);
    if (thread_is_map(o, parent, name)) {
        json_object_object_del(o->open, path);
        iteration_event(o, ok ? "MapIterationSucceeded" : "MapIterationFailed", name, index,
                        time_ms, last);
        char key[SWF_LIMIT_PATH_BYTES + SWF_LIMIT_NAME_BYTES + 2];
        snprintf(key, sizeof(key), "%s/%s", parent, name);
        json_object *it = run_iteration(o, key, index);
        if (it != NULL)
            run_status(it, ok ? "SUCCEEDED" : "FAILED", time_ms, false);
        /* AWS: MapStateSucceeded points at the last MapIterationSucceeded,
         * MapStateFailed at the event that failed the iteration. */
        id_set(o->done, parent, ok ? (int64_t)json_object_array_length(o->events) : last);
    } else {
        id_set(o->done, parent, last);
    }
    id_set(o->last, parent, last);
}

static size_t path_depth(const char *path)
{
    size_t n = 0;
    for (; *path != '\0'; path++)
        n += *path == '/';
    return n;
}

/* MapIterationAborted for each iteration still running under the Map or
 * Parallel `name` of thread `path` (all of them for a NULL name), the
 * deepest first (an iteration stops after those inside it), then in the
 * order they started. */
static void iterations_abort(out_t *o, const char *path, const char *name, int64_t time_ms)
{
    char prefix[SWF_LIMIT_PATH_BYTES + SWF_LIMIT_NAME_BYTES + 3] = "";
    if (name != NULL)
        snprintf(prefix, sizeof(prefix), "%s%s%s[", path, *path ? "/" : "", name);
    size_t plen = strlen(prefix), depth_max = 0;
    json_object_object_foreach(o->open, k0, v0)
    {
        (void)v0;
        if (strncmp(k0, prefix, plen) == 0 && path_depth(k0) > depth_max)
            depth_max = path_depth(k0);
    }
    for (size_t depth = depth_max + 1; depth-- > 0;) {
        json_object *gone = json_object_new_array();
        json_object_object_foreach(o->open, k, v)
        {
            (void)v;
            char parent[SWF_LIMIT_PATH_BYTES + 1], map[SWF_LIMIT_NAME_BYTES + 1];
            long index;
            if (strncmp(k, prefix, plen) != 0 || path_depth(k) != depth ||
                !thread_split(k, parent, sizeof(parent), map, sizeof(map), &index))
                continue;
            iteration_event(o, "MapIterationAborted", map, index, time_ms, id_get(o->last, k));
            json_object_array_add(gone, json_object_new_string(k));
        }
        for (size_t i = 0; i < json_object_array_length(gone); i++)
            json_object_object_del(o->open,
                                   json_object_get_string(json_object_array_get_idx(gone, i)));
        json_object_put(gone);
    }
}

/* Forgets the threads under a Map or Parallel entered (again): its
 * iterations start anew (those of the attempt before still running are
 * aborted). Their own children are forgotten when their Map or Parallel is
 * entered in the new iteration. */
static void threads_forget(out_t *o, const char *path, const char *name, int64_t time_ms)
{
    char key[SWF_LIMIT_PATH_BYTES + SWF_LIMIT_NAME_BYTES + 2];
    iterations_abort(o, path, name, time_ms);
    snprintf(key, sizeof(key), "%s/%s", path, name);
    json_object *kids;
    if (json_object_object_get_ex(o->kids, key, &kids))
        for (size_t i = 0; i < json_object_array_length(kids); i++)
            json_object_object_del(o->last,
                                   json_object_get_string(json_object_array_get_idx(kids, i)));
    json_object_object_del(o->kids, key);
    json_object_object_del(o->done, path);
}

/* MapStateStarted's length for each Map entered: its items once they are
 * read (the map trace: after ItemsPath or ItemReader, MaxItems and
 * ItemBatcher, however many iterations start, as in AWS), else one past
 * the highest index among the Map's threads until it closes (-1 for the
 * records of other states), in one pass: every record's path names, per
 * component "M[i]", the Map M entered under the component's parent, whose
 * entry is open in `open` ("parent/M" -> record index). */
static long *map_lengths(const traces_t *tr)
{
    long *len = malloc((tr->n + 1) * sizeof(*len));
    json_object *open = json_object_new_object();
    if (len == NULL)
        abort();
    char key[SWF_LIMIT_PATH_BYTES + SWF_LIMIT_NAME_BYTES + 2];
    for (size_t k = 0; k < tr->n; k++) {
        const trace_rec_t *t = &tr->items[k];
        len[k] = -1;
        /* The Map entries each component of this record's path belongs to. */
        for (const char *c = t->path; *c != '\0';) {
            const char *open_br = strchr(c, '['), *close_br = open_br ? strchr(open_br, ']') : NULL;
            if (close_br == NULL)
                break;
            snprintf(key, sizeof(key), "%.*s/%.*s", (int)(c > t->path ? c - 1 - t->path : 0),
                     t->path, (int)(open_br - c), c);
            json_object *v;
            if (json_object_object_get_ex(open, key, &v)) {
                size_t m = (size_t)json_object_get_int64(v);
                long idx = strtol(open_br + 1, NULL, 10);
                if (idx + 1 > len[m])
                    len[m] = idx + 1;
            }
            c = close_br[1] == '/' ? close_br + 2 : close_br + 1;
        }
        if (strcmp(t->type, "Map") != 0 || t->kind == REC_RETRIED || t->kind == REC_UPDATED)
            continue;
        snprintf(key, sizeof(key), "%s/%s", t->path, t->state);
        if (t->kind == REC_ITERATING) {
            /* The Map's items, read: its length whatever starts. */
            json_object *v, *n;
            if (json_object_object_get_ex(open, key, &v) && swf_json_get(t->data, "length", &n))
                len[json_object_get_int64(v)] = (long)json_object_get_int64(n);
            continue;
        }
        if (t->kind == REC_ENTERED || t->kind == REC_RESTARTED) {
            len[k] = 0;
            json_object_object_add(open, key, json_object_new_int64((int64_t)k));
        } else {
            json_object_object_del(open, key);
        }
    }
    json_object_put(open);
    return len;
}

/* ---- stored events -------------------------------------------------------- */

/* The control of an ActivityTaskScheduled event: the Task's resource, the
 * state and its thread. */
static const char *control_of(const swf_event_t *ev, const char *key)
{
    json_object *control = NULL;
    swf_json_get(ev->attrs, "control", &control);
    const char *r = swf_json_get_string(control, key);
    return r ? r : "";
}

static bool is_activity(const char *resource)
{
    return strncmp(resource, "arn:aws:states:", 15) == 0 && strstr(resource, ":activity:") != NULL;
}

/* The resource type and name AWS shows for a Task's resource: the service
 * and the action (with its pattern) of an integration,
 * arn:aws:states:::states:startExecution.sync:2 giving "states" and
 * "startExecution.sync:2"; "lambda" and the function for
 * arn:aws:lambda:...; "swf" and the whole resource otherwise. */
static void task_details(json_object *det, const char *resource)
{
    static const char integration[] = "arn:aws:states:::";
    const size_t n = sizeof(integration) - 1;
    const char *colon = strncmp(resource, integration, n) == 0 ? strchr(resource + n, ':') : NULL;
    if (colon != NULL && colon > resource + n && colon[1] != '\0') {
        char service[64];
        snprintf(service, sizeof(service), "%.*s", (int)(colon - resource - n), resource + n);
        str_add(det, "resourceType", service);
        str_add(det, "resource", colon + 1);
        return;
    }
    str_add(det, "resourceType", strncmp(resource, "arn:aws:lambda:", 15) == 0 ? "lambda" : "swf");
    str_add(det, "resource", resource);
}

/* A .sync or .sync:2 nested execution's TaskSubmitted, after its
 * TaskStarted, as AWS shows it: the output is StartExecution's answer
 * (decider/nested.h); the started event's identity names the child. */
static void nested_submitted(out_t *o, const swf_event_t *sched, const swf_event_t *started,
                             const char *res, const char *path)
{
    swf_nested_pattern_t pattern = swf_nested_pattern(res);
    const char *who = swf_json_get_string(started->attrs, "identity");
    static const char prefix[] = "swf-nested:";
    if ((pattern != SWF_NESTED_SYNC && pattern != SWF_NESTED_SYNC2) || who == NULL ||
        strncmp(who, prefix, sizeof(prefix) - 1) != 0)
        return;
    swf_nested_request_t req = {0};
    swf_error_t *err = swf_nested_request_of(sched->attrs, "", &req);
    if (err != NULL) {
        swf_error_free(err);
        return;
    }
    json_object *det = json_object_new_object();
    task_details(det, res);
    json_object *answer =
        swf_nested_started_result(req.machine, who + sizeof(prefix) - 1, started->time_ms);
    payload_add(o, det, "output", answer);
    json_object_put(answer);
    swf_nested_request_clear(&req);
    json_object_object_add(ev_thread(o, path, "TaskSubmitted", started->time_ms),
                           "taskSubmittedEventDetails", det);
}

/* An execution's closing event with the error and cause its swf event
 * gives as reason and details (ExecutionFailed, ExecutionAborted). */
static void execution_closed(out_t *o, const swf_event_t *ev, const char *type, const char *key)
{
    iterations_abort(o, "", NULL, ev->time_ms);
    runs_abort(o, ev->time_ms);
    json_object *det = json_object_new_object();
    str_add(det, "error", swf_json_get_string(ev->attrs, "reason"));
    str_add(det, "cause", swf_json_get_string(ev->attrs, "details"));
    json_object_object_add(ev_thread(o, "", type, ev->time_ms), key, det);
}

static void event_emit(out_t *o, const swf_event_t *ev)
{
    const swf_event_list_t *all = o->all;
    json_object *v = NULL, *det = NULL;
    const swf_event_t *sched = NULL;
    int64_t sid = 0;
    if (swf_json_get(ev->attrs, "scheduledEventId", &v) && swf_json_as_int64(v, &sid) && sid >= 1 &&
        (size_t)sid <= all->count)
        sched = &all->items[sid - 1];
    const char *res = sched ? control_of(sched, "resource") : "";
    const char *path = sched ? control_of(sched, "path") : "";
    bool act = is_activity(res);
    switch (ev->type) {
    case SWF_EVENT_WORKFLOW_EXECUTION_STARTED:
        det = json_object_new_object();
        swf_json_get(ev->attrs, "input", &v);
        payload_add(o, det, "input", v);
        str_add(det, "roleArn", o->role);
        /* The first state points at 0, as in AWS. */
        json_object_object_add(ev_new(o, "ExecutionStarted", ev->time_ms, 0),
                               "executionStartedEventDetails", det);
        break;
    case SWF_EVENT_ACTIVITY_TASK_SCHEDULED: {
        const char *r = control_of(ev, "resource");
        det = json_object_new_object();
        if (is_activity(r))
            str_add(det, "resource", r);
        else
            task_details(det, r);
        swf_json_get(ev->attrs, "input", &v);
        payload_add(o, det, is_activity(r) ? "input" : "parameters", v);
        if (!is_activity(r))
            json_object_object_del(det, "parametersDetails");
        json_object *t;
        if (swf_json_get(ev->attrs, "startToCloseTimeout", &t) && swf_json_is_number(t))
            json_object_object_add(det, "timeoutInSeconds",
                                   json_object_new_int64((int64_t)json_object_get_double(t)));
        if (swf_json_get(ev->attrs, "heartbeatTimeout", &t) && swf_json_is_number(t))
            json_object_object_add(det, "heartbeatInSeconds",
                                   json_object_new_int64((int64_t)json_object_get_double(t)));
        const char *p = control_of(ev, "path");
        thread_start(o, p, ev->time_ms);
        json_object_object_add(
            ev_thread(o, p, is_activity(r) ? "ActivityScheduled" : "TaskScheduled", ev->time_ms),
            is_activity(r) ? "activityScheduledEventDetails" : "taskScheduledEventDetails", det);
        break;
    }
    case SWF_EVENT_ACTIVITY_TASK_STARTED:
        det = json_object_new_object();
        if (act)
            str_add(det, "workerName", swf_json_get_string(ev->attrs, "identity"));
        else
            task_details(det, res);
        json_object_object_add(
            ev_thread(o, path, act ? "ActivityStarted" : "TaskStarted", ev->time_ms),
            act ? "activityStartedEventDetails" : "taskStartedEventDetails", det);
        if (!act && sched != NULL)
            nested_submitted(o, sched, ev, res, path);
        break;
    case SWF_EVENT_ACTIVITY_TASK_COMPLETED:
        det = json_object_new_object();
        if (!act)
            task_details(det, res);
        swf_json_get(ev->attrs, "result", &v);
        payload_add(o, det, "output", v);
        json_object_object_add(
            ev_thread(o, path, act ? "ActivitySucceeded" : "TaskSucceeded", ev->time_ms),
            act ? "activitySucceededEventDetails" : "taskSucceededEventDetails", det);
        break;
    case SWF_EVENT_ACTIVITY_TASK_FAILED:
        det = json_object_new_object();
        if (!act)
            task_details(det, res);
        str_add(det, "error", swf_json_get_string(ev->attrs, "reason"));
        str_add(det, "cause", swf_json_get_string(ev->attrs, "details"));
        json_object_object_add(
            ev_thread(o, path, act ? "ActivityFailed" : "TaskFailed", ev->time_ms),
            act ? "activityFailedEventDetails" : "taskFailedEventDetails", det);
        break;
    case SWF_EVENT_ACTIVITY_TASK_TIMED_OUT: {
        det = json_object_new_object();
        if (!act)
            task_details(det, res);
        const char *tt = swf_json_get_string(ev->attrs, "timeoutType");
        str_add(det, "error",
                tt && strcmp(tt, "HEARTBEAT") == 0 ? "States.HeartbeatTimeout" : "States.Timeout");
        json_object_object_add(
            ev_thread(o, path, act ? "ActivityTimedOut" : "TaskTimedOut", ev->time_ms),
            act ? "activityTimedOutEventDetails" : "taskTimedOutEventDetails", det);
        break;
    }
    case SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED:
        runs_abort(o, ev->time_ms);
        det = json_object_new_object();
        swf_json_get(ev->attrs, "result", &v);
        payload_add(o, det, "output", v);
        json_object_object_add(ev_thread(o, "", "ExecutionSucceeded", ev->time_ms),
                               "executionSucceededEventDetails", det);
        break;
    case SWF_EVENT_WORKFLOW_EXECUTION_FAILED:
        execution_closed(o, ev, "ExecutionFailed", "executionFailedEventDetails");
        break;
    case SWF_EVENT_WORKFLOW_EXECUTION_TIMED_OUT:
        iterations_abort(o, "", NULL, ev->time_ms);
        runs_abort(o, ev->time_ms);
        det = json_object_new_object();
        str_add(det, "error", "States.Timeout");
        json_object_object_add(ev_thread(o, "", "ExecutionTimedOut", ev->time_ms),
                               "executionTimedOutEventDetails", det);
        break;
    case SWF_EVENT_WORKFLOW_EXECUTION_REDRIVEN: /* RedriveExecution (redrive.c) */
        runs_redrivable(o);
        det = json_object_new_object();
        if (swf_json_get(ev->attrs, "redriveCount", &v))
            json_object_object_add(det, "redriveCount", swf_json_ref(v));
        json_object_object_add(ev_thread(o, "", "ExecutionRedriven", ev->time_ms),
                               "executionRedrivenEventDetails", det);
        break;
    case SWF_EVENT_WORKFLOW_EXECUTION_TERMINATED:
    case SWF_EVENT_WORKFLOW_EXECUTION_CANCELED:
        execution_closed(o, ev, "ExecutionAborted", "executionAbortedEventDetails");
        break;
    default:
        break;
    }
}

/* Emits, right after a Task's TaskStateEntered, the tasks its decision
 * scheduled for it: the ActivityTaskScheduled events after the decision's
 * DecisionTaskStarted (event_id) whose control names the state. */
static void scheduled_place(out_t *o, const trace_rec_t *t)
{
    for (size_t i = (size_t)t->event_id; i < o->all->count; i++) {
        const swf_event_t *ev = &o->all->items[i];
        if (ev->type == SWF_EVENT_DECISION_TASK_STARTED)
            break;
        if (ev->type != SWF_EVENT_ACTIVITY_TASK_SCHEDULED || o->placed[i] ||
            strcmp(control_of(ev, "state"), t->state) != 0 ||
            strcmp(control_of(ev, "path"), t->path) != 0)
            continue;
        o->placed[i] = true;
        event_emit(o, ev);
    }
}

/* ---- states --------------------------------------------------------------- */

/* MapStateSucceeded, ParallelStateFailed, ...: it points at the close of
 * the last iteration or branch; a ...StateExited after Succeeded points at
 * the same event (as in AWS), after Failed at the Failed. */
static void fan_close(out_t *o, const char *p, const trace_rec_t *t, const char *how)
{
    char type[96];
    if (strcmp(how, "Failed") == 0)
        iterations_abort(o, p, t->state, t->time_ms);
    int64_t done = id_get(o->done, p);
    if (done > 0)
        id_set(o->last, p, done);
    /* A distributed Map: its run closes first, and the Map's close points
     * at the run's. */
    snprintf(type, sizeof(type), "%s/%s", p, t->state);
    run_close(o, type, strcmp(how, "Succeeded") == 0 ? "SUCCEEDED" : "FAILED", t->data, t->time_ms);
    int64_t prev = id_get(o->last, p);
    snprintf(type, sizeof(type), "%sState%s", t->type, how);
    ev_thread(o, p, type, t->time_ms);
    if (strcmp(how, "Succeeded") == 0)
        id_set(o->last, p, prev);
}

static void trace_emit(out_t *o, const traces_t *tr, size_t k)
{
    const trace_rec_t *t = &tr->items[k];
    char type[96];
    json_object *det = json_object_new_object(), *e;
    str_add(det, "name", t->state);
    bool fan = is_fan(t->type);
    const char *p = t->path;
    thread_start(o, p, t->time_ms);
    char key[SWF_LIMIT_PATH_BYTES + SWF_LIMIT_NAME_BYTES + 2];
    snprintf(key, sizeof(key), "%s/%s", p, t->state);
    switch (t->kind) {
    case REC_ITERATING:
        run_begin(o, t);
        break;
    case REC_RETRIED:
        /* A Retry takes the Map's (or Parallel's) error: the iterations
         * still running under it stop now, as when it fails, not when it
         * starts again after the back-off. */
        iterations_abort(o, p, t->state, t->time_ms);
        run_close(o, key, "FAILED", t->data, t->time_ms);
        break;
    case REC_UPDATED:
        run_update(o, key, t);
        break;
    case REC_ENTERED:
    case REC_RESTARTED:
        if (fan)
            threads_forget(o, p, t->state, t->time_ms);
        run_close(o, key, "ABORTED", NULL, t->time_ms); /* entered again (a redrive) */
        if (t->kind == REC_ENTERED) {
            snprintf(type, sizeof(type), "%sStateEntered", t->type);
            payload_add(o, det, "input", t->data);
            json_object_object_add(ev_thread(o, p, type, t->time_ms), "stateEnteredEventDetails",
                                   det);
            det = NULL;
        }
        if (fan) {
            snprintf(type, sizeof(type), "%sStateStarted", t->type);
            e = ev_thread(o, p, type, t->time_ms);
            if (strcmp(t->type, "Map") == 0) {
                json_object *m = json_object_new_object();
                swf_json_add(m, "length", json_object_new_int64(o->map_len[k]));
                json_object_object_add(e, "mapStateStartedEventDetails", m);
            }
        }
        if (t->kind == REC_ENTERED && strcmp(t->type, "Task") == 0)
            scheduled_place(o, t);
        break;
    case REC_EXITED:
    case REC_CAUGHT:
        if (fan) {
            fan_close(o, p, t, t->kind == REC_EXITED ? "Succeeded" : "Failed");
            runs_left(o, p, t->state);
        }
        snprintf(type, sizeof(type), "%sStateExited", t->type);
        if (t->kind == REC_CAUGHT) {
            /* The catcher's output is the next state's input; the error is
             * what Step Functions' ResultPath-less Catch gives. */
            json_object *err = json_object_new_object();
            const char *er = swf_json_get_string(t->data, "Error"),
                       *c = swf_json_get_string(t->data, "Cause");
            swf_json_add(err, "Error", json_object_new_string(er ? er : ""));
            swf_json_add(err, "Cause", json_object_new_string(c ? c : ""));
            payload_add(o, det, "output", err);
            json_object_put(err);
        } else {
            payload_add(o, det, "output", t->data);
        }
        json_object_object_add(ev_thread(o, p, type, t->time_ms), "stateExitedEventDetails", det);
        det = NULL;
        if (t->kind == REC_EXITED && state_ends(o, p, t->state))
            thread_end(o, p, true, t->time_ms);
        break;
    case REC_FAILED:
        if (fan)
            fan_close(o, p, t, "Failed");
        thread_end(o, p, false, t->time_ms);
        break;
    }
    json_object_put(det);
}

swf_error_t *swf_api__history_derive(const swf_event_list_t *events, const swf_api__derive_t *d,
                                     json_object **out, json_object **runs)
{
    traces_t tr = {0};
    swf_decider_replay_result_t result = {0};
    swf_decider_replay_options_t opt = {
        .trace = on_trace, .trace_ctx = &tr, .map_trace = on_map_trace, .map_trace_ctx = &tr};
    swf_error_t *err = swf_decider_replay_run(events, &opt, &result);
    if (err == NULL) {
        out_t o = {.events = json_object_new_array(),
                   .data = d->data,
                   .role = d->role,
                   .opt = d,
                   .runs = json_object_new_array(),
                   .open_runs = json_object_new_object(),
                   .last_run = json_object_new_object(),
                   .redrivable = json_object_new_object(),
                   .last = json_object_new_object(),
                   .done = json_object_new_object(),
                   .kids = json_object_new_object(),
                   .open = json_object_new_object(),
                   .all = events,
                   .placed = calloc(events->count + 1, sizeof(bool)),
                   .map_len = map_lengths(&tr)};
        if (o.placed == NULL)
            abort();
        if (events->count > 0 && events->items[0].type == SWF_EVENT_WORKFLOW_EXECUTION_STARTED)
            swf_json_get(events->items[0].attrs, "definition", &o.definition);
        size_t t = 0;
        for (size_t i = 0; i < events->count; i++) {
            const swf_event_t *ev = &events->items[i];
            if (ev->type == SWF_EVENT_DECISION_TASK_STARTED)
                for (; t < tr.n && tr.items[t].event_id <= ev->id; t++)
                    trace_emit(&o, &tr, t);
            if (!o.placed[i])
                event_emit(&o, ev);
        }
        for (; t < tr.n; t++)
            trace_emit(&o, &tr, t);
        json_object_put(o.open_runs);
        json_object_put(o.last_run);
        json_object_put(o.redrivable);
        if (runs != NULL)
            *runs = o.runs;
        else
            json_object_put(o.runs);
        json_object_put(o.last);
        json_object_put(o.done);
        json_object_put(o.kids);
        json_object_put(o.open);
        free(o.placed);
        free(o.map_len);
        *out = o.events;
    }
    traces_free(&tr);
    swf_decider_replay_result_free(&result);
    return err;
}

/* The roleArn ExecutionStarted shows: the state machine's, as
 * DescribeStateMachine shows it (a default one for a machine registered
 * by `swf register`, or deleted since). */
static void role_get(swf_api_call_t *call, swf_history_store_t *s, const char *machine,
                     char role[SWF_API_ARN_BYTES])
{
    swf_history_catalog_entry_t e = {0};
    snprintf(role, SWF_API_ARN_BYTES, "arn:aws:iam::%s:role/swf", call->api->account);
    swf_error_t *err = swf_history_pg_state_machine_entry(s, machine, &e);
    if (err == NULL && e.role_arn != NULL && e.role_arn[0] != '\0')
        snprintf(role, SWF_API_ARN_BYTES, "%s", e.role_arn);
    swf_error_free(err);
    free(e.name);
    free(e.role_arn);
    free(e.type);
}

swf_error_t *swf_api__execution_derive(swf_api_call_t *call, const swf_history_execution_t *ex,
                                       bool data, json_object **events, json_object **runs)
{
    swf_history_store_t *s;
    swf_event_list_t list = {0};
    char role[SWF_API_ARN_BYTES], run_arn[SWF_API_ARN_BYTES + 1];
    swf_error_t *err = swf_api__store(call, &s);
    if (err == NULL)
        err = swf_history_load(s, ex->execution_id, 0, 0, &list);
    if (err == NULL) {
        role_get(call, s, ex->state_machine, role);
        swf_api__arn(call->api, "mapRun", ex->state_machine, NULL, run_arn);
        strcat(run_arn, "/");
        swf_api__derive_t d = {
            .data = data, .role = role, .run_arn = run_arn, .execution_id = ex->execution_id};
        err = swf_api__history_derive(&list, &d, events, runs);
    }
    swf_event_list_free(&list);
    return err;
}

swf_error_t *swf_api__execution_history(swf_api_call_t *call, json_object *in, json_object **out)
{
    int64_t max = 100;
    bool reverse = false, data = true;
    swf_error_t *err = swf_api__max_results(in, &max);
    if (err == NULL)
        err = swf_api__bool(in, "reverseOrder", &reverse);
    if (err == NULL)
        err = swf_api__bool(in, "includeExecutionData", &data);
    long from = 0;
    if (err == NULL)
        err = swf_api__page_token(in, SWF_LIMIT_HISTORY_EVENTS * 3L, &from);
    swf_history_execution_t ex;
    if (err == NULL)
        err = swf_api__execution_find(call, in, &ex);
    if (err != NULL)
        return err;
    json_object *all = NULL;
    err = swf_api__execution_derive(call, &ex, data, &all, NULL);
    swf_history_execution_free(&ex);
    if (err == NULL) {
        size_t total = json_object_array_length(all);
        json_object *page = json_object_new_array();
        size_t end = (size_t)from + (size_t)max < total ? (size_t)from + (size_t)max : total;
        for (size_t k = (size_t)from; k < end; k++) {
            size_t idx = reverse ? total - 1 - k : k;
            json_object_array_add(page, json_object_get(json_object_array_get_idx(all, idx)));
        }
        json_object_put(all);
        *out = json_object_new_object();
        swf_json_add(*out, "events", page);
        if (end < total) {
            char next[32];
            snprintf(next, sizeof(next), "%zu", end);
            swf_json_add(*out, "nextToken", json_object_new_string(next));
        }
    }
    return err;
}
