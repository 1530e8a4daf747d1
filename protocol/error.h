/*
 * error.h - the one error type of the project.
 *
 * A function that can fail returns `swf_error_t *`: NULL means success, anything
 * else is a heap object the caller owns and releases with swf_error_free().
 * An error carries a code (what kind of failure), whether retrying can help,
 * the ASL error name where there is one ("States.Runtime", or a task's own
 * error name), a short message and an optional cause.
 *
 * Foreign errors (SQLSTATE, librdkafka codes, errno) are translated into this
 * type in exactly one place per library. Programmer errors are assertions, not
 * errors.
 *
 * Thread-safety: error objects are plain data; one object is used by one
 * thread at a time.
 */
#ifndef SWF_PROTOCOL_ERROR_H
#define SWF_PROTOCOL_ERROR_H

#include <stdbool.h>

typedef enum swf_code {
    SWF_OK = 0,
    SWF_E_INPUT,          /* malformed or out-of-range input from a user, worker or file */
    SWF_E_LIMIT,          /* an input exceeds a documented limit (protocol/limits.h) */
    SWF_E_NOMEM,          /* allocation failed */
    SWF_E_IO,             /* a file or socket failed */
    SWF_E_NOTFOUND,       /* the named execution, state machine or event does not exist */
    SWF_E_CONFLICT,       /* lost an optimistic-concurrency race (append at a stale event id) */
    SWF_E_DB,             /* PostgreSQL failed */
    SWF_E_KAFKA,          /* Kafka failed */
    SWF_E_STATES,         /* an ASL run-time error; the name says which (States.Runtime, ...) */
    SWF_E_NONDETERMINISM, /* replay derived a decision other than the recorded one */
    SWF_E_INTERNAL,       /* a bug: an invariant did not hold */
} swf_code_t;

typedef struct swf_error swf_error_t;

/*
 * Creates an error. `name` is the ASL error name or NULL; `fmt` is a printf
 * format for the message. Never returns NULL (aborts when out of memory, as
 * there is no way to report that error).
 */
swf_error_t *swf_error_new(swf_code_t code, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Shorthand for an ASL run-time error: code SWF_E_STATES, the given name. */
swf_error_t *swf_error_states(const char *name, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Sets the cause (a longer explanation, or the cause a task reported); copies it. */
void swf_error_set_cause(swf_error_t *err, const char *cause);
/* Marks the error as retriable (a retry of the same operation can succeed). */
void swf_error_set_retriable(swf_error_t *err, bool retriable);
/* Prefixes the message with "prefix: " (adds context as an error travels up). */
void swf_error_prefix(swf_error_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

swf_code_t swf_error_code(const swf_error_t *err);
bool swf_error_retriable(const swf_error_t *err);
/* The ASL error name, or NULL. */
const char *swf_error_name(const swf_error_t *err);
const char *swf_error_message(const swf_error_t *err);
/* The cause, or NULL when none was set. */
const char *swf_error_cause(const swf_error_t *err);
/* A stable lowercase word for a code ("input", "limit", ...). */
const char *swf_code_name(swf_code_t code);

/* Frees the error; swf_error_free(NULL) does nothing. */
void swf_error_free(swf_error_t *err);

#endif
