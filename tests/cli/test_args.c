/*
 * test_args.c - proves cli/args.c, the command-line parser of every swf
 * program, and cli/target.c (--workflow-id): in-process against a table of
 * its own, and through the built programs as a user meets them (messages
 * that name the bad option, --help that exits 0 and starts nothing).
 */
#include "../history/test_pg_fixture.h"

#include <stdarg.h>
#include <sys/wait.h>

#include "cli/cli.h"
#include "protocol/json.h"

/* Runs a shell command line (stderr joined to stdout) with `swf`, the
 * daemons and $DIR in reach; returns the exit status, the output in out. */
static int sh(char *out, size_t size, const char *fmt, ...)
{
    char line[4096];
    int n = snprintf(line, sizeof(line), "cd %s && ", SWF_BINARY_DIR);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    strncat(line, " 2>&1", sizeof(line) - strlen(line) - 1);
    FILE *p = popen(line, "r");
    cr_assert_not_null(p);
    size_t got = fread(out, 1, size - 1, p);
    out[got] = '\0';
    int st = pclose(p);
    cr_assert(WIFEXITED(st), "%s did not exit", line);
    return WEXITSTATUS(st);
}

static char text[1 << 16];

/* ---- the parser, in-process ----------------------------------------------- */

static const swf_cli_cmd_t demo = {
    "swf demo", NULL, "A command for the tests.",
    (const swf_cli_opt_t[]){{"NAME", NULL, SWF_CLI_REQUIRED, "a name", "swf demo x"},
                            {"FILE", NULL, SWF_CLI_MANY, "files", "swf demo x a b"},
                            {"--input", "JSON|@FILE", 0, "input", "swf demo x --input 1"},
                            {"--tag", "TAG", SWF_CLI_MANY, "tags", "swf demo x --tag a"},
                            {"--json", NULL, 0, "JSON out", "swf demo x --json"},
                            {"--limit", "N", 0, "a number", "swf demo x --limit 3"},
                            SWF_CLI_OPTS_END},
    NULL};

static bool parse(swf_cli_args_t *a, char **argv)
{
    int argc = 0;
    while (argv[argc] != NULL)
        argc++;
    fflush(stderr);
    return swf_cli_args_parse(&demo, argc, argv, a);
}

Test(cli_args, fills_operands_options_and_flags_in_any_order)
{
    char *argv[] = {"demo", "--json", "x", "--input={\"a\":1}", "f1", "--tag", "t1", "--tag", "t2",
                    "--",   "--f2",   NULL};
    swf_cli_args_t a;
    cr_assert(parse(&a, argv));
    cr_assert_str_eq(swf_cli_args_get(&a, "NAME"), "x");
    cr_assert_str_eq(swf_cli_args_get(&a, "--input"), "{\"a\":1}");
    cr_assert(swf_cli_args_has(&a, "--json"));
    cr_assert_not(swf_cli_args_has(&a, "--limit"));
    cr_assert_null(swf_cli_args_get(&a, "--limit"));
    cr_assert_eq(swf_cli_args_count(&a, "FILE"), 2);
    int pos = 0;
    cr_assert_str_eq(swf_cli_args_next(&a, "FILE", &pos), "f1");
    cr_assert_str_eq(swf_cli_args_next(&a, "FILE", &pos), "--f2"); /* after --: an operand */
    cr_assert_null(swf_cli_args_next(&a, "FILE", &pos));
    pos = 0;
    cr_assert_str_eq(swf_cli_args_next(&a, "--tag", &pos), "t1");
    cr_assert_str_eq(swf_cli_args_next(&a, "--tag", &pos), "t2");
    cr_assert_null(swf_cli_args_next(&a, "--tag", &pos));
}

Test(cli_args, refuses_what_the_table_does_not_allow_with_status_2)
{
    char *unknown[] = {"demo", "x", "--inptu", "1", NULL};
    char *no_value[] = {"demo", "x", "--input", NULL};
    char *value_is_an_option[] = {"demo", "x", "--input", "--json", NULL};
    char *flag_with_value[] = {"demo", "x", "--json=yes", NULL};
    char *twice[] = {"demo", "x", "--input", "1", "--input", "2", NULL};
    char *missing[] = {"demo", "--json", NULL};
    char *single_dash[] = {"demo", "x", "-j", NULL};
    char **bad[] = {unknown, no_value, value_is_an_option, flag_with_value,
                    twice,   missing,  single_dash};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        swf_cli_args_t a;
        cr_assert_not(parse(&a, bad[i]), "case %zu parsed", i);
        cr_assert_eq(a.status, SWF_EXIT_USAGE, "case %zu", i);
    }
}

Test(cli_args, help_is_asked_anywhere_and_exits_0)
{
    char *argv[] = {"demo", "--bogus", "-h", NULL};
    swf_cli_args_t a;
    fflush(stdout);
    cr_assert_not(parse(&a, argv));
    cr_assert_eq(a.status, 0);
}

Test(cli_args, checks_numbers_against_their_range)
{
    char *good[] = {"demo", "x", "--limit", "7", NULL};
    char *bad[] = {"demo", "x", "--limit", "7x", NULL};
    swf_cli_args_t a;
    int64_t n = 0;
    cr_assert(parse(&a, good));
    cr_assert(swf_cli_args_int(&a, "--limit", 1, 10, &n));
    cr_assert_eq(n, 7);
    cr_assert_not(swf_cli_args_int(&a, "--limit", 8, 10, &n));
    cr_assert_eq(a.status, SWF_EXIT_USAGE);
    cr_assert(parse(&a, bad));
    cr_assert_not(swf_cli_args_int(&a, "--limit", 1, 10, &n));
}

Test(cli_args, suggests_the_closest_name_only_when_close)
{
    const char *names[] = {"--input", "--workflow-id", "--version", "--wait"};
    cr_assert_str_eq(swf_cli_args_closest("--inptu", names, 4), "--input");
    cr_assert_str_eq(swf_cli_args_closest("--inp", names, 4), "--input");
    cr_assert_str_eq(swf_cli_args_closest("--workflowid", names, 4), "--workflow-id");
    cr_assert_str_eq(swf_cli_args_closest("--wiat", names, 4), "--wait");
    cr_assert_null(swf_cli_args_closest("--color", names, 4));
}

/* ---- JSON on the command line --------------------------------------------- */

static char dir[] = "/tmp/swf-test-args-XXXXXX";

static const char *file_with(const char *name, const char *content)
{
    static char path[512];
    if (strchr(dir, 'X') != NULL)
        cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(content, f);
    fclose(f);
    return path;
}

static void expect_json(const char *arg, const char *want)
{
    json_object *v = NULL;
    swf_error_t *err = swf_cli_json_arg("--input", arg, 1 << 20, &v);
    cr_assert_null(err, "%s: %s", arg, err ? swf_error_message(err) : "");
    cr_assert_str_eq(swf_json_str(v), want);
    json_object_put(v);
}

static const char *expect_refused(const char *arg)
{
    json_object *v = NULL;
    swf_error_t *err = swf_cli_json_arg("--input", arg, 1 << 20, &v);
    cr_assert_not_null(err, "%s accepted", arg);
    cr_assert_null(v);
    snprintf(text, sizeof(text), "%s", swf_error_message(err));
    swf_error_free(err);
    return text;
}

Test(cli_args, input_is_json_text_at_file_or_an_existing_file)
{
    expect_json("{\"a\": [1, 2]}", "{\"a\":[1,2]}");
    expect_json("\"text\"", "\"text\"");
    expect_json("12", "12");
    char at[600];
    snprintf(at, sizeof(at), "@%s", file_with("in.json", "{\"from\": \"file\"}\n"));
    expect_json(at, "{\"from\":\"file\"}");
    expect_json(at + 1, "{\"from\":\"file\"}"); /* a bare path: not JSON, but a file */

    const char *why = expect_refused("input.jsn");
    cr_assert(strstr(why, "--input 'input.jsn': no such file, and not JSON") != NULL, "%s", why);
    why = expect_refused("{\"a\": 1,}");
    cr_assert(strstr(why, "--input:1:9: not JSON") == why, "%s", why);
    snprintf(at, sizeof(at), "@%s/nope.json", dir);
    why = expect_refused(at);
    cr_assert(strstr(why, "--input: ") == why && strstr(why, "nope.json") != NULL, "%s", why);
}

/* json-c would clamp it to 18446744073709551615: refused with its path. */
Test(cli_args, an_input_with_a_30_digit_integer_is_refused_naming_it)
{
    const char *why = expect_refused("{\"id\": 123456789012345678901234567890}");
    cr_assert_str_eq(why, "--input:1:8: $.id: the number 123456789012345678901234567890 is "
                          "outside the 64-bit integer range");
    why = expect_refused("{\"a\": 1, \"a\": 2}");
    cr_assert_str_eq(why, "--input:1:10: $: duplicate key \"a\"");
    cr_assert_eq(sh(text, sizeof(text), "./swf start x --input '[123456789012345678901234567890]'"),
                 SWF_EXIT_USAGE);
    cr_assert(strstr(text,
                     "swf start: --input:1:2: $[0]: the number "
                     "123456789012345678901234567890 is outside the 64-bit integer range") == text,
              "%s", text);
}

Test(cli_args, a_json_syntax_error_in_a_file_names_its_line_and_column)
{
    const char *path = file_with("bad.json", "{\n  \"a\": 1\n  \"b\": 2\n}\n");
    json_object *v = NULL;
    swf_error_t *err = swf_json_read_file(path, 1 << 20, &v);
    cr_assert_not_null(err);
    char want[600];
    snprintf(want, sizeof(want), "%s:3:3: not JSON: ", path);
    cr_assert(strstr(swf_error_message(err), want) == swf_error_message(err), "%s",
              swf_error_message(err));
    swf_error_free(err);
    /* The same through a command: the definition of swf validate. */
    cr_assert_eq(sh(text, sizeof(text), "./swf validate %s", path), SWF_EXIT_NO);
    cr_assert(strstr(text, want) != NULL, "%s", text);
}

/* ---- the programs ----------------------------------------------------------- */

Test(cli_args, a_misspelled_option_is_named_with_a_suggestion)
{
    cr_assert_eq(sh(text, sizeof(text), "./swf start x --inptu 1"), SWF_EXIT_USAGE);
    cr_assert(strstr(text, "swf start: unknown option '--inptu' (did you mean --input?)\n") == text,
              "%s", text);
    cr_assert(strstr(text, "usage: swf start NAME") != NULL, "%s", text);
    cr_assert_eq(sh(text, sizeof(text), "./swf start x --input"), SWF_EXIT_USAGE);
    cr_assert(strstr(text, "swf start: option '--input' needs a value") == text, "%s", text);
    cr_assert_eq(sh(text, sizeof(text), "./swf register orders"), SWF_EXIT_USAGE);
    cr_assert(strstr(text, "swf register: missing FILE") == text, "%s", text);
    cr_assert_eq(sh(text, sizeof(text), "./swf-worker --task-list x --ecoh"), SWF_EXIT_USAGE);
    cr_assert(strstr(text, "(did you mean --echo?)") != NULL, "%s", text);
    cr_assert_eq(sh(text, sizeof(text), "./swf strat x"), SWF_EXIT_USAGE);
    cr_assert(strstr(text, "unknown command \"strat\" (did you mean start?)") != NULL, "%s", text);
}

Test(cli_args, every_command_explains_every_option_with_an_example_and_exits_0)
{
    /* Every command `swf help` lists (the first word of each of its lines). */
    char list[1 << 14], commands[64][32];
    size_t n = 0;
    cr_assert_eq(sh(list, sizeof(list), "./swf help"), 0);
    for (char *line = strchr(strstr(list, "commands:\n"), '\n'); line != NULL;
         line = strchr(line + 1, '\n')) {
        char name[32];
        if (strncmp(line, "\n  ", 3) == 0 && sscanf(line + 3, "%31[a-z-]", name) == 1 && n < 64 &&
            (n == 0 || strcmp(commands[n - 1], name) != 0))
            snprintf(commands[n++], sizeof(commands[0]), "%s", name);
    }
    cr_assert_geq(n, 21, "%s", list);
    for (size_t i = 0; i < n; i++) {
        cr_assert_eq(sh(text, sizeof(text), "./swf %s --help", commands[i]), 0, "%s: %s",
                     commands[i], text);
        char head[64];
        snprintf(head, sizeof(head), "usage: swf %s", commands[i]);
        cr_assert(strstr(text, head) == text, "%s", text);
        cr_assert(strstr(text, "e.g. swf ") != NULL, "%s has no example:\n%s", commands[i], text);
        cr_assert(strstr(text, "  -h, --help") != NULL, "%s", text);
    }
    cr_assert_eq(sh(text, sizeof(text), "./swf help start"), 0);
    cr_assert(strstr(text, "--workflow-id WORKFLOW_ID") != NULL, "%s", text);
}

/* The daemons print help and exit: with no PostgreSQL or Kafka anywhere,
 * a daemon that started would wait for them until `timeout` killed it. */
Test(cli_args, the_daemons_print_help_and_never_start)
{
    static const char *const programs[] = {"swf-decider", "swf-history", "swf-worker"};
    for (size_t i = 0; i < 3; i++) {
        cr_assert_eq(sh(text, sizeof(text),
                        "SWF_DATABASE_URL=host=/nonexistent SWF_KAFKA_BROKERS=127.0.0.1:1 "
                        "timeout 10 ./%s --help",
                        programs[i]),
                     0, "%s: %s", programs[i], text);
        char head[64];
        snprintf(head, sizeof(head), "usage: %s", programs[i]);
        cr_assert(strstr(text, head) == text, "%s", text);
        cr_assert_eq(sh(text, sizeof(text), "timeout 10 ./%s --version", programs[i]), 0);
        snprintf(head, sizeof(head), "%s %s\n", programs[i], SWF_VERSION);
        cr_assert_str_eq(text, head);
    }
    cr_assert_eq(sh(text, sizeof(text), "./swf --version"), 0);
    cr_assert_str_eq(text, "swf " SWF_VERSION "\n");
}

/* ---- --workflow-id ------------------------------------------------------------ */

Test(cli_args, workflow_id_names_the_open_execution_else_the_latest)
{
    const char *db = fixture_db();
    swf_history_store_free(fixture_store(db)); /* the schema */
    cr_assert_not_null(
        fixture_sql(db, "INSERT INTO executions VALUES"
                        " ('w-old', 'w', 'm', '1', 'succeeded', '2026-01-01', '2026-01-01', 2),"
                        " ('w-open', 'w', 'm', '1', 'open', '2026-01-02', NULL, 1),"
                        " ('w-new', 'w', 'm', '1', 'failed', '2026-01-03', '2026-01-03', 2),"
                        " ('v-old', 'v', 'm', '1', 'succeeded', '2026-01-01', '2026-01-01', 2),"
                        " ('v-new', 'v', 'm', '1', 'canceled', '2026-01-02', '2026-01-02', 2)"));
    setenv("SWF_DATABASE_URL", db, 1);
    cr_assert_eq(sh(text, sizeof(text), "./swf describe --workflow-id w --json"), 0, "%s", text);
    cr_assert(strstr(text, "\"executionId\":\"w-open\"") != NULL, "%s", text);
    cr_assert_eq(sh(text, sizeof(text), "./swf describe --json --workflow-id v"), 0, "%s", text);
    cr_assert(strstr(text, "\"executionId\":\"v-new\"") != NULL, "%s", text);
    cr_assert_eq(sh(text, sizeof(text), "./swf describe --workflow-id nobody"), SWF_EXIT_NO);
    cr_assert(strstr(text, "no execution of workflow id nobody") != NULL, "%s", text);
    /* It stands for ID: the operands after ID move up, and ID with it is one too many. */
    cr_assert_eq(sh(text, sizeof(text), "./swf describe w-new --workflow-id w"), SWF_EXIT_USAGE);
    cr_assert(strstr(text, "unexpected argument 'w-new' (--workflow-id stands for ID)") != NULL,
              "%s", text);
    /* export's FILE is the first operand then (v-new has no events: only its row). */
    cr_assert_eq(sh(text, sizeof(text), "./swf export --workflow-id v out.jsonl"), SWF_EXIT_NO);
    cr_assert(strstr(text, "swf export: no execution v-new") == text, "%s", text);
    unsetenv("SWF_DATABASE_URL");
}
