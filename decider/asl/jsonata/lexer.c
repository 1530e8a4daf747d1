/*
 * lexer.c - the tokens of a JSONata expression: numbers, strings with JSON's
 * escapes, names and `quoted names`, $variables, operators, and /regex/
 * literals, scanned as jsonata-js scans them (after an operand a / divides;
 * elsewhere it starts a regular expression). The parser reads one token
 * ahead through jn__advance. The front end's error reporting is here too
 * (jn__perr keeps the first error and its offset), since most errors are
 * found while reading tokens.
 */
#include "decider/asl/jsonata/internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const jn__op_text[] = {
    "",   ".",  "[",  "]",  "{",   "}",  "(",  ")",  ",", ":",  ";", "?",
    "+",  "-",  "*",  "/",  "%",   "&",  "=",  "!=", "<", "<=", ">", ">=",
    ":=", "..", "~>", "**", "and", "or", "in", "^",  "@", "#",  "|",
};

void jn__perr(parser_t *p, size_t at, const char *fmt, ...)
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
                jn__perr(p, p->pos, "invalid \\u escape in a string");
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
            jn__perr(p, p->pos - 2, "unsupported escape sequence \\%c in a string", e);
            free(b.s);
            return;
        }
    }
    if (p->pos >= p->len) {
        jn__perr(p, t->at, "unterminated string");
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
        jn__perr(p, t->at, "unterminated regular expression");
        return;
    }
    if (p->pos == start) {
        jn__perr(p, t->at, "empty regular expression");
        return;
    }
    t->kind = TK_REGEX;
    t->text = strndup(p->src + start, p->pos - start);
    p->pos++;
    size_t nf = 0;
    while (p->pos < p->len && isalpha((unsigned char)p->src[p->pos])) {
        char f = p->src[p->pos++];
        if ((f != 'i' && f != 'm') || nf + 1 >= sizeof t->flags) {
            jn__perr(p, p->pos - 1, "unsupported regular expression flag '%c'", f);
            return;
        }
        t->flags[nf++] = f;
    }
}

/* Reads the next token into p->tok, freeing the text the previous one still
 * owned. A '/' where an operand is expected starts a regular expression. */
void jn__advance(parser_t *p)
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
                jn__perr(p, p->pos, "unterminated comment");
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
            jn__perr(p, t->at, "number literal out of range");
    } else if (c == '"' || c == '\'') {
        lex_string(p, t);
    } else if (c == '`') {
        const char *end = memchr(s + 1, '`', p->len - p->pos - 1);
        if (end == NULL) {
            jn__perr(p, t->at, "unterminated `name`");
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
            jn__perr(p, t->at, "unexpected character '%c'", c);
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

bool jn__tok_is(const parser_t *p, op_t op)
{
    return p->tok.kind == TK_OP && p->tok.op == op;
}

const char *jn__tok_describe(const token_t *t, char buf[64])
{
    switch (t->kind) {
    case TK_END:
        return "the end of the expression";
    case TK_OP:
        snprintf(buf, 64, "'%s'", jn__op_text[t->op]);
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

bool jn__expect(parser_t *p, op_t op)
{
    if (!jn__tok_is(p, op)) {
        char b[64];
        jn__perr(p, p->tok.at, "expected '%s', found %s", jn__op_text[op],
                 jn__tok_describe(&p->tok, b));
        return false;
    }
    jn__advance(p);
    return true;
}
