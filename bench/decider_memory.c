/*
 * bench_decider_memory - what one decider's cache of replayed executions
 * costs in memory, and that the cache setting bounds it.
 *
 * usage: bench_decider_memory [EXECUTIONS] [CACHE] [STEPS] [PAD]
 * (defaults 10000 10000 5 0)
 *
 * One decider (SWF_DECIDER_CACHE = CACHE) on the in-process harness
 * (throwaway PostgreSQL, mock Kafka, the harness's echo worker) runs
 * EXECUTIONS executions of STEPS activity steps each, after which every
 * execution waits in a one-hour Wait state: open, and cached as long as the
 * cache has room. It prints the process's resident set (VmRSS of
 * /proc/self/status) once everything has started and again when every
 * execution waits, the executions the cache holds, and the growth per
 * cached execution. Run it again with CACHE halved: the cache holds CACHE
 * entries and the growth follows it. PAD adds that many Pass states to
 * the definition (between Inc and Check), to give it the size of a real
 * one: a parsed definition costs about ten times its text. The figure includes librdkafka's and
 * the harness's own buffers, so the growth per entry is an upper bound;
 * the heap in use (mallinfo2, every arena) leaves out what the allocator
 * keeps for reuse after evictions, and follows the cache more closely.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "cli/dev.h"
#include "kafka/kafka.h"
#include "history/pg.h"
#include "protocol/json.h"
#include "protocol/message.h"
#include "protocol/time.h"

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "VmRSS:", 6) == 0)
            kib = atol(line + 6);
    }
    if (f != NULL)
        fclose(f);
    return kib;
}

/* Bytes malloc has handed out and not taken back, over every arena: what
 * the process holds, without what the allocator keeps for reuse. */
static double heap_mib(void)
{
    struct mallinfo2 mi = mallinfo2();
    return (double)(mi.uordblks + mi.hblkhd) / (1024.0 * 1024.0);
}

static void die(swf_error_t *err)
{
    bench_die("bench_decider_memory", err);
}

int main(int argc, char **argv)
{
    int execs = argc > 1 ? atoi(argv[1]) : 10000;
    int cache = argc > 2 ? atoi(argv[2]) : 10000;
    int steps = argc > 3 ? atoi(argv[3]) : 5;
    int pad = argc > 4 ? atoi(argv[4]) : 0;
    if (execs < 1 || cache < 1 || steps < 1 || pad < 0 || pad > 1000) {
        fprintf(stderr, "usage: bench_decider_memory [EXECUTIONS] [CACHE] [STEPS] [PAD]\n");
        return 2;
    }
    char v[32];
    snprintf(v, sizeof(v), "%d", cache);
    setenv("SWF_DECIDER_CACHE", v, 1);
    setenv("SWF_KAFKA_FETCH_WAIT_MS", "1", 0);
    size_t def_cap = 1024 + 160 * (size_t)pad, def_n = 0;
    char *def_text = malloc(def_cap);
    if (def_text == NULL)
        abort();
    def_n += (size_t)snprintf(def_text + def_n, def_cap - def_n,
                              "{\"StartAt\":\"Work\",\"States\":{"
                              "\"Work\":{\"Type\":\"Task\","
                              "\"Resource\":\"arn:aws:states:::activity:mem\",\"Next\":\"Inc\"},"
                              "\"Inc\":{\"Type\":\"Pass\",\"Parameters\":{\"i.$\":"
                              "\"States.MathAdd($.i, 1)\"},\"Next\":\"%s\"},",
                              pad > 0 ? "Pad1" : "Check");
    for (int k = 1; k <= pad; k++) {
        char next[16];
        snprintf(next, sizeof(next), k < pad ? "Pad%d" : "Check", k + 1);
        def_n += (size_t)snprintf(def_text + def_n, def_cap - def_n,
                                  "\"Pad%d\":{\"Type\":\"Pass\",\"Parameters\":{\"i.$\":\"$.i\","
                                  "\"note\":\"padding %d\",\"tags\":[\"a\",\"b\"]},"
                                  "\"OutputPath\":\"$\",\"Next\":\"%s\"},",
                                  k, k, next);
    }
    snprintf(def_text + def_n, def_cap - def_n,
             "\"Check\":{\"Type\":\"Choice\",\"Choices\":[{\"Variable\":\"$.i\","
             "  \"NumericLessThan\":%d,\"Next\":\"Work\"}],\"Default\":\"Hold\"},"
             "\"Hold\":{\"Type\":\"Wait\",\"Seconds\":3600,\"Next\":\"Done\"},"
             "\"Done\":{\"Type\":\"Succeed\"}}}",
             steps);
    swf_dev_options_t opt = {.deciders = 1, .history_service = false, .time_scale = 1};
    bench_rig_t rig;
    bench_rig_up("bench_decider_memory", &opt, "Memory", def_text, &rig);
    swf_dev_t *dev = rig.dev;
    swf_history_store_t *store = rig.store;
    int version = rig.version;
    json_object *input = json_tokener_parse("{\"i\":0}");
    const char *lists[1] = {"mem"};
    swf_dev_worker_t *worker;
    die(swf_dev_worker_start(swf_dev_brokers(dev), lists, 1, NULL, NULL, &worker));
    swf_kafka_names_t names;
    swf_kafka_names_env(&names);
    rd_kafka_t *producer;
    die(swf_kafka_producer_new(&(swf_kafka_producer_config_t){.brokers = swf_dev_brokers(dev)},
                               &producer));
    swf_decider_t *d = swf_dev_decider(dev, 0);
    long rss0 = rss_kib();
    double heap0 = heap_mib();

    time_t t0 = time(NULL);
    enum { CHUNK = 500 };
    for (int i = 0; i < execs; i += CHUNK) {
        swf_kafka_out_t outs[CHUNK];
        json_object *docs[CHUNK];
        char ids[CHUNK][32];
        int n = execs - i < CHUNK ? execs - i : CHUNK;
        for (int k = 0; k < n; k++) {
            snprintf(ids[k], sizeof(ids[k]), "mem-%d", i + k);
            swf_history_start_t st = {.execution_id = ids[k],
                                      .state_machine = "Memory",
                                      .version = version,
                                      .input = input,
                                      .time_ms = swf_time_now_ms()};
            die(swf_history_pg_execution_start(store, &st, NULL));
            docs[k] = swf_msg_decide_new(NULL, ids[k]);
            const char *s = swf_json_str(docs[k]);
            outs[k] = (swf_kafka_out_t){names.inbox, ids[k], s, strlen(s), 0};
        }
        die(swf_kafka_send(producer, outs, (size_t)n));
        for (int k = 0; k < n; k++)
            json_object_put(docs[k]);
    }
    /* Every execution has answered its steps and started its Wait: the
     * last decision of each (STEPS answers, then the timer) is in. */
    unsigned long want = (unsigned long)execs * (unsigned long)steps;
    swf_decider_stats_t st;
    for (;;) {
        swf_decider_stats(d, &st);
        if (swf_dev_worker_answered(worker) >= want && st.messages >= want + (uint64_t)execs)
            break;
        if (time(NULL) - t0 > 1200) {
            fprintf(stderr, "bench_decider_memory: not done after 20 minutes\n");
            return 1;
        }
        usleep(100000);
    }
    sleep(1); /* the last batch's cache puts */
    swf_decider_stats(d, &st);
    long rss1 = rss_kib();
    /* What the allocator keeps of memory freed by evictions is not the
     * cache's: give it back and measure again. */
    malloc_trim(0);
    long rss2 = rss_kib();
    double heap1 = heap_mib();
    double per = st.cached ? (heap1 - heap0) * 1024.0 / (double)st.cached : 0;
    printf("definition %zu bytes; cache setting %d, executions %d x %d steps: %llu cached; RSS "
           "%.1f MiB before, "
           "%.1f MiB after, %.1f MiB after malloc_trim; heap in use %.1f -> %.1f MiB "
           "(%.1f KiB per cached execution); %lld s\n",
           strlen(def_text), cache, execs, steps, (unsigned long long)st.cached, rss0 / 1024.0,
           rss1 / 1024.0, rss2 / 1024.0, heap0, heap1, per, (long long)(time(NULL) - t0));
    rd_kafka_destroy(producer);
    swf_dev_worker_stop(worker);
    json_object_put(input);
    free(def_text);
    bench_rig_down(&rig);
    return st.cached <= (uint64_t)cache ? 0 : 1;
}
