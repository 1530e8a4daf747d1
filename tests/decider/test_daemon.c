/*
 * test_daemon.c - the decider daemon (decider/daemon.c) end to end: a real
 * throwaway PostgreSQL, librdkafka's mock Kafka cluster, the history
 * service firing timers, and an in-test worker answering from mocks. The
 * result of every execution is compared with `swf run --local`'s, which
 * runs the same interpreter on a virtual clock. Answers deliberately sent
 * to another decider's partition still let every execution finish: the
 * owner's cached state, gone stale, is checked before it drops a message.
 * An answer json-c alone would rewrite (a duplicate key, a lone surrogate,
 * a 30-digit integer) is dead-lettered and the execution goes on.
 * activity.started records the start once, when the worker takes it. The
 * daemons run as the runtime role, which cannot rewrite events.
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
#include "kafka/kafka.h"
#include "decider/local.h"
#include "history/pg.h"
#include "protocol/bounded.h"
#include "protocol/json.h"
#include "protocol/message.h"
#include "protocol/time.h"
#include "protocol/token.h"
#include "tests/dev_cluster.h"
#include "tests/kafka_props.h"
#include "tests/pg_state.h"

/* Task with Retry, Wait, Parallel with a Task in each branch, Map over 5 items. */
static const char *DEF =
    "{\"StartAt\":\"Charge\",\"States\":{"
    "\"Charge\":{\"Type\":\"Task\",\"Resource\":\"arn:aws:states:::activity:payments\","
    "  \"Retry\":[{\"ErrorEquals\":[\"Flaky\"],\"IntervalSeconds\":1,\"MaxAttempts\":3}],"
    "  \"ResultPath\":\"$.charge\",\"Next\":\"Pause\"},"
    "\"Pause\":{\"Type\":\"Wait\",\"Seconds\":2,\"Next\":\"Both\"},"
    "\"Both\":{\"Type\":\"Parallel\",\"ResultPath\":\"$.both\",\"Next\":\"Each\",\"Branches\":["
    "  {\"StartAt\":\"Ship\",\"States\":{\"Ship\":{\"Type\":\"Task\","
    "    \"Resource\":\"arn:aws:states:::activity:shipping\",\"End\":true}}},"
    "  {\"StartAt\":\"Mail\",\"States\":{\"Mail\":{\"Type\":\"Task\","
    "    \"Resource\":\"arn:aws:states:::activity:mail\",\"End\":true}}}]},"
    "\"Each\":{\"Type\":\"Map\",\"ItemsPath\":\"$.items\",\"ResultPath\":\"$.each\","
    "  \"ItemProcessor\":{\"StartAt\":\"Item\",\"States\":{\"Item\":{\"Type\":\"Task\","
    "    \"Resource\":\"arn:aws:states:::activity:items\",\"End\":true}}},\"End\":true}}}";

static const char *MOCKS =
    "{\"Charge\":[{\"Throw\":{\"Error\":\"Flaky\",\"Cause\":\"try again\"}},"
    "            {\"Return\":{\"paid\":true}}],"
    " \"Ship\":[{\"Return\":\"shipped\"}], \"Mail\":[{\"Return\":\"mailed\"}]}";

static const char *INPUT = "{\"items\":[1,2,3,4,5]}";

static const char *LISTS[] = {"payments", "shipping", "mail", "items"};

/* The --local result of DEF on INPUT with MOCKS. */
static json_object *local_output(void)
{
    json_object *def = parse(DEF), *mocks = parse(MOCKS), *input = parse(INPUT);
    swf_history_store_t *mem = swf_history_mem_new();
    swf_local_options_t opt = {.definition = def, .input = input, .mocks = mocks};
    swf_local_result_t res;
    check(swf_local_run(&opt, mem, &res));
    cr_assert_eq(res.status, SWF_ASL_SUCCEEDED);
    json_object *out = swf_json_ref(res.output);
    swf_local_result_free(&res);
    swf_history_store_free(mem);
    json_object_put(def);
    json_object_put(mocks);
    json_object_put(input);
    return out;
}

static void send_inbox_text(const char *brokers, const char *key, const char *text)
{
    rd_kafka_t *p;
    check(swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = brokers}, &p));
    swf_kafka_names_t names;
    swf_kafka_names_env(&names);
    swf_kafka_out_t o = {names.inbox, key, text, strlen(text), 0};
    check(swf_kafka_send(p, &o, 1));
    rd_kafka_destroy(p);
}

static void send_inbox(const char *brokers, const char *key, json_object *msg)
{
    send_inbox_text(brokers, key, swf_json_str(msg));
    json_object_put(msg);
}

/* Registers DEF (once per store) and starts n executions, posting decide. */
static void start_executions(swf_dev_t *dev, swf_history_store_t *store, int n, const char *prefix)
{
    json_object *def = parse(DEF), *input = parse(INPUT);
    int version = 0;
    check(swf_history_pg_state_machine_register(store, "Order", def, &version));
    for (int i = 0; i < n; i++) {
        char id[64];
        snprintf(id, sizeof(id), "%s-%d", prefix, i);
        swf_history_start_t st = {.execution_id = id,
                                  .state_machine = "Order",
                                  .version = version,
                                  .input = input,
                                  .time_ms = swf_time_now_ms()};
        check(swf_history_pg_execution_start(store, &st, NULL));
        send_inbox(swf_dev_brokers(dev), id, swf_msg_decide_new(NULL, id));
    }
    json_object_put(def);
    json_object_put(input);
}

/* Waits (bounded: 300 s) until the execution closed; returns its status. */
static char *wait_closed(swf_history_store_t *store, const char *id)
{
    for (int i = 0; i < 6000; i++) {
        swf_history_execution_t ex;
        check(swf_history_pg_execution_describe(store, id, &ex));
        if (strcmp(ex.status, "open") != 0) {
            char *s = strdup(ex.status);
            swf_history_execution_free(&ex);
            return s;
        }
        swf_history_execution_free(&ex);
        usleep(50000);
    }
    cr_assert_fail("execution %s did not close", id);
    return NULL;
}

/* Replays a stored history: no gap, no fork, no non-determinism, each
 * activity answered at most once; returns the output. */
static json_object *replay_checked(swf_history_store_t *store, const char *id, size_t *nevents)
{
    swf_event_list_t events = {0};
    check(swf_history_load(store, id, 0, 0, &events));
    swf_asl_exec_t *exec = swf_asl_exec_new();
    swf_asl_exec_set_token_secret(exec, swf_token_secret_env());
    json_object *closed = json_object_new_object();
    int closes = 0;
    for (size_t i = 0; i < events.count; i++) {
        const swf_event_t *ev = &events.items[i];
        cr_assert_eq(ev->id, (int64_t)i + 1, "gap in %s at %zu", id, i);
        check(swf_asl_exec_apply(exec, ev));
        if (ev->type == SWF_EVENT_ACTIVITY_TASK_COMPLETED ||
            ev->type == SWF_EVENT_ACTIVITY_TASK_FAILED) {
            json_object *v;
            swf_json_get(ev->attrs, "scheduledEventId", &v);
            const char *k = json_object_get_string(v);
            cr_assert(!json_object_object_get_ex(closed, k, NULL), "activity %s answered twice", k);
            json_object_object_add(closed, k, json_object_new_boolean(1));
        }
        closes += swf_event_type_is_close(ev->type);
    }
    cr_assert_eq(closes, 1);
    cr_assert_eq(swf_asl_exec_status(exec), SWF_ASL_SUCCEEDED, "%s: %s %s", id,
                 swf_asl_exec_error(exec), swf_asl_exec_cause(exec));
    json_object *out = swf_json_ref(swf_asl_exec_output(exec));
    *nevents = events.count;
    swf_asl_exec_free(exec);
    swf_event_list_free(&events);
    json_object_put(closed);
    return out;
}

/* Every execution PREFIX-0 .. PREFIX-(n-1) closes, succeeded, with the
 * --local output, and passes replay_checked. */
static void expect_like_local(swf_history_store_t *store, const char *prefix, int n)
{
    json_object *want = local_output();
    for (int i = 0; i < n; i++) {
        char id[32];
        snprintf(id, sizeof(id), "%s-%d", prefix, i);
        char *status = wait_closed(store, id);
        cr_assert_str_eq(status, "succeeded", "%s", id);
        free(status);
        size_t events;
        json_object *out = replay_checked(store, id, &events);
        cr_assert(swf_json_equal(out, want), "%s: %s", id, swf_json_str(out));
        json_object_put(out);
    }
    json_object_put(want);
}

/* A dev system (swf-history and `deciders` deciders, each in a group of
 * its own with split), a worker serving MOCKS on LISTS, and a store. */
typedef struct rig {
    swf_dev_t *dev;
    json_object *mocks;
    swf_dev_worker_t *worker;
    swf_history_store_t *store;
} rig_t;

static void rig_up(rig_t *r, int deciders, bool split)
{
    swf_dev_options_t opt = {.deciders = deciders,
                             .history_service = true,
                             .time_scale = 0.05,
                             .split_groups = split,
                             .log = getenv("SWF_TEST_LOG") ? stderr : NULL};
    check(swf_dev_start(&opt, &r->dev));
    r->mocks = parse(MOCKS);
    check(swf_dev_worker_start(swf_dev_brokers(r->dev), LISTS, 4, r->mocks, NULL, &r->worker));
    check(swf_history_pg_new(swf_dev_conninfo(r->dev), &r->store));
}

static void rig_down(rig_t *r)
{
    swf_history_store_free(r->store);
    swf_dev_worker_stop(r->worker);
    json_object_put(r->mocks);
    swf_dev_stop(r->dev);
}

/* The daemons ran the whole execution as the runtime role `swf db migrate
 * --grant` grants (swf dev does what README "Roles" asks: cli/dev.c), and
 * that role cannot rewrite events nor touch their triggers or functions:
 * PostgreSQL refuses for want of privilege (42501), not the trigger. */
static void expect_runtime_role(swf_dev_t *dev)
{
    char v[256];
    cr_assert_str_eq(pg_state(swf_dev_conninfo(dev), "SELECT current_user", v), "");
    cr_assert_str_eq(v, "swf_runtime");
    cr_assert_str_eq(pg_state(swf_dev_owner_conninfo(dev),
                              "SELECT string_agg(DISTINCT usename, ',') FROM pg_stat_activity"
                              " WHERE datname = current_database() AND pid <> pg_backend_pid()",
                              v),
                     "");
    cr_assert_str_eq(v, "swf_runtime", "the daemons connected as %s", v);
    const char *const forbidden[] = {
        "UPDATE events SET attributes = '{}'",
        "DELETE FROM events",
        "TRUNCATE events",
        "ALTER TABLE events DISABLE TRIGGER ALL",
        "ALTER TABLE events DISABLE TRIGGER events_chain",
        "DROP TRIGGER events_append_only ON events",
        "DROP TRIGGER events_chain ON events",
        "CREATE OR REPLACE FUNCTION swf_events_append_only() RETURNS trigger"
        " LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$",
        "CREATE OR REPLACE FUNCTION swf_events_chain() RETURNS trigger"
        " LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$",
        "DROP FUNCTION swf_events_append_only() CASCADE",
        "DROP TABLE events",
    };
    for (size_t i = 0; i < sizeof(forbidden) / sizeof(forbidden[0]); i++)
        cr_expect_str_eq(pg_state(swf_dev_conninfo(dev), forbidden[i], NULL), "42501", "%s",
                         forbidden[i]);
}

Test(daemon, runs_task_retry_wait_parallel_map_like_local, .timeout = 600)
{
    rig_t rig;
    rig_up(&rig, 1, false);
    swf_dev_t *dev = rig.dev;
    swf_history_store_t *store = rig.store;
    start_executions(dev, store, 1, "one");
    char *status = wait_closed(store, "one-0");
    cr_assert_str_eq(status, "succeeded");
    free(status);
    size_t n;
    json_object *out = replay_checked(store, "one-0", &n), *want = local_output();
    cr_assert(swf_json_equal(out, want), "got %s", swf_json_str(out));
    /* The outbox is empty: every task was published and its row deleted. */
    swf_decider_stats_t stats;
    swf_decider_stats(swf_dev_decider(dev, 0), &stats);
    cr_assert_eq(stats.tasks_published, 2 + 2 + 5, "published %llu",
                 (unsigned long long)stats.tasks_published);
    json_object_put(out);
    json_object_put(want);
    expect_runtime_role(dev);
    rig_down(&rig);
}

/* Waits (bounded) until the decider counted `n` more ignored messages. */
static void wait_stat(swf_decider_t *d, uint64_t *(*field)(swf_decider_stats_t *), uint64_t want)
{
    for (int i = 0; i < 6000; i++) {
        swf_decider_stats_t s;
        swf_decider_stats(d, &s);
        if (*field(&s) >= want)
            return;
        usleep(50000);
    }
    cr_assert_fail("the decider did not get there");
}

static uint64_t *f_ignored(swf_decider_stats_t *s)
{
    return &s->ignored;
}
static uint64_t *f_dead(swf_decider_stats_t *s)
{
    return &s->dead_letters;
}

Test(daemon, duplicate_answers_change_nothing_forged_token_goes_to_dlq, .timeout = 600)
{
    rig_t rig;
    rig_up(&rig, 1, false);
    swf_dev_t *dev = rig.dev;
    swf_history_store_t *store = rig.store;
    start_executions(dev, store, 1, "dup");
    char *status = wait_closed(store, "dup-0");
    free(status);
    size_t before, after;
    json_object *out = replay_checked(store, "dup-0", &before);
    json_object_put(out);
    swf_decider_t *d = swf_dev_decider(dev, 0);
    swf_decider_stats_t s0;
    swf_decider_stats(d, &s0);
    /* A second answer to activity 1 (already completed) and one to a Map item. */
    char *tok = swf_token_make(swf_token_secret_env(), "dup-0", "1");
    json_object *r = json_object_new_string("again");
    send_inbox(swf_dev_brokers(dev), "dup-0", swf_msg_activity_completed_new(tok, r, "test"));
    send_inbox(swf_dev_brokers(dev), "dup-0", swf_msg_activity_failed_new(tok, "X", "y", "test"));
    wait_stat(d, f_ignored, s0.ignored + 2);
    out = replay_checked(store, "dup-0", &after);
    cr_assert_eq(after, before, "the history grew from %zu to %zu events", before, after);
    json_object_put(out);
    free(tok);

    /* A token signed with another secret is dead-lettered with the reason. */
    char *forged = swf_token_make("not-the-secret", "dup-0", "1");
    send_inbox(swf_dev_brokers(dev), "dup-0", swf_msg_activity_completed_new(forged, r, "evil"));
    wait_stat(d, f_dead, s0.dead_letters + 1);
    swf_kafka_names_t names;
    swf_kafka_names_env(&names);
    cr_assert(topic_has(swf_dev_brokers(dev), names.dlq, "forged or altered task token"),
              "no dead letter with the reason");
    out = replay_checked(store, "dup-0", &after);
    cr_assert_eq(after, before);
    json_object_put(out);
    free(forged);
    json_object_put(r);
    rig_down(&rig);
}

Test(daemon, two_racing_deciders_never_fork_a_history, .timeout = 600)
{
    /* Each decider in a group of its own: both see every message and race
     * on every execution; the optimistic check must settle every race. */
    rig_t rig;
    rig_up(&rig, 2, true);
    swf_dev_t *dev = rig.dev;
    swf_history_store_t *store = rig.store;
    enum { N = 8 };
    start_executions(dev, store, N, "race");
    expect_like_local(store, "race", N);
    swf_decider_stats_t a, b;
    swf_decider_stats(swf_dev_decider(dev, 0), &a);
    swf_decider_stats(swf_dev_decider(dev, 1), &b);
    cr_log_info("conflicts: %llu + %llu", (unsigned long long)a.conflicts,
                (unsigned long long)b.conflicts);
    /* A decider decides on its cached state without reading the history
     * again, so the slower of the two must have lost races and reloaded. */
    cr_expect(a.conflicts + b.conflicts > 0, "no race was lost: the deciders did not race");
    rig_down(&rig);
}

Test(daemon, pipelined_batches_keep_each_execution_in_order, .timeout = 600)
{
    /* Bursts of signals to a few executions, answered tasks in between:
     * consecutive batches share executions while one is in flight. Each
     * execution's batch must be decided on the state the previous one
     * appended, in message order: one decider never loses a race to
     * itself, and every signal is in the history once, in order. */
    rig_t rig;
    rig_up(&rig, 1, false);
    swf_dev_t *dev = rig.dev;
    swf_history_store_t *store = rig.store;
    enum { N = 4, SIGNALS = 60 };
    start_executions(dev, store, N, "burst");
    rd_kafka_t *p;
    check(swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = swf_dev_brokers(dev)},
                                 &p));
    swf_kafka_names_t names;
    swf_kafka_names_env(&names);
    for (int k = 0; k < SIGNALS; k++) {
        swf_kafka_out_t outs[N];
        json_object *docs[N];
        char ids[N][32], name[32];
        snprintf(name, sizeof(name), "s%03d", k);
        for (int i = 0; i < N; i++) {
            snprintf(ids[i], sizeof(ids[i]), "burst-%d", i);
            docs[i] = swf_msg_signal_new(NULL, ids[i], name, NULL);
            const char *s = swf_json_str(docs[i]);
            outs[i] = (swf_kafka_out_t){names.inbox, ids[i], s, strlen(s), 0};
        }
        check(swf_kafka_send(p, outs, N));
        for (int i = 0; i < N; i++)
            json_object_put(docs[i]);
        if (k % 10 == 9)
            usleep(2000); /* let some batches go while others are in flight */
    }
    rd_kafka_destroy(p);
    expect_like_local(store, "burst", N);
    for (int i = 0; i < N; i++) {
        char id[32];
        snprintf(id, sizeof(id), "burst-%d", i);
        swf_event_list_t events = {0};
        check(swf_history_load(store, id, 0, 0, &events));
        int seen = 0;
        for (size_t e = 0; e < events.count; e++) {
            if (events.items[e].type != SWF_EVENT_WORKFLOW_EXECUTION_SIGNALED)
                continue;
            char name[32];
            snprintf(name, sizeof(name), "s%03d", seen++);
            cr_assert_str_eq(swf_json_get_string(events.items[e].attrs, "signalName"), name,
                             "%s: signals out of order", id);
        }
        cr_assert_eq(seen, SIGNALS, "%s: %d signals recorded", id, seen);
        swf_event_list_free(&events);
    }
    swf_decider_stats_t st;
    swf_decider_stats(swf_dev_decider(dev, 0), &st);
    cr_assert_eq(st.conflicts, 0, "one decider lost %llu races to itself",
                 (unsigned long long)st.conflicts);
    rig_down(&rig);
}

/* A properties file (SWF_KAFKA_CONFIG_FILE) may pick Kafka's cooperative
 * assignor, whose rebalances hand over only the partitions that move: the
 * decider must take and give them back incrementally, or it stops at the
 * first rebalance and nothing runs. */
Test(daemon, deciders_share_the_work_under_the_cooperative_assignor, .timeout = 600)
{
    char path[32];
    kafka_props_use("partition.assignment.strategy=cooperative-sticky\n", path);
    rig_t rig;
    rig_up(&rig, 2, false);
    enum { N = 6 };
    start_executions(rig.dev, rig.store, N, "coop");
    expect_like_local(rig.store, "coop", N);
    /* Both deciders hold inbox partitions once the group settled. */
    swf_decider_stats_t a = {0}, b = {0};
    for (int i = 0; i < 1200 && (a.partitions == 0 || b.partitions == 0); i++) {
        swf_decider_stats(swf_dev_decider(rig.dev, 0), &a);
        swf_decider_stats(swf_dev_decider(rig.dev, 1), &b);
        if (a.partitions == 0 || b.partitions == 0)
            usleep(50000);
    }
    cr_assert(a.partitions > 0 && b.partitions > 0, "partitions: %llu and %llu",
              (unsigned long long)a.partitions, (unsigned long long)b.partitions);
    rig_down(&rig);
    unlink(path);
}

static void *run_decider(void *arg)
{
    swf_decider_run(arg);
    return NULL;
}

/* librdkafka's close waits without limit for the decider's last offset
 * commit; the broker here answers that commit after 100 s (beyond the 60 s
 * request timeout). The decider's stop must not wait that long. */
Test(daemon, leaving_the_group_ends_within_its_bound_when_kafka_does_not_answer, .timeout = 600)
{
    swf_dev_options_t opt = {.deciders = 0, .time_scale = 1};
    swf_dev_t *dev = NULL;
    check(swf_dev_start(&opt, &dev));
    FILE *log = tmpfile();
    cr_assert_not_null(log);
    swf_decider_config_t cfg;
    swf_decider_config_env(&cfg);
    cfg.conninfo = swf_dev_conninfo(dev);
    swf_kafka_names_env(&cfg.kafka);
    cfg.kafka.brokers = swf_dev_brokers(dev);
    cfg.secret = swf_token_secret_env();
    cfg.log = log;
    swf_decider_t *d = NULL;
    check(swf_decider_new(&cfg, &d));
    pthread_t th;
    cr_assert_eq(pthread_create(&th, NULL, run_decider, d), 0);
    swf_decider_stats_t st = {0};
    for (int i = 0; i < 1200 && st.partitions == 0; i++) {
        usleep(50000);
        swf_decider_stats(d, &st);
    }
    cr_assert_gt(st.partitions, 0, "the decider never got its partitions");
    /* The next OffsetCommit (Kafka's API key 8) is answered 100 s late. */
    cr_assert_eq(rd_kafka_mock_broker_push_request_error_rtts(swf_dev_mock_cluster(dev), 1, 8, 1,
                                                              RD_KAFKA_RESP_ERR_NO_ERROR, 100000),
                 0);
    rd_kafka_t *p = NULL;
    check(swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = swf_dev_brokers(dev)},
                                 &p));
    json_object *m = swf_msg_decide_new(NULL, "no-such-execution");
    const char *text = swf_json_str(m);
    swf_kafka_out_t o = {cfg.kafka.inbox, "no-such-execution", text, strlen(text), 0};
    check(swf_kafka_send(p, &o, 1));
    json_object_put(m);
    rd_kafka_destroy(p);
    for (int i = 0; i < 1200 && st.batches == 0; i++) {
        usleep(50000);
        swf_decider_stats(d, &st);
    }
    cr_assert_gt(st.batches, 0, "the decider never took the message");
    swf_decider_stop(d);
    pthread_join(th, NULL);
    int64_t t0 = swf_time_now_ms();
    swf_decider_free(d);
    int64_t took = swf_time_now_ms() - t0;
    /* A hang guard, not a timing check: unbounded, this takes 60 s. */
    cr_assert_lt(took, 50000, "leaving took %lld ms", (long long)took);
    char all[8192] = "";
    rewind(log);
    size_t n = fread(all, 1, sizeof(all) - 1, log);
    all[n] = '\0';
    cr_assert(strstr(all, "did not leave its group within 10000 ms"), "the log: %s", all);
    fclose(log);
    /* The broker drops its connections, so the held OffsetCommit goes again:
     * the abandoned close ends, and frees what it held, before the cluster
     * goes (without a broker it would look for the coordinator for good). */
    cr_assert_eq(rd_kafka_mock_broker_set_down(swf_dev_mock_cluster(dev), 1), 0);
    cr_assert_eq(rd_kafka_mock_broker_set_up(swf_dev_mock_cluster(dev), 1), 0);
    cr_assert(swf_bounded_wait_abandoned(60000), "the abandoned close never ended");
    swf_dev_stop(dev);
}

/* ---- answers on the wrong partition ------------------------------------- */

/* A Task, then a Wait: the timer's firing goes to the execution's own
 * partition, whatever partition its answer came through. */
static const char *MISROUTED_DEF =
    "{\"StartAt\":\"Work\",\"States\":{"
    "\"Work\":{\"Type\":\"Task\",\"Resource\":\"arn:aws:states:::activity:misrouted\","
    "  \"Next\":\"Pause\"},"
    "\"Pause\":{\"Type\":\"Wait\",\"Seconds\":1,\"End\":true}}}";

static uint64_t *f_partitions(swf_decider_stats_t *s)
{
    return &s->partitions;
}

Test(daemon, an_answer_sent_to_another_deciders_partition_strands_nothing, .timeout = 600)
{
    enum { PARTS = 4, N = 6 };
    swf_dev_options_t opt = {.deciders = 2,
                             .history_service = true,
                             .time_scale = 0.05,
                             .log = getenv("SWF_TEST_LOG") ? stderr : NULL};
    swf_dev_t *dev;
    check(swf_dev_start(&opt, &dev));
    swf_history_store_t *store;
    check(swf_history_pg_new(swf_dev_conninfo(dev), &store));
    const char *brokers = swf_dev_brokers(dev);
    swf_decider_t *d[2] = {swf_dev_decider(dev, 0), swf_dev_decider(dev, 1)};
    wait_stat(d[0], f_partitions, PARTS / 2);
    wait_stat(d[1], f_partitions, PARTS / 2);
    /* Which decider owns which partition: a decide for no execution sent to
     * each is ignored by its owner. */
    int owner[PARTS];
    for (int q = 0; q < PARTS; q++) {
        swf_decider_stats_t s0[2], s1[2];
        swf_decider_stats(d[0], &s0[0]);
        swf_decider_stats(d[1], &s0[1]);
        inbox_send_to(brokers, q, "probe", swf_msg_decide_new(NULL, "probe"));
        owner[q] = -1;
        for (int i = 0; i < 6000 && owner[q] < 0; i++, usleep(10000)) {
            swf_decider_stats(d[0], &s1[0]);
            swf_decider_stats(d[1], &s1[1]);
            owner[q] = s1[0].ignored > s0[0].ignored ? 0 : s1[1].ignored > s0[1].ignored ? 1 : -1;
        }
        cr_assert_geq(owner[q], 0, "nobody read partition %d", q);
    }
    /* The executions, started as usual: each decider caches its own. */
    cr_assert_eq(rd_kafka_mock_topic_create(swf_dev_mock_cluster(dev), "swf.tasks.misrouted", 4, 1),
                 0);
    json_object *def = parse(MISROUTED_DEF), *input = parse("{}");
    int version = 0;
    check(swf_history_pg_state_machine_register(store, "Misrouted", def, &version));
    for (int i = 0; i < N; i++) {
        char id[64];
        snprintf(id, sizeof(id), "misrouted-%d", i);
        swf_history_start_t st = {.execution_id = id,
                                  .state_machine = "Misrouted",
                                  .version = version,
                                  .input = input,
                                  .time_ms = swf_time_now_ms()};
        check(swf_history_pg_execution_start(store, &st, NULL));
        send_inbox(brokers, id, swf_msg_decide_new(NULL, id));
    }
    /* Each task answered on a partition of the other decider: that one
     * appends the answer and starts the Wait's timer behind the owner's
     * cached state, and the firing reaches the owner. */
    rd_kafka_t *tasks = topic_reader_new(brokers, "swf.tasks.misrouted");
    for (int answered = 0, polls = 0; answered < N && polls < 3000; polls++) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(tasks, 100);
        if (m == NULL)
            continue;
        swf_msg_t task = {0};
        if (m->err == 0 &&
            swf_msg_parse(m->payload, m->len, swf_token_secret_env(), &task) == NULL) {
            const char *id = task.execution_id;
            int32_t own = rd_kafka_msg_partitioner_murmur2(NULL, id, strlen(id), PARTS, NULL, NULL);
            int32_t q = 0;
            while (owner[q] == owner[own])
                q++;
            inbox_send_to(brokers, q, id,
                          swf_msg_activity_completed_new(task.task_token, NULL, "misrouter"));
            answered++;
        }
        swf_msg_clear(&task);
        rd_kafka_message_destroy(m);
    }
    rd_kafka_consumer_close(tasks);
    rd_kafka_destroy(tasks);
    for (int i = 0; i < N; i++) {
        char id[64];
        snprintf(id, sizeof(id), "misrouted-%d", i);
        char *status = wait_closed(store, id);
        cr_expect_str_eq(status, "succeeded", "%s", id);
        free(status);
    }
    swf_decider_stats_t a, b;
    swf_decider_stats(d[0], &a);
    swf_decider_stats(d[1], &b);
    cr_log_info("stale cached states reloaded: %llu + %llu", (unsigned long long)a.stale,
                (unsigned long long)b.stale);
    cr_expect_gt(a.stale + b.stale, 0, "no cached state went stale: the test proves nothing");
    json_object_put(def);
    json_object_put(input);
    swf_history_store_free(store);
    swf_dev_stop(dev);
}

/* Registers def_text as `machine` and starts execution id on input_text
 * (no decide is sent). */
static void start_one(rig_t *r, const char *machine, const char *def_text, const char *id,
                      const char *input_text)
{
    json_object *def = parse(def_text), *input = parse(input_text);
    int version = 0;
    check(swf_history_pg_state_machine_register(r->store, machine, def, &version));
    swf_history_start_t st = {.execution_id = id,
                              .state_machine = machine,
                              .version = version,
                              .input = input,
                              .time_ms = swf_time_now_ms()};
    check(swf_history_pg_execution_start(r->store, &st, NULL));
    json_object_put(def);
    json_object_put(input);
}

/* ---- control messages from outside ---------------------------------------- */

static const char *HOUR_DEF = "{\"StartAt\":\"Pause\",\"States\":{"
                              "\"Pause\":{\"Type\":\"Wait\",\"Seconds\":3600,\"End\":true}}}";

/* Only swf's own processes may send control messages: a terminate signed
 * with another secret, and a timer.fired with no signature, produced
 * straight to the inbox, go to the dead letters with the reason, and the
 * execution keeps waiting. */
Test(daemon, a_forged_or_unsigned_control_message_is_dead_lettered, .timeout = 600)
{
    rig_t rig;
    rig_up(&rig, 1, false);
    const char *b = swf_dev_brokers(rig.dev);
    start_one(&rig, "Hour", HOUR_DEF, "hour-0", "{}");
    swf_decider_t *d = swf_dev_decider(rig.dev, 0);
    swf_decider_stats_t s0;
    swf_decider_stats(d, &s0);
    send_inbox(b, "hour-0", swf_msg_decide_new(NULL, "hour-0"));

    send_inbox(
        b, "hour-0",
        swf_msg_sign(swf_msg_terminate_new(NULL, "hour-0", "evil", NULL, false), "not-the-secret"));
    json_object *fired = swf_msg_timer_fired_new(NULL, "hour-0", "Pause", 2);
    json_object_object_del(fired, "signature");
    send_inbox(b, "hour-0", fired);
    wait_stat(d, f_dead, s0.dead_letters + 2);
    swf_kafka_names_t names;
    swf_kafka_names_env(&names);
    cr_assert(topic_has(b, names.dlq, "forged or altered control message signature"),
              "no dead letter for the forged terminate");
    cr_assert(topic_has(b, names.dlq, "unsigned control message"),
              "no dead letter for the unsigned timer.fired");
    swf_history_execution_t ex;
    check(swf_history_pg_execution_describe(rig.store, "hour-0", &ex));
    cr_assert_str_eq(ex.status, "open");
    swf_history_execution_free(&ex);
    rig_down(&rig);
}

/* ---- answers json-c alone would rewrite ------------------------------------ */

static const char *WAIT_TASK_DEF =
    "{\"StartAt\":\"Ask\",\"States\":{\"Ask\":{\"Type\":\"Task\","
    "\"Resource\":\"arn:aws:states:::activity:nobody-serves-this\",\"End\":true}}}";

/* The activityId of the execution's first scheduled task, once scheduled. */
static char *wait_scheduled(swf_history_store_t *store, const char *id)
{
    for (int i = 0; i < 6000; i++) {
        swf_event_list_t events = {0};
        check(swf_history_load(store, id, 0, 0, &events));
        for (size_t k = 0; k < events.count; k++) {
            json_object *a;
            if (events.items[k].type == SWF_EVENT_ACTIVITY_TASK_SCHEDULED &&
                swf_json_get(events.items[k].attrs, "activityId", &a)) {
                char *aid = strdup(json_object_get_string(a));
                swf_event_list_free(&events);
                return aid;
            }
        }
        swf_event_list_free(&events);
        usleep(50000);
    }
    cr_assert_fail("%s scheduled no task", id);
    return NULL;
}

/* A rig with one decider and the execution `id` of `def` (input {"n":1})
 * started and decided: the activityId of its first task, once scheduled
 * (nobody serves it). */
static char *task_open(rig_t *rig, const char *machine, const char *def, const char *id)
{
    rig_up(rig, 1, false);
    start_one(rig, machine, def, id, "{\"n\":1}");
    send_inbox(swf_dev_brokers(rig->dev), id, swf_msg_decide_new(NULL, id));
    return wait_scheduled(rig->store, id);
}

/* A worker's answer with a duplicate key, a lone surrogate or a 30-digit
 * integer in its result, under a genuine task token, goes to the dead
 * letters with the path and the reason; the execution is unharmed: the
 * proper answer after them completes it with exactly that result. */
Test(daemon, an_answer_json_c_would_rewrite_is_dead_lettered_and_the_execution_unharmed,
     .timeout = 600)
{
    rig_t rig;
    char *aid = task_open(&rig, "Ask", WAIT_TASK_DEF, "ask-0");
    const char *b = swf_dev_brokers(rig.dev);
    swf_decider_t *d = swf_dev_decider(rig.dev, 0);
    char *tok = swf_token_make(swf_token_secret_env(), "ask-0", aid);
    swf_decider_stats_t s0;
    swf_decider_stats(d, &s0);

    static const char *const results[] = {
        "{\"id\":1,\"id\":2}",
        "{\"name\":\"\\ud800\"}",
        "{\"id\":123456789012345678901234567890}",
    };
    for (size_t i = 0; i < 3; i++) {
        char text[1024];
        snprintf(text, sizeof(text),
                 "{\"v\":1,\"type\":\"activity.completed\",\"taskToken\":\"%s\",\"result\":%s}",
                 tok, results[i]);
        send_inbox_text(b, "ask-0", text);
    }
    wait_stat(d, f_dead, s0.dead_letters + 3);
    swf_kafka_names_t names;
    swf_kafka_names_env(&names);
    cr_assert(topic_has(b, names.dlq, "$.result: duplicate key"), "no dead letter for the key");
    cr_assert(topic_has(b, names.dlq, "$.result.name: lone surrogate"),
              "no dead letter for the surrogate");
    cr_assert(topic_has(b, names.dlq,
                        "$.result.id: the number 123456789012345678901234567890 is outside"),
              "no dead letter for the number");
    swf_history_execution_t ex;
    check(swf_history_pg_execution_describe(rig.store, "ask-0", &ex));
    cr_assert_str_eq(ex.status, "open");
    swf_history_execution_free(&ex);

    json_object *r = parse("{\"id\":9223372036854775807,\"name\":\"\\ud83d\\ude00\"}");
    send_inbox(b, "ask-0", swf_msg_activity_completed_new(tok, r, "test"));
    char *status = wait_closed(rig.store, "ask-0");
    cr_assert_str_eq(status, "succeeded");
    size_t n;
    json_object *out = replay_checked(rig.store, "ask-0", &n);
    cr_assert(swf_json_equal(out, r), "got %s", swf_json_str(out));
    cr_assert_str_eq(swf_json_str(out),
                     "{\"id\":9223372036854775807,\"name\":\"\xF0\x9F\x98\x80\"}");
    json_object_put(out);
    json_object_put(r);
    free(status);
    free(tok);
    free(aid);
    rig_down(&rig);
}

/* The first event of `type` in the execution's history (its id, 0 when
 * none) and how many there are; *attrs gets the first one's attributes. */
static int64_t event_find(swf_history_store_t *store, const char *id, swf_event_type_t type,
                          int *count, json_object **attrs)
{
    swf_event_list_t events = {0};
    check(swf_history_load(store, id, 0, 0, &events));
    int64_t first = 0;
    *count = 0;
    for (size_t k = 0; k < events.count; k++) {
        if (events.items[k].type != type)
            continue;
        if ((*count)++ == 0) {
            first = events.items[k].id;
            if (attrs != NULL)
                *attrs = swf_json_ref(events.items[k].attrs);
        }
    }
    swf_event_list_free(&events);
    return first;
}

/* event_find, waiting up to 60 s for the first such event: a message
 * counted ignored or dead is counted while its batch is decided, before
 * the batch's append (which holds the events of the messages before it)
 * commits. */
static int64_t event_wait(swf_history_store_t *store, const char *id, swf_event_type_t type,
                          int *count, json_object **attrs)
{
    for (int i = 0; i < 1200; i++) {
        int64_t first = event_find(store, id, type, count, attrs);
        if (*count > 0)
            return first;
        usleep(50000);
    }
    return 0;
}

static const char *HEARTBEAT_TASK_DEF =
    "{\"StartAt\":\"Ask\",\"States\":{\"Ask\":{\"Type\":\"Task\","
    "\"Resource\":\"arn:aws:states:::activity:nobody-serves-this\","
    "\"HeartbeatSeconds\":3600,\"TimeoutSeconds\":7200,\"End\":true}}}";

/* activity.started records ActivityTaskStarted when the worker takes the
 * task, with its identity, once however often it comes; the heartbeat
 * timeout counts from it (activity_timeouts.last_heartbeat); the answer
 * names that start and records no other; a start after the answer, or
 * under a forged token, changes nothing. */
Test(daemon, activity_started_records_the_start_once_when_the_worker_takes_the_task, .timeout = 600)
{
    rig_t rig;
    char *aid = task_open(&rig, "Beat", HEARTBEAT_TASK_DEF, "beat-0");
    const char *b = swf_dev_brokers(rig.dev);
    swf_decider_t *d = swf_dev_decider(rig.dev, 0);
    char *tok = swf_token_make(swf_token_secret_env(), "beat-0", aid);
    char *forged = swf_token_make("not-the-secret", "beat-0", aid);
    swf_decider_stats_t s0;
    swf_decider_stats(d, &s0);

    send_inbox(b, "beat-0", swf_msg_activity_started_new(forged, "evil"));
    send_inbox(b, "beat-0", swf_msg_activity_started_new(tok, "worker-1"));
    send_inbox(b, "beat-0", swf_msg_activity_started_new(tok, "worker-2")); /* redelivered */
    wait_stat(d, f_dead, s0.dead_letters + 1);
    wait_stat(d, f_ignored, s0.ignored + 1);
    int n = 0;
    json_object *a = NULL;
    int64_t started = event_wait(rig.store, "beat-0", SWF_EVENT_ACTIVITY_TASK_STARTED, &n, &a);
    cr_assert_eq(n, 1, "%d ActivityTaskStarted", n);
    cr_assert_str_eq(swf_json_get_string(a, "identity"), "worker-1");
    json_object_put(a);
    char v[256];
    cr_assert_str_eq(pg_state(swf_dev_conninfo(rig.dev),
                              "SELECT count(*) FROM activity_timeouts"
                              " WHERE execution_id = 'beat-0' AND last_heartbeat IS NOT NULL",
                              v),
                     "");
    cr_assert_str_eq(v, "1", "the heartbeat timeout does not count from the start");

    json_object *r = parse("{\"ok\":true}");
    send_inbox(b, "beat-0", swf_msg_activity_completed_new(tok, r, "worker-1"));
    char *status = wait_closed(rig.store, "beat-0");
    cr_assert_str_eq(status, "succeeded");
    free(status);
    event_find(rig.store, "beat-0", SWF_EVENT_ACTIVITY_TASK_STARTED, &n, NULL);
    cr_assert_eq(n, 1, "the answer recorded another start");
    event_find(rig.store, "beat-0", SWF_EVENT_ACTIVITY_TASK_COMPLETED, &n, &a);
    json_object *sid = NULL;
    cr_assert(swf_json_get(a, "startedEventId", &sid));
    cr_assert_eq(json_object_get_int64(sid), started);
    json_object_put(a);

    size_t before, after;
    json_object *out = replay_checked(rig.store, "beat-0", &before);
    json_object_put(out);
    swf_decider_stats(d, &s0);
    send_inbox(b, "beat-0", swf_msg_activity_started_new(tok, "late"));
    wait_stat(d, f_ignored, s0.ignored + 1);
    out = replay_checked(rig.store, "beat-0", &after);
    cr_assert_eq(after, before, "a start after the answer grew the history");
    cr_assert(swf_json_equal(out, r));
    json_object_put(out);
    json_object_put(r);
    free(forged);
    free(tok);
    free(aid);
    rig_down(&rig);
}

/* ---- nested executions (decider/nested.h) ---------------------------------- */

static const char *NESTED_CHILD_DEF =
    "{\"StartAt\":\"Double\",\"States\":{\"Double\":{\"Type\":\"Pass\",\"Parameters\":{"
    "\"doubled.$\":\"States.MathAdd($.n, $.n)\"},\"End\":true}}}";
static const char *NESTED_FAILING_DEF =
    "{\"StartAt\":\"F\",\"States\":{\"F\":{\"Type\":\"Fail\",\"Error\":\"Child.Broke\","
    "\"Cause\":\"it broke\"}}}";
/* request-response, then .sync:2, then .sync of a child that fails. */
static const char *NESTED_PARENT_DEF =
    "{\"StartAt\":\"Fire\",\"States\":{"
    "\"Fire\":{\"Type\":\"Task\",\"Resource\":\"arn:aws:states:::states:startExecution\","
    "\"Parameters\":{\"StateMachineArn\":\"Doubler\",\"Input\":{\"n\":1},\"Name\":\"fired-0\"},"
    "\"ResultPath\":\"$.fired\",\"Next\":\"Call\"},"
    "\"Call\":{\"Type\":\"Task\",\"Resource\":\"arn:aws:states:::states:startExecution.sync:2\","
    "\"Parameters\":{\"StateMachineArn\":\"arn:aws:states:us-east-1:123456789012:stateMachine:"
    "Doubler:1\",\"Input\":{\"n.$\":\"$.n\"}},\"ResultSelector\":{\"out.$\":\"$.Output\"},"
    "\"ResultPath\":\"$.call\",\"Next\":\"Fail\"},"
    "\"Fail\":{\"Type\":\"Task\",\"Resource\":\"arn:aws:states:::states:startExecution.sync\","
    "\"Parameters\":{\"StateMachineArn\":\"Broken\"},\"Catch\":[{\"ErrorEquals\":["
    "\"States.TaskFailed\"],\"ResultPath\":\"$.failed\",\"Next\":\"Done\"}],\"End\":true},"
    "\"Done\":{\"Type\":\"Pass\",\"Parameters\":{\"call.$\":\"$.call.out\",\"error.$\":"
    "\"$.failed.Error\",\"cause.$\":\"States.StringToJson($.failed.Cause)\"},\"End\":true}}}";

/* The id of the first ActivityTaskScheduled of the execution's nested Task
 * `state`. */
static int64_t nested_scheduled(swf_history_store_t *store, const char *id, const char *state)
{
    swf_event_list_t events = {0};
    check(swf_history_load(store, id, 0, 0, &events));
    int64_t found = 0;
    for (size_t k = 0; k < events.count && found == 0; k++) {
        json_object *c;
        if (events.items[k].type == SWF_EVENT_ACTIVITY_TASK_SCHEDULED &&
            swf_json_get(events.items[k].attrs, "control", &c) &&
            strcmp(swf_json_get_string(c, "state"), state) == 0)
            found = events.items[k].id;
    }
    swf_event_list_free(&events);
    cr_assert(found > 0, "%s has no Task %s", id, state);
    return found;
}

/* A parent starts three children (request-response, .sync:2, .sync of one
 * that fails) and gets AWS's answers; each child is an ordinary execution
 * whose start names the parent. nested.start and nested.closed delivered
 * again (a crash before the offsets' commit) start no second child and
 * record no second answer. */
Test(daemon, a_nested_execution_starts_once_and_its_close_reaches_the_parent_once, .timeout = 600)
{
    rig_t rig;
    rig_up(&rig, 1, false);
    const char *b = swf_dev_brokers(rig.dev);
    swf_decider_t *d = swf_dev_decider(rig.dev, 0);
    json_object *child = parse(NESTED_CHILD_DEF), *broken = parse(NESTED_FAILING_DEF);
    check(swf_history_pg_state_machine_register(rig.store, "Doubler", child, NULL));
    check(swf_history_pg_state_machine_register(rig.store, "Broken", broken, NULL));
    json_object_put(child);
    json_object_put(broken);
    start_one(&rig, "Parent", NESTED_PARENT_DEF, "nest-0", "{\"n\":21}");
    send_inbox(b, "nest-0", swf_msg_decide_new(NULL, "nest-0"));
    char *status = wait_closed(rig.store, "nest-0");
    cr_assert_str_eq(status, "succeeded");
    free(status);
    size_t before, after;
    json_object *out = replay_checked(rig.store, "nest-0", &before);
    json_object *call = NULL, *cause = NULL;
    cr_assert(swf_json_get(out, "call", &call) && swf_json_get(out, "cause", &cause));
    json_object *want = parse("{\"doubled\":42}");
    cr_assert(swf_json_equal(call, want), "%s", swf_json_str(out));
    json_object_put(want);
    cr_assert_str_eq(swf_json_get_string(out, "error"), "States.TaskFailed");
    cr_assert_str_eq(swf_json_get_string(cause, "Status"), "FAILED");
    cr_assert_str_eq(swf_json_get_string(cause, "Error"), "Child.Broke");
    cr_assert_str_eq(swf_json_get_string(cause, "Cause"), "it broke");
    json_object_put(out);

    /* The children: named by Name, or by the parent and the activity. */
    int64_t fire = nested_scheduled(rig.store, "nest-0", "Fire");
    int64_t sync2 = nested_scheduled(rig.store, "nest-0", "Call");
    const char *kids[] = {"fired-0", "nest-0-2", "nest-0-3"};
    for (size_t i = 0; i < 3; i++) {
        status = wait_closed(rig.store, kids[i]);
        cr_assert_str_eq(status, i == 2 ? "failed" : "succeeded", "%s", kids[i]);
        free(status);
        int n = 0;
        json_object *a = NULL;
        event_find(rig.store, kids[i], SWF_EVENT_WORKFLOW_EXECUTION_STARTED, &n, &a);
        json_object *p = NULL;
        cr_assert(swf_json_get(a, "parentWorkflowExecution", &p), "%s", kids[i]);
        cr_assert_str_eq(swf_json_get_string(p, "workflowId"), "nest-0");
        json_object_put(a);
    }

    swf_decider_stats_t s0;
    swf_decider_stats(d, &s0);
    send_inbox(b, "nest-0", swf_msg_nested_new(NULL, SWF_MSG_NESTED_START, "nest-0", fire));
    send_inbox(b, "nest-0", swf_msg_nested_new(NULL, SWF_MSG_NESTED_START, "nest-0", sync2));
    send_inbox(b, "nest-0", swf_msg_nested_new(NULL, SWF_MSG_NESTED_CLOSED, "nest-0", sync2));
    wait_stat(d, f_ignored, s0.ignored + 3);
    out = replay_checked(rig.store, "nest-0", &after);
    cr_assert_eq(after, before, "a message delivered again grew the parent's history");
    json_object_put(out);
    char v[256];
    cr_assert_str_eq(pg_state(swf_dev_conninfo(rig.dev),
                              "SELECT count(*) FROM executions WHERE execution_id LIKE 'nest-0-%'"
                              " OR execution_id = 'fired-0'",
                              v),
                     "");
    cr_assert_str_eq(v, "3");
    cr_assert_str_eq(pg_state(swf_dev_conninfo(rig.dev), "SELECT count(*) FROM outbox", v), "");
    cr_assert_str_eq(v, "0", "outbox rows were left behind");
    rig_down(&rig);
}

/* A rig with the child machine `child` registered from child_def, and the
 * parent execution `id` of parent_def started and decided. */
static void nested_rig_up(rig_t *rig, const char *child, const char *child_def,
                          const char *parent_def, const char *id)
{
    rig_up(rig, 1, false);
    json_object *def = parse(child_def);
    check(swf_history_pg_state_machine_register(rig->store, child, def, NULL));
    json_object_put(def);
    start_one(rig, "Parent", parent_def, id, "{}");
    send_inbox(swf_dev_brokers(rig->dev), id, swf_msg_decide_new(NULL, id));
}

static const char *NESTED_CALLBACK_DEF =
    "{\"StartAt\":\"Ask\",\"States\":{\"Ask\":{\"Type\":\"Task\",\"Resource\":"
    "\"arn:aws:states:::states:startExecution.waitForTaskToken\",\"Parameters\":{"
    "\"StateMachineArn\":\"Doubler\",\"Input\":{\"n\":2,\"token.$\":\"$$.Task.Token\"}},"
    "\"End\":true}}}";

/* .waitForTaskToken: the child gets the token in its input, and the parent
 * waits for it, not for the child's close; SendTaskSuccess with the token
 * completes the Task. */
Test(daemon, a_nested_callback_waits_for_its_token_not_for_the_child, .timeout = 600)
{
    rig_t rig;
    nested_rig_up(&rig, "Doubler", NESTED_CHILD_DEF, NESTED_CALLBACK_DEF, "ask-0");
    const char *b = swf_dev_brokers(rig.dev);
    free(wait_scheduled(rig.store, "ask-0"));
    swf_history_execution_t ex;
    swf_error_t *err = NULL;
    for (int i = 0; i < 6000; i++) { /* the child, once started */
        swf_error_free(err);
        if ((err = swf_history_pg_execution_describe(rig.store, "ask-0-1", &ex)) == NULL)
            break;
        usleep(50000);
    }
    check(err);
    swf_history_execution_free(&ex);
    char *status = wait_closed(rig.store, "ask-0-1");
    cr_assert_str_eq(status, "succeeded");
    free(status);
    int n = 0;
    json_object *a = NULL, *input = NULL;
    event_find(rig.store, "ask-0-1", SWF_EVENT_WORKFLOW_EXECUTION_STARTED, &n, &a);
    cr_assert(swf_json_get(a, "input", &input));
    char *token = strdup(swf_json_get_string(input, "token"));
    json_object_put(a);
    usleep(500000); /* the child's close has had time to reach the parent */
    check(swf_history_pg_execution_describe(rig.store, "ask-0", &ex));
    cr_assert_str_eq(ex.status, "open", "the child's close answered a callback Task");
    swf_history_execution_free(&ex);
    json_object *r = parse("{\"approved\":true}");
    send_inbox(b, "ask-0", swf_msg_activity_completed_new(token, r, "approver"));
    status = wait_closed(rig.store, "ask-0");
    cr_assert_str_eq(status, "succeeded");
    free(status);
    size_t events;
    json_object *out = replay_checked(rig.store, "ask-0", &events);
    cr_assert(swf_json_equal(out, r), "%s", swf_json_str(out));
    json_object_put(out);
    json_object_put(r);
    free(token);
    rig_down(&rig);
}

static const char *NESTED_SLOW_DEF =
    "{\"StartAt\":\"Pause\",\"States\":{"
    "\"Pause\":{\"Type\":\"Wait\",\"Seconds\":3600,\"End\":true}}}";
static const char *NESTED_WAITING_DEF =
    "{\"StartAt\":\"Call\",\"States\":{\"Call\":{\"Type\":\"Task\",\"Resource\":"
    "\"arn:aws:states:::states:startExecution.sync\",\"Parameters\":{\"StateMachineArn\":"
    "\"Slow\"},\"End\":true}}}";

static const char *NESTED_IMPATIENT_DEF =
    "{\"StartAt\":\"Call\",\"States\":{\"Call\":{\"Type\":\"Task\",\"Resource\":"
    "\"arn:aws:states:::states:startExecution.sync:2\",\"TimeoutSeconds\":1,\"Parameters\":{"
    "\"StateMachineArn\":\"Slow\"},\"End\":true}}}";

/* A parent stopped while it waits for a .sync child stops the child (as
 * AWS does, on a best-effort basis); the child's close then changes
 * nothing in the parent. */
Test(daemon, a_stopped_parent_or_a_timed_out_task_stops_its_sync_child, .timeout = 600)
{
    rig_t rig;
    nested_rig_up(&rig, "Slow", NESTED_SLOW_DEF, NESTED_WAITING_DEF, "stop-0");
    const char *b = swf_dev_brokers(rig.dev);
    int n = 0;
    event_wait(rig.store, "stop-0", SWF_EVENT_ACTIVITY_TASK_STARTED, &n,
               NULL); /* the child started */
    cr_assert_eq(n, 1);
    send_inbox(b, "stop-0", swf_msg_terminate_new(NULL, "stop-0", "enough", NULL, false));
    char *status = wait_closed(rig.store, "stop-0");
    cr_assert_str_eq(status, "terminated");
    free(status);
    status = wait_closed(rig.store, "stop-0-1");
    cr_assert_str_eq(status, "terminated", "the child still runs");
    free(status);

    /* The Task's TimeoutSeconds ends the wait: States.Timeout, and the
     * child is stopped. */
    start_one(&rig, "Impatient", NESTED_IMPATIENT_DEF, "stop-1", "{}");
    send_inbox(b, "stop-1", swf_msg_decide_new(NULL, "stop-1"));
    status = wait_closed(rig.store, "stop-1");
    cr_assert_str_eq(status, "failed");
    free(status);
    json_object *a = NULL;
    event_find(rig.store, "stop-1", SWF_EVENT_WORKFLOW_EXECUTION_FAILED, &n, &a);
    cr_assert_str_eq(swf_json_get_string(a, "reason"), "States.Timeout");
    json_object_put(a);
    status = wait_closed(rig.store, "stop-1-1");
    cr_assert_str_eq(status, "terminated", "the child of a timed-out Task still runs");
    free(status);
    rig_down(&rig);
}
