/* What a run prints never says nan: a server's figures it did not give are
 * left out of the server line (llama.cpp has no preemption counter or queue
 * histograms), its KV use is read from llama.cpp's own gauge, and rates over
 * an arrival window of no length (--rate inf) are not printed. */
#include "analysis/serverstats.h"
#include "analysis/summary.h"
#include "test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TEST(server_line_llamacpp_kv_and_no_nan) {
    series_set m = {0};
    series_add(&m, "llamacpp:requests_processing", 0, 0);
    series_add(&m, "llamacpp:requests_processing", 100, 4);
    series_add(&m, "llamacpp:requests_processing", 200, 2);
    series_add(&m, "llamacpp:kv_cache_usage_ratio", 0, 0.1);
    series_add(&m, "llamacpp:kv_cache_usage_ratio", 100, 0.5);
    CHECK(server_metric_wanted("llamacpp:kv_cache_usage_ratio"));
    server_stats ss;
    server_stats_compute(&m, NULL, &ss);
    CHECK_NEAR(ss.peak_kv_usage, 0.5, 1e-12);
    char line[256];
    CHECK(server_stats_line(&ss, line, sizeof line) > 0);
    CHECK_STR(line, "peak 4 running, KV 50%");
    series_set_free(&m);
    /* vLLM's names still win, and every figure shows */
    series_add(&m, "vllm:num_requests_running", 0, 3);
    series_add(&m, "vllm:num_requests_waiting", 0, 1);
    series_add(&m, "vllm:kv_cache_usage_perc", 0, 0.25);
    series_add(&m, "vllm:num_preemptions_total", 0, 2);
    series_add(&m, "vllm:num_preemptions_total", 10, 5);
    series_add(&m, "vllm:request_queue_time_seconds_sum", 0, 0);
    series_add(&m, "vllm:request_queue_time_seconds_sum", 10, 1);
    series_add(&m, "vllm:time_to_first_token_seconds_sum", 0, 0);
    series_add(&m, "vllm:time_to_first_token_seconds_sum", 10, 4);
    server_stats_compute(&m, NULL, &ss);
    server_stats_line(&ss, line, sizeof line);
    CHECK_STR(line, "peak 3 running, 1 waiting, KV 25%, 3 preemptions, 25% of TTFT queued");
    series_set_free(&m);
}

TEST(summary_print_rate_inf_says_no_nan) {
    run_rows rows = {0};
    for (int i = 0; i < 3; i++) {
        req_rec r = {.scheduled_ms = 0,
                     .sent_ms = 0,
                     .first_ms = 5 + i,
                     .last_ms = 9 + i,
                     .end_ms = 10 + i,
                     .lag_ms = 0,
                     .prompt_tokens = 8,
                     .output_tokens = 4};
        rows_add(&rows, &r);
    }
    summary_params p = {.offered_rps = INFINITY, .client_cpu_s = -1};
    run_summary s;
    summarize(&rows, &p, &s);
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    summary_print(f, &s);
    fclose(f);
    CHECK_MSG(!strstr(text, "nan"), "%s", text);
    CHECK(strstr(text, "offered rate    inf (all at t=0)") != NULL);
    /* a run with no request done at all */
    run_rows none = {0};
    req_rec r = {.scheduled_ms = 0,
                 .sent_ms = NAN,
                 .first_ms = NAN,
                 .last_ms = NAN,
                 .end_ms = NAN,
                 .lag_ms = NAN,
                 .prompt_tokens = -1,
                 .output_tokens = -1,
                 .error = ERR_CONNECT};
    rows_add(&none, &r);
    summarize(&none, &p, &s);
    free(text);
    f = open_memstream(&text, &n);
    summary_print(f, &s);
    fclose(f);
    CHECK_MSG(!strstr(text, "nan"), "%s", text);
    free(text);
    rows_free(&rows);
    rows_free(&none);
}

/* llama.cpp's decode figures: n_busy_slots_per_decode is busy slots over
 * decode steps since the server started, so a run's mean batch comes from
 * both counters at its ends (here: before the run 100 steps at 1.5 slots,
 * during it 300 more steps with 900 busy slots, a mean of 3); 2026 builds
 * count speculative drafts, and two runs pooled add up. */
TEST(server_line_llamacpp_busy_slots_and_drafts) {
    series_set m = {0};
    series_add(&m, "llamacpp:n_decode_total", 0, 100);
    series_add(&m, "llamacpp:n_busy_slots_per_decode", 0, 1.5);
    series_add(&m, "llamacpp:n_decode_total", 1000, 250);
    series_add(&m, "llamacpp:n_busy_slots_per_decode", 1000, 2.0);
    series_add(&m, "llamacpp:n_decode_total", 2000, 400);
    series_add(&m, "llamacpp:n_busy_slots_per_decode", 2000, 1050.0 / 400);
    series_add(&m, "llamacpp:spec_decode_num_drafts_total", 0, 10);
    series_add(&m, "llamacpp:spec_decode_num_drafts_total", 2000, 60);
    series_add(&m, "llamacpp:spec_decode_num_draft_tokens_total", 0, 40);
    series_add(&m, "llamacpp:spec_decode_num_draft_tokens_total", 2000, 240);
    series_add(&m, "llamacpp:spec_decode_num_accepted_tokens_total", 0, 20);
    series_add(&m, "llamacpp:spec_decode_num_accepted_tokens_total", 2000, 170);
    CHECK(server_metric_wanted("llamacpp:n_busy_slots_per_decode"));
    server_stats ss;
    server_stats_compute(&m, NULL, &ss);
    CHECK_NEAR(ss.decode_steps, 300, 1e-9);
    CHECK_NEAR(ss.busy_per_decode, 3.0, 1e-9);
    CHECK_NEAR(ss.spec_acceptance, 0.75, 1e-12);
    char line[256];
    server_stats_line(&ss, line, sizeof line);
    CHECK_STR(line, "3.00 busy slots per decode step, 75.0% of draft tokens accepted");
    json_t *j = server_stats_json(&ss, 100);
    CHECK_NEAR(json_number_value(json_object_get(j, "busy_slots_per_decode")), 3.0, 1e-9);
    CHECK_NEAR(json_number_value(json_object_get(j, "spec_drafts")), 50, 1e-9);
    json_decref(j);
    /* pooled with a run of 100 steps at 1 slot: 1000 slot-steps over 400 */
    series_set m2 = {0};
    series_add(&m2, "llamacpp:n_decode_total", 0, 0);
    series_add(&m2, "llamacpp:n_busy_slots_per_decode", 0, 0);
    series_add(&m2, "llamacpp:n_decode_total", 500, 100);
    series_add(&m2, "llamacpp:n_busy_slots_per_decode", 500, 1);
    server_stats s2;
    server_stats_compute(&m2, NULL, &s2);
    server_stats_pool(&ss, &s2);
    CHECK_NEAR(ss.busy_per_decode, 2.5, 1e-9);
    /* samples that are not the same scrapes give no mean */
    series_add(&m2, "llamacpp:n_decode_total", 600, 120);
    server_stats_compute(&m2, NULL, &s2);
    CHECK(isnan(s2.busy_per_decode));
    series_set_free(&m);
    series_set_free(&m2);
}
