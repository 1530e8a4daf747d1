/*
 * swf-decider - the decider daemon (decider/daemon.h), configured by the
 * environment; SIGINT/SIGTERM finish the current batch and leave the group.
 * PostgreSQL or Kafka not up yet at start is waited for (cli/startup.h).
 */
#include <signal.h>
#include <stdio.h>

#include "cli/startup.h"
#include "decider/daemon.h"

static swf_decider_t *volatile decider;
static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
    if (decider != NULL)
        swf_decider_stop(decider);
}

int main(void)
{
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
    fprintf(stderr, "swf-decider: consuming %s from %s\n", cfg.kafka.inbox, cfg.kafka.brokers);
    swf_decider_run(decider);
    swf_decider_free(decider);
    return 0;
}
