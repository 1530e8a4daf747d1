/*
 * bench_steps - completed activity steps per second through the whole
 * distributed path (worker answer -> inbox -> decider -> PostgreSQL group
 * commit -> activity task on Kafka -> worker), and the latency from a
 * worker's answer to the next activity task of that execution, p50/p99.
 *
 * usage: bench_steps [DECIDERS] [EXECUTIONS] [STEPS] [EXTRA_SETTLE_SECONDS]
 * Each execution is a loop of a Task and a counter, STEPS times; with many
 * executions and few steps the histories stay short, with one execution
 * and 1,000 steps the history grows to ~7,000 events (what the cache is
 * for). The worker is in this program; PostgreSQL is a throwaway cluster
 * (fsync on) and Kafka librdkafka's mock cluster. SWF_BENCH_NO_HISTORY=1
 * runs without swf-history.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/cost.h"
#include "cli/dev.h"
#include "kafka/kafka.h"
#include "history/pg.h"
#include "protocol/json.h"
#include "protocol/message.h"
#include "protocol/time.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The inbox partitions cli/dev.c creates. */
#define INBOX_PARTITIONS 4

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* "Answer -> task published": the worker writes the time it sends each
 * execution's answer, the decider's hook (on its committer thread, once
 * Kafka acknowledged the next task) takes the difference. Its two parts:
 * the decider's other hook notes when its thread took the answer from
 * Kafka, which splits the step into the hop through the broker and the
 * decider's own share (deciding, the append, the publish). */
typedef struct samples {
    double *v; /* seconds */
    size_t n, cap;
} samples_t;

typedef struct published {
    int64_t *answer_us;   /* per execution, 0: no answer yet */
    int64_t *received_us; /* per execution: when the decider took its answer */
    int64_t *taken_us;    /* per execution: when that answer was sent (answer_us may
                             already be the next one's when the publish is seen) */
    int execs;
    samples_t total, hop, engine;
} published_t;

static void sample(samples_t *s, int64_t us)
{
    size_t k = __atomic_fetch_add(&s->n, 1, __ATOMIC_RELAXED);
    if (k < s->cap)
        s->v[k] = (double)us / 1e6;
}

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* The execution's index from a key "bench-N" (not NUL-terminated), or -1. */
static int exec_index(const published_t *p, const char *key, size_t len)
{
    char buf[32];
    size_t prefix = strlen("bench-");
    if (len <= prefix || len - prefix >= sizeof(buf) || strncmp(key, "bench-", prefix) != 0)
        return -1;
    memcpy(buf, key + prefix, len - prefix);
    buf[len - prefix] = '\0';
    int i = atoi(buf);
    return i >= 0 && i < p->execs ? i : -1;
}

static void on_received(void *arg, const char *execution_id, size_t len)
{
    published_t *p = arg;
    int i = exec_index(p, execution_id, len);
    if (i < 0)
        return;
    int64_t now = now_us(), sent = __atomic_load_n(&p->answer_us[i], __ATOMIC_ACQUIRE);
    __atomic_store_n(&p->received_us[i], now, __ATOMIC_RELEASE);
    __atomic_store_n(&p->taken_us[i], sent, __ATOMIC_RELEASE);
    if (sent != 0)
        sample(&p->hop, now - sent);
}

static void on_published(void *arg, const char *execution_id)
{
    published_t *p = arg;
    int i = exec_index(p, execution_id, strlen(execution_id));
    if (i < 0)
        return;
    /* The answer this task follows: on a real broker the worker may have
     * the task, and have answered it, before the decider sees Kafka's
     * acknowledgement. */
    int64_t now = now_us(), sent = __atomic_load_n(&p->taken_us[i], __ATOMIC_ACQUIRE);
    if (sent == 0)
        return;
    sample(&p->total, now - sent);
    int64_t received = __atomic_load_n(&p->received_us[i], __ATOMIC_ACQUIRE);
    if (received >= sent)
        sample(&p->engine, now - received);
}

/* Sorts the samples; their p50 and p99 in ms. */
static void percentiles(samples_t *s, double *p50, double *p99)
{
    size_t n = s->n < s->cap ? s->n : s->cap;
    qsort(s->v, n, sizeof(double), cmp_double);
    *p50 = n ? s->v[n / 2] * 1000 : 0;
    *p99 = n ? s->v[(size_t)(n * 0.99)] * 1000 : 0;
}

/* CPU time, to show what a setting costs: this process's (the deciders,
 * swf-history, the worker and the mock cluster all run in it) and the
 * whole machine's busy time (PostgreSQL's included), from /proc/stat. */
typedef struct cpu {
    double self_s;
    double busy_s;
} cpu_t;

static cpu_t cpu_now(void)
{
    cpu_t c = {0};
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    c.self_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
               ru.ru_stime.tv_usec / 1e6;
    FILE *f = fopen("/proc/stat", "r");
    unsigned long long v[8] = {0};
    if (f != NULL) {
        if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]) != 8)
            memset(v, 0, sizeof(v));
        fclose(f);
    }
    /* user nice system idle iowait irq softirq steal: busy is all but idle and iowait */
    c.busy_s = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)sysconf(_SC_CLK_TCK);
    return c;
}

static void die(swf_error_t *err)
{
    bench_die("bench_steps", err);
}

/* Waits until the consumer groups have settled: every decider holds
 * inbox partitions, all of them together, and the worker its task
 * partitions (a join or a rebalance on the mock cluster takes seconds,
 * which are not steps). */
static void settle(swf_dev_t *dev, int deciders, rd_kafka_t *worker)
{
    double t0 = now_s();
    for (;;) {
        uint64_t sum = 0;
        bool each = true;
        for (int i = 0; i < deciders; i++) {
            swf_decider_stats_t st;
            swf_decider_stats(swf_dev_decider(dev, i), &st);
            sum += st.partitions;
            each = each && st.partitions > 0;
        }
        rd_kafka_topic_partition_list_t *mine = NULL;
        rd_kafka_message_t *m = rd_kafka_consumer_poll(worker, 100);
        if (m != NULL)
            rd_kafka_message_destroy(m);
        bool assigned = rd_kafka_assignment(worker, &mine) == 0 && mine->cnt > 0;
        if (mine != NULL)
            rd_kafka_topic_partition_list_destroy(mine);
        if (each && sum == INBOX_PARTITIONS && assigned)
            return;
        if (now_s() - t0 > 120) {
            fprintf(stderr, "bench_steps: the consumer groups did not settle in 120 s\n");
            exit(1);
        }
    }
}

/* On a real cluster: the inbox (of INBOX_PARTITIONS) and the dead letters,
 * before the deciders subscribe (the task topic is made below). */
static void ensure_topics(const char *brokers)
{
    swf_kafka_names_t names;
    swf_kafka_names_env(&names);
    rd_kafka_t *rk;
    die(swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = brokers}, &rk));
    die(swf_kafka_topic_ensure(rk, names.inbox, INBOX_PARTITIONS, 10000));
    die(swf_kafka_topic_ensure(rk, names.dlq, 1, 10000));
    swf_kafka_producer_free(rk);
}

int main(int argc, char **argv)
{
    int deciders = argc > 1 ? atoi(argv[1]) : 1;
    int execs = argc > 2 ? atoi(argv[2]) : 50;
    int steps = argc > 3 ? atoi(argv[3]) : 20;
    /* librdkafka's mock cluster holds every empty fetch for the whole
     * fetch.wait.max.ms, so that wait is added to each hop: 1 ms, the least
     * that does not spin. SWF_KAFKA_FETCH_WAIT_MS=0 takes the hold out, as a
     * real broker's long poll would, by making every idle consumer ask in a
     * loop (the cpu line shows what that costs). */
    setenv("SWF_KAFKA_FETCH_WAIT_MS", "1", 0);
    char def_text[1024];
    snprintf(def_text, sizeof(def_text),
             "{\"StartAt\":\"Work\",\"States\":{"
             "\"Work\":{\"Type\":\"Task\",\"Resource\":\"arn:aws:states:::activity:bench\","
             "  \"Next\":\"Inc\"},"
             "\"Inc\":{\"Type\":\"Pass\",\"Parameters\":{\"i.$\":\"States.MathAdd($.i, 1)\"},"
             "  \"Next\":\"Check\"},"
             "\"Check\":{\"Type\":\"Choice\",\"Choices\":[{\"Variable\":\"$.i\","
             "  \"NumericLessThan\":%d,\"Next\":\"Work\"}],\"Default\":\"Done\"},"
             "\"Done\":{\"Type\":\"Succeed\"}}}",
             steps);
    /* SWF_BENCH_NO_HISTORY=1 leaves swf-history out (nothing here needs
     * its timers, timeouts or republishing), to tell its periodic scans'
     * share of the machine from the path's own cost. */
    const char *no_history = getenv("SWF_BENCH_NO_HISTORY");
    size_t total = (size_t)execs * (size_t)steps, nlat = 0;
    published_t pub = {.answer_us = calloc((size_t)execs, sizeof(int64_t)),
                       .received_us = calloc((size_t)execs, sizeof(int64_t)),
                       .taken_us = calloc((size_t)execs, sizeof(int64_t)),
                       .execs = execs};
    samples_t *all[3] = {&pub.total, &pub.hop, &pub.engine};
    for (int k = 0; k < 3; k++)
        *all[k] = (samples_t){.v = calloc(total + 1, sizeof(double)), .cap = total + 1};
    /* SWF_BENCH_BROKERS=host:port: a real Kafka cluster instead of the mock
     * one (the topics are made here when missing). */
    const char *brokers = getenv("SWF_BENCH_BROKERS");
    if (brokers != NULL && brokers[0])
        ensure_topics(brokers);
    swf_dev_options_t opt = {.brokers = brokers != NULL && brokers[0] ? brokers : NULL,
                             .deciders = deciders,
                             .history_service = no_history == NULL || strcmp(no_history, "1") != 0,
                             .time_scale = 1,
                             .on_received = on_received,
                             .on_published = on_published,
                             .hook_arg = &pub};
    bench_rig_t rig;
    bench_rig_up("bench_steps", &opt, "Bench", def_text, &rig);
    swf_dev_t *dev = rig.dev;
    swf_history_store_t *store = rig.store;
    int version = rig.version;
    json_object *input = json_tokener_parse("{\"i\":0}");

    swf_kafka_names_t names;
    swf_kafka_names_env(&names);
    rd_kafka_t *producer, *consumer;
    die(swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = swf_dev_brokers(dev)},
                               &producer));
    char topic[256];
    swf_kafka_task_topic(&names, "bench", topic, sizeof(topic));
    die(swf_kafka_topic_ensure(producer, topic, names.task_partitions, 10000));
    die(swf_kafka_consumer_new(
        &(swf_kafka_consumer_config_t){.brokers = swf_dev_brokers(dev), .group = "bench-worker"},
        &consumer));
    const char *topics[1] = {topic};
    die(swf_kafka_subscribe(consumer, topics, 1));
    settle(dev, deciders, consumer);
    sleep((unsigned)(argc > 4 ? atoi(argv[4]) : 0));
    /* SWF_BENCH_BROKER_RTT_MS=N: every answer of the mock broker from now
     * on comes N ms late, like a broker across a network whose produce
     * acknowledgements wait for replicas. */
    const char *rtt = getenv("SWF_BENCH_BROKER_RTT_MS");
    int rtt_ms = rtt != NULL ? atoi(rtt) : 0;
    if (rtt_ms > 0 && rtt_ms <= 1000 && swf_dev_mock_cluster(dev) != NULL)
        rd_kafka_mock_broker_set_rtt(swf_dev_mock_cluster(dev), 1, rtt_ms);

    /* What the run costs, from before the starts to after the last close
     * (bench/cost.h). */
    bench_cost_t cost0, cost1;
    bench_cost_take(swf_dev_conninfo(dev), false, &cost0);
    /* Start every execution, then post decide for each. */
    json_object *sent_at = json_object_new_object(); /* execution -> answer time */
    double *lat = calloc(total + 1, sizeof(double));
    for (int i = 0; i < execs; i++) {
        char id[64];
        snprintf(id, sizeof(id), "bench-%d", i);
        swf_history_start_t st = {.execution_id = id,
                                  .state_machine = "Bench",
                                  .version = version,
                                  .input = input,
                                  .time_ms = swf_time_now_ms()};
        die(swf_history_pg_execution_start(store, &st, NULL));
        json_object *m = swf_msg_decide_new(NULL, id);
        const char *s = swf_json_str(m);
        swf_kafka_out_t o = {names.inbox, id, s, strlen(s), 0};
        die(swf_kafka_send(producer, &o, 1));
        json_object_put(m);
    }
    double t0 = now_s();
    cpu_t cpu0 = cpu_now();
    size_t answered = 0;
    /* The worker does not wait for Kafka's acknowledgement of one round of
     * answers before it takes the next tasks, as a fleet of workers would
     * not: up to RING rounds are in flight, and a round's slots are reused
     * only once it is acknowledged. */
    enum { BATCH = 512, RING = 8 };
    static swf_kafka_out_t ring[RING][BATCH];
    size_t ring_n[RING] = {0};
    json_object *docs[BATCH];
    char *keys[BATCH];
    int answering[BATCH]; /* the execution of each answer */
    double wait_s = 0, work_s = 0, send_s = 0;
    size_t rounds = 0;
    while (answered < total && now_s() - t0 < 600) {
        size_t n = 0;
        swf_kafka_out_t *outs = ring[rounds % RING];
        double tr = now_s();
        die(swf_kafka_send_wait(producer, outs, ring_n[rounds % RING]));
        ring_n[rounds % RING] = 0;
        send_s += now_s() - tr;
        double tw = now_s();
        rd_kafka_message_t *m = rd_kafka_consumer_poll(consumer, 100);
        double tk = now_s();
        wait_s += tk - tw;
        while (m != NULL) {
            swf_msg_t task;
            if (m->err == 0 && swf_msg_parse(m->payload, m->len, NULL, &task) == NULL) {
                json_object *v;
                double t = now_s();
                if (swf_json_get(sent_at, task.execution_id, &v))
                    lat[nlat++] = t - json_object_get_double(v);
                docs[n] = swf_msg_activity_completed_new(task.task_token, task.input, "bench");
                int x = atoi(task.execution_id + strlen("bench-"));
                if (x >= 0 && x < execs)
                    answering[n] = x;
                keys[n] = strdup(task.execution_id);
                const char *s = swf_json_str(docs[n]);
                outs[n] = (swf_kafka_out_t){names.inbox, keys[n], s, strlen(s), 0};
                n++;
                swf_msg_clear(&task);
            }
            rd_kafka_message_destroy(m);
            if (n == BATCH)
                break;
            m = rd_kafka_consumer_poll(consumer, 0);
        }
        if (n == 0)
            continue;
        ring_n[rounds % RING] = n;
        rounds++;
        double ts = now_s();
        work_s += ts - tk;
        int64_t ts_us = now_us();
        for (size_t i = 0; i < n; i++)
            __atomic_store_n(&pub.answer_us[answering[i]], ts_us, __ATOMIC_RELEASE);
        swf_kafka_send_start(producer, outs, n);
        rd_kafka_poll(producer, 0); /* delivery reports of the rounds before */
        double t = now_s();
        send_s += t - ts;
        for (size_t i = 0; i < n; i++) {
            json_object_object_add(sent_at, keys[i], json_object_new_double(ts));
            json_object_put(docs[i]);
            free(keys[i]);
        }
        answered += n;
        rd_kafka_commit(consumer, NULL, 1);
    }
    for (size_t r = 0; r < RING; r++)
        die(swf_kafka_send_wait(producer, ring[r], ring_n[r]));
    /* Wait for the last decisions to close the executions. */
    for (int i = 0; i < execs; i++) {
        char id[64];
        snprintf(id, sizeof(id), "bench-%d", i);
        for (int k = 0; k < 6000; k++) {
            swf_history_execution_t ex;
            die(swf_history_pg_execution_describe(store, id, &ex));
            bool open = strcmp(ex.status, "open") == 0;
            swf_history_execution_free(&ex);
            if (!open)
                break;
            usleep(10000);
        }
    }
    double secs = now_s() - t0;
    cpu_t cpu1 = cpu_now();
    bench_cost_take(swf_dev_conninfo(dev), true, &cost1);
    qsort(lat, nlat, sizeof(double), cmp_double);
    swf_history_execution_t ex;
    die(swf_history_pg_execution_describe(store, "bench-0", &ex));
    double p50, p99, hop50, hop99, own50, own99;
    percentiles(&pub.total, &p50, &p99);
    percentiles(&pub.hop, &hop50, &hop99);
    percentiles(&pub.engine, &own50, &own99);
    printf("deciders %d, executions %d x %d steps (history %lld events): %zu steps in %.2f s = "
           "%.0f steps/s; answer -> next task published p50 %.2f ms, p99 %.2f ms; -> received "
           "by the worker p50 %.2f ms, p99 %.2f ms\n",
           deciders, execs, steps, (long long)ex.last_event_id, answered, secs, answered / secs,
           p50, p99, nlat ? lat[nlat / 2] * 1000 : 0, nlat ? lat[(size_t)(nlat * 0.99)] * 1000 : 0);
    swf_history_execution_free(&ex);
    printf("  the step's two parts: answer -> the decider has it (the broker hop) p50 %.2f ms, "
           "p99 %.2f ms; the decider has it -> task published p50 %.2f ms, p99 %.2f ms\n",
           hop50, hop99, own50, own99);
    printf("  cpu: this process %.2f cores, the machine %.2f of %ld cores busy (fetch wait %s ms, "
           "broker rtt %d ms)\n",
           (cpu1.self_s - cpu0.self_s) / secs, (cpu1.busy_s - cpu0.busy_s) / secs,
           sysconf(_SC_NPROCESSORS_ONLN), getenv("SWF_KAFKA_FETCH_WAIT_MS"), rtt_ms);
    bench_cost_print(&cost0, &cost1, (double)answered);
    printf("  worker: %zu rounds; waiting %.2f s, answering %.2f s, sending %.2f s\n", rounds,
           wait_s, work_s, send_s);
    for (int i = 0; i < deciders; i++) {
        swf_decider_stats_t st;
        swf_decider_stats(swf_dev_decider(dev, i), &st);
        printf("  decider %d: %llu batches, %llu messages, %llu tasks published, %llu ignored, "
               "%llu conflicts, cache %llu hits %llu misses\n",
               i, (unsigned long long)st.batches, (unsigned long long)st.messages,
               (unsigned long long)st.tasks_published, (unsigned long long)st.ignored,
               (unsigned long long)st.conflicts, (unsigned long long)st.cache_hits,
               (unsigned long long)st.cache_misses);
        double nb = st.batches ? (double)st.batches * 1000.0 : 1;
        printf("    per batch ms: gather %.2f, decide %.2f, append %.2f, publish %.2f, outbox "
               "%.2f, commit %.2f\n",
               st.gather_us / nb, st.decide_us / nb, st.append_us / nb, st.publish_us / nb,
               st.outbox_us / nb, st.commit_us / nb);
    }
    rd_kafka_consumer_close(consumer);
    rd_kafka_destroy(consumer);
    rd_kafka_destroy(producer);
    free(lat);
    for (int k = 0; k < 3; k++)
        free(all[k]->v);
    free(pub.answer_us);
    free(pub.received_us);
    free(pub.taken_us);
    json_object_put(sent_at);
    json_object_put(input);
    bench_rig_down(&rig);
    return 0;
}
