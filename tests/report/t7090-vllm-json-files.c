/* run --save-vllm-json and report --vllm-json: the file a script written
 * for vLLM's `bench serve --save-result --save-detailed` reads. The checks
 * are those a reader of vLLM's file relies on: every key there, the
 * per-request arrays in seconds and one entry per request, the *_ms
 * statistics in milliseconds and equal to what vLLM computes from those
 * arrays (numpy's mean, median, std and linear percentiles), and equal to
 * the same figures recomputed here from servelab's own rows under vLLM's
 * definitions. The report then reads the file back as a run. */
#include "csv_util.h"
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int dbl_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* numpy.percentile's default (linear) of x[0, n), sorted here. */
static double np_percentile(double *x, size_t n, double p) {
    qsort(x, n, sizeof *x, dbl_cmp);
    double h = (double)(n - 1) * p / 100;
    size_t lo = (size_t)floor(h);
    return lo + 1 < n ? x[lo] + (h - (double)lo) * (x[lo + 1] - x[lo]) : x[lo];
}

static double np_mean(const double *x, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    return s / (double)n;
}

static double np_std(const double *x, size_t n) {
    double m = np_mean(x, n), s = 0;
    for (size_t i = 0; i < n; i++)
        s += (x[i] - m) * (x[i] - m);
    return sqrt(s / (double)n);
}

static double num(json_t *o, const char *key) {
    json_t *v = json_object_get(o, key);
    CHECK_MSG(json_is_number(v), "%s is not a number", key);
    return json_number_value(v);
}

/* The keys vLLM's result file has, each with its JSON type. */
static void check_keys(json_t *d, size_t n) {
    const char *strings[] = {"date",  "endpoint_type", "backend",
                             "label", "model_id",      "tokenizer_id"};
    for (size_t i = 0; i < sizeof strings / sizeof *strings; i++)
        CHECK_MSG(json_is_string(json_object_get(d, strings[i])), "%s", strings[i]);
    const char *numbers[] = {"num_prompts",
                             "request_rate",
                             "burstiness",
                             "duration",
                             "completed",
                             "failed",
                             "total_input_tokens",
                             "total_output_tokens",
                             "request_throughput",
                             "request_goodput",
                             "output_throughput",
                             "total_token_throughput",
                             "max_output_tokens_per_s",
                             "max_concurrent_requests"};
    for (size_t i = 0; i < sizeof numbers / sizeof *numbers; i++)
        CHECK_MSG(json_is_number(json_object_get(d, numbers[i])), "%s", numbers[i]);
    CHECK(json_is_null(json_object_get(d, "max_concurrency")));
    const char *metrics[] = {"ttft", "tpot", "itl", "e2el"};
    const char *stats[] = {"mean", "median", "std", "p50", "p99.9"};
    for (int m = 0; m < 4; m++)
        for (int s = 0; s < 5; s++) {
            char key[64];
            snprintf(key, sizeof key, "%s_%s_ms", stats[s], metrics[m]);
            CHECK_MSG(json_is_number(json_object_get(d, key)), "%s", key);
        }
    CHECK(!json_object_get(d, "p99_ttft_ms")); /* only the percentiles asked for */
    const char *arrays[] = {"input_lens", "output_lens", "ttfts",       "itls",
                            "latencies",  "start_times", "queue_times", "errors"};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++)
        CHECK_MSG(json_array_size(json_object_get(d, arrays[i])) == n, "%s has %zu entries",
                  arrays[i], json_array_size(json_object_get(d, arrays[i])));
    CHECK_INT((long)num(d, "completed") + (long)num(d, "failed"), (long)n);
    CHECK_STR(json_string_value(json_object_get(d, "backend")), "openai-chat");
}

/* vLLM's statistics of one metric, from the file's own arrays, equal to its
 * *_ms keys. */
static void check_stats(json_t *d, const char *name, double *x_s, size_t n) {
    char key[64];
    for (size_t i = 0; i < n; i++)
        x_s[i] *= 1000;
    snprintf(key, sizeof key, "mean_%s_ms", name);
    CHECK_NEAR(num(d, key), np_mean(x_s, n), 1e-6);
    snprintf(key, sizeof key, "std_%s_ms", name);
    CHECK_NEAR(num(d, key), np_std(x_s, n), 1e-6);
    snprintf(key, sizeof key, "median_%s_ms", name);
    CHECK_NEAR(num(d, key), np_percentile(x_s, n, 50), 1e-6);
    snprintf(key, sizeof key, "p99.9_%s_ms", name);
    CHECK_NEAR(num(d, key), np_percentile(x_s, n, 99.9), 1e-6);
}

/* What vLLM's calculate_metrics does with the arrays: ttft, tpot, itl and
 * latency over the requests with no error. */
static void check_from_arrays(json_t *d, size_t n) {
    json_t *err = json_object_get(d, "errors"), *ttfts = json_object_get(d, "ttfts");
    json_t *lat = json_object_get(d, "latencies"), *out = json_object_get(d, "output_lens");
    json_t *itls = json_object_get(d, "itls");
    double *t = calloc(n, sizeof *t), *tp = calloc(n, sizeof *tp), *e = calloc(n, sizeof *e);
    double *it = calloc(n * 600, sizeof *it), out_sum = 0;
    size_t k = 0, ktp = 0, kit = 0;
    for (size_t i = 0; i < n; i++) {
        out_sum += json_number_value(json_array_get(out, i));
        if (json_string_value(json_array_get(err, i))[0])
            continue;
        double tt = json_number_value(json_array_get(ttfts, i));
        double l = json_number_value(json_array_get(lat, i));
        double o = json_number_value(json_array_get(out, i));
        t[k] = tt;
        e[k++] = l;
        if (o > 1)
            tp[ktp++] = (l - tt) / (o - 1);
        json_t *g = json_array_get(itls, i);
        for (size_t j = 0; j < json_array_size(g) && kit < n * 600; j++)
            it[kit++] = json_number_value(json_array_get(g, j));
    }
    CHECK_INT((long)k, (long)num(d, "completed"));
    CHECK_NEAR(num(d, "total_output_tokens"), out_sum, 0.5);
    CHECK_NEAR(num(d, "request_throughput"), (double)k / num(d, "duration"), 1e-9);
    check_stats(d, "ttft", t, k);
    check_stats(d, "tpot", tp, ktp);
    check_stats(d, "itl", it, kit);
    check_stats(d, "e2el", e, k);
    free(t);
    free(tp);
    free(e);
    free(it);
}

/* The same TTFT figures from servelab's own rows (ttft_ms of the requests
 * without error) and its summary.json, which share TTFT's definition. */
static void check_against_rows(json_t *d, const char *dir) {
    char path[4800];
    snprintf(path, sizeof path, "%s/requests.csv", dir);
    csv_table *t = csv_read(path);
    CHECK(t != NULL);
    double *x = calloc((size_t)t->n_rows, sizeof *x);
    size_t n = 0;
    json_t *ttfts = json_object_get(d, "ttfts"), *starts = json_object_get(d, "start_times");
    for (int i = 0; i < t->n_rows; i++) {
        if (csv_get(t, i, "error")[0])
            continue;
        x[n++] = csv_num(t, i, "ttft_ms");
    }
    /* seconds in the arrays: request 0 of the schedule was sent at sent_ms / 1000 */
    for (int i = 0; i < t->n_rows; i++)
        if (!strcmp(csv_get(t, i, "request_id"), "req-0"))
            CHECK_NEAR(json_number_value(json_array_get(starts, 0)),
                       csv_num(t, i, "sent_ms") / 1000, 1e-9);
    CHECK(json_number_value(json_array_get(ttfts, 0)) < 1); /* seconds, not ms */
    CHECK_NEAR(num(d, "mean_ttft_ms"), np_mean(x, n), 0.001);
    double p50 = np_percentile(x, n, 50), p999 = np_percentile(x, n, 99.9);
    CHECK_NEAR(num(d, "median_ttft_ms"), p50, 0.001);
    CHECK_NEAR(num(d, "p99.9_ttft_ms"), p999, 0.001);
    snprintf(path, sizeof path, "%s/summary.json", dir);
    json_t *s = json_load_file(path, 0, NULL);
    CHECK(s != NULL);
    json_t *ttft = json_object_get(s, "ttft_ms");
    CHECK_MSG(json_is_object(ttft), "summary.json has no ttft_ms");
    CHECK_NEAR(num(d, "median_ttft_ms"), num(ttft, "p50"), 0.001);
    CHECK_NEAR(num(d, "mean_ttft_ms"), num(ttft, "mean"), 0.001);
    json_decref(s);
    free(x);
    csv_free(t);
}

TEST(vllm_json_keys_units_and_figures) {
    sim_proc sim = sim_start("--profile tiny --fault http500=0.1,disconnect=0.05 --seed 3");
    char *dir = temp_dir(), cmd[4600], path[2100], *out = NULL;
    snprintf(path, sizeof path, "%s/vllm.json", dir);
    snprintf(cmd, sizeof cmd,
             "run --url http://127.0.0.1:%d --api chat --requests 80 --rate 40 --seed 1 "
             "--max-tokens 64 --slo ttft=50ms,tpot=20ms --out %s/run --save-vllm-json %s "
             "--metric-percentiles 50,99.9",
             sim.port, dir, path);
    int rc = servelab_cmd(cmd, &out);
    CHECK_MSG(rc == 0, "run: %d %s", rc, out);
    free(out);
    sim_stop(&sim);
    json_error_t je;
    json_t *d = json_load_file(path, 0, &je);
    CHECK_MSG(d != NULL, "%s: %s", path, je.text);
    size_t n = (size_t)num(d, "num_prompts");
    CHECK_INT((long)n, 80);
    check_keys(d, n);
    CHECK_MSG(num(d, "failed") >= 1, "the faults failed no request");
    check_from_arrays(d, n);
    snprintf(cmd, sizeof cmd, "%s/run", dir);
    check_against_rows(d, cmd);
    /* the report writes the same file from the same rows */
    snprintf(cmd, sizeof cmd, "report %s/run --out %s/rep --vllm-json --metric-percentiles 50,99.9",
             dir, dir);
    servelab_ok(cmd);
    snprintf(cmd, sizeof cmd, "%s/rep/vllm-run.json", dir);
    json_t *r = json_load_file(cmd, 0, NULL);
    CHECK(r != NULL);
    CHECK_NEAR(num(r, "p99.9_ttft_ms"), num(d, "p99.9_ttft_ms"), 1e-9);
    CHECK_NEAR(num(r, "mean_itl_ms"), num(d, "mean_itl_ms"), 1e-9);
    json_decref(r);
    /* and reads vLLM's file as a run beside servelab's own */
    snprintf(cmd, sizeof cmd, "report %s %s/run --out %s/both", path, dir, dir);
    servelab_ok(cmd);
    snprintf(cmd, sizeof cmd, "%s/both/summary.csv", dir);
    csv_table *t = csv_read(cmd);
    CHECK(t && t->n_rows == 2);
    CHECK_STR(csv_get(t, 0, "run"), "run");
    CHECK_STR(csv_get(t, 1, "run"), "vllm");
    CHECK_NEAR(csv_num(t, 1, "ttft_p50_ms"), csv_num(t, 0, "ttft_p50_ms"), 0.002);
    CHECK_NEAR(csv_num(t, 1, "tpot_p95_ms"), csv_num(t, 0, "tpot_p95_ms"), 0.002);
    CHECK_NEAR(csv_num(t, 1, "failed"), csv_num(t, 0, "failed"), 0);
    csv_free(t);
    json_decref(d);
    free(dir);
}

TEST(vllm_json_bad_input_is_refused_before_traffic) {
    char *dir = temp_dir(), cmd[4600], *out = NULL;
    snprintf(
        cmd, sizeof cmd,
        "run --url http://127.0.0.1:9 --requests 1 --out %s/a --save-vllm-json %s/no/such/x.json",
        dir, dir);
    CHECK_INT(servelab_cmd(cmd, &out), 2);
    CHECK_MSG(strstr(out, "--save-vllm-json") && count_of(out, "\n") == 1, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd,
             "run --url http://127.0.0.1:9 --requests 1 --out %s/b --save-vllm-json %s/x.json "
             "--metric-percentiles 99,101",
             dir, dir);
    CHECK_INT(servelab_cmd(cmd, &out), 2);
    CHECK_MSG(strstr(out, "--metric-percentiles") && count_of(out, "\n") == 1, "%s", out);
    free(out);
    char path[2100];
    snprintf(path, sizeof path, "%s/other.json", dir);
    FILE *f = fopen(path, "w");
    fputs("{\"ttfts\": [0.1]}\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "report %s --out %s/r", path, dir);
    CHECK_INT(servelab_cmd(cmd, &out), 2);
    CHECK_MSG(strstr(out, "not a result of vLLM's bench serve") && count_of(out, "\n") == 1, "%s",
              out);
    free(out);
    /* a value inside the arrays that vLLM would never write: one line naming it */
    const char *base = "\"start_times\": [1.0, 1.5], \"errors\": [\"\", \"\"], "
                       "\"input_lens\": [10, 10], \"itls\": [[0.1], [0.1]]";
    const char *bad[][2] = {
        {"\"ttfts\": [0.1, 0.1], \"latencies\": [0.2, 0.2], \"output_lens\": [2, \"abc\"]",
         "request 1's output_lens"},
        {"\"ttfts\": [0.1, 0.5], \"latencies\": [0.2, 0.2], \"output_lens\": [2, 2]",
         "request 1's ttfts"},
        {"\"ttfts\": [0.1, 1e300], \"latencies\": [0.2, 1e301], \"output_lens\": [2, 2]",
         "request 1's ttfts"},
        {"\"ttfts\": [0.1, 0.1], \"latencies\": [0.2, 0.2], \"output_lens\": [2, 2], "
         "\"queue_times\": [5.0]",
         "queue_times is not one entry per request"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        f = fopen(path, "w");
        fprintf(f, "{%s, %s}\n", base, bad[i][0]);
        fclose(f);
        CHECK_INT(servelab_cmd(cmd, &out), 2);
        CHECK_MSG(strstr(out, bad[i][1]) && count_of(out, "\n") == 1, "%s: %s", bad[i][1], out);
        free(out);
    }
    f = fopen(path, "w"); /* and the same file with good values reads */
    fprintf(f, "{%s, %s}\n", base,
            "\"ttfts\": [0.1, 0.1], \"latencies\": [0.2, 0.2], \"output_lens\": [2, 2]");
    fclose(f);
    servelab_ok(cmd);
    free(dir);
}
