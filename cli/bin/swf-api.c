/*
 * swf-api - the AWS Step Functions API over swf (api/api.h): an HTTP
 * server the AWS CLI and SDKs talk to. It keeps no state: run as many as
 * needed behind a load balancer. SIGINT/SIGTERM answer the waiting
 * GetActivityTask calls and stop.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "api/api.h"
#include "cli/args.h"
#include "cli/startup.h"
#include "history/pg.h"
#include "kafka/kafka.h"

static const swf_cli_cmd_t api_cmd = {
    "swf-api", NULL,
    "The AWS Step Functions API (AWS JSON 1.0 over HTTP/1.1, Signature Version 4) over swf's "
    "PostgreSQL and Kafka, for the AWS CLI, the AWS SDKs and activity workers written with "
    "them. Stateless: run any number. Put TLS in front of it (a proxy), as api/README.md says.",
    (const swf_cli_opt_t[]){
        {"--port", "PORT", 0, "the port to listen on (default 8083; 0: any free port)",
         "swf-api --port 8083"},
        {"--host", "ADDRESS", 0, "the IPv4 address to listen on (default 127.0.0.1)",
         "swf-api --host 0.0.0.0"},
        {"--credentials", "FILE", 0,
         "the credentials file: ACCESS_KEY_ID SECRET RESOURCE... per line (default "
         "$SWF_API_CREDENTIALS)",
         "swf-api --credentials /etc/swf/api-keys"},
        {"--threads", "N", 0, "request threads, 1 to 256 (default 4)", "swf-api --threads 8"},
        {"--version", NULL, 0, "print the version and exit", "swf-api --version"},
        SWF_CLI_OPTS_END},
    "Configured by the environment as well (README.md, \"Using the AWS CLI and SDKs\"):\n"
    "  SWF_DATABASE_URL       libpq connection string or URI (else libpq's PG* variables)\n"
    "  SWF_KAFKA_BROKERS      bootstrap servers, host:port,... (default localhost:9092)\n"
    "  SWF_TOKEN_SECRET       the HMAC secret of task tokens and control messages\n"
    "  SWF_API_CREDENTIALS    the credentials file, when --credentials is not given\n"
    "  SWF_API_REGION, SWF_API_ACCOUNT  the region and account of the ARNs\n"
    "                         (default us-east-1, 123456789012)\n"};

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
    (void)sig;
    stopping = 1;
}

int main(int argc, char **argv)
{
    swf_cli_args_t a;
    if (!swf_cli_args_parse(&api_cmd, argc, argv, &a))
        return a.status;
    int64_t port = 8083, threads = 4;
    if (swf_cli_args_has(&a, "--port") && !swf_cli_args_int(&a, "--port", 0, 65535, &port))
        return a.status;
    if (swf_cli_args_has(&a, "--threads") && !swf_cli_args_int(&a, "--threads", 1, 256, &threads))
        return a.status;
    const char *creds = swf_cli_args_get(&a, "--credentials");
    if (creds == NULL)
        creds = getenv("SWF_API_CREDENTIALS");
    swf_kafka_names_t names;
    swf_kafka_names_env(&names);
    swf_cli_on_stop_signals(on_signal);
    swf_api_config_t cfg = {.host = swf_cli_args_get(&a, "--host"),
                            .port = (int)port,
                            .conninfo = swf_history_pg_conninfo_env(),
                            .brokers = names.brokers,
                            .credentials = creds,
                            .region = getenv("SWF_API_REGION"),
                            .account = getenv("SWF_API_ACCOUNT"),
                            .threads = (int)threads,
                            .log = stderr};
    swf_api_t *api = NULL;
    swf_error_t *err = swf_api_start(&cfg, &api);
    if (err != NULL) {
        fprintf(stderr, "swf-api: %s\n", swf_error_message(err));
        swf_error_free(err);
        return 3;
    }
    while (!stopping)
        pause();
    swf_api_stop(api);
    return 0;
}
