/*
 * regex.c - a backtracking matcher for JavaScript regular expressions.
 *
 * Why not libc's regcomp: POSIX takes the longest of the alternatives where
 * JavaScript takes the first that matches (/a|ab/ on "ab" is "a" in Step
 * Functions), so translating patterns to POSIX gave silently different
 * results, and POSIX has no lazy quantifiers, lookaround or back
 * references. JavaScript's semantics are those of a backtracking search, so
 * that is what this is, following ECMAScript 2023's pattern semantics (22.2)
 * with Annex B's rules for patterns without the u flag (a { that starts no
 * quantifier is literal, \8 and \1 beyond the groups are escapes, ...).
 *
 * A pattern is parsed into a tree, then compiled into a program for a small
 * machine; a search runs the program from each start position in turn.
 * The machine keeps its choice points and the undo records of what it set
 * (captures, loop counters) on one explicit stack, so deep backtracking
 * costs heap, bounded by SWF_LIMIT_REGEX_BACKTRACK, never C stack; the C
 * stack grows only with lookarounds nested in the pattern. Every
 * instruction and every step back costs one unit of the caller's budget.
 *
 * Choices made here:
 * - A quantifier of one character (a*, [a-z]+?, .{2,5}) is one instruction
 *   that leaves one stack entry however many characters it took; any other
 *   counts its iterations in a register, so {1000} expands nothing.
 * - Lookbehind runs its body backwards, character by character from the
 *   current position leftwards, as JavaScript does, so its captures are
 *   JavaScript's and its cost does not grow with the text before it.
 * - The i flag folds case as JavaScript does without u: both characters are
 *   upper-cased (towupper in C.UTF-8) unless that would map a non-ASCII
 *   character to ASCII. For a character class the members tried are the
 *   character, its upper case and their lower cases, which covers every
 *   pair but the few letters with three forms (σ ς Σ): [ς] with i does not
 *   match σ here.
 * - Bytes that are not UTF-8 are characters of their own beyond Unicode,
 *   so they match only ., negated classes and themselves through them.
 */
#include "decider/asl/regex.h"

#include <assert.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "protocol/alloc.h"

#define MAX_CP 0x10FFFFu
#define INF UINT32_MAX
#define UNSET SWF_ASL_REGEX_UNSET

/* ------------------------------------------------------------------------ */
/* Characters                                                               */
/* ------------------------------------------------------------------------ */

static locale_t utf8_locale_v;
static void utf8_locale_init(void)
{
    utf8_locale_v = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    if (utf8_locale_v == (locale_t)0)
        utf8_locale_v = newlocale(LC_CTYPE_MASK, "C.utf8", (locale_t)0);
}

locale_t swf_asl_utf8_locale(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, utf8_locale_init);
    return utf8_locale_v;
}

/* The character at s[i] (i < n) and its length. A byte that starts no
 * valid sequence is a character of its own, beyond Unicode. */
static uint32_t utf8_at(const unsigned char *s, size_t n, size_t i, size_t *len)
{
    unsigned c = s[i];
    size_t k;
    uint32_t cp, min;
    if (c < 0x80) {
        *len = 1;
        return c;
    }
    if ((c & 0xE0) == 0xC0) {
        k = 1, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        k = 2, cp = c & 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        k = 3, cp = c & 0x07, min = 0x10000;
    } else {
        goto bad;
    }
    if (n - i <= k)
        goto bad;
    for (size_t j = 1; j <= k; j++) {
        if ((s[i + j] & 0xC0) != 0x80)
            goto bad;
        cp = (cp << 6) | (s[i + j] & 0x3F);
    }
    if (cp < min || cp > MAX_CP || (cp >= 0xD800 && cp <= 0xDFFF))
        goto bad;
    *len = k + 1;
    return cp;
bad:
    *len = 1;
    return MAX_CP + 1 + c;
}

/* The start of the character that ends at s[i] (0 < i <= n). */
static size_t utf8_prev(const unsigned char *s, size_t n, size_t i)
{
    size_t j = i - 1, len, lim = i >= 4 ? i - 4 : 0;
    while (j > lim && (s[j] & 0xC0) == 0x80)
        j--;
    utf8_at(s, n, j, &len);
    return j + len == i ? j : i - 1;
}

static bool is_line_end(uint32_t c)
{
    return c == '\n' || c == '\r' || c == 0x2028 || c == 0x2029;
}

static bool is_word(uint32_t c)
{
    return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

/* JavaScript's Canonicalize without u: the upper case, unless that is not
 * one BMP character or maps a non-ASCII character to ASCII. */
static uint32_t canon(uint32_t c)
{
    if (c < 0x80)
        return c >= 'a' && c <= 'z' ? c - 32 : c;
    locale_t l = swf_asl_utf8_locale();
    if (c > 0xFFFF || l == (locale_t)0)
        return c;
    uint32_t u = (uint32_t)towupper_l((wint_t)c, l);
    return u < 0x80 || u > 0xFFFF ? c : u;
}

static uint32_t lower(uint32_t c)
{
    if (c < 0x80)
        return c >= 'A' && c <= 'Z' ? c + 32 : c;
    locale_t l = swf_asl_utf8_locale();
    if (c > 0xFFFF || l == (locale_t)0)
        return c;
    return (uint32_t)towlower_l((wint_t)c, l);
}

/* ------------------------------------------------------------------------ */
/* Character classes: sorted, merged ranges                                 */
/* ------------------------------------------------------------------------ */

typedef struct {
    uint32_t lo, hi;
} range_t;

typedef struct {
    range_t *r;
    size_t n, cap;
    bool negated;
} cls_t;

static void cls_add(cls_t *c, uint32_t lo, uint32_t hi)
{
    SWF_ARRAY_RESERVE(c->r, c->n, c->cap, 8);
    c->r[c->n++] = (range_t){lo, hi};
}

static int range_cmp(const void *a, const void *b)
{
    const range_t *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void cls_normalize(cls_t *c)
{
    if (c->n == 0)
        return;
    qsort(c->r, c->n, sizeof *c->r, range_cmp);
    size_t k = 0;
    for (size_t i = 1; i < c->n; i++) {
        if (c->r[i].lo <= c->r[k].hi + 1) {
            if (c->r[i].hi > c->r[k].hi)
                c->r[k].hi = c->r[i].hi;
        } else {
            c->r[++k] = c->r[i];
        }
    }
    c->n = k + 1;
}

static bool cls_has_exact(const cls_t *c, uint32_t ch)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ch < c->r[mid].lo)
            hi = mid;
        else if (ch > c->r[mid].hi)
            lo = mid + 1;
        else
            return true;
    }
    return false;
}

static bool cls_has(const cls_t *c, uint32_t ch, bool icase)
{
    bool found = cls_has_exact(c, ch);
    if (!found && icase) {
        uint32_t u = canon(ch), tries[3] = {u, lower(u), lower(ch)};
        for (int k = 0; k < 3 && !found; k++)
            found = tries[k] != ch && canon(tries[k]) == u && cls_has_exact(c, tries[k]);
    }
    return found != c->negated;
}

/* The escapes \d \w \s (upper case: their complements) as ranges. */
static void cls_add_escape(cls_t *c, char e)
{
    static const range_t digit[] = {{'0', '9'}};
    static const range_t word[] = {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
    static const range_t space[] = {
        {0x09, 0x0D},     {0x20, 0x20},     {0xA0, 0xA0},     {0x1680, 0x1680}, {0x2000, 0x200A},
        {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}, {0xFEFF, 0xFEFF}};
    const range_t *r;
    size_t n;
    switch (e | 0x20) {
    case 'd':
        r = digit, n = sizeof digit / sizeof *digit;
        break;
    case 'w':
        r = word, n = sizeof word / sizeof *word;
        break;
    default:
        r = space, n = sizeof space / sizeof *space;
        break;
    }
    if (e >= 'a') {
        for (size_t i = 0; i < n; i++)
            cls_add(c, r[i].lo, r[i].hi);
        return;
    }
    uint32_t from = 0; /* the complement, up to the bytes that are not UTF-8 */
    for (size_t i = 0; i < n; i++) {
        if (r[i].lo > from)
            cls_add(c, from, r[i].lo - 1);
        from = r[i].hi + 1;
    }
    cls_add(c, from, MAX_CP + 256);
}

/* ------------------------------------------------------------------------ */
/* The tree a pattern is parsed into                                        */
/* ------------------------------------------------------------------------ */

typedef enum {
    A_EMPTY,
    A_CHAR,    /* c */
    A_ANY,     /* . */
    A_CLASS,   /* c: the class's index */
    A_SEQ,     /* kids in order */
    A_ALT,     /* kids, the first that matches */
    A_GROUP,   /* c: capture index, 0 for (?:...); one kid */
    A_REPEAT,  /* min, max, greedy; one kid; groups g0..g1 inside */
    A_BOL,     /* ^ */
    A_EOL,     /* $ */
    A_WORDB,   /* \b */
    A_NWORDB,  /* \B */
    A_BACKREF, /* c: group, or name until resolved */
    A_LOOK,    /* behind, negative; one kid */
} akind_t;

typedef struct anode {
    akind_t kind;
    uint32_t c, min, max, g0, g1;
    bool greedy, behind, negative;
    char *name;
    struct anode **kids;
    size_t nkids, cap;
} anode_t;

static anode_t *anode_new(akind_t kind)
{
    anode_t *a = calloc(1, sizeof *a);
    if (a == NULL)
        abort();
    a->kind = kind;
    return a;
}

static void anode_add(anode_t *a, anode_t *kid)
{
    SWF_ARRAY_RESERVE(a->kids, a->nkids, a->cap, 4);
    a->kids[a->nkids++] = kid;
}

static void anode_free(anode_t *a)
{
    if (a == NULL)
        return;
    for (size_t i = 0; i < a->nkids; i++)
        anode_free(a->kids[i]);
    free(a->kids);
    free(a->name);
    free(a);
}

/* ------------------------------------------------------------------------ */
/* The program                                                              */
/* ------------------------------------------------------------------------ */

typedef enum {
    I_CHAR,      /* a: the character (canonical under i) */
    I_ANY,       /* any character but a line end */
    I_CLASS,     /* a: class index */
    I_STAR,      /* the matcher at pc + 1 repeated min..max times; then pc + 2 */
    I_SPLIT,     /* try x, then y */
    I_JMP,       /* x */
    I_SAVE,      /* a: capture slot */
    I_BOL,       /* ^ */
    I_EOL,       /* $ */
    I_WORDB,     /* \b */
    I_NWORDB,    /* \B */
    I_BACKREF,   /* a: group */
    I_REP_INIT,  /* a: register: its count to 0 */
    I_REP,       /* a: register; min, max, greedy; y: after the loop */
    I_REP_ENTER, /* a: register; an iteration starts: groups g0..g1 reset */
    I_REP_NEXT,  /* a: register, x: its I_REP; an iteration ends */
    I_LOOK,      /* behind, negative; the body from pc + 1; y: after it */
    I_LOOK_END,  /* the body of a lookaround matched */
    I_MATCH,
} op_t;

typedef struct {
    uint8_t op;
    bool back; /* matches leftwards (in a lookbehind) */
    bool greedy, negative;
    uint32_t a, x, y, min, max, g0, g1;
} inst_t;

struct swf_asl_regex {
    inst_t *prog;
    size_t nprog, cap;
    cls_t *classes;
    size_t nclasses;
    size_t groups;
    size_t regs;
    bool icase, multiline;
};

/* ------------------------------------------------------------------------ */
/* Parser                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct {
    const unsigned char *s;
    size_t n, i;
    swf_asl_regex_t *re;
    char *err;
    size_t err_size;
    bool failed;
    uint32_t total_groups; /* from the scan before the parse */
    char **names;          /* names[k]: group k's name, or NULL */
    bool has_names;        /* \k is a reference only then */
    uint32_t next_group;
    int depth;
} parser_t;

static void fail(parser_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(parser_t *p, const char *fmt, ...)
{
    if (p->failed)
        return;
    p->failed = true;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(p->err, p->err_size, fmt, ap);
    va_end(ap);
    if (k >= 0 && (size_t)k < p->err_size)
        snprintf(p->err + k, p->err_size - (size_t)k, " at offset %zu", p->i);
}

static bool at_end(const parser_t *p)
{
    return p->i >= p->n;
}

static int peek(const parser_t *p, size_t ahead)
{
    return p->i + ahead < p->n ? p->s[p->i + ahead] : -1;
}

static uint32_t next_char(parser_t *p)
{
    size_t len;
    uint32_t c = utf8_at(p->s, p->n, p->i, &len);
    p->i += len;
    return c;
}

static int hex_value(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* k hex digits at p->i + at, or -1. */
static long hex_digits(const parser_t *p, size_t at, int k)
{
    long v = 0;
    for (int j = 0; j < k; j++) {
        int h = hex_value(peek(p, at + (size_t)j));
        if (h < 0)
            return -1;
        v = v * 16 + h;
    }
    return v;
}

static bool is_ident_char(int c, bool first)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' || c == '$' ||
           (!first && c >= '0' && c <= '9') || c >= 0x80;
}

/* A group name after "<" up to ">": a new string, or NULL with an error. */
static char *group_name(parser_t *p)
{
    size_t start = p->i;
    while (!at_end(p) && peek(p, 0) != '>' && is_ident_char(peek(p, 0), p->i == start))
        p->i++;
    if (p->i == start || peek(p, 0) != '>') {
        fail(p, "invalid capture group name");
        return NULL;
    }
    char *name = strndup((const char *)p->s + start, p->i - start);
    if (name == NULL)
        abort();
    p->i++;
    return name;
}

/* Before the parse: counts the capturing groups and collects their names,
 * since \2 and \k<x> may come before the group they name. */
static void scan_groups(parser_t *p)
{
    bool in_class = false;
    for (size_t i = 0; i < p->n; i++) {
        unsigned c = p->s[i];
        if (c == '\\') {
            i++;
        } else if (in_class) {
            in_class = c != ']';
        } else if (c == '[') {
            in_class = true;
        } else if (c == '(') {
            if (i + 1 < p->n && p->s[i + 1] == '?') {
                if (!(i + 2 < p->n && p->s[i + 2] == '<' && i + 3 < p->n && p->s[i + 3] != '=' &&
                      p->s[i + 3] != '!'))
                    continue;
                size_t start = i + 3, j = start;
                while (j < p->n && p->s[j] != '>')
                    j++;
                p->names = realloc(p->names, (p->total_groups + 2) * sizeof *p->names);
                if (p->names == NULL)
                    abort();
                p->names[p->total_groups + 1] = strndup((const char *)p->s + start, j - start);
                p->has_names = true;
            } else {
                p->names = realloc(p->names, (p->total_groups + 2) * sizeof *p->names);
                if (p->names == NULL)
                    abort();
                p->names[p->total_groups + 1] = NULL;
            }
            p->total_groups++;
        }
    }
}

static uint32_t add_class(parser_t *p, cls_t *c)
{
    swf_asl_regex_t *re = p->re;
    cls_normalize(c);
    re->classes = realloc(re->classes, (re->nclasses + 1) * sizeof *re->classes);
    if (re->classes == NULL)
        abort();
    re->classes[re->nclasses] = *c;
    return (uint32_t)re->nclasses++;
}

typedef enum { ESC_CHAR, ESC_CLASS, ESC_BACKREF, ESC_WORDB, ESC_NWORDB } esc_t;

/* Annex B's legacy octal escape, the first digit at p->i. */
static uint32_t octal_escape(parser_t *p)
{
    int first = peek(p, 0);
    uint32_t v = (uint32_t)(first - '0');
    p->i++;
    int more = first <= '3' ? 2 : 1;
    for (int k = 0; k < more && peek(p, 0) >= '0' && peek(p, 0) <= '7'; k++) {
        v = v * 8 + (uint32_t)(peek(p, 0) - '0');
        p->i++;
    }
    return v;
}

/* What follows a backslash (p->i is past it). Sets *cp to the character,
 * the class escape letter, or the group of a back reference. */
static esc_t parse_escape(parser_t *p, bool in_class, uint32_t *cp, char **name)
{
    if (at_end(p)) {
        fail(p, "\\ at end of pattern");
        return ESC_CHAR;
    }
    int c = peek(p, 0);
    switch (c) {
    case 'd':
    case 'D':
    case 'w':
    case 'W':
    case 's':
    case 'S':
        p->i++;
        *cp = (uint32_t)c;
        return ESC_CLASS;
    case 'b':
        p->i++;
        *cp = 0x08;
        return in_class ? ESC_CHAR : ESC_WORDB;
    case 'B':
        p->i++;
        *cp = 'B';
        return in_class ? ESC_CHAR : ESC_NWORDB;
    case 'f':
        p->i++;
        *cp = 0x0C;
        return ESC_CHAR;
    case 'n':
        p->i++;
        *cp = '\n';
        return ESC_CHAR;
    case 'r':
        p->i++;
        *cp = '\r';
        return ESC_CHAR;
    case 't':
        p->i++;
        *cp = '\t';
        return ESC_CHAR;
    case 'v':
        p->i++;
        *cp = 0x0B;
        return ESC_CHAR;
    case 'c': {
        int d = peek(p, 1);
        if ((d >= 'a' && d <= 'z') || (d >= 'A' && d <= 'Z') ||
            (in_class && ((d >= '0' && d <= '9') || d == '_'))) {
            p->i += 2;
            *cp = (uint32_t)d % 32;
        } else {
            *cp = '\\'; /* Annex B: the backslash itself; c is read next */
        }
        return ESC_CHAR;
    }
    case 'x': {
        long v = hex_digits(p, 1, 2);
        p->i += v >= 0 ? 3 : 1;
        *cp = v >= 0 ? (uint32_t)v : 'x';
        return ESC_CHAR;
    }
    case 'u': {
        long v = hex_digits(p, 1, 4);
        if (v < 0) {
            p->i++;
            *cp = 'u';
            return ESC_CHAR;
        }
        p->i += 5;
        long lo;
        if (v >= 0xD800 && v <= 0xDBFF && peek(p, 0) == '\\' && peek(p, 1) == 'u' &&
            (lo = hex_digits(p, 2, 4)) >= 0xDC00 && lo <= 0xDFFF) {
            p->i += 6; /* a surrogate pair is the character it encodes */
            v = 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00);
        }
        *cp = (uint32_t)v;
        return ESC_CHAR;
    }
    case 'k':
        p->i++;
        if (!p->has_names || in_class) {
            if (p->has_names)
                fail(p, "invalid named reference");
            *cp = 'k';
            return ESC_CHAR;
        }
        if (peek(p, 0) != '<') {
            fail(p, "invalid named reference");
            return ESC_CHAR;
        }
        p->i++;
        *name = group_name(p);
        return ESC_BACKREF;
    case '0':
        if (!(peek(p, 1) >= '0' && peek(p, 1) <= '9')) {
            p->i++;
            *cp = 0;
            return ESC_CHAR;
        }
        *cp = octal_escape(p);
        return ESC_CHAR;
    default:
        break;
    }
    if (c >= '1' && c <= '9') {
        if (!in_class) {
            size_t j = p->i;
            uint64_t v = 0;
            while (j < p->n && p->s[j] >= '0' && p->s[j] <= '9' && v <= UINT32_MAX)
                v = v * 10 + (p->s[j++] - '0');
            if (v <= p->total_groups) {
                p->i = j;
                *cp = (uint32_t)v;
                return ESC_BACKREF;
            }
        }
        if (c <= '7') {
            *cp = octal_escape(p);
            return ESC_CHAR;
        }
        p->i++;
        *cp = (uint32_t)c;
        return ESC_CHAR;
    }
    *cp = next_char(p); /* an identity escape */
    return ESC_CHAR;
}

/* One member of a class: a character (true), or a class escape in *esc
 * (false). */
static bool class_atom(parser_t *p, uint32_t *cp, char *esc)
{
    if (peek(p, 0) != '\\') {
        *cp = next_char(p);
        return true;
    }
    p->i++;
    char *name = NULL;
    esc_t e = parse_escape(p, true, cp, &name);
    free(name);
    if (e == ESC_CLASS) {
        *esc = (char)*cp;
        return false;
    }
    return true;
}

static anode_t *parse_class(parser_t *p)
{
    cls_t c = {0};
    p->i++; /* [ */
    if (peek(p, 0) == '^') {
        c.negated = true;
        p->i++;
    }
    while (!p->failed) {
        if (at_end(p)) {
            fail(p, "unterminated character class");
            break;
        }
        if (peek(p, 0) == ']') {
            p->i++;
            break;
        }
        uint32_t a, b;
        char ea = 0, eb = 0;
        bool a_char = class_atom(p, &a, &ea);
        if (p->failed)
            break;
        if (peek(p, 0) == '-' && peek(p, 1) != ']' && peek(p, 1) != -1) {
            p->i++;
            bool b_char = class_atom(p, &b, &eb);
            if (p->failed)
                break;
            if (!a_char || !b_char) { /* Annex B: [\d-z] is \d, - and z */
                if (a_char)
                    cls_add(&c, a, a);
                else
                    cls_add_escape(&c, ea);
                cls_add(&c, '-', '-');
                if (b_char)
                    cls_add(&c, b, b);
                else
                    cls_add_escape(&c, eb);
            } else if (a > b) {
                fail(p, "range out of order in character class");
            } else {
                cls_add(&c, a, b);
            }
        } else if (a_char) {
            cls_add(&c, a, a);
        } else {
            cls_add_escape(&c, ea);
        }
    }
    if (p->failed) {
        free(c.r);
        return NULL;
    }
    anode_t *a = anode_new(A_CLASS);
    a->c = add_class(p, &c);
    return a;
}

/* A {n}, {n,} or {n,m} quantifier at p->i: true (p->i past it) or false
 * (p->i unchanged: then { is a literal character). */
static bool parse_braces(parser_t *p, uint32_t *min, uint32_t *max)
{
    size_t j = p->i + 1;
    uint64_t v[2] = {0, 0};
    bool has[2] = {false, false}, comma = false;
    for (int k = 0; k < 2; k++) {
        while (j < p->n && p->s[j] >= '0' && p->s[j] <= '9') {
            if (v[k] < INF)
                v[k] = v[k] * 10 + (p->s[j] - '0');
            has[k] = true;
            j++;
        }
        if (k == 0) {
            if (!has[0])
                return false;
            if (j < p->n && p->s[j] == ',') {
                comma = true;
                j++;
            } else {
                break;
            }
        }
    }
    if (j >= p->n || p->s[j] != '}')
        return false;
    *min = v[0] >= INF ? INF - 1 : (uint32_t)v[0];
    *max = !comma ? *min : !has[1] ? INF : v[1] >= INF ? INF - 1 : (uint32_t)v[1];
    p->i = j + 1;
    return true;
}

static bool quantifier_next(parser_t *p)
{
    int c = peek(p, 0);
    uint32_t a, b;
    size_t save = p->i;
    if (c == '*' || c == '+' || c == '?')
        return true;
    if (c == '{' && parse_braces(p, &a, &b)) {
        p->i = save;
        return true;
    }
    return false;
}

static anode_t *parse_disjunction(parser_t *p);

static anode_t *parse_group(parser_t *p, bool *quantifiable)
{
    p->i++; /* ( */
    anode_t *g = NULL;
    if (peek(p, 0) == '?') {
        int c = peek(p, 1), d = peek(p, 2);
        if (c == ':') {
            p->i += 2;
            g = anode_new(A_GROUP);
        } else if (c == '=' || c == '!') {
            p->i += 2;
            g = anode_new(A_LOOK);
            g->negative = c == '!';
        } else if (c == '<' && (d == '=' || d == '!')) {
            p->i += 3;
            g = anode_new(A_LOOK);
            g->behind = true;
            g->negative = d == '!';
            *quantifiable = false;
        } else if (c == '<') {
            p->i += 2;
            g = anode_new(A_GROUP);
            g->c = ++p->next_group;
            g->name = group_name(p);
            for (uint32_t k = 1; g->name != NULL && k < g->c; k++) {
                if (p->names[k] != NULL && strcmp(p->names[k], g->name) == 0)
                    fail(p, "duplicate capture group name");
            }
        } else {
            fail(p, "invalid group");
            return NULL;
        }
    } else {
        g = anode_new(A_GROUP);
        g->c = ++p->next_group;
    }
    if (p->failed) {
        anode_free(g);
        return NULL;
    }
    if (++p->depth > SWF_LIMIT_REGEX_DEPTH) {
        fail(p, "groups nest more than %d deep", SWF_LIMIT_REGEX_DEPTH);
        anode_free(g);
        return NULL;
    }
    anode_t *body = parse_disjunction(p);
    p->depth--;
    if (body == NULL) {
        anode_free(g);
        return NULL;
    }
    anode_add(g, body);
    if (peek(p, 0) != ')') {
        fail(p, "unterminated group");
        anode_free(g);
        return NULL;
    }
    p->i++;
    return g;
}

/* An atom or assertion, with its quantifier. NULL with p->failed on an
 * error. */
static anode_t *parse_term(parser_t *p)
{
    int c = peek(p, 0);
    anode_t *a = NULL;
    bool quantifiable = true;
    uint32_t groups_before = p->next_group;
    if (c == '^' || c == '$') {
        p->i++;
        a = anode_new(c == '^' ? A_BOL : A_EOL);
        quantifiable = false;
    } else if (c == '(') {
        a = parse_group(p, &quantifiable);
    } else if (c == '[') {
        a = parse_class(p);
    } else if (c == '.') {
        p->i++;
        a = anode_new(A_ANY);
    } else if (c == '*' || c == '+' || c == '?' || (c == '{' && quantifier_next(p))) {
        fail(p, "nothing to repeat");
    } else if (c == '\\') {
        p->i++;
        uint32_t cp = 0;
        char *name = NULL;
        esc_t e = parse_escape(p, false, &cp, &name);
        if (p->failed) {
            free(name);
            return NULL;
        }
        switch (e) {
        case ESC_CHAR:
            a = anode_new(A_CHAR);
            a->c = cp;
            break;
        case ESC_CLASS: {
            cls_t cl = {0};
            cls_add_escape(&cl, (char)cp);
            a = anode_new(A_CLASS);
            a->c = add_class(p, &cl);
            break;
        }
        case ESC_BACKREF:
            a = anode_new(A_BACKREF);
            a->c = cp;
            a->name = name;
            break;
        case ESC_WORDB:
        case ESC_NWORDB:
            a = anode_new(e == ESC_WORDB ? A_WORDB : A_NWORDB);
            quantifiable = false;
            break;
        }
    } else {
        a = anode_new(A_CHAR); /* ] { } are literal without the u flag */
        a->c = next_char(p);
    }
    if (a == NULL || p->failed) {
        anode_free(a);
        return NULL;
    }
    if (!quantifier_next(p))
        return a;
    if (!quantifiable) {
        fail(p, "nothing to repeat");
        anode_free(a);
        return NULL;
    }
    uint32_t min, max;
    c = peek(p, 0);
    if (c == '{') {
        parse_braces(p, &min, &max);
        if (min > max) {
            fail(p, "numbers out of order in {} quantifier");
            anode_free(a);
            return NULL;
        }
    } else {
        p->i++;
        min = c == '+' ? 1 : 0;
        max = c == '?' ? 1 : INF;
    }
    anode_t *r = anode_new(A_REPEAT);
    r->min = min;
    r->max = max;
    r->greedy = true;
    if (peek(p, 0) == '?') {
        r->greedy = false;
        p->i++;
    }
    r->g0 = groups_before + 1;
    r->g1 = p->next_group;
    anode_add(r, a);
    if (quantifier_next(p)) {
        fail(p, "nothing to repeat");
        anode_free(r);
        return NULL;
    }
    return r;
}

static anode_t *parse_alternative(parser_t *p)
{
    anode_t *seq = anode_new(A_SEQ);
    while (!at_end(p) && peek(p, 0) != '|' && peek(p, 0) != ')') {
        anode_t *t = parse_term(p);
        if (t == NULL) {
            anode_free(seq);
            return NULL;
        }
        anode_add(seq, t);
    }
    return seq;
}

static anode_t *parse_disjunction(parser_t *p)
{
    anode_t *alt = anode_new(A_ALT);
    for (;;) {
        anode_t *a = parse_alternative(p);
        if (a == NULL) {
            anode_free(alt);
            return NULL;
        }
        anode_add(alt, a);
        if (peek(p, 0) != '|')
            return alt;
        p->i++;
    }
}

/* Named references to group numbers; every group number must exist. */
static void resolve(parser_t *p, anode_t *a)
{
    if (a->kind == A_BACKREF && a->name != NULL) {
        a->c = 0;
        for (uint32_t k = 1; k <= p->total_groups; k++) {
            if (p->names[k] != NULL && strcmp(p->names[k], a->name) == 0)
                a->c = k;
        }
        if (a->c == 0)
            fail(p, "invalid named capture referenced");
    }
    for (size_t i = 0; i < a->nkids; i++)
        resolve(p, a->kids[i]);
}

/* ------------------------------------------------------------------------ */
/* Compiler                                                                 */
/* ------------------------------------------------------------------------ */

static uint32_t emit(swf_asl_regex_t *re, inst_t in)
{
    SWF_ARRAY_RESERVE(re->prog, re->nprog, re->cap, 32);
    re->prog[re->nprog] = in;
    return (uint32_t)re->nprog++;
}

static bool single_char(const anode_t *a)
{
    return a->kind == A_CHAR || a->kind == A_ANY || a->kind == A_CLASS;
}

static void compile(swf_asl_regex_t *re, const anode_t *a, bool back)
{
    switch (a->kind) {
    case A_EMPTY:
        break;
    case A_CHAR:
        emit(re, (inst_t){.op = I_CHAR, .back = back, .a = re->icase ? canon(a->c) : a->c});
        break;
    case A_ANY:
        emit(re, (inst_t){.op = I_ANY, .back = back});
        break;
    case A_CLASS:
        emit(re, (inst_t){.op = I_CLASS, .back = back, .a = a->c});
        break;
    case A_SEQ:
        for (size_t i = 0; i < a->nkids; i++)
            compile(re, a->kids[back ? a->nkids - 1 - i : i], back);
        break;
    case A_ALT: {
        /* the jumps to the end are chained through their x until patched */
        uint32_t chain = UINT32_MAX;
        for (size_t i = 0; i + 1 < a->nkids; i++) {
            uint32_t split = emit(re, (inst_t){.op = I_SPLIT});
            re->prog[split].x = split + 1;
            compile(re, a->kids[i], back);
            uint32_t jmp = emit(re, (inst_t){.op = I_JMP, .x = chain});
            chain = jmp;
            re->prog[split].y = (uint32_t)re->nprog;
        }
        if (a->nkids > 0)
            compile(re, a->kids[a->nkids - 1], back);
        while (chain != UINT32_MAX) {
            uint32_t prev = re->prog[chain].x;
            re->prog[chain].x = (uint32_t)re->nprog;
            chain = prev;
        }
        break;
    }
    case A_GROUP:
        if (a->c > 0)
            emit(re, (inst_t){.op = I_SAVE, .a = 2 * a->c + back});
        compile(re, a->kids[0], back);
        if (a->c > 0)
            emit(re, (inst_t){.op = I_SAVE, .a = 2 * a->c + !back});
        break;
    case A_REPEAT: {
        const anode_t *kid = a->kids[0];
        if (a->max == 0)
            break;
        if (a->min == 1 && a->max == 1) {
            compile(re, kid, back);
            break;
        }
        if (single_char(kid)) {
            emit(
                re,
                (inst_t){
                    .op = I_STAR, .back = back, .greedy = a->greedy, .min = a->min, .max = a->max});
            compile(re, kid, back);
            break;
        }
        uint32_t r = (uint32_t)re->regs++;
        emit(re, (inst_t){.op = I_REP_INIT, .a = r});
        uint32_t loop = emit(re, (inst_t){.op = I_REP,
                                          .a = r,
                                          .greedy = a->greedy,
                                          .min = a->min,
                                          .max = a->max,
                                          .g0 = a->g0,
                                          .g1 = a->g1});
        emit(re, (inst_t){.op = I_REP_ENTER, .a = r, .g0 = a->g0, .g1 = a->g1});
        compile(re, kid, back);
        emit(re, (inst_t){.op = I_REP_NEXT, .a = r, .x = loop});
        re->prog[loop].y = (uint32_t)re->nprog;
        break;
    }
    case A_BOL:
        emit(re, (inst_t){.op = I_BOL});
        break;
    case A_EOL:
        emit(re, (inst_t){.op = I_EOL});
        break;
    case A_WORDB:
        emit(re, (inst_t){.op = I_WORDB});
        break;
    case A_NWORDB:
        emit(re, (inst_t){.op = I_NWORDB});
        break;
    case A_BACKREF:
        emit(re, (inst_t){.op = I_BACKREF, .back = back, .a = a->c});
        break;
    case A_LOOK: {
        uint32_t look =
            emit(re, (inst_t){.op = I_LOOK, .back = a->behind, .negative = a->negative});
        compile(re, a->kids[0], a->behind);
        emit(re, (inst_t){.op = I_LOOK_END});
        re->prog[look].y = (uint32_t)re->nprog;
        break;
    }
    }
}

swf_asl_regex_t *swf_asl_regex_new(const char *src, size_t len, const char *flags, char *err,
                                   size_t err_size)
{
    swf_asl_regex_t *re = calloc(1, sizeof *re);
    if (re == NULL)
        abort();
    parser_t p = {
        .s = (const unsigned char *)src, .n = len, .re = re, .err = err, .err_size = err_size};
    for (const char *f = flags; *f; f++) {
        if (*f == 'i' && !re->icase)
            re->icase = true;
        else if (*f == 'm' && !re->multiline)
            re->multiline = true;
        else
            fail(&p, "invalid flags '%s'", flags);
    }
    anode_t *tree = NULL;
    if (!p.failed) {
        scan_groups(&p);
        tree = parse_disjunction(&p);
    }
    if (!p.failed && !at_end(&p))
        fail(&p, "unmatched ')'");
    if (!p.failed)
        resolve(&p, tree);
    if (!p.failed) {
        re->groups = p.total_groups;
        emit(re, (inst_t){.op = I_SAVE, .a = 0});
        compile(re, tree, false);
        emit(re, (inst_t){.op = I_SAVE, .a = 1});
        emit(re, (inst_t){.op = I_MATCH});
    }
    anode_free(tree);
    for (uint32_t k = 1; k <= p.total_groups; k++)
        free(p.names[k]);
    free(p.names);
    if (p.failed) {
        swf_asl_regex_free(re);
        return NULL;
    }
    return re;
}

void swf_asl_regex_free(swf_asl_regex_t *re)
{
    if (re == NULL)
        return;
    for (size_t i = 0; i < re->nclasses; i++)
        free(re->classes[i].r);
    free(re->classes);
    free(re->prog);
    free(re);
}

size_t swf_asl_regex_groups(const swf_asl_regex_t *re)
{
    return re->groups;
}

/* ------------------------------------------------------------------------ */
/* Matcher                                                                  */
/* ------------------------------------------------------------------------ */

typedef enum {
    BT_BARRIER, /* the bottom of a search or of a lookaround's body */
    BT_CHOICE,  /* resume at pc, pos */
    BT_STAR,    /* the I_STAR at pc: greedy, give back one character (pos now,
                   aux the least end); lazy, take one more (aux the count) */
    BT_CAP,     /* undo: caps[pc] = aux */
    BT_COUNT,   /* undo: count[pc] = aux */
    BT_START,   /* undo: start[pc] = aux */
} bt_kind_t;

typedef struct {
    uint32_t kind, pc;
    size_t pos, aux;
} bt_t;

typedef struct {
    const swf_asl_regex_t *re;
    const unsigned char *s;
    size_t n;
    size_t *caps;
    size_t *count, *start; /* per loop register */
    bt_t *st;
    size_t sp, cap;
    size_t budget;
    int status; /* 0, or SWF_ASL_REGEX_TOO_LONG / _TOO_DEEP */
} m_t;

static bool push(m_t *m, bt_kind_t kind, uint32_t pc, size_t pos, size_t aux)
{
    if (m->sp == m->cap) {
        if (m->cap >= SWF_LIMIT_REGEX_BACKTRACK) {
            m->status = SWF_ASL_REGEX_TOO_DEEP;
            return false;
        }
        m->st = swf_array_grow(m->st, &m->cap, sizeof *m->st, 64);
    }
    m->st[m->sp++] = (bt_t){kind, pc, pos, aux};
    return true;
}

static bool undo_push(m_t *m, bt_kind_t kind, uint32_t what, size_t old)
{
    return push(m, kind, what, 0, old);
}

static void undo(m_t *m, const bt_t *e)
{
    switch (e->kind) {
    case BT_CAP:
        m->caps[e->pc] = e->aux;
        break;
    case BT_COUNT:
        m->count[e->pc] = e->aux;
        break;
    case BT_START:
        m->start[e->pc] = e->aux;
        break;
    default:
        break;
    }
}

/* Pops down to sp = base, undoing as it goes. */
static void unwind(m_t *m, size_t base)
{
    while (m->sp > base)
        undo(m, &m->st[--m->sp]);
}

/* The character before or after pos (back: before), and where that leaves
 * the position; false at the edge of the text. */
static bool read_char(const m_t *m, size_t pos, bool back, uint32_t *c, size_t *next)
{
    size_t len;
    if (back) {
        if (pos == 0)
            return false;
        size_t at = utf8_prev(m->s, m->n, pos);
        *c = utf8_at(m->s, m->n, at, &len);
        *next = at;
        return true;
    }
    if (pos >= m->n)
        return false;
    *c = utf8_at(m->s, m->n, pos, &len);
    *next = pos + len;
    return true;
}

/* One character matched by the I_CHAR, I_ANY or I_CLASS at in. */
static bool step_char(const m_t *m, const inst_t *in, size_t pos, size_t *next)
{
    uint32_t c;
    if (!read_char(m, pos, in->back, &c, next))
        return false;
    switch (in->op) {
    case I_CHAR:
        return c == in->a || (m->re->icase && canon(c) == in->a);
    case I_ANY:
        return !is_line_end(c);
    default:
        return cls_has(&m->re->classes[in->a], c, m->re->icase);
    }
}

static bool word_before(const m_t *m, size_t pos)
{
    return pos > 0 && is_word(m->s[pos - 1]);
}

static bool word_at(const m_t *m, size_t pos)
{
    return pos < m->n && is_word(m->s[pos]);
}

/* A back reference to s[a..b) at pos; moves pos past it. */
static bool match_backref(const m_t *m, size_t a, size_t b, bool back, size_t *pos)
{
    if (!m->re->icase) {
        size_t k = b - a;
        if (back ? *pos < k : m->n - *pos < k)
            return false;
        size_t at = back ? *pos - k : *pos;
        if (memcmp(m->s + at, m->s + a, k) != 0)
            return false;
        *pos = back ? at : at + k;
        return true;
    }
    size_t p = *pos, q = back ? b : a;
    while (back ? q > a : q < b) {
        uint32_t c1, c2;
        size_t nq;
        read_char(m, q, back, &c1, &nq);
        if (!read_char(m, p, back, &c2, &p) || canon(c1) != canon(c2))
            return false;
        q = nq;
    }
    *pos = p;
    return true;
}

static int run(m_t *m, uint32_t pc, size_t pos);

/* A lookaround at pc; on true the search goes on at its y. */
static bool lookaround(m_t *m, const inst_t *in, uint32_t pc, size_t pos)
{
    size_t base = m->sp;
    if (!push(m, BT_BARRIER, 0, 0, 0))
        return false;
    int r = run(m, pc + 1, pos);
    if (r < 0)
        return false;
    if (r == 0) /* the body failed; run undid its work and popped the barrier */
        return in->negative;
    if (in->negative) {
        unwind(m, base);
        return false;
    }
    /* matched: its choices go (a lookaround is atomic), its undo records
     * stay, for the backtracking of what follows */
    size_t k = base;
    for (size_t i = base + 1; i < m->sp; i++) {
        if (m->st[i].kind >= BT_CAP)
            m->st[k++] = m->st[i];
    }
    m->sp = k;
    return true;
}

/* Runs from pc at pos until I_MATCH or I_LOOK_END (1), or until every
 * choice down to the nearest barrier failed (0, the barrier popped), or
 * the budget or the stack ran out (< 0). */
static int run(m_t *m, uint32_t pc, size_t pos)
{
    const swf_asl_regex_t *re = m->re;
    for (;;) {
        if (m->budget == 0) {
            m->status = SWF_ASL_REGEX_TOO_LONG;
            return m->status;
        }
        m->budget--;
        const inst_t *in = &re->prog[pc];
        bool ok = true;
        size_t next;
        switch ((op_t)in->op) {
        case I_CHAR:
        case I_ANY:
        case I_CLASS:
            ok = step_char(m, in, pos, &pos);
            pc++;
            break;
        case I_STAR: {
            const inst_t *one = &re->prog[pc + 1];
            uint32_t k = 0;
            while (k < in->min && ok && m->budget > 0) {
                ok = step_char(m, one, pos, &pos);
                k++;
                m->budget--;
            }
            size_t least = pos;
            if (ok && k < in->min) { /* the budget ran out */
                m->status = SWF_ASL_REGEX_TOO_LONG;
                return m->status;
            }
            if (ok && in->greedy) {
                while (k < in->max && m->budget > 0 && step_char(m, one, pos, &next)) {
                    pos = next;
                    k++;
                    m->budget--;
                }
                if (pos != least)
                    ok = push(m, BT_STAR, pc, pos, least);
            } else if (ok && k < in->max) {
                ok = push(m, BT_STAR, pc, pos, k);
            }
            pc += 2;
            break;
        }
        case I_SPLIT:
            ok = push(m, BT_CHOICE, in->y, pos, 0);
            pc = in->x;
            break;
        case I_JMP:
            pc = in->x;
            break;
        case I_SAVE:
            ok = undo_push(m, BT_CAP, in->a, m->caps[in->a]);
            m->caps[in->a] = pos;
            pc++;
            break;
        case I_BOL: {
            uint32_t c;
            ok =
                pos == 0 || (re->multiline && read_char(m, pos, true, &c, &next) && is_line_end(c));
            pc++;
            break;
        }
        case I_EOL: {
            uint32_t c;
            ok = pos == m->n ||
                 (re->multiline && read_char(m, pos, false, &c, &next) && is_line_end(c));
            pc++;
            break;
        }
        case I_WORDB:
        case I_NWORDB:
            ok = (word_before(m, pos) != word_at(m, pos)) == (in->op == I_WORDB);
            pc++;
            break;
        case I_BACKREF: {
            size_t a = m->caps[2 * in->a], b = m->caps[2 * in->a + 1];
            if (a != UNSET && b != UNSET)
                ok = match_backref(m, a, b, in->back, &pos);
            pc++;
            break;
        }
        case I_REP_INIT:
            ok = undo_push(m, BT_COUNT, in->a, m->count[in->a]) &&
                 undo_push(m, BT_START, in->a, m->start[in->a]);
            m->count[in->a] = 0;
            pc++;
            break;
        case I_REP: {
            size_t k = m->count[in->a];
            if (k >= in->max) {
                pc = in->y;
            } else if (k < in->min) {
                pc++;
            } else if (in->greedy) {
                ok = push(m, BT_CHOICE, in->y, pos, 0);
                pc++;
            } else {
                ok = push(m, BT_CHOICE, pc + 1, pos, 0);
                pc = in->y;
            }
            break;
        }
        case I_REP_ENTER:
            ok = undo_push(m, BT_START, in->a, m->start[in->a]);
            m->start[in->a] = pos;
            for (uint32_t g = in->g0; ok && g <= in->g1; g++) { /* as RepeatMatcher does */
                for (uint32_t slot = 2 * g; ok && slot <= 2 * g + 1; slot++) {
                    if (m->caps[slot] != UNSET) {
                        ok = undo_push(m, BT_CAP, slot, m->caps[slot]);
                        m->caps[slot] = UNSET;
                    }
                }
            }
            pc++;
            break;
        case I_REP_NEXT: {
            const inst_t *loop = &re->prog[in->x];
            /* an iteration past the minimum that matched nothing fails */
            ok = !(m->count[in->a] >= loop->min && pos == m->start[in->a]);
            if (ok) {
                ok = undo_push(m, BT_COUNT, in->a, m->count[in->a]);
                m->count[in->a]++;
            }
            pc = in->x;
            break;
        }
        case I_LOOK:
            ok = lookaround(m, in, pc, pos);
            if (m->status != 0)
                return m->status;
            pc = in->y;
            break;
        case I_LOOK_END:
        case I_MATCH:
            return 1;
        }
        if (ok)
            continue;
        if (m->status != 0)
            return m->status;
        /* backtrack */
        for (;;) {
            assert(m->sp > 0);
            bt_t *e = &m->st[m->sp - 1];
            if (e->kind == BT_BARRIER) {
                m->sp--;
                return 0;
            }
            if (e->kind >= BT_CAP) {
                undo(m, e);
                m->sp--;
                continue;
            }
            if (m->budget == 0) {
                m->status = SWF_ASL_REGEX_TOO_LONG;
                return m->status;
            }
            m->budget--;
            if (e->kind == BT_CHOICE) {
                pc = e->pc;
                pos = e->pos;
                m->sp--;
                break;
            }
            const inst_t *star = &re->prog[e->pc];
            if (star->greedy) {
                uint32_t c;
                size_t np;
                if (star->back) {
                    read_char(m, e->pos, false, &c, &np);
                    if (np > e->aux) {
                        m->sp--;
                        continue;
                    }
                } else {
                    np = utf8_prev(m->s, m->n, e->pos);
                    if (np < e->aux) {
                        m->sp--;
                        continue;
                    }
                }
                e->pos = np;
                if (np == e->aux)
                    m->sp--; /* nothing left to give back */
                pc = e->pc + 2;
                pos = np;
                break;
            }
            if (e->aux >= star->max || !step_char(m, &re->prog[e->pc + 1], e->pos, &next)) {
                m->sp--;
                continue;
            }
            e->pos = next;
            e->aux++;
            pc = e->pc + 2;
            pos = next;
            break;
        }
    }
}

int swf_asl_regex_search(const swf_asl_regex_t *re, const char *s, size_t n, size_t from,
                         size_t *caps, size_t *budget)
{
    size_t ncaps = 2 * (re->groups + 1);
    m_t m = {.re = re, .s = (const unsigned char *)s, .n = n, .caps = caps, .budget = *budget};
    if (re->regs > 0) {
        m.count = calloc(re->regs, sizeof *m.count);
        m.start = calloc(re->regs, sizeof *m.start);
        if (m.count == NULL || m.start == NULL)
            abort();
    }
    /* a pattern that starts with a character, without i: skip to it */
    const inst_t *first = &re->prog[1];
    unsigned char lead = 0;
    if (first->op == I_CHAR && !re->icase && first->a <= MAX_CP) {
        uint32_t c = first->a;
        lead = (unsigned char)(c < 0x80      ? c
                               : c < 0x800   ? 0xC0 | (c >> 6)
                               : c < 0x10000 ? 0xE0 | (c >> 12)
                                             : 0xF0 | (c >> 18));
    }
    int result = SWF_ASL_REGEX_NO_MATCH;
    for (size_t i = 0; i < ncaps; i++)
        caps[i] = UNSET;
    for (size_t at = from; at <= n;) {
        if (lead != 0) {
            const void *hit = memchr(s + at, lead, n - at);
            if (hit == NULL)
                break;
            at = (size_t)((const char *)hit - s);
        }
        m.sp = 0;
        if (!push(&m, BT_BARRIER, 0, 0, 0))
            break;
        int r = run(&m, 0, at);
        if (r != 0) {
            result = r;
            break;
        }
        if (at == n)
            break;
        size_t len;
        utf8_at(m.s, n, at, &len);
        at += len;
    }
    if (result != SWF_ASL_REGEX_MATCH) {
        for (size_t i = 0; i < ncaps; i++)
            caps[i] = UNSET;
    }
    *budget = m.budget;
    free(m.st);
    free(m.count);
    free(m.start);
    return result;
}
