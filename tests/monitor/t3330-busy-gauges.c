/* busy: the running and waiting gauges each server names, read from its
 * /metrics page (summed over engines), and nothing found on a page without
 * them or with values that are not numbers. */
#include "monitor/busy.h"
#include "test.h"

#include <string.h>

TEST(busy_reads_each_servers_gauges) {
    const char *vllm = "# TYPE vllm:num_requests_running gauge\n"
                       "vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 3.0\n"
                       "vllm:num_requests_running{engine=\"1\",model_name=\"m\"} 2.0\n"
                       "# TYPE vllm:num_requests_waiting gauge\n"
                       "vllm:num_requests_waiting{engine=\"0\",model_name=\"m\"} 7.0\n"
                       "vllm:num_requests_waiting_by_reason{reason=\"capacity\"} 9.0\n";
    busy_gauges b;
    busy_read(vllm, strlen(vllm), &b);
    CHECK(b.found && !strcmp(b.source, "vllm"));
    CHECK(b.running == 5 && b.waiting == 7);
    const char *llama = "llamacpp:requests_processing 1\nllamacpp:requests_deferred 4\n";
    busy_read(llama, strlen(llama), &b);
    CHECK(b.found && !strcmp(b.source, "llamacpp") && b.running == 1 && b.waiting == 4);
    const char *sglang = "sglang:num_running_reqs{tp_rank=\"0\"} 0\nsglang:num_queue_reqs 0\n";
    busy_read(sglang, strlen(sglang), &b);
    CHECK(b.found && !strcmp(b.source, "sglang") && b.running == 0 && b.waiting == 0);
    const char *tgi = "tgi_batch_current_size 2\ntgi_queue_size 0\n";
    busy_read(tgi, strlen(tgi), &b);
    CHECK(b.found && !strcmp(b.source, "tgi") && b.running == 2 && b.waiting == 0);
}

TEST(busy_finds_nothing_without_its_gauges) {
    const char *other = "process_cpu_seconds_total 12.5\nvllm:prompt_tokens_total 100\n"
                        "vllm:num_requests_running NaN\n";
    busy_gauges b;
    busy_read(other, strlen(other), &b);
    CHECK(!b.found && b.running == 0 && b.waiting == 0);
    busy_read(NULL, 0, &b);
    CHECK(!b.found);
    busy_read("", 0, &b);
    CHECK(!b.found);
}
