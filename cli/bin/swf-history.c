/*
 * swf-history - the history service (history/service.h): timers, timeouts,
 * outbox republishing and the sweep, publishing through kafka/kafka.h.
 * SIGINT/SIGTERM finish the current tick. PostgreSQL not up yet at start is
 * waited for (cli/startup.h).
 */
#include <signal.h>
#include <stdio.h>

#include "cli/startup.h"
#include "history/service.h"
#include "kafka/kafka.h"

static swf_history_service_t *volatile svc;
static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
    if (svc != NULL)
        swf_history_service_stop(svc);
}

int main(void)
{
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
