/*
 * api.h - swf-api: the AWS Step Functions API over swf.
 *
 * An HTTP/1.1 server (libmicrohttpd) speaking AWS's JSON 1.0 protocol as
 * Step Functions does: `POST /` with `X-Amz-Target: AWSStepFunctions.ACTION`
 * and `Content-Type: application/x-amz-json-1.0`, every request signed with
 * Signature Version 4 (api/sigv4.h) by a key of the credentials file
 * (api/credentials.h). It keeps no state of its own: state machines,
 * activities and executions are PostgreSQL's (history/), and what an
 * execution must react to goes to its inbox on Kafka, signed like every
 * other control message. So any number of servers can run behind a load
 * balancer. api/README.md lists the actions, the limits and what differs
 * from AWS.
 *
 * Ownership: the configuration is borrowed for the duration of
 * swf_api_start (strings are copied); the server is freed by swf_api_stop.
 * Thread-safety: start and stop from one thread; the server runs on
 * threads of its own.
 */
#ifndef SWF_API_API_H
#define SWF_API_API_H

#include <stdio.h>

#include "api/credentials.h"
#include "protocol/error.h"

/* Defaults of the configuration. */
#define SWF_API_DEFAULT_REGION "us-east-1"
#define SWF_API_DEFAULT_ACCOUNT "123456789012"
/* A request body larger than this is refused (413) before it is read
 * whole: AWS's definition quota (1 MiB) written as a JSON string can
 * double, and the rest of a request is small. */
#define SWF_API_BODY_BYTES (3u * 1024u * 1024u)
/* AWS's quota on an execution's input and a task's output. */
#define SWF_API_PAYLOAD_BYTES (256u * 1024u)
/* How long GetActivityTask waits for a task (AWS: 60 s). */
#define SWF_API_POLL_S 60
/* How long StartSyncExecution waits for the close (AWS: an express
 * execution's 5 minutes). */
#define SWF_API_SYNC_S 300

typedef struct swf_api_config {
    const char *host;        /* address to listen on; NULL: 127.0.0.1 */
    int port;                /* 0: any free port (swf_api_port says which) */
    const char *conninfo;    /* PostgreSQL (history/pg.h) */
    const char *brokers;     /* Kafka */
    const char *credentials; /* path of the credentials file */
    const char *region;      /* NULL: SWF_API_DEFAULT_REGION */
    const char *account;     /* NULL: SWF_API_DEFAULT_ACCOUNT */
    int threads;             /* request threads; 0: 4 */
    int max_connections;     /* 0: 1000 */
    int idle_timeout_s;      /* a connection idle this long is closed; 0: 30 */
    int max_pollers;         /* GetActivityTask calls waiting at once; 0: 1000 */
    int poll_s;              /* GetActivityTask's wait; 0: SWF_API_POLL_S (tests shorten it) */
    int sync_s;              /* StartSyncExecution's wait; 0: SWF_API_SYNC_S (tests shorten it) */
    int max_sync_waiters;    /* StartSyncExecution calls waiting at once; 0: 1000 */
    FILE *log;               /* one line per request and per failure; NULL: quiet */
} swf_api_config_t;

typedef struct swf_api swf_api_t;

/* Loads the credentials, connects nothing yet (each request thread opens
 * its own PostgreSQL connection on first use), starts listening. */
swf_error_t *swf_api_start(const swf_api_config_t *cfg, swf_api_t **out);

/* The port the server listens on. */
int swf_api_port(const swf_api_t *api);

/* Answers the waiting pollers (no task), stops the threads, closes the
 * connections and frees the server. NULL does nothing. */
void swf_api_stop(swf_api_t *api);

#endif
