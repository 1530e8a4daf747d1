/*
 * kafka.c - librdkafka configuration, topic creation, synchronous batch
 * sends and error translation for every swf process.
 *
 * The decider must know that an activity task reached Kafka before it
 * deletes the outbox row and commits its inbox offsets, so sends here are
 * batch-synchronous: every message of a batch is produced at once (one
 * network round trip per partition leader, thanks to librdkafka's
 * batching), then the caller waits for all delivery reports. Each message
 * carries a pointer to its own slot as the per-message opaque, so one
 * producer can serve several threads' batches at the same time.
 */
#include "decider/kafka.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "history/service.h"
#include "protocol/json.h"
#include "protocol/kafka_conf.h"
#include "protocol/message.h"

static const char *env_or(const char *name, const char *dflt)
{
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0' ? v : dflt;
}

void swf_kafka_names_env(swf_kafka_names_t *out)
{
    out->brokers = env_or("SWF_KAFKA_BROKERS", "localhost:9092");
    out->inbox = env_or("SWF_INBOX_TOPIC", SWF_MSG_INBOX_TOPIC);
    out->dlq = env_or("SWF_DLQ_TOPIC", SWF_MSG_DLQ_TOPIC);
    out->task_prefix = env_or("SWF_TASK_TOPIC_PREFIX", SWF_MSG_TASK_TOPIC_PREFIX);
    int p = atoi(env_or("SWF_TASK_PARTITIONS", "4"));
    out->task_partitions = p >= 1 && p <= 10000 ? p : 4;
}

void swf_kafka_task_topic(const swf_kafka_names_t *names, const char *task_list, char *buf,
                          size_t size)
{
    snprintf(buf, size, "%s%s", names->task_prefix, task_list);
}

swf_error_t *swf_kafka_error(rd_kafka_resp_err_t code, const char *what)
{
    swf_error_t *err = swf_error_new(SWF_E_KAFKA, NULL, "%s: %s", what, rd_kafka_err2str(code));
    switch (code) {
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
    case RD_KAFKA_RESP_ERR__QUEUE_FULL:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS:
    case RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_COORDINATOR:
    case RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR__WAIT_COORD:
        swf_error_set_retriable(err, true);
        break;
    default:
        break;
    }
    return err;
}

static swf_error_t *conf_set(rd_kafka_conf_t *conf, const char *key, const char *value)
{
    char errstr[256];
    if (rd_kafka_conf_set(conf, key, value, errstr, sizeof(errstr)) != RD_KAFKA_CONF_OK)
        return swf_error_new(SWF_E_KAFKA, NULL, "kafka configuration %s: %s", key, errstr);
    return NULL;
}

/* The delivery report: the message's opaque is its swf_kafka_out_t slot. */
static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    swf_kafka_out_t *slot = m->_private;
    if (slot != NULL) /* read by the sending thread (swf_kafka_send) */
        __atomic_store_n(&slot->result, m->err, __ATOMIC_RELEASE);
}

static swf_error_t *conf_set_any(void *conf, const char *key, const char *value)
{
    return conf_set(conf, key, value);
}

/* Makes the client, after the deployment's own properties
 * (SWF_KAFKA_CONFIG_FILE, protocol/kafka_conf.h) are added to swf's. */
static swf_error_t *handle_new(rd_kafka_type_t type, rd_kafka_conf_t *conf, rd_kafka_t **out)
{
    swf_error_t *err = swf_kafka_conf_env_apply(conf_set_any, conf);
    if (err != NULL) {
        rd_kafka_conf_destroy(conf);
        return err;
    }
    char errstr[512];
    rd_kafka_t *rk = rd_kafka_new(type, conf, errstr, sizeof(errstr));
    if (rk == NULL) {
        rd_kafka_conf_destroy(conf);
        return swf_error_new(SWF_E_KAFKA, NULL, "kafka: %s", errstr);
    }
    *out = rk;
    return NULL;
}

/*
 * What producers and consumers share. Nagle's algorithm off: a produce or
 * fetch request is written as soon as it is ready; with it on, a request
 * that follows another unacknowledged one waits for the peer's delayed ACK
 * (40 ms on Linux), which made every publish of more than a couple of
 * messages take 44 ms on loopback. SWF_KAFKA_DEBUG passes librdkafka's own
 * tracing contexts ("msg,fetch", "all").
 */
static swf_error_t *conf_common(rd_kafka_conf_t *conf, const char *brokers)
{
    swf_error_t *err = conf_set(conf, "bootstrap.servers", brokers);
    if (err == NULL)
        err = conf_set(conf, "socket.nagle.disable", "true");
    const char *debug = getenv("SWF_KAFKA_DEBUG");
    if (err == NULL && debug != NULL && debug[0] != '\0')
        err = conf_set(conf, "debug", debug);
    return err;
}

int swf_kafka_fetch_wait_ms(void)
{
    const char *v = getenv("SWF_KAFKA_FETCH_WAIT_MS");
    int ms = v != NULL && v[0] != '\0' ? atoi(v) : 5;
    return ms >= 0 && ms <= 10000 ? ms : 5;
}

/* SWF_KAFKA_SEND_TIMEOUT_MS when it is a number of ms from 1 s to an hour,
 * else the default. */
static const char *send_timeout_ms(void)
{
    const char *v = env_or("SWF_KAFKA_SEND_TIMEOUT_MS", SWF_KAFKA_SEND_TIMEOUT_MS_STR);
    long ms = atol(v);
    return ms >= 1000 && ms <= 3600000 ? v : SWF_KAFKA_SEND_TIMEOUT_MS_STR;
}

swf_error_t *swf_kafka_producer_new(const char *brokers, rd_kafka_t **out)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    swf_error_t *err = conf_common(conf, brokers);
    if (err == NULL)
        err = conf_set(conf, "acks", "all");
    if (err == NULL)
        err = conf_set(conf, "linger.ms", "0");
    if (err == NULL)
        err = conf_set(conf, "message.max.bytes", "2000000");
    if (err == NULL)
        err = conf_set(conf, "message.timeout.ms", send_timeout_ms());
    if (err != NULL) {
        rd_kafka_conf_destroy(conf);
        return err;
    }
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    return handle_new(RD_KAFKA_PRODUCER, conf, out);
}

swf_error_t *swf_kafka_consumer_new(const char *brokers, const char *group,
                                    void (*rebalance_cb)(rd_kafka_t *, rd_kafka_resp_err_t,
                                                         rd_kafka_topic_partition_list_t *, void *),
                                    void *opaque, rd_kafka_t **out)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    swf_error_t *err = conf_common(conf, brokers);
    if (err == NULL)
        err = conf_set(conf, "group.id", group);
    if (err == NULL)
        err = conf_set(conf, "enable.auto.commit", "false");
    if (err == NULL)
        err = conf_set(conf, "auto.offset.reset", "earliest");
    if (err == NULL)
        err = conf_set(conf, "allow.auto.create.topics", "true");
    if (err == NULL)
        err = conf_set(conf, "topic.metadata.refresh.interval.ms", "2000");
    /* Latency over throughput: a real broker answers a fetch as soon as
     * anything is there, so this only bounds an idle fetch; librdkafka's
     * mock cluster always holds an empty fetch this long, so there it is
     * added to every hop (a decision's round trip crosses two topics). */
    char wait[16];
    snprintf(wait, sizeof(wait), "%d", swf_kafka_fetch_wait_ms());
    if (err == NULL)
        err = conf_set(conf, "fetch.wait.max.ms", wait);
    /* How long the group waits for a member that went silent (a killed
     * decider) before its partitions go to the others: librdkafka's 45 s
     * unless SWF_KAFKA_SESSION_TIMEOUT_MS says otherwise. */
    long session_ms = atol(env_or("SWF_KAFKA_SESSION_TIMEOUT_MS", "0"));
    if (err == NULL && session_ms >= 300 && session_ms <= 3600000) {
        char v[32];
        snprintf(v, sizeof(v), "%ld", session_ms);
        err = conf_set(conf, "session.timeout.ms", v);
        snprintf(v, sizeof(v), "%ld", session_ms / 4);
        if (err == NULL)
            err = conf_set(conf, "heartbeat.interval.ms", v);
    }
    if (err != NULL) {
        rd_kafka_conf_destroy(conf);
        return err;
    }
    if (rebalance_cb != NULL)
        rd_kafka_conf_set_rebalance_cb(conf, rebalance_cb);
    rd_kafka_conf_set_opaque(conf, opaque);
    err = handle_new(RD_KAFKA_CONSUMER, conf, out);
    if (err == NULL)
        rd_kafka_poll_set_consumer(*out);
    return err;
}

swf_error_t *swf_kafka_subscribe(rd_kafka_t *consumer, const char *const *topics, size_t n)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new((int)n);
    for (size_t i = 0; i < n; i++)
        rd_kafka_topic_partition_list_add(l, topics[i], RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t code = rd_kafka_subscribe(consumer, l);
    rd_kafka_topic_partition_list_destroy(l);
    return code ? swf_kafka_error(code, "subscribe") : NULL;
}

/* Whether the topic exists, asking the cluster for its metadata (a request
 * that also makes brokers with auto-creation create it). */
static bool topic_exists(rd_kafka_t *rk, const char *topic, int timeout_ms)
{
    rd_kafka_topic_t *t = rd_kafka_topic_new(rk, topic, NULL);
    const struct rd_kafka_metadata *md = NULL;
    bool ok = false;
    if (t != NULL && rd_kafka_metadata(rk, 0, t, &md, timeout_ms) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        ok = md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR &&
             md->topics[0].partition_cnt > 0;
        rd_kafka_metadata_destroy(md);
    }
    if (t != NULL)
        rd_kafka_topic_destroy(t);
    return ok;
}

/* The topic is not there yet: retriable, the cluster may be away or slow.
 * topic NULL leaves naming it to the caller. */
static swf_error_t *not_created(const char *topic)
{
    swf_error_t *err = swf_error_new(SWF_E_KAFKA, NULL, "%s%sthe topic was not created",
                                     topic ? topic : "", topic ? ": " : "");
    swf_error_set_retriable(err, true);
    return err;
}

/* Whether a broker answers a metadata request within a second. */
static bool cluster_answers(rd_kafka_t *rk)
{
    const struct rd_kafka_metadata *md = NULL;
    bool ok = rd_kafka_metadata(rk, 0, NULL, &md, 1000) == RD_KAFKA_RESP_ERR_NO_ERROR;
    if (md != NULL)
        rd_kafka_metadata_destroy(md);
    return ok;
}

/* Set once a cluster did not answer CreateTopics (librdkafka's mock cluster
 * does not implement it; it creates topics on first use instead). */
static int create_topics_unsupported;

swf_error_t *swf_kafka_topic_ensure(rd_kafka_t *rk, const char *topic, int partitions,
                                    int timeout_ms)
{
    if (topic_exists(rk, topic, timeout_ms))
        return NULL;
    if (__atomic_load_n(&create_topics_unsupported, __ATOMIC_RELAXED)) {
        for (int i = 0; i < 50; i++) {
            if (topic_exists(rk, topic, timeout_ms))
                return NULL;
            usleep(100000);
        }
        return not_created(topic);
    }
    /* Real clusters answer CreateTopics in milliseconds; a second without
     * an answer means it is not implemented. */
    if (timeout_ms > 1000)
        timeout_ms = 1000;
    char errstr[256];
    swf_error_t *err = NULL;
    rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(topic, partitions, -1, errstr, sizeof(errstr));
    if (nt == NULL)
        return swf_error_new(SWF_E_KAFKA, NULL, "topic %s: %s", topic, errstr);
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_AdminOptions_t *opt = rd_kafka_AdminOptions_new(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_AdminOptions_set_request_timeout(opt, timeout_ms, errstr, sizeof(errstr));
    rd_kafka_CreateTopics(rk, &nt, 1, opt, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, timeout_ms + 1000);
    if ((ev == NULL || rd_kafka_event_error(ev) == RD_KAFKA_RESP_ERR__TIMED_OUT) &&
        !cluster_answers(rk)) {
        /* No answer because no broker answers at all (not up yet, an
         * outage): that says nothing about CreateTopics. */
        err = not_created(NULL);
        goto done;
    }
    if (ev == NULL || rd_kafka_event_error(ev) == RD_KAFKA_RESP_ERR__TIMED_OUT) {
        /* No answer: a cluster without CreateTopics. Fall back on creation
         * on first use, which the metadata request asks for. */
        __atomic_store_n(&create_topics_unsupported, 1, __ATOMIC_RELAXED);
        if (ev != NULL)
            rd_kafka_event_destroy(ev);
        ev = NULL;
        for (int i = 0; i < 50 && err == NULL; i++) {
            if (topic_exists(rk, topic, 2000))
                goto done;
            usleep(100000);
        }
        err = not_created(NULL);
        goto done;
    }
    if (rd_kafka_event_error(ev)) {
        err = swf_kafka_error(rd_kafka_event_error(ev), "create topic");
    } else {
        const rd_kafka_CreateTopics_result_t *res = rd_kafka_event_CreateTopics_result(ev);
        size_t n = 0;
        const rd_kafka_topic_result_t **tr = rd_kafka_CreateTopics_result_topics(res, &n);
        for (size_t i = 0; i < n && err == NULL; i++) {
            rd_kafka_resp_err_t code = rd_kafka_topic_result_error(tr[i]);
            if (code != RD_KAFKA_RESP_ERR_NO_ERROR &&
                code != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
                err = swf_kafka_error(code, "create topic");
        }
    }
done:
    if (ev != NULL)
        rd_kafka_event_destroy(ev);
    if (err != NULL)
        swf_error_prefix(err, "%s", topic);
    rd_kafka_AdminOptions_destroy(opt);
    rd_kafka_queue_destroy(q);
    rd_kafka_NewTopic_destroy(nt);
    return err;
}

/* A result not yet reported reads as "in flight". */
static const rd_kafka_resp_err_t pending = RD_KAFKA_RESP_ERR__IN_PROGRESS;

void swf_kafka_send_start(rd_kafka_t *producer, swf_kafka_out_t *msgs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        msgs[i].result = pending;
        rd_kafka_resp_err_t code;
        for (int tries = 0;; tries++) {
            code = rd_kafka_producev(
                producer, RD_KAFKA_V_TOPIC(msgs[i].topic),
                RD_KAFKA_V_KEY(msgs[i].key, msgs[i].key ? strlen(msgs[i].key) : 0),
                RD_KAFKA_V_VALUE((void *)msgs[i].payload, msgs[i].len),
                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_OPAQUE(&msgs[i]),
                RD_KAFKA_V_END);
            if (code != RD_KAFKA_RESP_ERR__QUEUE_FULL || tries >= 100)
                break;
            rd_kafka_poll(producer, 10);
        }
        if (code != RD_KAFKA_RESP_ERR_NO_ERROR)
            msgs[i].result = code;
    }
}

swf_error_t *swf_kafka_send_wait(rd_kafka_t *producer, swf_kafka_out_t *msgs, size_t n)
{
    /* Wait for every report: librdkafka gives each message one within
     * message.timeout.ms (set from timeout_ms when the producer was made),
     * and the slots must outlive the reports, so there is no shorter cut.
     * Another thread sending on the same producer may serve this one's
     * reports in its own poll, which then cannot end this one's: hence the
     * 1 ms polls. */
    for (;;) {
        bool done = true;
        for (size_t i = 0; i < n && done; i++)
            done = __atomic_load_n(&msgs[i].result, __ATOMIC_ACQUIRE) != pending;
        if (done)
            break;
        rd_kafka_poll(producer, 1);
    }
    swf_error_t *err = NULL;
    for (size_t i = 0; i < n && err == NULL; i++) {
        rd_kafka_resp_err_t r = __atomic_load_n(&msgs[i].result, __ATOMIC_ACQUIRE);
        if (r == pending)
            err = swf_kafka_error(RD_KAFKA_RESP_ERR__TIMED_OUT, "send");
        else if (r != RD_KAFKA_RESP_ERR_NO_ERROR)
            err = swf_kafka_error(r, "send");
        if (err != NULL)
            swf_error_prefix(err, "%s", msgs[i].topic);
    }
    return err;
}

swf_error_t *swf_kafka_send(rd_kafka_t *producer, swf_kafka_out_t *msgs, size_t n)
{
    swf_kafka_send_start(producer, msgs, n);
    return swf_kafka_send_wait(producer, msgs, n);
}

/* ---- the poster ---------------------------------------------------------- */

struct swf_kafka_poster {
    rd_kafka_t *producer;
    int partitions;
    pthread_mutex_t lock;
    json_object *known; /* topic -> true */
};

swf_kafka_poster_t *swf_kafka_poster_new(rd_kafka_t *producer, int partitions)
{
    swf_kafka_poster_t *p = calloc(1, sizeof(*p));
    if (p == NULL)
        abort();
    p->producer = producer;
    p->partitions = partitions;
    pthread_mutex_init(&p->lock, NULL);
    p->known = json_object_new_object();
    return p;
}

void swf_kafka_poster_free(swf_kafka_poster_t *p)
{
    if (p == NULL)
        return;
    pthread_mutex_destroy(&p->lock);
    json_object_put(p->known);
    free(p);
}

swf_error_t *swf_kafka_poster_topic(swf_kafka_poster_t *p, const char *topic)
{
    pthread_mutex_lock(&p->lock);
    bool known = json_object_object_get_ex(p->known, topic, NULL);
    pthread_mutex_unlock(&p->lock);
    if (known)
        return NULL;
    swf_error_t *err = swf_kafka_topic_ensure(p->producer, topic, p->partitions, 10000);
    if (err == NULL) {
        pthread_mutex_lock(&p->lock);
        if (!json_object_object_get_ex(p->known, topic, NULL) &&
            json_object_object_length(p->known) < 100000)
            json_object_object_add(p->known, topic, json_object_new_boolean(1));
        pthread_mutex_unlock(&p->lock);
    }
    return err;
}

swf_error_t *swf_kafka_poster_send(void *ctx, swf_history_post_t *msgs, size_t n)
{
    swf_kafka_poster_t *p = ctx;
    swf_error_t *err = NULL;
    for (size_t i = 0; i < n; i++)
        msgs[i].sent = false;
    for (size_t i = 0; i < n && err == NULL; i++)
        err = swf_kafka_poster_topic(p, msgs[i].topic);
    if (err != NULL || n == 0)
        return err;
    swf_kafka_out_t *out = calloc(n, sizeof(*out));
    if (out == NULL)
        abort();
    for (size_t i = 0; i < n; i++)
        out[i] = (swf_kafka_out_t){msgs[i].topic, msgs[i].key, msgs[i].payload, msgs[i].len, 0};
    err = swf_kafka_send(p->producer, out, n);
    for (size_t i = 0; i < n; i++)
        msgs[i].sent = out[i].result == RD_KAFKA_RESP_ERR_NO_ERROR;
    free(out);
    return err;
}
