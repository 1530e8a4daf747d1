/*
 * producer.c - producers, and the batch-synchronous send.
 *
 * Two ways to send share one producer setup. The decider, swf-history and
 * the command line must know that a message reached Kafka before they go
 * on (delete the outbox row, commit the inbox offsets, report success), so
 * swf_kafka_send is batch-synchronous: every message of a batch is produced
 * at once (one network round trip per partition leader, thanks to
 * librdkafka's batching), then the caller waits for all delivery reports.
 * Each message carries a pointer to its own slot as the per-message opaque,
 * so one producer can serve several threads' batches at the same time. The
 * worker library cannot wait (its loop goes on polling tasks while answers
 * travel), so a producer may instead have a delivery callback of its own
 * and queue messages with swf_kafka_produce; its reports are then served by
 * whoever polls the producer.
 *
 * Keyed messages are placed with murmur2, as Kafka's Java client and
 * kafkajs place them (librdkafka's own default is CRC32): a worker on any
 * of those clients answers to the partition whose decider owns the
 * execution (protocol/KAFKA.md, "Partitioning"). Keyless ones go anywhere.
 *
 * A message over SWF_MSG_MAX_BYTES is refused before librdkafka sees it:
 * the protocol's bound, not librdkafka's message.max.bytes (1,000,000 by
 * default, below it, and raised here), is the one readers enforce.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kafka/internal.h"

/* The delivery report of swf_kafka_send: the message's opaque is its slot. */
static void slot_report(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    swf_kafka_out_t *slot = m->_private;
    if (slot != NULL) /* read by the sending thread (swf_kafka_send_wait) */
        __atomic_store_n(&slot->result, m->err, __ATOMIC_RELEASE);
}

/* The caller's delivery callback, behind librdkafka's. */
typedef struct delivery {
    swf_kafka_delivery_fn fn;
    void *ctx;
} delivery_t;

static void callback_report(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    const delivery_t *d = opaque;
    d->fn(d->ctx, m->_private, m->err);
}

swf_error_t *swf_kafka_producer_new(const swf_kafka_producer_config_t *cfg, rd_kafka_t **out)
{
    *out = NULL;
    swf_error_t *err = NULL;
    rd_kafka_conf_t *conf = swf_kafka__conf_new(cfg->brokers, cfg->client_id, &err);
    if (conf == NULL)
        return err;
    char timeout[32];
    snprintf(timeout, sizeof(timeout), "%d",
             cfg->send_timeout_ms > 0 ? cfg->send_timeout_ms : swf_kafka_send_timeout_ms());
    if ((err = swf_kafka_conf_set(conf, "acks", "all")) ||
        (cfg->idempotent && (err = swf_kafka_conf_set(conf, "enable.idempotence", "true"))) ||
        (err = swf_kafka_conf_set(conf, "partitioner", "murmur2_random")) ||
        (err = swf_kafka_conf_set(conf, "linger.ms", "0")) ||
        (err = swf_kafka_conf_set(conf, "message.max.bytes", "2000000")) ||
        (err = swf_kafka_conf_set(conf, "message.timeout.ms", timeout))) {
        rd_kafka_conf_destroy(conf);
        return err;
    }
    delivery_t *d = NULL;
    if (cfg->on_delivery != NULL) {
        /* Lives as long as the producer: librdkafka keeps the opaque. */
        d = calloc(1, sizeof(*d));
        if (d == NULL)
            abort();
        *d = (delivery_t){cfg->on_delivery, cfg->ctx};
        rd_kafka_conf_set_opaque(conf, d);
        rd_kafka_conf_set_dr_msg_cb(conf, callback_report);
    } else {
        rd_kafka_conf_set_dr_msg_cb(conf, slot_report);
    }
    err = swf_kafka__client_new(RD_KAFKA_PRODUCER, conf, out);
    if (err != NULL)
        free(d);
    return err;
}

void swf_kafka_producer_free(rd_kafka_t *producer)
{
    if (producer == NULL)
        return;
    rd_kafka_flush(producer, SWF_KAFKA_FLUSH_MS);
    void *d = rd_kafka_opaque(producer);
    rd_kafka_destroy(producer);
    free(d); /* the delivery_t of a producer with a callback, else NULL */
}

/* Queues one message; librdkafka's code. */
static rd_kafka_resp_err_t produce(rd_kafka_t *producer, const char *topic, const char *key,
                                   const char *payload, size_t len, void *msg_opaque)
{
    if (len > SWF_MSG_MAX_BYTES)
        return RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE;
    rd_kafka_resp_err_t code;
    for (int waited_ms = 0;; waited_ms += 10) {
        code = rd_kafka_producev(
            producer, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_KEY(key, key ? strlen(key) : 0),
            RD_KAFKA_V_VALUE((void *)payload, len), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
            RD_KAFKA_V_OPAQUE(msg_opaque), RD_KAFKA_V_END);
        if (code != RD_KAFKA_RESP_ERR__QUEUE_FULL || waited_ms >= SWF_KAFKA_QUEUE_FULL_MS)
            return code;
        rd_kafka_poll(producer, 10); /* delivery reports make room */
    }
}

swf_error_t *swf_kafka_produce(rd_kafka_t *producer, const char *topic, const char *key,
                               const char *payload, size_t len, void *msg_opaque)
{
    rd_kafka_resp_err_t code = produce(producer, topic, key, payload, len, msg_opaque);
    if (code == RD_KAFKA_RESP_ERR_NO_ERROR)
        return NULL;
    char what[300];
    snprintf(what, sizeof(what), "produce to %s", topic);
    swf_error_t *err = swf_kafka_error(code, what);
    if (code == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE && len > SWF_MSG_MAX_BYTES)
        swf_error_prefix(err, "a message of %zu bytes exceeds %u bytes", len, SWF_MSG_MAX_BYTES);
    return err;
}

/* A result not yet reported reads as "in flight". */
static const rd_kafka_resp_err_t pending = RD_KAFKA_RESP_ERR__IN_PROGRESS;

void swf_kafka_send_start(rd_kafka_t *producer, swf_kafka_out_t *msgs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        msgs[i].result = pending;
        rd_kafka_resp_err_t code =
            produce(producer, msgs[i].topic, msgs[i].key, msgs[i].payload, msgs[i].len, &msgs[i]);
        if (code != RD_KAFKA_RESP_ERR_NO_ERROR)
            msgs[i].result = code;
    }
}

swf_error_t *swf_kafka_send_wait(rd_kafka_t *producer, swf_kafka_out_t *msgs, size_t n)
{
    /* Wait for every report: librdkafka gives each message one within
     * message.timeout.ms, and the slots must outlive the reports, so there
     * is no shorter cut. Another thread sending on the same producer may
     * serve this one's reports in its own poll, which then cannot end this
     * one's: hence the 1 ms polls. */
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
        if (r != RD_KAFKA_RESP_ERR_NO_ERROR) {
            err = swf_kafka_error(r, "send");
            swf_error_prefix(err, "%s", msgs[i].topic);
        }
    }
    return err;
}

swf_error_t *swf_kafka_send(rd_kafka_t *producer, swf_kafka_out_t *msgs, size_t n)
{
    swf_kafka_send_start(producer, msgs, n);
    return swf_kafka_send_wait(producer, msgs, n);
}
