/*
 * token.h - signed task tokens (protocol/KAFKA.md, "Task tokens").
 *
 * A token is base64url(payload) "." base64url(HMAC-SHA256(secret, payload))
 * with payload the JSON {"e": execution id, "a": activity id}. Workers treat
 * it as opaque; swf verifies the signature before it believes anything in
 * it, so a forged or altered token is refused.
 *
 * Ownership: returned strings are malloc'd and owned by the caller.
 * Thread-safety: reentrant.
 */
#ifndef SWF_PROTOCOL_TOKEN_H
#define SWF_PROTOCOL_TOKEN_H

#include <stddef.h>

#include "protocol/error.h"

/* The secret of local runs and `swf dev` when SWF_TOKEN_SECRET is not set. */
#define SWF_TOKEN_DEV_SECRET "swf-development-secret-do-not-use-in-production"

/* Longest token accepted, in bytes. */
#define SWF_TOKEN_MAX_BYTES 2048

/* $SWF_TOKEN_SECRET, or the development secret. */
const char *swf_token_secret_env(void);

/* Makes the token of one activity. Never fails (aborts when out of memory). */
char *swf_token_make(const char *secret, const char *execution_id, const char *activity_id);

/* Verifies a token and extracts its ids. SWF_E_INPUT "forged or altered task
 * token" when the signature does not match, "malformed task token" when it
 * does not parse. */
swf_error_t *swf_token_verify(const char *secret, const char *token, char **execution_id,
                              char **activity_id);

#endif
