/*
 * test_dev.c - `swf run --dev` (cli/dev.c) prints the same line as
 * `swf run --local` for the example order workflow (Task, Retry, Parallel,
 * Map, a one-hour Wait scaled down, Catch), on both of its mocks files.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/json.h"

static json_object *run(const char *mode, const char *mocks)
{
    char cmd[2048];
    snprintf(cmd, sizeof(cmd),
             "env -u SWF_DATABASE_URL -u SWF_KAFKA_BROKERS SWF_DEV_RUN_TIMEOUT=300 "
             "%s/swf run %s %s/examples/order.asl.json --input %s/examples/order.input.json "
             "--mocks %s/examples/%s",
             SWF_BINARY_DIR, mode, SWF_SOURCE_DIR, SWF_SOURCE_DIR, SWF_SOURCE_DIR, mocks);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    static char line[1 << 16];
    size_t n = fread(line, 1, sizeof(line) - 1, p);
    line[n] = '\0';
    pclose(p);
    json_object *o = NULL;
    swf_error_t *err = swf_json_parse(line, n, sizeof(line), &o);
    cr_assert_null(err, "%s printed: %s", mode, line);
    return o;
}

Test(dev, run_dev_prints_what_run_local_prints, .timeout = 600)
{
    const char *mocks[] = {"order.mocks.json", "order.declined.mocks.json"};
    for (int i = 0; i < 2; i++) {
        json_object *dev = run("--dev", mocks[i]), *local = run("--local", mocks[i]);
        cr_assert(swf_json_equal(dev, local), "--dev %s, --local %s", swf_json_str(dev),
                  swf_json_str(local));
        json_object_put(dev);
        json_object_put(local);
    }
}
