/*
 * cache.h - the decider's bounded cache of replayed executions.
 *
 * Replaying a long history on every message would make a decider's cost
 * grow with the history's length. The cache keeps, per execution, the
 * interpreter's fold (swf_asl_exec_t) and the decider's own index of what is
 * open (activities, timers), positioned at the last event applied. A hit
 * is decided on without reading: the owner of an execution's inbox
 * partition should be the only writer of its history after the first
 * events, and a state that went stale all the same (two deciders during a
 * rebalance, or a message sent to the wrong partition) fails its append's
 * optimistic check and is replaced by a fresh load. A hit that appends
 * nothing is checked against the history's last event before its messages
 * count as changing nothing (batch_decide and batch_verify in daemon.c).
 * It is an LRU bounded by
 * a number of executions; entries are dropped when their inbox partition is
 * revoked (another decider now owns the execution, and its cached state
 * would go stale) and whenever an append of theirs lost a race.
 *
 * Entries move out of the cache while a batch works on them
 * (swf_decider_cache_take) and back in when the work committed
 * (swf_decider_cache_put): a failed batch simply frees what it took, so the
 * cache never holds a state that differs from the database.
 *
 * Ownership: put takes the state; take hands it to the caller. Thread-safety:
 * one thread (the decider's loop).
 */
#ifndef SWF_DECIDER_CACHE_H
#define SWF_DECIDER_CACHE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decider/asl/exec.h"

/* The replayed state of one execution. The four indexes are NULL until
 * something is put in them (reading a NULL one finds nothing). */
typedef struct swf_decider_state {
    swf_asl_exec_t *exec;
    /* Open activities: activityId -> {"s": scheduledEventId, "h": heartbeat
     * period in seconds or 0, "t": time of the last heartbeat recorded}. */
    json_object *activities;
    /* scheduledEventId (as a string) -> activityId, for the open ones. */
    json_object *scheduled;
    /* Pending timers: timerId -> startedEventId. */
    json_object *timers;
    /* The request ids of the signals and cancel requests recorded: id ->
     * true (a request delivered again is not recorded again). */
    json_object *requests;
    /* The open decision task: its DecisionTaskScheduled id (0: none) and
     * its DecisionTaskStarted id (0: not started). */
    int64_t decision_scheduled_id;
    int64_t decision_started_id;
    /* The clock (decider/decision.h, time skip): the time of the last event,
     * the last clockOffsetMs recorded, when each pending timer fires
     * (timerId -> ms; NULL until a timer starts), and the execution's
     * deadline (0: none). */
    int64_t last_time_ms;
    int64_t clock_offset_ms;
    json_object *timer_fire_ms;
    int64_t deadline_ms;
    /* A nested execution's parent (protocol/started.h; NULL: none) and the
     * parent's ActivityTaskScheduled; how deep it is nested (0: top); the
     * execution's taskListPrefix (NULL: none), which its children keep. */
    char *parent_id;
    int64_t parent_event_id;
    int nested_depth;
    char *task_list_prefix;
    /* Its open .sync/.sync:2 nested Tasks: scheduledEventId (as a string)
     * -> the child's id ("" before the child started); NULL until one is
     * scheduled. The children a stopped parent stops (decider/daemon.c). */
    json_object *nested;
} swf_decider_state_t;

/* A fresh, empty state (no event applied). */
swf_decider_state_t *swf_decider_state_new(const char *token_secret);
/* Applies one event to the interpreter and the index. */
swf_error_t *swf_decider_state_apply(swf_decider_state_t *st, const swf_event_t *ev);
void swf_decider_state_free(swf_decider_state_t *st);

typedef struct swf_decider_cache swf_decider_cache_t;

/* A cache of at most max executions (at least 1). */
swf_decider_cache_t *swf_decider_cache_new(size_t max);
void swf_decider_cache_free(swf_decider_cache_t *cache);

/* Removes and returns the state of an execution, or NULL on a miss. */
swf_decider_state_t *swf_decider_cache_take(swf_decider_cache_t *cache, const char *execution_id);
/* Stores a state (taken), evicting the least recently used entry when full.
 * `partition` is the inbox partition the execution's messages come from. */
void swf_decider_cache_put(swf_decider_cache_t *cache, const char *execution_id, int32_t partition,
                           swf_decider_state_t *st);
/* Drops the entries of one inbox partition; returns how many. */
size_t swf_decider_cache_drop_partition(swf_decider_cache_t *cache, int32_t partition);
size_t swf_decider_cache_count(const swf_decider_cache_t *cache);
/* Executions of one state machine version carry the same definition, and
 * json-c holds a parsed one in about ten times the bytes of its text, so
 * the cache keeps one parsed copy of each definition it meets (at most
 * SWF_DECIDER_SHARED_DEFINITIONS; past that it starts the set afresh) and
 * gives it to every execution of that definition: this replaces the
 * definition in a WorkflowExecutionStarted event's attributes with the
 * shared copy, before the event is applied. The interpreter never changes
 * a definition, which is what makes sharing it safe; json-c's reference
 * counts are not atomic, which is why a cache shares only among the
 * executions of its own thread. Any other event is left alone. Each
 * definition is validated once, when first met: true when this one is
 * valid, so that the interpreter need not validate it again for every
 * execution (swf_asl_exec_set_trusted). */
#define SWF_DECIDER_SHARED_DEFINITIONS 256
bool swf_decider_cache_share_definition(swf_decider_cache_t *cache, const swf_event_t *ev);

/* Definitions shared at the moment (for tests and the bench). */
size_t swf_decider_cache_definitions(const swf_decider_cache_t *cache);

/* Hits and misses so far. */
void swf_decider_cache_stats(const swf_decider_cache_t *cache, uint64_t *hits, uint64_t *misses);

#endif
