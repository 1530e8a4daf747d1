/*
 * hash.c - the digests of States.Hash and the HMAC that signs task tokens,
 * from libcrypto (OpenSSL), base64 and hex around them, and random UUIDs.
 *
 * Digests and HMAC are libcrypto's EVP interfaces: EVP_Digest for MD5,
 * SHA-1 and SHA-2, EVP_Q_mac for HMAC-SHA256 (OpenSSL 3.0; none of the
 * deprecated low-level calls). libpq and librdkafka load libcrypto already,
 * so it costs the programs nothing, and its implementations are audited
 * and fast where ours were written for clarity. The algorithms come from
 * the default provider. One that cannot compute a digest (a FIPS-only
 * configuration has no MD5) stops the program with a message rather than
 * failing the one execution: States.Hash is part of recorded decisions, and
 * a decider that answers differently from the one that recorded them would
 * break replay.
 *
 * Two pieces stay ours, for behaviour libcrypto does not give:
 *
 *   - the base64 decoder. States.Base64Decode and task tokens need exactly
 *     one accepted encoding per byte string. EVP_DecodeBlock is laxer: it
 *     skips leading and trailing white space (" QUJD", "QUJD\n"), accepts
 *     '=' in the middle of the text ("Q=Q=", "QQ==QUJD"), accepts non-zero
 *     bits under the padding ("QR==", which no encoder writes for "A"), and
 *     does not tell how many bytes the padding removed. The decoder below
 *     refuses all of these. (Encoding is EVP_EncodeBlock's: it has no
 *     choice to make.)
 *   - lowercase hex of a digest, the form States.Hash returns: libcrypto's
 *     OPENSSL_buf2hexstr writes uppercase with separators.
 */
#include "protocol/hash.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The libcrypto digest of an algorithm (static objects of libcrypto). */
static const EVP_MD *alg_md(swf_hash_alg_t alg)
{
    switch (alg) {
    case SWF_HASH_MD5:
        return EVP_md5();
    case SWF_HASH_SHA1:
        return EVP_sha1();
    case SWF_HASH_SHA256:
        return EVP_sha256();
    case SWF_HASH_SHA384:
        return EVP_sha384();
    case SWF_HASH_SHA512:
        return EVP_sha512();
    }
    assert(!"unknown hash algorithm");
    return NULL;
}

/* libcrypto could not compute what the default provider always offers. */
static void crypto_die(const char *what)
{
    fprintf(stderr, "swf: libcrypto cannot compute %s (is the default provider available?)\n",
            what);
    abort();
}

size_t swf_hash_size(swf_hash_alg_t alg)
{
    int n = EVP_MD_get_size(alg_md(alg));
    assert(n > 0 && n <= SWF_HASH_MAX_BYTES);
    return (size_t)n;
}

bool swf_hash_alg_from_name(const char *name, swf_hash_alg_t *out)
{
    static const struct {
        const char *name;
        swf_hash_alg_t alg;
    } names[] = {
        {"MD5", SWF_HASH_MD5},        {"SHA-1", SWF_HASH_SHA1},     {"SHA-256", SWF_HASH_SHA256},
        {"SHA-384", SWF_HASH_SHA384}, {"SHA-512", SWF_HASH_SHA512},
    };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(name, names[i].name) == 0) {
            *out = names[i].alg;
            return true;
        }
    }
    return false;
}

void swf_hash_digest(swf_hash_alg_t alg, const void *data, size_t len, uint8_t *out)
{
    const EVP_MD *md = alg_md(alg);
    unsigned int n = 0;
    if (EVP_Digest(data, len, out, &n, md, NULL) != 1 || n != swf_hash_size(alg))
        crypto_die(EVP_MD_get0_name(md));
}

void swf_hash_hmac_sha256(const void *key, size_t key_len, const void *data, size_t len,
                          uint8_t out[SWF_HASH_SHA256_BYTES])
{
    /* libcrypto refuses a NULL key even of length 0; HMAC's empty key is a
     * block of zeros either way (RFC 2104, 2). */
    static const uint8_t no_key[1];
    size_t n = 0;
    if (EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, key_len > 0 ? key : no_key, key_len, data,
                  len, out, SWF_HASH_SHA256_BYTES, &n) == NULL ||
        n != SWF_HASH_SHA256_BYTES)
        crypto_die("HMAC-SHA256");
}

void swf_hash_hex_encode(const uint8_t *bytes, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 0xf];
    }
    out[2 * len] = '\0';
}

/* ---- base64 (RFC 4648, section 4) ---- */

swf_error_t *swf_base64_encode(const void *data, size_t len, char **out)
{
    *out = NULL;
    /* EVP_EncodeBlock counts in int. */
    if (len > (size_t)INT_MAX / 4 * 3 - 3)
        return swf_error_new(SWF_E_LIMIT, NULL, "base64 input of %zu bytes is too large", len);
    char *s = malloc((len + 2) / 3 * 4 + 1);
    if (s == NULL)
        return swf_error_new(SWF_E_NOMEM, NULL, "out of memory");
    int n = EVP_EncodeBlock((unsigned char *)s, data, (int)len);
    assert(n >= 0 && (size_t)n == (len + 2) / 3 * 4);
    s[n] = '\0';
    *out = s;
    return NULL;
}

static int b64_value(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Strict: the length is a multiple of four, '=' appears only as the last one
 * or two characters, and the bits the padding discards are zero, so every
 * byte string has exactly one accepted encoding. */
swf_error_t *swf_base64_decode(const char *text, size_t len, uint8_t **out, size_t *out_len)
{
    *out = NULL;
    *out_len = 0;
    if (len % 4 != 0)
        return swf_error_new(SWF_E_INPUT, NULL,
                             "invalid base64: the length %zu is not a multiple of 4", len);
    size_t pad = 0;
    if (len >= 1 && text[len - 1] == '=')
        pad++;
    if (len >= 2 && text[len - 2] == '=')
        pad++;

    uint8_t *buf = malloc(len / 4 * 3 + 1);
    if (buf == NULL)
        return swf_error_new(SWF_E_NOMEM, NULL, "out of memory");

    swf_error_t *err = NULL;
    size_t o = 0;
    for (size_t i = 0; i < len; i += 4) {
        bool last = i + 4 == len;
        size_t n = last ? 4 - pad : 4; /* significant characters in this quantum */
        uint32_t v = 0;
        for (size_t j = 0; j < 4; j++) {
            int d = 0;
            if (j < n) {
                d = b64_value(text[i + j]);
                if (d < 0) {
                    err =
                        swf_error_new(SWF_E_INPUT, NULL,
                                      "invalid base64: unexpected character at offset %zu", i + j);
                    goto done;
                }
            }
            v = v << 6 | (uint32_t)d;
        }
        buf[o++] = (uint8_t)(v >> 16);
        if (n >= 3)
            buf[o++] = (uint8_t)(v >> 8);
        if (n == 4)
            buf[o++] = (uint8_t)v;
        if ((n == 2 && (v & 0xffff) != 0) || (n == 3 && (v & 0xff) != 0)) {
            err = swf_error_new(SWF_E_INPUT, NULL, "invalid base64: non-zero padding bits");
            goto done;
        }
    }
    buf[o] = '\0';
    *out = buf;
    *out_len = o;
    buf = NULL;
done:
    free(buf);
    return err;
}

swf_error_t *swf_uuid_new(char out[37])
{
    unsigned char b[16];
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return swf_error_new(SWF_E_IO, NULL, "/dev/urandom: %s", strerror(errno));
    ssize_t n = read(fd, b, sizeof(b));
    close(fd);
    if (n != (ssize_t)sizeof(b))
        return swf_error_new(SWF_E_IO, NULL, "/dev/urandom: short read");
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
    return NULL;
}
