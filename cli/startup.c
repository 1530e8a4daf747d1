/*
 * startup.c - the daemons' patience with dependencies that are not up yet
 * (startup.h). The pause doubles up to 5 s so that a long outage costs a
 * line every 30 s and a connection attempt every 5 s, not a busy loop.
 */
#include "cli/startup.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define PAUSE_MS_FIRST 100
#define PAUSE_MS_MAX 5000
#define LOG_EVERY_MS 30000

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool swf_cli_startup_wait(swf_cli_startup_t *s, swf_error_t *err,
                          const volatile sig_atomic_t *stopping)
{
    if (err == NULL || !swf_error_retriable(err) || *stopping)
        return false;
    int64_t now = mono_ms();
    if (s->failures++ == 0 || now - s->logged_ms >= LOG_EVERY_MS) {
        fprintf(stderr, "%s: %s; waiting for it to come up\n", s->prog, swf_error_message(err));
        s->logged_ms = now;
    }
    swf_error_free(err);
    s->pause_ms = s->pause_ms <= 0 ? PAUSE_MS_FIRST : s->pause_ms * 2;
    if (s->pause_ms > PAUSE_MS_MAX)
        s->pause_ms = PAUSE_MS_MAX;
    for (int slept = 0; slept < s->pause_ms && !*stopping; slept += 50)
        usleep(50000);
    return !*stopping;
}

void swf_cli_on_stop_signals(void (*handler)(int))
{
    struct sigaction sa = {0};
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}
