/*
 * test_topic.c - kafka/topic.c against librdkafka's mock cluster: a topic
 * is made on demand, and the poster publishes protocol messages into
 * topics it makes first, saying which went.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "tests/kafka/fixture.h"

/* The partitions of a topic, from the cluster's metadata. */
static int partitions_of(rd_kafka_t *rk, const char *topic)
{
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_topic_t *t = rd_kafka_topic_new(rk, topic, NULL);
    cr_assert_eq(rd_kafka_metadata(rk, 0, t, &md, 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
    cr_assert_eq(md->topics[0].err, RD_KAFKA_RESP_ERR_NO_ERROR, "%s", topic);
    int n = md->topics[0].partition_cnt;
    rd_kafka_metadata_destroy(md);
    rd_kafka_topic_destroy(t);
    return n;
}

Test(kafka_topic, ensure_accepts_a_topic_that_exists_and_makes_one_that_does_not)
{
    fx_kafka_t k;
    fx_kafka_start(&k, "t");
    rd_kafka_t *p = NULL;
    kt_check(swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = k.brokers}, &p));
    kt_check(swf_kafka_topic_ensure(p, "swf.inbox", 4, 10000));
    kt_check(swf_kafka_topic_ensure(p, "swf.tasks.made-here", 3, 10000));
    /* The mock cluster has no CreateTopics: its own count, not 3. */
    cr_expect_gt(partitions_of(p, "swf.tasks.made-here"), 0);
    swf_kafka_producer_free(p);
    fx_kafka_stop(&k);
}

Test(kafka_topic, the_poster_makes_its_topics_and_says_what_went)
{
    fx_kafka_t k;
    fx_kafka_start(&k, "t");
    rd_kafka_t *p = NULL;
    kt_check(swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = k.brokers}, &p));
    swf_kafka_poster_t *poster = swf_kafka_poster_new(p, 2);
    swf_msg_post_t posts[2] = {{"swf.tasks.fresh", "e1", "{\"n\":1}", 7, false},
                               {"swf.inbox", "e2", "{\"n\":2}", 7, false}};
    swf_msg_send_fn send = swf_kafka_poster_send; /* what history/service.h takes */
    kt_check(send(poster, posts, 2));
    cr_expect(posts[0].sent);
    cr_expect(posts[1].sent);
    rd_kafka_t *r = fx_reader(&k, "swf.tasks.fresh", partitions_of(p, "swf.tasks.fresh"));
    json_object *m = fx_read(r, 30000, NULL);
    cr_assert_not_null(m, "the message to the new topic never arrived");
    cr_expect_eq(json_object_get_int(json_object_object_get(m, "n")), 1);
    json_object_put(m);
    fx_reader_free(r);
    swf_kafka_poster_free(poster);
    swf_kafka_producer_free(p);
    fx_kafka_stop(&k);
}

Test(kafka_topic, a_lookup_finds_a_topic_and_says_when_the_cluster_does_not_answer)
{
    fx_kafka_t k;
    fx_kafka_start(&k, "t");
    /* A producer that has not met the topic yet (the mock cluster makes a
     * topic on its first metadata request). */
    rd_kafka_t *fresh = NULL;
    kt_check(swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = k.brokers}, &fresh));
    cr_expect(swf_kafka_topic_lookup(fresh, "swf.inbox", 10000));
    cr_expect_gt(partitions_of(fresh, "swf.inbox"), 0);
    swf_kafka_out_t out = {"swf.inbox", "e1", "{\"n\":1}", 7, RD_KAFKA_RESP_ERR_NO_ERROR};
    kt_check(swf_kafka_send(fresh, &out, 1));
    swf_kafka_producer_free(fresh);
    fx_kafka_stop(&k);

    /* Nothing listens there: false once the wait is over, no hang. */
    rd_kafka_t *lone = NULL;
    kt_check(
        swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = "127.0.0.1:1"}, &lone));
    cr_expect(!swf_kafka_topic_lookup(lone, "swf.inbox", 300));
    rd_kafka_purge(lone, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
    swf_kafka_producer_free(lone);
}
