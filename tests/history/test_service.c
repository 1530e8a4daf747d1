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

/* A dev system without deciders or swf-history, a registered machine, one
 * started execution, and a service to tick by hand. */
typedef struct fixture {
    swf_dev_t *dev;
    swf_history_store_t *store;
    json_object *def;
    rd_kafka_t *producer;
    swf_kafka_poster_t *poster;
    swf_history_service_t *svc;
    swf_kafka_names_t names;
} fixture_t;

static void fixture_up(fixture_t *f, const char *definition, const char *execution_id)
{
    swf_dev_options_t opt = {.deciders = 0, .history_service = false};
    check(swf_dev_start(&opt, &f->dev));
    check(swf_history_pg_new(swf_dev_conninfo(f->dev), &f->store));
    f->def = parse(definition);
    int version;
    check(swf_history_pg_state_machine_register(f->store, "M", f->def, &version));
    swf_history_start_t st = {.execution_id = execution_id,
                              .state_machine = "M",
                              .version = version,
                              .time_ms = swf_time_now_ms()};
    check(swf_history_pg_execution_start(f->store, &st, NULL));
    swf_kafka_names_env(&f->names);
}

/* Starts the service (after the test wrote its events). */
static void fixture_service(fixture_t *f, int outbox_age_ms)
{
    check(swf_kafka_producer_new(swf_dev_brokers(f->dev), &f->producer));
    f->poster = swf_kafka_poster_new(f->producer, 2);
    swf_history_service_config_t cfg;
    swf_history_service_config_env(&cfg);
    cfg.conninfo = swf_dev_conninfo(f->dev);
    cfg.send = swf_kafka_poster_send;
    cfg.send_ctx = f->poster;
    if (outbox_age_ms > 0)
        cfg.outbox_age_ms = outbox_age_ms;
    cfg.log = NULL;
    check(swf_history_service_new(&cfg, &f->svc));
}

static void fixture_down(fixture_t *f, swf_event_t *evs, int n)
{
    swf_history_service_free(f->svc);
    swf_kafka_poster_free(f->poster);
    rd_kafka_destroy(f->producer);
    for (int i = 0; i < n; i++)
        json_object_put(evs[i].attrs);
    json_object_put(f->def);
    swf_history_store_free(f->store);
    swf_dev_stop(f->dev);
}

Test(service, fires_timers_times_out_executions_republishes_outbox, .timeout = 600)
{
    /* An execution with TimeoutSeconds 1, a timer of 1 s and a scheduled
     * activity, written directly as events (no decider runs). */
    fixture_t f = {0};
    fixture_up(&f,
               "{\"StartAt\":\"W\",\"TimeoutSeconds\":1,\"States\":{"
               "\"W\":{\"Type\":\"Wait\",\"Seconds\":1,\"End\":true}}}",
               "svc-1");
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
         .attrs =
             parse("{\"activityId\":\"2\",\"activityType\":{\"name\":\"svc\",\"version\":\"1\"},"
                   "\"taskList\":{\"name\":\"svc\"},\"input\":{\"x\":1},"
                   "\"control\":{\"state\":\"T\",\"path\":\"\",\"attempt\":0},"
                   "\"decisionTaskCompletedEventId\":4}")},
    };
    for (int i = 0; i < 4; i++)
        evs[i].time_ms = now;
    check(swf_history_append(f.store, "svc-1", 3, evs, 4));
    fixture_service(&f, 500);
    const char *b = swf_dev_brokers(f.dev);
    /* Tick until everything is due and posted (bounded: 60 s). */
    swf_history_service_stats_t s = {0};
    for (int i = 0; i < 600; i++) {
        check(swf_history_service_tick(f.svc));
        swf_history_service_stats(f.svc, &s);
        if (s.timers_fired >= 1 && s.executions_timed_out >= 1 && s.outbox_republished >= 1)
            break;
        usleep(100000);
    }
    cr_assert_eq(s.timers_fired, 1);
    cr_assert_eq(s.executions_timed_out, 1);
    cr_assert_eq(s.outbox_republished, 1);
    /* A second tick right away posts nothing again (repost after 5 s). */
    check(swf_history_service_tick(f.svc));
    swf_history_service_stats_t s2;
    swf_history_service_stats(f.svc, &s2);
    cr_assert_eq(s2.timers_fired, 1);
    cr_assert_eq(s2.outbox_republished, 1, "a republished row is deleted");
    cr_assert(topic_has(b, f.names.inbox,
                        "\"type\":\"timer.fired\",\"executionId\":\"svc-1\",\"timerId\":\"t1\""));
    cr_assert(topic_has(b, f.names.inbox, "\"type\":\"execution.timedOut\""));
    char topic[128];
    swf_kafka_task_topic(&f.names, "svc", topic, sizeof(topic));
    cr_assert(topic_has(b, topic, "\"type\":\"activity.task\""));
    /* Built from the ActivityTaskScheduled event the outbox row names. */
    cr_assert(topic_has(b, topic, "\"state\":\"T\""));
    cr_assert(topic_has(b, topic, "\"input\":{\"x\":1}"));
    cr_assert(topic_has(b, topic, "\"scheduledEventId\":6"));

    fixture_down(&f, evs, 4);
}

Test(service, times_out_activities_past_their_deadlines, .timeout = 600)
{
    fixture_t f = {0};
    fixture_up(
        &f, "{\"StartAt\":\"W\",\"States\":{\"W\":{\"Type\":\"Wait\",\"Seconds\":1,\"End\":true}}}",
        "act-1");
    /* 5: start-to-close of 1 s; 6: heartbeat of 1 s, beaten a minute from
     * now; 7: heartbeat of 1 s, never beaten; 8: 1 s, but completed; 9: no
     * timeout at all. Written directly (no decider runs). */
#define SCHEDULED(extra)                                                                           \
    "{\"activityId\":\"a\",\"activityType\":{\"name\":\"t\",\"version\":\"1\"},"                   \
    "\"taskList\":{\"name\":\"t\"},\"control\":{\"state\":\"T\",\"path\":\"\",\"attempt\":0},"     \
    "\"decisionTaskCompletedEventId\":4" extra "}"
    int64_t now = swf_time_now_ms();
    swf_event_t evs[10] = {
        {.type = SWF_EVENT_DECISION_TASK_STARTED,
         .attrs = parse("{\"scheduledEventId\":2,\"identity\":\"t\"}")},
        {.type = SWF_EVENT_DECISION_TASK_COMPLETED,
         .attrs = parse("{\"scheduledEventId\":2,\"startedEventId\":3}")},
        {.type = SWF_EVENT_ACTIVITY_TASK_SCHEDULED,
         .attrs = parse(SCHEDULED(",\"startToCloseTimeout\":1"))},
        {.type = SWF_EVENT_ACTIVITY_TASK_SCHEDULED,
         .attrs = parse(SCHEDULED(",\"heartbeatTimeout\":1"))},
        {.type = SWF_EVENT_ACTIVITY_TASK_SCHEDULED,
         .attrs = parse(SCHEDULED(",\"heartbeatTimeout\":1"))},
        {.type = SWF_EVENT_ACTIVITY_TASK_SCHEDULED,
         .attrs = parse(SCHEDULED(",\"startToCloseTimeout\":1"))},
        {.type = SWF_EVENT_ACTIVITY_TASK_SCHEDULED, .attrs = parse(SCHEDULED(""))},
        {.type = SWF_EVENT_ACTIVITY_TASK_HEARTBEAT_RECORDED,
         .attrs = parse("{\"scheduledEventId\":6}")},
        {.type = SWF_EVENT_ACTIVITY_TASK_COMPLETED,
         .attrs = parse("{\"scheduledEventId\":8,\"result\":{}}")},
        {.type = SWF_EVENT_MARKER_RECORDED, .attrs = parse("{\"markerName\":\"m\"}")},
    };
#undef SCHEDULED
    for (int i = 0; i < 10; i++)
        evs[i].time_ms = now;
    evs[7].time_ms = now + 60000;
    check(swf_history_append(f.store, "act-1", 3, evs, 10));
    fixture_service(&f, 0);
    swf_history_service_stats_t s = {0};
    for (int i = 0; i < 600 && s.activities_timed_out < 2; i++) {
        check(swf_history_service_tick(f.svc));
        swf_history_service_stats(f.svc, &s);
        usleep(100000);
    }
    /* Another second of ticks finds nothing more due. */
    for (int i = 0; i < 10; i++) {
        check(swf_history_service_tick(f.svc));
        usleep(100000);
    }
    swf_history_service_stats(f.svc, &s);
    cr_assert_eq(s.activities_timed_out, 2);
    const char *b = swf_dev_brokers(f.dev);
    cr_assert(
        topic_has(b, f.names.inbox, "\"scheduledEventId\":5,\"timeoutType\":\"START_TO_CLOSE\""));
    cr_assert(topic_has(b, f.names.inbox, "\"scheduledEventId\":7,\"timeoutType\":\"HEARTBEAT\""));
    /* Two posts, and they are these two: 6, 8 and 9 were not posted. */

    fixture_down(&f, evs, 10);
}
