/*
 * test_poll.c - GetActivityTask's hub (api/poll.c) against librdkafka's
 * own starts of partition fetchers, on a dev system (PostgreSQL and the
 * mock Kafka cluster, cli/dev.h).
 *
 * librdkafka (2.0) starts an assigned partition's fetcher on its main
 * thread, once the committed offsets are in, in two steps: it takes a new
 * version barrier of the partition, then queues the start. A pause or a
 * resume of the application queued between the two carries a newer
 * barrier, and the start, served after it, is dropped as outdated: the
 * partition stays assigned and is never fetched until the next rebalance.
 * The race is rare on its own; this test binary makes it certain for any
 * pause or resume that follows an assign, in place of what a loaded
 * machine does at random. It stands in for librdkafka's rd_kafka_log_print,
 * which prints its debug lines, and holds the main thread for 300 ms
 * between the two steps of a start (found by its debug line "Start
 * consuming"); and for rd_kafka_pause_partitions and
 * rd_kafka_resume_partitions, which it delays by 50 ms. (The same stand-ins
 * as tests/worker/test_worker.c's, for the worker library.)
 */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>
#include <stdatomic.h>
#include <syslog.h>

#include "client.h"
#include "protocol/token.h"

#define ARN "arn:aws:states:us-east-1:1:activity:"

/* Starts of the activity's partition fetchers seen so far. */
static atomic_int starts;
static char task_topic[256];

void rd_kafka_log_print(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
    if (strstr(buf, "Start consuming") != NULL) {
        if (strstr(buf, task_topic) != NULL)
            atomic_fetch_add(&starts, 1);
        usleep(300 * 1000);
    }
    if (level == LOG_DEBUG)
        return; /* the test's own tracing, turned on for the line above */
    /* librdkafka's own format. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    fprintf(stderr, "%%%d|%lld.%03d|%s|%s| %s\n", level, (long long)ts.tv_sec,
            (int)(ts.tv_nsec / 1000000), fac, rk ? rd_kafka_name(rk) : "", buf);
}

typedef rd_kafka_resp_err_t (*pause_fn)(rd_kafka_t *, rd_kafka_topic_partition_list_t *);

static rd_kafka_resp_err_t delayed(const char *name, rd_kafka_t *rk,
                                   rd_kafka_topic_partition_list_t *partitions)
{
    pause_fn real = NULL;
    *(void **)&real = dlsym(RTLD_NEXT, name);
    cr_assert_not_null(real, "%s", dlerror());
    usleep(50 * 1000);
    return real(rk, partitions);
}

rd_kafka_resp_err_t rd_kafka_pause_partitions(rd_kafka_t *rk,
                                              rd_kafka_topic_partition_list_t *partitions)
{
    return delayed("rd_kafka_pause_partitions", rk, partitions);
}

rd_kafka_resp_err_t rd_kafka_resume_partitions(rd_kafka_t *rk,
                                               rd_kafka_topic_partition_list_t *partitions)
{
    return delayed("rd_kafka_resume_partitions", rk, partitions);
}

/* Publishes an activity task of execution `exec` to `partition` of the
 * activity's task topic. */
static void task_publish(rd_kafka_t *p, int32_t partition, const char *exec)
{
    char *token = swf_token_make(swf_token_secret_env(), exec, "1");
    char msg[1024];
    snprintf(msg, sizeof(msg),
             "{\"type\":\"activity.task\",\"taskToken\":\"%s\",\"executionId\":\"%s\","
             "\"activityId\":\"1\",\"activityType\":{\"name\":\"act\",\"version\":\"1\"},"
             "\"state\":\"Race\",\"input\":{\"task\":\"%s\"},\"attempt\":0,\"scheduledEventId\":5,"
             "\"startToCloseTimeout\":300}",
             token, exec, exec);
    free(token);
    cr_assert_eq(rd_kafka_producev(p, RD_KAFKA_V_TOPIC(task_topic), RD_KAFKA_V_PARTITION(partition),
                                   RD_KAFKA_V_KEY(exec, strlen(exec)),
                                   RD_KAFKA_V_VALUE(msg, strlen(msg)),
                                   RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
                 RD_KAFKA_RESP_ERR_NO_ERROR);
}

/* One GetActivityTask; the execution id of the task (its input names it)
 * in exec ("" for the empty answer). */
static void activity_poll(int port, const char *activity, char exec[64])
{
    char body[256];
    snprintf(body, sizeof(body), "{\"activityArn\": \"" ARN "%s\"}", activity);
    char *req = request(port, SFN "GetActivityTask", body, KEY, SECRET);
    char resp[8192];
    exchange(port, req, strlen(req), resp, sizeof(resp), 30000);
    free(req);
    cr_assert(strncmp(resp, "HTTP/1.1 200", 12) == 0, "%s", resp);
    exec[0] = '\0';
    const char *at = strstr(resp, "exec-");
    if (at != NULL)
        sscanf(at, "exec-%[0-9]", exec);
}

typedef struct sys {
    swf_dev_t *dev;
    swf_api_t *api;
    char creds[64];
    int port;
    const char *activity;
    rd_kafka_t *producer;
} sys_t;

/* A dev system, swf-api on it (1 s polls) and the activity's task topic
 * (4 partitions); then a first poll of the activity, which ends empty
 * while its consumer joins, and the four starts of its fetchers. The
 * assignment comes while nobody waits. */
static void sys_start(sys_t *s, const char *activity)
{
    setenv("SWF_KAFKA_DEBUG", "topic", 1); /* for the start's debug line */
    swf_dev_options_t opt = {.deciders = 0, .time_scale = 1};
    check(swf_dev_start(&opt, &s->dev));
    s->api = api_up(s->dev, s->creds, (swf_api_config_t){.poll_s = 1});
    s->port = swf_api_port(s->api);
    s->activity = activity;
    swf_kafka_names_t names;
    swf_kafka_names_env(&names);
    swf_kafka_task_topic(&names, activity, task_topic, sizeof(task_topic));
    check(swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = swf_dev_brokers(s->dev)},
                                 &s->producer));
    check(swf_kafka_topic_ensure(s->producer, task_topic, 4, 10000));
    char exec[64];
    activity_poll(s->port, activity, exec);
    cr_assert_str_eq(exec, "");
    for (int64_t t0 = swf_time_now_ms(); atomic_load(&starts) < 4;) {
        cr_assert_lt(swf_time_now_ms() - t0, 60000, "the partitions were not assigned in 60 s");
        usleep(100 * 1000);
    }
    usleep(1000 * 1000);
}

static void sys_stop(sys_t *s)
{
    rd_kafka_destroy(s->producer);
    api_down(s->api, s->creds);
    swf_dev_stop(s->dev);
}

/* Publishes exec-0 to exec-3, one to each partition, and polls until the
 * four came or 60 s passed; asserts each came. */
static void tasks_reach_pollers(sys_t *s)
{
    for (int i = 0; i < 4; i++) {
        char e[16];
        snprintf(e, sizeof(e), "exec-%d", i);
        task_publish(s->producer, i, e);
    }
    cr_assert_eq(rd_kafka_flush(s->producer, 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
    bool got[4] = {false};
    int n = 0;
    int64_t t0 = swf_time_now_ms();
    while (n < 4 && swf_time_now_ms() - t0 < 60000) {
        char exec[64];
        activity_poll(s->port, s->activity, exec);
        int i = exec[0] != '\0' ? atoi(exec) : -1;
        if (i >= 0 && i < 4 && !got[i]) {
            got[i] = true;
            n++;
        }
    }
    cr_log_info("%d tasks after %lld ms", n, (long long)(swf_time_now_ms() - t0));
    for (int i = 0; i < 4; i++)
        cr_assert(got[i], "the task on partition %d never came: its fetcher was never started", i);
}

/* The hub paused each new assignment right after rd_kafka_assign when
 * nobody waited (and the whole assignment whenever pollers went, resuming
 * it when they came): here the activity's first poller leaves (1 s polls)
 * before its consumer joined, so the assignment comes while nobody waits.
 * The pause dropped the start of a partition's fetcher, and the task
 * published to that partition never came. */
Test(poll, partitions_assigned_while_nobody_polls_are_fetched_for_the_next_pollers, .timeout = 300)
{
    sys_t s;
    sys_start(&s, "race");
    tasks_reach_pollers(&s);
    sys_stop(&s);
}
