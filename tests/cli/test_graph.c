/*
 * test_graph.c - proves cli/graph.c: the DOT text of a definition (Choice
 * rules on edges, Catch edges dashed, Parallel and Map clusters) and its
 * colouring by a recorded execution (outcomes, edge counts), and the clear
 * error of --svg without Graphviz.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"

#define H SWF_SOURCE_DIR "/tests/histories/"

static char output[1 << 20];

static int swf(const char *first, ...)
{
    char *argv[16] = {"swf", (char *)first};
    int argc = 2;
    va_list ap;
    va_start(ap, first);
    const char *a;
    while ((a = va_arg(ap, const char *)) != NULL && argc < 15)
        argv[argc++] = (char *)a;
    va_end(ap);
    argv[argc] = NULL;
    fflush(stdout);
    char path[] = "/tmp/swf-graph-out-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    int saved = dup(1);
    dup2(fd, 1);
    int code = swf_cli_main(argc, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, output, sizeof(output) - 1);
    output[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
    return code;
}

Test(cli_graph, definition_as_dot)
{
    cr_assert_eq(swf("graph", SWF_SOURCE_DIR "/examples/order.asl.json", NULL), 0);
    cr_assert(strncmp(output, "digraph swf {", 13) == 0, "%s", output);
    cr_assert(strstr(output, "\"Validate\" -> \"Charge\" [label=\"($.total > 0) and ($.items is "
                             "present)\"]") != NULL,
              "%s", output);
    cr_assert(strstr(output, "\"Validate\" -> \"Rejected\" [label=\"default\"]") != NULL);
    cr_assert(strstr(output, "\"Charge\" -> \"Declined\" [label=\"catch Payment.Declined\", "
                             "style=dashed]") != NULL,
              "%s", output);
    cr_assert(strstr(output, "subgraph \"cluster_Fulfil\"") != NULL);
    cr_assert(strstr(output, "subgraph \"cluster_Fulfil[0]/PackItems\"") != NULL);
    cr_assert(strstr(output, "\"Fulfil[0]/PackItems[*]/Pack\"") != NULL);
    cr_assert(strstr(output, "\"Fulfil#join\" -> \"WaitForCourier\"") != NULL);
    cr_assert(strstr(output, "never reached") == NULL);
}

Test(cli_graph, execution_colours_states_and_counts_edges)
{
    cr_assert_eq(swf("graph", "--history", H "src__debug.jsonl", NULL), 0, "%s", output);
    /* Three iterations of the inner Map in total, one retried. */
    cr_assert(strstr(output,
                     "\"Work[0]/Batches[*]/Items\" -> \"Work[0]/Batches[*]/Items[*]/Process\" "
                     "[label=\"3x\", penwidth=2]") != NULL,
              "%s", output);
    cr_assert(
        strstr(output, "label=\"Process\\n(Task)\\n3 visits, 1 retry\", fillcolor=\"#fff59d\"") !=
            NULL,
        "%s", output);
    cr_assert(strstr(output,
                     "label=\"Audit\\n(Task)\\n1 visit, 1 caught\", fillcolor=\"#ffcc80\"") != NULL,
              "%s", output);
    cr_assert(strstr(output, "\"Work[1]/Audit\" -> \"Work[1]/AuditSkipped\" [label=\"catch "
                             "States.ALL\\n1x\", style=dashed, penwidth=2]") != NULL,
              "%s", output);
    cr_assert(strstr(output, "label=\"Refused\\n(Fail)\\nnever reached\"") != NULL, "%s", output);
    cr_assert(strstr(output, "\"Done\" -> \"__end\" [label=\"1x\", penwidth=2]") != NULL);
}

Test(cli_graph, failed_execution_is_red_where_it_failed)
{
    cr_assert_eq(swf("graph", SWF_SOURCE_DIR "/examples/order.asl.json", "--history",
                     H "examples__order-declined.jsonl", NULL),
                 0);
    cr_assert(
        strstr(output, "label=\"Declined\\n(Fail)\\n1 visit, 1 failed\", fillcolor=\"#ef9a9a\"") !=
            NULL,
        "%s", output);
    cr_assert(strstr(output, "execution local: FAILED") != NULL);
}

Test(cli_graph, svg_without_graphviz_says_so)
{
    const char *old = getenv("PATH");
    char *saved = old ? strdup(old) : NULL;
    setenv("PATH", "/nonexistent", 1);
    cr_assert_eq(swf("graph", SWF_SOURCE_DIR "/examples/order.asl.json", "--svg", NULL), 3);
    cr_assert_str_eq(output, "");
    if (saved)
        setenv("PATH", saved, 1);
    free(saved);
}

Test(cli_graph, bad_arguments)
{
    cr_assert_eq(swf("graph", NULL), 2);
    cr_assert_eq(swf("graph", "--history", "/nonexistent.jsonl", NULL), 3);
}

/* A definition file is drawn as it is (graph does not validate it): a state
 * name longer than a node's label buffer, coloured by an execution, made
 * the label's length run past the buffer and the next writes land beyond
 * it (a crash). The label is cut instead. */
Test(cli_graph, a_state_name_longer_than_a_label_is_cut_not_a_crash)
{
    size_t len = 500000;
    char *name = malloc(len + 1);
    memset(name, 'S', len);
    name[len] = '\0';
    const char *path = "/tmp/swf-graph-long-name.json";
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f,
            "{\"StartAt\":\"A\",\"States\":{\"A\":{\"Type\":\"Pass\",\"End\":true},"
            "\"%s\":{\"Type\":\"Pass\",\"End\":true}}}",
            name);
    fclose(f);
    free(name);
    cr_assert_eq(
        swf("graph", path, "--history", SWF_SOURCE_DIR "/tests/histories/src__debug.jsonl", NULL),
        1, "%s", output);
    cr_assert(strstr(output, "never reached") != NULL, "%s", output);
    cr_assert(strstr(output, "}\n") != NULL);
    unlink(path);
}
