/*
 * real_kafka.h - the e2e and recovery suites on a real Apache Kafka instead
 * of librdkafka's mock cluster.
 *
 * When SWF_TEST_KAFKA_BROKERS is set (scripts/real-kafka.sh start prints the
 * value; scripts/test.sh sets it for the second run of these suites), the
 * fixtures use that cluster: each test gets topics of its own (a tag of its
 * process id and the time in the names SWF_INBOX_TOPIC, SWF_DLQ_TOPIC and
 * SWF_TASK_TOPIC_PREFIX, which every daemon and client reads), created here
 * with 4 partitions each, so runs never see each other's messages. Consumer groups keep their fixed
 * names: run the suites one test at a time (CRITERION_JOBS=1) on a shared cluster.
 *
 * A test that takes the broker down and brings it back does it to the real
 * cluster through the script (SWF_TEST_KAFKA_DIR, the SWF_KAFKA_DIR that
 * `start` printed): `down` kills every node with SIGKILL, keeping its
 * storage; `up` starts them again and waits until they serve.
 */
#ifndef SWF_TESTS_E2E_REAL_KAFKA_H
#define SWF_TESTS_E2E_REAL_KAFKA_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "kafka/kafka.h"

/* The real cluster's bootstrap servers, or NULL: the mock. */
static inline const char *real_kafka_brokers(void)
{
    const char *b = getenv("SWF_TEST_KAFKA_BROKERS");
    return b != NULL && b[0] != '\0' ? b : NULL;
}

/* Points SWF_INBOX_TOPIC, SWF_DLQ_TOPIC and SWF_TASK_TOPIC_PREFIX at topics
 * of this test only, and creates them on the real cluster with 4 partitions
 * (the mock's inbox and task topics have 4; its dead letters 1, which the
 * broker's auto-creation on the first metadata request would not keep). */
static inline void real_kafka_topics(const char *brokers, const char *const *task_lists, size_t n)
{
    char tag[64], v[128];
    snprintf(tag, sizeof(tag), "t%ld-%d", (long)time(NULL), (int)getpid());
    snprintf(v, sizeof(v), "swf.inbox.%s", tag);
    setenv("SWF_INBOX_TOPIC", v, 1);
    snprintf(v, sizeof(v), "swf.dlq.%s", tag);
    setenv("SWF_DLQ_TOPIC", v, 1);
    snprintf(v, sizeof(v), "swf.tasks.%s.", tag);
    setenv("SWF_TASK_TOPIC_PREFIX", v, 1);
    setenv("SWF_TASK_PARTITIONS", "4", 1);
    swf_kafka_names_t names;
    swf_kafka_names_env(&names);
    rd_kafka_t *rk = NULL;
    swf_error_t *err =
        swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = brokers}, &rk);
    for (size_t i = 0; err == NULL && i < n + 2; i++) {
        char topic[256];
        if (i < n)
            swf_kafka_task_topic(&names, task_lists[i], topic, sizeof(topic));
        else
            snprintf(topic, sizeof(topic), "%s", i == n ? names.inbox : names.dlq);
        err = swf_kafka_topic_ensure(rk, topic, 4, 10000);
    }
    swf_kafka_producer_free(rk);
    if (err != NULL) {
        char msg[512];
        snprintf(msg, sizeof(msg), "creating topics on %s: %s%s%s", brokers, swf_error_message(err),
                 swf_error_cause(err) ? ": " : "",
                 swf_error_cause(err) ? swf_error_cause(err) : "");
        swf_error_free(err);
        cr_assert_fail("%s", msg);
    }
}

/* Takes every node of the real cluster down (up = false) or brings it back
 * and waits until it serves (up = true), through scripts/real-kafka.sh. */
static inline void real_kafka_set(bool up)
{
    const char *dir = getenv("SWF_TEST_KAFKA_DIR");
    cr_assert(dir != NULL && dir[0] != '\0',
              "SWF_TEST_KAFKA_BROKERS is set but SWF_TEST_KAFKA_DIR is not: this test takes the "
              "broker down and needs the cluster's folder (scripts/real-kafka.sh start prints it)");
    char cmd[1024];
    snprintf(cmd, sizeof(cmd), "'%s/scripts/real-kafka.sh' %s '%s' >&2", SWF_SOURCE_DIR,
             up ? "up" : "down", dir);
    int status = system(cmd);
    cr_assert_eq(status, 0, "%s: status %d", cmd, status);
}

#endif
