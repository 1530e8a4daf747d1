/*
 * kafka.c - librdkafka's errors, translated once.
 *
 * Every librdkafka failure the worker meets becomes an swf_error_t here, so
 * that the rest of worker/ never looks at an rd_kafka_resp_err_t: a code
 * (SWF_E_LIMIT for a message too large, SWF_E_KAFKA otherwise), whether
 * retrying can help, and librdkafka's own text as the cause.
 */
#include "worker/internal.h"

static bool retriable(rd_kafka_resp_err_t err)
{
    switch (err) {
    case RD_KAFKA_RESP_ERR__QUEUE_FULL:
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__MSG_TIMED_OUT:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_COORDINATOR:
    case RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION:
        return true;
    default:
        return false;
    }
}

swf_error_t *swf_worker__kafka_error(rd_kafka_resp_err_t err, const char *what)
{
    swf_code_t code = SWF_E_KAFKA;
    if (err == RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE || err == RD_KAFKA_RESP_ERR_RECORD_LIST_TOO_LARGE)
        code = SWF_E_LIMIT;
    swf_error_t *e = swf_error_new(code, NULL, "%s: %s", what, rd_kafka_err2name(err));
    swf_error_set_cause(e, rd_kafka_err2str(err));
    swf_error_set_retriable(e, retriable(err));
    return e;
}

swf_error_t *swf_worker__conf_set(rd_kafka_conf_t *conf, const char *name, const char *value)
{
    char text[512];
    if (rd_kafka_conf_set(conf, name, value, text, sizeof(text)) == RD_KAFKA_CONF_OK)
        return NULL;
    swf_error_t *e = swf_error_new(SWF_E_INPUT, NULL, "kafka setting %s: %s", name, text);
    return e;
}
