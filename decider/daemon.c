/*
 * daemon.c - the decider daemon: inbox batches in, one transaction of
 * events out, then activity tasks, then offsets.
 *
 * The order of effects is the whole design. (1) Events for every execution
 * of a batch are appended in one swf_history_pg_batch_append (group commit:
 * one fsync for hundreds of executions). (2) The ActivityTaskScheduled
 * events of that transaction - which the store also wrote to the outbox -
 * are published to their task topics, and their outbox rows are deleted
 * once Kafka acknowledged them. (3) Only then are the inbox offsets
 * committed. A crash between any two steps loses nothing: before (1) the
 * messages are delivered again; between (1) and (3) they are delivered
 * again and change nothing (the history already reflects them: answers name
 * activities no longer open, "decide" finds no decision due), and
 * swf-history republishes outbox rows left behind.
 *
 * A decision task is built exactly as decider/local.c builds it:
 * [incoming events] DecisionTaskScheduled DecisionTaskStarted, then
 * swf_asl_exec_decide, then DecisionTaskCompleted and one event per
 * decision. Activities whose cancellation was decided are closed at once
 * with ActivityTaskCanceled (as local.c does), followed by a new decision
 * task, so a failed Parallel never waits on a worker to learn of it.
 *
 * Events are applied to the cached state as they are built, so the
 * interpreter sees them before the append; if the append loses a race
 * (another decider, after a rebalance, wrote first) that state is thrown
 * away and the execution is reloaded and redone - the optimistic check is
 * what makes "any number of deciders" safe.
 */
#include "decider/daemon.h"

#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "decider/cache.h"
#include "history/pg.h"
#include "history/service.h"
#include "protocol/json.h"
#include "protocol/limits.h"
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
    swf_history_store_t *store;
    /* Deletes published outbox rows; its commits do not wait for the disk
     * (a row a crash brings back is only published again). */
    swf_history_store_t *outbox;
    rd_kafka_t *consumer;
    rd_kafka_t *producer;
    swf_kafka_poster_t *poster;
    swf_decider_cache_t *cache;
    volatile sig_atomic_t stop;
    swf_decider_stats_t stats;
};

/* The work of one execution within a batch. */
typedef struct work {
    const char *id; /* borrowed from its first message */
    int32_t partition;
    swf_msg_t **msgs;
    size_t nmsgs, capmsgs;
    swf_decider_state_t *st;
    swf_event_list_t events; /* to append */
    int64_t next_id;         /* the id of events.items[0] */
    bool failed;             /* dropped for this batch (logged) */
} work_t;

static void logf_(swf_decider_t *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(swf_decider_t *d, const char *fmt, ...)
{
    if (d->cfg.log == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(d->cfg.log, "swf-decider: ");
    vfprintf(d->cfg.log, fmt, ap);
    fputc('\n', d->cfg.log);
    va_end(ap);
    fflush(d->cfg.log);
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
    cfg->log = stderr;
}

/* ---- rebalances ----------------------------------------------------------- */

static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t code,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    swf_decider_t *d = opaque;
    if (code == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        rd_kafka_assign(rk, parts);
        __atomic_store_n(&d->stats.partitions, (uint64_t)parts->cnt, __ATOMIC_RELAXED);
        logf_(d, "assigned %d inbox partitions", parts->cnt);
        return;
    }
    /* Another decider owns these executions now: their cached states would
     * only go stale (they stay correct, as loads continue from the cached
     * id, but they take memory for nothing). */
    size_t dropped = 0;
    for (int i = 0; i < parts->cnt; i++)
        dropped += swf_decider_cache_drop_partition(d->cache, parts->elems[i].partition);
    __atomic_store_n(&d->stats.partitions, 0, __ATOMIC_RELAXED);
    logf_(d, "revoked %d inbox partitions, dropped %zu cached executions", parts->cnt, dropped);
    rd_kafka_assign(rk, NULL);
}

/* ---- building events ------------------------------------------------------ */

static swf_error_t *work_add(work_t *w, swf_event_type_t type, int64_t now_ms, json_object *attrs)
{
    swf_event_t *ev = swf_event_list_push(&w->events, type, now_ms, attrs);
    ev->id = w->next_id + (int64_t)w->events.count - 1;
    return swf_decider_state_apply(w->st, ev);
}

static int64_t last_id(const work_t *w)
{
    return w->next_id + (int64_t)w->events.count - 1;
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

/* Turns one message into events. *wake says whether a decision is due. */
static swf_error_t *message_apply(swf_decider_t *d, work_t *w, const swf_msg_t *m, int64_t now,
                                  bool *wake)
{
    int64_t sched = 0;
    json_object *a, *v;
    swf_error_t *err = NULL;
    switch (m->type) {
    case SWF_MSG_DECIDE:
        *wake = true;
        return NULL;
    case SWF_MSG_ACTIVITY_COMPLETED:
    case SWF_MSG_ACTIVITY_FAILED: {
        if (open_activity(w, m->activity_id, &sched) == NULL)
            goto ignored;
        a = obj();
        swf_json_add(a, "scheduledEventId", json_object_new_int64(sched));
        swf_json_add(a, "identity", json_object_new_string(m->identity ? m->identity : ""));
        err = work_add(w, SWF_EVENT_ACTIVITY_TASK_STARTED, now, a);
        if (err != NULL)
            return err;
        a = obj();
        swf_json_add(a, "scheduledEventId", json_object_new_int64(sched));
        swf_json_add(a, "startedEventId", json_object_new_int64(last_id(w)));
        if (m->type == SWF_MSG_ACTIVITY_COMPLETED) {
            swf_json_add(a, "result", swf_json_ref(m->result));
            err = work_add(w, SWF_EVENT_ACTIVITY_TASK_COMPLETED, now, a);
        } else {
            swf_json_add(a, "reason", json_object_new_string(m->error));
            swf_json_add(a, "details", json_object_new_string(m->cause ? m->cause : ""));
            err = work_add(w, SWF_EVENT_ACTIVITY_TASK_FAILED, now, a);
        }
        *wake = true;
        return err;
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
        return work_add(w, SWF_EVENT_ACTIVITY_TASK_HEARTBEAT_RECORDED, now, a);
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
        return work_add(w, SWF_EVENT_ACTIVITY_TASK_TIMED_OUT, now, a);
    }
    case SWF_MSG_TIMER_FIRED:
        if (!swf_json_get(w->st->timers, m->timer_id, &v) ||
            json_object_get_int64(v) != m->started_event_id)
            goto ignored;
        a = obj();
        swf_json_add(a, "timerId", json_object_new_string(m->timer_id));
        swf_json_add(a, "startedEventId", json_object_new_int64(m->started_event_id));
        *wake = true;
        return work_add(w, SWF_EVENT_TIMER_FIRED, now, a);
    case SWF_MSG_EXECUTION_TIMED_OUT:
        a = obj();
        swf_json_add(a, "timeoutType", json_object_new_string("START_TO_CLOSE"));
        return work_add(w, SWF_EVENT_WORKFLOW_EXECUTION_TIMED_OUT, now, a);
    case SWF_MSG_SIGNAL:
        a = obj();
        swf_json_add(a, "signalName", json_object_new_string(m->signal_name));
        swf_json_add(a, "input", swf_json_ref(m->input));
        *wake = true;
        return work_add(w, SWF_EVENT_WORKFLOW_EXECUTION_SIGNALED, now, a);
    case SWF_MSG_CANCEL:
        a = obj();
        if (m->cause != NULL)
            swf_json_add(a, "cause", json_object_new_string(m->cause));
        *wake = true;
        return work_add(w, SWF_EVENT_WORKFLOW_EXECUTION_CANCEL_REQUESTED, now, a);
    case SWF_MSG_TERMINATE:
        a = obj();
        swf_json_add(a, "reason", json_object_new_string(m->reason ? m->reason : ""));
        swf_json_add(a, "details",
                     m->has_details ? swf_json_ref(m->details) : json_object_new_string(""));
        return work_add(w, SWF_EVENT_WORKFLOW_EXECUTION_TERMINATED, now, a);
    case SWF_MSG_NONE:
    case SWF_MSG_ACTIVITY_TASK:
        break;
    }
ignored:
    stat_add(&d->stats.ignored, 1);
    logf_(d, "execution %s: %s for %s%s changes nothing (already answered, closed or unknown)",
          w->id, swf_msg_type_name(m->type), m->activity_id ? "activity " : "",
          m->activity_id ? m->activity_id : (m->timer_id ? m->timer_id : "it"));
    return NULL;
}

/* One decision task on the execution (a decision task is scheduled). Sets
 * *again when cancellations were closed and a new task is scheduled. */
static swf_error_t *decision_task(swf_decider_t *d, work_t *w, int64_t now, bool *again)
{
    *again = false;
    json_object *a = obj();
    swf_json_add(a, "scheduledEventId", json_object_new_int64(w->st->decision_scheduled_id));
    swf_json_add(a, "identity", json_object_new_string(d->identity));
    swf_error_t *err = work_add(w, SWF_EVENT_DECISION_TASK_STARTED, now, a);
    if (err != NULL)
        return err;
    int64_t started = last_id(w);
    swf_asl_decisions_t ds = {0};
    err = swf_asl_exec_decide(w->st->exec, &ds);
    if (err != NULL)
        goto done;
    a = obj();
    swf_json_add(a, "scheduledEventId", json_object_new_int64(w->st->decision_scheduled_id));
    swf_json_add(a, "startedEventId", json_object_new_int64(started));
    err = work_add(w, SWF_EVENT_DECISION_TASK_COMPLETED, now, a);
    int64_t completed = last_id(w);
    size_t ncancel = 0;
    for (size_t i = 0; err == NULL && i < ds.count; i++) {
        a = ds.items[i].attrs;
        ds.items[i].attrs = NULL;
        swf_json_add(a, "decisionTaskCompletedEventId", json_object_new_int64(completed));
        if (ds.items[i].type == SWF_EVENT_ACTIVITY_TASK_CANCEL_REQUESTED)
            ncancel++;
        err = work_add(w, ds.items[i].type, now, a);
    }
    stat_add(&d->stats.decision_tasks, 1);
    if (err != NULL || ncancel == 0 || swf_asl_exec_status(w->st->exec) != SWF_ASL_RUNNING)
        goto done;
    /* Close the activities whose cancellation was decided. */
    for (size_t i = 0; err == NULL && i < w->events.count; i++) {
        const swf_event_t *ev = &w->events.items[i];
        int64_t sched;
        if (ev->id <= completed || ev->type != SWF_EVENT_ACTIVITY_TASK_CANCEL_REQUESTED ||
            open_activity(w, swf_json_get_string(ev->attrs, "activityId"), &sched) == NULL)
            continue;
        a = obj();
        swf_json_add(a, "scheduledEventId", json_object_new_int64(sched));
        swf_json_add(a, "startedEventId", json_object_new_int64(0));
        swf_json_add(a, "details", json_object_new_string("canceled by the decider"));
        err = work_add(w, SWF_EVENT_ACTIVITY_TASK_CANCELED, now, a);
        *again = true;
    }
    if (err == NULL && *again)
        err = work_add(w, SWF_EVENT_DECISION_TASK_SCHEDULED, now, obj());
done:
    swf_asl_decisions_free(&ds);
    return err;
}

/* Takes the execution's state from the cache (or starts a fresh one) and
 * clears what an earlier round built. */
static void work_state(swf_decider_t *d, work_t *w)
{
    swf_event_list_clear(&w->events);
    if (w->st == NULL) {
        w->st = swf_decider_cache_take(d->cache, w->id);
        if (w->st == NULL)
            w->st = swf_decider_state_new(d->cfg.secret);
    }
}

/* Applies the events loaded after the state's position, then the
 * execution's messages, and runs its decision tasks. The events to append
 * end in w->events. */
static swf_error_t *work_prepare(swf_decider_t *d, work_t *w, const swf_event_list_t *loaded)
{
    swf_error_t *err = NULL;
    for (size_t i = 0; err == NULL && i < loaded->count; i++)
        err = swf_decider_state_apply(w->st, &loaded->items[i]);
    if (err != NULL)
        return err;
    w->next_id = swf_asl_exec_last_event_id(w->st->exec) + 1;
    if (swf_asl_exec_status(w->st->exec) != SWF_ASL_RUNNING) {
        for (size_t i = 0; i < w->nmsgs; i++) {
            if (w->msgs[i]->type != SWF_MSG_DECIDE)
                stat_add(&d->stats.ignored, 1);
        }
        return NULL;
    }
    int64_t now = swf_time_now_ms();
    bool wake = false;
    for (size_t i = 0; err == NULL && i < w->nmsgs; i++) {
        if (swf_asl_exec_status(w->st->exec) == SWF_ASL_RUNNING)
            err = message_apply(d, w, w->msgs[i], now, &wake);
    }
    if (err != NULL || swf_asl_exec_status(w->st->exec) != SWF_ASL_RUNNING)
        return err;
    if (w->st->decision_started_id != 0) {
        /* A decision task left started by a decider that is gone (ours
         * append Started and Completed in one transaction, but a history
         * imported or written by other tools may hold one). */
        json_object *a = obj();
        swf_json_add(a, "scheduledEventId", json_object_new_int64(w->st->decision_scheduled_id));
        swf_json_add(a, "startedEventId", json_object_new_int64(w->st->decision_started_id));
        swf_json_add(a, "timeoutType", json_object_new_string("START_TO_CLOSE"));
        err = work_add(w, SWF_EVENT_DECISION_TASK_TIMED_OUT, now, a);
        wake = true;
    }
    if (err == NULL && w->st->decision_scheduled_id == 0 && wake)
        err = work_add(w, SWF_EVENT_DECISION_TASK_SCHEDULED, now, obj());
    bool again = w->st->decision_scheduled_id != 0;
    for (int round = 0; err == NULL && again; round++) {
        if (round >= DECISIONS_PER_BATCH)
            break; /* the rest waits for the next "decide" or the sweep */
        err = decision_task(d, w, now, &again);
    }
    return err;
}

/* ---- a batch -------------------------------------------------------------- */

typedef struct batch {
    work_t *works;
    size_t n, cap;
    json_object *index; /* execution id -> index into works */
    swf_msg_t *msgs;    /* parsed messages, one per Kafka message */
    size_t nmsgs;
} batch_t;

static work_t *batch_work(batch_t *b, const char *id, int32_t partition)
{
    json_object *v;
    if (swf_json_get(b->index, id, &v))
        return &b->works[json_object_get_int(v)];
    if (b->n == b->cap) {
        b->cap = b->cap ? b->cap * 2 : 64;
        b->works = realloc(b->works, b->cap * sizeof(*b->works));
        if (b->works == NULL)
            abort();
    }
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
    if (w->nmsgs == w->capmsgs) {
        w->capmsgs = w->capmsgs ? w->capmsgs * 2 : 4;
        w->msgs = realloc(w->msgs, w->capmsgs * sizeof(*w->msgs));
        if (w->msgs == NULL)
            abort();
    }
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
        posts[np] = (swf_history_post_t){d->cfg.kafka.dlq, keys[np], s, strlen(s)};
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

/* Publishes the activity tasks of the appended works and deletes their
 * outbox rows. A failure leaves the rows to swf-history's republishing. */
static swf_error_t *publish(swf_decider_t *d, batch_t *b)
{
    size_t n = 0, cap = 0;
    swf_history_post_t *posts = NULL;
    swf_history_outbox_key_t *keys = NULL;
    json_object **docs = NULL;
    char **topics = NULL;
    swf_error_t *err = NULL;
    for (size_t i = 0; i < b->n && err == NULL; i++) {
        work_t *w = &b->works[i];
        if (w->failed)
            continue;
        for (size_t k = 0; k < w->events.count && err == NULL; k++) {
            const swf_event_t *ev = &w->events.items[k];
            if (ev->type != SWF_EVENT_ACTIVITY_TASK_SCHEDULED)
                continue;
            if (n == cap) {
                cap = cap ? cap * 2 : 64;
                posts = realloc(posts, cap * sizeof(*posts));
                keys = realloc(keys, cap * sizeof(*keys));
                docs = realloc(docs, cap * sizeof(*docs));
                topics = realloc(topics, cap * sizeof(*topics));
                if (!posts || !keys || !docs || !topics)
                    abort();
            }
            json_object *tl;
            const char *list =
                swf_json_get(ev->attrs, "taskList", &tl) ? swf_json_get_string(tl, "name") : NULL;
            err = swf_msg_activity_task_new(d->cfg.secret, w->id, ev->id, ev->attrs, &docs[n]);
            if (err != NULL)
                break;
            size_t tlen = strlen(d->cfg.kafka.task_prefix) + strlen(list ? list : "") + 1;
            topics[n] = malloc(tlen);
            if (topics[n] == NULL)
                abort();
            swf_kafka_task_topic(&d->cfg.kafka, list ? list : "", topics[n], tlen);
            const char *s = swf_json_str(docs[n]);
            posts[n] = (swf_history_post_t){topics[n], w->id, s, strlen(s)};
            keys[n] = (swf_history_outbox_key_t){w->id, ev->id};
            n++;
        }
    }
    int64_t clock_us = mono_us();
    if (err == NULL && n > 0)
        err = swf_kafka_poster_send(d->poster, posts, n);
    stat_time(&d->stats.publish_us, &clock_us);
    if (err == NULL && n > 0)
        err = swf_history_outbox_delete(d->outbox, keys, n);
    stat_time(&d->stats.outbox_us, &clock_us);
    if (err == NULL)
        stat_add(&d->stats.tasks_published, n);
    for (size_t i = 0; i < n; i++) {
        json_object_put(docs[i]);
        free(topics[i]);
    }
    free(posts);
    free(keys);
    free(docs);
    free(topics);
    return err;
}

static void batch_free(batch_t *b, swf_decider_t *d, bool keep)
{
    for (size_t i = 0; i < b->n; i++) {
        work_t *w = &b->works[i];
        if (keep && !w->failed && w->st != NULL)
            swf_decider_cache_put(d->cache, w->id, w->partition, w->st);
        else
            swf_decider_state_free(w->st);
        swf_event_list_free(&w->events);
        free(w->msgs);
    }
    free(b->works);
    json_object_put(b->index);
    for (size_t i = 0; i < b->nmsgs; i++)
        swf_msg_clear(&b->msgs[i]);
    free(b->msgs);
}

/* Whether an execution's failure is the database's rather than its own (a
 * lost connection, a restart, a serialization failure). Such a failure
 * fails the whole batch, which is retried: dropping the execution instead
 * would commit the offsets past messages that left no trace. */
static bool transient(const swf_error_t *e)
{
    return swf_error_code(e) == SWF_E_DB && swf_error_retriable(e);
}

/* Processes one batch of inbox messages; NULL when the offsets may be
 * committed. */
static swf_error_t *batch_process(swf_decider_t *d, rd_kafka_message_t **km, size_t n)
{
    int64_t clock_us = mono_us();
    batch_t b = {.index = json_object_new_object()};
    b.msgs = calloc(n ? n : 1, sizeof(*b.msgs));
    swf_error_t **why = calloc(n ? n : 1, sizeof(*why));
    swf_history_append_t *appends = NULL;
    swf_error_t **errors = NULL;
    size_t *which = NULL, *lwhich = NULL;
    const char **load_ids = NULL;
    int64_t *load_after = NULL;
    swf_event_list_t *loaded = NULL;
    if (b.msgs == NULL || why == NULL)
        abort();
    bool any_dead = false;
    for (size_t i = 0; i < n; i++) {
        why[i] = swf_msg_parse(km[i]->payload, km[i]->len, d->cfg.secret, &b.msgs[i]);
        if (why[i] == NULL && b.msgs[i].type == SWF_MSG_ACTIVITY_TASK) {
            swf_msg_clear(&b.msgs[i]);
            why[i] = swf_error_new(SWF_E_INPUT, NULL, "activity.task belongs on a task topic");
        }
        if (why[i] != NULL) {
            any_dead = true;
            continue;
        }
        work_push(batch_work(&b, b.msgs[i].execution_id, km[i]->partition), &b.msgs[i]);
    }
    b.nmsgs = n;
    swf_error_t *err = any_dead ? dead_letters(d, km, why, n) : NULL;
    if (err != NULL)
        goto done;

    appends = calloc(b.n ? b.n : 1, sizeof(*appends));
    errors = calloc(b.n ? b.n : 1, sizeof(*errors));
    which = calloc(b.n ? b.n : 1, sizeof(*which));
    lwhich = calloc(b.n ? b.n : 1, sizeof(*lwhich));
    load_ids = calloc(b.n ? b.n : 1, sizeof(*load_ids));
    load_after = calloc(b.n ? b.n : 1, sizeof(*load_after));
    loaded = calloc(b.n ? b.n : 1, sizeof(*loaded));
    if (!appends || !errors || !which || !lwhich || !load_ids || !load_after || !loaded)
        abort();
    bool *todo = calloc(b.n ? b.n : 1, sizeof(*todo));
    for (size_t i = 0; i < b.n; i++)
        todo[i] = true;
    for (int round = 0; round < CONFLICT_ROUNDS && err == NULL; round++) {
        /* What each execution to do gained since its cached position (or
         * its whole history), in one round trip for the batch. */
        size_t nl = 0;
        for (size_t i = 0; i < b.n; i++) {
            if (!todo[i])
                continue;
            work_t *w = &b.works[i];
            work_state(d, w);
            load_ids[nl] = w->id;
            load_after[nl] = swf_asl_exec_last_event_id(w->st->exec);
            lwhich[nl++] = i;
        }
        for (size_t k = 0; k < nl; k++)
            swf_event_list_clear(&loaded[k]);
        err = swf_history_pg_load_batch(d->store, load_ids, load_after, nl, loaded, errors);
        if (err != NULL)
            break;
        size_t na = 0;
        for (size_t k = 0; k < nl; k++) {
            size_t i = lwhich[k];
            work_t *w = &b.works[i];
            todo[i] = false;
            swf_error_t *e = errors[k];
            errors[k] = NULL;
            if (e == NULL && err == NULL)
                e = work_prepare(d, w, &loaded[k]);
            if (err != NULL) {
                swf_error_free(e); /* the batch is redone as a whole */
                continue;
            }
            if (e != NULL && transient(e)) {
                err = e; /* the whole batch waits for the database */
                continue;
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
            appends[na] =
                (swf_history_append_t){w->id, w->next_id, w->events.items, w->events.count};
            which[na++] = i;
        }
        if (err != NULL || na == 0)
            break;
        stat_time(&d->stats.decide_us, &clock_us);
        err = swf_history_pg_batch_append(d->store, appends, na, errors);
        stat_time(&d->stats.append_us, &clock_us);
        if (err != NULL)
            break;
        bool retry = false;
        for (size_t k = 0; k < na; k++) {
            work_t *w = &b.works[which[k]];
            if (errors[k] == NULL) {
                stat_add(&d->stats.events, w->events.count);
                continue;
            }
            /* The cached state holds events that were not written. */
            swf_decider_state_free(w->st);
            w->st = NULL;
            swf_event_list_clear(&w->events);
            if (swf_error_code(errors[k]) == SWF_E_CONFLICT) {
                stat_add(&d->stats.conflicts, 1);
                todo[which[k]] = true;
                retry = true;
            } else if (transient(errors[k])) {
                /* Appended or not, it is redone with the whole batch. */
                if (err == NULL)
                    err = errors[k];
                else
                    swf_error_free(errors[k]);
                errors[k] = NULL;
                continue;
            } else {
                logf_(d, "execution %s: %s", w->id, swf_error_message(errors[k]));
                w->failed = true;
            }
            swf_error_free(errors[k]);
            errors[k] = NULL;
        }
        if (!retry || err != NULL)
            break;
    }
    free(todo);
    if (err == NULL) {
        /* Works that still lost after every round wrote nothing: their
         * messages are delivered again only if we do not commit; a later
         * "decide" (the sweep) settles them, so they are just dropped. */
        swf_error_t *perr = publish(d, &b);
        if (perr != NULL) {
            logf_(d, "publishing activity tasks: %s (swf-history will republish)",
                  swf_error_message(perr));
            swf_error_free(perr);
        }
    }
done:
    batch_free(&b, d, err == NULL);
    for (size_t i = 0; i < n; i++)
        swf_error_free(why[i]);
    free(why);
    free(appends);
    free(errors);
    free(which);
    free(lwhich);
    free(load_ids);
    free(load_after);
    for (size_t k = 0; loaded != NULL && k < b.n; k++)
        swf_event_list_free(&loaded[k]);
    free(loaded);
    return err;
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
    swf_error_t *err = swf_history_pg_new(cfg->conninfo, &d->store);
    if (err == NULL)
        err = swf_history_pg_connect(cfg->conninfo, &d->outbox);
    if (err == NULL)
        err = swf_history_pg_commit_async(d->outbox);
    if (err == NULL)
        err = swf_kafka_producer_new(cfg->kafka.brokers, &d->producer);
    if (err == NULL) {
        d->poster = swf_kafka_poster_new(d->producer, cfg->kafka.task_partitions);
        err = swf_kafka_poster_topic(d->poster, cfg->kafka.inbox);
    }
    if (err == NULL)
        err =
            swf_kafka_consumer_new(cfg->kafka.brokers, d->cfg.group, on_rebalance, d, &d->consumer);
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

/*
 * Commits the offsets after a processed batch: per partition, the one after
 * its last message. Asynchronously: the batch is durable already, so a
 * commit that fails or is lost in a crash only makes its messages come
 * again, and they change nothing (the history reflects them). The offsets
 * are the batch's own, not the consumer's position, which may be further.
 */
static void offsets_commit(swf_decider_t *d, rd_kafka_message_t **km, size_t n)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(8);
    for (size_t i = 0; i < n; i++) {
        const char *topic = rd_kafka_topic_name(km[i]->rkt);
        rd_kafka_topic_partition_t *p =
            rd_kafka_topic_partition_list_find(l, topic, km[i]->partition);
        if (p == NULL)
            p = rd_kafka_topic_partition_list_add(l, topic, km[i]->partition);
        if (km[i]->offset + 1 > p->offset)
            p->offset = km[i]->offset + 1;
    }
    rd_kafka_resp_err_t code = l->cnt > 0 ? rd_kafka_commit(d->consumer, l, 1) : 0;
    if (code != RD_KAFKA_RESP_ERR_NO_ERROR)
        logf_(d, "committing offsets: %s", rd_kafka_err2str(code));
    rd_kafka_topic_partition_list_destroy(l);
}

void swf_decider_run(swf_decider_t *d)
{
    rd_kafka_message_t **km = calloc(d->cfg.batch_max, sizeof(*km));
    if (km == NULL)
        abort();
    int backoff_ms = 0;
    while (!d->stop) {
        size_t n = 0;
        rd_kafka_message_t *m = rd_kafka_consumer_poll(d->consumer, 100);
        if (m == NULL)
            continue;
        /* A batch is what has arrived (up to batch_max), waiting at most
         * batch_wait_ms for more: while a batch is being decided and
         * committed the next one gathers by itself, so a wait would only
         * add latency. */
        int64_t gather_us = mono_us();
        int64_t until = mono_ms() + d->cfg.batch_wait_ms;
        for (;;) {
            if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
                km[n++] = m;
            } else {
                if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
                    logf_(d, "consumer: %s", rd_kafka_message_errstr(m));
                rd_kafka_message_destroy(m);
            }
            int64_t left = until - mono_ms();
            if (n >= d->cfg.batch_max)
                break;
            m = rd_kafka_consumer_poll(d->consumer, left > 0 ? (int)left : 0);
            if (m == NULL)
                break;
        }
        stat_time(&d->stats.gather_us, &gather_us);
        if (n == 0)
            continue;
        /* A batch that fails as a whole (the database is down) is retried
         * as it is, with a growing pause, until it passes or we stop: the
         * offsets must not move past messages that left no trace. */
        int64_t logged_ms = 0;
        for (unsigned failures = 0;; failures++) {
            swf_error_t *err = batch_process(d, km, n);
            if (err == NULL) {
                if (failures > 0)
                    logf_(d, "batch of %zu messages passed after %u failures", n, failures);
                backoff_ms = 0;
                break;
            }
            /* Logged once, then every 30 s while it lasts. */
            if (failures == 0 || mono_ms() - logged_ms >= 30000) {
                logf_(d, "batch of %zu messages: %s; retrying", n, swf_error_message(err));
                logged_ms = mono_ms();
            }
            swf_error_free(err);
            backoff_ms = backoff_ms ? (backoff_ms * 2 > 5000 ? 5000 : backoff_ms * 2) : 100;
            for (int slept = 0; slept < backoff_ms && !d->stop; slept += 50)
                usleep(50000);
            if (d->stop)
                break;
        }
        stat_add(&d->stats.batches, 1);
        stat_add(&d->stats.messages, n);
        if (!d->stop) {
            int64_t clock_us = mono_us();
            offsets_commit(d, km, n);
            stat_time(&d->stats.commit_us, &clock_us);
        }
        for (size_t i = 0; i < n; i++)
            rd_kafka_message_destroy(km[i]);
    }
    free(km);
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

void swf_decider_free(swf_decider_t *d)
{
    if (d == NULL)
        return;
    if (d->consumer != NULL) {
        rd_kafka_consumer_close(d->consumer);
        rd_kafka_destroy(d->consumer);
    }
    if (d->producer != NULL) {
        rd_kafka_flush(d->producer, 5000);
        rd_kafka_destroy(d->producer);
    }
    swf_kafka_poster_free(d->poster);
    swf_decider_cache_free(d->cache);
    swf_history_store_free(d->store);
    swf_history_store_free(d->outbox);
    free(d);
}
