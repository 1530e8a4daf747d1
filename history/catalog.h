/*
 * catalog.h - the catalogue the Step Functions API reads and writes beside
 * the state machines `swf register` keeps (history/pg.h): listing and
 * deleting state machines, their settings (role ARN, type), and activities.
 * `swf register` and the API share the state_machines table, so a machine
 * registered either way is seen both ways.
 *
 * Names are at most SWF_LIMIT_NAME_BYTES; listings are by name, a page at a
 * time (`after`: the last name of the previous page, NULL for the first).
 *
 * Ownership: entries returned belong to the caller
 * (swf_history_catalog_entries_free). Thread-safety: as history/pg.h, one
 * store per thread.
 */
#ifndef SWF_HISTORY_CATALOG_H
#define SWF_HISTORY_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "history/store.h"
#include "protocol/error.h"

typedef struct swf_history_catalog_entry {
    char *name;
    int64_t created_ms; /* the first version's registration, or CreateActivity's */
    int64_t updated_ms; /* state machines: the latest version's registration */
    int version;        /* state machines: the latest version */
    char *role_arn;     /* state machines: NULL when never set (registered by `swf register`) */
    char *type;         /* state machines: "STANDARD" unless set */
} swf_history_catalog_entry_t;

void swf_history_catalog_entries_free(swf_history_catalog_entry_t *items, size_t count);

/* State machines by name after `after`, at most `limit` (1 to 1000). */
swf_error_t *swf_history_pg_state_machines_list(swf_history_store_t *store, const char *after,
                                                size_t limit, swf_history_catalog_entry_t **items,
                                                size_t *count);

/* One state machine's entry; SWF_E_NOTFOUND when it has no version. */
swf_error_t *swf_history_pg_state_machine_entry(swf_history_store_t *store, const char *name,
                                                swf_history_catalog_entry_t *out);

/* Sets a state machine's role ARN and type (NULL leaves one as it is). */
swf_error_t *swf_history_pg_state_machine_settings(swf_history_store_t *store, const char *name,
                                                   const char *role_arn, const char *type);

/* Deletes every version of a state machine, its settings and tags; executions
 * keep running (their histories hold the definition). Deleting one that
 * does not exist is success, as AWS's DeleteStateMachine. */
swf_error_t *swf_history_pg_state_machine_delete(swf_history_store_t *store, const char *name);

/* Every version of a state machine, newest first (at most 1000 after
 * `before`, 0: from the newest), each entry's version and created_ms set. */
swf_error_t *swf_history_pg_state_machine_versions(swf_history_store_t *store, const char *name,
                                                   int before, size_t limit,
                                                   swf_history_catalog_entry_t **items,
                                                   size_t *count);

/* Deletes one version; a version that does not exist is success. */
swf_error_t *swf_history_pg_state_machine_version_delete(swf_history_store_t *store,
                                                         const char *name, int version);

/* Creates an activity; an existing one is success (AWS: CreateActivity is
 * idempotent). *created_ms gets its creation time. */
swf_error_t *swf_history_pg_activity_create(swf_history_store_t *store, const char *name,
                                            int64_t *created_ms);
/* SWF_E_NOTFOUND when there is no such activity. */
swf_error_t *swf_history_pg_activity_entry(swf_history_store_t *store, const char *name,
                                           swf_history_catalog_entry_t *out);
swf_error_t *swf_history_pg_activities_list(swf_history_store_t *store, const char *after,
                                            size_t limit, swf_history_catalog_entry_t **items,
                                            size_t *count);
swf_error_t *swf_history_pg_activity_delete(swf_history_store_t *store, const char *name);

/* Tags of a resource ("stateMachine:NAME", "activity:NAME"): set (added
 * or replaced) and removed by key, listed by key. At most
 * SWF_HISTORY_TAGS per resource (SWF_E_LIMIT beyond, nothing written). */
#define SWF_HISTORY_TAGS 50
typedef struct swf_history_tag {
    char *key;
    char *value;
} swf_history_tag_t;

swf_error_t *swf_history_pg_tags_set(swf_history_store_t *store, const char *resource,
                                     const swf_history_tag_t *tags, size_t n);
swf_error_t *swf_history_pg_tags_remove(swf_history_store_t *store, const char *resource,
                                        const char *const *keys, size_t n);
swf_error_t *swf_history_pg_tags_list(swf_history_store_t *store, const char *resource,
                                      swf_history_tag_t **tags, size_t *n);
void swf_history_tags_free(swf_history_tag_t *tags, size_t n);

/* A state machine's alias (CreateStateMachineAlias): routing is
 * [{"version": N, "weight": W}, ...], one or two entries. */
typedef struct swf_history_alias {
    char *machine;
    char *name;
    char *description;
    json_object *routing; /* owned */
    int64_t created_ms, updated_ms;
} swf_history_alias_t;

void swf_history_aliases_free(swf_history_alias_t *items, size_t count);

/* Creates an alias: SWF_E_CONFLICT (nothing written) when machine:name
 * exists, SWF_E_LIMIT when the machine has SWF_HISTORY_ALIASES already. */
#define SWF_HISTORY_ALIASES 100
swf_error_t *swf_history_pg_alias_create(swf_history_store_t *store, const char *machine,
                                         const char *name, const char *description,
                                         json_object *routing);
/* Changes the description and/or the routing (NULL: kept); SWF_E_NOTFOUND
 * when there is no such alias. */
swf_error_t *swf_history_pg_alias_update(swf_history_store_t *store, const char *machine,
                                         const char *name, const char *description,
                                         json_object *routing);
/* SWF_E_NOTFOUND when there is no such alias. */
swf_error_t *swf_history_pg_alias_get(swf_history_store_t *store, const char *machine,
                                      const char *name, swf_history_alias_t *out);
swf_error_t *swf_history_pg_alias_delete(swf_history_store_t *store, const char *machine,
                                         const char *name);
/* The aliases of machine by name; version > 0: only those routing to it. */
swf_error_t *swf_history_pg_aliases_list(swf_history_store_t *store, const char *machine,
                                         int version, swf_history_alias_t **items, size_t *count);
/* The version (and alias, NULL for none) an execution was started through
 * by the API; *version 0 when it was started otherwise. */
swf_error_t *swf_history_pg_execution_target_set(swf_history_store_t *store,
                                                 const char *execution_id, int version,
                                                 const char *alias);
swf_error_t *swf_history_pg_execution_target_get(swf_history_store_t *store,
                                                 const char *execution_id, int *version,
                                                 char **alias);

/* Another open execution of the workflow id of execution_id (*other
 * malloc'd), or NULL: a redrive would open a second one, which the
 * executions projection does not allow. */
swf_error_t *swf_history_pg_workflow_taken(swf_history_store_t *store, const char *execution_id,
                                           char **other);

/* An execution's redrives (WorkflowExecutionRedriven events): how many,
 * and the time of the last in ms (-1 when none). */
swf_error_t *swf_history_pg_execution_redrives(swf_history_store_t *store, const char *execution_id,
                                               int64_t *count, int64_t *last_ms);
/* Which of n executions are closed (any status but open): closed[i] for
 * execution_ids[i]; one that does not exist reads as open. One query
 * (history/pg_wait.c), for swf-api's StartSyncExecution waiters. */
swf_error_t *swf_history_pg_executions_closed(swf_history_store_t *store,
                                              const char *const *execution_ids, size_t n,
                                              bool *closed);

#endif
