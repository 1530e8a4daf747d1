/* main.c - the `swf` program: everything lives in the swf_cli library. */
#include "cli/cli.h"

int main(int argc, char **argv)
{
    return swf_cli_main(argc, argv);
}
