/* calibrate: the default run finishes in under 60 s, writes its result, and
 * its sentence agrees with its own table (the highest level within 1 ms). */
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <string.h>
#include <time.h>

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
    CHECK(s < 60);
    json_error_t je;
    json_t *doc = json_loads(out, 0, &je);
    CHECK_MSG(doc != NULL, "not JSON: %s", je.text);
    json_t *levels = json_object_get(doc, "levels");
    CHECK_INT(json_array_size(levels), 5);
    int max_streams = 0;
    size_t i;
    json_t *lv;
    json_array_foreach(levels, i, lv) {
        CHECK_INT(json_integer_value(json_object_get(lv, "failed")), 0);
        CHECK(json_integer_value(json_object_get(lv, "chunks")) > 0);
        double lag = json_number_value(json_object_get(lv, "lag_p99_ms"));
        double ttft = json_number_value(json_object_get(lv, "ttft_err_p99_ms"));
        double itl = json_number_value(json_object_get(lv, "itl_err_p99_ms"));
        double cpu = json_number_value(json_object_get(lv, "client_cpu_pct"));
        int within = json_is_true(json_object_get(lv, "within_1ms"));
        CHECK_INT(within, lag < 1 && ttft < 1 && itl < 1 && cpu < 95);
        int streams = (int)json_integer_value(json_object_get(lv, "streams"));
        if (within && streams > max_streams)
            max_streams = streams;
    }
    const char *sentence = json_string_value(json_object_get(doc, "sentence"));
    CHECK(sentence != NULL);
    const char *placement = json_string_value(json_object_get(doc, "placement"));
    CHECK(placement && strstr(placement, "simulator (1 thread) on CPU"));
    if (max_streams > 0) {
        char want[64];
        snprintf(want, sizeof want, "up to %d concurrent streams", max_streams);
        CHECK_MSG(strstr(sentence, want) != NULL, "sentence '%s' vs table max %d", sentence,
                  max_streams);
    } else {
        CHECK(strstr(sentence, "did not measure within 1 ms") != NULL);
    }
    char p[1200];
    snprintf(p, sizeof p, "%s/cal.json", dir);
    char *saved = read_file(p, NULL);
    CHECK(saved && strstr(saved, sentence));
}
