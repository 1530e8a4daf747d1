/*
 * server.c - swf-api's HTTP server: libmicrohttpd, AWS JSON 1.0, SigV4.
 *
 * Why libmicrohttpd: a small C library in Debian that does HTTP/1.1
 * properly (keep-alive, chunked bodies, pipelining), bounds what a client
 * can make it hold (connections, per-connection memory, idle time), and
 * can suspend a connection without holding a thread, which is what a
 * GetActivityTask long poll needs: thousands of waiting pollers cost a
 * slot each in poll.c's list, not a thread.
 *
 * A request goes through, in this order, and stops at the first refusal:
 * the body is read up to SWF_API_BODY_BYTES (413 beyond, without reading
 * the rest); the Authorization header is parsed and its key looked up
 * (UnrecognizedClientException for an unknown one); the signature is
 * checked over the method, path, signed headers and the body's SHA-256;
 * X-Amz-Target names the action (UnknownOperationException); the body
 * must be one JSON object (SerializationException). Only then does the
 * action run, on the thread the request arrived on (a pool of
 * cfg.threads, each with its own PostgreSQL connection, opened on first
 * use and kept).
 *
 * The log gets one line per request: the action, the access key id, the
 * status and the time taken; never a secret, a signature or a body.
 */
#include "api/internal.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "api/sigv4.h"
#include "history/pg.h"
#include "protocol/json.h"
#include "protocol/time.h"
#include "protocol/token.h"

#define JSON_TYPE "application/x-amz-json-1.0"
#define TARGET_PREFIX "AWSStepFunctions."

typedef struct action {
    const char *name;
    swf_api__action_fn fn;
} action_t;

static const action_t actions[] = {
#define SWF_X(aws, fn) {#aws, swf_api__##fn},
    SWF_API__ACTIONS(SWF_X)
#undef SWF_X
};

typedef enum req_state {
    REQ_READING,
    REQ_SUSPENDED, /* a long poll: poll.c resumes it */
} req_state_t;

/* One request in flight on a connection. */
typedef struct req {
    req_state_t state;
    char *body;
    size_t len, cap;
    bool too_big;
    int64_t start_ms;
    char action[64];
    char key[SWF_API_SIGV4_KEY_BYTES];
    void *waiter; /* poll.c's slot, swf_api__waiter_size() bytes */
    void *sync;   /* sync.c's slot, swf_api__sync_size() bytes */
} req_t;

static void log_line(swf_api_t *api, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void log_line(swf_api_t *api, const char *fmt, ...)
{
    if (api->cfg.log == NULL)
        return;
    char t[SWF_TIME_BUF];
    swf_time_format_ms(swf_time_now_ms(), t);
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&api->log_lock);
    fprintf(api->cfg.log, "%s swf-api: ", t);
    vfprintf(api->cfg.log, fmt, ap);
    fputc('\n', api->cfg.log);
    fflush(api->cfg.log);
    pthread_mutex_unlock(&api->log_lock);
    va_end(ap);
}

swf_error_t *swf_api__store(swf_api_call_t *call, swf_history_store_t **out)
{
    swf_api_t *api = call->api;
    *out = pthread_getspecific(api->store_key);
    if (*out != NULL)
        return NULL;
    swf_error_t *err = swf_history_pg_new(api->conninfo, out);
    if (err != NULL) {
        swf_error_set_retriable(err, true);
        return err;
    }
    pthread_setspecific(api->store_key, *out);
    return NULL;
}

static void store_destroy(void *store)
{
    swf_history_store_free(store);
}

swf_error_t *swf_api__inbox_send(swf_api_t *api, const char *execution_id, json_object *msg)
{
    const char *payload = swf_msg_str(msg);
    swf_kafka_out_t out = {api->names.inbox, execution_id, payload, strlen(payload),
                           RD_KAFKA_RESP_ERR_NO_ERROR};
    swf_error_t *err = swf_kafka_send(api->producer, &out, 1);
    if (err != NULL)
        swf_error_prefix(err, "inbox message for %s not delivered", execution_id);
    return err;
}

/* ---- answering ----------------------------------------------------------------- */

static enum MHD_Result respond(swf_api_t *api, struct MHD_Connection *conn, req_t *r, int status,
                               json_object *body)
{
    const char *text = swf_json_str(body);
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
    MHD_add_response_header(resp, "Content-Type", JSON_TYPE);
    char rid[40];
    snprintf(rid, sizeof(rid), "swf-%lld-%p", (long long)swf_time_now_ms(), (void *)r);
    MHD_add_response_header(resp, "x-amzn-RequestId", rid);
    if (status >= 400) {
        const char *type = swf_json_get_string(body, "__type");
        if (type != NULL)
            MHD_add_response_header(resp, "x-amzn-ErrorType", type);
    }
    enum MHD_Result ret = MHD_queue_response(conn, (unsigned)status, resp);
    MHD_destroy_response(resp);
    log_line(api, "%s key=%s status=%d %lldms", r->action[0] ? r->action : "-",
             r->key[0] ? r->key : "-", status, (long long)(swf_time_now_ms() - r->start_ms));
    return ret;
}

static enum MHD_Result respond_error(swf_api_t *api, struct MHD_Connection *conn, req_t *r,
                                     swf_error_t *err)
{
    int status = swf_api__status(err);
    if (status >= 500)
        log_line(api, "%s failed: %s%s%s", r->action[0] ? r->action : "-", swf_error_message(err),
                 swf_error_cause(err) ? ": " : "",
                 swf_error_cause(err) ? swf_error_cause(err) : "");
    json_object *body = swf_api__error_body(err);
    swf_error_free(err);
    enum MHD_Result ret = respond(api, conn, r, status, body);
    json_object_put(body);
    return ret;
}

/* ---- authentication ------------------------------------------------------------ */

typedef struct headers {
    swf_api_header_t items[SWF_API_SIGV4_HEADERS_MAX * 2];
    size_t n;
    bool overflow;
} headers_t;

static enum MHD_Result header_collect(void *cls, enum MHD_ValueKind kind, const char *key,
                                      const char *value)
{
    headers_t *h = cls;
    if (h->n == sizeof(h->items) / sizeof(h->items[0])) {
        h->overflow = true;
        return MHD_NO;
    }
    h->items[h->n++] = (swf_api_header_t){key, value ? value : ""};
    return MHD_YES;
}

static swf_error_t *authenticate(swf_api_t *api, struct MHD_Connection *conn, const char *method,
                                 const char *url, req_t *r)
{
    headers_t h = {.n = 0};
    MHD_get_connection_values(conn, MHD_HEADER_KIND, header_collect, &h);
    if (h.overflow)
        return swf_api__err("IncompleteSignatureException", "more than %d headers",
                            SWF_API_SIGV4_HEADERS_MAX * 2);
    char hash[65];
    swf_api_sha256_hex(r->body ? r->body : "", r->len, hash);
    swf_api_sigv4_request_t sr = {method, url, NULL, h.items, h.n, hash};
    swf_api_sigv4_auth_t auth;
    swf_error_t *err = swf_api_sigv4_auth_parse(swf_api_header_get(&sr, "authorization"), &auth);
    if (err != NULL)
        return err;
    snprintf(r->key, sizeof(r->key), "%s", auth.access_key);
    const char *secret = swf_api_credentials_secret(api->creds, auth.access_key);
    if (secret == NULL)
        return swf_api__err("UnrecognizedClientException",
                            "The security token included in the request is invalid.");
    return swf_api_sigv4_verify(&sr, &auth, secret, swf_time_now_ms() / 1000);
}

/* ---- the request handler ------------------------------------------------------ */

static const action_t *action_find(const char *target)
{
    if (target == NULL || strncmp(target, TARGET_PREFIX, sizeof(TARGET_PREFIX) - 1) != 0)
        return NULL;
    const char *name = target + sizeof(TARGET_PREFIX) - 1;
    for (size_t i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
        if (strcmp(actions[i].name, name) == 0)
            return &actions[i];
    return NULL;
}

/* POST /events/NAME: a CloudEvent (events.c), signed like every request. */
static enum MHD_Result run_event(swf_api_t *api, struct MHD_Connection *conn, const char *method,
                                 const char *url, req_t *r)
{
    snprintf(r->action, sizeof(r->action), "PostEvent");
    swf_error_t *err = authenticate(api, conn, method, url, r);
    const char *name = url + 8;
    if (err == NULL && (strlen(name) > SWF_API_NAME_BYTES || strchr(name, '/') != NULL))
        err = swf_api__err("ValidationException",
                           "POST /events/NAME: NAME is a state machine's name (1 to %d bytes)",
                           SWF_API_NAME_BYTES);
    if (err == NULL && *name == '\0')
        err = swf_api__err("ValidationException", "POST /events/NAME: NAME is missing");
    json_object *out = NULL;
    swf_api_call_t call = {api, r->key, conn, r->waiter, r->sync};
    if (err == NULL)
        err = swf_api__event_post(&call, name, r->body ? r->body : "", r->len, &out);
    if (err != NULL)
        return respond_error(api, conn, r, err);
    enum MHD_Result ret = respond(api, conn, r, 200, out);
    json_object_put(out);
    return ret;
}

static enum MHD_Result run(swf_api_t *api, struct MHD_Connection *conn, const char *method,
                           const char *url, req_t *r)
{
    if (r->too_big)
        return respond_error(api, conn, r,
                             swf_api__err("RequestEntityTooLarge",
                                          "the request body is larger than %u bytes",
                                          SWF_API_BODY_BYTES));
    if (strcmp(method, "POST") == 0 && strncmp(url, "/events/", 8) == 0)
        return run_event(api, conn, method, url, r);
    if (strcmp(method, "POST") != 0 || strcmp(url, "/") != 0)
        return respond_error(api, conn, r,
                             swf_api__err("UnknownOperationException",
                                          "swf-api answers POST / only (AWS JSON 1.0)"));
    const char *target = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "X-Amz-Target");
    snprintf(r->action, sizeof(r->action), "%s",
             target && strncmp(target, TARGET_PREFIX, sizeof(TARGET_PREFIX) - 1) == 0
                 ? target + sizeof(TARGET_PREFIX) - 1
                 : "?");
    swf_error_t *err = authenticate(api, conn, method, url, r);
    if (err != NULL)
        return respond_error(api, conn, r, err);
    const action_t *a = action_find(target);
    if (a == NULL)
        return respond_error(api, conn, r,
                             swf_api__err("UnknownOperationException", "unknown operation %s",
                                          target ? target : "(no X-Amz-Target)"));
    json_object *in = NULL;
    err = swf_json_parse(r->body ? r->body : "", r->len, SWF_API_BODY_BYTES, &in);
    if (err != NULL || !json_object_is_type(in, json_type_object)) {
        json_object_put(in);
        swf_error_t *e =
            swf_api__err("SerializationException", "the body must be one JSON object%s%s",
                         err ? ": " : "", err ? swf_error_message(err) : "");
        swf_error_free(err);
        return respond_error(api, conn, r, e);
    }
    swf_api_call_t call = {api, r->key, conn, r->waiter, r->sync};
    json_object *out = NULL;
    err = a->fn(&call, in, &out);
    json_object_put(in);
    if (err != NULL)
        return respond_error(api, conn, r, err);
    if (out == NULL) {
        /* A long poll: poll.c or sync.c suspended the connection and
         * resumes it. */
        r->state = REQ_SUSPENDED;
        return MHD_YES;
    }
    enum MHD_Result ret = respond(api, conn, r, 200, out);
    json_object_put(out);
    return ret;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *conn, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    swf_api_t *api = cls;
    req_t *r = *con_cls;
    if (r == NULL) {
        r = calloc(1, sizeof(*r) + swf_api__waiter_size() + swf_api__sync_size());
        if (r == NULL)
            return MHD_NO;
        r->waiter = r + 1;
        r->sync = (char *)r->waiter + swf_api__waiter_size();
        r->start_ms = swf_time_now_ms();
        *con_cls = r;
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
        if (cl != NULL && strtoull(cl, NULL, 10) > SWF_API_BODY_BYTES) {
            /* Answered before the body is read; the connection then closes. */
            r->too_big = true;
            return run(api, conn, method, url, r);
        }
        return MHD_YES;
    }
    if (r->state == REQ_SUSPENDED) {
        json_object *out = NULL;
        swf_error_t *err = NULL;
        swf_api_call_t call = {api, r->key, conn, r->waiter, r->sync};
        if (swf_api__sync_done(&call, &out, &err) && err != NULL)
            return respond_error(api, conn, r, err);
        if (out == NULL && !swf_api__waiter_done(api, r->waiter, &out))
            return MHD_YES;
        enum MHD_Result ret = respond(api, conn, r, 200, out);
        json_object_put(out);
        return ret;
    }
    if (*upload_size > 0) {
        size_t n = *upload_size;
        *upload_size = 0;
        if (r->too_big || r->len + n > SWF_API_BODY_BYTES) {
            /* A body without a Content-Length (chunked) that grows past
             * the bound: the rest is read and dropped, the answer is 413. */
            r->too_big = true;
            return MHD_YES;
        }
        if (r->len + n + 1 > r->cap) {
            size_t cap = r->cap ? r->cap : 4096;
            while (cap < r->len + n + 1)
                cap *= 2;
            char *b = realloc(r->body, cap);
            if (b == NULL)
                return MHD_NO;
            r->body = b;
            r->cap = cap;
        }
        memcpy(r->body + r->len, upload, n);
        r->len += n;
        r->body[r->len] = '\0';
        return MHD_YES;
    }
    return run(api, conn, method, url, r);
}

static void completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                      enum MHD_RequestTerminationCode code)
{
    req_t *r = *con_cls;
    if (r == NULL)
        return;
    swf_api__waiter_clear(cls, r->waiter);
    swf_api__sync_clear(cls, r->sync);
    free(r->body);
    free(r);
    *con_cls = NULL;
}

/* ---- start and stop ------------------------------------------------------------ */

static char *dup_or(const char *s, const char *dflt)
{
    const char *v = s != NULL && s[0] != '\0' ? s : dflt;
    if (v == NULL)
        return NULL;
    char *d = strdup(v);
    if (d == NULL)
        abort();
    return d;
}

swf_error_t *swf_api_start(const swf_api_config_t *cfg, swf_api_t **out)
{
    *out = NULL;
    if (cfg->credentials == NULL || cfg->credentials[0] == '\0')
        return swf_error_new(SWF_E_INPUT, NULL,
                             "no credentials file (--credentials or SWF_API_CREDENTIALS)");
    if (cfg->brokers == NULL || cfg->brokers[0] == '\0')
        return swf_error_new(SWF_E_INPUT, NULL, "no Kafka brokers (SWF_KAFKA_BROKERS)");
    swf_api_t *api = calloc(1, sizeof(*api));
    if (api == NULL)
        abort();
    api->cfg = *cfg;
    api->host = dup_or(cfg->host, "127.0.0.1");
    api->conninfo = dup_or(cfg->conninfo, "");
    api->brokers = dup_or(cfg->brokers, NULL);
    api->region = dup_or(cfg->region, SWF_API_DEFAULT_REGION);
    api->account = dup_or(cfg->account, SWF_API_DEFAULT_ACCOUNT);
    if (api->cfg.threads <= 0)
        api->cfg.threads = 4;
    if (api->cfg.max_connections <= 0)
        api->cfg.max_connections = 1000;
    if (api->cfg.idle_timeout_s <= 0)
        api->cfg.idle_timeout_s = 30;
    if (api->cfg.max_pollers <= 0)
        api->cfg.max_pollers = 1000;
    if (api->cfg.poll_s <= 0 || api->cfg.poll_s > SWF_API_POLL_S)
        api->cfg.poll_s = SWF_API_POLL_S;
    api->secret = swf_token_secret_env();
    pthread_mutex_init(&api->log_lock, NULL);
    pthread_key_create(&api->store_key, store_destroy);
    swf_kafka_names_env(&api->names);
    api->names.brokers = api->brokers;
    swf_error_t *err = swf_api_credentials_load(cfg->credentials, &api->creds);
    if (err == NULL)
        err = swf_kafka_producer_new(
            &(swf_kafka_producer_config_t){.brokers = api->brokers, .client_id = "swf-api"},
            &api->producer);
    if (err == NULL)
        err = swf_api__hub_start(api);
    if (err == NULL)
        err = swf_api__sync_start(api);
    if (err != NULL) {
        swf_api_stop(api);
        return err;
    }
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)cfg->port)};
    if (inet_pton(AF_INET, api->host, &addr.sin_addr) != 1) {
        swf_api_stop(api);
        return swf_error_new(SWF_E_INPUT, NULL, "--host %s: not an IPv4 address", cfg->host);
    }
    api->mhd = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL,
        handler, api, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr, MHD_OPTION_THREAD_POOL_SIZE,
        (unsigned)api->cfg.threads, MHD_OPTION_CONNECTION_LIMIT, (unsigned)api->cfg.max_connections,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)api->cfg.idle_timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)64 * 1024, MHD_OPTION_NOTIFY_COMPLETED,
        completed, api, MHD_OPTION_END);
    if (api->mhd == NULL) {
        swf_api_stop(api);
        return swf_error_new(SWF_E_IO, NULL, "cannot listen on %s:%d",
                             cfg->host ? cfg->host : "127.0.0.1", cfg->port);
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(api->mhd, MHD_DAEMON_INFO_BIND_PORT);
    api->port = info != NULL ? info->port : cfg->port;
    log_line(api, "listening on %s:%d", api->host, api->port);
    *out = api;
    return NULL;
}

int swf_api_port(const swf_api_t *api)
{
    return api->port;
}

void swf_api_stop(swf_api_t *api)
{
    if (api == NULL)
        return;
    /* No new connections, then the pollers answered (MHD stops only when no
     * connection is suspended), then the rest. */
    if (api->mhd != NULL)
        MHD_quiesce_daemon(api->mhd);
    swf_api__hub_stop(api);
    swf_api__sync_stop(api);
    if (api->mhd != NULL)
        MHD_stop_daemon(api->mhd);
    swf_api__hub_free(api);
    swf_api__sync_free(api);
    swf_kafka_producer_free(api->producer);
    swf_api_credentials_free(api->creds);
    pthread_key_delete(api->store_key);
    pthread_mutex_destroy(&api->log_lock);
    free(api->host);
    free(api->conninfo);
    free(api->brokers);
    free(api->region);
    free(api->account);
    free(api);
}
