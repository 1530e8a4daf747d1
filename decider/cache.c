/*
 * cache.c - an LRU of replayed executions, and the decider's index of what
 * is open in each.
 *
 * A chained hash table over a doubly linked recency list: take, put and
 * eviction are O(1); dropping a revoked partition walks the list, which
 * happens only on a rebalance. The open-activity and timer index is kept in
 * json-c objects (which are hash tables) because they are small, keyed by
 * string, and need no code of their own.
 */
#include "decider/cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/asl/validate.h"
#include "decider/nested.h"
#include "decider/sw/sw.h"
#include "protocol/alloc.h"
#include "protocol/json.h"
#include "protocol/started.h"

swf_decider_state_t *swf_decider_state_new(const char *token_secret)
{
    swf_decider_state_t *st = calloc(1, sizeof(*st));
    if (st == NULL)
        abort();
    st->exec = swf_asl_exec_new();
    if (token_secret != NULL)
        swf_asl_exec_set_token_secret(st->exec, token_secret);
    return st;
}

void swf_decider_state_free(swf_decider_state_t *st)
{
    if (st == NULL)
        return;
    swf_asl_exec_free(st->exec);
    json_object_put(st->activities);
    json_object_put(st->scheduled);
    json_object_put(st->timers);
    json_object_put(st->requests);
    json_object_put(st->timer_fire_ms);
    free(st->parent_id);
    free(st->task_list_prefix);
    json_object_put(st->nested);
    free(st);
}

/* An index, made when first written to: most executions never signal,
 * and an empty json-c object costs most of a kilobyte. */
static json_object *index_of(json_object **slot)
{
    if (*slot == NULL)
        *slot = json_object_new_object();
    return *slot;
}

static int64_t get_i64(json_object *o, const char *key)
{
    json_object *v;
    return swf_json_get(o, key, &v) && swf_json_is_number(v) ? json_object_get_int64(v) : 0;
}

/* The activity an event about a scheduled activity closes, removed from the index. */
static void activity_close(swf_decider_state_t *st, const swf_event_t *ev)
{
    char key[32];
    snprintf(key, sizeof(key), "%lld", (long long)get_i64(ev->attrs, "scheduledEventId"));
    const char *aid = swf_json_get_string(st->scheduled, key);
    if (aid != NULL) {
        json_object_object_del(st->activities, aid); /* both made when aid was added */
        json_object_object_del(st->scheduled, key);
    }
}

swf_error_t *swf_decider_state_apply(swf_decider_state_t *st, const swf_event_t *ev)
{
    swf_error_t *err = swf_asl_exec_apply(st->exec, ev);
    if (err != NULL)
        return err;
    char key[32];
    json_object *v;
    if (ev->time_ms > st->last_time_ms)
        st->last_time_ms = ev->time_ms;
    if (swf_json_get(ev->attrs, "clockOffsetMs", &v) && swf_json_is_number(v))
        st->clock_offset_ms = json_object_get_int64(v);
    switch (ev->type) {
    case SWF_EVENT_WORKFLOW_EXECUTION_STARTED:
        if (swf_json_get(ev->attrs, "executionStartToCloseTimeout", &v) && swf_json_is_number(v))
            st->deadline_ms = ev->time_ms + (int64_t)(json_object_get_double(v) * 1000.0 + 0.5);
        const char *parent = swf_started_parent_of(ev->attrs, &st->parent_event_id);
        st->parent_id = parent ? swf_strdup(parent) : NULL;
        st->nested_depth = swf_started_nested_depth(ev->attrs);
        const char *prefix = swf_json_get_string(ev->attrs, "taskListPrefix");
        st->task_list_prefix = prefix ? swf_strdup(prefix) : NULL;
        break;
    case SWF_EVENT_DECISION_TASK_SCHEDULED:
        st->decision_scheduled_id = ev->id;
        st->decision_started_id = 0;
        break;
    case SWF_EVENT_DECISION_TASK_STARTED:
        st->decision_started_id = ev->id;
        break;
    case SWF_EVENT_WORKFLOW_EXECUTION_SIGNALED:
    case SWF_EVENT_WORKFLOW_EXECUTION_CANCEL_REQUESTED: {
        const char *rid = swf_json_get_string(ev->attrs, "requestId");
        if (rid != NULL)
            json_object_object_add(index_of(&st->requests), rid, json_object_new_boolean(1));
        break;
    }
    case SWF_EVENT_DECISION_TASK_COMPLETED:
    case SWF_EVENT_DECISION_TASK_TIMED_OUT:
        st->decision_scheduled_id = 0;
        st->decision_started_id = 0;
        break;
    case SWF_EVENT_ACTIVITY_TASK_SCHEDULED: {
        const char *aid = swf_json_get_string(ev->attrs, "activityId");
        if (aid == NULL)
            break;
        json_object *a = json_object_new_object();
        swf_json_add(a, "s", json_object_new_int64(ev->id));
        double h = swf_json_get(ev->attrs, "heartbeatTimeout", &v) && swf_json_is_number(v)
                       ? json_object_get_double(v)
                       : 0;
        swf_json_add(a, "h", json_object_new_double(h));
        swf_json_add(a, "t", json_object_new_int64(0));
        json_object_object_add(index_of(&st->activities), aid, a);
        snprintf(key, sizeof(key), "%lld", (long long)ev->id);
        json_object_object_add(index_of(&st->scheduled), key, json_object_new_string(aid));
        swf_nested_pattern_t p = swf_nested_pattern_of_scheduled(ev->attrs);
        if (p == SWF_NESTED_SYNC || p == SWF_NESTED_SYNC2)
            json_object_object_add(index_of(&st->nested), key, json_object_new_string(""));
        break;
    }
    case SWF_EVENT_ACTIVITY_TASK_STARTED:
    case SWF_EVENT_ACTIVITY_TASK_HEARTBEAT_RECORDED: {
        snprintf(key, sizeof(key), "%lld", (long long)get_i64(ev->attrs, "scheduledEventId"));
        const char *aid = swf_json_get_string(st->scheduled, key);
        json_object *a;
        if (aid == NULL || !swf_json_get(st->activities, aid, &a))
            break;
        /* A start counts as a heartbeat (swf-history counts from it). */
        json_object_object_add(a, "t", json_object_new_int64(ev->time_ms));
        if (ev->type == SWF_EVENT_ACTIVITY_TASK_STARTED)
            json_object_object_add(a, "st", json_object_new_int64(ev->id));
        const char *who = swf_json_get_string(ev->attrs, "identity");
        size_t n = strlen(SWF_NESTED_IDENTITY);
        if (ev->type == SWF_EVENT_ACTIVITY_TASK_STARTED && who != NULL &&
            strncmp(who, SWF_NESTED_IDENTITY, n) == 0 && swf_json_get(st->nested, key, &v))
            json_object_object_add(st->nested, key, json_object_new_string(who + n));
        break;
    }
    case SWF_EVENT_ACTIVITY_TASK_COMPLETED:
    case SWF_EVENT_ACTIVITY_TASK_FAILED:
        /* Answered: the child closed (or never started). A timeout or a
         * cancel leaves the entry, for the daemon to stop the child. */
        snprintf(key, sizeof(key), "%lld", (long long)get_i64(ev->attrs, "scheduledEventId"));
        if (st->nested != NULL)
            json_object_object_del(st->nested, key);
        activity_close(st, ev);
        break;
    case SWF_EVENT_ACTIVITY_TASK_TIMED_OUT:
    case SWF_EVENT_ACTIVITY_TASK_CANCELED:
        activity_close(st, ev);
        break;
    case SWF_EVENT_TIMER_STARTED: {
        const char *tid = swf_json_get_string(ev->attrs, "timerId");
        if (tid == NULL)
            break;
        json_object_object_add(index_of(&st->timers), tid, json_object_new_int64(ev->id));
        double s = swf_json_get(ev->attrs, "startToFireTimeout", &v) && swf_json_is_number(v)
                       ? json_object_get_double(v)
                       : 0;
        json_object_object_add(index_of(&st->timer_fire_ms), tid,
                               json_object_new_int64(ev->time_ms + (int64_t)(s * 1000.0 + 0.5)));
        break;
    }
    case SWF_EVENT_TIMER_FIRED:
    case SWF_EVENT_TIMER_CANCELED: {
        const char *tid = swf_json_get_string(ev->attrs, "timerId");
        if (tid != NULL && st->timers != NULL)
            json_object_object_del(st->timers, tid);
        if (tid != NULL && st->timer_fire_ms != NULL)
            json_object_object_del(st->timer_fire_ms, tid);
        break;
    }
    default:
        break;
    }
    return NULL;
}

/* ---- the LRU ------------------------------------------------------------- */

typedef struct entry {
    char *id;
    int32_t partition;
    swf_decider_state_t *st;
    struct entry *hnext;       /* hash chain */
    struct entry *prev, *next; /* recency: head is the most recent */
} entry_t;

struct swf_decider_cache {
    size_t max, count, nbuckets;
    entry_t **buckets;
    entry_t *head, *tail;
    uint64_t hits, misses;
    json_object *definitions; /* the definition's text -> its shared parsed copy */
    json_object *valid;       /* the texts of those that validated */
};

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

swf_decider_cache_t *swf_decider_cache_new(size_t max)
{
    swf_decider_cache_t *c = calloc(1, sizeof(*c));
    if (c == NULL)
        abort();
    c->max = max > 0 ? max : 1;
    c->nbuckets = 64;
    while (c->nbuckets < c->max && c->nbuckets < (1u << 24))
        c->nbuckets *= 2;
    c->buckets = calloc(c->nbuckets, sizeof(*c->buckets));
    if (c->buckets == NULL)
        abort();
    c->definitions = json_object_new_object();
    c->valid = json_object_new_object();
    return c;
}

bool swf_decider_cache_share_definition(swf_decider_cache_t *c, const swf_event_t *ev)
{
    json_object *def, *shared;
    if (ev->type != SWF_EVENT_WORKFLOW_EXECUTION_STARTED ||
        !swf_json_get(ev->attrs, "definition", &def) || !json_object_is_type(def, json_type_object))
        return false;
    /* the text is the key: PostgreSQL writes jsonb's keys in one order, so
     * one definition always reads back as one text */
    const char *text = json_object_to_json_string_ext(def, JSON_C_TO_STRING_PLAIN);
    if (!swf_json_get(c->definitions, text, &shared)) {
        if (json_object_object_length(c->definitions) >= SWF_DECIDER_SHARED_DEFINITIONS) {
            json_object_put(c->definitions); /* the states using them keep theirs */
            json_object_put(c->valid);
            c->definitions = json_object_new_object();
            c->valid = json_object_new_object();
        }
        shared = swf_json_ref(def);
        json_object_object_add(c->definitions, text, shared);
        swf_asl_problems_t problems = {0};
        if (swf_sw_validate_any(shared, &problems) == 0)
            json_object_object_add(c->valid, text, NULL);
        swf_asl_problems_free(&problems);
    }
    bool valid = json_object_object_get_ex(c->valid, text, NULL);
    if (shared != def)
        json_object_object_add(ev->attrs, "definition", swf_json_ref(shared)); /* frees text */
    return valid;
}

size_t swf_decider_cache_definitions(const swf_decider_cache_t *c)
{
    return (size_t)json_object_object_length(c->definitions);
}

static void list_unlink(swf_decider_cache_t *c, entry_t *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        c->head = e->next;
    if (e->next)
        e->next->prev = e->prev;
    else
        c->tail = e->prev;
    e->prev = e->next = NULL;
}

/* Unlinks e from its bucket and the list; returns its state, frees the rest. */
static swf_decider_state_t *entry_remove(swf_decider_cache_t *c, entry_t *e)
{
    entry_t **pp = &c->buckets[hash(e->id) & (c->nbuckets - 1)];
    while (*pp != e)
        pp = &(*pp)->hnext;
    *pp = e->hnext;
    list_unlink(c, e);
    swf_decider_state_t *st = e->st;
    free(e->id);
    free(e);
    c->count--;
    return st;
}

swf_decider_state_t *swf_decider_cache_take(swf_decider_cache_t *c, const char *execution_id)
{
    for (entry_t *e = c->buckets[hash(execution_id) & (c->nbuckets - 1)]; e; e = e->hnext) {
        if (strcmp(e->id, execution_id) == 0) {
            c->hits++;
            return entry_remove(c, e);
        }
    }
    c->misses++;
    return NULL;
}

void swf_decider_cache_put(swf_decider_cache_t *c, const char *execution_id, int32_t partition,
                           swf_decider_state_t *st)
{
    /* An execution is in the cache at most once: a put replaces. */
    for (entry_t *e = c->buckets[hash(execution_id) & (c->nbuckets - 1)]; e; e = e->hnext) {
        if (strcmp(e->id, execution_id) == 0) {
            swf_decider_state_free(entry_remove(c, e));
            break;
        }
    }
    while (c->count >= c->max)
        swf_decider_state_free(entry_remove(c, c->tail));
    entry_t *e = calloc(1, sizeof(*e));
    if (e == NULL || (e->id = strdup(execution_id)) == NULL)
        abort();
    e->partition = partition;
    e->st = st;
    size_t b = hash(execution_id) & (c->nbuckets - 1);
    e->hnext = c->buckets[b];
    c->buckets[b] = e;
    e->next = c->head;
    if (c->head)
        c->head->prev = e;
    c->head = e;
    if (c->tail == NULL)
        c->tail = e;
    c->count++;
}

size_t swf_decider_cache_drop_partition(swf_decider_cache_t *c, int32_t partition)
{
    size_t n = 0;
    for (entry_t *e = c->head, *next; e; e = next) {
        next = e->next;
        if (e->partition == partition) {
            swf_decider_state_free(entry_remove(c, e));
            n++;
        }
    }
    return n;
}

size_t swf_decider_cache_count(const swf_decider_cache_t *c)
{
    return c->count;
}

void swf_decider_cache_stats(const swf_decider_cache_t *c, uint64_t *hits, uint64_t *misses)
{
    *hits = c->hits;
    *misses = c->misses;
}

void swf_decider_cache_free(swf_decider_cache_t *c)
{
    if (c == NULL)
        return;
    while (c->head)
        swf_decider_state_free(entry_remove(c, c->head));
    free(c->buckets);
    json_object_put(c->definitions);
    json_object_put(c->valid);
    free(c);
}
