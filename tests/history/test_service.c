/*
 * test_service.c - swf-history (history/service.c) against a throwaway
 * PostgreSQL and the mock Kafka cluster, with no decider running: what the
 * service posts is read back from the inbox and task topics.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "cli/dev.h"
#include "kafka/kafka.h"
#include "history/pg.h"
#include "history/service.h"
#include "protocol/json.h"
#include "protocol/message.h"
#include "protocol/time.h"
#include "tests/dev_cluster.h"

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
    bool time_skip; /* the service runs with SWF_DEV_TIME_SKIP's clock */
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

/* Starts the service (after the test wrote its events); 0 keeps a
 * setting's default. */
static void fixture_service_with(fixture_t *f, int outbox_age_ms, int sweep_age_ms,
                                 size_t batch_max)
{
    check(swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = swf_dev_brokers(f->dev)},
                                 &f->producer));
    f->poster = swf_kafka_poster_new(f->producer, 2);
    swf_history_service_config_t cfg;
    swf_history_service_config_env(&cfg);
    cfg.conninfo = swf_dev_conninfo(f->dev);
    cfg.send = swf_kafka_poster_send;
    cfg.send_ctx = f->poster;
    if (outbox_age_ms > 0)
        cfg.outbox_age_ms = outbox_age_ms;
    if (sweep_age_ms > 0)
        cfg.sweep_age_ms = sweep_age_ms;
    if (batch_max > 0)
        cfg.batch_max = batch_max;
    cfg.log = NULL;
    cfg.time_skip = cfg.time_skip || f->time_skip;
    check(swf_history_service_new(&cfg, &f->svc));
}

static void fixture_service(fixture_t *f, int outbox_age_ms)
{
    fixture_service_with(f, outbox_age_ms, 0, 0);
}

static void fixture_down(fixture_t *f, swf_event_t *evs, int n)
{
    swf_history_service_free(f->svc);
    swf_kafka_poster_free(f->poster);
    if (f->producer != NULL)
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

/* ---- closed executions, rows that cannot be served, failed sends ------- */

/* How many messages of `topic` hold `needle`: the topic read from the
 * beginning until nothing new comes for a second (at most 60 s). */
static int topic_count(const char *brokers, const char *topic, const char *needle)
{
    rd_kafka_t *c = topic_reader_new(brokers, topic);
    int found = 0, idle = 0;
    bool any = false;
    for (int i = 0; i < 600 && idle < (any ? 10 : 50); i++) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(c, 100);
        if (m == NULL || m->err != 0) {
            idle++;
            if (m != NULL)
                rd_kafka_message_destroy(m);
            continue;
        }
        any = true;
        idle = 0;
        char *text = strndup(m->payload, m->len);
        found += strstr(text, needle) != NULL;
        free(text);
        rd_kafka_message_destroy(m);
    }
    rd_kafka_consumer_close(c);
    rd_kafka_destroy(c);
    return found;
}

/* One value of a query, as text ("" for no row). */
static const char *db_value(fixture_t *f, const char *sql)
{
    static char value[256];
    PGconn *c = PQconnectdb(swf_dev_conninfo(f->dev));
    cr_assert(PQstatus(c) == CONNECTION_OK, "%s", PQerrorMessage(c));
    PGresult *res = PQexec(c, sql);
    cr_assert(PQresultStatus(res) == PGRES_TUPLES_OK || PQresultStatus(res) == PGRES_COMMAND_OK,
              "%s: %s", sql, PQerrorMessage(c));
    snprintf(value, sizeof(value), "%s", PQntuples(res) > 0 ? PQgetvalue(res, 0, 0) : "");
    PQclear(res);
    PQfinish(c);
    return value;
}

static void start_more(fixture_t *f, const char *execution_id)
{
    swf_history_start_t st = {.execution_id = execution_id,
                              .state_machine = "M",
                              .version = 1,
                              .time_ms = swf_time_now_ms()};
    check(swf_history_pg_execution_start(f->store, &st, NULL));
}

/* Appends events of the given types and attributes (taken) at `first`. */
static void append_events(fixture_t *f, const char *x, int64_t first, int64_t time_ms,
                          const swf_event_type_t *types, const char *const *attrs, int n)
{
    swf_event_t evs[8];
    cr_assert_leq(n, 8);
    for (int i = 0; i < n; i++) {
        evs[i] = (swf_event_t){.type = types[i], .time_ms = time_ms};
        check(swf_json_parse(attrs[i], strlen(attrs[i]), 64u << 20, &evs[i].attrs));
    }
    check(swf_history_append(f->store, x, first, evs, (size_t)n));
    for (int i = 0; i < n; i++)
        json_object_put(evs[i].attrs);
}

#define DECISION_STARTED "{\"scheduledEventId\":2,\"identity\":\"t\"}"
#define DECISION_COMPLETED "{\"scheduledEventId\":2,\"startedEventId\":3}"
#define TIMER_T1                                                                                   \
    "{\"timerId\":\"t1\",\"startToFireTimeout\":1,"                                                \
    "\"control\":{\"state\":\"W\",\"path\":\"\",\"reason\":\"wait\"},"                             \
    "\"decisionTaskCompletedEventId\":4}"
#define TASK(input)                                                                                \
    "{\"activityId\":\"1\",\"activityType\":{\"name\":\"t\",\"version\":\"1\"},"                   \
    "\"taskList\":{\"name\":\"t\"},\"input\":" input ","                                           \
    "\"control\":{\"state\":\"T\",\"path\":\"\",\"attempt\":0},"                                   \
    "\"decisionTaskCompletedEventId\":4}"

/* Events 3-5: a decision that started timer t1 of one second. */
static void timer_started(fixture_t *f, const char *x, int64_t time_ms)
{
    static const swf_event_type_t types[3] = {SWF_EVENT_DECISION_TASK_STARTED,
                                              SWF_EVENT_DECISION_TASK_COMPLETED,
                                              SWF_EVENT_TIMER_STARTED};
    static const char *const attrs[3] = {DECISION_STARTED, DECISION_COMPLETED, TIMER_T1};
    append_events(f, x, 3, time_ms, types, attrs, 3);
}

/* Events 3-5: a decision that scheduled one activity of task list "t". */
static void task_scheduled(fixture_t *f, const char *x)
{
    static const swf_event_type_t types[3] = {SWF_EVENT_DECISION_TASK_STARTED,
                                              SWF_EVENT_DECISION_TASK_COMPLETED,
                                              SWF_EVENT_ACTIVITY_TASK_SCHEDULED};
    static const char *const attrs[3] = {DECISION_STARTED, DECISION_COMPLETED, TASK("{\"x\":1}")};
    append_events(f, x, 3, swf_time_now_ms(), types, attrs, 3);
}

#define WAIT_MACHINE                                                                               \
    "{\"StartAt\":\"W\",\"States\":{\"W\":{\"Type\":\"Wait\",\"Seconds\":1,\"End\":true}}}"

/* An execution that closes while a timer is open (terminated, or timed out
 * by swf-history, during a Wait: the decider writes no TimerCanceled then)
 * leaves no timers row, and swf-history fires nothing of it: before, the
 * row stayed for good and was posted again every repost_ms. */
Test(service, closed_executions_leave_no_timers_and_get_no_firings, .timeout = 600)
{
    fixture_t f = {0};
    fixture_up(&f, WAIT_MACHINE, "term-1");
    start_more(&f, "tout-1");
    start_more(&f, "live");
    int64_t past = swf_time_now_ms() - 10000;
    /* Terminated in an append after the timer's... */
    timer_started(&f, "term-1", past);
    cr_assert_str_eq(db_value(&f, "SELECT count(*) FROM timers"), "1");
    static const swf_event_type_t term[1] = {SWF_EVENT_WORKFLOW_EXECUTION_TERMINATED};
    static const char *const term_attrs[1] = {"{\"reason\":\"r\",\"details\":\"\"}"};
    append_events(&f, "term-1", 6, past, term, term_attrs, 1);
    /* ...and timed out in the timer's own append. */
    static const swf_event_type_t tout[4] = {
        SWF_EVENT_DECISION_TASK_STARTED, SWF_EVENT_DECISION_TASK_COMPLETED, SWF_EVENT_TIMER_STARTED,
        SWF_EVENT_WORKFLOW_EXECUTION_TIMED_OUT};
    static const char *const tout_attrs[4] = {DECISION_STARTED, DECISION_COMPLETED, TIMER_T1,
                                              "{\"timeoutType\":\"START_TO_CLOSE\"}"};
    append_events(&f, "tout-1", 3, past, tout, tout_attrs, 4);
    timer_started(&f, "live", past);
    cr_assert_str_eq(db_value(&f, "SELECT string_agg(execution_id || ' ' || status, ','"
                                  " ORDER BY execution_id) FROM executions"),
                     "live open,term-1 terminated,tout-1 timed_out");
    cr_assert_str_eq(db_value(&f, "SELECT string_agg(execution_id, ',') FROM timers"), "live");
    /* The rebuild (the owner's: the daemons' role may not empty the
     * projections, cli/dev.c) agrees. */
    swf_history_store_t *owner;
    check(swf_history_pg_new(swf_dev_owner_conninfo(f.dev), &owner));
    check(swf_history_pg_projections_rebuild(owner, NULL, NULL));
    swf_history_store_free(owner);
    cr_assert_str_eq(db_value(&f, "SELECT string_agg(execution_id, ',') FROM timers"), "live");
    fixture_service(&f, 0);
    for (int i = 0; i < 10; i++) {
        check(swf_history_service_tick(f.svc));
        usleep(100000);
    }
    const char *b = swf_dev_brokers(f.dev);
    cr_assert_eq(topic_count(b, f.names.inbox, "\"type\":\"timer.fired\""), 1);
    cr_assert_eq(topic_count(b, f.names.inbox, "\"executionId\":\"live\""), 1);
    fixture_down(&f, NULL, 0);
}

/* Ticks `n` times, 100 ms apart; returns how many failed, the first
 * failure's message in `first`. */
static int ticks(fixture_t *f, int n, char *first, size_t size)
{
    int failed = 0;
    first[0] = '\0';
    for (int i = 0; i < n; i++) {
        swf_error_t *err = swf_history_service_tick(f->svc);
        if (err != NULL && failed++ == 0)
            snprintf(first, size, "%s", swf_error_message(err));
        swf_error_free(err);
        usleep(100000);
    }
    return failed;
}

/* Appends refuse timeouts the projections and swf-history cannot compute
 * with; a decider never writes them (decider/asl/exec.c bounds them). */
Test(service, appends_refuse_timeouts_that_cannot_be_computed_with, .timeout = 600)
{
    fixture_t f = {0};
    fixture_up(&f, WAIT_MACHINE, "x");
    static const char *const bad[] = {
        TASK("{}") ",\"startToCloseTimeout\":1e13}",
        TASK("{}") ",\"heartbeatTimeout\":\"1h\"}",
        TASK("{}") ",\"startToCloseTimeout\":-1}",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char attrs[1024];
        /* TASK ends with "}": the extra member goes inside it. */
        snprintf(attrs, sizeof(attrs), "%.*s%s", (int)strlen(TASK("{}")) - 1, bad[i],
                 bad[i] + strlen(TASK("{}")));
        swf_event_t ev = {.type = SWF_EVENT_ACTIVITY_TASK_SCHEDULED,
                          .time_ms = swf_time_now_ms(),
                          .attrs = parse(attrs)};
        swf_error_t *err = swf_history_append(f.store, "x", 3, &ev, 1);
        json_object_put(ev.attrs);
        cr_assert_not_null(err, "%s was taken", attrs);
        cr_assert(strstr(swf_error_message(err), "must be a number of seconds from 0 to 1e+12") !=
                      NULL,
                  "%s", swf_error_message(err));
        swf_error_free(err);
    }
    swf_event_t start = {.type = SWF_EVENT_WORKFLOW_EXECUTION_STARTED,
                         .time_ms = swf_time_now_ms(),
                         .attrs = parse("{\"executionStartToCloseTimeout\":\"1h\"}")};
    swf_error_t *err = swf_history_append(f.store, "y", 1, &start, 1);
    json_object_put(start.attrs);
    cr_assert_not_null(err);
    cr_assert(strstr(swf_error_message(err), "executionStartToCloseTimeout") != NULL, "%s",
              swf_error_message(err));
    swf_error_free(err);
    /* The largest the limit takes, a Wait until the year 9999 or so, goes in. */
    swf_event_t timer = {.type = SWF_EVENT_TIMER_STARTED,
                         .time_ms = swf_time_now_ms(),
                         .attrs = parse("{\"timerId\":\"t1\",\"startToFireTimeout\":1e12}")};
    check(swf_history_append(f.store, "x", 3, &timer, 1));
    json_object_put(timer.attrs);
    cr_assert_str_eq(db_value(&f, "SELECT extract(year FROM fire_at) > 30000 FROM timers"), "t");
    fixture_down(&f, NULL, 0);
}

/* Rows of older versions that hold values PostgreSQL cannot compute with
 * (a start-to-close of 10^13 s overflows an interval; a timeout that is
 * not a number fails its cast) fail no tick, and the other executions'
 * timeouts, tasks and decides go on. Before, every tick failed at them. */
Test(service, rows_it_cannot_compute_with_hold_up_nothing, .timeout = 600)
{
    fixture_t f = {0};
    fixture_up(&f, WAIT_MACHINE, "huge");
    db_value(&f, "INSERT INTO activity_timeouts VALUES ('huge', 5, now(), 1e13, 1e13, NULL)");
    db_value(&f, "INSERT INTO executions VALUES ('text-timeout', 'text-timeout', 'M', '1', 'open',"
                 " now(), NULL, 1);"
                 "INSERT INTO events VALUES ('text-timeout', 1, 'WorkflowExecutionStarted', now(),"
                 " '{\"executionStartToCloseTimeout\": \"1h\"}')");
    /* Their neighbours: a task a crash left in the outbox, a lost decide,
     * an execution past its own timeout. */
    start_more(&f, "crashed");
    task_scheduled(&f, "crashed");
    start_more(&f, "lost-decide");
    db_value(&f, "INSERT INTO executions VALUES ('late', 'late', 'M', '1', 'open',"
                 " now() - interval '1 hour', NULL, 1);"
                 "INSERT INTO events VALUES ('late', 1, 'WorkflowExecutionStarted', now(),"
                 " '{\"executionStartToCloseTimeout\": 60}')");
    fixture_service_with(&f, 300, 300, 0);
    char first[512];
    int failed = ticks(&f, 20, first, sizeof(first));
    cr_assert_eq(failed, 0, "%d of 20 ticks failed, the first: %s", failed, first);
    swf_history_service_stats_t s;
    swf_history_service_stats(f.svc, &s);
    cr_assert_eq(s.outbox_republished, 1);
    cr_assert_geq(s.decides_posted, 1);
    cr_assert_eq(s.executions_timed_out, 1);
    cr_assert_eq(s.activities_timed_out, 0);
    const char *b = swf_dev_brokers(f.dev);
    cr_assert_eq(topic_count(b, f.names.inbox, "\"type\":\"execution.timedOut\""), 1);
    cr_assert_eq(topic_count(b, f.names.inbox, "\"executionId\":\"late\""), 1);
    fixture_down(&f, NULL, 0);
}

/* A task Kafka will never take (over the producer's message.max.bytes)
 * stays in the outbox and fails its ticks with Kafka's reason, but the
 * other tasks are republished and the other steps run. Before, the whole
 * outbox batch failed with it, every tick, and the steps after it never
 * ran. */
Test(service, a_task_kafka_refuses_holds_up_nothing_else, .timeout = 600)
{
    fixture_t f = {0};
    fixture_up(&f, WAIT_MACHINE, "big");
    /* TASK with an input of n letters "a". */
    size_t n = 2100000;
    const char *task = TASK("\"\""), *quotes = strstr(task, "\"\"");
    size_t head = (size_t)(quotes - task) + 1;
    char *big = malloc(strlen(task) + n + 1);
    cr_assert_not_null(big);
    memcpy(big, task, head);
    memset(big + head, 'a', n);
    strcpy(big + head + n, quotes + 1);
    static const swf_event_type_t types[3] = {SWF_EVENT_DECISION_TASK_STARTED,
                                              SWF_EVENT_DECISION_TASK_COMPLETED,
                                              SWF_EVENT_ACTIVITY_TASK_SCHEDULED};
    const char *const attrs[3] = {DECISION_STARTED, DECISION_COMPLETED, big};
    json_object *probe = NULL; /* the task's input is the long string */
    check(swf_json_parse(big, strlen(big), 64u << 20, &probe));
    cr_assert_eq(json_object_get_string_len(json_object_object_get(probe, "input")), (int)n);
    json_object_put(probe);
    append_events(&f, "big", 3, swf_time_now_ms(), types, attrs, 3);
    free(big);
    start_more(&f, "crashed");
    task_scheduled(&f, "crashed");
    start_more(&f, "lost-decide");
    fixture_service_with(&f, 300, 300, 0);
    char first[512];
    int failed = ticks(&f, 20, first, sizeof(first));
    cr_assert_geq(failed, 15, "%d of 20 ticks failed", failed);
    cr_assert(strstr(first, "too large") != NULL, "%s", first);
    swf_history_service_stats_t s;
    swf_history_service_stats(f.svc, &s);
    cr_assert_eq(s.outbox_republished, 1, "only the task that fits went out");
    cr_assert_geq(s.decides_posted, 1, "the sweep ran");
    cr_assert_str_eq(db_value(&f, "SELECT string_agg(execution_id, ',') FROM outbox"), "big");
    char topic[128];
    swf_kafka_task_topic(&f.names, "t", topic, sizeof(topic));
    int crashed = topic_count(swf_dev_brokers(f.dev), topic, "\"executionId\":\"crashed\"");
    cr_assert_eq(crashed, 1, "%d tasks of crashed, %d in all", crashed,
                 topic_count(swf_dev_brokers(f.dev), topic, "activity.task"));
    fixture_down(&f, NULL, 0);
}

/* service.h: what a failed tick did not post is still due at the next one.
 * The mock broker refuses one produce request; the tick after it posts the
 * due timer (before, the failed tick's memory held it back for repost_ms,
 * 5 s). */
Test(service, what_a_failed_send_did_not_post_goes_at_the_next_tick, .timeout = 600)
{
    fixture_t f = {0};
    fixture_up(&f, WAIT_MACHINE, "due");
    timer_started(&f, "due", swf_time_now_ms() - 10000);
    fixture_service(&f, 0);
    check(swf_kafka_poster_topic(f.poster, f.names.inbox));
    rd_kafka_mock_push_request_errors(swf_dev_mock_cluster(f.dev), 0 /* ApiKey Produce */, 1,
                                      RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE);
    swf_error_t *err = swf_history_service_tick(f.svc);
    cr_assert_not_null(err, "the mock broker was to refuse the first produce");
    swf_error_free(err);
    swf_history_service_stats_t s;
    swf_history_service_stats(f.svc, &s);
    cr_assert_eq(s.timers_fired, 0);
    check(swf_history_service_tick(f.svc));
    swf_history_service_stats(f.svc, &s);
    cr_assert_eq(s.timers_fired, 1);
    cr_assert_eq(topic_count(swf_dev_brokers(f.dev), f.names.inbox, "\"type\":\"timer.fired\""), 1);
    fixture_down(&f, NULL, 0);
}

/* Closed executions' timers can no longer fill a claim: with batch_max 2
 * and two such timers written straight into the table (as the statements
 * before schema 5 left them), a live execution's due timer still fires. */
Test(service, timers_of_closed_executions_do_not_hold_up_live_ones, .timeout = 600)
{
    fixture_t f = {0};
    fixture_up(&f, WAIT_MACHINE, "live");
    int64_t past = swf_time_now_ms() - 10000;
    timer_started(&f, "live", past);
    db_value(&f, "INSERT INTO executions VALUES ('gone-1', 'gone-1', 'M', '1', 'terminated',"
                 " now(), now(), 6), ('gone-2', 'gone-2', 'M', '1', 'terminated', now(), now(), 6);"
                 "INSERT INTO events SELECT x, i, CASE i WHEN 1 THEN 'WorkflowExecutionStarted'"
                 " WHEN 4 THEN 'TimerStarted' ELSE 'MarkerRecorded' END,"
                 " now() - interval '1 day', '{}'"
                 " FROM unnest(ARRAY['gone-1', 'gone-2']) x, generate_series(1, 4) i"
                 " ORDER BY x, i;"
                 "INSERT INTO timers VALUES ('gone-1', 't1', now() - interval '1 day', 4),"
                 " ('gone-2', 't1', now() - interval '1 day', 4)");
    fixture_service_with(&f, 0, 0, 2);
    char first[512];
    cr_assert_eq(ticks(&f, 5, first, sizeof(first)), 0, "%s", first);
    swf_history_service_stats_t s;
    swf_history_service_stats(f.svc, &s);
    cr_assert_eq(s.timers_fired, 1);
    cr_assert_eq(topic_count(swf_dev_brokers(f.dev), f.names.inbox, "\"executionId\":\"live\""), 1);
    fixture_down(&f, NULL, 0);
}

#define HOUR_TIMER                                                                                 \
    "{\"timerId\":\"t1\",\"startToFireTimeout\":3600,"                                             \
    "\"control\":{\"state\":\"W\",\"path\":\"\",\"reason\":\"wait\"},"                             \
    "\"decisionTaskCompletedEventId\":4}"

/* Under time skip, the service needs no memory of its own: an idle
 * execution's next timer is due at once; one with an activity in flight
 * keeps its timer until its virtual clock, the wall clock plus the last
 * clockOffsetMs of its history (decider/decision.h), reaches it. */
Test(service, under_time_skip_the_clock_of_an_execution_is_read_from_its_history, .timeout = 600)
{
    fixture_t f = {.time_skip = true};
    fixture_up(&f, WAIT_MACHINE, "idle");
    start_more(&f, "busy");
    start_more(&f, "ahead");
    int64_t now = swf_time_now_ms();
    static const swf_event_type_t waits[3] = {SWF_EVENT_DECISION_TASK_STARTED,
                                              SWF_EVENT_DECISION_TASK_COMPLETED,
                                              SWF_EVENT_TIMER_STARTED};
    static const char *const idle[3] = {DECISION_STARTED, DECISION_COMPLETED, HOUR_TIMER};
    append_events(&f, "idle", 3, now, waits, idle, 3);
    static const swf_event_type_t works[4] = {
        SWF_EVENT_DECISION_TASK_STARTED, SWF_EVENT_DECISION_TASK_COMPLETED,
        SWF_EVENT_ACTIVITY_TASK_SCHEDULED, SWF_EVENT_TIMER_STARTED};
    static const char *const busy[4] = {DECISION_STARTED, DECISION_COMPLETED, TASK("1"),
                                        HOUR_TIMER};
    append_events(&f, "busy", 3, now, works, busy, 4);
    static const char *const ahead[4] = {
        "{\"scheduledEventId\":2,\"identity\":\"t\",\"clockOffsetMs\":7200000}", DECISION_COMPLETED,
        TASK("1"), HOUR_TIMER};
    append_events(&f, "ahead", 3, now, works, ahead, 4);
    fixture_service(&f, 0);
    for (int i = 0; i < 5; i++) {
        check(swf_history_service_tick(f.svc));
        usleep(100000);
    }
    const char *b = swf_dev_brokers(f.dev);
    cr_assert_eq(topic_count(b, f.names.inbox, "\"executionId\":\"idle\""), 1,
                 "an idle execution's timer fires at once");
    cr_assert_eq(topic_count(b, f.names.inbox, "\"executionId\":\"busy\""), 0,
                 "an activity in flight: the timer waits for the clock");
    cr_assert_eq(topic_count(b, f.names.inbox, "\"executionId\":\"ahead\""), 1,
                 "two hours ahead by its history: the hour's timer is due");
    fixture_down(&f, NULL, 0);
}

/* Nested executions (decider/nested.h): the outbox row of a startExecution
 * Task becomes nested.start to the parent's inbox, not a task; the close of
 * an execution that names a parent writes a row in the same append, which
 * becomes nested.closed to the parent. Both signed; both rows go. */
Test(service, nested_rows_become_messages_to_the_parents_decider, .timeout = 600)
{
    fixture_t f = {0};
    fixture_up(&f, "{\"StartAt\":\"P\",\"States\":{\"P\":{\"Type\":\"Pass\",\"End\":true}}}",
               "par-1");
    int64_t now = swf_time_now_ms();
    swf_event_t evs[3] = {
        {.type = SWF_EVENT_DECISION_TASK_STARTED,
         .attrs = parse("{\"scheduledEventId\":2,\"identity\":\"t\"}")},
        {.type = SWF_EVENT_DECISION_TASK_COMPLETED,
         .attrs = parse("{\"scheduledEventId\":2,\"startedEventId\":3}")},
        {.type = SWF_EVENT_ACTIVITY_TASK_SCHEDULED,
         .attrs = parse(
             "{\"activityId\":\"1\",\"activityType\":{\"name\":\"states.startExecution\","
             "\"version\":\"1\"},\"taskList\":{\"name\":\"states.startExecution\"},"
             "\"input\":{\"StateMachineArn\":\"M\"},\"control\":{\"state\":\"T\",\"path\":\"\","
             "\"attempt\":0,\"resource\":\"arn:aws:states:::states:startExecution.sync:2\"},"
             "\"decisionTaskCompletedEventId\":4}")},
    };
    for (int i = 0; i < 3; i++)
        evs[i].time_ms = now;
    check(swf_history_append(f.store, "par-1", 3, evs, 3));
    swf_history_start_t st = {.execution_id = "par-1-1",
                              .state_machine = "M",
                              .time_ms = now,
                              .parent_id = "par-1",
                              .parent_event_id = 5,
                              .nested_depth = 1};
    check(swf_history_pg_execution_start(f.store, &st, NULL));
    swf_event_t close[3] = {
        {.type = SWF_EVENT_DECISION_TASK_STARTED,
         .attrs = parse("{\"scheduledEventId\":2,\"identity\":\"t\"}")},
        {.type = SWF_EVENT_DECISION_TASK_COMPLETED,
         .attrs = parse("{\"scheduledEventId\":2,\"startedEventId\":3}")},
        {.type = SWF_EVENT_WORKFLOW_EXECUTION_COMPLETED,
         .attrs = parse("{\"result\":{},\"decisionTaskCompletedEventId\":4}")},
    };
    for (int i = 0; i < 3; i++)
        close[i].time_ms = now;
    check(swf_history_append(f.store, "par-1-1", 3, close, 3));
    cr_assert_str_eq(db_value(&f, "SELECT count(*) FROM outbox"), "2");
    fixture_service(&f, 100);
    swf_history_service_stats_t s = {0};
    for (int i = 0; i < 600 && s.outbox_republished < 2; i++) {
        check(swf_history_service_tick(f.svc));
        swf_history_service_stats(f.svc, &s);
        usleep(100000);
    }
    cr_assert_eq(s.outbox_republished, 2);
    const char *b = swf_dev_brokers(f.dev);
    cr_assert(
        topic_has(b, f.names.inbox,
                  "\"type\":\"nested.start\",\"executionId\":\"par-1\",\"scheduledEventId\":5"));
    cr_assert(
        topic_has(b, f.names.inbox,
                  "\"type\":\"nested.closed\",\"executionId\":\"par-1\",\"scheduledEventId\":5"));
    cr_assert_str_eq(db_value(&f, "SELECT count(*) FROM outbox"), "0");
    for (int i = 0; i < 3; i++)
        json_object_put(close[i].attrs);
    fixture_down(&f, evs, 3);
}
