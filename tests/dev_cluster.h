/*
 * dev_cluster.h - what the tests that run against a dev system (a throwaway
 * PostgreSQL and the librdkafka mock cluster, cli/dev.h) share: failing the
 * test on an error, parsing a literal, and reading a topic back.
 *
 * One copy, so that every such test reports a failure the same way (the
 * message and its cause) and bounds its reads the same way.
 */
#ifndef SWF_TESTS_DEV_CLUSTER_H
#define SWF_TESTS_DEV_CLUSTER_H

#include <criterion/criterion.h>
#include <librdkafka/rdkafka.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kafka/kafka.h"
#include "protocol/error.h"
#include "protocol/json.h"
#include "protocol/time.h"

/* Fails the test with err's message and cause unless err is NULL; takes err. */
static inline void check(swf_error_t *err)
{
    if (err != NULL) {
        char msg[1024];
        snprintf(msg, sizeof(msg), "%s%s%s", swf_error_message(err),
                 swf_error_cause(err) ? ": " : "",
                 swf_error_cause(err) ? swf_error_cause(err) : "");
        swf_error_free(err);
        cr_assert_fail("%s", msg);
    }
}

/* The JSON text s, parsed (the caller owns it); fails the test when it is not JSON. */
static inline json_object *parse(const char *s)
{
    json_object *o = NULL;
    check(swf_json_parse(s, strlen(s), 1u << 20, &o));
    return o;
}

/* Produces msg (taken) to the inbox: to one partition whatever its key
 * says, or by key (-1), as a client other than swf's might. */
static inline void inbox_send_to(const char *brokers, int32_t partition, const char *key,
                                 json_object *msg)
{
    rd_kafka_t *p;
    check(swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = brokers}, &p));
    swf_kafka_names_t names;
    swf_kafka_names_env(&names);
    const char *s = swf_json_str(msg);
    cr_assert_eq(
        rd_kafka_producev(p, RD_KAFKA_V_TOPIC(names.inbox), RD_KAFKA_V_PARTITION(partition),
                          RD_KAFKA_V_KEY(key, strlen(key)), RD_KAFKA_V_VALUE((void *)s, strlen(s)),
                          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
        RD_KAFKA_RESP_ERR_NO_ERROR);
    cr_assert_eq(rd_kafka_flush(p, 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_destroy(p);
    json_object_put(msg);
}

/* A consumer of `topic` that reads it from the beginning, in a consumer
 * group of its own (the caller closes and destroys it). */
static inline rd_kafka_t *topic_reader_new(const char *brokers, const char *topic)
{
    static int readers;
    rd_kafka_t *c;
    char group[64];
    snprintf(group, sizeof(group), "test-%d-%ld-%d", (int)getpid(), (long)swf_time_now_ms(),
             readers++);
    check(swf_kafka_consumer_new(&(swf_kafka_consumer_config_t){.brokers = brokers, .group = group},
                                 &c));
    const char *topics[1] = {topic};
    check(swf_kafka_subscribe(c, topics, 1));
    return c;
}

/* Reads `topic` from the beginning until a message holding `needle` (true)
 * or for about a minute (false). */
static inline bool topic_has(const char *brokers, const char *topic, const char *needle)
{
    rd_kafka_t *c = topic_reader_new(brokers, topic);
    bool found = false;
    for (int i = 0; i < 600 && !found; i++) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(c, 100);
        if (m == NULL)
            continue;
        if (m->err == 0) {
            char *text = strndup(m->payload, m->len);
            found = text != NULL && strstr(text, needle) != NULL;
            free(text);
        }
        rd_kafka_message_destroy(m);
    }
    rd_kafka_consumer_close(c);
    rd_kafka_destroy(c);
    return found;
}

#endif
