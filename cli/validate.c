/* validate.c - STUB, being written. */
#include "cli/cli.h"
int swf_cli_validate(int argc, char **argv) { return SWF_EXIT_ERROR; }
