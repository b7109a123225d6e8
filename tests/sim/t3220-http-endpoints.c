/* Simulator over HTTP: the real binary on a free port, checked with a raw
 * client: streaming format, chat role chunk, usage, non-streaming, /tokenize,
 * /metrics, bad requests, limits, disconnects and injected faults. */
#include "support.h"
#include "test.h"

#include <jansson.h>
#include <string.h>
#include <unistd.h>

/* A keep-alive POST /v1/completions with its Content-Length filled in. */
static void raw_post(char *out, size_t cap, const char *body) {
    snprintf(out, cap, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n%s",
             strlen(body), body);
}

static json_t *parse(const char *s) {
    json_error_t e;
    json_t *j = json_loads(s, 0, &e);
    CHECK_MSG(j != NULL, "bad JSON (%s): %.200s", e.text, s);
    return j;
}

static const char *content_of(json_t *chunk, int chat) {
    json_t *choice = json_array_get(json_object_get(chunk, "choices"), 0);
    if (!choice)
        return NULL;
    json_t *v = chat ? json_object_get(json_object_get(choice, "delta"), "content")
                     : json_object_get(choice, "text");
    return json_is_string(v) ? json_string_value(v) : NULL;
}

TEST(sim_prints_listening_line_and_serves_models) {
    sim_proc p = sim_start("--model my-model");
    http_result r;
    CHECK(http_request_raw(p.port, "GET", "/v1/models", "", NULL, &r) == 0);
    CHECK_INT(r.status, 200);
    json_t *j = parse(r.body);
    CHECK_STR(
        json_string_value(json_object_get(json_array_get(json_object_get(j, "data"), 0), "id")),
        "my-model");
    http_result_free(&r);
    CHECK(http_request_raw(p.port, "GET", "/health", "", NULL, &r) == 0);
    CHECK_INT(r.status, 200);
    http_result_free(&r);
    CHECK(http_request_raw(p.port, "GET", "/version", "", NULL, &r) == 0);
    CHECK(strstr(r.body, "servelab-sim") != NULL);
    http_result_free(&r);
    sim_stop(&p);
}

TEST(sim_stream_completion_has_exact_chunks_usage_done) {
    sim_proc p = sim_start(NULL);
    http_result r;
    CHECK(http_request_raw(
              p.port, "POST", "/v1/completions", "",
              "{\"model\":\"sim-model\",\"prompt\":\"Tell me a story\",\"max_tokens\":32,"
              "\"ignore_eos\":true,\"stream\":true,"
              "\"stream_options\":{\"include_usage\":true}}",
              &r) == 0);
    CHECK_INT(r.status, 200);
    CHECK(strstr(r.headers, "text/event-stream") != NULL);
    char **ev;
    int n = sse_events(r.body, &ev);
    CHECK_INT(n, 34); /* 32 tokens + usage + [DONE] */
    for (int i = 0; i < 32; i++) {
        json_t *c = parse(ev[i]);
        CHECK_STR(json_string_value(json_object_get(c, "object")), "text_completion");
        const char *t = content_of(c, 0);
        CHECK(t && *t);
        json_t *fin =
            json_object_get(json_array_get(json_object_get(c, "choices"), 0), "finish_reason");
        if (i < 31)
            CHECK(json_is_null(fin));
        else
            CHECK_STR(json_string_value(fin), "length");
        json_decref(c);
    }
    json_t *u = parse(ev[32]);
    CHECK_INT(json_array_size(json_object_get(u, "choices")), 0);
    CHECK_INT(json_integer_value(json_object_get(json_object_get(u, "usage"), "completion_tokens")),
              32);
    CHECK_STR(ev[33], "[DONE]");
    sse_free(ev, n);
    http_result_free(&r);
    sim_stop(&p);
}

TEST(sim_stream_chat_sends_role_chunk_first) {
    sim_proc p = sim_start(NULL);
    http_result r;
    CHECK(http_request_raw(p.port, "POST", "/v1/chat/completions", "",
                           "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                           "\"max_tokens\":8,\"ignore_eos\":true,\"stream\":true}",
                           &r) == 0);
    char **ev;
    int n = sse_events(r.body, &ev);
    CHECK_INT(n, 10); /* role + 8 tokens + [DONE], no usage unless asked */
    json_t *first = parse(ev[0]);
    CHECK_STR(json_string_value(json_object_get(first, "object")), "chat.completion.chunk");
    json_t *delta = json_object_get(json_array_get(json_object_get(first, "choices"), 0), "delta");
    CHECK_STR(json_string_value(json_object_get(delta, "role")), "assistant");
    CHECK_STR(json_string_value(json_object_get(delta, "content")), "");
    for (int i = 1; i <= 8; i++) {
        json_t *c = parse(ev[i]);
        const char *t = content_of(c, 1);
        CHECK(t && *t);
        json_decref(c);
    }
    CHECK_STR(ev[9], "[DONE]");
    sse_free(ev, n);
    http_result_free(&r);
    sim_stop(&p);
}

TEST(sim_continuous_usage_stats_on_every_chunk) {
    sim_proc p = sim_start(NULL);
    http_result r;
    CHECK(http_request_raw(p.port, "POST", "/v1/completions", "",
                           "{\"prompt\":[1,2,3,4,5,6,7],\"max_tokens\":5,\"ignore_eos\":true,"
                           "\"stream\":true,\"stream_options\":{\"include_usage\":true,"
                           "\"continuous_usage_stats\":true}}",
                           &r) == 0);
    char **ev;
    int n = sse_events(r.body, &ev);
    CHECK_INT(n, 7);
    for (int i = 0; i < 5; i++) {
        json_t *c = parse(ev[i]);
        json_t *u = json_object_get(c, "usage");
        CHECK_INT(json_integer_value(json_object_get(u, "prompt_tokens")), 7);
        CHECK_INT(json_integer_value(json_object_get(u, "completion_tokens")), i + 1);
        json_decref(c);
    }
    sse_free(ev, n);
    http_result_free(&r);
    sim_stop(&p);
}

TEST(sim_non_streaming_answers_whole) {
    sim_proc p = sim_start(NULL);
    http_result r;
    CHECK(http_request_raw(p.port, "POST", "/v1/chat/completions", "",
                           "{\"messages\":[{\"role\":\"user\",\"content\":\"hello there\"}],"
                           "\"max_tokens\":6,\"ignore_eos\":true}",
                           &r) == 0);
    CHECK_INT(r.status, 200);
    json_t *j = parse(r.body);
    CHECK_STR(json_string_value(json_object_get(j, "object")), "chat.completion");
    json_t *u = json_object_get(j, "usage");
    CHECK_INT(json_integer_value(json_object_get(u, "completion_tokens")), 6);
    /* 3 priming + 2 x (4 template + role) + content tokens */
    CHECK(json_integer_value(json_object_get(u, "prompt_tokens")) > 10);
    http_result_free(&r);
    sim_stop(&p);
}

TEST(sim_output_length_is_seeded_and_bounded_without_ignore_eos) {
    sim_proc p = sim_start("--seed 7");
    int lens[2];
    for (int k = 0; k < 2; k++) {
        http_result r;
        CHECK(http_request_raw(p.port, "POST", "/v1/completions", "X-Request-Id: fixed-1\r\n",
                               "{\"prompt\":\"x\",\"max_tokens\":40,\"min_tokens\":25}", &r) == 0);
        json_t *j = parse(r.body);
        lens[k] = (int)json_integer_value(
            json_object_get(json_object_get(j, "usage"), "completion_tokens"));
        CHECK(lens[k] >= 25 && lens[k] <= 40);
        json_decref(j);
        http_result_free(&r);
    }
    CHECK_INT(lens[0], lens[1]); /* same request id, same seed: same length */
    sim_stop(&p);
}

TEST(sim_tokenize_agrees_with_usage) {
    sim_proc p = sim_start(NULL);
    const char *text = "The quick brown fox jumps over the lazy dog; it's 2026!";
    char body[512];
    snprintf(body, sizeof body, "{\"prompt\":\"%s\"}", text);
    http_result r;
    CHECK(http_request_raw(p.port, "POST", "/tokenize", "", body, &r) == 0);
    json_t *t = parse(r.body);
    int count = (int)json_integer_value(json_object_get(t, "count"));
    CHECK_INT(json_array_size(json_object_get(t, "tokens")), count);
    CHECK(count > 10);
    http_result_free(&r);
    snprintf(body, sizeof body, "{\"prompt\":\"%s\",\"max_tokens\":1}", text);
    CHECK(http_request_raw(p.port, "POST", "/v1/completions", "", body, &r) == 0);
    json_t *j = parse(r.body);
    CHECK_INT(json_integer_value(json_object_get(json_object_get(j, "usage"), "prompt_tokens")),
              count);
    http_result_free(&r);
    sim_stop(&p);
}

static void expect_error(int port, const char *path, const char *body, int status) {
    http_result r;
    CHECK(http_request_raw(port, "POST", path, "", body, &r) == 0);
    CHECK_MSG(r.status == status, "%s %s: status %d, want %d", path, body, r.status, status);
    json_t *j = parse(r.body);
    json_t *e = json_object_get(j, "error");
    CHECK(json_is_string(json_object_get(e, "message")));
    CHECK_INT(json_integer_value(json_object_get(e, "code")), status);
    json_decref(j);
    http_result_free(&r);
}

TEST(sim_bad_requests_get_vllm_errors) {
    sim_proc p = sim_start("--max-model-len 512 --kv-blocks 64");
    expect_error(p.port, "/v1/completions", "{not json", 400);
    expect_error(p.port, "/v1/completions", "", 400);
    expect_error(p.port, "/v1/completions", "[1,2]", 400);
    expect_error(p.port, "/v1/completions", "{\"model\":\"sim-model\"}", 400);
    expect_error(p.port, "/v1/chat/completions", "{\"model\":\"sim-model\"}", 400);
    expect_error(p.port, "/v1/completions", "{\"model\":\"other\",\"prompt\":\"a\"}", 404);
    expect_error(p.port, "/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":600}", 400);
    expect_error(p.port, "/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":-1}", 400);
    expect_error(p.port, "/v1/completions", "{\"prompt\":\"a\",\"max_tokens\":\"x\"}", 400);
    expect_error(p.port, "/v1/completions", "{\"prompt\":{}}", 400);
    http_result r;
    CHECK(http_request_raw(p.port, "GET", "/nope", "", NULL, &r) == 0);
    CHECK_INT(r.status, 404);
    http_result_free(&r);
    CHECK(http_request_raw(p.port, "GET", "/v1/completions", "", NULL, &r) == 0);
    CHECK_INT(r.status, 405);
    http_result_free(&r);
    /* Still serving after all that. */
    CHECK(http_request_raw(p.port, "POST", "/v1/completions", "",
                           "{\"prompt\":\"a\",\"max_tokens\":3}", &r) == 0);
    CHECK_INT(r.status, 200);
    http_result_free(&r);
    sim_stop(&p);
}

TEST(sim_oversized_body_and_headers) {
    sim_proc p = sim_start("--max-body-bytes 1000 --max-header-bytes 1024");
    char *big = malloc(5000);
    memset(big, 'a', 4999);
    big[4999] = 0;
    char body[6000];
    snprintf(body, sizeof body, "{\"prompt\":\"%s\"}", big);
    http_result r;
    CHECK(http_request_raw(p.port, "POST", "/v1/completions", "", body, &r) == 0);
    CHECK_INT(r.status, 413);
    http_result_free(&r);
    char hdr[3000];
    snprintf(hdr, sizeof hdr, "X-Big: %.2000s\r\n", big);
    CHECK(http_request_raw(p.port, "GET", "/health", hdr, NULL, &r) == 0);
    CHECK_INT(r.status, 431);
    http_result_free(&r);
    char resp[4096];
    const char *garbage = "GARBAGE\r\n\r\n";
    http_send_bytes(p.port, garbage, strlen(garbage), resp, sizeof resp, 2000);
    CHECK(!strncmp(resp, "HTTP/1.1 400", 12));
    CHECK(http_request_raw(p.port, "GET", "/health", "", NULL, &r) == 0);
    CHECK_INT(r.status, 200);
    http_result_free(&r);
    free(big);
    sim_stop(&p);
}

TEST(sim_keep_alive_and_pipelining) {
    sim_proc p = sim_start(NULL);
    const char *two = "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"
                      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 32\r\n"
                      "Connection: close\r\n\r\n{\"prompt\":\"hi\",\"max_tokens\":2}  ";
    char resp[8192];
    http_send_bytes(p.port, two, strlen(two), resp, sizeof resp, 5000);
    char *second = strstr(resp + 12, "HTTP/1.1 200");
    CHECK_MSG(!strncmp(resp, "HTTP/1.1 200", 12) && second, "got: %s", resp);
    CHECK(strstr(second, "text_completion") != NULL);
    sim_stop(&p);
}

TEST(sim_metrics_consistent_with_requests) {
    sim_proc p = sim_start(NULL);
    int total_out = 0;
    for (int i = 0; i < 5; i++) {
        char body[128];
        snprintf(body, sizeof body, "{\"prompt\":[1,2,3],\"max_tokens\":%d,\"ignore_eos\":true}",
                 4 + i);
        http_result r;
        CHECK(http_request_raw(p.port, "POST", "/v1/completions", "", body, &r) == 0);
        total_out += 4 + i;
        http_result_free(&r);
    }
    CHECK_INT(sim_metric(p.port, "vllm:generation_tokens_total"), total_out);
    CHECK_INT(sim_metric(p.port, "vllm:prompt_tokens_total"), 15);
    CHECK_INT(sim_metric(p.port, "vllm:num_requests_running"), 0);
    CHECK_INT(sim_metric(p.port, "vllm:kv_cache_usage_perc"), 0);
    CHECK_INT(sim_metric(p.port, "vllm:time_to_first_token_seconds_count"), 5);
    CHECK_INT(sim_metric(p.port, "vllm:e2e_request_latency_seconds_count"), 5);
    http_result r;
    CHECK(http_request_raw(p.port, "GET", "/metrics", "", NULL, &r) == 0);
    const char *names[] = {"vllm:num_requests_waiting", "vllm:num_preemptions_total",
                           "vllm:request_queue_time_seconds_bucket",
                           "vllm:request_queue_time_seconds_sum", "le=\"+Inf\""};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        CHECK_MSG(strstr(r.body, names[i]) != NULL, "missing %s", names[i]);
    http_result_free(&r);
    sim_stop(&p);
}

/* A client that reads a few chunks and hangs up frees its sequence at once. */
TEST_ALONE(sim_client_disconnect_frees_sequence) {
    sim_proc p = sim_start("--decode-base-ms 20");
    char req[512];
    raw_post(req, sizeof req,
             "{\"prompt\":\"hello\",\"max_tokens\":500,\"ignore_eos\":true,"
             "\"stream\":true}");
    char resp[4096];
    http_send_bytes(p.port, req, strlen(req), resp, sizeof resp, 150); /* leaves after 150 ms */
    CHECK(strstr(resp, "text_completion") != NULL);
    usleep(100000);
    CHECK_INT(sim_metric(p.port, "vllm:num_requests_running"), 0);
    CHECK_INT(sim_metric(p.port, "vllm:kv_cache_usage_perc"), 0);
    CHECK_INT(sim_metric(p.port, "vllm:num_requests_aborted_total"), 1);
    CHECK(sim_metric(p.port, "vllm:generation_tokens_total") < 50);
    sim_stop(&p);
}

TEST(sim_fault_http429_and_http500) {
    sim_proc p = sim_start("--fault http429=1");
    expect_error(p.port, "/v1/completions", "{\"prompt\":\"a\",\"stream\":true}", 429);
    sim_stop(&p);
    p = sim_start("--fault http500=1");
    expect_error(p.port, "/v1/chat/completions",
                 "{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}]}", 500);
    sim_stop(&p);
}

TEST(sim_fault_disconnect_cuts_stream) {
    sim_proc p = sim_start("--fault disconnect=1");
    http_result r;
    int rc = http_request_raw(p.port, "POST", "/v1/completions", "",
                              "{\"prompt\":\"a\",\"max_tokens\":20,\"ignore_eos\":true,"
                              "\"stream\":true}",
                              &r);
    if (rc == 0) {
        char **ev;
        int n = sse_events(r.body, &ev);
        CHECK(n < 20);
        for (int i = 0; i < n; i++)
            CHECK(strcmp(ev[i], "[DONE]"));
        sse_free(ev, n);
        http_result_free(&r);
    }
    sim_stop(&p);
}

TEST(sim_fault_malformed_chunk) {
    sim_proc p = sim_start("--fault malformed=1");
    http_result r;
    CHECK(http_request_raw(p.port, "POST", "/v1/completions", "",
                           "{\"prompt\":\"a\",\"max_tokens\":10,\"ignore_eos\":true,"
                           "\"stream\":true}",
                           &r) == 0);
    char **ev;
    int n = sse_events(r.body, &ev);
    int bad = 0;
    for (int i = 0; i < n; i++) {
        if (!strcmp(ev[i], "[DONE]"))
            continue;
        json_t *j = json_loads(ev[i], 0, NULL);
        if (!j)
            bad++;
        json_decref(j);
    }
    CHECK_INT(bad, 1);
    sse_free(ev, n);
    http_result_free(&r);
    sim_stop(&p);
}

TEST_ALONE(sim_fault_stall_delays_first_token) {
    sim_proc p = sim_start("--fault stall=1 --stall-ms 400");
    char req[512];
    raw_post(req, sizeof req,
             "{\"prompt\":\"a\",\"max_tokens\":3,\"ignore_eos\":true,"
             "\"stream\":true}");
    char resp[4096];
    http_send_bytes(p.port, req, strlen(req), resp, sizeof resp, 250);
    CHECK(strstr(resp, "HTTP/1.1 200") != NULL); /* headers came */
    CHECK(strstr(resp, "data:") == NULL);        /* tokens did not */
    sim_stop(&p);
}

TEST(sim_trace_records_every_request) {
    char *dir = temp_dir();
    char args[512];
    snprintf(args, sizeof args, "--trace %s/trace.csv", dir);
    sim_proc p = sim_start(args);
    for (int i = 0; i < 3; i++) {
        char hdr[64];
        snprintf(hdr, sizeof hdr, "X-Request-Id: req-%d\r\n", i);
        http_result r;
        CHECK(http_request_raw(p.port, "POST", "/v1/completions", hdr,
                               "{\"prompt\":\"a b c\",\"max_tokens\":4,\"ignore_eos\":true,"
                               "\"stream\":true}",
                               &r) == 0);
        http_result_free(&r);
    }
    sim_stop(&p);
    char path[600];
    snprintf(path, sizeof path, "%s/trace.csv", dir);
    char *t = read_file(path, NULL);
    CHECK(t != NULL);
    const char *cols = "request_id,arrived_ms,admitted_ms,first_token_ms,finished_ms,"
                       "prompt_tokens,output_tokens,preemptions,finish_reason";
    CHECK(!strncmp(t, cols, strlen(cols)));
    CHECK(strstr(t, "\nreq-0,") && strstr(t, "\nreq-1,") && strstr(t, "\nreq-2,"));
    char *row = strstr(t, "\nreq-2,") + 1;
    double arrived, admitted, first, fin;
    int ptoks, otoks, pre;
    CHECK_INT(sscanf(row, "req-2,%lf,%lf,%lf,%lf,%d,%d,%d,length", &arrived, &admitted, &first,
                     &fin, &ptoks, &otoks, &pre),
              7);
    CHECK(arrived <= admitted && admitted <= first && first <= fin);
    CHECK_INT(ptoks, 3);
    CHECK_INT(otoks, 4);
    CHECK_INT(pre, 0);
    free(t);
}

TEST(sim_rejects_bad_options) {
    int code;
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s sim --profile nope 2>&1", servelab_bin());
    char *out = run_capture(cmd, &code);
    CHECK_INT(code, 2);
    CHECK(strstr(out, "--profile") != NULL);
    free(out);
    snprintf(cmd, sizeof cmd, "%s sim --fault http429=2 2>&1", servelab_bin());
    out = run_capture(cmd, &code);
    CHECK_INT(code, 2);
    CHECK(strstr(out, "http429") != NULL);
    free(out);
    snprintf(cmd, sizeof cmd, "%s sim --kv-blocks 2 --max-model-len 4096 2>&1", servelab_bin());
    out = run_capture(cmd, &code);
    CHECK_INT(code, 2);
    CHECK(strstr(out, "kv_blocks") != NULL);
    free(out);
}
