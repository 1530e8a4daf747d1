/*
 * json.h - JSON helpers over json-c.
 *
 * Ownership, once for the whole project: a json_object is reference counted;
 * a function that returns a `json_object *` through an out-parameter or as
 * its result hands the caller one reference, to be released with
 * json_object_put(). Arguments are borrowed. JSON null is the NULL pointer
 * (json-c's convention), so "no value" is always signalled by an error or a
 * separate flag, never by NULL.
 *
 * Values are immutable once built and may be shared between many owners
 * (state inputs, event attributes, Map results); code that needs a changed
 * value builds a new one (see swf_json_copy). That is what makes replay and
 * backtracking safe.
 */
#ifndef SWF_PROTOCOL_JSON_H
#define SWF_PROTOCOL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "protocol/error.h"

/*
 * Parses exactly one JSON value from buf[0..len) (trailing white space is
 * allowed, anything else is an error). Refuses documents longer than
 * max_bytes or nested deeper than SWF_LIMIT_JSON_DEPTH, and text that is not
 * UTF-8 (RFC 8259 asks for it, and PostgreSQL's jsonb refuses anything
 * else). On success *out holds a new reference (NULL for the JSON text
 * `null`).
 */
swf_error_t *swf_json_parse(const char *buf, size_t len, size_t max_bytes, json_object **out);

/* The same for text swf itself stored in PostgreSQL (events, definitions,
 * outbox payloads), which jsonb has already checked: no strict check (jsonb
 * keeps no duplicate and no lone surrogate), and an integer outside
 * int64_t's range is read as the double it was. swf writes a computed
 * double such as JSONata's $power(10, 20) as 100000000000000000000, and
 * jsonb writes 1e20 so too; json-c would clamp that to UINT64_MAX. It is
 * read as if written 100000000000000000000.0 (the text it is written back
 * with): the same value, never a clamped one. */
swf_error_t *swf_json_parse_stored(const char *buf, size_t len, size_t max_bytes,
                                   json_object **out);

/* For swf_json_parse_stored: a new text (NUL-terminated, its length in
 * *out_len) with ".0" after each integer outside int64_t's range, or NULL
 * when buf[0..len) has none. */
char *swf_json_stored_widen(const char *buf, size_t len, size_t *out_len);

/* The same, for text that has a name (a file, an option): every error
 * message starts with the name, and a syntax error's with
 * "NAME:LINE:COLUMN:" (columns count characters from 1), the form editors
 * jump to. This is where all JSON input from people is parsed. Without a
 * name (swf_json_parse) the messages keep their byte offsets: histories
 * record them (the cause of a failed States.StringToJson), and replay
 * compares them. */
swf_error_t *swf_json_parse_named(const char *name, const char *buf, size_t len, size_t max_bytes,
                                  json_object **out);

/* Looks in the well-formed JSON text buf[0..len) (json-c has accepted it)
 * for what json-c would silently rewrite: two members of one object with the
 * same name, a lone surrogate escape (\ud800), U+0000 in a member name, an
 * integer outside int64_t's range, or another number that reads as
 * infinity (1e400) or as 0 when it is not 0 (1e-400). Returns the
 * byte offset of the first one, with what[0..what_cap) saying what and where
 * ("$.States: duplicate key \"A\""), or len when there is none. Linear in
 * len; thread-safe (protocol/json_strict.c). swf_json_parse* run it. */
size_t swf_json_strict_check(const char *buf, size_t len, char *what, size_t what_cap);

/* For the well-formed text buf[0..len) and the tree v json-c made of it
 * (strict-checked): each integer written -0, which json-c holds as the
 * integer 0, becomes the double -0.0 written "-0", so that it is written
 * back as it came. Takes v; returns the tree (v, or a new root). Linear in
 * len; only walks when the text has a "-0" (protocol/json_strict.c). */
json_object *swf_json_minus_zero_keep(const char *buf, size_t len, json_object *v);

/* The offset of the first byte of s[0..n) that does not belong to a
 * well-formed UTF-8 sequence (RFC 3629: no overlong forms, no surrogates,
 * nothing above U+10FFFF), or n when there is none. */
size_t swf_json_utf8_invalid_at(const char *s, size_t n);

/* A JSON string of the text s[0..n) with each byte that is not part of a
 * well-formed UTF-8 sequence replaced by U+FFFD: for text from outside JSON
 * (a command's stderr, an argument) that goes into a message. */
json_object *swf_json_new_text(const char *s, size_t n);

/* Reads and parses a whole file ("-" is standard input); errors name the
 * file, syntax errors as "FILE:LINE:COLUMN: ...". */
swf_error_t *swf_json_read_file(const char *path, size_t max_bytes, json_object **out);

/* Compact serialisation, without escaping '/'. The string lives until the
 * object is freed or serialised again (json-c's rule). NULL gives "null". */
const char *swf_json_str(json_object *v);

/* Deep structural equality; numbers compare by value, so 1 equals 1.0. */
bool swf_json_equal(json_object *a, json_object *b);

/* Deep copy (a new reference). */
json_object *swf_json_copy(json_object *v);

/* True when v is a JSON number (int or double). */
bool swf_json_is_number(json_object *v);

/* True when v is an integer as JSON Schema counts them (a number with no
 * fractional part: 12, 12.0 and 1.2e1 alike) within int64_t; *out gets it.
 * Other languages' encoders may write a whole number with a fraction or an
 * exponent (Python's json.dumps(12.0) gives "12.0"), which json-c keeps as a
 * double. */
bool swf_json_as_int64(json_object *v, int64_t *out);

/* True when a string value in v holds U+0000 (json-c's member names are C
 * strings, which end at one). */
bool swf_json_holds_nul(json_object *v);

/* A test of one string of a JSON value: a string value (its bytes and
 * length; it may hold U+0000) or a member name (a C string and its length). */
typedef bool (*swf_json_string_test_fn)(const char *s, size_t len, void *ctx);

/* True when test holds for some string anywhere in v, a member name being
 * tested before its value; test gets ctx. */
bool swf_json_any_string(json_object *v, swf_json_string_test_fn test, void *ctx);

/* The length of s[0..len) cut to at most max bytes, never inside a UTF-8
 * sequence (len when it fits). */
size_t swf_utf8_cut(const char *s, size_t len, size_t max);

/* The JSON type name used in messages: "null", "boolean", "number", "string",
 * "array", "object". */
const char *swf_json_type_name(json_object *v);

/* Looks up a member of an object; returns false when v is not an object or
 * has no such key. *out is borrowed (may be NULL for a JSON null member). */
bool swf_json_get(json_object *v, const char *key, json_object **out);

/* Borrowed string member, or NULL when absent or not a string. */
const char *swf_json_get_string(json_object *v, const char *key);

/* Adds `val` (taken) under `key`, which must be a string literal (it is not
 * copied) and not yet present in obj. The hot paths build many small
 * objects; skipping the key copy and the duplicate lookup halves their cost. */
static inline void swf_json_add(json_object *obj, const char *key, json_object *val)
{
    json_object_object_add_ex(obj, key, val,
                              JSON_C_OBJECT_ADD_KEY_IS_NEW | JSON_C_OBJECT_ADD_CONSTANT_KEY);
}

/* Returns a new reference to v (json_object_get that accepts NULL). */
static inline json_object *swf_json_ref(json_object *v)
{
    return v ? json_object_get(v) : NULL;
}

#endif
