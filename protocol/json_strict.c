/*
 * json_strict.c - what json-c accepts but swf refuses: duplicate member
 * names, lone surrogate escapes, U+0000 in a member name, and numbers json-c
 * cannot hold exactly.
 *
 * json-c keeps the last of two members of the same name, turns a lone
 * \ud800 into U+FFFD, ends a member name at U+0000, and clamps an integer
 * past the 64-bit range to INT64_MIN, INT64_MAX or UINT64_MAX: each a
 * silent rewrite of what was sent (two states of the same name, two ids
 * that become one). Its tree cannot tell afterwards what the text held, so
 * this is one pass of our own over the raw text, run after json-c has
 * accepted it (the text is then well-formed JSON, nested at most
 * SWF_LIMIT_JSON_DEPTH deep, and json-c's syntax errors and their messages,
 * which histories record, stay as they were).
 *
 * Numbers: swf refuses rather than carries through. Carrying a number's text
 * through would need a number type that keeps it everywhere, JSONPath and
 * JSONata arithmetic included. So an integer (no fraction, no exponent) must
 * lie in int64_t's range, and any other number must be a finite double that
 * does not read as 0 unless it is 0: 1e400 (infinity to json-c) and 1e-400
 * are refused as well. A number with more digits than a double holds
 * (0.1000000000000000000001) is kept: json-c and jsonb both keep its text;
 * only arithmetic on it rounds. The integer -0, which json-c holds as the
 * integer 0, is kept as a negative zero written "-0" (swf_json_minus_zero_keep,
 * at the end of this file); jsonb has no negative zero and stores -0 and
 * -0.0 as 0 and 0.0, equal values. jsonb writes 1e20 back as
 * 100000000000000000000, which is why what swf reads back from PostgreSQL
 * goes through swf_json_parse_stored instead (json.h).
 *
 * The pass is linear: each byte is looked at a bounded number of times, and
 * member names go into one hash table keyed by (object, name). The path of a
 * refused member or value is only built when there is one to report.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/json.h"
#include "protocol/limits.h"

/* One open object or array: which member or element the scan is in. */
typedef struct {
    bool object;
    uint32_t serial; /* the object's number, for the names table */
    size_t index;    /* an array's element */
    size_t key_at;   /* an object's current member name: its text, quotes excluded */
    size_t key_len;
} frame_t;

/* A member name seen, in the table of names of all objects. */
typedef struct {
    uint32_t serial; /* 0: a free slot */
    uint32_t hash;
    const char *name; /* decoded (into `owned`) only when it had escapes */
    size_t len;
    char *owned;
} name_t;

typedef struct {
    const char *buf;
    size_t len;
    frame_t stack[SWF_LIMIT_JSON_DEPTH + 1];
    int depth;
    name_t *names;
    size_t names_cap, names_used;
} scan_t;

static void skip_space(const scan_t *s, size_t *i)
{
    while (*i < s->len &&
           (s->buf[*i] == ' ' || s->buf[*i] == '\t' || s->buf[*i] == '\n' || s->buf[*i] == '\r'))
        (*i)++;
}

/* The code unit of the \uXXXX escape at buf[i] (its backslash), or -1. */
static long escape_unit(const scan_t *s, size_t i)
{
    if (i + 6 > s->len || s->buf[i] != '\\' || s->buf[i + 1] != 'u')
        return -1;
    long u = 0;
    static const char digits[] = "0123456789abcdef";
    for (size_t k = 2; k < 6; k++) {
        char c = s->buf[i + k];
        const char *h = strchr(digits, c >= 'A' && c <= 'F' ? c - 'A' + 'a' : c);
        if (c == '\0' || h == NULL)
            return -1;
        u = u * 16 + (h - digits);
    }
    return u;
}

static void utf8_put(char *out, size_t *o, unsigned long cp)
{
    if (cp < 0x80) {
        out[(*o)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*o)++] = (char)(0xC0 | (cp >> 6));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out[(*o)++] = (char)(0xE0 | (cp >> 12));
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    } else {
        out[(*o)++] = (char)(0xF0 | (cp >> 18));
        out[(*o)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    }
}

/* A defect found: where (a byte offset) and what, the path to be added. */
typedef struct {
    size_t at;
    char what[160];
} defect_t;

/*
 * Scans the string whose opening quote is at buf[*i]; on return *i is past
 * its closing quote, *escaped says whether it held a backslash. False with
 * d filled when it holds a lone surrogate, or U+0000 in a member name.
 */
static bool string_scan(const scan_t *s, size_t *i, bool member, bool *escaped, defect_t *d)
{
    size_t k = *i + 1;
    *escaped = false;
    while (k < s->len && s->buf[k] != '"') {
        if (s->buf[k] != '\\') {
            k++;
            continue;
        }
        *escaped = true;
        long u = escape_unit(s, k);
        if (u < 0) {
            k += 2;
            continue;
        }
        if (u >= 0xD800 && u <= 0xDBFF) {
            long low = escape_unit(s, k + 6);
            if (low >= 0xDC00 && low <= 0xDFFF) {
                k += 12;
                continue;
            }
        }
        if (u >= 0xD800 && u <= 0xDFFF) {
            d->at = k;
            snprintf(d->what, sizeof(d->what), "lone surrogate \\u%.4s in a %s", s->buf + k + 2,
                     member ? "member name" : "string");
            return false;
        }
        if (u == 0 && member) {
            d->at = k;
            snprintf(d->what, sizeof(d->what), "\\u0000 in a member name");
            return false;
        }
        k += 6;
    }
    *i = k + 1;
    return true;
}

/* The member name at buf[at..at+len) (quotes excluded) with its escapes
 * decoded, in a new buffer of at most len bytes. The text is well-formed
 * JSON without lone surrogates (string_scan has seen it). */
static char *name_decode(const scan_t *s, size_t at, size_t len, size_t *out_len)
{
    char *out = malloc(len + 1);
    if (out == NULL)
        abort();
    size_t o = 0;
    for (size_t k = at; k < at + len;) {
        char c = s->buf[k];
        if (c != '\\') {
            out[o++] = c;
            k++;
            continue;
        }
        long u = escape_unit(s, k);
        if (u < 0) {
            const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
            const char *p = strchr(from, s->buf[k + 1]);
            out[o++] = p ? to[p - from] : s->buf[k + 1];
            k += 2;
            continue;
        }
        unsigned long cp = (unsigned long)u;
        k += 6;
        if (u >= 0xD800 && u <= 0xDBFF) {
            cp = 0x10000 + (((unsigned long)u - 0xD800) << 10) +
                 ((unsigned long)escape_unit(s, k) - 0xDC00);
            k += 6;
        }
        utf8_put(out, &o, cp);
    }
    *out_len = o;
    return out;
}

static uint32_t name_hash(uint32_t serial, const char *p, size_t n)
{
    uint32_t h = 2166136261u ^ serial;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 16777619u;
    return h;
}

static void names_grow(scan_t *s)
{
    size_t cap = s->names_cap ? s->names_cap * 2 : 16;
    name_t *t = calloc(cap, sizeof(*t));
    if (t == NULL)
        abort();
    for (size_t i = 0; i < s->names_cap; i++) {
        if (s->names[i].serial == 0)
            continue;
        size_t j = s->names[i].hash & (cap - 1);
        while (t[j].serial != 0)
            j = (j + 1) & (cap - 1);
        t[j] = s->names[i];
    }
    free(s->names);
    s->names = t;
    s->names_cap = cap;
}

/* Adds the member name of the top frame; false when that object already has
 * it (the table then owns nothing new). */
static bool name_add(scan_t *s, bool escaped)
{
    const frame_t *f = &s->stack[s->depth - 1];
    const char *p = s->buf + f->key_at;
    size_t n = f->key_len;
    char *owned = escaped ? name_decode(s, f->key_at, f->key_len, &n) : NULL;
    if (owned != NULL)
        p = owned;
    if ((s->names_used + 1) * 2 > s->names_cap)
        names_grow(s);
    uint32_t h = name_hash(f->serial, p, n);
    size_t j = h & (s->names_cap - 1);
    for (; s->names[j].serial != 0; j = (j + 1) & (s->names_cap - 1)) {
        const name_t *e = &s->names[j];
        if (e->serial == f->serial && e->hash == h && e->len == n && memcmp(e->name, p, n) == 0) {
            free(owned);
            return false;
        }
    }
    s->names[j] = (name_t){f->serial, h, p, n, owned};
    s->names_used++;
    return true;
}

/* True when the integer token p[0..n) lies outside int64_t's range (JSON
 * has no leading zeros: more digits is larger). */
static bool integer_wide(const char *p, size_t n)
{
    bool negative = p[0] == '-';
    size_t digits = n - (negative ? 1 : 0);
    const char *max = negative ? "9223372036854775808" : "9223372036854775807";
    return digits > 19 || (digits == 19 && memcmp(p + (negative ? 1 : 0), max, 19) > 0);
}

/* Checks the number buf[at..end): see the opening comment. */
static bool number_check(const scan_t *s, size_t at, size_t end, defect_t *d)
{
    const char *p = s->buf + at;
    size_t n = end - at;
    bool negative = p[0] == '-';
    size_t int_digits = 0, k = negative ? 1 : 0;
    while (k < n && p[k] >= '0' && p[k] <= '9') {
        int_digits++;
        k++;
    }
    bool integer = k == n;
    bool exponent = memchr(p, 'e', n) != NULL || memchr(p, 'E', n) != NULL;
    if (int_digits < 19 && !exponent)
        return true; /* the common case, at most 18 digits before any fraction */
    const char *why = NULL;
    if (integer) {
        if (integer_wide(p, n))
            why = "is outside the 64-bit integer range";
    } else {
        char small[64];
        char *text = n < sizeof(small) ? small : malloc(n + 1);
        if (text == NULL)
            abort();
        memcpy(text, p, n);
        text[n] = '\0';
        double v = strtod(text, NULL);
        bool nonzero =
            strpbrk(text, "123456789") != NULL && strcspn(text, "123456789") < strcspn(text, "eE");
        if (text != small)
            free(text);
        if (!isfinite(v))
            why = "is too large for a double (it would read as infinity)";
        else if (v == 0 && nonzero)
            why = "is too small to be kept (it would read as 0)";
    }
    if (why == NULL)
        return true;
    d->at = at;
    snprintf(d->what, sizeof(d->what), "the number %.*s%s %s", n > 40 ? 40 : (int)n, p,
             n > 40 ? "..." : "", why);
    return false;
}

/* True when a member name can follow a dot in a path: $.States. */
static bool name_plain(const char *p, size_t n)
{
    if (n == 0 || (p[0] >= '0' && p[0] <= '9'))
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return false;
    }
    return true;
}

/* Appends to out[*o..cap) what fits, always NUL-terminated. */
static void put(char *out, size_t cap, size_t *o, const char *p, size_t n)
{
    if (*o + 1 >= cap)
        return;
    if (n > cap - 1 - *o)
        n = cap - 1 - *o;
    memcpy(out + *o, p, n);
    *o += n;
    out[*o] = '\0';
}

/* The path of the first `depth` frames, JSONPath-like: $.a['b c'][2]. The
 * member names are written as the text has them (escapes included). */
static void path_write(const scan_t *s, int depth, char *out, size_t cap)
{
    size_t o = 0;
    put(out, cap, &o, "$", 1);
    for (int i = 0; i < depth; i++) {
        const frame_t *f = &s->stack[i];
        char index[32];
        if (!f->object) {
            int n = snprintf(index, sizeof(index), "[%zu]", f->index);
            put(out, cap, &o, index, (size_t)n);
        } else if (name_plain(s->buf + f->key_at, f->key_len)) {
            put(out, cap, &o, ".", 1);
            put(out, cap, &o, s->buf + f->key_at, f->key_len);
        } else {
            put(out, cap, &o, "[\"", 2);
            put(out, cap, &o, s->buf + f->key_at, f->key_len);
            put(out, cap, &o, "\"]", 2);
        }
    }
}

/* The scan itself; false with d filled and *path_depth set at the first
 * defect. */
static bool scan(scan_t *s, defect_t *d, int *path_depth)
{
    size_t i = 0;
    uint32_t serials = 0;
    bool escaped;
    for (;;) {
        /* A value starts here. */
        skip_space(s, &i);
        if (i >= s->len)
            return true;
        char c = s->buf[i];
        if (c == '{' || c == '[') {
            if (s->depth > SWF_LIMIT_JSON_DEPTH)
                return true; /* json-c has refused this already */
            s->stack[s->depth++] = (frame_t){.object = c == '{', .serial = ++serials};
            i++;
            skip_space(s, &i);
            if (i < s->len && (s->buf[i] == '}' || s->buf[i] == ']')) {
                s->depth--;
                i++;
                goto after_value;
            }
            if (c == '[')
                continue;
            goto member;
        }
        if (c == '"') {
            *path_depth = s->depth;
            if (!string_scan(s, &i, false, &escaped, d))
                return false;
        } else {
            size_t at = i;
            while (i < s->len && strchr(",]} \t\r\n", s->buf[i]) == NULL)
                i++;
            *path_depth = s->depth;
            if ((c == '-' || (c >= '0' && c <= '9')) && !number_check(s, at, i, d))
                return false;
        }
    after_value:
        skip_space(s, &i);
        if (s->depth == 0 || i >= s->len)
            return true;
        frame_t *top = &s->stack[s->depth - 1];
        c = s->buf[i++];
        if (c == '}' || c == ']') {
            s->depth--;
            goto after_value;
        }
        if (c != ',')
            return true; /* not JSON; json-c has refused it already */
        if (!top->object) {
            top->index++;
            continue;
        }
    member:
        skip_space(s, &i);
        if (i >= s->len || s->buf[i] != '"')
            return true;
        {
            frame_t *f = &s->stack[s->depth - 1];
            size_t at = i;
            *path_depth = s->depth - 1;
            if (!string_scan(s, &i, true, &escaped, d))
                return false;
            f->key_at = at + 1;
            f->key_len = i - at - 2;
            if (!name_add(s, escaped)) {
                d->at = at;
                snprintf(d->what, sizeof(d->what), "duplicate key \"%.*s\"",
                         f->key_len > 64 ? 64 : (int)f->key_len, s->buf + f->key_at);
                return false;
            }
        }
        skip_space(s, &i);
        if (i >= s->len || s->buf[i] != ':')
            return true;
        i++;
    }
}

size_t swf_json_strict_check(const char *buf, size_t len, char *what, size_t what_cap)
{
    /* About 20 KB, on the stack: no allocation for a small document. */
    scan_t scan_state, *s = &scan_state;
    s->buf = buf;
    s->len = len;
    s->depth = 0;
    s->names = NULL;
    s->names_cap = s->names_used = 0;
    defect_t d;
    int path_depth = 0;
    size_t at = len;
    if (!scan(s, &d, &path_depth)) {
        char path[256];
        path_write(s, path_depth, path, sizeof(path));
        snprintf(what, what_cap, "%s: %s", path, d.what);
        at = d.at;
    }
    for (size_t i = 0; i < s->names_cap; i++)
        free(s->names[i].owned);
    free(s->names);
    return at;
}

char *swf_json_stored_widen(const char *buf, size_t len, size_t *out_len)
{
    char *out = NULL;
    size_t o = 0, copied = 0;
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (c == '"') {
            /* Past the string: to its closing quote, over escapes. */
            for (i++; i < len && buf[i] != '"'; i++)
                i += buf[i] == '\\';
            continue;
        }
        if (c != '-' && (c < '0' || c > '9'))
            continue;
        size_t at = i;
        bool integer = true;
        while (i < len && strchr("0123456789+-.eE", buf[i]) != NULL && buf[i] != '\0') {
            if (buf[i] == '.' || buf[i] == 'e' || buf[i] == 'E')
                integer = false;
            i++;
        }
        if (integer && i - at >= 19 && integer_wide(buf + at, i - at)) {
            if (out == NULL) {
                /* At most one ".0" per two bytes of text. */
                out = malloc(len * 2 + 1);
                if (out == NULL)
                    abort();
            }
            memcpy(out + o, buf + copied, i - copied);
            o += i - copied;
            memcpy(out + o, ".0", 2);
            o += 2;
            copied = i;
        }
        i--;
    }
    if (out != NULL) {
        memcpy(out + o, buf + copied, len - copied);
        o += len - copied;
        out[o] = '\0';
    }
    *out_len = o;
    return out;
}

/* ---- the integer -0 ---------------------------------------------------------
 *
 * json-c reads the integer -0 as the int64_t 0, which it writes as 0. The
 * value is kept instead as the double -0.0 written "-0" (json-c's number
 * with its own text, as it keeps -0.0's): the same value for equality and
 * arithmetic, and the same text back. One walk over the text beside the
 * tree finds them, in the order json-c made the members (no duplicates:
 * the strict check has run), and only when the text has a "-0" that could
 * be one. */

/* True when buf has a "-0" not followed by a digit, '.', 'e' or 'E' (in a
 * string or not: the walk tells). */
static bool minus_zero_maybe(const char *buf, size_t len)
{
    for (const char *p = buf; (p = memchr(p, '-', (size_t)(buf + len - p))) != NULL; p++) {
        if (p + 1 < buf + len && p[1] == '0' &&
            (p + 2 == buf + len || strchr("0123456789.eE", p[2]) == NULL || p[2] == '\0'))
            return true;
    }
    return false;
}

static void mz_skip_string(const char *b, size_t n, size_t *i)
{
    for ((*i)++; *i < n && b[*i] != '"'; (*i)++) {
        if (b[*i] == '\\')
            (*i)++;
    }
    (*i)++;
}

static void mz_skip_space(const char *b, size_t n, size_t *i)
{
    while (*i < n && strchr(" \t\r\n", b[*i]) != NULL && b[*i] != '\0')
        (*i)++;
}

/* Moves *i to the next member or element of the object or array closed by
 * `close`, past white space and a comma; false at its end (*i then past it). */
static bool mz_next(const char *b, size_t n, size_t *i, char close)
{
    for (;;) {
        mz_skip_space(b, n, i);
        if (*i >= n || b[*i] == close) {
            (*i)++;
            return false;
        }
        if (b[*i] != ',')
            return true;
        (*i)++;
    }
}

/* Walks the value at b[*i] beside v; returns what takes v's place (v
 * itself, or a new -0 for the integer -0). */
static json_object *mz_value(const char *b, size_t n, size_t *i, json_object *v)
{
    mz_skip_space(b, n, i);
    if (*i >= n)
        return v;
    char c = b[*i];
    if (c == '{') {
        struct lh_entry *e =
            json_object_is_type(v, json_type_object) ? json_object_get_object(v)->head : NULL;
        for ((*i)++; mz_next(b, n, i, '}');) {
            mz_skip_string(b, n, i); /* the member's name */
            mz_skip_space(b, n, i);
            (*i)++; /* ':' */
            if (e == NULL)
                return v; /* not the tree of this text: leave it */
            json_object *old = (json_object *)lh_entry_v(e);
            json_object *r = mz_value(b, n, i, old);
            if (r != old)
                json_object_object_add(v, (const char *)lh_entry_k(e), r);
            e = e->next;
        }
    } else if (c == '[') {
        size_t k = 0;
        for ((*i)++; mz_next(b, n, i, ']'); k++) {
            if (!json_object_is_type(v, json_type_array) || k >= json_object_array_length(v))
                return v;
            json_object *old = json_object_array_get_idx(v, k);
            json_object *r = mz_value(b, n, i, old);
            if (r != old)
                json_object_array_put_idx(v, k, r);
        }
    } else if (c == '"') {
        mz_skip_string(b, n, i);
    } else {
        size_t at = *i;
        while (*i < n && b[*i] != '\0' && strchr(",]} \t\r\n", b[*i]) == NULL)
            (*i)++;
        if (*i - at == 2 && b[at] == '-' && b[at + 1] == '0' &&
            json_object_is_type(v, json_type_int))
            return json_object_new_double_s(-0.0, "-0");
    }
    return v;
}

json_object *swf_json_minus_zero_keep(const char *buf, size_t len, json_object *v)
{
    if (v == NULL || !minus_zero_maybe(buf, len))
        return v;
    size_t i = 0;
    json_object *r = mz_value(buf, len, &i, v);
    if (r != v)
        json_object_put(v);
    return r;
}
