/*
 * swf-history - the history service (history/service.h): timers, timeouts,
 * outbox republishing and the sweep, publishing through kafka/kafka.h.
 * --help lists its environment and never starts the service.
 * SIGINT/SIGTERM finish the current tick. PostgreSQL not up yet at start is
 * waited for (cli/startup.h).
 */
#include <signal.h>
#include <stdio.h>

#include "cli/args.h"
#include "cli/startup.h"
#include "history/service.h"
#include "kafka/kafka.h"

static const swf_cli_cmd_t history_cmd = {
    "swf-history", "[--version]",
    "The history service: fires timers and activity timeouts, republishes the outbox (activity "
    "tasks not yet on Kafka) and hands idle open executions to a decider (the sweep). Run one "
    "or more; they share the work through PostgreSQL. SIGINT and SIGTERM finish the current "
    "tick. PostgreSQL not up yet is waited for.",
    (const swf_cli_opt_t[]){
        {"--version", NULL, 0, "print the version and exit", "swf-history --version"},
        SWF_CLI_OPTS_END},
    "Configured by the environment (README.md, \"Configuration\"):\n"
    "  SWF_DATABASE_URL       libpq connection string or URI (else libpq's PG* variables)\n"
    "  SWF_KAFKA_BROKERS      bootstrap servers, host:port,... (default localhost:9092)\n"
    "  SWF_TOKEN_SECRET       the HMAC secret of task tokens, shared by the deployment\n"
    "  SWF_INBOX_TOPIC, SWF_TASK_TOPIC_PREFIX, SWF_TASK_PARTITIONS\n"
    "  SWF_DEV_TIME_SCALE, SWF_DEV_TIME_SKIP (development clocks, see swf dev)\n"
    "  SWF_KAFKA_SEND_TIMEOUT_MS, SWF_KAFKA_DEBUG, SWF_KAFKA_CONFIG_FILE\n"};

static swf_history_service_t *volatile svc;
static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
    if (svc != NULL)
        swf_history_service_stop(svc);
}

int main(int argc, char **argv)
{
    swf_cli_args_t a;
    if (!swf_cli_args_parse(&history_cmd, argc, argv, &a))
        return a.status;
    swf_cli_on_stop_signals(on_signal);
    swf_kafka_names_t names;
    swf_kafka_names_env(&names);
    rd_kafka_t *producer = NULL;
    swf_error_t *err =
        swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = names.brokers}, &producer);
    swf_kafka_poster_t *poster = NULL;
    if (err == NULL) {
        poster = swf_kafka_poster_new(producer, names.task_partitions);
        swf_history_service_config_t cfg;
        swf_history_service_config_env(&cfg);
        cfg.send = swf_kafka_poster_send;
        cfg.send_ctx = poster;
        swf_cli_startup_t start = {.prog = "swf-history"};
        swf_history_service_t *s = NULL;
        do
            err = swf_history_service_new(&cfg, &s);
        while (swf_cli_startup_wait(&start, err, &stopping));
        svc = s;
        if (stopping && s != NULL) /* signaled before the handler could see it */
            swf_history_service_stop(s);
    }
    if (err != NULL) {
        fprintf(stderr, "swf-history: %s\n", swf_error_message(err));
        swf_error_free(err);
        swf_kafka_poster_free(poster);
        swf_kafka_producer_free(producer);
        return stopping ? 0 : 3;
    }
    swf_history_service_run(svc);
    swf_history_service_free(svc);
    swf_kafka_poster_free(poster);
    swf_kafka_producer_free(producer);
    return 0;
}
