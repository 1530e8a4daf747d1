/* test_bounded.c - protocol/bounded.c: a call within its limit is waited
 * for (and its late part never runs); a call past it is abandoned at the
 * limit and finishes on its own, late part included. */
#include <criterion/criterion.h>
#include <time.h>
#include <unistd.h>

#include "protocol/bounded.h"

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void add_one(void *arg)
{
    __atomic_add_fetch((int *)arg, 1, __ATOMIC_SEQ_CST);
}

static void never(void *arg)
{
    (void)arg;
    abort();
}

Test(bounded, a_call_within_the_limit_is_waited_for)
{
    int n = 0;
    for (int i = 0; i < 100; i++)
        cr_assert(swf_bounded_call(add_one, never, &n, 10000));
    cr_assert_eq(n, 100, "every call ran before its return: %d", n);
}

/* Blocks until a byte arrives on fds[0]; late() writes it to fds[1]. */
static char relayed;
static void relay(void *arg)
{
    int *fds = arg;
    if (read(fds[0], &relayed, 1) != 1)
        relayed = 0;
}

static void relay_late(void *arg)
{
    int *fds = arg;
    if (write(fds[1], &relayed, 1) != 1)
        abort();
}

/* Two pipes: relay reads in[0], relay_late writes out[1] (fds). */
typedef struct relay_pipes {
    int in[2], out[2], fds[2];
} relay_pipes_t;

static void pipes_open(relay_pipes_t *p)
{
    cr_assert_eq(pipe(p->in), 0);
    cr_assert_eq(pipe(p->out), 0);
    p->fds[0] = p->in[0];
    p->fds[1] = p->out[1];
}

/* Releases the relayed call with byte b and reads what its late part wrote. */
static char pipes_release(relay_pipes_t *p, char b)
{
    cr_assert_eq(write(p->in[1], &b, 1), 1);
    char c = 0;
    cr_assert_eq(read(p->out[0], &c, 1), 1);
    return c;
}

static void pipes_close(relay_pipes_t *p)
{
    close(p->in[0]);
    close(p->in[1]);
    close(p->out[0]);
    close(p->out[1]);
}

Test(bounded, a_call_past_the_limit_is_abandoned_at_the_limit_and_finishes_later)
{
    static relay_pipes_t p;
    pipes_open(&p);
    int *fds = p.fds;
    int64_t t0 = now_ms();
    cr_assert_not(swf_bounded_call(relay, relay_late, fds, 200), "a blocked call reported as done");
    int64_t waited = now_ms() - t0;
    cr_assert(waited >= 190 && waited < 60000, "returned after %lld ms", (long long)waited);
    /* The abandoned call is still running: release it and see it finish,
     * with its late part. */
    cr_assert_eq(pipes_release(&p, 'x'), 'x');
    pipes_close(&p);
}

/* The end of a process can wait for what it abandoned: not while the call
 * is held up, and at once when it ends. */
Test(bounded, waiting_for_abandoned_calls_ends_when_they_do)
{
    static relay_pipes_t p;
    pipes_open(&p);
    cr_assert(swf_bounded_wait_abandoned(0), "nothing abandoned yet");
    cr_assert_not(swf_bounded_call(relay, relay_late, p.fds, 50));
    cr_assert_not(swf_bounded_wait_abandoned(200), "the call is still held up");
    cr_assert_eq(write(p.in[1], "y", 1), 1);
    cr_assert(swf_bounded_wait_abandoned(60000), "the released call never ended");
    /* Its late part ran before the wait ended. */
    char c = 0;
    cr_assert_eq(read(p.out[0], &c, 1), 1);
    cr_assert_eq(c, 'y');
    pipes_close(&p);
}
