/*
 * buf.h - the bounded text buffer and the query error of decider/asl's
 * JSONata code (decider/asl/jsonata/ and picture.c), in one place. Internal to
 * decider/asl.
 *
 * A buffer grows as text is added and stops at SWF_LIMIT_PAYLOAD_BYTES:
 * past it, `over` is set and the content is cut, so that no expression can
 * build a string larger than a payload; callers check `over` once, at the
 * end. The text is always NUL-terminated (it may also hold NUL bytes: use
 * n). A zeroed buf_t is an empty buffer; its owner frees s.
 */
#ifndef SWF_ASL_BUF_H
#define SWF_ASL_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/error.h"
#include "protocol/limits.h"

#define QUERY_ERROR "States.QueryEvaluationError"

/* A States.QueryEvaluationError with a message of at most 511 bytes. */
static inline swf_error_t *qerr(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline swf_error_t *qerr(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return swf_error_states(QUERY_ERROR, "%s", msg);
}

typedef struct buf {
    char *s;
    size_t n, cap;
    bool over; /* the limit was hit; the content is truncated */
} buf_t;

static inline void buf_add(buf_t *b, const char *s, size_t n)
{
    if (b->over)
        return;
    if (b->n + n + 1 > SWF_LIMIT_PAYLOAD_BYTES) {
        b->over = true;
        return;
    }
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->n + n + 1)
            cap *= 2;
        char *p = realloc(b->s, cap);
        if (p == NULL)
            abort(); /* as swf_error_new does: no way to report running out */
        b->s = p;
        b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = '\0';
}

static inline void buf_str(buf_t *b, const char *s)
{
    buf_add(b, s, strlen(s));
}

static inline void buf_ch(buf_t *b, char c)
{
    buf_add(b, &c, 1);
}

/* The character cp in UTF-8. */
static inline void buf_cp(buf_t *b, uint32_t cp)
{
    char s[4];
    size_t n;
    if (cp < 0x80) {
        s[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        s[0] = (char)(0xC0 | (cp >> 6));
        s[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        s[0] = (char)(0xE0 | (cp >> 12));
        s[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        s[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        s[0] = (char)(0xF0 | (cp >> 18));
        s[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        s[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        s[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    buf_add(b, s, n);
}

static inline const char *buf_cstr(buf_t *b)
{
    return b->s ? b->s : "";
}

#endif
