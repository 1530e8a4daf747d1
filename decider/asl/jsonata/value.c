/*
 * value.c - JSONata values: a json-c value plus flags (val_t, internal.h),
 * and the rules every other file applies to one. JSON numbers are made as
 * JavaScript writes them (an int when integral, else the shortest text); a
 * sequence the evaluator built collapses (one item is that item, none is
 * undefined); type names and truthiness ($boolean) are here; and the string
 * side: JSON.stringify as $string does it, and lengths in code points and in
 * UTF-16 code units, which is how JavaScript, and so every position a user
 * sees, counts. Apart from the evaluator so that the built-ins use the same
 * rules without its context.
 */
#include "decider/asl/jsonata/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How $string and & show a number: rounded to 15 significant digits first,
 * which hides binary noise (0.1 + 0.2 shows as 0.3). */
static void number_format15(double d, char out[48])
{
    char t[48];
    snprintf(t, sizeof t, "%.15g", d);
    swf_asl_number_format(strtod(t, NULL), out);
}

/* A new json-c number for d: an int when d is integral and fits. */
swf_error_t *jn__number_new(double d, json_object **out)
{
    *out = NULL;
    if (!isfinite(d))
        return qerr("number out of range: the result is not a finite number");
    if (d == floor(d) && d > -9223372036854775808.0 && d < 9223372036854775808.0) {
        *out = json_object_new_int64((int64_t)d);
    } else {
        char text[48];
        swf_asl_number_format(d, text);
        /* Past 2^63 the format may be all digits (1e20 is
         * 100000000000000000000), which would read back as an integer
         * outside int64_t's range, and be refused (protocol/json_strict.c):
         * a fraction keeps it a double wherever it is read. */
        if (strpbrk(text, ".eE") == NULL)
            strcat(text, ".0");
        *out = json_object_new_double_s(d, text);
    }
    return NULL;
}

const char *jn__func_what(const val_t *v)
{
    return jn__is_regex(v) ? "a regular expression" : "a function";
}

/* A sequence of one value is that value; an empty one is undefined. */
void jn__collapse(val_t *v)
{
    if (!(v->flags & V_SEQ))
        return;
    size_t n = json_object_array_length(v->j);
    if (n == 0) {
        jn__val_free(v);
    } else if (n == 1 && !(v->flags & V_KEEP)) {
        json_object *one = swf_json_ref(json_object_array_get_idx(v->j, 0));
        json_object_put(v->j);
        *v = jn__val_take(one);
    }
}

/* The end of a built-in that builds a sequence in `seq` (taken): on `err`,
 * seq is dropped and err returned; else *out is seq, collapsed. */
swf_error_t *jn__seq_result(json_object *seq, swf_error_t *err, val_t *out)
{
    if (err) {
        json_object_put(seq);
        return err;
    }
    *out = (val_t){seq, V_DEF | V_SEQ, NULL, NULL, NULL};
    jn__collapse(out);
    return NULL;
}

const char *jn__type_name(const val_t *v)
{
    if (!jn__defined(v))
        return "undefined";
    if (jn__is_func(v))
        return "function";
    return swf_json_type_name(v->j);
}

/* JSONata's $boolean: -1 for undefined. */
int jn__truth(json_object *j, int depth)
{
    switch (json_object_get_type(j)) {
    case json_type_null:
        return 0;
    case json_type_boolean:
        return json_object_get_boolean(j);
    case json_type_int:
    case json_type_double:
        return json_object_get_double(j) != 0;
    case json_type_string:
        return json_object_get_string_len(j) > 0;
    case json_type_object:
        return json_object_object_length(j) > 0;
    case json_type_array: {
        size_t n = json_object_array_length(j);
        if (n == 1)
            return depth < SWF_LIMIT_JSON_DEPTH
                       ? jn__truth(json_object_array_get_idx(j, 0), depth + 1)
                       : 0;
        for (size_t i = 0; i < n; i++) {
            if (depth < SWF_LIMIT_JSON_DEPTH &&
                jn__truth(json_object_array_get_idx(j, i), depth + 1))
                return 1;
        }
        return 0;
    }
    }
    return 0;
}

static void json_quote(buf_t *b, const char *s, size_t n)
{
    buf_ch(b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '"':
            buf_str(b, "\\\"");
            break;
        case '\\':
            buf_str(b, "\\\\");
            break;
        case '\b':
            buf_str(b, "\\b");
            break;
        case '\f':
            buf_str(b, "\\f");
            break;
        case '\n':
            buf_str(b, "\\n");
            break;
        case '\r':
            buf_str(b, "\\r");
            break;
        case '\t':
            buf_str(b, "\\t");
            break;
        default:
            if (c < 0x20) {
                char e[8];
                snprintf(e, sizeof e, "\\u%04x", c);
                buf_str(b, e);
            } else {
                buf_ch(b, (char)c);
            }
        }
    }
    buf_ch(b, '"');
}

static void newline_indent(buf_t *b, int indent, int level)
{
    buf_ch(b, '\n');
    for (int i = 0; i < indent * level; i++)
        buf_ch(b, ' ');
}

/* JSON.stringify as $string does it: numbers to 15 significant digits;
 * indent > 0 pretty-prints. */
static swf_error_t *stringify(buf_t *b, json_object *j, int indent, int level)
{
    if (level > SWF_LIMIT_JSON_DEPTH)
        return qerr("$string: the value is nested too deep");
    char num[48];
    switch (json_object_get_type(j)) {
    case json_type_null:
        buf_str(b, "null");
        break;
    case json_type_boolean:
        buf_str(b, json_object_get_boolean(j) ? "true" : "false");
        break;
    case json_type_int:
    case json_type_double: {
        double d = json_object_get_double(j);
        if (!isfinite(d))
            return qerr("$string: cannot convert a non-finite number");
        number_format15(d, num);
        buf_str(b, num);
        break;
    }
    case json_type_string:
        json_quote(b, json_object_get_string(j), (size_t)json_object_get_string_len(j));
        break;
    case json_type_array: {
        size_t n = json_object_array_length(j);
        buf_ch(b, '[');
        for (size_t i = 0; i < n; i++) {
            if (i)
                buf_ch(b, ',');
            if (indent)
                newline_indent(b, indent, level + 1);
            swf_error_t *err = stringify(b, json_object_array_get_idx(j, i), indent, level + 1);
            if (err)
                return err;
        }
        if (indent && n)
            newline_indent(b, indent, level);
        buf_ch(b, ']');
        break;
    }
    case json_type_object: {
        bool first = true;
        buf_ch(b, '{');
        json_object_object_foreach(j, key, v)
        {
            if (!first)
                buf_ch(b, ',');
            if (indent)
                newline_indent(b, indent, level + 1);
            first = false;
            json_quote(b, key, strlen(key));
            buf_str(b, indent ? ": " : ":");
            swf_error_t *err = stringify(b, v, indent, level + 1);
            if (err)
                return err;
        }
        if (indent && !first)
            newline_indent(b, indent, level);
        buf_ch(b, '}');
        break;
    }
    }
    if (b->over)
        return qerr("$string: the result is longer than %u bytes", SWF_LIMIT_PAYLOAD_BYTES);
    return NULL;
}

/* Casts v to a string as $string does (v defined). */
swf_error_t *jn__to_string(const val_t *v, int indent, buf_t *b)
{
    if (jn__is_func(v))
        return NULL; /* functions show as "" */
    if (jn__is_string(v->j)) {
        buf_add(b, json_object_get_string(v->j), (size_t)json_object_get_string_len(v->j));
        if (b->over)
            return qerr("the string is longer than %u bytes", SWF_LIMIT_PAYLOAD_BYTES);
        return NULL;
    }
    return stringify(b, v->j, indent, 0);
}

val_t jn__string_val(const char *s, size_t n)
{
    return jn__val_take(json_object_new_string_len(s, (int)n));
}

/* Byte offsets of the code points of s[0..n): starts[0..*count], the last
 * being n. */
size_t *jn__utf8_starts(const char *s, size_t n, size_t *count)
{
    size_t *starts = malloc((n + 1) * sizeof *starts);
    if (starts == NULL)
        abort();
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (((unsigned char)s[i] & 0xC0) != 0x80)
            starts[k++] = i;
    }
    starts[k] = n;
    *count = k;
    return starts;
}

size_t jn__utf8_length(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += ((unsigned char)s[i] & 0xC0) != 0x80;
    return k;
}

/* The length of s[0..n) in UTF-16 code units, as JavaScript counts
 * positions in a string (a code point past U+FFFF is two). */
size_t jn__utf16_length(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char b = (unsigned char)s[i];
        k += (b & 0xC0) != 0x80;
        k += b >= 0xF0;
    }
    return k;
}
