/*
 * graph.c - `swf graph (DEFINITION | ID) [--history HISTORY] [--svg]`: a
 * state machine as Graphviz DOT, optionally coloured by one execution.
 *
 * The picture is the definition: one node per state, Next and End edges,
 * Choice rules written on their edges, Catch edges dashed with the errors
 * they catch, and Parallel and Map states drawn as clusters holding their
 * branches or their iteration's states between a fork node (the state
 * itself) and a join node. Given an execution (an id in the PostgreSQL
 * history, or --history FILE), the history is replayed with the trace
 * callback and each state is coloured by what happened to it (succeeded,
 * retried, caught, failed, never reached), each edge labelled with how often
 * it was taken.
 *
 * Nodes are named by their scope so that states of the same name in
 * different branches stay apart: "Fulfil[0]/PackItems[*]/Pack" is Pack in
 * every iteration of the Map PackItems in branch 0 of Fulfil. Trace paths
 * carry iteration numbers ("Fulfil[0]/PackItems[2]"); they are folded onto
 * these names by replacing the index of every Map segment with "*", which
 * needs the state types, so the definition is walked once to collect them
 * before the replay and once more to write the DOT text.
 *
 * --svg pipes the text through `dot -Tsvg` when Graphviz is installed and
 * says clearly that it is not otherwise; nothing else needs Graphviz.
 */
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/replay_common.h"
#include "decider/nested.h"
#include "decider/replay.h"
#include "decider/sw/sw.h"
#include "protocol/alloc.h"
#include "protocol/json.h"
#include "protocol/limits.h"

/* Choice rule labels longer than this are cut. */
#define LABEL_MAX 60

/* What one state did in the execution, summed over every visit. */
typedef struct node_stats {
    long entered, succeeded, failed, caught, retried;
} node_stats_t;

typedef struct graph {
    json_object *states; /* node id -> the state's definition (borrowed refs) */
    json_object *counts; /* "from\x1fto" -> times taken */
    json_object *stats;  /* node id -> index into `nodes` */
    node_stats_t *nodes;
    size_t nnodes, capnodes;
    json_object *last; /* raw frame path -> node id of the last state entered */
    json_object *open; /* raw frame path + state -> 1 while a visit is open */
    bool traced;
    json_object *links; /* an execution's parent and children (decider/nested.h), or NULL */
    FILE *out;
} graph_t;

/* ---- names -------------------------------------------------------------------- */

static char *join(const char *scope, const char *name)
{
    size_t n = strlen(scope) + strlen(name) + 2;
    char *s = malloc(n);
    if (s == NULL)
        abort();
    snprintf(s, n, "%s%s%s", scope, scope[0] ? "/" : "", name);
    return s;
}

static const char *state_type(graph_t *g, const char *id)
{
    json_object *st;
    return swf_json_get(g->states, id, &st) ? swf_json_get_string(st, "Type") : NULL;
}

/* Folds a raw trace path onto graph scope names: Map indices become "*". */
static char *path_fold(graph_t *g, const char *path)
{
    size_t len = strlen(path);
    char *out = calloc(len * 2 + 2, 1);
    if (out == NULL)
        abort();
    const char *p = path;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t seglen = slash ? (size_t)(slash - p) : strlen(p);
        const char *br = memchr(p, '[', seglen);
        size_t namelen = br ? (size_t)(br - p) : seglen;
        char name[512];
        snprintf(name, sizeof(name), "%.*s", (int)namelen, p);
        char *id = join(out, name);
        const char *type = state_type(g, id);
        free(id);
        size_t o = strlen(out);
        if (o > 0)
            out[o++] = '/';
        if (type && strcmp(type, "Map") == 0)
            o += (size_t)sprintf(out + o, "%s[*]", name);
        else
            o += (size_t)sprintf(out + o, "%.*s", (int)seglen, p);
        out[o] = '\0';
        p += seglen;
        if (*p == '/')
            p++;
    }
    return out;
}

/* The node a frame path starts from and ends at: __start/__end at the top,
 * else the fork and join nodes of the Parallel or Map that owns it. */
static char *frame_owner(graph_t *g, const char *path, bool join_node)
{
    if (path[0] == '\0')
        return strdup(join_node ? "__end" : "__start");
    char *folded = path_fold(g, path);
    char *br = strrchr(folded, '[');
    if (br != NULL)
        *br = '\0';
    if (join_node) {
        size_t n = strlen(folded) + 6;
        char *j = malloc(n);
        snprintf(j, n, "%s#join", folded);
        free(folded);
        return j;
    }
    return folded;
}

/* The node transitions leave from: a Parallel's or Map's join node. */
static char *exit_node(graph_t *g, const char *id)
{
    const char *type = state_type(g, id);
    size_t n = strlen(id) + 6;
    char *s = malloc(n);
    if (s == NULL)
        abort();
    bool fork = type && (strcmp(type, "Parallel") == 0 || strcmp(type, "Map") == 0);
    snprintf(s, n, "%s%s", id, fork ? "#join" : "");
    return s;
}

/* ---- the trace -------------------------------------------------------------------- */

static node_stats_t *stats_of(graph_t *g, const char *id)
{
    json_object *v;
    if (swf_json_get(g->stats, id, &v))
        return &g->nodes[json_object_get_int64(v)];
    SWF_ARRAY_RESERVE(g->nodes, g->nnodes, g->capnodes, 32);
    memset(&g->nodes[g->nnodes], 0, sizeof(*g->nodes));
    json_object_object_add(g->stats, id, json_object_new_int64((int64_t)g->nnodes));
    return &g->nodes[g->nnodes++];
}

static void count_edge(graph_t *g, const char *from, const char *to)
{
    size_t n = strlen(from) + strlen(to) + 2;
    char *key = malloc(n);
    snprintf(key, n, "%s\x1f%s", from, to);
    json_object *v;
    int64_t c = swf_json_get(g->counts, key, &v) ? json_object_get_int64(v) : 0;
    json_object_object_add(g->counts, key, json_object_new_int64(c + 1));
    free(key);
}

static long edge_count(graph_t *g, const char *from, const char *to)
{
    size_t n = strlen(from) + strlen(to) + 2;
    char *key = malloc(n);
    snprintf(key, n, "%s\x1f%s", from, to);
    json_object *v;
    long c = swf_json_get(g->counts, key, &v) ? (long)json_object_get_int64(v) : 0;
    free(key);
    return c;
}

static void on_trace(void *ctx, const swf_asl_trace_t *t)
{
    graph_t *g = ctx;
    char *scope = path_fold(g, t->path);
    char *id = join(scope, t->state);
    size_t n = strlen(t->path) + strlen(t->state) + 2;
    char *okey = malloc(n);
    snprintf(okey, n, "%s\x1f%s", t->path, t->state);
    node_stats_t *st = stats_of(g, id);
    json_object *v;
    switch (t->kind) {
    case SWF_ASL_STATE_ENTERED:
        if (swf_json_get(g->open, okey, &v))
            break; /* entered again after a retry: the same visit */
        json_object_object_add(g->open, okey, json_object_new_boolean(1));
        st->entered++;
        const char *prev = swf_json_get_string(g->last, t->path);
        char *from = prev ? exit_node(g, prev) : frame_owner(g, t->path, false);
        count_edge(g, from, id);
        free(from);
        json_object_object_add(g->last, t->path, json_object_new_string(id));
        break;
    case SWF_ASL_STATE_RETRIED:
        st->retried++;
        break;
    case SWF_ASL_STATE_EXITED:
    case SWF_ASL_STATE_FAILED:
    case SWF_ASL_STATE_CAUGHT: {
        json_object_object_del(g->open, okey);
        if (t->kind == SWF_ASL_STATE_FAILED) {
            st->failed++;
            break;
        }
        if (t->kind == SWF_ASL_STATE_CAUGHT) {
            st->caught++;
            break;
        }
        st->succeeded++;
        json_object *def = NULL, *end;
        swf_json_get(g->states, id, &def);
        const char *type = swf_json_get_string(def, "Type");
        bool terminal = (swf_json_get(def, "End", &end) && json_object_get_boolean(end)) ||
                        (type && strcmp(type, "Succeed") == 0);
        if (terminal) {
            char *src = exit_node(g, id), *dst = frame_owner(g, t->path, true);
            count_edge(g, src, dst);
            free(src);
            free(dst);
        }
        break;
    }
    }
    free(okey);
    free(id);
    free(scope);
}

/* ---- DOT ------------------------------------------------------------------------ */

/* Writes s as a DOT quoted string; newlines become \n. */
static void dot_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(out, "\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", out);
        else
            fputc(*s, out);
    }
    fputc('"', out);
}

/* A Choice rule in a line: "$.total > 0 and $.items is present". */
static void rule_text(json_object *rule, char *buf, size_t size)
{
    buf[0] = '\0';
    json_object *v;
    const char *conj = NULL;
    if (swf_json_get(rule, "And", &v))
        conj = " and ";
    else if (swf_json_get(rule, "Or", &v))
        conj = " or ";
    if (conj != NULL && json_object_is_type(v, json_type_array)) {
        size_t o = 0;
        for (size_t i = 0; i < json_object_array_length(v) && o + 1 < size; i++) {
            char sub[256];
            rule_text(json_object_array_get_idx(v, i), sub, sizeof(sub));
            o += (size_t)snprintf(buf + o, size - o, "%s(%s)", i ? conj : "", sub);
            if (o >= size)
                o = size - 1;
        }
        return;
    }
    if (swf_json_get(rule, "Not", &v)) {
        char sub[256];
        rule_text(v, sub, sizeof(sub));
        snprintf(buf, size, "not (%s)", sub);
        return;
    }
    const char *cond = swf_json_get_string(rule, "Condition");
    if (cond != NULL) {
        snprintf(buf, size, "%s", cond);
        return;
    }
    const char *var = swf_json_get_string(rule, "Variable");
    json_object_object_foreach(rule, key, val)
    {
        if (strcmp(key, "Variable") == 0 || strcmp(key, "Next") == 0 ||
            strcmp(key, "Comment") == 0 || strcmp(key, "Assign") == 0)
            continue;
        if (strncmp(key, "Is", 2) == 0) {
            bool yes = json_object_get_boolean(val);
            char what[64];
            snprintf(what, sizeof(what), "%s", key + 2);
            for (char *c = what; *c; c++)
                *c = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
            if (strcmp(what, "present") == 0)
                snprintf(buf, size, "%s is %s", var ? var : "?", yes ? "present" : "absent");
            else
                snprintf(buf, size, "%s is %s%s", var ? var : "?", yes ? "" : "not ", what);
            return;
        }
        static const struct {
            const char *suffix, *op;
        } ops[] = {{"LessThanEquals", "<="}, {"GreaterThanEquals", ">="},
                   {"LessThan", "<"},        {"GreaterThan", ">"},
                   {"Equals", "=="},         {"Matches", "matches"}};
        char k[64];
        snprintf(k, sizeof(k), "%s", key);
        size_t kl = strlen(k);
        bool path = kl > 4 && strcmp(k + kl - 4, "Path") == 0;
        if (path)
            k[kl - 4] = '\0';
        const char *op = key;
        for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
            size_t sl = strlen(ops[i].suffix), l = strlen(k);
            if (l >= sl && strcmp(k + l - sl, ops[i].suffix) == 0) {
                op = ops[i].op;
                break;
            }
        }
        snprintf(buf, size, "%s %s %s", var ? var : "?", op,
                 path ? json_object_get_string(val) : swf_json_str(val));
        return;
    }
}

static void emit_node(graph_t *g, const char *id, const char *name, const char *type, int indent)
{
    FILE *out = g->out;
    const char *shape = "box";
    const char *extra = "";
    if (strcmp(type, "Choice") == 0)
        shape = "diamond";
    else if (strcmp(type, "Task") == 0)
        extra = ", style=\"rounded,filled\"";
    else if (strcmp(type, "Wait") == 0)
        shape = "octagon";
    else if (strcmp(type, "Succeed") == 0)
        shape = "ellipse";
    else if (strcmp(type, "Fail") == 0)
        extra = ", peripheries=2";
    else if (strcmp(type, "Parallel") == 0 || strcmp(type, "Map") == 0)
        shape = "box3d";
    char label[1024];
    const char *fill = "white";
    const char *style = NULL;
    /* snprintf returns what it would have written: a name longer than the
     * label is cut, and `n` must not point past the buffer. */
#define LABEL_USED(n) ((n) < 0 ? 0 : (size_t)(n) >= sizeof(label) ? (int)sizeof(label) - 1 : (n))
    /* A Serverless Workflow document's picture says what each state is
     * (decider/sw/picture.c); the ASL type gives the shape. */
    json_object *st_def;
    const char *shown = NULL;
    if (swf_json_get(g->states, id, &st_def))
        shown = swf_json_get_string(st_def, SWF_SW_MARKER ":Type");
    int n = LABEL_USED(snprintf(label, sizeof(label), "%s\n(%s)", name, shown ? shown : type));
    if (g->traced) {
        node_stats_t zero = {0}, *st = &zero;
        json_object *v;
        if (swf_json_get(g->stats, id, &v))
            st = &g->nodes[json_object_get_int64(v)];
        if (st->entered == 0) {
            fill = "#eeeeee";
            style = "filled,dashed";
            snprintf(label + n, sizeof(label) - (size_t)n, "\nnever reached");
        } else {
            fill = st->failed      ? "#ef9a9a"
                   : st->caught    ? "#ffcc80"
                   : st->retried   ? "#fff59d"
                   : st->succeeded ? "#a5d6a7"
                                   : "#90caf9";
            n = LABEL_USED(n + snprintf(label + n, sizeof(label) - (size_t)n, "\n%ld visit%s",
                                        st->entered, st->entered == 1 ? "" : "s"));
            if (st->retried)
                n = LABEL_USED(n + snprintf(label + n, sizeof(label) - (size_t)n, ", %ld retr%s",
                                            st->retried, st->retried == 1 ? "y" : "ies"));
            if (st->caught)
                n = LABEL_USED(
                    n + snprintf(label + n, sizeof(label) - (size_t)n, ", %ld caught", st->caught));
            if (st->failed)
                n = LABEL_USED(
                    n + snprintf(label + n, sizeof(label) - (size_t)n, ", %ld failed", st->failed));
            if (st->entered > st->succeeded + st->failed + st->caught)
                snprintf(label + n, sizeof(label) - (size_t)n, ", %ld open",
                         st->entered - st->succeeded - st->failed - st->caught);
        }
    }
#undef LABEL_USED
    fprintf(out, "%*s", indent, "");
    dot_str(out, id);
    fprintf(out, " [shape=%s, label=", shape);
    dot_str(out, label);
    fprintf(out, ", fillcolor=\"%s\"%s", fill, style ? "" : extra);
    if (style)
        fprintf(out, ", style=\"%s\"", style);
    fprintf(out, "];\n");
}

static void emit_edge(graph_t *g, const char *from, const char *to, const char *label, bool dashed,
                      int indent)
{
    FILE *out = g->out;
    char text[LABEL_MAX + 64];
    text[0] = '\0';
    if (label != NULL) {
        snprintf(text, sizeof(text), "%.*s%s", LABEL_MAX, label,
                 strlen(label) > LABEL_MAX ? "..." : "");
    }
    long n = g->traced ? edge_count(g, from, to) : 0;
    if (g->traced && n > 0) {
        size_t l = strlen(text);
        snprintf(text + l, sizeof(text) - l, "%s%ldx", l ? "\n" : "", n);
    }
    fprintf(out, "%*s", indent, "");
    dot_str(out, from);
    fputs(" -> ", out);
    dot_str(out, to);
    fputs(" [label=", out);
    dot_str(out, text);
    if (dashed)
        fputs(", style=dashed", out);
    if (g->traced)
        fputs(n > 0 ? ", penwidth=2" : ", color=\"#9e9e9e\"", out);
    fputs("];\n", out);
}

/* Walks a machine (top level, branch or iteration): collects the states
 * (emit false) or writes them (emit true). */
static void walk(graph_t *g, const char *scope, json_object *machine, const char *entry,
                 const char *exit, bool emit, int indent)
{
    json_object *states = NULL;
    if (!swf_json_get(machine, "States", &states) || !json_object_is_type(states, json_type_object))
        return;
    const char *start = swf_json_get_string(machine, "StartAt");
    if (emit && start != NULL) {
        char *to = join(scope, start);
        emit_edge(g, entry, to, NULL, false, indent);
        free(to);
    }
    json_object_object_foreach(states, name, st)
    {
        char *id = join(scope, name);
        const char *type = swf_json_get_string(st, "Type");
        type = type ? type : "?";
        bool par = strcmp(type, "Parallel") == 0, map = strcmp(type, "Map") == 0;
        if (!emit)
            json_object_object_add(g->states, id, swf_json_ref(st));
        if ((par || map) && emit) {
            fprintf(g->out, "%*ssubgraph ", indent, "");
            char cl[1024];
            snprintf(cl, sizeof(cl), "cluster_%s", id);
            dot_str(g->out, cl);
            fprintf(g->out, " {\n%*slabel=", indent + 2, "");
            char lab[600];
            snprintf(lab, sizeof(lab), "%s (%s)", name, type);
            dot_str(g->out, lab);
            fprintf(g->out, "; style=rounded; color=\"#607d8b\";\n");
            emit_node(g, id, name, type, indent + 2);
            char *jn = exit_node(g, id);
            fprintf(g->out, "%*s", indent + 2, "");
            dot_str(g->out, jn);
            fprintf(g->out, " [shape=point, width=0.15, label=\"\"];\n");
            free(jn);
        } else if (emit) {
            emit_node(g, id, name, type, indent);
        }
        if (par || map) {
            char *jn = exit_node(g, id);
            if (par) {
                json_object *branches;
                if (swf_json_get(st, "Branches", &branches) &&
                    json_object_is_type(branches, json_type_array)) {
                    for (size_t i = 0; i < json_object_array_length(branches); i++) {
                        char bscope[600];
                        snprintf(bscope, sizeof(bscope), "%s[%zu]", id, i);
                        if (emit) {
                            fprintf(g->out, "%*ssubgraph ", indent + 2, "");
                            char cl[700];
                            snprintf(cl, sizeof(cl), "cluster_%s", bscope);
                            dot_str(g->out, cl);
                            fprintf(g->out, " {\n%*slabel=\"branch %zu\"; style=dashed;\n",
                                    indent + 4, "", i);
                        }
                        walk(g, bscope, json_object_array_get_idx(branches, i), id, jn, emit,
                             indent + 4);
                        if (emit)
                            fprintf(g->out, "%*s}\n", indent + 2, "");
                    }
                }
            } else {
                json_object *proc = NULL;
                if (!swf_json_get(st, "ItemProcessor", &proc))
                    swf_json_get(st, "Iterator", &proc);
                char mscope[600];
                snprintf(mscope, sizeof(mscope), "%s[*]", id);
                walk(g, mscope, proc, id, jn, emit, indent + 2);
            }
            free(jn);
            if (emit)
                fprintf(g->out, "%*s}\n", indent, "");
        }
        if (emit) {
            char *from = exit_node(g, id);
            const char *next = swf_json_get_string(st, "Next");
            json_object *v;
            if (next != NULL) {
                char *to = join(scope, next);
                emit_edge(g, from, to, NULL, false, indent);
                free(to);
            }
            if ((swf_json_get(st, "End", &v) && json_object_get_boolean(v)) ||
                strcmp(type, "Succeed") == 0)
                emit_edge(g, from, exit, NULL, false, indent);
            if (strcmp(type, "Choice") == 0) {
                json_object *choices;
                if (swf_json_get(st, "Choices", &choices) &&
                    json_object_is_type(choices, json_type_array)) {
                    for (size_t i = 0; i < json_object_array_length(choices); i++) {
                        json_object *rule = json_object_array_get_idx(choices, i);
                        const char *rn = swf_json_get_string(rule, "Next");
                        if (rn == NULL)
                            continue;
                        char text[512];
                        rule_text(rule, text, sizeof(text));
                        char *to = join(scope, rn);
                        emit_edge(g, from, to, text, false, indent);
                        free(to);
                    }
                }
                const char *def = swf_json_get_string(st, "Default");
                if (def != NULL) {
                    char *to = join(scope, def);
                    emit_edge(g, from, to, "default", false, indent);
                    free(to);
                }
            }
            json_object *catch;
            if (swf_json_get(st, "Catch", &catch) && json_object_is_type(catch, json_type_array)) {
                for (size_t i = 0; i < json_object_array_length(catch); i++) {
                    json_object *c = json_object_array_get_idx(catch, i), *errs;
                    const char *cn = swf_json_get_string(c, "Next");
                    if (cn == NULL)
                        continue;
                    char text[512] = "catch ";
                    if (swf_json_get(c, "ErrorEquals", &errs) &&
                        json_object_is_type(errs, json_type_array)) {
                        for (size_t k = 0; k < json_object_array_length(errs); k++) {
                            size_t l = strlen(text);
                            snprintf(text + l, sizeof(text) - l, "%s%s", k ? ", " : "",
                                     json_object_get_string(json_object_array_get_idx(errs, k)));
                        }
                    }
                    char *to = join(scope, cn);
                    emit_edge(g, from, to, text, true, indent);
                    free(to);
                }
            }
            free(from);
        }
        free(id);
    }
}

/* Nested executions: the parent that started this execution, and each
 * child a Task started, as other executions (dashed edges). A Task in a
 * Parallel branch or a Map iteration is found by its name at the top level
 * only; its child then hangs off the start. */
static void emit_links(graph_t *g)
{
    FILE *out = g->out;
    json_object *parent = NULL, *children = NULL;
    if (g->links == NULL)
        return; /* a definition, not an execution */
    swf_json_get(g->links, "parent", &parent);
    swf_json_get(g->links, "children", &children);
    if (parent != NULL) {
        char label[400];
        snprintf(label, sizeof(label), "parent execution\n%s",
                 swf_json_get_string(parent, "executionId"));
        fprintf(out, "  \"__parent\" [shape=component, fillcolor=white, label=");
        dot_str(out, label);
        fprintf(out, "];\n  \"__parent\" -> \"__start\" [style=dashed, label=\"started\"];\n");
    }
    for (size_t i = 0; i < json_object_array_length(children); i++) {
        json_object *c = json_object_array_get_idx(children, i);
        const char *id = swf_json_get_string(c, "executionId");
        const char *state = swf_json_get_string(c, "state");
        char node[400], label[400];
        snprintf(node, sizeof(node), "__child/%s", id);
        snprintf(label, sizeof(label), "child execution\n%s", id);
        fprintf(out, "  ");
        dot_str(out, node);
        fprintf(out, " [shape=component, fillcolor=white, label=");
        dot_str(out, label);
        fprintf(out, "];\n  ");
        dot_str(out, state != NULL && state_type(g, state) != NULL ? state : "__start");
        fprintf(out, " -> ");
        dot_str(out, node);
        fprintf(out, " [style=dashed, label=\"starts\"];\n");
    }
}

static void emit_graph(graph_t *g, json_object *def, const char *title)
{
    FILE *out = g->out;
    fprintf(out, "digraph swf {\n  compound=true; rankdir=TB; fontname=\"Helvetica\";\n");
    fprintf(out, "  node [fontname=\"Helvetica\", fontsize=10, style=filled];\n");
    fprintf(out, "  edge [fontname=\"Helvetica\", fontsize=9];\n");
    if (title != NULL) {
        fprintf(out, "  labelloc=t; label=");
        dot_str(out, title);
        fprintf(out, ";\n");
    }
    fprintf(out, "  \"__start\" [shape=circle, label=\"start\", fillcolor=white];\n");
    fprintf(out, "  \"__end\" [shape=doublecircle, label=\"end\", fillcolor=white];\n");
    walk(g, "", def, "__start", "__end", true, 2);
    emit_links(g);
    fprintf(out, "}\n");
}

/* ---- the command ------------------------------------------------------------------ */

/* True when Graphviz's dot is on PATH. */
static bool dot_installed(void)
{
    const char *path = getenv("PATH");
    if (path == NULL)
        return false;
    char *copy = strdup(path), *save = NULL;
    bool found = false;
    for (char *dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
        char p[4096];
        snprintf(p, sizeof(p), "%s/dot", dir);
        found = access(p, X_OK) == 0;
    }
    free(copy);
    return found;
}

static const swf_cli_cmd_t graph_cmd = {
    "swf graph", "(DEFINITION | ID | --workflow-id WORKFLOW_ID) [--history HISTORY] [--svg]",
    "Draw a state machine as Graphviz DOT; given an execution, colour each state by what "
    "happened to it and label each edge with how often it was taken.",
    (const swf_cli_opt_t[]){
        {"DEFINITION|ID", NULL, 0,
         "an ASL definition file (the picture of the definition), or an execution id (the "
         "picture of its execution, with its recorded definition)",
         "swf graph order.asl.json | dot -Tpng > order.png"},
        {"--workflow-id", "WORKFLOW_ID", SWF_CLI_FOR_OPERAND,
         "instead of ID: the open execution of this workflow id, else the one started last",
         "swf graph --workflow-id order-7 --svg > order-7.svg"},
        {"--history", "HISTORY", 0,
         "colour by this exported history (swf export) instead of one in the database",
         "swf graph order.asl.json --history order-7.jsonl"},
        {"--svg", NULL, 0, "SVG instead of DOT text (runs Graphviz's dot)",
         "swf graph order.asl.json --svg > order.svg"},
        SWF_CLI_OPTS_END},
    NULL};

int swf_cli_graph(int argc, char **argv)
{
    swf_cli_args_t a;
    if (!swf_cli_args_parse(&graph_cmd, argc, argv, &a))
        return a.status;
    const char *arg = swf_cli_args_get(&a, "DEFINITION|ID");
    const char *history = swf_cli_args_get(&a, "--history");
    bool svg = swf_cli_args_has(&a, "--svg");
    char *resolved = NULL;
    if (swf_cli_args_has(&a, "--workflow-id")) {
        if (!swf_cli_args_execution_of(&a, swf_cli_args_get(&a, "--workflow-id"), &resolved))
            return a.status;
        arg = resolved;
    }
    if (arg == NULL && history == NULL)
        return swf_cli_args_usage(&a, "missing DEFINITION or ID (or --history)");
    if (svg && !dot_installed()) {
        fprintf(stderr, "swf graph: --svg needs Graphviz's `dot` program, which is not "
                        "installed (Debian: apt-get install graphviz); without --svg the DOT "
                        "text can be rendered anywhere else\n");
        free(resolved);
        return SWF_EXIT_ERROR;
    }

    int rc = SWF_EXIT_ERROR;
    graph_t g = {
        .states = json_object_new_object(),
        .counts = json_object_new_object(),
        .stats = json_object_new_object(),
        .last = json_object_new_object(),
        .open = json_object_new_object(),
    };
    json_object *def = NULL, *pic = NULL; /* pic: what is drawn */
    swf_event_list_t events = {0};
    swf_decider_replay_result_t res = {0};
    char *text = NULL, title[512] = "";
    size_t text_len = 0;
    swf_error_t *err = NULL;
    struct stat sb;
    bool def_file = arg != NULL && stat(arg, &sb) == 0;
    if (def_file) {
        err = swf_json_read_file(arg, SWF_LIMIT_DEFINITION_BYTES, &def);
        if (err == NULL && !json_object_is_type(def, json_type_object))
            err = swf_error_new(SWF_E_INPUT, NULL, "%s: a definition is a JSON object", arg);
    }
    if (err == NULL && (history != NULL || !def_file))
        err = swf_cli_replay_history_load(def_file ? NULL : arg, history, &events);
    if (err == NULL && def == NULL) {
        json_object *d = NULL;
        if (events.count == 0 || !swf_json_get(events.items[0].attrs, "definition", &d) ||
            d == NULL)
            err = swf_error_new(SWF_E_INPUT, NULL, "the history has no definition");
        def = swf_json_ref(d);
    }
    if (err != NULL) {
        rc = swf_cli_replay_fail("graph", err);
        goto done;
    }
    if (swf_sw_is_document(def)) {
        pic = swf_sw_picture(def);
        if (pic == NULL) {
            rc = swf_cli_replay_fail("graph",
                                     swf_error_new(SWF_E_INPUT, NULL,
                                                   "the Serverless Workflow document is invalid "
                                                   "(swf validate lists the problems)"));
            goto done;
        }
    } else {
        pic = swf_json_ref(def);
    }
    walk(&g, "", pic, "__start", "__end", false, 0);
    if (events.count > 0) {
        swf_decider_replay_options_t opt = {.trace = on_trace, .trace_ctx = &g};
        if (def_file)
            opt.definition = def;
        err = swf_decider_replay_run(&events, &opt, &res);
        if (err != NULL) {
            rc = swf_cli_replay_fail("graph", err);
            goto done;
        }
        if (res.error != NULL)
            fprintf(stderr,
                    "swf graph: the replay stops at a divergence, counts cover what "
                    "replayed: %s\n",
                    swf_error_message(res.error));
        g.traced = true;
        g.links = swf_nested_links(&events);
        snprintf(title, sizeof(title),
                 "execution %s: %s (%zu events)\ngreen succeeded, yellow retried, orange caught, "
                 "red failed, grey never reached; edges: times taken",
                 swf_cli_replay_execution_id(&events),
                 swf_asl_status_name(swf_asl_exec_status(res.exec)), events.count);
    }
    FILE *mem = open_memstream(&text, &text_len);
    if (mem == NULL)
        abort();
    g.out = mem;
    emit_graph(&g, pic, g.traced ? title : NULL);
    fclose(mem);
    if (svg) {
        fflush(stdout);
        FILE *p = popen("dot -Tsvg", "w");
        if (p == NULL) {
            fprintf(stderr, "swf graph: cannot run dot\n");
            goto done;
        }
        fwrite(text, 1, text_len, p);
        int st = pclose(p);
        if (st != 0) {
            fprintf(stderr, "swf graph: dot failed (status %d)\n", st);
            goto done;
        }
    } else {
        fwrite(text, 1, text_len, stdout);
    }
    rc = res.error != NULL ? SWF_EXIT_NO : SWF_EXIT_OK;
done:
    free(text);
    free(g.nodes);
    json_object_put(g.states);
    json_object_put(g.counts);
    json_object_put(g.stats);
    json_object_put(g.last);
    json_object_put(g.open);
    json_object_put(g.links);
    json_object_put(def);
    json_object_put(pic);
    swf_decider_replay_result_free(&res);
    swf_event_list_free(&events);
    free(resolved);
    return rc;
}
