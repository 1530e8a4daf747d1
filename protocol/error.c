/*
 * error.c - the project's error object.
 *
 * Errors are rare and small, so they are plain heap objects with copied
 * strings; nothing here tries to be clever about allocation. Out of memory
 * while building an error aborts: there would be no way to report it.
 */
#include "protocol/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/alloc.h"

struct swf_error {
    swf_code_t code;
    bool retriable;
    char *name;
    char *message;
    char *cause;
};

static char *vformat(const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        n = 0;
    char *buf = malloc((size_t)n + 1);
    if (buf == NULL)
        abort();
    vsnprintf(buf, (size_t)n + 1, fmt, ap);
    return buf;
}

static swf_error_t *error_vnew(swf_code_t code, const char *name, const char *fmt, va_list ap)
{
    swf_error_t *err = calloc(1, sizeof(*err));
    if (err == NULL)
        abort();
    err->code = code;
    err->retriable = (code == SWF_E_CONFLICT);
    err->name = swf_strdup(name);
    err->message = vformat(fmt, ap);
    return err;
}

swf_error_t *swf_error_new(swf_code_t code, const char *name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    swf_error_t *err = error_vnew(code, name, fmt, ap);
    va_end(ap);
    return err;
}

swf_error_t *swf_error_states(const char *name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    swf_error_t *err = error_vnew(SWF_E_STATES, name, fmt, ap);
    va_end(ap);
    return err;
}

void swf_error_set_cause(swf_error_t *err, const char *cause)
{
    char *copy = swf_strdup(cause);
    free(err->cause);
    err->cause = copy;
}

void swf_error_set_retriable(swf_error_t *err, bool retriable)
{
    err->retriable = retriable;
}

void swf_error_prefix(swf_error_t *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *prefix = vformat(fmt, ap);
    va_end(ap);
    size_t n = strlen(prefix) + 2 + strlen(err->message) + 1;
    char *msg = malloc(n);
    if (msg == NULL)
        abort();
    snprintf(msg, n, "%s: %s", prefix, err->message);
    free(prefix);
    free(err->message);
    err->message = msg;
}

swf_code_t swf_error_code(const swf_error_t *err)
{
    return err ? err->code : SWF_OK;
}

bool swf_error_retriable(const swf_error_t *err)
{
    return err && err->retriable;
}

const char *swf_error_name(const swf_error_t *err)
{
    return err ? err->name : NULL;
}

const char *swf_error_message(const swf_error_t *err)
{
    return err ? err->message : "";
}

const char *swf_error_cause(const swf_error_t *err)
{
    return err ? err->cause : NULL;
}

const char *swf_code_name(swf_code_t code)
{
    switch (code) {
    case SWF_OK:
        return "ok";
    case SWF_E_INPUT:
        return "input";
    case SWF_E_LIMIT:
        return "limit";
    case SWF_E_NOMEM:
        return "nomem";
    case SWF_E_IO:
        return "io";
    case SWF_E_NOTFOUND:
        return "notfound";
    case SWF_E_CONFLICT:
        return "conflict";
    case SWF_E_DB:
        return "db";
    case SWF_E_KAFKA:
        return "kafka";
    case SWF_E_STATES:
        return "states";
    case SWF_E_NONDETERMINISM:
        return "nondeterminism";
    case SWF_E_INTERNAL:
        return "internal";
    }
    return "unknown";
}

void swf_error_free(swf_error_t *err)
{
    if (err == NULL)
        return;
    free(err->name);
    free(err->message);
    free(err->cause);
    free(err);
}
