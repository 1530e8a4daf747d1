/*
 * token.c - making and verifying signed task tokens.
 *
 * The signature is HMAC-SHA256 (protocol/hash.c, libcrypto's) and is
 * compared with libcrypto's constant-time CRYPTO_memcmp; nothing in the
 * payload is looked at before it verifies: a token is either exactly one we
 * issued or it is refused. The signature is compared as the text the token
 * carries, not decoded: base64url's last character has bits no byte uses,
 * and only the one spelling we issue is accepted. The base64url decoding of
 * the payload is the strict decoder of hash.c (libcrypto's accepts white
 * space and stray padding), translated from the URL alphabet.
 */
#include "protocol/token.h"

#include <openssl/crypto.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/hash.h"
#include "protocol/json.h"

const char *swf_token_secret_env(void)
{
    const char *s = getenv("SWF_TOKEN_SECRET");
    return s && *s ? s : SWF_TOKEN_DEV_SECRET;
}

/* base64url without padding: the standard encoding, translated. */
static char *b64url(const void *data, size_t len)
{
    char *out = NULL;
    swf_error_t *err = swf_base64_encode(data, len, &out);
    if (err != NULL)
        abort();
    size_t n = strlen(out);
    while (n > 0 && out[n - 1] == '=')
        out[--n] = '\0';
    for (size_t i = 0; i < n; i++) {
        if (out[i] == '+')
            out[i] = '-';
        else if (out[i] == '/')
            out[i] = '_';
    }
    return out;
}

static swf_error_t *b64url_decode(const char *text, size_t len, uint8_t **out, size_t *out_len)
{
    char *buf = malloc(len + 4);
    if (buf == NULL)
        abort();
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '+' || c == '/' || c == '=') {
            free(buf);
            return swf_error_new(SWF_E_INPUT, NULL, "malformed task token");
        }
        buf[i] = c == '-' ? '+' : c == '_' ? '/' : c;
    }
    size_t n = len;
    while (n % 4 != 0)
        buf[n++] = '=';
    swf_error_t *err = swf_base64_decode(buf, n, out, out_len);
    free(buf);
    if (err != NULL) {
        swf_error_free(err);
        return swf_error_new(SWF_E_INPUT, NULL, "malformed task token");
    }
    return NULL;
}

static char *sign(const char *secret, const char *payload, size_t len)
{
    uint8_t mac[32];
    swf_hash_hmac_sha256(secret, strlen(secret), payload, len, mac);
    return b64url(mac, sizeof(mac));
}

char *swf_token_make(const char *secret, const char *execution_id, const char *activity_id)
{
    json_object *p = json_object_new_object();
    swf_json_add(p, "e", json_object_new_string(execution_id));
    swf_json_add(p, "a", json_object_new_string(activity_id));
    const char *payload = swf_json_str(p);
    char *body = b64url(payload, strlen(payload));
    char *mac = sign(secret, body, strlen(body));
    size_t n = strlen(body) + 1 + strlen(mac) + 1;
    char *token = malloc(n);
    if (token == NULL)
        abort();
    memcpy(token, body, strlen(body));
    token[strlen(body)] = '.';
    memcpy(token + strlen(body) + 1, mac, strlen(mac) + 1);
    free(body);
    free(mac);
    json_object_put(p);
    return token;
}

swf_error_t *swf_token_verify(const char *secret, const char *token, char **execution_id,
                              char **activity_id)
{
    *execution_id = *activity_id = NULL;
    size_t len = token ? strnlen(token, SWF_TOKEN_MAX_BYTES + 1) : 0;
    if (len == 0 || len > SWF_TOKEN_MAX_BYTES)
        return swf_error_new(SWF_E_INPUT, NULL, "malformed task token");
    const char *dot = memchr(token, '.', len);
    if (dot == NULL)
        return swf_error_new(SWF_E_INPUT, NULL, "malformed task token");
    size_t body_len = (size_t)(dot - token);
    char *want = sign(secret, token, body_len);
    const char *got = dot + 1;
    size_t wl = strlen(want), gl = len - body_len - 1;
    /* The length of a signature is no secret (43 characters always); its
     * characters are compared in constant time. */
    bool forged = wl != gl || CRYPTO_memcmp(want, got, wl) != 0;
    free(want);
    if (forged)
        return swf_error_new(SWF_E_INPUT, NULL, "forged or altered task token");
    uint8_t *raw = NULL;
    size_t raw_len = 0;
    swf_error_t *err = b64url_decode(token, body_len, &raw, &raw_len);
    if (err != NULL)
        return err;
    json_object *p = NULL;
    err = swf_json_parse((const char *)raw, raw_len, SWF_TOKEN_MAX_BYTES, &p);
    free(raw);
    if (err != NULL) {
        swf_error_free(err);
        return swf_error_new(SWF_E_INPUT, NULL, "malformed task token");
    }
    const char *e = swf_json_get_string(p, "e"), *a = swf_json_get_string(p, "a");
    if (e == NULL || a == NULL) {
        json_object_put(p);
        return swf_error_new(SWF_E_INPUT, NULL, "malformed task token");
    }
    *execution_id = strdup(e);
    *activity_id = strdup(a);
    json_object_put(p);
    if (*execution_id == NULL || *activity_id == NULL)
        abort();
    return NULL;
}
