/* busy: the running and waiting gauges of a /metrics page (busy.h). */
#include "monitor/busy.h"
#include "monitor/prom.h"

#include <string.h>

static const struct {
    const char *name, *source;
    int waiting; /* 0: running */
} gauges[] = {
    {"vllm:num_requests_running", "vllm", 0},
    {"vllm:num_requests_waiting", "vllm", 1},
    {"llamacpp:requests_processing", "llamacpp", 0},
    {"llamacpp:requests_deferred", "llamacpp", 1},
    {"sglang:num_running_reqs", "sglang", 0},
    {"sglang:num_queue_reqs", "sglang", 1},
    {"tgi_batch_current_size", "tgi", 0},
    {"tgi_queue_size", "tgi", 1},
};

static void on_sample(void *ud, const prom_sample *s) {
    busy_gauges *b = ud;
    if (s->value != s->value)
        return;
    for (size_t i = 0; i < sizeof gauges / sizeof *gauges; i++)
        if (!strcmp(s->name, gauges[i].name)) {
            *(gauges[i].waiting ? &b->waiting : &b->running) += s->value;
            b->found = 1;
            b->source = gauges[i].source;
            return;
        }
}

void busy_read(const char *page, size_t n, busy_gauges *b) {
    memset(b, 0, sizeof *b);
    if (page)
        prom_parse(page, n, on_sample, b, NULL, NULL);
}
