/*
 * path.c - JSONPath (Jayway syntax, as ASL uses it): parsing, evaluation and
 * the ResultPath setter.
 *
 * A path is parsed into a linked list of segments (field, index, wildcard,
 * slice, union, filter; each may be "deep", i.e. applied at every node below
 * as `..` asks) and then walked. Nothing is cached between calls: paths are
 * short, so parsing is a few hundred nanoseconds, and every allocation of a
 * parse comes from a small arena whose first kilobyte lives on the caller's
 * stack, so evaluating "$.a.b" allocates nothing but the result. This keeps
 * the module reentrant with no global state, which matters because a Map over
 * 100,000 items evaluates the same paths 100,000 times.
 *
 * Evaluation never copies the input: a definite path returns a new reference
 * to the node it selects, an indefinite one a new array holding references
 * to the matches. The setter copies only the objects on the spine from the
 * root to the target and shares everything else, as values are immutable.
 *
 * Deliberately not supported: Jayway's functions ($.length()), script
 * expressions ([(...)]), regular expressions (=~) and the in/nin/subsetof
 * operators of filters. Each is refused by the syntax check with a sentence
 * saying so.
 */
#include "decider/asl/path.h"

#include <errno.h>
#include <limits.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/json.h"
#include "protocol/limits.h"

/* How deeply filter expressions may nest (parentheses, !, paths inside
 * filters); bounds the recursion of the parser and the evaluator. */
#define PATH_FILTER_DEPTH_MAX 64

/* Indexes beyond this are refused: no array can be that long. */
#define PATH_INDEX_ABS_MAX 1000000000000LL

/* How much of a document an error message quotes. */
#define PATH_MESSAGE_DOC_CHARS 200

/* ---- arena ------------------------------------------------------------- */

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t size, used;
    alignas(max_align_t) unsigned char data[];
} arena_chunk_t;

typedef struct arena {
    size_t used;
    alignas(max_align_t) unsigned char first[1024];
    arena_chunk_t *chunks;
    json_object *literals; /* an array owning the literal values of filters */
} arena_t;

static void arena_init(arena_t *a)
{
    a->used = 0;
    a->chunks = NULL;
    a->literals = NULL;
}

static void arena_release(arena_t *a)
{
    while (a->chunks != NULL) {
        arena_chunk_t *next = a->chunks->next;
        free(a->chunks);
        a->chunks = next;
    }
    json_object_put(a->literals);
    a->literals = NULL;
}

static void *arena_alloc(arena_t *a, size_t size)
{
    const size_t align = alignof(max_align_t);
    size = (size + align - 1) / align * align;
    if (size <= sizeof a->first - a->used) {
        void *p = a->first + a->used;
        a->used += size;
        return p;
    }
    arena_chunk_t *c = a->chunks;
    if (c == NULL || size > c->size - c->used) {
        size_t cap = size > 4096 ? size : 4096;
        c = malloc(sizeof *c + cap);
        if (c == NULL)
            return NULL;
        c->size = cap;
        c->used = 0;
        c->next = a->chunks;
        a->chunks = c;
    }
    void *p = c->data + c->used;
    c->used += size;
    return p;
}

/* ---- syntax tree ------------------------------------------------------- */

typedef enum seg_kind {
    SEG_FIELD,
    SEG_INDEX,
    SEG_WILDCARD,
    SEG_SLICE,
    SEG_NAMES,   /* union of field names */
    SEG_INDEXES, /* union of indexes */
    SEG_FILTER,
} seg_kind_t;

typedef struct filter filter_t;

typedef struct seg {
    seg_kind_t kind;
    bool deep; /* reached through "..": applies at this node and all below */
    struct seg *next;
    const char *name;           /* SEG_FIELD */
    long long index;            /* SEG_INDEX */
    long long start, end, step; /* SEG_SLICE */
    bool has_start, has_end;
    const char **names; /* SEG_NAMES */
    long long *indexes; /* SEG_INDEXES */
    size_t count;       /* of names or indexes */
    filter_t *filter;   /* SEG_FILTER */
} seg_t;

typedef enum root_kind {
    ROOT_INPUT,    /* "$" at the top level, or inside a filter: the document */
    ROOT_CONTEXT,  /* "$$" */
    ROOT_VARIABLE, /* "$name" */
    ROOT_CURRENT,  /* "@" inside a filter */
} root_kind_t;

typedef struct jpath {
    root_kind_t root;
    const char *variable; /* ROOT_VARIABLE */
    seg_t *segs;
    bool definite;
} jpath_t;

typedef enum cmp_op { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE } cmp_op_t;

typedef struct operand {
    jpath_t *path;        /* a path, or NULL for a literal */
    json_object *literal; /* borrowed from the arena's literals */
} operand_t;

typedef enum filter_kind {
    FILTER_OR,
    FILTER_AND,
    FILTER_NOT,
    FILTER_CMP,
    FILTER_EXISTS
} filter_kind_t;

struct filter {
    filter_kind_t kind;
    filter_t *a, *b; /* OR, AND: both; NOT: a */
    cmp_op_t op;
    operand_t left, right; /* CMP: both; EXISTS: left */
};

/* ---- parser ------------------------------------------------------------ */

typedef struct parser {
    const char *s;
    size_t len, pos;
    arena_t *arena;
    swf_error_t *err;
    int depth;
} parser_t;

static bool parse_fail(parser_t *p, swf_code_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool parse_fail(parser_t *p, swf_code_t code, const char *fmt, ...)
{
    if (p->err != NULL)
        return false;
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    p->err = swf_error_new(code, NULL, "%s", msg);
    return false;
}

static void *parse_alloc(parser_t *p, size_t size)
{
    void *mem = arena_alloc(p->arena, size);
    if (mem == NULL)
        parse_fail(p, SWF_E_NOMEM, "out of memory");
    else
        memset(mem, 0, size);
    return mem;
}

static char peek(const parser_t *p)
{
    return p->pos < p->len ? p->s[p->pos] : '\0';
}

static char peek_at(const parser_t *p, size_t ahead)
{
    return p->pos + ahead < p->len ? p->s[p->pos + ahead] : '\0';
}

static void skip_space(parser_t *p)
{
    while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
                               p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
        p->pos++;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_var_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) || c == '_';
}

/* Characters that end a name in dot notation. Inside a filter the operators
 * and white space end it too ("@.price<10"). */
static bool ends_dot_name(char c, bool in_filter)
{
    if (c == '\0' || c == '.' || c == '[' || c == ']' || c == '(' || c == ')' || c == '\'' ||
        c == '"' || c == ' ' || c == '\t' || c == '\n' || c == '\r')
        return true;
    return in_filter && strchr("=!<>&|,", c) != NULL;
}

static char *parse_dot_name(parser_t *p, bool in_filter)
{
    size_t start = p->pos;
    while (p->pos < p->len && !ends_dot_name(p->s[p->pos], in_filter))
        p->pos++;
    size_t n = p->pos - start;
    if (n == 0) {
        parse_fail(p, SWF_E_INPUT, "expected a field name at offset %zu", start);
        return NULL;
    }
    if (peek(p) == '(') {
        parse_fail(p, SWF_E_INPUT, "functions such as '%.*s()' are not supported in a path",
                   (int)(n > 40 ? 40 : n), p->s + start);
        return NULL;
    }
    char *name = parse_alloc(p, n + 1);
    if (name != NULL)
        memcpy(name, p->s + start, n);
    return name;
}

/* The character an escape \c of a filter's literal stands for. */
static char escaped_char(char c)
{
    switch (c) {
    case 'n':
        return '\n';
    case 't':
        return '\t';
    case 'r':
        return '\r';
    case 'b':
        return '\b';
    case 'f':
        return '\f';
    default:
        return c;
    }
}

/* A quoted string ('...' or "..."). In a filter's literal a backslash
 * escapes the next character (\n, \t, \r, \b, \f as in JSON). In a field
 * name of bracket notation (field_name) AWS knows two escapes only, a
 * backslash before the quote that delimits the name or before another
 * backslash; any other backslash is kept with the character after it
 * (recorded: $['Test\""Name"'] names the field Test\""Name"). Returns the
 * unescaped text in the arena. */
static char *parse_quoted(parser_t *p, size_t *len_out, bool field_name)
{
    size_t open = p->pos;
    char quote = p->s[p->pos++];
    /* Size the buffer by the quoted text alone, so that a long path of many
     * short names does not allocate the rest of the path for each. */
    size_t end = p->pos;
    while (end < p->len && p->s[end] != quote)
        end += p->s[end] == '\\' ? 2 : 1;
    if (end > p->len)
        end = p->len;
    char *buf = parse_alloc(p, end - p->pos + 1);
    if (buf == NULL)
        return NULL;
    size_t n = 0;
    while (p->pos < p->len && p->s[p->pos] != quote) {
        char c = p->s[p->pos++];
        if (c == '\\') {
            if (p->pos >= p->len)
                break;
            c = p->s[p->pos++];
            if (!field_name)
                c = escaped_char(c);
            else if (c != quote && c != '\\')
                buf[n++] = '\\';
        }
        buf[n++] = c;
    }
    if (p->pos >= p->len) {
        parse_fail(p, SWF_E_INPUT, "unterminated string at offset %zu", open);
        return NULL;
    }
    p->pos++; /* the closing quote */
    buf[n] = '\0';
    if (len_out != NULL)
        *len_out = n;
    return buf;
}

static bool parse_int(parser_t *p, long long *out)
{
    size_t start = p->pos;
    bool neg = false;
    if (peek(p) == '-' || peek(p) == '+') {
        neg = peek(p) == '-';
        p->pos++;
    }
    if (!is_digit(peek(p)))
        return parse_fail(p, SWF_E_INPUT, "expected an integer at offset %zu", start);
    long long v = 0;
    while (is_digit(peek(p))) {
        v = v * 10 + (p->s[p->pos++] - '0');
        if (v > PATH_INDEX_ABS_MAX)
            return parse_fail(p, SWF_E_INPUT, "the index at offset %zu is too large", start);
    }
    *out = neg ? -v : v;
    return true;
}

static filter_t *parse_filter_or(parser_t *p);
static jpath_t *parse_path_at(parser_t *p, bool in_filter);

/* The inside of brackets after '['; p->pos is just past the '['. */
static bool parse_bracket(parser_t *p, seg_t *seg, size_t open)
{
    skip_space(p);
    char c = peek(p);
    if (c == '\0')
        return parse_fail(p, SWF_E_INPUT, "unterminated bracket at offset %zu", open);
    if (c == '?') {
        p->pos++;
        skip_space(p);
        if (peek(p) != '(')
            return parse_fail(p, SWF_E_INPUT, "expected '(' after '?' at offset %zu", p->pos);
        p->pos++;
        seg->kind = SEG_FILTER;
        seg->filter = parse_filter_or(p);
        if (seg->filter == NULL)
            return false;
        skip_space(p);
        if (peek(p) != ')')
            return parse_fail(p, SWF_E_INPUT, "expected ')' at offset %zu", p->pos);
        p->pos++;
    } else if (c == '(') {
        return parse_fail(p, SWF_E_INPUT, "script expressions are not supported in a path");
    } else if (c == '*') {
        p->pos++;
        seg->kind = SEG_WILDCARD;
    } else if (c == '\'' || c == '"') {
        size_t cap = (p->len - p->pos) / 3 + 1;
        const char **names = parse_alloc(p, cap * sizeof *names);
        if (names == NULL)
            return false;
        size_t n = 0;
        for (;;) {
            if (peek(p) != '\'' && peek(p) != '"')
                return parse_fail(p, SWF_E_INPUT, "expected a quoted field name at offset %zu",
                                  p->pos);
            if (n >= cap)
                return parse_fail(p, SWF_E_INPUT, "too many names in a union");
            names[n] = parse_quoted(p, NULL, true);
            if (names[n] == NULL)
                return false;
            n++;
            skip_space(p);
            if (peek(p) != ',')
                break;
            p->pos++;
            skip_space(p);
        }
        if (n == 1) {
            seg->kind = SEG_FIELD;
            seg->name = names[0];
        } else {
            seg->kind = SEG_NAMES;
            seg->names = names;
            seg->count = n;
        }
    } else if (is_digit(c) || c == '-' || c == '+' || c == ':') {
        long long first = 0;
        bool has_first = c != ':';
        if (has_first && !parse_int(p, &first))
            return false;
        skip_space(p);
        if (peek(p) == ':') {
            seg->kind = SEG_SLICE;
            seg->has_start = has_first;
            seg->start = first;
            seg->step = 1;
            p->pos++;
            skip_space(p);
            if (peek(p) != ':' && peek(p) != ']') {
                if (!parse_int(p, &seg->end))
                    return false;
                seg->has_end = true;
                skip_space(p);
            }
            if (peek(p) == ':') {
                p->pos++;
                skip_space(p);
                if (peek(p) != ']') {
                    if (!parse_int(p, &seg->step))
                        return false;
                    if (seg->step == 0)
                        return parse_fail(p, SWF_E_INPUT, "a slice step cannot be zero");
                    skip_space(p);
                }
            }
        } else if (peek(p) == ',') {
            size_t cap = (p->len - p->pos) / 2 + 2;
            long long *idx = parse_alloc(p, cap * sizeof *idx);
            if (idx == NULL)
                return false;
            size_t n = 0;
            idx[n++] = first;
            while (peek(p) == ',') {
                p->pos++;
                skip_space(p);
                if (n >= cap)
                    return parse_fail(p, SWF_E_INPUT, "too many indexes in a union");
                if (!parse_int(p, &idx[n]))
                    return false;
                n++;
                skip_space(p);
            }
            seg->kind = SEG_INDEXES;
            seg->indexes = idx;
            seg->count = n;
        } else {
            seg->kind = SEG_INDEX;
            seg->index = first;
        }
    } else {
        return parse_fail(p, SWF_E_INPUT, "unexpected character '%c' in brackets at offset %zu", c,
                          p->pos);
    }
    skip_space(p);
    if (peek(p) == '\0')
        return parse_fail(p, SWF_E_INPUT, "unterminated bracket at offset %zu", open);
    if (peek(p) != ']')
        return parse_fail(p, SWF_E_INPUT, "expected ']' at offset %zu", p->pos);
    p->pos++;
    return true;
}

/* The segments after the root. At the top level the path must end here;
 * inside a filter, the first character that cannot continue a path ends it. */
static bool parse_segments(parser_t *p, jpath_t *path, bool in_filter)
{
    seg_t **tail = &path->segs;
    path->definite = true;
    for (;;) {
        char c = peek(p);
        if (c == '\0')
            return true;
        if (c != '.' && c != '[') {
            if (in_filter)
                return true;
            return parse_fail(p, SWF_E_INPUT, "unexpected character '%c' at offset %zu", c, p->pos);
        }
        seg_t *seg = parse_alloc(p, sizeof *seg);
        if (seg == NULL)
            return false;
        size_t at = p->pos;
        if (c == '.') {
            p->pos++;
            if (peek(p) == '.') {
                p->pos++;
                seg->deep = true;
            }
            c = peek(p);
            if (c == '*') {
                p->pos++;
                seg->kind = SEG_WILDCARD;
            } else if (c == '[') {
                p->pos++;
                if (!parse_bracket(p, seg, at + (seg->deep ? 2 : 1)))
                    return false;
            } else if (c == '\0' || c == '.') {
                return parse_fail(p, SWF_E_INPUT, "expected a field name after '.' at offset %zu",
                                  at);
            } else {
                seg->kind = SEG_FIELD;
                seg->name = parse_dot_name(p, in_filter);
                if (seg->name == NULL)
                    return false;
            }
        } else {
            p->pos++;
            if (!parse_bracket(p, seg, at))
                return false;
        }
        if (seg->deep || (seg->kind != SEG_FIELD && seg->kind != SEG_INDEX))
            path->definite = false;
        *tail = seg;
        tail = &seg->next;
    }
}

/* A whole path: the root, then segments. */
static jpath_t *parse_path_at(parser_t *p, bool in_filter)
{
    jpath_t *path = parse_alloc(p, sizeof *path);
    if (path == NULL)
        return NULL;
    char c = peek(p);
    if (c == '@' && in_filter) {
        p->pos++;
        path->root = ROOT_CURRENT;
    } else if (c == '$') {
        p->pos++;
        path->root = ROOT_INPUT;
        if (!in_filter && peek(p) == '$') {
            p->pos++;
            path->root = ROOT_CONTEXT;
        } else if (!in_filter && is_var_char(peek(p))) {
            size_t start = p->pos;
            while (is_var_char(peek(p)))
                p->pos++;
            char *name = parse_alloc(p, p->pos - start + 1);
            if (name == NULL)
                return NULL;
            memcpy(name, p->s + start, p->pos - start);
            path->root = ROOT_VARIABLE;
            path->variable = name;
        }
    } else {
        parse_fail(p, SWF_E_INPUT, "a path must start with '$'");
        return NULL;
    }
    if (!parse_segments(p, path, in_filter))
        return NULL;
    return path;
}

/* A literal of a filter: a string, a number, true, false or null. */
static bool parse_literal(parser_t *p, operand_t *op)
{
    json_object *v = NULL;
    char c = peek(p);
    size_t start = p->pos;
    if (c == '\'' || c == '"') {
        size_t n = 0;
        char *s = parse_quoted(p, &n, false);
        if (s == NULL)
            return false;
        v = json_object_new_string_len(s, (int)n);
    } else if (is_digit(c) || c == '-') {
        size_t i = p->pos;
        if (p->s[i] == '-')
            i++;
        if (i >= p->len || !is_digit(p->s[i]))
            return parse_fail(p, SWF_E_INPUT, "expected a number at offset %zu", start);
        bool integral = true;
        while (i < p->len && is_digit(p->s[i]))
            i++;
        if (i < p->len && p->s[i] == '.') {
            integral = false;
            i++;
            if (i >= p->len || !is_digit(p->s[i]))
                return parse_fail(p, SWF_E_INPUT, "expected a digit at offset %zu", i);
            while (i < p->len && is_digit(p->s[i]))
                i++;
        }
        if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
            integral = false;
            i++;
            if (i < p->len && (p->s[i] == '+' || p->s[i] == '-'))
                i++;
            if (i >= p->len || !is_digit(p->s[i]))
                return parse_fail(p, SWF_E_INPUT, "expected a digit at offset %zu", i);
            while (i < p->len && is_digit(p->s[i]))
                i++;
        }
        char buf[64];
        size_t n = i - start;
        if (n >= sizeof buf)
            return parse_fail(p, SWF_E_INPUT, "the number at offset %zu is too long", start);
        memcpy(buf, p->s + start, n);
        buf[n] = '\0';
        p->pos = i;
        errno = 0;
        long long ll = integral ? strtoll(buf, NULL, 10) : 0;
        if (integral && errno == 0)
            v = json_object_new_int64(ll);
        else
            v = json_object_new_double(strtod(buf, NULL));
    } else if (strncmp(p->s + p->pos, "true", 4) == 0 && p->pos + 4 <= p->len) {
        p->pos += 4;
        v = json_object_new_boolean(1);
    } else if (strncmp(p->s + p->pos, "false", 5) == 0 && p->pos + 5 <= p->len) {
        p->pos += 5;
        v = json_object_new_boolean(0);
    } else if (strncmp(p->s + p->pos, "null", 4) == 0 && p->pos + 4 <= p->len) {
        p->pos += 4;
        op->literal = NULL;
        return true;
    } else if (c == '/') {
        return parse_fail(p, SWF_E_INPUT, "regular expressions are not supported in a filter");
    } else if (c == '\0') {
        return parse_fail(p, SWF_E_INPUT, "the filter expression ends too early");
    } else {
        return parse_fail(p, SWF_E_INPUT, "unexpected character '%c' in a filter at offset %zu", c,
                          start);
    }
    if (v == NULL)
        return parse_fail(p, SWF_E_NOMEM, "out of memory");
    if (p->arena->literals == NULL)
        p->arena->literals = json_object_new_array();
    if (p->arena->literals == NULL) {
        json_object_put(v);
        return parse_fail(p, SWF_E_NOMEM, "out of memory");
    }
    json_object_array_add(p->arena->literals, v);
    op->literal = v;
    return true;
}

static bool parse_operand(parser_t *p, operand_t *op)
{
    skip_space(p);
    char c = peek(p);
    if (c == '@' || c == '$') {
        if (c == '$' && (peek_at(p, 1) == '$' || is_var_char(peek_at(p, 1))))
            return parse_fail(p, SWF_E_INPUT,
                              "a filter may only refer to '@' or to the document '$'");
        op->path = parse_path_at(p, true);
        return op->path != NULL;
    }
    return parse_literal(p, op);
}

static bool parse_cmp_op(parser_t *p, cmp_op_t *op)
{
    skip_space(p);
    char c = peek(p), d = peek_at(p, 1);
    if (c == '=' && d == '=') {
        *op = CMP_EQ;
        p->pos += 2;
    } else if (c == '!' && d == '=') {
        *op = CMP_NE;
        p->pos += 2;
    } else if (c == '<' && d == '=') {
        *op = CMP_LE;
        p->pos += 2;
    } else if (c == '>' && d == '=') {
        *op = CMP_GE;
        p->pos += 2;
    } else if (c == '<') {
        *op = CMP_LT;
        p->pos++;
    } else if (c == '>') {
        *op = CMP_GT;
        p->pos++;
    } else if (c == '=' && d == '~') {
        return parse_fail(p, SWF_E_INPUT, "regular expressions are not supported in a filter");
    } else if (c == '=') {
        return parse_fail(p, SWF_E_INPUT, "use '==' to compare in a filter (offset %zu)", p->pos);
    } else {
        return false;
    }
    return true;
}

static filter_t *parse_filter_unary(parser_t *p)
{
    if (++p->depth > PATH_FILTER_DEPTH_MAX) {
        parse_fail(p, SWF_E_INPUT, "the filter expression is nested too deeply");
        return NULL;
    }
    filter_t *f = NULL;
    skip_space(p);
    if (peek(p) == '!' && peek_at(p, 1) != '=') {
        p->pos++;
        filter_t *inner = parse_filter_unary(p);
        if (inner == NULL)
            goto done;
        f = parse_alloc(p, sizeof *f);
        if (f == NULL)
            goto done;
        f->kind = FILTER_NOT;
        f->a = inner;
    } else if (peek(p) == '(') {
        p->pos++;
        filter_t *inner = parse_filter_or(p);
        if (inner == NULL)
            goto done;
        skip_space(p);
        if (peek(p) != ')') {
            parse_fail(p, SWF_E_INPUT, "expected ')' at offset %zu", p->pos);
            goto done;
        }
        p->pos++;
        f = inner;
    } else {
        f = parse_alloc(p, sizeof *f);
        if (f == NULL || !parse_operand(p, &f->left)) {
            f = NULL;
            goto done;
        }
        if (parse_cmp_op(p, &f->op)) {
            f->kind = FILTER_CMP;
            if (!parse_operand(p, &f->right))
                f = NULL;
        } else if (p->err != NULL) {
            f = NULL;
        } else if (f->left.path == NULL) {
            parse_fail(p, SWF_E_INPUT, "expected a comparison after the literal at offset %zu",
                       p->pos);
            f = NULL;
        } else {
            f->kind = FILTER_EXISTS;
        }
    }
done:
    p->depth--;
    return f;
}

static filter_t *parse_filter_and(parser_t *p)
{
    filter_t *a = parse_filter_unary(p);
    for (;;) {
        if (a == NULL)
            return NULL;
        skip_space(p);
        if (peek(p) != '&' || peek_at(p, 1) != '&')
            return a;
        p->pos += 2;
        filter_t *b = parse_filter_unary(p);
        filter_t *f = b ? parse_alloc(p, sizeof *f) : NULL;
        if (f == NULL)
            return NULL;
        f->kind = FILTER_AND;
        f->a = a;
        f->b = b;
        a = f;
    }
}

static filter_t *parse_filter_or(parser_t *p)
{
    filter_t *a = parse_filter_and(p);
    for (;;) {
        if (a == NULL)
            return NULL;
        skip_space(p);
        if (peek(p) != '|' || peek_at(p, 1) != '|')
            return a;
        p->pos += 2;
        filter_t *b = parse_filter_and(p);
        filter_t *f = b ? parse_alloc(p, sizeof *f) : NULL;
        if (f == NULL)
            return NULL;
        f->kind = FILTER_OR;
        f->a = a;
        f->b = b;
        a = f;
    }
}

/* Parses a top-level path into the arena. On failure returns an SWF_E_INPUT
 * (or SWF_E_NOMEM) error saying what is wrong. */
static swf_error_t *path_parse(const char *s, arena_t *arena, jpath_t **out)
{
    *out = NULL;
    size_t len = strlen(s);
    if (len > SWF_LIMIT_PATH_BYTES)
        return swf_error_new(SWF_E_INPUT, NULL, "a path cannot be longer than %u bytes",
                             (unsigned)SWF_LIMIT_PATH_BYTES);
    parser_t p = {.s = s, .len = len, .pos = 0, .arena = arena, .err = NULL, .depth = 0};
    if (len == 0 || s[0] != '$')
        return swf_error_new(SWF_E_INPUT, NULL, "a path must start with '$'");
    jpath_t *path = parse_path_at(&p, false);
    if (path == NULL) {
        if (p.err == NULL)
            p.err = swf_error_new(SWF_E_INPUT, NULL, "invalid path");
        return p.err;
    }
    *out = path;
    return NULL;
}

/* ---- public: check ------------------------------------------------------ */

swf_error_t *swf_asl_path_check(const char *path, swf_asl_path_kind_t kind)
{
    arena_t arena;
    arena_init(&arena);
    jpath_t *jp = NULL;
    swf_error_t *err = path_parse(path, &arena, &jp);
    if (err != NULL || kind != SWF_ASL_PATH_REFERENCE)
        goto done;
    for (const seg_t *seg = jp->segs; seg != NULL; seg = seg->next) {
        const char *what = NULL;
        if (seg->deep)
            what = "a deep scan (..)";
        else if (seg->kind == SEG_FILTER)
            what = "a filter expression";
        else if (seg->kind == SEG_WILDCARD)
            what = "a wildcard";
        else if (seg->kind == SEG_SLICE)
            what = "a slice";
        else if (seg->kind == SEG_NAMES || seg->kind == SEG_INDEXES)
            what = "a union";
        if (what != NULL) {
            err = swf_error_new(SWF_E_INPUT, NULL, "a Reference Path cannot contain %s", what);
            goto done;
        }
    }
done:
    arena_release(&arena);
    return err;
}

bool swf_asl_path_is_definite(const char *path)
{
    arena_t arena;
    arena_init(&arena);
    jpath_t *jp = NULL;
    swf_error_t *err = path_parse(path, &arena, &jp);
    bool definite = err == NULL && jp->definite;
    swf_error_free(err);
    arena_release(&arena);
    return definite;
}

/* ---- evaluation --------------------------------------------------------- */

/* Resolves a possibly negative index against an array length; false when
 * out of range. */
static bool index_resolve(long long index, size_t len, size_t *out)
{
    if (index < 0)
        index += (long long)len;
    if (index < 0 || (unsigned long long)index >= len)
        return false;
    *out = (size_t)index;
    return true;
}

/* Walks a definite path: true and *out (borrowed) when it selects a node. */
static bool walk_definite(const seg_t *seg, json_object *node, json_object **out)
{
    for (; seg != NULL; seg = seg->next) {
        if (seg->kind == SEG_FIELD) {
            if (!json_object_is_type(node, json_type_object) ||
                !json_object_object_get_ex(node, seg->name, &node))
                return false;
        } else {
            size_t i;
            if (!json_object_is_type(node, json_type_array) ||
                !index_resolve(seg->index, json_object_array_length(node), &i))
                return false;
            node = json_object_array_get_idx(node, i);
        }
    }
    *out = node;
    return true;
}

typedef struct walk {
    json_object *root; /* the document "$" refers to inside filters */
    json_object *acc;  /* the array of matches */
    int depth;
    bool failed; /* out of memory */
} walk_t;

static void collect(walk_t *w, const seg_t *seg, json_object *node);
static bool filter_eval(walk_t *w, const filter_t *f, json_object *node);

static void collect_add(walk_t *w, json_object *node)
{
    if (json_object_array_add(w->acc, swf_json_ref(node)) != 0) {
        json_object_put(node);
        w->failed = true;
    }
}

/* Applies one segment to node as if it were not deep; every match continues
 * with the next segment. */
static void seg_apply(walk_t *w, const seg_t *seg, json_object *node)
{
    const seg_t *next = seg->next;
    bool is_obj = json_object_is_type(node, json_type_object);
    bool is_arr = json_object_is_type(node, json_type_array);
    size_t len = is_arr ? json_object_array_length(node) : 0;
    size_t i;
    json_object *child;
    switch (seg->kind) {
    case SEG_FIELD:
        if (is_obj && json_object_object_get_ex(node, seg->name, &child))
            collect(w, next, child);
        break;
    case SEG_INDEX:
        if (is_arr && index_resolve(seg->index, len, &i))
            collect(w, next, json_object_array_get_idx(node, i));
        break;
    case SEG_WILDCARD:
        if (is_obj) {
            json_object_object_foreach(node, key, val)
            {
                (void)key;
                collect(w, next, val);
            }
        } else if (is_arr) {
            for (i = 0; i < len; i++)
                collect(w, next, json_object_array_get_idx(node, i));
        }
        break;
    case SEG_SLICE: {
        if (!is_arr)
            break;
        long long n = (long long)len, step = seg->step;
        long long start, end;
        if (step > 0) {
            start = seg->has_start ? seg->start : 0;
            end = seg->has_end ? seg->end : n;
            if (start < 0)
                start = start + n < 0 ? 0 : start + n;
            if (end < 0)
                end = end + n < 0 ? 0 : end + n;
            if (start > n)
                start = n;
            if (end > n)
                end = n;
            for (long long k = start; k < end; k += step)
                collect(w, next, json_object_array_get_idx(node, (size_t)k));
        } else {
            start = seg->has_start ? seg->start : n - 1;
            end = seg->has_end ? seg->end : -n - 1;
            if (start < 0)
                start = start + n < 0 ? -1 : start + n;
            if (end < 0)
                end = end + n < 0 ? -1 : end + n;
            if (start >= n)
                start = n - 1;
            if (end >= n)
                end = n - 1;
            for (long long k = start; k > end; k += step)
                collect(w, next, json_object_array_get_idx(node, (size_t)k));
        }
        break;
    }
    case SEG_NAMES:
        if (is_obj) {
            for (size_t k = 0; k < seg->count; k++) {
                if (json_object_object_get_ex(node, seg->names[k], &child))
                    collect(w, next, child);
            }
        }
        break;
    case SEG_INDEXES:
        if (is_arr) {
            for (size_t k = 0; k < seg->count; k++) {
                if (index_resolve(seg->indexes[k], len, &i))
                    collect(w, next, json_object_array_get_idx(node, i));
            }
        }
        break;
    case SEG_FILTER:
        /* Jayway: on an array the filter selects elements; on an object it
         * tests the object itself. Under "..", every node tests itself. */
        if (is_arr && !seg->deep) {
            for (i = 0; i < len; i++) {
                child = json_object_array_get_idx(node, i);
                if (filter_eval(w, seg->filter, child))
                    collect(w, next, child);
            }
        } else if (is_obj || seg->deep) {
            if (filter_eval(w, seg->filter, node))
                collect(w, next, node);
        }
        break;
    }
}

static void collect(walk_t *w, const seg_t *seg, json_object *node)
{
    if (w->failed)
        return;
    if (seg == NULL) {
        collect_add(w, node);
        return;
    }
    seg_apply(w, seg, node);
    if (!seg->deep)
        return;
    /* A deep segment applies again at every node below this one, in
     * document order (pre-order, as Jayway scans). */
    if (json_object_is_type(node, json_type_object)) {
        json_object_object_foreach(node, key, val)
        {
            (void)key;
            if (json_object_is_type(val, json_type_object) ||
                json_object_is_type(val, json_type_array))
                collect(w, seg, val);
        }
    } else if (json_object_is_type(node, json_type_array)) {
        size_t len = json_object_array_length(node);
        for (size_t i = 0; i < len; i++) {
            json_object *val = json_object_array_get_idx(node, i);
            if (json_object_is_type(val, json_type_object) ||
                json_object_is_type(val, json_type_array))
                collect(w, seg, val);
        }
    }
}

/* The value of a filter operand: *present is false when a definite path
 * selects nothing. *owned is set when the value is a new array of matches
 * that the caller releases. */
static json_object *operand_eval(walk_t *w, const operand_t *op, json_object *node, bool *present,
                                 json_object **owned)
{
    *owned = NULL;
    *present = true;
    if (op->path == NULL)
        return op->literal;
    json_object *base = op->path->root == ROOT_CURRENT ? node : w->root;
    if (op->path->definite) {
        json_object *v = NULL;
        *present = walk_definite(op->path->segs, base, &v);
        return v;
    }
    walk_t inner = {.root = w->root, .acc = json_object_new_array(), .depth = w->depth};
    if (inner.acc == NULL) {
        w->failed = true;
        *present = false;
        return NULL;
    }
    collect(&inner, op->path->segs, base);
    if (inner.failed)
        w->failed = true;
    *owned = inner.acc;
    return inner.acc;
}

static int string_cmp(json_object *a, json_object *b)
{
    size_t la = (size_t)json_object_get_string_len(a), lb = (size_t)json_object_get_string_len(b);
    int c = memcmp(json_object_get_string(a), json_object_get_string(b), la < lb ? la : lb);
    if (c != 0)
        return c;
    return la < lb ? -1 : la > lb;
}

static int number_cmp(json_object *a, json_object *b)
{
    if (json_object_is_type(a, json_type_int) && json_object_is_type(b, json_type_int)) {
        int64_t x = json_object_get_int64(a), y = json_object_get_int64(b);
        return x < y ? -1 : x > y;
    }
    double x = json_object_get_double(a), y = json_object_get_double(b);
    return x < y ? -1 : x > y;
}

static bool compare(cmp_op_t op, json_object *a, bool a_present, json_object *b, bool b_present)
{
    if (op == CMP_EQ || op == CMP_NE) {
        bool eq = a_present && b_present && swf_json_equal(a, b);
        return op == CMP_EQ ? eq : !eq;
    }
    if (!a_present || !b_present)
        return false;
    int c;
    if (swf_json_is_number(a) && swf_json_is_number(b))
        c = number_cmp(a, b);
    else if (json_object_is_type(a, json_type_string) && json_object_is_type(b, json_type_string))
        c = string_cmp(a, b);
    else
        return false; /* values of different types are not ordered */
    switch (op) {
    case CMP_LT:
        return c < 0;
    case CMP_LE:
        return c <= 0;
    case CMP_GT:
        return c > 0;
    case CMP_GE:
        return c >= 0;
    default:
        return false;
    }
}

static bool filter_eval(walk_t *w, const filter_t *f, json_object *node)
{
    switch (f->kind) {
    case FILTER_OR:
        return filter_eval(w, f->a, node) || filter_eval(w, f->b, node);
    case FILTER_AND:
        return filter_eval(w, f->a, node) && filter_eval(w, f->b, node);
    case FILTER_NOT:
        return !filter_eval(w, f->a, node);
    case FILTER_EXISTS: {
        bool present;
        json_object *owned;
        json_object *v = operand_eval(w, &f->left, node, &present, &owned);
        if (owned != NULL)
            present = json_object_array_length(v) > 0;
        json_object_put(owned);
        return present;
    }
    case FILTER_CMP: {
        bool lp, rp;
        json_object *lo, *ro;
        json_object *l = operand_eval(w, &f->left, node, &lp, &lo);
        json_object *r = operand_eval(w, &f->right, node, &rp, &ro);
        bool result = compare(f->op, l, lp, r, rp);
        json_object_put(lo);
        json_object_put(ro);
        return result;
    }
    }
    return false;
}

/* The text of a document for an error message, cut to a readable length. */
static void doc_excerpt(json_object *doc, char *buf, size_t size)
{
    const char *s = swf_json_str(doc);
    size_t n = strlen(s);
    if (n <= PATH_MESSAGE_DOC_CHARS) {
        snprintf(buf, size, "%s", s);
    } else {
        snprintf(buf, size, "%.*s...", PATH_MESSAGE_DOC_CHARS, s);
    }
}

swf_error_t *swf_asl_path_eval(const char *path, json_object *input, const swf_asl_env_t *env,
                               json_object **out)
{
    *out = NULL;
    arena_t arena;
    arena_init(&arena);
    json_object *empty = NULL;
    jpath_t *jp = NULL;
    char excerpt[PATH_MESSAGE_DOC_CHARS + 8];
    swf_error_t *err = path_parse(path, &arena, &jp);
    if (err != NULL) {
        swf_error_t *rt = swf_error_states("States.Runtime", "the JSONPath '%.200s' is invalid: %s",
                                           path, swf_error_message(err));
        swf_error_free(err);
        err = rt;
        goto done;
    }

    json_object *doc = input;
    const char *where = "input";
    if (jp->root == ROOT_CONTEXT) {
        where = "context object";
        doc = env != NULL ? env->context : NULL;
        if (doc == NULL) {
            empty = json_object_new_object();
            doc = empty;
        }
    } else if (jp->root == ROOT_VARIABLE) {
        json_object *vars = env != NULL ? env->variables : NULL;
        if (!swf_json_get(vars, jp->variable, &doc)) {
            err = swf_error_states("States.Runtime",
                                   "the JSONPath '%s' could not be found: the variable '%s' is "
                                   "not defined",
                                   path, jp->variable);
            goto done;
        }
        where = "variable";
    }

    if (jp->definite) {
        json_object *v = NULL;
        if (!walk_definite(jp->segs, doc, &v)) {
            doc_excerpt(doc, excerpt, sizeof excerpt);
            err = swf_error_states("States.Runtime",
                                   "the JSONPath '%s' could not be found in the %s '%s'", path,
                                   where, excerpt);
            goto done;
        }
        *out = swf_json_ref(v);
        goto done;
    }
    walk_t w = {.root = doc, .acc = json_object_new_array(), .depth = 0, .failed = false};
    if (w.acc == NULL) {
        err = swf_error_new(SWF_E_NOMEM, NULL, "out of memory");
        goto done;
    }
    collect(&w, jp->segs, doc);
    if (w.failed) {
        json_object_put(w.acc);
        err = swf_error_new(SWF_E_NOMEM, NULL, "out of memory");
        goto done;
    }
    *out = w.acc;
done:
    json_object_put(empty);
    arena_release(&arena);
    return err;
}

/* ---- ResultPath ---------------------------------------------------------- */

/* A shallow copy of an object: new container, shared values. */
static json_object *object_copy_shallow(json_object *obj)
{
    json_object *copy = json_object_new_object();
    if (copy == NULL)
        return NULL;
    json_object_object_foreach(obj, key, val)
    {
        json_object_object_add(copy, key, swf_json_ref(val));
    }
    return copy;
}

static json_object *array_copy_shallow(json_object *arr)
{
    size_t len = json_object_array_length(arr);
    json_object *copy = json_object_new_array_ext((int)len);
    if (copy == NULL)
        return NULL;
    for (size_t i = 0; i < len; i++)
        json_object_array_add(copy, swf_json_ref(json_object_array_get_idx(arr, i)));
    return copy;
}

/* Builds node-with-value-at-seg into *out. `exists` is false when node is a
 * missing intermediate, which a field creates and an index cannot. */
static swf_error_t *set_at(const char *path, const seg_t *seg, json_object *node, bool exists,
                           json_object *value, json_object **out)
{
    *out = NULL;
    if (seg == NULL) {
        *out = swf_json_ref(value);
        return NULL;
    }
    json_object *copy = NULL, *child = NULL, *built = NULL;
    swf_error_t *err = NULL;
    if (seg->kind == SEG_FIELD) {
        if (exists && !json_object_is_type(node, json_type_object)) {
            err = swf_error_states("States.ResultPathMatchFailure",
                                   "unable to apply ResultPath '%s': the field '%s' cannot be "
                                   "set on a value of type %s",
                                   path, seg->name, swf_json_type_name(node));
            goto done;
        }
        bool has = exists && json_object_object_get_ex(node, seg->name, &child);
        err = set_at(path, seg->next, child, has, value, &built);
        if (err != NULL)
            goto done;
        copy = exists ? object_copy_shallow(node) : json_object_new_object();
        if (copy == NULL)
            goto nomem;
        if (json_object_object_add(copy, seg->name, built) != 0)
            goto nomem;
        built = NULL;
    } else {
        size_t i = 0;
        if (!exists || !json_object_is_type(node, json_type_array) ||
            !index_resolve(seg->index, json_object_array_length(node), &i)) {
            err = swf_error_states("States.ResultPathMatchFailure",
                                   "unable to apply ResultPath '%s': there is no element [%lld] "
                                   "in %s",
                                   path, seg->index,
                                   exists ? swf_json_type_name(node) : "a missing value");
            goto done;
        }
        err = set_at(path, seg->next, json_object_array_get_idx(node, i), true, value, &built);
        if (err != NULL)
            goto done;
        copy = array_copy_shallow(node);
        if (copy == NULL)
            goto nomem;
        if (json_object_array_put_idx(copy, i, built) != 0)
            goto nomem;
        built = NULL;
    }
    *out = copy;
    copy = NULL;
    goto done;
nomem:
    err = swf_error_new(SWF_E_NOMEM, NULL, "out of memory");
done:
    json_object_put(built);
    json_object_put(copy);
    return err;
}

swf_error_t *swf_asl_path_set(const char *path, json_object *input, json_object *value,
                              json_object **out)
{
    *out = NULL;
    arena_t arena;
    arena_init(&arena);
    jpath_t *jp = NULL;
    swf_error_t *err = path_parse(path, &arena, &jp);
    if (err == NULL && jp->root != ROOT_INPUT) {
        swf_error_free(err);
        err = swf_error_new(SWF_E_INPUT, NULL, "a ResultPath must start with '$.' or be '$'");
    }
    if (err == NULL) {
        for (const seg_t *seg = jp->segs; seg != NULL; seg = seg->next) {
            if (seg->deep || (seg->kind != SEG_FIELD && seg->kind != SEG_INDEX)) {
                err = swf_error_new(SWF_E_INPUT, NULL, "a ResultPath must be a Reference Path");
                break;
            }
        }
    }
    if (err != NULL) {
        swf_error_t *rt = swf_error_states("States.ResultPathMatchFailure",
                                           "the ResultPath '%.200s' is invalid: %s", path,
                                           swf_error_message(err));
        swf_error_free(err);
        err = rt;
        goto done;
    }
    err = set_at(path, jp->segs, input, true, value, out);
done:
    arena_release(&arena);
    return err;
}
