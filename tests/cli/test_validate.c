/*
 * test_validate.c - proves cli/validate.c by running the built `swf validate`
 * as a user would: exit statuses, where each line goes, and the --json form.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "protocol/json.h"

#define SWF SWF_BINARY_DIR "/swf"

static char dir[] = "/tmp/swf-test-validate-XXXXXX";

static void setup(void)
{
    cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

/* Writes `text` to dir/name and returns the path (static storage per slot). */
static const char *file(int slot, const char *name, const char *text)
{
    static char paths[4][512];
    snprintf(paths[slot], sizeof(paths[slot]), "%s/%s", dir, name);
    FILE *f = fopen(paths[slot], "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return paths[slot];
}

typedef struct result {
    int status;
    char out[8192];
    char err[8192];
} result_t;

static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
    buf[n] = '\0';
    if (f)
        fclose(f);
}

/* Runs `swf validate ARGS` with stdout and stderr captured. */
static void run(result_t *r, const char *args)
{
    char cmd[2048];
    snprintf(cmd, sizeof(cmd), "'%s' validate %s >'%s/out' 2>'%s/err'", SWF, args, dir, dir);
    int rc = system(cmd);
    cr_assert(WIFEXITED(rc), "swf did not exit normally");
    r->status = WEXITSTATUS(rc);
    char path[600];
    snprintf(path, sizeof(path), "%s/out", dir);
    slurp(path, r->out, sizeof(r->out));
    snprintf(path, sizeof(path), "%s/err", dir);
    slurp(path, r->err, sizeof(r->err));
}

#define VALID "{\"StartAt\":\"S\",\"States\":{\"S\":{\"Type\":\"Succeed\"}}}"
#define INVALID                                                                                    \
    "{\"StartAt\":\"S\",\"States\":{\"S\":{\"Type\":\"Pass\",\"Bogus\":1,\"Next\":\"Ghost\"}}}"

TestSuite(cli_validate, .init = setup, .fini = teardown);

Test(cli_validate, says_valid_and_exits_0_for_a_good_definition)
{
    const char *f = file(0, "good.json", VALID);
    result_t r;
    run(&r, f);
    cr_expect_eq(r.status, SWF_EXIT_OK);
    char want[600];
    snprintf(want, sizeof(want), "%s: valid\n", f);
    cr_expect_str_eq(r.out, want);
    cr_expect_str_eq(r.err, "");
}

Test(cli_validate, prints_every_problem_with_its_path_and_exits_1)
{
    const char *f = file(0, "bad.json", INVALID);
    result_t r;
    run(&r, f);
    cr_expect_eq(r.status, SWF_EXIT_NO);
    cr_expect_str_eq(r.out, "");
    char want[600];
    snprintf(want, sizeof(want), "%s: $.States.S.Bogus: ", f);
    cr_expect(strstr(r.err, want), "stderr: %s", r.err);
    snprintf(want, sizeof(want), "%s: $.States.S.Next: ", f);
    cr_expect(strstr(r.err, want), "stderr: %s", r.err);
}

/* json-c keeps the last of two members of one name: without the check the
 * first state A would vanish and validate would say valid. */
Test(cli_validate, refuses_two_states_of_the_same_name_with_the_path)
{
    const char *f = file(0, "dup.json",
                         "{\"StartAt\":\"A\",\"States\":{\n"
                         "  \"A\":{\"Type\":\"Pass\",\"End\":true},\n"
                         "  \"A\":{\"Type\":\"Succeed\"}}}\n");
    result_t r;
    run(&r, f);
    cr_expect_eq(r.status, SWF_EXIT_NO);
    cr_expect_str_eq(r.out, "");
    char want[600];
    snprintf(want, sizeof(want), "%s:3:3: $.States: duplicate key \"A\"", f);
    cr_expect(strstr(r.err, want), "stderr: %s", r.err);
}

Test(cli_validate, judges_each_file_and_fails_if_any_is_bad)
{
    const char *good = file(0, "good.json", VALID);
    const char *bad = file(1, "bad.json", INVALID);
    char args[1200];
    snprintf(args, sizeof(args), "'%s' '%s'", bad, good);
    result_t r;
    run(&r, args);
    cr_expect_eq(r.status, SWF_EXIT_NO);
    cr_expect(strstr(r.out, good) && strstr(r.out, ": valid"), "stdout: %s", r.out);
    cr_expect(strstr(r.err, bad), "stderr: %s", r.err);
}

/* README "Exit status": a malformed file is invalid (1); one that cannot be
 * read is 3, which wins over 1 when both happen. */
Test(cli_validate, counts_malformed_files_as_invalid_and_unreadable_ones_as_3)
{
    const char *broken = file(0, "broken.json", "{\"StartAt\":");
    result_t r;
    run(&r, broken);
    cr_expect_eq(r.status, SWF_EXIT_NO);
    char args[1200];
    snprintf(args, sizeof(args), "'%s' '%s/missing.json'", broken, dir);
    run(&r, args);
    cr_expect_eq(r.status, SWF_EXIT_ERROR);
    cr_expect(strstr(r.err, "swf: ") && strstr(r.err, "broken.json"), "stderr: %s", r.err);
    cr_expect(strstr(r.err, "missing.json"), "stderr: %s", r.err);
}

Test(cli_validate, is_a_usage_error_without_files)
{
    result_t r;
    run(&r, "");
    cr_expect_eq(r.status, SWF_EXIT_USAGE);
    cr_expect(strstr(r.err, "usage"));
    run(&r, "--json");
    cr_expect_eq(r.status, SWF_EXIT_USAGE);
    run(&r, "--frobnicate x.json");
    cr_expect_eq(r.status, SWF_EXIT_USAGE);
}

Test(cli_validate, prints_one_json_object_per_file)
{
    const char *good = file(0, "good.json", VALID);
    const char *bad = file(1, "bad.json", INVALID);
    char args[1200];
    snprintf(args, sizeof(args), "--json '%s' '%s' '%s/missing.json'", good, bad, dir);
    result_t r;
    run(&r, args);
    cr_expect_eq(r.status, SWF_EXIT_ERROR); /* missing.json could not be read */
    const char *want_file[3] = {good, bad, NULL};
    bool want_valid[3] = {true, false, false};
    char *save = NULL;
    int i = 0;
    for (char *line = strtok_r(r.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cr_assert_lt(i, 3, "too many lines");
        json_object *o = NULL;
        swf_error_t *err = swf_json_parse(line, strlen(line), 1 << 20, &o);
        cr_assert_null(err, "not JSON: %s", line);
        json_object *valid = NULL, *errors = NULL;
        cr_expect(swf_json_get(o, "valid", &valid));
        cr_expect_eq(json_object_get_boolean(valid), want_valid[i]);
        if (want_file[i])
            cr_expect_str_eq(swf_json_get_string(o, "file"), want_file[i]);
        cr_expect(swf_json_get(o, "errors", &errors) &&
                  json_object_is_type(errors, json_type_array));
        cr_expect_eq(json_object_array_length(errors) == 0, want_valid[i]);
        if (i == 1) {
            json_object *e = json_object_array_get_idx(errors, 0);
            cr_expect_str_eq(swf_json_get_string(e, "path"), "$.States.S.Bogus");
            cr_expect_not_null(swf_json_get_string(e, "message"));
        }
        json_object_put(o);
        i++;
    }
    cr_expect_eq(i, 3);
}

Test(cli_validate, runs_in_process_too)
{
    const char *f = file(0, "good.json", VALID);
    char *argv[] = {"validate", (char *)f, NULL};
    fflush(stdout);
    cr_expect_eq(swf_cli_validate(2, argv), SWF_EXIT_OK);
    char *none[] = {"validate", NULL};
    cr_expect_eq(swf_cli_validate(1, none), SWF_EXIT_USAGE);
}
