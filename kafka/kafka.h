/*
 * kafka.h - swf's one layer over librdkafka: configuration, errors,
 * producers, consumers and topics, for every process (the decider,
 * swf-history, the worker library, the command line).
 *
 * Configuration comes from the environment (protocol/KAFKA.md, README):
 * SWF_KAFKA_BROKERS (default localhost:9092), SWF_INBOX_TOPIC,
 * SWF_DLQ_TOPIC, SWF_TASK_TOPIC_PREFIX, SWF_TASK_PARTITIONS (default 4),
 * SWF_KAFKA_SESSION_TIMEOUT_MS (consumer groups: how long a silent member
 * keeps its partitions; librdkafka's 45 s unless set, 300 to 3600000),
 * SWF_KAFKA_FETCH_WAIT_MS, SWF_KAFKA_SEND_TIMEOUT_MS, SWF_KAFKA_DEBUG, and
 * the deployment's own librdkafka properties in the file
 * SWF_KAFKA_CONFIG_FILE names, applied last to every client.
 *
 * Producers use acks=all (or idempotence, which implies it), no linger and
 * report every message's delivery; consumers never commit on their own (the
 * caller commits after its work is durable) and start a new group from the
 * earliest offset.
 *
 * librdkafka's error codes become swf_error_t in exactly one place,
 * swf_kafka_error(), with one list of the codes a retry can help.
 *
 * Ownership: handles returned through out-parameters belong to the caller
 * (swf_kafka_producer_free; swf_kafka_consumer_close for consumers).
 * Strings in swf_kafka_names_t live as long as the process (they are the
 * environment's). Arguments are borrowed.
 * Thread-safety: librdkafka handles are thread-safe; swf_kafka_send and
 * swf_kafka_produce may be called from several threads on one producer.
 */
#ifndef SWF_KAFKA_KAFKA_H
#define SWF_KAFKA_KAFKA_H

#include <librdkafka/rdkafka.h>
#include <stdbool.h>
#include <stddef.h>

#include "protocol/error.h"
#include "protocol/message.h"

/* ---- configuration -------------------------------------------------------- */

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

/* How long a consumer's fetch may wait for data: $SWF_KAFKA_FETCH_WAIT_MS,
 * default 5 (0 to 10000). */
int swf_kafka_fetch_wait_ms(void);

/* $SWF_KAFKA_SESSION_TIMEOUT_MS when it is 300 to 3600000, else 0
 * (librdkafka's 45 s). */
int swf_kafka_session_timeout_ms(void);

/* How long a producer tries to deliver one message before reporting
 * failure: $SWF_KAFKA_SEND_TIMEOUT_MS when it is 1000 to 3600000, else
 * SWF_KAFKA_SEND_TIMEOUT_MS. */
#define SWF_KAFKA_SEND_TIMEOUT_MS 30000
int swf_kafka_send_timeout_ms(void);

/* The properties file of SWF_KAFKA_CONFIG_FILE: one `key = value` per line,
 * as librdkafka's (and kcat's -F) properties files: blank lines and lines
 * starting with '#' or '!' are skipped, spaces around the key and the value
 * are trimmed, and the value is everything after the first '='. At most
 * SWF_LIMIT_KAFKA_CONFIG_BYTES, lines of at most
 * SWF_LIMIT_KAFKA_CONFIG_LINE_BYTES. The properties swf relies on for its
 * guarantees, or sets from a variable of its own, are refused
 * (swf_kafka_conf_owned says which, and why), so a file never silently
 * undoes them; every other property overrides swf's setting. */

/* What swf does with `key` itself, when a properties file may not set it;
 * else NULL. */
const char *swf_kafka_conf_owned(const char *key);

/* Sets every property of the file at `path` on conf; a NULL or empty path
 * sets nothing. Errors name the file and the line. */
swf_error_t *swf_kafka_conf_file_apply(const char *path, rd_kafka_conf_t *conf);

/* swf_kafka_conf_file_apply with the path from SWF_KAFKA_CONFIG_FILE. */
swf_error_t *swf_kafka_conf_env_apply(rd_kafka_conf_t *conf);

/* rd_kafka_conf_set, its refusal as SWF_E_INPUT naming the property. */
swf_error_t *swf_kafka_conf_set(rd_kafka_conf_t *conf, const char *key, const char *value);

/* ---- errors --------------------------------------------------------------- */

/* Whether a retry of what failed with `code` can succeed (kafka/error.c
 * says why for each code). */
bool swf_kafka_retriable(rd_kafka_resp_err_t code);

/* Translates a librdkafka error: SWF_E_LIMIT for a message too large,
 * SWF_E_KAFKA otherwise, retriable as swf_kafka_retriable says, with
 * librdkafka's text as the cause. `what` says what was being done
 * ("produce to swf.inbox"). */
swf_error_t *swf_kafka_error(rd_kafka_resp_err_t code, const char *what);

/* ---- producers ------------------------------------------------------------ */

/* A delivery report: `msg_opaque` is what the message was produced with. */
typedef void (*swf_kafka_delivery_fn)(void *ctx, void *msg_opaque, rd_kafka_resp_err_t result);

typedef struct swf_kafka_producer_config {
    const char *brokers;   /* required */
    const char *client_id; /* NULL: librdkafka's */
    /* Kafka's idempotent producer: the messages of one partition stay in
     * order and are written once even when librdkafka retries them. Needs
     * Kafka 0.11 or newer. No swf process uses it: librdkafka 2.0.2 (Debian
     * 12's) reported a message delivered that no broker stored when a
     * partition's leader changed with the producer's first request to it in
     * flight (protocol/KAFKA.md, step 3 of "Writing a worker"). */
    bool idempotent;
    /* How long a message may wait for delivery; 0: swf_kafka_send_timeout_ms(). */
    int send_timeout_ms;
    /* NULL: reports fill the swf_kafka_out_t slots of swf_kafka_send. */
    swf_kafka_delivery_fn on_delivery;
    void *ctx;
} swf_kafka_producer_config_t;

/* A producer (acks=all, no linger, Nagle off): messages produced together
 * still travel together, as librdkafka batches what queued up while the
 * previous request was on the wire. */
swf_error_t *swf_kafka_producer_new(const swf_kafka_producer_config_t *cfg, rd_kafka_t **out);

/* Waits up to SWF_KAFKA_FLUSH_MS for queued messages, then destroys the
 * producer. NULL does nothing. */
#define SWF_KAFKA_FLUSH_MS 5000
void swf_kafka_producer_free(rd_kafka_t *producer);

/* Queues one message (copied) for delivery; msg_opaque goes to its
 * delivery report. Waits while librdkafka's queue is full, up to
 * SWF_KAFKA_QUEUE_FULL_MS. SWF_E_LIMIT for a message over SWF_MSG_MAX_BYTES. */
#define SWF_KAFKA_QUEUE_FULL_MS 10000
swf_error_t *swf_kafka_produce(rd_kafka_t *producer, const char *topic, const char *key,
                               const char *payload, size_t len, void *msg_opaque);

/* One message for swf_kafka_send. */
typedef struct swf_kafka_out {
    const char *topic;
    const char *key; /* may be NULL */
    const char *payload;
    size_t len;
    rd_kafka_resp_err_t result; /* filled: the delivery result */
} swf_kafka_out_t;

/* Produces every message and waits until each was acknowledged or failed
 * (at most the send timeout after the last was produced); msgs[i].result
 * says which. Returns an error when any message failed (the first
 * failure), after all were attempted. The producer must have no
 * on_delivery of its own (its reports fill the slots). */
swf_error_t *swf_kafka_send(rd_kafka_t *producer, swf_kafka_out_t *msgs, size_t n);
/* swf_kafka_send in two halves, for a sender that goes on while Kafka
 * acknowledges: start produces every message and returns; wait is the rest
 * of swf_kafka_send. The slots must live until wait returns. */
void swf_kafka_send_start(rd_kafka_t *producer, swf_kafka_out_t *msgs, size_t n);
swf_error_t *swf_kafka_send_wait(rd_kafka_t *producer, swf_kafka_out_t *msgs, size_t n);

/* ---- consumers ------------------------------------------------------------ */

typedef void (*swf_kafka_rebalance_fn)(rd_kafka_t *rk, rd_kafka_resp_err_t code,
                                       rd_kafka_topic_partition_list_t *parts, void *opaque);

typedef struct swf_kafka_consumer_config {
    const char *brokers;   /* required */
    const char *group;     /* required */
    const char *client_id; /* NULL: librdkafka's */
    /* How long the group waits for a silent member before its partitions
     * go to the others; 0: swf_kafka_session_timeout_ms(). */
    int session_timeout_ms;
    /* NULL: swf_kafka_rebalance_apply alone. One of its own must call
     * swf_kafka_rebalance_apply. opaque goes to it. */
    swf_kafka_rebalance_fn on_rebalance;
    void *opaque;
} swf_kafka_consumer_config_t;

/* A consumer in its group subscribed to nothing yet: auto commit off, from
 * the earliest offset of a new group, the fetch wait of
 * swf_kafka_fetch_wait_ms(), topics that appear later found within 2 s.
 * Its rebalances and its messages are both served by swf_kafka_poll. */
swf_error_t *swf_kafka_consumer_new(const swf_kafka_consumer_config_t *cfg, rd_kafka_t **out);

/* Subscribes a consumer to the given topics. */
swf_error_t *swf_kafka_subscribe(rd_kafka_t *consumer, const char *const *topics, size_t n);

/* Takes over or gives up the partitions of a rebalance, whole (Kafka's
 * eager assignors) or one list at a time (the cooperative ones, which a
 * properties file may choose). For a rebalance callback. */
swf_error_t *swf_kafka_rebalance_apply(rd_kafka_t *consumer, rd_kafka_resp_err_t code,
                                       rd_kafka_topic_partition_list_t *parts);
/* Whether the group hands over only the partitions that move. */
bool swf_kafka_rebalance_incremental(rd_kafka_t *consumer);

/*
 * Takes up to max messages: waits up to first_wait_ms for the first, then
 * up to more_wait_ms (from the first) for the rest. Returns how many are in
 * out[] (the caller destroys each, rd_kafka_message_destroy). Stops at a
 * consumer error, which *err gets (the messages before it are returned);
 * ends of partitions and topics that do not exist yet (they appear with
 * their first message) are no errors.
 */
size_t swf_kafka_poll(rd_kafka_t *consumer, int first_wait_ms, int more_wait_ms,
                      rd_kafka_message_t **out, size_t max, swf_error_t **err);

/* Commits, per partition, the offset after the last of msgs (async: a
 * lost commit only makes messages come again). Nothing to commit is
 * success. */
swf_error_t *swf_kafka_commit(rd_kafka_t *consumer, rd_kafka_message_t *const *msgs, size_t n,
                              bool async);
/* Commits the given offsets (each the next offset to read). */
swf_error_t *swf_kafka_commit_offsets(rd_kafka_t *consumer,
                                      const rd_kafka_topic_partition_list_t *offsets, bool async);

/* How long leaving a consumer group may wait for Kafka (README: 10 s). */
#define SWF_KAFKA_CLOSE_MS 10000

/*
 * Leaves the group and destroys the consumer, waiting up to timeout_ms:
 * librdkafka's close has no limit of its own (protocol/bounded.h). first
 * (may be NULL) runs before, on the same thread (a last commit). Returns
 * true when it ended in time; else the close is abandoned, goes on on a
 * thread of its own, and arg belongs to it: late(arg) (may be NULL) runs
 * if it ever ends, to free what the caller would have. A rebalance
 * callback the close runs may still use its opaque until it returns.
 * Meant for the end of a process or of a handle.
 */
bool swf_kafka_consumer_close(rd_kafka_t *consumer, int timeout_ms, void (*first)(void *arg),
                              void (*late)(void *arg), void *arg);

/* ---- topics --------------------------------------------------------------- */

/* Creates a topic with `partitions` partitions unless it exists (an
 * existing topic is success). Waits at most timeout_ms. */
swf_error_t *swf_kafka_topic_ensure(rd_kafka_t *rk, const char *topic, int partitions,
                                    int timeout_ms);

/*
 * Asks the cluster for a topic's metadata now and waits for it (at most
 * timeout_ms); true when the topic exists with partitions. For a producer
 * that sends once and goes (`swf start`, the CLI's messages): librdkafka
 * learns the partitions of a topic it has just met at its next scan of
 * topics, up to a second later, unless the metadata of its connection
 * arrived after the topic was met (measured: a 1 s wait in one `swf start`
 * in eight to ten on `swf dev`). A long-lived producer need not call it.
 */
bool swf_kafka_topic_lookup(rd_kafka_t *rk, const char *topic, int timeout_ms);

/*
 * A sender of protocol messages (swf_msg_send_fn, which history/service.h
 * takes): publishes through one producer, creating each topic it has not
 * seen yet (with `partitions` partitions) before its first message.
 * Thread-safe. The producer stays the caller's and must outlive the poster.
 */
typedef struct swf_kafka_poster swf_kafka_poster_t;

swf_kafka_poster_t *swf_kafka_poster_new(rd_kafka_t *producer, int partitions);
void swf_kafka_poster_free(swf_kafka_poster_t *poster);
/* Makes sure a topic exists (once per poster). */
swf_error_t *swf_kafka_poster_topic(swf_kafka_poster_t *poster, const char *topic);
/* ctx is a swf_kafka_poster_t. */
swf_error_t *swf_kafka_poster_send(void *ctx, swf_msg_post_t *msgs, size_t n);

#endif
