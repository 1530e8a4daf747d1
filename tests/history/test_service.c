/*
 * test_service.c - swf-history (history/service.c) against a throwaway
 * PostgreSQL and the mock Kafka cluster, with no decider running: what the
 * service posts is read back from the inbox and task topics.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/dev.h"
#include "decider/kafka.h"
#include "history/pg.h"
#include "history/service.h"
#include "protocol/json.h"
#include "protocol/message.h"
#include "protocol/time.h"

static void check(swf_error_t *err)
{
    if (err != NULL) {
        char msg[512];
        snprintf(msg, sizeof(msg), "%s", swf_error_message(err));
        swf_error_free(err);
        cr_assert_fail("%s", msg);
    }
}

static json_object *parse(const char *s)
{
    json_object *o = NULL;
    check(swf_json_parse(s, strlen(s), 1u << 20, &o));
    return o;
}

/* Reads `topic` from the beginning until a message holding `needle` (bounded). */
static bool topic_has(const char *brokers, const char *topic, const char *needle)
{
    rd_kafka_t *c;
    char group[64];
    snprintf(group, sizeof(group), "test-%d-%ld", (int)getpid(), (long)swf_time_now_ms());
    check(swf_kafka_consumer_new(brokers, group, NULL, NULL, &c));
    const char *topics[1] = {topic};
    check(swf_kafka_subscribe(c, topics, 1));
    bool found = false;
    for (int i = 0; i < 600 && !found; i++) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(c, 100);
        if (m == NULL)
            continue;
        if (m->err == 0) {
            char *text = strndup(m->payload, m->len);
            found = strstr(text, needle) != NULL;
            free(text);
        }
        rd_kafka_message_destroy(m);
    }
    rd_kafka_consumer_close(c);
    rd_kafka_destroy(c);
    return found;
}

Test(service, fires_timers_times_out_executions_republishes_outbox, .timeout = 600)
{
    swf_dev_options_t opt = {.deciders = 0, .history_service = false};
    swf_dev_t *dev;
    check(swf_dev_start(&opt, &dev));
    swf_history_store_t *store;
    check(swf_history_pg_new(swf_dev_conninfo(dev), &store));
    /* An execution with TimeoutSeconds 1, a timer of 1 s and a scheduled
     * activity, written directly as events (no decider runs). */
    json_object *def = parse("{\"StartAt\":\"W\",\"TimeoutSeconds\":1,\"States\":{"
                             "\"W\":{\"Type\":\"Wait\",\"Seconds\":1,\"End\":true}}}");
    int version;
    check(swf_history_pg_state_machine_register(store, "M", def, &version));
    swf_history_start_t st = {.execution_id = "svc-1", .state_machine = "M", .version = version,
                              .time_ms = swf_time_now_ms()};
    check(swf_history_pg_execution_start(store, &st, NULL));
    int64_t now = swf_time_now_ms();
    swf_event_t evs[4] = {
        {.type = SWF_EVENT_DECISION_TASK_STARTED,
         .attrs = parse("{\"scheduledEventId\":2,\"identity\":\"t\"}")},
        {.type = SWF_EVENT_DECISION_TASK_COMPLETED,
         .attrs = parse("{\"scheduledEventId\":2,\"startedEventId\":3}")},
        {.type = SWF_EVENT_TIMER_STARTED,
         .attrs = parse("{\"timerId\":\"t1\",\"startToFireTimeout\":1,"
                        "\"control\":{\"state\":\"W\",\"path\":\"\",\"reason\":\"wait\"},"
                        "\"decisionTaskCompletedEventId\":4}")},
        {.type = SWF_EVENT_ACTIVITY_TASK_SCHEDULED,
         .attrs = parse("{\"activityId\":\"2\",\"activityType\":{\"name\":\"svc\",\"version\":\"1\"},"
                        "\"taskList\":{\"name\":\"svc\"},\"input\":{\"x\":1},"
                        "\"control\":{\"state\":\"T\",\"path\":\"\",\"attempt\":0},"
                        "\"decisionTaskCompletedEventId\":4}")},
    };
    for (int i = 0; i < 4; i++)
        evs[i].time_ms = now;
    check(swf_history_append(store, "svc-1", 3, evs, 4));

    swf_kafka_names_t names;
    swf_kafka_names_env(&names);
    rd_kafka_t *producer;
    check(swf_kafka_producer_new(swf_dev_brokers(dev), &producer));
    swf_kafka_poster_t *poster = swf_kafka_poster_new(producer, 2);
    swf_history_service_config_t cfg;
    swf_history_service_config_env(&cfg);
    cfg.conninfo = swf_dev_conninfo(dev);
    cfg.send = swf_kafka_poster_send;
    cfg.send_ctx = poster;
    cfg.outbox_age_ms = 500;
    cfg.log = NULL;
    swf_history_service_t *svc;
    check(swf_history_service_new(&cfg, &svc));
    /* Tick until everything is due and posted (bounded: 60 s). */
    swf_history_service_stats_t s = {0};
    for (int i = 0; i < 600; i++) {
        check(swf_history_service_tick(svc));
        swf_history_service_stats(svc, &s);
        if (s.timers_fired >= 1 && s.executions_timed_out >= 1 && s.outbox_republished >= 1)
            break;
        usleep(100000);
    }
    cr_assert_eq(s.timers_fired, 1);
    cr_assert_eq(s.executions_timed_out, 1);
    cr_assert_eq(s.outbox_republished, 1);
    /* A second tick right away posts nothing again (repost after 5 s). */
    check(swf_history_service_tick(svc));
    swf_history_service_stats_t s2;
    swf_history_service_stats(svc, &s2);
    cr_assert_eq(s2.timers_fired, 1);
    cr_assert_eq(s2.outbox_republished, 1, "a republished row is deleted");
    cr_assert(topic_has(swf_dev_brokers(dev), names.inbox,
                        "\"type\":\"timer.fired\",\"executionId\":\"svc-1\",\"timerId\":\"t1\""));
    cr_assert(topic_has(swf_dev_brokers(dev), names.inbox, "\"type\":\"execution.timedOut\""));
    char topic[128];
    swf_kafka_task_topic(&names, "svc", topic, sizeof(topic));
    cr_assert(topic_has(swf_dev_brokers(dev), topic, "\"type\":\"activity.task\""));
    /* Built from the ActivityTaskScheduled event the outbox row names. */
    cr_assert(topic_has(swf_dev_brokers(dev), topic, "\"state\":\"T\""));
    cr_assert(topic_has(swf_dev_brokers(dev), topic, "\"input\":{\"x\":1}"));
    cr_assert(topic_has(swf_dev_brokers(dev), topic, "\"scheduledEventId\":6"));

    swf_history_service_free(svc);
    swf_kafka_poster_free(poster);
    rd_kafka_destroy(producer);
    for (int i = 0; i < 4; i++)
        json_object_put(evs[i].attrs);
    json_object_put(def);
    swf_history_store_free(store);
    swf_dev_stop(dev);
}
