/* The simulator's prefix cache seen from outside: the real binary, its
 * usage.prompt_tokens_details.cached_tokens (whole answers and the final
 * usage chunk) and its vllm:prefix_cache_* counters agreeing with each
 * other and with the blocks the prompts share; chat histories hashed alike;
 * cache_salt; --no-prefix-caching; a cached prompt's TTFT; and a servelab
 * run with the built-in prompts, cached with --cache-bust off and never hit
 * with the default nonce. */
#include "common/clock.h"
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static json_t *parse(const char *s) {
    json_error_t e;
    json_t *j = json_loads(s, 0, &e);
    CHECK_MSG(j != NULL, "bad JSON (%s): %.200s", e.text, s);
    return j;
}

/* A completions body whose prompt is n ids: the first `shared` base+i, the
 * rest own+i. */
static char *ids_body(int n, int shared, int base, int own, const char *extra) {
    size_t cap = (size_t)n * 12 + 256;
    char *b = malloc(cap);
    size_t k = (size_t)snprintf(b, cap, "{\"prompt\":[");
    for (int i = 0; i < n; i++)
        k +=
            (size_t)snprintf(b + k, cap - k, "%s%d", i ? "," : "", i < shared ? base + i : own + i);
    snprintf(b + k, cap - k, "],\"max_tokens\":2%s}", extra ? extra : "");
    return b;
}

/* usage.prompt_tokens_details.cached_tokens of a whole answer (-1: none). */
static int cached_of(int port, const char *path, const char *body) {
    http_result r;
    CHECK(http_request_raw(port, "POST", path, "", body, &r) == 0);
    CHECK_MSG(r.status == 200, "status %d: %s", r.status, r.body);
    json_t *j = parse(r.body);
    json_t *d = json_object_get(json_object_get(j, "usage"), "prompt_tokens_details");
    int v = json_is_integer(json_object_get(d, "cached_tokens"))
                ? (int)json_integer_value(json_object_get(d, "cached_tokens"))
                : -1;
    json_decref(j);
    http_result_free(&r);
    return v;
}

TEST(sim_cache_usage_and_counters_agree_with_shared_blocks) {
    sim_proc p = sim_start(NULL);
    char *a = ids_body(100, 64, 1000, 50000, NULL), *b = ids_body(100, 64, 1000, 60000, NULL);
    CHECK_INT(cached_of(p.port, "/v1/completions", a), 0);
    CHECK_INT(cached_of(p.port, "/v1/completions", b), 64);
    CHECK_INT(sim_metric(p.port, "vllm:prefix_cache_queries_total"), 200);
    CHECK_INT(sim_metric(p.port, "vllm:prefix_cache_hits_total"), 64);
    /* a again: its 6 full blocks are cached, all 100 tokens but the last
     * block's worth: 96 */
    CHECK_INT(cached_of(p.port, "/v1/completions", a), 96);
    CHECK_INT(sim_metric(p.port, "vllm:prefix_cache_hits_total"), 64 + 96);
    /* streamed: the final usage chunk says it too */
    char *c = ids_body(100, 64, 1000, 70000,
                       ",\"stream\":true,\"stream_options\":{\"include_usage\":true}");
    http_result r;
    CHECK(http_request_raw(p.port, "POST", "/v1/completions", "", c, &r) == 0);
    char **ev;
    int n = sse_events(r.body, &ev);
    CHECK(n >= 3);
    json_t *u = parse(ev[n - 2]);
    CHECK_INT(json_integer_value(json_object_get(
                  json_object_get(json_object_get(u, "usage"), "prompt_tokens_details"),
                  "cached_tokens")),
              64);
    json_decref(u);
    sse_free(ev, n);
    http_result_free(&r);
    free(a);
    free(b);
    free(c);
    sim_stop(&p);
}

TEST(sim_cache_chat_histories_hash_alike) {
    sim_proc p = sim_start(NULL);
    const char *turn1 = "{\"messages\":[{\"role\":\"system\",\"content\":\"You are a careful "
                        "assistant who answers in full sentences and cites sources.\"},"
                        "{\"role\":\"user\",\"content\":\"Explain how a paged KV cache works, "
                        "and why blocks make prefix sharing cheap.\"}],\"max_tokens\":2}";
    const char *turn2 = "{\"messages\":[{\"role\":\"system\",\"content\":\"You are a careful "
                        "assistant who answers in full sentences and cites sources.\"},"
                        "{\"role\":\"user\",\"content\":\"Explain how a paged KV cache works, "
                        "and why blocks make prefix sharing cheap.\"},{\"role\":\"assistant\","
                        "\"content\":\"Blocks of sixteen tokens are hashed.\"},{\"role\":"
                        "\"user\",\"content\":\"And eviction?\"}],\"max_tokens\":2}";
    /* the ids turn 1 and turn 2 share: turn 1's messages, not its reply
     * priming (turn 2 has the assistant's message there) */
    http_result r;
    CHECK(http_request_raw(p.port, "POST", "/tokenize", "", turn1, &r) == 0);
    json_t *t = parse(r.body);
    int n1 = (int)json_integer_value(json_object_get(t, "count"));
    CHECK_INT(json_array_size(json_object_get(t, "tokens")), n1);
    json_decref(t);
    http_result_free(&r);
    int shared = n1 - 3;
    CHECK_MSG(shared >= 32, "only %d shared tokens", shared);
    CHECK_INT(cached_of(p.port, "/v1/chat/completions", turn1), 0);
    /* the same history again: every full block before the last token */
    CHECK_INT(cached_of(p.port, "/v1/chat/completions", turn1), (n1 - 1) / 16 * 16);
    CHECK_INT(cached_of(p.port, "/v1/chat/completions", turn2), shared / 16 * 16);
    sim_stop(&p);
}

TEST(sim_cache_salt_keeps_caches_apart) {
    sim_proc p = sim_start(NULL);
    char *plain = ids_body(64, 64, 5, 0, NULL),
         *salt_a = ids_body(64, 64, 5, 0, ",\"cache_salt\":\"a\""),
         *salt_b = ids_body(64, 64, 5, 0, ",\"cache_salt\":\"b\"");
    CHECK_INT(cached_of(p.port, "/v1/completions", plain), 0);
    CHECK_INT(cached_of(p.port, "/v1/completions", salt_a), 0);
    CHECK_INT(cached_of(p.port, "/v1/completions", salt_b), 0);
    CHECK_INT(cached_of(p.port, "/v1/completions", salt_a), 48);
    CHECK_INT(cached_of(p.port, "/v1/completions", plain), 48);
    char *bad = ids_body(8, 8, 5, 0, ",\"cache_salt\":\"\"");
    http_result r;
    CHECK(http_request_raw(p.port, "POST", "/v1/completions", "", bad, &r) == 0);
    CHECK_INT(r.status, 400);
    CHECK(strstr(r.body, "cache_salt") != NULL);
    http_result_free(&r);
    free(plain);
    free(salt_a);
    free(salt_b);
    free(bad);
    sim_stop(&p);
}

TEST(sim_cache_off_gives_zero_hits) {
    sim_proc p = sim_start("--no-prefix-caching");
    char *a = ids_body(100, 100, 1, 0, NULL);
    CHECK_INT(cached_of(p.port, "/v1/completions", a), 0);
    CHECK_INT(cached_of(p.port, "/v1/completions", a), 0);
    CHECK_INT(sim_metric(p.port, "vllm:prefix_cache_queries_total"), 0);
    CHECK_INT(sim_metric(p.port, "vllm:prefix_cache_hits_total"), 0);
    http_result r;
    CHECK(http_request_raw(p.port, "GET", "/metrics", "", NULL, &r) == 0);
    CHECK(strstr(r.body, "enable_prefix_caching=\"False\"") != NULL);
    http_result_free(&r);
    free(a);
    sim_stop(&p);
}

/* TTFT of one whole answer, in ms, measured here. */
static double ttft_ms(int port, const char *body) {
    int64_t t0 = mono_us();
    CHECK(cached_of(port, "/v1/completions", body) >= 0);
    return (mono_us() - t0) / 1000.0;
}

TEST_ALONE(sim_cache_cached_prompt_has_lower_ttft) {
    /* 2000-token prompts at 0.1 ms a prefill token: 200 ms uncached, a
     * fraction of it when 1984 tokens are cached; max_tokens 2 keeps the
     * answer's decode (1 step of 1 ms) out of the way */
    sim_proc p = sim_start("--prefill-per-token-ms 0.1");
    char *warm = ids_body(2000, 2000, 10, 0, NULL);
    char *cached = ids_body(2000, 1990, 10, 400000, NULL);
    char *fresh = ids_body(2000, 0, 0, 800000, NULL);
    ttft_ms(p.port, warm);
    double hit = ttft_ms(p.port, cached), miss = ttft_ms(p.port, fresh);
    CHECK_MSG(miss > 150, "uncached %.1f ms", miss);
    CHECK_MSG(hit < miss / 3, "cached %.1f ms, uncached %.1f ms", hit, miss);
    free(warm);
    free(cached);
    free(fresh);
    sim_stop(&p);
}

/* The cached_tokens column of a run's requests.csv, summed. */
static long cached_column_sum(const char *csv) {
    char *text = read_file(csv, NULL);
    CHECK_MSG(text != NULL, "no %s", csv);
    char *nl = strchr(text, '\n');
    CHECK(nl != NULL);
    *nl = 0;
    int col = -1, k = 0;
    for (char *f = strtok(text, ","); f; f = strtok(NULL, ","), k++)
        if (!strcmp(f, "cached_tokens"))
            col = k;
    CHECK_MSG(col >= 0, "no cached_tokens column");
    long sum = 0;
    for (char *line = strtok(nl + 1, "\n"); line; line = strtok(NULL, "\n")) {
        char *f = line;
        for (int i = 0; i < col && f; i++) {
            f = strchr(f, ',');
            f = f ? f + 1 : NULL;
        }
        if (f)
            sum += atol(f);
    }
    free(text);
    return sum;
}

TEST(sim_cache_builtin_prompts_hit_only_without_cache_busting) {
    char *dir = temp_dir();
    const char *modes[] = {"off", "on"};
    long sums[2], hits[2];
    for (int m = 0; m < 2; m++) {
        sim_proc p = sim_start(NULL);
        char cmd[1024];
        snprintf(cmd, sizeof cmd,
                 "run --quiet --url http://127.0.0.1:%d --rate 200 --requests 200 --max-tokens 4 "
                 "--cache-bust %s --out %s/bust-%s",
                 p.port, modes[m], dir, modes[m]);
        servelab_ok(cmd);
        hits[m] = (long)sim_metric(p.port, "vllm:prefix_cache_hits_total");
        sim_stop(&p);
        char csv[1200];
        snprintf(csv, sizeof csv, "%s/bust-%s/requests.csv", dir, modes[m]);
        sums[m] = cached_column_sum(csv);
    }
    /* 200 requests over the 83 built-in prompts sent verbatim: repeats hit */
    CHECK_MSG(hits[0] > 0, "no hits with --cache-bust off");
    CHECK_INT(sums[0], hits[0]);
    /* a nonce at every prompt's start: not one block shared */
    CHECK_INT(hits[1], 0);
    CHECK_INT(sums[1], 0);
}
