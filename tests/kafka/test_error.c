/*
 * test_error.c - kafka/error.c: librdkafka's codes become swf_error_t in
 * one place, with one list of the codes a retry can help.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "kafka/kafka.h"

/* Outages, moves and busy clusters pass by themselves: each code of the
 * list, from the decider's list and the worker's of before. */
Test(kafka_error, what_passes_by_itself_is_retriable)
{
    const rd_kafka_resp_err_t codes[] = {
        RD_KAFKA_RESP_ERR__TIMED_OUT,
        RD_KAFKA_RESP_ERR__MSG_TIMED_OUT,
        RD_KAFKA_RESP_ERR__TRANSPORT,
        RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN,
        RD_KAFKA_RESP_ERR__QUEUE_FULL,
        RD_KAFKA_RESP_ERR__WAIT_COORD,
        RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC,
        RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION,
        RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT,
        RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION,
        RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART,
        RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE,
        RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
        RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS,
        RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE,
        RD_KAFKA_RESP_ERR_NOT_COORDINATOR,
        RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS,
        RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS,
    };
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        cr_expect(swf_kafka_retriable(codes[i]), "%s", rd_kafka_err2name(codes[i]));
        swf_error_t *err = swf_kafka_error(codes[i], "send");
        cr_expect(swf_error_retriable(err), "%s", rd_kafka_err2name(codes[i]));
        cr_expect_eq(swf_error_code(err), SWF_E_KAFKA);
        swf_error_free(err);
    }
}

/* A request that is wrong is wrong again the next time. */
Test(kafka_error, a_wrong_request_is_not_retriable)
{
    const rd_kafka_resp_err_t codes[] = {
        RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
        RD_KAFKA_RESP_ERR_INVALID_CONFIG,
        RD_KAFKA_RESP_ERR__INVALID_ARG,
        RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE,
        RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION,
        RD_KAFKA_RESP_ERR__FATAL,
    };
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
        cr_expect_not(swf_kafka_retriable(codes[i]), "%s", rd_kafka_err2name(codes[i]));
        swf_error_t *err = swf_kafka_error(codes[i], "send");
        cr_expect_not(swf_error_retriable(err), "%s", rd_kafka_err2name(codes[i]));
        swf_error_free(err);
    }
}

Test(kafka_error, says_what_was_done_and_names_the_code)
{
    swf_error_t *err = swf_kafka_error(RD_KAFKA_RESP_ERR__TRANSPORT, "produce to swf.inbox");
    cr_expect_eq(strncmp(swf_error_message(err), "produce to swf.inbox: ", 22), 0, "%s",
                 swf_error_message(err));
    cr_expect_str_eq(swf_error_cause(err), "_TRANSPORT");
    swf_error_free(err);
}

Test(kafka_error, a_message_too_large_is_a_limit_error)
{
    swf_error_t *err = swf_kafka_error(RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE, "send");
    cr_expect_eq(swf_error_code(err), SWF_E_LIMIT);
    swf_error_free(err);
    err = swf_kafka_error(RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE, "send");
    cr_expect_eq(swf_error_code(err), SWF_E_LIMIT);
    swf_error_free(err);
}
