/* calibrate: the default run finishes in under 60 s, writes its result, and
 * its sentence agrees with its own table (for spread arrivals and for
 * streams started together, the heaviest level below the lightest failure);
 * a small burst level joins every one of its requests with the simulator's
 * trace, --repeat included. */
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One level of a saved result, as the sentence's rule reads it. */
typedef struct seen_level {
    int streams, within;
    double offered;
    size_t index;
} seen_level;

static int by_load(const void *a, const void *b) {
    const seen_level *x = a, *y = b;
    if (x->streams != y->streams)
        return x->streams < y->streams ? -1 : 1;
    if (x->offered != y->offered)
        return x->offered < y->offered ? -1 : 1;
    return x->index < y->index ? -1 : 1;
}

/* The sentence names what the table says for one kind of arrivals: the
 * most streams within 1 ms below the lightest failure, and that failure. */
static void check_kind(const char *sentence, json_t *levels, const char *arrivals) {
    seen_level seen[16];
    int n = 0;
    size_t i;
    json_t *lv;
    json_array_foreach(levels, i, lv) {
        if (strcmp(json_string_value(json_object_get(lv, "arrivals")), arrivals) || n == 16)
            continue;
        seen[n++] = (seen_level){(int)json_integer_value(json_object_get(lv, "streams")),
                                 json_is_true(json_object_get(lv, "within_1ms")),
                                 json_number_value(json_object_get(lv, "offered_chunks_per_s")), i};
    }
    qsort(seen, (size_t)n, sizeof *seen, by_load);
    int claim = 0, fail = 0;
    for (int k = 0; k < n && !fail; k++) {
        if (seen[k].within)
            claim = seen[k].streams;
        else
            fail = seen[k].streams;
    }
    int burst = !strcmp(arrivals, "burst");
    const char *noun = burst ? "streams started together" : "concurrent streams";
    char want[128];
    if (claim) {
        snprintf(want, sizeof want, "up to %d %s", claim, noun);
        CHECK_MSG(strstr(sentence, want) != NULL, "'%s' lacks '%s'", sentence, want);
    }
    if (fail) {
        snprintf(want, sizeof want, "%sat %d %s", claim ? "; " : "even ", fail, noun);
        CHECK_MSG(strstr(sentence, want) != NULL, "'%s' lacks '%s'", sentence, want);
    }
    CHECK(claim || fail);
}

TEST_SLOW_ALONE(calibrate_default_under_60s_and_sentence_matches_table) {
    char *dir = temp_dir();
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s calibrate --json --save %s/cal.json 2>/dev/null", servelab_bin(),
             dir);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int code;
    char *out = run_capture(cmd, &code);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double s = (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
    printf("    calibrate took %.1f s\n", s);
    CHECK_MSG(code == 0, "%s", out);
    /* the bound is the release build's; the sanitized build's code runs a
     * few times slower */
    CHECK(s < (servelab_is_sanitized() ? 150 : 60));
    json_error_t je;
    json_t *doc = json_loads(out, 0, &je);
    CHECK_MSG(doc != NULL, "not JSON: %s", je.text);
    json_t *levels = json_object_get(doc, "levels");
    CHECK_INT(json_array_size(levels), 7);
    int bursts = 0;
    size_t i;
    json_t *lv;
    json_array_foreach(levels, i, lv) {
        const char *arrivals = json_string_value(json_object_get(lv, "arrivals"));
        CHECK(arrivals && (!strcmp(arrivals, "spread") || !strcmp(arrivals, "burst")));
        int burst = !strcmp(arrivals, "burst");
        bursts += burst;
        int streams = (int)json_integer_value(json_object_get(lv, "streams"));
        int requests = burst ? 2 * streams : streams;
        CHECK_INT(json_integer_value(json_object_get(lv, "requests")), requests);
        CHECK_INT(json_integer_value(json_object_get(lv, "joined")), requests);
        CHECK_INT(json_integer_value(json_object_get(lv, "failed")), 0);
        CHECK(json_integer_value(json_object_get(lv, "chunks")) > 0);
        double lag = json_number_value(json_object_get(lv, "lag_p99_ms"));
        double ttft = json_number_value(json_object_get(lv, "ttft_err_p99_ms"));
        double itl = json_number_value(json_object_get(lv, "itl_err_p99_ms"));
        double cpu = json_number_value(json_object_get(lv, "client_cpu_pct"));
        int within = json_is_true(json_object_get(lv, "within_1ms"));
        CHECK_INT(within, (burst || lag < 1) && ttft < 1 && itl < 1 && cpu < 95);
    }
    CHECK_INT(bursts, 2);
    const char *sentence = json_string_value(json_object_get(doc, "sentence"));
    CHECK(sentence != NULL);
    check_kind(sentence, levels, "spread");
    check_kind(sentence, levels, "burst");
    const char *placement = json_string_value(json_object_get(doc, "placement"));
    CHECK(placement && strstr(placement, "simulator (1 thread) on CPU"));
    char p[1200];
    snprintf(p, sizeof p, "%s/cal.json", dir);
    char *saved = read_file(p, NULL);
    CHECK(saved && strstr(saved, sentence));
}

/* 20 streams started together, three rounds (--burst-rounds 3), run 60
 * requests; each is joined with the
 * simulator's trace by its request id, not by its stream. Two repetitions:
 * each runs in a directory of its own (a run refuses an --out holding a
 * run), and the sentence says its figures are medians. */
TEST(calibrate_burst_level_joins_every_request) {
    char *dir = temp_dir();
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "%s calibrate --json --levels burst:20@10 --burst-rounds 3 --seconds 0.3 --repeat 2 "
             "--keep %s/keep "
             "--save %s/cal.json 2>&1",
             servelab_bin(), dir, dir);
    int code;
    char *out = run_capture(cmd, &code);
    CHECK_MSG(code == 0, "%s", out);
    json_error_t je;
    json_t *doc = json_loads(out, 0, &je);
    CHECK_MSG(doc != NULL, "not JSON: %s\n%s", je.text, out);
    json_t *levels = json_object_get(doc, "levels");
    CHECK_INT(json_array_size(levels), 1);
    json_t *lv = json_array_get(levels, 0);
    CHECK_STR(json_string_value(json_object_get(lv, "arrivals")), "burst");
    CHECK_INT(json_integer_value(json_object_get(lv, "streams")), 20);
    CHECK_INT(json_integer_value(json_object_get(lv, "rounds")), 3);
    CHECK_INT(json_integer_value(json_object_get(lv, "requests")), 60);
    CHECK_INT(json_integer_value(json_object_get(lv, "joined")), 60);
    CHECK_INT(json_integer_value(json_object_get(lv, "failed")), 0);
    /* 30 tokens a request (0.3 s at a 10 ms step), a row each */
    CHECK_INT(json_integer_value(json_object_get(lv, "chunks")), 60 * 30);
    CHECK(json_is_number(json_object_get(lv, "ttft_err_p99_ms")));
    CHECK(json_is_number(json_object_get(lv, "itl_err_p99_ms")));
    CHECK_INT(json_integer_value(json_object_get(doc, "repeat")), 2);
    const char *sentence = json_string_value(json_object_get(doc, "sentence"));
    CHECK(sentence && strstr(sentence, "20 streams started together"));
    CHECK_MSG(strstr(sentence, "median of 2 runs") != NULL, "%s", sentence);
    CHECK(!strstr(sentence, "concurrent streams"));
    char p[1200];
    snprintf(p, sizeof p, "%s/keep/level-0-2/run/summary.json", dir);
    char *second = read_file(p, NULL);
    CHECK_MSG(second && strstr(second, "\"requests\": 60"), "%s", p);
}
