/*
 * internal.h - what the files of decider/asl/jsonata/ share; nothing outside
 * the folder includes it (the interface is decider/asl/jsonata.h, the design
 * README.md). Names: a function or object that one file defines and others
 * use is jn__ followed by its name (jn__eval, jn__val_free, jn__fn_map),
 * declared below under the file that defines it; a file's own helpers stay
 * static, unprefixed. Small helpers the hot paths call (the value tests, the
 * budget charges, argument access) are static inline here, so that they
 * inline as they did when the evaluator was one file. Types keep their _t
 * names and enum constants their N_, OP_, TK_ and V_ prefixes: private to
 * the folder, they cannot clash. Ownership: a val_t owns its json-c
 * reference (jn__val_free releases it); function values point into the tree,
 * the built-in table or the evaluation's arena and own none of them. Thread-
 * safety: no state but constant tables; an evaluation's state is its ctx_t.
 */
#ifndef SWF_ASL_JSONATA_INTERNAL_H
#define SWF_ASL_JSONATA_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

#include "decider/asl/buf.h"
#include "decider/asl/env.h"
#include "decider/asl/jsonata.h"
#include "decider/asl/number.h"
#include "decider/asl/regex.h"
#include "protocol/error.h"
#include "protocol/json.h"
#include "protocol/limits.h"

/* The tree (parser.c) */

typedef enum op {
    OP_NONE,
    OP_DOT,
    OP_LBRACK,
    OP_RBRACK,
    OP_LBRACE,
    OP_RBRACE,
    OP_LPAREN,
    OP_RPAREN,
    OP_COMMA,
    OP_COLON,
    OP_SEMI,
    OP_QUESTION,
    OP_PLUS,
    OP_MINUS,
    OP_STAR,
    OP_SLASH,
    OP_PERCENT,
    OP_AMP,
    OP_EQ,
    OP_NE,
    OP_LT,
    OP_LE,
    OP_GT,
    OP_GE,
    OP_BIND,
    OP_RANGE,
    OP_CHAIN,
    OP_DESCEND,
    OP_AND,
    OP_OR,
    OP_IN,
    OP_CARET,
    OP_AT,
    OP_HASH,
    OP_PIPE,
} op_t;

typedef enum node_kind {
    N_VALUE,     /* a literal number, string, true, false or null */
    N_REGEX,     /* a /regex/ literal */
    N_NAME,      /* a field name (a path step) */
    N_WILDCARD,  /* * */
    N_DESCEND,   /* ** */
    N_VAR,       /* $name; $ has name "", $$ has name "$" */
    N_PATH,      /* steps in items */
    N_NEG,       /* -a */
    N_BINARY,    /* a op b */
    N_ARRAY,     /* [items] */
    N_RANGE,     /* a..b inside an array constructor */
    N_OBJECT,    /* {k: v, ...}: items hold k0, v0, k1, v1, ... */
    N_BLOCK,     /* (e1; e2; ...) */
    N_BIND,      /* $name := a */
    N_COND,      /* a ? b : c */
    N_CALL,      /* $name(items), or a(items) with the callee in a */
    N_LAMBDA,    /* function($p, ...) { a }: parameters (N_VAR) in items */
    N_SORT,      /* ^(terms): a path step sorting the sequence by items */
    N_HOLE,      /* ? as an argument: partial application */
    N_TRANSFORM, /* | a | b [, c] |: location, update, deletions */
    N_PARENT,    /* %: name is the label its step binds (NULL: none does) */
} node_kind_t;

typedef struct node node_t;

typedef struct node_list {
    node_t **v;
    size_t n, cap;
} node_list_t;

typedef struct builtin builtin_t;

struct node {
    node_kind_t kind;
    op_t op;             /* N_BINARY */
    char *name;          /* N_NAME, N_VAR, N_BIND, N_CALL */
    json_object *value;  /* N_VALUE */
    swf_asl_regex_t *re; /* N_REGEX */
    node_t *a, *b, *c;   /* operands */
    node_list_t items;   /* steps, items, pairs, expressions or arguments */
    node_list_t stages;  /* a path step's filters, applied to each step result */
    node_list_t preds;   /* any other node's filters, applied to its value */
    bool keep_array;     /* N_PATH: written a[] */
    bool descending;     /* a term of N_SORT written >expr */
    const builtin_t *fn; /* N_CALL of a built-in's name */
    node_t *group;       /* a{k: v}: an N_OBJECT grouping this node's value */
    char *focus;         /* a path step written step@$focus */
    char *index;         /* a path step written step#$index */
    size_t index_at;     /* how many of the step's filters come before #$index */
    char *ancestor;      /* a path step binding its input item to this label for % */
    bool tuple;          /* N_BLOCK, N_PATH: a % inside a later step reaches in */
    bool chained;        /* N_CALL written a ~> $f(b): passes no % outward */
    int level;           /* N_PARENT while parsing: how many steps up it still goes */
    size_t at;           /* N_CALL: offset in the expression, for messages */
};

typedef struct val val_t;

typedef struct ctx ctx_t;

typedef struct call call_t;

typedef swf_error_t *(*builtin_impl_t)(call_t *call, val_t *out);

struct builtin {
    const char *name; /* without the $ */
    builtin_impl_t impl;
    unsigned char min, max;
    bool context_arg; /* a missing first argument is the context value */
};

/* Tokens and the front end's state (lexer.c, parser.c, resolve.c) */

typedef enum tok_kind {
    TK_END,
    TK_NUM,
    TK_STR,
    TK_NAME,
    TK_VAR,
    TK_OP,
    TK_REGEX,
    TK_TRUE,
    TK_FALSE,
    TK_NULL,
} tok_kind_t;

typedef struct token {
    tok_kind_t kind;
    op_t op;
    double num;
    char *text;    /* TK_STR, TK_NAME, TK_VAR, TK_REGEX: decoded; owned */
    size_t len;    /* TK_STR: the bytes of text, which may hold \u0000 */
    char flags[8]; /* TK_REGEX */
    size_t at;     /* offset in the expression, for messages */
} token_t;

typedef struct parser {
    const char *src;
    size_t len, pos;
    token_t tok;
    bool prev_operand; /* the previous token ends an operand: '/' divides */
    int depth;
    unsigned labels; /* labels given to steps a % refers to */
    bool failed;
    char err[256];
} parser_t;

/* The names an expression binds ($v := and lambda parameters), so that a
 * call of a name that is neither one of them nor a built-in is a syntax
 * error: workflow variables are JSON, never functions. */
typedef struct names {
    const char **v;
    size_t n, cap;
} names_t;

/* The % nodes still looking for the step whose item they read (resolve.c). */
typedef struct slots {
    node_t **v; /* N_PARENT nodes; node->level is how far up each still goes */
    size_t n, cap;
} slots_t;

/* Values (value.c) */

enum {
    V_DEF = 1,    /* defined (j may still be NULL: JSON null) */
    V_SEQ = 2,    /* j is an array the evaluator built as a sequence */
    V_CONS = 4,   /* j is an array built by an array constructor */
    V_KEEP = 8,   /* a sequence of one stays an array (a[]) */
    V_REGEX = 16, /* a regular expression, re; j is NULL */
    V_FUNC = 32,  /* a function: bi (built-in) or cl (lambda); j is NULL */
    V_HOLE = 64   /* an argument written ?, not a value: partial application */
};

typedef struct closure closure_t;

/* A value. Function values (V_REGEX, V_FUNC) point into the tree, the
 * built-in table or the evaluation's arena of closures, never owning them:
 * they cannot outlive the evaluation, since no function is JSON. */
struct val {
    json_object *j; /* owned reference */
    unsigned flags;
    const node_t *re;
    const builtin_t *bi;
    const closure_t *cl;
};

static const val_t UNDEF = {NULL, 0, NULL, NULL, NULL};

/* The items of a value: an array's elements, or the value itself. */
typedef struct items {
    json_object *arr; /* borrowed; NULL when one */
    json_object *one;
    size_t n;
} items_t;

/* The evaluation (eval.c, function.c) */

typedef struct binding {
    const char *name; /* borrowed from the tree */
    val_t v;
} binding_t;

/* One scope: a block's $v := bindings, or the parameters of a lambda call.
 * Frames live on the heap because a closure keeps the frames it was made
 * in. A frame no closure captured is freed when its block or call ends; a
 * captured one joins the evaluation's arena (ctx->captured) and is freed
 * with it. Reference counts would not do: $f := function() { $f() } makes
 * a cycle (the frame binds a closure that holds the frame). */
typedef struct frame {
    struct frame *up;
    binding_t *b;
    size_t n, cap;
    bool captured;
    struct frame *next_captured;
} frame_t;

/* A function value made by evaluating a lambda (or composing two functions
 * with ~>). Owned by the evaluation's arena (ctx->closures). */
struct closure {
    const node_t *lambda;    /* N_LAMBDA: parameters in items, body in a */
    const node_t *transform; /* or N_TRANSFORM; neither for a composition or
                                a partial application */
    frame_t *env;            /* the frame the lambda was evaluated in */
    val_t input;             /* the context value the lambda was evaluated in */
    val_t first, then;       /* a composition: then(first(x)) */
    val_t *args;             /* a partial application first(args), the V_HOLE */
    size_t nargs, holes;     /* ones taking the arguments it is called with */
    closure_t *next;
};

struct ctx {
    json_object *bindings;    /* borrowed; may be NULL */
    const swf_asl_env_t *env; /* the bindings' (jsonata.h); may be NULL */
    swf_asl_rng_t fallback;   /* the generator when env has none */
    size_t steps;             /* work done so far */
    size_t built_bytes;       /* estimated bytes of the values built so far */
    int depth;                /* nested evaluations */
    int calls;                /* nested function calls */
    bool error_in_lambda;     /* the error being returned came from a lambda */
    frame_t *captured;        /* the arena: frames closures keep */
    closure_t *closures;      /* the arena: every closure made */
};

/* What building values costs, estimated from json-c's sizes: a new value,
 * and one slot of an array or object. */
#define VALUE_BYTES 64
#define SLOT_BYTES 8

struct call {
    ctx_t *ctx;
    const builtin_t *fn;
    val_t *argv;
    size_t argc;
};

/* Tuple streams and group-by (tuple.c) */

/* A path from its first step@$v or step#$i on is a stream of tuples: each
 * item with the variables @ and # bound for it, which the later steps, their
 * filters and order-bys see. */
typedef struct tuple {
    val_t item;
    frame_t *vars; /* the bindings made so far (up is NULL) */
} tuple_t;

typedef struct tuples {
    tuple_t *v;
    size_t n, cap;
} tuples_t;

/* A match of a pattern (a string or a regular expression) in a string. */
typedef struct {
    size_t start, end; /* bytes */
    size_t *caps;      /* a regular expression's: 2 * (groups + 1) byte offsets */
    size_t groups;
} found_t;

/* One group of a group-by: the entries (items, or tuples) whose key
 * expression `pair` gave the same key, in the order met. */
typedef struct group {
    const char *key; /* borrowed from the index object */
    size_t pair;     /* index of the key in the pairs */
    size_t *members;
    size_t n, cap;
    uint32_t array_index; /* the key as a JavaScript array index, when it is one */
    bool is_index;
    size_t order; /* when the key was first met */
} group_t;

/* The functions and objects shared between files, under the file that
 * defines each. Each is described where it is defined. */

/* value.c */
swf_error_t *jn__number_new(double d, json_object **out);
const char *jn__func_what(const val_t *v);
void jn__collapse(val_t *v);
swf_error_t *jn__seq_result(json_object *seq, swf_error_t *err, val_t *out);
const char *jn__type_name(const val_t *v);
int jn__truth(json_object *j, int depth);
swf_error_t *jn__to_string(const val_t *v, int indent, buf_t *b);
val_t jn__string_val(const char *s, size_t n);
size_t *jn__utf8_starts(const char *s, size_t n, size_t *count);
size_t jn__utf8_length(const char *s, size_t n);
size_t jn__utf16_length(const char *s, size_t n);

/* lexer.c */
extern const char *const jn__op_text[];
void jn__perr(parser_t *p, size_t at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void jn__advance(parser_t *p);
bool jn__tok_is(const parser_t *p, op_t op);
const char *jn__tok_describe(const token_t *t, char buf[64]);
bool jn__expect(parser_t *p, op_t op);

/* parser.c */
void jn__node_free(node_t *n);
node_t *jn__parse(const char *expr, char err[256]);

/* resolve.c */
void jn__names_add(names_t *l, const char *name);
void jn__names_collect(const node_t *n, names_t *l);
void jn__calls_check(parser_t *p, const node_t *n, const names_t *bound);
void jn__resolve_parents(parser_t *p, node_t *n, slots_t *out, bool self);

/* eval.c */
void jn__frame_free(frame_t *f);
frame_t *jn__frame_new(frame_t *up);
void jn__frame_release(frame_t *f);
void jn__ctx_free(ctx_t *ctx);
void jn__frame_set(frame_t *f, const char *name, const val_t *v);
const val_t *jn__frame_lookup(frame_t *env, const char *name);
val_t jn__builtin_val(const builtin_t *bi);
swf_error_t *jn__eval(ctx_t *ctx, const node_t *n, const val_t *input, frame_t *env, val_t *out);

/* function.c */
swf_error_t *jn__eval_lambda(ctx_t *ctx, const node_t *n, const val_t *input, frame_t *env,
                             val_t *out);
size_t jn__func_arity(const val_t *f);
json_object *jn__match_object(const char *s, const found_t *f, bool start_end);
swf_error_t *jn__apply(ctx_t *ctx, const val_t *f, const val_t *argv, size_t argc,
                       const val_t *input, val_t *out);
swf_error_t *jn__eval_call(ctx_t *ctx, const node_t *n, const val_t *input, frame_t *env,
                           val_t *out);
swf_error_t *jn__eval_chain(ctx_t *ctx, const node_t *n, const val_t *input, frame_t *env,
                            val_t *out);

/* path.c */
swf_error_t *jn__lookup(ctx_t *ctx, json_object *j, const char *name, val_t *out, int depth);
void jn__seq_add_flat(json_object *seq, json_object *j);
void jn__seq_add_deep(json_object *seq, json_object *j, int depth);
swf_error_t *jn__descendants(ctx_t *ctx, json_object *j, json_object *seq, int depth);
bool jn__filter_keeps(const val_t *r, size_t i, size_t n);
swf_error_t *jn__filter(ctx_t *ctx, const node_t *pred, frame_t *env, val_t *v);
swf_error_t *jn__eval_path(ctx_t *ctx, const node_t *n, const val_t *input, frame_t *env,
                           val_t *out, tuples_t *tout, bool *streamed);
swf_error_t *jn__eval_into_tuples(ctx_t *ctx, const node_t *n, const val_t *item, frame_t *env,
                                  val_t *out, tuples_t *tout, bool *streamed);

/* tuple.c */
void jn__tuples_add(tuples_t *ts, tuple_t t);
void jn__tuples_free(tuples_t *ts);
void jn__tuple_move(tuples_t *to, tuples_t *ts, size_t i);
frame_t *jn__tuple_env(frame_t *env, const tuple_t *t);
swf_error_t *jn__tuple_charge(ctx_t *ctx, const tuple_t *t);
swf_error_t *jn__tuples_filter(ctx_t *ctx, const node_t *pred, frame_t *env, tuples_t *ts);
swf_error_t *jn__tuples_stages(ctx_t *ctx, const node_t *step, frame_t *env, tuples_t *ts);
bool jn__tuple_step(const node_t *step);
tuples_t jn__tuples_of(json_object *in);
val_t jn__tuples_items(const tuples_t *ts);
swf_error_t *jn__tuples_run(ctx_t *ctx, const node_t *n, size_t first, tuples_t *ts, frame_t *env);
swf_error_t *jn__eval_group(ctx_t *ctx, const node_t *pairs, frame_t *env, const tuples_t *ts,
                            val_t *v);

/* sort.c */
swf_error_t *jn__tuples_sort(ctx_t *ctx, const node_t *step, frame_t *env, tuples_t *ts);
swf_error_t *jn__eval_sort(ctx_t *ctx, const node_t *step, json_object *in, frame_t *env,
                           val_t *out);
swf_error_t *jn__fn_sort(call_t *c, val_t *out);

/* builtin.c */
swf_error_t *jn__want_string(const call_t *c, size_t i, const char **s, size_t *n);
bool jn__string_arg(const call_t *c, size_t i, const char **s, size_t *n, swf_error_t **err);
swf_error_t *jn__want_number(const call_t *c, size_t i, double *d);
swf_error_t *jn__want_integer(const call_t *c, size_t i, double *d);
swf_error_t *jn__number_val(double d, val_t *out);
swf_error_t *jn__want_array(const call_t *c, size_t i, items_t *it);
const builtin_t *jn__builtin_find(const char *name);

/* string.c */
swf_error_t *jn__fn_length(call_t *c, val_t *out);
swf_error_t *jn__fn_substring(call_t *c, val_t *out);
swf_error_t *jn__fn_substring_before(call_t *c, val_t *out);
swf_error_t *jn__fn_substring_after(call_t *c, val_t *out);
unsigned long jn__utf8_next(const char *s, size_t n, size_t *i);
swf_error_t *jn__fn_uppercase(call_t *c, val_t *out);
swf_error_t *jn__fn_lowercase(call_t *c, val_t *out);
swf_error_t *jn__fn_trim(call_t *c, val_t *out);
swf_error_t *jn__pattern_find(ctx_t *ctx, const val_t *pat, const char *s, size_t n, size_t off,
                              found_t *f, bool *hit);
swf_error_t *jn__fn_contains(call_t *c, val_t *out);
swf_error_t *jn__fn_split(call_t *c, val_t *out);
swf_error_t *jn__fn_join(call_t *c, val_t *out);
swf_error_t *jn__fn_replace(call_t *c, val_t *out);
swf_error_t *jn__fn_match(call_t *c, val_t *out);
swf_error_t *jn__fn_pad(call_t *c, val_t *out);
swf_error_t *jn__fn_encode_url_component(call_t *c, val_t *out);
swf_error_t *jn__fn_encode_url(call_t *c, val_t *out);
swf_error_t *jn__fn_decode_url_component(call_t *c, val_t *out);
swf_error_t *jn__fn_decode_url(call_t *c, val_t *out);
swf_error_t *jn__fn_base64encode(call_t *c, val_t *out);
swf_error_t *jn__fn_base64decode(call_t *c, val_t *out);

/* time.c */
swf_error_t *jn__fn_millis(call_t *c, val_t *out);
swf_error_t *jn__fn_now(call_t *c, val_t *out);
swf_error_t *jn__fn_to_millis(call_t *c, val_t *out);
swf_error_t *jn__fn_from_millis(call_t *c, val_t *out);

/* hof.c */
swf_error_t *jn__want_function(const call_t *c, size_t i);
swf_error_t *jn__fn_map(call_t *c, val_t *out);
swf_error_t *jn__fn_filter(call_t *c, val_t *out);
swf_error_t *jn__fn_single(call_t *c, val_t *out);
swf_error_t *jn__fn_reduce(call_t *c, val_t *out);
swf_error_t *jn__fn_sift(call_t *c, val_t *out);
swf_error_t *jn__fn_each(call_t *c, val_t *out);

/* format.c */
swf_error_t *jn__fn_format_base(call_t *c, val_t *out);
swf_error_t *jn__fn_format_number(call_t *c, val_t *out);
swf_error_t *jn__fn_format_integer(call_t *c, val_t *out);
swf_error_t *jn__fn_parse_integer(call_t *c, val_t *out);

/* Small helpers of the hot paths, inline. */

static inline bool jn__is_number(json_object *j)
{
    return swf_json_is_number(j);
}

static inline bool jn__is_string(json_object *j)
{
    return json_object_is_type(j, json_type_string);
}

static inline bool jn__is_array(json_object *j)
{
    return json_object_is_type(j, json_type_array);
}

static inline bool jn__is_object(json_object *j)
{
    return json_object_is_type(j, json_type_object);
}

static inline bool jn__defined(const val_t *v)
{
    return (v->flags & V_DEF) != 0;
}

static inline bool jn__is_regex(const val_t *v)
{
    return (v->flags & V_REGEX) != 0;
}

/* Any value that is not JSON: a function or a regular expression (which
 * JSONata counts as a function). */
static inline bool jn__is_func(const val_t *v)
{
    return (v->flags & (V_REGEX | V_FUNC)) != 0;
}

/* A function, or a regular expression (called, it gives its first match). */
static inline bool jn__is_callable(const val_t *v)
{
    return (v->flags & (V_FUNC | V_REGEX)) != 0;
}

static inline void jn__val_free(val_t *v)
{
    json_object_put(v->j);
    *v = UNDEF;
}

/* A defined value holding j (taken). */
static inline val_t jn__val_take(json_object *j)
{
    return (val_t){j, V_DEF, NULL, NULL, NULL};
}

/* A defined value holding a new reference to j (borrowed). */
static inline val_t jn__val_ref(json_object *j)
{
    return (val_t){swf_json_ref(j), V_DEF, NULL, NULL, NULL};
}

/* A position (an index in an array or a stream) as a value. */
static inline val_t jn__index_val(size_t i)
{
    return jn__val_take(json_object_new_int64((int64_t)i));
}

static inline val_t jn__val_copy(const val_t *v)
{
    val_t c = *v;
    c.j = swf_json_ref(v->j);
    return c;
}

static inline items_t jn__items_of(const val_t *v)
{
    items_t it = {NULL, NULL, 0};
    if (!jn__defined(v))
        return it;
    if (jn__is_array(v->j)) {
        it.arr = v->j;
        it.n = json_object_array_length(v->j);
    } else {
        it.one = v->j;
        it.n = 1;
    }
    return it;
}

static inline json_object *jn__item_at(const items_t *it, size_t i)
{
    return it->arr ? json_object_array_get_idx(it->arr, i) : it->one;
}

/* As a condition (?:, and, or, filters, the predicates of $filter, $single
 * and $sift), a function is true and a regular expression false, as in
 * jsonata-js (whose $boolean and $not differ: see fn_boolean). */
static inline int jn__boolean_of(const val_t *v)
{
    if (!jn__defined(v))
        return -1;
    if (jn__is_func(v))
        return !jn__is_regex(v);
    return jn__truth(v->j, 0);
}

/* Counts n units of work; an error once the budget is spent. */
static inline swf_error_t *jn__charge(ctx_t *ctx, size_t n)
{
    ctx->steps += n;
    if (ctx->steps > SWF_LIMIT_JSONATA_STEPS)
        return qerr("the expression does too much work (more than %d steps)",
                    SWF_LIMIT_JSONATA_STEPS);
    return NULL;
}

/* Counts the bytes of values built; an error beyond the budget. The count
 * only grows (freed values are not subtracted), so it also bounds the peak. */
static inline swf_error_t *jn__charge_bytes(ctx_t *ctx, size_t n)
{
    ctx->built_bytes += n;
    if (ctx->built_bytes > SWF_LIMIT_JSONATA_BUILT_BYTES)
        return qerr("the expression builds too much data (more than %u bytes)",
                    SWF_LIMIT_JSONATA_BUILT_BYTES);
    return NULL;
}

/* The estimated size of a value the evaluator has just built (not of the
 * values it shares with its input: only the new top level is counted). */
static inline size_t jn__built_size(json_object *j)
{
    if (jn__is_string(j))
        return VALUE_BYTES + (size_t)json_object_get_string_len(j);
    if (jn__is_array(j))
        return VALUE_BYTES + (VALUE_BYTES + SLOT_BYTES) * json_object_array_length(j);
    if (jn__is_object(j))
        return VALUE_BYTES + (VALUE_BYTES + SLOT_BYTES) * (size_t)json_object_object_length(j);
    return VALUE_BYTES;
}

static inline const val_t *jn__arg(const call_t *c, size_t i)
{
    return i < c->argc ? &c->argv[i] : &UNDEF;
}

static inline bool jn__has_arg(const call_t *c, size_t i)
{
    return jn__defined(jn__arg(c, i));
}

static inline val_t jn__bool_val(bool b)
{
    return jn__val_take(json_object_new_boolean(b));
}

#endif
