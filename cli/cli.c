/*
 * cli.c - dispatch of `swf COMMAND ...` to the command functions.
 *
 * The table below is the whole list of commands; `swf help` prints it.
 */
#include "cli/cli.h"

#include <string.h>

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *usage;
} command_t;

static const command_t commands[] = {
    {"validate", swf_cli_validate, "validate FILE...            check ASL definitions"},
    {"run", swf_cli_run,
     "run --local DEFINITION [--input FILE] [--mocks FILE] [--history]\n"
     "                               run an execution in-process"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: swf COMMAND [ARGS...]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(out, "  %s\n", commands[i].usage);
}

int swf_cli_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return SWF_EXIT_USAGE;
    }
    if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return SWF_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    }
    fprintf(stderr, "swf: unknown command \"%s\"\n", argv[1]);
    usage(stderr);
    return SWF_EXIT_USAGE;
}
