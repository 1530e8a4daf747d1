/*
 * sigv4.h - AWS Signature Version 4, as a server checks it.
 *
 * Every request to swf-api is signed by its client (the AWS CLI, an SDK)
 * with a secret the server also holds (api/credentials.h). The server
 * rebuilds the canonical request from what it received, derives the signing
 * key from the secret, and compares signatures in constant time; nothing
 * else in the request is believed before that (AWS's "Signature Version 4
 * signing process": canonical request, string to sign, signing key).
 *
 * Only the Authorization-header form is accepted (the AWS JSON protocol's
 * SDKs use it); presigned query strings are not.
 *
 * Errors carry AWS's error names as their name, so that the server answers
 * with them as they are: IncompleteSignatureException (a malformed
 * Authorization header), MissingAuthenticationTokenException (none),
 * InvalidSignatureException (a signature that does not verify, or a date
 * more than SWF_API_SIGV4_SKEW_S away from the server's clock).
 *
 * Ownership: arguments are borrowed; results go into caller buffers.
 * Thread-safety: reentrant.
 */
#ifndef SWF_API_SIGV4_H
#define SWF_API_SIGV4_H

#include <stddef.h>
#include <stdint.h>

#include "protocol/error.h"

/* How far a request's X-Amz-Date may be from the server's clock (AWS: 5 min). */
#define SWF_API_SIGV4_SKEW_S 300
/* Bounds of the Authorization header's parts. */
#define SWF_API_SIGV4_KEY_BYTES 128
#define SWF_API_SIGV4_SCOPE_BYTES 64
#define SWF_API_SIGV4_SIGNED_HEADERS_BYTES 1024
#define SWF_API_SIGV4_HEADERS_MAX 64

/* One received header, as the server got it (any case, untrimmed). */
typedef struct swf_api_header {
    const char *name;
    const char *value;
} swf_api_header_t;

/* What the signature covers. `query` is the raw query string without '?'
 * (NULL or "" for none); its parameters must already be URI-encoded as
 * SigV4 requires. `payload_sha256_hex` is the hex SHA-256 of the body. */
typedef struct swf_api_sigv4_request {
    const char *method;
    const char *path;
    const char *query;
    const swf_api_header_t *headers;
    size_t nheaders;
    const char *payload_sha256_hex;
} swf_api_sigv4_request_t;

/* The parts of "AWS4-HMAC-SHA256 Credential=KEY/DATE/REGION/SERVICE/aws4_request,
 * SignedHeaders=a;b, Signature=HEX". */
typedef struct swf_api_sigv4_auth {
    char access_key[SWF_API_SIGV4_KEY_BYTES];
    char date[9];
    char region[SWF_API_SIGV4_SCOPE_BYTES];
    char service[SWF_API_SIGV4_SCOPE_BYTES];
    char signed_headers[SWF_API_SIGV4_SIGNED_HEADERS_BYTES];
    char signature[65];
} swf_api_sigv4_auth_t;

/* Parses an Authorization header. IncompleteSignatureException when it is
 * not of the form above (naming the part), MissingAuthenticationToken-
 * Exception when `header` is NULL. */
swf_error_t *swf_api_sigv4_auth_parse(const char *header, swf_api_sigv4_auth_t *out);

/* The canonical request of AWS's step 1, into a new string (caller frees).
 * `signed_headers` lists lowercase names joined by ';', sorted; each must
 * be among the request's headers (IncompleteSignatureException otherwise). */
swf_error_t *swf_api_sigv4_canonical(const swf_api_sigv4_request_t *req, const char *signed_headers,
                                     char **out);

/* The hex signature of a request (steps 1 to 4) with the given secret,
 * X-Amz-Date (YYYYMMDDTHHMMSSZ) and scope. */
swf_error_t *swf_api_sigv4_sign(const swf_api_sigv4_request_t *req, const char *secret,
                                const char *amz_date, const swf_api_sigv4_auth_t *auth,
                                char out_hex[65]);

/* Checks a request whose Authorization header parsed into `auth` against
 * `secret`: its X-Amz-Date header (within SWF_API_SIGV4_SKEW_S of now_s,
 * and of the credential's date), that host and x-amz-date are signed, and
 * the signature (constant-time). NULL when it verifies. */
swf_error_t *swf_api_sigv4_verify(const swf_api_sigv4_request_t *req,
                                  const swf_api_sigv4_auth_t *auth, const char *secret,
                                  int64_t now_s);

/* The hex SHA-256 of data[0..len) (65 bytes with the NUL). */
void swf_api_sha256_hex(const void *data, size_t len, char out_hex[65]);

/* The value of the first header named `name` (any case), or NULL. */
const char *swf_api_header_get(const swf_api_sigv4_request_t *req, const char *name);

#endif
