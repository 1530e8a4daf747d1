/*
 * client.h - what the tests of swf-api over a real socket share: a
 * credentials file, signed requests (SigV4, api/sigv4.h) sent over a fresh
 * connection, and checks of the answer's status and __type.
 */
#ifndef SWF_TESTS_API_CLIENT_H
#define SWF_TESTS_API_CLIENT_H

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../dev_cluster.h"
#include "api/api.h"
#include "api/sigv4.h"
#include "cli/dev.h"

/* A suite may name its own key and secret before including this file. */
#ifndef KEY
#define KEY "AKIDTEST"
#define SECRET "test-secret"
#endif
#define SFN "AWSStepFunctions."

/* Writes a credentials file (KEY may use everything, AKIDNARROW only
 * activity:only) to a new temporary path, into path[64]. */
static inline void creds_file(char path[64])
{
    strcpy(path, "/tmp/swf-api-test-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    const char line[] = KEY " " SECRET " *\nAKIDNARROW narrow-secret activity:only\n";
    cr_assert_eq(write(fd, line, sizeof(line) - 1), (ssize_t)sizeof(line) - 1);
    close(fd);
}

/* swf-api on dev's PostgreSQL and Kafka, with a new credentials file
 * (creds) and cfg's other settings (zero: the defaults; 2 threads). */
static inline swf_api_t *api_up(swf_dev_t *dev, char creds[64], swf_api_config_t cfg)
{
    creds_file(creds);
    cfg.conninfo = swf_dev_conninfo(dev);
    cfg.brokers = swf_dev_brokers(dev);
    cfg.credentials = creds;
    if (cfg.threads == 0)
        cfg.threads = 2;
    swf_api_t *api = NULL;
    check(swf_api_start(&cfg, &api));
    return api;
}

static inline void api_down(swf_api_t *api, const char *creds)
{
    swf_api_stop(api);
    unlink(creds);
}

/* The fixture of a suite (no decider): each test gets a dev system and
 * swf-api on it, in the statics dev, api, creds and port. */
#define SWF_API_TEST_SUITE(suite)                                                                  \
    static swf_dev_t *dev;                                                                         \
    static swf_api_t *api;                                                                         \
    static char creds[64];                                                                         \
    static int port;                                                                               \
    static void suite_up(void)                                                                     \
    {                                                                                              \
        swf_dev_options_t opt = {.deciders = 0, .time_scale = 1};                                  \
        check(swf_dev_start(&opt, &dev));                                                          \
        api = api_up(dev, creds, (swf_api_config_t){0});                                           \
        port = swf_api_port(api);                                                                  \
    }                                                                                              \
    static void suite_down(void)                                                                   \
    {                                                                                              \
        api_down(api, creds);                                                                      \
        swf_dev_stop(dev);                                                                         \
    }                                                                                              \
    TestSuite(suite, .init = suite_up, .fini = suite_down, .timeout = 300)

static inline int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    cr_assert_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    return fd;
}

/* Reads the answer on fd until the server closes or wait_ms pass without
 * a byte, closes fd; returns its length (resp is NUL-terminated). */
static inline size_t answer_read(int fd, char *resp, size_t cap, int wait_ms)
{
    size_t got = 0;
    struct pollfd p = {fd, POLLIN, 0};
    while (got + 1 < cap && poll(&p, 1, wait_ms) > 0) {
        ssize_t n = recv(fd, resp + got, cap - 1 - got, 0);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    resp[got] = '\0';
    close(fd);
    return got;
}

/* Sends req[0..len) and reads the answer until the server closes (the
 * requests say Connection: close) or wait_ms pass; returns its length. */
static inline size_t exchange(int port, const char *req, size_t len, char *resp, size_t cap,
                              int wait_ms)
{
    int fd = connect_to(port);
    size_t off = 0;
    while (off < len) {
        ssize_t n = send(fd, req + off, len - off, MSG_NOSIGNAL);
        if (n <= 0)
            break; /* the server may close early (413) */
        off += (size_t)n;
    }
    return answer_read(fd, resp, cap, wait_ms);
}

/* A request of `target` with `body`, signed by key/secret (NULL: unsigned). */
static inline char *request(int port, const char *target, const char *body, const char *key,
                            const char *secret)
{
    char date[17], host[32];
    time_t now = time(NULL);
    strftime(date, sizeof(date), "%Y%m%dT%H%M%SZ", gmtime(&now));
    snprintf(host, sizeof(host), "127.0.0.1:%d", port);
    swf_api_header_t h[] = {{"Content-Type", "application/x-amz-json-1.0"},
                            {"Host", host},
                            {"X-Amz-Date", date},
                            {"X-Amz-Target", target}};
    char sha[65], sig[65] = "";
    swf_api_sha256_hex(body, strlen(body), sha);
    swf_api_sigv4_request_t r = {"POST", "/", NULL, h, 4, sha};
    swf_api_sigv4_auth_t a = {.region = "us-east-1", .service = "states"};
    snprintf(a.access_key, sizeof(a.access_key), "%s", key ? key : "");
    memcpy(a.date, date, 8);
    strcpy(a.signed_headers, "content-type;host;x-amz-date;x-amz-target");
    if (secret != NULL)
        check(swf_api_sigv4_sign(&r, secret, date, &a, sig));
    char auth[2048] = "";
    if (key != NULL)
        snprintf(auth, sizeof(auth),
                 "Authorization: AWS4-HMAC-SHA256 Credential=%s/%.8s/us-east-1/states/"
                 "aws4_request, SignedHeaders=%s, Signature=%s\r\n",
                 key, date, a.signed_headers, sig);
    size_t cap = strlen(body) + 1024;
    char *out = malloc(cap);
    snprintf(out, cap,
             "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-amz-json-1.0\r\n"
             "X-Amz-Date: %s\r\nX-Amz-Target: %s\r\n%sContent-Length: %zu\r\n"
             "Connection: close\r\n\r\n%s",
             host, date, target, auth, strlen(body), body);
    return out;
}

/* Sends a request and checks the status and the __type of the answer. */
static inline void expect(int port, const char *req, int status, const char *type)
{
    char resp[65536];
    size_t n = exchange(port, req, strlen(req), resp, sizeof(resp), 10000);
    cr_assert(n > 0, "no answer to %s", req);
    int got = 0;
    sscanf(resp, "HTTP/1.1 %d", &got);
    cr_assert_eq(got, status, "%d, not %d: %s", got, status, resp);
    if (type != NULL) {
        char want[128];
        snprintf(want, sizeof(want), "\"__type\":\"%s\"", type);
        cr_assert(strstr(resp, want) != NULL, "no %s in %s", type, resp);
    }
}

static inline void expect_signed(int port, const char *target, const char *body, const char *key,
                                 const char *secret, int status, const char *type)
{
    char *req = request(port, target, body, key, secret);
    expect(port, req, status, type);
    free(req);
}

static inline json_object *call_ok(int port, const char *target, const char *body)
{
    char *req = request(port, target, body, KEY, SECRET);
    char resp[65536];
    exchange(port, req, strlen(req), resp, sizeof(resp), 10000);
    free(req);
    cr_assert(strncmp(resp, "HTTP/1.1 200", 12) == 0, "%s: %s", target, resp);
    const char *b = strstr(resp, "\r\n\r\n");
    cr_assert_not_null(b);
    return parse(b + 4);
}

static inline int status_of(int port, const char *target, const char *body)
{
    char *req = request(port, target, body, KEY, SECRET);
    char resp[65536];
    size_t n = exchange(port, req, strlen(req), resp, sizeof(resp), 10000);
    free(req);
    int got = 0;
    if (n > 0)
        sscanf(resp, "HTTP/1.1 %d", &got);
    return got;
}

/* Writes a credentials file (api/credentials.h) of `lines` at path, a
 * mkstemp template it fills in. */
static inline void creds_write(char *path, const char *lines)
{
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    size_t n = strlen(lines);
    cr_assert_eq(write(fd, lines, n), (ssize_t)n);
    close(fd);
}

#endif
