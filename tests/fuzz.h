/*
 * fuzz.h - mutation rounds for the tests of the code that reads what users
 * and workers send: messages, JSONPath, intrinsic functions and JSONata as
 * text, histories and definitions as JSON values.
 *
 * A text round (fuzz_run) takes a seed, changes it a little (a character
 * replaced, inserted or deleted, a stretch repeated, the text cut, a piece
 * of another seed spliced in) and hands it to the parser; a value round
 * (fuzz_alter_json) replaces or removes one value anywhere in a JSON tree.
 * The test then checks what must hold whatever the input: a clear error or
 * a well-formed result, never a crash (the suite also runs under
 * AddressSanitizer and UBSan). The seeds are real inputs: the state
 * machines and histories recorded in tests/histories. The rounds are the
 * same on every run (a fixed seed); SWF_FUZZ_ROUNDS=N runs N of them
 * instead, SWF_FUZZ_SEED=N other ones. Text mutations keep the text UTF-8,
 * since nothing else gets past the JSON parser (protocol/json.c).
 */
#ifndef SWF_TESTS_FUZZ_H
#define SWF_TESTS_FUZZ_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/alloc.h"
#include "protocol/json.h"

typedef struct fuzz {
    uint64_t state;
} fuzz_t;

typedef struct fuzz_corpus {
    char **v;
    size_t n, cap;
} fuzz_corpus_t;

static inline fuzz_t fuzz_start(void)
{
    const char *s = getenv("SWF_FUZZ_SEED");
    uint64_t seed = s != NULL ? strtoull(s, NULL, 10) : 0;
    return (fuzz_t){seed ? seed : 0x9E3779B97F4A7C15ull};
}

static inline uint64_t fuzz_next(fuzz_t *f)
{
    f->state ^= f->state << 13;
    f->state ^= f->state >> 7;
    f->state ^= f->state << 17;
    return f->state;
}

static inline size_t fuzz_below(fuzz_t *f, size_t n)
{
    return n ? (size_t)(fuzz_next(f) % n) : 0;
}

static inline long fuzz_rounds(long dflt)
{
    const char *s = getenv("SWF_FUZZ_ROUNDS");
    long n = s != NULL ? atol(s) : 0;
    return n > 0 ? n : dflt;
}

static inline void fuzz_corpus_add(fuzz_corpus_t *c, const char *s)
{
    SWF_ARRAY_RESERVE(c->v, c->n, c->cap, 64);
    c->v[c->n++] = swf_strdup(s);
}

static inline void fuzz_corpus_free(fuzz_corpus_t *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i]);
    free(c->v);
    *c = (fuzz_corpus_t){0};
}

/* A mutation of seed (malloc'd), or NULL when it broke a UTF-8 sequence. */
static inline char *fuzz_mutate(fuzz_t *f, const char *seed, const fuzz_corpus_t *all)
{
    static const char alphabet[] = "()[]{}.$\"',*?:;&|=<>!-+/\\%#@~^`_ \t\n0123456789aeuxzEX";
    size_t len = strlen(seed), cap = len * 4 + 64;
    char *s = malloc(cap);
    if (s == NULL)
        abort();
    memcpy(s, seed, len + 1);
    for (int k = 1 + (int)fuzz_below(f, 4); k > 0; k--) {
        len = strlen(s);
        size_t at = fuzz_below(f, len + 1), n = 1 + fuzz_below(f, 8);
        if (at + n > len)
            n = len - at;
        switch (fuzz_below(f, 6)) {
        case 0: /* replace a character */
            if (at < len)
                s[at] = alphabet[fuzz_below(f, sizeof(alphabet) - 1)];
            break;
        case 1: /* insert one */
            memmove(s + at + 1, s + at, len - at + 1);
            s[at] = alphabet[fuzz_below(f, sizeof(alphabet) - 1)];
            break;
        case 2: /* delete a stretch */
            memmove(s + at, s + at + n, len - at - n + 1);
            break;
        case 3: /* repeat a stretch (nesting, long names) */
            if (len + n + 1 < cap)
                memmove(s + at + n, s + at, len - at + 1);
            break;
        case 4: /* cut */
            s[at] = '\0';
            break;
        case 5: { /* splice the end of another seed */
            const char *o = all->v[fuzz_below(f, all->n)];
            size_t ol = strlen(o), from = fuzz_below(f, ol + 1);
            if (at + ol - from + 1 < cap)
                memcpy(s + at, o + from, ol - from + 1);
            break;
        }
        }
    }
    if (swf_json_utf8_invalid_at(s, strlen(s)) < strlen(s)) {
        free(s);
        return NULL;
    }
    return s;
}

/* Calls pick(key, value, c) for every string of a JSON value, with the key
 * it is under ("" in arrays and at the top). */
static inline void fuzz_walk(json_object *v, const char *key,
                             void (*pick)(const char *, const char *, fuzz_corpus_t *),
                             fuzz_corpus_t *c)
{
    if (json_object_is_type(v, json_type_string)) {
        pick(key, json_object_get_string(v), c);
    } else if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++)
            fuzz_walk(json_object_array_get_idx(v, i), "", pick, c);
    } else if (json_object_is_type(v, json_type_object)) {
        json_object_object_foreach(v, k, val) fuzz_walk(val, k, pick, c);
    }
}

/* The strings of the state machines in tests/histories that pick keeps. */
static inline void fuzz_corpus_from_histories(fuzz_corpus_t *c,
                                              void (*pick)(const char *, const char *,
                                                           fuzz_corpus_t *))
{
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/tests/histories", SWF_SOURCE_DIR);
    DIR *d = opendir(dir);
    if (d == NULL)
        return;
    char path[2048], *line = NULL;
    size_t linecap = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t nl = strlen(e->d_name);
        if (nl < 6 || strcmp(e->d_name + nl - 6, ".jsonl") != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (f == NULL)
            continue;
        ssize_t got = getline(&line, &linecap, f);
        fclose(f);
        json_object *first = NULL, *attrs, *def;
        swf_error_t *err = got > 0 ? swf_json_parse(line, (size_t)got, 1u << 24, &first) : NULL;
        if (err == NULL && first != NULL &&
            swf_json_get(first, "workflowExecutionStartedEventAttributes", &attrs) &&
            swf_json_get(attrs, "definition", &def))
            fuzz_walk(def, "", pick, c);
        swf_error_free(err);
        json_object_put(first);
    }
    free(line);
    closedir(d);
}

/* Asserts that a value the engine built is JSON the parser takes back
 * unchanged (text, no NaN, nothing json-c alone would accept). */
static inline void fuzz_assert_json(json_object *v, const char *from)
{
    const char *text = swf_json_str(v);
    json_object *back = NULL;
    swf_error_t *err = swf_json_parse(text, strlen(text), 1u << 26, &back);
    cr_assert_null(err, "%s gave %s: %s", from, text, err ? swf_error_message(err) : "");
    cr_assert(swf_json_equal(v, back), "%s gave %s, which reads back otherwise", from, text);
    json_object_put(back);
}

/* What became of one mutated text. */
typedef enum fuzz_outcome {
    FUZZ_REFUSED, /* refused as it was read (syntax, a field) */
    FUZZ_FAILED,  /* read, then failed with an error that says why */
    FUZZ_EMPTY,   /* read, and gave nothing (an undefined JSONata value) */
    FUZZ_VALUE,   /* read, and gave a value */
} fuzz_outcome_t;

typedef struct fuzz_tally {
    long rounds, outcomes[4];
} fuzz_tally_t;

/* Runs the rounds (SWF_FUZZ_ROUNDS, else dflt): one(text, arg) for each
 * mutation of a seed, skipping those that broke UTF-8. */
static inline fuzz_tally_t fuzz_run(const fuzz_corpus_t *seeds, long dflt,
                                    fuzz_outcome_t (*one)(const char *, void *), void *arg)
{
    cr_assert(seeds->n > 0, "no seeds");
    fuzz_t f = fuzz_start();
    fuzz_tally_t t = {.rounds = fuzz_rounds(dflt)};
    for (long r = 0; r < t.rounds; r++) {
        char *text = fuzz_mutate(&f, seeds->v[fuzz_below(&f, seeds->n)], seeds);
        if (text != NULL)
            t.outcomes[one(text, arg)]++;
        free(text);
    }
    cr_log_info("%ld rounds: %ld refused, %ld failed, %ld empty, %ld values", t.rounds,
                t.outcomes[FUZZ_REFUSED], t.outcomes[FUZZ_FAILED], t.outcomes[FUZZ_EMPTY],
                t.outcomes[FUZZ_VALUE]);
    return t;
}

/* The outcome of an evaluation, which must end in an error with a message
 * or in JSON; takes both. */
static inline fuzz_outcome_t fuzz_outcome(const char *text, swf_error_t *err, json_object *out)
{
    fuzz_outcome_t o = FUZZ_VALUE;
    if (err != NULL) {
        cr_assert(swf_error_message(err)[0] != '\0', "%s: an error without a message", text);
        o = FUZZ_FAILED;
    } else {
        fuzz_assert_json(out, text);
    }
    swf_error_free(err);
    json_object_put(out);
    return o;
}

/* ---- JSON values changed in place (histories, definitions) ---- */

/* Where a value sits: a member of an object or an element of an array. */
typedef struct fuzz_slot {
    json_object *in;
    const char *key; /* NULL: element idx of an array */
    size_t idx;
} fuzz_slot_t;

typedef struct fuzz_slots {
    fuzz_slot_t *v;
    size_t n, cap;
} fuzz_slots_t;

static inline void fuzz_slot_push(fuzz_slots_t *s, fuzz_slot_t at)
{
    SWF_ARRAY_RESERVE(s->v, s->n, s->cap, 32);
    s->v[s->n++] = at;
}

/* Every member and element of v, at any depth. */
static inline void fuzz_slots_of(json_object *v, fuzz_slots_t *s)
{
    if (json_object_is_type(v, json_type_object)) {
        json_object_object_foreach(v, k, val)
        {
            fuzz_slot_push(s, (fuzz_slot_t){v, k, 0});
            fuzz_slots_of(val, s);
        }
    } else if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            fuzz_slot_push(s, (fuzz_slot_t){v, NULL, i});
            fuzz_slots_of(json_object_array_get_idx(v, i), s);
        }
    }
}

/* Replaces or removes one value somewhere in root: with a value of another
 * type, the edge of a range, a word the engine gives meaning to, or a value
 * copied from elsewhere in `other`. The numbers are the edges swf keeps
 * (json_strict.c): the 64-bit integers' ends, -0, the largest and a tiny
 * double, more fraction digits than a double holds; those it refuses never
 * get into a tree (tests/protocol/test_json.c puts them in texts). */
static inline void fuzz_alter_json(fuzz_t *f, json_object *root, json_object *other)
{
    static const char *const values[] = {
        "null",
        "0",
        "-1",
        "9007199254740993",
        "1e300",
        "-0",
        "-0.0",
        "9223372036854775807",
        "-9223372036854775808",
        "1e-300",
        "1.7976931348623157e308",
        "0.1000000000000000000000000000001",
        "0.5",
        "\"\"",
        "\"x\"",
        "true",
        "[]",
        "{}",
        "[{}]",
        "\"$.x\"",
        "\"$$\"",
        "\"States.ALL\"",
        "\"Pass\"",
        "\"{% $x %}\"",
        "\"ActivityTaskCompleted\"",
    };
    size_t nvalues = sizeof(values) / sizeof(values[0]);
    fuzz_slots_t s = {0};
    fuzz_slots_of(root, &s);
    if (s.n == 0) {
        free(s.v);
        return;
    }
    fuzz_slot_t at = s.v[fuzz_below(f, s.n)];
    json_object *nv = NULL;
    size_t pick = fuzz_below(f, nvalues + 3);
    if (pick < nvalues) {
        swf_error_free(swf_json_parse(values[pick], strlen(values[pick]), 64, &nv));
    } else {
        fuzz_slots_t o = {0};
        fuzz_slots_of(other, &o);
        if (o.n > 0) {
            fuzz_slot_t from = o.v[fuzz_below(f, o.n)];
            nv = swf_json_copy(from.key ? json_object_object_get(from.in, from.key)
                                        : json_object_array_get_idx(from.in, from.idx));
        }
        free(o.v);
    }
    if (at.key != NULL && fuzz_below(f, 4) == 0) {
        json_object_object_del(at.in, at.key); /* removed */
        json_object_put(nv);
    } else if (at.key != NULL) {
        json_object_object_add(at.in, at.key, nv);
    } else {
        json_object_array_put_idx(at.in, at.idx, nv);
    }
    free(s.v);
}

#endif
