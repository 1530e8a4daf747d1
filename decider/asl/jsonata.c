/*
 * jsonata.c - a JSONata evaluator for ASL's QueryLanguage "JSONata".
 *
 * The subset is what Step Functions users write: literals, paths with
 * predicates and wildcards, array and object constructors, ranges, the
 * arithmetic, comparison, boolean, string (&), membership (in), conditional
 * and chain (~>) operators, blocks with $v := bindings, the map operator
 * a.(expr), order-by (a^(<x, >y)), group-by (a{key: value}), positional
 * and context bindings in paths (a#$i, a@$v: from the first of them on, a
 * path is a stream of tuples carrying its variables; a group-by after them
 * sees each tuple's), the parent operator (a.b.{'up': %.x}, %.% the
 * grandparent: each % is settled when parsing, as jsonata-js does, to the
 * step whose input item it is, which then binds that item in the tuples
 * under a label only a % can name; see resolve_parents), lambdas
 * (function($x) { ... } or λ) with closures and recursion, function values
 * (built-ins too: $map(a, $string)), partial application ($f(?, 1)), and
 * the built-in functions listed in the `builtins` table: the higher-order
 * ones ($map, $filter, $reduce, $single, $sift, $each, $sort with a
 * comparator), $toMillis and $fromMillis (ISO 8601, or a picture such as
 * '[D1o] [MNn] [Y0001], [h]:[m01] [P] [Z]' or '[X]-W[W01]-[F1]'),
 * $formatInteger and $parseInteger (XPath's format-integer: '#,##0', 'I',
 * 'w;o'; the pictures are picture.c's), $match, $pad,
 * $zip, $spread, $error, $assert, URL encoding and decoding, $formatBase,
 * $formatNumber (XPath's format-number, as jsonata-js applies it), and Step
 * Functions' own $partition, $range, $hash, $parse, $random and $uuid. A regular
 * expression is a function too: called, it gives its first match ({match,
 * start, end, groups}). Function signatures (<n-n:n>) are accepted and not
 * checked. Transforms (| location | update, deletions |) are functions
 * that copy their argument and change the copy. Not supported, each a
 * clear error: $eval, reading ISO week dates with $toMillis (as in
 * jsonata-js), and functions inside arrays or objects (no function is
 * JSON). Calling a name that is
 * neither a built-in nor bound in the expression ($lenght(x)) is a syntax
 * error: workflow variables are JSON, never functions.
 *
 * Function values do not own what they point to: a closure (the lambda's
 * node, the frame it was made in, its context value) lives in an arena of
 * the evaluation (ctx_t), freed whole when it ends, because closures and
 * frames form cycles ($f := function() { $f() }). A frame no closure
 * captured is freed as soon as its block or call ends.
 *
 * Like intrinsic.c, an expression is parsed into a tree (a Pratt parser with
 * JSONata's binding powers) and the tree is then evaluated, so that
 * swf_asl_jsonata_check is the parser alone. The evaluation follows the
 * reference implementation (jsonata-js) closely where users can see the
 * difference: a path step maps over a sequence and flattens what it finds;
 * a sequence of one value is that value (single-match-is-not-wrapped), an
 * empty one is "undefined"; an array constructor's result is kept whole by
 * a later path step; a JSON array met in the last step is returned as is.
 * An evaluated value is therefore a json-c value plus flags (val_t): whether
 * it is defined at all, whether it is a sequence the evaluator built, and
 * whether it came from an array constructor. JSON null is the NULL pointer,
 * as everywhere in the project, which is why "undefined" is a flag. The
 * functions, order-by, group-by, bindings and transforms were compared
 * (21 Nov 2026) with jsonata-js 2.0.6, the version Step Functions runs, on
 * a few hundred expressions: the results agree but where this file refuses
 * something, and for a variable that is not defined, an error here (Step
 * Functions rejects those too) and undefined there. The parent operator and
 * group-by after bindings were compared (25 Nov 2026) on some 480 more,
 * jsonata-js's quirks included (a % it does not pass on out of a lambda, a
 * ~>, a group-by's pairs or a path's first step is undefined; a later
 * step's filters filter the whole tuple stream; a path's group-by groups
 * the whole path, a.b{...}.c too; a tuple grouped alone loses its item to
 * the groups evaluated after it), with two differences: a group-by right
 * after an order-by in a tuple stream (a#$i^(x){...}) sees the tuples'
 * items and variables here, where jsonata-js 2.0.6 loses the stream and
 * groups its internal tuple objects ({} for most keys); and a group-by of
 * an empty tuple stream is an error here where jsonata-js fails with a
 * JavaScript TypeError.
 *
 * Numbers are doubles, as in JavaScript; a result that is integral and fits
 * in an int64 is written as a json-c int, any other keeps JavaScript's
 * shortest text (0.1, not 0.10000000000000001). $string and & format numbers
 * as JSONata does, to 15 significant digits.
 *
 * Determinism: the engine replays executions, so an expression must give the
 * same value every time. $now and $millis give the time of the decision
 * being made, and $random, $uuid (both Step Functions') and $shuffle draw
 * from the decision's generator: the interpreter takes both from the
 * history (env.h) and attaches them to the bindings (jsonata.h), so a
 * replay gets the same values. Outside a decision $now and $millis are
 * refused with States.QueryEvaluationError. $random(seed) is a function of
 * its seed, as in Step Functions.
 *
 * Limits: an expression is at most SWF_LIMIT_JSONATA_BYTES long and nested
 * at most SWF_LIMIT_JSONATA_DEPTH deep; a range makes at most
 * SWF_LIMIT_JSONATA_RANGE_ITEMS items; a string at most
 * SWF_LIMIT_PAYLOAD_BYTES; function calls nest at most
 * SWF_LIMIT_JSONATA_CALL_DEPTH deep and evaluations (which bound the C
 * stack, a recursion included) SWF_LIMIT_JSONATA_EVAL_DEPTH deep; one
 * evaluation does at most SWF_LIMIT_JSONATA_STEPS units of work (a node
 * evaluated, an item visited, a comparison made, a variable of a path's
 * tuple copied) and builds at most
 * SWF_LIMIT_JSONATA_BUILT_BYTES of new values (estimated, counted where
 * values are made: constructors, sequences, operators, function results,
 * closures and the frames they keep), so no expression can hang the decider,
 * overflow its stack or exhaust its memory.
 *
 * Regular expressions (/.../ literals) are JavaScript's, matched by
 * regex.c with ECMAScript's backtracking semantics (the first alternative
 * that matches, lazy quantifiers, lookaround, back references, named
 * groups, \b), the literal scanned as jsonata-js scans it, and $match,
 * $replace and $split step from match to match as jsonata-js's next() does.
 * Their work counts against SWF_LIMIT_JSONATA_STEPS.
 */
#include "decider/asl/jsonata.h"
#include "decider/asl/picture.h"

#include <ctype.h>
#include <wctype.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decider/asl/buf.h"
#include "decider/asl/regex.h"
#include "protocol/hash.h"
#include "protocol/json.h"
#include "protocol/limits.h"
#include "protocol/time.h"

/* qerr() and the bounded text buffer (buf_t) are buf.h's. */

/* ------------------------------------------------------------------------ */
/* Numbers                                                                  */
/* ------------------------------------------------------------------------ */

/* JavaScript's Number.prototype.toString: the shortest digits that read back
 * as d, in positional notation from 1e-7 to 1e21 and exponential beyond. */
static void js_number_format(double d, char out[48])
{
    if (d == 0) {
        strcpy(out, "0");
        return;
    }
    char e[48];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, d);
        if (strtod(e, NULL) == d)
            break;
    }
    bool neg = e[0] == '-';
    const char *p = e + neg;
    char digits[24];
    int k = 0;
    for (; *p && *p != 'e'; p++) {
        if (isdigit((unsigned char)*p) && k < 20)
            digits[k++] = *p;
    }
    int n = atoi(p + 1) + 1; /* the decimal point sits after n digits */
    while (k > 1 && digits[k - 1] == '0')
        k--;
    char *o = out;
    if (neg)
        *o++ = '-';
    if (k <= n && n <= 21) {
        memcpy(o, digits, (size_t)k);
        o += k;
        for (int i = k; i < n; i++)
            *o++ = '0';
    } else if (0 < n && n <= 21) {
        memcpy(o, digits, (size_t)n);
        o += n;
        *o++ = '.';
        memcpy(o, digits + n, (size_t)(k - n));
        o += k - n;
    } else if (-6 < n && n <= 0) {
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -n; i++)
            *o++ = '0';
        memcpy(o, digits, (size_t)k);
        o += k;
    } else {
        *o++ = digits[0];
        if (k > 1) {
            *o++ = '.';
            memcpy(o, digits + 1, (size_t)(k - 1));
            o += k - 1;
        }
        o += sprintf(o, "e%c%d", n - 1 >= 0 ? '+' : '-', abs(n - 1));
    }
    *o = '\0';
}

/* How $string and & show a number: rounded to 15 significant digits first,
 * which hides binary noise (0.1 + 0.2 shows as 0.3). */
static void number_format15(double d, char out[48])
{
    char t[48];
    snprintf(t, sizeof t, "%.15g", d);
    js_number_format(strtod(t, NULL), out);
}

/* A new json-c number for d: an int when d is integral and fits. */
static swf_error_t *number_new(double d, json_object **out)
{
    *out = NULL;
    if (!isfinite(d))
        return qerr("number out of range: the result is not a finite number");
    if (d == floor(d) && d > -9223372036854775808.0 && d < 9223372036854775808.0) {
        *out = json_object_new_int64((int64_t)d);
    } else {
        char text[48];
        js_number_format(d, text);
        *out = json_object_new_double_s(d, text);
    }
    return NULL;
}

static bool is_number(json_object *j)
{
    return swf_json_is_number(j);
}
static bool is_string(json_object *j)
{
    return json_object_is_type(j, json_type_string);
}
static bool is_array(json_object *j)
{
    return json_object_is_type(j, json_type_array);
}
static bool is_object(json_object *j)
{
    return json_object_is_type(j, json_type_object);
}

/* ------------------------------------------------------------------------ */
/* The tree                                                                 */
/* ------------------------------------------------------------------------ */

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

static const char *const op_text[] = {
    "",   ".",  "[",  "]",  "{",   "}",  "(",  ")",  ",", ":",  ";", "?",
    "+",  "-",  "*",  "/",  "%",   "&",  "=",  "!=", "<", "<=", ">", ">=",
    ":=", "..", "~>", "**", "and", "or", "in", "^",  "@", "#",  "|",
};

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

static void node_free(node_t *n);

static void list_free(node_list_t *l)
{
    for (size_t i = 0; i < l->n; i++)
        node_free(l->v[i]);
    free(l->v);
}

static void node_free(node_t *n)
{
    if (n == NULL)
        return;
    free(n->name);
    json_object_put(n->value);
    swf_asl_regex_free(n->re);
    node_free(n->a);
    node_free(n->b);
    node_free(n->c);
    list_free(&n->items);
    list_free(&n->stages);
    list_free(&n->preds);
    node_free(n->group);
    free(n->focus);
    free(n->index);
    free(n->ancestor);
    free(n);
}

static node_t *node_new(node_kind_t kind)
{
    node_t *n = calloc(1, sizeof *n);
    if (n == NULL)
        abort();
    n->kind = kind;
    return n;
}

static void list_add(node_list_t *l, node_t *n)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 4;
        node_t **v = realloc(l->v, cap * sizeof *v);
        if (v == NULL)
            abort();
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = n;
}

/* ------------------------------------------------------------------------ */
/* Built-in functions (declared here, defined after the evaluator)          */
/* ------------------------------------------------------------------------ */

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

static const builtin_t *builtin_find(const char *name);

/* ------------------------------------------------------------------------ */
/* Lexer                                                                    */
/* ------------------------------------------------------------------------ */

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

static void perr(parser_t *p, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void perr(parser_t *p, size_t at, const char *fmt, ...)
{
    if (p->failed)
        return;
    p->failed = true;
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(p->err, sizeof p->err, "%s (at offset %zu)", msg, at);
}

static bool is_name_char(char c)
{
    return c != '\0' && !isspace((unsigned char)c) &&
           strchr(".[]{}(),@#;:?+-*/%|=<>^&!~\"'`$", c) == NULL;
}

/* Appends code point cp as UTF-8. */

static bool hex4(const char *s, unsigned long *out)
{
    *out = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        int v = isdigit((unsigned char)c) ? c - '0'
                : (c >= 'a' && c <= 'f')  ? c - 'a' + 10
                : (c >= 'A' && c <= 'F')  ? c - 'A' + 10
                                          : -1;
        if (v < 0)
            return false;
        *out = *out * 16 + (unsigned long)v;
    }
    return true;
}

/* Reads a quoted string starting at p->pos (the quote). */
static void lex_string(parser_t *p, token_t *t)
{
    char quote = p->src[p->pos++];
    buf_t b = {0};
    while (p->pos < p->len && p->src[p->pos] != quote) {
        char c = p->src[p->pos++];
        if (c != '\\') {
            buf_ch(&b, c);
            continue;
        }
        if (p->pos >= p->len)
            break;
        char e = p->src[p->pos++];
        switch (e) {
        case '"':
        case '\\':
        case '/':
            buf_ch(&b, e);
            break;
        case 'b':
            buf_ch(&b, '\b');
            break;
        case 'f':
            buf_ch(&b, '\f');
            break;
        case 'n':
            buf_ch(&b, '\n');
            break;
        case 'r':
            buf_ch(&b, '\r');
            break;
        case 't':
            buf_ch(&b, '\t');
            break;
        case 'u': {
            unsigned long cp, lo;
            if (p->pos + 4 > p->len || !hex4(p->src + p->pos, &cp)) {
                perr(p, p->pos, "invalid \\u escape in a string");
                free(b.s);
                return;
            }
            p->pos += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && p->pos + 6 <= p->len && p->src[p->pos] == '\\' &&
                p->src[p->pos + 1] == 'u' && hex4(p->src + p->pos + 2, &lo) && lo >= 0xDC00 &&
                lo < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                p->pos += 6;
            } else if (cp >= 0xD800 && cp < 0xE000) {
                cp = 0xFFFD; /* a lone surrogate is no character: text stays UTF-8 */
            }
            buf_cp(&b, cp);
            break;
        }
        default:
            perr(p, p->pos - 2, "unsupported escape sequence \\%c in a string", e);
            free(b.s);
            return;
        }
    }
    if (p->pos >= p->len) {
        perr(p, t->at, "unterminated string");
        free(b.s);
        return;
    }
    p->pos++;
    t->kind = TK_STR;
    t->text = b.s ? b.s : strdup("");
    t->len = b.n;
}

static void lex_regex(parser_t *p, token_t *t)
{
    /* as jsonata-js scans it: the closing / is one outside brackets of any
     * kind, counted without regard to their kind, and not escaped; so /]/
     * and /a{/ are unterminated there, and here */
    size_t start = ++p->pos;
    long depth = 0;
    while (p->pos < p->len) {
        char c = p->src[p->pos];
        bool escaped = p->src[p->pos - 1] == '\\';
        if (c == '/' && depth == 0) {
            size_t slashes = 0;
            while (p->src[p->pos - 1 - slashes] == '\\')
                slashes++;
            if (slashes % 2 == 0)
                break;
        }
        if (c != '\0' && !escaped && strchr("([{", c))
            depth++;
        else if (c != '\0' && !escaped && strchr(")]}", c))
            depth--;
        p->pos++;
    }
    if (p->pos >= p->len) {
        perr(p, t->at, "unterminated regular expression");
        return;
    }
    if (p->pos == start) {
        perr(p, t->at, "empty regular expression");
        return;
    }
    t->kind = TK_REGEX;
    t->text = strndup(p->src + start, p->pos - start);
    p->pos++;
    size_t nf = 0;
    while (p->pos < p->len && isalpha((unsigned char)p->src[p->pos])) {
        char f = p->src[p->pos++];
        if ((f != 'i' && f != 'm') || nf + 1 >= sizeof t->flags) {
            perr(p, p->pos - 1, "unsupported regular expression flag '%c'", f);
            return;
        }
        t->flags[nf++] = f;
    }
}

/* Reads the next token into p->tok, freeing the text the previous one still
 * owned. A '/' where an operand is expected starts a regular expression. */
static void advance(parser_t *p)
{
    free(p->tok.text);
    memset(&p->tok, 0, sizeof p->tok);
    token_t *t = &p->tok;
    if (p->failed) {
        t->kind = TK_END;
        return;
    }
    for (;;) {
        while (p->pos < p->len && isspace((unsigned char)p->src[p->pos]))
            p->pos++;
        if (p->pos + 1 < p->len && p->src[p->pos] == '/' && p->src[p->pos + 1] == '*') {
            const char *end = strstr(p->src + p->pos + 2, "*/");
            if (end == NULL) {
                perr(p, p->pos, "unterminated comment");
                t->kind = TK_END;
                return;
            }
            p->pos = (size_t)(end - p->src) + 2;
            continue;
        }
        break;
    }
    t->at = p->pos;
    if (p->pos >= p->len) {
        t->kind = TK_END;
        return;
    }
    const char *s = p->src + p->pos;
    char c = s[0], d = p->pos + 1 < p->len ? s[1] : '\0';
    bool operand = true;
    if (isdigit((unsigned char)c)) {
        size_t i = 0;
        if (s[0] == '0')
            i = 1;
        else
            while (isdigit((unsigned char)s[i]))
                i++;
        if (s[i] == '.' && isdigit((unsigned char)s[i + 1])) {
            i++;
            while (isdigit((unsigned char)s[i]))
                i++;
        }
        if (s[i] == 'e' || s[i] == 'E') {
            size_t j = i + 1;
            if (s[j] == '+' || s[j] == '-')
                j++;
            if (isdigit((unsigned char)s[j])) {
                while (isdigit((unsigned char)s[j]))
                    j++;
                i = j;
            }
        }
        char *text = strndup(s, i);
        t->kind = TK_NUM;
        t->num = strtod(text, NULL);
        free(text);
        p->pos += i;
        if (!isfinite(t->num))
            perr(p, t->at, "number literal out of range");
    } else if (c == '"' || c == '\'') {
        lex_string(p, t);
    } else if (c == '`') {
        const char *end = memchr(s + 1, '`', p->len - p->pos - 1);
        if (end == NULL) {
            perr(p, t->at, "unterminated `name`");
            t->kind = TK_END;
            return;
        }
        t->kind = TK_NAME;
        t->text = strndup(s + 1, (size_t)(end - s - 1));
        p->pos += (size_t)(end - s) + 1;
    } else if (c == '$') {
        size_t i = 1;
        if (d == '$') {
            i = 2;
        } else {
            while (is_name_char(s[i]))
                i++;
        }
        t->kind = TK_VAR;
        t->text = strndup(s + 1, i - 1);
        p->pos += i;
    } else if (c == '/' && !p->prev_operand) {
        lex_regex(p, t);
    } else if (is_name_char(c)) {
        size_t i = 0;
        while (is_name_char(s[i]))
            i++;
        p->pos += i;
        if (i == 4 && memcmp(s, "true", 4) == 0) {
            t->kind = TK_TRUE;
        } else if (i == 5 && memcmp(s, "false", 5) == 0) {
            t->kind = TK_FALSE;
        } else if (i == 4 && memcmp(s, "null", 4) == 0) {
            t->kind = TK_NULL;
        } else if ((i == 3 && memcmp(s, "and", 3) == 0) || (i == 2 && memcmp(s, "or", 2) == 0) ||
                   (i == 2 && memcmp(s, "in", 2) == 0)) {
            t->kind = TK_OP;
            t->op = s[0] == 'a' ? OP_AND : s[0] == 'o' ? OP_OR : OP_IN;
            operand = false;
        } else {
            t->kind = TK_NAME;
            t->text = strndup(s, i);
        }
    } else {
        static const struct {
            const char *text;
            op_t op;
        } ops[] = {
            {"!=", OP_NE},    {"<=", OP_LE},      {">=", OP_GE},      {":=", OP_BIND},
            {"..", OP_RANGE}, {"~>", OP_CHAIN},   {"**", OP_DESCEND}, {".", OP_DOT},
            {"[", OP_LBRACK}, {"]", OP_RBRACK},   {"{", OP_LBRACE},   {"}", OP_RBRACE},
            {"(", OP_LPAREN}, {")", OP_RPAREN},   {",", OP_COMMA},    {":", OP_COLON},
            {";", OP_SEMI},   {"?", OP_QUESTION}, {"+", OP_PLUS},     {"-", OP_MINUS},
            {"*", OP_STAR},   {"/", OP_SLASH},    {"%", OP_PERCENT},  {"&", OP_AMP},
            {"=", OP_EQ},     {"<", OP_LT},       {">", OP_GT},       {"^", OP_CARET},
            {"@", OP_AT},     {"#", OP_HASH},     {"|", OP_PIPE},
        };
        size_t i;
        for (i = 0; i < sizeof ops / sizeof ops[0]; i++) {
            size_t n = strlen(ops[i].text);
            if (p->pos + n <= p->len && memcmp(s, ops[i].text, n) == 0)
                break;
        }
        if (i == sizeof ops / sizeof ops[0]) {
            perr(p, t->at, "unexpected character '%c'", c);
            t->kind = TK_END;
            return;
        }
        t->kind = TK_OP;
        t->op = ops[i].op;
        p->pos += strlen(ops[i].text);
        operand = t->op == OP_RPAREN || t->op == OP_RBRACK || t->op == OP_RBRACE;
    }
    p->prev_operand = operand;
}

static bool tok_is(const parser_t *p, op_t op)
{
    return p->tok.kind == TK_OP && p->tok.op == op;
}

static const char *tok_describe(const token_t *t, char buf[64])
{
    switch (t->kind) {
    case TK_END:
        return "the end of the expression";
    case TK_OP:
        snprintf(buf, 64, "'%s'", op_text[t->op]);
        return buf;
    case TK_NUM:
        return "a number";
    case TK_STR:
        return "a string";
    case TK_REGEX:
        return "a regular expression";
    default:
        return "a name";
    }
}

static bool expect(parser_t *p, op_t op)
{
    if (!tok_is(p, op)) {
        char b[64];
        perr(p, p->tok.at, "expected '%s', found %s", op_text[op], tok_describe(&p->tok, b));
        return false;
    }
    advance(p);
    return true;
}

/* ------------------------------------------------------------------------ */
/* Regular expressions                                                      */
/* ------------------------------------------------------------------------ */

static bool regex_compile(parser_t *p, node_t *n, const char *src, const char *flags, size_t at)
{
    char err[160];
    n->re = swf_asl_regex_new(src, strlen(src), flags, err, sizeof err);
    if (n->re == NULL) {
        perr(p, at, "regular expression /%s/: %s", src, err);
        return false;
    }
    return true;
}

/* ------------------------------------------------------------------------ */
/* Parser                                                                   */
/* ------------------------------------------------------------------------ */

/* Left binding powers, from jsonata-js. */
static int lbp(const token_t *t)
{
    if (t->kind != TK_OP)
        return 0;
    switch (t->op) {
    case OP_LBRACK:
    case OP_LPAREN:
    case OP_AT:
    case OP_HASH:
        return 80;
    case OP_DOT:
        return 75;
    case OP_LBRACE:
        return 70;
    case OP_STAR:
    case OP_SLASH:
    case OP_PERCENT:
        return 60;
    case OP_PLUS:
    case OP_MINUS:
    case OP_AMP:
        return 50;
    case OP_EQ:
    case OP_NE:
    case OP_LT:
    case OP_LE:
    case OP_GT:
    case OP_GE:
    case OP_IN:
    case OP_CHAIN:
    case OP_CARET:
        return 40;
    case OP_AND:
        return 30;
    case OP_OR:
        return 25;
    case OP_QUESTION:
        return 20;
    case OP_BIND:
        return 10;
    default:
        return 0;
    }
}

static node_t *parse_expr(parser_t *p, int rbp);

static node_t *path_of(node_t *step)
{
    node_t *path = node_new(N_PATH);
    list_add(&path->items, step);
    return path;
}

/* The pairs of an object constructor or a group-by, after the '{'. */
static node_t *parse_pairs(parser_t *p)
{
    node_t *n = node_new(N_OBJECT);
    if (!tok_is(p, OP_RBRACE)) {
        for (;;) {
            node_t *k = parse_expr(p, 0);
            if (k == NULL)
                goto fail;
            list_add(&n->items, k);
            if (!expect(p, OP_COLON))
                goto fail;
            node_t *v = parse_expr(p, 0);
            if (v == NULL)
                goto fail;
            list_add(&n->items, v);
            if (!tok_is(p, OP_COMMA))
                break;
            advance(p);
        }
    }
    if (!expect(p, OP_RBRACE))
        goto fail;
    return n;
fail:
    node_free(n);
    return NULL;
}

/* Skips a function signature (<n-n:n>), the current token being its '<'.
 * Signatures are accepted and not checked: a function's arguments are
 * checked where they are used. */
static void skip_signature(parser_t *p)
{
    size_t at = p->tok.at, i = p->pos;
    int depth = 1;
    for (; i < p->len && depth > 0; i++) {
        if (p->src[i] == '<')
            depth++;
        else if (p->src[i] == '>')
            depth--;
    }
    if (depth > 0) {
        perr(p, at, "unterminated function signature");
        return;
    }
    p->pos = i;
    p->prev_operand = true;
    advance(p);
}

/* function($a, $b) { body }, after the word function (or λ). */
static node_t *parse_lambda(parser_t *p)
{
    node_t *n = node_new(N_LAMBDA);
    advance(p); /* ( */
    while (!tok_is(p, OP_RPAREN)) {
        if (p->tok.kind != TK_VAR || p->tok.text[0] == '\0' || strcmp(p->tok.text, "$") == 0) {
            char b[64];
            perr(p, p->tok.at, "a function parameter must be a $name, not %s",
                 tok_describe(&p->tok, b));
            goto fail;
        }
        for (size_t i = 0; i < n->items.n; i++) {
            if (strcmp(n->items.v[i]->name, p->tok.text) == 0) {
                perr(p, p->tok.at, "the parameter $%s appears twice", p->tok.text);
                goto fail;
            }
        }
        node_t *v = node_new(N_VAR);
        v->name = p->tok.text;
        p->tok.text = NULL;
        list_add(&n->items, v);
        advance(p);
        if (!tok_is(p, OP_COMMA))
            break;
        advance(p);
    }
    if (!expect(p, OP_RPAREN))
        goto fail;
    if (tok_is(p, OP_LT))
        skip_signature(p);
    if (!expect(p, OP_LBRACE))
        goto fail;
    if ((n->a = parse_expr(p, 0)) == NULL || !expect(p, OP_RBRACE))
        goto fail;
    return n;
fail:
    node_free(n);
    return NULL;
}

static node_t *nud(parser_t *p, token_t *t)
{
    node_t *n = NULL;
    switch (t->kind) {
    case TK_END:
        perr(p, t->at, "unexpected end of the expression");
        return NULL;
    case TK_NUM: {
        n = node_new(N_VALUE);
        swf_error_t *err = number_new(t->num, &n->value);
        if (err) { /* the lexer has already reported it */
            swf_error_free(err);
            perr(p, t->at, "number literal out of range");
            node_free(n);
            return NULL;
        }
        return n;
    }
    case TK_STR:
        n = node_new(N_VALUE);
        n->value = json_object_new_string_len(t->text, (int)t->len);
        return n;
    case TK_TRUE:
    case TK_FALSE:
        n = node_new(N_VALUE);
        n->value = json_object_new_boolean(t->kind == TK_TRUE);
        return n;
    case TK_NULL:
        return node_new(N_VALUE);
    case TK_NAME:
        if ((strcmp(t->text, "function") == 0 || strcmp(t->text, "\u03bb") == 0) &&
            tok_is(p, OP_LPAREN))
            return parse_lambda(p);
        n = node_new(N_NAME);
        n->name = t->text;
        t->text = NULL;
        return path_of(n);
    case TK_VAR:
        n = node_new(N_VAR);
        n->name = t->text;
        t->text = NULL;
        return n;
    case TK_REGEX:
        n = node_new(N_REGEX);
        if (!regex_compile(p, n, t->text, t->flags, t->at)) {
            node_free(n);
            return NULL;
        }
        return n;
    case TK_OP:
        break;
    }
    switch (t->op) {
    case OP_AND:
    case OP_OR:
    case OP_IN:
        n = node_new(N_NAME);
        n->name = strdup(op_text[t->op]);
        return path_of(n);
    case OP_MINUS: {
        node_t *a = parse_expr(p, 70);
        if (a == NULL)
            return NULL;
        if (a->kind == N_VALUE && is_number(a->value) && a->preds.n == 0) {
            double d = -json_object_get_double(a->value);
            json_object_put(a->value);
            swf_error_free(number_new(d, &a->value)); /* d is finite: cannot fail */
            return a;
        }
        n = node_new(N_NEG);
        n->a = a;
        return n;
    }
    case OP_STAR:
        return path_of(node_new(N_WILDCARD));
    case OP_PERCENT: /* the parent of the context item: resolve_parents finds its step */
        n = node_new(N_PARENT);
        n->level = 1;
        n->at = t->at;
        return n;
    case OP_DESCEND:
        return path_of(node_new(N_DESCEND));
    case OP_LPAREN:
        n = node_new(N_BLOCK);
        while (!tok_is(p, OP_RPAREN)) {
            node_t *e = parse_expr(p, 0);
            if (e == NULL)
                goto fail;
            list_add(&n->items, e);
            if (!tok_is(p, OP_SEMI))
                break;
            advance(p);
        }
        if (!expect(p, OP_RPAREN))
            goto fail;
        return n;
    case OP_LBRACK:
        n = node_new(N_ARRAY);
        if (!tok_is(p, OP_RBRACK)) {
            for (;;) {
                node_t *e = parse_expr(p, 0);
                if (e == NULL)
                    goto fail;
                if (tok_is(p, OP_RANGE)) {
                    advance(p);
                    node_t *r = node_new(N_RANGE);
                    r->a = e;
                    r->b = parse_expr(p, 0);
                    e = r;
                    if (r->b == NULL) {
                        node_free(r);
                        goto fail;
                    }
                }
                list_add(&n->items, e);
                if (!tok_is(p, OP_COMMA))
                    break;
                advance(p);
            }
        }
        if (!expect(p, OP_RBRACK))
            goto fail;
        return n;
    case OP_LBRACE:
        return parse_pairs(p);
    case OP_PIPE:
        n = node_new(N_TRANSFORM);
        if ((n->a = parse_expr(p, 0)) == NULL || !expect(p, OP_PIPE) ||
            (n->b = parse_expr(p, 0)) == NULL)
            goto fail;
        if (tok_is(p, OP_COMMA)) {
            advance(p);
            if ((n->c = parse_expr(p, 0)) == NULL)
                goto fail;
        }
        if (!expect(p, OP_PIPE))
            goto fail;
        return n;
    default: {
        char b[64];
        perr(p, t->at, "unexpected %s", tok_describe(t, b));
        return NULL;
    }
    }
fail:
    node_free(n);
    return NULL;
}

static node_t *led(parser_t *p, token_t *t, node_t *left)
{
    node_t *n = NULL, *r = NULL;
    if (left->group != NULL &&
        (t->op == OP_LBRACE ||
         (left->kind != N_PATH && (t->op == OP_LBRACK || t->op == OP_AT || t->op == OP_HASH)))) {
        /* as jsonata-js, a.b{...}[0] filters (or binds) the last step, b */
        perr(p, t->at,
             "a group-by (a{...}) can be followed by neither a filter, a binding nor "
             "another group-by");
        goto fail;
    }
    if (left->group != NULL && left->kind != N_PATH && (t->op == OP_DOT || t->op == OP_CARET)) {
        /* $v{...}.b goes on from the grouped object, as ($v{...}).b; a
         * path's group-by (a.b{...}.c) groups the longer path, as in
         * jsonata-js */
        node_t *block = node_new(N_BLOCK);
        list_add(&block->items, left);
        left = block;
    }
    switch (t->op) {
    case OP_DOT: {
        r = parse_expr(p, 75);
        if (r == NULL)
            goto fail;
        if (r->kind == N_VALUE && is_string(r->value) && r->preds.n == 0) {
            /* a."field name" is a name step */
            node_t *name = node_new(N_NAME);
            name->name = strdup(json_object_get_string(r->value));
            node_free(r);
            r = path_of(name);
        } else if (r->kind == N_VALUE) {
            perr(p, t->at, "a literal value cannot be a path step");
            goto fail;
        }
        const node_t *first = left->kind == N_PATH ? left->items.v[0] : left;
        if (first->kind == N_VALUE && !is_string(first->value)) {
            perr(p, t->at, "a literal value cannot be a path step");
            goto fail;
        }
        if (left->kind == N_VALUE && left->preds.n == 0) { /* "field name".b */
            node_t *name = node_new(N_NAME);
            name->name = strdup(json_object_get_string(left->value));
            node_free(left);
            left = path_of(name);
        }
        n = left->kind == N_PATH ? left : path_of(left);
        left = NULL;
        if (r->kind == N_PATH) {
            for (size_t i = 0; i < r->items.n; i++)
                list_add(&n->items, r->items.v[i]);
            r->items.n = 0;
            n->keep_array |= r->keep_array;
            node_free(r);
        } else {
            /* as jsonata-js: a later step's filters filter the step's whole
             * result (the whole stream, once the path is a tuple stream) */
            r->stages = r->preds;
            r->preds = (node_list_t){0};
            list_add(&n->items, r);
        }
        return n;
    }
    case OP_LBRACK:
        if (tok_is(p, OP_RBRACK)) {
            advance(p);
            n = left->kind == N_PATH ? left : path_of(left);
            n->keep_array = true;
            return n;
        }
        r = parse_expr(p, 0);
        if (r == NULL || !expect(p, OP_RBRACK))
            goto fail;
        if (left->kind == N_PATH)
            list_add(&left->items.v[left->items.n - 1]->stages, r);
        else
            list_add(&left->preds, r);
        return left;
    case OP_LPAREN:
        n = node_new(N_CALL);
        n->at = t->at;
        if (left->kind == N_VAR && left->name[0] != '\0' && strcmp(left->name, "$") != 0 &&
            left->preds.n == 0) {
            /* $name(...): a built-in, unless a binding of that name hides it */
            n->name = left->name;
            left->name = NULL;
            node_free(left);
            n->fn = builtin_find(n->name);
        } else {
            n->a = left;
        }
        left = NULL;
        if (!tok_is(p, OP_RPAREN)) {
            for (;;) {
                node_t *a;
                if (tok_is(p, OP_QUESTION)) {
                    advance(p);
                    a = node_new(N_HOLE);
                } else if ((a = parse_expr(p, 0)) == NULL) {
                    goto fail;
                }
                list_add(&n->items, a);
                if (!tok_is(p, OP_COMMA))
                    break;
                advance(p);
            }
        }
        if (!expect(p, OP_RPAREN))
            goto fail;
        return n;
    case OP_QUESTION:
        n = node_new(N_COND);
        n->a = left;
        left = NULL;
        if ((n->b = parse_expr(p, 0)) == NULL)
            goto fail;
        if (tok_is(p, OP_COLON)) {
            advance(p);
            if ((n->c = parse_expr(p, 0)) == NULL)
                goto fail;
        }
        return n;
    case OP_BIND:
        if (left->kind != N_VAR || left->name[0] == '\0' || strcmp(left->name, "$") == 0 ||
            left->preds.n) {
            perr(p, t->at, "the left side of := must be a variable");
            goto fail;
        }
        n = node_new(N_BIND);
        n->name = left->name;
        left->name = NULL;
        node_free(left);
        left = NULL;
        if ((n->a = parse_expr(p, 9)) == NULL)
            goto fail;
        return n;
    case OP_CHAIN:
        r = parse_expr(p, 40);
        if (r == NULL)
            goto fail;
        if (r->kind == N_CALL && r->preds.n == 0 && r->group == NULL) {
            /* a ~> $f(b) is $f(a, b) */
            list_add(&r->items, NULL);
            memmove(r->items.v + 1, r->items.v, (r->items.n - 1) * sizeof *r->items.v);
            r->items.v[0] = left;
            r->chained = true;
            return r;
        }
        /* a ~> f, f a function value: f(a), or a composition when a is one */
        n = node_new(N_BINARY);
        n->op = OP_CHAIN;
        n->a = left;
        n->b = r;
        return n;
    case OP_CARET:
        if (!expect(p, OP_LPAREN))
            goto fail;
        r = node_new(N_SORT);
        for (;;) {
            bool descending = false;
            if (tok_is(p, OP_LT) || tok_is(p, OP_GT)) {
                descending = tok_is(p, OP_GT);
                advance(p);
            }
            node_t *e = parse_expr(p, 0);
            if (e == NULL)
                goto fail;
            e->descending = descending;
            list_add(&r->items, e);
            if (!tok_is(p, OP_COMMA))
                break;
            advance(p);
        }
        if (!expect(p, OP_RPAREN))
            goto fail;
        n = left->kind == N_PATH ? left : path_of(left);
        left = NULL;
        list_add(&n->items, r);
        return n;
    case OP_AT:
    case OP_HASH: {
        if (p->tok.kind != TK_VAR || p->tok.text[0] == '\0' || strcmp(p->tok.text, "$") == 0) {
            char b[64];
            perr(p, p->tok.at, "expected a $name after '%s', found %s", op_text[t->op],
                 tok_describe(&p->tok, b));
            goto fail;
        }
        if (left->kind == N_ARRAY ||
            (left->kind == N_PATH && left->items.n == 1 && left->items.v[0]->kind == N_ARRAY)) {
            /* jsonata-js evaluates a path's leading [...] whole, binding nothing */
            perr(p, t->at,
                 "'%s' after an array constructor that starts a path binds nothing: "
                 "put the array in parentheses",
                 op_text[t->op]);
            goto fail;
        }
        if (left->kind != N_PATH) {
            /* the node becomes a step: its filters become the step's */
            n = path_of(left);
            left->stages = left->preds;
            left->preds = (node_list_t){0};
        } else {
            n = left;
        }
        left = NULL;
        node_t *step = n->items.v[n->items.n - 1];
        if (t->op == OP_AT && (step->stages.n || step->preds.n || step->kind == N_SORT)) {
            perr(p, t->at,
                 "a context binding (@) must come before the step's filters and "
                 "order-by");
            goto fail;
        }
        if ((t->op == OP_AT && step->focus != NULL) || (t->op == OP_HASH && step->index != NULL)) {
            perr(p, t->at, "a step can have one context (@) and one positional (#) binding");
            goto fail;
        }
        if (t->op == OP_AT) {
            step->focus = p->tok.text;
        } else {
            step->index = p->tok.text;
            step->index_at = step->stages.n;
        }
        p->tok.text = NULL;
        advance(p);
        return n;
    }
    case OP_LBRACE:
        if ((r = parse_pairs(p)) == NULL)
            goto fail;
        left->group = r;
        return left;
    default:
        n = node_new(N_BINARY);
        n->op = t->op;
        n->a = left;
        left = NULL;
        if ((n->b = parse_expr(p, lbp(t))) == NULL)
            goto fail;
        return n;
    }
fail:
    node_free(left);
    node_free(n);
    node_free(r);
    return NULL;
}

static node_t *parse_expr(parser_t *p, int rbp)
{
    if (++p->depth > SWF_LIMIT_JSONATA_DEPTH) {
        perr(p, p->tok.at, "the expression is nested more than %d deep", SWF_LIMIT_JSONATA_DEPTH);
        return NULL;
    }
    token_t t = p->tok;
    p->tok.text = NULL; /* t owns it now */
    advance(p);
    node_t *left = nud(p, &t);
    free(t.text);
    while (left != NULL && !p->failed && rbp < lbp(&p->tok)) {
        t = p->tok;
        p->tok.text = NULL;
        advance(p);
        left = led(p, &t, left);
        free(t.text);
    }
    p->depth--;
    if (p->failed) {
        node_free(left);
        return NULL;
    }
    return left;
}

/* The names an expression binds ($v := and lambda parameters), so that a
 * call of a name that is neither one of them nor a built-in is a syntax
 * error: workflow variables are JSON, never functions. */
typedef struct names {
    const char **v;
    size_t n, cap;
} names_t;

static bool names_has(const names_t *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++) {
        if (strcmp(l->v[i], name) == 0)
            return true;
    }
    return false;
}

static void names_add(names_t *l, const char *name)
{
    if (names_has(l, name))
        return;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 8;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        if (l->v == NULL)
            abort();
    }
    l->v[l->n++] = name;
}

static void names_collect(const node_t *n, names_t *l)
{
    if (n == NULL)
        return;
    if (n->kind == N_BIND)
        names_add(l, n->name);
    for (size_t i = 0; n->kind == N_LAMBDA && i < n->items.n; i++)
        names_add(l, n->items.v[i]->name);
    names_collect(n->a, l);
    names_collect(n->b, l);
    names_collect(n->c, l);
    names_collect(n->group, l);
    for (size_t i = 0; i < n->items.n; i++)
        names_collect(n->items.v[i], l);
    for (size_t i = 0; i < n->stages.n; i++)
        names_collect(n->stages.v[i], l);
    for (size_t i = 0; i < n->preds.n; i++)
        names_collect(n->preds.v[i], l);
}

/* Checks each call of a name: a known function, with a number of arguments
 * it takes (counted after ~> has added its left side). */
static void calls_check(parser_t *p, const node_t *n, const names_t *bound)
{
    if (n == NULL || p->failed)
        return;
    if (n->kind == N_CALL && n->name != NULL && !names_has(bound, n->name)) {
        const builtin_t *fn = n->fn;
        if (fn == NULL)
            perr(p, n->at, "unknown function $%s", n->name);
        else if (n->items.n > fn->max)
            perr(p, n->at, "$%s takes at most %d argument%s, not %zu", fn->name, fn->max,
                 fn->max == 1 ? "" : "s", n->items.n);
        else if (n->items.n + (fn->context_arg ? 1 : 0) < fn->min)
            perr(p, n->at, "$%s takes at least %d argument%s, not %zu", fn->name, fn->min,
                 fn->min == 1 ? "" : "s", n->items.n);
    }
    calls_check(p, n->a, bound);
    calls_check(p, n->b, bound);
    calls_check(p, n->c, bound);
    calls_check(p, n->group, bound);
    for (size_t i = 0; i < n->items.n; i++)
        calls_check(p, n->items.v[i], bound);
    for (size_t i = 0; i < n->stages.n; i++)
        calls_check(p, n->stages.v[i], bound);
    for (size_t i = 0; i < n->preds.n; i++)
        calls_check(p, n->preds.v[i], bound);
}

/* The parent operator. As in jsonata-js, which step's item a % stands for is
 * settled here, from the tree: a % in a path step (or in the step's filters,
 * order-by terms, constructors, operands, arguments, blocks) is the item
 * the previous step was applied to, %.% the one before, and so on; a step
 * that is a % adds one level, one that is a block or a path inside one is
 * searched from its end. The step found gets a label (char *ancestor, one
 * per step) that it binds, in the path's tuple stream, to its input item
 * for each item it gives; the % reads that variable. What jsonata-js does
 * not pass on, this does not either: a % in a lambda, a transform, a ~>, a
 * group-by's pairs, or in the first step of a path that is not itself a %,
 * is left without a label, and is undefined. A % that would reach above
 * the whole expression, or into a step that is neither a name, *, %, nor a
 * block, is an error (S0217 there). */
typedef struct slots {
    node_t **v; /* N_PARENT nodes; node->level is how far up each still goes */
    size_t n, cap;
} slots_t;

static void slots_add(slots_t *l, node_t *n)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 4;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        if (l->v == NULL)
            abort();
    }
    l->v[l->n++] = n;
}

static void slots_move(slots_t *to, slots_t *from)
{
    for (size_t i = 0; i < from->n; i++)
        slots_add(to, from->v[i]);
    free(from->v);
    *from = (slots_t){0};
}

/* Goes one step up from `step` for the % `slot`. */
static void seek_parent(parser_t *p, node_t *step, node_t *slot)
{
    if (p->failed)
        return;
    switch (step->kind) {
    case N_NAME:
    case N_WILDCARD:
        if (--slot->level == 0) {
            if (step->ancestor == NULL) {
                char label[32];
                snprintf(label, sizeof label, "%%%u", p->labels++); /* no $name is spelt so */
                step->ancestor = strdup(label);
            }
            free(slot->name);
            slot->name = strdup(step->ancestor);
        }
        break;
    case N_PARENT:
        slot->level++;
        break;
    case N_BLOCK:
        if (step->items.n > 0) {
            step->tuple = true;
            seek_parent(p, step->items.v[step->items.n - 1], slot);
        }
        break;
    case N_PATH: {
        step->tuple = true;
        size_t i = step->items.n;
        do
            seek_parent(p, step->items.v[--i], slot);
        while (slot->level > 0 && i > 0 && !p->failed);
        break;
    }
    default:
        perr(p, slot->at,
             "the object representing the parent (%%) cannot be derived from this "
             "expression");
    }
}

/* Walks up the steps of `path` before step `from` for `slot`; a slot not
 * spent when they end is the path's to pass on (`pending`). */
static void seek_back(parser_t *p, node_t *path, size_t from, node_t *slot, slots_t *pending)
{
    size_t i = from;
    while (slot->level > 0 && !p->failed) {
        if (i == 0) {
            slots_add(pending, slot);
            return;
        }
        node_t *step = path->items.v[--i];
        /* as jsonata-js: consecutive @ steps count as their first */
        while (i > 0 && step->focus != NULL && path->items.v[i - 1]->focus != NULL)
            step = path->items.v[--i];
        seek_parent(p, step, slot);
    }
}

static void resolve_parents(parser_t *p, node_t *n, slots_t *out, bool self);

/* The filters of `n` (its preds, or as a step its stages): a % in one at
 * level 1 is n's own input; deeper ones go one level less far from n. A
 * filter that is a % alone ([%]) is left alone, as jsonata-js does. */
static void resolve_filters(parser_t *p, node_t *n, node_list_t *filters, slots_t *out)
{
    for (size_t i = 0; i < filters->n && !p->failed; i++) {
        slots_t f = {0};
        resolve_parents(p, filters->v[i], &f, false);
        for (size_t k = 0; k < f.n && !p->failed; k++) {
            if (f.v[k]->level == 1)
                seek_parent(p, n, f.v[k]);
            else
                f.v[k]->level--;
        }
        slots_move(out, &f);
    }
}

static void resolve_path(parser_t *p, node_t *path, slots_t *pending)
{
    for (size_t s = 0; s < path->items.n && !p->failed; s++) {
        node_t *step = path->items.v[s];
        slots_t own = {0};
        resolve_parents(p, step, &own, true);
        resolve_filters(p, step, &step->stages, &own);
        if (s == 0 && step->kind == N_PARENT)
            slots_add(pending, step);
        for (size_t k = 0; s > 0 && k < own.n; k++)
            seek_back(p, path, s, own.v[k], pending);
        free(own.v);
    }
}

/* Resolves the % inside n; those n passes outward (with n itself when it
 * is a % and `self`) are added to `out`. */
static void resolve_parents(parser_t *p, node_t *n, slots_t *out, bool self)
{
    if (n == NULL || p->failed)
        return;
    slots_t own = {0}, dropped = {0};
    bool pass = true;
    switch (n->kind) {
    case N_PATH:
        resolve_path(p, n, &own);
        break;
    case N_LAMBDA:
    case N_TRANSFORM:
        pass = false;
        break;
    case N_CALL:
        resolve_parents(p, n->a, &dropped, true); /* the function called */
        pass = !n->chained;
        break;
    case N_BINARY:
        pass = n->op != OP_CHAIN;
        break;
    default:
        break;
    }
    if (n->kind != N_PATH) {
        slots_t *to = pass ? &own : &dropped;
        if (n->kind != N_CALL)
            resolve_parents(p, n->a, to, true);
        resolve_parents(p, n->b, to, true);
        resolve_parents(p, n->c, to, true);
        for (size_t i = 0; i < n->items.n; i++)
            resolve_parents(p, n->items.v[i], to, true);
    }
    resolve_parents(p, n->group, &dropped, true);
    resolve_filters(p, n, &n->preds, &own);
    free(dropped.v);
    slots_move(out, &own);
    if (n->kind == N_PARENT && self)
        slots_add(out, n);
}

/* Parses a whole expression. NULL with err set on failure. */
static node_t *parse(const char *expr, char err[256])
{
    size_t len = strlen(expr);
    if (len > SWF_LIMIT_JSONATA_BYTES) {
        snprintf(err, 256, "the expression is %zu bytes, the limit is %d", len,
                 SWF_LIMIT_JSONATA_BYTES);
        return NULL;
    }
    parser_t p = {.src = expr, .len = len};
    advance(&p);
    node_t *root = NULL;
    if (p.tok.kind == TK_END && !p.failed)
        perr(&p, 0, "the expression is empty");
    else
        root = parse_expr(&p, 0);
    if (root != NULL && p.tok.kind != TK_END) {
        char b[64];
        perr(&p, p.tok.at, "unexpected %s", tok_describe(&p.tok, b));
        node_free(root);
        root = NULL;
    }
    if (root != NULL) {
        slots_t top = {0};
        resolve_parents(&p, root, &top, true);
        if (top.n > 0)
            perr(&p, top.v[0]->at,
                 "the object representing the parent (%%) cannot be derived from this "
                 "expression");
        free(top.v);
        if (p.failed) {
            node_free(root);
            root = NULL;
        }
    }
    if (root != NULL) {
        names_t bound = {0};
        names_collect(root, &bound);
        calls_check(&p, root, &bound);
        free(bound.v);
        if (p.failed) {
            node_free(root);
            root = NULL;
        }
    }
    free(p.tok.text);
    if (root == NULL)
        snprintf(err, 256, "%s", p.err[0] ? p.err : "invalid expression");
    return root;
}

/* ------------------------------------------------------------------------ */
/* Values                                                                   */
/* ------------------------------------------------------------------------ */

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

static bool defined(const val_t *v)
{
    return (v->flags & V_DEF) != 0;
}
static bool is_regex(const val_t *v)
{
    return (v->flags & V_REGEX) != 0;
}
/* Any value that is not JSON: a function or a regular expression (which
 * JSONata counts as a function). */
static bool is_func(const val_t *v)
{
    return (v->flags & (V_REGEX | V_FUNC)) != 0;
}
/* A function, or a regular expression (called, it gives its first match). */
static bool is_callable(const val_t *v)
{
    return (v->flags & (V_FUNC | V_REGEX)) != 0;
}
static const char *func_what(const val_t *v)
{
    return is_regex(v) ? "a regular expression" : "a function";
}

static void val_free(val_t *v)
{
    json_object_put(v->j);
    *v = UNDEF;
}

/* A defined value holding j (taken). */
static val_t val_take(json_object *j)
{
    return (val_t){j, V_DEF, NULL, NULL, NULL};
}
/* A defined value holding a new reference to j (borrowed). */
static val_t val_ref(json_object *j)
{
    return (val_t){swf_json_ref(j), V_DEF, NULL, NULL, NULL};
}

/* A position (an index in an array or a stream) as a value. */
static val_t index_val(size_t i)
{
    return val_take(json_object_new_int64((int64_t)i));
}

static val_t val_copy(const val_t *v)
{
    val_t c = *v;
    c.j = swf_json_ref(v->j);
    return c;
}

/* A sequence of one value is that value; an empty one is undefined. */
static void collapse(val_t *v)
{
    if (!(v->flags & V_SEQ))
        return;
    size_t n = json_object_array_length(v->j);
    if (n == 0) {
        val_free(v);
    } else if (n == 1 && !(v->flags & V_KEEP)) {
        json_object *one = swf_json_ref(json_object_array_get_idx(v->j, 0));
        json_object_put(v->j);
        *v = val_take(one);
    }
}

/* The items of a value: an array's elements, or the value itself. */
typedef struct items {
    json_object *arr; /* borrowed; NULL when one */
    json_object *one;
    size_t n;
} items_t;

static items_t items_of(const val_t *v)
{
    items_t it = {NULL, NULL, 0};
    if (!defined(v))
        return it;
    if (is_array(v->j)) {
        it.arr = v->j;
        it.n = json_object_array_length(v->j);
    } else {
        it.one = v->j;
        it.n = 1;
    }
    return it;
}

static json_object *item_at(const items_t *it, size_t i)
{
    return it->arr ? json_object_array_get_idx(it->arr, i) : it->one;
}

static const char *type_name(const val_t *v)
{
    if (!defined(v))
        return "undefined";
    if (is_func(v))
        return "function";
    return swf_json_type_name(v->j);
}

/* JSONata's $boolean: -1 for undefined. */
static int truth(json_object *j, int depth)
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
            return depth < SWF_LIMIT_JSON_DEPTH ? truth(json_object_array_get_idx(j, 0), depth + 1)
                                                : 0;
        for (size_t i = 0; i < n; i++) {
            if (depth < SWF_LIMIT_JSON_DEPTH && truth(json_object_array_get_idx(j, i), depth + 1))
                return 1;
        }
        return 0;
    }
    }
    return 0;
}

/* As a condition (?:, and, or, filters, the predicates of $filter, $single
 * and $sift), a function is true and a regular expression false, as in
 * jsonata-js (whose $boolean and $not differ: see fn_boolean). */
static int boolean_of(const val_t *v)
{
    if (!defined(v))
        return -1;
    if (is_func(v))
        return !is_regex(v);
    return truth(v->j, 0);
}

/* ------------------------------------------------------------------------ */
/* Evaluation context                                                       */
/* ------------------------------------------------------------------------ */

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

static void frame_free(frame_t *f)
{
    for (size_t i = 0; i < f->n; i++)
        val_free(&f->b[i].v);
    free(f->b);
    free(f);
}

static frame_t *frame_new(frame_t *up)
{
    frame_t *f = calloc(1, sizeof *f);
    if (f == NULL)
        abort();
    f->up = up;
    return f;
}

/* Ends a block's or a call's use of f: freed unless a closure keeps it. */
static void frame_release(frame_t *f)
{
    if (!f->captured)
        frame_free(f);
}

/* Frees the arena: what closures kept, and the closures. */
static void ctx_free(ctx_t *ctx)
{
    while (ctx->captured) {
        frame_t *f = ctx->captured;
        ctx->captured = f->next_captured;
        frame_free(f);
    }
    while (ctx->closures) {
        closure_t *c = ctx->closures;
        ctx->closures = c->next;
        val_free(&c->input);
        val_free(&c->first);
        val_free(&c->then);
        for (size_t i = 0; i < c->nargs; i++)
            val_free(&c->args[i]);
        free(c->args);
        free(c);
    }
}

static void frame_set(frame_t *f, const char *name, const val_t *v)
{
    for (size_t i = 0; i < f->n; i++) {
        if (strcmp(f->b[i].name, name) == 0) {
            val_free(&f->b[i].v);
            f->b[i].v = val_copy(v);
            return;
        }
    }
    if (f->n == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 4;
        binding_t *b = realloc(f->b, cap * sizeof *b);
        if (b == NULL)
            abort();
        f->b = b;
        f->cap = cap;
    }
    f->b[f->n].name = name;
    f->b[f->n].v = val_copy(v);
    f->n++;
}

/* Counts n units of work; an error once the budget is spent. */
static swf_error_t *charge(ctx_t *ctx, size_t n)
{
    ctx->steps += n;
    if (ctx->steps > SWF_LIMIT_JSONATA_STEPS)
        return qerr("the expression does too much work (more than %d steps)",
                    SWF_LIMIT_JSONATA_STEPS);
    return NULL;
}

/* What building values costs, estimated from json-c's sizes: a new value,
 * and one slot of an array or object. */
#define VALUE_BYTES 64
#define SLOT_BYTES 8

/* Counts the bytes of values built; an error beyond the budget. The count
 * only grows (freed values are not subtracted), so it also bounds the peak. */
static swf_error_t *charge_bytes(ctx_t *ctx, size_t n)
{
    ctx->built_bytes += n;
    if (ctx->built_bytes > SWF_LIMIT_JSONATA_BUILT_BYTES)
        return qerr("the expression builds too much data (more than %u bytes)",
                    SWF_LIMIT_JSONATA_BUILT_BYTES);
    return NULL;
}

/* The estimated size of a value the evaluator has just built (not of the
 * values it shares with its input: only the new top level is counted). */
static size_t built_size(json_object *j)
{
    if (is_string(j))
        return VALUE_BYTES + (size_t)json_object_get_string_len(j);
    if (is_array(j))
        return VALUE_BYTES + (VALUE_BYTES + SLOT_BYTES) * json_object_array_length(j);
    if (is_object(j))
        return VALUE_BYTES + (VALUE_BYTES + SLOT_BYTES) * (size_t)json_object_object_length(j);
    return VALUE_BYTES;
}

struct call {
    ctx_t *ctx;
    const builtin_t *fn;
    val_t *argv;
    size_t argc;
};

static swf_error_t *eval(ctx_t *ctx, const node_t *n, const val_t *input, frame_t *env, val_t *out);

/* ------------------------------------------------------------------------ */
/* Strings                                                                  */
/* ------------------------------------------------------------------------ */

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
static swf_error_t *to_string(const val_t *v, int indent, buf_t *b)
{
    if (is_func(v))
        return NULL; /* functions show as "" */
    if (is_string(v->j)) {
        buf_add(b, json_object_get_string(v->j), (size_t)json_object_get_string_len(v->j));
        if (b->over)
            return qerr("the string is longer than %u bytes", SWF_LIMIT_PAYLOAD_BYTES);
        return NULL;
    }
    return stringify(b, v->j, indent, 0);
}

static val_t string_val(const char *s, size_t n)
{
    return val_take(json_object_new_string_len(s, (int)n));
}

/* Byte offsets of the code points of s[0..n): starts[0..*count], the last
 * being n. */
static size_t *utf8_starts(const char *s, size_t n, size_t *count)
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

static size_t utf8_length(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += ((unsigned char)s[i] & 0xC0) != 0x80;
    return k;
}

/* The length of s[0..n) in UTF-16 code units, as JavaScript counts
 * positions in a string (a code point past U+FFFF is two). */
static size_t utf16_length(const char *s, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char b = (unsigned char)s[i];
        k += (b & 0xC0) != 0x80;
        k += b >= 0xF0;
    }
    return k;
}

/* ------------------------------------------------------------------------ */
/* Operators                                                                */
/* ------------------------------------------------------------------------ */

static swf_error_t *eval_binary(ctx_t *ctx, const node_t *n, const val_t *input, frame_t *env,
                                val_t *out)
{
    val_t l = UNDEF, r = UNDEF;
    swf_error_t *err = NULL;
    const char *op = op_text[n->op];

    if (n->op == OP_AND || n->op == OP_OR) {
        if ((err = eval(ctx, n->a, input, env, &l)))
            goto done;
        bool lb = boolean_of(&l) == 1;
        if ((n->op == OP_AND && !lb) || (n->op == OP_OR && lb)) {
            *out = val_take(json_object_new_boolean(lb));
            goto done;
        }
        if ((err = eval(ctx, n->b, input, env, &r)))
            goto done;
        *out = val_take(json_object_new_boolean(boolean_of(&r) == 1));
        goto done;
    }
    if ((err = eval(ctx, n->a, input, env, &l)) || (err = eval(ctx, n->b, input, env, &r)))
        goto done;
    if (is_func(&l) || is_func(&r)) {
        err = qerr("%s cannot be an operand of '%s'", func_what(is_func(&l) ? &l : &r), op);
        goto done;
    }
    switch (n->op) {
    case OP_PLUS:
    case OP_MINUS:
    case OP_STAR:
    case OP_SLASH:
    case OP_PERCENT: {
        if (defined(&l) && !is_number(l.j)) {
            err = qerr("the left side of '%s' must be a number, not %s", op, type_name(&l));
            goto done;
        }
        if (defined(&r) && !is_number(r.j)) {
            err = qerr("the right side of '%s' must be a number, not %s", op, type_name(&r));
            goto done;
        }
        if (!defined(&l) || !defined(&r))
            goto done; /* undefined */
        double a = json_object_get_double(l.j), b = json_object_get_double(r.j), v;
        switch (n->op) {
        case OP_PLUS:
            v = a + b;
            break;
        case OP_MINUS:
            v = a - b;
            break;
        case OP_STAR:
            v = a * b;
            break;
        case OP_SLASH:
            v = a / b;
            break;
        default:
            v = fmod(a, b);
            break;
        }
        json_object *j;
        if ((err = number_new(v, &j)))
            goto done;
        *out = val_take(j);
        goto done;
    }
    case OP_AMP: {
        buf_t b = {0};
        if ((defined(&l) && (err = to_string(&l, 0, &b))) ||
            (defined(&r) && (err = to_string(&r, 0, &b)))) {
            free(b.s);
            goto done;
        }
        *out = string_val(buf_cstr(&b), b.n);
        free(b.s);
        goto done;
    }
    case OP_EQ:
    case OP_NE: {
        bool eq = defined(&l) && defined(&r) && swf_json_equal(l.j, r.j);
        if (!defined(&l) || !defined(&r))
            *out = val_take(json_object_new_boolean(false));
        else
            *out = val_take(json_object_new_boolean(n->op == OP_EQ ? eq : !eq));
        goto done;
    }
    case OP_LT:
    case OP_LE:
    case OP_GT:
    case OP_GE: {
        bool lok = !defined(&l) || is_number(l.j) || is_string(l.j);
        bool rok = !defined(&r) || is_number(r.j) || is_string(r.j);
        if (!lok || !rok) {
            err = qerr("'%s' compares numbers or strings, not %s", op, type_name(lok ? &r : &l));
            goto done;
        }
        if (!defined(&l) || !defined(&r))
            goto done; /* undefined, as in jsonata-js 2 (= and != give false) */
        int c;
        if (is_number(l.j) && is_number(r.j)) {
            double a = json_object_get_double(l.j), b = json_object_get_double(r.j);
            c = a < b ? -1 : a > b ? 1 : 0;
        } else if (is_string(l.j) && is_string(r.j)) {
            size_t la = (size_t)json_object_get_string_len(l.j);
            size_t lb2 = (size_t)json_object_get_string_len(r.j);
            c = memcmp(json_object_get_string(l.j), json_object_get_string(r.j),
                       la < lb2 ? la : lb2);
            if (c == 0)
                c = la < lb2 ? -1 : la > lb2 ? 1 : 0;
        } else {
            err = qerr("'%s' cannot compare %s with %s", op, type_name(&l), type_name(&r));
            goto done;
        }
        bool res = n->op == OP_LT   ? c < 0
                   : n->op == OP_LE ? c <= 0
                   : n->op == OP_GT ? c > 0
                                    : c >= 0;
        *out = val_take(json_object_new_boolean(res));
        goto done;
    }
    case OP_IN: {
        bool found = false;
        if (defined(&l) && defined(&r)) {
            items_t it = items_of(&r);
            if ((err = charge(ctx, it.n)))
                goto done;
            for (size_t i = 0; i < it.n && !found; i++)
                found = swf_json_equal(l.j, item_at(&it, i));
        }
        *out = val_take(json_object_new_boolean(found));
        goto done;
    }
    default:
        err = qerr("the operator '%s' is not supported here", op);
        goto done;
    }
done:
    if (!err && defined(out) &&
        (n->op == OP_AMP || !json_object_is_type(out->j, json_type_boolean)))
        err = charge_bytes(ctx, built_size(out->j));
    if (err)
        val_free(out);
    val_free(&l);
    val_free(&r);
    return err;
}

/* ------------------------------------------------------------------------ */
/* Paths and filters                                                        */
/* ------------------------------------------------------------------------ */

/* Field `name` of j; over an array, of each element, flattened. */
static swf_error_t *lookup(ctx_t *ctx, json_object *j, const char *name, val_t *out, int depth)
{
    *out = UNDEF;
    if (is_object(j)) {
        json_object *v;
        if (json_object_object_get_ex(j, name, &v))
            *out = val_ref(v);
        return NULL;
    }
    if (!is_array(j))
        return NULL;
    if (depth > SWF_LIMIT_JSON_DEPTH)
        return qerr("the value is nested too deep");
    size_t n = json_object_array_length(j);
    swf_error_t *err = charge(ctx, n);
    if (err)
        return err;
    json_object *seq = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        val_t r;
        if ((err = lookup(ctx, json_object_array_get_idx(j, i), name, &r, depth + 1))) {
            json_object_put(seq);
            return err;
        }
        if (!defined(&r))
            continue;
        if (is_array(r.j)) {
            for (size_t k = 0; k < json_object_array_length(r.j); k++)
                json_object_array_add(seq, swf_json_ref(json_object_array_get_idx(r.j, k)));
        } else {
            json_object_array_add(seq, swf_json_ref(r.j));
        }
        val_free(&r);
    }
    *out = (val_t){seq, V_DEF | V_SEQ, NULL, NULL, NULL};
    return NULL;
}

static void seq_add_flat(json_object *seq, json_object *j)
{
    if (is_array(j)) {
        for (size_t k = 0; k < json_object_array_length(j); k++)
            json_object_array_add(seq, swf_json_ref(json_object_array_get_idx(j, k)));
    } else {
        json_object_array_add(seq, swf_json_ref(j));
    }
}

/* Adds j to seq, the items of arrays at any depth in its place. */
static void seq_add_deep(json_object *seq, json_object *j, int depth)
{
    if (!is_array(j) || depth > SWF_LIMIT_JSON_DEPTH) {
        json_object_array_add(seq, swf_json_ref(j));
        return;
    }
    for (size_t k = 0; k < json_object_array_length(j); k++)
        seq_add_deep(seq, json_object_array_get_idx(j, k), depth + 1);
}

static swf_error_t *descendants(ctx_t *ctx, json_object *j, json_object *seq, int depth)
{
    swf_error_t *err = charge(ctx, 1);
    if (err)
        return err;
    if (depth > SWF_LIMIT_JSON_DEPTH)
        return qerr("the value is nested too deep");
    if (!is_array(j))
        json_object_array_add(seq, swf_json_ref(j));
    if (is_array(j)) {
        for (size_t i = 0; i < json_object_array_length(j) && !err; i++)
            err = descendants(ctx, json_object_array_get_idx(j, i), seq, depth + 1);
    } else if (is_object(j)) {
        json_object_object_foreach(j, key, v)
        {
            (void)key;
            if ((err = descendants(ctx, v, seq, depth + 1)))
                break;
        }
    }
    return err;
}

static bool number_index(json_object *j, size_t i, size_t n)
{
    double d = floor(json_object_get_double(j));
    if (d < 0)
        d += (double)n;
    return d == (double)i;
}

/* Whether a filter whose value for item i of n is r keeps the item: r is
 * an index (or indexes), or else a condition. */
static bool filter_keeps(const val_t *r, size_t i, size_t n)
{
    if (defined(r) && is_number(r->j))
        return number_index(r->j, i, n);
    if (defined(r) && is_array(r->j) && json_object_array_length(r->j) > 0) {
        size_t m = json_object_array_length(r->j), k;
        bool keep = false;
        for (k = 0; k < m && is_number(json_object_array_get_idx(r->j, k)); k++)
            ;
        if (k < m)
            return boolean_of(r) == 1;
        for (k = 0; k < m && !keep; k++)
            keep = number_index(json_object_array_get_idx(r->j, k), i, n);
        return keep;
    }
    return boolean_of(r) == 1;
}

/* Applies the filter pred to v (in place): an index, or a condition on each
 * item. */
static swf_error_t *filter(ctx_t *ctx, const node_t *pred, frame_t *env, val_t *v)
{
    if (!defined(v))
        return NULL;
    if (is_func(v))
        return qerr("%s cannot be filtered", func_what(v));
    items_t it = items_of(v);
    json_object *seq = json_object_new_array();
    swf_error_t *err = charge(ctx, it.n);
    if (err)
        goto done;
    if (pred->kind == N_VALUE && is_number(pred->value) && pred->preds.n == 0) {
        for (size_t i = 0; i < it.n; i++) {
            if (!number_index(pred->value, i, it.n))
                continue;
            if (is_array(item_at(&it, i))) {
                /* as jsonata-js: an array item is the result itself, a JSON
                 * array rather than a sequence */
                json_object *item = swf_json_ref(item_at(&it, i));
                json_object_put(seq);
                val_free(v);
                *v = val_take(item);
                return NULL;
            }
            json_object_array_add(seq, swf_json_ref(item_at(&it, i)));
            break;
        }
        goto done;
    }
    for (size_t i = 0; i < it.n; i++) {
        val_t item = val_ref(item_at(&it, i)), r = UNDEF;
        err = eval(ctx, pred, &item, env, &r);
        val_free(&item);
        if (err)
            goto done;
        bool keep = filter_keeps(&r, i, it.n);
        val_free(&r);
        if (keep)
            json_object_array_add(seq, swf_json_ref(item_at(&it, i)));
    }
done:
    if (err) {
        json_object_put(seq);
        return err;
    }
    val_free(v);
    *v = (val_t){seq, V_DEF | V_SEQ, NULL, NULL, NULL};
    return charge_bytes(ctx, VALUE_BYTES + SLOT_BYTES * json_object_array_length(seq));
}

/* One step of a path on one input item: the step, then its filters. */
static swf_error_t *eval_step(ctx_t *ctx, const node_t *step, const val_t *item, frame_t *env,
                              val_t *out)
{
    swf_error_t *err = eval(ctx, step, item, env, out);
    for (size_t i = 0; !err && i < step->stages.n; i++)
        err = filter(ctx, step->stages.v[i], env, out);
    if (!err && is_func(out))
        err = qerr("%s cannot be a path step", func_what(out));
    if (err)
        val_free(out);
    return err;
}

/* Whether item a goes after item b; false keeps their order. */
typedef swf_error_t *(*after_t)(void *data, size_t a, size_t b, bool *after);

/* Sorts the indexes v[0..n) (tmp has room for n) with JSONata's merge sort:
 * stable, and calling `after` in the order jsonata-js does, so that a
 * comparator function sees the same pairs. */
static swf_error_t *merge_sort(size_t *v, size_t *tmp, size_t n, after_t after, void *data)
{
    if (n <= 1)
        return NULL;
    size_t mid = n / 2, i = 0, j = mid, k = 0;
    swf_error_t *err = merge_sort(v, tmp, mid, after, data);
    if (!err)
        err = merge_sort(v + mid, tmp, n - mid, after, data);
    while (!err && i < mid && j < n) {
        bool swap;
        if ((err = after(data, v[i], v[j], &swap)))
            break;
        tmp[k++] = swap ? v[j++] : v[i++];
    }
    if (err)
        return err;
    while (i < mid)
        tmp[k++] = v[i++];
    while (j < n)
        tmp[k++] = v[j++];
    memcpy(v, tmp, n * sizeof *v);
    return NULL;
}

typedef struct order_by {
    ctx_t *ctx;
    const node_t *step; /* N_SORT */
    val_t *keys;        /* item i's term t at [i * terms + t] */
} order_by_t;

/* The comparison of an order-by: term by term, an undefined key last (in
 * either direction), numbers with numbers and strings with strings. */
static swf_error_t *order_by_after(void *data, size_t a, size_t b, bool *after)
{
    order_by_t *o = data;
    size_t terms = o->step->items.n;
    int comp = 0;
    swf_error_t *err = charge(o->ctx, 1);
    for (size_t t = 0; !err && comp == 0 && t < terms; t++) {
        const val_t *x = &o->keys[a * terms + t], *y = &o->keys[b * terms + t];
        if (!defined(x) || !defined(y)) {
            comp = defined(x) == defined(y) ? 0 : defined(x) ? -1 : 1;
            continue;
        }
        if (is_number(x->j) != is_number(y->j))
            return qerr("an order-by compares %s with %s: the keys of a term must all be "
                        "numbers or all strings",
                        type_name(x), type_name(y));
        if (is_number(x->j)) {
            double p = json_object_get_double(x->j), q = json_object_get_double(y->j);
            comp = p < q ? -1 : p > q ? 1 : 0;
        } else {
            comp = strcmp(json_object_get_string(x->j), json_object_get_string(y->j));
            comp = comp < 0 ? -1 : comp > 0 ? 1 : 0;
        }
        if (o->step->items.v[t]->descending)
            comp = -comp;
    }
    *after = comp == 1;
    return err;
}

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

static void tuples_add(tuples_t *ts, tuple_t t)
{
    if (ts->n == ts->cap) {
        ts->cap = ts->cap ? 2 * ts->cap : 8;
        ts->v = realloc(ts->v, ts->cap * sizeof *ts->v);
        if (ts->v == NULL)
            abort();
    }
    ts->v[ts->n++] = t;
}

static void tuples_free(tuples_t *ts)
{
    for (size_t i = 0; i < ts->n; i++) {
        val_free(&ts->v[i].item);
        if (ts->v[i].vars != NULL) /* NULL: moved to another stream */
            frame_free(ts->v[i].vars);
    }
    free(ts->v);
    *ts = (tuples_t){0};
}

/* Binds the variables of `vars` (distinct names) in f, which has none yet:
 * one pass, where frame_set would search f for each. */
static void frame_set_all(frame_t *f, const frame_t *vars)
{
    if (vars->n == 0)
        return;
    f->b = malloc(vars->n * sizeof *f->b);
    if (f->b == NULL)
        abort();
    for (size_t i = 0; i < vars->n; i++)
        f->b[i] = (binding_t){vars->b[i].name, val_copy(&vars->b[i].v)};
    f->n = f->cap = vars->n;
}

/* A copy of t; its variables are counted as work by the callers (a tuple
 * carries one per @, # and % step so far). */
static tuple_t tuple_copy(const tuple_t *t)
{
    tuple_t c = {val_copy(&t->item), frame_new(NULL)};
    frame_set_all(c.vars, t->vars);
    return c;
}

/* Moves tuple i of ts (left empty, freed with ts) to the end of `to`. */
static void tuple_move(tuples_t *to, tuples_t *ts, size_t i)
{
    tuples_add(to, ts->v[i]);
    ts->v[i] = (tuple_t){UNDEF, NULL};
}

/* A frame over env with the tuple's variables; frame_release it after. */
static frame_t *tuple_env(frame_t *env, const tuple_t *t)
{
    frame_t *f = frame_new(env);
    frame_set_all(f, t->vars);
    return f;
}

/* The work of copying a tuple or making its frame. */
static swf_error_t *tuple_charge(ctx_t *ctx, const tuple_t *t)
{
    return charge(ctx, 1 + t->vars->n);
}

/* Binds each tuple's position in the stream to `name`. */
static void tuples_number(tuples_t *ts, const char *name)
{
    for (size_t i = 0; i < ts->n; i++) {
        val_t pos = index_val(i);
        frame_set(ts->v[i].vars, name, &pos);
        val_free(&pos);
    }
}

static swf_error_t *tuples_filter(ctx_t *ctx, const node_t *pred, frame_t *env, tuples_t *ts)
{
    tuples_t kept = {0};
    swf_error_t *err = NULL;
    for (size_t i = 0; i < ts->n && !err; i++) {
        if ((err = tuple_charge(ctx, &ts->v[i])))
            break;
        frame_t *f = tuple_env(env, &ts->v[i]);
        val_t r = UNDEF;
        err = eval(ctx, pred, &ts->v[i].item, f, &r);
        frame_release(f);
        if (!err && filter_keeps(&r, i, ts->n))
            tuple_move(&kept, ts, i);
        val_free(&r);
    }
    tuples_free(ts);
    *ts = kept;
    if (err)
        tuples_free(ts);
    return err;
}

/* The step's filters, with #$i numbering the stream where it was written
 * among them (before the first: numbered by the step itself). */
static swf_error_t *tuples_stages(ctx_t *ctx, const node_t *step, frame_t *env, tuples_t *ts)
{
    swf_error_t *err = NULL;
    for (size_t i = 0; i <= step->stages.n && !err; i++) {
        if (step->index != NULL && step->index_at == i && (i > 0 || step->kind == N_SORT))
            tuples_number(ts, step->index);
        if (i < step->stages.n)
            err = tuples_filter(ctx, step->stages.v[i], env, ts);
    }
    return err;
}

/* An order-by over a tuple stream (keys see the tuples' variables). */
static swf_error_t *tuples_sort(ctx_t *ctx, const node_t *step, frame_t *env, tuples_t *ts)
{
    size_t n = ts->n, terms = step->items.n;
    if (n <= 1)
        return NULL; /* as jsonata-js: one item is sorted, its keys unseen */
    order_by_t o = {ctx, step, calloc(n * terms + 1, sizeof(val_t))};
    size_t *idx = calloc(2 * n + 1, sizeof *idx);
    if (o.keys == NULL || idx == NULL)
        abort();
    swf_error_t *err = charge(ctx, n * terms);
    for (size_t i = 0; i < n && !err; i++) {
        idx[i] = i;
        if ((err = tuple_charge(ctx, &ts->v[i])))
            break;
        frame_t *f = tuple_env(env, &ts->v[i]);
        for (size_t t = 0; t < terms && !err; t++) {
            val_t *k = &o.keys[i * terms + t];
            err = eval(ctx, step->items.v[t], &ts->v[i].item, f, k);
            if (!err && defined(k) && (is_func(k) || !(is_number(k->j) || is_string(k->j))))
                err = qerr("an order-by term must be a number or a string, not %s", type_name(k));
        }
        frame_release(f);
    }
    if (!err)
        err = merge_sort(idx, idx + n, n, order_by_after, &o);
    if (!err) {
        tuples_t sorted = {0};
        for (size_t i = 0; i < n; i++)
            tuple_move(&sorted, ts, idx[i]);
        tuples_free(ts);
        *ts = sorted;
    }
    for (size_t i = 0; i < n * terms; i++)
        val_free(&o.keys[i]);
    free(o.keys);
    free(idx);
    return err;
}

static swf_error_t *eval_into_tuples(ctx_t *ctx, const node_t *n, const val_t *item, frame_t *env,
                                     val_t *out, tuples_t *tout, bool *streamed);
static swf_error_t *eval_group(ctx_t *ctx, const node_t *pairs, frame_t *env, const tuples_t *ts,
                               val_t *v);

/* Whether a path step makes the path a tuple stream from it on: it binds a
 * variable (@, #, or its input item for a later %), or a % reaches into it. */
static bool tuple_step(const node_t *step)
{
    return step->focus != NULL || step->index != NULL || step->ancestor != NULL ||
           (step->kind == N_BLOCK && step->tuple);
}

/* One step over a tuple stream: each result item makes a tuple (the item
 * becomes the context, or with @$v is bound to $v and the context stays;
 * #$i binds its position, and a step a later % refers to binds its input
 * item to the %'s label). A block a % reaches into gives tuples itself: they
 * join the tuple they came from. */
static swf_error_t *tuples_step(ctx_t *ctx, const node_t *step, frame_t *env, tuples_t *ts)
{
    tuples_t next = {0};
    bool into = step->kind == N_BLOCK && step->tuple;
    swf_error_t *err = NULL;
    for (size_t i = 0; i < ts->n && !err; i++) {
        if ((err = tuple_charge(ctx, &ts->v[i])))
            break;
        frame_t *f = tuple_env(env, &ts->v[i]);
        val_t r = UNDEF;
        tuples_t inner = {0};
        bool streamed = false;
        if (into)
            err = eval_into_tuples(ctx, step, &ts->v[i].item, f, &r, &inner, &streamed);
        else
            err = eval(ctx, step, &ts->v[i].item, f, &r);
        frame_release(f);
        if (!err && is_func(&r))
            err = qerr("%s cannot be a path step", func_what(&r));
        items_t it = items_of(&r);
        size_t n = streamed ? inner.n : it.n;
        if (!err)
            err = charge(ctx, n * (1 + ts->v[i].vars->n));
        if (!err)
            err = charge_bytes(ctx, (VALUE_BYTES + SLOT_BYTES * (1 + ts->v[i].vars->n)) * n);
        for (size_t k = 0; k < n && !err; k++) {
            tuple_t t = tuple_copy(&ts->v[i]);
            if (streamed) {
                const tuple_t *u = &inner.v[k];
                if ((err = charge(ctx, u->vars->n * (1 + t.vars->n)))) {
                    val_free(&t.item);
                    frame_free(t.vars);
                    break;
                }
                for (size_t b = 0; b < u->vars->n; b++)
                    frame_set(t.vars, u->vars->b[b].name, &u->vars->b[b].v);
                val_free(&t.item);
                t.item = val_copy(&u->item);
                tuples_add(&next, t);
                continue;
            }
            val_t x = val_ref(item_at(&it, k));
            if (step->focus != NULL) {
                frame_set(t.vars, step->focus, &x);
            } else {
                val_free(&t.item);
                t.item = val_copy(&x);
            }
            if (step->index != NULL && step->index_at == 0) {
                val_t pos = index_val(k);
                frame_set(t.vars, step->index, &pos);
                val_free(&pos);
            }
            if (step->ancestor != NULL)
                frame_set(t.vars, step->ancestor, &ts->v[i].item);
            val_free(&x);
            tuples_add(&next, t);
        }
        tuples_free(&inner);
        val_free(&r);
    }
    tuples_free(ts);
    *ts = next;
    if (!err)
        err = tuples_stages(ctx, step, env, ts);
    return err;
}

/* The items of the sequence `in` as tuples without variables. */
static tuples_t tuples_of(json_object *in)
{
    tuples_t ts = {0};
    for (size_t i = 0; i < json_object_array_length(in); i++)
        tuples_add(&ts, (tuple_t){val_ref(json_object_array_get_idx(in, i)), frame_new(NULL)});
    return ts;
}

/* The sequence of the tuples' items. */
static val_t tuples_items(const tuples_t *ts)
{
    json_object *seq = json_object_new_array_ext((int)ts->n);
    for (size_t i = 0; i < ts->n; i++) {
        if (defined(&ts->v[i].item))
            json_object_array_add(seq, swf_json_ref(ts->v[i].item.j));
    }
    return (val_t){seq, V_DEF | V_SEQ, NULL, NULL, NULL};
}

/* a^(<x, >y) outside a tuple stream: the sequence `in` sorted by its
 * terms, each evaluated with an item as the context, then the filters. */
static swf_error_t *eval_sort(ctx_t *ctx, const node_t *step, json_object *in, frame_t *env,
                              val_t *out)
{
    tuples_t ts = tuples_of(in);
    swf_error_t *err = tuples_sort(ctx, step, env, &ts);
    if (!err)
        err = tuples_stages(ctx, step, env, &ts);
    if (!err) {
        *out = tuples_items(&ts);
        err = charge_bytes(ctx, VALUE_BYTES + SLOT_BYTES * ts.n);
    }
    tuples_free(&ts);
    if (err)
        val_free(out);
    return err;
}

/* Steps first.. of path n over the tuple stream *ts, in place. */
static swf_error_t *tuples_run(ctx_t *ctx, const node_t *n, size_t first, tuples_t *ts,
                               frame_t *env)
{
    swf_error_t *err = NULL;
    for (size_t s = first; s < n->items.n && !err && ts->n > 0; s++) {
        const node_t *step = n->items.v[s];
        if (step->kind == N_SORT) {
            err = tuples_sort(ctx, step, env, ts);
            if (!err)
                err = tuples_stages(ctx, step, env, ts);
        } else {
            err = tuples_step(ctx, step, env, ts);
        }
    }
    return err;
}

/* Path n on input. Its group-by, if any, groups the result (the tuples of
 * a tuple stream). When tout is not NULL and the path becomes a tuple stream,
 * the tuples are the result instead (*tout, *streamed set; no group-by): a
 * % outside reaches into this path. */
static swf_error_t *eval_path(ctx_t *ctx, const node_t *n, const val_t *input, frame_t *env,
                              val_t *out, tuples_t *tout, bool *streamed)
{
    swf_error_t *err = NULL;
    bool grouped = false;
    val_t result = UNDEF;
    *out = UNDEF;
    val_t *res = NULL;
    size_t nres = 0;
    /* The input sequence: `input` itself (cur == NULL), or cur's items. */
    json_object *cur = NULL;
    if (defined(input) && is_array(input->j) && n->items.v[0]->kind != N_VAR)
        cur = swf_json_ref(input->j);

    for (size_t s = 0; s < n->items.n; s++) {
        const node_t *step = n->items.v[s];
        bool last = s + 1 == n->items.n;
        val_free(&result);
        if (tuple_step(step)) {
            tuples_t ts = {0};
            if (cur != NULL)
                ts = tuples_of(cur);
            else
                tuples_add(&ts, (tuple_t){val_copy(input), frame_new(NULL)});
            err = tuples_run(ctx, n, s, &ts, env);
            if (!err && tout != NULL) {
                *tout = ts;
                *streamed = true;
                goto done;
            }
            if (!err && n->group != NULL) {
                err = eval_group(ctx, n->group, env, &ts, &result);
                grouped = true;
            } else if (!err) {
                result = tuples_items(&ts);
            }
            tuples_free(&ts);
            if (err)
                goto done;
            break;
        }
        if (step->kind == N_SORT) {
            json_object *in = cur ? swf_json_ref(cur) : json_object_new_array();
            if (cur == NULL && defined(input))
                seq_add_flat(in, input->j);
            err = eval_sort(ctx, step, in, env, &result);
            json_object_put(in);
            if (err)
                goto done;
        } else if (s == 0 && step->kind == N_ARRAY) {
            /* [..].step maps over the constructed array */
            val_t r;
            if ((err = eval_step(ctx, step, input, env, &r)))
                goto done;
            json_object *seq = json_object_new_array();
            if (defined(&r))
                seq_add_flat(seq, r.j);
            val_free(&r);
            result = (val_t){seq, V_DEF | V_SEQ, NULL, NULL, NULL};
        } else {
            size_t nin = cur ? json_object_array_length(cur) : 1;
            if ((err = charge(ctx, nin)))
                goto done;
            res = calloc(nin ? nin : 1, sizeof *res);
            if (res == NULL)
                abort();
            nres = 0;
            for (size_t i = 0; i < nin; i++) {
                val_t item = cur ? val_ref(json_object_array_get_idx(cur, i)) : val_copy(input);
                val_t r;
                err = eval_step(ctx, step, &item, env, &r);
                val_free(&item);
                if (err)
                    goto done;
                if (defined(&r))
                    res[nres++] = r;
            }
            if (last && nres == 1 && is_array(res[0].j) && !(res[0].flags & V_SEQ)) {
                result = res[0];
                result.flags &= ~(unsigned)V_CONS;
                nres = 0;
            } else {
                json_object *seq = json_object_new_array();
                for (size_t i = 0; i < nres; i++) {
                    /* an array constructor written as the step is one item;
                     * any other array (a variable's, a block's) is flattened */
                    if (is_array(res[i].j) && !(step->kind == N_ARRAY && (res[i].flags & V_CONS)))
                        seq_add_flat(seq, res[i].j);
                    else
                        json_object_array_add(seq, swf_json_ref(res[i].j));
                }
                result = (val_t){seq, V_DEF | V_SEQ, NULL, NULL, NULL};
            }
            for (size_t i = 0; i < nres; i++)
                val_free(&res[i]);
            free(res);
            res = NULL;
            nres = 0;
        }
        if (!(result.flags & V_SEQ) || json_object_array_length(result.j) == 0)
            break;
        json_object_put(cur);
        cur = swf_json_ref(result.j);
    }
    if (n->keep_array && defined(&result) && !grouped) {
        if (result.flags & V_SEQ) {
            result.flags |= V_KEEP;
        } else if (!is_array(result.j)) {
            json_object *seq = json_object_new_array();
            json_object_array_add(seq, result.j);
            result = (val_t){seq, V_DEF | V_SEQ | V_KEEP, NULL, NULL, NULL};
        }
    }
    if (n->group != NULL && !grouped && (err = eval_group(ctx, n->group, env, NULL, &result)))
        goto done;
    *out = result;
    result = UNDEF;
done:
    for (size_t i = 0; i < nres; i++)
        val_free(&res[i]);
    free(res);
    json_object_put(cur);
    val_free(&result);
    return err;
}

/* A step a % outside reaches into (a block, the last expression of one, a
 * path in it): its value, or the tuples of the path inside, whose variables
 * (the labels of the steps the % refers to) join the outer stream. */
static swf_error_t *eval_into_tuples(ctx_t *ctx, const node_t *n, const val_t *item, frame_t *env,
                                     val_t *out, tuples_t *tout, bool *streamed)
{
    *out = UNDEF;
    *streamed = false;
    bool block = n->kind == N_BLOCK && n->items.n > 0 && n->group == NULL;
    bool path = n->kind == N_PATH && n->group == NULL;
    if (!n->tuple || !(block || path))
        return eval(ctx, n, item, env, out);
    swf_error_t *err = charge(ctx, 1);
    if (err)
        return err;
    if (ctx->depth >= SWF_LIMIT_JSONATA_EVAL_DEPTH)
        return qerr("the evaluation is nested more than %d deep", SWF_LIMIT_JSONATA_EVAL_DEPTH);
    ctx->depth++;
    if (block) {
        frame_t *f = frame_new(env);
        for (size_t i = 0; i + 1 < n->items.n && !err; i++) {
            val_free(out);
            err = eval(ctx, n->items.v[i], item, f, out);
        }
        val_free(out);
        if (!err)
            err = eval_into_tuples(ctx, n->items.v[n->items.n - 1], item, f, out, tout, streamed);
        frame_release(f);
    } else {
        err = eval_path(ctx, n, item, env, out, tout, streamed);
    }
    if (!err && (out->flags & V_SEQ)) {
        size_t len = json_object_array_length(out->j);
        if (!(err = charge(ctx, len)))
            err = charge_bytes(ctx, VALUE_BYTES + SLOT_BYTES * len);
    }
    /* its filters filter the tuples (a first step's: those of each item) */
    for (size_t i = 0; !err && i < n->preds.n; i++)
        err = *streamed ? tuples_filter(ctx, n->preds.v[i], env, tout)
                        : filter(ctx, n->preds.v[i], env, out);
    ctx->depth--;
    if (err) {
        val_free(out);
        tuples_free(tout);
        *streamed = false;
        return err;
    }
    collapse(out);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Constructors, blocks, variables, calls                                   */
/* ------------------------------------------------------------------------ */

static swf_error_t *range_bound(const val_t *v, const char *which, double *out)
{
    if (!is_number(v->j) || is_func(v))
        return qerr("the %s of a range must be an integer, not %s", which, type_name(v));
    *out = json_object_get_double(v->j);
    if (*out != floor(*out))
        return qerr("the %s of a range must be an integer, not %g", which, *out);
    return NULL;
}

static swf_error_t *eval_array(ctx_t *ctx, const node_t *n, const val_t *input, frame_t *env,
                               val_t *out)
{
    json_object *arr = json_object_new_array();
    swf_error_t *err = NULL;
    for (size_t i = 0; i < n->items.n && !err; i++) {
        const node_t *item = n->items.v[i];
        val_t v = UNDEF;
        if (item->kind == N_RANGE) {
            val_t lo = UNDEF, hi = UNDEF;
            double a, b;
            if (!(err = eval(ctx, item->a, input, env, &lo)) &&
                !(err = eval(ctx, item->b, input, env, &hi)) && defined(&lo) && defined(&hi) &&
                !(err = range_bound(&lo, "start", &a)) && !(err = range_bound(&hi, "end", &b)) &&
                a <= b) {
                if (b - a + 1 > SWF_LIMIT_JSONATA_RANGE_ITEMS)
                    err = qerr("the range [%.0f..%.0f] has more than %d items", a, b,
                               SWF_LIMIT_JSONATA_RANGE_ITEMS);
                else if (!(err = charge(ctx, (size_t)(b - a + 1))) &&
                         !(err =
                               charge_bytes(ctx, (size_t)(b - a + 1) * (VALUE_BYTES + SLOT_BYTES))))
                    for (double k = a; k <= b; k++)
                        json_object_array_add(arr, json_object_new_int64((int64_t)k));
            }
            val_free(&lo);
            val_free(&hi);
            continue;
        }
        if ((err = eval(ctx, item, input, env, &v)))
            break;
        if (is_func(&v))
            err = qerr("%s cannot be an array item", func_what(&v));
        else if (defined(&v) && item->kind != N_ARRAY)
            seq_add_flat(arr, v.j);
        else if (defined(&v))
            json_object_array_add(arr, swf_json_ref(v.j));
        val_free(&v);
    }
    if (err) {
        json_object_put(arr);
        return err;
    }
    *out = (val_t){arr, V_DEF | V_CONS, NULL, NULL, NULL};
    return charge_bytes(ctx, VALUE_BYTES + SLOT_BYTES * json_object_array_length(arr));
}

static const val_t *frame_lookup(frame_t *env, const char *name)
{
    for (frame_t *f = env; f; f = f->up) {
        for (size_t i = f->n; i-- > 0;) {
            if (strcmp(f->b[i].name, name) == 0)
                return &f->b[i].v;
        }
    }
    return NULL;
}

static val_t builtin_val(const builtin_t *bi)
{
    return (val_t){NULL, V_DEF | V_FUNC, NULL, bi, NULL};
}

static swf_error_t *eval_var(ctx_t *ctx, const node_t *n, const val_t *input, frame_t *env,
                             val_t *out)
{
    if (n->name[0] == '\0') {
        *out = val_copy(input);
        return NULL;
    }
    if (strcmp(n->name, "$") == 0) {
        *out = UNDEF; /* there is no input document: use $states.input */
        return NULL;
    }
    const val_t *bound = frame_lookup(env, n->name);
    if (bound != NULL) {
        *out = val_copy(bound);
        return NULL;
    }
    json_object *v;
    if (swf_json_get(ctx->bindings, n->name, &v)) {
        *out = val_ref(v);
        return NULL;
    }
    const builtin_t *bi = builtin_find(n->name);
    if (bi != NULL) {
        *out = builtin_val(bi);
        return NULL;
    }
    return qerr("the variable $%s is not defined", n->name);
}

/* Marks the frames of env as kept by a closure: they move to the arena. */
static swf_error_t *capture(ctx_t *ctx, frame_t *env)
{
    swf_error_t *err = NULL;
    for (frame_t *f = env; f && !f->captured; f = f->up) {
        f->captured = true;
        f->next_captured = ctx->captured;
        ctx->captured = f;
        if (!err)
            err = charge_bytes(ctx, VALUE_BYTES + (VALUE_BYTES + SLOT_BYTES) * f->n);
    }
    return err;
}

static closure_t *closure_new(ctx_t *ctx)
{
    closure_t *c = calloc(1, sizeof *c);
    if (c == NULL)
        abort();
    c->next = ctx->closures;
    ctx->closures = c;
    return c;
}

static swf_error_t *eval_lambda(ctx_t *ctx, const node_t *n, const val_t *input, frame_t *env,
                                val_t *out)
{
    closure_t *c = closure_new(ctx);
    if (n->kind == N_LAMBDA)
        c->lambda = n;
    else
        c->transform = n;
    c->env = env;
    c->input = val_copy(input);
    *out = (val_t){NULL, V_DEF | V_FUNC, NULL, NULL, c};
    swf_error_t *err = capture(ctx, env);
    return err ? err : charge_bytes(ctx, VALUE_BYTES);
}

/* The number of arguments a higher-order function passes to f: as many as
 * f declares, as jsonata-js does (a lambda's parameters; a built-in's, of
 * which $string declares one). */
static size_t func_arity(const val_t *f)
{
    if (f->bi != NULL)
        return strcmp(f->bi->name, "string") == 0 ? 1 : f->bi->max;
    if (f->cl != NULL && f->cl->lambda != NULL)
        return f->cl->lambda->items.n;
    if (f->cl != NULL && f->cl->args != NULL)
        return f->cl->holes;
    return 1; /* a regular expression, a transform, a composition */
}

/* A match of a pattern (a string or a regular expression) in a string. */
typedef struct {
    size_t start, end; /* bytes */
    size_t *caps;      /* a regular expression's: 2 * (groups + 1) byte offsets */
    size_t groups;
} found_t;

static swf_error_t *pattern_find(ctx_t *ctx, const val_t *pat, const char *s, size_t n, size_t off,
                                 found_t *f, bool *hit);

/* The match f of a regular expression in s as JSONata shows it: {match,
 * <where>: its position in UTF-16 code units (JavaScript's match.index),
 * groups: the captures, null for a group that took no part}. */
static json_object *match_object(const char *s, const found_t *f, bool start_end)
{
    json_object *m = json_object_new_object(), *groups = json_object_new_array();
    size_t a = f->start, b = f->end, at = utf16_length(s, a);
    json_object_object_add(m, "match", json_object_new_string_len(s + a, (int)(b - a)));
    if (start_end) {
        json_object_object_add(m, "start", json_object_new_int64((int64_t)at));
        json_object_object_add(m, "end",
                               json_object_new_int64((int64_t)(at + utf16_length(s + a, b - a))));
    } else {
        json_object_object_add(m, "index", json_object_new_int64((int64_t)at));
    }
    for (size_t k = 1; k <= f->groups; k++) {
        size_t ga = f->caps[2 * k], gb = f->caps[2 * k + 1];
        json_object_array_add(groups, ga == SWF_ASL_REGEX_UNSET || gb == SWF_ASL_REGEX_UNSET
                                          ? NULL
                                          : json_object_new_string_len(s + ga, (int)(gb - ga)));
    }
    json_object_object_add(m, "groups", groups);
    return m;
}

/* A regular expression called on a string: its first match, or undefined. */
static swf_error_t *regex_apply(ctx_t *ctx, const val_t *re, const val_t *arg, val_t *out)
{
    if (!defined(arg))
        return NULL;
    if (is_func(arg) || !is_string(arg->j))
        return qerr("a regular expression is called on a string, not %s", type_name(arg));
    const char *s = json_object_get_string(arg->j);
    size_t n = (size_t)json_object_get_string_len(arg->j);
    found_t f = {0};
    bool hit;
    swf_error_t *err = pattern_find(ctx, re, s, n, 0, &f, &hit);
    if (!err && hit) {
        *out = val_take(match_object(s, &f, true));
        err = charge_bytes(ctx, built_size(out->j));
    }
    free(f.caps);
    return err;
}

/* The number of values in j, to count what copying it builds. */
static size_t json_nodes(json_object *j, int depth)
{
    size_t n = 1;
    if (depth > SWF_LIMIT_JSON_DEPTH)
        return n;
    if (is_array(j)) {
        for (size_t i = 0; i < json_object_array_length(j); i++)
            n += json_nodes(json_object_array_get_idx(j, i), depth + 1);
    } else if (is_object(j)) {
        json_object_object_foreach(j, key, v)
        {
            (void)key;
            n += json_nodes(v, depth + 1);
        }
    }
    return n;
}

/* A copy of j that shares nothing with it (NULL is JSON null). */
static swf_error_t *json_copy(ctx_t *ctx, json_object *j, json_object **out)
{
    *out = NULL;
    swf_error_t *err = charge_bytes(ctx, (VALUE_BYTES + SLOT_BYTES) * json_nodes(j, 0));
    if (!err && j != NULL && json_object_deep_copy(j, out, NULL) != 0)
        err = qerr("the value cannot be copied");
    return err;
}

/* | location | update [, deletions] | applied to arg: a copy of arg in
 * which each object the location finds gets the update's fields, and loses
 * the fields the deletions name. The copy is the evaluator's own, so it can
 * change in place; the update's values are copied in, so that no value
 * contains itself. */
static swf_error_t *transform_apply(ctx_t *ctx, const closure_t *cl, const val_t *arg, val_t *out)
{
    const node_t *t = cl->transform;
    if (!defined(arg))
        return NULL;
    if (is_func(arg) || !(is_object(arg->j) || is_array(arg->j)))
        return qerr("a transform applies to an object or an array, not %s", type_name(arg));
    json_object *copy;
    swf_error_t *err = json_copy(ctx, arg->j, &copy);
    if (err)
        return err;
    val_t root = val_take(copy), found = UNDEF;
    if (!(err = eval(ctx, t->a, &root, cl->env, &found)) && is_func(&found))
        err = qerr("the location of a transform is %s", func_what(&found));
    items_t it = items_of(&found);
    for (size_t i = 0; i < it.n && !err; i++) {
        json_object *match = item_at(&it, i);
        val_t m = val_ref(match), update = UNDEF, del = UNDEF;
        err = eval(ctx, t->b, &m, cl->env, &update);
        if (!err && defined(&update) && (is_func(&update) || !is_object(update.j)))
            err = qerr("the update of a transform must be an object, not %s", type_name(&update));
        /* jsonata-js fails setting a field of a string, number, boolean or
         * null (an array takes it unseen) */
        if (!err && defined(&update) && json_object_object_length(update.j) > 0 &&
            !is_object(match) && !is_array(match))
            err = qerr("a transform cannot set fields of a %s", swf_json_type_name(match));
        if (!err && defined(&update) && is_object(match)) {
            json_object_object_foreach(update.j, key, v)
            {
                json_object *c;
                if ((err = json_copy(ctx, v, &c)))
                    break;
                json_object_object_add(match, key, c);
            }
        }
        if (!err && t->c != NULL && !(err = eval(ctx, t->c, &m, cl->env, &del)) && defined(&del)) {
            items_t names = is_func(&del) ? (items_t){NULL, NULL, 0} : items_of(&del);
            for (size_t k = 0; k < names.n && !err; k++) {
                if (!is_string(item_at(&names, k)))
                    err = qerr("the deletions of a transform must be strings, not %s",
                               swf_json_type_name(item_at(&names, k)));
            }
            if (is_func(&del))
                err = qerr("the deletions of a transform must be strings, not %s", func_what(&del));
            for (size_t k = 0; k < names.n && !err && is_object(match); k++)
                json_object_object_del(match, json_object_get_string(item_at(&names, k)));
        }
        val_free(&del);
        val_free(&update);
        val_free(&m);
    }
    val_free(&found);
    if (err) {
        val_free(&root);
        return err;
    }
    *out = root;
    return NULL;
}

/* Calls the function f with argv[0..argc) (borrowed). `input` is the
 * context value, which a built-in takes for a missing first argument. */
static swf_error_t *apply(ctx_t *ctx, const val_t *f, const val_t *argv, size_t argc,
                          const val_t *input, val_t *out)
{
    *out = UNDEF;
    if (!is_callable(f))
        return qerr("%s is not a function", type_name(f));
    if (ctx->calls >= SWF_LIMIT_JSONATA_CALL_DEPTH)
        return qerr("function calls are nested more than %d deep (a recursion that does not "
                    "end?)",
                    SWF_LIMIT_JSONATA_CALL_DEPTH);
    swf_error_t *err = NULL;
    ctx->calls++;
    if (is_regex(f)) {
        err = regex_apply(ctx, f, argc > 0 ? &argv[0] : &UNDEF, out);
    } else if (f->bi != NULL) {
        const builtin_t *bi = f->bi;
        val_t av[8];
        size_t ac = 0;
        if (bi->context_arg && argc < bi->min)
            av[ac++] = *input;
        for (size_t i = 0; i < argc && ac < 8; i++)
            av[ac++] = argv[i];
        if (argc > bi->max)
            err = qerr("takes at most %d argument%s, not %zu", bi->max, bi->max == 1 ? "" : "s",
                       argc);
        else if (ac < bi->min)
            err = qerr("takes at least %d argument%s, not %zu", bi->min, bi->min == 1 ? "" : "s",
                       argc);
        if (!err) {
            ctx->error_in_lambda = false;
            call_t call = {ctx, bi, av, ac};
            err = bi->impl(&call, out);
            if (!err && defined(out))
                err = charge_bytes(ctx, built_size(out->j));
        }
        /* $error and $assert say the user's message as it is */
        if (err && !ctx->error_in_lambda && strcmp(bi->name, "error") != 0 &&
            strcmp(bi->name, "assert") != 0)
            swf_error_prefix(err, "$%s", bi->name);
    } else if (f->cl->lambda != NULL) {
        const node_t *lambda = f->cl->lambda;
        frame_t *frame = frame_new(f->cl->env);
        for (size_t i = 0; i < lambda->items.n; i++)
            frame_set(frame, lambda->items.v[i]->name, i < argc ? &argv[i] : &UNDEF);
        /* not counted as built: freed on return unless a closure keeps it,
         * and capture() counts it then */
        err = eval(ctx, lambda->a, &f->cl->input, frame, out);
        frame_release(frame);
        if (err)
            ctx->error_in_lambda = true;
    } else if (f->cl->transform != NULL) {
        err = transform_apply(ctx, f->cl, argc > 0 ? &argv[0] : &UNDEF, out);
    } else if (f->cl->args != NULL) {
        /* a partial application: the arguments fill its holes in order */
        const closure_t *cl = f->cl;
        val_t *full = calloc(cl->nargs, sizeof *full);
        if (full == NULL)
            abort();
        for (size_t i = 0, k = 0; i < cl->nargs; i++)
            full[i] = !(cl->args[i].flags & V_HOLE) ? cl->args[i] : k < argc ? argv[k++] : UNDEF;
        err = apply(ctx, &cl->first, full, cl->nargs, input, out);
        free(full);
    } else {
        val_t mid;
        err = apply(ctx, &f->cl->first, argv, argc, input, &mid);
        if (!err)
            err = apply(ctx, &f->cl->then, &mid, 1, input, out);
        val_free(&mid);
    }
    ctx->calls--;
    if (err)
        val_free(out);
    return err;
}

static swf_error_t *eval_call(ctx_t *ctx, const node_t *n, const val_t *input, frame_t *env,
                              val_t *out)
{
    swf_error_t *err = NULL;
    val_t f = UNDEF;
    if (n->name != NULL) {
        const val_t *bound = frame_lookup(env, n->name);
        json_object *j;
        if (bound != NULL)
            f = val_copy(bound);
        else if (n->fn != NULL)
            f = builtin_val(n->fn);
        else if (swf_json_get(ctx->bindings, n->name, &j))
            f = val_ref(j);
        else
            return qerr("the function $%s is not defined", n->name);
        if (!is_callable(&f))
            err = qerr("$%s is not a function but %s", n->name, type_name(&f));
    } else if (!(err = eval(ctx, n->a, input, env, &f)) && !is_callable(&f)) {
        err = qerr("only functions can be called, not %s", type_name(&f));
    }
    size_t argc = n->items.n;
    val_t *argv = calloc(argc ? argc : 1, sizeof *argv);
    if (argv == NULL)
        abort();
    size_t holes = 0;
    for (size_t i = 0; i < argc && !err; i++) {
        if (n->items.v[i]->kind == N_HOLE) {
            argv[i].flags = V_HOLE;
            holes++;
        } else {
            err = eval(ctx, n->items.v[i], input, env, &argv[i]);
        }
    }
    if (!err && holes > 0) {
        /* $f(?, x): a function of the holes, keeping f and the arguments */
        closure_t *c = closure_new(ctx);
        c->first = val_copy(&f);
        c->args = argv;
        c->nargs = argc;
        c->holes = holes;
        argv = NULL;
        argc = 0;
        *out = (val_t){NULL, V_DEF | V_FUNC, NULL, NULL, c};
        err = charge_bytes(ctx, VALUE_BYTES + SLOT_BYTES * c->nargs);
    } else if (!err) {
        err = apply(ctx, &f, argv, argc, input, out);
    }
    for (size_t i = 0; i < argc; i++)
        val_free(&argv[i]);
    free(argv);
    val_free(&f);
    return err;
}

/* a ~> f: f(a); when a is a function too, the function f(a(x)). */
static swf_error_t *eval_chain(ctx_t *ctx, const node_t *n, const val_t *input, frame_t *env,
                               val_t *out)
{
    val_t l = UNDEF, r = UNDEF;
    swf_error_t *err = eval(ctx, n->a, input, env, &l);
    if (!err)
        err = eval(ctx, n->b, input, env, &r);
    if (!err && !is_callable(&r))
        err = qerr("the right side of ~> must be a function, not %s", type_name(&r));
    if (!err && is_callable(&l)) {
        closure_t *c = closure_new(ctx);
        c->first = val_copy(&l);
        c->then = val_copy(&r);
        *out = (val_t){NULL, V_DEF | V_FUNC, NULL, NULL, c};
    } else if (!err) {
        err = apply(ctx, &r, &l, 1, input, out);
    }
    val_free(&l);
    val_free(&r);
    return err;
}

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

/* Whether `s` is a JavaScript array index ("0", "17": canonical digits below
 * 2^32 - 1). Such keys come first in an object, ascending, then the others
 * in the order made: jsonata-js builds the grouped object, and evaluates its
 * values, in that order. */
static bool js_array_index(const char *s, uint32_t *out)
{
    size_t n = strlen(s);
    if (n == 0 || n > 10 || (n > 1 && s[0] == '0'))
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (v >= 4294967295u)
        return false;
    *out = (uint32_t)v;
    return true;
}

static int group_js_order(const void *pa, const void *pb)
{
    const group_t *a = pa, *b = pb;
    if (a->is_index != b->is_index)
        return a->is_index ? -1 : 1;
    if (a->is_index && a->array_index != b->array_index)
        return a->array_index < b->array_index ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* The values of one variable (or the items) of a group's members as JSONata
 * appends them: one defined value is itself; more make an array of them,
 * arrays flattened (as $append). The array is a sequence (V_SEQ) when
 * `seq`. */
static val_t group_reduce(const val_t *const *vals, size_t n, bool seq)
{
    size_t count = 0, last = 0;
    for (size_t i = 0; i < n; i++) {
        if (defined(vals[i])) {
            count++;
            last = i;
        }
    }
    if (count == 0)
        return UNDEF;
    if (count == 1)
        return val_copy(vals[last]);
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        if (defined(vals[i]))
            seq_add_flat(arr, vals[i]->j);
    }
    return (val_t){arr, V_DEF | (seq ? V_SEQ : 0), NULL, NULL, NULL};
}

/* The context and variables of a group of tuples: each variable's values
 * across the members reduced (group_reduce) into a frame over env. A member
 * alone gives its item away: jsonata-js deletes it from the tuple, so a later
 * group holding that tuple no longer sees it (`gone`). */
static swf_error_t *group_tuples_env(ctx_t *ctx, const tuples_t *ts, const group_t *g, bool *gone,
                                     frame_t *env, val_t *context, frame_t **f)
{
    *f = frame_new(env);
    const val_t **vals = calloc(g->n, sizeof *vals);
    if (vals == NULL)
        abort();
    for (size_t m = 0; m < g->n; m++)
        vals[m] = gone[g->members[m]] ? &UNDEF : &ts->v[g->members[m]].item;
    *context = group_reduce(vals, g->n, true);
    if (g->n == 1)
        gone[g->members[0]] = true;
    /* the variables' names: the tuples of a stream bind the same, in the
     * same order (names borrowed from the tree: equal pointers), but for a
     * block a % reached into */
    names_t names = {0};
    const frame_t *first = ts->v[g->members[0]].vars;
    bool *aligned = calloc(g->n, sizeof *aligned);
    if (aligned == NULL)
        abort();
    size_t work = g->n;
    names.v = malloc((first->n + 1) * sizeof *names.v);
    if (names.v == NULL)
        abort();
    for (size_t b = 0; b < first->n; b++) /* distinct: a frame binds a name once */
        names.v[names.n++] = first->b[b].name;
    names.cap = first->n + 1;
    for (size_t m = 0; m < g->n; m++) {
        const frame_t *vars = ts->v[g->members[m]].vars;
        aligned[m] = vars->n == first->n;
        for (size_t b = 0; b < vars->n && aligned[m]; b++)
            aligned[m] = vars->b[b].name == first->b[b].name;
        for (size_t b = 0; b < vars->n && !aligned[m]; b++)
            names_add(&names, vars->b[b].name);
        work += aligned[m] ? first->n : vars->n * (names.n + 1);
    }
    swf_error_t *err = charge(ctx, work);
    size_t built = g->n > 1 ? SLOT_BYTES * g->n : 0;
    for (size_t k = 0; k < names.n && !err; k++) {
        for (size_t m = 0; m < g->n; m++) {
            const frame_t *vars = ts->v[g->members[m]].vars;
            const val_t *x = aligned[m] && k < first->n ? &vars->b[k].v
                             : aligned[m]               ? NULL
                                                        : frame_lookup((frame_t *)vars, names.v[k]);
            vals[m] = x != NULL ? x : &UNDEF;
        }
        val_t r = group_reduce(vals, g->n, false);
        if ((*f)->n == (*f)->cap) { /* names distinct: no frame_set search */
            (*f)->cap = (*f)->cap ? 2 * (*f)->cap : names.n;
            (*f)->b = realloc((*f)->b, (*f)->cap * sizeof *(*f)->b);
            if ((*f)->b == NULL)
                abort();
        }
        (*f)->b[(*f)->n++] = (binding_t){names.v[k], r};
        built += g->n > 1 ? VALUE_BYTES + SLOT_BYTES * g->n : 0;
    }
    free(aligned);
    free(names.v);
    free(vals);
    return err ? err : charge_bytes(ctx, built);
}

/* v{k: e, ...}: the items of v (or, after @, # or % bindings, the tuples
 * ts with their variables) grouped by the key each k gives them, and each
 * group's value e evaluated with the group's items (one item alone, else the
 * sequence of them) as the context, and for tuples the group's variables
 * (each the values of its members, appended). Two key expressions giving
 * the same key is an error, as in JSONata. The object replaces *v. */
static swf_error_t *eval_group(ctx_t *ctx, const node_t *pairs, frame_t *env, const tuples_t *ts,
                               val_t *v)
{
    if (ts == NULL && is_func(v))
        return qerr("%s cannot be grouped", func_what(v));
    if (ts != NULL && ts->n == 0) /* jsonata-js fails too, reading a tuple that is not there */
        return qerr("a group-by after @, # or %% bindings has no items to group");
    items_t it = ts ? (items_t){NULL, NULL, 0} : items_of(v);
    size_t nitems = ts ? ts->n : it.n ? it.n : 1; /* no items: the keys see one undefined */
    json_object *index = json_object_new_object(), *obj = json_object_new_object();
    group_t *groups = NULL;
    bool *gone = calloc(nitems, sizeof *gone);
    if (gone == NULL)
        abort();
    size_t ngroups = 0, cap = 0;
    swf_error_t *err = charge(ctx, nitems);
    for (size_t i = 0; i < nitems && !err; i++) {
        if (ts && (err = tuple_charge(ctx, &ts->v[i])))
            break;
        val_t item = ts ? val_copy(&ts->v[i].item) : it.n ? val_ref(item_at(&it, i)) : UNDEF;
        frame_t *f = ts ? tuple_env(env, &ts->v[i]) : env;
        for (size_t k = 0; k + 1 < pairs->items.n && !err; k += 2) {
            val_t key = UNDEF;
            if ((err = eval(ctx, pairs->items.v[k], &item, f, &key)))
                break;
            if (defined(&key) && (is_func(&key) || !is_string(key.j))) {
                err = qerr("a group-by key must be a string, not %s", type_name(&key));
            } else if (defined(&key)) {
                const char *name = json_object_get_string(key.j);
                json_object *at;
                group_t *g;
                if (json_object_object_get_ex(index, name, &at)) {
                    g = &groups[json_object_get_int64(at)];
                    if (g->pair != k / 2)
                        err = qerr("the key \"%s\" comes twice, from two key expressions", name);
                } else {
                    if (ngroups == cap) {
                        cap = cap ? 2 * cap : 8;
                        groups = realloc(groups, cap * sizeof *groups);
                        if (groups == NULL)
                            abort();
                    }
                    g = &groups[ngroups];
                    *g = (group_t){.pair = k / 2, .order = ngroups};
                    json_object_object_add(index, name, json_object_new_int64((int64_t)ngroups));
                    ngroups++;
                }
                if (!err && g->n == g->cap) {
                    g->cap = g->cap ? 2 * g->cap : 4;
                    g->members = realloc(g->members, g->cap * sizeof *g->members);
                    if (g->members == NULL)
                        abort();
                }
                if (!err) {
                    g->members[g->n++] = i;
                    err = charge_bytes(ctx, VALUE_BYTES + SLOT_BYTES);
                }
            }
            val_free(&key);
        }
        if (ts)
            frame_release(f);
        val_free(&item);
    }
    json_object_object_foreach(index, name, at)
    {
        group_t *g = &groups[json_object_get_int64(at)];
        g->key = name;
        g->is_index = js_array_index(name, &g->array_index);
    }
    if (ngroups > 1)
        qsort(groups, ngroups, sizeof *groups, group_js_order);
    for (size_t gi = 0; gi < ngroups && !err; gi++) {
        group_t *g = &groups[gi];
        val_t context = UNDEF;
        frame_t *f = env;
        if (ts) {
            err = group_tuples_env(ctx, ts, g, gone, env, &context, &f);
        } else {
            const val_t **vals = calloc(g->n, sizeof *vals);
            val_t *items = calloc(g->n, sizeof *items);
            if (vals == NULL || items == NULL)
                abort();
            for (size_t m = 0; m < g->n; m++) {
                items[m] = it.n ? val_ref(item_at(&it, g->members[m])) : UNDEF;
                vals[m] = &items[m];
            }
            context = group_reduce(vals, g->n, true);
            for (size_t m = 0; m < g->n; m++)
                val_free(&items[m]);
            free(items);
            free(vals);
            if (context.flags & V_SEQ)
                err = charge_bytes(ctx, SLOT_BYTES * g->n);
        }
        val_t value = UNDEF;
        if (!err)
            err = eval(ctx, pairs->items.v[2 * g->pair + 1], &context, f, &value);
        if (!err && is_func(&value))
            err = qerr("%s cannot be the value of \"%s\"", func_what(&value), g->key);
        else if (!err && defined(&value))
            json_object_object_add(obj, g->key, swf_json_ref(value.j));
        val_free(&value);
        val_free(&context);
        if (f != env)
            frame_release(f);
    }
    for (size_t i = 0; i < ngroups; i++)
        free(groups[i].members);
    free(groups);
    free(gone);
    json_object_put(index);
    if (err) {
        json_object_put(obj);
        return err;
    }
    val_free(v);
    *v = val_take(obj);
    return charge_bytes(ctx, built_size(obj));
}

static swf_error_t *eval(ctx_t *ctx, const node_t *n, const val_t *input, frame_t *env, val_t *out)
{
    *out = UNDEF;
    swf_error_t *err = charge(ctx, 1);
    if (err)
        return err;
    if (ctx->depth >= SWF_LIMIT_JSONATA_EVAL_DEPTH)
        return qerr("the evaluation is nested more than %d deep (a recursion that does not "
                    "end?)",
                    SWF_LIMIT_JSONATA_EVAL_DEPTH);
    ctx->depth++;
    switch (n->kind) {
    case N_VALUE:
        *out = val_ref(n->value);
        break;
    case N_REGEX:
        *out = (val_t){NULL, V_DEF | V_REGEX, n, NULL, NULL};
        break;
    case N_NAME:
        if (defined(input) && !is_func(input))
            err = lookup(ctx, input->j, n->name, out, 0);
        break;
    case N_WILDCARD: /* the values of the fields (or items), arrays flattened */
        if (defined(input) && (is_object(input->j) || is_array(input->j))) {
            json_object *seq = json_object_new_array();
            if (is_object(input->j)) {
                json_object_object_foreach(input->j, key, v)
                {
                    (void)key;
                    seq_add_deep(seq, v, 0);
                }
            } else {
                seq_add_deep(seq, input->j, 0);
            }
            *out = (val_t){seq, V_DEF | V_SEQ, NULL, NULL, NULL};
        }
        break;
    case N_DESCEND:
        if (defined(input) && !is_func(input)) {
            json_object *seq = json_object_new_array();
            err = descendants(ctx, input->j, seq, 0);
            *out = (val_t){seq, V_DEF | V_SEQ, NULL, NULL, NULL};
        }
        break;
    case N_VAR:
        err = eval_var(ctx, n, input, env, out);
        break;
    case N_PATH:
        err = eval_path(ctx, n, input, env, out, NULL, NULL);
        break;
    case N_NEG: {
        val_t a;
        if ((err = eval(ctx, n->a, input, env, &a)))
            break;
        if (defined(&a) && (is_func(&a) || !is_number(a.j))) {
            err = qerr("'-' negates a number, not %s", type_name(&a));
        } else if (defined(&a)) {
            json_object *j;
            if (!(err = number_new(-json_object_get_double(a.j), &j))) {
                *out = val_take(j);
                err = charge_bytes(ctx, VALUE_BYTES);
            }
        }
        val_free(&a);
        break;
    }
    case N_BINARY:
        if (n->op == OP_CHAIN)
            err = eval_chain(ctx, n, input, env, out);
        else
            err = eval_binary(ctx, n, input, env, out);
        break;
    case N_ARRAY:
        err = eval_array(ctx, n, input, env, out);
        break;
    case N_RANGE:
        err = qerr("a range (..) is only allowed inside [ ]");
        break;
    case N_OBJECT: /* as jsonata-js: grouping the items of the context */
        *out = val_copy(input);
        err = eval_group(ctx, n, env, NULL, out);
        break;
    case N_BLOCK: {
        frame_t *f = frame_new(env);
        for (size_t i = 0; i < n->items.n && !err; i++) {
            val_free(out);
            err = eval(ctx, n->items.v[i], input, f, out);
        }
        frame_release(f);
        break;
    }
    case N_BIND:
        if (!(err = eval(ctx, n->a, input, env, out)))
            frame_set(env, n->name, out);
        break;
    case N_COND: {
        val_t c;
        if ((err = eval(ctx, n->a, input, env, &c)))
            break;
        if (boolean_of(&c) == 1)
            err = eval(ctx, n->b, input, env, out);
        else if (n->c)
            err = eval(ctx, n->c, input, env, out);
        val_free(&c);
        break;
    }
    case N_CALL:
        err = eval_call(ctx, n, input, env, out);
        break;
    case N_LAMBDA:
    case N_TRANSFORM:
        err = eval_lambda(ctx, n, input, env, out);
        break;
    case N_SORT:
        err = qerr("an order-by (^) must follow a path step"); /* paths evaluate it */
        break;
    case N_HOLE:
        err = qerr("? is only an argument of a call"); /* calls see it */
        break;
    case N_PARENT: { /* bound by the step it refers to, in the tuple stream */
        const val_t *bound = n->name ? frame_lookup(env, n->name) : NULL;
        if (bound != NULL)
            *out = val_copy(bound);
        break;
    }
    }
    for (size_t i = 0; !err && i < n->preds.n; i++)
        err = filter(ctx, n->preds.v[i], env, out);
    if (!err && n->group != NULL && n->kind != N_PATH) /* a path groups its tuples itself */
        err = eval_group(ctx, n->group, env, NULL, out);
    if (!err && (out->flags & V_SEQ)) {
        /* paths, wildcards and lookups over arrays: one unit per item */
        size_t len = json_object_array_length(out->j);
        if (!(err = charge(ctx, len)))
            err = charge_bytes(ctx, VALUE_BYTES + SLOT_BYTES * len);
    }
    ctx->depth--;
    if (err) {
        val_free(out);
        return err;
    }
    collapse(out);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Built-in functions                                                       */
/* ------------------------------------------------------------------------ */

static const val_t *arg(const call_t *c, size_t i)
{
    return i < c->argc ? &c->argv[i] : &UNDEF;
}
static bool has_arg(const call_t *c, size_t i)
{
    return defined(arg(c, i));
}

static swf_error_t *want_string(const call_t *c, size_t i, const char **s, size_t *n)
{
    const val_t *v = arg(c, i);
    if (!defined(v) || is_func(v) || !is_string(v->j))
        return qerr("argument %zu must be a string, not %s", i + 1, type_name(v));
    *s = json_object_get_string(v->j);
    *n = (size_t)json_object_get_string_len(v->j);
    return NULL;
}

static swf_error_t *want_number(const call_t *c, size_t i, double *d)
{
    const val_t *v = arg(c, i);
    if (!defined(v) || is_func(v) || !is_number(v->j))
        return qerr("argument %zu must be a number, not %s", i + 1, type_name(v));
    *d = json_object_get_double(v->j);
    return NULL;
}

static swf_error_t *want_integer(const call_t *c, size_t i, double *d)
{
    swf_error_t *err = want_number(c, i, d);
    if (!err && *d != floor(*d))
        err = qerr("argument %zu must be an integer, not %g", i + 1, *d);
    return err;
}

static swf_error_t *number_val(double d, val_t *out)
{
    json_object *j;
    swf_error_t *err = number_new(d, &j);
    if (!err)
        *out = val_take(j);
    return err;
}

static val_t bool_val(bool b)
{
    return val_take(json_object_new_boolean(b));
}

/* The items of argument i, which must all be numbers (an array of numbers or
 * one number). */
static swf_error_t *want_numbers(const call_t *c, size_t i, items_t *it)
{
    const val_t *v = arg(c, i);
    if (is_func(v))
        return qerr("argument %zu must be an array of numbers", i + 1);
    *it = items_of(v);
    for (size_t k = 0; k < it->n; k++) {
        if (!is_number(item_at(it, k)))
            return qerr("argument %zu must be an array of numbers, but item %zu is %s", i + 1, k,
                        swf_json_type_name(item_at(it, k)));
    }
    return charge(c->ctx, it->n);
}

/* The generator $random, $uuid and $shuffle draw from: the decision's
 * (env.h), so that a replay draws the same, or a fixed seed. */
static swf_asl_rng_t *ctx_rng(ctx_t *ctx)
{
    return ctx->env != NULL && ctx->env->rng != NULL ? ctx->env->rng : &ctx->fallback;
}

/* The time of the decision being made, or an error where there is none. */
static swf_error_t *decision_now(const call_t *c, int64_t *ms)
{
    *ms = c->ctx->env != NULL ? c->ctx->env->now_ms : 0;
    if (*ms == 0)
        return qerr("has no time here: it gives the time of the decision being made, and this "
                    "evaluation is not part of one");
    return NULL;
}

/* $millis(): the decision's time in milliseconds since the epoch. Within an
 * execution it is the time of the decision that evaluates the expression,
 * recorded in the history, so a replay gives the same value (JSONata: every
 * call within one evaluation gives the same value). */
static swf_error_t *fn_millis(call_t *c, val_t *out)
{
    int64_t ms;
    swf_error_t *err = decision_now(c, &ms);
    return err ? err : number_val((double)ms, out);
}

static swf_error_t *fn_from_millis(call_t *c, val_t *out);

/* $now([picture[, timezone]]): that time as $fromMillis writes it. */
static swf_error_t *fn_now(call_t *c, val_t *out)
{
    int64_t ms;
    swf_error_t *err = decision_now(c, &ms);
    if (err)
        return err;
    val_t argv[3] = {UNDEF, UNDEF, UNDEF};
    number_val((double)ms, &argv[0]);
    for (size_t i = 0; i < c->argc && i < 2; i++)
        argv[i + 1] = val_copy(&c->argv[i]);
    call_t sub = {c->ctx, c->fn, argv, c->argc + 1};
    err = fn_from_millis(&sub, out);
    for (size_t i = 0; i < 3; i++)
        val_free(&argv[i]);
    return err;
}

/* $random([seed]) (Step Functions): a number from 0 up to 1 drawn from the
 * decision's generator; with an integer seed, a pure function of it. */
static swf_error_t *fn_random(call_t *c, val_t *out)
{
    swf_asl_rng_t seeded, *rng = ctx_rng(c->ctx);
    if (has_arg(c, 0)) {
        double seed;
        swf_error_t *err = want_number(c, 0, &seed);
        if (err)
            return err;
        if (seed != floor(seed) || fabs(seed) > 9007199254740992.0)
            return qerr("argument 1 (seed) must be an integer");
        seeded.state = (uint64_t)(int64_t)seed;
        rng = &seeded;
    }
    return number_val(swf_asl_rng_unit(rng), out);
}

/* $uuid() (Step Functions): a version 4 UUID from the decision's generator,
 * as States.UUID gives. */
static swf_error_t *fn_uuid(call_t *c, val_t *out)
{
    char text[37];
    swf_asl_rng_uuid(ctx_rng(c->ctx), text);
    *out = string_val(text, 36);
    return NULL;
}

static swf_error_t *fn_string(call_t *c, val_t *out)
{
    const val_t *v = arg(c, 0);
    if (!defined(v))
        return NULL;
    int indent = 0;
    if (c->argc > 1 && defined(arg(c, 1))) {
        if (!json_object_is_type(arg(c, 1)->j, json_type_boolean))
            return qerr("argument 2 (prettify) must be a boolean");
        indent = json_object_get_boolean(arg(c, 1)->j) ? 2 : 0;
    }
    if (!is_func(v) && is_string(v->j)) {
        *out = val_copy(v);
        return NULL;
    }
    buf_t b = {0};
    swf_error_t *err = to_string(v, indent, &b);
    if (!err)
        *out = string_val(buf_cstr(&b), b.n);
    free(b.s);
    return err;
}

/* JSON number syntax, as $number accepts it, plus 0x, 0o and 0b integers. */
static bool parse_number_text(const char *s, double *out)
{
    const char *p = s;
    if ((s[0] == '0') &&
        (s[1] == 'x' || s[1] == 'X' || s[1] == 'o' || s[1] == 'O' || s[1] == 'b' || s[1] == 'B') &&
        s[2]) {
        int base = (s[1] | 0x20) == 'x' ? 16 : (s[1] | 0x20) == 'o' ? 8 : 2;
        char *end;
        unsigned long long v = strtoull(s + 2, &end, base);
        if (*end != '\0' || !isalnum((unsigned char)s[2]))
            return false;
        *out = (double)v;
        return true;
    }
    if (*p == '-')
        p++;
    if (!isdigit((unsigned char)*p))
        return false;
    if (*p == '0' && isdigit((unsigned char)p[1]))
        return false;
    while (isdigit((unsigned char)*p))
        p++;
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p))
            return false;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!isdigit((unsigned char)*p))
            return false;
        while (isdigit((unsigned char)*p))
            p++;
    }
    if (*p != '\0')
        return false;
    *out = strtod(s, NULL);
    return isfinite(*out);
}

static swf_error_t *fn_number(call_t *c, val_t *out)
{
    const val_t *v = arg(c, 0);
    if (!defined(v))
        return NULL;
    if (!is_func(v) && is_number(v->j)) {
        *out = val_copy(v);
        return NULL;
    }
    if (!is_func(v) && json_object_is_type(v->j, json_type_boolean))
        return number_val(json_object_get_boolean(v->j) ? 1 : 0, out);
    double d;
    if (!is_func(v) && is_string(v->j) && parse_number_text(json_object_get_string(v->j), &d))
        return number_val(d, out);
    if (!is_func(v) && is_string(v->j))
        return qerr("cannot convert the string \"%.60s\" to a number",
                    json_object_get_string(v->j));
    return qerr("cannot convert %s to a number", type_name(v));
}

/* $boolean and $not take any function as false, unlike conditions. */
static int boolean_arg(const call_t *c)
{
    return is_func(arg(c, 0)) ? 0 : boolean_of(arg(c, 0));
}

static swf_error_t *fn_boolean(call_t *c, val_t *out)
{
    int b = boolean_arg(c);
    if (b >= 0)
        *out = bool_val(b);
    return NULL;
}

static swf_error_t *fn_not(call_t *c, val_t *out)
{
    int b = boolean_arg(c);
    if (b >= 0)
        *out = bool_val(!b);
    return NULL;
}

static swf_error_t *fn_exists(call_t *c, val_t *out)
{
    *out = bool_val(has_arg(c, 0));
    return NULL;
}

static swf_error_t *fn_count(call_t *c, val_t *out)
{
    items_t it = items_of(arg(c, 0));
    return number_val((double)it.n, out);
}

static swf_error_t *fn_sum(call_t *c, val_t *out)
{
    items_t it;
    swf_error_t *err = want_numbers(c, 0, &it);
    if (err || !has_arg(c, 0))
        return err;
    double s = 0;
    for (size_t k = 0; k < it.n; k++)
        s += json_object_get_double(item_at(&it, k));
    return number_val(s, out);
}

static swf_error_t *minmax(call_t *c, val_t *out, bool max)
{
    items_t it;
    swf_error_t *err = want_numbers(c, 0, &it);
    if (err || it.n == 0)
        return err;
    double m = json_object_get_double(item_at(&it, 0));
    for (size_t k = 1; k < it.n; k++) {
        double d = json_object_get_double(item_at(&it, k));
        if (max ? d > m : d < m)
            m = d;
    }
    return number_val(m, out);
}

static swf_error_t *fn_max(call_t *c, val_t *out)
{
    return minmax(c, out, true);
}
static swf_error_t *fn_min(call_t *c, val_t *out)
{
    return minmax(c, out, false);
}

static swf_error_t *fn_average(call_t *c, val_t *out)
{
    items_t it;
    swf_error_t *err = want_numbers(c, 0, &it);
    if (err || it.n == 0)
        return err;
    double s = 0;
    for (size_t k = 0; k < it.n; k++)
        s += json_object_get_double(item_at(&it, k));
    return number_val(s / (double)it.n, out);
}

static swf_error_t *fn_length(call_t *c, val_t *out)
{
    const char *s;
    size_t n;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_string(c, 0, &s, &n);
    return err ? err : number_val((double)utf8_length(s, n), out);
}

static swf_error_t *fn_substring(call_t *c, val_t *out)
{
    const char *s;
    size_t n, count;
    double start, length = 0;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_string(c, 0, &s, &n);
    if (!err)
        err = want_number(c, 1, &start);
    if (!err && has_arg(c, 2))
        err = want_number(c, 2, &length);
    if (err)
        return err;
    size_t *starts = utf8_starts(s, n, &count);
    double len = (double)count;
    start = trunc(start);
    if (len + start < 0)
        start = 0;
    double end = len;
    if (has_arg(c, 2)) {
        length = trunc(length);
        end = length <= 0 ? (start >= 0 ? start : len + start)
                          : (start >= 0 ? start + length : len + start + length);
    }
    double from = start < 0 ? len + start : start;
    if (from > len)
        from = len;
    if (end > len)
        end = len;
    if (end < from)
        end = from;
    *out = string_val(s + starts[(size_t)from], starts[(size_t)end] - starts[(size_t)from]);
    free(starts);
    return NULL;
}

static const char *find_bytes(const char *h, size_t hn, const char *needle, size_t nn)
{
    if (nn == 0)
        return h;
    if (nn > hn)
        return NULL;
    for (size_t i = 0; i + nn <= hn; i++) {
        if (h[i] == needle[0] && memcmp(h + i, needle, nn) == 0)
            return h + i;
    }
    return NULL;
}

static swf_error_t *substring_around(call_t *c, val_t *out, bool before)
{
    const char *s, *sep;
    size_t n, sn;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_string(c, 0, &s, &n);
    if (!err)
        err = want_string(c, 1, &sep, &sn);
    if (err)
        return err;
    const char *at = find_bytes(s, n, sep, sn);
    if (at == NULL)
        *out = val_copy(arg(c, 0));
    else if (before)
        *out = string_val(s, (size_t)(at - s));
    else
        *out = string_val(at + sn, n - (size_t)(at - s) - sn);
    return NULL;
}

static swf_error_t *fn_substring_before(call_t *c, val_t *out)
{
    return substring_around(c, out, true);
}

static swf_error_t *fn_substring_after(call_t *c, val_t *out)
{
    return substring_around(c, out, false);
}

/* Decodes the UTF-8 code point at s[*i] (n bytes in all) and moves *i past
 * it; a byte that starts no valid sequence is returned as it is. */
static unsigned long utf8_next(const char *s, size_t n, size_t *i)
{
    unsigned char b = (unsigned char)s[*i];
    size_t len = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
    if (len == 1 || *i + len > n) {
        (*i)++;
        return b;
    }
    unsigned long cp = b & (0x7F >> len);
    for (size_t k = 1; k < len; k++) {
        unsigned char cb = (unsigned char)s[*i + k];
        if ((cb & 0xC0) != 0x80) {
            (*i)++;
            return b;
        }
        cp = (cp << 6) | (cb & 0x3F);
    }
    *i += len;
    return cp;
}

/* Case mapping as JavaScript's toUpperCase and toLowerCase do it: each code
 * point's simple mapping (the C library's, in C.UTF-8), plus the special
 * cases users meet (ß is SS, İ is i with a dot above, Σ ending a word is
 * ς). Without C.UTF-8,
 * ASCII only. */
static swf_error_t *change_case(call_t *c, val_t *out, bool upper)
{
    const char *s;
    size_t n;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_string(c, 0, &s, &n);
    if (err)
        return err;
    locale_t l = swf_asl_utf8_locale();
    buf_t b = {0};
    unsigned long cp = 0, prev;
    for (size_t i = 0; i < n;) {
        size_t at = i;
        prev = cp;
        cp = utf8_next(s, n, &i);
        if (cp >= 0x80 && i == at + 1) { /* not UTF-8: kept */
            buf_ch(&b, s[at]);
        } else if (cp < 0x80) {
            buf_ch(&b, (char)(upper ? toupper((int)cp) : tolower((int)cp)));
        } else if (upper && cp == 0xDF) {
            buf_str(&b, "SS");
        } else if (!upper && cp == 0x130) {
            buf_str(&b, "i\xCC\x87");
        } else if (!upper && cp == 0x3A3 && l != (locale_t)0 && at > 0 &&
                   iswalpha_l((wint_t)prev, l) &&
                   (i >= n || !iswalpha_l((wint_t)utf8_next(s, n, &(size_t){i}), l))) {
            buf_str(&b, "\xCF\x82"); /* a word's last sigma is final */
        } else if (l != (locale_t)0) {
            buf_cp(&b,
                   (unsigned long)(upper ? towupper_l((wint_t)cp, l) : towlower_l((wint_t)cp, l)));
        } else {
            buf_cp(&b, cp);
        }
    }
    if (b.over)
        err = qerr("the result is longer than %u bytes", SWF_LIMIT_PAYLOAD_BYTES);
    else
        *out = string_val(buf_cstr(&b), b.n);
    free(b.s);
    return err;
}

static swf_error_t *fn_uppercase(call_t *c, val_t *out)
{
    return change_case(c, out, true);
}
static swf_error_t *fn_lowercase(call_t *c, val_t *out)
{
    return change_case(c, out, false);
}

static swf_error_t *fn_trim(call_t *c, val_t *out)
{
    const char *s;
    size_t n;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_string(c, 0, &s, &n);
    if (err)
        return err;
    buf_t b = {0};
    bool space = false;
    for (size_t i = 0; i < n; i++) {
        if (strchr(" \t\n\r", s[i]) && s[i]) {
            space = true;
            continue;
        }
        if (space && b.n)
            buf_ch(&b, ' ');
        space = false;
        buf_ch(&b, s[i]);
    }
    *out = string_val(buf_cstr(&b), b.n);
    free(b.s);
    return NULL;
}

/* Finds the first match of a pattern (string or regex) in s[off..n):
 * *hit, and the match in *f (whose caps it allocates; the caller frees
 * them). A regular expression's work counts against the evaluation's
 * steps. */
static swf_error_t *pattern_find(ctx_t *ctx, const val_t *pat, const char *s, size_t n, size_t off,
                                 found_t *f, bool *hit)
{
    *hit = false;
    if (off > n)
        return NULL;
    if (is_regex(pat)) {
        const swf_asl_regex_t *re = pat->re->re;
        if (f->caps == NULL) {
            f->groups = swf_asl_regex_groups(re);
            f->caps = malloc(2 * (f->groups + 1) * sizeof *f->caps);
            if (f->caps == NULL)
                abort();
        }
        size_t budget =
            ctx->steps < SWF_LIMIT_JSONATA_STEPS ? SWF_LIMIT_JSONATA_STEPS - ctx->steps : 0;
        size_t before = budget;
        int r = swf_asl_regex_search(re, s, n, off, f->caps, &budget);
        ctx->steps += before - budget;
        if (r == SWF_ASL_REGEX_TOO_LONG)
            return qerr("the expression does too much work (more than %d steps): the regular "
                        "expression backtracks too much",
                        SWF_LIMIT_JSONATA_STEPS);
        if (r == SWF_ASL_REGEX_TOO_DEEP)
            return qerr("the regular expression backtracks too deeply (more than %u choices held)",
                        SWF_LIMIT_REGEX_BACKTRACK);
        if (r == SWF_ASL_REGEX_MATCH) {
            f->start = f->caps[0];
            f->end = f->caps[1];
            *hit = true;
        }
        return NULL;
    }
    const char *p = json_object_get_string(pat->j);
    size_t pn = (size_t)json_object_get_string_len(pat->j);
    const char *at = find_bytes(s + off, n - off, p, pn);
    if (at != NULL) {
        f->start = (size_t)(at - s);
        f->end = f->start + pn;
        *hit = true;
    }
    return NULL;
}

/* The match after the one that ended at off (first: the first match), as
 * jsonata-js's match.next() gives it: for a regular expression, none once a
 * match reached the end of the string, and an error for a later match of
 * nothing, which would never advance. */
static swf_error_t *pattern_next(ctx_t *ctx, const val_t *pat, const char *s, size_t n, size_t off,
                                 bool first, found_t *f, bool *hit)
{
    *hit = false;
    if (!first && is_regex(pat) && off >= n)
        return NULL;
    swf_error_t *err = pattern_find(ctx, pat, s, n, off, f, hit);
    if (!err && *hit && !first && f->end == f->start)
        err = qerr("the regular expression matches an empty string");
    return err;
}

static swf_error_t *want_pattern(const call_t *c, size_t i)
{
    const val_t *v = arg(c, i);
    if (is_regex(v))
        return NULL;
    if (!defined(v) || !is_string(v->j))
        return qerr("argument %zu must be a string or a regular expression, not %s", i + 1,
                    type_name(v));
    return NULL;
}

static swf_error_t *fn_contains(call_t *c, val_t *out)
{
    const char *s;
    size_t n;
    found_t f = {0};
    bool hit;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_string(c, 0, &s, &n);
    if (!err)
        err = want_pattern(c, 1);
    if (!err)
        err = pattern_find(c->ctx, arg(c, 1), s, n, 0, &f, &hit);
    if (!err)
        *out = bool_val(hit);
    free(f.caps);
    return err;
}

static swf_error_t *want_limit(const call_t *c, size_t i, double *limit)
{
    *limit = INFINITY;
    if (!has_arg(c, i))
        return NULL;
    swf_error_t *err = want_number(c, i, limit);
    if (!err && *limit < 0)
        err = qerr("argument %zu (limit) must not be negative", i + 1);
    return err;
}

static swf_error_t *fn_split(call_t *c, val_t *out)
{
    const char *s;
    size_t n;
    double limit;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_string(c, 0, &s, &n);
    if (!err)
        err = want_pattern(c, 1);
    if (!err)
        err = want_limit(c, 2, &limit);
    if (err)
        return err;
    limit = floor(limit); /* as JavaScript's String.split reads it */
    json_object *arr = json_object_new_array();
    const val_t *pat = arg(c, 1);
    if (!is_regex(pat) && json_object_get_string_len(pat->j) == 0) {
        size_t count, *starts = utf8_starts(s, n, &count);
        for (size_t i = 0; i < count && (double)i < limit; i++)
            json_object_array_add(
                arr, json_object_new_string_len(s + starts[i], (int)(starts[i + 1] - starts[i])));
        free(starts);
    } else {
        size_t off = 0;
        found_t f = {0};
        bool hit, first = true;
        while ((double)json_object_array_length(arr) < limit) {
            err = pattern_next(c->ctx, pat, s, n, off, first, &f, &hit);
            if (err || !hit) {
                if (!err)
                    json_object_array_add(arr, json_object_new_string_len(s + off, (int)(n - off)));
                break;
            }
            json_object_array_add(arr, json_object_new_string_len(s + off, (int)(f.start - off)));
            off = f.end;
            first = false;
        }
        free(f.caps);
        if (err) {
            json_object_put(arr);
            return err;
        }
    }
    *out = val_take(arr);
    return charge(c->ctx, json_object_array_length(arr));
}

static swf_error_t *fn_join(call_t *c, val_t *out)
{
    const char *sep = "";
    size_t sn = 0;
    swf_error_t *err = NULL;
    if (!has_arg(c, 0))
        return NULL;
    if (has_arg(c, 1) && (err = want_string(c, 1, &sep, &sn)))
        return err;
    const val_t *v = arg(c, 0);
    if (is_func(v))
        return qerr("argument 1 must be an array of strings");
    items_t it = items_of(v);
    buf_t b = {0};
    for (size_t k = 0; k < it.n; k++) {
        json_object *j = item_at(&it, k);
        if (!is_string(j)) {
            free(b.s);
            return qerr("argument 1 must be an array of strings, but item %zu is %s", k,
                        swf_json_type_name(j));
        }
        if (k)
            buf_add(&b, sep, sn);
        buf_add(&b, json_object_get_string(j), (size_t)json_object_get_string_len(j));
    }
    if (b.over)
        err = qerr("the result is longer than %u bytes", SWF_LIMIT_PAYLOAD_BYTES);
    else
        *out = string_val(buf_cstr(&b), b.n);
    free(b.s);
    return err ? err : charge(c->ctx, it.n);
}

/* A replacement string's $ references, as jsonata-js reads them: $$ is $,
 * $0 the match, $N group N (as many digits as the number of groups has,
 * one fewer when that names no group; a group that took no part gives
 * nothing), and a $ that starts none of these is itself. */
static void replace_refs(buf_t *b, const char *rep, size_t rn, const char *s, const found_t *f)
{
    size_t digits_max = 1;
    for (size_t g = f->groups; g >= 10; g /= 10)
        digits_max++;
    for (size_t i = 0; i < rn; i++) {
        if (rep[i] != '$' || i + 1 >= rn) {
            buf_ch(b, rep[i]);
            continue;
        }
        char d = rep[i + 1];
        if (d == '$' || d == '0') {
            if (d == '$')
                buf_ch(b, '$');
            else
                buf_add(b, s + f->start, f->end - f->start);
            i++;
            continue;
        }
        /* JavaScript's parseInt of the next digits_max characters, or of
         * one fewer when that is more than the groups */
        size_t avail = rn - (i + 1), k, used;
        for (size_t len = digits_max, pass = 0; pass < 2; pass++, len--) {
            k = 0, used = 0;
            while (used < len && used < avail && isdigit((unsigned char)rep[i + 1 + used]))
                k = k * 10 + (size_t)(rep[i + 1 + used++] - '0');
            if (!(digits_max > 1 && k > f->groups))
                break;
        }
        if (used == 0) {
            buf_ch(b, '$');
            continue;
        }
        if (k >= 1 && k <= f->groups && f->caps[2 * k] != SWF_ASL_REGEX_UNSET &&
            f->caps[2 * k + 1] != SWF_ASL_REGEX_UNSET)
            buf_add(b, s + f->caps[2 * k], f->caps[2 * k + 1] - f->caps[2 * k]);
        char text[24];
        i += (size_t)snprintf(text, sizeof text, "%zu", k); /* parseInt's digits, less zeros */
    }
}

static swf_error_t *fn_replace(call_t *c, val_t *out)
{
    const char *s, *rep = NULL;
    size_t n, rn = 0;
    double limit;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_string(c, 0, &s, &n);
    if (!err)
        err = want_pattern(c, 1);
    const val_t *pat = arg(c, 1), *replacer = NULL;
    if (!err && is_func(arg(c, 2)) && is_regex(pat)) /* f(match) gives each replacement */
        replacer = arg(c, 2);
    else if (!err)
        err = want_string(c, 2, &rep, &rn);
    if (!err)
        err = want_limit(c, 3, &limit);
    if (err)
        return err;
    if (!is_regex(pat) && json_object_get_string_len(pat->j) == 0)
        return qerr("argument 2 (pattern) must not be an empty string");
    buf_t out_b = {0};
    size_t off = 0, count = 0;
    found_t f = {0};
    bool hit;
    while ((double)count < limit &&
           !(err = pattern_next(c->ctx, pat, s, n, off, count == 0, &f, &hit)) && hit) {
        buf_add(&out_b, s + off, f.start - off);
        if (replacer != NULL) {
            val_t m = val_take(match_object(s, &f, true)), r;
            err = apply(c->ctx, replacer, &m, 1, &UNDEF, &r);
            val_free(&m);
            if (!err) {
                if (!defined(&r) || is_func(&r) || !is_string(r.j))
                    err = qerr("the function given as argument 3 must return a string, not %s",
                               type_name(&r));
                else
                    buf_add(&out_b, json_object_get_string(r.j),
                            (size_t)json_object_get_string_len(r.j));
                val_free(&r);
            }
        } else if (!is_regex(pat)) {
            buf_add(&out_b, rep, rn);
        } else {
            replace_refs(&out_b, rep, rn, s, &f);
        }
        off = f.end;
        count++;
        if (err || (err = charge(c->ctx, 1)))
            break;
    }
    free(f.caps);
    if (!err) {
        buf_add(&out_b, s + off, n - off);
        if (out_b.over)
            err = qerr("the result is longer than %u bytes", SWF_LIMIT_PAYLOAD_BYTES);
        else
            *out = string_val(buf_cstr(&out_b), out_b.n);
    }
    free(out_b.s);
    return err;
}

/* $match(str, /re/[, limit]): each match, as {match, index, groups}. */
static swf_error_t *fn_match(call_t *c, val_t *out)
{
    const char *s;
    size_t n, off = 0;
    double limit;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_string(c, 0, &s, &n);
    if (!err && !is_regex(arg(c, 1)))
        err = qerr("argument 2 must be a regular expression, not %s", type_name(arg(c, 1)));
    if (!err)
        err = want_limit(c, 2, &limit);
    if (err)
        return err;
    json_object *seq = json_object_new_array();
    found_t f = {0};
    bool hit;
    while ((double)json_object_array_length(seq) < limit &&
           !(err = pattern_next(c->ctx, arg(c, 1), s, n, off, json_object_array_length(seq) == 0,
                                &f, &hit)) &&
           hit) {
        json_object_array_add(seq, match_object(s, &f, false));
        off = f.end;
        if ((err = charge(c->ctx, 1)))
            break;
    }
    free(f.caps);
    if (err) {
        json_object_put(seq);
        return err;
    }
    *out = (val_t){seq, V_DEF | V_SEQ, NULL, NULL, NULL};
    collapse(out);
    return NULL;
}

/* $pad(str, width[, char]): padded with char (a space) to |width|
 * characters, on the right for a positive width, else on the left. */
static swf_error_t *fn_pad(call_t *c, val_t *out)
{
    const char *s, *pad = " ";
    size_t n, pn = 1;
    double width;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_string(c, 0, &s, &n);
    if (!err)
        err = want_integer(c, 1, &width);
    if (!err && has_arg(c, 2) && !(err = want_string(c, 2, &pad, &pn)) && pn == 0)
        pad = " ", pn = 1;
    if (err)
        return err;
    double missing = fabs(width) - (double)utf8_length(s, n);
    if (missing > (double)SWF_LIMIT_PAYLOAD_BYTES)
        return qerr("the result is longer than %u bytes", SWF_LIMIT_PAYLOAD_BYTES);
    buf_t padding = {0}, b = {0};
    size_t count, *starts = utf8_starts(pad, pn, &count);
    if (count == 0) { /* only continuation bytes: not text, nothing to repeat */
        free(starts);
        return qerr("the padding is not UTF-8 text");
    }
    for (size_t k = 0; (double)k < missing; k++) /* the pad repeated, cut to length */
        buf_add(&padding, pad + starts[k % count], starts[k % count + 1] - starts[k % count]);
    free(starts);
    if (width < 0)
        buf_add(&b, buf_cstr(&padding), padding.n);
    buf_add(&b, s, n);
    if (width > 0)
        buf_add(&b, buf_cstr(&padding), padding.n);
    if (b.over || padding.over)
        err = qerr("the result is longer than %u bytes", SWF_LIMIT_PAYLOAD_BYTES);
    else
        *out = string_val(buf_cstr(&b), b.n);
    free(b.s);
    free(padding.s);
    return err;
}

/* $error([message]): fails the evaluation with the message. */
static swf_error_t *fn_error(call_t *c, val_t *out)
{
    const char *msg = "$error() function evaluated";
    size_t n;
    (void)out;
    swf_error_t *err = has_arg(c, 0) ? want_string(c, 0, &msg, &n) : NULL;
    return err ? err : qerr("%s", msg);
}

/* $assert(condition[, message]): fails the evaluation unless true. */
static swf_error_t *fn_assert(call_t *c, val_t *out)
{
    const char *msg = "$assert() statement failed";
    size_t n;
    (void)out;
    const val_t *v = arg(c, 0);
    if (!defined(v) || is_func(v) || !json_object_is_type(v->j, json_type_boolean))
        return qerr("$assert: argument 1 must be a boolean, not %s", type_name(v));
    if (json_object_get_boolean(v->j))
        return NULL;
    swf_error_t *err = has_arg(c, 1) ? want_string(c, 1, &msg, &n) : NULL;
    return err ? err : qerr("%s", msg);
}

/* $zip(a, b, ...): [[a0, b0, ...], [a1, b1, ...], ...], as long as the
 * shortest. */
static swf_error_t *fn_zip(call_t *c, val_t *out)
{
    size_t len = SIZE_MAX;
    items_t it[8];
    for (size_t i = 0; i < c->argc && i < 8; i++) {
        if (is_func(arg(c, i)))
            return qerr("argument %zu must be an array, not %s", i + 1, func_what(arg(c, i)));
        it[i] = items_of(arg(c, i));
        len = it[i].n < len ? it[i].n : len;
    }
    if (c->argc == 0)
        len = 0;
    swf_error_t *err = charge(c->ctx, len * c->argc);
    if (err)
        return err;
    json_object *arr = json_object_new_array_ext((int)len);
    for (size_t k = 0; k < len; k++) {
        json_object *tuple = json_object_new_array_ext((int)c->argc);
        for (size_t i = 0; i < c->argc; i++)
            json_object_array_add(tuple, swf_json_ref(item_at(&it[i], k)));
        json_object_array_add(arr, tuple);
    }
    *out = val_take(arr);
    return NULL;
}

static void spread_into(json_object *seq, json_object *j, int depth)
{
    if (is_array(j) && depth < SWF_LIMIT_JSON_DEPTH) {
        for (size_t i = 0; i < json_object_array_length(j); i++)
            spread_into(seq, json_object_array_get_idx(j, i), depth + 1);
    } else if (is_object(j)) {
        json_object_object_foreach(j, key, v)
        {
            json_object *one = json_object_new_object();
            json_object_object_add(one, key, swf_json_ref(v));
            json_object_array_add(seq, one);
        }
    } else {
        json_object_array_add(seq, swf_json_ref(j));
    }
}

/* $spread(object): an array of one object per field (of each object of an
 * array); any other value is itself. */
static swf_error_t *fn_spread(call_t *c, val_t *out)
{
    const val_t *v = arg(c, 0);
    if (!defined(v))
        return NULL;
    if (is_func(v))
        return qerr("argument 1 must be an object, not %s", func_what(v));
    if (!is_array(v->j) && !is_object(v->j)) {
        *out = val_copy(v);
        return NULL;
    }
    json_object *seq = json_object_new_array();
    spread_into(seq, v->j, 0);
    size_t n = json_object_array_length(seq);
    *out = (val_t){seq, V_DEF | V_SEQ, NULL, NULL, NULL};
    collapse(out); /* may free seq */
    return charge(c->ctx, n);
}

/* encodeURIComponent (component) or encodeURI: UTF-8 bytes as %XX but for
 * the characters each keeps. */
static swf_error_t *url_encode(call_t *c, val_t *out, bool component)
{
    const char *s;
    size_t n;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_string(c, 0, &s, &n);
    if (err)
        return err;
    const char *keep = component ? "-_.!~*'()" : "-_.!~*'();/?:@&=+$,#";
    buf_t b = {0};
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (isalnum(ch) || (ch && strchr(keep, ch))) {
            buf_ch(&b, (char)ch);
        } else {
            char e[4];
            snprintf(e, sizeof e, "%%%02X", ch);
            buf_str(&b, e);
        }
    }
    if (b.over)
        err = qerr("the result is longer than %u bytes", SWF_LIMIT_PAYLOAD_BYTES);
    else
        *out = string_val(buf_cstr(&b), b.n);
    free(b.s);
    return err;
}

static int hex_digit(char c)
{
    return isdigit((unsigned char)c) ? c - '0'
           : (c >= 'a' && c <= 'f')  ? c - 'a' + 10
           : (c >= 'A' && c <= 'F')  ? c - 'A' + 10
                                     : -1;
}

/* decodeURIComponent (component) or decodeURI, which leaves the escapes of
 * the characters encodeURI keeps. A malformed escape is an error. */
static swf_error_t *url_decode(call_t *c, val_t *out, bool component)
{
    const char *s;
    size_t n;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_string(c, 0, &s, &n);
    if (err)
        return err;
    buf_t b = {0};
    for (size_t i = 0; i < n && !err; i++) {
        if (s[i] != '%') {
            buf_ch(&b, s[i]);
            continue;
        }
        int hi = i + 2 < n ? hex_digit(s[i + 1]) : -1, lo = hi >= 0 ? hex_digit(s[i + 2]) : -1;
        if (hi < 0 || lo < 0) {
            err = qerr("malformed URL escape at character %zu", i);
            break;
        }
        char ch = (char)(hi * 16 + lo);
        if (!component && ch && strchr(";/?:@&=+$,#", ch))
            buf_add(&b, s + i, 3);
        else
            buf_ch(&b, ch);
        i += 2;
    }
    /* the bytes must be UTF-8, as decodeURI requires */
    if (!err && b.n > 0 && swf_json_utf8_invalid_at(b.s, b.n) < b.n)
        err = qerr("the URL escapes are not UTF-8");
    if (!err && b.over)
        err = qerr("the result is longer than %u bytes", SWF_LIMIT_PAYLOAD_BYTES);
    if (!err)
        *out = string_val(buf_cstr(&b), b.n);
    free(b.s);
    return err;
}

static swf_error_t *fn_encode_url_component(call_t *c, val_t *out)
{
    return url_encode(c, out, true);
}
static swf_error_t *fn_encode_url(call_t *c, val_t *out)
{
    return url_encode(c, out, false);
}
static swf_error_t *fn_decode_url_component(call_t *c, val_t *out)
{
    return url_decode(c, out, true);
}
static swf_error_t *fn_decode_url(call_t *c, val_t *out)
{
    return url_decode(c, out, false);
}

static double round_half_even(double d, int precision);

/* $formatBase(number[, radix]): the integer (rounded) in base 2 to 36. */
static swf_error_t *fn_format_base(call_t *c, val_t *out)
{
    double d, radix = 10;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_number(c, 0, &d);
    if (!err && has_arg(c, 1))
        err = want_integer(c, 1, &radix);
    if (!err && (radix < 2 || radix > 36))
        err = qerr("argument 2 (radix) must be between 2 and 36, not %g", radix);
    if (!err && fabs(d) >= 9007199254740992.0)
        err = qerr("argument 1 is too large to format exactly");
    if (err)
        return err;
    double r = round_half_even(d, 0);
    bool neg = r < 0;
    uint64_t v = (uint64_t)fabs(r);
    char digits[80], *p = digits + sizeof digits - 1;
    *p = '\0';
    do {
        *--p = "0123456789abcdefghijklmnopqrstuvwxyz"[v % (uint64_t)radix];
        v /= (uint64_t)radix;
    } while (v > 0);
    if (neg)
        *--p = '-';
    *out = val_take(json_object_new_string(p));
    return NULL;
}

static swf_error_t *fn_keys(call_t *c, val_t *out)
{
    const val_t *v = arg(c, 0);
    if (!defined(v) || is_func(v))
        return NULL;
    items_t it = items_of(v);
    json_object *seen = json_object_new_object(), *seq = json_object_new_array();
    for (size_t k = 0; k < it.n; k++) {
        json_object *o = item_at(&it, k);
        if (!is_object(o))
            continue;
        json_object_object_foreach(o, key, val)
        {
            (void)val;
            if (!json_object_object_get_ex(seen, key, NULL)) {
                json_object_object_add(seen, key, NULL);
                json_object_array_add(seq, json_object_new_string(key));
            }
        }
    }
    json_object_put(seen);
    *out = (val_t){seq, V_DEF | V_SEQ, NULL, NULL, NULL};
    collapse(out);
    return charge(c->ctx, it.n);
}

static swf_error_t *fn_lookup(call_t *c, val_t *out)
{
    const char *key;
    size_t kn;
    swf_error_t *err = want_string(c, 1, &key, &kn);
    if (err || !has_arg(c, 0) || is_func(arg(c, 0)))
        return err;
    if ((err = lookup(c->ctx, arg(c, 0)->j, key, out, 0)))
        return err;
    collapse(out);
    return NULL;
}

static swf_error_t *fn_append(call_t *c, val_t *out)
{
    const val_t *a = arg(c, 0), *b = arg(c, 1);
    if (is_func(a) || is_func(b))
        return qerr("cannot append %s", func_what(is_func(a) ? a : b));
    if (!defined(b)) {
        *out = val_copy(a);
        return NULL;
    }
    if (!defined(a)) {
        *out = val_copy(b);
        return NULL;
    }
    json_object *arr = json_object_new_array();
    seq_add_flat(arr, a->j);
    seq_add_flat(arr, b->j);
    *out = val_take(arr);
    return charge(c->ctx, json_object_array_length(arr));
}

static swf_error_t *want_array(const call_t *c, size_t i, items_t *it)
{
    const val_t *v = arg(c, i);
    if (is_func(v))
        return qerr("argument %zu must be an array", i + 1);
    *it = items_of(v);
    return charge(c->ctx, it->n);
}

static swf_error_t *fn_reverse(call_t *c, val_t *out)
{
    items_t it;
    swf_error_t *err = want_array(c, 0, &it);
    if (err || !has_arg(c, 0))
        return err;
    json_object *arr = json_object_new_array_ext((int)it.n);
    for (size_t k = it.n; k-- > 0;)
        json_object_array_add(arr, swf_json_ref(item_at(&it, k)));
    *out = val_take(arr);
    return NULL;
}

/* $shuffle(array): its items in an order drawn from the decision's
 * generator (Fisher-Yates). */
static swf_error_t *fn_shuffle(call_t *c, val_t *out)
{
    items_t it;
    swf_error_t *err = want_array(c, 0, &it);
    if (err || !has_arg(c, 0))
        return err;
    json_object **v = malloc((it.n ? it.n : 1) * sizeof(*v));
    if (v == NULL)
        abort();
    for (size_t k = 0; k < it.n; k++)
        v[k] = item_at(&it, k);
    swf_asl_rng_t *rng = ctx_rng(c->ctx);
    for (size_t k = it.n; k > 1; k--) {
        size_t j = (size_t)(swf_asl_rng_unit(rng) * (double)k);
        json_object *t = v[k - 1];
        v[k - 1] = v[j < k ? j : k - 1];
        v[j < k ? j : k - 1] = t;
    }
    json_object *arr = json_object_new_array_ext((int)it.n);
    for (size_t k = 0; k < it.n; k++)
        json_object_array_add(arr, swf_json_ref(v[k]));
    free(v);
    *out = val_take(arr);
    return NULL;
}

typedef struct sort_item {
    json_object *j;
    size_t index;
} sort_item_t;

static int sort_cmp(const void *pa, const void *pb)
{
    const sort_item_t *a = pa, *b = pb;
    int c;
    if (is_number(a->j)) {
        double x = json_object_get_double(a->j), y = json_object_get_double(b->j);
        c = x < y ? -1 : x > y ? 1 : 0;
    } else {
        c = strcmp(json_object_get_string(a->j), json_object_get_string(b->j));
    }
    if (c == 0) /* stable, as JSONata's merge sort is */
        c = a->index < b->index ? -1 : a->index > b->index ? 1 : 0;
    return c;
}

/* ------------------------------------------------------------------------ */
/* Higher-order functions                                                   */
/* ------------------------------------------------------------------------ */

static swf_error_t *want_function(const call_t *c, size_t i)
{
    const val_t *v = arg(c, i);
    if (!is_callable(v))
        return qerr("argument %zu must be a function, not %s", i + 1, type_name(v));
    return NULL;
}

/* The array a higher-order function walks: argument 0, a value alone being
 * an array of one (its items are it). NULL for a function. */
static swf_error_t *want_walk(const call_t *c, items_t *it, val_t *whole)
{
    const val_t *v = arg(c, 0);
    *whole = UNDEF;
    if (is_func(v))
        return qerr("argument 1 must be an array, not %s", func_what(v));
    *it = items_of(v);
    if (!defined(v))
        return NULL;
    if (is_array(v->j)) {
        *whole = val_copy(v);
    } else {
        json_object *arr = json_object_new_array();
        json_object_array_add(arr, swf_json_ref(v->j));
        *whole = val_take(arr);
    }
    return charge(c->ctx, it->n);
}

/* Calls f with the first of a, b, d that it takes (at least a): what a
 * higher-order function passes (value, index, array). */
static swf_error_t *hof_apply(call_t *c, const val_t *f, const val_t *a, const val_t *b,
                              const val_t *d, val_t *out)
{
    val_t argv[3] = {*a, *b, *d};
    size_t n = func_arity(f);
    return apply(c->ctx, f, argv, n < 1 ? 1 : n > 3 ? 3 : n, &UNDEF, out);
}

/* Adds r to the sequence seq: a function is not JSON and cannot be kept. */
static swf_error_t *seq_push(json_object *seq, const val_t *r)
{
    if (is_func(r))
        return qerr("%s cannot be an item of the result", func_what(r));
    if (defined(r))
        json_object_array_add(seq, swf_json_ref(r->j));
    return NULL;
}

/* $map(array, f) and $filter(array, f): f(value, index, array) for each
 * item; the results (map), or the items for which f is true (filter). */
static swf_error_t *map_or_filter(call_t *c, val_t *out, bool map)
{
    items_t it;
    val_t whole;
    swf_error_t *err = want_function(c, 1);
    if (!err)
        err = want_walk(c, &it, &whole);
    if (err || !has_arg(c, 0))
        return err;
    json_object *seq = json_object_new_array();
    for (size_t k = 0; k < it.n && !err; k++) {
        val_t item = val_ref(item_at(&it, k)), index = index_val(k), r;
        if (!(err = hof_apply(c, arg(c, 1), &item, &index, &whole, &r))) {
            if (map)
                err = seq_push(seq, &r);
            else if (boolean_of(&r) == 1)
                json_object_array_add(seq, swf_json_ref(item.j));
        }
        val_free(&r);
        val_free(&index);
        val_free(&item);
    }
    val_free(&whole);
    if (err) {
        json_object_put(seq);
        return err;
    }
    *out = (val_t){seq, V_DEF | V_SEQ, NULL, NULL, NULL};
    collapse(out);
    return NULL;
}

static swf_error_t *fn_map(call_t *c, val_t *out)
{
    return map_or_filter(c, out, true);
}

static swf_error_t *fn_filter(call_t *c, val_t *out)
{
    return map_or_filter(c, out, false);
}

/* $single(array[, f]): the one item for which f is true (or the one item);
 * none or more than one is an error. */
static swf_error_t *fn_single(call_t *c, val_t *out)
{
    items_t it;
    val_t whole;
    swf_error_t *err = has_arg(c, 1) ? want_function(c, 1) : NULL;
    if (!err)
        err = want_walk(c, &it, &whole);
    if (err || !has_arg(c, 0))
        return err;
    val_t found = UNDEF;
    for (size_t k = 0; k < it.n && !err; k++) {
        val_t item = val_ref(item_at(&it, k)), index = index_val(k), r = UNDEF;
        bool match = true;
        if (has_arg(c, 1) && !(err = hof_apply(c, arg(c, 1), &item, &index, &whole, &r)))
            match = boolean_of(&r) == 1;
        if (!err && match && defined(&found))
            err = qerr("more than one item matches (item %zu is the second)", k);
        else if (!err && match)
            found = val_copy(&item);
        val_free(&r);
        val_free(&index);
        val_free(&item);
    }
    val_free(&whole);
    if (!err && !defined(&found))
        err = qerr("no item matches: exactly one must");
    if (err) {
        val_free(&found);
        return err;
    }
    *out = found;
    return NULL;
}

/* $reduce(array, f[, init]): f(accumulator, value, index, array) from the
 * left, starting from init, or from the first item without one. */
static swf_error_t *fn_reduce(call_t *c, val_t *out)
{
    items_t it;
    val_t whole;
    swf_error_t *err = want_function(c, 1);
    if (err || !has_arg(c, 0))
        return err;
    if (func_arity(arg(c, 1)) < 2)
        return qerr("argument 2 must be a function of at least two arguments");
    if ((err = want_walk(c, &it, &whole)))
        return err;
    size_t k = 0, n = func_arity(arg(c, 1));
    val_t acc;
    if (!has_arg(c, 2) && it.n > 0)
        acc = val_ref(item_at(&it, k++));
    else
        acc = val_copy(arg(c, 2));
    for (; k < it.n && !err; k++) {
        val_t argv[4] = {acc, val_ref(item_at(&it, k)), index_val(k), whole}, r;
        err = apply(c->ctx, arg(c, 1), argv, n > 4 ? 4 : n, &UNDEF, &r);
        val_free(&argv[1]);
        val_free(&argv[2]);
        if (!err) {
            val_free(&acc);
            acc = r;
        }
    }
    val_free(&whole);
    if (err) {
        val_free(&acc);
        return err;
    }
    *out = acc;
    return NULL;
}

/* $sift(object, f) and $each(object, f): f(value, key, object) for each
 * field; the fields for which f is true (sift), or the results (each). */
static swf_error_t *sift_or_each(call_t *c, val_t *out, bool sift)
{
    const val_t *o = arg(c, 0);
    swf_error_t *err = want_function(c, 1);
    if (err || !defined(o))
        return err;
    if (is_func(o) || !is_object(o->j))
        return qerr("argument 1 must be an object, not %s", type_name(o));
    if ((err = charge(c->ctx, (size_t)json_object_object_length(o->j))))
        return err;
    json_object *res = sift ? json_object_new_object() : json_object_new_array();
    json_object_object_foreach(o->j, key, v)
    {
        val_t value = val_ref(v), k = val_take(json_object_new_string(key)), r = UNDEF;
        if (!(err = hof_apply(c, arg(c, 1), &value, &k, o, &r))) {
            if (!sift)
                err = seq_push(res, &r);
            else if (boolean_of(&r) == 1)
                json_object_object_add(res, key, swf_json_ref(v));
        }
        val_free(&r);
        val_free(&k);
        val_free(&value);
        if (err)
            break;
    }
    if (err) {
        json_object_put(res);
        return err;
    }
    if (sift && json_object_object_length(res) == 0) {
        json_object_put(res);
        return NULL;
    }
    *out = sift ? val_take(res) : (val_t){res, V_DEF | V_SEQ, NULL, NULL, NULL};
    collapse(out);
    return NULL;
}

static swf_error_t *fn_sift(call_t *c, val_t *out)
{
    return sift_or_each(c, out, true);
}

static swf_error_t *fn_each(call_t *c, val_t *out)
{
    return sift_or_each(c, out, false);
}

typedef struct sort_by_function {
    call_t *c;
    const items_t *it;
} sort_by_function_t;

static swf_error_t *function_after(void *data, size_t a, size_t b, bool *after)
{
    sort_by_function_t *s = data;
    val_t argv[2] = {val_ref(item_at(s->it, a)), val_ref(item_at(s->it, b))}, r;
    swf_error_t *err = apply(s->c->ctx, arg(s->c, 1), argv, 2, &UNDEF, &r);
    *after = !err && boolean_of(&r) == 1;
    val_free(&r);
    val_free(&argv[0]);
    val_free(&argv[1]);
    return err;
}

/* $sort(array, f): f($a, $b) true when $a goes after $b. */
static swf_error_t *sort_with(call_t *c, items_t it, val_t *out)
{
    swf_error_t *err = has_arg(c, 1) ? want_function(c, 1) : NULL;
    if (err)
        return err;
    if (it.n <= 1) { /* as an array, unsorted (the function is not called) */
        json_object *arr = json_object_new_array();
        if (it.n == 1)
            json_object_array_add(arr, swf_json_ref(item_at(&it, 0)));
        *out = val_take(arr);
        return NULL;
    }
    size_t *idx = malloc(2 * it.n * sizeof *idx);
    if (idx == NULL)
        abort();
    for (size_t k = 0; k < it.n; k++)
        idx[k] = k;
    sort_by_function_t s = {c, &it};
    if (!(err = merge_sort(idx, idx + it.n, it.n, function_after, &s))) {
        json_object *arr = json_object_new_array_ext((int)it.n);
        for (size_t k = 0; k < it.n; k++)
            json_object_array_add(arr, swf_json_ref(item_at(&it, idx[k])));
        *out = val_take(arr);
    }
    free(idx);
    return err;
}

static swf_error_t *fn_sort(call_t *c, val_t *out)
{
    items_t it;
    swf_error_t *err = want_array(c, 0, &it);
    if (err || !has_arg(c, 0))
        return err;
    if (has_arg(c, 1) || it.n <= 1)
        return sort_with(c, it, out);
    bool nums = it.n > 0 && is_number(item_at(&it, 0));
    for (size_t k = 0; k < it.n; k++) {
        json_object *j = item_at(&it, k);
        if (nums ? !is_number(j) : !is_string(j))
            return qerr("sorts an array of numbers or of strings; item %zu is %s", k,
                        swf_json_type_name(j));
    }
    if ((err = charge(c->ctx, it.n * (size_t)(1 + log2((double)it.n + 1)))))
        return err;
    sort_item_t *v = malloc((it.n ? it.n : 1) * sizeof *v);
    if (v == NULL)
        abort();
    for (size_t k = 0; k < it.n; k++)
        v[k] = (sort_item_t){item_at(&it, k), k};
    qsort(v, it.n, sizeof *v, sort_cmp);
    json_object *arr = json_object_new_array_ext((int)it.n);
    for (size_t k = 0; k < it.n; k++)
        json_object_array_add(arr, swf_json_ref(v[k].j));
    free(v);
    *out = val_take(arr);
    return NULL;
}

static swf_error_t *fn_distinct(call_t *c, val_t *out)
{
    items_t it;
    swf_error_t *err = want_array(c, 0, &it);
    if (err || !has_arg(c, 0))
        return err;
    if (it.arr == NULL) {
        *out = val_copy(arg(c, 0));
        return NULL;
    }
    json_object *arr = json_object_new_array();
    for (size_t k = 0; k < it.n; k++) {
        json_object *j = item_at(&it, k);
        size_t m = json_object_array_length(arr), i;
        if ((err = charge(c->ctx, m + 1))) {
            json_object_put(arr);
            return err;
        }
        for (i = 0; i < m && !swf_json_equal(json_object_array_get_idx(arr, i), j); i++)
            ;
        if (i == m)
            json_object_array_add(arr, swf_json_ref(j));
    }
    *out = (val_t){arr, V_DEF | (arg(c, 0)->flags & V_SEQ), NULL, NULL, NULL};
    return NULL;
}

static swf_error_t *fn_merge(call_t *c, val_t *out)
{
    items_t it;
    swf_error_t *err = want_array(c, 0, &it);
    if (err || !has_arg(c, 0))
        return err;
    json_object *obj = json_object_new_object();
    for (size_t k = 0; k < it.n; k++) {
        json_object *o = item_at(&it, k);
        if (!is_object(o)) {
            json_object_put(obj);
            return qerr("argument 1 must be an array of objects, but item %zu is %s", k,
                        swf_json_type_name(o));
        }
        json_object_object_foreach(o, key, v)
        {
            json_object_object_add(obj, key, swf_json_ref(v));
        }
    }
    *out = val_take(obj);
    return NULL;
}

/* Rounds half to even at `precision` decimal places, shifting the decimal
 * point in the text as JSONata does so that 2.675 rounds to 2.68. */
static double round_half_even(double d, int precision)
{
    char t[96];
    js_number_format(d, t);
    char *e = strchr(t, 'e');
    int exp10 = precision;
    if (e) {
        exp10 += atoi(e + 1);
        *e = '\0';
    }
    char shifted[128];
    snprintf(shifted, sizeof shifted, "%se%d", t, exp10);
    double v = strtod(shifted, NULL);
    double r = round(v);
    if (fabs(r - v) == 0.5 && fmod(fabs(r), 2) == 1)
        r -= (r > v) ? 1 : -1;
    if (r == 0)
        r = 0; /* no -0 */
    js_number_format(r, t);
    e = strchr(t, 'e');
    exp10 = -precision;
    if (e) {
        exp10 += atoi(e + 1);
        *e = '\0';
    }
    snprintf(shifted, sizeof shifted, "%se%d", t, exp10);
    return strtod(shifted, NULL);
}

/* ------------------------------------------------------------------------ */
/* $formatNumber (XPath and XQuery Functions and Operators 3.1, 4.7)        */
/* ------------------------------------------------------------------------ */

/* The symbols of a decimal format (F&O 4.7.1): one character each, but the
 * two strings; the digits are zero to zero + 9. */
typedef struct decimal_format {
    unsigned long decimal, grouping, exponent, percent, permille, zero, digit, pattern, minus;
    const char *infinity, *nan;
} decimal_format_t;

/* Grouping separators a part may hold; more is an error. */
#define FORMAT_GROUPS_MAX 32

/* One sub-picture, analysed (F&O 4.7.4). Grouping positions count digits:
 * from the decimal separator leftwards in the integer part, rightwards in
 * the fraction. */
typedef struct sub_picture {
    const unsigned long *prefix, *suffix;
    size_t nprefix, nsuffix;
    int min_int, min_frac, max_frac, min_exp;
    bool has_exp;
    int int_groups[FORMAT_GROUPS_MAX], nint_groups, frac_groups[FORMAT_GROUPS_MAX], nfrac_groups;
    int every;    /* regular integer grouping: a separator every `every` digits; 0: as listed */
    double scale; /* 100 with a percent sign, 1000 with a per-mille sign, else 1 */
} sub_picture_t;

static bool fmt_is_digit(const decimal_format_t *f, unsigned long ch)
{
    return ch >= f->zero && ch <= f->zero + 9;
}

/* A character of the mantissa: a digit, the digit sign, a separator. */
static bool fmt_is_mantissa(const decimal_format_t *f, unsigned long ch)
{
    return fmt_is_digit(f, ch) || ch == f->digit || ch == f->decimal || ch == f->grouping;
}

static swf_error_t *sub_picture_parse(const decimal_format_t *f, const unsigned long *cp, size_t n,
                                      sub_picture_t *p)
{
    memset(p, 0, sizeof(*p));
    size_t first = 0;
    while (first < n && !fmt_is_mantissa(f, cp[first]))
        first++;
    size_t end = first;
    while (end < n && fmt_is_mantissa(f, cp[end]))
        end++;
    size_t suffix = end;
    if (end < n && end > first && cp[end] == f->exponent && end + 1 < n &&
        fmt_is_digit(f, cp[end + 1])) {
        p->has_exp = true;
        for (suffix = end + 1; suffix < n && fmt_is_digit(f, cp[suffix]); suffix++)
            p->min_exp++;
    }
    for (size_t i = suffix; i < n; i++) {
        if (fmt_is_mantissa(f, cp[i]))
            return qerr("the picture has a character that is not a digit or a separator "
                        "between its digits");
    }
    p->prefix = cp;
    p->nprefix = first;
    p->suffix = cp + suffix;
    p->nsuffix = n - suffix;
    int percents = 0, permilles = 0;
    for (size_t i = 0; i < n; i++) {
        if (i >= first && i < suffix)
            continue;
        percents += cp[i] == f->percent;
        permilles += cp[i] == f->permille;
    }
    if (percents + permilles > 1)
        return qerr("the picture has more than one percent or per-mille sign");
    p->scale = percents ? 100 : permilles ? 1000 : 1;
    size_t point = end;
    int digits = 0;
    for (size_t i = first; i < end; i++) {
        if (cp[i] == f->decimal) {
            if (point != end)
                return qerr("the picture has more than one decimal separator");
            point = i;
        }
        digits += fmt_is_digit(f, cp[i]) || cp[i] == f->digit;
    }
    if (digits == 0)
        return qerr("the picture has no digit and no digit sign (#)");
    for (size_t i = first; i < end; i++) {
        if (cp[i] != f->grouping)
            continue;
        bool after_sep = i > first && (cp[i - 1] == f->grouping || cp[i - 1] == f->decimal);
        bool before_sep = i + 1 == end || cp[i + 1] == f->grouping || cp[i + 1] == f->decimal;
        if (after_sep || before_sep)
            return qerr("a grouping separator must not stand next to another separator or end "
                        "a part of the picture");
    }
    /* The integer part, right to left: mandatory digits (#s only before
     * them) and where the separators stand. */
    int seen = 0;
    bool hash_seen = false;
    for (size_t i = point; i-- > first;) {
        unsigned long ch = cp[i];
        if (ch == f->grouping) {
            if (p->nint_groups == FORMAT_GROUPS_MAX)
                return qerr("the picture has too many grouping separators");
            p->int_groups[p->nint_groups++] = seen;
            continue;
        }
        if (fmt_is_digit(f, ch)) {
            if (hash_seen)
                return qerr("in the integer part, a digit sign (#) must not follow a digit");
            p->min_int++;
        } else {
            hash_seen = true;
        }
        seen++;
    }
    /* The fraction, left to right: mandatory digits (#s only after them). */
    hash_seen = false;
    seen = 0;
    for (size_t i = point + 1; point < end && i < end; i++) {
        unsigned long ch = cp[i];
        if (ch == f->grouping) {
            if (p->nfrac_groups == FORMAT_GROUPS_MAX)
                return qerr("the picture has too many grouping separators");
            p->frac_groups[p->nfrac_groups++] = seen;
            continue;
        }
        if (fmt_is_digit(f, ch)) {
            if (hash_seen)
                return qerr("in the fraction, a digit must not follow a digit sign (#)");
            p->min_frac++;
        } else {
            hash_seen = true;
        }
        p->max_frac++;
        seen++;
    }
    if (p->min_int == 0 && p->max_frac == 0) {
        if (p->has_exp)
            p->min_frac = p->max_frac = 1;
        else
            p->min_int = 1;
    }
    if (p->min_int == 0 && p->min_frac == 0)
        p->min_frac = 1; /* "#.##" shows 1 as "1.0" and 0 as ".0" */
    /* Regular grouping: separators at G, 2G, 3G... repeat every G digits. */
    if (p->nint_groups > 0) {
        int g = p->int_groups[0];
        for (int k = 1; k < p->nint_groups; k++)
            g = p->int_groups[k] < g ? p->int_groups[k] : g;
        bool regular = g > 0;
        for (int k = 0; regular && k < p->nint_groups; k++) {
            bool found = false;
            for (int m = 0; m < p->nint_groups; m++)
                found = found || p->int_groups[m] == g * (k + 1);
            regular = found;
        }
        p->every = regular ? g : 0;
    }
    return NULL;
}

/* Adds a string of ASCII digits to b in the format's digit family. */
static void fmt_digits(buf_t *b, const decimal_format_t *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf_cp(b, f->zero + (unsigned long)(s[i] - '0'));
}

static void fmt_put(buf_t *b, const unsigned long *cp, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf_cp(b, cp[i]);
}

/* Whether the integer part has a separator `pos` digits from its right. */
static bool fmt_int_group_at(const sub_picture_t *p, int pos)
{
    if (p->every > 0)
        return pos % p->every == 0;
    for (int k = 0; k < p->nint_groups; k++) {
        if (p->int_groups[k] == pos)
            return true;
    }
    return false;
}

/* a / 10^e, multiplied when e < 0 (2.675 * 10 is 26.75, 2.675 / 0.1 is
 * not), as jsonata-js computes a mantissa. */
static double scale10(double a, int e)
{
    return e < 0 ? a * pow(10, -e) : a / pow(10, e);
}

/* Formats |d| (not NaN) with a sub-picture into b. */
static void sub_picture_format(buf_t *b, const decimal_format_t *f, const sub_picture_t *p,
                               double a)
{
    if (isinf(a)) {
        buf_str(b, f->infinity);
        return;
    }
    int e = 0;
    if (p->has_exp && a != 0) {
        e = (int)floor(log10(a)) + 1 - p->min_int;
        double m = scale10(a, e);
        /* log10 may be a hair off near a power of ten. A mantissa that
         * rounding carries (9.9999 with '0.00e0') is written as it comes,
         * "10.00e0": jsonata-js does so, and Step Functions runs it. */
        if (p->min_int > 0 && m < pow(10, p->min_int - 1)) {
            e--;
            m = scale10(a, e);
        } else if (m >= pow(10, p->min_int)) {
            e++;
            m = scale10(a, e);
        }
        a = m;
    }
    double r = round_half_even(a, p->max_frac);
    char text[400];
    snprintf(text, sizeof(text), "%.*f", p->max_frac, r);
    char *dot = strchr(text, '.');
    size_t nint = dot ? (size_t)(dot - text) : strlen(text);
    const char *frac = dot ? dot + 1 : "";
    size_t nfrac = strlen(frac);
    const char *ip = text;
    while (nint > 0 && *ip == '0') { /* leading zeros go, then min_int comes back */
        ip++;
        nint--;
    }
    while (nfrac > (size_t)p->min_frac && frac[nfrac - 1] == '0')
        nfrac--;
    int pad = p->min_int > (int)nint ? p->min_int - (int)nint : 0;
    if (nint == 0 && pad == 0 && (nfrac == 0 || p->has_exp))
        pad = 1; /* never nothing at all; a mantissa reads 0.1e1, not .1e1 */
    int total = pad + (int)nint;
    for (int k = 0; k < total; k++) {
        int from_right = total - k;
        if (k > 0 && fmt_int_group_at(p, from_right))
            buf_cp(b, f->grouping);
        if (k < pad)
            buf_cp(b, f->zero);
        else
            fmt_digits(b, f, ip + (k - pad), 1);
    }
    if (nfrac > 0) {
        buf_cp(b, f->decimal);
        for (size_t k = 0; k < nfrac; k++) {
            for (int g = 0; k > 0 && g < p->nfrac_groups; g++) {
                if (p->frac_groups[g] == (int)k)
                    buf_cp(b, f->grouping);
            }
            fmt_digits(b, f, frac + k, 1);
        }
    }
    if (p->has_exp) {
        buf_cp(b, f->exponent);
        if (e < 0)
            buf_cp(b, f->minus);
        char exp[16];
        int len = snprintf(exp, sizeof(exp), "%0*d", p->min_exp, e < 0 ? -e : e);
        fmt_digits(b, f, exp, (size_t)len);
    }
}

/* One option of $formatNumber's third argument: a one-character string. */
static swf_error_t *fmt_option_char(json_object *opts, const char *key, unsigned long *ch)
{
    json_object *v;
    if (opts == NULL || !swf_json_get(opts, key, &v))
        return NULL;
    const char *s = is_string(v) ? json_object_get_string(v) : NULL;
    size_t n = s ? (size_t)json_object_get_string_len(v) : 0, i = 0;
    unsigned long cp = n > 0 ? utf8_next(s, n, &i) : 0;
    if (s == NULL || n == 0 || i != n)
        return qerr("option %s must be a string of one character", key);
    *ch = cp;
    return NULL;
}

/* $formatNumber(number, picture[, options]): the number as XPath's
 * format-number writes it (F&O 3.1, 4.7), rounded half to even as $round
 * rounds. */
static swf_error_t *fn_format_number(call_t *c, val_t *out)
{
    double d;
    const char *pic;
    size_t npic;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_number(c, 0, &d);
    if (!err)
        err = want_string(c, 1, &pic, &npic);
    json_object *opts = NULL;
    if (!err && has_arg(c, 2)) {
        const val_t *o = arg(c, 2);
        if (is_func(o) || !is_object(o->j))
            err = qerr("argument 3 (options) must be an object");
        else
            opts = o->j;
    }
    decimal_format_t f = {'.', ',', 'e', '%', 0x2030, '0', '#', ';', '-', "Infinity", "NaN"};
    static const char *const chars[] = {"decimal-separator",
                                        "grouping-separator",
                                        "exponent-separator",
                                        "percent",
                                        "per-mille",
                                        "zero-digit",
                                        "digit",
                                        "pattern-separator",
                                        "minus-sign"};
    unsigned long *fields[] = {&f.decimal, &f.grouping, &f.exponent, &f.percent, &f.permille,
                               &f.zero,    &f.digit,    &f.pattern,  &f.minus};
    for (size_t i = 0; !err && i < sizeof(chars) / sizeof(chars[0]); i++)
        err = fmt_option_char(opts, chars[i], fields[i]);
    json_object *v;
    if (!err && opts != NULL && swf_json_get(opts, "infinity", &v))
        f.infinity = is_string(v) ? json_object_get_string(v) : NULL;
    if (!err && opts != NULL && swf_json_get(opts, "NaN", &v))
        f.nan = is_string(v) ? json_object_get_string(v) : NULL;
    if (!err && (f.infinity == NULL || f.nan == NULL))
        err = qerr("options infinity and NaN must be strings");
    if (err)
        return err;
    unsigned long *cp = malloc((npic ? npic : 1) * sizeof(*cp));
    if (cp == NULL)
        abort();
    size_t n = 0;
    for (size_t i = 0; i < npic;)
        cp[n++] = utf8_next(pic, npic, &i);
    size_t split = n;
    for (size_t i = 0; i < n; i++) {
        if (cp[i] != f.pattern)
            continue;
        if (split != n)
            err = qerr("the picture has more than two sub-pictures");
        split = i;
    }
    sub_picture_t subs[2];
    size_t nsubs = split == n ? 1 : 2;
    if (!err)
        err = sub_picture_parse(&f, cp, split, &subs[0]);
    if (!err && nsubs == 2)
        err = sub_picture_parse(&f, cp + split + 1, n - split - 1, &subs[1]);
    if (err) {
        free(cp);
        return err;
    }
    buf_t b = {0};
    if (isnan(d)) {
        buf_str(&b, f.nan);
    } else {
        const sub_picture_t *p = d < 0 && nsubs == 2 ? &subs[1] : &subs[0];
        if (d < 0 && nsubs == 1)
            buf_cp(&b, f.minus); /* before the prefix: -$1.00 */
        fmt_put(&b, p->prefix, p->nprefix);
        sub_picture_format(&b, &f, p, fabs(d) * p->scale);
        fmt_put(&b, p->suffix, p->nsuffix);
    }
    free(cp);
    *out = string_val(buf_cstr(&b), b.n);
    free(b.s);
    return NULL;
}

static swf_error_t *fn_round(call_t *c, val_t *out)
{
    double d, p = 0;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_number(c, 0, &d);
    if (!err && has_arg(c, 1))
        err = want_integer(c, 1, &p);
    if (!err && fabs(p) > 300)
        err = qerr("argument 2 (precision) is out of range");
    return err ? err : number_val(round_half_even(d, (int)p), out);
}

static swf_error_t *math1(call_t *c, val_t *out, double (*f)(double))
{
    double d;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_number(c, 0, &d);
    return err ? err : number_val(f(d), out);
}

static swf_error_t *fn_floor(call_t *c, val_t *out)
{
    return math1(c, out, floor);
}
static swf_error_t *fn_ceil(call_t *c, val_t *out)
{
    return math1(c, out, ceil);
}
static swf_error_t *fn_abs(call_t *c, val_t *out)
{
    return math1(c, out, fabs);
}

static swf_error_t *fn_sqrt(call_t *c, val_t *out)
{
    double d;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_number(c, 0, &d);
    if (!err && d < 0)
        err = qerr("cannot take the square root of a negative number");
    return err ? err : number_val(sqrt(d), out);
}

static swf_error_t *fn_power(call_t *c, val_t *out)
{
    double b, e;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_number(c, 0, &b);
    if (!err)
        err = want_number(c, 1, &e);
    if (err)
        return err;
    double r = pow(b, e);
    if (!isfinite(r))
        return qerr("the result of %g to the power %g is out of range", b, e);
    return number_val(r, out);
}

static swf_error_t *fn_partition(call_t *c, val_t *out)
{
    items_t it;
    double size;
    swf_error_t *err = want_array(c, 0, &it);
    if (!err)
        err = want_integer(c, 1, &size);
    if (!err && size < 1)
        err = qerr("argument 2 (chunk size) must be a positive integer");
    if (err || !has_arg(c, 0))
        return err;
    json_object *arr = json_object_new_array(), *chunk = NULL;
    for (size_t k = 0; k < it.n; k++) {
        if (chunk == NULL)
            chunk = json_object_new_array();
        json_object_array_add(chunk, swf_json_ref(item_at(&it, k)));
        if ((double)json_object_array_length(chunk) >= size) {
            json_object_array_add(arr, chunk);
            chunk = NULL;
        }
    }
    if (chunk)
        json_object_array_add(arr, chunk);
    *out = val_take(arr);
    return NULL;
}

static swf_error_t *fn_range(call_t *c, val_t *out)
{
    double a, b, step = 1;
    swf_error_t *err = want_number(c, 0, &a);
    if (!err)
        err = want_number(c, 1, &b);
    if (!err && has_arg(c, 2))
        err = want_number(c, 2, &step);
    if (!err && (step == 0 || !isfinite(step)))
        err = qerr("argument 3 (step) must not be zero");
    if (err)
        return err;
    double count = floor((b - a) / step) + 1;
    if (count < 0)
        count = 0;
    if (count > SWF_LIMIT_JSONATA_RANGE_ITEMS)
        return qerr("the range has %.0f items, the limit is %d", count,
                    SWF_LIMIT_JSONATA_RANGE_ITEMS);
    if ((err = charge(c->ctx, (size_t)count)))
        return err;
    json_object *arr = json_object_new_array();
    for (size_t k = 0; k < (size_t)count; k++) {
        json_object *j;
        if ((err = number_new(a + (double)k * step, &j))) {
            json_object_put(arr);
            return err;
        }
        json_object_array_add(arr, j);
    }
    *out = val_take(arr);
    return NULL;
}

static swf_error_t *fn_hash(call_t *c, val_t *out)
{
    const char *s, *alg_name = "SHA-256";
    size_t n, an;
    swf_hash_alg_t alg;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_string(c, 0, &s, &n);
    if (!err && has_arg(c, 1))
        err = want_string(c, 1, &alg_name, &an);
    if (err)
        return err;
    if (!swf_hash_alg_from_name(alg_name, &alg))
        return qerr("unknown algorithm \"%.40s\" (MD5, SHA-1, SHA-256, SHA-384 or SHA-512)",
                    alg_name);
    uint8_t digest[SWF_HASH_MAX_BYTES];
    char hex[2 * SWF_HASH_MAX_BYTES + 1];
    swf_hash_digest(alg, s, n, digest);
    swf_hash_hex_encode(digest, swf_hash_size(alg), hex);
    *out = val_take(json_object_new_string(hex));
    return NULL;
}

static swf_error_t *fn_parse(call_t *c, val_t *out)
{
    const char *s;
    size_t n;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_string(c, 0, &s, &n);
    if (err)
        return err;
    json_object *j = NULL;
    swf_error_t *perr_ = swf_json_parse(s, n, SWF_LIMIT_PAYLOAD_BYTES, &j);
    if (perr_) {
        err = qerr("the string is not JSON: %s", swf_error_message(perr_));
        swf_error_free(perr_);
        return err;
    }
    *out = val_take(j);
    return NULL;
}

static swf_error_t *fn_type(call_t *c, val_t *out)
{
    const val_t *v = arg(c, 0);
    if (defined(v))
        *out = val_take(json_object_new_string(type_name(v)));
    return NULL;
}

static swf_error_t *fn_base64encode(call_t *c, val_t *out)
{
    const char *s;
    size_t n;
    char *enc = NULL;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_string(c, 0, &s, &n);
    if (!err)
        err = swf_base64_encode(s, n, &enc);
    if (!err)
        *out = val_take(json_object_new_string(enc));
    free(enc);
    return err;
}

static swf_error_t *fn_base64decode(call_t *c, val_t *out)
{
    const char *s;
    size_t n, dn;
    uint8_t *dec = NULL;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_string(c, 0, &s, &n);
    if (err)
        return err;
    swf_error_t *derr = swf_base64_decode(s, n, &dec, &dn);
    if (derr) {
        err = qerr("%s", swf_error_message(derr));
        swf_error_free(derr);
        return err;
    }
    /* as JSONata's decodeURIComponent step: the bytes must be UTF-8 text */
    if (swf_json_utf8_invalid_at((const char *)dec, dn) < dn)
        err = qerr("the decoded data is not UTF-8 text");
    else
        *out = string_val((const char *)dec, dn);
    free(dec);
    return err;
}

/* ------------------------------------------------------------------------ */
/* Dates                                                                    */
/* ------------------------------------------------------------------------ */

/* Reads n digits at *p. */
static bool digits(const char **p, int n, int *out)
{
    *out = 0;
    for (int i = 0; i < n; i++, (*p)++) {
        if (!isdigit((unsigned char)**p))
            return false;
        *out = *out * 10 + (**p - '0');
    }
    return true;
}

/* An ISO 8601 time zone at *p: Z, or +HH:MM, +HHMM (or -). Minutes east. */
static bool zone_parse(const char **p, int *minutes)
{
    int h, m;
    if (**p == 'Z') {
        (*p)++;
        *minutes = 0;
        return true;
    }
    if (**p != '+' && **p != '-')
        return false;
    int sign = **p == '-' ? -1 : 1;
    (*p)++;
    if (!digits(p, 2, &h))
        return false;
    if (**p == ':')
        (*p)++;
    if (!digits(p, 2, &m) || h > 23 || m > 59)
        return false;
    *minutes = sign * (h * 60 + m);
    return true;
}

/* The ISO 8601 forms JSONata's $toMillis reads without a picture:
 * YYYY[-MM[-DD]][THH:MM:SS[.fff]][Z|+HH:MM]. A time without a zone is UTC,
 * as it is where Step Functions evaluates it. The fields are read here and
 * checked (days of the month, leap years) by protocol/time.c. */
static bool iso8601_parse(const char *s, double *millis)
{
    int year, month = 1, day = 1, hour = 0, min = 0, sec = 0, ms = 0, zone = 0;
    const char *p = s;
    if (!digits(&p, 4, &year))
        return false;
    if (*p == '-') {
        p++;
        if (!digits(&p, 2, &month))
            return false;
        if (*p == '-') {
            p++;
            if (!digits(&p, 2, &day))
                return false;
        }
    }
    if (*p == 'T') {
        p++;
        if (!digits(&p, 2, &hour) || *p++ != ':' || !digits(&p, 2, &min) || *p++ != ':' ||
            !digits(&p, 2, &sec))
            return false;
        if (*p == '.') {
            p++;
            if (!isdigit((unsigned char)*p))
                return false;
            int i = 0; /* milliseconds: the first three digits, as Date.parse */
            for (; isdigit((unsigned char)*p); i++, p++) {
                if (i < 3)
                    ms = ms * 10 + (*p - '0');
            }
            for (; i < 3; i++)
                ms *= 10;
        }
    }
    if (*p != '\0' && !zone_parse(&p, &zone))
        return false;
    if (*p != '\0')
        return false;
    char canonical[64];
    swf_time_t t;
    snprintf(canonical, sizeof canonical, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", year, month, day,
             hour, min, sec, ms);
    if (!swf_time_parse(canonical, &t))
        return false;
    *millis = (double)(swf_time_to_ms(t) - (int64_t)zone * 60000);
    return true;
}

static swf_error_t *fn_to_millis(call_t *c, val_t *out)
{
    const char *s;
    size_t n;
    double millis;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_string(c, 0, &s, &n);
    if (err)
        return err;
    if (has_arg(c, 1)) {
        /* with a picture (picture.c): what the text lacks is taken from
         * the decision's time, as $now would give it */
        const char *pic;
        size_t npic;
        bool matched;
        int64_t now_ms = c->ctx->env != NULL ? c->ctx->env->now_ms : 0;
        if ((err = want_string(c, 1, &pic, &npic)) ||
            (err = swf_asl_picture_date_parse(s, n, pic, npic, now_ms, &millis, &matched)))
            return err;
        return matched ? number_val(millis, out) : NULL;
    }
    if (strlen(s) != n || !iso8601_parse(s, &millis))
        return qerr("the timestamp \"%.60s\" is not ISO 8601 (YYYY-MM-DDTHH:MM:SS.sssZ)", s);
    return number_val(millis, out);
}

static swf_error_t *fn_from_millis(call_t *c, val_t *out)
{
    double millis;
    int zone = 0;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_number(c, 0, &millis);
    const char *pic = NULL;
    size_t n, npic = 0;
    if (!err && has_arg(c, 1))
        err = want_string(c, 1, &pic, &npic);
    if (err)
        return err;
    if (has_arg(c, 2)) {
        const char *tz, *p;
        if ((err = want_string(c, 2, &tz, &n)))
            return err;
        /* [+-]HHMM, read as jsonata-js reads it: the number v = [+-]HHMM
         * is floor(v / 100) hours and v % 100 minutes, so that -0530 is
         * -06:30 (what Step Functions gives) */
        p = tz + (tz[0] == '+' || tz[0] == '-');
        int hhmm;
        if (strlen(tz) != n || !digits(&p, 4, &hhmm) || *p != '\0')
            return qerr("argument 3 (timezone) must be +HHMM or -HHMM, not \"%.20s\"", tz);
        int v = tz[0] == '-' ? -hhmm : hhmm;
        zone = (v >= 0 ? v / 100 : -((-v + 99) / 100)) * 60 + v % 100;
    }
    /* years 0 to 9999, which ISO 8601's four digits can write */
    double shown = trunc(millis) + zone * 60000.0;
    if (!(shown >= -62167219200000.0 && shown < 253402300800000.0))
        return qerr("%.17g milliseconds is outside the years 0 to 9999", millis);
    if (pic == NULL) {
        pic = "[Y0001]-[M01]-[D01]T[H01]:[m01]:[s01].[f001][Z01:01t]";
        npic = strlen(pic);
    }
    char *text;
    size_t len;
    err = swf_asl_picture_date_format((int64_t)trunc(millis), zone, pic, npic, &text, &len);
    if (!err)
        *out = string_val(text, len);
    free(text);
    return err;
}

/* $formatInteger(number, picture): XPath's format-integer (picture.c). */
static swf_error_t *fn_format_integer(call_t *c, val_t *out)
{
    double d;
    const char *pic;
    size_t n;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_number(c, 0, &d);
    if (!err)
        err = want_string(c, 1, &pic, &n);
    char *text;
    size_t len;
    if (!err && !(err = swf_asl_picture_integer_format(d, pic, n, &text, &len))) {
        *out = string_val(text, len);
        free(text);
    }
    return err;
}

/* $parseInteger(string, picture): the inverse (picture.c). */
static swf_error_t *fn_parse_integer(call_t *c, val_t *out)
{
    const char *s, *pic;
    size_t n, npic;
    double d;
    if (!has_arg(c, 0))
        return NULL;
    swf_error_t *err = want_string(c, 0, &s, &n);
    if (!err)
        err = want_string(c, 1, &pic, &npic);
    if (!err)
        err = swf_asl_picture_integer_parse(s, n, pic, npic, &d);
    return err ? err : number_val(d, out);
}

static const builtin_t builtins[] = {
    {"string", fn_string, 1, 2, true},
    {"number", fn_number, 1, 1, true},
    {"boolean", fn_boolean, 1, 1, true},
    {"not", fn_not, 1, 1, true},
    {"exists", fn_exists, 1, 1, false},
    {"count", fn_count, 1, 1, false},
    {"sum", fn_sum, 1, 1, false},
    {"max", fn_max, 1, 1, false},
    {"min", fn_min, 1, 1, false},
    {"average", fn_average, 1, 1, false},
    {"length", fn_length, 1, 1, true},
    {"substring", fn_substring, 2, 3, true},
    {"substringBefore", fn_substring_before, 2, 2, true},
    {"substringAfter", fn_substring_after, 2, 2, true},
    {"uppercase", fn_uppercase, 1, 1, true},
    {"lowercase", fn_lowercase, 1, 1, true},
    {"trim", fn_trim, 1, 1, true},
    {"contains", fn_contains, 2, 2, true},
    {"split", fn_split, 2, 3, true},
    {"join", fn_join, 1, 2, false},
    {"replace", fn_replace, 3, 4, true},
    {"match", fn_match, 2, 3, true},
    {"pad", fn_pad, 2, 3, true},
    {"error", fn_error, 0, 1, false},
    {"assert", fn_assert, 1, 2, false},
    {"zip", fn_zip, 1, 8, false},
    {"spread", fn_spread, 1, 1, false},
    {"encodeUrlComponent", fn_encode_url_component, 1, 1, true},
    {"encodeUrl", fn_encode_url, 1, 1, true},
    {"decodeUrlComponent", fn_decode_url_component, 1, 1, true},
    {"decodeUrl", fn_decode_url, 1, 1, true},
    {"keys", fn_keys, 1, 1, false},
    {"lookup", fn_lookup, 2, 2, false},
    {"append", fn_append, 2, 2, false},
    {"reverse", fn_reverse, 1, 1, false},
    {"sort", fn_sort, 1, 2, false},
    {"map", fn_map, 2, 2, false},
    {"filter", fn_filter, 2, 2, false},
    {"single", fn_single, 1, 2, false},
    {"reduce", fn_reduce, 2, 3, false},
    {"sift", fn_sift, 2, 2, true},
    {"each", fn_each, 2, 2, true},
    {"toMillis", fn_to_millis, 1, 2, true},
    {"fromMillis", fn_from_millis, 1, 3, true},
    {"distinct", fn_distinct, 1, 1, false},
    {"merge", fn_merge, 1, 1, false},
    {"round", fn_round, 1, 2, true},
    {"floor", fn_floor, 1, 1, true},
    {"ceil", fn_ceil, 1, 1, true},
    {"abs", fn_abs, 1, 1, true},
    {"power", fn_power, 2, 2, true},
    {"formatBase", fn_format_base, 1, 2, true},
    {"formatNumber", fn_format_number, 2, 3, true},
    {"formatInteger", fn_format_integer, 2, 2, true},
    {"parseInteger", fn_parse_integer, 2, 2, true},
    {"sqrt", fn_sqrt, 1, 1, true},
    {"type", fn_type, 1, 1, false},
    {"base64encode", fn_base64encode, 1, 1, true},
    {"base64decode", fn_base64decode, 1, 1, true},
    /* Step Functions' additions */
    {"partition", fn_partition, 2, 2, false},
    {"range", fn_range, 2, 3, false},
    {"hash", fn_hash, 1, 2, false},
    {"parse", fn_parse, 1, 1, false},
    /* not deterministic: refused (see the top of the file) */
    {"now", fn_now, 0, 2, false},
    {"millis", fn_millis, 0, 0, false},
    {"random", fn_random, 0, 1, false},
    {"uuid", fn_uuid, 0, 0, false},
    {"shuffle", fn_shuffle, 1, 1, false},
};

static const builtin_t *builtin_find(const char *name)
{
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
        if (strcmp(builtins[i].name, name) == 0)
            return &builtins[i];
    }
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Public interface                                                         */
/* ------------------------------------------------------------------------ */

bool swf_asl_jsonata_is_expr(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    return n >= 4 && s[0] == '{' && s[1] == '%' && s[n - 2] == '%' && s[n - 1] == '}';
}

swf_error_t *swf_asl_jsonata_check(const char *expr)
{
    char err[256];
    node_t *root = parse(expr, err);
    if (root == NULL)
        return swf_error_new(SWF_E_INPUT, NULL, "invalid JSONata expression: %s", err);
    node_free(root);
    return NULL;
}

swf_error_t *swf_asl_jsonata_eval(const char *expr, json_object *bindings, json_object **out,
                                  bool *is_defined)
{
    char msg[256];
    *out = NULL;
    *is_defined = false;
    node_t *root = parse(expr, msg);
    if (root == NULL)
        return qerr("invalid JSONata expression: %s", msg);
    ctx_t ctx = {.bindings = bindings,
                 .env = bindings != NULL ? json_object_get_userdata(bindings) : NULL,
                 .fallback = {0x5eed5eed5eed5eedULL}};
    frame_t *top = frame_new(NULL);
    val_t v = UNDEF;
    swf_error_t *err = eval(&ctx, root, &UNDEF, top, &v);
    if (!err && is_func(&v))
        err = qerr("the value of the expression is %s, not JSON", func_what(&v));
    if (!err && defined(&v)) {
        *out = v.j;
        v.j = NULL;
        *is_defined = true;
    }
    val_free(&v);
    frame_release(top);
    ctx_free(&ctx);
    node_free(root);
    return err;
}

/* `where` names the value for messages ("" at the top). */
static swf_error_t *template_eval(json_object *t, json_object *bindings, const char *where,
                                  int depth, json_object **out, bool *is_defined)
{
    *out = NULL;
    *is_defined = true;
    swf_error_t *err = NULL;
    if (depth > SWF_LIMIT_JSON_DEPTH)
        return qerr("the template is nested too deep");
    if (is_string(t) && swf_asl_jsonata_is_expr(json_object_get_string(t))) {
        const char *s = json_object_get_string(t);
        char *expr = strndup(s + 2, strlen(s) - 4);
        if (expr == NULL)
            abort();
        err = swf_asl_jsonata_eval(expr, bindings, out, is_defined);
        free(expr);
        if (err && where[0])
            swf_error_prefix(err, "field %s", where);
        return err;
    }
    if (is_object(t)) {
        json_object *obj = json_object_new_object();
        json_object_object_foreach(t, key, v)
        {
            char sub[256];
            snprintf(sub, sizeof sub, "%s%s%s", where, where[0] ? "." : "", key);
            json_object *r;
            bool d;
            if ((err = template_eval(v, bindings, sub, depth + 1, &r, &d)))
                break;
            if (!d) {
                err = qerr("the expression of field %s has no value (undefined)", sub);
                break;
            }
            json_object_object_add(obj, key, r);
        }
        if (err)
            json_object_put(obj);
        else
            *out = obj;
        return err;
    }
    if (is_array(t)) {
        size_t n = json_object_array_length(t);
        json_object *arr = json_object_new_array_ext((int)n);
        for (size_t i = 0; i < n; i++) {
            char sub[256];
            snprintf(sub, sizeof sub, "%s[%zu]", where, i);
            json_object *r;
            bool d;
            if ((err = template_eval(json_object_array_get_idx(t, i), bindings, sub, depth + 1, &r,
                                     &d)))
                break;
            if (!d) {
                err = qerr("the expression of item %s has no value (undefined)", sub);
                break;
            }
            json_object_array_add(arr, r);
        }
        if (err)
            json_object_put(arr);
        else
            *out = arr;
        return err;
    }
    *out = swf_json_ref(t);
    return NULL;
}

swf_error_t *swf_asl_jsonata_template_eval(json_object *tmpl, json_object *bindings,
                                           json_object **out, bool *is_defined)
{
    swf_error_t *err = template_eval(tmpl, bindings, "", 0, out, is_defined);
    if (err) {
        json_object_put(*out);
        *out = NULL;
        *is_defined = false;
    }
    return err;
}
