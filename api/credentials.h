/*
 * credentials.h - who may call swf-api: the deployment's credentials file.
 *
 * One key a line, fields separated by spaces or tabs:
 *
 *     # ACCESS_KEY_ID  SECRET_ACCESS_KEY  RESOURCE...
 *     AKIDORDERS       s3cret-of-orders   stateMachine:orders activity:ship
 *     AKIDADMIN        s3cret-of-admin    *
 *
 * A RESOURCE is `stateMachine:NAME`, `activity:NAME` or `*` (everything);
 * a key with no resource may call nothing that names one. Blank lines and
 * lines starting with '#' are skipped. Bounds: SWF_API_CREDENTIALS_BYTES
 * per file, SWF_API_CREDENTIALS_KEYS keys, SWF_API_CREDENTIALS_RESOURCES
 * resources per key, ids and secrets of 1 to 128 bytes. A malformed file is
 * refused whole, naming the line; the message never quotes a secret.
 *
 * Ownership: the set owns its strings; free it with
 * swf_api_credentials_free. Thread-safety: read-only after loading, so any
 * number of threads may look keys up.
 */
#ifndef SWF_API_CREDENTIALS_H
#define SWF_API_CREDENTIALS_H

#include <stdbool.h>
#include <stddef.h>

#include "protocol/error.h"

#define SWF_API_CREDENTIALS_BYTES (256u * 1024u)
#define SWF_API_CREDENTIALS_KEYS 1000
#define SWF_API_CREDENTIALS_RESOURCES 100
#define SWF_API_CREDENTIALS_FIELD_BYTES 128

typedef struct swf_api_credentials swf_api_credentials_t;

/* Parses text[0..len); `name` (a path) starts every error message. */
swf_error_t *swf_api_credentials_parse(const char *name, const char *text, size_t len,
                                       swf_api_credentials_t **out);

/* Reads and parses a file. */
swf_error_t *swf_api_credentials_load(const char *path, swf_api_credentials_t **out);

/* The secret of an access key id, or NULL when the key is unknown. */
const char *swf_api_credentials_secret(const swf_api_credentials_t *creds, const char *key);

/* Whether `key` may use the resource `kind`:`name` (kind "stateMachine" or
 * "activity"); name NULL asks whether it may use every resource ("*"). */
bool swf_api_credentials_allows(const swf_api_credentials_t *creds, const char *key,
                                const char *kind, const char *name);

void swf_api_credentials_free(swf_api_credentials_t *creds);

#endif
