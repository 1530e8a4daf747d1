/*
 * daemon.c - the decider daemon: inbox batches in, one transaction of
 * events out, then activity tasks, then offsets.
 *
 * The order of effects is the whole design. (1) Events for every execution
 * of a batch are appended in one swf_history_pg_batch_append (group commit:
 * one fsync for hundreds of executions). (2) The ActivityTaskScheduled
 * events of that transaction - which the store also wrote to the outbox -
 * are safe from then on, so (2) the inbox offsets are committed, and (3) a
 * publisher thread publishes the tasks to their task topics and deletes
 * their outbox rows once Kafka acknowledged them (those of 50 ms in one
 * statement, see OUTBOX_DELETE_MS). A crash between any two
 * steps loses nothing: before (1) the messages are delivered again; between
 * (1) and (2) they are delivered again and change nothing (the history
 * already reflects them: answers name activities no longer open, "decide"
 * finds no decision due); swf-history republishes the outbox rows a crash
 * left before or during (3). The commit of (2) is asynchronous for that
 * reason, and so is the outbox delete's (a row a crash brings back is only
 * published again). Consecutive batches overlap (see "the pipeline"
 * below): the next is decided during the append, and published after it.
 *
 * Messages become incoming events here; the decision tasks they wake are
 * built by decider/decision.c, the same code that `swf run --local` uses
 * (cancelled activities closed at once, a new decision task after them).
 *
 * Events are applied to the cached state as they are built, so the
 * interpreter sees them before the append; if the append loses a race
 * (another decider, after a rebalance, wrote first) that state is thrown
 * away and the execution is reloaded and redone - the optimistic check is
 * what makes "any number of deciders" safe.
 */
#include "decider/daemon.h"

#include <assert.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "decider/cache.h"
#include "decider/decision.h"
#include "history/catalog.h"
#include "decider/nested.h"
#include "history/pg.h"
#include "history/service.h"
#include "protocol/alloc.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/log.h"
#include "protocol/message.h"
#include "protocol/time.h"
#include "protocol/token.h"

/* Decision tasks one execution may take within one batch (cancellations
 * chain at most a few). */
#define DECISIONS_PER_BATCH 16
/* Rounds of reload-and-redo after lost races, per batch. */
#define CONFLICT_ROUNDS 8

struct swf_decider {
    swf_decider_config_t cfg;
    char identity[96];
    char group[128];
    swf_history_store_t *store;        /* loads, and the rounds after a lost race */
    swf_history_store_t *commit_store; /* the committer's: appends of the batch in flight */
    /* The publisher's: deletes of the outbox rows it published, sent
     * without waiting (the next delete, or the end of the run, collects
     * each). Its commits do not wait for the disk (a row a crash brings
     * back is only published again). */
    swf_history_store_t *outbox;
    rd_kafka_t *consumer;
    rd_kafka_t *producer;
    swf_kafka_poster_t *poster;
    swf_decider_cache_t *cache;
    volatile sig_atomic_t stop;
    uint64_t revokes; /* partition revokes so far (the decider's thread only) */
    swf_decider_stats_t stats;
    int backoff_ms; /* the pause before a failed batch is retried */
    /* The pipeline (see "the pipeline" below): the batch the committer
     * thread appends, whether it is done, and the stop. */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct batch *flight;
    bool flight_done, committer_stop;
    /* The publisher (see "the publisher" below): its queue, under lock. */
    pthread_cond_t pub_cond;
    struct publication *pub_head, *pub_tail;
    size_t pub_queued;
    bool publisher_stop;
};

/* The work of one execution within a batch. */
typedef struct work {
    const char *id; /* borrowed from its first message */
    int32_t partition;
    swf_msg_t **msgs;
    size_t nmsgs, capmsgs;
    swf_decider_state_t *st;
    swf_event_list_t events;    /* to append */
    int64_t next_id;            /* the id of events.items[0] */
    swf_decider_decision_t dec; /* builds them (decider/decision.h) */
    bool cached;                /* decided this round on a cached state */
    bool failed;                /* dropped for this batch (logged) */
    bool appended;              /* its events are in the history */
    bool published;             /* and its activity tasks went to Kafka */
    json_object *stops;         /* children to stop once appended (nested_stops), or NULL */
} work_t;

static bool flight_end(swf_decider_t *d, int timeout_ms);

static void logf_(swf_decider_t *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(swf_decider_t *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    swf_log_vwrite(d->cfg.log, "swf-decider", fmt, ap);
    va_end(ap);
}

static void stat_add(uint64_t *counter, uint64_t n)
{
    __atomic_add_fetch(counter, n, __ATOMIC_RELAXED);
}

static int64_t mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t mono_ms(void)
{
    return mono_us() / 1000;
}

/* Adds the time since *since to a counter and restarts the clock. */
static void stat_time(uint64_t *counter, int64_t *since)
{
    int64_t now = mono_us();
    stat_add(counter, (uint64_t)(now - *since));
    *since = now;
}

void swf_decider_config_env(swf_decider_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->conninfo = swf_history_pg_conninfo_env();
    swf_kafka_names_env(&cfg->kafka);
    cfg->secret = swf_token_secret_env();
    cfg->group = "swf-deciders";
    const char *v = getenv("SWF_DECIDER_CACHE");
    long n = v ? atol(v) : 0;
    cfg->cache_max = n > 0 && n <= 10000000 ? (size_t)n : 10000;
    v = getenv("SWF_DECIDER_BATCH");
    n = v ? atol(v) : 0;
    cfg->batch_max = n > 0 && n <= 100000 ? (size_t)n : 500;
    cfg->batch_wait_ms = 0;
    v = getenv("SWF_DEV_TIME_SKIP");
    cfg->time_skip = v != NULL && atoi(v) != 0;
    cfg->log = stderr;
}

/* ---- rebalances ----------------------------------------------------------- */

/* With Kafka's cooperative assignors (which a properties file may
 * choose), the group hands over only the partitions that move: they are
 * then added and taken away one list at a time, not assigned whole. */
static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t code,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    swf_decider_t *d = opaque;
    bool incremental = swf_kafka_rebalance_incremental(rk);
    swf_error_t *err = NULL;
    if (code == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        err = swf_kafka_rebalance_apply(rk, code, parts);
        uint64_t held = (uint64_t)parts->cnt;
        if (incremental)
            held += __atomic_load_n(&d->stats.partitions, __ATOMIC_RELAXED);
        __atomic_store_n(&d->stats.partitions, held, __ATOMIC_RELAXED);
        logf_(d, "assigned %d inbox partitions", parts->cnt);
    } else {
        /* The batch in flight ends first: its offsets are committed while
         * the partitions are still ours, and its states go into the cache,
         * to be dropped below with the others. */
        flight_end(d, -1);
        d->revokes++;
        /* Another decider owns these executions now: their cached states
         * would only go stale (they stay correct, as loads continue from
         * the cached id, but they take memory for nothing). */
        size_t dropped = 0;
        for (int i = 0; i < parts->cnt; i++)
            dropped += swf_decider_cache_drop_partition(d->cache, parts->elems[i].partition);
        uint64_t held = __atomic_load_n(&d->stats.partitions, __ATOMIC_RELAXED);
        err = swf_kafka_rebalance_apply(rk, code, parts);
        if (code == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS && incremental)
            held = held > (uint64_t)parts->cnt ? held - (uint64_t)parts->cnt : 0;
        else
            held = 0;
        __atomic_store_n(&d->stats.partitions, held, __ATOMIC_RELAXED);
        logf_(d, "revoked %d inbox partitions, dropped %zu cached executions", parts->cnt, dropped);
    }
    if (err != NULL) {
        logf_(d, "%s", swf_error_message(err));
        swf_error_free(err);
    }
}

/* ---- building events ------------------------------------------------------ */

static swf_error_t *work_add(work_t *w, swf_event_type_t type, json_object *attrs)
{
    return swf_decider_decision_add(&w->dec, type, attrs);
}

static int64_t last_id(const work_t *w)
{
    return swf_decider_decision_next_id(&w->dec) - 1;
}

static json_object *obj(void)
{
    return json_object_new_object();
}

/* The open activity an answer names, or NULL (then the answer is late or a
 * duplicate). *sched gets its ActivityTaskScheduled id. */
static json_object *open_activity(work_t *w, const char *activity_id, int64_t *sched)
{
    json_object *a, *v;
    if (activity_id == NULL || !swf_json_get(w->st->activities, activity_id, &a))
        return NULL;
    *sched = swf_json_get(a, "s", &v) ? json_object_get_int64(v) : 0;
    return a;
}

/* The ActivityTaskStarted id of an open activity, 0 before its start. */
static int64_t started_id(json_object *act)
{
    json_object *v;
    return swf_json_get(act, "st", &v) ? json_object_get_int64(v) : 0;
}

/* Records ActivityTaskStarted for the open activity scheduled at `sched`,
 * with the worker's identity. */
static swf_error_t *started_add(work_t *w, int64_t sched, const char *identity)
{
    json_object *a = obj();
    swf_json_add(a, "scheduledEventId", json_object_new_int64(sched));
    swf_json_add(a, "identity", json_object_new_string(identity ? identity : ""));
    return work_add(w, SWF_EVENT_ACTIVITY_TASK_STARTED, a);
}

/* Records the answer of a nested Task (decider/nested.h): its start, then
 * a result or a failure. */
static swf_error_t *nested_record(work_t *w, int64_t sched, json_object *act,
                                  const swf_nested_answer_t *ans, bool *wake)
{
    char identity[128];
    snprintf(identity, sizeof(identity), "%s%s", SWF_NESTED_IDENTITY, ans->child_id);
    int64_t started = started_id(act);
    swf_error_t *err = NULL;
    if (started == 0) {
        err = started_add(w, sched, identity);
        started = last_id(w);
    }
    if (err != NULL || (ans->result == NULL && ans->error == NULL))
        return err;
    json_object *a = obj();
    swf_json_add(a, "scheduledEventId", json_object_new_int64(sched));
    swf_json_add(a, "startedEventId", json_object_new_int64(started));
    *wake = true;
    if (ans->error != NULL) {
        swf_json_add(a, "reason", json_object_new_string(ans->error));
        swf_json_add(a, "details", json_object_new_string(ans->cause ? ans->cause : ""));
        return work_add(w, SWF_EVENT_ACTIVITY_TASK_FAILED, a);
    }
    swf_json_add(a, "result", swf_json_ref(ans->result));
    return work_add(w, SWF_EVENT_ACTIVITY_TASK_COMPLETED, a);
}

/* nested.start and nested.closed (decider/nested.h): the child started
 * (once: a start already recorded changes nothing), or the answer of the
 * child that closed. Both read the Task's ActivityTaskScheduled from the
 * store, and the start writes the child there, on this thread: a child
 * started by a batch whose append is then lost is found again, by its
 * name, when the batch is redone. False when the message changes nothing
 * (the Task is no longer open, or already started). */
static bool nested_apply(swf_decider_t *d, work_t *w, const swf_msg_t *m, bool *wake,
                         swf_error_t **err)
{
    char key[32];
    snprintf(key, sizeof(key), "%lld", (long long)m->scheduled_event_id);
    const char *aid = swf_json_get_string(w->st->scheduled, key);
    int64_t sched = 0;
    json_object *act = aid != NULL ? open_activity(w, aid, &sched) : NULL;
    if (act == NULL || (m->type == SWF_MSG_NESTED_START && started_id(act) != 0))
        return false;
    swf_event_list_t ev = {0};
    swf_nested_answer_t ans = {0};
    *err = swf_history_load(d->store, w->id, sched - 1, 1, &ev);
    if (*err == NULL && (ev.count != 1 || ev.items[0].type != SWF_EVENT_ACTIVITY_TASK_SCHEDULED))
        *err = swf_error_new(SWF_E_INTERNAL, NULL, "execution %s: event %lld is no activity", w->id,
                             (long long)sched);
    if (*err == NULL && m->type == SWF_MSG_NESTED_START) {
        *err = swf_nested_child_start(d->store, w->id, w->st->nested_depth, w->st->task_list_prefix,
                                      &ev.items[0], w->dec.now_ms, &ans);
        if (*err == NULL && ans.error == NULL) {
            /* The child's first decision task; a "decide" lost here is
             * posted again by swf-history's sweep. */
            json_object *doc = swf_msg_decide_new(d->cfg.secret, ans.child_id);
            const char *text = swf_json_str(doc);
            swf_history_post_t post = {d->cfg.kafka.inbox, ans.child_id, text, strlen(text), false};
            swf_error_t *perr = swf_kafka_poster_send(d->poster, &post, 1);
            if (perr != NULL) {
                logf_(d, "nested execution %s: decide: %s (swf-history's sweep will post it)",
                      ans.child_id, swf_error_message(perr));
                swf_error_free(perr);
            }
            json_object_put(doc);
        }
    } else if (*err == NULL) {
        *err = swf_nested_child_answer(d->store, w->id, &ev.items[0], &ans);
        if (*err == NULL && ans.result == NULL && ans.error == NULL) {
            swf_event_list_free(&ev);
            return false; /* still running, or not this Task's child */
        }
    }
    if (*err == NULL)
        *err = nested_record(w, sched, act, &ans, wake);
    swf_nested_answer_clear(&ans);
    swf_event_list_free(&ev);
    return true;
}

/* Turns one message into events. *wake says whether a decision is due. */
static swf_error_t *message_apply(swf_decider_t *d, work_t *w, const swf_msg_t *m, bool *wake)
{
    int64_t now = w->dec.now_ms;
    int64_t sched = 0;
    json_object *a, *v;
    swf_error_t *err = NULL;
    switch (m->type) {
    case SWF_MSG_DECIDE:
        /* "Decide" asks for the decision task that is scheduled (by a start,
         * or left for later by a batch); the caller runs it. With none
         * scheduled, everything in the history was decided already: a
         * duplicate or late "decide" (the sweep's, one delivered again after
         * a crash) changes nothing. Waking here appended an empty decision
         * task for each of them. */
        return NULL;
    case SWF_MSG_ACTIVITY_COMPLETED:
    case SWF_MSG_ACTIVITY_FAILED: {
        json_object *act = open_activity(w, m->activity_id, &sched);
        if (act == NULL)
            goto ignored;
        /* Started already (activity.started), or now: workers that do not
         * send activity.started get the start recorded with the answer. */
        int64_t started = started_id(act);
        if (started == 0) {
            err = started_add(w, sched, m->identity);
            if (err != NULL)
                return err;
            started = last_id(w);
        }
        a = obj();
        swf_json_add(a, "scheduledEventId", json_object_new_int64(sched));
        swf_json_add(a, "startedEventId", json_object_new_int64(started));
        if (m->type == SWF_MSG_ACTIVITY_COMPLETED) {
            swf_json_add(a, "result", swf_json_ref(m->result));
            err = work_add(w, SWF_EVENT_ACTIVITY_TASK_COMPLETED, a);
        } else {
            swf_json_add(a, "reason", json_object_new_string(m->error));
            swf_json_add(a, "details", json_object_new_string(m->cause ? m->cause : ""));
            err = work_add(w, SWF_EVENT_ACTIVITY_TASK_FAILED, a);
        }
        *wake = true;
        return err;
    }
    case SWF_MSG_ACTIVITY_STARTED: {
        /* A worker took the task. Delivered again, or after the answer
         * (the activity is closed then), it changes nothing. */
        json_object *act = open_activity(w, m->activity_id, &sched);
        if (act == NULL || started_id(act) != 0)
            goto ignored;
        return started_add(w, sched, m->identity);
    }
    case SWF_MSG_ACTIVITY_HEARTBEAT: {
        json_object *act = open_activity(w, m->activity_id, &sched);
        if (act == NULL)
            goto ignored;
        /* At most one recorded heartbeat per half heartbeat period (a
         * minute without one), so chatty workers do not grow the history;
         * half, so swf-history always sees one recent enough. */
        double h = swf_json_get(act, "h", &v) ? json_object_get_double(v) : 0;
        int64_t last = swf_json_get(act, "t", &v) ? json_object_get_int64(v) : 0;
        int64_t period_ms = h > 0 ? (int64_t)(h * 500.0) : 60000;
        if (last > 0 && now - last < period_ms)
            return NULL;
        a = obj();
        swf_json_add(a, "scheduledEventId", json_object_new_int64(sched));
        swf_json_add(a, "details", m->has_details ? swf_json_ref(m->details) : NULL);
        return work_add(w, SWF_EVENT_ACTIVITY_TASK_HEARTBEAT_RECORDED, a);
    }
    case SWF_MSG_ACTIVITY_TIMED_OUT: {
        char key[32];
        snprintf(key, sizeof(key), "%lld", (long long)m->scheduled_event_id);
        if (swf_json_get_string(w->st->scheduled, key) == NULL)
            goto ignored;
        a = obj();
        swf_json_add(a, "scheduledEventId", json_object_new_int64(m->scheduled_event_id));
        swf_json_add(a, "startedEventId", json_object_new_int64(0));
        swf_json_add(a, "timeoutType", json_object_new_string(m->timeout_type));
        swf_json_add(a, "details",
                     json_object_new_string(strcmp(m->timeout_type, "HEARTBEAT") == 0
                                                ? "the task sent no heartbeat in time"
                                                : "the task did not finish in time"));
        *wake = true;
        return work_add(w, SWF_EVENT_ACTIVITY_TASK_TIMED_OUT, a);
    }
    case SWF_MSG_TIMER_FIRED:
        if (!swf_json_get(w->st->timers, m->timer_id, &v) ||
            json_object_get_int64(v) != m->started_event_id)
            goto ignored;
        a = obj();
        swf_json_add(a, "timerId", json_object_new_string(m->timer_id));
        swf_json_add(a, "startedEventId", json_object_new_int64(m->started_event_id));
        *wake = true;
        return work_add(w, SWF_EVENT_TIMER_FIRED, a);
    case SWF_MSG_EXECUTION_TIMED_OUT:
        a = obj();
        swf_json_add(a, "timeoutType", json_object_new_string("START_TO_CLOSE"));
        return work_add(w, SWF_EVENT_WORKFLOW_EXECUTION_TIMED_OUT, a);
    case SWF_MSG_SIGNAL:
        if (m->request_id != NULL && swf_json_get(w->st->requests, m->request_id, &v))
            goto ignored; /* delivered again */
        a = obj();
        swf_json_add(a, "signalName", json_object_new_string(m->signal_name));
        swf_json_add(a, "input", swf_json_ref(m->input));
        if (m->request_id != NULL)
            swf_json_add(a, "requestId", json_object_new_string(m->request_id));
        *wake = true;
        return work_add(w, SWF_EVENT_WORKFLOW_EXECUTION_SIGNALED, a);
    case SWF_MSG_CANCEL:
        if (m->request_id != NULL && swf_json_get(w->st->requests, m->request_id, &v))
            goto ignored;
        a = obj();
        if (m->cause != NULL)
            swf_json_add(a, "cause", json_object_new_string(m->cause));
        if (m->request_id != NULL)
            swf_json_add(a, "requestId", json_object_new_string(m->request_id));
        *wake = true;
        return work_add(w, SWF_EVENT_WORKFLOW_EXECUTION_CANCEL_REQUESTED, a);
    case SWF_MSG_TERMINATE:
        a = obj();
        swf_json_add(a, "reason", json_object_new_string(m->reason ? m->reason : ""));
        swf_json_add(a, "details",
                     m->has_details ? swf_json_ref(m->details) : json_object_new_string(""));
        return work_add(w, SWF_EVENT_WORKFLOW_EXECUTION_TERMINATED, a);
    case SWF_MSG_REDRIVE:
        /* Once: the count it brings must be the next one (a message
         * delivered again, or a second redrive, finds it taken). */
        if (swf_asl_exec_not_redrivable(w->st->exec) != NULL ||
            m->redrive_count != swf_asl_exec_redrive_count(w->st->exec) + 1)
            goto ignored;
        /* At most one open execution per workflow id: a redrive does not
         * open a second one (swf redrive and RedriveExecution say so first). */
        char *other = NULL;
        err = swf_history_pg_workflow_taken(d->store, w->id, &other);
        if (err != NULL)
            return err;
        if (other != NULL) {
            logf_(d, "execution %s: not redriven, its workflow id is running as %s", w->id, other);
            free(other);
            goto ignored;
        }
        a = obj();
        swf_json_add(a, "redriveCount", json_object_new_int64(m->redrive_count));
        *wake = true;
        return work_add(w, SWF_EVENT_WORKFLOW_EXECUTION_REDRIVEN, a);
    case SWF_MSG_NESTED_START:
    case SWF_MSG_NESTED_CLOSED:
        if (nested_apply(d, w, m, wake, &err))
            return err;
        break;
    case SWF_MSG_NONE:
    case SWF_MSG_ACTIVITY_TASK:
        break;
    }
ignored:
    stat_add(&d->stats.ignored, 1);
    logf_(d,
          "execution %s: %s for %s%s changes nothing (already answered or recorded, closed, or "
          "unknown)",
          w->id, swf_msg_type_name(m->type), m->activity_id ? "activity " : "",
          m->activity_id ? m->activity_id : (m->timer_id ? m->timer_id : "it"));
    return NULL;
}

/* The .sync/.sync:2 children the events built stop (decider/nested.h):
 * the child of a nested Task that timed out or was cancelled, and every
 * running child of an execution that closed. Taken from the state on the
 * decider's thread; stopped by the publisher, once the events are in the
 * history. Best effort, as on AWS: a terminate that is lost leaves the
 * child running, and `swf terminate` stops it. */
static void nested_stops(work_t *w)
{
    json_object *nested = w->st->nested, *v;
    if (nested == NULL || json_object_object_length(nested) == 0)
        return;
    for (size_t i = 0; i < w->events.count; i++) {
        const swf_event_t *ev = &w->events.items[i];
        char key[32];
        if ((ev->type == SWF_EVENT_ACTIVITY_TASK_TIMED_OUT ||
             ev->type == SWF_EVENT_ACTIVITY_TASK_CANCELED) &&
            swf_json_get(ev->attrs, "scheduledEventId", &v)) {
            snprintf(key, sizeof(key), "%lld", (long long)json_object_get_int64(v));
            const char *child = swf_json_get_string(nested, key);
            if (child != NULL && child[0] != '\0') {
                if (w->stops == NULL)
                    w->stops = json_object_new_array();
                json_object_array_add(w->stops, json_object_new_string(child));
            }
            json_object_object_del(nested, key);
        } else if (swf_event_type_is_close(ev->type)) {
            json_object_object_foreach(nested, k, c)
            {
                (void)k;
                const char *child = json_object_get_string(c);
                if (child[0] == '\0')
                    continue;
                if (w->stops == NULL)
                    w->stops = json_object_new_array();
                json_object_array_add(w->stops, json_object_new_string(child));
            }
        }
    }
}

/* Gives the work its state, the cached one (true) or an empty one to load
 * the history into (false), and clears what an earlier round built. */
static bool work_state(swf_decider_t *d, work_t *w)
{
    swf_event_list_clear(&w->events);
    json_object_put(w->stops);
    w->stops = NULL;
    if (w->st == NULL) {
        w->st = swf_decider_cache_take(d->cache, w->id);
        if (w->st != NULL)
            return true;
        w->st = swf_decider_state_new(d->cfg.secret);
    }
    return false;
}

/* Applies the events loaded after the state's position, then the
 * execution's messages, and runs its decision tasks. The events to append
 * end in w->events. */
static swf_error_t *work_prepare(swf_decider_t *d, work_t *w, const swf_event_list_t *loaded)
{
    swf_error_t *err = NULL;
    for (size_t i = 0; err == NULL && i < loaded->count; i++) {
        if (swf_decider_cache_share_definition(d->cache, &loaded->items[i]))
            swf_asl_exec_set_trusted(w->st->exec, true); /* validated when first met */
        err = swf_decider_state_apply(w->st, &loaded->items[i]);
    }
    if (err != NULL)
        return err;
    w->next_id = swf_asl_exec_last_event_id(w->st->exec) + 1;
    bool redrive = false; /* a closed execution hears only of a redrive */
    for (size_t i = 0; i < w->nmsgs; i++)
        redrive = redrive || w->msgs[i]->type == SWF_MSG_REDRIVE;
    if (swf_asl_exec_status(w->st->exec) != SWF_ASL_RUNNING && !redrive) {
        for (size_t i = 0; i < w->nmsgs; i++) {
            if (w->msgs[i]->type != SWF_MSG_DECIDE)
                stat_add(&d->stats.ignored, 1);
        }
        return NULL;
    }
    int64_t wall_ms = swf_time_now_ms();
    swf_decider_decision_init(&w->dec, w->st, &w->events, wall_ms, d->identity);
    if (d->cfg.time_skip)
        swf_decider_decision_skip(&w->dec, wall_ms);
    bool wake = false;
    for (size_t i = 0; err == NULL && i < w->nmsgs; i++) {
        if (swf_asl_exec_status(w->st->exec) == SWF_ASL_RUNNING ||
            w->msgs[i]->type == SWF_MSG_REDRIVE)
            err = message_apply(d, w, w->msgs[i], &wake);
    }
    /* Past DECISIONS_PER_BATCH tasks, the rest waits for the next "decide"
     * or the sweep. */
    if (err == NULL)
        err = swf_decider_decision_run(&w->dec, wake, DECISIONS_PER_BATCH);
    if (err == NULL)
        nested_stops(w);
    stat_add(&d->stats.decision_tasks, (uint64_t)w->dec.tasks);
    return err;
}

/* ---- a batch -------------------------------------------------------------- */

typedef struct batch {
    rd_kafka_message_t **km; /* the inbox messages, owned */
    size_t nkm;
    work_t *works;
    size_t n, cap;
    json_object *index; /* execution id -> index into works */
    swf_msg_t *msgs;    /* parsed messages, one per Kafka message */
    swf_error_t **why;  /* why a message went to the dead letters, per message */
    /* One round's arrays, n long. */
    bool *todo;
    swf_history_append_t *appends;
    swf_error_t **errors;
    size_t *which, *lwhich;
    const char **load_ids;
    int64_t *load_after;
    swf_event_list_t *loaded;
    size_t na;        /* appends of the round */
    bool retry;       /* some appends lost a race: another round is due */
    bool stale;       /* some cached states were behind their history: idem */
    swf_error_t *err; /* the whole batch failed (the database, Kafka): retried */
    int64_t clock_us;
    uint64_t revokes; /* the decider's revokes before its messages were taken */
} batch_t;

static work_t *batch_work(batch_t *b, const char *id, int32_t partition)
{
    json_object *v;
    if (swf_json_get(b->index, id, &v))
        return &b->works[json_object_get_int(v)];
    SWF_ARRAY_RESERVE(b->works, b->n, b->cap, 64);
    work_t *w = &b->works[b->n];
    memset(w, 0, sizeof(*w));
    w->id = id;
    w->partition = partition;
    json_object_object_add(b->index, id, json_object_new_int((int)b->n));
    b->n++;
    return w;
}

static void work_push(work_t *w, swf_msg_t *m)
{
    SWF_ARRAY_RESERVE(w->msgs, w->nmsgs, w->capmsgs, 4);
    w->msgs[w->nmsgs++] = m;
}

/* Sends the unparseable messages to the dead-letter topic. */
static swf_error_t *dead_letters(swf_decider_t *d, rd_kafka_message_t **km, swf_error_t **why,
                                 size_t n)
{
    swf_history_post_t *posts = calloc(n ? n : 1, sizeof(*posts));
    json_object **docs = calloc(n ? n : 1, sizeof(*docs));
    char **keys = calloc(n ? n : 1, sizeof(*keys));
    if (posts == NULL || docs == NULL || keys == NULL)
        abort();
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        if (why[i] == NULL)
            continue;
        const rd_kafka_message_t *m = km[i];
        docs[np] = swf_msg_dead_letter_new(swf_error_message(why[i]), rd_kafka_topic_name(m->rkt),
                                           m->partition, m->offset, m->payload, m->len);
        keys[np] = m->key ? strndup(m->key, m->key_len) : NULL;
        const char *s = swf_json_str(docs[np]);
        posts[np] = (swf_history_post_t){d->cfg.kafka.dlq, keys[np], s, strlen(s), false};
        logf_(d, "dead letter (partition %d offset %lld): %s", (int)m->partition,
              (long long)m->offset, swf_error_message(why[i]));
        np++;
    }
    swf_error_t *err = np > 0 ? swf_kafka_poster_send(d->poster, posts, np) : NULL;
    stat_add(&d->stats.dead_letters, err == NULL ? np : 0);
    for (size_t i = 0; i < np; i++) {
        json_object_put(docs[i]);
        free(keys[i]);
    }
    free(posts);
    free(docs);
    free(keys);
    return err;
}

/*
 * ---- the publisher ---------------------------------------------------------
 *
 * The activity tasks of an appended batch are already safe in the outbox,
 * so publishing them is off the batch's path: the thread that appended
 * hands them over as a publication and goes on to the next batch, and the
 * publisher thread sends every publication queued at that moment in one
 * go, waits for Kafka's acknowledgements, runs the on_published hook, and
 * deletes their outbox rows. A single publisher keeps the tasks of one
 * execution in the order of its appends, and it alone polls the producer
 * for delivery reports on that path. The queue is bounded: when Kafka is
 * slower than the appends, the committer waits for room.
 */

/* Publications waiting at most; a full queue holds back the next append. */
#define PUBLISH_QUEUE_MAX 8

typedef struct publication {
    struct publication *next;
    size_t n, cap;
    swf_history_post_t *posts;
    swf_history_outbox_key_t *keys;
    json_object **docs;
    char **topics, **ids; /* owned: the batch is freed before the send */
    char **keys2;         /* owned: a nested message's key when not ids[i], or NULL */
} publication_t;

static void publication_free(publication_t *p)
{
    if (p == NULL)
        return;
    for (size_t i = 0; i < p->n; i++) {
        json_object_put(p->docs[i]);
        free(p->topics[i]);
        free(p->ids[i]);
        free(p->keys2[i]);
    }
    free(p->posts);
    free(p->keys);
    free(p->docs);
    free(p->topics);
    free(p->ids);
    free(p->keys2);
    free(p);
}

/* Makes room for one more task. */
static void publication_grow(publication_t *p)
{
    if (p->n < p->cap)
        return;
    p->cap = p->cap ? p->cap * 2 : 64;
    p->posts = realloc(p->posts, p->cap * sizeof(*p->posts));
    p->keys = realloc(p->keys, p->cap * sizeof(*p->keys));
    p->docs = realloc(p->docs, p->cap * sizeof(*p->docs));
    p->topics = realloc(p->topics, p->cap * sizeof(*p->topics));
    p->ids = realloc(p->ids, p->cap * sizeof(*p->ids));
    p->keys2 = realloc(p->keys2, p->cap * sizeof(*p->keys2));
    if (!p->posts || !p->keys || !p->docs || !p->topics || !p->ids || !p->keys2)
        abort();
}

/* Adds one message (takes doc, topic and key2) for the outbox row
 * (row_id, event_id), keyed by key2 or else by row_id. */
static void publication_put(publication_t *p, json_object *doc, char *topic, char *key2,
                            const char *row_id, int64_t event_id)
{
    publication_grow(p);
    char *id = strdup(row_id);
    if (id == NULL)
        abort();
    const char *s = swf_json_str(doc);
    p->docs[p->n] = doc;
    p->topics[p->n] = topic;
    p->ids[p->n] = id;
    p->keys2[p->n] = key2;
    p->posts[p->n] = (swf_history_post_t){topic, key2 ? key2 : id, s, strlen(s), false};
    p->keys[p->n] = (swf_history_outbox_key_t){id, event_id};
    p->n++;
}

/* Adds one ActivityTaskScheduled event's task message. */
static swf_error_t *publication_add(swf_decider_t *d, publication_t *p, const char *execution_id,
                                    const swf_event_t *ev)
{
    json_object *tl;
    const char *list =
        swf_json_get(ev->attrs, "taskList", &tl) ? swf_json_get_string(tl, "name") : NULL;
    /* The task is built from a copy of the event's attributes: their values
     * may be shared with the cached states (a constant of the definition,
     * which executions share, or an input the state still holds), and
     * json-c's reference counts are not atomic, so only the decider's
     * thread may take or drop references to them; this runs on the
     * committer's, and the publisher's frees the task. Copying only reads. */
    json_object *attrs = swf_json_copy(ev->attrs), *doc;
    swf_error_t *err = swf_msg_activity_task_new(d->cfg.secret, execution_id, ev->id, attrs, &doc);
    json_object_put(attrs);
    if (err != NULL)
        return err;
    size_t tlen = strlen(d->cfg.kafka.task_prefix) + strlen(list ? list : "") + 1;
    char *topic = malloc(tlen);
    if (topic == NULL)
        abort();
    swf_kafka_task_topic(&d->cfg.kafka, list ? list : "", topic, tlen);
    publication_put(p, doc, topic, NULL, execution_id, ev->id);
    return NULL;
}

/* Adds a message (takes doc) for the inbox instead of a task, keyed by
 * `to`, for the outbox row (row_id, event_id) (decider/nested.h: nested.*
 * messages to a parent's decider, terminate to a child). */
static void publication_inbox(swf_decider_t *d, publication_t *p, json_object *doc, const char *to,
                              const char *row_id, int64_t event_id)
{
    char *topic = strdup(d->cfg.kafka.inbox), *key = strdup(to);
    if (topic == NULL || key == NULL)
        abort();
    publication_put(p, doc, topic, key, row_id, event_id);
}

/* Queues the activity tasks of the works appended and not yet published,
 * waiting while the queue is full. A task that cannot be built is left to
 * swf-history's republishing (its outbox row stays), and logged. */
static void publish(swf_decider_t *d, batch_t *b)
{
    publication_t *p = calloc(1, sizeof(*p));
    if (p == NULL)
        abort();
    for (size_t i = 0; i < b->n; i++) {
        work_t *w = &b->works[i];
        if (w->failed || !w->appended || w->published)
            continue;
        w->published = true;
        for (size_t k = 0; k < w->events.count; k++) {
            const swf_event_t *ev = &w->events.items[k];
            if (swf_event_type_is_close(ev->type) && w->st->parent_id != NULL)
                publication_inbox(d, p,
                                  swf_msg_nested_new(d->cfg.secret, SWF_MSG_NESTED_CLOSED,
                                                     w->st->parent_id, w->st->parent_event_id),
                                  w->st->parent_id, w->id, ev->id);
            if (ev->type != SWF_EVENT_ACTIVITY_TASK_SCHEDULED)
                continue;
            if (swf_nested_pattern_of_scheduled(ev->attrs) != SWF_NESTED_NONE) {
                publication_inbox(
                    d, p, swf_msg_nested_new(d->cfg.secret, SWF_MSG_NESTED_START, w->id, ev->id),
                    w->id, w->id, ev->id);
                continue;
            }
            swf_error_t *err = publication_add(d, p, w->id, ev);
            if (err != NULL) {
                logf_(d, "activity task %s/%lld: %s (swf-history will republish)", w->id,
                      (long long)ev->id, swf_error_message(err));
                swf_error_free(err);
            }
        }
        /* The children its events stop (nested_stops): no outbox row, the
         * key (id, 0) names none. */
        for (size_t k = 0; w->stops != NULL && k < json_object_array_length(w->stops); k++) {
            const char *child = json_object_get_string(json_object_array_get_idx(w->stops, k));
            json_object *why = json_object_new_string(SWF_NESTED_STOPPED);
            publication_inbox(
                d, p, swf_msg_terminate_new(d->cfg.secret, child, "States.Aborted", why, true),
                child, w->id, 0);
            json_object_put(why);
        }
    }
    if (p->n == 0) {
        publication_free(p);
        return;
    }
    pthread_mutex_lock(&d->lock);
    while (d->pub_queued >= PUBLISH_QUEUE_MAX)
        pthread_cond_wait(&d->pub_cond, &d->lock);
    if (d->pub_tail != NULL)
        d->pub_tail->next = p;
    else
        d->pub_head = p;
    d->pub_tail = p;
    d->pub_queued++;
    pthread_cond_broadcast(&d->pub_cond);
    pthread_mutex_unlock(&d->lock);
}

/*
 * The outbox rows of tasks Kafka took are deleted in one statement for
 * every OUTBOX_DELETE_MS (or OUTBOX_DELETE_MAX rows), not one per
 * publication: at a few steps in flight each publication is one task, and
 * its own delete was a second transaction a step (a commit, its WAL and
 * PostgreSQL's CPU for one row). A crash loses at most that much of
 * deletes, whose rows swf-history publishes again after its outbox age
 * (3 s, far above this), as it does for a crash between a publish and its
 * delete: a worker may then run that task twice, and its second answer
 * names an activity no longer open, which changes nothing.
 */
#define OUTBOX_DELETE_MS 50
#define OUTBOX_DELETE_MAX 512

typedef struct doomed {
    swf_history_outbox_key_t *keys; /* execution ids owned */
    size_t n, cap;
    int64_t since_us; /* when the first of them was added */
} doomed_t;

/* Sends the delete of every doomed row (collected by the next delete, or at
 * the end of the run) and empties the list. */
static void doomed_flush(swf_decider_t *d, doomed_t *dm)
{
    if (dm->n == 0)
        return;
    int64_t clock_us = mono_us();
    swf_error_t *err = swf_history_outbox_delete_send(d->outbox, dm->keys, dm->n);
    stat_time(&d->stats.outbox_us, &clock_us);
    if (err != NULL) {
        logf_(d, "deleting published outbox rows: %s (swf-history will republish)",
              swf_error_message(err));
        swf_error_free(err);
    }
    for (size_t i = 0; i < dm->n; i++)
        free((char *)dm->keys[i].execution_id);
    dm->n = 0;
}

/* Sends publications as one: acknowledged, hooked, the outbox rows of the
 * tasks Kafka took doomed (deleted by doomed_flush), so that none is sent
 * twice. The rows of tasks Kafka did not take stay for swf-history's
 * republishing. */
static void publication_send(swf_decider_t *d, publication_t *all, doomed_t *dm)
{
    int64_t clock_us = mono_us();
    swf_error_t *failed = swf_kafka_poster_send(d->poster, all->posts, all->n);
    stat_time(&d->stats.publish_us, &clock_us);
    size_t sent = 0;
    for (size_t i = 0; i < all->n; i++) {
        if (!all->posts[i].sent)
            continue;
        if (d->cfg.on_published != NULL)
            d->cfg.on_published(d->cfg.hook_arg, all->posts[i].key);
        if (dm->n == dm->cap) {
            dm->cap = dm->cap ? dm->cap * 2 : 64;
            dm->keys = realloc(dm->keys, dm->cap * sizeof(*dm->keys));
            if (dm->keys == NULL)
                abort();
        }
        if (dm->n == 0)
            dm->since_us = mono_us();
        char *id = strdup(all->keys[i].execution_id);
        if (id == NULL)
            abort();
        dm->keys[dm->n++] = (swf_history_outbox_key_t){id, all->keys[i].event_id};
        sent++;
    }
    stat_add(&d->stats.tasks_published, sent);
    if (dm->n >= OUTBOX_DELETE_MAX || mono_us() - dm->since_us >= OUTBOX_DELETE_MS * 1000)
        doomed_flush(d, dm);
    if (failed != NULL) {
        logf_(d, "publishing activity tasks: %zu of %zu not taken: %s (swf-history will republish)",
              all->n - sent, all->n, swf_error_message(failed));
        swf_error_free(failed);
    }
}

/* Moves the tasks of `from` to the end of `to` and frees `from`. */
static void publication_join(publication_t *to, publication_t *from)
{
    for (size_t i = 0; i < from->n; i++) {
        publication_grow(to);
        to->posts[to->n] = from->posts[i];
        to->keys[to->n] = from->keys[i];
        to->docs[to->n] = from->docs[i];
        to->topics[to->n] = from->topics[i];
        to->ids[to->n] = from->ids[i];
        to->keys2[to->n] = from->keys2[i];
        to->n++;
    }
    from->n = 0;
    publication_free(from);
}

/* The publisher thread: until stopped with nothing left to send. */
static void *publisher_main(void *arg)
{
    swf_decider_t *d = arg;
    doomed_t dm = {0};
    pthread_mutex_lock(&d->lock);
    for (;;) {
        while (!d->publisher_stop && d->pub_head == NULL) {
            if (dm.n == 0) {
                pthread_cond_wait(&d->pub_cond, &d->lock);
                continue;
            }
            int64_t left_us = dm.since_us + OUTBOX_DELETE_MS * 1000 - mono_us();
            if (left_us <= 0) {
                pthread_mutex_unlock(&d->lock);
                doomed_flush(d, &dm);
                pthread_mutex_lock(&d->lock);
                continue;
            }
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            int64_t ns = until.tv_nsec + left_us * 1000;
            until.tv_sec += ns / 1000000000;
            until.tv_nsec = ns % 1000000000;
            pthread_cond_timedwait(&d->pub_cond, &d->lock, &until);
        }
        publication_t *first = d->pub_head;
        if (first == NULL)
            break; /* stopped, and everything is sent */
        d->pub_head = d->pub_tail = NULL;
        d->pub_queued = 0;
        pthread_cond_broadcast(&d->pub_cond); /* room again */
        pthread_mutex_unlock(&d->lock);
        while (first->next != NULL) {
            publication_t *next = first->next;
            first->next = next->next;
            publication_join(first, next);
        }
        publication_send(d, first, &dm);
        publication_free(first);
        pthread_mutex_lock(&d->lock);
    }
    pthread_mutex_unlock(&d->lock);
    doomed_flush(d, &dm);
    free(dm.keys);
    return NULL;
}

/* Frees a batch; with keep, the states of the works that went through go
 * back into the cache. The Kafka messages stay (batch_done destroys them). */
static void batch_clear(batch_t *b, swf_decider_t *d, bool keep)
{
    /* After a revoke, the batch may hold executions of partitions that are
     * no longer ours (taken before the revoke): their states must not go
     * into the cache, where they would go stale under the new owner. */
    keep = keep && b->revokes == d->revokes;
    for (size_t i = 0; i < b->n; i++) {
        work_t *w = &b->works[i];
        if (keep && !w->failed && w->st != NULL)
            swf_decider_cache_put(d->cache, w->id, w->partition, w->st);
        else
            swf_decider_state_free(w->st);
        swf_event_list_free(&w->events);
        json_object_put(w->stops);
        free(w->msgs);
    }
    free(b->works);
    b->works = NULL;
    b->n = b->cap = 0;
    json_object_put(b->index);
    b->index = NULL;
    for (size_t i = 0; i < b->nkm; i++) {
        if (b->msgs != NULL)
            swf_msg_clear(&b->msgs[i]);
        if (b->why != NULL)
            swf_error_free(b->why[i]);
    }
    free(b->msgs);
    free(b->why);
    b->msgs = NULL;
    b->why = NULL;
    for (size_t k = 0; b->loaded != NULL && k < b->nkm; k++)
        swf_event_list_free(&b->loaded[k]);
    free(b->loaded);
    free(b->todo);
    free(b->appends);
    free(b->errors);
    free(b->which);
    free(b->lwhich);
    free(b->load_ids);
    free(b->load_after);
    b->loaded = NULL;
    b->todo = NULL;
    b->appends = NULL;
    b->errors = NULL;
    b->which = b->lwhich = NULL;
    b->load_ids = NULL;
    b->load_after = NULL;
    b->na = 0;
    b->retry = false;
}

/* Whether an execution's failure is the database's rather than its own (a
 * lost connection, a restart, a serialization failure). Such a failure
 * fails the whole batch, which is retried: dropping the execution instead
 * would commit the offsets past messages that left no trace. */
static bool transient(const swf_error_t *e)
{
    return swf_error_code(e) == SWF_E_DB && swf_error_retriable(e);
}

/* Parses the messages into works (one per execution) and sends the
 * unparseable ones to the dead letters; b->err when that failed. */
static void batch_parse(swf_decider_t *d, batch_t *b)
{
    size_t n = b->nkm;
    b->clock_us = mono_us();
    b->index = json_object_new_object();
    b->msgs = calloc(n ? n : 1, sizeof(*b->msgs));
    b->why = calloc(n ? n : 1, sizeof(*b->why));
    if (b->msgs == NULL || b->why == NULL)
        abort();
    bool any_dead = false;
    for (size_t i = 0; i < n; i++) {
        rd_kafka_message_t *m = b->km[i];
        b->why[i] = swf_msg_parse(m->payload, m->len, d->cfg.secret, &b->msgs[i]);
        if (b->why[i] == NULL && b->msgs[i].type == SWF_MSG_ACTIVITY_TASK) {
            swf_msg_clear(&b->msgs[i]);
            b->why[i] = swf_error_new(SWF_E_INPUT, NULL, "activity.task belongs on a task topic");
        }
        if (b->why[i] != NULL) {
            any_dead = true;
            continue;
        }
        work_push(batch_work(b, b->msgs[i].execution_id, m->partition), &b->msgs[i]);
    }
    b->err = any_dead ? dead_letters(d, b->km, b->why, n) : NULL;
    size_t cap = n ? n : 1; /* works <= messages */
    b->todo = calloc(cap, sizeof(*b->todo));
    b->appends = calloc(cap, sizeof(*b->appends));
    b->errors = calloc(cap, sizeof(*b->errors));
    b->which = calloc(cap, sizeof(*b->which));
    b->lwhich = calloc(cap, sizeof(*b->lwhich));
    b->load_ids = calloc(cap, sizeof(*b->load_ids));
    b->load_after = calloc(cap, sizeof(*b->load_after));
    b->loaded = calloc(cap, sizeof(*b->loaded));
    if (!b->todo || !b->appends || !b->errors || !b->which || !b->lwhich || !b->load_ids ||
        !b->load_after || !b->loaded)
        abort();
    for (size_t i = 0; i < b->n; i++)
        b->todo[i] = true;
}

/* One round's first half: decides for each execution still to do, on
 * its cached state as it is, or on its history loaded in one round trip
 * for all the executions of the batch that missed the cache; the appends
 * of the round end in b->appends.
 *
 * A cached state is trusted for what it appends: only the decider that
 * owns an execution's inbox partition should write its history, and a
 * state gone stale behind another decider's writes (a rebalance, or a
 * message a client with another partitioner sent to the wrong partition)
 * makes its append lose the optimistic check, after which the execution is
 * loaded afresh. It is not trusted for what it leaves out: a state that
 * found nothing to append is checked against the history (batch_verify)
 * before its messages count as changing nothing. */
static void batch_verify(swf_decider_t *d, batch_t *b);

static void batch_decide(swf_decider_t *d, batch_t *b)
{
    size_t nl = 0;
    b->na = 0;
    b->stale = false;
    for (size_t i = 0; i < b->n; i++) {
        if (!b->todo[i])
            continue;
        work_t *w = &b->works[i];
        if ((w->cached = work_state(d, w)))
            continue;
        b->load_ids[nl] = w->id;
        b->load_after[nl] = swf_asl_exec_last_event_id(w->st->exec);
        b->lwhich[nl++] = i;
    }
    for (size_t k = 0; k < nl; k++)
        swf_event_list_clear(&b->loaded[k]);
    if (nl > 0)
        b->err = swf_history_pg_load_batch(d->store, b->load_ids, b->load_after, nl, b->loaded,
                                           b->errors);
    static const swf_event_list_t none = {0};
    for (size_t i = 0, k = 0; i < b->n && b->err == NULL; i++) {
        if (!b->todo[i])
            continue;
        work_t *w = &b->works[i];
        b->todo[i] = false;
        const swf_event_list_t *loaded = &none;
        swf_error_t *e = NULL;
        if (k < nl && b->lwhich[k] == i) {
            loaded = &b->loaded[k];
            e = b->errors[k];
            b->errors[k++] = NULL;
        }
        if (e == NULL)
            e = work_prepare(d, w, loaded);
        if (e != NULL && transient(e)) {
            b->err = e; /* the whole batch waits for the database */
            break;
        }
        if (e != NULL) {
            if (swf_error_code(e) != SWF_E_NOTFOUND)
                logf_(d, "execution %s: %s", w->id, swf_error_message(e));
            else
                stat_add(&d->stats.ignored, w->nmsgs);
            swf_error_free(e);
            w->failed = true;
            continue;
        }
        if (w->events.count == 0)
            continue;
        b->appends[b->na] =
            (swf_history_append_t){w->id, w->next_id, w->events.items, w->events.count};
        b->which[b->na++] = i;
    }
    for (size_t k = 0; k < nl; k++) {
        swf_error_free(b->errors[k]);
        b->errors[k] = NULL;
    }
    if (b->err == NULL)
        batch_verify(d, b);
    stat_time(&d->stats.decide_us, &b->clock_us);
}

/*
 * The executions decided on a cached state that append nothing (a timer
 * firing, an answer or a signal the state says are recorded or unknown),
 * checked in one round trip: the events after each state's position. None:
 * the state is the history, and the messages indeed change nothing. Some:
 * another decider appended behind this one's back (the execution's
 * messages went to two partitions), so the state is dropped and the
 * execution decided again on its whole history in the next round, rather
 * than committing past messages on the word of a stale copy.
 */
static void batch_verify(swf_decider_t *d, batch_t *b)
{
    size_t nl = 0;
    for (size_t i = 0; i < b->n; i++) {
        work_t *w = &b->works[i];
        if (!w->cached || w->failed || w->events.count > 0 || w->st == NULL ||
            swf_asl_exec_status(w->st->exec) != SWF_ASL_RUNNING)
            continue;
        w->cached = false;
        b->load_ids[nl] = w->id;
        b->load_after[nl] = swf_asl_exec_last_event_id(w->st->exec);
        b->lwhich[nl++] = i;
        swf_event_list_clear(&b->loaded[nl - 1]);
    }
    if (nl == 0)
        return;
    b->err =
        swf_history_pg_load_batch(d->store, b->load_ids, b->load_after, nl, b->loaded, b->errors);
    for (size_t k = 0; k < nl; k++) {
        work_t *w = &b->works[b->lwhich[k]];
        if (b->err == NULL && b->loaded[k].count > 0) {
            logf_(
                d,
                "execution %s: its cached state ended at event %lld, the history goes on: reloaded",
                w->id, (long long)b->load_after[k]);
            stat_add(&d->stats.stale, 1);
            swf_decider_state_free(w->st);
            w->st = NULL;
            b->todo[b->lwhich[k]] = true;
            b->stale = true;
        }
        swf_event_list_clear(&b->loaded[k]);
        swf_error_free(b->errors[k]);
        b->errors[k] = NULL;
    }
}

/* One round's second half: the group commit of the round's appends on
 * `store`. Works that lost a race are marked to do again (b->retry). */
static void batch_append(swf_decider_t *d, batch_t *b, swf_history_store_t *store)
{
    b->retry = false;
    if (b->na == 0 || b->err != NULL)
        return;
    int64_t clock_us = mono_us();
    b->err = swf_history_pg_batch_append(store, b->appends, b->na, b->errors);
    stat_time(&d->stats.append_us, &clock_us);
    if (b->err != NULL)
        return;
    for (size_t k = 0; k < b->na; k++) {
        work_t *w = &b->works[b->which[k]];
        swf_error_t *e = b->errors[k];
        b->errors[k] = NULL;
        if (e == NULL) {
            w->appended = true;
            stat_add(&d->stats.events, w->events.count);
            continue;
        }
        /* The state holds events that were not written. */
        swf_decider_state_free(w->st);
        w->st = NULL;
        swf_event_list_clear(&w->events);
        if (swf_error_code(e) == SWF_E_CONFLICT) {
            stat_add(&d->stats.conflicts, 1);
            b->todo[b->which[k]] = true;
            b->retry = true;
        } else if (transient(e)) {
            /* Appended or not, it is redone with the whole batch. */
            if (b->err == NULL) {
                b->err = e;
                e = NULL;
            }
        } else {
            logf_(d, "execution %s: %s", w->id, swf_error_message(e));
            w->failed = true;
        }
        swf_error_free(e);
    }
}

/* The rounds after `first` on this thread: reload and redo what lost a
 * race, append, until nothing lost, then publish what is not published
 * yet. Works that still lost when the rounds are spent wrote nothing, and
 * their messages (an activity's result, which nothing else brings back)
 * must come again: the batch fails, to be retried as a whole (what went
 * in changes nothing the second time). */
static void batch_rounds(swf_decider_t *d, batch_t *b, int first)
{
    for (int round = first; round < CONFLICT_ROUNDS && b->err == NULL; round++) {
        batch_decide(d, b);
        if (b->err != NULL || (b->na == 0 && !b->stale))
            break;
        batch_append(d, b, d->store);
        if (!b->retry && !b->stale)
            break;
        if (round + 1 == CONFLICT_ROUNDS) {
            b->err = swf_error_new(SWF_E_CONFLICT, NULL, "lost the append race %d times in a row",
                                   CONFLICT_ROUNDS);
            swf_error_set_retriable(b->err, true);
        }
    }
    if (b->err == NULL)
        publish(d, b);
}

/* Processes a batch from start to end on this thread; NULL when its
 * offsets may be committed. The messages stay the caller's. */
static swf_error_t *batch_process(swf_decider_t *d, rd_kafka_message_t **km, size_t n,
                                  uint64_t revokes)
{
    batch_t b = {.km = km, .nkm = n, .revokes = revokes};
    batch_parse(d, &b);
    if (b.err == NULL)
        batch_rounds(d, &b, 0);
    swf_error_t *err = b.err;
    batch_clear(&b, d, err == NULL);
    return err;
}

/*
 * Commits the offsets after a processed batch: per partition, the one after
 * its last message. Asynchronously: the batch is durable already, so a
 * commit that fails or is lost in a crash only makes its messages come
 * again, and they change nothing (the history reflects them). The offsets
 * are the batch's own, not the consumer's position, which is further on
 * while the next batch is being decided.
 */
static void offsets_commit(swf_decider_t *d, rd_kafka_message_t **km, size_t n)
{
    int64_t clock_us = mono_us();
    swf_error_t *err = swf_kafka_commit(d->consumer, km, n, true);
    if (err != NULL) {
        logf_(d, "committing offsets: %s", swf_error_message(err));
        swf_error_free(err);
    }
    stat_time(&d->stats.commit_us, &clock_us);
}

/*
 * Ends a batch on the decider's thread: a batch that failed as a whole
 * (the database is down) is retried from its messages, with a growing
 * pause, until it passes or we stop, since the offsets must not move past
 * messages that left no trace; works that lost a race get their further
 * rounds; then the states go back into the cache and the offsets are
 * committed. Frees the batch.
 */
static void batch_done(swf_decider_t *d, batch_t *b)
{
    if (b->err == NULL && (b->retry || b->stale))
        batch_rounds(d, b, 1);
    swf_error_t *err = b->err;
    b->err = NULL;
    bool passed = err == NULL;
    batch_clear(b, d, passed);
    int64_t logged_ms = 0;
    for (unsigned failures = 1; err != NULL; failures++) {
        /* Logged once, then every 30 s while it lasts. */
        if (failures == 1 || mono_ms() - logged_ms >= 30000) {
            logf_(d, "batch of %zu messages: %s; retrying", b->nkm, swf_error_message(err));
            logged_ms = mono_ms();
        }
        swf_error_free(err);
        err = NULL;
        passed = false;
        d->backoff_ms = d->backoff_ms ? (d->backoff_ms * 2 > 5000 ? 5000 : d->backoff_ms * 2) : 100;
        for (int slept = 0; slept < d->backoff_ms && !d->stop; slept += 50)
            usleep(50000);
        if (d->stop)
            break;
        err = batch_process(d, b->km, b->nkm, b->revokes);
        passed = err == NULL;
        if (passed)
            logf_(d, "batch of %zu messages passed after %u failures", b->nkm, failures);
    }
    if (passed)
        d->backoff_ms = 0;
    stat_add(&d->stats.batches, 1);
    stat_add(&d->stats.messages, b->nkm);
    __atomic_store_n(&d->stats.cached, (uint64_t)swf_decider_cache_count(d->cache),
                     __ATOMIC_RELAXED);
    /* Also when stopping: the batch is appended, and its messages must not
     * come again to the next owner (a signal would be recorded twice). */
    if (passed)
        offsets_commit(d, b->km, b->nkm);
    for (size_t i = 0; i < b->nkm; i++)
        rd_kafka_message_destroy(b->km[i]);
    free(b->km);
    free(b);
}

/* Whether a batch has work for an execution that another batch has too. */
static bool batch_overlaps(const batch_t *a, const batch_t *b)
{
    for (size_t i = 0; i < a->n; i++) {
        if (json_object_object_get_ex(b->index, a->works[i].id, NULL))
            return true;
    }
    return false;
}

/* ---- the pipeline --------------------------------------------------------- */

/*
 * While one batch is appended (on the committer thread, with a connection
 * of its own), the decider's thread gathers and decides the next, and the
 * publisher thread publishes the one before: the database's work on one
 * overlaps the interpreter's on the next and Kafka's on the last. Only the first round of a batch
 * goes to the committer; a batch that failed or lost races comes back to the decider's thread,
 * which owns the cache, retries and commits offsets (batch_done). One batch is in flight at a time,
 * and a batch with an execution of the one in flight is decided only after that one is done, so
 * each execution's decisions are made on the state its last append left, in the order of its
 * messages.
 */
static void *committer_main(void *arg)
{
    swf_decider_t *d = arg;
    pthread_mutex_lock(&d->lock);
    for (;;) {
        while (!d->committer_stop && (d->flight == NULL || d->flight_done))
            pthread_cond_wait(&d->cond, &d->lock);
        if (d->committer_stop)
            break;
        batch_t *b = d->flight;
        pthread_mutex_unlock(&d->lock);
        batch_append(d, b, d->commit_store);
        if (b->err == NULL)
            publish(d, b); /* the winners, even when others lost a race */
        pthread_mutex_lock(&d->lock);
        d->flight_done = true;
        pthread_cond_broadcast(&d->cond);
    }
    pthread_mutex_unlock(&d->lock);
    return NULL;
}

/* Waits at most timeout_ms (< 0: for ever) for the batch in flight, and
 * ends it when it is done; true when nothing is in flight any more. */
static bool flight_end(swf_decider_t *d, int timeout_ms)
{
    if (d->flight == NULL)
        return true;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += (long)(timeout_ms > 0 ? timeout_ms : 0) * 1000000L;
    until.tv_sec += until.tv_nsec / 1000000000L;
    until.tv_nsec %= 1000000000L;
    pthread_mutex_lock(&d->lock);
    while (!d->flight_done && timeout_ms != 0) {
        if (timeout_ms < 0)
            pthread_cond_wait(&d->cond, &d->lock);
        else if (pthread_cond_timedwait(&d->cond, &d->lock, &until) != 0)
            break;
    }
    bool done = d->flight_done;
    batch_t *b = d->flight;
    if (done)
        d->flight = NULL;
    pthread_mutex_unlock(&d->lock);
    if (!done)
        return false;
    batch_done(d, b);
    return true;
}

static void flight_start(swf_decider_t *d, batch_t *b)
{
    pthread_mutex_lock(&d->lock);
    assert(d->flight == NULL);
    d->flight = b;
    d->flight_done = false;
    pthread_cond_broadcast(&d->cond);
    pthread_mutex_unlock(&d->lock);
}

/* ---- the loop ------------------------------------------------------------- */

swf_error_t *swf_decider_new(const swf_decider_config_t *cfg, swf_decider_t **out)
{
    *out = NULL;
    swf_decider_t *d = calloc(1, sizeof(*d));
    if (d == NULL)
        abort();
    d->cfg = *cfg;
    snprintf(d->group, sizeof(d->group), "%s", cfg->group ? cfg->group : "swf-deciders");
    d->cfg.group = d->group;
    if (d->cfg.batch_max == 0)
        d->cfg.batch_max = 500;
    if (d->cfg.cache_max == 0)
        d->cfg.cache_max = 10000;
    if (cfg->identity != NULL)
        snprintf(d->identity, sizeof(d->identity), "%s", cfg->identity);
    else
        snprintf(d->identity, sizeof(d->identity), "decider-%ld", (long)getpid());
    d->cache = swf_decider_cache_new(d->cfg.cache_max);
    pthread_mutex_init(&d->lock, NULL);
    pthread_cond_init(&d->cond, NULL);
    pthread_cond_init(&d->pub_cond, NULL);
    swf_error_t *err = swf_history_pg_new(cfg->conninfo, &d->store);
    if (err == NULL)
        err = swf_history_pg_connect(cfg->conninfo, &d->commit_store);
    if (err == NULL)
        err = swf_history_pg_connect(cfg->conninfo, &d->outbox);
    if (err == NULL)
        err = swf_history_pg_commit_async(d->outbox);
    if (err == NULL)
        err = swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = cfg->kafka.brokers},
                                     &d->producer);
    if (err == NULL) {
        d->poster = swf_kafka_poster_new(d->producer, cfg->kafka.task_partitions);
        err = swf_kafka_poster_topic(d->poster, cfg->kafka.inbox);
    }
    if (err == NULL)
        err = swf_kafka_consumer_new(&(swf_kafka_consumer_config_t){.brokers = cfg->kafka.brokers,
                                                                    .group = d->cfg.group,
                                                                    .on_rebalance = on_rebalance,
                                                                    .opaque = d},
                                     &d->consumer);
    if (err == NULL) {
        const char *topics[1] = {cfg->kafka.inbox};
        err = swf_kafka_subscribe(d->consumer, topics, 1);
    }
    if (err != NULL) {
        swf_decider_free(d);
        return err;
    }
    *out = d;
    return NULL;
}

/* Takes what has arrived, up to batch_max: waiting up to 100 ms for the
 * first message when no batch is in flight (else not at all: the one in
 * flight must be ended), and up to batch_wait_ms for more. */
static size_t gather(swf_decider_t *d, rd_kafka_message_t **km)
{
    swf_error_t *err = NULL;
    size_t n = swf_kafka_poll(d->consumer, d->flight == NULL ? 100 : 0, 0, km, 1, &err);
    int64_t gather_us = mono_us();
    if (n == 1 && err == NULL)
        n += swf_kafka_poll(d->consumer, d->cfg.batch_wait_ms, d->cfg.batch_wait_ms, km + 1,
                            d->cfg.batch_max - 1, &err);
    if (err != NULL) {
        logf_(d, "%s", swf_error_message(err));
        swf_error_free(err);
    }
    for (size_t i = 0; i < n && d->cfg.on_received != NULL; i++) {
        if (km[i]->key != NULL)
            d->cfg.on_received(d->cfg.hook_arg, km[i]->key, km[i]->key_len);
    }
    if (n > 0)
        stat_time(&d->stats.gather_us, &gather_us);
    return n;
}

void swf_decider_run(swf_decider_t *d)
{
    pthread_t committer, publisher;
    d->committer_stop = false;
    d->publisher_stop = false;
    if (pthread_create(&committer, NULL, committer_main, d) != 0 ||
        pthread_create(&publisher, NULL, publisher_main, d) != 0)
        abort();
    rd_kafka_message_t **km = NULL;
    while (!d->stop) {
        if (km == NULL && (km = calloc(d->cfg.batch_max, sizeof(*km))) == NULL)
            abort();
        uint64_t revokes = d->revokes;
        size_t n = gather(d, km);
        flight_end(d, n == 0 ? 1 : 0);
        if (n == 0)
            continue;
        batch_t *b = calloc(1, sizeof(*b));
        if (b == NULL)
            abort();
        b->km = km;
        b->nkm = n;
        b->revokes = revokes;
        km = NULL;
        batch_parse(d, b);
        if (b->err == NULL && d->flight != NULL && batch_overlaps(b, d->flight))
            flight_end(d, -1);
        if (b->err == NULL)
            batch_decide(d, b);
        flight_end(d, -1); /* one batch in flight at a time */
        if (b->err == NULL && b->na > 0)
            flight_start(d, b);
        else
            batch_done(d, b); /* nothing to append, or failed: ends here */
    }
    flight_end(d, -1);
    free(km);
    pthread_mutex_lock(&d->lock);
    d->committer_stop = true;
    pthread_cond_broadcast(&d->cond);
    pthread_mutex_unlock(&d->lock);
    pthread_join(committer, NULL);
    /* What was appended is published before the run ends. */
    pthread_mutex_lock(&d->lock);
    d->publisher_stop = true;
    pthread_cond_broadcast(&d->pub_cond);
    pthread_mutex_unlock(&d->lock);
    pthread_join(publisher, NULL);
    swf_error_t *err = swf_history_outbox_wait(d->outbox);
    if (err != NULL) {
        logf_(d, "deleting published outbox rows: %s (swf-history will publish them again)",
              swf_error_message(err));
        swf_error_free(err);
    }
}

void swf_decider_stop(swf_decider_t *d)
{
    d->stop = 1;
}

void swf_decider_stats(swf_decider_t *d, swf_decider_stats_t *out)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    *out = d->stats;
    uint64_t h, m;
    swf_decider_cache_stats(d->cache, &h, &m);
    out->cache_hits = h;
    out->cache_misses = m;
}

/* Everything but the consumer. */
static void decider_free_rest(void *arg)
{
    swf_decider_t *d = arg;
    swf_kafka_poster_free(d->poster);
    swf_kafka_producer_free(d->producer);
    swf_decider_cache_free(d->cache);
    swf_history_store_free(d->store);
    swf_history_store_free(d->commit_store);
    swf_history_store_free(d->outbox);
    pthread_mutex_destroy(&d->lock);
    pthread_cond_destroy(&d->cond);
    pthread_cond_destroy(&d->pub_cond);
    free(d);
}

void swf_decider_free(swf_decider_t *d)
{
    if (d == NULL)
        return;
    FILE *log = d->cfg.log; /* d may be freed by the time the call below returns */
    /* The close runs the rebalance callback, which uses d. */
    if (d->consumer != NULL &&
        !swf_kafka_consumer_close(d->consumer, SWF_DECIDER_CLOSE_MS, NULL, decider_free_rest, d)) {
        /* d now belongs to the close that overran: freed if it ever ends. */
        if (log != NULL) {
            fprintf(log,
                    "swf-decider: the inbox consumer did not leave its group within %d ms (Kafka "
                    "did not confirm): abandoned; its partitions move to other deciders after "
                    "the group's session timeout\n",
                    SWF_DECIDER_CLOSE_MS);
            fflush(log);
        }
        return;
    }
    decider_free_rest(d);
}
