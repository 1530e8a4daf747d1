#include "cli/cli.h"
int swf_cli_graph(int argc, char **argv) { (void)argc; (void)argv; return SWF_EXIT_USAGE; }
