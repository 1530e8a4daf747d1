/*
 * consumer.c - consumers: settings, rebalances, batches, commits, close.
 *
 * Every consumer of swf commits by hand, after what a message caused is
 * durable (the decider: appended to the history; a worker: its answer
 * acknowledged by Kafka), so enable.auto.commit is off and a commit names
 * its offsets. The fetch wait is short (SWF_KAFKA_FETCH_WAIT_MS, 5 ms):
 * a real broker answers a fetch as soon as anything is there, so this only
 * bounds an idle fetch, but librdkafka's mock cluster always holds an empty
 * fetch this long, and a decision's round trip crosses two topics.
 *
 * Closing is bounded (swf_kafka_consumer_close): librdkafka's close waits
 * for the group coordinator without a limit, and a process that was asked
 * to stop must stop; see protocol/bounded.h for what an abandoned close
 * keeps.
 *
 * Not done: auto-creating topics on subscription. A task topic is created
 * by whoever schedules the first task on it, with SWF_TASK_PARTITIONS
 * partitions (swf_kafka_topic_ensure); a worker that subscribes first must
 * not create it with the broker's default count instead. Topics that
 * appear later are found by the metadata refresh, every 2 s.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kafka/internal.h"
#include "protocol/bounded.h"

static void default_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t code,
                              rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    swf_error_free(swf_kafka_rebalance_apply(rk, code, parts));
}

swf_error_t *swf_kafka_consumer_new(const swf_kafka_consumer_config_t *cfg, rd_kafka_t **out)
{
    *out = NULL;
    swf_error_t *err = NULL;
    rd_kafka_conf_t *conf = swf_kafka__conf_new(cfg->brokers, cfg->client_id, &err);
    if (conf == NULL)
        return err;
    char wait[16], session[16], heartbeat[16];
    snprintf(wait, sizeof(wait), "%d", swf_kafka_fetch_wait_ms());
    int session_ms =
        cfg->session_timeout_ms > 0 ? cfg->session_timeout_ms : swf_kafka_session_timeout_ms();
    /* A group learns of a member's death within its session; a heartbeat
     * a quarter of it, at most librdkafka's 3 s, leaves room for three to
     * be lost first. */
    int heartbeat_ms = session_ms / 4 < 3000 ? session_ms / 4 : 3000;
    snprintf(session, sizeof(session), "%d", session_ms);
    snprintf(heartbeat, sizeof(heartbeat), "%d", heartbeat_ms > 0 ? heartbeat_ms : 1);
    if ((err = swf_kafka_conf_set(conf, "group.id", cfg->group)) ||
        (err = swf_kafka_conf_set(conf, "enable.auto.commit", "false")) ||
        (err = swf_kafka_conf_set(conf, "auto.offset.reset", "earliest")) ||
        (err = swf_kafka_conf_set(conf, "topic.metadata.refresh.interval.ms", "2000")) ||
        (err = swf_kafka_conf_set(conf, "fetch.wait.max.ms", wait)) ||
        (session_ms > 0 &&
         ((err = swf_kafka_conf_set(conf, "session.timeout.ms", session)) ||
          (err = swf_kafka_conf_set(conf, "heartbeat.interval.ms", heartbeat))))) {
        rd_kafka_conf_destroy(conf);
        return err;
    }
    rd_kafka_conf_set_rebalance_cb(conf, cfg->on_rebalance ? cfg->on_rebalance : default_rebalance);
    rd_kafka_conf_set_opaque(conf, cfg->opaque);
    err = swf_kafka__client_new(RD_KAFKA_CONSUMER, conf, out);
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

bool swf_kafka_rebalance_incremental(rd_kafka_t *consumer)
{
    const char *protocol = rd_kafka_rebalance_protocol(consumer);
    return protocol != NULL && strcmp(protocol, "COOPERATIVE") == 0;
}

swf_error_t *swf_kafka_rebalance_apply(rd_kafka_t *consumer, rd_kafka_resp_err_t code,
                                       rd_kafka_topic_partition_list_t *parts)
{
    bool incremental = swf_kafka_rebalance_incremental(consumer);
    rd_kafka_error_t *failed = NULL;
    rd_kafka_resp_err_t refused = RD_KAFKA_RESP_ERR_NO_ERROR;
    if (code == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        if (incremental)
            failed = rd_kafka_incremental_assign(consumer, parts);
        else
            refused = rd_kafka_assign(consumer, parts);
    } else if (code == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS && incremental) {
        failed = rd_kafka_incremental_unassign(consumer, parts);
    } else {
        /* Revoked, or an error: give up everything. */
        refused = rd_kafka_assign(consumer, NULL);
    }
    if (failed != NULL) {
        /* Only a misuse of librdkafka's API fails here. */
        swf_error_t *err =
            swf_error_new(SWF_E_KAFKA, NULL, "rebalance: %s", rd_kafka_error_string(failed));
        rd_kafka_error_destroy(failed);
        return err;
    }
    return refused ? swf_kafka_error(refused, "rebalance") : NULL;
}

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

size_t swf_kafka_poll(rd_kafka_t *consumer, int first_wait_ms, int more_wait_ms,
                      rd_kafka_message_t **out, size_t max, swf_error_t **err)
{
    *err = NULL;
    size_t n = 0;
    int64_t until = -1;
    while (n < max) {
        int wait_ms = first_wait_ms;
        if (until >= 0) {
            int64_t left = until - mono_ms();
            wait_ms = left > 0 ? (int)left : 0;
        }
        rd_kafka_message_t *m = rd_kafka_consumer_poll(consumer, wait_ms);
        if (m == NULL)
            break;
        if (until < 0)
            until = mono_ms() + more_wait_ms;
        if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
            out[n++] = m;
            continue;
        }
        rd_kafka_resp_err_t code = m->err;
        rd_kafka_message_destroy(m);
        if (code == RD_KAFKA_RESP_ERR__PARTITION_EOF || code == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
            code == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
            continue;
        *err = swf_kafka_error(code, "consume");
        break;
    }
    return n;
}

swf_error_t *swf_kafka_commit_offsets(rd_kafka_t *consumer,
                                      const rd_kafka_topic_partition_list_t *offsets, bool async)
{
    if (offsets == NULL || offsets->cnt == 0)
        return NULL;
    rd_kafka_resp_err_t code = rd_kafka_commit(consumer, offsets, async ? 1 : 0);
    if (code == RD_KAFKA_RESP_ERR_NO_ERROR || code == RD_KAFKA_RESP_ERR__NO_OFFSET)
        return NULL;
    return swf_kafka_error(code, "commit");
}

swf_error_t *swf_kafka_commit(rd_kafka_t *consumer, rd_kafka_message_t *const *msgs, size_t n,
                              bool async)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(8);
    for (size_t i = 0; i < n; i++) {
        const char *topic = rd_kafka_topic_name(msgs[i]->rkt);
        rd_kafka_topic_partition_t *p =
            rd_kafka_topic_partition_list_find(l, topic, msgs[i]->partition);
        if (p == NULL)
            p = rd_kafka_topic_partition_list_add(l, topic, msgs[i]->partition);
        if (msgs[i]->offset + 1 > p->offset)
            p->offset = msgs[i]->offset + 1;
    }
    swf_error_t *err = swf_kafka_commit_offsets(consumer, l, async);
    rd_kafka_topic_partition_list_destroy(l);
    return err;
}

/* One close, on swf_bounded_call's thread. */
typedef struct closing {
    rd_kafka_t *consumer;
    void (*first)(void *arg);
    void (*late)(void *arg);
    void *arg;
} closing_t;

static void close_run(void *p)
{
    closing_t *c = p;
    if (c->first != NULL)
        c->first(c->arg);
    rd_kafka_consumer_close(c->consumer);
    rd_kafka_destroy(c->consumer);
}

static void close_late(void *p)
{
    closing_t *c = p;
    if (c->late != NULL)
        c->late(c->arg);
    free(c);
}

bool swf_kafka_consumer_close(rd_kafka_t *consumer, int timeout_ms, void (*first)(void *arg),
                              void (*late)(void *arg), void *arg)
{
    closing_t *c = malloc(sizeof(*c));
    if (c == NULL)
        abort();
    *c = (closing_t){consumer, first, late, arg};
    if (!swf_bounded_call(close_run, close_late, c, timeout_ms))
        return false; /* c belongs to the close now */
    free(c);
    return true;
}
