/*
 * kafka.h - what every swf process needs from librdkafka, in one place.
 *
 * Configuration from the environment (KAFKA.md): SWF_KAFKA_BROKERS (the
 * bootstrap servers, default localhost:9092), SWF_INBOX_TOPIC, SWF_DLQ_TOPIC,
 * SWF_TASK_TOPIC_PREFIX, SWF_TASK_PARTITIONS (default 4),
 * SWF_KAFKA_SESSION_TIMEOUT_MS (consumer groups: how long a silent member
 * keeps its partitions; default librdkafka's 45 s; 300 to 3600000; the
 * heartbeat interval is a quarter of it), SWF_KAFKA_SEND_TIMEOUT_MS (below).
 * Producers are
 * idempotent-free, acks=all, and report every message's delivery; consumers
 * never commit on their own (the caller commits after its work is durable).
 *
 * librdkafka's error codes are translated into swf_error_t in exactly one
 * place, swf_kafka_error().
 *
 * Ownership: handles returned through out-parameters belong to the caller
 * (rd_kafka_destroy, after rd_kafka_consumer_close for consumers). Strings
 * in swf_kafka_names_t live as long as the process (they are the
 * environment's). Thread-safety: librdkafka handles are thread-safe;
 * swf_kafka_send is safe to call from several threads on one producer.
 */
#ifndef SWF_DECIDER_KAFKA_H
#define SWF_DECIDER_KAFKA_H

#include <librdkafka/rdkafka.h>
#include <stddef.h>

#include "protocol/error.h"

/* Topic names and partitions, from the environment. */
typedef struct swf_kafka_names {
    const char *brokers;
    const char *inbox;
    const char *dlq;
    const char *task_prefix;
    int task_partitions;
} swf_kafka_names_t;

void swf_kafka_names_env(swf_kafka_names_t *out);

/* The task topic of a task list: prefix + task list, written into buf. */
void swf_kafka_task_topic(const swf_kafka_names_t *names, const char *task_list, char *buf,
                          size_t size);

/* Translates a librdkafka error: SWF_E_KAFKA, retriable when librdkafka
 * says a retry can help (timeouts, transport, leadership changes). `what`
 * says what was being done. */
swf_error_t *swf_kafka_error(rd_kafka_resp_err_t code, const char *what);

/* How long a consumer's fetch may wait for data: $SWF_KAFKA_FETCH_WAIT_MS,
 * default 5 (0 to 10000). */
int swf_kafka_fetch_wait_ms(void);

/* A producer for `brokers` (acks=all, no linger, Nagle off): messages
 * produced together still travel together, as librdkafka batches what
 * queued up while the previous request was on the wire. */
swf_error_t *swf_kafka_producer_new(const char *brokers, rd_kafka_t **out);

/* A consumer in `group` subscribed to nothing yet: auto commit off, from the
 * earliest offset of a new group, topics auto-created on subscription.
 * rebalance_cb (may be NULL) replaces the default assignment handling. */
swf_error_t *swf_kafka_consumer_new(const char *brokers, const char *group,
                                    void (*rebalance_cb)(rd_kafka_t *, rd_kafka_resp_err_t,
                                                         rd_kafka_topic_partition_list_t *, void *),
                                    void *opaque, rd_kafka_t **out);

/* Subscribes a consumer to the given topics. */
swf_error_t *swf_kafka_subscribe(rd_kafka_t *consumer, const char *const *topics, size_t n);

/* Creates a topic with `partitions` partitions unless it exists (an
 * existing topic is success). Waits at most timeout_ms. */
swf_error_t *swf_kafka_topic_ensure(rd_kafka_t *rk, const char *topic, int partitions,
                                    int timeout_ms);

/* One message for swf_kafka_send. */
typedef struct swf_kafka_out {
    const char *topic;
    const char *key; /* may be NULL */
    const char *payload;
    size_t len;
    rd_kafka_resp_err_t result; /* filled: the delivery result */
} swf_kafka_out_t;

/* How long a producer tries to deliver one message before reporting failure,
 * unless SWF_KAFKA_SEND_TIMEOUT_MS says otherwise (1000 to 3600000). A
 * failed send is never a loss: the decider leaves its activity tasks in the
 * outbox for swf-history, which posts again on a later tick. */
#define SWF_KAFKA_SEND_TIMEOUT_MS_STR "30000"

/* Produces every message and waits until each was acknowledged or failed
 * (at most the send timeout after the last was produced);
 * msgs[i].result says which. Returns an error when any message failed (the
 * first failure), after all were attempted. The producer must come from
 * swf_kafka_producer_new (its delivery reports fill the slots). */
swf_error_t *swf_kafka_send(rd_kafka_t *producer, swf_kafka_out_t *msgs, size_t n);
/* swf_kafka_send in two halves, for a sender that goes on while Kafka
 * acknowledges: start produces every message and returns; wait is the rest
 * of swf_kafka_send. The slots must live until wait returns. */
void swf_kafka_send_start(rd_kafka_t *producer, swf_kafka_out_t *msgs, size_t n);
swf_error_t *swf_kafka_send_wait(rd_kafka_t *producer, swf_kafka_out_t *msgs, size_t n);

/*
 * A sender for history/service.h (swf_history_send_fn): publishes through
 * one producer, creating each topic it has not seen yet (with
 * task_partitions partitions) before its first message. Thread-safe.
 */
typedef struct swf_kafka_poster swf_kafka_poster_t;

swf_kafka_poster_t *swf_kafka_poster_new(rd_kafka_t *producer, int partitions);
void swf_kafka_poster_free(swf_kafka_poster_t *poster);
/* Makes sure a topic exists (once per poster). */
swf_error_t *swf_kafka_poster_topic(swf_kafka_poster_t *poster, const char *topic);
/* ctx is a swf_kafka_poster_t; msgs are swf_history_post_t. */
struct swf_history_post;
swf_error_t *swf_kafka_poster_send(void *ctx, struct swf_history_post *msgs, size_t n);

#endif
