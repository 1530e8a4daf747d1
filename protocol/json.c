/*
 * json.c - parsing with limits, equality and copying over json-c.
 *
 * json-c does the tokenising; what this file adds is the project's rules
 * around it: every parse is bounded in bytes and depth, trailing garbage is
 * an error (json-c would silently stop at the first value), what json-c
 * would silently rewrite is refused (json_strict.c: duplicate keys, lone
 * surrogates, numbers it cannot hold), and equality
 * treats numbers by value as ASL does (1 equals 1.0).
 */
#include "protocol/json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/limits.h"

static bool only_space(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
            return false;
    }
    return true;
}

/* json-c's strict mode still accepts NaN, Infinity and single-quoted object
 * keys, none of which is JSON (and NaN would be written back out as is, which
 * PostgreSQL and every other reader refuse). Outside strings JSON has only
 * punctuation, digits, signs and the letters of true, false, null and an
 * exponent, so one pass that tracks strings finds any such token.
 * Returns the offset of the first offending byte, or len when there is none. */
static size_t swf_json_foreign_token_find(const char *buf, size_t len)
{
    bool in_string = false;
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"')
            in_string = true;
        else if (c == '\'' || (((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) &&
                               strchr("truefalsnE", c) == NULL))
            return i;
    }
    return len;
}

/* The length of the well-formed UTF-8 sequence at s[0..n), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t len;
    unsigned char lo = 0x80, hi = 0xBF; /* the second byte's range */
    if (c >= 0xC2 && c <= 0xDF)
        len = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        if (c == 0xE0)
            lo = 0xA0; /* no overlong forms */
        else if (c == 0xED)
            hi = 0x9F; /* no surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F; /* nothing above U+10FFFF */
    } else {
        return 0;
    }
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    }
    return len;
}

size_t swf_json_utf8_invalid_at(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        if (u[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = utf8_seq(u + i, n - i);
        if (k == 0)
            return i;
        i += k;
    }
    return n;
}

json_object *swf_json_new_text(const char *s, size_t n)
{
    size_t bad = swf_json_utf8_invalid_at(s, n);
    if (bad == n)
        return json_object_new_string_len(s, (int)n);
    /* Each bad byte becomes the three bytes of U+FFFD. */
    char *fixed = malloc(n * 3 + 1);
    if (fixed == NULL)
        abort();
    const unsigned char *u = (const unsigned char *)s;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_seq(u + i, n - i);
        if (k == 0) {
            memcpy(fixed + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
        } else {
            memcpy(fixed + o, s + i, k);
            o += k;
            i += k;
        }
    }
    json_object *v = json_object_new_string_len(fixed, (int)o);
    free(fixed);
    return v;
}

/* The line and column (from 1; a column counts characters) of byte `at`. */
static void position(const char *buf, size_t at, size_t *line, size_t *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < at; i++) {
        if (buf[i] == '\n') {
            (*line)++;
            *col = 1;
        } else if (((unsigned char)buf[i] & 0xC0) != 0x80) {
            (*col)++;
        }
    }
}

/*
 * A syntax error at byte `at`. With a name: "NAME:LINE:COLUMN: not JSON:
 * WHAT" (the form editors jump to). Without one: "not JSON: WHAT", then " at
 * byte AT" when byte_at is true: the interpreter's messages, which
 * histories record (the cause of a failed States.StringToJson), so they
 * never change.
 */
static swf_error_t *syntax_error(const char *name, const char *buf, size_t at, bool byte_at,
                                 const char *what)
{
    if (name == NULL && byte_at)
        return swf_error_new(SWF_E_INPUT, NULL, "not JSON: %s at byte %zu", what, at);
    if (name == NULL)
        return swf_error_new(SWF_E_INPUT, NULL, "not JSON: %s", what);
    size_t line, col;
    position(buf, at, &line, &col);
    return swf_error_new(SWF_E_INPUT, NULL, "%s:%zu:%zu: not JSON: %s", name, line, col, what);
}

/* Every check of swf_json_parse_named but the name in the messages of the
 * errors that have no position. */
static swf_error_t *parse(const char *name, const char *buf, size_t len, size_t max_bytes,
                          bool is_strict, json_object **out)
{
    *out = NULL;
    if (len > max_bytes)
        return swf_error_new(SWF_E_LIMIT, NULL, "JSON document is %zu bytes, the limit is %zu", len,
                             max_bytes);
    if (only_space(buf, len))
        return swf_error_new(SWF_E_INPUT, NULL, "empty document, expected JSON");
    if (len > (size_t)INT32_MAX)
        return swf_error_new(SWF_E_LIMIT, NULL, "JSON document too large");
    const char *nul = memchr(buf, '\0', len);
    if (nul != NULL)
        return syntax_error(name, buf, (size_t)(nul - buf), false, "the text contains a NUL byte");
    char what[128];
    size_t bad = swf_json_utf8_invalid_at(buf, len);
    if (bad < len) {
        snprintf(what, sizeof(what), "the text is not UTF-8 (byte %zu is 0x%02X)", bad,
                 (unsigned)(unsigned char)buf[bad]);
        return syntax_error(name, buf, bad, false, what);
    }
    bad = swf_json_foreign_token_find(buf, len);
    if (bad < len)
        return syntax_error(name, buf, bad, true, "unexpected character");

    json_tokener *tok = json_tokener_new_ex(SWF_LIMIT_JSON_DEPTH);
    if (tok == NULL)
        return swf_error_new(SWF_E_NOMEM, NULL, "out of memory");
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *v = json_tokener_parse_ex(tok, buf, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    swf_error_t *err = NULL;
    if (jerr == json_tokener_continue) {
        /* The document ended inside a value; a final NUL lets json-c finish
         * a bare number such as "12". */
        v = json_tokener_parse_ex(tok, "", 1);
        jerr = json_tokener_get_error(tok);
        if (jerr != json_tokener_success) {
            err = syntax_error(name, buf, len, false, "the document ends too early");
            goto done;
        }
    } else if (jerr != json_tokener_success) {
        if (jerr == json_tokener_error_depth)
            err = swf_error_new(SWF_E_LIMIT, NULL, "JSON nested deeper than %d levels",
                                SWF_LIMIT_JSON_DEPTH);
        else
            err = syntax_error(name, buf, json_tokener_get_parse_end(tok), true,
                               json_tokener_error_desc(jerr));
        goto done;
    } else {
        size_t end = json_tokener_get_parse_end(tok);
        if (end < len && !only_space(buf + end, len - end)) {
            json_object_put(v);
            v = NULL;
            /* A file's position is the text's, past the white space. */
            while (name != NULL && strchr(" \t\r\n", buf[end]) != NULL)
                end++;
            err = syntax_error(name, buf, end, true, "unexpected text after the value");
            goto done;
        }
    }
    char strict[512];
    size_t at = is_strict ? swf_json_strict_check(buf, len, strict, sizeof(strict)) : len;
    if (at < len) {
        json_object_put(v);
        v = NULL;
        if (name == NULL) {
            err = swf_error_new(SWF_E_INPUT, NULL, "%s", strict);
        } else {
            size_t line, col;
            position(buf, at, &line, &col);
            err = swf_error_new(SWF_E_INPUT, NULL, "%s:%zu:%zu: %s", name, line, col, strict);
        }
        goto done;
    }
    *out = is_strict ? swf_json_minus_zero_keep(buf, len, v) : v;
done:
    json_tokener_free(tok);
    return err;
}

swf_error_t *swf_json_parse_named(const char *name, const char *buf, size_t len, size_t max_bytes,
                                  json_object **out)
{
    swf_error_t *err = parse(name, buf, len, max_bytes, true, out);
    if (err != NULL && name != NULL && strncmp(swf_error_message(err), name, strlen(name)) != 0)
        swf_error_prefix(err, "%s", name);
    return err;
}

swf_error_t *swf_json_parse(const char *buf, size_t len, size_t max_bytes, json_object **out)
{
    return parse(NULL, buf, len, max_bytes, true, out);
}

swf_error_t *swf_json_parse_stored(const char *buf, size_t len, size_t max_bytes, json_object **out)
{
    size_t wide_len;
    char *wide = swf_json_stored_widen(buf, len, &wide_len);
    if (wide == NULL)
        return parse(NULL, buf, len, max_bytes, false, out);
    swf_error_t *err = parse(NULL, wide, wide_len, max_bytes + (wide_len - len), false, out);
    free(wide);
    return err;
}

swf_error_t *swf_json_read_file(const char *path, size_t max_bytes, json_object **out)
{
    *out = NULL;
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (f == NULL)
        return swf_error_new(SWF_E_IO, NULL, "%s: %s", path, strerror(errno));
    size_t cap = 64 * 1024, len = 0;
    char *buf = malloc(cap);
    swf_error_t *err = NULL;
    if (buf == NULL) {
        err = swf_error_new(SWF_E_NOMEM, NULL, "%s: out of memory", path);
        goto done;
    }
    for (;;) {
        if (len == cap) {
            if (cap > max_bytes) {
                err = swf_error_new(SWF_E_LIMIT, NULL, "%s: larger than the limit of %zu bytes",
                                    path, max_bytes);
                goto done;
            }
            char *grown = realloc(buf, cap * 2);
            if (grown == NULL) {
                err = swf_error_new(SWF_E_NOMEM, NULL, "%s: out of memory", path);
                goto done;
            }
            buf = grown;
            cap *= 2;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0) {
            if (ferror(f)) {
                err = swf_error_new(SWF_E_IO, NULL, "%s: read failed", path);
                goto done;
            }
            break;
        }
    }
    err = swf_json_parse_named(strcmp(path, "-") == 0 ? "<stdin>" : path, buf, len, max_bytes, out);
done:
    free(buf);
    if (f != stdin)
        fclose(f);
    return err;
}

const char *swf_json_str(json_object *v)
{
    if (v == NULL)
        return "null";
    return json_object_to_json_string_ext(v,
                                          JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

bool swf_json_any_string(json_object *v, swf_json_string_test_fn test, void *ctx)
{
    switch (json_object_get_type(v)) {
    case json_type_string:
        return test(json_object_get_string(v), (size_t)json_object_get_string_len(v), ctx);
    case json_type_array:
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            if (swf_json_any_string(json_object_array_get_idx(v, i), test, ctx))
                return true;
        }
        return false;
    case json_type_object: {
        json_object_object_foreach(v, key, member)
        {
            if (test(key, strlen(key), ctx) || swf_json_any_string(member, test, ctx))
                return true;
        }
        return false;
    }
    default:
        return false;
    }
}

/* Member names are C strings in json-c: they end at a U+0000, so only
 * string values can hold one. */
static bool has_nul(const char *s, size_t len, void *ctx)
{
    return memchr(s, '\0', len) != NULL;
}

bool swf_json_holds_nul(json_object *v)
{
    return swf_json_any_string(v, has_nul, NULL);
}

bool swf_json_is_number(json_object *v)
{
    return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double);
}

bool swf_json_as_int64(json_object *v, int64_t *out)
{
    if (json_object_is_type(v, json_type_int)) {
        *out = json_object_get_int64(v);
        return true;
    }
    if (!json_object_is_type(v, json_type_double))
        return false;
    double d = json_object_get_double(v);
    if (!isfinite(d) || d != floor(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0)
        return false;
    *out = (int64_t)d;
    return true;
}

const char *swf_json_type_name(json_object *v)
{
    switch (json_object_get_type(v)) {
    case json_type_null:
        return "null";
    case json_type_boolean:
        return "boolean";
    case json_type_int:
    case json_type_double:
        return "number";
    case json_type_string:
        return "string";
    case json_type_array:
        return "array";
    case json_type_object:
        return "object";
    }
    return "unknown";
}

bool swf_json_equal(json_object *a, json_object *b)
{
    if (a == b)
        return true;
    if (swf_json_is_number(a) && swf_json_is_number(b)) {
        bool ia = json_object_is_type(a, json_type_int), ib = json_object_is_type(b, json_type_int);
        if (ia && ib)
            return json_object_get_int64(a) == json_object_get_int64(b);
        if (ia || ib) {
            /* Exactly, not through a double: 2^53 + 1 is not 2^53.0. */
            int64_t i = json_object_get_int64(ia ? a : b);
            double d = json_object_get_double(ia ? b : a);
            if (d != floor(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0)
                return false;
            return (int64_t)d == i;
        }
        return json_object_get_double(a) == json_object_get_double(b);
    }
    json_type t = json_object_get_type(a);
    if (t != json_object_get_type(b))
        return false;
    switch (t) {
    case json_type_null:
        return true;
    case json_type_boolean:
        return json_object_get_boolean(a) == json_object_get_boolean(b);
    case json_type_string: {
        int la = json_object_get_string_len(a), lb = json_object_get_string_len(b);
        return la == lb &&
               memcmp(json_object_get_string(a), json_object_get_string(b), (size_t)la) == 0;
    }
    case json_type_array: {
        size_t n = json_object_array_length(a);
        if (n != json_object_array_length(b))
            return false;
        for (size_t i = 0; i < n; i++) {
            if (!swf_json_equal(json_object_array_get_idx(a, i), json_object_array_get_idx(b, i)))
                return false;
        }
        return true;
    }
    case json_type_object: {
        if (json_object_object_length(a) != json_object_object_length(b))
            return false;
        json_object_object_foreach(a, key, va)
        {
            json_object *vb;
            if (!json_object_object_get_ex(b, key, &vb) || !swf_json_equal(va, vb))
                return false;
        }
        return true;
    }
    default:
        return false;
    }
}

json_object *swf_json_copy(json_object *v)
{
    if (v == NULL)
        return NULL;
    json_object *copy = NULL;
    if (json_object_deep_copy(v, &copy, NULL) != 0)
        abort(); /* only fails when out of memory */
    return copy;
}

bool swf_json_get(json_object *v, const char *key, json_object **out)
{
    *out = NULL;
    if (!json_object_is_type(v, json_type_object))
        return false;
    return json_object_object_get_ex(v, key, out);
}

const char *swf_json_get_string(json_object *v, const char *key)
{
    json_object *m;
    if (!swf_json_get(v, key, &m) || !json_object_is_type(m, json_type_string))
        return NULL;
    return json_object_get_string(m);
}

size_t swf_utf8_cut(const char *s, size_t len, size_t max)
{
    if (len <= max)
        return len;
    while (max > 0 && ((unsigned char)s[max] & 0xC0) == 0x80)
        max--;
    return max;
}
