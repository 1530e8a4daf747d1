/*
 * topic.c - topics made on demand, and the poster that publishes into them.
 *
 * A task topic exists once the first task of its task list is scheduled:
 * nobody lists the task lists of a deployment up front. So whoever
 * publishes makes sure the topic is there first, with SWF_TASK_PARTITIONS
 * partitions, through CreateTopics. librdkafka's mock cluster does not
 * implement CreateTopics and creates a topic on its first metadata request
 * instead; a cluster that does not answer CreateTopics within a second is
 * taken for such a one (remembered for the process), and the topic is
 * awaited through metadata requests.
 *
 * The poster is the sender of protocol messages the history service and
 * the decider take (swf_msg_send_fn): topics ensured once per poster, then
 * one batch-synchronous send.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kafka/internal.h"
#include "protocol/json.h"

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

bool swf_kafka_topic_lookup(rd_kafka_t *rk, const char *topic, int timeout_ms)
{
    return topic_exists(rk, topic, timeout_ms);
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

swf_error_t *swf_kafka_poster_send(void *ctx, swf_msg_post_t *msgs, size_t n)
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
