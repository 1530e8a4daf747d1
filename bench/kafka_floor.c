/*
 * bench_kafka_floor - the latency floor of librdkafka's mock cluster, with
 * the producer and consumer configurations every swf process uses
 * (decider/kafka.c).
 *
 * usage: bench_kafka_floor [ROUNDS]
 *
 * It measures, one message at a time: (1) produce -> delivery report (what
 * a synchronous publish waits for), (2) produce -> the message consumed by
 * a consumer assigned to its partition (what one hop of a step costs:
 * worker answer -> decider, or decider task -> worker), also produced at a
 * random moment of the consumer's fetch cycle, and (3) a batch of
 * 200 messages over 4 partitions produced -> all acknowledged. A step of
 * bench_steps crosses two hops and one acknowledged publish, so these
 * figures bound from below what bench_steps can show on this cluster.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kafka/kafka.h"

#include <librdkafka/rdkafka_mock.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void die(swf_error_t *err)
{
    if (err != NULL) {
        fprintf(stderr, "bench_kafka_floor: %s\n", swf_error_message(err));
        exit(1);
    }
}

static void report(const char *what, double *v, size_t n)
{
    qsort(v, n, sizeof(*v), cmp_double);
    printf("%-44s p50 %6.2f ms  p99 %6.2f ms  max %6.2f ms  (%zu)\n", what, v[n / 2],
           v[(size_t)(n * 0.99)], v[n - 1], n);
}

/* Consumes until the message whose payload is `want` arrives. */
static void consume_until(rd_kafka_t *consumer, const char *want)
{
    double t0 = now_ms();
    while (now_ms() - t0 < 10000) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(consumer, 100);
        if (m == NULL)
            continue;
        bool hit = m->err == 0 && m->len == strlen(want) && memcmp(m->payload, want, m->len) == 0;
        rd_kafka_message_destroy(m);
        if (hit)
            return;
    }
    fprintf(stderr, "bench_kafka_floor: message %s never arrived\n", want);
    exit(1);
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 1000;
    if (rounds < 10)
        rounds = 10;
    char errstr[256];
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "log_level", "0", errstr, sizeof(errstr));
    /* The mock brokers' sockets take this handle's setting: with Nagle on,
     * a produce answer that follows another waits for a delayed ACK (40 ms).
     * SWF_FLOOR_MOCK_NAGLE=1 keeps it on, to show that. */
    const char *nagle = getenv("SWF_FLOOR_MOCK_NAGLE");
    if (nagle == NULL || strcmp(nagle, "1") != 0)
        rd_kafka_conf_set(conf, "socket.nagle.disable", "true", errstr, sizeof(errstr));
    rd_kafka_t *mock_rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr, sizeof(errstr));
    rd_kafka_mock_cluster_t *mock = mock_rk ? rd_kafka_mock_cluster_new(mock_rk, 1) : NULL;
    if (mock == NULL) {
        fprintf(stderr, "bench_kafka_floor: no mock cluster: %s\n", errstr);
        return 1;
    }
    const char *brokers = rd_kafka_mock_cluster_bootstraps(mock);
    rd_kafka_mock_topic_create(mock, "floor", 4, 1);

    rd_kafka_t *producer, *consumer;
    die(swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = brokers}, &producer));
    die(swf_kafka_topic_ensure(producer, "floor", 4, 10000));
    die(swf_kafka_consumer_new(&(swf_kafka_consumer_config_t){.brokers = brokers, .group = "floor"},
                               &consumer));
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(4);
    for (int p = 0; p < 4; p++)
        rd_kafka_topic_partition_list_add(l, "floor", p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    rd_kafka_assign(consumer, l);
    rd_kafka_topic_partition_list_destroy(l);

    double *v = calloc((size_t)rounds, sizeof(*v));
    char payload[64];
    /* Warm up: connections, metadata, the consumer's first fetches. */
    for (int i = 0; i < 20; i++) {
        snprintf(payload, sizeof(payload), "warm-%d", i);
        swf_kafka_out_t o = {"floor", "k", payload, strlen(payload), 0};
        die(swf_kafka_send(producer, &o, 1));
        consume_until(consumer, payload);
    }

    for (int i = 0; i < rounds; i++) {
        snprintf(payload, sizeof(payload), "ack-%d", i);
        swf_kafka_out_t o = {"floor", "k", payload, strlen(payload), 0};
        double t = now_ms();
        die(swf_kafka_send(producer, &o, 1));
        v[i] = now_ms() - t;
    }
    report("produce -> acknowledged (1 message)", v, (size_t)rounds);
    for (int i = 0; i < 100; i++) { /* drain what the consumer has not seen */
        rd_kafka_message_t *m = rd_kafka_consumer_poll(consumer, 0);
        if (m != NULL)
            rd_kafka_message_destroy(m);
    }
    consume_until(consumer, payload);

    for (int i = 0; i < rounds; i++) {
        snprintf(payload, sizeof(payload), "hop-%d", i);
        swf_kafka_out_t o = {"floor", "k", payload, strlen(payload), 0};
        double t = now_ms();
        die(swf_kafka_send(producer, &o, 1));
        consume_until(consumer, payload);
        v[i] = now_ms() - t;
    }
    report("produce -> consumed (1 message, one hop)", v, (size_t)rounds);

    /* The same hop with the produce at a random moment (0-3 ms after the
     * last message was consumed), so it lands anywhere in the consumer's
     * fetch cycle. Were the mock broker's hold of an empty fetch only
     * "fetch.wait.max.ms", this would average half of it; it stays near
     * the whole, because a request that reaches the mock broker during the
     * hold (here the produce; one to another topic does it too) delays the
     * held answer: at a 1 ms wait it comes ~1.2 ms after the produce (the
     * mock's thread seems to sleep in whole milliseconds; see
     * bench/README.md, "Why a hop costs the whole fetch wait"). */
    srand(1);
    for (int i = 0; i < rounds; i++) {
        snprintf(payload, sizeof(payload), "late-%d", i);
        swf_kafka_out_t o = {"floor", "k", payload, strlen(payload), 0};
        usleep((useconds_t)(rand() % 3000));
        double t = now_ms();
        die(swf_kafka_send(producer, &o, 1));
        consume_until(consumer, payload);
        v[i] = now_ms() - t;
    }
    report("... produced at a random moment", v, (size_t)rounds);

    enum { BATCH = 200 };
    swf_kafka_out_t outs[BATCH];
    char keys[BATCH][16], bodies[BATCH][32];
    int batches = rounds / 10;
    for (int b = 0; b < batches; b++) {
        for (int i = 0; i < BATCH; i++) {
            snprintf(keys[i], sizeof(keys[i]), "k%d", i);
            snprintf(bodies[i], sizeof(bodies[i]), "batch-%d-%d", b, i);
            outs[i] = (swf_kafka_out_t){"floor", keys[i], bodies[i], strlen(bodies[i]), 0};
        }
        double t = now_ms();
        die(swf_kafka_send(producer, outs, BATCH));
        v[b] = now_ms() - t;
    }
    report("produce -> acknowledged (200 messages)", v, (size_t)batches);

    free(v);
    rd_kafka_consumer_close(consumer);
    rd_kafka_destroy(consumer);
    rd_kafka_destroy(producer);
    rd_kafka_mock_cluster_destroy(mock);
    rd_kafka_destroy(mock_rk);
    return 0;
}
