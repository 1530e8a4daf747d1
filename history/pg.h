/*
 * pg.h - the history store in PostgreSQL.
 *
 * swf_history_pg_new() connects, brings the schema up to date (migrations
 * are versioned in the schema_migrations table and applied in one
 * transaction under an advisory lock) and returns a store implementing
 * history/store.h. The functions below take that store (they assert it is a
 * PostgreSQL one) and add what only a database can do: group commit of
 * appends for many executions, reverse and paged reads, listing, state
 * machine registration, starting executions under the workflow-id rule,
 * import, and rebuilding projections.
 *
 * Tables: events (the truth, append-only: a trigger refuses UPDATE, DELETE
 * and TRUNCATE; tamper-evident: another computes each event's hash in a
 * chain, history/CHAIN.md), and the projections written in the same transaction as the
 * events they derive from: executions, timers (pending ones), outbox
 * (ActivityTaskScheduled events awaiting publication; payload = the event's
 * attributes plus executionId and scheduledEventId; topic = the task list).
 * state_machines holds registered definitions and is not a projection.
 *
 * Limits: an execution input given to swf_history_pg_execution_start is at
 * most SWF_HISTORY_START_INPUT_BYTES serialised (1 MiB), or the value of the
 * environment variable SWF_LIMIT_START_INPUT_BYTES when it is set.
 *
 * Lost connections: when the server restarts or closes the session, the
 * call that meets it fails with a retriable SWF_E_DB error ("database
 * connection: ..."), and the transaction it was in is rolled back by the
 * server. The store reconnects by itself at the start of the next call
 * (same conninfo; the next call fails the same way, fast, while the server
 * is still away), so a caller retries rather than reopening the store. An
 * append whose connection broke while it committed may or may not have
 * been written: reload before deciding again (the optimistic check makes
 * a blind retry fail safely with SWF_E_CONFLICT). Put connect_timeout in a
 * TCP conninfo, or a reconnect to an unreachable host waits for the
 * kernel's timeout.
 *
 * Ownership: arguments are borrowed; strings and arrays returned through
 * out-parameters belong to the caller (free them with the matching _free).
 * Thread-safety: a store is one connection, used by one thread at a time;
 * open one store per thread.
 */
#ifndef SWF_HISTORY_PG_H
#define SWF_HISTORY_PG_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "history/store.h"
#include "protocol/error.h"

#define SWF_HISTORY_START_INPUT_BYTES (1024u * 1024u)

/* Connects with a libpq conninfo string or URI ("" or NULL: libpq's PG*
 * environment variables) and migrates the schema to the latest version; a
 * schema already at it is left alone. A role that does not own the schema
 * (a runtime role, `swf db migrate --grant`) never migrates: a schema
 * behind this build is refused, naming `swf db migrate`. */
swf_error_t *swf_history_pg_new(const char *conninfo, swf_history_store_t **out);

/* Connects without migrating (for `swf db migrate` and migration tests). */
swf_error_t *swf_history_pg_connect(const char *conninfo, swf_history_store_t **out);

/* The conninfo the command line uses: $SWF_DATABASE_URL, or "" (PG*). */
const char *swf_history_pg_conninfo_env(void);

/* The newest schema version this build knows. */
int swf_history_pg_schema_latest(void);

/* Applies the migrations after the database's version up to `target` (0: the
 * latest). Running it again is harmless. *from and *to (may be NULL) get the
 * versions before and after. A database newer than this build is refused. */
swf_error_t *swf_history_pg_migrate(swf_history_store_t *store, int target, int *from, int *to);

/* Grants `role` what swf's processes need and nothing that alters the
 * events table (`swf db migrate --grant ROLE`): CONNECT, USAGE on the
 * schema, SELECT and INSERT on events, what the projections need. Run as
 * the schema's owner, after migrating. */
swf_error_t *swf_history_pg_grant(swf_history_store_t *store, const char *role);

/* The database's schema version (0: none yet) and whether the connected
 * role owns the events table (true while there is none). */
swf_error_t *swf_history_pg_schema_version(swf_history_store_t *store, int *version, int *owner);

/* One execution's part of a group commit (the arguments of store.h append). */
typedef struct swf_history_append {
    const char *execution_id;
    int64_t expected_next_id;
    const swf_event_t *events;
    size_t count;
} swf_history_append_t;

/*
 * Appends for several executions in one transaction and one round trip.
 * Each append succeeds or fails on its own: errors[i] gets NULL or the
 * reason appends[i] wrote nothing (SWF_E_CONFLICT for a lost race,
 * SWF_E_NOTFOUND, SWF_E_INPUT); the others are not lost. An execution may
 * appear once per batch. The return value is an error only when the whole
 * batch failed (the database, the connection), and then nothing was written
 * and errors[] is all NULL. Row locks are taken in execution-id order, so
 * concurrent batches do not deadlock.
 */
swf_error_t *swf_history_pg_batch_append(swf_history_store_t *store,
                                         const swf_history_append_t *appends, size_t n,
                                         swf_error_t **errors);

/* Appends to `out`, newest first, the events with id < before_id (0: from
 * the last one), at most `max` (0: all). SWF_E_NOTFOUND for no such
 * execution. */
swf_error_t *swf_history_pg_load_reverse(swf_history_store_t *store, const char *execution_id,
                                         int64_t before_id, size_t max, swf_event_list_t *out);

/* A row of the executions projection. close_ms is -1 while open. */
typedef struct swf_history_execution {
    char *execution_id;
    char *workflow_id;
    char *state_machine;
    char *state_machine_version;
    char *status; /* open, succeeded, failed, timed_out, canceled, terminated */
    int64_t start_ms;
    int64_t close_ms;
    int64_t last_event_id;
} swf_history_execution_t;

void swf_history_execution_free(swf_history_execution_t *ex);
void swf_history_executions_free(swf_history_execution_t *items, size_t count);

swf_error_t *swf_history_pg_execution_describe(swf_history_store_t *store, const char *execution_id,
                                               swf_history_execution_t *out);

/* The execution a workflow id names: the open one when there is one (at
 * most one is open at a time), else the one started last. SWF_E_NOTFOUND
 * when no execution has that workflow id. */
swf_error_t *swf_history_pg_execution_of_workflow(swf_history_store_t *store,
                                                  const char *workflow_id,
                                                  swf_history_execution_t *out);

/* Filters for listing; NULL or 0 fields do not filter. status is a status
 * name or "closed" (any but open). Newest first. */
typedef struct swf_history_filter {
    const char *status;
    const char *state_machine;
    int64_t started_after_ms;  /* 0: no bound */
    int64_t started_before_ms; /* 0: no bound */
    size_t limit;              /* 0: 100 */
} swf_history_filter_t;

swf_error_t *swf_history_pg_executions_list(swf_history_store_t *store,
                                            const swf_history_filter_t *filter,
                                            swf_history_execution_t **items, size_t *count);

/* Registers a new version of a state machine (1, 2, ...); the definition
 * must already be valid. */
swf_error_t *swf_history_pg_state_machine_register(swf_history_store_t *store, const char *name,
                                                   json_object *definition, int *version);

/* The definition of a state machine version (0: the latest): a new
 * reference in *definition; *version gets the version found. */
swf_error_t *swf_history_pg_state_machine_get(swf_history_store_t *store, const char *name,
                                              int version, json_object **definition,
                                              int *version_out);

/* The topic of the outbox rows that tell a nested execution's parent that
 * it closed (payload: the parentWorkflowExecution and
 * parentInitiatedEventId of its WorkflowExecutionStarted). No such topic
 * exists: the publishers post a signed "nested.closed" to the parent's
 * inbox instead (protocol/KAFKA.md). */
#define SWF_HISTORY_NESTED_CLOSED_TOPIC "swf.nested.closed"

/* What starting an execution needs. */
typedef struct swf_history_start {
    const char *execution_id;  /* fresh, unique */
    const char *workflow_id;   /* NULL: the execution id */
    const char *state_machine; /* registered name */
    int version;               /* 0: the latest */
    json_object *input;        /* borrowed; NULL is JSON null */
    int64_t time_ms;
    const char *task_list_prefix; /* NULL: none (protocol/README.md, taskListPrefix) */
    json_object *cloud_events;    /* borrowed; NULL: none (protocol/README.md, cloudEvents) */
    json_object *start_event;     /* borrowed; NULL: none (protocol/README.md, startEvent) */
    const char *parent_id;        /* a nested execution's parent (protocol/started.h), or NULL */
    int64_t parent_event_id;      /* and the parent's ActivityTaskScheduled */
    int nested_depth;             /* the child's depth: 1 under a top execution */
} swf_history_start_t;

/*
 * Starts an execution: appends WorkflowExecutionStarted (with the whole
 * definition and the input) and DecisionTaskScheduled in one append. When
 * an execution with the same workflow id is open, nothing is written, the
 * error is SWF_E_CONFLICT and *running_id (may be NULL) gets that
 * execution's id (caller frees).
 */
swf_error_t *swf_history_pg_execution_start(swf_history_store_t *store,
                                            const swf_history_start_t *start, char **running_id);

/* What swf_history_pg_execution_start checks before it asks the database:
 * the ids and the name are not empty and at most SWF_LIMIT_NAME_BYTES, the
 * input is within the start input limit (above). A caller that must refuse
 * a whole file before starting any of it (`swf start --inputs`) asks here
 * first. */
swf_error_t *swf_history_pg_start_check(const swf_history_start_t *start);

/* The start input limit: SWF_LIMIT_START_INPUT_BYTES when it is set to a
 * number above 0, else SWF_HISTORY_START_INPUT_BYTES. */
size_t swf_history_pg_start_input_limit(void);

/*
 * Starts n executions as swf_history_pg_execution_start starts each, in
 * one transaction and one append statement (swf_history_pg_batch_append),
 * reading the definition once for a run of starts of the same state
 * machine and version. Each start succeeds or fails on its own: errors[i]
 * gets NULL or why starts[i] wrote nothing, the message
 * swf_history_pg_execution_start gives (SWF_E_CONFLICT with the workflow
 * id's open execution in running_ids[i], caller frees, when running_ids is
 * not NULL). Of two starts of one workflow id in one call, one starts and
 * the other loses to it, which one is not said: a caller that wants the
 * first to win gives the second in a later call. The return value is an
 * error only when the whole
 * batch failed (the database), and then nothing was written and errors[]
 * is all NULL.
 */
swf_error_t *swf_history_pg_executions_start(swf_history_store_t *store,
                                             const swf_history_start_t *starts, size_t n,
                                             char **running_ids, swf_error_t **errors);

/* Imports a whole history (ids dense from 1; the execution id is the
 * executionId attribute of its WorkflowExecutionStarted) in one transaction.
 * *execution_id (may be NULL) gets it (caller frees). */
swf_error_t *swf_history_pg_import(swf_history_store_t *store, const swf_event_list_t *events,
                                   char **execution_id);

/*
 * The hash chain (history/CHAIN.md): every event's hash is SHA-256 over the
 * previous event's hash and the event's canonical form, computed by the
 * database as each event is inserted, whoever inserts it. Hashes travel as
 * lowercase hexadecimal (swf_event_hash_t, protocol/event.h).
 */

/* The same as swf_history_pg_import, and when hashes is not NULL
 * (hashes[i] for events->items[i], as swf export wrote them), the hashes
 * the database computes must be these: the first that differs refuses the
 * whole import, naming its event (SWF_E_INPUT). */
swf_error_t *swf_history_pg_import_chained(swf_history_store_t *store,
                                           const swf_event_list_t *events,
                                           const swf_event_hash_t *hashes, char **execution_id);

/* The hashes of events 1 .. count of an execution into hashes[0 ..
 * count) (the caller's array). SWF_E_NOTFOUND when the execution has fewer
 * events. */
swf_error_t *swf_history_pg_chain_load(swf_history_store_t *store, const char *execution_id,
                                       size_t count, swf_event_hash_t *hashes);

/* The hash of one event into *hash. SWF_E_NOTFOUND when there is no such
 * event. */
swf_error_t *swf_history_pg_chain_hash(swf_history_store_t *store, const char *execution_id,
                                       int64_t event_id, swf_event_hash_t hash);

/* What swf_history_pg_chain_check found. */
typedef struct swf_history_chain {
    int64_t head_id;            /* the last event's id; 0: no events */
    swf_event_hash_t head_hash; /* its hash ("" when none) */
    int64_t broken_id;          /* the first event where the chain breaks; 0: it holds */
    char broken[384];           /* what differs there, a sentence */
} swf_history_chain_t;

/*
 * Verifies an execution's chain in the database: each event's stored hash
 * must be the hash of its content and the stored hash of the event before
 * it, event ids dense from 1, and the last id no lower than the
 * executions row's. The first event where that fails is reported in *out
 * (a finding, not an error); errors are operating ones only, and
 * SWF_E_NOTFOUND when the execution has no events.
 */
swf_error_t *swf_history_pg_chain_check(swf_history_store_t *store, const char *execution_id,
                                        swf_history_chain_t *out);

/* Which function the events_chain trigger runs (history/CHAIN.md, "Where
 * it is computed"): both store the same hashes. */
typedef enum swf_history_chain_impl {
    SWF_HISTORY_CHAIN_AUTO = 0, /* asked: C where the server has swf_chain, else plpgsql */
    SWF_HISTORY_CHAIN_C,        /* the extension swf_chain (history/pgext/swf_chain.c) */
    SWF_HISTORY_CHAIN_PLPGSQL,  /* migration 7's swf_events_chain() */
} swf_history_chain_impl_t;

/* What swf_history_pg_chain_use left in place. */
typedef struct swf_history_chain_use {
    swf_history_chain_impl_t impl; /* SWF_HISTORY_CHAIN_C or _PLPGSQL */
    bool changed;                  /* the trigger was pointed elsewhere by this call */
    char says[512];                /* which, and why, a sentence for the operator */
} swf_history_chain_use_t;

/*
 * Points the events_chain trigger at the implementation `want` names, in
 * one transaction (`swf db migrate [--chain auto|c|plpgsql]`). C needs the
 * extension swf_chain on the server (installed as root): it is created in
 * the current schema when the database has it not (the role needs CREATE
 * on the database, the extension being trusted, or a superuser creates it
 * once), and the trigger then runs its function. AUTO takes C when the
 * server has the files and the role may create it or it exists, plpgsql
 * otherwise (and goes back to plpgsql when the files are gone); C refuses
 * with SWF_E_DB when it cannot. Going back to plpgsql drops the extension
 * when nothing else uses it. Run as the owner, after migrating to 7 or
 * later. Changing nothing takes no lock on events; changing the trigger
 * blocks appends for that moment.
 */
swf_error_t *swf_history_pg_chain_use(swf_history_store_t *store, swf_history_chain_impl_t want,
                                      swf_history_chain_use_t *out);

/* Recomputes the executions and timers projections from the events alone,
 * in one transaction that blocks appends meanwhile. The outbox is kept as it
 * is: a published row is deleted, and the events cannot tell which were. */
swf_error_t *swf_history_pg_projections_rebuild(swf_history_store_t *store, size_t *executions,
                                                size_t *timers);

/*
 * Loads, for each i, the events of execution_ids[i] after after_ids[i]
 * into outs[i] (appended), in one round trip however many executions there
 * are (pg_batch.c). errors[i] gets NULL or SWF_E_NOTFOUND (after_ids[i] is
 * 0 and there is no such execution); the return value is an error only
 * when the whole load failed, and then errors[] is all NULL and outs[] may
 * hold part of the events (the caller drops them).
 */
swf_error_t *swf_history_pg_load_batch(swf_history_store_t *store, const char *const *execution_ids,
                                       const int64_t *after_ids, size_t n, swf_event_list_t *outs,
                                       swf_error_t **errors);

/* Makes the commits of this connection return before their WAL reaches the
 * disk (synchronous_commit off, for this store's sessions: set again when
 * it reconnects). Only for writes whose loss in a crash is harmless: a
 * decider deletes the outbox rows of tasks Kafka acknowledged this way, and
 * a row a crash brings back is only published again (a duplicate task,
 * which workers and the decider tolerate). */
swf_error_t *swf_history_pg_commit_async(swf_history_store_t *store);

/* The open Serverless Workflow instances of `state_machine` that a
 * CloudEvent of trigger `trigger` with correlation value `value` (borrowed;
 * NULL: its trigger has no token) may reach or be kept by, from the
 * sw_instances projection (pg_sw.c): those whose correlation value equals
 * `value`, and those without one (any, when `value` is NULL) whose waiting
 * states record `trigger` or whose waits are not known yet. Oldest first, at
 * most `limit`. *ids (count of them) is new: free each and the array. */
swf_error_t *swf_history_pg_sw_candidates(swf_history_store_t *store, const char *state_machine,
                                          const char *trigger, json_object *value, size_t limit,
                                          char ***ids, size_t *count);

#endif
