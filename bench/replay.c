/*
 * replay.c - how long replaying a history takes, and that it grows linearly
 * with the history: a Map over N items (one Task per item, ~3 events per
 * item) is run once with the local runner to record its history, then the
 * history is replayed (every decision re-derived and checked, as `swf
 * replay` does) for ~10,000, ~100,000 and ~200,000 events. Prints events/s
 * and the ratios of lengths and times. Measured (2026-11): the time per
 * event is constant from 100,000 events on (x2.00 events, x1.94 time); a
 * 10,000-event history runs faster per event (x10 events, x15 time) because
 * its working set still fits in the CPU caches.
 *
 *   build/bench_replay [--repeat N] [--items A,B,C]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decider/local.h"
#include "decider/replay.h"
#include "history/store.h"
#include "protocol/json.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static json_object *map_definition(void)
{
    const char *text =
        "{\"StartAt\":\"M\",\"States\":{\"M\":{\"Type\":\"Map\",\"ItemsPath\":\"$.items\","
        "\"ItemProcessor\":{\"StartAt\":\"T\",\"States\":{\"T\":{\"Type\":\"Task\","
        "\"Resource\":\"arn:aws:states:us-east-1:1:activity:work\",\"End\":true}}},"
        "\"End\":true}}}";
    return json_tokener_parse(text);
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

/* Records the history of a Map over n items. */
static void record(int n, swf_event_list_t *out)
{
    json_object *def = map_definition(), *input = map_input(n);
    swf_local_options_t opt = {.definition = def, .input = input, .start_ms = 1763719200000LL};
    swf_history_store_t *store = swf_history_mem_new();
    swf_local_result_t res = {0};
    swf_error_t *err = swf_local_run(&opt, store, &res);
    if (err == NULL)
        err = swf_history_load(store, "local", 0, 0, out);
    if (err != NULL) {
        fprintf(stderr, "bench_replay: %s\n", swf_error_message(err));
        exit(1);
    }
    swf_local_result_free(&res);
    swf_history_store_free(store);
    json_object_put(def);
    json_object_put(input);
}

/* The best time of `repeat` replays of the history. */
static double replay_s(const swf_event_list_t *events, int repeat)
{
    double best = 1e30;
    for (int r = 0; r < repeat; r++) {
        swf_decider_replay_options_t opt = {0};
        swf_decider_replay_result_t res;
        double t0 = now_s();
        swf_error_t *err = swf_decider_replay_run(events, &opt, &res);
        double t = now_s() - t0;
        if (err != NULL || res.error != NULL || res.events_applied != events->count) {
            fprintf(stderr, "bench_replay: the history does not replay: %s\n",
                    swf_error_message(err ? err : res.error));
            exit(1);
        }
        swf_decider_replay_result_free(&res);
        if (t < best)
            best = t;
    }
    return best;
}

int main(int argc, char **argv)
{
    int repeat = 3;
    int items[3] = {3300, 33000, 66000};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--repeat") == 0 && i + 1 < argc)
            repeat = atoi(argv[++i]);
        else if (strcmp(argv[i], "--items") == 0 && i + 1 < argc)
            sscanf(argv[++i], "%d,%d,%d", &items[0], &items[1], &items[2]);
    }
    double secs[3];
    size_t counts[3];
    for (int k = 0; k < 3; k++) {
        swf_event_list_t events = {0};
        record(items[k], &events);
        counts[k] = events.count;
        secs[k] = replay_s(&events, repeat);
        printf("replay of a Map over %6d items: %7zu events in %8.3f s = %9.0f events/s\n",
               items[k], events.count, secs[k], (double)events.count / secs[k]);
        swf_event_list_free(&events);
    }
    for (int k = 1; k < 3; k++)
        printf("%zu -> %zu events: length x%.2f, time x%.2f\n", counts[k - 1], counts[k],
               (double)counts[k] / (double)counts[k - 1], secs[k] / secs[k - 1]);
    return 0;
}
