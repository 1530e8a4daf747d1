/*
 * test_daemon_faults.c - the decider daemon (decider/daemon.c) on its error,
 * stop and rebalance paths. Real throwaway PostgreSQL and
 * librdkafka's mock cluster (cli/dev.h), with deciders the test starts and
 * stops itself, to stop one in the middle of a batch.
 */
#include <criterion/criterion.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/dev.h"
#include "decider/daemon.h"
#include "kafka/kafka.h"
#include "history/pg.h"
#include "protocol/json.h"
#include "protocol/message.h"
#include "protocol/time.h"
#include "protocol/token.h"
#include "tests/dev_cluster.h"

/* Three activities in a row on a task list nobody serves: the test answers. */
static const char *DEF3 =
    "{\"StartAt\":\"T1\",\"States\":{"
    "\"T1\":{\"Type\":\"Task\",\"Resource\":\"arn:aws:states:::activity:faults\",\"Next\":\"T2\"},"
    "\"T2\":{\"Type\":\"Task\",\"Resource\":\"arn:aws:states:::activity:faults\",\"Next\":\"T3\"},"
    "\"T3\":{\"Type\":\"Task\",\"Resource\":\"arn:aws:states:::activity:faults\",\"End\":true}}}";

/* A decider of the test's own, in group swf-deciders. */
typedef struct mine {
    swf_decider_t *d;
    pthread_t th;
} mine_t;

static void *run_decider(void *arg)
{
    swf_decider_run(arg);
    return NULL;
}

static void mine_start(swf_dev_t *dev, mine_t *m, const char *identity,
                       void (*hook)(void *, const char *, size_t), void *arg)
{
    swf_decider_config_t cfg;
    swf_decider_config_env(&cfg);
    cfg.conninfo = swf_dev_conninfo(dev);
    swf_kafka_names_env(&cfg.kafka);
    cfg.kafka.brokers = swf_dev_brokers(dev);
    cfg.secret = swf_token_secret_env();
    cfg.identity = identity;
    cfg.log = getenv("SWF_TEST_LOG") ? stderr : NULL;
    cfg.on_received = hook;
    cfg.hook_arg = arg;
    check(swf_decider_new(&cfg, &m->d));
    cr_assert_eq(pthread_create(&m->th, NULL, run_decider, m->d), 0);
}

static void mine_stop(mine_t *m)
{
    swf_decider_stop(m->d);
    pthread_join(m->th, NULL);
    swf_decider_free(m->d);
    m->d = NULL;
}

static swf_decider_stats_t stats_of(swf_decider_t *d)
{
    swf_decider_stats_t s;
    swf_decider_stats(d, &s);
    return s;
}

static void wait_partitions(swf_decider_t *d, uint64_t want, const char *who)
{
    for (int i = 0; i < 1200; i++) {
        if (stats_of(d).partitions == want)
            return;
        usleep(50000);
    }
    cr_assert_fail("%s never held %llu partitions (holds %llu)", who, (unsigned long long)want,
                   (unsigned long long)stats_of(d).partitions);
}

/* How many events of a type the history holds. */
static int count_events(swf_history_store_t *store, const char *id, swf_event_type_t type)
{
    swf_event_list_t events = {0};
    check(swf_history_load(store, id, 0, 0, &events));
    int n = 0;
    for (size_t i = 0; i < events.count; i++)
        n += events.items[i].type == type;
    swf_event_list_free(&events);
    return n;
}

static void wait_events(swf_history_store_t *store, const char *id, swf_event_type_t type, int n)
{
    for (int i = 0; i < 1200; i++) {
        if (count_events(store, id, type) >= n)
            return;
        usleep(50000);
    }
    cr_assert_fail("%s: never %d events of type %s", id, n, swf_event_type_name(type));
}

/* The answer to the last activity scheduled. */
static json_object *answer_last(swf_history_store_t *store, const char *id)
{
    swf_event_list_t events = {0};
    check(swf_history_load(store, id, 0, 0, &events));
    const char *aid = NULL;
    for (size_t i = 0; i < events.count; i++) {
        if (events.items[i].type == SWF_EVENT_ACTIVITY_TASK_SCHEDULED)
            aid = swf_json_get_string(events.items[i].attrs, "activityId");
    }
    cr_assert_not_null(aid);
    char *tok = swf_token_make(swf_token_secret_env(), id, aid);
    json_object *r = json_object_new_string("done");
    json_object *m = swf_msg_activity_completed_new(tok, r, "test");
    json_object_put(r);
    free(tok);
    swf_event_list_free(&events);
    return m;
}

/* Whether the group's committed offsets reached the end of every inbox partition. */
static bool all_committed(const char *brokers, int partitions)
{
    char errstr[256];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "bootstrap.servers", brokers, errstr, sizeof(errstr));
    rd_kafka_conf_set(conf, "group.id", "swf-deciders", errstr, sizeof(errstr));
    rd_kafka_conf_set(conf, "log_level", "0", errstr, sizeof(errstr));
    rd_kafka_t *c = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof(errstr));
    cr_assert_not_null(c);
    swf_kafka_names_t names;
    swf_kafka_names_env(&names);
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(partitions);
    for (int p = 0; p < partitions; p++)
        rd_kafka_topic_partition_list_add(l, names.inbox, p);
    bool ok = rd_kafka_committed(c, l, 10000) == 0;
    for (int p = 0; ok && p < partitions; p++) {
        int64_t lo = 0, hi = 0;
        ok = rd_kafka_query_watermark_offsets(c, names.inbox, p, &lo, &hi, 10000) == 0 &&
             (hi == 0 || l->elems[p].offset == hi);
    }
    rd_kafka_topic_partition_list_destroy(l);
    rd_kafka_destroy(c);
    return ok;
}

static void start_def3(swf_history_store_t *store, const char *id, int *version)
{
    if (*version == 0) {
        json_object *def = parse(DEF3);
        check(swf_history_pg_state_machine_register(store, "Three", def, version));
        json_object_put(def);
    }
    json_object *input = parse("{}");
    swf_history_start_t st = {.execution_id = id,
                              .state_machine = "Three",
                              .version = *version,
                              .input = input,
                              .time_ms = swf_time_now_ms()};
    check(swf_history_pg_execution_start(store, &st, NULL));
    json_object_put(input);
}

/* ---- a stop with a batch in flight ------------------------------------------ */

typedef struct stop_hook {
    swf_decider_t *volatile d;
    volatile int armed;
} stop_hook_t;

/* SIGTERM at the moment a message is taken: swf_decider_stop, as the
 * daemon's signal handler does. */
static void stop_on_receive(void *arg, const char *key, size_t len)
{
    (void)key;
    (void)len;
    stop_hook_t *h = arg;
    if (__atomic_exchange_n(&h->armed, 0, __ATOMIC_SEQ_CST))
        swf_decider_stop(h->d);
}

/* A decider stopped while a batch is in flight appends the batch, and must
 * commit its offsets: else the next owner reads the batch again, and
 * a signal (which nothing deduplicates) is recorded twice. */
Test(daemon_faults, a_stopped_decider_commits_what_it_appended_no_signal_twice, .timeout = 300)
{
    swf_dev_options_t opt = {.deciders = 0, .time_scale = 1};
    swf_dev_t *dev = NULL;
    check(swf_dev_start(&opt, &dev));
    swf_history_store_t *store;
    check(swf_history_pg_new(swf_dev_conninfo(dev), &store));
    int version = 0;
    start_def3(store, "sig-0", &version);

    stop_hook_t hook = {0};
    mine_t a;
    mine_start(dev, &a, "decider-a", stop_on_receive, &hook);
    hook.d = a.d;
    inbox_send_to(swf_dev_brokers(dev), -1, "sig-0", swf_msg_decide_new(NULL, "sig-0"));
    wait_events(store, "sig-0", SWF_EVENT_ACTIVITY_TASK_SCHEDULED, 1);
    for (int i = 0; i < 200 && !all_committed(swf_dev_brokers(dev), 4); i++)
        usleep(50000);
    cr_assert(all_committed(swf_dev_brokers(dev), 4), "the decide was never committed");

    /* The signal arrives; the decider is told to stop as it takes it. */
    __atomic_store_n(&hook.armed, 1, __ATOMIC_SEQ_CST);
    inbox_send_to(swf_dev_brokers(dev), -1, "sig-0",
                  swf_msg_signal_new(NULL, "sig-0", "hello", NULL));
    pthread_join(a.th, NULL);
    int signals = count_events(store, "sig-0", SWF_EVENT_WORKFLOW_EXECUTION_SIGNALED);
    cr_assert_eq(signals, 1, "the stopped decider recorded %d signals", signals);
    bool committed = all_committed(swf_dev_brokers(dev), 4);
    swf_decider_free(a.d);

    /* The next owner of the partition. */
    mine_t b;
    mine_start(dev, &b, "decider-b", NULL, NULL);
    wait_partitions(b.d, 4, "decider b");
    for (int i = 0; i < 100 && stats_of(b.d).messages == 0; i++)
        usleep(50000);
    usleep(1000000);
    signals = count_events(store, "sig-0", SWF_EVENT_WORKFLOW_EXECUTION_SIGNALED);
    uint64_t again = stats_of(b.d).messages;
    mine_stop(&b);
    swf_history_store_free(store);
    swf_dev_stop(dev);
    cr_assert(committed, "the stopped decider did not commit the offsets of the batch it appended");
    cr_assert_eq(signals, 1,
                 "one signal sent, %d recorded: the next decider read %llu message(s) again",
                 signals, (unsigned long long)again);
}

/* ---- a revoke while a batch is gathered ------------------------------------- */

enum { NX = 4 };

typedef struct window_hook {
    volatile int armed; /* messages still to take before the pause */
    volatile int fired;
} window_hook_t;

/* Once the NX answers are taken (in one gather), the decider's thread
 * pauses in the middle of its gather, long enough for another decider to
 * join: the revoke is then served by the gather's next poll. */
static void pause_on_receive(void *arg, const char *key, size_t len)
{
    (void)key;
    (void)len;
    window_hook_t *h = arg;
    if (__atomic_load_n(&h->armed, __ATOMIC_SEQ_CST) <= 0)
        return;
    if (__atomic_sub_fetch(&h->armed, 1, __ATOMIC_SEQ_CST) != 0)
        return;
    __atomic_store_n(&h->fired, 1, __ATOMIC_SEQ_CST);
    sleep(8);
}

/* Messages a decider took in the gather that served a revoke are decided
 * after the cache was dropped, so their states go back into the cache under
 * partitions it no longer owns. When such a partition comes back, the stale
 * state is used as it is, and an answer it does not know of (the activity
 * the other decider scheduled meanwhile) is dropped as "changes nothing":
 * no append, so no optimistic check catches it. The execution never ends. */
Test(daemon_faults, a_revoke_during_a_gather_leaves_no_stale_state_in_the_cache, .timeout = 600)
{
    setenv("SWF_KAFKA_SESSION_TIMEOUT_MS", "6000", 1);
    swf_dev_options_t opt = {.deciders = 0, .time_scale = 1};
    swf_dev_t *dev = NULL;
    check(swf_dev_start(&opt, &dev));
    const char *brokers = swf_dev_brokers(dev);
    swf_history_store_t *store;
    check(swf_history_pg_new(swf_dev_conninfo(dev), &store));
    int version = 0;
    char ids[NX][32];
    window_hook_t hook = {0};
    mine_t a, b;
    mine_start(dev, &a, "decider-a", pause_on_receive, &hook);
    wait_partitions(a.d, 4, "decider a");
    for (int i = 0; i < NX; i++) {
        snprintf(ids[i], sizeof(ids[i]), "win-%d", i);
        start_def3(store, ids[i], &version);
        inbox_send_to(brokers, i, ids[i],
                      swf_msg_decide_new(NULL, ids[i])); /* execution i on partition i */
    }
    for (int i = 0; i < NX; i++)
        wait_events(store, ids[i], SWF_EVENT_ACTIVITY_TASK_SCHEDULED, 1);

    /* T1's answers, all taken in one gather, during which b joins. */
    __atomic_store_n(&hook.armed, NX, __ATOMIC_SEQ_CST);
    {
        rd_kafka_t *p;
        check(swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = brokers}, &p));
        swf_kafka_names_t names;
        swf_kafka_names_env(&names);
        for (int i = 0; i < NX; i++) {
            json_object *m = answer_last(store, ids[i]);
            const char *s = swf_json_str(m);
            cr_assert_eq(
                rd_kafka_producev(p, RD_KAFKA_V_TOPIC(names.inbox), RD_KAFKA_V_PARTITION(i),
                                  RD_KAFKA_V_KEY(ids[i], strlen(ids[i])),
                                  RD_KAFKA_V_VALUE((void *)s, strlen(s)),
                                  RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
                0);
            json_object_put(m);
        }
        cr_assert_eq(rd_kafka_flush(p, 30000), 0);
        rd_kafka_destroy(p);
    }
    for (int i = 0; i < 600 && !__atomic_load_n(&hook.fired, __ATOMIC_SEQ_CST); i++)
        usleep(50000);
    cr_assert(hook.fired, "the answers were not taken in one gather (armed %d)", hook.armed);
    mine_start(dev, &b, "decider-b", NULL, NULL);
    for (int i = 0; i < NX; i++)
        wait_events(store, ids[i], SWF_EVENT_ACTIVITY_TASK_SCHEDULED, 2);
    wait_partitions(a.d, 2, "decider a");
    wait_partitions(b.d, 2, "decider b");

    /* T2's answers: those on b's partitions are decided by b. */
    for (int i = 0; i < NX; i++)
        inbox_send_to(brokers, i, ids[i], answer_last(store, ids[i]));
    for (int i = 0; i < NX; i++)
        wait_events(store, ids[i], SWF_EVENT_ACTIVITY_TASK_SCHEDULED, 3);
    for (int i = 0; i < 600 && !all_committed(brokers, 4); i++)
        usleep(50000);
    cr_assert(all_committed(brokers, 4), "offsets never committed");
    uint64_t b_batches = stats_of(b.d).batches;

    /* b leaves: a owns everything again. */
    mine_stop(&b);
    wait_partitions(a.d, 4, "decider a");

    /* T3's answers. */
    uint64_t ignored0 = stats_of(a.d).ignored;
    for (int i = 0; i < NX; i++)
        inbox_send_to(brokers, i, ids[i], answer_last(store, ids[i]));
    char stuck[256] = "";
    for (int i = 0; i < NX; i++) {
        bool closed = false;
        for (int k = 0; k < 300 && !closed; k++) { /* 15 s */
            swf_history_execution_t ex;
            check(swf_history_pg_execution_describe(store, ids[i], &ex));
            closed = strcmp(ex.status, "open") != 0;
            swf_history_execution_free(&ex);
            if (!closed)
                usleep(50000);
        }
        if (!closed) {
            strcat(stuck, " ");
            strcat(stuck, ids[i]);
        }
    }
    uint64_t ignored = stats_of(a.d).ignored - ignored0;
    mine_stop(&a);
    swf_history_store_free(store);
    swf_dev_stop(dev);
    cr_assert_eq(stuck[0], '\0',
                 "never closed:%s (decider a ignored %llu of the %d last answers; b decided %llu "
                 "batches)",
                 stuck, (unsigned long long)ignored, NX, (unsigned long long)b_batches);
}

/* ---- a dead letter Kafka cannot take ----------------------------------------- */

/* An unparseable inbox message of 600 KB of control bytes (under the
 * inbox's 1 MB): its dead letter carries the first 512 KiB as a JSON
 * string, 6 bytes per byte escaped (\u0001), over the producer's 2 MB
 * message.max.bytes. The send fails for good, the whole batch is
 * "retried" for ever, and the decider decides nothing any more. */
Test(daemon_faults, an_unparseable_message_whose_dead_letter_is_too_big_stalls_nothing,
     .timeout = 300)
{
    swf_dev_options_t opt = {.deciders = 0, .time_scale = 1};
    swf_dev_t *dev = NULL;
    check(swf_dev_start(&opt, &dev));
    const char *brokers = swf_dev_brokers(dev);
    swf_history_store_t *store;
    check(swf_history_pg_new(swf_dev_conninfo(dev), &store));
    int version = 0;
    start_def3(store, "after-poison", &version);
    mine_t a;
    mine_start(dev, &a, "decider-a", NULL, NULL);
    wait_partitions(a.d, 4, "decider a");

    size_t len = 600 * 1024;
    char *poison = malloc(len);
    cr_assert_not_null(poison);
    memset(poison, 0x01, len);
    rd_kafka_t *p;
    check(swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = brokers}, &p));
    swf_kafka_names_t names;
    swf_kafka_names_env(&names);
    swf_kafka_out_t o = {names.inbox, "after-poison", poison, len, 0};
    check(swf_kafka_send(p, &o, 1));
    rd_kafka_destroy(p);
    free(poison);
    /* Then an ordinary message, for the same execution and for another. */
    inbox_send_to(brokers, -1, "after-poison", swf_msg_decide_new(NULL, "after-poison"));
    int scheduled = 0;
    for (int i = 0; i < 600 && scheduled == 0; i++) { /* 30 s */
        scheduled = count_events(store, "after-poison", SWF_EVENT_ACTIVITY_TASK_SCHEDULED);
        if (scheduled == 0)
            usleep(50000);
    }
    swf_decider_stats_t st = stats_of(a.d);
    mine_stop(&a);
    swf_history_store_free(store);
    swf_dev_stop(dev);
    cr_assert_gt(scheduled, 0,
                 "the decider stalled behind one bad message: %llu batches, %llu dead letters",
                 (unsigned long long)st.batches, (unsigned long long)st.dead_letters);
}

/* ---- a request delivered twice ---------------------------------------------- */

/* Kafka may deliver a message twice (a crash, a commit lost in a
 * rebalance): a signal or cancel request whose requestId the history
 * records is not recorded again, in a later batch or in the same one, and
 * the id goes into the event. Two requests of their own are two events. */
Test(daemon_faults, a_request_delivered_twice_is_recorded_once, .timeout = 300)
{
    swf_dev_options_t opt = {.deciders = 0, .time_scale = 1};
    swf_dev_t *dev = NULL;
    check(swf_dev_start(&opt, &dev));
    swf_history_store_t *store;
    check(swf_history_pg_new(swf_dev_conninfo(dev), &store));
    int version = 0;
    start_def3(store, "req-0", &version);
    mine_t a;
    mine_start(dev, &a, "decider-a", NULL, NULL);
    const char *b = swf_dev_brokers(dev);
    inbox_send_to(b, -1, "req-0", swf_msg_decide_new(NULL, "req-0"));
    wait_events(store, "req-0", SWF_EVENT_ACTIVITY_TASK_SCHEDULED, 1);

    json_object *sig = swf_msg_signal_new(NULL, "req-0", "hello", NULL);
    const char *rid = swf_json_get_string(sig, "requestId");
    cr_assert(rid != NULL && strlen(rid) == 32, "signal without a request id: %s",
              swf_json_str(sig));
    char kept[40];
    snprintf(kept, sizeof(kept), "%s", rid);
    inbox_send_to(b, -1, "req-0", json_object_get(sig));
    wait_events(store, "req-0", SWF_EVENT_WORKFLOW_EXECUTION_SIGNALED, 1);
    inbox_send_to(b, -1, "req-0", json_object_get(sig)); /* a later batch */
    inbox_send_to(b, -1, "req-0",
                  swf_msg_signal_new(NULL, "req-0", "hello", NULL)); /* another request */
    wait_events(store, "req-0", SWF_EVENT_WORKFLOW_EXECUTION_SIGNALED, 2);
    json_object *cancel = swf_msg_cancel_new(NULL, "req-0", "twice in one batch");
    inbox_send_to(b, -1, "req-0", json_object_get(cancel));
    inbox_send_to(b, -1, "req-0", json_object_get(cancel));
    wait_events(store, "req-0", SWF_EVENT_WORKFLOW_EXECUTION_CANCELED, 1);
    usleep(500000);
    mine_stop(&a);

    swf_event_list_t events = {0};
    check(swf_history_load(store, "req-0", 0, 0, &events));
    int signals = 0, cancels = 0;
    bool first_has_id = false;
    for (size_t i = 0; i < events.count; i++) {
        const swf_event_t *ev = &events.items[i];
        if (ev->type == SWF_EVENT_WORKFLOW_EXECUTION_SIGNALED) {
            const char *got = swf_json_get_string(ev->attrs, "requestId");
            first_has_id = first_has_id || (got != NULL && strcmp(got, kept) == 0);
            signals++;
        }
        cancels += ev->type == SWF_EVENT_WORKFLOW_EXECUTION_CANCEL_REQUESTED;
    }
    swf_event_list_free(&events);
    json_object_put(sig);
    json_object_put(cancel);
    swf_history_store_free(store);
    swf_dev_stop(dev);
    cr_assert_eq(signals, 2, "%d signals recorded for two requests, one sent twice", signals);
    cr_assert(first_has_id, "the event does not carry the request id");
    cr_assert_eq(cancels, 1, "%d cancel requests recorded for one sent twice", cancels);
}
