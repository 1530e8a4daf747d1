/*
 * error.c - librdkafka's error codes, translated once.
 *
 * Every librdkafka failure of every swf process becomes a swf_error_t
 * here: a code (SWF_E_LIMIT for a message too large, SWF_E_KAFKA
 * otherwise), whether a retry can help, librdkafka's text in the message
 * and the code's name as the cause. The decider retries a batch, swf-history
 * a tick and a worker's loop a poll on a retriable error, and give up or
 * dead-letter on the others, so the list below decides what an outage
 * looks like: it holds the codes that mean "the cluster is busy, moving or
 * out of reach", which pass by themselves, and none that mean "this request
 * is wrong", which a retry would only repeat. It is the union of the two
 * lists the decider and the worker kept before this file; every entry says
 * why it is there.
 */
#include "kafka/internal.h"

bool swf_kafka_retriable(rd_kafka_resp_err_t code)
{
    switch (code) {
    /* Local: no answer in time, or none possible right now. */
    case RD_KAFKA_RESP_ERR__TIMED_OUT:        /* a call's own deadline passed */
    case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:    /* a message outlived message.timeout.ms */
    case RD_KAFKA_RESP_ERR__TRANSPORT:        /* a broker connection broke */
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN: /* none reachable: an outage or a restart */
    case RD_KAFKA_RESP_ERR__QUEUE_FULL:       /* the producer's queue drains as Kafka acks */
    case RD_KAFKA_RESP_ERR__WAIT_COORD:       /* the group coordinator is still being found */
    /* Local: metadata not there yet. A task topic is created by the first
     * task scheduled on it, and metadata refreshes find it. */
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
    /* The broker: Kafka documents each as retriable. */
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:                /* replicas acked too late */
    case RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION:                /* between brokers */
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:            /* being created, or metadata stale */
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:             /* an election is under way */
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:         /* leadership moved */
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS:              /* below min.insync.replicas for now */
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND: /* the same, found late */
    case RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE:        /* the group coordinator is moving */
    case RD_KAFKA_RESP_ERR_NOT_COORDINATOR:                  /* it moved */
    case RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS:     /* it is loading the group */
    case RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS:            /* a commit during a rebalance */
        return true;
    default:
        return false;
    }
}

swf_error_t *swf_kafka_error(rd_kafka_resp_err_t code, const char *what)
{
    swf_code_t c = SWF_E_KAFKA;
    if (code == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE ||
        code == RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE)
        c = SWF_E_LIMIT;
    swf_error_t *err = swf_error_new(c, NULL, "%s: %s", what, rd_kafka_err2str(code));
    swf_error_set_cause(err, rd_kafka_err2name(code));
    swf_error_set_retriable(err, swf_kafka_retriable(code));
    return err;
}
