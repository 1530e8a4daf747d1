/*
 * worker.c - one consumer of a task topic and one producer to the inbox.
 *
 * The hard part of a Kafka worker is the offsets. Tasks of one partition are
 * handed out in order but answered in any order, and an offset may only be
 * committed once everything before it is finished, or a crash would lose a
 * task. So every consumed message gets a `pending` record in its
 * partition's list, in offset order; an answer's delivery report marks it
 * done, and the commit point of the partition moves to just past the longest
 * done prefix of the list. Nothing is committed on a timer or on close that
 * was not acknowledged first (enable.auto.commit is off). A record whose
 * answer Kafka refused stays in the list forever: the partition stops
 * committing, and a restart redelivers from there. Duplicates are harmless
 * (the decider ignores a second answer); losses are not.
 *
 * Each task handed out is reported with activity.started (best effort, no
 * offset waits for it): the decider records the start then.
 *
 * Back-pressure is the in-flight count: at the limit poll hands out nothing.
 * It first waits for a slot without touching the consumer (up to a second
 * since it last polled it); what librdkafka fetched meanwhile stays in its
 * queue, ready for the freed slot. A worker still full after that keeps
 * calling the consumer, so the process stays in its group however long the
 * tasks take, and each partition that delivers a message then is rewound
 * to it (rd_kafka_seek) and paused, so the message comes again after the
 * resume that the next free slot brings.
 *
 * Where the worker pauses and resumes is the delicate part. librdkafka
 * (2.0) orders the operations on a partition by a version barrier that is
 * taken, then queued, by whichever thread asks: its main thread for the
 * start of a partition's fetcher (once an assignment's committed offsets
 * are in), the application for a pause, a resume or a seek. An operation
 * queued behind a newer barrier is dropped. So a resume from the
 * application that falls between the two steps of the fetcher's start
 * drops the start, and the partition stays assigned and is never fetched
 * until the next rebalance; a worker that resumed every new assignment
 * right after rd_kafka_assign got no task for a minute (CI, under load).
 * The worker therefore pauses, resumes and seeks a partition only where
 * no start of it can be in flight: in the poll, once the partition has
 * delivered a message in its current assignment; in the rebalance
 * callback, before rd_kafka_assign. The callback resumes the whole new
 * assignment, since librdkafka keeps a pause across a revoke, and a
 * partition paused before a lost session otherwise came back paused.
 *
 * Deliberately not done: verifying task tokens (workers have no secret),
 * retrying refused answers by hand (librdkafka retries until
 * message.timeout.ms), and threads of our own (delivery reports are served by
 * swf_worker_poll, which every worker loop calls anyway).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "protocol/alloc.h"
#include "protocol/json.h"
#include "worker/internal.h"

/* How long a full worker waits for a slot without polling its consumer:
 * past it, it pauses its partitions and polls (to stay in its group and
 * serve rebalances). Pausing is kept for long waits because a resume costs
 * about a second with librdkafka 2.0 (its broker thread only sees the
 * resume at its next idle wake-up), which at the limit made every freed
 * slot wait that long for its next task. */
#define SWF_WORKER_FULL_POLL_MS 1000

_Static_assert(SWF_WORKER_CLOSE_MS == SWF_KAFKA_CLOSE_MS, "one close bound for every process");

/* Partitions of the task topic one process tracks (bounds the table). */
#define PARTITIONS_MAX 100000

typedef struct partition {
    struct partition *next;
    int32_t id;
    swf_worker__pending_t *head, *tail;
    int64_t commit_offset; /* the next offset to commit; -1: nothing new */
    bool paused;           /* paused by hold(), to resume when a slot frees */
} partition_t;

struct swf_worker {
    rd_kafka_t *consumer, *producer;
    rd_kafka_queue_t *consumer_queue; /* to end a poll's wait (slot_release) */
    char *task_topic, *inbox_topic, *dlq_topic, *group_id, *identity;
    unsigned max_in_flight;

    pthread_mutex_t lock; /* guards everything below */
    unsigned in_flight;
    pthread_cond_t slot_freed; /* signalled by slot_release */
    int64_t polled_ms;         /* when the consumer was last polled */
    unsigned npartitions;
    partition_t *partitions;
    bool paused;       /* full past the wait for a slot: the consumer is polled */
    swf_error_t *lost; /* the first answer Kafka refused, reported by the next poll */
};

static char *fmt2(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *d = malloc(n);
    if (d == NULL)
        abort();
    snprintf(d, n, "%s%s", a, b);
    return d;
}

/* ---- pending records and commit points (all under w->lock) ---- */

static void pending_unref(swf_worker__pending_t *p)
{
    if (p != NULL && --p->refs == 0)
        free(p);
}

static partition_t *partition_find(swf_worker_t *w, int32_t id)
{
    for (partition_t *p = w->partitions; p; p = p->next)
        if (p->id == id)
            return p;
    return NULL;
}

static partition_t *partition_get(swf_worker_t *w, int32_t id)
{
    partition_t *p = partition_find(w, id);
    if (p != NULL || w->npartitions >= PARTITIONS_MAX)
        return p;
    p = calloc(1, sizeof(*p));
    if (p == NULL)
        abort();
    p->id = id;
    p->commit_offset = -1;
    p->next = w->partitions;
    w->partitions = p;
    w->npartitions++;
    return p;
}

static void partition_drop(swf_worker_t *w, partition_t *p)
{
    for (partition_t **pp = &w->partitions; *pp; pp = &(*pp)->next) {
        if (*pp == p) {
            *pp = p->next;
            break;
        }
    }
    swf_worker__pending_t *q = p->head;
    while (q != NULL) {
        swf_worker__pending_t *next = q->next;
        q->listed = false;
        q->next = NULL;
        pending_unref(q);
        q = next;
    }
    free(p);
    w->npartitions--;
}

/* A new record for a consumed message, listed in its partition. */
static swf_worker__pending_t *pending_add(swf_worker_t *w, int32_t partition, int64_t offset)
{
    swf_worker__pending_t *q = calloc(1, sizeof(*q));
    if (q == NULL)
        abort();
    q->partition = partition;
    q->offset = offset;
    q->state = SWF_WORKER__HELD;
    q->refs = 1;
    partition_t *p = partition_get(w, partition);
    if (p != NULL) {
        q->refs++;
        q->listed = true;
        if (p->tail)
            p->tail->next = q;
        else
            p->head = q;
        p->tail = q;
    }
    return q;
}

/* Moves the commit point of q's partition past its done prefix. */
static void partition_advance(swf_worker_t *w, int32_t id)
{
    partition_t *p = partition_find(w, id);
    if (p == NULL)
        return;
    while (p->head != NULL && p->head->state == SWF_WORKER__DONE) {
        swf_worker__pending_t *q = p->head;
        p->head = q->next;
        if (p->head == NULL)
            p->tail = NULL;
        p->commit_offset = q->offset + 1;
        q->listed = false;
        q->next = NULL;
        pending_unref(q);
    }
}

/* Collects the commit points that moved (NULL when none), under the lock. */
static rd_kafka_topic_partition_list_t *commits_take(swf_worker_t *w)
{
    rd_kafka_topic_partition_list_t *list = NULL;
    for (partition_t *p = w->partitions; p; p = p->next) {
        if (p->commit_offset < 0)
            continue;
        if (list == NULL)
            list = rd_kafka_topic_partition_list_new(4);
        rd_kafka_topic_partition_list_add(list, w->task_topic, p->id)->offset = p->commit_offset;
        p->commit_offset = -1;
    }
    return list;
}

/* Commits what moved; errors of an async commit come back to nobody, since
 * the next commit covers the same offsets again. */
static void commits_flush(swf_worker_t *w, bool sync)
{
    pthread_mutex_lock(&w->lock);
    rd_kafka_topic_partition_list_t *list = commits_take(w);
    pthread_mutex_unlock(&w->lock);
    if (list == NULL)
        return;
    swf_error_free(swf_kafka_commit_offsets(w->consumer, list, !sync));
    rd_kafka_topic_partition_list_destroy(list);
}

/* ---- librdkafka callbacks ---- */

/* Delivery report of an answer, a heartbeat or a dead-letter entry. */
static void on_delivery(void *ctx, void *msg_opaque, rd_kafka_resp_err_t result)
{
    swf_worker_t *w = ctx;
    swf_worker__pending_t *q = msg_opaque;
    if (q == NULL)
        return; /* a heartbeat: the next one makes up for a lost one */
    pthread_mutex_lock(&w->lock);
    if (result == RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (q->state != SWF_WORKER__LOST) {
            q->state = SWF_WORKER__DONE;
            if (q->listed)
                partition_advance(w, q->partition);
        }
    } else if (q->state != SWF_WORKER__DONE) {
        q->state = SWF_WORKER__LOST;
        if (w->lost == NULL) {
            char what[128];
            snprintf(what, sizeof(what), "answer to the task at %s [%d] offset %lld", w->task_topic,
                     (int)q->partition, (long long)q->offset);
            w->lost = swf_kafka_error(result, what);
        }
    }
    pending_unref(q);
    pthread_mutex_unlock(&w->lock);
}

static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    swf_worker_t *w = opaque;
    swf_error_t *failed = NULL;
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        /* Resumed, always, and before the assign (see the top of the
         * file): librdkafka (2.0) keeps a partition's pause across an
         * unassign, so one paused before a revoke came back paused, and
         * the worker stalled. A partition this process never had is
         * skipped; it has no pause to clear. A worker that is full pauses
         * the new partitions as they deliver, in the poll. */
        rd_kafka_resume_partitions(rk, parts);
        failed = swf_kafka_rebalance_apply(rk, err, parts);
    } else {
        /* Revoked (or an error): commit what is acknowledged, then forget
         * the partitions; their open tasks are still answered, and the
         * next owner may deliver them again. */
        commits_flush(w, true);
        pthread_mutex_lock(&w->lock);
        for (int i = 0; i < parts->cnt; i++) {
            partition_t *p = partition_find(w, parts->elems[i].partition);
            if (p != NULL)
                partition_drop(w, p);
        }
        pthread_mutex_unlock(&w->lock);
        failed = swf_kafka_rebalance_apply(rk, err, parts);
    }
    /* Only a misuse of librdkafka's API fails here; the consumer then
     * reports it through the poll. */
    swf_error_free(failed);
}

/* ---- lifecycle ---- */

static bool name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 200)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return false;
    }
    return true;
}

/* The consumer of the task topic and the producer of answers. The
 * producer is not idempotent: librdkafka 2.0's idempotent producer reported
 * an answer delivered that no broker ever stored (the storm, tests/storm:
 * the partition's leader changed while the producer's first request to it
 * was in flight; the next answers went in with sequence numbers 1, 2, 3 and
 * sequence 0 was taken for written), and the worker committed past the
 * task. Plain acks=all with retries delivers at least once; a duplicate
 * answer changes nothing, and a heartbeat retried after the answer is
 * ignored. It holds an answer for librdkafka's own 300 s rather than the
 * daemons' SWF_KAFKA_SEND_TIMEOUT_MS, since a lost answer stops its
 * partition's commits until the process restarts (README, "Outages"). */
static swf_error_t *clients_new(swf_worker_t *w, const swf_worker_config_t *config)
{
    swf_kafka_producer_config_t pc = {.brokers = config->brokers,
                                      .client_id = w->identity,
                                      .send_timeout_ms = 300000,
                                      .on_delivery = on_delivery,
                                      .ctx = w};
    swf_kafka_consumer_config_t cc = {.brokers = config->brokers,
                                      .group = w->group_id,
                                      .client_id = w->identity,
                                      .session_timeout_ms = (int)config->session_timeout_ms,
                                      .on_rebalance = on_rebalance,
                                      .opaque = w};
    swf_error_t *err = swf_kafka_producer_new(&pc, &w->producer);
    if (err == NULL)
        err = swf_kafka_consumer_new(&cc, &w->consumer);
    if (err == NULL) {
        w->consumer_queue = rd_kafka_queue_get_consumer(w->consumer);
        const char *topics[1] = {w->task_topic};
        err = swf_kafka_subscribe(w->consumer, topics, 1);
    }
    return err;
}

swf_error_t *swf_worker_new(const swf_worker_config_t *config, swf_worker_t **out)
{
    *out = NULL;
    swf_error_t *err = NULL;
    if (config->brokers == NULL || !*config->brokers)
        return swf_error_new(SWF_E_INPUT, NULL, "no Kafka brokers given");
    if (config->task_list == NULL || !name_ok(config->task_list))
        return swf_error_new(SWF_E_INPUT, NULL,
                             "task list must be 1 to 200 bytes of [A-Za-z0-9._-]");
    if (config->max_in_flight > SWF_WORKER_IN_FLIGHT_MAX)
        return swf_error_new(SWF_E_LIMIT, NULL, "max in flight exceeds %d",
                             SWF_WORKER_IN_FLIGHT_MAX);
    if (config->identity != NULL && strlen(config->identity) > SWF_WORKER_NAME_BYTES_MAX)
        return swf_error_new(SWF_E_LIMIT, NULL, "identity exceeds %d bytes",
                             SWF_WORKER_NAME_BYTES_MAX);
    if (config->identity != NULL &&
        swf_json_utf8_invalid_at(config->identity, strlen(config->identity)) <
            strlen(config->identity))
        return swf_error_new(SWF_E_INPUT, NULL, "identity is not UTF-8 text");

    swf_worker_t *w = calloc(1, sizeof(*w));
    if (w == NULL)
        abort();
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->slot_freed, NULL);
    w->max_in_flight = config->max_in_flight ? config->max_in_flight : 1;
    swf_kafka_names_t env;
    swf_kafka_names_env(&env);
    w->task_topic = fmt2(config->task_topic_prefix ? config->task_topic_prefix : env.task_prefix,
                         config->task_list);
    w->inbox_topic = swf_strdup(config->inbox_topic ? config->inbox_topic : env.inbox);
    w->dlq_topic = swf_strdup(config->dlq_topic ? config->dlq_topic : env.dlq);
    w->group_id =
        config->group_id ? swf_strdup(config->group_id) : fmt2("swf-workers.", config->task_list);
    if (config->identity != NULL) {
        w->identity = swf_strdup(config->identity);
    } else {
        char host[128] = "localhost", id[200];
        gethostname(host, sizeof(host) - 1);
        host[sizeof(host) - 1] = '\0';
        snprintf(id, sizeof(id), "%s:%ld", host, (long)getpid());
        w->identity = swf_strdup(id);
    }

    err = clients_new(w, config);
    if (err != NULL) {
        swf_worker_free(w);
        return err;
    }
    *out = w;
    return NULL;
}

/* The last commit, before the group's goodbye, on the closing thread:
 * the rebalance callback the close runs uses w. */
static void consumer_close_first(void *arg)
{
    swf_worker_t *w = arg;
    pthread_mutex_lock(&w->lock);
    if (w->consumer_queue != NULL)
        rd_kafka_queue_destroy(w->consumer_queue);
    w->consumer_queue = NULL;
    pthread_mutex_unlock(&w->lock);
    commits_flush(w, true);
}

/* Everything but the consumer. */
static void worker_free_rest(void *arg)
{
    swf_worker_t *w = arg;
    /* What swf_worker_close's flush did not deliver is given up (its
     * partition is not committed past it), not waited for again. */
    if (w->producer != NULL)
        rd_kafka_purge(w->producer, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    swf_kafka_producer_free(w->producer);
    while (w->partitions != NULL)
        partition_drop(w, w->partitions);
    swf_error_free(w->lost);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->slot_freed);
    free(w->task_topic);
    free(w->inbox_topic);
    free(w->dlq_topic);
    free(w->group_id);
    free(w->identity);
    free(w);
}

swf_error_t *swf_worker_close(swf_worker_t *w)
{
    if (w == NULL)
        return NULL;
    if (w->producer != NULL)
        rd_kafka_flush(w->producer, SWF_WORKER_CLOSE_MS);
    if (w->consumer != NULL &&
        !swf_kafka_consumer_close(w->consumer, SWF_WORKER_CLOSE_MS, consumer_close_first,
                                  worker_free_rest, w)) {
        /* w now belongs to the close that overran: freed if it ever ends. */
        return swf_error_new(SWF_E_KAFKA, NULL,
                             "the consumer of %s did not leave its group within %d ms (Kafka "
                             "did not confirm): abandoned; its unanswered tasks go to other "
                             "workers after the group's session timeout",
                             w->task_topic, SWF_WORKER_CLOSE_MS);
    }
    worker_free_rest(w);
    return NULL;
}

void swf_worker_free(swf_worker_t *w)
{
    swf_error_free(swf_worker_close(w));
}

unsigned swf_worker_in_flight(swf_worker_t *w)
{
    pthread_mutex_lock(&w->lock);
    unsigned n = w->in_flight;
    pthread_mutex_unlock(&w->lock);
    return n;
}

const char *swf_worker_identity(const swf_worker_t *w)
{
    return w->identity;
}

/* ---- sending ---- */

/*
 * Queues one message; `q` (may be NULL) gets a reference for the delivery
 * report. Waits while librdkafka's queue is full, within a bound.
 */
static swf_error_t *queue_send(swf_worker_t *w, const char *topic, const char *key,
                               json_object *msg, swf_worker__pending_t *q)
{
    if (q != NULL) {
        pthread_mutex_lock(&w->lock);
        q->refs++;
        pthread_mutex_unlock(&w->lock);
    }
    const char *text = swf_msg_str(msg);
    swf_error_t *err = swf_kafka_produce(w->producer, topic, key, text, strlen(text), q);
    if (err != NULL && q != NULL) {
        pthread_mutex_lock(&w->lock);
        pending_unref(q);
        pthread_mutex_unlock(&w->lock);
    }
    return err;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Releases a task's slot (w->lock held) and ends the wait of a poll of the
 * full worker: one waiting for a slot (slot_wait), or one waiting in Kafka
 * with the partitions paused, which would learn of the free slot only at
 * its timeout. */
static void slot_release(swf_worker_t *w)
{
    w->in_flight--;
    pthread_cond_broadcast(&w->slot_freed);
    if (w->paused && w->consumer_queue != NULL)
        rd_kafka_queue_yield(w->consumer_queue);
}

/* Sends an answer and, the first time, releases the task's slot. */
static swf_error_t *answer(swf_worker_t *w, swf_worker_task_t *t, json_object *m)
{
    if (t->worker != w || t->pending == NULL)
        abort(); /* a programmer error: a task of another worker, or a parsed one */
    swf_error_t *err = queue_send(w, w->inbox_topic, t->msg.execution_id, m, t->pending);
    if (err != NULL)
        return err;
    pthread_mutex_lock(&w->lock);
    if (!t->answered) {
        t->answered = true;
        slot_release(w);
        if (t->pending->state == SWF_WORKER__HELD)
            t->pending->state = SWF_WORKER__SENT;
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

/* The history stores JSON in PostgreSQL's jsonb, which has no U+0000: a
 * message holding it is refused where it is read (KAFKA.md). */
static swf_error_t *nul_check(json_object *v, const char *what)
{
    if (!swf_json_holds_nul(v))
        return NULL;
    return swf_error_new(SWF_E_INPUT, NULL,
                         "the %s holds the character U+0000, which a history cannot store", what);
}

swf_error_t *swf_worker_complete(swf_worker_t *w, swf_worker_task_t *task, json_object *result)
{
    swf_error_t *nul = nul_check(result, "result");
    if (nul != NULL)
        return nul;
    json_object *m = swf_msg_activity_completed_new(task->msg.task_token, result, w->identity);
    swf_error_t *err = answer(w, task, m);
    json_object_put(m);
    return err;
}

swf_error_t *swf_worker_fail(swf_worker_t *w, swf_worker_task_t *task, const char *error,
                             const char *cause)
{
    json_object *m = swf_msg_activity_failed_new(
        task->msg.task_token, error && *error ? error : "States.TaskFailed", cause, w->identity);
    swf_error_t *err = answer(w, task, m);
    json_object_put(m);
    return err;
}

swf_error_t *swf_worker_heartbeat(swf_worker_t *w, swf_worker_task_t *task, json_object *details)
{
    if (task->worker != w)
        abort();
    swf_error_t *nul = nul_check(details, "heartbeat's details");
    if (nul != NULL)
        return nul;
    json_object *m = swf_msg_activity_heartbeat_new(task->msg.task_token, details, details != NULL);
    swf_error_t *err = queue_send(w, w->inbox_topic, task->msg.execution_id, m, NULL);
    json_object_put(m);
    return err;
}

void swf_worker_task_free(swf_worker_task_t *t)
{
    if (t == NULL)
        return;
    swf_worker_t *w = t->worker;
    if (w != NULL) {
        pthread_mutex_lock(&w->lock);
        if (!t->answered)
            slot_release(w); /* abandoned: the record stays HELD, see worker.h */
        pending_unref(t->pending);
        pthread_mutex_unlock(&w->lock);
    }
    swf_worker__task_destroy(t);
}

/* ---- receiving ---- */

/* A dead-letter entry for a message that is not a task (KAFKA.md, "Dead letters"). */
static swf_error_t *dead_letter(swf_worker_t *w, const rd_kafka_message_t *m, const char *reason,
                                swf_worker__pending_t *q)
{
    /* The protocol's entry (the message cut, and kept in base64 when it is
     * not UTF-8), with who refused it. */
    json_object *d = swf_msg_dead_letter_new(reason, w->task_topic, m->partition, m->offset,
                                             m->payload, m->payload ? m->len : 0);
    swf_json_add(d, "consumer", json_object_new_string(w->group_id));
    swf_json_add(d, "identity", json_object_new_string(w->identity));
    char *key = NULL;
    if (m->key != NULL) {
        key = strndup(m->key, m->key_len);
        if (key == NULL)
            abort();
    }
    swf_error_t *err = queue_send(w, w->dlq_topic, key, d, q);
    free(key);
    json_object_put(d);
    return err;
}

/* Tells swf the task was taken (activity.started, with the worker's
 * identity): the decider records ActivityTaskStarted now, and the heartbeat
 * timeout counts from here. Best effort: when it cannot be queued, the
 * answer records the start, as it does for workers that never send one. */
static void started_send(swf_worker_t *w, swf_worker_task_t *t)
{
    json_object *m = swf_msg_activity_started_new(t->msg.task_token, w->identity);
    swf_error_free(queue_send(w, w->inbox_topic, t->msg.execution_id, m, NULL));
    json_object_put(m);
}

/* Handles one consumed message: a task for *out, or a dead letter. */
static swf_error_t *take(swf_worker_t *w, const rd_kafka_message_t *m, swf_worker_task_t **out)
{
    swf_worker_task_t *t = NULL;
    swf_error_t *perr = swf_worker_task_parse(m->payload, m->len, &t);
    pthread_mutex_lock(&w->lock);
    swf_worker__pending_t *q = pending_add(w, m->partition, m->offset);
    if (perr == NULL) {
        w->in_flight++;
        t->worker = w;
        t->pending = q; /* the task's reference */
        t->partition = m->partition;
        t->offset = m->offset;
        *out = t;
        pthread_mutex_unlock(&w->lock);
        return NULL;
    }
    q->state = SWF_WORKER__SENT;
    pthread_mutex_unlock(&w->lock);
    swf_error_t *err = dead_letter(w, m, swf_error_message(perr), q);
    swf_error_free(perr);
    pthread_mutex_lock(&w->lock);
    if (err != NULL)
        q->state = SWF_WORKER__LOST;
    pending_unref(q); /* the dead-letter send holds its own */
    pthread_mutex_unlock(&w->lock);
    return err;
}

/* Waits (w->lock held) up to timeout_ms for a free slot, but no longer
 * than until the consumer is due to be polled; true when one is free. */
static bool slot_wait(swf_worker_t *w, int timeout_ms)
{
    int64_t now = mono_ms(), until = now + (timeout_ms > 0 ? timeout_ms : 0);
    if (until > w->polled_ms + SWF_WORKER_FULL_POLL_MS)
        until = w->polled_ms + SWF_WORKER_FULL_POLL_MS;
    while (w->in_flight >= w->max_in_flight && now < until) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t ns = ts.tv_nsec + (until - now) * 1000000;
        ts.tv_sec += ns / 1000000000;
        ts.tv_nsec = ns % 1000000000;
        pthread_cond_timedwait(&w->slot_freed, &w->lock, &ts);
        now = mono_ms();
    }
    return w->in_flight < w->max_in_flight;
}

/* At the limit: rewinds the partition to this message, which the caller
 * drops, and pauses it. The partition just delivered, so its fetcher runs
 * and no start of it can be in flight (see the top of the file). It is
 * paused again on every message it delivers while the worker is full, so
 * a pause that librdkafka dropped (one queued behind the pause of a
 * rebalance starting) costs one more message put back, not a full queue.
 * Past PARTITIONS_MAX the partition is only rewound, never paused: a
 * pause nobody records would never be resumed. */
static void hold(swf_worker_t *w, const rd_kafka_message_t *m)
{
    rd_kafka_seek(m->rkt, m->partition, m->offset, 0);
    pthread_mutex_lock(&w->lock);
    partition_t *p = partition_get(w, m->partition);
    if (p != NULL)
        p->paused = true;
    pthread_mutex_unlock(&w->lock);
    if (p == NULL)
        return;
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, w->task_topic, m->partition);
    rd_kafka_pause_partitions(w->consumer, l);
    rd_kafka_topic_partition_list_destroy(l);
}

/* The partitions hold() paused, their marks cleared (NULL when none),
 * under w->lock. A revoke drops a partition's record with its mark; the
 * next assignment of it resumes it. */
static rd_kafka_topic_partition_list_t *held_take(swf_worker_t *w)
{
    rd_kafka_topic_partition_list_t *list = NULL;
    for (partition_t *p = w->partitions; p; p = p->next) {
        if (!p->paused)
            continue;
        if (list == NULL)
            list = rd_kafka_topic_partition_list_new(4);
        rd_kafka_topic_partition_list_add(list, w->task_topic, p->id);
        p->paused = false;
    }
    return list;
}

swf_error_t *swf_worker_poll(swf_worker_t *w, int timeout_ms, swf_worker_task_t **out)
{
    *out = NULL;
    swf_error_t *err = NULL;
    rd_kafka_poll(w->producer, 0); /* delivery reports move commit points */
    commits_flush(w, false);

    pthread_mutex_lock(&w->lock);
    err = w->lost;
    w->lost = NULL;
    if (err != NULL) {
        /* Before the pause state is touched: the partitions hold() paused
         * keep their marks, and a later poll with a free slot resumes them. */
        pthread_mutex_unlock(&w->lock);
        return err;
    }
    bool full = w->in_flight >= w->max_in_flight;
    if (full && !w->paused)
        full = !slot_wait(w, timeout_ms);
    bool overdue = mono_ms() - w->polled_ms >= SWF_WORKER_FULL_POLL_MS;
    if (full && !w->paused && !overdue) {
        pthread_mutex_unlock(&w->lock); /* no slot within the wait: nothing to hand out */
        return NULL;
    }
    /* Full: partitions are paused as they deliver (hold). A slot free
     * again: the paused ones are resumed. */
    rd_kafka_topic_partition_list_t *resume = full ? NULL : held_take(w);
    w->paused = full;
    pthread_mutex_unlock(&w->lock);
    if (resume != NULL) {
        rd_kafka_resume_partitions(w->consumer, resume);
        rd_kafka_topic_partition_list_destroy(resume);
    }
    w->polled_ms = mono_ms();

    /* Bounded: each round either hands out a task, dead-letters a message,
     * puts one back, or ends the wait. */
    for (int round = 0; round < 1000 && *out == NULL; round++) {
        /* Ends of partitions and a task topic that does not exist yet
         * (it appears with the first task scheduled on it) are no errors. */
        rd_kafka_message_t *m = NULL;
        if (swf_kafka_poll(w->consumer, round == 0 ? timeout_ms : 0, 0, &m, 1, &err) == 0)
            break;
        if (full) {
            hold(w, m); /* and the next round, without a wait, the other partitions */
            rd_kafka_message_destroy(m);
            continue;
        }
        err = take(w, m, out);
        rd_kafka_message_destroy(m);
        if (err != NULL)
            break;
    }
    if (*out != NULL)
        started_send(w, *out);
    return err;
}
