/*
 * test_producer.c - kafka/producer.c against librdkafka's mock cluster:
 * sends wait for every delivery report, a callback gets each one, the
 * protocol's size bound holds before Kafka sees a message, a keyed message
 * lands on the partition Kafka's Java client would choose, and a cluster
 * out of reach is a retriable failure within the send timeout.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tests/kafka/fixture.h"

Test(kafka_producer, a_send_returns_once_every_message_is_acknowledged)
{
    fx_kafka_t k;
    fx_kafka_start(&k, "p");
    rd_kafka_t *p = NULL;
    kt_check(swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = k.brokers}, &p));
    swf_kafka_out_t outs[3] = {{"swf.inbox", "e1", "{\"n\":1}", 7, 0},
                               {"swf.inbox", "e2", "{\"n\":2}", 7, 0},
                               {"swf.inbox", NULL, "{\"n\":3}", 7, 0}};
    kt_check(swf_kafka_send(p, outs, 3));
    for (int i = 0; i < 3; i++)
        cr_expect_eq(outs[i].result, RD_KAFKA_RESP_ERR_NO_ERROR);
    rd_kafka_t *r = fx_reader(&k, "swf.inbox", 1);
    for (int i = 1; i <= 3; i++) {
        json_object *m = fx_read(r, 30000, NULL);
        cr_assert_not_null(m, "message %d never arrived", i);
        cr_expect_eq(json_object_get_int(json_object_object_get(m, "n")), i);
        json_object_put(m);
    }
    fx_reader_free(r);
    swf_kafka_producer_free(p);
    fx_kafka_stop(&k);
}

Test(kafka_producer, a_message_over_the_protocols_bound_never_reaches_kafka)
{
    fx_kafka_t k;
    fx_kafka_start(&k, "p");
    rd_kafka_t *p = NULL;
    kt_check(swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = k.brokers}, &p));
    size_t n = SWF_MSG_MAX_BYTES + 1;
    char *big = malloc(n);
    cr_assert_not_null(big);
    memset(big, 'a', n);
    swf_error_t *err = swf_kafka_produce(p, "swf.inbox", "e", big, n, NULL);
    cr_assert_not_null(err);
    cr_expect_eq(swf_error_code(err), SWF_E_LIMIT);
    cr_expect_not(swf_error_retriable(err));
    swf_error_free(err);
    swf_kafka_out_t out = {"swf.inbox", "e", big, n, 0};
    err = swf_kafka_send(p, &out, 1);
    cr_assert_not_null(err);
    cr_expect_eq(swf_error_code(err), SWF_E_LIMIT);
    cr_expect_eq(out.result, RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE);
    swf_error_free(err);
    /* Exactly the bound goes (librdkafka's own default limit is lower). */
    out.len = SWF_MSG_MAX_BYTES;
    kt_check(swf_kafka_send(p, &out, 1));
    free(big);
    swf_kafka_producer_free(p);
    fx_kafka_stop(&k);
}

typedef struct reports {
    int n;
    void *opaques[4];
    rd_kafka_resp_err_t results[4];
} reports_t;

static void on_delivery(void *ctx, void *msg_opaque, rd_kafka_resp_err_t result)
{
    reports_t *r = ctx;
    if (r->n < 4) {
        r->opaques[r->n] = msg_opaque;
        r->results[r->n] = result;
    }
    r->n++;
}

Test(kafka_producer, a_callback_gets_each_report_with_its_message_opaque)
{
    fx_kafka_t k;
    fx_kafka_start(&k, "p");
    reports_t r = {0};
    int a, b;
    swf_kafka_producer_config_t cfg = {
        .brokers = k.brokers, .idempotent = true, .on_delivery = on_delivery, .ctx = &r};
    rd_kafka_t *p = NULL;
    kt_check(swf_kafka_producer_new(&cfg, &p));
    kt_check(swf_kafka_produce(p, "swf.inbox", "e", "1", 1, &a));
    kt_check(swf_kafka_produce(p, "swf.inbox", "e", "2", 1, &b));
    for (int64_t until = kt_mono_ms() + 30000; r.n < 2 && kt_mono_ms() < until;)
        rd_kafka_poll(p, 100);
    cr_assert_eq(r.n, 2);
    cr_expect_eq(r.opaques[0], &a, "one partition, one producer: reports in order");
    cr_expect_eq(r.opaques[1], &b);
    cr_expect_eq(r.results[0], RD_KAFKA_RESP_ERR_NO_ERROR);
    cr_expect_eq(r.results[1], RD_KAFKA_RESP_ERR_NO_ERROR);
    swf_kafka_producer_free(p);
    fx_kafka_stop(&k);
}

Test(kafka_producer, the_settings_swf_relies_on_are_set)
{
    setenv("SWF_KAFKA_SEND_TIMEOUT_MS", "4000", 1);
    rd_kafka_t *p = NULL;
    kt_check(swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = "127.0.0.1:1"}, &p));
    kt_expect_setting(p, "acks", "-1");
    kt_expect_setting(p, "enable.idempotence", "false");
    kt_expect_setting(p, "message.timeout.ms", "4000");
    kt_expect_setting(p, "socket.nagle.disable", "true");
    swf_kafka_producer_free(p);
    swf_kafka_producer_config_t cfg = {
        .brokers = "127.0.0.1:1", .client_id = "me", .idempotent = true, .send_timeout_ms = 9000};
    kt_check(swf_kafka_producer_new(&cfg, &p));
    kt_expect_setting(p, "enable.idempotence", "true");
    kt_expect_setting(p, "message.timeout.ms", "9000");
    kt_expect_setting(p, "client.id", "me");
    swf_kafka_producer_free(p);
}

Test(kafka_producer, a_cluster_out_of_reach_fails_retriably_within_the_send_timeout)
{
    swf_kafka_producer_config_t cfg = {.brokers = "127.0.0.1:1", .send_timeout_ms = 1000};
    rd_kafka_t *p = NULL;
    kt_check(swf_kafka_producer_new(&cfg, &p));
    swf_kafka_out_t out = {"swf.inbox", "e", "{}", 2, 0};
    int64_t t0 = kt_mono_ms();
    swf_error_t *err = swf_kafka_send(p, &out, 1);
    int64_t took = kt_mono_ms() - t0;
    cr_assert_not_null(err);
    cr_expect_eq(swf_error_code(err), SWF_E_KAFKA);
    cr_expect(swf_error_retriable(err), "%s", swf_error_message(err));
    cr_expect_neq(out.result, RD_KAFKA_RESP_ERR_NO_ERROR);
    cr_expect_lt(took, 30000, "a hang guard: %lld ms", (long long)took);
    swf_error_free(err);
    swf_kafka_producer_free(p);
}

/*
 * Kafka's murmur2 (org.apache.kafka.common.utils.Utils.murmur2), written
 * here from the Java client rather than taken from librdkafka, and the
 * Java default partitioner's choice for a key: toPositive(hash) % n.
 */
static int32_t java_murmur2(const unsigned char *data, size_t len)
{
    const uint32_t m = 0x5bd1e995;
    uint32_t h = 0x9747b28c ^ (uint32_t)len;
    size_t i = 0;
    for (; i + 4 <= len; i += 4) {
        uint32_t k = (uint32_t)data[i] | (uint32_t)data[i + 1] << 8 | (uint32_t)data[i + 2] << 16 |
                     (uint32_t)data[i + 3] << 24;
        k *= m;
        k ^= k >> 24;
        k *= m;
        h *= m;
        h ^= k;
    }
    switch (len - i) {
    case 3:
        h ^= (uint32_t)data[i + 2] << 16; /* fall through */
    case 2:
        h ^= (uint32_t)data[i + 1] << 8; /* fall through */
    case 1:
        h ^= data[i];
        h *= m;
    }
    h ^= h >> 13;
    h *= m;
    h ^= h >> 15;
    return (int32_t)h;
}

static int java_partition(const char *key, int partitions)
{
    return (int)((uint32_t)java_murmur2((const unsigned char *)key, strlen(key)) & 0x7fffffff) %
           partitions;
}

Test(kafka_producer, the_murmur2_of_this_test_is_the_java_clients)
{
    /* The vectors of Kafka's UtilsTest.testMurmur2. */
    const struct {
        const char *key;
        int32_t hash;
    } cases[] = {{"21", -973932308},
                 {"foobar", -790332482},
                 {"a-little-bit-long-string", -985981536},
                 {"a-little-bit-longer-string", -1486304829},
                 {"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971},
                 {"abc", 479470107}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        cr_expect_eq(java_murmur2((const unsigned char *)cases[i].key, strlen(cases[i].key)),
                     cases[i].hash, "%s", cases[i].key);
}

Test(kafka_producer, a_keyed_message_lands_where_the_java_client_would_put_it)
{
    fx_kafka_t k;
    fx_kafka_start(&k, "p");
    enum { PARTS = 4 };
    cr_assert_eq(rd_kafka_mock_topic_create(k.mock, "swf.tasks.four", PARTS, 1), 0);
    rd_kafka_t *p = NULL;
    kt_check(swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = k.brokers}, &p));
    kt_expect_setting(p, "partitioner", "murmur2_random");
    enum { N = 32 };
    char keys[N][40];
    swf_kafka_out_t outs[N];
    int per_partition[PARTS] = {0};
    for (int i = 0; i < N; i++) {
        snprintf(keys[i], sizeof(keys[i]), "exec-%d-%08x", i, (unsigned)(i * 2654435761u));
        outs[i] = (swf_kafka_out_t){"swf.tasks.four", keys[i], "{}", 2, 0};
        per_partition[java_partition(keys[i], PARTS)]++;
    }
    for (int i = 0; i < PARTS; i++)
        cr_assert_gt(per_partition[i], 0, "the keys should cover every partition");
    kt_check(swf_kafka_send(p, outs, N));
    rd_kafka_t *r = fx_reader(&k, "swf.tasks.four", PARTS);
    int seen = 0;
    for (int waited = 0; seen < N && waited < 30000; waited += 200) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(r, 200);
        if (m == NULL)
            continue;
        if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
            char key[40];
            snprintf(key, sizeof(key), "%.*s", (int)m->key_len, (const char *)m->key);
            cr_expect_eq(m->partition, java_partition(key, PARTS), "%s", key);
            seen++;
        }
        rd_kafka_message_destroy(m);
    }
    cr_expect_eq(seen, N);
    fx_reader_free(r);
    swf_kafka_producer_free(p);
    fx_kafka_stop(&k);
}
