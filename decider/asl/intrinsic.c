/*
 * intrinsic.c - parsing and evaluating the States.* intrinsic functions.
 *
 * An expression is parsed into a small tree (calls, string literals, other
 * literals, paths) and the tree is then evaluated bottom-up: arguments first,
 * then the function on their values. Parsing once and evaluating the tree,
 * rather than evaluating while scanning, keeps the two concerns apart and
 * lets swf_asl_intrinsic_check share every syntax rule with evaluation: the
 * checker is the parser without the evaluation. Trees are small (the
 * expression is at most SWF_LIMIT_PATH_BYTES long and nested at most
 * SWF_LIMIT_INTRINSIC_DEPTH calls deep) and are rebuilt on every evaluation;
 * caching them is not worth the shared state.
 *
 * A string literal keeps both its decoded value and its raw text, because
 * States.Format must tell an escaped brace (\{, a literal character) from a
 * placeholder ({}); once decoded the two look the same.
 *
 * The semantics follow the AWS documentation and what AWS does where it is
 * silent: numeric arguments that must be integers are rounded half up first
 * (AWS turns States.MathAdd(1.5, 1.51) into 4); States.MathRandom draws from
 * the decision's random source (env->rng), or from a generator seeded by its
 * seed argument, so replay gives the same numbers; States.UUID draws from the
 * same source. Every failure of a function is States.IntrinsicFailure with a
 * message naming the function; a path argument that selects nothing keeps the
 * path's own States.Runtime error.
 */
#include "decider/asl/intrinsic.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/printbuf.h>

#include "decider/asl/path.h"
#include "protocol/hash.h"
#include "protocol/json.h"
#include "protocol/limits.h"

#define INTRINSIC_FAILURE "States.IntrinsicFailure"

/* Integers beyond 2^53 cannot all be represented by a JSON number that went
 * through a double, so integer arguments are bounded by it. */
#define INTRINSIC_INT_MAX 9007199254740992.0

typedef enum node_kind {
    NODE_CALL,
    NODE_STRING, /* a quoted literal */
    NODE_VALUE,  /* a number, true, false or null literal */
    NODE_PATH,
} node_kind_t;

typedef struct func func_t;

typedef struct node {
    node_kind_t kind;
    const func_t *fn;   /* NODE_CALL */
    struct node **args; /* NODE_CALL */
    size_t nargs;
    char *text;         /* NODE_STRING: raw body between the quotes; NODE_PATH: the path */
    json_object *value; /* NODE_STRING: the decoded string; NODE_VALUE: the literal */
} node_t;

/* What a function sees: the call (for the raw text of literal arguments),
 * the evaluated arguments (borrowed) and the env. */
typedef struct call {
    const node_t *node;
    json_object **argv;
    size_t argc;
    const swf_asl_env_t *env;
} call_t;

typedef swf_error_t *(*func_impl_t)(const call_t *call, json_object **out);

struct func {
    const char *name; /* without "States." */
    size_t min_args;
    size_t max_args; /* SIZE_MAX: no maximum */
    func_impl_t impl;
};

/* ---- helpers shared by the functions ---- */

static swf_error_t *fail(const call_t *call, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static swf_error_t *fail(const call_t *call, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return swf_error_states(INTRINSIC_FAILURE, "States.%s: %s", call->node->fn->name, msg);
}

/* Ordinal words keep messages readable: "the second argument". */
static const char *ordinal(size_t i)
{
    static const char *words[] = {"first", "second", "third", "fourth", "fifth"};
    return i < sizeof(words) / sizeof(words[0]) ? words[i] : "an";
}

/* The arg_* readers set their outputs on failure too (empty, zero): a
 * caller reads them only on success, but GCC's optimiser cannot see that
 * through the error pointer and warns (maybe-uninitialized at -O2 and -O3). */
static swf_error_t *arg_string(const call_t *call, size_t i, const char **s, size_t *len)
{
    json_object *v = call->argv[i];
    *s = "";
    *len = 0;
    if (!json_object_is_type(v, json_type_string))
        return fail(call, "the %s argument must be a string (got %s)", ordinal(i),
                    swf_json_type_name(v));
    *s = json_object_get_string(v);
    *len = (size_t)json_object_get_string_len(v);
    return NULL;
}

static swf_error_t *arg_array(const call_t *call, size_t i, json_object **a)
{
    json_object *v = call->argv[i];
    *a = NULL;
    if (!json_object_is_type(v, json_type_array))
        return fail(call, "the %s argument must be an array (got %s)", ordinal(i),
                    swf_json_type_name(v));
    *a = v;
    return NULL;
}

/* An integer argument. AWS rounds a number with a fraction to the nearest
 * integer, halves up, before using it (States.MathAdd(1.5, 1.51) is 4). */
static swf_error_t *arg_integer(const call_t *call, size_t i, int64_t *n)
{
    json_object *v = call->argv[i];
    *n = 0;
    if (!swf_json_is_number(v))
        return fail(call, "the %s argument must be a number (got %s)", ordinal(i),
                    swf_json_type_name(v));
    if (json_object_is_type(v, json_type_int)) {
        *n = json_object_get_int64(v);
        if ((double)*n > INTRINSIC_INT_MAX || (double)*n < -INTRINSIC_INT_MAX)
            return fail(call, "the %s argument is too large", ordinal(i));
        return NULL;
    }
    double d = floor(json_object_get_double(v) + 0.5);
    if (!(d <= INTRINSIC_INT_MAX && d >= -INTRINSIC_INT_MAX))
        return fail(call, "the %s argument is too large", ordinal(i));
    *n = (int64_t)d;
    return NULL;
}

/* The length of a UTF-8 string in characters as AWS counts them (Java's
 * String.length(): UTF-16 code units, so a character outside the Basic
 * Multilingual Plane counts twice). The 10,000-character limits of
 * States.Hash, States.Base64Encode and States.Base64Decode are in these
 * units, not in bytes. */
static size_t utf16_length(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c & 0xC0) != 0x80) /* not a continuation byte */
            n += c >= 0xF0 ? 2 : 1;
    }
    return n;
}

/* Out-of-memory inside json-c is not recoverable here, as in swf_error_new. */
static json_object *must(json_object *v)
{
    if (v == NULL) {
        fputs("swf: out of memory\n", stderr);
        abort();
    }
    return v;
}

static void pb_append(struct printbuf *pb, const char *s, int len)
{
    if (printbuf_memappend(pb, s, len) < 0) {
        fputs("swf: out of memory\n", stderr);
        abort();
    }
}

static swf_asl_rng_t rng_fallback(void)
{
    /* Used when the env has no random source: tests and tools that do not
     * care about randomness still get a deterministic answer. */
    swf_asl_rng_t rng = {0x5eed5eed5eed5eedULL};
    return rng;
}

/* ---- the functions ---- */

/* Renders one value of States.Format as AWS does: a string as its characters
 * (no quotes, at any depth), a number, boolean or null as its JSON text, an
 * array as "[" its items joined by ", " "]" and an object as "{" its
 * "key=value" members, in their order, joined by ", " "}" (Java's
 * List/Map toString; recorded on AWS: {"Arg1":1,"Arg2":[]} prints
 * {Arg1=1, Arg2=[]}). Nesting is bounded by the payload's JSON depth. */
static void format_render(json_object *v, struct printbuf *pb)
{
    switch (json_object_get_type(v)) {
    case json_type_string:
        pb_append(pb, json_object_get_string(v), json_object_get_string_len(v));
        return;
    case json_type_array: {
        size_t n = json_object_array_length(v);
        pb_append(pb, "[", 1);
        for (size_t i = 0; i < n; i++) {
            if (i > 0)
                pb_append(pb, ", ", 2);
            format_render(json_object_array_get_idx(v, i), pb);
        }
        pb_append(pb, "]", 1);
        return;
    }
    case json_type_object: {
        bool first = true;
        pb_append(pb, "{", 1);
        json_object_object_foreach(v, key, member)
        {
            if (!first)
                pb_append(pb, ", ", 2);
            first = false;
            pb_append(pb, key, (int)strlen(key));
            pb_append(pb, "=", 1);
            format_render(member, pb);
        }
        pb_append(pb, "}", 1);
        return;
    }
    default: {
        const char *s = swf_json_str(v);
        pb_append(pb, s, (int)strlen(s));
        return;
    }
    }
}

static swf_error_t *fn_format(const call_t *call, json_object **out)
{
    const char *t;
    size_t len;
    swf_error_t *err = NULL;
    struct printbuf *pb = NULL;

    /* A literal template is read raw so that \{ stays apart from {; a
     * template from a path is read with the same escapes. */
    if (call->node->args[0]->kind == NODE_STRING) {
        t = call->node->args[0]->text;
        len = strlen(t);
    } else if ((err = arg_string(call, 0, &t, &len)) != NULL) {
        return err;
    }

    pb = printbuf_new();
    if (pb == NULL)
        return swf_error_new(SWF_E_NOMEM, NULL, "out of memory");
    size_t next = 1;
    for (size_t i = 0; i < len; i++) {
        if (t[i] == '\\' && i + 1 < len && strchr("'{}\\", t[i + 1]) != NULL) {
            pb_append(pb, t + i + 1, 1);
            i++;
        } else if (t[i] == '{' && i + 1 < len && t[i + 1] == '}') {
            if (next >= call->argc) {
                err = fail(call,
                           "the template has more {} placeholders than the %zu "
                           "argument(s) after it",
                           call->argc - 1);
                goto done;
            }
            format_render(call->argv[next++], pb);
            i++;
        } else {
            pb_append(pb, t + i, 1);
        }
    }
    if (next != call->argc) {
        err = fail(call, "the template has %zu {} placeholder(s) but %zu argument(s) follow it",
                   next - 1, call->argc - 1);
        goto done;
    }
    *out = must(json_object_new_string_len(pb->buf, pb->bpos));
done:
    printbuf_free(pb);
    return err;
}

static swf_error_t *fn_string_to_json(const call_t *call, json_object **out)
{
    const char *s;
    size_t len;
    swf_error_t *err = arg_string(call, 0, &s, &len);
    if (err != NULL)
        return err;
    /* An empty or blank string is null on AWS (recorded), not an error. */
    size_t blank = 0;
    while (blank < len && strchr(" \t\r\n", s[blank]) != NULL)
        blank++;
    if (blank == len) {
        *out = NULL;
        return NULL;
    }
    err = swf_json_parse(s, len, SWF_LIMIT_PAYLOAD_BYTES, out);
    if (err != NULL) {
        swf_error_t *wrapped = fail(call, "%s", swf_error_message(err));
        swf_error_free(err);
        return wrapped;
    }
    return NULL;
}

static swf_error_t *fn_json_to_string(const call_t *call, json_object **out)
{
    *out = must(json_object_new_string(swf_json_str(call->argv[0])));
    return NULL;
}

static swf_error_t *fn_array(const call_t *call, json_object **out)
{
    json_object *a = must(json_object_new_array_ext((int)call->argc));
    for (size_t i = 0; i < call->argc; i++)
        json_object_array_add(a, swf_json_ref(call->argv[i]));
    *out = a;
    return NULL;
}

static swf_error_t *fn_array_partition(const call_t *call, json_object **out)
{
    json_object *a = NULL;
    int64_t chunk;
    swf_error_t *err;
    if ((err = arg_array(call, 0, &a)) != NULL || (err = arg_integer(call, 1, &chunk)) != NULL)
        return err;
    if (chunk <= 0)
        return fail(call, "the chunk size must be greater than 0, not %lld", (long long)chunk);

    size_t n = json_object_array_length(a);
    json_object *result = must(json_object_new_array());
    json_object *part = NULL;
    for (size_t i = 0; i < n; i++) {
        if (part == NULL) {
            part = must(json_object_new_array());
            json_object_array_add(result, part);
        }
        json_object_array_add(part, swf_json_ref(json_object_array_get_idx(a, i)));
        if (json_object_array_length(part) == (size_t)chunk)
            part = NULL;
    }
    *out = result;
    return NULL;
}

static swf_error_t *fn_array_contains(const call_t *call, json_object **out)
{
    json_object *a = NULL;
    swf_error_t *err = arg_array(call, 0, &a);
    if (err != NULL)
        return err;
    bool found = false;
    size_t n = json_object_array_length(a);
    for (size_t i = 0; i < n && !found; i++)
        found = swf_json_equal(json_object_array_get_idx(a, i), call->argv[1]);
    *out = must(json_object_new_boolean(found));
    return NULL;
}

static swf_error_t *fn_array_range(const call_t *call, json_object **out)
{
    int64_t start, end, step;
    swf_error_t *err;
    if ((err = arg_integer(call, 0, &start)) != NULL ||
        (err = arg_integer(call, 1, &end)) != NULL || (err = arg_integer(call, 2, &step)) != NULL)
        return err;
    if (step == 0)
        return fail(call, "the step must not be 0");

    /* The bounds are at most 2^53 in size, so these differences fit. */
    int64_t count = 0;
    if ((step > 0 && end >= start) || (step < 0 && end <= start))
        count = (end - start) / step + 1;
    if (count > SWF_LIMIT_ARRAY_RANGE_ITEMS)
        return fail(call, "the range has %lld items; at most %d are allowed", (long long)count,
                    SWF_LIMIT_ARRAY_RANGE_ITEMS);

    json_object *a = must(json_object_new_array_ext((int)count));
    for (int64_t i = 0; i < count; i++)
        json_object_array_add(a, must(json_object_new_int64(start + i * step)));
    *out = a;
    return NULL;
}

static swf_error_t *fn_array_get_item(const call_t *call, json_object **out)
{
    json_object *a = NULL;
    int64_t index;
    swf_error_t *err;
    if ((err = arg_array(call, 0, &a)) != NULL || (err = arg_integer(call, 1, &index)) != NULL)
        return err;
    size_t n = json_object_array_length(a);
    if (index < 0 || (uint64_t)index >= n)
        return fail(call, "index %lld is out of range for an array of %zu item(s)",
                    (long long)index, n);
    *out = swf_json_ref(json_object_array_get_idx(a, (size_t)index));
    return NULL;
}

static swf_error_t *fn_array_length(const call_t *call, json_object **out)
{
    json_object *a = NULL;
    swf_error_t *err = arg_array(call, 0, &a);
    if (err != NULL)
        return err;
    *out = must(json_object_new_int64((int64_t)json_object_array_length(a)));
    return NULL;
}

/* A structural hash consistent with swf_json_equal (equal values hash the
 * same): numbers hash by their double value, object members are combined in
 * an order-independent way. It lets ArrayUnique run in linear time on the
 * large arrays a Map state may hold, where pairwise comparison would not
 * finish. */
static uint64_t fnv1a(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return h;
}

static uint64_t json_hash(json_object *v)
{
    uint64_t h;
    switch (json_object_get_type(v)) {
    case json_type_null:
        return 0x6e756c6cULL;
    case json_type_boolean:
        return json_object_get_boolean(v) ? 0x74727565ULL : 0x66616c73ULL;
    case json_type_int:
    case json_type_double: {
        double d = json_object_get_double(v);
        if (d == 0)
            d = 0; /* -0 equals 0 */
        memcpy(&h, &d, sizeof(h));
        break;
    }
    case json_type_string:
        h = fnv1a(json_object_get_string(v), (size_t)json_object_get_string_len(v));
        break;
    case json_type_array: {
        size_t n = json_object_array_length(v);
        h = 0x6172726179ULL + n;
        for (size_t i = 0; i < n; i++)
            h = h * 31 + json_hash(json_object_array_get_idx(v, i));
        break;
    }
    case json_type_object: {
        h = 0x6f626a656374ULL;
        json_object_object_foreach(v, key, member)
        {
            /* A sum does not depend on the order of the members. */
            h += fnv1a(key, strlen(key)) * 0x9e3779b97f4a7c15ULL ^ json_hash(member);
        }
        break;
    }
    default:
        h = 0;
    }
    /* A final mix so that small integers spread over the table. */
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    return h;
}

static swf_error_t *fn_array_unique(const call_t *call, json_object **out)
{
    json_object *a = NULL;
    swf_error_t *err = arg_array(call, 0, &a);
    if (err != NULL)
        return err;

    size_t n = json_object_array_length(a);
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    /* Open addressing over indexes into `a`; slot value 0 means empty. */
    size_t *slots = calloc(cap, sizeof(*slots));
    if (slots == NULL)
        return swf_error_new(SWF_E_NOMEM, NULL, "out of memory");
    json_object *result = must(json_object_new_array());
    for (size_t i = 0; i < n; i++) {
        json_object *item = json_object_array_get_idx(a, i);
        size_t s = (size_t)json_hash(item) & (cap - 1);
        bool seen = false;
        while (slots[s] != 0) {
            if (swf_json_equal(json_object_array_get_idx(a, slots[s] - 1), item)) {
                seen = true;
                break;
            }
            s = (s + 1) & (cap - 1);
        }
        if (!seen) {
            slots[s] = i + 1;
            json_object_array_add(result, swf_json_ref(item));
        }
    }
    free(slots);
    *out = result;
    return NULL;
}

static swf_error_t *fn_base64_encode(const call_t *call, json_object **out)
{
    const char *s;
    size_t len;
    char *text = NULL;
    swf_error_t *err = arg_string(call, 0, &s, &len);
    if (err == NULL && utf16_length(s, len) > SWF_LIMIT_INTRINSIC_STRING_CHARS)
        err = fail(call, "the data is %zu characters; the limit is %d", utf16_length(s, len),
                   SWF_LIMIT_INTRINSIC_STRING_CHARS);
    if (err == NULL)
        err = swf_base64_encode(s, len, &text);
    if (err == NULL)
        *out = must(json_object_new_string(text));
    free(text);
    return err;
}

static swf_error_t *fn_base64_decode(const call_t *call, json_object **out)
{
    const char *s;
    size_t len, n = 0;
    uint8_t *bytes = NULL;
    swf_error_t *err = arg_string(call, 0, &s, &len);
    if (err != NULL)
        return err;
    if (utf16_length(s, len) > SWF_LIMIT_INTRINSIC_STRING_CHARS)
        return fail(call, "the data is %zu characters; the limit is %d", utf16_length(s, len),
                    SWF_LIMIT_INTRINSIC_STRING_CHARS);
    err = swf_base64_decode(s, len, &bytes, &n);
    if (err != NULL) {
        swf_error_t *wrapped = fail(call, "%s", swf_error_message(err));
        swf_error_free(err);
        return wrapped;
    }
    if (swf_json_utf8_invalid_at((const char *)bytes, n) < n)
        err = fail(call, "the decoded data is not UTF-8 text");
    else
        *out = must(json_object_new_string_len((const char *)bytes, (int)n));
    free(bytes);
    return err;
}

static swf_error_t *fn_hash(const call_t *call, json_object **out)
{
    const char *data, *name;
    size_t len, name_len;
    swf_hash_alg_t alg;
    swf_error_t *err;
    if ((err = arg_string(call, 0, &data, &len)) != NULL ||
        (err = arg_string(call, 1, &name, &name_len)) != NULL)
        return err;
    /* The message is part of recorded decisions and is kept as it was (in
     * bytes), so that older histories replay. */
    if (utf16_length(data, len) > SWF_LIMIT_INTRINSIC_STRING_CHARS)
        return fail(call, "the data is %zu bytes; the limit is %d", len,
                    SWF_LIMIT_INTRINSIC_STRING_CHARS);
    if (!swf_hash_alg_from_name(name, &alg))
        return fail(call, "unknown algorithm '%s' (MD5, SHA-1, SHA-256, SHA-384 or SHA-512)", name);
    uint8_t digest[SWF_HASH_MAX_BYTES];
    char hex[2 * SWF_HASH_MAX_BYTES + 1];
    swf_hash_digest(alg, data, len, digest);
    swf_hash_hex_encode(digest, swf_hash_size(alg), hex);
    *out = must(json_object_new_string(hex));
    return NULL;
}

static swf_error_t *fn_json_merge(const call_t *call, json_object **out)
{
    json_object *a = call->argv[0], *b = call->argv[1], *deep = call->argv[2];
    for (size_t i = 0; i < 2; i++) {
        if (!json_object_is_type(call->argv[i], json_type_object))
            return fail(call, "the %s argument must be an object (got %s)", ordinal(i),
                        swf_json_type_name(call->argv[i]));
    }
    if (!json_object_is_type(deep, json_type_boolean))
        return fail(call, "the third argument must be a boolean (got %s)",
                    swf_json_type_name(deep));
    if (json_object_get_boolean(deep))
        return fail(call, "deep merge (true) is not supported; use false");

    /* Shallow: the second object's members replace the first's. The values
     * are shared, not copied; only the new object is ours. */
    json_object *merged = must(json_object_new_object());
    json_object_object_foreach(a, ka, va) json_object_object_add(merged, ka, swf_json_ref(va));
    json_object_object_foreach(b, kb, vb) json_object_object_add(merged, kb, swf_json_ref(vb));
    *out = merged;
    return NULL;
}

static swf_error_t *fn_math_random(const call_t *call, json_object **out)
{
    int64_t start, end, seed;
    swf_error_t *err;
    if ((err = arg_integer(call, 0, &start)) != NULL || (err = arg_integer(call, 1, &end)) != NULL)
        return err;
    if (start >= end)
        return fail(call, "the start (%lld) must be less than the end (%lld)", (long long)start,
                    (long long)end);

    swf_asl_rng_t local = rng_fallback();
    swf_asl_rng_t *rng = &local;
    if (call->argc == 3) {
        /* A seeded call is a pure function of its seed; the splitmix64
         * output function spreads nearby seeds apart. */
        if ((err = arg_integer(call, 2, &seed)) != NULL)
            return err;
        local.state = (uint64_t)seed;
    } else if (call->env != NULL && call->env->rng != NULL) {
        rng = call->env->rng;
    }
    uint64_t span = (uint64_t)(end - start);
    int64_t r = start + (int64_t)(uint64_t)(swf_asl_rng_unit(rng) * (double)span);
    if (r >= end) /* rounding of a huge span */
        r = end - 1;
    *out = must(json_object_new_int64(r));
    return NULL;
}

static swf_error_t *fn_math_add(const call_t *call, json_object **out)
{
    int64_t a, b;
    swf_error_t *err;
    if ((err = arg_integer(call, 0, &a)) != NULL || (err = arg_integer(call, 1, &b)) != NULL)
        return err;
    /* AWS: "You must specify integer values in the range of -2147483648 and
     * 2147483647" (after rounding). The sum itself may leave that range. */
    for (size_t i = 0; i < 2; i++) {
        int64_t v = i == 0 ? a : b;
        if (v < INT32_MIN || v > INT32_MAX)
            return fail(call, "the %s argument %lld is outside -2147483648 to 2147483647",
                        ordinal(i), (long long)v);
    }
    *out = must(json_object_new_int64(a + b)); /* each fits 32 bits: no overflow */
    return NULL;
}

/* The length of the UTF-8 sequence starting with byte c (1 for a stray
 * continuation byte, so that splitting always advances). */
static size_t utf8_len(unsigned char c)
{
    if (c >= 0xf0 && c < 0xf8)
        return 4;
    if (c >= 0xe0)
        return 3;
    if (c >= 0xc0)
        return 2;
    return 1;
}

static swf_error_t *fn_string_split(const call_t *call, json_object **out)
{
    const char *s, *delims;
    size_t len, dlen;
    swf_error_t *err;
    if ((err = arg_string(call, 0, &s, &len)) != NULL ||
        (err = arg_string(call, 1, &delims, &dlen)) != NULL)
        return err;

    /* Every character (not byte) of the delimiter string separates; the
     * empty pieces between adjacent separators are dropped, as AWS does. */
    json_object *parts = must(json_object_new_array());
    size_t piece = 0, i = 0;
    while (i < len) {
        size_t clen = utf8_len((unsigned char)s[i]);
        if (clen > len - i)
            clen = len - i;
        bool is_delim = false;
        for (size_t j = 0; j < dlen && !is_delim;) {
            size_t dl = utf8_len((unsigned char)delims[j]);
            if (dl > dlen - j)
                dl = dlen - j;
            is_delim = dl == clen && memcmp(delims + j, s + i, clen) == 0;
            j += dl;
        }
        if (is_delim) {
            if (i > piece)
                json_object_array_add(
                    parts, must(json_object_new_string_len(s + piece, (int)(i - piece))));
            piece = i + clen;
        }
        i += clen;
    }
    if (len > piece)
        json_object_array_add(parts,
                              must(json_object_new_string_len(s + piece, (int)(len - piece))));
    *out = parts;
    return NULL;
}

static swf_error_t *fn_uuid(const call_t *call, json_object **out)
{
    swf_asl_rng_t local = rng_fallback();
    swf_asl_rng_t *rng = call->env != NULL && call->env->rng != NULL ? call->env->rng : &local;
    char text[37];
    swf_asl_rng_uuid(rng, text);
    *out = must(json_object_new_string(text));
    return NULL;
}

static const func_t funcs[] = {
    {"Format", 1, SIZE_MAX, fn_format},
    {"StringToJson", 1, 1, fn_string_to_json},
    {"JsonToString", 1, 1, fn_json_to_string},
    {"Array", 0, SIZE_MAX, fn_array},
    {"ArrayPartition", 2, 2, fn_array_partition},
    {"ArrayContains", 2, 2, fn_array_contains},
    {"ArrayRange", 3, 3, fn_array_range},
    {"ArrayGetItem", 2, 2, fn_array_get_item},
    {"ArrayLength", 1, 1, fn_array_length},
    {"ArrayUnique", 1, 1, fn_array_unique},
    {"Base64Encode", 1, 1, fn_base64_encode},
    {"Base64Decode", 1, 1, fn_base64_decode},
    {"Hash", 2, 2, fn_hash},
    {"JsonMerge", 3, 3, fn_json_merge},
    {"MathRandom", 2, 3, fn_math_random},
    {"MathAdd", 2, 2, fn_math_add},
    {"StringSplit", 2, 2, fn_string_split},
    {"UUID", 0, 0, fn_uuid},
};

static const func_t *func_find(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
        if (strlen(funcs[i].name) == len && memcmp(funcs[i].name, name, len) == 0)
            return &funcs[i];
    }
    return NULL;
}

/* ---- the tree ---- */

static void node_free(node_t *n)
{
    if (n == NULL)
        return;
    for (size_t i = 0; i < n->nargs; i++)
        node_free(n->args[i]);
    free(n->args);
    free(n->text);
    json_object_put(n->value);
    free(n);
}

static node_t *node_new(node_kind_t kind)
{
    node_t *n = calloc(1, sizeof(*n));
    if (n == NULL) {
        fputs("swf: out of memory\n", stderr);
        abort();
    }
    n->kind = kind;
    return n;
}

/* ---- the parser ---- */

typedef struct parser {
    const char *s;
    size_t pos;
} parser_t;

static swf_error_t *syntax(const parser_t *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static swf_error_t *syntax(const parser_t *p, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return swf_error_new(SWF_E_INPUT, NULL, "invalid intrinsic function: %s at offset %zu", msg,
                         p->pos);
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static void skip_space(parser_t *p)
{
    while (is_space(p->s[p->pos]))
        p->pos++;
}

static bool is_ident(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/* True at the end of an argument: white space, ',' or ')'. */
static bool at_arg_end(const parser_t *p)
{
    char c = p->s[p->pos];
    return c == '\0' || c == ',' || c == ')' || is_space(c);
}

static swf_error_t *parse_call(parser_t *p, int depth, node_t **out);

static swf_error_t *parse_string(parser_t *p, node_t **out)
{
    size_t start = ++p->pos; /* after the opening quote */
    char *decoded = malloc(strlen(p->s + start) + 1);
    size_t n = 0;
    if (decoded == NULL)
        return swf_error_new(SWF_E_NOMEM, NULL, "out of memory");
    for (;;) {
        char c = p->s[p->pos];
        if (c == '\0') {
            free(decoded);
            return syntax(p, "unterminated string literal");
        }
        if (c == '\'')
            break;
        if (c == '\\') {
            char e = p->s[p->pos + 1];
            if (e == '\0' || strchr("'{}\\", e) == NULL) {
                free(decoded);
                return syntax(p,
                              "invalid escape '\\%c' in a string literal (only \\', \\{, \\} "
                              "and \\\\ are allowed)",
                              e == '\0' ? ' ' : e);
            }
            decoded[n++] = e;
            p->pos += 2;
            continue;
        }
        decoded[n++] = c;
        p->pos++;
    }
    node_t *node = node_new(NODE_STRING);
    node->text = strndup(p->s + start, p->pos - start);
    node->value = json_object_new_string_len(decoded, (int)n);
    free(decoded);
    if (node->text == NULL || node->value == NULL) {
        node_free(node);
        return swf_error_new(SWF_E_NOMEM, NULL, "out of memory");
    }
    p->pos++; /* the closing quote */
    *out = node;
    return NULL;
}

/* A path runs to the first ',' or ')' outside brackets, parentheses and
 * quotes, so that $['a,b'] and $[?(@.x > 1)] stay whole. */
static swf_error_t *parse_path(parser_t *p, node_t **out)
{
    size_t start = p->pos;
    int depth = 0;
    char quote = 0;
    for (;; p->pos++) {
        char c = p->s[p->pos];
        if (c == '\0')
            break;
        if (quote) {
            if (c == '\\' && p->s[p->pos + 1] != '\0')
                p->pos++;
            else if (c == quote)
                quote = 0;
            continue;
        }
        if (depth > 0 && (c == '\'' || c == '"'))
            quote = c;
        else if (c == '[' || c == '(')
            depth++;
        else if ((c == ']' || c == ')') && depth > 0)
            depth--;
        else if (depth == 0 && (c == ',' || c == ')'))
            break;
    }
    if (quote || depth > 0)
        return syntax(p, "unterminated path");
    size_t end = p->pos;
    while (end > start && is_space(p->s[end - 1]))
        end--;
    char *path = strndup(p->s + start, end - start);
    if (path == NULL)
        return swf_error_new(SWF_E_NOMEM, NULL, "out of memory");
    swf_error_t *err = swf_asl_path_check(path, SWF_ASL_PATH_ANY);
    if (err != NULL) {
        swf_error_prefix(err, "invalid intrinsic function: path argument %s", path);
        free(path);
        return err;
    }
    node_t *node = node_new(NODE_PATH);
    node->text = path;
    *out = node;
    return NULL;
}

/* Numbers as in JSON: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
static swf_error_t *parse_number(parser_t *p, node_t **out)
{
    const char *s = p->s;
    size_t i = p->pos;
    bool integral = true;
    if (s[i] == '-')
        i++;
    if (s[i] == '0') {
        i++;
    } else if (s[i] >= '1' && s[i] <= '9') {
        while (s[i] >= '0' && s[i] <= '9')
            i++;
    } else {
        return syntax(p, "invalid number");
    }
    if (s[i] == '.') {
        integral = false;
        i++;
        if (!(s[i] >= '0' && s[i] <= '9'))
            return syntax(p, "invalid number");
        while (s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (s[i] == 'e' || s[i] == 'E') {
        integral = false;
        i++;
        if (s[i] == '+' || s[i] == '-')
            i++;
        if (!(s[i] >= '0' && s[i] <= '9'))
            return syntax(p, "invalid number");
        while (s[i] >= '0' && s[i] <= '9')
            i++;
    }
    /* Room for ".0": an integer past int64_t's range is kept as a double,
     * written with a fraction so that it reads back as one
     * (protocol/json_strict.c refuses such an integer). */
    char *text = malloc(i - p->pos + 3);
    if (text == NULL)
        return swf_error_new(SWF_E_NOMEM, NULL, "out of memory");
    memcpy(text, s + p->pos, i - p->pos);
    text[i - p->pos] = '\0';
    json_object *v = NULL;
    errno = 0;
    if (integral) {
        long long n = strtoll(text, NULL, 10);
        if (errno == 0)
            v = json_object_new_int64(n);
    }
    if (v == NULL) {
        /* Keeping the literal's text makes States.Format('{}', 0.1) print
         * 0.1, not the 17 digits of the nearest double. */
        if (integral)
            strcat(text, ".0");
        v = json_object_new_double_s(strtod(text, NULL), text);
    }
    free(text);
    p->pos = i;
    if (!at_arg_end(p)) {
        json_object_put(v);
        return syntax(p, "unexpected character after a number");
    }
    node_t *node = node_new(NODE_VALUE);
    node->value = v;
    *out = node;
    return NULL;
}

static bool match_word(parser_t *p, const char *word)
{
    size_t n = strlen(word);
    if (strncmp(p->s + p->pos, word, n) != 0 || is_ident(p->s[p->pos + n]))
        return false;
    p->pos += n;
    return true;
}

static swf_error_t *parse_arg(parser_t *p, int depth, node_t **out)
{
    char c = p->s[p->pos];
    if (c == '\'')
        return parse_string(p, out);
    if (c == '$')
        return parse_path(p, out);
    if (c == '-' || (c >= '0' && c <= '9'))
        return parse_number(p, out);
    if (strncmp(p->s + p->pos, "States.", 7) == 0)
        return parse_call(p, depth + 1, out);

    json_object *v;
    if (match_word(p, "true"))
        v = json_object_new_boolean(1);
    else if (match_word(p, "false"))
        v = json_object_new_boolean(0);
    else if (match_word(p, "null"))
        v = NULL;
    else
        return syntax(p, "expected an argument (a 'string', a number, true, false, null, a path "
                         "or a States call)");
    if (!at_arg_end(p)) {
        json_object_put(v);
        return syntax(p, "unexpected character after a literal");
    }
    node_t *node = node_new(NODE_VALUE);
    node->value = v;
    *out = node;
    return NULL;
}

static swf_error_t *parse_call(parser_t *p, int depth, node_t **out)
{
    if (depth > SWF_LIMIT_INTRINSIC_DEPTH)
        return swf_error_new(SWF_E_LIMIT, NULL,
                             "invalid intrinsic function: calls are nested more than %d deep",
                             SWF_LIMIT_INTRINSIC_DEPTH);
    if (strncmp(p->s + p->pos, "States.", 7) != 0)
        return syntax(p, "expected 'States.'");
    p->pos += 7;
    size_t name_start = p->pos;
    while (is_ident(p->s[p->pos]))
        p->pos++;
    size_t name_len = p->pos - name_start;
    const func_t *fn = func_find(p->s + name_start, name_len);
    if (fn == NULL) {
        p->pos = name_start;
        return swf_error_new(SWF_E_INPUT, NULL, "unknown intrinsic function States.%.*s",
                             (int)name_len, p->s + name_start);
    }
    if (p->s[p->pos] != '(')
        return syntax(p, "expected '(' after States.%s", fn->name);
    p->pos++;

    swf_error_t *err = NULL;
    node_t *call = node_new(NODE_CALL);
    size_t cap = 0;
    call->fn = fn;
    skip_space(p);
    if (p->s[p->pos] == ')') {
        p->pos++;
    } else {
        for (;;) {
            node_t *arg = NULL;
            skip_space(p);
            if ((err = parse_arg(p, depth, &arg)) != NULL)
                goto done;
            if (call->nargs == cap) {
                cap = cap ? 2 * cap : 4;
                node_t **grown = realloc(call->args, cap * sizeof(*grown));
                if (grown == NULL) {
                    node_free(arg);
                    err = swf_error_new(SWF_E_NOMEM, NULL, "out of memory");
                    goto done;
                }
                call->args = grown;
            }
            call->args[call->nargs++] = arg;
            skip_space(p);
            if (p->s[p->pos] == ')') {
                p->pos++;
                break;
            }
            if (p->s[p->pos] != ',') {
                err = syntax(p, "expected ',' or ')' in the arguments of States.%s", fn->name);
                goto done;
            }
            p->pos++;
        }
    }
    if (call->nargs < fn->min_args || call->nargs > fn->max_args) {
        if (fn->min_args == fn->max_args)
            err = swf_error_new(SWF_E_INPUT, NULL, "States.%s takes %zu argument(s), not %zu",
                                fn->name, fn->min_args, call->nargs);
        else if (fn->max_args == SIZE_MAX)
            err = swf_error_new(SWF_E_INPUT, NULL,
                                "States.%s takes at least %zu argument(s), not %zu", fn->name,
                                fn->min_args, call->nargs);
        else
            err = swf_error_new(SWF_E_INPUT, NULL, "States.%s takes %zu to %zu arguments, not %zu",
                                fn->name, fn->min_args, fn->max_args, call->nargs);
        goto done;
    }
    *out = call;
    call = NULL;
done:
    node_free(call);
    return err;
}

/* Parses a whole expression: one call, optionally surrounded by white space. */
static swf_error_t *parse(const char *expr, node_t **out)
{
    *out = NULL;
    size_t len = strlen(expr);
    if (len > SWF_LIMIT_PATH_BYTES)
        return swf_error_new(SWF_E_LIMIT, NULL,
                             "intrinsic function is %zu bytes long; the limit is %d", len,
                             SWF_LIMIT_PATH_BYTES);
    parser_t p = {expr, 0};
    node_t *root = NULL;
    skip_space(&p);
    swf_error_t *err = parse_call(&p, 1, &root);
    if (err != NULL)
        return err;
    skip_space(&p);
    if (p.s[p.pos] != '\0') {
        node_free(root);
        return syntax(&p, "unexpected text after the call");
    }
    *out = root;
    return NULL;
}

/* ---- evaluation ---- */

static swf_error_t *node_eval(const node_t *n, json_object *input, const swf_asl_env_t *env,
                              json_object **out)
{
    *out = NULL;
    switch (n->kind) {
    case NODE_STRING:
    case NODE_VALUE:
        *out = swf_json_ref(n->value);
        return NULL;
    case NODE_PATH:
        return swf_asl_path_eval(n->text, input, env, out);
    case NODE_CALL:
        break;
    }

    swf_error_t *err = NULL;
    json_object **argv = calloc(n->nargs ? n->nargs : 1, sizeof(*argv));
    if (argv == NULL)
        return swf_error_new(SWF_E_NOMEM, NULL, "out of memory");
    for (size_t i = 0; i < n->nargs; i++) {
        if ((err = node_eval(n->args[i], input, env, &argv[i])) != NULL)
            goto done;
    }
    call_t call = {n, argv, n->nargs, env};
    err = n->fn->impl(&call, out);
    assert(err == NULL || *out == NULL);
done:
    for (size_t i = 0; i < n->nargs; i++)
        json_object_put(argv[i]);
    free(argv);
    return err;
}

/* ---- public ---- */

bool swf_asl_intrinsic_is_call(const char *s)
{
    if (s == NULL)
        return false;
    while (is_space(*s))
        s++;
    if (strncmp(s, "States.", 7) != 0)
        return false;
    s += 7;
    if (!is_ident(*s))
        return false;
    while (is_ident(*s))
        s++;
    return *s == '(';
}

swf_error_t *swf_asl_intrinsic_check(const char *expr)
{
    node_t *root = NULL;
    swf_error_t *err = parse(expr, &root);
    node_free(root);
    return err;
}

swf_error_t *swf_asl_intrinsic_eval(const char *expr, json_object *input, const swf_asl_env_t *env,
                                    json_object **out)
{
    node_t *root = NULL;
    *out = NULL;
    swf_error_t *err = parse(expr, &root);
    if (err != NULL) {
        /* Validation rejects these before a run; an expression built at run
         * time (or never checked) fails the state like any bad call. */
        swf_error_t *wrapped = swf_error_states(INTRINSIC_FAILURE, "%s", swf_error_message(err));
        swf_error_free(err);
        return wrapped;
    }
    err = node_eval(root, input, env, out);
    node_free(root);
    return err;
}
