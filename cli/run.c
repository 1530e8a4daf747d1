/* run.c - STUB, being written. */
#include "cli/cli.h"
int swf_cli_run(int argc, char **argv) { return SWF_EXIT_ERROR; }
