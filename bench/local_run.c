/*
 * local_run.c - how long `swf run --local` takes, with the full event history
 * kept: 1,000 and 10,000 sequential Tasks (a chain of Task states), and a
 * Map over 10,000 and 100,000 items (one Task per item). Each figure is the
 * best of a few runs, so that a noisy neighbour shows less.
 *
 *   build/bench_local_run [--repeat N] [--only seq|map]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decider/local.h"
#include "history/store.h"
#include "protocol/json.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static json_object *task_state(const char *next)
{
    json_object *t = json_object_new_object();
    json_object_object_add(t, "Type", json_object_new_string("Task"));
    json_object_object_add(t, "Resource",
                           json_object_new_string("arn:aws:states:us-east-1:1:activity:work"));
    if (next)
        json_object_object_add(t, "Next", json_object_new_string(next));
    else
        json_object_object_add(t, "End", json_object_new_boolean(1));
    return t;
}

static json_object *chain_definition(int n)
{
    json_object *def = json_object_new_object(), *states = json_object_new_object();
    json_object_object_add(def, "StartAt", json_object_new_string("T0"));
    for (int i = 0; i < n; i++) {
        char name[32], next[32];
        snprintf(name, sizeof(name), "T%d", i);
        snprintf(next, sizeof(next), "T%d", i + 1);
        json_object_object_add(states, name, task_state(i + 1 < n ? next : NULL));
    }
    json_object_object_add(def, "States", states);
    return def;
}

static json_object *map_definition(void)
{
    json_object *def = json_object_new_object(), *states = json_object_new_object();
    json_object *map = json_object_new_object(), *proc = json_object_new_object();
    json_object *pstates = json_object_new_object();
    json_object_object_add(pstates, "T", task_state(NULL));
    json_object_object_add(proc, "StartAt", json_object_new_string("T"));
    json_object_object_add(proc, "States", pstates);
    json_object_object_add(map, "Type", json_object_new_string("Map"));
    json_object_object_add(map, "ItemsPath", json_object_new_string("$.items"));
    json_object_object_add(map, "ItemProcessor", proc);
    json_object_object_add(map, "End", json_object_new_boolean(1));
    json_object_object_add(states, "M", map);
    json_object_object_add(def, "StartAt", json_object_new_string("M"));
    json_object_object_add(def, "States", states);
    return def;
}

static json_object *map_input(int n)
{
    json_object *in = json_object_new_object(), *items = json_object_new_array_ext(n);
    for (int i = 0; i < n; i++) {
        json_object *it = json_object_new_object();
        json_object_object_add(it, "id", json_object_new_int(i));
        json_object_array_add(items, it);
    }
    json_object_object_add(in, "items", items);
    return in;
}

static int bench(const char *label, json_object *def, json_object *input, int repeat, int units)
{
    double best = 1e30;
    long long events = 0;
    for (int r = 0; r < repeat; r++) {
        swf_history_store_t *store = swf_history_mem_new();
        swf_local_options_t opt = {
            .definition = def, .input = input, .start_ms = 1700000000000, .trusted = true};
        swf_local_result_t res;
        double t0 = now_s();
        swf_error_t *err = swf_local_run(&opt, store, &res);
        double dt = now_s() - t0;
        if (err != NULL || res.status != SWF_ASL_SUCCEEDED) {
            fprintf(stderr, "%s: run failed: %s %s\n", label, err ? swf_error_message(err) : "",
                    res.error ? res.error : "");
            swf_error_free(err);
            swf_local_result_free(&res);
            swf_history_store_free(store);
            return 1;
        }
        events = res.events;
        swf_local_result_free(&res);
        swf_history_store_free(store);
        if (dt < best)
            best = dt;
    }
    printf("%-28s %10.1f ms %10lld events %10.2f us/unit %12.0f events/s\n", label, best * 1e3,
           events, best * 1e6 / units, (double)events / best);
    return 0;
}

int main(int argc, char **argv)
{
    int repeat = 3;
    const char *only = "";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--repeat") == 0)
            repeat = atoi(argv[i + 1]) > 0 ? atoi(argv[i + 1]) : 1;
        else if (strcmp(argv[i], "--only") == 0)
            only = argv[i + 1];
    }
    int rc = 0;
    json_object *empty = json_object_new_object();
    int chains[] = {1000, 10000};
    for (size_t i = 0; i < 2 && strcmp(only, "map") != 0; i++) {
        json_object *def = chain_definition(chains[i]);
        char label[64];
        snprintf(label, sizeof(label), "%d sequential Tasks", chains[i]);
        rc |= bench(label, def, empty, repeat, chains[i]);
        json_object_put(def);
    }
    json_object *def = map_definition();
    int maps[] = {10000, 100000};
    for (size_t i = 0; i < 2 && strcmp(only, "seq") != 0; i++) {
        json_object *in = map_input(maps[i]);
        char label[64];
        snprintf(label, sizeof(label), "Map over %d items", maps[i]);
        rc |= bench(label, def, in, repeat, maps[i]);
        json_object_put(in);
    }
    json_object_put(def);
    json_object_put(empty);
    return rc;
}
