/*
 * decision.h - the events of a decision task, built once for every driver.
 *
 * Both drivers of the interpreter, `swf run --local` (decider/local.c) and
 * the decider daemon (decider/daemon.c), turn what happened to an execution
 * into events the same way: the incoming events (an activity's answer, a
 * timer that fired, a signal), then, when a decision is due, a decision
 * task: DecisionTaskScheduled, DecisionTaskStarted, the interpreter's
 * decide, DecisionTaskCompleted and one event per decision. Activities whose
 * cancellation was decided are closed at once with ActivityTaskCanceled
 * (no worker is waited for) and a new decision task follows, so a failed
 * Parallel learns of its closed branches without a round trip. Every event
 * is applied to the execution's state as it is built, so each one sees the
 * ones before it.
 *
 * A builder is a small value on the caller's stack: the execution's state,
 * the list the events go to, the clock and the identity. It does no I/O;
 * appending the events is the caller's (and losing the append race means
 * throwing the state away, decider/cache.h).
 *
 * Ownership: the builder borrows the state and the list; add() takes the
 * attributes. Thread-safety: one builder per thread, like the state.
 */
#ifndef SWF_DECIDER_DECISION_H
#define SWF_DECIDER_DECISION_H

#include <stdbool.h>
#include <stdint.h>

#include "decider/cache.h"
#include "protocol/event.h"

/* What ActivityTaskCanceled's details say when the decider closes an
 * activity whose cancellation it decided. */
#define SWF_DECIDER_CANCELED_DETAILS "canceled by the decider"

typedef struct swf_decider_decision {
    swf_decider_state_t *st;  /* the execution, every event applied to it */
    swf_event_list_t *events; /* the events to append, in order */
    int64_t next_id;          /* the id of events->items[0] */
    int64_t now_ms;           /* the time of the events built */
    const char *identity;     /* DecisionTaskStarted's identity */
    int tasks;                /* decision tasks built so far */
    bool time_skip;           /* swf_decider_decision_skip was called */
    int64_t wall_ms;          /* then: the wall clock, */
    int64_t offset_ms;        /* and now_ms - wall_ms */
} swf_decider_decision_t;

/* A builder for an execution whose state is positioned at its last
 * event: the events go to `events` (emptied first). */
void swf_decider_decision_init(swf_decider_decision_t *b, swf_decider_state_t *st,
                               swf_event_list_t *events, int64_t now_ms, const char *identity);

/*
 * The virtual clock of SWF_DEV_TIME_SKIP (development only; production
 * never calls this): instead of the wall clock, the builder's time becomes
 * the execution's virtual time, which is what `swf run --local` would have
 * shown. It runs with the wall clock while an activity is in flight (real
 * work takes real time), stands still while the execution waits only for
 * the system (a decision task, a message on its way: --local spends no time
 * there), and jumps forward to the deadline of the timer that fires (or of
 * the execution, when it times out): swf-history fires an idle execution's
 * next timer at once (history/service.h), and TimerFired is then recorded
 * at the timer's deadline, never before.
 *
 * The deciders are stateless, so the clock lives in the history: an event
 * recorded with another offset from the wall clock than the last one
 * carries it as clockOffsetMs (protocol/README.md); the execution's virtual
 * time is the wall clock plus the last offset recorded, which is also how
 * swf-history reads it. Replay only reads the events' times, so it stays
 * deterministic. Call right after init, before adding events.
 */
void swf_decider_decision_skip(swf_decider_decision_t *b, int64_t wall_ms);

/* The id the next event will get. */
int64_t swf_decider_decision_next_id(const swf_decider_decision_t *b);

/* Adds one incoming event (takes attrs) and applies it. An error means the
 * state must be thrown away (the interpreter refused the event). */
swf_error_t *swf_decider_decision_add(swf_decider_decision_t *b, swf_event_type_t type,
                                      json_object *attrs);

/* Runs the decision tasks that are due, at most max_tasks of them: with
 * `wake` (something happened that the interpreter must see) one is
 * scheduled if none is; a decision task left started by a decider that is
 * gone is timed out first. Stops when the execution closes, when no task is
 * scheduled any more, or at max_tasks (a task then stays scheduled). */
swf_error_t *swf_decider_decision_run(swf_decider_decision_t *b, bool wake, int max_tasks);

#endif
