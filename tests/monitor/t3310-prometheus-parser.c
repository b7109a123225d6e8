/* prom: the Prometheus text parser against a hand-written vLLM page, the
 * real llama.cpp pages in tests/data/transcripts, the simulator's own
 * /metrics, every rule of the format one at a time (values, timestamps,
 * escapes, CRLF, types, bad lines), and a crash hunt over every truncation
 * and many single-byte corruptions of a page placed against a guard page,
 * so that a read past the end faults even without a sanitizer. */
#include "monitor/prom.h"
#include "support.h"
#include "test.h"

#include <math.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct sample_list {
    prom_sample *v;
    int n, cap;
} sample_list;

static void collect(void *ud, const prom_sample *s) {
    sample_list *l = ud;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->v = realloc(l->v, (size_t)l->cap * sizeof *l->v);
        CHECK(l->v != NULL);
    }
    l->v[l->n++] = *s;
}

/* Parse `n` bytes into `l` (emptied first); checks the count returned
 * matches the callbacks made. */
static int parse_n(const char *text, size_t n, sample_list *l, int *bad, int *first) {
    l->n = 0;
    int got = prom_parse(text, n, collect, l, bad, first);
    CHECK_INT(got, l->n);
    return got;
}

static int parse_str(const char *text, sample_list *l, int *bad, int *first) {
    return parse_n(text, strlen(text), l, bad, first);
}

/* The first sample called `name` with label `key` equal to `value` (any
 * labels when key is NULL); fails the test when there is none. */
static const prom_sample *find(const sample_list *l, const char *name, const char *key,
                               const char *value) {
    for (int i = 0; i < l->n; i++) {
        const char *v = key ? prom_label_get(&l->v[i], key) : NULL;
        if (!strcmp(l->v[i].name, name) && (!key || (v && !strcmp(v, value))))
            return &l->v[i];
    }
    test_fail(__FILE__, __LINE__, "no sample %s{%s=\"%s\"}", name, key ? key : "",
              value ? value : "");
}

static int count_named(const sample_list *l, const char *name) {
    int n = 0;
    for (int i = 0; i < l->n; i++)
        n += !strcmp(l->v[i].name, name);
    return n;
}

/* One line, one sample: its value, or NaN with *ok = 0 when the line is bad. */
static double one_value(const char *line, int *ok) {
    sample_list l = {0};
    int bad;
    int n = parse_str(line, &l, &bad, NULL);
    *ok = n == 1 && bad == 0;
    double v = *ok ? l.v[0].value : NAN;
    free(l.v);
    return v;
}

#define MODEL "model_name=\"meta-llama/Llama-3.1-8B-Instruct\""
#define ENG "engine=\"0\","
#define TTFT "vllm:time_to_first_token_seconds"

/* What vLLM (prometheus_client) serves, trimmed: Python's own metrics,
 * gauges, counters with _total and a second label, one histogram with
 * le="+Inf", and an info gauge with fourteen labels. */
/* clang-format off */
static const char vllm_page[] =
    "# HELP python_gc_objects_collected_total Objects collected during gc\n"
    "# TYPE python_gc_objects_collected_total counter\n"
    "python_gc_objects_collected_total{generation=\"0\"} 12093.0\n"
    "python_gc_objects_collected_total{generation=\"1\"} 3409.0\n"
    "python_gc_objects_collected_total{generation=\"2\"} 517.0\n"
    "# HELP python_info Python platform information\n"
    "# TYPE python_info gauge\n"
    "python_info{implementation=\"CPython\",major=\"3\",minor=\"12\",patchlevel=\"9\","
    "version=\"3.12.9\"} 1.0\n"
    "# HELP process_resident_memory_bytes Resident memory size in bytes.\n"
    "# TYPE process_resident_memory_bytes gauge\n"
    "process_resident_memory_bytes 1.89321216e+09\n"
    "# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n"
    "# TYPE process_start_time_seconds gauge\n"
    "process_start_time_seconds 1.71234567812e+09\n"
    "# HELP vllm:num_requests_running Number of requests in model execution batches.\n"
    "# TYPE vllm:num_requests_running gauge\n"
    "vllm:num_requests_running{" ENG MODEL "} 12.0\n"
    "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n"
    "# TYPE vllm:num_requests_waiting gauge\n"
    "vllm:num_requests_waiting{" ENG MODEL "} 3.0\n"
    "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n"
    "# TYPE vllm:kv_cache_usage_perc gauge\n"
    "vllm:kv_cache_usage_perc{" ENG MODEL "} 0.4187\n"
    "# HELP vllm:prompt_tokens_total Number of prefill tokens processed.\n"
    "# TYPE vllm:prompt_tokens_total counter\n"
    "vllm:prompt_tokens_total{" ENG MODEL "} 183220.0\n"
    "# HELP vllm:generation_tokens_total Number of generation tokens processed.\n"
    "# TYPE vllm:generation_tokens_total counter\n"
    "vllm:generation_tokens_total{" ENG MODEL "} 95511.0\n"
    "# HELP vllm:request_success_total Count of successfully processed requests.\n"
    "# TYPE vllm:request_success_total counter\n"
    "vllm:request_success_total{" ENG "finished_reason=\"stop\"," MODEL "} 371.0\n"
    "vllm:request_success_total{" ENG "finished_reason=\"length\"," MODEL "} 129.0\n"
    "vllm:request_success_total{" ENG "finished_reason=\"abort\"," MODEL "} 0.0\n"
    "# HELP " TTFT " Histogram of time to first token in seconds.\n"
    "# TYPE " TTFT " histogram\n"
    TTFT "_bucket{" ENG "le=\"0.001\"," MODEL "} 0.0\n"
    TTFT "_bucket{" ENG "le=\"0.005\"," MODEL "} 0.0\n"
    TTFT "_bucket{" ENG "le=\"0.01\"," MODEL "} 2.0\n"
    TTFT "_bucket{" ENG "le=\"0.02\"," MODEL "} 17.0\n"
    TTFT "_bucket{" ENG "le=\"0.04\"," MODEL "} 88.0\n"
    TTFT "_bucket{" ENG "le=\"0.06\"," MODEL "} 170.0\n"
    TTFT "_bucket{" ENG "le=\"0.08\"," MODEL "} 241.0\n"
    TTFT "_bucket{" ENG "le=\"0.1\"," MODEL "} 297.0\n"
    TTFT "_bucket{" ENG "le=\"0.25\"," MODEL "} 431.0\n"
    TTFT "_bucket{" ENG "le=\"0.5\"," MODEL "} 480.0\n"
    TTFT "_bucket{" ENG "le=\"0.75\"," MODEL "} 493.0\n"
    TTFT "_bucket{" ENG "le=\"1.0\"," MODEL "} 497.0\n"
    TTFT "_bucket{" ENG "le=\"2.5\"," MODEL "} 500.0\n"
    TTFT "_bucket{" ENG "le=\"5.0\"," MODEL "} 500.0\n"
    TTFT "_bucket{" ENG "le=\"7.5\"," MODEL "} 500.0\n"
    TTFT "_bucket{" ENG "le=\"10.0\"," MODEL "} 500.0\n"
    TTFT "_bucket{" ENG "le=\"+Inf\"," MODEL "} 500.0\n"
    TTFT "_sum{" ENG MODEL "} 61.73\n"
    TTFT "_count{" ENG MODEL "} 500.0\n"
    "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n"
    "# TYPE vllm:cache_config_info gauge\n"
    "vllm:cache_config_info{block_size=\"16\",cache_dtype=\"auto\",calculate_kv_scales=\"False\","
    "cpu_offload_gb=\"0\",enable_prefix_caching=\"True\",engine=\"0\","
    "gpu_memory_utilization=\"0.9\",num_cpu_blocks=\"None\",num_gpu_blocks=\"29127\","
    "num_gpu_blocks_override=\"None\",prefix_caching_hash_algo=\"builtin\","
    "sliding_window=\"None\",swap_space=\"4\",swap_space_bytes=\"4294967296\"} 1.0\n";
/* clang-format on */

TEST(prom_vllm_page) {
    sample_list l = {0};
    int bad = -1, first = -1;
    CHECK_INT(parse_str(vllm_page, &l, &bad, &first), 34);
    CHECK_INT(bad, 0);
    CHECK_INT(first, 0);

    const prom_sample *s = find(&l, "vllm:num_requests_running", NULL, NULL);
    CHECK_NEAR(s->value, 12, 0);
    CHECK_STR(s->type, "gauge");
    CHECK_INT(s->n_labels, 2);
    CHECK_STR(prom_label_get(s, "model_name"), "meta-llama/Llama-3.1-8B-Instruct");
    CHECK_STR(prom_label_get(s, "engine"), "0");
    CHECK(prom_label_get(s, "le") == NULL);
    CHECK(!s->has_timestamp);
    CHECK_NEAR(find(&l, "vllm:kv_cache_usage_perc", NULL, NULL)->value, 0.4187, 1e-12);
    CHECK_NEAR(find(&l, "process_resident_memory_bytes", NULL, NULL)->value, 1893212160.0, 0);
    CHECK_NEAR(find(&l, "process_start_time_seconds", NULL, NULL)->value, 1712345678.12, 1e-6);
    CHECK_INT(find(&l, "process_start_time_seconds", NULL, NULL)->n_labels, 0);

    s = find(&l, "vllm:request_success_total", "finished_reason", "length");
    CHECK_NEAR(s->value, 129, 0);
    CHECK_STR(s->type, "counter");
    CHECK_INT(count_named(&l, "vllm:request_success_total"), 3);
    CHECK_NEAR(find(&l, "python_gc_objects_collected_total", "generation", "2")->value, 517, 0);

    /* The histogram: 17 buckets, cumulative, the last one equal to _count. */
    CHECK_INT(count_named(&l, TTFT "_bucket"), 17);
    double prev = -1;
    for (int i = 0; i < l.n; i++) {
        if (strcmp(l.v[i].name, TTFT "_bucket"))
            continue;
        CHECK_STR(l.v[i].type, "histogram");
        CHECK(prom_label_get(&l.v[i], "le") != NULL);
        CHECK(l.v[i].value >= prev);
        prev = l.v[i].value;
    }
    CHECK_NEAR(find(&l, TTFT "_bucket", "le", "0.1")->value, 297, 0);
    s = find(&l, TTFT "_bucket", "le", "+Inf");
    CHECK_NEAR(s->value, 500, 0);
    CHECK_STR(prom_label_get(s, "model_name"), "meta-llama/Llama-3.1-8B-Instruct");
    CHECK_NEAR(find(&l, TTFT "_count", NULL, NULL)->value, 500, 0);
    CHECK_STR(find(&l, TTFT "_count", NULL, NULL)->type, "histogram");
    CHECK_NEAR(find(&l, TTFT "_sum", NULL, NULL)->value, 61.73, 1e-12);
    CHECK_STR(find(&l, TTFT "_sum", NULL, NULL)->type, "histogram");

    s = find(&l, "vllm:cache_config_info", NULL, NULL);
    CHECK_INT(s->n_labels, 14);
    CHECK_STR(prom_label_get(s, "swap_space_bytes"), "4294967296");
    CHECK_STR(prom_label_get(s, "block_size"), "16");
    free(l.v);
}

/* llama.cpp's pages: 15 label-less samples, 10 counters and 5 gauges. */
static void load_llamacpp(const char *file, sample_list *l) {
    char path[256];
    snprintf(path, sizeof path, "tests/data/transcripts/llama.cpp-server/%s.body.txt", file);
    size_t n;
    char *text = read_file(path, &n);
    CHECK_MSG(text != NULL, "cannot read %s", path);
    int bad = -1, first = -1;
    CHECK_INT(parse_n(text, n, l, &bad, &first), 15);
    CHECK_INT(bad, 0);
    CHECK_INT(first, 0);
    int counters = 0, gauges = 0;
    for (int i = 0; i < l->n; i++) {
        CHECK_INT(l->v[i].n_labels, 0);
        CHECK(!strncmp(l->v[i].name, "llamacpp:", 9));
        counters += !strcmp(l->v[i].type, "counter");
        gauges += !strcmp(l->v[i].type, "gauge");
    }
    CHECK_INT(counters, 10);
    CHECK_INT(gauges, 5);
    free(text);
}

static double value_of(const sample_list *l, const char *name) {
    return find(l, name, NULL, NULL)->value;
}

TEST(prom_llamacpp_metrics_idle) {
    sample_list l = {0};
    load_llamacpp("05_metrics_before_get", &l);
    for (int i = 0; i < l.n; i++)
        CHECK_MSG(l.v[i].value == 0, "%s = %g on an idle server", l.v[i].name, l.v[i].value);
    CHECK_STR(find(&l, "llamacpp:requests_processing", NULL, NULL)->type, "gauge");
    CHECK_STR(find(&l, "llamacpp:prompt_tokens_total", NULL, NULL)->type, "counter");
    /* declared a counter although it is a running maximum */
    CHECK_STR(find(&l, "llamacpp:n_tokens_max", NULL, NULL)->type, "counter");
    free(l.v);
}

TEST(prom_llamacpp_metrics_under_load_and_after) {
    sample_list during = {0}, after = {0};
    load_llamacpp("36_metrics_during_6_concurrent", &during);
    load_llamacpp("40_metrics_after_get", &after);

    /* six requests on four slots: four running, two waiting */
    CHECK_NEAR(value_of(&during, "llamacpp:requests_processing"), 4, 0);
    CHECK_NEAR(value_of(&during, "llamacpp:requests_deferred"), 2, 0);
    CHECK_NEAR(value_of(&during, "llamacpp:prompt_tokens_total"), 109, 0);
    CHECK_NEAR(value_of(&during, "llamacpp:prompt_tokens_cached_total"), 76, 0);
    CHECK_NEAR(value_of(&during, "llamacpp:prompt_seconds_total"), 0.303821, 1e-12);
    CHECK_NEAR(value_of(&during, "llamacpp:tokens_predicted_total"), 1186, 0);
    CHECK_NEAR(value_of(&during, "llamacpp:tokens_predicted_seconds_total"), 11.7316, 1e-12);
    CHECK_NEAR(value_of(&during, "llamacpp:n_decode_total"), 1225, 0);
    CHECK_NEAR(value_of(&during, "llamacpp:n_tokens_max"), 1023, 0);
    CHECK_NEAR(value_of(&during, "llamacpp:prompt_tokens_seconds"), 358.764, 1e-9);
    CHECK_NEAR(value_of(&during, "llamacpp:predicted_tokens_seconds"), 99.7308, 1e-9);
    CHECK_NEAR(value_of(&during, "llamacpp:n_busy_slots_per_decode"), 1.10694, 1e-12);

    CHECK_NEAR(value_of(&after, "llamacpp:requests_processing"), 0, 0);
    CHECK_NEAR(value_of(&after, "llamacpp:requests_deferred"), 0, 0);
    CHECK_NEAR(value_of(&after, "llamacpp:prompt_tokens_total"), 111, 0);
    CHECK_NEAR(value_of(&after, "llamacpp:prompt_tokens_cached_total"), 90, 0);
    CHECK_NEAR(value_of(&after, "llamacpp:tokens_predicted_total"), 2386, 0);
    CHECK_NEAR(value_of(&after, "llamacpp:tokens_predicted_seconds_total"), 30.0183, 1e-12);
    CHECK_NEAR(value_of(&after, "llamacpp:n_decode_total"), 1582, 0);
    CHECK_NEAR(value_of(&after, "llamacpp:predicted_tokens_seconds"), 65.2932, 1e-9);
    CHECK_NEAR(value_of(&after, "llamacpp:n_busy_slots_per_decode"), 1.50822, 1e-12);

    /* the same samples in the same order, and counters never go down */
    CHECK_INT(during.n, after.n);
    for (int i = 0; i < during.n; i++) {
        CHECK_STR(during.v[i].name, after.v[i].name);
        if (!strcmp(during.v[i].type, "counter"))
            CHECK_MSG(after.v[i].value >= during.v[i].value, "%s went down", during.v[i].name);
    }
    free(during.v);
    free(after.v);
}

TEST(prom_label_escaping_round_trip) {
    const char *page =
        "m{path=\"C:\\\\dir\\\\\",quote=\"say \\\"hi\\\"\",nl=\"a\\nb\",empty=\"\"} 1\n";
    sample_list l = {0};
    int bad;
    CHECK_INT(parse_str(page, &l, &bad, NULL), 1);
    CHECK_INT(bad, 0);
    const prom_sample *s = &l.v[0];
    CHECK_STR(prom_label_get(s, "path"), "C:\\dir\\");
    CHECK_STR(prom_label_get(s, "quote"), "say \"hi\"");
    CHECK_STR(prom_label_get(s, "nl"), "a\nb");
    CHECK_STR(prom_label_get(s, "empty"), "");

    const char *want = "path=\"C:\\\\dir\\\\\",quote=\"say \\\"hi\\\"\",nl=\"a\\nb\",empty=\"\"";
    char buf[256];
    CHECK_INT(prom_labels_format(s, buf, sizeof buf), strlen(want));
    CHECK_STR(buf, want);

    /* and back: the formatted text parses to the same labels */
    char again[300];
    snprintf(again, sizeof again, "m{%s} 1", buf);
    prom_sample first = *s;
    CHECK_INT(parse_str(again, &l, &bad, NULL), 1);
    CHECK_INT(l.v[0].n_labels, 4);
    for (int i = 0; i < 4; i++) {
        CHECK_STR(l.v[0].labels[i].name, first.labels[i].name);
        CHECK_STR(l.v[0].labels[i].value, first.labels[i].value);
    }

    /* cut short: NUL-terminated, full length still reported */
    char small[10];
    memset(small, 'x', sizeof small);
    CHECK_INT(prom_labels_format(s, small, sizeof small), strlen(want));
    CHECK_INT(strlen(small), 9);
    CHECK(!strncmp(small, want, 9));
    CHECK_INT(prom_labels_format(s, NULL, 0), strlen(want));
    char one[1] = {'x'};
    CHECK_INT(prom_labels_format(s, one, 1), strlen(want));
    CHECK_INT(one[0], 0);

    /* no labels: an empty string */
    CHECK_INT(parse_str("m 1", &l, &bad, NULL), 1);
    CHECK_INT(prom_labels_format(&l.v[0], buf, sizeof buf), 0);
    CHECK_STR(buf, "");
    free(l.v);
}

TEST(prom_values_as_go_reads_them) {
    int ok;
    CHECK(isnan(one_value("m NaN", &ok)) && ok);
    CHECK(isnan(one_value("m nan", &ok)) && ok);
    CHECK(one_value("m +Inf", &ok) == INFINITY && ok);
    CHECK(one_value("m -Inf", &ok) == -INFINITY && ok);
    CHECK(one_value("m Inf", &ok) == INFINITY && ok);
    CHECK(one_value("m -infinity", &ok) == -INFINITY && ok);
    CHECK(one_value("m{le=\"+Inf\"} +Inf", &ok) == INFINITY && ok);
    CHECK(one_value("m 1e3", &ok) == 1000 && ok);
    CHECK(one_value("m 1.5E-3", &ok) == 0.0015 && ok);
    CHECK(one_value("m .5", &ok) == 0.5 && ok);
    CHECK(one_value("m 5.", &ok) == 5 && ok);
    CHECK(one_value("m +3", &ok) == 3 && ok);
    CHECK(one_value("m -0.25", &ok) == -0.25 && ok);
    CHECK(one_value("m 007", &ok) == 7 && ok);
    CHECK(one_value("m 1e-400", &ok) == 0 && ok); /* underflow is fine in Go */
    CHECK(one_value("m 1.7976931348623157e308", &ok) > 1e308 && ok);
    CHECK(one_value("m 0.00000000000000000000000000000000000000000000000000000000000000000000"
                    "0000000000000000000000000000000000000000000000000001",
                    &ok) == 1e-120 &&
          ok);
    const char *bad[] = {"m 1e400", "m -1e400", "m 0x10", "m 0x1p-2",    "m 1_000",  "m .",
                         "m 1e",    "m e5",     "m +",    "m infinit",   "m +NaN",   "m 1.2.3",
                         "m 1,5",   "m 1e+",    "m --1",  "m Infinityy", "m nan(1)", "m 12abc"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        one_value(bad[i], &ok);
        CHECK_MSG(!ok, "'%s' was accepted", bad[i]);
    }
}

TEST(prom_timestamps) {
    sample_list l = {0};
    int bad;
    CHECK_INT(parse_str("a 1 1712345678901\n"
                        "b{x=\"y\"} 2.5 -1000\n"
                        "c 3\n"
                        "d 4 9223372036854775807\n"
                        "e 5 -9223372036854775808\n"
                        "f 6\t 42 \t\n",
                        &l, &bad, NULL),
              6);
    CHECK_INT(bad, 0);
    CHECK(l.v[0].has_timestamp);
    CHECK(l.v[0].timestamp_ms == 1712345678901LL);
    CHECK(l.v[1].has_timestamp && l.v[1].timestamp_ms == -1000);
    CHECK_NEAR(l.v[1].value, 2.5, 0);
    CHECK(!l.v[2].has_timestamp);
    CHECK(l.v[3].timestamp_ms == INT64_MAX);
    CHECK(l.v[4].timestamp_ms == INT64_MIN);
    CHECK(l.v[5].has_timestamp && l.v[5].timestamp_ms == 42);

    int first;
    CHECK_INT(parse_str("a 1 9223372036854775808\n"
                        "a 1 1.5\n"
                        "a 1 -\n"
                        "a 1 12x\n"
                        "a 1 1e3\n",
                        &l, &bad, &first),
              0);
    CHECK_INT(bad, 5);
    CHECK_INT(first, 1);
    free(l.v);
}

TEST(prom_crlf_same_as_lf) {
    const char *lf = "# HELP g A gauge.\n# TYPE g gauge\ng{a=\"1\"} 7 100\n\nh 8\n";
    const char *crlf = "# HELP g A gauge.\r\n# TYPE g gauge\r\ng{a=\"1\"} 7 100\r\n\r\nh 8\r\n";
    sample_list a = {0}, b = {0};
    int bad_a, bad_b;
    CHECK_INT(parse_str(lf, &a, &bad_a, NULL), 2);
    CHECK_INT(parse_str(crlf, &b, &bad_b, NULL), 2);
    CHECK_INT(bad_a, 0);
    CHECK_INT(bad_b, 0);
    for (int i = 0; i < 2; i++) {
        CHECK_STR(a.v[i].name, b.v[i].name);
        CHECK_STR(a.v[i].type, b.v[i].type);
        CHECK(a.v[i].value == b.v[i].value);
        CHECK_INT(a.v[i].has_timestamp, b.v[i].has_timestamp);
    }
    CHECK_STR(b.v[0].type, "gauge");
    CHECK(b.v[0].timestamp_ms == 100);
    CHECK_STR(b.v[1].type, "untyped");
    /* a CR anywhere but before the LF is not whitespace */
    int first;
    CHECK_INT(parse_str("a 1\rb 2\n", &b, &bad_b, &first), 0);
    CHECK_INT(bad_b, 1);
    free(a.v);
    free(b.v);
}

/* A label set with n labels l0="v",l1="v",... */
static void many_labels(char *out, size_t cap, int n) {
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, cap - len, "%sl%d=\"v\"", i ? "," : "", i);
}

TEST(prom_bad_lines_counted_and_skipped) {
    char name159[200], name160[200], lname63[200], lname64[200], val255[400], val256[400];
    char labels16[400], labels17[400];
    char a[300];
    memset(a, 'a', sizeof a);
    snprintf(name159, sizeof name159, "%.*s 1\n", 159, a);
    snprintf(name160, sizeof name160, "%.*s 1\n", 160, a);
    snprintf(lname63, sizeof lname63, "m{%.*s=\"v\"} 1\n", 63, a);
    snprintf(lname64, sizeof lname64, "m{%.*s=\"v\"} 1\n", 64, a);
    snprintf(val255, sizeof val255, "m{a=\"%.*s\"} 1\n", 255, a);
    snprintf(val256, sizeof val256, "m{a=\"%.*s\"} 1\n", 256, a);
    char set[300];
    many_labels(set, sizeof set, 16);
    snprintf(labels16, sizeof labels16, "m{%s} 1\n", set);
    many_labels(set, sizeof set, 17);
    snprintf(labels17, sizeof labels17, "m{%s} 1\n", set);

    /* 34 lines: 8 samples, 3 good comments, 23 bad. */
    char page[8192];
    /* clang-format off */
    snprintf(page, sizeof page,
             "# TYPE ok counter\n"
             "ok 1\n"                     /* 2 */
             "missing_value\n"            /* 3: bad */
             "missing_value{a=\"b\"}\n"   /* 4: bad */
             "m{a=\"unterminated} 1\n"    /* 5: bad */
             "1abc 1\n"                   /* 6: bad name */
             "m 1 2 junk\n"               /* 7: junk after the timestamp */
             "m 1 junk\n"                 /* 8: junk instead of a timestamp */
             "%s"                         /* 9: 17 labels, bad */
             "%s"                         /* 10: name of 160, bad */
             "%s"                         /* 11: 16 labels, fine */
             "%s"                         /* 12: 159, fine */
             "%s%s%s%s"                   /* 13-16: label name 63 ok, 64 bad, */
                                          /* value 255 ok, 256 bad */
             "m{a=\"1\",a=\"2\"} 1\n"     /* 17: repeated label, bad */
             "m{__name__=\"x\"} 1\n"      /* 18: reserved, bad */
             "m{a=\"\\t\"} 1\n"           /* 19: unknown escape, bad */
             "m{a=\"1\" b=\"2\"} 1\n"     /* 20: no comma, bad */
             "m{a=\"1\",} 1\n"            /* 21: trailing comma, fine */
             "m{,} 1\n"                   /* 22: bad */
             "m{a=1} 1\n"                 /* 23: unquoted, bad */
             "m-x 1\n"                    /* 24: bad */
             "{a=\"1\"} 1\n"              /* 25: no name, bad */
             "# TYPE t wibble\n"          /* 26: unknown type, bad */
             "# TYPE 1t counter\n"        /* 27: bad name, bad */
             "# HELP h bad \\escape\n"    /* 28: bad */
             "# HELP h fine \\\\ \\n\n"   /* 29: fine */
             "# just a comment { \" \n"   /* 30: fine */
             "  m  {  a = \"1\" , b = \"2\" }  3  \n" /* 31: fine */
             "m 1 2 3\n"                  /* 32: bad */
             "m{a=\"1\"}} 1\n"            /* 33: bad */
             "last 9",                    /* 34: fine, no newline */
             labels17, name160, labels16, name159, lname63, lname64, val255, val256);
    /* clang-format on */
    sample_list l = {0};
    int bad = -1, first = -1;
    int n = parse_str(page, &l, &bad, &first);
    CHECK_INT(n, 8);
    CHECK_INT(bad, 23);
    CHECK_INT(first, 3);
    CHECK_STR(l.v[0].name, "ok");
    CHECK_STR(l.v[0].type, "counter");
    CHECK_INT(l.v[1].n_labels, 16);
    CHECK_STR(l.v[1].labels[15].name, "l15");
    CHECK_INT(strlen(l.v[2].name), 159);
    CHECK_INT(strlen(l.v[3].labels[0].name), 63);
    CHECK_INT(strlen(l.v[4].labels[0].value), 255);
    CHECK_INT(l.v[5].n_labels, 1);
    CHECK_INT(l.v[6].n_labels, 2);
    CHECK_STR(prom_label_get(&l.v[6], "b"), "2");
    CHECK_NEAR(l.v[6].value, 3, 0);
    CHECK_STR(l.v[7].name, "last");
    CHECK_NEAR(l.v[7].value, 9, 0);

    /* NULL counters are fine; a first bad line later in the page */
    CHECK_INT(prom_parse("a 1\nb 2\n\nc\n", 11, NULL, NULL, NULL, NULL), 2);
    CHECK_INT(parse_str("a 1\nb 2\n\nc\n", &l, &bad, &first), 2);
    CHECK_INT(bad, 1);
    CHECK_INT(first, 4);
    free(l.v);
}

TEST(prom_empty_blank_and_unterminated_input) {
    int bad = -1, first = -1;
    CHECK_INT(prom_parse(NULL, 0, NULL, NULL, &bad, &first), 0);
    CHECK_INT(bad, 0);
    CHECK_INT(first, 0);
    CHECK_INT(prom_parse("", 0, NULL, NULL, &bad, &first), 0);
    CHECK_INT(prom_parse("\n\n  \n\t\r\n", 7, NULL, NULL, &bad, &first), 0);
    CHECK_INT(bad, 0);
    CHECK_INT(prom_parse("# only\n# comments", 17, NULL, NULL, &bad, &first), 0);
    CHECK_INT(bad, 0);

    sample_list l = {0};
    CHECK_INT(parse_str("# TYPE a gauge\na 1\nb{x=\"y\"} 2", &l, &bad, &first), 2);
    CHECK_INT(bad, 0);
    CHECK_NEAR(l.v[1].value, 2, 0);
    /* n bounds the text even when more follows it */
    CHECK_INT(parse_n("a 12 b 3", 4, &l, &bad, &first), 1);
    CHECK_NEAR(l.v[0].value, 12, 0);
    CHECK_INT(bad, 0);
    free(l.v);
}

TEST(prom_types_follow_families) {
    sample_list l = {0};
    int bad;
    CHECK_INT(parse_str("free 1\n" /* untyped: no TYPE */
                        "# TYPE h histogram\n"
                        "h_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n"
                        "h 1\n"              /* the declared name itself */
                        "h_total 1\n"        /* not a histogram suffix */
                        "# TYPE s SUMMARY\n" /* keywords in any case */
                        "s{quantile=\"0.5\"} 1\ns_sum 1\ns_count 1\ns_bucket 1\n"
                        "# TYPE c counter\n"
                        "c_total 1\n" /* 0.0.4: only the exact name */
                        "# TYPE h_count gauge\n"
                        "h_count 2\n"                  /* an exact TYPE wins */
                        "late 1\n# TYPE late gauge\n", /* TYPE after its sample */
                        &l, &bad, NULL),
              13);
    CHECK_INT(bad, 0);
    const char *want[] = {"untyped", "histogram", "histogram", "histogram", "histogram",
                          "untyped", "summary",   "summary",   "summary",   "untyped",
                          "untyped", "gauge",     "untyped"};
    const char *names[] = {"free",  "h_bucket", "h_sum",    "h_count", "h",       "h_total", "s",
                           "s_sum", "s_count",  "s_bucket", "c_total", "h_count", "late"};
    for (int i = 0; i < 13; i++) {
        CHECK_STR(l.v[i].name, names[i]);
        CHECK_MSG(!strcmp(l.v[i].type, want[i]), "%s: type %s, want %s", names[i], l.v[i].type,
                  want[i]);
    }
    free(l.v);
}

/* Every sample handed out is well-formed, whatever the input was. */
static void check_sane(void *ud, const prom_sample *s) {
    (*(int *)ud)++;
    CHECK(s->name[0] != '\0' && strlen(s->name) < sizeof s->name);
    CHECK(s->n_labels >= 0 && s->n_labels <= PROM_MAX_LABELS);
    for (int i = 0; i < s->n_labels; i++) {
        CHECK(s->labels[i].name[0] != '\0');
        CHECK(strlen(s->labels[i].name) < sizeof s->labels[i].name);
        CHECK(strlen(s->labels[i].value) < sizeof s->labels[i].value);
    }
    CHECK(s->type && (!strcmp(s->type, "counter") || !strcmp(s->type, "gauge") ||
                      !strcmp(s->type, "histogram") || !strcmp(s->type, "summary") ||
                      !strcmp(s->type, "untyped")));
    char buf[64];
    prom_labels_format(s, buf, sizeof buf);
}

/* A buffer whose last byte sits just before an inaccessible page. */
typedef struct guarded {
    char *map;
    size_t data, total;
} guarded;

static guarded guard_alloc(size_t n) {
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    guarded g;
    g.data = (n / pg + 1) * pg;
    g.total = g.data + pg;
    g.map = mmap(NULL, g.total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(g.map != MAP_FAILED);
    CHECK(mprotect(g.map + g.data, pg, PROT_NONE) == 0);
    return g;
}

/* Copy n bytes so that they end at the guard page; returns their start. */
static const char *guard_place(guarded *g, const char *src, size_t n) {
    char *at = g->map + g->data - n;
    memcpy(at, src, n);
    return at;
}

TEST(prom_survives_truncation_and_corruption) {
    const size_t n = sizeof vllm_page - 1;
    int lines = 0;
    for (size_t i = 0; i < n; i++)
        lines += vllm_page[i] == '\n';
    guarded g = guard_alloc(n);

    /* Every prefix: all whole lines parse; only the cut last line may be bad. */
    for (size_t k = 0; k <= n; k++) {
        const char *t = guard_place(&g, vllm_page, k);
        int seen = 0, bad = -1, first = -1;
        int got = prom_parse(t, k, check_sane, &seen, &bad, &first);
        CHECK_INT(got, seen);
        CHECK_MSG(bad <= 1, "prefix %zu: %d bad lines", k, bad);
        if (bad == 1) {
            int line = 1;
            for (size_t i = 0; i < k; i++)
                line += t[i] == '\n';
            CHECK_MSG(first == line, "prefix %zu: bad line %d, last line %d", k, first, line);
        }
    }

    /* Every byte replaced by each of a set chosen to hit the grammar. */
    static const char subst[] = {'\0', '\n', '\r', ' ', '"', '\\', '{', '}',
                                 ',',  '=',  '#',  'e', '.', '-',  '9', (char)0xff};
    char *copy = malloc(n);
    CHECK(copy != NULL);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j <= sizeof subst; j++) {
            memcpy(copy, vllm_page, n);
            copy[i] = j < sizeof subst ? subst[j] : (char)(copy[i] ^ 0x20);
            const char *t = guard_place(&g, copy, n);
            int seen = 0, bad = -1, first = -1;
            int got = prom_parse(t, n, check_sane, &seen, &bad, &first);
            CHECK_INT(got, seen);
            CHECK(got + bad <= lines + 1);
            CHECK((bad == 0) == (first == 0));
        }
    }
    free(copy);
    munmap(g.map, g.total);
}

TEST(prom_parses_simulator_metrics) {
    sim_proc p = sim_start("--model sim-model");
    for (int i = 0; i < 3; i++) {
        http_result r;
        CHECK(http_request_raw(p.port, "POST", "/v1/completions", "",
                               "{\"prompt\":[1,2,3],\"max_tokens\":4,\"ignore_eos\":true}",
                               &r) == 0);
        CHECK_INT(r.status, 200);
        http_result_free(&r);
    }
    http_result r;
    CHECK(http_request_raw(p.port, "GET", "/metrics", "", NULL, &r) == 0);
    CHECK_INT(r.status, 200);
    sample_list l = {0};
    int bad = -1, first = -1;
    CHECK(parse_n(r.body, r.body_len, &l, &bad, &first) > 0);
    CHECK_MSG(bad == 0, "%d bad lines, first %d", bad, first);
    http_result_free(&r);
    sim_stop(&p);

    const prom_sample *s = find(&l, "vllm:num_requests_running", "model_name", "sim-model");
    CHECK_STR(s->type, "gauge");
    CHECK_NEAR(s->value, 0, 0);
    CHECK_STR(find(&l, "vllm:kv_cache_usage_perc", NULL, NULL)->type, "gauge");
    CHECK_STR(find(&l, "vllm:generation_tokens_total", NULL, NULL)->type, "counter");
    CHECK_NEAR(find(&l, "vllm:generation_tokens_total", NULL, NULL)->value, 12, 0);

    const char *hists[] = {"vllm:time_to_first_token_seconds", "vllm:request_queue_time_seconds",
                           "vllm:e2e_request_latency_seconds"};
    for (size_t h = 0; h < 3; h++) {
        char bucket[160], sum[160], count[160];
        snprintf(bucket, sizeof bucket, "%s_bucket", hists[h]);
        snprintf(sum, sizeof sum, "%s_sum", hists[h]);
        snprintf(count, sizeof count, "%s_count", hists[h]);
        CHECK_MSG(count_named(&l, bucket) > 1, "%s missing", bucket);
        double prev = 0;
        for (int i = 0; i < l.n; i++) {
            if (strcmp(l.v[i].name, bucket))
                continue;
            CHECK_STR(l.v[i].type, "histogram");
            CHECK(prom_label_get(&l.v[i], "le") != NULL);
            CHECK_STR(prom_label_get(&l.v[i], "model_name"), "sim-model");
            CHECK_MSG(l.v[i].value >= prev, "%s not cumulative", bucket);
            prev = l.v[i].value;
        }
        const prom_sample *inf = find(&l, bucket, "le", "+Inf");
        const prom_sample *c = find(&l, count, NULL, NULL);
        CHECK_STR(find(&l, sum, NULL, NULL)->type, "histogram");
        CHECK_STR(c->type, "histogram");
        CHECK_NEAR(c->value, 3, 0);
        CHECK_NEAR(inf->value, c->value, 0);
    }
    free(l.v);
}
