/*
 * swf-decider - the decider daemon (decider/daemon.h), configured by the
 * environment; SIGINT/SIGTERM finish the current batch and leave the group.
 */
#include <signal.h>
#include <stdio.h>

#include "decider/daemon.h"

static swf_decider_t *decider;

static void on_signal(int sig)
{
    (void)sig;
    if (decider != NULL)
        swf_decider_stop(decider);
}

int main(void)
{
    swf_decider_config_t cfg;
    swf_decider_config_env(&cfg);
    swf_error_t *err = swf_decider_new(&cfg, &decider);
    if (err != NULL) {
        fprintf(stderr, "swf-decider: %s\n", swf_error_message(err));
        swf_error_free(err);
        return 3;
    }
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    fprintf(stderr, "swf-decider: consuming %s from %s\n", cfg.kafka.inbox, cfg.kafka.brokers);
    swf_decider_run(decider);
    swf_decider_free(decider);
    return 0;
}
