/*
 * swf-decider - the decider daemon (decider/daemon.h), configured by the
 * environment (--help lists it, and never starts the daemon); SIGINT/SIGTERM
 * finish the current batch and leave the group.
 * PostgreSQL or Kafka not up yet at start is waited for (cli/startup.h).
 * A second thread routes the CloudEvents of the swf.events topic
 * (decider/sw_events.h says why here).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/args.h"
#include "cli/startup.h"
#include "decider/daemon.h"
#include "decider/sw_events.h"

static const swf_cli_cmd_t decider_cmd = {
    "swf-decider", "[--version]",
    "The decider daemon: consumes the inbox topic, replays each execution's history through "
    "the ASL interpreter and appends its next decisions to PostgreSQL. Run as many as the "
    "inbox has partitions; they share the work as one Kafka consumer group. SIGINT and SIGTERM "
    "finish the current batch and leave the group. PostgreSQL or Kafka not up yet is waited "
    "for. Each also routes the CloudEvents of the swf.events topic to the Serverless Workflow "
    "instances they concern (a consumer group of their own, swf-events).",
    (const swf_cli_opt_t[]){
        {"--version", NULL, 0, "print the version and exit", "swf-decider --version"},
        SWF_CLI_OPTS_END},
    "Configured by the environment (README.md, \"Configuration\"):\n"
    "  SWF_DATABASE_URL       libpq connection string or URI (else libpq's PG* variables)\n"
    "  SWF_KAFKA_BROKERS      bootstrap servers, host:port,... (default localhost:9092)\n"
    "  SWF_TOKEN_SECRET       the HMAC secret of task tokens, shared by the deployment\n"
    "  SWF_INBOX_TOPIC, SWF_DLQ_TOPIC, SWF_TASK_TOPIC_PREFIX, SWF_TASK_PARTITIONS\n"
    "  SWF_DECIDER_CACHE      executions kept replayed in memory (default 10000)\n"
    "  SWF_DECIDER_BATCH      inbox messages per batch, one transaction (default 500)\n"
    "  SWF_EVENTS_TOPIC       the CloudEvents topic (default swf.events)\n"
    "  SWF_KAFKA_SESSION_TIMEOUT_MS, SWF_KAFKA_FETCH_WAIT_MS, SWF_KAFKA_SEND_TIMEOUT_MS,\n"
    "  SWF_KAFKA_DEBUG, SWF_KAFKA_CONFIG_FILE\n"};

static swf_decider_t *volatile decider;
static swf_sw_events_t *volatile events;
static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
    if (decider != NULL)
        swf_decider_stop(decider);
    if (events != NULL)
        swf_sw_events_stop(events);
}

static void *events_main(void *arg)
{
    swf_sw_events_run(arg);
    return NULL;
}

int main(int argc, char **argv)
{
    swf_cli_args_t a;
    if (!swf_cli_args_parse(&decider_cmd, argc, argv, &a))
        return a.status;
    swf_cli_on_stop_signals(on_signal);
    swf_decider_config_t cfg;
    swf_decider_config_env(&cfg);
    swf_cli_startup_t start = {.prog = "swf-decider"};
    swf_decider_t *d = NULL;
    swf_error_t *err;
    do
        err = swf_decider_new(&cfg, &d);
    while (swf_cli_startup_wait(&start, err, &stopping));
    if (err != NULL) {
        fprintf(stderr, "swf-decider: %s\n", swf_error_message(err));
        swf_error_free(err);
        return stopping ? 0 : 3;
    }
    decider = d;
    if (stopping) /* signaled before the handler could see the decider */
        swf_decider_stop(d);
    swf_sw_events_t *ev = NULL;
    err = swf_sw_events_new(
        &(swf_sw_events_config_t){
            .conninfo = cfg.conninfo, .kafka = cfg.kafka, .secret = cfg.secret, .log = stderr},
        &ev);
    pthread_t events_thread;
    if (err != NULL) {
        fprintf(stderr, "swf-decider: no events consumer: %s\n", swf_error_message(err));
        swf_error_free(err);
    } else {
        events = ev;
        if (stopping)
            swf_sw_events_stop(ev);
        if (pthread_create(&events_thread, NULL, events_main, ev) != 0)
            abort();
    }
    fprintf(stderr, "swf-decider: consuming %s and %s from %s\n", cfg.kafka.inbox,
            swf_sw_events_topic_env(), cfg.kafka.brokers);
    swf_decider_run(decider);
    if (ev != NULL) {
        swf_sw_events_stop(ev);
        pthread_join(events_thread, NULL);
        swf_sw_events_free(ev);
    }
    swf_decider_free(decider);
    return 0;
}
