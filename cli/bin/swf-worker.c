/* swf-worker.c - the `swf-worker` program: everything lives in worker/cmd.c. */
#include "worker/cmd.h"

int main(int argc, char **argv)
{
    return swf_worker_cmd_main(argc, argv);
}
