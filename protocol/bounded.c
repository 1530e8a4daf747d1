/*
 * bounded.c - a blocking call with a time limit (see bounded.h).
 *
 * The caller and the thread share a small record with two references; the
 * last one out frees it, so the caller's side never waits for an abandoned
 * call. Whether the call was abandoned is settled under the record's lock:
 * either the caller saw it done (and goes on with arg), or it marked the
 * call abandoned before the call ended (and the thread runs `late`).
 */
#include "protocol/bounded.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

typedef struct call {
    pthread_mutex_t lock;
    pthread_cond_t done_cond;
    void (*fn)(void *arg);
    void (*late)(void *arg);
    void *arg;
    bool done;
    bool abandoned; /* the caller stopped waiting first */
    int refs;       /* the caller and the thread */
} call_t;

/* Calls abandoned and not returned yet, for swf_bounded_wait_abandoned. */
static pthread_mutex_t abandoned_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t abandoned_cond = PTHREAD_COND_INITIALIZER;
static int abandoned_running;

/* The moment timeout_ms from now on `clock`. */
static struct timespec deadline(clockid_t clock, int timeout_ms)
{
    struct timespec t;
    clock_gettime(clock, &t);
    t.tv_sec += timeout_ms / 1000;
    t.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    return t;
}

static void call_unref(call_t *c)
{
    pthread_mutex_lock(&c->lock);
    bool last = --c->refs == 0;
    pthread_mutex_unlock(&c->lock);
    if (!last)
        return;
    pthread_cond_destroy(&c->done_cond);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static void *call_main(void *arg)
{
    call_t *c = arg;
    c->fn(c->arg);
    pthread_mutex_lock(&c->lock);
    c->done = true;
    bool abandoned = c->abandoned; /* settled: once done, the caller cannot abandon it */
    bool late = abandoned && c->late != NULL;
    pthread_cond_signal(&c->done_cond);
    pthread_mutex_unlock(&c->lock);
    if (late)
        c->late(c->arg);
    if (abandoned) {
        pthread_mutex_lock(&abandoned_lock);
        abandoned_running--;
        pthread_cond_broadcast(&abandoned_cond);
        pthread_mutex_unlock(&abandoned_lock);
    }
    call_unref(c);
    return NULL;
}

bool swf_bounded_call(void (*fn)(void *arg), void (*late)(void *arg), void *arg, int timeout_ms)
{
    call_t *c = calloc(1, sizeof(*c));
    if (c == NULL)
        abort();
    pthread_mutex_init(&c->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->done_cond, &ca);
    pthread_condattr_destroy(&ca);
    c->fn = fn;
    c->late = late;
    c->arg = arg;
    c->refs = 2;

    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t th;
    int rc = pthread_create(&th, &attr, call_main, c);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        c->refs = 1;
        call_unref(c);
        fn(arg);
        return true;
    }

    struct timespec until = deadline(CLOCK_MONOTONIC, timeout_ms);
    pthread_mutex_lock(&c->lock);
    int w = 0;
    while (!c->done && w != ETIMEDOUT)
        w = pthread_cond_timedwait(&c->done_cond, &c->lock, &until);
    bool done = c->done;
    c->abandoned = !done;
    if (c->abandoned) { /* counted before the thread can see it abandoned */
        pthread_mutex_lock(&abandoned_lock);
        abandoned_running++;
        pthread_mutex_unlock(&abandoned_lock);
    }
    pthread_mutex_unlock(&c->lock);
    call_unref(c);
    return done;
}

bool swf_bounded_wait_abandoned(int timeout_ms)
{
    /* A statically initialised condition variable waits on CLOCK_REALTIME. */
    struct timespec until = deadline(CLOCK_REALTIME, timeout_ms);
    pthread_mutex_lock(&abandoned_lock);
    int w = 0;
    while (abandoned_running > 0 && w != ETIMEDOUT)
        w = pthread_cond_timedwait(&abandoned_cond, &abandoned_lock, &until);
    bool none = abandoned_running == 0;
    pthread_mutex_unlock(&abandoned_lock);
    return none;
}
