/*
 * test_consumer.c - kafka/consumer.c against librdkafka's mock cluster:
 * batches, commits, topics that do not exist yet, the settings swf relies
 * on, and a close that ends within its bound when Kafka does not answer.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "protocol/bounded.h"
#include "tests/kafka/fixture.h"

static rd_kafka_t *consumer_of(fx_kafka_t *k, const char *group, const char *topic)
{
    rd_kafka_t *c = NULL;
    kt_check(swf_kafka_consumer_new(
        &(swf_kafka_consumer_config_t){.brokers = k->brokers, .group = group}, &c));
    const char *topics[1] = {topic};
    kt_check(swf_kafka_subscribe(c, topics, 1));
    return c;
}

/* Takes messages until n came (bounded: 60 s). */
static size_t take(rd_kafka_t *c, rd_kafka_message_t **out, size_t n)
{
    size_t got = 0;
    for (int64_t until = kt_mono_ms() + 60000; got < n && kt_mono_ms() < until;) {
        swf_error_t *err = NULL;
        got += swf_kafka_poll(c, 200, 50, out + got, n - got, &err);
        kt_check(err);
    }
    return got;
}

Test(kafka_consumer, a_batch_is_taken_and_committed_past_its_last_message)
{
    fx_kafka_t k;
    fx_kafka_start(&k, "c");
    for (int i = 0; i < 5; i++)
        fx_publish(&k, "swf.inbox", "e", "{}");
    rd_kafka_t *c = consumer_of(&k, "g-batch", "swf.inbox");
    rd_kafka_message_t *m[5];
    cr_assert_eq(take(c, m, 5), 5);
    for (int i = 0; i < 5; i++)
        cr_expect_eq(m[i]->offset, i, "in order, from the earliest offset of a new group");
    kt_check(swf_kafka_commit(c, m, 5, false));
    for (int i = 0; i < 5; i++)
        rd_kafka_message_destroy(m[i]);
    cr_assert(swf_kafka_consumer_close(c, SWF_KAFKA_CLOSE_MS, NULL, NULL, NULL));
    cr_expect_eq(fx_committed(&k, "g-batch", "swf.inbox", 0), 5);
    fx_kafka_stop(&k);
}

Test(kafka_consumer, a_poll_stops_at_its_batch_size_and_leaves_the_rest)
{
    fx_kafka_t k;
    fx_kafka_start(&k, "c");
    for (int i = 0; i < 3; i++)
        fx_publish(&k, "swf.inbox", "e", "{}");
    rd_kafka_t *c = consumer_of(&k, "g-size", "swf.inbox");
    rd_kafka_message_t *m[3];
    cr_assert_eq(take(c, m, 2), 2);
    cr_assert_eq(take(c, m + 2, 1), 1);
    cr_expect_eq(m[2]->offset, 2);
    for (int i = 0; i < 3; i++)
        rd_kafka_message_destroy(m[i]);
    cr_assert(swf_kafka_consumer_close(c, SWF_KAFKA_CLOSE_MS, NULL, NULL, NULL));
    fx_kafka_stop(&k);
}

/* A worker may start before the first task of its list made the topic. */
Test(kafka_consumer, a_topic_that_does_not_exist_yet_is_no_error)
{
    fx_kafka_t k;
    fx_kafka_start(&k, "c");
    rd_kafka_t *c = consumer_of(&k, "g-none", "swf.tasks.nobody");
    rd_kafka_message_t *m[1];
    for (int64_t until = kt_mono_ms() + 3000; kt_mono_ms() < until;) {
        swf_error_t *err = NULL;
        cr_assert_eq(swf_kafka_poll(c, 200, 0, m, 1, &err), 0);
        cr_assert_null(err, "%s", err ? swf_error_message(err) : "");
    }
    cr_assert(swf_kafka_consumer_close(c, SWF_KAFKA_CLOSE_MS, NULL, NULL, NULL));
    fx_kafka_stop(&k);
}

Test(kafka_consumer, the_settings_swf_relies_on_are_set)
{
    setenv("SWF_KAFKA_FETCH_WAIT_MS", "7", 1);
    setenv("SWF_KAFKA_SESSION_TIMEOUT_MS", "6000", 1);
    rd_kafka_t *c = NULL;
    swf_kafka_consumer_config_t cfg = {.brokers = "127.0.0.1:1", .group = "g"};
    kt_check(swf_kafka_consumer_new(&cfg, &c));
    kt_expect_setting(c, "enable.auto.commit", "false");
    kt_expect_setting(c, "auto.offset.reset", "smallest");
    kt_expect_setting(c, "fetch.wait.max.ms", "7");
    kt_expect_setting(c, "session.timeout.ms", "6000");
    kt_expect_setting(c, "heartbeat.interval.ms", "1500");
    kt_expect_setting(c, "allow.auto.create.topics", "false");
    rd_kafka_destroy(c);
    /* The caller's own session timeout wins; the heartbeat stays at
     * librdkafka's 3 s for a long one. */
    cfg.session_timeout_ms = 60000;
    kt_check(swf_kafka_consumer_new(&cfg, &c));
    kt_expect_setting(c, "session.timeout.ms", "60000");
    kt_expect_setting(c, "heartbeat.interval.ms", "3000");
    rd_kafka_destroy(c);
}

static void mark(void *arg)
{
    *(int *)arg += 1;
}

Test(kafka_consumer, the_first_step_of_a_close_runs_before_it)
{
    fx_kafka_t k;
    fx_kafka_start(&k, "c");
    rd_kafka_t *c = consumer_of(&k, "g-first", "swf.inbox");
    int marks = 0;
    cr_assert(swf_kafka_consumer_close(c, SWF_KAFKA_CLOSE_MS, mark, mark, &marks));
    cr_expect_eq(marks, 1, "first ran, late did not (the close ended in time)");
    fx_kafka_stop(&k);
}

/* librdkafka's close waits without limit for the group coordinator; a
 * broker that answers nothing in time (a round trip of 100 s, beyond the
 * 60 s request timeout) must not keep a process from stopping. */
Test(kafka_consumer, a_close_ends_within_its_bound_when_kafka_does_not_answer)
{
    fx_kafka_t k;
    fx_kafka_start(&k, "c");
    fx_publish(&k, "swf.inbox", "e", "{}");
    rd_kafka_t *c = consumer_of(&k, "g-slow", "swf.inbox");
    rd_kafka_message_t *m[1];
    cr_assert_eq(take(c, m, 1), 1, "the group never formed");
    rd_kafka_message_destroy(m[0]);
    cr_assert_eq(rd_kafka_mock_broker_set_rtt(k.mock, 1, 100000), 0);
    int marks = 0;
    int64_t t0 = kt_mono_ms();
    bool ended = swf_kafka_consumer_close(c, 2000, NULL, mark, &marks);
    int64_t took = kt_mono_ms() - t0;
    cr_assert_not(ended, "a close that Kafka never confirmed reported success");
    cr_expect_lt(took, 30000, "a hang guard: %lld ms", (long long)took);
    /* The broker answers again and drops its connections, so the held
     * requests are sent again: the abandoned close ends, and runs `late`. */
    cr_assert_eq(rd_kafka_mock_broker_set_rtt(k.mock, 1, 0), 0);
    cr_assert_eq(rd_kafka_mock_broker_set_down(k.mock, 1), 0);
    cr_assert_eq(rd_kafka_mock_broker_set_up(k.mock, 1), 0);
    cr_assert(swf_bounded_wait_abandoned(60000), "the abandoned close never ended");
    cr_expect_eq(marks, 1, "late ran once the close ended");
    fx_kafka_stop(&k);
}
