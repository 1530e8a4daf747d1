/*
 * client.h - a signed Step Functions request over a plain socket, for the
 * tests of swf-api (test_server.c, test_sync.c): one request a connection
 * (Connection: close), signed with SigV4 by api/sigv4.h, and the answer
 * read whole. KEY and SECRET, the test's credentials, are defined by the
 * test before including it.
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
#include "api/sigv4.h"

#define SFN "AWSStepFunctions."

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

/* The JSON body of the answer to a signed request, which must have status 200. */
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
