/*
 * internal.h - what the files of api/ share: the server, a call's context,
 * AWS's errors and ARNs, and the actions (one function each, grouped by
 * resource: machines.c, aliases.c, executions.c, redrive.c, teststate.c,
 * history.c, activities.c, poll.c).
 *
 * An action takes the request's JSON object (borrowed) and on success puts
 * its answer in *out (a new reference). On failure it returns an error
 * whose name is AWS's error name (`ExecutionDoesNotExist`, ...), which the
 * server writes as {"__type": NAME, "message": ...} with the HTTP status
 * AWS gives it (errors.c); an error without a name is an internal failure
 * (500), or 503 when a retry can help (PostgreSQL or Kafka away).
 */
#ifndef SWF_API_INTERNAL_H
#define SWF_API_INTERNAL_H

#include <json-c/json.h>
#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "api/api.h"
#include "api/credentials.h"
#include "history/store.h"
#include "kafka/kafka.h"
#include "protocol/error.h"

typedef struct swf_api__hub swf_api__hub_t;
typedef struct swf_api__syncs swf_api__syncs_t;

struct swf_api {
    swf_api_config_t cfg; /* strings below are copies */
    char *host, *conninfo, *brokers, *region, *account;
    swf_api_credentials_t *creds;
    struct MHD_Daemon *mhd;
    int port;
    rd_kafka_t *producer;
    swf_kafka_names_t names;
    const char *secret;      /* task tokens and control messages (protocol/token.h) */
    pthread_key_t store_key; /* each request thread's PostgreSQL store */
    swf_api__hub_t *hub;     /* GetActivityTask's pollers (poll.c) */
    swf_api__syncs_t *syncs; /* StartSyncExecution's waiters (sync.c) */
    pthread_mutex_t log_lock;
};

typedef struct swf_api_call {
    swf_api_t *api;
    const char *key; /* the access key id that signed the request */
    void *conn;      /* the connection (struct MHD_Connection), for a long poll */
    void *waiter;    /* the connection's poll slot (poll.c) */
    void *sync;      /* the connection's StartSyncExecution slot (sync.c) */
} swf_api_call_t;

typedef swf_error_t *(*swf_api__action_fn)(swf_api_call_t *call, json_object *in,
                                           json_object **out);

/* ---- errors (errors.c) ---------------------------------------------------- */

/* An error named with AWS's error name. */
swf_error_t *swf_api__err(const char *aws_name, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The HTTP status and the __type of an error. */
int swf_api__status(const swf_error_t *err);
const char *swf_api__type(const swf_error_t *err);
/* The body of an error answer (a new reference). */
json_object *swf_api__error_body(const swf_error_t *err);

/* ---- ARNs and names (arn.c) ---------------------------------------------- */

#define SWF_API_NAME_BYTES 80
#define SWF_API_ARN_BYTES 512
/* A nextToken, as AWS bounds it. */
#define SWF_API_TOKEN_BYTES 3072

/* arn:aws:states:REGION:ACCOUNT:KIND:NAME[:SUB] into buf. */
void swf_api__arn(const swf_api_t *api, const char *kind, const char *name, const char *sub,
                  char buf[SWF_API_ARN_BYTES]);
/* Parses an ARN of `kind` ("stateMachine", "execution", "activity"): name
 * gets the first name after the kind, sub (may be NULL) the second or "".
 * InvalidArn when it is not one. */
swf_error_t *swf_api__arn_parse(const char *arn, const char *kind,
                                char name[SWF_API_NAME_BYTES + 1],
                                char sub[SWF_API_NAME_BYTES + 1]);
/* The state machine the member `key` of in names, and the key's right to
 * it. With version non-NULL a version ARN (NAME:N) is taken too, *version
 * getting N (0: none); an alias is InvalidArn (not supported). */
swf_error_t *swf_api__machine_arn(swf_api_call_t *call, json_object *in, const char *key,
                                  char name[SWF_API_NAME_BYTES + 1], int *version);
/* InvalidDefinition listing the problems swf's validator finds in def,
 * with their JSON paths (machines.c). */
swf_error_t *swf_api__definition_check(json_object *def);
/* InvalidName unless name is 1 to 80 characters AWS allows in a name. */
swf_error_t *swf_api__name_check(const char *name);

/* ---- request members ------------------------------------------------------ */

/* The string member `key` of in: NULL when absent and !required;
 * ValidationException when absent and required, not a string, or longer
 * than max bytes. */
swf_error_t *swf_api__str(json_object *in, const char *key, bool required, size_t max,
                          const char **out);
/* An integer member in [lo, hi]; *out keeps its value when absent. */
swf_error_t *swf_api__int(json_object *in, const char *key, int64_t lo, int64_t hi, int64_t *out);
/* A boolean member; *out keeps its value when absent. */
swf_error_t *swf_api__bool(json_object *in, const char *key, bool *out);

/* maxResults: 1 to 1000, 100 when absent or 0 (AWS's default). */
swf_error_t *swf_api__max_results(json_object *in, int64_t *max);

/* The nextToken of a listing that pages by position: *offset gets it (0
 * when absent); InvalidToken unless it is a number from 0 to max_offset. */
swf_error_t *swf_api__page_token(json_object *in, long max_offset, long *offset);

/* A page of a listing by name (ListStateMachines, ListActivities):
 * reads maxResults and nextToken (the last name of the previous page),
 * lists with `list`, keeps the entries the key may use (kind), each made
 * into JSON by `item`, under `member`. */
typedef struct swf_history_catalog_entry swf_history_catalog_entry_t;
typedef swf_error_t *(*swf_api__list_fn)(swf_history_store_t *store, const char *after,
                                         size_t limit, swf_history_catalog_entry_t **items,
                                         size_t *count);
typedef json_object *(*swf_api__item_fn)(swf_api_call_t *call,
                                         const swf_history_catalog_entry_t *e);
swf_error_t *swf_api__names_page(swf_api_call_t *call, json_object *in, const char *kind,
                                 swf_api__list_fn list, swf_api__item_fn item, const char *member,
                                 json_object **out);

/* The catalogue's entry of state machine name; StateMachineDoesNotExist
 * when there is none (machines.c). */
swf_error_t *swf_api__machine_entry(swf_api_call_t *call, const char *name,
                                    swf_history_catalog_entry_t *e);

/* AccessDeniedException unless the call's key may use kind:name. */
swf_error_t *swf_api__allowed(swf_api_call_t *call, const char *kind, const char *name);

/* The PostgreSQL store of the calling thread, opened on first use. */
swf_error_t *swf_api__store(swf_api_call_t *call, swf_history_store_t **out);

/* Sends one message to the inbox keyed by execution_id and waits for
 * Kafka's acknowledgement. */
swf_error_t *swf_api__inbox_send(swf_api_t *api, const char *execution_id, json_object *msg);

/* Epoch seconds of a time in ms, as the JSON protocol writes timestamps. */
json_object *swf_api__time(int64_t ms);

/* ---- actions -------------------------------------------------------------- */

#define SWF_API__ACTIONS(X)                                                                        \
    X(CreateStateMachine, machine_create)                                                          \
    X(DescribeStateMachine, machine_describe)                                                      \
    X(UpdateStateMachine, machine_update)                                                          \
    X(DeleteStateMachine, machine_delete)                                                          \
    X(ListStateMachines, machines_list)                                                            \
    X(ValidateStateMachineDefinition, machine_validate)                                            \
    X(DescribeStateMachineForExecution, machine_for_execution)                                     \
    X(PublishStateMachineVersion, version_publish)                                                 \
    X(ListStateMachineVersions, versions_list)                                                     \
    X(DeleteStateMachineVersion, version_delete)                                                   \
    X(StartExecution, execution_start)                                                             \
    X(DescribeExecution, execution_describe)                                                       \
    X(StopExecution, execution_stop)                                                               \
    X(ListExecutions, executions_list)                                                             \
    X(GetExecutionHistory, execution_history)                                                      \
    X(CreateActivity, activity_create)                                                             \
    X(DescribeActivity, activity_describe)                                                         \
    X(DeleteActivity, activity_delete)                                                             \
    X(ListActivities, activities_list)                                                             \
    X(GetActivityTask, activity_task_get)                                                          \
    X(SendTaskSuccess, task_success)                                                               \
    X(SendTaskFailure, task_failure)                                                               \
    X(SendTaskHeartbeat, task_heartbeat)                                                           \
    X(TagResource, tag_resource)                                                                   \
    X(UntagResource, untag_resource)                                                               \
    X(ListTagsForResource, tags_list)                                                              \
    X(StartSyncExecution, execution_start_sync)                                                    \
    X(RedriveExecution, execution_redrive)                                                         \
    X(TestState, state_test)                                                                       \
    X(CreateStateMachineAlias, alias_create)                                                       \
    X(DescribeStateMachineAlias, alias_describe)                                                   \
    X(UpdateStateMachineAlias, alias_update)                                                       \
    X(DeleteStateMachineAlias, alias_delete)                                                       \
    X(ListStateMachineAliases, aliases_list)                                                       \
    X(DescribeMapRun, map_run_describe)                                                            \
    X(ListMapRuns, map_runs_list)                                                                  \
    X(UpdateMapRun, map_run_update)

#define SWF_API__DECLARE(aws, fn)                                                                  \
    swf_error_t *swf_api__##fn(swf_api_call_t *call, json_object *in, json_object **out);
SWF_API__ACTIONS(SWF_API__DECLARE)
#undef SWF_API__DECLARE

/* POST /events/NAME (events.c): the CloudEvent of the request (body and
 * headers, structured or binary mode) routed to NAME's instances; *out
 * gets the outcome. */
swf_error_t *swf_api__event_post(swf_api_call_t *call, const char *name, const char *body,
                                 size_t len, json_object **out);

/* ---- executions (executions.c), for history.c and activities.c ------------ */

/* The execution the request's executionArn names, checked against its
 * state machine, and the key's right to it: ValidationException,
 * InvalidArn, ExecutionDoesNotExist, AccessDeniedException. */
typedef struct swf_history_execution swf_history_execution_t;
swf_error_t *swf_api__execution_find(swf_api_call_t *call, json_object *in,
                                     swf_history_execution_t *out);
/* AWS's status of a row of the executions projection. */
const char *swf_api__execution_status(const char *status);
/* The state machine, and the version to run (0: the latest), that the
 * member `key` names: a machine, version or alias ARN; an alias draws its
 * version by its weights and alias gets its name ("" otherwise)
 * (aliases.c). */
swf_error_t *swf_api__machine_target(swf_api_call_t *call, json_object *in, const char *key,
                                     char machine[SWF_API_NAME_BYTES + 1], int *version,
                                     char alias[SWF_API_NAME_BYTES + 1]);
/* Records that an execution started through a version (and alias) ARN;
 * nothing for version 0. */
void swf_api__execution_target_record(swf_api_call_t *call, const char *execution_id, int version,
                                      const char *alias);
/* DescribeExecution's stateMachineVersionArn and stateMachineAliasArn. */
void swf_api__execution_target_describe(swf_api_call_t *call, const swf_history_execution_t *ex,
                                        json_object *o);
/* DescribeExecution's redrive fields of ex, added to o (redrive.c). */
void swf_api__redrive_describe(swf_api_call_t *call, const swf_history_execution_t *ex,
                               json_object *o);

/* ListExecutions of a mapRunArn (maprun.c): the Map Run's iterations
 * started, as AWS lists its child executions; status and redrive are the
 * filters (checked already, may be NULL), max and offset the page. */
swf_error_t *swf_api__map_run_executions(swf_api_call_t *call, json_object *in, const char *status,
                                         const char *redrive, int64_t max, long offset,
                                         json_object **out);

/* ---- history (history.c) -------------------------------------------------- */

/* How the events are derived: `data` is includeExecutionData; `role` the
 * roleArn of ExecutionStarted, or NULL; a Map Run's ARN is run_arn (the
 * prefix "arn:aws:states:REGION:ACCOUNT:mapRun:MACHINE/", or NULL), the
 * Map's Label (else its name), ':', execution_id, '-' and the run's number
 * in the execution from 1 (maprun.c). */
typedef struct swf_api__derive {
    bool data;
    const char *role;
    const char *run_arn;
    const char *execution_id;
} swf_api__derive_t;

/* The Step Functions events of a stored history (GetExecutionHistory's
 * "events", all of them, oldest first): a new array in *out; and, when
 * runs is not NULL, its distributed Maps' runs in the order they started
 * (a new array of objects: "mapRunArn", "number" (its number, from 1),
 * "label", "path", "status", "startMs", "stopMs" once closed,
 * "maxConcurrency", "toleratedFailureCount", "toleratedFailurePercentage",
 * "redriveCount" and "redriveMs" once redriven, "iterations": [{"items",
 * "status", "startMs", "stopMs", "redriveCount" once run again by a
 * redrive}]); a redriven run is there again (the same object) at the
 * number the interpreter gave its second begin, which is not its "number".
 * Errors: the replay's (a history the interpreter cannot replay). */
swf_error_t *swf_api__history_derive(const swf_event_list_t *events, const swf_api__derive_t *d,
                                     json_object **out, json_object **runs);
/* The same for the execution ex, read from the store, with the call's
 * region and account in the ARNs. */
swf_error_t *swf_api__execution_derive(swf_api_call_t *call, const swf_history_execution_t *ex,
                                       bool data, json_object **events, json_object **runs);

/* The "tags" member of a Create request, set on kind:name (tags.c). */
swf_error_t *swf_api__tags_apply(swf_api_call_t *call, const char *kind, const char *name,
                                 json_object *in);

/* ---- the long poll (poll.c) ------------------------------------------------ */

/* Starts and stops the thread that reads task lists for waiting pollers;
 * stopping answers the waiters (empty, as at the end of a poll) and waits
 * until their answers are sent before it returns; a poll that comes after
 * is answered empty at once. The rest (the consumers) is freed after
 * libmicrohttpd stopped. */
swf_error_t *swf_api__hub_start(swf_api_t *api);
void swf_api__hub_stop(swf_api_t *api);
void swf_api__hub_free(swf_api_t *api);
/* Waits until *left (read under lock) is 0, at most 5 s: the waiters a
 * stop answered (poll.c, sync.c) until their answers are sent. */
void swf_api__drain_wait(pthread_mutex_t *lock, const int *left);
/* A poll slot's size, for the connection to hold one. */
size_t swf_api__waiter_size(void);
/* Whether the slot was filled (the connection was resumed with an answer);
 * *out gets the answer (a new reference). A task answer is reported started
 * here (activity.started), in the request's thread. */
bool swf_api__waiter_done(swf_api_t *api, void *waiter, json_object **out);
/* The connection's request completed (its answer sent, or it closed):
 * drops what a filled slot still holds. */
void swf_api__waiter_clear(swf_api_t *api, void *waiter);

/* ---- EXPRESS and StartSyncExecution (sync.c) --------------------------------- */

/* The type member of CreateStateMachine: NULL when absent, else STANDARD
 * or EXPRESS (ValidationException otherwise). */
swf_error_t *swf_api__machine_type(json_object *in, const char **type);
/* InvalidDefinition when an EXPRESS machine's definition uses what AWS
 * runs in STANDARD machines only (activities, .sync, .waitForTaskToken). */
swf_error_t *swf_api__express_check(json_object *definition);
/* The same as a diagnostic of ValidateStateMachineDefinition (a new
 * object), or NULL. */
json_object *swf_api__express_diagnostic(json_object *definition);
/* Starts and stops the thread that watches for the executions waited for;
 * stopping answers the waiters (ServiceUnavailable) before it returns, and
 * the rest is freed after libmicrohttpd stopped. */
swf_error_t *swf_api__sync_start(swf_api_t *api);
void swf_api__sync_stop(swf_api_t *api);
void swf_api__sync_free(swf_api_t *api);
/* The connection's request completed (its answer sent, or it closed). */
void swf_api__sync_clear(swf_api_t *api, void *sync);
/* A StartSyncExecution slot's size, for the connection to hold one. */
size_t swf_api__sync_size(void);
/* Whether the call's slot ended its wait (the connection was resumed);
 * then *out gets the answer (a new reference) or *err the error. */
bool swf_api__sync_done(swf_api_call_t *call, json_object **out, swf_error_t **err);

#endif
