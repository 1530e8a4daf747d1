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
 * Back-pressure is the in-flight count: at the limit poll hands out nothing.
 * It first waits for a slot without touching the consumer (up to a second
 * since it last polled it); what librdkafka fetched meanwhile stays in its
 * queue, ready for the freed slot. A worker still full after that pauses
 * every assigned partition and keeps calling the consumer, so the process
 * stays in its group however long the tasks take. A message that was
 * already fetched when the partitions were paused is not handed out; its
 * partition is rewound to it (rd_kafka_seek), so it comes again after the
 * resume.
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

#include "protocol/bounded.h"
#include "protocol/json.h"
#include "protocol/kafka_conf.h"
#include "protocol/message.h"
#include "worker/internal.h"

/* How long a full worker waits for a slot without polling its consumer:
 * past it, it pauses its partitions and polls (to stay in its group and
 * serve rebalances). Pausing is kept for long waits because a resume costs
 * about a second with librdkafka 2.0 (its broker thread only sees the
 * resume at its next idle wake-up), which at the limit made every freed
 * slot wait that long for its next task. */
#define SWF_WORKER_FULL_POLL_MS 1000

/* Partitions of the task topic one process tracks (bounds the table). */
#define PARTITIONS_MAX 100000

/* Attempts to queue one answer while librdkafka's queue is full, 100 ms apart. */
#define QUEUE_FULL_TRIES 100

typedef struct partition {
    struct partition *next;
    int32_t id;
    swf_worker__pending_t *head, *tail;
    int64_t commit_offset; /* the next offset to commit; -1: nothing new */
} partition_t;

struct swf_worker {
    rd_kafka_t *consumer, *producer;
    rd_kafka_queue_t *consumer_queue; /* to end a poll's wait (slot_release) */
    char *task_topic, *inbox_topic, *dlq_topic, *group_id, *identity;
    unsigned max_in_flight, session_timeout_ms;

    pthread_mutex_t lock; /* guards everything below */
    unsigned in_flight;
    pthread_cond_t slot_freed; /* signalled by slot_release */
    int64_t polled_ms;         /* when the consumer was last polled */
    unsigned npartitions;
    partition_t *partitions;
    bool paused;
    swf_error_t *lost; /* the first answer Kafka refused, reported by the next poll */
};

static char *dup_str(const char *s)
{
    char *d = strdup(s);
    if (d == NULL)
        abort();
    return d;
}

static char *fmt2(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *d = malloc(n);
    if (d == NULL)
        abort();
    snprintf(d, n, "%s%s", a, b);
    return d;
}

static const char *or_env(const char *given, const char *env, const char *fallback)
{
    if (given != NULL)
        return given;
    const char *e = getenv(env);
    return e != NULL && *e ? e : fallback;
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
    rd_kafka_commit(w->consumer, list, sync ? 0 : 1);
    rd_kafka_topic_partition_list_destroy(list);
}

/* ---- librdkafka callbacks ---- */

/* Delivery report of an answer, a heartbeat or a dead-letter entry. */
static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    swf_worker_t *w = opaque;
    swf_worker__pending_t *q = m->_private;
    if (q == NULL)
        return; /* a heartbeat: the next one makes up for a lost one */
    pthread_mutex_lock(&w->lock);
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
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
            w->lost = swf_worker__kafka_error(m->err, what);
        }
    }
    pending_unref(q);
    pthread_mutex_unlock(&w->lock);
}

static void pause_all(swf_worker_t *w, bool pause)
{
    rd_kafka_topic_partition_list_t *a = NULL;
    if (rd_kafka_assignment(w->consumer, &a) != RD_KAFKA_RESP_ERR_NO_ERROR || a == NULL)
        return;
    if (a->cnt > 0) {
        if (pause)
            rd_kafka_pause_partitions(w->consumer, a);
        else
            rd_kafka_resume_partitions(w->consumer, a);
    }
    rd_kafka_topic_partition_list_destroy(a);
}

static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    swf_worker_t *w = opaque;
    /* Kafka's cooperative assignors (a properties file may choose one)
     * hand over only the partitions that move, to be added and taken away
     * one list at a time rather than assigned whole. */
    const char *protocol = rd_kafka_rebalance_protocol(rk);
    bool incremental = protocol != NULL && strcmp(protocol, "COOPERATIVE") == 0;
    rd_kafka_error_t *failed = NULL;
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        if (incremental)
            failed = rd_kafka_incremental_assign(rk, parts);
        else
            rd_kafka_assign(rk, parts);
        pthread_mutex_lock(&w->lock);
        bool paused = w->paused;
        pthread_mutex_unlock(&w->lock);
        if (paused)
            rd_kafka_pause_partitions(rk, parts);
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
        if (err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS && incremental)
            failed = rd_kafka_incremental_unassign(rk, parts);
        else
            rd_kafka_assign(rk, NULL);
    }
    if (failed != NULL) {
        /* Only a misuse of librdkafka's API fails here; the consumer then
         * reports it through the poll. */
        rd_kafka_error_destroy(failed);
    }
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

static swf_error_t *conf_set_any(void *conf, const char *key, const char *value)
{
    return swf_worker__conf_set(conf, key, value);
}

static swf_error_t *make_client(swf_worker_t *w, const char *brokers, rd_kafka_type_t type,
                                rd_kafka_t **out)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    swf_error_t *err = NULL;
    char text[512];
    /* Latency over throughput, as in the decider: no Nagle delay on the
     * small messages of this protocol. */
    if ((err = swf_worker__conf_set(conf, "bootstrap.servers", brokers)) ||
        (err = swf_worker__conf_set(conf, "client.id", w->identity)) ||
        (err = swf_worker__conf_set(conf, "socket.nagle.disable", "true")))
        goto out;
    /* librdkafka's own tracing ("cgrp,fetch", "all"), for debugging a deployment */
    const char *debug = getenv("SWF_KAFKA_DEBUG");
    if (debug != NULL && *debug && (err = swf_worker__conf_set(conf, "debug", debug)))
        goto out;
    if (type == RD_KAFKA_CONSUMER) {
        if ((err = swf_worker__conf_set(conf, "group.id", w->group_id)) ||
            (err = swf_worker__conf_set(conf, "enable.auto.commit", "false")) ||
            (err = swf_worker__conf_set(conf, "auto.offset.reset", "earliest")) ||
            /* a task topic may be created after the worker starts */
            (err = swf_worker__conf_set(conf, "topic.metadata.refresh.interval.ms", "10000")))
            goto out;
        /* A fetch returns when a task arrives on a real broker; librdkafka's
         * mock cluster holds it for the whole wait (500 ms by default), so
         * the wait is short, as the decider's: SWF_KAFKA_FETCH_WAIT_MS, 5. */
        const char *wait = getenv("SWF_KAFKA_FETCH_WAIT_MS");
        int wait_ms = wait != NULL && *wait ? atoi(wait) : 5;
        char ms[32];
        snprintf(ms, sizeof(ms), "%d", wait_ms >= 0 && wait_ms <= 10000 ? wait_ms : 5);
        if ((err = swf_worker__conf_set(conf, "fetch.wait.max.ms", ms)))
            goto out;
        snprintf(ms, sizeof(ms), "%u", w->session_timeout_ms);
        if (w->session_timeout_ms && (err = swf_worker__conf_set(conf, "session.timeout.ms", ms)))
            goto out;
        /* Heartbeats must come well within the session (default 3 s). */
        snprintf(ms, sizeof(ms), "%u", w->session_timeout_ms / 4);
        if (w->session_timeout_ms && w->session_timeout_ms < 12000 &&
            (err = swf_worker__conf_set(conf, "heartbeat.interval.ms", ms)))
            goto out;
        rd_kafka_conf_set_rebalance_cb(conf, on_rebalance);
    } else {
        /* idempotence keeps a task's heartbeats and answer in order; the
         * size limit is queue_send's (SWF_WORKER_MESSAGE_BYTES_MAX), not
         * librdkafka's default of 1,000,000 bytes, below it */
        if ((err = swf_worker__conf_set(conf, "enable.idempotence", "true")) ||
            (err = swf_worker__conf_set(conf, "linger.ms", "0")) ||
            (err = swf_worker__conf_set(conf, "message.max.bytes", "2000000")))
            goto out;
        rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    }
    /* the deployment's own properties last (protocol/kafka_conf.h) */
    if ((err = swf_kafka_conf_env_apply(conf_set_any, conf)))
        goto out;
    rd_kafka_conf_set_opaque(conf, w);
    *out = rd_kafka_new(type, conf, text, sizeof(text));
    if (*out == NULL) {
        err = swf_error_new(SWF_E_KAFKA, NULL, "kafka client: %s", text);
        goto out;
    }
    conf = NULL; /* taken by rd_kafka_new */
out:
    if (conf != NULL)
        rd_kafka_conf_destroy(conf);
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
    w->session_timeout_ms = config->session_timeout_ms;
    w->task_topic = fmt2(or_env(config->task_topic_prefix, "SWF_TASK_TOPIC_PREFIX", "swf.tasks."),
                         config->task_list);
    w->inbox_topic = dup_str(or_env(config->inbox_topic, "SWF_INBOX_TOPIC", "swf.inbox"));
    w->dlq_topic = dup_str(or_env(config->dlq_topic, "SWF_DLQ_TOPIC", "swf.dlq"));
    w->group_id =
        config->group_id ? dup_str(config->group_id) : fmt2("swf-workers.", config->task_list);
    if (config->identity != NULL) {
        w->identity = dup_str(config->identity);
    } else {
        char host[128] = "localhost", id[200];
        gethostname(host, sizeof(host) - 1);
        host[sizeof(host) - 1] = '\0';
        snprintf(id, sizeof(id), "%s:%ld", host, (long)getpid());
        w->identity = dup_str(id);
    }

    if ((err = make_client(w, config->brokers, RD_KAFKA_PRODUCER, &w->producer)) ||
        (err = make_client(w, config->brokers, RD_KAFKA_CONSUMER, &w->consumer)))
        goto out;
    rd_kafka_poll_set_consumer(w->consumer);
    w->consumer_queue = rd_kafka_queue_get_consumer(w->consumer);
    rd_kafka_topic_partition_list_t *topics = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(topics, w->task_topic, RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t kerr = rd_kafka_subscribe(w->consumer, topics);
    rd_kafka_topic_partition_list_destroy(topics);
    if (kerr != RD_KAFKA_RESP_ERR_NO_ERROR)
        err = swf_worker__kafka_error(kerr, "subscribe");
out:
    if (err != NULL) {
        swf_worker_free(w);
        return err;
    }
    *out = w;
    return NULL;
}

/* The last commit and the group's goodbye, on swf_bounded_call's thread:
 * the rebalance callback it runs uses w. */
static void consumer_close(void *arg)
{
    swf_worker_t *w = arg;
    pthread_mutex_lock(&w->lock);
    if (w->consumer_queue != NULL)
        rd_kafka_queue_destroy(w->consumer_queue);
    w->consumer_queue = NULL;
    pthread_mutex_unlock(&w->lock);
    commits_flush(w, true);
    rd_kafka_consumer_close(w->consumer);
    rd_kafka_destroy(w->consumer);
}

/* Everything but the consumer. */
static void worker_free_rest(void *arg)
{
    swf_worker_t *w = arg;
    if (w->producer != NULL)
        rd_kafka_destroy(w->producer);
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
        !swf_bounded_call(consumer_close, worker_free_rest, w, SWF_WORKER_CLOSE_MS)) {
        /* w now belongs to the call that overran: freed if it ever ends. */
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
                               const char *value, size_t len, swf_worker__pending_t *q)
{
    if (len > SWF_WORKER_MESSAGE_BYTES_MAX)
        return swf_error_new(SWF_E_LIMIT, NULL, "message to %s exceeds %u bytes", topic,
                             SWF_WORKER_MESSAGE_BYTES_MAX);
    if (q != NULL) {
        pthread_mutex_lock(&w->lock);
        q->refs++;
        pthread_mutex_unlock(&w->lock);
    }
    rd_kafka_resp_err_t kerr = RD_KAFKA_RESP_ERR_NO_ERROR;
    for (int i = 0; i < QUEUE_FULL_TRIES; i++) {
        kerr = rd_kafka_producev(
            w->producer, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_KEY(key, key ? strlen(key) : 0),
            RD_KAFKA_V_VALUE((void *)value, len), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
            RD_KAFKA_V_OPAQUE(q), RD_KAFKA_V_END);
        if (kerr != RD_KAFKA_RESP_ERR__QUEUE_FULL)
            break;
        rd_kafka_poll(w->producer, 100);
    }
    if (kerr == RD_KAFKA_RESP_ERR_NO_ERROR)
        return NULL;
    if (q != NULL) {
        pthread_mutex_lock(&w->lock);
        pending_unref(q);
        pthread_mutex_unlock(&w->lock);
    }
    char what[300];
    snprintf(what, sizeof(what), "produce to %s", topic);
    return swf_worker__kafka_error(kerr, what);
}

static json_object *message_new(const char *type, const swf_worker_task_t *t)
{
    json_object *m = json_object_new_object();
    swf_json_add(m, "v", json_object_new_int(1));
    swf_json_add(m, "type", json_object_new_string(type));
    swf_json_add(m, "taskToken", json_object_new_string(t->token));
    return m;
}

/* A string of at most max bytes, not cut inside a UTF-8 sequence, with
 * U+FFFD for each byte that is not UTF-8 (a command's stderr may hold
 * anything; the decider refuses a message that is not UTF-8). The bound
 * holds after the replacement, which makes each bad byte three: the decider
 * refuses a longer error name or cause. */
static json_object *string_cut(const char *s, size_t max)
{
    json_object *t = swf_json_new_text(s, swf_utf8_cut(s, strlen(s), max));
    const char *u = json_object_get_string(t);
    size_t n = (size_t)json_object_get_string_len(t), k = swf_utf8_cut(u, n, max);
    if (k == n)
        return t;
    json_object *cut = json_object_new_string_len(u, (int)k);
    json_object_put(t);
    return cut;
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
    const char *text = swf_json_str(m);
    swf_error_t *err =
        queue_send(w, w->inbox_topic, t->execution_id, text, strlen(text), t->pending);
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
    json_object *m = message_new("activity.completed", task);
    swf_json_add(m, "result", swf_json_ref(result));
    swf_json_add(m, "identity", json_object_new_string(w->identity));
    swf_error_t *err = answer(w, task, m);
    json_object_put(m);
    return err;
}

swf_error_t *swf_worker_fail(swf_worker_t *w, swf_worker_task_t *task, const char *error,
                             const char *cause)
{
    json_object *m = message_new("activity.failed", task);
    swf_json_add(
        m, "error",
        string_cut(error && *error ? error : "States.TaskFailed", SWF_WORKER_NAME_BYTES_MAX));
    swf_json_add(m, "cause", string_cut(cause ? cause : "", SWF_WORKER_CAUSE_BYTES_MAX));
    swf_json_add(m, "identity", json_object_new_string(w->identity));
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
    json_object *m = message_new("activity.heartbeat", task);
    if (details != NULL)
        swf_json_add(m, "details", swf_json_ref(details));
    const char *text = swf_json_str(m);
    swf_error_t *err = queue_send(w, w->inbox_topic, task->execution_id, text, strlen(text), NULL);
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
    const char *text = swf_json_str(d);
    swf_error_t *err = queue_send(w, w->dlq_topic, key, text, strlen(text), q);
    free(key);
    json_object_put(d);
    return err;
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

/* At the limit: rewind the partition to this message and drop it. */
static void put_back(const rd_kafka_message_t *m)
{
    rd_kafka_seek(m->rkt, m->partition, m->offset, 0);
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
        /* Before the pause state is touched: it must keep saying whether
         * the partitions are paused (they stay so until a later poll). */
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
    bool change = full != w->paused;
    w->paused = full;
    pthread_mutex_unlock(&w->lock);
    if (change)
        pause_all(w, full);
    w->polled_ms = mono_ms();

    /* Bounded: each round either hands out a task, dead-letters a message,
     * or ends the wait. */
    for (int round = 0; round < 1000 && *out == NULL; round++) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(w->consumer, round == 0 ? timeout_ms : 0);
        if (m == NULL)
            break;
        if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
            rd_kafka_message_destroy(m);
            continue;
        }
        if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
            /* A task topic that does not exist yet is no error: it appears
             * with the first task scheduled on it. */
            bool quiet = m->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
                         m->err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC;
            if (!quiet)
                err = swf_worker__kafka_error(m->err, "consume");
            rd_kafka_message_destroy(m);
            break;
        }
        if (full) {
            put_back(m);
            rd_kafka_message_destroy(m);
            break;
        }
        err = take(w, m, out);
        rd_kafka_message_destroy(m);
        if (err != NULL)
            break;
    }
    return err;
}
