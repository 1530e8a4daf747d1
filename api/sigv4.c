/*
 * sigv4.c - AWS Signature Version 4, checked by the server.
 *
 * The algorithm is AWS's, step by step (the canonical request, the string
 * to sign, the signing key chain HMAC("AWS4" + secret, date) -> region ->
 * service -> "aws4_request", the signature), so each step has a function a
 * test can hold against AWS's published test suite (tests/api/test_sigv4.c).
 *
 * What is checked beyond the signature, and why: the date must be near the
 * server's clock (a captured request cannot be replayed later), and host and
 * x-amz-date must be among the signed headers (AWS requires both; unsigned,
 * they could be changed in flight). Signatures are compared with
 * CRYPTO_memcmp, so the time taken says nothing about how much matched.
 * Secrets never appear in an error message.
 */
#include "api/sigv4.h"

#include <ctype.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "protocol/hash.h"

#define INCOMPLETE "IncompleteSignatureException"
#define INVALID "InvalidSignatureException"

void swf_api_sha256_hex(const void *data, size_t len, char out_hex[65])
{
    uint8_t d[SWF_HASH_SHA256_BYTES];
    swf_hash_digest(SWF_HASH_SHA256, data, len, d);
    swf_hash_hex_encode(d, sizeof(d), out_hex);
}

const char *swf_api_header_get(const swf_api_sigv4_request_t *req, const char *name)
{
    for (size_t i = 0; i < req->nheaders; i++)
        if (strcasecmp(req->headers[i].name, name) == 0)
            return req->headers[i].value;
    return NULL;
}

/* Copies s[0..n) into out (cap bytes); false when it does not fit or is empty. */
static bool part_copy(const char *s, size_t n, char *out, size_t cap)
{
    if (n == 0 || n >= cap)
        return false;
    memcpy(out, s, n);
    out[n] = '\0';
    return true;
}

swf_error_t *swf_api_sigv4_auth_parse(const char *header, swf_api_sigv4_auth_t *out)
{
    memset(out, 0, sizeof(*out));
    if (header == NULL)
        return swf_error_new(SWF_E_INPUT, "MissingAuthenticationTokenException",
                             "Missing Authentication Token");
    static const char alg[] = "AWS4-HMAC-SHA256 ";
    if (strncmp(header, alg, sizeof(alg) - 1) != 0)
        return swf_error_new(SWF_E_INPUT, INCOMPLETE,
                             "Authorization header requires the AWS4-HMAC-SHA256 algorithm");
    const char *p = header + sizeof(alg) - 1;
    bool have_cred = false, have_signed = false, have_sig = false;
    while (*p != '\0') {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p == '\0')
            break;
        const char *eq = strchr(p, '=');
        if (eq == NULL)
            return swf_error_new(SWF_E_INPUT, INCOMPLETE,
                                 "Authorization header: a part without '='");
        const char *end = eq + 1;
        while (*end != '\0' && *end != ',')
            end++;
        size_t klen = (size_t)(eq - p), vlen = (size_t)(end - eq - 1);
        const char *v = eq + 1;
        if (klen == 10 && strncmp(p, "Credential", 10) == 0) {
            /* KEY/DATE/REGION/SERVICE/aws4_request */
            const char *s[5];
            size_t l[5];
            size_t k = 0;
            const char *q = v, *stop = v + vlen;
            while (k < 5) {
                const char *slash = memchr(q, '/', (size_t)(stop - q));
                s[k] = q;
                l[k] = (size_t)((slash ? slash : stop) - q);
                k++;
                if (slash == NULL)
                    break;
                q = slash + 1;
            }
            if (k != 5 || s[4] + l[4] != stop || l[4] != 12 ||
                strncmp(s[4], "aws4_request", 12) != 0 ||
                !part_copy(s[0], l[0], out->access_key, sizeof(out->access_key)) || l[1] != 8 ||
                !part_copy(s[1], l[1], out->date, sizeof(out->date)) ||
                !part_copy(s[2], l[2], out->region, sizeof(out->region)) ||
                !part_copy(s[3], l[3], out->service, sizeof(out->service)))
                return swf_error_new(SWF_E_INPUT, INCOMPLETE,
                                     "Authorization header: Credential must be "
                                     "KEY/YYYYMMDD/REGION/SERVICE/aws4_request");
            have_cred = true;
        } else if (klen == 13 && strncmp(p, "SignedHeaders", 13) == 0) {
            if (!part_copy(v, vlen, out->signed_headers, sizeof(out->signed_headers)))
                return swf_error_new(SWF_E_INPUT, INCOMPLETE,
                                     "Authorization header: SignedHeaders is empty or over %d "
                                     "bytes",
                                     SWF_API_SIGV4_SIGNED_HEADERS_BYTES - 1);
            have_signed = true;
        } else if (klen == 9 && strncmp(p, "Signature", 9) == 0) {
            if (vlen != 64 || !part_copy(v, vlen, out->signature, sizeof(out->signature)))
                return swf_error_new(SWF_E_INPUT, INCOMPLETE,
                                     "Authorization header: Signature must be 64 hex digits");
            for (size_t i = 0; i < 64; i++)
                if (!isxdigit((unsigned char)out->signature[i]))
                    return swf_error_new(SWF_E_INPUT, INCOMPLETE,
                                         "Authorization header: Signature must be 64 hex digits");
            have_sig = true;
        } else {
            return swf_error_new(SWF_E_INPUT, INCOMPLETE, "Authorization header: unknown part");
        }
        p = end;
    }
    if (!have_cred || !have_signed || !have_sig)
        return swf_error_new(SWF_E_INPUT, INCOMPLETE,
                             "Authorization header requires 'Credential', 'SignedHeaders' and "
                             "'Signature'");
    return NULL;
}

/* A growing string; aborts when out of memory, as the project's builders do. */
typedef struct buf {
    char *s;
    size_t len, cap;
} buf_t;

static void buf_add(buf_t *b, const char *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *p = realloc(b->s, cap);
        if (p == NULL)
            abort();
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, n);
    b->len += n;
    b->s[b->len] = '\0';
}

static void buf_str(buf_t *b, const char *s)
{
    buf_add(b, s, strlen(s));
}

/* A header value trimmed, runs of spaces made one (AWS's "Trimall"). */
static void value_add(buf_t *b, const char *v)
{
    while (*v == ' ' || *v == '\t')
        v++;
    size_t n = strlen(v);
    while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
        n--;
    bool space = false;
    for (size_t i = 0; i < n; i++) {
        if (v[i] == ' ' || v[i] == '\t') {
            space = true;
            continue;
        }
        if (space)
            buf_add(b, " ", 1);
        space = false;
        buf_add(b, v + i, 1);
    }
}

static int param_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The query's parameters sorted ("k=v" byte order, a bare k as "k="). */
static void query_add(buf_t *b, const char *query)
{
    if (query == NULL || query[0] == '\0')
        return;
    char *copy = strdup(query);
    if (copy == NULL)
        abort();
    size_t n = 1;
    for (const char *p = copy; *p; p++)
        n += *p == '&';
    char **params = calloc(n, sizeof(*params));
    if (params == NULL)
        abort();
    size_t k = 0;
    for (char *save = NULL, *t = strtok_r(copy, "&", &save); t; t = strtok_r(NULL, "&", &save))
        params[k++] = t;
    qsort(params, k, sizeof(*params), param_cmp);
    for (size_t i = 0; i < k; i++) {
        if (i > 0)
            buf_add(b, "&", 1);
        buf_str(b, params[i]);
        if (strchr(params[i], '=') == NULL)
            buf_add(b, "=", 1);
    }
    free(params);
    free(copy);
}

swf_error_t *swf_api_sigv4_canonical(const swf_api_sigv4_request_t *req, const char *signed_headers,
                                     char **out)
{
    *out = NULL;
    buf_t b = {0};
    buf_str(&b, req->method);
    buf_add(&b, "\n", 1);
    buf_str(&b, req->path);
    buf_add(&b, "\n", 1);
    query_add(&b, req->query);
    buf_add(&b, "\n", 1);
    const char *p = signed_headers;
    size_t count = 0;
    while (*p != '\0') {
        const char *semi = strchr(p, ';');
        size_t n = semi ? (size_t)(semi - p) : strlen(p);
        char name[SWF_API_SIGV4_SIGNED_HEADERS_BYTES];
        if (n == 0 || n >= sizeof(name) || ++count > SWF_API_SIGV4_HEADERS_MAX) {
            free(b.s);
            return swf_error_new(SWF_E_INPUT, INCOMPLETE, "SignedHeaders is malformed");
        }
        memcpy(name, p, n);
        name[n] = '\0';
        for (size_t i = 0; i < n; i++) {
            if (isupper((unsigned char)name[i])) {
                free(b.s);
                return swf_error_new(SWF_E_INPUT, INCOMPLETE,
                                     "SignedHeaders must be lowercase names");
            }
        }
        buf_add(&b, name, n);
        buf_add(&b, ":", 1);
        bool found = false;
        for (size_t i = 0; i < req->nheaders; i++) {
            if (strcasecmp(req->headers[i].name, name) != 0)
                continue;
            if (found)
                buf_add(&b, ",", 1);
            value_add(&b, req->headers[i].value);
            found = true;
        }
        if (!found) {
            free(b.s);
            return swf_error_new(SWF_E_INPUT, INVALID, "the signed header %s is not in the request",
                                 name);
        }
        buf_add(&b, "\n", 1);
        p = semi ? semi + 1 : p + n;
    }
    buf_add(&b, "\n", 1);
    buf_str(&b, signed_headers);
    buf_add(&b, "\n", 1);
    buf_str(&b, req->payload_sha256_hex);
    *out = b.s;
    return NULL;
}

swf_error_t *swf_api_sigv4_sign(const swf_api_sigv4_request_t *req, const char *secret,
                                const char *amz_date, const swf_api_sigv4_auth_t *auth,
                                char out_hex[65])
{
    char *canonical;
    swf_error_t *err = swf_api_sigv4_canonical(req, auth->signed_headers, &canonical);
    if (err != NULL)
        return err;
    char hash[65];
    swf_api_sha256_hex(canonical, strlen(canonical), hash);
    free(canonical);
    buf_t sts = {0};
    buf_str(&sts, "AWS4-HMAC-SHA256\n");
    buf_str(&sts, amz_date);
    buf_add(&sts, "\n", 1);
    buf_str(&sts, auth->date);
    buf_add(&sts, "/", 1);
    buf_str(&sts, auth->region);
    buf_add(&sts, "/", 1);
    buf_str(&sts, auth->service);
    buf_str(&sts, "/aws4_request\n");
    buf_str(&sts, hash);
    /* The signing key: HMAC chain from "AWS4" + secret. */
    size_t slen = strlen(secret);
    char *k0 = malloc(slen + 5);
    if (k0 == NULL)
        abort();
    memcpy(k0, "AWS4", 4);
    memcpy(k0 + 4, secret, slen + 1);
    uint8_t k[SWF_HASH_SHA256_BYTES], k2[SWF_HASH_SHA256_BYTES];
    swf_hash_hmac_sha256(k0, slen + 4, auth->date, strlen(auth->date), k);
    OPENSSL_cleanse(k0, slen + 4);
    free(k0);
    swf_hash_hmac_sha256(k, sizeof(k), auth->region, strlen(auth->region), k2);
    swf_hash_hmac_sha256(k2, sizeof(k2), auth->service, strlen(auth->service), k);
    swf_hash_hmac_sha256(k, sizeof(k), "aws4_request", 12, k2);
    swf_hash_hmac_sha256(k2, sizeof(k2), sts.s, sts.len, k);
    swf_hash_hex_encode(k, sizeof(k), out_hex);
    OPENSSL_cleanse(k2, sizeof(k2));
    free(sts.s);
    return NULL;
}

/* Seconds since the epoch of YYYYMMDDTHHMMSSZ; -1 when malformed. */
static int64_t amz_date_parse(const char *s)
{
    if (s == NULL || strlen(s) != 16 || s[8] != 'T' || s[15] != 'Z')
        return -1;
    for (int i = 0; i < 15; i++)
        if (i != 8 && !isdigit((unsigned char)s[i]))
            return -1;
    struct tm tm = {0};
    tm.tm_year = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0') - 1900;
    tm.tm_mon = (s[4] - '0') * 10 + (s[5] - '0') - 1;
    tm.tm_mday = (s[6] - '0') * 10 + (s[7] - '0');
    tm.tm_hour = (s[9] - '0') * 10 + (s[10] - '0');
    tm.tm_min = (s[11] - '0') * 10 + (s[12] - '0');
    tm.tm_sec = (s[13] - '0') * 10 + (s[14] - '0');
    if (tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
        tm.tm_sec > 60)
        return -1;
    return (int64_t)timegm(&tm);
}

/* Whether `name` is one of the ';'-separated names of list. */
static bool listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *semi = strchr(p, ';');
        size_t len = semi ? (size_t)(semi - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0)
            return true;
        p += len + (semi != NULL);
    }
    return false;
}

swf_error_t *swf_api_sigv4_verify(const swf_api_sigv4_request_t *req,
                                  const swf_api_sigv4_auth_t *auth, const char *secret,
                                  int64_t now_s)
{
    const char *amz_date = swf_api_header_get(req, "x-amz-date");
    int64_t t = amz_date_parse(amz_date);
    if (t < 0)
        return swf_error_new(SWF_E_INPUT, INCOMPLETE,
                             "X-Amz-Date is missing or not of the form YYYYMMDDTHHMMSSZ");
    if (strncmp(amz_date, auth->date, 8) != 0)
        return swf_error_new(SWF_E_INPUT, INVALID,
                             "Credential should be scoped to a valid date: %.8s", amz_date);
    if (!listed(auth->signed_headers, "host") || !listed(auth->signed_headers, "x-amz-date"))
        return swf_error_new(SWF_E_INPUT, INVALID, "host and x-amz-date must be signed headers");
    if (t < now_s - SWF_API_SIGV4_SKEW_S || t > now_s + SWF_API_SIGV4_SKEW_S)
        return swf_error_new(SWF_E_INPUT, INVALID,
                             "Signature expired: %s is more than %d seconds from the server's "
                             "time",
                             amz_date, SWF_API_SIGV4_SKEW_S);
    char expected[65];
    swf_error_t *err = swf_api_sigv4_sign(req, secret, amz_date, auth, expected);
    if (err != NULL)
        return err;
    char got[65];
    for (int i = 0; i < 65; i++)
        got[i] = (char)tolower((unsigned char)auth->signature[i]);
    if (CRYPTO_memcmp(expected, got, 64) != 0)
        return swf_error_new(SWF_E_INPUT, INVALID,
                             "The request signature we calculated does not match the signature "
                             "you provided. Check your AWS Secret Access Key and signing method.");
    return NULL;
}
