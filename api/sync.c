/*
 * sync.c - EXPRESS state machines and StartSyncExecution.
 *
 * swf runs an EXPRESS execution as it runs every other: an event-sourced
 * execution in PostgreSQL, replayable, that DescribeExecution and
 * GetExecutionHistory show (AWS keeps no history of an express execution;
 * api/README.md says so). What EXPRESS changes is what AWS changes at the
 * API: a definition with an activity, a `.sync` or a `.waitForTaskToken`
 * resource is refused at create and update (express_check), and
 * StartSyncExecution runs the execution and answers with its end.
 *
 * StartSyncExecution starts the execution as StartExecution does
 * (executions.c, the same idempotence by name) and then waits for its
 * close the way GetActivityTask waits for a task (poll.c): the connection
 * is suspended (libmicrohttpd's suspend/resume) and a slot joins the list
 * of waiters, so a waiter holds no thread. One thread of its own (the
 * watcher) asks PostgreSQL, every SYNC_TICK_MS, which of the executions
 * waited for have closed, in one query for all of them
 * (swf_history_pg_executions_closed), and resumes their connections; the
 * request's thread then describes the execution and answers. Why poll the
 * projection rather than listen for the close: the close is written by a
 * decider of any host, and the executions projection is the one place
 * every close reaches; a query a tick for up to max_sync_waiters
 * executions is cheap (an index lookup each).
 *
 * The wait is bounded (cfg.sync_s, AWS's 5 minutes by default): a waiter
 * whose time is up gets status TIMED_OUT, error States.Timeout, and the
 * execution is stopped (a signed terminate with that error), as AWS ends
 * an express execution at its 5 minutes. At most cfg.max_sync_waiters wait
 * at once: more is ThrottlingException (the SDKs retry it), answered
 * before anything is started.
 */
#include "api/internal.h"

#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "history/catalog.h"
#include "history/pg.h"
#include "protocol/json.h"
#include "protocol/time.h"

#define SYNC_TICK_MS 50

typedef struct slot {
    struct slot *next;
    struct MHD_Connection *conn;
    char arn[SWF_API_ARN_BYTES]; /* the execution's */
    char execution_id[SWF_API_NAME_BYTES + 1];
    int64_t deadline_ms;
    bool done;      /* resumed: closed, timed out or the server stops */
    bool timed_out; /* the wait's bound was reached */
    bool stopping;  /* the server stops */
} slot_t;

struct swf_api__syncs {
    swf_api_t *api;
    pthread_mutex_t lock;
    pthread_t thread;
    bool stop;
    slot_t *head;               /* waiting, in no order */
    int nwaiting;               /* in the list */
    int nreserved;              /* in the list or being started */
    int draining;               /* resumed by the stop, not yet answered */
    swf_history_store_t *store; /* the watcher's own */
};

size_t swf_api__sync_size(void)
{
    return sizeof(slot_t);
}

/* ---- EXPRESS definitions -------------------------------------------------------- */

/* Where an EXPRESS machine's definition uses what AWS runs in STANDARD
 * ones only, and what: the first one found. */
typedef struct express_problem {
    char where[640]; /* $.States.NAME...Resource */
    const char *why;
} express_problem_t;

static bool express_states(json_object *states, const char *where, express_problem_t *p);

/* The problem of one state (and the states inside it), if any. */
static bool express_state(const char *name, json_object *st, const char *where,
                          express_problem_t *p)
{
    char here[600];
    snprintf(here, sizeof(here), "%s.%s", where, name);
    const char *type = swf_json_get_string(st, "Type");
    const char *res = swf_json_get_string(st, "Resource");
    if (type != NULL && strcmp(type, "Task") == 0 && res != NULL) {
        size_t n = strlen(res);
        p->why = NULL;
        if (strstr(res, ":activity:") != NULL)
            p->why = "an activity";
        else if ((n > 5 && strcmp(res + n - 5, ".sync") == 0) || strstr(res, ".sync:") != NULL)
            p->why = "the '.sync' integration pattern";
        else if (n > 17 && strcmp(res + n - 17, ".waitForTaskToken") == 0)
            p->why = "the '.waitForTaskToken' integration pattern";
        if (p->why != NULL) {
            snprintf(p->where, sizeof(p->where), "%s.Resource", here);
            return true;
        }
    }
    json_object *branches = NULL, *proc = NULL, *sub = NULL;
    char b[640];
    if (json_object_object_get_ex(st, "Branches", &branches) &&
        json_object_is_type(branches, json_type_array))
        for (size_t i = 0; i < json_object_array_length(branches); i++) {
            snprintf(b, sizeof(b), "%s.Branches[%zu].States", here, i);
            if (json_object_object_get_ex(json_object_array_get_idx(branches, i), "States", &sub) &&
                express_states(sub, b, p))
                return true;
        }
    const char *procs[2] = {"ItemProcessor", "Iterator"};
    for (int i = 0; i < 2; i++)
        if (json_object_object_get_ex(st, procs[i], &proc) &&
            json_object_object_get_ex(proc, "States", &sub)) {
            snprintf(b, sizeof(b), "%s.%s.States", here, procs[i]);
            if (express_states(sub, b, p))
                return true;
        }
    return false;
}

static bool express_states(json_object *states, const char *where, express_problem_t *p)
{
    if (!json_object_is_type(states, json_type_object))
        return false; /* the validator has said so already */
    json_object_object_foreach(states, name, st)
    {
        if (express_state(name, st, where, p))
            return true;
    }
    return false;
}

static bool express_find(json_object *definition, express_problem_t *p)
{
    json_object *states = NULL;
    return json_object_object_get_ex(definition, "States", &states) &&
           express_states(states, "$.States", p);
}

swf_error_t *swf_api__express_check(json_object *definition)
{
    express_problem_t p;
    if (!express_find(definition, &p))
        return NULL;
    return swf_api__err("InvalidDefinition",
                        "Invalid State Machine Definition: %s: EXPRESS state machines do not "
                        "support %s",
                        p.where, p.why);
}

json_object *swf_api__express_diagnostic(json_object *definition)
{
    express_problem_t p;
    if (!express_find(definition, &p))
        return NULL;
    char msg[128];
    snprintf(msg, sizeof(msg), "EXPRESS state machines do not support %s", p.why);
    json_object *d = json_object_new_object();
    swf_json_add(d, "severity", json_object_new_string("ERROR"));
    swf_json_add(d, "code", json_object_new_string("SCHEMA_VALIDATION_FAILED"));
    swf_json_add(d, "message", json_object_new_string(msg));
    swf_json_add(d, "location", json_object_new_string(p.where));
    return d;
}

swf_error_t *swf_api__machine_type(json_object *in, const char **type)
{
    swf_error_t *err = swf_api__str(in, "type", false, 16, type);
    if (err == NULL && *type != NULL && strcmp(*type, "STANDARD") != 0 &&
        strcmp(*type, "EXPRESS") != 0)
        err = swf_api__err("ValidationException",
                           "1 validation error detected: Value '%s' at 'type' failed to satisfy "
                           "constraint: Member must satisfy enum value set: [STANDARD, EXPRESS]",
                           *type);
    return err;
}

/* ---- the watcher ---------------------------------------------------------------- */

/* Takes s out of the list and resumes its connection; the lock is held. */
static void slot_finish(swf_api__syncs_t *w, slot_t *s)
{
    for (slot_t **p = &w->head; *p != NULL; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            break;
        }
    w->nwaiting--;
    w->nreserved--;
    s->done = true;
    MHD_resume_connection(s->conn);
}

/* One tick: the waiters whose time is up, then the executions closed. */
static void watch_tick(swf_api__syncs_t *w)
{
    swf_api_t *api = w->api;
    if (w->store == NULL) {
        swf_error_t *err = swf_history_pg_new(api->conninfo, &w->store);
        if (err != NULL) {
            w->store = NULL;
            swf_error_free(err);
            return; /* the next tick tries again; the waiters time out meanwhile */
        }
    }
    int64_t now = swf_time_now_ms();
    pthread_mutex_lock(&w->lock);
    for (slot_t *s = w->head, *next; s != NULL; s = next) {
        next = s->next;
        if (s->deadline_ms <= now) {
            s->timed_out = true;
            slot_finish(w, s);
        }
    }
    size_t n = (size_t)w->nwaiting;
    slot_t **slots = n ? malloc(n * sizeof(*slots)) : NULL;
    const char **ids = n ? malloc(n * sizeof(*ids)) : NULL;
    bool *closed = n ? malloc(n * sizeof(*closed)) : NULL;
    if (n > 0 && (slots == NULL || ids == NULL || closed == NULL))
        abort();
    size_t i = 0;
    for (slot_t *s = w->head; s != NULL; s = s->next, i++) {
        slots[i] = s;
        ids[i] = s->execution_id; /* stays: only this thread takes slots out */
    }
    pthread_mutex_unlock(&w->lock);
    swf_error_t *err = swf_history_pg_executions_closed(w->store, ids, n, closed);
    if (err != NULL) {
        if (api->cfg.log != NULL)
            fprintf(api->cfg.log, "swf-api: StartSyncExecution waiters: %s\n",
                    swf_error_message(err));
        swf_error_free(err);
    } else {
        pthread_mutex_lock(&w->lock);
        for (i = 0; i < n; i++)
            if (closed[i])
                slot_finish(w, slots[i]);
        pthread_mutex_unlock(&w->lock);
    }
    free(slots);
    free(ids);
    free(closed);
}

static void *watch_main(void *arg)
{
    swf_api__syncs_t *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->lock);
        bool stop = w->stop, any = w->nwaiting > 0;
        pthread_mutex_unlock(&w->lock);
        if (stop)
            break;
        if (any)
            watch_tick(w);
        usleep(SYNC_TICK_MS * 1000);
    }
    return NULL;
}

swf_error_t *swf_api__sync_start(swf_api_t *api)
{
    if (api->cfg.sync_s <= 0 || api->cfg.sync_s > SWF_API_SYNC_S)
        api->cfg.sync_s = SWF_API_SYNC_S;
    if (api->cfg.max_sync_waiters <= 0)
        api->cfg.max_sync_waiters = 1000;
    swf_api__syncs_t *w = calloc(1, sizeof(*w));
    if (w == NULL)
        abort();
    w->api = api;
    pthread_mutex_init(&w->lock, NULL);
    if (pthread_create(&w->thread, NULL, watch_main, w) != 0) {
        pthread_mutex_destroy(&w->lock);
        free(w);
        return swf_error_new(SWF_E_INTERNAL, NULL, "cannot start the StartSyncExecution thread");
    }
    api->syncs = w;
    return NULL;
}

void swf_api__sync_stop(swf_api_t *api)
{
    swf_api__syncs_t *w = api->syncs;
    if (w == NULL)
        return;
    pthread_mutex_lock(&w->lock);
    w->stop = true;
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_mutex_lock(&w->lock);
    while (w->head != NULL) {
        w->head->stopping = true;
        w->draining++;
        slot_finish(w, w->head);
    }
    pthread_mutex_unlock(&w->lock);
    /* A resumed connection is taken up by its thread a moment later, and
     * libmicrohttpd must not stop with one still suspended, nor before
     * the answer is sent: wait until each request completed
     * (swf_api__sync_clear), a bounded time. */
    swf_api__drain_wait(&w->lock, &w->draining);
}

void swf_api__sync_free(swf_api_t *api)
{
    swf_api__syncs_t *w = api->syncs;
    if (w == NULL)
        return;
    swf_history_store_free(w->store);
    pthread_mutex_destroy(&w->lock);
    free(w);
    api->syncs = NULL;
}

/* A waiter's answer when the server stops before its execution closed. */
static swf_error_t *stopping(void)
{
    return swf_api__err("ServiceUnavailable",
                        "the server is stopping; StartSyncExecution again with the same name and "
                        "input waits for the same execution");
}

/* ---- StartSyncExecution ----------------------------------------------------------- */

swf_error_t *swf_api__execution_start_sync(swf_api_call_t *call, json_object *in, json_object **out)
{
    char machine[SWF_API_NAME_BYTES + 1], name[SWF_API_NAME_BYTES + 1];
    int version = 0;
    swf_error_t *err = swf_api__machine_arn(call, in, "stateMachineArn", machine, &version);
    swf_history_store_t *s = NULL;
    if (err == NULL)
        err = swf_api__store(call, &s);
    swf_history_catalog_entry_t e = {0};
    if (err == NULL)
        err = swf_history_pg_state_machine_entry(s, machine, &e);
    if (err != NULL && swf_error_code(err) == SWF_E_NOTFOUND) {
        swf_error_free(err);
        char arn[SWF_API_ARN_BYTES];
        swf_api__arn(call->api, "stateMachine", machine, NULL, arn);
        return swf_api__err("StateMachineDoesNotExist", "State Machine Does Not Exist: '%s'", arn);
    }
    bool express = err == NULL && e.type != NULL && strcmp(e.type, "EXPRESS") == 0;
    free(e.name);
    free(e.role_arn);
    free(e.type);
    if (err == NULL && !express)
        err = swf_api__err("StateMachineTypeNotSupported",
                           "This operation is not supported by this type of state machine: %s is "
                           "STANDARD (StartSyncExecution runs EXPRESS state machines)",
                           machine);
    if (err != NULL)
        return err;
    swf_api__syncs_t *w = call->api->syncs;
    pthread_mutex_lock(&w->lock);
    bool full = w->nreserved >= call->api->cfg.max_sync_waiters;
    if (!full)
        w->nreserved++;
    pthread_mutex_unlock(&w->lock);
    if (full)
        return swf_api__err("ThrottlingException",
                            "Rate exceeded: more than %d StartSyncExecution calls are waiting",
                            call->api->cfg.max_sync_waiters);
    json_object *started = NULL;
    err = swf_api__execution_start(call, in, &started);
    const char *arn = err == NULL ? swf_json_get_string(started, "executionArn") : NULL;
    if (err == NULL)
        err = swf_api__arn_parse(arn, "execution", machine, name);
    if (err != NULL) {
        json_object_put(started);
        pthread_mutex_lock(&w->lock);
        w->nreserved--;
        pthread_mutex_unlock(&w->lock);
        return err;
    }
    slot_t *slot = call->sync;
    memset(slot, 0, sizeof(*slot));
    slot->conn = call->conn;
    snprintf(slot->arn, sizeof(slot->arn), "%s", arn);
    snprintf(slot->execution_id, sizeof(slot->execution_id), "%s", name);
    slot->deadline_ms = swf_time_now_ms() + (int64_t)call->api->cfg.sync_s * 1000;
    json_object_put(started);
    pthread_mutex_lock(&w->lock);
    if (w->stop) {
        /* Started as the server stops: no wait to begin. */
        w->nreserved--;
        pthread_mutex_unlock(&w->lock);
        return stopping();
    }
    slot->next = w->head;
    w->head = slot;
    w->nwaiting++;
    MHD_suspend_connection(call->conn);
    pthread_mutex_unlock(&w->lock);
    *out = NULL;
    return NULL;
}

/* The answer of a waiter whose wait ended: the execution described, in
 * StartSyncExecution's shape. */
static swf_error_t *sync_answer(swf_api_call_t *call, slot_t *slot, json_object **out)
{
    json_object *in = json_object_new_object();
    swf_json_add(in, "executionArn", json_object_new_string(slot->arn));
    char cause[128];
    if (slot->timed_out) {
        snprintf(cause, sizeof(cause),
                 "the execution did not end within the %d s of StartSyncExecution",
                 call->api->cfg.sync_s);
        swf_json_add(in, "error", json_object_new_string("States.Timeout"));
        swf_json_add(in, "cause", json_object_new_string(cause));
        json_object *stopped = NULL;
        swf_error_free(swf_api__execution_stop(call, in, &stopped));
        json_object_put(stopped);
    }
    json_object *o = NULL;
    swf_error_t *err = swf_api__execution_describe(call, in, &o);
    json_object_put(in);
    if (err != NULL)
        return err;
    const char *status = swf_json_get_string(o, "status");
    if (slot->timed_out) {
        json_object_object_del(o, "output");
        json_object_object_del(o, "outputDetails");
        json_object_object_del(o, "error");
        json_object_object_del(o, "cause");
        json_object_object_add(o, "status", json_object_new_string("TIMED_OUT"));
        swf_json_add(o, "error", json_object_new_string("States.Timeout"));
        swf_json_add(o, "cause", json_object_new_string(cause));
        if (!json_object_object_get_ex(o, "stopDate", NULL))
            swf_json_add(o, "stopDate", swf_api__time(swf_time_now_ms()));
    } else if (status != NULL && strcmp(status, "RUNNING") == 0) {
        /* The server stops before the execution closed. */
        json_object_put(o);
        return stopping();
    } else if (status != NULL && strcmp(status, "ABORTED") == 0) {
        json_object_object_add(o, "status", json_object_new_string("FAILED"));
    }
    json_object *stop = NULL, *start = NULL;
    swf_json_get(o, "stopDate", &stop);
    swf_json_get(o, "startDate", &start);
    double ms = (json_object_get_double(stop) - json_object_get_double(start)) * 1000.0;
    int64_t billed = ms <= 0 ? 100 : ((int64_t)ms + 99) / 100 * 100;
    json_object *bill = json_object_new_object();
    swf_json_add(bill, "billedMemoryUsedInMB", json_object_new_int64(64));
    swf_json_add(bill, "billedDurationInMilliseconds", json_object_new_int64(billed));
    swf_json_add(o, "billingDetails", bill);
    *out = o;
    return NULL;
}

bool swf_api__sync_done(swf_api_call_t *call, json_object **out, swf_error_t **err)
{
    slot_t *slot = call->sync;
    if (!slot->done)
        return false;
    slot->done = false;
    *out = NULL;
    if (slot->stopping)
        *err = stopping();
    else
        *err = sync_answer(call, slot, out);
    return true;
}

void swf_api__sync_clear(swf_api_t *api, void *sync)
{
    slot_t *slot = sync;
    swf_api__syncs_t *w = api->syncs;
    if (!slot->stopping || w == NULL)
        return;
    slot->stopping = false;
    pthread_mutex_lock(&w->lock);
    w->draining--;
    pthread_mutex_unlock(&w->lock);
}
