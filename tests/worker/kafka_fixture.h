/*
 * kafka_fixture.h - a librdkafka mock cluster for the worker tests.
 *
 * The mock cluster speaks the real Kafka protocol on a loopback port, so the
 * worker library, swf-worker and the example workers in Python and
 * JavaScript all talk to it as to a real broker. The helpers here publish
 * messages and read topics with plain librdkafka clients (a reader is
 * assigned its partitions directly, so it needs no consumer group).
 * Every wait is bounded and generous; nothing asserts on timing.
 */
#ifndef SWF_TESTS_WORKER_KAFKA_FIXTURE_H
#define SWF_TESTS_WORKER_KAFKA_FIXTURE_H

#include <criterion/criterion.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "protocol/json.h"
#include "protocol/token.h"

#define FX_TASK_PARTITIONS 2

typedef struct fx_kafka {
    rd_kafka_t *owner; /* the handle that owns the mock cluster */
    rd_kafka_mock_cluster_t *mock;
    rd_kafka_t *producer;
    char brokers[256];
} fx_kafka_t;

static inline rd_kafka_t *fx_client(const char *brokers, rd_kafka_type_t type, const char *group)
{
    char text[512];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    if (brokers)
        rd_kafka_conf_set(conf, "bootstrap.servers", brokers, text, sizeof(text));
    if (group) {
        rd_kafka_conf_set(conf, "group.id", group, text, sizeof(text));
        rd_kafka_conf_set(conf, "enable.auto.commit", "false", text, sizeof(text));
    }
    rd_kafka_conf_set(conf, "log_level", "3", text, sizeof(text));
    rd_kafka_t *rk = rd_kafka_new(type, conf, text, sizeof(text));
    cr_assert_not_null(rk, "rd_kafka_new: %s", text);
    return rk;
}

/* Starts a mock cluster with the task topic of `task_list`, the inbox and the DLQ. */
static inline void fx_kafka_start(fx_kafka_t *k, const char *task_list)
{
    memset(k, 0, sizeof(*k));
    k->owner = fx_client(NULL, RD_KAFKA_PRODUCER, NULL);
    k->mock = rd_kafka_mock_cluster_new(k->owner, 1);
    cr_assert_not_null(k->mock, "mock cluster");
    snprintf(k->brokers, sizeof(k->brokers), "%s", rd_kafka_mock_cluster_bootstraps(k->mock));
    char topic[256];
    snprintf(topic, sizeof(topic), "swf.tasks.%s", task_list);
    cr_assert_eq(rd_kafka_mock_topic_create(k->mock, topic, FX_TASK_PARTITIONS, 1), 0);
    cr_assert_eq(rd_kafka_mock_topic_create(k->mock, "swf.inbox", 1, 1), 0);
    cr_assert_eq(rd_kafka_mock_topic_create(k->mock, "swf.dlq", 1, 1), 0);
    k->producer = fx_client(k->brokers, RD_KAFKA_PRODUCER, NULL);
}

static inline void fx_kafka_stop(fx_kafka_t *k)
{
    rd_kafka_flush(k->producer, 10000);
    rd_kafka_destroy(k->producer);
    rd_kafka_mock_cluster_destroy(k->mock);
    rd_kafka_destroy(k->owner);
}

/* Publishes one message and waits until the broker has it. */
static inline void fx_publish(fx_kafka_t *k, const char *topic, const char *key, const char *value)
{
    rd_kafka_resp_err_t err = rd_kafka_producev(
        k->producer, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_KEY(key, key ? strlen(key) : 0),
        RD_KAFKA_V_VALUE((void *)value, strlen(value)), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_END);
    cr_assert_eq(err, 0, "produce: %s", rd_kafka_err2str(err));
    cr_assert_eq(rd_kafka_flush(k->producer, 30000), 0, "flush timed out");
}

/* An activity.task message (a new reference). hb_s/stc_s 0 leave the timeouts out. */
static inline json_object *fx_task(const char *execution_id, const char *activity_id,
                                   const char *input, double hb_s)
{
    json_object *t = json_object_new_object();
    char *token = swf_token_make(SWF_TOKEN_DEV_SECRET, execution_id, activity_id);
    json_object_object_add(t, "type", json_object_new_string("activity.task"));
    json_object_object_add(t, "taskToken", json_object_new_string(token));
    json_object_object_add(t, "executionId", json_object_new_string(execution_id));
    json_object_object_add(t, "activityId", json_object_new_string(activity_id));
    json_object *at = json_object_new_object();
    json_object_object_add(at, "name", json_object_new_string("upper"));
    json_object_object_add(at, "version", json_object_new_string("1"));
    json_object_object_add(t, "activityType", at);
    json_object_object_add(t, "state", json_object_new_string("Upper"));
    json_object *in = NULL;
    cr_assert_null(swf_json_parse(input, strlen(input), 1 << 20, &in));
    json_object_object_add(t, "input", in);
    json_object_object_add(t, "attempt", json_object_new_int(0));
    json_object_object_add(t, "scheduledEventId", json_object_new_int(5));
    json_object_object_add(t, "startToCloseTimeout", json_object_new_int(300));
    if (hb_s > 0)
        json_object_object_add(t, "heartbeatTimeout", json_object_new_double(hb_s));
    free(token);
    return t;
}

static inline void fx_publish_task(fx_kafka_t *k, const char *task_list, json_object *task)
{
    char topic[256];
    snprintf(topic, sizeof(topic), "swf.tasks.%s", task_list);
    fx_publish(k, topic, swf_json_get_string(task, "executionId"), swf_json_str(task));
}

/* A reader of every partition of a topic from its beginning. */
static inline rd_kafka_t *fx_reader(fx_kafka_t *k, const char *topic, int partitions)
{
    rd_kafka_t *c = fx_client(k->brokers, RD_KAFKA_CONSUMER, "fx-reader");
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(partitions);
    for (int i = 0; i < partitions; i++)
        rd_kafka_topic_partition_list_add(l, topic, i)->offset = RD_KAFKA_OFFSET_BEGINNING;
    cr_assert_eq(rd_kafka_assign(c, l), 0);
    rd_kafka_topic_partition_list_destroy(l);
    return c;
}

static inline void fx_reader_free(rd_kafka_t *c)
{
    rd_kafka_consumer_close(c);
    rd_kafka_destroy(c);
}

/*
 * The next message of a reader as JSON (asserting that it parses), waiting up
 * to max_ms; NULL when none came. *key (may be NULL) gets a malloc'd key.
 */
static inline json_object *fx_read(rd_kafka_t *c, int max_ms, char **key)
{
    for (int waited = 0; waited < max_ms; waited += 200) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(c, 200);
        if (m == NULL)
            continue;
        if (m->err) {
            rd_kafka_message_destroy(m);
            continue;
        }
        json_object *v = NULL;
        swf_error_t *err = swf_json_parse(m->payload, m->len, 1 << 22, &v);
        cr_assert_null(err, "message is not JSON: %.*s", (int)m->len, (char *)m->payload);
        if (key)
            *key = m->key ? strndup(m->key, m->key_len) : NULL;
        rd_kafka_message_destroy(m);
        return v;
    }
    return NULL;
}

/* The committed offset of a group on one partition of a topic (negative: none). */
static inline int64_t fx_committed(fx_kafka_t *k, const char *group, const char *topic,
                                   int partition)
{
    rd_kafka_t *c = fx_client(k->brokers, RD_KAFKA_CONSUMER, group);
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, topic, partition);
    rd_kafka_resp_err_t err = rd_kafka_committed(c, l, 30000);
    cr_assert_eq(err, 0, "committed: %s", rd_kafka_err2str(err));
    int64_t off = l->elems[0].offset;
    rd_kafka_topic_partition_list_destroy(l);
    rd_kafka_destroy(c);
    return off;
}

/* ---- child processes (swf-worker, the example workers) ---- */

/* Starts argv[0] with SWF_KAFKA_BROKERS set; stdout and stderr go to the test's. */
static inline pid_t fx_spawn(fx_kafka_t *k, char *const argv[])
{
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
        setenv("SWF_KAFKA_BROKERS", k->brokers, 1);
        setenv("KAFKAJS_NO_PARTITIONER_WARNING", "1", 1);
        execvp(argv[0], argv);
        fprintf(stderr, "cannot run %s\n", argv[0]);
        _exit(127);
    }
    return pid;
}

static inline void fx_sleep_ms(int ms)
{
    nanosleep(&(struct timespec){.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L}, NULL);
}

/* Sends sig (0: none) and waits up to max_ms for the exit; returns the wait
 * status, or kills the child and fails when it does not exit. */
static inline int fx_stop(pid_t pid, int sig, int max_ms)
{
    if (sig)
        kill(pid, sig);
    int status = 0;
    for (int waited = 0; waited < max_ms; waited += 100) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return status;
        fx_sleep_ms(100);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    cr_assert_fail("process %d did not exit within %d ms", (int)pid, max_ms);
    return status;
}

/* The activity id of an answer, found by its token among n candidates
 * made with the development secret for `execution_id`. */
static inline const char *fx_answer_activity(json_object *answer, const char *execution_id,
                                             const char *const *ids, size_t n)
{
    const char *tok = swf_json_get_string(answer, "taskToken");
    for (size_t i = 0; tok && i < n; i++) {
        char *t = swf_token_make(SWF_TOKEN_DEV_SECRET, execution_id, ids[i]);
        bool same = strcmp(t, tok) == 0;
        free(t);
        if (same)
            return ids[i];
    }
    return NULL;
}

#endif
