/*
 * hash.h - message digests, HMAC-SHA256, base64 and hex.
 *
 * The engine needs these for States.Hash, States.Base64Encode/Decode and for
 * signing task tokens. The digests and the HMAC are libcrypto's (OpenSSL);
 * the base64 decoder is our own, stricter than libcrypto's (hash.c says
 * how). Base64 is RFC 4648's standard alphabet.
 *
 * Ownership: inputs are borrowed. Digests are written into a buffer the
 * caller provides (SWF_HASH_MAX_BYTES is always enough). The encoders and the
 * decoder hand back a malloc'd buffer through an out-parameter; the caller
 * frees it with free().
 *
 * Thread-safety: every function is reentrant and keeps no state.
 */
#ifndef SWF_PROTOCOL_HASH_H
#define SWF_PROTOCOL_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocol/error.h"

typedef enum swf_hash_alg {
    SWF_HASH_MD5,
    SWF_HASH_SHA1,
    SWF_HASH_SHA256,
    SWF_HASH_SHA384,
    SWF_HASH_SHA512,
} swf_hash_alg_t;

/* The longest digest (SHA-512), in bytes. */
#define SWF_HASH_MAX_BYTES 64
#define SWF_HASH_SHA256_BYTES 32

/* The digest size of an algorithm, in bytes. */
size_t swf_hash_size(swf_hash_alg_t alg);

/* Looks up an algorithm by its States.Hash name ("MD5", "SHA-1", "SHA-256",
 * "SHA-384", "SHA-512"; exact case). False when the name is unknown. */
bool swf_hash_alg_from_name(const char *name, swf_hash_alg_t *out);

/* Writes the digest of data[0..len) into out (swf_hash_size(alg) bytes). */
void swf_hash_digest(swf_hash_alg_t alg, const void *data, size_t len, uint8_t *out);

/* HMAC-SHA256 (RFC 2104) of data under key; writes 32 bytes into out. */
void swf_hash_hmac_sha256(const void *key, size_t key_len, const void *data, size_t len,
                          uint8_t out[SWF_HASH_SHA256_BYTES]);

/* Lowercase hex of bytes[0..len): writes 2 * len characters and a NUL into
 * out, which must hold 2 * len + 1 bytes. */
void swf_hash_hex_encode(const uint8_t *bytes, size_t len, char *out);

/* Base64 (RFC 4648, standard alphabet, with '=' padding) of data[0..len).
 * On success *out is a NUL-terminated string the caller frees.
 * Fails only when out of memory (SWF_E_NOMEM). */
swf_error_t *swf_base64_encode(const void *data, size_t len, char **out);

/* Decodes base64 text[0..len) (standard alphabet, padding required, no white
 * space). On success *out (freed by the caller) holds *out_len bytes followed
 * by a NUL that is not counted. Invalid text is an SWF_E_INPUT error and
 * leaves *out NULL. */
swf_error_t *swf_base64_decode(const char *text, size_t len, uint8_t **out, size_t *out_len);

/* A random (version 4) UUID from the kernel's random source, written as
 * 36 characters and a NUL into out: execution ids (`swf start`, the API's
 * StartExecution without a name) need only be unique. SWF_E_IO when the
 * random source cannot be read. */
swf_error_t *swf_uuid_new(char out[37]);

#endif
